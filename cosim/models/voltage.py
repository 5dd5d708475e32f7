"""Evaluating a CPU voltage model (Walker et al. Section VIII); fitting it is cosim.fit.voltage."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cosim.errors import CosimError
from cosim.models.clocks import FREQ_REL_TOL
from cosim.models.walker import cluster_power_w


def load_voltage(points: Sequence[Sequence[float]] | np.ndarray, freq_mhz: np.ndarray, p_dyn_at_target_w: np.ndarray) -> np.ndarray:
    """Voltage under load [V] from the voltage model table, for each row's frequency."""
    table = np.asarray(points, dtype=float)
    f = np.asarray(freq_mhz, dtype=float)
    idx = np.abs(f[:, None] - table[None, :, 0]).argmin(axis=1)
    off = np.abs(table[idx, 0] - f) > FREQ_REL_TOL * table[idx, 0]
    if np.any(off):
        missing = sorted(set(np.round(f[off], 1)))
        raise CosimError(f"the voltage model has no entry for {', '.join(map(str, missing))} MHz; it is fitted per frequency")
    return table[idx, 1] + table[idx, 2] * np.asarray(p_dyn_at_target_w)


def voltage_under_load(model, freq_mhz: np.ndarray, eph) -> np.ndarray:
    """Walker Section VIII: the model's dynamic power at the target voltage -> voltage under load [V]."""
    if model.voltage_model is None:
        raise CosimError(f"{model.path}: model {model.name} has no voltage_model; fit one with cosim fit --idle, or drop --voltage-model")
    points = np.array(model.voltage_model)
    target = load_voltage(points, freq_mhz, np.zeros(len(freq_mhz)))
    p_dyn = cluster_power_w(eph, freq_mhz, target, model.dynamic, ())["dynamic_w"]
    return load_voltage(points, freq_mhz, p_dyn)
