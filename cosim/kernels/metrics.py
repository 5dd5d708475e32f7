"""Accuracy metrics as the Jetson AGX paper reports them, and network-level aggregation (Section 6.2)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def accuracy(predicted, measured) -> dict[str, float]:
    """% of predictions within 5/10/15/20 % of the measurement, RMSE and MAE (in the data's units)."""
    p = np.asarray(predicted, dtype=float)
    m = np.asarray(measured, dtype=float)
    rel = np.abs(p - m) / np.abs(m)
    out = {f"within_{t}pct": float(np.mean(rel <= t / 100) * 100) for t in (5, 10, 15, 20)}
    out["rmse"] = float(np.sqrt(np.mean((p - m) ** 2)))
    out["mae"] = float(np.mean(np.abs(p - m)))
    return out


def network_totals(log: pd.DataFrame, predicted: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (network, config, board): runtime = sum of kernel runtimes [ms]; energy = sum of runtime x power [mJ].

    With ``predicted`` (same index as ``log``) the predicted kernels are summed instead of the measured ones.
    """
    src = predicted if predicted is not None else log
    frame = pd.DataFrame(
        {
            "network": log["network"],
            "config": log["config"],
            "board": log["board"],
            "runtime_ms": src["runtime_ms"],
            "energy_mj": src["runtime_ms"] * src["power_w"],
        }
    )
    return frame.groupby(["network", "config", "board"], sort=True)[["runtime_ms", "energy_mj"]].sum()
