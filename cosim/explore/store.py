"""A study's state in Optuna's journal storage: one trial per attempt at a point, claimed under a kernel lock.

Why Optuna's journal file (docs/reference/design-file.md, "Study state"): an append-only log
that Optuna replays, so a driver killed mid-write leaves at most a torn last line, which the
replay skips; no database server; and the same study feeds Optuna's samplers for ``--search``.

A trial's user attributes: ``point`` (the point's id), ``params``, ``driver`` (who runs it), and when
it is finished ``row``: the point's result columns with ``status`` (``ok``, ``failed``, ``refused``;
``duplicate`` for a search's repeat of a known point) and ``predicted`` (its ``--dvfs`` rows).  A trial still RUNNING
whose driver is gone was interrupted: it is marked FAIL with no status and its point runs again.
Every change of who runs what happens under ``flock`` on ``STUDY/.lock`` (released by the kernel
when a driver dies, even by SIGKILL), so two drivers never claim the same point.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cosim.errors import CosimError

STUDY_NAME = "cosim-explore"
JOURNAL = "study.journal"
POINTS = "points"
_LOCK = ".lock"
_DRIVERS = ".drivers"
_LEASE_S = 60.0  # a driver on another host whose lease is older than this is gone
_BEAT_S = 5.0
FINAL = ("ok", "refused")  # a point with one of these is done; "failed" is retried only when asked
#: a point's temporary folders (cosim.explore.runner): ``.ID.part-N`` while trial N runs it, ``.ID.old-N`` the
#: earlier attempt trial N replaces
_TEMPORARY = re.compile(r"^\.(?P<point>[0-9a-f]{12})\.(?P<kind>part|old)-(?P<trial>[0-9]+)$")


def _optuna():
    try:
        import optuna
    except ImportError:
        raise CosimError("cosim explore needs Optuna: pip install 'cosim[explore]'") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (/proc), so a reused pid is not taken for the old process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return "?"


def driver_id() -> str:
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_start_time(pid)}"


@dataclass
class Store:
    """The study folder and its Optuna study; ``lock()`` serialises claims between drivers."""

    folder: Path
    study: Any
    me: str = field(default_factory=driver_id)
    _stop: threading.Event = field(default_factory=threading.Event)

    @contextlib.contextmanager
    def lock(self):
        with open(self.folder / _LOCK, "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def start_lease(self) -> None:
        """Tell other drivers this one is alive (a file touched every few seconds), until :meth:`close`."""
        lease = self.folder / _DRIVERS / self.me.replace(":", "_")
        lease.parent.mkdir(exist_ok=True)
        lease.touch()

        def beat():
            while not self._stop.wait(_BEAT_S):
                lease.touch()

        threading.Thread(target=beat, daemon=True, name="cosim-explore-lease").start()

    def close(self) -> None:
        self._stop.set()
        (self.folder / _DRIVERS / self.me.replace(":", "_")).unlink(missing_ok=True)

    def alive(self, driver: str | None) -> bool:
        """Whether the driver that claimed a trial still runs: same host, by its pid; else by its lease."""
        if driver is None:
            return False  # claims are made under the lock with their driver: a trial without one was cut short
        if driver == self.me:
            return True
        host, pid, start = driver.split(":")
        if host == socket.gethostname():
            return _start_time(int(pid)) == start
        lease = self.folder / _DRIVERS / driver.replace(":", "_")
        try:
            return time.time() - lease.stat().st_mtime < _LEASE_S
        except OSError:
            return False

    def trials(self) -> list:
        return self.study.get_trials(deepcopy=False)

    def reclaim(self) -> int:
        """Mark trials whose driver is gone as failed without status (call under :meth:`lock`); how many.

        A WAITING trial is always stale here: a driver enqueues and pops its claim under the lock, so one
        left waiting was enqueued by a driver killed in between (popped here, so no claim takes it by mistake).
        """
        optuna = _optuna()
        state = optuna.trial.TrialState
        trials = self.trials()
        stale = [t for t in trials if t.state == state.RUNNING and not self.alive(t.user_attrs.get("driver"))]
        for t in stale:
            self.study.tell(t.number, state=state.FAIL)
        for _ in range(sum(t.state == state.WAITING for t in trials)):
            self.study.tell(self.study.ask(), state=state.FAIL)
        return len(stale)

    def tidy(self) -> list[str]:
        """Remove the temporary folders of trials no driver runs any more (call under :meth:`lock`, after
        :meth:`reclaim`); the names removed.

        ``points/.ID.part-N`` is trial N's folder: while trial N is RUNNING a live driver runs it (:meth:`reclaim`
        has failed the others), and the folder is kept.  Otherwise it was cut short (Ctrl-C, a killed driver or
        worker) and its point runs again in a new one, so it is removed -- unless it is whole (its result.json
        written last) with no ``points/ID`` yet: then it takes that name, and the point's next claim reuses it
        without running gem5.  ``points/ID`` (a finished point) is never touched, nor a folder of a trial not in the
        journal.
        """
        optuna = _optuna()
        states = {t.number: t.state for t in self.trials()}
        points = self.folder / POINTS
        removed = []
        for path in sorted(points.iterdir()) if points.is_dir() else []:
            found = _TEMPORARY.match(path.name)
            if found is None or states.get(int(found["trial"]), optuna.trial.TrialState.RUNNING) == optuna.trial.TrialState.RUNNING:
                continue
            final = points / found["point"]
            if found["kind"] == "part" and not final.exists() and _whole(path):
                os.replace(path, final)
                continue
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path.name)
        return removed

    def latest(self) -> dict[str, Any]:
        """Per point, its trial that counts: running > ok/refused > the latest failure; interrupted and duplicate ones do not."""
        optuna = _optuna()
        rank = {"ok": 3, "refused": 3, "failed": 1}
        best: dict[str, tuple[int, int, Any]] = {}
        for t in self.trials():
            point = t.user_attrs.get("point")
            status = t.user_attrs.get("row", {}).get("status")
            if point is None or status == "duplicate":
                continue
            r = 4 if t.state == optuna.trial.TrialState.RUNNING else rank.get(status or "", 0)
            if r and (point not in best or (r, t.number) > best[point][:2]):
                best[point] = (r, t.number, t)
        return {p: v[2] for p, v in best.items()}


def _whole(part: Path) -> bool:
    """Whether a point's folder holds its finished result (result.json is written last, once gem5 and pricing are done)."""
    try:
        return json.loads((part / "result.json").read_text()).get("status") in FINAL
    except (OSError, ValueError, AttributeError):
        return False


