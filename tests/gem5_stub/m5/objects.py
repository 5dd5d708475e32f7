"""SimObjects of the stand-in: parameters, children, paths, power models."""

from __future__ import annotations

import re

_objects: list["SimObject"] = []


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
            raise RuntimeError(f"{type(self).__name__} is not in the object tree (orphan)")
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


class SrcClockDomain(SimObject):
    pass


class BaseCPU(ClockedObject):
    pass


class Cache(ClockedObject):
    pass


class PowerModel(SimObject):
    pass


class MathExprPowerModel(SimObject):
    _all: list["MathExprPowerModel"] = []
    AUTOMATIC = ("voltage", "temp", "clock_period")

    def __init__(self, **params):
        super().__init__(**params)
        MathExprPowerModel._all.append(self)

    _TOKEN = re.compile(r"(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_.:]*)|(?P<op>[-+*/()])|(?P<ws>\s+)")

    @classmethod
    def tokens(cls, expr: str):
        pos = 0
        while pos < len(expr):
            m = cls._TOKEN.match(expr, pos)
            if m is None:
                raise RuntimeError(f"fatal: cannot parse expression at {expr[pos:pos + 20]!r}")
            pos = m.end()
            if m.lastgroup != "ws":
                yield m.lastgroup, m.group(0)

    @classmethod
    def variables(cls, expr: str) -> list[str]:
        return [text for kind, text in cls.tokens(expr) if kind == "name"]

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
        parts = []
        for kind, text in self.tokens(expr):
            if kind != "name":
                parts.append(text)
            elif text in auto:
                parts.append(repr(float(auto[text])))
            else:
                info = stats.resolve(text)
                if info is None:
                    raise RuntimeError(f"fatal: Failed to evaluate {text}")
                stat_kind, value = info
                if stat_kind not in ("Scalar", "Formula"):
                    raise RuntimeError(f"panic: Unknown stat type! ({text} is a {stat_kind})")
                parts.append(f"({value!r})")
        return float(eval(" ".join(parts), {"__builtins__": {}}))  # numbers and + - * / ( ) only


def _freeze_all() -> None:
    for obj in _objects:
        object.__setattr__(obj, "_frozen", True)


def _reset() -> None:
    _objects.clear()
    MathExprPowerModel._all.clear()
