"""gem5 stats -> PMU event inputs, checked against numbers worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import GEM5_RUNS, biglittle_dumps, needs_shared, write_biglittle_run

from cosim import CosimError, load_model, read_config, read_stats
from cosim.counters.pmc import GENERATIONS, event_rates, load_event_map, stats_for

SHIPPED = ["cortex-a15-walker2017", "cortex-a15-gemstone2018", "cortex-a7-gemstone2018"]
# Stat names of gem5 v20.1-v22 O3 runs, which ../shared has no example of; checked
# against public stats.txt files of that era.
VERIFIED_ELSEWHERE = {
    "committedInsts",
    "commit.memRefs",
    "iew.iewExecutedInsts",
    # printed by public gem5 runs of other CPU models and eras than the ones in ../shared (seen in stats.txt files
    # of public repositories): simple CPUs before v20.1, and SimpleCPU's per-thread stats in v20.1-v23
    "num_busy_cycles",
    "num_mem_refs",
    "op_class::MemRead",
    "op_class::MemWrite",
    "op_class::FloatMemRead",
    "op_class::FloatMemWrite",
    "op_class::IntAlu",
    "op_class::IntMult",
    "op_class::IntDiv",
    "exec_context.thread_0.numMemRefs",
    "exec_context.thread_0.statExecutedInstType::IntAlu",
    "exec_context.thread_0.statExecutedInstType::IntMult",
    "exec_context.thread_0.statExecutedInstType::IntDiv",
    # the bundled gem5 v24 prints these for simple CPUs and runs without an L2 (tests/test_real_gem5.py runs them)
    "exec_context.thread_0.numBusyCycles",
    "executeStats0.numMemRefs",
    "ReadReq.misses::total",
    "writebacks::total",
}


@pytest.fixture
def biglittle(tmp_path):
    stats = read_stats(write_biglittle_run(tmp_path))
    config = read_config(tmp_path / "config.ini")
    return stats, config


def test_big_cluster_inputs_by_hand(biglittle):
    stats, config = biglittle
    big = config.cluster("big", "system.bigCluster")
    freq = np.array([1e6 / 556, 1e6 / 556, 1000.0])
    rates = event_rates(
        stats, big, ["0x11", "0x1b", "0x73", "0x14", "0x50", "0x19", "0x6a"], generation="v20.1+", cores_per_cluster=4, freq_mhz=freq
    )
    dumps = biglittle_dumps()
    for epoch, d in enumerate(dumps):
        per_s = 1.0 / (4 * 1e-3 * freq[epoch])  # sum over CPUs / 4 model cores / 1 ms / f
        cpus = [f"system.bigCluster.cpus{i}" for i in range(2)]
        active = sum(d[f"{c}.numCycles"] - d[f"{c}.idleCycles"] for c in cpus)
        assert rates.eph["0x11"][epoch] == pytest.approx(active * per_s)
        assert rates.eph["0x1b"][epoch] == pytest.approx(sum(d[f"{c}.executeStats0.numInsts"] for c in cpus) * per_s)
        int_ops = sum(d[f"{c}.statIssuedInstType_0::IntAlu"] + d[f"{c}.statIssuedInstType_0::IntMult"] for c in cpus)
        assert rates.eph["0x73"][epoch] == pytest.approx(int_ops * per_s)
        # shared L2: the cluster's two CPUs together account for all of it
        l2 = "system.bigCluster.l2"
        reads = d[f"{l2}.ReadSharedReq.accesses::total"] + d[f"{l2}.ReadCleanReq.accesses::total"]
        assert rates.eph["0x50"][epoch] == pytest.approx(reads * per_s)
        assert rates.eph["0x19"][epoch] == pytest.approx((d[f"{l2}.overallMisses::total"] + d[f"{l2}.writebacks::total"]) * per_s)
    assert (rates.eph["0x6a"] == 0).all()
    assert set(rates.substitutes) == {"0x11", "0x19", "0x6a", "0x73"}  # 0x1b, 0x14, 0x50 are exact
    assert "unaligned" in rates.substitutes["0x6a"]


def test_little_cluster_uses_in_order_sources(biglittle):
    stats, config = biglittle
    little = config.cluster("little", "system.littleCluster")
    rates = event_rates(
        stats, little, ["0x08", "0x04", "0x03", "0x60"], generation="v20.1+", cores_per_cluster=4, freq_mhz=np.full(3, 1400.0)
    )
    d = biglittle_dumps()[0]
    cpus = [f"system.littleCluster.cpus{i}" for i in range(2)]
    assert rates.eph["0x08"][0] == pytest.approx(sum(d[f"{c}.commitStats0.numInsts"] for c in cpus) / (4 * 1e-3 * 1400))
    assert rates.eph["0x03"][0] == pytest.approx(sum(d[f"{c}.dcache.overallMshrMisses::total"] for c in cpus) / (4 * 1e-3 * 1400))
    assert all(s.substitute is None for s in rates.chosen["0x03"].values()) and all(s.substitute for s in rates.chosen["0x60"].values())


def test_event_without_stats_is_an_error(biglittle):
    stats, config = biglittle
    little = config.cluster("little", "system.littleCluster")
    with pytest.raises(CosimError, match=r"no stats for event 0x1b .*cluster 'little'"):
        # Minor CPUs here dump no executed-instruction or discarded-op stats
        event_rates(
            stats.drop(columns=[c for c in stats.columns if "commitStats0.numInsts" in c]),
            little,
            ["0x1b"],
            generation="v20.1+",
            cores_per_cluster=4,
            freq_mhz=np.full(3, 1400.0),
        )


@pytest.mark.parametrize("generation", list(GENERATIONS))
@pytest.mark.parametrize("model", SHIPPED)
def test_maps_cover_every_event_of_the_shipped_models(generation, model):
    emap = load_event_map(generation)
    assert set(load_model(model).events) <= set(emap.sources)


@needs_shared
@pytest.mark.parametrize("generation", list(GENERATIONS))
def test_map_stat_names_exist_in_real_runs(generation):
    """Keeps the maps honest: every stat they name is printed by a real gem5 of that generation."""
    seen = set()
    for path in GEM5_RUNS.glob("*/stats.txt"):
        text = path.read_text()
        if ("simSeconds" in text) == (generation == "v20.1+") and text:
            seen.update(line.split()[0] for line in text.splitlines() if line and not line.startswith("-"))
    emap = load_event_map(generation)
    missing = {
        t.stat
        for sources in emap.sources.values()
        for s in sources
        for t in s.terms
        if not any(name.endswith("." + t.stat) for name in seen)
    }
    assert missing <= VERIFIED_ELSEWHERE


@needs_shared
def test_real_old_o3_run_counts(tmp_path):
    run = GEM5_RUNS / "public-old2016-arm64-fs-o3-dual"
    stats = read_stats(run / "stats.txt")
    cluster = next(iter(read_config(run / "config.ini").clusters().values()))
    rates = event_rates(stats, cluster, ["0x11", "0x14"], generation="pre-v20.1", cores_per_cluster=4, freq_mhz=np.array([2000.0]))
    active = sum(stats[f"system.cpu{i}.numCycles"][0] - stats[f"system.cpu{i}.idleCycles"][0] for i in range(2))
    assert rates.eph["0x11"][0] == pytest.approx(active / 4 / stats["duration_s"][0] / 2000.0)
    assert {s.expr for s in rates.chosen["0x14"].values()} == {"l1i.overall_accesses::total"}


def test_stats_for_lists_the_needed_names(biglittle):
    _, config = biglittle
    names = stats_for(config.cluster("big", "system.bigCluster"), ["0x11", "0x50"])
    assert "system.bigCluster.cpus1.numCycles" in names
    assert "system.bigCluster.cpus0.idleCycles" in names
    assert "system.bigCluster.l2.ReadSharedReq.accesses::total" in names  # v20.1+
    assert "system.bigCluster.l2.ReadSharedReq_accesses::total" in names  # pre-v20.1
    assert "system.bigCluster.clk_domain.clock" in names
