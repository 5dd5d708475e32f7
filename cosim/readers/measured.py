"""Reader for measured board data: the Powmon/GemStone table layout, or any CSV/TSV.

Powmon layout (``asrtpm-A15-powmon-data.csv``): per cluster label X (A7, A15),
``Frequency X`` [MHz], ``Voltage X`` [V], ``Power X`` [W] and per-core-averaged
event rates ``Average X CycleCount`` / ``Average X Event 0x..`` [events/s].
Other tables name their columns explicitly.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.readers._files import read_text

_POWMON_CYCLES = re.compile(r"^Average (\w+) CycleCount$")


@dataclass(frozen=True)
class MeasuredInputs:
    """Model inputs read from a measured table."""

    table: pd.DataFrame  # the whole table, as read
    freq_mhz: np.ndarray
    voltage_v: np.ndarray
    rates: dict[str, np.ndarray]  # event -> per-core average rate [events/s]
    label: str | None  # Powmon cluster label used, if any
    input_row: np.ndarray | None = None  # each row's line in the input file (header = 1); None: index + 2


def read_table(path: str | Path) -> pd.DataFrame:
    """A CSV or TSV (separator from the first line), untouched."""
    return _parse(Path(path))[0]


def read_table_with_lines(path: str | Path) -> tuple[pd.DataFrame, np.ndarray]:
    """:func:`read_table`, and the line of the file (header = line 1) each row starts on."""
    table, text, sep = _parse(Path(path))
    return table, _row_lines(text, sep, len(table))


def _parse(path: Path) -> tuple[pd.DataFrame, str, str]:
    text = read_text(path, missing_hint="give the measured table (CSV or TSV)")
    first = text.split("\n", 1)[0]
    if not first.strip():
        raise CosimError(f"{path}: empty file or no header line")
    sep = "\t" if "\t" in first else ","
    try:
        return pd.read_csv(io.StringIO(text), sep=sep), text, sep
    except (pd.errors.ParserError, ValueError) as err:
        raise CosimError(f"{path}: not a readable {'TSV' if sep == chr(9) else 'CSV'} table ({str(err).splitlines()[0]})") from None


def _row_lines(text: str, sep: str, n: int) -> np.ndarray:
    """The file line each of the table's ``n`` rows starts on: pandas skips blank lines, and a quoted field may
    hold line breaks.  Where the file cannot be followed record by record, the row's index + 2."""
    starts: list[int] = []
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    end = 0
    try:
        for record in reader:
            start, end = end + 1, reader.line_num
            if record and not (len(record) == 1 and not record[0].strip()):  # what pandas counts as a blank line
                starts.append(start)
    except csv.Error:  # a field over csv's size limit, a lone carriage return
        starts = []
    rows = starts[1:]  # starts[0] is the header
    return np.array(rows, dtype=np.int64) if len(rows) == n else np.arange(n, dtype=np.int64) + 2


def read_measured(
    path: str | Path,
    *,
    events: Iterable[str],
    label: str | None = None,
    freq_col: str | None = None,
    voltage_col: str | None = None,
    event_cols: Mapping[str, str] | None = None,
    need_voltage: bool = True,
) -> MeasuredInputs:
    """Read the frequency, voltage and event-rate columns a model needs.

    With no column names given, the Powmon layout is assumed and the cluster label
    (``A15``...) is the one whose columns cover every event in ``events``.
    """
    path = Path(path)
    table, lines = read_table_with_lines(path)
    events = [e.lower() for e in events]
    event_cols = {k.lower(): v for k, v in (event_cols or {}).items()}
    labels = [m.group(1) for c in table.columns if (m := _POWMON_CYCLES.match(str(c)))]
    if label is None and labels:
        covering = [x for x in labels if all(e in event_cols or _powmon_col(x, e) in table.columns for e in events)]
        label = covering[0] if len(covering) == 1 else None
        if label is None and not (freq_col and (voltage_col or not need_voltage)):
            raise CosimError(f"{path}: cannot tell which cluster's columns to use (Powmon labels: {', '.join(labels)}); pass --label")
    columns = {"frequency": freq_col or (f"Frequency {label}" if label else None)}
    if need_voltage or voltage_col:
        columns["voltage"] = voltage_col or (f"Voltage {label}" if label else None)
    for event in events:
        columns[event] = event_cols.get(event) or (_powmon_col(label, event) if label else None)
    missing = [f"{k} ({v})" if v else k for k, v in columns.items() if v is None or v not in table.columns]
    if missing:
        raise CosimError(
            f"{path}: missing column(s) for {', '.join(missing)}; name them with --freq-col/--voltage-col/--event-col EVENT=COLUMN"
        )
    values = {}
    for key, col in columns.items():
        series = pd.to_numeric(table[col], errors="coerce")
        bad = series.isna() & table[col].notna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise CosimError(f"{path}: column '{col}' row {lines[row]} is not a number ({table[col].iloc[row]!r})")
        values[key] = series.to_numpy(dtype=float)
    return MeasuredInputs(
        table=table,
        freq_mhz=values.pop("frequency"),
        voltage_v=values.pop("voltage", np.full(len(table), np.nan)),
        rates=values,
        label=label,
        input_row=lines,
    )


def _powmon_col(label: str, event: str) -> str:
    return f"Average {label} CycleCount" if event == "0x11" else f"Average {label} Event {event}"
