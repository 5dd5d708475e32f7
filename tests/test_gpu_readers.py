"""Today's GPU logs (issue 52, item 5): tegrastats, amd-smi/rocm-smi and loggers' CSVs, wide per-GPU logs, ncu's text
report, Accel-Sim blocks of concurrent launches, and --columns.

Every sample is written here by hand in the layout of a real public file (named beside it; the files themselves are
not copied); the expected values are read off the sample by hand."""

from __future__ import annotations

import warnings
from datetime import datetime

import pandas as pd
import pytest
from helpers import REPO

from cosim.errors import CosimError, CosimWarning
from cosim.readers.gpgpusim import read_gpgpusim
from cosim.readers.gpu_logs import read_power_log
from cosim.readers.ncu_text import read_ncu_text
from cosim.readers.power_csv import read_power_csv, timestamp_s
from cosim.readers.tegrastats import read_tegrastats
from cosim.readers.tidy import detect_format, read

# AGX Orin, JetPack 6 --logfile (as Hanner123/LLM_PIPELINE @ 9ab8a8f, tegrastats.log): a time, rails with mW
TEGRA_ORIN = """\
07-21-2025 16:33:42 RAM 17953/62841MB (lfb 9x4MB) SWAP 0/31420MB (cached 0MB) CPU [7%@1728,31%@1036,off,off] EMC_FREQ 12%@204 GR3D_FREQ 39%@[305,0] NVENC off VIC off APE 174 cpu@43.906C gpu@40.093C tj@43.906C VDD_GPU_SOC 2798mW/2798mW VDD_CPU_CV 799mW/799mW VIN_SYS_5V0 3315mW/3315mW
07-21-2025 16:33:43 RAM 17955/62841MB (lfb 9x4MB) SWAP 0/31420MB (cached 0MB) CPU [20%@1728,13%@1036,off,off] EMC_FREQ 12%@204 GR3D_FREQ 40%@[305,0] NVENC off VIC off APE 174 cpu@43.625C gpu@40.062C tj@43.625C VDD_GPU_SOC 4797mW/3798mW VDD_CPU_CV 799mW/799mW VIN_SYS_5V0 3215mW/3265mW
"""
# Jetson Nano, no times, bare mW (as SumantBagri/CSC2231_Project @ 97caa4f, tegrastats.txt)
TEGRA_NANO = """\
RAM 936/3964MB (lfb 366x4MB) SWAP 0/4096MB (cached 0MB) IRAM 0/252kB(lfb 252kB) CPU [10%@102,3%@102,0%@102,0%@102] EMC_FREQ 0%@204 GR3D_FREQ 0%@76 APE 25 PLL@24C CPU@27.5C PMIC@50C GPU@28C AO@29.5C thermal@28C POM_5V_IN 920/920 POM_5V_GPU 0/0 POM_5V_CPU 119/119
RAM 1095/3964MB (lfb 336x4MB) SWAP 0/4096MB (cached 0MB) IRAM 0/252kB(lfb 252kB) CPU [72%@1479,12%@1479,8%@1479,26%@1479] EMC_FREQ 1%@1600 GR3D_FREQ 42%@921 APE 25 PLL@25C CPU@28.5C PMIC@50C GPU@25C AO@30C thermal@28C POM_5V_IN 2793/1856 POM_5V_GPU 2949/1474 POM_5V_CPU 1222/670
"""
# TX2 and AGX Xavier lines (rail names as DataDog/datadog-agent's jetson check tests print them)
TEGRA_TX2 = (
    "RAM 2344/7852MB (lfb 1154x4MB) SWAP 0/3926MB (cached 0MB) CPU [1%@345,off,off,1%@345,0%@345,2%@345] EMC_FREQ 4%@1600 "
    "GR3D_FREQ 0%@624 APE 150 PLL@37.5C MCPU@37.5C PMIC@100C Tboard@32C GPU@35C BCPU@37.5C thermal@36.5C Tdiode@34.25C "
    "VDD_SYS_GPU 152/152 VDD_SYS_SOC 687/687 VDD_4V0_WIFI 0/0 VDD_IN 3056/3056 VDD_SYS_CPU 152/152 VDD_SYS_DDR 883/883\n"
)
TEGRA_XAVIER = (
    "RAM 721/31927MB (lfb 7291x4MB) SWAP 0/15963MB (cached 0MB) CPU [2%@1190,0%@1190,off,off] EMC_FREQ 0%@665 GR3D_FREQ 0%@318 "
    "APE 150 MTS fg 0% bg 0% AO@37.5C GPU@37.5C Tdiode@40C PMIC@100C AUX@36C CPU@37.5C thermal@36.9C Tboard@37C "
    "GPU 0/0 CPU 311/311 SOC 932/932 CV 0/0 VDDRQ 621/621 SYS5V 1482/1482\n"
)
# amd-smi metric --csv --power --energy -w 1 (columns and units from ROCm/amdsmi @ 0ceca28, amdsmi_cli: the flattened
# metric dict, timestamp = int(time.time()), socket_power [W], voltages [mV], total_energy_consumption [J]; -w prints a
# banner and repeats the header every sample)
AMD_SMI = """\
'CTRL' + 'C' to stop watching output:
timestamp,gpu,socket_power,gfx_voltage,soc_voltage,mem_voltage,power_management,total_energy_consumption
1727700000,0,238,N/A,N/A,N/A,ENABLED,178319501.7
timestamp,gpu,socket_power,gfx_voltage,soc_voltage,mem_voltage,power_management,total_energy_consumption
1727700001,0,541,N/A,N/A,N/A,ENABLED,178319891.2
"""
# rocm-smi --showpower --csv (no times: one sample per call)
ROCM_SMI = "device,Average Graphics Package Power (W)\ncard0,35.0\ncard1,41.5\n"
# a logger's own CSV, ISO-8601 times and no units in the values (as karpathy/nanoGPT @ 16a680b, gpu_metrics.csv)
ISO_CSV = """\
timestamp,gpu_index,temperature_C,utilization_gpu_percent,power_W
2025-09-24T03:48:33.493Z,0, 38, 100, 387.26
2025-09-24T03:48:33.493Z,1, 60, 100, 422.55
2025-09-24T03:48:33.593Z,0, 38, 100, 390.11
2025-09-24T03:48:33.593Z,1, 60, 100, 420.05
"""
# pynvml's wide log, one column per GPU, Unix seconds (as seongjunpark17/GPU-power-log @ fc44422, power_log.csv)
WIDE = "timestamp,GPU0,GPU1\n1763638585.215,199.975,256.513\n1763638585.415,196.311,261.444\n1763638585.636,199.308,264.511\n"
# ncu's default text report (layout as ishana23g/heat_eq @ 938c433, ncu_output.txt; an SM 7.5 sgemm)
NCU_TEXT = """\
==PROF== Connected to process 828 (/tmp/cuda_exec.out)
==PROF== Profiling "sgemm" - 0: 0%....50%....100% - 8 passes
==PROF== Disconnected from process 828
[828] cuda_exec.out@127.0.0.1
  sgemm(int, int, int, float, float, const float *, const float *, float *) (32, 32, 1)x(32, 32, 1), Context 1, Stream 7, Device 0, CC 7.5
    Section: GPU Speed Of Light Throughput
    ----------------------- ------------- -------------
    Metric Name               Metric Unit  Metric Value
    ----------------------- ------------- -------------
    DRAM Frequency          cycle/nsecond          5.00
    Elapsed Cycles                  cycle    56,344,784
    Memory Throughput                   %         49.23
    Duration                      msecond         96.32
    ----------------------- ------------- -------------

    OPT   This kernel exhibits low compute throughput and memory bandwidth utilization relative to the peak performance

    Section: Launch Statistics
    -------------------------------- --------------- ---------------
    Metric Name                          Metric Unit    Metric Value
    -------------------------------- --------------- ---------------
    Function Cache Configuration                     CachePreferNone
    Registers Per Thread             register/thread              49
    Waves Per SM                                               25.60
    -------------------------------- --------------- ---------------

  sgemm(int, int, int, float, float, const float *, const float *, float *) (32, 32, 1)x(32, 32, 1), Context 1, Stream 7, Device 0, CC 7.5
    Section: GPU Speed Of Light Throughput
    ----------------------- ------------- -------------
    Metric Name               Metric Unit  Metric Value
    ----------------------- ------------- -------------
    Duration                      usecond        950.40
    ----------------------- ------------- -------------
"""
SAMPLES = {
    "tegrastats": [("orin.log", TEGRA_ORIN), ("nano.txt", TEGRA_NANO), ("tx2.txt", TEGRA_TX2), ("xavier.txt", TEGRA_XAVIER)],
    "power-csv": [("amd.csv", AMD_SMI), ("rocm.csv", ROCM_SMI), ("iso.csv", ISO_CSV), ("wide.csv", WIDE)],
    "ncu-text": [("ncu.txt", NCU_TEXT)],
}


