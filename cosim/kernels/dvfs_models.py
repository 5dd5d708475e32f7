"""Runtime and power of a kernel at any (core, memory) clock pair, from one profile at a reference pair.

Two families, both predicting the ratio to the reference measurement (exact there):

physics
    runtime  t/t_ref = ((c * (f_c,ref - a_c) / (f_c - a_c))^k + (m * (f_m,ref - a_m) / (f_m - a_m))^k)^(1/k)
             a compute part scaling with the core clock and a memory part with the memory clock,
             combined as a smooth maximum (k -> inf: the roofline's max; Wang & Chu overlap them
             likewise).  The mix angle atan2(m, c) = th0 + th1 * u + th2 * occupancy is set by the
             profile's DRAM traffic per memory cycle u (nvprof/ncu throughput [B/s] over the reference
             memory clock, or DCGM's DRAM-active ratio; over its median in the training set, so unit-free)
             and its achieved occupancy (the warps there are to hide memory latency); (c^k + m^k)^(1/k) = 1.
             The three inputs are read under any profiler's names: :mod:`cosim.kernels.features`.  a_c, a_m [MHz] are offsets
             of the effective clocks (the GTX 980's memory time at 400 MHz is 2.7x, not 2.5x, that at 1000).
    power    P/P_ref = i * (s0 + s1 * (f_c/f_c,ref) v^2 + s2 * f_m/f_m,ref)
                     + (1 - i) * (d0 + d1 * (f_c/f_c,ref) v^2 + (d2 + d3 * ipc) v^2 r + (d4 + d5 * u) r + d6 * f_m/f_m,ref),
             normalised to 1 at the reference; i is the profile's idle share of its power (idle_power_w /
             power_w, 0 where the table lacks it).  Static power, clock tree (f V^2), core switching
             (V^2 x work rate, r = t_ref/t), memory traffic (rate) and memory clock.  V is not published:
             v = max(1 + beta * (f_c/f_c,ref - 1), v_floor), both chosen by least squares on a grid.
trees
    gradient-boosted trees (scikit-learn) of log(t/t_ref) and log(P/P_ref) from log1p of every
    profile feature, the profile's runtime and power, and the two clock ratios.

Intervals are normalised split-conformal: |ln(pred/measured)| / d with d = |ln(f_c/f_c,ref)| +
|ln(f_m/f_m,ref)|, from predictions of benchmarks left out in groups (K-fold over benchmarks);
the 90 % quantile q gives pred x exp(+-q d).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.kernels.features import physics_tool

LEVEL = 0.9
RUNTIME_PARAMS = ("k", "a_core_mhz", "a_mem_mhz", "th0", "th1", "th2")


def _ratios(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    return (rows["core_mhz"] / rows["core_mhz_ref"]).to_numpy(float), (rows["mem_mhz"] / rows["mem_mhz_ref"]).to_numpy(float)


def physics_inputs(model: dict, rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """The rows' DRAM traffic (over the model's scale: unit-free), IPC and occupancy, as the model's tool names them."""
    from cosim.kernels.features import physics_inputs as read_inputs

    x = read_inputs(rows, model.get("features", "nvprof"))
    x["dram"] = x["dram"] / float(model.get("dram_scale", 1.0))
    return x


CLOCKS = ("core_mhz", "mem_mhz", "core_mhz_ref", "mem_mhz_ref")


