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
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from cosim import columns as cols
from cosim.counters.pmc import event_rates, stats_for
from cosim.errors import CosimError, CosimWarning
from cosim.models.envelope import (
    above_top,
    cores_factor,
    envelope_power_w,
    interval_flags,
    interval_half_width_w,
    refuse_beyond_band,
)
from cosim.models.modelfile import Model, operating_point
from cosim.models.plausibility import blank_implausible, implausible_reasons, refuse_implausible
from cosim.models.voltage import voltage_under_load
from cosim.readers.gem5_config import Cluster, Gem5Config
from cosim.readers.stats_table import StatsMeta
from cosim.timeline.cycles import checked_cycles, cycle_stats, idle_cpus, powered_cores

if TYPE_CHECKING:
    import pandas as pd

    from cosim.readers.stats_table import StatsLike


@dataclass(frozen=True)
class ClusterSpec:
    """Which CPUs form a cluster and which model prices them."""

    name: str
    path: str | None  # CPU path prefix in the config (``system.bigCluster``); None: the clock-domain cluster `name`
    model: Model
    voltage_v: float | None = None  # user-supplied voltage [V]; None: the model's V-f table
    voltage_model: bool = False  # voltage under load from the model's voltage model (Walker Section VIII)
    # cores the physical cluster powers where the run simulates fewer (its static power); None: the CPUs simulated
    powered_cores: int | None = None


def resolve_cluster(config: Gem5Config, spec: ClusterSpec, ticks_per_s: float) -> Cluster:
    """The config's :class:`Cluster` for ``spec``, with frequencies at the run's tick rate."""
    if spec.path is not None:
        cluster = config.cluster(spec.name, spec.path)
    else:
        auto = config.clusters()
        if spec.name not in auto:
            raise CosimError(
                f"{config.path}: no cluster '{spec.name}'; clusters by clock domain: {', '.join(auto) or 'none'} "
                "(or name CPUs with --cluster NAME=PATH)"
            )
        cluster = auto[spec.name]
    return dataclasses.replace(cluster, ticks_per_s=ticks_per_s)


def stats_needed(config: Gem5Config, specs: Sequence[ClusterSpec]) -> set[str]:
    """The stat names the clusters' models read: give them to ``read_stats(stats=...)`` to parse nothing else."""
    wanted: set[str] = set()
    for spec in specs:
        cluster = resolve_cluster(config, spec, config.ticks_per_s)
        wanted |= stats_for(cluster, spec.model.events) | cycle_stats(cluster)
    return wanted


# With no --model, the most detailed CPU kind in a cluster picks the model: one whose every event gem5
# counts.  cortex-a15-walker2017 needs 0x6a, which gem5 cannot count (docs/explanation/methodology.md,
# "Default models": no measured data shows it more accurate than cortex-a15-gemstone2018 with that term at 0).
DEFAULT_MODELS = {
    "o3": "cortex-a15-gemstone2018",
    "minor": "cortex-a7-gemstone2018",
    "inorder": "cortex-a7-gemstone2018",
    "simple": "cortex-a7-gemstone2018",
}
_DETAIL = ("o3", "minor", "inorder", "simple")


def default_model(cluster: Cluster) -> tuple[str, str]:
    """The shipped model for ``cluster``'s CPUs and why: out-of-order -> Cortex-A15, in-order -> Cortex-A7."""
    kinds = {cluster.kind(c) for c in cluster.cpus}
    kind = next((k for k in _DETAIL if k in kinds), None)
    if kind is None:
        types = ", ".join(sorted(set(cluster.cpu_types.values()))) or "unknown"
        raise CosimError(f"cluster '{cluster.name}': no shipped model fits its CPU type(s) {types}; give --model")
    words = "out-of-order" if kind == "o3" else "in-order"
    types = ", ".join(sorted({t for c, t in cluster.cpu_types.items() if cluster.kind(c) == kind}))
    return DEFAULT_MODELS[kind], f"{cluster.n_cpus} x {types} ({words})"


def other_core_kind(cluster: Cluster, model: Model) -> str | None:
    """The kind of ``cluster``'s CPUs (``in-order``, ``out-of-order``) where ``model`` was measured on the other
    kind; None when they match, the model states no ``core_kind``, or the CPUs are of neither kind.

    O3 is out-of-order; Minor and the simple CPUs are in-order (the kinds :data:`DEFAULT_MODELS` follows).
    """
    kinds = {"out-of-order" if cluster.kind(c) == "o3" else "in-order" for c in cluster.cores if cluster.kind(c) in _DETAIL}
    if model.core_kind is None or not kinds or kinds == {model.core_kind}:
        return None
    (kind,) = kinds - {model.core_kind} if len(kinds) > 1 else kinds
    return kind


