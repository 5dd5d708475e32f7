"""The study loop: claim a point under the study's lock, run it on an engine, record its outcome in the store.

Grid and sample studies claim their points in design order; ``--search pareto`` asks Optuna's
sampler for the next point until the budget of gem5 runs is spent.  The driver keeps every
worker busy (one point in flight per worker) and records each point as it finishes, so a
driver killed at any moment loses only the points in flight, which run again on the next start.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from cosim.errors import CosimError
from cosim.explore.design import Design, command, point_id, sample_points
from cosim.explore.progress import Progress
from cosim.explore.runner import Task
from cosim.explore.store import POINTS, Store, status_of

#: a search that keeps drawing points it has already run has found the whole space: it stops after this many in a row
_MAX_REPEATS = 200


@dataclass
class Options:
    dvfs: bool = False
    extrapolate: bool = False  # price clocks beyond a model's band; re-prices points refused without it (no gem5 run)
    retry_failed: bool = False
    search: str | None = None  # None: the design's points; "pareto": model-guided
    budget: int | None = None  # gem5 runs the search may make (all of the study's, over every start)


@dataclass
class Outcome:
    ran: int = 0
    failed: int = 0
    timings: list[dict[str, float]] = field(default_factory=list)  # per point run here: gem5_s, price_s


def _params(trial, space: dict[str, tuple]) -> dict[str, Any]:
    """Optuna records the point's parameters in its trial (the samplers learn from them); enqueued values come back as given."""
    return {name: trial.suggest_categorical(name, list(values)) for name, values in space.items()}


