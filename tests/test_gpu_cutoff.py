"""Cut-off GPU logs (a simulator or profiler killed mid-way): every reader keeps the complete kernels only, says which
kernel was cut in one line, and the CLI exits 3; never a value read from the unfinished record."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import REPO
from helpers import run_cosim as cosim
from test_cli import assert_one_line_error

from cosim.errors import CosimError, CutOffWarning
from cosim.readers.dvfs_logs import power_samples
from cosim.readers.gpgpusim import read_gpgpusim, read_power_report
from cosim.readers.ncu import read_ncu
from cosim.readers.nvprof import read_nvprof
from cosim.readers.nvprof_trace import read_gpu_trace
from cosim.readers.ocelot import read_ocelot_trace

DATA = REPO / "tests" / "data" / "gpu"
GPGPUSIM = DATA / "gpgpusim-3.2-gtx480-backprop.log"  # kernel blocks at lines 26 and 88, core clock 700 MHz


def _head(path, n_lines: int | None = None, *, drop_chars: int = 0) -> str:
    text = path.read_text()
    if n_lines is not None:
        text = "".join(text.splitlines(keepends=True)[:n_lines])
    return text[: len(text) - drop_chars]


def test_gpgpusim_log_cut_inside_its_second_block_prices_the_first_kernel_only_and_exits_3(tmp_path):
    cut = tmp_path / "run.log"
    cut.write_text(_head(GPGPUSIM, 120))  # the second block (line 88) lacks its L2 and DRAM counters here
    out = tmp_path / "o.csv"
    result = cosim("gpu", cut, "--model", "ocelot-fermi-aalto2013", "-o", out)
    assert_one_line_error(result, "run.log:88: kernel '_Z24bpnn_adjust_weights_cudaPfiS_iS_S_' is cut off", "1 complete", code=3)
    kernels = pd.read_csv(out).query("kind == 'kernel'")
    assert kernels["duration_s"].tolist() == pytest.approx([36455 / 700e6])  # the first block's gpu_sim_cycle at 700 MHz
    assert cosim("gpu", cut, "--model", "ocelot-fermi-aalto2013", "--allow-partial", "-o", out).returncode == 0


def test_gpgpusim_log_needs_its_end_line_after_the_last_block(tmp_path):
    whole = GPGPUSIM.read_text()
    assert len(read_gpgpusim(GPGPUSIM)) == 2  # ends with GPGPU-Sim's exit line
    cut = tmp_path / "run.log"
    cut.write_text(whole[: whole.rindex("GPGPU-Sim: *** exit detected")])  # every counter there, the end line not
    with pytest.warns(CutOffWarning, match=r"run.log:88: kernel '_Z24bpnn_adjust_weights_cudaPfiS_iS_S_' is cut off"):
        assert read_gpgpusim(cut)["gpu_sim_cycle"].tolist() == [36455]
    cut.write_text(_head(GPGPUSIM, 60))
    with pytest.raises(CosimError, match=r"run.log:26: kernel '_Z22bpnn_layerforward_CUDAPfS_S_S_ii' is cut off .* no kernel before it"):
        read_gpgpusim(cut)


def test_nvprof_metrics_cut_mid_line_or_between_metrics_drop_that_kernel(tmp_path):
    path = tmp_path / "m.csv"
    source = REPO / "traces" / "cosim-nvprof-dct.csv"  # two kernels, dct8x8_uv listed last
    path.write_text(_head(source, drop_chars=4))  # its last value loses digits
    with pytest.warns(CutOffWarning, match=r"kernel 'dct8x8_uv.*' is cut off \(the log ends mid-line\)"):
        table = read_nvprof(path, allow_unknown=True)
    assert table["kernel"].str.startswith("dct8x8_uv").sum() == 0 and len(table) == 1
    lines = source.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-3]))  # cut at a line end: 10 of its 13 metrics (its event is in another section)
    with pytest.warns(CutOffWarning, match=r"its results stop after 10 of the 13 metrics"):
        assert len(read_nvprof(path, allow_unknown=True)) == 1


def test_ncu_details_cut_drops_the_unfinished_launch(tmp_path):
    path = tmp_path / "n.csv"
    path.write_text(_head(DATA / "ncu-a100-details.csv", 20))  # launch 1: 3 of its 9 rows
    with pytest.warns(CutOffWarning, match=r"\(launch 1\) is cut off \(its rows stop after 3 of the 9 metrics"):
        rows = read_ncu(path)
    assert set(rows["launch"]) == {0}
    path.write_text(_head(DATA / "ncu-a100-details.csv", drop_chars=3))  # "n/a" -> "n"
    with pytest.warns(CutOffWarning, match=r"n.csv:26: kernel .*\(launch 1\) is cut off \(the table ends mid-line\)"):
        assert set(read_ncu(path)["launch"]) == {0}


def test_ocelot_trace_cut_drops_its_last_launch(tmp_path):
    path = tmp_path / "t.trace"
    path.write_text(_head(REPO / "traces" / "cosim-ocelot-video.trace", drop_chars=3))
    with pytest.warns(CutOffWarning, match=r"kernel '_Z11dct8x8_uv_dPKhPdi' is cut off"):
        assert len(read_ocelot_trace(path)) == 4  # of 5 launches


def test_power_report_without_its_accumulative_statistics_is_cut(tmp_path):
    path = tmp_path / "p.log"
    path.write_text(_head(DATA / "gpuwattch-gtx480-backprop.log", 100))  # inside the second kernel's maximum section
    with pytest.warns(CutOffWarning, match=r"p.log:67: kernel '_Z24bpnn_adjust_weights_cudaPfiS_iS_S_' is cut off"):
        assert read_power_report(path)["power_w"].tolist() == [83.412]


def test_gpu_trace_and_power_samples_cut_mid_line_lose_that_row(tmp_path):
    path = tmp_path / "t.csv"
    whole = read_gpu_trace(DATA / "nvprof-rtx2080ti-gpu-trace.csv")
    path.write_text(_head(DATA / "nvprof-rtx2080ti-gpu-trace.csv", drop_chars=5))
    with pytest.warns(CutOffWarning, match=r"t.csv:\d+: the last row"):
        assert len(read_gpu_trace(path)) == len(whole) - 1
    samples = tmp_path / "power.log"
    samples.write_text("Device 0: is GeForce GTX 980\nP-state\tCore-F(MHz)\tMem-F(MHz)\tPower(mW)\n5\t999\t999\t23940\n5\t999\t999\t237")
    with pytest.warns(CutOffWarning, match=r"power.log:4: the last power sample is cut off"):
        assert power_samples(samples)[:, 2].tolist() == [23.94]  # 23940 mW; the cut "237" never read as 0.237 W


def test_nvprof_metric_section_that_never_reaches_a_kernel_of_its_session_is_cut(tmp_path):
    path = tmp_path / "m.txt"
    path.write_text(_head(REPO / "traces" / "cosim-nvprof-dct.txt", 29))  # the events list both kernels, the metrics one
    with pytest.raises(CosimError, match=r"m.txt:29: kernel 'dct8x8_y.*' is cut off \(the last result section lists 1 of the session's 2"):
        read_nvprof(path)
