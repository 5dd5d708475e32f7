"""One point, on whichever worker runs it: gem5 in a fresh folder, the run priced there, the folder renamed when done.

Module-level functions only, so that a process pool and Dask workers can run them; only a small
dict travels back.  The folder is ``points/.ID.part-N`` while gem5 runs and becomes ``points/ID``
when the point is finished, so no point appears under its final name half-done.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cosim.errors import CosimError

STDOUT = "gem5.stdout"
STDERR = "gem5.stderr"
_TAIL_LINES = 5


@dataclass(frozen=True)
class Task:
    """What a worker needs to run one point (picklable)."""

    points: Path  # the study's points/ folder
    point: str
    attempt: int  # the trial number: each attempt gets its own temporary folder
    params: dict[str, Any]
    command: tuple[str, ...]
    models: dict[str, tuple[str, str]]
    dvfs: bool = False
    extrapolate: bool = False  # price clocks beyond a model's band (flagged extrapolated), as cosim power --extrapolate
    thermal: dict[str, float] = field(default_factory=dict)  # the design's [thermal]: open_run's temperature options [°C]


def die_with_parent(parent_pid: int) -> None:
    """Ask Linux to SIGKILL this process when its parent dies (a killed driver takes its gem5 runs with it).

    ``parent_pid``: the process that started this one.  If it died between the fork and this request (a driver killed
    as it started a worker: the request then never fires, and the worker waited for work forever), this process ends
    at once, as the request would have ended it."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: an orphaned gem5 finishes in its own temporary folder, which is discarded
    if os.getppid() != parent_pid:
        os.kill(os.getpid(), signal.SIGKILL)


def run_point(task: Task) -> dict[str, Any]:
    """Run and price ``task``; the result: ``status``, ``reason``, the row's values, ``predicted`` rows and timings [s]."""
    from cosim import __version__

    if (done := _finished(task)) is not None:
        return done
    part = task.points / f".{task.point}.part-{task.attempt}"
    shutil.rmtree(part, ignore_errors=True)
    part.mkdir(parents=True)
    (part / "params.json").write_text(json.dumps(task.params, indent=1) + "\n")
    (part / "command.txt").write_text(f"# run in this folder\n{shlex.join(task.command)}\n")
    (part / "cosim-version.txt").write_text(f"{__version__}\n")
    start = time.perf_counter()
    with open(part / STDOUT, "wb") as out, open(part / STDERR, "wb") as err:
        try:
            rc = subprocess.run(
                list(task.command), cwd=part, stdout=out, stderr=err, preexec_fn=functools.partial(die_with_parent, os.getpid())
            ).returncode
        except OSError as e:
            rc, note = 127, f"cannot start gem5: {e}"
            err.write(note.encode())
    gem5_s = time.perf_counter() - start
    result: dict[str, Any] = {"point": task.point, "gem5_s": gem5_s, "predicted": [], "values": {}}
    if rc != 0:
        result |= {"status": "failed", "reason": f"gem5 exited with status {rc}: {tail(part / STDERR)}", "gem5_exit": rc}
    else:
        result |= _price(part, task)
    result["price_s"] = time.perf_counter() - start - gem5_s
    (part / "result.json").write_text(json.dumps(result, indent=1) + "\n")
    final = task.points / task.point
    if final.exists():  # an earlier attempt that failed: replaced by this one
        old = task.points / f".{task.point}.old-{task.attempt}"
        os.replace(final, old)
        shutil.rmtree(old, ignore_errors=True)
    os.replace(part, final)
    return result


def _price(folder: Path, task: Task) -> dict[str, Any]:
    """The run in ``folder`` priced: ``ok`` with its values and ``--dvfs`` rows, or ``refused`` with cosim's reason."""
    from cosim.explore.price import LostDumps, price_point

    try:
        values, predicted = price_point(folder, task.models, dvfs=task.dvfs, extrapolate=task.extrapolate, thermal=task.thermal)
    except LostDumps as e:  # gem5 did not write all its stats: a failure, which --retry-failed runs again
        return {"status": "failed", "reason": str(e).replace(str(folder), task.point), "values": {}, "predicted": []}
    except CosimError as e:
        return {"status": "refused", "reason": str(e).replace(str(folder), task.point), "values": {}, "predicted": []}
    return {"status": "ok", "reason": "", "values": values, "predicted": predicted}


def _finished(task: Task) -> dict[str, Any] | None:
    """The result of a point already finished in its final folder (a driver killed before it recorded it), or None.

    The folder gets its final name only once complete, so its run stands: gem5 is not run again.  A failure is
    run again (that is why the point was claimed).  The run is priced again, its result.json replaced, for
    ``--dvfs`` on a point finished without it and for ``--extrapolate`` on a refused point.
    """
    path = task.points / task.point / "result.json"
    try:
        result = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if result.get("status") not in ("ok", "refused"):
        return None
    price_s = 0.0  # gem5 does not run again; pricing only where the point is priced again
    if (task.dvfs and result["status"] == "ok" and not result.get("predicted")) or (task.extrapolate and result["status"] == "refused"):
        start = time.perf_counter()
        result |= _price(path.parent, task)
        result["price_s"] = price_s = time.perf_counter() - start
        temporary = path.with_name(f".result.json.{task.attempt}")
        temporary.write_text(json.dumps(result, indent=1) + "\n")
        os.replace(temporary, path)  # whole or not at all
    return result | {"gem5_s": 0.0, "price_s": price_s, "reused": True}


def tail(path: Path, lines: int = _TAIL_LINES) -> str:
    """The last lines of a text file, joined by ' | ' (the reason of a failed point stays one line)."""
    try:
        text = path.read_bytes()[-4096:].decode("utf-8", "replace")
    except OSError:
        return ""
    every = [line.strip() for line in text.splitlines() if line.strip()]
    kept = every[-lines:]
    # gem5 prints the error itself (fatal:, panic:, a Python ValueError) before its traceback's frames: lead with it
    cause = next((line for line in every if re.match(r"(fatal|panic|\w*Error\b)", line)), None)
    if cause and cause not in kept:
        kept = [cause, *kept]
    return " | ".join(kept) or "(no stderr)"
