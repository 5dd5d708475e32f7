"""Nsight Compute ``ncu --csv`` output: the details page (default) and the raw page (``--page raw``).

Details: one row per (launch, metric)::

    "ID","Process ID",...,"Kernel Name",...,"Section Name","Metric Name","Metric Unit","Metric Value"
    "0","41873",...,"vectorAdd(...)",...,"GPU Speed Of Light Throughput","Duration","usecond","4.86"

Raw: one row per launch, a column per metric, and a units row under the header.
``==PROF==`` lines and the program's output before the table are skipped.
Values may carry thousands separators (``3,718``); ``n/a`` is kept as missing.
Units are decimal (:func:`cosim.readers._units.ncu_unit`).
"""

from __future__ import annotations

import csv
import io
import math
import tomllib
from importlib import resources
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError
from cosim.readers._files import read_text
from cosim.readers._units import UnitError, ncu_quantity
from cosim.readers.cutoff import ends_mid_line, left_out
from cosim.readers.nvprof import SkippedLines

_ID_COLUMNS = (
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Kernel Time",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
    "device__attribute_display_name",
)


def looks_like_ncu(head: str) -> bool:
    """Whether a file's first characters are ``ncu --csv`` output (its table header names ``"ID"`` and ``"Kernel Name"``)."""
    return '"ID","Process ID"' in head and '"Kernel Name"' in head


def read_ncu(path: str | Path) -> pd.DataFrame:
    """Long table, one row per (launch, metric): ``launch`` (ncu's ID), ``kernel``, ``device``, ``section``,
    ``metric`` (ncu's name), ``value`` (SI), ``unit``, ``ncu_unit`` (as printed) and ``line``."""
    path = Path(path)
    text = read_text(path, missing_hint="give the file ncu --csv wrote (details or --page raw)", empty_hint="give the output of ncu --csv")
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        raise CosimError(f'{path}: no ncu --csv table (a header starting "ID","Process ID"); run ncu with --csv')
    header = _fields(path, start + 1, lines[start])
    skipped = SkippedLines(path, tool="ncu")
    rows = _details(path, lines, start, header, skipped) if "Metric Name" in header else _raw(path, lines, start, header, skipped)
    if rows:
        rows = _without_cut_launch(path, text, lines, rows, skipped)
    skipped.warn()
    if not rows:
        raise CosimError(f"{path}:{start + 1}: the ncu table has a header but no rows")
    out = pd.DataFrame(rows)
    out.attrs["ncu"] = {"path": str(path), "page": "details" if "Metric Name" in header else "raw"}
    return out


def _without_cut_launch(path: Path, text: str, lines: list[str], rows: list[dict], skipped: SkippedLines) -> list[dict]:
    """The rows without the last launch's when the table ends inside it: mid-line, on a damaged line, or (details
    page) with fewer metrics than the other launches (ncu reports the same sections for every launch)."""
    end = max(i for i, line in enumerate(lines, start=1) if line.strip())
    last = rows[-1]
    if last["line"] != end and end not in skipped.lines:
        return rows  # the table is followed by more output: it was written whole
    metrics: dict[int, list[tuple[str, str]]] = {}
    for r in rows:
        if r["kernel"] == last["kernel"]:  # launches of one kernel: the same sections, so the same metrics in order
            metrics.setdefault(r["launch"], []).append((r["section"], r["metric"]))
    mine = metrics[last["launch"]]
    fewer = any(len(other) > len(mine) and other[: len(mine)] == mine for other in metrics.values())
    launches = len({r["launch"] for r in rows})
    damaged = end in skipped.lines
    if damaged:
        skipped.lines.discard(end)  # reported as cut, not as a damaged line
        skipped.count -= 1
        skipped.first = min(skipped.lines, default=0)
        cut_id = next(csv.reader(io.StringIO(lines[end - 1])), [""])[0]
        if not fewer and cut_id != str(last["launch"]):  # the cut line began another launch: every read one is whole
            left_out(path, end, "the table's last line", "the table ends inside it", kept=launches, unit="launch")
            return rows
    if ends_mid_line(text) or damaged:
        why = "the table ends mid-line"
    elif fewer:
        why = f"its rows stop after {len(mine)} of the {max(len(v) for v in metrics.values())} metrics its other launches have"
    else:
        return rows
    kept = [r for r in rows if r["launch"] != last["launch"]]
    left_out(path, last["line"], f"kernel '{last['kernel']}' (launch {last['launch']})", why, kept=launches - 1, unit="launch")
    return kept


def ncu_to_nvprof() -> dict[str, dict]:
    """The shipped map from nvprof metric names to Nsight Compute ones (``cosim/counters/maps/ncu-to-nvprof.toml``)."""
    text = resources.files("cosim.counters").joinpath("maps/ncu-to-nvprof.toml").read_text()
    return tomllib.loads(text)["nvprof"]


def _fields(path: Path, lineno: int, text: str) -> list[str]:
    try:
        return next(csv.reader(io.StringIO(text)), [])
    except csv.Error as err:
        raise CosimError(f"{path}:{lineno}: not a CSV line ncu writes ({err}); is the file intact?") from None


def _value(path: Path, lineno: int, metric: str, raw: str, unit: str) -> tuple[float, str]:
    try:
        value, si = ncu_quantity(raw, unit)
    except UnitError:  # ncu has text-valued metrics too (cache configuration, names): kept as missing numbers
        return math.nan, unit or "text"
    if math.isinf(value) or value < 0 and unit != "%":
        raise CosimError(f"{path}:{lineno}: metric '{metric}' is {raw}; not a value ncu reports")
    return value, si


