"""Reading a user's text file, with the one-line errors every reader gives."""

from __future__ import annotations

from pathlib import Path

from cosim.errors import CosimError


def read_text(path: Path, *, missing_hint: str) -> str:
    """The file's text; a missing, unreadable or non-UTF-8 file is a :class:`CosimError`."""
    try:
        return path.read_text()
    except FileNotFoundError:
        raise CosimError(f"{path}: no such file; {missing_hint}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise CosimError(f"{path}: cannot read ({err})") from None
