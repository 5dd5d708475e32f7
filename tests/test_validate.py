"""``cosim validate``: board rows, gem5 rows and their comparison, against hand computations on the measured files."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
from helpers import REPO, SHARED, needs_shared, run_cosim
from hypothesis import given, settings
from hypothesis import strategies as st

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
    # two 0.5 s steps, each less the sampler's 8.75 ms in which the counters do not count
    assert fast.per_s("0x11") == pytest.approx(2000 / (2 * (0.5 - 0.00875)))
    assert slow.ipc == pytest.approx(600 / 500) and slow.power_w == pytest.approx(0.5)
    assert slow.per_s("0x11") == pytest.approx(500 / (0.5 - 0.00875))  # not over the 8 s gap between the clocks


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


def _model_power_w(
    eph: dict[str, float],
    f_mhz: float,
    v: float,
    model: str = "cortex-a15-gemstone2018",
    cores: int = 4,
    temperature_c: float | None = None,
) -> float:
    """Walker et al. Eq. 2's dynamic terms and the file's static form a*f*V^2 + b*V*e^(k(V - 1)), written out from the
    model file's coefficients (the form is within 2 % of the published polynomial at the table's points,
    tests/test_operating_point.py); static power of ``cores`` of the model's 4 as 1 - phi + phi * cores / 4 with phi the
    per-core share the model file states (1 at four cores).  Where b is stated at a reference die temperature (issue
    50), the leakage is at ``temperature_c`` [°C], or where none is given at the file's curve temperature at that clock
    (interpolated, held at its ends)."""
    data = json.loads((REPO / "models" / f"{model}.json").read_text())
    dyn = sum(t["coefficient"] * sum(w * eph[e] for e, w in t["events"].items()) * v**2 * f_mhz for t in data["dynamic_terms"])
    form = data["static_form"]
    term = form.get("temperature", {})
    heat = 1.0
    if "reference_c" in term:
        clocks, temps = zip(*term["curve_mhz_c"])
        die_c = float(np.interp(f_mhz, clocks, temps)) if temperature_c is None else temperature_c
        heat = math.exp(term["kappa_per_k"] * (die_c - term["reference_c"]))
    static = form["a_w_per_mhz_v2"] * f_mhz * v**2 + form["b_w_per_v"] * v * math.exp(form["k_per_v"] * (v - 1)) * heat
    return dyn + static * (1 if cores == 4 else _cores_scale(data, cores))


def _cores_scale(data: dict, cores: int) -> float:
    phi = data.get("cores", {}).get("per_core_static_fraction", 1.0)  # the model file's statement (1 when absent)
    return 1 - phi + phi * cores / 4


def _synthetic(power_gem5_w: float, *, powered_cores: int = 4, voltage_gem5_v: float = 0.954):
    """A board row at 1000 MHz: 0.9825 s of counters (two 0.5 s steps less 8.75 ms each) of one busy core, and a gem5
    row of the same program at 1000 MHz for 1 ms."""
    window_s = 2 * (0.5 - 0.00875)
    board = BoardRow(
        program="prog", clock_mhz=1000.0, samples=2, runs=1, power_w=0.6, voltage_v=0.977, duration_s=window_s,
        counts={"0x11": 0.9e9, "0x08": 1.2e9, "0x04": 0.3e9},
    )  # fmt: skip
    counts = {"0x11": 1e6, "0x08": 1.0e6, "0x04": 0.25e6, "0x14": 0.3e6, "0x1b": 1.4e6, "0x73": 1.1e6, "0x43": 1e3, "0x16": 2e3}
    # gem5's cluster inputs: its busy core clocked all the time, 1e9 cycles/s over 4 cores at 1000 MHz
    gem5_eph = {e: n / counts["0x11"] * 1e9 / 4 / 1000 for e, n in counts.items() if e != "0x08"}
    sim = SimRow(program="prog", clock_mhz=1000.0, folder=Path("runs/prog/1000MHz"), model="cortex-a15-gemstone2018",
                 counts=counts, power_w=power_gem5_w, voltage_v=voltage_gem5_v, eph=gem5_eph, powered_cores=powered_cores,
                 duration_s=1e-3)  # fmt: skip
    return board, sim, gem5_eph, window_s


def test_compare_figures_by_hand_on_a_synthetic_row():
    board, sim, gem5_eph, window_s = _synthetic(0.66)
    (row,) = compare({("prog", 1000.0): board}, [sim], excluded={}).rows
    assert row["ipc_board"] == pytest.approx(1.2 / 0.9) and row["ipc_gem5"] == pytest.approx(1.0)
    assert row["power_err_pct"] == pytest.approx((0.66 / 0.6 - 1) * 100)
    # energy per instruction: power over each side's measured instruction rate, no nominal clock
    epi_b = 0.6 / (1.2e9 / window_s) * 1e9  # W / (inst/s) = J/inst -> nJ
    epi_g = 0.66 / (1.0e6 / 1e-3) * 1e9
    assert row["epi_board_nj"] == pytest.approx(epi_b) and row["epi_gem5_nj"] == pytest.approx(epi_g)
    # the model on the board's rates: its counts per second / 4 cores / MHz, its own voltage; an event it lacks is
    # gem5's count per instruction times the board's instructions, and is named
    e08 = 1.2e9 / window_s / 4 / 1000
    eph = {"0x11": 0.9e9 / window_s / 4 / 1000, "0x04": 0.3e9 / window_s / 4 / 1000}
    eph |= {e: sim.counts[e] / sim.counts["0x08"] * e08 for e in ("0x14", "0x1b", "0x73", "0x43", "0x16")}
    assert row["power_model_board_w"] == pytest.approx(_model_power_w(eph, 1000.0, 0.977), rel=1e-9)
    assert row["model_board_inputs_not_board"] == "0x14;0x16;0x1b;0x43;0x73"
    assert row["rate_0x04_board"] == pytest.approx(0.3 / 0.9) and row["rate_0x04_gem5"] == pytest.approx(0.25)
    assert "board_lacks:0x1b" in row["flags"] and "board_lacks:0x04" not in row["flags"]
    assert "powered_cores_differ" not in row["flags"] and row["model_board"] == "another board"


def test_log_decomposition_swaps_each_input_alone_and_sums_exactly():
    board, sim, gem5_eph, window_s = _synthetic(0.0)
    sim = dataclasses.replace(sim, power_w=_model_power_w(gem5_eph, 1000.0, 0.954))
    (row,) = compare({("prog", 1000.0): board}, [sim], excluded={}).rows
    e08 = 1.2e9 / window_s / 4 / 1000
    eph = {"0x11": 0.9e9 / window_s / 4 / 1000, "0x04": 0.3e9 / window_s / 4 / 1000}
    eph |= {e: sim.counts[e] / sim.counts["0x08"] * e08 for e in ("0x14", "0x1b", "0x73", "0x43", "0x16")}
    p_board = _model_power_w(eph, 1000.0, 0.977)
    assert row["ln_total"] == pytest.approx(math.log(sim.power_w / 0.6), rel=1e-8)
    assert row["ln_model"] == pytest.approx(math.log(p_board / 0.6), rel=1e-8)
    for event in eph:
        swapped = _model_power_w(eph | {event: gem5_eph[event]}, 1000.0, 0.977)
        assert row[f"ln_event_{event}"] == pytest.approx(math.log(swapped / p_board), rel=1e-9), event
    assert row["ln_clock_voltage"] == pytest.approx(math.log(_model_power_w(eph, 1000.0, 0.954) / p_board), rel=1e-9)
    parts = [row[k] for k in row if k.startswith("ln_event_")] + [row["ln_clock_voltage"], row["ln_interaction"]]
    assert row["ln_model"] + row["ln_activity"] == pytest.approx(row["ln_total"], abs=1e-15)  # exact, to float rounding
    assert math.fsum(parts) == pytest.approx(row["ln_activity"], abs=1e-15)


def test_a_run_powering_other_cores_than_the_board_is_flagged_and_its_share_is_its_own_line():
    board, sim, gem5_eph, _ = _synthetic(0.5, powered_cores=2)
    (row,) = compare({("prog", 1000.0): board}, [sim], excluded={}).rows
    assert "powered_cores_differ" in row["flags"] and row["powered_cores_gem5"] == 2 and row["powered_cores_board"] == 4
    assert row["ln_powered_cores"] < 0  # two cores' static power is less than four's
    parts = [row[k] for k in row if k.startswith("ln_event_")] + [row["ln_clock_voltage"], row["ln_powered_cores"], row["ln_interaction"]]
    assert math.fsum(parts) == pytest.approx(row["ln_activity"], abs=1e-15)


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
    from _silicon import board_model_table, silicon_table

    text = silicon_table(RECORDED)
    with open(RECORDED, newline="") as f:
        rows = list(csv.DictReader(f))
    models = list(dict.fromkeys(r["model"] for r in rows))
    assert models[0] == "cortex-a15-armpm-xu3" and rows[0]["model_board"] == "this board"
    for model in models:  # each model's power MAPE and coverage, by hand from the recorded rows
        mine = [r for r in rows if r["model"] == model]
        mape = sum(abs(float(r["power_err_pct"])) for r in mine) / len(mine)
        inside = sum(r["board_inside"] == "True" for r in mine)
        assert f"| {model} | " in text and f" | {mape:.1f} % | " in text
        assert f"| {100 * inside / len(mine):.0f} % of {len(mine)} |" in text
    table = [line for line in text.splitlines() if line.startswith("| ") and " / " in line and "MHz" not in line]
    assert [line.split(" | ")[0] for line in table] == [f"| {r['program']}" for r in rows if r["model"] == models[0]]
    assert "not here" in silicon_table(tmp_path / "absent.csv")
    model = json.loads((REPO / "models" / "cortex-a15-armpm-xu3.json").read_text())
    assert f"MAPE {model['test_split']['mape_pct']:.2f} %" in board_model_table() and "not here" in board_model_table(tmp_path / "x.json")


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


# --- every figure of two real rows, by hand from the raw ARMPM lines and gem5's stats.txt ----------------------------

SPLIT = ARMPM / "cbench_split.data"
DEAD_TIME_S = 0.00875  # the sampler's dead time, re-measured from the log in test_sampler_dead_time_is_what_the_log_shows


def _raw_samples(program: str, clock: int) -> list[tuple[dict, float]]:
    """The log's kept samples of ``program`` at ``clock`` with their step [s] since the previous sample of the same
    program, run and clock (each stretch's first sample has none and is left out)."""
    kept, previous, previous_ns = [], None, 0
    with open(CBENCH, newline="") as f:
        for rec in csv.DictReader(f, delimiter="\t"):
            key = (rec["Benchmark"], rec["Run(#)"], rec["CPU(4) Frequency(MHz)"])
            if key == previous and key[0] == program and key[2] == str(clock):
                kept.append((rec, (int(rec["#Timestamp"]) - previous_ns) / 1e9))
            previous, previous_ns = key, int(rec["#Timestamp"])
    return kept


def _stats(path: Path) -> dict[str, float]:
    out = {}
    for line in path.read_text().splitlines():
        words = line.split()
        if len(words) >= 2 and not line.startswith("-"):
            try:
                out[words[0]] = float(words[1])
            except ValueError:
                pass
    return out


@needs_shared
def test_sampler_dead_time_is_what_the_log_shows():
    """A busy core clocks every cycle: the step less CPU_CYCLES / f is the time the counters did not count."""
    import statistics

    train = {line.split("\t")[0] for line in SPLIT.read_text().splitlines()[1:] if line.split("\t")[0].strip()}
    gaps: dict[str, list[float]] = {}
    for program in train:
        for clock in (1000, 1500, 2000):
            for rec, step in _raw_samples(program, clock):
                gaps.setdefault(str(clock), []).append(step - float(rec["CPU_CYCLES"]) / (clock * 1e6))
    assert sum(len(g) for g in gaps.values()) == 5698
    for clock, values in gaps.items():
        assert statistics.median(values) == pytest.approx(DEAD_TIME_S, abs=0.0002), clock


@needs_shared
@pytest.mark.parametrize("program, clock", [("security_sha", 1000), ("telecom_gsm", 2000)])
def test_real_row_every_figure_by_hand(tmp_path, program, clock):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / program).symlink_to(XU3_RUNS / program)
    out = tmp_path / "v.csv"
    result = run_cosim("validate", CBENCH, runs, "--split", SPLIT, "--model", "cortex-a15-armpm-xu3", "-o", out)
    assert result.returncode == 0, result.stderr
    with open(out, newline="") as f:
        (row,) = [r for r in csv.DictReader(f) if float(r["clock_mhz"]) == clock]  # a clock column [MHz], compared as a number
    got = {k: float(v) for k, v in row.items() if k.startswith(("ln_", "power_", "epi_", "voltage_", "ipc_", "inst_"))}
    # the board, from its raw lines: power, power / current, counts over the steps less the dead time
    samples = _raw_samples(program, clock)
    window_s = sum(step - DEAD_TIME_S for _, step in samples)
    total = {code: sum(float(r[name]) for r, _ in samples) for code, name in
             [("0x11", "CPU_CYCLES"), ("0x08", "INST_RETIRED"), ("0x10", "BRANCH_MISPRED"), ("0x03", "L1D_CACHE_REFILL"), ("0x04", "L1D_CACHE_ACCESS")]}  # fmt: skip
    p_board = sum(float(r["A15 Power(W)"]) for r, _ in samples) / len(samples)
    v_board = sum(float(r["A15 Power(W)"]) / float(r["A15 Current(A)"]) for r, _ in samples) / len(samples)
    assert int(row["board_samples"]) == len(samples)
    assert got["power_board_w"] == pytest.approx(p_board, rel=1e-8) and got["voltage_board_v"] == pytest.approx(v_board, rel=1e-8)
    assert got["ipc_board"] == pytest.approx(total["0x08"] / total["0x11"], rel=1e-8)
    assert got["inst_per_s_board"] == pytest.approx(total["0x08"] / window_s, rel=1e-8)
    assert got["epi_board_nj"] == pytest.approx(p_board / (total["0x08"] / window_s) * 1e9, rel=1e-8)
    # gem5, from its stats: cpu0 ran the program, cpu1-3 never did; the cluster's inputs are per core of 4, per MHz
    st = _stats(XU3_RUNS / program / f"{clock}MHz" / "stats.txt")
    seconds = st["simTicks"] / st["simFreq"]
    f_gem5 = st["simFreq"] / st["system.cpu_clk_domain.clock"] / 1e6
    gem5 = {"0x11": st["system.cpu0.numCycles"], "0x08": st["system.cpu0.commitStats0.numInsts"],
            "0x10": st["system.cpu0.commit.branchMispredicts"], "0x03": st["system.cpu0.dcache.overallMshrMisses::total"],
            "0x04": st["system.cpu0.dcache.overallAccesses::total"]}  # fmt: skip
    assert [st[f"system.cpu{i}.numCycles"] for i in (1, 2, 3)] == [0, 0, 0]
    model = json.loads((REPO / "models" / "cortex-a15-armpm-xu3.json").read_text())
    v_table = dict(map(tuple, model["vf_table"]["points_mhz_v"]))[float(clock)]
    eph_gem5 = {e: n / seconds / 4 / f_gem5 for e, n in gem5.items()}
    # cosim power prices a gem5 run's leakage at the die temperature its own power produces: a run of milliseconds
    # starts (and, with tau ~3 s, stays) at the steady state T = T_amb + R * P(T) of the thermal file's constants
    # (no fan on the default board), solved here by fixed point
    thermal = json.loads((REPO / "models" / "thermal-xu3.json").read_text())["clusters"]["xu3-a15"]
    r_k_per_w, ambient_c = thermal["r_k_per_w"]["value"], thermal["ambient_c"]["value"]
    die_c = ambient_c
    for _ in range(100):
        die_c = ambient_c + r_k_per_w * _model_power_w(eph_gem5, f_gem5, v_table, model="cortex-a15-armpm-xu3", temperature_c=die_c)
    p_gem5 = _model_power_w(eph_gem5, f_gem5, v_table, model="cortex-a15-armpm-xu3", temperature_c=die_c)
    assert ambient_c < die_c < ambient_c + r_k_per_w * 5  # a cluster of a few watts
    assert got["power_gem5_w"] == pytest.approx(p_gem5, rel=1e-6)
    # (cosim bounds numCycles by the cycles of the ON residency, one cycle fewer here: 1e-7)
    assert got["ipc_gem5"] == pytest.approx(gem5["0x08"] / gem5["0x11"], rel=1e-6)
    assert got["epi_gem5_nj"] == pytest.approx(p_gem5 / (gem5["0x08"] / seconds) * 1e9, rel=1e-6)
    assert got["power_err_pct"] == pytest.approx((p_gem5 / p_board - 1) * 100, rel=1e-5)
    # the model on the board's rates and voltage; the exact decomposition, each input swapped alone
    eph_board = {e: n / window_s / 4 / clock for e, n in total.items()}
    p_model = _model_power_w(eph_board, clock, v_board, model="cortex-a15-armpm-xu3")
    assert got["power_model_board_w"] == pytest.approx(p_model, rel=1e-9) and row["model_board_inputs_not_board"] == ""
    assert got["ln_total"] == pytest.approx(math.log(p_gem5 / p_board), abs=1e-6)
    assert got["ln_model"] == pytest.approx(math.log(p_model / p_board), abs=1e-9)
    for event in eph_board:
        swapped = _model_power_w(eph_board | {event: eph_gem5[event]}, clock, v_board, model="cortex-a15-armpm-xu3")
        assert got[f"ln_event_{event}"] == pytest.approx(math.log(swapped / p_model), abs=1e-6), event
    swapped = _model_power_w(eph_board, f_gem5, v_table, model="cortex-a15-armpm-xu3")
    assert got["ln_clock_voltage"] == pytest.approx(math.log(swapped / p_model), abs=1e-9)
    parts = [got[k] for k in got if k.startswith("ln_event_")] + [got["ln_clock_voltage"], got["ln_interaction"]]
    assert got["ln_model"] + math.fsum(parts) == pytest.approx(got["ln_total"], abs=1e-9)  # the CSV's 9 digits
    assert row["model_board"] == "this board" and row["split"] == "train" and "powered_cores_differ" not in row["flags"]
    # the board's mean die temperature over the same samples, from its raw lines
    assert float(row["temp_board_c"]) == pytest.approx(sum(float(r["CPU(4) Temperature(C)"]) for r, _ in samples) / len(samples), rel=1e-9)
    # the DVFS ratio the board measured: energy per instruction at another clock over this one's, from the raw lines
    with open(tmp_path / "v-dvfs.csv", newline="") as f:
        pairs = [r for r in csv.DictReader(f) if float(r["from_mhz"]) == clock]
    assert len(pairs) == 2
    for pair in pairs:
        other = _raw_samples(program, int(float(pair["to_mhz"])))
        inst_s = sum(float(r["INST_RETIRED"]) for r, _ in other) / sum(step - DEAD_TIME_S for _, step in other)
        epi_other = sum(float(r["A15 Power(W)"]) for r, _ in other) / len(other) / inst_s * 1e9
        assert float(pair["ratio_board"]) == pytest.approx(epi_other / got["epi_board_nj"], rel=1e-7)
        assert float(pair["ratio_err_pct"]) == pytest.approx((float(pair["ratio_whatif"]) / float(pair["ratio_board"]) - 1) * 100, rel=1e-6)


