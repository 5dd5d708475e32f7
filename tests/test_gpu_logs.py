"""GPU logs as people save them: nvprof (metrics, gpu-trace, summary; text and --csv), Nsight Compute,
GPGPU-Sim / Accel-Sim and their power reports; ``cosim read``; the device check.

The samples in tests/data/gpu follow each tool's format exactly (the program's
own output mixed in, several sessions, units, a units row, empty kernel names).
"""

from __future__ import annotations

import math
import warnings

import pandas as pd
import pytest
from helpers import REPO
from helpers import run_cosim as cosim
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cosim.counters.gpu import ocelot_counts_from_gpgpusim, ocelot_map
from cosim.errors import CosimError, CosimWarning
from cosim.models.tegrak1 import load_rail_model
from cosim.readers._units import ncu_unit, quantity
from cosim.readers.gpgpusim import counter_semantics, read_gpgpusim, read_power_report
from cosim.readers.ncu import ncu_to_nvprof, nvprof_metrics_from_ncu, read_ncu
from cosim.readers.nvprof import metric_records, read_nvprof
from cosim.readers.nvprof_trace import read_gpu_summary, read_gpu_trace
from cosim.readers.tidy import COLUMNS, FORMATS, detect_format, read

DATA = REPO / "tests" / "data" / "gpu"
TRACES = REPO / "traces"


# --- units -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("31.425GB/s", 31.425 * 2**30, "B/s"),
        ("864.98MB/s", 864.98 * 2**20, "B/s"),
        ("99.53%", 0.9953, "fraction"),
        ("1.5629ms", 1.5629e-3, "s"),
        ("511.97us", 511.97e-6, "s"),
        ("128.00MB", 128 * 2**20, "B"),
        ("0B", 0.0, "B"),
        ("Low (2)", 2.0, "level"),
        ("Idle (0)", 0.0, "level"),
        ("1024", 1024.0, "count"),
        ("2.4e+03s", 2400.0, "s"),
    ],
)
def test_nvprof_units(text, value, unit):
    got, got_unit = quantity(text)
    assert got == pytest.approx(value) and got_unit == unit


def test_nvprof_prefixes_are_binary_as_its_trace_shows():
    """A copy's size / duration is the throughput nvprof prints only with 2^30 B per GB (decimal is 7 % off)."""
    for path in (DATA / "nvprof-gtx650m-gpu-trace.txt", DATA / "nvprof-rtx2080ti-gpu-trace.csv"):
        copies = read_gpu_trace(path).query("kind != 'kernel'")
        ratio = copies["size_b"] / copies["duration_s"] / copies["throughput_b_per_s"]
        assert ratio.to_numpy() == pytest.approx(1.0, rel=1e-4)


@pytest.mark.parametrize(
    ("unit", "factor", "si"),
    [
        ("Kbyte", 1e3, "B"),
        ("Gbyte/second", 1e9, "B/s"),
        ("usecond", 1e-6, "s"),
        ("%", 0.01, "fraction"),
        ("cycle/nsecond", 1e9, "Hz"),
        ("cycle", 1.0, "count"),
        ("inst/cycle", 1.0, "inst/cycle"),
    ],
)
def test_ncu_units_are_decimal(unit, factor, si):
    got, got_si = ncu_unit(unit)
    assert got == pytest.approx(factor) and got_si == si


# --- nvprof metrics --------------------------------------------------------------------------------


def test_nvprof_sessions_are_joined_and_program_output_skipped():
    with warnings.catch_warnings():
        warnings.simplefilter("error", CosimWarning)  # program output outside nvprof's results is no warning
        records = metric_records(DATA / "nvprof-gtx980-sessions.log")
    by = {(r.kernel[:20], r.metric): r for r in records}
    mm = "void matrixMulCUDA<i"
    assert by[(mm, "inst_fp_32")].session == 1 and by[(mm, "inst_integer")].session == 2  # joined per kernel
    assert by[(mm, "elapsed_cycles_sm")].total == 13721783320
    assert by[(mm, "dram_read_throughput")].avg == pytest.approx(32.207 * 2**30)
    assert by[(mm, "dram_write_throughput")].min == pytest.approx(864.98 * 2**20)
    assert by[(mm, "shared_efficiency")].avg == pytest.approx(0.9953) and by[(mm, "shared_efficiency")].unit == "fraction"
    assert by[(mm, "shared_utilization")].max == 6 and by[(mm, "shared_utilization")].unit == "level"
    long_name = [r.kernel for r in records if r.kernel.startswith("void thrust")][0]
    assert len(long_name) > 300 and long_name.endswith("(thrust::device_ptr<float>, unsigned long)")
    assert {r.invocations for r in records if r.kernel == long_name} == {2}


