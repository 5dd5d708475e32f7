"""Test helpers: paths to the shared real data, and writers of gem5-format files.

The hand-built big.LITTLE run follows the layout of gem5's fs_bigLITTLE.py
(``system.bigCluster.cpusN`` O3 CPUs, ``system.littleCluster.cpusN`` Minor CPUs,
one clock domain with DVFS levels per cluster, private L1s, a cluster L2) with
v20.1+ stat names.  Its counts are chosen by the tests, so the expected model
inputs can be worked out by hand, and obey physics: epochs tile time, no CPU
counts more cycles than its clock ticks, no core more events per cycle than it
can issue (tests/test_fixtures.py checks every invariant cosim enforces).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
GEM5_RUNS = SHARED / "data" / "gem5"
GEMSTONE = SHARED / "data" / "gemstone"
POWMON = GEMSTONE / "sample-input-data" / "asrtpm-A15-powmon-data.csv"

needs_shared = pytest.mark.skipif(not GEM5_RUNS.is_dir(), reason="../shared/data is not here")

BEGIN = "---------- Begin Simulation Statistics ----------"
END = "---------- End Simulation Statistics   ----------"


def ctrl_c_reaches_it() -> None:
    """``preexec_fn`` for a child the test will Ctrl-C: SIGINT as a terminal gives it.  A test run started in the
    background of a shell (``nohup pytest &``) ignores SIGINT, and an ignored signal stays ignored across exec."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cosim_argv(*args) -> list[str]:
    """The ``cosim`` command line; -I imports the installed cosim, never the source tree of the current folder."""
    return [sys.executable, "-I", "-m", "cosim.cli", *map(str, args)]


def run_cosim(*args, cwd=None, process: bool = False) -> subprocess.CompletedProcess:
    """The ``cosim`` command as a user runs it: its exit status, standard output and standard error.

    It runs in this process (``cosim.cli.main``, as ``python -m cosim.cli`` calls it) unless ``process`` is set or the
    command starts processes of its own (``explore``, ``--workers``, ``--scheduler``): those run in a child forked from
    the tests' fork server (:func:`cosim_in_server`), never forked from this threaded pytest worker.  A new Python costs
    about 0.4 CPU s of imports, which over the suite's ~470 commands was a third of its CPU time.  The commands that
    must be a real process (signals, start-up, pipes, the entry point itself) use :func:`cosim_argv` with
    ``subprocess``; tests/test_cli.py and tests/test_startup.py run the real one.
    """
    argv = [str(a) for a in args]
    if process:
        return subprocess.run(cosim_argv(*argv), capture_output=True, text=True, cwd=cwd, timeout=COMMAND_TIMEOUT_S)
    if _starts_processes(argv):
        return cosim_in_server(argv, cwd=cwd)
    return cosim_in_process(argv, cwd=cwd)


#: a command's limit [s] where a test runs one: far over any command's time here, under pytest-timeout's limit for
#: the whole test (pyproject.toml), so a hung command is killed with all it started and the test fails, not hangs
COMMAND_TIMEOUT_S = 240


def cosim_in_server(
    argv: list[str], *, cwd=None, env: dict[str, str] | None = None, patches: dict | None = None
) -> subprocess.CompletedProcess:
    """``cosim ARGV`` in a child of the tests' fork server (tests/zygote.py: a single-threaded Python that imported
    what explore and sweep import), with this process's environment updated by ``env``, and ``patches`` (module
    attributes: ``{"cosim.dse.sweep": {"CONNECT_S": 2.0}}``) set before the command runs; killed with everything it
    started after :data:`COMMAND_TIMEOUT_S`."""
    import os

    from zygote import Zygote

    done = Zygote.get(SERVER_PRELOAD).run(argv, timeout_s=COMMAND_TIMEOUT_S, cwd=cwd, env={**os.environ, **(env or {})}, patches=patches)
    if done.killed:
        pytest.fail(f"cosim {' '.join(argv)} still ran after {COMMAND_TIMEOUT_S} s (killed): a hang\n{done.stderr}")
    return subprocess.CompletedProcess(cosim_argv(*argv), done.exit_code, done.stdout, done.stderr)


#: what the fork server imports once: what ``cosim explore`` and ``cosim sweep`` import (Dask's ``distributed`` is
#: left to the few commands that use it)
SERVER_PRELOAD = ("pandas", "optuna", "matplotlib.pyplot", "cosim.explore.driver", "cosim.dse.sweep")


def _starts_processes(argv: list[str]) -> bool:
    if argv[:1] == ["explore"] or "--scheduler" in argv:
        return True
    for i, a in enumerate(argv):
        value = a.partition("=")[2] if a.startswith("--workers=") else (argv[i + 1] if a == "--workers" and i + 1 < len(argv) else None)
        if value is not None and value != "1":
            return True
    return False


