"""Power logs and kernel times of one run beyond nvidia-smi + nsys: a Kokkos energy tool's NVML power CSV and
kernels CSV; a power field read with the wrong averaging window is named.

The files are written here, in the layout of the public pair in docs/howto/gpu-energy-per-kernel.md (the Kokkos
tool's headers, ns on one clock); expected values are computed by hand in each test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cosim.errors import CosimError
from cosim.readers.gpu_logs import read_power_log, read_trace
from cosim.timeline.measured_energy import kernel_energy, window_contradiction


def _kokkos_run(folder):
    """A GPU at 10 W idle; kernel ``solve`` 0.5-2.5 s at 50 W, ``tiny`` 2.6-2.7 s; NVML readings every 0.1 s,
    each the mean of the last second (so 50 W exactly when the whole second lies inside ``solve``)."""
    power = folder / "run_gpu_power.csv"
    rows = ["timestamp_nanoseconds,power_watts,device_id"]
    for i in range(31):
        t = i / 10
        busy = max(0.0, min(t, 2.5) - max(t - 1.0, 0.5)) + max(0.0, min(t, 2.7) - max(t - 1.0, 2.6))
        rows.append(f"{i * 100_000_000},{10 + 40 * busy:.3f},0")
    power.write_text("\n".join(rows) + "\n")
    kernels = folder / "run_kernels.csv"
    kernels.write_text(
        "kernel_id,name,type,start_time_ns,end_time_ns,duration_ns\n"
        '0,"solve",FOR,500000000,2500000000,2000000000\n'
        '0,"tiny",REDUCE,2600000000,2700000000,100000000\n'
    )
    return power, kernels


def test_kokkos_power_and_kernels_measure_by_hand(tmp_path):
    power, kernels = _kokkos_run(tmp_path)
    samples = read_power_log(power)
    trace = read_trace(kernels)
    assert samples.attrs["power"]["window_s"] == 1.0 and len(samples) == 31
    assert list(trace["kernel"]) == ["solve", "tiny"] and trace["end_s"].iloc[0] == pytest.approx(2.5)
    table = kernel_energy(trace, samples, window_s=1.0, offset_s=0.0).set_index("kernel")
    # readings at 1.5, 1.6, ..., 2.5 s see only 'solve': 11 of them, 50 W; 50 W x 2 s = 100 J
    assert table.loc["solve", "samples"] == 11
    assert table.loc["solve", "measured_power_w"] == pytest.approx(50.0)
    assert table.loc["solve", "measured_energy_j"] == pytest.approx(100.0)
    assert table.loc["tiny", "flags"] == "unresolved"  # 0.1 s is shorter than the 1 s window


def test_gpu_energy_lines_a_kokkos_pair_up_on_its_one_clock(tmp_path):
    """Both files count from the tool's zero: no offset is searched for, even when the log's first reading is not at
    that zero (here 0.2 s, the first two readings dropped); 'solve' is 50 W x 2 s = 100 J as above."""
    from helpers import run_cosim as cosim

    power, kernels = _kokkos_run(tmp_path)
    lines = power.read_text().splitlines()
    power.write_text("\n".join([lines[0], *lines[3:]]) + "\n")
    run = cosim("gpu-energy", power, kernels, "-o", tmp_path / "e.csv")
    assert run.returncode == 0, run.stderr
    assert "trace zero at -0.2000 s into the log, from the one clock both files count from (kokkos-tools)" in run.stdout
    solve = pd.read_csv(tmp_path / "e.csv").set_index("kernel").loc["solve"]
    assert solve["measured_energy_j"] == pytest.approx(100.0)


def test_cosim_read_reads_both_kokkos_files_into_the_tidy_table(tmp_path):
    from cosim.readers.tidy import detect_format, read

    power, kernels = _kokkos_run(tmp_path)
    assert (detect_format(power), detect_format(kernels)) == ("kokkos-power", "kokkos-kernels")
    long = read(power)
    watts = long[long["metric"] == "power_watts"]
    assert len(watts) == 31 and set(watts["unit"]) == {"W"} and watts["value"].max() == pytest.approx(50.0)
    assert long[long["metric"] == "timestamp"]["value"].iloc[-1] == pytest.approx(3.0)  # 3000000000 ns
    solve = read(kernels).query("kernel == 'solve'").set_index("metric")["value"]
    assert solve[["start_s", "duration_s", "end_s"]].tolist() == pytest.approx([0.5, 2.0, 2.5])


def test_kokkos_files_refuse_damage_in_one_line(tmp_path):
    power, kernels = _kokkos_run(tmp_path)
    kernels.write_text(kernels.read_text().replace("2000000000\n", "1999000000\n"))
    with pytest.raises(CosimError, match=r"run_kernels.csv:2: start 500000000 \+ duration 1999000000 ns is not end"):
        read_trace(kernels)
    power.write_text(power.read_text() + "3100000000,12.0,1\n")
    with pytest.raises(CosimError, match=r"GPUs 0, 1; say which ran the kernels with --gpu 0"):
        read_power_log(power)
    assert len(read_power_log(power, gpu="1")) == 1


def test_a_step_faster_than_the_window_is_named():
    # 64 -> 295 W between readings 22 ms apart (as an A100 PCIe's power.draw does): no 1 s mean moves so fast
    t = np.arange(0, 3, 0.022)
    samples = pd.DataFrame({"time_s": t, "power_w": np.where(t < 1.0, 64.0, 295.0)})
    why = window_contradiction(samples, 1.0)
    assert "differ by 231 W in 22 ms" in why and "2.2 %" in why
    assert window_contradiction(samples, 0.0) == ""
    # a true 1 s mean of the same step ramps over a second: nothing to say
    ramp = samples.assign(power_w=64.0 + 231.0 * np.clip(t - 1.0, 0.0, 1.0))
    assert window_contradiction(ramp, 1.0) == ""


def test_gpu_energy_warns_of_the_window_and_names_its_way_out(tmp_path):
    from helpers import run_cosim as cosim

    log = tmp_path / "smi.csv"
    lines = ["timestamp, power.draw [W]"] + [
        f"2024/05/01 10:00:{i * 0.05:06.3f}, {64.0 if 1.0 <= i * 0.05 < 2.0 else 20.0:.2f} W" for i in range(60)
    ]
    log.write_text("\n".join(lines) + "\n")
    trace = tmp_path / "k.csv"
    trace.write_text(
        "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),"
        "Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n0,1000000000,1,1,1,1,1,1,1,1,0,0,,,,,GPU (0),1,,7,k\n"
    )
    run = cosim("gpu-energy", log, trace, "--offset-s", "1", "-o", tmp_path / "e.csv")
    assert run.returncode == 0, run.stderr
    assert "power.draw is read as a mean over 1 s" in run.stderr and "--window-s 0" in run.stderr
    again = cosim("gpu-energy", log, trace, "--offset-s", "1", "--window-s", "0", "-o", tmp_path / "e0.csv")
    assert again.returncode == 0 and "mean over" not in again.stderr
    # readings at 1.00, 1.05, ..., 2.00 s lie in the kernel [1, 2] s: 20 at 64 W, the one at 2.00 s back at 20 W
    assert pd.read_csv(tmp_path / "e0.csv")["measured_energy_j"].iloc[0] == pytest.approx((20 * 64.0 + 20.0) / 21 * 1.0)


# --- kernel-fit pair folders from raw logs ---------------------------------------------------------------

NSYS_HEADER = (
    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),"
    "Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n"
)


def _logged_benchmark(folder, bench: str, kernels: list[tuple[str, float, float, float]]) -> None:
    """``<bench>.power.csv`` (nvidia-smi --query-gpu=timestamp,power.draw.instant -lms 50: 50 W idle, a kernel's
    own power while it runs) and ``<bench>.trace.csv`` (nsys cuda_gpu_trace, its zero 1.0 s into the log) of
    ``kernels`` = (name, start [s on the trace], duration [s], power [W]); edges fall between readings."""
    lines = ["timestamp, power.draw.instant [W]"]
    for i in range(100):
        t = i * 0.05
        w = next((p for _, s, d, p in kernels if s + 1.0 <= t <= s + d + 1.0), 50.0)
        lines.append(f"2024/05/01 10:00:{t:06.3f}, {w:.2f} W")
    (folder / f"{bench}.power.csv").write_text("\n".join(lines) + "\n")
    rows = [f"{round(s * 1e9)},{round(d * 1e9)},{n},1,1,1,1,1,1,1,0,0,,,,,GPU (0),1,,7,{name}" for n, (name, s, d, _) in enumerate(kernels)]
    (folder / f"{bench}.trace.csv").write_text(NSYS_HEADER + "\n".join(rows) + "\n")


def test_a_pair_folder_of_raw_logs_gives_each_kernel_its_measured_power(tmp_path):
    from cosim.kernels.pair_folders import read_pair_folders

    ref = tmp_path / "core1000_mem1000"
    ref.mkdir()
    _logged_benchmark(ref, "a", [("k1", 0.025, 0.5, 150.0), ("k1", 1.025, 0.5, 150.0), ("k2", 2.025, 0.3, 100.0)])
    pd.DataFrame([{"benchmark": "b", "kernel": "kb", "runtime_s": 0.2, "power_w": 80.0}]).to_csv(ref / "kernels.csv", index=False)
    low = tmp_path / "core500_mem1000"
    low.mkdir()
    _logged_benchmark(low, "a", [("k1", 0.025, 0.9, 90.0), ("k2", 1.025, 0.6, 70.0)])
    table = read_pair_folders(tmp_path).set_index(["core_mhz", "benchmark", "kernel"]).sort_index()
    # by hand: k1's readings (10 per launch, all 150 W) -> 150 W over 0.5 s; k2's 6 readings at 100 W over 0.3 s
    assert table.loc[(1000.0, "a", "k1"), ["runtime_s", "power_w"]].tolist() == pytest.approx([0.5, 150.0])
    assert table.loc[(1000.0, "a", "k2"), ["runtime_s", "power_w"]].tolist() == pytest.approx([0.3, 100.0])
    assert table.loc[(1000.0, "b", "kb"), "power_w"] == 80.0  # kernels.csv rows kept beside the logged ones
    assert table.loc[(500.0, "a", "k2"), ["runtime_s", "power_w"]].tolist() == pytest.approx([0.6, 70.0])


def test_a_kernel_the_readings_cannot_resolve_is_refused_naming_folder_and_kernel(tmp_path):
    from cosim.kernels.pair_folders import read_pair_folders

    ref = tmp_path / "core1000_mem1000"
    ref.mkdir()
    _logged_benchmark(ref, "a", [("k1", 0.025, 0.5, 150.0), ("blip", 1.025, 0.03, 150.0)])
    with pytest.raises(CosimError, match=r"core1000_mem1000/a: kernel blip .* run it longer .* or give its power_w in kernels.csv"):
        read_pair_folders(tmp_path)
    _logged_benchmark(ref, "a", [("k1", 0.025, 0.5, 150.0)])
    pd.DataFrame([{"benchmark": "a", "kernel": "k1", "runtime_s": 0.5, "power_w": 150.0}]).to_csv(ref / "kernels.csv", index=False)
    with pytest.raises(CosimError, match=r"benchmark a is in kernels.csv and has a power log \+ trace; keep one"):
        read_pair_folders(tmp_path)
    (ref / "kernels.csv").unlink()
    (ref / "a.trace.csv").unlink()
    with pytest.raises(CosimError, match=r"a.power.csv: no a.trace.csv beside it"):
        read_pair_folders(tmp_path)


# --- --compare-with on an AccelWattch report ------------------------------------------------------------

#: Three prefill kernels of a public Accel-Sim 2.0 + AccelWattch H100 run (github.com/DGK1105/accelsim-llm-perf-power
#: @ 9bbb9d08, results/qwen25-0.5b__layer12-fixed): from its accelwattch_power_report.log the launch uid,
#: kernel_avg_power [W], gpu_avg_TOT_INST and gpu_tot_TOT_INST; from the same run's per_kernel_stats.csv
#: gpu_tot_sim_insn and gpu_tot_sim_cycle (kernels launched once in the run).
ACCELWATTCH_H100 = [
    ("nvjet_sm90_tst_64x8_64x16_4x2_h_bz_bias_TNT", "2", 83.99, 14305.4, 200275, 5636376, 7148),
    ("nvjet_sm90_tst_64x8_64x16_4x2_h_bz_TNT", "7", 81.2636, 11365.4, 147750, 4407520, 6695),
    ("nvjet_sm90_tst_64x16_64x16_4x1_v_bz_splitK_TNT", "11", 94.6431, 16702.9, 350760, 9912976, 10684),
]


def _accelwattch_report(folder, rows, *, totals: bool = True):
    """The report's layout (AccelWattch's print_power_kernel_stats: labels with a trailing comma, the kernel's
    totals after its means, each block closed by the run's accumulated power), with only the lines used here."""
    text = ""
    for name, uid, power, mean, total, _, _ in rows:
        text += f"kernel_name = {name} \nkernel_launch_uid = {uid} \n\nKernel Average Power Data:\nkernel_avg_power = {power}\n"
        text += f"gpu_avg_IDLE_COREP, = 31.1\ngpu_avg_TOT_INST, = {mean}\n" + (f"gpu_tot_TOT_INST, = {total}\n" if totals else "")
        text += "\nAccumulative Power Statistics Over Previous Kernels:\ngpu_tot_avg_power = 80.0\n\n\n"
    path = folder / "accelwattch_power_report.log"
    path.write_text(text)
    return path


