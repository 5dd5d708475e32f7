"""nvidia-smi power logs: ``--query-gpu ... --format=csv`` (with ``-l``/``-lms``) and ``nvidia-smi dmon``.

``--query-gpu`` writes a header naming each field with its unit, then one row per GPU per sample::

    index, timestamp, power.draw [W], clocks.current.sm [MHz], utilization.gpu [%], memory.used [MiB]
    0, 2019/08/23 14:54:47.307, 208.36 W, 1545 MHz, 100 %, 2163 MiB

``nounits`` drops the units from the values (the header keeps them); any subset of fields, in any order, is
read; ``[N/A]``/``[Not Supported]`` are missing.  Several GPUs are told apart by ``index``, ``uuid`` or
``pci.bus_id``; without one, a log whose timestamps repeat is refused (it holds several GPUs that cannot be
told apart).  ``timestamp`` is the host's wall clock (local time, no zone): ``time_s`` is that clock read as
seconds since 1970-01-01 00:00 (no zone applied), good for differences and for lining up with another log of
the same host.

``dmon`` writes a ``# gpu pwr gtemp ...`` header, a ``# Idx W C ...`` units row, and one row per GPU per
sample; its times exist only with ``-o T`` or ``-o DT`` (``#Date Time`` columns).

Averaging windows (``nvidia-smi --help-query-gpu``): ``power.draw`` is the average of the last second on Ampere
and newer GPUs (the instantaneous reading on older ones), ``power.draw.average`` is a one-second average,
``power.draw.instant`` an instantaneous reading; dmon's ``pwr`` is ``power.draw``.
"""

from __future__ import annotations

import csv
import io
import math
import re
from datetime import datetime
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError
from cosim.readers._files import read_text
from cosim.readers._times import melt_samples, rejoin_time
from cosim.readers.cutoff import ends_mid_line, left_out

#: nvidia-smi unit -> (factor to SI, SI unit)
UNITS = {
    "W": (1.0, "W"),
    "mW": (1e-3, "W"),
    "J": (1.0, "J"),
    "mJ": (1e-3, "J"),
    "MHz": (1e6, "Hz"),
    "%": (0.01, "fraction"),
    "KiB": (2.0**10, "B"),
    "MiB": (2.0**20, "B"),
    "GiB": (2.0**30, "B"),
    "MB": (2.0**20, "B"),  # dmon's fb/bar1 columns: nvidia-smi's MB are MiB
    "MB/s": (2.0**20, "B/s"),
    "C": (1.0, "degC"),
    "V": (1.0, "V"),
    "mV": (1e-3, "V"),
    "s": (1.0, "s"),
    "us": (1e-6, "s"),
}
#: Fields that name a GPU (the first present is its identity) and fields kept as text, not numbers.
ID_FIELDS = ("index", "uuid", "pci.bus_id", "gpu_bus_id", "serial")
TEXT_FIELDS = {"timestamp", "name", "gpu_name", "driver_version", "vbios_version", "power.management", "compute_mode", *ID_FIELDS}
#: The averaging window [s] of each power field (``nvidia-smi --help-query-gpu``); power.draw's is 1 s on Ampere
#: and newer, 0 (instantaneous) before: the longer is assumed, and said, unless the caller knows better.
POWER_FIELDS = {"power.draw.instant": 0.0, "power.draw": 1.0, "power.draw.average": 1.0, "pwr": 1.0}
_FIELD = re.compile(r"^(?P<name>[a-z_][a-z0-9_.]*)(?:\s*\[(?P<unit>[^\]]+)\])?$")
_MISSING = re.compile(
    r"^\[?(?:N/A|Not Supported|Unknown Error|Insufficient Permissions|GPU is lost|Requested functionality has been deprecated)\]?$"
)
_NUMBER = re.compile(r"^(?P<num>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<unit>[A-Za-z%/]*)$")
_DMON_HEADER = re.compile(r"^#\s*(?:Date\s+)?(?:Time\s+)?gpu\s+\S")


def looks_like_query_gpu(head: str) -> bool:
    """Whether a file's first characters are ``nvidia-smi --query-gpu ... --format=csv`` output (its header line)."""
    return _header_at(head.splitlines()[:20]) is not None


