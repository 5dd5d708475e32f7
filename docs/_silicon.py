"""The validation page's "against silicon" table and plot, made while the docs build from the recorded results
of ``cosim validate`` in ``explanation/silicon/`` (small CSVs committed with the project: no ../shared needed).

A recorded file missing gives a line saying so instead of a table, never a failed build.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

DOCS = Path(__file__).resolve().parent
RECORDED = DOCS / "explanation" / "silicon" / "xu3-a15-mibench-train.csv"


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        for key, value in row.items():
            if key not in ("program", "split", "model", "gem5_run", "flags", "not_priced"):
                row[key] = float(value) if value != "" else math.nan
    return rows


def silicon_table(path: Path = RECORDED, plot: Path | None = None) -> str:
    """Markdown: one line per program and clock, then the error figures ``cosim validate`` prints."""
    if not path.exists():
        return f"*(the recorded results {path.name} are not here, so this table is left out)*\n"
    from cosim.validate.compare import Validation

    rows = _rows(path)
    events = tuple(sorted(k[len("rate_") : -len("_err_pct")] for k in rows[0] if k.startswith("rate_") and k.endswith("_err_pct")))
    result = Validation(rows=rows, events=events)
    s = result.summary()
    lines = [
        "| program | MHz | board samples | IPC board / gem5 | power board / gem5 [W] | error | model on the board's rates [W] "
        "| nJ/inst board / gem5 | error | of it gem5's IPC |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['program']} | {r['clock_mhz']:g} | {int(r['board_samples'])} | {r['ipc_board']:.2f} / {r['ipc_gem5']:.2f} "
            f"| {r['power_board_w']:.3f} / {r['power_gem5_w']:.3f} | {r['power_err_pct']:+.1f} % | {r['power_model_board_w']:.3f} "
            f"| {r['epi_board_nj']:.3f} / {r['epi_gem5_nj']:.3f} | {r['epi_err_pct']:+.1f} % | {r['epi_err_from_ipc_pct']:+.1f} % |"
        )
    rates = ", ".join(
        f"{'IPC' if e == '0x08' else e} {s[f'rate_{e}_mape_pct']:.1f} % (mean |difference| {s[f'rate_{e}_mean_abs_diff']:.3g} per cycle)"
        for e in events
        if math.isfinite(s[f"rate_{e}_mape_pct"])
    )
    lines += [
        "",
        f"Over the {int(s['rows'])} rows (computed from the recorded file while these pages build): **power MAPE "
        f"{s['power_mape_pct']:.1f} %**, energy per instruction MAPE {s['epi_mape_pct']:.1f} %, IPC MAPE {s['ipc_mape_pct']:.1f} %; "
        f"gem5's IPC is {s['epi_ipc_share_pct']:.0f} % of the energy-per-instruction error (shares of the log error). "
        f"The power error split: the model on the board's own rates is off by {s['model_err_mean_abs_pct']:.1f} % on average, "
        f"gem5's events against the board's cost {s['events_cost_mean_abs_pct']:.1f} % (its parts: cycles clocked "
        f"{s['events_cost_cycles_mean_abs_pct']:.1f} %, the other events the board counted {s['events_cost_counted_mean_abs_pct']:.1f} %, "
        f"the events it did not count, moved only by gem5's IPC, {s['events_cost_uncounted_mean_abs_pct']:.1f} %). Per event and cycle, gem5 against the "
        f"board: {rates}.",
    ]
    near = [r for r in rows if abs(r["ipc_err_pct"]) <= 15 and math.isfinite(r["power_err_pct"])]
    if near:
        programs = sorted({r["program"] for r in near})
        mape = sum(abs(r["power_err_pct"]) for r in near) / len(near)
        lines += [
            "",
            f"On the {len(near)} rows where gem5's IPC is within 15 % of the board's ({', '.join(programs)}): power MAPE {mape:.1f} %.",
        ]
    if plot is not None:
        from cosim.plots.validate import plot_validation

        plot_validation(rows, events, plot, title="ODROID-XU3 A15 cluster: board against gem5 + cosim")
    return "\n".join(lines) + "\n"
