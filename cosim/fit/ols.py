"""Ordinary least squares with HC3 standard errors, and the statistics Walker et al. report.

statsmodels does the regression (as in the authors' own tooling): it is an
optional dependency, ``pip install 'cosim[fit]'``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from cosim.errors import CosimError


def _ols():
    """statsmodels' OLS, from its module: ``statsmodels.api`` imports every model it has (0.5 CPU s more a process)."""
    try:
        from statsmodels.regression.linear_model import OLS
    except ImportError:
        raise CosimError("fitting needs statsmodels: pip install 'cosim[fit]'") from None
    return OLS


@dataclass
class OLSFit:
    """An OLS fit with HC3 (heteroscedasticity-consistent) inference."""

    columns: list[str]
    results: Any  # statsmodels RegressionResults (HC3)
    n_obs: int

    @property
    def params(self) -> pd.Series:
        return self.results.params

    def table(self) -> pd.DataFrame:
        """Coefficient, HC3 std error, p-value and 90/95/99 % confidence intervals per column."""
        out = pd.DataFrame({"coefficient": self.results.params, "std_err": self.results.bse, "p_value": self.results.pvalues})
        for level in (90, 95, 99):
            ci = self.results.conf_int(alpha=1 - level / 100)
            out[f"ci{level}_lo"], out[f"ci{level}_hi"] = ci[0], ci[1]
        return out

    def summary(self) -> dict[str, float]:
        """R^2, adjusted R^2, the classical F test against the intercept-only model, and SER [W].

        F is the classical one, as the paper reports: the HC3 Wald F is ill-conditioned
        when the static polynomial terms are nearly collinear, as they are by design.
        """
        from scipy import stats

        r = self.results
        k = len(self.columns) - 1  # predictors besides the intercept
        dof = self.n_obs - len(self.columns)
        f_value = (r.rsquared / k) / ((1 - r.rsquared) / dof)
        return {
            "n_obs": self.n_obs,
            "r2": float(r.rsquared),
            "adj_r2": float(r.rsquared_adj),
            "f_statistic": float(f_value),
            "f_p_value": float(stats.f.sf(f_value, k, dof)),
            "ser_w": float(np.sqrt(r.scale)),
        }

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return np.asarray(X[self.columns].to_numpy() @ self.params.to_numpy())

    def prediction_interval(self, X: pd.DataFrame, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Prediction interval for new observations [W]: parameter uncertainty plus residual spread."""
        frame = self.results.get_prediction(X[self.columns]).summary_frame(alpha=1 - level)
        return frame["obs_ci_lower"].to_numpy(), frame["obs_ci_upper"].to_numpy()


def fit_ols_hc3(X: pd.DataFrame, y: np.ndarray) -> OLSFit:
    """OLS of ``y`` on the columns of ``X`` (which carries its own intercept column), HC3 errors."""
    ols = _ols()
    collinear = _collinear(X)
    if collinear:
        raise CosimError(f"the model inputs are exactly collinear: {', '.join(collinear)}; drop or transform one of them")
    model = ols(np.asarray(y, dtype=float), X, hasconst=True)
    with warnings.catch_warnings():
        # statsmodels tests rank on the unscaled matrix (events ~1e9 beside an intercept of 1)
        # and calls sound designs singular; _collinear above is the scaled test that counts
        warnings.simplefilter("ignore", category=UserWarning)
        results = model.fit(cov_type="HC3")
    return OLSFit(columns=list(X.columns), results=results, n_obs=len(y))


def vif(X: pd.DataFrame) -> pd.Series:
    """Variance inflation factor of each column: 1 / (1 - R^2 of it regressed on the others + intercept)."""
    values = {}
    data = X.to_numpy(dtype=float)
    for j, name in enumerate(X.columns):
        others = np.delete(data, j, axis=1)
        A = np.column_stack([np.ones(len(data)), others])
        coef, *_ = np.linalg.lstsq(A, data[:, j], rcond=None)
        resid = data[:, j] - A @ coef
        ss_tot = np.sum((data[:, j] - data[:, j].mean()) ** 2)
        r2 = 1 - np.sum(resid**2) / ss_tot if ss_tot > 0 else 1.0
        values[name] = np.inf if r2 >= 1 else 1 / (1 - r2)
    return pd.Series(values)


def r_squared(X: np.ndarray, y: np.ndarray) -> float:
    """R^2 of a least-squares fit (X must hold its intercept column); fast, for event selection."""
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ coef
    return float(1 - resid @ resid / np.sum((y - y.mean()) ** 2))


def _collinear(X: pd.DataFrame, rel_tol: float = 1e-12) -> list[str]:
    """Columns taking part in an exact linear dependency, found in the null space of the column-scaled matrix.

    Scaling matters: event columns are ~1e9 and the intercept is 1, so an unscaled
    rank test would call well-posed designs singular.
    """
    data = X.to_numpy(dtype=float)
    scaled = data / np.maximum(np.abs(data).max(axis=0), 1e-300)
    _, s, vt = np.linalg.svd(scaled, full_matrices=False)
    null = vt[s <= s.max() * rel_tol]
    if not len(null):
        return []
    involved = np.abs(null).max(axis=0) > 1e-6
    return [c for c, hit in zip(X.columns, involved) if hit]
