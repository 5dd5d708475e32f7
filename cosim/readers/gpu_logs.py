"""Power logs and kernel traces of one run, by their content: what ``cosim gpu-energy`` and ``--gpu-trace`` read."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cosim.errors import CosimError

if TYPE_CHECKING:
    import pandas as pd


def read_trace(path: str | Path) -> pd.DataFrame:
    """The GPU activities (kernels, copies) of a trace, by its content: nvprof ``--print-gpu-trace`` (text or
    --csv, alone or inside a ``--metrics`` log), nsys ``cuda_gpu_trace`` CSV or a Kokkos energy tool's kernels CSV; columns as
    :func:`cosim.readers.nvprof_trace.read_gpu_trace` gives them, times [s] on the trace's own clock."""
    from cosim.readers.tidy import detect_format

    path = Path(path)
    fmt = detect_format(path, way_out="give nvprof --print-gpu-trace output or nsys stats --report cuda_gpu_trace --format csv")
    if fmt == "kokkos-kernels":
        from cosim.readers.kokkos_energy import read_kernels

        return read_kernels(path)
    if fmt == "nsys-gpu-trace":
        from cosim.readers.nsys import read_nsys_trace

        return read_nsys_trace(path)
    if fmt in ("nvprof-gpu-trace", "nvprof-metrics"):
        from cosim.readers.nvprof_trace import read_gpu_trace

        return read_gpu_trace(path)
    raise CosimError(
        f"{path}: a {fmt} file, not a kernel trace; give nvprof --print-gpu-trace output or nsys stats --report cuda_gpu_trace --format csv"
    )


def read_power_log(
    path: str | Path, *, field: str | None = None, gpu: str | None = None, period_s: float | None = None, columns: dict | None = None
) -> pd.DataFrame:
    """``time_s`` [s] and ``power_w`` [W] of one GPU's readings from an nvidia-smi ``--query-gpu`` CSV, an
    ``nvidia-smi dmon -o DT`` log, a Kokkos energy tool's NVML power CSV, a Jetson tegrastats log (a rail: ``field``),
    an amd-smi/rocm-smi or other power CSV (``columns``: ``--columns``; ``energy_j`` [J] too where it logs a counter)
    or a DCGM ``dcgmi dmon`` log (logs without times: ``period_s``, the sampling period, gives them), with
    ``attrs['power']``: ``field``, ``window_s`` (its averaging window [s]) and ``gpu``."""
    import pandas as pd

    from cosim.readers.tidy import detect_format

    path = Path(path)
    if columns:
        from cosim.readers.power_csv import power_samples as csv_samples

        return csv_samples(path, gpu=gpu, period_s=period_s, columns=columns)
    fmt = detect_format(path, way_out="give nvidia-smi --query-gpu=timestamp,power.draw --format=csv -lms 100 output, or dcgmi dmon's")
    if fmt == "tegrastats":
        from cosim.readers.tegrastats import power_samples as rail_samples

        return rail_samples(path, field=field, period_s=period_s)
    if fmt == "power-csv":
        from cosim.readers.power_csv import power_samples as csv_samples

        return csv_samples(path, gpu=gpu, period_s=period_s)
    if fmt == "kokkos-power":
        from cosim.readers.kokkos_energy import read_power

        return read_power(path, gpu=gpu)
    if fmt in ("nvidia-smi", "nvidia-smi-dmon"):
        from cosim.readers.nvidia_smi import power_samples, read_dmon, read_query_gpu

        wide = read_query_gpu(path) if fmt == "nvidia-smi" else read_dmon(path)
        return power_samples(path, wide, field=field, gpu=gpu)
    if fmt == "dcgm-dmon":
        from cosim.readers.dcgm import read_dcgm

        if period_s is None or not (period_s > 0):
            raise CosimError(f"{path}: dcgmi dmon writes no times; give its sample period with --period-s (its -d, in s)")
        rows = read_dcgm(path)
        power = rows[rows["metric"] == (field or "POWER")]
        entities = sorted(set(power["entity"]))
        if not entities:
            raise CosimError(f"{path}: no {field or 'POWER'} field; log it with dcgmi dmon -e 155,...")
        entity = gpu if gpu is not None else entities[0]
        if gpu is None and len(entities) > 1:
            raise CosimError(f"{path}: the log holds {', '.join(entities)}; say which ran the trace with --gpu '{entities[0]}'")
        mine = power[(power["entity"] == entity) & power["value"].notna()]
        if mine.empty:
            raise CosimError(f"--gpu {entity}: {path} holds {', '.join(entities)}")
        out = pd.DataFrame({"time_s": mine["sample"].to_numpy() * period_s, "power_w": mine["value"].to_numpy()})
        totec = rows[(rows["metric"] == "TOTEC") & (rows["entity"] == entity)].set_index("sample")["value"]
        if totec.notna().any():  # DCGM's energy counter, J (read as mJ)
            out["energy_j"] = totec.reindex(mine["sample"]).to_numpy()
        out.attrs["power"] = {"path": str(path), "field": field or "POWER", "window_s": 1.0, "gpu": entity}
        return out
    raise CosimError(
        f"{path}: a {fmt} file, not a power log over time; give nvidia-smi --query-gpu=timestamp,power.draw --format=csv output"
    )
