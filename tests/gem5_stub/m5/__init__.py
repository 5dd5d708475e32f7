"""Stand-in for gem5's m5 package (see ../README.md)."""

import _m5.core

from m5 import mathexpr, objects, stats, ticks  # noqa: F401

_instantiated = False


def instantiate() -> None:
    global _instantiated
    if _instantiated:
        raise RuntimeError("m5.instantiate() called twice")
    _instantiated = True
    _m5.core.fixClockFrequency()
    objects._freeze_all()
    for model in objects.MathExprPowerModel._all:
        model.startup()


def reset() -> None:
    """Test helper: forget everything (a new gem5 process)."""
    global _instantiated
    _instantiated = False
    objects._reset()
    stats._reset()
    _m5.core._reset()
