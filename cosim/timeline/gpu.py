"""Per-kernel GPU timelines: the Tegra K1 rail model and the Ocelot access-rate model.

One row per kernel launch (``kind`` = ``kernel``) and per stretch of time
between launches (``idle``: GPU on and idle; ``gated``: GPU rail power-gated
after its inactivity timer; ``transfer``: a PCI Express copy), with start,
duration, power [W] per rail or per instruction class, and energy [J].
Kernels run one after another from t = 0, ``gap_s`` apart, unless a
launch-times table gives their starts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.models.ocelot import AccessRateModel, check_clock, dynamic_energy_j, dynamic_power_w, kernel_duration_s, pcie_transfer
from cosim.models.tegrak1 import RailModel, rail_voltages_v, tegra_k1_power_w
from cosim.readers.activity import ACTIVITY_COLUMNS, DEFAULT
from cosim.readers.ocelot import OCELOT_CLASSES
from cosim.timeline.launches import expand_launches, gap_pieces, starts

GPU_PREDICTORS = ("l2r", "l1r", "l1w", "int", "f32", "f64", "cnv", "msc")
_ACT_KEYS = {
    "mem_other_busy": "mem_other_busy_per_s",
    "mem_cpu_busy": "mem_cpu_busy_per_s",
    "cpu_ipc": "cpu_ipc",
    "cpu_active": "cpu_active_cycles_per_s",
}


def _activity_for(launches: pd.DataFrame, activity: pd.DataFrame | None) -> tuple[pd.DataFrame, pd.Series]:
    """Per-launch activity rates (nan = not given), and the default row for idle time."""
    rates = pd.DataFrame(np.nan, index=launches.index, columns=list(ACTIVITY_COLUMNS))
    default = pd.Series(np.nan, index=list(ACTIVITY_COLUMNS))
    if activity is None:
        return rates, default
    where = activity.attrs.get("path", "activity")
    known = set(launches["kernel"]) | set(launches["kernel_display"])
    stray = [k for k in activity.index if k != DEFAULT and k not in known]
    if stray:
        names = ", ".join(sorted(set(launches["kernel_display"])))[:300]
        raise CosimError(
            f"{where}: kernel '{stray[0]}' is not in the GPU input (kernels: {names}); names must match the trace or nvprof file"
        )
    if DEFAULT in activity.index:
        default = activity.loc[DEFAULT].reindex(list(ACTIVITY_COLUMNS))
    # a launch's own row is found by its raw name, else by its displayed name; gaps come from the * row
    raw, shown = launches["kernel"], launches["kernel_display"]
    keys = raw.where(raw.isin(activity.index), shown.where(shown.isin(activity.index)))
    own = activity.reindex(columns=list(ACTIVITY_COLUMNS)).reindex(keys.to_numpy())
    rates = pd.DataFrame(own.to_numpy(dtype=float), index=launches.index, columns=list(ACTIVITY_COLUMNS)).fillna(default)
    return rates, default


def tegra_k1_timeline(
    kernels: pd.DataFrame,
    model: RailModel,
    *,
    gpu_mhz: float,
    emc_mhz: float,
    cpu_lp_mhz: float = 1092.0,
    activity: pd.DataFrame | None = None,
    launch_times: pd.DataFrame | None = None,
    gap_s: float = 0.0,
    railgate_delay_s: float | None = None,
    copies: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Tegra K1 rail power per kernel launch and per idle stretch.

    Parameters
    ----------
    kernels
        :func:`cosim.counters.gpu.tegra_k1_counts_from_nvprof` or ``..._from_ocelot`` output.
    gpu_mhz, emc_mhz, cpu_lp_mhz
        Clocks [MHz]; each must be a step of the model's V-f table.
    activity
        :func:`cosim.readers.activity.read_activity` output: EMC busy cycles and
        LP-core rates.  Rates neither given nor estimable are 0 and flagged.
    railgate_delay_s
        GPU inactivity time before its rail is power-gated [s] (default: the model's).

    Returns
    -------
    One row per launch and idle stretch: ``start_s end_s duration_s``, rail powers
    ``gpu_w mem_w core_w base_w`` and their sum ``power_w`` [W] (Eq. 8), the
    published error band ``power_lo_w/power_hi_w``, ``energy_j``, every term
    (``gpu_<term>_w``, ``mem_<term>_w``, ``core_<term>_w``), the predictor rates
    ``rho_*`` [1/s] and ``flags``.
    """
    volts = rail_voltages_v(model, gpu_mhz=gpu_mhz, emc_mhz=emc_mhz, cpu_lp_mhz=cpu_lp_mhz)
    launches = expand_launches(kernels)
    duration = launches["elapsed_cycles"].to_numpy(dtype=float) / (gpu_mhz * 1e6)  # Eq. 11
    traced = launch_times is not None and "duration_s" in launch_times.columns
    if launch_times is not None and traced:  # a gpu-trace measured each launch: its time beats Eq. 11's
        duration = launch_times["duration_s"].to_numpy(dtype=float)
    # estimated DRAM cycles (Ocelot input) cannot exceed the EMC clock: such a kernel is memory-bound
    mem_s = launches["n_mem_other_busy"].to_numpy(dtype=float) / (emc_mhz * 1e6)
    memory_bound = np.isfinite(mem_s) & (mem_s > duration) & (not traced)
    duration = np.where(memory_bound, mem_s, duration)
    start = starts(launches, duration, launch_times, gap_s)
    rates, default = _activity_for(launches, activity)
    flags = [[f"approx:{a}" for a in str(text).split(";") if a] for text in launches.get("approximations", [""] * len(launches))]
    flags = [f + [f"voltage_interpolated:{r}" for r, (_, interp) in volts.items() if interp] for f in flags]
    outside = _outside_training(model, gpu_mhz=gpu_mhz, emc_mhz=emc_mhz, cpu_lp_mhz=cpu_lp_mhz)
    flags = [f + outside for f in flags]
    for i in np.flatnonzero(memory_bound):
        flags[i].append("memory_bound_time")
    if traced:
        flags = [f + ["duration_from_trace"] for f in flags]

    rho = {p: launches[f"n_{p}"].to_numpy(dtype=float) / duration for p in GPU_PREDICTORS}
    other = rates["mem_other_busy_per_s"].to_numpy(dtype=float)
    from_counts = launches["n_mem_other_busy"].to_numpy(dtype=float) / duration
    use_counts = np.isnan(other) & np.isfinite(from_counts)
    other = np.where(use_counts, from_counts, other)
    missing = {
        "no_gpu_memory_activity": np.isnan(other),
        "no_cpu_memory_activity": rates["mem_cpu_busy_per_s"].isna().to_numpy(),
        "no_lp_core_activity": rates["cpu_active_cycles_per_s"].isna().to_numpy(),
    }
    for flag, where in missing.items():
        for i in np.flatnonzero(where):
            flags[i].append(flag)
    act = {
        "mem_other_busy": np.nan_to_num(other),
        "mem_cpu_busy": np.nan_to_num(rates["mem_cpu_busy_per_s"].to_numpy(dtype=float)),
        "cpu_ipc": np.nan_to_num(rates["cpu_ipc"].to_numpy(dtype=float)),
        "cpu_active": np.nan_to_num(rates["cpu_active_cycles_per_s"].to_numpy(dtype=float)),
    }
    rows = _tk1_rows(model, volts, gpu_mhz, emc_mhz, gpu_on=np.ones(len(launches), bool), rho=rho, act=act)
    rows.insert(0, "kind", "kernel")
    rows.insert(1, "launch", launches["launch"].to_numpy())
    rows.insert(2, "kernel", launches["kernel"].to_numpy())
    rows.insert(3, "kernel_display", launches["kernel_display"].to_numpy())
    rows.insert(4, "start_s", start)
    rows.insert(5, "duration_s", duration)
    rows["flags"] = [";".join(dict.fromkeys(f)) for f in flags]

    delay = model.railgate_delay_s if railgate_delay_s is None else railgate_delay_s
    copy_rows = _tk1_copy_rows(model, volts, gpu_mhz, emc_mhz, copies, start, duration, default) if copies is not None else pd.DataFrame()
    busy_start, busy_s = start, duration
    if len(copy_rows):  # the GPU's copy engine keeps its rail on: idle gaps are counted between kernels and copies alike
        order = np.argsort(np.concatenate([start, copy_rows["start_s"]]), kind="stable")
        busy_start = np.concatenate([start, copy_rows["start_s"]])[order]
        busy_s = np.concatenate([duration, copy_rows["duration_s"]])[order]
    idle = _tk1_idle_rows(model, volts, gpu_mhz, emc_mhz, busy_start, busy_s, default, delay)
    if len(idle):
        idle["flags"] = ";".join(outside)
    out = pd.concat([r for r in (rows, copy_rows, idle) if len(r)], ignore_index=True)
    out = out.sort_values(["start_s", "kind"], kind="stable", ignore_index=True)
    out.insert(out.columns.get_loc("duration_s") + 1, "end_s", out["start_s"] + out["duration_s"])
    out["gpu_mhz"], out["emc_mhz"], out["cpu_lp_mhz"] = gpu_mhz, emc_mhz, cpu_lp_mhz
    out["v_gpu"], out["v_mem"], out["v_core"] = volts["gpu"][0], volts["mem"][0], volts["core"][0]
    band = (model.error_band_pct or 0.0) / 100.0
    out["power_lo_w"] = out["power_w"] * (1 - band)
    out["power_hi_w"] = out["power_w"] * (1 + band)
    out["energy_j"] = out["power_w"] * out["duration_s"]
    out.attrs["model"] = model.name
    return out