def test_nvprof_csv_with_units_and_levels():
    wide = read_nvprof(DATA / "nvprof-gtx1070-metrics.csv", allow_unknown=True)
    row = wide.iloc[0]
    assert row["device"] == "GeForce GTX 1070 (0)" and row["invocations"] == 10
    assert row["gld_efficiency"] == pytest.approx(0.22916667) and row["shared_utilization"] == 1
    assert row["dram_read_throughput"] == pytest.approx(1.186113 * 2**30)


def test_nvprof_repeated_metric_across_sessions_keeps_the_first(tmp_path):
    text = (DATA / "nvprof-gtx980-sessions.log").read_text()
    second = text.replace("==5188==", "==5199==").replace("69206016", "1").replace("Event result", "Metric result")
    path = tmp_path / "twice.log"
    path.write_text(text + second)
    with pytest.warns(CosimWarning, match=r"twice.log:\d+: \d+ metric value\(s\) repeat an earlier session"):
        records = metric_records(path)
    assert [r.avg for r in records if r.metric == "inst_integer" and r.kernel.startswith("void matrixMul")] == [69206016]


def test_nvprof_damaged_line_inside_results_is_named(tmp_path):
    lines = (DATA / "nvprof-gtx980-sessions.log").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "inst_fp_32" in line)
    lines[at] = lines[at][:40]
    path = tmp_path / "cut.log"
    path.write_text("\n".join(lines) + "\n")
    with pytest.warns(CosimWarning, match=rf"cut.log:{at + 1}: skipped 1 line"):
        metric_records(path)


# --- nvprof gpu-trace and summary ------------------------------------------------------------------


def test_gpu_trace_text_cuts_columns_at_the_header():
    trace = read_gpu_trace(DATA / "nvprof-gtx650m-gpu-trace.txt")
    assert list(trace["kind"]) == ["memcpy", "memcpy", "kernel", "memcpy"]
    kernel = trace[trace["kind"] == "kernel"].iloc[0]
    assert kernel["kernel"] == "vectorAdd(float const *, float const *, float*, int)" and kernel["correlation"] == 112
    assert kernel["device"] == "GeForce GT 650M" and kernel["grid"] == "(39063 1 1)" and kernel["registers_per_thread"] == 8
    assert kernel["start_s"] == pytest.approx(0.19589) and kernel["duration_s"] == pytest.approx(3.4072e-3)
    assert list(trace["launch"]) == [0, 1, 0, 0]


def test_gpu_trace_csv_reads_the_units_row():
    trace = read_gpu_trace(DATA / "nvprof-rtx2080ti-gpu-trace.csv")
    assert trace["start_s"].iloc[1] == pytest.approx(4643.346e-6) and trace["size_b"].iloc[1] == pytest.approx(128)
    kernel = trace[trace["kind"] == "kernel"].iloc[0]
    assert kernel["kernel"].startswith("void gemv2N_kernel<int, int, float2") and kernel["block_x"] == 128


def test_gpu_summary_text_and_csv_agree_and_leave_api_calls_out():
    text, csv = read_gpu_summary(DATA / "nvprof-gt1030-summary.txt"), read_gpu_summary(DATA / "nvprof-gt1030-summary.csv")
    cols = ["kernel", "time_fraction", "time_s", "calls", "avg_s", "min_s", "max_s"]
    pd.testing.assert_frame_equal(text[cols], csv[cols], rtol=1e-6)
    assert "cudaMalloc" not in set(text["kernel"]) and text["calls"].tolist() == [1, 1, 2]


# --- Nsight Compute --------------------------------------------------------------------------------


def test_ncu_details_page():
    rows = read_ncu(DATA / "ncu-a100-details.csv")
    first = rows[rows["launch"] == 0].set_index("metric")
    assert first.loc["Elapsed Cycles", "value"] == 3718 and first.loc["Duration", "value"] == pytest.approx(4.86e-6)
    assert first.loc["Shared Memory Configuration Size", "value"] == pytest.approx(32770)  # decimal Kbyte
    assert math.isnan(first.loc["Stall Long Scoreboard", "value"])
    assert sorted(rows["launch"].unique()) == [0, 1]


