"""Per-epoch stats dumps that cost gem5 little: only the statistics cosim reads, through gem5's own text writer.

A full gem5 v24 text dump walks every statistic from Python (``m5.stats.prepare`` and the visitor both
visit all of them, about 6,600 in a 2-CPU big.LITTLE system), which costs about 80 ms of CPU time per
dump whatever the epoch.  :func:`install` replaces ``m5.stats.dump`` (gem5's periodic dump event and
its exit dump call it by name) with one that hands only the chosen statistics to the same C++ text
writer.  The lines are therefore those a full dump prints for those statistics, in the same file
(``--stats-file``, gzip included), so every reader of ``stats.txt`` reads them unchanged.
``m5.stats.reset`` is untouched: every statistic, dumped or not, is still reset after each dump.

Which statistics (:func:`wanted_stats`): the simulation totals (Root's own statistics), each
cluster's clock and voltage domain, for each CPU every statistic any source of the counter map names
for the CPU and its caches, the CPU's power model and power state, the cycle and op-class counts
and the cache-miss latencies that ``cosim whatif``/``roofline`` read, and the memory controllers'
traffic and busy statistics.  Distributions are dumped only where named (an O3 CPU's commits per cycle, whose
zero bucket the what-if reads); all others are skipped.
"""

from __future__ import annotations

import re
import warnings

# the counter map's own names plus these, per object kind (``cosim whatif`` and ``cosim roofline`` read them)
CPU_EXTRA = (
    "numCycles",
    "idleCycles",
    "num_cycles",
    "idle_cycles",
    "commitStats0.committedInstType",
    "commit.committedInstType_0",
    "committedInstType_0",
    "op_class_0",
    "op_class",
    "statIssuedInstType_0",
    "iq.FU_type_0",
    "rename.LQFullEvents",  # whatif: an O3 core's memory-level parallelism (load/store queue full)
    "rename.SQFullEvents",
    "commit.numCommittedDist",  # whatif: an O3 core's cycles that committed nothing (its zero bucket)
    "commit.committed_per_cycle",
)
CPU_TREES = ("power_model", "power_state")  # every statistic under these (online power, power-state residency)
CACHE_EXTRA = (
    "demandMissLatency",
    "demand_miss_latency",
    "ReadReq.missLatency",
    "ReadSharedReq.missLatency",
    "ReadCleanReq.missLatency",
    "ReadExReq.missLatency",  # whatif: an O3 core's store misses (their L2 cycles run on the cluster clock)
    "ReadReq_miss_latency",
    "ReadSharedReq_miss_latency",
    "ReadCleanReq_miss_latency",
    "ReadExReq_miss_latency",
    "demandMisses",
    "demand_misses",
    "ReadReq.misses",
    "ReadSharedReq.misses",
    "ReadCleanReq.misses",
    "ReadExReq.misses",
    "ReadReq_misses",
    "ReadSharedReq_misses",
    "ReadCleanReq_misses",
    "ReadExReq_misses",
    "blockedCycles",  # whatif: cycles the L1D refused accesses with every MSHR busy
    "blocked_cycles",
    "overallMisses",  # whatif: L1D misses less MSHR misses, the accesses that hold a Minor CPU's memory slot waiting
    "overallMshrMisses",
    "overall_misses",
    "overall_mshr_misses",
    "ReadExReq.accesses",  # whatif: an O3 core's store lines fetched, and written whole with no fetch (the interval)
    "InvalidateReq.accesses",
    "ReadExReq_accesses",
    "InvalidateReq_accesses",
)
MEMORY_STATS = ("busUtil", "totQLat", "totMemAccLat", "bytesRead", "bytesWritten", "bytes_read", "bytes_written")
DISPLAY = 0x0002  # gem5 statistics::display: a statistic without it is never printed
_SCOPES = ("cpu", "l1d", "l1i", "l2")


def _unpadded(path: str) -> str:
    """gem5 zero-pads vector indices in object paths (cpus00) but not in stat names (cpus0)."""
    return re.sub(r"(?<=[A-Za-z_])0+(?=\d)", "", path)


def wanted_stats(clusters: dict, emap: dict, memories: list[str]) -> tuple[set[str], set[str]]:
    """``(bases, trees)``: stat names up to any ``::`` (``system.c.cpus.commitStats0.numInsts``), and object paths
    all of whose statistics are wanted.  ``""`` in trees is Root's own statistics (simSeconds, simTicks, ...).

    ``clusters`` is the sidecar's ``{name: {"cpus", "spare_cpus", "l1d", "l1i", "l2", "clk_domain", "voltage_domain"}}``;
    ``emap`` a counter map (every source of every event is kept, so offline cosim picks the source it
    would pick from a full dump); ``memories`` the memory controllers' and interfaces' paths.
    """
    stats_by_scope: dict[str, set[str]] = {scope: set() for scope in _SCOPES}
    for event in emap["events"].values():
        for source in event["sources"]:
            for token in source["expr"].split():
                scope, dot, stat = token.partition(".")
                if dot and scope in stats_by_scope:
                    stats_by_scope[scope].add(stat.partition("::")[0])
    stats_by_scope["cpu"].update(CPU_EXTRA)
    for scope in ("l1d", "l1i", "l2"):
        stats_by_scope[scope].update(CACHE_EXTRA)
    bases: set[str] = set()
    trees = {""}
    for cluster in clusters.values():
        trees.update(_unpadded(cluster[k]) for k in ("clk_domain", "voltage_domain") if cluster.get(k))
        for cpu in [*cluster["cpus"], *cluster.get("spare_cpus", [])]:
            objects = {"cpu": cpu, **{scope: cluster.get(scope, {}).get(cpu) for scope in ("l1d", "l1i", "l2")}}
            for scope, obj in objects.items():
                if obj:
                    bases.update(f"{_unpadded(obj)}.{stat}" for stat in stats_by_scope[scope])
            trees.update(f"{_unpadded(cpu)}.{sub}" for sub in CPU_TREES)
    for memory in memories:
        bases.update(f"{_unpadded(memory)}.{stat}" for stat in MEMORY_STATS)
    return bases, trees


