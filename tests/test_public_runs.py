"""Every real gem5 run in ../shared/data/gem5/ has a known right outcome: priced with plausible numbers, or refused in
one line that names the physical reason.  The command is the one a new user types."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import GEM5_RUNS, needs_shared
from test_cli import assert_one_line_error, cosim

pytestmark = needs_shared

A15 = ("--model", "cortex-a15-walker2017")
# min and max of 'Power A15' per clock in asrtpm-A15-powmon-data.csv (four cores, idle to fully busy) [W]
MEASURED_A15_W = {
    200: (0.0957, 0.4207),
    600: (0.1555, 1.0816),
    1000: (0.2319, 1.9110),
    1200: (0.2961, 2.5847),
    1400: (0.3544, 3.3004),
    1600: (0.4667, 4.4107),
    1800: (0.6319, 6.1301),
}
# min of 'Power A7' in the same file: the A7 cluster at 1000 MHz with the A15 cluster running the workloads [W]
MEASURED_A7_FLOOR_W = 0.0610

# run folder, extra arguments, expected exit status, what stderr must say (refusals) or the flags every row has
OUTCOMES = [
    ("cosim-v24-se-biglittle-o3-1800MHz-minor-1400MHz", (), 0, "priced with cortex-a15-gemstone2018"),
    ("cosim-v24-se-biglittle-o3-1000MHz-minor-600MHz", (), 0, "priced with cortex-a7-gemstone2018"),
    ("public-ext2019-empty-stats", A15, 2, "empty file"),
    # gem5's starter_se.py default, 4 GHz: beyond both models' extrapolation band (1.125x their top clock)
    ("public-new-2022-arm-se-minor-starterse-cpucluster", A15, 2, "4000 MHz is 2.22x cortex-a15-walker2017's top trained clock"),
    ("public-new-2022-arm-se-minor-starterse-cpucluster", (), 2, "beyond its extrapolation band (1.125x, up to 1575 MHz)"),
    # no config.ini: its CPU (an O3 board.processor.cores.core), its 3 GHz clock (board.clk_domain) and its ISA (x86: the
    # LocalApic's interrupts.clk_domain) read from the stats' names; refused as x86, then for its clock
    ("public-new-v24-x86-simpoint-2dumps", A15, 2, "the run is X86 but cortex-a15-walker2017 was trained on ARM"),
    ("public-new-v24-x86-simpoint-2dumps", (*A15, "--any-isa"), 2, "3003 MHz is 1.67x cortex-a15-walker2017's top trained clock"),
    # 2 GHz (gem5's se.py/fs.py default) is 1.11x the A15's top clock: inside its band, priced and flagged
    ("public-old2012-arm32-fs-o3-dual", A15, 0, "extrapolated"),
    ("public-old2016-arm-se-minor-mcf", A15, 0, "extrapolated"),
    # ... but 1.43x the A7's: refused by the same rule
    ("public-old2016-arm-se-minor-mcf", (), 2, "2000 MHz is 1.43x cortex-a7-gemstone2018's top trained clock 1400 MHz"),
    ("public-old2016-arm64-fs-o3-dual", A15, 0, "extrapolated"),
    ("public-old2016-null-dram-lowp-28dumps", A15, 2, "this run has no CPU"),
    # Ruby caches (gem5 2016 regression references), priced from the Ruby controllers' stats. The ARMv8 one's source
    # ships no config.ini: its CPU, clock, Ruby caches and ISA are read from the stats' names (config_from_stats). Both
    # run TimingSimple CPUs at 2 GHz: 1.11x the A15's top clock (priced, extrapolated), 1.43x the A7's (refused)
    ("public-old2016-arm64-fs-timingsimple-ruby-moesi", A15, 0, "config_from_stats;core_kind_mismatch;missing_term:0x6a;subst:0x19"),
    ("public-old2016-arm64-fs-timingsimple-ruby-moesi", (), 2, "2000 MHz is 1.43x cortex-a7-gemstone2018's top trained clock 1400 MHz"),
    ("public-old-x86-fs-timingsimple-ruby-mesi", A15, 2, "the run is X86 but cortex-a15-walker2017 was trained on ARM"),
    ("public-old-x86-fs-timingsimple-ruby-mesi", (*A15, "--any-isa"), 0, "isa_mismatch;core_kind_mismatch;missing_term:0x6a;subst:0x19"),
    # runs made for cosim with gem5 v24 (see ../shared/data/gem5/README.md). A CPU that exists and never ran
    # (numCycles 0, its other counters never printed) is an idle core: priced, flagged
    ("cosim-v24-se-o3-2cpu-1process-1000MHz", (), 0, "idle_cpu:system.cpu1"),
    # starter_se's atomic CPUs have no caches (config.ini: no Cache object): their cache events are missing terms
    ("cosim-v24-starter-se-atomic-4cores-1000MHz", (), 0, "missing_term:0x03;missing_term:0x04;missing_term:0x60"),
    # 200 MHz is a third of the default A15 model's lowest trained clock: priced by its static form, flagged
    ("cosim-v24-se-o3-200MHz", (), 0, "freq_outside_training"),
    ("cosim-v24-se-o3-600MHz", (), 0, "priced with cortex-a15-gemstone2018"),
    # se.py -n 4 with the program on cpu0: the board's cluster, four powered cores, three idle
    *[
        (f"xu3-mibench-train/security_sha/{f}MHz", (), 0, "idle_cpu:system.cpu1;idle_cpu:system.cpu2;idle_cpu:system.cpu3")
        for f in (1000, 1500, 2000)
    ],
]


def test_every_public_run_has_an_expected_outcome():
    assert {run.split("/")[0] for run, *_ in OUTCOMES} == {p.name for p in GEM5_RUNS.iterdir() if p.is_dir()}


@pytest.mark.parametrize(
    ("run", "args", "code", "says"),
    OUTCOMES,
    ids=[f"{r}{'-' + '-'.join(x.strip('-')[:9] for x in a if x.startswith('--')) if a else ''}" for r, a, *_ in OUTCOMES],
)
def test_public_run(run, args, code, says, tmp_path):
    out = tmp_path / "p.csv"
    result = cosim("power", GEM5_RUNS / run / "stats.txt", *args, "-o", out)
    if code != 0:
        assert_one_line_error(result, says, code=code)
        assert not out.exists()
        return
    assert result.returncode == 0, result.stderr
    t = pd.read_csv(out)
    assert np.isfinite(t["power_w"]).all() and (t["power_w"] > 0).all() and not t["implausible"].any()
    assert (t["static_w"] > 0).all()
    assert says in result.stderr or t["flags"].str.contains(says).all()
    big = t[t["model"].str.startswith("cortex-a15")]
    if len(big):  # the size: inside what the measured A15 cluster drew at that clock (Powmon, 60 workloads, idle to busy)
        f_mhz = round(big["freq_mhz"].iloc[0] / 200) * 200
        lo, hi = MEASURED_A15_W[min(f_mhz, 1800)]
        if f_mhz > 1800:  # extrapolated: no more than dynamic power's f*V^2 growth with V rising in step with f allows
            hi *= (f_mhz / 1800) ** 3
        # the measured floor is four idle cores; a run of fewer cores may draw less, at most in proportion to its cores
        lo *= min(1.0, big["n_cpus"].iloc[0] / 4)
        assert lo <= big["power_w"].min() and big["power_w"].max() <= hi
    little = t[t["model"].str.startswith("cortex-a7")]
    if len(little) and (little["freq_mhz"] >= 1000).all():  # at least what the measured A7 cluster drew idle at 1000 MHz
        assert little["power_w"].min() >= MEASURED_A7_FLOOR_W * min(1.0, little["n_cpus"].iloc[0] / 4)


def test_cpu_that_never_ran_is_an_idle_core(tmp_path):
    """gem5's se.py -n 2 with one process: cpu1 counted no cycle (stats.txt: system.cpu1.numCycles 0) and gem5 printed
    none of its other counters.  It adds no activity: the inputs are cpu0's counts and the whole shared L2's, over
    the model's 4 cores, 1.032386 ms and 1000 MHz (stats.txt, hand-copied); its static power is a powered core's."""
    run = GEM5_RUNS / "cosim-v24-se-o3-2cpu-1process-1000MHz" / "stats.txt"
    assert "system.cpu1.numCycles                               0 " in run.read_text()
    both, alone = tmp_path / "both.csv", tmp_path / "alone.csv"
    assert cosim("power", run, "-o", both).returncode == 0
    assert cosim("power", run, "--cluster", "c0=system.cpu0", "-o", alone).returncode == 0
    a, b = pd.read_csv(alone), pd.read_csv(both)
    per = 4 * 1032386000e-12 * 1000.0  # cores, seconds, MHz
    assert b["eph_0x04"].iloc[0] == pytest.approx(270651 / per, rel=1e-6)  # system.cpu0.dcache.overallAccesses::total
    assert b["eph_0x16"].iloc[0] == pytest.approx(34744 / per, rel=1e-6)  # system.l2.overallAccesses::total, all cpu0's
    # clocked cycles: cpu0's numCycles 1032387, bounded by its ON residency 1032386000 ticks / 1000 (stalls count)
    assert b["eph_0x11"].iloc[0] == pytest.approx(1032386 / per, rel=1e-9)
    assert b["n_cpus"].iloc[0] == 2 and a["n_cpus"].iloc[0] == 1
    assert b["static_w"].iloc[0] > a["static_w"].iloc[0]  # a second powered core leaks


def test_cpu_without_caches_has_missing_terms_not_a_refusal(tmp_path):
    """starter_se.py --cpu atomic: the CPUs' ports go to the memory bus (config.ini has no Cache object), so the A7
    model's L1D and bus-read terms have no input: missing terms, as 0x6a is for every run; the rest is priced."""
    folder = GEM5_RUNS / "cosim-v24-starter-se-atomic-4cores-1000MHz"
    assert "Cache\n" not in "".join(line for line in (folder / "config.ini").read_text().splitlines(True) if line.startswith("type="))
    result = cosim("power", folder / "stats.txt", "-o", tmp_path / "p.csv")
    assert result.returncode == 0, result.stderr
    t = pd.read_csv(tmp_path / "p.csv")
    assert (t["eph_0x03"] == 0).all() and (t["eph_0x04"] == 0).all() and (t["eph_0x08"] > 0).all()
    assert "3 term(s) of cortex-a7-gemstone2018 gem5 cannot count (0x03, 0x04, 0x60)" in result.stdout


