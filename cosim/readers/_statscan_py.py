"""Pure-Python twin of the C scanner ``_statscan.c``: the same contract, used when no compiler was there.

Tests check that both give the same names, values, bad line and stop offset on generated input.
"""

from __future__ import annotations

import math
import re
from array import array

# gem5 >= v20 may append ": <message>" to the markers, so match by prefix.
BEGIN_MARKER = b"---------- Begin Simulation Statistics"
END_MARKER = b"---------- End Simulation Statistics"
MARKER_LINE = b"\n---------- "

_FIELDS = re.compile(rb"[ \t\r]*([^ \t\r]+)(?:[ \t\r]+([^ \t\r]+))?")
_NUMBER = re.compile(r"[0-9.eE+-]+")
_SPECIAL = {"nan": math.nan, "inf": math.inf, "infinity": math.inf}


def _skippable(name: bytes, tok: bytes | None) -> bool:
    """Lines outside an M5-era distribution that hold no scalar stat (the same rule as ``skippable`` in _statscan.c).

    Ruby histograms (``name | n pct cum | ...`` or ``name [binsize: ...]``) and rows whose first field is a
    number (gem5 stat names never start with a digit).
    """
    return name[:1].isdigit() or (tok or b"")[:1] in (b"|", b"[")


START_DIST = b".start_dist"
END_DIST = b".end_dist"


def bucket_name(dist: bytes, name: bytes) -> bytes:
    """The stat a row of M5-era distribution ``dist`` (the text before ``.start_dist``) stands for: its own
    stats (``dist.samples``, ``dist.min_value``) keep their names, a bucket row (``IntAlu 16051 64.2%``,
    ``0 9823 81.1%``) is ``dist::IntAlu``, ``dist::0``, as gem5 names a vector's entries."""
    if name.startswith(dist) and name[len(dist) : len(dist) + 1] == b".":
        return name
    return dist + b"::" + name


def _parse_value(tok: str) -> float | None:
    if tok == "no_value" or tok.startswith("<err:"):  # M5 printed a failed formula as "<err: div-0>"
        return math.nan
    body = tok[1:] if tok[:1] in "+-" else tok
    special = _SPECIAL.get(body.lower())
    if special is not None:
        return -special if tok[0] == "-" else special
    if not _NUMBER.fullmatch(tok):
        return None
    try:
        return float(tok)
    except ValueError:
        return None


def next_marker(buf: bytes | bytearray, start: int, end: int | None = None) -> int:
    """Offset of the first line at or after line start ``start`` (before ``end``) that begins with a Begin or End marker, or -1."""
    end = len(buf) if end is None else end
    if buf.startswith((BEGIN_MARKER, END_MARKER), start, end):
        return start
    hit = start
    while (hit := buf.find(MARKER_LINE, hit, end)) >= 0:
        if buf.startswith((BEGIN_MARKER, END_MARKER), hit + 1, end):
            return hit + 1
        hit += 1
    return -1


def scan_block(
    buf: bytes | bytearray, wanted: set[str] | None, prev: list[str] | None = None, start: int = 0, end: int | None = None
) -> tuple[list[str], bytes, int, int]:
    """Scan dump lines from ``start`` up to the next marker line: the contract of ``_statscan.scan_block``.

    Only the first ``end`` bytes of ``buf`` are read (default: all).  Returns names, float64 values
    as bytes, the index (from ``start``) of the first bad line or -1, and the marker line's offset
    or -1.  ``prev`` only speeds up the C scanner; it is ignored here.
    """
    limit = len(buf) if end is None else end
    stop = next_marker(buf, start, limit)
    end = stop if stop >= 0 else buf.rfind(b"\n", start, limit) + 1  # an unfinished last line is not read
    names: list[str] = []
    values = array("d")
    if end <= start:
        return names, b"", -1, stop
    dist: bytes | None = None  # inside an M5-era distribution: its name
    for i, raw in enumerate(bytes(buf[start : end - 1]).split(b"\n")):
        m = _FIELDS.match(raw)
        if m is None:
            continue  # blank line
        raw_name, tok = m.group(1), m.group(2)
        if raw_name.endswith(START_DIST):
            dist = raw_name[: -len(START_DIST)]
            continue
        if raw_name.endswith(END_DIST):
            dist = None
            continue
        if (tok or b"")[:1] in (b"|", b"["):
            continue  # a Ruby histogram
        if dist is not None:
            raw_name = bucket_name(dist, raw_name)
        elif _skippable(raw_name, tok):
            continue
        if tok is None or len(tok) >= 64:
            return names, values.tobytes(), i, -1
        value = _parse_value(tok.decode("ascii", "replace"))
        if value is None:
            return names, values.tobytes(), i, -1
        name = raw_name.decode("utf-8", "replace")
        if wanted is not None and name not in wanted:
            continue
        names.append(name)
        values.append(value)
    return names, values.tobytes(), -1, stop
