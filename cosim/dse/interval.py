"""The interval on each what-if prediction, and its flags.

The what-if is exact for time that scales with the core clock and for time that does not; its error is in how a
run's memory time splits between the two (overlapping misses, DRAM queueing, gem5 changing its own behaviour between
clocks, as O3 stores that skip the DRAM read at 1800 MHz).  So the error grows with how far the clock moves and with
the share of the run that is memory time.  The interval is that, scaled by the what-if's error on the workload
suite's calibration programs (tests/workloads, ``python tests/whatif_suite.py calibrate``: every ordered pair of 5 of
its programs in every set-up, at a coverage of at least 95 % there) and scored on its other 4 (``table --set test``).  That part is the interval on what the same power model would give on gem5's own
run at those clocks (``energy_j_whatif_lo/hi``); the energy interval adds the model's own error against hardware
(``power_lo_w``/``power_hi_w`` of ``cosim power``: 2 x its standard error of regression, widened above the top
trained clock) in quadrature (:func:`add_model_interval`).

Half-width, relative, per cluster c:   w_c = BASE + SLOPE * |ln(f_c' / f_c)| * (CORE_SHARE + memory share of c)
(BASE wider by SINGLE_DUMP_BASE for a run with one dump) and the row takes the widest cluster's (the run ends with its slowest cluster; its energy is the clusters' sum).
Each side is widened further by the readings one run cannot tell apart (:func:`runtime_shift_s`): a Minor
cluster's drains (idle time that is neither compute nor a load miss) held as recorded instead of its store floor;
those drains overlapping the core time a clock change adds or removes, as in a bandwidth-bound phase, which takes the
same time at any clock (gem5 does this on the bundled phases program: 2.95 ms of drains at 1400 MHz, 1.84 ms at
600); the drains the floor leaves following their store misses' L2 cycles (gem5's se.py with one Minor CPU).
And by an O3 cluster's store misses' L2 cycles, which the what-if puts on the clock (gem5's se.py: its store-miss
latency falls by them as the clock rises) but which DRAM queueing can offset on a memory shared with another
cluster (the suite's big.LITTLE runs: the latency per miss barely moves).  And by gem5 changing how many of an O3
cluster's store lines it writes whole, with no fetch (:func:`whole_line_shift_s`): at a lower clock each line now
written whole may be fetched, at a higher one each line fetched where the epoch writes whole lines may not be, each
at the store misses' L2 latency for the share of cycles the L1D was blocked (all of it from a clock move of a
quarter on); the core keeps ticking meanwhile, so that time is priced in its cycles' energy
too, and it moves the run's end where it carries that cluster past the others.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from cosim.dse.recorded import RecordedRun, cluster_finish
from cosim.models.envelope import interval_flags, interval_half_width_w
from cosim.models.modelfile import Model, operating_point

# set on the workload suite's calibration programs alone (``python tests/whatif_suite.py calibrate --write``; scored
# on its test programs, docs/explanation/whatif.md): runtime and energy, (BASE, SLOPE, CORE_SHARE); and for a run with
# one dump, whose phases are mixed in one set of totals the what-if cannot split, SINGLE_DUMP_BASE more
BANDS_FILE = Path(__file__).with_name("interval_bands.json")


def bands() -> dict:
    """The shipped constants: ``runtime_band``, ``energy_band`` (BASE, SLOPE, CORE_SHARE) and ``single_dump_base``."""
    return json.loads(BANDS_FILE.read_text())


_BANDS = bands()
RUNTIME_BAND: tuple[float, ...] = tuple(_BANDS["runtime_band"])
ENERGY_BAND: tuple[float, ...] = tuple(_BANDS["energy_band"])
SINGLE_DUMP_BASE: float = _BANDS["single_dump_base"]
# a clock move (f'/f or f/f') from which an O3 cluster's store lines may switch all the way (interval's whole-line reading)
_WHOLE_LINE_MOVE = 1.25
# a share of memory time above this: the cluster is memory-bound, where the split of its waits is least certain
_MEMORY_BOUND = 0.5


@dataclass(frozen=True)
class RunCharacter:
    """What the interval reads from a recorded run: per cluster, its share of memory time, its recorded clock [MHz]
    and model; the number of dumps and the DRAM data bus's busy time [s]."""

    memory_share: Mapping[str, float]
    recorded_mhz: Mapping[str, float]
    models: Mapping[str, Model]
    n_dumps: int
    dram_busy_s: float


