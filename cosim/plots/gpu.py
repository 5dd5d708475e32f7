"""Plots of GPU timelines: stacked per-kernel power, and the per-class energy breakdown (thesis Fig. 6.5b)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from cosim.plots import finish_power_axes, pyplot, save_figure, time_unit
from cosim.readers.ocelot import OCELOT_CLASSES
from cosim.timeline.gpu import GPU_PREDICTORS
from cosim.timeline.launches import rows_at


def _layers(timeline: pd.DataFrame) -> list[tuple[str, str]]:
    if "gpu_w" in timeline.columns:  # Tegra K1 rail model
        return [("GPU rail", "gpu_w"), ("memory rail", "mem_w"), ("core rail (LP core)", "core_w"), ("base", "base_w")]
    return [("idle (performance level)", "idle_w"), ("dynamic", "dynamic_w")]


def plot_gpu_timeline(timeline: pd.DataFrame, path: str | Path, *, title: str = "") -> Path:
    """Stacked power [W] over time, one step per kernel launch or idle stretch."""
    plt = pyplot()
    t = timeline.sort_values("start_s")
    span = t["end_s"].max()
    unit, scale = time_unit(span)
    # contiguous steps: fill holes between rows with zero-height steps
    edges = np.unique(np.concatenate([t["start_s"], t["end_s"]]))
    mid = (edges[:-1] + edges[1:]) / 2
    idx, inside = rows_at(t["start_s"].to_numpy(), t["end_s"].to_numpy(), mid)
    fig, ax = plt.subplots(figsize=(9, 4.5), layout="constrained")
    base = np.zeros(len(mid))
    for label, col in _layers(t):
        values = np.where(inside, t[col].to_numpy()[idx], 0.0)
        ax.stairs(base + values, edges * scale, baseline=base, fill=True, alpha=0.8, label=label)
        base = base + values
    if {"power_lo_w", "power_hi_w"} <= set(t.columns) and (t["power_hi_w"] > t["power_w"]).any():
        lo = np.where(inside, t["power_lo_w"].to_numpy()[idx], 0.0)
        hi = np.where(inside, t["power_hi_w"].to_numpy()[idx], 0.0)
        ax.stairs(hi, edges * scale, baseline=lo, fill=True, color="k", alpha=0.12, label="published error band")
    finish_power_axes(ax, xlabel=f"time [{unit}]", title=title or f"cosim GPU timeline ({timeline.attrs.get('model', '')})")
    return save_figure(fig, path)


def breakdown_energy_j(timeline: pd.DataFrame) -> pd.Series:
    """Energy [J] per instruction class (access-rate model) or per model term (rail model), over all kernels."""
    kernels = timeline[timeline["kind"] == "kernel"]
    if "gpu_w" not in timeline.columns:
        return pd.Series({cls: kernels[f"{cls}_j"].sum() for cls in OCELOT_CLASSES})
    terms = {f"GPU {p.upper()}": f"gpu_{p}_w" for p in GPU_PREDICTORS}
    terms |= {
        "GPU clock": "gpu_clock_w",
        "GPU leakage": "gpu_static_w",
        "memory clock": "mem_clock_w",
        "memory GPU cycles": "mem_other_busy_w",
        "memory CPU cycles": "mem_cpu_busy_w",
        "LP core": "core_w",
        "base": "base_w",
    }
    return pd.Series({label: float((kernels[col] * kernels["duration_s"]).sum()) for label, col in terms.items()})


def plot_breakdown(timeline: pd.DataFrame, path: str | Path, *, title: str = "") -> Path:
    """Bar chart of :func:`breakdown_energy_j` in mJ."""
    plt = pyplot()
    energy = breakdown_energy_j(timeline) * 1e3
    fig, ax = plt.subplots(figsize=(9, 4.5), layout="constrained")
    ax.bar(range(len(energy)), energy.to_numpy(), color="tab:blue")
    ax.set_xticks(range(len(energy)), [str(i).replace("_", " ") for i in energy.index], rotation=45, ha="right")
    ax.set_ylabel("energy over all kernels [mJ]")
    kind = "dynamic energy per instruction class" if "gpu_w" not in timeline.columns else "energy per model term"
    ax.set_title(title or f"{timeline.attrs.get('model', '')}: {kind}")
    return save_figure(fig, path)


def plot_measured_energy(samples: pd.DataFrame, kernels: pd.DataFrame, path: str | Path, *, title: str = "") -> Path:
    """Measured power [W] over time with each kernel marked: its span shaded (grey where too short for the readings
    to resolve), its measured mean power and 90 % interval drawn across it. Times as in ``kernels`` (from the log's
    first reading)."""
    plt = pyplot()
    t0 = float(samples["time_s"].iloc[0])
    times = samples["time_s"].to_numpy() - t0
    unit, scale = time_unit(max(times.max(), 1e-9))
    fig, ax = plt.subplots(figsize=(9, 4.5), layout="constrained")
    ax.plot(times * scale, samples["power_w"], ".-", color="k", lw=0.8, ms=3, label=f"readings ({samples.attrs['power']['field']})")
    seen = set()
    for _, k in kernels.iterrows():
        resolved = k["measured_power_w"] == k["measured_power_w"]
        label = "kernel (measured)" if resolved else "kernel (unresolved)"
        ax.axvspan(
            k["start_s"] * scale,
            k["end_s"] * scale,
            color="tab:blue" if resolved else "0.6",
            alpha=0.2,
            label=None if label in seen else label,
        )
        seen.add(label)
        if resolved:
            ax.fill_between(
                [k["start_s"] * scale, k["end_s"] * scale],
                k["measured_power_lo_w"],
                k["measured_power_hi_w"],
                color="tab:orange",
                alpha=0.4,
            )
            ax.hlines(
                k["measured_power_w"],
                k["start_s"] * scale,
                k["end_s"] * scale,
                color="tab:orange",
                lw=2,
                label=None if "mean" in seen else "kernel mean, 90 % interval",
            )
            seen.add("mean")
    finish_power_axes(ax, xlabel=f"time since the log's first reading [{unit}]", title=title or "measured power per kernel")
    return save_figure(fig, path)
