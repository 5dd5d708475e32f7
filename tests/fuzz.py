"""Mutation fuzzing of cosim's readers through the CLI, on real input files.

A mutant is a real file with a few edits of the kinds real files suffer: a line
deleted, duplicated or swapped with another, a number replaced by nan, inf, -1,
2^64, text or nothing, or the file cut at some byte.  Each mutant goes through
``cosim.cli.main`` in-process, and the outcome is judged by what a user sees:

- no traceback and no internal error (only CosimError/CosimWarning surface);
- the exit status is a documented one (0, 2, 3);
- nothing but cosim's own one-line messages on stderr (no leaked numpy/pandas warnings);
- no negative or non-finite power written at exit 0.

``python tests/fuzz.py --mutants 1000`` runs a campaign and prints the counts;
tests/test_fuzz.py runs the same checks under hypothesis.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import random
import re
import shutil
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO / "traces"
DEMO_RUN = TRACES / "cosim-v24-se-biglittle-1800-1400MHz"
DOCUMENTED_EXITS = {0, 2, 3}
BAD_NUMBERS = ("nan", "inf", "-1", str(2**64), "abc", "true", "", "1e400", "-inf")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")


def mutate(text: str, plan: list[tuple[str, int, int]]) -> str:
    """Apply ``plan``: (operation, a, b) with a, b picking lines or numbers (taken modulo their count)."""
    lines = text.split("\n")
    for op, a, b in plan:
        if not lines:
            break
        i, j = a % len(lines), b % len(lines)
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "number":
            hits = list(_NUMBER.finditer(lines[i]))
            if hits:
                m = hits[b % len(hits)]
                lines[i] = lines[i][: m.start()] + BAD_NUMBERS[(a + b) % len(BAD_NUMBERS)] + lines[i][m.end() :]
        elif op == "truncate":
            joined = "\n".join(lines)
            return joined[: (a * 7919 + b) % (len(joined) + 1)]
    return "\n".join(lines)


OPS = ("delete", "duplicate", "swap", "number", "number", "number", "truncate")


@dataclass(frozen=True)
class Target:
    """A reader reached through one CLI command: which file is mutated and how cosim is called."""

    name: str
    make: callable  # folder -> (path of the file to mutate, argv, output path)


def _first_dumps(n: int) -> str:
    with gzip.open(DEMO_RUN / "stats.txt.gz", "rt") as f:
        text = f.read()
    marks = [m.start() for m in re.finditer(r"\n---------- End Simulation Statistics", text)]
    end = text.index("\n", marks[n - 1] + 1) + 1
    return text[:end]


_SMALL_STATS: dict[int, str] = {}


def _stats_text() -> str:
    if 3 not in _SMALL_STATS:  # three real dumps of the bundled v24 run: every stat, a few hundred kB
        _SMALL_STATS[3] = _first_dumps(3)
    return _SMALL_STATS[3]


def _gem5_stats(folder: Path):
    stats = folder / "stats.txt"
    stats.write_text(_stats_text())
    shutil.copy(DEMO_RUN / "config.ini", folder / "config.ini")
    return stats, ["power", stats, "-o", folder / "out.csv"], folder / "out.csv"


def _gem5_config(folder: Path):
    stats, argv, out = _gem5_stats(folder)
    return folder / "config.ini", argv, out


def _ocelot(folder: Path):
    path = folder / "k.trace"
    shutil.copy(TRACES / "cosim-ocelot-video.trace", path)
    return path, ["gpu", path, "-o", folder / "out.csv"], folder / "out.csv"


def _nvprof_csv(folder: Path):
    path = folder / "m.csv"
    shutil.copy(TRACES / "cosim-nvprof-dct.csv", path)
    return path, ["gpu", path, "-o", folder / "out.csv"], folder / "out.csv"


def _nvprof_text(folder: Path):
    path = folder / "m.txt"
    shutil.copy(TRACES / "cosim-nvprof-dct.txt", path)
    return path, ["gpu", path, "-o", folder / "out.csv"], folder / "out.csv"


POWMON = REPO.parent / "shared" / "data" / "gemstone" / "sample-input-data" / "asrtpm-A15-powmon-data.csv"


def _measured(folder: Path):
    path = folder / "measured.csv"
    path.write_text("\n".join(POWMON.read_text().split("\n")[:40]) + "\n")
    return path, ["apply", "cortex-a15-walker2017", path, "--compare-with", "Power A15", "-o", folder / "out.csv"], folder / "out.csv"


GPU_DATA = REPO / "tests" / "data" / "gpu"


def _read(name: str):
    """``cosim read`` on one of the real-format GPU samples."""

    def setup(folder: Path):
        path = folder / name
        shutil.copy(GPU_DATA / name, path)
        return path, ["read", path, "-o", folder / "out.csv"], folder / "out.csv"

    return setup


def _gpgpusim_priced(folder: Path):
    path = folder / "run.log"
    shutil.copy(GPU_DATA / "gpgpusim-3.2-gtx480-backprop.log", path)
    return path, ["gpu", path, "--model", "ocelot-fermi-aalto2013", "-o", folder / "out.csv"], folder / "out.csv"


def _gpu_trace_timed(folder: Path):
    path = folder / "t.txt"
    shutil.copy(TRACES / "cosim-nvprof-dct-gputrace.txt", path)
    return path, ["gpu", TRACES / "cosim-nvprof-dct.txt", "--gpu-trace", path, "-o", folder / "out.csv"], folder / "out.csv"


TARGETS = {
    t.name: t
    for t in (
        Target("read-nvprof-sessions", _read("nvprof-gtx980-sessions.log")),
        Target("read-nvprof-trace-text", _read("nvprof-gtx650m-gpu-trace.txt")),
        Target("read-nvprof-trace-csv", _read("nvprof-rtx2080ti-gpu-trace.csv")),
        Target("read-nvprof-summary", _read("nvprof-gt1030-summary.txt")),
        Target("read-ncu-details", _read("ncu-a100-details.csv")),
        Target("read-ncu-raw", _read("ncu-rtx3090-raw.csv")),
        Target("read-accelsim", _read("accelsim-volta-multistream.log")),
        Target("read-gpuwattch", _read("gpuwattch-gtx480-backprop.log")),
        Target("gpgpusim-priced", _gpgpusim_priced),
        Target("gpu-trace-timed", _gpu_trace_timed),
        Target("gem5-stats", _gem5_stats),
        Target("gem5-config", _gem5_config),
        Target("ocelot", _ocelot),
        Target("nvprof-csv", _nvprof_csv),
        Target("nvprof-text", _nvprof_text),
        Target("measured-csv", _measured),
    )
}


@dataclass
class Outcome:
    code: int
    stderr: str
    problems: list[str]


def run_mutant(target: Target, folder: Path, plan: list[tuple[str, int, int]]) -> Outcome:
    """Mutate the target's real file by ``plan``, run cosim on it, and list what a user should never see."""
    from cosim.cli import main

    folder.mkdir(parents=True, exist_ok=True)
    path, argv, out = target.make(folder)
    path.write_text(mutate(path.read_text(), plan))
    out.unlink(missing_ok=True)
    err, std = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(std):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
        except BaseException as exc:  # main must never let one through
            code = -1
            print(f"Traceback: {type(exc).__name__}: {exc}", file=sys.stderr)
    stderr = err.getvalue()
    problems = []
    if code == -1 or "Traceback" in stderr or "internal error" in stderr:
        problems.append("traceback")
    if code not in DOCUMENTED_EXITS and code != -1:
        problems.append(f"exit {code}")
    if any(line and not line.startswith(("cosim:", "  ")) for line in stderr.splitlines()):
        problems.append("leaked warning")
    if code == 0 and out.exists():
        table = pd.read_csv(out) if out.suffix == ".csv" else pd.read_parquet(out)
        if "power_w" in table.columns:
            power = table["power_w"].to_numpy(dtype=float)
            if not np.isfinite(power).all() or (power < 0).any():
                problems.append("implausible power at exit 0")
    return Outcome(code, stderr, problems)