def test_ncu_raw_page_and_the_nvprof_name_map():
    rows = read_ncu(DATA / "ncu-rtx3090-raw.csv")
    assert set(rows["device"]) == {"NVIDIA GeForce RTX 3090"}
    fp32 = rows[rows["metric"] == "sm__sass_thread_inst_executed_op_fp32_pred_on.sum"]["value"]
    assert fp32.tolist() == [2147483648, 2147483648]
    wide = nvprof_metrics_from_ncu(rows)
    assert wide["inst_fp_32"].iloc[0] == 2147483648 and wide["inst_integer"].iloc[0] == 402653184
    assert wide["invocations"].iloc[0] == 2
    assert {"inst_integer", "l2_subp0_total_read_sector_queries", "elapsed_cycles_sm"} <= set(ncu_to_nvprof())


# --- GPGPU-Sim / Accel-Sim -------------------------------------------------------------------------


def test_gpgpusim_cumulative_counters_become_per_kernel():
    runs = read_gpgpusim(DATA / "gpgpusim-3.2-gtx480-backprop.log")
    assert runs.attrs["gpgpusim"]["core_mhz"] == 700 and runs.attrs["gpgpusim"]["compute_capability"] == "2.0"
    assert list(runs["gpu_sim_cycle"]) == [36455, 27114]
    assert list(runs["gpgpu_n_load_insn"]) == [589824, 1081344 - 589824]
    assert list(runs["L2_total_cache_accesses"]) == [51201, 102400 - 51201]
    assert runs["duration_s"].iloc[1] == pytest.approx(27114 / 700e6)
    assert runs["flags"].tolist() == ["", ""]


def test_accelsim_multistream_keeps_launches_and_reports_empty_blocks():
    with pytest.warns(CosimWarning, match=r"accelsim-volta-multistream.log:\d+: 1 statistics block\(s\) with an empty kernel_name"):
        runs = read_gpgpusim(DATA / "accelsim-volta-multistream.log")
    assert list(runs["kernel"]) == ["_Z9vectorAddPKfS0_Pfi", "_Z9vectorAddPKfS0_Pfi", "", "_Z9vectorAddPKfS0_Pfi"]
    assert list(runs["uid"]) == ["1", "2", "", "3"] and list(runs["stream"]) == [1, 2, 3, 1]
    assert runs.attrs["gpgpusim"]["compute_capability"] == "7.0"
    named = runs[runs["kernel"] != ""]
    assert list(named["gpgpu_n_load_insn"]) == [100000, 100000, 100000]  # counted since the run began


def test_gpgpusim_counter_semantics_is_read_from_the_log():
    def block(insn, total, icount):
        return {"stats": {"gpu_sim_insn": (insn, 1), "gpu_tot_sim_insn": (total, 1), "gpgpu_n_tot_thrd_icount": (icount, 1)}}

    assert counter_semantics([block(5, 5, 5), block(7, 12, 12)]) == "run"
    assert counter_semantics([block(5, 5, 5), block(7, 12, 7)]) == "kernel"
    assert counter_semantics([{"stats": {"gpu_sim_insn": (5, 1)}}]) == "unknown"


def test_gpgpusim_falling_counter_is_refused(tmp_path):
    text = (DATA / "gpgpusim-3.2-gtx480-backprop.log").read_text().replace("gpgpu_n_load_insn  = 1081344", "gpgpu_n_load_insn  = 1")
    (tmp_path / "cat.log").write_text(text)
    with pytest.raises(CosimError, match=r"cat.log:\d+: gpgpu_n_load_insn fell from 589824 to 1"):
        read_gpgpusim(tmp_path / "cat.log")


