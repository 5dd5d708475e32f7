"""GPU files cosim cannot price get one honest line naming what it can do instead, and every way out a refusal names
exists for that command and is run here; ``cosim read`` reads each of those shapes (DCGM dmon, AccelWattch
hw_perf.csv, board power logs, nvprof traces, Accel-Sim 4.x logs) as a tidy table."""

from __future__ import annotations

import contextlib
import io
import re
import sys
from importlib import metadata

import pytest
from helpers import REPO

from cosim.errors import CosimError, CutOffWarning
from cosim.readers.dcgm import read_dcgm
from cosim.readers.tidy import detect_format, read

DATA = REPO / "tests" / "data" / "gpu"
HW_PERF = DATA / "accelwattch-hw-perf.csv"  # excerpts of AccelWattch's own validation tables (README.md there)
HW_POWER = DATA / "accelwattch-hw-power-validation-volta.csv"
TRACES = REPO / "traces"


def run(*argv) -> tuple[int, str]:
    """``cosim ARGV`` in this process (as tests/fuzz.py runs it): exit status and standard error."""
    from cosim.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse: --help
            code = exc.code if isinstance(exc.code, int) else 2
    return code, err.getvalue()


def options_of(command: str) -> set[str]:
    from cosim.cli import _parser

    sub = next(a for a in _parser()._subparsers._group_actions if hasattr(a, "choices")).choices[command]  # type: ignore[union-attr]
    return {s for action in sub._actions for s in action.option_strings}


def the_error(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("cosim: error:")]
    assert len(errors) == 1, stderr
    return errors[0]


def named_options(line: str, command: str) -> list[str]:
    """The options a refusal tells the user to give to ``command``: every ``--x`` not written after another
    command's or tool's name (``cosim read --format``, ``nvprof --metrics``)."""
    pattern = r"(cosim [a-z][\w-]*|nvprof|ncu)((?: --?[\w-]+)+)"
    others = {m.start(2) for m in re.finditer(pattern, line) if m[1] != f"cosim {command}"}
    return [m[0] for m in re.finditer(r"(?<![\w-])--[a-z][\w-]*", line) if not any(o <= m.start() < o + 40 for o in others)]


def test_dcgm_dmon_reads_as_fractions_watts_and_hertz():
    rows = read_dcgm(DATA / "dcgm-v100-dmon.log")
    first = rows[(rows["entity"] == "GPU 0") & (rows["sample"] == 0)].set_index("metric")["value"]
    assert first["SMACT"] == 0.912 and first["DRAMA"] == 0.380  # DCGM's profiling ratios are fractions already
    assert first["GPUTL"] == pytest.approx(0.97) and first["POWER"] == 231.4 and first["SMCLK"] == 1380e6  # 97 %, W, MHz
    assert rows[rows["entity"] == "GPU 0"]["sample"].max() == 2  # three samples, the header repeated between them
    assert rows[(rows["entity"] == "GPU 1") & (rows["metric"] == "SMACT")]["value"].isna().all()  # N/A


def test_dcgm_cut_mid_line_loses_its_last_sample(tmp_path):
    path = tmp_path / "d.log"
    path.write_text((DATA / "dcgm-v100-dmon.log").read_text()[:-3])
    with pytest.warns(CutOffWarning, match="d.log:8: the last sample is cut off"):
        assert read_dcgm(path)["sample"].max() == 1


