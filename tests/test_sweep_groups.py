"""``cosim sweep`` puts only comparable runs on one Pareto front: the same program on the same design, or the columns
``--group`` states, and says so (#53: unrelated programs shared one front)."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import run_cosim
from test_dse import _sweep_dirs

from cosim.dse.choose import pareto_by_group
from cosim.errors import CosimError


def test_a_run_of_another_program_is_on_its_own_front_not_beaten_by_a_faster_program():
    # by hand: program a's (1 s, 2 J) and (2 s, 1 J) beat its (3 s, 3 J); b's one run (10 s, 10 J) is beaten by every
    # run of a, but a is another program: alone on its own front.  One front for all (by=()) puts b's run off it.
    table = pd.DataFrame(
        {"program": ["a", "a", "a", "b"], "design": "d", "runtime_s": [1.0, 2.0, 3.0, 10.0], "energy_j": [2.0, 1.0, 3.0, 10.0]}
    )
    grouped = pareto_by_group(table)
    assert grouped["pareto"].tolist() == [True, True, False, True]
    assert grouped["front"].tolist() == ["program=a; design=d"] * 3 + ["program=b; design=d"]
    assert pareto_by_group(table, by=())["pareto"].tolist() == [True, True, False, False]
    assert pareto_by_group(table, by=("design",))["front"].nunique() == 1
    with pytest.raises(CosimError, match="--group benchmark: the table has no column benchmark"):
        pareto_by_group(table, by=("benchmark",))


def test_the_program_is_read_from_the_config_and_the_command_says_how_it_grouped(tmp_path):
    root = _sweep_dirs(tmp_path / "runs", n=3)
    for i, program in enumerate(["susan -c", "susan -c", "cjpeg -dct int"]):  # gem5's Process: cmd and executable
        with open(root / f"run{i}" / "config.ini", "a") as f:
            f.write(f"\n[system.cpu_workload]\ntype=Process\ncmd=/bench/{program}\nexecutable=/bench/{program.split()[0]}\n")
    args = ["--model", "cortex-a15-walker2017", "--cluster", "big=system.bigCluster"]
    result = run_cosim("sweep", root, *args, "-o", tmp_path / "s.csv")
    assert result.returncode == 0, result.stderr
    written = pd.read_csv(tmp_path / "s.csv")
    assert written["program"].tolist() == ["susan -c", "susan -c", "cjpeg -dct int"]
    assert "2 groups" in result.stdout and "runs of one program on one design share a front, --group to state another" in result.stdout
    assert bool(written.loc[2, "pareto"])  # alone in its program
    one = run_cosim("sweep", root, *args, "--group", "none", "-o", tmp_path / "one.csv")
    assert one.returncode == 0 and "every run on one front" in one.stdout
    assert pd.read_csv(tmp_path / "one.csv")["front"].tolist() == ["all runs"] * 3