def cosim_in_process(argv: list[str], *, cwd=None) -> subprocess.CompletedProcess:
    """``cosim ARGV`` run by ``cosim.cli.main`` in this process, whatever it starts (:func:`run_cosim` decides when a
    test wants this): the exit status and both streams as a finished process gives them."""
    from cosim.cli import main

    return in_this_process(lambda: main(argv), cwd=cwd, args=cosim_argv(*argv))


def in_this_process(run, *, cwd=None, args=None) -> subprocess.CompletedProcess:
    """``run()`` as a program's main: in ``cwd``, its standard streams captured, the warnings' filters and hook it sets
    put back after it; its exit status as the interpreter gives it (what it returns, None as 0; a SystemExit's code;
    an uncaught exception's traceback printed and 1).  ``args``: the command line the result names."""
    import contextlib
    import io
    import os
    import traceback
    import warnings

    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            if cwd is not None:
                os.chdir(cwd)
            status = run() or 0
        except SystemExit as stop:  # argparse: --help, a usage error; sys.exit
            status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            if not isinstance(stop.code, int | None):
                print(stop.code, file=sys.stderr)
        except Exception:  # what the interpreter would print for an uncaught exception
            traceback.print_exc()
            status = 1
        finally:
            os.chdir(here)
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


#: Ctrl-C inside a process pool's first submit, after it forked its workers and before the thread that feeds them
#: started (where py-spy found a hung explore driver's worker); needs the pool's own ``_launch_processes``
CTRL_C_IN_POOL_START = (
    "import concurrent.futures as cf\n"
    "def interrupted(self):\n"
    "    self._launch_processes()\n"
    "    raise KeyboardInterrupt\n"
    "cf.ProcessPoolExecutor._start_executor_manager_thread = interrupted\n"
)


def pool_workers_left(code: str) -> int:
    """How many child processes are still alive 10 s after ``code`` ran with :data:`CTRL_C_IN_POOL_START` (``code``
    handles the KeyboardInterrupt as cosim does).  In a new Python: a pool forks, and a pytest worker is a threaded
    process; the children left are killed then, so a failing run still ends.  Skips where the pool has no
    ``_launch_processes`` (a Python whose pool starts its workers otherwise)."""
    from concurrent.futures import ProcessPoolExecutor

    if not hasattr(ProcessPoolExecutor, "_launch_processes"):
        pytest.skip("this Python's process pool starts its workers otherwise")
    script = (
        CTRL_C_IN_POOL_START
        + code
        + (
            "\nimport multiprocessing, time\n"
            "deadline = time.monotonic() + 10\n"
            "while multiprocessing.active_children() and time.monotonic() < deadline:\n"
            "    time.sleep(0.05)\n"
            "print(len(multiprocessing.active_children()))\n"
            "for process in multiprocessing.active_children():\n"
            "    process.kill()\n"
        )
    )
    done = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def run_folder(tmp_path_factory) -> Path:
    """The test run's own temporary folder, shared by its xdist workers (each worker's folder is inside it)."""
    import os

    root = tmp_path_factory.getbasetemp()
    return root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root


def once_a_run(tmp_path_factory, name: str, compute):
    """``compute()`` once a test run, however many xdist workers need it: the first leaves its value (pickled) beside
    the workers' temporary folders, under a lock a worker needing it meanwhile waits on, and the others read it."""
    import fcntl
    import pickle

    root = run_folder(tmp_path_factory)
    path = root / f"{name}.pickle"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            part = path.with_suffix(".part")
            part.write_bytes(pickle.dumps(compute()))
            part.replace(path)
        return pickle.loads(path.read_bytes())


#: --model/--cluster arguments pricing the hand-built big.LITTLE run (A15 model for big, A7 for LITTLE)
BIGLITTLE_ARGS = (
    "--model",
    "cortex-a15-walker2017",
    "--cluster",
    "big=system.bigCluster",
    "--model",
    "cortex-a7-gemstone2018",
    "--cluster",
    "little=system.littleCluster",
)


def gem5_line(name: str, value: float | str, desc: str = "(Count)") -> str:
    """One stats.txt line as gem5 prints it: name padded to 40, value right-aligned in 12."""
    text = value if isinstance(value, str) else (f"{int(value)}" if float(value).is_integer() else f"{value:.6f}")
    return f"{name:<40} {text:>12}                       # {desc}"


def gem5_dump(stats: dict[str, float | str], *, begin_suffix: str = "") -> str:
    lines = ["", BEGIN + begin_suffix]
    lines += [gem5_line(k, v) for k, v in stats.items()]
    lines += ["", END, ""]
    return "\n".join(lines)


def write_stats(path: Path, dumps: list[dict[str, float | str]], **kw) -> Path:
    path.write_text("".join(gem5_dump(d, **kw) for d in dumps))
    return path