def run_character(run: RecordedRun) -> RunCharacter:
    """What the interval reads from the run: per cluster, the share of its time until it finished that was memory
    (O3's memory time, Minor's idle waits) and its recorded clock."""
    share, mhz = {}, {}
    for c in run.clusters:
        span = slice(0, cluster_finish(c, run.duration_s) + 1)
        total = float(run.duration_s[span].sum())
        waiting = float(c.mem_s[span].sum() + (run.duration_s - c.busy_s)[span].sum())
        share[c.name] = min(waiting / total, 1.0) if total > 0 else 0.0
        mhz[c.name] = float(np.average(c.freq_mhz, weights=np.maximum(c.busy_s, 1e-30)))
    models = {c.name: c.model for c in run.clusters}
    return RunCharacter(share, mhz, models, len(run.duration_s), run.dram_busy_s)


def relative_half_width(run: RunCharacter, table: pd.DataFrame, band: tuple[float, ...]) -> np.ndarray:
    """The interval's half-width relative to the prediction, per row (the widest cluster's):
    ``BASE + SLOPE * |ln(f'/f)| * (CORE_SHARE + memory share)``, ``SINGLE_DUMP_BASE`` more for a run of one dump."""
    base, slope, core = band
    base += SINGLE_DUMP_BASE if run.n_dumps == 1 else 0.0
    width = np.full(len(table), base)
    for name, share in run.memory_share.items():
        move = np.abs(np.log(table[f"{name}_freq_mhz"].to_numpy(dtype=float) / run.recorded_mhz[name]))
        width = np.maximum(width, base + slope * move * (core + share))
    return width


def runtime_shift_s(
    *,
    point: np.ndarray,
    free: np.ndarray,
    on_clock: np.ndarray,
    drains: np.ndarray,
    drain_l2: np.ndarray,
    store_l2: np.ndarray,
    store_on_clock: bool,
    ratio: np.ndarray,
    last: int,
) -> np.ndarray:
    """(2, levels): how far below and above the predicted time until the cluster finishes [s] (``point``, per level
    and epoch) reach the readings one run cannot tell apart.  Around the drains as recorded (``free``): the drains
    (idle time that is no load wait, per epoch [s]; ``on_clock``: the time recorded on the cluster clock) may overlap the core time the new clock adds or removes, as a
    throughput-bound phase takes the same time at any clock; a Minor cluster's drains its floor leaves may follow
    their store misses' L2 cycles (``drain_l2``; gem5's se.py on stream, one Minor CPU: its store latency less its drains stays
    1.18-1.27 ms from 600 to 1400 MHz).  And an O3 cluster's store misses' L2 cycles (``store_l2``) read the other way round (off
    the clock where the prediction puts them on it: a faster clock, longer; on it where off: shorter)."""
    span = slice(0, last + 1)
    predicted, as_recorded = point[:, span].sum(axis=1), free[:, span].sum(axis=1)
    change = as_recorded - float(on_clock[span].sum())  # what the new clock adds (> 0) or removes
    most = float(drains[span].clip(min=0).sum())
    overlap = np.where(change > 0, -np.minimum(most, change), np.minimum(most, -change))
    follow = as_recorded - (drain_l2[span] * (1.0 - ratio[:, span])).sum(axis=1)
    lo = np.minimum.reduce([as_recorded + np.minimum(overlap, 0), follow, predicted]) - predicted
    hi = np.maximum.reduce([as_recorded + np.maximum(overlap, 0), follow, predicted]) - predicted
    store_shift = (store_l2[span] * (1.0 - ratio[:, span])).sum(axis=1) * (1.0 if store_on_clock else -1.0)
    return np.stack([lo + np.minimum(store_shift, 0), hi + np.maximum(store_shift, 0)])


