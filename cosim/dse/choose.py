"""Choosing a configuration: Pareto front of energy against runtime, and the best one under a
power cap, a deadline, or for minimum EDP (as Fig. 10 of the Jetson Roofline paper)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from cosim.dse.sweep import POINT_ESTIMATE_FLAG
from cosim.errors import CosimError


def pareto_front(df: pd.DataFrame, *, x: str = "runtime_s", y: str = "energy_j") -> pd.Series:
    """True for rows no other row beats on both ``x`` and ``y`` (both minimised); a row without both values is never on it."""
    order = np.lexsort((df[y].to_numpy(), df[x].to_numpy()))
    best_y = np.inf
    on_front = np.zeros(len(df), dtype=bool)
    for i in order:
        if np.isfinite(df[x].iloc[i]) and df[y].iloc[i] < best_y:
            on_front[i] = True
            best_y = df[y].iloc[i]
    return pd.Series(on_front, index=df.index)


#: the columns whose runs share a Pareto front in a sweep by default: the same program on the same system design
#: (another program's runtime says nothing about this one's; another design is priced by other models)
GROUP = ("program", "design")


def pareto_by_group(table: pd.DataFrame, *, by: Sequence[str] = GROUP, rows: pd.Series | None = None) -> pd.DataFrame:
    """``table`` with ``pareto`` (on the front of its group) and ``front`` (the group: its values of ``by``, e.g.
    ``program=susan ... -c; design=...``); ``by=()`` puts every run on one front.  Only ``rows`` (default: all) are
    compared; the others are on no front."""
    missing = [c for c in by if c not in table]
    if missing:
        raise CosimError(
            f"--group {','.join(by)}: the table has no column {', '.join(missing)}; give columns it has, e.g. program or design"
        )
    rows = pd.Series(True, index=table.index) if rows is None else rows
    table = table.copy()
    table["front"] = [("; ".join(f"{c}={table.at[i, c]}" for c in by) or "all runs") if ok else "" for i, ok in rows.items()]
    table["pareto"] = False
    for name in dict.fromkeys(table.loc[rows, "front"]):
        mine = table.index[rows & (table["front"] == name)]
        table.loc[mine, "pareto"] = pareto_front(table.loc[mine]).to_numpy()
    return table


@dataclass(frozen=True)
class Choice:
    row: pd.Series | None  # None: no configuration meets the constraints
    reason: str


def choose(df: pd.DataFrame, *, power_cap_w: float | None = None, deadline_s: float | None = None) -> Choice:
    """Under a peak-power cap: the fastest (the cap compares ``peak_power_w_hi``, the upper end of the power model's
    interval, where the table has it); under a deadline: the least energy; both: least energy; neither: least EDP."""
    # a configuration without a runtime or energy value (implausible rows kept flagged) can be neither compared nor chosen
    ok = pd.Series(np.isfinite(df["runtime_s"].to_numpy(float)) & np.isfinite(df["energy_j"].to_numpy(float)), index=df.index)
    if not ok.any():
        return Choice(None, f"none of the {len(df)} configuration(s) has a runtime and energy value to choose by (see their flags)")
    # a cap compares the peak's upper end (the power model's interval) where the table has one, as kernel-choose does
    peak = "peak_power_w_hi" if "peak_power_w_hi" in df else "peak_power_w"
    # where a row has no upper end the cap compares its point estimate (said in the reason), never nothing or 0
    capped = df[peak].fillna(df["peak_power_w"])
    if power_cap_w is not None:
        ok &= capped <= power_cap_w
    if deadline_s is not None:
        ok &= df["runtime_s"] <= deadline_s
    if not ok.any():
        limits = " and ".join(
            s
            for s in (
                f"peak power <= {power_cap_w:g} W" if power_cap_w is not None else "",
                f"runtime <= {deadline_s:g} s" if deadline_s is not None else "",
            )
            if s
        )
        return Choice(
            None,
            f"no configuration meets {limits} (the lowest peak power{' upper end' if peak != 'peak_power_w' else ''} is {capped.min():.3f} W, "
            f"the shortest runtime {df['runtime_s'].min():.6g} s)"
            + (_point_estimates(df, capped.idxmin()) if power_cap_w is not None and capped.notna().any() else ""),
        )
    pool = df[ok]
    if deadline_s is not None:
        key, what = "energy_j", "least energy"
    elif power_cap_w is not None:
        key, what = "runtime_s", "fastest"
    else:
        key, what = "edp_js", "least energy-delay product"
    row = pool.loc[pool[key].idxmin()]
    if power_cap_w is None and deadline_s is None:
        return Choice(row, f"{what} of {int(ok.sum())} configuration(s)")
    reason = f"{what} of {int(ok.sum())} configuration(s) meeting the constraints"
    if power_cap_w is not None and peak != "peak_power_w":
        reason += f", capped on the peak's upper end ({peak}: the power model's interval)" + _point_estimates(df, row.name)
    # chosen on the predicted runtime; a what-if row's interval may reach past the deadline: say so
    hi = float(row.get("runtime_s_hi", np.nan))
    if deadline_s is not None and np.isfinite(hi) and hi > deadline_s:
        reason += f"; its runtime interval reaches {hi:.6g} s, past the deadline (for a deadline that must hold, keep rows with runtime_s_hi <= it)"
    return Choice(row, reason)


#: flags saying a row's ``peak_power_w_hi`` holds a cluster's point estimate, its model having no interval there:
#: a sweep's and a what-if's (whose model part of the interval is missing)
_NO_INTERVAL = (f"{POINT_ESTIMATE_FLAG}:", "interval_whatif_only:")


def _point_estimates(df: pd.DataFrame, label) -> str:
    """What the reason adds when row ``label``'s upper end is, for some cluster, the point estimate (flagged)."""
    if "flags" not in df or label not in df.index:
        return ""
    flags = [f for f in str(df.at[label, "flags"]).split(";") if f.startswith(_NO_INTERVAL)]
    if not flags:
        return ""
    clusters = sorted({f.split(":", 1)[1] for f in flags})
    return (
        f"; for {', '.join(clusters)} that upper end is the point estimate: {'its model publishes' if len(clusters) == 1 else 'their models publish'} "
        f"no interval (flag {flags[0].split(':')[0]})"
    )


