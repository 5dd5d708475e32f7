"""The DVFS what-if against gem5 itself: the recorded workload suite (tests/data/whatif_suite, made by
``python tests/whatif_suite.py record``) and a private-L2 system run here in the bundled gem5."""

from __future__ import annotations

import subprocess

import pandas as pd
import pytest
from helpers import GEM5, REPO, needs_gem5
from whatif_pairs import CLUSTERS, SE_MINOR_CLUSTERS, compare, suite_rows, summary
from whatif_suite import APART_PAIRS, PAIRS, PROGRAMS, RUNS, SE_CLOCKS, SE_MINOR_CLOCKS, SE_PROGRAMS

from cosim import ClusterSpec, load_model, read_config, read_stats
from cosim.dse.whatif import recorded_run, whatif
from cosim.readers.gem5_stats import stats_file


@pytest.fixture(scope="module")
def suite() -> pd.DataFrame:
    return pd.concat([suite_rows(RUNS, "1c-epoch"), suite_rows(RUNS, "1c-one")], ignore_index=True)


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


def test_suite_errors_and_interval_coverage(suite):
    """Every ordered pair of every program at 1+1 cores (108): runtime and energy against gem5 at those clocks, as
    measured (docs/explanation/whatif.md: worst -8.4 % runtime, -6.4 % energy, stream with one dump from 1800/1400
    down to 1000/600 MHz; +8.4 % / +5.1 % on stream's initialisation with 100 us dumps before a Minor CPU's load waits
    hid only the store misses its memory slots left room for; -11.5 % / -9.1 % on mixed's store drains before a Minor
    CPU's store misses became a floor), and the interval holds gem5's value on at least 90 % of the pairs."""
    head = summary(suite)
    assert head["pairs"] == 9 * 6 * 2
    assert suite["runtime_s"].abs().max() < 9 and suite["energy_j"].abs().max() < 7
    assert head["runtime_s_within_5"] >= 103 and head["energy_j_within_5"] >= 107
    # measured: coverage 100 % / 100 %, mean half-width 8.8 % / 7.2 %; at least 90 % with each kind of dump too
    assert head["runtime_s_coverage"] >= 0.95 and head["energy_j_coverage"] >= 0.95
    assert head["runtime_s_mean_width"] < 9.5 and head["energy_j_mean_width"] < 8  # an interval that says something
    for setup in ("1c-epoch", "1c-one"):
        part = summary(suite[suite["setup"] == setup])
        assert part["runtime_s_coverage"] >= 0.9 and part["energy_j_coverage"] >= 0.9
    compute = suite[suite["program"].isin(["int_compute", "fp_compute", "branchy"])]
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
    """mixed's next_idx loop (a store every 16 bytes, 20 instructions a line) on the LITTLE (Minor) CPU: gem5 takes
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
    assert abs(row["runtime_s"]) < 5 and row["runtime_s_covered"], row
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


@pytest.mark.parametrize(
    ("setup", "runtime_within_5", "energy_within_5", "worst_runtime", "worst_energy"),
    [
        ("2c-epoch", 53, 48, 6.5, 7.0),  # measured: worst -6.0 % runtime, -6.8 % energy (ptrchase; mixed was -13.0 %)
        # measured: worst -8.5 % runtime, -5.2 % energy (ptrchase 1000/600 -> 1800/1400: its Minor cores' stalled
        # cycles count since the cycle rule of 0.3.6, -4.9 % before; mixed was -7.9 %)
        ("2c-one", 51, 49, 9.0, 5.5),
    ],
)
def test_two_plus_two_cores_held_out(setup, runtime_within_5, energy_within_5, worst_runtime, worst_energy):
    """2 O3 + 2 Minor CPUs with 100 us dumps and with one dump: 54 ordered pairs each, errors as measured (but for
    phases across gem5's store-miss switch, below) and gem5's value inside the interval on at least 90 % of them
    (measured: 100 % / 100 % both)."""
    rows = suite_rows(RUNS, setup)
    assert len(rows) == 54
    ours = rows[rows["program"] != "phases"]
    assert ours["runtime_s"].abs().max() < worst_runtime and ours["energy_j"].abs().max() < worst_energy
    assert (rows["runtime_s"].abs() <= 5).sum() >= runtime_within_5 and (rows["energy_j"].abs() <= 5).sum() >= energy_within_5
    assert rows["runtime_s_covered"].mean() >= 0.9 and rows["energy_j_covered"].mean() >= 0.9


@pytest.fixture(scope="module")
def apart() -> pd.DataFrame:
    return suite_rows(RUNS, "1c-apart")


def test_clocks_moved_apart(apart):
    """The 1c-apart set-up: the clusters' clocks moved apart (1800/600 and 1000/1400 MHz, 1+1 cores, 100 us dumps),
    as a DVFS grid prices them, predicted from and to the 1c-epoch runs: 14 ordered pairs a program, 126.  Measured:
    runtime within 5 % on 119, energy on 122 (124 before 0.3.6's cycle rule: stream's Minor core stalls, and its
    stalled cycles now cost energy, so the runtime error of +6.9 % reaches its energy), worst +7.0 % / -5.7 %
    (stream); the interval holds gem5's runtime on 95.2 % and its energy on 99.2 % (the compute programs at
    1000/1400 MHz, where the big cluster ends the run, miss by about 2 %)."""
    assert len(apart) == 9 * 14
    head = summary(apart)
    assert head["runtime_s_within_5"] >= 119 and head["energy_j_within_5"] >= 122
    assert apart["runtime_s"].abs().max() < 7.5 and apart["energy_j"].abs().max() < 6
    assert head["runtime_s_coverage"] >= 0.9 and head["energy_j_coverage"] >= 0.9


def test_the_interval_covers_gem5s_store_miss_switch():
    """gem5's own phases program on big.LITTLE: at 1800 MHz the big (O3) cluster writes nine tenths of its store-miss
    lines whole (InvalidateReq, no fetch), at 1400 and 1000 MHz a third on 1+1 cores and half on 2+2, so its own
    finish moves far more than the clock explains (measured: up to +27.9 % / -21.5 % off on 1+1 cores, +77.6 % /
    -38.7 % on 2+2, where the L2's prefetcher no longer covers the fetches) and its cycles' energy with it (up to
    +16.0 %).  The LITTLE ends the run.  Every ordered pair of every big.LITTLE set-up (38) holds gem5's runtime and
    energy inside the interval (and the 12 of se.py's one O3 CPU, below); before the whole-line reading, the energy
    left it on 12 of the 38 (-4.7 % against +-2.7 % from 1800/600 at 1000/600 MHz)."""
    rows = pd.concat([suite_rows(RUNS, s) for s in ("1c-epoch", "1c-one", "2c-epoch", "2c-one", "1c-apart")], ignore_index=True)
    phases = rows[rows["program"] == "phases"]
    assert len(phases) == 4 * 6 + 14 and phases["big_runtime_s"].abs().max() > 20  # the switch is in the data
    assert phases["runtime_s_covered"].all() and phases["energy_j_covered"].all()
    specs = [ClusterSpec(n, p, load_model(m)) for n, p, m in CLUSTERS]
    readings = {}
    for program in ("phases", "stream"):
        base = RUNS / program / "1c-epoch" / "1800_1400"
        readings[program] = recorded_run(read_stats(stats_file(base)), read_config(base / "config.ini"), specs).clusters[0].whole_line_s
    assert readings["phases"][0].sum() > 1e-3  # 29,282 lines written whole at 1800 MHz: each may be fetched at 1000
    assert readings["stream"][0].sum() < 1e-5 and readings["stream"][1].sum() == 0  # its stores never go whole
    assert not phases["flags"].str.contains("store_lines_unread").any()
    # the reading grows with the clock's move: none at the run's own clock (1800 MHz is 1798.56 in gem5's ticks: a
    # new user's trial found the full reading there), all of it from a quarter's move
    base = RUNS / "phases" / "1c-epoch" / "1800_1400"
    run = recorded_run(read_stats(stats_file(base)), read_config(base / "config.ini"), specs)
    table = whatif(run, pd.DataFrame({"big_freq_mhz": [1800.0, 1000.0], "little_freq_mhz": [1400.0, 1400.0]}))
    above = table["energy_j_whatif_hi"] / table["energy_j"] - 1
    assert above.iloc[0] < 0.02 and above.iloc[1] > 0.2


def test_peak_power_follows_each_cluster_at_its_own_pace(suite, apart):
    """gem5's highest dump power at the new clocks, on every set-up with 100 us dumps (234 pairs): within 5 % on 209,
    worst -15.4 % (l2_fit on 2+2 cores); the 26 of phases, across gem5's store-miss switch, on 15 (worst -12.9 %).
    Stretching each recorded epoch to its slowest cluster's time, as the what-if did, diluted the faster cluster's
    power: on the other 208 within 5 % on 38, worst +81.9 %."""
    rows = pd.concat([suite[suite["setup"] == "1c-epoch"], suite_rows(RUNS, "2c-epoch"), apart], ignore_index=True)
    assert len(rows) == 54 + 54 + 126
    assert (rows["peak_power_w"].abs() <= 5).sum() >= 209 and rows["peak_power_w"].abs().max() < 16


def test_gem5s_own_se_py_with_one_o3_cpu():
    """The se-one set-up: gem5's deprecated example se.py as a user first runs it (one O3 CPU, --caches --l2cache,
    one dump at exit) at 1000, 1400, 1800 and 2000 MHz (its default), 9 programs (the suite and gem5's phases), 108
    ordered pairs.  Measured: runtime within 5 % on 97, energy on 103; worst -10.9 % / -7.7 % (stream, whose DRAM
    latency gem5 changes with the clock: 120 ns a read at 1000 MHz, 137-143 ns above); the interval holds gem5's
    value on 94.4 % / 94.4 %.  Before the store misses' L2 cycles were put on the clock and idle waits were taken out
    of the read-miss sum: within 5 % on 78 / 99, worst +16.0 % (mixed, 1000 -> 2000 MHz), coverage 71 % / 86 %."""
    rows = suite_rows(RUNS, "se-one")
    assert len(rows) == 9 * 4 * 3
    head = summary(rows)
    assert head["runtime_s_within_5"] >= 97 and head["energy_j_within_5"] >= 103
    assert rows["runtime_s"].abs().max() < 11.5 and rows["energy_j"].abs().max() < 8
    assert head["runtime_s_coverage"] >= 0.9 and head["energy_j_coverage"] >= 0.9
    assert head["runtime_s_mean_width"] < 6.5 and head["energy_j_mean_width"] < 4
    # gem5's own default on its own program: phases at 2 GHz predicted at 1000 and 1400 MHz (it was -8.0 / -5.1 %,
    # outside the interval: the store-miss switch), and back
    phases = rows[(rows["program"] == "phases") & ((rows["from"] == "2000") | (rows["to"] == "2000 MHz"))]
    assert len(phases) == 6 and phases["runtime_s"].abs().max() < 6.6 and phases["energy_j"].abs().max() < 3.5
    stream = rows["program"] == "stream"
    assert rows.loc[~stream, "runtime_s"].abs().max() < 6.6 and rows.loc[~stream, "energy_j"].abs().max() < 3.5


def test_gem5s_own_se_py_with_one_minor_cpu():
    """The se-minor set-up: se.py as a user of the in-order CPU runs it (one Minor CPU, --caches --l2cache, one
    dump) at 600, 1000 and 1400 MHz, 9 programs, 54 ordered pairs.  Measured: runtime within 5 % on 52, energy on
    52; worst -7.6 % / -6.3 % (stream); the interval holds gem5's value on 100 % / 98.1 %, mean half-width 12.7 % /
    6.2 %.  Since 0.3.6's cycle rule a Minor core's stalled cycles cost energy, so stream's runtime error (-7.6 %,
    1400 -> 600 MHz) reaches its energy (-6.3 %; 54 within 5 %, worst +3.7 % before).  Before a Minor CPU's store misses overlapped as its memory slots allow and hid under only the load waits
    that leave a slot free: 46 and 52 within 5 %, worst +15.8 % / +10.3 % (stream from 600 to 1400 MHz, where the
    floor was 0 and its drains, 7.08 ms at 600 MHz, were held as recorded) and -13.4 % (ptrchase, 1400 -> 600 MHz)."""
    rows = suite_rows(RUNS, "se-minor")
    assert len(rows) == 9 * 3 * 2
    head = summary(rows)
    assert head["runtime_s_within_5"] >= 52 and head["energy_j_within_5"] >= 52
    assert rows["runtime_s"].abs().max() < 8 and rows["energy_j"].abs().max() < 7
    assert head["runtime_s_coverage"] >= 0.9 and head["energy_j_coverage"] >= 0.9
    assert head["runtime_s_mean_width"] < 13 and head["energy_j_mean_width"] < 8.5
    # stream, 600 -> 1400 MHz: outside the interval until the drains' store L2 cycles were read on the clock
    stream = rows[(rows["program"] == "stream") & (rows["from"] == "600") & (rows["to"] == "1400 MHz")].iloc[0]
    assert stream["runtime_s_covered"] and stream["energy_j_covered"] and abs(stream["runtime_s"]) < 6
    compute = rows[rows["program"].isin(["int_compute", "fp_compute"])]
    assert compute["runtime_s"].abs().max() < 0.5 and compute["energy_j"].abs().max() < 0.5
