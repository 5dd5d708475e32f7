"""Kernel DVFS tables: one row per (benchmark, kernel, core clock, memory clock), measured.

CSV schema (users' own tables; ``cosim read`` of a folder of logs writes the same):

| column | meaning |
|---|---|
| benchmark | the program the kernel belongs to (validation leaves one benchmark out at a time) |
| kernel | the kernel's name |
| core_mhz, mem_mhz | the set core and memory clocks [MHz] |
| runtime_s | the kernel's time per launch [s] |
| power_w | the average board power while it repeats [W] |
| device (optional) | the GPU; a model refuses a table of another device |
| any other numeric column | a feature of the kernel (nvprof metrics: SI units, fractions) |

A kernel's features come from one profile: its row at the reference pair.  Its
other rows are only compared with, never used as inputs: their features may be blank
(a kernel profiled once with ncu or DCGM, timed and metered at every pair).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from cosim.errors import CosimError

REQUIRED = ("benchmark", "kernel", "core_mhz", "mem_mhz", "runtime_s", "power_w")
KEYS = ("benchmark", "kernel")
# columns that describe a row, not the kernel: never features
NOT_FEATURES = {"core_mhz", "mem_mhz", "runtime_s", "power_w", "power_samples", "core_mhz_sampled", "mem_mhz_sampled", "flags"}


def read_dvfs_table(path: str | Path) -> pd.DataFrame:
    """A kernel DVFS table from a CSV (schema above), a folder of ``core<C>_mem<M>`` folders (:mod:`cosim.kernels.pair_folders`)
    or a folder of Wang & Chu's per-pair logs (:mod:`cosim.readers.dvfs_logs`)."""
    from cosim.kernels.pair_folders import is_pair_layout, read_pair_folders
    from cosim.readers.dvfs_logs import read_dvfs_folder
    from cosim.readers.measured import read_table

    path = Path(path)
    if path.is_dir():
        table = read_pair_folders(path) if is_pair_layout(path) else read_dvfs_folder(path)
    else:
        table = read_table(path)
    return check_table(table, source=str(path))


def check_table(table: pd.DataFrame, *, source: str, measured: bool = True) -> pd.DataFrame:
    """The table with its required columns checked (numbers > 0); ``measured=False`` lets runtime/power be absent."""
    need = REQUIRED if measured else REQUIRED[:4]
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise CosimError(f"{source}: missing column(s) {', '.join(missing)}; a kernel DVFS table has {', '.join(REQUIRED)}, then features")
    if table.empty:
        raise CosimError(f"{source}: no rows")
    out = table.copy()
    out["benchmark"] = out["benchmark"].astype(str)
    out["kernel"] = out["kernel"].astype(str)
    for col in [c for c in REQUIRED[2:] if c in out.columns]:
        values = pd.to_numeric(out[col], errors="coerce")
        bad = ~(values > 0) | ~np.isfinite(values.to_numpy(dtype=float))
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise CosimError(f"{source}: row {row + 2}: {col} must be a positive number, not {table[col].iloc[row]!r}")
        out[col] = values.astype(float)
    for col in feature_columns(out):  # blank: not profiled at that pair (with_profiles refuses a blank profile)
        values = out[col].to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):  # no profiler metric comes near 1e30; beyond it a fit overflows float32
            bad = np.isinf(values) | (np.abs(values) > 1e30)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise CosimError(
                f"{source}: row {row + 2}: feature column {col} has no finite value below 1e30 ({table[col].iloc[row]!r}); "
                "fix it, leave it blank where the kernel was not profiled, or drop the column from every row"
            )
    dup = out.duplicated(subset=[*KEYS, "core_mhz", "mem_mhz"])
    if dup.any():
        r = out[dup].iloc[0]
        raise CosimError(
            f"{source}: {r['benchmark']}/{r['kernel']} at {r['core_mhz']:g}/{r['mem_mhz']:g} MHz appears twice; one row per pair"
        )
    return out.reset_index(drop=True)


def feature_columns(table: pd.DataFrame) -> list[str]:
    """Numeric columns other than the clocks and measurements: the kernel's features."""
    return [c for c in table.columns if c not in NOT_FEATURES and c not in (*KEYS, "device") and pd.api.types.is_numeric_dtype(table[c])]


def device_of(table: pd.DataFrame) -> str:
    if "device" not in table.columns:
        return ""
    from cosim.models.device import device_name

    names = sorted({device_name(d) for d in table["device"].dropna().astype(str)})  # nvprof's "(1)" names no other GPU
    return names[0] if len(names) == 1 else ""