@needs_shared
def test_every_real_row_decomposes_exactly_and_the_interval_is_calibrated_without_its_program(tmp_path):
    from cosim.validate import validate

    result = validate(CBENCH, XU3_RUNS, split=SPLIT, models=("cortex-a15-armpm-xu3",))
    rows = [{k: str(v) for k, v in r.items()} for r in result.rows]
    assert len(rows) == 33
    # validation.md's die-temperature and DVFS figures, recomputed
    from cosim.validate.dvfs import dvfs_summary
    from cosim.validate.thermal import temperature_summary

    # (the page quotes what this run gives; the independent truths are the board's temperatures and ratios from its raw
    # lines, test_real_row_every_figure_by_hand): a change to the pricing that moves a figure must move the page too
    page = " ".join((REPO / "docs" / "explanation" / "validation.md").read_text().split())
    heat = temperature_summary(result.temperatures)
    signed = lambda x: f"{x:.2f}".replace("-", "−")  # noqa: E731
    assert (
        f"training rows {heat['train']['mae_k']:.2f} K, test rows {heat['test']['mae_k']:.2f} K "
        f"(bias {signed(heat['train']['bias_k'])} / {signed(heat['test']['bias_k'])} K)"
    ) in page
    pairs = dvfs_summary(result.dvfs, "cortex-a15-armpm-xu3")
    assert len(pairs) == 6 and all(p["split"] == "train" for p in pairs)
    lo, hi = min(pairs, key=lambda p: p["mean_abs_err_pct"]), max(pairs, key=lambda p: p["mean_abs_err_pct"])
    own = [p["whatif_vs_gem5_abs_pct"] for p in pairs]
    assert (
        f"program {lo['mean_abs_err_pct']:.1f} % ({lo['from_mhz']:.0f}→{lo['to_mhz']:.0f} MHz) to {hi['mean_abs_err_pct']:.1f} % "
        f"({hi['from_mhz']:.0f}→{hi['to_mhz']:.0f} MHz), the ratio of the means within "
        f"{max(abs(p['ratio_of_means_err_pct']) for p in pairs):.1f} %; the what-if's own part is {min(own):.1f}–{max(own):.1f} %"
    ) in page
    assert ("is met by the ratio of the means on every clock pair" in page) == all(abs(p["ratio_of_means_err_pct"]) <= 2 for p in pairs)
    for r in rows:  # in memory: exactly, to float rounding
        parts = [float(r[k]) for k in r if k.startswith("ln_event_")] + [float(r["ln_clock_voltage"]), float(r["ln_interaction"])]
        assert float(r["ln_model"]) + float(r["ln_activity"]) == pytest.approx(float(r["ln_total"]), abs=1e-15)
        assert math.fsum(parts) == pytest.approx(float(r["ln_activity"]), abs=1e-15)
    # one row's interval by hand: the other programs' ln(P_gem5 / P_model(board)) at its clock, the model's grouped
    # CV residuals from the model file, +- 1.96 sd in log space around gem5 + cosim's price
    import statistics

    row = next(r for r in rows if r["program"] == "telecom_gsm" and float(r["clock_mhz"]) == 2000)
    others = [float(r["ln_total"]) - float(r["ln_model"]) for r in rows if r["program"] != "telecom_gsm" and float(r["clock_mhz"]) == 2000]
    cv = json.loads((REPO / "models" / "cortex-a15-armpm-xu3.json").read_text())["fit"]["cv_by_group"]
    centre = math.log(float(row["power_gem5_w"])) - math.log1p(cv["bias_pct"] / 100) - statistics.mean(others)
    half = 1.96 * math.hypot(math.log1p(cv["rms_pct"] / 100), statistics.stdev(others))
    assert float(row["board_lo_w"]) == pytest.approx(math.exp(centre - half), rel=1e-9)
    assert float(row["board_hi_w"]) == pytest.approx(math.exp(centre + half), rel=1e-9)
    assert (row["board_inside"] == "True") == (math.exp(centre - half) <= float(row["power_board_w"]) <= math.exp(centre + half))


