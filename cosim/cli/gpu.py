"""``cosim gpu`` and ``cosim soc``: GPU kernel timelines, and the whole-SoC timeline."""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

from cosim.errors import CosimError, CosimWarning

_GPU_HELP = """\
Per-kernel power and energy of a GPU Ocelot instruction-class trace or an nvprof
metrics file (CSV or text), with the Tegra K1 rail model (default) or the Ocelot
access-rate model (--model ocelot-fermi-aalto2013, Ocelot traces only).

examples:
  cosim gpu traces/cosim-nvprof-dct.csv --gpu-mhz 852 --emc-mhz 924 --activity traces/cosim-dct-activity.csv -o dct.csv --plot dct.png
  cosim gpu traces/cosim-ocelot-video.trace --model ocelot-fermi-aalto2013 --breakdown classes.png -o video.csv
"""


_ENERGY_HELP = """\
Energy [J] per kernel name (--names) from a fit over all the run's readings:
reading = idle + sum of each name's power x its busy share of the reading's
averaging window, the window and lag found from the log, 90 % intervals from a
block bootstrap; a name the log cannot tell apart is flagged not_identifiable
with the reason.  The run's energy comes from an energy counter where the log
has one (total_energy_consumption, DCGM TOTEC).  Per launch (-o): each kernel's
measured mean power [W] and energy [J], with a 90 % interval from
the readings inside it, from a power log and a kernel trace of the same run.
A reading counts for a kernel when its whole averaging window lies inside the
kernel (power.draw averages the last 1 s on Ampere and newer GPUs;
power.draw.instant does not); a kernel with fewer readings than --min-samples is
flagged unresolved and left empty.  The trace's clock (nsys: ns since the
session began; nvprof: since profiling began) is put on the log's by
--offset-s, --trace-zero, or, given neither, the offset at which the power
follows the kernels best; what a shift of 1 and 2 sample periods would change is
printed.

examples:
  nvidia-smi --query-gpu=index,timestamp,power.draw.instant,power.draw --format=csv -lms 50 -f power.csv &
  nsys profile -o run ./app; nsys stats --report cuda_gpu_trace --format csv -o run run.nsys-rep
  cosim gpu-energy power.csv run_cuda_gpu_trace.csv -o energy.csv --plot energy.png
"""

_SOC_HELP = """\
The CPU clusters of a gem5 run and the Tegra K1 GPU and memory rails on one time axis
(Stokke et al., Eq. 8). The CPU clusters are priced only while the gem5 run lasts: before
its start and after its end they add nothing, neither dynamic nor static power, and those
rows are flagged no_cpu_timeline (give --gpu-offset-s so the GPU's work falls inside it).

example:
  cosim soc traces/cosim-v24-se-biglittle-1800-1400MHz/stats.txt.gz --gpu traces/cosim-nvprof-dct.txt \\
      --gpu-trace traces/cosim-nvprof-dct-gputrace.txt --activity traces/cosim-dct-activity.csv -o soc.csv
"""


