"""Kernel runtime and power across core and memory clocks: the GTX 980 logs of Wang & Chu (ICPADS 2018) from
../shared (skipped when absent), and hand-written logs of the same shape."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import SHARED, run_cosim
from hypothesis import given, settings
from hypothesis import strategies as st

from cosim import CosimError
from cosim.kernels.dvfs import check_table, with_profiles
from cosim.kernels.dvfs_eval import errors, lobo, off_reference
from cosim.kernels.dvfs_models import fit_family, predict_ratios
from cosim.readers.dvfs_logs import plateau, read_dvfs_folder
from cosim.readers.nvprof_trace import read_gpu_summary

# find_spec, not importorskip: collection on every xdist worker would import sklearn (about 1 CPU s) for nothing
pytestmark = pytest.mark.skipif(importlib.util.find_spec("sklearn") is None, reason="sklearn is not installed")

LOGS = SHARED / "data" / "gpu-dvfs" / "gtx980-wang2018" / "logs"
needs_logs = pytest.mark.skipif(not LOGS.is_dir(), reason="../shared GTX 980 DVFS logs not present")


@pytest.fixture(scope="module")
def gtx980(tmp_path_factory):
    from helpers import once_a_run

    return once_a_run(tmp_path_factory, "gtx980-logs", lambda: read_dvfs_folder(LOGS))  # once a run, not per xdist worker


def _subset(tmp: Path, benches: list[str], skip: set[str] = frozenset()) -> Path:
    """A folder of links to some benchmarks' real logs (the logs stay in ../shared)."""
    folder = tmp / "logs"
    folder.mkdir()
    for p in LOGS.iterdir():
        if any(p.name.startswith(f"benchmark_{b}_core") for b in benches) and p.name not in skip:
            os.symlink(p, folder / p.name)
    return folder


# --- reading the real logs -----------------------------------------------------------------------------


@needs_logs
def test_the_folder_reads_as_one_row_per_benchmark_kernel_and_pair(gtx980):
    assert len(gtx980) == 17 * 16 and gtx980["benchmark"].nunique() == 17
    assert set(gtx980["core_mhz"]) == set(gtx980["mem_mhz"]) == {400.0, 600.0, 800.0, 1000.0}
    assert gtx980["power_samples"].min() >= 40  # ~10 s of ~0.2 s samples per plateau
    bp = gtx980[(gtx980["benchmark"] == "backprop") & (gtx980["core_mhz"] == 1000) & (gtx980["mem_mhz"] == 1000)].iloc[0]
    assert bp["kernel"] == "bpnn_layerforward_CUDA"  # the study's kernel, not the longer bpnn_adjust_weights_cuda
    assert bp["runtime_s"] == pytest.approx(200.34e-6)  # the perf log's summary: Avg 200.34us
    # the log's first plateau (layerforward) sits at 60.2-64.1 W, the second kernel's at 54.9-57.1 W
    assert 60.2 < bp["power_w"] < 64.1
    assert bp["core_mhz_sampled"] == 999 and bp["dram_read_throughput"] > 1e9 and 0 < bp["achieved_occupancy"] <= 1
    nn = gtx980[(gtx980["benchmark"] == "nn") & (gtx980["core_mhz"] == 400) & (gtx980["mem_mhz"] == 400)].iloc[0]
    assert 26.614 < nn["power_w"] < 26.859  # the log's plateau: 26614 and 26859 mW samples only
    assert nn["core_mhz_sampled"] == 405


@needs_logs
def test_the_summary_of_an_old_nvprof_leaves_api_calls_out():
    summary = read_gpu_summary(LOGS / "benchmark_backprop_core1000_mem1000_input00_perf.log")
    assert not any(n.startswith("cuda") for n in summary["name"]) and len(summary) == 4


