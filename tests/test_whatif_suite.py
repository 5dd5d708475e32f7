"""The DVFS what-if against gem5 itself: the recorded workload suite (tests/data/whatif_suite, made by
``python tests/whatif_suite.py record``) and a private-L2 system run here in the bundled gem5."""

from __future__ import annotations

import itertools
import json
import math
import subprocess

import pandas as pd
import pytest
from helpers import GEM5, REPO, needs_gem5, needs_shared
from whatif_calibrate import COVERAGE, calibrate, rescore, set_table
from whatif_pairs import CLUSTERS, SE_CLUSTERS, SE_MINOR_CLUSTERS, XU3, compare, xu3_rows
from whatif_suite import (
    APART_PAIRS,
    CALIBRATION,
    DESIGN,
    PAIRS,
    PROGRAMS,
    RUNS,
    SE_CLOCKS,
    SE_MINOR_CLOCKS,
    SE_PROGRAMS,
    SETUPS,
    TEST,
    pool_rows,
)

from cosim import ClusterSpec, load_model, read_config, read_stats
from cosim.dse import interval
from cosim.dse.whatif import recorded_run, whatif
from cosim.readers.gem5_stats import stats_file


@pytest.fixture(scope="module")
def rows(whatif_suite_rows) -> pd.DataFrame:
    """Every ordered pair of every set-up (504), computed once a test run (tests/conftest.py)."""
    return whatif_suite_rows


def test_the_suite_is_recorded():
    """8 programs of different character and gem5's own phases, each at 3 clock pairs on 1+1 and 2+2 cores, with
    100 us dumps and with one dump, kept as test data."""
    assert len(PROGRAMS) >= 9
    for program in PROGRAMS:
        assert program == "phases" or (REPO / "tests" / "workloads" / f"{program}.c").is_file()
        for setup in ("1c-epoch", "1c-one", "2c-epoch", "2c-one"):
            for big, little in PAIRS:
                run = RUNS / program / setup / f"{big}_{little}"
                assert stats_file(run) is not None and (run / "config.ini").is_file(), run
        for big, little in APART_PAIRS:  # and with the clusters' clocks moved apart
            run = RUNS / program / "1c-apart" / f"{big}_{little}"
            assert stats_file(run) is not None and (run / "config.ini").is_file(), run
    for program in SE_PROGRAMS:  # and gem5's own se.py, one O3 CPU and one Minor CPU, one dump
        for setup, clocks in (("se-one", SE_CLOCKS), ("se-minor", SE_MINOR_CLOCKS)):
            for mhz in clocks:
                run = RUNS / program / setup / str(mhz)
                assert stats_file(run) is not None and (run / "config.ini").is_file(), run


def test_every_pair_of_every_set_up_is_predicted(rows):
    """Each program's ordered pairs: 3 clock pairs (6) per big.LITTLE set-up, 14 with the clocks moved apart (to and
    from the 1c-epoch runs), 12 on se.py's O3 CPU (4 clocks), 6 on its Minor CPU (3)."""
    per_program = {"1c-epoch": 6, "1c-one": 6, "2c-epoch": 6, "2c-one": 6, "1c-apart": 14, "se-one": 12, "se-minor": 6}
    assert set(rows["setup"]) == set(SETUPS) == set(per_program)
    for setup, n in per_program.items():
        assert len(rows[rows["setup"] == setup]) == n * len(PROGRAMS), setup
    assert rows[["runtime_s", "energy_j"]].notna().all().all()


# --- the interval: constants set on the calibration programs, scored on the test programs -----------------------


def test_the_programs_are_split_into_calibration_and_test_sets():
    """Calibration, test and design programs (mixed: a mechanism was worked out on it, so it scores nothing) are
    disjoint and together the suite."""
    sets = (set(CALIBRATION), set(TEST), set(DESIGN))
    assert all(a.isdisjoint(b) for a, b in itertools.combinations(sets, 2))
    assert set.union(*sets) == set(PROGRAMS) == set(SE_PROGRAMS)
    shipped = json.loads(interval.BANDS_FILE.read_text())
    assert shipped["suite_calibration_programs"] == list(CALIBRATION) and set(TEST).isdisjoint(shipped["calibration_programs"])


