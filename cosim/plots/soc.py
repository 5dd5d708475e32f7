"""The SoC timeline's plot: CPU clusters, GPU rail, memory rail and base, stacked over time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from cosim.plots import finish_power_axes, pyplot, save_figure, time_unit


def plot_soc(timeline: pd.DataFrame, path: str | Path, *, title: str = "") -> Path:
    """Stacked power of the CPU clusters, GPU rail, memory rail and base over time."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5), layout="constrained")
    span = timeline["end_s"].max()
    unit, scale = time_unit(span)
    edges = np.append(timeline["start_s"].to_numpy(), timeline["end_s"].to_numpy()[-1]) * scale
    layers = [(f"CPU {n}", f"cpu_{n}_w") for n in timeline.attrs.get("clusters", [])]
    layers += [("GPU rail", "gpu_w"), ("memory rail", "mem_w"), ("base", "base_w")]
    base = np.zeros(len(timeline))
    for label, col in layers:
        values = timeline[col].fillna(0.0).to_numpy()
        ax.stairs(base + values, edges, baseline=base, fill=True, alpha=0.8, label=label)
        base = base + values
    finish_power_axes(ax, xlabel=f"time [{unit}]", title=title or "cosim SoC timeline (Tegra K1 rails + CPU clusters)")
    return save_figure(fig, path)
