"""nvprof ``--print-gpu-trace`` and ``--print-gpu-summary`` (the default summary), text and ``--csv``.

The gpu-trace is the real timeline: one row per kernel launch, memory copy and
memset, with its start and duration::

       Start  Duration     Grid Size   Block Size  Regs*  SSMem*  DSMem*      Size  Throughput  ...  Device  Context  Stream  Name
    182.96ms  6.4049ms             -            -      -       -       -  38.147MB  5.8163GB/s  ...  GeForce GT 650M  1  7  [CUDA memcpy HtoD]
    195.89ms  3.4072ms   (39063 1 1)    (256 1 1)      8      0B      0B         -           -  ...  GeForce GT 650M  1  7  vectorAdd(float const *, ...) [112]

Text columns are right-aligned to the header's words (the device name may hold
spaces), so values are cut at the header's column ends.  ``--csv`` output has
a units row under the header (``ms,us,,,,,,,,KB,B,KB,GB/s,,,,,,,``) and bare
numbers.  Sizes and throughputs are binary (see :mod:`cosim.readers._units`).
"""

from __future__ import annotations

import csv
import io
import math
import re
import warnings
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError, CosimWarning
from cosim.readers._files import read_text
from cosim.readers._units import UnitError, quantity, time_ns, time_s
from cosim.readers.cutoff import ends_mid_line, left_out
from cosim.readers.nvprof import _VALUE, BANNER, SkippedLines

# nvprof column -> (canonical name, what a bare number in it means when no units row says)
TRACE_COLUMNS = {
    "Start": "start_s",
    "Duration": "duration_s",
    "Grid Size": "grid",
    "Block Size": "block",
    "Grid X": "grid_x",
    "Grid Y": "grid_y",
    "Grid Z": "grid_z",
    "Block X": "block_x",
    "Block Y": "block_y",
    "Block Z": "block_z",
    "Regs*": "registers_per_thread",
    "Registers Per Thread": "registers_per_thread",
    "SSMem*": "static_smem_b",
    "Static SMem": "static_smem_b",
    "DSMem*": "dynamic_smem_b",
    "Dynamic SMem": "dynamic_smem_b",
    "Size": "size_b",
    "Throughput": "throughput_b_per_s",
    "SrcMemType": "src_mem",
    "DstMemType": "dst_mem",
    "Device": "device",
    "Context": "context",
    "Stream": "stream",
    "Name": "name",
    "Correlation_ID": "correlation",
    "Unified Memory": "unified_memory",
    "Virtual Address": "virtual_address",
}
_NUMERIC = {
    "start_s",
    "duration_s",
    "registers_per_thread",
    "static_smem_b",
    "dynamic_smem_b",
    "size_b",
    "throughput_b_per_s",
    "grid_x",
    "grid_y",
    "grid_z",
    "block_x",
    "block_y",
    "block_z",
}
_LEGEND = re.compile(r"^(?:Regs|SSMem|DSMem|SrcMemType|DstMemType|Unified Memory|Virtual Address|Src Dev|Dst Dev)\s*:")
_CORRELATION = re.compile(r"^(?P<name>.*?)\s*\[(?P<id>\d+)\]$")
_SUMMARY_LINE = re.compile(
    rf"^\s*(?:(?P<type>GPU activities|API calls|OpenACC \(excl\)|OpenMP \(excl\)):)?\s*(?P<pct>[\d.]+%)\s+(?P<time>{_VALUE})\s+"
    rf"(?P<calls>\d+)\s+(?P<avg>{_VALUE})\s+(?P<min>{_VALUE})\s+(?P<max>{_VALUE})\s+(?P<name>\S.*?)\s*$"
)


def nvprof_layout(head: str) -> str | None:
    """``"metrics"``, ``"gpu-trace"`` or ``"gpu-summary"``: what an nvprof log holds, from the headers in its first
    characters; None if not nvprof's."""
    if not re.search(r"^(?:==\d+==|========)", head, re.MULTILINE):
        return None
    if re.search(r"Metric Name|Event Name|^\s*Invocations\s", head, re.MULTILINE):
        return "metrics"
    if re.search(r'^\s*"?Start"?\s*,?\s*"?Duration', head, re.MULTILINE):
        return "gpu-trace"
    if "Time(%)" in head:
        return "gpu-summary"
    return None