def clock_arrays(rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """The rows' set and reference clocks [MHz] as arrays (read once: a fit evaluates its form hundreds of times)."""
    return {c: rows[c].to_numpy(float) for c in CLOCKS}


def physics_runtime(params: dict, rows: pd.DataFrame | dict[str, np.ndarray], x: dict[str, np.ndarray]) -> np.ndarray:
    """Predicted t/t_ref of each row (``rows``: a table or its :func:`clock_arrays`; ``x``: :func:`physics_inputs`)."""
    k, ac, am, th0, th1, th2 = (params[n] for n in RUNTIME_PARAMS)
    theta = np.clip(th0 + th1 * x["dram"] + th2 * x["occupancy"], 0.0, math.pi / 2)
    c, m = np.cos(theta), np.sin(theta)
    norm = (c**k + m**k) ** (1 / k)
    fc, fm = np.asarray(rows["core_mhz"], float), np.asarray(rows["mem_mhz"], float)
    if np.any(fc <= ac) or np.any(fm <= am):
        raise CosimError(f"clocks must exceed the model's effective-clock offsets ({ac:.0f} MHz core, {am:.0f} MHz memory)")
    comp = c / norm * (np.asarray(rows["core_mhz_ref"], float) - ac) / (fc - ac)
    mem = m / norm * (np.asarray(rows["mem_mhz_ref"], float) - am) / (fm - am)
    return (comp**k + mem**k) ** (1 / k)


def fit_physics_runtime(rows: pd.DataFrame, x: dict[str, np.ndarray]) -> dict:
    from cosim.kernels.extra import require_extra

    require_extra("scipy.optimize")
    from scipy.optimize import least_squares

    y = np.log((rows["runtime_s"] / rows["runtime_s_ref"]).to_numpy(float))
    names = RUNTIME_PARAMS
    lo_c = float(rows["core_mhz"].min()) * 0.9
    lo_m = float(rows["mem_mhz"].min()) * 0.9

    clocks = clock_arrays(rows)

    def resid(p):
        return np.log(physics_runtime(dict(zip(names, p)), clocks, x)) - y

    # the DRAM traffic is over its median: th1 has the same range whatever the tool's unit
    fit = least_squares(
        resid, [4.0, 0.0, 50.0, 0.5, 1.5, 0.0], bounds=([1.0, -2000.0, -2000.0, -1.0, -30.0, -3.0], [30.0, lo_c, lo_m, 2.6, 30.0, 3.0])
    )
    return dict(zip(names, map(float, fit.x)))


def _power_parts(rows: pd.DataFrame, *, at_reference: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(f_c/f_c,ref, f_m/f_m,ref, the profile's idle share of its power) of each row; at the reference pair with
    ``at_reference`` (ratios 1)."""
    rc, rm = _ratios(rows)
    if at_reference:
        rc, rm = np.ones(len(rows)), np.ones(len(rows))
    # the profile's idle share of its power (idle samples of its own log), where the table has it
    idle = rows["f_idle_power_w"].to_numpy(float) / rows["power_w_ref"].to_numpy(float) if "f_idle_power_w" in rows else np.zeros(len(rows))
    return rc, rm, idle


def _power_basis(
    parts: tuple[np.ndarray, np.ndarray, np.ndarray], x: dict[str, np.ndarray], rate: np.ndarray, beta: float, floor: float
) -> np.ndarray:
    rc, rm, idle = parts
    v2 = np.maximum(1 + beta * (rc - 1), floor) ** 2
    ipc, u = x["ipc"], x["dram"]
    ones = np.ones(len(rc))
    static = idle[:, None] * np.column_stack([ones, rc * v2, rm])
    dynamic = (1 - idle)[:, None] * np.column_stack([ones, rc * v2, v2 * rate, ipc * v2 * rate, rate, u * rate, rm])
    return np.hstack([static, dynamic])


def _power_ratio(params: dict, at: tuple, ref: tuple, x: dict[str, np.ndarray], runtime_ratio: np.ndarray) -> np.ndarray:
    w = np.asarray(params["w"])
    beta, floor = params["beta"], params["v_floor"]
    return (_power_basis(at, x, 1 / runtime_ratio, beta, floor) @ w) / (_power_basis(ref, x, np.ones(len(runtime_ratio)), beta, floor) @ w)


def physics_power(params: dict, rows: pd.DataFrame, x: dict[str, np.ndarray], runtime_ratio: np.ndarray) -> np.ndarray:
    """Predicted P/P_ref of each row, given its (predicted) t/t_ref."""
    return _power_ratio(params, _power_parts(rows), _power_parts(rows, at_reference=True), x, runtime_ratio)


def fit_physics_power(rows: pd.DataFrame, x: dict[str, np.ndarray]) -> dict:
    y = (rows["power_w"] / rows["power_w_ref"]).to_numpy(float)
    rate = (rows["runtime_s_ref"] / rows["runtime_s"]).to_numpy(float)  # measured work rate while training
    at, ref = _power_parts(rows), _power_parts(rows, at_reference=True)
    best: dict[str, Any] = {}
    for beta, floor in itertools.product(np.linspace(0.0, 1.0, 11), (0.0, 0.6, 0.7, 0.8, 0.9)):
        basis = _power_basis(at, x, rate, float(beta), floor)
        w = np.linalg.lstsq(basis, y, rcond=None)[0]
        params = {"beta": float(beta), "v_floor": floor, "w": w.tolist()}
        err = float(np.mean((_power_ratio(params, at, ref, x, 1 / rate) / y - 1) ** 2))
        if not best or err < best["err"]:
            best = {**params, "err": err}
    best.pop("err")
    return best


def fit_physics(rows: pd.DataFrame) -> dict:
    """The physics family on ``rows``: the tool its features come from, the DRAM traffic's scale, runtime and power."""
    from cosim.kernels.features import physics_inputs as read_inputs

    tool = physics_tool(rows)
    x = read_inputs(rows, tool)  # read (and range-checked) once: the scale is taken from the same values it divides
    positive = x["dram"][x["dram"] > 0]
    model: dict[str, Any] = {"features": tool, "dram_scale": float(np.median(positive)) if len(positive) else 1.0}
    x["dram"] = x["dram"] / model["dram_scale"]  # as physics_inputs does for a fitted model
    model["runtime"] = fit_physics_runtime(rows, x)
    model["power"] = fit_physics_power(rows, x)
    return model


# ---- trees ---------------------------------------------------------------------------------------


def tree_inputs(rows: pd.DataFrame, columns: list[str] | None = None) -> pd.DataFrame:
    cols = columns or [c for c in rows.columns if c.startswith("f_")] + ["runtime_s_ref", "power_w_ref"]
    X = pd.DataFrame({c: np.log1p(np.clip(rows[c].to_numpy(float), 0, None)) if c in rows else np.nan for c in cols}, index=rows.index)
    rc, rm = _ratios(rows)
    X["core_ratio"], X["mem_ratio"] = rc, rm
    return X


def fit_trees(rows: pd.DataFrame, *, seed: int = 0) -> dict:
    from cosim.kernels.extra import require_extra

    require_extra("sklearn")
    from sklearn import config_context
    from sklearn.ensemble import GradientBoostingRegressor

    cols = [c for c in rows.columns if c.startswith("f_")] + ["runtime_s_ref", "power_w_ref"]
    X = tree_inputs(rows, cols)
    out: dict[str, Any] = {"columns": cols}
    for target, col in (("runtime", "runtime_s"), ("power", "power_w")):
        y = np.log((rows[col] / rows[f"{col}_ref"]).to_numpy(float))
        # the parameters are fixed here: sklearn's per-tree re-validation of them was half the fit time (150 trees)
        with config_context(skip_parameter_validation=True):
            out[target] = GradientBoostingRegressor(n_estimators=150, max_depth=3, learning_rate=0.05, random_state=seed).fit(X, y)
    return out


def trees_predict(model: dict, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    missing = [c.removeprefix("f_") for c in model["columns"] if c not in rows.columns]
    if missing:  # trees take no blank: name what the profile lacks
        raise CosimError(
            f"the trees were fitted on {len(model['columns'])} profile columns; the table lacks {len(missing)} of them "
            f"({', '.join(missing[:4])}{', ...' if len(missing) > 4 else ''}): profile the same metrics, or use --family physics"
        )
    X = tree_inputs(rows, model["columns"])
    return np.exp(model["runtime"].predict(X)), np.exp(model["power"].predict(X))


# ---- both families, with intervals -----------------------------------------------------------------


def fit_family(family: str, rows: pd.DataFrame) -> dict:
    if family == "physics":
        return fit_physics(rows)
    if family == "roofline":
        from cosim.kernels.dvfs_roofline import fit_roofline

        return fit_roofline(rows)
    return fit_trees(rows)


def predict_ratios(family: str, model: dict, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(t/t_ref, P/P_ref) of each row."""
    if family == "physics":
        x = physics_inputs(model, rows)
        rt = physics_runtime(model["runtime"], rows, x)
        return rt, physics_power(model["power"], rows, x, rt)
    if family == "roofline":
        from cosim.kernels.dvfs_roofline import roofline_predict

        return roofline_predict(model, rows)
    return trees_predict(model, rows)


def distance(rows: pd.DataFrame) -> np.ndarray:
    rc, rm = _ratios(rows)
    return np.abs(np.log(rc)) + np.abs(np.log(rm))


def conformal_q(scores: np.ndarray, level: float = LEVEL) -> float:
    """The split-conformal quantile: the ceil((n + 1) level)-th smallest score (inf if n is too small)."""
    s = np.sort(scores[np.isfinite(scores)])
    rank = math.ceil((len(s) + 1) * level)
    return float(s[rank - 1]) if 0 < rank <= len(s) else math.inf


def calibrate(family: str, rows: pd.DataFrame, *, folds: int = 4) -> dict[str, float]:
    """Interval widths q (runtime, power) from benchmarks left out in ``folds`` groups."""
    benches = np.array(sorted(rows["benchmark"].unique()))
    if len(benches) < 3:
        return {"runtime": math.inf, "power": math.inf}
    groups = np.arange(len(benches)) % min(folds, len(benches))
    scores: dict[str, list[np.ndarray]] = {"runtime": [], "power": []}
    for g in np.unique(groups):
        out = rows["benchmark"].isin(benches[groups == g]).to_numpy()
        model = fit_family(family, rows[~out])
        test = rows[out]
        d = distance(test)
        keep = d > 0
        rt, pw = predict_ratios(family, model, test)
        for target, pred, col in (("runtime", rt, "runtime_s"), ("power", pw, "power_w")):
            meas = (test[col] / test[f"{col}_ref"]).to_numpy(float)
            scores[target].append(np.abs(np.log(pred / meas))[keep] / d[keep])
    return {t: conformal_q(np.concatenate(s)) for t, s in scores.items()}


def predict_table(family: str, model: dict, q: dict[str, float], rows: pd.DataFrame) -> pd.DataFrame:
    """benchmark, kernel, clocks, predictions [s, W, J] and their intervals (and measurements when present)."""
    rt, pw = predict_ratios(family, model, rows)
    d = distance(rows)
    out = rows[["benchmark", "kernel", "core_mhz", "mem_mhz"]].copy()
    out["runtime_s_pred"] = rt * rows["runtime_s_ref"].to_numpy(float)
    out["power_w_pred"] = pw * rows["power_w_ref"].to_numpy(float)
    out["energy_j_pred"] = out["runtime_s_pred"] * out["power_w_pred"]
    for name, width in (("runtime_s", q["runtime"] * d), ("power_w", q["power"] * d), ("energy_j", (q["runtime"] + q["power"]) * d)):
        out[f"{name}_lo"] = out[f"{name}_pred"] * np.exp(-width)
        out[f"{name}_hi"] = out[f"{name}_pred"] * np.exp(width)
    if {"runtime_s", "power_w"} <= set(rows.columns):
        out["runtime_s"] = rows["runtime_s"].to_numpy(float)
        out["power_w"] = rows["power_w"].to_numpy(float)
        out["energy_j"] = out["runtime_s"] * out["power_w"]
    bad = ~np.isfinite(out["runtime_s_pred"]) | ~np.isfinite(out["power_w_pred"]) | (out["power_w_pred"] <= 0)
    if bad.any():
        r = out[bad].iloc[0]
        raise CosimError(
            f"{r['benchmark']}/{r['kernel']} at {r['core_mhz']:g}/{r['mem_mhz']:g} MHz: the {family} model predicts no physical "
            "runtime or power there (outside what it was fitted on); predict at clocks inside the fitted range"
        )
    return out
