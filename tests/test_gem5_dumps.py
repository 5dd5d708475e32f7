"""attach_power's cheap per-epoch dumps in the real gem5 v24 (../shared/tools/gem5): the same run dumped three ways
(the statistics cosim reads, every statistic, one dump at the end) prices the same and resets every epoch.
Skipped when the bundled gem5 is not here."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from helpers import REPO, gem5_run, needs_gem5
from test_cli import cosim

from cosim.readers.gem5_stats import read_stats

pytestmark = needs_gem5

EXAMPLE = REPO / "gem5_scripts" / "examples" / "se_biglittle_power.py"
# the run of test_real_gem5.py's example test (the session caches it): 1 O3 + 1 Minor CPU, A7 model online, 100 us epochs
ARGS = ("--big-cores", "1", "--little-cores", "1", "--online", "little", "--online", "big")


def _run(root, dumps: str):
    extra = ARGS if dumps == "cosim" else (*ARGS, "--dumps", dumps)
    return gem5_run(root, cpu="example" if dumps == "cosim" else f"example-{dumps}", size=1, config=EXAMPLE, extra_args=extra)


def _priced(run, tmp_path, name: str) -> pd.DataFrame:
    out = tmp_path / f"{name}.csv"
    result = cosim("power", run / "stats.txt", "-o", out)  # no flags: clusters and models from cosim-run.json
    assert result.returncode == 0, result.stderr
    return pd.read_csv(out)


def test_cheap_dumps_price_like_full_dumps(gem5_root, tmp_path):
    cheap_run, full_run = _run(gem5_root, "cosim"), _run(gem5_root, "full")
    assert json.loads((cheap_run / "cosim-run.json").read_text())["stats_dumped"] == "cosim"
    assert json.loads((full_run / "cosim-run.json").read_text())["stats_dumped"] == "full"
    cheap, full = _priced(cheap_run, tmp_path, "cheap"), _priced(full_run, tmp_path, "full")
    assert len(cheap) == len(full) > 20 and list(cheap.columns) == list(full.columns)
    for column in ("power_w", "energy_j", "dynamic_w", "static_w"):
        rel = np.abs(cheap[column] - full[column]) / np.abs(full[column])
        assert rel.max() <= 1e-9, (column, rel.max())
    numeric = [c for c in full.columns if full[c].dtype.kind in "fib"]
    np.testing.assert_allclose(cheap[numeric].to_numpy(float), full[numeric].to_numpy(float), rtol=1e-9, atol=0)
    assert (cheap["flags"].fillna("") == full["flags"].fillna("")).all()
    # every statistic the cheap dump holds is the full dump's, value for value (host time differs run to run)
    a, b = read_stats(cheap_run / "stats.txt"), read_stats(full_run / "stats.txt")
    kept = [c for c in a.columns if not c.startswith("host")]
    assert set(kept) <= set(b.columns)
    pd.testing.assert_frame_equal(a[kept], b[kept])
    print(f"largest relative difference of power, cheap vs full dumps: {rel.max():.3g} over {len(cheap)} cluster-epochs")
    per_epoch = [(r / "stats.txt").stat().st_size / len(a) for r in (cheap_run, full_run)]
    print(f"stats bytes per epoch: cheap {per_epoch[0]:.0f}, full {per_epoch[1]:.0f}")
    assert per_epoch[0] < per_epoch[1] / 3


def test_cheap_dumps_reset_every_epoch(gem5_root):
    """Each dump counts its own epoch: simTicks is the epoch, and the epochs' counts add up to the counts of the
    same run dumped once at its end (a statistic that was not reset would add up to far more)."""
    cheap, end = read_stats(_run(gem5_root, "cosim") / "stats.txt"), read_stats(_run(gem5_root, "end") / "stats.txt")
    assert len(end) == 1 and len(cheap) > 20
    ticks = cheap["simTicks"].to_numpy()
    assert (ticks[:-1] == 100_000_000).all() and 0 < ticks[-1] <= 100_000_000
    np.testing.assert_array_equal(np.diff(cheap["finalTick"].to_numpy()), ticks[1:])
    assert cheap["simTicks"].sum() == end["simTicks"][0] == end["finalTick"][0]
    counts = [
        "system.bigCluster.cpus.numCycles",
        "system.bigCluster.cpus.commitStats0.numInsts",
        "system.littleCluster.cpus.commitStats0.numInsts",
        "system.littleCluster.cpus.idleCycles",  # a MinorCPU's is a legacy stat (in no stats group)
        "system.littleCluster.cpus.dcache.overallAccesses::total",
        "system.bigCluster.l2.overallMisses::total",
    ]
    for name in counts:
        assert cheap[name].sum() == pytest.approx(end[name][0], rel=1e-12), name
        assert cheap[name].max() < end[name][0]  # no dump holds the whole run's count


def test_cheap_dumps_equal_full_dumps_for_switched_simple_cpus(gem5_root, tmp_path):
    """An AtomicSimpleCPU that hands over to a switched-out MinorCPU (tests/gem5_configs/se_switch.py): a simple CPU's
    numBusyCycles is a formula over an Average, which only gem5's prepare() brings up to date."""
    config = REPO / "tests" / "gem5_configs" / "se_switch.py"
    cheap_run = gem5_run(gem5_root, cpu="switch", config=config)
    full_run = gem5_run(gem5_root, cpu="switch-full", config=config, extra_args=("--full-stats",))
    a, b = read_stats(cheap_run / "stats.txt"), read_stats(full_run / "stats.txt")
    kept = [c for c in a.columns if not c.startswith("host")]
    assert "system.cluster.cpus.exec_context.thread_0.numBusyCycles" in kept and "system.switch_cpus.numCycles" in kept
    pd.testing.assert_frame_equal(a[kept], b[kept])
    cheap, full = _priced(cheap_run, tmp_path, "cheap"), _priced(full_run, tmp_path, "full")
    assert len(cheap) == len(full) > 20
    np.testing.assert_allclose(cheap["power_w"], full["power_w"], rtol=1e-9, atol=0)
    np.testing.assert_allclose(cheap["energy_j"], full["energy_j"], rtol=1e-9, atol=0)
