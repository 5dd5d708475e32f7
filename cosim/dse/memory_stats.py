"""The gem5 statistics the DVFS what-if reads: L2 misses (reads and stores), L1 miss latency, an O3 core's stall and
no-commit cycles, the L2's own cycles per miss and the DRAM channels; and every such stat's full name for a
filtered parse (:func:`whatif_stats`).

What is memory time in the what-if (:mod:`cosim.dse.whatif`), from gem5's own statistics
(docs/explanation/whatif.md has the suite that checks each step):
- an L2 miss spends tag_latency + response_latency cycles of the L2 (and one
  each way on its bus) on the cluster's clock; only the rest (memory bus, DRAM)
  is fixed;
- O3 (busy includes its waits): its L2 read-miss latency (loads one after the
  other; stores retire into the store queue) plus the cycles rename was blocked
  by a full load or store queue or its L1D by busy MSHRs (overlapping misses,
  stores draining), at most the cycles it committed nothing (where the two
  overlap: memory-level parallelism) and at most busy_c; sums, so one dump of
  several phases gets each phase's memory time (stats without the commit counts:
  the larger of the two).  Of that, the L2's own cycles of its read and its
  store misses (ReadExReq: a store stream drains through them, and gem5's
  store-miss latency falls by those cycles as the clock rises) run on the
  cluster clock; misses in flight together overlap them too: the on-clock part
  is the L2 cycles times memory time / the misses' summed latency;
- Minor (its waits are its pipeline's idle cycles): the load-miss part of wait_c (its L1s'
  read-miss latency) splits as that latency does between the cluster clock (L2
  hits, the L2's own cycles) and the fixed part.  Its store buffer drains its
  misses in order, so their latency is a floor under its busy time and the
  drains it explains; above the floor only the core time that did not overlap
  them scales (the floor's L2 cycles too).  Other drains stay fixed.  Misses to
  different lines overlap as far as its memory slots allow (the only CPU on its
  memory), and only load waits that leave a slot free hide them (at most the
  epoch's time): cosim/dse/minor_waits.py.
gem5's DRAM access latency per read moved by at most 5 % between the suite's
clock pairs, so the fixed part is not rescaled for DRAM queueing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from cosim.readers.gem5_config import Gem5Config
from cosim.timeline.clusters import ClusterSpec, resolve_cluster

# L2 demand miss latency (sum over misses, ticks) and miss count in both naming generations
MISS_LATENCY = ("demandMissLatency::total", "demand_miss_latency::total")
MISSES = ("demandMisses::total", "demand_misses::total")
# O3 rename stalls for a full load / store queue: one count per blocked cycle
FULL_LSQ = ("rename.LQFullEvents", "rename.SQFullEvents")
# O3 cycles in which commit retired nothing (its ROB head waiting), in both naming generations
NO_COMMIT = ("commit.numCommittedDist::0", "commit.committed_per_cycle::0")
# cycles a cache refused accesses: every MSHR busy, or an MSHR's target list full
L1_BLOCKED = ("blockedCycles::no_mshrs", "blockedCycles::no_targets", "blocked_cycles::no_mshrs", "blocked_cycles::no_targets")
# L1 misses, and those that allocated an MSHR: the rest found their line already being fetched (an MSHR hit)
L1_MSHR_HITS = (("overallMisses::total", "overallMshrMisses::total"), ("overall_misses::total", "overall_mshr_misses::total"))
# the read misses alone (loads and instruction fetches); an out-of-order core does not wait for its stores
_READ = ("ReadReq", "ReadSharedReq", "ReadCleanReq")
READ_MISSES = (
    (tuple(f"{r}.missLatency::total" for r in _READ), tuple(f"{r}.misses::total" for r in _READ)),
    (tuple(f"{r}_miss_latency::total" for r in _READ), tuple(f"{r}_misses::total" for r in _READ)),
)
# the store misses (a line fetched for writing): the core does not wait for each, but its store queue drains through
# them, and each spends the L2's own cycles on the cluster clock as a read miss does
STORE_MISSES = (
    (("ReadExReq.missLatency::total",), ("ReadExReq.misses::total",)),
    (("ReadExReq_miss_latency::total",), ("ReadExReq_misses::total",)),
)
# store-miss lines reaching the L2: fetched for writing (ReadExReq), or written whole with no fetch (InvalidateReq:
# an L1 MSHR whose stores covered the line before it was sent), in both naming generations
STORE_LINES = (
    ("ReadExReq.accesses::total", "InvalidateReq.accesses::total"),
    ("ReadExReq_accesses::total", "InvalidateReq_accesses::total"),
)


def l2_misses(stats: pd.DataFrame, cluster, ticks_per_s: float, *, families: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The cluster's share of its L2s' miss latency [s] and misses per epoch: the given stat ``families``, else read
    misses for O3 and all demand misses otherwise.

    Each L2's latency is split by the CPUs using it: the cluster keeps its own cores' share, so one shared L2 and
    one private L2 per core give the same total for the same misses."""
    out_of_order = all(cluster.kind(c) == "o3" for c in cluster.cores)
    if families is None:
        families = READ_MISSES if out_of_order else tuple(((lat,), (n,)) for lat, n in zip(MISS_LATENCY, MISSES))
    latency, misses = np.zeros(len(stats)), np.zeros(len(stats))
    for l2 in set(cluster.l2.values()):
        users = sum(cluster.l2.get(c) == l2 for c in cluster.cores)  # this cluster's cores below this L2
        for lat_names, miss_names in families:
            found = [f"{l2}.{n}" for n in lat_names if f"{l2}.{n}" in stats]
            if found:
                latency += _row_sum(stats, found) * users / cluster.sharers(l2)
                counted = [f"{l2}.{n}" for n in miss_names if f"{l2}.{n}" in stats]
                misses += np.nan_to_num(_row_sum(stats, counted)) * users / cluster.sharers(l2) if counted else 0.0
                break
    return latency / ticks_per_s, misses


