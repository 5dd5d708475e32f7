"""``cosim validate``: gem5 + cosim against a board's measurements of the same programs."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from cosim.cli._args import EXIT_PARTIAL
from cosim.errors import CosimError

_HELP = """\
Compare gem5 runs priced by cosim (as `cosim power` prices them: no flags, or
--model alone) with a board's measurements of the same programs: one row per
model, program and clock with measured and simulated IPC, power [W], energy per
instruction [nJ] (power over each side's measured instruction rate), each event
per cycle on both sides, the model on the board's own rates (its counted events,
voltage, clock and powered cores; any input that is not the board's is named),
and the exact split ln(P_gem5/P_board) = the model's own error + gem5's activity,
the latter per event (each swapped alone) with an interaction line.  With --split,
an interval that holds the board (the model's cross-validated error and gem5's
activity error per clock, calibrated on the training programs; each training row's
without its own program): `cosim power --against-board` reads it from -o's table.
Rates, not run lengths, are compared: a board run's input differs from a gem5
run's.  Each board run's first sample is skipped.

MEASURED: ARMPM's concatenated log (Concatenated_Data/cBench/*_big.data) or a
Powmon table (*-powmon-data.csv).  RUNS: a folder of gem5 runs laid out as
PROGRAM/CLOCK/ (e.g. automotive_susan_c/1000MHz/ with stats.txt, config.ini),
or a `cosim explore` study (each finished point named by its workload's program,
its clock read from its config).
Programs or clocks on one side only are listed one line each; programs that are
I/O-bound on the board (cosim/validate/excluded.toml) are left out and named.

example (the board's own model, beside another board's):
  cosim validate ../shared/data/armpm/Concatenated_Data/cBench/xu3_cset_perfcpu_cBench_eMMC_big.data \\
      ../shared/data/gem5/xu3-mibench-train --split ../shared/data/armpm/cbench_split.data \\
      --model cortex-a15-armpm-xu3 --model cortex-a15-gemstone2018 -o validate.csv --plot validate.png
"""


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "validate",
        help="gem5 + cosim against a board's measured power, IPC and event rates",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("measured", type=Path, help="measured board data: an ARMPM .data log or a Powmon .csv table")
    p.add_argument("runs", type=Path, help="folder of gem5 runs (PROGRAM/CLOCK/stats.txt), or an explore study folder")
    p.add_argument("--split", type=Path, help="ARMPM split file (cbench_split.data): marks each row train or test")
    p.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="MODEL",
        help="price the gem5 runs with this model (file or shipped name) instead of cosim power's default; repeat to compare models",
    )
    p.add_argument("-o", "--output", type=Path, default=Path("validate.csv"), help="table .csv or .parquet (default: validate.csv)")
    p.add_argument("--plot", type=Path, help="write measured against simulated power and per-event rate errors (PNG/SVG/PDF)")
    p.add_argument("--allow-partial", action="store_true", help="exit 0 even if some gem5 runs could not be priced")
    p.set_defaults(run=cmd_validate)


def cmd_validate(args: argparse.Namespace) -> int:
    import numpy as np

    from cosim.output import write_table
    from cosim.validate import validate

    result = validate(args.measured, args.runs, split=args.split, models=tuple(args.model))
    rows = result.rows
    if not rows:
        first = (result.one_side or result.excluded or ["nothing found"])[0]
        raise CosimError(
            f"{args.measured} against {args.runs}: no program at a clock on both sides ({first}); name the gem5 runs' "
            "program folders as the board names the programs, at the board's clocks"
        )
    keys = list(dict.fromkeys(k for r in rows for k in r))  # models differ in their events' columns
    columns = {
        k: np.array([r.get(k, "") for r in rows], dtype=object)
        if isinstance(rows[0].get(k, 0.0), str)
        else np.array([r.get(k, np.nan) for r in rows])
        for k in keys
    }
    write_table(columns, args.output)
    print(f"{args.measured} against {args.runs}: {len(rows)} program x clock x model row(s) -> {args.output}")
    for model in result.models:
        _print_model(result, model)
    _print_temperature(result)
    if result.dvfs:
        dvfs_path = args.output.with_name(f"{args.output.stem}-dvfs{args.output.suffix}")
        write_table({k: np.array([r[k] for r in result.dvfs]) for k in result.dvfs[0]}, dvfs_path)
        for model in dict.fromkeys(r["model"] for r in result.dvfs):
            _print_dvfs(result, model, dvfs_path)
    for line in result.excluded:
        print(f"  left out: {line}")
    for line in result.one_side:
        print(f"  one side only: {line}")
    if args.plot is not None:
        from cosim.plots.validate import plot_validation

        first = result.models[0]  # one model's rows: the plot compares it with the board
        plot_validation([r for r in rows if r["model"] == first], result.events, args.plot, title=f"{first}: power per program and clock")
        print(f"  plot -> {args.plot}")
    unpriced = [r for r in rows if r["not_priced"]]
    if unpriced:
        print(
            f"cosim: error: {len(unpriced)} of {len(rows)} gem5 run(s) could not be priced ({unpriced[0]['gem5_run']}: "
            f"{unpriced[0]['not_priced']}); their power columns are written empty",
            file=sys.stderr,
        )
        return 0 if args.allow_partial else EXIT_PARTIAL
    return 0


def _print_model(result, model: str) -> None:
    from cosim.validate.compare import log_terms

    rows = [r for r in result.rows if r["model"] == model]
    s = result.summary(model)
    label = "fitted on this board" if rows[0]["model_board"] == "this board" else "another board's model"
    print(f"model {model} ({label}):")
    print(f"  {'program':<22} {'MHz':>5} {'samples':>7} {'IPC b/g':>11} {'power b/g [W]':>13} {'err':>6} {'nJ/inst b/g':>11} {'err':>6}")
    for r in rows:
        print(
            f"  {r['program']:<22} {r['clock_mhz']:>5g} {r['board_samples']:>7d} {r['ipc_board']:>5.2f}/{_num(r['ipc_gem5'], 2):<5} "
            f"{r['power_board_w']:>6.3f}/{_num(r['power_gem5_w'], 3):<6} {_pct(r['power_err_pct'])} "
            f"{r['epi_board_nj']:>5.2f}/{_num(r['epi_gem5_nj'], 2):<5} {_pct(r['epi_err_pct'])}"
        )
    if not s["priced_rows"]:
        print(f"  no gem5 run could be priced, so no power figures; IPC MAPE {_num(s['ipc_mape_pct'], 1)} % over {s['rows']} row(s)")
        return
    clocks = sorted({r["clock_mhz"] for r in rows if math.isfinite(r["power_gem5_w"])})
    print(
        f"  power MAPE {s['power_mape_pct']:.1f} % (bias {s['power_bias_pct']:+.1f} %; "
        + ", ".join(f"{c:g} MHz {s[f'power_mape_pct@{c:g}']:.1f} % bias {s[f'power_bias_pct@{c:g}']:+.1f} %" for c in clocks)
        + f"), energy per instruction MAPE {_num(s['epi_mape_pct'], 1)} %, IPC MAPE {_num(s['ipc_mape_pct'], 1)} % over "
        f"{s['priced_rows']} priced row(s) of {s['rows']}"
    )
    if any(r["split"] for r in rows):  # with --split: the rows that chose (training) and those that did not (test)
        parts = []
        for split, name in (("train", "training"), ("test", "test")):
            p = result.summary(model, split)
            parts.append(
                f"{name} rows: power MAPE {_num(p['power_mape_pct'], 1)} %, the model on the board's rates "
                f"{_num(p['model_board_mape_pct'], 1)} % over {p['priced_rows']}"
                if p["priced_rows"]
                else f"no {name} row priced"
            )
        print("  by split: " + "; ".join(parts))
    lacks = sorted({e for r in rows for e in r["model_board_inputs_not_board"].split(";") if e})
    inputs = "the board's counted events, voltage, clock and four powered cores"
    if lacks:
        inputs += f"; not the board's: {', '.join(lacks)} (gem5's count per instruction times the board's instructions)"
    print(f"  the model on the board's rates ({inputs}): MAPE {_num(s['model_board_mape_pct'], 1)} %")
    terms = log_terms(rows)
    print(
        "  ln(P_gem5 / P_board), mean over rows x 100 (mean |term| in brackets): "
        + ", ".join(
            f"{t.removeprefix('ln_').replace('event_', '')} {s[f'{t}_mean_pct']:+.2f} ({s[f'{t}_mean_abs_pct']:.2f})" for t in terms
        )
        + "; total = model + activity, activity = the swaps + interaction, in every row"
    )
    rates = ", ".join(
        f"{'IPC' if e == '0x08' else e} {s[f'rate_{e}_mape_pct']:.1f} % ({s[f'rate_{e}_mean_abs_diff']:.3g}/cycle)"
        for e in result.events
        if math.isfinite(s[f"rate_{e}_mape_pct"])
    )
    print(f"  per-event rate error per cycle, mean |gem5/board - 1| (mean |gem5 - board|): {rates or 'no event on both sides'}")
    cal = result.intervals.get(model)
    if cal is None:
        print("  no interval: it is calibrated on training programs (give --split and gem5 runs of two or more of them)")
    else:
        from cosim.validate.interval import Z, coverage

        c, t = coverage(result.rows, model, "train"), coverage(result.rows, model, "test")
        held_out = (
            f"; test rows: board inside on {t['coverage_pct']:.0f} % of {t['rows']}, mean half-width {t['mean_half_width_pct']:.1f} %"
            if t["rows"]
            else "; no test row (no gem5 run of a test program)"
        )
        print(
            f"  interval holding the board (calibrated on the {len(cal.programs)} training programs; model's own error "
            f"{100 * cal.model_sd:.1f} % sd from {cal.model_source}; gem5's activity "
            + ", ".join(f"{f:g} MHz {100 * m:+.1f} % +- {100 * sd:.1f} %" for f, (m, sd) in cal.activity.items())
            + f"; +-{Z} sd): training rows: board inside on {c['coverage_pct']:.0f} % of {c['rows']}, each calibrated "
            f"without its own program, mean half-width {c['mean_half_width_pct']:.1f} %{held_out}"
        )
    differ = sorted({r["powered_cores_gem5"] for r in rows if "powered_cores_differ" in r["flags"]})
    if differ:
        print(
            f"  flag powered_cores_differ: gem5 powers {', '.join(map(str, differ))} core(s) where the board powers 4 (the swap ln_powered_cores)"
        )


def _print_temperature(result) -> None:
    """The thermal model against the board's die temperature: training and test rows apart."""
    from cosim.validate.thermal import temperature_summary

    if not result.temperatures:
        return
    print(f"die temperature, the thermal model on the board's measured power ({result.temperature_note}):")
    first = [r for r in result.rows if r["model"] == result.models[0]]  # one model's rows: the board's are the same in each
    for rows, what in ((first, "rows with a gem5 run"), (result.temperatures, "every board program x clock")):
        for which, s in temperature_summary(rows).items():
            print(
                f"  {what}, {which}: temp_pred_c - temp_board_c MAE {s['mae_k']:.2f} K, bias {s['bias_k']:+.2f} K over "
                f"{s['rows']} row(s); worst {s['worst']}"
            )


def _print_dvfs(result, model: str, path) -> None:
    """The DVFS energy ratios per clock pair: what the what-if says from one clock's run against the board."""
    from cosim.validate.dvfs import dvfs_summary

    print(f"DVFS energy ratios E/inst(f2) / E/inst(f1), {model}: the what-if from the gem5 run at f1 against the board -> {path}")
    print(
        f"  {'split':<8} {'f1->f2 MHz':>11} {'rows':>4} {'board':>6} {'what-if':>7} {'mean|err|':>9} {'bias':>7} {'max|err|':>8} "
        f"{'of means':>8}  mean|err| parts: what-if vs gem5 at f2, gem5 vs board"
    )
    for s in dvfs_summary(result.dvfs, model):
        print(
            f"  {s['split']:<8} {s['from_mhz']:>5g}->{s['to_mhz']:<5g} {s['rows']:>4d} {s['ratio_board']:>6.3f} {s['ratio_whatif']:>7.3f} "
            f"{s['mean_abs_err_pct']:>8.2f}% {s['bias_pct']:>+6.2f}% {s['max_abs_err_pct']:>7.2f}% {s['ratio_of_means_err_pct']:>+7.2f}%  "
            f"{s['whatif_vs_gem5_abs_pct']:.2f} %, {s['gem5_vs_board_abs_pct']:.2f} %"
        )
    refused = [r for r in result.dvfs if r["model"] == model and r["not_priced"]]
    if refused:
        print(f"  {len(refused)} pair(s) the what-if refused, e.g. {refused[0]['program']}: {refused[0]['not_priced']}")


def _num(value: float, digits: int) -> str:
    return f"{value:.{digits}f}" if math.isfinite(value) else "-"


def _pct(value: float) -> str:
    return f"{value:>+5.1f}%" if math.isfinite(value) else f"{'-':>6}"
