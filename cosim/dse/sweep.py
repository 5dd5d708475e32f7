"""A folder of gem5 runs -> one table: runtime, energy, EDP, average and peak power per run and cluster."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from cosim.errors import CosimError
from cosim.progress import each, reporter
from cosim.readers.gem5_stats import stats_file

if TYPE_CHECKING:
    import pandas as pd

    from cosim.run import Run


@dataclass(frozen=True)
class SweepSpec:
    """How to price every run: the overrides of :func:`cosim.open_run` and the trust flags of ``cosim power``.

    With no ``models`` and no ``clusters`` each run is resolved on its own (sidecar, else its config's CPU types),
    exactly as ``cosim power`` resolves it, so runs of different CPU types can share one sweep.
    """

    models: tuple[str, ...] = ()
    clusters: tuple[tuple[str, str], ...] = ()  # (name, config path prefix of its CPUs)
    any_isa: bool = False
    keep_implausible: bool = False
    extrapolate: bool = False
    temperature: tuple[float | None, float | None, float | None] = (None, None, None)  # stated die, ambient, start [°C]


#: how deep below a given folder a sweep looks for runs: PROGRAM/CLOCK/ (as ``cosim validate`` reads them) is 2
_MAX_DEPTH = 3


def find_runs(paths: Sequence[Path]) -> list[Path]:
    """Run folders: each path that holds a stats.txt, or the folders below a path that do, down to
    ``PROGRAM/CLOCK/`` and one more level (a run folder is not looked into; a folder given twice is one run).

    Hidden folders are skipped: ``cosim explore`` runs a point in ``.ID.part-N`` until it is whole.
    """
    runs: list[Path] = []
    for path in paths:
        path = Path(path)
        found = [path] if stats_file(path) else _runs_below(path, _MAX_DEPTH)
        if not found:
            raise CosimError(
                f"{path}: no stats.txt in this folder or in its sub-folders down to {_MAX_DEPTH} levels "
                "(RUN/, PROGRAM/CLOCK/); is it a gem5 output directory?"
            )
        runs += [r for r in found if r not in runs]
    return runs


def _runs_below(folder: Path, depth: int) -> list[Path]:
    if depth == 0 or not folder.is_dir():
        return []
    runs = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        runs += [sub] if stats_file(sub) else _runs_below(sub, depth - 1)
    return runs


def run_labels(runs: Sequence[Path]) -> list[str]:
    """Unique names for ``runs``: each one's path below the folder they all share (``automotive_susan_c/1000MHz``
    when a sweep spans programs), its own name when it is alone."""
    import os

    if len(runs) == 1:
        return [Path(runs[0]).name]
    absolute = [os.path.abspath(r) for r in runs]
    common = os.path.commonpath(absolute)
    return [Path(os.path.relpath(a, common)).as_posix() for a in absolute]


def summarize_run(run: Run, *, any_isa: bool = False, keep_implausible: bool = False, extrapolate: bool = False) -> dict:
    """One row: the run's configuration and its totals, priced by :func:`cosim.run.price_run` as ``cosim power`` does.

    Worker processes never import pandas: the run stays in numpy columns (:mod:`cosim.columns`).
    """
    import warnings

    from cosim.errors import CutOffWarning
    from cosim.run import price_run
    from cosim.timeline.clusters import resolve_cluster

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # flags stay in the table; a sweep prints one line per run at most
        warnings.simplefilter("always", CutOffWarning)  # but a loss of dumps is said (the CLI exits 3)
        stats, timeline = price_run(run, any_isa=any_isa, keep_implausible=keep_implausible, extrapolate=extrapolate)
    power = timeline["power_w"]
    upper_w = upper_end_w(power, timeline["power_hi_w"])
    _, epoch_row = np.unique(timeline["epoch"], return_inverse=True)
    total = np.bincount(epoch_row, weights=np.nan_to_num(power, nan=0.0))  # SoC power per epoch; a cluster without value adds 0
    row: dict[str, Any] = {
        "run": run.folder.name,
        "program": program_of(run.config),
        "epochs": len(stats),
        "runtime_s": float(np.sum(stats["duration_s"])),
        "energy_j": float(np.sum(timeline["energy_j"])),  # nan if any row has no value: the total is unknown
        "peak_power_w": float(total.max()),
        # the interval's upper end of the same epoch sums: what --power-cap compares (the model's error included);
        # a row whose model has no interval (no SER) adds its point estimate, never 0, and its cluster is flagged
        "peak_power_w_hi": float(np.bincount(epoch_row, weights=np.nan_to_num(upper_w, nan=0.0)).max()),
        "rows_without_value": int(np.isnan(power).sum()),
    }
    row["avg_power_w"] = row["energy_j"] / row["runtime_s"]  # energy over time, never a mean of epoch powers
    row["edp_js"] = row["energy_j"] * row["runtime_s"]
    flags: set[str] = set()
    for spec_ in run.clusters:
        cluster = resolve_cluster(run.config, spec_, stats.attrs["gem5"].ticks_per_s)
        mine = timeline["cluster"] == spec_.name
        energy_j = float(np.nansum(timeline["energy_j"][mine]))
        found = {f for text in timeline["flags"][mine] for f in text.split(";") if f}
        if np.any(np.isnan(timeline["power_hi_w"][mine]) & ~np.isnan(power[mine])):
            found.add(f"{POINT_ESTIMATE_FLAG}:{spec_.name}")
        cluster_flags = sorted(found)
        flags |= set(cluster_flags)
        row |= {
            f"{spec_.name}_model": spec_.model.name,
            f"{spec_.name}_freq_mhz": float(np.round(np.average(timeline["freq_mhz"][mine], weights=timeline["duration_s"][mine]), 2)),
            f"{spec_.name}_n_cpus": cluster.n_cpus,
            f"{spec_.name}_l2_bytes": sum(cluster.cache_bytes.get(c, 0) for c in sorted(set(cluster.l2.values()))),
            f"{spec_.name}_energy_j": energy_j,
            f"{spec_.name}_avg_power_w": energy_j / row["runtime_s"],
            f"{spec_.name}_peak_power_w": _max_known(power[mine]),
            f"{spec_.name}_flags": ";".join(cluster_flags),
        }
    row["flags"] = ";".join(sorted(flags))
    return row


def program_of(config) -> str:
    """What a run ran, as its config says: its processes' commands (the executable's name and arguments:
    ``susan ./input_small.pgm ./out/susan_c.pgm -c``), else a full-system run's boot script (``FS halt.sh``);
    "" when the config names neither (runs of one program compare on one Pareto front, :data:`cosim.dse.choose.GROUP`)."""
    cmds = set()
    for params in config.objects.values():
        cmd = str(params.get("cmd", "")).strip("[]'\" ").split()
        if cmd and "executable" in params:  # a gem5 Process (SE mode)
            cmds.add(" ".join([Path(cmd[0]).name, *cmd[1:]]))
    if cmds:
        return " | ".join(sorted(cmds))
    scripts = {Path(str(p["readfile"])).name for p in config.objects.values() if str(p.get("readfile", "")).strip()}
    return f"FS {' | '.join(sorted(scripts))}" if scripts else ""


#: a row's ``peak_power_w_hi`` holds this cluster's point estimate: its model publishes no interval (no SER)
POINT_ESTIMATE_FLAG = "peak_hi_point_estimate"


def upper_end_w(power_w: np.ndarray, power_hi_w: np.ndarray) -> np.ndarray:
    """The upper end [W] a cap compares: ``power_hi_w`` where the model gives one, else the point estimate
    ``power_w`` (a model without a published SER has no interval inside its trained clocks); nan where neither is known."""
    return np.where(np.isnan(power_hi_w), power_w, power_hi_w)


def _max_known(values: np.ndarray) -> float:
    """Largest value that is not nan; nan when none is known."""
    known = values[~np.isnan(values)]
    return float(known.max()) if known.size else float("nan")


def run_row(folder: Path, spec: SweepSpec) -> dict:
    """:func:`summarize_run` of the run in ``folder``, or a row that says why it could not be summarised
    (``error``; "" when fine).

    Module-level so that worker processes and Dask workers can run it; only this small dict travels back.
    """
    from cosim.run import open_run

    try:
        die, ambient, start = spec.temperature
        run = open_run(
            folder,
            models=spec.models,
            clusters=dict(spec.clusters),
            temperature_c=die,
            ambient_c=ambient,
            start_temperature_c=start,
        )
        return {
            **summarize_run(run, any_isa=spec.any_isa, keep_implausible=spec.keep_implausible, extrapolate=spec.extrapolate),
            "error": "",
        }
    except CosimError as err:
        return {"run": Path(folder).name, "error": str(err)}


def sweep(runs: Sequence[Path], spec: SweepSpec, *, workers: int = 1, progress: bool = False, client=None) -> pd.DataFrame:
    """Summaries of ``runs``, one row each, in ``runs`` order: ``run`` (a unique name, :func:`run_labels`),
    ``path`` (the run's folder), ``program`` (what it ran, :func:`program_of`), ``design`` (its clusters and their
    models, e.g. ``big=cortex-a15-gemstone2018+little=cortex-a7-gemstone2018``), then the totals.  Each run is priced alone; a run that cannot be keeps its row with the reason in ``error``.

    ``workers`` > 1 parses them in a local process pool; ``client`` (a ``dask.distributed.Client``)
    sends each run to a worker of that cluster, which reads and prices the run where its files are.
    A run that fails, or whose worker dies, keeps its row with the reason in ``error``.
    """
    runs = [Path(r) for r in runs]
    if client is not None:
        rows = _dask_rows(runs, spec, client, progress)
    elif workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            try:
                rows = list(
                    each(
                        pool.map(run_row, runs, [spec] * len(runs), chunksize=1),
                        label="sweep",
                        unit="runs",
                        total=len(runs),
                        enabled=progress,
                    )
                )
            except KeyboardInterrupt:
                kill_workers(pool)
                raise
    else:
        rows = [run_row(r, spec) for r in each(runs, label="sweep", unit="runs", enabled=progress)]
    for row, label, run in zip(rows, run_labels(runs), runs):
        models = sorted((k.removesuffix("_model"), v) for k, v in row.items() if k.endswith("_model"))
        row.update(run=label, path=str(run), design="+".join(f"{name}={model}" for name, model in models))
        if not row.get("program"):  # the config names no program: the folder the run is in stands for it (PROGRAM/CLOCK/)
            row["program"] = f"folder {Path(label).parent.as_posix()}"
    import pandas as pd

    table = pd.DataFrame(rows)
    first = ["run", "path", "program", "design"]
    return table[[*first, *(c for c in table.columns if c not in first)]]


def kill_workers(pool: ProcessPoolExecutor) -> None:
    """SIGKILL a process pool's workers (Ctrl-C), in whatever state the pool is: a Ctrl-C inside its first submit,
    after it forked them and before the thread that feeds them started, left workers nothing would ever stop, and the
    program's exit waited for them for ever.  Python has no public way to do this before 3.14."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.kill()


