"""Leave-one-benchmark-out validation and energy-optimal clock choice for the kernel DVFS models."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.kernels.dvfs_models import calibrate, fit_family, predict_table

FAMILIES = ("roofline", "physics", "trees")


def lobo(rows: pd.DataFrame, family: str, *, each: Callable[[Iterable[str]], Iterator[str]] | None = None) -> pd.DataFrame:
    """Predictions of every benchmark's rows by a model fitted (and calibrated) without that benchmark; ``each`` wraps
    the loop over benchmarks (progress)."""
    benches = sorted(rows["benchmark"].unique())
    if len(benches) < 4:
        raise CosimError(f"leave-one-benchmark-out needs at least 4 benchmarks; the table has {len(benches)}")
    parts = []
    for b in (each or iter)(benches):
        train = rows[rows["benchmark"] != b]
        model, q = fit_family(family, train), calibrate(family, train)
        parts.append(predict_table(family, model, q, rows[rows["benchmark"] == b]))
    return pd.concat(parts, ignore_index=True)


def off_reference(pred: pd.DataFrame, rows: pd.DataFrame) -> np.ndarray:
    """Rows not at their kernel's reference pair (those are exact by construction: left out of the errors)."""
    r = rows.set_index(["benchmark", "kernel", "core_mhz", "mem_mhz"])[["core_mhz_ref", "mem_mhz_ref"]]
    ref = r.reindex(pd.MultiIndex.from_frame(pred[["benchmark", "kernel", "core_mhz", "mem_mhz"]])).to_numpy()
    return ~((pred["core_mhz"].to_numpy() == ref[:, 0]) & (pred["mem_mhz"].to_numpy() == ref[:, 1]))


