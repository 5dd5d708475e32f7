"""Rail-model fitting (Stokke et al., Tegra K1, Section 5.2).

Per rail R: every dynamic predictor rho (occurrences/s) is multiplied by V_R^2
(switching capacitance C per occurrence), the leakage predictor is V_R itself
(leakage current I), and named frequencies may get a constant power offset (the
Tegra K1 memory rail at 204 and 300 MHz).  One regression on total power gives
every rail's coefficients plus the base power; with measured power per rail,
each rail is regressed on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.fit.ols import OLSFit, fit_ols_hc3


@dataclass(frozen=True)
class RailSpec:
    """Columns of one rail in the measured table."""

    name: str
    voltage_col: str
    predictors: Sequence[str]  # rates [1/s]
    leakage: bool = True  # False where the rail voltage does not vary (memory rail of the TK1)
    freq_col: str | None = None
    offsets_mhz: Sequence[float] = ()  # frequencies with their own constant power offset
    power_col: str | None = None  # measured rail power, for per-rail regression


@dataclass
class RailFit:
    rails: list[RailSpec]
    fits: dict[str, OLSFit]  # "total", or one per rail
    columns: dict[str, list[str]] = field(default_factory=dict)

    def coefficients(self) -> pd.DataFrame:
        return pd.concat({name: fit.table() for name, fit in self.fits.items()}, names=["regression", "term"])


def rail_design(table: pd.DataFrame, rail: RailSpec) -> pd.DataFrame:
    """The rail's columns: ``R:rho*V^2`` per predictor, ``R:leak`` (= V), ``R:offset@F`` indicators."""
    missing = [c for c in (rail.voltage_col, *rail.predictors, rail.freq_col) if c and c not in table.columns]
    if missing:
        raise CosimError(f"rail '{rail.name}': missing column(s) {', '.join(missing)}")
    v = table[rail.voltage_col].to_numpy(dtype=float)
    cols = {f"{rail.name}:{p}*V^2": table[p].to_numpy(dtype=float) * v**2 for p in rail.predictors}
    if rail.leakage:
        if np.ptp(v) == 0:
            raise CosimError(f"rail '{rail.name}': voltage never changes, so leakage cannot be told from base power; set leakage off")
        cols[f"{rail.name}:leak"] = v
    if rail.offsets_mhz:
        if rail.freq_col is None:
            raise CosimError(f"rail '{rail.name}': offsets need the rail's frequency column")
        f = table[rail.freq_col].to_numpy(dtype=float)
        for mhz in rail.offsets_mhz:
            cols[f"{rail.name}:offset@{mhz:g}"] = np.isclose(f, mhz).astype(float)
    return pd.DataFrame(cols, index=table.index)


def fit_rail(table: pd.DataFrame, rails: Sequence[RailSpec], *, power_col: str | None = None) -> RailFit:
    """Fit the rail model: on total power (``power_col``), or per rail when every rail names its power column."""
    designs = {rail.name: rail_design(table, rail) for rail in rails}
    if power_col is not None:
        X = pd.concat([pd.Series(1.0, index=table.index, name="base"), *designs.values()], axis=1)
        fit = fit_ols_hc3(X, table[power_col].to_numpy(dtype=float))
        return RailFit(list(rails), {"total": fit}, {"total": list(X.columns)})
    if not all(r.power_col for r in rails):
        raise CosimError("give the total power column, or a power column for every rail")
    fits = {}
    for rail in rails:
        X = pd.concat([pd.Series(1.0, index=table.index, name="base"), designs[rail.name]], axis=1)
        fits[rail.name] = fit_ols_hc3(X, table[rail.power_col].to_numpy(dtype=float))
    return RailFit(list(rails), fits, {n: f.columns for n, f in fits.items()})
