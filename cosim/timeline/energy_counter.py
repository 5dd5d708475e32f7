"""A GPU's energy counter (NVML ``nvmlDeviceGetTotalEnergyConsumption`` / nvidia-smi-like ``total_energy_consumption``,
DCGM ``TOTEC``, amd-smi ``energy``): the run's energy from it, with wraps and resets found.

The counter counts the board's energy since the driver loaded [J here; NVML and DCGM count mJ].  Between two readings
it rises by the energy drawn; a fall is a wrap (the counter passed its modulus: the rise plus the modulus matches the
integrated power) or a reset (the driver reloaded: that step's energy is taken from the integrated power instead).
Every result is cross-checked against the integrated power (trapezoid of the readings).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: moduli a counter may wrap at [J]: 32-bit counters of mJ, of 15.3 uJ (AMD's energy unit) and of uJ
MODULI_J = (2.0**32 * 1e-3, 2.0**32 * 15.3e-6, 2.0**32 * 1e-6)


@dataclass(frozen=True)
class CounterEnergy:
    total_j: float  # the energy over the log from the counter [J]
    cumulative_j: np.ndarray  # the unwrapped counter from the first reading [J]
    integrated_j: float  # the trapezoid of the power readings over the same span [J]
    wraps: int
    resets: int

    @property
    def difference(self) -> float:
        """(counter - integrated power) / integrated power."""
        return self.total_j / self.integrated_j - 1 if self.integrated_j > 0 else math.nan

    def between(self, times_s: np.ndarray, a_s: float, b_s: float) -> float:
        """The counter's energy between two times [J] (linear between readings)."""
        return float(np.interp(b_s, times_s, self.cumulative_j) - np.interp(a_s, times_s, self.cumulative_j))


def counter_energy(times_s: np.ndarray, counter_j: np.ndarray, power_w: np.ndarray) -> CounterEnergy:
    """The run's energy from an energy counter [J] read at ``times_s`` [s], beside the power readings [W]."""
    t = np.asarray(times_s, dtype=float)
    c = np.asarray(counter_j, dtype=float)
    p = np.asarray(power_w, dtype=float)
    ok = np.isfinite(c)
    t_ok, c_ok, p_ok = t[ok], c[ok], p[ok]
    steps = np.diff(c_ok)
    expected = np.diff(t_ok) * (p_ok[1:] + p_ok[:-1]) / 2
    wraps = resets = 0
    for i in np.flatnonzero(steps < 0):
        fits = [m for m in MODULI_J if abs(steps[i] + m - expected[i]) <= 0.5 * max(expected[i], 1e-9) + 1.0]
        if fits:
            steps[i] += fits[0]
            wraps += 1
        else:
            steps[i] = expected[i]
            resets += 1
    cumulative = np.r_[0.0, np.cumsum(steps)]
    full = np.interp(t, t_ok, cumulative)
    return CounterEnergy(float(cumulative[-1]), full, float(np.trapezoid(p_ok, t_ok)), wraps, resets)
