"""A study's design file (TOML): the gem5 command, the parameters whose product is the study, the models.

Read with the standard library's :mod:`tomllib`; every problem is one :class:`CosimError` line naming the
file and the key.  Relative paths are relative to the design file.  See docs/reference/design-file.md.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shlex
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cosim.errors import CosimError

#: the key of the parameter that a list of workloads becomes
WORKLOAD = "workload"
_TABLES = {"gem5", "parameters", "models", "sample", "thermal"}
#: [thermal]: the die temperature static power is priced at, as cosim power's options of the same names
_THERMAL_KEYS = {"ambient_c", "start_temperature_c", "temperature_c"}
_GEM5_KEYS = {"binary", "config", "args", "workload"}
_SAMPLE_KEYS = {"method", "n", "seed"}
SAMPLE_METHODS = ("grid", "random", "sobol", "lhs")

Value = int | float | str | bool


@dataclass(frozen=True)
class Design:
    """A parsed design file: paths resolved, every value checked."""

    path: Path
    binary: Path
    config: Path
    args: tuple[str, ...]
    workloads: tuple[tuple[str, ...], ...]  # one: a fixed workload; several: the "workload" parameter
    parameters: dict[str, tuple[Value, ...]]  # option -> its values, in file order
    models: dict[str, tuple[str, str]] = field(default_factory=dict)  # cluster name -> (config path, model)
    method: str = "grid"
    n: int | None = None
    seed: int = 0
    thermal: dict[str, float] = field(default_factory=dict)  # open_run's temperature_c / ambient_c / start_temperature_c [°C]

    def space(self) -> dict[str, tuple[Value, ...]]:
        """Every axis of the study, the workload last when there are several."""
        axes = dict(self.parameters)
        if len(self.workloads) > 1:
            axes[WORKLOAD] = tuple(shlex.join(w) for w in self.workloads)
        return axes

    def fingerprint(self) -> str:
        """What makes two studies the same design: the command and the axes' names (values may be added)."""
        fixed = {
            "binary": str(self.binary),
            "config": str(self.config),
            "args": list(self.args),
            "workload": [list(w) for w in self.workloads] if len(self.workloads) == 1 else None,
            "axes": list(self.space()),
            "models": {k: list(v) for k, v in sorted(self.models.items())},
        } | ({"thermal": dict(sorted(self.thermal.items()))} if self.thermal else {})  # absent: a study made before [thermal]
        return hashlib.sha256(json.dumps(fixed, sort_keys=True).encode()).hexdigest()[:16]


