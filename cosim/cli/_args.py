"""What every command group shares: argument helpers, the trust overrides, and finding a run's config and clusters."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cosim.errors import CosimError

EXIT_ERROR = 2
EXIT_PARTIAL = 3
EXIT_INTERNAL = 4
EXIT_INTERRUPTED = 130


def _add_trust_flags(p: argparse.ArgumentParser, *, isa: bool = True, implausible: bool = True) -> None:
    """The overrides of cosim's refusals (README: "What cosim refuses, and why")."""
    if isa:
        p.add_argument(
            "--any-isa", action="store_true", help="price a run of another ISA than the model was trained on (rows flagged isa_mismatch)"
        )
    if implausible:
        p.add_argument(
            "--keep-implausible",
            action="store_true",
            help="write physically implausible rows, flagged 'implausible' with the reason and no power value, instead of refusing",
        )
    p.add_argument(
        "--extrapolate",
        action="store_true",
        help="price clocks beyond the model's extrapolation band by its physical extrapolation (flagged extrapolated)",
    )


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise CosimError(f"{flag} '{item}': expected NAME=VALUE")
        out[name] = value
    return out


def _find_config(stats_path: Path, config_path: Path | None):
    from cosim.readers.gem5_config import read_config

    if not stats_path.is_file():  # before the config, whose problems would hide this one
        raise CosimError(f"{stats_path}: no such file; give the stats.txt from gem5's output directory (m5out/)")
    if config_path is None:
        for name in ("config.ini", "config.json"):
            if (stats_path.parent / name).exists():
                config_path = stats_path.parent / name
                break
        else:
            if stats_path.is_file() and not _has_cpu_stats(stats_path):
                raise CosimError(
                    f"{stats_path}: this run has no CPU (no numCycles stat in its first dump), so there is "
                    "nothing for a CPU power model to price"
                )
            raise CosimError(
                f"{stats_path}: no config.ini/config.json beside it (cosim reads the run's CPUs, clocks and ISA from it); pass --config"
            )
    return read_config(config_path)


def _has_cpu_stats(stats_path: Path) -> bool:
    with open(stats_path, "rb") as f:
        for line in f:
            if b"numCycles" in line or b"num_cycles" in line:
                return True
            if line.startswith(b"---------- End"):
                return False
    return False


def _cluster_specs(config, args: argparse.Namespace):
    from cosim.models.modelfile import load_model
    from cosim.readers.sidecar import SIDECAR, read_sidecar
    from cosim.timeline.cpu import ClusterSpec

    clusters = _pairs(args.cluster, "--cluster")
    path = args.stats.parent / SIDECAR
    sidecar = read_sidecar(path) if not clusters and path.exists() else None
    if sidecar:
        clusters = {name: path for name, (path, _) in sidecar.items()}
        if not args.model:
            args.model = [model for _, model in sidecar.values()]
    if not args.model:
        args.model = _default_models(config, clusters)
    voltages = {k: _volts(k, v) for k, v in _pairs(args.voltage, "--voltage").items()}
    models = [load_model(m) for m in args.model]
    paths: list[tuple[str, str | None]]
    if clusters:
        if len(models) not in (1, len(clusters)):
            raise CosimError(f"{len(models)} --model for {len(clusters)} --cluster: give one model, or one per cluster in order")
        paths = list(clusters.items())
    else:
        if len(models) != 1:
            raise CosimError("several --model need --cluster NAME=PATH to say which CPUs each one prices")
        paths = [(name, None) for name in config.clusters()]
        if not paths:
            raise CosimError(f"{config.path}: no active CPU in this config (every CPU is switched out, or there is none); nothing to price")
    unknown = set(voltages) - {name for name, _ in paths}
    if unknown:
        raise CosimError(f"--voltage for unknown cluster(s) {', '.join(sorted(unknown))}; clusters: {', '.join(n for n, _ in paths)}")
    return [
        ClusterSpec(
            name=name, path=path, model=models[i if len(models) > 1 else 0], voltage_v=voltages.get(name), voltage_model=args.voltage_model
        )
        for i, (name, path) in enumerate(paths)
    ]


def _default_models(config, clusters: dict[str, str]) -> list[str]:
    """One shipped model per cluster, chosen by CPU type; says so on stderr."""
    from cosim.timeline.cpu import default_model

    found = [config.cluster(name, path) for name, path in clusters.items()] if clusters else list(config.clusters().values())
    if not found:
        raise CosimError(f"{config.path}: no CPU in this config to price; give --cluster NAME=PATH")
    models = []
    for cluster in found:
        model, why = default_model(cluster)
        print(f"cosim: cluster '{cluster.name}': {why}, priced with {model} (choose with --model)", file=sys.stderr)
        models.append(model)
    if not clusters and len(models) > 1:  # several clock domains: name them so each gets its own model
        clusters.update({c.name: None for c in found})
    return models


def _volts(name: str, text: str) -> float:
    import numpy as np

    try:
        value = float(text)
    except ValueError:
        raise CosimError(f"--voltage {name}={text}: not a number of volts") from None
    if not np.isfinite(value) or not 0.3 < value < 2.0:
        raise CosimError(f"--voltage {name}={text}: expected a CPU voltage in volts, e.g. 1.05")
    return value
