"""The leakage-temperature loop: a run priced at the die temperature its own power produces, epoch by epoch.

Every pricing command goes through it (``cosim power``/``soc``/``explore`` by :mod:`cosim.timeline.cpu`, the
what-if by :func:`point_temperature_c`).  Leakage depends on the die temperature, the temperature on the power:

1. start: ``start_c`` when stated, else the steady state of the run's own mean power (the run taken as a slice of a
   program that has been running: a gem5 run of milliseconds is far shorter than the die's time constant, so its
   start decides its temperature), found by fixed point T = T_amb + R * P(T);
2. each epoch's mean temperature from the one before by the node's exact exponential step at the epoch's power
   (:func:`cosim.models.thermal.series_c`);
3. the epochs' power re-priced at those temperatures, and 2-3 again until no epoch moves by more than
   :data:`TOLERANCE_K` (the loop gain R * dP/dT is ~0.05 on the A15: a few rounds).

A model with no temperature term prices the same power at any temperature: the loop then only reports it.  Where
the loop never settles (a leakage runaway, R * dP/dT >= 1) there is no temperature: the caller prices at the model's
training temperature and flags ``temperature_not_settled``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from cosim.errors import CosimError
from cosim.models.thermal import Thermal, series_c, steady_c, step_c, thermal_for

TOLERANCE_K = 1e-3  # the loop stops when no epoch's temperature moves by more [K]
MAX_ROUNDS = 30  # a loop gain near 1 (a runaway) gets no temperature: priced at the training one, flagged
#: die temperatures [°C] a start or ambient may state: a powered die above freezing, below any junction limit
STATED_RANGE_C = (-20.0, 125.0)
RUNAWAY_C = 1000.0  # a die the loop puts above this has no steady state the form describes (a runaway)


@dataclass(frozen=True)
class Loop:
    """How a cluster's temperature is found: its thermal constants, the ambient and start stated (None: default)."""

    thermal: Thermal
    ambient_c: float | None = None
    start_c: float | None = None

    @property
    def ambient(self) -> float:
        """The ambient used [°C]."""
        return self.thermal.ambient_c if self.ambient_c is None else self.ambient_c


def loop_for(model, *, temperature_c: float | None, ambient_c: float | None, start_c: float | None) -> Loop | None:
    """The loop for a cluster priced by ``model``, or None where its temperature is not predicted: a stated die
    temperature (``--temperature``) or no thermal constants for the model's cluster (no board's temperature)."""
    if temperature_c is not None and (ambient_c is not None or start_c is not None):
        raise CosimError(
            "--temperature states the die temperature, --ambient-c and --start-temperature-c predict it: give one or the others"
        )
    for value, option in ((ambient_c, "--ambient-c"), (start_c, "--start-temperature-c")):
        if value is not None and not STATED_RANGE_C[0] <= value <= STATED_RANGE_C[1]:
            raise CosimError(f"{option} {value:g}: expected a temperature in °C, {STATED_RANGE_C[0]:g} to {STATED_RANGE_C[1]:g}")
    if temperature_c is not None:
        return None
    thermal = thermal_for(model)
    if thermal is None:
        return None
    return Loop(thermal=thermal, ambient_c=ambient_c, start_c=start_c)


def loop_flags(loop: Loop | None) -> list[str]:
    """The flags a predicted temperature puts on every row: ``temperature_predicted``, and ``ambient_default`` /
    ``start_steady`` where the ambient or the start was not stated."""
    if loop is None:
        return []
    return [
        "temperature_predicted",
        *(["ambient_default"] if loop.ambient_c is None else []),
        *(["start_steady"] if loop.start_c is None else []),
    ]


def run_temperature_c(loop: Loop, price: Callable[[np.ndarray], np.ndarray], duration_s: np.ndarray) -> np.ndarray | None:
    """Each epoch's mean die temperature [°C]: ``price(temperature_c)`` is the cluster's power [W] per epoch at a
    temperature per epoch, ``duration_s`` each epoch's length [s].  None where it does not settle (a leakage runaway:
    no steady state the form describes; the caller prices without the loop and flags it)."""
    dt = np.asarray(duration_s, dtype=float)
    if loop.start_c is None:  # the steady state of the run's mean power
        start = float(_steady(loop, lambda temp: np.full(np.shape(temp), _mean_power(price(np.full(dt.shape, temp)), dt)), shape=()))
        if not np.isfinite(start):
            return None
    else:
        start = loop.start_c
    t = np.full(dt.shape, start)
    for _ in range(MAX_ROUNDS):
        new = series_c(loop.thermal, price(t), dt, start_c=start, ambient_c=loop.ambient)
        if not np.all(np.isnan(new) | (new < RUNAWAY_C)):
            return None
        moved = np.nanmax(np.abs(new - t)) if new.size else 0.0
        t = new
        if not moved > TOLERANCE_K:
            return t
    return None


