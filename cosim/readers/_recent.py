"""What a reader parsed last, by the file's path and its whole text: the same text parses to the same object.

One ``cosim validate`` reads each run's config once per clock and per check; a config's parse and CPU count are
1-4 ms a read (1300 reads in the test suite).  The text is read and compared each time, so a file rewritten in place,
however quickly, is parsed again.  Only for readers whose result is never modified once made.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

KEPT = 16  # objects kept, the oldest forgotten first
_RECENT: OrderedDict[Hashable, tuple[str, Any]] = OrderedDict()
_LOCK = threading.Lock()  # a Dask worker's threads read side by side


def parsed(key: Hashable, text: str, parse: Callable[[], Any]) -> Any:
    """``parse()``'s result, made once for this ``key`` (the reader, the path as given, its options) and ``text``."""
    with _LOCK:
        hit = _RECENT.get(key)
    if hit is None or hit[0] != text:
        hit = (text, parse())
        with _LOCK:
            _RECENT[key] = hit
            while len(_RECENT) > KEPT:
                _RECENT.popitem(last=False)
    return hit[1]
