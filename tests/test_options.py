"""Options are checked, never ignored: cluster names, clock units, the overrides a refusal recommends, CPU types
against the stats, and a flags column in every table cosim writes."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
from helpers import GEM5_RUNS, POWMON, REPO, needs_shared
from test_cli import assert_one_line_error, cosim

DEMO = REPO / "traces" / "cosim-v24-se-biglittle-1800-1400MHz"
A15 = ("--model", "cortex-a15-walker2017")


def test_whatif_freqs_for_an_unknown_cluster_lists_the_known_ones(tmp_path):
    result = cosim("whatif", DEMO / "stats.txt.gz", "--freqs", "bigg=1000", "-o", tmp_path / "w.csv")
    assert_one_line_error(result, "--freqs bigg=1000: this run has no cluster 'bigg'; its clusters: bigCluster, littleCluster")
    assert not (tmp_path / "w.csv").exists()


def test_whatif_clock_typed_in_ghz_suggests_mhz(tmp_path):
    # the A15 model's lowest V-f point is 200 MHz (Walker et al. 2017, ODROID-XU3): 1.8 is GHz typed for MHz
    result = cosim("whatif", DEMO / "stats.txt.gz", "--freqs", "bigCluster=1.8", "-o", tmp_path / "w.csv")
    # the default O3 model, cortex-a15-gemstone2018, starts its V-f table at 600 MHz (GemStone, ODROID-XU3)
    assert_one_line_error(result, "1.8 MHz is below a tenth of cortex-a15-gemstone2018's lowest V-f point (600 MHz)", "1.8 GHz is 1800 MHz")
    # a tenth of the lowest point is still a clock the user may mean: read as MHz, then priced as cosim power prices
    # it, by the static form below the trained clocks, flagged extrapolated
    sixty = cosim("whatif", DEMO / "stats.txt.gz", "--freqs", "bigCluster=60,1800", "-o", tmp_path / "w.csv")
    assert sixty.returncode == 0, sixty.stderr
    w = pd.read_csv(tmp_path / "w.csv")
    at = w["bigCluster_freq_mhz"]
    assert w.loc[at == 60.0, "extrapolated"].all() and not w.loc[at == 1800.0, "extrapolated"].any()
    ok = cosim("whatif", DEMO / "stats.txt.gz", "--freqs", "bigCluster=600,1800", "-o", tmp_path / "w.csv")
    assert ok.returncode == 0, ok.stderr


def _swapped(tmp_path):
    """The bundled real run with its config's CPU types swapped: O3 statistics under a Minor CPU and the reverse."""
    run = tmp_path / "swapped"
    run.mkdir()
    shutil.copy(DEMO / "stats.txt.gz", run / "stats.txt.gz")
    text = (DEMO / "config.ini").read_text()
    text = (
        text.replace("type=BaseO3CPU\n", "type=@\n")
        .replace("type=BaseMinorCPU\n", "type=BaseO3CPU\n")
        .replace("type=@\n", "type=BaseMinorCPU\n")
    )
    (run / "config.ini").write_text(text)
    return run


@pytest.mark.parametrize("command", ["power", "whatif"])
def test_a_config_whose_cpu_types_contradict_the_stats_is_refused(command, tmp_path):
    run = _swapped(tmp_path)
    result = cosim(command, run / "stats.txt.gz", "-o", tmp_path / "out.csv")
    assert_one_line_error(
        result, "system.bigCluster.cpus0 has out-of-order (O3) statistics (iew.*, rename.*, rob.*)", "config.ini says it is a BaseMinorCPU"
    )
    little = cosim(
        command,
        run / "stats.txt.gz",
        "--model",
        "cortex-a7-gemstone2018",
        "--cluster",
        "little=system.littleCluster",
        "-o",
        tmp_path / "o.csv",
    )
    assert_one_line_error(little, "system.littleCluster.cpus0 has in-order Minor statistics (fetch2.*)", "says it is a BaseO3CPU")


@needs_shared
def test_sweep_accepts_the_override_its_refusal_recommends(tmp_path):
    (tmp_path / "runs").mkdir()
    # gem5's starter_se.py at its 4 GHz default, priced past the A15's band on request: 431 W for one core
    (tmp_path / "runs" / "o3").symlink_to(GEM5_RUNS / "public-new-2022-arm-se-minor-starterse-cpucluster")
    argv = ("sweep", tmp_path / "runs", *A15, "--extrapolate", "-o", tmp_path / "s.csv")
    refused = cosim(*argv)
    assert refused.returncode == 2 and "or write these rows flagged with --keep-implausible" in refused.stderr
    kept = cosim(*argv, "--keep-implausible")
    assert kept.returncode == 0, kept.stderr
    row = pd.read_csv(tmp_path / "s.csv").iloc[0]
    (cluster_flags,) = [c for c in row.index if c.endswith("_flags")]
    assert "implausible" in row["flags"].split(";") and "implausible" in row[cluster_flags].split(";")


@needs_shared
def test_sweep_accepts_any_isa(tmp_path):
    src = GEM5_RUNS / "cosim-v24-se-biglittle-o3-1000MHz-minor-600MHz"
    run = tmp_path / "runs" / "x86"
    run.mkdir(parents=True)
    text = (src / "config.ini").read_text()
    for part in ("ISA", "TLB", "MMU", "Decoder"):
        text = text.replace(f"=Arm{part}", f"=X86{part}")
    (run / "config.ini").write_text(text)
    shutil.copy(src / "stats.txt", run / "stats.txt")
    argv = ("sweep", tmp_path / "runs", *A15, "--cluster", "big=system.bigCluster", "-o", tmp_path / "s.csv")
    refused = cosim(*argv)
    assert refused.returncode == 2 and "pass --any-isa" in refused.stderr
    kept = cosim(*argv, "--any-isa")
    assert kept.returncode == 0, kept.stderr
    assert "isa_mismatch" in pd.read_csv(tmp_path / "s.csv")["flags"].iloc[0]


TABLES = [
    ("read", lambda t: ("read", REPO / "traces" / "cosim-nvprof-dct.txt", "-o", t)),
    ("kernel-synth", lambda t: ("kernel-synth", "-o", t)),
    ("rate-baseline", lambda t: ("rate-baseline", "-o", t)),
    ("gpu", lambda t: ("gpu", REPO / "traces" / "cosim-nvprof-dct.csv", "-o", t)),
    ("roofline", lambda t: ("roofline", "--platform", "jetson-tk1-cpu", "--freqs", "1000", "--stats", DEMO / "stats.txt.gz", "-o", t)),
]


@pytest.mark.parametrize(("command", "argv"), TABLES, ids=[t[0] for t in TABLES])
def test_every_table_has_a_flags_column(command, argv, tmp_path):
    out = tmp_path / "t.csv"
    result = cosim(*argv(out))
    assert result.returncode == 0, result.stderr
    assert "flags" in pd.read_csv(out, nrows=5).columns


@needs_shared
def test_apply_flags_match_its_columns(tmp_path):
    result = cosim("apply", "cortex-a15-walker2017", POWMON, "--label", "A15", "-o", tmp_path / "a.csv", "--keep-implausible")
    assert result.returncode == 0, result.stderr
    t = pd.read_csv(tmp_path / "a.csv", keep_default_na=False)
    for column in ("extrapolated", "no_value", "implausible"):
        assert (t["flags"].str.split(";").map(lambda f, c=column: c in f) == (t[column].astype(str) == "True")).all()
    assert (t["flags"] == "").all()  # the model was fitted on these rows: nothing to flag
