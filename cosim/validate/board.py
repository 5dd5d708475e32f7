"""The board side of a validation: measured samples reduced to one row per program and clock.

Two measured formats, read by :mod:`cosim.readers`:

- ARMPM's concatenated logs (``xu3_cset_perfcpu_cBench_eMMC_big.data``): one ~0.5 s sample per line with the A15
  cluster's power and the busy core's raw PMU counts since the previous sample (ARMPM counts the core the program
  is pinned to; the three idle cores sit in WFI, where the Cortex counters stop).  Voltage, board runs and the
  counter window are read as :mod:`cosim.readers.armpm` reads them: power / current (the voltage column is cut to
  0.1 V), a run's first sample skipped, counts over the timestamps' step less the sampler's dead time.
- Powmon/GemStone tables (``asrtpm-A15-powmon-data.csv``): one row per workload, clock and core mask, already
  averaged on the board (``Samples Averaged``); only one-thread rows are used, as gem5 runs one program on one core.

Rates, never run lengths: a board run and a gem5 run of a program differ in input, so only IPC, power [W], energy
per instruction [nJ] and events per cycle compare.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cosim.errors import CosimError
from cosim.readers.armpm import EVENT_CODES, counter_window_s, refuse_short_steps, run_starts, sensed_voltage_v
from cosim.readers.measured import read_table_with_lines
from cosim.validate.rates import CYCLES as _CYCLES
from cosim.validate.rates import PerCycle

_TIME, _FREQ, _VOLT, _POWER = "#Timestamp", "CPU(4) Frequency(MHz)", "A15 Voltage(V)", "A15 Power(W)"
_CURRENT = "A15 Current(A)"


@dataclass(frozen=True)
class BoardRow(PerCycle):
    """One program at one clock on the board, over the samples kept."""

    program: str
    clock_mhz: float
    samples: int  # board samples the row is computed from (first sample of each board run skipped)
    runs: int  # board runs (stretches of one program at one clock) the samples come from
    power_w: float  # mean measured cluster power [W]
    voltage_v: float  # mean measured cluster voltage [V] (ARMPM: power / current, its voltage column is cut to 0.1 V)
    duration_s: float  # time the kept samples' counters cover [s] (ARMPM: timestamps' steps less the sampler's dead time)
    counts: dict[str, float] = field(default_factory=dict)  # event -> the cluster's count over the kept samples
    note: str = ""

    def per_s(self, event: str) -> float:
        """``event`` per second, summed over the cluster's cores [events/s]; nan when the board did not count it."""
        if event not in self.counts or self.duration_s <= 0:
            return float("nan")
        return self.counts[event] / self.duration_s


def read_board(path: str | Path) -> tuple[dict[tuple[str, float], BoardRow], str]:
    """``{(program, clock [MHz]): row}`` of a measured file, and the cluster label it measures (``A15``).

    An ARMPM log (its ``#Timestamp`` column) or a Powmon table (its ``Workload Name`` column).
    """
    path = Path(path)
    table, lines = read_table_with_lines(path)
    if _TIME in table.columns:
        return _armpm_rows(path, table, lines), "A15"
    if "Workload Name" in table.columns:
        return _powmon_rows(path, table)
    raise CosimError(
        f"{path}: neither an ARMPM log (no '{_TIME}' column) nor a Powmon table (no 'Workload Name' column); "
        "give ARMPM's Concatenated_Data/*.data or GemStone's *-powmon-data.csv"
    )


def _numbers(path: Path, table, col: str, lines: np.ndarray) -> np.ndarray:
    import pandas as pd

    values = pd.to_numeric(table[col], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise CosimError(f"{path}:{lines[i]}: {col} is {table[col].iloc[i]!r}, not a finite number; fix or remove that line")
    return values


def _armpm_rows(path: Path, table, lines: np.ndarray) -> dict[tuple[str, float], BoardRow]:
    missing = [c for c in ("Benchmark", _FREQ, _VOLT, _POWER, "CPU_CYCLES") if c not in table.columns]
    if missing:
        raise CosimError(f"{path}: an ARMPM log without column(s) {', '.join(missing)}; give a concatenated log with them")
    events = {EVENT_CODES[c]: c for c in table.columns if c in EVENT_CODES}
    time_ns = _numbers(path, table, _TIME, lines)
    freq = _numbers(path, table, _FREQ, lines)
    volt = _numbers(path, table, _VOLT, lines)
    power = _numbers(path, table, _POWER, lines)
    if _CURRENT in table.columns:
        volt = sensed_voltage_v(power, _numbers(path, table, _CURRENT, lines), volt)
    counts = {code: _numbers(path, table, col, lines) for code, col in events.items()}
    program = table["Benchmark"].astype(str).to_numpy()
    run = table["Run(#)"].astype(str).to_numpy() if "Run(#)" in table.columns else np.full(len(table), "1")
    first = run_starts(program, run, freq)
    window_s = counter_window_s(time_ns, first)
    refuse_short_steps(path, window_s, lines)
    rows: dict[tuple[str, float], BoardRow] = {}
    for name, clock in dict.fromkeys(zip(program, freq)):
        mine = (program == name) & (freq == clock)
        keep = mine & ~first
        n_runs = int((mine & first).sum())
        if not keep.any():
            continue  # one sample per run: nothing left once the first is skipped
        rows[(str(name), float(clock))] = BoardRow(
            program=str(name),
            clock_mhz=float(clock),
            samples=int(keep.sum()),
            runs=n_runs,
            power_w=float(power[keep].mean()),
            voltage_v=float(volt[keep].mean()),
            duration_s=float(window_s[keep].sum()),
            counts={code: float(values[keep].sum()) for code, values in counts.items()},
        )
    return rows


def _powmon_rows(path: Path, table) -> tuple[dict[tuple[str, float], BoardRow], str]:
    label = "A15"
    need = [f"Frequency {label}", f"Voltage {label}", f"Power {label}", f"Average {label} CycleCount", "Core Mask"]
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise CosimError(f"{path}: a Powmon table without column(s) {', '.join(missing)}")
    one_thread = ~table["Core Mask"].astype(str).str.contains(":")  # "4,5,6,7:4,5,6,7" is two threads
    events = {c.rsplit(" ", 1)[1].lower(): c for c in table.columns if str(c).startswith(f"Average {label} Event 0x")}
    events[_CYCLES] = f"Average {label} CycleCount"
    rows: dict[tuple[str, float], BoardRow] = {}
    sub = table[one_thread]
    for (name, clock), group in sub.groupby(["Workload Name", f"Frequency {label}"], sort=False):
        # Powmon's rates are per-core averages [events/s]; the cluster's count in one second is 4 cores' worth
        samples = int(group["Samples Averaged"].sum()) if "Samples Averaged" in group.columns else len(group)
        rows[(str(name), float(clock))] = BoardRow(
            program=str(name),
            clock_mhz=float(clock),
            samples=samples,
            runs=len(group),
            power_w=float(group[f"Power {label}"].astype(float).mean()),
            voltage_v=float(group[f"Voltage {label}"].astype(float).mean()),
            duration_s=float(len(group)),
            counts={code: 4 * float(group[col].astype(float).sum()) for code, col in events.items()},
            note="Powmon rows are board averages: no first sample to skip; no INST_RETIRED, so no IPC",
        )
    return rows, label
