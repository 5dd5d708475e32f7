"""Power readings over time in a plain CSV: ``amd-smi metric --csv``, ``rocm-smi --showpower --csv``, loggers'
own CSVs (``timestamp,gpu_index,power_W``; pynvml's wide ``timestamp,GPU0,GPU1``), and any table whose columns
``--columns`` names.

Columns are found by their names (case and unit suffix ignored):

* time: ``timestamp``, ``time``, ``time_s``, ``datetime``, ``date``, ``ts`` -- ISO-8601 (``2025-09-24T03:48:33.493Z``,
  ``date --iso-8601=ns``), nvidia-smi's ``YYYY/MM/DD hh:mm:ss.fff`` or Unix seconds (amd-smi ``-w`` writes
  ``int(time.time())``); read as seconds since 1970-01-01 (a stated zone applied, else none) [s];
* GPU: ``gpu``, ``gpu_index``, ``gpu_id``, ``index``, ``device``, ``card`` -- one row per GPU and sample (long);
* power [W unless the name says mW]: ``power``, ``power_w``, ``power_watts``, ``power_draw``, ``socket_power``
  (amd-smi: the current socket power on MI300+, the average before), ``current_socket_power``,
  ``average_socket_power``, rocm-smi's ``Average Graphics Package Power (W)`` and ``Current Socket Graphics
  Package Power (W)``; or one column per GPU, ``GPU0``, ``GPU1`` ... (wide: each is a GPU);
* energy counter: ``total_energy_consumption`` (amd-smi: J, from its source, ROCm/amdsmi amdsmi_cli; NVML's
  ``nvmlDeviceGetTotalEnergyConsumption`` is mJ: a header that says ``[mJ]`` or ``_mj`` is read so), ``energy_j``.

Layouts from the tools' sources (amd-smi's CSV is its flattened metric dict: ``gpu,socket_power,gfx_voltage,...``;
``-w`` adds ``timestamp`` first and repeats the header every sample) and public logs (see docs/reference/outputs.md).
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
from cosim.readers._times import melt_samples, rejoin_time, timestamp_s
from cosim.readers.cutoff import ends_mid_line, left_out

TIME_NAMES = ("timestamp", "time", "time_s", "datetime", "date", "ts", "unix_time", "epoch")
GPU_NAMES = ("gpu", "gpu_index", "gpu_id", "index", "device", "card", "gpu_idx")
POWER_NAMES = (
    "power",
    "power_w",
    "power_watts",
    "power_draw",
    "power.draw",
    "gpu_power",
    "board_power",
    "socket_power",
    "current_socket_power",
    "average_socket_power",
    "current socket graphics package power",
    "average graphics package power",
    "power_mw",
)
ENERGY_NAMES = ("total_energy_consumption", "energy_j", "energy", "energy_mj", "energy_uj")
_WIDE = re.compile(r"^(?:gpu|card)[ _]?(\d+)(?:_power(?:_w|_watts)?)?$", re.IGNORECASE)
_UNIT = re.compile(r"^(?P<name>.*?)\s*(?:\[(?P<u1>[^\]]*)\]|\((?P<u2>[^)]*)\))?$")
_SCALE = {"w": 1.0, "watts": 1.0, "mw": 1e-3, "j": 1.0, "mj": 1e-3, "uj": 1e-6, "kj": 1e3, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
_BANNER = re.compile(r"^'?CTRL'? \+ 'C' to stop|^\s*$")


def _split(column: str) -> tuple[str, str]:
    m = _UNIT.match(column.strip())
    assert m is not None
    return m["name"].strip(), (m["u1"] or m["u2"] or "").strip()


def _fields(line: str) -> list[str]:
    try:
        return [f.strip() for f in next(csv.reader(io.StringIO(line)), [])]
    except csv.Error:
        return []


def layout(header: list[str]) -> dict | None:
    """Which column is what in a header: ``{"time": i, "gpu": i, "power": [(i, gpu, scale)], "energy": (i, scale)}``, or
    None if no column holds power."""
    names = [_split(c) for c in header]
    low = [n.lower() for n, _ in names]
    out: dict = {"time": None, "gpu": None, "power": [], "energy": None}
    out["time"] = next((i for i, n in enumerate(low) if n in TIME_NAMES), None)
    out["gpu"] = next((i for i, n in enumerate(low) if n in GPU_NAMES), None)
    amd = "socket_power" in low or "gfx_voltage" in low
    for i, (n, unit) in enumerate(names):
        name = n.lower()
        if name in POWER_NAMES and not out["power"]:
            scale = _SCALE.get(unit.lower(), 1e-3 if name.endswith("_mw") else 1.0)
            out["power"].append((i, None, scale))
        elif (m := _WIDE.match(n)) and out["gpu"] is None:
            out.setdefault("wide", []).append((i, m[1], _SCALE.get(unit.lower(), 1.0)))
        elif name in ENERGY_NAMES and out["energy"] is None:
            given = unit.lower() or (
                "mj" if name.endswith("_mj") else "uj" if name.endswith("_uj") else "j" if amd or name == "energy_j" else "mj"
            )
            out["energy"] = (i, _SCALE.get(given, math.nan), given)
    if not out["power"] and out.get("wide"):
        out["power"] = out.pop("wide")
    out.pop("wide", None)
    return out if out["power"] else None


def looks_like_power_csv(head: str) -> bool:
    """Whether a file's first characters are a CSV header with a power column (see the module docstring)."""
    for line in head.splitlines()[:5]:
        if _BANNER.match(line):
            continue
        fields = _fields(line)
        found = layout(fields) if len(fields) >= 2 else None
        return found is not None and (found["time"] is not None or found["gpu"] is not None or len(found["power"]) > 1)
    return False


