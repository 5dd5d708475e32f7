"""One entry point for every input cosim reads: ``read(path)`` -> one long, tidy table.

Columns (every format):

========== ====================================================================
source     the format: gem5, ocelot, nvprof-metrics, nvprof-gpu-trace,
           nvprof-gpu-summary, ncu, gpgpusim, gpuwattch, dcgm-dmon,
           accelwattch-hw-perf (``benchmark/kernel``), accelwattch-hw-power,
           gpu-power-samples, nvidia-smi (--query-gpu CSV), nvidia-smi-dmon,
           nsys-gpu-trace, nsys-kern-sum, kokkos-power, kokkos-kernels (a Kokkos
           energy tool's NVML power and kernels CSVs), tegrastats (Jetson),
           power-csv (amd-smi/rocm-smi CSVs, loggers' CSVs, wide per-GPU logs),
           ncu-text (Nsight Compute's default text report)
kernel     the kernel name as the tool printed it; for gem5, ``epoch N``;
           empty for samples over time (DCGM, board power logs)
launch     which launch of that kernel (0, 1, ...); for gem5 the dump index;
           for samples over time the sample index;
           empty where the tool only reports a summary over launches
metric     the tool's own metric name, unchanged
value      the value in SI base units: B, s, B/s, Hz, W, J; counts stay
           counts, percentages become fractions 0-1
unit       B, s, B/s, Hz, W, W^2, J, V, count, fraction, level (nvprof's 0-10
           utilisation levels), cycle, degC, or the tool's own unit where it
           has no SI form (``inst/cycle``); empty where the tool states none
device     the device name where the file gives it (DCGM: the entity, ``GPU 0``)
statistic  value, or min/max/avg/total for nvprof summaries over launches
========== ====================================================================
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path
from typing import TYPE_CHECKING

from cosim.errors import CosimError
from cosim.readers.files import input_file

if TYPE_CHECKING:
    import pandas as pd

FORMATS = (
    "gem5",
    "ocelot",
    "nvprof-metrics",
    "nvprof-gpu-trace",
    "nvprof-gpu-summary",
    "ncu",
    "gpgpusim",
    "gpuwattch",
    "dcgm-dmon",
    "accelwattch-hw-perf",
    "accelwattch-hw-power",
    "gpu-power-samples",
    "nvidia-smi",
    "nvidia-smi-dmon",
    "nsys-gpu-trace",
    "nsys-kern-sum",
    "kokkos-power",
    "kokkos-kernels",
    "tegrastats",
    "power-csv",
    "ncu-text",
)
COLUMNS = ("source", "kernel", "launch", "metric", "value", "unit", "device", "statistic")


def detect_format(path: str | Path, *, way_out: str | None = None) -> str:
    """The format of ``path`` from its content (one of :data:`FORMATS`); a :class:`CosimError` if none fits, ending
    with ``way_out`` (default: naming the format, as ``cosim read --format`` does)."""
    from cosim.readers.accelwattch_hw import looks_like_hw_perf, looks_like_hw_power
    from cosim.readers.dcgm import looks_like_dcgm
    from cosim.readers.gpgpusim import looks_like_gpgpusim, looks_like_power_report
    from cosim.readers.kokkos_energy import layout as kokkos_layout
    from cosim.readers.ncu import looks_like_ncu
    from cosim.readers.ncu_text import looks_like_ncu_text
    from cosim.readers.nsys import nsys_layout
    from cosim.readers.nvidia_smi import looks_like_dmon, looks_like_query_gpu
    from cosim.readers.nvprof_trace import nvprof_layout
    from cosim.readers.power_csv import looks_like_power_csv
    from cosim.readers.tegrastats import looks_like_tegrastats

    path = Path(path)
    input_file(
        path,
        what="a gem5 stats.txt, an nvprof/ncu log, a GPGPU-Sim log or an Ocelot trace",
        empty_hint="was the run or the profile cut short? Give the tool's saved output",
    )
    head = _head(path, 4 << 20)  # read once; a GPGPU-Sim log's first block can follow megabytes of start-up output
    if "Begin Simulation Statistics" in head[: 1 << 16]:
        return "gem5"
    if "Kernel name:" in head[: 1 << 16]:
        return "ocelot"
    if looks_like_power_report(head[: 1 << 20]):
        return "gpuwattch"
    if looks_like_gpgpusim(head):
        return "gpgpusim"
    if looks_like_ncu(head[: 1 << 20]):
        return "ncu"
    if looks_like_ncu_text(head[: 1 << 20]):
        return "ncu-text"
    if looks_like_tegrastats(head[: 1 << 16]):
        return "tegrastats"
    if layout := nvprof_layout(head[: 1 << 20]):
        return f"nvprof-{layout}"
    if looks_like_hw_perf(head[: 1 << 16]):
        return "accelwattch-hw-perf"
    if looks_like_hw_power(head[: 1 << 16]):
        return "accelwattch-hw-power"
    if looks_like_dcgm(head[: 1 << 16]):
        return "dcgm-dmon"
    if "P-state" in head[:4096] and "Power(mW)" in head[:4096]:
        return "gpu-power-samples"
    if layout := nsys_layout(head[: 1 << 16]):
        return f"nsys-{layout}"
    if layout := kokkos_layout(head[:4096]):
        return f"kokkos-{layout}"
    if looks_like_query_gpu(head[: 1 << 16]):
        return "nvidia-smi"
    if looks_like_dmon(head[: 1 << 16]):
        return "nvidia-smi-dmon"
    if looks_like_power_csv(head[: 1 << 16]):
        return "power-csv"
    raise CosimError(
        f"{path}: not a format cosim reads (gem5 stats, nvprof, ncu --csv, nsys stats CSV, nvidia-smi CSV or dmon, "
        f"GPGPU-Sim/Accel-Sim, GPUWattch/AccelWattch, AccelWattch hw_perf.csv, DCGM dmon, Ocelot, Kokkos energy CSVs, "
        f"tegrastats, amd-smi/rocm-smi CSVs, a CSV of power over time, ncu's text report); {way_out or 'name it with --format {' + ','.join(FORMATS) + '}, or map its columns with --columns'}"
    )


def read(path: str | Path, *, format: str | None = None, columns: dict[str, str] | None = None) -> pd.DataFrame:  # noqa: A002 - the CLI's --format
    """Read any supported input into the long table described in this module's docstring; ``columns`` (``--columns``)
    names a power log's columns (:mod:`cosim.readers.column_map`)."""
    import pandas as pd

    path = Path(path)
    fmt = format or ("power-csv" if columns else detect_format(path))
    if fmt not in FORMATS:
        raise CosimError(f"--format {fmt}: cosim reads {', '.join(FORMATS)}")
    if columns and fmt != "power-csv":
        raise CosimError(f"--columns: names the columns of a power log (power-csv), not of a {fmt} file")
    rows = _power_csv(path, columns) if columns else _READERS[fmt](path)
    out = pd.DataFrame(rows, columns=list(COLUMNS)) if isinstance(rows, list) else rows
    given = out["source"] if "source" in out else None
    out["source"] = (
        given.where(given.astype(bool), fmt) if given is not None and len(out) else fmt
    )  # a section of another kind keeps its own
    out["launch"] = out["launch"].astype("Int64")
    out = out[list(COLUMNS)]
    out.attrs["read"] = {"path": str(path), "format": fmt}
    return out