def test_refused_run_is_kept_flagged_on_request(tmp_path):
    """4 GHz priced past the band on request asks for a voltage beyond the static form's physical range (the A15's
    V-f curve continued to 4000 MHz: above 1.5 V): kept only flagged, with the figures cosim computed (issue #46:
    --keep-implausible wrote no values, a way out that led nowhere)."""
    out = tmp_path / "p.csv"
    run = GEM5_RUNS / "public-new-2022-arm-se-minor-starterse-cpucluster" / "stats.txt"
    refused = cosim("power", run, *A15, "--extrapolate", "-o", out)
    assert_one_line_error(refused, "at 4000 MHz is outside 0.6-1.5 V")
    result = cosim("power", run, *A15, "--extrapolate", "-o", out, "--keep-implausible")
    assert result.returncode == 0, result.stderr
    t = pd.read_csv(out)
    assert t["implausible"].all() and t["flags"].str.contains("implausible").all()
    assert t["implausible_reason"].str.contains("outside 0.6-1.5 V").all()
    # the figures kept add up as any row does: static within the total, energy = power x time
    assert (t["power_w"] > 0).all() and (t["static_w"] <= t["power_w"]).all()
    assert t["energy_j"].to_numpy() == pytest.approx((t["power_w"] * t["duration_s"]).to_numpy(), rel=1e-6)  # as the CSV rounds


