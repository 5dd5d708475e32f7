"""``cosim whatif``, ``sweep`` and ``roofline``: design-space exploration over gem5 runs."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from cosim.cli._args import EXIT_PARTIAL, _add_trust_flags, _open_run, _pairs, add_config_options, add_temperature_options
from cosim.errors import CosimError

_WHATIF_HELP = """\
Rescale a recorded gem5 run to other DVFS points of its clusters' models (every V-f point,
or --freqs): runtime, energy and peak power with intervals, the Pareto front, and the
fastest configuration under --power-cap or the least energy within --deadline.

examples:
  cosim whatif traces/cosim-v24-se-biglittle-1800-1400MHz/ --power-cap 1.0 -o whatif.csv --plot pareto.png
  cosim whatif m5out/ --freqs bigCluster=600,1000,1800 --deadline 0.005 -o whatif.csv
"""

_SWEEP_HELP = """\
Price many finished gem5 runs, each as `cosim power` prices it, into one table: a row
per run (run: its unique path below the folder the runs share; path; design: its
clusters and their models; program: what it ran, from its config) with runtime, energy,
EDP and power per cluster. Only comparable runs share a Pareto front and a choice: by
default those of one program on one design (column front); --group states another.

examples:
  cosim sweep ../shared/data/gem5/xu3-mibench-train/automotive_susan_c -o sweep.csv --power-cap 2.5
  cosim sweep study/points --workers 2 -o sweep.csv --plot pareto.png
  cosim sweep runs/ --scheduler local --workers 4 --progress -o sweep.csv
