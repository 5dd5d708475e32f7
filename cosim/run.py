"""One place that resolves a gem5 run: which stats file, which config, which clusters, which models.

``cosim power``, ``whatif``, ``sweep``, ``explore`` and the Python API all start here, so a run is
priced the same way whichever of them reads it::

    run = cosim.open_run("m5out")          # a gem5 output folder, or its stats.txt / stats.txt.gz
    stats, timeline = cosim.price_run(run)  # numpy columns, as ``cosim power`` writes them

Resolution order for the clusters and their models:

1. the user's overrides (``models``, ``clusters``);
2. else the sidecar ``cosim-run.json`` that :mod:`gem5_scripts.cosim_gem5` writes beside stats.txt;
3. else one cluster per clock domain, each priced by the shipped model of its CPU type
   (out-of-order -> Cortex-A15, in-order -> Cortex-A7), said in :attr:`Run.notes`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cosim.errors import CosimError
from cosim.readers.files import STATS_NAMES, input_file
from cosim.readers.sidecar import SIDECAR

if TYPE_CHECKING:
    from cosim.columns import Columns
    from cosim.readers.gem5_config import Gem5Config
    from cosim.readers.stats_table import StatsTable
    from cosim.timeline.clusters import ClusterSpec

CONFIG_NAMES = ("config.ini", "config.json")


@dataclass(frozen=True)
class Run:
    """A gem5 run resolved for pricing. Paths are as given (not resolved), so messages show what the user typed."""

    folder: Path  # the gem5 output folder
    stats_path: Path  # stats.txt or stats.txt.gz
    config: Gem5Config
    clusters: tuple[ClusterSpec, ...]
    sidecar: Path | None = None  # cosim-run.json, when it named the clusters
    notes: tuple[str, ...] = field(default=())  # how defaults were chosen, one line each, for the CLI to print

    def __repr__(self) -> str:  # one line a cluster: what print(cosim.open_run(path)) shows
        clusters = "".join(f"\n  {c!r}" for c in self.clusters)
        return f"Run({str(self.stats_path)!r}, config {str(self.config.path)!r}, {len(self.clusters)} cluster(s)){clusters}"

    def inputs(self) -> tuple[Path, ...]:
        """Every file this run is read from, and the gem5 files beside it that an output must never replace."""
        beside = [self.folder / n for n in (*STATS_NAMES, *CONFIG_NAMES, SIDECAR)]
        return tuple(dict.fromkeys([self.stats_path, Path(self.config.path), *beside]))


def find_stats(path: str | Path) -> Path:
    """The stats file of ``path``: the file itself, or ``stats.txt`` / ``stats.txt.gz`` (M5's ``m5stats.txt``) in a gem5
    output folder.

    Each wrong kind of path gets its own one-line :class:`CosimError` saying what was expected.
    """
    path = Path(path)
    if path.is_dir():
        found = next((path / n for n in STATS_NAMES if (path / n).exists()), None)
        if found is None:
            raise CosimError(
                f"{path}: a folder with no stats.txt, stats.txt.gz or m5stats.txt in it; give a gem5 output folder (m5out/) or its stats.txt"
            )
        path = found
    return input_file(
        path, what="the stats.txt from gem5's output folder (m5out/)", empty_hint="did gem5 exit before its first stats dump?"
    )


def open_run(
    path: str | Path,
    *,
    config: str | Path | None = None,
    models: Sequence[str] = (),
    clusters: Mapping[str, str] | None = None,
    voltages: Mapping[str, float] | None = None,
    voltage_model: bool = False,
    powered_cores: Mapping[str, int] | None = None,
    cpu_types: Mapping[str, str] | None = None,
    temperature_c: float | None = None,
    ambient_c: float | None = None,
    start_temperature_c: float | None = None,
) -> Run:
    """Resolve the gem5 run at ``path`` (output folder or stats file) for pricing.

    Parameters
    ----------
    config
        config.ini or config.json; default: the one beside the stats file.
    models
        Model files or shipped model names: one for every cluster, or one per cluster in the order of ``clusters``.
        Default: the sidecar's models, else the shipped model of each cluster's CPU type.
    clusters
        ``{name: config path prefix of its CPUs}`` (``{"big": "system.bigCluster"}``). Default: the sidecar's,
        else one cluster per clock domain.
    voltages
        ``{cluster name: voltage [V]}`` used instead of the model's V-f table.
    voltage_model
        Voltage under load from the model's voltage model (Walker et al. Section VIII).
    temperature_c
        Die temperature [°C] for the static power of models with a temperature term; None: the temperature the run's
        own power produces, epoch by epoch, where the model's cluster has thermal constants
        (:mod:`cosim.timeline.temperature`), else the training board's at each clock (:mod:`cosim.models.static_form`).
    ambient_c, start_temperature_c
        The thermal loop's ambient [°C] and the die's temperature at the run's start [°C]; None: the thermal
        constants' ambient, and steady state at the run's mean power (rows flagged ``ambient_default``, ``start_steady``).
    powered_cores
        ``{cluster name: cores}`` the physical cluster powers where the run simulates fewer (one gem5 CPU standing
        for a board's four-core cluster): static power is that of this many cores.  Default: the CPUs simulated.
    cpu_types
        ``{CPU path: gem5 type}`` (``{"system.cpu": "TimingSimpleCPU"}``) for a run with no config.ini or config.json:
        its CPUs and their kind.  Without a config file and without it, both are read from the stats' names
        (:mod:`cosim.readers.stats_config`), as are the clocks and caches; rows are flagged ``config_from_stats``.
    """
    from cosim.models.modelfile import load_model
    from cosim.readers.gem5_config import read_config
    from cosim.timeline.clusters import ClusterSpec

    stats_path = find_stats(path)
    folder = stats_path.parent
    config_path = Path(config) if config is not None else _config_beside(stats_path)
    notes: list[str] = []
    if config_path is None:
        from cosim.readers.stats_config import config_from_stats

        run_config = config_from_stats(stats_path, cpu_types)
        notes.append(
            f"{stats_path}: no config.ini/config.json beside it, so its CPUs, clocks and caches are read from its stats' names "
            f"({'; '.join(run_config.inferred)}); rows flagged config_from_stats (give --config, or --cpu-type PATH=TYPE)"
        )
    else:
        if cpu_types:
            raise CosimError(f"--cpu-type names the CPUs of a run without a config file; {config_path} names them: leave --cpu-type out")
        input_file(config_path, what="config.ini or config.json from gem5's output folder")
        run_config = read_config(config_path)

    named = dict(clusters or {})
    chosen = list(models)
    sidecar = folder / SIDECAR
    used_sidecar: Path | None = None
    if not named and sidecar.exists():
        from cosim.readers.sidecar import read_sidecar

        found = read_sidecar(sidecar)
        named = {name: cpu_path for name, (cpu_path, _) in found.items()}
        chosen = chosen or [model for _, model in found.values()]
        used_sidecar = sidecar
    if not chosen:
        chosen, named, defaults = _default_models(run_config, named)
        notes += defaults

    loaded = [load_model(m) for m in chosen]
    pairs: list[tuple[str, str | None]]
    if named:
        if len(loaded) not in (1, len(named)):
            raise CosimError(f"{len(loaded)} --model for {len(named)} --cluster: give one model, or one per cluster in order")
        pairs = list(named.items())
    else:
        if len(loaded) != 1:
            raise CosimError("several --model need --cluster NAME=PATH to say which CPUs each one prices")
        pairs = [(name, None) for name in run_config.clusters()]
        if not pairs:
            raise CosimError(
                f"{run_config.path}: no active CPU in this config (every CPU is switched out, or there is none); nothing to price"
            )
    volts = dict(voltages or {})
    if volts and voltage_model:  # the voltage model would silently replace the given voltage
        raise CosimError("--voltage and --voltage-model both set a cluster's voltage; give one (--voltage NAME=V, or --voltage-model)")
    unknown = sorted(set(volts) - {name for name, _ in pairs})
    if unknown:
        raise CosimError(f"--voltage for unknown cluster(s) {', '.join(unknown)}; clusters: {', '.join(n for n, _ in pairs)}")
    powered = dict(powered_cores or {})
    unknown = sorted(set(powered) - {name for name, _ in pairs})
    if unknown:
        raise CosimError(f"--powered-cores for unknown cluster(s) {', '.join(unknown)}; clusters: {', '.join(n for n, _ in pairs)}")
    specs = tuple(
        ClusterSpec(
            name=name,
            path=cpu_path,
            model=loaded[i if len(loaded) > 1 else 0],
            voltage_v=volts.get(name),
            voltage_model=voltage_model,
            powered_cores=powered.get(name),
            temperature_c=temperature_c,
            ambient_c=ambient_c,
            start_temperature_c=start_temperature_c,
        )
        for i, (name, cpu_path) in enumerate(pairs)
    )
    return Run(folder=folder, stats_path=stats_path, config=run_config, clusters=specs, sidecar=used_sidecar, notes=tuple(notes))


def _config_beside(stats_path: Path) -> Path | None:
    """config.ini or config.json beside the stats file; None when there is none and the stats hold a CPU to price."""
    found = next((stats_path.parent / n for n in CONFIG_NAMES if (stats_path.parent / n).exists()), None)
    if found is not None:
        return found
    first = _first_dump(stats_path)
    from cosim.readers.gem5_stats import NOT_STATS, not_stats_error

    if first in NOT_STATS:
        raise not_stats_error(stats_path, first)
    if first == "no cpu":
        raise CosimError(
            f"{stats_path}: this run has no CPU (no numCycles stat in its first dump), so there is nothing for a CPU power model to price"
        )
    return None


def _first_dump(stats_path: Path) -> str:
    """What the first dump of a plain or gzip stats file holds: "cpu" (a numCycles stat), "no cpu", "no stats"
    (nothing between its Begin and End lines) or "no begin" (no Begin line: no gem5 statistics at all).
    "cpu" when the file cannot be read, so that the reader says what is wrong with it."""
    import gzip
    import zlib

    opener = gzip.open if stats_path.suffix == ".gz" else open
    found = "no begin"
    try:
        with opener(stats_path, "rb") as f:
            while line := f.readline(1 << 20):  # in pieces: a file that is no stats file may have no newline
                if b"numCycles" in line or b"num_cycles" in line:
                    return "cpu"
                if line.startswith(b"---------- Begin"):
                    found = "no stats"
                elif line.startswith(b"---------- End") and found != "no begin":
                    return found
                elif found == "no stats" and line.strip():
                    found = "no cpu"
    except (OSError, EOFError, zlib.error):
        return "cpu"
    return found


def _default_models(config: Gem5Config, named: dict[str, str]) -> tuple[list[str], dict[str, str], list[str]]:
    """One shipped model per cluster, chosen by CPU type, with a note saying so."""
    from cosim.timeline.core_kind import default_model

    found = [config.cluster(name, cpu_path) for name, cpu_path in named.items()] if named else list(config.clusters().values())
    if not found:
        raise CosimError(f"{config.path}: no CPU in this config to price; give --cluster NAME=PATH")
    models, notes = [], []
    for cluster in found:
        model, why = default_model(cluster)
        notes.append(f"cluster '{cluster.name}': {why}, priced with {model} (choose with --model)")
        models.append(model)
    if not named and len(models) > 1:  # several clock domains: name them so each gets its own model
        named = {c.name: None for c in found}  # type: ignore[misc]  # None: the clock-domain cluster of that name
    return models, named, notes


def price_run(
    run: Run,
    *,
    strict: bool = False,
    any_isa: bool = False,
    keep_implausible: bool = False,
    extrapolate: bool = False,
    progress: bool = False,
) -> tuple[StatsTable, Columns]:
    """Read only the stats the run's models need and price every epoch: ``(stats, timeline)`` as numpy columns.

    The same path ``cosim power`` takes; :func:`cosim.power_timeline` gives the timeline as a DataFrame.
    """
    from cosim.readers.gem5_stats import read_stats_table
    from cosim.timeline.clusters import stats_needed
    from cosim.timeline.cpu import timeline_columns

    stats = read_stats_table(run.stats_path, stats=stats_needed(run.config, run.clusters), progress=progress)
    timeline = timeline_columns(
        stats, run.config, run.clusters, strict=strict, any_isa=any_isa, keep_implausible=keep_implausible, extrapolate=extrapolate
    )
    return stats, timeline