def _run_of(rows):
    return pd.DataFrame(
        [{"launch": i, "kernel": r[0], "uid": r[1], "gpu_sim_insn": r[5], "gpu_sim_cycle": r[6]} for i, r in enumerate(rows)]
    )


def test_an_accelwattch_report_of_the_same_run_is_accepted_by_its_sample_count(tmp_path):
    from cosim.readers.gpgpusim import check_same_run, read_power_report

    report = read_power_report(_accelwattch_report(tmp_path, ACCELWATTCH_H100))
    assert report["gpu_tot_TOT_INST"].tolist() == [200275, 147750, 350760]
    # by hand: 200275 / 14305.4 = 14 samples in 7148 cycles, 147750 / 11365.4 = 13 in 6695, 350760 / 16702.9 = 21 in
    # 10684: 511, 515 and 509 cycles per sample, one period for the run
    check_same_run(tmp_path / "r.log", report, _run_of(ACCELWATTCH_H100))
    # without the totals (GPUWattch's rule, instructions per sample / IPC) the same run's implied periods are
    # 18.14, 17.26 and 18.00 cycles, 5.1 % apart: AccelWattch's TOT_INST is not gpu_sim_insn, so that rule refused it
    means_only = read_power_report(_accelwattch_report(tmp_path, ACCELWATTCH_H100, totals=False))
    with pytest.raises(CosimError, match="not this run's"):
        check_same_run(tmp_path / "r.log", means_only, _run_of(ACCELWATTCH_H100))