def random_plan(rng: random.Random) -> list[tuple[str, int, int]]:
    return [(rng.choice(OPS), rng.randrange(10**6), rng.randrange(10**6)) for _ in range(rng.randint(1, 3))]


def campaign(n: int, root: Path, seed: int = 0) -> Counter:
    """``n`` mutants spread over every target; counts of outcomes and problems."""
    rng = random.Random(seed)
    counts: Counter = Counter()
    names = [t for t in TARGETS if t != "measured-csv" or POWMON.exists()]
    for k in range(n):
        target = TARGETS[names[k % len(names)]]
        outcome = run_mutant(target, root / f"m{k}", random_plan(rng))
        counts[f"exit {outcome.code}"] += 1
        for p in outcome.problems:
            counts[p] += 1
            if counts[p] <= 3:
                print(f"{target.name} mutant {k}: {p}: {outcome.stderr.strip()[-300:]}", file=sys.stderr)
        shutil.rmtree(root / f"m{k}", ignore_errors=True)
    return counts


if __name__ == "__main__":
    import argparse
    import tempfile
    import time

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    opts = ap.parse_args()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        result = campaign(opts.mutants, Path(tmp), opts.seed)
    print(f"{opts.mutants} mutants in {time.perf_counter() - t0:.0f} s:")
    for key in sorted(result):
        print(f"  {key}: {result[key]}")
    for key in ("traceback", "leaked warning", "implausible power at exit 0"):
        print(f"  {key} total: {result.get(key, 0)}")
