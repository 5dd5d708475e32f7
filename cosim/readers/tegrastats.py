"""NVIDIA Jetson ``tegrastats`` logs: one line per sample, the board's rails, GPU load and clocks, temperatures.

A line, as the boards print it (``--logfile`` on JetPack 5+ starts it with ``MM-DD-YYYY hh:mm:ss``)::

    RAM 2344/7852MB (lfb 1154x4MB) ... EMC_FREQ 4%@1600 GR3D_FREQ 0%@624 ... VDD_SYS_GPU 152/152 VDD_IN 3056/3056
    07-21-2025 16:33:42 RAM 17953/62841MB ... GR3D_FREQ 39%@[305,0] ... VDD_GPU_SOC 2798mW/2798mW VIN_SYS_5V0 3315mW/3315mW

Rails are ``NAME cur/avg`` [mW] (TX1, TX2, Nano, Xavier: bare numbers; Orin and JetPack 5+: ``mW`` after each, and
some releases a third, the maximum): ``cur`` is the INA3221 monitor's reading at the sample, ``avg`` the mean of
every sample since tegrastats started.  Rail names by board (NVIDIA's Jetson Linux power docs): TX1 ``VDD_IN``,
``VDD_CPU``, ``VDD_GPU``; TX2 ``VDD_IN``, ``VDD_SYS_GPU``, ``VDD_SYS_SOC``, ``VDD_SYS_CPU``, ``VDD_SYS_DDR``;
Nano ``POM_5V_IN``, ``POM_5V_GPU``, ``POM_5V_CPU``; AGX Xavier ``GPU``, ``CPU``, ``SOC``, ``CV``, ``VDDRQ``,
``SYS5V``; Xavier NX and Orin Nano/NX ``VDD_IN``, ``VDD_CPU_GPU_CV``, ``VDD_SOC``; AGX Orin ``VDD_GPU_SOC``,
``VDD_CPU_CV``, ``VIN_SYS_5V0``.  ``GR3D_FREQ`` is the GPU's load [%] and, where printed, its clock [MHz]
(``@[305,0]``: one per GPC; the highest is kept).
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError
from cosim.readers._files import read_text
from cosim.readers.cutoff import ends_mid_line, left_out

_STAMP = re.compile(r"^(?P<stamp>\d\d-\d\d-\d{4} \d\d:\d\d:\d\d)\s+")
_RAIL = re.compile(
    r"(?<![\w@/])(?P<name>[A-Z][A-Z0-9_]*) (?P<cur>\d+(?:\.\d+)?)(?:mW)?/(?P<avg>\d+(?:\.\d+)?)(?:mW)?(?:/\d+(?:\.\d+)?(?:mW)?)?(?=\s|$)"
)
_GR3D = re.compile(r"\bGR3D_FREQ (?:(?P<load>\d+)%)?(?:@\[?(?P<mhz>[\d,]+)\]?)?")
_EMC = re.compile(r"\bEMC_FREQ (?P<load>\d+)%(?:@(?P<mhz>\d+))?")
_TEMP = re.compile(r"(?<![\w.])(?P<name>[A-Za-z][\w]*)@(?P<c>-?\d+(?:\.\d+)?)C\b")
#: rails that feed the GPU, best first (a board's own GPU rail, else the rail the GPU shares)
GPU_RAILS = ("VDD_GPU", "VDD_SYS_GPU", "POM_5V_GPU", "GPU", "VDD_GPU_SOC", "VDD_CPU_GPU_CV")
#: the whole module's input rails
INPUT_RAILS = ("VDD_IN", "POM_5V_IN", "VIN_SYS_5V0", "SYS5V")
#: tegrastats' default --interval [s]: the period of a log without times
DEFAULT_INTERVAL_S = 1.0


def looks_like_tegrastats(head: str) -> bool:
    """Whether a file's first characters are tegrastats lines (``RAM u/tMB`` and a rail or ``GR3D``)."""
    lines = [line for line in head.splitlines()[:5] if line.strip()]
    return bool(lines) and all(re.search(r"\bRAM \d+/\d+[kMG]B\b", line) and ("GR3D" in line or _RAIL.search(line)) for line in lines[:3])


