"""The thermal model against the board: each program and clock's mean die temperature, measured and predicted from
the board's own measured power (:mod:`cosim.models.thermal`).

- ARMPM logs (one board session a file, ~0.5 s samples): the session simulated from its first sample's temperature
  through its measured A15 power, with the ARMPM board's fan (it held the die near its threshold); the session's
  ambient, which no log records, is the one that makes the mean error over its **training** programs' samples zero
  (all samples without ``--split``, said so); test programs' temperatures are never used.  A row's figures are the
  means over the samples the board row keeps (each run's first skipped).
- Powmon tables (30 s averages): the steady state at each row's A15 power with the Powmon session's ambient and no
  fan hold.  These rows are the steady-state fit's own data (in-sample).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cosim.models.thermal import Thermal, cluster_thermal, steady_c

_TEMP = "CPU(4) Temperature(C)"


def board_temperatures(path: str | Path, split: dict[str, str] | None) -> tuple[dict[tuple[str, float], tuple[float, float]], str]:
    """``{(program, clock [MHz]): (measured, predicted) mean die temperature [°C]}`` and a line saying how the
    ambient was chosen; empty where the file records no die temperature."""
    from cosim.readers.measured import read_table_with_lines

    path = Path(path)
    table, _ = read_table_with_lines(path)
    if _TEMP in table.columns:
        return _armpm(table, split)
    if "Average Temperature A15" in table.columns and "Workload Name" in table.columns:
        return _powmon(table)
    return {}, "no die temperature in this file"


def _armpm(table, split: dict[str, str] | None) -> tuple[dict, str]:
    import pandas as pd

    from cosim.fit.thermal import Session, simulate
    from cosim.readers.armpm import run_starts

    thermal = cluster_thermal("xu3-a15", fan="armpm")
    program = table["Benchmark"].astype(str).str.strip().to_numpy()
    freq = pd.to_numeric(table["CPU(4) Frequency(MHz)"], errors="coerce").to_numpy(dtype=float)
    temp = pd.to_numeric(table[_TEMP], errors="coerce").to_numpy(dtype=float)
    power = pd.to_numeric(table["A15 Power(W)"], errors="coerce").to_numpy(dtype=float)
    time_s = (pd.to_numeric(table["#Timestamp"], errors="coerce").to_numpy(dtype=float) - float(table["#Timestamp"].iloc[0])) / 1e9
    run = table["Run(#)"].astype(str).to_numpy() if "Run(#)" in table.columns else np.full(len(table), "1")
    keep = ~run_starts(program, run, freq) & np.isfinite(temp) & np.isfinite(power)
    which = np.array([(split or {}).get(p, "") for p in program])
    chosen = keep & (which == "train") if split else keep
    how = "its training programs' samples" if split else "all its samples (no --split: in-sample)"
    if not chosen.any():
        return {}, "no training sample to set the session's ambient"
    session = Session("board", time_s, np.nan_to_num(power), temp, program, which == "train", which == "test")

    def run_at(ambient_c: float) -> np.ndarray:
        return simulate(
            session, ambient_c=ambient_c, r=thermal.r_k_per_w, tau=thermal.tau_s, fan_on=thermal.fan_on_c, fan_factor=thermal.fan_factor
        )

    lo, hi = 0.0, 80.0  # the mean error rises with the ambient: bisection to zero on the chosen samples
    for _ in range(30):
        mid = (lo + hi) / 2
        if float(np.mean(run_at(mid)[chosen] - temp[chosen])) < 0:
            lo = mid
        else:
            hi = mid
    ambient = (lo + hi) / 2
    pred = run_at(ambient)
    out = {}
    for name, clock in dict.fromkeys(zip(program, freq)):
        rows = keep & (program == name) & (freq == clock)
        if rows.any():
            out[(str(name), float(clock))] = (float(temp[rows].mean()), float(pred[rows].mean()))
    return out, f"{_constants(thermal)}; the session's ambient {ambient:.1f} °C set on {how}"


def _powmon(table) -> tuple[dict, str]:
    thermal = cluster_thermal("xu3-a15")
    one_thread = ~table["Core Mask"].astype(str).str.contains(":")
    sub = table[one_thread]
    out = {}
    for (name, clock), group in sub.groupby(["Workload Name", "Frequency A15"], sort=False):
        pred = steady_c(thermal, group["Power A15"].astype(float).to_numpy())
        out[(str(name), float(clock))] = (float(group["Average Temperature A15"].astype(float).mean()), float(np.mean(pred)))
    return (
        out,
        f"{_constants(thermal)}; steady state at the Powmon session's ambient {thermal.ambient_c:.1f} °C (these rows fitted R: in-sample)",
    )


def _constants(thermal: Thermal) -> str:
    fan = "no fan hold" if thermal.fan_on_c is None else f"fan on above {thermal.fan_on_c:g} °C (R x {thermal.fan_factor:.2f})"
    return f"R {thermal.r_k_per_w:.2f} K/W, tau {thermal.tau_s:.1f} s, {fan}"


def temperature_summary(rows: list[dict]) -> dict[str, dict]:
    """MAE and bias [K] of ``temp_pred_c`` against ``temp_board_c``, and the worst program, for train and test rows."""
    out = {}
    for which in ("train", "test", ""):
        chosen = [r for r in rows if r.get("split", "") == which and np.isfinite(r.get("temp_pred_c", np.nan))]
        if not chosen:
            continue
        err = np.array([r["temp_pred_c"] - r["temp_board_c"] for r in chosen])
        worst = max(chosen, key=lambda r: abs(r["temp_pred_c"] - r["temp_board_c"]))
        out[which or "unsplit"] = {
            "rows": len(chosen),
            "mae_k": float(np.mean(np.abs(err))),
            "bias_k": float(np.mean(err)),
            "worst": f"{worst['program']} at {worst['clock_mhz']:g} MHz {worst['temp_pred_c'] - worst['temp_board_c']:+.1f} K",
        }
    return out
