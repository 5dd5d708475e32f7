"""What a recorded gem5 run did, per cluster and epoch: the inputs of the DVFS what-if (:mod:`cosim.dse.whatif`
builds them from gem5's statistics, its model's event energies and clocked time with :func:`beta_e` and
:func:`clocked_s`), and when each cluster finished its work."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from cosim.counters.pmc import event_rates
from cosim.models.modelfile import Model

# an epoch in which a cluster's busiest CPU computed for less than this share of it is idle for it
ACTIVE_SHARE = 0.01


@dataclass(frozen=True)
class ClusterActivity:
    """What a recorded run did on one cluster, per epoch: the inputs of the what-if."""

    name: str
    model: Model
    freq_mhz: np.ndarray
    dyn_coeff: np.ndarray  # t * f * sum(beta * E) over the non-cycle events [W s / V^2]: their energy = dyn_coeff * V^2
    cycle_coeff: np.ndarray  # the same for the CPU_CYCLES (0x11) inputs, whose count changes with the clock
    busy_s: np.ndarray
    mem_s: np.ndarray
    # the part of the memory time spent in the cluster's own clock domain (its L2's lookup and response, its L2
    # bus), which scales with the cluster clock: within mem_s (O3, simple CPUs), or within the idle waits (Minor)
    mem_clocked_s: np.ndarray | None = None
    wait_clocked_s: np.ndarray | None = None
    # Minor's load waits off the cluster clock (memory bus, DRAM): with wait_clocked_s, the idle time it was working
    # (the rest of its idle time is stores draining, or, in its last active epoch, after it finished)
    load_wait_fixed_s: np.ndarray | None = None
    # an O3 cluster's store misses' L2 cycles on its critical path, and whether the prediction puts them on the clock
    # (the only CPU on its memory) or off it (DRAM queueing of the other CPUs offsets them); the interval spans both
    store_l2_s: np.ndarray | None = None
    store_on_clock: bool = False
    # a Minor cluster's store floor [s]: its store misses' latency one after the other (its store buffer drains them
    # in order) beyond its load waits, at most the epoch's time and its busy time plus drains; the floor's L2 cycles
    # (on the cluster clock), and the part of its idle time (drains) the floor explains
    store_serial_s: np.ndarray | None = None
    store_serial_clocked_s: np.ndarray | None = None
    store_drain_s: np.ndarray | None = None
    # the store misses' L2 cycles among the drains the floor leaves [s]: the interval's reading where those drains
    # follow them
    drain_clocked_s: np.ndarray | None = None
    # an O3 cluster's epochs: how much longer at a lower clock and shorter at a higher one gem5's writing of whole
    # store lines (no fetch) may make them [s], (2, epochs): the interval's reading (memory_stats.whole_line_switch_s)
    whole_line_s: np.ndarray | None = None
    cores_scale: float = 1.0  # static power scale for the cores present (cosim.models.envelope.cores_factor)
    flags: tuple[str, ...] = ()  # what every row says of this cluster (core_kind_mismatch:<name>)
    # the time its busiest CPU was clocked per epoch [s]: its CPU_CYCLES (0x11) count / f, stalls included, WFI and
    # a halted CPU not (counters/maps: numCycles bounded by the ON residency); None: its busy time
    clocked_s: np.ndarray | None = None
    # the die temperature [°C] stated (--temperature), else the thermal loop's ambient and start [°C] (None: defaults):
    # each point's temperature is the one its own power produces (cosim.timeline.temperature.point_temperature_c)
    temperature_c: float | None = None
    ambient_c: float | None = None
    start_temperature_c: float | None = None


@dataclass(frozen=True)
class RecordedRun:
    duration_s: np.ndarray  # per epoch
    clusters: list[ClusterActivity]
    dram_busy_s: float = 0.0  # time the DRAM data bus was busy over the run [s]


def cluster_done_s(cluster: ClusterActivity, duration_s: np.ndarray, *, alone: bool = False) -> float:
    """When the cluster finished its work in the recorded run [s]: the start of its last active epoch plus that
    epoch's busy time, load waits and the drains its store floor explains (0 if it never computed); the end of that
    epoch when it is the run's only cluster (its idle time there is its own waiting: no other cluster ran on)."""
    last = cluster_finish(cluster, duration_s)
    if last < 0:
        return 0.0
    if alone:
        return float(duration_s[: last + 1].sum())
    waits = sum(float(w[last]) for w in (cluster.wait_clocked_s, cluster.load_wait_fixed_s, cluster.store_drain_s) if w is not None)
    return float(duration_s[:last].sum() + min(cluster.busy_s[last] + waits, duration_s[last]))


def cluster_finish(cluster: ClusterActivity, duration_s: np.ndarray) -> int:
    """Index of the last epoch in which the cluster computed (its busiest CPU active for more than 1 % of it); -1: never."""
    return last_active(cluster.busy_s, duration_s)


def last_active(busy_s: np.ndarray, duration_s: np.ndarray) -> int:
    """Index of the last epoch in which ``busy_s`` is above 1 % of the epoch; -1: none."""
    active = np.flatnonzero(busy_s > ACTIVE_SHARE * duration_s)
    return int(active[-1]) if active.size else -1


def clocked_s(stats: pd.DataFrame, cluster, *, generation: str, freq_mhz: np.ndarray) -> np.ndarray:
    """The time the cluster's busiest CPU was clocked per epoch [s]: its CPU_CYCLES count (the counter map's rule)
    over the clock."""
    import dataclasses

    out = np.zeros(len(stats))
    for cpu in cluster.cores:
        one = dataclasses.replace(cluster, cpus=(cpu, *(c for c, p in cluster.partner.items() if p == cpu)))
        rates = event_rates(stats, one, ["0x11"], generation=generation, cores_per_cluster=1, freq_mhz=freq_mhz)
        out = np.maximum(out, rates.eph["0x11"] * stats["duration_s"].to_numpy() / 1e6)  # E = cycles / (t * f [MHz])
    return out


def beta_e(model, rates, n: int, *, cycles: bool) -> np.ndarray:
    """Sum of beta * events-per-hour over the model's dynamic terms that are (or are not) the cycle counter."""
    return sum(
        t.coefficient * sum(w * rates.eph[e] for e, w in t.events.items() if (e == "0x11") == cycles) for t in model.dynamic
    ) + np.zeros(n)
