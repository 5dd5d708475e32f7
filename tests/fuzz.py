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
import dataclasses
import gzip
import hashlib
import io
import json
import random
import re
import shutil
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO / "traces"
DEMO_RUN = TRACES / "cosim-v24-se-biglittle-1800-1400MHz"
DOCUMENTED_EXITS = {0, 2, 3}
BAD_NUMBERS = ("nan", "inf", "-1", str(2**64), "abc", "true", "", "1e400", "-inf", "1e999", "-0")
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
    gzip: bool = False  # the file is gzip (mutated as text, written back compressed)


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


def _sample(name: str):
    """``cosim read`` on one of tests/test_gpu_readers.py's samples of today's logs (tegrastats, amd-smi and loggers'
    CSVs, ncu's text report: layouts as the public logs named there print them), by its name in that file."""

    def setup(folder: Path):
        import test_gpu_readers

        path = folder / name
        path.write_text(getattr(test_gpu_readers, name.split(".")[0].upper()))
        return path, ["read", path, "-o", folder / "out.csv"], folder / "out.csv"

    return setup


def _tegrastats_energy(folder: Path):
    """``cosim gpu-energy`` of the 3-kernel trace against a tegrastats log (the AGX Orin sample's two lines
    alternated over 6 s, one a second as tegrastats stamps them): the Jetson power-log path."""
    from test_gpu_readers import TEGRA_ORIN

    first, second = TEGRA_ORIN.splitlines()
    lines = [(first if k % 2 == 0 else second)[19:] for k in range(6)]
    log = folder / "tegrastats.log"
    log.write_text("".join(f"07-21-2025 16:33:{42 + k:02d}{line}\n" for k, line in enumerate(lines)))
    trace = folder / "trace.csv"
    shutil.copy(GPU_DATA / "nsys-cuda-gpu-trace-3-kernels.csv", trace)
    return log, ["gpu-energy", log, trace, "-o", folder / "out.csv"], folder / "out.csv"


def _gpgpusim_priced(folder: Path):
    path = folder / "run.log"
    shutil.copy(GPU_DATA / "gpgpusim-3.2-gtx480-backprop.log", path)
    return path, ["gpu", path, "--model", "ocelot-fermi-aalto2013", "-o", folder / "out.csv"], folder / "out.csv"


def _gpu_trace_timed(folder: Path):
    path = folder / "t.txt"
    shutil.copy(TRACES / "cosim-nvprof-dct-gputrace.txt", path)
    return path, ["gpu", TRACES / "cosim-nvprof-dct.txt", "--gpu-trace", path, "-o", folder / "out.csv"], folder / "out.csv"


def _gpu_energy(mutated: str):
    """``cosim gpu-energy`` on the power log and trace made here (tests/data/gpu), one of them mutated."""
    names = {"log": "nvidia-smi-lms50-3-kernels.csv", "trace": "nsys-cuda-gpu-trace-3-kernels.csv"}

    def setup(folder: Path):
        paths = {k: folder / n for k, n in names.items()}
        for k, n in names.items():
            shutil.copy(GPU_DATA / n, paths[k])
        return paths[mutated], ["gpu-energy", paths["log"], paths["trace"], "-o", folder / "out.csv"], folder / "out.csv"

    return setup


def _gem5_gzip(folder: Path):
    stats = folder / "stats.txt.gz"
    stats.write_bytes(gzip.compress(_stats_text().encode(), compresslevel=1))  # the reader inflates any level; 9 took 40 % of a mutant
    shutil.copy(DEMO_RUN / "config.ini", folder / "config.ini")
    return stats, ["power", stats, "-o", folder / "out.parquet"], folder / "out.parquet"


SHARED_RUN = REPO.parent / "shared" / "data" / "gem5" / "cosim-v24-se-biglittle-o3-1000MHz-minor-600MHz"


def _gem5_config_json(folder: Path):
    """config.json (gem5's JSON config) of a real v24 run, with three dumps of its stats."""
    stats = folder / "stats.txt"
    with open(SHARED_RUN / "stats.txt") as f:
        text = f.read(4 << 20)
    marks = [m.start() for m in re.finditer(r"\n---------- End Simulation Statistics", text)]
    stats.write_text(text[: text.index("\n", marks[2] + 1) + 1])
    shutil.copy(SHARED_RUN / "config.json", folder / "config.json")
    return folder / "config.json", ["whatif", stats, "--config", folder / "config.json", "-o", folder / "out.csv"], folder / "out.csv"