def test_power_report_reads_both_generations(tmp_path):
    report = read_power_report(DATA / "gpuwattch-gtx480-backprop.log")
    assert report["power_w"].tolist() == [83.412, 96.0373] and report["max_power_w"].iloc[1] == 104.8812
    accelwattch = tmp_path / "accelwattch_power_report.log"
    accelwattch.write_text(
        "kernel_name = k\nkernel_launch_uid = 1\nKernel Average Power Data:\nkernel_avg_power = 61.5\n"
        "gpu_avg_IBP, = 0.26\ngpu_avg_DRAMP, = 12.0\n\nKernel Maximum Power Data:\nkernel_max_power = 70\n"
        "\nKernel Minimum Power Data:\nkernel_min_power = 50\n\nAccumulative Power Statistics Over Previous Kernels:\n"
        "gpu_tot_avg_power = 61.5\n"
    )
    row = read_power_report(accelwattch).iloc[0]
    assert row["power_w"] == 61.5 and row["gpu_avg_IBP"] == 0.26 and row["max_power_w"] == 70


def test_gpgpusim_counts_map_to_ocelot_classes_with_flags():
    trace = ocelot_counts_from_gpgpusim(read_gpgpusim(DATA / "gpgpusim-3.2-gtx480-backprop.log"))
    first = trace.iloc[0]
    assert first["n_memory_offchip"] == 55200 + 12290  # DRAM reads + writes, one 32 B transaction each
    assert first["n_memory_onchip"] == 589824 + 65536 + 1245184 + 131072
    assert first["n_integer_arithmetic"] == 6062080 - first["n_memory_onchip"]
    assert set(first["flags"].split(";")) == {"remainder_as_integer", "offchip_from_dram_accesses", "cached_as_onchip"}


# --- the device check and the CLI ------------------------------------------------------------------


def test_gpu_refuses_another_device_in_one_line(tmp_path):
    run = cosim("gpu", DATA / "nvprof-gtx980-sessions.log", "-o", tmp_path / "x.csv")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    line = run.stderr.strip().splitlines()[-1]
    # not the Tegra K1 model's metrics either, so --any-device would not help: what cosim can do instead
    assert "nvprof metrics of GeForce GTX 980;" in line and "GK20A" in line and "--any-device" not in line
    assert "cosim read" in line and "cosim kernel-fit" in line
    assert not (tmp_path / "x.csv").exists()
    moved = tmp_path / "gtx980.csv"  # the Tegra K1 model's metrics, as if measured on a GTX 980
    moved.write_text((REPO / "traces" / "cosim-nvprof-dct.csv").read_text().replace("GK20A (0)", "GeForce GTX 980 (0)"))
    run = cosim("gpu", moved, "-o", tmp_path / "x.csv")
    line = run.stderr.strip().splitlines()[-1]
    assert run.returncode == 2 and "device 'GeForce GTX 980 (0)'" in line and "--any-device" in line
    run = cosim("gpu", moved, "--any-device", "-o", tmp_path / "x.csv")
    assert run.returncode == 0 and pd.read_csv(tmp_path / "x.csv").query("kind == 'kernel'")["flags"].str.contains("device_mismatch").all()
    volta = cosim("gpu", DATA / "accelsim-volta-multistream.log", "--model", "ocelot-fermi-aalto2013", "-o", tmp_path / "v.csv")
    assert volta.returncode == 2 and "compute capability 7.0" in volta.stderr


def test_any_device_prices_and_flags_every_kernel(tmp_path):
    run = cosim(
        "gpu", DATA / "accelsim-volta-multistream.log", "--model", "ocelot-fermi-aalto2013", "--any-device", "-o", tmp_path / "v.csv"
    )
    assert run.returncode == 0, run.stderr
    kernels = pd.read_csv(tmp_path / "v.csv").query("kind == 'kernel'")
    assert len(kernels) == 3 and kernels["flags"].str.contains("device_mismatch").all()


def test_gpgpusim_run_priced_next_to_its_power_report(tmp_path):
    run = cosim(
        "gpu",
        DATA / "gpgpusim-3.2-gtx480-backprop.log",
        "--model",
        "ocelot-fermi-aalto2013",
        "--compare-with",
        DATA / "gpuwattch-gtx480-backprop.log",
        "-o",
        tmp_path / "g.csv",
    )
    assert run.returncode == 0, run.stderr
    assert "report    83.41 W" in run.stdout and "report    96.04 W" in run.stdout
    kernels = pd.read_csv(tmp_path / "g.csv").query("kind == 'kernel'")
    assert kernels["duration_s"].tolist() == pytest.approx([36455 / 700e6, 27114 / 700e6])
    assert kernels["flags"].str.contains("duration_from_simulator").all()
    assert (kernels["dynamic_w"] > 0).all() and (kernels["dynamic_w"] < 150).all()