@needs_logs
def test_cosim_read_of_the_folder_writes_the_table(tmp_path):
    out = tmp_path / "t.csv"
    r = run_cosim("read", _subset(tmp_path, ["nn", "scan", "bfs"]), "-o", out)
    assert r.returncode == 0, r.stderr
    assert "48 row(s)" in r.stdout and "0 pair(s) dropped" in r.stdout
    table = pd.read_csv(out)
    assert list(table.columns[:6]) == ["benchmark", "kernel", "core_mhz", "mem_mhz", "runtime_s", "power_w"]
    # the documented path: the table cosim read wrote (its flags column included) fits as it is, into a .json model
    fit = run_cosim("kernel-fit", out, "-o", tmp_path / "gtx980-model.json")
    assert fit.returncode == 0, fit.stderr
    assert (tmp_path / "gtx980-model.json").read_text().lstrip().startswith("{")
    # a blank feature is a pair the kernel was not profiled at: refused only in the profile the model reads
    at_ref = (table["core_mhz"] == 1000) & (table["mem_mhz"] == 1000)
    table.assign(achieved_occupancy=table["achieved_occupancy"].where(at_ref)).to_csv(tmp_path / "once.csv", index=False)
    once = run_cosim("kernel-fit", tmp_path / "once.csv", "-o", tmp_path / "m.json", "--family", "physics")
    assert once.returncode == 0 and "reference 1000,1000 MHz" in once.stdout, once.stderr
    first = table.index[at_ref][0]
    blank = table.assign(achieved_occupancy=table["achieved_occupancy"].where(table.index != first))
    blank.to_csv(tmp_path / "blank.csv", index=False)
    refused = run_cosim("kernel-fit", tmp_path / "blank.csv", "-o", tmp_path / "m.json", "--reference-pair", "1000,1000")
    b, k = table.loc[first, ["benchmark", "kernel"]]
    assert refused.returncode == 2 and f"{b}/{k}'s profile at the reference pair 1000,1000 MHz has no achieved_occupancy" in refused.stderr
    inf = table.assign(achieved_occupancy=table["achieved_occupancy"].where(table.index != 3, np.inf))
    inf.to_csv(tmp_path / "inf.csv", index=False)
    refused = run_cosim("kernel-fit", tmp_path / "inf.csv", "-o", tmp_path / "m.json")
    assert refused.returncode == 2 and "row 5: feature column achieved_occupancy has no finite value" in refused.stderr


@needs_logs
def test_missing_logs_drop_their_pairs_and_say_so(tmp_path):
    folder = _subset(tmp_path, ["nn", "scan"], skip={"benchmark_scan_core400_mem600_input00_power.log"})
    r = run_cosim("read", folder, "-o", tmp_path / "t.csv")
    assert r.returncode == 0, r.stderr
    assert "31 row(s)" in r.stdout and "1 pair(s) dropped" in r.stdout
    assert "scan core 400 mem 600 (no power)" in r.stderr


@needs_logs
def test_a_metrics_log_of_another_device_is_refused(tmp_path):
    folder = _subset(tmp_path, ["nn", "scan"])
    name = "benchmark_scan_core600_mem600_input00_metrics.log"
    (folder / name).unlink()
    (folder / name).write_text((LOGS / name).read_text().replace("GeForce GTX 980 (1)", "GeForce GTX 1080 (0)"))
    r = run_cosim("read", folder, "-o", tmp_path / "t.csv")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert name in r.stderr and "GeForce GTX 1080" in r.stderr and len(r.stderr.strip().splitlines()) == 1


# --- leave-one-benchmark-out on the real data -------------------------------------------------------------


@needs_logs
def test_unseen_benchmarks_are_predicted_within_the_anchors(gtx980):
    rows = with_profiles(gtx980, reference=(1000.0, 1000.0), source="gtx980")
    pred = lobo(rows, "physics")
    err = errors(pred, off_reference(pred, rows)).loc["all"]
    # anchors: Wang & Chu 3.85-8.83 % runtime, Guerreiro et al. 6-12 % power; the issue: <= 10 % at the very least
    assert err["runtime_mape"] <= 10 and err["power_mape"] <= 10
    assert err["runtime_mape"] < 26  # runtime x 1000/f_core alone is 26 % off (measured with the issue)
    assert err["runtime_coverage"] >= 80 and err["power_coverage"] >= 80  # 90 % intervals


# --- the method on hand-made data ---------------------------------------------------------------------------


