"""SimObjects of the stand-in: parameters, children, paths, power models."""

from __future__ import annotations

import re

from m5 import mathexpr

_objects: list[SimObject] = []


class SimObject:
    def __init__(self, **params):
        object.__setattr__(self, "_parent", None)
        object.__setattr__(self, "_name", None)
        object.__setattr__(self, "_children", {})
        object.__setattr__(self, "_frozen", False)
        _objects.append(self)
        for key, value in params.items():
            setattr(self, key, value)

    def __setattr__(self, key, value):
        if self._frozen:
            raise RuntimeError(f"cannot set attribute '{key}' of {self.path()} after m5.instantiate()")
        if isinstance(value, SimObject) and value._parent is None:
            # as in gem5: an orphan becomes a child; an object already in the tree is only referenced
            object.__setattr__(value, "_parent", self)
            object.__setattr__(value, "_name", key)
            self._children[key] = value
        elif isinstance(value, list) and value and all(isinstance(v, SimObject) for v in value):
            for i, v in enumerate(value):
                object.__setattr__(v, "_parent", self)
                object.__setattr__(v, "_name", f"{key}{i}" if len(value) > 1 else key)
                self._children[v._name] = v
        object.__setattr__(self, key, value)

    def path(self) -> str:
        if isinstance(self, Root):
            return "root"
        if self._parent is None:
            return f"<orphan {type(self).__name__}>"  # as gem5 names an object not (yet) under Root
        if isinstance(self._parent, Root):
            return self._name
        return f"{self._parent.path()}.{self._name}"

    def descendants(self):
        yield self
        for child in self._children.values():
            yield from child.descendants()


class Root(SimObject):
    pass


class PowerState(SimObject):
    pass


class ClockedObject(SimObject):
    def __init__(self, **params):
        super().__init__(**params)
        if "power_state" not in params:
            self.power_state = PowerState(default_state="UNDEFINED")


class VoltageDomain(SimObject):
    pass


class Clock:
    """gem5's Clock param value: ``value`` is the period in seconds (or in ticks when ``ticks``)."""

    _UNITS = {"Hz": 1.0, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9}

    def __init__(self, text: str):
        m = re.fullmatch(r"([0-9.]+)\s*([kMG]?Hz|ps|ns|t)", str(text))
        if not m:
            raise ValueError(f"cannot convert {text!r} to a clock")
        number, unit = float(m.group(1)), m.group(2)
        self.ticks = unit == "t"
        self.value = (
            int(number)
            if self.ticks
            else (1.0 / (number * self._UNITS[unit]) if "Hz" in unit else number * (1e-12 if unit == "ps" else 1e-9))
        )


class SrcClockDomain(SimObject):
    def __setattr__(self, key, value):
        if key == "clock":  # a VectorParam.Clock holds Clock values, not the text it was given
            value = [v if isinstance(v, Clock) else Clock(v) for v in (value if isinstance(value, list) else [value])]
        super().__setattr__(key, value)


class BaseCPU(ClockedObject):
    type = "BaseMinorCPU"

    def __setattr__(self, key, value):
        if key == "power_model" and isinstance(value, SimObject):  # a VectorParam in gem5: one model is a vector of one
            super().__setattr__(key, value)
            object.__setattr__(self, key, [value])
            return
        super().__setattr__(key, value)


class Cache(ClockedObject):
    pass


class PowerModel(SimObject):
    pass


class MathExprPowerModel(SimObject):
    """gem5's MathExprPowerModel: expressions read by gem5's MathExpr grammar (m5/mathexpr.py)."""

    _all: list[MathExprPowerModel] = []
    AUTOMATIC = ("voltage", "temp", "clock_period")

    def __init__(self, **params):
        super().__init__(**params)
        for key in ("dyn", "st"):
            if mathexpr.parse(params.get(key, "0")) is None:
                raise RuntimeError(f"panic: Invalid expression ({key} = {params.get(key)!r})")
        MathExprPowerModel._all.append(self)

    @classmethod
    def variables(cls, expr: str) -> list[str]:
        return mathexpr.variables(mathexpr.parse(expr))

    def startup(self) -> None:
        """gem5: every variable must be automatic or resolve to a stat, else fatal."""
        from m5 import stats

        for expr in (self.dyn, self.st):
            for var in self.variables(expr):
                if var not in self.AUTOMATIC and stats.resolve(var) is None:
                    raise RuntimeError(f"fatal: Failed to evaluate {var} in expression:\n{expr}")

    def evaluate(self, expr: str, *, voltage: float, clock_period: float, temp: float = 25.0) -> float:
        """What gem5 computes for ``expr`` with the stats registered now."""
        from m5 import stats

        auto = {"voltage": voltage, "clock_period": clock_period, "temp": temp}

        def lookup(name: str) -> float:
            if name in auto:
                return auto[name]
            info = stats.resolve(name)
            if info is None:
                raise RuntimeError(f"fatal: Failed to evaluate {name}")
            kind, value = info
            if kind not in ("Scalar", "Formula"):
                raise RuntimeError(f"panic: Unknown stat type! ({name} is a {kind})")
            return value

        return mathexpr.evaluate(mathexpr.parse(expr), lookup)


def _freeze_all() -> None:
    for obj in _objects:
        object.__setattr__(obj, "_frozen", True)


def _reset() -> None:
    _objects.clear()
    MathExprPowerModel._all.clear()
