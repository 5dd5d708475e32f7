"""Small helpers of the gem5 stats reader: opening a plain or gzip stats file, the end of a line, and which kinds of CPU
wrote a file (read from its first dump)."""

from __future__ import annotations

import re
import zlib
from pathlib import Path

from cosim.readers._files import CutGzip
from cosim.readers._statscan_py import END_MARKER

_GROUP = re.compile(rb"^(\S+?)\.(rob|iew|rename|fetch2)\.", re.MULTILINE)


def cpu_stat_groups(path: str | Path, *, max_bytes: int = 64 << 20) -> dict[str, set[str]]:
    """``{object path: stat groups}`` among rob, iew, rename (O3's stages) and fetch2 (Minor's) in the
    first dump: which kind of CPU wrote it.  Reads in 1 MiB blocks, at most ``max_bytes``."""
    found: dict[str, set[str]] = {}
    tail = b""
    try:
        with open_stats(Path(path)) as f:
            for _ in range(max(1, max_bytes >> 20)):
                block = f.read(1 << 20)
                if not block:
                    break
                text = tail + block
                cut = text.rfind(b"\n") + 1
                text, tail = text[:cut], text[cut:][-4096:]  # a line longer than that names no stat worth keeping
                end = text.find(END_MARKER)
                for m in _GROUP.finditer(text, 0, len(text) if end < 0 else end):
                    found.setdefault(m[1].decode(errors="replace"), set()).add(m[2].decode())
                if end >= 0:
                    break
    except (OSError, EOFError, zlib.error):
        return {}  # the stats reader says what is wrong with the file
    return found


def open_stats(path: Path):
    """The file as bytes; gem5 writes gzip when --stats-file ends in .gz, so that is read as it streams."""
    f = open(path, "rb")
    if f.peek(2)[:2] == b"\x1f\x8b":
        return CutGzip(f)
    return f


def line_end(buf: bytearray, start: int, end: int) -> int:
    """Offset of the newline that ends the line at ``start`` (so a marker on the next line is found), else ``end``."""
    nl = buf.find(b"\n", start, end)
    return end if nl < 0 else nl
