"""Times as loggers write them: ISO-8601, nvidia-smi's ``YYYY/MM/DD hh:mm:ss.fff``, Unix seconds -> seconds since
1970-01-01 [s]; the comma ``date --iso-8601=ns`` puts inside a CSV field; and a timed power log as tidy rows."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

from cosim.errors import CosimError

_ISO = re.compile(r"^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?\s*(Z|[+-]\d\d:?\d\d)?$")


def rejoin_time(fields: list[str], width: int, time: int | None) -> list[str]:
    """``date --iso-8601=ns`` writes ``2025-03-01T10:00:00,123456789+01:00``: its comma splits a CSV row one field too
    many; the two halves of the time are joined again."""
    if time is not None and len(fields) == width + 1 and re.fullmatch(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d", fields[time]):
        if re.fullmatch(r"\d+(?:Z|[+-]\d\d:?\d\d)?", fields[time + 1]):
            return [*fields[:time], f"{fields[time]},{fields[time + 1]}", *fields[time + 2 :]]
    return fields


def timestamp_s(raw: str, *, where: str) -> float:
    """A time as loggers write it -> seconds since 1970-01-01 [s]: ISO-8601 (its zone applied; none: as written),
    nvidia-smi's ``YYYY/MM/DD hh:mm:ss.fff``, or Unix seconds."""
    text = raw.strip()
    if _ISO.match(text):
        return _iso(text, where=where)
    if re.fullmatch(r"\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)?", text):  # nvidia-smi's, no zone
        return _iso(text.replace("/", "-"), where=where)
    try:
        value = float(text)
    except ValueError:
        raise CosimError(f"{where}: time '{raw}' is not ISO-8601, nvidia-smi's YYYY/MM/DD hh:mm:ss or Unix seconds") from None
    if not math.isfinite(value) or value < 0:
        raise CosimError(f"{where}: time '{raw}' is not a time >= 0 s")
    return value


def _iso(text: str, *, where: str) -> float:
    m = _ISO.match(text)
    if m is None:
        raise CosimError(f"{where}: time '{text}' is not ISO-8601")
    y, mo, d, h, mi, s, frac, zone = m.groups()
    t = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), tzinfo=UTC)
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        hh, mm = int(zone[1:3]), int(zone[-2:])
        t -= sign * timedelta(hours=hh, minutes=mm)
    whole = (t - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(seconds=1)
    return whole + (int(frac) / 10 ** len(frac) if frac else 0.0)


def melt_samples(wide, units: dict[str, str]):
    """A power log's wide table (``gpu``, ``sample``, ``time_s`` and one column per field) as cosim read's tidy rows:
    one per (sample, numeric field), ``timestamp`` [s] among them; ``units``: field -> its SI unit."""
    table = wide.rename(columns={"time_s": "timestamp"})
    long = table.melt(id_vars=["gpu", "sample"], value_vars=[c for c in units if c in table], var_name="metric", value_name="value")
    long = long[long["value"].notna()]
    long["unit"] = long["metric"].map(units)
    return long.assign(kernel="", launch=long["sample"], device=long["gpu"], statistic="value").sort_values(
        ["launch", "device"], kind="stable"
    )
