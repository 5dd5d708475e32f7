"""Stats registry and dump scheduling of the stand-in."""

_registry: dict[str, tuple[str, float]] = {}
dumps: list[int] = []


def register(name: str, kind: str, value: float) -> None:
    if kind not in ("Scalar", "Formula", "Vector", "Vector2d", "Distribution"):
        raise ValueError(kind)
    _registry[name] = (kind, float(value))


def resolve(name: str):
    """gem5 Stats::resolve: the stat's info, or None."""
    return _registry.get(name)


def periodicStatDump(period: int) -> None:
    import m5

    if not m5._instantiated:
        raise RuntimeError("periodicStatDump before m5.instantiate(): no event queue yet")
    if int(period) <= 0:
        raise ValueError("period must be a positive number of ticks")
    dumps.append(int(period))


def _reset() -> None:
    _registry.clear()
    dumps.clear()
