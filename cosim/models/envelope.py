"""One trust envelope for every CPU model: where its one operating-point function prices, flags, or refuses.

:func:`operating_point_power_w` is a core cluster's power at any clock, voltage (and temperature) and activity:
the model's own dynamic terms, and static power from one physical form (:mod:`cosim.models.static_form`) fitted to
the model's static polynomial at every point of its V-f table, used everywhere, table points included, so the
power is continuous, rises with V at every clock and along the curve, and is never negative; no window switches
formulas, so gem5's tick-rounded clocks reach the same function.  Around it:

- a voltage farther than :data:`OFF_CURVE_TOL_V` from the model's V-f curve (:func:`curve_voltage_v`) is flagged
  ``voltage_off_curve``, its interval widened by :func:`off_curve_half_width_w` (growing with the distance);
- above the top trained clock, up to ``band`` times it (``envelope.band_x_top_clock``), and below the lowest,
  rows are flagged ``extrapolated`` and widened (:func:`extrapolation_half_width_w`); the curve's voltage above
  the table is :func:`extrapolated_voltage`, with its own uncertainty;
- beyond the band: refused (:func:`refuse_beyond_band`) unless the caller asks to ``--extrapolate``; a voltage
  outside :data:`cosim.models.static_form.VOLTAGE_RANGE_V` is refused by :mod:`cosim.models.plausibility`.

The band and the widening are justified by refitting the A15 model on its Powmon rows up to 1600 MHz and
pricing its 1800 MHz rows (1.125x), see docs/explanation/envelope.md.
"""

from __future__ import annotations

import math

import numpy as np

from cosim.errors import CosimError
from cosim.models.clocks import FREQ_REL_TOL
from cosim.models.static_form import static_form
from cosim.models.walker import cluster_power_w

DEFAULT_BAND = 1.125  # the validated distance: 1600 -> 1800 MHz on the A15's own measured data
# Relative error added per unit of (f / f_top - 1): 90 % of the A15's 1800 MHz rows priced from 1600 MHz lie within
# 2 SER + 0.8 * 0.125 * P (+ the voltage term); checked on 1400 -> 1600 MHz (docs/explanation/limits.md)
DEFAULT_REL_ERROR_PER_X = 0.8
_TOL = FREQ_REL_TOL  # gem5 tick rounding


def band(model) -> float:
    """How far above its top trained clock a model is priced by extrapolation (a ratio >= 1)."""
    value = model.raw.get("envelope", {}).get("band_x_top_clock", DEFAULT_BAND)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 1:
        raise CosimError(f"{model.path}: envelope.band_x_top_clock must be a number >= 1 (1 prices nothing above the top clock)")
    return float(value)


def above_top(model, freq_mhz: np.ndarray) -> np.ndarray:
    """Rows above the model's top trained clock (gem5's tick rounding counts as equal)."""
    return np.asarray(freq_mhz, dtype=float) > model.train_freq_mhz[1] * (1 + _TOL)


def below_bottom(model, freq_mhz: np.ndarray) -> np.ndarray:
    """Rows below the model's lowest trained clock (gem5's tick rounding counts as equal)."""
    return np.asarray(freq_mhz, dtype=float) < model.train_freq_mhz[0] * (1 - _TOL)


def outside_clocks(model, freq_mhz: np.ndarray) -> np.ndarray:
    """Rows outside the model's trained clocks, above or below (priced by the form, flagged, widened)."""
    return above_top(model, freq_mhz) | below_bottom(model, freq_mhz)


def beyond_band(model, freq_mhz: np.ndarray) -> np.ndarray:
    """Rows above ``band`` times the top trained clock."""
    return np.asarray(freq_mhz, dtype=float) > model.train_freq_mhz[1] * band(model) * (1 + _TOL)


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


#: how far a row's voltage may lie from the model's V-f curve unflagged [V]: the farthest the measured rail voltage of
#: the A15's own training rows lies from their clock's mean (Powmon, 240 rows per clock: 18.1 mV at 1800 MHz, the
#: board's load line), rounded up, so the voltages a board reached at a clock while the model was fitted are on it
OFF_CURVE_TOL_V = 0.02


def continued_table_v(x: np.ndarray, xp: np.ndarray, fp: np.ndarray) -> np.ndarray:
    """A table ``(xp, fp)`` at ``x``: interpolated inside it, continued by the line through its two end points outside."""
    x = np.asarray(x, dtype=float)
    if len(xp) == 1:
        return np.full(x.shape, fp[0])
    y = np.interp(x, xp, fp)
    lo, hi = x < xp[0], x > xp[-1]
    y[lo] = fp[0] + (x[lo] - xp[0]) * (fp[1] - fp[0]) / (xp[1] - xp[0])
    y[hi] = fp[-1] + (x[hi] - xp[-1]) * (fp[-1] - fp[-2]) / (xp[-1] - xp[-2])
    return y


