"""One trust check for every command that prices a gem5 run: ``power``, ``whatif``, ``sweep``, ``soc``, ``explore`` and
``validate`` all call it, so each refuses the same runs and writes the same flags.

What it checks, and whether a way out can change it:

- the ISA (:func:`isa_flags`): a model of another ISA means nothing at any clock; ``--any-isa`` prices it flagged
  ``isa_mismatch`` under every command;
- the run itself: no config file (``config_from_stats``), more CPUs than the model's cluster
  (``more_cpus_than_model``), CPUs that never ran (``idle_cpu:<cpu>``), optional model tables taken by their default
  (``model_default:<table>``) (:func:`cluster_flags`);
- per-cycle event rates no modelled core can count (:func:`refuse_rates`): a rate per cycle is the same at every
  clock, so a what-if at another clock is no way out; only another model (or ``--keep-implausible`` where the
  command writes such rows flagged) is;
- a run no model can price as run, for several reasons at once (:func:`refuse_unpriceable`): one line naming them all,
  and the ways out that work for all of them.

The clock-dependent checks (the envelope's band, static power at a clock) stay in :mod:`cosim.models.envelope` and
:mod:`cosim.models.plausibility`: a what-if at a trained clock is a way out of those.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from cosim.errors import CosimError, CosimWarning
from cosim.models.envelope import band, beyond_band, static_at_w
from cosim.models.modelfile import Model, operating_point
from cosim.models.plausibility import rate_reasons
from cosim.models.schema import OPTIONAL_DEFAULTS
from cosim.readers.gem5_config import Cluster, Gem5Config

#: flags the trust check sets; ``power`` writes them per cluster row, ``whatif`` on every row (``:<cluster>`` after
#: the per-cluster ones), so that one command's way out never drops another's flag
TRUST_FLAGS = ("isa_mismatch", "isa_unknown", "config_from_stats", "more_cpus_than_model", "idle_cpu", "model_default")

#: how a refusal of a per-cycle rate starts its ways out (cosim explore replaces them with a study's own)
RATE_WAYS_OUT = "a rate per cycle is the same at every clock, so no what-if at another clock prices it either"


def isa_flags(config: Gem5Config, models: Sequence[Model], *, any_isa: bool, warn: bool = True) -> list[str]:
    """Refuse a model trained on another ISA than the run's (unless ``any_isa``); the run-wide flags every row carries:
    ``isa_mismatch`` or ``isa_unknown``, and ``config_from_stats`` for a run read without its config file."""
    from cosim.timeline.model_checks import check_isa

    if warn:
        mismatch = check_isa(config, models, any_isa=any_isa)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CosimWarning)
            mismatch = check_isa(config, models, any_isa=any_isa)
    out = ["isa_mismatch"] if mismatch else (["isa_unknown"] if config.isa is None else [])
    return out + (["config_from_stats"] if config.inferred else [])


def cluster_flags(stats, cluster: Cluster, model: Model) -> list[str]:
    """The flags of one cluster that hold at any clock: more CPUs than the model's cluster, CPUs that never ran, and
    the model file's omitted tables priced by their default."""
    from cosim.timeline.cycles import idle_cpus

    out = ["more_cpus_than_model"] if cluster.n_cpus > model.cores_per_cluster else []
    out += [f"idle_cpu:{cpu}" for cpu in idle_cpus(stats, cluster)]
    return out + [f"model_default:{table}" for table in model.defaults]


def whatif_cluster_flags(stats, cluster: Cluster, model: Model) -> tuple[str, ...]:
    """:func:`cluster_flags` as a what-if row writes them: one row holds every cluster, so each flag but
    ``idle_cpu:<cpu>`` (which names its CPU) ends in ``:<cluster>``."""
    return tuple(f if f.startswith("idle_cpu:") else f"{f}:{cluster.name}" for f in cluster_flags(stats, cluster, model))


def default_note(tables: Sequence[str]) -> str:
    """What the summary line says of a model file's omitted tables (``model_default:<table>``; "" for none)."""
    taken = [f"{t} (default: {OPTIONAL_DEFAULTS[t]})" for t in tables if t in OPTIONAL_DEFAULTS]
    return f" [model file omits {'; '.join(taken)}: flag model_default]" if taken else ""


