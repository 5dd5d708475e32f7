"""``cosim validate``: gem5 + cosim against measured board data, program by program and clock by clock.

:mod:`.board` reduces the board's samples, :mod:`.sim` prices the gem5 runs as ``cosim power`` does,
:mod:`.compare` pairs them and decomposes the errors.  (:mod:`cosim.fit.validate` is something else: a fitted
model's cross-validation on its training data.)
"""

from cosim.errors import CosimWarning
from cosim.readers.armpm import read_split
from cosim.validate.board import BoardRow, read_board
from cosim.validate.compare import Validation, compare, excluded_programs
from cosim.validate.sim import SimRow, find_runs, read_sim

__all__ = ["BoardRow", "SimRow", "Validation", "compare", "excluded_programs", "find_runs", "read_board", "read_sim", "validate"]


def validate(measured, runs, *, split=None, models: tuple[str, ...] = ()) -> Validation:
    """Read ``measured`` (ARMPM log or Powmon table) and every gem5 run under ``runs``, and compare them.

    ``split``: an ARMPM split file (``cbench_split.data``) whose columns say which programs are training ones;
    ``models``: price every run with each of these models in turn (default: the model ``cosim power`` picks).
    """
    from cosim.models.modelfile import load_model
    from cosim.progress import each

    board, label = read_board(measured)
    found = find_runs(runs)
    from cosim.timeline.core_kind import DEFAULT_MODELS

    events = tuple(sorted({e for name in {*DEFAULT_MODELS.values(), *models} for e in load_model(name).events}))
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # 33 runs take a while: counted on a terminal (cosim validate's only long step)
        jobs = [(m, program, folder) for m in models or (None,) for program, folder in found]
        sims = [
            read_sim(program, folder, events=events, model=m)
            for m, program, folder in each(jobs, label="validate", unit="runs", enabled=_tty())
        ]
    # one warning per cause, not one per run: 33 runs at three clocks say the same three things
    for message in dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, CosimWarning)):
        warnings.warn(CosimWarning(f"{message} (gem5 runs under {runs})"), stacklevel=2)
    return compare(board, sims, split=read_split(split) if split is not None else None, board_cluster=label, board_file=str(measured))


def _tty() -> bool:
    import sys

    return sys.stderr.isatty()
