"""The CSVs a Kokkos energy-profiling tool writes for one run: NVML power readings and the Kokkos kernels, both in
ns on the tool's one clock (e.g. ``<prefix>_gpu_power.csv`` and ``<prefix>_kernels.csv`` of the Variorum/NVML
power connector behind github.com/ethan-puyaubreau/kokkos-energy-dashboard).

* power: ``timestamp_nanoseconds,power_watts,device_id`` -- one NVML reading [W] per row.  NVML's board power is
  the mean of the last second on Ampere and newer GPUs (:data:`WINDOW_S`; ``cosim gpu-energy --window-s`` says
  otherwise for an older board).
* kernels: ``kernel_id,name,type,start_time_ns,end_time_ns,duration_ns`` -- one Kokkos parallel region (FOR,
  REDUCE, SCAN) per row; its GPU kernel(s) run between start and end [ns].

Both count from the tool's zero (:data:`CLOCK`), so ``cosim gpu-energy`` lines them up as they are (no offset to
find; ``--offset-s`` overrides it).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import TYPE_CHECKING

from cosim.errors import CosimError
from cosim.readers._files import read_text

if TYPE_CHECKING:
    import pandas as pd

POWER_HEADER = ("timestamp_nanoseconds", "power_watts", "device_id")
KERNEL_HEADER = ("kernel_id", "name", "type", "start_time_ns", "end_time_ns", "duration_ns")
#: NVML's power reading averages the last second (Ampere and newer); an instantaneous board: --window-s 0.
WINDOW_S = 1.0
#: the one clock both files count from (the tool's zero): a pair of them needs no alignment
CLOCK = "kokkos-tools"


def layout(head: str) -> str | None:
    """``"power"`` or ``"kernels"`` when the text starts with that CSV's header, else None."""
    first = head.lstrip("\ufeff").split("\n", 1)[0].strip()
    fields = tuple(f.strip() for f in first.split(","))
    return "power" if fields == POWER_HEADER else "kernels" if fields == KERNEL_HEADER else None


def _rows(path: Path, header: tuple[str, ...], what: str) -> list[tuple[int, dict[str, str]]]:
    text = read_text(path, missing_hint=f"give {what}", empty_hint=f"give {what}")
    rows = list(csv.reader(text.lstrip("\ufeff").splitlines()))
    if not rows or tuple(c.strip() for c in rows[0]) != header:
        raise CosimError(f"{path}: not {what} (its first line is not {','.join(header)})")
    out = []
    for n, row in enumerate(rows[1:], start=2):
        if not row or not "".join(row).strip():
            continue
        if len(row) != len(header):
            raise CosimError(f"{path}:{n}: {len(row)} fields where the header has {len(header)}; is the file cut off or edited?")
        out.append((n, dict(zip(header, (c.strip() for c in row)))))
    if not out:
        raise CosimError(f"{path}: a header but no rows; was the run shorter than one reading?")
    return out


def _number(path: Path, n: int, field: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise CosimError(f"{path}:{n}: {field} is '{text}', not a number") from None
    if not math.isfinite(value) or value < 0:
        raise CosimError(f"{path}:{n}: {field} is {text}; it is a time [ns] or power [W] >= 0")
    return value


def _whole_ns(path: Path, n: int, field: str, text: str) -> int:
    """A time the tool wrote as an integer [ns], exactly (a float would round it past 2^53 ns)."""
    from cosim.readers._units import UnitError, time_ns

    try:
        return time_ns(text, unit="ns")
    except UnitError:
        raise CosimError(f"{path}:{n}: {field} is '{text}', not a time [ns]") from None


def read_power_table(path: str | Path) -> pd.DataFrame:
    """Every reading of the power CSV: ``device``, ``sample`` (per device, 0, 1, ...), ``time_s`` [s], ``power_w`` [W]."""
    import pandas as pd

    path = Path(path)
    rows = _rows(path, POWER_HEADER, "a Kokkos energy tool's power CSV (timestamp_nanoseconds,power_watts,device_id)")
    out = pd.DataFrame(
        {
            "device": [r["device_id"] for _, r in rows],
            "time_s": [_number(path, n, "timestamp_nanoseconds", r["timestamp_nanoseconds"]) * 1e-9 for n, r in rows],
            "power_w": [_number(path, n, "power_watts", r["power_watts"]) for n, r in rows],
        }
    )
    return out.assign(sample=out.groupby("device").cumcount())


def read_power(path: str | Path, *, gpu: str | None = None) -> pd.DataFrame:
    """``time_s`` [s] and ``power_w`` [W] of one device's readings, with ``attrs['power']`` as
    :func:`cosim.readers.nvidia_smi.power_samples` gives it (``field`` ``power_watts``, ``window_s`` :data:`WINDOW_S`)."""
    path = Path(path)
    table = read_power_table(path)
    from cosim.readers.nvidia_smi import which_gpu

    gpu = which_gpu(path, sorted(set(table["device"])), gpu)
    out = table.loc[table["device"] == gpu, ["time_s", "power_w"]].reset_index(drop=True)
    out.attrs["power"] = {"path": str(path), "field": "power_watts", "window_s": WINDOW_S, "gpu": gpu, "clock": CLOCK}
    return out


def read_kernels(path: str | Path) -> pd.DataFrame:
    """One row per Kokkos kernel in start order, with the columns a kernel trace has here (``kind`` ``kernel``,
    ``name``, ``kernel``, ``launch``, ``start_s``, ``duration_s``, ``end_s`` [s], ``region_type``)."""
    import pandas as pd

    path = Path(path)
    rows = []
    for n, r in _rows(path, KERNEL_HEADER, "a Kokkos energy tool's kernels CSV (kernel_id,name,type,start_time_ns,...)"):
        for f in ("start_time_ns", "end_time_ns", "duration_ns"):
            _number(path, n, f, r[f])  # finite and >= 0
        start, end, duration = (_whole_ns(path, n, f, r[f]) for f in ("start_time_ns", "end_time_ns", "duration_ns"))
        if end < start or abs((end - start) - duration) > 1:  # the three are integers [ns]: they agree exactly
            raise CosimError(f"{path}:{n}: start {start} + duration {duration} ns is not end {end} ns; is the row intact?")
        rows.append(
            {
                "line": n,
                "kind": "kernel",
                "name": r["name"],
                "kernel": r["name"],
                "region_type": r["type"],
                "start_ns": start,
                "duration_ns": duration,
            }
        )
    from cosim.readers.nvprof_trace import exact_times

    out = exact_times(pd.DataFrame(rows))
    out["launch"] = out.groupby("kernel").cumcount()
    out.attrs["nvprof"] = {"path": str(path), "layout": "gpu-trace", "tool": "kokkos", "clock": CLOCK}
    return out
