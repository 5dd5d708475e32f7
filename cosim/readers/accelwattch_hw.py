"""AccelWattch's hardware-validation performance table ``hw_perf.csv`` (written by its
``accelwattch_hw_profiler``): one row per (benchmark, kernel) of counters measured on the GPU::

    Benchmark,Kernel,L1_RH,L1_RM,L1_WH,L1_WM,CC_ACC,SHRD_ACC,DRAM_Rd,DRAM_Wr,L2_RH,L2_RM,L2_WH,L2_WM,NOC,Pipeline_Duty,Num_Idle_SMs,Elapsed_Cycles,Chip Voltage

AccelWattch HW/HYBRID runs read it in place of simulated counts. The counters are access counts
(per kernel launch, averaged over launches), ``Pipeline_Duty`` a fraction, ``Elapsed_Cycles`` cycles and
``Chip Voltage`` volts.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError
from cosim.readers._files import read_text
from cosim.readers.cutoff import ends_mid_line, left_out

KEYS = ("Benchmark", "Kernel")
UNITS = {"Pipeline_Duty": "fraction", "Elapsed_Cycles": "cycle", "Chip Voltage": "V"}  # the rest are counts


def looks_like_hw_perf(head: str) -> bool:
    """Whether a file's first line is an AccelWattch ``hw_perf.csv`` header."""
    first = head.lstrip().split("\n", 1)[0]
    return first.startswith("Benchmark,Kernel,") and "Elapsed_Cycles" in first


def read_hw_perf(path: str | Path) -> pd.DataFrame:
    """One row per line: ``benchmark``, ``kernel``, ``line`` and one column per counter (its name as written)."""
    path = Path(path)
    text = read_text(path, missing_hint="give AccelWattch's hw_perf.csv", empty_hint="give AccelWattch's hw_perf.csv")
    lines = text.splitlines()
    if ends_mid_line(text) and len(lines) > 1:  # a cut row: its last value is short of digits
        lines.pop()
        left_out(path, len(lines) + 1, "the last row", "the file ends mid-line", kept=len(lines) - 1, unit="row")
    header = next(csv.reader(io.StringIO(lines[0])))
    if tuple(header[:2]) != KEYS:
        raise CosimError(f"{path}:1: expected the hw_perf.csv header Benchmark,Kernel,<counters>")
    rows = []
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = next(csv.reader(io.StringIO(line)))
        if len(fields) != len(header):
            raise CosimError(f"{path}:{lineno}: {len(fields)} field(s) under a header of {len(header)}; is the file intact?")
        row: dict = {"benchmark": fields[0], "kernel": fields[1], "line": lineno}
        for name, raw in zip(header[2:], fields[2:]):
            try:
                value = float(raw)
            except ValueError:
                raise CosimError(f"{path}:{lineno}: {name} is '{raw}', not a number") from None
            if not math.isfinite(value) or value < 0:
                raise CosimError(f"{path}:{lineno}: {name} is {raw}; counts, cycles and voltages are finite and >= 0")
            row[name] = value
        rows.append(row)
    if not rows:
        raise CosimError(f"{path}: a header but no rows")
    out = pd.DataFrame(rows)
    out.attrs["hw_perf"] = {"path": str(path), "counters": header[2:]}
    return out