#: Seconds a sweep waits with no Dask worker (and unfinished runs) before giving those runs a reason
NO_WORKER_S = 15.0


def _dask_rows(runs: list[Path], spec: SweepSpec, client, progress: bool) -> list[dict]:
    """One row per run from ``client``'s workers; runs left when no worker has been there for
    ``NO_WORKER_S`` seconds (all killed, or the scheduler gone) get a row saying so, not a hang."""
    import time

    from distributed import wait

    no_worker_s = NO_WORKER_S  # read when called: the fault tests shorten it in the command they run

    futures = client.map(run_row, runs, spec=spec, pure=False)
    index = {future: i for i, future in enumerate(futures)}
    rows: list[dict | None] = [None] * len(runs)
    pending = set(futures)
    bar = reporter(total=len(futures), label="sweep", unit="runs", enabled=progress)
    alone_since: float | None = None
    lost = f"no Dask worker left to run it for {no_worker_s:g} s (all killed?)"
    while pending:
        try:
            done, pending = wait(pending, timeout=1.0, return_when="FIRST_COMPLETED")
        except TimeoutError:
            done = set()
        except (Exception, asyncio.CancelledError) as err:  # the scheduler is gone: its futures are cancelled
            lost = f"not run: the connection to the Dask scheduler was lost ({type(err).__name__})"
            break
        for future in done:  # fetched at once: a result left on a worker that dies is lost
            rows[index[future]] = _dask_row(runs[index[future]], future, timeout_s=5.0)
            future.release()
        if done:
            bar.update(len(done))
        if _has_workers(client):
            alone_since = None
        elif alone_since is None:
            alone_since = time.monotonic()
        elif time.monotonic() - alone_since > no_worker_s:
            break
    bar.close()
    for future in pending:
        future.cancel()
        rows[index[future]] = {"run": runs[index[future]].name, "error": lost}
    return [row for row in rows if row is not None]


