"""One call per command for Python users: each returns, as a pandas DataFrame, the table the command writes.

``cosim.power(path)`` is ``cosim power path -o table.csv``, ``cosim.whatif(path)`` ``cosim whatif``, ``cosim.sweep(runs)``
``cosim sweep``, ``cosim.gpu(path)`` ``cosim gpu`` and ``cosim.gpu_energy(log, trace)`` ``cosim gpu-energy``.
``cosim whatif`` and ``cosim sweep`` call these functions; ``cosim power`` and ``cosim gpu`` take the same two steps
(:func:`cosim.open_run` + :func:`cosim.price_run`, :func:`cosim.open_gpu` + :func:`cosim.price_gpu`); ``gpu_energy``
repeats ``cosim gpu-energy``'s few table lines (that command may call it instead).  tests/test_api.py checks every
DataFrame byte for byte against the command's CSV.  Arguments are keyword-only and named as the command's options are
(``model`` for ``--model``, ``clusters`` for ``--cluster NAME=PATH``); a refusal raises :class:`cosim.CosimError` with
the command's one line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from cosim.run import Run


def _models(model: str | Sequence[str]) -> tuple[str, ...]:
    return (model,) if isinstance(model, str) else tuple(model)


def power(
    path: str | Path,
    *,
    model: str | Sequence[str] = (),
    clusters: Mapping[str, str] | None = None,
    config: str | Path | None = None,
    voltages: Mapping[str, float] | None = None,
    voltage_model: bool = False,
    temperature_c: float | None = None,
    powered_cores: Mapping[str, int] | None = None,
    cpu_types: Mapping[str, str] | None = None,
    strict: bool = False,
    any_isa: bool = False,
    keep_implausible: bool = False,
    extrapolate: bool = False,
) -> pd.DataFrame:
    """The power timeline ``cosim power PATH -o table.csv`` writes: one row per (epoch, cluster), power [W] and energy
    [J] with intervals and flags.

    ``path`` is a gem5 output folder or its stats.txt[.gz]; ``model`` one model (name or file) for every cluster or
    one per cluster in the order of ``clusters`` (``{name: config path}``); default: as ``cosim power`` picks them
    (:func:`cosim.open_run`).  The other arguments are the command's options of the same names.
    """
    from cosim.run import open_run, price_run

    run = open_run(
        path,
        config=config,
        models=_models(model),
        clusters=dict(clusters or {}),
        voltages=dict(voltages or {}),
        voltage_model=voltage_model,
        temperature_c=temperature_c,
        powered_cores=dict(powered_cores or {}),
        cpu_types=dict(cpu_types or {}),
    )
    _, timeline = price_run(run, strict=strict, any_isa=any_isa, keep_implausible=keep_implausible, extrapolate=extrapolate)
    return as_written(timeline)


def as_written(table) -> pd.DataFrame:
    """``table`` (numpy columns or a DataFrame) with the columns the written file has: a ``flags`` column always."""
    from cosim import columns as cols

    frame = cols.to_frame(table) if isinstance(table, Mapping) else table
    return frame if "flags" in frame else frame.assign(flags="")


def whatif(
    path: str | Path,
    *,
    model: str | Sequence[str] = (),
    clusters: Mapping[str, str] | None = None,
    config: str | Path | None = None,
    freqs: Mapping[str, Sequence[float]] | None = None,
    cpu_types: Mapping[str, str] | None = None,
    any_isa: bool = False,
    extrapolate: bool = False,
) -> pd.DataFrame:
    """The DVFS what-if ``cosim whatif PATH -o table.csv`` writes: one row per configuration (a clock per cluster
    [MHz]), runtime [s], energy [J] and peak power [W] with intervals, and ``pareto``.

    ``freqs``: ``{cluster: [MHz, ...]}`` to try (default: every V-f point of each cluster's model).
    """
    from cosim.run import open_run

    run = open_run(path, config=config, models=_models(model), clusters=dict(clusters or {}), cpu_types=dict(cpu_types or {}))
    return whatif_of(run, freqs={k: list(v) for k, v in (freqs or {}).items()}, any_isa=any_isa, extrapolate=extrapolate)[1]


def whatif_of(run: Run, *, freqs: Mapping[str, list[float]], any_isa: bool = False, extrapolate: bool = False):
    """``(epochs read, table)`` of ``cosim whatif`` for a resolved run (what the command and :func:`whatif` share).

    A first dump that is a warm-up before a stats reset (:mod:`cosim.dse.warmup`) is left out of the run rescaled; the
    table's rows are flagged and ``table.attrs["warmup"]`` says what was left out."""
    from cosim.dse.choose import pareto_front
    from cosim.dse.warmup import FLAG as WARMUP_FLAG
    from cosim.dse.warmup import split_warmup
    from cosim.dse.whatif import dvfs_grid, recorded_run, whatif_stats
    from cosim.dse.whatif import whatif as rescale
    from cosim.readers.gem5_stats import read_stats
    from cosim.timeline.clusters import resolve_cluster
    from cosim.timeline.core_kind import core_kind_mismatch
    from cosim.timeline.model_checks import check_cpu_types
    from cosim.timeline.trust import isa_flags

    config, specs = run.config, list(run.clusters)
    isa_flags(config, [spec.model for spec in specs], any_isa=any_isa)  # before the stats are read; the rows carry them
    for spec in specs:  # warned, as cosim power does (whose rows carry the flag)
        core_kind_mismatch(resolve_cluster(config, spec, config.ticks_per_s), spec.model)
    check_cpu_types(config, specs, str(run.stats_path))
    read = read_stats(run.stats_path, stats=whatif_stats(config, specs))
    stats, warmup = split_warmup(read)  # a warm-up dump before a stats reset is no part of the run rescaled
    recorded = recorded_run(stats, config, specs, any_isa=any_isa)
    clocks = {name: [float(f) for f in values] for name, values in freqs.items()}  # floats, as the command parses them
    table = rescale(recorded, dvfs_grid(recorded, clocks), extrapolate=extrapolate)
    table["pareto"] = pareto_front(table)
    if warmup is not None:
        table["flags"] = [";".join(f for f in (str(text), WARMUP_FLAG) if f) for text in table["flags"]]
        table.attrs["warmup"] = warmup
    return len(read), table


def sweep(
    runs: str | Path | Sequence[str | Path],
    *,
    model: str | Sequence[str] = (),
    clusters: Mapping[str, str] | None = None,
    group: str | Sequence[str] | None = None,
    workers: int = 1,
    any_isa: bool = False,
    keep_implausible: bool = False,
    extrapolate: bool = False,
    temperature_c: float | None = None,
    ambient_c: float | None = None,
    start_temperature_c: float | None = None,
    progress: bool = False,
    client=None,
) -> pd.DataFrame:
    """The table ``cosim sweep RUNS -o table.csv`` writes: one row per run (runtime [s], energy [J], EDP [J s], power
    per cluster [W]), each priced as ``cosim power`` prices it, ``pareto`` within each group of comparable runs.

    ``runs``: gem5 output folders, or folders of them (``RUN/``, ``PROGRAM/CLOCK/``).  ``group``: the columns whose
    runs share a Pareto front (default: the same ``program`` on the same ``design``, :data:`cosim.dse.choose.GROUP`).
    ``client``: a ``distributed.Client`` to run on (``--scheduler``).  A run that cannot be priced keeps its row, with
    the reason in ``error``; none priced raises :class:`cosim.CosimError`.
    """
    from cosim.dse.choose import GROUP, pareto_by_group
    from cosim.dse.sweep import SweepSpec, find_runs
    from cosim.dse.sweep import sweep as price_all
    from cosim.errors import CosimError

    models, named = _models(model), dict(clusters or {})
    if named and len(models) not in (1, len(named)):
        raise CosimError(f"{len(models)} --model for {len(named)} --cluster: give one model, or one per cluster in order")
    spec = SweepSpec(
        models=models,
        clusters=tuple(named.items()),
        any_isa=any_isa,
        keep_implausible=keep_implausible,
        extrapolate=extrapolate,
        temperature=(temperature_c, ambient_c, start_temperature_c),
    )
    paths = [Path(runs)] if isinstance(runs, (str, Path)) else [Path(r) for r in runs]
    table = price_all(find_runs(paths), spec, workers=max(1, workers), progress=progress, client=client)
    good = table["error"] == ""
    if not good.any():
        raise CosimError(f"none of the {len(table)} runs could be summarised (first: {table['error'].iloc[0]})")
    by = GROUP if group is None else ((group,) if isinstance(group, str) else tuple(group))
    return pareto_by_group(table, by=by, rows=good)


def gpu(
    path: str | Path,
    *,
    model: str | Path = "tegra-k1-stokke2016",
    gpu_trace: str | Path | None = None,
    launch_times: str | Path | None = None,
    activity: str | Path | None = None,
    gpu_mhz: float = 852.0,
    emc_mhz: float = 924.0,
    cpu_lp_mhz: float = 1092.0,
    gap_s: float = 0.0,
    railgate_delay_s: float | None = None,
    gpu_clock_mhz: float | None = None,
    idle_power_w: Mapping[str, float] | None = None,
    transfers: str | Path | None = None,
    class_map: str | Path | None = None,
    ignore_metrics: Sequence[str] = (),
    keep_unknown: bool = False,
    any_device: bool = False,
) -> pd.DataFrame:
    """The GPU timeline ``cosim gpu PATH -o table.csv`` writes: one row per kernel launch and idle stretch, power [W]
    and energy [J] per rail (Tegra K1 rail model) or per instruction class (Ocelot access-rate model).

    The rail model's options (``gpu_trace``, ``launch_times``, ``activity``, clocks [MHz], ``gap_s``,
    ``railgate_delay_s``) and the access-rate model's (``gpu_clock_mhz``, ``idle_power_w``, ``transfers``) are the
    command's options of the same names; giving one of the other model's is refused as the command refuses it.
    """
    from cosim.errors import CosimError
    from cosim.gpu_input import open_gpu, price_gpu

    found = open_gpu(
        path, model=model, class_map=class_map, ignore_metrics=ignore_metrics, keep_unknown=keep_unknown, any_device=any_device
    )
    rail = {"gpu_trace": gpu_trace, "activity": activity, "railgate_delay_s": railgate_delay_s}
    other = {"gpu_clock_mhz": gpu_clock_mhz, "idle_power_w": idle_power_w, "transfers": transfers}
    wrong = [k for k, v in (other if found.model_kind == "rail" else rail).items() if v]
    if wrong:
        raise CosimError(f"{', '.join(wrong)}: option(s) of the other GPU model, which {model} does not read; leave them out")
    if found.model_kind == "rail":
        table = price_gpu(
            found,
            gpu_mhz=float(gpu_mhz),  # a clock is a float as the command parses it, also when given as 612
            emc_mhz=float(emc_mhz),
            cpu_lp_mhz=float(cpu_lp_mhz),
            activity=activity,
            launch_times=launch_times,
            gpu_trace=gpu_trace,
            gap_s=gap_s,
            railgate_delay_s=railgate_delay_s,
        )
    else:
        table = price_gpu(
            found,
            gpu_clock_mhz=gpu_clock_mhz,
            idle_power_w=dict(idle_power_w or {}),
            transfers=transfers,
            launch_times=launch_times,
            gap_s=gap_s,
        )
    return as_written(table)


def gpu_energy(
    power_log: str | Path,
    trace: str | Path,
    *,
    field: str | None = None,
    window_s: float | None = None,
    gpu: str | None = None,
    period_s: float | None = None,
    offset_s: float | None = None,
    trace_zero: str | None = None,
    min_samples: int = 2,
) -> pd.DataFrame:
    """The per-kernel table ``cosim gpu-energy POWER_LOG TRACE -o table.csv`` writes: each kernel launch's measured
    power [W] and energy [J] with a 90 % interval, from a power log (nvidia-smi, DCGM, a Kokkos tool's CSV) and the same
    run's kernel trace (nsys, nvprof); times [s] from the log's first reading.  The arguments are the command's options.
    """
    _, table = launch_energy(
        power_log,
        trace,
        field=field,
        window_s=window_s,
        gpu=gpu,
        period_s=period_s,
        offset_s=offset_s,
        trace_zero=trace_zero,
        min_samples=min_samples,
    )
    return as_written(table)


def launch_energy(
    power_log: str | Path,
    trace: str | Path,
    *,
    field: str | None,
    window_s: float | None,
    gpu: str | None,
    period_s: float | None,
    offset_s: float | None,
    trace_zero: str | None,
    min_samples: int,
):
    """``(logged run, per-launch table)`` as ``cosim gpu-energy`` and :func:`gpu_energy` share them: the options
    checked, the log and trace read onto one time axis, each launch measured where the readings resolve it, times [s]
    from the log's first reading."""
    from cosim.errors import CosimError
    from cosim.timeline.logged_run import read_logged_run
    from cosim.timeline.measured_energy import kernel_energy

    if min_samples < 2:
        raise CosimError(f"--min-samples {min_samples}: an interval needs at least 2 readings")
    if window_s is not None and not (window_s >= 0 and window_s < 3600):
        raise CosimError(f"--window-s {window_s}: an averaging window is >= 0 s (0: instantaneous readings)")
    run = read_logged_run(
        Path(power_log),
        Path(trace),
        field=field,
        gpu=gpu,
        period_s=period_s,
        window_s=window_s,
        offset_s=offset_s,
        trace_zero=trace_zero,
        window_way_out="; if this GPU reports it instantaneously, give --window-s 0",
    )
    table = kernel_energy(run.kernels, run.samples, window_s=run.window_s, offset_s=run.offset_s, min_samples=min_samples)
    first_s = float(run.samples["time_s"].iloc[0])
    table["start_s"] -= first_s  # seconds since the log's first reading
    table["end_s"] -= first_s
    return run, table