def cosim(capsys, *args) -> tuple[int, str]:
    """``cosim ARGS`` in this process (as the CLI runs it: one-line errors on stderr, an exit status): (status, stderr)."""
    from cosim.cli import main

    status = main([str(a) for a in args])
    return status, capsys.readouterr().err


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


def _epoch(text: str, fmt: str) -> float:
    return (datetime.strptime(text, fmt) - datetime(1970, 1, 1)).total_seconds()


@pytest.mark.parametrize(
    ("fmt", "sample"), [(f, s) for f, ss in SAMPLES.items() for s in ss], ids=lambda v: v if isinstance(v, str) else v[0]
)
def test_each_sample_is_told_by_its_content(fmt, sample, tmp_path):
    assert detect_format(write(tmp_path, *sample)) == fmt


def test_tegrastats_orin_rails_load_clock_and_time(tmp_path):
    t = read_tegrastats(write(tmp_path, "orin.log", TEGRA_ORIN))
    assert t.attrs["tegrastats"]["rails"] == ["VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0"]
    assert t["VDD_GPU_SOC_w"].tolist() == [2.798, 4.797] and t["VDD_GPU_SOC_avg_w"].tolist() == [2.798, 3.798]
    assert t["gr3d_load"].tolist() == [0.39, 0.40] and t["gr3d_freq_hz"].tolist() == [305e6, 305e6]
    assert t["time_s"].tolist() == [_epoch("2025-07-21 16:33:42", "%Y-%m-%d %H:%M:%S"), _epoch("2025-07-21 16:33:43", "%Y-%m-%d %H:%M:%S")]
    power = read_power_log(tmp_path / "orin.log")  # the GPU's rail, the reading at each sample
    assert power.attrs["power"]["field"] == "VDD_GPU_SOC" and power.attrs["power"]["window_s"] == 0.0
    assert power["power_w"].tolist() == [2.798, 4.797]


