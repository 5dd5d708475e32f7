"""Reader for gem5 ``stats.txt``: one DataFrame row per stats dump (epoch).

The file is streamed in chunks, so memory grows with the number of dumps kept,
never with the size of the text.  Each dump block between the Begin/End marker
lines is tokenised by a small C scanner (``_statscan``) when it was built, or by
the equivalent pure-Python twin in :mod:`cosim.readers._statscan_py`.
"""

from __future__ import annotations

import math
import re
import warnings
import zlib
from array import array
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from cosim.errors import CosimError, CosimWarning, CutOffWarning
from cosim.progress import reporter
from cosim.readers._files import CutGzip
from cosim.readers._stats_files import line_end as _line_end
from cosim.readers._stats_files import open_stats as _open
from cosim.readers._statscan_py import BEGIN_MARKER, END_MARKER, MARKER_LINE, next_marker
from cosim.readers._statscan_py import scan_block as _scan_block_py
from cosim.readers.epochs import tile_epochs
from cosim.readers.files import STATS_NAMES, input_file
from cosim.readers.stats_table import DEFAULT_TICKS_PER_S, SIM_STATS, DroppedDump, StatsMeta, StatsTable

if TYPE_CHECKING:
    import pandas as pd

try:  # the optional C scanner; see setup.py.  One built from older source (another CONTRACT) is not used
    from cosim.readers._statscan import CONTRACT as _C_CONTRACT
    from cosim.readers._statscan import scan_block as _scan_block_c

    _scan_block_c = _scan_block_c if _C_CONTRACT == 2 else None
except ImportError:  # pragma: no cover - depends on the build
    _scan_block_c = None


_CHUNK_BYTES = 1 << 22
#: Epochs per run: 500,000 epochs of 10 us are 5 s simulated; more is a file no power model needs read whole
MAX_DUMPS = 500_000
_MAX_INFLATION = 200  # gem5 stats.txt.gz: about 13x (the bundled v24 run: 21.5 MB from 1.6 MB)


