"""A CPU cannot count more cycles than its clock ticks: cycles <= f * t.

gem5's cycle counters (``numCycles``, a simple CPU's busy cycles) count clock
edges of the CPU's clock domain, so in an epoch of ``t`` seconds at ``f`` Hz no
CPU counts more than ``f * t`` of them; it counts fewer while it is suspended or
switched out.  More means the epoch's clock or length is wrong: a wrong clock
domain, a clock change (DVFS) inside the epoch, or counts that were not reset.

The bound is checked on the running totals, epoch by epoch: a CPU that sleeps
across a dump has the cycles it slept added when it wakes (gem5's O3 and Minor
``wakeCPU``), so one epoch may hold cycles the epochs before it did not count
(seen in a real run: 99,739 then 38,113 cycles in 100 and 37.852 us at 1 GHz).
No CPU can count more in total than its clock ticked up to the end of an epoch.
"""

from __future__ import annotations

import numpy as np

from cosim.counters.pmc import unpadded
from cosim.errors import CosimError
from cosim.models.plausibility import refuse_implausible
from cosim.readers.gem5_config import Cluster
from cosim.readers.stats_table import StatsLike

#: counted cycles may exceed f * t by this fraction (gem5 rounds clock periods to whole ticks) ...
CYCLE_SLACK = 0.005
#: ... plus one cycle in flight at the epoch's edge
CYCLE_EDGE = 1.0
# per-CPU cycle counters, v20.1+ and older names
CYCLE_STATS = ("numCycles", "exec_context.thread_0.numBusyCycles", "num_busy_cycles")
# the ticks a CPU spent in power state ON (not clock-gated, not off), v2019+ and 2016-2019 names
ON_STATS = ("power_state.pwrStateResidencyTicks::ON", "pwrStateResidencyTicks::ON")
# committed instructions, v24, v20.1-v23 and older names
INST_STATS = ("commitStats0.numInsts", "exec_context.thread_0.numInsts", "committedInsts", "num_insts")
#: an SE O3 or Minor CPU that is ON counts every cycle; "well below" its clock's cycles is more than this share
#: short (gem5's tick rounding and the cycles of a memory wait that spans a dump, 0.26 % in a real run, are less)
DEFICIT_SHARE = 0.01


def cycle_reasons(stats: StatsLike, cluster: Cluster, *, freq_mhz: np.ndarray, duration_s: np.ndarray) -> np.ndarray:
    """Per epoch, why a CPU of ``cluster`` counted more cycles than its clock allows ("" where none did)."""
    ticked = np.asarray(freq_mhz, dtype=float) * 1e6 * np.asarray(duration_s, dtype=float)
    per_epoch = ticked * (1 + CYCLE_SLACK) + CYCLE_EDGE
    running = np.cumsum(ticked) * (1 + CYCLE_SLACK) + CYCLE_EDGE  # running totals: see the module's docstring
    reasons = np.full(len(ticked), "", dtype=object)
    for cpu in cluster.cpus:
        for column, counted in _cycle_counts(stats, cpu):
            if column.endswith(" - idleCycles"):  # gem5 adds slept cycles to both counters, so active ones never carry
                over = (counted > per_epoch) & (reasons == "")
            else:
                over = (np.cumsum(np.nan_to_num(counted, nan=0.0)) > running) & ~np.isnan(counted) & (reasons == "")
            for i in np.flatnonzero(over):
                reasons[i] = (
                    f"{column} is {counted[i]:.0f} cycles in {duration_s[i] * 1e6:.6g} us, {counted[i] / ticked[i]:.3g}x "
                    f"the {ticked[i]:.0f} a {freq_mhz[i]:g} MHz clock ticks, more than any cycles slept before it can explain "
                    "(wrong clock domain, a clock change inside the epoch, or counts not reset at the dump?)"
                )
    return reasons


def checked_cycles(
    stats: StatsLike,
    cluster: Cluster,
    *,
    freq_mhz: np.ndarray,
    duration_s: np.ndarray,
    keep: bool,
    path: str,
    keep_option: str | None = "--keep-implausible",
) -> np.ndarray:
    """:func:`cycle_reasons`, refusing the first impossible epoch (:class:`CosimError`) unless ``keep``; the refusal
    names ``keep_option``, the command's way to keep such epochs (None: it has none)."""
    reasons = cycle_reasons(stats, cluster, freq_mhz=freq_mhz, duration_s=duration_s)
    if not keep:
        epochs = np.asarray(stats["epoch"])
        refuse_implausible(
            reasons,
            lambda i: f"{path}: epoch {epochs[i]}, cluster '{cluster.name}'",
            "check the cluster's clock domain and that the stats were reset at each dump",
            unit="epoch",
            keep=keep_option,
        )
    return reasons


