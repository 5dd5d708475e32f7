"""DVFS what-if: rescale a recorded gem5 run to other operating points per cluster.

Power (Walker's formulation): per-cycle event rates are properties of the
workload, so an epoch's events are the same at any DVFS point.  Dynamic power is
beta * E * V^2 * f with E = events / (t * f * cores); with the same events over a
new runtime t' at f', an epoch's dynamic *energy* is t * f * V'^2 * sum(beta * E):
it depends on the new voltage only.  Static power is the model's polynomial at
(f', V') for the whole new runtime: a cluster stays powered until the run ends.

Runtime, per cluster (the clusters run their own work side by side):
  busy_c  = busiest CPU's active cycles / f_c          (time cluster c computes)
  mem_c   = the part of busy_c spent waiting on memory (does not scale)
  busy_c' = mem_c + (busy_c - mem_c) * f_c / f_c'      (only core time scales)
  and the active cycles (the CPU_CYCLES input) become (busy_c - mem_c) * f_c + mem_c * f_c':
  a core waiting on memory spends fewer cycles doing so at a lower clock
  each epoch of cluster c lasts t - busy_c + busy_c' for it, up to the last epoch
  in which it computed; the run ends when the last cluster finishes, plus the
  recorded time after every cluster had finished.
Which cycles hold the memory wait depends on the CPU model.  Minor quiesces while
it waits for memory and counts those cycles as idle, so its active cycles are all
core time (mem = 0), and the waits are already in the part that does not scale.
O3 and the simple CPUs stay active while they wait: their memory time is gem5's
L2 miss latency (ticks the misses were outstanding), shared between the cluster's
CPUs: read misses only for O3, which does not wait for its stores (they retire
into the store queue), all demand misses for the simple CPUs, which block on both.  Limits: overlapping misses (memory-level parallelism) are counted
one after the other, so an O3 core's memory time is over-estimated; L1-to-L2 hit
time is taken to scale with the core clock; DRAM latency as constant.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cosim.counters.pmc import event_rates
from cosim.errors import CosimError
from cosim.models.modelfile import Model, operating_point
from cosim.models.walker import static_power_w
from cosim.readers.gem5_config import Gem5Config
from cosim.timeline import ClusterSpec, frequency_mhz, resolve_cluster

# CPU kinds whose idle cycles include the cycles they wait for memory (MinorCPU quiesces on a miss)
_QUIESCE_ON_MISS = {"minor", "inorder"}
# an epoch in which a cluster's busiest CPU computed for less than this share of it is idle for it
_ACTIVE_SHARE = 0.01
# L2 demand miss latency (sum over misses, ticks) in both naming generations
MISS_LATENCY = ("demandMissLatency::total", "demand_miss_latency::total")
# the read misses alone (loads and instruction fetches); an out-of-order core does not wait for its stores
READ_MISS_LATENCY = (("ReadReq.missLatency::total", "ReadSharedReq.missLatency::total", "ReadCleanReq.missLatency::total"),
                     ("ReadReq_miss_latency::total", "ReadSharedReq_miss_latency::total", "ReadCleanReq_miss_latency::total"))


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


@dataclass(frozen=True)
class RecordedRun:
    duration_s: np.ndarray  # per epoch
    clusters: list[ClusterActivity]


def recorded_run(stats: pd.DataFrame, config: Gem5Config, specs: Sequence[ClusterSpec]) -> RecordedRun:
    """Per-epoch activity of each cluster of a parsed gem5 run."""
    meta = stats.attrs["gem5"]
    duration = stats["duration_s"].to_numpy()
    out = []
    for spec in specs:
        cluster = resolve_cluster(config, spec, meta.ticks_per_s)
        model = spec.model
        freq = frequency_mhz(stats, cluster)
        rates = event_rates(stats, cluster, model.events, generation=meta.generation,
                            cores_per_cluster=model.cores_per_cluster, freq_mhz=freq)
        def beta_e(cycles: bool) -> np.ndarray:
            return sum(t.coefficient * sum(w * rates.eph[e].to_numpy() for e, w in t.events.items() if (e == "0x11") == cycles)
                       for t in model.dynamic) + np.zeros(len(stats))
        active = np.zeros((len(cluster.cpus), len(stats)))
        for i, cpu in enumerate(cluster.cpus):
            if f"{cpu}.numCycles" not in stats:
                raise CosimError(f"{meta.path}: no {cpu}.numCycles; the what-if needs each CPU's cycles")
            idle = stats[f"{cpu}.idleCycles"].to_numpy() if f"{cpu}.idleCycles" in stats else 0.0
            active[i] = stats[f"{cpu}.numCycles"].to_numpy() - idle
        busy = np.minimum(active.max(axis=0) / (freq * 1e6), duration)
        latency = np.zeros(len(stats))
        out_of_order = all(cluster.kind(c) == "o3" for c in cluster.cores)
        for l2 in set(cluster.l2.values()):
            families = READ_MISS_LATENCY if out_of_order else tuple((n,) for n in MISS_LATENCY)
            for names in families:
                found = [f"{l2}.{n}" for n in names if f"{l2}.{n}" in stats]
                if found:
                    latency += stats[found].to_numpy().sum(axis=1) * cluster.n_cpus / cluster.sharers(l2)
                    break
        mem = np.minimum(busy, latency / meta.ticks_per_s / cluster.n_cpus)
        if all(cluster.kind(c) in _QUIESCE_ON_MISS for c in cluster.cores):
            mem = np.zeros(len(stats))  # the waits are idle cycles already, outside busy
        out.append(ClusterActivity(cluster.name, model, freq, duration * freq * beta_e(False), duration * freq * beta_e(True), busy, mem))
    return RecordedRun(duration, out)


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
    return wanted


def dvfs_grid(run: RecordedRun, freqs: Mapping[str, Sequence[float]] | None = None) -> pd.DataFrame:
    """Every combination of the clusters' frequencies (default: each model's V-f table)."""
    axes = {}
    for c in run.clusters:
        axes[c.name] = list(freqs[c.name]) if freqs and c.name in freqs else [f for f, _ in c.model.vf_points]
    rows = list(itertools.product(*axes.values()))
    return pd.DataFrame(rows, columns=[f"{name}_freq_mhz" for name in axes])


def whatif(run: RecordedRun, grid: pd.DataFrame, *, chunk: int = 256) -> pd.DataFrame:
    """Runtime [s], energy [J], average and peak power [W] of the run at each grid row; per-cluster energy and runtime too.

    ``peak_power_w`` adds each cluster's highest epoch power: the clusters' epochs no
    longer line up once their clocks change, so this is an upper bound.
    """
    n_cfg = len(grid)
    duration = run.duration_s
    ends = np.cumsum(duration)
    finish = {}  # cluster -> index of the last epoch it computed in
    for c in run.clusters:
        active = np.flatnonzero(c.busy_s > _ACTIVE_SHARE * duration)
        finish[c.name] = int(active[-1]) if active.size else -1
    last = max(finish.values())
    tail_s = ends[-1] - (ends[last] if last >= 0 else 0.0)  # recorded time after every cluster had finished
    tables = []
    for c in run.clusters:
        f_new = grid[f"{c.name}_freq_mhz"].to_numpy(dtype=float)
        levels, index = np.unique(f_new, return_inverse=True)
        op = operating_point(c.model, levels)
        span = slice(0, finish[c.name] + 1)
        busy = c.mem_s + (c.busy_s - c.mem_s) * (c.freq_mhz / levels[:, None])  # (levels, epochs)
        epoch_s = duration[None, :] - c.busy_s[None, :] + busy  # each epoch's length for this cluster
        runtime = epoch_s[:, span].sum(axis=1)  # (levels,) when the cluster finishes its work
        # active cycles at f': core cycles stay, cycles spent waiting on memory shrink with the clock
        with np.errstate(divide="ignore", invalid="ignore"):
            cycles = np.where(c.busy_s > 0, (c.mem_s * levels[:, None] + (c.busy_s - c.mem_s) * c.freq_mhz)
                              / (c.busy_s * c.freq_mhz), 1.0)
        dyn_j = (c.dyn_coeff + c.cycle_coeff * cycles) * op.voltage_v[:, None] ** 2
        static_w = static_power_w(levels, op.voltage_v, c.model.static)
        with np.errstate(divide="ignore", invalid="ignore"):
            peak = np.nanmax(np.where(epoch_s > 0, dyn_j / epoch_s, 0.0), axis=1) + static_w
        tables.append((c.name, index, runtime, dyn_j.sum(axis=1), static_w, peak))
    runtime_s = np.max([rt[i] for _, i, rt, _, _, _ in tables], axis=0) + tail_s
    out = grid.copy()
    out["runtime_s"] = runtime_s
    energy = np.zeros(n_cfg)
    peak = np.zeros(n_cfg)
    for name, i, rt, dyn, static_w, pk in tables:
        out[f"{name}_runtime_s"] = rt[i]
        out[f"{name}_energy_j"] = dyn[i] + static_w[i] * runtime_s
        energy += out[f"{name}_energy_j"].to_numpy()
        peak += pk[i]
    out["energy_j"] = energy
    out["peak_power_w"] = peak
    out["avg_power_w"] = out["energy_j"] / out["runtime_s"]
    out["edp_js"] = out["energy_j"] * out["runtime_s"]
    return out[[*grid.columns, "runtime_s", "energy_j", "peak_power_w", "avg_power_w", "edp_js",
                *[c for c in out.columns if c.endswith(("_energy_j", "_runtime_s")) and c not in ("energy_j", "runtime_s")]]]
