"""Reading a user's text file, with the one-line errors every reader gives."""

from __future__ import annotations

from pathlib import Path

from cosim.errors import CosimError
from cosim.readers.files import input_file


def read_text(path: Path, *, missing_hint: str, empty_hint: str | None = None) -> str:
    """The file's text; a missing, unreadable, not regular, empty or non-UTF-8 file is a :class:`CosimError`,
    and so is one of nothing but white space when ``empty_hint`` says what to give instead."""
    input_file(path, what=missing_hint.removeprefix("give "), empty_hint=empty_hint)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise CosimError(f"{path}: cannot read ({err})") from None
    if empty_hint is not None and not text.strip():
        raise CosimError(f"{path}: the file is empty; {empty_hint}")
    return text
