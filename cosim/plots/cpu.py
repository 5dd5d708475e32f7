"""The CPU timeline's plot: stacked per-cluster power with the model's interval band."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from cosim.plots import finish_power_axes, pyplot, save_figure, time_unit


def plot_timeline(timeline: pd.DataFrame, path: str | Path, *, title: str = "") -> Path:
    """Stacked per-cluster power over simulated time, with the +-2*SER interval band of the total."""
    import numpy as np

    plt = pyplot()

    clusters = list(dict.fromkeys(timeline["cluster"]))
    # pivot, not pivot_table: epochs without a value stay (as gaps), so every cluster has one value per epoch
    wide = timeline.pivot(index=["epoch", "start_s", "end_s"], columns="cluster", values="power_w").sort_index()
    wide = wide[clusters].reset_index()
    fig, ax = plt.subplots(figsize=(9, 4.5), layout="constrained")
    # a step plot: each epoch's power is constant from its start to its end
    span_s = wide["end_s"].to_numpy()[-1]
    unit, scale = time_unit(span_s)
    edges = np.append(wide["start_s"].to_numpy(), span_s) * scale
    base = np.zeros(len(wide))
    if not np.isfinite(wide[clusters].to_numpy(dtype=float)).any():
        ax.text(0.5, 0.5, "no epoch has a power value (see the flags column)", ha="center", va="center", transform=ax.transAxes)
    for name in clusters:
        values = np.nan_to_num(wide[name].to_numpy(dtype=float))  # a missing epoch draws as a gap, not a crash
        model = timeline.loc[timeline["cluster"] == name, "model"].iloc[0]
        ax.stairs(base + values, edges, baseline=base, fill=True, alpha=0.75, label=f"{name} ({model})")
        base = base + values
    half = timeline.assign(half=(timeline["power_hi_w"] - timeline["power_w"]) ** 2).groupby("epoch", sort=True)["half"].sum() ** 0.5
    if (half.to_numpy() > 0).any():
        ax.stairs(base + half.to_numpy(), edges, baseline=base - half.to_numpy(), fill=True, color="k", alpha=0.15, label="total ±2·SER")
    flagged = timeline.groupby("epoch")["flags"].apply(lambda s: any("outside" in f or "not_in" in f for f in s))
    if flagged.any():
        ax.plot([], [], " ", label="(some epochs extrapolated: see flags column)")
    finish_power_axes(ax, xlabel=f"simulated time [{unit}]", title=title or "cosim power timeline")
    return save_figure(fig, path)
