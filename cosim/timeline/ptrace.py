"""HotSpot's power trace (``.ptrace``) from a priced CPU timeline: watts per floorplan block per sampling interval.

HotSpot (``hotspot -f chip.flp -p chip.ptrace``) reads a power trace as whitespace-separated text: the first line
the floorplan's block names, then one line per sampling interval (``-sampling_intvl`` [s]) with each block's power
[W] in the same order; the names must be the floorplan's units, all of them.

Blocks (the name mapping, docs/howto/gem5-to-hotspot.md):

- ``core`` (default): one block per physical core, ``<cluster>_core<i>``, ``i`` the core's place among the
  cluster's CPUs in the config's order (``big_core0`` = ``system.bigCluster.cpus0``; a switched-out stand-in counts
  for the core it stands in for).  A cluster's power is split so that its blocks sum to it: its dynamic power by
  each core's share of the model's dynamic terms evaluated on that core's own events (a shared L2's events split
  evenly between the CPUs sharing it), its static power evenly over the cores (the cores a run does not simulate,
  ``--powered-cores``, put theirs on the simulated ones);
- ``cluster``: one block per cluster, named as the cluster, with the cluster's power.

Rows: the epochs resampled to a fixed interval (HotSpot has one), by default the epochs' median length, so a run of
equal dumps gives one row per epoch: each row is the energy of the blocks in that interval over the time the epochs
cover of it [W] (the last, partial interval over its covered part).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cosim import columns as cols
from cosim.counters.pmc import event_rates
from cosim.errors import CosimError
from cosim.models.walker import cluster_power_w
from cosim.output import write_atomic
from cosim.readers.gem5_config import Cluster, Gem5Config
from cosim.readers.stats_table import StatsLike
from cosim.timeline.clusters import ClusterSpec, resolve_cluster

BLOCKS = ("core", "cluster")


def block_power_w(
    stats: StatsLike, config: Gem5Config, specs: Sequence[ClusterSpec], timeline: cols.Columns, *, blocks: str = "core"
) -> tuple[dict[str, str], dict[str, np.ndarray]]:
    """Per block, its power per epoch [W] -> ``({block: what it stands for}, {block: power_w})``, blocks in cluster
    order (as the timeline sorts them), then core order.  Refuses (:class:`CosimError`) an epoch with no power value."""
    if blocks not in BLOCKS:
        raise CosimError(f"--ptrace-blocks {blocks}: expected one of {', '.join(BLOCKS)}")
    meaning: dict[str, str] = {}
    power: dict[str, np.ndarray] = {}
    for name, rows in cols.groups(timeline, "cluster"):
        spec = next(s for s in specs if s.name == name)
        # a trace has no flag column: an implausible figure kept by --keep-implausible would reach HotSpot unflagged
        kept = np.asarray(rows["implausible"], dtype=bool) if "implausible" in rows else np.zeros(len(rows["power_w"]), bool)
        gone = np.flatnonzero(~np.isfinite(rows["power_w"]) | kept)
        if gone.size:
            what = "an implausible figure kept" if kept[gone[0]] else "no power value"
            raise CosimError(
                f"--ptrace: epoch {rows['epoch'][gone[0]]} of cluster '{name}' has {what} ({rows['flags'][gone[0]] or 'nan'}); "
                "HotSpot needs a trusted power for every interval: write the table without --ptrace"
            )
        cluster = resolve_cluster(config, spec, stats.attrs["gem5"].ticks_per_s)
        if blocks == "cluster":
            meaning[name] = cluster.clk_domain.rsplit(".", 1)[0]
            power[name] = np.asarray(rows["power_w"], dtype=float)
            continue
        shares = core_dynamic_shares(stats, cluster, spec, rows)
        for i, (core, share) in enumerate(shares.items()):
            block = f"{name}_core{i}"
            meaning[block] = core
            power[block] = rows["dynamic_w"] * share + rows["static_w"] / len(shares)
    return meaning, power


def core_dynamic_shares(stats: StatsLike, cluster: Cluster, spec: ClusterSpec, rows: cols.Columns) -> dict[str, np.ndarray]:
    """Per physical core of ``cluster``, its share of the cluster's dynamic power per epoch (shares sum to 1; even
    where no core has any activity): the model's dynamic terms on the core's own events at the epoch's clock and
    voltage, over the sum of all cores'."""
    model = spec.model
    meta = stats.attrs["gem5"]
    sharers = {obj: cluster.sharers(obj) for obj in _shared_caches(cluster)}  # a sub-cluster keeps the cluster's sharing
    raw = {}
    for core in cluster.cores:
        own = tuple(c for c in cluster.cpus if cluster.core_of(c) == core)
        sub = dataclasses.replace(cluster, cpus=own, l2_sharers={**cluster.l2_sharers, **sharers})
        rates = event_rates(
            stats, sub, model.events, generation=meta.generation, cores_per_cluster=model.cores_per_cluster, freq_mhz=rows["freq_mhz"]
        )
        raw[core] = cluster_power_w(rates.eph, rows["freq_mhz"], rows["voltage_v"], model.dynamic, ())["dynamic_w"]
    total = np.sum(list(raw.values()), axis=0)
    even = 1.0 / len(raw)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {core: np.where(total > 0, r / total, even) for core, r in raw.items()}


