"""The gem5 side of a validation: each run of a program at a clock, priced as ``cosim power`` prices it (no flags).

A run folder holds gem5's ``stats.txt`` and ``config.ini`` (as ``cosim power`` reads it).  Besides the power of the
whole cluster, the busy cores' own rates are read (the cores that committed instructions): IPC and each model
event per CPU_CYCLES cycle, as the board's PMCs count the core the program runs on.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cosim.errors import CosimError
from cosim.run import STATS_NAMES
from cosim.validate.rates import CYCLES as _CYCLES
from cosim.validate.rates import INSTS as _INSTS
from cosim.validate.rates import PerCycle

_CLOCK_DIR = re.compile(r"^(\d+(?:\.\d+)?)\s*MHz$", re.IGNORECASE)


@dataclass(frozen=True)
class SimRow(PerCycle):
    """One gem5 run of a program at a clock."""

    program: str
    clock_mhz: float  # the run's cluster clock [MHz], from its config
    folder: Path
    model: str  # the model ``cosim power`` chose with no flags
    counts: dict[str, float] = field(default_factory=dict)  # event -> the busy cores' count over the run
    power_w: float = float("nan")  # cluster power, energy / time [W]; nan when the run could not be priced
    voltage_v: float = float("nan")  # the voltage it was priced at [V]
    static_scale: float = 1.0  # the static term's core-count scale cosim applied
    powered_cores: int = 0  # the cluster's CPUs in the run: the cores cosim powers (static power) [cores]
    duration_s: float = float("nan")  # simulated time [s]
    eph: dict[str, float] = field(default_factory=dict)  # model inputs of the whole cluster, time-weighted
    not_priced: str = ""  # why ``cosim power`` refused the run ("" when priced)


def find_runs(root: str | Path) -> list[tuple[str, Path]]:
    """``(program, folder)`` of every gem5 run under ``root``: ``PROGRAM/CLOCK/stats.txt``, ``PROGRAM/stats.txt``,
    or the finished points of a ``cosim explore`` study (``STUDY/points/ID``, the program named by its workload)."""
    root = Path(root)
    if not root.is_dir():
        raise CosimError(f"{root}: not a folder; give the folder of gem5 runs (PROGRAM/CLOCK/stats.txt)")
    if (root / "study.journal").exists() or (root / "points").is_dir() and (root / "results.csv").exists():
        return _study_runs(root)
    found = []
    # two levels, links followed (a RUNS folder of links to runs elsewhere is a common way to pick runs)
    for folder in sorted([*root.glob("*/"), *root.glob("*/*/")]):
        if not any((folder / name).is_file() for name in STATS_NAMES):
            continue
        if folder.parent == root and _CLOCK_DIR.match(folder.name):
            raise CosimError(f"{folder}: a run with no program folder above it; lay runs out as RUNS/PROGRAM/CLOCK/stats.txt")
        program = folder.parent.name if _CLOCK_DIR.match(folder.name) else folder.name
        found.append((program, folder))
    if not found and any((root / name).is_file() for name in STATS_NAMES):
        raise CosimError(
            f"{root}: one gem5 run, named by no program; put it in a folder of runs as RUNS/PROGRAM/CLOCK/stats.txt "
            "(PROGRAM as the board names it) and give RUNS"
        )
    if not found:
        raise CosimError(f"{root}: no stats.txt under it; give the folder of gem5 runs (PROGRAM/CLOCK/stats.txt)")
    return found


def read_sim(program: str, folder: Path, *, events: tuple[str, ...], model: str | None = None) -> SimRow:
    """The run in ``folder`` priced with no flags (or with ``model`` alone, as ``cosim power --model`` does), and its
    busy cores' counts of ``events`` (plus 0x08, 0x11)."""
    from cosim.counters.pmc import event_rates, load_event_map, stats_for
    from cosim.readers.gem5_stats import read_stats_table
    from cosim.run import open_run
    from cosim.timeline.clusters import frequency_mhz, resolve_cluster, stats_needed
    from cosim.timeline.cpu import timeline_columns

    run = open_run(folder, models=[model] if model else ())
    if len(run.clusters) != 1:
        raise CosimError(
            f"{folder}: {len(run.clusters)} CPU clusters; a validation run simulates one, the board's measured cluster "
            "(gem5's se.py with --num-cpus=4): leave this run out of RUNS"
        )
    spec = run.clusters[0]
    cluster = resolve_cluster(run.config, spec, run.config.ticks_per_s)
    mapped = load_event_map("v20.1+").sources.keys() & load_event_map("pre-v20.1").sources.keys()
    wanted = {e for e in (*events, _INSTS, _CYCLES) if e in mapped}  # events gem5 has no stat for are left out
    needed = stats_needed(run.config, run.clusters) | stats_for(cluster, wanted)  # stats_needed has the cycle stats
    stats = read_stats_table(run.stats_path, stats=needed)
    meta = stats.attrs["gem5"]
    cluster = resolve_cluster(run.config, spec, meta.ticks_per_s)
    freq = frequency_mhz(stats, cluster)
    duration = np.asarray(stats["duration_s"], dtype=float)
    clock_mhz = float(round(np.average(freq, weights=duration) if duration.sum() > 0 else freq[0], 3))
    busy = _busy(stats, cluster)
    if not busy.cpus:
        raise CosimError(f"{run.stats_path}: no CPU of cluster '{cluster.name}' committed an instruction; nothing to compare")
    rates = event_rates(stats, busy, sorted(wanted), generation=meta.generation, cores_per_cluster=1, freq_mhz=freq)
    counts = {e: float(np.sum(v * duration * freq)) for e, v in rates.eph.items()}  # eph * t * f: the count again
    row = SimRow(
        program=program,
        clock_mhz=clock_mhz,
        folder=folder,
        model=spec.model.name,
        counts=counts,
        powered_cores=len(cluster.cpus),
        duration_s=float(duration.sum()),
    )
    try:
        timeline = timeline_columns(stats, run.config, run.clusters)
    except CosimError as err:
        return dataclasses.replace(row, not_priced=str(err))
    dur = np.asarray(timeline["duration_s"], dtype=float)
    return dataclasses.replace(
        row,
        power_w=float(np.sum(timeline["energy_j"]) / dur.sum()),
        voltage_v=float(np.average(timeline["voltage_v"], weights=dur)),
        static_scale=float(timeline["cores_scaled"][0]),
        eph={e: float(np.average(timeline[f"eph_{e}"], weights=dur)) for e in spec.model.events},
    )


