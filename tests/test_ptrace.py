"""HotSpot's power trace (issue 42, item 5): written by ``cosim power --ptrace`` and ``cosim demo``, read back here as
HotSpot reads it (its README and examples: the first line the floorplan's unit names, then one line of watts per
sampling interval, whitespace-separated; a floorplan line is ``<unit-name> <width> <height> <left-x> <bottom-y>``
in meters, '#' starting a comment)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import BIGLITTLE_ARGS, EPOCH_TICKS, REPO, biglittle_config, biglittle_dumps, run_cosim, write_stats

from cosim.timeline.ptrace import resample_w

FLOORPLANS = REPO / "docs" / "howto"


def read_ptrace(path: Path) -> tuple[list[str], np.ndarray]:
    """A power trace as HotSpot's read_names / read_vals take it: tokens split on spaces and tabs."""
    lines = [line.split() for line in path.read_text().splitlines() if line.strip()]
    names, rows = lines[0], lines[1:]
    assert all(len(row) == len(names) for row in rows), "every row has a value per unit"
    return names, np.array(rows, dtype=float)


def read_flp(path: Path) -> dict[str, tuple[float, float, float, float]]:
    """A HotSpot floorplan: unit -> (width, height, left-x, bottom-y) [m]."""
    units = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, *numbers = line.split()
            units[name] = tuple(float(x) for x in numbers[:4])
    return units


@pytest.mark.parametrize("flp", ["biglittle-cores.flp", "biglittle-clusters.flp"])
def test_the_example_floorplans_tile_a_rectangle(flp):
    """No overlap and no gap: the units' areas add up to their bounding box, and no two intersect."""
    units = list(read_flp(FLOORPLANS / flp).values())
    right = max(x + w for w, h, x, y in units)
    top = max(y + h for w, h, x, y in units)
    assert sum(w * h for w, h, _, _ in units) == pytest.approx(right * top)
    for i, (w1, h1, x1, y1) in enumerate(units):
        for w2, h2, x2, y2 in units[i + 1 :]:
            assert min(x1 + w1, x2 + w2) - max(x1, x2) <= 1e-12 or min(y1 + h1, y2 + h2) - max(y1, y2) <= 1e-12


def test_the_demos_power_trace_reads_back_with_the_floorplans_units_and_each_clusters_power(tmp_path):
    result = run_cosim("demo", "--out", tmp_path / "demo")
    assert result.returncode == 0, result.stderr
    # the demo on real gem5 output (one cosim demo for these checks and test_cli's former demo test)
    timeline = pd.read_csv(tmp_path / "demo" / "power.csv")
    assert "bundled gem5 run cosim-v24" in result.stdout  # real v24 data shipped in traces/, no ../shared needed
    assert set(timeline["cluster"]) == {"bigCluster", "littleCluster"}  # gem5's names, as cosim power's (#53)
    assert timeline["power_w"].notna().all() and (timeline["power_w"] > 0).all()
    assert not timeline["extrapolated"].any() and not timeline["implausible"].any()  # inside both models' training ranges
    assert (tmp_path / "demo" / "power.png").stat().st_size > 10_000
    # the summary's columns stay aligned for a name longer than the old 12-character column (littleCluster: 13)
    lines = [line for line in result.stdout.splitlines() if line.startswith(("  bigCluster ", "  littleCluster "))]
    assert len(lines) == 2 and len({line.index("cortex-") for line in lines}) == 1 and len({line.index("mean ") for line in lines}) == 1
    names, rows = read_ptrace(tmp_path / "demo" / "power.ptrace")
    assert names == list(read_flp(FLOORPLANS / "biglittle-cores.flp"))  # HotSpot matches them to the floorplan's units
    assert "hotspot -sampling_intvl 0.0001" in result.stdout and "bigCluster_core0=system.bigCluster.cpus0" in result.stdout
    table = pd.read_csv(tmp_path / "demo" / "power.csv")
    assert len(rows) == table.epoch.nunique() == 47  # 100 us dumps: one row per epoch
    assert np.isfinite(rows).all() and (rows > 0).all()
    for cluster in ("bigCluster", "littleCluster"):  # gem5's names, as cosim power names them (#53)
        cols = [i for i, n in enumerate(names) if n.startswith(f"{cluster}_core")]
        total = table[table.cluster == cluster].sort_values("epoch").power_w.to_numpy()
        assert rows[:, cols].sum(axis=1) == pytest.approx(total, rel=2e-5)  # six significant digits a value


