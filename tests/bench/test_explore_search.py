"""cosim explore --search pareto against random sampling, on a recorded full grid replayed by the gem5 stand-in.

The grid: docs/explore/search-grid.toml, 24 real gem5 runs of the bundled big.LITTLE config (recorded in
tests/data/explore-grid.tar.xz by tests/gem5_standin/record.py).  Each search is a real study through the
driver and the stand-in; its score at k runs is the share of the full grid's Pareto hypervolume that its
first k gem5 runs reach (reference point: 10 % beyond the grid's worst runtime and energy).  Median over
10 seeds, at 25 % and 50 % of the grid's runs; the goal is >= 95 % of the hypervolume with <= 40 % of the runs.

Run with ``pytest tests/bench/test_explore_search.py --benchmark-enable -n 0 -s``.
"""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from standin import replay_design, replay_recording

SEEDS = range(10)


def _study(tmp_path, design, *, sampler: str | None, seed: int = 0, budget: int | None = None):
    """Run a study in-process with one worker (so its runs come in a fixed order); its runs' (runtime, energy) in order."""
    from cosim.explore.driver import Driver, Options
    from cosim.explore.engine import PoolEngine
    from cosim.explore.search import make_sampler
    from cosim.explore.store import open_store, status_of

    folder = tmp_path / f"{sampler or 'grid'}-{seed}"
    store = open_store(folder, design.fingerprint(), sampler=make_sampler(sampler, seed=seed) if sampler else None)
    engine = PoolEngine(1)
    try:
        options = Options(search="pareto", budget=budget) if sampler else Options()
        Driver(design, store, engine, options).run()
    finally:
        engine.close()
        store.close()
    runs = [t for t in store.trials() if status_of(t) in ("ok", "failed", "refused") and "row" in t.user_attrs]
    return [(t.user_attrs["row"].get("runtime_s", np.nan), t.user_attrs["row"].get("energy_j", np.nan)) for t in runs]


def test_search_finds_the_front_with_fewer_runs_than_random(tmp_path, monkeypatch, measured):
    pytest.importorskip("optuna")
    from cosim.explore.search import hypervolume, reference_point

    monkeypatch.setenv("COSIM_STANDIN_REPLAY", str(replay_recording(tmp_path / "recording")))
    design = replay_design(tmp_path)
    grid = np.array(_study(tmp_path, design, sampler=None))
    n = len(grid)
    assert n == 24 and np.isfinite(grid).all()
    ref = reference_point(grid)
    full = hypervolume(grid, ref)
    budgets = {"25 %": n // 4, "50 %": n // 2}
    shares: dict[str, dict[str, list[float]]] = {}
    for sampler in ("tpe", "random"):
        for seed in SEEDS:
            runs = np.array(_study(tmp_path, design, sampler=sampler, seed=seed, budget=budgets["50 %"]))
            assert len(runs) == budgets["50 %"]
            for label, k in budgets.items():
                shares.setdefault(sampler, {}).setdefault(label, []).append(hypervolume(runs[:k], ref) / full)
    median = {s: {k: statistics.median(v) for k, v in by.items()} for s, by in shares.items()}
    measured("explore_search", **{f"{s}_{k[:2]}_pct": round(100 * median[s][k], 1) for s in median for k in budgets})
    print(
        f"\nsearch on the recorded {n}-point grid, median of {len(SEEDS)} seeds, share of the grid's Pareto hypervolume: "
        + "; ".join(f"{s}: " + ", ".join(f"{median[s][k]:.1%} with {budgets[k]} runs ({k})" for k in budgets) for s in median)
    )
    assert median["tpe"]["50 %"] >= median["random"]["50 %"]
    assert median["tpe"]["25 %"] >= 0.95  # README's target: >= 95 % of the hypervolume with <= 40 % of the runs
