"""nvprof / CUPTI metric and event summaries (``nvprof --metrics ...`` and ``--events ...``), as people save them.

Two layouts, text and ``--csv``::

    ==2817== Metric result:
    Invocations   Metric Name   Metric Description   Min   Max   Avg
    Device "GK20A (0)"
        Kernel: dct8x8(float*, int)
              6   inst_integer   Integer Instructions   1024   1024   1024

    "Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"
    "GK20A (0)","dct8x8(float*, int)",6,"inst_integer","Integer Instructions",1024,1024,1024

(events have no description and end in ``Total``).  What real logs add, and
what this reader does with it:

* the program's own output, before, between and after nvprof's: lines outside
  a ``... result:`` section are skipped silently; an unreadable line inside one
  is skipped with one warning that names it;
* several sessions (``==PID== NVPROF is profiling process``) of the same
  program, each with other metrics: joined per (device, kernel); a metric that
  two sessions both report keeps the first, with a warning;
* values with units (``31.425GB/s``, ``99.53%``, ``Low (2)``): SI base units,
  see :mod:`cosim.readers._units`.
"""

from __future__ import annotations

import csv
import io
import math
import re
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError, CosimWarning
from cosim.readers._files import read_text
from cosim.readers._units import UnitError, quantity
from cosim.readers.cutoff import ends_mid_line, left_out

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
_PERCENT = {"shared_efficiency"}  # printed without '%' by some nvprof versions

BANNER = re.compile(r"^(?:==\d+==|========)\s?(?P<text>.*)$")
_VALUE = r"(?:(?:Idle|Low|Mid|High|Max)\s\(\d+\)|[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?[A-Za-z/%]*|-?nan|-?inf)"
_METRIC_LINE = re.compile(
    rf"^\s*(?P<inv>\d+)\s+(?P<name>\S+)\s+(?P<desc>.*?)\s+(?P<min>{_VALUE})\s+(?P<max>{_VALUE})\s+(?P<avg>{_VALUE})\s*$"
)
_EVENT_LINE = re.compile(
    rf"^\s*(?P<inv>\d+)\s+(?P<name>\S+)\s+(?P<min>{_VALUE})\s+(?P<max>{_VALUE})\s+(?P<avg>{_VALUE})\s+(?P<total>{_VALUE})\s*$"
)
_DEVICE = re.compile(r'^\s*Device\s+"(?P<device>[^"]*)"\s*$')
_KERNEL = re.compile(r"^\s*Kernel:\s*(?P<kernel>.+?)\s*$")


@dataclass(frozen=True)
class MetricRecord:
    """One metric or event of one kernel, as nvprof summarised it over its invocations."""

    line: int
    session: int
    device: str
    kernel: str
    invocations: int
    metric: str
    description: str
    min: float
    max: float
    avg: float
    total: float  # events only; nan for metrics
    unit: str


class SkippedLines:
    """Lines inside a result section that are not nvprof's: counted, then one warning."""

    def __init__(self, path: Path, tool: str = "nvprof") -> None:
        self.path, self.count, self.first, self.tool = path, 0, 0, tool
        self.lines: set[int] = set()

    def add(self, lineno: int) -> None:
        self.count += 1
        self.first = self.first or lineno
        self.lines.add(lineno)

    def warn(self) -> None:
        if self.count:
            warnings.warn(
                CosimWarning(
                    f"{self.path}:{self.first}: skipped {self.count} line(s) in {self.tool}'s results that it does not write "
                    "(program output mixed in, or a damaged line); the first is this one"
                ),
                stacklevel=3,
            )


def metric_records(path: str | Path) -> list[MetricRecord]:
    """Every metric and event record of an nvprof ``--metrics``/``--events`` log, sessions joined."""
    path = Path(path)
    text = read_text(
        path,
        missing_hint="give the file nvprof wrote with --metrics/--events (--csv or text)",
        empty_hint="give the log nvprof wrote with --metrics/--events",
    )
    skipped = SkippedLines(path)
    lines = text.splitlines()
    trace: list[int] = []
    records = list(_records(path, lines, skipped, trace))
    if trace:
        warnings.warn(
            CosimWarning(
                f"{path}:{trace[0]}: a --print-gpu-trace section ({len(trace) - 1} row(s)) holds kernel times, not metrics: "
                "cosim read reads it with the metrics; cosim gpu takes this file with --gpu-trace for the times"
            ),
            stacklevel=2,
        )
    if records:
        records = _without_cut_kernel(path, text, lines, records, skipped)
    skipped.warn()
    if not records:
        raise CosimError(f"{path}: no metric or event results; run nvprof with --metrics (and --events elapsed_cycles_sm)")
    return _join_sessions(path, records)


