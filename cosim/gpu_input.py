"""One place that resolves a GPU input: its format, reader, device, model and flags.

``cosim gpu``, ``cosim soc`` and the Python API start here, as :func:`cosim.open_run` is where a gem5 run
starts, so a GPU log is read, checked and priced the same way whichever of them reads it::

    gpu = cosim.open_gpu("run.log", model="ocelot-fermi-aalto2013")  # format detected, device checked
    timeline = cosim.price_gpu(gpu)                                   # per-kernel power [W] and energy [J]

What is resolved, in order: the model file (rail model or access-rate model); the input's format from its
content (:func:`cosim.readers.tidy.detect_format`) and the reader of that format; whether the model can price
that kind of data at all; the device the data names against the devices the model was trained on
(:mod:`cosim.models.device`), giving the flag every kernel row carries; and, for nvprof metrics, metrics the
model does not know (refused after the device, so a log of another GPU is refused for its device first).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cosim.errors import CosimError

if TYPE_CHECKING:
    import pandas as pd

#: The model file schemas a GPU model may have, and what cosim calls each kind.
MODEL_KINDS = {"cosim-rail-model/1": "rail", "cosim-access-rate-model/1": "access-rate"}
RAIL_MODEL = "tegra-k1-stokke2016"
ACCESS_RATE_MODEL = "ocelot-fermi-aalto2013"


#: What cosim gpu prices, and what it can do with a GPU file it cannot price: said in every such refusal.
PRICED = "cosim gpu prices Ocelot traces, nvprof --metrics and ncu --csv logs, and GPGPU-Sim/Accel-Sim stdout"
INSTEAD = (
    "read the file into a table with cosim read, or fit runtime and power models of this GPU's kernels from measured "
    "data with cosim kernel-fit (docs/howto/kernel-models.md)"
)
_NOT_PRICED = {
    "dcgm-dmon": "DCGM dmon samples are GPU-wide activity over time",
    "accelwattch-hw-perf": "an AccelWattch hw_perf.csv is hardware counters for AccelWattch's HW mode",
    "accelwattch-hw-power": "an AccelWattch power validation table is measured power per kernel",
    "gpu-power-samples": "a board power log is measured power over time",
    "nvidia-smi": "an nvidia-smi log is measured power over time (its energy per kernel: cosim gpu-energy LOG TRACE)",
    "nvidia-smi-dmon": "an nvidia-smi dmon log is measured power over time (its energy per kernel: cosim gpu-energy LOG TRACE)",
    "nsys-kern-sum": "an nsys kernel summary holds times, not the metrics a power model prices",
    "tegrastats": "a tegrastats log is a Jetson's measured rail power over time",
    "power-csv": "a power log is measured power over time (its energy per kernel: cosim gpu-energy LOG TRACE)",
}


@dataclass(frozen=True)
class GpuInput:
    """A GPU input resolved for pricing. ``path`` is as given, so messages show what the user typed."""

    path: Path
    format: str  # as detect_format names it: ocelot, nvprof-metrics, ncu, gpgpusim
    kind: str  # what the data is to a model: "ocelot" (class counts), "nvprof" (metrics) or "gpgpusim" (counters)
    data: pd.DataFrame  # the reader's per-launch table
    model_kind: str  # "rail" or "access-rate"
    model: Any  # RailModel or AccessRateModel
    device: str | None  # the device the data names (None where it names none)
    capability: str | None  # its compute capability, where the data gives it
    flag: str = ""  # "", "device_unknown" or "device_mismatch": carried by every kernel row


def model_kind(name: str | Path) -> tuple[str, Path]:
    """``("rail" | "access-rate", path)`` of a GPU model file or shipped name."""
    from cosim.models.modelfile import read_model_json

    path, data = read_model_json(str(name), schema=tuple(MODEL_KINDS), kind="GPU model")
    return MODEL_KINDS[data["schema"]], path


def read_gpu(path: str | Path, *, class_map: str | Path | None = None, ignore_metrics: Sequence[str] = ()) -> tuple[str, str, pd.DataFrame]:
    """``(format, kind, data)`` of a GPU input a power model can price, by its content.

    ``kind`` is ``"ocelot"`` (instruction-class counts), ``"nvprof"`` (nvprof metrics, ncu's mapped to them)
    or ``"gpgpusim"`` (per-kernel simulator counters). Other GPU files get a one-line :class:`CosimError`
    saying where they go instead.
    """
    from cosim.readers.tidy import detect_format

    path = Path(path)
    fmt = detect_format(path, way_out=f"{PRICED}; {INSTEAD}")
    if fmt == "ocelot":
        from cosim.readers.ocelot import read_class_map, read_ocelot_trace

        classes = read_class_map(class_map) if class_map else None
        return fmt, "ocelot", read_ocelot_trace(path, class_map=classes)
    if fmt == "nvprof-metrics":
        from cosim.readers.nvprof import read_nvprof

        # unknown metrics are refused after the device check: a GTX 980 log is refused for its device first
        return fmt, "nvprof", read_nvprof(path, ignore_metrics=list(ignore_metrics), allow_unknown=True)
    if fmt in ("ncu", "ncu-text"):  # --csv or the default text report: the same rows
        from cosim.readers.ncu import nvprof_metrics_from_ncu, read_ncu
        from cosim.readers.ncu_text import read_ncu_text

        long = read_ncu(path) if fmt == "ncu" else read_ncu_text(path)
        try:
            return fmt, "nvprof", nvprof_metrics_from_ncu(long)
        except CosimError:  # none of the model's metrics: first, whether the model could price this GPU at all
            devices = sorted({str(d) for d in long["device"] if str(d).strip()})
            capabilities = sorted({str(c) for c in long["capability"] if str(c).strip()})
            _no_model_of(path, "Nsight Compute metrics", devices[0] if devices else None, capabilities[0] if capabilities else None)
            raise
    if fmt == "gpgpusim":
        from cosim.readers.gpgpusim import read_gpgpusim

        return fmt, "gpgpusim", read_gpgpusim(path)
    if fmt in ("nvprof-gpu-trace", "nsys-gpu-trace"):
        raise CosimError(
            f"{path}: a kernel trace holds times, not the metrics a power model prices; give the log of nvprof --metrics "
            "as input and this file with --gpu-trace, its measured energy per kernel with cosim gpu-energy POWERLOG TRACE, "
            "or read it into a table with cosim read"
        )
    if fmt == "nvprof-gpu-summary":
        raise CosimError(
            f"{path}: an nvprof gpu-summary holds times, not the metrics a power model prices; give the log of nvprof "
            "--metrics as input, or read this file into a table with cosim read"
        )
    if fmt == "gpuwattch":
        raise CosimError(
            f"{path}: a GPUWattch/AccelWattch power report is a reference, not an input; give the simulator's "
            "stdout as input and this file with --compare-with"
        )
    if fmt in _NOT_PRICED:
        raise CosimError(f"{path}: {_NOT_PRICED[fmt]}, not the per-kernel counts a power model prices; {INSTEAD}")
    raise CosimError(f"{path}: a gem5 stats file; price it with cosim power (or cosim soc --gpu ...)")


def open_gpu(
    path: str | Path,
    *,
    model: str | Path = RAIL_MODEL,
    class_map: str | Path | None = None,
    ignore_metrics: Sequence[str] = (),
    keep_unknown: bool = False,
    any_device: bool = False,
) -> GpuInput:
    """Resolve the GPU input at ``path`` (Ocelot trace, nvprof metrics, ncu --csv, GPGPU-Sim/Accel-Sim stdout).

    Parameters
    ----------
    model
        A GPU model file or shipped name: the Tegra K1 rail model (default) or the Ocelot access-rate model.
    class_map
        TOML ``[classes]`` renaming or ignoring unknown Ocelot classes.
    ignore_metrics
        nvprof metrics to skip.
    keep_unknown
        Keep nvprof metrics the model does not use instead of refusing the file.
    any_device
        Price data from a GPU the model was not trained on (kernel rows flagged ``device_mismatch``).

    What the reader warned about (skipped lines, a cut-off last kernel) is said only when the input is priced:
    a refusal is the one line.
    """
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        gpu = _open_gpu(
            Path(path), model=model, class_map=class_map, ignore_metrics=ignore_metrics, keep_unknown=keep_unknown, any_device=any_device
        )
    for w in said:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return gpu


def _open_gpu(path: Path, *, model, class_map, ignore_metrics, keep_unknown: bool, any_device: bool) -> GpuInput:
    kind_of_model, model_path = model_kind(model)
    fmt, kind, data = read_gpu(path, class_map=class_map, ignore_metrics=ignore_metrics)
    if kind_of_model == "rail":
        from cosim.models.tegrak1 import load_rail_model

        loaded: Any = load_rail_model(model_path)
        if kind == "gpgpusim":
            raise _gpgpusim_for_the_rail_model(path, data)
    else:
        if kind == "nvprof":
            _no_model_of(path, "Nsight Compute metrics" if fmt == "ncu" else "nvprof metrics", *data_device(kind, data))
            raise CosimError(
                f"{path}: the access-rate model prices instruction classes (Ocelot traces, GPGPU-Sim logs); "
                "nvprof metrics need --model tegra-k1-stokke2016"
            )
        from cosim.models.ocelot import load_access_rate_model

        loaded = load_access_rate_model(model_path)
    device, capability = data_device(kind, data)
    if kind == "nvprof" and kind_of_model == "rail":
        from cosim.readers.nvprof import TEGRA_K1_METRICS

        if not set(TEGRA_K1_METRICS) <= set(data.columns):  # not what this model reads: --any-device would not help
            _no_model_of(path, "Nsight Compute metrics" if fmt == "ncu" else "nvprof metrics", device, capability)
    flag = _device_flag(path, kind, data, loaded.name, loaded.raw, any_device=any_device)
    unknown = data.attrs.get("nvprof", {}).get("first_unknown") if kind == "nvprof" else None
    if kind_of_model == "rail" and unknown and not keep_unknown:  # after the device: another GPU's log is refused for its device
        from cosim.readers.nvprof import unknown_metric_error

        raise unknown_metric_error(path, *unknown)
    return GpuInput(
        path=path,
        format=fmt,
        kind=kind,
        data=data,
        model_kind=kind_of_model,
        model=loaded,
        device=device,
        capability=capability,
        flag=flag,
    )


def _no_model_of(path: Path, what: str, device: str | None, capability: str | None) -> None:
    """Refuse (one line, saying what cosim can do instead) profiler metrics of a GPU the rail model was not trained on."""
    from cosim.models.device import device_flag, device_name
    from cosim.models.modelfile import read_model_json

    _, raw = read_model_json(RAIL_MODEL, schema=tuple(MODEL_KINDS), kind="GPU model")
    try:
        device_flag(RAIL_MODEL, raw, device=device, capability=capability, source=str(path))
    except CosimError:
        named = device_name(device) if device and not device.strip().isdigit() else f"compute capability {capability}"
        raise CosimError(
            f"{path}: {what} of {named}; cosim has no power model of that GPU (its one model of profiler metrics is "
            f"{RAIL_MODEL} (GK20A), of compute capability 3.2); {INSTEAD}"
        ) from None


def _gpgpusim_for_the_rail_model(path: Path, data) -> CosimError:
    """Where a GPGPU-Sim log given to the rail model goes: the access-rate model where its device fits, else none."""
    from cosim.models.device import device_flag
    from cosim.models.modelfile import read_model_json

    capability = data.attrs["gpgpusim"].get("compute_capability")
    _, raw = read_model_json(ACCESS_RATE_MODEL, schema=tuple(MODEL_KINDS), kind="GPU model")
    try:
        device_flag(ACCESS_RATE_MODEL, raw, device=None, capability=capability, source=str(path))
    except CosimError:
        return CosimError(
            f"{path}: a GPGPU-Sim/Accel-Sim log of a compute capability {capability} GPU; cosim has no power model of it "
            f"({ACCESS_RATE_MODEL}: compute capability {'/'.join(raw['device']['compute_capability'])}; {RAIL_MODEL}: nvprof "
            f"metrics of a GK20A); {INSTEAD}"
        )
    return CosimError(
        f"{path}: GPGPU-Sim counters price with the access-rate model (--model {ACCESS_RATE_MODEL}); "
        "the Tegra K1 model needs nvprof metrics of a GK20A"
    )


def data_device(kind: str, data: pd.DataFrame) -> tuple[str | None, str | None]:
    """``(device, compute capability)`` the data names; the first device (sorted) where it names several."""
    if kind == "ocelot":
        return None, None  # Ocelot emulates PTX: its counts belong to no device
    if kind == "gpgpusim":
        return None, data.attrs["gpgpusim"].get("compute_capability")
    devices = sorted(set(data["device"]))
    return (devices[0] if devices else None), data.attrs.get("ncu", {}).get("capability")


def _device_flag(path: Path, kind: str, data, model_name: str, model_raw, *, any_device: bool) -> str:
    """The device check (cosim.models.device) on what the GPU input says about its device."""
    from cosim.models.device import device_flag

    if kind == "ocelot":
        return ""
    device, capability = data_device(kind, data)
    try:
        if kind != "gpgpusim":
            for other in sorted(set(data["device"]))[1:]:
                device_flag(model_name, model_raw, device=other, capability=capability, source=str(path), any_device=any_device)
        return device_flag(model_name, model_raw, device=device, capability=capability, source=str(path), any_device=any_device)
    except CosimError as err:
        raise CosimError(f"{err}. {gpu_models_hint()}") from None


def gpu_models_hint() -> str:
    """Which shipped GPU model fits which device, and where a GPU none fits goes: the kernel DVFS models."""
    import json

    from cosim.models.modelfile import shipped_models_dir

    known = []
    for path in sorted(shipped_models_dir().glob("*.json")):
        names = (json.loads(path.read_text()).get("device") or {}).get("names")
        if names:
            known.append(f"{path.stem} ({'/'.join(names)})")
    return f"cosim's GPU power models: {', '.join(known)}; for another GPU, {INSTEAD}"


def price_gpu(
    gpu: GpuInput,
    *,
    gpu_mhz: float = 852.0,
    emc_mhz: float = 924.0,
    cpu_lp_mhz: float = 1092.0,
    activity: str | Path | None = None,
    launch_times: str | Path | None = None,
    gpu_trace: str | Path | None = None,
    gap_s: float = 0.0,
    railgate_delay_s: float | None = None,
    gpu_clock_mhz: float | None = None,
    idle_power_w: dict[str, float] | None = None,
    transfers: str | Path | None = None,
) -> pd.DataFrame:
    """Per-kernel (and idle) power [W] and energy [J] of a resolved GPU input, by its model.

    Rail model: ``gpu_mhz``, ``emc_mhz``, ``cpu_lp_mhz`` [MHz], ``activity`` (ACTMON-style CSV), ``launch_times`` or
    ``gpu_trace`` (kernel start times), ``gap_s`` [s], ``railgate_delay_s`` [s].  Access-rate model: ``gpu_clock_mhz``
    [MHz], ``idle_power_w`` ({level: W}), ``transfers`` (CSV launch,size_bytes), ``launch_times``, ``gap_s``.  The
    background power of the rail model is :func:`rail_background`."""
    if gpu.model_kind == "rail":
        return _rail_timeline(
            gpu,
            gpu_mhz=gpu_mhz,
            emc_mhz=emc_mhz,
            cpu_lp_mhz=cpu_lp_mhz,
            activity=activity,
            launch_times=launch_times,
            gpu_trace=gpu_trace,
            gap_s=gap_s,
            railgate_delay_s=railgate_delay_s,
        )
    return _access_rate_timeline(
        gpu, gpu_clock_mhz=gpu_clock_mhz, idle_power_w=idle_power_w or {}, transfers=transfers, launch_times=launch_times, gap_s=gap_s
    )


def rail_background(gpu: GpuInput, *, gpu_mhz: float, emc_mhz: float, cpu_lp_mhz: float, activity: str | Path | None = None):
    """The rail model's background power (no kernel running) at these clocks, for the whole-SoC timeline."""
    from cosim.readers.activity import read_activity
    from cosim.timeline.gpu import tegra_k1_background

    acts = read_activity(activity) if activity else None
    return tegra_k1_background(gpu.model, activity=acts, gpu_mhz=gpu_mhz, emc_mhz=emc_mhz, cpu_lp_mhz=cpu_lp_mhz)


def _add_flag(timeline, flag: str):
    if flag:
        kernels = timeline["kind"] == "kernel"
        timeline.loc[kernels, "flags"] = [";".join(f for f in (text, flag) if f) for text in timeline.loc[kernels, "flags"].fillna("")]
    return timeline


def _rail_timeline(gpu: GpuInput, *, gpu_mhz, emc_mhz, cpu_lp_mhz, activity, launch_times, gpu_trace, gap_s, railgate_delay_s):
    from cosim.counters.gpu import tegra_k1_counts_from_nvprof, tegra_k1_counts_from_ocelot
    from cosim.readers.activity import read_activity, read_launch_times
    from cosim.timeline.gpu import tegra_k1_timeline

    kernels = tegra_k1_counts_from_ocelot(gpu.data) if gpu.kind == "ocelot" else tegra_k1_counts_from_nvprof(gpu.data)
    acts = read_activity(activity) if activity else None
    if gpu_trace and launch_times:
        raise CosimError("give kernel times either with --gpu-trace or with --launch-times, not both")
    starts = read_launch_times(launch_times) if launch_times else None
    copies = None
    if gpu_trace:
        from cosim.readers.gpu_logs import read_trace
        from cosim.timeline.launches import order_by_gpu_trace

        kernels, starts, copies = order_by_gpu_trace(kernels, read_trace(gpu_trace))
    timeline = tegra_k1_timeline(
        kernels,
        gpu.model,
        activity=acts,
        launch_times=starts,
        gap_s=gap_s,
        railgate_delay_s=railgate_delay_s,
        copies=copies,
        gpu_mhz=gpu_mhz,
        emc_mhz=emc_mhz,
        cpu_lp_mhz=cpu_lp_mhz,
    )
    return _add_flag(timeline, gpu.flag)


def _access_rate_timeline(gpu: GpuInput, *, gpu_clock_mhz, idle_power_w: dict[str, float], transfers, launch_times, gap_s):
    import numpy as np

    from cosim.counters.gpu import ocelot_counts_from_gpgpusim
    from cosim.readers.activity import read_launch_times
    from cosim.readers.measured import read_table
    from cosim.timeline.gpu import ocelot_timeline

    trace = ocelot_counts_from_gpgpusim(gpu.data) if gpu.kind == "gpgpusim" else gpu.data
    for name, watts in idle_power_w.items():
        if not np.isfinite(watts) or watts < 0:
            raise CosimError(f"--idle-power {name}={watts:g}: must be a power >= 0 [W]")
    copies = None
    if transfers:
        copies = read_table(transfers)
        if not {"launch", "size_bytes"} <= set(copies.columns):
            raise CosimError(f"{transfers}: needs columns launch,size_bytes")
    if gpu_clock_mhz is not None and not (np.isfinite(gpu_clock_mhz) and gpu_clock_mhz > 0):
        raise CosimError(f"--gpu-clock-mhz {gpu_clock_mhz}: must be a clock > 0 [MHz]")
    starts = read_launch_times(launch_times) if launch_times else None
    timeline = ocelot_timeline(
        trace, gpu.model, clock_mhz=gpu_clock_mhz, idle_power_w=idle_power_w, launch_times=starts, gap_s=gap_s, transfers=copies
    )
    return _add_flag(timeline, gpu.flag)


def beside_report(timeline: pd.DataFrame, path: str | Path, run: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per kernel, in launch order: the model's ``power_w`` and ``dynamic_w`` [W] next to a GPUWattch/AccelWattch
    report's ``report_power_w`` [W] of the same GPGPU-Sim run (``run``: its log's table); a :class:`CosimError` when
    the runs differ (:func:`cosim.readers.gpgpusim.check_same_run`: uids, instruction counts)."""
    import pandas as pd

    from cosim.readers.gpgpusim import read_power_report

    path = Path(path)
    report = read_power_report(path)
    kernels = timeline[timeline["kind"] == "kernel"].reset_index(drop=True)
    if len(report) != len(kernels):
        raise CosimError(f"{path}: {len(report)} kernel(s) in the power report, {len(kernels)} priced; are they the same run?")
    for (_, k), (_, r) in zip(kernels.iterrows(), report.iterrows()):
        if r["kernel"] and r["kernel"] != k["kernel"]:
            raise CosimError(f"{path}:{r['line']}: kernel '{r['kernel']}' in the report where the run has '{k['kernel']}'")
    if run is not None and len(run) == len(report):
        from cosim.readers.gpgpusim import check_same_run

        check_same_run(path, report, run.reset_index(drop=True))
    return pd.DataFrame(
        {"kernel": kernels["kernel"], "power_w": kernels["power_w"], "dynamic_w": kernels["dynamic_w"], "report_power_w": report["power_w"]}
    )


def beside_measured(timeline: pd.DataFrame, path: str | Path) -> tuple[int, float, float]:
    """``(samples, measured mean power [W], predicted mean power [W])`` of a Corsair Link log of the same run."""
    from cosim.readers.corsair import read_corsair_log

    log = read_corsair_log(Path(path))
    predicted = timeline["energy_j"].sum() / (timeline["end_s"].max() - timeline["start_s"].min())
    return len(log), float(log["power_in_w"].mean()), float(predicted)


def read_table(path: str | Path, *, format: str | None = None) -> tuple[str, pd.DataFrame]:  # noqa: A002 - the CLI's --format
    """``(what, table)`` of any input ``cosim read`` takes: a folder of per-clock-pair GPU logs gives the kernel DVFS
    table (``what`` = ``"kernel-dvfs"``, one row per benchmark, kernel and clock pair); a file, the long tidy table
    of :func:`cosim.readers.tidy.read` (``what`` = its format)."""
    from cosim.readers.dvfs_logs import is_log_folder, read_dvfs_folder
    from cosim.readers.tidy import read

    path = Path(path)
    if path.is_dir() and is_log_folder(path):
        return "kernel-dvfs", read_dvfs_folder(path)
    table = read(path, format=format)
    return table.attrs["read"]["format"], table