BIG_PERIODS = (556, 1000)  # 1.8 GHz (gem5 rounds 555.6 ticks up) and 1.0 GHz, in ps ticks
LITTLE_PERIODS = (714, 1000)  # 1.4 GHz and 1.0 GHz


def biglittle_config() -> str:
    """config.ini of a 2 big + 2 LITTLE system, as gem5 writes it (abridged to what cosim reads)."""
    sections = [
        ("root", {"type": "Root", "children": "system", "full_system": "true"}),
        ("system", {"type": "ArmSystem", "children": "bigCluster clk_domain littleCluster membus voltage_domain"}),
        ("system.clk_domain", {"type": "SrcClockDomain", "clock": "1000", "voltage_domain": "system.voltage_domain"}),
        ("system.voltage_domain", {"type": "VoltageDomain", "voltage": "1.0"}),
        ("system.membus", {"type": "SystemXBar", "cpu_side_ports": "system.bigCluster.l2.mem_side system.littleCluster.l2.mem_side"}),
    ]
    for cluster, cpu_type, periods in (("bigCluster", "ArmO3CPU", BIG_PERIODS), ("littleCluster", "ArmMinorCPU", LITTLE_PERIODS)):
        base = f"system.{cluster}"
        sections += [
            (base, {"type": "SubSystem", "children": "clk_domain cpus0 cpus1 l2 toL2Bus voltage_domain"}),
            (
                f"{base}.clk_domain",
                {
                    "type": "SrcClockDomain",
                    "clock": " ".join(map(str, periods)),
                    "domain_id": "0" if cluster == "bigCluster" else "1",
                    "init_perf_level": "0",
                    "voltage_domain": f"{base}.voltage_domain",
                },
            ),
            (f"{base}.voltage_domain", {"type": "VoltageDomain", "voltage": "1.0 1.0"}),
            (
                f"{base}.l2",
                {
                    "type": "Cache",
                    "size": "1048576" if cluster == "bigCluster" else "524288",
                    "cpu_side": f"{base}.toL2Bus.mem_side_ports[0]",
                    "mem_side": "system.membus.cpu_side_ports[0]",
                },
            ),
            (
                f"{base}.toL2Bus",
                {
                    "type": "L2XBar",
                    "mem_side_ports": f"{base}.l2.cpu_side",
                    "cpu_side_ports": " ".join(f"{base}.cpus{i}.{c}.mem_side" for i in range(2) for c in ("icache", "dcache")),
                },
            ),
        ]
        for i in range(2):
            cpu = f"{base}.cpus{i}"
            sections += [
                (
                    cpu,
                    {
                        "type": cpu_type,
                        "children": "dcache icache",
                        "clk_domain": f"{base}.clk_domain",
                        "cpu_id": str(i),
                        "switched_out": "false",
                        "dcache_port": f"{cpu}.dcache.cpu_side",
                        "icache_port": f"{cpu}.icache.cpu_side",
                    },
                ),
                (
                    f"{cpu}.dcache",
                    {
                        "type": "Cache",
                        "size": "32768",
                        "cpu_side": f"{cpu}.dcache_port",
                        "mem_side": f"{base}.toL2Bus.cpu_side_ports[{2 * i + 1}]",
                    },
                ),
                (
                    f"{cpu}.icache",
                    {
                        "type": "Cache",
                        "size": "32768",
                        "cpu_side": f"{cpu}.icache_port",
                        "mem_side": f"{base}.toL2Bus.cpu_side_ports[{2 * i}]",
                    },
                ),
            ]
    return "\n".join(f"[{name}]\n" + "\n".join(f"{k}={v}" for k, v in params.items()) + "\n" for name, params in sections)


EPOCH_TICKS = 1_000_000_000  # 1 ms at 1e12 ticks/s
#: events per active cycle of each CPU (the same on every CPU; the active share differs)
BIG_PER_CYCLE = {
    "commitStats0.numInsts": 0.8,
    "executeStats0.numInsts": 0.9,
    "statIssuedInstType_0::IntAlu": 0.5,
    "statIssuedInstType_0::IntMult": 0.02,
    "dcache.overallAccesses::total": 0.3,
    "dcache.overallMshrMisses::total": 0.009,
    "icache.overallAccesses::total": 0.25,
}
LITTLE_PER_CYCLE = {
    "commitStats0.numInsts": 0.57,
    "commitStats0.committedInstType::IntAlu": 0.36,
    "dcache.overallAccesses::total": 0.21,
    "dcache.overallMshrMisses::total": 0.0043,
    "icache.overallAccesses::total": 0.17,
}