def looks_like_dmon(head: str) -> bool:
    """Whether a file's first characters are ``nvidia-smi dmon`` output (a ``# gpu pwr ...`` header)."""
    return any(_DMON_HEADER.match(line.strip()) for line in head.splitlines()[:20])


def _header_at(lines: list[str]) -> int | None:
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        matched = [_FIELD.match(f) for f in fields]
        amd = {"gpu", "socket_power", "gfx_voltage"} & set(fields)  # amd-smi's flattened names: power_csv reads them
        if all(matched) and not amd and any("." in f or f in ("timestamp", "index", "uuid", "pstate") for f in fields):
            names = {m["name"] for m in matched if m}
            if names & ({"timestamp"} | set(POWER_FIELDS)) or any(
                n.split(".")[0] in ("utilization", "clocks", "temperature") for n in names
            ):
                return i
    return None


def read_query_gpu(path: str | Path) -> pd.DataFrame:
    """One row per (GPU, sample), in file order: ``gpu`` (its index/uuid/bus id, or ``"0"``), ``sample`` (per GPU,
    from 0), ``line``, ``time_s`` (the timestamp [s], see the module docstring; nan without one), ``name`` where
    queried, and one column per numeric field, named as nvidia-smi printed it, in SI units
    (``attrs['nvidia_smi']['units']``)."""
    path = Path(path)
    text = read_text(path, missing_hint="give the file nvidia-smi --query-gpu=... --format=csv wrote", empty_hint="give nvidia-smi's CSV")
    lines = text.splitlines()
    if ends_mid_line(text) and len(lines) > 1:  # the logger was stopped mid-write: the last sample is short
        lines = lines[:-1]
        left_out(path, len(lines) + 1, "the last sample", "the log ends mid-line", kept=len(lines) - 1, unit="line")
    start = _header_at(lines[:20])
    if start is None:
        raise CosimError(
            f"{path}: no nvidia-smi --query-gpu header (like 'timestamp, power.draw [W]'); log with --format=csv, not noheader"
        )
    header = _query_header(lines[start])
    names = [n for n, _ in header]
    ident = next((f for f in ID_FIELDS if f in names), None)
    rows: list[dict] = []
    for lineno, line in enumerate(lines[start + 1 :], start=start + 2):
        if not line.strip():
            continue
        if _header_at([line]) == 0:  # an appended run repeats the header; another header changes the fields
            header = _query_header(line)
            names = [n for n, _ in header]
            ident = next((f for f in ID_FIELDS if f in names), None)
            continue
        fields = [f.strip() for f in next(csv.reader(io.StringIO(line), skipinitialspace=True))]
        fields = rejoin_time(fields, len(header), names.index("timestamp") if "timestamp" in names else None)
        if len(fields) != len(header):
            raise CosimError(f"{path}:{lineno}: {len(fields)} field(s) under a header of {len(header)}; is the log intact?")
        row: dict = {"line": lineno, "gpu": fields[names.index(ident)] if ident else "0"}
        for (name, unit), raw in zip(header, fields):
            if name == "timestamp":
                row["time_s"] = timestamp_s(raw, where=f"{path}:{lineno}")
            elif name in TEXT_FIELDS:
                row[name] = raw
            elif name == "pstate":
                row[name] = float(raw[1:]) if re.fullmatch(r"P\d+", raw) else math.nan
            else:
                row[name] = _value(path, lineno, name, raw, unit)
        rows.append(row)
    if not rows:
        raise CosimError(f"{path}:{start + 1}: an nvidia-smi header but no samples; was the log stopped at once?")
    out = pd.DataFrame(rows)
    out["sample"] = out.groupby("gpu").cumcount()
    if "time_s" not in out:
        out["time_s"] = math.nan
    if ident is None and out["time_s"].notna().any() and (out["time_s"].diff() <= 0).any():
        raise CosimError(
            f"{path}: timestamps repeat or go back, so the log holds several GPUs it does not name; log with "
            "--query-gpu=index,timestamp,... (or one GPU with -i N)"
        )
    units = {name: UNITS.get(unit, (1.0, unit))[1] for name, unit in header if name not in TEXT_FIELDS}
    out.attrs["nvidia_smi"] = {"path": str(path), "layout": "query-gpu", "units": units}
    return out


def _query_header(line: str) -> list[tuple[str, str]]:
    out = []
    for field in line.split(","):
        m = _FIELD.match(field.strip())
        assert m is not None  # _header_at matched the line
        out.append((m["name"], m["unit"] or _BARE_UNITS.get(m["name"].split(".")[0], "")))
    return out


