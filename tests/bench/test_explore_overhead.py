"""cosim explore's driver overhead per point (issue #24): 1,000 stand-in points on a Dask LocalCluster of 2 workers.

The stand-in gem5 (tests/gem5_standin/gem5, a shell script) copies a real stats.txt (the bundled run's first
dump) and its config.ini.  Reported, per point:
- the driver's CPU time (the driver process: its claims and records in the Optuna journal, the Dask client
  and the LocalCluster's scheduler, which run in it) -- the target, <= 50 ms, is asserted on this;
- the wall-time overhead: (wall x workers - the workers' own time in gem5 and pricing) / points, which
  also counts the time a worker waits for the driver (inflated when the machine is shared).

Run with ``pytest tests/bench/test_explore_overhead.py --benchmark-enable -n 0 -s``; COSIM_BENCH_POINTS changes N.
"""

from __future__ import annotations

import os
import time

import pytest
from standin import design, standin_run

POINTS = int(os.environ.get("COSIM_BENCH_POINTS", "1000"))


def test_driver_overhead_per_point_on_a_localcluster(tmp_path, monkeypatch, measured):
    pytest.importorskip("distributed")
    from cosim.explore.design import load_design
    from cosim.explore.driver import Driver, Options
    from cosim.explore.engine import DaskEngine
    from cosim.explore.store import open_store
    from cosim.explore.table import results

    monkeypatch.setenv("COSIM_STANDIN_RUN", str(standin_run(tmp_path / "run", dumps=1)))
    path = design(tmp_path, '"--seed" = [' + ", ".join(map(str, range(POINTS))) + "]")
    d = load_design(path)
    store = open_store(tmp_path / "study", d.fingerprint())
    engine = DaskEngine("local", 2)
    try:
        store.start_lease()
        driver = Driver(d, store, engine, Options())
        cpu, wall = time.process_time(), time.perf_counter()
        outcome = driver.run()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        engine.close()
        store.close()
    assert outcome.ran == POINTS and outcome.failed == 0
    table = results(d, store)
    assert len(table) == POINTS and (table["status"] == "ok").all()
    worker_s = sum(t["gem5_s"] + t["price_s"] for t in outcome.timings)
    gem5_s = sum(t["gem5_s"] for t in outcome.timings)
    driver_ms = 1e3 * cpu / POINTS
    wall_ms = 1e3 * (wall * engine.workers - worker_s) / POINTS
    if POINTS == 1000:  # the documented size
        measured("explore_driver_1000_points", driver_ms=round(driver_ms, 1), wall_overhead_ms=round(wall_ms, 1))
    print(
        f"\ncosim explore, {POINTS} stand-in points, LocalCluster of {engine.workers}: wall {wall:.1f} s; "
        f"driver CPU {driver_ms:.1f} ms/point (target <= 50); wall overhead {wall_ms:.1f} ms/point; "
        f"worker time {1e3 * worker_s / POINTS:.1f} ms/point (stand-in gem5 {1e3 * gem5_s / POINTS:.1f}, pricing the rest)"
    )
    assert driver_ms <= 50