"""


def add_parsers(sub) -> None:
    w = sub.add_parser(
        "whatif",
        help="rescale a gem5 run to other DVFS points: runtime, energy, Pareto, choice",
        description=_WHATIF_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    w.add_argument("stats", type=Path, help="gem5 output folder (m5out/) or its stats.txt[.gz]")
    add_config_options(w)
    w.add_argument("--model", action="append", default=[], metavar="MODEL", help="as for cosim power")
    w.add_argument("--cluster", action="append", default=[], metavar="NAME=PATH", help="as for cosim power")
    w.add_argument(
        "--freqs",
        action="append",
        default=[],
        metavar="NAME=F1,F2,...",
        help="frequencies [MHz] to try for cluster NAME (default: its model's V-f table)",
    )
    w.add_argument(
        "--power-cap", type=_positive("--power-cap"), metavar="WATTS", help="choose the fastest configuration under this peak power"
    )
    w.add_argument(
        "--deadline",
        type=_positive("--deadline"),
        metavar="SECONDS",
        help="choose the least energy within this runtime (the predicted one; the choice says when its runtime_s_hi reaches past it)",
    )
    w.add_argument("-o", "--output", type=Path, default=Path("whatif.csv"), help="one row per configuration")
    w.add_argument("--plot", type=Path, help="Pareto plot (energy against runtime)")
    add_temperature_options(w)
    _add_trust_flags(w, implausible=False)
    w.set_defaults(run=_cmd_whatif, voltage=[], voltage_model=False)

    sw = sub.add_parser(
        "sweep",
        help="one table of runtime, energy, EDP and power over many gem5 runs",
        description=_SWEEP_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sw.add_argument("runs", type=Path, nargs="+", help="gem5 output folders, or folders of them (RUN/ or PROGRAM/CLOCK/)")
    sw.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="MODEL",
        help="as for cosim power (default: each run's own, as cosim power picks it)",
    )
    sw.add_argument("--cluster", action="append", default=[], metavar="NAME=PATH", help="as for cosim power")
    sw.add_argument("--workers", type=int, default=1, help="processes parsing runs in parallel (default 1)")
    sw.add_argument("--power-cap", type=_positive("--power-cap"), metavar="WATTS", help="choose the fastest run under this peak power")
    sw.add_argument("--deadline", type=_positive("--deadline"), metavar="SECONDS", help="choose the least-energy run within this runtime")
    sw.add_argument("-o", "--output", type=Path, default=Path("sweep.csv"), help="one row per run")
    sw.add_argument("--plot", type=Path, help="Pareto plot (energy against runtime)")
    sw.add_argument(
        "--progress",
        action="store_true",
        help="progress even when stderr is no terminal (on one it is shown unasked): a tqdm bar where installed, else a line per finished run",
    )
    sw.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on a dask.distributed cluster: 'local' starts a LocalCluster of --workers processes, "
        "else a scheduler address such as tcp://host:8786 (pip install 'cosim[distributed]')",
    )
    sw.add_argument(
        "--group",
        metavar="COLUMN[,COLUMN]",
        help="columns whose runs share a Pareto front and a choice (default: program,design: the same program on the same "
        "design; 'none': every run on one front)",
    )
    sw.add_argument("--allow-partial", action="store_true", help="exit 0 even if some runs failed")
    add_temperature_options(sw)
    _add_trust_flags(sw)
    sw.set_defaults(run=_cmd_sweep)

    rf = sub.add_parser("roofline", help="platform Roofline per DVFS point, balance points, and a run's epochs on it")
    rf.add_argument("--platform", required=True, help="processor in models/jetson-roofline.json, e.g. jetson-tk1-cpu")
    rf.add_argument("--freqs", required=True, metavar="F1,F2,...", help="frequencies [MHz]")
    rf.add_argument("--stats", type=Path, help="gem5 stats.txt whose epochs to place (FP op classes and DRAM bytes)")
    rf.add_argument("-o", "--output", type=Path, help="epochs' intensity and GFLOP/s (CSV)")
    rf.add_argument("--plot", type=Path, help="Roofline plot (a line per frequency, the epochs as points)")
    rf.add_argument("--plot-balance", type=Path, help="balance point, bandwidth and GFLOP/s against frequency")
    rf.set_defaults(run=_cmd_roofline)


def _cmd_whatif(args: argparse.Namespace) -> int:
    from cosim.api import whatif_of
    from cosim.dse.choose import choose, plot_pareto
    from cosim.output import write_table

    resolved = _open_run(args)
    specs = list(resolved.clusters)
    n_epochs, table = whatif_of(resolved, freqs=_whatif_freqs(args.freqs, specs), any_isa=args.any_isa, extrapolate=args.extrapolate)
    choice = choose(table, power_cap_w=args.power_cap, deadline_s=args.deadline)
    write_table(table, args.output)
    print(
        f"{args.stats}: {n_epochs} epochs, {len(table)} DVFS configurations -> {args.output} "
        f"({int(table['pareto'].sum())} on the Pareto front)"
    )
    if "warmup" in table.attrs:
        print(f"  {table.attrs['warmup']}")
    if choice.row is None:
        print(f"  {choice.reason}")
    else:
        point = ", ".join(f"{c.removesuffix('_freq_mhz')} {choice.row[c]:g} MHz" for c in table.columns if c.endswith("_freq_mhz"))
        print(
            f"  chosen ({choice.reason}): {point}: runtime {_within(choice.row, 'runtime_s')} s, "
            f"energy {_within(choice.row, 'energy_j')} J, peak {choice.row['peak_power_w']:.3f} W (upper end {choice.row['peak_power_w_hi']:.3f} W)"
        )
        if args.power_cap is not None:
            print(
                "  --power-cap compared the peak's upper end: the power model's interval is in it, the what-if's own peak error "
                "is not (it ran to -15.4 % against gem5 on the workload suite, docs/explanation/whatif.md)"
            )
        if choice.row["flags"]:
            print(f"  flags of the chosen row: {choice.row['flags']}")
    flagged = {f for row in table["flags"] for f in str(row).split(";")}
    no_ser = sorted({spec.model.name for spec in specs if f"interval_whatif_only:{spec.name}" in flagged})
    if no_ser:
        print(
            f"  {' and '.join(no_ser)} {'publishes' if len(no_ser) == 1 else 'publish'} no SER: inside the trained clocks the energy interval is the what-if's "
            "part alone, the model's error against hardware unknown (flag interval_whatif_only)"
        )
    if args.plot:
        # the run's folder names the plot: the folder given, or the one holding the stats file given
        plot_pareto(table, args.plot, choice=choice, title=(args.stats if args.stats.is_dir() else args.stats.parent).resolve().name)
        print(f"  plot -> {args.plot}")
    return 0


def _within(row, key: str) -> str:
    """A value and its interval, e.g. ``0.0046 (interval 0.0044-0.0048)``."""
    return f"{row[key]:.6g} (interval {row[key + '_lo']:.4g}-{row[key + '_hi']:.4g})"


def _positive(flag: str):
    """An argparse type: a finite number > 0 (a cap or deadline of 0 or less can only mean a typo)."""

    def parse(text: str) -> float:
        import math

        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"{text} is not > 0")
        return value

    return parse


def _whatif_freqs(items: list[str], specs) -> dict[str, list[float]]:
    """``--freqs NAME=F1,F2``: clusters of this run, clocks in MHz (a tenth of the model's lowest V-f point is GHz typed for MHz)."""
    import math

    models = {spec.name: spec.model for spec in specs}
    freqs = {}
    for item in items:
        if "=" not in item:
            raise CosimError(f"--freqs '{item}': expected NAME=MHZ,MHZ,... for one of this run's clusters: {', '.join(models)}")
    for name, text in _pairs(items, "--freqs").items():
        if name not in models:
            raise CosimError(f"--freqs {name}={text}: this run has no cluster '{name}'; its clusters: {', '.join(models)}")
        try:
            freqs[name] = list(dict.fromkeys(float(x) for x in text.split(",")))  # a clock given twice is one row
        except ValueError:
            hint = ""
            if (ghz := re.fullmatch(r"\s*([0-9.]+)\s*([GM])Hz\s*", text.split(",")[0], re.IGNORECASE)) is not None:
                mhz = float(ghz.group(1)) * (1000 if ghz.group(2).upper() == "G" else 1)
                hint = f" (e.g. {name}={mhz:g} for {text.split(',')[0].strip()})"
            raise CosimError(f"--freqs {name}={text}: expected MHz values separated by commas, without units{hint}") from None
        lowest = models[name].vf_points[0][0]
        for f in freqs[name]:
            if not math.isfinite(f) or f <= 0:
                raise CosimError(f"--freqs {name}={text}: {f:g} is not a clock > 0 [MHz]")
            if f < lowest / 10:
                raise CosimError(
                    f"--freqs {name}={text}: {f:g} MHz is below a tenth of {models[name].name}'s lowest V-f point "
                    f"({lowest:g} MHz); clocks are in MHz ({f:g} GHz is {f * 1000:g} MHz)"
                )
    return freqs


def _cmd_sweep(args: argparse.Namespace) -> int:
    from cosim.api import sweep
    from cosim.dse.choose import GROUP, choose, plot_pareto
    from cosim.dse.sweep import dask_client
    from cosim.output import write_table

    if args.scheduler not in (None, "local") and args.workers != 1:  # a remote cluster has its own workers
        raise CosimError(
            f"--workers {args.workers} with --scheduler {args.scheduler}: the scheduler's cluster sets its workers; drop --workers"
        )
    by = GROUP if args.group is None else tuple(c.strip() for c in args.group.split(",") if c.strip() and c.strip() != "none")
    client = dask_client(args.scheduler, workers=max(1, args.workers)) if args.scheduler else None
    try:
        table = sweep(
            args.runs,
            model=args.model,
            clusters=_pairs(args.cluster, "--cluster"),
            group=by,
            workers=max(1, args.workers),
            any_isa=args.any_isa,
            keep_implausible=args.keep_implausible,
            extrapolate=args.extrapolate,
            temperature_c=args.temperature,
            ambient_c=args.ambient_c,
            start_temperature_c=args.start_temperature_c,
            # on a terminal progress is shown unasked: a sweep of many runs takes a while
            progress=args.progress or sys.stderr.isatty(),
            client=client,
        )
    finally:
        if client is not None:
            client.close()
            if args.scheduler == "local":
                client.cluster.close()
    failed = table[table["error"] != ""]
    good = table[table["error"] == ""]
    for _, row in failed.iterrows():
        print(f"cosim: error: run {row['run']}: {row['error']}", file=sys.stderr)
    write_table(table, args.output)
    fronts = list(dict.fromkeys(good["front"]))
    said = f"runs of one {' on one '.join(by)} share a front" if by else "every run on one front"
    print(
        f"{len(table)} runs -> {args.output} ({int(table['pareto'].sum())} on the Pareto front"
        + (f"s of {len(fronts)} groups, column front" if len(fronts) > 1 else "")
        + f"; {said}, --group to state another)"
        + (f"; {len(failed)} failed (their rows say why)" if len(failed) else "")
    )
    for front in fronts:
        mine = good[good["front"] == front].reset_index(drop=True)
        choice = choose(mine, power_cap_w=args.power_cap, deadline_s=args.deadline)
        head = f"  {front} ({len(mine)} runs): " if len(fronts) > 1 else "  "
        print(head + choice.reason + (f": {choice.row['run']}" if choice.row is not None else ""))
    if args.plot:
        plot_pareto(good.reset_index(drop=True), args.plot, choice=None if len(fronts) > 1 else choice, title="sweep", group="front")
        print(f"  plot -> {args.plot}")
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