#: the unit nvidia-smi reads a field in where a logger's own header names it bare (``power.draw``, not ``power.draw [W]``)
_BARE_UNITS = {"temperature": "C", "power": "W", "clocks": "MHz", "utilization": "%", "memory": "MiB", "enforced": "W"}


def timestamp_s(raw: str, *, where: str) -> float:
    """nvidia-smi's ``YYYY/MM/DD hh:mm:ss.fff`` as seconds since 1970-01-01 00:00, no zone applied [s]; a logger's
    own ISO-8601 (``date --iso-8601=ns``: its zone applied) or Unix seconds as :func:`cosim.readers._times.timestamp_s`."""
    for fmt in ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S"):
        try:
            return (datetime.strptime(raw, fmt) - datetime(1970, 1, 1)).total_seconds()
        except ValueError:
            continue
    if re.match(r"^\d{4}-\d\d-\d\d[T ]|^\d+(?:\.\d+)?$", raw.strip()):
        from cosim.readers._times import timestamp_s as logger_time

        return logger_time(raw, where=where)
    raise CosimError(f"{where}: timestamp '{raw}' is not nvidia-smi's YYYY/MM/DD hh:mm:ss.fff, ISO-8601 or Unix seconds")


def _value(path: Path, lineno: int, name: str, raw: str, unit: str) -> float:
    """A field's value in SI: its unit from the value (``21.76 W``) or the header (``nounits``)."""
    if _MISSING.match(raw) or raw in ("", "-"):
        return math.nan
    m = _NUMBER.match(raw)
    if m is None:
        raise CosimError(f"{path}:{lineno}: {name} is '{raw}', not a number nvidia-smi writes")
    given = m["unit"] or unit
    if given and given not in UNITS and given != unit:
        raise CosimError(f"{path}:{lineno}: {name} is '{raw}', in a unit ('{given}') cosim does not know")
    value = float(m["num"]) * UNITS.get(given, (1.0, ""))[0]
    if not math.isfinite(value) or (value < 0 and not name.startswith("temperature")):
        raise CosimError(f"{path}:{lineno}: {name} is {raw}; nvidia-smi's readings are finite and >= 0")
    return value


def read_dmon(path: str | Path) -> pd.DataFrame:
    """``nvidia-smi dmon`` output: one row per (GPU, sample) like :func:`read_query_gpu`, with dmon's column
    names (``pwr``, ``gtemp``, ``sm``, ``mclk`` ...) in SI units; ``time_s`` only with ``-o T``/``-o DT``."""
    path = Path(path)
    text = read_text(path, missing_hint="give the output of nvidia-smi dmon saved to a file", empty_hint="give nvidia-smi dmon's output")
    lines = text.splitlines()
    if ends_mid_line(text) and lines and not lines[-1].lstrip().startswith("#"):
        lines = lines[:-1]
        left_out(path, len(lines) + 1, "the last sample", "the log ends mid-line", kept=len(lines), unit="line")
    names: list[str] | None = None
    units: list[str] = []
    rows: list[dict] = []
    for lineno, line in enumerate(lines, start=1):
        stripped = line.strip()
        if _DMON_HEADER.match(stripped):
            names, units = stripped.lstrip("#").split(), []
            continue
        if stripped.startswith("#"):
            if names is not None and not units:
                units = stripped.lstrip("#").split()
            continue
        if not stripped or names is None:
            continue  # the program's own output before dmon's first header
        fields = stripped.split()
        if len(fields) != len(names):
            raise CosimError(f"{path}:{lineno}: {len(fields)} value(s) under a dmon header of {len(names)}; is the log intact?")
        f = dict(zip(names, fields))
        row: dict = {"line": lineno, "gpu": f["gpu"], "time_s": _dmon_time(path, lineno, f.get("Date"), f.get("Time"))}
        for name, unit, raw in zip(names, units or [""] * len(names), fields):
            if name not in ("Date", "Time", "gpu"):
                row[name] = _value(path, lineno, name, raw, unit)
        rows.append(row)
    if not rows:
        raise CosimError(f"{path}: no samples under a '# gpu pwr ...' header; is this the output of nvidia-smi dmon?")
    out = pd.DataFrame(rows)
    out["sample"] = out.groupby("gpu").cumcount()
    out.attrs["nvidia_smi"] = {
        "path": str(path),
        "layout": "dmon",
        "units": {n: UNITS.get(u, (1.0, u))[1] for n, u in zip(names or [], units) if n not in ("Date", "Time", "gpu")},
    }
    return out


