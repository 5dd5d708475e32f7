"""``cosim validate``: board rows, gem5 rows and their comparison, against hand computations on the measured files."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from pathlib import Path

import pytest
from helpers import REPO, SHARED, needs_shared, run_cosim

from cosim.errors import CosimError, CosimWarning
from cosim.validate import compare, read_board, read_split
from cosim.validate.board import BoardRow
from cosim.validate.sim import SimRow, find_runs, read_sim

ARMPM = SHARED / "data" / "armpm"
CBENCH = ARMPM / "Concatenated_Data" / "cBench" / "xu3_cset_perfcpu_cBench_eMMC_big.data"
XU3_RUNS = SHARED / "data" / "gem5" / "xu3-mibench-train"

_HEADER = "#Timestamp\tBenchmark\tRun(#)\tCPU(4) Frequency(MHz)\tA15 Voltage(V)\tA15 Power(W)\tCPU_CYCLES\tINST_RETIRED\tL1D_CACHE_ACCESS"


def _armpm_log(path: Path, lines: list[tuple]) -> Path:
    path.write_text(_HEADER + "\n" + "\n".join("\t".join(str(c) for c in line) for line in lines) + "\n")
    return path


def test_board_skips_each_runs_first_sample_also_at_a_new_clock(tmp_path):
    # one run of "prog" at 2000 MHz then 1000 MHz (as ARMPM logs it: Run(#) stays 1 across clocks)
    log = _armpm_log(
        tmp_path / "log.data",
        [
            (0, "prog", 1, 2000, 1.3, 9.0, 400, 100, 10),  # first of its stretch: skipped (partial counts)
            (500_000_000, "prog", 1, 2000, 1.3, 2.0, 1000, 1500, 300),
            (1_000_000_000, "prog", 1, 2000, 1.3, 2.2, 1000, 1300, 200),
            (9_000_000_000, "prog", 1, 1000, 0.9, 7.0, 300, 100, 10),  # first at the new clock: skipped too
            (9_500_000_000, "prog", 1, 1000, 0.9, 0.5, 500, 600, 50),
        ],
    )
    rows, label = read_board(log)
    assert label == "A15"
    fast, slow = rows[("prog", 2000.0)], rows[("prog", 1000.0)]
    assert (fast.samples, slow.samples) == (2, 1)
    assert fast.ipc == pytest.approx((1500 + 1300) / (1000 + 1000))
    assert fast.power_w == pytest.approx((2.0 + 2.2) / 2)
    assert fast.per_cycle("0x04") == pytest.approx(500 / 2000)
    assert fast.per_s("0x11") == pytest.approx(2000 / 1.0)  # two 0.5 s intervals
    assert slow.ipc == pytest.approx(600 / 500) and slow.power_w == pytest.approx(0.5)
    assert slow.per_s("0x11") == pytest.approx(500 / 0.5)  # not over the 8 s gap between the clocks


def test_board_voltage_is_power_over_current_where_it_lies_in_the_logged_tenth(tmp_path):
    header = _HEADER.replace("A15 Power(W)", "A15 Current(A)\tA15 Power(W)")
    lines = [
        (0, "prog", 1, 1000, 0.9, 0.600, 0.586, 500, 600, 50),  # first: skipped
        (500_000_000, "prog", 1, 1000, 0.9, 0.600, 0.586, 500, 600, 50),  # 0.586 / 0.600 = 0.9767 V, in 0.9's tenth
        (1_000_000_000, "prog", 1, 1000, 0.9, 0.100, 0.586, 500, 600, 50),  # 5.86 V: not in 0.9's tenth, 0.9 kept
    ]
    log = tmp_path / "log.data"
    log.write_text(header + "\n" + "\n".join("\t".join(str(c) for c in line) for line in lines) + "\n")
    (row,) = read_board(log)[0].values()
    assert row.voltage_v == pytest.approx((0.586 / 0.600 + 0.9) / 2)


def test_board_refuses_a_log_out_of_order_naming_the_line(tmp_path):
    log = _armpm_log(
        tmp_path / "log.data",
        [(10, "prog", 1, 1000, 0.9, 0.5, 500, 600, 50), (5, "prog", 1, 1000, 0.9, 0.5, 500, 600, 50)],
    )
    with pytest.raises(CosimError, match=r"log\.data:3: timestamp"):
        read_board(log)


def test_board_refuses_a_file_of_neither_format(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(CosimError, match="neither an ARMPM log"):
        read_board(path)


def _model_power_w(eph: dict[str, float], f_mhz: float, v: float) -> float:
    """Walker et al. Eq. 2's dynamic terms and the file's static form a*f*V^2 + b*V*e^(k(V - 1)), written out from the
    model file's coefficients (the form is within 2 % of the published polynomial at the table's points,
    tests/test_operating_point.py)."""
    data = json.loads((REPO / "models" / "cortex-a15-gemstone2018.json").read_text())
    dyn = sum(t["coefficient"] * sum(w * eph[e] for e, w in t["events"].items()) * v**2 * f_mhz for t in data["dynamic_terms"])
    form = data["static_form"]
    static = form["a_w_per_mhz_v2"] * f_mhz * v**2 + form["b_w_per_v"] * v * math.exp(form["k_per_v"] * (v - 1))
    return dyn + static


def test_compare_decomposes_power_and_energy_errors_by_hand():
    # a board row at 1000 MHz: 1 s of one busy core, 0.9e9 cycles, 1.2e9 instructions, 0.3e9 L1D accesses
    board = BoardRow(
        program="prog", clock_mhz=1000.0, samples=7, runs=2, power_w=0.6, voltage_v=0.9, duration_s=1.0,
        counts={"0x11": 0.9e9, "0x08": 1.2e9, "0x04": 0.3e9},
    )  # fmt: skip
    sim_counts = {"0x11": 1e6, "0x08": 1.0e6, "0x04": 0.25e6, "0x14": 0.3e6, "0x1b": 1.4e6, "0x73": 1.1e6, "0x43": 1e3, "0x16": 2e3}
    sim = SimRow(program="prog", clock_mhz=1000.0, folder=Path("runs/prog/1000MHz"), model="cortex-a15-gemstone2018",
                 counts=sim_counts, power_w=0.66, voltage_v=0.954)  # fmt: skip
    result = compare({("prog", 1000.0): board}, [sim], excluded={})
    (row,) = result.rows
    assert row["ipc_board"] == pytest.approx(1.2 / 0.9) and row["ipc_gem5"] == pytest.approx(1.0)
    assert row["power_err_pct"] == pytest.approx((0.66 / 0.6 - 1) * 100)
    epi_b = 0.6 / (1.2 / 0.9 * 1000e6) * 1e9  # J per instruction -> nJ
    epi_g = 0.66 / (1.0 * 1000e6) * 1e9
    assert row["epi_board_nj"] == pytest.approx(epi_b) and row["epi_gem5_nj"] == pytest.approx(epi_g)
    assert row["epi_err_pct"] == pytest.approx((epi_g / epi_b - 1) * 100)
    # EPI's error is the power error times the IPC error: (1 + e_epi) = (1 + e_power)(1 + e_from_ipc)
    assert 1 + row["epi_err_pct"] / 100 == pytest.approx((1 + row["power_err_pct"] / 100) * (1 + row["epi_err_from_ipc_pct"] / 100))
    assert row["epi_err_from_ipc_pct"] == pytest.approx((1.2 / 0.9 / 1.0 - 1) * 100)
    # the model on the board's rates: EPH = count / s / 4 cores / MHz; an event the board lacks takes gem5's count
    # per instruction times the board's instructions
    e08 = 1.2e9 / 4 / 1000
    eph = {"0x11": 0.9e9 / 4 / 1000, "0x04": 0.3e9 / 4 / 1000}
    eph |= {e: sim_counts[e] / sim_counts["0x08"] * e08 for e in ("0x14", "0x1b", "0x73", "0x43", "0x16")}
    assert row["power_model_board_w"] == pytest.approx(_model_power_w(eph, 1000.0, 0.954), rel=1e-9)
    assert row["events_cost_w"] == pytest.approx(0.66 - row["power_model_board_w"])
    assert row["model_err_w"] == pytest.approx(row["power_model_board_w"] - 0.6)
    assert row["rate_0x04_board"] == pytest.approx(0.3 / 0.9) and row["rate_0x04_gem5"] == pytest.approx(0.25)
    assert "board_lacks:0x1b" in row["flags"] and "board_lacks:0x04" not in row["flags"]
    assert row["board_samples"] == 7


def test_events_cost_splits_into_cycles_counted_and_uncounted_events_that_add_up():
    board = BoardRow(
        program="prog", clock_mhz=1000.0, samples=7, runs=2, power_w=0.6, voltage_v=0.977, duration_s=1.0,
        counts={"0x11": 0.9e9, "0x08": 1.2e9, "0x04": 0.3e9},
    )  # fmt: skip
    sim_counts = {"0x11": 1e6, "0x08": 1.0e6, "0x04": 0.25e6, "0x14": 0.3e6, "0x1b": 1.4e6, "0x73": 1.1e6, "0x43": 1e3, "0x16": 2e3}
    # gem5's cluster inputs: its busy core clocked all the time, 1e9 cycles/s over 4 cores at 1000 MHz
    gem5_eph = {e: n / sim_counts["0x11"] * 1e9 / 4 / 1000 for e, n in sim_counts.items() if e != "0x08"}
    sim = SimRow(program="prog", clock_mhz=1000.0, folder=Path("runs/prog/1000MHz"), model="cortex-a15-gemstone2018",
                 counts=sim_counts, power_w=_model_power_w(gem5_eph, 1000.0, 0.954), voltage_v=0.954, eph=gem5_eph)  # fmt: skip
    (row,) = compare({("prog", 1000.0): board}, [sim], excluded={}).rows
    e08 = 1.2e9 / 4 / 1000
    eph = {"0x11": 0.9e9 / 4 / 1000, "0x04": 0.3e9 / 4 / 1000}
    eph |= {e: sim_counts[e] / sim_counts["0x08"] * e08 for e in ("0x14", "0x1b", "0x73", "0x43", "0x16")}
    p_board_rates = _model_power_w(eph, 1000.0, 0.954)
    p_cycles = _model_power_w(eph | {"0x11": gem5_eph["0x11"]}, 1000.0, 0.954)
    p_counted = _model_power_w(eph | {"0x11": gem5_eph["0x11"], "0x04": gem5_eph["0x04"]}, 1000.0, 0.954)
    assert row["events_cost_cycles_w"] == pytest.approx(p_cycles - p_board_rates, rel=1e-9)
    assert row["events_cost_counted_w"] == pytest.approx(p_counted - p_cycles, rel=1e-9)
    assert row["events_cost_uncounted_w"] == pytest.approx(sim.power_w - p_counted, rel=1e-9)
    parts = row["events_cost_cycles_w"] + row["events_cost_counted_w"] + row["events_cost_uncounted_w"]
    assert parts == pytest.approx(row["events_cost_w"], rel=1e-9)


def _board(program: str, clock: float) -> BoardRow:
    return BoardRow(program=program, clock_mhz=clock, samples=3, runs=1, power_w=1.0, voltage_v=1.0, duration_s=1.0,
                    counts={"0x11": 1e9, "0x08": 1e9})  # fmt: skip


def _sim(program: str, clock: float) -> SimRow:
    return SimRow(program=program, clock_mhz=clock, folder=Path(f"runs/{program}/{clock:g}MHz"), model="cortex-a15-gemstone2018",
                  counts={"0x11": 1e6, "0x08": 1e6}, not_priced="refused")  # fmt: skip


def test_one_side_only_programs_and_clocks_get_one_line_each_and_exclusions_are_named():
    board = {(p, c): _board(p, c) for p, c in [("both", 1000.0), ("both", 2000.0), ("boardonly", 1000.0), ("io", 1000.0)]}
    sims = [_sim("both", 1000.0), _sim("both", 1499.25), _sim("gem5only", 1000.0), _sim("io", 1000.0)]
    result = compare(board, sims, excluded={"io": "I/O-bound"})
    assert [(r["program"], r["clock_mhz"]) for r in result.rows] == [("both", 1000.0)]
    assert len(result.one_side) == 4
    text = "\n".join(result.one_side)
    assert "both at 1499.25 MHz: gem5 only" in text and "board ran it at 1000, 2000 MHz" in text
    assert "gem5only at 1000 MHz: gem5 only" in text and "no such program" in text
    assert "boardonly at 1000 MHz: board only (3 samples)" in text
    assert "both at 2000 MHz: board only" in text
    assert result.excluded == ["io at 1000 MHz (3 board samples): excluded, I/O-bound"]


def test_gem5_clock_rounded_by_ticks_pairs_with_the_board_clock():
    result = compare({("p", 1500.0): _board("p", 1500.0)}, [_sim("p", 1499.25)], excluded={})
    assert [r["gem5_clock_mhz"] for r in result.rows] == [1499.25] and not result.one_side


def test_split_file_is_read_as_train_and_test(tmp_path):
    path = tmp_path / "split.data"
    path.write_text("#Train Benchmarks\tTest Benchmarks\ntelecom_CRC32\tconsumer_jpeg_d\nbzip2d\tnetwork_dijkstra\n")
    assert read_split(path) == {"telecom_CRC32": "train", "consumer_jpeg_d": "test", "bzip2d": "train", "network_dijkstra": "test"}


@pytest.mark.parametrize("option", ["-o", "--plot"])
def test_cli_refuses_an_output_that_names_the_measured_file(tmp_path, option):
    log = _armpm_log(tmp_path / "log.data", [(0, "prog", 1, 1000, 0.9, 0.5, 500, 600, 50)])
    before = log.read_bytes()
    runs = tmp_path / "runs"
    runs.mkdir()
    result = run_cosim("validate", log, runs, option, log)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "never writes over its inputs" in result.stderr
    assert log.read_bytes() == before


def test_cli_refuses_an_output_over_a_gem5_run_file_under_runs(tmp_path):
    log = _armpm_log(tmp_path / "log.data", [(0, "prog", 1, 1000, 0.9, 0.5, 500, 600, 50)])
    run = tmp_path / "runs" / "prog" / "1000MHz"
    run.mkdir(parents=True)
    (run / "stats.txt").write_text("x\n")
    result = run_cosim("validate", log, tmp_path / "runs", "-o", run / "stats.txt")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "gem5 run file" in result.stderr
    assert (run / "stats.txt").read_text() == "x\n"


def test_find_runs_refuses_a_folder_without_runs(tmp_path):
    with pytest.raises(CosimError, match="no stats.txt under it"):
        find_runs(tmp_path)


def test_find_runs_says_one_run_needs_a_program_folder(tmp_path):
    """A user's first try: one gem5 output folder, which names no program the board's data could match."""
    (tmp_path / "stats.txt").write_text("x\n")
    with pytest.raises(CosimError, match=r"one gem5 run, named by no program; put it in a folder of runs as RUNS/PROGRAM/CLOCK"):
        find_runs(tmp_path)


# --- on the real data in ../shared ---------------------------------------------------------------------------


def _raw_armpm(program: str, clock: int) -> list[dict]:
    """The log's samples of ``program`` at ``clock``, each run's first sample at that clock left out (by hand)."""
    kept, previous = [], None
    with open(CBENCH, newline="") as f:
        for rec in csv.DictReader(f, delimiter="\t"):
            key = (rec["Benchmark"], rec["Run(#)"], rec["CPU(4) Frequency(MHz)"])
            if key == (program, rec["Run(#)"], str(clock)) and key == previous:
                kept.append(rec)
            previous = key
    return kept


@needs_shared
def test_real_armpm_row_matches_the_raw_samples():
    rows, _ = read_board(CBENCH)
    raw = _raw_armpm("security_sha", 1000)
    row = rows[("security_sha", 1000.0)]
    assert row.samples == len(raw) == 141
    assert row.ipc == pytest.approx(sum(float(r["INST_RETIRED"]) for r in raw) / sum(float(r["CPU_CYCLES"]) for r in raw))
    assert row.power_w == pytest.approx(sum(float(r["A15 Power(W)"]) for r in raw) / len(raw))
    assert row.per_cycle("0x04") == pytest.approx(sum(float(r["L1D_CACHE_ACCESS"]) for r in raw) / sum(float(r["CPU_CYCLES"]) for r in raw))
    # the log's voltage column reads 0.9 (cut to 0.1 V); the sensor's power / current is the rail's voltage
    assert {float(r["A15 Voltage(V)"]) for r in raw} == {0.9}
    sensed = [float(r["A15 Power(W)"]) / float(r["A15 Current(A)"]) for r in raw]
    assert row.voltage_v == pytest.approx(sum(sensed) / len(sensed)) and 0.97 < row.voltage_v < 0.99


def _stat(path: Path, name: str) -> float:
    for line in path.read_text().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(name)


@needs_shared
def test_real_gem5_row_reads_the_busy_core_as_gem5_counts_it():
    folder = XU3_RUNS / "security_sha" / "1000MHz"
    row = read_sim("security_sha", folder, events=("0x04",))
    stats = folder / "stats.txt"
    insts = _stat(stats, "system.cpu0.commitStats0.numInsts")
    cycles = _stat(stats, "system.cpu0.numCycles")
    # cpu0 is the busy core; its idle cycles are 0.3 % of numCycles, so either reading of CPU_CYCLES is within 0.5 %
    assert row.ipc == pytest.approx(insts / cycles, rel=5e-3)
    assert row.per_cycle("0x04") == pytest.approx(_stat(stats, "system.cpu0.dcache.overallAccesses::total") / cycles, rel=5e-3)
    assert row.clock_mhz == 1000.0


@needs_shared
def test_real_validate_names_the_io_bound_program_and_one_side_programs(tmp_path):
    runs = tmp_path / "runs"
    (runs / "made_up_program").mkdir(parents=True)
    (runs / "made_up_program" / "1000MHz").symlink_to(XU3_RUNS / "security_sha" / "1000MHz")
    (runs / "security_sha").mkdir()
    (runs / "security_sha" / "1000MHz").symlink_to(XU3_RUNS / "security_sha" / "1000MHz")
    out = tmp_path / "v.csv"
    result = run_cosim("validate", CBENCH, runs, "-o", out, "--allow-partial")
    assert result.returncode == 0, result.stderr
    assert "made_up_program at 1000 MHz: gem5 only" in result.stdout
    assert "telecom_CRC32 at 1000, 1500, 2000 MHz" in result.stdout and "I/O-bound" in result.stdout
    assert "security_sha at 1500, 2000 MHz: board only" in result.stdout
    with open(out, newline="") as f:
        (row,) = list(csv.DictReader(f))
    assert row["program"] == "security_sha" and int(row["board_samples"]) == len(_raw_armpm("security_sha", 1000))
    assert math.isclose(float(row["power_board_w"]), sum(float(r["A15 Power(W)"]) for r in _raw_armpm("security_sha", 1000)) / 141)


RECORDED = REPO / "docs" / "explanation" / "silicon" / "xu3-a15-mibench-train.csv"


def test_docs_silicon_table_is_made_from_the_recorded_results_and_skipped_without_them(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "docs"))
    from _silicon import silicon_table

    text = silicon_table(RECORDED)
    with open(RECORDED, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [line.split(" | ")[0] for line in text.splitlines()[2 : 2 + len(rows)]] == [f"| {r['program']}" for r in rows]
    mape = sum(abs(float(r["power_err_pct"])) for r in rows) / len(rows)
    assert f"power MAPE {mape:.1f} %" in text
    assert "not here" in silicon_table(tmp_path / "absent.csv")


@needs_shared
def test_recorded_results_are_what_the_code_gives_today(tmp_path):
    """The docs' recorded rows of one program, recomputed: a change to the pricing must regenerate the file."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "security_sha").symlink_to(XU3_RUNS / "security_sha")
    out = tmp_path / "v.csv"
    result = run_cosim("validate", CBENCH, runs, "-o", out)
    assert result.returncode == 0, result.stderr
    with open(out, newline="") as f:
        now = {r["clock_mhz"]: r for r in csv.DictReader(f)}
    with open(RECORDED, newline="") as f:
        recorded = {r["clock_mhz"]: r for r in csv.DictReader(f) if r["program"] == "security_sha"}
    assert set(now) == set(recorded) == {"1000", "1500", "2000"}
    for clock, row in now.items():
        for key in ("power_gem5_w", "power_board_w", "ipc_gem5", "ipc_board", "power_model_board_w", "board_samples"):
            assert float(row[key]) == pytest.approx(float(recorded[clock][key]), rel=1e-6), (clock, key)