class Driver:
    def __init__(self, design: Design, store: Store, engine, options: Options, progress: Progress | None = None):
        self.design = design
        self.store = store
        self.engine = engine
        self.options = options
        self.space = design.space()
        self.order = [] if options.search else [(point_id(p), p) for p in sample_points(design)]
        self.progress = progress
        self.tried: set[str] = set()  # points this driver has run: a failure is not retried in the same start

    def todo(self) -> list[str]:
        """The points this start would run (no lock: an estimate for --dry-run and the progress bar)."""
        latest = self.store.latest()
        if self.options.search:
            budget = self.options.budget or 0
            return [""] * max(0, budget - len(latest))
        return [pid for pid, _ in self.order if self._wanted(latest.get(pid))]

    def _wanted(self, trial) -> bool:
        if trial is None:
            return True
        status = status_of(trial)
        if status == "refused":  # priced again with --extrapolate, unless it already was (its gem5 run is kept)
            return self.options.extrapolate and not trial.user_attrs.get("extrapolate", False)
        if status == "ok":  # --dvfs on a point finished without it: its run is priced again for the what-if rows
            return self.options.dvfs and not trial.user_attrs.get("dvfs", False) and not trial.user_attrs.get("row", {}).get("predicted")
        return status == "failed" and self.options.retry_failed

    def _attrs(self, pid: str, params: dict[str, Any]) -> dict[str, Any]:
        """A claim's user attributes: the point, who runs it, and how it is priced when that is not the default."""
        return (
            {"point": pid, "params": params, "driver": self.store.me}
            | ({"extrapolate": True} if self.options.extrapolate else {})
            | ({"dvfs": True} if self.options.dvfs else {})
        )

    def claim(self, n: int = 1) -> list:
        """Up to ``n`` (trial, params) for this driver to run, none when nothing is left; made under the study's lock."""
        claimed: list = []
        with self.store.lock():
            self.store.reclaim()
            latest = self.store.latest()
            if self.options.search:
                while len(claimed) < n and (one := self._claim_search(latest)) is not None:
                    claimed.append(one)
                    latest[one[0].user_attrs["point"]] = one[0]
                return claimed
            for pid, params in self.order:
                if len(claimed) == n:
                    break
                if pid not in self.tried and self._wanted(latest.get(pid)):
                    # the trial records the point in a user attribute, not as Optuna parameters: those
                    # fix each axis's values for the study's life, and a grid may gain values between starts
                    self.store.study.enqueue_trial({}, user_attrs=self._attrs(pid, params))
                    self.tried.add(pid)
                    claimed.append((self.store.study.ask(), params))
        return claimed

    def _own(self, trial, pid: str, params: dict[str, Any]):
        trial.set_user_attr("point", pid)
        trial.set_user_attr("driver", self.store.me)
        if self.options.extrapolate:
            trial.set_user_attr("extrapolate", True)
        if self.options.dvfs:
            trial.set_user_attr("dvfs", True)
        self.tried.add(pid)
        return trial, params

    def _claim_search(self, latest: dict[str, Any]):
        import optuna

        budget = min(self.options.budget or 0, math.prod(len(v) for v in self.space.values()))  # no more runs than points
        for _ in range(_MAX_REPEATS):
            if len(latest) >= budget:
                return None
            trial = self.store.study.ask()
            try:
                params = _params(trial, self.space)
            except ValueError:  # Optuna: a categorical axis cannot change its values within a study
                self.store.study.tell(trial, state=optuna.trial.TrialState.FAIL)
                raise CosimError(
                    f"{self.store.folder}: this search was started with other values of the parameters; "
                    "a search keeps its axes: use a new -o folder"
                ) from None
            pid = point_id(params)
            known = latest.get(pid)
            if pid not in self.tried and self._wanted(known):
                return self._own(trial, pid, params)
            # a point already run (or running): the sampler is told what it gave, and no gem5 runs
            trial.set_user_attr("point", pid)
            trial.set_user_attr("row", {"status": "duplicate"})
            if known is not None and status_of(known) == "ok":
                self.store.study.tell(trial, known.values)
            else:
                self.store.study.tell(trial, state=optuna.trial.TrialState.FAIL)
        raise CosimError(f"the search drew {_MAX_REPEATS} points in a row that were already run: the space is explored")

    def tidy(self) -> list[str]:
        """Remove the temporary point folders of trials no live driver runs (:meth:`Store.tidy`), under the study's lock."""
        with self.store.lock():
            self.store.reclaim()
            return self.store.tidy()

    def task(self, trial, pid: str, params: dict[str, Any]) -> Task:
        return Task(
            points=self.store.folder / POINTS,
            point=pid,
            attempt=trial.number,
            params=params,
            command=tuple(command(self.design, params)),
            models=self.design.models,
            dvfs=self.options.dvfs,
            extrapolate=self.options.extrapolate,
            thermal=self.design.thermal,
        )

    def record(self, trial, result: dict[str, Any] | None, why: str) -> str:
        """Store a point's outcome in its trial; its status."""
        import optuna

        if result is None:
            result = {"status": "failed", "reason": why, "values": {}, "predicted": []}
        row = {"status": result["status"], "reason": result["reason"], **result["values"]}
        trial.set_user_attr("row", row | ({"predicted": result["predicted"]} if result["predicted"] else {}))  # one journal write
        if result["status"] == "ok":
            self.store.study.tell(trial, [result["values"]["runtime_s"], result["values"]["energy_j"]])
        else:
            self.store.study.tell(trial, state=optuna.trial.TrialState.FAIL)
        return result["status"]

    def run(self) -> Outcome:
        """Run until nothing is left to claim; Ctrl-C marks the points in flight as interrupted (they run again next time)."""
        import optuna

        out = Outcome()
        running: dict[Any, tuple[Any, str]] = {}
        exhausted = False
        self.tidy()  # what an interrupted start left behind
        try:
            while True:
                # a grid keeps a second point queued per worker, so no worker waits while the driver writes the
                # journal; it refills in batches (one lock, one read of the study) when half the queue has run.
                # A search asks for one point per worker: the sampler learns from every finished one.
                depth = self.engine.workers * (1 if self.options.search else 2)
                claimed = []
                if not exhausted and len(running) <= (self.engine.workers if not self.options.search else self.engine.workers - 1):
                    claimed = self.claim(depth - len(running))
                    exhausted = len(claimed) < depth - len(running)
                for trial, params in claimed:
                    pid = trial.user_attrs["point"]
                    running[self.engine.submit(self.task(trial, pid, params))] = (trial, pid)
                    if self.progress:
                        self.progress.started()
                if not running:
                    self.tidy()
                    return out
                for future in self.engine.wait(list(running)):
                    trial, pid = running.pop(future)
                    from cosim.explore.engine import outcome

                    result, why = outcome(future)
                    status = self.record(trial, result, why)
                    out.ran += 1
                    out.failed += status != "ok"
                    if result is not None:
                        out.timings.append({"gem5_s": result["gem5_s"], "price_s": result["price_s"]})
                    if self.progress:
                        self.progress.finished(pid, status, _note(result, why))
        except BaseException:
            for trial, _ in running.values():  # interrupted: run again from scratch next time
                try:
                    self.store.study.tell(trial, state=optuna.trial.TrialState.FAIL)
                except Exception:
                    pass  # the store may be what failed; the next start reclaims these trials by their dead driver
            raise


def _note(result: dict[str, Any] | None, why: str) -> str:
    if result is None:
        return why
    if result["status"] != "ok":
        return result["reason"]
    v = result["values"]
    return f"runtime {v['runtime_s']:.4g} s, energy {v['energy_j']:.4g} J, gem5 {result['gem5_s']:.1f} s"
