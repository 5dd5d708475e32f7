"""The linear sensor model behind energy per kernel name: what each power reading sees of each name, and its fit.

Domain, stated once: reading ``i`` at ``t_i`` [s] (the log's clock) is the board's mean power over the window
``[t_i - lag - w, t_i - lag]`` (``w`` [s] the sensor's averaging window, 0 for an instantaneous reading; ``lag`` [s]
the sensor's delay plus any error of the trace's offset).  Over that window::

    reading_i = P_idle + sum over names g of P_g * share_g(i)

``share_g(i)`` is the fraction of the window in which name ``g`` ran (for ``w`` = 0: 1 if it ran at that instant),
``P_g`` [W] the power it adds above ``P_idle`` [W].  Both are fitted by non-negative least squares over all the run's
readings (:func:`nnls`, Lawson-Hanson on the normal equations; no scipy).  A name's energy [J] is what the board drew
while it ran: ``P_g * busy_g + P_idle * shared_g`` (``shared_g``: its busy time with the time it ran beside other
names split equally among them, so the names' energies sum to the kernels' pooled energy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Activity:
    """When each kernel name ran, on the log's clock."""

    names: list[str]
    launches: np.ndarray  # launches per name
    busy_s: np.ndarray  # the union of each name's launches [s]
    shared_s: np.ndarray  # each name's busy time, time beside other names split equally [s]
    edges: list[np.ndarray]  # per name: merged span edges start, end, start, end ... [s]
    cumulative: list[np.ndarray]  # per name: busy time before each edge [s]
    union_edges: np.ndarray  # any kernel: merged span edges [s]
    union_cumulative: np.ndarray
    knots: dict = field(default_factory=dict, compare=False, repr=False)  # group_knots' cache

    @property
    def union_s(self) -> float:
        return float(self.union_cumulative[-1]) if len(self.union_cumulative) else 0.0


