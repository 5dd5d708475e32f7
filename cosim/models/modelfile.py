"""cosim model files (``models/*.json``): loading, checking, and the operating-point rules.

A model file carries the coefficients with their source, units, the V-f table
the model was trained with, the training V-f range and fit statistics.  See
``models/README.md`` for the schema.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from cosim.errors import CosimError
from cosim.models.clocks import FREQ_REL_TOL
from cosim.models.walker import DynamicTerm, StaticTerm
from cosim.readers._files import read_text

SCHEMA = "cosim-model/1"
CORE_KINDS = ("in-order", "out-of-order")  # a model file's optional 'core_kind'


@dataclass(frozen=True)
class Model:
    """A Walker-formulation PMC power model read from a cosim model file."""

    name: str
    path: str
    component: str
    cores_per_cluster: int
    event_names: dict[str, str]
    dynamic: tuple[DynamicTerm, ...]
    static: tuple[StaticTerm, ...]
    vf_points: tuple[tuple[float, float], ...]  # (freq [MHz], voltage [V]), sorted by frequency
    train_freq_mhz: tuple[float, float]
    train_voltage_v: tuple[float, float]
    ser_w: float | None  # standard error of regression [W]; None when unknown
    raw: dict[str, Any]
    voltage_model: tuple[tuple[float, float, float], ...] | None = None  # (f [MHz], target [V], slope [V/W])
    isa: str = "arm"  # ISA of the cores the model was measured on (arm, x86, ...)
    max_power_w: float | None = None  # highest plausible cluster power [W] (for cores_per_cluster cores)
    max_events_per_cycle: dict[str, float] = field(default_factory=dict)  # event -> most a core can count per cycle
    core_kind: str | None = None  # "in-order" or "out-of-order": the kind of core measured; None: not stated
    defaults: tuple[str, ...] = ()  # optional tables the file omits, priced by their documented default (flagged)

    def __repr__(self) -> str:  # one line: the file's JSON (raw) is kilobytes
        lo, hi = self.train_freq_mhz
        kind = f"{self.core_kind} " if self.core_kind else ""
        return f"Model({self.name!r}, {self.isa} {kind}cluster of {self.cores_per_cluster} cores, trained {lo:g}-{hi:g} MHz)"

    @property
    def events(self) -> tuple[str, ...]:
        """PMU events the model needs, e.g. ``("0x11", "0x1b", ...)``."""
        return tuple(sorted({e for t in self.dynamic for e in t.events}))


@dataclass(frozen=True)
class OperatingPoint:
    """Voltage chosen for each epoch's frequency, and how far it can be trusted."""

    voltage_v: np.ndarray
    freq_outside_training: np.ndarray  # bool per epoch
    voltage_outside_training: np.ndarray
    voltage_not_in_table: np.ndarray  # interpolated or extrapolated from the V-f table
    voltage_u_v: np.ndarray | None = None  # uncertainty of a voltage continued above the table [V]; None: none


def shipped_models_dir() -> Path:
    """The folder of model files shipped with cosim (``models/`` in the repository)."""
    installed = resources.files("cosim") / "_models"
    if installed.is_dir() and any(p.name.endswith(".json") for p in installed.iterdir()):
        return Path(str(installed))
    return Path(__file__).resolve().parents[2] / "models"