def _row_sum(stats: pd.DataFrame, names: list[str]) -> np.ndarray:
    """The columns ``names`` added per epoch, left to right, as ``stats[names].to_numpy().sum(axis=1)`` adds them (at
    most three columns): without the DataFrame of those columns that pandas builds for a list, which cost more than
    the rest of :func:`l2_misses`."""
    return np.sum([stats[n].to_numpy() for n in names], axis=0)


def store_lines(stats: pd.DataFrame, cluster) -> tuple[np.ndarray, np.ndarray]:
    """The cluster's store-miss lines at its L2s per epoch [count]: fetched for writing, and written whole with no
    fetch; each L2's split by the CPUs using it, as :func:`l2_misses` does (zeros where the stats have neither)."""
    fetched, whole = np.zeros(len(stats)), np.zeros(len(stats))
    for l2 in set(cluster.l2.values()):
        share = sum(cluster.l2.get(c) == l2 for c in cluster.cores) / cluster.sharers(l2)
        for fetch_name, whole_name in STORE_LINES:
            if f"{l2}.{fetch_name}" in stats or f"{l2}.{whole_name}" in stats:
                for out, name in ((fetched, fetch_name), (whole, whole_name)):
                    if f"{l2}.{name}" in stats:
                        out += np.nan_to_num(stats[f"{l2}.{name}"].to_numpy()) * share
                break
    return fetched, whole


# an epoch writes whole lines where at least this share of its store-miss lines went whole (random stores never do;
# gem5's phases and the suite's mixed send a third of a store stream's lines whole at 1000-1800 MHz)
_WHOLE_LINE_EPOCH = 0.1


def store_lines_counted(stats: pd.DataFrame, cluster) -> bool:
    """Whether the stats count the cluster's store-miss lines at its L2s (cheap dumps of an older gem5 side do not;
    gem5 leaves a zero count out of a dump, so a run that never wrote a line whole has the fetched ones alone)."""
    return any(f"{l2}.{name}" in stats for l2 in set(cluster.l2.values()) for pair in STORE_LINES for name in pair)


