"""``cosim read``: any supported input -> one long, tidy table (see :mod:`cosim.readers.tidy`)."""

from __future__ import annotations

import argparse
from pathlib import Path

_HELP = """\
Read a gem5 stats file, an nvprof log (--metrics/--events, --print-gpu-trace,
summary; text or --csv), ncu --csv output, a GPGPU-Sim/Accel-Sim log, a
GPUWattch/AccelWattch power report or an Ocelot trace, and write one long table:
source, kernel, launch, metric, value, unit, device, statistic.  Values are in
SI base units (B, s, B/s, Hz, W, J); counts stay counts; percentages become
fractions.  The format is detected from the content; --format overrides.

examples:
  cosim read traces/cosim-nvprof-dct-gputrace.txt -o trace.csv
  cosim read run.log --format gpgpusim -o run.parquet
"""


def add_parsers(sub) -> None:
    from cosim.readers.tidy import FORMATS

    r = sub.add_parser(
        "read",
        help="any supported input -> one tidy table (source, kernel, launch, metric, value, unit)",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("input", type=Path, help="the file to read")
    r.add_argument("--format", choices=FORMATS, help="the input's format (default: detected)")
    r.add_argument("-o", "--output", type=Path, default=Path("cosim-read.csv"), help="table .csv or .parquet")
    r.set_defaults(run=cmd_read, progress=False)


def cmd_read(args: argparse.Namespace) -> int:
    from cosim.output import write_table
    from cosim.readers.tidy import read

    table = read(args.input, format=args.format)
    write_table(table, args.output)
    fmt = table.attrs["read"]["format"]
    kernels = table["kernel"].nunique()
    print(
        f"{args.input}: {fmt}, {len(table)} value(s) of {table['metric'].nunique()} metric(s) over {kernels} "
        f"{'epoch' if fmt == 'gem5' else 'kernel'}(s) -> {args.output}"
    )
    return 0