def test_soc_timed_by_a_gpu_trace(tmp_path):
    run = cosim(
        "gpu",
        TRACES / "cosim-nvprof-dct.txt",
        "--gpu-trace",
        TRACES / "cosim-nvprof-dct-gputrace.txt",
        "--activity",
        TRACES / "cosim-dct-activity.csv",
        "-o",
        tmp_path / "dct.csv",
    )
    assert run.returncode == 0, run.stderr
    kernels = pd.read_csv(tmp_path / "dct.csv").query("kind == 'kernel'")
    trace = read_gpu_trace(TRACES / "cosim-nvprof-dct-gputrace.txt")
    runs = trace[trace["kind"] == "kernel"]
    assert kernels["kernel"].str[:9].tolist() == runs["kernel"].str[:9].tolist()  # the trace's order: y, y, uv, y, y, uv
    assert kernels["start_s"].to_numpy() == pytest.approx((runs["start_s"] - trace["start_s"].min()).to_numpy(), abs=1e-9)
    assert kernels["duration_s"].to_numpy() == pytest.approx(runs["duration_s"].to_numpy())
    # the trace's copies are memory activity: GPU rail on and idle, the memory rail busy for 2 x bytes at 8 B per cycle
    timeline = pd.read_csv(tmp_path / "dct.csv")
    copies, moves = timeline[timeline["kind"] == "copy"], trace[trace["kind"] == "memcpy"]
    assert len(copies) == len(moves) == 4 and copies["flags"].str.contains("copy_memory_activity").all()
    idle = timeline[timeline["kind"] == "idle"]
    assert (copies["mem_w"].to_numpy() > idle["mem_w"].max()).all()
    tk1 = __import__("cosim").load_rail_model()
    busy_per_s = 2 * moves["size_b"].to_numpy() / 8 / moves["duration_s"].to_numpy()
    mem = tk1.rails["mem"]
    expect = mem.coefficients["other_busy"] * busy_per_s * mem.voltage_v**2
    assert copies["mem_other_busy_w"].to_numpy() == pytest.approx(expect, rel=1e-6)
    soc = cosim(
        "soc",
        TRACES / "cosim-v24-se-biglittle-1800-1400MHz" / "stats.txt.gz",
        "--gpu",
        TRACES / "cosim-nvprof-dct.txt",
        "--gpu-trace",
        TRACES / "cosim-nvprof-dct-gputrace.txt",
        "--activity",
        TRACES / "cosim-dct-activity.csv",
        "-o",
        tmp_path / "soc.csv",
    )
    assert soc.returncode == 0, soc.stderr
    out = pd.read_csv(tmp_path / "soc.csv")
    assert (out["gpu_w"] >= 0).all() and (out["gpu_w"] > 0).any() and math.isfinite(out["energy_j"].sum())


def test_gpu_trace_that_disagrees_with_the_metrics_is_refused(tmp_path):
    text = (
        (TRACES / "cosim-nvprof-dct-gputrace.txt")
        .read_text()
        .replace("dct8x8_uv(unsigned char const *, float*, int) [148]", "dct8x8_y(unsigned char const *, float*, int) [148]")
    )
    (tmp_path / "t.txt").write_text(text)
    run = cosim("gpu", TRACES / "cosim-nvprof-dct.txt", "--gpu-trace", tmp_path / "t.txt", "-o", tmp_path / "x.csv")
    assert run.returncode == 2 and "runs more often in the trace than in the metrics" in run.stderr


@pytest.mark.parametrize(
    "path",
    sorted(p for p in DATA.iterdir() if p.suffix != ".md")
    + [TRACES / "cosim-nvprof-dct-gputrace.txt", TRACES / "cosim-nvprof-dct.csv", TRACES / "cosim-ocelot-video.trace"],
    ids=lambda p: p.name,
)
def test_cosim_read_writes_one_tidy_table(tmp_path, path):
    run = cosim("read", path, "-o", tmp_path / "t.csv")
    assert run.returncode == 0, run.stderr
    table = pd.read_csv(tmp_path / "t.csv", keep_default_na=False, na_values=[""])
    assert tuple(table.columns) == (*COLUMNS, "flags") and table["source"].iloc[0] in FORMATS
    values = pd.to_numeric(table["value"], errors="coerce")
    averaged = table["metric"] == "Num_Idle_SMs"  # AccelWattch's own average, below 0 in one of its rows
    assert values.notna().sum() > 0 and (values[~averaged].dropna() >= 0).all()
    assert set(table["unit"].dropna()) <= {
        "B",
        "s",
        "B/s",
        "Hz",
        "W",
        "count",
        "fraction",
        "level",
        "cycle",
        "count/cycle",
        "register/thread",
        "inst/cycle",
        "V",
        "W^2",
    }


