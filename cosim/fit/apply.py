"""Apply a model to measured board data and compare with measured power."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.models.envelope import (
    interval_flags,
    interval_half_width_w,
    operating_point_power_w,
    refuse_beyond_band,
    temperature_flags,
    voltage_off_curve,
)
from cosim.models.modelfile import Model, operating_point
from cosim.models.plausibility import implausible_reasons, refuse_implausible
from cosim.models.voltage import voltage_under_load
from cosim.readers.measured import MeasuredInputs

VOLTAGE_SOURCES = ("measured", "table", "voltage-model")


def apply_model(
    model: Model,
    measured: MeasuredInputs,
    *,
    voltage: str = "measured",
    keep_implausible: bool = False,
    extrapolate: bool = False,
    source: str = "measured table",
    temperature_c: np.ndarray | None = None,
) -> pd.DataFrame:
    """Predicted power per measured row: ``input_row`` (the row's line in the input file, header = line 1),
    ``power_w``, ``dynamic_w``, ``static_w``, ``term_*_w``, ``voltage_v``.

    The measured rates are per-core averages [events/s], which is the model's input
    once divided by the frequency [MHz].  ``voltage`` picks the voltage the model is
    given: the measured one, the model's V-f table, or its voltage model (Walker
    Section VIII: what a run-time manager or a simulator, which cannot measure it, has).  ``temperature_c`` [°C]
    per row prices static power at the die's temperature (None: the training board's along the curve; a table's own
    temperature is another session's, which like its voltage the model does not know: docs/explanation/envelope.md);
    given, it is written as ``temperature_c`` and rows outside the model's trained temperatures are flagged
    ``temperature_outside_training`` (every row ``temperature_not_modelled`` for a model with no term).
    Rows outside the training range are flagged in ``extrapolated``; rows above its top clock are priced
    by the model's envelope (:mod:`cosim.models.envelope`), beyond its band refused unless ``extrapolate``.
    ``power_lo_w``/``power_hi_w`` are +-2 SER, widened by the extrapolation (without an SER: nan, or above the top clock the extrapolation's part alone).  A row whose
    frequency or voltage is not a positive number, or whose rates are missing, has
    no value (nan, ``no_value`` true).  Physically implausible rows (see
    :mod:`cosim.models.plausibility`) are refused, naming the first, unless
    ``keep_implausible`` keeps them flagged, with the values computed.
    """
    if voltage not in VOLTAGE_SOURCES:
        raise CosimError(f"voltage source '{voltage}': use one of {', '.join(VOLTAGE_SOURCES)}")
    with np.errstate(divide="ignore", invalid="ignore"):
        eph = {e: rate / measured.freq_mhz for e, rate in measured.rates.items()}
    f = measured.freq_mhz
    rows = input_rows(measured)
    if not extrapolate:
        refuse_beyond_band(model, f, lambda i: f"{source}: row {rows[i]} ({model.name})", inside=None, other_model="another MODEL")
    table_op = operating_point(model, f)
    table_u = table_op.voltage_u_v if table_op.voltage_u_v is not None else np.zeros(len(f))
    if voltage == "measured":
        v, v_u = measured.voltage_v, np.zeros(len(f))
    elif voltage == "table":
        v, v_u = table_op.voltage_v, table_u
    else:
        v, v_u = voltage_under_load(model, f, eph), table_u
    power = operating_point_power_w(model, eph=eph, freq_mhz=f, voltage_v=v, temperature_c=temperature_c)
    slope = power.pop("dpower_dv_w_per_v")
    del power["off_curve_half_width_w"]  # interval_half_width_w adds it
    no_value = ~(np.isfinite(f) & (f > 0) & np.isfinite(v) & (v > 0) & np.isfinite(power["power_w"]))
    for values in power.values():
        values[no_value] = np.nan
    reasons = implausible_reasons(
        model, power_w=power["power_w"], static_w=power["static_w"], freq_mhz=f, voltage_v=v, eph=eph, n_cpus=model.cores_per_cluster
    )
    bad = reasons != ""
    if not keep_implausible:
        refuse_implausible(reasons, lambda i: f"{source}: row {rows[i]} ({model.name})", "check that row's columns")
    op = operating_point(model, f, v)
    half = interval_half_width_w(model, freq_mhz=f, power_w=power["power_w"], dpower_dv_w_per_v=slope, voltage_u_v=v_u, voltage_v=v)
    out = pd.DataFrame({"input_row": rows, **power})
    out["power_lo_w"] = np.maximum(out["power_w"] - half, 0.0)  # power is never negative
    out["power_hi_w"] = out["power_w"] + half
    out["voltage_v"] = v
    heat = temperature_flags(model, temperature_c, len(f))
    if temperature_c is not None:
        out["temperature_c"] = np.broadcast_to(np.asarray(temperature_c, dtype=float), len(f))
    off_curve = voltage_off_curve(model, f, v)
    out["extrapolated"] = op.freq_outside_training | op.voltage_outside_training | off_curve
    out["no_value"] = no_value
    out["implausible"] = bad
    out["implausible_reason"] = reasons
    named = ("extrapolated", "voltage_off_curve", "interval_extrapolation_only", "no_value", "implausible")
    out["flags"] = [
        ";".join([name for name, on in zip(named, row[:-1]) if on] + ([row[-1]] if row[-1] else []))
        for row in zip(out["extrapolated"], off_curve, interval_flags(model, f), no_value, bad, heat)
    ]
    return out


#: die temperature columns a measured table may carry [°C], first match used (Powmon/GemStone: the cluster's average
#: of its sensors; ARMPM: the A15's sensor; cosim's own outputs: temperature_c)
TEMPERATURE_COLUMNS = ("Average Temperature {label}", "CPU(4) Temperature(C)", "temperature_c")


def default_temperature_column(model, measured: MeasuredInputs) -> str | None:
    """The table's die temperature column that ``cosim apply`` prices static power at by default: only for a model
    with a temperature term (``static_form.temperature``), the first of :data:`TEMPERATURE_COLUMNS` present."""
    from cosim.models.static_form import static_form

    if static_form(model).trained_temperature_c is None:
        return None
    label = measured.label or ""
    for name in TEMPERATURE_COLUMNS:
        column = name.format(label=label)
        if column in measured.table.columns:
            return column
    return None


def input_rows(measured: MeasuredInputs) -> np.ndarray:
    """Each measured row's line in its input file (header = line 1, so the first data row is 2)."""
    if measured.input_row is not None:
        return np.asarray(measured.input_row, dtype=np.int64)
    return np.arange(len(measured.freq_mhz), dtype=np.int64) + 2


def mape_pct(predicted: np.ndarray, measured: np.ndarray) -> float:
    """Mean absolute percentage error [%] over rows with a finite, non-zero measurement."""
    predicted = np.asarray(predicted, dtype=float)
    measured = np.asarray(measured, dtype=float)
    ok = np.isfinite(predicted) & np.isfinite(measured) & (measured != 0)
    if not ok.any():
        raise CosimError("no row has both a prediction and a non-zero measured power to compare")
    return float(np.mean(np.abs(predicted[ok] - measured[ok]) / np.abs(measured[ok])) * 100.0)