def point_temperature_c(loop: Loop, power_at: Callable[[np.ndarray], np.ndarray], runtime_s: np.ndarray) -> np.ndarray:
    """The what-if's temperature per point [°C]: one static power per point for its whole run, so one temperature, the
    run's mean from the start at the point's mean power ``power_at(temperature_c)`` [W] over ``runtime_s`` [s]
    (the exact step; fixed point in the leakage).  Vectorised over points; nan where it does not settle."""
    runtime = np.asarray(runtime_s, dtype=float)
    if loop.start_c is None:
        return _steady(loop, power_at, shape=runtime.shape)
    start = loop.start_c

    def step(t):
        return step_c(loop.thermal, start, power_at(t), runtime, ambient_c=loop.ambient)[1]

    return _settle(step, np.full(runtime.shape, start))


def _steady(loop: Loop, power_at: Callable, *, shape: tuple = ()) -> np.ndarray:
    def step(t):
        p = np.asarray(power_at(t), dtype=float)
        return steady_c(loop.thermal, np.where(np.isnan(p), 0.0, p), ambient_c=loop.ambient)

    return _settle(step, np.full(shape, loop.ambient, dtype=float))


def _settle(step: Callable[[np.ndarray], np.ndarray], t: np.ndarray) -> np.ndarray:
    """The fixed point t = step(t), element by element; nan where it runs away or does not settle in
    :data:`MAX_ROUNDS` rounds (a runaway is held at :data:`RUNAWAY_C` meanwhile, so nothing overflows)."""
    t = np.asarray(t, dtype=float)
    for _ in range(MAX_ROUNDS):
        new = np.minimum(np.asarray(step(t), dtype=float), RUNAWAY_C)
        moved = np.abs(new - t)
        t = new
        if not np.any(moved > TOLERANCE_K):
            break
    return np.where((moved > TOLERANCE_K) | (t >= RUNAWAY_C) | ~np.isfinite(t), np.nan, t)


def warn_temperature_not_settled(cluster: str, model: str) -> None:
    """Say once that a cluster's die temperature found no steady state (its rows flagged ``temperature_not_settled``)."""
    import warnings

    from cosim.errors import CosimWarning

    warnings.warn(
        CosimWarning(
            f"cluster '{cluster}': its die temperature does not settle ({model}'s leakage rises faster with temperature "
            "than the package sheds it): static power priced at the model's training temperature, rows flagged "
            "temperature_not_settled; give --temperature C to price at a stated one"
        ),
        stacklevel=4,
    )


def _mean_power(power_w: np.ndarray, duration_s: np.ndarray) -> float:
    ok = np.isfinite(power_w) & np.isfinite(duration_s) & (duration_s > 0)
    total = float(duration_s[ok].sum())
    return float((power_w[ok] * duration_s[ok]).sum() / total) if total > 0 else 0.0


