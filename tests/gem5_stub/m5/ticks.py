"""m5.ticks of the stand-in: as in gem5, seconds convert to ticks only once the tick rate is fixed."""

import _m5.core


def fromSeconds(value: float) -> int:
    if not isinstance(value, float):
        raise TypeError(f"can't convert '{type(value)}' to type tick")
    if not _m5.core.clockFrequencyFixed():
        raise AttributeError("In order to do conversions, the global frequency must be fixed")
    return int(round(value * _m5.core.getClockFrequency()))