def _outside_training(model: RailModel, **clocks_mhz: float) -> list[str]:
    """``<clock>_outside_training`` for each clock outside the model's training range (e.g. the LP core, trained at 1092 MHz only)."""
    training = model.raw.get("training", {})
    flags = []
    for name, mhz in clocks_mhz.items():
        lo, hi = training.get(name, (-np.inf, np.inf))
        if not lo * (1 - 1e-3) <= mhz <= hi * (1 + 1e-3):
            flags.append(f"{name.removesuffix('_mhz')}_outside_training")
    return flags


def _tk1_rows(model, volts, gpu_mhz, emc_mhz, *, gpu_on, rho, act) -> pd.DataFrame:
    n = len(gpu_on)
    rails = tegra_k1_power_w(
        model,
        gpu_mhz=gpu_mhz,
        emc_mhz=emc_mhz,
        voltages_v={r: v for r, (v, _) in volts.items()},
        gpu_rates=rho,
        mem_rates={"cpu_busy": act["mem_cpu_busy"], "other_busy": act["mem_other_busy"]},
        core_rates={"ipc": act["cpu_ipc"], "active_cycles": act["cpu_active"]},
    )
    cols: dict[str, np.ndarray] = {}
    for rail, terms in rails.items():
        for key, value in terms.items():
            if key == "power_w":
                continue
            name = key.removeprefix("term_").removesuffix("_w")
            cols[f"{rail}_{name}_w"] = np.where(gpu_on, value, 0.0) if rail == "gpu" else value
        cols[f"{rail}_w"] = np.where(gpu_on, terms["power_w"], 0.0) if rail == "gpu" else terms["power_w"]
    cols["base_w"] = np.full(n, model.base_w)
    cols["power_w"] = cols["gpu_w"] + cols["mem_w"] + cols["core_w"] + cols["base_w"]
    for p, values in rho.items():
        cols[f"rho_{p}"] = values
    cols["rho_mem_other_busy"] = act["mem_other_busy"]
    cols["rho_mem_cpu_busy"] = act["mem_cpu_busy"]
    cols["cpu_ipc"] = act["cpu_ipc"]
    cols["rho_cpu_active"] = act["cpu_active"]
    return pd.DataFrame(cols)