def status_of(trial) -> str:
    """``running``, ``ok``, ``refused`` or ``failed`` for a trial from :meth:`Store.latest`."""
    return trial.user_attrs.get("row", {}).get("status") or "running"


def open_store(folder: Path, fingerprint: str, *, force: bool = False, design_name: str = "", sampler=None) -> Store:
    """Open or create the study in ``folder``; a folder made from another design is refused unless ``force``."""
    optuna = _optuna()
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise CosimError(f"{folder}: exists and is not a folder; give -o a new or study folder")
    folder.mkdir(parents=True, exist_ok=True)
    journal = folder / JOURNAL
    if not journal.exists() and (folder / POINTS).exists():
        raise CosimError(f"{folder}: has {POINTS}/ but no {JOURNAL}; not a cosim study, or its state was removed: use a new folder")
    store = Store(folder, None)
    with store.lock():
        previous = _stored_fingerprint(journal, optuna) if journal.exists() else None
        if previous is not None and previous != fingerprint:
            if not force:
                raise CosimError(
                    f"{folder}: this study was made from a different design{design_name and ' than ' + design_name} "
                    "(gem5 command, parameter names or models differ); use a new -o folder, or --force to discard it"
                )
            journal.unlink()
            shutil.rmtree(folder / POINTS, ignore_errors=True)
        storage = JournalStorage(JournalFileBackend(str(journal), lock_obj=JournalFlock(journal)))  # type: ignore[arg-type]
        store.study = optuna.create_study(
            study_name=STUDY_NAME, storage=storage, directions=["minimize", "minimize"], load_if_exists=True, sampler=sampler
        )
        if previous is None or previous != fingerprint:
            store.study.set_user_attr("design", fingerprint)
    (folder / POINTS).mkdir(exist_ok=True)
    return store


class JournalFlock:
    """Optuna's journal-file lock (its ``acquire``/``release``) as a kernel ``flock`` on ``JOURNAL.flock``.

    Optuna's own locks are files that a dead holder leaves behind, and the next driver waits out a 30 s grace
    period before breaking them: a study resumed after a SIGKILL that landed mid-append stalled 30 s.  A flock is
    released by the kernel when its holder dies, like the study's own lock (:meth:`Store.lock`)."""

    def __init__(self, journal: Path) -> None:
        self._path = str(journal) + ".flock"
        self._fd: int | None = None

    def acquire(self) -> bool:
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def _stored_fingerprint(journal: Path, optuna) -> str | None:
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    try:
        backend = JournalFileBackend(str(journal), lock_obj=JournalFlock(journal))  # type: ignore[arg-type]
        study = optuna.load_study(study_name=STUDY_NAME, storage=JournalStorage(backend))
    except KeyError:
        raise CosimError(f"{journal}: holds no cosim study; use a new -o folder") from None
    return study.user_attrs.get("design")
