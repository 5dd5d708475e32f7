"""Every writer is atomic and leaves nothing behind: a process killed (SIGKILL) while writing leaves the old
file intact (or no file under the final name), and the next write removes the killed writer's temporary file.
Every format's writer writes a temporary and renames it (write_atomic); the kill itself is tried on two of them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
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
import numpy as np
from cosim.output import write_atomic, write_table
{imports}N = {n}
path = Path(sys.argv[1])
os.replace = lambda *a: time.sleep(3600)  # never finish: the parent's kill lands during or right after the write
{code}
"""

_FIGURE = """\
from cosim.plots import pyplot, save_figure
def figure():
    fig, ax = pyplot().subplots()
    ax.plot(np.random.default_rng(0).random(min(N // 10, 5_000)))
    return fig
"""


def _imports(code: str) -> str:
    """What the writer's code needs besides numpy and cosim.output: pandas and matplotlib only for the writers that use
    them (each costs a child about 0.3 CPU s of imports)."""
    return ("import pandas as pd\n" if "pd." in code else "") + (_FIGURE if "figure()" in code else "")


def _child(code: str, path: Path, n: int) -> subprocess.Popen:
    """A writer in a new process that hangs before its rename: the process the test kills."""
    script = _CHILD.format(imports=_imports(code), n=n, code=code)
    # -I: not the checkout's cosim (a -c script has the working folder first on sys.path), the installed one
    return subprocess.Popen([sys.executable, "-I", "-c", script, str(path)], stderr=subprocess.PIPE)


def _write_here(code: str, path: Path, n: int) -> None:
    """The same writer run to its end in this process: the next write after the kill (a process other than the killed
    one, as a new ``cosim`` would be; what it must do, remove the dead writer's temporary, depends on that alone)."""
    import json

    import numpy as np

    from cosim.output import write_atomic, write_table

    scope = {"json": json, "np": np, "write_atomic": write_atomic, "write_table": write_table, "N": n, "path": path}
    if "pd." in code:
        import pandas as pd

        scope["pd"] = pd
    if "figure()" in code:
        exec(_FIGURE, scope)
    exec(code, scope)


def _temporaries(path: Path) -> list[Path]:
    return list(path.parent.glob(f".{path.name}.*.tmp"))


# SIGKILL's outcome is write_atomic's, whatever the format: killed here for a table and a figure (a new Python each,
# about 1 CPU s), and every writer shown below to write through it (in this process)
KILLED = ["csv (pandas/arrow)", "png"]


@pytest.mark.parametrize("writer", list(WRITERS))
def test_every_writer_writes_a_temporary_beside_the_output_then_renames_it(writer, tmp_path, monkeypatch):
    """Each format's writer goes through write_atomic: its bytes land in a temporary named for this process beside
    the output, and the output holds its old bytes until one rename puts the new file in place."""
    name, code = WRITERS[writer]
    path = tmp_path / name
    path.write_bytes(b"the old output\n")
    renames, replace = [], os.replace

    def watched(src, dst):
        src, dst = Path(src), Path(dst)
        assert dst == path and path.read_bytes() == b"the old output\n"
        assert src.parent == path.parent and src.name.startswith(f".{name}.{os.getpid()}.") and src.stat().st_size > 0
        renames.append(src)
        replace(src, dst)

    monkeypatch.setattr(os, "replace", watched)
    _write_here(code, path, 1000)
    assert len(renames) == 1 and path.read_bytes() != b"the old output\n" and _temporaries(path) == []


@pytest.mark.parametrize("writer", KILLED)
def test_sigkill_mid_write_keeps_the_old_file_and_the_next_write_cleans_up(writer, tmp_path):
    pytest.importorskip("pyarrow")
    name, code = WRITERS[writer]
    path = tmp_path / name
    path.write_bytes(b"the old output\n")
    child = _child(code, path, 2_000_000)
    deadline = time.monotonic() + 60
    while not any(t.stat().st_size for t in _temporaries(path)):
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        assert time.monotonic() < deadline
        time.sleep(0.002)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert path.read_bytes() == b"the old output\n"  # the old file is intact
    assert len(_temporaries(path)) == 1  # the killed writer's, with its pid in the name
    _write_here(code, path, 1000)
    assert _temporaries(path) == [] and path.read_bytes() != b"the old output\n"


def test_sigkill_mid_write_leaves_no_file_under_the_final_name(tmp_path):
    name, code = WRITERS["csv (pandas/arrow)"]
    path = tmp_path / name
    child = _child(code, path, 2_000_000)
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


def test_an_interrupted_power_leaves_the_previous_runs_outputs_as_they_were(tmp_path, monkeypatch):
    """Ctrl-C (KeyboardInterrupt) while the plot is drawn, after the table and the ptrace were written.  The interrupt
    is raised by the plot itself, no signal, so the command runs in this process (tests/helpers.run_cosim)."""
    from helpers import run_cosim

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("cosim.plots.cpu.plot_timeline", interrupted)
    run = Path(__file__).parent / "data" / "gem5-minor-sleep-1000MHz"
    outputs = {"-o": tmp_path / "p.csv", "--ptrace": tmp_path / "p.ptrace", "--plot": tmp_path / "p.png"}
    for path in outputs.values():
        path.write_text("previous run\n")
    done = run_cosim("power", run, *[x for kv in outputs.items() for x in kv])
    assert done.returncode == 130, done.stderr
    assert all(p.read_text() == "previous run\n" for p in outputs.values()), done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.csv", "p.png", "p.ptrace"]