def point_id(params: dict[str, Value]) -> str:
    """A stable name for a point: a hash of its parameters (key order and Python version do not matter)."""
    text = json.dumps({k: params[k] for k in sorted(params)}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def load_design(path: str | Path, *, missing: list[str] | None = None) -> Design:
    """Parse and check ``path``; refuses in one line on an unknown key, a wrong type, an empty grid or a missing file.

    With a ``missing`` list (a dry run, which runs nothing) a missing gem5, config or workload is appended to it
    instead, one line each, and its path kept as the design names it.
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CosimError(f"{path}: no such design file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise CosimError(f"{path}: cannot read it ({err})") from None
    except tomllib.TOMLDecodeError as err:
        raise CosimError(f"{path}: not valid TOML ({err})") from None
    _no_unknown(path, "", data, _TABLES)
    for name in _TABLES & set(data):
        if not isinstance(data[name], dict):
            raise CosimError(f"{path}: [{name}] must be a table")
    gem5 = data.get("gem5", {})
    _no_unknown(path, "gem5.", gem5, _GEM5_KEYS)
    if "config" not in gem5:
        raise CosimError(f"{path}: [gem5] needs config = the gem5 config script to run")
    here = path.resolve().parent
    binary = _binary(path, here, gem5.get("binary"), missing)
    config = _file(path, "gem5.config", here, _text(path, "gem5.config", gem5["config"]), missing)
    args = tuple(_text(path, f"gem5.args[{i}]", a) for i, a in enumerate(_list(path, "gem5.args", gem5.get("args", []))))
    workloads = _workloads(path, here, gem5.get("workload", []), missing)
    parameters = _parameters(path, data.get("parameters", {}))
    models = _models(path, data.get("models", {}))
    sample = data.get("sample", {})
    _no_unknown(path, "sample.", sample, _SAMPLE_KEYS)
    method = sample.get("method", "grid")
    if method not in SAMPLE_METHODS:
        raise CosimError(f"{path}: sample.method = {method!r}; expected one of {', '.join(SAMPLE_METHODS)}")
    n = sample.get("n")
    if method != "grid" and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
        raise CosimError(f"{path}: sample.method = {method!r} needs sample.n = the number of points (a positive integer)")
    seed = sample.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise CosimError(f"{path}: sample.seed must be an integer")
    thermal = _thermal(path, data.get("thermal", {}))
    design = Design(path, binary, config, args, workloads, parameters, models, method, n, seed, thermal)
    if not design.space():
        raise CosimError(f"{path}: the grid is empty: give [parameters] with at least one option and its values, or several workloads")
    return design


def _thermal(path: Path, table: dict) -> dict[str, float]:
    """[thermal]: a stated die temperature, or the thermal loop's ambient and start [°C] (docs/explanation/thermal.md)."""
    from cosim.timeline.temperature import STATED_RANGE_C

    _no_unknown(path, "thermal.", table, _THERMAL_KEYS)
    lo, hi = STATED_RANGE_C
    for key, value in table.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not lo <= value <= hi:
            raise CosimError(f"{path}: thermal.{key} = {value!r}; expected a temperature in °C, {lo:g} to {hi:g}")
    if "temperature_c" in table and len(table) > 1:
        raise CosimError(
            f"{path}: thermal.temperature_c states the die temperature, ambient_c and start_temperature_c predict it: give one or the others"
        )
    return {key: float(value) for key, value in table.items()}


def _no_unknown(path: Path, prefix: str, table: dict, known: set[str]) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise CosimError(f"{path}: unknown key '{prefix}{unknown[0]}'; expected one of {', '.join(sorted(known))}")


def _text(path: Path, key: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise CosimError(f"{path}: {key} must be a string or a number, not {type(value).__name__}")
    return str(value)


def _list(path: Path, key: str, value: Any) -> list:
    if not isinstance(value, list):
        raise CosimError(f"{path}: {key} must be a list")
    return value


def _missing(missing: list[str] | None, message: str) -> None:
    """Refuse with ``message``, or note it where a dry run collects what is missing."""
    if missing is None:
        raise CosimError(message)
    missing.append(message)


def _file(path: Path, key: str, here: Path, name: str, missing: list[str] | None = None) -> Path:
    target = (here / name).resolve()
    if not target.is_file():
        _missing(missing, f"{path}: {key} = {name!r}: no such file ({target})")
    return target


def _binary(path: Path, here: Path, name: Any, missing: list[str] | None = None) -> Path:
    if name is None:
        name = os.environ.get("COSIM_GEM5") or shutil.which("gem5")
        if not name:
            _missing(missing, f"{path}: no gem5: set [gem5] binary, or $COSIM_GEM5, or put gem5 on PATH")
            return Path("gem5")
        target = Path(name).resolve()
        key = "$COSIM_GEM5" if os.environ.get("COSIM_GEM5") else "gem5 on PATH"
    else:
        target = (here / _text(path, "gem5.binary", name)).resolve()
        key = f"gem5.binary = {name!r}"
    if not target.is_file():
        _missing(missing, f"{path}: {key}: no such file ({target})")
    elif not os.access(target, os.X_OK):
        raise CosimError(f"{path}: {key}: {target} is not executable (chmod +x it)")
    return target


def _workloads(path: Path, here: Path, value: Any, missing: list[str] | None = None) -> tuple[tuple[str, ...], ...]:
    """``["bin", "arg"]`` is one workload; ``[["bin", "a"], ["bin", "b"]]`` several (one more parameter)."""
    items = _list(path, "gem5.workload", value)
    if not items:
        return ((),)
    lists = items if all(isinstance(i, list) for i in items) else [items]
    out = []
    for i, words in enumerate(lists):
        key = f"gem5.workload[{i}]" if len(lists) > 1 else "gem5.workload"
        if not words:
            raise CosimError(f"{path}: {key} is empty; give the program and its arguments")
        words = [_text(path, key, w) for w in words]
        out.append((str(_file(path, key, here, words[0], missing)), *words[1:]))
    if len(set(out)) != len(out):
        raise CosimError(f"{path}: gem5.workload lists the same workload twice")
    return tuple(out)


def _parameters(path: Path, table: dict) -> dict[str, tuple[Value, ...]]:
    out = {}
    for name, values in table.items():
        key = f"parameters.{name!r}"
        if not name.startswith("-") or name == WORKLOAD:
            raise CosimError(f'{path}: {key}: a parameter is an option of the config script, e.g. "--big-cores"')
        if not isinstance(values, list):
            values = [values]
        if not values:
            raise CosimError(f"{path}: {key} has no values; the grid would be empty")
        for v in values:
            if not isinstance(v, str | int | float | bool):
                raise CosimError(f"{path}: {key}: {v!r} is not a string, number or boolean")
        if len({json.dumps(v) for v in values}) != len(values):
            raise CosimError(f"{path}: {key} lists a value twice")
        out[name] = tuple(values)
    return out


def _models(path: Path, table: dict) -> dict[str, tuple[str, str]]:
    out = {}
    for name, value in table.items():
        if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
            raise CosimError(f'{path}: models.{name} must be ["config path", "model"], e.g. ["system.bigCluster", "cortex-a15-walker2017"]')
        try:  # a typo must cost nothing: found here, not after gem5 has run every point
            from cosim.models.modelfile import load_model

            load_model(value[1])
        except CosimError as err:
            raise CosimError(f"{path}: models.{name}: {err}") from None
        out[name] = (value[0], value[1])
    return out


def grid_points(design: Design) -> list[dict[str, Value]]:
    """Every point of the product, in file order (the last parameter varies fastest)."""
    axes = design.space()
    return [dict(zip(axes, combo)) for combo in itertools.product(*axes.values())]


def sample_points(design: Design) -> list[dict[str, Value]]:
    """The design's points: the full product, or ``n`` of them drawn by the seeded random/Sobol/LHS sampler."""
    grid = grid_points(design)
    if design.method == "grid" or design.n is None or design.n >= len(grid):
        return grid
    import numpy as np

    axes = design.space()
    sizes = [len(v) for v in axes.values()]
    if design.method == "random":
        chosen = np.random.default_rng(design.seed).choice(len(grid), size=design.n, replace=False)
        return [grid[i] for i in sorted(chosen)]
    try:
        from scipy.stats import qmc
    except ImportError:
        raise CosimError(f"{design.path}: sample.method = {design.method!r} needs scipy (pip install scipy), or use 'random'") from None
    engine = qmc.Sobol(len(sizes), seed=design.seed) if design.method == "sobol" else qmc.LatinHypercube(len(sizes), seed=design.seed)
    picked: dict[int, None] = {}
    while len(picked) < design.n:  # quasi-random cells may repeat on small axes: draw until n distinct points
        for u in engine.random(design.n):
            cell = [min(int(x * s), s - 1) for x, s in zip(u, sizes)]
            picked.setdefault(int(np.ravel_multi_index(cell, sizes)), None)
            if len(picked) == design.n:
                break
    return [grid[i] for i in sorted(picked)]


def command(design: Design, params: dict[str, Value]) -> list[str]:
    """The exact gem5 command of a point, run inside its own folder (``--outdir=.``)."""
    options: list[str] = []
    for name, value in params.items():
        if name == WORKLOAD:
            continue
        if value is True:
            options.append(name)
        elif value is not False:
            options += [name, str(value)]
    workload = list(shlex.split(str(params[WORKLOAD]))) if WORKLOAD in params else list(design.workloads[0])
    return [str(design.binary), "--outdir=.", str(design.config), *design.args, *options, *(["--", *workload] if workload else [])]