@pytest.mark.parametrize(
    ("path", "fmt", "metric", "kernel", "value", "unit"),
    [
        (DATA / "dcgm-v100-dmon.log", "dcgm-dmon", "POWER", "", 231.4, "W"),
        (HW_PERF, "accelwattch-hw-perf", "DRAM_Rd", "backprop-rodinia-3.1/_Z22bpnn_layerforward_CUDAPfS_S_S_ii", 147464, "count"),
        (HW_PERF, "accelwattch-hw-perf", "Chip Voltage", "backprop-rodinia-3.1/_Z22bpnn_layerforward_CUDAPfS_S_S_ii", 1, "V"),
        (HW_POWER, "accelwattch-hw-power", "mean HW_power", "backprop_k1", 219.7978, "W"),
        (DATA / "nvprof-rtx2080ti-gpu-trace.csv", "nvprof-gpu-trace", "duration_s", None, None, "s"),
        (DATA / "accelsim-volta-multistream.log", "gpgpusim", "gpu_sim_cycle", "_Z9vectorAddPKfS0_Pfi", 5120, "cycle"),
        (DATA / "nvprof-gtx1070-metrics.csv", "nvprof-metrics", "invocations", None, 10, "count"),
    ],
)
def test_cosim_read_reads_each_shape_a_user_saves(path, fmt, metric, kernel, value, unit):
    assert detect_format(path) == fmt
    with pytest.warns() if fmt == "gpgpusim" else contextlib.nullcontext():  # the multi-stream log's empty block
        table = read(path)
    rows = table[table["metric"] == metric]
    assert len(rows) and set(rows["unit"]) == {unit}
    if value is not None:
        first = rows[rows["kernel"] == kernel] if kernel is not None else rows
        assert first["value"].iloc[0] == value


def test_hw_perf_keeps_accelwattchs_own_averages_below_zero(tmp_path):
    from cosim.readers.accelwattch_hw import read_hw_perf

    text = HW_PERF.read_text().replace(",7.455999999999996,", ",-0.09338775510204052,")  # as its CUTLASS row has
    (tmp_path / "hw_perf.csv").write_text(text)
    assert read_hw_perf(tmp_path / "hw_perf.csv")["Num_Idle_SMs"].iloc[1] == pytest.approx(-0.0933877551)
    (tmp_path / "hw_perf.csv").write_text(text.replace(",147464.0,", ",-147464.0,"))
    with pytest.raises(CosimError, match=r"hw_perf.csv:3: DRAM_Rd is -147464.0"):
        read_hw_perf(tmp_path / "hw_perf.csv")


def test_a_board_power_log_reads_as_samples(tmp_path):
    path = tmp_path / "benchmark_x_core1000_mem1000_input00_power.log"
    path.write_text(
        "Device 0: is GeForce GTX 980\nP-state\tCore-F(MHz)\tMem-F(MHz)\tPower(mW)\t\n5\t999\t999\t23940\t\n0\t1000\t1000\t81250\t\n"
    )
    table = read(path)
    power = table[table["metric"] == "Power(mW)"]
    assert table.attrs["read"]["format"] == "gpu-power-samples" and power["value"].tolist() == [23.94, 81.25]  # mW -> W
    assert table[table["metric"] == "Core-F(MHz)"]["value"].tolist() == [999e6, 1000e6]


DCGM = DATA / "dcgm-v100-dmon.log"
GTX980 = DATA / "nvprof-gtx980-sessions.log"
VOLTA = DATA / "accelsim-volta-multistream.log"
FERMI = DATA / "gpgpusim-3.2-gtx480-backprop.log"
NVPROF = TRACES / "cosim-nvprof-dct.csv"
GPU_TRACE = TRACES / "cosim-nvprof-dct-gputrace.txt"


@pytest.fixture(scope="module")
def unknown(tmp_path_factory):
    path = tmp_path_factory.mktemp("u") / "notes.txt"
    path.write_text("kernel ran fine\n")
    return path


# (refused command, what its one line must say, the way out it names, run as the user would)
CASES = [
    (["gpu", HW_PERF], "cosim read", ["read", HW_PERF]),
    (["gpu", DCGM], "cosim read", ["read", DCGM]),
    (["gpu", HW_POWER], "cosim read", ["read", HW_POWER]),
    (["gpu", GTX980], "no power model of that GPU", ["read", GTX980]),
    (["gpu", GTX980, "--model", "ocelot-fermi-aalto2013"], "no power model of that GPU", ["read", GTX980]),
    (["gpu", VOLTA], "compute capability 7.0", ["read", VOLTA]),
    (
        ["gpu", VOLTA, "--model", "ocelot-fermi-aalto2013"],
        "--any-device",
        ["gpu", VOLTA, "--model", "ocelot-fermi-aalto2013", "--any-device"],
    ),
    (["gpu", FERMI], "--model ocelot-fermi-aalto2013", ["gpu", FERMI, "--model", "ocelot-fermi-aalto2013"]),
    (
        ["gpu", NVPROF, "--model", "ocelot-fermi-aalto2013"],
        "--model tegra-k1-stokke2016",
        ["gpu", NVPROF, "--model", "tegra-k1-stokke2016"],
    ),
    (["gpu", GPU_TRACE], "--gpu-trace", ["gpu", NVPROF, "--gpu-trace", GPU_TRACE]),
    (["gpu", DATA / "nvprof-gt1030-summary.txt"], "cosim read", ["read", DATA / "nvprof-gt1030-summary.txt"]),
]