def select(root, bases: set[str], trees: set[str], legacy=()) -> tuple[list[tuple[list[str], list]], list]:
    """``([(group path, [stat infos])], inputs)``: the wanted statistics under ``root`` (gem5's stats group tree), then
    of ``legacy`` (``m5.stats.stats_list``: statistics in no group, named in full, such as a MinorCPU's
    idleCycles), in the order a full dump prints them; and the statistics the wanted formulas may read, to
    prepare() before each dump.  Only groups on the way to a wanted statistic are visited."""
    import _m5.stats

    skip = tuple(getattr(_m5.stats, k) for k in ("DistInfo", "SparseHistInfo") if hasattr(_m5.stats, k))
    vector2d = getattr(_m5.stats, "Vector2dInfo", ())
    formula = getattr(_m5.stats, "FormulaInfo", ())
    # a Vector2d prints as name_X::Y, so the map's 'statIssuedInstType_0' is the statistic 'statIssuedInstType'
    bases_2d = {m.group(1) for b in bases if (m := re.fullmatch(r"(.+)_\w+", b))}
    prefixes = {p for name in bases | trees for p in _prefixes(name)}
    out: list[tuple[list[str], list]] = []
    inputs: list = []  # statistics to prepare() before each dump, though not dumped

    def walk(path: list[str], group) -> None:
        dotted = ".".join(path)
        whole = (dotted in trees and dotted != "") or any(dotted.startswith(t + ".") for t in trees if t)
        keep = []
        stats = group.getStats()
        for info in stats:
            name = f"{dotted}.{info.name}" if dotted else info.name
            if not info.flags & DISPLAY or (isinstance(info, skip) and name not in bases):
                continue
            if whole or dotted == "" or name in bases or (isinstance(info, vector2d) and name in bases_2d):
                keep.append(info)
        if keep:
            out.append((path, keep))
            if any(isinstance(info, formula) for info in keep):
                # a formula reads its group's other statistics, and an Average among them is only brought up to
                # date by prepare() (a simple CPU's numBusyCycles = notIdleFraction * numCycles)
                inputs.extend(i for i in stats if not isinstance(i, (formula, *skip)) and i not in keep)
        for child, sub in group.getStatGroups().items():
            below = f"{dotted}.{child}" if dotted else child
            if whole or below in prefixes:
                walk([*path, child], sub)

    walk([], root)
    kept = [info for info in legacy if info.flags & DISPLAY and not isinstance(info, skip) and info.name in bases]
    if kept:
        out.append(([], kept))
    return out, inputs


def _prefixes(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))] + [name]


class CheapDump:
    """Stands in for ``m5.stats.dump``: the selected statistics to every text output gem5 writes."""

    def __init__(self, selected: list[tuple[list[str], list]], inputs: list, original) -> None:
        self.selected = selected
        self.original = original
        self.last_tick = -1
        self.count = sum(len(infos) for _, infos in selected)
        # prepare() brings a statistic up to date for printing (a Vector2d's values, an Average's running sum), as
        # m5.stats.prepare does for every statistic; a Scalar's or Formula's is a no-op
        self.prepare = [info for _, infos in selected for info in infos] + inputs

    def __call__(self, roots=None) -> None:
        import _m5.stats
        import m5
        from m5.objects import Root

        if roots is not None:  # a config's own dump of chosen subtrees: gem5's
            return self.original(roots=roots)
        now = m5.curTick()
        if now == self.last_tick:  # as gem5: one global dump per tick (the exit dump after a periodic one)
            return None
        self.last_tick = now
        _m5.stats.processDumpQueue()
        Root.getInstance().preDumpStats()  # C++: objects bring their statistics up to date (power state, DRAM)
        for info in self.prepare:
            info.prepare()
        for output in m5.stats.outputList:
            if not hasattr(output, "beginGroup"):  # a Python visitor (--stats-file=json://...) gets every statistic
                m5.stats.prepare()
                output.dump(Root.getInstance())
                continue
            if output.valid():
                output.begin()
                for path, infos in self.selected:
                    for part in path:
                        output.beginGroup(part)
                    for info in infos:
                        info.visit(output)
                    for _ in path:
                        output.endGroup()
                output.end()
        return None


def install(bases: set[str], trees: set[str]) -> CheapDump | None:
    """Replace ``m5.stats.dump`` with a :class:`CheapDump` of the wanted statistics (call after m5.instantiate()).

    None, with a warning, where this gem5 lacks what it needs (then every dump stays a full one).
    """
    import m5
    from m5.objects import Root

    try:
        original = getattr(m5.stats, "_cosim_full_dump", m5.stats.dump)
        dumper = CheapDump(*select(Root.getInstance(), bases, trees, m5.stats.stats_list), original)
    except (ImportError, AttributeError, TypeError) as err:
        warnings.warn(f"cosim: this gem5 cannot dump chosen statistics ({err}); every epoch is a full stats dump", stacklevel=3)
        return None
    m5.stats._cosim_full_dump = original
    m5.stats.dump = dumper
    return dumper
