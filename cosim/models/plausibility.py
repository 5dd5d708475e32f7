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
from cosim.models.static_form import VOLTAGE_RANGE_V


def implausible_reasons(
    model: Model,
    *,
    power_w: np.ndarray,
    static_w: np.ndarray,
    freq_mhz: np.ndarray,
    voltage_v: np.ndarray,
    eph: Mapping[str, np.ndarray],
    n_cpus: int,
    static_scale: float = 1.0,
) -> np.ndarray:
    """Why each row is implausible ("" where it is not); the first failed check is named.

    ``eph`` are the model inputs [events/s per model core / MHz], ``n_cpus`` the
    simulated cores priced by the model (the power bound grows with them); ``static_w`` is the model's own curve and
    ``static_scale`` what the cores present scale it by in ``power_w`` (:func:`cosim.models.envelope.cores_factor`).
    Rows whose power is nan (missing inputs) are not judged here.
    """
    n = len(power_w)
    reasons = np.full(n, "", dtype=object)

    def mark(bad: np.ndarray, text) -> None:
        for i in np.flatnonzero(bad & (reasons == "")):
            reasons[i] = text(i)

    mark(np.isinf(power_w), lambda i: f"power is {power_w[i]:g} W")
    _event_rates(model, eph, mark)
    static = static_reasons(model, static_w=static_w, freq_mhz=freq_mhz, voltage_v=voltage_v)
    mark(static != "", lambda i: static[i])
    mark(power_w < 0, lambda i: f"power is negative ({power_w[i]:.4g} W)")
    if model.max_power_w is not None:
        bound = model.max_power_w * max(1.0, n_cpus / model.cores_per_cluster)
        hi_f = model.train_freq_mhz[1]

        def too_high(i):
            # the static term as priced (scaled to the cores present), so that it never reads above the power it is part of
            where = (
                f" ({freq_mhz[i]:g} MHz is {freq_mhz[i] / hi_f:.2g}x the model's top clock {hi_f:g} MHz; its static term "
                f"extrapolates to {static_w[i] * static_scale:.4g} W of it)"
                if freq_mhz[i] > hi_f * 1.003
                else ""
            )
            return f"power {power_w[i]:.4g} W is above the model's plausible maximum {bound:.4g} W for {n_cpus} core(s){where}"

        mark(power_w > bound, too_high)
    return reasons


def refuse_implausible(reasons: np.ndarray, where, advice: str, *, unit: str = "row", keep: str | None = "--keep-implausible") -> None:
    """Raise :class:`CosimError` for the first implausible row: ``where(i)`` names it, ``advice`` says what to do, and
    ``keep`` is the command's option that writes such rows flagged (None: the command has none)."""
    bad = reasons != ""
    if not bad.any():
        return
    i = int(np.flatnonzero(bad)[0])
    more = f" (and {int(bad.sum()) - 1} more {unit}(s))" if bad.sum() > 1 else ""
    kept = f", or write these rows flagged with {keep}" if keep else ""
    raise CosimError(f"{where(i)}: {reasons[i]}{more}; {advice}{kept}")


def rate_reasons(model: Model, eph: Mapping[str, np.ndarray]) -> np.ndarray:
    """Why each row's events per active cycle are more than a ``model`` core can count ("" where they are not): the
    one check that holds at every clock (:mod:`cosim.timeline.trust`)."""
    n = len(next(iter(eph.values()), []))
    reasons = np.full(n, "", dtype=object)

    def mark(bad: np.ndarray, text) -> None:
        for i in np.flatnonzero(bad & (reasons == "")):
            reasons[i] = text(i)

    _event_rates(model, eph, mark)
    return reasons


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


def static_reasons(model: Model, *, static_w: np.ndarray, freq_mhz: np.ndarray, voltage_v: np.ndarray) -> np.ndarray:
    """Why each row's static power [W] (the model's own, before any core-count scaling) cannot be priced, "" where it
    can: the one rule every command that writes power applies (power, whatif, sweep, explore, apply, soc).

    The static form (:mod:`cosim.models.static_form`) is >= 0 and rises with V and f by construction, so what is
    left to refuse is a voltage outside the range its physics holds for (:data:`VOLTAGE_RANGE_V`) and a static
    power that is not a finite non-negative number (a clock that is not).
    """
    f = np.asarray(freq_mhz, dtype=float)
    v = np.broadcast_to(np.asarray(voltage_v, dtype=float), f.shape)
    s = np.asarray(static_w, dtype=float)
    reasons = np.full(len(f), "", dtype=object)
    lo, hi = VOLTAGE_RANGE_V
    outside = (v < lo) | (v > hi)
    for i in np.flatnonzero(outside):
        reasons[i] = (
            f"{v[i]:.4g} V at {freq_mhz[i]:g} MHz is outside {lo:g}-{hi:g} V, the supply range the static form's physics holds "
            f"for (above threshold, below any rated supply of the process {model.name} was measured on)"
        )
    for i in np.flatnonzero(~outside & (s < 0)):
        reasons[i] = f"the static term is negative ({s[i]:.4g} W) at {freq_mhz[i]:g} MHz, {v[i]:.3f} V"
    return reasons
