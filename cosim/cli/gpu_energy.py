"""``cosim gpu-energy``: energy per kernel launch (where the readings resolve it) and per kernel name (a fit over all
the run's readings), with the run's energy from an energy counter where the log has one."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from cosim.errors import CosimError


def _names_path(args: argparse.Namespace) -> Path:
    if args.names is not None:
        return args.names
    out = args.output
    return out.with_name(f"{out.stem}-names{out.suffix or '.csv'}")


def cmd_gpu_energy(args: argparse.Namespace) -> int:
    from cosim.api import launch_energy
    from cosim.kernels.progress import stepper
    from cosim.output import write_table
    from cosim.timeline.measured_energy import resolvable_s, shift_cost

    if args.power_limit_w is not None and not (args.power_limit_w > 0 and math.isfinite(args.power_limit_w)):
        raise CosimError(f"--power-limit-w {args.power_limit_w}: a board's power limit is a power > 0 [W]")
    names_path = _names_path(args)
    if names_path.resolve() in (args.power_log.resolve(), args.trace.resolve(), args.output.resolve()):
        raise CosimError(f"--names {names_path}: that is an input or the -o output; give another path")
    progress = args.progress is not False

    def say(text: str) -> None:
        if progress:
            print(f"cosim: gpu-energy: {text}", file=sys.stderr, flush=True)

    say("reading the power log and the trace")
    run, table = launch_energy(
        args.power_log,
        args.trace,
        field=args.field,
        gpu=args.gpu,
        period_s=args.period_s,
        window_s=args.window_s,
        offset_s=args.offset_s,
        trace_zero=args.trace_zero,
        min_samples=args.min_samples,
    )
    samples, kernels, window, period, offset, how = run.samples, run.kernels, run.window_s, run.period_s, run.offset_s, run.aligned_by
    power = samples.attrs["power"]
    t0 = float(samples["time_s"].iloc[0])
    say(f"per launch: {len(kernels)} launches against {len(samples)} readings")
    write_table(table, args.output)
    resolved = table[table["measured_power_w"].notna()]
    print(
        f"{args.power_log} ({power['field']}, GPU {power['gpu']}, every {period * 1e3:.4g} ms) + {args.trace}: "
        f"{len(table)} kernel launch(es), {len(resolved)} measured, {len(table) - len(resolved)} shorter than the readings "
        f"resolve one by one (sure from {resolvable_s(window, period, args.min_samples) * 1e3:.4g} ms at a {window:g} s window) -> {args.output}"
    )
    print(f"  trace zero at {offset - t0:.4f} s into the log, from {how}")
    if len(resolved):
        print(
            f"  launches measured one by one: {resolved['measured_energy_j'].sum():.4g} J over {resolved['duration_s'].sum():.4g} s "
            f"(90 % interval {resolved['measured_energy_lo_j'].sum():.4g}-{resolved['measured_energy_hi_j'].sum():.4g} J)"
        )
        cost = shift_cost(kernels, samples, window_s=window, offset_s=offset, period_s=period)
        shifts = ", ".join(f"{k:+d}: {100 * c:+.1f} %" for k, c in zip(cost["shift_periods"], cost["change"]))
        print(f"  misalignment cost (trace shifted by k sample periods, energy change): {shifts}")

    counter = _counter(samples)
    names = name_energy(
        run,
        window_s=args.window_s,
        power_limit_w=args.power_limit_w,
        counter=counter,
        progress=stepper(_label("gpu-energy: fitting windows"), enabled=progress, name=lambda i: "") if progress else None,
    )
    names.table["per_launch_energy_j"] = _per_launch(names.table, table)
    write_table(names.table, names_path)
    _summary(args, names, counter, power, run.window_from, samples, names_path)
    if args.plot:
        from cosim.plots.gpu import plot_measured_energy

        print(f"  plot -> {plot_measured_energy(samples, table, args.plot, title=f'{args.trace.name} on {args.power_log.name}')}")
    return 0


def _label(text: str) -> str:
    """A progress label whose every line starts with 'cosim:' (tqdm's bar shows the label alone; the plain lines add it)."""
    from cosim.kernels.progress import tqdm_installed

    return f"cosim: {text}" if tqdm_installed() else text


def name_energy(run, *, window_s=None, power_limit_w=None, counter=None, progress=None):
    """The per-name fit of a :class:`~cosim.timeline.logged_run.LoggedRun` as ``cosim gpu-energy`` runs it: lags
    searched around the offset (wider where the offset itself was searched), the window estimated unless
    ``window_s`` is given, the board's limit from the log where ``power_limit_w`` is not given."""
    from cosim.timeline.name_energy import estimate

    power = run.samples.attrs["power"]
    reach = 0.6 + 2 * run.period_s  # the correlation search's offset, taken at the assumed window, is off by half of it at most
    return estimate(
        run.kernels,
        run.samples,
        offset_s=run.offset_s,
        period_s=run.period_s,
        lags_s=(-reach, reach) if run.searched else (-0.5, 1.0),
        window_s=window_s,
        doc_window_s=run.window_s,
        power_limit_w=power_limit_w if power_limit_w is not None else power.get("limit_w"),
        run_energy_j=counter.total_j if counter else None,
        progress=progress,
    )


def _counter(samples):
    from cosim.timeline.energy_counter import counter_energy

    if "energy_j" not in samples or samples["energy_j"].notna().sum() < 2:
        return None
    return counter_energy(samples["time_s"].to_numpy(), samples["energy_j"].to_numpy(), samples["power_w"].to_numpy())


def _per_launch(names, launches):
    """Per name row: the sum of its launches' one-by-one energies where every launch of it resolves, else empty."""
    import numpy as np

    out = np.full(len(names), np.nan)
    for i, kernel in enumerate(names["kernel"]):
        mine = launches[launches["kernel"].astype(str) == kernel]
        if len(mine) and mine["measured_energy_j"].notna().all():
            out[i] = float(mine["measured_energy_j"].sum())
    return out


def _summary(args, names, counter, power, window_from, samples, names_path) -> None:
    import numpy as np

    s = names.search
    if window_from == "--window-s":
        origin = "given by --window-s"
    elif s.estimated:
        origin = "estimated from the log"
    else:
        origin = f"not told by the log; {window_from}"
    print(
        f"  power.draw as reported: window {s.window_s:.3g} s ({origin}; the log fits {s.window_lo_s:.3g}-{s.window_hi_s:.3g} s), "
        f"lag {s.lag_s:+.3f} s (90 % {s.lag_lo_s:+.3f} to {s.lag_hi_s:+.3f} s)"
        + ("" if s.estimated or window_from == "--window-s" else " [flag: window_assumed]")
    )
    t = samples["time_s"].to_numpy(dtype=float)
    p = samples["power_w"].to_numpy(dtype=float)
    sum_p_dt = float(np.sum(p[:-1] * np.diff(t)))
    if counter is not None:
        source = (
            f"from the energy counter ({counter.wraps} wrap(s), {counter.resets} reset(s); the integrated power "
            f"{counter.integrated_j:.6g} J differs by {100 * counter.difference:+.2f} %)"
        )
    else:
        source = "from the integrated power (no energy counter in the log)"
    print(
        f"  run energy {names.run_j:.6g} J over the log ({names.run_span_s[0] - t[0]:.4g} to {names.run_span_s[1] - t[0]:.6g} s "
        f"after its first reading) {source}; sum P*dt {sum_p_dt:.6g} J; "
        f"idle {names.idle_w:.4g} W ({names.idle_from}); "
        + (
            f"kernel energy {names.kernel_j:.6g} J (90 % {names.kernel_lo_j:.6g}-{names.kernel_hi_j:.6g} J, all kernels pooled; "
            f"{names.kernel_in_log_j:.6g} J of it in the log's readings); "
            if names.kernel_j == names.kernel_j
            else "kernel energy unknown (no reading saw a kernel); "
        )
        + f"above idle, explained by no kernel's busy time {names.unexplained_j:.4g} J"
    )
    table = names.table
    numbered = table["energy_j"].notna()
    print(
        f"  per kernel name: {int(numbered.sum())} with a number, {int((table['flags'] == 'not_identifiable').sum())} not_identifiable "
        f"(block bootstrap of {names.replicates}, blocks of {names.block} readings) -> {names_path}"
    )
    for _, r in table.head(12).iterrows():
        if r["energy_j"] == r["energy_j"]:
            print(
                f"    {str(r['kernel'])[:60]:<60} {r['launches']:>7} launch(es) {r['busy_s']:10.4g} s  "
                f"{r['energy_j']:10.5g} J ({r['energy_j_lo']:.5g}-{r['energy_j_hi']:.5g})"
            )
        else:
            print(f"    {str(r['kernel'])[:60]:<60} {r['launches']:>7} launch(es) {r['busy_s']:10.4g} s  not_identifiable: {r['reason']}")
    if len(table) > 12:
        print(f"    ... {len(table) - 12} more in {names_path}")
    for note in names.notes:
        print(f"  note: {note}")
