"""gem5's _m5.core: the version string and the global tick rate, which is fixed only at m5.instantiate()."""

gem5Version = "24.0.0.1"
_frequency = 10**12
_fixed = False


def getClockFrequency() -> int:
    return _frequency


def clockFrequencyFixed() -> bool:
    return _fixed


def fixClockFrequency() -> None:
    global _fixed
    _fixed = True


def _reset() -> None:
    global _fixed
    _fixed = False
