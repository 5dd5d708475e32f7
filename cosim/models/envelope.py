"""One trust envelope for every model: priced as trained, priced by physical extrapolation, or refused.

- Inside the trained clocks the model is used as published at its V-f table's points.  Between them the
  voltage is interpolated, which puts the static polynomial off the V-f curve it was fitted along, where it
  swings with V at a fixed clock (GemStone's A15: 8-25 W/V; +8/+16/+15 % at 1500/1600/1700 MHz between its
  1400 and 1800 MHz points): there the static power is the physical form below, fitted to the polynomial at
  the table's points (2 mW rms for that model), as above the top (docs/explanation/validation.md).
- Above its top trained clock, up to ``band`` times it (the model file's ``envelope.band_x_top_clock``):
  voltage from the model's published operating points beyond its table where it lists them, else the
  mean of two continuations of its V-f table (a line through the top two points, a parabola through the
  top three), half their spread being the voltage's own uncertainty; dynamic power the model's own
  beta*E*V^2*f; static power never from the raw polynomial but from a physical form fitted to that
  polynomial over the trained V-f table (:func:`static_fit`), which rises with V and f.  Rows are
  flagged ``extrapolated`` and their interval widened (:func:`extrapolation_half_width_w`).
- Beyond the band: refused (:func:`refuse_beyond_band`) unless the caller asks to ``--extrapolate``.

The band and the widening are justified by refitting the A15 model on its Powmon rows up to 1600 MHz and
pricing its 1800 MHz rows (1.125x), see docs/explanation/limits.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cosim.errors import CosimError
from cosim.models.clocks import FREQ_REL_TOL
from cosim.models.walker import cluster_power_w, static_power_w

DEFAULT_BAND = 1.125  # the validated distance: 1600 -> 1800 MHz on the A15's own measured data
# Relative error added per unit of (f / f_top - 1): 90 % of the A15's 1800 MHz rows priced from 1600 MHz lie within
# 2 SER + 0.8 * 0.125 * P (+ the voltage term); checked on 1400 -> 1600 MHz (docs/explanation/limits.md)
DEFAULT_REL_ERROR_PER_X = 0.8
_TOL = FREQ_REL_TOL  # gem5 tick rounding
_K_GRID = np.arange(0.0, 10.01, 0.5)  # leakage exponent [1/V]: 0 (no V dependence) to 10 /V


@dataclass(frozen=True)
class StaticFit:
    """S(f, V) = a*f*V^2 + b*V*exp(k*V) [W]: background switching plus leakage, both >= 0 so S rises with V and f."""

    a: float  # [W / (MHz V^2)]
    b: float  # [W / V]
    k: float  # [1/V]
    points_mhz: tuple[float, ...]  # table clocks it was fitted on
    rms_w: float  # residual against the model's own static term at those points [W]

    def static_w(self, freq_mhz: np.ndarray, voltage_v: np.ndarray) -> np.ndarray:
        f = np.asarray(freq_mhz, dtype=float)
        v = np.asarray(voltage_v, dtype=float)
        return self.a * f * v**2 + self.b * v * np.exp(self.k * v)


def band(model) -> float:
    """How far above its top trained clock a model is priced by extrapolation (a ratio >= 1)."""
    value = model.raw.get("envelope", {}).get("band_x_top_clock", DEFAULT_BAND)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 1:
        raise CosimError(f"{model.path}: envelope.band_x_top_clock must be a number >= 1 (1 prices nothing above the top clock)")
    return float(value)


def above_top(model, freq_mhz: np.ndarray) -> np.ndarray:
    """Rows above the model's top trained clock (gem5's tick rounding counts as equal)."""
    return np.asarray(freq_mhz, dtype=float) > model.train_freq_mhz[1] * (1 + _TOL)


def beyond_band(model, freq_mhz: np.ndarray) -> np.ndarray:
    """Rows above ``band`` times the top trained clock."""
    return np.asarray(freq_mhz, dtype=float) > model.train_freq_mhz[1] * band(model) * (1 + _TOL)


def _trained_table(model) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = model.train_freq_mhz
    pts = [(f, v) for f, v in model.vf_points if lo * (1 - _TOL) <= f <= hi * (1 + _TOL)] or list(model.vf_points)
    return np.array([p[0] for p in pts]), np.array([p[1] for p in pts])


def _published_points(model) -> tuple[np.ndarray, np.ndarray] | None:
    pts = model.raw.get("envelope", {}).get("operating_points_mhz_v")
    if not pts:
        return None
    return np.array([float(p[0]) for p in pts]), np.array([float(p[1]) for p in pts])


def extrapolated_voltage(model, freq_mhz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Voltage [V] above the V-f table and its uncertainty [V] (half the spread of the two continuations).

    Published operating points beyond the table (``envelope.operating_points_mhz_v``) are
    interpolated instead, with no added uncertainty.
    """
    f = np.asarray(freq_mhz, dtype=float)
    tf = np.array([p[0] for p in model.vf_points])
    tv = np.array([p[1] for p in model.vf_points])
    published = _published_points(model)
    if published is not None:
        pf = np.concatenate([tf, published[0]])
        pv = np.concatenate([tv, published[1]])
        order = np.argsort(pf)
        return np.interp(f, pf[order], pv[order]), np.zeros(f.shape)
    if len(tf) == 1:
        return np.full(f.shape, tv[0]), np.zeros(f.shape)
    line = tv[-1] + (f - tf[-1]) * (tv[-1] - tv[-2]) / (tf[-1] - tf[-2])
    if len(tf) < 3:
        return line, np.zeros(f.shape)
    parabola = np.polyval(np.polyfit(tf[-3:], tv[-3:], 2), f)
    parabola = np.maximum(parabola, line)  # a concave table top would bend V down: keep the line as the floor
    return (line + parabola) / 2, np.abs(parabola - line) / 2


