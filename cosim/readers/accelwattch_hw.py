"""AccelWattch's hardware-validation tables, as its ``accelwattch_hw_profiler`` writes them.

``hw_perf.csv``: one row per (benchmark, kernel) of counters measured on the GPU::

    Benchmark,Kernel,L1_RH,L1_RM,L1_WH,L1_WM,CC_ACC,SHRD_ACC,DRAM_Rd,DRAM_Wr,L2_RH,L2_RM,L2_WH,L2_WM,NOC,Pipeline_Duty,Num_Idle_SMs,Elapsed_Cycles,Chip Voltage

AccelWattch HW/HYBRID runs read it in place of simulated counts. The counters are access counts
(per kernel launch, averaged over launches), ``Pipeline_Duty`` a fraction, ``Num_Idle_SMs`` an average
(AccelWattch's own file has one below 0, kept as written), ``Elapsed_Cycles`` cycles and ``Chip Voltage`` volts.

``hw_power_validation*.csv``: the measured power of each validation kernel::

    ,mean HW_power,st_dev,var,#samples
    backprop_k1,219.7978,0.267306865,0.07145296,5
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
SIGNED = {"Num_Idle_SMs"}  # an average the profiler script computes; it can come out below 0
POWER_UNITS = {"mean HW_power": "W", "st_dev": "W", "var": "W^2", "#samples": "count"}


def looks_like_hw_perf(head: str) -> bool:
    """Whether a file's first line is an AccelWattch ``hw_perf.csv`` header."""
    first = head.lstrip().split("\n", 1)[0]
    return first.startswith("Benchmark,Kernel,") and "Elapsed_Cycles" in first


def read_hw_perf(path: str | Path) -> pd.DataFrame:
    """One row per line: ``benchmark``, ``kernel``, ``line`` and one column per counter (its name as written)."""
    path = Path(path)
    lines = _complete_lines(
        path, read_text(path, missing_hint="give AccelWattch's hw_perf.csv", empty_hint="give AccelWattch's hw_perf.csv"), len(KEYS)
    )
    header = next(csv.reader(io.StringIO(lines[0])))
    if tuple(header[:2]) != KEYS:
        raise CosimError(f"{path}:1: expected the hw_perf.csv header Benchmark,Kernel,<counters>")
    rows = []
    for lineno, fields in _fields(path, lines, len(header)):
        row: dict = {"benchmark": fields[0], "kernel": fields[1], "line": lineno}
        for name, raw in zip(header[2:], fields[2:]):
            value = _number(path, lineno, name, raw)
            if not math.isfinite(value) or value < 0 and name not in SIGNED:
                raise CosimError(f"{path}:{lineno}: {name} is {raw}; counts, cycles and voltages are finite and >= 0")
            row[name] = value
        rows.append(row)
    if not rows:
        raise CosimError(f"{path}: a header but no rows")
    out = pd.DataFrame(rows)
    out.attrs["hw_perf"] = {"path": str(path), "counters": header[2:]}
    return out


def looks_like_hw_power(head: str) -> bool:
    """Whether a file's first line is an AccelWattch ``hw_power_validation*.csv`` header."""
    return head.lstrip().split("\n", 1)[0].replace(" ", "").startswith(",meanHW_power,")


def read_hw_power(path: str | Path) -> pd.DataFrame:
    """One row per kernel: ``kernel`` (``backprop_k1``), ``line``, ``power_w`` (mean [W]), ``power_sd_w`` [W],
    ``power_var_w2`` [W^2] and ``samples``; ``attrs['hw_power']['columns']`` maps them to the file's names."""
    path = Path(path)
    text = read_text(path, missing_hint="give AccelWattch's hw_power_validation CSV", empty_hint="give AccelWattch's power CSV")
    lines = _complete_lines(path, text, 1)
    header = [h.strip() for h in next(csv.reader(io.StringIO(lines[0])))]
    names = {"mean HW_power": "power_w", "st_dev": "power_sd_w", "var": "power_var_w2", "#samples": "samples"}
    if header[1:] != list(names):
        raise CosimError(f"{path}:1: expected the header ,mean HW_power,st_dev,var,#samples")
    rows = []
    for lineno, fields in _fields(path, lines, len(header)):
        row: dict = {"kernel": fields[0], "line": lineno}
        for name, raw in zip(names.values(), fields[1:]):
            value = _number(path, lineno, name, raw)
            if not math.isfinite(value) or value < 0:
                raise CosimError(f"{path}:{lineno}: {name} is {raw}; a measured power and its spread are finite and >= 0")
            row[name] = value
        rows.append(row)
    if not rows:
        raise CosimError(f"{path}: a header but no rows")
    out = pd.DataFrame(rows)
    out.attrs["hw_power"] = {"path": str(path), "columns": {v: k for k, v in names.items()}}
    return out


def _complete_lines(path: Path, text: str, keys: int) -> list[str]:
    """The file's lines; a last row without a final newline is kept when it is whole (the header's number of
    fields, each after the first ``keys`` a number: AccelWattch's own hw_power_validation_volta.csv ends so),
    and otherwise left out as cut, which is reported."""
    lines = text.splitlines()
    if ends_mid_line(text) and len(lines) > 1 and not _whole(lines[0], lines[-1], keys):
        lines.pop()
        left_out(path, len(lines) + 1, "the last row", "the file ends mid-line", kept=len(lines) - 1, unit="row")
    return lines


def _whole(header: str, row: str, keys: int) -> bool:
    names = next(csv.reader(io.StringIO(header)), [])
    fields = next(csv.reader(io.StringIO(row)), [])
    if len(fields) != len(names):
        return False
    try:
        [float(f) for f in fields[keys:]]
    except ValueError:
        return False
    return all(f.strip() for f in fields)


def _fields(path: Path, lines: list[str], width: int):
    """(line number, fields) of each non-blank row under the header; a row of another width is refused."""
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = next(csv.reader(io.StringIO(line)))
        if len(fields) != width:
            raise CosimError(f"{path}:{lineno}: {len(fields)} field(s) under a header of {width}; is the file intact?")
        yield lineno, fields


def _number(path: Path, lineno: int, name: str, raw: str) -> float:
    try:
        return float(raw)
    except ValueError:
        raise CosimError(f"{path}:{lineno}: {name} is '{raw}', not a number") from None