def _details(path: Path, lines: list[str], start: int, header: list[str], skipped: SkippedLines) -> list[dict]:
    needed = ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")
    missing = [c for c in needed if c not in header]
    if missing:
        raise CosimError(f"{path}:{start + 1}: ncu --csv header lacks {', '.join(missing)}")
    rows = []
    width = 1 + max(header.index(c) for c in needed)  # recent ncu ends metric rows before its rule columns
    for lineno, fields in _table_rows(path, lines, start + 1, header, skipped, width=width):
        f = dict(zip(header, fields))
        if not f["Metric Name"].strip():  # ncu 2023+ adds rows for its rules' advice ("Rule Name", ...): no metric
            continue
        value, unit = _value(path, lineno, f["Metric Name"], f["Metric Value"], f["Metric Unit"])
        rows.append(
            {
                "line": lineno,
                "launch": _launch(path, lineno, f["ID"]),
                "kernel": f["Kernel Name"],
                "device": f.get("Device", ""),
                "capability": f.get("CC", ""),
                "section": f.get("Section Name", ""),
                "metric": f["Metric Name"],
                "value": value,
                "unit": unit,
                "ncu_unit": f["Metric Unit"],
            }
        )
    return rows


def _raw(path: Path, lines: list[str], start: int, header: list[str], skipped: SkippedLines) -> list[dict]:
    if start + 1 >= len(lines):
        return []
    units = _fields(path, start + 2, lines[start + 1])
    if len(units) != len(header) or any(units[i] for i, c in enumerate(header) if c in ("ID", "Kernel Name")):
        raise CosimError(f"{path}:{start + 2}: expected ncu's units row under the --page raw header")
    metrics = [i for i, c in enumerate(header) if c not in _ID_COLUMNS]
    rows = []
    for lineno, fields in _table_rows(path, lines, start + 2, header, skipped, width=len(header)):
        f = dict(zip(header, fields))
        device = f.get("device__attribute_display_name") or f.get("Device", "")
        for i in metrics:
            value, unit = _value(path, lineno, header[i], fields[i], units[i])
            rows.append(
                {
                    "line": lineno,
                    "launch": _launch(path, lineno, f["ID"]),
                    "kernel": f["Kernel Name"],
                    "device": device,
                    "capability": f.get("CC", ""),
                    "section": "",
                    "metric": header[i],
                    "value": value,
                    "unit": unit,
                    "ncu_unit": units[i],
                }
            )
    return rows


def _table_rows(path: Path, lines: list[str], first: int, header: list[str], skipped: SkippedLines, *, width: int):
    """``(line number, fields)`` for each table line from index ``first``, its fields read by the header's names:
    a row may stop after the first ``width`` columns (ncu 2024+ leaves the rule columns off its metric rows, and
    ends them with a comma), and reads as empty the columns it lacks.  ``==PROF==`` lines and the program's
    output between them are passed over; a row shorter than ``width`` or longer than the header (once a trailing
    empty field is dropped) is counted as skipped."""
    for lineno, text in enumerate(lines[first:], start=first + 1):
        if not text.strip() or text.startswith("==PROF=="):
            continue
        fields = _fields(path, lineno, text)
        if len(fields) > len(header) and fields[-1] == "":
            fields = fields[:-1]
        if not width <= len(fields) <= len(header):
            skipped.add(lineno)
            continue
        yield lineno, fields + [""] * (len(header) - len(fields))


def _launch(path: Path, lineno: int, text: str) -> int:
    try:
        launch = int(text)
    except ValueError:
        launch = -1
    if not 0 <= launch < 2**63:
        raise CosimError(f"{path}:{lineno}: launch ID '{text}' is not a whole number from 0 to 2^63; is the file intact?")
    return launch


def nvprof_metrics_from_ncu(long: pd.DataFrame) -> pd.DataFrame:
    """ncu rows -> the table :func:`cosim.readers.nvprof.read_nvprof` returns (one row per kernel, nvprof names,
    the mean over its launches), through :func:`ncu_to_nvprof`.  ``attrs['ncu']['inexact']`` names the metrics
    taken through a row that is not one-to-one."""
    mapping = ncu_to_nvprof()
    to_nvprof = {spec["ncu"]: name for name, spec in mapping.items()}
    known = long[long["metric"].isin(to_nvprof)].copy()
    path = long.attrs.get("ncu", {}).get("path", "ncu file")
    if known.empty:
        raise CosimError(
            f"{path}: none of the metrics cosim's GPU models read; collect them with ncu --metrics "
            f"{','.join(spec['ncu'] for spec in list(mapping.values())[:6])},..."
        )
    known["nvprof"] = known["metric"].map(to_nvprof)
    wide = known.pivot_table(index=["device", "kernel"], columns="nvprof", values="value", aggfunc="mean").reset_index()
    launches = known.groupby(["device", "kernel"])["launch"].nunique().rename("invocations").reset_index()
    lines = known.groupby(["device", "kernel"])["line"].min().reset_index()
    out = launches.merge(lines, on=["device", "kernel"]).merge(wide, on=["device", "kernel"])
    out.columns.name = None
    out.attrs["nvprof"] = {"path": path}
    capabilities = sorted(c for c in long.get("capability", pd.Series(dtype=str)).unique() if c)
    out.attrs["ncu"] = {
        "path": path,
        "capability": capabilities[0] if capabilities else None,
        "inexact": sorted(n for n in known["nvprof"].unique() if not mapping[n]["exact"]),
    }
    return out
