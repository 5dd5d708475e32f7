"""The one progress reporter of every long command: a tqdm bar where tqdm is installed, else plain lines on stderr.

Plain lines (a log file shows them too) have one form everywhere::

    cosim: sweep: 3/12 runs (25 %)
    cosim: kernel-eval: fitting kernel type: 1/2 types (50 %): conv2d
    cosim: stats.txt: 63/210 MB (30 %)

one per item counted, or one per tenth of the total where the total is large (bytes read).  ``cosim sweep``,
``cosim validate``, ``cosim kernel-eval``/``kernel-fit`` and the gem5 stats reader (``--progress``) all report
through :func:`reporter` or :func:`each`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def tqdm_installed() -> bool:
    """Whether a bar can be drawn (the ``progress`` extra)."""
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


class PlainLines:
    """tqdm's ``update``/``close`` as plain lines on stderr: one per item, or per tenth when ``tenths``."""

    def __init__(self, total: float, label: str, unit: str, *, scale: float = 1.0, tenths: bool = False) -> None:
        self.total, self.label, self.unit, self.scale, self.tenths = max(total, 1), label, unit, scale, tenths
        self.n, self.shown = 0.0, 0

    def update(self, n: float = 1, item: str | None = None) -> None:
        self.n += n
        pct = 100 * self.n / self.total
        if self.tenths:
            tenth = int(min(10, pct // 10))
            if tenth <= self.shown:
                return
            self.shown = tenth
        done, total = self.n / self.scale, self.total / self.scale
        line = f"cosim: {self.label}: {done:.0f}/{total:.0f} {self.unit} ({pct:.0f} %)"
        print(line + (f": {item}" if item else ""), file=sys.stderr, flush=True)

    def close(self) -> None:
        pass


class _Off:
    def update(self, n: float = 1, item: str | None = None) -> None:
        pass

    def close(self) -> None:
        pass


def reporter(*, total: float, label: str, unit: str = "steps", enabled: bool = True, bytes_: bool = False):
    """An object with ``update(n)`` and ``close()`` that reports ``total`` things done under ``label``.

    ``bytes_``: the total is bytes, shown in MB, a plain line per tenth (a bar scales its own unit).
    """
    if not enabled:
        return _Off()
    if tqdm_installed():
        from tqdm import tqdm

        if bytes_:
            return tqdm(total=total, unit="B", unit_scale=True, desc=label, leave=False, file=sys.stderr)
        return tqdm(total=total, unit=unit.rstrip("s") or unit, desc=label, file=sys.stderr)
    if bytes_:
        return PlainLines(total, label, "MB", scale=1e6, tenths=True)
    return PlainLines(total, label, unit)


def each(
    items: Iterable[T],
    *,
    label: str,
    unit: str = "steps",
    total: int | None = None,
    enabled: bool = True,
    name: Callable[[T], str] | None = None,
) -> Iterator[T]:
    """``items``, counted as each one is done (after the loop body has used it)."""
    if not enabled:
        yield from items
        return
    if total is None:
        items = list(items)
        total = len(items)
    if tqdm_installed():
        from tqdm import tqdm

        yield from tqdm(items, total=total, desc=label, unit=unit.rstrip("s") or unit, file=sys.stderr)
        return
    lines = PlainLines(total, label, unit)
    for item in items:
        yield item
        lines.update(1, name(item) if name else None)


def stepper(
    label: str, *, enabled: bool = True, name: Callable[[object], str] = str, unit: str = "steps"
) -> Callable[[Iterable[T]], Iterator[T]]:
    """:func:`each` as a wrapper to hand to a loop (the kernel fits take ``each=``); items named by ``name``."""

    def wrap(items: Iterable[T]) -> Iterator[T]:
        return each(items, label=label, unit=unit, enabled=enabled, name=name)

    return wrap
