"""``cosim power``, ``demo`` and ``gem5-expr``: gem5 runs priced per epoch."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cosim.cli._args import EXIT_PARTIAL, _add_trust_flags, _open_run, _pairs, add_config_options, add_temperature_options
from cosim.errors import CosimError


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "power", help="power/energy timeline of a gem5 run", description=_POWER_HELP, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("stats", type=Path, help="gem5 output folder (m5out/) or its stats.txt[.gz] (every dump is an epoch)")
    add_config_options(p)
    p.add_argument(
        "--model", action="append", default=[], metavar="MODEL", help="model file or shipped model name; repeat in the order of --cluster"
    )
    p.add_argument(
        "--cluster",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="CPUs under config path PATH form cluster NAME (default: one cluster per clock domain)",
    )
    p.add_argument(
        "--voltage",
        action="append",
        default=[],
        metavar="NAME=VOLTS",
        help="use this voltage [V] for cluster NAME instead of the model's V-f table",
    )
    add_temperature_options(p)
    p.add_argument(
        "--voltage-model",
        action="store_true",
        help="voltage under load from the model's voltage model (when only nominal voltages are known)",
    )
    p.add_argument(
        "--powered-cores",
        action="append",
        default=[],
        metavar="NAME=N",
        help="cluster NAME's physical cluster powers N cores where the run simulates fewer (static power of N cores; "
        "default: the CPUs simulated, those that never ran included)",
    )
    p.add_argument("--strict", action="store_true", help="refuse operating points not in the model's V-f table or training range")
    p.add_argument(
        "--against-board",
        type=Path,
        metavar="VALIDATION",
        help="add board_lo_w/board_hi_w: where the board's power lies, calibrated on the training programs of a "
        "cosim validate table (-o of cosim validate --split --model MODEL)",
    )
    _add_trust_flags(p)
    p.add_argument("-o", "--output", type=Path, default=Path("power.csv"), help="CSV, or .parquet (default: power.csv)")
    p.add_argument("--plot", type=Path, help="write the stacked power plot (PNG/SVG/PDF)")
    p.add_argument(
        "--ptrace",
        type=Path,
        metavar="FILE.ptrace",
        help="also write HotSpot's power trace: watts per floorplan block (--ptrace-blocks) per sampling interval",
    )
    p.add_argument(
        "--ptrace-blocks",
        choices=("core", "cluster"),
        default="core",
        help="a block per core, <cluster>_core<i> (default; the cluster's power split by each core's events, static evenly), "
        "or per cluster",
    )
    p.add_argument(
        "--ptrace-interval-s",
        type=float,
        metavar="SECONDS",
        help="HotSpot's sampling interval [s] the epochs are resampled to (default: the epochs' median length)",
    )
    p.add_argument("--allow-partial", action="store_true", help="exit 0 even if some dumps were unusable")
    p.add_argument("--progress", action="store_true", help="progress while parsing: a tqdm bar where installed, else a line per tenth read")
    p.set_defaults(run=_cmd_power)

    g = sub.add_parser("gem5-expr", help="print a model as gem5 MathExprPowerModel expressions, per CPU")
    g.add_argument("model", help="model file or shipped model name")
    g.add_argument("--cluster", required=True, metavar="NAME=PATH", help="CPUs under config path PATH")
    g.add_argument("--config", type=Path, required=True, help="config.ini/config.json of a run of the same system")
    g.add_argument("--generation", choices=("pre-v20.1", "v20.1+"), default="v20.1+", help="gem5 stat naming (default v20.1+)")
    g.set_defaults(run=_cmd_gem5_expr)

    d = sub.add_parser("demo", help="timeline CSV + plot of the bundled real gem5 run")
    d.add_argument("--out", type=Path, default=Path("cosim-demo"), help="output folder (default: ./cosim-demo)")
    d.set_defaults(
        run=_cmd_demo,
        extra_outputs=lambda a: {
            f"--out {a.out}'s table": a.out / "power.csv",
            f"--out {a.out}'s plot": a.out / "power.png",
            f"--out {a.out}'s power trace": a.out / "power.ptrace",
        },
    )


_POWER_HELP = """\
Price every stats dump (epoch) of a gem5 run with hardware-trained models.
With no --model (and no cosim-run.json), each cluster gets the shipped model of
its CPU type: out-of-order -> cortex-a15-gemstone2018, in-order (Minor, simple)
-> cortex-a7-gemstone2018.

