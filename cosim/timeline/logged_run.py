"""One run's power log and kernel trace, read and put on one time axis: what ``cosim gpu-energy`` measures, and what
``cosim kernel-fit``'s pair folders measure each kernel's power from."""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError, CosimWarning


@dataclass(frozen=True)
class LoggedRun:
    samples: pd.DataFrame  # the readings: time_s [s] on the log's clock, power_w [W]; attrs['power'] as read
    kernels: pd.DataFrame  # the trace's kernel launches: kernel, start_s, end_s, duration_s [s] on the trace's clock
    window_s: float  # the readings' averaging window [s] (0: instantaneous)
    period_s: float  # the readings' period [s]
    offset_s: float  # the log's time at the trace's zero [s]
    aligned_by: str  # how the offset was found, for a message
    window_from: str = ""  # where the window came from, for a message
    searched: bool = False  # whether the offset was found by the correlation search (not given, not one clock)


def read_logged_run(
    power_log: str | Path,
    trace: str | Path,
    *,
    field: str | None = None,
    gpu: str | None = None,
    period_s: float | None = None,
    window_s: float | None = None,
    offset_s: float | None = None,
    trace_zero: str | None = None,
    window_way_out: str = "",
    align_way_out: str = "",
) -> LoggedRun:
    """The readings and kernel launches of one run on one time axis.

    The offset is ``trace_zero`` (the trace's zero as the log prints times), else ``offset_s`` [s] after the log's
    first reading, else the tool's own clock when both files count from it (a Kokkos energy tool's pair), else the
    shift at which power follows the kernels best (:func:`cosim.timeline.measured_energy.align_offset`;
    ``align_way_out`` replaces its way out when it finds none).  Readings that move faster than their averaging
    window allows are named in a warning ending with ``window_way_out``."""
    from cosim.readers.gpu_logs import read_power_log, read_trace
    from cosim.readers.nvidia_smi import timestamp_s
    from cosim.timeline.measured_energy import align_offset, sample_period_s, window_contradiction

    samples = read_power_log(power_log, field=field, gpu=gpu, period_s=period_s)
    power = samples.attrs["power"]
    if window_s is not None:
        window, window_from = window_s, "--window-s"
    else:
        window, window_from = documented_window_s(power["field"], power.get("gpu_name"), power["window_s"])
    if why := window_contradiction(samples, window):
        warnings.warn(
            CosimWarning(f"{power_log}: {power['field']} is read as a mean over {window:g} s, but {why}{window_way_out}"), stacklevel=2
        )
    launches = read_trace(trace)
    kernels = launches[launches["kind"] == "kernel"].reset_index(drop=True)
    if kernels.empty:
        raise CosimError(f"{trace}: no kernel launches in the trace (only copies); give the trace of a run that launched kernels")
    period = sample_period_s(samples["time_s"].to_numpy())
    first = float(samples["time_s"].iloc[0])
    one_clock = bool(power.get("clock")) and power.get("clock") == launches.attrs.get("nvprof", {}).get("clock")
    searched = trace_zero is None and offset_s is None and not one_clock
    if trace_zero is not None:
        offset, how = timestamp_s(trace_zero, where="--trace-zero"), f"--trace-zero {trace_zero}"
    elif offset_s is not None:
        offset, how = first + offset_s, f"--offset-s {offset_s:g}"
    elif one_clock:
        offset, how = 0.0, f"the one clock both files count from ({power['clock']}); --offset-s overrides it"
    else:
        try:
            offset, r = align_offset(kernels, samples, window_s=window, period_s=period)
        except CosimError as err:
            if not align_way_out:
                raise
            raise CosimError(f"{trace}: {str(err).split(';')[0]}; {align_way_out}") from None
        how = f"the best fit of power to kernel activity (correlation {r:.2f}); check it, or give --offset-s"
    return LoggedRun(samples, kernels, window, period, offset, how, window_from, searched)


#: GPUs whose NVML power (power.draw, nvmlDeviceGetPowerUsage) is instantaneous: GA100 and older architectures
_INSTANT_GPUS = re.compile(
    r"\b(A100|A30|A800|PG506|V100|TITAN V|T4|Tesla [KMP]\d+|P100|P40|P4|K80|GTX \d{3,4}|RTX 20\d0|Quadro RTX|GTX 16\d0)\b", re.I
)
#: GPUs whose NVML power is a one-second mean: Ampere (except GA100) and newer
_MEAN_GPUS = re.compile(
    r"\b(RTX 30\d0|RTX A\d{4}|A10G?|A16|A2|A40|RTX 40\d0|L4|L40S?|RTX \d{4} Ada|H100|H200|H800|H20|GH200|B100|B200|GB200|RTX 50\d0)\b",
    re.I,
)


def documented_window_s(field: str, gpu_name: str | None, default_s: float) -> tuple[float, str]:
    """The averaging window [s] NVIDIA documents for ``field`` on the GPU the log names, and why: NVML's
    ``nvmlDeviceGetPowerUsage`` (nvidia-smi's ``power.draw``) "on Ampere (except GA100) or newer GPUs returns power
    averaged over 1 sec interval; on GA100 and older architectures, instantaneous power"; ``power.draw.average`` is a
    one-second mean and ``power.draw.instant`` instantaneous (driver 530 and later).  ``default_s`` where the log
    names no GPU this knows."""
    if field == "power.draw.instant":
        return 0.0, "power.draw.instant is instantaneous (NVIDIA's nvidia-smi --help-query-gpu)"
    if field == "power.draw.average":
        return 1.0, "power.draw.average is a one-second mean (nvidia-smi --help-query-gpu)"
    if gpu_name and _INSTANT_GPUS.search(gpu_name):
        return 0.0, f"NVML documents {field} of a {gpu_name} (GA100 or older) as instantaneous"
    if gpu_name and _MEAN_GPUS.search(gpu_name):
        return 1.0, f"NVML documents {field} of a {gpu_name} (Ampere except GA100, or newer) as a one-second mean"
    return default_s, f"assumed: the log names no GPU whose {field} NVIDIA documents (give --window-s)"
