"""The one check every reader makes of a path the user gave, before opening it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from cosim.errors import CosimError

#: gem5's stats file in its output folder, by the names gem5 has written it under: stats.txt, gzip'd with
#: --stats-file=stats.txt.gz, and M5's m5stats.txt (before gem5)
STATS_NAMES = ("stats.txt", "stats.txt.gz", "m5stats.txt")

_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def input_file(path: str | Path, *, what: str, empty_hint: str | None = None) -> Path:
    """``path`` when it is a regular, readable, non-empty file; else a :class:`CosimError` in one line
    naming the path, what it is, and ``what`` was expected (a noun phrase: "a gem5 stats.txt")."""
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise CosimError(f"{path}: no such file; give {what}") from None
    except PermissionError:
        raise CosimError(f"{path}: permission denied (a folder on the way cannot be entered); give {what} you can read") from None
    except OSError as err:
        raise CosimError(f"{path}: cannot look at it ({err.strerror}); give {what}") from None
    if stat.S_ISDIR(info.st_mode):
        raise CosimError(f"{path}: a folder, not a file; give {what}")
    if not stat.S_ISREG(info.st_mode):
        kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
        raise CosimError(f"{path}: {kind}, not a regular file cosim can read to its end; give {what} saved to a file")
    if not os.access(path, os.R_OK):
        raise CosimError(f"{path}: permission denied (not readable by you); give {what} you can read, or chmod u+r it")
    if info.st_size == 0:
        raise CosimError(f"{path}: empty file (0 bytes); {empty_hint or f'give {what}'}")
    return path
