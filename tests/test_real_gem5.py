"""cosim on runs of the real gem5 v24 (../shared/tools/gem5) made inside the test: every CPU type, with and
without an L2, and gzip stats as gem5 writes them.  Skipped when the bundled gem5 is not here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import gem5_run, needs_gem5
from test_cli import cosim

from cosim.counters.pmc import event_rates
from cosim.models.modelfile import load_model
from cosim.readers.gem5_config import read_config
from cosim.readers.gem5_stats import read_stats, stats_file

pytestmark = needs_gem5

CPUS = ["O3CPU", "MinorCPU", "TimingSimpleCPU", "AtomicSimpleCPU"]
ALWAYS_ZERO = {"0x6a", "0x0f"}  # gem5 cannot count unaligned accesses: the map says so (constant 0, flagged)
ALL_EVENTS = sorted(set().union(*(load_model(m).events for m in ("cortex-a15-walker2017", "cortex-a15-gemstone2018",
                                                                    "cortex-a7-gemstone2018"))) - ALWAYS_ZERO)


@pytest.mark.parametrize("cpu", CPUS)
def test_no_event_is_silently_zero(gem5_root, cpu):
    """Each CPU type has its own v24 stats; an event the CPU did is never priced as 0."""
    run = gem5_run(gem5_root, cpu=cpu)
    stats = read_stats(run / "stats.txt")
    cluster = read_config(run / "config.ini").cluster("c", "system.cluster")
    rates = event_rates(stats, cluster, ALL_EVENTS, generation="v20.1+", cores_per_cluster=4,
                        freq_mhz=np.full(len(stats), 1000.0))
    totals = rates.eph.sum()
    assert (totals > 0).all(), f"{cpu}: zero events {list(totals[totals <= 0].index)}"
    # cycles: active (O3/Minor) or busy (simple) cycles, never more than the cycles simulated
    cycles = stats["system.cluster.cpus.numCycles"].to_numpy()
    assert np.all(rates.eph["0x11"].to_numpy() * 4 * stats["duration_s"].to_numpy() * 1000.0 <= cycles + 1e-6)
    assert rates.eph["0x11"].sum() > 0.3 * (cycles / (4 * stats["duration_s"] * 1000.0)).sum()


@pytest.mark.parametrize("cpu", CPUS)
def test_every_cpu_type_prices_with_its_default_model(gem5_root, cpu, tmp_path):
    run = gem5_run(gem5_root, cpu=cpu)
    out = tmp_path / "p.csv"
    result = cosim("power", run / "stats.txt", "-o", out)
    assert result.returncode == 0, result.stderr
    expected = "cortex-a15-walker2017" if cpu == "O3CPU" else "cortex-a7-gemstone2018"
    assert f"priced with {expected}" in result.stderr
    t = pd.read_csv(out)
    assert (t["model"] == expected).all()
    assert np.isfinite(t["power_w"]).all() and (t["power_w"] > 0).all()
    assert (t["power_w"] < load_model(expected).max_power_w).all()
    assert not t["implausible"].any()


def test_run_without_l2_prices_from_l1_misses(gem5_root, tmp_path):
    run = gem5_run(gem5_root, cpu="TimingSimpleCPU", levels=1)
    config = read_config(run / "config.ini")
    assert config.cluster("c", "system.cluster").l2 == {}
    out = tmp_path / "p.csv"
    result = cosim("power", run / "stats.txt", "--model", "cortex-a15-walker2017", "-o", out)
    assert result.returncode == 0, result.stderr
    t = pd.read_csv(out)
    assert t["subst_0x50"].all() and t["subst_0x19"].all()  # L2 loads and bus accesses from L1 misses, flagged
    assert (t["eph_0x50"] > 0).any() and (t["eph_0x19"] > 0).any()


def test_gzip_stats_as_gem5_writes_them(gem5_root, tmp_path):
    plain = gem5_run(gem5_root, cpu="AtomicSimpleCPU")
    gz = gem5_run(gem5_root, cpu="AtomicSimpleCPU", extra=("--stats-file=stats.txt.gz",))
    assert stats_file(gz).name == "stats.txt.gz"
    a, b = read_stats(plain / "stats.txt"), read_stats(stats_file(gz))
    simulated = [c for c in b.columns if not c.startswith("host")]  # host time and memory differ run to run
    assert len(a) == len(b) > 1
    pd.testing.assert_frame_equal(a[simulated], b[simulated])


def test_multi_core_cluster_matches_sum_of_its_cpus(gem5_root):
    run = gem5_run(gem5_root, cpu="MinorCPU", cores=2)
    stats = read_stats(run / "stats.txt")
    cluster = read_config(run / "config.ini").cluster("c", "system.cluster")
    assert cluster.n_cpus == 2
    rates = event_rates(stats, cluster, ["0x08"], generation="v20.1+", cores_per_cluster=4, freq_mhz=np.full(len(stats), 1000.0))
    insts = sum(stats[f"system.cluster.cpus{i}.commitStats0.numInsts"] for i in range(2))
    np.testing.assert_allclose(rates.eph["0x08"], insts / (4 * stats["duration_s"] * 1000.0))
