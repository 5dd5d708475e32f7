"""Fitting the cluster thermal model (:mod:`cosim.models.thermal`) on the XU3's logs; writes models/thermal-xu3.json.

    python -m cosim.fit.thermal ../shared/data [-o models/thermal-xu3.json] [--boot 20]

1. Steady state, Powmon (``asrtpm-A15-powmon-data.csv``: 30 s averages, 60 workloads x 9 clocks x 1-4 threads):
   ``Average Temperature A15 = T_amb + R * Power A15`` by least squares; interval: bootstrap by workload.
2. Dynamics, ARMPM (``Concatenated_Data/{PARSEC,cBench}/*.data``, one session a file, ~0.5 s samples), training
   programs of its split files only: with R held from 1, ``tau``, the fan (threshold on a 1 K grid, factor) and one
   ambient per session, least squares on the training samples' temperature, each session simulated from its first
   sample's temperature through the measured power (test programs' power included: it heats the die; their
   temperatures are never used).  Interval: bootstrap by training program (the same programs in every session).

Needs scipy (an optional extra); the pricing path reads only the JSON.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cosim.models.thermal import THERMAL_SCHEMA

_POWMON = "gemstone/sample-input-data/asrtpm-A15-powmon-data.csv"
_SESSIONS = "armpm/Concatenated_Data/{PARSEC,cBench}/*.data (the *_truncated copy left out)"
FAN_GRID_C = tuple(range(52, 61))  # fan thresholds tried [°C]
_SOURCE = (
    "cosim's own fit (python -m cosim.fit.thermal ../shared/data) of two public ODROID-XU3 logs: GemStone's Powmon "
    "data (mattw200/gemstone-applypower, asrtpm-A15-powmon-data.csv) and ARMPM's PARSEC and cBench sessions "
    "(kranik/ARMPM_BUILDMODEL)"
)


@dataclass
class Session:
    """One ARMPM log: sample times [s], A15 power [W], die temperature [°C], program names, train/test marks."""

    name: str
    time_s: np.ndarray
    power_w: np.ndarray
    temperature_c: np.ndarray
    program: np.ndarray
    train: np.ndarray
    test: np.ndarray


def read_sessions(root: Path) -> list[Session]:
    """Every ARMPM session log under ``root`` (../shared/data), marked by its split file."""
    import pandas as pd

    from cosim.readers.armpm import read_split

    out = []
    for suite, split_name in (("PARSEC", "PARSEC_split.data"), ("cBench", "cbench_split.data")):
        split = read_split(root / "armpm" / split_name)
        for path in sorted((root / "armpm" / "Concatenated_Data" / suite).glob("*.data")):
            if "truncated" in path.name:  # a cut copy of the cBench session
                continue
            d = pd.read_csv(path, sep="\t", dtype={"#Timestamp": "int64"})
            program = d["Benchmark"].astype(str).str.strip().to_numpy()
            which = np.array([split.get(p, "") for p in program])
            out.append(
                Session(
                    name=path.name,
                    time_s=(d["#Timestamp"].to_numpy() - d["#Timestamp"].iloc[0]) / 1e9,
                    power_w=d["A15 Power(W)"].to_numpy(dtype=float),
                    temperature_c=d["CPU(4) Temperature(C)"].to_numpy(dtype=float),
                    program=program,
                    train=which == "train",
                    test=which == "test",
                )
            )
    return out


def simulate(s: Session, *, ambient_c: float, r: float, tau: float, fan_on: float | None, fan_factor: float) -> np.ndarray:
    """The die temperature [°C] at each sample's time, from the session's first measured temperature, each
    interval at the power of the sample that ends it (the sampler averages power over the interval)."""
    t, p = s.time_s.tolist(), s.power_w.tolist()
    out = [0.0] * len(t)
    x = float(s.temperature_c[0])
    fan_r = r * fan_factor
    for i in range(len(t)):
        out[i] = x
        if i + 1 < len(t):
            target = ambient_c + (fan_r if fan_on is not None and x > fan_on else r) * p[i + 1]
            x = target + (x - target) * math.exp(-(t[i + 1] - t[i]) / tau)
    return np.array(out)


def simulate_two(s: Session, *, ambient_c: float, r: float, tau: float, r2: float, tau2: float) -> np.ndarray:
    """:func:`simulate` with a second, independent node in series (R2 [K/W], tau2 [s]: a heat sink), no fan."""
    t, p = s.time_s.tolist(), s.power_w.tolist()
    out = [0.0] * len(t)
    x1 = float(s.temperature_c[0]) - ambient_c  # the start's excess over the ambient, all in the first node
    x2 = 0.0
    for i in range(len(t)):
        out[i] = ambient_c + x1 + x2
        if i + 1 < len(t):
            dt = t[i + 1] - t[i]
            x1 = r * p[i + 1] + (x1 - r * p[i + 1]) * math.exp(-dt / tau)
            x2 = r2 * p[i + 1] + (x2 - r2 * p[i + 1]) * math.exp(-dt / tau2)
    return np.array(out)


def compare_forms(sessions: list[Session], *, r: float) -> dict[str, float]:
    """Training samples' MAE [K] of the forms tried, each fitted on them (R held): one node, two nodes, one node
    with the fan.  What chose the form; the test programs play no part."""
    from scipy.optimize import least_squares

    def mae(resid) -> float:
        return float(np.mean(np.abs(resid)))

    n = len(sessions)
    amb0 = [float(np.median(s.temperature_c)) - r * float(np.median(s.power_w)) for s in sessions]

    def one(x):
        return np.concatenate(
            [
                (simulate(s, ambient_c=a, r=r, tau=x[0], fan_on=None, fan_factor=1.0) - s.temperature_c)[s.train]
                for s, a in zip(sessions, x[1:])
            ]
        )

    def two(x):
        return np.concatenate(
            [(simulate_two(s, ambient_c=a, r=r, tau=x[0], r2=x[1], tau2=x[2]) - s.temperature_c)[s.train] for s, a in zip(sessions, x[3:])]
        )

    fit1 = least_squares(one, [10.0, *amb0], bounds=([0.5] + [0.0] * n, [300.0] + [80.0] * n), x_scale="jac", max_nfev=60)
    fit2 = least_squares(
        two, [3.0, 2.0, 100.0, *amb0], bounds=([0.5, 0.0, 5.0] + [0.0] * n, [300.0, 30.0, 5000.0] + [80.0] * n), x_scale="jac", max_nfev=60
    )
    fan = fit_dynamics(sessions, r=r)
    return {
        "one node": mae(one(fit1.x)),
        f"two nodes (second: R2 {fit2.x[1]:.2f} K/W, tau2 {fit2.x[2]:.0f} s)": mae(two(fit2.x)),
        f"one node + fan (on above {fan['fan_on_c']:g} °C)": score(sessions, fan, r=r)["train"]["mae_k"],
    }


def fit_steady(root: Path, *, boot: int = 200, seed: int = 0) -> dict:
    """T_amb [°C] and R [K/W] from Powmon's averages, each with a 95 % bootstrap interval by workload."""
    import pandas as pd

    d = pd.read_csv(root / _POWMON, sep="\t")
    p = d["Power A15"].to_numpy(dtype=float)
    t = d["Average Temperature A15"].to_numpy(dtype=float)
    w = d["Workload Name"].astype(str).to_numpy()

    def ols(idx):
        coef, *_ = np.linalg.lstsq(np.c_[np.ones(len(idx)), p[idx]], t[idx], rcond=None)
        return coef

    ambient, r = ols(np.arange(len(p)))
    names = np.unique(w)
    rows = {n: np.flatnonzero(w == n) for n in names}
    rng = np.random.default_rng(seed)
    draws = np.array([ols(np.concatenate([rows[n] for n in rng.choice(names, len(names))])) for _ in range(boot)])
    resid = t - ambient - r * p
    return {
        "ambient_c": _stated(ambient, draws[:, 0], f"Powmon steady state, intercept ({len(p)} rows)"),
        "r_k_per_w": _stated(r, draws[:, 1], f"Powmon steady state, slope on Power A15 ({len(p)} rows)"),
        "steady_mae_k": round(float(np.abs(resid).mean()), 3),
    }


