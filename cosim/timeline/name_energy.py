"""Energy per kernel name from a power log too coarse to see single launches, and an honest answer where it cannot.

The sensor model and fit are :mod:`cosim.timeline.name_shares`'s.  Here:

* the window ``w`` and lag are estimated from the log (:func:`search_window`): the fit's residual over a grid of
  windows (0-2 s) and lags, a profile likelihood whose 90 % set (``n_eff * ln(RSS / RSS_min) <= 4.61``, ``n_eff``
  the readings discounted for their lag-1 autocorrelation) is the estimate's uncertainty;
* intervals (:func:`estimate`) are the 5th-95th percentiles of a moving-block bootstrap of the readings (the block
  as long as the residuals stay correlated, :func:`~cosim.timeline.name_shares.block_length`), widened by a
  delete-one jackknife over :data:`SEGMENTS` stretches of the run (a name's power changing with context) and by how far
  the energy moves over the window/lag set; their coverage is measured, not assumed (docs/howto/gpu-energy-made.json);
* identifiability is checked, never assumed: names whose share columns correlate above :data:`MERGE_CORRELATION`
  are merged into one group; a name or group gets no number and the flag ``not_identifiable`` (with the reason) when
  it is seen by fewer than :data:`MIN_READINGS_SEEN` readings, when more powers would be fitted than one per
  :data:`MIN_READINGS_PER_POWER` readings (the least busy names pooled), when its variance inflation exceeds
  :data:`MAX_VIF`, when its interval is wider than :data:`MAX_REL_HALF_WIDTH` of its energy, when its energy moves by
  more than :data:`MAX_MOVE` within the window/lag uncertainty, or when its implied power lies above the board's limit.
  The constants were set before any scoring and kept after a look at made-here logs (tests/gpu_energy_made.py, seeds
  0-9); seeds 10-29 score them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from cosim.timeline.measured_energy import student_t_quantile
from cosim.timeline.name_shares import Activity, activity, block_length, block_weights, design, fit, group_knots, window_share

MERGE_CORRELATION = 0.99
MAX_VIF = 100.0
MIN_READINGS_PER_POWER = 10
MIN_READINGS_SEEN = 5
MAX_REL_HALF_WIDTH = 0.25
MAX_MOVE = 0.25
#: chi-square(2) 90 % quantile: the (window, lag) set of the profile likelihood
CHI2_2_90 = 4.605
#: the windows searched [s]: NVML's documented 0 and 1 s, and what lies between and beyond
WINDOWS_S = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.4, 1.6, 2.0)
#: the window is "estimated from the log" when its 90 % set is at most this wide [s]
WINDOW_KNOWN_S = 0.5
SEARCH_COLUMNS = 12
#: at most this many powers fitted (a bound on the work: 200 bootstrap fits), the least busy names pooled beyond it
MAX_POWERS = 40
#: contiguous stretches of the delete-one jackknife
SEGMENTS = 10
OTHER = "(other names)"

Progress = Callable[[Iterable], Iterable]


@dataclass
class WindowSearch:
    window_s: float
    lag_s: float
    window_lo_s: float
    window_hi_s: float
    lag_lo_s: float
    lag_hi_s: float
    points: list[tuple[float, float]]  # the (window, lag) pairs in the 90 % set
    estimated: bool  # whether the log tells the window (its set no wider than WINDOW_KNOWN_S)


@dataclass
class NameEnergy:
    table: pd.DataFrame
    search: WindowSearch
    idle_w: float
    idle_from: str
    kernel_j: float
    kernel_lo_j: float
    kernel_hi_j: float
    kernel_in_log_j: float
    idle_outside_j: float
    run_j: float  # the run's energy over the log [J]: the readings' integral spans their first to last window's centre
    unexplained_j: float
    block: int
    replicates: int
    notes: list[str] = field(default_factory=list)
    run_span_s: tuple[float, float] = (0.0, 0.0)  # what run_j covers on the log's clock [s]


def _initial_groups(act: Activity, readings: int, limit: int | None = None) -> tuple[list[list[int]], list[str]]:
    """One group per name, the least busy pooled into :data:`OTHER` beyond one fitted power per
    :data:`MIN_READINGS_PER_POWER` readings (and beyond ``limit`` columns)."""
    most = max(1, min(readings // MIN_READINGS_PER_POWER - 1, MAX_POWERS))
    if limit is not None:
        most = min(most, limit)
    seen = [g for g in range(len(act.names)) if act.busy_s[g] > 0]
    if len(seen) <= most:
        return [[g] for g in seen], [act.names[g] for g in seen]
    keep, rest = seen[: most - 1], seen[most - 1 :]
    return [[g] for g in keep] + [rest], [act.names[g] for g in keep] + [OTHER]


def _shift_table(act: Activity, groups: list[list[int]], t: np.ndarray, shifts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per shift ``s`` and group: the busy time before ``t - s`` [s] and how many members run at ``t - s``."""
    cum = np.zeros((len(shifts), len(t), len(groups)))
    inside = np.zeros_like(cum)
    at = t[None, :] - shifts[:, None]
    for j, members in enumerate(groups):
        knots, c, running = group_knots(act, members)
        if len(knots):
            cum[:, :, j] = np.interp(at, knots, c)
            i = np.searchsorted(knots, at, side="right") - 1
            inside[:, :, j] = np.where(i >= 0, running[np.maximum(i, 0)], 0.0)
    return cum, inside


