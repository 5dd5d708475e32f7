"""Every model file cosim ships, one row each, read from the files themselves (``cosim models`` prints them)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cosim.models.modelfile import shipped_models_dir


@dataclass(frozen=True)
class ModelEntry:
    """What a user needs to pick a model: what it prices, where it was measured, its clocks, trained range and error."""

    name: str
    kind: str  # what the file is: a CPU cluster model, a GPU model, or data the commands read (roofline, DVFS levels)
    core: str
    board: str
    clocks_mhz: str  # the operating points the file lists
    training: str  # the clocks [MHz] its training data spans
    error: str  # its published or measured error, or that none is published
    source: str


def shipped_models(folder: Path | None = None) -> list[ModelEntry]:
    """One entry per ``*.json`` in the shipped ``models/`` folder (or ``folder``), by name."""
    folder = folder or shipped_models_dir()
    return [_entry(path.stem, json.loads(path.read_text())) for path in sorted(folder.glob("*.json"))]


def _mhz(values) -> str:
    return ", ".join(f"{float(v):g}" for v in values)


def _span(lo_hi) -> str:
    lo, hi = lo_hi
    return f"{float(lo):g}-{float(hi):g} MHz"


def _citation(data: dict[str, Any]) -> str:
    source = data.get("source", {})
    return source.get("citation", "") if isinstance(source, dict) else str(source)


def _entry(stem: str, data: dict[str, Any]) -> ModelEntry:
    schema = data.get("schema", "")
    name = data.get("name", stem)
    fit = data.get("fit", {}) or {}
    if schema == "cosim-model/1":  # a CPU cluster model (Walker et al.'s form)
        kind = data.get("core_kind", "")
        core = next((w for w in data["component"].replace("(", " ").split() if w.startswith("Cortex-")), data["component"])
        if fit.get("ser_w") is not None:
            error = f"SER {fit['ser_w']:g} W" + (f", MAPE {fit['mape_pct']:g} % on its training data" if "mape_pct" in fit else "")
        elif (data.get("fit_rel") or {}).get("ser_rel") is not None:  # issue 50: from held-out data, stated in the file
            error = f"relative SER {100 * data['fit_rel']['ser_rel']:.2f} % (none published; held-out data, fit_rel.source)"
        else:
            error = "none published (no SER: no interval inside its trained clocks)"
        return ModelEntry(
            name,
            "CPU cluster",
            f"{core}{f' ({kind})' if kind else ''}, {data['cores_per_cluster']} cores",  # a fitted file may not state its kind
            "ODROID-XU3 (Exynos 5422)",
            _mhz(p[0] for p in data["vf_table"]["points_mhz_v"]),
            _span(data["training"]["freq_mhz"]),
            error,
            _citation(data),
        )
    if schema == "cosim-rail-model/1":
        clocks = data["clocks"]["gpu"]["points_mhz_v"]
        training = data["training"]
        return ModelEntry(
            name,
            "GPU and memory rails",
            "GK20A GPU, DDR3L memory, LP CPU core",
            "Jetson TK1 (Tegra K1)",
            f"GPU {_mhz(p[0] for p in clocks)}",
            f"GPU {_span(training['gpu_mhz'])}, EMC {_span(training['emc_mhz'])}",
            fit.get("accuracy", "") + (f"; band +-{fit['error_band_pct']:g} %" if fit.get("error_band_pct") else ""),
            _citation(data),
        )
    if schema == "cosim-access-rate-model/1":
        validation = data.get("validation", {})
        return ModelEntry(
            name,
            "GPU instructions",
            "desktop Fermi GPU (compute capability 2.x)",
            "a PC, measured at the wall",
            f"{data['timing']['clock_mhz']:g}",
            "not stated",
            f"{validation.get('error_pct_of_dynamic', float('nan')):g} % of dynamic power on {validation.get('workload', 'its one workload')}; "
            "no interval",
            _citation(data),
        )
    if schema == "cosim-roofline/1":
        return ModelEntry(
            name, "Roofline platforms (no power)", ", ".join(data["processors"]), "Jetson TK1, TX1", "", "", "", _citation(data)
        )
    if schema == "cosim-board-dvfs/1":
        levels = data["levels_mhz"]
        clocks = "; ".join(f"{k} {v['min']:g}-{v['max']:g} ({v['count']} levels)" for k, v in levels.items())
        return ModelEntry(name, "DVFS levels (no power)", "CPU, GPU, EMC clocks", data["board"], clocks, "", "", str(data["source"]))
    if schema == "cosim-thermal/1":  # not a model: the constants of the leakage-temperature loop (cosim.models.thermal)
        clusters = data.get("clusters", {})
        applies = sorted({m for block in clusters.values() for m in block.get("applies_to", ())})
        return ModelEntry(
            name,
            "thermal constants (no power)",
            f"die temperature of cluster {', '.join(clusters)}, for {', '.join(applies)}",
            "ODROID-XU3 (Exynos 5422)",
            "",
            "",
            "",
            _citation(data),
        )
    return ModelEntry(name, schema or "unknown", "", "", "", "", "", _citation(data))