@dataclass
class WhatifTemperatures:
    """What the what-if's temperatures add to its table: ``<cluster>_temperature_c`` per row [°C], and flags."""

    columns: dict[str, np.ndarray] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    outside: dict[str, np.ndarray] = field(default_factory=dict)  # cluster -> rows outside its trained temperatures
    loops: dict[str, tuple] = field(default_factory=dict)  # cluster -> (loop, model, levels, voltage, index, scale)

    def per_row(self, parts: list, runtime_s: np.ndarray) -> list:
        """The what-if's cluster predictions with each row's static power at the die temperature the row's own mean
        power produces over the whole run (``runtime_s`` [s]: every cluster stays powered until the run ends, as
        cosim power's timeline prices the same run), its interval's static part with it."""
        from cosim.models.envelope import static_at_w
        from cosim.models.static_form import static_form

        out = []
        for p in parts:
            if p.name not in self.loops:
                out.append(p)
                continue
            loop, model, levels, voltage, index, scale = self.loops[p.name]
            f, v, dyn_w = levels[index], voltage[index], p.dyn_j.sum(axis=1) / runtime_s
            t = point_temperature_c(loop, _power_at(model, f, v, dyn_w, scale), runtime_s)
            runaway = np.isnan(t)
            if runaway.any():  # no steady state the form describes: priced at the model's curve, flagged
                t = np.where(runaway, static_form(model).curve_temperature(f), t)
                self.flags.add(f"temperature_not_settled:{p.name}")
            self._record(p.name, model, t)
            static_w = static_at_w(model, f, v, temperature_c=t) * scale
            static_dv = static_form(model).dstatic_dv_w_per_v(f, v, t) * scale
            lv, vv, vu = p.model_part[:3]
            u = None if vu is None else np.asarray(vu)[index]
            rows = np.arange(len(index))
            # the part's cores scale (its interval widens by the assumed per-core share) stays; the share's spread is
            # taken of the static power at the row's own temperature
            scale_ = p.model_part[6] if len(p.model_part) > 6 else 1.0
            part = (lv[index], vv[index], u, static_w, static_dv, rows, scale_, t)
            out.append(p._replace(static_w=static_w, model_part=part))
        return out

    def _record(self, name: str, model, per_row: np.ndarray) -> None:
        from cosim.models.static_form import static_form

        self.columns[f"{name}_temperature_c"] = per_row
        trained = static_form(model).trained_temperature_c
        self.outside.pop(name, None)
        if trained is not None and ((per_row < trained[0]) | (per_row > trained[1])).any():
            self.outside[name] = (per_row < trained[0]) | (per_row > trained[1])

    def row_flags(self, flags: np.ndarray) -> np.ndarray:
        """``flags`` (one string a row) with ``temperature_outside_training:<cluster>`` added where it applies."""
        out = np.asarray(flags, dtype=object).copy()
        for name, rows in self.outside.items():
            out[rows] = [";".join(filter(None, [f, f"temperature_outside_training:{name}"])) for f in out[rows]]
        return out


def _power_at(model, freq_mhz: np.ndarray, voltage_v: np.ndarray, dyn_w: np.ndarray, scale: float) -> Callable[[np.ndarray], np.ndarray]:
    """A cluster's mean power [W] as a function of its die temperature [°C]: dynamic ``dyn_w`` plus its static form."""
    from cosim.models.envelope import static_at_w

    return lambda t: dyn_w + static_at_w(model, freq_mhz, voltage_v, temperature_c=t) * scale


def whatif_temperature_c(cluster, levels, voltage_v, dyn_j, runtime_s, index, notes: WhatifTemperatures):
    """A what-if cluster's die temperature [°C] at each clock ``levels`` [MHz] (its voltage [V], dynamic energy [J]
    and run time [s] there: until it finishes, plus the recorded time after every cluster had): the stated one, or the one each clock's own power produces over its run
    (:func:`point_temperature_c`: one static power a point, so one temperature); None where neither (no thermal
    constants for its model).  Its column (rows ``index``) and flags (``temperature_predicted:<cluster>``...) go to
    ``notes``."""
    from cosim.models.envelope import static_at_w
    from cosim.models.static_form import static_form

    c = cluster
    loop = loop_for(c.model, temperature_c=c.temperature_c, ambient_c=c.ambient_c, start_c=c.start_temperature_c)
    temperature = c.temperature_c
    if loop is not None:
        run_s = np.asarray(runtime_s, dtype=float)
        dyn_w = np.divide(np.asarray(dyn_j, dtype=float), run_s, out=np.zeros(np.shape(run_s)), where=run_s > 0)
        temperature = point_temperature_c(
            loop, lambda t: dyn_w + static_at_w(c.model, levels, voltage_v, temperature_c=t) * c.cores_scale, run_s
        )
        notes.flags.update(f"{flag}:{c.name}" for flag in loop_flags(loop))
        notes.loops[c.name] = (loop, c.model, np.asarray(levels), np.asarray(voltage_v), index, c.cores_scale)
        runaway = np.isnan(temperature)
        if runaway.any():  # no steady state the form describes: those clocks are priced at the model's curve, flagged
            temperature = np.where(runaway, static_form(c.model).curve_temperature(levels), temperature)
            notes.flags.add(f"temperature_not_settled:{c.name}")
    if temperature is not None:
        notes._record(c.name, c.model, np.broadcast_to(np.asarray(temperature, dtype=float), np.shape(levels))[index])
    return temperature
