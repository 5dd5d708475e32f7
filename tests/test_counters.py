"""gem5 stats -> PMU event inputs, checked against numbers worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    BIG_PERIODS,
    GEM5_RUNS,
    LITTLE_PERIODS,
    biglittle_config,
    biglittle_dumps,
    needs_shared,
    write_biglittle_run,
    write_stats,
)

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
    # Ruby, v20.1+ names: no v20.1+ Ruby run is in ../shared. CacheMemory's stats are m_demand_* since gem5 v21
    # (src/mem/ruby/structures/CacheMemory.cc: ADD_STAT(m_demand_hits, ...)), and public stdlib runs print
    # board.cache_hierarchy.ruby_system.l1_controllers0.L1Dcache.m_demand_accesses; gem5 v20.1-v20 kept the 2016 names
    # demand_*, and the protocol's event counts keep theirs in every generation (the .sm files' events), as the 2016
    # Ruby runs in ../shared print them
    "m_demand_accesses",
    "m_demand_misses",
    "demand_accesses",
    "demand_misses",
    "L2Cache_Controller.L1_GETS",
    "L2Cache_Controller.L1_GET_INSTR",
    "Directory_Controller.Dirty_Writeback",
    "Directory_Controller.M.Data",
    # M5 (2008) O3's issued-by-FU-type distribution, its buckets read as ISSUE:FU_type_0::IntAlu: no M5 run is in
    # ../shared; tests/data/m5-2008-o3 is written by hand in M5's format (tests/test_gem5_stats.py reads it)
    "iq.ISSUE:FU_type_0::IntAlu",
    "iq.ISSUE:FU_type_0::IntMult",
    "iq.ISSUE:FU_type_0::IntDiv",
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
        # clocked cycles: ON all epoch (power_state residency = the epoch), so every cycle counted, stalls included
        assert all(d[f"{c}.power_state.pwrStateResidencyTicks::ON"] == d["simTicks"] for c in cpus)
        clocked = sum(d[f"{c}.numCycles"] for c in cpus)
        assert rates.eph["0x11"][epoch] == pytest.approx(clocked * per_s)
        assert rates.eph["0x1b"][epoch] == pytest.approx(sum(d[f"{c}.executeStats0.numInsts"] for c in cpus) * per_s)
        int_ops = sum(d[f"{c}.statIssuedInstType_0::IntAlu"] + d[f"{c}.statIssuedInstType_0::IntMult"] for c in cpus)
        assert rates.eph["0x73"][epoch] == pytest.approx(int_ops * per_s)
        # shared L2: the cluster's two CPUs together account for all of it
        l2 = "system.bigCluster.l2"
        reads = d[f"{l2}.ReadSharedReq.accesses::total"] + d[f"{l2}.ReadCleanReq.accesses::total"]
        assert rates.eph["0x50"][epoch] == pytest.approx(reads * per_s)
        assert rates.eph["0x19"][epoch] == pytest.approx((d[f"{l2}.overallMisses::total"] + d[f"{l2}.writebacks::total"]) * per_s)
    assert (rates.eph["0x6a"] == 0).all()
    assert set(rates.substitutes) == {"0x19", "0x6a", "0x73"}  # 0x11 (clocked cycles), 0x1b, 0x14, 0x50 are exact
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
    # ARM FS with Linux's idle loop: the cycles clocked are those of the ON residency (stats.txt, 500 ticks a cycle):
    # cpu0 335,827,401,167 ticks, numCycles 671,656,145 (its CLK_GATED 47,006,095,852,833 ticks = quiesceCycles
    # 94,012,190,405 to 0.000 1 %, left out of numCycles); cpu1's the same way
    clocked = sum(min(stats[f"system.cpu{i}.numCycles"][0], stats[f"system.cpu{i}.pwrStateResidencyTicks::ON"][0] / 500) for i in range(2))
    assert stats["system.cpu0.pwrStateResidencyTicks::ON"][0] == 335827401167
    assert rates.eph["0x11"][0] == pytest.approx(clocked / 4 / stats["duration_s"][0] / 2000.0)
    assert {s.clocked.stat for s in rates.chosen["0x11"].values()} == {"pwrStateResidencyTicks::ON"}
    assert {s.expr for s in rates.chosen["0x14"].values()} == {"l1i.overall_accesses::total"}


def test_stats_for_lists_the_needed_names(biglittle):
    _, config = biglittle
    names = stats_for(config.cluster("big", "system.bigCluster"), ["0x11", "0x50"])
    assert "system.bigCluster.cpus1.numCycles" in names
    assert "system.bigCluster.cpus0.power_state.pwrStateResidencyTicks::ON" in names  # bounds 0x11 to the clocked cycles
    assert "system.bigCluster.l2.ReadSharedReq.accesses::total" in names  # v20.1+
    assert "system.bigCluster.l2.ReadSharedReq_accesses::total" in names  # pre-v20.1
    assert "system.bigCluster.clk_domain.clock" in names


def test_cycles_in_wfi_do_not_count_stalls_do(tmp_path):
    """0x11 counts the cycles a core is clocked.  A Minor CPU clock-gated (WFI) for 30 % of an epoch adds those cycles
    to numCycles when it wakes, but its ON residency is 70 % of the epoch: 0.7 * f * t count.  Its stalled cycles
    (idleCycles, power state ON) count.  An O3 CPU leaves quiesced cycles out of numCycles (gem5's FS runs:
    numCycles + quiesceCycles = f * t), so its ON residency and numCycles agree."""
    dumps = biglittle_dumps()
    little, big = "system.littleCluster.cpus0", "system.bigCluster.cpus0"
    d = dumps[0]
    d[f"{little}.power_state.pwrStateResidencyTicks::ON"] = 0.7 * d["simTicks"]
    d[f"{little}.power_state.pwrStateResidencyTicks::CLK_GATED"] = 0.3 * d["simTicks"]
    d[f"{big}.numCycles"] = round(0.7 * d[f"{big}.numCycles"])
    d[f"{big}.idleCycles"] = 0
    d[f"{big}.power_state.pwrStateResidencyTicks::ON"] = 0.7 * d["simTicks"]
    (tmp_path / "config.ini").write_text(biglittle_config())
    stats = read_stats(write_stats(tmp_path / "stats.txt", dumps))
    config = read_config(tmp_path / "config.ini")
    for name, cpus, period in (("littleCluster", little, LITTLE_PERIODS[0]), ("bigCluster", big, BIG_PERIODS[0])):
        f_mhz = 1e6 / period
        rates = event_rates(
            stats, config.cluster(name, f"system.{name}"), ["0x11"], generation="v20.1+", cores_per_cluster=4, freq_mhz=np.full(3, f_mhz)
        )
        other = cpus[:-1] + "1"
        clocked = 0.7 * 1e9 / period + d[f"{other}.numCycles"]  # cpus0: 70 % of the epoch's cycles; cpus1 ON all epoch
        assert rates.eph["0x11"][0] == pytest.approx(clocked / (4 * 1e-3 * f_mhz), rel=1e-6)
