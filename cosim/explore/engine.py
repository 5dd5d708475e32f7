"""Where points run: a local process pool (one gem5 per worker) or a Dask cluster; both look the same to the driver."""

from __future__ import annotations

import concurrent.futures as cf
import os
from collections import deque
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from cosim.dse.sweep import kill_workers
from cosim.errors import CosimError
from cosim.explore.runner import Task, die_with_parent, run_point


class PoolEngine:
    """At most ``workers`` local processes, one per point, each dying with the driver (so a killed driver leaves no
    gem5 behind).  A process per point, not one shared pool: a worker killed from outside (the OOM killer's SIGKILL)
    breaks only its own point, which runs once more; a second death fails that point alone, and the study goes on.
    Processes are started from the driver's thread only (in ``submit`` and ``wait``): Linux kills a worker whose
    parent *thread* ends (``die_with_parent``)."""

    def __init__(self, workers: int):
        self.workers = workers
        self._queued: deque[tuple[cf.Future, Task, int]] = deque()  # (the driver's future, task, deaths so far)
        self._running: dict[cf.Future, tuple[cf.ProcessPoolExecutor, cf.Future, Task, int]] = {}
        # every pool not yet settled, from before its submit: a Ctrl-C inside submit, after the pool forked its worker,
        # left that worker out of _running, and the driver's exit then waited for it forever
        self._pools: set[cf.ProcessPoolExecutor] = set()

    def submit(self, task: Task):
        future: cf.Future = cf.Future()
        future.set_running_or_notify_cancel()
        self._queued.append((future, task, 0))
        self._start()
        return future

    def _start(self) -> None:
        while self._queued and len(self._running) < self.workers:
            future, task, deaths = self._queued.popleft()
            pool = cf.ProcessPoolExecutor(max_workers=1, initializer=die_with_parent, initargs=(os.getpid(),))
            self._pools.add(pool)
            try:
                inner = pool.submit(run_point, task)
            except BaseException:
                self._queued.appendleft((future, task, deaths))  # not started as far as the driver knows: close cancels it
                raise
            self._running[inner] = (pool, future, task, deaths)

    def _settle(self, inner: cf.Future) -> None:
        pool, future, task, deaths = self._running.pop(inner)
        pool.shutdown(wait=False)
        self._pools.discard(pool)
        error = inner.exception()
        if isinstance(error, BrokenProcessPool) and deaths == 0:
            self._queued.appendleft((future, task, 1))  # its worker was killed: once more, first in line
        elif isinstance(error, BrokenProcessPool):
            future.set_exception(CosimError(_DIED))
        elif error is not None:
            future.set_exception(error)
        else:
            future.set_result(inner.result())

    def wait(self, futures) -> set:
        futures = list(futures)
        while True:
            done = {f for f in futures if f.done()}
            if done or not (self._running or self._queued):
                return done
            self._start()
            finished, _ = cf.wait(list(self._running), return_when=cf.FIRST_COMPLETED)
            for inner in finished:
                self._settle(inner)

    def close(self, *, kill: bool = False) -> None:
        queued, self._queued = list(self._queued), deque()
        for future, _, _ in queued:
            future.cancel()
        for pool in list(self._pools):
            if kill:  # Ctrl-C: stop the running gem5s now instead of waiting for them
                kill_workers(pool)
            pool.shutdown(wait=not kill, cancel_futures=True)
        self._pools.clear()
        self._running.clear()


_DIED = (
    "its worker process was killed twice while running it (the out-of-memory killer, or a signal from outside); "
    "give the point more memory or run fewer at once (--workers), then --retry-failed"
)


class DaskEngine:
    """A ``dask.distributed`` client: ``local`` starts a LocalCluster of ``workers`` processes, else a scheduler address."""

    def __init__(self, scheduler: str, workers: int):
        from cosim.dse.sweep import dask_client

        self.scheduler = scheduler
        self.client = dask_client(scheduler, workers=workers)
        self.workers = max(1, len(self.client.scheduler_info().get("workers", {})) or workers)

    def submit(self, task: Task):
        # a worker that dies is replaced and its point sent elsewhere by Dask (allowed-failures); pure=False: never cached
        return self.client.submit(run_point, task, pure=False, key=f"cosim-point-{task.point}-{task.attempt}")

    def wait(self, futures) -> set:
        from distributed import wait

        done, _ = wait(list(futures), return_when="FIRST_COMPLETED")
        return set(done)

    def close(self, *, kill: bool = False) -> None:
        self.client.close()
        if self.scheduler == "local":
            self.client.cluster.close()


def outcome(future) -> tuple[dict[str, Any] | None, str]:
    """A finished future's result, or None and why its worker could not return one."""
    try:
        return future.result(), ""
    except CosimError as err:
        return None, str(err)
    except Exception as err:  # KilledWorker (a Dask worker died on this point every time), BrokenProcessPool, an OSError
        return None, f"its worker failed: {type(err).__name__}: {err}"