def test_another_isa_is_refused_unless_asked(tmp_path):
    """A real v24 run whose config names x86 objects (as gem5's X86 builds write them) is no A15 run."""
    src = GEM5_RUNS / "cosim-v24-se-biglittle-o3-1000MHz-minor-600MHz"
    run = tmp_path / "x86"
    run.mkdir()
    text = (src / "config.ini").read_text()
    (run / "config.ini").write_text(
        text.replace("=ArmISA", "=X86ISA").replace("=ArmTLB", "=X86TLB").replace("=ArmMMU", "=X86MMU").replace("=ArmDecoder", "=X86Decoder")
    )
    shutil.copy(src / "stats.txt", run / "stats.txt")
    assert_one_line_error(
        cosim("power", run / "stats.txt", *A15, "-o", tmp_path / "p.csv"),
        "the run is X86 but cortex-a15-walker2017 was trained on ARM cores",
        "--any-isa",
    )
    result = cosim("power", run / "stats.txt", *A15, "--any-isa", "-o", tmp_path / "p.csv")
    assert result.returncode == 0, result.stderr
    assert pd.read_csv(tmp_path / "p.csv")["flags"].str.contains("isa_mismatch").all()


def test_ruby_sequencer_without_caches_is_refused_with_the_reason(tmp_path):
    """CPUs on Ruby sequencers that name no RubyCache (dcache=, icache=) and no Ruby stats: say it ran on Ruby and what
    the map counts there, not 'wrong --cluster path'."""
    src = GEM5_RUNS / "cosim-v24-se-biglittle-o3-1000MHz-minor-600MHz"
    run = tmp_path / "ruby"
    run.mkdir()
    (run / "config.ini").write_text((src / "config.ini").read_text().replace("type=Cache\n", "type=RubySequencer\n"))
    with open(src / "stats.txt") as f, open(run / "stats.txt", "w") as out:  # and no classic cache stats, as in Ruby runs
        out.writelines(line for line in f if not any(k in line for k in (".dcache.", ".icache.", ".l2.")))
    assert_one_line_error(
        cosim("power", run / "stats.txt", "--model", "cortex-a7-gemstone2018", "-o", tmp_path / "p.csv"),
        "although it ran on Ruby (RubySequencer)",
        "docs/explanation/ruby.md",
    )