def test_an_explore_study_names_each_point_by_its_workloads_program(tmp_path):
    study = tmp_path / "study"
    for point, params, command in [
        ("aaa", {"--cpu-clock": "1GHz", "workload": "bin/security_sha.arm input_small.asc"}, "gem5 se.py -- x"),
        ("bbb", {"--cpu-clock": "2GHz"}, "# run in this folder\ngem5 se.py --cpu-clock 2GHz -- ../bin/telecom_gsm -fps"),
    ]:
        folder = study / "points" / point
        folder.mkdir(parents=True)
        (folder / "params.json").write_text(json.dumps(params))
        (folder / "command.txt").write_text(command + "\n")
        (folder / "stats.txt").write_text("x\n")
    (study / "points" / ".ccc.part-3").mkdir()  # a point still running: not a run yet
    (study / "study.journal").write_text("")
    assert find_runs(study) == [("security_sha", study / "points" / "aaa"), ("telecom_gsm", study / "points" / "bbb")]


@needs_shared
def test_real_powmon_rows_are_its_one_thread_rows():
    from helpers import POWMON

    rows, label = read_board(POWMON)
    with open(POWMON, newline="") as f:
        raw = [r for r in csv.DictReader(f, delimiter="\t") if r["Workload Name"] == "susan" and float(r["Frequency A15"]) == 1000]
    one = [r for r in raw if ":" not in r["Core Mask"]]
    assert label == "A15" and len(one) < len(raw)  # the 2-4 thread rows are left out
    row = rows[("susan", 1000.0)]
    assert row.power_w == pytest.approx(sum(float(r["Power A15"]) for r in one) / len(one))
    cycles = sum(float(r["Average A15 CycleCount"]) for r in one)
    assert row.per_cycle("0x1b") == pytest.approx(sum(float(r["Average A15 Event 0x1b"]) for r in one) / cycles)
    assert math.isnan(row.ipc)  # Powmon has no INST_RETIRED


def test_a_run_priced_by_a_model_of_another_cluster_is_flagged_and_warned():
    sim = dataclasses.replace(_sim("p", 1000.0), model="cortex-a7-gemstone2018")
    with pytest.warns(CosimWarning, match="not a model of the board's A15 cluster"):
        result = compare({("p", 1000.0): _board("p", 1000.0)}, [sim], excluded={})
    assert "model_not_board_cluster" in result.rows[0]["flags"]


@needs_shared
def test_cli_refuses_when_nothing_is_on_both_sides(tmp_path):
    runs = tmp_path / "runs" / "security_sha"
    runs.mkdir(parents=True)
    (runs / "600MHz").symlink_to(SHARED / "data" / "gem5" / "cosim-v24-se-o3-600MHz")
    out = tmp_path / "v.csv"
    result = run_cosim("validate", CBENCH, tmp_path / "runs", "-o", out)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "no program at a clock on both sides (security_sha at 599.88 MHz: gem5 only" in result.stderr
    assert not out.exists()
