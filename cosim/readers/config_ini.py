"""gem5's config.ini: ``[object path]`` sections of ``key=value`` lines, as configparser reads them."""

from __future__ import annotations

import configparser
from pathlib import Path

from cosim.errors import CosimError


def parse_ini(path: Path, text: str) -> dict[str, dict[str, str]]:
    """Section -> its keys and values (text, gem5's case kept); a file that is not an ini file, or one that gem5 did not
    write whole (:func:`refuse_incomplete`), is refused in one line."""
    refuse_zero_bytes(path, text)
    plain = plain_ini(text)
    if plain is not None:
        refuse_incomplete(path, plain)
        return plain
    parser = configparser.RawConfigParser(delimiters=("=",), strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keep gem5's case
    try:
        parser.read_string(text, source=str(path))
    except configparser.Error:
        first = text.lstrip().splitlines()[0][:60] if text.strip() else ""
        what = "a gem5 stats.txt" if first.startswith("---------- Begin") else f"it starts {first!r}"
        raise CosimError(
            f"{path}: not a gem5 config.ini ({what}, no [section] header); give the config.ini or config.json gem5 wrote "
            "beside stats.txt (--config)"
        ) from None
    objects = {section: dict(parser.items(section)) for section in parser.sections()}
    refuse_incomplete(path, objects)
    return objects


_WHOLE = "give the whole config.ini gem5 wrote beside stats.txt (or another with --config)"


def refuse_zero_bytes(path: Path, text: str) -> None:
    """Zero bytes: what a crash leaves where the file was not yet written (a config read from what is left describes
    another system: priced up to 39 % off in the reliability campaign)."""
    at = text.find("\x00")
    if at >= 0:
        line = text.count("\n", 0, at) + 1
        raise CosimError(f"{path}:{line}: zero bytes from here on, where gem5 had not yet written the file; {_WHOLE}")


def refuse_incomplete(path: Path, objects: dict[str, dict[str, str]]) -> None:
    """Every object a config.ini names among its ``children`` has its own section (gem5 writes one for each; so do
    the 240 real config.ini files in ../shared): one without means the file was cut, and the system read is another."""
    for section, params in objects.items():
        for child in params.get("children", "").split():
            name = child if section == "root" else f"{section}.{child}"
            if name not in objects:
                raise CosimError(f"{path}: [{section}] names child '{child}' but the file has no [{name}] section (cut short?); {_WHOLE}")


def plain_ini(text: str) -> dict[str, dict[str, str]] | None:
    """The sections of an ini file as gem5 writes it (``[path]`` then ``key=value`` lines, no indented continuation
    lines), read as configparser reads them in :func:`parse_ini`, in a sixteenth of its time (2.7 against 42 ms on the
    bundled run's 125 kB); None for anything else: configparser then reads it, or says why it cannot."""
    objects: dict[str, dict[str, str]] = {}
    section: dict[str, str] | None = None
    for line in text.split("\n"):  # configparser's read_string splits at \n only
        value = line.strip()
        if not value or value[0] in "#;":
            continue
        if line[0] != value[0]:  # indented: a continuation line, or an indented key
            return None
        if value[0] == "[":
            name = value[1:-1]
            if value[-1] != "]" or not name or "]" in name or name == configparser.DEFAULTSECT:
                return None
            section = objects.setdefault(name, {})  # a repeated section adds to the first (strict=False)
            continue
        key, sep, val = value.partition("=")
        key = key.rstrip()
        if section is None or not sep or not key:
            return None
        section[key] = val.strip()
    return objects
