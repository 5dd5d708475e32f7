"""GPU Ocelot access-rate model (thesis Eqs. 6.2-6.10): model file and pure functions.

Per kernel, with c_i the count of instruction class i, E_i its energy [J],
n_i its throughput [instructions/clock/SM], S the SM count and f the clock::

    cycles_i   = c_i / (n_i * S)                     (count * CPI, Eq. 6.8)
    T          = sum_i cycles_i / f                   [s]
    AccessRate = cycles_i / sum_j cycles_j            (Eq. 6.9)
    MaxPower_i = E_i * n_i * S * f                    [W]  (unit i busy every cycle)
    P          = IdlePower + sum_i MaxPower_i * AccessRate_i   (Eqs. 6.3, 6.7)

so a kernel's dynamic energy is sum_i c_i * E_i whatever the timing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cosim.errors import CosimError
from cosim.models.modelfile import read_model_json
from cosim.readers.ocelot import OCELOT_CLASSES

SCHEMA = "cosim-access-rate-model/1"


@dataclass(frozen=True)
class Level:
    """A GPU performance level: idle power [W] (None: unpublished) and how long the GPU stays in it [s]."""

    name: str
    idle_power_w: float | None
    tail_s: float | None


@dataclass(frozen=True)
class AccessRateModel:
    name: str
    path: str
    energy_j: Mapping[str, float]  # Ocelot class -> dynamic energy per instruction [J]
    energy_row: Mapping[str, str]  # Ocelot class -> the energy-table row it is priced with
    throughput: Mapping[str, float]  # Ocelot class -> instructions per clock per SM
    sm_count: int
    clock_mhz: float
    levels: tuple[Level, ...]  # highest first
    pcie_extra_power_w: float
    pcie_latency_s: float
    pcie_bandwidth_bytes_per_s: float
    raw: Mapping[str, Any]


def load_access_rate_model(path: str | Path = "ocelot-fermi-aalto2013") -> AccessRateModel:
    """Read and check an access-rate model file; a bare name means a shipped model."""
    path, data = read_model_json(path, schema=SCHEMA, kind="access-rate model")

    def positive(value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise CosimError(f"{path}: {where} must be a positive number, not {value!r}")
        return float(value)

    table = data.get("energy_per_instruction_j") or {}
    rows = data.get("class_to_energy") or {}
    timing = data.get("timing") or {}
    throughput = timing.get("throughput_per_clock_per_sm") or {}
    energy: dict[str, float] = {}
    row_of: dict[str, str] = {}
    for cls in OCELOT_CLASSES:
        row = rows.get(cls)
        if row not in table:
            raise CosimError(f"{path}: class_to_energy.{cls} must name a row of energy_per_instruction_j, not {row!r}")
        energy[cls] = positive((table[row] or {}).get("total"), f"energy_per_instruction_j.{row}.total")
        row_of[cls] = str(row)
        throughput[cls] = positive(throughput.get(cls), f"timing.throughput_per_clock_per_sm.{cls}")
    levels = []
    for i, lv in enumerate(data.get("performance_levels") or []):
        idle, tail = lv.get("idle_power_w"), lv.get("tail_s")
        levels.append(
            Level(
                name=str(lv.get("name", i)),
                idle_power_w=None if idle is None else positive(idle, f"performance_levels[{i}].idle_power_w"),
                tail_s=None if tail is None else positive(tail, f"performance_levels[{i}].tail_s"),
            )
        )
    if not levels:
        raise CosimError(f"{path}: performance_levels is empty; list the GPU's levels, highest first")
    pcie = data.get("pcie") or {}
    return AccessRateModel(
        name=str(data.get("name", path.stem)),
        path=str(path),
        energy_j=energy,
        energy_row=row_of,
        throughput=dict(throughput),
        sm_count=int(positive(timing.get("sm_count"), "timing.sm_count")),
        clock_mhz=positive(timing.get("clock_mhz"), "timing.clock_mhz"),
        levels=tuple(levels),
        pcie_extra_power_w=positive(pcie.get("extra_power_w"), "pcie.extra_power_w"),
        pcie_latency_s=positive(pcie.get("latency_s"), "pcie.latency_s"),
        pcie_bandwidth_bytes_per_s=positive(pcie.get("bandwidth_bytes_per_s"), "pcie.bandwidth_bytes_per_s"),
        raw=data,
    )


def class_cycles(model: AccessRateModel, counts: Mapping[str, ArrayLike]) -> dict[str, np.ndarray]:
    """Clock cycles each class keeps its units busy: count * CPI_i (the terms of Eq. 6.8)."""
    return {cls: np.asarray(counts[cls], dtype=float) / (model.throughput[cls] * model.sm_count) for cls in OCELOT_CLASSES}


def check_clock(model: AccessRateModel, clock_mhz: float | None) -> None:
    """The envelope's rule for a model measured at one clock: its energies per instruction hold at that clock's
    voltage, so a clock above it by more than the band (``envelope.band_x_top_clock``, default 1.125) is refused."""
    if clock_mhz is None:
        return
    band = float(model.raw.get("envelope", {}).get("band_x_top_clock", 1.125))
    if clock_mhz > model.clock_mhz * band * 1.003:
        raise CosimError(
            f"--gpu-clock-mhz {clock_mhz:g}: {clock_mhz / model.clock_mhz:.3g}x the clock {model.name} was measured at "
            f"({model.clock_mhz:g} MHz), beyond its extrapolation band ({band:g}x, up to {model.clock_mhz * band:g} MHz): its "
            "energies per instruction hold at that clock's voltage only; give a clock inside the band or another --gpu model"
        )


def kernel_duration_s(model: AccessRateModel, counts: Mapping[str, ArrayLike], *, clock_mhz: float | None = None) -> np.ndarray:
    """Kernel time [s] = TotalCycles (Eq. 6.8) / clock."""
    total = sum(class_cycles(model, counts).values())
    return np.asarray(total, dtype=float) / ((clock_mhz or model.clock_mhz) * 1e6)


def dynamic_power_w(model: AccessRateModel, counts: Mapping[str, ArrayLike], *, clock_mhz: float | None = None) -> dict[str, np.ndarray]:
    """Per-class runtime power MaxPower_i * AccessRate_i [W] (Eqs. 6.7, 6.9), and their sum ``power_w``."""
    f_hz = (clock_mhz or model.clock_mhz) * 1e6
    cycles = class_cycles(model, counts)
    total = sum(cycles.values())
    out = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for cls in OCELOT_CLASSES:
            max_power = model.energy_j[cls] * model.throughput[cls] * model.sm_count * f_hz
            out[cls] = max_power * np.where(total > 0, cycles[cls] / total, 0.0)
    out["power_w"] = np.asarray(sum(out[c] for c in OCELOT_CLASSES), dtype=float)
    return out


def dynamic_energy_j(model: AccessRateModel, counts: Mapping[str, ArrayLike]) -> dict[str, np.ndarray]:
    """Per-class dynamic energy count_i * E_i [J] (Table 6.1), and their sum ``energy_j``."""
    out = {cls: np.asarray(counts[cls], dtype=float) * model.energy_j[cls] for cls in OCELOT_CLASSES}
    out["energy_j"] = np.asarray(sum(out[c] for c in OCELOT_CLASSES), dtype=float)
    return out


def pcie_transfer(
    model: AccessRateModel, size_bytes: ArrayLike, *, latency_s: float | None = None, bandwidth_bytes_per_s: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Hockney transfer time [s] = latency + size / bandwidth (Eq. 6.10), and its extra energy [J] at constant extra power."""
    size = np.asarray(size_bytes, dtype=float)
    if (size < 0).any() or not np.isfinite(size).all():
        raise CosimError("a PCI Express transfer size is negative or not a number")
    time = (latency_s or model.pcie_latency_s) + size / (bandwidth_bytes_per_s or model.pcie_bandwidth_bytes_per_s)
    return time, time * model.pcie_extra_power_w


def idle_level(model: AccessRateModel, since_busy_s: float) -> Level:
    """The performance level the GPU is in ``since_busy_s`` seconds after its last work (tail times, 6.1.1.3)."""
    elapsed = 0.0
    for level in model.levels:
        if level.tail_s is None or since_busy_s < elapsed + level.tail_s:
            return level
        elapsed += level.tail_s
    return model.levels[-1]
