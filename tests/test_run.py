"""One place resolves a run (cosim.open_run): power, whatif and sweep read a gem5 folder or stats file the same way."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pandas as pd
import pytest
from helpers import GEM5_RUNS, REPO, gem5_run, needs_gem5, needs_shared, run_cosim

from cosim import open_run, price_run, read_config
from cosim.counters.pmc import unpadded
from cosim.timeline.core_kind import DEFAULT_MODELS

O3_MODEL, INORDER_MODEL = DEFAULT_MODELS["o3"], DEFAULT_MODELS["minor"]  # the shipped default per CPU kind

BUNDLED = REPO / "traces" / "cosim-v24-se-biglittle-1800-1400MHz"


def _one_error(result) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("cosim: error:")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def test_a_gem5_output_folder_is_priced_like_its_stats_file(tmp_path):
    by_folder = run_cosim("power", BUNDLED, "-o", tmp_path / "folder.csv")
    by_file = run_cosim("power", BUNDLED / "stats.txt.gz", "-o", tmp_path / "file.csv")
    assert by_folder.returncode == by_file.returncode == 0, by_folder.stderr + by_file.stderr
    assert (tmp_path / "folder.csv").read_bytes() == (tmp_path / "file.csv").read_bytes()
    # no --model: each clock domain gets the shipped model of its CPU type, and says so
    assert f"'bigCluster': 2 x BaseO3CPU (out-of-order), priced with {O3_MODEL}" in by_folder.stderr


def test_open_run_resolves_clusters_by_clock_domain_and_cpu_type():
    run = open_run(BUNDLED)
    assert run.stats_path.name == "stats.txt.gz"
    assert [(spec.name, spec.model.name) for spec in run.clusters] == [
        ("bigCluster", O3_MODEL),
        ("littleCluster", INORDER_MODEL),
    ]
    assert BUNDLED / "config.ini" in run.inputs() and BUNDLED / "stats.txt.gz" in run.inputs()
    stats, timeline = price_run(run)
    # 47 dumps in the bundled run's stats.txt.gz (traces/README.md), two clusters each
    assert len(stats) == 47 and len(timeline["power_w"]) == 94


@pytest.mark.parametrize(
    "make, fragment",
    [
        (lambda p: p, "a folder with no stats.txt"),
        (lambda p: p / "missing.txt", "no such file"),
        (lambda p: (p / "stats.txt").write_text("") or p / "stats.txt", "empty file"),
        (lambda p: os.mkfifo(p / "fifo") or p / "fifo", "not a regular file"),
    ],
    ids=["folder-without-stats", "missing", "empty", "fifo"],
)
def test_each_wrong_path_gets_its_own_cause(tmp_path, make, fragment):
    path = make(tmp_path)
    assert fragment in _one_error(run_cosim("power", path, "-o", tmp_path / "out.csv"))


def test_unknown_voltage_cluster_lists_the_known_ones(tmp_path):
    line = _one_error(run_cosim("power", BUNDLED, "--voltage", "bigg=1.0", "-o", tmp_path / "p.csv"))
    assert "unknown cluster(s) bigg" in line and "bigCluster, littleCluster" in line


def test_a_folder_without_config_is_read_from_its_stats_names(tmp_path):
    """The bundled run's stats.txt.gz alone: the CPUs, kinds, clocks and caches read from its stat names are the ones
    its config.ini names (big: two O3 CPUs in system.bigCluster.clk_domain, LITTLE: two Minor), said in a note."""
    shutil.copy(BUNDLED / "stats.txt.gz", tmp_path)
    run = open_run(tmp_path)
    assert run.config.inferred and "no config.ini/config.json beside it" in run.notes[0]
    truth = read_config(BUNDLED / "config.ini")

    def described(config):
        return {
            name: (tuple(map(unpadded, c.cpus)), {c.kind(cpu) for cpu in c.cpus}, c.freqs_mhz[c.init_perf_level], c.clk_domain)
            for name, c in config.clusters().items()
        }

    assert described(run.config) == described(truth)
    assert [(spec.name, spec.model.name) for spec in run.clusters] == [("bigCluster", O3_MODEL), ("littleCluster", INORDER_MODEL)]


@needs_shared
def test_sweep_with_no_flags_prices_each_run_as_power_does(tmp_path):
    """Two real gem5 v24 runs at different clocks, no sidecar: sweep's energies are cosim power's, cluster by cluster."""
    runs = [GEM5_RUNS / "cosim-v24-se-biglittle-o3-1000MHz-minor-600MHz", GEM5_RUNS / "cosim-v24-se-biglittle-o3-1800MHz-minor-1400MHz"]
    result = run_cosim("sweep", *runs, "-o", tmp_path / "sweep.csv")
    assert result.returncode == 0, result.stderr
    sweep = pd.read_csv(tmp_path / "sweep.csv").set_index("run")
    for run in runs:
        assert run_cosim("power", run, "-o", tmp_path / f"{run.name}.csv").returncode == 0
        power = pd.read_csv(tmp_path / f"{run.name}.csv")
        for cluster, rows in power.groupby("cluster"):
            assert sweep.loc[run.name, f"{cluster}_energy_j"] == pytest.approx(rows["energy_j"].sum(), rel=1e-8)  # CSV keeps 9 digits
            assert sweep.loc[run.name, f"{cluster}_model"] == rows["model"].iloc[0]


@needs_gem5
def test_sweep_compares_out_of_order_and_in_order_runs_in_one_table(gem5_root, tmp_path):
    """gem5_scripts/examples/se_cluster.py with an O3 and a Minor CPU: one sweep, each run with its own CPU type's model."""
    root = tmp_path / "study"
    root.mkdir()
    for cpu in ("O3CPU", "MinorCPU"):
        shutil.copytree(gem5_run(gem5_root, cpu=cpu), root / cpu)
    result = run_cosim("sweep", root, "-o", tmp_path / "sweep.csv")
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(tmp_path / "sweep.csv").set_index("run")
    (model_col,) = [c for c in table.columns if c.endswith("_model")]
    assert table.loc["O3CPU", model_col] == O3_MODEL
    assert table.loc["MinorCPU", model_col] == INORDER_MODEL
    # both ran the same program at 1 GHz: the out-of-order core finishes it sooner (it issues several instructions per cycle)
    assert table.loc["O3CPU", "runtime_s"] < table.loc["MinorCPU", "runtime_s"]
    assert np.isfinite(table["energy_j"]).all() and (table["energy_j"] > 0).all()


