"""Reading a user's text file, with the one-line errors every reader gives."""

from __future__ import annotations

from pathlib import Path

from cosim.errors import CosimError


def read_text(path: Path, *, missing_hint: str, empty_hint: str | None = None) -> str:
    """The file's text; a missing, unreadable or non-UTF-8 file is a :class:`CosimError`, and so is
    an empty one (nothing but white space) when ``empty_hint`` says what to give instead."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise CosimError(f"{path}: no such file; {missing_hint}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise CosimError(f"{path}: cannot read ({err})") from None
    if empty_hint is not None and not text.strip():
        raise CosimError(f"{path}: the file is empty; {empty_hint}")
    return text
