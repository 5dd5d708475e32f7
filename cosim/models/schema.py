"""The ``cosim-model/1`` schema (models/README.md) checked before a model file is used.

One place says what each field may hold: its type, its range, and for a static term's exponents whole numbers only
(a power law ``f^1.5`` is no term of Walker's polynomial: it was truncated to 1 before this check).  A field that is
wrong is refused in one line naming it and what is allowed (exit 2); an optional table the file omits is filled with
its documented default, and :func:`check_cpu_model` returns what was taken, so that the rows carry
``model_default:<field>`` and the summary line says it.

Only the fields this module documents are checked: keys it does not know (inside ``static_form``, ``envelope`` or at
the top level) are left to their readers, so a model file may carry newer optional fields.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

#: tables a model file may omit, and the default taken then (said on the summary line, rows flagged model_default:...)
OPTIONAL_DEFAULTS = {
    "cores": "per_core_static_fraction 1 (static power scaled in proportion to the cores present)",
}

#: whole-number exponents a static term may have: Walker's polynomial has f^0..1 and V^0..3
STATIC_EXPONENTS = range(0, 5)

_TABLES = ("plausibility", "events", "fit", "envelope", "cores", "source", "units", "static_form", "voltage_model")


class _Absent:
    def __repr__(self) -> str:
        return "absent"


ABSENT = _Absent()  # a field the file leaves out, as a refusal names it


class SchemaError(ValueError):
    """A field that breaks the schema: ``field`` names it, ``allowed`` says what it may hold."""

    def __init__(self, field: str, value: Any, allowed: str) -> None:
        super().__init__(f"{field} is {_show(value)}; {allowed}")


def _show(value: Any) -> str:
    import json

    try:
        text = repr(value) if value is ABSENT else json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _number(value: Any, field: str, *, lo: float | None = None, hi: float | None = None, what: str = "a finite number") -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SchemaError(field, value, f"it must be {what}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise SchemaError(field, value, f"it must be {what}")
    return float(value)


def _table(data: dict, key: str, *, required: bool = False) -> dict | None:
    """The table ``key`` (None when an optional one is absent); anything but a JSON object is refused."""
    if key not in data and not required:
        return None
    value = data.get(key, ABSENT)
    if not isinstance(value, dict):
        raise SchemaError(key, value, "it must be a JSON object {...}" + ("" if required else ", or left out"))
    return value


def _terms(data: dict, key: str) -> list:
    if key not in data:
        raise SchemaError(key, ABSENT, "the file must list its terms (models/README.md)")
    terms = data[key]
    if not isinstance(terms, list) or not terms:
        raise SchemaError(key, terms, "it must be a non-empty list of term objects: a model without them prices no power")
    for i, term in enumerate(terms):
        if not isinstance(term, dict):
            raise SchemaError(f"{key}[{i}]", term, "each term must be a JSON object with name and coefficient")
        if not isinstance(term.get("name"), str) or not term["name"]:
            raise SchemaError(f"{key}[{i}].name", term.get("name", ABSENT), "it must be the term's name, a non-empty string")
        _number(term.get("coefficient", ABSENT), f"{key}[{i}] ({term['name']}).coefficient")
    return terms


def _pairs(value: Any, field: str, *, positive: bool = True) -> None:
    ok = isinstance(value, list) and value and all(isinstance(p, list) and len(p) == 2 for p in value)
    if not ok:
        raise SchemaError(field, value, "it must be a non-empty list of [freq_mhz, voltage_v] pairs")
    for j, (f, v) in enumerate(value):
        _number(f, f"{field}[{j}][0]", lo=1e-9, what="a clock > 0 [MHz]")
        _number(v, f"{field}[{j}][1]", lo=1e-9, hi=5.0, what="a voltage in (0, 5] V")


def _range(value: Any, field: str, what: str, hi: float | None = None) -> None:
    if not isinstance(value, list) or len(value) != 2:
        raise SchemaError(field, value, f"it must be [lowest, highest] {what}")
    lo_v = _number(value[0], f"{field}[0]", lo=1e-9, hi=hi, what=f"a positive {what}")
    hi_v = _number(value[1], f"{field}[1]", lo=1e-9, hi=hi, what=f"a positive {what}")
    if lo_v > hi_v:
        raise SchemaError(field, value, "its lowest must come first: [lowest, highest]")


def check_cpu_model(data: Any) -> tuple[str, ...]:
    """Check a ``cosim-model/1`` file's fields (:class:`SchemaError` on the first wrong one); returns the optional
    tables it omits whose default is taken (:data:`OPTIONAL_DEFAULTS`)."""
    if not isinstance(data, dict):
        raise SchemaError("the file", type(data).__name__, "a model file is one JSON object {...}")
    for key in ("name", "isa"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise SchemaError(key, data.get(key, ABSENT), "it must be a non-empty string")
    cores = data.get("cores_per_cluster", ABSENT)
    if isinstance(cores, bool) or not isinstance(cores, int) or not 1 <= cores <= 1024:
        raise SchemaError("cores_per_cluster", cores, "it must be a whole number of cores, 1-1024")
    tables = {key: _table(data, key) for key in _TABLES}
    for i, term in enumerate(_terms(data, "dynamic_terms")):
        events = term.get("events", ABSENT)
        where = f"dynamic_terms[{i}] ({term['name']}).events"
        if not isinstance(events, dict) or not events:
            raise SchemaError(where, events, 'it must map event codes to weights, e.g. {"0x11": 1}')
        for event, weight in events.items():
            _number(weight, f"{where}.{event}")
    for i, term in enumerate(_terms(data, "static_terms")):
        for exp in ("f_exp", "v_exp"):
            value = term.get(exp, ABSENT)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value not in STATIC_EXPONENTS:
                raise SchemaError(
                    f"static_terms[{i}] ({term['name']}).{exp}",
                    value,
                    f"it must be a whole number {STATIC_EXPONENTS.start}-{STATIC_EXPONENTS.stop - 1} (Walker's polynomial: "
                    "coefficient * f^f_exp * V^v_exp)",
                )
    vf = _table(data, "vf_table", required=True) or {}
    _pairs(vf.get("points_mhz_v", ABSENT), "vf_table.points_mhz_v")
    training = _table(data, "training", required=True) or {}
    _range(training.get("freq_mhz", ABSENT), "training.freq_mhz", "clock [MHz]")
    _range(training.get("voltage_v", ABSENT), "training.voltage_v", "voltage [V]", hi=5.0)
    _optional(tables)
    return tuple(key for key in OPTIONAL_DEFAULTS if tables.get(key) is None)


def _optional(tables: dict[str, dict | None]) -> None:
    """The optional tables' documented fields, where given."""
    events = tables["events"] or {}
    for code, name in events.items():
        if not isinstance(name, str):
            raise SchemaError(f"events.{code}", name, "it must be the event's name, a string")
    bounds = tables["plausibility"] or {}
    if "max_power_w" in bounds:
        _number(bounds["max_power_w"], "plausibility.max_power_w", lo=1e-9, what="a power > 0 [W]")
    rates = bounds.get("max_events_per_cycle", {})
    if not isinstance(rates, dict):
        raise SchemaError("plausibility.max_events_per_cycle", rates, "it must map event codes to positive numbers")
    for code, limit in rates.items():
        _number(limit, f"plausibility.max_events_per_cycle.{code}", lo=1e-9, what="a positive number of events per cycle")
    fit = tables["fit"] or {}
    if fit.get("ser_w") is not None:
        _number(fit["ser_w"], "fit.ser_w", lo=0.0, what="a standard error >= 0 [W], or null when unknown")
    envelope = tables["envelope"] or {}
    if "band_x_top_clock" in envelope:
        _number(envelope["band_x_top_clock"], "envelope.band_x_top_clock", lo=1.0, what="a number >= 1")
    if "rel_error_per_x" in envelope:
        _number(envelope["rel_error_per_x"], "envelope.rel_error_per_x", lo=0.0, what="a number >= 0")
    if envelope.get("operating_points_mhz_v") is not None:
        _pairs(envelope["operating_points_mhz_v"], "envelope.operating_points_mhz_v")
    cores = tables["cores"]
    if cores is not None:
        if "per_core_static_fraction" not in cores:
            raise SchemaError("cores.per_core_static_fraction", ABSENT, "a cores table must give it (0-1), or leave cores out")
        _number(cores["per_core_static_fraction"], "cores.per_core_static_fraction", lo=0.0, hi=1.0, what="a fraction 0-1")


def refusal(path: str | Path, err: SchemaError) -> str:
    """The one-line refusal of a model file that breaks the schema."""
    return f"{path}: {err} (see models/README.md for the model file schema)"
