"""Checks that a model fits the run it prices: the run's ISA, the config's CPU types against the stats, and each
epoch's operating point against the model's V-f table and training range (refused, or warned and flagged)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from cosim.errors import CosimError, CosimWarning
from cosim.models.modelfile import Model
from cosim.readers.gem5_config import Cluster, Gem5Config
from cosim.timeline.clusters import ClusterSpec, resolve_cluster


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


#: Stat groups only one kind of gem5 CPU writes: O3's reorder buffer, issue/execute and rename stages; Minor's fetch2
_KIND_GROUPS = {"o3": frozenset({"rob", "iew", "rename"}), "minor": frozenset({"fetch2"}), "simple": frozenset()}
_KIND_NAMES = {"o3": "out-of-order (O3)", "minor": "in-order Minor"}


def check_cpu_types(config: Gem5Config, clusters: Sequence[ClusterSpec], stats_path: str) -> None:
    """Refuse a config whose CPU types contradict the stats: Minor-only statistics under an O3 CPU, or the reverse.

    A model priced on the wrong kind of CPU reads the wrong stats (and defaults to the wrong model).
    """
    from pathlib import Path

    from cosim.readers._stats_files import cpu_stat_groups

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


def check_operating_point(cluster: Cluster, model: Model, freq: np.ndarray, op, spec: ClusterSpec, strict: bool) -> None:
    """Refuse (``strict``) or warn about clocks off the V-f table or outside training, and more CPUs than the model's
    cluster; the rows carry the matching flags (:func:`cosim.timeline.cpu_flags.flag_text`)."""
    table = ", ".join(f"{f:g}" for f, _ in model.vf_points)
    lo_f, hi_f = model.train_freq_mhz
    lo_v, hi_v = model.train_voltage_v
    problems = []
    if op.voltage_not_in_table.any():
        f = freq[op.voltage_not_in_table][0]
        problems.append(
            f"{f:g} MHz is not in the V-f table of {model.name} ({table} MHz), so its voltage "
            f"{op.voltage_v[op.voltage_not_in_table][0]:.4f} V is read off the model's V-f curve (interpolated/extrapolated), "
            "the voltage the model was fitted along"
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