def read_gpu_trace(path: str | Path) -> pd.DataFrame:
    """One row per GPU activity, in start order: ``kind`` (kernel, memcpy, memset), ``name``, ``kernel``, ``launch``,
    ``start_s`` [s], ``duration_s`` [s], ``end_s`` [s], ``size_b`` [B], ``throughput_b_per_s`` [B/s], device, stream, ...

    ``launch`` numbers each kernel's launches from 0.  Unified Memory rows are kept (kind ``unified-memory``):
    a migration's bytes in ``size_b`` [B], a GPU page-fault group's fault count in ``page_faults``; the CPU's
    page faults have no duration on the GPU's timeline and are left out with a warning giving their count.
    A trace section inside a ``--metrics`` log is read too; the metric sections are passed over.
    """
    path = Path(path)
    lines, cut = _lines(path, "nvprof --print-gpu-trace")
    skipped = SkippedLines(path)
    rows = []
    header: list[str] | None = None
    ends: list[int] = []
    units: list[str] | None = None
    in_results = False
    cpu_faults: list[int] = []
    for lineno, text in enumerate(lines, start=1):
        if m := BANNER.match(text):
            # metric and event results (a --metrics log that also holds the trace) are not trace rows
            in_results = _in_results(m["text"], in_results) and not m["text"].startswith(("Metric result", "Event result"))
            header = None
            continue
        if not in_results or not text.strip():
            continue
        if text.lstrip().startswith('"Start"'):
            header, units = next(csv.reader(io.StringIO(text))), None
            continue
        if header is not None and units is None:
            if not _is_units_row(text, header):
                raise CosimError(f"{path}:{lineno}: expected nvprof's units row (like ms,us,,,...) under the --csv header")
            units = next(csv.reader(io.StringIO(text)))
            continue
        if re.match(r"^\s*Start\s+Duration\s", text):
            header, units = re.split(r"\s{2,}", text.strip()), []
            ends = [m.end() for m in re.finditer(r"\S+(?: \S+)*", text)]
            continue
        if header is None:
            skipped.add(lineno)
            continue
        if _LEGEND.match(text):  # nvprof's own notes under the text trace
            continue
        fields = _csv_row(path, lineno, text, header) if units else _text_row(text, header, ends)
        row = _activity(path, lineno, fields, header, units) if fields else None
        if row is None:
            skipped.add(lineno)
        elif not math.isnan(row["duration_s"]):
            rows.append(row)
        elif "CPU page fault" in row["name"]:
            cpu_faults.append(lineno)
        else:
            skipped.add(lineno)
    if cpu_faults:
        warnings.warn(
            CosimWarning(
                f"{path}:{cpu_faults[0]}: {len(cpu_faults)} Unified Memory CPU page-fault row(s) left out: they have no "
                "duration on the GPU's timeline (the GPU's page faults and the migrations are kept)"
            ),
            stacklevel=2,
        )
    if cut:
        rows = _without_cut_row(path, lines, rows, skipped, "activity row")
    skipped.warn()
    if not rows:
        raise CosimError(f"{path}: no GPU activity rows; give the output of nvprof --print-gpu-trace (text or --csv)")
    out = exact_times(pd.DataFrame(rows))
    out["launch"] = out.groupby("kernel").cumcount()
    out.attrs["nvprof"] = {"path": str(path), "layout": "gpu-trace"}
    return out


def exact_times(rows: pd.DataFrame) -> pd.DataFrame:
    """A trace's rows in start order with its times as integers on its own clock, ``start_ns``, ``duration_ns``,
    ``end_ns`` [ns], and in seconds, ``start_s``, ``duration_s``, ``end_s`` [s]: each the float nearest the printed
    value (given by the reader where the trace prints finer than a ns, nvprof's ``119.21ns``; else from the ns).  A
    duration is the trace's own, never a difference of two rounded times."""
    out = rows.astype({"start_ns": "int64", "duration_ns": "int64"})
    out["end_ns"] = out["start_ns"] + out["duration_ns"]
    out = out.sort_values(["start_ns", "line"], kind="stable").reset_index(drop=True)
    given = "start_s" in out and "duration_s" in out
    for what in ("start", "duration"):
        if not given:
            out[f"{what}_s"] = out[f"{what}_ns"] / 1e9
    out["end_s"] = out["start_s"] + out["duration_s"] if given else out["end_ns"] / 1e9
    return out