def test_cosim_read_gem5_epochs_and_parquet(tmp_path):
    stats = TRACES / "cosim-v24-se-biglittle-1800-1400MHz" / "stats.txt.gz"
    table = read(stats)
    ticks = table[table["metric"] == "simTicks"]
    from cosim.readers.gem5_stats import read_stats

    assert ticks["value"].tolist() == pytest.approx(read_stats(stats)["duration_s"].tolist())  # ticks -> s
    assert ticks["kernel"].iloc[2] == "epoch 2" and ticks["launch"].iloc[2] == 2 and ticks["unit"].iloc[0] == "s"
    pytest.importorskip("pyarrow")
    run = cosim("read", DATA / "nvprof-gtx980-sessions.log", "-o", tmp_path / "t.parquet")
    assert run.returncode == 0 and len(pd.read_parquet(tmp_path / "t.parquet")) == 58


def test_every_reader_refuses_an_empty_file_in_one_line(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text("")
    for reader in (metric_records, read_gpu_trace, read_gpu_summary, read_ncu, read_gpgpusim, detect_format):
        with pytest.raises(CosimError, match="empty"):
            reader(empty)
    run = cosim("read", empty)
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1 and "empty" in run.stderr


# --- fidelity: L2 sector size, uneven DVFS tables ---------------------------------------------------


def test_l2_traffic_is_counted_in_32_byte_sectors():
    """Stokke et al. 4.2: l2_subp0_total_read_sector_queries counts 32 B reads; only Table 4's per-byte column divides by 16."""
    model, mapping = load_rail_model(), ocelot_map()
    assert model.transaction_bytes["l2_sector"] == 32
    assert mapping["predictors"]["memory_offchip"]["l2r"] == mapping["thread_access_bytes"] / model.transaction_bytes["l2_sector"]
    assert model.transaction_bytes["l2r"] == 16  # reproduces Table 4 as printed (6.73 nWs -> 0.42 nWs/B)


def test_board_levels_accept_uneven_tables(tmp_path):
    from cosim.kernels.log import board_levels

    tx2 = tmp_path / "tx2.json"
    tx2.write_text(
        '{"levels_mhz": {"gpu": [114.75, 216.75, 318.75, 522.75, 624.75, 726.75, 854.25, 930.75, 1032.75, 1122.0, 1236.75, 1300.5],'
        ' "emc": {"min": 40.8, "max": 1866, "count": 3}}}'
    )
    levels = board_levels(tx2)
    assert levels["gpu"][6] == 854.25 and len(levels["emc"]) == 3
    tx2.write_text('{"levels_mhz": {"gpu": [300, 200]}}')
    with pytest.raises(CosimError, match="levels_mhz.gpu must rise strictly"):
        board_levels(tx2)


# --- property-based: every new reader reads back what the tool would print --------------------------

_names = st.from_regex(r"[a-z_][a-z0-9_]{0,20}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            _names, st.integers(1, 10**6), st.floats(0, 1e12, allow_nan=False), st.sampled_from(["", "%", "GB/s", "MB/s", "KB", "ms", "us"])
        ),
        min_size=1,
        max_size=8,
        unique_by=lambda r: r[0],
    )
)
def test_nvprof_metric_lines_read_back(tmp_path_factory, rows):
    lines = [
        "==1== Profiling application: ./a",
        "==1== Profiling result:",
        "==1== Metric result:",
        "Invocations   Metric Name   Metric Description   Min   Max   Avg",
        'Device "GK20A (0)"',
        "    Kernel: k(int*, float)",
    ]
    for name, inv, value, unit in rows:
        text = f"{value:.6g}{unit}"
        lines.append(f"   {inv:>8}   {name:>30}   Some Description (x)   {text}   {text}   {text}")
    path = tmp_path_factory.mktemp("nv") / "m.log"
    path.write_text("\n".join(lines) + "\n")
    got = {r.metric: r for r in metric_records(path)}
    for name, inv, value, unit in rows:
        expect = quantity(f"{value:.6g}{unit}")[0]
        assert got[name].avg == pytest.approx(expect) and got[name].invocations == inv


