"""Model-guided search: Optuna's multi-objective samplers over the design's axes, and the hypervolume that scores them.

Both objectives (runtime [s], energy [J]) are minimised.  The hypervolume of a set of points is the
area they dominate up to a reference point; a search is scored by the share of the full grid's
hypervolume that the points it ran reach.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cosim.errors import CosimError

if TYPE_CHECKING:
    import numpy as np

SAMPLERS = ("tpe", "nsga2", "gp", "random")


def make_sampler(name: str, *, seed: int | None = None, workers: int = 1):
    """An Optuna sampler; TPE is multivariate with a constant liar, so points in flight are not drawn twice."""
    import optuna

    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True, constant_liar=workers > 1, n_startup_trials=5)
    if name == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed, population_size=8)
    if name == "gp":
        try:
            import scipy  # noqa: F401
            import torch  # noqa: F401
        except ImportError:
            raise CosimError("--sampler gp needs PyTorch and SciPy (pip install torch scipy); or use --sampler tpe") from None
        return optuna.samplers.GPSampler(seed=seed, n_startup_trials=5)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    raise CosimError(f"--sampler {name}: expected one of {', '.join(SAMPLERS)}")


def reference_point(points: np.ndarray) -> np.ndarray:
    """10 % beyond the worst runtime and energy of ``points`` (n x 2): every point then adds some area."""
    import numpy as np  # here, not at import: cosim --help loads this module for its --sampler choices

    worst = points.max(axis=0)
    best = points.min(axis=0)
    return worst + 0.1 * np.maximum(worst - best, 1e-12)


def hypervolume(points: Sequence[Sequence[float]] | np.ndarray, reference: np.ndarray) -> float:
    """Area dominated by ``points`` (minimised, n x 2) and bounded by ``reference``."""
    import numpy as np

    pts = np.asarray(points, dtype=float).reshape(-1, 2)
    pts = pts[np.all(pts < reference, axis=1)]
    if not len(pts):
        return 0.0
    pts = pts[np.lexsort((pts[:, 1], pts[:, 0]))]
    area, best_y = 0.0, reference[1]
    for x, y in pts:  # by runtime: each point that lowers the best energy adds a strip up to the reference runtime
        if y < best_y:
            area += (reference[0] - x) * (best_y - y)
            best_y = y
    return float(area)