def cycle_deficits(
    stats: StatsLike, cluster: Cluster, *, freq_mhz: np.ndarray, duration_s: np.ndarray, clock_changed: np.ndarray
) -> np.ndarray:
    """Per epoch, why an O3 or Minor CPU counted cycles its clock cannot account for ("" where none did).

    In SE mode such a CPU counts every cycle it is ON (``numCycles`` = f x t, stalls included: cycles.md); a wait
    that spans a dump moves cycles to the next epoch (gem5 adds them when the CPU wakes), and a thread that exits
    stops the count for good.  So an epoch at an unchanged clock (``clock_changed`` False), with the CPU ON the
    whole epoch, counting well below f x t (:data:`DEFICIT_SHARE`), cycles counted after it, and no later epoch
    giving the shortfall back, ran part of its time at another clock that no dump saw.
    """
    f = np.asarray(freq_mhz, dtype=float)
    t = np.asarray(duration_s, dtype=float)
    ticked = f * 1e6 * t
    epoch_ticks = np.asarray(stats["end_tick"], dtype=float) - np.asarray(stats["start_tick"], dtype=float)
    period_ticks = cluster.ticks_per_s / (f * 1e6)
    reasons = np.full(len(f), "", dtype=object)
    for cpu in cluster.cores:
        column, on = _column(stats, cpu, "numCycles"), _first_column(stats, cpu, ON_STATS)
        if cluster.kind(cpu) not in ("o3", "minor") or cpu in cluster.partner.values() or column is None or on is None:
            continue
        raw = np.asarray(stats[column], dtype=float)
        counted = np.nan_to_num(raw, nan=0.0)
        on_all = (np.asarray(stats[on], dtype=float) >= epoch_ticks - period_ticks) & np.isfinite(raw)  # nan: no count known
        short = ticked - counted
        owed = np.cumsum(short)  # cycles the clock ticked that the CPU has not counted (yet), up to each epoch's end
        allowed = DEFICIT_SHARE * ticked + 2 * CYCLE_EDGE
        later = np.r_[np.cumsum((counted > 0)[::-1])[::-1][1:], 0] > 0  # counted a cycle in a later epoch
        for i in np.flatnonzero((short > allowed) & on_all & ~np.asarray(clock_changed) & later & (reasons == "")):
            before = owed[i - 1] if i else 0.0
            if np.any(owed[i + 1 :] - before <= allowed[i]):
                continue  # given back later: a wait across the dump, credited when the CPU woke
            mean_mhz = counted[i] / t[i] / 1e6
            reasons[i] = (
                f"{unpadded(cpu)} ({cluster.kind(cpu)}) counted {counted[i]:.0f} cycles in {t[i] * 1e6:.6g} us, "
                f"{short[i] / ticked[i]:.1%} short of the {ticked[i]:.0f} its {f[i]:g} MHz clock ticks, ON throughout and "
                "counting again after it, and no later epoch gives the cycles back: not idleness (an SE CPU counts every "
                f"cycle it is ON) but a clock change inside the epoch that no dump saw (a mean clock of {mean_mhz:.0f} MHz, "
                f"so part of the epoch below {mean_mhz:.0f} MHz and the rest up to {f[i]:g} MHz)"
            )
    return reasons


def idle_cpus(stats: StatsLike, cluster: Cluster) -> tuple[str, ...]:
    """The CPUs of ``cluster`` that counted no cycle in any epoch: gem5's ``se.py -n 4`` with one program leaves
    three CPUs that never run (``numCycles`` 0, their other counters never printed).  They are priced as idle
    cores: powered (their static power), no activity."""
    out = []
    for cpu in cluster.cores:
        counts = [np.nansum(np.asarray(stats[c], dtype=float)) for stat in CYCLE_STATS if (c := _column(stats, cpu, stat))]
        if not any(counts):
            out.append(cpu)
    return tuple(out)


def powered_cores(stats: StatsLike, cluster: Cluster, requested: int | None, *, path: str) -> int:
    """The cores whose static power a cluster draws: the CPUs the run simulates, those that never ran included (a
    board powers its idle cores), or ``requested`` (``--powered-cores``) where the physical cluster has more (or has
    some off); never fewer than the CPUs that ran."""
    if requested is None:
        return cluster.n_cpus
    ran = cluster.n_cpus - len(idle_cpus(stats, cluster))
    if not ran <= requested <= 64:
        raise CosimError(
            f"{path}: --powered-cores {cluster.name}={requested}: cluster '{cluster.name}' has {ran} CPU(s) that ran, "
            f"so it powers from {ran} to 64 cores"
        )
    return requested


def cycle_stats(cluster: Cluster) -> set[str]:
    """The stat names :func:`cycle_reasons` reads for ``cluster`` (for a filtered parse)."""
    stats = (*CYCLE_STATS, *ON_STATS, *INST_STATS, "idleCycles")
    return {f"{obj}.{stat}" for cpu in cluster.cpus for obj in _spellings(cpu) for stat in stats}


def _cycle_counts(stats: StatsLike, cpu: str) -> list[tuple[str, np.ndarray]]:
    """Each cycle count of ``cpu`` the run has, by name: its counters, and its active cycles (the 0x11 input)."""
    out = []
    for stat in CYCLE_STATS:
        column = _column(stats, cpu, stat)
        if column is not None:
            out.append((column, np.asarray(stats[column], dtype=float)))
    total, idle = _column(stats, cpu, "numCycles"), _column(stats, cpu, "idleCycles")
    if total is not None and idle is not None:  # active = numCycles - idleCycles exceeds numCycles only if idle < 0
        out.append((f"{total} - idleCycles", np.asarray(stats[total], dtype=float) - np.asarray(stats[idle], dtype=float)))
    return out


def _spellings(cpu: str) -> tuple[str, ...]:
    """``cpu`` as named in the config (cpus00) and as gem5 names its stats (cpus0)."""
    return tuple(dict.fromkeys((cpu, unpadded(cpu))))


def _first_column(stats: StatsLike, cpu: str, names: tuple[str, ...]) -> str | None:
    """The column of the first of ``names`` the stats hold for ``cpu``."""
    return next((c for name in names if (c := _column(stats, cpu, name))), None)


def _column(stats: StatsLike, cpu: str, stat: str) -> str | None:
    """The stat's column for ``cpu``, as named (cpus00) or unpadded (cpus0) as gem5 names stats."""
    for obj in _spellings(cpu):
        if f"{obj}.{stat}" in stats:
            return f"{obj}.{stat}"
    return None