@needs_shared
def test_the_intervals_constants_are_the_calibration_pool(rows):
    """The shipped constants are what ``python tests/whatif_suite.py calibrate`` sets from the calibration pool alone
    (the suite's calibration programs, xu3-mibench-train, the cosim-v24 runs): re-run here on the same pairs (what
    each pair needs of the band does not depend on the band)."""
    pool = pool_rows(rows)
    assert len(pool) == json.loads(interval.BANDS_FILE.read_text())["calibration_pairs"]
    constants = calibrate(pool)
    assert constants["runtime_band"] == pytest.approx(list(interval.RUNTIME_BAND))
    assert constants["energy_band"] == pytest.approx(list(interval.ENERGY_BAND))
    assert constants["single_dump_base"] == pytest.approx(interval.SINGLE_DUMP_BASE)
    # the calibration's own target holds on the pairs it was set on
    table = set_table(pool)
    assert (table[["runtime_s_coverage_pct", "energy_j_coverage_pct"]] >= 100 * COVERAGE - 1e-9).all().all()


@pytest.fixture(scope="module")
def ex5_big_constants(rows) -> dict:
    """The interval's constants set on the calibration pool without its ex5_big runs (xu3-mibench-train)."""
    pool = pool_rows(rows)
    return calibrate(pool[pool["setup"] != "xu3-mibench"])


@needs_shared
def test_the_interval_holds_on_ex5_big_with_bands_set_without_it(ex5_big_constants):
    """xu3-mibench-train (11 MiBench programs on gem5's ex5_big, 66 pairs) scored by constants set on the rest of the
    pool alone: a stricter hold-out than ``score``'s leave-one-program-out (no ex5_big run sets them).  Goal: every
    pair within 5 %, coverage >= 90 %, mean half-width <= 10 % (measured: runtime 65 of 66, office_stringsearch1's
    2000 -> 1000 MHz -5.8 %, a 0.2 ms run)."""
    xu3 = rescore(xu3_rows(), ex5_big_constants, interval.bands())
    assert len(xu3) == 66 and (xu3["energy_j"].abs() <= 5).all() and (xu3["runtime_s"].abs() <= 5).sum() >= 65
    table = set_table(xu3).loc["xu3-mibench"]
    assert table["runtime_s_coverage_pct"] >= 90 and table["energy_j_coverage_pct"] >= 90
    assert table["runtime_s_mean_half_width_pct"] <= 10 and table["energy_j_mean_half_width_pct"] <= 10


@needs_shared
@pytest.mark.xfail(strict=True, reason="measured: 2/3 of the band set without ex5_big still holds 97.0 % / 98.5 % of its 66 pairs")
def test_the_interval_on_ex5_big_is_not_wider_than_it_needs(ex5_big_constants):
    """The other side on ex5_big: NARROWER of the band set without it would hold gem5 on fewer than 95 % of its pairs.
    Not met (strict xfail: it fails the day it is): the energy band set on the other set-ups (1 % + 1 %·|ln(f'/f)|·
    (0.25 + share)) holds 97 % of ex5_big's pairs even halved; its one-dump base (3 %) is most of it."""
    scaled = {
        "runtime_band": [*(x * NARROWER for x in ex5_big_constants["runtime_band"][:2]), ex5_big_constants["runtime_band"][2]],
        "energy_band": [*(x * NARROWER for x in ex5_big_constants["energy_band"][:2]), ex5_big_constants["energy_band"][2]],
        "single_dump_base": ex5_big_constants["single_dump_base"] * NARROWER,
    }
    table = set_table(rescore(xu3_rows(), scaled, interval.bands())).loc["xu3-mibench"]
    assert min(table["runtime_s_coverage_pct"], table["energy_j_coverage_pct"]) < 100 * COVERAGE


