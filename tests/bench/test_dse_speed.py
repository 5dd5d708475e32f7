"""DSE speed (issue #5): 1,000 DVFS points over 10,000 epochs in under 2 s, and the sweep's
process-pool scaling over 50 run folders (ratio of 2 workers to 1 reported).

Run with ``pytest tests/bench --benchmark-enable -n 0 -s`` to see the numbers.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pandas as pd
import pytest
from helpers import biglittle_config, biglittle_dumps, write_stats

from cosim import load_model
from cosim.dse.sweep import SweepSpec, find_runs, sweep
from cosim.dse.whatif import ClusterActivity, RecordedRun, whatif

N_EPOCHS = 10_000


@pytest.fixture(scope="module")
def big_run():
    rng = np.random.default_rng(0)
    duration = np.full(N_EPOCHS, 1e-4)
    clusters = []
    for name, model, f in (("big", "cortex-a15-walker2017", 1800.0), ("little", "cortex-a7-gemstone2018", 1400.0)):
        busy = duration * rng.uniform(0.1, 1.0, N_EPOCHS)
        clusters.append(
            ClusterActivity(
                name,
                load_model(model),
                np.full(N_EPOCHS, f),
                rng.uniform(1e-4, 1e-3, N_EPOCHS),
                rng.uniform(1e-5, 1e-4, N_EPOCHS),
                busy,
                busy * rng.uniform(0, 0.5, N_EPOCHS),
            )
        )
    return RecordedRun(duration, clusters)


def test_whatif_1000_points_10000_epochs(benchmark, big_run, measured):
    big = np.linspace(200, 1800, 40)
    little = np.linspace(200, 1400, 25)
    grid = pd.DataFrame([(b, s) for b in big for s in little], columns=["big_freq_mhz", "little_freq_mhz"])
    assert len(grid) == 1000
    table = benchmark.pedantic(whatif, args=(big_run, grid), rounds=3, iterations=1)
    assert len(table) == 1000 and np.isfinite(table["energy_j"]).all()
    if benchmark.stats is not None:
        measured("whatif_1000_points", best_s=round(benchmark.stats.stats.min, 3))
        print(f"\nwhat-if, 1000 DVFS points x {N_EPOCHS} epochs: best of 3 {benchmark.stats.stats.min:.3f} s (target < 2 s)")
        assert benchmark.stats.stats.min < 2.0  # README's target


@pytest.fixture(scope="module")
def run_folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    dumps = []
    for _ in range(100):  # 100 x 3 epochs a run
        for d in biglittle_dumps():
            dumps.append(d | {"finalTick": d["simTicks"] * (len(dumps) + 1)})
    for i in range(50):
        folder = root / f"run{i:02d}"
        folder.mkdir()
        (folder / "config.ini").write_text(biglittle_config())
        write_stats(folder / "stats.txt", dumps)
    return root


def test_sweep_pool_scaling(run_folders, measured):
    spec = SweepSpec(
        models=("cortex-a15-walker2017", "cortex-a7-gemstone2018"),
        clusters=(("big", "system.bigCluster"), ("little", "system.littleCluster")),
    )
    runs = find_runs([run_folders])
    times = {1: float("inf"), 2: float("inf")}
    for _ in range(3):  # best of 3, alternating, as pytest-benchmark takes the minimum: the least disturbed run
        for workers in (1, 2):
            start = time.perf_counter()
            table = sweep(runs, spec, workers=workers)
            times[workers] = min(times[workers], time.perf_counter() - start)
            assert len(table) == 50 and (table["error"] == "").all()
    measured("sweep_50_runs", one_worker_s=round(times[1], 2), two_workers_s=round(times[2], 2), speedup=round(times[1] / times[2], 2))
    print(f"\nsweep of 50 runs, best of 3: 1 worker {times[1]:.2f} s, 2 workers {times[2]:.2f} s, speed-up {times[1] / times[2]:.2f}x")
    assert times[1] / times[2] >= 1.7  # README's target (not met in its recorded runs: this fails where it is not)


def test_sweep_dask_local(run_folders, measured):
    distributed = pytest.importorskip("distributed")
    spec = SweepSpec(
        models=("cortex-a15-walker2017", "cortex-a7-gemstone2018"),
        clusters=(("big", "system.bigCluster"), ("little", "system.littleCluster")),
    )
    runs = find_runs([run_folders])
    environ = dict(os.environ)  # LocalCluster leaves its workers' settings (MALLOC_TRIM_THRESHOLD_...) in ours
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        client.run(lambda: __import__("cosim.dse.sweep"))  # workers start warm, as a long-lived cluster's are
        start = time.perf_counter()
        table = sweep(runs, spec, client=client)
        elapsed = time.perf_counter() - start
    os.environ.clear()
    os.environ.update(environ)  # later benchmarks' child processes must not inherit them
    assert len(table) == 50 and (table["error"] == "").all()
    one = time.perf_counter()
    sweep(runs, spec, workers=1)
    one = time.perf_counter() - one
    measured("sweep_50_runs_dask", dask_s=round(elapsed, 2), one_worker_s=round(one, 2), speedup=round(one / elapsed, 2))
    print(f"\nsweep of 50 runs on a 2-worker Dask LocalCluster: {elapsed:.2f} s, {one / elapsed:.2f}x one local worker ({one:.2f} s)")