@needs_shared
def test_power_against_board_gives_the_boards_interval_and_refuses_a_model_it_has_not_seen(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    for program in ("security_sha", "telecom_gsm", "consumer_jpeg_c"):
        (runs / program).symlink_to(XU3_RUNS / program)
    validation = tmp_path / "v.csv"
    result = run_cosim("validate", CBENCH, runs, "--split", SPLIT, "--model", "cortex-a15-armpm-xu3", "-o", validation)
    assert result.returncode == 0, result.stderr
    run = XU3_RUNS / "security_rijndael_d" / "1000MHz"  # a program the validation did not see
    out = tmp_path / "p.csv"
    priced = run_cosim("power", run, "--model", "cortex-a15-armpm-xu3", "--against-board", validation, "-o", out)
    assert priced.returncode == 0, priced.stderr
    with open(out, newline="") as f:
        (epoch,) = list(csv.DictReader(f))
    assert 0 < float(epoch["board_lo_w"]) < float(epoch["power_w"]) < float(epoch["board_hi_w"])
    assert "calibrated on 3 training programs" in priced.stdout
    refused = run_cosim("power", run, "--model", "cortex-a15-walker2017", "--against-board", validation, "-o", tmp_path / "q.csv")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "no row priced with cortex-a15-walker2017" in refused.stderr and "cosim validate --model cortex-a15-walker2017" in refused.stderr


@given(
    board_counts=st.tuples(*[st.floats(1e6, 2e9)] * 3),
    gem5_scale=st.tuples(*[st.floats(0.2, 5.0)] * 8),
    board_power_w=st.floats(0.2, 4.0),
    voltages=st.tuples(st.floats(0.9, 1.35), st.floats(0.9, 1.35)),
    cores=st.sampled_from([1, 2, 4]),
)
@settings(max_examples=60, deadline=None)
def test_decomposition_sums_to_the_total_for_any_board_and_gem5_activity(board_counts, gem5_scale, board_power_w, voltages, cores):
    """Whatever the two sides' activity, voltage and powered cores: model + each swap + interaction = the total."""
    cycles, insts, l1d = board_counts
    board = BoardRow(program="p", clock_mhz=1000.0, samples=5, runs=1, power_w=board_power_w, voltage_v=voltages[0],
                     duration_s=1.0, counts={"0x11": cycles, "0x08": insts, "0x04": l1d})  # fmt: skip
    events = ("0x11", "0x04", "0x14", "0x16", "0x1b", "0x43", "0x73", "0x08")
    counts = {e: 1e6 * k for e, k in zip(events, gem5_scale)}
    eph = {e: counts[e] / 1e-3 / 4 / 1000 for e in events[:-1]}
    sim = SimRow(program="p", clock_mhz=1000.0, folder=Path("r"), model="cortex-a15-gemstone2018", counts=counts, power_w=1.0,
                 voltage_v=voltages[1], eph=eph, powered_cores=cores, duration_s=1e-3)  # fmt: skip
    (row,) = compare({("p", 1000.0): board}, [sim], excluded={}).rows
    parts = [v for k, v in row.items() if k.startswith("ln_") and k not in ("ln_total", "ln_model", "ln_activity")]
    assert len(parts) == 7 + 1 + (cores != 4) + 1  # the model's 7 events, clock and voltage, cores if they differ, interaction
    assert row["ln_model"] + math.fsum(parts) == pytest.approx(math.log(1.0 / board_power_w), abs=1e-12)


@needs_shared
def test_validate_reports_training_and_test_rows_apart(tmp_path):
    """With a split that puts three of the eleven programs gem5 ran in its test column: the coverage and the error
    figures are printed for training and test rows apart, and a test row's interval is calibrated on every training
    program (by hand: the training programs' ln(P_gem5 / P_model(board)) at its clock, the model file's grouped CV)."""
    import statistics

    test = ("security_sha", "telecom_gsm", "consumer_jpeg_c")
    train = sorted(p.name for p in XU3_RUNS.iterdir() if p.is_dir() and p.name not in test)
    split = tmp_path / "split.data"
    split.write_text("#Train Benchmarks\tTest Benchmarks\n" + "".join(f"{a}\t{b}\n" for a, b in zip(train, [*test, *[""] * 20])))
    out = tmp_path / "v.csv"
    result = run_cosim("validate", CBENCH, XU3_RUNS, "--split", split, "--model", "cortex-a15-armpm-xu3", "-o", out)
    assert result.returncode == 0, result.stderr
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    parts = {s: [r for r in rows if r["split"] == s] for s in ("train", "test")}
    assert len(parts["test"]) == 9 and len(parts["train"]) == 24  # telecom_CRC32 (training, I/O-bound) left out
    for name, mine in parts.items():
        inside = 100 * sum(r["board_inside"] == "True" for r in mine) / len(mine)
        label = "training rows: board inside on" if name == "train" else "test rows: board inside on"
        assert f"{label} {inside:.0f} % of {len(mine)}" in result.stdout
        mape = sum(abs(float(r["power_err_pct"])) for r in mine) / len(mine)
        assert f"{'training' if name == 'train' else 'test'} rows: power MAPE {mape:.1f} %" in result.stdout
    row = next(r for r in parts["test"] if r["program"] == "telecom_gsm" and float(r["clock_mhz"]) == 1000)
    others = [float(r["ln_total"]) - float(r["ln_model"]) for r in parts["train"] if float(r["clock_mhz"]) == 1000]
    cv = json.loads((REPO / "models" / "cortex-a15-armpm-xu3.json").read_text())["fit"]["cv_by_group"]
    centre = math.log(float(row["power_gem5_w"])) - math.log1p(cv["bias_pct"] / 100) - statistics.mean(others)
    half = 1.96 * math.hypot(math.log1p(cv["rms_pct"] / 100), statistics.stdev(others))
    assert float(row["board_lo_w"]) == pytest.approx(math.exp(centre - half), rel=1e-9)
    assert float(row["board_hi_w"]) == pytest.approx(math.exp(centre + half), rel=1e-9)
