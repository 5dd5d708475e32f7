"""``--columns NAME=COLUMN,...``: another table's columns under cosim's names, with their units stated.

``--columns time_s=Time,power_w=Power`` reads a power log whose columns are ``Time`` [s] and ``Power`` [W];
``--columns core_mhz=coreF,mem_mhz=memF,runtime_ms=time,power_w=avg_power`` a kernel DVFS table.  A name's suffix
is the column's unit (``runtime_ms``: milliseconds), converted to the unit cosim uses (``runtime_s``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cosim.errors import CosimError

if TYPE_CHECKING:
    import pandas as pd

#: name -> (cosim's column, factor to its unit)
TARGETS = {
    "time_s": ("time_s", 1.0),
    "time_ms": ("time_s", 1e-3),
    "time_us": ("time_s", 1e-6),
    "time_ns": ("time_s", 1e-9),
    "power_w": ("power_w", 1.0),
    "power_mw": ("power_w", 1e-3),
    "energy_j": ("energy_j", 1.0),
    "energy_mj": ("energy_j", 1e-3),
    "energy_uj": ("energy_j", 1e-6),
    "gpu": ("gpu", 1.0),
    "benchmark": ("benchmark", 1.0),
    "kernel": ("kernel", 1.0),
    "device": ("device", 1.0),
    "core_mhz": ("core_mhz", 1.0),
    "core_ghz": ("core_mhz", 1e3),
    "mem_mhz": ("mem_mhz", 1.0),
    "mem_ghz": ("mem_mhz", 1e3),
    "runtime_s": ("runtime_s", 1.0),
    "runtime_ms": ("runtime_s", 1e-3),
    "runtime_us": ("runtime_s", 1e-6),
}


#: names that make a kernel DVFS table, not a power log
KERNEL_TARGETS = {"benchmark", "kernel", "core_mhz", "core_ghz", "mem_mhz", "mem_ghz", "runtime_s", "runtime_ms", "runtime_us"}


def parse_columns(text: str, *, option: str = "--columns") -> dict[str, str]:
    """``"time_s=Time,power_w=Power"`` -> ``{"time_s": "Time", "power_w": "Power"}`` (names checked)."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, column = (s.strip() for s in part.partition("="))
        if not sep or not name or not column:
            raise CosimError(f"{option} {text!r}: give NAME=COLUMN pairs, e.g. time_s=Time,power_w=Power")
        if name not in TARGETS:
            raise CosimError(f"{option} {text!r}: '{name}' is not a name cosim maps; names: {', '.join(TARGETS)}")
        if TARGETS[name][0] in {TARGETS[n][0] for n in out}:
            raise CosimError(f"{option} {text!r}: {TARGETS[name][0]} mapped twice")
        out[name] = column
    if not out:
        raise CosimError(f"{option} {text!r}: give NAME=COLUMN pairs, e.g. time_s=Time,power_w=Power")
    return out


def header_layout(path: Path, header: list[str], columns: dict[str, str]) -> dict:
    """The layout :func:`cosim.readers.power_csv.layout` gives, from a ``--columns`` mapping over ``header``."""
    index = _indices(path, header, columns)
    found: dict = {"time": None, "gpu": None, "power": [], "energy": None}
    for name, i in index.items():
        target, scale = TARGETS[name]
        if target == "time_s":
            if scale != 1.0:
                raise CosimError(f"--columns {name}: give times in seconds (time_s=); a log's clock is read as written")
            found["time"] = i
        elif target == "gpu":
            found["gpu"] = i
        elif target == "power_w":
            found["power"] = [(i, None, scale)]
        elif target == "energy_j":
            found["energy"] = (i, scale, name.split("_")[1])
        else:
            raise CosimError(f"--columns {name}: a power log maps time_s, power_w, energy_j and gpu, not {name}")
    if not found["power"]:
        raise CosimError(f"--columns: name the power column, e.g. power_w={header[-1]}")
    return found


def rename(table: pd.DataFrame, columns: dict[str, str], *, source: str) -> pd.DataFrame:
    """``table`` with the mapped columns under cosim's names, in cosim's units (a kernel DVFS table)."""
    import pandas as pd

    index = _indices(Path(source), list(table.columns), columns)
    out = table.rename(columns={table.columns[i]: TARGETS[name][0] for name, i in index.items()})
    for name in index:
        target, scale = TARGETS[name]
        if scale != 1.0:
            out[target] = pd.to_numeric(out[target], errors="coerce") * scale
    return out


def _indices(path: Path, header: list[str], columns: dict[str, str]) -> dict[str, int]:
    out = {}
    for name, column in columns.items():
        if column not in header:
            raise CosimError(f"{path}: --columns {name}={column}: no column '{column}'; its columns: {', '.join(map(str, header[:12]))}")
        out[name] = header.index(column)
    return out