@pytest.mark.parametrize(
    ("text", "gpu_rail", "watts"),
    [(TEGRA_NANO, "POM_5V_GPU", [0.0, 2.949]), (TEGRA_TX2, "VDD_SYS_GPU", [0.152]), (TEGRA_XAVIER, "GPU", [0.0])],
    ids=["nano", "tx2", "xavier"],
)
def test_tegrastats_without_times_needs_the_interval(text, gpu_rail, watts, tmp_path):
    path = write(tmp_path, "t.txt", text)
    with pytest.raises(CosimError, match="wrote no times; give its --interval with --period-s"):
        read_power_log(path)
    power = read_power_log(path, period_s=0.5)
    assert power.attrs["power"]["field"] == gpu_rail and power["power_w"].tolist() == watts
    assert power["time_s"].tolist() == [0.5 * i for i in range(len(watts))]
    assert (
        read_power_log(path, period_s=1.0, field="VDD_IN" if "VDD_IN" in text else "SYS5V" if "SYS5V" in text else "POM_5V_IN")[
            "power_w"
        ].iloc[0]
        == {"nano": 0.92, "tx2": 3.056, "xavier": 1.482}["nano" if "POM" in text else "tx2" if "VDD_SYS" in text else "xavier"]
    )


def test_amd_smi_watch_log_power_energy_counter_and_repeated_headers(tmp_path):
    t = read_power_csv(write(tmp_path, "amd.csv", AMD_SMI))
    assert t["time_s"].tolist() == [1727700000.0, 1727700001.0] and t["power_w"].tolist() == [238.0, 541.0]
    assert t["energy_j"].tolist() == [178319501.7, 178319891.2]  # amd-smi prints J (energy_accumulator x resolution / 1e6)
    assert t.attrs["power_csv"]["energy_unit"] == "j"
    long = read(tmp_path / "amd.csv")
    assert set(long["metric"]) == {"timestamp", "power_w", "energy_j"} and set(long["unit"]) == {"s", "W", "J"}