def fit_dynamics(sessions: list[Session], *, r: float, weights: dict[str, int] | None = None, fan_grid=FAN_GRID_C) -> dict:
    """tau [s], the fan (threshold [°C], factor) and each session's ambient [°C], R held; ``weights``: each training
    program's count in a bootstrap draw (None: every program once)."""
    from scipy.optimize import least_squares

    def w_of(s: Session) -> np.ndarray:
        if weights is None:
            return s.train.astype(float)
        return np.array([weights.get(p, 0) for p in s.program], dtype=float) * s.train

    ws = [np.sqrt(w_of(s)) for s in sessions]

    def resid(x, fan_on):
        tau, factor, *amb = x
        return np.concatenate(
            [
                ((simulate(s, ambient_c=a, r=r, tau=tau, fan_on=fan_on, fan_factor=factor) - s.temperature_c) * w)[w > 0]
                for s, a, w in zip(sessions, amb, ws)
            ]
        )

    best = None
    for fan_on in fan_grid:
        x0 = [10.0, 0.2] + [float(np.median(s.temperature_c)) - r * float(np.median(s.power_w)) for s in sessions]
        lo = [0.5, 0.0] + [0.0] * len(sessions)
        hi = [300.0, 1.0] + [80.0] * len(sessions)
        fit = least_squares(resid, x0, args=(fan_on,), bounds=(lo, hi), x_scale="jac", max_nfev=60)
        cost = float(np.sum(fit.fun**2))
        if best is None or cost < best[0]:
            best = (cost, fan_on, fit.x)
    assert best is not None
    _, fan_on, x = best
    return {"tau_s": float(x[0]), "fan_factor": float(x[1]), "fan_on_c": float(fan_on), "ambient_c": [float(a) for a in x[2:]]}