example:
  cosim power m5out/stats.txt --config m5out/config.ini \\
      --model cortex-a15-walker2017 --cluster big=system.bigCluster \\
      --model cortex-a7-gemstone2018 --cluster little=system.littleCluster \\
      -o power.csv --plot power.png
"""


def _cmd_power(args: argparse.Namespace) -> int:
    return _price_and_write(_open_run(args), args, args.output, args.plot)


def _price_and_write(run, args: argparse.Namespace, output: Path, plot: Path | None) -> int:
    # numpy columns all the way: pandas is imported only for Parquet or a plot (its import
    # costs about as much CPU as reading 300 MB of stats.txt)
    import numpy as np

    from cosim import columns as cols
    from cosim.output import write_table
    from cosim.run import price_run

    stats, timeline = price_run(
        run,
        strict=args.strict,
        any_isa=args.any_isa,
        keep_implausible=args.keep_implausible,
        extrapolate=getattr(args, "extrapolate", False),
        progress=getattr(args, "progress", False),
    )
    trace = _ptrace_rows(stats, run, timeline, args)  # before writing anything: a trace cosim cannot write refuses the run
    board = []
    if getattr(args, "against_board", None) is not None:
        from cosim.validate.interval import board_columns

        board = board_columns(timeline, args.against_board)
    write_table(timeline, output)
    meta = stats.attrs["gem5"]
    print(f"{meta.path}: {len(stats)} epoch(s) ({meta.generation} stat names) -> {output}")
    missing_rows = 0
    groups = list(cols.groups(timeline, "cluster"))
    w = max([12, *(len(str(n)) for n, _ in groups)])  # the columns stay aligned whatever gem5 named the clusters
    wm = max([26, *(len(str(r["model"][0])) for _, r in groups)])
    for name, rows in groups:
        flags = sorted({f for text in rows["flags"] for f in text.split(";") if f})
        heat = _temperature_note(next((s for s in run.clusters if s.name == name), None), rows)
        print(f"  {name:<{w}} {rows['model'][0]:<{wm}} {_summary(rows)}{heat}" + (f"  flags: {', '.join(flags)}" if flags else ""))
        missing = [f.partition(":")[2] for f in flags if f.startswith("missing_term:")]
        if missing:
            print(
                f"  {'':<{w}} {len(missing)} term(s) of {rows['model'][0]} gem5 cannot count ({', '.join(missing)}): input 0 in "
                "every epoch, so their share of power is missing (flag missing_term)"
            )
        if "board_lo_w" in rows:
            energy = float(np.nansum(rows["board_lo_w"] * rows["duration_s"])), float(np.nansum(rows["board_hi_w"] * rows["duration_s"]))
            time_s = float(np.sum(rows["duration_s"]))
            print(f"  {'':<{w}} the board's power: {energy[0] / time_s:.3f}-{energy[1] / time_s:.3f} W (mean over time)")
        missing_rows += int((np.isnan(rows["power_w"]) & ~rows["implausible"].astype(bool)).sum())
    if trace is not None:
        from cosim.timeline.ptrace import write_ptrace

        meaning, step, rows = trace
        write_ptrace(args.ptrace, rows)
        names = ", ".join(f"{block}={what}" for block, what in meaning.items())
        print(
            f"  power trace -> {args.ptrace}: {len(rows)} block(s) x {len(next(iter(rows.values())))} row(s), one per {step:.6g} s "
            f"(hotspot -sampling_intvl {step:.6g}); {names}"
        )
    for line in board:
        print(f"  {line}")
    if plot is not None:
        from cosim.plots.cpu import plot_timeline

        plot_timeline(cols.to_frame(timeline, stats.attrs), plot, title=Path(meta.path).parent.name)
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
        print(
            f"cosim: error: {meta.path}: {missing_rows} row(s) have no power value (nan in their stats, flag nan_input); "
            "they are written empty",
            file=sys.stderr,
        )
        partial = True
    return EXIT_PARTIAL if partial and not args.allow_partial else 0


def _ptrace_rows(stats, run, timeline, args: argparse.Namespace):
    """HotSpot's power trace of the run (None where not asked for)."""
    if getattr(args, "ptrace", None) is None:
        return None
    from cosim.timeline.ptrace import ptrace_rows

    return ptrace_rows(
        stats, run.config, run.clusters, timeline, blocks=getattr(args, "ptrace_blocks", "core"), interval_s=args.ptrace_interval_s
    )


