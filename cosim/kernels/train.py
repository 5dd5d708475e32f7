"""Per-kernel-type runtime and power models: gradient-boosted trees on kernel parameters, input
shape and DVFS configuration, log-transformed targets, hyper-parameters chosen by
leave-one-board-out cross-validation within a stated budget (Section 4.3).

scikit-learn's HistGradientBoostingRegressor does the boosting (optional extra
``[kernels]``): it is XGBoost's algorithm family, installs without a compiler, and is
fast enough on a 2-core machine for the data sizes here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.kernels.log import FREQS

TARGETS = {"runtime": "runtime_ms", "power": "power_w"}
# The search space, a reduced version of the paper's Table 2 for scikit-learn's booster
SPACE = {
    "max_iter": (100, 400),
    "max_depth": (5, 11),
    "min_samples_leaf": (5, 20),
    "learning_rate": (0.03, 0.2),
    "l2_regularization": (1e-4, 1e-2),
}


def _sk():
    from cosim.kernels.extra import require_extra

    require_extra("sklearn")
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor


def features(log: pd.DataFrame) -> pd.DataFrame:
    """Model inputs: parameters, input dims, input size, a multiply-accumulate estimate, and the three clocks [MHz].

    The estimate uses only the parameters (no knowledge of the implementation): trees
    cannot multiply, and runtime follows the product of the dimensions.
    """
    cols = [c for c in log.columns if (c.startswith("p_") or (c.startswith("in") and c[2:].isdigit())) and log[c].notna().any()]
    X = log[cols + list(FREQS)].astype(float).copy()
    dims = [c for c in cols if c.startswith("in")]
    numel = np.prod(log[dims].fillna(1).to_numpy(dtype=float), axis=1) if dims else np.ones(len(log))
    X["numel"] = numel
    if {"p_cout", "p_k", "p_stride"} <= set(cols):  # convolution: input x out channels x window / stride^2
        X["macs"] = numel * X["p_cout"] * X["p_k"] ** 2 / X["p_stride"] ** 2
    elif "p_n" in cols:  # matrix multiply: m x k x n
        X["macs"] = numel * X["p_n"]
    elif "p_k" in cols:  # pooling window
        X["macs"] = numel * X["p_k"] ** 2
    return X


def _sample_params(rng: np.random.Generator) -> dict:
    p: dict[str, float] = {}
    for name, (lo, hi) in SPACE.items():
        if isinstance(lo, int):
            p[name] = int(rng.integers(int(lo), int(hi) + 1))
        else:
            p[name] = float(np.exp(rng.uniform(np.log(lo), np.log(hi))))
    return p


@dataclass
class KernelModel:
    kernel: str
    columns: list[str]
    runtime: Any  # a fitted scikit-learn regressor
    power: Any
    params: dict = field(default_factory=dict)
    cv_rmse_log: dict = field(default_factory=dict)

    def predict(self, log: pd.DataFrame) -> pd.DataFrame:
        X = features(log).reindex(columns=self.columns)
        return pd.DataFrame({"runtime_ms": np.exp(self.runtime.predict(X)), "power_w": np.exp(self.power.predict(X))}, index=log.index)


def fit_kernel(log: pd.DataFrame, kernel: str, *, budget: int = 4, seed: int = 0) -> KernelModel:
    """Fit the runtime and power models of one kernel type; ``budget`` hyper-parameter sets are tried,
    each scored by leave-one-board-out CV (RMSE of the log target, averaged over the held-out boards)."""
    model_cls = _sk()
    rows = log[log["kernel"] == kernel]
    if rows.empty:
        raise CosimError(f"no rows of kernel type '{kernel}'; types in the log: {', '.join(sorted(log['kernel'].unique()))}")
    X = features(rows)
    boards = rows["board"].to_numpy()
    rng = np.random.default_rng(seed)
    out = KernelModel(kernel=kernel, columns=list(X.columns), runtime=None, power=None)
    for target, col in TARGETS.items():
        y = np.log(rows[col].to_numpy(dtype=float))
        candidates = [dict(max_iter=300, max_depth=8, min_samples_leaf=10, learning_rate=0.1, l2_regularization=1e-3)]
        candidates += [_sample_params(rng) for _ in range(max(0, budget - 1))]
        if len(candidates) == 1:  # nothing to choose between: no cross-validation needed
            best, best_score = candidates[0], float("nan")
        else:
            scores = [_lobo_rmse(model_cls, params, X, y, boards, seed) for params in candidates]
            best_score = min(scores)
            best = candidates[scores.index(best_score)]
        final = model_cls(**best, random_state=seed).fit(X, y)
        setattr(out, target, final)
        out.params[target] = best
        out.cv_rmse_log[target] = best_score
    return out


def _lobo_rmse(model_cls, params, X, y, boards, seed) -> float:
    """Leave-one-board-out: mean RMSE (log target) over held-out boards."""
    unique = np.unique(boards)
    if len(unique) < 2:
        raise CosimError("leave-one-board-out needs data from at least two boards")
    scores = []
    for board in unique:
        test = boards == board
        model = model_cls(**params, random_state=seed).fit(X[~test], y[~test])
        scores.append(float(np.sqrt(np.mean((model.predict(X[test]) - y[test]) ** 2))))
    return float(np.mean(scores))


@dataclass
class KernelModels:
    """One :class:`KernelModel` per kernel type."""

    models: dict[str, KernelModel]

    def predict(self, log: pd.DataFrame) -> pd.DataFrame:
        unknown = sorted(set(log["kernel"]) - set(self.models))
        if unknown:
            trained = f"models exist for {', '.join(sorted(self.models))}" if self.models else "no kernel type was trained"
            raise CosimError(f"no model for kernel type(s) {', '.join(unknown)}; {trained} (from the training boards' launches)")
        out = pd.DataFrame(index=log.index, columns=["runtime_ms", "power_w"], dtype=float)
        for kernel, rows in log.groupby("kernel"):
            out.loc[rows.index] = self.models[kernel].predict(rows).to_numpy()
        return out


def fit_kernels(
    log: pd.DataFrame,
    kernels: list[str] | None = None,
    *,
    budget: int = 4,
    seed: int = 0,
    each: Callable[[Iterable[str]], Iterator[str]] | None = None,
) -> KernelModels:
    """One model per kernel type; ``each`` wraps the loop over types (progress, :mod:`cosim.progress`)."""
    kernels = kernels or sorted(log["kernel"].unique())
    return KernelModels({k: fit_kernel(log, k, budget=budget, seed=seed) for k in (each or iter)(kernels)})


def prediction_overhead_s(model: KernelModel, rows: pd.DataFrame, *, batch: int, repeats: int = 50) -> float:
    """Wall time per predicted launch [s] when predicting ``batch`` launches at a time (runtime and power)."""
    sample = rows.iloc[:batch]
    if len(sample) < batch:
        raise CosimError(f"need {batch} rows to time a batch of {batch}")
    model.predict(sample)  # warm up
    start = time.perf_counter()
    for _ in range(repeats):
        model.predict(sample)
    return (time.perf_counter() - start) / repeats / batch
