"""Epochs tile time: dumps that follow on are kept, cumulative dumps (no stats reset) are differenced, the rest refused."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from helpers import GEM5, REPO, gem5_run, needs_gem5, run_cosim, write_stats
from hypothesis import given, settings
from hypothesis import strategies as st

from cosim import CosimError, CosimWarning, read_stats, stats_meta

SE_DUMPS = REPO / "tests" / "gem5_configs" / "se_dumps.py"
CPU = "system.cpu"


def _dump(start: int, end: int, cycles: float, insts: float, *, period: int = 1000) -> dict[str, float]:
    """One dump covering ticks [start, end) at 1 GHz, with the counts given (ticks are ps)."""
    return {
        "simSeconds": (end - start) / 1e12,
        "simTicks": end - start,
        "finalTick": end,
        "simFreq": 1e12,
        "simInsts": insts,
        "system.clk_domain.clock": period,
        f"{CPU}.numCycles": cycles,
        f"{CPU}.ipc": insts / cycles,
    }


def test_dumps_that_follow_on_are_kept_as_they_are(tmp_path):
    path = write_stats(tmp_path / "stats.txt", [_dump(0, 1000, 1, 1), _dump(1000, 3000, 2, 1), _dump(3000, 4000, 1, 1)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", CosimWarning)
        df = read_stats(path)
    assert df["start_tick"].tolist() == [0, 1000, 3000] and df["end_tick"].tolist() == [1000, 3000, 4000]
    assert stats_meta(df).cumulative_dumps == []


def test_cumulative_dumps_are_differenced_with_one_warning(tmp_path):
    # m5 dumpstats without reset: every dump counts from tick 0; per epoch 100, 250, 50 cycles and 80, 200, 40 insts
    dumps = [_dump(0, 100_000, 100, 80), _dump(0, 350_000, 350, 280), _dump(0, 400_000, 400, 320)]
    path = write_stats(tmp_path / "stats.txt", dumps)
    with pytest.warns(CosimWarning, match="2 of 3 dumps are cumulative") as record:
        df = read_stats(path)
    assert len([w for w in record if "cumulative" in str(w.message)]) == 1
    assert df[f"{CPU}.numCycles"].tolist() == [100, 250, 50]
    assert df["simInsts"].tolist() == [80, 200, 40]
    assert df["start_tick"].tolist() == [0, 100_000, 350_000] and df["end_tick"].tolist() == [100_000, 350_000, 400_000]
    assert df["duration_s"].tolist() == pytest.approx([100e-9, 250e-9, 50e-9])
    assert df["system.clk_domain.clock"].tolist() == [1000, 1000, 1000]  # a level, not a count: kept
    assert stats_meta(df).cumulative_dumps == [1, 2]


def test_cumulative_after_a_reset_at_the_start_of_a_region(tmp_path):
    # stats reset at tick 500 (a region of interest), then dumps without reset: all start at 500
    dumps = [_dump(500, 1500, 900, 10), _dump(500, 2500, 1800, 30)]
    with pytest.warns(CosimWarning, match="1 of 2 dumps are cumulative"):
        df = read_stats(write_stats(tmp_path / "stats.txt", dumps))
    assert df["start_tick"].tolist() == [500, 1500] and df[f"{CPU}.numCycles"].tolist() == [900, 900]


@pytest.mark.parametrize(
    ("second", "words"),
    [
        ((500, 2000), "overlaps dump 0 by 500 ticks"),  # starts inside dump 0, at no start of it
        ((1500, 2000), "starts 500 ticks after dump 0 ends"),  # a stretch nobody priced
    ],
)
def test_overlaps_and_gaps_are_refused_naming_the_dump(tmp_path, second, words):
    path = write_stats(tmp_path / "stats.txt", [_dump(0, 1000, 1, 1), _dump(*second, 1, 1)])
    with pytest.raises(CosimError, match=f"dump 1 \\(finalTick 2000\\) {words}"):
        read_stats(path)
    result = run_cosim("read", path, "-o", tmp_path / "t.csv")
    assert result.returncode != 0 and "Traceback" not in result.stderr and "dump 1" in result.stderr


def test_a_gap_left_by_a_dropped_dump_is_explained(tmp_path):
    path = tmp_path / "stats.txt"
    write_stats(path, [_dump(0, 1000, 1, 1), _dump(1000, 2000, 1, 1), _dump(2000, 3000, 1, 1)])
    text = path.read_text().replace(f"{CPU}.numCycles", "garbage line here", 2)  # ruins dumps 0 and 1
    path.write_text(text.replace("garbage line here", f"{CPU}.numCycles", 1))  # dump 0 is fine again
    with pytest.warns(CosimWarning, match="dump 1: unreadable line"):
        df = read_stats(path)
    assert df["epoch"].tolist() == [0, 2]


def test_counters_that_fall_are_not_cumulative(tmp_path):
    dumps = [_dump(0, 1000, 900, 10), _dump(0, 2000, 800, 30)]
    with pytest.raises(CosimError, match=f"dump 1 starts where dump 0 started.*{CPU}.numCycles fell from 900 to 800"):
        read_stats(write_stats(tmp_path / "stats.txt", dumps))


@st.composite
def _dump_plans(draw):
    """Dump boundaries in order: each dump follows on, accumulates from the previous start, or leaves a gap/overlap."""
    kinds = draw(st.lists(st.sampled_from(["follow", "follow", "cumulative", "gap", "overlap"]), min_size=1, max_size=6))
    lengths = draw(st.lists(st.integers(4, 10_000), min_size=len(kinds) + 1, max_size=len(kinds) + 1))
    return kinds, lengths


@settings(max_examples=60, deadline=None)
@given(plan=_dump_plans())
def test_any_accepted_file_tiles_time(tmp_path_factory, plan):
    """Property: whatever the dump pattern, cosim either refuses the file or its epochs tile time exactly."""
    kinds, lengths = plan
    dumps, start, end, insts = [_dump(0, lengths[0], lengths[0], 1)], 0, lengths[0], 1
    for kind, length in zip(kinds, lengths[1:], strict=True):
        if kind != "cumulative":  # overlap: start strictly inside the previous dump, never at its start
            shift = {"gap": 2 + length // 2, "overlap": -min(2 + length // 2, end - start - 2)}.get(kind, 0)
            start, insts = end + shift, 0
        end = max(end, start) + length
        insts += 1
        dumps.append(_dump(start, end, end - start, insts))
    path = write_stats(tmp_path_factory.mktemp("tile") / "stats.txt", dumps)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CosimWarning)
            df = read_stats(path)
    except CosimError as err:
        assert "gap" in kinds or "overlap" in kinds, err
        return
    assert "gap" not in kinds and "overlap" not in kinds
    assert (df["start_tick"].to_numpy()[1:] == df["end_tick"].to_numpy()[:-1]).all()
    # each dump counted one "cycle" per tick it covered, so after differencing an epoch holds exactly its own ticks
    assert (df[f"{CPU}.numCycles"].to_numpy() == df["simTicks"].to_numpy()).all()


# --- real gem5: the same run dumped with and without stats reset ----------------------------------


@pytest.fixture(scope="module")
def dumped_both_ways(tmp_path_factory):
    root = tmp_path_factory.mktemp("gem5-dumps")
    kw = {"cpu": "se_dumps", "config": SE_DUMPS, "size": 2}
    reset = gem5_run(root, **kw, extra_args=("--epoch", "200us"))
    cumulative = gem5_run(root, **kw, extra_args=("--epoch", "200us", "--no-reset"))
    return reset, cumulative


def _price(run, tmp_path, name):
    out = tmp_path / f"{name}.csv"
    result = run_cosim("power", run / "stats.txt", "-o", out)
    assert result.returncode == 0, result.stderr
    return pd.read_csv(out), result.stderr


@needs_gem5
def test_real_gem5_dumps_with_and_without_reset_price_the_same(dumped_both_ways, tmp_path):
    reset, cumulative = dumped_both_ways
    lines = (cumulative / "stats.txt").read_text().splitlines()
    sim_ticks = [int(line.split()[1]) for line in lines if line.startswith("simTicks ")]
    assert sim_ticks[-1] > 10 * sim_ticks[0]  # the file really is cumulative
    with_reset, err_reset = _price(reset, tmp_path, "reset")
    without, err = _price(cumulative, tmp_path, "cumulative")
    assert "cumulative" not in err_reset and err.count("dumps are cumulative") == 1
    assert len(with_reset) == len(without) >= 2 * 15  # two clusters, >= 15 epochs of 200 us
    for cluster in ("bigCluster", "littleCluster"):
        e_reset = with_reset.loc[with_reset.cluster == cluster, "energy_j"].sum()
        e_cum = without.loc[without.cluster == cluster, "energy_j"].sum()
        assert e_cum == pytest.approx(e_reset, rel=1e-9, abs=0)
    assert without["flags"].iloc[2:].str.contains("cumulative_dump").all()
    assert not with_reset["flags"].str.contains("cumulative_dump").any()
    # epochs tile time in both
    for df in (with_reset, without):
        big = df[df.cluster == "bigCluster"]
        assert np.allclose(big["start_s"].to_numpy()[1:], big["end_s"].to_numpy()[:-1], rtol=0, atol=1e-12)


@needs_gem5
def test_real_gem5_run_passes_the_cycles_check(dumped_both_ways, tmp_path):
    """The fresh run is priced at exit 0 without --keep-implausible: no CPU counted more cycles than its clock ticked,
    and the bound is tight (the busy O3 CPU counts within 0.5 % of f * t in a full epoch)."""
    reset, _ = dumped_both_ways
    df = read_stats(reset / "stats.txt")
    period = df["system.bigCluster.clk_domain.clock"].to_numpy()
    ticked = df["simTicks"].to_numpy() / period
    ratio = df["system.bigCluster.cpus.numCycles"].to_numpy() / ticked
    assert ratio.max() <= 1.005 and ratio[1:-1].max() > 0.99
    assert (GEM5 / "gem5").exists()