def read_gpu_summary(path: str | Path) -> pd.DataFrame:
    """One row per GPU activity name of ``--print-gpu-summary``: ``time_fraction`` (0-1), ``time_s``, ``calls``,
    ``avg_s``, ``min_s``, ``max_s`` [s].  API-call rows are left out."""
    path = Path(path)
    lines, cut = _lines(path, "nvprof's summary (--print-gpu-summary, or nvprof with no options)")
    skipped = SkippedLines(path)
    rows, kind, header, units, in_results = [], None, None, None, False
    for lineno, text in enumerate(lines, start=1):
        if m := BANNER.match(text):
            in_results = _in_results(m["text"], in_results)
            if m["text"].strip().startswith("API calls"):  # older nvprof: a banner, not a Type column, opens the API rows
                kind = "API calls"
            continue
        if not in_results or not text.strip():
            continue
        if text.lstrip().startswith('"Type"') or text.lstrip().startswith('"Time(%)"'):
            header, units = next(csv.reader(io.StringIO(text))), None
            continue
        if header is not None and units is None:
            units = next(csv.reader(io.StringIO(text)))
            continue
        if header is not None:
            fields = _csv_row(path, lineno, text, header)
            if fields is None:
                skipped.add(lineno)
                continue
            f = dict(zip(header, fields))
            kind = f.get("Type", "GPU activities") or kind
            if kind == "GPU activities":
                u = dict(zip(header, units or []))
                rows.append(
                    _summary_row(
                        path,
                        lineno,
                        f["Name"],
                        f["Time(%)"] + "%",
                        f["Calls"],
                        *(f[c] + u.get(c, "") for c in ("Time", "Avg", "Min", "Max")),
                    )
                )
            continue
        if re.match(r"^\s*(?:Type\s+)?Time\(%\)", text):
            continue
        m = _SUMMARY_LINE.match(text)
        if not m:
            skipped.add(lineno)
            continue
        kind = m["type"] or kind or "GPU activities"
        if kind == "GPU activities":
            rows.append(_summary_row(path, lineno, m["name"], m["pct"], m["calls"], m["time"], m["avg"], m["min"], m["max"]))
    if cut:
        rows = _without_cut_row(path, lines, rows, skipped, "activity row")
    skipped.warn()
    if not rows:
        raise CosimError(f"{path}: no 'GPU activities' rows; give nvprof's summary output (text or --csv)")
    out = pd.DataFrame(rows)
    out.attrs["nvprof"] = {"path": str(path), "layout": "gpu-summary"}
    return out


def _in_results(banner: str, in_results: bool) -> bool:
    """Whether the lines after an ``==PID==`` banner are nvprof's results: a ``... result:`` banner opens
    them, a new session (``NVPROF is profiling process``) closes them, other banners leave them as they are."""
    return banner.rstrip().endswith("result:") or in_results and "is profiling process" not in banner


def _lines(path: Path, what: str) -> tuple[list[str], bool]:
    """The file's lines, and whether it ends mid-line (cut off)."""
    text = read_text(path, missing_hint=f"give the file nvprof wrote ({what})", empty_hint=f"give the output of {what}")
    return text.splitlines(), ends_mid_line(text)


def _without_cut_row(path: Path, lines: list[str], rows: list[dict], skipped: SkippedLines, what: str) -> list[dict]:
    """The rows without the one on the file's last line when the file ends inside it (a cut time reads shorter)."""
    end = len(lines)
    if end in skipped.lines:
        skipped.lines.discard(end)
        skipped.count -= 1
        skipped.first = min(skipped.lines, default=0)
        left_out(path, end, "the last row", "the file ends mid-line", kept=len(rows), unit=what)
        return rows
    if rows and rows[-1]["line"] == end:
        left_out(path, end, f"the last row ('{rows[-1]['name'][:60]}')", "the file ends mid-line", kept=len(rows) - 1, unit=what)
        return rows[:-1]
    return rows


