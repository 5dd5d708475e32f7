"""Cut-off inputs: a log that ends inside its last record (the simulator or profiler was killed mid-way, or the
copy is partial) keeps its complete records only, never a value read from the unfinished one.

Every GPU reader calls :func:`left_out` for the record it drops, which warns with :class:`CutOffWarning` (the CLI
exits 3), or refuses in one line when nothing complete is left.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from cosim.errors import CosimError, CutOffWarning


def ends_mid_line(text: str) -> bool:
    """Whether ``text`` stops inside a line: every tool cosim reads ends each line, so the last one was cut."""
    return bool(text) and not text.endswith(("\n", "\r"))


def left_out(path: str | Path, line: int, what: str, why: str, *, kept: int, unit: str = "kernel") -> None:
    """Warn that ``what`` (e.g. "kernel 'k'") at ``path:line`` was cut off and left out, ``kept`` complete
    records of ``unit`` kept; a :class:`CosimError` when none is left."""
    if kept == 0:
        raise CosimError(f"{path}:{line}: {what} is cut off ({why}) and no {unit} before it is complete; give the whole log")
    warnings.warn(
        CutOffWarning(f"{path}:{line}: {what} is cut off ({why}); left out, the {kept} complete {unit}(s) before it are kept"),
        stacklevel=3,
    )
