"""Numbers with unit suffixes, as profilers print them, to SI base units.

``quantity("31.425GB/s") == (31.425 * 2**30, "B/s")``.  Canonical units: ``B``,
``B/s``, ``s``, ``Hz``, ``W``, ``J``, ``fraction`` (0-1, from percent),
``level`` (nvprof's utilisation levels 0-10, ``Low (2)``) and ``count``.

Byte prefixes are binary (1 KB = 1024 B): nvprof prints them so.  In its
gpu-trace a copy's size divided by its duration gives the printed throughput
only with 2^30 B per GB (128.00MB in 85.106 ms is 1.4688GB/s), and 40,000,000 B
print as 38.147MB.  Nsight Compute spells its units out (``Kbyte``,
``Mbyte/second``) with decimal prefixes; :func:`ncu_quantity` reads those.
"""

from __future__ import annotations

import math
import re

_BINARY = {"": 1.0, "K": 2.0**10, "M": 2.0**20, "G": 2.0**30, "T": 2.0**40}
_DECIMAL = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_SUFFIXED = re.compile(rf"^\s*(?P<num>{_NUMBER}|nan|inf)\s*(?P<unit>[A-Za-zµ/%]*)\s*$", re.IGNORECASE)
_LEVEL = re.compile(r"^\s*(?:Idle|Low|Mid|High|Max)\s*\((?P<level>\d+)\)\s*$")

#: ``nvprof`` unit suffix -> (factor to SI, SI unit).
NVPROF_UNITS: dict[str, tuple[float, str]] = {
    "": (1.0, "count"),
    "%": (0.01, "fraction"),
    **{f"{p}B": (f, "B") for p, f in _BINARY.items()},
    **{f"{p}B/s": (f, "B/s") for p, f in _BINARY.items()},
    **{u: (f, "s") for u, f in _TIME.items()},
    **{f"{p}Hz": (f, "Hz") for p, f in _DECIMAL.items()},
    "W": (1.0, "W"),
    "mW": (1e-3, "W"),
    "J": (1.0, "J"),
    "mJ": (1e-3, "J"),
}


class UnitError(ValueError):
    """A value or unit that cannot be read; the reader names the file and line."""


def quantity(text: str, *, unit: str = "") -> tuple[float, str]:
    """``(value in SI, unit)`` of an nvprof value such as ``1.5629ms``, ``99.53%`` or ``Low (2)``.

    ``unit`` is the unit from a CSV units row when the value itself carries none.
    """
    if m := _LEVEL.match(text):
        return float(m["level"]), "level"
    m = _SUFFIXED.match(text)
    if not m:
        raise UnitError(f"'{text.strip()}' is not a number with a unit")
    suffix = m["unit"] or unit
    if suffix not in NVPROF_UNITS:
        raise UnitError(f"'{text.strip()}' has an unknown unit '{suffix}'")
    factor, si = NVPROF_UNITS[suffix]
    return float(m["num"]) * factor, si


_NCU_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_NCU_TIME = {"second": 1.0, "msecond": 1e-3, "usecond": 1e-6, "nsecond": 1e-9, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
_NCU_COUNTS = {"", "inst", "warp", "sector", "request", "block", "thread", "cycle", "wavefront", "transaction", "SM"}


def ncu_unit(unit: str) -> tuple[float, str]:
    """Factor to SI and SI unit of an Nsight Compute ``Metric Unit`` (``Gbyte/second``, ``usecond``, ``%``).

    Prefixes are decimal: ncu prints a 64 KiB shared memory as 65.54 Kbyte.
    Units it has no SI form for (``inst/cycle``, ``register/thread``) stay as written.
    """
    u = unit.strip()
    if u in _NCU_COUNTS:
        return 1.0, "count"
    if u == "%":
        return 0.01, "fraction"
    if u in _NCU_TIME:
        return _NCU_TIME[u], "s"
    num, _, per = u.partition("/")
    for base, si in (("byte", "B"), ("hz", "Hz"), ("Hz", "Hz"), ("cycle", "Hz"), ("B", "B")):
        prefix = num[: -len(base)] if num.endswith(base) else None
        if prefix is None or prefix not in _NCU_PREFIX or (base == "cycle" and prefix):
            continue
        if not per:
            return (_NCU_PREFIX[prefix], si) if base != "cycle" else (1.0, "count")
        if per in _NCU_TIME:  # a rate: byte/second -> B/s, cycle/nsecond -> Hz
            return _NCU_PREFIX[prefix] / _NCU_TIME[per], ("Hz" if base == "cycle" else f"{si}/s" if si == "B" else si)
    return 1.0, u


def ncu_quantity(text: str, unit: str) -> tuple[float, str]:
    """``(value in SI, unit)`` of an Nsight Compute ``Metric Value`` with its ``Metric Unit``.

    Thousands separators (``1,048,576``) are dropped; ``n/a`` is nan.
    """
    raw = text.strip().replace(",", "")
    factor, si = ncu_unit(unit)
    if raw.lower() in ("n/a", "na", ""):
        return math.nan, si
    try:
        value = float(raw)
    except ValueError:
        raise UnitError(f"'{text.strip()}' is not a number") from None
    return value * factor, si


_NS = {"s": 10**9, "sec": 10**9, "ms": 10**6, "msec": 10**6, "us": 10**3, "usec": 10**3, "µs": 10**3, "ns": 1, "nsec": 1}


def time_ns(text: str, *, unit: str = "") -> int:
    """A time printed in decimal (``6.4049ms``, ``182.960123`` under a units row's ``ms``) as whole nanoseconds,
    by exact decimal arithmetic: ``2336`` ns stays 2336, never the nearest float's 2335.9999.

    ``unit`` is the unit when the text carries none.  Digits past the nanosecond are rounded half to even."""
    from decimal import ROUND_HALF_EVEN

    return int(_decimal_ns(text, unit).to_integral_value(rounding=ROUND_HALF_EVEN))


def time_s(text: str, *, unit: str = "") -> float:
    """The same time in seconds: the float nearest the printed decimal (``119.21ns`` keeps its fraction of a ns)."""
    return float(_decimal_ns(text, unit) / 10**9)


def _decimal_ns(text: str, unit: str):
    from decimal import Decimal, InvalidOperation

    m = _SUFFIXED.match(text)
    suffix = (m["unit"] if m else "") or unit
    if m is None or suffix not in _NS:
        raise UnitError(f"'{text.strip()}' is not a time in s, ms, us or ns")
    try:
        value = Decimal(m["num"]) * _NS[suffix]
    except InvalidOperation:
        raise UnitError(f"'{text.strip()}' is not a number") from None
    if not value.is_finite():
        raise UnitError(f"'{text.strip()}' is not a finite time")
    if abs(value) >= 2**63:  # traces' times are held as int64 ns: past 292 years (1e400) is no time a tool records
        raise UnitError(f"'{text.strip()}' is not a time a trace holds (over 292 years)")
    return value
