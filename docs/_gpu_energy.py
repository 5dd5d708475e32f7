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


def public_pairs_table() -> str:
    """Per-kernel measured energy on two public power-log + kernel-time pairs, from ``howto/gpu-energy-public.json``
    (written by ``python tests/gpu_energy_public.py ... --write`` from the fetched files, which are not copied here)."""
    import json

    data = json.loads((Path(__file__).resolve().parent / "howto" / "gpu-energy-public.json").read_text())
    lines = [
        "| pair | power field (window) | reading every | trace zero | kernels measured / in trace | kernel | duration [s] | "
        "readings inside | power [W] (90 % interval) | energy [J] | trace shifted ±1 / ±2 readings |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    cases = [
        ("Kokkos (NVML)", data["kokkos"], "as_read", "tool's zero"),
        ("Kokkos, read as instantaneous", data["kokkos"], "window_0", "tool's zero"),
        ("A100 PCIe (nvidia-smi)", data["a100"], "instant", "best fit"),
        ("A100 PCIe, power.draw as a 1 s mean", data["a100"], "draw_as_1s_mean", "best fit"),
    ]
    for name, pair, key, zero in cases:
        c = pair[key]
        s = c["shift_change_pct"]
        shift = f"{s.get('-1', 0):+.2f}/{s.get('+1', 0):+.2f} %, {s.get('-2', 0):+.2f}/{s.get('+2', 0):+.2f} %"
        for i, r in enumerate(c["rows"]):
            head = (
                f"| {name} | {c['field']} ({c['window_s']:g} s) | {c['period_ms']:.3g} ms | {zero}: {c['offset_s']:.3f} s "
                f"(best fit {c['offset_found_s']:.3f} s, r = {c['correlation']:.2f}) | {c['measured']} / {c['kernels']}"
                if i == 0
                else "| | | | | "
            )
            lines.append(
                f"{head} | {r['kernel']} | {r['duration_s']:.4g} | {r['samples']} | {r['power_w']:.4g} "
                f"({r['power_lo_w']:.4g}-{r['power_hi_w']:.4g}) | {r['energy_j']:.4g} | {shift if i == 0 else ''} |"
            )
    k, a = data["kokkos"], data["a100"]
    lines += [
        "",
        f"Sources: {k['source']}; {a['source']}. Kokkos alignment: {k['aligned']}; A100: {a['aligned']}. "
        f"Kokkos: {k['as_read']['kernels'] - k['as_read']['measured']} kernels ({k['as_read']['unresolved_kernel_s']:.3g} s of the run) "
        f"are shorter than the {k['as_read']['resolvable_ms']:.0f} ms a 1 s window and two readings need, and are flagged `unresolved`. "
        f'A100: read as a 1 s mean, power.draw gives the warning "{a["draw_as_1s_mean"]["window_warning"]}".',
    ]
    return "\n".join(lines) + "\n"


def public_names_table() -> str:
    """Energy per kernel name on the two public pairs (the fit over all readings, window and lag found from the log),
    from ``howto/gpu-energy-public.json``."""
    import json

    data = json.loads((Path(__file__).resolve().parent / "howto" / "gpu-energy-public.json").read_text())
    cases = [
        ("Kokkos (NVML power_watts)", data["kokkos"].get("per_name")),
        ("A100 PCIe, power.draw", data["a100"].get("per_name_draw")),
        ("A100 PCIe, power.draw.instant", data["a100"].get("per_name_instant")),
    ]
    lines = [
        "| log | window found [s] (assumed) | lag [s] | run energy [J] | sum P*dt [J] | idle [W] | kernel energy [J] (90 %) | "
        "unexplained above idle [J] | names with a number / all |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, c in cases:
        if not c:
            continue
        k = c["kernel_energy_j"]
        lines.append(
            f"| {name} | {c['window_found_s']:.3g} ({c['window_assumed_s']:g}) | {c['lag_s']:+.3f} | {c['run_energy_j']:.6g} | "
            f"{c['sum_p_dt_j']:.6g} | {c['idle_w']:.4g} | {k[0]:.5g} ({k[1]:.5g}-{k[2]:.5g}) | {c['unexplained_above_idle_j']:.3g} | "
            f"{c['with_a_number']} / {c['names']} |"
        )
    kokkos = data["kokkos"].get("per_name")
    if kokkos:
        lines += ["", "| Kokkos kernel name | launches | busy [s] | energy [J] (90 %) | flag: why |", "|---|---|---|---|---|"]
        for r in kokkos["rows"]:
            e = r["energy_j"]
            number = f"{e[0]:.4g} ({e[1]:.4g}-{e[2]:.4g})" if e else "-"
            lines.append(
                f"| {r['kernel']} | {r['launches']} | {r['busy_s']:.4g} | {number} | {r['flags']}{': ' + r['reason'] if r['reason'] else ''} |"
            )
    return "\n".join(lines) + "\n"


def made_table() -> str:
    """The made-here scorecard of energy per kernel name, from ``howto/gpu-energy-made.json`` (written by
    ``python tests/gpu_energy_made.py --table --seeds 10-29 --write``)."""
    import json
    import sys

    sys.path.insert(0, str(REPO / "tests"))
    from gpu_energy_made import markdown

    data = json.loads((Path(__file__).resolve().parent / "howto" / "gpu-energy-made.json").read_text())
    return markdown(data["rows"]) + f"\nCommand: `{data['command']}`.\n"
