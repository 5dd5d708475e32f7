"""Epochs must tile time: each kept dump starts where the one before it ended.

gem5 dumps cover ``simTicks`` up to ``finalTick``.  With ``periodicStatDump`` (or
``m5.stats.dump()`` followed by ``m5.stats.reset()``) each dump starts where the
previous one ended.  Without a reset (``m5 dumpstats``, a bare ``m5.stats.dump()``)
every counter and ``simTicks`` is cumulative: each dump starts where the first one
did.  Such dumps are recognised and differenced into per-epoch counts; any other
overlap or gap between dumps is refused, naming the dump.
"""

from __future__ import annotations

import warnings

import numpy as np

from cosim.errors import CosimError, CosimWarning
from cosim.readers.stats_table import SIM_STATS

#: one tick of rounding between a dump's start and the previous dump's end
TICK_SLACK = 1.0
# Stats that hold a level, not a count, so a cumulative dump holds them as they are: clock periods,
# voltages, the tick rate and finalTick (never reset); distribution summaries (min, max, mean, stdev).
_LEVEL_SUFFIXES = (".clock", ".voltage", "::min_value", "::max_value", "::mean", "::stdev", "::gmean")
_LEVEL_NAMES = {"finalTick", "final_tick", "simFreq", "sim_freq"}
# Counters that can only grow in a cumulative file: if one falls, the dumps are not cumulative.
_MONOTONE_SUFFIXES = ("numCycles", "num_cycles", "simInsts", "sim_insts", "simOps", "sim_ops")


def is_level_stat(name: str) -> bool:
    """True for a stat that is a level (clock period, voltage, distribution min/max/mean), not an accumulated count."""
    return name in _LEVEL_NAMES or name.endswith(_LEVEL_SUFFIXES)


def tile_epochs(values: np.ndarray, names: dict[str, int], dumps: np.ndarray, *, path: str) -> np.ndarray:
    """Make the dumps tile time; returns which rows were differenced from cumulative dumps.

    ``values`` [dumps x stats] is differenced in place where a dump is cumulative (it
    starts where the dump before it started, and ends later).  Without a
    ``finalTick`` column the dumps are taken to follow on from each other.  ``dumps``
    is each row's dump index in the file (a gap left by a dump the reader dropped is
    explained by it).

    Raises
    ------
    CosimError
        A dump that overlaps the one before it, or leaves a gap after it, in a way a
        stats reset cannot explain.
    """
    n = len(values)
    cumulative = np.zeros(n, dtype=bool)
    tick_col = next((names[s] for s in SIM_STATS["sim_ticks"] if s in names), None)
    final_col = next((names[s] for s in SIM_STATS["final_tick"] if s in names), None)
    if tick_col is None or final_col is None or n < 2:
        return cumulative
    ticks, final = values[:, tick_col].copy(), values[:, final_col].copy()
    start = final - ticks
    prev_end, prev_start = final[:-1], start[:-1]
    follows = np.abs(start[1:] - prev_end) <= TICK_SLACK
    same_start = (np.abs(start[1:] - prev_start) <= TICK_SLACK) & (final[1:] > prev_end)
    cumulative[1:] = same_start & ~follows
    dropped_before = np.diff(dumps) > 1  # the reader skipped a dump here and said so
    for i in np.flatnonzero(~follows & ~cumulative[1:] & ~dropped_before) + 1:
        raise CosimError(_tiling_error(path, int(dumps[i]), int(dumps[i - 1]), start[i], final[i - 1], final[i]))
    if not cumulative.any():
        return cumulative
    _check_monotone(values, names, dumps, cumulative, path)
    rows = np.flatnonzero(cumulative)
    counts = np.array([not is_level_stat(name) for name in names])
    diff = values[rows][:, counts] - values[rows - 1][:, counts]  # every right-hand row is still raw
    values[np.ix_(rows, np.flatnonzero(counts))] = diff
    shown = ", ".join(str(d) for d in dumps[rows][:3]) + (", ..." if len(rows) > 3 else "")
    warnings.warn(
        CosimWarning(
            f"{path}: {len(rows)} of {n} dumps are cumulative (no stats reset between dumps: simTicks grows with "
            f"finalTick from the same start), so dump(s) {shown} were differenced into per-epoch counts and their "
            "rows flagged cumulative_dump; ratio stats (ipc, miss rates) in them are not per-epoch values"
        ),
        stacklevel=4,
    )
    return cumulative


def _check_monotone(values: np.ndarray, names: dict[str, int], dumps: np.ndarray, cumulative: np.ndarray, path: str) -> None:
    """A cumulative dump's counters are never below the previous dump's; refuse the first that is."""
    rows = np.flatnonzero(cumulative)
    for name, col in names.items():
        if not name.endswith(_MONOTONE_SUFFIXES):
            continue
        fell = values[rows, col] < values[rows - 1, col]
        if fell.any():
            i = int(rows[np.flatnonzero(fell)[0]])
            raise CosimError(
                f"{path}: dump {dumps[i]} starts where dump {dumps[i - 1]} started, as a cumulative dump would, but {name} "
                f"fell from {values[i - 1, col]:g} to {values[i, col]:g}; the dumps neither follow on nor accumulate, so "
                "their epochs are unknown: dump with m5.stats.dump() then m5.stats.reset(), or with periodicStatDump"
            )


def _tiling_error(path: str, dump: int, before: int, start: float, prev_end: float, end: float) -> str:
    if start < prev_end:
        what = f"overlaps dump {before} by {prev_end - start:.0f} ticks (it starts at tick {start:.0f}, before dump {before} ends at {prev_end:.0f})"
    else:
        what = f"starts {start - prev_end:.0f} ticks after dump {before} ends (tick {prev_end:.0f}), a stretch no dump covers"
    return (
        f"{path}: dump {dump} (finalTick {end:.0f}) {what}; its epochs do not tile time and no stats reset explains it, "
        "so energy would be counted twice or lost: dump with periodicStatDump, or m5.stats.dump() with or without "
        "m5.stats.reset() each time, but not mixed with resets elsewhere"
    )