def static_fit(model) -> StaticFit:
    """The physical static form fitted to the model's static term at every trained V-f table point.

    Every point, not only the top ones where the voltage scales: there clock and voltage rise together, so
    the clock term and the leakage exponent trade off; the table's bottom, where the voltage stays flat,
    pins the clock term (validated on the A15's own data, docs/explanation/envelope.md).  ``a`` and ``b``
    are non-negative least squares for each ``k`` on a grid, and the ``k`` with the smallest residual wins.
    """
    f, v = _trained_table(model)
    s = static_power_w(f, v, model.static)
    best = None
    for k in _K_GRID:
        cols = np.c_[f * v**2, v * np.exp(k * v)]
        coef = _nnls2(cols, s)
        rms = float(np.sqrt(np.mean((cols @ coef - s) ** 2)))
        if best is None or rms < best.rms_w - 1e-12:
            best = StaticFit(a=float(coef[0]), b=float(coef[1]), k=float(k), points_mhz=tuple(map(float, f)), rms_w=rms)
    assert best is not None
    if best.a == 0 and best.b == 0:
        raise CosimError(
            f"{model.path}: the static term of {model.name} is not positive at its trained clocks "
            f"({', '.join(f'{x:g}' for x in f)} MHz), so no physical extrapolation fits it; price it inside its training range"
        )
    return best


