"""Reader for ARMPM sample logs (kranik/ARMPM_BUILDMODEL ``*.data``): raw PMU counts per sample.

Each row is one ~0.5 s sample: ``#Timestamp`` [ns], ``Benchmark``, ``Run(#)``,
``CPU(4) Frequency(MHz)``, ``A15 Voltage(V)``, ``A15 Current(A)``, ``A15 Power(W)`` and PMU counts
since the previous sample, by ARM event name.

- A board run is a stretch of consecutive lines with one program, run number and clock; its first sample has no
  previous sample of the run to bound its counts and is dropped.
- Voltage: the log's voltage column is cut to 0.1 V (0.9 V for a rail at 0.977 V); the INA231's power is its
  current times the bus voltage it measured, so power / current gives that voltage to 0.1 % and is used where it
  lies in the logged value's 0.1 V step (:func:`sensed_voltage_v`).
- Time: the counts of a sample cover the timestamps' step less the sampler's dead time (:data:`SAMPLER_DEAD_TIME_S`),
  so rates [events/s] are counts over that counter window.
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
_CURRENT = "A15 Current(A)"

# The sampler's dead time [s]: the part of each timestamp step its counters do not count.  A busy core clocks every
# cycle, yet CPU_CYCLES / f is 8.2-8.8 ms short of the step at every clock; the median of (step - CPU_CYCLES / f)
# over the 5,698 kept samples of the cBench log's training programs (cbench_split.data) is 8.75 ms at 1000, 1500
# and 2000 MHz alike (a fixed time, not a number of cycles).  Chosen on training programs only; tests re-measure it.
SAMPLER_DEAD_TIME_S = 0.00875


def sensed_voltage_v(power_w: np.ndarray, current_a: np.ndarray, logged_v: np.ndarray) -> np.ndarray:
    """The rail's voltage [V] as the sensor measured it: power / current where that lies in the logged value's 0.1 V
    step (the log cuts it to one decimal; power and current are written to 3 decimals), else the logged value."""
    with np.errstate(divide="ignore", invalid="ignore"):
        sensed = power_w / np.where(current_a > 0, current_a, np.nan)
    return np.where((sensed >= logged_v - 0.005) & (sensed < logged_v + 0.105), sensed, logged_v)


def run_starts(program: np.ndarray, run: np.ndarray, freq_mhz: np.ndarray) -> np.ndarray:
    """True on the first sample of each board run (consecutive lines of one program, run number and clock)."""
    key = np.array([f"{p}\0{r}\0{f:g}" for p, r, f in zip(program, run, freq_mhz)], dtype=object)
    first = np.ones(len(key), dtype=bool)
    first[1:] = key[1:] != key[:-1]
    return first


def counter_window_s(time_ns: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Seconds each sample's counts cover: the step since the previous sample less :data:`SAMPLER_DEAD_TIME_S`
    (nan on a run's first sample, which has no previous one)."""
    step = np.full(len(time_ns), np.nan)
    step[1:] = np.diff(np.asarray(time_ns, dtype=float)) / 1e9
    step[first] = np.nan
    return step - SAMPLER_DEAD_TIME_S


def read_armpm(path: str | Path, *, cores: int = 4) -> MeasuredInputs:
    """Rates per core [events/s] (cluster counts over the counter window / ``cores``) for every event column of an
    ARMPM log, and the sensed voltage [V] (power / current where the current is logged).

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
    current = [_CURRENT] if _CURRENT in raw.columns else []
    for col in (_TIME, _FREQ, _VOLT, _POWER, *current, *events):
        raw[col] = _numbers(path, raw, col, lines, finite=col == _TIME)
    first = run_starts(raw["Benchmark"].astype(str).to_numpy(), raw["Run(#)"].astype(str).to_numpy(), raw[_FREQ].to_numpy(float))
    window_s = counter_window_s(raw[_TIME].to_numpy(dtype=float), first)
    refuse_short_steps(path, window_s, lines)
    keep = ~first
    table = raw.loc[keep].reset_index(drop=True)
    window_s = window_s[keep]
    rates = {EVENT_CODES[e]: table[e].to_numpy(dtype=float) / window_s / cores for e in events}
    volt = table[_VOLT].to_numpy(dtype=float)
    if current:
        volt = sensed_voltage_v(table[_POWER].to_numpy(dtype=float), table[_CURRENT].to_numpy(dtype=float), volt)
    return MeasuredInputs(
        table=table,
        freq_mhz=table[_FREQ].to_numpy(dtype=float),
        voltage_v=volt,
        rates=rates,
        label="A15",
        input_row=lines[keep],
    )


def refuse_short_steps(path: Path, window_s: np.ndarray, lines: np.ndarray) -> None:
    """Refuse a sample (not a run's first) whose timestamp is not past the previous one's by the dead time."""
    late = np.flatnonzero(window_s <= 0)
    if len(late):
        raise CosimError(
            f"{path}:{lines[late[0]]}: timestamp not after the previous sample's of the same run by more than the "
            f"sampler's {SAMPLER_DEAD_TIME_S * 1e3:g} ms dead time; the log is out of order"
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


def read_split(path: str | Path) -> dict[str, str]:
    """Program -> ``train`` or ``test`` from an ARMPM split file (two tab-separated columns, a ``#`` header)."""
    from cosim.readers._files import read_text

    path = Path(path)
    out: dict[str, str] = {}
    for line in read_text(path, missing_hint="give ARMPM's cbench_split.data").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) > 2:
            raise CosimError(f"{path}: '{line}' has {len(cells)} columns; a split file has two (train, test)")
        for which, name in zip(("train", "test"), cells):
            if name.strip():
                out[name.strip()] = which
    return out