# the goal (issue #37): gem5's value inside the interval on >= 90 % of the test programs' pairs in every set-up, with a
# mean half-width <= 10 %, runtime and energy; where it is not met the test holds the figure the docs show for it
# (explanation/whatif-score.json's table) and why, so a change that moves it fails here, either way
GOAL_COVERAGE_PCT, GOAL_HALF_WIDTH_PCT = 90.0, 10.0
WIDTH_NOT_MET = {
    ("se-minor", "runtime_s"): (10.2, "a Minor CPU's drains read three ways (interval.runtime_shift_s)"),
}
# Two-sided: the band is set for COVERAGE (95 %) in every set-up (whatif_calibrate.py), so on programs it never saw it
# is too narrow where the pairs it holds are fewer than a binomial draw at 95 % gives with probability ALPHA (pairs
# of one program are not independent, so the tolerance is if anything generous), and too wide where a band NARROWER
# times as wide (its base, slope and one-dump base scaled) would still hold 95 % in every set-up: one band serves every
# set-up, so the set-up that needs the most binds it.  2/3, not 1/2: halving the band moves the test programs'
# coverage from 92.9 % to 81.0 % in the binding set-up (1c-apart), so a band twice as wide as needed would pass a
# halving test, and doubling the shipped band (measured: every set-up 100 %) must not pass (notes: phys-figures.md).
ALPHA = 0.05
NARROWER = 2 / 3


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), by the sum (no scipy in the core path)."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def test_the_binomial_tolerance_by_hand():
    """P(X <= 15) for 18 draws at 0.95: 1 - P(16) - P(17) - P(18) = 1 - 0.1683 - 0.3763 - 0.3972 = 0.0581."""
    assert binomial_cdf(15, 18, 0.95) == pytest.approx(0.0581, abs=5e-4)
    assert binomial_cdf(18, 18, 0.95) == pytest.approx(1.0)


@pytest.mark.parametrize("key", ["runtime_s", "energy_j"])
@pytest.mark.parametrize("setup", SETUPS)
def test_the_interval_holds_gem5_on_the_test_programs(rows, setup, key):
    """Programs the constants never saw: coverage >= 90 % in every set-up (whatif.md's test-set table), and not below
    the calibration's 95 % by more than a binomial draw allows (one-sided, ALPHA): the interval is not too narrow."""
    part = rows[rows["program"].isin(TEST) & (rows["setup"] == setup)]
    held, n = int(part[f"{key}_covered"].sum()), len(part)
    assert 100 * held / n >= GOAL_COVERAGE_PCT, f"{setup} {key}: {held} of {n}"
    assert binomial_cdf(held, n, COVERAGE) >= ALPHA, f"{setup} {key}: {held} of {n}, too few for {COVERAGE:.0%} (p < {ALPHA})"


@pytest.mark.parametrize("key", ["runtime_s", "energy_j"])
def test_the_interval_is_not_wider_than_the_test_programs_need(rows, key):
    """The other side: the band NARROWER times as wide would hold gem5 on fewer than 95 % of the test programs' pairs in
    at least one set-up, so the shipped band is not wider than programs it never saw need (a band everyone passes
    with at 100 % would fail here)."""
    test = rows[rows["program"].isin(TEST)]
    shipped = interval.bands()
    narrower = {
        "runtime_band": [shipped["runtime_band"][0] * NARROWER, shipped["runtime_band"][1] * NARROWER, shipped["runtime_band"][2]],
        "energy_band": [shipped["energy_band"][0] * NARROWER, shipped["energy_band"][1] * NARROWER, shipped["energy_band"][2]],
        "single_dump_base": shipped["single_dump_base"] * NARROWER,
    }
    table = set_table(rescore(test, narrower, shipped)).drop("all")
    worst = table[f"{key}_coverage_pct"]
    assert worst.min() < 100 * COVERAGE, f"{key}: {NARROWER:.2f} of the band still holds {worst.min():.1f} % in every set-up"


