"""Memory and LP-core activity for the Tegra K1 memory and core rails (ACTMON-style).

A CSV file with a ``kernel`` column and any of the rate columns below; a row
whose kernel is ``*`` applies to every kernel without its own row and to the
idle time between kernels::

    kernel,mem_cpu_busy_per_s,mem_other_busy_per_s,cpu_ipc,cpu_active_cycles_per_s
    *,2.0e7,0,0.6,1.5e8
    dct8x8(float*, int),2.0e7,1.8e8,0.6,3.0e8

The ``mem_*`` rates are EMC busy cycles per second serving the CPU and other
(GPU) requests, as the Tegra K1's ACTMON counts them (Stokke et al., 4.1.1).
A launch-times file is a CSV with ``launch`` (0, 1, ... in trace order),
``start_s`` and optionally ``kernel`` (checked against the trace).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.readers.measured import read_table

ACTIVITY_COLUMNS = ("mem_cpu_busy_per_s", "mem_other_busy_per_s", "cpu_ipc", "cpu_active_cycles_per_s")
DEFAULT = "*"


def read_activity(path: str | Path) -> pd.DataFrame:
    """Rates per kernel name, indexed by ``kernel``; missing cells are nan (= not given)."""
    path = Path(path)
    table = read_table(path)
    if "kernel" not in table.columns:
        raise CosimError(f"{path}: needs a 'kernel' column (a kernel name, or * for all others and idle time)")
    unknown = [c for c in table.columns if c != "kernel" and c not in ACTIVITY_COLUMNS]
    if unknown:
        raise CosimError(f"{path}: unknown column(s) {', '.join(unknown)}; activity columns: {', '.join(ACTIVITY_COLUMNS)}")
    table["kernel"] = table["kernel"].astype(str).str.strip()
    dup = table["kernel"][table["kernel"].duplicated()]
    if len(dup):
        raise CosimError(f"{path}: kernel '{dup.iloc[0]}' has two rows")
    for col in table.columns.drop("kernel"):
        values = pd.to_numeric(table[col], errors="coerce")
        bad = table[col].notna() & (values.isna() | ~np.isfinite(values) | (values < 0))
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise CosimError(f"{path}:{i + 2}: {col} = {table[col].iloc[i]!r}; rates must be numbers >= 0")
        table[col] = values
    out = table.set_index("kernel")
    out.attrs["path"] = str(path)
    return out


def read_launch_times(path: str | Path) -> pd.DataFrame:
    """``launch`` -> ``start_s`` [s] (and ``kernel`` when given), sorted by launch."""
    path = Path(path)
    table = read_table(path)
    for col in ("launch", "start_s"):
        if col not in table.columns:
            raise CosimError(f"{path}: needs columns launch,start_s (and optionally kernel)")
    start = pd.to_numeric(table["start_s"], errors="coerce")
    if start.isna().any() or (start < 0).any():
        i = int(np.flatnonzero((start.isna() | (start < 0)).to_numpy())[0])
        raise CosimError(f"{path}:{i + 2}: start_s {table['start_s'].iloc[i]!r} is not a time >= 0 [s]")
    table["start_s"] = start
    table.attrs["path"] = str(path)
    return table.sort_values("launch", ignore_index=True)