def _merge(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Edges and cumulative busy time [s] of the union of the spans ``[start, end]``."""
    order = np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    reach = np.maximum.accumulate(e)
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > reach[:-1]  # a span starting after every earlier one ended opens a new merged span
    first = np.flatnonzero(new)
    last = np.r_[first[1:] - 1, len(s) - 1]
    a, b = s[first], reach[last]
    edges = np.empty(2 * len(a))
    edges[0::2], edges[1::2] = a, b
    lengths = b - a
    cum = np.empty(2 * len(a))
    before = np.r_[0.0, np.cumsum(lengths)[:-1]]
    cum[0::2], cum[1::2] = before, before + lengths
    return edges, cum


def activity(kernels: pd.DataFrame, *, offset_s: float) -> Activity:
    """Per kernel name (``kernels``: ``kernel``, ``start_s``, ``end_s`` [s] on the trace's clock, moved by
    ``offset_s`` [s] onto the log's): its launches, busy time and shared busy time (:class:`Activity`)."""
    start = kernels["start_s"].to_numpy(dtype=float) + offset_s
    end = np.maximum(kernels["end_s"].to_numpy(dtype=float) + offset_s, start)
    codes, names = pd.factorize(kernels["kernel"].astype(str), sort=False)
    launches = np.bincount(codes, minlength=len(names))
    edges, cumulative = [], []
    for g in range(len(names)):
        mine = codes == g
        e, c = _merge(start[mine], end[mine])
        edges.append(e)
        cumulative.append(c)
    busy = np.array([c[-1] if len(c) else 0.0 for c in cumulative])
    shared = _shared_time(edges, busy)
    union_edges, union_cum = _merge(start, end) if len(start) else (np.zeros(0), np.zeros(0))
    order = np.argsort(-busy, kind="stable")  # the busiest name first
    return Activity(
        [str(names[g]) for g in order],
        launches[order],
        busy[order],
        shared[order],
        [edges[g] for g in order],
        [cumulative[g] for g in order],
        union_edges,
        union_cum,
    )


def _shared_time(edges: list[np.ndarray], busy: np.ndarray) -> np.ndarray:
    """Each name's busy time with the time it shares with ``n`` other names counted ``1 / (n + 1)`` [s]."""
    points = np.concatenate(edges) if edges else np.zeros(0)
    if not len(points):
        return busy.copy()
    steps = np.concatenate([np.tile([1, -1], len(e) // 2) for e in edges])
    order = np.argsort(points, kind="stable")
    t, running = points[order], np.cumsum(steps[order])  # names running just after each event
    gap = np.diff(t)
    weight = np.where(running[:-1] > 0, gap / np.maximum(running[:-1], 1), 0.0)
    knots, split = t, np.r_[0.0, np.cumsum(weight)]  # split time before each event; equal times add nothing
    return np.array([float(np.sum(np.interp(e[1::2], knots, split) - np.interp(e[0::2], knots, split))) for e in edges])


def window_share(edges: np.ndarray, cumulative: np.ndarray, times_s: np.ndarray, window_s: float, lag_s: float) -> np.ndarray:
    """The fraction of each window ``[t - lag - w, t - lag]`` covered by the spans (``w`` = 0: inside one at ``t - lag``)."""
    t = np.asarray(times_s, dtype=float) - lag_s
    if not len(edges):
        return np.zeros(len(t))
    if window_s <= 0:
        return (np.searchsorted(edges, t, side="right") % 2).astype(float)
    return (np.interp(t, edges, cumulative) - np.interp(t - window_s, edges, cumulative)) / window_s


def group_knots(act: Activity, members: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A group's summed busy time as one piecewise-linear function: event times [s], the summed busy time before
    each [s], and how many member spans run just after each (cached on ``act``)."""
    key = tuple(members)
    if key not in act.knots:
        times = np.concatenate([act.edges[g] for g in members])
        steps = np.concatenate([np.tile([1, -1], len(act.edges[g]) // 2) for g in members])
        order = np.argsort(times, kind="stable")
        t, running = times[order], np.cumsum(steps[order])
        cum = np.r_[0.0, np.cumsum(running[:-1] * np.diff(t))] if len(t) else np.zeros(0)
        act.knots[key] = (t, cum, running.astype(float))
    return act.knots[key]


def group_share(act: Activity, members: list[int], times_s: np.ndarray, window_s: float, lag_s: float) -> np.ndarray:
    """The sum of the members' :func:`window_share` [fraction of the window; for ``w`` = 0, spans running at ``t - lag``]."""
    knots, cum, running = group_knots(act, members)
    t = np.asarray(times_s, dtype=float) - lag_s
    if not len(knots):
        return np.zeros(len(t))
    if window_s <= 0:
        i = np.searchsorted(knots, t, side="right") - 1
        return np.where(i >= 0, running[np.maximum(i, 0)], 0.0)
    return (np.interp(t, knots, cum) - np.interp(t - window_s, knots, cum)) / window_s


def design(act: Activity, groups: list[list[int]], times_s: np.ndarray, window_s: float, lag_s: float) -> np.ndarray:
    """The fit's design matrix: a column of ones (idle) and one share column per group of names (the sum of its
    members' shares)."""
    x = np.ones((len(times_s), 1 + len(groups)))
    for j, members in enumerate(groups):
        x[:, 1 + j] = group_share(act, members, times_s, window_s, lag_s)
    return x


def nnls(gram: np.ndarray, rhs: np.ndarray, *, tol: float = 1e-10) -> np.ndarray:
    """``argmin |X b - y|^2`` subject to ``b >= 0``, given ``gram = X'X`` and ``rhs = X'y`` (Lawson and Hanson's
    active set method, 1974, Ch. 23, on the normal equations)."""
    n = len(rhs)
    scale = np.sqrt(np.maximum(np.diag(gram), 1e-300))  # equilibrated: columns of very different size
    g = gram / np.outer(scale, scale)
    d = rhs / scale
    if n:
        # the unconstrained optimum, where every coefficient is positive, is the constrained one (the problem is
        # convex): the active set would end on this same solve with every column passive, after n of them
        z = np.linalg.lstsq(g, d, rcond=1e-12)[0]
        if (z > 0).all():
            return z / scale
    x = np.zeros(n)
    passive = np.zeros(n, dtype=bool)
    tol = tol * max(1.0, float(np.abs(d).max()) if n else 1.0)
    for _ in range(3 * n + 10):
        w = d - g @ x
        candidates = np.where(~passive, w, -np.inf)
        j = int(np.argmax(candidates))
        if passive.all() or candidates[j] <= tol:
            break
        passive[j] = True
        while True:
            z = np.zeros(n)
            idx = np.flatnonzero(passive)
            z[idx] = np.linalg.lstsq(g[np.ix_(idx, idx)], d[idx], rcond=1e-12)[0]
            if (z[idx] > 0).all():
                x = z
                break
            bad = idx[z[idx] <= 0]
            step = np.min(x[bad] / np.maximum(x[bad] - z[bad], 1e-300))
            x = x + step * (z - x)
            passive &= x > tol * 1e-3
            x[~passive] = 0.0
            if not passive.any():
                break
    return x / scale


def fit(x: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Non-negative least-squares coefficients of ``y`` on ``x`` (rows weighted by ``weights``) and the residual sum
    of squares [W^2]."""
    xw = x if weights is None else x * weights[:, None]
    beta = nnls(xw.T @ x, xw.T @ y)
    r = y - x @ beta
    return beta, float(r @ r if weights is None else (weights * r) @ r)


def block_length(residuals: np.ndarray, window_readings: int) -> int:
    """The moving-block bootstrap's block length [readings]: the lag at which the residuals' autocorrelation first
    falls below the 2/sqrt(n) noise band, no shorter than the readings one window spans plus one, at most n/4."""
    n = len(residuals)
    r = residuals - residuals.mean()
    var = float(r @ r)
    floor = max(window_readings + 1, 1)
    if var <= 0 or n < 8:
        return max(1, min(floor, n // 2 or 1))
    band = 2 / math.sqrt(n)
    spectrum = np.fft.rfft(r, 2 * n)
    acf = np.fft.irfft(spectrum * np.conj(spectrum))[:n] / var
    below = np.flatnonzero(np.abs(acf[1:]) < band)
    k = int(below[0]) + 1 if len(below) else n
    return int(max(1, min(max(k, floor), n // 4)))


def block_weights(n: int, length: int, rng: np.random.Generator, replicates: int) -> np.ndarray:
    """How often each reading is drawn in ``replicates`` moving-block bootstrap samples (Kuensch 1989): blocks of
    ``length`` consecutive readings, started anywhere, drawn until ``n`` readings are drawn."""
    blocks = -(-n // length)
    starts = rng.integers(0, n - length + 1, size=(replicates, blocks))
    counts = np.zeros((replicates, n + 1))
    rows = np.repeat(np.arange(replicates), blocks)
    np.add.at(counts, (rows, starts.ravel()), 1.0)
    np.add.at(counts, (rows, starts.ravel() + length), -1.0)
    weights = np.cumsum(counts, axis=1)[:, :n]
    over = blocks * length - n  # the last block's overhang: trim it from the end of the draw
    if over:
        weights *= n / (blocks * length)
    return weights
