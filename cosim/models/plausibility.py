"""Is a priced epoch physically possible?  Checks that apply to any Walker-formulation model.

A regression model answers for any input, including inputs no chip can produce
and operating points far from its training data, where its static polynomial
(large coefficients that cancel) can swing to hundreds of watts either way.  Each
function returns, per row, the reason the row is implausible, or "" when it is
fine; the timeline and ``cosim apply`` refuse such rows unless told to keep them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from cosim.errors import CosimError
from cosim.models.modelfile import Model
from cosim.models.walker import static_power_w

# Steepest leakage growth with voltage allowed above the top clock [1/V]: the envelope's fit searches 0-10 /V.
K_MAX_PER_V = 10.0


def implausible_reasons(
    model: Model,
    *,
    power_w: np.ndarray,
    static_w: np.ndarray,
    freq_mhz: np.ndarray,
    voltage_v: np.ndarray,
    eph: Mapping[str, np.ndarray],
    n_cpus: int,
) -> np.ndarray:
    """Why each row is implausible ("" where it is not); the first failed check is named.

    ``eph`` are the model inputs [events/s per model core / MHz], ``n_cpus`` the
    simulated cores priced by the model (the power bound grows with them).
    Rows whose power is nan (missing inputs) are not judged here.
    """
    n = len(power_w)
    reasons = np.full(n, "", dtype=object)

    def mark(bad: np.ndarray, text) -> None:
        for i in np.flatnonzero(bad & (reasons == "")):
            reasons[i] = text(i)

    mark(np.isinf(power_w), lambda i: f"power is {power_w[i]:g} W")
    _event_rates(model, eph, mark)
    _static_extrapolation(model, static_w, freq_mhz, voltage_v, mark)
    mark(power_w < 0, lambda i: f"power is negative ({power_w[i]:.4g} W)")
    if model.max_power_w is not None:
        bound = model.max_power_w * max(1.0, n_cpus / model.cores_per_cluster)
        hi_f = model.train_freq_mhz[1]

        def too_high(i):
            where = (
                f" at {freq_mhz[i]:g} MHz, {freq_mhz[i] / hi_f:.2g}x the model's top clock {hi_f:g} MHz, where its static "
                f"term extrapolates to {static_w[i]:.4g} W"
                if freq_mhz[i] > hi_f * 1.003
                else ""
            )
            return f"power {power_w[i]:.4g} W{where} is above the model's plausible maximum {bound:.4g} W for {n_cpus} core(s)"

        mark(power_w > bound, too_high)
    return reasons


def refuse_implausible(reasons: np.ndarray, where, advice: str, *, unit: str = "row") -> None:
    """Raise :class:`CosimError` for the first implausible row: ``where(i)`` names it, ``advice`` says what to do."""
    bad = reasons != ""
    if not bad.any():
        return
    i = int(np.flatnonzero(bad)[0])
    more = f" (and {int(bad.sum()) - 1} more {unit}(s))" if bad.sum() > 1 else ""
    raise CosimError(f"{where(i)}: {reasons[i]}{more}; {advice}, or write these rows flagged with --keep-implausible")


def _event_rates(model: Model, eph: Mapping[str, np.ndarray], mark) -> None:
    """Events per active cycle above what the modelled core can count (its issue, load/store or fetch width)."""
    cycles = np.asarray(eph.get("0x11", []), dtype=float)
    if cycles.size == 0:
        return
    for event, limit in sorted(model.max_events_per_cycle.items()):
        if event not in eph or event == "0x11":
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            per_cycle = np.asarray(eph[event], dtype=float) / cycles
        over = (cycles > 0) & (per_cycle > limit * 1.001)
        # events counted with no active cycle at all are as impossible
        over |= (cycles <= 0) & (np.asarray(eph[event], dtype=float) > 0)
        name = model.event_names.get(event, event)

        def text(i, event=event, name=name, limit=limit, per_cycle=per_cycle):
            if cycles[i] <= 0:
                return f"{event} ({name}) counted in an epoch with no active cycle (0x11 is {cycles[i]:g})"
            return f"{event} ({name}) at {per_cycle[i]:.3g} per cycle is more than the {limit:g} a {model.name} core can count"

        mark(over, text)


def _static_extrapolation(model: Model, static_w: np.ndarray, freq_mhz: np.ndarray, voltage_v: np.ndarray, mark) -> None:
    """Outside the training clocks static power must follow V and f both ways: above the top clock it may
    neither fall below the top's static power nor rise faster than f * V^2 * exp(K_MAX * dV) (switching
    plus the steepest leakage); below the lowest clock it must fall (to >= 0)."""
    lo_f, hi_f = model.train_freq_mhz
    table_f = np.array([p[0] for p in model.vf_points])
    table_v = np.array([p[1] for p in model.vf_points])
    top = (table_f <= hi_f * 1.003).nonzero()[0][-1]
    bottom = (table_f >= lo_f * 0.997).nonzero()[0][0]
    static_top = float(static_power_w(np.array([table_f[top]]), np.array([table_v[top]]), model.static)[0])
    static_bottom = float(static_power_w(np.array([table_f[bottom]]), np.array([table_v[bottom]]), model.static)[0])
    f_top, v_top = table_f[top], table_v[top]
    up = freq_mhz > hi_f * 1.003
    with np.errstate(over="ignore", invalid="ignore"):
        fastest = static_top * (freq_mhz / f_top) * (voltage_v / v_top) ** 2 * np.exp(K_MAX_PER_V * np.maximum(voltage_v - v_top, 0))
    # 2 % slack: the physical form is fitted to the polynomial over several points, not pinned to the top one
    above = up & (static_w < 0.98 * static_top)
    mark(
        above,
        lambda i: (
            f"{freq_mhz[i]:g} MHz is {freq_mhz[i] / hi_f:.3g}x the model's top clock {hi_f:g} MHz; its static term "
            f"extrapolates to {static_w[i]:.4g} W at {voltage_v[i]:.3f} V, below the {static_top:.4g} W at "
            f"{f_top:g} MHz, though static power rises with voltage"
        ),
    )
    mark(
        up & (static_w > fastest * 1.02),
        lambda i: (
            f"{freq_mhz[i]:g} MHz is {freq_mhz[i] / hi_f:.3g}x the model's top clock {hi_f:g} MHz; its static term "
            f"extrapolates to {static_w[i]:.4g} W at {voltage_v[i]:.3f} V, more than the {fastest[i]:.4g} W that switching and "
            f"leakage (exp({K_MAX_PER_V:g}/V * dV)) allow from the {static_top:.4g} W at {f_top:g} MHz"
        ),
    )
    below = (freq_mhz < lo_f * 0.997) & ((static_w > static_bottom) | (static_w < 0))
    mark(
        below,
        lambda i: (
            f"{freq_mhz[i]:g} MHz is below the model's lowest clock {lo_f:g} MHz; its static term extrapolates "
            f"to {static_w[i]:.4g} W, outside 0-{static_bottom:.4g} W"
        ),
    )
    mark(
        (freq_mhz >= lo_f * 0.997) & (freq_mhz <= hi_f * 1.003) & (static_w < 0),
        lambda i: f"the static term is negative ({static_w[i]:.4g} W) at {freq_mhz[i]:g} MHz, {voltage_v[i]:.3f} V",
    )


def blank_implausible(power: dict[str, np.ndarray], bad: np.ndarray) -> None:
    """Rows cosim calls unphysical keep their flags and reason but no power figure (nan), even when kept."""
    for values in power.values():
        values[bad] = np.nan