def parse_pair(text: str) -> tuple[float, float]:
    """``"1000,1000"`` -> (core_mhz, mem_mhz)."""
    try:
        core, mem = (float(x) for x in text.split(","))
    except ValueError:
        raise CosimError(f"--reference-pair {text!r}: give core and memory clocks in MHz, e.g. 1000,1000") from None
    if not (core > 0 and mem > 0):
        raise CosimError(f"--reference-pair {text!r}: clocks must be > 0 MHz")
    return core, mem


def default_reference(table: pd.DataFrame, *, source: str) -> tuple[float, float]:
    """The highest (core, then memory) clock pair at which every kernel of ``table`` was profiled: has a row with
    every feature column filled (a table profiled at one pair and only timed at the others gives that pair)."""
    kernels = table[list(KEYS)].drop_duplicates().shape[0]
    profiled = table[table[feature_columns(table)].notna().all(axis=1)]
    # kernels profiled at each pair (a Series even when no row is profiled)
    per_pair = profiled.drop_duplicates(["core_mhz", "mem_mhz", *KEYS]).groupby(["core_mhz", "mem_mhz"]).size()
    common = sorted(pair for pair, n in per_pair.items() if n == kernels)
    if not common:
        raise CosimError(
            f"{source}: no clock pair at which every kernel was profiled (a row with every feature column filled), so no "
            "pair to take the profiles at; name one with --reference-pair C,M (kernels lacking it are named), or profile "
            "every kernel at one pair"
        )
    core, mem = common[-1]
    return float(core), float(mem)


def with_profiles(table: pd.DataFrame, *, reference: tuple[float, float], source: str) -> pd.DataFrame:
    """Every row joined with its kernel's reference profile: ``runtime_s_ref``, ``power_w_ref``, ``core_mhz_ref``,
    ``mem_mhz_ref`` and ``f_<feature>`` from the row at ``reference`` only."""
    core, mem = reference
    at_ref = table[(np.abs(table["core_mhz"] - core) < 0.5) & (np.abs(table["mem_mhz"] - mem) < 0.5)]
    have = set(map(tuple, at_ref[list(KEYS)].to_numpy()))
    lacking = sorted({f"{b}/{k}" for b, k in table[list(KEYS)].to_numpy()} - {f"{b}/{k}" for b, k in have})
    if lacking:
        raise CosimError(
            f"{source}: {len(lacking)} kernel(s) have no profile at the reference pair {core:g},{mem:g} MHz (e.g. {lacking[0]}); "
            "profile them there, or fit with another --reference-pair"
        )
    feats = feature_columns(table)
    blank = at_ref[feats].isna()
    if blank.to_numpy().any():
        i, j = (int(v[0]) for v in np.nonzero(blank.to_numpy()))
        r = at_ref.iloc[i]
        raise CosimError(
            f"{source}: {r['benchmark']}/{r['kernel']}'s profile at the reference pair {core:g},{mem:g} MHz has no "
            f"{feats[j]}: profile it there, drop the column from every row, or fit with another --reference-pair"
        )
    prof = at_ref[[*KEYS, "runtime_s", "power_w", "core_mhz", "mem_mhz", *feats]].copy()
    prof.columns = [*KEYS, "runtime_s_ref", "power_w_ref", "core_mhz_ref", "mem_mhz_ref", *(f"f_{c}" for c in feats)]
    out = table.drop(columns=feats).merge(prof, on=list(KEYS), how="left")
    return out


def grid(profiles: pd.DataFrame, cores: list[float], mems: list[float]) -> pd.DataFrame:
    """Each kernel's profile row repeated at every (core, mem) pair of the lists (nothing measured there)."""
    base = profiles.drop_duplicates(subset=list(KEYS)).drop(columns=["runtime_s", "power_w"], errors="ignore")
    pairs = pd.DataFrame([(c, m) for c in cores for m in mems], columns=["core_mhz", "mem_mhz"])
    return base.drop(columns=["core_mhz", "mem_mhz"]).merge(pairs, how="cross")


def parse_clocks(text: str, flag: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise CosimError(f"{flag} {text!r}: give clocks in MHz separated by commas, e.g. 400,600,800,1000") from None
    if not values or any(not (v > 0) for v in values):
        raise CosimError(f"{flag} {text!r}: give clocks > 0 MHz separated by commas")
    return values
