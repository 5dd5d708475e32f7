"""Cycles gem5 credits when a CPU wakes: the range of cycles an epoch's count allows, per CPU model.

gem5 adds the time a CPU slept to ``numCycles`` when it wakes, all in the epoch it wakes in (cycles.md has the
sources): the atomic CPU in ``activateContext`` (``numCycles += ticksToCycles(lastActivate - lastSuspend)``), the
timing CPU at its next ``updateCycleCounts`` (``curCycle() - previousCycle``, the sleep included), O3 in ``wakeCPU``
(to ``numCycles`` and ``idleCycles`` together), Minor in ``Ticked::start`` (to ``numCycles``; its ``idleCycles`` is
``numCycles - tickCycles``).  Where the power state was clock-gated while it slept, the cap at
the ON residency takes the credit out; where it stayed ON (or the run has no residency) the count cannot say when
in the epoch the CPU woke.  Such an epoch is seen when a CPU counts more cycles than its clock ticks in it, or
counts after an epoch in which it counted none (asleep through it, so the credit holds at least that epoch).

What gem5's statistics allow for the cycles the CPU was clocked in the epoch (the 0x11 input):

- at most: the priced count (``numCycles`` capped at the ON residency), the cycles the clock ticks in the epoch, and
  ``numCycles`` less the cycles of the epochs before it in which it counted none;
- at least: the cycles it ticked in the epoch — O3 and Minor ``numCycles - idleCycles`` (the credit is inside
  ``idleCycles``); a simple CPU's committed instructions (one per cycle at most: the atomic CPU counts a cycle per
  instruction, the timing CPU takes a cycle or more for each); nothing for another CPU model.

The epoch is priced at the middle of that range with an interval covering both ends (flag ``wake_credit``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cosim.readers.gem5_config import Cluster
from cosim.readers.stats_table import StatsLike
from cosim.timeline.cycles import CYCLE_EDGE, CYCLE_SLACK, INST_STATS, ON_STATS, _column, _first_column


@dataclass(frozen=True)
class WakeCredit:
    """Per epoch, the cluster's clocked cycles at the low and high end of what gem5's statistics allow, as cycles to
    add to the priced count (<= 0; 0 where no CPU holds credit), and the CPUs holding credit ("" where none)."""

    low_cycles: np.ndarray
    high_cycles: np.ndarray
    cpus: np.ndarray

    @property
    def flagged(self) -> np.ndarray:
        """Epochs in which a CPU's count holds cycles it slept before the epoch."""
        return self.cpus != ""


def wake_credit(stats: StatsLike, cluster: Cluster, *, freq_mhz: np.ndarray, duration_s: np.ndarray) -> WakeCredit:
    """The range of clocked cycles of every epoch in which a CPU of ``cluster`` holds wake-up credit (module docstring)."""
    f = np.asarray(freq_mhz, dtype=float)
    t = np.asarray(duration_s, dtype=float)
    n = len(f)
    ticked = f * 1e6 * t
    epoch_ticks = np.asarray(stats["end_tick"], dtype=float) - np.asarray(stats["start_tick"], dtype=float)
    period_ticks = cluster.ticks_per_s / (f * 1e6)
    low, high = np.zeros(n), np.zeros(n)
    cpus = np.full(n, "", dtype=object)
    for cpu in cluster.cores:
        column = _column(stats, cpu, "numCycles")
        if column is None or cpu in cluster.partner.values():  # a switched core's count starts at the switch: no sign
            continue
        raw = np.asarray(stats[column], dtype=float)
        known = np.isfinite(raw)  # a nan count says nothing, and is no sign of sleep either
        counted = np.nan_to_num(raw, nan=0.0)
        on = _first_column(stats, cpu, ON_STATS)
        on_ticks = np.asarray(stats[on], dtype=float) if on else epoch_ticks
        priced = np.minimum(counted, on_ticks / period_ticks) if on else counted  # the 0x11 rule's count
        asleep = _asleep_cycles(np.where(known, counted, np.nan), ticked)
        over = counted > ticked * (1 + CYCLE_SLACK) + CYCLE_EDGE
        woke = asleep > 0
        # gated while asleep: the ON residency already takes the credit out
        credit = (over | woke) & known & (counted > 0) & (on_ticks >= epoch_ticks - period_ticks)
        if not credit.any():
            continue
        most = np.minimum.reduce([priced, ticked, np.maximum(counted - asleep * (1 - CYCLE_SLACK) + 2 * CYCLE_EDGE, 0.0)])
        least = np.clip(_ticked_at_least(stats, cluster, cpu, counted), 0.0, most)
        low += np.where(credit, least - priced, 0.0)
        high += np.where(credit, most - priced, 0.0)
        for i in np.flatnonzero(credit):
            cpus[i] = ";".join(filter(None, [cpus[i], cpu]))
    return WakeCredit(low, high, cpus)


def _asleep_cycles(counted: np.ndarray, ticked: np.ndarray) -> np.ndarray:
    """Per epoch, the cycles of the run of epochs just before it in which the CPU counted none (0 where it counted in
    the epoch before, or counts none in this one)."""
    out = np.zeros(len(counted))
    run = 0.0
    for i in range(len(counted)):  # nan (a count not known) ends a run, as a count does
        out[i] = run if counted[i] > 0 else 0.0
        run = run + ticked[i] if counted[i] == 0 else 0.0
    return out


def _ticked_at_least(stats: StatsLike, cluster: Cluster, cpu: str, counted: np.ndarray) -> np.ndarray:
    """The fewest cycles ``cpu`` was clocked in each epoch, by its CPU model (module docstring)."""
    kind = cluster.kind(cpu)
    idle = _column(stats, cpu, "idleCycles")
    if kind in ("o3", "minor") and idle is not None:
        return counted - np.nan_to_num(np.asarray(stats[idle], dtype=float), nan=0.0)
    if kind == "simple":
        found = [np.nan_to_num(np.asarray(stats[c], dtype=float), nan=0.0) for s in INST_STATS if (c := _column(stats, cpu, s))]
        if found:
            return np.max(found, axis=0)
    return np.zeros(len(counted))


def credited_eph(
    eph: np.ndarray, credit: WakeCredit, *, cores_per_cluster: int, duration_s: np.ndarray, freq_mhz: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 0x11 input (cycles per model core per us, :mod:`cosim.counters.pmc`) at the low end, middle and high end
    of what the statistics allow -> ``(low, middle, high)``; ``eph`` itself where no CPU holds credit."""
    with np.errstate(divide="ignore", invalid="ignore"):
        per_cycle = 1.0 / (cores_per_cluster * np.asarray(duration_s, dtype=float) * np.asarray(freq_mhz, dtype=float))
    low = np.where(credit.flagged, eph + credit.low_cycles * per_cycle, eph)
    high = np.where(credit.flagged, eph + credit.high_cycles * per_cycle, eph)
    return low, (low + high) / 2, high
