"""Which CPUs form a priced cluster and which model prices them: the spec, the config's cluster for it, the stats
its model reads, and its clock per epoch."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from cosim.counters.pmc import stats_for
from cosim.errors import CosimError
from cosim.models.modelfile import Model
from cosim.readers.gem5_config import Cluster, Gem5Config
from cosim.timeline.cycles import cycle_stats

if TYPE_CHECKING:
    from cosim.readers.stats_table import StatsLike


@dataclass(frozen=True)
class ClusterSpec:
    """Which CPUs form a cluster and which model prices them."""

    name: str
    path: str | None  # CPU path prefix in the config (``system.bigCluster``); None: the clock-domain cluster `name`
    model: Model
    voltage_v: float | None = None  # user-supplied voltage [V]; None: the model's V-f table
    voltage_model: bool = False  # voltage under load from the model's voltage model (Walker Section VIII)
    # cores the physical cluster powers where the run simulates fewer (its static power); None: the CPUs simulated
    powered_cores: int | None = None
    temperature_c: float | None = None  # die temperature [°C]; None: predicted from the run's power where the
    # model's cluster has thermal constants (cosim.timeline.temperature), else the training board's along its curve
    ambient_c: float | None = None  # the thermal loop's ambient [°C]; None: its default (flagged ambient_default)
    start_temperature_c: float | None = None  # the die at the run's start [°C]; None: steady at its mean power

    def __repr__(self) -> str:  # one line, the model by name (its file is kilobytes)
        where = f"CPUs under {self.path}" if self.path is not None else "CPUs of its clock domain"
        extra = "".join(
            f", {k}={v!r}"
            for k, v in (("voltage_v", self.voltage_v), ("powered_cores", self.powered_cores), ("temperature_c", self.temperature_c))
            if v is not None
        )
        return f"ClusterSpec({self.name!r}, {where}, model {self.model.name!r}{extra})"


def resolve_cluster(config: Gem5Config, spec: ClusterSpec, ticks_per_s: float) -> Cluster:
    """The config's :class:`Cluster` for ``spec``, with frequencies at the run's tick rate."""
    if spec.path is not None:
        cluster = config.cluster(spec.name, spec.path)
    else:
        auto = config.clusters()
        if spec.name not in auto:
            raise CosimError(
                f"{config.path}: no cluster '{spec.name}'; clusters by clock domain: {', '.join(auto) or 'none'} "
                "(or name CPUs with --cluster NAME=PATH)"
            )
        cluster = auto[spec.name]
    return dataclasses.replace(cluster, ticks_per_s=ticks_per_s)


def stats_needed(config: Gem5Config, specs: Sequence[ClusterSpec]) -> set[str]:
    """The stat names the clusters' models read: give them to ``read_stats(stats=...)`` to parse nothing else."""
    wanted: set[str] = set()
    for spec in specs:
        cluster = resolve_cluster(config, spec, config.ticks_per_s)
        wanted |= stats_for(cluster, spec.model.events) | cycle_stats(cluster)
    return wanted


def frequency_mhz(stats: StatsLike, cluster: Cluster) -> np.ndarray:
    """Per-epoch frequency [MHz]: the clock-domain period dumped in stats.txt (follows DVFS), else the config's."""
    column = f"{cluster.clk_domain}.clock"
    freq = np.full(len(stats), cluster.freq_mhz)
    if column in stats:
        period = np.asarray(stats[column])
        ok = np.isfinite(period) & (period > 0)
        freq[ok] = cluster.ticks_per_s / period[ok] / 1e6
    return freq
