"""Nsight Compute's default text report (``ncu`` without ``--csv``, or ``ncu --import X.ncu-rep``)::

    [828] cuda_exec.out@127.0.0.1
      sgemm(int, int, ...) (32, 32, 1)x(32, 32, 1), Context 1, Stream 7, Device 0, CC 7.5
        Section: GPU Speed Of Light Throughput
        ----------------------- ------------- -------------
        Metric Name               Metric Unit  Metric Value
        ----------------------- ------------- -------------
        DRAM Frequency          cycle/nsecond          5.00
        Elapsed Cycles                  cycle    56,344,784
        Duration                      msecond         96.32
        ----------------------- ------------- -------------

One block per launch: its kernel line (ncu before 2022: ``name, 2022-Mar-24 14:33:02, Context 1, Stream 7``), then sections, each a table whose dashed rule gives the columns' widths
(names left-aligned, units and values right-aligned); a metric may have no unit (``Waves Per SM``).  Rule advice
(``OPT``, ``INF``, ``WRN`` paragraphs) and ``==PROF==`` lines are passed over.  Read into the rows
:func:`cosim.readers.ncu.read_ncu` gives for ``--csv`` (values in SI through :func:`cosim.readers._units.ncu_quantity`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError
from cosim.readers._files import read_text

_KERNEL = re.compile(
    r"^\s+(?P<name>\S.*?)(?: \((?P<grid>\d+, \d+, \d+)\)x\((?P<block>\d+, \d+, \d+)\)|, \d{4}-\w{3}-\d\d \d\d:\d\d:\d\d), "
    r"Context (?P<context>\d+), Stream (?P<stream>\d+)(?:, Device (?P<device>\d+))?(?:, CC (?P<cc>\d+\.\d+))?\s*$"
)
_SECTION = re.compile(r"^\s+Section: (?P<name>.+?)\s*$")
_RULE = re.compile(r"^\s+-{3,}(?: +-{3,})+\s*$")


def looks_like_ncu_text(head: str) -> bool:
    """Whether a file's first characters hold an ncu text report (a kernel line and a ``Section:`` table)."""
    return bool(re.search(r"^\s+Section: ", head, re.MULTILINE)) and bool(re.search(r"Metric Name\s+Metric Unit\s+Metric Value", head))


def read_ncu_text(path: str | Path) -> pd.DataFrame:
    """Long table, one row per (launch, metric), with :func:`cosim.readers.ncu.read_ncu`'s columns: ``launch`` (the
    report's launch order, from 0), ``kernel``, ``device``, ``capability``, ``section``, ``metric``, ``value`` (SI),
    ``unit``, ``ncu_unit`` and ``line``; also ``grid`` and ``block``."""
    from cosim.readers.ncu import _value

    path = Path(path)
    text = read_text(path, missing_hint="give the file ncu's text report was saved to", empty_hint="give ncu's output")
    lines = text.splitlines()
    rows: list[dict] = []
    launch, kernel, section, spans, state = -1, None, "", None, "none"
    for lineno, line in enumerate(lines, start=1):
        if m := _KERNEL.match(line):
            launch, kernel, section, state = launch + 1, m, "", "none"
            continue
        if m := _SECTION.match(line):
            section, state = m["name"], "none"
            continue
        if _RULE.match(line):  # a table: rule, header, rule, rows, rule
            if state == "none":
                spans = [(r.start(), r.end()) for r in re.finditer(r"-+", line)]
            state = {"none": "head", "head": "rows", "rows": "none"}[state]
            continue
        if state != "rows" or spans is None or kernel is None or not line.strip() or len(spans) != 3:
            continue
        name = line[: spans[0][1]].strip()
        unit = line[spans[0][1] : spans[1][1]].strip()
        raw = line[spans[1][1] :].strip()
        if not name or not raw:
            raise CosimError(f"{path}:{lineno}: a metric row without a name or value; is the report intact?")
        value, si = _value(path, lineno, name, raw, unit)
        rows.append(
            {
                "line": lineno,
                "launch": launch,
                "kernel": kernel["name"],
                "device": kernel["device"] or "",
                "capability": kernel["cc"] or "",
                "grid": f"({kernel['grid']})" if kernel["grid"] else "",
                "block": f"({kernel['block']})" if kernel["block"] else "",
                "section": section,
                "metric": name,
                "value": value,
                "unit": si,
                "ncu_unit": unit,
            }
        )
    if not rows:
        raise CosimError(f"{path}: no metric tables under a kernel line; give ncu's text report (or its --csv output)")
    out = pd.DataFrame(rows)
    out.attrs["ncu"] = {"path": str(path), "page": "text"}
    return out