def test_amd_smi_full_metric_log_of_eight_gpus(tmp_path):
    # amd-smi metric --csv -w of an MI355X node, in the layout of SemiAnalysisAI/InferenceX @ 3421d89, gpu_metrics.csv:
    # 114 columns, list-valued cells quoted, a blank line between samples, no energy counter; numbers made here
    clocks = ",".join(f"gfx_{i}_{k}" for i in range(8) for k in ("clk", "min_clk", "max_clk", "clk_locked", "deep_sleep"))
    others = ("mem_0", "vclk_0", "vclk_1", "vclk_2", "vclk_3", "dclk_0", "dclk_1", "dclk_2", "dclk_3", "fclk_0", "socclk_0")
    header = (
        "timestamp,gpu,gfx_activity,umc_activity,mm_activity,vcn_activity,jpeg_activity,gfx_busy_inst_xcp_0,jpeg_busy_xcp_0,"
        f"vcn_busy_xcp_0,socket_power,gfx_voltage,soc_voltage,mem_voltage,throttle_status,power_management,{clocks},"
        + ",".join(f"{d}_{k}" for d in others for k in ("clk", "min_clk", "max_clk", "clk_locked", "deep_sleep"))
        + ",edge,hotspot,mem"
    )
    lists = '"[\'N/A\', \'N/A\']","[\'N/A\']","[0, 0]","[0, 0, 0]","[0]"'
    per_clock = ",".join(["95,500,2400,DISABLED,ENABLED"] * 8 + ["2000,2000,2000,N/A,DISABLED"] + ["59,1900,1900,N/A,ENABLED"] * 10)

    def row(t: int, gpu: int, watts: int) -> str:
        return f"{t},{gpu},3,0,N/A,{lists},{watts},N/A,N/A,N/A,N/A,ENABLED,{per_clock},N/A,{37 + gpu},23"

    lines = [header] + [row(1786553852, g, 238 + g) for g in range(8)] + [""] + [row(1786553853, g, 540 + g) for g in range(8)]
    path = write(tmp_path, "gpu_metrics.csv", "\n".join(lines) + "\n")
    assert len(header.split(",")) == 114 and detect_format(path) == "power-csv"
    t = read_power_csv(path)
    assert len(t) == 16 and t[t["gpu"] == "3"]["power_w"].tolist() == [241.0, 543.0]
    assert t["gfx_0_clk"].iloc[0] == 95e6 and t["gfx_activity"].iloc[0] == 0.03 and t["hotspot"].iloc[3] == 40.0
    assert read_power_log(path, gpu="7")["time_s"].tolist() == [1786553852.0, 1786553853.0]


def test_rocm_smi_csv_per_card_and_no_times(tmp_path):
    path = write(tmp_path, "rocm.csv", ROCM_SMI)
    t = read_power_csv(path)
    assert t.set_index("gpu")["power_w"].to_dict() == {"card0": 35.0, "card1": 41.5}
    with pytest.raises(CosimError, match="readings without times"):
        read_power_log(path, gpu="card1")
    assert read_power_log(path, gpu="card1", period_s=2.0)["power_w"].tolist() == [41.5]


