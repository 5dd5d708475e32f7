"""A clock change (DVFS) inside an epoch, found and placed from the cycles gem5 counted.

gem5 dumps a clock domain's period as it is at the end of the dump, so an epoch in which the clock moved from
``f0`` to ``f1`` reads as all ``f1``.  A CPU that runs through the epoch counts every edge of its clock
(``numCycles``: ``f * t`` cycles, 179,856-179,857 per 100 us at gem5's 1798.56 MHz in the bundled run), so its count
places the change: ``N = f0 * t0 + f1 * t1`` with ``t0 + t1 = t`` gives the share of the epoch at the old clock,
``t0 / t = (f1 * t - N) / ((f1 - f0) * t)``.  The busiest core of the cluster is the one taken to have run through
it; a core that never ticked in the epoch (idle, exited: ``numCycles`` 0 or absent) says nothing about the clock.

Where no core ticked the change cannot be placed (flag ``clock_change_unplaced``); where the busiest count is
outside what the two clocks tick in the epoch (a core that also slept in it) the split is unknown: refused, naming
the epoch.  A clock that changed and changed back between two dumps reads as no change; an O3 or Minor CPU that
counted well below what the clock ticks, at an unchanged clock, while ON, is refused too
(:func:`cosim.timeline.cycles.cycle_deficits`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cosim.models.clocks import FREQ_REL_TOL
from cosim.readers.gem5_config import Cluster
from cosim.readers.stats_table import StatsLike
from cosim.timeline.cycles import CYCLE_EDGE, CYCLE_SLACK, _column, cycle_deficits

#: clocks closer than this (relative) are one clock: gem5 rounds periods to whole ticks
_SAME_CLOCK = FREQ_REL_TOL


@dataclass(frozen=True)
class ClockChange:
    """Per epoch: the clock before a change inside it [MHz] (the epoch's own where none), the share of its time at
    that clock (0 where none), whether a change could not be placed (no core ticked), and why a change cannot be
    split ("" where it can)."""

    before_mhz: np.ndarray
    share_before: np.ndarray
    unplaced: np.ndarray
    reasons: np.ndarray

    @property
    def split(self) -> np.ndarray:
        """Epochs priced at two operating points."""
        return self.share_before > 0


def clock_change(stats: StatsLike, cluster: Cluster, *, freq_mhz: np.ndarray, duration_s: np.ndarray) -> ClockChange:
    """Where the cluster's clock changed inside an epoch, and the share of the epoch's time before the change."""
    f = np.asarray(freq_mhz, dtype=float)
    t = np.asarray(duration_s, dtype=float)
    n = len(f)
    before = f.copy()
    share = np.zeros(n)
    unplaced = np.zeros(n, dtype=bool)
    reasons = np.full(n, "", dtype=object)
    prev = np.r_[f[:1], f[:-1]]
    changed = np.abs(prev - f) > _SAME_CLOCK * f
    # a change inside an epoch and back before its dump: the clock reads the same, the cycles do not
    reasons = cycle_deficits(stats, cluster, freq_mhz=f, duration_s=t, clock_changed=changed)
    if not changed.any():
        return ClockChange(before, share, unplaced, reasons)
    counted = busiest_core_cycles(stats, cluster, n)
    new = f * 1e6 * t  # cycles the epoch's end clock ticks in it
    old = prev * 1e6 * t
    slack = new * CYCLE_SLACK + 2 * CYCLE_EDGE
    for i in np.flatnonzero(changed):
        if not counted[i] > 0:
            unplaced[i] = True
            continue
        if abs(counted[i] - new[i]) <= slack[i]:
            continue  # the change fell on the dump: the epoch ran at its end clock throughout
        s = (new[i] - counted[i]) / (new[i] - old[i])
        lo_c, hi_c = min(old[i], new[i]) - slack[i], max(old[i], new[i]) + slack[i]
        if not lo_c <= counted[i] <= hi_c:
            reasons[i] = (
                f"the clock changed from {prev[i]:g} to {f[i]:g} MHz inside this epoch, and its busiest core counted "
                f"{counted[i]:.0f} cycles in {t[i] * 1e6:.6g} us, outside the {min(old[i], new[i]):.0f}-{max(old[i], new[i]):.0f} "
                "the two clocks tick in it (it also slept?), so the time at each clock is unknown"
            )
            continue
        before[i] = prev[i]
        share[i] = float(np.clip(s, 0.0, 1.0))
    return ClockChange(before, share, unplaced, reasons)


def busiest_core_cycles(stats: StatsLike, cluster: Cluster, n: int) -> np.ndarray:
    """Per epoch, the most cycles any physical core of ``cluster`` counted (``numCycles``, its switched-out stand-ins'
    added: only one of them runs at a time); nan where the stats hold no ``numCycles`` for the cluster."""
    per_core: dict[str, np.ndarray] = {}
    for cpu in cluster.cpus:
        column = _column(stats, cpu, "numCycles")
        if column is None:
            continue
        core = cluster.core_of(cpu)
        values = np.nan_to_num(np.asarray(stats[column], dtype=float), nan=0.0)
        per_core[core] = per_core.get(core, np.zeros(n)) + values
    if not per_core:
        return np.full(n, np.nan)
    return np.max(np.stack(list(per_core.values())), axis=0)