def _dask_row(run: Path, future, *, timeout_s: float) -> dict:
    try:
        return future.result(timeout=timeout_s)
    except TimeoutError:
        return {"run": run.name, "error": f"worker failed: its result was lost with its worker (not back within {timeout_s:g} s)"}
    except (Exception, asyncio.CancelledError) as err:  # a worker that died (KilledWorker), or an error outside cosim's checks
        return {"run": run.name, "error": f"worker failed: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"}


def _has_workers(client) -> bool:
    if client.status != "running":  # the scheduler connection is lost
        return False
    try:
        return bool(client.scheduler_info(n_workers=1).get("workers"))
    except Exception:  # the scheduler went away while asked
        return False


#: Seconds a sweep tries to reach a scheduler (Dask retries a refused connection until then) before refusing
CONNECT_S = 10.0


def dask_client(scheduler: str, *, workers: int = 2):
    """A ``dask.distributed.Client``: ``"local"`` starts a LocalCluster of ``workers`` processes, anything else is a
    scheduler address (``tcp://host:8786``), e.g. of a SLURM or PBS cluster started with dask-jobqueue."""
    import logging

    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise CosimError("--scheduler needs dask.distributed: pip install 'cosim[distributed]'") from None
    # a lost worker or scheduler is reported per run, in one line each; distributed's own log
    # would print tracebacks of its reconnection attempts
    for name in [n for n in logging.root.manager.loggerDict if n.split(".")[0] in ("distributed", "tornado", "asyncio")] + ["asyncio"]:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    if scheduler == "local":
        cluster = LocalCluster(n_workers=max(1, workers), threads_per_worker=1, processes=True, dashboard_address=None)
        return Client(cluster)
    try:
        return Client(scheduler, timeout=f"{CONNECT_S:g}s")
    except Exception as err:  # refused, timed out, or something else answers there (garbage frames)
        raise CosimError(f"--scheduler {scheduler}: no Dask scheduler answers there ({type(err).__name__}: {str(err)[:200]})") from None


def progress_of(items, total: int, enabled: bool, *, what: str = "sweep"):
    """``items`` counted as each run is done (:mod:`cosim.progress`: a tqdm bar, else ``cosim: sweep: 3/12 runs (25 %)``);
    ``items=None``: a reporter to ``update`` by hand.  Kept for old imports; new code calls :mod:`cosim.progress`."""
    from cosim.progress import each, reporter

    if items is None:
        return reporter(total=total, label=what, unit="runs", enabled=enabled)
    return each(items, label=what, unit="runs", total=total, enabled=enabled)
