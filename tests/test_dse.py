"""DVFS what-if, choosing a configuration, and sweeps over runs."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import (
    BIG_PERIODS,
    BIGLITTLE_ARGS,
    GEM5_RUNS,
    REPO,
    biglittle_config,
    biglittle_dumps,
    needs_shared,
    run_cosim,
    write_biglittle_run,
    write_stats,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from cosim import ClusterSpec, CosimError, load_model, power_timeline, read_config, read_stats
from cosim.dse.choose import choose, pareto_front
from cosim.dse.sweep import SweepSpec, find_runs, sweep
from cosim.dse.whatif import dvfs_grid, recorded_run, whatif
from cosim.models.envelope import curve_voltage_v, static_at_w

SPECS = [("big", "system.bigCluster", "cortex-a15-walker2017"), ("little", "system.littleCluster", "cortex-a7-gemstone2018")]


def _run(folder, *, big_period=BIG_PERIODS[0], miss_latency_ticks=0.0):
    """The hand-built run with the big cluster at one clock throughout, and a given L2 miss latency sum per epoch."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.ini").write_text(biglittle_config())
    dumps = biglittle_dumps(big_periods=(big_period,) * 3)
    for d in dumps:
        d["system.bigCluster.l2.demandMissLatency::total"] = miss_latency_ticks
        # the big cluster is O3, which waits for its load misses only: here every miss is a load's
        d["system.bigCluster.l2.ReadSharedReq.missLatency::total"] = miss_latency_ticks
    write_stats(folder / "stats.txt", dumps)
    stats = read_stats(folder / "stats.txt")
    config = read_config(folder / "config.ini")
    specs = [ClusterSpec(n, p, load_model(m)) for n, p, m in SPECS]
    return stats, config, specs


def test_consistency_recorded_operating_point_reproduces_the_timeline(tmp_path):
    """Consistency check, not a validation: the what-if and the timeline share event_rates, so this only shows the
    what-if's rescaling is the identity at the recorded clocks."""
    stats, config, specs = _run(tmp_path)
    # one stated die temperature for both: the what-if has one per point, the timeline one per epoch (the thermal loop)
    specs = [dataclasses.replace(s, temperature_c=50.0) for s in specs]
    run = recorded_run(stats, config, specs)
    grid = pd.DataFrame({"big_freq_mhz": [1e6 / 556], "little_freq_mhz": [1e6 / 714]})
    row = whatif(run, grid).iloc[0]
    timeline = power_timeline(stats, config, specs)
    assert row["runtime_s"] == pytest.approx(stats["duration_s"].sum())
    assert row["energy_j"] == pytest.approx(timeline["energy_j"].sum(), rel=1e-9)
    for name in ("big", "little"):
        assert row[f"{name}_energy_j"] == pytest.approx(timeline.loc[timeline["cluster"] == name, "energy_j"].sum(), rel=1e-9)
    assert row["peak_power_w"] == pytest.approx(timeline.groupby("epoch")["power_w"].sum().max())


