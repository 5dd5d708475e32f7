"""A what-if of a run whose first dump is a warm-up before a stats reset reports that dump and leaves it out (#53)."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import SHARED, run_cosim

from cosim.dse.warmup import FLAG, split_warmup

SIMPOINT = SHARED / "data" / "gem5" / "public-new-v24-x86-simpoint-2dumps"  # gem5 v24 x86 SimPoint example, 2 dumps


def _stats(insts, duration_s):
    frame = pd.DataFrame({"simInsts": insts, "duration_s": duration_s})
    frame.attrs["gem5"] = "meta"
    return frame


def test_a_first_dump_of_one_instruction_and_a_few_hundred_cycles_is_left_out_and_said():
    # the SimPoint run's own numbers (its stats.txt): 1 instruction in 72,927 ticks, then 1,000,001 in 323,450,559
    rest, note = split_warmup(_stats([1.0, 1_000_001.0], [72_927e-12, 323_450_559e-12]))
    assert len(rest) == 1 and rest["simInsts"].tolist() == [1_000_001.0] and rest.attrs["gem5"] == "meta"
    assert note.startswith("dump 1 (1 instruction(s) in 0.0729 us, 0.023 % of the run's time) is a warm-up")


@pytest.mark.parametrize(
    ("insts", "duration_s"),
    [
        ([20_000.0, 980_000.0], [2e-6, 98e-6]),  # a real first epoch: 2 % of the run
        ([1.0, 1_000_001.0], [50e-6, 50e-6]),  # few instructions but half the run's time (a CPU asleep): counted
        ([1.0], [72_927e-12]),  # the only dump is the run
    ],
)
def test_a_dump_that_is_part_of_the_run_is_kept(insts, duration_s):
    stats = _stats(insts, duration_s)
    rest, note = split_warmup(stats)
    assert note is None and rest is stats


@pytest.mark.skipif(not SIMPOINT.is_dir(), reason="../shared is not here")
def test_the_whatif_of_the_simpoint_run_reports_its_warmup_dump(tmp_path):
    out = tmp_path / "w.csv"
    result = run_cosim("whatif", SIMPOINT, "--any-isa", "-o", out)
    assert result.returncode == 0, result.stderr
    assert "dump 1 (1 instruction(s) in 0.0729 us" in result.stdout and "reported, not counted" in result.stdout
    table = pd.read_csv(out)
    assert table["flags"].str.contains(FLAG).all()