def test_a_cores_share_of_dynamic_power_follows_its_own_events_and_static_is_split_evenly(tmp_path):
    """cpus1 of each cluster ran half of every epoch (power state ON half of it, gated the rest) with exactly half
    cpus0's events and no L2 traffic: by the rule its dynamic power is half cpus0's, so
    (core0 - static/2) = 2 x (core1 - static/2), and the two sum to the cluster."""
    dumps = biglittle_dumps()
    for d in dumps:
        for cluster in ("bigCluster", "littleCluster"):
            for name in [n for n in d if n.startswith(f"system.{cluster}.cpus1.")]:
                d[name] = d[name.replace("cpus1", "cpus0")] / 2
            for name in [n for n in d if n.startswith(f"system.{cluster}.l2.")]:
                d[name] = 0
    folder = tmp_path / "half"
    folder.mkdir()
    (folder / "config.ini").write_text(biglittle_config())
    write_stats(folder / "stats.txt", dumps)
    out, trace = tmp_path / "half.csv", tmp_path / "half.ptrace"
    result = run_cosim("power", folder, *BIGLITTLE_ARGS, "-o", out, "--ptrace", trace)
    assert result.returncode == 0, result.stderr
    names, rows = read_ptrace(trace)
    assert names == ["big_core0", "big_core1", "little_core0", "little_core1"]
    table = pd.read_csv(out)
    for k, cluster in enumerate(("big", "little")):
        part = table[table.cluster == cluster].sort_values("epoch")
        core0, core1 = rows[:, 2 * k], rows[:, 2 * k + 1]
        half_static = part.static_w.to_numpy() / 2
        assert core0 - half_static == pytest.approx(2 * (core1 - half_static), rel=1e-4)
        assert core0 + core1 == pytest.approx(part.power_w.to_numpy(), rel=2e-5)
    result = run_cosim("power", folder, *BIGLITTLE_ARGS, "-o", out, "--ptrace", trace, "--ptrace-blocks", "cluster")
    names, rows = read_ptrace(trace)
    assert names == ["big", "little"]  # the --cluster names
    # the example floorplan's cluster units are the demo's clusters, whose core units the demo test above checks
    cores = [n.rsplit("_core", 1)[0] for n in read_flp(FLOORPLANS / "biglittle-cores.flp")]
    assert list(read_flp(FLOORPLANS / "biglittle-clusters.flp")) == list(dict.fromkeys(cores))


def test_resampling_keeps_each_intervals_energy():
    """Epochs of 1, 1 and 0.5 ms at 1, 2 and 4 W on 1.5 ms intervals, by hand: [0, 1.5) ms holds 1 mJ + 1 mJ over
    1.5 ms = 1.333 W; [1.5, 3) ms holds 1 mJ + 2 mJ over the 1 ms the epochs cover = 3 W."""
    start, end = np.array([0.0, 1e-3, 2e-3]), np.array([1e-3, 2e-3, 2.5e-3])
    times, rows = resample_w(start, end, {"core": np.array([1.0, 2.0, 4.0])}, 1.5e-3)
    assert times == pytest.approx([0.0, 1.5e-3])
    assert rows["core"] == pytest.approx([2.0 / 1.5, 3.0])
    # equal epochs on their own length: the epochs themselves
    _, same = resample_w(start[:2], end[:2], {"core": np.array([1.0, 2.0])}, 1e-3)
    assert same["core"] == pytest.approx([1.0, 2.0])


def test_a_trace_that_names_an_input_or_is_no_ptrace_or_has_a_row_without_power_is_refused(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "config.ini").write_text(biglittle_config())
    dumps = biglittle_dumps(big_periods=(556,) * 3)
    for i in range(2):  # a clock change no dump saw (test_cycle_evidence.py): epoch 1 is kept flagged implausible
        dumps[1][f"system.bigCluster.cpus{i}.numCycles"] = 500_000 + EPOCH_TICKS // 2 // 556
    write_stats(folder / "stats.txt", dumps)
    out = tmp_path / "p.csv"
    for trace, says in (
        (folder / "stats.txt", "cosim never writes over its inputs"),
        (folder / "config.ptrace", None),
        (tmp_path / "trace.csv", "give a name ending in .ptrace"),
    ):
        result = run_cosim("power", folder, *BIGLITTLE_ARGS, "--keep-implausible", "-o", out, "--ptrace", trace)
        assert result.returncode != 0 and "Traceback" not in result.stderr
        (line,) = result.stderr.strip().splitlines()[-1:]
        assert line.startswith("cosim: error:")
        assert says is None or says in line
        if says is None:  # the kept implausible epoch
            assert "epoch 1 of cluster 'big' has an implausible figure kept" in line and "without --ptrace" in line
            assert not (folder / "config.ptrace").exists() and not out.exists()  # nothing half-written
            way_out = run_cosim("power", folder, *BIGLITTLE_ARGS, "--keep-implausible", "-o", out)  # as it says
            assert way_out.returncode == 0 and out.exists(), way_out.stderr
    assert (folder / "stats.txt").read_text().count("Begin Simulation Statistics") == 3  # the input is untouched