def test_core_bound_time_scales_with_one_over_f(tmp_path):
    stats, config, specs = _run(tmp_path)
    run = recorded_run(stats, config, specs)
    half = whatif(run, pd.DataFrame({"big_freq_mhz": [1e6 / 556 / 2], "little_freq_mhz": [1e6 / 714]})).iloc[0]
    # by hand from the fixture: each 1 ms epoch at 556 ps per cycle counts 1e9 // 556 cycles on every big CPU, of which
    # the busiest (cpus0) idles (epoch + 1) / 10; its busy time doubles at half the clock, the rest of the epoch stays
    cycles = 10**9 // 556
    busy_s = np.array([(cycles - cycles * (epoch + 1) // 10) * 556e-12 for epoch in range(3)])
    assert run.clusters[0].busy_s == pytest.approx(busy_s)
    assert half["runtime_s"] == pytest.approx(3e-3 + busy_s.sum())


def test_memory_bound_time_does_not_scale(tmp_path):
    # every busy second of the big cluster waits on memory: 2 CPUs x 1 ms of outstanding misses
    stats, config, specs = _run(tmp_path, miss_latency_ticks=2 * 10**9)
    run = recorded_run(stats, config, specs)
    assert np.allclose(run.clusters[0].mem_s, run.clusters[0].busy_s)
    slow = whatif(run, pd.DataFrame({"big_freq_mhz": [600.0], "little_freq_mhz": [1e6 / 714]})).iloc[0]
    assert slow["runtime_s"] == pytest.approx(stats["duration_s"].sum())


def test_full_grid_and_choice_on_the_biglittle_run(tmp_path):
    stats, config, specs = _run(tmp_path)
    table = whatif(recorded_run(stats, config, specs), dvfs_grid(recorded_run(stats, config, specs)))
    assert len(table) == 9 * 4  # A15 table x A7 table
    assert set(table["big_freq_mhz"]) == {200.0, 400.0, 600.0, 800.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0}
    front = pareto_front(table)
    assert front.any()
    for i in np.flatnonzero(front):  # nothing beats a front point on both counts
        r = table.iloc[i]
        assert not ((table["runtime_s"] < r["runtime_s"]) & (table["energy_j"] < r["energy_j"])).any()
    capped = choose(table, power_cap_w=2.5)  # the cap holds the peak's upper end, not its point estimate
    assert capped.row["peak_power_w_hi"] <= 2.5 and capped.row["peak_power_w_hi"] >= capped.row["peak_power_w"]
    assert capped.row["runtime_s"] == table.loc[table["peak_power_w_hi"] <= 2.5, "runtime_s"].min()
    impossible = choose(table, power_cap_w=0.01)
    assert impossible.row is None and "no configuration meets peak power <= 0.01 W" in impossible.reason
    edp = choose(table)
    assert edp.row["edp_js"] == table["edp_js"].min()


def test_pareto_front_by_hand():
    df = pd.DataFrame({"runtime_s": [1, 2, 3, 2, 4], "energy_j": [5, 3, 1, 4, 2]})
    assert pareto_front(df).tolist() == [True, True, True, False, False]


def test_whatif_command_power_cap_not_met_is_an_answer(tmp_path):
    run = write_biglittle_run(tmp_path / "m5out")
    args = ["whatif", run, *BIGLITTLE_ARGS, "-o", tmp_path / "w.csv"]
    result = run_cosim(*args, "--power-cap", "0.01", "--plot", tmp_path / "p.png")
    assert result.returncode == 0, result.stderr
    assert "no configuration meets peak power <= 0.01 W" in result.stdout
    # Walker's A15 model has an SER (0.0517 W, its paper's Table III); gemstone's A7 publishes none but its file states
    # a relative one from held-out data (issue 50, item 4), so no model's interval is the what-if's part alone
    assert "publishes no SER" not in result.stdout and "interval_whatif_only" not in result.stdout
    assert len(pd.read_csv(tmp_path / "w.csv")) == 36 and (tmp_path / "p.png").exists()


def _sweep_dirs(root, n=4):
    for i in range(n):
        folder = root / f"run{i}"
        _run(folder, big_period=[556, 714, 1000, 1667][i % 4])
    return root


def test_sweep_table_and_pool(tmp_path):
    root = _sweep_dirs(tmp_path / "runs")
    spec = SweepSpec(models=tuple(m for _, _, m in SPECS), clusters=tuple((n, c) for n, c, _ in SPECS))
    one = sweep(find_runs([root]), spec, workers=1)
    two = sweep(find_runs([root]), spec, workers=2)
    pd.testing.assert_frame_equal(one, two)
    assert one["run"].tolist() == ["run0", "run1", "run2", "run3"]
    assert one["big_freq_mhz"].round(0).tolist() == [1799.0, 1401.0, 1000.0, 600.0]
    assert (one["big_n_cpus"] == 2).all() and (one["big_l2_bytes"] == 1048576).all()
    assert (one["edp_js"] == one["energy_j"] * one["runtime_s"]).all()
    # every run repeats the same workload: the slower big clock, the less big-cluster energy at these voltages
    assert one["big_energy_j"].is_monotonic_decreasing


def test_sweep_skips_hidden_folders(tmp_path):
    """cosim explore runs a point in a hidden .ID.part-N folder until it is whole: a sweep of the study never takes one."""
    root = _sweep_dirs(tmp_path / "runs", n=2)
    shutil.copytree(root / "run0", root / ".0a1b2c3d4e5f.part-1")
    assert [p.name for p in find_runs([root])] == ["run0", "run1"]


def test_sweep_bad_inputs(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(CosimError, match="no stats.txt in this folder"):
        find_runs([tmp_path / "empty"])
    root = _sweep_dirs(tmp_path / "runs", n=2)
    (root / "run1" / "config.ini").write_text(biglittle_config().replace("bigCluster", "midCluster"))
    table = sweep(
        find_runs([root]), SweepSpec(models=tuple(m for _, _, m in SPECS), clusters=tuple((n, c) for n, c, _ in SPECS))
    )  # the failed run keeps its row, with the reason
    assert table["error"].tolist()[0] == "" and "no CPU under 'system.bigCluster'" in table["error"].tolist()[1]
    result = run_cosim("sweep", root, *BIGLITTLE_ARGS, "-o", tmp_path / "s.csv")
    assert result.returncode == 3 and "cosim: error: run run1: " in result.stderr and "1 failed" in result.stdout
    assert pd.read_csv(tmp_path / "s.csv")["run"].tolist() == ["run0", "run1"]


def test_sweep_on_a_dask_local_cluster_equals_the_pool(tmp_path):
    """Each run is read and priced on a Dask worker; only the summary rows come back, row for row the pool's.  The
    workers are threads of this process (an in-process cluster: two spawned worker processes cost 3-4 s of CPU in
    imports); tasks that cross processes, pickled, are test_sweep_cli_on_a_local_dask_cluster's."""
    distributed = pytest.importorskip("distributed")
    root = _sweep_dirs(tmp_path / "runs")
    (root / "run3" / "stats.txt").write_text("garbage\n")  # one failing run: reported in its row, the others kept
    spec = SweepSpec(models=tuple(m for _, _, m in SPECS), clusters=tuple((n, c) for n, c, _ in SPECS))
    pool = sweep(find_runs([root]), spec, workers=2)
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        dask = sweep(find_runs([root]), spec, client=client)
    pd.testing.assert_frame_equal(dask, pool)
    assert dask["error"].tolist()[:3] == ["", "", ""] and "Begin Simulation Statistics" in dask["error"].iloc[3]


@needs_shared
def test_whatif_on_the_demo_run(tmp_path):
    """The demo run has one cluster (two O3 CPUs at 2 GHz): the what-if covers the A15 table."""
    run = GEM5_RUNS / "public-old2016-arm64-fs-o3-dual"
    stats, config = read_stats(run / "stats.txt"), read_config(run / "config.ini")
    table = whatif(
        recorded := recorded_run(stats, config, [ClusterSpec("big", "system.cpu", load_model("cortex-a15-walker2017"))]),
        dvfs_grid(recorded),
    )
    assert len(table) == 9 and table["runtime_s"].is_monotonic_decreasing


def test_roofline_platform_matches_the_paper():
    from cosim.dse.roofline import balance_point, load_platform, peaks

    tk1, tx1 = load_platform("jetson-tk1-cpu"), load_platform("jetson-tx1-cpu")
    assert balance_point(tk1, [2321])[0] == pytest.approx(5.32, abs=0.01)  # paper: 5.32 FLOP/B
    assert balance_point(tx1, [1735])[0] == pytest.approx(2.68, abs=0.01)  # paper: 2.68 FLOP/B
    assert peaks(tk1, [2321])[0][0] == pytest.approx(73.02, rel=1e-3)
    for name, (lo, hi) in (("jetson-tk1-gpu", (6, 18)), ("jetson-tx1-gpu", (11, 27))):
        gpu = load_platform(name)
        freqs = np.linspace(72, gpu["max_freq_mhz"]["value"], 50)
        bal = balance_point(gpu, freqs)
        assert bal.min() == pytest.approx(lo, abs=0.1) and bal.max() == pytest.approx(hi, abs=0.3)  # paper's ranges
        assert np.allclose(bal[freqs < 250], bal[0])  # constant at low clocks, rising above the knee
        assert np.all(np.diff(bal[freqs > 450]) > 0)
    with pytest.raises(CosimError, match="known: jetson-tk1-cpu"):
        load_platform("jetson-nano")


@needs_shared
def test_roofline_places_a_real_run(tmp_path):
    from cosim.dse.roofline import run_points

    stats = read_stats(GEM5_RUNS / "public-old2016-arm64-fs-o3-dual" / "stats.txt")
    points = run_points(stats)
    dram = stats["system.physmem.bytes_read::total"][0] + stats["system.physmem.bytes_written::total"][0]
    assert points["dram_bytes"][0] == dram
    assert points["flops"][0] > 0 and points["gflops"][0] == pytest.approx(points["flops"][0] / stats["duration_s"][0] / 1e9)
    run = GEM5_RUNS / "public-old2016-arm64-fs-o3-dual" / "stats.txt"
    result = run_cosim(
        "roofline",
        "--platform",
        "jetson-tk1-cpu",
        "--freqs",
        "204,1092,2321",
        "--stats",
        run,
        "--plot",
        tmp_path / "r.png",
        "--plot-balance",
        tmp_path / "b.svg",
    )
    assert result.returncode == 0, result.stderr
    assert "2321 MHz: 73.02 GFLOP/s, 13.72 GB/s, balance 5.32 FLOP/B" in result.stdout and (tmp_path / "r.png").exists()
    assert (tmp_path / "b.svg").read_text().startswith("<?xml")


def test_sweep_prices_each_system_design_and_names_it(tmp_path):
    """Issue #46: a run of another design is priced alone and named by its design (it was refused for differing from
    the majority); each design has its own Pareto front in the command's table."""
    import json

    root = _sweep_dirs(tmp_path / "runs", n=3)
    for i, clusters in enumerate(
        (
            {"big": ("system.bigCluster", "cortex-a15-walker2017")},
            {"little": ("system.littleCluster", "cortex-a7-gemstone2018")},
            {"big": ("system.bigCluster", "cortex-a15-walker2017")},
        )
    ):
        side = {"clusters": {n: {"path": p, "model": m} for n, (p, m) in clusters.items()}}
        (root / f"run{i}" / "cosim-run.json").write_text(json.dumps(side))
    table = sweep(find_runs([root]), SweepSpec())
    assert table["run"].tolist() == ["run0", "run1", "run2"] and (table["error"] == "").all()
    assert table["path"].tolist() == [str(root / f"run{i}") for i in range(3)]
    assert table["design"].tolist() == ["big=cortex-a15-walker2017", "little=cortex-a7-gemstone2018", "big=cortex-a15-walker2017"]
    assert table["big_energy_j"].iloc[[0, 2]].gt(0).all() and table["little_energy_j"].iloc[1] > 0
    result = run_cosim("sweep", root, "-o", tmp_path / "s.csv")
    assert result.returncode == 0, result.stderr
    assert "2 groups" in result.stdout and "design=little=cortex-a7-gemstone2018 (1 runs)" in result.stdout
    written = pd.read_csv(tmp_path / "s.csv")
    assert bool(written.loc[1, "pareto"])  # alone in its design: on its own front, whatever the other design's runs cost


def test_sweep_reads_the_program_clock_layout_and_names_rows_uniquely(tmp_path):
    """``PROGRAM/CLOCK/`` (as cosim validate reads it): every run found, each named by its path below the folder given."""
    root = tmp_path / "programs"
    for program in ("alpha", "beta"):
        _sweep_dirs(root / program, n=2)
    runs = find_runs([root])
    assert [r.relative_to(root).as_posix() for r in runs] == ["alpha/run0", "alpha/run1", "beta/run0", "beta/run1"]
    spec = SweepSpec(models=tuple(m for _, _, m in SPECS), clusters=tuple((n, c) for n, c, _ in SPECS))
    table = sweep(runs, spec)
    assert table["run"].tolist() == ["alpha/run0", "alpha/run1", "beta/run0", "beta/run1"] and table["run"].is_unique
    assert find_runs([root / "alpha" / "run0", root / "alpha"]) == [root / "alpha" / "run0", root / "alpha" / "run1"]  # each once


def test_a_power_cap_compares_the_point_estimate_where_a_row_has_no_upper_end():
    """Rows without an interval (a model with no SER) are capped on their point estimate, never passed as 0 W."""
    df = pd.DataFrame(
        {
            "run": ["a", "b", "c"],
            "runtime_s": [1.0, 2.0, 3.0],
            "energy_j": [3.0, 2.5, 2.0],
            "peak_power_w": [1.15, 0.9, 0.4],
            "peak_power_w_hi": [np.nan, 1.0, np.nan],
            "flags": ["interval_whatif_only:big", "", "interval_whatif_only:big"],
        }
    )
    capped = choose(df, power_cap_w=0.5)
    assert capped.row["run"] == "c" and "for big that upper end is the point estimate" in capped.reason
    none = choose(df, power_cap_w=0.3)
    assert none.row is None and "is 0.400 W" in none.reason  # the least upper end, c's point estimate


@needs_shared
def test_sweep_power_cap_holds_on_models_without_an_interval(tmp_path):
    """Issue #46's case: cortex-a15-gemstone2018 published no SER; its rows' peak_power_w_hi was 0, so --power-cap 0.5
    chose the 1500 MHz run whose peak is 1.15 W.  The expectation comes from the rows' own peaks: a run whose peak
    (its one dump's power) is above the cap cannot be chosen, and an upper end is never below its point estimate.
    The shipped file now states a relative SER (issue 50): a copy without it is the model with no interval."""
    import json

    raw = json.loads((REPO / "models" / "cortex-a15-gemstone2018.json").read_text())
    del raw["fit_rel"]
    bare = tmp_path / "gemstone-no-ser.json"
    bare.write_text(json.dumps(raw))
    folder = GEM5_RUNS / "xu3-mibench-train" / "automotive_susan_c"
    runs = [folder / f"{f}MHz" for f in (1000, 1500, 2000)]
    out = tmp_path / "s.csv"
    result = run_cosim("sweep", *runs, "--model", bare, "--power-cap", "0.5", "-o", out)
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(out)
    assert (table["peak_power_w_hi"] >= table["peak_power_w"]).all() and (table["peak_power_w"] > 0.5).all()
    assert "no configuration meets peak power <= 0.5 W" in result.stdout
    inside = table["run"].isin(["1000MHz", "1500MHz"])  # inside the trained clocks: no interval, flagged
    assert table.loc[inside, "flags"].str.contains("peak_hi_point_estimate:").all()
    assert (table.loc[inside, "peak_power_w_hi"] == table.loc[inside, "peak_power_w"]).all()
    # a cap above the 1500 MHz run's peak but below the 2000 MHz run's upper end chooses the faster that fits
    cap = float(table.loc[table["run"] == "1500MHz", "peak_power_w"].iloc[0]) + 0.01
    result = run_cosim("sweep", *runs, "--model", bare, "--power-cap", f"{cap}", "-o", out)
    fits = table[table["peak_power_w_hi"] <= cap]
    assert result.stdout.strip().endswith(": " + fits.loc[fits["runtime_s"].idxmin(), "run"])
    assert "that upper end is the point estimate" in result.stdout


@needs_shared
def test_whatif_against_real_gem5_runs_at_other_clocks():
    """The bundled gem5 ran the same big.LITTLE workload at 1800/1400 and 1000/600 MHz: predict each from the other."""
    from whatif_pairs import compare

    runs = GEM5_RUNS / "cosim-v24-se-biglittle-o3-1800MHz-minor-1400MHz", GEM5_RUNS / "cosim-v24-se-biglittle-o3-1000MHz-minor-600MHz"
    down, up = compare(*runs), compare(*runs[::-1])
    for row in (down, up):
        # measured: runtime +2.9 % down, -3.7 % up (+11.0 / -15.2 % before the LITTLE's store misses became a
        # floor, docs/explanation/whatif.md); energy -4.9 % / +6.2 %, big cluster -5.7 % / +7.8 %: the big
        # cluster's own finish is off by -14 / +21 % (gem5 switches its store misses to InvalidateReq at 1800 MHz),
        # which the run's too-long runtime used to offset in static energy; the interval holds gem5's value both ways.
        # Asserted: the project's target for runtime (within 5 %, validation.toml) and the interval holding gem5's
        # runtime and energy (its target); the energy's errors are reported, not pinned (within 5 % is not met here)
        assert abs(row["runtime_s"]) < 5
        # a LITTLE core's stalled cycles are clocked (the cycle rule), so its energy error follows its runtime error
        assert abs(row["little_energy_j"]) < abs(row["little_runtime_s"]) + 0.5
        assert row["runtime_s_covered"] and row["energy_j_covered"]
    # the run ends with the LITTLE cluster at both clock pairs, and the what-if says so
    assert down["ends_with"] == up["ends_with"] == "little"


@needs_shared
def test_roofline_counts_each_flop_once_on_a_real_o3_run():
    """gem5 v24 O3 prints issued, committed (commitStats0) and commit.committedInstType_0 op classes: one is used."""
    import re

    from cosim.dse.roofline import run_points

    stats = read_stats(GEM5_RUNS / "cosim-v24-se-biglittle-o3-1800MHz-minor-1400MHz" / "stats.txt")
    weights = {
        "FloatAdd": 1,
        "FloatCmp": 1,
        "FloatCvt": 1,
        "FloatMult": 1,
        "FloatDiv": 1,
        "FloatMisc": 1,
        "FloatSqrt": 1,
        "FloatMultAcc": 2,
    }
    committed = sum(
        stats[c].sum() * weights[m.group(1)]
        for c in stats.columns
        if (m := re.search(r"\.commitStats0\.committedInstType::(\w+)$", c)) and m.group(1) in weights
    )
    assert committed > 0 and run_points(stats)["flops"].sum() == committed


def test_out_of_order_cores_wait_for_load_misses_only(tmp_path):
    """Store misses retire into an O3 core's store queue: L2 write-miss latency is not memory time for it."""
    stats, config, specs = _run(tmp_path, miss_latency_ticks=2 * 10**9)
    stats["system.bigCluster.l2.ReadSharedReq.missLatency::total"] = 0.0  # all of it from stores now
    assert np.allclose(recorded_run(stats, config, specs).clusters[0].mem_s, 0.0)


def test_whatif_reads_only_the_stats_it_needs(tmp_path):
    from cosim.dse.whatif import whatif_stats

    stats, config, specs = _run(tmp_path, miss_latency_ticks=10**9)
    filtered = read_stats(tmp_path / "stats.txt", stats=whatif_stats(config, specs))
    assert len(filtered.columns) < len(stats.columns)
    grid = dvfs_grid(recorded_run(stats, config, specs))
    pd.testing.assert_frame_equal(whatif(recorded_run(filtered, config, specs), grid), whatif(recorded_run(stats, config, specs), grid))


def test_sweep_cli_on_a_local_dask_cluster(tmp_path):
    pytest.importorskip("distributed")
    root = _sweep_dirs(tmp_path / "runs", n=2)
    # children of the tests' fork server (helpers.run_cosim): a new Python per command was most of this test's CPU
    args = ["sweep", root, *BIGLITTLE_ARGS]
    local = run_cosim(*args, "-o", tmp_path / "d.csv", "--scheduler", "local", "--workers", "2")
    pool = run_cosim(*args, "-o", tmp_path / "p.csv", "--workers", "2")
    assert local.returncode == 0 and pool.returncode == 0, local.stderr + pool.stderr
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "d.csv"), pd.read_csv(tmp_path / "p.csv"))
    # a scheduler nobody answers at (tcp://127.0.0.1:1): tests/test_dask_faults.py::test_an_unreachable_scheduler_is_one_line_not_a_hang


def test_ctrl_c_while_the_sweep_pool_starts_leaves_no_worker_behind():
    """cosim sweep --workers N: Ctrl-C inside the pool's first submit, after it forked the workers and before the
    thread that feeds them started, left workers nothing would stop, and the command's exit waited for them for ever
    (the same race as explore's, tests/test_explore.py)."""
    from helpers import pool_workers_left

    code = (
        "from cosim.dse.sweep import sweep\n"
        "try:\n"
        "    sweep(['run-a', 'run-b'], None, workers=2)\n"  # interrupted before any run is read
        "except KeyboardInterrupt:\n"
        "    pass\n"
    )
    assert pool_workers_left(code) == 0


def test_an_unmet_deadline_reports_the_lowest_peak_of_all_configurations():
    """The message names the table's lowest peak power, not the fastest configuration's (which is the highest here)."""
    df = pd.DataFrame({"runtime_s": [1.0, 2.0, 3.0], "energy_j": [3.0, 2.0, 1.0], "peak_power_w": [3.0, 1.0, 0.5]})
    choice = choose(df, deadline_s=0.5)
    assert choice.row is None and "lowest peak power is 0.500 W" in choice.reason and "shortest runtime 1 s" in choice.reason


def test_a_deadline_choice_says_when_its_runtime_interval_reaches_past_the_deadline():
    """The choice is made on the predicted runtime; where the chosen row's interval reaches past the deadline the
    reason says so, and it does not where the whole interval meets it (the bundled big.LITTLE run's what-if)."""
    run_dir = Path(__file__).parent.parent / "traces" / "cosim-v24-se-biglittle-1800-1400MHz"
    specs = [ClusterSpec(n, p, load_model(m)) for n, p, m in SPECS]
    rec = recorded_run(read_stats(run_dir / "stats.txt.gz"), read_config(run_dir / "config.ini"), specs)
    table = whatif(rec, dvfs_grid(rec))
    least = table.loc[table["energy_j"].idxmin()]
    tight = choose(table, deadline_s=(least["runtime_s"] + least["runtime_s_hi"]) / 2)
    assert tight.row is not None and tight.row.name == least.name
    assert "runtime interval reaches" in tight.reason and "past the deadline" in tight.reason
    loose = choose(table, deadline_s=float(table["runtime_s_hi"].max()))
    assert loose.row is not None and "past the deadline" not in loose.reason


def test_whatif_rows_say_when_a_model_prices_the_other_kind_of_core():
    """The bundled run's LITTLE cluster is Minor (in-order): priced by the out-of-order A15 model its what-if rows
    carry core_kind_mismatch:little, as cosim power's rows do; with the A7 model they do not."""
    import warnings

    run_dir = Path(__file__).parent.parent / "traces" / "cosim-v24-se-biglittle-1800-1400MHz"
    stats, config = read_stats(run_dir / "stats.txt.gz"), read_config(run_dir / "config.ini")
    grid = pd.DataFrame({"big_freq_mhz": [1000.0], "little_freq_mhz": [1000.0]})
    wrong = [
        ClusterSpec("big", "system.bigCluster", load_model("cortex-a15-walker2017")),
        ClusterSpec("little", "system.littleCluster", load_model("cortex-a15-walker2017")),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the what-if itself does not warn: the command does, once
        flags = whatif(recorded_run(stats, config, wrong), grid, extrapolate=True)["flags"].iloc[0].split(";")
    assert "core_kind_mismatch:little" in flags and "core_kind_mismatch:big" not in flags
    right = [ClusterSpec(n, p, load_model(m)) for n, p, m in SPECS]
    assert "core_kind_mismatch" not in whatif(recorded_run(stats, config, right), grid)["flags"].iloc[0]


def test_the_energy_interval_carries_the_power_models_own_error():
    """The what-if's energy interval holds the model's error against hardware too: Walker's A15 model has an SER of
    0.0517 W (the paper's Table III), so a row's interval is at least +-2 x 0.0517 W over its runtime, the what-if's
    own part (gem5 under the same model) adding in quadrature.  At one stated die temperature (the thermal loop would
    predict each row's own), so the static power below is the one each row is priced at."""
    run_dir = Path(__file__).parent.parent / "traces" / "cosim-v24-se-biglittle-1800-1400MHz"
    config = read_config(run_dir / "config.ini")
    t_c = 50.0  # [°C]: the A15 file's reference temperature (the A7's file has no temperature term)
    specs = [ClusterSpec(n, p, load_model(m), temperature_c=t_c) for n, p, m in SPECS]
    stats = read_stats(run_dir / "stats.txt.gz")
    grid = pd.DataFrame({"big_freq_mhz": [1000.0, 1800.0, 2000.0], "little_freq_mhz": [1400.0] * 3})
    table = whatif(recorded_run(stats, config, specs), grid, extrapolate=True)
    # two of the four cores powered: the assumed per-core share (0.75, interval 0.5-1.0) adds S * (1 - 2/4) * 0.25,
    # S the four-core static power at the clock's curve voltage and the stated temperature (issue 50, item 3)
    model = load_model("cortex-a15-walker2017")
    f = np.array([1000.0, 1800.0, 2000.0])
    assumed_w = static_at_w(model, f, curve_voltage_v(model, f), temperature_c=t_c) * 0.5 * 0.25
    # gemstone's A7 publishes no SER; its file states a relative one from held-out data (issue 50, item 4): its part
    # is 2 x ser_rel x its power, plus the same assumed-share term, added linearly to the A15's
    little = load_model("cortex-a7-gemstone2018")
    little_w = (table["little_energy_j"] / table["runtime_s"]).to_numpy()
    little_assumed_w = static_at_w(little, np.array([1400.0]), curve_voltage_v(little, np.array([1400.0])))[0] * 0.5 * 0.25
    little_part_w = 2 * little.raw["fit_rel"]["ser_rel"] * little_w + little_assumed_w
    model_j = (2 * 0.0517 + assumed_w + little_part_w) * table["runtime_s"].to_numpy()
    below = (table["energy_j"] - table["energy_j_lo"]).to_numpy()
    above = (table["energy_j_hi"] - table["energy_j"]).to_numpy()
    whatif_below = (table["energy_j"] - table["energy_j_whatif_lo"]).to_numpy()
    inside = [0, 1]  # 1000 and 1800 MHz: inside the A15's training, the model part is exactly the sum above
    np.testing.assert_allclose(below[inside], np.hypot(whatif_below[inside], model_j[inside]), rtol=2e-3)
    assert (above > model_j * 0.999).all() and (above > (table["energy_j_whatif_hi"] - table["energy_j"]).to_numpy()).all()
    # 2000 MHz is 1.11x the top trained clock: the extrapolation widens the model's part beyond 2 SER
    assert below[2] > np.hypot(whatif_below[2], model_j[2]) * 1.05
    assert not any("interval_whatif_only" in f for f in table["flags"])  # every cluster's model states an interval


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--power-cap", "-1"), "cosim whatif: error: argument --power-cap: -1 is not > 0 (see cosim whatif --help)"),
        (("--deadline", "0"), "cosim whatif: error: argument --deadline: 0 is not > 0 (see cosim whatif --help)"),
        (
            ("--freqs", "big=1.4GHz"),
            "--freqs big=1.4GHz: expected MHz values separated by commas, without units (e.g. big=1400 for 1.4GHz)",
        ),
        (("--freqs", "1400"), "--freqs '1400': expected NAME=MHZ,MHZ,... for one of this run's clusters: big, little"),
    ],
)
def test_whatif_typos_are_refused_in_one_line_that_says_what_to_type(tmp_path, extra, message):
    run = write_biglittle_run(tmp_path / "m5out")
    result = run_cosim("whatif", run, *BIGLITTLE_ARGS, "-o", tmp_path / "w.csv", *extra)
    assert result.returncode == 2 and not (tmp_path / "w.csv").exists()
    assert result.stderr.strip().splitlines()[-1].endswith(message), result.stderr


@needs_shared
def test_a_cluster_that_never_computes_keeps_the_recorded_runtime_and_says_so(tmp_path):
    """A full-system boot with the OS idle: the dual O3 CPU is active in under 1 % of the run (462 M instructions in
    47.3 s), so there is nothing to rescale; the row says why its runtime does not move with the clock."""
    run = GEM5_RUNS / "public-old2016-arm64-fs-o3-dual"
    result = run_cosim("whatif", run, "--freqs", "cpu_clk_domain=1000,1400", "-o", tmp_path / "w.csv")
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(tmp_path / "w.csv")
    assert (table["cpu_clk_domain_runtime_s"] == 0).all() and table["runtime_s"].nunique() == 1
    assert table["flags"].str.contains("never_active:cpu_clk_domain").all()


def test_the_whatif_and_cosim_power_give_one_model_interval_at_the_recorded_clock():
    """gem5's se.py, one O3 CPU at 2 GHz (1 of the A15 model's 4 cores, 1.11x its top trained clock): at its own
    clock the what-if's energy interval holds the same model part as cosim power's power interval over the run."""
    from whatif_pairs import SE_CLUSTERS, load
    from whatif_suite import RUNS

    stats, config, specs = load(RUNS / "phases" / "se-one" / "2000", SE_CLUSTERS)
    timeline = power_timeline(stats, config, specs, extrapolate=True)
    model_j = float(((timeline["power_hi_w"] - timeline["power_w"]) * timeline["duration_s"]).sum())
    grid = pd.DataFrame({"cpu_freq_mhz": [float(np.round(timeline["freq_mhz"].iloc[0]))]})
    row = whatif(recorded_run(stats, config, specs), grid, extrapolate=True).iloc[0]
    whatif_part = row["energy_j"] - row["energy_j_whatif_lo"]
    assert np.hypot(whatif_part, model_j) == pytest.approx(row["energy_j"] - row["energy_j_lo"], rel=1e-6)
    assert model_j > 0.05 * row["energy_j"]  # the extrapolation's part: 0.8 x (2000/1800 - 1) of the power at least


def test_a_runs_only_cluster_finishes_when_the_run_does():
    """gem5's se.py with one Minor CPU on stream (one dump): the CPU is the run, so its own runtime is the run's at
    every clock; its drains in the one epoch are its own waiting, not time after it finished."""
    from whatif_pairs import SE_MINOR_CLUSTERS, load
    from whatif_suite import RUNS

    stats, config, specs = load(RUNS / "stream" / "se-minor" / "600", SE_MINOR_CLUSTERS)
    run = recorded_run(stats, config, specs)
    recorded_mhz = float(run.clusters[0].freq_mhz[0])  # 599.88 MHz: gem5's 1667-tick period
    table = whatif(run, pd.DataFrame({"cpu_freq_mhz": [recorded_mhz, 1000.0, 1400.0]}))
    np.testing.assert_allclose(table["cpu_runtime_s"], table["runtime_s"], rtol=1e-12)
    assert table["runtime_s"].iloc[0] == pytest.approx(float(stats["duration_s"].sum()), rel=1e-9)


def test_peak_windows_follow_gem5s_dump_period():
    """At the recorded clocks the what-if's peak is gem5's highest dump: a 100 us dump at 1 W and the partial last
    one (10 us at 3 W) give 3 W, not the mean over windows of the two dumps' median length; a run of exactly seven
    windows has no sliver of an eighth at its end (whose power would be an instant's, not a window's)."""
    from cosim.dse.peak import dump_period_s, peak_power_w

    duration = np.array([100e-6, 10e-6])
    assert dump_period_s(duration) == 100e-6 and dump_period_s(np.array([1e-3])) == np.inf
    one = np.array([[100e-6, 10e-6]])
    peak = peak_power_w(
        runtime_s=np.array([110e-6]), window_s=dump_period_s(duration), epoch_s=[one], dyn_j=[one * [1.0, 3.0]], static_w=np.zeros(1)
    )
    assert peak[0] == pytest.approx(3.0)
    # seven 0.1 ms windows, the third at 2 W, the rest at 1 W; the work's last instant, at 5 W, showed in a sliver
    time = np.array([[1e-4] * 6 + [1e-4 - 1e-12, 1e-12]])
    work = np.array([[1e-4, 1e-4, 2e-4, 1e-4, 1e-4, 1e-4, 1e-4 - 1e-12, 5e-12]])
    peak = peak_power_w(runtime_s=np.array([time.sum()]), window_s=1e-4, epoch_s=[time], dyn_j=[work], static_w=np.zeros(1))
    assert peak[0] == pytest.approx(2.0, rel=1e-6)


def test_whatif_on_a_folder_titles_its_plot_with_that_folder(tmp_path, monkeypatch):
    """Issue #46: given m5out/, the plot was titled with the folder above it."""
    import cosim.dse.choose as choose_module
    from cosim.cli import main

    stats = write_biglittle_run(tmp_path / "my-run")  # my-run/stats.txt
    titles = []
    monkeypatch.setattr(choose_module, "plot_pareto", lambda *a, title="", **k: titles.append(title))
    for path in (stats.parent, stats):
        assert main(["whatif", str(path), *BIGLITTLE_ARGS, "-o", str(tmp_path / "w.csv"), "--plot", str(tmp_path / "p.png")]) == 0
    assert titles == ["my-run", "my-run"]


@pytest.mark.parametrize("command", ["whatif", "sweep", "soc"])
def test_help_shows_an_example(command):
    result = run_cosim(command, "--help")
    assert result.returncode == 0 and "example" in result.stdout and f"\n  cosim {command} " in result.stdout


def test_progress_without_tqdm_is_a_plain_line_per_run_not_silence(tmp_path, monkeypatch):
    """Issue #46: --progress without tqdm did nothing.  Without it (hidden here), one line per finished run."""
    import builtins
    import sys

    import cosim.dse.sweep as sweep_module

    real_import = builtins.__import__

    def no_tqdm(name, *args, **kwargs):
        if name == "tqdm":
            raise ImportError("no tqdm")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    lines = []
    monkeypatch.setattr(sys, "stderr", type("Err", (), {"write": lambda self, s: lines.append(s), "flush": lambda self: None})())
    root = _sweep_dirs(tmp_path / "runs", n=2)
    spec = SweepSpec(models=tuple(m for _, _, m in SPECS), clusters=tuple((n, c) for n, c, _ in SPECS))
    table = sweep_module.sweep(find_runs([root]), spec, progress=True)
    assert len(table) == 2 and [x for x in "".join(lines).splitlines() if x] == [
        "cosim: sweep: 1/2 runs (50 %)",
        "cosim: sweep: 2/2 runs (100 %)",
    ]


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.floats(1e-4, 1.0),  # runtime [s]
            st.floats(0.01, 5.0),  # peak power [W]
            st.one_of(st.none(), st.floats(0.0, 1.0)),  # the interval's half-width [W], None: no interval
        ),
        min_size=1,
        max_size=12,
    ),
    cap=st.floats(0.01, 6.0),
)
def test_a_cap_never_passes_a_row_whose_peak_or_upper_end_is_above_it(rows, cap):
    """Whatever mix of rows with and without an interval: the chosen row's peak and upper end are under the cap, and
    no faster row is (its upper end, or its point estimate where it has none, is above the cap)."""
    df = pd.DataFrame(
        {
            "runtime_s": [r for r, _, _ in rows],
            "energy_j": [r * p for r, p, _ in rows],
            "peak_power_w": [p for _, p, _ in rows],
            "peak_power_w_hi": [p + h if h is not None else np.nan for _, p, h in rows],
            "flags": ["" if h is not None else "peak_hi_point_estimate:cpu" for _, _, h in rows],
        }
    )
    upper = [p + h if h is not None else p for _, p, h in rows]  # by hand: the upper end that exists
    choice = choose(df, power_cap_w=cap)
    fits = [i for i, u in enumerate(upper) if u <= cap]
    if not fits:
        assert choice.row is None
        return
    assert choice.row is not None and choice.row["peak_power_w"] <= cap and upper[int(choice.row.name)] <= cap
    assert choice.row["runtime_s"] == min(rows[i][0] for i in fits)