def test_iso_times_and_wide_per_gpu_logs(tmp_path):
    iso = read_power_csv(write(tmp_path, "iso.csv", ISO_CSV))
    assert iso[iso["gpu"] == "1"]["power_w"].tolist() == [422.55, 420.05]
    zero = _epoch("2025-09-24 03:48:33", "%Y-%m-%d %H:%M:%S")
    assert iso[iso["gpu"] == "0"]["time_s"].tolist() == [zero + 0.493, zero + 0.593]
    wide = read_power_log(write(tmp_path, "wide.csv", WIDE), gpu="1")
    assert wide["power_w"].tolist() == [256.513, 261.444, 264.511] and wide["time_s"].iloc[0] == 1763638585.215
    with pytest.raises(CosimError, match="GPUs 0, 1; say which ran the kernels with --gpu 0"):
        read_power_log(tmp_path / "wide.csv")


def test_timestamps_as_loggers_write_them():
    assert timestamp_s("1970-01-01T00:00:01.5Z", where="x") == 1.5
    assert timestamp_s("1970-01-01T01:00:01,250000000+01:00", where="x") == 1.25  # date --iso-8601=ns, its zone applied
    assert timestamp_s("1970/01/01 00:00:02.125", where="x") == 2.125
    assert timestamp_s("1700000000.25", where="x") == 1700000000.25
    with pytest.raises(CosimError, match="not ISO-8601"):
        timestamp_s("yesterday", where="f:3")


def test_nvidia_smi_bare_header_with_iso_times_split_by_date_comma(tmp_path):
    # a logger's own header (no units) over nvidia-smi --format=csv,noheader,nounits, times from date --iso-8601=ns
    path = write(
        tmp_path,
        "smi.csv",
        "timestamp,utilization.gpu,memory.used,power.draw\n"
        "1970-01-01T00:00:10,250000000+00:00,45,2000,61.25\n1970-01-01T00:00:10,350000000+00:00,99,2100,181.5\n",
    )
    assert detect_format(path) == "nvidia-smi"
    power = read_power_log(path)
    assert power["time_s"].tolist() == [10.25, 10.35] and power["power_w"].tolist() == [61.25, 181.5]
    long = read(path).set_index("metric")
    assert long.loc["memory.used", "unit"].iloc[0] == "B" and long.loc["memory.used", "value"].iloc[0] == 2000 * 2**20


def test_ncu_text_report_as_the_csv_reader_gives_it(tmp_path):
    t = read_ncu_text(write(tmp_path, "ncu.txt", NCU_TEXT))
    assert t["launch"].tolist() == [0] * 7 + [1]
    d = t.set_index(["launch", "metric"])["value"]
    assert d[(0, "Duration")] == pytest.approx(96.32e-3, rel=1e-15) and d[(1, "Duration")] == pytest.approx(950.40e-6, rel=1e-15)
    assert d[(0, "DRAM Frequency")] == pytest.approx(5e9) and d[(0, "Elapsed Cycles")] == 56_344_784
    assert d[(0, "Memory Throughput")] == pytest.approx(0.4923) and d[(0, "Waves Per SM")] == 25.6
    assert d[(0, "Function Cache Configuration")] != d[(0, "Function Cache Configuration")]  # text: kept, no number
    assert set(t["device"]) == {"0"} and set(t["capability"]) == {"7.5"}