def _nnls2(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Non-negative least squares with two columns: the unconstrained answer, else the better single column."""
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    if (coef >= 0).all():
        return coef
    best, best_err = np.zeros(2), float(np.sum(y**2))
    for j in range(2):
        c = max(0.0, float(x[:, j] @ y) / float(x[:, j] @ x[:, j]))
        err = float(np.sum((y - c * x[:, j]) ** 2))
        if err < best_err:
            best, best_err = np.where(np.arange(2) == j, c, 0.0), err
    return best


def between_table_points(model, freq_mhz: np.ndarray) -> np.ndarray:
    """Rows inside the trained clocks whose clock is none of the V-f table's (gem5's tick rounding counts as equal)."""
    f = np.asarray(freq_mhz, dtype=float)
    table_f = np.array([p[0] for p in model.vf_points])
    flat = f.reshape(-1)
    on_table = (np.abs(flat[:, None] - table_f[None, :]) <= _TOL * table_f[None, :]).any(axis=1).reshape(f.shape)
    lo, hi = model.train_freq_mhz
    return ~on_table & (f >= lo * (1 - _TOL)) & (f <= hi * (1 + _TOL))


def trained_clock_mhz(model, freq_mhz: np.ndarray) -> np.ndarray:
    """The clock [MHz] the model was measured at for each row: a V-f table clock where the row is within gem5's tick
    rounding of it (1798.56 MHz is the table's 1800), else the row's own.

    The static polynomial couples f and V steeply off its table (the A15's falls 9.6 mW per MHz at 1.1741 V), so
    evaluating it at the rounded clock instead of the table's moved a run's static power by 1.7 % and made the
    what-if at 1800 MHz differ from ``cosim power`` of the same run at gem5's 1798.56 MHz.
    """
    f = np.array(freq_mhz, dtype=float, copy=True)
    table = np.array([p[0] for p in model.vf_points])
    if f.size == 0:
        return f
    near = np.abs(f[..., None] - table) <= _TOL * table
    hit = near.any(axis=-1)
    f[hit] = table[np.argmax(near, axis=-1)[hit]]
    return f


def table_voltage_v(model, freq_mhz: np.ndarray) -> np.ndarray:
    """The model's V-f table voltage [V] at clocks inside its table (interpolated between its points)."""
    tf = np.array([p[0] for p in model.vf_points])
    tv = np.array([p[1] for p in model.vf_points])
    return np.interp(np.asarray(freq_mhz, dtype=float), tf, tv)


def off_training(model, freq_mhz: np.ndarray, voltage_v: np.ndarray) -> np.ndarray:
    """Rows the static polynomial was not fitted on from above: a clock above the top trained one, or a voltage outside
    the trained voltages at a clock from the bottom trained one up (below the bottom clock the polynomial stays, and
    :mod:`cosim.models.plausibility` judges it)."""
    f = trained_clock_mhz(model, freq_mhz)
    v = np.broadcast_to(np.asarray(voltage_v, dtype=float), f.shape)
    lo, hi = model.train_freq_mhz
    lo_v, hi_v = model.train_voltage_v
    return (f > hi) | ((f >= lo * (1 - _TOL)) & ((v < lo_v - 1e-9) | (v > hi_v + 1e-9)))


def static_anchor(model, freq_mhz: np.ndarray, voltage_v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The trained operating point each row's static power continues from -> (freq_mhz, voltage_v, static_w [W]): at a
    trained clock, the row's voltage clipped to the trained voltages (the polynomial's edge, so the continuation meets
    it there); outside the trained clocks, the nearest trained clock at its V-f table voltage (the validated
    1600 -> 1800 MHz continuation, docs/explanation/envelope.md).  The static power is the polynomial's there."""
    lo, hi = model.train_freq_mhz
    lo_v, hi_v = model.train_voltage_v
    f = trained_clock_mhz(model, freq_mhz)
    fa = np.clip(f, lo, hi)
    v = np.broadcast_to(np.asarray(voltage_v, dtype=float), f.shape)
    va = np.where((f >= lo * (1 - _TOL)) & (f <= hi), np.clip(v, lo_v, hi_v), table_voltage_v(model, fa))
    return fa, va, static_power_w(fa, va, model.static)


def envelope_static_w(model, freq_mhz: np.ndarray, voltage_v: np.ndarray) -> np.ndarray:
    """Static power [W]: the model's polynomial at its V-f table's clocks and trained voltages; off them
    (:func:`off_training`) the polynomial at the nearest trained operating point times the physical form's growth from
    there (:func:`static_fit`), so it meets the polynomial where training ends and rises with V and f beyond; between
    the table's clocks (:func:`between_table_points`) the physical form itself, since a polynomial fitted on a few
    table points overshoots between them (GemStone's A15: +8 / +16 / +15 % at 1500 / 1600 / 1700 MHz against the
    measured idle cluster, docs/explanation/validation.md)."""
    f = trained_clock_mhz(model, freq_mhz)
    v = np.broadcast_to(np.asarray(voltage_v, dtype=float), f.shape)
    out = np.array(static_power_w(f, v, model.static), dtype=float)
    off = off_training(model, f, v)
    if off.any():
        fit = static_fit(model)
        fa, va, sa = static_anchor(model, f[off], v[off])
        with np.errstate(divide="ignore", invalid="ignore"):
            out[off] = sa * fit.static_w(f[off], v[off]) / fit.static_w(fa, va)
    between = between_table_points(model, f) & ~off
    if between.any():
        try:
            fit = static_fit(model)
        except CosimError:
            return out  # a static term not positive at the table's points has no physical form: priced as published
        out[between] = fit.static_w(f[between], v[between])
    return out


def extrapolation_half_width_w(
    model, *, freq_mhz: np.ndarray, power_w: np.ndarray, dpower_dv_w_per_v: np.ndarray, voltage_u_v: np.ndarray
) -> np.ndarray:
    """What extrapolation adds to the interval's half-width [W] (0 inside the trained clocks).

    Two parts, added: the power's own relative error growing with the distance beyond the top clock,
    ``envelope.rel_error_per_x`` times (f / f_top - 1) times the power (calibrated on the A15's
    1600 -> 1800 MHz validation, see docs/explanation/limits.md), and the voltage's uncertainty carried
    through the power's slope in V.
    """
    rate = float(model.raw.get("envelope", {}).get("rel_error_per_x", DEFAULT_REL_ERROR_PER_X))
    f = np.asarray(freq_mhz, dtype=float)
    over = np.maximum(f / model.train_freq_mhz[1] - 1.0, 0.0) * above_top(model, f)
    return rate * over * np.abs(power_w) + np.abs(dpower_dv_w_per_v) * np.asarray(voltage_u_v) * (over > 0)


def voltage_static_half_width_w(model, *, freq_mhz: np.ndarray, voltage_v: np.ndarray) -> np.ndarray:
    """What a voltage outside the trained ones adds to the interval [W] at a trained clock: the static power's spread
    between switching alone (V^2 from the anchor, :func:`static_anchor`) and the fitted leakage's growth, the part no
    measurement at that voltage pins (0 elsewhere; clocks above the top one are widened by the clock's distance)."""
    f = trained_clock_mhz(model, freq_mhz)
    v = np.broadcast_to(np.asarray(voltage_v, dtype=float), f.shape)
    rows = off_training(model, f, v) & (f <= model.train_freq_mhz[1])
    out = np.zeros(f.shape)
    if rows.any():
        fa, va, sa = static_anchor(model, f[rows], v[rows])
        out[rows] = np.abs(envelope_static_w(model, f[rows], v[rows]) - sa * (f[rows] / fa) * (v[rows] / va) ** 2)
    return out


def interval_half_width_w(
    model,
    *,
    freq_mhz: np.ndarray,
    power_w: np.ndarray,
    dpower_dv_w_per_v: np.ndarray,
    voltage_u_v: np.ndarray,
    voltage_v: np.ndarray | None = None,
    static_scale: float = 1.0,
) -> np.ndarray:
    """The prediction interval's half-width [W]: 2 x the model's SER plus what extrapolation adds (in clock, and in
    voltage where ``voltage_v`` is given: :func:`voltage_static_half_width_w`, scaled by ``static_scale``).

    A model that publishes no SER has no interval inside its trained clocks (nan), but its extrapolated rows
    still carry the extrapolation's own part, so a clock above the trained ones is never priced without one
    (such rows are flagged ``interval_extrapolation_only``, see :func:`interval_flags`).
    """
    extra = extrapolation_half_width_w(
        model, freq_mhz=freq_mhz, power_w=power_w, dpower_dv_w_per_v=dpower_dv_w_per_v, voltage_u_v=voltage_u_v
    )
    if voltage_v is not None:
        extra = extra + static_scale * voltage_static_half_width_w(model, freq_mhz=freq_mhz, voltage_v=voltage_v)
    if model.ser_w is not None:
        return 2.0 * model.ser_w + extra
    return np.where(above_top(model, freq_mhz), extra, np.nan)


def interval_flags(model, freq_mhz: np.ndarray) -> np.ndarray:
    """Rows whose interval is the extrapolation's part alone (the model publishes no SER)."""
    return above_top(model, freq_mhz) & (model.ser_w is None)


#: how a refusal of a clock beyond a model's band starts its ways out (cosim explore replaces them with a study's own)
BAND_WAYS_OUT = "; price it with --extrapolate"


def refuse_beyond_band(
    model,
    freq_mhz: np.ndarray,
    where,
    *,
    inside: str | None = "cosim whatif --freqs",
    other_model: str = "another --model",
    extrapolated_refusal=None,
) -> None:
    """Refuse the first row beyond the extrapolation band, naming it (``where(i)``) and the ways out the command has
    (``inside``: how to ask for clocks inside the band from where the user is, None where there is none;
    ``other_model``: how to give another model).  ``extrapolated_refusal(i)``: why the extrapolated price of row ``i``
    would be refused in turn ("" if it would not); where it would, ``--extrapolate`` is not offered, the reason is said."""
    bad = beyond_band(model, freq_mhz)
    if not bad.any():
        return
    i = int(np.flatnonzero(bad)[0])
    hi = model.train_freq_mhz[1]
    b = band(model)
    more = f" (and {int(bad.sum()) - 1} more)" if bad.sum() > 1 else ""
    head = (
        f"{where(i)}: {freq_mhz[i]:g} MHz is {freq_mhz[i] / hi:.3g}x {model.name}'s top trained clock {hi:g} MHz, beyond its "
        f"extrapolation band ({b:g}x, up to {hi * b:g} MHz){more}"
    )
    inside_way = f"at clocks inside the band with {inside}, " if inside else ""
    why_not = extrapolated_refusal(i) if extrapolated_refusal is not None else ""
    if why_not:  # a way out must lead somewhere: --extrapolate would be refused in turn
        raise CosimError(
            f"{head}; --extrapolate would not price it either ({why_not}): price it {inside_way + 'or ' if inside_way else ''}with {other_model}"
        )
    raise CosimError(f"{head}{BAND_WAYS_OUT} (flagged, widened interval), {inside_way}or with {other_model}")


_DV = 1e-3  # [V], the step of the slopes' central differences


def envelope_static_dv_w_per_v(model, freq_mhz: np.ndarray, voltage_v: np.ndarray) -> np.ndarray:
    """The envelope's static power's slope in V [W/V] (a central difference): it carries the voltage's uncertainty
    into the interval."""
    f = np.asarray(freq_mhz, dtype=float)
    v = np.broadcast_to(np.asarray(voltage_v, dtype=float), f.shape)
    return (envelope_static_w(model, f, v + _DV) - envelope_static_w(model, f, v - _DV)) / (2 * _DV)


def envelope_power_w(model, eph, freq_mhz: np.ndarray, voltage_v: np.ndarray, *, static_scale: float = 1.0) -> dict[str, np.ndarray]:
    """:func:`cosim.models.walker.cluster_power_w` with the envelope's static term, plus ``dpower_dv_w_per_v``.

    ``static_scale`` scales the static power and its slope alike (the cores present, :func:`cores_factor`).  The
    slope in V [W/V] (central differences) carries the voltage's uncertainty into the interval.
    """
    f = np.asarray(freq_mhz, dtype=float)
    v = np.broadcast_to(np.asarray(voltage_v, dtype=float), f.shape)
    out = cluster_power_w(eph, f, v, model.dynamic, ())
    out["static_w"] = envelope_static_w(model, f, v) * static_scale
    out["power_w"] = out["dynamic_w"] + out["static_w"]
    hi = cluster_power_w(eph, f, v + _DV, model.dynamic, ())["dynamic_w"]
    lo = cluster_power_w(eph, f, v - _DV, model.dynamic, ())["dynamic_w"]
    out["dpower_dv_w_per_v"] = (hi - lo) / (2 * _DV) + envelope_static_dv_w_per_v(model, f, v) * static_scale
    return out


def per_core_static_fraction(model) -> float:
    """Share of the cluster's static power that belongs to its cores (the rest, L2 and interconnect, is shared)."""
    value = model.raw.get("cores", {}).get("per_core_static_fraction", 1.0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise CosimError(f"{model.path}: cores.per_core_static_fraction must be a number from 0 to 1")
    return float(value)


def cores_factor(model, n_cpus: int) -> float:
    """Static power scale for ``n_cpus`` cores present in a cluster trained with ``cores_per_cluster``: 1 - phi + phi * n / N."""
    phi = per_core_static_fraction(model)
    return 1.0 - phi + phi * n_cpus / model.cores_per_cluster
