"""Tegra K1 rail model (Stokke et al., MMSys'16): model file and pure power functions.

Per rail R (GPU, memory, core)::

    P_R = I_R,leak * V_R  +  V_R^2 * sum_i C_R,i * rho_R,i  (+ offset at some clocks)   [W]

with rho in occurrences per second and C in coulombs per volt (Eqs. 2 and 9);
the GPU and memory rails also have a clock predictor, rho = f [cycles/s].
Total power is the rails plus a constant base power (Eqs. 8 and 10).
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
from cosim.models.clocks import FREQ_REL_TOL
from cosim.models.modelfile import read_model_json

SCHEMA = "cosim-rail-model/1"


@dataclass(frozen=True)
class Rail:
    """One supply rail: leakage, clock capacitance, per-predictor capacitances, offsets."""

    name: str
    clock: str  # the clock whose V-f table sets this rail's voltage ("gpu", "emc", "cpu_lp")
    leakage_a: float | None  # [A]; None: the rail voltage is fixed, static power is in the base power
    clock_c: float | None  # [C/V] per clock cycle; None: no clock predictor
    coefficients: Mapping[str, float]  # predictor -> C [C/V] per occurrence
    offsets_w: Mapping[float, float]  # rail clock [MHz] -> constant power [W]
    voltage_v: float | None = None  # fixed rail voltage [V] (the memory rail)


@dataclass(frozen=True)
class RailModel:
    """A Tegra K1-style rail model read from ``models/<name>.json``."""

    name: str
    path: str
    rails: Mapping[str, Rail]
    base_w: float
    clocks: Mapping[str, tuple[tuple[float, float], ...]]  # clock -> ((MHz, V), ...)
    complete_tables: frozenset[str]  # clocks whose table lists every step; others interpolate (flagged)
    error_band_pct: float | None
    railgate_delay_s: float
    transaction_bytes: Mapping[str, float]
    raw: Mapping[str, Any]


def load_rail_model(path: str | Path = "tegra-k1-stokke2016") -> RailModel:
    """Read and check a rail-model file; a bare name means a shipped model."""
    path, data = read_model_json(path, schema=SCHEMA, kind="rail model")
    return _parse(path, data)


def _parse(path: Path, data: dict) -> RailModel:
    def number(obj: Any, key: str, where: str) -> float:
        value = obj.get(key) if isinstance(obj, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise CosimError(f"{path}: {where} '{key}' must be a finite number, not {value!r}; see models/README.md")
        return float(value)

    def optional_number(obj: Any, key: str, where: str) -> float | None:
        return None if isinstance(obj, dict) and key in obj and obj[key] is None else number(obj, key, where)

    rails = {}
    for name, r in (data.get("rails") or {}).items():
        where = f"rails.{name}"
        predictors = r.get("predictors") if isinstance(r, dict) else None
        if not isinstance(predictors, dict):
            raise CosimError(f"{path}: {where} has no 'predictors' object")
        rails[name] = Rail(
            name=name,
            clock=str(r.get("clock", "")),
            leakage_a=optional_number(r, "leakage_a", where),
            clock_c=optional_number(r, "clock_c", where),
            coefficients={p: number(v, "c", f"{where}.predictors.{p}") for p, v in predictors.items()},
            offsets_w={float(f): number(r["offsets_w"], f, f"{where}.offsets_w") for f in r.get("offsets_w", {})},
            voltage_v=number(r, "voltage_v", where) if "voltage_v" in r else None,
        )
    for needed in ("gpu", "mem", "core"):
        if needed not in rails:
            raise CosimError(f"{path}: rails has no '{needed}' rail")
    clocks, complete = {}, set()
    for name, c in (data.get("clocks") or {}).items():
        try:
            points = tuple(sorted((float(f), float(v)) for f, v in c["points_mhz_v"]))
        except (KeyError, TypeError, ValueError):
            raise CosimError(f"{path}: clocks.{name}.points_mhz_v must be [freq_mhz, voltage_v] pairs") from None
        if not points:
            raise CosimError(f"{path}: clocks.{name}.points_mhz_v is empty")
        clocks[name] = points
        if int(c.get("steps", -1)) == len(points):
            complete.add(name)
    for rail in rails.values():
        if rail.voltage_v is None and rail.clock not in clocks:
            raise CosimError(f"{path}: rails.{rail.name} names clock '{rail.clock}' but clocks has no such table")
    fit = data.get("fit") or {}
    band = fit.get("error_band_pct")
    return RailModel(
        name=str(data.get("name", path.stem)),
        path=str(path),
        rails=rails,
        base_w=number(data, "base_w", "the file"),
        clocks=clocks,
        complete_tables=frozenset(complete),
        error_band_pct=float(band) if isinstance(band, (int, float)) else None,
        railgate_delay_s=number(data.get("gpu_idle") or {}, "railgate_delay_s", "gpu_idle"),
        transaction_bytes=dict(data.get("transaction_bytes") or {}),
        raw=data,
    )


def clock_voltage_v(model: RailModel, clock: str, freq_mhz: float) -> tuple[float, bool]:
    """Voltage [V] the clock needs at ``freq_mhz``, and whether it was interpolated.

    A frequency that is not a step of a complete table, or is outside the
    table's range, is a :class:`CosimError` naming the valid steps.
    """
    if clock not in model.clocks:
        raise CosimError(f"{model.name}: no V-f table for clock '{clock}'; tables: {', '.join(model.clocks)}")
    points = model.clocks[clock]
    table_f = np.array([p[0] for p in points])
    table_v = np.array([p[1] for p in points])
    if not np.isfinite(freq_mhz):
        raise CosimError(f"{clock} clock {freq_mhz} MHz is not a number; give one of {_steps(table_f)} MHz")
    near = np.abs(table_f - freq_mhz) <= FREQ_REL_TOL * table_f
    if near.any():
        return float(table_v[near.argmax()]), False
    if clock in model.complete_tables or not table_f[0] <= freq_mhz <= table_f[-1]:
        raise CosimError(f"{clock} clock {freq_mhz:g} MHz is not in the V-f table of {model.name}; choose one of {_steps(table_f)} MHz")
    return float(np.interp(freq_mhz, table_f, table_v)), True


def _steps(table_f: np.ndarray) -> str:
    return ", ".join(f"{f:g}" for f in table_f)


def rail_voltages_v(model: RailModel, *, gpu_mhz: float, emc_mhz: float, cpu_lp_mhz: float) -> dict[str, tuple[float, bool]]:
    """Voltage [V] (and interpolated?) of each rail at the given clocks [MHz].

    The core rail runs at the higher of the LP core's and the EMC clock's
    requirement; the memory rail has a fixed voltage.
    """
    gpu = clock_voltage_v(model, "gpu", gpu_mhz)
    emc = clock_voltage_v(model, "emc", emc_mhz)
    lp = clock_voltage_v(model, "cpu_lp", cpu_lp_mhz)
    core = max(emc, lp, key=lambda x: x[0])
    mem_v = model.rails["mem"].voltage_v
    out = {"gpu": gpu, "core": core, "mem": (mem_v, False) if mem_v is not None else emc}
    return out


def rail_power_w(
    rail: Rail, *, rates: Mapping[str, ArrayLike], voltage_v: ArrayLike, freq_mhz: float | None = None
) -> dict[str, np.ndarray]:
    """Power [W] of one rail, split into terms.

    Parameters
    ----------
    rail
        From :func:`load_rail_model`.
    rates
        Predictor -> occurrences per second [1/s] (``ipc`` is dimensionless);
        a predictor the rail has but ``rates`` lacks is an error.
    voltage_v
        Rail voltage [V].
    freq_mhz
        Rail clock [MHz], for the clock term and the clock offsets.

    Returns
    -------
    ``static_w`` (I*V), ``clock_w`` (C*f*V^2), ``offset_w``, ``term_<predictor>_w``
    (C*rho*V^2) and their sum ``power_w`` [W].
    """
    v = np.asarray(voltage_v, dtype=float)
    v2 = v * v
    out: dict[str, np.ndarray] = {}
    out["static_w"] = rail.leakage_a * v if rail.leakage_a is not None else np.zeros_like(v)
    if rail.clock_c is not None:
        if freq_mhz is None:
            raise CosimError(f"rail '{rail.name}' has a clock term; give its clock frequency")
        out["clock_w"] = rail.clock_c * freq_mhz * 1e6 * v2
    else:
        out["clock_w"] = np.zeros_like(v)
    offset = next((w for f, w in rail.offsets_w.items() if freq_mhz is not None and abs(f - freq_mhz) <= FREQ_REL_TOL * f), 0.0)
    out["offset_w"] = np.full(v.shape, offset)
    total = out["static_w"] + out["clock_w"] + out["offset_w"]
    for name, c in rail.coefficients.items():
        if name not in rates:
            raise CosimError(f"rail '{rail.name}' needs predictor '{name}' ({', '.join(rail.coefficients)})")
        term = c * np.asarray(rates[name], dtype=float) * v2
        out[f"term_{name}_w"] = term
        total = total + term
    out["power_w"] = total
    return out


def tegra_k1_power_w(
    model: RailModel,
    *,
    gpu_mhz: float,
    emc_mhz: float,
    voltages_v: Mapping[str, float],
    gpu_rates: Mapping[str, ArrayLike],
    mem_rates: Mapping[str, ArrayLike],
    core_rates: Mapping[str, ArrayLike],
) -> dict[str, dict[str, np.ndarray]]:
    """Every rail's terms (:func:`rail_power_w`) at the given clocks [MHz] and rail voltages [V].

    ``voltages_v`` maps ``gpu``/``mem``/``core`` to volts (from :func:`rail_voltages_v`);
    total power is the three ``power_w`` plus ``model.base_w`` (Eq. 8).
    """
    n = len(np.atleast_1d(next(iter(gpu_rates.values()))))
    return {
        "gpu": rail_power_w(model.rails["gpu"], rates=gpu_rates, voltage_v=np.full(n, voltages_v["gpu"]), freq_mhz=gpu_mhz),
        "mem": rail_power_w(model.rails["mem"], rates=mem_rates, voltage_v=np.full(n, voltages_v["mem"]), freq_mhz=emc_mhz),
        "core": rail_power_w(model.rails["core"], rates=core_rates, voltage_v=np.full(n, voltages_v["core"])),
    }


def energy_per_transaction_j(model: RailModel, source: str, voltage_v: float) -> tuple[float, float]:
    """Dynamic energy of one transaction and of one byte [J] (the paper's Table 4).

    ``source`` is ``"l2r"`` or ``"l1r"`` (GPU rail, at ``voltage_v``) or
    ``"mem"`` (a GPU memory cycle on the fixed memory rail; ``voltage_v`` ignored).
    Static and clock energy are excluded, as in Table 4.
    """
    if source == "mem":
        rail = model.rails["mem"]
        assert rail.voltage_v is not None  # the loader requires the memory rail's fixed voltage
        energy = rail.coefficients["other_busy"] * rail.voltage_v**2
        return energy, energy / model.transaction_bytes["mem_gpu"]
    energy = model.rails["gpu"].coefficients[source] * voltage_v**2
    return energy, energy / model.transaction_bytes[source]