def table_clock_mhz(freq_mhz: np.ndarray, table_mhz: np.ndarray) -> np.ndarray:
    """The clock [MHz] at which a V-f table is read for each clock [MHz].

    gem5 keeps periods in whole ticks, so a table clock arrives up to :data:`FREQ_REL_TOL` off (1800 MHz as 1798.6):
    every clock within that window of a table point reads that point, and the clocks between two windows are
    stretched linearly onto the span between the two points; beyond the end points' windows the clock rejoins itself
    over one more window and is then read as it is (the continuations below and above the table are unchanged).  A
    voltage read through it is continuous in the clock, rises wherever the table does, and is exact at its clocks."""
    f = np.asarray(freq_mhz, dtype=float)
    t = np.asarray(table_mhz, dtype=float)
    quarter_gap = np.diff(t) / t[1:] / 4  # windows of points closer than 4 x 0.3 % shrink: they never overlap
    half = np.minimum(_TOL, np.minimum(np.r_[_TOL, quarter_gap], np.r_[quarter_gap, _TOL]))
    x = np.r_[t[0] * (1 - 2 * half[0]), np.column_stack([t * (1 - half), t * (1 + half)]).ravel(), t[-1] * (1 + 2 * half[-1])]
    y = np.r_[x[0], np.repeat(t, 2), x[-1]]
    return np.where((f < x[0]) | (f > x[-1]), f, np.interp(f, x, y))