def _model_file(folder: Path):
    stats, _, out = _gem5_stats(folder)
    model = folder / "a15.json"
    shutil.copy(REPO / "models" / "cortex-a15-walker2017.json", model)
    return model, ["power", stats, "--model", model, "--cluster", "big=system.bigCluster", "-o", out], out


def _sidecar(folder: Path):
    stats, _, out = _gem5_stats(folder)
    # the sidecar gem5_scripts/cosim_gem5.attach_power writes: each cluster's CPUs and model
    clusters = {"big": ("system.bigCluster", "cortex-a15-walker2017"), "little": ("system.littleCluster", "cortex-a7-gemstone2018")}
    (folder / "cosim-run.json").write_text(
        json.dumps({"clusters": {n: {"path": p, "model": m} for n, (p, m) in clusters.items()}}, indent=1)
    )
    return folder / "cosim-run.json", ["power", stats, "-o", out], out


ARMPM = REPO.parent / "shared" / "data" / "armpm" / "Concatenated_Data" / "PARSEC" / "xu3_cset_perfcpu_PARSEC_eMMC_big.data"


def _armpm(folder: Path):
    path = folder / "run.data"
    path.write_text("\n".join(ARMPM.read_text().split("\n")[:60]) + "\n")
    argv = [
        "fit",
        path,
        "--format",
        "armpm",
        "--power-col",
        "A15 Power(W)",
        "--events",
        "0x11,0x08",
        "--folds",
        "2",
        "-o",
        folder / "m.json",
    ]
    return path, argv, folder / "m.json"


def _activity(folder: Path):
    path = folder / "act.csv"
    shutil.copy(TRACES / "cosim-dct-activity.csv", path)
    out = folder / "out.csv"
    return path, ["gpu", TRACES / "cosim-nvprof-dct.csv", "--activity", path, "-o", out, "--plot", folder / "p.svg"], out


def _corsair_like_measured(folder: Path):
    """A Powmon table through cosim fit: the measured-table reader and the model JSON writer."""
    path = folder / "measured.csv"
    path.write_text("\n".join(POWMON.read_text().split("\n")[:60]) + "\n")
    argv = [
        "fit",
        path,
        "--label",
        "A15",
        "--power-col",
        "Power A15",
        "--events",
        "0x11,0x1b-0x73",
        "--folds",
        "2",
        "-o",
        folder / "m.json",
    ]
    return path, argv, folder / "m.json"


GPU_DVFS = REPO.parent / "shared" / "data" / "gpu-dvfs" / "gtx980-wang2018" / "logs"
_DVFS_BENCHMARKS = ("nn", "scan", "bfs")  # three: the fewest a kernel fit validates leaving one out
_DVFS_PAIRS = ("core1000_mem1000", "core600_mem400")


def _dvfs_logs(folder: Path) -> Path:
    logs = folder / "logs"
    logs.mkdir(exist_ok=True)
    for bench in _DVFS_BENCHMARKS:
        for pair in _DVFS_PAIRS:
            for kind in ("metrics", "perf", "power"):
                name = f"benchmark_{bench}_{pair}_input00_{kind}.log"
                shutil.copy(GPU_DVFS / name, logs / name)
    return logs


def _dvfs(kind: str):
    """``cosim read`` of a folder of GTX 980 DVFS logs (issue #26), one of its ``kind`` logs mutated."""

    def make(folder: Path):
        logs = _dvfs_logs(folder)
        out = folder / "dvfs.csv"
        return logs / f"benchmark_nn_core1000_mem1000_input00_{kind}.log", ["read", logs, "-o", out], out

    return make


_KERNEL_TABLE: dict[str, str] = {}


def _kernel_table(folder: Path):
    """``cosim kernel-fit`` of a kernel DVFS table (the documented CSV schema), made from the real logs (read once a
    session: the same logs give the same table, and reading them was a third of a mutant's time)."""
    from cosim.readers.dvfs_logs import read_dvfs_folder

    if "csv" not in _KERNEL_TABLE:
        _KERNEL_TABLE["csv"] = read_dvfs_folder(_dvfs_logs(folder)).to_csv(index=False)
        shutil.rmtree(folder / "logs")
    table = folder / "kernels.csv"
    table.write_text(_KERNEL_TABLE["csv"])
    out = folder / "model.json"
    return table, ["kernel-fit", table, "-o", out], out