def _without_cut_kernel(path: Path, text: str, lines: list[str], records: list[MetricRecord], skipped: SkippedLines) -> list[MetricRecord]:
    """The records without the last kernel's when the log ends inside its results: mid-line, or with fewer
    metrics than the other kernels of its section (nvprof reports every metric for every kernel)."""
    last = records[-1]
    end = max(i for i, line in enumerate(lines, start=1) if line.strip())
    if last.line != end and end not in skipped.lines:
        return records  # the log goes on after nvprof's last record (a banner, the program's output)
    is_event = last.total == last.total
    names: dict[tuple[str, str], list[str]] = {}
    for r in records:
        if r.session == last.session and (r.total == r.total) == is_event:
            names.setdefault((r.device, r.kernel), []).append(r.metric)
    mine = names[(last.device, last.kernel)]
    # nvprof lists the same metrics in the same order for every kernel: a cut one has a beginning of that list;
    # and every kernel of a session in each of its result sections (events, metrics)
    longer = [other for other in names.values() if len(other) > len(mine) and other[: len(mine)] == mine]
    session = {(r.device, r.kernel) for r in records if r.session == last.session}
    unlisted = session - set(names)
    if ends_mid_line(text):
        why = "the log ends mid-line"
    elif longer:
        why = f"its results stop after {len(mine)} of the {len(longer[0])} {'events' if is_event else 'metrics'} the other kernels have"
    elif unlisted:
        why = f"the last result section lists {len(names)} of the session's {len(session)} kernels"
    else:
        return records
    if end in skipped.lines:  # the cut line is reported as cut, not as a damaged one
        skipped.lines.discard(end)
        skipped.count -= 1
        skipped.first = min(skipped.lines, default=0)
    cut = {(last.device, last.kernel), *unlisted}  # kernels the section never reached are incomplete too
    kept = [r for r in records if (r.device, r.kernel) not in cut]
    left_out(path, last.line, f"kernel '{last.kernel}'", why, kept=len({(r.device, r.kernel) for r in kept}))
    return kept


def read_nvprof(path: str | Path, *, ignore_metrics: Iterable[str] = (), allow_unknown: bool = False) -> pd.DataFrame:
    """One row per (device, kernel): ``device``, ``kernel``, ``invocations`` and one column per metric (its ``Avg``, SI).

    A metric outside :data:`TEGRA_K1_METRICS` is a :class:`CosimError` unless it
    is in ``ignore_metrics`` or ``allow_unknown`` is set (then it is kept as a column,
    and ``attrs["nvprof"]["first_unknown"]`` is its ``(line, metric)``, for
    :func:`unknown_metric_error` once the caller has checked what it checks first).
    """
    path = Path(path)
    ignore = set(ignore_metrics)
    rows: dict[tuple[str, str], dict] = {}
    first_unknown: tuple[int, str] | None = None
    for r in metric_records(path):
        if r.metric in ignore:
            continue
        if r.metric not in TEGRA_K1_METRICS and first_unknown is None:
            first_unknown = (r.line, r.metric)
            if not allow_unknown:
                raise unknown_metric_error(path, *first_unknown)
        row = rows.setdefault((r.device, r.kernel), {"device": r.device, "kernel": r.kernel, "invocations": r.invocations, "line": r.line})
        row["invocations"] = max(row["invocations"], r.invocations)
        row[r.metric] = r.avg
    if not rows:
        raise CosimError(f"{path}: every metric was ignored; nothing to model")
    out = pd.DataFrame(list(rows.values()))
    out.attrs["nvprof"] = {"path": str(path), "first_unknown": first_unknown}
    return out


def unknown_metric_error(path: str | Path, line: int, metric: str) -> CosimError:
    """The one-line refusal of a metric the Tegra K1 model does not read, with both ways out."""
    return CosimError(
        f"{path}:{line}: unknown metric '{metric}'; cosim reads {', '.join(TEGRA_K1_METRICS)} "
        f"(skip it with --ignore-metric {metric}, or keep every unknown metric with --keep-unknown)"
    )


#: The header of a --print-gpu-trace table (text or --csv)
TRACE_HEADER = re.compile(r'^\s*"?Start"?\s*,?\s*"?Duration')


