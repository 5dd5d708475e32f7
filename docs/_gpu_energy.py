"""The measured-energy how-to's table and plot, computed at docs build from the run in tests/data/gpu."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOG = REPO / "tests" / "data" / "gpu" / "nvidia-smi-lms50-3-kernels.csv"
TRACE = REPO / "tests" / "data" / "gpu" / "nsys-cuda-gpu-trace-3-kernels.csv"


def gpu_energy_table(plot: Path) -> str:
    """Per-kernel measured energy of the bundled pair with each power field, the alignment found, and what a shift
    of the trace by whole sample periods changes."""
    from cosim.plots.gpu import plot_measured_energy
    from cosim.readers.gpu_logs import read_power_log, read_trace
    from cosim.timeline.measured_energy import align_offset, kernel_energy, sample_period_s, shift_cost

    trace = read_trace(TRACE)
    kernels = trace[trace["kind"] == "kernel"].reset_index(drop=True)
    lines = []
    for field in ("power.draw.instant", "power.draw"):
        samples = read_power_log(LOG, field=field)
        window = samples.attrs["power"]["window_s"]
        period = sample_period_s(samples["time_s"].to_numpy())
        t0 = float(samples["time_s"].iloc[0])
        offset, r = align_offset(kernels, samples, window_s=window, period_s=period) if window == 0 else (t0 + 2.0, float("nan"))
        table = kernel_energy(kernels, samples, window_s=window, offset_s=offset)
        lines += [
            f"**{field}** (window {window:g} s, a reading every {period * 1e3:.3g} ms; "
            + (f"trace zero found {offset - t0:.3f} s into the log, correlation {r:.2f})" if window == 0 else "trace zero given: 2.000 s)"),
            "",
            "| kernel | duration [ms] | readings inside | power [W] | 90 % interval [W] | energy [J] | flags |",
            "|---|---|---|---|---|---|---|",
        ]
        for _, k in table.iterrows():
            measured = k["measured_power_w"] == k["measured_power_w"]
            lines.append(
                f"| {k['kernel']} | {k['duration_s'] * 1e3:.4g} | {k['samples']} | "
                + (
                    f"{k['measured_power_w']:.4g} | {k['measured_power_lo_w']:.4g}-{k['measured_power_hi_w']:.4g} | {k['measured_energy_j']:.4g}"
                    if measured
                    else "- | - | -"
                )
                + f" | {k['flags']} |"
            )
        lines.append("")
        if window == 0:
            cost = shift_cost(kernels, samples, window_s=window, offset_s=offset, period_s=period)
            lines += [
                "Misalignment cost (the trace shifted by k sample periods from the zero found): "
                + ", ".join(f"k = {k:+d}: {100 * c:+.1f} %" for k, c in zip(cost["shift_periods"], cost["change"]))
                + " of the measured kernels' energy.",
                "",
            ]
            shown = table.copy()
            shown[["start_s", "end_s"]] -= t0
            plot_measured_energy(samples, shown, plot, title="nvidia-smi -lms 50 + nsys cuda_gpu_trace (tests/data/gpu)")
    return "\n".join(lines)
