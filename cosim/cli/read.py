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

Without -o the table is printed to standard output as CSV (nothing is written),
and the summary line goes to standard error.

examples:
  cosim read traces/cosim-nvprof-dct-gputrace.txt -o trace.csv
  cosim read traces/cosim-nvprof-dct-gputrace.txt | head
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
    r.add_argument("-o", "--output", type=Path, help="table .csv or .parquet (default: CSV on standard output, the summary on stderr)")
    r.set_defaults(run=cmd_read, progress=False)


def cmd_read(args: argparse.Namespace) -> int:
    import sys

    from cosim.gpu_input import read_table
    from cosim.output import write_table

    fmt, table = read_table(args.input, format=args.format)
    if args.output is None:  # no fixed file in the working folder, overwritten each time: the table, printed
        out, where = sys.stderr, "standard output"
        (table if "flags" in table else table.assign(flags="")).to_csv(sys.stdout, index=False, float_format="%.9g")
    else:
        out, where = sys.stdout, args.output
        write_table(table, args.output)
    if fmt == "kernel-dvfs":
        n = table["power_samples"]
        print(
            f"{args.input}: kernel DVFS table, {len(table)} row(s) = {table['benchmark'].nunique()} benchmark(s) x clock pairs, "
            f"power from {int(n.min())}-{int(n.max())} samples per row (median {n.median():g}), "
            f"{len(table.attrs['dvfs']['dropped'])} pair(s) dropped -> {where}",
            file=out,
        )
        return 0
    over = {"gem5": "epoch", "dcgm-dmon": "sample", "gpu-power-samples": "sample", "nvidia-smi": "sample", "nvidia-smi-dmon": "sample"}.get(
        fmt, "kernel"
    )
    count = table["kernel"].nunique() if over in ("epoch", "kernel") else table[["device", "launch"]].drop_duplicates().shape[0]
    print(
        f"{args.input}: {fmt}, {len(table)} value(s) of {table['metric'].nunique()} metric(s) over {count} {over}(s) -> {where}", file=out
    )
    return 0
