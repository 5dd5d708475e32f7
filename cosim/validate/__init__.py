"""``cosim validate``: gem5 + cosim against measured board data, program by program and clock by clock.

:mod:`.board` reduces the board's samples, :mod:`.sim` prices the gem5 runs as ``cosim power`` does,
:mod:`.compare` pairs them and decomposes the errors.  (:mod:`cosim.fit.validate` is something else: a fitted
model's cross-validation on its training data.)
"""

from cosim.errors import CosimWarning
from cosim.validate.board import BoardRow, read_board
from cosim.validate.compare import Validation, compare, excluded_programs
from cosim.validate.sim import SimRow, find_runs, read_sim

__all__ = ["BoardRow", "SimRow", "Validation", "compare", "excluded_programs", "find_runs", "read_board", "read_sim", "validate"]


def validate(measured, runs, *, split=None) -> Validation:
    """Read ``measured`` (ARMPM log or Powmon table) and every gem5 run under ``runs``, and compare them.

    ``split``: an ARMPM split file (``cbench_split.data``) whose columns say which programs are training ones.
    """
    from cosim.dse.sweep import progress_of
    from cosim.models.modelfile import load_model

    board, label = read_board(measured)
    found = find_runs(runs)
    from cosim.timeline.core_kind import DEFAULT_MODELS

    events = tuple(sorted({e for name in set(DEFAULT_MODELS.values()) for e in load_model(name).events}))
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # 33 runs take a while: counted on a terminal (cosim validate's only long step)
        sims = [read_sim(program, folder, events=events) for program, folder in progress_of(found, len(found), _tty(), what="validate")]
    # one warning per cause, not one per run: 33 runs at three clocks say the same three things
    for message in dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, CosimWarning)):
        warnings.warn(CosimWarning(f"{message} (gem5 runs under {runs})"), stacklevel=2)
    return compare(board, sims, split=read_split(split) if split is not None else None, board_cluster=label)


def _tty() -> bool:
    import sys

    return sys.stderr.isatty()


def read_split(path) -> dict[str, str]:
    """Program -> ``train`` or ``test`` from an ARMPM split file (two tab-separated columns, a ``#`` header)."""
    from pathlib import Path

    from cosim.errors import CosimError
    from cosim.readers._files import read_text

    path = Path(path)
    out: dict[str, str] = {}
    for line in read_text(path, missing_hint="give ARMPM's cbench_split.data").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) > 2:
            raise CosimError(f"{path}: '{line}' has {len(cells)} columns; a split file has two (train, test)")
        for which, name in zip(("train", "test"), cells):
            if name.strip():
                out[name.strip()] = which
    return out