def test_the_docs_score_table_is_the_test_programs_recomputed(rows):
    """whatif.md's scored table (docs/explanation/whatif-score.json, written by ``python tests/whatif_suite.py score
    --write``) shows, for the test programs, what the shipped interval gives on this session's pairs: the file rounds
    to 0.1, so each figure within 0.05 (+ float rounding) of the recomputation."""
    from whatif_suite import SCORE_FILE

    recorded = {r["setup"]: r for r in json.loads(SCORE_FILE.read_text())["setups"]}
    table = set_table(rows[rows["program"].isin(TEST)])
    for setup in SETUPS:
        shown = recorded[f"{setup} (test programs)"]
        for column, value in table.loc[setup].items():
            assert shown[column] == pytest.approx(float(value), abs=0.05 + 1e-9), (
                setup,
                column,
                "rerun: python tests/whatif_suite.py score --write",
            )


@pytest.mark.parametrize("key", ["runtime_s", "energy_j"])
@pytest.mark.parametrize("setup", SETUPS)
def test_the_interval_is_narrow_on_the_test_programs(rows, setup, key):
    """An interval that says something: mean half-width <= 10 % on the test programs (where not met, the figure the
    docs show, over the goal)."""
    table = set_table(rows[rows["program"].isin(TEST)])
    width = table.loc[setup, f"{key}_mean_half_width_pct"]
    if (setup, key) in WIDTH_NOT_MET:
        shown, why = WIDTH_NOT_MET[setup, key]
        assert round(width, 1) == shown and width > GOAL_HALF_WIDTH_PCT, why
    else:
        assert width <= GOAL_HALF_WIDTH_PCT


def test_compute_bound_programs_scale_with_the_clock(rows):
    """The what-if is exact for time on the core clock (interval.py's premise): programs whose run is core time
    (int_compute, fp_compute, branchy: no cache misses to speak of) are predicted within 2 % of gem5 at every other
    clock pair of the big.LITTLE set-ups, both clusters' clocks moving together.  (Not where the clocks move apart and
    the big cluster then ends the run, nor on se.py's O3 CPU, whose DRAM latency gem5 changes with the clock: up to
    2.4 % there.)"""
    together = rows["setup"].isin(["1c-epoch", "1c-one", "2c-epoch", "2c-one"])
    compute = rows[together & rows["program"].isin(["int_compute", "fp_compute", "branchy"])]
    assert len(compute) == 3 * 24
    assert compute["runtime_s"].abs().max() < 2 and compute["energy_j"].abs().max() < 2


def test_every_row_has_an_interval_and_flags():
    base = RUNS / "random_mlp" / "1c-epoch" / "1000_600"
    specs = [ClusterSpec(n, p, load_model(m)) for n, p, m in CLUSTERS]
    run = recorded_run(read_stats(stats_file(base)), read_config(base / "config.ini"), specs)
    grid = pd.DataFrame({"big_freq_mhz": [600.0, 1000.0, 1800.0], "little_freq_mhz": [600.0, 600.0, 1400.0]})
    table = whatif(run, grid)
    assert (table["runtime_s_lo"] < table["runtime_s"]).all() and (table["runtime_s"] < table["runtime_s_hi"]).all()
    assert (table["energy_j_lo"] < table["energy_j"]).all() and (table["energy_j"] < table["energy_j_hi"]).all()
    # the recorded clocks: the narrowest interval (no clock moved); 1800/1400 the widest
    width = (table["runtime_s_hi"] - table["runtime_s_lo"]) / table["runtime_s"]
    assert width.iloc[1] < width.iloc[0] < width.iloc[2]
    assert (table["avg_power_w"] <= table["peak_power_w"]).all()
    assert table["flags"].map(type).eq(str).all() and "memory_bound:little" in table["flags"].iloc[0]


