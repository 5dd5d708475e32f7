"""DVFS what-if: rescale a recorded gem5 run to other operating points per cluster.

Power (Walker's formulation): per-cycle event rates are properties of the
workload, so an epoch's events are the same at any DVFS point.  Dynamic power is
beta * E * V^2 * f with E = events / (t * f * cores); with the same events over a
new runtime t' at f', an epoch's dynamic *energy* is t * f * V'^2 * sum(beta * E):
it depends on the new voltage only.  Static power is the model's polynomial at
(f', V') for the new runtime.

Runtime, per epoch (two-part model):
  busy_c  = busiest CPU's active cycles / f_c          (time cluster c computes)
  mem_c   = min(busy_c, L2 miss latency sum / CPUs)    (the part waiting on memory)
  busy_c' = mem_c + (busy_c - mem_c) * f_c / f_c'      (only core time scales)
  t'      = t - max_c busy_c + max_c busy_c'           (idle time is unchanged)
The memory estimator adds up gem5's L2 demand miss latency (ticks the misses
were outstanding) and shares it between the cluster's CPUs.  Its limits: misses
overlapping within one core (memory-level parallelism) are counted one after
the other, so memory time is over-estimated for high-MLP code and its speed-up
under-estimated; L1-to-L2 hit time is taken to scale with the core clock; DRAM
latency is taken as constant.
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

# L2 demand miss latency (sum over misses, ticks) in both naming generations
MISS_LATENCY = ("demandMissLatency::total", "demand_miss_latency::total")


@dataclass(frozen=True)
class ClusterActivity:
    """What a recorded run did on one cluster, per epoch: the inputs of the what-if."""

    name: str
    model: Model
    freq_mhz: np.ndarray
    dyn_coeff: np.ndarray  # t * f * sum(beta * E) [W s / V^2]: dynamic energy = dyn_coeff * V^2
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
        sum_beta_e = sum(t.coefficient * sum(w * rates.eph[e].to_numpy() for e, w in t.events.items()) for t in model.dynamic)
        active = np.zeros((len(cluster.cpus), len(stats)))
        for i, cpu in enumerate(cluster.cpus):
            if f"{cpu}.numCycles" not in stats:
                raise CosimError(f"{meta.path}: no {cpu}.numCycles; the what-if needs each CPU's cycles")
            idle = stats[f"{cpu}.idleCycles"].to_numpy() if f"{cpu}.idleCycles" in stats else 0.0
            active[i] = stats[f"{cpu}.numCycles"].to_numpy() - idle
        busy = np.minimum(active.max(axis=0) / (freq * 1e6), duration)
        latency = np.zeros(len(stats))
        for l2 in set(cluster.l2.values()):
            for name in MISS_LATENCY:
                if f"{l2}.{name}" in stats:
                    latency += stats[f"{l2}.{name}"].to_numpy() * cluster.n_cpus / cluster.sharers(l2)
                    break
        mem = np.minimum(busy, latency / meta.ticks_per_s / cluster.n_cpus)
        out.append(ClusterActivity(cluster.name, model, freq, duration * freq * sum_beta_e, busy, mem))
    return RecordedRun(duration, out)


def dvfs_grid(run: RecordedRun, freqs: Mapping[str, Sequence[float]] | None = None) -> pd.DataFrame:
    """Every combination of the clusters' frequencies (default: each model's V-f table)."""
    axes = {}
    for c in run.clusters:
        axes[c.name] = list(freqs[c.name]) if freqs and c.name in freqs else [f for f, _ in c.model.vf_points]
    rows = list(itertools.product(*axes.values()))
    return pd.DataFrame(rows, columns=[f"{name}_freq_mhz" for name in axes])


def whatif(run: RecordedRun, grid: pd.DataFrame, *, chunk: int = 256) -> pd.DataFrame:
    """Runtime [s], energy [J], average and peak power [W] of the run at each grid row; per-cluster energy too."""
    n_cfg = len(grid)
    results = {k: np.empty(n_cfg) for k in ("runtime_s", "energy_j", "peak_power_w")}
    per_cluster = {c.name: np.empty(n_cfg) for c in run.clusters}
    # per cluster and frequency: busy time, dynamic energy, static power (no dependence on the others)
    tables = []
    for c in run.clusters:
        f_new = grid[f"{c.name}_freq_mhz"].to_numpy(dtype=float)
        levels, index = np.unique(f_new, return_inverse=True)
        op = operating_point(c.model, levels)
        busy = c.mem_s + (c.busy_s - c.mem_s) * (c.freq_mhz / levels[:, None])  # (levels, epochs)
        dyn_j = c.dyn_coeff * op.voltage_v[:, None] ** 2
        static_w = static_power_w(levels, op.voltage_v, c.model.static)
        tables.append((index, busy, dyn_j, static_w))
    base = run.duration_s - np.max([c.busy_s for c in run.clusters], axis=0)
    for start in range(0, n_cfg, chunk):  # chunks keep the (configs x epochs) arrays small
        sel = slice(start, min(start + chunk, n_cfg))
        busy = np.max([b[i[sel]] for i, b, _, _ in tables], axis=0)
        t_new = base + busy  # (configs, epochs)
        power = np.zeros_like(t_new)
        for (i, _, dyn_j, static_w), c in zip(tables, run.clusters):
            cluster_w = dyn_j[i[sel]] / t_new + static_w[i[sel], None]
            power += cluster_w
            per_cluster[c.name][sel] = (cluster_w * t_new).sum(axis=1)
        results["runtime_s"][sel] = t_new.sum(axis=1)
        results["energy_j"][sel] = (power * t_new).sum(axis=1)
        results["peak_power_w"][sel] = power.max(axis=1)
    out = grid.copy()
    for k, v in results.items():
        out[k] = v
    out["avg_power_w"] = out["energy_j"] / out["runtime_s"]
    out["edp_js"] = out["energy_j"] * out["runtime_s"]
    for name, v in per_cluster.items():
        out[f"{name}_energy_j"] = v
    return out
