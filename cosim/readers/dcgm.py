"""DCGM ``dcgmi dmon`` logs: one sample per line per GPU entity, as saved with ``dcgmi dmon -e ... > dmon.log``::

    # Entity  GRACT  SMACT  SMOCC  DRAMA  POWER
          Id                               W
       GPU 0  0.429  0.429  0.364  0.400  187.3
       GPU 0  0.750  0.750  0.637  0.800  231.0

The header is repeated every screenful; ``N/A`` is kept as missing.  Fields are DCGM's short names
(DRAMA = DCGM_FI_PROF_DRAM_ACTIVE, SMACT = DCGM_FI_PROF_SM_ACTIVE, ...): the profiling ratios are fractions
0-1 already; the utilisations (GPUTL, MCUTL) are percentages and become fractions; clocks become Hz.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError
from cosim.readers._files import read_text
from cosim.readers.cutoff import ends_mid_line, left_out

#: DCGM short name -> (scale to SI, unit); a field not named here keeps its number and no unit.
FIELDS = {
    **dict.fromkeys(("GRACT", "SMACT", "SMOCC", "TENSO", "DRAMA", "FP64A", "FP32A", "FP16A", "TENSI", "TENSF", "TENHF"), (1.0, "fraction")),
    **dict.fromkeys(("GPUTL", "MCUTL", "ECUTL", "DCUTL"), (0.01, "fraction")),
    "POWER": (1.0, "W"),
    "TOTEC": (1e-3, "J"),  # total energy since the driver loaded [mJ]
    **dict.fromkeys(("SMCLK", "MMCLK"), (1e6, "Hz")),
    **dict.fromkeys(("PCITX", "PCIRX", "NVLTX", "NVLRX"), (1.0, "B/s")),
    **dict.fromkeys(("TMPTR", "GTEMP", "MMTMP"), (1.0, "degC")),
}
_HEADER = re.compile(r"^\s*#\s*Entity(?:Id)?\s+(?P<fields>.+)$")
_ENTITY = re.compile(r"^\s*(?P<entity>(?:GPU|GPU-I|GPU-CI|CX|LINK)\s+\d+)\s+(?P<values>.+)$")


def looks_like_dcgm(head: str) -> bool:
    """Whether a file's first characters are ``dcgmi dmon`` output (a ``# Entity`` header, then entity rows)."""
    return any(_HEADER.match(line) for line in head.splitlines()[:50]) and any(_ENTITY.match(line) for line in head.splitlines()[:200])


def read_dcgm(path: str | Path) -> pd.DataFrame:
    """Long table, one row per (sample, field): ``sample`` (per entity, from 0), ``entity`` (``GPU 0``), ``metric``
    (DCGM's short name), ``value`` (SI, see :data:`FIELDS`), ``unit`` and ``line``."""
    path = Path(path)
    text = read_text(path, missing_hint="give the output of dcgmi dmon -e ... saved to a file", empty_hint="give dcgmi dmon's output")
    lines = text.splitlines()
    if ends_mid_line(text) and _ENTITY.match(lines[-1]):  # a cut sample: its last value is short of digits
        lines.pop()
        left_out(path, len(lines) + 1, "the last sample", "the log ends mid-line", kept=len(lines), unit="line")
    rows: list[dict] = []
    fields: list[str] | None = None
    samples: dict[str, int] = {}
    for lineno, line in enumerate(lines, start=1):
        if m := _HEADER.match(line):
            fields = m["fields"].split()
            continue
        m = _ENTITY.match(line)
        if m is None or fields is None:
            continue  # the units row (# ID, Id), blank lines, the program's own output
        values = m["values"].split()
        if len(values) != len(fields):
            raise CosimError(f"{path}:{lineno}: {len(values)} value(s) under a header of {len(fields)} field(s); is the log intact?")
        entity = " ".join(m["entity"].split())
        n = samples.get(entity, 0)
        samples[entity] = n + 1
        for name, raw in zip(fields, values):
            scale, unit = FIELDS.get(name, (1.0, ""))
            rows.append(
                {
                    "sample": n,
                    "entity": entity,
                    "metric": name,
                    "value": _number(path, lineno, name, raw) * scale,
                    "unit": unit,
                    "line": lineno,
                }
            )
    if not rows:
        raise CosimError(f"{path}: no samples under a '# Entity ...' header; is this the output of dcgmi dmon?")
    out = pd.DataFrame(rows)
    out.attrs["dcgm"] = {"path": str(path)}
    return out


def _number(path: Path, lineno: int, name: str, raw: str) -> float:
    if raw.upper() == "N/A":
        return math.nan
    try:
        value = float(raw)
    except ValueError:
        raise CosimError(f"{path}:{lineno}: {name} is '{raw}', not a number or N/A") from None
    if not math.isfinite(value) or value < 0:
        raise CosimError(f"{path}:{lineno}: {name} is {raw}; DCGM's fields are finite and >= 0")
    return value
