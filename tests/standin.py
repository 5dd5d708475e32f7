"""The gem5 stand-in of cosim explore's tests: a shell script writing a real stats.txt and config.ini (tests/gem5_standin)."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STANDIN = REPO / "tests" / "gem5_standin"
BUNDLED = REPO / "traces" / "cosim-v24-se-biglittle-1800-1400MHz"  # a real gem5 v24 big.LITTLE run
WORKLOAD = REPO.parent / "shared" / "tools" / "gem5" / "workloads" / "phases.aarch64"


def standin_run(folder: Path, dumps: int = 3) -> Path:
    """The bundled run's config.ini and its first ``dumps`` stats dumps, as the stand-in copies them."""
    folder.mkdir(parents=True, exist_ok=True)
    lines, seen = [], 0
    with gzip.open(BUNDLED / "stats.txt.gz", "rt") as f:
        for line in f:
            lines.append(line)
            if line.startswith("---------- End"):
                seen += 1
                if seen == dumps:
                    break
    (folder / "stats.txt").write_text("".join(lines))
    shutil.copy(BUNDLED / "config.ini", folder / "config.ini")
    return folder


def design(folder: Path, parameters: str, *, workload: Path | None = None, extra: str = "") -> Path:
    """A design file for the stand-in; ``parameters`` is the body of [parameters]."""
    workload = workload or STANDIN / "config.py"  # any file: the stand-in does not run it
    path = folder / "design.toml"
    path.write_text(
        f'[gem5]\nbinary = "{STANDIN / "gem5"}"\nconfig = "{STANDIN / "config.py"}"\nargs = ["--epoch", "100us"]\n'
        f'workload = ["{workload}", "5"]\n{extra}\n[parameters]\n{parameters}\n'
    )
    return path


def explore_cmd(*args) -> list[str]:
    from helpers import cosim_argv

    return cosim_argv("explore", *args)


def explore(*args, env: dict[str, str], cwd=None, process: bool = False) -> subprocess.CompletedProcess:
    """``cosim explore`` with the stand-in's ``env``: in a child of the tests' fork server (helpers.cosim_in_server:
    its pool's workers are forked from a single-threaded Python, never from this threaded pytest worker), or as a
    process of its own where the test needs one (another driver's pid beside this test's, a signal).  A new Python
    per driver was about 1 CPU s of imports (optuna, pandas, matplotlib), most of this file's time."""
    from helpers import COMMAND_TIMEOUT_S, cosim_in_server

    env = {**STANDIN_ENV, **env}
    if process:
        return subprocess.run(
            explore_cmd(*args), capture_output=True, text=True, env={**os.environ, **env}, cwd=cwd, timeout=COMMAND_TIMEOUT_S
        )
    return cosim_in_server(["explore", *map(str, args)], cwd=cwd, env=env)


#: the Python the stand-in runs its config's --help and replay.py with: this one, not a ``python3`` found on PATH (a
#: pyenv shim there is a bash script that costs about 0.1 CPU s a call)
STANDIN_ENV = {"COSIM_STANDIN_PYTHON": sys.executable}


def runs_logged(log: Path) -> dict[str, dict[str, int]]:
    """Per option string, how often the stand-in started and ended it."""
    counts: dict[str, dict[str, int]] = {}
    if not log.exists():
        return counts
    for line in log.read_text().splitlines():
        what, _, options = line.partition(" ")
        if what == "help":
            continue  # gem5 --help: the parameter check, no point
        counts.setdefault(options, {"start": 0, "end": 0})[what] += 1
    return counts


RECORDING = REPO / "tests" / "data" / "explore-grid.tar.xz"  # docs/explore/search-grid.toml, 24 real gem5 runs


def replay_recording(folder: Path) -> Path:
    """The recorded grid unpacked for the stand-in (COSIM_STANDIN_REPLAY)."""
    import tarfile

    with tarfile.open(RECORDING) as tar:
        tar.extractall(folder, filter="data")
    return folder


def replay_design(folder: Path):
    """docs/explore/search-grid.toml with the stand-in as gem5 (the same options, so the same points)."""
    from cosim.explore.design import load_design

    text = (REPO / "docs" / "explore" / "search-grid.toml").read_text()
    grid = text[text.index("[parameters]") :]
    path = folder / "replay.toml"
    path.write_text(
        f'[gem5]\nbinary = "{STANDIN / "gem5"}"\nconfig = "{STANDIN / "config.py"}"\n'
        f'args = ["--epoch", "1ms", "--little-cores", "1"]\nworkload = ["{STANDIN / "config.py"}", "1"]\n{grid}\n'
        # the models the recording was priced with (its stats.txt keeps only the lines they read)
        '[models]\nbig = ["system.bigCluster", "cortex-a15-walker2017"]\nlittle = ["system.littleCluster", "cortex-a7-gemstone2018"]\n'
    )
    return load_design(path)