def _temperature_note(spec, rows) -> str:
    """What temperature the cluster's static power is priced at, as " [...]" ("" for a model with no term and none given)."""
    import numpy as np

    from cosim.models.static_form import static_form

    if spec is None:
        return ""
    form = static_form(spec.model)
    if form.trained_temperature_c is None:
        if spec.temperature_c is None and "temperature_predicted" in rows["flags"][0]:
            t = rows["temperature_c"]
            span = f"{min(t):.1f} °C" if f"{min(t):.1f}" == f"{max(t):.1f}" else f"{min(t):.1f}-{max(t):.1f} °C"
            return f" [die {span} from its own power, reported only: the model has no temperature term]"
        return " [--temperature not used: the model has no temperature term]" if spec.temperature_c is not None else ""
    lo, hi = form.trained_temperature_c
    if spec.temperature_c is None and "temperature_predicted" in rows["flags"][0]:
        t = rows["temperature_c"]
        span = f"{min(t):.1f} °C" if f"{min(t):.1f}" == f"{max(t):.1f}" else f"{min(t):.1f}-{max(t):.1f} °C"
        curve = form.curve_temperature(rows["freq_mhz"])
        return (
            f" [static at {span}: the die temperature its own power produces (models/thermal-xu3.json; the training "
            f"board's mean at this clock {float(np.mean(curve)):.1f} °C); --temperature sets another]"
        )
    if spec.temperature_c is None:
        t = form.curve_temperature(rows["freq_mhz"])
        span = f"{min(t):.1f} °C" if f"{min(t):.1f}" == f"{max(t):.1f}" else f"{min(t):.1f}-{max(t):.1f} °C"
        return f" [static at {span}: the training board's mean at this clock; --temperature sets another]"
    where = "" if lo <= spec.temperature_c <= hi else f", outside the trained {lo:g}-{hi:g} °C"
    return f" [static at {spec.temperature_c:g} °C (--temperature){where}]"


def _summary(rows) -> str:
    """Mean power (energy / time [W]) and energy [J] of one cluster, saying how many epochs have no value rather than counting them as 0."""
    import numpy as np

    power = rows["power_w"]
    n = len(power)
    known = ~np.isnan(power)
    if not known.any():
        why = "implausible, kept flagged" if rows["implausible"].all() else "nan in their stats"
        return f"no value in any of its {n} epoch(s) ({why})  {_standing(rows)}"
    energy_j = float(np.sum(rows["energy_j"][known]))
    # energy over time, never a plain average of epoch powers: epochs differ in length (the last one, ROI markers)
    span = np.sum(rows["duration_s"][known])
    text = f"mean {energy_j / span:.3f} W"
    lo, hi = (np.asarray(rows[c], dtype=float)[known] for c in ("power_lo_w", "power_hi_w"))
    if np.isfinite(lo).all() and np.isfinite(hi).all():  # the interval of the time-weighted mean (issue 50, item 4)
        weight = np.asarray(rows["duration_s"], dtype=float)[known]
        text += f" [{np.sum(lo * weight) / span:.3f}, {np.sum(hi * weight) / span:.3f}]"
    text += f"  energy {energy_j:.4g} J"
    if not known.all():
        text += f" over {int(known.sum())} of {n} epochs ({int((~known).sum())} without a value: nan in their stats)"
    return f"{text}  {_standing(rows)}"


