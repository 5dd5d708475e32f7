"""The kernel DVFS model file (JSON): both families' parameters, interval widths and the training table.

Trees are not stored as numbers: they are refitted, deterministically, from the embedded training
table when the file is loaded (a second at most on the sizes here).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError
from cosim.kernels.dvfs import device_of, with_profiles
from cosim.kernels.dvfs_models import calibrate, fit_family

FORMAT = "cosim-kernel-dvfs/1"
STORED = ("roofline", "physics")  # families stored as numbers (the trees are refitted when loaded)


def fit_model(
    table: pd.DataFrame, *, reference: tuple[float, float], source: str, families: tuple[str, ...] = ("roofline", "physics", "trees")
) -> dict:
    """``families`` fitted on ``table`` (rows at every pair), with conformal interval widths."""
    rows = with_profiles(table, reference=reference, source=source)
    if rows["benchmark"].nunique() < 3:
        raise CosimError(f"{source}: {rows['benchmark'].nunique()} benchmark(s); fitting needs at least 3 (validation leaves one out)")
    fitted: dict[str, dict] = {}
    for family in families:  # trees are not stored: refitted from the training table when loaded
        fitted[family] = {"params": fit_family(family, rows)} if family in STORED else {}
        fitted[family]["q"] = calibrate(family, rows)
    return {
        "format": FORMAT,
        "device": device_of(table),
        "reference_pair_mhz": list(reference),
        "clock_range_mhz": {c: [float(table[c].min()), float(table[c].max())] for c in ("core_mhz", "mem_mhz")},
        "families": fitted,
        "training_table": json.loads(table.to_json(orient="split", index=False)),
    }


def save_model(model: dict, path: Path) -> None:
    from cosim.output import write_atomic

    text = json.dumps(model, allow_nan=True)

    def write(tmp: Path) -> None:
        tmp.write_text(text)

    write_atomic(path, write)


def load_model(path: Path) -> dict:
    try:
        model = json.loads(path.read_text())
    except FileNotFoundError:
        raise CosimError(f"{path}: no such file; make one with cosim kernel-fit TABLE -o {path.name}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CosimError(f"{path}: not a readable model file ({err})") from None
    if not isinstance(model, dict) or model.get("format") != FORMAT:
        raise CosimError(f"{path}: not a kernel DVFS model (format {FORMAT}); make one with cosim kernel-fit")
    return model


def family_model(model: dict, family: str) -> tuple[dict, dict[str, float]]:
    """(fitted model, interval widths) of ``family``; trees are refitted from the embedded table."""
    if family not in model["families"]:
        fitted = ", ".join(model["families"])
        raise CosimError(
            f"the model holds the {fitted} family only (kernel-fit --family); predict with --family {fitted}, or refit with both"
        )
    fam = model["families"][family]
    q = {k: float(v) if v is not None else math.inf for k, v in fam["q"].items()}
    if family in STORED:
        return fam["params"], q
    split = model["training_table"]
    table = pd.DataFrame(split["data"], columns=split["columns"])
    rows = with_profiles(table, reference=tuple(model["reference_pair_mhz"]), source="the model's training table")
    return fit_family("trees", rows), q


def check_device(model: dict, table: pd.DataFrame, *, source: str, model_path: Path, any_device: bool = False) -> str:
    """``""`` when the table is from the model's device (nvprof's index aside), else ``"device_mismatch"`` with
    ``any_device``; a :class:`CosimError` otherwise."""
    from cosim.models.device import same_device

    mine, theirs = model.get("device", ""), device_of(table)
    if mine and theirs and not same_device(mine, theirs):
        if any_device:
            return "device_mismatch"
        raise CosimError(
            f"{source}: device '{theirs}', but {model_path} was fitted on '{mine}'; clocks, voltages and power differ between "
            "GPUs: fit a model on this device's measurements (cosim kernel-fit), or pass --any-device to predict anyway "
            "(rows flagged device_mismatch)"
        )
    return ""
