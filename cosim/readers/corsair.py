"""Corsair Link power logs (Corsair AX760i PSU, thesis Section 6.1.3): one sample per second.

Fields are separated by commas and the decimal separator is also a comma, as in
the thesis's example line::

    15.7.2013 11:36:16,20,7W,89,8766315921014,151,9921875,136,605458408151

cosim splits the eight tokens after the time stamp into four numbers, each an
integer part and a fraction part: GPU supplementary PCI-E power (the value marked
``W``), PSU efficiency [%], power in [W], power out [W].  The thesis's prose lists
the fields in another order; the example fixes it, and every line is checked
against it: efficiency must equal 100 * out / in (to 0.5 points).
"""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError
from cosim.readers._files import read_text
from cosim.readers.cutoff import ends_mid_line, left_out

_TOLERANCE_PCT = 0.5


def read_corsair_log(path: str | Path) -> pd.DataFrame:
    """Columns ``time`` (datetime), ``time_s`` (since the first sample), ``gpu_aux_power_w``,
    ``efficiency_pct``, ``power_in_w``, ``power_out_w``; one row per sample."""
    path = Path(path)
    text = read_text(path, missing_hint="give the Corsair Link log (comma decimals, one line per second)")
    lines = text.splitlines()
    if ends_mid_line(text) and len(lines) > 1:  # a cut sample: its last value is short of digits
        lines.pop()
        left_out(path, len(lines) + 1, "the last sample", "the log ends mid-line", kept=len(lines), unit="sample")
    rows = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        stamp, *tokens = [t.strip() for t in line.split(",")]
        try:
            time = datetime.strptime(stamp, "%d.%m.%Y %H:%M:%S")
        except ValueError:
            raise CosimError(f"{path}:{lineno}: time stamp '{stamp}' is not 'D.M.YYYY HH:MM:SS'") from None
        if len(tokens) != 8:
            raise CosimError(
                f"{path}:{lineno}: {len(tokens)} comma-separated tokens after the time stamp, expected 8 "
                "(four numbers with comma decimals); a value without a fraction part cannot be split unambiguously"
            )
        if not tokens[1].endswith("W"):
            raise CosimError(
                f"{path}:{lineno}: the first value should be the GPU supplementary power ending in 'W', got '{tokens[0]},{tokens[1]}'"
            )
        tokens[1] = tokens[1][:-1]
        values = [_decimal(path, lineno, tokens[i], tokens[i + 1]) for i in range(0, 8, 2)]
        aux, eff, p_in, p_out = values
        if p_in <= 0 or abs(100.0 * p_out / p_in - eff) > _TOLERANCE_PCT:
            raise CosimError(
                f"{path}:{lineno}: efficiency {eff:.2f} % does not match out/in = {p_out:.2f}/{p_in:.2f} W; "
                "fields are not in the order GPU aux power, efficiency, in, out"
            )
        rows.append({"time": time, "gpu_aux_power_w": aux, "efficiency_pct": eff, "power_in_w": p_in, "power_out_w": p_out})
    if not rows:
        raise CosimError(f"{path}: no samples")
    out = pd.DataFrame(rows)
    out.insert(1, "time_s", (out["time"] - out["time"].iloc[0]).dt.total_seconds())
    return out


def _decimal(path: Path, lineno: int, whole: str, fraction: str) -> float:
    if not (whole.lstrip("-").isdigit() and fraction.isdigit()):
        raise CosimError(f"{path}:{lineno}: '{whole},{fraction}' is not a comma-decimal number")
    value = float(f"{whole}.{fraction}")
    if not math.isfinite(value) or value < 0:
        raise CosimError(f"{path}:{lineno}: '{whole},{fraction}' is negative; powers and efficiencies are >= 0")
    return value