def _standing(rows) -> str:
    """Where the cluster stands in its model's envelope, and how its core count was priced."""
    import numpy as np

    up = np.array(["extrapolated" in f.split(";") for f in rows["flags"]])
    if up.any():
        ratio = f", {np.max(rows['freq_x_top_clock'][up]):.2f}x top clock"
        half = (rows["power_hi_w"] - rows["power_lo_w"])[up] / 2
        width = f", interval +-{np.nanmax(half):.3f} W" if np.isfinite(half).any() else ", no interval"
        if any("interval_extrapolation_only" in f.split(";") for f in rows["flags"][up]):
            width += " (the extrapolation's part only: the model has no SER)"
        where = f"[extrapolated{ratio}{width}]"
    elif any("voltage_off_curve" in f.split(";") for f in rows["flags"]):
        off = np.array(["voltage_off_curve" in f.split(";") for f in rows["flags"]])
        half = (rows["power_hi_w"] - rows["power_lo_w"])[off] / 2
        width = f", interval +-{np.nanmax(half):.3f} W" if np.isfinite(half).any() else ""
        where = f"[voltage off the model's V-f curve: priced by its static form{width}]"
    elif np.any(rows["extrapolated"]):
        where = "[outside training range]"
    else:
        where = "[inside training range]"
    scale = float(rows["cores_scaled"][0])
    n, powered = int(rows["n_cpus"][0]), int(rows["powered_cores"][0])
    if powered != n:
        where += f" [{n} CPU(s) simulated, {powered} cores powered (--powered-cores)]"
    if scale != 1.0:
        where += f" [{powered} of {int(rows['model_cores'][0])} cores: static scaled by {scale:.3g}]"
    from cosim.timeline.trust import default_note

    where += default_note(sorted({f[14:] for text in rows["flags"] for f in text.split(";") if f.startswith("model_default:")}))
    idle = sorted({f for text in rows["flags"] for f in text.split(";") if f.startswith("idle_cpu:")})
    if idle:  # gem5's se.py -n 4 with one program: the board's cluster, one core busy and the rest powered idle
        where += f" [{n} cores powered: {n - len(idle)} ran, {len(idle)} never ran (idle: static power, no activity)]"
    return where


def _cmd_gem5_expr(args: argparse.Namespace) -> int:
    import importlib.util

    from cosim.models.modelfile import load_model
    from cosim.readers.gem5_config import read_config

    here = Path(__file__).resolve().parent.parent  # the package folder
    script = next(p for p in (here / "_gem5_scripts" / "cosim_gem5.py", here.parent / "gem5_scripts" / "cosim_gem5.py") if p.exists())
    # the gem5-side module is stdlib-only and lives outside the package's import tree
    spec = importlib.util.spec_from_file_location("cosim_gem5", script)
    assert spec is not None and spec.loader is not None  # a .py file path always has a source loader
    gem5_side = importlib.util.module_from_spec(spec)
    sys.modules["cosim_gem5"] = gem5_side  # dataclasses look their module up here
    spec.loader.exec_module(gem5_side)
    ((name, path),) = _pairs([args.cluster], "--cluster").items()
    model = load_model(args.model)
    config = read_config(args.config)
    cluster = config.cluster(name, path)
    layout = gem5_side.ClusterLayout(
        name=name,
        cpus=list(cluster.cores),
        l1d=cluster.l1d,
        l1i=cluster.l1i,
        l2=cluster.l2,
        l2_sharers=cluster.l2_sharers,
        kinds={c: cluster.kind(c) for c in cluster.cores},
    )
    try:
        exprs = gem5_side.cpu_expressions(model.raw, layout, generation=args.generation, ticks_per_s=config.ticks_per_s)
    except gem5_side.ExpressionError as err:
        raise CosimError(str(err)) from None
    for cpu, (dyn, st) in exprs.items():
        print(f"# {cpu}\ndyn = {dyn}\nst = {st}\n")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from cosim.cli.demo import find_demo_run

    run = find_demo_run()
    if run is None:
        print(
            "cosim demo: the bundled gem5 run is pending: traces/ has no cosim-* run yet, and the public runs "
            "in ../shared/data/gem5/ are not here to fall back on. Nothing was computed.",
            file=sys.stderr,
        )
        return 1
    from cosim.cli.demo import open_demo

    args.out.mkdir(parents=True, exist_ok=True)
    print(f"cosim demo: {run.description}")
    resolved = open_demo(run)
    demo = argparse.Namespace(
        strict=False, any_isa=False, keep_implausible=False, allow_partial=True, ptrace=args.out / "power.ptrace", ptrace_interval_s=None
    )
    return _price_and_write(resolved, demo, args.out / "power.csv", args.out / "power.png")
