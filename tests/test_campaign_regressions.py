"""Failures the independent reliability campaign (tests/campaign.py, issue 51) found, each kept fixed.

Expected values are the mutation itself (the stat, dump and path the test damaged), never cosim's own output.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil

import pytest
from helpers import GEM5_RUNS, REPO, needs_shared, run_cosim

RUN = REPO / "tests" / "data" / "gem5-minor-sleep-1000MHz"


def _one_error_line(stderr: str) -> str:
    """The refusal: one ``cosim: error:`` line and no traceback."""
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("cosim: error:")]
    assert len(errors) == 1, stderr
    return errors[0]


def _copy_run(tmp_path, mutate=None):
    run = tmp_path / "run"
    run.mkdir()
    shutil.copyfile(RUN / "config.ini", run / "config.ini")
    text = gzip.decompress((RUN / "stats.txt.gz").read_bytes()).decode()
    (run / "stats.txt").write_text(mutate(text) if mutate else text)
    return run


def test_a_stats_file_that_is_a_loop_of_symbolic_links_is_refused_in_one_line(tmp_path):
    # before: exit 4 "internal error: RuntimeError: Symlink loop from ..." (power and sweep)
    run = tmp_path / "run"
    run.mkdir()
    shutil.copyfile(RUN / "config.ini", run / "config.ini")
    os.symlink("b.txt", run / "stats.txt")
    os.symlink("stats.txt", run / "b.txt")
    done = run_cosim("power", run / "stats.txt", "-o", tmp_path / "out.csv")
    assert done.returncode == 2
    line = _one_error_line(done.stderr)
    assert str(run / "stats.txt") in line and "loop of symbolic links" in line
    assert not (tmp_path / "out.csv").exists()


def test_an_output_that_is_a_symbolic_link_to_itself_is_refused_in_one_line(tmp_path):
    os.symlink("out.csv", tmp_path / "out.csv")
    done = run_cosim("power", RUN, "-o", tmp_path / "out.csv")
    assert done.returncode == 2
    assert "loop of symbolic links" in _one_error_line(done.stderr)
    assert os.readlink(tmp_path / "out.csv") == "out.csv"  # the user's link is left as it was


def test_a_negative_cache_count_in_one_dump_is_refused_naming_the_stat_and_dump(tmp_path):
    # before: exit 0, the dump priced with a negative L1D access count, no flag
    stat = "system.bigCluster.cpus.dcache.overallAccesses::total"

    def negative_in_dump_1(text: str) -> str:
        begin = [m.start() for m in re.finditer("Begin Simulation Statistics", text)]
        head, dump1, rest = text[: begin[1]], text[begin[1] : begin[2]], text[begin[2] :]
        dump1 = re.sub(rf"(?m)^({re.escape(stat)}\s+)\d+", r"\g<1>-7", dump1)
        return head + dump1 + rest

    run = _copy_run(tmp_path, negative_in_dump_1)
    before = (run / "stats.txt").read_bytes()
    done = run_cosim("power", run, "-o", tmp_path / "out.csv")
    assert done.returncode == 2
    line = _one_error_line(done.stderr)
    assert "dump 1:" in line and stat in line and "-7" in line and "negative" in line
    assert (run / "stats.txt").read_bytes() == before and not (tmp_path / "out.csv").exists()


def _flags(path) -> set[str]:
    import csv

    with open(path, newline="") as f:
        return {flag for row in csv.DictReader(f) for flag in row["flags"].split(";") if flag}


@needs_shared
def test_whatif_at_a_clock_below_the_trained_voltages_flags_the_voltage_as_power_does(tmp_path):
    # before: power flags voltage_outside_training at 200 MHz, whatif --freqs 200 (the same operating point) did not.
    # cortex-a15-gemstone2018 was trained at 0.912-1.183 V, its lowest V-f point 600 MHz at 0.912 V: a 200 MHz
    # point below the table lies below 0.912 V, outside the trained voltages.
    run = GEM5_RUNS / "cosim-v24-se-o3-200MHz"
    done = run_cosim("whatif", run, "--freqs", "cpu_clk_domain=200", "-o", tmp_path / "w.csv")
    assert done.returncode == 0, done.stderr
    assert "voltage_outside_training:cpu_clk_domain" in _flags(tmp_path / "w.csv")


@needs_shared
def test_whatif_keeps_the_missing_terms_power_flags(tmp_path):
    # before: power's rows carry missing_term:<event> (a term gem5 cannot count, input 0), whatif's rows did not
    run = GEM5_RUNS / "cosim-v24-starter-se-atomic-4cores-1000MHz"
    power = run_cosim("power", run, "-o", tmp_path / "p.csv")
    whatif = run_cosim("whatif", run, "--freqs", "cpu_cluster=1000", "-o", tmp_path / "w.csv")
    assert power.returncode == 0 and whatif.returncode == 0, power.stderr + whatif.stderr
    missing = {f.split(":")[1] for f in _flags(tmp_path / "p.csv") if f.startswith("missing_term:")}
    assert missing  # an atomic CPU's run: some of the A7 model's events have no gem5 count
    assert {f.split(":")[1] for f in _flags(tmp_path / "w.csv") if f.startswith("missing_term:")} == missing


@needs_shared
def test_whatif_keeps_the_substituted_events_power_flags(tmp_path):
    # before: power's rows carry subst:<event> (an event gem5 counts only through a stand-in), whatif's did not
    run = GEM5_RUNS / "cosim-v24-se-o3-600MHz"
    power = run_cosim("power", run, "-o", tmp_path / "p.csv")
    whatif = run_cosim("whatif", run, "--freqs", "cpu_clk_domain=600", "-o", tmp_path / "w.csv")
    assert power.returncode == 0 and whatif.returncode == 0, power.stderr + whatif.stderr
    subst = {f.split(":")[1] for f in _flags(tmp_path / "p.csv") if f.startswith("subst:")}
    assert subst
    assert {f.split(":")[1] for f in _flags(tmp_path / "w.csv") if f.startswith("subst:")} == subst


GPU = REPO / "tests" / "data" / "gpu"


def test_a_cut_power_log_then_a_refusal_is_one_error_line(tmp_path):
    # before: two "cosim: error:" lines (the cut-off sample, then the refusal) at exit 2
    log = tmp_path / "power.csv"
    text = (GPU / "nvidia-smi-lms50-3-kernels.csv").read_bytes()
    log.write_bytes(text[: int(len(text) * 0.38)])  # mid-line, before the kernels' readings
    done = run_cosim("gpu-energy", log, GPU / "nsys-cuda-gpu-trace-3-kernels.csv", "-o", tmp_path / "e.csv")
    assert done.returncode == 2
    _one_error_line(done.stderr)
    assert "cosim: warning: " + str(log) in done.stderr and "cut off" in done.stderr  # the cut is still said


def test_a_cut_log_accepted_with_allow_partial_prints_no_error_line(tmp_path):
    # before: "cosim: error: ... is cut off" printed at exit 0 under --allow-partial; now a note (exit 0: issue #53 item 6)
    log = tmp_path / "run.log"
    lines = (GPU / "gpgpusim-3.2-gtx480-backprop.log").read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:120]))  # inside the second kernel's block (line 88)
    cut = run_cosim("gpu", log, "--model", "ocelot-fermi-aalto2013", "-o", tmp_path / "a.csv")
    assert cut.returncode == 3 and "is cut off" in _one_error_line(cut.stderr)
    accepted = run_cosim("gpu", log, "--model", "ocelot-fermi-aalto2013", "--allow-partial", "-o", tmp_path / "b.csv")
    assert accepted.returncode == 0 and "cosim: error:" not in accepted.stderr
    assert "cosim: note:" in accepted.stderr and "is cut off" in accepted.stderr


def test_validate_says_a_run_that_lost_dumps_and_exits_3(tmp_path):
    """validate re-said each run's warnings as plain warnings, so a run whose stats lost dumps (zero bytes after its
    last dump) was priced short at exit 0; the loss keeps its class: exit 3 unless --allow-partial."""
    from helpers import SHARED

    runs = GEM5_RUNS / "xu3-mibench-train"
    board = SHARED / "data" / "armpm" / "Concatenated_Data" / "cBench" / "xu3_cset_perfcpu_cBench_eMMC_big.data"
    if not runs.is_dir() or not board.is_file():
        pytest.skip("../shared/data is not here")
    program = sorted(p for p in runs.iterdir() if p.is_dir())[0]
    copy = tmp_path / "runs" / program.name
    shutil.copytree(program, copy)
    stats = sorted(copy.rglob("stats.txt"))[0]
    stats.write_bytes(stats.read_bytes() + bytes(4096))
    cut = run_cosim("validate", board, tmp_path / "runs", "-o", tmp_path / "v.csv")
    assert cut.returncode == 3 and "after the last complete dump" in cut.stderr
    ok = run_cosim("validate", board, tmp_path / "runs", "-o", tmp_path / "w.csv", "--allow-partial")
    assert ok.returncode == 0