# gem5's own statistics of the x86 MESI_Two_Level run (stats.txt, hand-copied): 5.2201667235 s at 2000 MHz, two CPUs
X86_RUBY = {
    "l1_cntrl0.L1Icache.demand_accesses": 115118485,
    "l1_cntrl1.L1Icache.demand_accesses": 56626659,
    "l2_cntrl0.L2cache.demand_misses": 233202,
    "Directory_Controller.M.Data": 100152,  # MESI_Two_Level-dir.sm: transition(M, Data, MI) { qw_queueMemoryWBRequest }
    "L2Cache_Controller.L1_GETS": 1434524,
    "L2Cache_Controller.L1_GET_INSTR": 820529,
}


def test_ruby_run_inputs_are_its_controllers_stats(tmp_path):
    """The x86 MESI_Two_Level run priced from its Ruby caches' and controllers' stats: the model inputs are gem5's counts
    (copied above) per model core, second and MHz; the shared L2 and the protocol's counts are the two CPUs' together."""
    run = GEM5_RUNS / "public-old-x86-fs-timingsimple-ruby-mesi" / "stats.txt"
    values = _first_values(run)
    assert all(values[f"system.ruby.{name}"] == str(value) for name, value in X86_RUBY.items())
    out = tmp_path / "p.csv"
    result = cosim("power", run, *A15, "--any-isa", "-o", out)
    assert result.returncode == 0, result.stderr
    t = pd.read_csv(out)
    per = 4 * 5.2201667235 * 2000  # model cores, seconds, MHz
    c = X86_RUBY
    assert t["eph_0x14"].iloc[0] == pytest.approx((c["l1_cntrl0.L1Icache.demand_accesses"] + c["l1_cntrl1.L1Icache.demand_accesses"]) / per)
    assert t["eph_0x19"].iloc[0] == pytest.approx((c["l2_cntrl0.L2cache.demand_misses"] + c["Directory_Controller.M.Data"]) / per)
    assert t["eph_0x50"].iloc[0] == pytest.approx((c["L2Cache_Controller.L1_GETS"] + c["L2Cache_Controller.L1_GET_INSTR"]) / per)
    assert t["flags"].str.contains("subst:0x19").all() and not t["flags"].str.contains("subst:0x14|subst:0x50").any()