def search_window(
    act: Activity,
    t: np.ndarray,
    p: np.ndarray,
    *,
    period_s: float,
    lags_s: tuple[float, float],
    window_s: float | None = None,
    progress: Progress | None = None,
) -> WindowSearch:
    """The window and lag [s] at which the fit leaves the least residual, and their 90 % profile-likelihood set;
    ``window_s`` given: only the lag is searched."""
    step = float(np.clip(period_s / 2, 0.02, 0.1))
    lo, hi = lags_s
    n_lags = int(round((hi - lo) / step)) + 1
    if n_lags > 61:  # a wide search: coarser lags, at most 61
        step = (hi - lo) / 60
        n_lags = 61
    lags = lo + step * np.arange(n_lags)
    if window_s is not None:
        windows = np.array([window_s])
    else:
        windows = np.unique(np.round(np.array(WINDOWS_S) / step) * step)
    groups, _ = _initial_groups(act, len(t), limit=SEARCH_COLUMNS)
    # every share the grid needs is a difference of cumulative busy time at t - lag and t - lag - w
    wsteps = np.rint(windows / step).astype(int) if window_s is None else np.zeros(1, dtype=int)
    shifts = lo + step * np.arange(n_lags + int(wsteps.max()))
    cum, inside = _shift_table(act, groups, t, shifts)
    given = window_s is not None and window_s > 0
    cum_w = _shift_table(act, groups, t, lags + float(window_s or 0.0))[0] if given else cum
    rss = np.full((len(windows), n_lags), np.inf)
    ones = np.ones((len(t), 1))
    rows = list(range(len(windows)))
    for i in progress(rows) if progress else rows:
        w = float(windows[i])
        for k in range(n_lags):
            if w <= 0:
                share = inside[k]
            elif given:
                share = (cum[k] - cum_w[k]) / w
            else:
                share = (cum[k] - cum[k + wsteps[i]]) / w
            x = np.hstack([ones, share])
            _, rss[i, k] = fit(x, p)
    best = np.unravel_index(int(np.argmin(rss)), rss.shape)
    w_best, lag_best = float(windows[best[0]]), float(lags[best[1]])
    fine = lag_best + step * np.linspace(-1, 1, 21)  # the lag to a twentieth of the grid's step
    fine_rss = [fit(design(act, groups, t, w_best, float(f)), p)[1] for f in fine]
    if min(fine_rss) < rss[best]:
        lag_best = float(fine[int(np.argmin(fine_rss))])
    x = design(act, groups, t, w_best, lag_best)
    beta, _ = fit(x, p)
    resid = p - x @ beta
    rho = _lag1(resid)
    n_eff = len(t) * (1 - rho) / (1 + rho)
    floor = max(float(rss.min()), 1e-12)
    inset = n_eff * np.log(np.maximum(rss, floor) / floor) <= CHI2_2_90
    wi, ki = np.nonzero(inset)
    points = [(float(windows[a]), float(lags[b])) for a, b in zip(wi, ki)]
    w_lo, w_hi = float(windows[wi].min()), float(windows[wi].max())
    return WindowSearch(
        w_best,
        lag_best,
        w_lo,
        w_hi,
        min(float(lags[ki].min()), lag_best),
        max(float(lags[ki].max()), lag_best),
        points,
        estimated=window_s is None and (w_hi - w_lo) <= WINDOW_KNOWN_S,
    )