def _is_units_row(text: str, header: list[str]) -> bool:
    fields = next(csv.reader(io.StringIO(text)), [])
    return len(fields) == len(header) and all(re.fullmatch(r"[A-Za-z%/]*", f) for f in fields)


def _csv_row(path: Path, lineno: int, text: str, header: list[str]) -> list[str] | None:
    try:
        fields = next(csv.reader(io.StringIO(text)), [])
    except csv.Error:
        return None
    return fields if len(fields) == len(header) else None


def _text_row(text: str, header: list[str], ends: list[int]) -> list[str] | None:
    if len(ends) < 3 or len(text) < ends[-2]:
        return None
    cuts = [0, *ends[:-1]]
    fields = [text[a:b].strip() for a, b in zip(cuts, cuts[1:])]
    fields.append(text[ends[-2] :].strip())  # Name: left-aligned, runs to the end
    return fields if fields[0] and fields[-1] else None


def _activity(path: Path, lineno: int, fields: list[str], header: list[str], units: list[str] | None) -> dict | None:
    row: dict = {"line": lineno}
    for i, (column, raw) in enumerate(zip(header, fields)):
        name = TRACE_COLUMNS.get(column, column)
        if name not in _NUMERIC:
            row[name] = raw
            continue
        if raw in ("", "-"):
            row[name] = math.nan
            continue
        try:
            if name in ("start_s", "duration_s"):  # the trace's own digits, exactly: durations are never float differences
                row[name] = time_s(raw, unit=units[i] if units else "")
                row[name[:-2] + "_ns"] = time_ns(raw, unit=units[i] if units else "")
            else:
                row[name] = quantity(raw, unit=units[i] if units else "")[0]
        except (UnitError, IndexError):
            return None
    if not isinstance(row.get("start_s"), float) or math.isnan(row["start_s"]):
        return None
    name = row.get("name", "")
    if m := _CORRELATION.match(name):  # the text trace appends the correlation id: "vectorAdd(...) [112]"
        name, row["correlation"] = m["name"], int(m["id"])
    row["name"] = row["kernel"] = name
    row["kind"] = "memcpy" if "memcpy" in name else "memset" if "memset" in name else "other" if name.startswith("[") else "kernel"
    if name.startswith("[Unified Memory"):
        row["kind"] = "unified-memory"
        _unified_memory(path, lineno, row)
    for neg in ("start_s", "duration_s", "size_b"):
        if row.get(neg, 0) < 0:
            raise CosimError(f"{path}:{lineno}: {neg} is negative; is the trace intact?")
    return row


def _unified_memory(path: Path, lineno: int, row: dict) -> None:
    """A Unified Memory row's ``Unified Memory`` column: a migration's size (``256.000000KB``) -> ``size_b`` [B],
    a GPU page-fault group's fault count -> ``page_faults``; the CPU's (``PC 0x...``) stay as written."""
    raw = str(row.pop("unified_memory", "")).strip()
    if raw in ("", "-") or raw.startswith("PC "):
        return
    try:
        value, unit = quantity(raw)
    except UnitError:
        raise CosimError(f"{path}:{lineno}: Unified Memory '{raw}' is not a size or a count nvprof writes") from None
    if unit == "B":
        row["size_b"] = value
    else:
        row["page_faults"] = value


def _summary_row(path: Path, lineno: int, name: str, pct: str, calls: str, *times: str) -> dict:
    try:
        fraction = quantity(pct)[0]
        seconds = [quantity(t)[0] for t in times]
        n = int(calls)
    except (UnitError, ValueError) as err:
        raise CosimError(f"{path}:{lineno}: not a summary row nvprof writes ({err})") from None
    return {
        "line": lineno,
        "name": name,
        "kernel": name,
        "time_fraction": fraction,
        "time_s": seconds[0],
        "calls": n,
        "avg_s": seconds[1],
        "min_s": seconds[2],
        "max_s": seconds[3],
    }