def test_a_minor_cpus_store_misses_are_a_floor_under_its_store_bound_time():
    """The floor was worked out on this program, so mixed is a design program, in no scored figure (whatif_suite.py
    DESIGN).  mixed's next_idx loop (a store every 16 bytes, 20 instructions a line) on the LITTLE (Minor) CPU: gem5 takes
    98.5 ns a line at 600 MHz (45 ns computing, 87 ns of store-miss latency, the rest waiting) and 75.5 ns at 1400
    MHz (19 ns computing): the misses go one after the other, so the time falls by their L2 cycles and the few core
    cycles that do not overlap them, not by the core time the clock saves (which predicted 72.8 ns, -3.6 %).  The
    whole run's LITTLE finish, predicted from 1000/600 at 1800/1400 MHz, was -11.4 % off gem5 with the drains held
    as recorded."""
    base, other = RUNS / "mixed" / "1c-epoch" / "1000_600", RUNS / "mixed" / "1c-epoch" / "1800_1400"
    row = compare(base, other)
    assert abs(row["little_runtime_s"]) < 3 and abs(row["runtime_s"]) < 3 and abs(row["energy_j"]) < 3
    # where the misses overlap (random_mlp's initialisation: one store a line, about 1.9 in flight) the floor is the
    # epoch's time, not their summed latency
    specs = [ClusterSpec(n, p, load_model(m)) for n, p, m in CLUSTERS]
    gather = RUNS / "random_mlp" / "1c-epoch" / "1000_600"
    run = recorded_run(read_stats(stats_file(gather)), read_config(gather / "config.ini"), specs)
    little = next(c for c in run.clusters if c.name == "little")
    assert (little.store_serial_s <= run.duration_s + 1e-12).all() and little.store_serial_s.max() > 0.9 * run.duration_s.max()


def test_a_minor_cpus_store_misses_to_different_lines_overlap_as_its_memory_slots_allow():
    """ptrchase's initialisation stores to random lines: on se.py's one Minor CPU (executeMaxAccessesInMemory = 2,
    0.06 L1 MSHR hits a store miss) gem5 runs it in 50 ns + 75 cycles a store where a miss takes 77 ns + 42 cycles,
    about two misses in flight; predicted from 1400 at 600 MHz it was -13.4 % off gem5 with the misses one after the
    other.  On big.LITTLE (other CPUs on the memory) the run's own overlap is kept."""
    from cosim.dse.minor_waits import memory_slots

    row = compare(RUNS / "ptrchase" / "se-minor" / "1400", RUNS / "ptrchase" / "se-minor" / "600", clusters=SE_MINOR_CLUSTERS)
    assert abs(row["runtime_s"]) < 5, row
    alone = read_config(RUNS / "ptrchase" / "se-minor" / "600" / "config.ini")
    assert memory_slots(alone, alone.cluster("cpu", "system.cpu"), alone=True) == 2
    shared = read_config(RUNS / "ptrchase" / "1c-one" / "1000_600" / "config.ini")
    assert memory_slots(shared, shared.cluster("little", "system.littleCluster"), alone=False) == 1


# --- a private L2 per core ------------------------------------------------------------------------------------

PRIVATE_L2 = REPO / "tests" / "data" / "whatif_private_l2"  # tests/gem5_configs/se_private_l2.py, ptrchase 5, 2 O3 CPUs


def test_whatif_on_private_l2s_against_gem5_at_two_other_clocks():
    """Two O3 CPUs with one L2 each (gem5 v24, tests/gem5_configs/se_private_l2.py), predicted from 1000 MHz at
    1400 and 1800 MHz against gem5 run there: runtime +0.3 / +0.5 %, energy -0.5 / -1.1 % (measured).  Counting
    each L2's misses n_cpus times (issue #28) and the read-miss latency alone as memory time gave -9.9 / -15.9 %."""
    config = read_config(PRIVATE_L2 / "1000" / "config.ini")
    cluster = config.cluster("big", "system.cluster")
    assert len(set(cluster.l2.values())) == 2 and all(cluster.sharers(l2) == 1 for l2 in cluster.l2.values())
    for other in ("1400", "1800"):
        row = compare(PRIVATE_L2 / "1000", PRIVATE_L2 / other, clusters=(("big", "system.cluster", "cortex-a15-walker2017"),))
        assert abs(row["runtime_s"]) < 2 and abs(row["energy_j"]) < 3, row
        assert row["runtime_s_covered"] and row["energy_j_covered"]
        # recorded before the whole-line reading: the stats do not count its store lines, and the rows say so
        assert "store_lines_unread:big" in row["flags"].split(";")


