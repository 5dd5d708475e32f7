"""nvprof / CUPTI metric and event summaries (``nvprof --metrics ...`` and ``--events ...``).

Two layouts, both with ``==PID==`` banner lines that are skipped:

* CSV (``--csv``)::

    "Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"
    "GK20A (0)","dct8x8(float*, int)",6,"inst_integer","Integer Instructions",1024,1024,1024

  and for events ``"Device","Kernel","Invocations","Event Name","Min","Max","Avg","Total"``.

* the text summary::

    Invocations  Metric Name  Metric Description  Min  Max  Avg
    Device "GK20A (0)"
        Kernel: dct8x8(float*, int)
              6  inst_integer  Integer Instructions  1024  1024  1024

Percent values (``shared_efficiency``, ``85.00%``) become fractions.  The result
has one row per (device, kernel) with the ``Avg`` of each metric: the per-launch
value the Tegra K1 model uses.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError
from cosim.readers._files import read_text

# The nvprof metrics and events the Tegra K1 model reads (Stokke et al., Section 4.2).
TEGRA_K1_METRICS = (
    "inst_integer",
    "inst_fp_32",
    "inst_fp_64",
    "inst_bit_convert",
    "inst_control",
    "inst_misc",
    "l2_subp0_total_read_sector_queries",
    "l1_global_load_hit",
    "l1_local_load_hit",
    "l1_local_store_hit",
    "l1_shared_load_transactions",
    "l1_shared_store_transactions",
    "shared_efficiency",
    "elapsed_cycles_sm",
)
_PERCENT = {"shared_efficiency"}
_BANNER = re.compile(r"^==\d+==")


def read_nvprof(path: str | Path, *, ignore_metrics: Iterable[str] = (), allow_unknown: bool = False) -> pd.DataFrame:
    """One row per (device, kernel): ``device``, ``kernel``, ``invocations`` and one column per metric.

    A metric outside :data:`TEGRA_K1_METRICS` is a :class:`CosimError` unless it
    is in ``ignore_metrics`` or ``allow_unknown`` is set (then it is kept as a column).
    Negative or non-numeric values, and a kernel reported twice for one metric
    on one device, are errors naming the line.
    """
    path = Path(path)
    text = read_text(path, missing_hint="give the file nvprof wrote with --metrics/--events (--csv or text)")
    lines = text.splitlines()
    body = [(i + 1, line) for i, line in enumerate(lines) if line.strip() and not _BANNER.match(line)]
    if not body:
        raise CosimError(f"{path}: no metric results; run nvprof with --metrics (and --events elapsed_cycles_sm)")
    records = _csv_records(path, body) if body[0][1].lstrip().startswith('"') else _text_records(path, body)
    ignore = set(ignore_metrics)
    rows: dict[tuple[str, str], dict] = {}
    seen: dict[tuple[str, str, str], int] = {}
    for lineno, device, kernel, invocations, metric, value in records:
        if metric in ignore:
            continue
        if metric not in TEGRA_K1_METRICS and not allow_unknown:
            raise CosimError(
                f"{path}:{lineno}: unknown metric '{metric}'; cosim reads {', '.join(TEGRA_K1_METRICS)} "
                f"(skip it with --ignore-metric {metric}, or keep every unknown metric with --keep-unknown)"
            )
        key = (device, kernel, metric)
        if key in seen:
            raise CosimError(f"{path}:{lineno}: metric '{metric}' of kernel '{kernel}' repeats line {seen[key]}")
        seen[key] = lineno
        row = rows.setdefault((device, kernel), {"device": device, "kernel": kernel, "invocations": invocations, "line": lineno})
        row["invocations"] = max(row["invocations"], invocations)
        row[metric] = _number(path, lineno, metric, value)
    if not rows:
        raise CosimError(f"{path}: every metric was ignored; nothing to model")
    out = pd.DataFrame(list(rows.values()))
    out.attrs["nvprof"] = {"path": str(path)}
    return out


def _number(path: Path, lineno: int, metric: str, text: str) -> float:
    raw = text.strip()
    percent = raw.endswith("%")
    try:
        value = float(raw.rstrip("%"))
    except ValueError:
        raise CosimError(f"{path}:{lineno}: metric '{metric}' value '{raw}' is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise CosimError(f"{path}:{lineno}: metric '{metric}' is {raw}; counts and ratios cannot be negative or nan")
    if percent or metric in _PERCENT and value > 1.0:
        value /= 100.0
    return value


def _csv_records(path: Path, body: list[tuple[int, str]]):
    header: list[str] | None = None
    index: dict[str, int] = {}
    for lineno, text in body:
        try:
            fields = next(csv.reader(io.StringIO(text)), [])
        except csv.Error as err:  # e.g. a field beyond the csv module's size limit: not an nvprof line
            raise CosimError(f"{path}:{lineno}: not a CSV line nvprof writes ({err}); is the file intact?") from None
        if "Metric Name" in fields or "Event Name" in fields:  # a metric or event block starts
            header = fields
            name_col = "Metric Name" if "Metric Name" in header else "Event Name"
            missing = [c for c in ("Device", "Kernel", "Invocations", "Avg") if c not in header]
            if missing:
                raise CosimError(f"{path}:{lineno}: nvprof --csv header lacks {', '.join(missing)}")
            index = {c: header.index(c) for c in ("Device", "Kernel", "Invocations", "Avg")} | {"name": header.index(name_col)}
            continue
        if header is None:
            raise CosimError(f"{path}:{lineno}: no nvprof --csv header (\"Device\",\"Kernel\",...) before the values")
        if len(fields) != len(header):
            raise CosimError(f"{path}:{lineno}: {len(fields)} fields, the header has {len(header)}; truncated line?")
        yield (lineno, fields[index["Device"]], fields[index["Kernel"]], _invocations(path, lineno, fields[index["Invocations"]]),
               fields[index["name"]], fields[index["Avg"]])


_DEVICE = re.compile(r'^\s*Device\s+"(?P<device>[^"]*)"\s*$')
_KERNEL = re.compile(r"^\s*Kernel:\s*(?P<kernel>.+?)\s*$")


def _text_records(path: Path, body: list[tuple[int, str]]):
    device = kernel = None
    columns = 6  # Invocations, Name, Description..., Min, Max, Avg
    for lineno, text in body:
        stripped = text.strip()
        if stripped.startswith("Invocations"):
            columns = 7 if stripped.split()[-1] == "Total" else 6  # event summaries end in Total
            continue
        if stripped.endswith("result:") or stripped.startswith("Profiling"):
            continue
        if m := _DEVICE.match(text):
            device, kernel = m["device"], None
            continue
        if m := _KERNEL.match(text):
            kernel = m["kernel"]
            continue
        parts = stripped.split()
        if kernel is None or device is None:
            raise CosimError(f"{path}:{lineno}: metric line before any 'Device \"...\"' and 'Kernel:' line; is this nvprof --metrics output?")
        if len(parts) < 4:
            raise CosimError(f"{path}:{lineno}: expected 'Invocations Name [Description] Min Max Avg', got '{stripped}'; truncated line?")
        avg = parts[-2] if columns == 7 else parts[-1]
        yield lineno, device, kernel, _invocations(path, lineno, parts[0]), parts[1], avg


def _invocations(path: Path, lineno: int, text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise CosimError(f"{path}:{lineno}: invocations '{text}' is not a whole number") from None
    if n <= 0 or n > 2**63 - 1:
        raise CosimError(f"{path}:{lineno}: invocations {n}; a profiled kernel runs at least once, and fewer than 2^63 times")
    return n