def biglittle_dumps(*, big_periods: tuple[int, ...] = (BIG_PERIODS[0], BIG_PERIODS[0], BIG_PERIODS[1])) -> list[dict[str, float]]:
    """Three 1 ms epochs that tile time; by default the big cluster drops from 1.8 GHz to 1.0 GHz in the last one.

    The counts have the shape of gem5 v24's SE runs (``test_fixtures.py`` checks it against a recorded one): each CPU
    is in power state ON the whole epoch (``power_state.pwrStateResidencyTicks::ON`` = the epoch's ticks: SE mode
    has no WFI) and counts every cycle its clock ticks (``numCycles`` = f * t), of which 10-40 % (epoch + CPU vary
    it) its pipeline sat stopped waiting on memory (``idleCycles``; a Minor CPU's ``tickCycles`` are the rest).  Those
    stalled cycles are clocked: the cycle counter counts them.  Its events are fixed multiples of its ticked
    cycles, within what the core can issue per cycle.
    """
    dumps = []
    for epoch, big_period in enumerate(big_periods):
        d: dict[str, float] = {
            "simSeconds": EPOCH_TICKS / 1e12,
            "simTicks": EPOCH_TICKS,
            "finalTick": EPOCH_TICKS * (epoch + 1),
            "simFreq": 1e12,
            "system.bigCluster.clk_domain.clock": big_period,
            "system.littleCluster.clk_domain.clock": LITTLE_PERIODS[0],
        }
        for cluster, period, per_cycle in (
            ("bigCluster", big_period, BIG_PER_CYCLE),
            ("littleCluster", LITTLE_PERIODS[0], LITTLE_PER_CYCLE),
        ):
            cycles = EPOCH_TICKS // period  # whole clock periods in the epoch
            for i in range(2):
                cpu = f"system.{cluster}.cpus{i}"
                idle = cycles * (epoch + 1 + i) // 10  # 10 % to 40 % stalled
                d |= {f"{cpu}.numCycles": cycles, f"{cpu}.idleCycles": idle, f"{cpu}.power_state.pwrStateResidencyTicks::ON": EPOCH_TICKS}
                if cluster == "littleCluster":  # Minor: numCycles = tickCycles + idleCycles
                    d[f"{cpu}.tickCycles"] = cycles - idle
                d |= {f"{cpu}.{stat}": round(rate * (cycles - idle)) for stat, rate in per_cycle.items()}
        for cluster, scale in (("bigCluster", 1), ("littleCluster", 0.5)):
            l2 = f"system.{cluster}.l2"
            d |= {
                f"{l2}.overallAccesses::total": 40_000 * scale * (epoch + 1),
                f"{l2}.overallMisses::total": 5_000 * scale * (epoch + 1),
                f"{l2}.writebacks::total": 1_000 * scale * (epoch + 1),
                f"{l2}.ReadSharedReq.accesses::total": 30_000 * scale * (epoch + 1),
                f"{l2}.ReadCleanReq.accesses::total": 6_000 * scale * (epoch + 1),
            }
        dumps.append(d)
    return dumps


def write_biglittle_run(folder: Path) -> Path:
    """Write config.ini and stats.txt of the hand-built run into ``folder``; returns the stats path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.ini").write_text(biglittle_config())
    return write_stats(folder / "stats.txt", biglittle_dumps())


# --- the bundled real gem5 (../shared/tools/gem5): small runs made inside the tests ---------------

GEM5 = SHARED / "tools" / "gem5"
needs_gem5 = pytest.mark.skipif(not (GEM5 / "gem5").exists(), reason="../shared/tools/gem5 is not here")
SE_CLUSTER = REPO / "gem5_scripts" / "examples" / "se_cluster.py"
_RUNS: dict[tuple, Path] = {}


def gem5_run(
    tmp_root: Path,
    *,
    cpu: str,
    levels: int = 2,
    cores: int = 1,
    freq: str = "1GHz",
    size: int = 3,
    epoch: str = "100us",
    config: Path = SE_CLUSTER,
    extra: tuple[str, ...] = (),
    extra_args: tuple[str, ...] = (),
) -> Path:
    """Run the bundled gem5 once per argument set (cached for the session); the output folder."""
    key = (cpu, levels, cores, freq, size, epoch, str(config), extra, extra_args)
    if key not in _RUNS:
        out = tmp_root / f"gem5-{len(_RUNS)}-{cpu}-{levels}"
        args = [str(GEM5 / "gem5"), f"--outdir={out}", *extra, str(config)]  # extra: gem5's own options
        if config == SE_CLUSTER:
            args += ["--cpu", cpu, "--levels", str(levels), "--cores", str(cores), "--freq", freq, "--epoch", epoch]
        args += [*extra_args, "--", str(GEM5 / "workloads" / "phases.aarch64"), str(size)]
        result = subprocess.run(args, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        _RUNS[key] = out
    return _RUNS[key]