def read_stats(
    path: str | Path,
    *,
    stats: Iterable[str] | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Read every dump of a gem5 ``stats.txt``.

    Parameters
    ----------
    path
        The ``stats.txt`` file, or the ``stats.txt.gz`` gem5 writes with ``--stats-file=stats.txt.gz``.
    stats
        Optional full stat names to keep (much faster on big files).  The
        simulation-level stats are always kept.
    progress
        Show a tqdm progress bar, if tqdm is installed.

    Returns
    -------
    DataFrame with one row per complete dump: every stat as a float column (a
    stat absent from a dump is 0 there, as gem5 leaves out zero stats; ``nan``
    and ``inf`` are kept), plus ``epoch`` (dump index in the file),
    ``start_tick``, ``end_tick`` [tick] and ``duration_s`` [s] computed from the
    tick counts, not the rounded ``simSeconds``.  ``df.attrs["gem5"]`` holds a
    :class:`StatsMeta`.  The epochs tile time: dumps made without a stats reset
    (cumulative counts) are differenced into per-epoch counts and listed in
    ``StatsMeta.cumulative_dumps``, with one warning (:mod:`cosim.readers.epochs`).

    Raises
    ------
    CosimError
        Missing or empty file, no complete dump in it, or dumps that overlap or
        leave a gap no stats reset explains (the message names the dump).
    """
    return read_stats_table(path, stats=stats, progress=progress).to_frame()


def read_stats_table(path: str | Path, *, stats: Iterable[str] | None = None, progress: bool = False) -> StatsTable:
    """:func:`read_stats` without pandas: the same table as numpy columns (what ``cosim power`` uses)."""
    path = Path(path)
    wanted = None
    if stats is not None:
        wanted = set(stats)
        for names in SIM_STATS.values():
            wanted.update(names)

    _warn_if_slow()
    reader = _DumpReader(path, wanted, progress)
    rows, columns = reader.run()
    meta = reader.meta
    if not rows and reader.empty_dumps == meta.dumps_in_file:  # every dump whole, and nothing in them
        raise not_stats_error(path, "no stats")
    if not rows:
        reasons = "; ".join(f"line {d.line}: {d.reason}" for d in meta.dropped[:3])
        # no dump dropped: every one covered no time (zero simulated ticks)
        reasons = reasons or f"all {meta.dumps_in_file} dump(s) cover zero simulated time"
        raise CosimError(f"{path}: no complete stats dump could be read ({reasons})")

    matrix = np.zeros((len(rows), len(columns)))
    values = np.frombuffer(reader.values, dtype=np.float64)
    for i, (cols, start) in enumerate(rows):
        matrix[i, cols] = values[start : start + len(cols)]
    dumps = np.array(reader.kept_dumps, dtype=np.int64)
    meta.cumulative_dumps = dumps[tile_epochs(matrix, columns, dumps, path=str(path))].tolist()
    return StatsTable(matrix, columns, dumps, meta)


#: why a file holds no gem5 statistics, by what a scan of it found
NOT_STATS = {
    "no begin": "no '---------- Begin Simulation Statistics' line",
    "no stats": "no statistics between its Begin and End Simulation Statistics lines",
}


def not_stats_error(path: str | Path, found: str) -> CosimError:
    """A file with no gem5 statistics (``found``: a key of :data:`NOT_STATS`), said alike here and by :mod:`cosim.run`."""
    msg = f"{path}: {NOT_STATS[found]}, so it is not a gem5 stats.txt; give a gem5 output folder (m5out/) or the stats.txt in it"
    return CosimError(msg)


_warned_slow = False


def _warn_if_slow() -> None:
    """Once per process: say that the C scanner is missing, and how to get it."""
    global _warned_slow
    if _scan_block_c is None and not _warned_slow:
        _warned_slow = True
        slow = "so stats.txt is read by the pure-Python scanner, about 20x slower; install a C compiler (e.g. apt-get install gcc"
        why = "cosim's C line scanner was not built (no C compiler at install time) or is older than cosim"
        warnings.warn(CosimWarning(f"{why}, {slow} python3-dev) and reinstall cosim"), stacklevel=3)


def stats_file(run: str | Path) -> Path | None:
    """The stats file in gem5 output folder ``run``: ``stats.txt``, else gem5's gzip ``stats.txt.gz``, else M5's
    ``m5stats.txt``; None if none."""
    for name in STATS_NAMES:
        path = Path(run) / name
        if path.is_file():
            return path
        if path.is_symlink() and not path.exists():  # a link to nothing, or a loop: said, not "no stats.txt"
            raise CosimError(f"{path}: a symbolic link to a file that does not exist (or back to itself); link the stats file gem5 wrote")
    return None


def stats_meta(df: pd.DataFrame) -> StatsMeta:
    """The :class:`StatsMeta` that :func:`read_stats` attached to ``df``."""
    return df.attrs["gem5"]


class _DumpReader:
    """Splits the file into dump blocks as it streams and scans each block."""

    def __init__(self, path: Path, wanted: set[str] | None, progress: bool) -> None:
        self.path = path
        self.wanted = wanted
        self.progress = progress
        self._inflate_limit: int | None = None  # inflated bytes a gzip file may reach
        self.scan: Callable = _scan_block_c or _scan_block_py
        self.meta = StatsMeta(
            path=str(path),
            generation="unknown",
            ticks_per_s=DEFAULT_TICKS_PER_S,
            dumps_in_file=0,
            scanner="c" if _scan_block_c else "python",
        )
        self.columns: dict[str, int] = {}
        # each kept dump: its columns and where its values start in ``values``, which holds them all
        # in one block (one small allocation per dump would fragment the heap between the big reads)
        self.rows: list[tuple[np.ndarray, int]] = []
        self.values = array("d")
        self.kept_dumps: list[int] = []
        self._last_names: list[str] | None = None
        self._last_cols: np.ndarray | None = None
        self.empty_dumps = 0  # dumps with an End marker and no stat line between the markers
        self._stray_at: int | None = None  # file offset of the first non-blank byte after the last dump, if any
        self._stray_head = b""  # and the bytes from there (up to 60)

    def run(self) -> tuple[list[tuple[np.ndarray, int]], dict[str, int]]:
        input_file(
            self.path, what="the stats.txt from gem5's output directory (m5out/)", empty_hint="did gem5 exit before its first stats dump?"
        )
        try:
            f = _open(self.path)
        except OSError as err:
            raise CosimError(f"{self.path}: cannot read ({err.strerror})") from None
        with f:
            size = self.path.stat().st_size
            # gem5's stats inflate about 13x; beyond this the file is a gzip bomb or no stats file
            self._inflate_limit = _MAX_INFLATION * size + (64 << 20) if isinstance(f, CutGzip) else None
            bar = reporter(total=size, label=self.path.name, bytes_=True) if self.progress else None
            try:
                self._stream(f, bar)
            except (OSError, EOFError, zlib.error) as err:  # a corrupt .gz (a cut one reads as far as it goes)
                raise CosimError(f"{self.path}: the gzip stream is damaged ({err}); re-copy the file from gem5's output") from None
            if bar is not None:
                bar.close()
        if self.meta.dumps_in_file == 0:
            raise not_stats_error(self.path, "no begin")
        self._finish_meta()
        return self.rows, self.columns

    def _stream(self, f, bar) -> None:
        # One pass over the text: between dumps, bytes.find looks for the next marker line; inside a
        # dump, the scanner reads its lines and stops at the marker line that closes it.  A dump that
        # runs past the end of the buffer is scanned again from its start once more has been read.
        # File line numbers are only counted (by _line_at) when something has to be reported.
        # The text is read into one buffer, of which buf[:end] holds text, and what is still needed
        # is moved to its front before each read.  No multi-MB object is made per read, so memory
        # stays flat whatever malloc does with big blocks (Dask workers set MALLOC_TRIM_THRESHOLD_,
        # which turns each one into a fresh mmap).
        buf = bytearray(2 * _CHUNK_BYTES)
        view = memoryview(buf)
        buf[0] = ord("\n")  # a virtual newline so a marker on the first line is found too
        end = 1
        base = -1  # file offset of buf[0]
        scan = 0  # where the next marker search starts in buf
        begin: int | None = None  # buf offset of the open dump's Begin line
        read_size = _CHUNK_BYTES
        eof = False
        raw, shown = getattr(f, "_raw", f), 0  # the file under a CutGzip
        while not eof:
            keep = max(0, (begin if begin is not None else scan) - 1)  # and the "\n" before it
            tail = end - keep
            if tail + read_size > len(buf):  # a dump longer than the buffer: a bigger buffer
                bigger = bytearray(tail + read_size)
                bigger[:tail] = view[keep:end]
                buf, view = bigger, memoryview(bigger)
            elif keep:
                view[:tail] = view[keep:end]  # memoryview copies overlapping ranges with memmove
            base, scan, end = base + keep, scan - keep, tail
            if begin is not None:
                begin -= keep
            got = f.readinto(view[end : end + read_size])
            end += got
            if self._inflate_limit is not None and base + end > self._inflate_limit:
                raise CosimError(
                    f"{self.path}: inflates to more than {_MAX_INFLATION}x its {self.path.stat().st_size} bytes, which no gem5 "
                    "stats file does (a gzip bomb?); give the stats.txt(.gz) gem5 wrote"
                )
            if bar is not None:  # in bytes of the file as stored: a .gz one's compressed bytes (its size is the total)
                at = raw.tell()
                bar.update(at - shown)
                shown = at
            eof = not got
            while True:
                if begin is None:
                    hit = buf.find(MARKER_LINE, scan, end)
                    self._note_stray(view, scan, hit if hit >= 0 else end, base)
                    if hit < 0:
                        scan = max(scan, end - len(MARKER_LINE))
                        break
                    if buf.find(b"\n", hit + 1, end) < 0 and not eof:
                        scan = hit
                        break  # marker line not complete yet
                    scan = hit + 1
                    if buf.startswith(BEGIN_MARKER, hit + 1, end):
                        self.meta.dumps_in_file += 1
                        self._check_dumps()
                        begin = hit + 1
                        self._stray_at = None  # what lay between two dumps is not the file's end
                    else:
                        if buf.startswith(END_MARKER, hit + 1, end):
                            self._warn_at(
                                base + hit + 1, "End marker without a Begin marker before it (two files joined, or a cut dump?); ignored"
                            )
                        else:
                            self._note_stray(view, hit + 1, hit + 2, base)  # "---------- " that is no marker
                        scan = _line_end(buf, hit + 1, end)
                    continue
                body = buf.find(b"\n", begin, end) + 1 or end  # a Begin line without newline ends the file
                names, values, bad, stop = self.scan(buf, self.wanted, self._last_names, body, end)
                if stop < 0 and (bad >= 0 or eof):
                    stop = next_marker(buf, body, end)  # the line that closes a dump with a bad line, if any
                if stop < 0 or (buf.find(b"\n", stop, end) < 0 and not eof):
                    # read on (at the end of the file, the dump is truncated); a dump longer than
                    # a read is scanned again per read, so read at least as much as it holds
                    read_size = max(_CHUNK_BYTES, end - begin)
                    break
                if buf.startswith(BEGIN_MARKER, stop, end):
                    self._drop(base + begin, "dump has no End marker (cut off), skipped")
                    self.meta.dumps_in_file += 1
                    self._check_dumps()
                    begin = stop
                    continue
                hole = buf.find(b"\x00", body, stop)  # zero bytes: a hole a crash left, the stats in it lost
                self._dump(names, values, bad, view[body:stop], base + body, hole=hole - body if hole >= 0 else -1)
                begin, scan = None, _line_end(buf, stop, end)  # after the End marker line
        if begin is not None:
            kept = "; every complete dump was kept" if self.rows else ""  # none kept: read_stats says no dump is complete
            self._drop(base + begin, f"last dump is truncated (gem5 killed mid-dump?){kept}")
        elif self._stray_at is not None and self.meta.dumps_in_file:
            self._stray_tail(self._stray_at, base + end)
        elif getattr(f, "cut", False) and self.meta.dumps_in_file:  # a .gz cut between dumps: nothing dropped, but said
            self._warn_at(
                base + end, "the gzip stream is cut off after the last complete dump (gem5 killed?); every complete dump was kept"
            )

    def _note_stray(self, view: memoryview, start: int, stop: int, base: int) -> None:
        """Remember the file offset of the first byte in ``view[start:stop]`` (text between or after dumps) that is
        not white space: after the last dump, such bytes are reported, never dropped silently."""
        if self._stray_at is not None or stop <= start:
            return
        text = bytes(view[start:stop])
        kept = text.lstrip(b" \t\r\n")
        if kept:
            self._stray_at, self._stray_head = base + start + len(text) - len(kept), kept[:60]

    def _stray_tail(self, offset: int, size: int) -> None:
        """Bytes after the last complete dump that are no dump: a loss like a cut dump (CLI exit 3, --allow-partial)."""
        head = self._stray_head
        if not head.strip(b"\0"):
            what = "zero bytes, what a crash leaves where gem5 had not yet written the rest of the file"
        else:
            first = head.split(b"\n")[0].decode("utf-8", "replace").strip()[:40]
            what = f"text that is no stats dump ({first!r}...)"
        kept = len(self.rows)
        warnings.warn(
            CutOffWarning(
                f"{self.path}:{self._line_at(offset)}: {size - offset} byte(s) after the last complete dump "
                f"(dump {self.meta.dumps_in_file - 1}) are {what}; whatever dumps they held are lost, the {kept} complete "
                "dump(s) before them were read (give the whole stats.txt; --allow-partial, where a command has it, accepts the loss)"
            ),
            stacklevel=5,
        )

    def _check_dumps(self) -> None:
        if self.meta.dumps_in_file > MAX_DUMPS:
            raise CosimError(
                f"{self.path}: more than {MAX_DUMPS:,} stats dumps; cosim prices up to that many epochs per run "
                "(dump less often, or split the run)"
            )

    def _line_at(self, offset: int) -> int:
        """1-based line number of file byte ``offset`` (only called to report a problem)."""
        with _open(self.path) as f:
            return f.read(offset).count(b"\n") + 1

    def _drop(self, offset: int, reason: str) -> None:
        dump = self.meta.dumps_in_file - 1
        line = self._line_at(offset)
        self.meta.dropped.append(DroppedDump(dump=dump, line=line, reason=reason))
        warnings.warn(CosimWarning(f"{self.path}:{line}: dump {dump}: {reason}"), stacklevel=5)

    def _warn_at(self, offset: int, message: str) -> None:
        warnings.warn(CosimWarning(f"{self.path}:{self._line_at(offset)}: {message}"), stacklevel=5)

    def _offset_of(self, block: memoryview, offset: int, name: str, nth: int = 0) -> int:
        """File offset of the ``nth`` line of ``block`` that starts with stat ``name``."""
        pattern = re.compile(rb"(?m)^[ \t]*" + re.escape(name.encode()) + rb"[ \t]")
        hits = list(pattern.finditer(bytes(block)))
        return offset + (hits[min(nth, len(hits) - 1)].start() if hits else 0)

    def _check_dump(self, block: memoryview, offset: int, names: list[str], values: np.ndarray) -> bool:
        """Report duplicate names; drop a dump whose simulated time is not a positive finite number."""
        if names is not self._last_names and len(set(names)) != len(names):
            seen: dict[str, int] = {}
            for name in names:
                seen[name] = seen.get(name, 0) + 1
                if seen[name] == 2:
                    first = self._line_at(self._offset_of(block, offset, name, 0))
                    second = self._line_at(self._offset_of(block, offset, name, 1))
                    warnings.warn(
                        CosimWarning(
                            f"{self.path}:{second}: dump {self.meta.dumps_in_file - 1}: stat {name} appears again "
                            f"(first at line {first}); the later value is used"
                        ),
                        stacklevel=6,
                    )
        dump = self.meta.dumps_in_file - 1
        ticks = [n for n in SIM_STATS["sim_ticks"] if n in names]
        if not ticks:
            self._drop(offset, "no sim_ticks/simTicks line, so its length is unknown; dump skipped")
            return False
        for name in ticks + [n for n in SIM_STATS["sim_seconds"] if n in names]:
            value = values[len(names) - 1 - names[::-1].index(name)]
            if math.isfinite(value) and value > 0 or (value == 0 and name in SIM_STATS["sim_seconds"]):
                continue  # simSeconds prints 6 decimals, so a short dump can read 0.000000
            where = self._offset_of(block, offset, name)
            if value == 0:
                self._warn_at(
                    where,
                    f"dump {dump}: {name} is 0 (dumped at the same tick as the previous dump); "
                    "skipped: it covers no time, so it holds no energy",
                )
            else:
                self._drop(where, f"{name} is {value:g}: simulated time must be positive and finite; dump skipped")
            return False
        return True

    def _dump(self, names: list[str], raw_values: bytes, bad: int, block: memoryview, offset: int, *, hole: int = -1) -> None:
        """Keep one scanned dump (``block`` is its text, at file ``offset``), or report why it is dropped."""
        self.empty_dumps += not names and bad < 0
        if hole >= 0:  # the lines the zeros replaced are missing: their stats would read as 0 in this dump
            self._drop(offset + hole, "zero bytes inside the dump (a hole where gem5 had not yet written), dump skipped")
            return
        if bad >= 0:
            lines = bytes(block).split(b"\n")
            text = lines[bad].decode("utf-8", "replace").strip()
            bad_offset = offset + sum(len(x) + 1 for x in lines[:bad])
            self._drop(bad_offset, f"unreadable line {text[:60]!r} (expected '<stat> <value> ...'), dump skipped")
            return
        values = np.frombuffer(raw_values, dtype=np.float64)
        if not self._check_dump(block, offset, names, values):
            return
        if self.wanted is not None and (values < 0).any():  # the counters a model reads, and clocks: never negative
            self._refuse_negative(block, offset, names, values)
        if names is not self._last_names and names != self._last_names:
            self._last_names = names
            self._last_cols = np.fromiter((self.columns.setdefault(n, len(self.columns)) for n in names), dtype=np.intp, count=len(names))
        assert self._last_cols is not None  # set with _last_names on the first dump
        self.rows.append((self._last_cols, len(self.values)))
        self.values.frombytes(raw_values)
        self.kept_dumps.append(self.meta.dumps_in_file - 1)

    def _refuse_negative(self, block: memoryview, offset: int, names: list[str], values: np.ndarray) -> None:
        sim = {n for group in SIM_STATS.values() for n in group}  # their own checks (a dump with no time is skipped)
        bad = next((i for i in np.flatnonzero(values < 0) if names[i] not in sim), None)
        if bad is None:
            return
        line = self._line_at(self._offset_of(block, offset, names[bad]))
        raise CosimError(
            f"{self.path}:{line}: dump {self.meta.dumps_in_file - 1}: counter {names[bad]} is {values[bad]:g}; a count or "
            "clock cannot be negative, so the file is corrupt or was edited: give the stats.txt gem5 wrote"
        )

    def _finish_meta(self) -> None:
        cols = self.columns
        if "simSeconds" in cols or "simTicks" in cols:
            self.meta.generation = "v20.1+"
        elif "sim_seconds" in cols or "sim_ticks" in cols:
            self.meta.generation = "pre-v20.1"
        for name in SIM_STATS["sim_freq"]:
            if name in cols and self.rows:
                cols_idx, start = self.rows[0]
                hit = np.flatnonzero(cols_idx == cols[name])
                if hit.size and math.isfinite(value := self.values[start + hit[0]]) and value > 0:
                    self.meta.ticks_per_s = float(value)
