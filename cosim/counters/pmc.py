"""gem5 statistics -> the ARM PMU event rates the Walker models were trained on.

The stat names for each PMU event live in data files, one per gem5 naming
generation (``maps/gem5-*.toml``).  This module resolves them for one cluster and
turns counts into the models' input: per-core events summed over the cluster's
CPUs, divided by the cores the model was trained with (a quad-core cluster has
4), per second of simulated time, divided by the cluster frequency in MHz.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np

from cosim.errors import CosimError
from cosim.readers.gem5_config import Cluster

if TYPE_CHECKING:
    from cosim.readers.stats_table import StatsLike

GENERATIONS = {"pre-v20.1": "gem5-pre-v20.1.toml", "v20.1+": "gem5-v20.1plus.toml"}
SCOPES = ("cpu", "l1d", "l1i", "l2", "ruby")
_CACHE_SCOPES = frozenset({"l1d", "l1i", "l2", "ruby"})
#: scopes whose objects every CPU shares: their counts are split evenly between the CPUs that share them
_SHARED = frozenset({"l2", "ruby"})
# Where a cache is looked for when no config says where it is.
_FALLBACK = {"l1d": ("{cpu}.dcache",), "l1i": ("{cpu}.icache",), "l2": ("{cluster}.l2", "{cpu}.l2cache", "system.l2c", "system.l2")}


@dataclass(frozen=True)
class Term:
    sign: float
    scope: str  # one of SCOPES
    stat: str  # stat name relative to the scope's object


@dataclass(frozen=True)
class Source:
    """One way to count an event: a signed sum of stats."""

    expr: str
    terms: tuple[Term, ...]
    require_all: bool
    substitute: str | None  # why this is not the exact PMU event; None when it is
    cpus: tuple[str, ...] = ()  # CPU kinds (o3, minor, simple, ...) it is for; () means any
    # a residency in ticks (``cpu.power_state.pwrStateResidencyTicks::ON``) that bounds the count: the cycles of it
    # at the epoch's clock; the source needs it in the run
    clocked: Term | None = None
    # "ruby": counts Ruby's caches and protocol controllers, for CPUs on Ruby sequencers only; a source of cache stats
    # without it counts gem5's classic caches; a source of CPU stats alone is for both
    memory: str = "classic"

    def applies_to(self, kind: str, ruby: bool = False) -> bool:
        if ruby != (self.memory == "ruby") and (self.memory == "ruby" or any(t.scope in _CACHE_SCOPES for t in self.terms)):
            return False
        return not self.cpus or kind in self.cpus


@dataclass(frozen=True)
class EventMap:
    generation: str
    names: dict[str, str]  # "0x11" -> "CPU_CYCLES"
    sources: dict[str, tuple[Source, ...]]


@dataclass(frozen=True)
class EventRates:
    """Model inputs for one cluster, one row per epoch."""

    eph: dict[str, np.ndarray]  # event -> per epoch: events/s per model core / f [MHz]
    chosen: dict[str, dict[str, Source]]  # event -> CPU path -> the source used for that CPU
    # event -> CPUs whose stats for it gem5 printed in no dump although its objects exist: counted 0 (gem5 leaves out
    # what it never counted: a CPU that never ran, a cache that never missed)
    absent: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def missing(self) -> set[str]:
        """Events gem5 cannot count at all: every CPU's source is the constant 0, so the model's term for it is missing."""
        return {event for event, by_cpu in self.chosen.items() if by_cpu and all(not s.terms for s in by_cpu.values())}

    @property
    def substitutes(self) -> dict[str, str]:
        """Event -> why its input is a substitute (for some CPU), for every substituted event."""
        out = {}
        for event, by_cpu in self.chosen.items():
            reasons = list(dict.fromkeys(s.substitute for s in by_cpu.values() if s.substitute))
            if reasons:
                out[event] = " / ".join(reasons)
        return out


@cache
def load_event_map(generation: str) -> EventMap:
    """The stat-to-event map for a gem5 naming generation (``"pre-v20.1"`` or ``"v20.1+"``)."""
    if generation not in GENERATIONS:
        raise CosimError(f"unknown gem5 naming generation '{generation}'; known: {', '.join(GENERATIONS)}")
    text = resources.files("cosim.counters.maps").joinpath(GENERATIONS[generation]).read_text()
    data = tomllib.loads(text)
    names, sources = {}, {}
    for event, spec in data["events"].items():
        names[event] = spec["name"]
        sources[event] = tuple(_source(s) for s in spec["sources"])
    return EventMap(generation=data["generation"], names=names, sources=sources)


def _source(spec: dict) -> Source:
    expr = spec["expr"]
    terms = []
    sign = 1.0
    for token in expr.split():
        if token in "+-":
            sign = 1.0 if token == "+" else -1.0
        elif token != "0":
            scope, _, stat = token.partition(".")
            if scope not in SCOPES or not stat:
                raise ValueError(f"bad term '{token}' in '{expr}'")
            terms.append(Term(sign, scope, stat))
    kinds = spec.get("cpus", [])
    clocked = None
    if "clocked" in spec:
        scope, _, stat = spec["clocked"].partition(".")
        if scope != "cpu" or not stat:
            raise ValueError(f"bad clocked residency '{spec['clocked']}' in '{expr}'")
        clocked = Term(1.0, scope, stat)
    memory = spec.get("memory", "classic")
    if memory not in ("classic", "ruby") or (memory == "classic" and any(t.scope == "ruby" for t in terms)):
        raise ValueError(f"bad memory '{memory}' for '{expr}'")
    return Source(expr, tuple(terms), spec.get("require", "all") == "all", spec.get("substitute"), tuple(kinds), clocked, memory)


def _objects(cluster: Cluster, cpu: str, scope: str) -> tuple[str, ...]:
    """Candidate object paths for ``scope`` of ``cpu``: the config's answer, else naming conventions.

    A switched-out CPU uses its core's caches.  Where the config names the core's
    L1D but finds no cache below it, the system has no L2 and none is guessed.
    """
    if scope == "cpu":
        return (cpu,)
    if scope == "ruby":
        return (cluster.ruby_system,) if cluster.ruby_system else ()
    core = cluster.core_of(cpu)
    if scope == "l2" and cluster.ruby:
        return cluster.ruby_l2  # every bank: each holds part of the addresses, all of them one L2
    if scope in cluster.no_cache.get(core, ()) or (scope == "l2" and "l1d" in cluster.no_cache.get(core, ())):
        return ()  # the config shows no such cache
    known = {"l1d": cluster.l1d, "l1i": cluster.l1i, "l2": cluster.l2}[scope].get(core)
    if known:
        return (known,)
    if scope == "l2" and core in cluster.l1d:
        return ()
    prefix = core.rsplit(".", 1)[0]
    return tuple(p.format(cpu=core, cluster=prefix) for p in _FALLBACK[scope])


def unpadded(path: str) -> str:
    """gem5 zero-pads vector indices in config paths (cpus00) but not in stat names (cpus0)."""
    return re.sub(r"(?<=[A-Za-z_])0+(?=\d)", "", path)


def _names(obj: str, stat: str) -> tuple[str, ...]:
    name = f"{obj}.{stat}"
    short = unpadded(obj)
    names = (name,) if short == obj else (name, f"{short}.{stat}")
    # a Ruby protocol event over several controllers is a vector: only its ::total is a plain number (one controller
    # prints the plain name)
    return (*names, *(f"{n}::total" for n in names)) if "_Controller." in stat else names


def stats_for(cluster: Cluster, events: Iterable[str], generations: Sequence[str] = tuple(GENERATIONS)) -> set[str]:
    """Every full stat name that could feed ``events`` for ``cluster`` (for a filtered parse)."""
    wanted = {f"{cluster.clk_domain}.clock"}
    for gen in generations:
        emap = load_event_map(gen)
        for event in events:
            for source in emap.sources.get(event, ()):
                for term in source.terms + ((source.clocked,) if source.clocked else ()):
                    for cpu in cluster.cpus:
                        for obj in _objects(cluster, cpu, term.scope):
                            wanted.update(_names(obj, term.stat))
    return wanted


def event_rates(
    stats: StatsLike,
    cluster: Cluster,
    events: Iterable[str],
    *,
    generation: str,
    cores_per_cluster: int,
    freq_mhz: np.ndarray,
) -> EventRates:
    """Per-epoch model inputs ``E`` for ``events`` on ``cluster``.

    Parameters
    ----------
    stats
        :func:`cosim.read_stats` output, or the :class:`StatsTable` of ``read_stats_table`` (needs ``duration_s``).
    cores_per_cluster
        Cores of the cluster the model was trained on; the per-core sum is divided by it.
    freq_mhz
        Cluster frequency per epoch [MHz].

    An existing CPU or cache whose stats gem5 never printed counts 0 (:attr:`EventRates.absent`); a cache the
    config shows does not exist makes the event a missing term for that CPU (the constant 0, with a substitute).

    Raises
    ------
    CosimError
        A CPU with no statistic at all in the stats, a Ruby cluster, or an event whose stats are absent where the
        config does not say which caches the CPU has.
    """
    emap = load_event_map(generation)
    duration_s = np.asarray(stats["duration_s"])
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = 1.0 / (cores_per_cluster * duration_s * np.asarray(freq_mhz, dtype=float))
    columns = set(stats.columns)
    with np.errstate(divide="ignore", invalid="ignore"):
        period_ticks = cluster.ticks_per_s / (np.asarray(freq_mhz, dtype=float) * 1e6)  # the clock's period per epoch
    eph: dict[str, np.ndarray] = {}
    chosen: dict[str, dict[str, Any]] = {}  # event -> CPU -> the source that counted it
    absent: dict[str, list[str]] = {}
    for event in events:
        if event not in emap.sources:
            raise CosimError(f"event {event} has no gem5 mapping in the {generation} map; known: {', '.join(sorted(emap.sources))}")
        total = np.zeros(len(stats))
        counted: set[tuple[str, str]] = set()  # (column, core): a core's caches count once, however many CPUs stand in for it
        chosen[event] = {}
        for cpu in cluster.cpus:
            for source in emap.sources[event]:
                if not source.applies_to(cluster.kind(cpu), bool(cluster.ruby)):
                    continue
                found = _count(stats, columns, cluster, cpu, source, counted, period_ticks)
                if found is not None:
                    total += found
                    chosen[event][cpu] = source
                    break
            else:
                if cpu in cluster.partner:
                    continue  # a stand-in that printed none of these stats never ran
                source = _unprinted(stats, columns, cluster, cpu, event, emap)
                chosen[event][cpu] = source
                if source.terms:
                    absent.setdefault(event, []).append(cpu)
        eph[event] = total * scale
    return EventRates(eph=eph, chosen=chosen, absent={e: tuple(c) for e, c in absent.items()})


def _unprinted(stats: StatsLike, columns: set[str], cluster: Cluster, cpu: str, event: str, emap: EventMap) -> Source:
    """The source that counts ``event`` for ``cpu`` where gem5 printed none of its stats: the first whose objects the
    config shows exist (gem5 leaves out stats it never counted, so they are 0), else the constant 0 of a missing
    term where the config shows the cache does not exist.  Refuses where neither holds: the stats do not belong
    to the config's CPU, or the config does not say where its caches are and no conventional name has stats."""
    path = stats.attrs["gem5"].path if "gem5" in stats.attrs else "stats"
    kind = cluster.kind(cpu)
    prefixes = tuple(f"{name}." for name in dict.fromkeys((cpu, unpadded(cpu))))
    if not any(c.startswith(prefixes) for c in columns):
        raise CosimError(
            f"{path}: the stats have no statistic of CPU {cpu} ({cluster.cpu_types.get(cpu) or 'unknown type'}), which the "
            "config names; are the stats and the config from the same run? Give this run's config with --config"
        )
    # a CPU that counted no cycle never ran: all its counters are 0; one that ran always prints its own counters, but
    # a cache of it that never missed has no miss stats
    ran = any(np.nansum(np.asarray(stats[n], dtype=float)) for n in _names(cpu, "numCycles") if n in columns)
    applicable = [s for s in emap.sources[event] if s.applies_to(kind, bool(cluster.ruby))]
    for source in applicable:
        if source.terms and all(_known(cluster, cpu, t.scope) and not (ran and t.scope == "cpu") for t in source.terms):
            return source
    # a Ruby L2 or protocol cosim does not find (CHI, MI_example) is not mapped, not known to be absent: refused below
    unmapped = _SHARED if cluster.ruby else frozenset()
    gone = sorted({t.scope for s in applicable for t in s.terms if not _objects(cluster, cpu, t.scope) and t.scope not in unmapped})
    if gone:
        names = {"l1d": "L1 data cache", "l1i": "L1 instruction cache", "l2": "cache below its L1"}
        return Source("0", (), True, f"{cpu} has no {' and no '.join(names[g] for g in gone)} in this system (config)", ())
    tried = "; ".join(s.expr for s in applicable)
    why = (
        "although it ran; are the stats from a gem5 whose names the map covers?"
        if ran
        else "and the config does not say which caches it has; give the run's config.ini or config.json with --config"
    )
    if cluster.ruby and ran:
        why = (
            f"although it ran on Ruby ({cluster.ruby}), whose protocol's stats these are not; price it with a model whose "
            "events the map counts for Ruby (--model; docs/explanation/ruby.md lists them)"
        )
    raise CosimError(
        f"{path}: no stats for event {event} ({emap.names[event]}) of CPU {cpu} in cluster '{cluster.name}' (tried: {tried}), {why}"
    )


