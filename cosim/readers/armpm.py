"""Reader for ARMPM sample logs (kranik/ARMPM_BUILDMODEL ``*.data``): raw PMU counts per sample.

Each row is one ~0.5 s sample: ``#Timestamp`` [ns], ``Benchmark``, ``Run(#)``,
``CPU(4) Frequency(MHz)``, ``A15 Voltage(V)``, ``A15 Power(W)`` and PMU counts
since the previous sample, by ARM event name.  Counts become rates [events/s]
over the time since the previous sample of the same run; a run's first sample
has no such interval and is dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from cosim.errors import CosimError
from cosim.readers.measured import MeasuredInputs

if TYPE_CHECKING:
    import pandas as pd

# ARM PMUv1/v2 common event numbers (ARM ARM; ARMPM's MODELS.md lists the XU3's)
EVENT_CODES = {
    "SW_INCR": "0x00",
    "L1I_CACHE_REFILL": "0x01",
    "L1I_TLB_REFILL": "0x02",
    "L1D_CACHE_REFILL": "0x03",
    "L1D_CACHE_ACCESS": "0x04",
    "L1D_TLB_REFILL": "0x05",
    "DATA_READS": "0x06",
    "DATA_WRITES": "0x07",
    "INST_RETIRED": "0x08",
    "EXCEPTION_TAKEN": "0x09",
    "EXCEPTION_RETURN": "0x0a",
    "CID_WRITE_RETIRED": "0x0b",
    "BRANCH_MISPRED": "0x10",
    "CPU_CYCLES": "0x11",
    "BRANCH_PRED": "0x12",
    "DATA_MEM_ACCESS": "0x13",
    "L1I_CACHE_ACCESS": "0x14",
    "L1D_CACHE_WB": "0x15",
    "L2D_CACHE_ACCESS": "0x16",
    "L2D_CACHE_REFILL": "0x17",
    "L2D_CACHE_WB": "0x18",
    "BUS_ACCESS": "0x19",
}
_FREQ, _VOLT, _POWER, _TIME = "CPU(4) Frequency(MHz)", "A15 Voltage(V)", "A15 Power(W)", "#Timestamp"


def read_armpm(path: str | Path, *, cores: int = 4) -> MeasuredInputs:
    """Rates per core [events/s] (cluster counts / ``cores``) for every event column of an ARMPM log.

    The table of the result holds ``Benchmark``, ``Run(#)`` and ``A15 Power(W)`` for the kept rows.
    """
    path = Path(path)
    from cosim.readers.measured import read_table_with_lines

    raw, lines = read_table_with_lines(path)
    # ARMPM's raw per-run results.data lacks the columns its concatenation step adds: one run of one benchmark
    if "Benchmark" not in raw.columns:
        raw.insert(1, "Benchmark", path.stem)
    if "Run(#)" not in raw.columns:
        raw.insert(2, "Run(#)", 1)
    missing = [c for c in (_TIME, _FREQ, _VOLT, _POWER) if c not in raw.columns]
    if missing:
        raise CosimError(f"{path}: not an ARMPM log: no column(s) {', '.join(missing)}")
    events = [c for c in raw.columns if c in EVENT_CODES]
    if not events:
        raise CosimError(f"{path}: no PMU event columns (known names: CPU_CYCLES, INST_RETIRED, ...)")
    for col in (_TIME, _FREQ, _VOLT, _POWER, *events):
        raw[col] = _numbers(path, raw, col, lines, finite=col == _TIME)
    run = raw["Benchmark"].astype(str) + "#" + raw["Run(#)"].astype(str)
    dt_s = raw[_TIME].groupby(run).diff().to_numpy(dtype=float) / 1e9
    keep = np.isfinite(dt_s) & (dt_s > 0)
    table = raw.loc[keep].reset_index(drop=True)
    dt_s = dt_s[keep]
    rates = {EVENT_CODES[e]: table[e].to_numpy(dtype=float) / dt_s / cores for e in events}
    return MeasuredInputs(
        table=table,
        freq_mhz=table[_FREQ].to_numpy(dtype=float),
        voltage_v=table[_VOLT].to_numpy(dtype=float),
        rates=rates,
        label="A15",
        input_row=lines[keep],
    )


def _numbers(path: Path, raw: pd.DataFrame, col: str, lines: np.ndarray, *, finite: bool) -> pd.Series:
    """``raw[col]`` as floats; text (or, with ``finite``, a missing or infinite value) is refused naming its line."""
    import pandas as pd

    values = pd.to_numeric(raw[col], errors="coerce").astype(float)
    bad = (values.isna() & raw[col].notna()) | (~np.isfinite(values) if finite else False)
    if bad.any():
        i = int(np.flatnonzero(np.asarray(bad))[0])
        raise CosimError(f"{path}:{lines[i]}: {col} is {raw[col].iloc[i]!r}, not a number; fix or remove that line")
    return values
