"""DVFS what-if: rescale a recorded gem5 run to other operating points per cluster.

Power (Walker's formulation): per-cycle event rates are properties of the
workload, so an epoch's events are the same at any DVFS point.  Dynamic power is
beta * E * V^2 * f with E = events / (t * f * cores); with the same events over a
new runtime t' at f', an epoch's dynamic *energy* is t * f * V'^2 * sum(beta * E):
it depends on the new voltage only.  Static power is the model's polynomial at
(f', V') for the whole new runtime: a cluster stays powered until the run ends.

Runtime, per cluster (the clusters run their own work side by side), up to the
last epoch in which the cluster computed:
  busy_c  = busiest CPU's active cycles / f_c          (time cluster c computes)
  mem_c   = the part of busy_c spent waiting on memory
  busy_c' = mem_c + (busy_c - mem_c) * f_c / f_c'      (only core time scales)
  wait_c  = the rest of the epoch, t - busy_c: time the cluster waited with no
            active cycle (a Minor CPU quiesces on a miss and counts it as idle)
The run ends when the last cluster finishes, plus the recorded time after every
cluster had finished.  The active cycles (the CPU_CYCLES input) become
(busy_c - mem_c) * f_c + mem_c * f_c': a core waiting on memory spends fewer
cycles doing so at a lower clock.

Which cycles hold the memory wait depends on the CPU model.  Minor's active
cycles are all core time (mem = 0) and its waits are in wait_c.  O3 and the
simple CPUs stay active while they wait: mem_c is gem5's L2 miss latency (ticks
the misses were outstanding) shared between the cluster's CPUs, read misses only
for O3, whose stores retire into its store queue, all demand misses for the
simple CPUs, which block on both.

Memory waits are not constant: the same DRAM traffic over a longer run queues
less.  gem5 says how much of a DRAM access is queueing (totQLat / totMemAccLat)
and how busy the DRAM data bus was (busUtil); with an M/M/1 queue (delay ~
U / (1 - U)) wait_c is rescaled to the new utilisation U' = U t / t', solved for
t' by bisection.  Limits: overlapping misses (memory-level parallelism) are
counted one after the other, so an O3 core's mem_c is over-estimated; L1-to-L2
hit time is taken to scale with the core clock.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cosim.counters.pmc import event_rates
from cosim.errors import CosimError
from cosim.models.envelope import above_top, cores_factor, envelope_static_w, refuse_beyond_band
from cosim.models.modelfile import Model, operating_point
from cosim.readers.gem5_config import Gem5Config
from cosim.timeline.cpu import ClusterSpec, frequency_mhz, resolve_cluster
from cosim.timeline.cycles import checked_cycles

# CPU kinds whose idle cycles include the cycles they wait for memory (MinorCPU quiesces on a miss)
_QUIESCE_ON_MISS = {"minor", "inorder"}
# an epoch in which a cluster's busiest CPU computed for less than this share of it is idle for it
_ACTIVE_SHARE = 0.01
# DRAM queueing: utilisation is capped below 1 (an M/M/1 queue's delay diverges there)
_MAX_UTIL = 0.95
_QUEUE_ITERATIONS = 60  # bisection steps
# L2 demand miss latency (sum over misses, ticks) in both naming generations
MISS_LATENCY = ("demandMissLatency::total", "demand_miss_latency::total")
# the read misses alone (loads and instruction fetches); an out-of-order core does not wait for its stores
READ_MISS_LATENCY = (
    ("ReadReq.missLatency::total", "ReadSharedReq.missLatency::total", "ReadCleanReq.missLatency::total"),
    ("ReadReq_miss_latency::total", "ReadSharedReq_miss_latency::total", "ReadCleanReq_miss_latency::total"),
)


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
    cores_scale: float = 1.0  # static power scale for the cores present (cosim.models.envelope.cores_factor)


@dataclass(frozen=True)
class RecordedRun:
    duration_s: np.ndarray  # per epoch
    clusters: list[ClusterActivity]
    dram_busy_s: float = 0.0  # time the DRAM data bus was busy over the run [s]
    queue_share: float = 0.0  # share of DRAM access latency spent queueing (totQLat / totMemAccLat)


def recorded_run(stats: pd.DataFrame, config: Gem5Config, specs: Sequence[ClusterSpec]) -> RecordedRun:
    """Per-epoch activity of each cluster of a parsed gem5 run."""
    meta = stats.attrs["gem5"]
    duration = stats["duration_s"].to_numpy()
    out = []
    for spec in specs:
        cluster = resolve_cluster(config, spec, meta.ticks_per_s)
        model = spec.model
        freq = frequency_mhz(stats, cluster)
        checked_cycles(stats, cluster, freq_mhz=freq, duration_s=duration, keep=False, path=meta.path)  # busy_s needs real cycles
        rates = event_rates(
            stats, cluster, model.events, generation=meta.generation, cores_per_cluster=model.cores_per_cluster, freq_mhz=freq
        )
        active = np.zeros((len(cluster.cpus), len(stats)))
        for i, cpu in enumerate(cluster.cpus):
            if f"{cpu}.numCycles" not in stats:
                raise CosimError(f"{meta.path}: no {cpu}.numCycles; the what-if needs each CPU's cycles")
            idle = stats[f"{cpu}.idleCycles"].to_numpy() if f"{cpu}.idleCycles" in stats else 0.0
            active[i] = stats[f"{cpu}.numCycles"].to_numpy() - idle
        busy = np.minimum(active.max(axis=0) / (freq * 1e6), duration)
        if all(cluster.kind(c) in _QUIESCE_ON_MISS for c in cluster.cores):
            mem = np.zeros(len(stats))  # the waits are idle cycles already, outside busy
        else:
            mem = np.minimum(busy, _miss_latency_s(stats, cluster, meta.ticks_per_s) / cluster.n_cpus)
        out.append(
            ClusterActivity(
                cluster.name,
                model,
                freq,
                duration * freq * _beta_e(model, rates, len(stats), cycles=False),
                duration * freq * _beta_e(model, rates, len(stats), cycles=True),
                busy,
                mem,
                cores_factor(model, cluster.n_cpus),
            )
        )
    dram = _dram_objects(config)
    busy_cols = [f"{d}.busUtil" for d in dram if f"{d}.busUtil" in stats]
    queue_cols = [f"{d}.totQLat" for d in dram if f"{d}.totQLat" in stats]
    access_cols = [f"{d}.totMemAccLat" for d in dram if f"{d}.totMemAccLat" in stats]
    # mean data-bus busy time over the DRAM channels [s], and the queueing share of their access latency
    dram_busy = float(np.nansum(stats[busy_cols].to_numpy() / 100.0 * duration[:, None])) / len(busy_cols) if busy_cols else 0.0
    access = float(np.nansum(stats[access_cols].to_numpy())) if access_cols else 0.0
    share = float(np.nansum(stats[queue_cols].to_numpy())) / access if access > 0 and queue_cols else 0.0
    return RecordedRun(duration, out, dram_busy, share)


def _miss_latency_s(stats: pd.DataFrame, cluster, ticks_per_s: float) -> np.ndarray:
    """The cluster's share of its L2s' miss latency per epoch [s]: read misses for O3, all demand misses otherwise.

    Each L2's latency is split by the CPUs using it: the cluster keeps its own cores' share, so one shared L2 and
    one private L2 per core give the same total for the same misses."""
    out_of_order = all(cluster.kind(c) == "o3" for c in cluster.cores)
    families = READ_MISS_LATENCY if out_of_order else tuple((n,) for n in MISS_LATENCY)
    latency = np.zeros(len(stats))
    for l2 in set(cluster.l2.values()):
        users = sum(cluster.l2.get(c) == l2 for c in cluster.cores)  # this cluster's cores below this L2
        for names in families:
            found = [f"{l2}.{n}" for n in names if f"{l2}.{n}" in stats]
            if found:
                latency += stats[found].to_numpy().sum(axis=1) * users / cluster.sharers(l2)
                break
    return latency / ticks_per_s


def _dram_objects(config: Gem5Config) -> list[str]:
    """DRAM channels: v21+ DRAMInterface objects (system.mem_ctrls.dram), or older DRAMCtrl controllers."""
    return [path for path, params in config.objects.items() if params.get("type") in ("DRAMInterface", "DRAMCtrl")]


def whatif_stats(config: Gem5Config, specs: Sequence[ClusterSpec]) -> set[str]:
    """Every full stat name :func:`recorded_run` may read (for a filtered, much faster parse)."""
    from cosim.counters.pmc import stats_for

    wanted: set[str] = set()
    for spec in specs:
        cluster = resolve_cluster(config, spec, config.ticks_per_s)
        wanted |= stats_for(cluster, spec.model.events)
        wanted |= {f"{cpu}.{name}" for cpu in cluster.cpus for name in ("numCycles", "idleCycles")}
        names = [*MISS_LATENCY, *(n for family in READ_MISS_LATENCY for n in family)]
        wanted |= {f"{l2}.{name}" for l2 in cluster.l2.values() for name in names}
    wanted |= {f"{d}.{name}" for d in _dram_objects(config) for name in ("busUtil", "totQLat", "totMemAccLat")}
    return wanted


def dvfs_grid(run: RecordedRun, freqs: Mapping[str, Sequence[float]] | None = None) -> pd.DataFrame:
    """Every combination of the clusters' frequencies (default: each model's V-f table)."""
    axes = {}
    for c in run.clusters:
        axes[c.name] = list(freqs[c.name]) if freqs and c.name in freqs else [f for f, _ in c.model.vf_points]
    rows = list(itertools.product(*axes.values()))
    return pd.DataFrame(rows, columns=[f"{name}_freq_mhz" for name in axes])


def whatif(run: RecordedRun, grid: pd.DataFrame, *, extrapolate: bool = False) -> pd.DataFrame:
    """Runtime [s], energy [J], average and peak power [W] of the run at each grid row; per-cluster energy and runtime too.

    ``peak_power_w`` adds each cluster's highest epoch power: the clusters' epochs no
    longer line up once their clocks change, so this is an upper bound.  Clocks are
    priced by each model's envelope (:mod:`cosim.models.envelope`); one beyond its band
    is refused unless ``extrapolate``.
    """
    duration = run.duration_s
    ends = np.cumsum(duration)
    finish = {}  # cluster -> index of the last epoch it computed in
    for c in run.clusters:
        active = np.flatnonzero(c.busy_s > _ACTIVE_SHARE * duration)
        finish[c.name] = int(active[-1]) if active.size else -1
    last = max(finish.values())
    tail_s = ends[-1] - (ends[last] if last >= 0 else 0.0)  # recorded time after every cluster had finished
    parts = []
    for c in run.clusters:
        f_new = grid[f"{c.name}_freq_mhz"].to_numpy(dtype=float)
        levels, index = np.unique(f_new, return_inverse=True)
        if not extrapolate:
            refuse_beyond_band(c.model, levels, lambda i, c=c, levels=levels: f"--freqs {c.name}={levels[i]:g}")
        op = operating_point(c.model, levels)
        span = slice(0, finish[c.name] + 1)
        busy = c.mem_s + (c.busy_s - c.mem_s) * (c.freq_mhz / levels[:, None])  # (levels, epochs)
        # until the cluster finishes: its computing time at f' (core part scaled, memory part not), and the time it
        # waited with no active cycle (Minor's memory waits), which follows the DRAM's queueing below
        compute_s = busy[:, span].sum(axis=1)
        wait_s = float((duration - c.busy_s)[span].sum())
        # active cycles at f': core cycles stay, cycles spent waiting on memory shrink with the clock
        with np.errstate(divide="ignore", invalid="ignore"):
            cycles = np.where(c.busy_s > 0, (c.mem_s * levels[:, None] + (c.busy_s - c.mem_s) * c.freq_mhz) / (c.busy_s * c.freq_mhz), 1.0)
        dyn_j = (c.dyn_coeff + c.cycle_coeff * cycles) * op.voltage_v[:, None] ** 2
        static_w = envelope_static_w(c.model, levels, op.voltage_v) * c.cores_scale
        epoch_s = duration[None, :] - c.busy_s[None, :] + busy
        with np.errstate(divide="ignore", invalid="ignore"):
            peak_w = np.nanmax(np.where(epoch_s > 0, dyn_j / epoch_s, 0.0), axis=1) + static_w
        parts.append((c.name, compute_s[index], wait_s, dyn_j.sum(axis=1)[index], static_w[index], peak_w[index]))
    runtime_s = _runtime_with_queueing(run, parts, tail_s, ends[-1])
    out = grid.copy()
    out["runtime_s"] = runtime_s
    energy = np.zeros(len(grid))
    peak = np.zeros(len(grid))
    k = _queue_factor(run, runtime_s, ends[-1])
    for name, compute_s, wait_s, dyn_j, static_w, peak_w in parts:
        out[f"{name}_runtime_s"] = compute_s + wait_s * k
        out[f"{name}_energy_j"] = dyn_j + static_w * runtime_s
        energy += out[f"{name}_energy_j"].to_numpy()
        peak += peak_w
    out["energy_j"] = energy
    out["peak_power_w"] = peak
    out["avg_power_w"] = out["energy_j"] / out["runtime_s"]
    out["edp_js"] = out["energy_j"] * out["runtime_s"]
    # a clock above the model's top trained clock is priced by its envelope's extrapolation: flagged
    out["extrapolated"] = np.any([above_top(c.model, grid[f"{c.name}_freq_mhz"].to_numpy(dtype=float)) for c in run.clusters], axis=0)
    return out[
        [
            *grid.columns,
            "runtime_s",
            "energy_j",
            "peak_power_w",
            "avg_power_w",
            "edp_js",
            "extrapolated",
            *[c for c in out.columns if c.endswith(("_energy_j", "_runtime_s")) and c not in ("energy_j", "runtime_s")],
        ]
    ]


def _beta_e(model, rates, n: int, *, cycles: bool) -> np.ndarray:
    """Sum of beta * events-per-hour over the model's dynamic terms that are (or are not) the cycle counter."""
    return sum(
        t.coefficient * sum(w * rates.eph[e] for e, w in t.events.items() if (e == "0x11") == cycles) for t in model.dynamic
    ) + np.zeros(n)


