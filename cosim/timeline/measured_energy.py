"""Measured energy per kernel: a power log and a kernel trace of the same run on one time axis.

Domain and assumptions, stated once:

* The power log is a series of readings ``(t_i, p_i)`` [s, W] of one GPU (nvidia-smi, DCGM); reading ``i`` is the
  mean board power over its averaging window ``[t_i - w, t_i]`` (``w`` = 0 for an instantaneous reading,
  ``power.draw.instant``; 1 s for ``power.draw`` on Ampere and newer GPUs and for ``power.draw.average``).
* The trace gives each kernel's ``[start_s, end_s]`` on its own clock (nsys: ns since the session began; nvprof:
  since profiling began); ``offset_s`` maps it onto the log's clock: ``t_log = t_trace + offset_s``.
* A kernel's measured power is the mean of the readings whose whole window lies inside the kernel
  (``start <= t_i - w`` and ``t_i <= end``): only those see that kernel alone.  Its energy [J] is that mean times
  its duration (the parts of the kernel no window covers are assumed to draw the same mean).  The interval is the
  mean's Student-t interval from those readings (``level``, default 90 %); with fewer than ``min_samples``
  readings the kernel is *unresolved*: flagged, its power and energy left empty, never invented.
  A kernel is sure to be resolved when it lasts at least ``w + min_samples * period``.
* Kernels that overlap in time (several streams) share their readings: flagged ``overlaps``, the power is the
  GPU's while they ran together.

How the clocks are aligned (:func:`align_offset`): given no offset, cosim finds the one that best lines the
log up with the trace, the offset at which the readings correlate best with the fraction of each reading's
window in which a kernel ran; a log that does not follow the kernels (correlation below 0.3) is refused.  What a
misalignment costs is measured by :func:`shift_cost`: the total kernel energy again with the trace shifted by
``±k`` sample periods.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from cosim.errors import CosimError

#: Below this correlation between the readings and the kernels' activity, no offset lines the two up.
MIN_ALIGN_CORRELATION = 0.3


def sample_period_s(times_s: np.ndarray) -> float:
    """The log's sample period [s]: the median spacing of its readings."""
    steps = np.diff(np.sort(np.asarray(times_s, dtype=float)))
    steps = steps[steps > 0]
    if not len(steps):
        raise CosimError("the power log has fewer than two readings at distinct times; log for longer than one period")
    return float(np.median(steps))


def resolvable_s(window_s: float, period_s: float, min_samples: int = 2) -> float:
    """The shortest kernel [s] sure to hold ``min_samples`` readings whose windows lie inside it."""
    return window_s + min_samples * period_s


def window_contradiction(samples: pd.DataFrame, window_s: float) -> str:
    """Why the readings cannot be means over ``window_s`` [s], or ``""``: a mean over ``w`` moves between readings
    ``dt`` apart by at most ``dt / w`` of its range, so a step of over half the log's range within ``w / 4`` is an
    instantaneous reading (seen on an A100 PCIe whose ``power.draw`` steps 64 -> 295 W in 22 ms)."""
    if window_s <= 0 or len(samples) < 2:
        return ""
    t = samples["time_s"].to_numpy(dtype=float)
    p = samples["power_w"].to_numpy(dtype=float)
    span = float(p.max() - p.min())
    step, dt = np.abs(np.diff(p)), np.diff(t)
    jump = (step > 0.5 * span) & (dt < window_s / 4)
    if not span > 0 or not jump.any():
        return ""
    i = int(np.argmax(np.where(jump, step, -1.0)))
    return (
        f"readings {i + 1} and {i + 2} differ by {step[i]:.4g} W in {dt[i] * 1e3:.3g} ms, more than a mean over {window_s:g} s "
        f"can move (at most {100 * dt[i] / window_s:.3g} % of the log's {span:.4g} W range)"
    )


def _incomplete_beta(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta function I_x(a, b), by its continued fraction (modified Lentz), to ~1e-15."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    if x > (a + 1) / (a + b + 2):  # the fraction converges fast on this side only
        return 1.0 - _incomplete_beta(1.0 - x, b, a)
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))) / a
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 500):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)), -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return front * f