def unread_shift_s(until_s: np.ndarray, *, predicted_s: np.ndarray, ratio: np.ndarray, last: int) -> np.ndarray:
    """(2, levels): below and above the predicted time until a cluster finishes (``predicted_s`` [s], per level) where
    the stats say nothing of its memory time (``memory_stats_unread``): its recorded time until it finished
    (``until_s``, per epoch [s]) anywhere from not moving to moving with 1/f (``ratio``, (levels, epochs): f / f')."""
    span = slice(0, last + 1)
    fastest = (until_s[span] * np.minimum(ratio[:, span], 1.0)).sum(axis=1)
    slowest = (until_s[span] * np.maximum(ratio[:, span], 1.0)).sum(axis=1)
    return np.stack([np.minimum(fastest - predicted_s, 0.0), np.maximum(slowest - predicted_s, 0.0)])


def whole_line_shift_s(whole_line_s: np.ndarray | None, *, ratio: np.ndarray, last: int) -> np.ndarray:
    """(2, levels): how much shorter and longer [s] an O3 cluster's time until it finishes may be where gem5 writes
    more or fewer of its store lines whole (``whole_line_s``, (2, epochs): longer at a lower clock, shorter at a
    higher one, from :func:`cosim.dse.memory_stats.whole_line_switch_s`); ``ratio`` (levels, epochs): f / f'.
    None (a Minor cluster): zeros."""
    if whole_line_s is None:
        return np.zeros((2, len(ratio)))
    span = slice(0, last + 1)
    # all of it from a move of a quarter on (the suite's clusters crossed gem5's switch from 1400 to 1800 MHz, +29 %),
    # less in proportion below, so the run's own clock (or one a rounding away) gets none
    share = np.clip(np.abs(np.log(ratio[:, span])) / np.log(_WHOLE_LINE_MOVE), 0.0, 1.0)
    longer = (whole_line_s[0, span] * share * (ratio[:, span] > 1)).sum(axis=1)
    shorter = (whole_line_s[1, span] * share * (ratio[:, span] < 1)).sum(axis=1)
    return np.stack([-shorter, longer])


def add_intervals(
    run: RunCharacter, table: pd.DataFrame, *, shift_s: np.ndarray, static_w: np.ndarray, cycle_j: np.ndarray
) -> pd.DataFrame:
    """``runtime_s_lo/hi``, ``energy_j_lo/hi`` and ``flags`` on every row of a what-if table.

    ``shift_s`` (2, rows): below (<= 0) and above (>= 0) [s], widens each side of the runtime by what the run's
    statistics cannot settle (:func:`runtime_shift_s`: a Minor cluster's drains read three ways, an O3 cluster's
    store misses' L2 cycles two; :func:`whole_line_shift_s`), as far as it moves the run's end; ``static_w`` [W]
    prices that time in static energy, and ``cycle_j`` (2, rows) [J] is the energy of the cycles an O3 cluster's
    shifted time removes or adds."""
    out = table.copy()
    w_t = relative_half_width(run, table, RUNTIME_BAND)
    w_e = relative_half_width(run, table, ENERGY_BAND)
    runtime, energy = out["runtime_s"].to_numpy(), out["energy_j"].to_numpy()
    out["runtime_s_lo"] = runtime * (1 - w_t) + shift_s[0]
    out["runtime_s_hi"] = runtime * (1 + w_t) + shift_s[1]
    out["energy_j_lo"] = energy * (1 - w_e) + shift_s[0] * static_w + np.minimum(cycle_j[0], 0.0)
    out["energy_j_hi"] = energy * (1 + w_e) + shift_s[1] * static_w + np.maximum(cycle_j[1], 0.0)
    out["flags"] = row_flags(run, table)
    return out


