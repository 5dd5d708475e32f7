"""The what-if's peak power: the highest power over windows as long as the recorded run's dumps, with each cluster
running its recorded epochs at its own new pace (the clusters run side by side, as the what-if's runtime has it)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def peak_power_w(
    *,
    runtime_s: np.ndarray,
    window_s: float,
    epoch_s: Sequence[np.ndarray],
    dyn_j: Sequence[np.ndarray],
    static_w: np.ndarray,
) -> np.ndarray:
    """The highest mean power [W] over consecutive windows of ``window_s`` [s] (the last one shorter) from 0 to each
    row's ``runtime_s`` [s].  Per cluster, ``epoch_s`` [s] and ``dyn_j`` [J] (rows, epochs): how long it takes for
    each recorded epoch's work at the row's clocks and the dynamic energy that work spends, spread evenly over it; a
    cluster's work past the runtime falls outside.  ``static_w`` [W] (rows,): the clusters' static power, drawn
    until the run ends.  A window as long as the run (one dump) gives the average power."""
    peak = np.zeros(len(runtime_s))
    for row, total in enumerate(runtime_s):
        # whole windows, then the rest (none when the run is a whole number of windows: no sliver at its end)
        n = max(int(np.ceil(total / window_s * (1.0 - 1e-9))), 1) if np.isfinite(window_s) else 1
        edges = np.minimum(np.arange(n + 1) * min(window_s, total), total)
        edges[-1] = total
        energy = static_w[row] * edges  # energy spent by each edge [J]
        for time, work in zip(epoch_s, dyn_j):  # when each epoch's work ends [s], the dynamic energy spent by then [J]
            ends = np.concatenate([[0.0], np.cumsum(time[row])])
            energy = energy + np.interp(edges, ends, np.concatenate([[0.0], np.cumsum(work[row])]))
        width = np.diff(edges)
        keep = width > 0
        peak[row] = np.max(np.diff(energy)[keep] / width[keep]) if keep.any() else 0.0
    return peak


def dump_period_s(duration_s: np.ndarray) -> float:
    """The recorded run's dump period [s]: its dumps' median length, the last one aside (gem5's last dump is the
    partial one, at exit); a run of one dump: infinite (its window is the whole run, as gem5's one dump)."""
    return float(np.median(duration_s[:-1])) if len(duration_s) > 1 else np.inf