@needs_gem5
def test_the_private_l2_config_runs_in_gem5(tmp_path):
    """The recorded private-L2 runs come from this config: it still runs in the bundled gem5 (a short program)."""
    config = REPO / "tests" / "gem5_configs" / "se_private_l2.py"
    args = ["nice", "-n", "10", str(GEM5 / "gem5"), "-q", f"--outdir={tmp_path}", str(config), "--freq=1GHz", "--cores=2"]
    args += ["--", str(REPO / "tests" / "workloads" / "int_compute.aarch64"), "1"]
    result = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert read_config(tmp_path / "config.ini").cluster("big", "system.cluster").sharers("system.cluster.l2s0") == 1


def test_pareto_plot_labels_every_point_and_marks_the_choice(tmp_path):
    """On a recorded suite run: every configuration carries its clocks on the plot, the chosen one is starred and
    named in the legend, and no row's average power is above its peak."""
    import matplotlib

    from cosim.dse.choose import choose, plot_pareto
    from cosim.dse.whatif import dvfs_grid

    base = RUNS / "mixed" / "1c-one" / "1400_1000"  # one dump: where the issue found the average above the peak
    specs = [ClusterSpec(n, p, load_model(m)) for n, p, m in CLUSTERS]
    run = recorded_run(read_stats(stats_file(base)), read_config(base / "config.ini"), specs)
    table = whatif(run, dvfs_grid(run, {"big": [600.0, 1000.0, 1800.0], "little": [600.0, 1400.0]}))
    assert (table["avg_power_w"] <= table["peak_power_w"]).all()
    assert table["flags"].str.contains("single_dump").all()
    choice = choose(table)
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text in the SVG
    svg = plot_pareto(table, tmp_path / "p.svg", choice=choice).read_text()
    for big, little in zip(table["big_freq_mhz"], table["little_freq_mhz"]):
        assert f">{big:g}/{little:g}<" in svg
    assert f"chosen: {choice.row['big_freq_mhz']:g}/{choice.row['little_freq_mhz']:g}" in svg


def test_the_whole_line_reading_of_gem5s_store_miss_switch(rows):
    """gem5's own phases program on big.LITTLE: at 1800 MHz the big (O3) cluster writes nine tenths of its store-miss
    lines whole (InvalidateReq, no fetch), at 1400 and 1000 MHz a third on 1+1 cores and half on 2+2, so its own
    finish moves far more than the clock explains (gem5's runs: more than 20 % off what the clock alone gives).  The
    reading is read from gem5's stats: phases' big cluster writes lines whole at 1800 MHz, stream's never; it grows
    with the clock's move, none at the run's own clock (1800 MHz is 1798.56 in gem5's ticks), all from a quarter's
    move (phases is a calibration program: whether the interval then holds gem5 is scored on the test programs)."""
    phases = rows[(rows["program"] == "phases") & ~rows["setup"].str.startswith("se-")]
    assert len(phases) == 4 * 6 + 14 and phases["big_runtime_s"].abs().max() > 20  # the switch is in the data
    specs = [ClusterSpec(n, p, load_model(m)) for n, p, m in CLUSTERS]
    readings = {}
    for program in ("phases", "stream"):
        base = RUNS / program / "1c-epoch" / "1800_1400"
        readings[program] = recorded_run(read_stats(stats_file(base)), read_config(base / "config.ini"), specs).clusters[0].whole_line_s
    assert readings["phases"][0].sum() > 1e-3  # 29,282 lines written whole at 1800 MHz: each may be fetched at 1000
    assert readings["stream"][0].sum() < 1e-5 and readings["stream"][1].sum() == 0  # its stores never go whole
    assert not phases["flags"].str.contains("store_lines_unread").any()
    base = RUNS / "phases" / "1c-epoch" / "1800_1400"
    run = recorded_run(read_stats(stats_file(base)), read_config(base / "config.ini"), specs)
    table = whatif(run, pd.DataFrame({"big_freq_mhz": [1800.0, 1000.0], "little_freq_mhz": [1400.0, 1400.0]}))
    above = table["energy_j_whatif_hi"] / table["energy_j"] - 1
    assert above.iloc[0] < 0.02 and above.iloc[1] > 0.2


# --- gem5's ex5_big, one busy CPU of four (xu3-mibench-train) ------------------------------------------------------