def core_kind_mismatch(cluster: Cluster, model: Model) -> bool:
    """Warn when ``model`` was measured on the other kind of core than ``cluster``'s CPUs (:func:`other_core_kind`);
    True: flag its rows."""
    kind = other_core_kind(cluster, model)
    if kind is None:
        return False
    types = ", ".join(sorted({cluster.cpu_types[c] for c in cluster.cores if c in cluster.cpu_types}))
    ours = DEFAULT_MODELS["o3" if kind == "out-of-order" else "minor"]
    warnings.warn(
        CosimWarning(
            f"cluster '{cluster.name}': its CPUs are {kind} ({types}) but {model.name} was measured on {model.core_kind} cores, "
            f"so its power is the other kind's; price it with a model of {kind} cores ({ours}: one --model per --cluster, in order); "
            "rows flagged core_kind_mismatch"
        ),
        stacklevel=4,
    )
    return True


def check_isa(config: Gem5Config, models: Sequence[Model], *, any_isa: bool = False) -> bool:
    """Refuse models trained on another ISA than the run's; True when rows must carry ``isa_mismatch``.

    The run's ISA comes from its config (ISA, TLB, MMU or System objects).  A
    config that names none cannot be checked: a warning says so.
    """
    isa = config.isa
    mismatch = False
    for model in models:
        if isa is None:
            warnings.warn(
                CosimWarning(
                    f"{config.path}: no ISA, TLB, MMU or System object names the run's ISA, so "
                    f"{model.name} ({model.isa}) is applied unchecked; rows are flagged isa_unknown"
                ),
                stacklevel=3,
            )
        elif isa != model.isa:
            if not any_isa:
                raise CosimError(
                    f"{config.path}: the run is {isa.upper()} but {model.name} was trained on {model.isa.upper()} cores, "
                    f"so its number would mean nothing; pass --any-isa to price it anyway (every row flagged isa_mismatch)"
                )
            mismatch = True
    return mismatch