def add_parsers(sub) -> None:
    from cosim.cli._args import _add_trust_flags, add_config_options, add_temperature_options  # called while building the parser

    g = sub.add_parser(
        "gpu",
        help="per-kernel GPU power/energy from an Ocelot trace or nvprof metrics",
        description=_GPU_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g.add_argument("input", type=Path, help="Ocelot trace, nvprof --metrics log, ncu --csv, or GPGPU-Sim/Accel-Sim stdout (detected)")
    _gpu_args(g)
    g.add_argument(
        "--model",
        default="tegra-k1-stokke2016",
        help="tegra-k1-stokke2016 (rail model), ocelot-fermi-aalto2013 (access-rate model) or a model file",
    )
    g.add_argument("--gpu-clock-mhz", type=float, help="access-rate model: GPU clock [MHz] (default: the model's)")
    g.add_argument("--idle-power", action="append", default=[], metavar="LEVEL=W", help="access-rate model: idle power of a level [W]")
    g.add_argument("--transfers", type=Path, help="access-rate model: CSV launch,size_bytes of PCI Express copies before launches")
    g.add_argument("--measured", type=Path, help="Corsair Link power log to compare the mean power with")
    g.add_argument(
        "--compare-with",
        type=Path,
        metavar="REPORT",
        help="GPUWattch/AccelWattch power report of the same GPGPU-Sim run: its per-kernel power beside the model's",
    )
    g.add_argument("--breakdown", type=Path, help="write the per-class energy bar chart here")
    g.add_argument("-o", "--output", type=Path, default=Path("cosim-gpu.csv"), help="timeline CSV or .parquet")
    g.add_argument("--plot", type=Path, help="write the stacked power plot here")
    g.set_defaults(run=cmd_gpu)

    s = sub.add_parser(
        "soc",
        help="CPU clusters (gem5) + Tegra K1 GPU/memory rails on one time axis",
        description=_SOC_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("stats", type=Path, help="gem5 stats.txt of the CPU side")
    s.add_argument("--gpu", type=Path, required=True, help="GPU Ocelot trace or nvprof metrics file")
    add_config_options(s)
    s.add_argument("--cpu-model", dest="model", action="append", default=[], metavar="MODEL", help="CPU model per --cluster")
    s.add_argument("--cluster", action="append", default=[], metavar="NAME=PATH")
    s.add_argument("--voltage", action="append", default=[], metavar="NAME=VOLTS")
    s.add_argument("--voltage-model", action="store_true")
    add_temperature_options(s)
    s.add_argument("--gpu-offset-s", type=float, default=0.0, help="time of the first GPU launch on the gem5 time axis [s]")
    _add_trust_flags(s)
    _gpu_args(s)
    s.add_argument("-o", "--output", type=Path, default=Path("cosim-soc.csv"))
    s.add_argument("--plot", type=Path)
    s.set_defaults(run=cmd_soc, progress=False)

    e = sub.add_parser(
        "gpu-energy",
        help="measured power and energy per kernel: a power log (nvidia-smi, DCGM) and a kernel trace (nsys, nvprof) of one run",
        description=_ENERGY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    e.add_argument(
        "power_log",
        type=Path,
        help="nvidia-smi --query-gpu CSV, nvidia-smi dmon -o DT, dcgmi dmon log, or a Kokkos energy tool's power CSV",
    )
    e.add_argument(
        "trace",
        type=Path,
        help="nsys stats --report cuda_gpu_trace --format csv, nvprof --print-gpu-trace output, or a Kokkos energy tool's kernels CSV",
    )
    e.add_argument("--field", help="power field to use (default: power.draw.instant, else power.draw, else power.draw.average)")
    e.add_argument("--window-s", type=float, help="the readings' averaging window [s] (default: the field's; power.draw: 1)")
    e.add_argument("--gpu", help="which GPU of the log ran the trace (its index or uuid; DCGM: 'GPU 0')")
    e.add_argument("--period-s", type=float, help="DCGM logs only: the sample period (dcgmi dmon -d, in s)")
    align = e.add_mutually_exclusive_group()
    align.add_argument("--offset-s", type=float, help="the log's time at the trace's zero, relative to the log's first reading [s]")
    align.add_argument("--trace-zero", help="wall-clock time of the trace's zero, as nvidia-smi prints it (YYYY/MM/DD hh:mm:ss.fff)")
    e.add_argument("--min-samples", type=int, default=2, help="readings inside a kernel needed to measure it (default 2)")
    e.add_argument("-o", "--output", type=Path, default=Path("cosim-gpu-energy.csv"), help="per-launch table .csv or .parquet")
    e.add_argument(
        "--names", type=Path, help="per-kernel-name table (energy from the fit over all readings; default: the output's name + '-names')"
    )
    e.add_argument("--power-limit-w", type=float, help="the board's power limit [W] (default: the log's power.limit, where logged)")
    e.add_argument("--progress", action=argparse.BooleanOptionalAction, help="progress lines on stderr for the long steps (default: on)")
    e.add_argument("--plot", type=Path, help="write the power-over-time plot with the kernels marked here")
    e.set_defaults(run=_gpu_energy)

    r = sub.add_parser("rate-baseline", help="Eq. 1 rate-based model fitted at one clock pair vs the rail model at all (Fig. 1a)")
    r.add_argument("--train-gpu-mhz", type=float, default=540.0, help="GPU clock of the training data [MHz]")
    r.add_argument("--train-emc-mhz", type=float, default=600.0, help="memory clock of the training data [MHz]")
    r.add_argument("-o", "--output", type=Path, default=Path("cosim-rate-baseline.csv"))
    r.add_argument("--plot", type=Path, help="write the error map here")
    r.set_defaults(run=cmd_rate_baseline)


def _gpu_energy(args: argparse.Namespace) -> int:
    from cosim.cli.gpu_energy import cmd_gpu_energy

    return cmd_gpu_energy(args)


def _gpu_args(p) -> None:
    p.add_argument("--gpu-mhz", type=float, default=852.0, help="Tegra K1 GPU clock [MHz] (default 852)")
    p.add_argument("--emc-mhz", type=float, default=924.0, help="Tegra K1 memory clock [MHz] (default 924)")
    p.add_argument("--cpu-lp-mhz", type=float, default=1092.0, help="LP core clock [MHz] (default 1092, as in the paper)")
    p.add_argument("--activity", type=Path, help="CSV of memory busy cycles and LP-core rates per kernel (ACTMON-style)")
    p.add_argument("--launch-times", type=Path, help="CSV launch,start_s[,kernel]: when each kernel starts [s]")
    p.add_argument("--gap-s", type=float, default=0.0, help="idle time between kernels [s] when no launch times are given")
    p.add_argument("--railgate-delay-s", type=float, help="GPU inactivity time before power-gating [s] (default: the model's)")
    p.add_argument("--class-map", type=Path, help="TOML [classes] renaming or ignoring unknown Ocelot classes")
    p.add_argument("--ignore-metric", action="append", default=[], metavar="NAME", help="skip this nvprof metric")
    p.add_argument(
        "--keep-unknown",
        action="store_true",
        help="keep nvprof metrics the model does not use (as extra columns) instead of refusing the file",
    )
    p.add_argument("--gpu-trace", type=Path, help="nvprof --print-gpu-trace of the same program: real kernel start times and durations")
    p.add_argument(
        "--any-device", action="store_true", help="price data from a GPU the model was not trained on (rows flagged device_mismatch)"
    )
    p.add_argument("--allow-partial", action="store_true", help="exit 0 even if the log was cut off (its unfinished last kernel left out)")


def _open(args, model: str):
    """The GPU input resolved (cosim.gpu_input.open_gpu) from the command's flags."""
    from cosim.gpu_input import open_gpu

    return open_gpu(
        args.input,
        model=model,
        class_map=args.class_map,
        ignore_metrics=args.ignore_metric,
        keep_unknown=args.keep_unknown,
        any_device=args.any_device,
    )


def _idle_power(args) -> dict[str, float]:
    import math

    from cosim.cli._args import _pairs

    idle = {}
    for name, text in _pairs(args.idle_power, "--idle-power").items():
        try:
            idle[name] = float(text)
        except ValueError:
            raise CosimError(f"--idle-power {name}={text}: not a number of watts") from None
        if not math.isfinite(idle[name]) or idle[name] < 0:
            raise CosimError(f"--idle-power {name}={text}: must be a power >= 0 [W]")
    return idle


def _clocks(args) -> dict:
    return dict(gpu_mhz=args.gpu_mhz, emc_mhz=args.emc_mhz, cpu_lp_mhz=args.cpu_lp_mhz)


def cmd_gpu(args: argparse.Namespace) -> int:
    from cosim.gpu_input import model_kind, price_gpu
    from cosim.output import write_table
    from cosim.plots.gpu import plot_breakdown, plot_gpu_timeline

    kind_of_model, _ = model_kind(args.model)
    _refuse_flags_of_the_other_model(args, kind_of_model)
    gpu = _open(args, args.model)
    if gpu.model_kind == "rail":
        timeline = price_gpu(gpu, **_rail_options(args))
    else:
        idle = _idle_power(args)
        timeline = price_gpu(
            gpu,
            gpu_clock_mhz=args.gpu_clock_mhz,
            idle_power_w=idle,
            transfers=args.transfers,
            launch_times=args.launch_times,
            gap_s=args.gap_s,
        )
    write_table(timeline, args.output)
    kernels = timeline[timeline["kind"] == "kernel"]
    span = timeline["end_s"].max() - timeline["start_s"].min()
    print(f"{args.input}: {len(kernels)} kernel launch(es), {kernels['kernel'].nunique()} kernel(s) ({gpu.kind}) -> {args.output}")
    print(
        f"  model {timeline.attrs['model']}: {span * 1e3:.4g} ms, mean {timeline['energy_j'].sum() / span:.4g} W, "
        f"energy {timeline['energy_j'].sum():.4g} J (kernels {kernels['energy_j'].sum():.4g} J)"
    )
    flags = sorted({f for text in timeline["flags"] for f in str(text).split(";") if f})
    if flags:
        print(f"  flags: {', '.join(flags)}")
    if args.measured:
        _compare_measured(args.measured, timeline)
    if args.compare_with:
        _compare_report(args.compare_with, timeline, gpu.data if gpu.kind == "gpgpusim" else None)
    if args.plot:
        print(f"  plot -> {plot_gpu_timeline(timeline, args.plot, title=args.input.name)}")
    if args.breakdown:
        print(f"  breakdown -> {plot_breakdown(timeline, args.breakdown)}")
    return 0


def _refuse_flags_of_the_other_model(args, kind_of_model: str) -> None:
    """Flags only the other GPU model reads would be silently ignored: refuse them."""
    if kind_of_model == "rail":
        other = {"--gpu-clock-mhz": args.gpu_clock_mhz is not None, "--idle-power": bool(args.idle_power), "--transfers": args.transfers}
        model = "the access-rate model (ocelot-fermi-aalto2013)"
    else:
        other = {"--activity": args.activity, "--railgate-delay-s": args.railgate_delay_s is not None, "--gpu-trace": args.gpu_trace}
        model = "the rail model (tegra-k1-stokke2016)"
    given = [flag for flag, value in other.items() if value]
    if given:
        raise CosimError(
            f"{', '.join(given)}: only {model} reads {'them' if len(given) > 1 else 'it'}, not --model {args.model}; drop it or change --model"
        )


def _compare_report(path: Path, timeline, run) -> None:
    from cosim.gpu_input import beside_report

    rows = beside_report(timeline, path, run)
    print(f"  reference {path.name} (GPU chip power; the model prices {timeline.attrs['model']}'s scope):")
    for _, r in rows.iterrows():
        print(
            f"    {r['kernel'][:48]:<48} model {r['power_w']:8.2f} W (dynamic {r['dynamic_w']:.2f} W)   report {r['report_power_w']:8.2f} W"
        )


def _compare_measured(path: Path, timeline) -> None:
    from cosim.gpu_input import beside_measured

    samples, measured, predicted = beside_measured(timeline, path)
    print(
        f"  measured ({path.name}, {samples} s at 1 Hz): mean {measured:.2f} W in at the PSU; "
        f"predicted mean {predicted:.2f} W ({100 * (predicted - measured) / measured:+.1f} %)"
    )


def cmd_soc(args: argparse.Namespace) -> int:
    from cosim.cli._args import _open_run
    from cosim.counters.gpu import dram_busy_cycles
    from cosim.gpu_input import RAIL_MODEL, price_gpu, rail_background
    from cosim.output import write_table
    from cosim.plots.soc import plot_soc
    from cosim.readers.files import input_file
    from cosim.readers.gem5_stats import read_stats
    from cosim.timeline.cpu import power_timeline
    from cosim.timeline.soc import soc_timeline

    input_file(args.gpu, what="a GPU trace, nvprof/ncu log or GPGPU-Sim output")  # every input checked before any work
    run = _open_run(args)
    stats = read_stats(run.stats_path)
    cpu = power_timeline(
        stats,
        run.config,
        run.clusters,
        any_isa=args.any_isa,
        keep_implausible=args.keep_implausible,
        extrapolate=args.extrapolate,
        model_option="--cpu-model",
    )
    args.input = args.gpu
    gpu_in = _open(args, RAIL_MODEL)
    model = gpu_in.model
    gpu = price_gpu(gpu_in, **_rail_options(args))
    background = rail_background(gpu_in, **_clocks(args), activity=args.activity)
    try:
        busy = dram_busy_cycles(stats) / stats["duration_s"].to_numpy()
    except CosimError as err:
        warnings.warn(CosimWarning(f"{err}; the memory rail's CPU cycles come from --activity"), stacklevel=1)
        busy = None
    out = soc_timeline(
        cpu, gpu, background, model, gpu_offset_s=args.gpu_offset_s, cpu_mem_busy_per_s=busy, railgate_delay_s=args.railgate_delay_s
    )
    write_table(out, args.output)
    span = out["end_s"].max() - out["start_s"].min()
    print(f"{args.stats} + {args.gpu}: {len(out)} segment(s) over {span:.4g} s -> {args.output}")
    for col in [c for c in out.columns if c.endswith("_w") and c not in ("mem_cpu_busy_w",)]:
        print(f"  {col:<22} mean {(out[col].fillna(0) * out['duration_s']).sum() / span:8.4f} W")
    print(f"  energy {out['energy_j'].sum():.4g} J")
    if args.plot:
        print(f"  plot -> {plot_soc(out, args.plot, title=f'{args.stats.parent.name} + {args.gpu.name}')}")
    return 0


def cmd_rate_baseline(args: argparse.Namespace) -> int:
    import numpy as np

    from cosim.models.rate_based import rate_based_error_map
    from cosim.models.tegrak1 import clock_voltage_v, load_rail_model
    from cosim.output import write_table
    from cosim.plots import pyplot, save_figure

    model = load_rail_model()
    clock_voltage_v(model, "gpu", args.train_gpu_mhz)  # one-line error for a clock not in the table
    clock_voltage_v(model, "emc", args.train_emc_mhz)
    sweep = rate_based_error_map(model, train_gpu_mhz=args.train_gpu_mhz, train_emc_mhz=args.train_emc_mhz)
    write_table(sweep, args.output)
    err = sweep["error_pct"]
    at = sweep[(sweep["gpu_mhz"] == args.train_gpu_mhz) & (sweep["emc_mhz"] == args.train_emc_mhz)]["error_pct"].iloc[0]
    print(f"rate-based model (Eq. 1) trained at GPU {args.train_gpu_mhz:g} / EMC {args.train_emc_mhz:g} MHz on the synthetic benchmarks,")
    print(f"  tested on 'motion_estimation' at {len(sweep)} clock pairs against the rail model -> {args.output}")
    print(f"  error at the training clocks {at:+.1f} %; from {err.min():+.1f} % (underestimate) to {err.max():+.1f} % (overestimate)")
    if args.plot:
        plt = pyplot()
        grid = sweep.pivot(index="gpu_mhz", columns="emc_mhz", values="error_pct")
        fig, ax = plt.subplots(figsize=(7, 5), layout="constrained")
        lim = float(np.nanmax(np.abs(grid.to_numpy())))
        im = ax.imshow(grid.to_numpy(), origin="lower", cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
        ax.set_xticks(range(grid.shape[1]), [f"{f:g}" for f in grid.columns], rotation=45)
        ax.set_yticks(range(grid.shape[0]), [f"{f:g}" for f in grid.index])
        ax.set_xlabel("memory (EMC) clock [MHz]")
        ax.set_ylabel("GPU clock [MHz]")
        ax.set_title("rate-based model error [%] (cf. Stokke et al. Fig. 1a)")
        fig.colorbar(im, ax=ax, label="(rate-based - rail model) / rail model [%]")
        print(f"  plot -> {save_figure(fig, args.plot)}")
    return 0


def _rail_options(args: argparse.Namespace) -> dict:
    """The rail model's options as price_gpu takes them (cosim gpu and cosim soc share them)."""
    return {
        **_clocks(args),
        "activity": args.activity,
        "launch_times": args.launch_times,
        "gpu_trace": args.gpu_trace,
        "gap_s": args.gap_s,
        "railgate_delay_s": args.railgate_delay_s,
    }