def test_ruby_run_without_config_is_priced_from_its_stats_names(tmp_path):
    """The ARMv8 MOESI_CMP_directory run has no config.ini: its one CPU is system.cpu (a simple CPU: num_busy_cycles,
    no O3 or Minor stages), at system.cpu_clk_domain's 500 ticks (2 GHz), with Ruby's l1_cntrl0 and l2_cntrl0.  Its
    L2's demand accesses are its two L1s' demand misses (gem5's own counts: 10,870,089 + 9,572,409 = 20,442,498), and
    no Ruby stat counts L1D write misses per CPU: 0x43 is a missing term."""
    run = GEM5_RUNS / "public-old2016-arm64-fs-timingsimple-ruby-moesi" / "stats.txt"
    values = _first_values(run)
    assert values["system.cpu_clk_domain.clock"] == "500" and "config.ini" not in {p.name for p in run.parent.iterdir()}
    ruby = {k.removeprefix("system.ruby."): int(v) for k, v in values.items() if "demand_" in k}
    assert ruby["l1_cntrl0.L1Dcache.demand_misses"] + ruby["l1_cntrl0.L1Icache.demand_misses"] == ruby["l2_cntrl0.L2cache.demand_accesses"]
    assert ruby["l2_cntrl0.L2cache.demand_accesses"] == 20442498 and ruby["l1_cntrl0.L1Dcache.demand_accesses"] == 327245020
    out = tmp_path / "p.csv"
    result = cosim("power", run, "--model", "cortex-a15-gemstone2018", "-o", out)
    assert result.returncode == 0, result.stderr
    assert "read from its stats' names" in result.stderr and "system.cpu->system.ruby.l1_cntrl0" in result.stderr
    t = pd.read_csv(out)
    per = 4 * 51.7874622 * 2000
    assert t["eph_0x04"].iloc[0] == pytest.approx(327245020 / per, rel=1e-6)  # system.ruby.l1_cntrl0.L1Dcache.demand_accesses
    assert t["eph_0x16"].iloc[0] == pytest.approx(20442498 / per, rel=1e-6)  # system.ruby.l2_cntrl0.L2cache.demand_accesses
    assert (t["eph_0x43"] == 0).all()
    assert t["flags"].str.contains("config_from_stats").all() and t["flags"].str.contains("missing_term:0x43").all()
    # the same run with its CPU named: no kind guessed, the rest still read from the names
    named = cosim("power", run, "--model", "cortex-a15-gemstone2018", "--cpu-type", "system.cpu=TimingSimpleCPU", "-o", out)
    assert named.returncode == 0, named.stderr
    assert "kind from its stat groups" not in named.stderr and "system.cpu->system.ruby.l1_cntrl0" in named.stderr
    assert_one_line_error(cosim("power", run, "--cpu-type", "system.cpu0=TimingSimpleCPU", "-o", out), "no such CPU", "system.cpu")


def test_cpu_type_is_refused_beside_a_config(tmp_path):
    run = GEM5_RUNS / "public-old-x86-fs-timingsimple-ruby-mesi"
    assert_one_line_error(
        cosim("power", run, "--cpu-type", "system.cpu0=TimingSimpleCPU", "-o", tmp_path / "p.csv"), "leave --cpu-type out"
    )


def test_m5stats_txt_is_found_in_its_folder(tmp_path):
    """M5 (before gem5) named its statistics m5stats.txt: a folder holding it is read as one holding stats.txt."""
    src = GEM5_RUNS / "cosim-v24-se-o3-600MHz"
    shutil.copy(src / "stats.txt", tmp_path / "m5stats.txt")
    shutil.copy(src / "config.ini", tmp_path / "config.ini")
    out = tmp_path / "p.csv"
    result = cosim("power", tmp_path, "-o", out)
    assert result.returncode == 0, result.stderr
    assert "m5stats.txt: 1 epoch(s)" in result.stdout and len(pd.read_csv(out)) == 1


