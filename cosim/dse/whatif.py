"""DVFS what-if: rescale a recorded gem5 run to other operating points per cluster.

Power (Walker's formulation): per-cycle event rates are properties of the
workload, so an epoch's events are the same at any DVFS point.  Dynamic power is
beta * E * V^2 * f with E = events / (t * f * cores); with the same events over a
new runtime t' at f', an epoch's dynamic *energy* is t * f * V'^2 * sum(beta * E):
it depends on the new voltage only.  Static power is the model's polynomial at
(f', V') for the whole new runtime: a cluster stays powered until the run ends.

Runtime, per cluster (the clusters run their own work side by side), up to its
last busy cycle (the idle rest of its last active epoch is after it finished):
  busy_c  = busiest CPU's active cycles / f_c          (time cluster c computes)
  mem_c   = the part of busy_c spent waiting on memory off the cluster's clock
  busy_c' = mem_c + (busy_c - mem_c) * f_c / f_c'      (only on-clock time scales)
  wait_c  = the rest of the epoch, t - busy_c: time the cluster waited with no
            active cycle (a Minor CPU stops ticking while it waits on a miss)
The run ends when the last cluster finishes, plus the recorded time after every
cluster had finished.  busy_c reads gem5's ticked cycles (numCycles - idleCycles:
a Minor CPU's pipeline stops while it waits on memory, an O3 CPU's tick stops
with no activity); its CPU_CYCLES input is its clocked cycles (the counter map:
numCycles at most the ON residency, stalls included), which at f' are its
clocked time moved by what f' does to busy_c, times f': its waits off the clock
hold their time, so they are fewer cycles at a lower clock, and a core that had
halted stays at 0.

What is memory time, from gem5's own statistics: :mod:`cosim.dse.memory_stats` (docs/explanation/whatif.md has
the suite that checks each step).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from cosim.counters.pmc import event_rates
from cosim.dse.interval import (
    add_intervals,
    add_model_interval,
    model_half_width_j,
    run_character,
    runtime_shift_s,
    unread_shift_s,
    whole_line_shift_s,
)
from cosim.dse.memory_stats import (
    STORE_MISSES,
    cpus_that_ran,
    dram_objects,
    l2_miss_cycles,
    l2_misses,
    memory_unread,
    no_commit_cycles,
    o3_store_lines_in_flight,
    stall_cycles,
    store_lines_counted,
    whatif_stats,  # re-exported: callers price a run with the stats it names
    whole_line_switch_s,
)
from cosim.dse.minor_waits import memory_slots, minor_waits
from cosim.dse.peak import dump_period_s, peak_power_w
from cosim.dse.recorded import ACTIVE_SHARE, ClusterActivity, RecordedRun, beta_e, clocked_s, cluster_done_s, cluster_finish, last_active
from cosim.dse.whatif_refusals import refuse_clock_change, refuse_implausible_clocks, refuse_whatif_rates
from cosim.errors import CosimError
from cosim.models.envelope import cores_factor, outside_clocks, powered_cores_assumed, refuse_beyond_band, static_at_w
from cosim.models.modelfile import Model, operating_point
from cosim.models.static_form import static_form
from cosim.readers.gem5_config import Gem5Config
from cosim.timeline.clusters import ClusterSpec, frequency_mhz, resolve_cluster
from cosim.timeline.core_kind import other_core_kind
from cosim.timeline.cycles import checked_cycles
from cosim.timeline.temperature import WhatifTemperatures, whatif_temperature_c
from cosim.timeline.trust import isa_flags, whatif_cluster_flags

__all__ = ["ClusterActivity", "RecordedRun", "cluster_done_s", "dvfs_grid", "recorded_run", "whatif", "whatif_stats"]

# CPU kinds whose idle cycles include the cycles they wait for memory (a MinorCPU's pipeline stops on a miss; the
# cycles stay clocked: they count in CPU_CYCLES, not in its busy time)
_QUIESCE_ON_MISS = {"minor", "inorder"}


def recorded_run(stats: pd.DataFrame, config: Gem5Config, specs: Sequence[ClusterSpec], *, any_isa: bool = False) -> RecordedRun:
    """Per-epoch activity of each cluster of a parsed gem5 run, through the trust check ``cosim power`` applies
    (:mod:`cosim.timeline.trust`): the same refusals that no clock changes, the same flags on every row."""
    meta = stats.attrs["gem5"]
    run_flags = tuple(isa_flags(config, [s.model for s in specs], any_isa=any_isa, warn=False))
    duration = stats["duration_s"].to_numpy()
    # the only CPU on its memory: its store misses' latency falls by the L2's cycles as its clock rises (gem5's se.py
    # on phases: 95.6 -> 75.6 ns a miss from 1000 to 2000 MHz, the L2's 42 cycles); with other CPUs on the same
    # memory, their DRAM queueing offsets that (the suite's big.LITTLE: 102 -> 97 ns for 11.6 ns of L2 cycles)
    # (se.py -n 4 running one program: the one CPU that ran, xu3-mibench's tiff2rgba 98.9 -> 78.6 ns a store miss)
    alone = cpus_that_ran(stats, config.cpus) <= 1
    out = []
    for spec in specs:
        cluster = resolve_cluster(config, spec, meta.ticks_per_s)
        model = spec.model
        freq = frequency_mhz(stats, cluster)
        refuse_clock_change(stats, cluster, freq_mhz=freq, duration_s=duration, path=meta.path)
        # busy_s needs real cycles: no epoch is kept without them (the what-if has no --keep-implausible)
        checked_cycles(stats, cluster, freq_mhz=freq, duration_s=duration, keep=False, path=meta.path, keep_option=None)
        rates = event_rates(
            stats, cluster, model.events, generation=meta.generation, cores_per_cluster=model.cores_per_cluster, freq_mhz=freq
        )
        refuse_whatif_rates(stats, cluster, model, rates.eph, path=meta.path)  # no clock changes a rate per cycle
        active = np.zeros((len(cluster.cpus), len(stats)))
        for i, cpu in enumerate(cluster.cpus):
            if f"{cpu}.numCycles" not in stats:
                raise CosimError(f"{meta.path}: no {cpu}.numCycles; the what-if needs each CPU's cycles")
            idle = stats[f"{cpu}.idleCycles"].to_numpy() if f"{cpu}.idleCycles" in stats else 0.0
            active[i] = stats[f"{cpu}.numCycles"].to_numpy() - idle
        busy = np.minimum(active.max(axis=0) / (freq * 1e6), duration)
        # the CPUs that ran in each epoch share its misses and stalls (one busy CPU of four, as se.py -n 4 runs one
        # program, has them all: dividing by the four put a quarter of its memory time on xu3-mibench's ex5_big runs)
        running = np.maximum((active > ACTIVE_SHARE * duration * freq * 1e6).sum(axis=0), 1)
        latency, misses = l2_misses(stats, cluster, meta.ticks_per_s)
        store_latency, store_misses = l2_misses(stats, cluster, meta.ticks_per_s, families=STORE_MISSES)
        l2_cycles_s = l2_miss_cycles(config, cluster) / (freq * 1e6)  # each miss's time on the cluster clock [s]
        clocked = misses * l2_cycles_s / running
        zero = np.zeros(len(stats))
        idle = duration - busy
        if all(cluster.kind(c) in _QUIESCE_ON_MISS for c in cluster.cores):
            mem = zero  # the waits are idle cycles already, outside busy
            slots = memory_slots(config, cluster, alone=alone)
            minor = minor_waits(
                stats,
                cluster,
                ticks_per_s=meta.ticks_per_s,
                duration_s=duration,
                busy_s=busy,
                l2_cycles_s=l2_cycles_s,
                slots=slots,
                running=running,
            )
            mem_clocked, store_l2, whole_line, unread_stores = zero, zero, None, False
            wait_clocked, load_fixed = minor.wait_clocked_s, minor.load_wait_fixed_s
        else:
            # an O3 core's memory time: its read misses one after the other (dependent loads) plus the cycles its L1D
            # refused accesses with every MSHR waiting, or it could not rename for a full load or store queue
            # (independent misses, stores draining); where they overlap (memory-level parallelism) the cycles it
            # committed nothing bound it.  Both are sums, so a dump of several phases gets each phase's memory time.
            # Without the commit counts (older stats): the larger of the two, exact only for one kind of phase.
            full = stall_cycles(stats, cluster) / (freq * 1e6) / running
            serial = latency / running
            # the waits it spent idle (nothing in flight: an instruction miss with the pipeline empty) are fixed time
            # already, outside busy: their misses leave the sum; in its last active epoch only when it is the only
            # cluster (its idle time there is its own waiting, not time after it finished while another ran on)
            if len(specs) > 1:
                idle = np.where(np.arange(len(duration)) >= last_active(busy, duration), 0.0, idle)
            serial = np.maximum(serial - idle, 0.0)
            stalled = no_commit_cycles(stats, cluster)
            summed = serial + store_latency / running
            # stalls with no miss behind them are core time (telecom_gsm's load queue is full 3.3 M cycles at every
            # clock with 995 L2 misses): memory time is at most the misses' summed latency
            stalled_s = summed if stalled is None else np.minimum(stalled / (freq * 1e6) / running, summed)
            mem = np.minimum(busy, np.minimum(stalled_s, serial + full))
            # its store queue writes back in order: a store stream's misses, as many at a time as its queue holds
            # lines, are a floor under its memory time (xu3-mibench's tiff2rgba: 16 stores a line in a 16-entry queue,
            # one line at a time, 130 ns a line at 1000 MHz = its 99 ns store miss + 31 cycles; predicted from 1000 at
            # 2000 MHz: -25.5 % without the floor, +0.4 % with it)
            floor = store_latency / running / o3_store_lines_in_flight(stats, config, cluster, store_misses)
            mem = np.minimum(busy, np.maximum(mem, floor))
            # the L2's own cycles of the misses behind that time, the store misses' too (stores draining through a
            # few MSHRs fill the store queue: gem5's ReadExReq latency falls by those cycles as the clock rises), in
            # flight together overlap as their latencies do: on the critical path only the share memory time is of
            # the misses' summed latency
            with np.errstate(divide="ignore", invalid="ignore"):
                overlap = np.where(summed > mem, mem / summed, 1.0)
            mem_clocked, load_fixed = np.minimum(clocked * overlap, mem), zero
            # those idle waits are misses too: the L2's own cycles of each run on the cluster clock (office_stringsearch1,
            # a 0.2 ms run with a cold instruction cache: 19.3 us idle at 1000 MHz, 16.4 us at 2000)
            with np.errstate(divide="ignore", invalid="ignore"):
                wait_clocked = idle * np.clip(np.where(latency > 0, misses * l2_cycles_s / latency, 0.0), 0.0, 1.0)
            store_l2 = np.minimum(store_misses * l2_cycles_s / running * overlap, mem - mem_clocked)
            if alone:
                mem_clocked = mem_clocked + store_l2
            line_s = _per_miss_s(store_latency, store_misses) or _per_miss_s(latency, misses)
            whole_line = np.stack(whole_line_switch_s(stats, cluster, fetch_s=line_s, store_misses=store_misses, running=running))
            unread_stores = bool(store_misses.sum() > 0) and not store_lines_counted(stats, cluster)
            minor = None
        out.append(
            ClusterActivity(
                cluster.name,
                model,
                freq,
                duration * freq * beta_e(model, rates, len(stats), cycles=False),
                duration * freq * beta_e(model, rates, len(stats), cycles=True),
                busy,
                mem,
                mem_clocked,
                wait_clocked,
                load_fixed,
                store_l2,
                alone,
                None if minor is None else minor.store_serial_s,
                None if minor is None else minor.store_serial_clocked_s,
                None if minor is None else minor.store_drain_s,
                None if minor is None else minor.drain_clocked_s,
                whole_line,
                cores_factor(model, cluster.n_cpus),
                _cluster_flags(cluster, model, unread_stores=unread_stores, unread_memory=memory_unread(stats, cluster))
                + run_flags
                + whatif_cluster_flags(stats, cluster, model)
                + tuple(f"missing_term:{e}:{cluster.name}" for e in sorted(rates.missing))  # as cosim power flags them
                + tuple(f"subst:{e}:{cluster.name}" for e in sorted(set(rates.substitutes) - set(rates.missing))),
                clocked_s(stats, cluster, generation=meta.generation, freq_mhz=freq),
                spec.temperature_c,
                spec.ambient_c,
                spec.start_temperature_c,
            )
        )
    dram = dram_objects(config)
    busy_cols = [f"{d}.busUtil" for d in dram if f"{d}.busUtil" in stats]
    # mean data-bus busy time over the DRAM channels [s]
    dram_busy = float(np.nansum(stats[busy_cols].to_numpy() / 100.0 * duration[:, None])) / len(busy_cols) if busy_cols else 0.0
    return RecordedRun(duration, out, dram_busy)


def dvfs_grid(run: RecordedRun, freqs: Mapping[str, Sequence[float]] | None = None) -> pd.DataFrame:
    """Every combination of the clusters' frequencies (default: each model's V-f table)."""
    axes = {}
    for c in run.clusters:
        axes[c.name] = list(freqs[c.name]) if freqs and c.name in freqs else [f for f, _ in c.model.vf_points]
    rows = list(itertools.product(*axes.values()))
    return pd.DataFrame(rows, columns=[f"{name}_freq_mhz" for name in axes])


def whatif(run: RecordedRun, grid: pd.DataFrame, *, extrapolate: bool = False) -> pd.DataFrame:
    """Runtime [s], energy [J], average and peak power [W] of the run at each grid row; per-cluster energy and runtime,
    an interval on runtime and energy (``runtime_s_lo`` .. ``energy_j_hi``; ``energy_j_whatif_lo/hi`` the what-if's
    part alone, without the power model's own, see :mod:`cosim.dse.interval`) and ``flags``.

    ``peak_power_w`` is the highest mean power over windows of the recorded dump period (what gem5 would report at
    those clocks), each cluster running its epochs at its own new pace (:mod:`cosim.dse.peak`), and never below the
    average (energy over runtime): the windows tile the run, and work past it (waits as recorded that outlast it)
    counts in the average.  Clocks are priced by each model's envelope
    (:mod:`cosim.models.envelope`, static power scaled to the cores present); one beyond its band is refused unless
    ``extrapolate``.
    """
    duration = run.duration_s
    ends = np.cumsum(duration)
    finish = {c.name: cluster_finish(c, duration) for c in run.clusters}
    alone = len(run.clusters) == 1
    done = [cluster_done_s(c, duration, alone=alone) for c in run.clusters]
    tail_s = ends[-1] - max(done, default=0.0)  # recorded time after every cluster had finished
    parts = []
    heat = WhatifTemperatures()  # each cluster's die temperature per row, and its flags
    for c in run.clusters:
        f_new = grid[f"{c.name}_freq_mhz"].to_numpy(dtype=float)
        levels, index = np.unique(f_new, return_inverse=True)
        if not extrapolate:
            refuse_beyond_band(c.model, levels, lambda i, c=c, levels=levels: f"--freqs {c.name}={levels[i]:g}", inside="--freqs")
        op = operating_point(c.model, levels)
        last = finish[c.name]
        ratio = c.freq_mhz / levels[:, None]  # (levels, epochs): how much longer a cycle is at f'
        zero = np.zeros(len(duration))
        mem_clk = zero if c.mem_clocked_s is None else c.mem_clocked_s
        wait_clk = zero if c.wait_clocked_s is None else c.wait_clocked_s
        load_fixed = zero if c.load_wait_fixed_s is None else c.load_wait_fixed_s
        fixed = c.mem_s - mem_clk  # memory time on other clocks (memory bus, DRAM)
        # (levels, epochs): time on the cluster's clock scales (core, L2 hits, waits on the L2's own cycles)
        busy = fixed + (c.busy_s - fixed + wait_clk) * ratio
        store_drain = zero if c.store_drain_s is None else c.store_drain_s
        free = busy + store_drain  # the drains as recorded
        if c.store_serial_s is not None:
            # Minor: its store floor bounds the core time and the drains it explains from below; above it, the core
            # cycles outside its store misses scale (the floor's L2 cycles on the clock, the rest fixed)
            floor, floor_clk = c.store_serial_s, c.store_serial_clocked_s
            outside = np.maximum(c.busy_s + store_drain - floor, 0.0)
            busy = np.maximum(c.busy_s * ratio, floor - floor_clk + (floor_clk + outside) * ratio) + wait_clk * ratio
        idle = duration - c.busy_s - wait_clk - store_drain  # the waits off the cluster's clock, as recorded
        # until the cluster finishes: every epoch before its last active one, and in that one its busy time, load
        # waits and store-bound drains (the rest of that epoch is after it finished)
        compute_s = busy[:, : last + 1].sum(axis=1)
        wait_s = float(idle[: max(last, 0)].sum()) + (float(idle[last] if alone else load_fixed[last]) if last >= 0 else 0.0)
        shift_s = runtime_shift_s(
            point=busy,
            free=free,
            on_clock=c.busy_s + wait_clk + store_drain,
            drains=idle - load_fixed + store_drain,
            drain_l2=zero if c.drain_clocked_s is None else c.drain_clocked_s,
            store_l2=zero if c.store_l2_s is None else c.store_l2_s,
            store_on_clock=c.store_on_clock,
            ratio=ratio,
            last=last,
        )
        # gem5 writing more or fewer store lines whole: the core keeps ticking, so its cycles' energy moves too
        whole_line = whole_line_shift_s(c.whole_line_s, ratio=ratio, last=last)
        if f"memory_stats_unread:{c.name}" in c.flags:  # no reading of its memory time
            until = np.where(np.arange(len(duration)) < last, duration, c.busy_s + wait_clk + load_fixed + store_drain)
            whole_line = whole_line + unread_shift_s(until, predicted_s=compute_s + wait_s, ratio=ratio, last=last)
        span = slice(0, last + 1)
        clocked_s = c.busy_s if c.clocked_s is None else c.clocked_s
        clocked_mhz_s = float((clocked_s * c.freq_mhz)[span].sum())  # the recorded clocked cycles [MHz s]
        cycle_w = op.voltage_v**2 * levels * (float(c.cycle_coeff[span].sum()) / clocked_mhz_s if clocked_mhz_s > 0 else 0.0)
        # the cycles counted at f': a core is clocked while it runs, stalls included.  Its clocked time moves by what
        # the new clock does to its time on that clock (core cycles, waits on its L2); its stalls off the clock
        # (memory bus, DRAM) hold their time, and so are more cycles at a higher clock.  Time after it halted is not
        # clocked at any clock.  The busiest CPU's ratio holds for the cluster's (an idle CPU's 0 stays 0).
        recorded = c.busy_s + wait_clk + store_drain  # ``busy`` at the recorded clock (ratio 1)
        moved = np.maximum(clocked_s + busy - recorded, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            cycles = np.where(clocked_s > 0, moved * levels[:, None] / (clocked_s * c.freq_mhz), 1.0)
        dyn_j = (c.dyn_coeff + c.cycle_coeff * cycles) * op.voltage_v[:, None] ** 2
        temperature = whatif_temperature_c(c, levels, op.voltage_v, dyn_j.sum(axis=1), compute_s + wait_s + tail_s, index, heat)
        model_static_w = static_at_w(c.model, levels, op.voltage_v, temperature_c=temperature)  # as operating_point_power_w
        refuse_implausible_clocks(c.name, c.model, levels, op.voltage_v, model_static_w)
        static_w = model_static_w * c.cores_scale
        # the static power's slope in V [W/V], for the model's interval where the voltage is continued above the table
        static_dv = static_form(c.model).dstatic_dv_w_per_v(levels, op.voltage_v, temperature)
        parts.append(
            _ClusterPrediction(
                name=c.name,
                model=c.model,
                runtime_s=compute_s[index] + wait_s,
                dyn_j=dyn_j[index],
                static_w=static_w[index],
                busy_s=busy[index],
                idle_s=idle,
                shift_s=(shift_s + whole_line)[:, index],
                whole_line_s=whole_line[:, index],
                cycle_j=(whole_line * cycle_w)[:, index],
                model_part=(levels, op.voltage_v, op.voltage_u_v, static_w, static_dv * c.cores_scale, index, c.cores_scale, temperature),
            )
        )
    # the run ends with its last cluster, then the recorded time after every cluster had finished
    runtime_s = np.max([p.runtime_s for p in parts], axis=0) + tail_s if parts else np.full(len(grid), ends[-1])
    parts = heat.per_row(parts, runtime_s)  # each row's die temperature at its own mean power over the whole run
    out = grid.copy()
    out["runtime_s"] = runtime_s
    model_half = {}
    for p in parts:
        out[f"{p.name}_runtime_s"] = p.runtime_s
        out[f"{p.name}_energy_j"] = p.dyn_j.sum(axis=1) + p.static_w * runtime_s  # powered until the run ends
        model_half[p.name] = model_half_width_j(p.model, p.model_part, p.dyn_j.sum(axis=1), runtime_s)
    out["energy_j"] = np.sum([out[f"{p.name}_energy_j"] for p in parts], axis=0) if parts else 0.0
    out["avg_power_w"] = out["energy_j"] / out["runtime_s"]
    # each cluster at its own pace, over windows of the recorded dump period: what gem5 would report at those clocks
    peak = peak_power_w(
        runtime_s=runtime_s,
        window_s=dump_period_s(duration),
        epoch_s=[p.busy_s + p.idle_s[None, :] for p in parts],
        dyn_j=[p.dyn_j for p in parts],
        static_w=np.sum([p.static_w for p in parts], axis=0) if parts else np.zeros(len(grid)),
    )
    # the same figure with one dump but for rounding; and where a cluster's work runs past the runtime (its waits
    # as recorded outlast the run), that work falls outside the windows: the average still bounds the peak
    out["peak_power_w"] = np.maximum(peak, out["avg_power_w"])
    out["edp_js"] = out["energy_j"] * out["runtime_s"]
    out = out.assign(**heat.columns)
    # a clock outside the model's trained clocks is priced by its envelope's extrapolation: flagged
    out["extrapolated"] = np.any([outside_clocks(c.model, grid[f"{c.name}_freq_mhz"].to_numpy(dtype=float)) for c in run.clusters], axis=0)
    # the shift of the cluster that ends the run, or another's finish where gem5 writing fewer store lines whole
    # may move it past that; what it costs in static energy, and the cycles the whole-line reading adds or removes
    if parts:
        finishes = np.array([p.runtime_s for p in parts])
        ending = np.argmax(finishes, axis=0)
        shift = np.array([parts[j].shift_s[:, i] for i, j in enumerate(ending)]).T
        later = (finishes + np.array([p.whole_line_s[1] for p in parts])).max(axis=0) - finishes.max(axis=0)
        shift[1] = np.maximum(shift[1], later)
        static = np.sum([p.static_w for p in parts], axis=0)
        cycle_j = np.sum([p.cycle_j for p in parts], axis=0)
    else:
        shift, static, cycle_j = np.zeros((2, len(grid))), np.zeros(len(grid)), np.zeros((2, len(grid)))
    out = add_intervals(run_character(run), out, shift_s=shift, static_w=static, cycle_j=cycle_j)
    out = add_model_interval(out, model_half)
    # the peak's upper end: the power models' own interval (their half-widths over the run, as the energy's) added to
    # it, as kernel-choose caps on; the what-if's own peak error (down to -15.4 % on the workload suite) is not in it
    model_w = np.sum([np.nan_to_num(half, nan=0.0) for half, _ in model_half.values()], axis=0) / runtime_s if model_half else 0.0
    out["peak_power_w_hi"] = out["peak_power_w"] + model_w
    extra = heat.row_flags(np.where(out["extrapolated"].to_numpy(dtype=bool), "extrapolated", ""))
    # a cluster never active above 1 % of an epoch (an idle OS in full-system) has no work: runtime 0, not stretching the run
    run_flags = ";".join([f"never_active:{name}" for name, last in finish.items() if last < 0] + [f for c in run.clusters for f in c.flags])
    run_flags = ";".join(filter(None, [run_flags, *sorted(heat.flags)]))
    out["flags"] = [";".join(sorted({f for f in (*str(a).split(";"), b, *run_flags.split(";")) if f})) for a, b in zip(out["flags"], extra)]
    return out[
        [
            *grid.columns,
            "runtime_s",
            "runtime_s_lo",
            "runtime_s_hi",
            "energy_j",
            "energy_j_lo",
            "energy_j_hi",
            "energy_j_whatif_lo",
            "energy_j_whatif_hi",
            "peak_power_w",
            "peak_power_w_hi",
            "avg_power_w",
            "edp_js",
            "extrapolated",
            *[c for c in out.columns if c.endswith(("_energy_j", "_runtime_s", "_temperature_c")) and c not in ("energy_j", "runtime_s")],
            "flags",
        ]
    ]


class _ClusterPrediction(NamedTuple):
    """One cluster at every grid row: its time until it finishes [s], its energy's parts, its epochs' new busy time
    [s] and recorded idle time [s], the interval's shift of its time [s] and what the model's interval needs."""

    name: str
    model: Model
    runtime_s: np.ndarray  # (rows,)
    dyn_j: np.ndarray  # (rows, epochs)
    static_w: np.ndarray  # (rows,)
    busy_s: np.ndarray  # (rows, epochs)
    idle_s: np.ndarray  # (epochs,)
    shift_s: np.ndarray  # (2, rows): below, above
    whole_line_s: np.ndarray  # (2, rows): the part of shift_s gem5's whole store lines may move
    cycle_j: np.ndarray  # (2, rows): the energy of the cycles the whole-line reading removes or adds [J]
    model_part: tuple


def _cluster_flags(cluster, model: Model, *, unread_stores: bool, unread_memory: bool) -> tuple[str, ...]:
    """A model measured on the other kind of core than the cluster's (in-order, out-of-order): the command warns
    once (:func:`cosim.timeline.core_kind.core_kind_mismatch`), the rows say so; an O3 cluster with store misses whose
    store lines the stats do not count: the interval cannot read gem5 writing them whole (``store_lines_unread``);
    stats cut to fewer than the what-if reads of its memory time (``memory_stats_unread``)."""
    named = {
        "core_kind_mismatch": other_core_kind(cluster, model),
        "memory_stats_unread": unread_memory,
        "store_lines_unread": unread_stores,
        "powered_cores_assumed": powered_cores_assumed(model, cluster.n_cpus),  # the assumed per-core share scales it
    }
    return tuple(f"{flag}:{cluster.name}" for flag, on in named.items() if on)


def _per_miss_s(latency_s: np.ndarray, misses: np.ndarray) -> float:
    """The mean latency of a run's misses [s] (0 without any)."""
    n = float(misses.sum())
    return float(latency_s.sum()) / n if n > 0 else 0.0
