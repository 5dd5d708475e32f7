"""Progress of a study: points done, running and failed, with an ETA; a bar on a terminal, one line per point otherwise."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field


def _duration(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "?"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


@dataclass
class Progress:
    """Counts for this invocation; ``total`` is what is left to run when it starts."""

    total: int
    workers: int
    stream: object = field(default_factory=lambda: sys.stderr)
    enabled: bool = True
    done: int = 0
    failed: int = 0
    running: int = 0
    start: float = field(default_factory=time.monotonic)

    @property
    def bar(self) -> bool:
        return self.enabled and getattr(self.stream, "isatty", lambda: False)()

    def eta_s(self) -> float:
        finished = self.done + self.failed
        if not finished:
            return float("nan")
        left = max(0, self.total - finished)
        return (time.monotonic() - self.start) / finished * left

    def counts(self) -> str:
        running = min(self.running, self.workers)  # the rest of the points in flight wait in the workers' queue
        # the estimate made at the start misses points a dead driver left claimed (reclaimed once the loop runs)
        self.total = max(self.total, self.done + self.failed + self.running)
        return f"{self.done + self.failed}/{self.total} done, {running} running, {self.failed} failed, ETA {_duration(self.eta_s())}"

    def started(self) -> None:
        self.running += 1
        if self.bar:
            self._draw()

    def finished(self, point: str, status: str, note: str) -> None:
        self.running -= 1
        if status == "ok":
            self.done += 1
        else:
            self.failed += 1
        if not self.enabled:
            return
        if self.bar:
            self._draw()
        else:
            print(f"cosim: point {point} {status}{': ' + note if note else ''} [{self.counts()}]", file=self.stream, flush=True)  # type: ignore[call-overload]

    def _draw(self) -> None:
        width = 24
        filled = int(width * (self.done + self.failed) / self.total) if self.total else width
        print(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.counts()}   ", end="", file=self.stream, flush=True)  # type: ignore[call-overload]

    def close(self) -> None:
        if self.bar:
            print(file=self.stream)  # type: ignore[call-overload]
        self.running = 0

    def elapsed_s(self) -> float:
        return time.monotonic() - self.start
