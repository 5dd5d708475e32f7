"""``cosim gpu``, ``cosim soc`` and ``cosim rate-baseline`` end to end, and their one-line errors."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import GEM5_RUNS, REPO, biglittle_config, biglittle_dumps, needs_shared, write_stats
from test_cli import assert_one_line_error, cosim

TRACES = REPO / "traces"
OCELOT = TRACES / "cosim-ocelot-video.trace"
NVPROF_CSV = TRACES / "cosim-nvprof-dct.csv"
NVPROF_TXT = TRACES / "cosim-nvprof-dct.txt"
ACTIVITY = TRACES / "cosim-dct-activity.csv"


def test_gpu_ocelot_trace_with_the_tk1_model(tmp_path):
    out, png, bars = tmp_path / "o.csv", tmp_path / "o.png", tmp_path / "b.png"
    result = cosim("gpu", OCELOT, "--gpu-mhz", 852, "--emc-mhz", 924, "--gap-s", 0.001, "-o", out, "--plot", png, "--breakdown", bars)
    assert result.returncode == 0, result.stderr
    assert "5 kernel launch(es), 4 kernel(s) (ocelot)" in result.stdout
    assert "approx:l1_split" in result.stdout  # what the trace cannot supply is flagged
    table = pd.read_csv(out)
    kernels = table[table["kind"] == "kernel"]
    assert len(kernels) == 5 and (table["kind"] == "idle").sum() == 4
    rails = kernels[["gpu_w", "mem_w", "core_w", "base_w"]].sum(axis=1)
    assert kernels["power_w"].to_numpy() == pytest.approx(rails.to_numpy(), rel=1e-7)
    assert kernels["kernel_display"].iloc[1].startswith("dct8x8_y_f(")
    assert png.stat().st_size > 10_000 and bars.stat().st_size > 10_000


def test_gpu_ocelot_trace_with_the_access_rate_model(tmp_path):
    out, bars = tmp_path / "o.csv", tmp_path / "classes.png"
    result = cosim("gpu", OCELOT, "--model", "ocelot-fermi-aalto2013", "-o", out, "--breakdown", bars)
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(out)
    k = table[table["kind"] == "kernel"]
    class_j = k[[c for c in table.columns if c.endswith("_j") and c != "energy_j"]].sum(axis=1)
    assert (k["dynamic_w"] * k["duration_s"]).to_numpy() == pytest.approx(class_j.to_numpy(), rel=1e-7)  # CSV keeps 9 digits
    assert bars.stat().st_size > 10_000


@pytest.mark.parametrize("path", [NVPROF_CSV, NVPROF_TXT])
def test_gpu_nvprof_end_to_end(tmp_path, path):
    out = tmp_path / "n.csv"
    result = cosim("gpu", path, "--gpu-mhz", 852, "--emc-mhz", 924, "--activity", ACTIVITY, "-o", out)
    assert result.returncode == 0, result.stderr
    assert "6 kernel launch(es), 2 kernel(s) (nvprof)" in result.stdout
    table = pd.read_csv(out)
    assert table["duration_s"].iloc[0] == pytest.approx(1707380 / 852e6)
    assert table["flags"].isna().all()  # every rate given, nothing approximated


def test_gpu_lower_clocks_use_less_power(tmp_path):
    powers = {}
    for gpu, emc in ((852, 924), (396, 204)):
        out = tmp_path / f"{gpu}.csv"
        assert cosim("gpu", NVPROF_CSV, "--gpu-mhz", gpu, "--emc-mhz", emc, "--activity", ACTIVITY, "-o", out).returncode == 0
        powers[gpu] = pd.read_csv(out)["power_w"].iloc[0]
    assert powers[396] < powers[852]


def test_gpu_compares_with_a_corsair_log(tmp_path):
    log = tmp_path / "corsair.csv"
    log.write_text("15.7.2013 11:36:16,20,7W,89,8766315921014,151,9921875,136,605458408151\n")
    result = cosim("gpu", OCELOT, "--model", "ocelot-fermi-aalto2013", "-o", tmp_path / "o.csv", "--measured", log)
    assert result.returncode == 0, result.stderr
    assert "mean 151.99 W in at the PSU" in result.stdout


@pytest.mark.parametrize(
    ("make", "args", "fragments"),
    [
        (
            lambda d: (d / "t.trace").write_text("Kernel name: _Z1kv\nInteger_arithmetic: -4\n") and d / "t.trace",
            [],
            ["t.trace:2", "count of 'Integer_arithmetic' is -4"],
        ),
        (
            lambda d: (d / "n.csv").write_text(NVPROF_CSV.read_text().replace('"inst_misc"', '"inst_miscellaneous"')) and d / "n.csv",
            [],
            ["unknown metric 'inst_miscellaneous'", "--ignore-metric"],
        ),
        (
            lambda d: (
                (d / "z.csv").write_text(NVPROF_CSV.read_text().replace("1702110,1712650,1707380,6829520", "0,0,0,0")) and d / "z.csv"
            ),
            [],
            ["elapsed_cycles_sm 0, so its duration is zero"],
        ),
        (lambda d: NVPROF_CSV, ["--gpu-mhz", "1000"], ["gpu clock 1000 MHz is not in the V-f table"]),
        (lambda d: NVPROF_CSV, ["--emc-mhz", "250"], ["emc clock 250 MHz is not in the V-f table"]),
        (
            lambda d: (d / "a.csv").write_text("kernel,cpu_ipc\nrotate(float*),0.5\n") and NVPROF_CSV,
            ["--activity", "{d}/a.csv"],
            ["kernel 'rotate(float*)' is not in the GPU input"],
        ),
        (lambda d: OCELOT, ["--model", "ocelot-fermi-aalto2013", "--gap-s", "30"], ["--idle-power middle=W"]),
        (lambda d: NVPROF_CSV, ["--model", "ocelot-fermi-aalto2013"], ["nvprof metrics need --model tegra-k1-stokke2016"]),
        (
            lambda d: (d / "z.trace").write_text("Kernel name: _Z1kv\nControl: 0\nOther: 0\n") and d / "z.trace",
            [],
            ["z.trace:1", "has no instructions, so its duration is zero"],
        ),
        (
            lambda d: (d / "lt.csv").write_text("launch,start_s,kernel\n" + "".join(f"{i},{i},k{i}\n" for i in range(5))) and OCELOT,
            ["--launch-times", "{d}/lt.csv"],
            ["lt.csv:2: launch 0 is kernel", "not 'k0'"],
        ),
        (lambda d: d / "missing.trace", [], ["missing.trace: no such file"]),
        (
            lambda d: (d / "m.json").write_text('{"schema": "cosim-rail-model/1", "rails": {}}') and OCELOT,
            ["--model", "{d}/m.json"],
            ["rails has no 'gpu' rail"],
        ),
    ],
)
def test_gpu_bad_inputs_one_line(tmp_path, make, args, fragments):
    path = make(tmp_path)
    result = cosim("gpu", path, *[a.format(d=tmp_path) for a in args], "-o", tmp_path / "out.csv")
    assert_one_line_error(result, *fragments)
    assert not (tmp_path / "out.csv").exists()


def _cpu_run(folder):
    folder.mkdir()
    (folder / "config.ini").write_text(biglittle_config())
    dumps = biglittle_dumps()
    for epoch, d in enumerate(dumps):  # DRAM traffic: 640 kB and 320 kB per 1 ms epoch
        d["system.mem_ctrls.bytesReadSys"] = 640_000 * (epoch + 1)
        d["system.mem_ctrls.bytesWrittenSys"] = 320_000 * (epoch + 1)
    return write_stats(folder / "stats.txt", dumps)


def test_soc_merges_cpu_clusters_and_gpu_rails(tmp_path):
    stats = _cpu_run(tmp_path / "m5out")
    out, png = tmp_path / "soc.csv", tmp_path / "soc.png"
    result = cosim(
        "soc",
        stats,
        "--cpu-model",
        "cortex-a15-walker2017",
        "--cluster",
        "big=system.bigCluster",
        "--cpu-model",
        "cortex-a7-gemstone2018",
        "--cluster",
        "little=system.littleCluster",
        "--gpu",
        NVPROF_CSV,
        "--activity",
        ACTIVITY,
        "--gpu-offset-s",
        0.0005,
        "--gap-s",
        0.001,
        "--railgate-delay-s",
        0.0004,
        "-o",
        out,
        "--plot",
        png,
    )
    assert result.returncode == 0, result.stderr
    soc = pd.read_csv(out)
    assert soc["start_s"].iloc[0] == 0.0
    assert soc["start_s"].iloc[1:].to_numpy() == pytest.approx(soc["end_s"].iloc[:-1].to_numpy())
    parts = soc[["cpu_big_w", "cpu_little_w", "gpu_w", "mem_w", "base_w"]].fillna(0).sum(axis=1)
    assert soc["power_w"].to_numpy() == pytest.approx(parts.to_numpy(), rel=1e-7)  # Eq. 8 with the clusters for the LP core
    first = soc.iloc[0]
    assert first["gpu_state"] == "gated" and first["gpu_w"] == 0.0  # before the first kernel
    assert set(soc["gpu_state"]) == {"gated", "kernel", "idle"}
    # memory rail CPU cycles from the run: (640 kB + 320 kB) / 4 B per cycle in the first 1 ms epoch
    assert first["mem_cpu_busy_w"] == pytest.approx(2.25e-9 * (960_000 / 4 / 1e-3) * 1.351**2)
    assert soc["energy_j"].sum() == pytest.approx((soc["power_w"] * soc["duration_s"]).sum())
    assert png.stat().st_size > 10_000


@needs_shared
def test_soc_on_real_gem5_output(tmp_path):
    run = GEM5_RUNS / "public-old2016-arm64-fs-o3-dual"
    out = tmp_path / "soc.csv"
    # 2 GHz is 1.11x the A15 model's top clock: inside its extrapolation band, every CPU row flagged
    result = cosim("soc", run / "stats.txt", "--cpu-model", "cortex-a15-walker2017", "--gpu", OCELOT, "-o", out)
    assert result.returncode == 0, result.stderr
    soc = pd.read_csv(out)
    in_run = soc["end_s"] <= 47.341923254 + 1e-9
    assert soc.loc[in_run, "flags"].str.contains("cpu:extrapolated").all()
    assert soc["end_s"].max() == pytest.approx(47.341923254, rel=1e-6)  # the gem5 run's length
    assert (soc["gpu_state"] == "kernel").sum() == 5


def test_rate_baseline_cli(tmp_path):
    out, png = tmp_path / "rb.csv", tmp_path / "rb.png"
    result = cosim("rate-baseline", "--train-gpu-mhz", 540, "--train-emc-mhz", 600, "-o", out, "--plot", png)
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(out)
    assert len(table) == 15 * 10
    assert table["error_pct"].max() > 40 and table["error_pct"].min() < -25
    assert_one_line_error(cosim("rate-baseline", "--train-gpu-mhz", 500, "-o", out), "gpu clock 500 MHz")


def test_keep_unknown_metrics_from_the_cli(tmp_path):
    lines = NVPROF_CSV.read_text().splitlines()
    extra = [line.replace('"inst_misc"', '"achieved_occupancy"') for line in lines if '"inst_misc"' in line]
    renamed = tmp_path / "n.csv"
    renamed.write_text("\n".join(lines + extra) + "\n")  # a metric the model does not use, as people collect many
    assert "--keep-unknown" in cosim("gpu", renamed, "-o", tmp_path / "x.csv").stderr
    result = cosim("gpu", renamed, "--keep-unknown", "-o", tmp_path / "k.csv")
    assert result.returncode == 0, result.stderr
    assert (pd.read_csv(tmp_path / "k.csv")["power_w"] > 0).all()


def test_python_api_resolves_and_prices_a_gpu_input_as_the_cli_does():
    import cosim

    gpu = cosim.open_gpu(NVPROF_CSV)
    assert (gpu.format, gpu.kind, gpu.model_kind, gpu.flag) == ("nvprof-metrics", "nvprof", "rail", "")
    timeline = cosim.price_gpu(gpu, gpu_mhz=852, emc_mhz=924, activity=ACTIVITY)
    kernels = timeline[timeline["kind"] == "kernel"]
    assert len(kernels) == 6
    assert kernels["duration_s"].iloc[0] == pytest.approx(1707380 / 852e6)  # elapsed_cycles_sm / GPU clock
    with pytest.raises(cosim.CosimError, match="nvprof metrics need --model tegra-k1-stokke2016"):
        cosim.open_gpu(NVPROF_CSV, model="ocelot-fermi-aalto2013")


def test_a_gpgpusim_run_beside_its_gpuwattch_report():
    import cosim
    from cosim.gpu_input import beside_report

    data = REPO / "tests" / "data" / "gpu"
    timeline = cosim.price_gpu(cosim.open_gpu(data / "gpgpusim-3.2-gtx480-backprop.log", model="ocelot-fermi-aalto2013"))
    rows = beside_report(timeline, data / "gpuwattch-gtx480-backprop.log")
    assert rows["report_power_w"].tolist() == [83.412, 96.0373]  # kernel_avg_power of each block, as the report prints
    assert (rows["dynamic_w"] < rows["power_w"]).all()
    with pytest.raises(cosim.CosimError, match=r"2 kernel\(s\) in the power report, 1 priced"):
        beside_report(timeline.iloc[:1], data / "gpuwattch-gtx480-backprop.log")
