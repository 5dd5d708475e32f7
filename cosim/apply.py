"""Apply a model to measured board data and compare with measured power."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.models.modelfile import Model, operating_point
from cosim.models.walker import cluster_power_w
from cosim.readers.measured import MeasuredInputs


def apply_model(model: Model, measured: MeasuredInputs) -> pd.DataFrame:
    """Predicted power per measured row: ``power_w``, ``dynamic_w``, ``static_w``, ``term_*_w`` [W].

    The measured rates are per-core averages [events/s], which is the model's input
    once divided by the frequency [MHz].  Rows outside the training range are flagged in ``extrapolated``.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        eph = {e: rate / measured.freq_mhz for e, rate in measured.rates.items()}
    power = cluster_power_w(eph, measured.freq_mhz, measured.voltage_v, model.dynamic, model.static)
    op = operating_point(model, measured.freq_mhz, voltage_v=None)
    out = pd.DataFrame(power)
    outside_v = (measured.voltage_v < model.train_voltage_v[0] - 1e-9) | (measured.voltage_v > model.train_voltage_v[1] + 1e-9)
    out["extrapolated"] = op.freq_outside_training | outside_v
    return out


def mape_pct(predicted: np.ndarray, measured: np.ndarray) -> float:
    """Mean absolute percentage error [%] over rows with a finite, non-zero measurement."""
    predicted = np.asarray(predicted, dtype=float)
    measured = np.asarray(measured, dtype=float)
    ok = np.isfinite(predicted) & np.isfinite(measured) & (measured != 0)
    if not ok.any():
        raise CosimError("no row has both a prediction and a non-zero measured power to compare")
    return float(np.mean(np.abs(predicted[ok] - measured[ok]) / np.abs(measured[ok])) * 100.0)
