"""Where points run: a local process pool (one gem5 per worker) or a Dask cluster; both look the same to the driver."""

from __future__ import annotations

import concurrent.futures as cf
from typing import Any

from cosim.errors import CosimError
from cosim.explore.runner import Task, die_with_parent, run_point


class PoolEngine:
    """``workers`` local processes, each dying with the driver (so a killed driver leaves no gem5 behind)."""

    def __init__(self, workers: int):
        self.workers = workers
        self._pool = cf.ProcessPoolExecutor(max_workers=workers, initializer=die_with_parent)

    def submit(self, task: Task):
        return self._pool.submit(run_point, task)

    def wait(self, futures) -> set:
        done, _ = cf.wait(futures, return_when=cf.FIRST_COMPLETED)
        return done

    def close(self, *, kill: bool = False) -> None:
        if kill:  # Ctrl-C: stop the running gem5s now instead of waiting for them
            for process in list(getattr(self._pool, "_processes", {}).values()):  # no public way before Python 3.14
                process.kill()
        self._pool.shutdown(wait=not kill, cancel_futures=True)


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
