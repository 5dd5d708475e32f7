"""The kind of core (in-order, out-of-order) a cluster's CPUs are and its models were measured on: the default model
for a cluster, and the CPUs and epochs a model of the other kind prices."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from cosim.errors import CosimError, CosimWarning
from cosim.models.modelfile import Model
from cosim.readers.gem5_config import Cluster

if TYPE_CHECKING:
    from cosim.readers.stats_table import StatsLike


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
    why = f"{cluster.n_cpus} x {types} ({words})"
    others = sorted({t for c, t in cluster.cpu_types.items() if cluster.kind(c) != kind})
    if others:  # switched-out stand-ins of other kinds run the same cores in their turn (switcheroo)
        why += f", switched in turn with {', '.join(others)}: the model is for its {types}"
    return DEFAULT_MODELS[kind], why


def _kind_words(kind: str) -> str:
    return "out-of-order" if kind == "o3" else "in-order"


def other_kind_cpus(cluster: Cluster, model: Model) -> tuple[str, ...]:
    """The CPUs of ``cluster`` of the other kind (``in-order``, ``out-of-order``) than ``model`` was measured on: every
    CPU that may run the cluster's cores, switched-out stand-ins included (each runs a core in its turn, as
    :func:`default_model` counts them); () when the model states no ``core_kind``.

    O3 is out-of-order; Minor and the simple CPUs are in-order (the kinds :data:`DEFAULT_MODELS` follows).
    """
    if model.core_kind is None:
        return ()
    return tuple(c for c in cluster.cpus if cluster.kind(c) in _DETAIL and _kind_words(cluster.kind(c)) != model.core_kind)


def other_core_kind(cluster: Cluster, model: Model) -> str | None:
    """The kind of ``cluster``'s CPUs where ``model`` was measured on the other kind (:func:`other_kind_cpus`); None
    when none is."""
    cpus = other_kind_cpus(cluster, model)
    return _kind_words(cluster.kind(cpus[0])) if cpus else None


def core_kind_mismatch(cluster: Cluster, model: Model) -> tuple[str, ...]:
    """Warn, naming them, about the CPUs of ``cluster`` of the other kind than ``model`` was measured on
    (:func:`other_kind_cpus`); returns them: the epochs they ran are flagged ``core_kind_mismatch``."""
    cpus = other_kind_cpus(cluster, model)
    if not cpus:
        return ()
    kind = _kind_words(cluster.kind(cpus[0]))
    ours = DEFAULT_MODELS["o3" if kind == "out-of-order" else "minor"]
    rest = [c for c in cluster.cpus if c not in cpus and cluster.kind(c) in _DETAIL]
    if not rest:  # every CPU of the cluster is of the other kind
        types = ", ".join(sorted({cluster.cpu_types[c] for c in cpus if c in cluster.cpu_types}))
        who, what = f"its CPUs are {kind} ({types})", "its power is the other kind's; price it"
        rows = "rows flagged core_kind_mismatch"
    else:  # a core switched between kinds (switcheroo): name the CPUs of the other kind, flag the epochs they ran
        named = ", ".join(f"{c} ({cluster.cpu_types.get(c, '?')})" for c in cpus)
        who = f"{named} {'is' if len(cpus) == 1 else 'are'} {kind}"
        what = (
            f"the power of the epochs {'it' if len(cpus) == 1 else 'they'} ran is the other kind's (its other CPUs, "
            f"{', '.join(rest)}, are {model.core_kind}, as the model); price {'it' if len(cpus) == 1 else 'them'}"
        )
        rows = "those epochs flagged core_kind_mismatch"
    warnings.warn(
        CosimWarning(
            f"cluster '{cluster.name}': {who} but {model.name} was measured on {model.core_kind} cores, so {what} with a model "
            f"of {kind} cores ({ours}: one --model per --cluster, in order); {rows}"
        ),
        stacklevel=4,
    )
    return cpus


def _ran_in(stats: StatsLike, cpus: Sequence[str]) -> np.ndarray | None:
    """Per epoch, whether any of ``cpus`` counted a cycle in it; None where none of them has a cycle count."""
    from cosim.timeline.cycles import CYCLE_STATS, _column

    ran, counted = np.zeros(len(stats), dtype=bool), False
    for cpu in cpus:
        for stat in CYCLE_STATS:
            column = _column(stats, cpu, stat)
            if column is not None:
                counted = True
                ran |= np.nan_to_num(np.asarray(stats[column], dtype=float), nan=0.0) > 0
    return ran if counted else None


def other_kind_epochs(stats: StatsLike, cluster: Cluster, other: Sequence[str]) -> np.ndarray:
    """The epochs priced as the other kind's: where a CPU of ``other`` ran, or no CPU of the model's kind did (every
    epoch where the cycle counts cannot tell)."""
    rest = [c for c in cluster.cpus if c not in other and cluster.kind(c) in _DETAIL]
    theirs, ours = _ran_in(stats, other), _ran_in(stats, rest)
    if not rest:
        return np.ones(len(stats), dtype=bool)
    if theirs is None or ours is None:
        return np.ones(len(stats), dtype=bool)
    return theirs | ~ours