def _known(cluster: Cluster, cpu: str, scope: str) -> bool:
    """Whether the config shows ``cpu`` has the object of ``scope`` (the CPU itself, or its cache)."""
    if scope == "cpu":
        return True
    if scope == "ruby" or (scope == "l2" and cluster.ruby):
        return bool(_objects(cluster, cpu, scope))
    core = cluster.core_of(cpu)
    return core in {"l1d": cluster.l1d, "l1i": cluster.l1i, "l2": cluster.l2}[scope]


def _count(
    stats: StatsLike,
    columns: set[str],
    cluster: Cluster,
    cpu: str,
    source: Source,
    counted: set[tuple[str, str]],
    period_ticks: np.ndarray,
) -> np.ndarray | None:
    """One CPU's count per epoch (its share of a shared L2), or None if the source's stats are absent."""
    total = np.zeros(len(stats))
    if not source.terms:  # the constant 0 of an event gem5 cannot count
        return total
    bound = None
    if source.clocked is not None:
        residency = next((n for n in _names(cpu, source.clocked.stat) if n in columns), None)
        if residency is None:
            return None
        bound = np.asarray(stats[residency], dtype=float) / period_ticks  # the residency's cycles at the epoch's clock
    core = cluster.core_of(cpu)
    found_any = False
    taken: set[tuple[str, str]] = set()  # into ``counted`` only if the source counts: a later term may be absent
    for term in source.terms:
        objects = _objects(cluster, cpu, term.scope)
        if term.scope == "l2" and cluster.ruby:  # Ruby's L2 banks add up; a classic scope's candidates are alternatives
            hits = [(obj, n) for obj in objects if (n := next((n for n in _names(obj, term.stat) if n in columns), None))]
        else:
            hits = [hit] if (hit := next(((o, n) for o in objects for n in _names(o, term.stat) if n in columns), None)) else []
        if not hits:
            if source.require_all:
                return None
            continue
        found_any = True
        for obj, column in hits:
            if (column, core) in counted or (column, core) in taken:
                continue
            taken.add((column, core))
            share = 1.0 / cluster.sharers(obj) if term.scope in _SHARED else 1.0
            total += term.sign * share * _nonnegative(stats, column)
    if not found_any:
        return None
    counted |= taken
    return np.minimum(total, bound) if bound is not None else total


def _nonnegative(stats: StatsLike, column: str) -> np.ndarray:
    """A counter's values per epoch; a negative count (a damaged file, a wrapped counter) is refused, never priced."""
    values = np.asarray(stats[column], dtype=float)
    bad = np.flatnonzero(values < 0)
    if bad.size:
        meta = stats.attrs.get("gem5")
        path = getattr(meta, "path", None) or "stats.txt"
        dumps = np.asarray(stats["epoch"]) if "epoch" in set(stats.columns) else np.arange(len(values))
        raise CosimError(
            f"{path}: dump {int(dumps[bad[0]])}: {column} is {values[bad[0]]:g}, and a count cannot be negative "
            f"({bad.size} of {len(values)} dump(s) are); the file is damaged or the counter wrapped: run gem5 again for it"
        )
    return values
