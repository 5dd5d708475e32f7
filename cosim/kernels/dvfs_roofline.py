"""The ``roofline`` family: runtime from the profile's memory-busy time, power from a varying-coefficient fit.

Domain: one device, the clock pairs of its training table (each kernel profiled at the reference
pair, every training benchmark measured on the same grid of pairs); predictions are ratios to the
kernel's own reference measurement (exact there).

runtime  t/t_ref = ((rho / M(f_m))^k + ((1 - rho^k)^(1/k) / C(f_c))^k)^(1/k)
         The memory part's share of the reference time is rho = min(s * u, 0.995): u is DCGM's
         DRAM-active ratio (or nvprof/ncu traffic per memory cycle over its training median, / 4),
         and DRAM-active x runtime is the memory interface's busy time, which stays put when the
         core clock moves (NV-DVFS-Benchmark's V100 table: within 1 % across 405-1380 MHz).  The
         rest of the time scales with the core clock.  The two parts overlap as a smooth maximum
         (exponent k).  C and M are the device's effective clocks over their reference values:
         f/f_ref x exp(g(f) - g(f_ref)), g piecewise linear between the training clocks (set clocks
         are not the clocks a GPU runs: the V100's 405 MHz point is 1.8x slower than 405/1380 for
         compute-bound kernels).  Parameters k, s, g are the device's, fitted on every training row
         (robust least squares on log ratios); nothing is fitted per kernel.
power    ln(P/P_ref) = a(f_c, f_m) + b(f_c, f_m) . z, z = the profile's DRAM traffic, issue rate,
         occupancy, ln P_ref [W] (standardised on the training table) and ln of the work rate
         t_ref/t (measured while training, the runtime model's when predicting); a and b are
         ridge fits at each training pair, bilinear between them (continuous in both clocks).

Assumptions: the kernel does the same work at every pair; the memory clock changes the memory
part only; the device's clock behaviour is shared by all its kernels.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from cosim.errors import CosimError

RHO_MAX = 0.995
POWER_RIDGE = 1.0  # ridge penalty on the standardised power inputs (chosen on the RTX 8000 table, see the how-to)


def _inputs(model: dict, rows: pd.DataFrame) -> dict[str, np.ndarray]:
    from cosim.kernels.features import physics_inputs

    x = physics_inputs(rows, model["features"])
    x["dram"] = x["dram"] / float(model["dram_scale"])
    return x


def _memory_share(model: dict, x: dict[str, np.ndarray]) -> np.ndarray:
    u = x["dram"] if model["features"] == "dcgm" else x["dram"] / 4.0
    return np.clip(model["runtime"]["s"] * u, 0.0, RHO_MAX)


def effective_clock_ratio(f_mhz: np.ndarray, ref_mhz: np.ndarray, knots_mhz: list[float], g: list[float]) -> np.ndarray:
    """C(f)/C(f_ref) [-]: the clock a kernel runs at over the reference's, f/f_ref x exp(g(f) - g(f_ref))."""
    k, gv = np.asarray(knots_mhz, float), np.asarray(g, float)
    return f_mhz / ref_mhz * np.exp(np.interp(f_mhz, k, gv) - np.interp(ref_mhz, k, gv))


def _clocks(rows: pd.DataFrame) -> dict[str, np.ndarray]:
    return {c: rows[c].to_numpy(float) for c in ("core_mhz", "mem_mhz", "core_mhz_ref", "mem_mhz_ref")}


def runtime_ratio(model: dict, clocks: dict[str, np.ndarray], x: dict[str, np.ndarray]) -> np.ndarray:
    """Predicted t/t_ref [-] of each row (``clocks``: :func:`_clocks` [MHz], ``x``: :func:`_inputs`)."""
    p = model["runtime"]
    k = p["k"]
    rho = _memory_share(model, x)
    comp = (1 - rho**k) ** (1 / k)
    c = effective_clock_ratio(clocks["core_mhz"], clocks["core_mhz_ref"], p["core_knots_mhz"], p["g_core"])
    m = effective_clock_ratio(clocks["mem_mhz"], clocks["mem_mhz_ref"], p["mem_knots_mhz"], p["g_mem"])
    return ((rho / m) ** k + (comp / c) ** k) ** (1 / k)


def _fit_runtime(model: dict, rows: pd.DataFrame, x: dict[str, np.ndarray]) -> dict:
    from scipy.optimize import least_squares

    kc = sorted(map(float, rows["core_mhz"].unique()))
    km = sorted(map(float, rows["mem_mhz"].unique()))
    y = np.log((rows["runtime_s"] / rows["runtime_s_ref"]).to_numpy(float))
    n = len(kc) + len(km)
    clocks = _clocks(rows)

    def params(p: np.ndarray) -> dict:
        return {
            "k": float(p[0]),
            "s": float(p[1]),
            "core_knots_mhz": kc,
            "mem_knots_mhz": km,
            "g_core": p[2 : 2 + len(kc)].tolist(),
            "g_mem": p[2 + len(kc) :].tolist(),
        }

    def resid(p: np.ndarray) -> np.ndarray:
        return np.log(runtime_ratio({**model, "runtime": params(p)}, clocks, x)) - y

    # soft_l1: a benchmark whose clocks misbehave (a throttled point) does not bend the device's curves
    fit = least_squares(
        resid,
        np.r_[3.0, 1.0, np.zeros(n)],
        bounds=(np.r_[1.0, 0.2, -2 * np.ones(n)], np.r_[30.0, 5.0, 2 * np.ones(n)]),
        loss="soft_l1",
        f_scale=0.05,
    )
    return params(fit.x)


