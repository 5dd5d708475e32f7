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
    return {f"{obj}.{stat}" for cpu in cluster.cpus for obj in _spellings(cpu) for stat in (*CYCLE_STATS, "idleCycles")}


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


def _column(stats: StatsLike, cpu: str, stat: str) -> str | None:
    """The stat's column for ``cpu``, as named (cpus00) or unpadded (cpus0) as gem5 names stats."""
    for obj in _spellings(cpu):
        if f"{obj}.{stat}" in stats:
            return f"{obj}.{stat}"
    return None