def whole_line_switch_s(
    stats: pd.DataFrame, cluster, *, fetch_s: float, store_misses: np.ndarray, running: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """How much longer (at a lower clock) and shorter (at a higher one) an O3 cluster's epochs may take where gem5
    changes how many of its store-miss lines it writes whole, skipping their fetch [s] (docs/explanation/whatif.md).

    A line goes whole when the L1's MSHR holds stores covering it before the miss is sent: a race between the core's
    store rate and the memory, won more often at a higher clock (gem5's phases: a third of its store lines at 1000
    and 1400 MHz, nine tenths at 1800).  A store stream fills each MSHR's target list and the L1 refuses accesses
    until the line arrives, so its lines go one after the other for the share of cycles the L1 was blocked: at a
    lower clock each line now written whole may add a fetch (``fetch_s``, the store misses' mean L2 miss latency
    [s]), at a higher one each line that missed (``store_misses``) in an epoch that writes whole lines may save it;
    per CPU that ran (``running``, per epoch)."""
    fetched, whole = store_lines(stats, cluster)
    per_line_s = fetch_s * l1d_blocked_share(stats, cluster) / running
    writes_whole = (whole > 0) & (whole >= _WHOLE_LINE_EPOCH * (whole + fetched))
    return whole * per_line_s, np.where(writes_whole, store_misses, 0.0) * per_line_s


def l1d_blocked_share(stats: pd.DataFrame, cluster) -> np.ndarray:
    """The share of the cluster's CPU cycles its L1 data caches refused accesses (every MSHR busy, or an MSHR's
    target list full), per epoch [0-1] (0 where the stats do not say)."""
    blocked, cycles = np.zeros(len(stats)), np.zeros(len(stats))
    for cpu in cluster.cpus:
        blocked += _l1d_blocked_cycles(stats, cluster.l1d.get(cpu))
        if f"{cpu}.numCycles" in stats:
            cycles += np.nan_to_num(stats[f"{cpu}.numCycles"].to_numpy())
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.clip(np.where(cycles > 0, blocked / cycles, 0.0), 0.0, 1.0)


def l1_miss_latency_s(stats: pd.DataFrame, cluster, ticks_per_s: float) -> np.ndarray:
    """The cluster's L1 read-miss latency per epoch [s], summed over its CPUs: the data caches' load misses and the
    instruction caches' misses."""
    total = np.zeros(len(stats))
    names = [(l1, MISS_LATENCY) for l1 in set(cluster.l1i.values())]
    names += [(l1, ("ReadReq.missLatency::total", "ReadReq_miss_latency::total")) for l1 in set(cluster.l1d.values())]
    for l1, candidates in names:
        found = next((f"{l1}.{n}" for n in candidates if f"{l1}.{n}" in stats), None)
        if found:
            total += np.nan_to_num(stats[found].to_numpy())
    return total / ticks_per_s


def l1d_mshr_hits(stats: pd.DataFrame, cluster) -> np.ndarray:
    """Accesses to the cluster's L1 data caches that found their line already being fetched, per epoch [count]:
    misses less MSHR misses (0 where the stats have neither)."""
    total = np.zeros(len(stats))
    for l1 in set(cluster.l1d.values()):
        for misses, allocated in L1_MSHR_HITS:
            if f"{l1}.{misses}" in stats and f"{l1}.{allocated}" in stats:
                total += np.nan_to_num(stats[f"{l1}.{misses}"].to_numpy() - stats[f"{l1}.{allocated}"].to_numpy())
                break
    return np.maximum(total, 0.0)


def o3_store_lines_in_flight(stats: pd.DataFrame, config: Gem5Config, cluster, store_misses: np.ndarray) -> np.ndarray:
    """How many store-miss lines an O3 CPU of the cluster has in flight at once, per epoch: its store queue writes
    back in order, so it holds ``SQEntries / (1 + h)`` lines, h the stores that found their line already being
    fetched (L1D MSHR hits) per store miss; at least 1, at most its L1D's MSHRs (gem5's suite on se.py: stream
    h = 8.4, 32 entries: 3.4 lines; ptrchase's random stores, h = 1.2: the 4 MSHRs)."""
    cpu = cluster.cores[0]
    try:
        entries = float(config.objects.get(cpu, {}).get("SQEntries", 1))
        mshrs = float(config.objects.get(cluster.l1d.get(cpu, ""), {}).get("mshrs", 1))
    except ValueError:
        entries, mshrs = 1.0, 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        followers = np.where(store_misses > 0, l1d_mshr_hits(stats, cluster) / store_misses, 0.0)
    return np.clip(entries / (1.0 + followers), 1.0, max(mshrs, 1.0))


def cpus_that_ran(stats: pd.DataFrame, cpus: Sequence[str]) -> int:
    """How many of ``cpus`` had active cycles (``numCycles - idleCycles``) above 1 % of their cycles over the run."""
    ran = 0
    for cpu in cpus:
        if f"{cpu}.numCycles" in stats:
            cycles = float(np.nansum(stats[f"{cpu}.numCycles"].to_numpy()))
            idle = float(np.nansum(stats[f"{cpu}.idleCycles"].to_numpy())) if f"{cpu}.idleCycles" in stats else 0.0
            ran += cycles - idle > 0.01 * cycles
    return ran


def memory_unread(stats: pd.DataFrame, cluster) -> bool:
    """Whether the stats were cut to fewer than the what-if reads of the cluster's memory time (a study recorded
    for an older cosim: tests/data/explore-grid.tar.xz): an O3 CPU's commit counts (gem5 prints every bucket of
    the distribution), or the miss latency of an L1 data cache whose misses are there."""
    if all(cluster.kind(c) == "o3" for c in cluster.cores):
        return no_commit_cycles(stats, cluster) is None
    latency = ("ReadReq.missLatency::total", "ReadReq_miss_latency::total", *MISS_LATENCY)
    misses = ("overallMisses::total", "overall_misses::total")
    return any(
        any(f"{l1}.{n}" in stats for n in misses) and not any(f"{l1}.{n}" in stats for n in latency) for l1 in set(cluster.l1d.values())
    )


def stall_cycles(stats: pd.DataFrame, cluster) -> np.ndarray:
    """Per CPU, the larger of the cycles its L1D was blocked (no free MSHR or target) and the cycles it could not
    rename for a full load or store queue; summed over the cluster's CPUs."""
    total = np.zeros(len(stats))
    for cpu in cluster.cpus:
        lsq = sum(np.nan_to_num(stats[f"{cpu}.{n}"].to_numpy()) for n in FULL_LSQ if f"{cpu}.{n}" in stats)
        total += np.maximum(lsq, _l1d_blocked_cycles(stats, cluster.l1d.get(cpu)))
    return total


def _l1d_blocked_cycles(stats: pd.DataFrame, l1d: str | None):
    """Cycles the L1 data cache ``l1d`` refused accesses (no free MSHR or target), per epoch; 0 where not in the stats."""
    return sum(np.nan_to_num(stats[f"{l1d}.{n}"].to_numpy()) for n in L1_BLOCKED if f"{l1d}.{n}" in stats)


def no_commit_cycles(stats: pd.DataFrame, cluster) -> np.ndarray | None:
    """Cycles in which the cluster's O3 CPUs committed nothing, summed over them; None unless every CPU has them."""
    total = np.zeros(len(stats))
    for cpu in cluster.cpus:
        found = next((f"{cpu}.{n}" for n in NO_COMMIT if f"{cpu}.{n}" in stats), None)
        if found is None:
            return None
        total += np.nan_to_num(stats[found].to_numpy())
    return total


def l2_miss_cycles(config: Gem5Config, cluster) -> float:
    """Cycles of the cluster's own clock in each L2 miss: the L2's tag lookup and response latency, and one cycle
    each way on the L2 bus (gem5's L2XBar: frontend and response latency 1).  gem5 counts them in the L2's miss
    latency; the rest (memory bus, DRAM) runs on the system's and the DRAM's clocks."""
    cycles = []
    for l2 in set(cluster.l2.values()):
        params = config.objects.get(l2, {})
        try:
            cycles.append(float(params.get("tag_latency", 0)) + float(params.get("response_latency", 0)) + 2.0)
        except ValueError:
            cycles.append(0.0)
    return float(np.mean(cycles)) if cycles else 0.0


def dram_objects(config: Gem5Config) -> list[str]:
    """DRAM channels: v21+ DRAMInterface objects (system.mem_ctrls.dram), or older DRAMCtrl controllers."""
    return [path for path, params in config.objects.items() if params.get("type") in ("DRAMInterface", "DRAMCtrl")]


def whatif_stats(config: Gem5Config, specs: Sequence[ClusterSpec]) -> set[str]:
    """Every full stat name :func:`recorded_run` may read (for a filtered, much faster parse)."""
    from cosim.counters.pmc import stats_for

    wanted: set[str] = set()
    for spec in specs:
        cluster = resolve_cluster(config, spec, config.ticks_per_s)
        wanted |= stats_for(cluster, spec.model.events)
        wanted |= {f"{cpu}.{name}" for cpu in cluster.cpus for name in ("numCycles", "idleCycles", *FULL_LSQ, *NO_COMMIT)}
        names = [*MISS_LATENCY, *MISSES, *(n for family in READ_MISSES + STORE_MISSES for names in family for n in names)]
        names += [n for pair in STORE_LINES for n in pair]
        wanted |= {f"{l2}.{name}" for l2 in cluster.l2.values() for name in names}
        wanted |= {f"{l1}.{name}" for l1 in cluster.l1i.values() for name in MISS_LATENCY}
        wanted |= {f"{l1}.{name}" for l1 in cluster.l1d.values() for name in L1_BLOCKED}
        wanted |= {f"{l1}.{name}" for l1 in cluster.l1d.values() for pair in L1_MSHR_HITS for name in pair}
        wanted |= {f"{l1}.{name}" for l1 in cluster.l1d.values() for name in ("ReadReq.missLatency::total", "ReadReq_miss_latency::total")}
    wanted |= {f"{d}.busUtil" for d in dram_objects(config)}
    return wanted