def test_accel_sim_concurrent_block_is_one_flagged_row_and_the_rest_are_kept(tmp_path):
    text = (REPO / "tests" / "data" / "gpu" / "accelsim-volta-multistream.log").read_text()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CosimWarning)
        before = read_gpgpusim(write(tmp_path, "plain.log", text))
    text = text.replace(
        "kernel_name = _Z9vectorAddPKfS0_Pfi\nkernel_launch_uid = 3", "kernel_name = _Z5saxpyifPfS_ _Z5saxpyifPfS_\nkernel_launch_uid = 1 3"
    )
    with pytest.warns(CosimWarning, match=r"1 statistics block\(s\) for launches that ran at once \(kernel_launch_uid = 1 3\)"):
        runs = read_gpgpusim(write(tmp_path, "run.log", text))
    assert len(runs) == len(before)  # every other kernel of the file kept
    row = runs[runs["uid"] == "1 3"].iloc[0]
    assert "concurrent_launches" in row["flags"].split(";") and row["kernel"] == "_Z5saxpyifPfS_ _Z5saxpyifPfS_"
    assert (runs["flags"].str.contains("concurrent_launches")).sum() == 1


def test_columns_map_a_power_log_and_a_kernel_table(tmp_path, capsys):
    log = write(tmp_path, "meter.csv", "Time,Watts,Note\n0.0,100.5,a\n0.5,150.25,b\n")
    with pytest.raises(CosimError, match="not a format cosim reads.*--columns"):
        read(log)
    status, err = cosim(capsys, "read", log, "--columns", "time_s=Time,power_w=Watts", "-o", tmp_path / "p.csv")
    assert status == 0, err
    long = pd.read_csv(tmp_path / "p.csv")
    assert long.loc[long["metric"] == "power_w", "value"].tolist() == [100.5, 150.25]
    assert read_power_log(log, columns={"time_s": "Time", "power_mw": "Watts"})["power_w"].tolist() == [0.1005, 0.15025]
    # an NV-DVFS-style table: its own names, runtime in ms
    table = write(tmp_path, "dvfs.csv", "appName,kernelName,coreF,memF,time,avgPower,dram_util\nBS,bs,1000,3505,2.5,120.5,0.7\n")
    status, err = cosim(
        capsys, "read", table, "--columns", "core_mhz=coreF,mem_mhz=memF,runtime_ms=time,power_w=avgPower", "-o", tmp_path / "x.csv"
    )
    assert status != 0 and "missing column(s) benchmark, kernel" in err
    status, err = cosim(
        capsys,
        "read",
        table,
        "--columns",
        "benchmark=appName,kernel=kernelName,core_mhz=coreF,mem_mhz=memF,runtime_ms=time,power_w=avgPower",
        "-o",
        tmp_path / "k.csv",
    )
    assert status == 0, err
    k = pd.read_csv(tmp_path / "k.csv").iloc[0]
    assert (k["benchmark"], k["core_mhz"], k["runtime_s"], k["power_w"], k["dram_util"]) == ("BS", 1000.0, 0.0025, 120.5, 0.7)
    status, err = cosim(capsys, "read", table, "--columns", "power=avgPower", "-o", tmp_path / "y.csv")
    assert status != 0 and "'power' is not a name cosim maps" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("sample", "line", "old"), [("nvprof-rtx2080ti-gpu-trace.csv", 8, "2.080000"), ("nsys-cuda-gpu-trace-3-kernels.csv", 3, "500000000")]
)
def test_a_time_past_any_trace_is_one_line_not_an_internal_error(sample, line, old, tmp_path, capsys):
    """Found by the fuzz (a duration of 1e400 in an nvprof trace: 'internal error: OverflowError', exit 4): a trace's
    times are held as int64 ns, so a time over 2^63 ns (292 years) or infinite is a damaged row, said on its line."""
    lines = (REPO / "tests" / "data" / "gpu" / sample).read_text().split("\n")
    assert old in lines[line - 1]
    for bad in ("1e400", str(2**64)):
        lines_bad = [*lines[: line - 1], lines[line - 1].replace(old, bad, 1), *lines[line:]]
        path = write(tmp_path, sample, "\n".join(lines_bad))
        status, err = cosim(capsys, "read", path, "-o", tmp_path / "out.csv")
        assert status in (0, 2) and "internal error" not in err, err
        assert f"{path}:{line}" in err  # the damaged row named, whether skipped (with a warning) or refused