def _design_file(folder: Path):
    """``cosim explore --dry-run`` of a design file (issue #24) naming the gem5 stand-in of the tests."""
    standin = REPO / "tests" / "gem5_standin"
    design = folder / "design.toml"
    design.write_text(
        f'[gem5]\nbinary = "{standin / "gem5"}"\nconfig = "{standin / "config.py"}"\nargs = ["--epoch", "100us"]\n'
        f'workload = ["{standin / "config.py"}", "5"]\n\n[parameters]\n"--big-cores" = [1, 2]\n"--little-freq" = ["600MHz", "1000MHz"]\n\n'
        '[models]\nbig = ["system.bigCluster", "cortex-a15-walker2017"]\n\n[sample]\nmethod = "grid"\n'
    )
    out = folder / "study" / "results.csv"
    return design, ["explore", design, "-o", folder / "study", "--dry-run", "--no-check"], out


NEEDS_SHARED = {
    "gem5-config-json": SHARED_RUN,
    "armpm": ARMPM,
    "measured-csv": POWMON,
    "measured-fit": POWMON,
    "gpu-dvfs-power": GPU_DVFS,
    "gpu-dvfs-perf": GPU_DVFS,
    "gpu-dvfs-metrics": GPU_DVFS,
    "kernel-table": GPU_DVFS,
}


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
        Target("read-dcgm", _read("dcgm-v100-dmon.log")),
        Target("read-accelwattch-hw-perf", _read("accelwattch-hw-perf.csv")),
        Target("read-accelwattch-hw-power", _read("accelwattch-hw-power-validation-volta.csv")),
        Target("read-nvidia-smi", _read("nvidia-smi-lms50-3-kernels.csv")),
        Target("read-nsys-trace", _read("nsys-cuda-gpu-trace-3-kernels.csv")),
        Target("read-tegrastats", _sample("tegra_orin.log")),
        Target("read-tegrastats-no-times", _sample("tegra_nano.txt")),
        Target("read-power-csv-amd-smi", _sample("amd_smi.csv")),
        Target("read-power-csv-iso", _sample("iso_csv.csv")),
        Target("read-ncu-text", _sample("ncu_text.txt")),
        Target("gpu-energy-tegrastats", _tegrastats_energy),
        Target("gpu-energy-log", _gpu_energy("log")),
        Target("gpu-energy-trace", _gpu_energy("trace")),
        Target("gpgpusim-priced", _gpgpusim_priced),
        Target("gpu-trace-timed", _gpu_trace_timed),
        Target("gem5-stats", _gem5_stats),
        Target("gem5-config", _gem5_config),
        Target("ocelot", _ocelot),
        Target("nvprof-csv", _nvprof_csv),
        Target("nvprof-text", _nvprof_text),
        Target("measured-csv", _measured),
        Target("gem5-stats-gzip", _gem5_gzip, gzip=True),
        Target("gem5-config-json", _gem5_config_json),
        Target("model-file", _model_file),
        Target("sidecar", _sidecar),
        Target("armpm", _armpm),
        Target("activity", _activity),
        Target("measured-fit", _corsair_like_measured),
        Target("gpu-dvfs-power", _dvfs("power")),
        Target("gpu-dvfs-perf", _dvfs("perf")),
        Target("gpu-dvfs-metrics", _dvfs("metrics")),
        Target("kernel-table", _kernel_table),
        Target("design-file", _design_file),
    )
}


@dataclass
class Outcome:
    code: int
    stderr: str
    problems: list[str]
    cpu_s: float = 0.0


#: (target, hash of the mutated file's text) -> its outcome.  Different plans often make the same file (a swap of a
#: line with itself, a number put where the line has none, hypothesis's small variations of one plan: a tenth of the
#: suite's mutants); every other input a target writes is the same each time and cosim's answer is a function of its
#: inputs, so a mutant met again is not run again.
_DONE: dict[tuple[str, bytes], Outcome] = {}


#: a mutant's limit [s of wall time]: "over 30 s" is a problem counted after the command ends; one that never ends
#: must still end the test, naming the mutant (hypothesis would otherwise rerun it while shrinking)
HANG_S = 120


class MutantHang(BaseException):
    """cosim still ran a mutant after :data:`HANG_S`: not an Exception, so neither cosim nor hypothesis catches it, and
    the test fails at once with the target and the plan that reproduce it (``run_mutant(TARGETS[name], folder, plan)``)."""


@contextlib.contextmanager
def _hang_guard(target: Target, plan: list[tuple[str, int, int]]):
    """SIGALRM after :data:`HANG_S` in this, the main, thread (elsewhere, or without SIGALRM: no guard)."""
    import signal
    import threading

    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def hang(signum, frame):
        raise MutantHang(f"{target.name}: cosim still ran after {HANG_S} s on the mutant of plan {plan!r}: a hang")

    previous = signal.signal(signal.SIGALRM, hang)
    t0 = time.monotonic()
    outer_s, _ = signal.setitimer(signal.ITIMER_REAL, HANG_S)  # pytest-timeout's timer, if set: put back after
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_s:
            signal.setitimer(signal.ITIMER_REAL, max(outer_s - (time.monotonic() - t0), 0.001))


