"""Every value cosim reads comes back bit for bit after a write: read -> write (CSV, Parquet) -> read, for every
format ``cosim read`` knows (issue 52: a 9-digit CSV format made 163 nvidia-smi times 100 ms apart into 3 values).

Each format is read from a small file the other tests use (tests/data, traces/) or a sample written here in the
tool's layout; the expected table is the reader's own, so what is checked is the writer, not the reader."""

from __future__ import annotations

import gzip
import math

import numpy as np
import pandas as pd
import pytest
from helpers import REPO
from test_gpu_readers import SAMPLES
from test_gpu_today import DMON, KERN_SUM, NSYS, SMI, SMI_NOUNITS

from cosim.output import write_table
from cosim.readers.tidy import FORMATS, read

DATA = REPO / "tests" / "data" / "gpu"
# the readers' inputs: a file of the repository, or (name, text) written for the test
INPUTS: dict[str, list] = {
    "gem5": ["gem5"],
    "ocelot": [REPO / "traces" / "cosim-ocelot-video.trace"],
    "nvprof-metrics": [REPO / "traces" / "cosim-nvprof-dct.txt", DATA / "nvprof-gtx1070-metrics.csv"],
    "nvprof-gpu-trace": [DATA / "nvprof-gtx650m-gpu-trace.txt", DATA / "nvprof-rtx2080ti-gpu-trace.csv"],
    "nvprof-gpu-summary": [DATA / "nvprof-gt1030-summary.txt", DATA / "nvprof-gt1030-summary.csv"],
    "ncu": [DATA / "ncu-a100-details.csv", DATA / "ncu-rtx3090-raw.csv"],
    "gpgpusim": [DATA / "gpgpusim-3.2-gtx480-backprop.log", DATA / "accelsim-volta-multistream.log"],
    "gpuwattch": [DATA / "gpuwattch-gtx480-backprop.log"],
    "dcgm-dmon": [DATA / "dcgm-v100-dmon.log"],
    "accelwattch-hw-perf": [DATA / "accelwattch-hw-perf.csv"],
    "accelwattch-hw-power": [DATA / "accelwattch-hw-power-validation-volta.csv"],
    "gpu-power-samples": [
        (
            "power.log",
            "Device 0: is GeForce GTX 980\nP-state\tCore-F(MHz)\tMem-F(MHz)\tPower(mW)\t\n5\t1304\t3505\t61234\t\n5\t1304\t3505\t145678\t\n",
        )
    ],
    "nvidia-smi": [DATA / "nvidia-smi-lms50-3-kernels.csv", ("smi.csv", SMI), ("nounits.csv", SMI_NOUNITS)],
    "nvidia-smi-dmon": [("dmon.log", DMON)],
    "nsys-gpu-trace": [DATA / "nsys-cuda-gpu-trace-3-kernels.csv", ("nsys.csv", NSYS)],
    "nsys-kern-sum": [("sum.csv", KERN_SUM)],
    "kokkos-power": [("p.csv", "timestamp_nanoseconds,power_watts,device_id\n1700000000123456789,61.237,0\n1700000000223456789,99.9,0\n")],
    "kokkos-kernels": [
        ("k.csv", 'kernel_id,name,type,start_time_ns,end_time_ns,duration_ns\n0,"solve",FOR,1700000000123456789,1700000000123459125,2336\n')
    ],
    **SAMPLES,
}
CASES = [(fmt, src) for fmt in FORMATS for src in INPUTS.get(fmt, [None])]


def _path(src, tmp_path):
    if src == "gem5":  # the first two dumps of a real gem5 run's stats (the whole file takes seconds)
        with gzip.open(REPO / "tests" / "data" / "gem5-minor-sleep-1000MHz" / "stats.txt.gz", "rt") as f:
            text = f.read()
        end = "---------- End Simulation Statistics   ----------"
        src = ("stats.txt", end.join(text.split(end)[:2]) + end + "\n")
    if isinstance(src, tuple):
        path = tmp_path / src[0]
        path.write_text(src[1])
        return path
    return src


def read_back(path, like: pd.DataFrame) -> pd.DataFrame:
    """A table cosim wrote, with the column kinds of ``like`` (CSV keeps no types: text stays text, numbers are parsed)."""
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    text = pd.read_csv(path, dtype=str, keep_default_na=False)
    out = {}
    for name in like.columns:
        kind = like[name].dtype
        if pd.api.types.is_bool_dtype(kind):
            out[name] = text[name].map({"True": True, "False": False})
        elif str(kind) == "Int64" or pd.api.types.is_integer_dtype(kind):
            out[name] = pd.array([pd.NA if v == "" else int(v) for v in text[name]], dtype=kind if str(kind) == "Int64" else "int64")
        elif pd.api.types.is_float_dtype(kind):
            out[name] = np.array([math.nan if v == "" else float(v) for v in text[name]], dtype=float)
        else:
            out[name] = text[name].astype(object)
    return pd.DataFrame(out)