def read_tegrastats(path: str | Path) -> pd.DataFrame:
    """One row per tegrastats line: ``sample`` (0, 1, ...), ``line``, ``time_s`` (its timestamp as seconds since
    1970-01-01 with no zone applied [s]; nan where the log has none), each rail's ``<RAIL>_w`` (the reading at the
    sample) and ``<RAIL>_avg_w`` (the running mean since tegrastats started) [W], ``gr3d_load`` (0-1),
    ``gr3d_freq_hz`` and ``emc_load``/``emc_freq_hz`` where printed, and ``<SENSOR>_degc`` [degC]."""
    path = Path(path)
    text = read_text(path, missing_hint="give the file tegrastats --logfile wrote", empty_hint="give tegrastats' output")
    lines = text.splitlines()
    if ends_mid_line(text) and len(lines) > 1:  # tegrastats stopped mid-write: the last line's rails are cut
        lines = lines[:-1]
        left_out(path, len(lines) + 1, "the last sample", "the log ends mid-line", kept=len(lines), unit="line")
    rows = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if not re.search(r"\bRAM \d+/\d+", line):
            raise CosimError(f"{path}:{lineno}: not a tegrastats line (no 'RAM used/totalMB'); is the log intact?")
        row: dict = {"line": lineno, "time_s": math.nan}
        if m := _STAMP.match(line):
            row["time_s"] = (datetime.strptime(m["stamp"], "%m-%d-%Y %H:%M:%S") - datetime(1970, 1, 1)).total_seconds()
        for m in _RAIL.finditer(line):
            row[f"{m['name']}_w"] = float(m["cur"]) / 1000.0
            row[f"{m['name']}_avg_w"] = float(m["avg"]) / 1000.0
        if (m := _GR3D.search(line)) and (m["load"] or m["mhz"]):
            row["gr3d_load"] = int(m["load"]) / 100.0 if m["load"] else math.nan
            if m["mhz"]:
                row["gr3d_freq_hz"] = max(int(f) for f in m["mhz"].split(",") if f) * 1e6
        if m := _EMC.search(line):
            row["emc_load"] = int(m["load"]) / 100.0
            if m["mhz"]:
                row["emc_freq_hz"] = int(m["mhz"]) * 1e6
        for m in _TEMP.finditer(line):
            row[f"{m['name']}_degc"] = float(m["c"])
        rows.append(row)
    if not rows:
        raise CosimError(f"{path}: no tegrastats lines; give the file tegrastats --logfile wrote")
    out = pd.DataFrame(rows)
    out.insert(0, "sample", range(len(out)))
    rails = [c[:-2] for c in out.columns if c.endswith("_w") and not c.endswith("_avg_w")]
    out.attrs["tegrastats"] = {"path": str(path), "rails": rails, "timed": bool(out["time_s"].notna().all())}
    return out


def units(table: pd.DataFrame) -> dict[str, str]:
    """The SI unit of each value column of :func:`read_tegrastats`."""
    out = {"time_s": "s"} if table["time_s"].notna().any() else {}
    for c in table.columns:
        if c.endswith("_w"):
            out[c] = "W"
        elif c.endswith("_hz"):
            out[c] = "Hz"
        elif c.endswith("_load"):
            out[c] = "fraction"
        elif c.endswith("_degc"):
            out[c] = "degC"
    return out


def long_table(table: pd.DataFrame) -> pd.DataFrame:
    """The tidy rows of :func:`read_tegrastats`: one per (sample, value), ``timestamp`` [s] among them where timed."""
    unit = {("timestamp" if k == "time_s" else k): v for k, v in units(table).items()}
    long = table.rename(columns={"time_s": "timestamp"}).melt(
        id_vars=["sample"], value_vars=list(unit), var_name="metric", value_name="value"
    )
    long = long[long["value"].notna()]
    return long.assign(unit=long["metric"].map(unit), kernel="", launch=long["sample"], device="", statistic="value").sort_values(
        "launch", kind="stable"
    )


def power_samples(path: str | Path, *, field: str | None = None, period_s: float | None = None) -> pd.DataFrame:
    """``time_s`` [s] and ``power_w`` [W] of one rail: ``field`` (a rail name), else the board's GPU rail
    (:data:`GPU_RAILS`), else its input rail; times from the log's stamps, else ``period_s`` (tegrastats
    ``--interval``) apart.  ``attrs['power']``: ``field``, ``window_s`` 0 (the rail's reading at the sample), ``gpu``."""
    path = Path(path)
    table = read_tegrastats(path)
    rails = table.attrs["tegrastats"]["rails"]
    rail = field or next((r for r in (*GPU_RAILS, *INPUT_RAILS) if r in rails), None)
    if rail is None or rail not in rails:
        raise CosimError(f"{path}: no rail '{field or 'GPU'}' in the log; it has {', '.join(rails) or 'none'} (give one with --field)")
    if table["time_s"].notna().all():
        times = table["time_s"].to_numpy(dtype=float)
    elif period_s is not None and period_s > 0:
        times = table["sample"].to_numpy(dtype=float) * period_s
    else:
        raise CosimError(f"{path}: tegrastats wrote no times; give its --interval with --period-s (in s; its default is 1)")
    out = pd.DataFrame({"time_s": times, "power_w": table[f"{rail}_w"].to_numpy(dtype=float)})
    out.attrs["power"] = {"path": str(path), "field": rail, "window_s": 0.0, "gpu": "0"}
    return out