def _shared_caches(cluster: Cluster) -> set[str]:
    """The caches below the L1s a core of ``cluster`` may count events of: the config's, and the names cosim looks
    for where the config does not say (:mod:`cosim.counters.pmc`)."""
    prefixes = {cpu.rsplit(".", 1)[0] for cpu in cluster.cpus}
    return set(cluster.l2.values()) | {f"{p}.l2" for p in prefixes} | {"system.l2c", "system.l2"}


def resample_w(
    start_s: np.ndarray, end_s: np.ndarray, power: dict[str, np.ndarray], interval_s: float
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The blocks' power [W] per fixed interval from the run's first epoch on -> ``(interval start times [s], {block:
    power_w})``: each interval's energy over the time the epochs cover of it."""
    t0, t1 = float(np.min(start_s)), float(np.max(end_s))
    n = max(1, int(np.ceil((t1 - t0) / interval_s - 1e-9)))
    edges = t0 + interval_s * np.arange(n + 1)
    # overlap [s] of every epoch (rows) with every interval (columns)
    overlap = np.clip(np.minimum(end_s[:, None], edges[None, 1:]) - np.maximum(start_s[:, None], edges[None, :-1]), 0.0, None)
    covered = overlap.sum(axis=0)
    out = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for block, p in power.items():
            out[block] = np.where(covered > 0, (np.asarray(p, dtype=float) @ overlap) / covered, 0.0)
    return edges[:-1], out


def write_ptrace(path: str | Path, power: dict[str, np.ndarray]) -> Path:
    """Write HotSpot's power trace atomically: block names, then one line of watts per interval, tab-separated."""
    names = list(power)
    bad = [n for n in names if not n or any(ch.isspace() for ch in n)]
    if bad:
        raise CosimError(
            f"--ptrace: block name '{bad[0]}' has whitespace, which HotSpot's trace cannot hold; rename the cluster (--cluster)"
        )
    values = np.column_stack([power[n] for n in names]) if names else np.zeros((0, 0))

    def write(tmp: Path) -> None:
        with open(tmp, "w") as out:
            out.write("\t".join(names) + "\n")
            for row in values:
                out.write("\t".join(f"{v:.6g}" for v in row) + "\n")

    return write_atomic(path, write)


def ptrace_rows(
    stats: StatsLike,
    config: Gem5Config,
    specs: Sequence[ClusterSpec],
    timeline: cols.Columns,
    *,
    blocks: str = "core",
    interval_s: float | None = None,
) -> tuple[dict[str, str], float, dict[str, np.ndarray]]:
    """The power trace of a priced run -> ``({block: what it stands for}, interval [s], {block: power_w per interval})``
    (:func:`write_ptrace` writes it)."""
    meaning, per_epoch = block_power_w(stats, config, specs, timeline, blocks=blocks)
    first = next(iter(cols.groups(timeline, "cluster")))[1]  # every cluster has the same epochs
    start, end = np.asarray(first["start_s"], dtype=float), np.asarray(first["end_s"], dtype=float)
    step = float(np.median(end - start)) if interval_s is None else float(interval_s)
    if not (np.isfinite(step) and step > 0):
        raise CosimError(f"--ptrace-interval-s {interval_s}: expected a positive interval in seconds, e.g. 0.0001")
    _, rows = resample_w(start, end, per_epoch, step)
    return meaning, step, rows
