"""Training-space reduction (Jetson AGX paper, Section 4.2).

Parameters are sampled from the ranges seen in real networks, each widened by a
margin so similar unseen networks are covered; an outlier far from the rest gets
its own small range instead of stretching one range across the gap; and half of
the samples are real-world parameter combinations, half random combinations
(the weighted sampling of imbalanced learning).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def ranges(values: Sequence[float], *, margin: float = 0.1, gap: float = 4.0) -> list[tuple[float, float]]:
    """Ranges covering ``values``: sorted values split where one is more than ``gap`` x the previous,
    each range widened by ``margin`` (relative) on both sides."""
    v = np.unique(np.asarray(values, dtype=float))
    groups, start = [], v[0]
    for a, b in zip(v, v[1:]):
        if a > 0 and b / a > gap:
            groups.append((start, a))
            start = b
    groups.append((start, v[-1]))
    return [(lo * (1 - margin), hi * (1 + margin)) for lo, hi in groups]


def _draw(rng: np.random.Generator, spans: list[tuple[float, float]], integer: bool) -> float:
    lo, hi = spans[rng.integers(len(spans))]
    x = rng.uniform(lo, hi)
    return float(max(1, round(x))) if integer else x


def sample_space(
    seen: Sequence[tuple[dict, list[float]]], n: int, rng: np.random.Generator, *, margin: float = 0.1, real_share: float = 0.5
) -> list[tuple[dict, list[float]]]:
    """``n`` (parameters, input shape) pairs for one kernel type, from the combinations ``seen`` in real networks."""
    names = sorted(seen[0][0])
    ndim = len(seen[0][1])
    p_spans = {k: ranges([p[k] for p, _ in seen], margin=margin) for k in names}
    d_spans = [ranges([s[d] for _, s in seen], margin=margin) for d in range(ndim)]
    out = []
    for _ in range(n):
        if rng.random() < real_share:
            p, s = seen[int(rng.integers(len(seen)))]
            out.append((dict(p), list(s)))
        else:
            p = {k: _draw(rng, p_spans[k], integer=True) for k in names}
            if "stride" in p:
                p["stride"] = float(rng.choice([1, 2]))
            out.append((p, [_draw(rng, d_spans[d], integer=True) for d in range(ndim)]))
    return out
