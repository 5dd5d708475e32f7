"""Issue 51's campaign: every case class that once gave a wrong number at exit 0, an internal error or a lost file.

Each case builds its input from the bundled real run (traces/cosim-v24-se-biglittle-1800-1400MHz, 47 dumps) or a
hand-made one, runs ``cosim.cli.main`` in-process, and judges the outcome against a truth the case wrote itself
(the dumps it left complete, the counter it negated, the numbers it put in an M5 file, the files a user had):

- ``refused``: a documented non-zero exit (2, or 3 for a reported loss) whose stderr is cosim's own lines;
- ``right``: exit 0 and the output agrees with the case's truth;
- ``wrong``: exit 0 where the truth says the input cannot be priced as it is, or an output that disagrees;
- ``exit 4``: an internal error (or anything that escaped ``main``);
- ``lost``: an input changed, a user's file overwritten, an output set half old and half new, a temporary left.

``python tests/trust_campaign.py --cases 500`` runs a campaign and prints the table; tests/test_fuzz.py runs one
case of every class.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import random
import re
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "traces" / "cosim-v24-se-biglittle-1800-1400MHz"
M5_RUN = REPO / "tests" / "data" / "m5-2008-o3"
STANDIN = REPO / "tests" / "gem5_standin"
END = "---------- End Simulation Statistics"
_TEXT: dict[str, str] = {}


def demo_text() -> str:
    if "demo" not in _TEXT:
        with gzip.open(DEMO / "stats.txt.gz", "rt") as f:
            _TEXT["demo"] = f.read()
    return _TEXT["demo"]


def dump_ends(text: str) -> list[int]:
    """Offsets just past each End marker line: where a file cut between dumps ends."""
    return [text.index("\n", m.start()) + 1 for m in re.finditer(re.escape(END), text)]


@dataclass
class Result:
    verdict: str  # refused, right, wrong, exit 4, lost
    code: int
    line: str  # the last stderr line, or what was wrong
    extra: dict = field(default_factory=dict)


def cosim(argv: list, patches: dict[str, Callable] | None = None) -> tuple[int, str, str]:
    """``cosim.cli.main`` in-process: exit status, stderr, stdout; ``patches`` replace module attributes meanwhile."""
    import importlib

    from cosim.cli import main

    saved = []
    for dotted, new in (patches or {}).items():
        module, _, name = dotted.rpartition(".")
        mod = importlib.import_module(module)
        saved.append((mod, name, getattr(mod, name, None)))  # None: an older cosim without it (a "before" run)
        setattr(mod, name, new)
    err, out = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                code = main([str(a) for a in argv])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 2
            except BaseException as exc:  # noqa: BLE001 - main must let nothing through
                code = 4
                print(f"escaped main: {type(exc).__name__}: {exc}", file=sys.stderr)
    finally:
        for mod, name, old in saved:
            setattr(mod, name, old)
    return code, err.getvalue(), out.getvalue()


def judge(code: int, stderr: str, *, refuse: bool, truth_ok: Callable[[], str | None] | None = None, must_say: str = "") -> Result:
    """The verdict: ``refuse`` says whether the input must be refused (exit 2/3); ``truth_ok`` returns what is wrong
    with an exit-0 output, or None; ``must_say`` is text a refusal must hold (the stat, the dump, the way out)."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    if code == 4 or "internal error" in stderr or "escaped main" in stderr or "Traceback" in stderr:
        return Result("exit 4", code, last)
    if code not in (0, 2, 3) or any(not ln.startswith(("cosim", "  ")) for ln in lines):
        return Result("exit 4", code, f"undocumented answer: {last}")
    if code == 0:
        if refuse:
            return Result("wrong", code, f"exit 0 where a refusal was due: {last}")
        wrong = truth_ok() if truth_ok else None
        return Result("wrong", code, wrong) if wrong else Result("right", code, last)
    if must_say and must_say not in stderr:
        return Result("wrong", code, f"refused without saying {must_say!r}: {last}")
    if not refuse and code == 2:
        return Result("wrong", code, f"refused a good input: {last}")
    return Result("refused", code, last)


