"""Dask faults in cosim sweep: a killed worker, a killed scheduler and an unreachable one give every run a row or
a reason, and a one-line error within 30 s, with the documented exit status (docs/reference/outputs.md)."""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import pandas as pd
import pytest
from helpers import REPO

# find_spec, not importorskip: collection on every xdist worker would import distributed for nothing
pytestmark = pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="distributed is not installed")

DEMO = REPO / "traces" / "cosim-v24-se-biglittle-1800-1400MHz"
ARGS = ("--model", "cortex-a15-walker2017", "--cluster", "big=system.bigCluster")
N_RUNS = 300  # enough that a kill 6 s in finds runs still to price, on a fast machine too


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dask(*argv) -> subprocess.Popen:
    # -I: -m would put the working folder (the checkout) first on sys.path, and a worker would unpickle its tasks with
    # the checkout's cosim, not the installed one (without its compiled stats scanner on a non-editable install)
    return subprocess.Popen(
        [sys.executable, "-I", "-m", "distributed.cli.dask_" + argv[0], *argv[1:]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


@pytest.fixture
def cluster(tmp_path):
    """A scheduler and one worker process (no nanny, so a killed worker stays dead), as on a real cluster."""
    port = _free_port()
    scheduler = _dask("scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard")
    worker = _dask("worker", f"tcp://127.0.0.1:{port}", "--nthreads", "1", "--no-nanny", "--no-dashboard")
    deadline = time.monotonic() + 60
    while True:
        try:
            from distributed import Client

            with Client(f"tcp://127.0.0.1:{port}", timeout="5s") as client:
                if client.scheduler_info()["workers"]:
                    break
        except OSError:
            pass
        assert time.monotonic() < deadline, "the Dask test cluster did not start"
        time.sleep(0.5)
    yield f"tcp://127.0.0.1:{port}", scheduler, worker
    for p in (worker, scheduler):
        p.kill()
        p.wait()


def _sweep(*args, connect_s: float = 10.0, no_worker_s: float = 15.0) -> list[str]:
    """``cosim sweep`` as a user runs it, with the waits cosim gives a lost cluster shortened from its defaults
    (cosim.dse.sweep.CONNECT_S, NO_WORKER_S): the tests check the answer, not how long cosim waits before giving it."""
    code = (
        f"import sys; from cosim.dse import sweep; sweep.CONNECT_S = {connect_s!r}; sweep.NO_WORKER_S = {no_worker_s!r}; "
        "from cosim.cli import main; sys.exit(main())"
    )
    return [sys.executable, "-I", "-c", code, "sweep", *map(str, args)]


def _runs(tmp_path):
    """``N_RUNS`` copies of the bundled real run (about a second of CPU each to price)."""
    for i in range(N_RUNS):
        run = tmp_path / "runs" / f"run{i:03d}"
        run.mkdir(parents=True)
        for name in ("stats.txt.gz", "config.ini"):
            os.symlink(DEMO / name, run / name)
    return tmp_path / "runs"


@pytest.mark.parametrize("victim", ["worker", "scheduler"])
def test_a_process_killed_mid_sweep_gives_every_run_a_row_or_a_reason(cluster, victim, tmp_path):
    address, scheduler, worker = cluster
    out = tmp_path / "s.csv"
    sweep = subprocess.Popen(
        _sweep(_runs(tmp_path), *ARGS, "--scheduler", address, "--progress", "-o", out, no_worker_s=3.0),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    # killed once it has priced a few runs (its progress says N/300: tqdm's bar, or plain lines without tqdm), however
    # loaded the machine; a sweep that ends first, or says nothing for 120 s, is killed there (its outcome still judged)
    chunks: list[str] = []
    priced = threading.Event()

    def read() -> None:
        for chunk in iter(lambda: sweep.stderr.read(64), ""):
            chunks.append(chunk)
            if any(int(n) >= 2 for n in re.findall(rf"(\d+)/{N_RUNS}\b", "".join(chunks)[-4000:])):
                priced.set()
        priced.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    priced.wait(timeout=120)
    os.kill((worker if victim == "worker" else scheduler).pid, signal.SIGKILL)
    sweep.wait(timeout=120)  # it ends (a hang fails here), without a wall-clock bound a load breaks
    reader.join(timeout=30)
    stderr = "".join(chunks)
    assert "Traceback" not in stderr and "internal error" not in stderr
    errors = [line for line in stderr.splitlines() if line.startswith("cosim: error:")]
    if sweep.returncode == 3:  # some runs priced: the table has every run, the others with their reason
        table = pd.read_csv(out, keep_default_na=False)
        assert sorted(table["run"]) == [f"run{i:03d}" for i in range(N_RUNS)]
        failed = table[table["error"] != ""]
        assert len(failed) >= 1 and len(errors) == len(failed)
    else:  # nothing priced: exit 2, nothing written, a reason per run and one summary line
        assert sweep.returncode == 2, stderr
        assert not out.exists() and len(errors) == N_RUNS + 1
    assert all(any(why in e for why in ("no Dask worker left", "scheduler was lost", "worker failed", "none of the")) for e in errors), (
        stderr
    )


def test_an_unreachable_scheduler_is_one_line_not_a_hang(tmp_path):
    """Refused or unroutable: one line, exit 2 (the client gives up after its timeout, cut here from 10 s to 2 s).  The
    command runs in a child of the tests' fork server (helpers.cosim_in_server: a new Python per address was most of
    this test's CPU; Dask's threads stay out of the test's process), which kills it as a hang after 240 s, a limit a
    loaded machine cannot reach."""
    from helpers import cosim_in_server

    runs = _runs(tmp_path)
    for address in ("tcp://127.0.0.1:1", "tcp://10.255.255.1:8786"):  # refused; unroutable (no answer at all)
        argv = ["sweep", str(runs), *ARGS, "--scheduler", address, "-o", str(tmp_path / "x.csv")]
        result = cosim_in_server(argv, patches={"cosim.dse.sweep": {"CONNECT_S": 2.0}})
        assert result.returncode == 2 and "no Dask scheduler answers there" in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "x.csv").exists()