def _head(path: Path, size: int = 1 << 16) -> str:
    """The file's first ``size`` characters (gzip undone)."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", errors="replace") as f:
            return f.read(size)
    except (OSError, EOFError) as err:
        raise CosimError(f"{path}: cannot read ({err})") from None


_GEM5_UNIT = re.compile(r"^(?P<name>\S+)\s.*#.*\((?P<unit>[A-Za-z/()]+)\)\s*$")
_GEM5_UNITS = {
    "Second": "s",
    "Byte": "B",
    "Count": "count",
    "Cycle": "cycle",
    "Ratio": "1",
    "Hertz": "Hz",
    "Watt": "W",
    "Joule": "J",
    "Volt": "V",
    "Tick": "s",
    "(Byte/Second)": "B/s",
    "(Tick/Second)": "Hz",
}


def _gem5(path: Path) -> pd.DataFrame:
    from cosim.readers.gem5_stats import read_stats, stats_meta

    stats = read_stats(path)
    units = _gem5_units(path)
    ticks_per_s = stats_meta(stats).ticks_per_s
    names = [c for c in stats.columns if c not in ("epoch", "start_tick", "end_tick", "duration_s")]
    long = stats.melt(id_vars=["epoch"], value_vars=names, var_name="metric", value_name="value")
    long["unit"] = long["metric"].map(lambda n: _GEM5_UNITS.get(units.get(n, ""), units.get(n, "")))
    tick = long["metric"].map(lambda n: units.get(n) == "Tick")
    long.loc[tick, "value"] = long.loc[tick, "value"] / ticks_per_s  # ticks -> seconds
    long["kernel"] = "epoch " + long["epoch"].astype(str)
    long["launch"] = long["epoch"]
    long["device"] = ""
    long["statistic"] = "value"
    return long


def _gem5_units(path: Path) -> dict[str, str]:
    """gem5 (v21+) ends each description with its unit, ``(Count)``; older gem5 states none."""
    units: dict[str, str] = {}
    for line in _head(path).splitlines():
        if "End Simulation Statistics" in line:
            break
        if m := _GEM5_UNIT.match(line):
            units[m["name"]] = m["unit"]
    return units


def _ocelot(path: Path) -> list[tuple]:
    from cosim.readers.ocelot import OCELOT_CLASSES, read_ocelot_trace

    trace = read_ocelot_trace(path).rename(columns={f"n_{cls}": cls for cls in OCELOT_CLASSES})
    return _long(trace, dict.fromkeys(OCELOT_CLASSES, "count"), kernel="kernel_display", launch=trace.groupby("kernel").cumcount())


def _nvprof_metrics(path: Path) -> list[tuple]:
    import warnings

    from cosim.errors import CosimWarning
    from cosim.readers.nvprof import metric_records

    rows, seen = [], set()
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        records = metric_records(path)
    trace = False
    for w in said:
        if issubclass(w.category, CosimWarning) and "--print-gpu-trace section" in str(w.message):
            trace = True  # read below, with the metrics
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if trace:  # nvprof --print-gpu-trace --metrics: the trace's rows too, as --format nvprof-gpu-trace reads them
        rows += [("nvprof-gpu-trace", *row[1:]) for row in _nvprof_trace(path)]
    for r in records:
        if (r.device, r.kernel) not in seen:
            seen.add((r.device, r.kernel))
            rows.append(("", r.kernel, None, "invocations", float(r.invocations), "count", r.device, "value"))
        for stat in ("min", "max", "avg", "total"):
            value = getattr(r, stat)
            if value == value:  # events alone have a total
                rows.append(("", r.kernel, None, r.metric, value, r.unit, r.device, stat))
    return rows


_TRACE_UNITS = {
    "start_s": "s",
    "duration_s": "s",
    "end_s": "s",
    "size_b": "B",
    "throughput_b_per_s": "B/s",
    "registers_per_thread": "count",
    "static_smem_b": "B",
    "dynamic_smem_b": "B",
    "grid_x": "count",
    "grid_y": "count",
    "grid_z": "count",
    "block_x": "count",
    "block_y": "count",
    "block_z": "count",
    "page_faults": "count",
}


def _nvprof_trace(path: Path) -> list[tuple]:
    from cosim.readers.nvprof_trace import read_gpu_trace

    trace = read_gpu_trace(path)
    return _long(trace, _TRACE_UNITS, launch=trace["launch"])


def _nvprof_summary(path: Path) -> list[tuple]:
    from cosim.readers.nvprof_trace import read_gpu_summary

    units = {"time_fraction": "fraction", "time_s": "s", "calls": "count", "avg_s": "s", "min_s": "s", "max_s": "s"}
    return _long(read_gpu_summary(path), units)


def _ncu(path: Path) -> pd.DataFrame:
    from cosim.readers.ncu import read_ncu

    out = read_ncu(path).assign(statistic="value")
    return out


def _gpgpusim(path: Path) -> list[tuple]:
    from cosim.readers.gpgpusim import COUNTERS, read_gpgpusim

    runs = read_gpgpusim(path)
    return _long(runs, {**COUNTERS, "duration_s": "s"}, launch=runs.groupby("kernel").cumcount())


def _gpuwattch(path: Path) -> list[tuple]:
    from cosim.readers.gpgpusim import read_power_report

    report = read_power_report(path)
    # power columns: the *_w totals and the components (labels ending in P, FP_EXP, constant_power); the rest are
    # counters (AccelWattch's gpu_tot_TOT_INST: the kernel's total, the others per-sample means)
    power = ("gpu_avg_FP_EXP", "gpu_avg_constant_power")
    units = {
        c: "W" if c.endswith("_w") or c.endswith("P") or c in power else "count"
        for c in report.columns
        if c.endswith("_w") or c.startswith("gpu_avg_") or c == "gpu_tot_TOT_INST"
    }
    return _long(report, units, launch=report.groupby("kernel").cumcount())


def _long(table: pd.DataFrame, units: dict[str, str], *, kernel: str = "kernel", launch=None) -> list[tuple]:
    """The tidy rows of a wide per-launch table: one per present, non-missing metric of ``units`` (metric -> unit)."""
    launches = [None] * len(table) if launch is None else list(launch)
    devices = table["device"].tolist() if "device" in table else [""] * len(table)
    rows = []
    for (_, row), n, device in zip(table.iterrows(), launches, devices):
        for metric, unit in units.items():
            if metric in row and row[metric] == row[metric]:
                rows.append(("", row[kernel], n, metric, float(row[metric]), unit, device, "value"))
    return rows


def _dcgm(path: Path) -> pd.DataFrame:
    from cosim.readers.dcgm import read_dcgm

    rows = read_dcgm(path)
    return rows.assign(kernel="", launch=rows["sample"], device=rows["entity"], statistic="value")


def _hw_perf(path: Path) -> list[tuple]:
    from cosim.readers.accelwattch_hw import UNITS, read_hw_perf

    table = read_hw_perf(path)
    table["kernel"] = table["benchmark"] + "/" + table["kernel"]  # the benchmark names the kernel's run
    units = {name: UNITS.get(name, "count") for name in table.attrs["hw_perf"]["counters"]}
    return _long(table, units, launch=table.groupby("kernel").cumcount())


def _hw_power(path: Path) -> list[tuple]:
    from cosim.readers.accelwattch_hw import POWER_UNITS, read_hw_power

    table = read_hw_power(path)
    table = table.rename(columns=table.attrs["hw_power"]["columns"])  # the tool's own names, as every format keeps
    return _long(table, POWER_UNITS)


def _power_samples(path: Path) -> list[tuple]:
    from cosim.readers.dvfs_logs import power_samples

    samples = power_samples(path)
    rows = []
    for i, (core_mhz, mem_mhz, power_w) in enumerate(samples):
        rows += [
            ("", "", i, "Core-F(MHz)", core_mhz * 1e6, "Hz", "", "value"),
            ("", "", i, "Mem-F(MHz)", mem_mhz * 1e6, "Hz", "", "value"),
            ("", "", i, "Power(mW)", power_w, "W", "", "value"),
        ]
    return rows


def _nvidia_smi(path: Path) -> pd.DataFrame:
    from cosim.readers.nvidia_smi import long_table, read_query_gpu

    return long_table(read_query_gpu(path))


def _nvidia_smi_dmon(path: Path) -> pd.DataFrame:
    from cosim.readers.nvidia_smi import long_table, read_dmon

    return long_table(read_dmon(path))


def _nsys_trace(path: Path) -> list[tuple]:
    from cosim.readers.nsys import UNITS, read_nsys_trace

    trace = read_nsys_trace(path)
    return _long(trace, UNITS, launch=trace["launch"])


def _nsys_kern_sum(path: Path) -> list[tuple]:
    from cosim.readers.nsys import SUMMARY_UNITS, read_nsys_kern_sum

    return _long(read_nsys_kern_sum(path), SUMMARY_UNITS)


def _kokkos_power(path: Path) -> list[tuple]:
    from cosim.readers.kokkos_energy import read_power_table

    rows = []
    for r in read_power_table(path).itertuples():
        rows += [
            ("", "", r.sample, "timestamp", r.time_s, "s", r.device, "value"),
            ("", "", r.sample, "power_watts", r.power_w, "W", r.device, "value"),
        ]
    return rows


def _kokkos_kernels(path: Path) -> list[tuple]:
    from cosim.readers.kokkos_energy import read_kernels

    trace = read_kernels(path)
    return _long(trace, {"start_s": "s", "duration_s": "s", "end_s": "s"}, launch=trace["launch"])


def _tegrastats(path: Path) -> pd.DataFrame:
    from cosim.readers.tegrastats import long_table, read_tegrastats

    return long_table(read_tegrastats(path))


def _power_csv(path: Path, columns: dict[str, str] | None = None) -> pd.DataFrame:
    from cosim.readers.power_csv import long_table, read_power_csv

    return long_table(read_power_csv(path, columns=columns))


def _ncu_text(path: Path) -> pd.DataFrame:
    from cosim.readers.ncu_text import read_ncu_text

    return read_ncu_text(path).assign(statistic="value")


_READERS = {
    "gem5": _gem5,
    "ocelot": _ocelot,
    "nvprof-metrics": _nvprof_metrics,
    "nvprof-gpu-trace": _nvprof_trace,
    "nvprof-gpu-summary": _nvprof_summary,
    "ncu": _ncu,
    "gpgpusim": _gpgpusim,
    "gpuwattch": _gpuwattch,
    "dcgm-dmon": _dcgm,
    "accelwattch-hw-perf": _hw_perf,
    "accelwattch-hw-power": _hw_power,
    "gpu-power-samples": _power_samples,
    "nvidia-smi": _nvidia_smi,
    "nvidia-smi-dmon": _nvidia_smi_dmon,
    "nsys-gpu-trace": _nsys_trace,
    "nsys-kern-sum": _nsys_kern_sum,
    "kokkos-power": _kokkos_power,
    "kokkos-kernels": _kokkos_kernels,
    "tegrastats": _tegrastats,
    "power-csv": _power_csv,
    "ncu-text": _ncu_text,
}