def _records(path: Path, lines: list[str], skipped: SkippedLines, trace: list[int]) -> Iterator[MetricRecord]:
    """Each metric or event record; the lines of a gpu-trace section (nvprof --print-gpu-trace --metrics) go to
    ``trace``, its header's first."""
    session, in_results, result_seen = 0, False, False
    in_trace = False
    mode = "metric"  # or "event": what the last header announced
    header: list[str] | None = None  # the --csv header of the current block
    device = kernel = None
    for lineno, text in enumerate(lines, start=1):
        if m := BANNER.match(text):
            in_trace = False
            banner = m["text"]
            if "is profiling process" in banner:
                session, in_results, result_seen = session + 1, False, False
            elif banner.rstrip().endswith("result:"):
                if banner.startswith("Profiling result") and result_seen:
                    session += 1
                in_results, result_seen, header, device, kernel = True, True, None, None, None
                mode = "event" if banner.startswith("Event") else "metric"
            continue
        stripped = text.strip()
        if not in_results or not stripped:
            continue
        if in_trace or TRACE_HEADER.match(text):
            in_trace = True  # until the next banner: legend lines under a text trace are the section's too
            trace.append(lineno)
            continue
        if stripped.startswith('"'):
            fields = _csv_fields(path, lineno, text)
            if "Metric Name" in fields or "Event Name" in fields:
                header = _check_header(path, lineno, fields)
                continue
            if header is not None and len(fields) == len(header):
                row = dict(zip(header, fields))
                yield _record(
                    path,
                    lineno,
                    session,
                    row["Device"],
                    row["Kernel"],
                    row["Invocations"],
                    row.get("Metric Name") or row.get("Event Name", ""),
                    row.get("Metric Description", ""),
                    row["Min"],
                    row["Max"],
                    row["Avg"],
                    row.get("Total"),
                )
                continue
            skipped.add(lineno)
            continue
        if stripped.startswith("Invocations"):
            mode = "event" if stripped.split()[-1] == "Total" else "metric"
            continue
        if m := _DEVICE.match(text):
            device, kernel = m["device"], None
            continue
        if m := _KERNEL.match(text):
            kernel = m["kernel"]
            continue
        m = (_EVENT_LINE if mode == "event" else _METRIC_LINE).match(text)
        if m and device is not None and kernel is not None:
            yield _record(
                path,
                lineno,
                session,
                device,
                kernel,
                m["inv"],
                m["name"],
                m.groupdict().get("desc") or "",
                m["min"],
                m["max"],
                m["avg"],
                m.groupdict().get("total"),
            )
        else:
            skipped.add(lineno)


def _csv_fields(path: Path, lineno: int, text: str) -> list[str]:
    try:
        return next(csv.reader(io.StringIO(text)), [])
    except csv.Error as err:  # e.g. a field beyond the csv module's size limit: not an nvprof line
        raise CosimError(f"{path}:{lineno}: not a CSV line nvprof writes ({err}); is the file intact?") from None


def _check_header(path: Path, lineno: int, fields: list[str]) -> list[str]:
    missing = [c for c in ("Device", "Kernel", "Invocations", "Min", "Max", "Avg") if c not in fields]
    if missing:
        raise CosimError(f"{path}:{lineno}: nvprof --csv header lacks {', '.join(missing)}")
    return fields


def _record(
    path: Path,
    lineno: int,
    session: int,
    device: str,
    kernel: str,
    invocations: str,
    metric: str,
    description: str,
    lo: str,
    hi: str,
    avg: str,
    total: str | None,
) -> MetricRecord:
    values = {}
    unit = "count"
    for name, raw in (("min", lo), ("max", hi), ("avg", avg), ("total", total)):
        if raw is None:
            values[name] = math.nan
            continue
        try:
            value, unit = quantity(raw)
        except UnitError as err:
            raise CosimError(f"{path}:{lineno}: metric '{metric}' {name} {err}") from None
        if not math.isfinite(value) or value < 0:
            raise CosimError(f"{path}:{lineno}: metric '{metric}' is {raw.strip()}; counts and ratios cannot be negative or nan")
        if metric in _PERCENT and unit == "count":
            value, unit = value / 100.0, "fraction"
        values[name] = value
    return MetricRecord(
        lineno,
        session,
        device,
        kernel,
        _invocations(path, lineno, invocations),
        metric,
        description.strip(),
        values["min"],
        values["max"],
        values["avg"],
        values["total"],
        unit,
    )


def _join_sessions(path: Path, records: list[MetricRecord]) -> list[MetricRecord]:
    kept: dict[tuple[str, str, str], MetricRecord] = {}
    invocations: dict[tuple[str, str], MetricRecord] = {}
    repeats: list[tuple[MetricRecord, MetricRecord]] = []
    differ: list[tuple[MetricRecord, MetricRecord]] = []
    for r in records:
        key = (r.device, r.kernel, r.metric)
        if key in kept:
            first = kept[key]
            if first.session == r.session:
                raise CosimError(f"{path}:{r.line}: metric '{r.metric}' of kernel '{r.kernel}' repeats line {first.line}")
            repeats.append((r, first))
            continue
        kept[key] = r
        other = invocations.setdefault((r.device, r.kernel), r)
        if other.invocations != r.invocations and other.session != r.session:
            differ.append((r, other))
    if repeats:
        r, first = repeats[0]
        warnings.warn(
            CosimWarning(
                f"{path}:{r.line}: {len(repeats)} metric value(s) repeat an earlier session (the first: '{r.metric}', read at line "
                f"{first.line}); the first values are kept"
            ),
            stacklevel=3,
        )
    if differ:
        r, other = differ[0]
        warnings.warn(
            CosimWarning(
                f"{path}:{r.line}: kernel '{r.kernel[:80]}' ran {r.invocations} time(s) in this session and {other.invocations} at "
                f"line {other.line} ({len(differ)} such record(s)); are all sessions the same program and input?"
            ),
            stacklevel=3,
        )
    return list(kept.values())


def _invocations(path: Path, lineno: int, text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise CosimError(f"{path}:{lineno}: invocations '{text}' is not a whole number") from None
    if n <= 0 or n > 2**63 - 1:
        raise CosimError(f"{path}:{lineno}: invocations {n}; a profiled kernel runs at least once, and fewer than 2^63 times")
    return n
