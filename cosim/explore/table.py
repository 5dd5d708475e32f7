"""A study's results: one row per point (``simulated``) and per ``--dvfs`` what-if (``predicted``); its Pareto plot."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from cosim.explore.design import WORKLOAD, Design, point_id, sample_points
from cosim.explore.store import FINAL, Store, status_of

if TYPE_CHECKING:
    import pandas as pd

_LEAD = ("status", "reason")
_TAIL = ("flags", "source", "pareto")


def results(design: Design, store: Store) -> pd.DataFrame:
    """Rows in design order (a search's points in the grid's order), so the table is the same whoever ran it."""
    import pandas as pd

    from cosim.dse.choose import pareto_front
    from cosim.explore.design import grid_points

    latest = store.latest()
    order = grid_points(design) if design.method == "grid" or len(latest) > len(sample_points(design)) else sample_points(design)
    rows: list[dict[str, Any]] = []
    predicted: list[dict[str, Any]] = []
    for params in order:
        pid = point_id(params)
        trial = latest.get(pid)
        if trial is None or status_of(trial) not in (*FINAL, "failed"):
            continue
        row = dict(trial.user_attrs.get("row", {}))
        base = {"point": pid, **params, "status": row.pop("status"), "reason": row.pop("reason", "")}
        found = row.pop("predicted", [])
        rows.append({**base, **row, "source": "simulated"})
        for p in found:
            predicted.append({**base, **p, "flags": row.get("flags", ""), "source": "predicted"})
    table = pd.DataFrame(rows + predicted)
    if table.empty:
        return table
    table["pareto"] = False
    for source in ("simulated", "predicted"):  # each source has its own front: a prediction never hides a simulation
        ok = (table["status"] == "ok") & (table["source"] == source)
        if ok.any():
            table.loc[ok, "pareto"] = pareto_front(table[ok]).to_numpy()
    front = [c for c in table.columns if c not in _LEAD + _TAIL]
    return table[[*front[: 1 + len(design.space())], *_LEAD, *front[1 + len(design.space()) :], *(c for c in _TAIL if c in table.columns)]]


def differing(table: pd.DataFrame, design: Design) -> list[str]:
    """The parameters whose value differs between the table's simulated points (the labels of the plot)."""
    sim = table[table["source"] == "simulated"]
    return [name for name in design.space() if sim[name].astype(str).nunique() > 1]


def label(row, names: list[str]) -> str:
    parts = []
    for name in names:
        value = str(row[name])
        if name == WORKLOAD:
            value = " ".join(Path(w).name for w in value.split())
        parts.append(f"{name.lstrip('-')}={value}")
    return ", ".join(parts)


def plot_study(table: pd.DataFrame, design: Design, path: str | Path, *, title: str = "") -> Path:
    """Energy against runtime: simulated points filled and labelled by what differs, predicted ones hollow; a front for each."""
    from cosim.plots import pyplot, save_figure

    plt = pyplot()
    ok = table[table["status"] == "ok"]
    k, t_unit, e_unit = (1.0, "s", "J") if ok["runtime_s"].max() >= 1 else (1e3, "ms", "mJ")
    fig, ax = plt.subplots(figsize=(8, 5.5), layout="constrained")
    pred = ok[ok["source"] == "predicted"]
    if not pred.empty:
        ax.scatter(
            pred["runtime_s"] * k, pred["energy_j"] * k, s=14, facecolors="none", edgecolors="0.6", label="predicted (--dvfs what-if)"
        )
        f = pred[pred["pareto"]].sort_values("runtime_s")
        ax.plot(f["runtime_s"] * k, f["energy_j"] * k, "--", color="0.5", lw=1, label="predicted Pareto front")
    sim = ok[ok["source"] == "simulated"]
    names = differing(table, design)
    ax.scatter(sim["runtime_s"] * k, sim["energy_j"] * k, s=30, c="C0", zorder=3, label="simulated (gem5)")
    f = sim[sim["pareto"]].sort_values("runtime_s")
    ax.plot(f["runtime_s"] * k, f["energy_j"] * k, "o-", color="C1", mfc="none", ms=10, lw=1.5, zorder=2, label="simulated Pareto front")
    many = len(sim) > 24  # a crowded plot labels its front only
    for i, (x, y, text) in enumerate(
        _labels(
            f if many else sim, names, ax_span=(ok["runtime_s"].max() - ok["runtime_s"].min(), ok["energy_j"].max() - ok["energy_j"].min())
        )
    ):
        ax.annotate(text, (x * k, y * k), fontsize=7, xytext=(6, 4 if i % 2 == 0 else -10), textcoords="offset points")
    ax.set_xlabel(f"runtime [{t_unit}]")
    ax.set_ylabel(f"energy [{e_unit}]")
    ax.set_title(title or f"{design.path.name}: {len(sim)} simulated points")
    ax.legend(fontsize="small")
    return save_figure(fig, path)


def _labels(points: pd.DataFrame, names: list[str], *, ax_span: tuple[float, float]) -> list[tuple[float, float, str]]:
    """One label per group of points that fall on the same spot (within 1 % of the axes): their values joined by '|'."""
    groups: list[list] = []
    for _, row in points.sort_values(["runtime_s", "energy_j"]).iterrows():
        for group in groups:
            first = group[0]
            if (
                abs(row["runtime_s"] - first["runtime_s"]) <= 0.01 * ax_span[0]
                and abs(row["energy_j"] - first["energy_j"]) <= 0.01 * ax_span[1]
            ):
                group.append(row)
                break
        else:
            groups.append([row])
    out = []
    for group in groups:
        parts = []
        for name in names:
            values = list(dict.fromkeys(label(r, [name]).split("=", 1)[1] for r in group))
            parts.append(f"{name.lstrip('-')}={'|'.join(values)}")
        out.append((float(group[0]["runtime_s"]), float(group[0]["energy_j"]), ", ".join(parts)))
    return out
