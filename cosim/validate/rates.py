"""Event rates per cycle, the one reading of counts both sides of a validation row share."""

from __future__ import annotations

CYCLES, INSTS = "0x11", "0x08"  # CPU_CYCLES (clocked cycles) and INST_RETIRED, the ARMv7 PMU's event numbers


class PerCycle:
    """Rates from a ``counts`` mapping (event -> count over the row's time) of the busy core(s)."""

    counts: dict[str, float]

    @property
    def ipc(self) -> float:
        """Instructions per cycle (INST_RETIRED / CPU_CYCLES); nan without INST_RETIRED."""
        return self.per_cycle(INSTS)

    def per_cycle(self, event: str) -> float:
        """``event`` per CPU_CYCLES cycle; nan when it was not counted."""
        if event not in self.counts or self.counts.get(CYCLES, 0.0) <= 0:
            return float("nan")
        return self.counts[event] / self.counts[CYCLES]
