"""Reading a user's text file, with the one-line errors every reader gives."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import BinaryIO

from cosim.errors import CosimError
from cosim.readers.files import input_file

#: No text input cosim reads has a longer line; a file with one is refused after reading that much,
#: not loaded whole (a 500 MB line would cost gigabytes once parsed)
MAX_LINE_BYTES = 16 << 20


def read_text(path: Path, *, missing_hint: str, empty_hint: str | None = None) -> str:
    """The file's text; a missing, unreadable, not regular, empty or non-UTF-8 file is a :class:`CosimError`,
    so is one with a line over :data:`MAX_LINE_BYTES`, and one of nothing but white space when
    ``empty_hint`` says what to give instead."""
    input_file(path, what=missing_hint.removeprefix("give "), empty_hint=empty_hint)
    try:
        data = _bounded_bytes(path, missing_hint)
        text = data.decode()
    except OSError as err:
        raise CosimError(f"{path}: cannot read ({err})") from None
    except UnicodeDecodeError:
        what = "gzip-compressed" if data[:2] == b"\x1f\x8b" else "not UTF-8 text"
        raise CosimError(f"{path}: {what}, not the text file expected here; {missing_hint}") from None
    if empty_hint is not None and not text.strip():
        raise CosimError(f"{path}: the file is empty; {empty_hint}")
    return text


def _bounded_bytes(path: Path, missing_hint: str) -> bytearray:
    data = bytearray()
    line_bytes = 0  # of the line that is still open at the end of the last block
    lines = 1
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            data += block
            last = block.rfind(b"\n")
            line_bytes = line_bytes + len(block) if last < 0 else len(block) - last - 1
            lines += block.count(b"\n")
            if line_bytes > MAX_LINE_BYTES:
                raise CosimError(f"{path}: line {lines} is longer than {MAX_LINE_BYTES >> 20} MiB, which no such file has; {missing_hint}")
    return data


class CutGzip:
    """A gzip stream read as far as it goes: one that ends before gzip's end-of-stream marker (gem5 killed while
    writing stats.txt.gz, a partial copy) gives every byte it decompresses, then end of file, with ``cut`` set,
    as a cut-off plain file does; damaged data (a bad CRC, invalid deflate data) still raises."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw, self._gz = raw, gzip.GzipFile(fileobj=raw, mode="rb")
        self.cut = False

    def readinto(self, view) -> int:
        got = 0
        while got < len(view) and not self.cut:
            try:  # read1: one decompression step a call, so the bytes before a cut are never lost with it
                piece = self._gz.read1(len(view) - got)
            except EOFError:
                self.cut = True
                break
            if not piece:
                break
            view[got : got + len(piece)] = piece
            got += len(piece)
        return got

    def read(self, size: int) -> bytes:
        buf = bytearray(size)
        return bytes(buf[: self.readinto(memoryview(buf))])

    def __enter__(self) -> CutGzip:
        return self

    def __exit__(self, *exc) -> None:
        self._gz.close()
        self._raw.close()
