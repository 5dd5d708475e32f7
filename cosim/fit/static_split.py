"""The static split identified from a board's measured rows: background switching, leakage in V and T, busy cores.

Along a V-f table f and V move together, so a form fitted to a model's polynomial at its table points cannot tell
switching (a·f·V²) from leakage (b·V·e^(k(V−1))).  The boards' own rows can: Powmon's measured rail voltage varies at
one clock (the load line, 0.90-0.92 V at 200-800 MHz where f moves 4x), the die temperature varies 40.8-87.6 °C
(temperature moves leakage, not switching) and the core masks vary the busy cores 1-4.  With each model's dynamic
terms held at their published values (they were fitted jointly with the polynomial on the same rows; its
published accuracy is kept), the rest of the measured power is fitted by

    S = a·f·V² + b·V·e^(k(V−1))·e^(kappa·(T − T_REF))      [W]

a, b ≥ 0 by non-negative least squares for each (k, kappa), (k, kappa) by a grid then Nelder-Mead (variable
projection).  Intervals: percentile bootstrap resampling whole workloads (programs), because the rows of one
workload share its activity mix and thermal history; resampling rows would count its 36 Powmon rows (ARMPM: its
hundreds of samples) as independent and understate every interval.  This module is the fit path (scipy);
pricing reads the result with numpy only (cosim.models.static_form).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

#: reference die temperature of b [°C]: b is the leakage current at 1 V and 50 °C (inside every board's range)
T_REF_C = 50.0


@dataclass(frozen=True)
class SplitRows:
    """Measured rows of one cluster: what the static form is fitted on."""

    power_w: np.ndarray  # measured cluster power [W]
    dynamic_w: np.ndarray  # the model's dynamic terms at the row's f, V [W]
    freq_mhz: np.ndarray
    voltage_v: np.ndarray
    temperature_c: np.ndarray
    busy_cores: np.ndarray  # cores running the workload (the rest idle, powered)
    group: np.ndarray  # workload / program name
    source: str = ""
    terms_w: np.ndarray | None = None  # (rows, terms): each dynamic term's power at coefficient 1 (a joint fit's columns)

    def take(self, mask: np.ndarray) -> SplitRows:
        import dataclasses

        arrays = {
            f.name: getattr(self, f.name)[mask]
            for f in dataclasses.fields(self)
            if f.name != "source" and getattr(self, f.name) is not None
        }
        return dataclasses.replace(self, **arrays)


@dataclass(frozen=True)
class Split:
    a: float  # [W / (MHz V²)]
    b: float  # [W / V] at 1 V and T_REF_C
    k: float  # [1/V]
    kappa: float  # [1/K]
    dynamic: tuple[float, ...] = ()  # a joint fit's dynamic coefficients (same order as SplitRows.terms_w)

    def static_w(self, f, v, t) -> np.ndarray:
        f, v, t = (np.asarray(x, dtype=float) for x in (f, v, t))
        return self.a * f * v**2 + self.leakage_w(v, t)

    def leakage_w(self, v, t) -> np.ndarray:
        v, t = np.asarray(v, dtype=float), np.asarray(t, dtype=float)
        return self.b * v * np.exp(self.k * (v - 1.0)) * np.exp(self.kappa * (t - T_REF_C))


def held_out(group: np.ndarray) -> np.ndarray:
    """The held-out workloads: a quarter, by CRC-32 of the name (stable, decided before any fit)."""
    return np.array([zlib.crc32(str(g).encode()) % 4 == 0 for g in group])


def _inner(rows: SplitRows, k: float, kappa: float, joint: bool = False) -> tuple[np.ndarray, float]:
    """Coefficients (a, b[, dynamic...]) for one (k, kappa), a and b >= 0, and the sum of squared residuals."""
    from scipy.optimize import lsq_linear

    x = np.c_[rows.freq_mhz * rows.voltage_v**2, Split(0, 1, k, kappa).leakage_w(rows.voltage_v, rows.temperature_c)]
    y = rows.power_w - rows.dynamic_w
    if joint and rows.terms_w is not None:
        x, y = np.c_[x, rows.terms_w], rows.power_w
    scale = np.abs(x).max(axis=0)
    scale[scale == 0] = 1
    lower = np.r_[0.0, 0.0, np.full(x.shape[1] - 2, -np.inf)]
    coef = lsq_linear(x / scale, y, bounds=(lower, np.inf), method="bvls").x / scale
    return coef, float(np.sum((x @ coef - y) ** 2))


def fit_split(
    rows: SplitRows,
    *,
    start: tuple[float, float] | None = None,
    fixed_k: float | None = None,
    fixed_kappa: float | None = None,
    joint: bool = False,
) -> Split:
    """Least squares of measured − dynamic power on the form (module docstring); ``start`` (k, kappa) skips the grid;
    ``fixed_k`` holds k (where the rows' voltage moves only with the clock, k is not identified by them); ``joint``
    refits the dynamic coefficients with it (rows with ``terms_w``); ``fixed_kappa`` holds kappa."""
    from scipy.optimize import minimize

    def params(p) -> tuple[float, float]:
        kappa = float(np.clip(p[-1], 0, 0.1)) if fixed_kappa is None else fixed_kappa
        return (float(np.clip(p[0], 0, 25)) if fixed_k is None else fixed_k), kappa

    def sse(p) -> float:
        return _inner(rows, *params(p), joint)[1]

    if start is None:
        ks = np.arange(0, 25.01, 1.0) if fixed_k is None else [fixed_k]
        start = min(((k, kap) for k in ks for kap in np.arange(0, 0.1001, 0.005)), key=sse)
    x0 = np.array(start if fixed_k is None else start[-1:], dtype=float)
    best = minimize(sse, x0, method="Nelder-Mead", options={"xatol": 1e-5, "fatol": 1e-12})
    k, kappa = params(best.x)
    coef, _ = _inner(rows, k, kappa, joint)
    return Split(a=float(coef[0]), b=float(coef[1]), k=k, kappa=kappa, dynamic=tuple(float(c) for c in coef[2:]))


def predict_w(rows: SplitRows, split: Split, temperature_c: np.ndarray | None = None) -> np.ndarray:
    """The rows' power [W] with ``split`` (its own dynamic coefficients where it has them), at ``temperature_c``
    (default: each row's measured die temperature)."""
    t = rows.temperature_c if temperature_c is None else temperature_c
    dyn = rows.terms_w @ np.array(split.dynamic) if split.dynamic and rows.terms_w is not None else rows.dynamic_w
    return dyn + split.static_w(rows.freq_mhz, rows.voltage_v, t)


def bootstrap(rows: SplitRows, point: Split, *, n: int = 200, seed: int = 0, ks: np.ndarray | None = None) -> np.ndarray:
    """``n`` refits on workloads drawn with replacement: an (n, 4) array of (a, b, k, kappa).  ``ks``: k of each
    refit held at these values (another board's bootstrap draws of it, where these rows do not identify k)."""
    rng = np.random.default_rng(seed)
    names = np.unique(rows.group)
    index = {g: np.flatnonzero(rows.group == g) for g in names}
    out = []
    for i in range(n):
        picked = np.concatenate([index[g] for g in rng.choice(names, size=len(names), replace=True)])
        fixed = None if ks is None else float(ks[i % len(ks)])
        s = fit_split(rows.take(picked), start=(point.k, point.kappa), fixed_k=fixed)
        out.append((s.a, s.b, s.k, s.kappa))
    return np.array(out)


def mape_pct(pred: np.ndarray, actual: np.ndarray) -> float:
    return float(np.mean(np.abs(pred - actual) / np.abs(actual)) * 100)


def curve_temperature(rows: SplitRows) -> list[list[float]]:
    """The rows' mean die temperature per clock [MHz, °C], made non-decreasing in the clock (so the default static
    power, priced at it, stays monotone in f)."""
    clocks = np.unique(rows.freq_mhz)
    means = np.maximum.accumulate([rows.temperature_c[rows.freq_mhz == c].mean() for c in clocks])
    return [[float(c), round(float(m), 2)] for c, m in zip(clocks, means)]
