"""An interval that holds the silicon: where the board's power lies, given gem5 + cosim's price of a run.

``ln P_board = ln P_gem5 - ln_model - ln_activity`` in every validation row (:mod:`.compare`), so the board's power
is the price less the model's own error on the board and gem5's activity error.  Both are calibrated on training
programs only:

- the model's own error: for a model fitted on this board, its cross-validated residuals on held-out programs (the
  model file's ``cv_by_group`` root mean square and bias); for another board's model, ``ln_model`` over the
  calibration rows (it was never fitted on them);
- gem5's activity error: ``ln_activity`` over the calibration rows, per clock (mean and spread; per event in
  :func:`activity_by_event`).

Interval, in log space: ``ln P_gem5 - (model bias + activity mean at the clock) +- Z * sqrt(model sd^2 + activity
sd^2)`` [W once exponentiated].  ``Z`` = 1.96 (a normal 95 % interval), chosen before any coverage was scored.  A
training program's own row is given the interval calibrated without it (leave one program out), so the coverage
``validate`` reports on training programs is of programs the interval never saw.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from cosim.errors import CosimError

Z = 1.96
_CLOCK_REL_TOL = 0.01  # gem5's tick-rounded clock (1499.25 MHz) is the board's 1500 MHz


@dataclass(frozen=True)
class BoardInterval:
    """A calibration for one model: the model's log error (bias, sd) and gem5's activity's per clock."""

    model: str
    model_bias: float  # mean ln(P_model(board) / P_board)
    model_sd: float
    activity: dict[float, tuple[float, float]]  # clock [MHz] -> (mean, sd) of ln(P_gem5 / P_model(board))
    programs: tuple[str, ...] = field(default_factory=tuple)  # the calibration programs
    model_source: str = ""

    def bounds_w(self, power_w: float, clock_mhz: float) -> tuple[float, float]:
        """``(lo, hi)`` [W] where the board's power lies for a gem5 run priced ``power_w`` at ``clock_mhz``; nan
        when the clock is not one the calibration saw (no activity error is known there)."""
        clock = next((c for c in self.activity if abs(c - clock_mhz) <= _CLOCK_REL_TOL * c), None)
        if clock is None or not math.isfinite(power_w) or power_w <= 0:
            return float("nan"), float("nan")
        mean, sd = self.activity[clock]
        centre = math.log(power_w) - self.model_bias - mean
        half = Z * math.hypot(self.model_sd, sd)
        return math.exp(centre - half), math.exp(centre + half)


def calibrate(rows: list[dict], model, *, leave_out: str | None = None) -> BoardInterval:
    """The calibration of ``model`` from the training-split rows priced with it (less ``leave_out``'s)."""
    mine = [r for r in rows if r["model"] == model.name and r["split"] == "train" and r["program"] != leave_out]
    mine = [r for r in mine if math.isfinite(r["ln_activity"])]
    if len({r["program"] for r in mine}) < 2:
        raise CosimError(
            f"{model.name}: fewer than two training programs priced to calibrate the interval on; give --split with "
            "the board's split file and gem5 runs of its training programs"
        )
    if mine[0]["model_board"] == "this board":
        cv = (model.raw.get("fit") or {}).get("cv_by_group") or {}
        if "rms_pct" not in cv:
            raise CosimError(
                f"{model.name}: its model file has no grouped cross-validation residuals (fit.cv_by_group.rms_pct); refit it with cosim fit --group-by"
            )
        bias, sd = math.log1p(cv["bias_pct"] / 100), math.log1p(cv["rms_pct"] / 100)
        source = f"{cv['k']}-fold cross-validation grouped by {cv['grouped_by']} (model file)"
    else:
        errors = np.array([r["ln_model"] for r in mine])
        bias, sd = float(errors.mean()), float(errors.std(ddof=1))
        source = "ln_model over the calibration rows (another board's model, never fitted on them)"
    activity = {}
    for clock in sorted({r["clock_mhz"] for r in mine}):
        values = np.array([r["ln_activity"] for r in mine if r["clock_mhz"] == clock])
        if len(values) >= 2:
            activity[float(clock)] = (float(values.mean()), float(values.std(ddof=1)))
    return BoardInterval(model.name, bias, sd, activity, tuple(sorted({r["program"] for r in mine})), source)


def add_intervals(rows: list[dict], models: Iterable) -> dict[str, BoardInterval]:
    """Add ``board_lo_w``, ``board_hi_w`` and ``board_inside`` to every row whose model has a calibration; a
    training program's row gets the interval calibrated without that program.  Returns each model's calibration on
    all its training programs (``{}`` for a model with fewer than two)."""
    out = {}
    for model in models:
        try:
            out[model.name] = calibrate(rows, model)
        except CosimError:
            continue
        for r in (r for r in rows if r["model"] == model.name):
            cal = calibrate(rows, model, leave_out=r["program"]) if r["split"] == "train" else out[model.name]
            lo, hi = cal.bounds_w(r["power_gem5_w"], r["clock_mhz"])
            r["board_lo_w"], r["board_hi_w"] = lo, hi
            r["board_inside"] = bool(lo <= r["power_board_w"] <= hi) if math.isfinite(lo) else False
    for r in rows:
        r.setdefault("board_lo_w", float("nan"))
        r.setdefault("board_hi_w", float("nan"))
        r.setdefault("board_inside", False)
    return out