def test_old_cpus_with_their_own_equal_clocks_are_one_cluster(tmp_path):
    """gem5 of 2012 gave each CPU its own clock, no clock domain. Its two O3 CPUs at 2 GHz are one cluster of 2
    cores, so their static power is that of the 2016 run's same two O3 cores at 2 GHz in one clock domain (one
    static term scaled for 2 of 4 cores), not two single-core clusters each paying the shared part.  Both at one
    stated die temperature: the thermal loop would heat each run by its own dynamic power (another workload)."""
    old, new = tmp_path / "old.csv", tmp_path / "new.csv"
    at = ("--temperature", "50")
    assert cosim("power", GEM5_RUNS / "public-old2012-arm32-fs-o3-dual", *at, "-o", old).returncode == 0
    assert cosim("power", GEM5_RUNS / "public-old2016-arm64-fs-o3-dual", *at, "-o", new).returncode == 0
    a, b = pd.read_csv(old), pd.read_csv(new)
    assert a["cluster"].tolist() == ["cpu"] and (a["n_cpus"] == 2).all() and (b["n_cpus"] == 2).all()
    assert (a["freq_mhz"] == 2000).all() and (b["freq_mhz"] == 2000).all()
    assert np.allclose(a["static_w"], b["static_w"].iloc[0], rtol=1e-9)
    # the two CPUs can still be priced one by one, by their own paths
    one = cosim("power", GEM5_RUNS / "public-old2012-arm32-fs-o3-dual", "--cluster", "c1=system.cpu1", "-o", tmp_path / "c1.csv")
    assert one.returncode == 0, one.stderr
    assert (pd.read_csv(tmp_path / "c1.csv")["n_cpus"] == 1).all()


def test_powered_cores_states_the_physical_cluster(tmp_path):
    """se.py with one O3 CPU standing for the board's four-core cluster: --powered-cores 4 prices the static power of
    four cores, the model's own cluster (scale 1 - phi + phi * 4/4 = 1 whatever phi is), and the dynamic power is
    the one CPU's either way.  Fewer cores than ran is refused in one line."""
    run = GEM5_RUNS / "cosim-v24-se-o3-600MHz" / "stats.txt"
    one, four = tmp_path / "one.csv", tmp_path / "four.csv"
    assert cosim("power", run, "-o", one).returncode == 0
    result = cosim("power", run, "--powered-cores", "cpu_clk_domain=4", "-o", four)
    assert result.returncode == 0, result.stderr
    assert "[1 CPU(s) simulated, 4 cores powered (--powered-cores)]" in result.stdout
    a, b = pd.read_csv(one), pd.read_csv(four)
    assert (b["cores_scaled"] == 1.0).all() and (b["powered_cores"] == 4).all() and (a["powered_cores"] == 1).all()
    assert np.allclose(a["dynamic_w"], b["dynamic_w"]) and (b["static_w"] > a["static_w"]).all()
    assert_one_line_error(cosim("power", run, "--powered-cores", "cpu_clk_domain=0", "-o", tmp_path / "z.csv"), "whole number of cores")


def test_a_cache_that_never_missed_counts_zero(tmp_path):
    """gem5 prints no miss statistics for a cache that never missed (a short run): cpu0's L1D write-miss counters
    taken out of a real run, its L1D exists in config.ini, so the event (0x43) counts 0, flagged absent_zero."""
    src = GEM5_RUNS / "cosim-v24-se-o3-2cpu-1process-1000MHz"
    shutil.copy(src / "config.ini", tmp_path / "config.ini")
    lines = (src / "stats.txt").read_text().splitlines(True)
    kept = [line for line in lines if not line.startswith(("system.cpu0.dcache.WriteReq.mshrMisses", "system.cpu0.dcache.WriteReq.misses"))]
    assert len(kept) < len(lines)
    (tmp_path / "stats.txt").write_text("".join(kept))
    result = cosim("power", tmp_path / "stats.txt", "-o", tmp_path / "p.csv")
    assert result.returncode == 0, result.stderr
    t = pd.read_csv(tmp_path / "p.csv")
    assert (t["eph_0x43"] == 0).all() and t["flags"].str.contains("absent_zero:0x43").all()


def _first_values(stats: Path) -> dict[str, str]:
    """``{name: value text}`` of a one-dump stats.txt, as gem5 printed it."""
    return {parts[0]: parts[1] for line in stats.read_text().splitlines() if len(parts := line.split()) >= 2}
