"""``cosim read``: any supported input -> one long, tidy table (see :mod:`cosim.readers.tidy`)."""

from __future__ import annotations

import argparse
from pathlib import Path

_HELP = """\
Read a gem5 stats file, an nvprof log (--metrics/--events, --print-gpu-trace,
summary; text or --csv), ncu --csv output, a GPGPU-Sim/Accel-Sim log, a
GPUWattch/AccelWattch power report, an AccelWattch hw_perf.csv, a DCGM dmon
log, an nvidia-smi --query-gpu CSV or dmon log, an nsys stats cuda_gpu_trace or
cuda_gpu_kern_sum CSV, a board power log or an Ocelot trace, and write one long table:
source, kernel, launch, metric, value, unit, device, statistic.  Values are in
SI base units (B, s, B/s, Hz, W, J); counts stay counts; percentages become
fractions.  The format is detected from the content; --format overrides.

A folder of benchmark_<name>_core<C>_mem<M>_input<NN>_<metrics|perf|power>.log
files gives a kernel DVFS table instead: one row per (benchmark, kernel, core_mhz,
mem_mhz) with runtime_s, power_w and the nvprof metrics (docs/howto/kernel-models.md).

examples:
  cosim read traces/cosim-nvprof-dct-gputrace.txt -o trace.csv
  cosim read run.log --format gpgpusim -o run.parquet
  cosim read power.csv -o power-long.csv      # nvidia-smi --query-gpu=timestamp,power.draw --format=csv -lms 100
"""


def add_parsers(sub) -> None:
    from cosim.readers.tidy import FORMATS

    r = sub.add_parser(
        "read",
        help="any supported input -> one tidy table (source, kernel, launch, metric, value, unit)",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("input", type=Path, help="the file to read, or a folder of per-clock-pair GPU logs (a kernel DVFS table)")
    r.add_argument("--format", choices=FORMATS, help="the input's format (default: detected)")
    r.add_argument(
        "--allow-partial", action="store_true", help="exit 0 even if the input was cut off (its unfinished last record left out)"
    )
    r.add_argument(
        "--columns",
        metavar="NAME=COLUMN,...",
        help="another table's columns under cosim's names, unit in the name: a power log (time_s=Time,power_w=Power[,energy_j=E,gpu=G]) "
        "or a kernel DVFS table (benchmark=,kernel=,core_mhz=,mem_mhz=,runtime_s= or runtime_ms=,power_w=; other columns stay features)",
    )
    r.add_argument("-o", "--output", type=Path, default=Path("cosim-read.csv"), help="table .csv or .parquet")
    r.set_defaults(run=cmd_read, progress=False)


def cmd_read(args: argparse.Namespace) -> int:
    from cosim.gpu_input import read_table
    from cosim.output import write_table

    if args.columns:
        return _read_mapped(args)
    fmt, table = read_table(args.input, format=args.format)
    write_table(table, args.output)
    if fmt == "kernel-dvfs":
        n = table["power_samples"]
        print(
            f"{args.input}: kernel DVFS table, {len(table)} row(s) = {table['benchmark'].nunique()} benchmark(s) x clock pairs, "
            f"power from {int(n.min())}-{int(n.max())} samples per row (median {n.median():g}), "
            f"{len(table.attrs['dvfs']['dropped'])} pair(s) dropped -> {args.output}"
        )
        return 0
    samples = ("dcgm-dmon", "gpu-power-samples", "nvidia-smi", "nvidia-smi-dmon", "tegrastats", "power-csv")
    over = {"gem5": "epoch", **dict.fromkeys(samples, "sample")}.get(fmt, "kernel")
    count = table["kernel"].nunique() if over in ("epoch", "kernel") else table[["device", "launch"]].drop_duplicates().shape[0]
    print(f"{args.input}: {fmt}, {len(table)} value(s) of {table['metric'].nunique()} metric(s) over {count} {over}(s) -> {args.output}")
    return 0


def _read_mapped(args: argparse.Namespace) -> int:
    """``--columns``: a power log read as power-csv, or a kernel DVFS table checked as kernel-fit reads it."""
    from cosim.cli.kernels import mapped_kernel_table
    from cosim.output import write_table
    from cosim.readers.column_map import KERNEL_TARGETS, parse_columns
    from cosim.readers.tidy import read

    columns = parse_columns(args.columns)
    if set(columns) & KERNEL_TARGETS:
        table = mapped_kernel_table(args.input, columns)
        write_table(table, args.output)
        print(
            f"{args.input}: kernel DVFS table (--columns), {len(table)} row(s) of {table['benchmark'].nunique()} benchmark(s) -> {args.output}"
        )
        return 0
    table = read(args.input, format=args.format, columns=columns)
    write_table(table, args.output)
    count = table[["device", "launch"]].drop_duplicates().shape[0]
    print(
        f"{args.input}: power-csv (--columns), {len(table)} value(s) of {table['metric'].nunique()} metric(s) over {count} sample(s) -> {args.output}"
    )
    return 0