def scaling(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Frequency scaling from the same reference measurement: runtime_s_ref x f_ref/f [s], power_w_ref x f/f_ref [W]
    (core clock), the baseline a model must beat."""
    ratio = (rows["core_mhz"] / rows["core_mhz_ref"]).to_numpy(float)
    return rows["runtime_s_ref"].to_numpy(float) / ratio, rows["power_w_ref"].to_numpy(float) * ratio


def half_width_pct(pred: pd.DataFrame, name: str) -> pd.Series:
    """The interval's half-width as a share of the prediction [%]: (hi - lo) / 2 / pred."""
    return (pred[f"{name}_hi"] - pred[f"{name}_lo"]) / 2 / pred[f"{name}_pred"] * 100


def errors(pred: pd.DataFrame, keep: np.ndarray, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per benchmark: runtime and power MAPE [%], the worst row's error [%], interval coverage [%] and mean half-width [%];
    with ``rows`` (the rows ``pred`` predicts, same order) also frequency scaling's MAPE [%] (:func:`scaling`)."""
    p = pred[keep].copy()
    for name in ("runtime_s", "power_w"):
        p[f"{name}_ape"] = (p[f"{name}_pred"] / p[name] - 1).abs() * 100
        p[f"{name}_in"] = ((p[name] >= p[f"{name}_lo"]) & (p[name] <= p[f"{name}_hi"])) * 100.0
        p[f"{name}_hw"] = half_width_pct(p, name)
    agg = p.groupby("benchmark").agg(
        runtime_mape=("runtime_s_ape", "mean"),
        runtime_worst=("runtime_s_ape", "max"),
        power_mape=("power_w_ape", "mean"),
        power_worst=("power_w_ape", "max"),
        runtime_coverage=("runtime_s_in", "mean"),
        power_coverage=("power_w_in", "mean"),
        runtime_half_width=("runtime_s_hw", "mean"),
        power_half_width=("power_w_hw", "mean"),
    )
    if rows is not None:
        order = rows.set_index(["benchmark", "kernel", "core_mhz", "mem_mhz"]).reindex(
            pd.MultiIndex.from_frame(p[["benchmark", "kernel", "core_mhz", "mem_mhz"]])
        )
        rt, pw = scaling(order.reset_index())
        p["scaling_runtime_ape"] = np.abs(rt / p["runtime_s"].to_numpy(float) - 1) * 100
        p["scaling_power_ape"] = np.abs(pw / p["power_w"].to_numpy(float) - 1) * 100
        agg = agg.join(
            p.groupby("benchmark").agg(
                scaling_runtime_mape=("scaling_runtime_ape", "mean"), scaling_power_mape=("scaling_power_ape", "mean")
            )
        )
    agg.loc["all"] = [
        p["runtime_s_ape"].mean(),
        p["runtime_s_ape"].max(),
        p["power_w_ape"].mean(),
        p["power_w_ape"].max(),
        p["runtime_s_in"].mean(),
        p["power_w_in"].mean(),
        p["runtime_s_hw"].mean(),
        p["power_w_hw"].mean(),
        *([p["scaling_runtime_ape"].mean(), p["scaling_power_ape"].mean()] if rows is not None else []),
    ]
    return agg


def choose(pred: pd.DataFrame, *, deadline_factor: float | None = None, power_cap_w: float | None = None) -> pd.DataFrame:
    """Per kernel, the pair with the least predicted energy whose runtime interval's upper end is within ``deadline_factor``
    x the predicted runtime at the highest clocks (or whose power interval's upper end is under ``power_cap_w``), against
    the highest clocks.

    Every kernel has a row: ``candidate_pairs`` says among how many pairs it was chosen, and a kernel with no pair
    surely under the power cap has empty (nan) clocks and predictions and says why in ``reason`` ("" when chosen).
    """
    if (deadline_factor is None) == (power_cap_w is None):
        raise CosimError("give one constraint: --deadline-factor F (F >= 1) or --power-cap W")
    if deadline_factor is not None and not deadline_factor >= 1:
        raise CosimError(f"--deadline-factor {deadline_factor:g}: must be >= 1 (1.1 allows 10 % longer than at the highest clocks)")
    if power_cap_w is not None and not power_cap_w > 0:
        raise CosimError(f"--power-cap {power_cap_w:g}: must be > 0 W")
    rows = []
    nan = float("nan")
    for (bench, kernel), g in pred.groupby(["benchmark", "kernel"], sort=True):
        top = g.sort_values(["core_mhz", "mem_mhz"]).iloc[-1]
        # the interval's upper end must meet the constraint: a pair only predicted to meet it on average is not chosen
        if deadline_factor is not None:  # the highest clocks are the baseline: always allowed
            ok = g[(g["runtime_s_hi"] <= deadline_factor * top["runtime_s_pred"] * (1 + 1e-9)) | (g.index == top.name)]
        else:
            ok = g[g["power_w_hi"] <= power_cap_w]
        best = ok.loc[ok["energy_j_pred"].idxmin()] if not ok.empty else pd.Series(nan, index=g.columns)
        row = {
            "benchmark": bench,
            "kernel": kernel,
            "core_mhz": best["core_mhz"],
            "mem_mhz": best["mem_mhz"],
            "default_core_mhz": top["core_mhz"],
            "default_mem_mhz": top["mem_mhz"],
            "energy_j_pred": best["energy_j_pred"],
            "default_energy_j_pred": top["energy_j_pred"],
            "runtime_s_pred": best["runtime_s_pred"],
            "default_runtime_s_pred": top["runtime_s_pred"],
            "candidate_pairs": len(g),
            "reason": "",
        }
        if ok.empty:
            row["reason"] = (
                f"no clock pair surely under --power-cap {power_cap_w:g} W; the least interval upper end is {g['power_w_hi'].min():.1f} W"
            )
        if "energy_j" in g.columns:
            row |= {
                "energy_j": best["energy_j"],
                "default_energy_j": top["energy_j"],
                "saving_measured_pct": (1 - best["energy_j"] / top["energy_j"]) * 100,
                "slowdown_measured": best["runtime_s"] / top["runtime_s"],
            }
        rows.append(row)
    return pd.DataFrame(rows)
