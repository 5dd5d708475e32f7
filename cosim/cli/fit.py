"""``cosim apply``, ``fit`` and ``fit-rail``: models against measured board data."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cosim.cli._args import EXIT_PARTIAL, _add_trust_flags, _pairs
from cosim.errors import CosimError


def add_parsers(sub) -> None:
    a = sub.add_parser("apply", help="apply a model to measured board data (prints MAPE)")
    a.add_argument("model", help="model file or shipped model name")
    a.add_argument("measured", type=Path, help="measured table (Powmon/GemStone layout, ARMPM log, or CSV/TSV)")
    a.add_argument(
        "--format",
        choices=("table", "armpm"),
        default="table",
        help="input layout: table (default) or armpm (ARMPM's raw results.data or concatenated .data)",
    )
    a.add_argument("--cores", type=int, default=4, help="armpm: cores of the measured cluster (counts are per cluster; default 4)")
    a.add_argument("--compare-with", metavar="COLUMN", help="measured power column [W]; prints MAPE")
    a.add_argument("--label", help="Powmon cluster label (A7, A15) when several are present")
    a.add_argument("--freq-col", help="frequency column [MHz]")
    a.add_argument("--voltage-col", help="voltage column [V]")
    a.add_argument(
        "--event-col",
        action="append",
        default=[],
        metavar="EVENT=COLUMN",
        help="per-core average rate column [events/s] for EVENT (e.g. 0x11=cycles)",
    )
    a.add_argument(
        "--temperature-col",
        metavar="COLUMN",
        help="die temperature column [°C] for static power (models with a temperature term; default: the table's own "
        "die temperature column where it has one, 'Average Temperature A15' or 'CPU(4) Temperature(C)', else the training "
        "board's at each clock; rows outside its trained temperatures are flagged)",
    )
    a.add_argument(
        "--no-temperature",
        action="store_true",
        help="price static power at the training board's temperature at each clock, not the table's die temperature",
    )
    a.add_argument(
        "--voltage",
        choices=("measured", "table", "voltage-model"),
        default="measured",
        help="voltage given to the model: measured column (default), the model's V-f table, or its voltage model",
    )
    a.add_argument("-o", "--output", type=Path, help="write predictions (CSV or .parquet)")
    _add_trust_flags(a, isa=False)
    a.add_argument("--allow-partial", action="store_true", help="exit 0 even if some rows have no value")
    a.set_defaults(run=_cmd_apply)

    f = sub.add_parser(
        "fit",
        help="build a Walker-formulation model from measured data",
        description=_FIT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    f.add_argument("measured", type=Path, help="measured table: Powmon/GemStone layout, ARMPM log, or CSV/TSV")
    f.add_argument("--format", choices=("table", "armpm"), default="table", help="input layout (default: table)")
    f.add_argument("--power-col", required=True, metavar="COLUMN", help="measured cluster power [W]")
    f.add_argument("--events", metavar="LIST", help="model inputs, e.g. 0x11,0x1b-0x73,0x50 (a-b: difference of events)")
    f.add_argument(
        "--select",
        type=int,
        metavar="N",
        help="choose N events (cycle counter first, then by R^2, then VIF transforms); armpm: among the events gem5 counts",
    )
    f.add_argument("--candidates", metavar="LIST", help="events --select may choose from (default: every event column)")
    f.add_argument(
        "--split",
        type=Path,
        metavar="FILE",
        help="armpm: a split file (cbench_split.data): fit on its training programs only, score on its test programs",
    )
    f.add_argument("--label", help="Powmon cluster label (A7, A15)")
    f.add_argument("--freq-col", help="frequency column [MHz]")
    f.add_argument("--voltage-col", help="voltage column [V]")
    f.add_argument("--event-col", action="append", default=[], metavar="EVENT=COLUMN", help="per-core rate column [events/s]")
    f.add_argument("--group-by", metavar="COLUMN", help="workload column: grouped cross-validation and per-workload errors")
    f.add_argument("--idle", metavar="NAME", help="workload name of idle rows: fits the voltage model (Section VIII)")
    f.add_argument("--folds", type=int, default=10, help="k of k-fold cross-validation (default 10)")
    f.add_argument("--cores", type=int, default=4, help="cores of the measured cluster (default 4)")
    f.add_argument("--isa", default="arm", help="ISA of the measured cores, written into the model (default arm)")
    f.add_argument("--name", default="fitted-model", help="model name")
    f.add_argument("--component", default="CPU cluster", help="what the model is of, in words")
    f.add_argument("-o", "--output", type=Path, default=Path("model.json"), help="model file (a .md model card and plots go beside it)")
    f.set_defaults(run=_cmd_fit, output_suffixes=(".json",), extra_outputs=_fit_outputs)

    r = sub.add_parser("fit-rail", help="fit a per-rail model (Tegra K1 methodology) from measured data")
    r.add_argument("measured", type=Path, help="measured table (CSV/TSV)")
    r.add_argument("--spec", type=Path, required=True, help="JSON: power_col and rails (see cosim/fit/rail.py)")
    r.add_argument("-o", "--output", type=Path, default=Path("rail-model.json"), help="coefficients and fit statistics (JSON)")
    r.set_defaults(run=_cmd_fit_rail, output_suffixes=(".json",))


def _fit_outputs(args: argparse.Namespace) -> dict[str, Path]:
    """What cosim fit writes beside its model file: the model card and the diagnostic plots."""
    stem = args.output.with_suffix("")
    return {
        f"-o {args.output}'s model card": args.output.with_suffix(".md"),
        **{f"-o {args.output}'s {kind} plot": stem.with_name(f"{stem.name}-{kind}.png") for kind in ("residuals", "workloads")},
    }


_FIT_HELP = """\
Fit P = sum beta*E*V^2*f + static(V, f) (Walker et al., TCAD 2017) by OLS with HC3
errors; report R^2, F, SER, VIFs and k-fold cross-validation; write a cosim model
file, a model card and diagnostic plots.

