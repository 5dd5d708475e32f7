"""Whole-SoC timeline: the CPU clusters of a gem5 run and the Tegra K1 GPU/memory rails on one time axis.

Total power = CPU clusters + GPU rail + memory rail + base power (Stokke et al.,
Eq. 8, with the gem5 CPU clusters in place of the LP-core rail).  Between and
after kernels the GPU rail is on and idle until its inactivity timer expires,
then power-gated; before the first kernel it is gated.  With gem5 DRAM byte
counts, the memory rail's CPU busy cycles come from the run (4 B per cycle).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from cosim.models.tegrak1 import RailModel
from cosim.timeline.launches import rows_at


def soc_timeline(
    cpu: pd.DataFrame,
    gpu: pd.DataFrame,
    background: pd.DataFrame,
    model: RailModel,
    *,
    gpu_offset_s: float = 0.0,
    cpu_mem_busy_per_s: np.ndarray | None = None,
    railgate_delay_s: float | None = None,
) -> pd.DataFrame:
    """Merge a CPU timeline (:func:`cosim.power_timeline`) and a Tegra K1 GPU timeline.

    Parameters
    ----------
    cpu
        Long per-(epoch, cluster) timeline.
    gpu
        :func:`cosim.timeline.gpu.tegra_k1_timeline` output; shifted by ``gpu_offset_s`` [s].
    background
        :func:`cosim.timeline.gpu.tegra_k1_background` output (idle and gated power).
    cpu_mem_busy_per_s
        Per-epoch EMC cycles per second serving the CPU; replaces the GPU
        input's CPU memory activity where the CPU timeline covers the time.
        More cycles than the EMC clock has are capped and flagged
        ``cpu_memory_saturated``.

    Returns
    -------
    One row per stretch where nothing changes: ``start_s end_s duration_s``,
    ``cpu_<cluster>_w``, ``gpu_w mem_w base_w power_w`` [W], ``energy_j`` [J],
    ``gpu_state`` (kernel/copy/idle/gated), ``kernel_display`` and ``flags``.
    """
    delay = model.railgate_delay_s if railgate_delay_s is None else railgate_delay_s
    # pivot, not pivot_table: an epoch without a value stays a row (nan), it is not dropped
    wide = cpu.pivot(index=["epoch", "start_s", "end_s"], columns="cluster", values="power_w").sort_index().reset_index()
    trust = cpu.groupby("epoch", sort=True)["flags"].agg(
        lambda s: ";".join(sorted({f"cpu:{f}" for t in s for f in str(t).split(";") if f in _CPU_TRUST_FLAGS}))
    )
    clusters = [c for c in dict.fromkeys(cpu["cluster"])]
    g = gpu.assign(start_s=gpu["start_s"] + gpu_offset_s, end_s=gpu["end_s"] + gpu_offset_s)
    lo = min(wide["start_s"].min(), g["start_s"].min())
    hi = max(wide["end_s"].max(), g["end_s"].max())
    pieces = [wide["start_s"], wide["end_s"], g["start_s"], g["end_s"], [lo, hi]]
    last_end = g["end_s"].max()
    if last_end + delay < hi:
        pieces.append([last_end + delay])
    edges = np.unique(np.concatenate([np.asarray(e, dtype=float) for e in pieces]))
    start, end = edges[:-1], edges[1:]
    keep = end - start > 1e-15
    start, end = start[keep], end[keep]
    mid = (start + end) / 2

    out = pd.DataFrame({"start_s": start, "end_s": end, "duration_s": end - start})
    c_idx, in_cpu = rows_at(wide["start_s"].to_numpy(), wide["end_s"].to_numpy(), mid)
    for name in clusters:
        out[f"cpu_{name}_w"] = np.where(in_cpu, wide[name].to_numpy()[c_idx], np.nan)

    g_idx, in_gpu = rows_at(g["start_s"].to_numpy(), g["end_s"].to_numpy(), mid)
    idle_row, gated_row = background.iloc[0], background.iloc[1]
    after_idle = (mid >= last_end) & (mid < last_end + delay)
    state = np.where(in_gpu, g["kind"].to_numpy()[g_idx], np.where(after_idle, "idle", "gated"))
    out["gpu_state"] = state
    out["kernel_display"] = np.where(in_gpu, g["kernel_display"].to_numpy()[g_idx], "")
    for col in ("gpu_w", "mem_w", "mem_cpu_busy_w", "base_w"):
        fallback = np.where(state == "idle", idle_row[col], gated_row[col])
        out[col] = np.where(in_gpu, g[col].to_numpy()[g_idx], fallback)
    saturated = np.zeros(len(out), dtype=bool)
    if cpu_mem_busy_per_s is not None:
        rail = model.rails["mem"]
        emc_hz = float(g["emc_mhz"].iloc[0]) * 1e6
        busy = np.asarray(cpu_mem_busy_per_s, dtype=float)[c_idx]
        saturated = in_cpu & (busy > emc_hz)  # the simulated memory moved more than this EMC clock can
        volts = rail.voltage_v or 0.0  # the loader requires the memory rail's fixed voltage
        busy_w = rail.coefficients["cpu_busy"] * np.minimum(busy, emc_hz) * volts**2
        new = np.where(in_cpu, busy_w, out["mem_cpu_busy_w"])
        out["mem_w"] = out["mem_w"] - out["mem_cpu_busy_w"] + new
        out["mem_cpu_busy_w"] = new
    cpu_cols = [f"cpu_{n}_w" for n in clusters]
    # outside the gem5 run the CPUs count 0 (flagged no_cpu_timeline); inside it a CPU without a value stays nan
    cpu_w = out[cpu_cols].to_numpy(dtype=float)
    cpu_sum = np.where(in_cpu, cpu_w.sum(axis=1), 0.0)
    out["power_w"] = cpu_sum + out["gpu_w"] + out["mem_w"] + out["base_w"]
    out["energy_j"] = out["power_w"] * out["duration_s"]
    cpu_trust = trust.to_numpy()[c_idx]
    cpu_flag = np.where(
        in_cpu,
        [";".join(f for f in pair if f) for pair in zip(np.where(saturated, "cpu_memory_saturated", ""), cpu_trust)],
        "no_cpu_timeline",
    )
    gpu_flag = np.where(in_gpu, g["flags"].fillna("").to_numpy()[g_idx], "")
    out["flags"] = [";".join(f for f in pair if f) for pair in zip(cpu_flag, gpu_flag, strict=True)]
    out.attrs["clusters"] = clusters
    return out


_CPU_TRUST_FLAGS = {
    "implausible",
    "extrapolated",
    "isa_mismatch",
    "isa_unknown",
    "config_from_stats",
    "nan_input",
    "freq_outside_training",
    "voltage_outside_training",
}