def _busy(stats, cluster):
    """``cluster`` cut to the CPUs that committed instructions; a cache they share counts once for them alone."""
    from cosim.counters.pmc import load_event_map, unpadded

    emap = load_event_map(stats.attrs["gem5"].generation)
    columns = set(stats.columns)
    busy = []
    for cpu in cluster.cpus:
        spellings = {cpu, unpadded(cpu)}  # config cpus00, stats cpus0
        names = [f"{c}.{t.stat}" for c in spellings for s in emap.sources[_INSTS] for t in s.terms]
        if any(n in columns and np.nansum(stats[n]) > 0 for n in names):
            busy.append(cpu)
    # idle cores make no accesses to a shared L2: its whole count is the busy cores'
    sharers = {l2: max(1, sum(1 for cpu in busy if cluster.l2.get(cpu) == l2)) for l2 in cluster.l2_sharers}
    return dataclasses.replace(cluster, cpus=tuple(busy), l2_sharers=sharers)


def _study_runs(study: Path) -> list[tuple[str, Path]]:
    """The finished points of an explore study, each named by its program: the workload's binary, without folder
    or suffix (``.../security_sha.arm`` -> ``security_sha``), from the point's ``params.json`` or ``command.txt``."""
    import json
    import shlex

    found = []
    points = study / "points"
    for folder in sorted(points.glob("*/")) if points.is_dir() else []:
        if folder.name.startswith(".") or not any((folder / n).is_file() for n in STATS_NAMES):
            continue  # a point still running, cut short, or failed before gem5 wrote its statistics
        workload = ""
        params = folder / "params.json"
        if params.is_file():
            workload = str(json.loads(params.read_text()).get("workload", ""))
        if not workload and (folder / "command.txt").is_file():
            lines = [ln for ln in (folder / "command.txt").read_text().splitlines() if ln and not ln.startswith("#")]
            words = shlex.split(lines[-1]) if lines else []
            workload = shlex.join(words[words.index("--") + 1 :]) if "--" in words else ""
        if not workload:
            raise CosimError(f"{folder}: a study point with no workload in params.json or command.txt; cannot tell its program")
        found.append((Path(shlex.split(workload)[0]).stem, folder))
    if not found:
        raise CosimError(f"{study}: an explore study with no finished point (points/ID/stats.txt); run it first")
    return found