def _tk1_no_kernel_rows(
    model, volts, gpu_mhz, emc_mhz, kinds: list[str], default: pd.Series, *, mem_other_busy_per_s: np.ndarray | None = None
) -> pd.DataFrame:
    """Rows with no kernel running: GPU rail on and idle (``idle``) or off (``gated``); memory and LP core at the
    default rates, or the GPU's memory cycles per second given row by row (copies)."""
    n = len(kinds)
    zero = np.zeros(n)
    act = {key: np.full(n, np.nan_to_num(default[col])) for key, col in _ACT_KEYS.items()}
    if mem_other_busy_per_s is not None:
        act["mem_other_busy"] = np.asarray(mem_other_busy_per_s, dtype=float)
    rows = _tk1_rows(
        model, volts, gpu_mhz, emc_mhz, gpu_on=np.array([k == "idle" for k in kinds]), rho={p: zero for p in GPU_PREDICTORS}, act=act
    )
    rows.insert(0, "kind", kinds)
    return rows


def _tk1_copy_rows(model, volts, gpu_mhz, emc_mhz, copies: pd.DataFrame, start, duration, default: pd.Series) -> pd.DataFrame:
    """Memory copies of an nvprof gpu-trace as memory activity: the GPU rail on and idle, the memory rail busy.

    A copy reads and writes DRAM (the Tegra K1's host and device memory are one), so its bytes count
    twice, at 8 B per GPU memory cycle (Section 6.3), up to the EMC clock.  Copies that overlap a
    kernel (asynchronous streams) are left to the kernel's own memory activity.
    """
    ends = start + duration
    keep = [not np.any((start < c.start_s + c.duration_s) & (c.start_s < ends)) and c.duration_s > 0 for c in copies.itertuples()]
    copies = copies[keep]
    if copies.empty:
        return pd.DataFrame()
    seconds = copies["duration_s"].to_numpy(dtype=float)
    busy = np.minimum(2.0 * copies["size_b"].to_numpy(dtype=float) / model.transaction_bytes["mem_gpu"] / seconds, emc_mhz * 1e6)
    rows = _tk1_no_kernel_rows(model, volts, gpu_mhz, emc_mhz, ["idle"] * len(copies), default, mem_other_busy_per_s=busy)
    rows["kind"] = "copy"
    names = copies["name"].to_numpy()
    return _placed(rows, names, copies["start_s"].to_numpy(dtype=float), seconds, "copy_memory_activity")


