"""A warm-up dump: gem5 stdlib scripts (and SimPoint runs) dump once after a few hundred cycles of start-up, then
reset the stats and run the workload.  That first dump is no part of the run a what-if rescales: it is reported, not
counted in the run's time."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

#: a first dump is a warm-up when both its instructions and its time are below this share of the run's.  gem5's
#: x86 SimPoint example run (public-new-v24-x86-simpoint-2dumps): 1 instruction and 72,927 ticks of 1,000,002 and
#: 323,523,486 (shares 1e-6 and 2.3e-4); the shortest first dump of a real workload among ../shared's runs is
#: 100 us of a 4.7 ms run (2 %), so 0.1 % separates them by a factor of 20 either way.
WARMUP_SHARE = 1e-3

#: the flag every row of a what-if carries when the run's first dump was left out as a warm-up
FLAG = "warmup_dump_left_out"


def split_warmup(stats: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    """``stats`` without a warm-up first dump, and a line saying what was left out (None: nothing was)."""
    if len(stats) < 2 or "sim_insts" not in stats and "simInsts" not in stats:
        return stats, None
    insts = (stats["simInsts"] if "simInsts" in stats else stats["sim_insts"]).to_numpy(float)
    duration = stats["duration_s"].to_numpy(float)
    if not (insts.sum() > 0 and duration.sum() > 0):
        return stats, None
    if insts[0] >= WARMUP_SHARE * insts.sum() or duration[0] >= WARMUP_SHARE * duration.sum():
        return stats, None
    note = (
        f"dump 1 ({insts[0]:.0f} instruction(s) in {duration[0] * 1e6:.3g} us, {100 * duration[0] / duration.sum():.2g} % of the "
        f"run's time) is a warm-up before gem5's stats reset: reported, not counted; the what-if rescales the {len(stats) - 1} "
        f"dump(s) after it (flag {FLAG})"
    )
    rest = stats.iloc[1:].reset_index(drop=True)
    rest.attrs = stats.attrs
    return rest, note
