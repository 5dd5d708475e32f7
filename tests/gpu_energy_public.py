"""Measured energy per kernel on two public power-log + kernel-time pairs (the figures behind
docs/howto/gpu-energy-per-kernel.md's "On real logs" table, docs/howto/gpu-energy-public.json).

The files are not in this repository (no licence to copy them); fetch them, then run from the repository root::

    python tests/gpu_energy_public.py --kokkos-power P --kokkos-kernels K --a100-log L [--write]

* Kokkos pair: github.com/ethan-puyaubreau/kokkos-energy-dashboard @ d4152660d3f8,
  ``power_profile_output_gpu_power.csv`` (NVML readings) and ``power_profile_output_kernels.csv`` (the Kokkos
  kernels of the same ArborX DBSCAN run, start and end in ns on the same clock).
* A100 log: github.com/yqg9651/cuda_test @ dade57b3411b, ``a100_250w_pcie_fp16_burst/burst_fp16_half_maxpower.csv``
  (nvidia-smi --query-gpu=timestamp,...,power.draw,power.draw.instant,... -lms of an A100 PCIe 250 W); the run's
  one cuBLASLt batched GEMM lasted 46283.882812 ms (``burst_fp16_half_maxpower.log`` beside it, the program's own
  timing); it has no start time, so the trace is that one kernel at 0 and the offset is found by correlation.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from pathlib import Path

JSON = Path(__file__).resolve().parents[1] / "docs" / "howto" / "gpu-energy-public.json"
A100_GEMM_S = 46.283882812


def _pair(samples, kernels, *, window_s: float, offset_s: float | None) -> dict:
    from cosim.timeline.measured_energy import (
        align_offset,
        kernel_energy,
        resolvable_s,
        sample_period_s,
        shift_cost,
        window_contradiction,
    )

    period = sample_period_s(samples["time_s"].to_numpy())
    t0 = float(samples["time_s"].iloc[0])
    found, r = align_offset(kernels, samples, window_s=window_s, period_s=period)
    offset = found if offset_s is None else t0 + offset_s
    table = kernel_energy(kernels, samples, window_s=window_s, offset_s=offset)
    cost = shift_cost(kernels, samples, window_s=window_s, offset_s=offset, period_s=period)
    measured = table[table["measured_power_w"].notna()]
    return {
        "field": samples.attrs["power"]["field"],
        "window_s": window_s,
        "period_ms": round(period * 1e3, 2),
        "readings": len(samples),
        "resolvable_ms": round(resolvable_s(window_s, period) * 1e3, 1),
        "offset_s": round(offset - t0, 4),
        "offset_found_s": round(found - t0, 4),
        "correlation": round(r, 3),
        "kernels": len(table),
        "measured": len(measured),
        "unresolved_kernel_s": round(float(table.loc[table["measured_power_w"].isna(), "duration_s"].sum()), 4),
        "window_warning": window_contradiction(samples, window_s),
        "rows": [
            {
                "kernel": k["kernel"],
                "duration_s": round(float(k["duration_s"]), 6),
                "samples": int(k["samples"]),
                "power_w": round(float(k["measured_power_w"]), 3),
                "power_lo_w": round(float(k["measured_power_lo_w"]), 3),
                "power_hi_w": round(float(k["measured_power_hi_w"]), 3),
                "energy_j": round(float(k["measured_energy_j"]), 2),
            }
            for _, k in measured.iterrows()
        ],
        "shift_change_pct": {f"{k:+d}": round(100 * c, 2) for k, c in zip(cost["shift_periods"], cost["change"]) if math.isfinite(c)},
    }


def _names(power_log: Path, trace: Path, *, field: str | None = None) -> dict:
    """The per-name fit as ``cosim gpu-energy POWER TRACE [--field F]`` runs it: window and lag estimated from the log."""
    import warnings

    import numpy as np

    from cosim.cli.gpu_energy import name_energy
    from cosim.timeline.logged_run import read_logged_run

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = read_logged_run(power_log, trace, field=field)
    est = name_energy(run)
    s = est.search
    t = run.samples["time_s"].to_numpy()
    p = run.samples["power_w"].to_numpy()
    numbered = est.table[est.table["energy_j"].notna()]
    return {
        "field": run.samples.attrs["power"]["field"],
        "window_assumed_s": run.window_s,
        "window_found_s": round(s.window_s, 4),
        "window_set_s": [round(s.window_lo_s, 4), round(s.window_hi_s, 4)],
        "window_estimated": s.estimated,
        "lag_s": round(s.lag_s, 4),
        "lag_set_s": [round(s.lag_lo_s, 4), round(s.lag_hi_s, 4)],
        "offset_s": round(run.offset_s - float(t[0]), 4),
        "aligned_by": run.aligned_by,
        "run_energy_j": round(est.run_j, 2),
        "sum_p_dt_j": round(float(np.sum(p[:-1] * np.diff(t))), 2),
        "idle_w": round(est.idle_w, 3),
        "idle_from": est.idle_from,
        "kernel_energy_j": [round(est.kernel_j, 2), round(est.kernel_lo_j, 2), round(est.kernel_hi_j, 2)],
        "unexplained_above_idle_j": round(est.unexplained_j, 2),
        "names": len(est.table),
        "with_a_number": len(numbered),
        "rows": [
            {
                "kernel": r["kernel"],
                "launches": int(r["launches"]),
                "busy_s": round(float(r["busy_s"]), 6),
                "energy_j": None
                if r["energy_j"] != r["energy_j"]
                else [round(float(r[c]), 3) for c in ("energy_j", "energy_j_lo", "energy_j_hi")],
                "flags": r["flags"] if isinstance(r["flags"], str) else "",
                "reason": r["reason"] if isinstance(r["reason"], str) else "",
            }
            for _, r in est.table.iterrows()
        ],
    }


def measure(kokkos_power: Path, kokkos_kernels: Path, a100_log: Path) -> dict:
    from cosim.readers.gpu_logs import read_power_log, read_trace

    samples = read_power_log(kokkos_power)
    kernels = read_trace(kokkos_kernels)
    kokkos = {
        "source": "github.com/ethan-puyaubreau/kokkos-energy-dashboard @ d4152660d3f81d578df32fc7bd18f21df6e77cd9: "
        "power_profile_output_gpu_power.csv + power_profile_output_kernels.csv (ArborX DBSCAN, Kokkos energy tool, NVML)",
        "aligned": "the tool's own clock: both files count ns from its zero (--offset-s 0)",
        "as_read": _pair(samples, kernels, window_s=1.0, offset_s=0.0),
        "window_0": _pair(samples, kernels, window_s=0.0, offset_s=0.0),
        "per_name": _names(kokkos_power, kokkos_kernels),
    }
    with tempfile.TemporaryDirectory() as tmp:  # the GEMM's one kernel, as an nsys cuda_gpu_trace row
        trace = Path(tmp) / "gemm_cuda_gpu_trace.csv"
        trace.write_text(
            "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),"
            "Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n"
            f"0,{round(A100_GEMM_S * 1e9)},1,,,,,,,,,,,,,,A100 PCIe (0),1,,7,LtHSHgemmStridedBatchSimple\n"
        )
        gemm = read_trace(trace)
        per_name_draw = _names(a100_log, trace, field="power.draw")
        per_name_instant = _names(a100_log, trace, field="power.draw.instant")
    a100 = {
        "source": "github.com/yqg9651/cuda_test @ dade57b3411b8f1e55903d4466a56e9d595f0896: "
        "a100_250w_pcie_fp16_burst/burst_fp16_half_maxpower.csv (nvidia-smi -lms) + .log (GEMM 46283.882812 ms)",
        "aligned": "no start time in the run's log: the offset at which power follows the kernel best",
        "instant": _pair(read_power_log(a100_log, field="power.draw.instant"), gemm, window_s=0.0, offset_s=None),
        "draw_as_1s_mean": _pair(read_power_log(a100_log, field="power.draw"), gemm, window_s=1.0, offset_s=None),
        "draw_instant": _pair(read_power_log(a100_log, field="power.draw"), gemm, window_s=0.0, offset_s=None),
        "per_name_draw": per_name_draw,
        "per_name_instant": per_name_instant,
    }
    return {
        "command": "python tests/gpu_energy_public.py --kokkos-power P --kokkos-kernels K --a100-log L --write",
        "kokkos": kokkos,
        "a100": a100,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kokkos-power", type=Path, required=True)
    p.add_argument("--kokkos-kernels", type=Path, required=True)
    p.add_argument("--a100-log", type=Path, required=True)
    p.add_argument("--write", action="store_true", help=f"write {JSON.relative_to(JSON.parents[2])}")
    args = p.parse_args()
    data = measure(args.kokkos_power, args.kokkos_kernels, args.a100_log)
    text = json.dumps(data, indent=1) + "\n"
    if args.write:
        JSON.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
