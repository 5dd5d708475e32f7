"""Which real gem5 run ``cosim demo`` uses.

First choice: a ``cosim-*`` run bundled in ``traces/`` (made for cosim, may be
shipped).  Until one exists, the best public ARM run in ``../shared/data/gem5/``
when that folder is present (public runs may not be copied into the project).
Never synthetic numbers.  A cluster is named as gem5 named it (``system.bigCluster`` -> ``bigCluster``), as
``cosim power`` names it, and priced by the default model ``cosim power`` picks for its kind of core, so the demo
prints what ``cosim power`` prints on the same run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from cosim.readers.gem5_stats import stats_file


@dataclass(frozen=True)
class DemoRun:
    description: str
    stats: Path
    config: Path
    clusters: tuple[tuple[str, str], ...]  # (name, config path prefix of its CPUs)


# Public fallback: ARMv8 full-system boot, two out-of-order CPUs in one clock domain
# (2 GHz): the closest public run to a Cortex-A15 cluster.
_PUBLIC = "public-old2016-arm64-fs-o3-dual"


def find_demo_run() -> DemoRun | None:
    for traces in _trace_dirs():
        for run in sorted(traces.glob("cosim-*")):
            found = _bundled(run)
            if found:
                return found
    for shared in _shared_dirs():
        run = shared / "data" / "gem5" / _PUBLIC
        if (run / "stats.txt").exists():
            return DemoRun(
                description=f"public gem5 run {run} (no cosim-* run is bundled yet; this one is read from ../shared)",
                stats=run / "stats.txt",
                config=run / "config.ini",
                clusters=(("cpu", "system.cpu"),),
            )
    return None


def _bundled(run: Path) -> DemoRun | None:
    """A bundled run says in cosim-demo.json which config paths are its clusters; each is named by gem5's object name."""
    spec = run / "cosim-demo.json"
    stats = stats_file(run)
    if not (spec.exists() and stats):
        return None
    data = json.loads(spec.read_text())
    config = next((run / n for n in ("config.ini", "config.json") if (run / n).exists()), None)
    if config is None:
        return None
    return DemoRun(
        description=f"bundled gem5 run {run.name}: {data.get('description', '')}",
        stats=stats,
        config=config,
        clusters=tuple((c["path"].rsplit(".", 1)[-1], c["path"]) for c in data["clusters"]),
    )


def open_demo(run: DemoRun):
    """The demo run resolved as ``cosim power`` resolves it (:func:`cosim.run.open_run`): its named clusters, each
    priced by the default model of its kind of core."""
    from cosim.run import open_run

    return open_run(run.stats, config=run.config, clusters=dict(run.clusters))


def _trace_dirs() -> list[Path]:
    installed = Path(str(resources.files("cosim") / "_traces"))
    return [p for p in (installed, Path(__file__).resolve().parents[2] / "traces") if p.is_dir()]  # cosim/cli/ -> repo


def _shared_dirs() -> list[Path]:
    here = Path(__file__).resolve()
    candidates = [Path.cwd() / ".." / "shared", Path.cwd() / "shared", here.parents[3] / "shared"]
    return [p.resolve() for p in candidates if (p / "data" / "gem5").is_dir()]
