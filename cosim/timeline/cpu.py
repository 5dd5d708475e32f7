"""Per-epoch, per-cluster power and energy timeline from a gem5 run.

One row per (epoch, cluster): operating point, dynamic/static/total power [W],
a +-2*SER prediction interval where the model has an SER, energy [J], each
dynamic term's power [W], the model inputs, and flags for everything that was
substituted or extrapolated.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from cosim import columns as cols
from cosim.counters.pmc import event_rates
from cosim.errors import CosimError, CosimWarning
from cosim.models.envelope import (
    cores_factor,
    interval_half_width_w,
    operating_point_power_w,
    powered_cores_assumed,
    refuse_beyond_band,
    temperature_flags,
    voltage_off_curve,
)
from cosim.models.modelfile import operating_point
from cosim.models.plausibility import implausible_reasons, refuse_implausible
from cosim.models.static_form import static_form
from cosim.models.voltage import voltage_under_load
from cosim.readers.gem5_config import Cluster, Gem5Config
from cosim.readers.stats_table import StatsMeta
from cosim.timeline.clock_change import clock_change
from cosim.timeline.clusters import ClusterSpec, frequency_mhz, resolve_cluster
from cosim.timeline.core_kind import core_kind_mismatch, other_kind_epochs
from cosim.timeline.cpu_flags import flag_cumulative, flag_text, warn_clock_change, warn_wake_credit
from cosim.timeline.cycles import checked_cycles, idle_cpus, powered_cores
from cosim.timeline.model_checks import check_cpu_types, check_operating_point
from cosim.timeline.temperature import loop_flags, loop_for, run_temperature_c, warn_temperature_not_settled
from cosim.timeline.trust import cluster_flags, isa_flags, refuse_rates, refuse_unpriceable
from cosim.timeline.wake import credited_eph, wake_credit

if TYPE_CHECKING:
    import pandas as pd

    from cosim.readers.stats_table import StatsLike


def power_timeline(
    stats: StatsLike,
    config: Gem5Config,
    clusters: Sequence[ClusterSpec],
    *,
    strict: bool = False,
    any_isa: bool = False,
    keep_implausible: bool = False,
    extrapolate: bool = False,
    model_option: str = "--model",
) -> pd.DataFrame:
    """Power and energy per epoch and cluster.

    Parameters
    ----------
    stats
        :func:`cosim.read_stats` output.
    config
        :func:`cosim.read_config` output for the same run.
    clusters
        One :class:`ClusterSpec` per CPU cluster to price.
    strict
        Refuse (:class:`CosimError`) an epoch whose frequency is not in the
        model's V-f table or outside its training range, instead of flagging it.
    any_isa
        Price a run of another ISA than the model's (rows flagged ``isa_mismatch``).
    keep_implausible
        Keep physically implausible rows (negative or impossible power, event
        rates no core reaches, static power extrapolated the wrong way), flagged
        ``implausible`` with the reason and the values computed, instead of refusing the run.
    extrapolate
        Price clocks beyond the model's extrapolation band (:mod:`cosim.models.envelope`) instead of refusing them.
    model_option
        How the calling command gives another model (``--model``; ``cosim soc``'s ``--cpu-model``), for refusals.

    Returns
    -------
    Long DataFrame, one row per (epoch, cluster); columns documented in README.md.
    """
    table = timeline_columns(
        stats,
        config,
        clusters,
        strict=strict,
        any_isa=any_isa,
        keep_implausible=keep_implausible,
        extrapolate=extrapolate,
        model_option=model_option,
    )
    return cols.to_frame(table, stats.attrs)


#: how an implausible epoch's refusal starts its ways out (cosim explore replaces them with a study's own)
IMPLAUSIBLE_WAYS_OUT = "price it where the model was trained (cosim whatif --freqs"


def timeline_columns(
    stats: StatsLike,
    config: Gem5Config,
    clusters: Sequence[ClusterSpec],
    *,
    strict: bool = False,
    any_isa: bool = False,
    keep_implausible: bool = False,
    extrapolate: bool = False,
    model_option: str = "--model",
) -> cols.Columns:
    """:func:`power_timeline` as numpy columns (no pandas): the same rows, in the same order."""
    meta: StatsMeta = stats.attrs["gem5"]
    if not clusters:
        raise CosimError(f"{config.path}: no cluster to price; name one with --cluster NAME=PATH")
    # the one trust check every pricing command calls (cosim.timeline.trust): every reason at once, then the ISA
    clock = lambda s: frequency_mhz(stats, resolve_cluster(config, s, meta.ticks_per_s))  # noqa: E731  # read only if needed
    refuse_unpriceable(meta.path, config, clusters, clock, any_isa=any_isa, extrapolate=extrapolate)
    extra = isa_flags(config, [spec.model for spec in clusters], any_isa=any_isa)
    check_cpu_types(config, clusters, meta.path)
    parts = []
    for spec in clusters:
        cluster = resolve_cluster(config, spec, meta.ticks_per_s)
        other = core_kind_mismatch(cluster, spec.model)
        kind = ["core_kind_mismatch"] if other else []
        part = _cluster_timeline(stats, meta, cluster, spec, strict, (keep_implausible, extrapolate, model_option), extra + kind)
        for i in np.flatnonzero(~other_kind_epochs(stats, cluster, other)) if other else ():  # the model's own kind ran it
            part["flags"][i] = ";".join(f for f in part["flags"][i].split(";") if f != "core_kind_mismatch")
        parts.append(part)
    # every part has the same epochs in order: taking their rows in turn, clusters by name,
    # sorts the table by epoch, then cluster name (stable)
    for part in parts:
        flag_cumulative(part, getattr(meta, "cumulative_dumps", []))
    order = sorted(range(len(parts)), key=lambda i: clusters[i].name)
    return cols.interleave([parts[i] for i in order])


def _cluster_timeline(
    stats: StatsLike,
    meta: StatsMeta,
    cluster: Cluster,
    spec: ClusterSpec,
    strict: bool,
    trust: tuple[bool, bool, str],
    extra_flags: list[str],
) -> cols.Columns:
    keep, extrapolate, model_option = trust  # model_option: how the command names another model, for its refusals
    model = spec.model
    freq = frequency_mhz(stats, cluster)
    duration = np.asarray(stats["duration_s"])
    change = clock_change(stats, cluster, freq_mhz=freq, duration_s=duration)
    if not keep:  # a change that cannot be placed has its own way out
        refuse_implausible(
            change.reasons,
            lambda i: f"{meta.path}: epoch {np.asarray(stats['epoch'])[i]}, cluster '{cluster.name}'",
            "dump the stats at each clock change in gem5 (m5.stats.dump() where the clock is set)",
            unit="epoch",
        )
    share = change.share_before  # of each epoch's time at the clock before a change inside it (0: none)
    ticked_mhz = freq * (1 - share) + change.before_mhz * share  # the clock's mean over the epoch: cycles per us
    rates = event_rates(
        stats,
        cluster,
        model.events,
        generation=meta.generation,
        cores_per_cluster=model.cores_per_cluster,
        freq_mhz=ticked_mhz,  # events per cycle the clock ticked: the same rate at both clocks of a split epoch
    )
    # a count holding cycles slept before the epoch: priced at the middle of what the stats allow (interval below)
    credit = wake_credit(stats, cluster, freq_mhz=ticked_mhz, duration_s=duration)
    credited = credit.flagged & ("0x11" in rates.eph)
    if credited.any():
        eph_lo, rates.eph["0x11"], eph_hi = credited_eph(
            rates.eph["0x11"], credit, cores_per_cluster=model.cores_per_cluster, duration_s=duration, freq_mhz=ticked_mhz
        )
    # an epoch split by a clock change is priced at both operating points, each for its share of the epoch
    points = [(freq, 1 - share)] + ([(change.before_mhz, share)] if change.split.any() else [])
    ops = [
        (f, w, operating_point(model, f, spec.voltage_v if not spec.voltage_model else voltage_under_load(model, f, rates.eph)))
        for f, w in points
    ]
    op = ops[0][2]
    epochs = np.asarray(stats["epoch"])
    for f, _, o in ops:
        if strict:
            check_operating_point(cluster, model, f, o, spec, strict)
    # per-core static parts follow the cores powered, shared ones do not (dynamic already sums the present cores)
    powered = powered_cores(stats, cluster, spec.powered_cores, path=meta.path)
    scale = cores_factor(model, powered)
    weights = [w for _, w, _ in ops]  # each operating point's share of the epoch

    def price(temperature_c, eph=None, *, interval: bool = True):
        return [
            operating_point_power_w(
                model,
                eph=rates.eph if eph is None else eph,
                freq_mhz=f,
                voltage_v=o.voltage_v,
                temperature_c=temperature_c,
                static_scale=scale,
                interval=interval,
            )
            for f, _, o in ops
        ]

    def power_alone_w(temperature_c, eph=None):
        """Each epoch's power alone [W], its operating points mixed (no interval parts: the leakage loop's rounds, the
        wake credit's two ends)."""
        return _mix([p["power_w"] for p in price(temperature_c, eph, interval=False)], weights)

    # the die temperature: stated (--temperature), or the one the run's own power produces (the leakage loop)
    loop = loop_for(model, temperature_c=spec.temperature_c, ambient_c=spec.ambient_c, start_c=spec.start_temperature_c)
    has_loop = loop is not None
    temperature: float | np.ndarray | None = spec.temperature_c
    if loop is not None:
        temperature = run_temperature_c(loop, power_alone_w, duration)
        if temperature is None:  # a leakage runaway (a clock far beyond the model's band): priced as fitted, flagged
            warn_temperature_not_settled(cluster.name, model.name)
            loop = None
    parts = price(temperature)
    power = {k: _mix([p[k] for p in parts], weights) for k in parts[0] if k not in ("dpower_dv_w_per_v", "off_curve_half_width_w")}
    missing = ~np.isfinite(power["power_w"])  # nan or inf in the stats: no value, not a huge one
    for values in power.values():
        values[missing] = np.nan
    rows = len(duration)
    out: cols.Columns = {
        "epoch": np.asarray(stats["epoch"]),
        "cluster": np.full(rows, cluster.name, dtype=object),
        "model": np.full(rows, model.name, dtype=object),
        "start_s": np.asarray(stats["start_tick"]) / meta.ticks_per_s,
        "end_s": np.asarray(stats["end_tick"]) / meta.ticks_per_s,
        "duration_s": duration,
        "n_cpus": np.full(rows, cluster.n_cpus, dtype=np.int64),
        "powered_cores": np.full(rows, powered, dtype=np.int64),
        "freq_mhz": ticked_mhz,
        "voltage_v": _mix([o.voltage_v for _, _, o in ops], weights),
        "power_w": power["power_w"],
        "dynamic_w": power["dynamic_w"],
        "static_w": power["static_w"],
        # the die temperature priced at [°C]: predicted, stated, or the training board's along the curve (nan: none)
        "temperature_c": _temperature_column(model, temperature, ticked_mhz, rows),
    }
    halves = []
    for (f, _, o), p in zip(ops, parts):
        v_u = o.voltage_u_v if spec.voltage_v is None and o.voltage_u_v is not None else np.zeros(rows)
        halves.append(
            interval_half_width_w(
                model,
                freq_mhz=f,
                power_w=p["power_w"],
                dpower_dv_w_per_v=p["dpower_dv_w_per_v"],
                voltage_u_v=v_u,
                voltage_v=o.voltage_v,
                static_scale=scale,
                temperature_c=temperature,  # the per-core share's spread of the static power this row carries
            )
        )
    half = _mix(halves, weights)
    lo_w, hi_w = out["power_w"] - half, out["power_w"] + half
    if credited.any():  # the interval covers both ends of the cycles the stats allow (a model with no SER: those alone)
        known = np.nan_to_num(half)
        for eph in (eph_lo, eph_hi):
            at = power_alone_w(temperature, {**rates.eph, "0x11": eph})
            lo_w = np.where(credited, np.fmin(lo_w, at - known), lo_w)
            hi_w = np.where(credited, np.fmax(hi_w, at + known), hi_w)
    out["power_lo_w"] = np.maximum(lo_w, 0.0)  # power is never negative
    out["power_hi_w"] = hi_w
    out["energy_j"] = out["power_w"] * duration
    for key, values in power.items():
        if key.startswith("term_"):
            out[key] = values
    for event in model.events:
        out[f"eph_{event}"] = rates.eph[event]
    nan_input = np.isnan(out["power_w"])
    if not keep:  # a rate per cycle holds at every clock: no what-if is a way out (cosim.timeline.trust)
        refuse_rates(
            model,
            rates.eph,
            lambda i: f"{meta.path}: epoch {epochs[i]}, cluster '{cluster.name}' ({model.name})",
            ways_out=f"price it with another {model_option} (or fit one with cosim fit), or write these rows flagged with --keep-implausible",
        )
    reasons = change.reasons.copy()
    for (f, w, o), p in zip(ops, parts):
        judged = implausible_reasons(
            model,
            power_w=p["power_w"],
            static_w=p["static_w"] / scale,  # the model's own curve, before the core count scales it
            freq_mhz=f,
            voltage_v=o.voltage_v,
            eph=rates.eph,
            n_cpus=cluster.n_cpus,
            static_scale=scale,
        )
        reasons = np.where((reasons == "") & (w > 0), judged, reasons)
        if not extrapolate:  # --extrapolate is offered only where its price would be written (#46)
            refuse_beyond_band(
                model,
                f,
                lambda i: f"{meta.path}: epoch {epochs[i]}, cluster '{cluster.name}'",
                other_model=f"another {model_option} (or one fitted with cosim fit)",
                extrapolated_refusal=lambda i, judged=judged: judged[i],
            )
    cycles = checked_cycles(stats, cluster, freq_mhz=ticked_mhz, duration_s=duration, keep=keep, path=meta.path)
    reasons = np.where(cycles != "", cycles, reasons)
    bad = reasons != ""
    if not keep:
        refuse_implausible(
            reasons,
            lambda i: f"{meta.path}: epoch {out['epoch'][i]}, cluster '{cluster.name}' ({model.name})",
            f"{IMPLAUSIBLE_WAYS_OUT}, or another {model_option})",
            unit="epoch",
        )
    if not strict:
        for f, _, o in ops:
            check_operating_point(cluster, model, f, o, spec, strict)  # warn only once the rows are kept
    warn_clock_change(change, epochs, cluster, freq)
    out["implausible"] = bad
    out["implausible_reason"] = reasons
    # a split epoch carries the flags of both its operating points
    used = [(f, w > 0, o) for f, w, o in ops]
    op = dataclasses.replace(
        op,
        freq_outside_training=np.any([u & o.freq_outside_training for _, u, o in used], axis=0),
        voltage_outside_training=np.any([u & o.voltage_outside_training for _, u, o in used], axis=0),
        voltage_not_in_table=np.any([u & o.voltage_not_in_table for _, u, o in used], axis=0),
    )
    off_curve = np.any([u & voltage_off_curve(model, f, o.voltage_v) for f, u, o in used], axis=0)
    out["extrapolated"] = op.freq_outside_training | op.voltage_outside_training | off_curve
    out["cores_scaled"] = np.full(rows, scale)
    out["model_cores"] = np.full(rows, model.cores_per_cluster, dtype=np.int64)
    out["freq_x_top_clock"] = freq / model.train_freq_mhz[1]
    for event in sorted(rates.substitutes):
        out[f"subst_{event}"] = np.ones(rows, dtype=bool)
    subst = {e: why for e, why in rates.substitutes.items() if e not in rates.missing}
    missing = [f"missing_term:{e}" for e in sorted(rates.missing)]  # input 0 always: not a mild substitution
    # a CPU that never ran is an idle core (static power, no activity); stats gem5 never printed for a CPU that ran
    # (a cache that never missed) count 0
    idle = idle_cpus(stats, cluster)
    missing += cluster_flags(stats, cluster, model)  # idle_cpu:*, more_cpus_than_model, model_default:*
    missing += [f"absent_zero:{e}" for e, by in sorted(rates.absent.items()) if set(by) - set(idle) and e not in rates.missing]
    top = np.maximum(freq, change.before_mhz)  # a split epoch is extrapolated where either of its clocks is
    out["flags"] = np.array(flag_text(op, subst, nan_input, bad, model, cluster, extra_flags + missing, top), dtype=object)
    for i in np.flatnonzero(credited):
        out["flags"][i] = ";".join(filter(None, [out["flags"][i], "wake_credit"]))
    if powered_cores_assumed(model, powered):  # static power scaled by the assumed per-core share (issue 50)
        out["flags"] = np.array([";".join(filter(None, [f, "powered_cores_assumed"])) for f in out["flags"]], dtype=object)
    warn_wake_credit(credit, credited, epochs, cluster)
    for i in np.flatnonzero(off_curve):  # a voltage off the model's V-f curve: priced by its static form, widened
        out["flags"][i] = ";".join(filter(None, [out["flags"][i], "voltage_off_curve"]))
    heat = temperature_flags(model, temperature, rows)
    extra_heat = ";".join(loop_flags(loop)) or (
        ("temperature_not_settled" if has_loop else "temperature_not_predicted")  # no thermal constants for its cluster
        if spec.temperature_c is None and static_form(model).trained_temperature_c is not None
        else ""
    )
    out["flags"] = np.array([";".join(filter(None, [f, h, extra_heat])) for f, h in zip(out["flags"], heat)], dtype=object)
    for i in np.flatnonzero(change.split | change.unplaced):
        out["flags"][i] = ";".join(filter(None, [out["flags"][i], "clock_change_split" if change.split[i] else "clock_change_unplaced"]))
    if nan_input.any():
        where = ", ".join(str(e) for e in out["epoch"][nan_input][:5])
        warnings.warn(
            CosimWarning(
                f"cluster '{cluster.name}': nan in the stats of epoch(s) {where}; those epochs have no power value (flag nan_input)"
            ),
            stacklevel=3,
        )
    return out


def _mix(values: list[np.ndarray], weights: list[np.ndarray]) -> np.ndarray:
    """Per epoch, the operating points' values weighted by their shares of it (a part with no share adds nothing, nan
    included)."""
    return np.asarray(sum(np.where(w > 0, w * v, 0.0) for v, w in zip(values, weights)), dtype=float)


def _temperature_column(model, temperature, freq_mhz: np.ndarray, rows: int) -> np.ndarray:
    """The die temperature [°C] each row is priced at: the given or predicted one, else the model's training board's
    at the row's clock (nan for a model that states none)."""
    if temperature is not None:
        return np.broadcast_to(np.asarray(temperature, dtype=float), rows).copy()

    return np.asarray(static_form(model).curve_temperature(freq_mhz), dtype=float)
