"""One run's power log and kernel trace, read and put on one time axis: what ``cosim gpu-energy`` measures, and what
``cosim kernel-fit``'s pair folders measure each kernel's power from."""

from __future__ import annotations

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
    window = power["window_s"] if window_s is None else window_s
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
    if trace_zero is not None:
        offset, how = timestamp_s(trace_zero, where="--trace-zero"), f"--trace-zero {trace_zero}"
    elif offset_s is not None:
        offset, how = first + offset_s, f"--offset-s {offset_s:g}"
    elif (clock := power.get("clock")) and clock == launches.attrs.get("nvprof", {}).get("clock"):
        offset, how = 0.0, f"the one clock both files count from ({clock}); --offset-s overrides it"
    else:
        try:
            offset, r = align_offset(kernels, samples, window_s=window, period_s=period)
        except CosimError as err:
            if not align_way_out:
                raise
            raise CosimError(f"{trace}: {str(err).split(';')[0]}; {align_way_out}") from None
        how = f"the best fit of power to kernel activity (correlation {r:.2f}); check it, or give --offset-s"
    return LoggedRun(samples, kernels, window, period, offset, how)