def coverage(rows: list[dict], model: str, split: str = "train") -> dict[str, float]:
    """Over the ``split`` rows (``train`` or ``test``) of ``model`` with an interval: the share with the board inside
    [%], and the mean half-width [% of gem5 + cosim's price].  A training row's interval is calibrated without its
    own program, a test row's on every training program: neither saw the row it is judged on."""
    judged = [r for r in rows if r["model"] == model and r["split"] == split and math.isfinite(r["board_lo_w"])]
    if not judged:
        return {"rows": 0, "coverage_pct": float("nan"), "mean_half_width_pct": float("nan")}
    return {
        "rows": len(judged),
        "coverage_pct": 100 * float(np.mean([r["board_inside"] for r in judged])),
        "mean_half_width_pct": 100 * float(np.mean([(r["board_hi_w"] - r["board_lo_w"]) / 2 / r["power_gem5_w"] for r in judged])),
    }


def activity_by_event(rows: list[dict], model: str) -> dict[str, dict[float, float]]:
    """The spread (sd) of each swap's log share per clock over the training rows: which of gem5's events make the
    activity error, clock by clock."""
    mine = [r for r in rows if r["model"] == model and r["split"] == "train"]
    keys = [
        k for k in dict.fromkeys(k for r in mine for k in r) if k.startswith("ln_event_") or k in ("ln_clock_voltage", "ln_interaction")
    ]
    out: dict[str, dict[float, float]] = {}
    for key in keys:
        out[key] = {}
        for clock in sorted({r["clock_mhz"] for r in mine}):
            values = [r[key] for r in mine if r["clock_mhz"] == clock and math.isfinite(r.get(key, math.nan))]
            if len(values) >= 2:
                out[key][float(clock)] = float(np.std(values, ddof=1))
    return out


_TEXT_COLUMNS = ("program", "split", "model", "model_board", "model_board_inputs_not_board", "gem5_run", "flags", "not_priced")


def read_validation(path) -> list[dict]:
    """The rows of a table ``cosim validate -o`` wrote (CSV): numbers as floats, ``board_inside`` as a bool."""
    import csv
    from pathlib import Path

    from cosim.readers._files import read_text

    path = Path(path)
    text = read_text(path, missing_hint="give the table cosim validate -o wrote")
    rows = list(csv.DictReader(text.splitlines()))
    if not rows or "ln_activity" not in rows[0]:
        raise CosimError(f"{path}: not a table of cosim validate (no ln_activity column); give the CSV cosim validate -o wrote")
    for row in rows:
        for key, value in row.items():
            if key == "board_inside":
                row[key] = value in ("True", "true", "1")
            elif key not in _TEXT_COLUMNS:
                row[key] = float(value) if value not in ("", None) else math.nan
    return rows


def board_columns(timeline: dict, validation) -> list[str]:
    """Add ``board_lo_w`` / ``board_hi_w`` [W] to a ``cosim power`` timeline: where the board's power lies for each
    epoch, calibrated on the training programs of ``validation`` (a ``cosim validate`` CSV) for each cluster's model.
    Returns one line per cluster saying what was done; refuses a model the validation did not price."""
    from cosim.models.modelfile import load_model

    rows = read_validation(validation)
    priced = sorted({r["model"] for r in rows})
    n = len(timeline["power_w"])
    lo, hi = np.full(n, np.nan), np.full(n, np.nan)
    lines = []
    for name in dict.fromkeys(timeline["model"]):
        if name not in priced:
            raise CosimError(
                f"{validation}: no row priced with {name} (it has {', '.join(priced)}); run cosim validate --model {name} "
                f"... -o {validation}, or price the run with --model {priced[0]}"
            )
        cal = calibrate(rows, load_model(name))
        mine = np.flatnonzero(np.asarray(timeline["model"]) == name)
        for i in mine:
            lo[i], hi[i] = cal.bounds_w(float(timeline["power_w"][i]), float(timeline["freq_mhz"][i]))
        outside = sorted({float(timeline["freq_mhz"][i]) for i in mine if not math.isfinite(lo[i])})
        lines.append(
            f"{name}: the board's power interval (board_lo_w, board_hi_w) calibrated on {len(cal.programs)} training "
            f"programs of {validation}"
            + (
                f"; none at {', '.join(f'{f:g}' for f in outside)} MHz (calibrated at {', '.join(f'{f:g}' for f in cal.activity)} MHz)"
                if outside
                else ""
            )
        )
    timeline["board_lo_w"], timeline["board_hi_w"] = lo, hi
    return lines