def run_mutant(target: Target, folder: Path, plan: list[tuple[str, int, int]]) -> Outcome:
    """Mutate the target's real file by ``plan``, run cosim on it, and list what a user should never see."""
    from cosim.cli import main

    folder.mkdir(parents=True, exist_ok=True)
    path, argv, out = target.make(folder)
    text = mutate((gzip.decompress(path.read_bytes()).decode() if target.gzip else path.read_text()), plan)
    key = (target.name, hashlib.sha256(text.encode()).digest())
    if key in _DONE:  # this very mutant ran already: its outcome is that run's (a copy: campaign() adds to it)
        return dataclasses.replace(_DONE[key], problems=list(_DONE[key].problems))
    if target.gzip:
        path.write_bytes(gzip.compress(text.encode(), compresslevel=1))
    else:
        path.write_text(text)
    out.unlink(missing_ok=True)
    inputs = {p: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    cpu0 = time.process_time()
    err, std = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(std), _hang_guard(target, plan):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
        except MutantHang:
            raise
        except BaseException as exc:  # main must never let one through
            code = -1
            print(f"Traceback: {type(exc).__name__}: {exc}", file=sys.stderr)
    cpu_s = time.process_time() - cpu0
    stderr = err.getvalue()
    problems = []
    if cpu_s > 30:
        problems.append("over 30 s")
    if any(p.read_bytes() != data for p, data in inputs.items() if p.exists()) or not all(p.exists() for p in inputs):
        problems.append("input modified")
    if list(folder.glob(".*.tmp")):
        problems.append("temporary file left")
    if code == -1 or "Traceback" in stderr or "internal error" in stderr:
        problems.append("traceback")
    if code not in DOCUMENTED_EXITS and code != -1:
        problems.append(f"exit {code}")
    if any(line and not line.startswith(("cosim:", "  ")) for line in stderr.splitlines()):
        problems.append("leaked warning")
    if code == 0 and out.exists() and out.suffix in (".csv", ".parquet"):
        table = pd.read_csv(out) if out.suffix == ".csv" else pd.read_parquet(out)
        if "flags" not in table.columns:
            problems.append("table without flags")
        if "power_w" in table.columns:
            power = table["power_w"].to_numpy(dtype=float)
            if not np.isfinite(power).all() or (power < 0).any():
                problems.append("implausible power at exit 0")
    _DONE[key] = Outcome(code, stderr, problems, cpu_s)
    return dataclasses.replace(_DONE[key], problems=list(problems))


#: What a user must never see; each counted by a campaign and all expected 0
PROBLEMS = (
    "traceback",
    "leaked warning",
    "implausible power at exit 0",
    "over 30 s",
    "over 4x peak memory",
    "input modified",
    "temporary file left",
    "table without flags",
)


def random_plan(rng: random.Random) -> list[tuple[str, int, int]]:
    return [(rng.choice(OPS), rng.randrange(10**6), rng.randrange(10**6)) for _ in range(rng.randint(1, 3))]


def campaign(n: int, root: Path, seed: int = 0) -> Counter:
    """``n`` mutants spread over every target; counts of outcomes and problems.

    Memory: the process's peak RSS after every target ran unmutated is the baseline; a mutant
    that lifts the peak above 4x that counts as "over 4x peak memory".
    """
    import resource

    rng = random.Random(seed)
    counts: Counter = Counter()
    names = [t for t in TARGETS if t not in NEEDS_SHARED or NEEDS_SHARED[t].exists()]
    for name in names:
        run_mutant(TARGETS[name], root / "baseline", [])
        shutil.rmtree(root / "baseline", ignore_errors=True)
    baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    counts["baseline peak MiB"] = baseline_kib // 1024
    for k in range(n):
        target = TARGETS[names[k % len(names)]]
        outcome = run_mutant(target, root / f"m{k}", random_plan(rng))
        if resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 4 * baseline_kib:
            outcome.problems.append("over 4x peak memory")
            baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # count each excess once
        counts[f"exit {outcome.code}"] += 1
        counts["max CPU s per mutant x1000"] = max(counts["max CPU s per mutant x1000"], int(outcome.cpu_s * 1000))
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
    for key in PROBLEMS:
        print(f"  {key} total: {result.get(key, 0)}")