@settings(max_examples=40, deadline=None)
@given(kernels=st.lists(st.tuples(st.integers(1, 10**9), st.integers(0, 10**7), st.integers(0, 10**7)), min_size=1, max_size=6))
def test_gpgpusim_blocks_read_back(tmp_path_factory, kernels):
    text, cycles, loads, insn_total = "-gpgpu_clock_domains 1000.0:1000.0:1000.0:1000.0\n", 0, 0, 0
    for i, (cyc, insn, load) in enumerate(kernels):
        cycles, loads, insn_total = cycles + cyc, loads + load, insn_total + insn
        text += (
            f"kernel_name = k{i % 2}\nkernel_launch_uid = {i + 1}\ngpu_sim_cycle = {cyc}\ngpu_sim_insn = {insn}\n"
            f"gpu_tot_sim_cycle = {cycles}\ngpu_tot_sim_insn = {insn_total}\ngpgpu_n_tot_thrd_icount = {insn_total}\n"
            f"gpgpu_n_load_insn  = {loads}\n"
            "gpgpu_simulation_time = 0 days, 0 hrs, 0 min, 1 sec (1 sec)\n"  # the simulator ends each block so
        )
    path = tmp_path_factory.mktemp("gs") / "run.log"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CosimWarning)
        runs = read_gpgpusim(path)
    assert runs["gpgpu_n_load_insn"].tolist() == [float(k[2]) for k in kernels]
    assert runs["duration_s"].tolist() == pytest.approx([k[0] / 1e9 for k in kernels])


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.integers(0, 10**12), min_size=1, max_size=6))
def test_ncu_details_read_back_with_thousands_separators(tmp_path_factory, values):
    head = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Section Name","Metric Name","Metric Unit","Metric Value"'
    body = [f'"{i}","1","p","h","k(int)","1","7","S","Elapsed Cycles","cycle","{v:,}"' for i, v in enumerate(values)]
    path = tmp_path_factory.mktemp("ncu") / "n.csv"
    path.write_text("==PROF== Connected to process 1\n" + "\n".join([head, *body]) + "\n")
    assert read_ncu(path)["value"].tolist() == [float(v) for v in values]


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.floats(1e-6, 100, allow_nan=False),
            st.floats(1e-7, 1, allow_nan=False),
            st.sampled_from(["GeForce GTX 980", "GK20A", "Tesla K40c"]),
        ),
        min_size=1,
        max_size=6,
    )
)
# 0.9999999999999999 s: five significant digits make it 1.0000s; the test's formatter once wrote 1000.00ms (six
# digits, one wider than the Start column), which nvprof never prints, and the reader rightly skipped the line
@example(rows=[(0.9999999999999999, 0.9999999999999999, "GK20A")])
def test_gpu_trace_text_reads_back(tmp_path_factory, rows):
    header = (
        "   Start  Duration            Grid Size      Block Size     Regs*    SSMem*    DSMem*           Device   Context    Stream  Name"
    )
    ends = [m.end() for m in __import__("re").finditer(r"\S+(?: \S+)*", header)]
    lines = ["==1== Profiling result:", header]

    def nv(seconds: float) -> str:  # as nvprof prints a time: five significant digits
        seconds = float(f"{seconds:.5g}")  # rounded first, so 999.9999 ms is 1.0000s
        for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
            if seconds >= scale:
                value = seconds / scale
                return f"{value:.{max(0, 5 - len(str(int(value))))}f}{unit}"
        return "0ns"

    for start, dur, device in rows:
        fields = [nv(start), nv(dur), "(1 1 1)", "(32 1 1)", "8", "0B", "0B", device, "1", "7"]
        line = ""
        for value, end in zip(fields, ends[:-1]):
            line += " " * (end - len(line) - len(value)) + value
        lines.append(line + "  kern(int, float*) [7]")
    path = tmp_path_factory.mktemp("tr") / "t.txt"
    path.write_text("\n".join(lines) + "\n")
    trace = read_gpu_trace(path)
    assert sorted(trace["device"]) == sorted(r[2] for r in rows)
    assert sorted(trace["duration_s"]) == pytest.approx(sorted(r[1] for r in rows), rel=1e-4)