def _lag1(r: np.ndarray) -> float:
    r = r - r.mean()
    den = float(r @ r)
    if den <= 0 or len(r) < 3:
        return 0.0
    return float(np.clip((r[1:] @ r[:-1]) / den, 0.0, 0.99))


def _merge_moving_together(x: np.ndarray, groups: list[list[int]], labels: list[str]) -> tuple[list[list[int]], list[str], dict]:
    """Groups whose share columns correlate above :data:`MERGE_CORRELATION` merged (union-find); returns the new
    groups, labels and, per new group index, the labels merged into it."""
    cols = x[:, 1:]
    sd = cols.std(axis=0)
    parent = list(range(len(groups)))

    def root(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    live = np.flatnonzero(sd > 0)
    if len(live) > 1:
        corr = np.corrcoef(cols[:, live].T)
        for a, b in zip(*np.nonzero(np.triu(corr, 1) > MERGE_CORRELATION)):
            parent[root(int(live[a]))] = root(int(live[b]))
    merged: dict[int, list[int]] = {}
    for j in range(len(groups)):
        merged.setdefault(root(j), []).append(j)
    new_groups, new_labels, members = [], [], {}
    for js in merged.values():
        new_groups.append(sorted(g for j in js for g in groups[j]))
        new_labels.append(" + ".join(labels[j] for j in js))
        members[len(new_groups) - 1] = [labels[j] for j in js]
    return new_groups, new_labels, members


def _vif(x: np.ndarray) -> np.ndarray:
    """Each share column's variance inflation factor (1 / (1 - R^2) of it on the others, with the intercept)."""
    cols = x[:, 1:]
    sd = cols.std(axis=0)
    out = np.full(cols.shape[1], np.inf)
    live = np.flatnonzero(sd > 1e-12)
    if len(live) == 1:
        out[live] = 1.0
    elif len(live) > 1:
        corr = np.corrcoef(cols[:, live].T)
        out[live] = np.diag(np.linalg.pinv(corr))
    return out


def _nanquantiles(values: np.ndarray, q: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the ``q`` quantiles of the finite values (nan where fewer than 10)."""
    lo, hi = np.full(values.shape[1], np.nan), np.full(values.shape[1], np.nan)
    for j in range(values.shape[1]):
        v = values[:, j][np.isfinite(values[:, j])]
        if len(v) >= 10:
            lo[j], hi[j] = np.quantile(v, q)
    return lo, hi


def _jackknife_half(values: np.ndarray, level: float) -> float:
    """The half-width of a delete-one jackknife's Student-t interval from the finite leave-one-out values."""
    v = values[np.isfinite(values)]
    k = len(v)
    if k < 3:
        return math.inf
    return student_t_quantile(0.5 + level / 2, k - 1) * math.sqrt((k - 1) / k * float(((v - v.mean()) ** 2).sum()))


def _energies(beta: np.ndarray, busy: np.ndarray, shared: np.ndarray) -> np.ndarray:
    """Per group, the board's energy while it ran [J]: its power above idle times its busy time, plus idle times
    its shared busy time.  ``beta`` may be one fit or a stack of them."""
    beta = np.atleast_2d(beta)
    return beta[:, 1:] * busy + beta[:, :1] * shared


def estimate(
    kernels: pd.DataFrame,
    samples: pd.DataFrame,
    *,
    offset_s: float,
    period_s: float,
    lags_s: tuple[float, float],
    window_s: float | None = None,
    doc_window_s: float | None = None,
    power_limit_w: float | None = None,
    run_energy_j: float | None = None,
    replicates: int = 200,
    level: float = 0.9,
    seed: int = 0,
    progress: Progress | None = None,
) -> NameEnergy:
    """Energy per kernel name (module docstring).  ``window_s`` given: the window is not searched; else it is
    estimated from the log and, where the log cannot tell it, ``doc_window_s`` (the GPU's documented one) is used.
    ``run_energy_j`` [J] (an energy counter's) replaces the integrated power as the run's energy."""
    t = samples["time_s"].to_numpy(dtype=float)
    p = samples["power_w"].to_numpy(dtype=float)
    act = activity(kernels, offset_s=offset_s)
    search = search_window(act, t, p, period_s=period_s, lags_s=lags_s, window_s=window_s, progress=progress)
    notes = []
    if window_s is None and not search.estimated and doc_window_s is not None:
        notes.append(
            f"the log fits windows {search.window_lo_s:g}-{search.window_hi_s:g} s alike: the documented {doc_window_s:g} s is used"
        )
        fixed = search_window(act, t, p, period_s=period_s, lags_s=lags_s, window_s=doc_window_s)
        search = WindowSearch(
            doc_window_s, fixed.lag_s, search.window_lo_s, search.window_hi_s, fixed.lag_lo_s, fixed.lag_hi_s, fixed.points, False
        )
    w, lag = search.window_s, search.lag_s
    groups, labels = _initial_groups(act, len(t))
    pooled = {g for members, label in zip(groups, labels) if label == OTHER for g in members}
    x = design(act, groups, t, w, lag)
    groups, labels, merged = _merge_moving_together(x, groups, labels)
    x = design(act, groups, t, w, lag)
    busy = np.array([act.busy_s[m].sum() for m in groups])
    shared = np.array([act.shared_s[m].sum() for m in groups])
    beta, _ = fit(x, p)
    energy = _energies(beta, busy, shared)[0]
    resid = p - x @ beta
    block = block_length(resid, int(round(w / period_s)))
    rng = np.random.default_rng(seed)
    weights = block_weights(len(t), block, rng, replicates)
    betas = np.array([fit(x, p, weights[b])[0] for b in range(replicates)])
    informative = (x[:, 1:] > 0).astype(float)
    boot = _energies(betas, busy, shared)
    boot[weights @ informative < MIN_READINGS_SEEN] = np.nan  # a draw that left a name unseen says nothing of it
    q = (0.5 - level / 2, 0.5 + level / 2)
    lo, hi = _nanquantiles(boot, q)
    kernel_boot = np.where(np.isnan(boot), energy, boot).sum(axis=1)
    # a delete-one-segment jackknife over SEGMENTS contiguous stretches: a name's power that changes with context
    # (from one stretch of the run to the next) widens it where short bootstrap blocks cannot see it
    cut = np.linspace(0, len(t), SEGMENTS + 1).astype(int)
    jack = np.full((SEGMENTS, len(groups)), np.nan)
    for k in range(SEGMENTS):
        keep = np.ones(len(t))
        keep[cut[k] : cut[k + 1]] = 0.0
        jack[k] = _energies(fit(x, p, keep)[0], busy, shared)[0]
        jack[k, keep @ informative < MIN_READINGS_SEEN] = np.nan
    half = np.array([_jackknife_half(jack[:, j], level) for j in range(len(groups))])
    lo, hi = np.fmin(lo, energy - half), np.fmax(hi, energy + half)
    kernel_half = _jackknife_half(np.where(np.isnan(jack), energy, jack).sum(axis=1), level)
    # how far each energy moves over the window/lag set
    moved_lo, moved_hi = energy.copy(), energy.copy()
    kernel_moved = [float(energy.sum())]
    pts = search.points if len(search.points) <= 40 else [search.points[i] for i in np.linspace(0, len(search.points) - 1, 40).astype(int)]
    for pw, pl in pts:
        e = _energies(fit(design(act, groups, t, pw, pl), p)[0], busy, shared)[0]
        moved_lo, moved_hi = np.minimum(moved_lo, e), np.maximum(moved_hi, e)
        kernel_moved.append(float(e.sum()))
    lo, hi = np.fmin(np.fmin(lo, moved_lo), energy), np.fmax(np.fmax(hi, moved_hi), energy)
    seen = (x[:, 1:] > 0).sum(axis=0)
    vif = _vif(x)
    rows = []
    for j, members in enumerate(groups):
        power = beta[0] + beta[1 + j]
        power_lo = float(np.quantile(betas[:, 0] + betas[:, 1 + j], q[0]))
        reasons = []
        if seen[j] < MIN_READINGS_SEEN:
            reasons.append(f"seen by {seen[j]} reading(s), fewer than {MIN_READINGS_SEEN}")
        if labels[j] == OTHER or any(g in pooled for g in members):
            reasons.append(
                f"pooled with the least busy names: more than one fitted power per {MIN_READINGS_PER_POWER} readings, or more than {MAX_POWERS}"
            )
        if vif[j] > MAX_VIF:
            reasons.append(f"its busy share is told from the others' only to a variance inflation of {vif[j]:.3g} (> {MAX_VIF:g})")
        half = (hi[j] - lo[j]) / 2
        if energy[j] > 0 and half > MAX_REL_HALF_WIDTH * energy[j]:
            reasons.append(f"its energy is known to +/-{100 * half / energy[j]:.0f} % only (> {100 * MAX_REL_HALF_WIDTH:.0f} %)")
        move = (moved_hi[j] - moved_lo[j]) / 2
        if energy[j] > 0 and move > MAX_MOVE * energy[j]:
            reasons.append(f"its energy moves by +/-{100 * move / energy[j]:.0f} % within the window/lag uncertainty")
        if power_limit_w is not None and power_lo > power_limit_w:
            reasons.append(f"it implies {power_lo:.4g} W or more, above the board's {power_limit_w:.4g} W limit")
        ok = not reasons
        rows.append(
            {
                "kernel": labels[j],
                "members": len(members),
                "launches": int(act.launches[members].sum()),
                "busy_s": float(busy[j]),
                "readings": int(seen[j]),
                "power_w": float(power) if ok else math.nan,
                "energy_j": float(energy[j]) if ok else math.nan,
                "energy_j_lo": float(lo[j]) if ok else math.nan,
                "energy_j_hi": float(hi[j]) if ok else math.nan,
                "flags": "" if ok else "not_identifiable",
                "reason": "; ".join(reasons),
            }
        )
        if len(members) > 1:  # the names merged or pooled into this group: each listed, no number of its own
            why = (
                f"pooled with the least busy names into '{OTHER}': only their pooled energy could be fitted"
                if any(g in pooled for g in members)
                else f"its busy time moves with the rest of group '{labels[j]}': only the group's energy is known"
            )
            for g in members:
                rows.append(
                    {
                        "kernel": act.names[g],
                        "members": 1,
                        "launches": int(act.launches[g]),
                        "busy_s": float(act.busy_s[g]),
                        "readings": int(seen[j]),
                        "power_w": math.nan,
                        "energy_j": math.nan,
                        "energy_j_lo": math.nan,
                        "energy_j_hi": math.nan,
                        "flags": "not_identifiable",
                        "reason": why,
                    }
                )
    for g in range(len(act.names)):  # names the log never saw
        if act.busy_s[g] <= 0 or not any(g in m for m in groups):
            rows.append(
                {
                    "kernel": act.names[g],
                    "members": 1,
                    "launches": int(act.launches[g]),
                    "busy_s": float(act.busy_s[g]),
                    "readings": 0,
                    "flags": "not_identifiable",
                    "reason": "no busy time" if act.busy_s[g] <= 0 else "not fitted",
                }
            )
    table = pd.DataFrame(rows)
    # the run's energy, split: idle outside the kernels + the kernels' energy inside the log + what neither explains
    union = window_share(act.union_edges, act.union_cumulative, t, w, lag)
    span = float(t[-1] - t[0])
    run = float(np.trapezoid(p, t)) if run_energy_j is None else run_energy_j
    idle_readings = p[union <= 0]
    if len(idle_readings) >= MIN_READINGS_SEEN:
        idle, idle_from = float(np.median(idle_readings)), f"the median of {len(idle_readings)} readings that saw no kernel"
    else:
        idle, idle_from = float(beta[0]), "the fit (fewer than 5 readings saw no kernel)"
    share_s = np.trapezoid(x[:, 1:], t, axis=0)
    union_s = float(np.trapezoid(union, t))
    kernel_in_log = float(beta[1:] @ share_s + beta[0] * union_s)
    idle_outside = idle * (span - union_s)
    kernel = (
        float(energy.sum()),
        float(min(np.quantile(kernel_boot, q[0]), energy.sum() - kernel_half, min(kernel_moved))),
        float(max(np.quantile(kernel_boot, q[1]), energy.sum() + kernel_half, max(kernel_moved))),
    )
    if not (union > 0).any():  # no reading saw a kernel: their energy would be idle power times their time, invented
        kernel = (math.nan, math.nan, math.nan)
        notes.append("no reading's window saw a kernel: check the trace's offset (--offset-s, --trace-zero)")
    return NameEnergy(
        table,
        search,
        idle,
        idle_from,
        *kernel,
        kernel_in_log,
        idle_outside,
        run,
        run - idle_outside - kernel_in_log,
        block,
        replicates,
        notes,
        (float(t[0]) - lag - w / 2, float(t[-1]) - lag - w / 2) if run_energy_j is None else (float(t[0]), float(t[-1])),
    )
