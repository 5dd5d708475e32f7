"""One call per command (cosim/api.py): each DataFrame is the table its command writes, byte for byte as CSV (#53).

The expected values are the command's own file (``cosim power``/``whatif``/``sweep`` run as a user runs them); the
API and the command share their code path, so this checks that nothing (a column, a row, a flag) is added or lost on
either side, and that every argument is keyword-only.
"""

from __future__ import annotations

import inspect

import pandas as pd
import pytest
from helpers import REPO, SHARED, run_cosim

import cosim

RUN = REPO / "traces" / "cosim-v24-se-biglittle-1800-1400MHz"
SUSAN = SHARED / "data" / "gem5" / "xu3-mibench-train"


def _as_csv(table: pd.DataFrame) -> str:
    return table.to_csv(index=False)  # floats in their round-trip form, as every CSV cosim writes


def test_power_is_the_table_cosim_power_writes(tmp_path):
    out = tmp_path / "power.csv"
    assert run_cosim("power", RUN, "-o", out).returncode == 0
    table = cosim.power(RUN)
    assert isinstance(table, pd.DataFrame) and len(table) == 2 * 47  # two clusters, 47 dumps
    assert _as_csv(table) == out.read_text()
    assert set(table["cluster"]) == {"bigCluster", "littleCluster"}  # gem5's names, as the command's
    # the options by their names: --model, --cluster NAME=PATH, --temperature
    args = ["--model", "cortex-a15-walker2017", "--cluster", "big=system.bigCluster", "--temperature", "60"]
    assert run_cosim("power", RUN, *args, "-o", out).returncode == 0
    table = cosim.power(RUN, model="cortex-a15-walker2017", clusters={"big": "system.bigCluster"}, temperature_c=60)
    assert _as_csv(table) == out.read_text() and set(table["cluster"]) == {"big"}


def test_whatif_is_the_table_cosim_whatif_writes(tmp_path):
    out = tmp_path / "whatif.csv"
    assert run_cosim("whatif", RUN, "--freqs", "bigCluster=600,1000,1800", "-o", out).returncode == 0
    table = cosim.whatif(RUN, freqs={"bigCluster": [600, 1000, 1800]})
    assert len(table) == 3 * 4 and table["pareto"].any()  # 3 big clocks x the A7 model's 4 V-f points
    assert _as_csv(table) == out.read_text()


def test_sweep_is_the_table_cosim_sweep_writes(tmp_path):
    runs = [RUN, SUSAN / "automotive_susan_c" / "1000MHz"] if SUSAN.is_dir() else [RUN]  # two programs, two designs
    out = tmp_path / "sweep.csv"
    assert run_cosim("sweep", *runs, "-o", out).returncode == 0
    table = cosim.sweep(runs)
    assert _as_csv(table) == out.read_text()


def test_gpu_is_the_table_cosim_gpu_writes(tmp_path):
    log, trace = REPO / "traces" / "cosim-nvprof-dct.txt", REPO / "traces" / "cosim-nvprof-dct-gputrace.txt"
    out = tmp_path / "gpu.csv"
    assert run_cosim("gpu", log, "--gpu-trace", trace, "--gpu-mhz", "612", "-o", out).returncode == 0
    table = cosim.gpu(log, gpu_trace=trace, gpu_mhz=612)
    assert (table["kind"] == "kernel").sum() == 6  # the log's six launches
    assert _as_csv(table) == out.read_text()
    with pytest.raises(cosim.CosimError, match="transfers: option"):
        cosim.gpu(log, transfers=trace)


def test_gpu_energy_is_the_table_cosim_gpu_energy_writes(tmp_path):
    data = REPO / "tests" / "data" / "gpu"
    log, trace = data / "nvidia-smi-lms50-3-kernels.csv", data / "nsys-cuda-gpu-trace-3-kernels.csv"  # the how-to's pair
    out = tmp_path / "energy.csv"
    assert run_cosim("gpu-energy", log, trace, "--min-samples", "3", "-o", out).returncode == 0
    table = cosim.gpu_energy(log, trace, min_samples=3)
    assert len(table) == 3 and _as_csv(table) == out.read_text()


def test_every_command_call_is_keyword_only_and_typed():
    # the command's positional arguments stay positional (gpu-energy has two: the power log and the trace)
    for call, positional in ((cosim.power, 1), (cosim.whatif, 1), (cosim.sweep, 1), (cosim.gpu, 1), (cosim.gpu_energy, 2)):
        params = list(inspect.signature(call).parameters.values())
        assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params[:positional])
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[positional:]), call.__name__
        assert all(p.annotation is not inspect.Parameter.empty for p in params if p.name != "client"), call.__name__
        assert inspect.signature(call).return_annotation in ("pd.DataFrame", pd.DataFrame)


def test_a_run_and_its_clusters_print_one_line_each():
    """#53: print(cosim.open_run(path).clusters) printed each model's whole JSON (about 8 KB a cluster)."""
    run = cosim.open_run(RUN)
    assert str(run.clusters) == (
        "(ClusterSpec('bigCluster', CPUs of its clock domain, model 'cortex-a15-gemstone2018'), "
        "ClusterSpec('littleCluster', CPUs of its clock domain, model 'cortex-a7-gemstone2018'))"
    )
    assert len(str(run).splitlines()) == 3 and len(repr(run.config)) < 200 and len(repr(run.clusters[0].model)) < 200


@pytest.mark.parametrize("name", ["power", "whatif", "sweep", "gpu", "gpu_energy"])
def test_the_calls_are_the_public_api(name):
    assert name in cosim.__all__ and getattr(cosim, name).__module__ == "cosim.api"