@functools.lru_cache(maxsize=1024)
def student_t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile (0.5 < p < 1) of Student's t with ``df`` degrees of freedom: the t at which
    1 - I_x(df/2, 1/2) / 2 = p, x = df / (df + t^2), found by bisection in x (no scipy: gpu-energy is a core command)."""
    target = 2.0 * (1.0 - p)  # I_x(df/2, 1/2) at the answer; it rises with x
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if _incomplete_beta(mid, df / 2, 0.5) < target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-17:
            break
    x = (lo + hi) / 2
    return math.sqrt(df * (1.0 - x) / x)


def kernel_energy(
    kernels: pd.DataFrame,
    samples: pd.DataFrame,
    *,
    window_s: float,
    offset_s: float = 0.0,
    min_samples: int = 2,
    level: float = 0.9,
) -> pd.DataFrame:
    """Per kernel (rows of ``kernels``: ``kernel``, ``launch``, ``start_s``, ``end_s`` [s] on the trace's clock):
    ``start_s``/``end_s`` on the log's clock, ``duration_s``, ``samples`` (readings inside), ``measured_power_w``
    (mean [W]), ``measured_power_lo_w``/``measured_power_hi_w`` (its ``level`` interval [W]), ``measured_energy_j``,
    ``measured_energy_lo_j``, ``measured_energy_hi_j`` [J] and ``flags`` (``unresolved``, ``overlaps``).  ``samples`` has ``time_s`` and ``power_w``."""
    order = np.argsort(samples["time_s"].to_numpy(dtype=float), kind="stable")
    t = samples["time_s"].to_numpy(dtype=float)[order]
    p = samples["power_w"].to_numpy(dtype=float)[order]
    start = kernels["start_s"].to_numpy(dtype=float) + offset_s
    end = kernels["end_s"].to_numpy(dtype=float) + offset_s
    # the readings inside launch i are the run first..last of the sorted readings: first window starting at or after
    # its start, last reading at or before its end; their sums come from running sums (p centred for precision)
    first = np.searchsorted(t - window_s, start, side="left")
    last = np.searchsorted(t, end, side="right")
    n = np.maximum(last - np.maximum(first, 0), 0)
    centre = float(p.mean()) if len(p) else 0.0
    c1 = np.r_[0.0, np.cumsum(p - centre)]
    c2 = np.r_[0.0, np.cumsum((p - centre) ** 2)]
    lo_i, hi_i = np.minimum(first, last), last
    s1, s2 = c1[hi_i] - c1[lo_i], c2[hi_i] - c2[lo_i]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = centre + s1 / n
        var = np.maximum((s2 - s1 * s1 / n) / (n - 1), 0.0)
    ok = n >= min_samples
    quantile = np.array([student_t_quantile(0.5 + level / 2, int(k) - 1) if k >= min_samples else math.nan for k in n])
    half = np.where(ok, quantile * np.sqrt(var) / np.sqrt(np.maximum(n, 1)), math.nan)
    mean = np.where(ok, mean, math.nan)
    lo, hi = np.maximum(mean - half, 0.0), mean + half
    lo = np.where(ok, lo, math.nan)
    # the trace's own durations: end - start on the log's Unix-epoch clock is a multiple of 0.24 us
    duration = kernels["duration_s"].to_numpy(dtype=float) if "duration_s" in kernels else end - start
    overlaps = _overlapping(start, end)
    flags = [";".join((["unresolved"] if not ok[i] else []) + (["overlaps"] if overlaps[i] else [])) for i in range(len(start))]
    return pd.DataFrame(
        {
            "kernel": kernels["kernel"].to_numpy(),
            "launch": kernels["launch"].to_numpy().astype(int),
            "start_s": start,
            "end_s": end,
            "duration_s": duration,
            "samples": n.astype(int),
            "measured_power_w": mean,
            "measured_power_lo_w": lo,
            "measured_power_hi_w": hi,
            "measured_energy_j": mean * duration,
            "measured_energy_lo_j": lo * duration,
            "measured_energy_hi_j": hi * duration,
            "flags": flags,
        }
    )


def _overlapping(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    order = np.argsort(start, kind="stable")
    out = np.zeros(len(start), dtype=bool)
    latest_end, latest = -math.inf, -1
    for i in order:
        if start[i] < latest_end:
            out[i] = out[latest] = True
        if end[i] > latest_end:
            latest_end, latest = end[i], i
    return out


def busy_fraction(edges: np.ndarray, busy: np.ndarray, times_s: np.ndarray, window_s: float) -> np.ndarray:
    """The fraction of each reading's window ``[t - w, t]`` in which some kernel ran (for ``w`` = 0: whether one
    was running at ``t``), the kernels given as :func:`_busy_time`'s knots (moved in time by adding to ``edges``)."""
    t = np.asarray(times_s, dtype=float)
    if window_s <= 0:  # edges alternate start, end: a time after an odd number of them is inside a kernel
        return (np.searchsorted(edges, t, side="right") % 2).astype(float)
    return (np.interp(t, edges, busy) - np.interp(t - window_s, edges, busy)) / window_s


