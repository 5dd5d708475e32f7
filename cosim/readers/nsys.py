"""Nsight Systems ``nsys stats --format csv`` reports: ``cuda_gpu_trace`` and ``cuda_gpu_kern_sum``.

``cuda_gpu_trace`` (``gputrace`` before 2022): one row per kernel launch, memory copy and memset::

    Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name
    1254021367,406240,123,80,1,1,256,1,1,32,0.000,0.000,,,,,NVIDIA A100-SXM4-40GB (0),1,7,"vectorAdd(const float *, ...)"

``cuda_gpu_kern_sum`` (``gpukernsum``): one row per kernel name with its time over its launches.

Columns are read by their names, whatever their order and number (releases add some: ``GreenCtx``, ``Med``);
each unit in brackets (``(ns)``, ``(us)``, ``(MB)``, ``(MBps)``) is converted to SI.  nsys's MB are 10^6 B.
``Start`` is nanoseconds since the profiling session began (unless the report was asked for absolute times),
not the wall clock: lining it up with a power log is :mod:`cosim.timeline.measured_energy`'s job.
Progress lines nsys prints around the table (``Generating SQLite file``, ``Processing [...]``) are skipped.
"""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError
from cosim.readers._files import read_text
from cosim.readers._units import UnitError, time_ns
from cosim.readers.cutoff import ends_mid_line, left_out
from cosim.readers.nvprof_trace import exact_times

