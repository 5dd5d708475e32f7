"""``cosim validate``'s plot: measured against simulated power per program and clock, and per-event rate errors."""

from __future__ import annotations

import math
from pathlib import Path

from cosim.plots import pyplot, save_figure


def plot_validation(rows: list[dict], events: tuple[str, ...], path: str | Path, *, title: str = "") -> Path:
    """Left: gem5 + cosim power against the board's [W], one marker per program, colour by clock, y = x line.
    Right: each event's rate per cycle, gem5's over the board's, one box per event."""
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5), layout="constrained")
    clocks = sorted({r["clock_mhz"] for r in rows})
    priced = [r for r in rows if math.isfinite(r["power_gem5_w"])]
    for clock in clocks:
        mine = [r for r in priced if r["clock_mhz"] == clock]
        if mine:
            left.scatter([r["power_board_w"] for r in mine], [r["power_gem5_w"] for r in mine], label=f"{clock:g} MHz", s=28)
    board_only = [r for r in rows if math.isfinite(r["power_model_board_w"])]
    if board_only:
        left.scatter(
            [r["power_board_w"] for r in board_only],
            [r["power_model_board_w"] for r in board_only],
            marker="x",
            c="grey",
            s=20,
            label="model on the board's rates",
        )
    values = [v for r in rows for v in (r["power_board_w"], r["power_gem5_w"], r["power_model_board_w"]) if math.isfinite(v)]
    top = max(values, default=1.0) * 1.1
    left.plot([0, top], [0, top], "k-", lw=0.8)
    left.fill_between([0, top], [0, top * 0.95], [0, top * 1.05], color="k", alpha=0.08, label="±5 %")
    if not priced:
        left.text(0.5, 0.6, "no gem5 run could be priced (see the not_priced column)", ha="center", transform=left.transAxes)
    left.set_xlim(0, top)
    left.set_ylim(0, top)
    left.set_xlabel("measured cluster power [W]")
    left.set_ylabel("simulated cluster power [W]")
    left.set_title(title or "power per program and clock")
    left.legend(fontsize="small", loc="upper left")
    data, labels = [], []
    for event in events:
        # ratios on a log axis: a rare event off by 100x and a common one off by 10 % both stay readable
        ratios = [r[f"rate_{event}_gem5"] / r[f"rate_{event}_board"] for r in rows if math.isfinite(r[f"rate_{event}_err_pct"])]
        ratios = [x for x in ratios if x > 0]
        if ratios:
            data.append(ratios)
            labels.append("IPC" if event == "0x08" else event)
    if data:
        right.boxplot(data, showfliers=True)
        right.set_xticks(range(1, len(labels) + 1), labels)
        right.set_yscale("log")
    right.axhline(1, color="k", lw=0.8)
    right.set_xlabel("event (only those the board counts)")
    right.set_ylabel("gem5's rate per cycle / the board's (log scale)")
    right.set_title("per-event rate error, one value per program and clock")
    return save_figure(fig, path)


def plot_board_intervals(rows: list[dict], path: str | Path, *, models: list[str] | None = None) -> Path:
    """One panel per model: each program and clock of the training split, the board's measured power (black dot)
    and gem5 + cosim's price (coloured) with the interval that holds the board (bar), each training row's interval
    calibrated without its own program."""
    plt = pyplot()
    models = models or list(dict.fromkeys(r["model"] for r in rows))
    fig, axes = plt.subplots(len(models), 1, figsize=(12, 3.2 * len(models)), layout="constrained", squeeze=False)
    for ax, model in zip(axes[:, 0], models):
        mine = sorted(
            (r for r in rows if r["model"] == model and math.isfinite(r["power_gem5_w"])), key=lambda r: (r["clock_mhz"], r["program"])
        )
        x = list(range(len(mine)))
        ax.scatter(x, [r["power_board_w"] for r in mine], c="k", s=18, zorder=3, label="board (measured)")
        price = [r["power_gem5_w"] for r in mine]
        lo = [r["power_gem5_w"] - r["board_lo_w"] if math.isfinite(r["board_lo_w"]) else 0.0 for r in mine]
        hi = [r["board_hi_w"] - r["power_gem5_w"] if math.isfinite(r["board_hi_w"]) else 0.0 for r in mine]
        ax.errorbar(x, price, yerr=[lo, hi], fmt="o", ms=4, capsize=2, alpha=0.8, label="gem5 + cosim, with the interval holding the board")
        inside = sum(bool(r["board_inside"]) for r in mine)
        board = mine[0]["model_board"] if mine else ""
        ax.set_title(
            f"{model} ({'fitted on this board' if board == 'this board' else 'another board'}): board inside {inside} of {len(mine)}"
        )
        ax.set_xticks(x, [f"{r['program'].split('_', 1)[-1]} {r['clock_mhz']:g}" for r in mine], rotation=90, fontsize=6)
        ax.set_yscale("log")
        ax.set_ylabel("cluster power [W]")
        ax.legend(fontsize="small", loc="upper left")
    return save_figure(fig, path)