@pytest.mark.parametrize(("refused", "says", "way_out"), CASES, ids=[f"{c[0][0]}-{c[0][1].name}-{len(c[0])}" for c in CASES])
def test_every_way_out_a_gpu_refusal_names_exists_and_works(refused, says, way_out, tmp_path):
    code, stderr = run(*refused, "-o", tmp_path / "x.csv")
    line = the_error(stderr)
    assert code == 2 and says in line, line
    assert set(named_options(line, refused[0])) <= options_of(refused[0]), line  # no option the command lacks
    for command in re.findall(r"cosim (read|kernel-[a-z]+|power|soc|gpu)\b", line):
        assert options_of(command)  # a command cosim has
    code, stderr = run(*way_out, "-o", tmp_path / "y.csv")
    assert code == 0, stderr


def test_an_unknown_file_is_told_the_option_each_command_has(unknown, tmp_path):
    line = the_error(run("gpu", unknown, "-o", tmp_path / "x.csv")[1])
    assert "--format" not in named_options(line, "gpu") and "cosim read" in line  # cosim gpu has no --format
    line = the_error(run("read", unknown, "-o", tmp_path / "x.csv")[1])
    assert "--format" in named_options(line, "read") and "--format" in options_of("read")


@pytest.mark.parametrize("command", ["kernel-fit", "kernel-eval"])  # the commands that fit: predicting needs neither package
def test_a_missing_optional_package_names_the_extra_that_installs_it(command, tmp_path, monkeypatch):
    from test_kernel_dvfs import _roofline_table

    _roofline_table().to_csv(tmp_path / "t.csv", index=False)
    assert run("kernel-synth", "-o", tmp_path / "log.csv")[0] == 0
    for name in ("scipy", "scipy.optimize", "sklearn", "sklearn.ensemble"):
        monkeypatch.setitem(sys.modules, name, None)  # as on a base install: importing it fails
    argv = {"kernel-fit": [tmp_path / "t.csv", "-o", tmp_path / "m.json"], "kernel-eval": [tmp_path / "log.csv", "--test-boards", "agx13"]}
    code, stderr = run(command, *argv[command])
    line = the_error(stderr)
    assert code == 2 and "pip install 'cosim[kernels]'" in line, line
    # the suggestion installs what was missing: the [kernels] extra brings scikit-learn, and scikit-learn brings scipy
    extras = [r for r in metadata.requires("cosim") or [] if 'extra == "kernels"' in r]
    assert any(r.startswith("scikit-learn") for r in extras)
    assert any(r.startswith("scipy") for r in metadata.requires("scikit-learn") or [])


def test_ncu_2023_details_with_rule_columns_and_rows_reads_the_metrics_only(tmp_path):
    head = (
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC",'
        '"Section Name","Metric Name","Metric Unit","Metric Value","Rule Name","Rule Type","Rule Description",'
        '"Estimated Speedup Type","Estimated Speedup"'
    )
    ids = '"0","7","a","h","k(int)","1","7","(256, 1, 1)","(64, 1, 1)","0","9.0"'
    path = tmp_path / "ncu.csv"
    path.write_text(
        f'{head}\n{ids},"GPU Speed Of Light Throughput","Duration","usecond","4.86","","","","",""\n'
        f'{ids},"GPU Speed Of Light Throughput","","","","SOLBottleneck","OPT","This kernel is latency bound","local","42"\n'
    )
    rows = read(path)
    assert rows["metric"].tolist() == ["Duration"] and rows["value"].tolist() == pytest.approx([4.86e-6])
