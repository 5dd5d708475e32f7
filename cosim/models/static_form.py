"""A core cluster's static power as one physical form of clock, voltage (and temperature), fitted once per model.

    S(f, V) = a * f * V^2  +  b * V * exp(k * (V - 1 V))          [W]
              \\_ background _/   \\_ leakage: V times a subthreshold current
                 switching          exponential in V (DIBL) _/

f [MHz], V [V]; a [W / (MHz V^2)], b [W / V] (the leakage current at 1 V [A]), k [1/V].  The terms are those
of CMOS power (Butts & Sohi, MICRO 2000: P_static = V * I_leak, I_leak exponential in V through DIBL; the clock
tree and idle logic switch as C * V^2 * f).  Walker et al. (TCAD 2017, Eq. 2) fit the same quantity as a polynomial
in f and V whose large coefficients cancel; it is right along the V-f curve it was fitted on and nowhere else (a
10 mV step off it at the A15's 1800 MHz moved it by 0.25 W).

Domain and assumptions, stated once:

- the shipped A15 models state a, b, k and a temperature term fitted on their boards' measured rows
  (:mod:`cosim.fit.static_split`, ``python -m cosim.fit.static_models``), with the bootstrap refits the intervals
  come from; b is then the leakage at 1 V and ``reference_c``, and with no die temperature given static power is
  priced at the training rows' mean temperature at each clock (non-decreasing in the clock);
- a file without that block is fitted to the model's own static polynomial at every point of its V-f table (all
  the model knows about static power), least squares with a, b >= 0 for each k on a grid (0-25 /V, 0.05 /V apart),
  the best k kept.  The form
  and its fit were chosen on the A15 refitted on Powmon <= 1400 MHz and priced at 1600 MHz (a third term, a leakage
  floor c * V, fitted the table as well and extrapolated worse: docs/explanation/envelope.md);
- a, b >= 0 and k >= 0 make S >= 0, rising in V at every clock and rising in f at every voltage, continuous
  everywhere: the same function at a table point, between points, above and below them, at gem5's tick-rounded
  clocks and at any voltage;
- valid for supply voltages from :data:`VOLTAGE_RANGE_V` (above threshold, below any rated supply of the
  processes the models were measured on), where the form's physics holds; outside it nothing is priced;
- temperature: where the model file states one (``static_form.temperature``), the leakage term is multiplied by
  exp(kappa * (T - T_curve(f))), T_curve being the board's mean temperature at each clock of its training data:
  the polynomial holds the temperature the board had along its curve, so at T_curve the model is as published.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np

from cosim.errors import CosimError
from cosim.models.walker import StaticTerm, static_power_w

#: supply voltages the form holds for [V]: above near-threshold operation (28 nm HKMG: Vth ~0.35-0.45 V, below
#: ~0.6 V delay and leakage leave the above-threshold regime the form describes) and below any rated supply of the
#: processes the shipped models come from (the Exynos 5422's highest operating point is 1.36 V)
VOLTAGE_RANGE_V = (0.6, 1.5)
_K_GRID = np.round(np.arange(0.0, 25.0001, 0.05), 4)  # leakage exponent [1/V]: none to steeper than any bulk CMOS


@dataclass(frozen=True)
class StaticForm:
    """The fitted form (module docstring) with its fit against the model's polynomial at its table points."""

    a: float  # [W / (MHz V^2)]
    b: float  # [W / V], subthreshold leakage current at 1 V
    k: float  # [1/V]
    points_mhz_v: tuple[tuple[float, float], ...]  # the V-f table points it was fitted at
    residual_w: tuple[float, ...]  # form - polynomial at those points [W]
    kappa_per_k: float = 0.0  # leakage's growth with temperature [1/K]; 0: no temperature term
    curve_temperature_c: tuple[tuple[float, float], ...] = ()  # (clock [MHz], board's mean temperature [°C])
    trained_temperature_c: tuple[float, float] | None = None  # the range of temperatures it was fitted on [°C]
    reference_c: float | None = None  # b's die temperature [°C] (None: b holds the curve's temperature at each clock)
    replicates: tuple[tuple[float, float, float, float], ...] = ()  # bootstrap refits (a, b, k, kappa): the intervals

    @functools.cached_property
    def _replicate_array(self) -> np.ndarray:
        """``replicates`` as one (n, 4) array, made once: an interval prices every refit at each call."""
        r = np.asarray(self.replicates, dtype=float).reshape(-1, 4)
        r.setflags(write=False)  # shared by every call
        return r

    @property
    def rms_w(self) -> float:
        """Root mean square of the residuals at the table points [W]."""
        return float(np.sqrt(np.mean(np.square(self.residual_w))))

    @property
    def max_abs_w(self) -> float:
        """Largest residual at the table points [W]."""
        return float(np.max(np.abs(self.residual_w)))

    def curve_temperature(self, freq_mhz) -> np.ndarray:
        """The board's mean temperature [°C] at each clock [MHz] while the model was measured (the default), held at
        the ends of its table; nan where the model states none."""
        f = np.asarray(freq_mhz, dtype=float)
        if not self.curve_temperature_c:
            return np.full(f.shape, np.nan)
        return np.interp(f, [p[0] for p in self.curve_temperature_c], [p[1] for p in self.curve_temperature_c])

    def _heat(self, freq_mhz, temperature_c, kappa: float | np.ndarray | None = None) -> np.ndarray | float:
        """Leakage's factor e^(κ(T − T_ref)) at the die temperature [°C] (T_ref: the fixed reference, else the board's
        along the curve; 1 where no temperature is given or κ is 0).  ``kappa`` [1/K] is the model's, or a column of
        them (the bootstrap replicates': a row each, priced at once)."""
        kappa = self.kappa_per_k if kappa is None else kappa
        if self.reference_c is not None:  # b at a fixed die temperature; none given: the board's at that clock
            t = self.curve_temperature(freq_mhz) if temperature_c is None else np.asarray(temperature_c, dtype=float)
            return np.exp(kappa * (t - self.reference_c))
        if temperature_c is None or np.all(np.equal(kappa, 0)):
            return 1.0
        t = np.asarray(temperature_c, dtype=float)
        with np.errstate(all="ignore"):  # the rows of kappa 0 are 1, whatever exp gives there
            return np.where(np.equal(kappa, 0), 1.0, np.exp(kappa * (t - self.curve_temperature(freq_mhz))))

    def leakage_w(self, freq_mhz, voltage_v, temperature_c=None) -> np.ndarray:
        """The leakage part b·V·e^(k(V−1))·heat [W] (the rest of :meth:`static_w` is background switching)."""
        f = np.asarray(freq_mhz, dtype=float)
        v = np.asarray(voltage_v, dtype=float)
        return self.b * v * np.exp(self.k * (v - 1.0)) * self._heat(f, temperature_c)

    def replicate_static_w(self, freq_mhz, voltage_v, temperature_c=None) -> np.ndarray:
        """S at each bootstrap refit (rows: replicates; columns: the points) [W]; empty without replicates."""
        if not self.replicates:
            return np.zeros((0, np.size(freq_mhz)))
        r = self._replicate_array
        f = np.atleast_1d(np.asarray(freq_mhz, dtype=float)).ravel()
        v = np.broadcast_to(np.asarray(voltage_v, dtype=float), np.shape(freq_mhz)).ravel()
        t = None if temperature_c is None else np.broadcast_to(np.asarray(temperature_c, dtype=float), np.shape(freq_mhz)).ravel()
        heat = np.broadcast_to(self._heat(f, t, kappa=r[:, 3:4]), (len(r), f.size))  # every replicate at once
        return r[:, :1] * f * v**2 + r[:, 1:2] * v * np.exp(r[:, 2:3] * (v - 1.0)) * heat

    def static_w(self, freq_mhz, voltage_v, temperature_c=None) -> np.ndarray:
        """S(f, V, T) [W] at ``freq_mhz`` [MHz], ``voltage_v`` [V] and ``temperature_c`` [°C] (None: the board's
        temperature along the curve, as the model was fitted)."""
        f = np.asarray(freq_mhz, dtype=float)
        v = np.asarray(voltage_v, dtype=float)
        return self.a * f * v**2 + self.leakage_w(f, v, temperature_c)

    def dstatic_dv_w_per_v(self, freq_mhz, voltage_v, temperature_c=None) -> np.ndarray:
        """dS/dV [W/V], exact: it carries a voltage's uncertainty into the interval."""
        f = np.asarray(freq_mhz, dtype=float)
        v = np.asarray(voltage_v, dtype=float)
        return 2 * self.a * f * v + self.b * np.exp(self.k * (v - 1.0)) * (1 + self.k * v) * self._heat(f, temperature_c)