def _dmon_time(path: Path, lineno: int, date: str | None, clock: str | None) -> float:
    if clock is None:
        return math.nan
    try:
        day = datetime.strptime(date, "%Y%m%d") if date else datetime(1970, 1, 1)
        t = datetime.strptime(clock, "%H:%M:%S")
    except ValueError:
        raise CosimError(f"{path}:{lineno}: date/time '{date or ''} {clock}' is not dmon's YYYYMMDD HH:MM:SS") from None
    return (day - datetime(1970, 1, 1)).total_seconds() + t.hour * 3600 + t.minute * 60 + t.second


def long_table(wide: pd.DataFrame) -> pd.DataFrame:
    """The tidy rows of :func:`read_query_gpu` or :func:`read_dmon`: one per (sample, numeric field), ``timestamp``
    [s] among them where the log has times."""
    units = dict(wide.attrs["nvidia_smi"]["units"])
    if wide["time_s"].notna().any():
        units = {"timestamp": "s", **units}
    return melt_samples(wide, units)


def power_samples(path: str | Path, wide: pd.DataFrame, *, field: str | None = None, gpu: str | None = None) -> pd.DataFrame:
    """``time_s`` [s] and ``power_w`` [W] of one GPU's power readings in ``wide`` (:func:`read_query_gpu` or
    :func:`read_dmon` of ``path``), with ``attrs['power']``: ``field`` (the power field used: ``power.draw.instant``
    where queried, else ``power.draw``, else ``power.draw.average``; dmon's ``pwr``), ``window_s`` (its averaging
    window [s], :data:`POWER_FIELDS`) and ``gpu``."""
    path = Path(path)
    present = [f for f in POWER_FIELDS if f in wide.columns and wide[f].notna().any()]
    if field is None and not present:
        raise CosimError(f"{path}: no power readings (power.draw, power.draw.instant, power.draw.average or dmon's pwr) in the log")
    field = field or present[0]
    if field not in wide.columns:
        raise CosimError(f"{path}: no '{field}' field; the log has {', '.join(present) or 'no power field'}")
    gpu = which_gpu(path, sorted(set(wide["gpu"])), gpu)
    mine = wide[(wide["gpu"] == gpu) & wide[field].notna()]
    if mine["time_s"].isna().any():
        raise CosimError(f"{path}: samples without times; log with a timestamp field (dmon: -o DT) to line power up with a trace")
    out = pd.DataFrame({"time_s": mine["time_s"].to_numpy(), "power_w": mine[field].to_numpy()})
    if "total_energy_consumption" in mine:  # NVML's energy counter: mJ where the log names no unit
        unit = wide.attrs["nvidia_smi"]["units"].get("total_energy_consumption", "")
        out["energy_j"] = mine["total_energy_consumption"].to_numpy() * (1.0 if unit == "J" else 1e-3)
    out.attrs["power"] = {"path": str(path), "field": field, "window_s": POWER_FIELDS[field], "gpu": gpu}
    for key, col in (("gpu_name", "name"), ("driver", "driver_version")):
        if col in mine and mine[col].notna().any():
            out.attrs["power"][key] = str(mine[col].dropna().iloc[0])
    limits = [c for c in ("enforced.power.limit", "power.limit") if c in mine and mine[c].notna().any()]
    if limits:
        out.attrs["power"]["limit_w"] = float(mine[limits[0]].max())
    return out


def which_gpu(path: Path, gpus: list[str], gpu: str | None) -> str:
    """The GPU of a log that ran the kernels: ``gpu`` (``--gpu``) if the log has it, else its only one."""
    if gpu is None and len(gpus) > 1:
        raise CosimError(f"{path}: the log holds GPUs {', '.join(gpus)}; say which ran the kernels with --gpu {gpus[0]}")
    if gpu is not None and gpu not in gpus:
        raise CosimError(f"--gpu {gpu}: {path} holds GPU(s) {', '.join(gpus)}")
    return gpu if gpu is not None else gpus[0]