def _roofline_table(n: int = 8, seed: int = 0) -> pd.DataFrame:
    """Kernels whose runtime is max(compute / f_core, memory / f_mem) exactly; power 10 W static + 10 W x f_core / 1 GHz
    (clock tree) + 30 W x the work rate (1 ms / runtime)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        share = (i + 0.5) / n  # memory share at 1000/1000
        for core in (400.0, 600.0, 800.0, 1000.0):
            for mem in (400.0, 600.0, 800.0, 1000.0):
                t = 1e-3 * max((1 - share) * 1000 / core, share * 1000 / mem)
                rows.append(
                    {
                        "benchmark": f"b{i}",
                        "kernel": f"k{i}",
                        "core_mhz": core,
                        "mem_mhz": mem,
                        "runtime_s": t,
                        "power_w": 10 + 10 * core / 1000 + 30 * 1e-3 / t,
                        "dram_read_throughput": share * 60e9 * (1 + 0.01 * rng.standard_normal()),
                        "dram_write_throughput": 0.0,
                        "ipc": 1.0,
                        "achieved_occupancy": 0.8,
                        "device": "GPU X",
                    }
                )
    return pd.DataFrame(rows)


def test_physics_family_recovers_a_roofline():
    rows = with_profiles(check_table(_roofline_table(), source="t"), reference=(1000.0, 1000.0), source="t")
    model = fit_family("physics", rows)
    rt, pw = predict_ratios("physics", model, rows)
    assert np.mean(np.abs(rt * rows["runtime_s_ref"] / rows["runtime_s"] - 1)) < 0.03
    assert np.mean(np.abs(pw * rows["power_w_ref"] / rows["power_w"] - 1)) < 0.03


def test_a_prediction_uses_only_the_reference_pair_profile():
    rows = with_profiles(check_table(_roofline_table(), source="t"), reference=(1000.0, 1000.0), source="t")
    model = fit_family("physics", rows)
    table = _roofline_table()
    other = ~((table["core_mhz"] == 1000) & (table["mem_mhz"] == 1000))
    changed = table.copy()
    changed.loc[other, ["dram_read_throughput", "ipc"]] *= 7.0
    for family, fitted in (("physics", model), ("trees", fit_family("trees", rows))):
        a = predict_ratios(family, fitted, with_profiles(check_table(table, source="t"), reference=(1000.0, 1000.0), source="t"))
        b = predict_ratios(family, fitted, with_profiles(check_table(changed, source="t"), reference=(1000.0, 1000.0), source="t"))
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])


def _power_log(idle_mw: int, active_mw: int, n_idle: int, n_active: int) -> str:
    rows = [f"5\t999\t999\t{idle_mw}\t" for _ in range(n_idle)]
    rows += [f"5\t999\t999\t{active_mw}\t" for _ in range(n_active)]
    rows += [f"5\t999\t999\t{idle_mw}\t" for _ in range(n_idle)]
    return "Device 0: is GeForce GTX 980\nP-state\tCore-F(MHz)\tMem-F(MHz)\tPower(mW)\t\n" + "\n".join(rows) + "\n"


@settings(max_examples=40, deadline=None)
@given(
    idle=st.integers(15_000, 40_000),
    rise=st.integers(3_000, 200_000),
    n_idle=st.integers(5, 30),
    n_active=st.integers(5, 120),
)
def test_the_plateau_is_the_active_samples_less_the_edges(idle, rise, n_idle, n_active):
    import tempfile

    from cosim.readers.dvfs_logs import power_samples

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "p_power.log"
        path.write_text(_power_log(idle, idle + rise, n_idle, n_active))
        w = power_samples(path)[:, 2]
    keep = plateau(w, source="p")
    assert keep.stop - keep.start == n_active - 2
    assert w[keep].mean() == pytest.approx((idle + rise) / 1000)


def test_a_kernel_shorter_than_a_sample_has_no_plateau():
    w = np.array([21.0] * 20 + [24.0] + [21.0] * 20)  # one sample caught the kernel
    with pytest.raises(CosimError, match="no active plateau"):
        plateau(w, source="p.log")
    with pytest.raises(CosimError, match="no active plateau"):
        plateau(np.full(40, 21.0), source="p.log")


# --- the commands -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    d = tmp_path_factory.mktemp("fit")
    _roofline_table().to_csv(d / "t.csv", index=False)
    r = run_cosim("kernel-fit", d / "t.csv", "-o", d / "m.json")
    assert r.returncode == 0, r.stderr
    return d


def test_predict_writes_the_documented_columns_at_every_pair_of_the_lists(fitted):
    out = fitted / "p.csv"
    r = run_cosim("kernel-predict", fitted / "m.json", fitted / "t.csv", "--core-mhz", "500,900", "--mem-mhz", "700", "-o", out)
    assert r.returncode == 0, r.stderr
    pred = pd.read_csv(out)
    assert len(pred) == 8 * 2
    for col in (
        "benchmark",
        "kernel",
        "core_mhz",
        "mem_mhz",
        "runtime_s_pred",
        "power_w_pred",
        "energy_j_pred",
        "runtime_s_lo",
        "energy_j_hi",
    ):
        assert col in pred.columns
    assert (pred["runtime_s_lo"] <= pred["runtime_s_pred"]).all() and (pred["runtime_s_pred"] <= pred["runtime_s_hi"]).all()


def test_choose_saves_energy_on_a_memory_bound_kernel(fitted):
    # the physics family: its max-like roofline holds this table's form (the roofline family takes a memory-bound
    # kernel's hidden compute share from DRAM activity alone, and its per-pair power fit has 7 benchmarks here)
    args = ("--deadline-factor", "1.1", "-o", fitted / "c.csv", "--family", "physics")
    r = run_cosim("kernel-choose", fitted / "m.json", fitted / "t.csv", *args)
    assert r.returncode == 0, r.stderr
    picked = pd.read_csv(fitted / "c.csv").set_index("benchmark")
    # b7: memory share 15/16 at 1000/1000: core 400 MHz keeps the runtime (compute 1/16 x 1000/400 < 15/16) and
    # saves 6 W of clock-tree power
    assert picked.loc["b7", "core_mhz"] == 400 and picked.loc["b7", "mem_mhz"] == 1000
    assert picked.loc["b7", "saving_measured_pct"] > 0


def test_a_power_cap_some_kernels_cannot_meet_keeps_every_kernels_row(fitted):
    """The table's power is 10 + 10 x f_core/1 GHz + 30 x (1 ms / runtime) W: its lowest over the 16 measured pairs
    is 26.8 W for b0 and b7 (compute- and memory-bound), 35.3 W for b3 and b4 (balanced); a cap of 30 W leaves the
    balanced kernels with no pair."""
    table = _roofline_table()
    least_w = table.groupby("benchmark")["power_w"].min()
    out = fitted / "cap.csv"
    r = run_cosim("kernel-choose", fitted / "m.json", fitted / "t.csv", "--power-cap", "30", "-o", out, "--family", "physics")
    assert r.returncode == 3, r.stderr  # kept but incomplete, as cosim power's partial output
    assert "Traceback" not in r.stderr
    picked = pd.read_csv(out).set_index("benchmark")
    picked["reason"] = picked["reason"].fillna("")
    assert sorted(picked.index) == sorted(table["benchmark"].unique())  # every kernel's row is written
    over = least_w[least_w > 30 * 1.1].index  # measured above the cap at every pair, by more than 10 %
    under = least_w[least_w < 30 * 0.95].index
    assert {"b3", "b4"} <= set(over) and {"b0", "b7"} <= set(under)
    for b in over:
        assert np.isnan(picked.loc[b, "core_mhz"]) and np.isnan(picked.loc[b, "mem_mhz"])
        assert "no clock pair surely under --power-cap 30 W" in picked.loc[b, "reason"]
        assert f"{b}/k{b[1:]}" in r.stderr
    for b in under:
        assert picked.loc[b, "core_mhz"] > 0 and picked.loc[b, "reason"] == ""
        chosen = table[(table["benchmark"] == b) & (table["core_mhz"] == picked.loc[b, "core_mhz"])]
        assert (chosen[chosen["mem_mhz"] == picked.loc[b, "mem_mhz"]]["power_w"] <= 30).all()
    assert (picked["candidate_pairs"] == 16).all()
    unmet = int((picked["reason"] != "").sum())
    assert f"{8 - unmet} of 8 kernel(s) given clocks" in r.stdout and f"{unmet} of 8 kernel(s) have no clock pair" in r.stderr
    r = run_cosim(
        "kernel-choose", fitted / "m.json", fitted / "t.csv", "--power-cap", "30", "-o", out, "--allow-partial", "--family", "physics"
    )
    assert r.returncode == 0, r.stderr


def test_choosing_among_one_pair_is_refused_and_the_pairs_tried_are_said(fitted, tmp_path):
    t = _roofline_table()
    t[(t["core_mhz"] == 1000) & (t["mem_mhz"] == 1000)].to_csv(tmp_path / "profiles.csv", index=False)
    args = ("kernel-choose", fitted / "m.json", tmp_path / "profiles.csv", "--deadline-factor", "1.1")
    r = run_cosim(*args, "-o", tmp_path / "c.csv")
    assert r.returncode == 2 and "nothing to choose from" in r.stderr and "--core-mhz" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "c.csv").exists()
    r = run_cosim(*args, "--core-mhz", "400,1000", "--mem-mhz", "400,1000", "-o", tmp_path / "c.csv")
    assert r.returncode == 0, r.stderr
    assert pd.read_csv(tmp_path / "c.csv")["candidate_pairs"].eq(4).all() and "best of 4 pair(s)" in r.stdout


def test_bad_tables_and_devices_are_refused_in_one_line(fitted, tmp_path):
    t = _roofline_table()
    t.drop(columns=["power_w"]).to_csv(tmp_path / "no_power.csv", index=False)
    t.assign(device="GPU Y").to_csv(tmp_path / "other.csv", index=False)
    t[~((t["benchmark"] == "b0") & (t["core_mhz"] == 1000) & (t["mem_mhz"] == 1000))].to_csv(tmp_path / "no_ref.csv", index=False)
    cases = {
        ("kernel-fit", tmp_path / "no_power.csv", "-o", tmp_path / "x.json"): "missing column(s) power_w",
        ("kernel-predict", fitted / "m.json", tmp_path / "other.csv", "-o", tmp_path / "x.csv"): "fitted on 'GPU X'",
        ("kernel-predict", fitted / "m.json", tmp_path / "no_ref.csv", "-o", tmp_path / "x.csv"): "no profile at the reference pair",
        ("kernel-predict", fitted / "m.json", fitted / "t.csv", "--core-mhz", "2000", "--mem-mhz", "800"): "outside the fitted range",
    }
    for args, words in cases.items():
        r = run_cosim(*args)
        assert r.returncode != 0 and "Traceback" not in r.stderr, args
        assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "x.csv").exists()


@needs_logs
def test_a_device_refusal_in_cosim_gpu_points_at_the_kernel_models(tmp_path):
    log = tmp_path / "m.log"
    shutil.copy(LOGS / "benchmark_nn_core1000_mem1000_input00_metrics.log", log)
    r = run_cosim("gpu", log, "-o", tmp_path / "g.csv")
    assert r.returncode != 0 and "tegra-k1-stokke2016 (GK20A)" in r.stderr and "cosim kernel-fit" in r.stderr


# --- a hand-written folder of logs, same shape as the GTX 980 ones (no ../shared needed) --------------------

_METRICS = """==100== NVPROF is profiling process 100, command: app -iters=50
==100== Profiling application: app -iters=50
==100== Profiling result:
==100== Metric result:
Invocations                               Metric Name                        Metric Description         Min         Max         Avg
Device "{device}"
    Kernel: myKernel(float*, int)
         51                        achieved_occupancy                        Achieved Occupancy    0.900000    0.910000    0.905000
         51                    dram_read_throughput             Device Memory Read Throughput  20.000GB/s  22.000GB/s  21.000GB/s
         51                   dram_write_throughput            Device Memory Write Throughput  9.0000GB/s  9.0000GB/s  9.0000GB/s
         51                                       ipc                              Executed IPC    1.200000    1.300000    1.250000