def _columns(f: np.ndarray, v: np.ndarray, k: float) -> np.ndarray:
    return np.c_[f * v**2, v * np.exp(k * (v - 1.0))]


def nnls(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Non-negative least squares for a few columns, exactly: the best unconstrained fit over every subset of columns
    whose coefficients are all >= 0 (the optimum is one of them)."""
    best, best_err = np.zeros(x.shape[1]), float(y @ y)
    for r in range(1, x.shape[1] + 1):
        for cols in itertools.combinations(range(x.shape[1]), r):
            coef, *_ = np.linalg.lstsq(x[:, cols], y, rcond=None)
            if (coef >= 0).all():
                full = np.zeros(x.shape[1])
                full[list(cols)] = coef
                err = float(np.sum((x @ full - y) ** 2))
                if err < best_err - 1e-18:
                    best, best_err = full, err
    return best


@functools.lru_cache(maxsize=64)
def _fit(static: tuple[StaticTerm, ...], points: tuple[tuple[float, float], ...]) -> StaticForm | None:
    f = np.array([p[0] for p in points])
    v = np.array([p[1] for p in points])
    s = static_power_w(f, v, static)
    best: tuple[float, float, np.ndarray] | None = None
    for k in _K_GRID:
        coef = nnls(_columns(f, v, float(k)), s)
        err = float(np.sum((_columns(f, v, float(k)) @ coef - s) ** 2))
        if best is None or err < best[0] - 1e-18:
            best = (err, float(k), coef)
    assert best is not None
    _, k, coef = best
    if not coef.any():
        return None
    resid = _columns(f, v, k) @ coef - s
    return StaticForm(
        a=float(coef[0]),
        b=float(coef[1]),
        k=k,
        points_mhz_v=points,
        residual_w=tuple(float(r) for r in resid),
    )


def static_form_block(static: tuple[StaticTerm, ...], points: tuple[tuple[float, float], ...]) -> dict | None:
    """The ``static_form`` block of a model file for a static polynomial and its V-f table (what ``cosim fit`` writes,
    so gem5's online expressions read the form), or None where the polynomial is not positive at the table's points."""
    form = _fit(tuple(static), tuple((float(f), float(v)) for f, v in points))
    if form is None:
        return None
    rms_mw = form.rms_w * 1e3
    return {
        "form": "S(f, V) = a * f[MHz] * V^2 + b * V * exp(k * (V - 1)) [W]: background switching plus leakage; a, b, k >= 0",
        "a_w_per_mhz_v2": form.a,
        "b_w_per_v": form.b,
        "k_per_v": form.k,
        "fitted_on": "the static polynomial (static_terms) at every point of vf_table (cosim.models.static_form)",
        "residual_w": [round(r, 6) for r in form.residual_w],
        "fit_error": f"rms {rms_mw:.1f} mW, largest {form.max_abs_w * 1e3:.1f} mW at the table's {len(points)} points",
    }


def static_form(model) -> StaticForm:
    """The model's static form: the coefficients its file states (``static_form``, as written by fitting it once, and
    what gem5's online expressions read), else fitted here to its polynomial at every point of its V-f table.
    Computed once per model object (a frozen dataclass: the file's numbers cannot change under it); pricing asks for it
    at every epoch and point."""
    cached = getattr(model, "__dict__", {}).get("_static_form")
    if cached is not None:
        return cached
    stated = model.raw.get("static_form") if isinstance(model.raw, dict) else None
    form = _stated(model, stated) if stated is not None else _fitted(model)
    if hasattr(model, "__dict__"):
        object.__setattr__(model, "_static_form", form)
    return form


def _fitted(model) -> StaticForm:
    form = _fit(tuple(model.static), tuple(model.vf_points))
    if form is None:
        raise CosimError(
            f"{model.path}: the static term of {model.name} is not positive at its V-f table's points "
            f"({', '.join(f'{f:g} MHz {v:g} V' for f, v in model.vf_points)}), so no physical static power fits it; "
            "fix its static_terms or vf_table"
        )
    return form


_STATED = ("a_w_per_mhz_v2", "b_w_per_v", "k_per_v")


def _stated(model, block) -> StaticForm:
    values = [block.get(key) if isinstance(block, dict) else None for key in _STATED]
    if not all(_non_negative(x) for x in values):
        raise CosimError(f"{model.path}: static_form needs {', '.join(_STATED)}, each a number >= 0 (see models/README.md)")
    a, b, k = (float(x) for x in values if x is not None)
    f = np.array([p[0] for p in model.vf_points])
    v = np.array([p[1] for p in model.vf_points])
    resid = _columns(f, v, k) @ np.array([a, b]) - static_power_w(f, v, model.static)
    heat = block.get("temperature")
    reference: float | None = None
    replicates: tuple[tuple[float, float, float, float], ...] = ()
    if heat is not None and "reference_c" in heat:
        reference = _number(model, heat["reference_c"], "static_form.temperature.reference_c")
    if "bootstrap" in block:
        try:
            replicates = tuple((float(r[0]), float(r[1]), float(r[2]), float(r[3])) for r in block["bootstrap"]["replicates"])
        except (TypeError, KeyError, ValueError, IndexError):
            raise CosimError(f"{model.path}: static_form.bootstrap.replicates must be [a, b, k, kappa] lists (models/README.md)") from None
    kappa: float = 0.0
    curve: tuple[tuple[float, float], ...] = ()
    trained: tuple[float, float] | None = None
    if heat is not None:
        try:
            kappa = float(heat["kappa_per_k"])
            curve = tuple((float(p[0]), float(p[1])) for p in heat["curve_mhz_c"])
            lo, hi = (float(x) for x in heat["trained_c"])
        except (TypeError, KeyError, ValueError):
            raise CosimError(
                f"{model.path}: static_form.temperature needs kappa_per_k, curve_mhz_c ([freq_mhz, temperature_c] pairs) "
                "and trained_c ([lowest, highest])"
            ) from None
        if not (_non_negative(kappa) and curve and lo <= hi):
            raise CosimError(f"{model.path}: static_form.temperature: kappa_per_k must be >= 0 and curve_mhz_c not empty")
        trained = (lo, hi)
    return StaticForm(
        a=a,
        b=b,
        k=k,
        points_mhz_v=tuple(model.vf_points),
        residual_w=tuple(float(r) for r in resid),
        kappa_per_k=kappa,
        curve_temperature_c=tuple(sorted(curve)),
        trained_temperature_c=trained,
        reference_c=reference,
        replicates=replicates,
    )


def _number(model, x, field: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise CosimError(f"{model.path}: {field} must be a number (models/README.md)")
    return float(x)


def _non_negative(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0