def refuse_rates(model: Model, eph, where, *, ways_out: str) -> np.ndarray:
    """Refuse the first epoch whose events per cycle no ``model`` core can count (``where(i)`` names it,
    ``ways_out`` says what the command offers); returns the reasons ("" per fine row) for a command that keeps them."""
    reasons = rate_reasons(model, eph)
    bad = np.flatnonzero(reasons != "")
    if bad.size and ways_out:
        i = int(bad[0])
        more = f" (and {bad.size - 1} more epoch(s))" if bad.size > 1 else ""
        raise CosimError(f"{where(i)}: {reasons[i]}{more}; {RATE_WAYS_OUT}: {ways_out}")
    return reasons


def refuse_unpriceable(path: str, config: Gem5Config, specs: Sequence, clock_mhz, *, any_isa: bool, extrapolate: bool) -> None:
    """One line naming every reason no model given can price this run as run, when its ISA is not the model's: the
    ISA and each cluster's clock beyond its model's band, with the ways out that work for all of them (a model
    covering both, ``cosim fit``, a what-if at a trained clock, flagged).  ``specs``: the clusters
    (:class:`~cosim.timeline.clusters.ClusterSpec`), ``clock_mhz(spec)`` their epochs' clocks [MHz], read only for a
    run of another ISA.  A run of the model's ISA is left to the envelope's own refusal."""
    isa = config.isa
    if any_isa or isa is None or all(s.model.isa == isa for s in specs):
        return
    clocks = [(s.name, s.model, clock_mhz(s)) for s in specs]
    models = sorted({m.name: m for _, m, _ in clocks if m.isa != isa}.values(), key=lambda m: m.name)
    reasons = [f"the run is {isa.upper()} but " + ", ".join(f"{m.name} was trained on {m.isa.upper()} cores" for m in models)]
    freqs, stuck_any, far_any = [], False, False
    for name, model, f in clocks:
        far = beyond_band(model, f)
        top = model.train_freq_mhz[1]
        trained = f"{name}={_trained_clock(model, f)}"
        freqs.append(trained)
        if not (far.any() and not extrapolate):
            continue
        i = int(np.flatnonzero(far)[0])
        why = (
            f"cluster '{name}' runs at {f[i]:g} MHz, {f[i] / top:.3g}x {model.name}'s top trained clock {top:g} MHz, beyond its "
            f"band (up to {top * band(model):g} MHz)"
        )
        stuck = _extrapolation_refused(model, f[i])
        reasons.append(why + (f", and --extrapolate would not price it ({stuck})" if stuck else ""))
        far_any, stuck_any = True, stuck_any or bool(stuck)
    ways = [f"price it with the shipped --model {name}" for name in _shipped_of(isa)] + [
        f"fit a model of {isa.upper()} cores with cosim fit (docs/howto/fit-your-board.md) and give it with --model",
        f"price it at a trained clock with cosim whatif {path} --any-isa --freqs {' --freqs '.join(freqs)} "
        f"(rows flagged isa_mismatch{', config_from_stats' if config.inferred else ''})",
    ]
    if not far_any:
        ways.insert(0, "pass --any-isa to price it anyway (every row flagged isa_mismatch)")
    elif not stuck_any:
        ways.insert(0, "pass --any-isa --extrapolate (rows flagged isa_mismatch and extrapolated, interval widened)")
    which = "model given" if _shipped_of(isa) else f"shipped model (none is of {isa.upper()} cores)"
    raise CosimError(f"{path}: no {which} prices this run as run: {'; '.join(reasons)}; ways out: {'; or '.join(ways)}")


def _shipped_of(isa: str) -> list[str]:
    """The shipped CPU models measured on cores of ``isa``."""
    import json

    from cosim.models.modelfile import SCHEMA, shipped_models_dir

    found = []
    for path in sorted(shipped_models_dir().glob("*.json")):
        data = json.loads(path.read_text())
        if data.get("schema") == SCHEMA and str(data.get("isa", "")).lower() == isa:
            found.append(path.stem)
    return found


def _trained_clock(model: Model, f: np.ndarray) -> str:
    """The V-f table clock [MHz] nearest the run's highest, as text for ``--freqs``."""
    table = np.array([p[0] for p in model.vf_points])
    return f"{table[np.argmin(np.abs(table - float(np.max(f))))]:g}"


def _extrapolation_refused(model: Model, freq_mhz: float) -> str:
    """Why ``--extrapolate`` would refuse this clock in turn ("" if its static power would be priced)."""
    from cosim.models.plausibility import static_reasons

    f = np.array([freq_mhz])
    v = operating_point(model, f).voltage_v
    return str(static_reasons(model, static_w=static_at_w(model, f, v), freq_mhz=f, voltage_v=v)[0])