"""
_PERF = """iterated 50, average time is {ms} msec.
==100== Profiling application: app -iters=50
==100== Profiling result:
Time(%)      Time     Calls       Avg       Min       Max  Name
 90.00%  {total}        51  {avg}  1.0000ms  3.0000ms  myKernel(float*, int)
 10.00%  1.0000ms         3  333.33us  300.00us  400.00us  [CUDA memcpy HtoD]

==100== API calls:
Time(%)      Time     Calls       Avg       Min       Max  Name
 80.00%  900.00ms         6  150.00ms  20.000us  890.00ms  cudaMalloc
"""


def _write_folder(folder: Path, pairs: dict[tuple[int, int], tuple[str, int]], device: str = "GeForce GTX 980 (1)") -> None:
    """One benchmark 'toy': per (core, mem) pair its nvprof Avg text and plateau power [mW] (idle 21000 mW)."""
    folder.mkdir()
    for (core, mem), (avg, active_mw) in pairs.items():
        stem = folder / f"benchmark_toy_core{core}_mem{mem}_input00"
        Path(f"{stem}_metrics.log").write_text(_METRICS.format(device=device))
        Path(f"{stem}_perf.log").write_text(_PERF.format(ms=1.0, total="100.00ms", avg=avg))
        Path(f"{stem}_power.log").write_text(_power_log(21000, active_mw, 20, 50))


def test_a_hand_written_folder_reads_with_the_documented_values(tmp_path):
    _write_folder(tmp_path / "logs", {(1000, 1000): ("2.0000ms", 50000), (400, 1000): ("4.5000ms", 30000)})
    out = tmp_path / "t.csv"
    r = run_cosim("read", tmp_path / "logs", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "2 row(s)" in r.stdout and "power from 48-48 samples" in r.stdout  # 50 active samples less the 2 edges
    t = pd.read_csv(out).set_index("core_mhz")
    assert t.loc[1000, "runtime_s"] == pytest.approx(2e-3) and t.loc[400, "runtime_s"] == pytest.approx(4.5e-3)
    assert t.loc[1000, "power_w"] == pytest.approx(50.0) and t.loc[400, "idle_power_w"] == pytest.approx(21.0)
    assert t.loc[1000, "kernel"] == "myKernel"  # the API call cudaMalloc (longer) is not a kernel
    # nvprof prints throughputs in binary units: 21 GB/s is 21 x 2^30 B/s (cosim.readers._units)
    assert t.loc[1000, "dram_read_throughput"] == pytest.approx(21 * 2**30) and t.loc[1000, "achieved_occupancy"] == pytest.approx(0.905)


def test_a_power_log_without_a_plateau_is_refused_in_one_line(tmp_path):
    _write_folder(tmp_path / "logs", {(1000, 1000): ("2.0000ms", 50000)})
    power = tmp_path / "logs" / "benchmark_toy_core1000_mem1000_input00_power.log"
    power.write_text(_power_log(21000, 21000, 20, 50))  # the kernel ran between two samples
    r = run_cosim("read", tmp_path / "logs", "-o", tmp_path / "t.csv")
    assert r.returncode != 0 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert str(power) in r.stderr and "no active plateau" in r.stderr and not (tmp_path / "t.csv").exists()


# --- the roofline family: memory time from the profile, the device's effective clocks -----------------------------


def _dcgm_roofline(n: int = 10, k: float = 4.0) -> pd.DataFrame:
    """A V100-like table (memory clock fixed, 877 MHz), written from the roofline family's own form by hand: the memory
    interface is busy DRAMA x t_ref whatever the core clock; the rest, c = (1 - DRAMA^k)^(1/k) of t_ref, scales with
    the core clock, which runs at 0.6 x the set clock at 500 MHz (a device quirk, as the V100's 405 MHz point);
    power 40 W + 100 W x f_core / 1.4 GHz + 60 W x DRAMA x the work rate."""
    rows = []
    for i in range(n):
        drama = 0.05 + 0.9 * i / (n - 1)
        comp = (1 - drama**k) ** (1 / k)
        for core in (500.0, 800.0, 1100.0, 1400.0):
            eff = core * (0.6 if core == 500 else 1.0)
            t = 1e-3 * (drama**k + (comp * 1400 / eff) ** k) ** (1 / k)
            rows.append(
                {
                    "benchmark": f"b{i}",
                    "kernel": f"k{i}",
                    "core_mhz": core,
                    "mem_mhz": 877.0,
                    "runtime_s": t,
                    "power_w": 40 + 100 * core / 1400 + 60 * drama * 1e-3 / t,
                    "DRAMA": drama,
                    "FP32A": 0.5 * comp,
                    "SMOCC": 0.3 + 0.05 * i,
                }
            )
    return pd.DataFrame(rows)


def test_roofline_family_recovers_its_form_on_unseen_benchmarks():
    """Leave-one-benchmark-out on a table written from the form: runtime within 1 % (the 500 MHz quirk learned from
    the other benchmarks), power within 3 % (its ridge fits each pair from 9 benchmarks), both exact at the reference."""
    rows = with_profiles(check_table(_dcgm_roofline(), source="t"), reference=(1400.0, 877.0), source="t")
    pred = lobo(rows, "roofline")
    keep = off_reference(pred, rows)
    err = errors(pred, keep, rows).loc["all"]
    assert err["runtime_mape"] < 1.0 and err["power_mape"] < 3.0
    # frequency scaling misses the memory time and the quirk: far worse, from the same reference measurement
    assert err["scaling_runtime_mape"] > 10 * err["runtime_mape"]
    at_ref = pred[~keep]
    np.testing.assert_allclose(at_ref["runtime_s_pred"], at_ref["runtime_s"], rtol=1e-9)
    np.testing.assert_allclose(at_ref["power_w_pred"], at_ref["power_w"], rtol=1e-9)


@settings(max_examples=15, deadline=None)
@given(core=st.lists(st.floats(500.0, 1400.0), min_size=2, max_size=6))
def test_roofline_runtime_falls_and_power_rises_with_the_core_clock(core):
    """Monotone and continuous between the training clocks: at any core clocks in the fitted range, a higher clock
    never predicts a longer runtime or a lower power."""
    rows = with_profiles(check_table(_dcgm_roofline(), source="t"), reference=(1400.0, 877.0), source="t")
    model = _ROOFLINE.setdefault("m", fit_family("roofline", rows))
    probe = rows.drop_duplicates("benchmark").drop(columns=["core_mhz"]).merge(pd.DataFrame({"core_mhz": sorted(core)}), how="cross")
    probe = probe.sort_values(["benchmark", "core_mhz"])
    rt, pw = predict_ratios("roofline", model, probe)
    for b in probe["benchmark"].unique():
        mine = (probe["benchmark"] == b).to_numpy()
        assert np.all(np.diff(rt[mine]) <= 1e-9) and np.all(np.diff(pw[mine]) >= -1e-9)


_ROOFLINE: dict = {}


@needs_logs
def test_roofline_beats_frequency_scaling_on_the_gtx980(gtx980):
    """Issue 44: LOBO MAPE <= 5 % and >= 2x below frequency scaling from the same reference measurement, 90 % intervals
    covering >= 90 %. Measured: runtime 5.0 % (scaling 26.0 %), power 2.6 % (21.1 %), coverage 90.6 / 90.6 %."""
    rows = with_profiles(check_table(gtx980, source="gtx980"), reference=(1000.0, 1000.0), source="gtx980")
    pred = lobo(rows, "roofline")
    err = errors(pred, off_reference(pred, rows), rows).loc["all"]
    assert err["runtime_mape"] <= 5.1 and err["power_mape"] <= 5.0
    assert err["scaling_runtime_mape"] >= 2 * err["runtime_mape"] and err["scaling_power_mape"] >= 2 * err["power_mape"]
    assert err["runtime_coverage"] >= 90 and err["power_coverage"] >= 90


NV_DVFS = Path(os.environ.get("COSIM_NV_DVFS_DATA", "/nonexistent"))  # NV-DVFS-Benchmark's data/ folder (no licence: not here)


@pytest.mark.skipif(not (NV_DVFS / "v100-dvfs-real-profile.csv").exists(), reason="set COSIM_NV_DVFS_DATA to NV-DVFS-Benchmark's data/")
@pytest.mark.parametrize("gpu", ["v100", "rtx8000"])
def test_roofline_on_nv_dvfs_benchmark_tables(gpu):
    """The V100 and RTX 8000 tables (DCGM features, 20 applications x 10 core clocks): power meets the targets
    (<= 5 %, >= 2x below scaling); runtime beats scaling but not by 2x on the V100 nor to 5 % on either (measured
    8.5 / 6.8 % against scaling's 13.3 / 17.9 %: the docs' table marks it)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("kv", Path(__file__).parents[1] / "docs" / "_kernel_validation.py")
    kv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kv)
    table = kv.load(gpu, NV_DVFS / f"{gpu}-dvfs-real-profile.csv")
    rows = with_profiles(table, reference=(float(table["core_mhz"].max()), float(table["mem_mhz"].max())), source=gpu)
    pred = lobo(rows, "roofline")
    err = errors(pred, off_reference(pred, rows), rows).loc["all"]
    assert err["power_mape"] <= 5 and err["scaling_power_mape"] >= 2 * err["power_mape"] and err["power_coverage"] >= 90
    assert err["runtime_mape"] < err["scaling_runtime_mape"] / 1.5 and err["runtime_coverage"] >= 89