def power_timeline(
    stats: StatsLike,
    config: Gem5Config,
    clusters: Sequence[ClusterSpec],
    *,
    strict: bool = False,
    any_isa: bool = False,
    keep_implausible: bool = False,
    extrapolate: bool = False,
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
        ``implausible`` with the reason and no power value, instead of refusing the run.
    extrapolate
        Price clocks beyond the model's extrapolation band (:mod:`cosim.models.envelope`) instead of refusing them.

    Returns
    -------
    Long DataFrame, one row per (epoch, cluster); columns documented in README.md.
    """
    table = timeline_columns(
        stats, config, clusters, strict=strict, any_isa=any_isa, keep_implausible=keep_implausible, extrapolate=extrapolate
    )
    return cols.to_frame(table, stats.attrs)


#: Stat groups only one kind of gem5 CPU writes: O3's reorder buffer, issue/execute and rename stages; Minor's fetch2
_KIND_GROUPS = {"o3": frozenset({"rob", "iew", "rename"}), "minor": frozenset({"fetch2"}), "simple": frozenset()}
_KIND_NAMES = {"o3": "out-of-order (O3)", "minor": "in-order Minor"}


def check_cpu_types(config: Gem5Config, clusters: Sequence[ClusterSpec], stats_path: str) -> None:
    """Refuse a config whose CPU types contradict the stats: Minor-only statistics under an O3 CPU, or the reverse.

    A model priced on the wrong kind of CPU reads the wrong stats (and defaults to the wrong model).
    """
    from pathlib import Path

    from cosim.readers.gem5_stats import cpu_stat_groups

    if not Path(stats_path).is_file():
        return
    groups = cpu_stat_groups(stats_path)
    for spec in clusters:
        cluster = resolve_cluster(config, spec, config.ticks_per_s)
        for cpu in cluster.cores:
            kind, found = cluster.kind(cpu), groups.get(cpu, set())
            if kind not in _KIND_GROUPS or not found or found & _KIND_GROUPS[kind]:
                continue
            written_by = "o3" if found & _KIND_GROUPS["o3"] else "minor"
            raise CosimError(
                f"{stats_path}: {cpu} has {_KIND_NAMES[written_by]} statistics ({', '.join(f'{g}.*' for g in sorted(found))}) but "
                f"{config.path} says it is a {cluster.cpu_types.get(cpu)}; are they from the same run? Give this run's config with --config"
            )


def timeline_columns(
    stats: StatsLike,
    config: Gem5Config,
    clusters: Sequence[ClusterSpec],
    *,
    strict: bool = False,
    any_isa: bool = False,
    keep_implausible: bool = False,
    extrapolate: bool = False,
) -> cols.Columns:
    """:func:`power_timeline` as numpy columns (no pandas): the same rows, in the same order."""
    meta: StatsMeta = stats.attrs["gem5"]
    if not clusters:
        raise CosimError(f"{config.path}: no cluster to price; name one with --cluster NAME=PATH")
    mismatch = check_isa(config, [spec.model for spec in clusters], any_isa=any_isa)
    check_cpu_types(config, clusters, meta.path)
    extra = ["isa_mismatch"] if mismatch else (["isa_unknown"] if config.isa is None else [])
    parts = []
    for spec in clusters:
        cluster = resolve_cluster(config, spec, meta.ticks_per_s)
        kind = ["core_kind_mismatch"] if core_kind_mismatch(cluster, spec.model) else []
        parts.append(_cluster_timeline(stats, meta, cluster, spec, strict, (keep_implausible, extrapolate), extra + kind))
    # every part has the same epochs in order: taking their rows in turn, clusters by name,
    # sorts the table by epoch, then cluster name (stable)
    for part in parts:
        _flag_cumulative(part, getattr(meta, "cumulative_dumps", []))
    order = sorted(range(len(parts)), key=lambda i: clusters[i].name)
    return cols.interleave([parts[i] for i in order])


def _cluster_timeline(
    stats: StatsLike, meta: StatsMeta, cluster: Cluster, spec: ClusterSpec, strict: bool, trust: tuple[bool, bool], extra_flags: list[str]
) -> cols.Columns:
    keep, extrapolate = trust
    model = spec.model
    freq = frequency_mhz(stats, cluster)
    rates = event_rates(
        stats,
        cluster,
        model.events,
        generation=meta.generation,
        cores_per_cluster=model.cores_per_cluster,
        freq_mhz=freq,
    )
    voltage = spec.voltage_v if not spec.voltage_model else voltage_under_load(model, freq, rates.eph)
    op = operating_point(model, freq, voltage)
    if strict:
        _check_operating_point(cluster, model, freq, op, spec, strict)
    if not extrapolate:
        refuse_beyond_band(model, freq, lambda i: f"{meta.path}: epoch {np.asarray(stats['epoch'])[i]}, cluster '{cluster.name}'")
    # per-core static parts follow the cores powered, shared ones do not (dynamic already sums the present cores)
    powered = powered_cores(stats, cluster, spec.powered_cores, path=meta.path)
    scale = cores_factor(model, powered)
    power = envelope_power_w(model, rates.eph, freq, op.voltage_v, static_scale=scale)
    slope = power.pop("dpower_dv_w_per_v")
    missing = ~np.isfinite(power["power_w"])  # nan or inf in the stats: no value, not a huge one
    for values in power.values():
        values[missing] = np.nan
    duration = np.asarray(stats["duration_s"])
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
        "freq_mhz": freq,
        "voltage_v": op.voltage_v,
        "power_w": power["power_w"],
        "dynamic_w": power["dynamic_w"],
        "static_w": power["static_w"],
    }
    v_u = op.voltage_u_v if spec.voltage_v is None and op.voltage_u_v is not None else np.zeros(rows)
    half = interval_half_width_w(model, freq_mhz=freq, power_w=power["power_w"], dpower_dv_w_per_v=slope, voltage_u_v=v_u)
    out["power_lo_w"] = np.maximum(out["power_w"] - half, 0.0)  # power is never negative
    out["power_hi_w"] = out["power_w"] + half
    out["energy_j"] = out["power_w"] * duration
    for key, values in power.items():
        if key.startswith("term_"):
            out[key] = values
    for event in model.events:
        out[f"eph_{event}"] = rates.eph[event]
    nan_input = np.isnan(out["power_w"])
    reasons = implausible_reasons(
        model,
        power_w=power["power_w"],
        static_w=power["static_w"] / scale,  # the model's own curve, before the core count scales it
        freq_mhz=freq,
        voltage_v=op.voltage_v,
        eph=rates.eph,
        n_cpus=cluster.n_cpus,
    )
    cycles = checked_cycles(stats, cluster, freq_mhz=freq, duration_s=duration, keep=keep, path=meta.path)
    reasons = np.where(cycles != "", cycles, reasons)
    bad = reasons != ""
    if not keep:
        refuse_implausible(
            reasons,
            lambda i: f"{meta.path}: epoch {out['epoch'][i]}, cluster '{cluster.name}' ({model.name})",
            "price it where the model was trained (cosim whatif --freqs, or another --model)",
            unit="epoch",
        )
    blank_implausible({k: v for k, v in out.items() if k.endswith("_w") or k == "energy_j"}, bad)
    if not strict:
        _check_operating_point(cluster, model, freq, op, spec, strict)  # warn only once the rows are kept
    out["implausible"] = bad
    out["implausible_reason"] = reasons
    out["extrapolated"] = op.freq_outside_training | op.voltage_outside_training
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
    missing += [f"idle_cpu:{cpu}" for cpu in idle]
    missing += [f"absent_zero:{e}" for e, by in sorted(rates.absent.items()) if set(by) - set(idle) and e not in rates.missing]
    out["flags"] = np.array(_flag_text(op, subst, nan_input, bad, model, cluster, extra_flags + missing, freq), dtype=object)
    if nan_input.any():
        where = ", ".join(str(e) for e in out["epoch"][nan_input][:5])
        warnings.warn(
            CosimWarning(
                f"cluster '{cluster.name}': nan in the stats of epoch(s) {where}; those epochs have no power value (flag nan_input)"
            ),
            stacklevel=3,
        )
    return out


def _flag_cumulative(part: cols.Columns, dumps: list[int]) -> None:
    """Flag ``cumulative_dump`` on rows the reader differenced from cumulative counts (no stats reset)."""
    for i in np.flatnonzero(np.isin(part["epoch"], dumps)):
        part["flags"][i] = ";".join(filter(None, [part["flags"][i], "cumulative_dump"]))


def frequency_mhz(stats: StatsLike, cluster: Cluster) -> np.ndarray:
    """Per-epoch frequency [MHz]: the clock-domain period dumped in stats.txt (follows DVFS), else the config's."""
    column = f"{cluster.clk_domain}.clock"
    freq = np.full(len(stats), cluster.freq_mhz)
    if column in stats:
        period = np.asarray(stats[column])
        ok = np.isfinite(period) & (period > 0)
        freq[ok] = cluster.ticks_per_s / period[ok] / 1e6
    return freq


def _check_operating_point(cluster: Cluster, model: Model, freq: np.ndarray, op, spec: ClusterSpec, strict: bool) -> None:
    table = ", ".join(f"{f:g}" for f, _ in model.vf_points)
    lo_f, hi_f = model.train_freq_mhz
    lo_v, hi_v = model.train_voltage_v
    problems = []
    if op.voltage_not_in_table.any():
        f = freq[op.voltage_not_in_table][0]
        problems.append(
            f"{f:g} MHz is not in the V-f table of {model.name} ({table} MHz), so its voltage "
            f"{op.voltage_v[op.voltage_not_in_table][0]:.4f} V is interpolated/extrapolated; give --voltage {cluster.name}=V"
        )
    if op.freq_outside_training.any():
        f = freq[op.freq_outside_training][0]
        problems.append(f"{f:g} MHz is outside the model's training range {lo_f:g}-{hi_f:g} MHz")
    if op.voltage_outside_training.any():
        v = op.voltage_v[op.voltage_outside_training][0]
        problems.append(f"{v:.4f} V is outside the model's training voltages {lo_v:g}-{hi_v:g} V")
    if cluster.n_cpus > model.cores_per_cluster:
        problems.append(f"{cluster.n_cpus} CPUs but the model is for a {model.cores_per_cluster}-core cluster")
    if not problems:
        return
    message = f"cluster '{cluster.name}': " + "; ".join(problems)
    if strict:
        raise CosimError(message + " (--strict)")
    warnings.warn(CosimWarning(message + "; affected epochs are flagged"), stacklevel=4)


def _flag_text(
    op,
    substitutes: dict[str, str],
    nan_input: np.ndarray,
    implausible: np.ndarray,
    model: Model,
    cluster: Cluster,
    extra: list[str],
    freq: np.ndarray,
) -> list[str]:
    common = extra + [f"subst:{e}" for e in sorted(substitutes)]
    up = above_top(model, freq)
    only_extrapolation = interval_flags(model, freq)
    if cluster.n_cpus > model.cores_per_cluster:
        common.append("more_cpus_than_model")
    flags = []
    for i in range(len(nan_input)):
        f = []
        if op.freq_outside_training[i]:
            f.append("freq_outside_training")
        if up[i]:
            f.append("extrapolated")
        if only_extrapolation[i]:
            f.append("interval_extrapolation_only")
        if op.voltage_outside_training[i]:
            f.append("voltage_outside_training")
        if op.voltage_not_in_table[i]:
            f.append("voltage_not_in_vf_table")
        if nan_input[i]:
            f.append("nan_input")
        if implausible[i]:
            f.append("implausible")
        flags.append(";".join(f + common))
    return flags