# --- the classes -----------------------------------------------------------------------------------------------


def _run_folder(folder: Path, text: str | bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stats.txt").write_bytes(text.encode() if isinstance(text, str) else text)
    shutil.copy(DEMO / "config.ini", folder / "config.ini")
    return folder


def _rows(path: Path) -> int:
    """Epochs in a written table (one row per epoch and cluster), -1 without one."""
    import pandas as pd

    if not path.exists():
        return -1
    table = pd.read_csv(path)
    return table["epoch"].nunique() if "epoch" in table else len(table)


def tail_bytes(rng: random.Random, folder: Path) -> Result:
    """A run cut between dumps and zero-filled (a crash with delayed allocation), or text after its last dump:
    exit 3 naming the loss; with --allow-partial, exit 0 and exactly the complete dumps priced."""
    text = demo_text()
    ends = dump_ends(text)
    keep = rng.randrange(1, len(ends))
    head = text[: ends[keep - 1]].encode()
    kind = rng.choice(["zeros", "text", "blank"])
    tail = {
        "zeros": b"\0" * (len(text) - len(head)) if rng.random() < 0.5 else b"\0" * rng.randrange(1, 5000),
        "text": rng.choice([b"panic: out of memory\n", b"system.cpu.numCycles 5\n", b"------ \n", b"x"]) * rng.randrange(1, 50),
        "blank": rng.choice([b"\n", b"  \n", b"\r\n"]) * rng.randrange(1, 20),
    }[kind]
    run = _run_folder(folder / "run", head + tail)
    if rng.random() < 0.3:  # gem5's --stats-file=stats.txt.gz
        (run / "stats.txt.gz").write_bytes(gzip.compress((run / "stats.txt").read_bytes(), compresslevel=1))
        (run / "stats.txt").unlink()
    allow = rng.random() < 0.4
    out = folder / "p.csv"
    command = rng.choice(["power", "power", "whatif", "sweep"])
    argv = {
        "power": ["power", run, "-o", out],
        "whatif": ["whatif", run, "--freqs", "bigCluster=1000", "-o", out],
        "sweep": ["sweep", run, "-o", out],
    }[command]
    code, err, _ = cosim(argv + (["--allow-partial"] if allow and command != "whatif" else []))
    allow = allow and command != "whatif"  # whatif has no --allow-partial: its loss is always exit 3
    loss = kind != "blank"

    def truth():
        if command != "power":  # a what-if or sweep row: its epochs are not listed
            return None if out.exists() else "no table"
        return None if _rows(out) == keep else f"{_rows(out)} epochs written, {keep} dumps complete"

    if loss and not allow:
        return judge(code, err, refuse=True, must_say="after the last complete dump")
    if loss and code == 0 and "after the last complete dump" not in err:
        return Result("wrong", code, "the loss was not reported")
    return judge(code, err, refuse=False, truth_ok=truth)


_CYCLES = re.compile(r"^(system\.\w+\.cpus\d\.numCycles)( +)(\d+)", re.MULTILINE)


def negative_counter(rng: random.Random, folder: Path) -> Result:
    """numCycles of one CPU negative in one, some or every dump: refused naming the stat and the first such dump."""
    text = demo_text()
    ends = [0, *dump_ends(text)]
    n = rng.randrange(2, 8)
    text = text[: ends[n]]
    stat = rng.choice(sorted({m[1] for m in _CYCLES.finditer(text)}))
    which = sorted(rng.sample(range(n), rng.choice([1, rng.randrange(1, n + 1), n])))
    parts = [text[ends[i] : ends[i + 1]] for i in range(n)]
    for i in which:
        parts[i] = re.sub(rf"^({re.escape(stat)} +)(\d+)", r"\1-\2", parts[i], flags=re.MULTILINE)
    run = _run_folder(folder / "run", "".join(parts))
    command = rng.choice(["power", "whatif"])
    argv = (
        ["power", run, "-o", folder / "p.csv"]
        if command == "power"
        else ["whatif", run, "--freqs", "bigCluster=1000", "-o", folder / "w.csv"]
    )
    code, err, _ = cosim(argv)
    return judge(code, err, refuse=True, must_say=f"dump {which[0]}: counter {stat} is -")


M5_OPS = ("No_OpClass", "IntAlu", "IntMult", "IntDiv", "FloatAdd", "MemRead", "MemWrite")


def m5_era(rng: random.Random, folder: Path) -> Result:
    """An M5 (2008) m5stats.txt with random FU-type counts: its distribution read as one (the bucket values as
    written) and the run priced with subst:0x73, or, without the distribution, refused with a way out."""
    from cosim import read_stats

    text = (M5_RUN / "m5stats.txt").read_text()
    counts = {op: rng.randrange(0, 25_000) for op in M5_OPS}  # the file's 50,040 cycles: a rate an A15 can issue
    for op, value in counts.items():
        text = re.sub(rf"(FU_type_0.start_dist\n(?:.*\n)*?\s+{op}\s+)\d+", rf"\g<1>{value}", text, count=1)
    drop = rng.random() < 0.25
    if drop:
        text = re.sub(r"system\.cpu\.iq\.ISSUE:FU_type_0\.start_dist\n(?:.*\n)*?system\.cpu\.iq\.ISSUE:FU_type_0\.end_dist\n", "", text)
    run = folder / "m5"
    run.mkdir(parents=True)
    (run / "m5stats.txt").write_text(text)
    shutil.copy(M5_RUN / "config.ini", run / "config.ini")
    out = folder / "p.csv"
    code, err, stdout = cosim(["power", run, "-o", out])

    def truth():
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            df = read_stats(run / "m5stats.txt")
        got = {op: df[f"system.cpu.iq.ISSUE:FU_type_0::{op}"][0] for op in M5_OPS}
        if got != counts or any(op in df.columns for op in M5_OPS):
            return f"distribution read as {got}, written {counts}"
        if "absent_zero" in stdout:  # the file prints every cache count (M5's overall_accesses, no ::total)
            return "a cache count the file holds was priced as 0 (absent_zero)"
        return None if "subst:0x73" in stdout else "priced without subst:0x73"

    if drop:
        return judge(code, err, refuse=True, must_say="--model")
    return judge(code, err, refuse=False, truth_ok=truth)


def interrupted_set(rng: random.Random, folder: Path) -> Result:
    """cosim power -o/--ptrace/--plot over a previous run's three outputs, interrupted at a random writer (or not):
    all three stay old, or all three are new."""
    text = demo_text()
    run = _run_folder(folder / "run", text[: dump_ends(text)[rng.randrange(2, 6)]])
    outs = {"-o": folder / "p.csv", "--ptrace": folder / "p.ptrace", "--plot": folder / "p.png"}
    for path in outs.values():
        path.write_text("previous run\n")
    stage = rng.choice(["table", "ptrace", "plot", "summary", None])

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    targets = {
        "table": "cosim.output._write_csv_columns",
        "ptrace": "cosim.timeline.ptrace.write_ptrace",
        "plot": "cosim.plots.cpu.plot_timeline",
        "summary": "cosim.output._commit",
    }
    patches = {targets[stage]: stop} if stage else {}
    argv = ["power", run] + [x for kv in outs.items() for x in kv]
    code, err, _ = cosim(argv, patches)
    old = [p.read_text(errors="replace") == "previous run\n" for p in outs.values()]
    temps = [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]
    if temps or (any(old) and not all(old)):
        return Result("lost", code, f"outputs half old, half new ({dict(zip(outs, old))}) or temporaries {temps}")
    if stage and code != 130:
        return Result("wrong", code, f"an interrupt at {stage} gave exit {code}")
    if stage:
        return Result("refused", code, err.strip().splitlines()[-1])
    return judge(code, err, refuse=False, truth_ok=lambda: None if not any(old) else "outputs not written")


def foreign_folder(rng: random.Random, folder: Path) -> Result:
    """cosim explore -o into a folder of the user's own files: refused before anything runs, the files unchanged."""
    study = folder / "mine"
    study.mkdir(parents=True)
    names = rng.sample(["results.csv", "pareto.png", "notes.txt", "points", ".hidden", "results.parquet"], rng.randrange(1, 4))
    for name in names:
        (study / name).write_text(f"the user's {name}\n") if name != "points" else (study / name).mkdir()
    design = _design(folder)
    code, err, _ = cosim(["explore", design, "-o", study, *rng.choice([[], ["--dry-run"], ["--no-check"]])])
    kept = sorted(p.name for p in study.iterdir()) == sorted(names) and all(
        (study / n).read_text() == f"the user's {n}\n" for n in names if n != "points"
    )
    if not kept:
        return Result("lost", code, f"the user's files changed: {sorted(p.name for p in study.iterdir())}")
    return judge(code, err, refuse=True, must_say="give a new or empty folder")


def _design(folder: Path) -> Path:
    path = folder / "design.toml"
    path.write_text(
        f'[gem5]\nbinary = "{STANDIN / "gem5"}"\nconfig = "{STANDIN / "config.py"}"\nargs = ["--epoch", "100us"]\n'
        f'workload = ["{STANDIN / "config.py"}", "5"]\n[parameters]\n"--big-cores" = [1, 2]\n'
    )
    return path


def dry_run(rng: random.Random, folder: Path) -> Result:
    """cosim explore --dry-run runs nothing (not even gem5 --help); --check runs gem5 --help once and no point."""
    log = folder / "log"
    os.environ["COSIM_STANDIN_LOG"] = str(log)
    check = rng.random() < 0.3
    try:
        code, err, out = cosim(["explore", _design(folder), "-o", folder / "s", "--dry-run", *(["--check"] if check else [])])
    finally:
        del os.environ["COSIM_STANDIN_LOG"]
    ran = log.read_text().split() if log.exists() else []
    want = ["help"] if check else []
    if ran != want or (folder / "s").exists():
        return Result("wrong", code, f"a dry run ran {ran or 'nothing'} (expected {want}) or made its folder")
    return judge(code, err, refuse=False, truth_ok=lambda: None if "dry run:" in out else "no dry-run summary")


def link_loop(rng: random.Random, folder: Path) -> Result:
    """A stats file linked to itself, a<->b, a dangling link, or a run folder linked into itself; a path cosim may
    not write (-o under /proc): one line naming the path, never exit 4."""
    text = demo_text()
    run = _run_folder(folder / "run", text[: dump_ends(text)[2]])
    kind = rng.choice(["self", "pair", "dangling", "folder-in-itself", "unwritable"])
    (run / "stats.txt").unlink() if kind in ("self", "pair", "dangling") else None
    if kind == "self":
        os.symlink("stats.txt", run / "stats.txt")
    elif kind == "pair":
        os.symlink("b", run / "a")
        os.symlink("a", run / "b")
        os.symlink("a", run / "stats.txt")
    elif kind == "dangling":
        os.symlink("gone.txt", run / "stats.txt")
    elif kind == "folder-in-itself":
        os.symlink("../run", run / "self")
    command = rng.choice(["power", "whatif", "sweep"])
    target = rng.choice([run, run / "stats.txt"]) if kind != "folder-in-itself" else rng.choice([run, run / "self" / "self"])
    if kind == "unwritable" or command == "sweep" and kind == "folder-in-itself":
        target = run  # sweep takes run folders (a stats.txt is refused as no folder, rightly, before -o is looked at)
    out = Path("/proc/cosim-campaign.csv") if kind == "unwritable" else folder / "o.csv"
    argv = {
        "power": ["power", target, "-o", out],
        "whatif": ["whatif", target, "--freqs", "bigCluster=1000", "-o", out],
        "sweep": ["sweep", target, "-o", out],
    }
    code, err, _ = cosim(argv[command])
    if kind == "folder-in-itself":  # a valid run (read once): priced, or refused as power refuses it
        return judge(code, err, refuse=False, truth_ok=lambda: None if _rows(out) > 0 else "no table")
    return judge(code, err, refuse=True, must_say=str(out) if kind == "unwritable" else str(run))


def worker_death(rng: random.Random, folder: Path) -> Result:
    """A pool worker SIGKILLed while its point runs (once, or every time): that point alone is retried once; the
    study goes on and prices the others."""
    from standin import standin_run

    run = standin_run(folder / "standin-run")
    always = rng.random() < 0.5
    env = {
        "COSIM_STANDIN_RUN": str(run),
        "COSIM_STANDIN_KILL": "2",
        **({} if always else {"COSIM_STANDIN_KILL_MARK": str(folder / "mark")}),
    }
    os.environ.update(env)
    try:
        code, err, _ = cosim(["explore", _design(folder), "-o", folder / "s", "--workers", "2", "--quiet", "--no-check"])
    finally:
        for key in env:
            del os.environ[key]
    import csv

    rows = list(csv.DictReader(open(folder / "s" / "results.csv"))) if (folder / "s" / "results.csv").exists() else []
    status = sorted(r["status"] for r in rows if r["source"] == "simulated")
    want = ["failed", "ok"] if always else ["ok", "ok"]
    if status != want:
        return Result("wrong", code, f"points {status}, expected {want}")
    return judge(code, err, refuse=always, must_say="killed twice" if always else "")


CLASSES: dict[str, Callable[[random.Random, Path], Result]] = {
    "tail bytes after the last dump": tail_bytes,
    "negative counter in any dump": negative_counter,
    "M5-era distributions": m5_era,
    "interrupted output set": interrupted_set,
    "explore -o a folder of other files": foreign_folder,
    "explore --dry-run runs nothing": dry_run,
    "symlink loops, unwritable path": link_loop,
    "killed pool worker": worker_death,
}
#: cases per round of every class: the worker kill runs a study (seconds), so it is drawn less often
WEIGHTS = {"killed pool worker": 1}


def run_case(name: str, seed: int, root: Path) -> Result:
    slug = re.sub(r"\W+", "-", name)
    folder = root / f"{slug}-{seed}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    try:
        return CLASSES[name](random.Random(seed), folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def campaign(cases: int, root: Path, seed: int = 0) -> dict[str, Counter]:
    order = [n for n in CLASSES for _ in range(WEIGHTS.get(n, 5))]
    table: dict[str, Counter] = {n: Counter() for n in CLASSES}
    for k in range(cases):
        name = order[k % len(order)]
        result = run_case(name, seed * 100_000 + k, root)
        table[name][result.verdict] += 1
        if result.verdict in ("wrong", "exit 4", "lost") and table[name][result.verdict] <= 3:
            print(f"{name} case {k}: {result.verdict}: {result.line[:300]}", file=sys.stderr)
    return table


if __name__ == "__main__":
    import argparse
    import tempfile
    import warnings

    sys.path.insert(0, str(Path(__file__).parent))
    warnings.simplefilter("ignore")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    opts = ap.parse_args()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        result = campaign(opts.cases, Path(tmp), opts.seed)
    verdicts = ("refused", "right", "wrong", "exit 4", "lost")
    print(f"{opts.cases} cases in {time.perf_counter() - t0:.0f} s (seed {opts.seed}):")
    print(f"| class | cases | {' | '.join(verdicts)} |")
    print(f"|---|---|{'---|' * len(verdicts)}")
    total: Counter = Counter()
    for name, counts in result.items():
        total.update(counts)
        print(f"| {name} | {sum(counts.values())} | {' | '.join(str(counts[v]) for v in verdicts)} |")
    print(f"| all | {sum(total.values())} | {' | '.join(str(total[v]) for v in verdicts)} |")
