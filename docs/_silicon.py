"""The validation page's "against silicon" tables and plot, made while the docs build from the recorded output of
``cosim validate`` in ``explanation/silicon/`` (a small CSV committed with the project: no ../shared needed) and
from the shipped board model's file.  A recorded file missing gives a line saying so instead, never a failed build.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

DOCS = Path(__file__).resolve().parent
RECORDED = DOCS / "explanation" / "silicon" / "xu3-a15-mibench-train.csv"
BOARD_MODEL = DOCS.parent / "models" / "cortex-a15-armpm-xu3.json"


def board_model_table(path: Path = BOARD_MODEL) -> str:
    """Markdown: the board's model as its file records it: events, cross-validation, the test split, fit time."""
    if not path.exists():
        return f"*(the model file {path.name} is not here, so this table is left out)*\n"
    data = json.loads(path.read_text())
    fit, test = data["fit"], data.get("test_split", {})
    row, group = fit["cv_by_row"], fit["cv_by_group"]
    lines = [
        "| what | value |",
        "|---|---|",
        f"| events (Walker's selection among those gem5 counts) | {', '.join(t['name'] for t in data['dynamic_terms'])} |",
        f"| static terms | {', '.join(t['name'] for t in data['static_terms'])} |",
        f"| training rows / programs | {data['training']['n_obs']} samples of {len(data['training']['programs'])} programs |",
        f"| {row['k']}-fold CV by sample (training programs) | MAPE {row['mape_pct']:.2f} % |",
        f"| {group['k']}-fold CV grouped by program (training programs) | MAPE {group['mape_pct']:.2f} %, rms {group['rms_pct']:.2f} %, "
        f"bias {group['bias_pct']:+.2f} % |",
    ]
    if test:
        per = ", ".join(f"{c} MHz {v['mape_pct']:.2f} % ({v['bias_pct']:+.2f} %)" for c, v in test["per_clock"].items())
        lines.append(
            f"| test split, the board's own counters ({len(test['programs'])} programs, {test['rows']} samples, never used) "
            f"| MAPE {test['mape_pct']:.2f} %, bias {test['bias_pct']:+.2f} % ({per}) |"
        )
    if "left_out_events" in fit:
        lines.append(f"| events gem5 cannot count | {fit['left_out_events']['note']} |")
    lines.append(
        f"| V-f table (the board's mean power / current) | {', '.join(f'{f:g} MHz {v:.4f} V' for f, v in data['vf_table']['points_mhz_v'])} |"
    )
    lines.append(f"| fit time (selection, fit, cross-validation) | {fit['fit_time_s']:.1f} s |")
    return "\n".join(lines) + "\n"


def silicon_table(path: Path = RECORDED, plot: Path | None = None) -> str:
    """Markdown: per model the error figures ``cosim validate`` prints, the decomposition's mean terms, the interval's
    coverage, and the board's model's rows one by one."""
    if not path.exists():
        return f"*(the recorded results {path.name} are not here, so this table is left out)*\n"
    from cosim.validate.compare import Validation, log_terms
    from cosim.validate.interval import coverage, read_validation

    rows = read_validation(path)
    events = tuple(sorted(k[len("rate_") : -len("_err_pct")] for k in rows[0] if k.startswith("rate_") and k.endswith("_err_pct")))
    result = Validation(rows=rows, events=events)
    models = result.models
    clocks = sorted({r["clock_mhz"] for r in rows})
    lines = [
        "| model | whose | power MAPE | bias at " + ", ".join(f"{c:g}" for c in clocks) + " MHz | model on the board's rates "
        "| energy per instruction MAPE | board inside the interval | mean half-width |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for model in models:
        s, c = result.summary(model), coverage(rows, model)
        whose = "this board's" if next(r for r in rows if r["model"] == model)["model_board"] == "this board" else "another board's"
        lines.append(
            f"| {model} | {whose} | {s['power_mape_pct']:.1f} % | "
            + ", ".join(f"{s[f'power_bias_pct@{c:g}']:+.1f} %" for c in clocks)
            + f" | {s['model_board_mape_pct']:.1f} % | {s['epi_mape_pct']:.1f} % | {c['coverage_pct']:.0f} % of {c['rows']} | "
            f"{c['mean_half_width_pct']:.1f} % |"
        )
    terms = list(dict.fromkeys(t for m in models for t in log_terms([r for r in rows if r["model"] == m])))
    lines += ["", "| term, mean × 100 (mean \\|term\\|) | " + " | ".join(models) + " |", "|---|" + "---|" * len(models)]
    for term in terms:
        cells = []
        for model in models:
            s = result.summary(model)
            value = s.get(f"{term}_mean_pct", math.nan)
            cells.append(f"{value:+.2f} ({s[f'{term}_mean_abs_pct']:.2f})" if math.isfinite(value) else "–")
        lines.append(f"| `{term}` | " + " | ".join(cells) + " |")
    board_model = next((m for m in models if next(r for r in rows if r["model"] == m)["model_board"] == "this board"), models[0])
    lines += [
        "",
        f"Row by row, `{board_model}`:",
        "",
        "| program | MHz | board samples | IPC board / gem5 | power board / gem5 [W] | error | interval [W] | inside | `ln_model` | `ln_activity` |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in (r for r in rows if r["model"] == board_model):
        lines.append(
            f"| {r['program']} | {r['clock_mhz']:g} | {int(r['board_samples'])} | {r['ipc_board']:.2f} / {r['ipc_gem5']:.2f} "
            f"| {r['power_board_w']:.3f} / {r['power_gem5_w']:.3f} | {r['power_err_pct']:+.1f} % | {r['board_lo_w']:.3f}–{r['board_hi_w']:.3f} "
            f"| {'yes' if r['board_inside'] else '**no**'} | {r['ln_model']:+.3f} | {r['ln_activity']:+.3f} |"
        )
    if plot is not None:
        from cosim.plots.validate import plot_board_intervals

        plot_board_intervals([r for r in rows if math.isfinite(r["power_gem5_w"])], plot, models=models[:2])
    return "\n".join(lines) + "\n"