def _gem5_runtime_s(run) -> float:
    """simSeconds of a one-dump gem5 run: gem5's own figure."""
    with open(run / "stats.txt") as f:
        return next(float(line.split()[1]) for line in f if line.startswith("simSeconds"))


@needs_shared
def test_a_store_stream_on_ex5_big_is_a_floor_of_its_store_misses():
    """consumer_tiff2rgba writes its image a line at a time (16 stores a line, a 16-entry store queue: one line in
    flight), so each line costs its store miss and a few core cycles at every clock.  By hand from gem5's stats at
    1000 MHz: 119,412 store misses (l2.ReadExReq) with 11.81 ms of latency in a 15.54 ms run, 130 ns a line = 99 ns of
    miss + 31 cycles; gem5's runtimes, 15.54 ms at 1000 and 11.13 ms at 2000 MHz, give a fixed part a = 2 * 11.13 -
    15.54 = 6.72 ms, the store misses' latency less their L2's 42 cycles (119,412 * (98.9 - 42) ns = 6.79 ms).  The
    what-if from 1000 at 2000 MHz was -28.2 % (its memory time split among four CPUs, one of which ran) and -25.5 %
    (among the one, without the floor)."""
    base, other = XU3 / "consumer_tiff2rgba" / "1000MHz", XU3 / "consumer_tiff2rgba" / "2000MHz"
    fixed_s = 2 * _gem5_runtime_s(other) - _gem5_runtime_s(base)
    assert fixed_s == pytest.approx(119_412 * (98.88e-9 - 42e-9), rel=0.02)
    row = compare(base, other, clusters=SE_CLUSTERS)
    assert abs(row["runtime_s"]) < 2 and abs(row["energy_j"]) < 2, row


@needs_shared
def test_stalls_with_no_miss_behind_them_are_core_time():
    """telecom_gsm's load queue is full for 3.30 M cycles at 1000 and at 2000 MHz (gem5's rename.LQFullEvents: the
    same cycles, so core time) with 995 L2 read misses; gem5's runtime halves with the clock (15.47 -> 7.75 ms).  Read
    as memory time it put the what-if +22.2 % off from 1000 at 2000 MHz; memory time is now at most the misses'
    summed latency."""
    base, other = XU3 / "telecom_gsm" / "1000MHz", XU3 / "telecom_gsm" / "2000MHz"
    assert _gem5_runtime_s(base) / _gem5_runtime_s(other) == pytest.approx(2.0, rel=0.01)
    row = compare(base, other, clusters=SE_CLUSTERS)
    assert abs(row["runtime_s"]) < 1 and abs(row["energy_j"]) < 1, row


def test_stats_cut_to_fewer_than_the_whatif_reads_are_flagged_and_widen_the_interval(tmp_path):
    """The explore grid's recording keeps the stats an older cosim read (no commit counts, no L1 miss latency): the
    rows say so, and a cluster's time spans unmoved to 1/f where its clock moves (gem5's runtime there: inside)."""
    import tarfile

    from whatif_pairs import GRID

    with tarfile.open(GRID) as tar:
        tar.extractall(tmp_path, filter="data")
    runs = {}
    for run in (p for p in tmp_path.iterdir() if p.is_dir()):
        config = read_config(run / "config.ini")
        big, little = (config.cluster(n, p) for n, p, _ in CLUSTERS)
        if big.n_cpus == 1 and 262144 in big.cache_bytes.values():
            runs[round(big.freq_mhz, -2), round(little.freq_mhz, -2)] = run
    base, other = runs[1400.0, 600.0], runs[1400.0, 1400.0]
    row = compare(base, other)
    assert {"memory_stats_unread:big", "memory_stats_unread:little"} <= set(row["flags"].split(";"))
    assert row["runtime_s_covered"] and abs(row["runtime_s"]) > 5  # the point is off (-17.6 %), the interval says so
    suite = compare(RUNS / "phases" / "1c-epoch" / "1000_600", RUNS / "phases" / "1c-epoch" / "1800_1400")
    assert "memory_stats_unread" not in suite["flags"]
