"""Hostile inputs, each through the real ``cosim`` command in a child process: time and peak memory.

Each child is forked from a Python that has imported what that command imports on its unmutated input (see
:func:`run_cosim`), and the unmutated input's peak is measured the same way.

The files are built in a temporary folder (never committed): a 500 MB single line, a gzip bomb
inflating to more than 10 GB, 10 million tiny dumps, 100,000 CPUs in a config, deeply nested JSON,
1e999 and -0 for every number, NUL bytes, invalid UTF-8.  A one-line refusal is a fine answer;
what must never happen is a traceback, a run over 30 s, or a peak memory over 4x that of the
unmutated input.  ``python tests/hostile.py`` prints the table; ``--scale 0.01`` makes every file
a hundredth as big (tests/test_fuzz.py runs that).
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fuzz import DEMO_RUN, POWMON, TRACES, _stats_text
from zygote import Zygote

LIMIT_S = 30.0
MEMORY_FACTOR = 4.0
BEGIN = "---------- Begin Simulation Statistics ----------"
END = "---------- End Simulation Statistics   ----------"


@dataclass
class Result:
    case: str
    code: int
    message: str
    wall_s: float
    cpu_s: float
    peak_mib: float
    problems: list[str]


def run_cosim(
    argv: list, *, timeout_s: float = 120.0, preload: tuple[str, ...] = (), modules: Path | None = None
) -> tuple[int, str, float, float, float]:
    """``cosim ARGV`` in a child process: exit status, stderr, wall [s], CPU [s] (user+sys) and peak RSS [MiB].

    The child is forked from a started Python that imported ``cosim.cli`` and the modules ``preload`` names (a fork
    server, :class:`zygote.Zygote`, one for each ``preload``): the modules the command imported on its unmutated input
    (``modules``: the file the names it imported are written to; :func:`baselines`), so it starts about where
    a new ``python -m cosim.cli`` stands once it has imported them; its peak is held to that command's baseline
    measured the same way.  The server's import time is added to each child's wall and CPU: they are what a new Python
    would take.  A new Python a command cost 0.1-0.5 CPU s of imports, most of a command on the hundredth-size files."""
    done = Zygote.get(tuple(preload)).run(argv, timeout_s=timeout_s, capture_stdout=False, modules=modules is not None)
    if modules is not None:
        modules.write_text(json.dumps(done.modules))
    return done.exit_code, done.stderr, done.wall_s, done.cpu_s, done.peak_mib


def _run_folder(folder: Path, stats_text: str | bytes, name: str = "stats.txt") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(DEMO_RUN / "config.ini", folder / "config.ini")
    path = folder / name
    path.write_bytes(stats_text if isinstance(stats_text, bytes) else stats_text.encode())
    return path


def _single_line(root: Path, scale: float) -> list:
    path = root / "line" / "stats.txt"
    path.parent.mkdir(parents=True)
    shutil.copy(DEMO_RUN / "config.ini", path.parent / "config.ini")
    block = b"x" * (1 << 20)
    with open(path, "wb") as f:
        for _ in range(int(500 * scale)):
            f.write(block)
    return [("power", path, "-o", root / "o.csv"), ("read", path, "-o", root / "o.csv"), ("gpu", path, "-o", root / "o.csv"),
            ("apply", "cortex-a15-walker2017", path, "-o", root / "o.csv")]  # fmt: skip


def _gzip_bomb(root: Path, scale: float) -> list:
    """gzip members of 100 MB of newlines each, concatenated (gzip reads them as one stream): over 10 GB inflated."""
    member = gzip.compress(b"\n" * (100 << 20), compresslevel=9)
    path = root / "bomb" / "stats.txt.gz"
    path.parent.mkdir(parents=True)
    shutil.copy(DEMO_RUN / "config.ini", path.parent / "config.ini")
    with open(path, "wb") as f:
        f.write(gzip.compress(_stats_text().encode()))  # a real dump first: the bomb is in the middle of a run
        for _ in range(max(1, int(103 * scale))):
            f.write(member)
    return [("power", path, "-o", root / "o.csv"), ("read", path, "-o", root / "o.csv")]


def _tiny_dumps(root: Path, scale: float) -> list:
    dump = f"\n{BEGIN}\nsimSeconds 0.000001 # (Second)\nsimTicks 1000000 # (Tick)\n{END}\n".encode()
    path = root / "tiny" / "stats.txt"
    path.parent.mkdir(parents=True)
    shutil.copy(DEMO_RUN / "config.ini", path.parent / "config.ini")
    with open(path, "wb") as f:
        for _ in range(max(1, int(100 * scale))):
            f.write(dump * 100_000)
    return [("power", path, "-o", root / "o.csv"), ("read", path, "-o", root / "o.csv")]


def _many_cpus(root: Path, scale: float) -> list:
    n = max(2, int(100_000 * scale))
    lines = ["[root]", "type=Root", "children=system", "full_system=false", "", "[system]", "type=System",
             "children=clk_domain " + " ".join(f"cpu{i}" for i in range(n)), "", "[system.clk_domain]",
             "type=SrcClockDomain", "clock=500", "voltage_domain=system.voltage_domain", ""]  # fmt: skip
    for i in range(n):
        lines += [f"[system.cpu{i}]", "type=ArmO3CPU", "clk_domain=system.clk_domain", "switched_out=false", ""]
    folder = root / "cpus"
    folder.mkdir()
    (folder / "config.ini").write_text("\n".join(lines))
    stats = folder / "stats.txt"
    stats.write_text(f"\n{BEGIN}\nsimSeconds 0.001 # (Second)\nsimTicks 1000000000 # (Tick)\nsimFreq 1000000000000 # (Tick/Second)\n"
                     + "".join(f"system.cpu{i}.numCycles 1000 # (Cycle)\n" for i in range(n)) + f"{END}\n")  # fmt: skip
    return [("power", stats, "-o", root / "o.csv")]


def _nested_json(root: Path, scale: float) -> list:
    depth = max(100, int(1_000_000 * scale))
    text = "[" * depth + "]" * depth
    folder = root / "json"
    folder.mkdir()
    stats = folder / "stats.txt"
    stats.write_text(_stats_text())
    (folder / "config.json").write_text('{"system": ' + text + "}")
    (folder / "model.json").write_text('{"schema": "cosim-model/1", "x": ' + text + "}")
    (folder / "spec.json").write_text(text)
    side = root / "side"
    shutil.copytree(folder, side)
    (side / "config.json").unlink()
    shutil.copy(DEMO_RUN / "config.ini", side / "config.ini")
    (side / "cosim-run.json").write_text('{"clusters": ' + text + "}")
    return [("power", stats, "-o", root / "o.csv"), ("power", side / "stats.txt", "--model", folder / "model.json", "-o", root / "o.csv"),
            ("power", side / "stats.txt", "-o", root / "o.csv"),
            ("fit-rail", TRACES / "cosim-dct-activity.csv", "--spec", folder / "spec.json", "-o", root / "r.json")]  # fmt: skip


def _numbers(value: str) -> Callable[[Path, float], list]:
    def make(root: Path, scale: float) -> list:
        number = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
        folder = root / f"n{value}"
        stats = _run_folder(folder, number.sub(value, _stats_text()))
        log = folder / "log.txt"
        log.write_text(number.sub(value, (TRACES / "cosim-nvprof-dct.txt").read_text()))
        cfg = folder / "cfg"
        _run_folder(cfg, _stats_text())
        (cfg / "config.ini").write_text(re.sub(r"=(\d+(?:\.\d+)?)\b", f"={value}", (DEMO_RUN / "config.ini").read_text()))
        return [("power", stats, "-o", root / "o.csv"), ("whatif", stats, "-o", root / "o.csv"), ("gpu", log, "-o", root / "o.csv"),
                ("power", cfg / "stats.txt", "-o", root / "o.csv")]  # fmt: skip

    return make


def _bytes(insert: bytes, name: str) -> Callable[[Path, float], list]:
    def make(root: Path, scale: float) -> list:
        folder = root / name
        text = _stats_text().encode()
        stats = _run_folder(folder, text.replace(b"\n", insert + b"\n", 200).replace(b"system.", b"sys" + insert + b"tem.", 50))
        log = folder / "log.txt"
        log.write_bytes((TRACES / "cosim-nvprof-dct.txt").read_bytes().replace(b",", insert + b",", 20))
        config = folder / "c" / "config.ini"
        _run_folder(config.parent, text)
        config.write_bytes((DEMO_RUN / "config.ini").read_bytes().replace(b"type=", b"type=" + insert, 30))
        return [("power", stats, "-o", root / "o.csv"), ("read", log, "-o", root / "o.csv"), ("gpu", log, "-o", root / "o.csv"),
                ("power", config.parent / "stats.txt", "-o", root / "o.csv")]  # fmt: skip

    return make


CASES: dict[str, Callable[[Path, float], list]] = {
    "500 MB single line": _single_line,
    "gzip bomb (>10 GB inflated)": _gzip_bomb,
    "10 million tiny dumps": _tiny_dumps,
    "100,000 CPUs in a config": _many_cpus,
    "deeply nested JSON": _nested_json,
    "1e999 for every number": _numbers("1e999"),
    "-0 for every number": _numbers("-0"),
    "NUL bytes": _bytes(b"\x00", "nul"),
    "invalid UTF-8": _bytes(b"\xff\xfe", "utf8"),
}


def baselines(root: Path) -> dict[str, tuple[float, list[str]]]:
    """Each command on its unmutated real input: peak memory [MiB] and the modules it imported (what its hostile runs'
    fork server preloads); other commands get the largest peak and a server with cosim.cli alone."""
    folder = root / "baseline"
    stats = _run_folder(folder, _stats_text())
    nvprof = TRACES / "cosim-nvprof-dct.txt"
    commands = {
        "power": ("power", stats, "-o", root / "b.csv"),
        "whatif": ("whatif", stats, "-o", root / "b.csv"),
        "read": ("read", nvprof, "-o", root / "b.csv"),
        "gpu": ("gpu", nvprof, "-o", root / "b.csv"),
    }
    if POWMON.exists():
        commands["apply"] = ("apply", "cortex-a15-walker2017", POWMON, "--label", "A15", "-o", root / "b.csv")
    imported = {}
    for name, argv in commands.items():
        modules = folder / f"{name}.modules.json"
        run_cosim(list(argv), modules=modules)  # from the server with cosim.cli alone: what the command imports
        imported[name] = json.loads(modules.read_text())
    # one server for the commands that import pandas (their module sets differ by a few small modules; a server
    # costs the imports of a new Python), one for each other (power: numpy alone, a third of their peak)
    pandas = list(dict.fromkeys(m for name in commands if "pandas" in imported[name] for m in imported[name]))
    result = {}
    for name, argv in commands.items():
        preload = pandas if "pandas" in imported[name] else imported[name]
        # the peak as the hostile runs measure theirs, forked from the same server: a forked child's resident memory
        # counts the server's own pages but its shared libraries' only as it touches them, 25-30 MiB below a new
        # Python's peak on the same work (a stricter 4x than a new Python's peak gave)
        result[name] = (run_cosim(list(argv), preload=tuple(preload))[4], preload)
    shutil.rmtree(folder)
    return result


_BASELINES: dict[str, tuple[float, list[str]]] = {}


def campaign(
    root: Path, *, scale: float = 1.0, cases: list[str] | None = None, base: dict[str, tuple[float, list[str]]] | None = None
) -> tuple[dict[str, float], list[Result]]:
    """Every case (or ``cases``) at ``scale``: the per-command peaks it was held to, and a result per command.
    ``base``: :func:`baselines` as computed already (tests/test_fuzz.py shares one between its processes)."""
    if base is None:
        if not _BASELINES:  # once per process: they do not depend on the case
            _BASELINES.update(baselines(root))
        base = _BASELINES
    bases = {name: peak for name, (peak, _) in base.items()}
    results = []
    for case in cases or list(CASES):
        work = root / "case"
        work.mkdir()
        t0 = time.perf_counter()
        commands = CASES[case](work, scale)
        build_s = time.perf_counter() - t0
        for argv in commands:
            preload = tuple(base[str(argv[0])][1]) if str(argv[0]) in base else ()
            code, stderr, wall, cpu, peak = run_cosim(list(argv), preload=preload)
            problems = []
            if code not in (0, 2, 3) or "Traceback" in stderr or "internal error" in stderr:
                problems.append("traceback")
            if any(line and not line.startswith(("cosim:", "  ")) for line in stderr.splitlines()):
                problems.append("leaked warning")
            if cpu > LIMIT_S or wall > 4 * LIMIT_S:
                problems.append("over 30 s")
            if peak > MEMORY_FACTOR * bases.get(str(argv[0]), max(bases.values())):
                problems.append("over 4x peak memory")
            errors = [line for line in stderr.splitlines() if line.startswith("cosim: error:")]
            message = (errors[0] if errors else stderr.strip().splitlines()[-1] if stderr.strip() else "").replace(str(work), "…")
            results.append(Result(f"{case}: cosim {argv[0]}", code, message[:160], wall, cpu, peak, problems))
            print(f"  {results[-1]}", file=sys.stderr, flush=True)
        print(f"  (built {case} in {build_s:.1f} s)", file=sys.stderr)
        shutil.rmtree(work)
    return bases, results


if __name__ == "__main__":
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="file sizes relative to the stated ones (default 1)")
    ap.add_argument("--case", action="append", choices=list(CASES), help="only these cases")
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bases, results = campaign(Path(tmp), scale=opts.scale, cases=opts.case)
    print("peak memory on the unmutated input [MiB]: " + ", ".join(f"{k} {v:.0f}" for k, v in bases.items()))
    print(f"limits: {LIMIT_S:.0f} s CPU, {MEMORY_FACTOR:g}x the command's peak on its unmutated input")
    print("| case | exit | wall s | CPU s | peak MiB | problems | message |\n|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r.case} | {r.code} | {r.wall_s:.1f} | {r.cpu_s:.1f} | {r.peak_mib:.0f} | {', '.join(r.problems) or '-'} | {r.message} |")
    print(f"problems: {sum(len(r.problems) for r in results)}")
    sys.exit(1 if any(r.problems for r in results) else 0)