def test_an_accelwattch_report_of_another_run_is_refused_naming_the_kernel(tmp_path):
    from cosim.readers.gpgpusim import check_same_run, read_power_report

    report = read_power_report(_accelwattch_report(tmp_path, ACCELWATTCH_H100))
    other = _run_of(ACCELWATTCH_H100)
    other.loc[2, "gpu_sim_cycle"] = 7148  # the split-K GEMM ran 7148 cycles in this run: 14 samples, not 21
    with pytest.raises(CosimError, match=r"splitK_TNT' has 21 power samples .* give 14\.0: the report is not this run's"):
        check_same_run(tmp_path / "r.log", report, other)


def test_a_pair_folders_dcgm_power_log_is_refused_for_its_missing_times(tmp_path):
    """dcgmi dmon prints no times, so its power cannot be lined up with a trace: one line naming the file and the way
    out (a timed nvidia-smi log, or kernels.csv rows)."""
    import shutil

    from helpers import REPO

    from cosim.kernels.pair_folders import read_pair_folders

    pair = tmp_path / "core1000_mem1000"
    pair.mkdir()
    data = REPO / "tests" / "data" / "gpu"
    shutil.copy(data / "dcgm-v100-dmon.log", pair / "a.power.csv")
    shutil.copy(data / "nsys-cuda-gpu-trace-3-kernels.csv", pair / "a.trace.csv")
    with pytest.raises(CosimError, match=r"a\.power\.csv: a dcgmi dmon log has no times to line up with the trace.*kernels\.csv rows"):
        read_pair_folders(tmp_path)