@functools.lru_cache(maxsize=8)
def shipped_of_schema(schemas: tuple[str, ...]) -> tuple[str, ...]:
    """The shipped files (by stem) whose ``schema`` is one of ``schemas``: the models a reader of them can take
    (``models/`` also holds files that are not models, such as the thermal constants)."""
    found = []
    for path in sorted(shipped_models_dir().glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("schema") in schemas:
            found.append(path.stem)
    return tuple(found)


def read_model_json(path: str | Path, *, schema: str | tuple[str, ...], kind: str) -> tuple[Path, dict]:
    """Resolve a model file (a bare name means a shipped model), parse its JSON and check its schema (or one of several)."""
    path = Path(path)
    if not path.exists() and path.parent == Path(".") and (shipped_models_dir() / f"{path.stem}.json").exists():
        path = shipped_models_dir() / f"{path.stem}.json"
    allowed = (schema,) if isinstance(schema, str) else tuple(schema)
    shipped = ", ".join(shipped_of_schema(allowed))  # the shipped files this reader takes, not every JSON in models/
    text = read_text(path, missing_hint=f"give a model file or a shipped model: {shipped}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise CosimError(f"{path}:{err.lineno}: model file is not valid JSON ({err.msg})") from None
    except RecursionError:  # nested deeper than Python's parser goes: no file cosim reads is
        raise CosimError(f"{path}: JSON nested deeper than any model file is; give the file as written") from None
    got = data.get("schema") if isinstance(data, dict) else None
    if got not in allowed:
        raise CosimError(f"{path}: schema is {got!r}; a {kind} reads {' or '.join(map(repr, allowed))} (see models/README.md)")
    return path, data


def load_model(path: str | Path) -> Model:
    """Read and check a cosim model file; a bare name (``cortex-a15-walker2017``) means a shipped model."""
    path, data = read_model_json(path, schema=SCHEMA, kind="CPU model (cosim)")
    return _parse(path, data)


def _parse(path: Path, data: Any) -> Model:
    from cosim.models.schema import SchemaError, check_cpu_model, refusal

    try:
        defaults = check_cpu_model(data)
    except SchemaError as err:
        raise CosimError(refusal(path, err)) from None

    def need(obj: dict, key: str, where: str) -> Any:
        if not isinstance(obj, dict) or key not in obj:
            raise CosimError(f"{path}: {where} has no '{key}'; see models/README.md for the model file schema")
        return obj[key]

    def number(obj: dict, key: str, where: str) -> float:
        value = need(obj, key, where)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise CosimError(f"{path}: {where} '{key}' must be a finite number, not {value!r}")
        return float(value)

    dynamic = []
    for i, t in enumerate(need(data, "dynamic_terms", "the file")):
        where = f"dynamic_terms[{i}]"
        events = need(t, "events", where)
        if not isinstance(events, dict) or not events:
            raise CosimError(f"{path}: {where} 'events' must map event codes to weights, e.g. {{\"0x11\": 1}}")
        dynamic.append(
            DynamicTerm(
                name=str(need(t, "name", where)),
                events={str(k).lower(): float(v) for k, v in events.items()},
                coefficient=number(t, "coefficient", f"{where} ({t.get('name', '?')})"),
            )
        )
    static = []
    for i, t in enumerate(need(data, "static_terms", "the file")):
        where = f"static_terms[{i}] ({t.get('name', '?') if isinstance(t, dict) else '?'})"
        static.append(
            StaticTerm(
                name=str(need(t, "name", where)),
                f_exp=int(number(t, "f_exp", where)),
                v_exp=int(number(t, "v_exp", where)),
                coefficient=number(t, "coefficient", where),
            )
        )
    vf = need(data, "vf_table", "the file")
    points = need(vf, "points_mhz_v", "vf_table")
    try:
        vf_points = tuple(sorted((float(f), float(v)) for f, v in points))
    except (TypeError, ValueError):
        raise CosimError(f"{path}: vf_table.points_mhz_v must be a list of [freq_mhz, voltage_v] pairs") from None
    if not vf_points:
        raise CosimError(f"{path}: vf_table.points_mhz_v is empty; the model needs its training voltages")
    training = need(data, "training", "the file")
    train_f = tuple(float(x) for x in need(training, "freq_mhz", "training"))
    train_v = tuple(float(x) for x in need(training, "voltage_v", "training"))
    ser = data.get("fit", {}).get("ser_w")
    isa = need(data, "isa", "the file")
    if not isinstance(isa, str) or not isa.strip():
        raise CosimError(f"{path}: 'isa' must name the ISA the model was trained on, e.g. \"arm\"")
    core_kind = data.get("core_kind")
    if core_kind not in (None, *CORE_KINDS):
        raise CosimError(
            f"{path}: 'core_kind' is {core_kind!r}; give the kind of core the model was measured on: {' or '.join(CORE_KINDS)}"
        )
    bounds = data.get("plausibility", {})
    max_power = number(bounds, "max_power_w", "plausibility") if "max_power_w" in bounds else None
    rates = bounds.get("max_events_per_cycle", {})
    if not isinstance(rates, dict) or not all(isinstance(v, (int, float)) and v > 0 for v in rates.values()):
        raise CosimError(f"{path}: plausibility.max_events_per_cycle must map event codes to positive numbers")
    vmodel = None
    if "voltage_model" in data:
        try:
            vmodel = tuple(
                (float(f), float(v), float(k))
                for f, v, k in need(data["voltage_model"], "points_mhz_target_v_slope_v_per_w", "voltage_model")
            )
        except (TypeError, ValueError):
            raise CosimError(
                f"{path}: voltage_model.points_mhz_target_v_slope_v_per_w must be [freq_mhz, target_v, slope_v_per_w] triples"
            ) from None
    return Model(
        name=str(need(data, "name", "the file")),
        path=str(path),
        component=str(data.get("component", "")),
        cores_per_cluster=int(number(data, "cores_per_cluster", "the file")),
        event_names={str(k).lower(): v for k, v in data.get("events", {}).items()},
        dynamic=tuple(dynamic),
        static=tuple(static),
        vf_points=vf_points,
        train_freq_mhz=(min(train_f), max(train_f)),
        train_voltage_v=(min(train_v), max(train_v)),
        ser_w=float(ser) if isinstance(ser, (int, float)) else None,
        raw=data,
        voltage_model=vmodel,
        isa=isa.strip().lower(),
        max_power_w=max_power,
        max_events_per_cycle={str(k).lower(): float(v) for k, v in rates.items()},
        core_kind=core_kind,
        defaults=defaults,
    )


def operating_point(model: Model, freq_mhz: np.ndarray, voltage_v: float | np.ndarray | None = None) -> OperatingPoint:
    """Voltage for each epoch's frequency [MHz]: the user's ``voltage_v``, else the model's V-f table.

    The table is read as :func:`cosim.models.envelope.curve_voltage` says: exact at its clocks (within gem5's tick
    rounding), linear between them, continued below from the two lowest points and above as
    :func:`cosim.models.envelope.extrapolated_voltage` says; all but the table's clocks are flagged, never silent.
    """
    from cosim.models.envelope import curve_voltage

    f = np.asarray(freq_mhz, dtype=float)
    table_f = np.array([p[0] for p in model.vf_points])
    in_table = (np.abs(f[:, None] - table_f[None, :]) <= FREQ_REL_TOL * table_f[None, :]).any(axis=1)
    u = np.zeros(f.shape)
    if voltage_v is not None:
        v = np.broadcast_to(np.asarray(voltage_v, dtype=float), f.shape).copy()
        not_in_table = np.zeros(f.shape, dtype=bool)
    else:
        v, u = curve_voltage(model, f)  # a table clock reached through tick rounding reads exactly its voltage
        not_in_table = ~in_table
    lo_f, hi_f = model.train_freq_mhz
    lo_v, hi_v = model.train_voltage_v
    return OperatingPoint(
        voltage_v=v,
        freq_outside_training=(f < lo_f * (1 - FREQ_REL_TOL)) | (f > hi_f * (1 + FREQ_REL_TOL)),
        voltage_outside_training=(v < lo_v - 1e-9) | (v > hi_v + 1e-9),
        voltage_not_in_table=not_in_table,
        voltage_u_v=u,
    )