def point_label(row: pd.Series) -> str:
    """A configuration's clocks, e.g. ``1800/600`` (MHz, in the table's cluster order); the run's name for a sweep."""
    clocks = [f"{row[c]:g}" for c in row.index if str(c).endswith("_freq_mhz")]
    return "/".join(clocks) if clocks else str(row.get("run", ""))


def plot_pareto(df: pd.DataFrame, path: str | Path, *, choice: Choice | None = None, title: str = "", group: str | None = None) -> Path:
    """Energy against runtime, with the Pareto front (one per value of column ``group`` where it has several: a
    sweep's system designs) and the chosen row."""
    from cosim.plots import pyplot, save_figure

    plt = pyplot()

    # seconds and joules for long runs, milli- for short ones
    k, t_unit, e_unit = (1.0, "s", "J") if df["runtime_s"].max() >= 1 else (1e3, "ms", "mJ")
    fig, ax = plt.subplots(figsize=(6.5, 4.5), layout="constrained")
    ax.scatter(df["runtime_s"] * k, df["energy_j"] * k, s=12, c="0.6", label="configurations")
    groups = list(dict.fromkeys(df[group])) if group is not None and group in df else []
    for name in groups if len(groups) > 1 else [None]:
        mine = df if name is None else df[df[group] == name]
        f = mine[pareto_front(mine)].sort_values("runtime_s")
        ax.plot(f["runtime_s"] * k, f["energy_j"] * k, "o-", ms=4, label="Pareto front" + ("" if name is None else f": {name}"))
    for _, row in df.iterrows():  # each point's clocks, so the chosen one can be read off the plot
        ax.annotate(point_label(row), (row["runtime_s"] * k, row["energy_j"] * k), fontsize=5, xytext=(2, 2), textcoords="offset points")
    if choice is not None and choice.row is not None:
        names = "/".join(str(c).removesuffix("_freq_mhz") for c in df.columns if str(c).endswith("_freq_mhz"))
        label = f"chosen: {point_label(choice.row)}" + (f" MHz ({names})" if names else "")
        ax.plot(choice.row["runtime_s"] * k, choice.row["energy_j"] * k, "r*", ms=14, label=label)
    ax.set_xlabel(f"runtime [{t_unit}]")
    ax.set_ylabel(f"energy [{e_unit}]")
    ax.set_title(title or "DVFS what-if")
    ax.legend(fontsize="small")
    return save_figure(fig, path)
