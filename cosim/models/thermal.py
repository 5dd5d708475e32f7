"""A core cluster's die temperature from its own power: one lumped thermal node to an ambient, the fan as a state.

    tau * dT/dt = T_amb + R(T) * P - T                        T [°C], P [W], R [K/W], tau [s]

    R(T) = R                 while T <= T_fan  (fan idle)
         = R * fan_factor    while T >  T_fan  (fan on: it holds the die near T_fan)

The form was chosen on the ODROID-XU3's ARMPM training programs (per-sample series, ~0.5 s apart): a second, slow
node (heat sink) fitted to zero gain, and one node without the fan left 1.6-2.0 K mean error where the fan holds the
die near 56 °C; with the fan state it is 0.5-1.4 K (docs/explanation/thermal.md).  R and the default ambient are
the steady state of Powmon's 30 s averages (T = T_amb + R * P_A15 over its 2,160 rows); tau and the fan from
ARMPM's series with R held.  The constants and their intervals (bootstrap by program) are in
``models/thermal-xu3.json`` (:func:`thermal_for`).

Domain, stated once: the XU3's A15 cluster (the die sensors are the A15 cores'), power 0-8 W, die 30-90 °C, the
cluster's power P alone (the A7, memory and GPU rails add little: their fit coefficient moved R by 6 %).  The
ambient is a property of a board's session (ARMPM's sessions: 29-51 °C; the A7, memory and GPU heat is in it):
a run states it (``--ambient-c``) or gets the default, flagged.  Between epochs the state is solved exactly for
constant power (an exponential step); within an epoch, the leakage-temperature loop by fixed point
(:mod:`cosim.timeline.temperature`).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cosim.errors import CosimError
from cosim.models.modelfile import shipped_models_dir

THERMAL_FILE = shipped_models_dir() / "thermal-xu3.json"  # beside the model files, in the repository or installed
THERMAL_SCHEMA = "cosim-thermal/1"  # the file's "schema": thermal constants, not a model file (models/README.md)


@dataclass(frozen=True)
class Thermal:
    """One cluster's thermal constants (module docstring) and where they come from."""

    r_k_per_w: float  # thermal resistance die -> ambient, fan idle [K/W]
    tau_s: float  # time constant [s]
    ambient_c: float  # default ambient [°C] (the Powmon session's; a run may state its own)
    fan_on_c: float | None = None  # die temperature above which the fan runs [°C]; None: no fan hold
    fan_factor: float = 1.0  # R's multiplier while the fan runs
    name: str = ""  # the board and cluster, for messages

    def r_at(self, temperature_c) -> np.ndarray:
        """R [K/W] at die temperature(s) [°C]: the fan's state decides it."""
        t = np.asarray(temperature_c, dtype=float)
        if self.fan_on_c is None:
            return np.full(t.shape, self.r_k_per_w)
        return np.where(t > self.fan_on_c, self.r_k_per_w * self.fan_factor, self.r_k_per_w)


def steady_c(thermal: Thermal, power_w, *, ambient_c: float | None = None) -> np.ndarray:
    """Steady die temperature [°C] at constant power [W]: T_amb + R * P, or with the fan on, never below its
    threshold while the fan idle would exceed it (the fan holds the die at T_fan)."""
    p = np.asarray(power_w, dtype=float)
    amb = thermal.ambient_c if ambient_c is None else ambient_c
    idle = amb + thermal.r_k_per_w * p
    if thermal.fan_on_c is None:
        return idle
    fan = np.maximum(amb + thermal.r_k_per_w * thermal.fan_factor * p, thermal.fan_on_c)
    return np.where(idle > thermal.fan_on_c, fan, idle)


def step_c(thermal: Thermal, start_c, power_w, duration_s, *, ambient_c: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(end, mean)`` die temperature [°C] after ``duration_s`` [s] at constant ``power_w`` [W] from ``start_c``
    [°C]: the exact solution of the node's equation with R at the start's fan state."""
    t0 = np.asarray(start_c, dtype=float)
    p = np.asarray(power_w, dtype=float)
    dt = np.asarray(duration_s, dtype=float)
    amb = thermal.ambient_c if ambient_c is None else ambient_c
    target = amb + thermal.r_at(t0) * p
    x = dt / thermal.tau_s
    decay = np.exp(-x)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_share = np.where(x > 1e-9, (1 - decay) / np.where(x > 1e-9, x, 1.0), 1.0 - x / 2)
    end = target + (t0 - target) * decay
    mean = target + (t0 - target) * mean_share
    return end, mean


def series_c(thermal: Thermal, power_w, duration_s, *, start_c: float, ambient_c: float | None = None) -> np.ndarray:
    """Mean die temperature [°C] over each of a series of intervals [s] at their power [W], from ``start_c`` [°C]
    (sequential; plain floats, ~1 us an interval)."""
    p = np.asarray(power_w, dtype=float).tolist()
    dt = np.asarray(duration_s, dtype=float).tolist()
    amb = thermal.ambient_c if ambient_c is None else ambient_c
    r, tau, fan_on, fan_r = thermal.r_k_per_w, thermal.tau_s, thermal.fan_on_c, thermal.r_k_per_w * thermal.fan_factor
    out = [0.0] * len(p)
    x = float(start_c)
    for i, (pi, di) in enumerate(zip(p, dt)):
        target = amb + (fan_r if fan_on is not None and x > fan_on else r) * pi
        if not (math.isfinite(pi) and math.isfinite(di)) or di <= 0:
            out[i] = x
            continue
        a = di / tau
        decay = math.exp(-a)
        out[i] = target + (x - target) * ((1 - decay) / a if a > 1e-9 else 1.0)
        x = target + (x - target) * decay
    return np.array(out)


@functools.lru_cache(maxsize=4)
def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise CosimError(f"{path}: cannot read the thermal constants ({exc}); restore it from the cosim repository") from None


def thermal_for(model, *, path: Path = THERMAL_FILE, fan: str | None = None) -> Thermal | None:
    """The thermal constants of the cluster ``model`` prices (by its name, ``applies_to`` in the file), or None where
    no board's temperature decides them (:func:`cluster_thermal`)."""
    for name, block in _read(path).get("clusters", {}).items():
        if model.name in block.get("applies_to", ()):
            return cluster_thermal(name, path=path, fan=fan)
    return None


def cluster_thermal(name: str, *, path: Path = THERMAL_FILE, fan: str | None = None) -> Thermal:
    """The constants of cluster ``name`` in the file (``xu3-a15``).  ``fan``: the session whose fan to use
    (``armpm``: that board's fan held its die near its threshold; default ``powmon``, whose die reached 87.6 °C
    with no hold)."""
    block = _read(path).get("clusters", {}).get(name)
    if block is None:
        raise CosimError(f"{path}: no thermal constants for cluster '{name}'; restore the file from the cosim repository")
    try:
        chosen = block.get("fan", {}).get(fan or block.get("default_fan", ""))
        return Thermal(
            r_k_per_w=float(block["r_k_per_w"]["value"]),
            tau_s=float(block["tau_s"]["value"]),
            ambient_c=float(block["ambient_c"]["value"]),
            fan_on_c=None if chosen is None else float(chosen["on_c"]),
            fan_factor=1.0 if chosen is None else float(chosen["factor"]),
            name=name,
        )
    except (KeyError, TypeError, ValueError):
        raise CosimError(f"{path}: cluster '{name}' needs r_k_per_w, tau_s and ambient_c, each with a value (models/README.md)") from None
