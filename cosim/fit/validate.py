"""k-fold cross-validation (by row or grouped by workload), prediction-interval coverage,
and the reduced experiment of Walker et al. Section VI."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cosim.errors import CosimError
from cosim.fit.design import FitTable, Term, static_terms_for, walker_design
from cosim.fit.ols import fit_ols_hc3


@dataclass(frozen=True)
class CVResult:
    k: int
    grouped_by: str | None
    mape_pct: float
    mse_w2: float
    rmse_w: float
    pi95_coverage: float  # share of held-out rows inside their 95 % prediction interval
    per_row_error_pct: np.ndarray  # signed, held-out

    def as_dict(self) -> dict:
        return {
            "k": self.k,
            "grouped_by": self.grouped_by,
            "mape_pct": round(self.mape_pct, 4),
            "mse_w2": self.mse_w2,
            "rmse_w": self.rmse_w,
            "pi95_coverage": round(self.pi95_coverage, 4),
            # held-out relative errors [%]: their root mean square and mean (the spread and bias an interval needs)
            "rms_pct": round(float(np.sqrt(np.mean(self.per_row_error_pct**2))), 4),
            "bias_pct": round(float(np.mean(self.per_row_error_pct)), 4),
        }


def folds(n: int, k: int, *, groups: np.ndarray | None = None, seed: int = 0) -> list[np.ndarray]:
    """Held-out row indices of each of ``k`` folds; with ``groups``, whole groups are held out together."""
    rng = np.random.default_rng(seed)
    if groups is None:
        return list(np.array_split(rng.permutation(n), k))
    names = rng.permutation(np.unique(groups))
    if len(names) < k:
        raise CosimError(f"{len(names)} groups cannot make {k} folds; use fewer folds")
    return [np.flatnonzero(np.isin(groups, part)) for part in np.array_split(names, k)]


def cross_validate(table: FitTable, terms: Sequence[Term], *, k: int = 10, group_by: str | None = None, seed: int = 0) -> CVResult:
    """Fit on k-1 folds, predict the held-out one, for every fold; errors over all held-out rows."""
    static = static_terms_for(table)
    X = walker_design(table, terms, static)
    groups = table.groups[group_by].to_numpy() if group_by else None
    predicted = np.empty(len(table))
    inside = np.zeros(len(table), dtype=bool)
    for test in folds(len(table), k, groups=groups, seed=seed):
        train = np.setdiff1d(np.arange(len(table)), test)
        fit = fit_ols_hc3(X.iloc[train], table.power_w[train])
        predicted[test] = fit.predict(X.iloc[test])
        lo, hi = fit.prediction_interval(X.iloc[test], 0.95)
        inside[test] = (table.power_w[test] >= lo) & (table.power_w[test] <= hi)
    error = predicted - table.power_w
    mse = float(np.mean(error**2))
    return CVResult(
        k=k,
        grouped_by=group_by,
        mape_pct=float(np.mean(np.abs(error) / np.abs(table.power_w)) * 100),
        mse_w2=mse,
        rmse_w=float(np.sqrt(mse)),
        pi95_coverage=float(inside.mean()),
        per_row_error_pct=error / table.power_w * 100,
    )


@dataclass(frozen=True)
class ReducedExperiment:
    train_freq_mhz: float
    train_rows: int
    full_rows: int
    mape_reduced_pct: float  # validated on every row
    mape_full_pct: float  # the fit on every row, same validation

    @property
    def extra_error_pct(self) -> float:
        return self.mape_reduced_pct - self.mape_full_pct


def reduced_experiment(table: FitTable, terms: Sequence[Term], *, train_freq_mhz: float, idle: np.ndarray) -> ReducedExperiment:
    """Section VI: run the workloads at one DVFS level only, plus idle at every level; validate at all levels.

    ``idle`` marks the idle rows (kept at every frequency); workload rows are kept
    only at ``train_freq_mhz``.  Both fits are scored on every row, so the
    difference is what the shorter experiment costs.
    """
    static = static_terms_for(table)
    X = walker_design(table, terms, static)
    rows = np.flatnonzero(idle | np.isclose(table.freq_mhz, train_freq_mhz))
    if not idle.any() or len(np.unique(table.freq_mhz[idle])) < 2:
        raise CosimError("the reduced experiment needs idle rows at several frequencies")
    reduced = fit_ols_hc3(X.iloc[rows], table.power_w[rows])
    full = fit_ols_hc3(X, table.power_w)

    def mape(fit) -> float:
        return float(np.mean(np.abs(fit.predict(X) - table.power_w) / table.power_w) * 100)

    return ReducedExperiment(train_freq_mhz, len(rows), len(table), mape(reduced), mape(full))
