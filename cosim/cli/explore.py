"""``cosim explore``: run a study of gem5 configurations from a design file, price and rank it; resumable."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from cosim.cli._args import EXIT_PARTIAL
from cosim.errors import CosimError

_HELP = """\
Run gem5 once per point of a design file (TOML: [gem5], [parameters], [models], [sample]),
each in STUDY/points/ID (ID: a hash of the point's parameters), price every run as
`cosim power` does, and write STUDY/results.csv and STUDY/pareto.png.  The study's state
is an Optuna journal (STUDY/study.journal): the same command carries on after Ctrl-C, a
killed driver, a dead worker or a gem5 crash, without running finished points again.
Needs Optuna: pip install 'cosim[explore]' (and 'cosim[distributed]' for --scheduler).

examples:
  cosim explore design.toml -o study/ --workers 2
  cosim explore design.toml -o study/ --dvfs --scheduler local --workers 4
  cosim explore design.toml -o study/ --search pareto --budget 20
  cosim explore design.toml -o study/ --dry-run
"""


def add_parsers(sub) -> None:
    from cosim.explore.search import SAMPLERS

    e = sub.add_parser(
        "explore",
        help="run a study of gem5 configurations from a design file; price, rank and resume it",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    e.add_argument("design", type=Path, help="design file (TOML); docs: reference/design-file")
    e.add_argument("-o", "--output", type=Path, required=True, metavar="STUDY", help="study folder (made if absent; resumed if present)")
    e.add_argument("--workers", type=int, default=1, help="points run at once: local processes, or LocalCluster workers (default 1)")
    e.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on dask.distributed: 'local' starts a LocalCluster of --workers processes, else a scheduler "
        "address such as tcp://host:8786 (dask-jobqueue for SLURM/PBS)",
    )
    e.add_argument(
        "--dvfs", action="store_true", help="add each simulated point's what-if at every V-f point of its models (source=predicted)"
    )
    e.add_argument(
        "--extrapolate",
        action="store_true",
        help="price clocks beyond a model's extrapolation band by its physical extrapolation (flagged extrapolated), as "
        "cosim power --extrapolate; points refused for it before are priced again without running gem5",
    )
    e.add_argument("--retry-failed", action="store_true", help="run failed points again (finished ones never are)")
    e.add_argument("--search", choices=["pareto"], help="choose the points by a multi-objective sampler over runtime and energy")
    e.add_argument("--budget", type=int, metavar="N", help="with --search: gem5 runs in all (the study's, over every start)")
    e.add_argument("--sampler", choices=SAMPLERS, default="tpe", help="Optuna sampler of --search (default tpe)")
    e.add_argument("--seed", type=int, default=0, help="seed of the --search sampler (default 0)")
    e.add_argument("--parquet", action="store_true", help="also write STUDY/results.parquet")
    e.add_argument("--dry-run", action="store_true", help="print the points and their gem5 commands; run nothing (not even gem5 --help)")
    e.add_argument("--force", action="store_true", help="discard a study folder made from a different design")
    e.add_argument(
        "--check",
        action="store_true",
        help="with --dry-run: also run the design's gem5 binary once (CONFIG --help) to check that the config script "
        "accepts every parameter (a study does this before its first point unless --no-check)",
    )
    e.add_argument("--no-check", action="store_true", help="skip asking the config script for its options (one gem5 --help run)")
    e.add_argument("--quiet", action="store_true", help="no progress lines")
    e.add_argument("--allow-partial", action="store_true", help="exit 0 even if some points failed or were refused")
    e.set_defaults(run=_cmd_explore, output_is_folder=True)


def _cmd_explore(args: argparse.Namespace) -> int:
    from cosim.explore.checks import check_parameters
    from cosim.explore.design import command, load_design, point_id, sample_points

    if args.workers < 1:
        raise CosimError(f"--workers {args.workers}: give 1 or more")
    if (args.search is None) != (args.budget is None):
        raise CosimError("--search pareto and --budget N go together")
    if args.budget is not None and args.budget < 1:
        raise CosimError(f"--budget {args.budget}: give 1 or more gem5 runs")
    if args.check and args.no_check:
        raise CosimError("--check and --no-check: give one")
    if args.check and not args.dry_run:
        raise CosimError("--check goes with --dry-run (a study checks its parameters anyway unless --no-check)")
    refuse_foreign_folder(args.output)
    missing: list[str] | None = [] if args.dry_run and not args.check else None  # a dry run runs nothing: it needs no gem5
    design = load_design(args.design, missing=missing)
    if missing:
        for line in missing:
            print(f"cosim: warning: {line}; a dry run runs nothing, so its commands are printed as the design names them", file=sys.stderr)
    if args.check or not (args.dry_run or args.no_check):
        check_parameters(design)  # runs the design's gem5 binary (CONFIG --help)
    if args.dry_run:
        points = sample_points(design) if not args.search else []
        status = _statuses(design, args)
        for params in points:
            pid = point_id(params)
            print(f"{pid}  {status.get(pid, 'to run'):8}  {shlex.join(command(design, params))}")
        what = f"{len(points)} points" if points else f"a search of {args.budget} gem5 runs over {len(sample_points(design))} points"
        if args.check:
            print(
                f"dry run: {what} -> {args.output}; gem5 was run once (--check: its config script accepts every parameter), no point was run"
            )
        else:
            unchecked = "" if args.no_check else " (the config script's options were not checked: --check runs gem5 --help for that)"
            print(f"dry run: {what} -> {args.output}; nothing was run{unchecked}")
        return 0
    return _explore(design, args)


def _explore(design, args: argparse.Namespace) -> int:
    from cosim.explore.driver import Driver, Options
    from cosim.explore.engine import DaskEngine, PoolEngine
    from cosim.explore.progress import Progress
    from cosim.explore.search import make_sampler
    from cosim.explore.store import open_store
    from cosim.explore.table import plot_study, results
    from cosim.output import write_table

    sampler = make_sampler(args.sampler, seed=args.seed, workers=args.workers) if args.search else None
    store = open_store(args.output, design.fingerprint(), force=args.force, design_name=str(args.design), sampler=sampler)
    options = Options(dvfs=args.dvfs, extrapolate=args.extrapolate, retry_failed=args.retry_failed, search=args.search, budget=args.budget)
    engine = DaskEngine(args.scheduler, args.workers) if args.scheduler else PoolEngine(args.workers)
    store.start_lease()
    driver = Driver(design, store, engine, options)
    progress = Progress(total=len(driver.todo()), workers=engine.workers, enabled=not args.quiet)
    driver.progress = progress
    interrupted = True
    try:
        outcome = driver.run()
        interrupted = False
    finally:
        progress.close()
        engine.close(kill=interrupted)
        store.close()
    table = results(design, store)
    if table.empty:
        raise CosimError(f"{args.output}: no point has finished yet (another driver may be running them)")
    write_table(table, args.output / "results.csv")
    if args.parquet:
        write_table(table, args.output / "results.parquet")
    sim = table[table["source"] == "simulated"]
    ok = sim[sim["status"] == "ok"]
    if not ok.empty:
        plot_study(table, design, args.output / "pareto.png")
    bad = sim[sim["status"] != "ok"]
    print(
        f"{args.output}: {len(sim)} points ({len(ok)} ok, {len(bad)} failed or refused; {outcome.ran} run now in "
        f"{progress.elapsed_s():.1f} s), {int(ok['pareto'].sum())} on the Pareto front -> {args.output / 'results.csv'}"
        + (f", {len(table) - len(sim)} predicted rows" if len(table) > len(sim) else "")
    )
    for _, row in bad.iterrows():
        print(f"  {row['point']} {row['status']}: {row['reason']}", file=sys.stderr)
    if (bad["status"] == "failed").any():  # --retry-failed runs failed points again, never refused ones
        print("  run again with --retry-failed to retry the failed points", file=sys.stderr)
    return EXIT_PARTIAL if len(bad) and not args.allow_partial else 0


#: what a study that was stopped before its journal was made leaves in its folder
_STARTED = frozenset({"study.journal.flock", ".lock", ".drivers"})


def refuse_foreign_folder(folder: Path) -> None:
    """Before anything runs: ``-o`` is new, empty or a study; a folder of other files (a results.csv of the
    user's own) is never written into."""
    if not folder.is_dir():
        return
    if (folder / "study.journal").exists():
        return  # a study: resumed (a different design's is refused by open_store)
    try:
        others = sorted(p.name for p in folder.iterdir() if p.name not in _STARTED)
    except OSError as err:
        raise CosimError(f"-o {folder}: cannot list it ({err.strerror}); give a folder cosim may read and write") from None
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        raise CosimError(
            f"-o {folder}: an existing folder that is no cosim study (no study.journal) and holds {shown}; cosim explore "
            "writes results.csv and pareto.png there, so give a new or empty folder"
        )


def _statuses(design, args: argparse.Namespace) -> dict[str, str]:
    """Each point's status in an existing study folder (for --dry-run; nothing is written)."""
    from cosim.explore.store import JOURNAL, open_store, status_of

    if not (args.output / JOURNAL).exists():
        return {}
    store = open_store(args.output, design.fingerprint(), design_name=str(args.design))
    return {pid: status_of(t) for pid, t in store.latest().items()}