def model_half_width_j(model, part: tuple, dyn_j: np.ndarray, runtime_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The power model's own interval on one cluster's energy at each row [J], and the rows where it is the
    extrapolation's part alone: its power interval (2 x SER, widened above the top trained clock,
    :func:`cosim.models.envelope.interval_half_width_w`) over the new runtime, as its bias holds epoch after epoch."""
    levels, voltage_v, voltage_u_v, static_w, static_dv, index = part[:6]
    scale = part[6] if len(part) > 6 else 1.0  # the cores present: the assumed per-core share widens the interval
    f, v = levels[index], voltage_v[index]
    # the die temperature its static power is priced at (None: the curve's), per clock level or one for all
    heat = part[7] if len(part) > 7 else None
    temperature = None if heat is None else np.broadcast_to(np.asarray(heat, dtype=float), np.shape(levels))[index]
    power_w = dyn_j / runtime_s + static_w[index]
    slope_w_per_v = 2.0 * dyn_j / runtime_s / v + static_dv[index]  # dynamic power goes with V^2
    u = np.zeros(len(index)) if voltage_u_v is None else np.asarray(voltage_u_v)[index]
    half_w = interval_half_width_w(
        model,
        freq_mhz=f,
        power_w=power_w,
        dpower_dv_w_per_v=slope_w_per_v,
        voltage_u_v=u,
        voltage_v=v,
        static_scale=scale,
        temperature_c=temperature,
    )
    return half_w * runtime_s, interval_flags(model, f)


def add_model_interval(table: pd.DataFrame, model_half_j: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> pd.DataFrame:
    """Widen the energy interval by the power model's own (``model_half_j``: per cluster, its half-width [J] and the
    rows where that is the extrapolation's part alone).

    The what-if's part (``energy_j_lo/hi`` from :func:`add_intervals`, what gem5 itself would give under the same
    model: kept as ``energy_j_whatif_lo/hi``, the part the workload suite checks) and the model's error against
    hardware are independent, so they add in quadrature; the clusters' model parts add linearly (models fitted the
    same way err the same way).  A model with no SER has no interval inside its trained clocks: the row keeps the
    what-if's part and is flagged ``interval_whatif_only:<cluster>``; above them, ``interval_extrapolation_only:<cluster>``.
    """
    out = table.copy()
    energy = out["energy_j"].to_numpy()
    out["energy_j_whatif_lo"], out["energy_j_whatif_hi"] = out["energy_j_lo"], out["energy_j_hi"]
    model_j = np.zeros(len(out))
    flags = [[f] if f else [] for f in out["flags"]]
    for name, (half_j, extrapolation_only) in model_half_j.items():
        known = np.isfinite(half_j)
        model_j += np.where(known, half_j, 0.0)
        for row in np.flatnonzero(~known).tolist():
            flags[row].append(f"interval_whatif_only:{name}")
        for row in np.flatnonzero(extrapolation_only).tolist():
            flags[row].append(f"interval_extrapolation_only:{name}")
    below = energy - out["energy_j_whatif_lo"].to_numpy()
    above = out["energy_j_whatif_hi"].to_numpy() - energy
    out["energy_j_lo"] = np.maximum(energy - np.hypot(below, model_j), 0.0)  # energy is never negative
    out["energy_j_hi"] = energy + np.hypot(above, model_j)
    out["flags"] = [";".join(f) for f in flags]
    return out


def row_flags(run: RunCharacter, table: pd.DataFrame) -> list[str]:
    """Why a row is less certain: one dump (phases mixed), a memory-bound cluster, a clock or voltage outside the
    model's training range or V-f table, and the DRAM near saturation."""
    common = []
    if run.n_dumps == 1:
        common.append("single_dump")
    common += [f"memory_bound:{name}" for name, share in run.memory_share.items() if share > _MEMORY_BOUND]
    per_row = [list(common) for _ in range(len(table))]
    for name, model in run.models.items():
        op = operating_point(model, table[f"{name}_freq_mhz"].to_numpy(dtype=float))
        for i in range(len(table)):
            if op.freq_outside_training[i]:
                per_row[i].append(f"freq_outside_training:{name}")
            if op.voltage_not_in_table[i]:
                per_row[i].append(f"voltage_not_in_vf_table:{name}")
            if op.voltage_outside_training[i]:  # as cosim power flags it: the voltage, not only the clock
                per_row[i].append(f"voltage_outside_training:{name}")
    busy = run.dram_busy_s / table["runtime_s"].to_numpy() if run.dram_busy_s > 0 else np.zeros(len(table))
    for row in np.flatnonzero(busy > 0.8).tolist():
        per_row[row].append("dram_near_saturation")
    return [";".join(f) for f in per_row]