def _queue_factor(run: RecordedRun, runtime_s: np.ndarray, recorded_s: float) -> np.ndarray:
    """How much longer (> 1) or shorter memory waits get at the new runtime: the same DRAM traffic over another
    time loads the DRAM to U' = U t / t', and a queue's delay goes as U / (1 - U) (M/M/1); only the queueing
    share of the DRAM access latency changes."""
    u = min(run.dram_busy_s / recorded_s, _MAX_UTIL) if recorded_s > 0 else 0.0
    if u <= 0 or run.queue_share <= 0:
        return np.ones(len(runtime_s))
    u_new = np.minimum(run.dram_busy_s / runtime_s, _MAX_UTIL)
    return 1 - run.queue_share + run.queue_share * (u_new / (1 - u_new)) / (u / (1 - u))


def _runtime_with_queueing(run: RecordedRun, parts: list, tail_s: float, recorded_s: float) -> np.ndarray:
    """The run ends with its last cluster, whose waits depend on the runtime through the DRAM load.

    t = tail + max_c(compute_c + k(t) * wait_c) has one root, as k falls when t grows: found by bisection.
    """

    def ends_at(t: np.ndarray) -> np.ndarray:
        k = _queue_factor(run, t, recorded_s)
        return np.max([compute + k * wait for _, compute, wait, *_ in parts], axis=0) + tail_s

    lo = np.max([compute for _, compute, *_ in parts], axis=0) + tail_s  # no wait at all
    hi = np.maximum(ends_at(lo), lo)
    for _ in range(_QUEUE_ITERATIONS):
        mid = (lo + hi) / 2
        later = ends_at(mid) > mid  # the run would end after mid: the root is above
        lo, hi = np.where(later, mid, lo), np.where(later, hi, mid)
    return (lo + hi) / 2