def _text(column: pd.Series) -> bool:
    return not (pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype))


def assert_lossless(table: pd.DataFrame, path) -> None:
    write_table(table, path)
    back = read_back(path, table)
    expected = table.reset_index(drop=True).copy()
    for name in expected.columns:  # CSV has one missing text: empty
        if _text(expected[name]):
            expected[name] = (
                expected[name].map(lambda v: "" if v is None or v is pd.NA or (isinstance(v, float) and v != v) else str(v)).astype(object)
            )
            back[name] = (
                back[name].map(lambda v: "" if v is None or v is pd.NA or (isinstance(v, float) and v != v) else str(v)).astype(object)
            )
    pd.testing.assert_frame_equal(back[list(expected.columns)], expected, check_exact=True, check_dtype=path.suffix == ".csv")


@pytest.mark.parametrize(("fmt", "src"), CASES, ids=[f"{f}-{i}" for i, (f, _) in enumerate(CASES)])
def test_every_format_reads_back_bit_for_bit(fmt, src, tmp_path):
    assert src is not None, f"no input for the format {fmt}: give it one in INPUTS"
    table = read(_path(src, tmp_path), format=fmt).assign(flags="")
    assert len(table) > 0
    assert_lossless(table, tmp_path / "t.csv")
    pytest.importorskip("pyarrow")
    assert_lossless(table, tmp_path / "t.parquet")


def test_timestamps_100_ms_apart_stay_apart(tmp_path):
    # 163 nvidia-smi readings 100 ms apart: Unix seconds need 13 digits to tell them apart
    lines = ["timestamp, power.draw [W]"] + [f"2024/05/01 10:00:{i // 10:02d}.{i % 10}00, {50 + i % 7}.25 W" for i in range(163) if i < 600]
    path = tmp_path / "smi.csv"
    path.write_text("\n".join(lines) + "\n")
    table = read(path)
    write_table(table, tmp_path / "long.csv")
    back = pd.read_csv(tmp_path / "long.csv")
    times = back.loc[back["metric"] == "timestamp", "value"]
    assert times.nunique() == 163
    assert (
        np.diff(times.to_numpy()).round(6).tolist() == [0.1] * 162
    )  # by hand: 100 ms apart (to the float resolution of Unix seconds, 0.24 us)


def test_large_counters_and_nanosecond_times_read_back_exactly(tmp_path):
    big = 2**53 + 1  # a 64-bit counter a float cannot hold
    table = pd.DataFrame(
        {"count": np.array([big, 2**62], dtype=np.int64), "start_ns": np.array([1_700_000_000_123_456_789, 7], dtype=np.int64)}
    )
    assert_lossless(table, tmp_path / "c.csv")
    assert (tmp_path / "c.csv").read_text().splitlines()[1].startswith("9007199254740993,1700000000123456789")


def test_trace_times_stay_integer_nanoseconds_and_durations_are_the_traces_own(tmp_path):
    import numpy as np

    from cosim.readers.gpu_logs import read_trace
    from cosim.timeline.measured_energy import kernel_energy

    header = "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name"
    rows = [f"{1_000_000_000 + 3_001 * i},{2_336 + i},{i},1,1,1,32,1,1,16,0.000,0.000,,,,,GPU (0),1,,7,k{i % 3}" for i in range(50)]
    trace = read_trace(write_text(tmp_path / "t.csv", "\n".join([header, *rows]) + "\n"))
    assert trace["duration_ns"].tolist() == [2_336 + i for i in range(50)]  # as printed
    assert (trace["end_ns"] - trace["start_ns"]).tolist() == trace["duration_ns"].tolist()
    assert_lossless(trace, tmp_path / "trace.csv")
    # on a Unix-epoch log clock (offset 1.7e9 s) a duration is still the trace's own, not a multiple of 0.24 us
    samples = pd.DataFrame({"time_s": 1.7e9 + np.arange(40) * 0.05, "power_w": np.full(40, 100.0)})
    table = kernel_energy(trace, samples, window_s=0.0, offset_s=1.7e9)
    assert (table["duration_s"].to_numpy() == trace["duration_ns"].to_numpy() / 1e9).all()
    offset_way = (trace["end_s"].to_numpy() + 1.7e9) - (trace["start_s"].to_numpy() + 1.7e9)
    assert np.abs(offset_way - trace["duration_s"].to_numpy()).max() > 1e-8  # what the difference on that clock gave


def write_text(path, text: str):
    path.write_text(text)
    return path
