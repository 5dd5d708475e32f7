"""Kernel launch logs: one row per measured kernel launch.

Schema (CSV):

| column | meaning |
|---|---|
| network | network the launch belongs to (e.g. resnet18) |
| kernel | kernel type (conv2d, matmul, relu, ...) |
| params | kernel parameters, ``name=value`` pairs separated by ``;`` (numbers) |
| input_shape | input tensor shape, dimensions separated by ``x`` (e.g. ``1x64x56x56``) |
| cpu_mhz, gpu_mhz, emc_mhz | the DVFS configuration [MHz] |
| runtime_ms | measured runtime [ms] |
| power_w | measured average power [W] |
| board | board identifier (boards of one model differ: that variability is modelled) |

``read_kernel_log`` returns a tidy table: those columns, plus one numeric column per
parameter (``p_<name>``) and per input dimension (``in0``, ``in1``, ...).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.readers._files import read_text
from cosim.readers.measured import read_table

REQUIRED = ("network", "kernel", "params", "input_shape", "cpu_mhz", "gpu_mhz", "emc_mhz", "runtime_ms", "power_w", "board")
FREQS = ("cpu_mhz", "gpu_mhz", "emc_mhz")


def board_levels(path: str | Path) -> dict[str, np.ndarray]:
    """DVFS levels [MHz] per domain (cpu, gpu, emc) from a board file.

    A domain is either the board's own table, a list of clocks [MHz] (real
    boards such as the TX2 and AGX step unevenly), or ``{min, max, count}``
    for evenly spaced levels when only the range and count are published.
    """
    path = Path(path)
    text = read_text(path, missing_hint="give a board file: JSON with a levels_mhz table")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise CosimError(f"{path}: not a readable board file ({err})") from None
    except RecursionError:  # nested deeper than Python's parser goes: no file cosim reads is
        raise CosimError(f"{path}: JSON nested deeper than any board file is; give the file as written") from None
    domains = data.get("levels_mhz") if isinstance(data, dict) else None
    if not isinstance(domains, dict) or not domains:
        raise CosimError(f"{path}: needs a levels_mhz table: domain -> [clocks in MHz] or {{min, max, count}}")
    return {domain: _levels(path, domain, spec) for domain, spec in domains.items()}


def _levels(path: Path, domain: str, spec) -> np.ndarray:
    if isinstance(spec, dict) and {"min", "max", "count"} <= spec.keys():
        count = spec["count"]
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise CosimError(f"{path}: levels_mhz.{domain}.count must be a whole number >= 1, not {count!r}")
        spec = np.linspace(_clock(path, domain, spec["min"]), _clock(path, domain, spec["max"]), count).tolist()
    if not isinstance(spec, list) or not spec:
        raise CosimError(f"{path}: levels_mhz.{domain} must be a list of clocks [MHz] or {{min, max, count}}, not {spec!r}")
    levels = np.array([_clock(path, domain, v) for v in spec])
    if np.any(np.diff(levels) <= 0):
        raise CosimError(f"{path}: levels_mhz.{domain} must rise strictly (a board's DVFS table, lowest first)")
    return levels


def _clock(path: Path, domain: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value <= 0:
        raise CosimError(f"{path}: levels_mhz.{domain}: {value!r} is not a clock > 0 [MHz]")
    return float(value)


def read_kernel_log(path: str | Path, *, levels: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """Read and check a kernel log; with ``levels``, every frequency must be one of the board's."""
    path = Path(path)
    table = read_table(path)
    missing = [c for c in REQUIRED if c not in table.columns]
    if missing:
        raise CosimError(f"{path}: missing column(s) {', '.join(missing)}; a kernel log has {', '.join(REQUIRED)}")
    return tidy(table, source=str(path), levels=levels)


def tidy(table: pd.DataFrame, *, source: str, levels: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    out = table[list(REQUIRED)].copy()
    for col in (*FREQS, "runtime_ms", "power_w"):
        values = pd.to_numeric(out[col], errors="coerce")
        bad = values.isna() | (values <= 0)
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise CosimError(f"{source}: row {row + 2}: {col} must be a positive number, not {out[col].iloc[row]!r}")
        out[col] = values
    if levels is not None:
        for col in FREQS:
            domain = col.removesuffix("_mhz")
            table_f = levels[domain]
            off = np.abs(out[col].to_numpy()[:, None] - table_f[None, :]).min(axis=1) > 0.5
            if off.any():
                row = int(np.flatnonzero(off)[0])
                raise CosimError(
                    f"{source}: row {row + 2}: {col} {out[col].iloc[row]:g} is not one of the board's "
                    f"{len(table_f)} {domain} levels ({table_f[0]:g}-{table_f[-1]:g} MHz)"
                )
    params = [_params(text, source, i) for i, text in enumerate(out["params"].fillna("").astype(str))]  # no parameters: empty
    for name in sorted({k for p in params for k in p}):
        out[f"p_{name}"] = [p.get(name, np.nan) for p in params]
    dims = [_shape(text, source, i) for i, text in enumerate(out["input_shape"].astype(str))]
    for d in range(max(len(x) for x in dims)):
        out[f"in{d}"] = [x[d] if d < len(x) else np.nan for x in dims]
    return out


def _params(text: str, source: str, row: int) -> dict[str, float]:
    out = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, sep, value = part.partition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            raise CosimError(f"{source}: row {row + 2}: params '{text}': expected name=number pairs separated by ';'") from None
        if not sep:
            raise CosimError(f"{source}: row {row + 2}: params '{text}': expected name=number pairs separated by ';'")
    return out


def _shape(text: str, source: str, row: int) -> list[float]:
    try:
        return [float(x) for x in text.lower().split("x")]
    except ValueError:
        raise CosimError(f"{source}: row {row + 2}: input_shape '{text}': expected dimensions like 1x64x56x56") from None
