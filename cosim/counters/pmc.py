"""gem5 statistics -> the ARM PMU event rates the Walker models were trained on.

The stat names for each PMU event live in data files, one per gem5 naming
generation (``maps/gem5-*.toml``).  This module resolves them for one cluster and
turns counts into the models' input: per-core events summed over the cluster's
CPUs, divided by the cores the model was trained with (a quad-core cluster has
4), per second of simulated time, divided by the cluster frequency in MHz.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.readers.gem5_config import Cluster

GENERATIONS = {"pre-v20.1": "gem5-pre-v20.1.toml", "v20.1+": "gem5-v20.1plus.toml"}
SCOPES = ("cpu", "l1d", "l1i", "l2")
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


@dataclass(frozen=True)
class EventMap:
    generation: str
    names: dict[str, str]  # "0x11" -> "CPU_CYCLES"
    sources: dict[str, tuple[Source, ...]]


@dataclass(frozen=True)
class EventRates:
    """Model inputs for one cluster, one row per epoch."""

    eph: pd.DataFrame  # column per event: events/s per model core / f [MHz]
    chosen: dict[str, Source]  # the source used for each event

    @property
    def substitutes(self) -> dict[str, str]:
        """Event -> why its input is a substitute, for every substituted event."""
        return {e: s.substitute for e, s in self.chosen.items() if s.substitute}


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
    return Source(expr, tuple(terms), spec.get("require", "all") == "all", spec.get("substitute"))


def _objects(cluster: Cluster, cpu: str, scope: str) -> tuple[str, ...]:
    """Candidate object paths for ``scope`` of ``cpu``: the config's answer, else naming conventions."""
    if scope == "cpu":
        return (cpu,)
    known = {"l1d": cluster.l1d, "l1i": cluster.l1i, "l2": cluster.l2}[scope].get(cpu)
    if known:
        return (known,)
    prefix = cpu.rsplit(".", 1)[0]
    return tuple(p.format(cpu=cpu, cluster=prefix) for p in _FALLBACK[scope])


def stats_for(cluster: Cluster, events: Iterable[str], generations: Sequence[str] = tuple(GENERATIONS)) -> set[str]:
    """Every full stat name that could feed ``events`` for ``cluster`` (for a filtered parse)."""
    wanted = {f"{cluster.clk_domain}.clock"}
    for gen in generations:
        emap = load_event_map(gen)
        for event in events:
            for source in emap.sources.get(event, ()):
                for term in source.terms:
                    for cpu in cluster.cpus:
                        wanted.update(f"{obj}.{term.stat}" for obj in _objects(cluster, cpu, term.scope))
    return wanted


def event_rates(
    stats: pd.DataFrame,
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
        :func:`cosim.read_stats` output (needs ``duration_s``).
    cores_per_cluster
        Cores of the cluster the model was trained on; the per-core sum is divided by it.
    freq_mhz
        Cluster frequency per epoch [MHz].

    Raises
    ------
    CosimError
        An event none of whose sources has its stats in the run.
    """
    emap = load_event_map(generation)
    duration_s = stats["duration_s"].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = 1.0 / (cores_per_cluster * duration_s * np.asarray(freq_mhz, dtype=float))
    eph, chosen = {}, {}
    for event in events:
        if event not in emap.sources:
            raise CosimError(f"event {event} has no gem5 mapping in the {generation} map; known: {', '.join(sorted(emap.sources))}")
        counts = None
        for source in emap.sources[event]:
            counts = _count(stats, cluster, source)
            if counts is not None:
                chosen[event] = source
                break
        if counts is None:
            tried = "; ".join(s.expr for s in emap.sources[event])
            raise CosimError(
                f"{stats.attrs['gem5'].path if 'gem5' in stats.attrs else 'stats'}: no stats for event {event} "
                f"({emap.names[event]}) of cluster '{cluster.name}' (tried: {tried}); is this the right --cluster path?"
            )
        eph[event] = counts * scale
    return EventRates(eph=pd.DataFrame(eph, index=stats.index), chosen=chosen)


def _count(stats: pd.DataFrame, cluster: Cluster, source: Source) -> np.ndarray | None:
    """Event count per epoch summed over the cluster's CPUs, or None if the source's stats are absent."""
    total = np.zeros(len(stats))
    if not source.terms:  # the constant 0 of an event gem5 cannot count
        return total
    found_any = False
    for term in source.terms:
        found = False
        for cpu in cluster.cpus:
            for obj in _objects(cluster, cpu, term.scope):
                column = f"{obj}.{term.stat}"
                if column in stats.columns:
                    share = 1.0 / cluster.sharers(obj) if term.scope == "l2" else 1.0
                    total += term.sign * share * stats[column].to_numpy()
                    found = True
                    break
        if not found and source.require_all:
            return None
        found_any |= found
    return total if found_any else None