example (the TCAD Cortex-A15 model from its published data):
  cosim fit asrtpm-A15-powmon-data.csv --label A15 --power-col "Power A15" \\
      --events 0x11,0x1b-0x73,0x50,0x6a,0x73,0x14,0x19 --group-by "Workload Name" --idle idle \\
      --name my-a15 -o my-a15.json
"""


def _cmd_apply(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    from cosim.fit.apply import apply_model, mape_pct
    from cosim.models.modelfile import load_model
    from cosim.output import write_table
    from cosim.readers.measured import read_measured

    model = load_model(args.model)
    if args.voltage_col and args.voltage != "measured":  # the column would be read and silently not used
        raise CosimError(f"--voltage-col {args.voltage_col} with --voltage {args.voltage}: give one source of voltage")
    if args.format == "armpm":
        from cosim.readers.armpm import read_armpm

        table_only = [f for f, v in (("--label", args.label), ("--freq-col", args.freq_col), ("--voltage-col", args.voltage_col)) if v]
        if table_only or args.event_col:
            raise CosimError(
                f"{', '.join(table_only + ['--event-col'] * bool(args.event_col))}: for --format table; an ARMPM log names its columns"
            )
        measured = read_armpm(args.measured, cores=args.cores)
        lacking = sorted(set(model.events) - set(measured.rates))
        if lacking:
            raise CosimError(
                f"{args.measured}: {model.name} needs event(s) {', '.join(lacking)}, which this ARMPM log does "
                f"not count (it has {', '.join(sorted(measured.rates))}); fit a model on its events with "
                "cosim fit --format armpm"
            )
    else:
        measured = read_measured(
            args.measured,
            events=model.events,
            label=args.label,
            freq_col=args.freq_col,
            voltage_col=args.voltage_col,
            event_cols=_pairs(args.event_col, "--event-col"),
            need_voltage=args.voltage == "measured",
        )
    if args.compare_with and args.compare_with not in measured.table.columns:  # before any work, and named
        raise CosimError(f"{args.measured}: no column '{args.compare_with}' to compare with; {_columns(measured.table)}")
    if args.no_temperature and args.temperature_col:
        raise CosimError("--no-temperature with --temperature-col: give one (or neither: the table's own temperature column)")
    if not args.temperature_col and not args.no_temperature:
        from cosim.fit.apply import default_temperature_column

        args.temperature_col = default_temperature_column(model, measured)
    temperature = _temperature(args, measured) if args.temperature_col else None
    pred = apply_model(
        model,
        measured,
        temperature_c=temperature,
        voltage=args.voltage,
        keep_implausible=args.keep_implausible,
        extrapolate=args.extrapolate,
        source=str(args.measured),
    )
    print(f"{args.measured}: {len(pred)} rows, model {model.name}" + (f" on {measured.label} columns" if measured.label else ""))
    if pred["extrapolated"].any():
        print(f"  {int(pred['extrapolated'].sum())} row(s) outside the model's training V-f range (flagged)")
    if pred["implausible"].any():
        print(f"  {int(pred['implausible'].sum())} implausible row(s) kept, flagged (--keep-implausible)")
    if temperature is not None:
        print(f"  {_temperature_note(model, pred, args.temperature_col)}")
    elif args.no_temperature:
        print("  static power at the training board's die temperature at each clock (--no-temperature)")
    if args.compare_with:
        column = measured.table[args.compare_with]
        actual = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(np.isnan(actual) & column.notna().to_numpy())
        if len(bad):
            raise CosimError(
                f"{args.measured}: row {pred['input_row'].iloc[bad[0]]}: '{args.compare_with}' is {column.iloc[bad[0]]!r}, "
                "not a power [W]; fix or remove that row"
            )
        pred["measured_w"] = actual
        print(f"  MAPE vs '{args.compare_with}': {mape_pct(pred['power_w'].to_numpy(), actual):.2f} %")
        judged = np.isfinite(pred["power_lo_w"].to_numpy()) & np.isfinite(actual)
        if judged.any():
            inside = (actual >= pred["power_lo_w"].to_numpy()) & (actual <= pred["power_hi_w"].to_numpy())
            print(f"  interval covers {100 * inside[judged].mean():.1f} % of {int(judged.sum())} row(s)")
    if args.output:
        write_table(pred, args.output)
        print(f"  predictions -> {args.output}")
    missing = int(pred["no_value"].sum())
    if missing:
        first = pred["input_row"].iloc[int(np.flatnonzero(pred["no_value"].to_numpy())[0])]
        print(
            f"cosim: error: {args.measured}: {missing} of {len(pred)} row(s) have no value (a frequency or voltage "
            f"that is not a positive number, or a missing rate; first at line {first})",
            file=sys.stderr,
        )
        return 0 if args.allow_partial else EXIT_PARTIAL
    return 0


def _temperature(args: argparse.Namespace, measured):
    """The ``--temperature-col`` column as numbers [°C], refusing a missing column or a row that is not a temperature."""
    import numpy as np
    import pandas as pd

    from cosim.fit.apply import input_rows

    name = args.temperature_col
    if name not in measured.table.columns:
        raise CosimError(f"{args.measured}: no column '{name}' for --temperature-col; {_columns(measured.table)}")
    column = measured.table[name]
    t = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(t) | (t < -50) | (t > 150))  # beyond any die that still runs
    if len(bad):
        raise CosimError(
            f"{args.measured}: line {input_rows(measured)[bad[0]]}: '{name}' is "
            f"{'empty' if pd.isna(column.iloc[bad[0]]) else repr(column.iloc[bad[0]])}, not a die temperature [°C]; fix or "
            "remove that row, or leave out --temperature-col"
        )
    return t


def _temperature_note(model, pred, column: str) -> str:
    """One line: what temperature static power was priced at, and how many rows are outside the trained range."""
    from cosim.models.static_form import static_form

    t = pred["temperature_c"]
    trained = static_form(model).trained_temperature_c
    if trained is None:
        return f"--temperature-col {column} not used: {model.name} has no temperature term (every row flagged temperature_not_modelled)"
    outside = int(pred["flags"].str.contains("temperature_outside_training").sum())
    where = f", {outside} row(s) outside the trained {trained[0]:g}-{trained[1]:g} °C (flagged)" if outside else ""
    return f"static power at each row's '{column}' ({t.min():.1f}-{t.max():.1f} °C){where}"


def _columns(table, most: int = 12) -> str:
    """The table's columns, for a message: the first ``most``, then how many more."""
    names = [repr(str(c)) if len(str(c)) <= 40 else repr(str(c)[:37] + "...") for c in table.columns]  # repr: one line
    more = f", ... ({len(names) - most} more)" if len(names) > most else ""
    return f"its columns: {', '.join(names[:most])}{more}"


def _cmd_fit(args: argparse.Namespace) -> int:
    from cosim.cli._fit import run_fit

    return run_fit(args)


def _cmd_fit_rail(args: argparse.Namespace) -> int:
    from cosim.cli._fit import run_fit_rail

    return run_fit_rail(args)