_TIME = {"ns": 1e-9, "nsec": 1e-9, "us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1.0, "sec": 1.0}
_SIZE = {"B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30}
_RATE = {"MBps": 1e6, "MB/s": 1e6, "GBps": 1e9, "GB/s": 1e9, "KBps": 1e3, "KB/s": 1e3, "Bps": 1.0, "B/s": 1.0}
_COLUMN = re.compile(r"^(?P<name>.*?)\s*(?:\((?P<unit>[^)]*)\))?$")
#: nsys column (without its unit) -> (cosim's name, the unit a bare column is in)
TRACE_COLUMNS = {
    "Start": ("start_s", "ns"),
    "Duration": ("duration_s", "ns"),
    "CorrId": ("correlation", ""),
    "GrdX": ("grid_x", ""),
    "GrdY": ("grid_y", ""),
    "GrdZ": ("grid_z", ""),
    "BlkX": ("block_x", ""),
    "BlkY": ("block_y", ""),
    "BlkZ": ("block_z", ""),
    "Reg/Trd": ("registers_per_thread", ""),
    "StcSMem": ("static_smem_b", "MB"),
    "DymSMem": ("dynamic_smem_b", "MB"),
    "Bytes": ("size_b", "MB"),
    "Throughput": ("throughput_b_per_s", "MBps"),
    "Thru": ("throughput_b_per_s", "MBps"),
    "SrcMemKd": ("src_mem", None),
    "DstMemKd": ("dst_mem", None),
    "Device": ("device", None),
    "Ctx": ("context", None),
    "GreenCtx": ("green_context", None),
    "Strm": ("stream", None),
    "Name": ("name", None),
}
SUMMARY_COLUMNS = {
    "Time": ("time_fraction", "%"),
    "Time(%)": ("time_fraction", "%"),
    "Total Time": ("time_s", "ns"),
    "Instances": ("calls", ""),
    "Avg": ("avg_s", "ns"),
    "Average": ("avg_s", "ns"),
    "Med": ("med_s", "ns"),
    "Median": ("med_s", "ns"),
    "Min": ("min_s", "ns"),
    "Minimum": ("min_s", "ns"),
    "Max": ("max_s", "ns"),
    "Maximum": ("max_s", "ns"),
    "StdDev": ("stddev_s", "ns"),
    "Name": ("name", None),
}
UNITS = {
    "start_s": "s",
    "duration_s": "s",
    "end_s": "s",
    "size_b": "B",
    "throughput_b_per_s": "B/s",
    "static_smem_b": "B",
    "dynamic_smem_b": "B",
    "registers_per_thread": "count",
    **{f"{a}_{x}": "count" for a in ("grid", "block") for x in "xyz"},
}
SUMMARY_UNITS = {
    "time_fraction": "fraction",
    "time_s": "s",
    "calls": "count",
    **{f"{s}_s": "s" for s in ("avg", "med", "min", "max", "stddev")},
}


def nsys_layout(head: str) -> str | None:
    """``"gpu-trace"`` or ``"kern-sum"``: which nsys CSV report a file's first characters hold; None if neither."""
    for line in head.splitlines()[:50]:
        names = [_split(f)[0] for f in _csv(line)]
        if names and names[-1] == "Name" and names[0] == "Start" and "Duration" in names and "CorrId" in names:
            return "gpu-trace"
        if names and names[-1] == "Name" and names[0] in ("Time", "Time(%)") and "Total Time" in names and "Instances" in names:
            return "kern-sum"
    return None


def _csv(line: str) -> list[str]:
    try:
        return next(csv.reader(io.StringIO(line)), [])
    except csv.Error:
        return []


def _split(column: str) -> tuple[str, str | None]:
    m = _COLUMN.match(column.strip())
    assert m is not None  # the pattern matches any text
    return m["name"], m["unit"]


def read_nsys_trace(path: str | Path) -> pd.DataFrame:
    """One row per GPU activity of ``nsys stats --report cuda_gpu_trace --format csv``, in start order, with the
    columns :func:`cosim.readers.nvprof_trace.read_gpu_trace` gives (``kind``, ``name``, ``kernel``, ``launch``,
    ``start_s``, ``duration_s``, ``end_s`` [s], ``size_b`` [B], ``throughput_b_per_s`` [B/s], ``device``,
    ``stream``, ``correlation`` ...), so it serves wherever an nvprof gpu-trace does."""
    path = Path(path)
    rows = _rows(path, "gpu-trace", TRACE_COLUMNS, "nsys stats --report cuda_gpu_trace --format csv")
    for row in rows:
        name = row.get("name", "")
        row["kernel"] = name
        low = name.lower()
        row["kind"] = "memcpy" if "memcpy" in low else "memset" if "memset" in low else "other" if name.startswith("[") else "kernel"
        if math.isnan(row.get("duration_s", math.nan)) or math.isnan(row.get("start_s", math.nan)):
            raise CosimError(f"{path}:{row['line']}: a row without Start or Duration; is the report intact?")
    out = exact_times(pd.DataFrame(rows).drop(columns=["start_s", "duration_s"]))  # seconds from the exact ns
    out["launch"] = out.groupby("kernel").cumcount()
    out.attrs["nvprof"] = {"path": str(path), "layout": "gpu-trace", "tool": "nsys"}
    return out


def read_nsys_kern_sum(path: str | Path) -> pd.DataFrame:
    """One row per kernel name of ``nsys stats --report cuda_gpu_kern_sum --format csv``: ``time_fraction`` (0-1),
    ``time_s``, ``calls``, ``avg_s``, ``med_s``, ``min_s``, ``max_s``, ``stddev_s`` [s] (those the report has)."""
    path = Path(path)
    rows = _rows(path, "kern-sum", SUMMARY_COLUMNS, "nsys stats --report cuda_gpu_kern_sum --format csv")
    for row in rows:
        row["kernel"] = row.get("name", "")
    out = pd.DataFrame(rows)
    out.attrs["nvprof"] = {"path": str(path), "layout": "gpu-summary", "tool": "nsys"}
    return out


def _rows(path: Path, layout: str, columns: dict[str, tuple[str, str | None]], what: str) -> list[dict]:
    text = read_text(path, missing_hint=f"give the file {what} wrote", empty_hint=f"give the output of {what}")
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if nsys_layout(line) == layout), None)
    if start is None:
        raise CosimError(f"{path}: no {what} header; run nsys stats with --format csv")
    header = [_split(c) for c in _csv(lines[start])]
    unknown = [n for n, _ in header if n not in columns]
    if unknown:
        raise CosimError(f"{path}:{start + 1}: nsys column '{unknown[0]}' cosim does not know; is this an nsys {layout} report?")
    rows: list[dict] = []
    for lineno, line in enumerate(lines[start + 1 :], start=start + 2):
        if not line.strip():
            if rows:
                break  # nsys separates the reports it prints by blank lines: this one has ended
            continue
        fields = _csv(line)
        if len(fields) != len(header):
            if lineno == len(lines) and ends_mid_line(text):
                left_out(path, lineno, "the last row", "the file ends mid-line", kept=len(rows), unit="row")
                break
            raise CosimError(f"{path}:{lineno}: {len(fields)} field(s) under a header of {len(header)}; is the report intact?")
        row: dict = {"line": lineno}
        for (name, unit), raw in zip(header, fields):
            key, default = columns[name]
            row[key] = raw if default is None else _number(path, lineno, name, raw, unit if unit is not None else default)
            if key in ("start_s", "duration_s") and row[key] == row[key]:  # the printed digits, exactly
                row[key[:-2] + "_ns"] = _ns(path, lineno, name, raw, unit if unit is not None else default or "ns")
        rows.append(row)
    else:
        if rows and ends_mid_line(text):  # a cut row can still have every field: its last number is short
            left_out(path, rows[-1]["line"], "the last row", "the file ends mid-line", kept=len(rows) - 1, unit="row")
            rows.pop()
    if not rows:
        raise CosimError(f"{path}:{start + 1}: the nsys {layout} report has a header but no rows")
    return rows


def _ns(path: Path, lineno: int, column: str, raw: str, unit: str) -> int:
    try:
        return time_ns(raw.strip().replace(",", ""), unit=unit)
    except UnitError:
        raise CosimError(f"{path}:{lineno}: {column} is '{raw}', not a time in {unit}") from None


def _number(path: Path, lineno: int, column: str, raw: str, unit: str) -> float:
    text = raw.strip().replace(",", "")
    if text in ("", "-", "N/A"):
        return math.nan
    if unit in _TIME:
        scale = _TIME[unit]
    elif unit in _SIZE:
        scale = _SIZE[unit]
    elif unit in _RATE:
        scale = _RATE[unit]
    elif unit == "%":
        scale = 0.01
    elif unit == "":
        scale = 1.0
    else:
        raise CosimError(f"{path}:{lineno}: column '{column} ({unit})' in a unit cosim does not know")
    try:
        value = float(text) * scale
    except ValueError:
        raise CosimError(f"{path}:{lineno}: {column} is '{raw}', not a number") from None
    if not math.isfinite(value) or value < 0:
        raise CosimError(f"{path}:{lineno}: {column} is {raw}; nsys's times, sizes and counts are finite and >= 0")
    return value