def _busy_time(kernels: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Knots of the cumulative time [s] some kernel was running, the kernels' intervals merged."""
    spans = sorted(zip(kernels["start_s"], kernels["end_s"]))
    merged: list[list[float]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    edges, cumulative, total = [], [], 0.0
    for a, b in merged:
        edges += [a, b]
        cumulative += [total, total + (b - a)]
        total += b - a
    return np.array(edges), np.array(cumulative)


def align_offset(kernels: pd.DataFrame, samples: pd.DataFrame, *, window_s: float, period_s: float) -> tuple[float, float]:
    """``(offset [s], correlation)``: the shift of the trace onto the log's clock at which the readings follow the
    kernels best (Pearson correlation of power with :func:`busy_fraction`), searched in steps of a tenth of a
    period over every shift that keeps the trace inside the log; a :class:`CosimError` when none reaches
    :data:`MIN_ALIGN_CORRELATION`."""
    t = samples["time_s"].to_numpy(dtype=float)
    p = samples["power_w"].to_numpy(dtype=float)
    first, last = float(kernels["start_s"].min()), float(kernels["end_s"].max())
    lo, hi = t.min() - first, t.max() - last
    if hi < lo:
        raise CosimError(
            f"the trace spans {last - first:.3g} s, longer than the power log's {t.max() - t.min():.3g} s; "
            "give a log that covers the whole run, or the offset with --offset-s"
        )
    step = period_s / 10
    offsets = np.arange(lo, hi + step / 2, step)
    if len(offsets) > 200_000:
        raise CosimError(f"the log is {len(offsets)} search steps longer than the trace; give the offset with --offset-s or --trace-zero")
    rs = np.full(len(offsets), -math.inf)
    edges, busy = _busy_time(kernels)  # merged once: moving the trace moves its edges, not its busy time
    dp = p - p.mean()
    norm_p = math.sqrt(float(dp @ dp))
    for i, offset in enumerate(offsets):
        db = busy_fraction(edges + offset, busy, t, window_s)
        db = db - db.mean()
        norm_b = math.sqrt(float(db @ db))
        if norm_b > 0 and norm_p > 0:
            rs[i] = float(db @ dp) / (norm_b * norm_p)  # Pearson's r
    rs[~np.isfinite(rs)] = -math.inf  # a flat log correlates with nothing
    best_r = float(rs.max())
    # readings a period apart fit equally well over a stretch of offsets: its middle is the estimate
    ties = np.flatnonzero(rs >= best_r - 1e-9)
    if best_r < MIN_ALIGN_CORRELATION:
        raise CosimError(
            f"the power log does not follow the kernels at any offset (best correlation {max(best_r, -1.0):.2f} < "
            f"{MIN_ALIGN_CORRELATION}); give the offset with --offset-s or the trace's start with --trace-zero"
        )
    return float(offsets[ties[len(ties) // 2]]), best_r


def shift_cost(
    kernels: pd.DataFrame,
    samples: pd.DataFrame,
    *,
    window_s: float,
    offset_s: float,
    period_s: float,
    shifts: tuple[int, ...] = (-2, -1, 1, 2),
) -> pd.DataFrame:
    """What a misalignment costs: per shift of ``k`` sample periods, the total energy [J] of the kernels resolved at
    the chosen offset, and its change from that offset [fraction]."""
    base = kernel_energy(kernels, samples, window_s=window_s, offset_s=offset_s)
    resolved = base["measured_power_w"].notna().to_numpy()
    total = float(base.loc[resolved, "measured_energy_j"].sum())
    rows = []
    for k in shifts:
        moved = kernel_energy(kernels, samples, window_s=window_s, offset_s=offset_s + k * period_s)
        energy = moved["measured_energy_j"].to_numpy()[resolved]
        known = np.isfinite(energy)
        value = float(energy[known].sum() + base["measured_energy_j"].to_numpy()[resolved][~known].sum())
        rows.append(
            {
                "shift_periods": k,
                "shift_s": k * period_s,
                "energy_j": value,
                "change": value / total - 1 if total else math.nan,
                "lost": int((~known).sum()),
            }
        )
    return pd.DataFrame(rows)