def score(sessions: list[Session], fitted: dict, *, r: float) -> dict:
    """Mean absolute error, bias [K] and the worst program on training and test samples."""
    errs: dict[str, list[np.ndarray]] = {"train": [], "test": []}
    by_program: dict[str, list[np.ndarray]] = {}
    for s, a in zip(sessions, fitted["ambient_c"]):
        e = simulate(s, ambient_c=a, r=r, tau=fitted["tau_s"], fan_on=fitted["fan_on_c"], fan_factor=fitted["fan_factor"]) - s.temperature_c
        errs["train"].append(e[s.train])
        errs["test"].append(e[s.test])
        for p in np.unique(s.program[s.test]):
            by_program.setdefault(str(p), []).append(e[s.program == p])
    out: dict[str, dict] = {}
    for which, parts in errs.items():
        e = np.concatenate(parts)
        out[which] = {"mae_k": round(float(np.abs(e).mean()), 3), "bias_k": round(float(e.mean()), 3), "samples": int(e.size)}
    worst = max(by_program, key=lambda p: float(np.abs(np.concatenate(by_program[p])).mean()))
    out["test"]["worst_program"] = worst
    out["test"]["worst_mae_k"] = round(float(np.abs(np.concatenate(by_program[worst])).mean()), 3)
    return out


def _stated(value: float, draws: np.ndarray, source: str) -> dict:
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return {"value": round(float(value), 4), "interval_95": [round(float(lo), 4), round(float(hi), 4)], "fitted_on": source}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="../shared/data")
    parser.add_argument("-o", "--output", type=Path, default=Path("models/thermal-xu3.json"))
    parser.add_argument("--boot", type=int, default=20, help="bootstrap draws of the dynamics (each a full refit)")
    parser.add_argument("--forms", action="store_true", help="print the training MAE of each form tried, and stop")
    args = parser.parse_args(argv)
    steady = fit_steady(args.data)
    if args.forms:
        for form, mae in compare_forms(read_sessions(args.data), r=steady["r_k_per_w"]["value"]).items():
            print(f"{form}: training samples' MAE {mae:.3f} K")
        return
    r = steady["r_k_per_w"]["value"]
    sessions = read_sessions(args.data)
    dyn = fit_dynamics(sessions, r=r)
    scores = score(sessions, dyn, r=r)
    programs = sorted({str(p) for s in sessions for p in s.program[s.train]})
    rng = np.random.default_rng(1)
    draws = []
    for _ in range(args.boot):
        pick = rng.choice(programs, len(programs))
        counts = {p: int((pick == p).sum()) for p in programs}
        draws.append(fit_dynamics(sessions, r=r, weights=counts, fan_grid=(int(dyn["fan_on_c"]),)))
    tau_draws = np.array([d["tau_s"] for d in draws]) if draws else np.array([dyn["tau_s"]])
    factor_draws = np.array([d["fan_factor"] for d in draws]) if draws else np.array([dyn["fan_factor"]])
    armpm = f"ARMPM training programs' series, R held ({sum(int(s.train.sum()) for s in sessions)} samples, {len(sessions)} sessions)"
    block = {
        "applies_to": ["cortex-a15-walker2017", "cortex-a15-gemstone2018", "cortex-a15-armpm-xu3"],
        "form": "tau dT/dt = T_amb + R(T) P_cluster - T; R(T) = R, times fan_factor while T > fan on_c (cosim.models.thermal)",
        "r_k_per_w": steady["r_k_per_w"],
        "ambient_c": {
            **steady["ambient_c"],
            "note": "the Powmon session's; a board session's own (ARMPM's sessions: "
            f"{min(dyn['ambient_c']):.1f}-{max(dyn['ambient_c']):.1f} °C): state it with --ambient-c",
        },
        "tau_s": _stated(dyn["tau_s"], tau_draws, armpm),
        "steady_mae_k": steady["steady_mae_k"],
        "default_fan": "powmon",
        "fan": {
            "powmon": None,
            "armpm": {
                "on_c": dyn["fan_on_c"],
                "factor": round(dyn["fan_factor"], 4),
                "factor_interval_95": [round(float(x), 4) for x in np.percentile(factor_draws, [2.5, 97.5])],
                "fitted_on": f"{armpm}; threshold on a 1 K grid {FAN_GRID_C[0]}-{FAN_GRID_C[-1]} °C",
            },
        },
        "armpm_session_ambient_c": {s.name: round(a, 2) for s, a in zip(sessions, dyn["ambient_c"])},
        "armpm_score": scores,
        "bootstrap": f"by workload (Powmon, 200 draws) and by training program (ARMPM, {args.boot} draws), 95 % percentile",
    }
    out = {
        "schema": THERMAL_SCHEMA,  # not a model file: `cosim models` lists it as what it is, --model refuses it
        "about": "Die temperature of the ODROID-XU3's A15 cluster from its power: fitted by `python -m cosim.fit.thermal "
        f"../shared/data` on {_POWMON} and {_SESSIONS}",
        "source": _SOURCE,
        "clusters": {"xu3-a15": block},
    }
    tmp = args.output.with_suffix(".tmp")
    tmp.write_text(json.dumps(out, indent=1) + "\n")
    tmp.replace(args.output)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
