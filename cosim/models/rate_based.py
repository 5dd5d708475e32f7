"""The rate-based baseline of Stokke et al. (Eq. 1): P = beta_0 + sum_i beta_i * rho_i.

beta_i [W s] is a cost per access and rho_i an access rate [1/s]; there is no
voltage, clock or leakage term.  Fitted at one operating point it absorbs that
point's V^2, clock and leakage power into its coefficients, so it mispredicts at
other GPU and memory clocks (the paper's Fig. 1a).  :func:`synthetic_sweep`
makes the activity to show it with the shipped rail model as ground truth.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.models.tegrak1 import RailModel, rail_voltages_v, tegra_k1_power_w

# The GPU activity predictors of Table 1 (the paper leaves out memory, clock and leakage for Eq. 1).
RATE_PREDICTORS = ("l2r", "l1r", "l1w", "int", "f32", "f64", "cnv", "msc")


@dataclass(frozen=True)
class RateBasedModel:
    beta0_w: float
    betas_ws: Mapping[str, float]  # predictor -> W s per access
    trained_at: Mapping[str, float]  # clocks [MHz] of the training data


def rate_based_power_w(model: RateBasedModel, rates: Mapping[str, np.ndarray] | pd.DataFrame) -> np.ndarray:
    """Eq. 1: beta_0 + sum_i beta_i * rho_i [W]; ``rates`` in accesses per second."""
    total = np.asarray(model.beta0_w, dtype=float)
    for name, beta in model.betas_ws.items():
        total = total + beta * np.asarray(rates[name], dtype=float)
    return total


def fit_rate_based(rates: pd.DataFrame, power_w: np.ndarray, *, trained_at: Mapping[str, float] | None = None) -> RateBasedModel:
    """Least-squares fit of Eq. 1 on per-sample rates [1/s] and measured power [W]."""
    cols = [p for p in RATE_PREDICTORS if p in rates.columns]
    X = np.column_stack([np.ones(len(rates))] + [rates[c].to_numpy(dtype=float) for c in cols])
    if np.linalg.matrix_rank(X) < X.shape[1]:
        raise CosimError("rate-based fit: the training activity does not vary every predictor independently")
    coef, *_ = np.linalg.lstsq(X, np.asarray(power_w, dtype=float), rcond=None)
    return RateBasedModel(
        beta0_w=float(coef[0]), betas_ws=dict(zip(cols, map(float, coef[1:]), strict=True)), trained_at=dict(trained_at or {})
    )


# Synthetic benchmarks in the spirit of the paper's Table 2: events per GPU cycle, the share of
# L2 reads that miss to DRAM ("miss"), and how memory-bound each is (stall factor: GPU
# throughput falls as f_gpu / f_emc grows).
SYNTHETIC_BENCHMARKS: dict[str, dict[str, float]] = {
    "idle_gpu": {},
    "l2_read": {"l2r": 0.25, "int": 8, "msc": 2, "mem_stall": 0.1},
    "l1_read": {"l1r": 0.40, "l2r": 0.05, "int": 8, "msc": 2, "mem_stall": 0.1},
    "l1_write": {"l1w": 0.30, "l1r": 0.05, "int": 8, "msc": 2, "mem_stall": 0.1},
    "ram": {"l2r": 0.15, "int": 6, "msc": 2, "miss": 1.0, "mem_stall": 1.0},
    "integer": {"int": 120, "msc": 6},
    "float32": {"f32": 150, "int": 10, "msc": 4},
    "float64": {"f64": 7, "int": 4, "msc": 2},
    "conversion": {"cnv": 24, "int": 12, "msc": 4},
    "misc": {"msc": 60, "int": 8},
    "motion_estimation": {"int": 70, "l1r": 0.20, "l1w": 0.05, "l2r": 0.08, "msc": 20, "cnv": 4, "miss": 0.5, "mem_stall": 0.4},
}


def synthetic_sweep(
    model: RailModel,
    *,
    benchmarks: Sequence[str] | None = None,
    gpu_mhz: Sequence[float] | None = None,
    emc_mhz: Sequence[float] | None = None,
) -> pd.DataFrame:
    """Activity rates and rail-model power for benchmarks over GPU x EMC clocks.

    Events per GPU cycle are fixed per benchmark; the achieved GPU cycle rate
    falls with memory stalls as f_gpu / (1 + stall * f_gpu / f_emc), and each
    L2 read that misses costs 32 B / 8 B = 4 GPU memory cycles (at most 90 % of
    the EMC clock).  Power is the shipped
    rail model (GPU + memory + core with an idle LP core + base).
    """
    names = list(benchmarks or SYNTHETIC_BENCHMARKS)
    gpu_mhz = list(gpu_mhz or [f for f, _ in model.clocks["gpu"]])
    emc_mhz = list(emc_mhz or [f for f, _ in model.clocks["emc"]])
    rows = []
    for name in names:
        spec = SYNTHETIC_BENCHMARKS[name]
        for fg in gpu_mhz:
            for fe in emc_mhz:
                active = fg * 1e6 / (1.0 + spec.get("mem_stall", 0.0) * fg / fe)
                rates = {p: spec.get(p, 0.0) * active for p in RATE_PREDICTORS}
                rates["mem_other_busy"] = min(4.0 * spec.get("miss", 0.0) * rates["l2r"], 0.9 * fe * 1e6)
                rows.append({"benchmark": name, "gpu_mhz": fg, "emc_mhz": fe} | rates)
    table = pd.DataFrame(rows)
    table["power_w"] = rail_model_power_w(model, table)
    return table


def rail_model_power_w(model: RailModel, table: pd.DataFrame) -> np.ndarray:
    """Rail-model total power [W] per row of a table of clocks and rates (LP core idle at 1092 MHz)."""
    out = np.empty(len(table))
    for (fg, fe), idx in table.groupby(["gpu_mhz", "emc_mhz"]).groups.items():
        part = table.loc[idx]
        volts = {rail: v for rail, (v, _) in rail_voltages_v(model, gpu_mhz=fg, emc_mhz=fe, cpu_lp_mhz=1092.0).items()}
        zero = np.zeros(len(part))
        rails = tegra_k1_power_w(
            model,
            gpu_mhz=fg,
            emc_mhz=fe,
            voltages_v=volts,
            gpu_rates={p: part[p] for p in RATE_PREDICTORS},
            mem_rates={"cpu_busy": zero, "other_busy": part["mem_other_busy"]},
            core_rates={"ipc": zero, "active_cycles": zero},
        )
        out[table.index.get_indexer(idx)] = sum(r["power_w"] for r in rails.values()) + model.base_w
    return out


def rate_based_error_map(model: RailModel, *, train_gpu_mhz: float, train_emc_mhz: float, test: str = "motion_estimation") -> pd.DataFrame:
    """Fit Eq. 1 on the synthetic benchmarks at one operating point; error [%] of ``test`` at every GPU x EMC clock.

    Error = (rate-based - rail model) / rail model * 100: negative is an underestimate.
    """
    train_names = [b for b in SYNTHETIC_BENCHMARKS if b != test]
    train = synthetic_sweep(model, benchmarks=train_names, gpu_mhz=[train_gpu_mhz], emc_mhz=[train_emc_mhz])
    fitted = fit_rate_based(train, train["power_w"].to_numpy(), trained_at={"gpu_mhz": train_gpu_mhz, "emc_mhz": train_emc_mhz})
    sweep = synthetic_sweep(model, benchmarks=[test])
    sweep["rate_based_w"] = rate_based_power_w(fitted, sweep)
    sweep["error_pct"] = 100.0 * (sweep["rate_based_w"] - sweep["power_w"]) / sweep["power_w"]
    sweep.attrs["fitted"] = fitted
    return sweep
