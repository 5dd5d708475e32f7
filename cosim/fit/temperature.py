"""The static form's temperature term, fitted on a board's measured rows (Powmon carries each row's die temperature).

Leakage grows with temperature (subthreshold current roughly doubles every 15-25 K).  A model fitted along a board's
V-f curve already holds the temperature the board had at each clock, so the term moves static power only where the
die is hotter or cooler than that: leakage x exp(kappa * (T - T_curve(f))), T_curve(f) the mean temperature of the
board's rows at each clock.  kappa [1/K] is least squares of the measured power's residual (measured - priced at
the curve's temperature) on the leakage times (T - T_curve(f)), the first-order term of that factor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cosim.errors import CosimError


@dataclass(frozen=True)
class TemperatureTerm:
    """What the model file's ``static_form.temperature`` states."""

    kappa_per_k: float  # [1/K]
    curve_mhz_c: tuple[tuple[float, float], ...]  # (clock [MHz], mean die temperature [°C] of the rows there)
    trained_c: tuple[float, float]  # lowest and highest die temperature of the rows [°C]


def fit_temperature_term(
    *, residual_w: np.ndarray, leakage_w: np.ndarray, freq_mhz: np.ndarray, temperature_c: np.ndarray
) -> TemperatureTerm:
    """The term from rows: ``residual_w`` measured - priced power [W] at the curve's temperature, ``leakage_w`` the
    form's leakage part b*V*e^(k(V-1)) [W] at each row, its clock [MHz] and die temperature [°C]."""
    f = np.asarray(freq_mhz, dtype=float)
    t = np.asarray(temperature_c, dtype=float)
    clocks = np.unique(f)
    means = np.array([t[f == c].mean() for c in clocks])
    x = np.asarray(leakage_w, dtype=float) * (t - np.interp(f, clocks, means))
    if not np.any(x):
        raise CosimError("the rows' die temperature does not vary at any clock: no temperature term can be fitted")
    kappa = float(x @ np.asarray(residual_w, dtype=float) / (x @ x))
    if kappa < 0:
        raise CosimError(f"leakage falls with temperature on these rows (kappa {kappa:.4g}/K): no physical temperature term")
    return TemperatureTerm(
        kappa_per_k=kappa,
        curve_mhz_c=tuple((float(c), float(m)) for c, m in zip(clocks, means)),
        trained_c=(float(t.min()), float(t.max())),
    )