def test_kernel_fit_validate_prints_scaling_beside_each_error(tmp_path):
    """--validate's table has frequency scaling from the same reference beside each benchmark's errors; its progress goes
    to stderr, one step per left-out benchmark, and the model file is written."""
    t = _dcgm_roofline(n=5)
    t.to_csv(tmp_path / "t.csv", index=False)
    r = run_cosim("kernel-fit", tmp_path / "t.csv", "-o", tmp_path / "m.json", "--validate", "--family", "roofline")
    assert r.returncode == 0, r.stderr
    assert "scal t" in r.stdout and "frequency scaling's MAPE" in r.stdout
    assert r.stderr.count("roofline, leaving out benchmark") >= 1 and (tmp_path / "m.json").exists()
    row = next(line for line in r.stdout.splitlines() if line.startswith("all "))
    runtime, scaling = float(row.split()[1]), float(row.split()[7])
    # by hand: b0's 500 MHz row alone runs 1400/(0.6 x 500) = 4.67x its reference (compute-bound), scaling says 2.8x
    assert runtime < 1.0 < scaling


def test_roofline_off_a_grid_is_refused_and_its_way_out_runs(tmp_path):
    """The roofline family's power is fitted at each pair of the clocks' grid: a table measured at 877 MHz memory on
    every core clock plus one 1000 MHz memory pair is no grid; --family roofline is refused naming a missing pair, the
    suggested --family physics fits, and the default families leave roofline out."""
    t = _dcgm_roofline(n=5)
    extra = t[t["core_mhz"] == 1400].assign(mem_mhz=1000.0)
    pd.concat([t, extra]).to_csv(tmp_path / "t.csv", index=False)
    refused = run_cosim("kernel-fit", tmp_path / "t.csv", "-o", tmp_path / "m.json", "--family", "roofline")
    assert refused.returncode == 2 and "no row at 500,1000 MHz" in refused.stderr and "--family physics" in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "m.json").exists()
    way_out = run_cosim("kernel-fit", tmp_path / "t.csv", "-o", tmp_path / "m.json", "--family", "physics")
    assert way_out.returncode == 0, way_out.stderr
    default = run_cosim("kernel-fit", tmp_path / "t.csv", "-o", tmp_path / "m2.json")
    assert default.returncode == 0 and "fitted physics and trees" in default.stdout, default.stderr


def test_a_table_with_no_profiled_row_is_one_line_not_an_internal_error(tmp_path):
    """Found by the fuzz campaign (a GTX 980 table cut to one row with its features empty): exit 4 with pandas'
    'truth value of a Series is ambiguous' before; now the refusal that names --reference-pair."""
    table = tmp_path / "kernels.csv"
    table.write_text(
        "benchmark,kernel,core_mhz,mem_mhz,runtime_s,power_w,achieved_occupancy,ipc\nbfs,bfs,600,400,0.001,30,,\nbfs,bfs,800,400,0.0008,35,,\n"
    )
    run = run_cosim("kernel-fit", table, "-o", tmp_path / "m.json")
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert "no clock pair at which every kernel was profiled" in run.stderr and "--reference-pair" in run.stderr