def _power_z(model: dict, rows: pd.DataFrame, x: dict[str, np.ndarray], log_rate: np.ndarray) -> np.ndarray:
    raw = np.column_stack([x["dram"], x["ipc"], x["occupancy"], np.log(rows["power_w_ref"].to_numpy(float))])
    p = model["power"]
    z = (raw - np.asarray(p["mu"])) / np.asarray(p["sd"])
    return np.column_stack([np.ones(len(rows)), z, log_rate])


def _bilinear(f: np.ndarray, knots: list[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lower knot index, upper knot index, weight of the upper) of each clock, clamped to the knots."""
    k = np.asarray(knots, float)
    if len(k) == 1:
        zeros = np.zeros(len(f), int)
        return zeros, zeros, np.zeros(len(f))
    i = np.clip(np.searchsorted(k, f, side="right") - 1, 0, len(k) - 2)
    w = np.clip((f - k[i]) / (k[i + 1] - k[i]), 0.0, 1.0)
    return i, i + 1, w


def power_ratio(model: dict, rows: pd.DataFrame, x: dict[str, np.ndarray], rt_ratio: np.ndarray) -> np.ndarray:
    """Predicted P/P_ref [-] of each row, given its (predicted) t/t_ref."""
    p = model["power"]
    coef = np.asarray(p["coef"])  # (core knots, mem knots, inputs)
    z = _power_z(model, rows, x, -np.log(rt_ratio))
    c0, c1, wc = _bilinear(rows["core_mhz"].to_numpy(float), p["core_knots_mhz"])
    m0, m1, wm = _bilinear(rows["mem_mhz"].to_numpy(float), p["mem_knots_mhz"])
    b = (
        ((1 - wc) * (1 - wm))[:, None] * coef[c0, m0]
        + ((1 - wc) * wm)[:, None] * coef[c0, m1]
        + (wc * (1 - wm))[:, None] * coef[c1, m0]
        + (wc * wm)[:, None] * coef[c1, m1]
    )
    at = np.exp(np.sum(b * z, axis=1))
    ref = rows.copy()
    ref["core_mhz"], ref["mem_mhz"] = ref["core_mhz_ref"], ref["mem_mhz_ref"]
    if (rows["core_mhz"].to_numpy() == ref["core_mhz"].to_numpy()).all() and (
        rows["mem_mhz"].to_numpy() == ref["mem_mhz"].to_numpy()
    ).all():
        return at
    return at / power_ratio(model, ref, x, np.ones(len(rows)))  # exactly 1 at the reference


def _fit_power(model: dict, rows: pd.DataFrame, x: dict[str, np.ndarray]) -> dict:
    kc = sorted(map(float, rows["core_mhz"].unique()))
    km = sorted(map(float, rows["mem_mhz"].unique()))
    raw = np.column_stack([x["dram"], x["ipc"], x["occupancy"], np.log(rows["power_w_ref"].to_numpy(float))])
    p: dict[str, Any] = {
        "mu": raw.mean(axis=0).tolist(),
        "sd": (raw.std(axis=0) + 1e-9).tolist(),
        "core_knots_mhz": kc,
        "mem_knots_mhz": km,
    }
    model = {**model, "power": p}
    y = np.log((rows["power_w"] / rows["power_w_ref"]).to_numpy(float))
    z = _power_z(model, rows, x, np.log((rows["runtime_s_ref"] / rows["runtime_s"]).to_numpy(float)))
    coef = np.zeros((len(kc), len(km), z.shape[1]))
    penalty = POWER_RIDGE * np.eye(z.shape[1])
    penalty[0, 0] = 0.0  # the intercept is not shrunk
    for i, c in enumerate(kc):
        for j, m in enumerate(km):
            at = ((rows["core_mhz"] == c) & (rows["mem_mhz"] == m)).to_numpy()
            if not at.any():
                raise CosimError(
                    f"the roofline family needs every training benchmark measured on one grid of clock pairs; no row at {c:g},{m:g} MHz: "
                    "measure that pair, or fit --family physics"
                )
            a = z[at]
            coef[i, j] = np.linalg.solve(a.T @ a + penalty, a.T @ y[at])
    p["coef"] = coef.tolist()
    return p


def fit_roofline(rows: pd.DataFrame) -> dict:
    """The roofline family on ``rows`` (:func:`cosim.kernels.dvfs.with_profiles`): tool, DRAM scale, runtime and power."""
    from cosim.kernels.extra import require_extra
    from cosim.kernels.features import physics_inputs, physics_tool

    require_extra("scipy.optimize")
    tool = physics_tool(rows)
    x = physics_inputs(rows, tool)
    positive = x["dram"][x["dram"] > 0]
    # DCGM's ratio is used as it is (a share of cycles); bytes per cycle over their median
    scale = 1.0 if tool == "dcgm" else (float(np.median(positive)) if len(positive) else 1.0)
    model: dict[str, Any] = {"features": tool, "dram_scale": scale}
    x["dram"] = x["dram"] / scale
    model["runtime"] = _fit_runtime(model, rows, x)
    model["power"] = _fit_power(model, rows, x)
    return model


def roofline_predict(model: dict, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(t/t_ref, P/P_ref) of each row."""
    x = _inputs(model, rows)
    rt = runtime_ratio(model, _clocks(rows), x)
    if not np.all(np.isfinite(rt)) or math.isnan(float(np.sum(rt))):
        raise CosimError("the roofline model predicts no finite runtime for these rows; predict at clocks inside the fitted range")
    return rt, power_ratio(model, rows, x, rt)
