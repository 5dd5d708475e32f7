"""Every writer is atomic and leaves nothing behind: a process killed (SIGKILL) while writing leaves the old
file intact (or no file under the final name), and the next write removes the killed writer's temporary file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

#: writer -> (output name, Python that writes a large ``path`` through cosim's writer)
WRITERS = {
    "csv (numpy columns)": ("t.csv", "write_table({'a': np.arange(N // 40, dtype=float), 'b': np.arange(N // 40)}, path)"),
    "csv (pandas/arrow)": ("t.csv", "write_table(pd.DataFrame({'a': np.arange(N, dtype=float) / 3, 'b': np.arange(N)}), path)"),
    "parquet": ("t.parquet", "write_table(pd.DataFrame({'a': np.random.default_rng(0).random(N), 'b': np.arange(N)}), path)"),
    "png": ("p.png", "save_figure(figure(), path, dpi=200)"),
    "svg": ("p.svg", "save_figure(figure(), path)"),
    "pdf": ("p.pdf", "save_figure(figure(), path)"),
    "model json": ("m.json", "write_atomic(path, lambda tmp: tmp.write_text(json.dumps({'beta': list(range(N // 4))}, indent=1)))"),
}

_CHILD = """\
import json, os, sys, time
from pathlib import Path
import numpy as np, pandas as pd
from cosim.output import write_atomic, write_table
from cosim.plots import pyplot, save_figure
N = {n}
path = Path(sys.argv[1])
def figure():
    fig, ax = pyplot().subplots()
    ax.plot(np.random.default_rng(0).random(min(N // 10, 5_000)))
    return fig
if sys.argv[2] == "hang":
    os.replace = lambda *a: time.sleep(3600)  # never finish: the parent's kill lands during or right after the write
{code}
"""


def _child(code: str, path: Path, mode: str, n: int) -> subprocess.Popen:
    script = textwrap.dedent(_CHILD).format(n=n, code=code)
    return subprocess.Popen([sys.executable, "-c", script, str(path), mode], stderr=subprocess.PIPE)


def _temporaries(path: Path) -> list[Path]:
    return list(path.parent.glob(f".{path.name}.*.tmp"))


@pytest.mark.parametrize("writer", list(WRITERS))
def test_sigkill_mid_write_keeps_the_old_file_and_the_next_write_cleans_up(writer, tmp_path):
    pytest.importorskip("pyarrow")
    name, code = WRITERS[writer]
    path = tmp_path / name
    path.write_bytes(b"the old output\n")
    child = _child(code, path, "hang", 2_000_000)
    deadline = time.monotonic() + 60
    while not any(t.stat().st_size for t in _temporaries(path)):
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.002)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert path.read_bytes() == b"the old output\n"  # the old file is intact
    assert len(_temporaries(path)) == 1  # the killed writer's, with its pid in the name
    again = _child(code, path, "finish", 1000)
    assert again.wait(timeout=120) == 0, again.stderr.read().decode() if again.stderr else ""
    assert _temporaries(path) == [] and path.read_bytes() != b"the old output\n"


def test_sigkill_mid_write_leaves_no_file_under_the_final_name(tmp_path):
    name, code = WRITERS["csv (pandas/arrow)"]
    path = tmp_path / name
    child = _child(code, path, "hang", 2_000_000)
    while not any(t.stat().st_size for t in _temporaries(path)):
        assert child.poll() is None
        time.sleep(0.002)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert not path.exists()


def test_a_live_writers_temporary_is_left_alone(tmp_path):
    """Only temporaries of processes that no longer run are removed: two writers of one path do not collide."""
    from cosim.output import write_atomic

    live = tmp_path / f".t.csv.{os.getppid()}.abc.tmp"
    live.write_text("another process is writing this")
    write_atomic(tmp_path / "t.csv", lambda tmp: tmp.write_text("x\n"))
    assert live.exists()


# --- a command's outputs as a set (issue 51): all appear or none do -----------------------------------------


def test_an_output_set_renames_all_or_none(tmp_path):
    from cosim.output import output_set, write_atomic

    old = {n: tmp_path / n for n in ("a.csv", "b.ptrace", "c.png")}
    for path in old.values():
        path.write_text("previous run\n")
    with pytest.raises(KeyboardInterrupt), output_set():
        write_atomic(old["a.csv"], lambda tmp: tmp.write_text("new\n"))
        write_atomic(old["b.ptrace"], lambda tmp: tmp.write_text("new\n"))
        assert old["a.csv"].read_text() == "previous run\n"  # nothing in place before the set ends
        raise KeyboardInterrupt  # interrupted before the plot
    assert all(p.read_text() == "previous run\n" for p in old.values())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.ptrace", "c.png"]  # no temporary left
    with output_set():
        for path in old.values():
            write_atomic(path, lambda tmp: tmp.write_text("new\n"))
    assert all(p.read_text() == "new\n" for p in old.values())


_INTERRUPTED_POWER = """\
import sys
import cosim.plots.cpu
def interrupted(*args, **kwargs):
    raise KeyboardInterrupt  # Ctrl-C while the plot is drawn, after the table and the ptrace were written
cosim.plots.cpu.plot_timeline = interrupted
from cosim.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_an_interrupted_power_leaves_the_previous_runs_outputs_as_they_were(tmp_path):

    run = Path(__file__).parent / "data" / "gem5-minor-sleep-1000MHz"
    outputs = {"-o": tmp_path / "p.csv", "--ptrace": tmp_path / "p.ptrace", "--plot": tmp_path / "p.png"}
    for path in outputs.values():
        path.write_text("previous run\n")
    args = ["power", str(run)] + [str(x) for kv in outputs.items() for x in kv]
    done = subprocess.run([sys.executable, "-c", _INTERRUPTED_POWER, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, done.stderr
    assert all(p.read_text() == "previous run\n" for p in outputs.values()), done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.csv", "p.png", "p.ptrace"]
