"""The ``cosim`` command: ``power``, ``apply``, ``gpu``, ``soc``, ``demo`` and the rest.

Exit status: 0 done; 2 bad input or request, or a refused result (one-line
message, nothing written); 3 done, outputs written, but some dumps of the input
were unusable or some epochs have no value (reported; ``--allow-partial`` makes
that 0); 4 an internal error (a bug: one line, please report it); 130
interrupted (Ctrl-C or SIGTERM; no temporary file is left).
"""

from __future__ import annotations

import argparse
import signal
import sys
import traceback
import warnings
from pathlib import Path


from cosim.errors import CosimError, CosimWarning

EXIT_ERROR = 2
EXIT_PARTIAL = 3
EXIT_INTERNAL = 4
EXIT_INTERRUPTED = 130


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    import numpy as np  # after parsing: --help needs no numpy
    warnings.showwarning = _show_warning
    warnings.simplefilter("always", CosimWarning)
    # numpy's and matplotlib's own warnings are about our arithmetic, not the user's input:
    # what matters to the user is reported as a CosimWarning or in the flags column
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    warnings.filterwarnings("ignore", module="matplotlib")
    previous = signal.signal(signal.SIGTERM, _terminate)  # unwinds like Ctrl-C, so temporary files are removed
    try:
        with np.errstate(all="ignore"):
            return args.run(args)
    except CosimError as err:
        print(f"cosim: error: {err}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("cosim: interrupted; no output was left half-written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as err:  # a bug in cosim, not bad input: still one line, and a way to report it
        where = traceback.extract_tb(err.__traceback__)[-1]
        print(f"cosim: internal error: {type(err).__name__}: {err} (at {Path(where.filename).name}:{where.lineno}); "
              "please report it with the command line", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        signal.signal(signal.SIGTERM, previous)


def _terminate(signum, frame) -> None:
    raise KeyboardInterrupt


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    if issubclass(category, CosimWarning):
        print(f"cosim: warning: {message}", file=sys.stderr)
    else:
        print(warnings.formatwarning(message, category, filename, lineno, line), file=sys.stderr, end="")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cosim", description="Hardware-trained power models for gem5 runs.")
    sub = parser.add_subparsers(required=True, metavar="COMMAND")

    p = sub.add_parser("power", help="power/energy timeline of a gem5 run", description=_POWER_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("stats", type=Path, help="gem5 stats.txt (every dump is an epoch)")
    p.add_argument("--config", type=Path, help="config.ini or config.json (default: beside stats.txt)")
    p.add_argument("--model", action="append", default=[], metavar="MODEL",
                   help="model file or shipped model name; repeat in the order of --cluster")
    p.add_argument("--cluster", action="append", default=[], metavar="NAME=PATH",
                   help="CPUs under config path PATH form cluster NAME (default: one cluster per clock domain)")
    p.add_argument("--voltage", action="append", default=[], metavar="NAME=VOLTS",
                   help="use this voltage [V] for cluster NAME instead of the model's V-f table")
    p.add_argument("--voltage-model", action="store_true",
                   help="voltage under load from the model's voltage model (when only nominal voltages are known)")
    p.add_argument("--strict", action="store_true",
                   help="refuse operating points not in the model's V-f table or training range")
    _add_trust_flags(p)
    p.add_argument("-o", "--output", type=Path, default=Path("power.csv"), help="CSV, or .parquet (default: power.csv)")
    p.add_argument("--plot", type=Path, help="write the stacked power plot (PNG/SVG/PDF)")
    p.add_argument("--allow-partial", action="store_true", help="exit 0 even if some dumps were unusable")
    p.add_argument("--progress", action="store_true", help="progress bar while parsing (needs tqdm)")
    p.set_defaults(run=_cmd_power)

    a = sub.add_parser("apply", help="apply a model to measured board data (prints MAPE)")
    a.add_argument("model", help="model file or shipped model name")
    a.add_argument("measured", type=Path, help="measured table (Powmon/GemStone layout, or CSV/TSV)")
    a.add_argument("--compare-with", metavar="COLUMN", help="measured power column [W]; prints MAPE")
    a.add_argument("--label", help="Powmon cluster label (A7, A15) when several are present")
    a.add_argument("--freq-col", help="frequency column [MHz]")
    a.add_argument("--voltage-col", help="voltage column [V]")
    a.add_argument("--event-col", action="append", default=[], metavar="EVENT=COLUMN",
                   help="per-core average rate column [events/s] for EVENT (e.g. 0x11=cycles)")
    a.add_argument("--voltage", choices=("measured", "table", "voltage-model"), default="measured",
                   help="voltage given to the model: measured column (default), the model's V-f table, or its voltage model")
    a.add_argument("-o", "--output", type=Path, help="write predictions (CSV or .parquet)")
    _add_trust_flags(a, isa=False)
    a.add_argument("--allow-partial", action="store_true", help="exit 0 even if some rows have no value")
    a.set_defaults(run=_cmd_apply)

    f = sub.add_parser("fit", help="build a Walker-formulation model from measured data", description=_FIT_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    f.add_argument("measured", type=Path, help="measured table: Powmon/GemStone layout, ARMPM log, or CSV/TSV")
    f.add_argument("--format", choices=("table", "armpm"), default="table", help="input layout (default: table)")
    f.add_argument("--power-col", required=True, metavar="COLUMN", help="measured cluster power [W]")
    f.add_argument("--events", metavar="LIST", help="model inputs, e.g. 0x11,0x1b-0x73,0x50 (a-b: difference of events)")
    f.add_argument("--select", type=int, metavar="N", help="choose N events (cycle counter first, then by R^2, then VIF transforms)")
    f.add_argument("--candidates", metavar="LIST", help="events --select may choose from (default: every event column)")
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
    f.set_defaults(run=_cmd_fit)

    r = sub.add_parser("fit-rail", help="fit a per-rail model (Tegra K1 methodology) from measured data")
    r.add_argument("measured", type=Path, help="measured table (CSV/TSV)")
    r.add_argument("--spec", type=Path, required=True, help="JSON: power_col and rails (see cosim/fit/rail.py)")
    r.add_argument("-o", "--output", type=Path, default=Path("rail-model.json"), help="coefficients and fit statistics (JSON)")
    r.set_defaults(run=_cmd_fit_rail)

    w = sub.add_parser("whatif", help="rescale a gem5 run to other DVFS points: runtime, energy, Pareto, choice")
    w.add_argument("stats", type=Path, help="gem5 stats.txt")
    w.add_argument("--config", type=Path, help="config.ini or config.json (default: beside stats.txt)")
    w.add_argument("--model", action="append", default=[], metavar="MODEL", help="as for cosim power")
    w.add_argument("--cluster", action="append", default=[], metavar="NAME=PATH", help="as for cosim power")
    w.add_argument("--freqs", action="append", default=[], metavar="NAME=F1,F2,...",
                   help="frequencies [MHz] to try for cluster NAME (default: its model's V-f table)")
    w.add_argument("--power-cap", type=float, metavar="WATTS", help="choose the fastest configuration under this peak power")
    w.add_argument("--deadline", type=float, metavar="SECONDS", help="choose the least energy within this runtime")
    w.add_argument("-o", "--output", type=Path, default=Path("whatif.csv"), help="one row per configuration")
    w.add_argument("--plot", type=Path, help="Pareto plot (energy against runtime)")
    _add_trust_flags(w, implausible=False)
    w.set_defaults(run=_cmd_whatif, voltage=[], voltage_model=False)

    sw = sub.add_parser("sweep", help="one table of runtime, energy, EDP and power over many gem5 runs")
    sw.add_argument("runs", type=Path, nargs="+", help="gem5 output folders, or folders of them")
    sw.add_argument("--model", action="append", default=[], metavar="MODEL", help="as for cosim power (default: each run's cosim-run.json)")
    sw.add_argument("--cluster", action="append", default=[], metavar="NAME=PATH", help="as for cosim power")
    sw.add_argument("--workers", type=int, default=1, help="processes parsing runs in parallel (default 1)")
    sw.add_argument("--power-cap", type=float, metavar="WATTS", help="choose the fastest run under this peak power")
    sw.add_argument("--deadline", type=float, metavar="SECONDS", help="choose the least-energy run within this runtime")
    sw.add_argument("-o", "--output", type=Path, default=Path("sweep.csv"), help="one row per run")
    sw.add_argument("--plot", type=Path, help="Pareto plot (energy against runtime)")
    sw.add_argument("--progress", action="store_true", help="progress bar (needs tqdm)")
    sw.add_argument("--scheduler", metavar="ADDRESS",
                    help="run on a dask.distributed cluster: 'local' starts a LocalCluster of --workers processes, "
                         "else a scheduler address such as tcp://host:8786 (pip install 'cosim[distributed]')")
    sw.add_argument("--allow-partial", action="store_true", help="exit 0 even if some runs failed")
    sw.set_defaults(run=_cmd_sweep)

    rf = sub.add_parser("roofline", help="platform Roofline per DVFS point, balance points, and a run's epochs on it")
    rf.add_argument("--platform", required=True, help="processor in models/jetson-roofline.json, e.g. jetson-tk1-cpu")
    rf.add_argument("--freqs", required=True, metavar="F1,F2,...", help="frequencies [MHz]")
    rf.add_argument("--stats", type=Path, help="gem5 stats.txt whose epochs to place (FP op classes and DRAM bytes)")
    rf.add_argument("-o", "--output", type=Path, help="epochs' intensity and GFLOP/s (CSV)")
    rf.add_argument("--plot", type=Path, help="Roofline plot (a line per frequency, the epochs as points)")
    rf.add_argument("--plot-balance", type=Path, help="balance point, bandwidth and GFLOP/s against frequency")
    rf.set_defaults(run=_cmd_roofline)

    ks = sub.add_parser("kernel-synth", help="write the synthetic kernel-launch log (documented ground truth) for trying the kernel models")
    ks.add_argument("-o", "--output", type=Path, default=Path("kernel-log.csv"))
    ks.add_argument("--seed", type=int, default=0)
    ks.set_defaults(run=_cmd_kernel_synth)

    ke = sub.add_parser("kernel-eval", help="train kernel runtime/power models on some boards, report accuracy on the others")
    ke.add_argument("log", type=Path, help="kernel launch log (CSV; schema in cosim/kernels/log.py)")
    ke.add_argument("--board-file", type=Path, help="board DVFS levels (default: the shipped Jetson AGX file)")
    ke.add_argument("--test-boards", required=True, metavar="B1,B2", help="boards held out for testing")
    ke.add_argument("--budget", type=int, default=1, help="hyper-parameter sets tried per model (leave-one-board-out CV)")
    ke.set_defaults(run=_cmd_kernel_eval)

    g = sub.add_parser("gem5-expr", help="print a model as gem5 MathExprPowerModel expressions, per CPU")
    g.add_argument("model", help="model file or shipped model name")
    g.add_argument("--cluster", required=True, metavar="NAME=PATH", help="CPUs under config path PATH")
    g.add_argument("--config", type=Path, required=True, help="config.ini/config.json of a run of the same system")
    g.add_argument("--generation", choices=("pre-v20.1", "v20.1+"), default="v20.1+", help="gem5 stat naming (default v20.1+)")
    g.set_defaults(run=_cmd_gem5_expr)

    d = sub.add_parser("demo", help="timeline CSV + plot of the bundled real gem5 run")
    d.add_argument("--out", type=Path, default=Path("cosim-demo"), help="output folder (default: ./cosim-demo)")
    d.set_defaults(run=_cmd_demo)

    from cosim.gpu_cli import add_parsers
    from cosim.read_cli import add_parser as add_read_parser

    add_parsers(sub)  # gpu, soc
    add_read_parser(sub)
    return parser


def _add_trust_flags(p: argparse.ArgumentParser, *, isa: bool = True, implausible: bool = True) -> None:
    """The overrides of cosim's refusals (README: "What cosim refuses, and why")."""
    if isa:
        p.add_argument("--any-isa", action="store_true",
                       help="price a run of another ISA than the model was trained on (rows flagged isa_mismatch)")
    if implausible:
        p.add_argument("--keep-implausible", action="store_true",
                       help="write physically implausible rows, flagged 'implausible' with the reason, instead of refusing")


_POWER_HELP = """\
Price every stats dump (epoch) of a gem5 run with hardware-trained models.
With no --model (and no cosim-run.json), each cluster gets the shipped model of
its CPU type: out-of-order -> cortex-a15-walker2017, in-order (Minor, simple)
-> cortex-a7-gemstone2018.

example:
  cosim power m5out/stats.txt --config m5out/config.ini \\
      --model cortex-a15-walker2017 --cluster big=system.bigCluster \\
      --model cortex-a7-gemstone2018 --cluster little=system.littleCluster \\
      -o power.csv --plot power.png
"""


_FIT_HELP = """\
Fit P = sum beta*E*V^2*f + static(V, f) (Walker et al., TCAD 2017) by OLS with HC3
errors; report R^2, F, SER, VIFs and k-fold cross-validation; write a cosim model
file, a model card and diagnostic plots.

example (the TCAD Cortex-A15 model from its published data):
  cosim fit asrtpm-A15-powmon-data.csv --label A15 --power-col "Power A15" \\
      --events 0x11,0x1b-0x73,0x50,0x6a,0x73,0x14,0x19 --group-by "Workload Name" --idle idle \\
      --name my-a15 -o my-a15.json
"""


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise CosimError(f"{flag} '{item}': expected NAME=VALUE")
        out[name] = value
    return out


def _cmd_power(args: argparse.Namespace) -> int:
    from cosim.readers.gem5_stats import read_stats

    config = _find_config(args.stats, args.config)
    specs = _cluster_specs(config, args)
    wanted = _wanted_stats(config, specs)
    stats = read_stats(args.stats, stats=wanted, progress=args.progress)
    return _price_and_write(stats, config, specs, args, args.output, args.plot)


def _find_config(stats_path: Path, config_path: Path | None):
    from cosim.readers.gem5_config import read_config

    if not stats_path.is_file():  # before the config, whose problems would hide this one
        raise CosimError(f"{stats_path}: no such file; give the stats.txt from gem5's output directory (m5out/)")
    if config_path is None:
        for name in ("config.ini", "config.json"):
            if (stats_path.parent / name).exists():
                config_path = stats_path.parent / name
                break
        else:
            if stats_path.is_file() and not _has_cpu_stats(stats_path):
                raise CosimError(f"{stats_path}: this run has no CPU (no numCycles stat in its first dump), so there is "
                                 "nothing for a CPU power model to price")
            raise CosimError(f"{stats_path}: no config.ini/config.json beside it (cosim reads the run's CPUs, clocks "
                             "and ISA from it); pass --config")
    return read_config(config_path)


def _has_cpu_stats(stats_path: Path) -> bool:
    with open(stats_path, "rb") as f:
        for line in f:
            if b"numCycles" in line or b"num_cycles" in line:
                return True
            if line.startswith(b"---------- End"):
                return False
    return False


def _cluster_specs(config, args: argparse.Namespace):
    from cosim.models.modelfile import load_model
    from cosim.timeline import ClusterSpec

    from cosim.readers.sidecar import SIDECAR, read_sidecar

    clusters = _pairs(args.cluster, "--cluster")
    path = args.stats.parent / SIDECAR
    sidecar = read_sidecar(path) if not clusters and path.exists() else None
    if sidecar:
        clusters = {name: path for name, (path, _) in sidecar.items()}
        if not args.model:
            args.model = [model for _, model in sidecar.values()]
    if not args.model:
        args.model = _default_models(config, clusters)
    voltages = {k: _volts(k, v) for k, v in _pairs(args.voltage, "--voltage").items()}
    models = [load_model(m) for m in args.model]
    if clusters:
        if len(models) not in (1, len(clusters)):
            raise CosimError(f"{len(models)} --model for {len(clusters)} --cluster: give one model, or one per cluster in order")
        paths = list(clusters.items())
    else:
        if len(models) != 1:
            raise CosimError("several --model need --cluster NAME=PATH to say which CPUs each one prices")
        paths = [(name, None) for name in config.clusters()]
        if not paths:
            raise CosimError(f"{config.path}: no active CPU in this config (every CPU is switched out, or there is none); "
                             "nothing to price")
    unknown = set(voltages) - {name for name, _ in paths}
    if unknown:
        raise CosimError(f"--voltage for unknown cluster(s) {', '.join(sorted(unknown))}; clusters: {', '.join(n for n, _ in paths)}")
    return [
        ClusterSpec(name=name, path=path, model=models[i if len(models) > 1 else 0], voltage_v=voltages.get(name),
                    voltage_model=args.voltage_model)
        for i, (name, path) in enumerate(paths)
    ]


def _default_models(config, clusters: dict[str, str]) -> list[str]:
    """One shipped model per cluster, chosen by CPU type; says so on stderr."""
    from cosim.timeline import default_model

    found = [config.cluster(name, path) for name, path in clusters.items()] if clusters else list(config.clusters().values())
    if not found:
        raise CosimError(f"{config.path}: no CPU in this config to price; give --cluster NAME=PATH")
    models = []
    for cluster in found:
        model, why = default_model(cluster)
        print(f"cosim: cluster '{cluster.name}': {why}, priced with {model} (choose with --model)", file=sys.stderr)
        models.append(model)
    if not clusters and len(models) > 1:  # several clock domains: name them so each gets its own model
        clusters.update({c.name: None for c in found})
    return models


def _volts(name: str, text: str) -> float:
    import numpy as np

    try:
        value = float(text)
    except ValueError:
        raise CosimError(f"--voltage {name}={text}: not a number of volts") from None
    if not np.isfinite(value) or not 0.3 < value < 2.0:
        raise CosimError(f"--voltage {name}={text}: expected a CPU voltage in volts, e.g. 1.05")
    return value


def _wanted_stats(config, specs) -> set[str]:
    from cosim.counters.pmc import stats_for
    from cosim.timeline import resolve_cluster

    wanted: set[str] = set()
    for spec in specs:
        wanted |= stats_for(resolve_cluster(config, spec, config.ticks_per_s), spec.model.events)
    return wanted


def _price_and_write(stats, config, specs, args: argparse.Namespace, output: Path, plot: Path | None) -> int:
    from cosim.output import plot_timeline, write_table
    from cosim.timeline import power_timeline

    timeline = power_timeline(stats, config, specs, strict=args.strict, any_isa=args.any_isa,
                              keep_implausible=args.keep_implausible)
    write_table(timeline, output)
    meta = stats.attrs["gem5"]
    print(f"{meta.path}: {len(stats)} epoch(s) ({meta.generation} stat names) -> {output}")
    missing_rows = 0
    for name, rows in timeline.groupby("cluster", sort=False):
        flags = sorted({f for text in rows["flags"] for f in text.split(";") if f})
        print(f"  {name:<12} {rows['model'].iloc[0]:<26} {_summary(rows)}" + (f"  flags: {', '.join(flags)}" if flags else ""))
        missing_rows += int(rows["power_w"].isna().sum())
    if plot is not None:
        plot_timeline(timeline, plot, title=Path(meta.path).parent.name)
        print(f"  plot -> {plot}")
    partial = False
    if meta.dropped:
        first = meta.dropped[0]
        print(
            f"cosim: error: {meta.path}:{first.line}: {len(meta.dropped)} of {meta.dumps_in_file} dumps unusable "
            f"({first.reason}); the {len(stats)} good epochs were written",
            file=sys.stderr,
        )
        partial = True
    if missing_rows:
        print(f"cosim: error: {meta.path}: {missing_rows} row(s) have no power value (nan in their stats, flag nan_input); "
              "they are written empty", file=sys.stderr)
        partial = True
    return EXIT_PARTIAL if partial and not args.allow_partial else 0


def _summary(rows) -> str:
    """Mean power and energy of one cluster, saying how many epochs have no value rather than counting them as 0."""
    import numpy as np

    power = rows["power_w"].to_numpy(dtype=float)
    known = ~np.isnan(power)
    if not known.any():
        return f"no value in any of its {len(rows)} epoch(s) (nan in their stats)"
    text = f"mean {np.mean(power[known]):.3f} W  energy {np.sum(rows['energy_j'].to_numpy()[known]):.4g} J"
    if not known.all():
        text += f" over {int(known.sum())} of {len(rows)} epochs ({int((~known).sum())} without a value: nan in their stats)"
    return text


def _cmd_apply(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    from cosim.apply import apply_model, mape_pct
    from cosim.models.modelfile import load_model
    from cosim.output import write_table
    from cosim.readers.measured import read_measured

    model = load_model(args.model)
    measured = read_measured(
        args.measured,
        events=model.events,
        label=args.label,
        freq_col=args.freq_col,
        voltage_col=args.voltage_col,
        event_cols=_pairs(args.event_col, "--event-col"),
        need_voltage=args.voltage == "measured",
    )
    pred = apply_model(model, measured, voltage=args.voltage, keep_implausible=args.keep_implausible, source=str(args.measured))
    print(f"{args.measured}: {len(pred)} rows, model {model.name}" + (f" on {measured.label} columns" if measured.label else ""))
    if pred["extrapolated"].any():
        print(f"  {int(pred['extrapolated'].sum())} row(s) outside the model's training V-f range (flagged)")
    if pred["implausible"].any():
        print(f"  {int(pred['implausible'].sum())} implausible row(s) kept, flagged (--keep-implausible)")
    if args.compare_with:
        if args.compare_with not in measured.table.columns:
            raise CosimError(f"{args.measured}: no column '{args.compare_with}' to compare with")
        column = measured.table[args.compare_with]
        actual = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(np.isnan(actual) & column.notna().to_numpy())
        if len(bad):
            raise CosimError(f"{args.measured}: row {int(bad[0]) + 2}: '{args.compare_with}' is {column.iloc[bad[0]]!r}, "
                             "not a power [W]; fix or remove that row")
        pred["measured_w"] = actual
        print(f"  MAPE vs '{args.compare_with}': {mape_pct(pred['power_w'].to_numpy(), actual):.2f} %")
    if args.output:
        write_table(pred, args.output)
        print(f"  predictions -> {args.output}")
    missing = int(pred["no_value"].sum())
    if missing:
        first = int(np.flatnonzero(pred["no_value"].to_numpy())[0]) + 2
        print(f"cosim: error: {args.measured}: {missing} of {len(pred)} row(s) have no value (a frequency or voltage "
              f"that is not a positive number, or a missing rate; first at line {first})", file=sys.stderr)
        return 0 if args.allow_partial else EXIT_PARTIAL
    return 0


def _cmd_fit(args: argparse.Namespace) -> int:
    from cosim.fit.cli import run_fit

    return run_fit(args)


def _cmd_fit_rail(args: argparse.Namespace) -> int:
    from cosim.fit.cli import run_fit_rail

    return run_fit_rail(args)


def _cmd_whatif(args: argparse.Namespace) -> int:
    from cosim.dse.choose import choose, pareto_front, plot_pareto
    from cosim.dse.whatif import dvfs_grid, recorded_run, whatif, whatif_stats
    from cosim.output import write_table
    from cosim.readers.gem5_stats import read_stats

    from cosim.timeline import check_isa

    config = _find_config(args.stats, args.config)
    specs = _cluster_specs(config, args)
    check_isa(config, [spec.model for spec in specs], any_isa=args.any_isa)
    stats = read_stats(args.stats, stats=whatif_stats(config, specs))
    run = recorded_run(stats, config, specs)
    freqs = {}
    for name, text in _pairs(args.freqs, "--freqs").items():
        try:
            freqs[name] = [float(x) for x in text.split(",")]
        except ValueError:
            raise CosimError(f"--freqs {name}={text}: expected MHz values separated by commas") from None
    table = whatif(run, dvfs_grid(run, freqs))
    table["pareto"] = pareto_front(table)
    choice = choose(table, power_cap_w=args.power_cap, deadline_s=args.deadline)
    write_table(table, args.output)
    print(f"{args.stats}: {len(stats)} epochs, {len(table)} DVFS configurations -> {args.output} "
          f"({int(table['pareto'].sum())} on the Pareto front)")
    if choice.row is None:
        print(f"  {choice.reason}")
    else:
        point = ", ".join(f"{c.removesuffix('_freq_mhz')} {choice.row[c]:g} MHz" for c in table.columns if c.endswith("_freq_mhz"))
        print(f"  chosen ({choice.reason}): {point}: runtime {choice.row['runtime_s']:.6g} s, energy {choice.row['energy_j']:.6g} J, "
              f"peak {choice.row['peak_power_w']:.3f} W")
    if args.plot:
        plot_pareto(table, args.plot, choice=choice, title=args.stats.parent.name)
        print(f"  plot -> {args.plot}")
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from cosim.dse.choose import choose, pareto_front, plot_pareto
    from cosim.dse.sweep import SweepSpec, dask_client, find_runs, sweep
    from cosim.output import write_table

    clusters = _pairs(args.cluster, "--cluster")
    if clusters and len(args.model) not in (1, len(clusters)):
        raise CosimError(f"{len(args.model)} --model for {len(clusters)} --cluster: give one model, or one per cluster in order")
    spec = SweepSpec(tuple((n, p, args.model[i if len(args.model) > 1 else 0]) for i, (n, p) in enumerate(clusters.items())) if clusters else None)
    runs = find_runs(args.runs)
    client = dask_client(args.scheduler, workers=max(1, args.workers)) if args.scheduler else None
    try:
        table = sweep(runs, spec, workers=max(1, args.workers), progress=args.progress, client=client)
    finally:
        if client is not None:
            client.close()
            if args.scheduler == "local":
                client.cluster.close()
    failed = table[table["error"] != ""]
    good = table[table["error"] == ""].reset_index(drop=True)
    for _, row in failed.iterrows():
        print(f"cosim: error: run {row['run']}: {row['error']}", file=sys.stderr)
    if good.empty:
        raise CosimError(f"none of the {len(table)} runs could be summarised (first: {failed['error'].iloc[0]})")
    front = pareto_front(good).to_numpy()
    table["pareto"] = False
    table.loc[table["error"] == "", "pareto"] = front
    write_table(table, args.output)
    print(f"{len(table)} runs -> {args.output} ({int(table['pareto'].sum())} on the Pareto front)"
          + (f"; {len(failed)} failed (their rows say why)" if len(failed) else ""))
    choice = choose(good, power_cap_w=args.power_cap, deadline_s=args.deadline)
    print(f"  {choice.reason}" + (f": {choice.row['run']}" if choice.row is not None else ""))
    if args.plot:
        plot_pareto(good.assign(pareto=front), args.plot, choice=choice, title="sweep")
    return EXIT_PARTIAL if len(failed) and not args.allow_partial else 0


def _cmd_roofline(args: argparse.Namespace) -> int:
    import numpy as np

    from cosim.dse.roofline import balance_point, load_platform, peaks, plot_balance, plot_roofline, run_points
    from cosim.output import write_table
    from cosim.readers.gem5_stats import read_stats

    platform = load_platform(args.platform)
    try:
        freqs = [float(x) for x in args.freqs.split(",")]
    except ValueError:
        raise CosimError(f"--freqs {args.freqs}: expected MHz values separated by commas") from None
    gflops, gbps = peaks(platform, freqs)
    for f, p, b, bal in zip(freqs, gflops, gbps, balance_point(platform, freqs)):
        print(f"{args.platform} {f:g} MHz: {p:.2f} GFLOP/s, {b:.2f} GB/s, balance {bal:.2f} FLOP/B")
    points = None
    if args.stats:
        points = run_points(read_stats(args.stats))
        if args.output:
            write_table(points, args.output)
        print(f"{args.stats}: {len(points)} epochs, median intensity {np.nanmedian(points['intensity_flop_per_byte']):.3g} FLOP/B")
    if args.plot:
        plot_roofline(platform, freqs, points, args.plot)
    if args.plot_balance:
        plot_balance(platform, freqs, args.plot_balance)
    return 0


def _cmd_kernel_synth(args: argparse.Namespace) -> int:
    from cosim.kernels.synthetic import kernel_log
    from cosim.output import write_table

    log = kernel_log(seed=args.seed)
    write_table(log, args.output)
    print(f"{len(log)} synthetic kernel launches on {log['board'].nunique()} boards -> {args.output}")
    return 0


def _cmd_kernel_eval(args: argparse.Namespace) -> int:
    from cosim.kernels.log import board_levels, read_kernel_log
    from cosim.kernels.metrics import accuracy
    from cosim.kernels.train import fit_kernels
    from cosim.models.modelfile import shipped_models_dir

    log = read_kernel_log(args.log, levels=board_levels(args.board_file or shipped_models_dir() / "jetson-agx-dvfs.json"))
    test_boards = [b.strip() for b in args.test_boards.split(",") if b.strip()]
    unknown = sorted(set(test_boards) - set(log["board"]))
    if unknown:
        raise CosimError(f"--test-boards: {', '.join(unknown)} not in the log; boards: {', '.join(sorted(log['board'].unique()))}")
    held = log["board"].isin(test_boards)
    models = fit_kernels(log[~held], budget=args.budget)
    test = log[held]
    pred = models.predict(test)
    print(f"trained on {log.loc[~held, 'board'].nunique()} boards, tested on {', '.join(test_boards)} ({len(test)} launches)")
    print(f"{'kernel':<12} {'target':<8} {'<5%':>6} {'<10%':>6} {'<15%':>6} {'<20%':>6} {'RMSE':>9} {'MAE':>9}")
    for kernel, rows in test.groupby("kernel"):
        for target, col, unit in (("runtime", "runtime_ms", "ms"), ("power", "power_w", "W")):
            a = accuracy(pred.loc[rows.index, col], rows[col])
            print(f"{kernel:<12} {target:<8} {a['within_5pct']:6.1f} {a['within_10pct']:6.1f} {a['within_15pct']:6.1f} "
                  f"{a['within_20pct']:6.1f} {a['rmse']:7.3f}{unit:>2} {a['mae']:7.3f}{unit:>2}")
    return 0


def _cmd_gem5_expr(args: argparse.Namespace) -> int:
    import importlib.util

    from cosim.models.modelfile import load_model
    from cosim.readers.gem5_config import read_config

    here = Path(__file__).resolve().parent
    script = next(p for p in (here / "_gem5_scripts" / "cosim_gem5.py", here.parent / "gem5_scripts" / "cosim_gem5.py") if p.exists())
    # the gem5-side module is stdlib-only and lives outside the package's import tree
    spec = importlib.util.spec_from_file_location("cosim_gem5", script)
    gem5_side = importlib.util.module_from_spec(spec)
    sys.modules["cosim_gem5"] = gem5_side  # dataclasses look their module up here
    spec.loader.exec_module(gem5_side)
    ((name, path),) = _pairs([args.cluster], "--cluster").items()
    model = load_model(args.model)
    config = read_config(args.config)
    cluster = config.cluster(name, path)
    layout = gem5_side.ClusterLayout(name=name, cpus=list(cluster.cores), l1d=cluster.l1d, l1i=cluster.l1i, l2=cluster.l2,
                                     l2_sharers=cluster.l2_sharers, kinds={c: cluster.kind(c) for c in cluster.cores})
    try:
        exprs = gem5_side.cpu_expressions(model.raw, layout, generation=args.generation, ticks_per_s=config.ticks_per_s)
    except gem5_side.ExpressionError as err:
        raise CosimError(str(err)) from None
    for cpu, (dyn, st) in exprs.items():
        print(f"# {cpu}\ndyn = {dyn}\nst = {st}\n")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from cosim.demo import find_demo_run

    run = find_demo_run()
    if run is None:
        print(
            "cosim demo: the bundled gem5 run is pending: traces/ has no cosim-* run yet, and the public runs "
            "in ../shared/data/gem5/ are not here to fall back on. Nothing was computed.",
            file=sys.stderr,
        )
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"cosim demo: {run.description}")
    from cosim.models.modelfile import load_model
    from cosim.readers.gem5_config import read_config
    from cosim.readers.gem5_stats import read_stats
    from cosim.timeline import ClusterSpec

    config = read_config(run.config)
    specs = [ClusterSpec(name=name, path=path, model=load_model(model)) for name, path, model in run.clusters]
    stats = read_stats(run.stats, stats=_wanted_stats(config, specs))
    demo = argparse.Namespace(strict=False, any_isa=False, keep_implausible=False, allow_partial=True)
    return _price_and_write(stats, config, specs, demo, args.out / "power.csv", args.out / "power.png")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