def _placed(rows: pd.DataFrame, names, start_s, duration_s, flags: str) -> pd.DataFrame:
    """Rows without a kernel launch put on the time axis: ``launch`` -1, their name, start and duration [s]."""
    rows.insert(1, "launch", -1)
    rows.insert(2, "kernel", names)
    rows.insert(3, "kernel_display", names)
    rows.insert(4, "start_s", start_s)
    rows.insert(5, "duration_s", duration_s)
    rows["flags"] = flags
    return rows


def _tk1_idle_rows(model, volts, gpu_mhz, emc_mhz, start, duration, default: pd.Series, delay_s: float) -> pd.DataFrame:
    pieces = gap_pieces(start[:-1] + duration[:-1], start[1:], [("idle", delay_s), ("gated", None)])
    if not pieces:
        return pd.DataFrame()
    rows = _tk1_no_kernel_rows(model, volts, gpu_mhz, emc_mhz, [kind for kind, *_ in pieces], default)
    return _placed(rows, "", [s for _, s, _, _ in pieces], [d for _, _, d, _ in pieces], "")


def ocelot_timeline(
    trace: pd.DataFrame,
    model: AccessRateModel,
    *,
    clock_mhz: float | None = None,
    idle_power_w: dict[str, float] | None = None,
    launch_times: pd.DataFrame | None = None,
    gap_s: float = 0.0,
    transfers: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Access-rate model power per kernel launch (whole-system power, as the thesis measured it).

    Kernel rows: ``idle_w`` (the highest performance level's idle power),
    ``dynamic_w`` (Eq. 6.7 summed), ``power_w``, ``energy_j`` and per class
    ``<class>_w`` and ``<class>_j`` (dynamic).  Between kernels the GPU steps
    down through its performance levels after their tail times.  ``transfers``
    (columns ``launch``, ``size_bytes``) adds a PCI Express copy right before
    that launch (Ocelot runs copies synchronously).
    """
    check_clock(model, clock_mhz)
    levels = {lv.name: lv.idle_power_w for lv in model.levels}
    for name, value in (idle_power_w or {}).items():
        if name not in levels:
            raise CosimError(f"--idle-power {name}: {model.name} has levels {', '.join(levels)}")
        levels[name] = value
    top = model.levels[0]
    if levels[top.name] is None:
        raise CosimError(f"{model.name}: idle power of level '{top.name}' is not in the model; pass --idle-power {top.name}=W")
    counts = {cls: trace[f"n_{cls}"].to_numpy(dtype=float) for cls in OCELOT_CLASSES}
    simulated = "duration_s" in trace.columns and bool(np.isfinite(trace["duration_s"].to_numpy(dtype=float)).all())
    # A GPU simulator's own cycles beat Eq. 6.8's estimate; the energy per instruction stays the model's.
    duration = trace["duration_s"].to_numpy(dtype=float) if simulated else kernel_duration_s(model, counts, clock_mhz=clock_mhz)
    zero = np.flatnonzero(duration <= 0)
    if len(zero):
        row = trace.iloc[zero[0]]
        raise CosimError(
            f"{trace.attrs.get('ocelot', {}).get('path', 'trace')}:{row['line']}: kernel '{row['kernel_display']}' has no instructions, so its duration is zero"
        )
    copy_s = np.zeros(len(trace))
    if transfers is not None:
        for row in transfers.itertuples():
            if not 0 <= int(row.launch) < len(trace):
                raise CosimError(f"transfers: launch {row.launch} is not in the trace (0..{len(trace) - 1})")
            copy_s[int(row.launch)] += pcie_transfer(model, [row.size_bytes])[0][0]
    busy = duration + copy_s
    start = starts(trace, busy, launch_times, gap_s) + copy_s
    energy = dynamic_energy_j(model, counts)
    if simulated:
        dyn = {key: energy[key if key != "power_w" else "energy_j"] / duration for key in (*OCELOT_CLASSES, "power_w")}
    else:
        dyn = dynamic_power_w(model, counts, clock_mhz=clock_mhz)
    idle_top = float(levels[top.name] or 0.0)  # checked above: the top level's idle power is known
    kernel_rows = pd.DataFrame(
        {
            "kind": "kernel",
            "launch": trace["launch"].to_numpy(),
            "kernel": trace["kernel"].to_numpy(),
            "kernel_display": trace["kernel_display"].to_numpy(),
            "level": top.name,
            "start_s": start,
            "duration_s": duration,
            "idle_w": idle_top,
            "dynamic_w": dyn["power_w"],
            "power_w": idle_top + dyn["power_w"],
            **{f"{cls}_w": dyn[cls] for cls in OCELOT_CLASSES},
            **{f"{cls}_j": energy[cls] for cls in OCELOT_CLASSES},
        }
    )
    extra = []
    for i in np.flatnonzero(copy_s > 0):
        extra.append(
            {
                "kind": "transfer",
                "launch": int(trace["launch"].iloc[i]),
                "level": top.name,
                "start_s": start[i] - copy_s[i],
                "duration_s": copy_s[i],
                "idle_w": idle_top,
                "dynamic_w": model.pcie_extra_power_w,
                "power_w": idle_top + model.pcie_extra_power_w,
            }
        )
    end = start + duration
    for level, piece_start, piece_s, gap_s in gap_pieces(end[:-1], start[1:] - copy_s[1:], [(lv.name, lv.tail_s) for lv in model.levels]):
        watts = levels[level]
        if watts is None:
            raise CosimError(
                f"{model.name}: the GPU idles {gap_s:g} s, into level '{level}', whose idle power is unpublished; pass --idle-power {level}=W"
            )
        extra.append(
            {
                "kind": "idle",
                "launch": -1,
                "level": level,
                "start_s": piece_start,
                "duration_s": piece_s,
                "idle_w": watts,
                "dynamic_w": 0.0,
                "power_w": watts,
            }
        )
    out = pd.concat([kernel_rows, pd.DataFrame(extra)], ignore_index=True) if extra else kernel_rows
    out = out.sort_values(["start_s"], kind="stable", ignore_index=True)
    out.insert(out.columns.get_loc("duration_s") + 1, "end_s", out["start_s"] + out["duration_s"])
    out["energy_j"] = out["power_w"] * out["duration_s"]
    for cls in OCELOT_CLASSES:
        out[f"{cls}_w"] = out[f"{cls}_w"].fillna(0.0)
        out[f"{cls}_j"] = out[f"{cls}_j"].fillna(0.0)
    out[["kernel", "kernel_display"]] = out[["kernel", "kernel_display"]].fillna("")
    out["flags"] = "duration_from_simulator" if simulated else "timing_reconstructed"
    if "flags" in trace.columns:  # what the input's counts stand on (e.g. a simulator's classes mapped to Ocelot's)
        extra_flags = dict(zip(trace["launch"], trace["flags"]))
        kernels = out["kind"] == "kernel"
        out.loc[kernels, "flags"] = [
            ";".join(f for f in (base, extra_flags.get(launch, "")) if f)
            for base, launch in zip(out.loc[kernels, "flags"], out.loc[kernels, "launch"])
        ]
    out.attrs["model"] = model.name
    return out


def tegra_k1_background(
    model: RailModel,
    *,
    gpu_mhz: float,
    emc_mhz: float,
    cpu_lp_mhz: float = 1092.0,
    activity: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Power with no kernel running: one ``idle`` row (GPU rail on) and one ``gated`` row (GPU rail off).

    Memory and LP-core rates are the activity's ``*`` row (0 where not given).
    """
    volts = rail_voltages_v(model, gpu_mhz=gpu_mhz, emc_mhz=emc_mhz, cpu_lp_mhz=cpu_lp_mhz)
    default = (
        activity.loc[DEFAULT].reindex(list(ACTIVITY_COLUMNS))
        if activity is not None and DEFAULT in activity.index
        else pd.Series(np.nan, index=list(ACTIVITY_COLUMNS))
    )
    return _tk1_no_kernel_rows(model, volts, gpu_mhz, emc_mhz, ["idle", "gated"], default)
