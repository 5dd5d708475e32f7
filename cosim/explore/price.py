"""Pricing a finished point: the same path as ``cosim power`` (:func:`cosim.run.open_run`), and its ``--dvfs`` what-ifs."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

from cosim.errors import CosimError

#: the per-cluster columns of a point's row, after ``{cluster}_``
CLUSTER_COLUMNS = ("freq_mhz", "avg_power_w", "peak_power_w")
#: peak_power_w_hi: the peak's upper end a power cap compares (the point estimate where a model has no interval, flagged)
RESULT_COLUMNS = ("runtime_s", "energy_j", "edp_js", "avg_power_w", "peak_power_w", "peak_power_w_hi")


def _open(folder: Path, models: dict[str, tuple[str, str]], thermal: dict[str, Any]):
    from cosim.run import open_run

    if models:
        return open_run(folder, models=tuple(m for _, m in models.values()), clusters={n: p for n, (p, _) in models.items()}, **thermal)
    return open_run(folder, **thermal)


#: a study's own ways out of a refusal of a clock beyond a model's band or of an implausible epoch, in place of
#: cosim power's (from cosim.models.envelope.BAND_WAYS_OUT or cosim.timeline.cpu.IMPLAUSIBLE_WAYS_OUT on)
EXPLORE_BAND_WAYS_OUT = (
    "; run the same cosim explore command with --extrapolate (the point is priced again, flagged extrapolated; gem5 "
    "does not run again), or give the cluster another model in the design's [models]; a refused point has no --dvfs "
    "rows: `cosim whatif` on its folder in points/ prices its run at the models' V-f points"
)

EXPLORE_IMPLAUSIBLE_WAYS_OUT = (
    "; give the cluster another model in the design's [models]; a refused point has no --dvfs rows: `cosim whatif` "
    "on its folder in points/ prices its run at the models' V-f points"
)


def price_point(
    folder: Path,
    models: dict[str, tuple[str, str]],
    *,
    dvfs: bool = False,
    extrapolate: bool = False,
    thermal: dict[str, float] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The point's result columns, and with ``dvfs`` one predicted row per V-f combination of its clusters' models.

    ``extrapolate``: clocks beyond a model's band are priced by its physical extrapolation (rows flagged
    ``extrapolated``), as ``cosim power --extrapolate``.  ``thermal``: the design's ``[thermal]`` (``temperature_c``, or
    ``ambient_c`` and ``start_temperature_c`` [°C]), as cosim power's options of the same names.  Raises :class:`~cosim.errors.CosimError` when cosim refuses
    the run (the point is then ``refused``); the message names the ways out a study offers.
    """
    from cosim.dse.sweep import summarize_run
    from cosim.errors import CosimError
    from cosim.models.envelope import BAND_WAYS_OUT
    from cosim.timeline.cpu import IMPLAUSIBLE_WAYS_OUT
    from cosim.timeline.trust import RATE_WAYS_OUT

    run = _open(Path(folder), models, dict(thermal or {}))
    _refuse_a_loss(run.stats_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # what cosim worked around is in the flags column
        try:
            summary = summarize_run(run, extrapolate=extrapolate)
        except CosimError as err:
            head, found, _ = str(err).partition(BAND_WAYS_OUT)
            if found:
                raise CosimError(head + EXPLORE_BAND_WAYS_OUT) from None
            head, found, _ = str(err).partition(IMPLAUSIBLE_WAYS_OUT)
            if found:
                raise CosimError(head.rstrip("; ") + EXPLORE_IMPLAUSIBLE_WAYS_OUT) from None
            head, found, _ = str(err).partition(RATE_WAYS_OUT)  # no clock is a way out: a --dvfs what-if is none either
            if found:
                raise CosimError(f"{head}{found}: give the cluster another model in the design's [models]") from None
            raise
    clusters = [c.name for c in run.clusters]
    row: dict[str, Any] = {k: float(summary[k]) for k in RESULT_COLUMNS}
    for name in clusters:
        row |= {f"{name}_{k}": float(summary[f"{name}_{k}"]) for k in CLUSTER_COLUMNS}
        row[f"{name}_model"] = summary[f"{name}_model"]
    row["flags"] = summary["flags"]
    _check(folder, row)
    return row, (_predicted(run, extrapolate=extrapolate) if dvfs else [])


class LostDumps(CosimError):
    """The run's stats end in bytes that are no dump: the point failed (gem5 did not write all of it), not refused."""


def _refuse_a_loss(stats_path: Path) -> None:
    """Refuse a run whose stats lost dumps (bytes after the last complete dump: gem5 crashed before it wrote them):
    its totals would be short.  One scan that keeps no stat (the C scanner makes no object for an unwanted line)."""
    from cosim.errors import CutOffWarning
    from cosim.readers.gem5_stats import read_stats_table

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        read_stats_table(stats_path, stats=())
    cut = next((w for w in seen if issubclass(w.category, CutOffWarning)), None)
    if cut is not None:
        raise LostDumps(
            str(cut.message).replace(
                "; --allow-partial, where a command has it, accepts the loss", ", or run the point again with --retry-failed"
            )
        )


def _check(folder: Path, row: dict[str, Any]) -> None:
    from cosim.errors import CosimError

    for key in ("runtime_s", "energy_j"):
        if not (math.isfinite(row[key]) and row[key] > 0):
            raise CosimError(f"{folder}: {key} = {row[key]}; some epochs have no value (see flags), so the point has no total")


def _predicted(run, *, extrapolate: bool = False) -> list[dict[str, Any]]:
    """The what-if of the run at every V-f point of its models (:mod:`cosim.dse.whatif`), with its interval when it has one."""
    from cosim.dse.whatif import dvfs_grid, recorded_run, whatif, whatif_stats
    from cosim.readers.gem5_stats import read_stats

    specs = list(run.clusters)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = read_stats(run.stats_path, stats=whatif_stats(run.config, specs))
        recorded = recorded_run(stats, run.config, specs)
        table = whatif(recorded, dvfs_grid(recorded), extrapolate=extrapolate)
    keep = [*(f"{c.name}_freq_mhz" for c in specs), *RESULT_COLUMNS]
    keep += [c for c in ("runtime_s_lo", "runtime_s_hi", "energy_j_lo", "energy_j_hi") if c in table.columns]  # #25's interval
    return [{k: float(v) for k, v in rec.items()} for rec in table[keep].to_dict("records")]
