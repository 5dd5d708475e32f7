TICKS_PER_S = 10**12


def fromSeconds(value: float) -> int:
    """gem5 rounds to the nearest whole tick."""
    return int(round(float(value) * TICKS_PER_S))
