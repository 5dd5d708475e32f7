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
    # (its class kept: a run whose stats lost dumps is a CutOffWarning, which makes the command exit 3)
    said = {str(w.message): w.category for w in caught if issubclass(w.category, CosimWarning)}
    for message, category in said.items():
        warnings.warn(category(f"{message} (gem5 runs under {runs})"), stacklevel=2)
    split_map = read_split(split) if split is not None else None
    result = compare(board, sims, split=split_map, board_cluster=label, board_file=str(measured))
    return _with_temperature_and_dvfs(result, measured, split_map)


def _with_temperature_and_dvfs(result: Validation, measured, split_map) -> Validation:
    """The rows with the board's and the thermal model's die temperature, every board row's, and the DVFS ratios."""
    import dataclasses
    import math
    from pathlib import Path

    from cosim.validate.dvfs import dvfs_rows
    from cosim.validate.thermal import board_temperatures

    temps, note = board_temperatures(measured, split_map)
    for r in result.rows:
        r["temp_board_c"], r["temp_pred_c"] = temps.get((r["program"], r["clock_mhz"]), (math.nan, math.nan))
    every = [
        {"program": p, "clock_mhz": c, "split": (split_map or {}).get(p, ""), "temp_board_c": b, "temp_pred_c": t}
        for (p, c), (b, t) in temps.items()
    ]
    runs = {(r["program"], r["clock_mhz"]): Path(r["gem5_run"]) for r in result.rows if not r["not_priced"]}
    return dataclasses.replace(result, temperatures=every, temperature_note=note, dvfs=dvfs_rows(result.rows, runs))


def _tty() -> bool:
    import sys

    return sys.stderr.isatty()
