"""Options that would silently override each other are refused in one line (docs/explanation/refusals.md lists them)."""

from __future__ import annotations

import pytest
from helpers import BIGLITTLE_ARGS, POWMON, REPO, needs_shared, write_biglittle_run
from test_cli import assert_one_line_error, cosim

OCELOT = REPO / "traces" / "cosim-ocelot-video.trace"


@pytest.fixture
def run(tmp_path):
    return write_biglittle_run(tmp_path / "m5out")


def test_voltage_with_voltage_model_is_refused(run, tmp_path):
    # before: the voltage model replaced 1.05 V silently (1.1726, 1.1771, 0.9289 V written at exit 0)
    result = cosim("power", run, *BIGLITTLE_ARGS, "--voltage", "big=1.05", "--voltage-model", "-o", tmp_path / "p.csv")
    assert_one_line_error(result, "--voltage and --voltage-model")
    assert not (tmp_path / "p.csv").exists()
    # each alone still works
    assert cosim("power", run, *BIGLITTLE_ARGS, "--voltage", "big=1.05", "-o", tmp_path / "p.csv").returncode == 0


@pytest.mark.parametrize(
    "args",
    [
        ["--voltage", "big=1.05", "--voltage", "big=1.10"],
        ["--cluster", "big=system.littleCluster"],  # big is already named by BIGLITTLE_ARGS
    ],
)
def test_a_name_given_twice_is_refused(run, args):
    assert_one_line_error(cosim("power", run, *BIGLITTLE_ARGS, *args), "two values for 'big'")


def test_whatif_freqs_for_a_cluster_twice(run):
    assert_one_line_error(cosim("whatif", run, *BIGLITTLE_ARGS, "--freqs", "big=1000", "--freqs", "big=1800"), "two values for 'big'")


def test_gap_with_launch_times_is_refused(tmp_path):
    import pandas as pd

    from cosim.readers.ocelot import read_ocelot_trace

    launches = read_ocelot_trace(OCELOT).drop_duplicates("launch")
    times = pd.DataFrame({"launch": launches["launch"], "start_s": [i * 1.0 for i in range(len(launches))]})
    times.to_csv(tmp_path / "lt.csv", index=False)
    result = cosim("gpu", OCELOT, "--launch-times", tmp_path / "lt.csv", "--gap-s", 0.001, "-o", tmp_path / "g.csv")
    assert_one_line_error(result, "--gap-s 0.001", "drop --gap-s")


@pytest.mark.parametrize(
    ("model", "flag", "value"),
    [
        ("tegra-k1-stokke2016", "--gpu-clock-mhz", "700"),
        ("tegra-k1-stokke2016", "--idle-power", "sm=1.0"),
        ("ocelot-fermi-aalto2013", "--railgate-delay-s", "0.1"),
    ],
)
def test_flags_of_the_other_gpu_model_are_refused(tmp_path, model, flag, value):
    result = cosim("gpu", OCELOT, "--model", model, flag, value, "-o", tmp_path / "g.csv")
    assert_one_line_error(result, flag, "only the")


@needs_shared
def test_apply_voltage_column_with_table_voltage_is_refused():
    result = cosim("apply", "cortex-a15-walker2017", POWMON, "--label", "A15", "--voltage", "table", "--voltage-col", "Voltage A15")
    assert_one_line_error(result, "--voltage-col Voltage A15 with --voltage table")


def test_sweep_workers_with_a_remote_scheduler_is_refused(tmp_path):
    result = cosim("sweep", tmp_path, "--scheduler", "tcp://127.0.0.1:1", "--workers", "4")
    assert_one_line_error(result, "--workers 4 with --scheduler")