def read_power_csv(path: str | Path, *, columns: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per (GPU, sample): ``gpu``, ``sample`` (per GPU, from 0), ``line``, ``time_s`` [s] (nan without a time
    column), ``power_w`` [W] and ``energy_j`` [J] where the log has an energy counter; ``attrs['power_csv']``:
    ``power`` (the column read), ``energy`` and its unit.  ``columns`` (``{"time_s": "Time", "power_w": "Power"}``,
    from ``--columns``) names the columns instead of their names."""
    from cosim.readers.column_map import header_layout

    path = Path(path)
    text = read_text(path, missing_hint="give the power log", empty_hint="give the power log")
    lines = text.splitlines()
    if ends_mid_line(text) and len(lines) > 2:
        lines = lines[:-1]
        left_out(path, len(lines) + 1, "the last sample", "the log ends mid-line", kept=len(lines) - 1, unit="line")
    start = next((i for i, line in enumerate(lines) if not _BANNER.match(line)), None)
    if start is None:
        raise CosimError(f"{path}: no header line; give a CSV whose first line names its columns")
    header = _fields(lines[start])
    found = header_layout(path, header, columns) if columns else layout(header)
    if found is None:
        raise CosimError(
            f"{path}:{start + 1}: no power column among {', '.join(header[:8])}; name it with --columns time_s=COLUMN,power_w=COLUMN"
        )
    used = {found["time"], found["gpu"], *(i for i, _, _ in found["power"]), found["energy"][0] if found["energy"] else None}
    extras = {i: extra_unit(header[i]) for i in range(len(header)) if i not in used}
    rows: list[dict] = []
    for lineno, line in enumerate(lines[start + 1 :], start=start + 2):
        if _BANNER.match(line):
            continue
        fields = rejoin_time(_fields(line), len(header), found["time"])
        if fields == header:  # amd-smi -w repeats its header every sample; an appended log repeats it too
            continue
        if len(fields) != len(header):
            raise CosimError(f"{path}:{lineno}: {len(fields)} field(s) under a header of {len(header)}; is the log intact?")
        where = f"{path}:{lineno}"
        time = timestamp_s(fields[found["time"]], where=where) if found["time"] is not None else math.nan
        energy = (
            _number(fields[found["energy"][0]], where, header[found["energy"][0]]) * found["energy"][1] if found["energy"] else math.nan
        )
        for i, gpu, scale in found["power"]:
            row = {"line": lineno, "gpu": gpu if gpu is not None else (fields[found["gpu"]] if found["gpu"] is not None else "0")}
            row["time_s"], row["power_w"] = time, _number(fields[i], where, header[i]) * scale
            if found["energy"]:
                row["energy_j"] = energy
            if len(found["power"]) == 1:  # a long log's other readings (temperature, load, voltages), in SI where named
                row.update(_extras(fields, header, extras))
            rows.append(row)
    if not rows:
        raise CosimError(f"{path}:{start + 1}: a header but no readings; was the logger stopped at once?")
    out = pd.DataFrame(rows)
    out.insert(1, "sample", out.groupby("gpu").cumcount())
    power = ", ".join(header[i] for i, _, _ in found["power"])
    energy = {"energy": header[found["energy"][0]], "energy_unit": found["energy"][2]} if found["energy"] else {}
    kept = {name: si for name, _, si in extras.values() if name in out}
    out.attrs["power_csv"] = {"path": str(path), "power": power, **energy, "extra_units": kept}
    return out


def _number(raw: str, where: str, column: str) -> float:
    text = raw.strip().removesuffix("W").removesuffix(" ").strip()
    if text.upper() in ("N/A", "NA", "", "-", "[N/A]"):
        return math.nan
    try:
        value = float(text)
    except ValueError:
        raise CosimError(f"{where}: {column} is '{raw}', not a number") from None
    if not math.isfinite(value) or value < 0:
        raise CosimError(f"{where}: {column} is {raw}; power and energy readings are finite and >= 0")
    return value


#: a reading's unit from its column name's suffix -> (factor to SI, SI unit)
_EXTRA_UNITS = {"c": (1.0, "degC"), "degc": (1.0, "degC"), "percent": (0.01, "fraction"), "pct": (0.01, "fraction"), "%": (0.01, "fraction"),
    "mhz": (1e6, "Hz"), "mv": (1e-3, "V"), "v": (1.0, "V"), "mib": (2.0**20, "B"), "w": (1.0, "W"),
    "clk": (1e6, "Hz"), "activity": (0.01, "fraction"), "edge": (1.0, "degC"), "hotspot": (1.0, "degC")}  # fmt: skip
# amd-smi's own: clocks (gfx_0_clk, mem_0_clk) in MHz, activity in %, edge/hotspot temperatures in degC


def extra_unit(column: str) -> tuple[str, float, str]:
    """``(name, factor to SI, SI unit)`` of a column that is not time, GPU, power or energy (unit ``""``: as written)."""
    name, unit = _split(column)
    suffix = (unit or name.rsplit("_", 1)[-1]).lower()
    factor, si = _EXTRA_UNITS.get(suffix, (1.0, ""))
    if name.lower().startswith("temperature") and not si:
        factor, si = 1.0, "degC"
    return name, factor, si


def _extras(fields: list[str], header: list[str], extras: dict[int, tuple[str, float, str]]) -> dict[str, float]:
    out = {}
    for i, (name, factor, _) in extras.items():
        try:
            out[name] = float(fields[i].strip().rstrip("%").strip()) * factor
        except ValueError:  # text (amd-smi's power_management ENABLED, N/A): not a reading
            continue
    return out


def long_table(wide: pd.DataFrame) -> pd.DataFrame:
    """The tidy rows of :func:`read_power_csv`: one per (sample, value), ``timestamp`` [s] among them where timed."""
    units = {"timestamp": "s", "power_w": "W", "energy_j": "J", **wide.attrs["power_csv"].get("extra_units", {})}
    return melt_samples(wide, units)


def power_samples(path: str | Path, *, gpu: str | None = None, period_s: float | None = None, columns: dict | None = None) -> pd.DataFrame:
    """``time_s`` [s], ``power_w`` [W] (and ``energy_j`` [J] where logged) of one GPU, as
    :func:`cosim.readers.gpu_logs.read_power_log` gives them; without times, ``period_s`` apart."""
    from cosim.readers.nvidia_smi import which_gpu

    path = Path(path)
    table = read_power_csv(path, columns=columns)
    gpu = which_gpu(path, sorted(set(table["gpu"])), gpu)
    mine = table[(table["gpu"] == gpu) & table["power_w"].notna()].reset_index(drop=True)
    if mine["time_s"].isna().any():
        if not (period_s and period_s > 0):
            raise CosimError(f"{path}: readings without times (rocm-smi/amd-smi without -w); give the sample period with --period-s")
        mine["time_s"] = mine["sample"].to_numpy(dtype=float) * period_s
    out = mine[[c for c in ("time_s", "power_w", "energy_j") if c in mine]].copy()
    # amd-smi's socket_power: the current reading on MI300+, a ~1 s average before; loggers' own: what NVML gave (1 s
    # on Ampere+).  The longer is assumed and said, as for nvidia-smi's power.draw; --window-s overrides it.
    out.attrs["power"] = {"path": str(path), "field": table.attrs["power_csv"]["power"], "window_s": 1.0, "gpu": gpu}
    return out