def curve_voltage(model, freq_mhz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The model's V-f curve [V] at each clock [MHz] and its uncertainty [V]: its table read at
    :func:`table_clock_mhz`, interpolated between points, continued below its lowest point by the line through its two
    lowest ones and above its top as :func:`extrapolated_voltage` says (the only part with an uncertainty)."""
    f = np.atleast_1d(np.asarray(freq_mhz, dtype=float))
    tf = np.array([p[0] for p in model.vf_points])
    tv = np.array([p[1] for p in model.vf_points])
    at = table_clock_mhz(f, tf)
    v = continued_table_v(at, tf, tv)
    u = np.zeros(f.shape)
    up = at > tf[-1]
    if up.any():
        v[up], u[up] = extrapolated_voltage(model, at[up])
    return v.reshape(np.shape(freq_mhz)), u.reshape(np.shape(freq_mhz))


def curve_voltage_v(model, freq_mhz: np.ndarray) -> np.ndarray:
    """The model's V-f curve [V] at each clock [MHz] (:func:`curve_voltage`)."""
    return curve_voltage(model, freq_mhz)[0]


def static_at_w(model, freq_mhz: np.ndarray, voltage_v: np.ndarray, *, temperature_c: float | np.ndarray | None = None) -> np.ndarray:
    """The model's static power [W] at any clock [MHz], voltage [V] and die temperature [°C]: its one physical form
    (:mod:`cosim.models.static_form`), fitted to its static polynomial along its V-f curve, table points included.

    ``temperature_c`` None is the training board's temperature at each clock (the model as fitted); a model whose
    file states no temperature term ignores it (:func:`temperature_flag` says so)."""
    return static_form(model).static_w(freq_mhz, voltage_v, temperature_c)


def cluster_static_w(
    model,
    *,
    freq_mhz,
    voltage_v,
    temperature_c=None,
    busy_cores: int | None = None,
    powered_cores: int | None = None,
) -> np.ndarray:
    """A cluster's static power [W] at a clock [MHz], voltage [V], die temperature [°C] (None: the training board's at
    that clock), busy cores and powered cores (None: the model's ``cores_per_cluster``), numpy only: what a thermal
    loop calls each epoch.  ``busy_cores`` is accepted and does not change it: measured on Powmon's core masks 1-4,
    static power does not follow the busy cores beyond what the dynamic terms and the die temperature carry
    (docs/explanation/envelope.md); powered cores scale it by the assumed per-core share (:func:`cores_factor`)."""
    del busy_cores  # measured to have no effect of its own (see the docstring)
    scale = 1.0 if powered_cores is None else cores_factor(model, powered_cores)
    return static_at_w(model, freq_mhz, voltage_v, temperature_c=temperature_c) * scale


def temperature_flag(model, temperature_c: float | None) -> str:
    """The flag a given die temperature [°C] puts on every row (:func:`temperature_flags` of one row)."""
    return str(temperature_flags(model, temperature_c, 1)[0])


def temperature_flags(model, temperature_c: float | np.ndarray | None, n_rows: int) -> np.ndarray:
    """The flag of each of ``n_rows`` rows, for one die temperature [°C] or one per row: ``temperature_outside_training``
    beyond the range the model's temperature term was fitted on, ``temperature_not_modelled`` for a model with none
    ("" otherwise, and for no temperature given)."""
    if temperature_c is None:
        return np.full(n_rows, "", dtype=object)
    t = np.broadcast_to(np.asarray(temperature_c, dtype=float), n_rows)
    form = static_form(model)
    if form.trained_temperature_c is None:
        return np.full(n_rows, "temperature_not_modelled", dtype=object)
    lo, hi = form.trained_temperature_c
    return np.where((t >= lo) & (t <= hi), "", "temperature_outside_training").astype(object)


def off_curve_half_width_w(model, *, freq_mhz: np.ndarray, voltage_v: np.ndarray) -> np.ndarray:
    """What a voltage off the model's V-f curve adds to the interval [W] (before the core count scales it).

    With bootstrap refits of the static form in its file (``static_form.bootstrap``, fitted on the board's rows where
    voltage moves at one clock): the 95th percentile over the refits of how far each one's change from the curve,
    S_r(f, V) − S_r(f, V_curve), lies from the fitted one's, so the interval is what the parameter intervals allow.
    Without them (a form fitted at table points only): the spread between the fitted leakage and switching alone,
    the curve's static power times (V / V_curve)². 0 on the curve, growing with the distance either way."""
    f = np.asarray(freq_mhz, dtype=float)
    v = np.broadcast_to(np.asarray(voltage_v, dtype=float), f.shape)
    form = static_form(model)
    if form.replicates:
        return _per_distinct_point(f, v, lambda fu, vu: _off_curve_spread_w(model, form, fu, vu))
    vc = curve_voltage_v(model, f)
    return np.abs(form.static_w(f, v) - form.static_w(f, vc) * (v / vc) ** 2)


def _off_curve_spread_w(model, form, f: np.ndarray, v: np.ndarray) -> np.ndarray:
    """:func:`off_curve_half_width_w` over the bootstrap refits at 1-d points ``f`` [MHz], ``v`` [V]."""
    vc = curve_voltage_v(model, f)
    change = form.static_w(f, v) - form.static_w(f, vc)
    spread = np.abs(form.replicate_static_w(f, v) - form.replicate_static_w(f, vc) - change)
    return np.percentile(spread, 95, axis=0)


def _per_distinct_point(f: np.ndarray, v: np.ndarray, spread) -> np.ndarray:
    """``spread(f, v)`` evaluated once per distinct (clock, voltage) pair and spread back over ``f``'s shape: a run's
    epochs share a few operating points, and each point costs a column per bootstrap refit (hundreds) and a
    percentile over them."""
    points = np.stack([f.ravel(), np.ravel(v)], axis=1)
    if len(points) < 2:
        return np.asarray(spread(points[:, 0], points[:, 1])).reshape(f.shape)
    unique, inverse = np.unique(points, axis=0, return_inverse=True)
    return np.asarray(spread(unique[:, 0], unique[:, 1]))[np.ravel(inverse)].reshape(f.shape)


def static_spread_w(model, *, freq_mhz: np.ndarray, voltage_v: np.ndarray) -> np.ndarray:
    """The 95th percentile over the static form's bootstrap refits of |S_r − S| at (f, V) [W] (0 without refits):
    what the parameters' intervals leave open where no row was measured (above the top clock)."""
    f = np.asarray(freq_mhz, dtype=float)
    v = np.broadcast_to(np.asarray(voltage_v, dtype=float), f.shape)
    form = static_form(model)
    if not form.replicates:
        return np.zeros(f.shape)
    return _per_distinct_point(
        f, v, lambda fu, vu: np.percentile(np.abs(form.replicate_static_w(fu, vu) - form.static_w(fu, vu)), 95, axis=0)
    )


def voltage_off_curve(model, freq_mhz: np.ndarray, voltage_v: np.ndarray) -> np.ndarray:
    """Rows whose voltage lies more than :data:`OFF_CURVE_TOL_V` from the model's V-f curve (flag ``voltage_off_curve``)."""
    f = np.asarray(freq_mhz, dtype=float)
    return np.abs(np.asarray(voltage_v, dtype=float) - curve_voltage_v(model, f)) > OFF_CURVE_TOL_V + 1e-12


def operating_point_power_w(
    model,
    *,
    eph,
    freq_mhz: np.ndarray,
    voltage_v: np.ndarray,
    temperature_c: float | np.ndarray | None = None,
    static_scale: float = 1.0,
    interval: bool = True,
) -> dict[str, np.ndarray]:
    """A core cluster's power [W] at a clock [MHz], voltage [V], temperature [°C] and activity: the one function every
    command prices with.  Dynamic power is the model's own β·E·V²·f (Walker et al., Eq. 2), static power its physical
    form (:func:`static_at_w`) scaled by ``static_scale`` (the cores present, :func:`cores_factor`).

    ``eph`` are the model inputs [events/s per model core / MHz].  Returns ``term_<name>_w``, ``dynamic_w``,
    ``static_w``, ``power_w`` [W], ``dpower_dv_w_per_v`` [W/V] (exact; it carries a voltage's uncertainty into the
    interval) and ``off_curve_half_width_w`` [W] (:func:`off_curve_half_width_w`, scaled); ``interval=False`` leaves
    those two out, for callers that need the power alone (the leakage loop's rounds: the off-curve spread, a percentile
    over hundreds of refits, was most of their cost)."""
    f = np.asarray(freq_mhz, dtype=float)
    v = np.broadcast_to(np.asarray(voltage_v, dtype=float), f.shape)
    out = cluster_power_w(eph, f, v, model.dynamic, ())
    out["static_w"] = static_at_w(model, f, v, temperature_c=temperature_c) * static_scale
    out["power_w"] = out["dynamic_w"] + out["static_w"]
    if not interval:
        return out
    form = static_form(model)
    with np.errstate(divide="ignore", invalid="ignore"):
        dyn_dv = np.where(v != 0, 2 * out["dynamic_w"] / v, 0.0)  # β·E·V²·f: d/dV = 2 P_dyn / V
    out["dpower_dv_w_per_v"] = dyn_dv + form.dstatic_dv_w_per_v(f, v, temperature_c) * static_scale
    out["off_curve_half_width_w"] = off_curve_half_width_w(model, freq_mhz=f, voltage_v=v) * static_scale
    return out


def extrapolation_half_width_w(
    model,
    *,
    freq_mhz: np.ndarray,
    power_w: np.ndarray,
    dpower_dv_w_per_v: np.ndarray,
    voltage_u_v: np.ndarray,
    voltage_v: np.ndarray | None = None,
) -> np.ndarray:
    """What extrapolation adds to the interval's half-width [W] (0 inside the trained clocks).

    Two parts, added: the power's own relative error growing with the distance outside the trained clocks,
    ``envelope.rel_error_per_x`` times (f / f_top - 1) above them or (1 - f / f_lowest) below, times the power
    (calibrated on the A15's 1600 -> 1800 MHz validation, see docs/explanation/envelope.md), and the voltage's
    uncertainty carried through the power's slope in V; where ``voltage_v`` is given, a third: the static form's
    spread over its bootstrap refits there (:func:`static_spread_w`, the parameters' intervals).
    """
    rate = float(model.raw.get("envelope", {}).get("rel_error_per_x", DEFAULT_REL_ERROR_PER_X))
    f = np.asarray(freq_mhz, dtype=float)
    lo, hi = model.train_freq_mhz
    over = np.maximum(f / hi - 1.0, 0.0) * above_top(model, f) + np.maximum(1.0 - f / lo, 0.0) * below_bottom(model, f)
    out = rate * over * np.abs(power_w) + np.abs(dpower_dv_w_per_v) * np.asarray(voltage_u_v) * (over > 0)
    if voltage_v is not None and (over > 0).any():
        out = out + np.where(over > 0, static_spread_w(model, freq_mhz=f, voltage_v=voltage_v), 0.0)
    return out


def relative_ser(model) -> float | None:
    """``fit_rel.ser_rel``: a model with no SER of its own states a relative one from held-out data (models/README.md)."""
    value = model.raw.get("fit_rel", {}).get("ser_rel") if isinstance(model.raw, dict) else None
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise CosimError(f"{model.path}: fit_rel.ser_rel must be a number between 0 and 1 (a relative error)")
    return float(value)


def interval_half_width_w(
    model,
    *,
    freq_mhz: np.ndarray,
    power_w: np.ndarray,
    dpower_dv_w_per_v: np.ndarray,
    voltage_u_v: np.ndarray,
    voltage_v: np.ndarray | None = None,
    static_scale: float = 1.0,
    temperature_c: float | np.ndarray | None = None,
) -> np.ndarray:
    """The prediction interval's half-width [W]: 2 x the model's SER plus what extrapolation adds (in clock, and in
    voltage where ``voltage_v`` is given: :func:`off_curve_half_width_w`, scaled by ``static_scale``), plus the
    assumed per-core share's spread of the static power priced at ``temperature_c`` [°C] (None: the training board's
    at each clock), the same static power the row carries (:func:`powered_cores_half_width_w`).

    A model that publishes no SER has no interval inside its trained clocks and on its curve (nan), but its
    extrapolated rows (outside its clocks, or off its curve) still carry the extrapolation's own part, so they are
    never priced without one
    (such rows are flagged ``interval_extrapolation_only``, see :func:`interval_flags`).
    """
    extra = extrapolation_half_width_w(
        model, freq_mhz=freq_mhz, power_w=power_w, dpower_dv_w_per_v=dpower_dv_w_per_v, voltage_u_v=voltage_u_v, voltage_v=voltage_v
    )
    extrapolated = outside_clocks(model, freq_mhz)
    if voltage_v is not None:
        extra = extra + static_scale * off_curve_half_width_w(model, freq_mhz=freq_mhz, voltage_v=voltage_v)
        extrapolated = extrapolated | voltage_off_curve(model, freq_mhz, voltage_v)
    extra = extra + powered_cores_half_width_w(
        model, freq_mhz=freq_mhz, voltage_v=voltage_v, static_scale=static_scale, temperature_c=temperature_c
    )
    if model.ser_w is not None:
        return 2.0 * model.ser_w + extra
    rel = relative_ser(model)
    if rel is not None:
        return 2.0 * rel * np.abs(np.asarray(power_w, dtype=float)) + extra
    return np.where(extrapolated, extra, np.nan)


def interval_flags(model, freq_mhz: np.ndarray) -> np.ndarray:
    """Rows whose interval is the extrapolation's part alone (the model publishes no SER, relative or absolute)."""
    return outside_clocks(model, freq_mhz) & (model.ser_w is None) & (relative_ser(model) is None)


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


def per_core_static_fraction(model) -> float:
    """Share of the cluster's static power that belongs to its cores (the rest, L2 and interconnect, is shared)."""
    value = model.raw.get("cores", {}).get("per_core_static_fraction", 1.0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise CosimError(f"{model.path}: cores.per_core_static_fraction must be a number from 0 to 1")
    return float(value)


def per_core_static_interval(model) -> tuple[float, float]:
    """The interval of the per-core share (``cores.interval``; the share itself where the file states none)."""
    phi = per_core_static_fraction(model)
    lo, hi = model.raw.get("cores", {}).get("interval", [phi, phi])
    if not 0 <= lo <= phi <= hi <= 1:
        raise CosimError(f"{model.path}: cores.interval must be [lo, hi] with 0 <= lo <= per_core_static_fraction <= hi <= 1")
    return float(lo), float(hi)


def powered_cores_half_width_w(model, *, freq_mhz, voltage_v, static_scale: float, temperature_c=None) -> np.ndarray | float:
    """What the assumed per-core share adds to the interval [W] where a cluster's powered cores differ from the
    model's (``static_scale`` ≠ 1): the static power's spread over the share's interval.  The scale is
    1 − phi(1 − n/N), so 1 − n/N = (1 − scale)/phi and the spread is S·|1 − n/N|·max(phi − lo, hi − phi), S the
    four-core static power at the die temperature the row is priced at (``temperature_c`` [°C]; None: the curve's)."""
    if static_scale == 1.0 or voltage_v is None:
        return 0.0
    phi = per_core_static_fraction(model)
    lo, hi = per_core_static_interval(model)
    if phi == 0:
        return 0.0
    share = abs(1.0 - static_scale) / phi
    return static_at_w(model, freq_mhz, voltage_v, temperature_c=temperature_c) * share * max(phi - lo, hi - phi)


def powered_cores_assumed(model, n_cpus: int) -> bool:
    """Whether a cluster of ``n_cpus`` powered cores relies on the assumed per-core share (flag ``powered_cores_assumed``)."""
    return n_cpus != model.cores_per_cluster and per_core_static_fraction(model) > 0


def cores_factor(model, n_cpus: int) -> float:
    """Static power scale for ``n_cpus`` cores present in a cluster trained with ``cores_per_cluster``: 1 - phi + phi * n / N."""
    phi = per_core_static_fraction(model)
    return 1.0 - phi + phi * n_cpus / model.cores_per_cluster