@needs_shared
def test_sweep_takes_the_overrides_its_refusals_recommend(tmp_path):
    """A Minor CPU at 2 GHz (1.43x the A7's top trained clock) is refused by sweep as by power, naming --extrapolate
    and --model; with --extrapolate the A7's V-f curve continued to 2 GHz asks for 1.517 V, outside the static form's
    0.6-1.5 V, refused by sweep in power's words; another --model (the A15's band reaches 2025 MHz) is honoured by
    sweep too: its energy is cosim power's with that model, flagged extrapolated."""
    run = GEM5_RUNS / "public-old2016-arm-se-minor-mcf"
    refused = run_cosim("sweep", run, "-o", tmp_path / "refused.csv")
    assert refused.returncode == 2 and "beyond its extrapolation band" in refused.stderr and "--extrapolate" in refused.stderr
    assert "another --model" in refused.stderr
    too_high = run_cosim("sweep", run, "--extrapolate", "-o", tmp_path / "high.csv")
    assert too_high.returncode == 2 and "1.517 V at 2000 MHz is outside 0.6-1.5 V" in too_high.stderr
    a15 = ("--model", "cortex-a15-walker2017")
    swept = run_cosim("sweep", run, *a15, "-o", tmp_path / "sweep.csv")
    powered = run_cosim("power", run, *a15, "-o", tmp_path / "power.csv")
    assert swept.returncode == powered.returncode == 0, swept.stderr + powered.stderr
    row = pd.read_csv(tmp_path / "sweep.csv").iloc[0]
    assert "extrapolated" in row["flags"].split(";")
    assert row["energy_j"] == pytest.approx(pd.read_csv(tmp_path / "power.csv")["energy_j"].sum(), rel=1e-8)


NOT_STATS = "so it is not a gem5 stats.txt; give a gem5 output folder (m5out/) or the stats.txt in it"
MARKERS_ONLY = "\n---------- Begin Simulation Statistics ----------\n\n---------- End Simulation Statistics   ----------\n"


@pytest.mark.parametrize("config_beside", [False, True], ids=["alone", "config-beside"])
@pytest.mark.parametrize(
    "text, why",
    [
        ("vm\n", "no '---------- Begin Simulation Statistics' line"),  # what /etc/hostname holds
        ("hello\nworld", "no '---------- Begin Simulation Statistics' line"),  # no newline at the end
        (MARKERS_ONLY, "no statistics between its Begin and End Simulation Statistics lines"),
    ],
    ids=["hostname", "text", "markers-only"],
)
def test_a_file_with_no_gem5_statistics_is_not_a_stats_txt(tmp_path, text, why, config_beside):
    """Not "this run has no CPU": the file is no stats.txt at all, and the message says what to give instead,
    whether the run's config is beside it (the stats reader says it) or not (open_run says it first)."""
    path = tmp_path / "hostname"
    path.write_text(text)
    if config_beside:
        shutil.copy(BUNDLED / "config.ini", tmp_path)
    line = _one_error(run_cosim("power", path, "-o", tmp_path / "p.csv"))
    assert line == f"cosim: error: {path}: {why}, {NOT_STATS}"
    assert not (tmp_path / "p.csv").exists()


def test_a_real_stats_file_without_a_cpu_still_says_so(tmp_path):
    """The bundled run's stats with every numCycles line taken out, and no config beside it: a gem5 stats file
    whose run counted no CPU cycles, refused as such."""
    import gzip

    with gzip.open(BUNDLED / "stats.txt.gz", "rt") as f:
        kept = [line for line in f if "numCycles" not in line]
    (tmp_path / "stats.txt").write_text("".join(kept))
    line = _one_error(run_cosim("power", tmp_path, "-o", tmp_path / "p.csv"))
    assert "stats.txt: this run has no CPU (no numCycles stat in its first dump)" in line and "not a gem5 stats.txt" not in line
