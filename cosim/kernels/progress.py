"""Progress of long kernel-model work: a tqdm bar where tqdm is installed, else one plain line per step (stderr)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def tqdm_installed() -> bool:
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


def stepper(label: str, *, enabled: bool = True, name: Callable[[object], str] = str) -> Callable[[Iterable[T]], Iterator[T]]:
    """A wrapper for a loop's items that shows ``label`` and how many of them are done, on stderr."""

    def each(items: Iterable[T]) -> Iterator[T]:
        todo = list(items)
        if not enabled:
            yield from todo
            return
        if tqdm_installed():
            from tqdm import tqdm

            yield from tqdm(todo, desc=label, unit="step", file=sys.stderr)
            return
        for i, item in enumerate(todo, 1):  # a plain line per step: seen in a log file too
            print(f"cosim: {label}: {i}/{len(todo)} {name(item)}", file=sys.stderr, flush=True)
            yield item

    return each
