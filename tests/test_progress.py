"""One progress reporter (cosim/progress.py) for every long command: the same plain lines without tqdm (issue #53)."""

from __future__ import annotations

import builtins

import pytest
from helpers import REPO

DEMO_STATS = REPO / "traces" / "cosim-v24-se-biglittle-1800-1400MHz" / "stats.txt.gz"


@pytest.fixture
def no_tqdm(monkeypatch):
    real_import = builtins.__import__

    def hide(name, *args, **kwargs):
        if name == "tqdm":
            raise ImportError("no tqdm")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", hide)


def test_counted_items_are_one_line_each_in_one_form(no_tqdm, capsys):
    from cosim.progress import each

    assert list(each(["a", "b", "c", "d"], label="validate", unit="runs")) == ["a", "b", "c", "d"]
    assert capsys.readouterr().err.splitlines() == [f"cosim: validate: {i}/4 runs ({25 * i} %)" for i in range(1, 5)]
    assert list(each(["a"], label="x", enabled=False)) == ["a"] and capsys.readouterr().err == ""


def test_the_stats_reader_reports_a_line_per_tenth_in_the_same_form(no_tqdm, capsys):
    from cosim.readers.gem5_stats import read_stats

    read_stats(DEMO_STATS, progress=True)
    lines = capsys.readouterr().err.splitlines()
    size_mb = DEMO_STATS.stat().st_size / 1e6
    assert lines[-1] == f"cosim: {DEMO_STATS.name}: {size_mb:.0f}/{size_mb:.0f} MB (100 %)"
    assert all(line.startswith(f"cosim: {DEMO_STATS.name}: ") and line.endswith(" %)") for line in lines)
    assert 1 <= len(lines) <= 10


def test_the_old_import_paths_are_the_same_reporter():
    import cosim.kernels.progress as old
    import cosim.progress as new

    assert old.stepper is new.stepper and old.tqdm_installed is new.tqdm_installed
