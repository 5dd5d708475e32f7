"""What the gem5 ``stats.txt`` reader returns: the kept dumps as numpy columns, and what it learnt.

:class:`StatsTable` needs no pandas; :func:`cosim.read_stats` wraps it in a DataFrame.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from cosim.errors import CosimError

if TYPE_CHECKING:
    import pandas as pd

# Simulation-level stats in both naming generations (before and from v20.1).
SIM_STATS = {
    "sim_seconds": ("sim_seconds", "simSeconds"),
    "sim_ticks": ("sim_ticks", "simTicks"),
    "final_tick": ("final_tick", "finalTick"),
    "sim_freq": ("sim_freq", "simFreq"),
    "sim_insts": ("sim_insts", "simInsts"),
}
DEFAULT_TICKS_PER_S = 1e12  # gem5's default global frequency


@dataclass
class DroppedDump:
    """A dump that could not be used, and why."""

    dump: int  # 0-based index of the dump in the file
    line: int  # 1-based line in the file
    reason: str


@dataclass
class StatsMeta:
    """What :func:`read_stats` learnt about the file besides the values."""

    path: str
    generation: str  # "pre-v20.1" (snake_case) or "v20.1+" (camelCase)
    ticks_per_s: float
    dumps_in_file: int  # Begin markers seen
    dropped: list[DroppedDump] = field(default_factory=list)
    scanner: str = "c"
    cumulative_dumps: list[int] = field(default_factory=list)  # dumps differenced from cumulative counts (no stats reset)

    def __deepcopy__(self, memo: dict) -> StatsMeta:
        """A copy that shares nothing mutable, as ``copy.deepcopy`` makes: pandas deep-copies a DataFrame's attrs for
        every column it hands out (28,000 times in the what-if suite), and the generic deep copy took 80 us a time."""
        return dataclasses.replace(
            self, dropped=[dataclasses.replace(d) for d in self.dropped], cumulative_dumps=list(self.cumulative_dumps)
        )


#: What the power path accepts: :func:`cosim.read_stats`'s DataFrame or the reader's own table.
StatsLike: TypeAlias = "pd.DataFrame | StatsTable"


class StatsTable:
    """The kept dumps of a ``stats.txt``, one row each, as numpy columns.

    It answers the DataFrame questions the power path asks (``table[name]`` is a
    column array, ``table.columns``, ``len(table)``, ``table.attrs["gem5"]``), and
    :meth:`to_frame` gives the DataFrame that :func:`cosim.read_stats` returns.
    """

    def __init__(self, values: np.ndarray, names: dict[str, int], epoch: np.ndarray, meta: StatsMeta) -> None:
        self.values = values  # [dumps x stats]; a stat absent from a dump is 0 there
        self.names = names  # stat name -> column of ``values``
        self.meta = meta
        self.time = {"epoch": epoch}
        self.time.update(_time_columns(self, meta))

    @property
    def attrs(self) -> dict[str, Any]:
        return {"gem5": self.meta}

    @property
    def columns(self) -> list[str]:
        """Column names in the DataFrame's order: ``epoch``, the stats, then the tick and time columns."""
        return ["epoch", *self.names, *(c for c in self.time if c != "epoch")]

    def __len__(self) -> int:
        return len(self.values)

    def __contains__(self, name: str) -> bool:
        return name in self.names or name in self.time

    def __getitem__(self, name: str) -> np.ndarray:
        if name in self.time:
            return self.time[name]
        return self.values[:, self.names[name]]

    def to_frame(self) -> pd.DataFrame:
        """The table as :func:`cosim.read_stats` returns it (the values are not copied)."""
        import pandas as pd

        df = pd.DataFrame(self.values, columns=list(self.names), copy=False)  # the table is the biggest thing we hold
        df.insert(0, "epoch", self.time["epoch"])
        for name in ("end_tick", "start_tick", "duration_s"):
            df[name] = self.time[name]
        df.attrs["gem5"] = self.meta
        return df


def sim_stat(stats: StatsLike, key: str) -> np.ndarray | None:
    """A simulation-level stat (``key`` in :data:`SIM_STATS`) in either naming generation, as an array."""
    for name in SIM_STATS[key]:
        if name in stats:  # a column of the table or DataFrame
            return np.asarray(stats[name])
    return None


def _time_columns(stats: StatsTable, meta: StatsMeta) -> dict[str, np.ndarray]:
    """``end_tick``, ``start_tick`` [tick] and ``duration_s`` [s] of each dump, from the tick counts."""
    ticks = sim_stat(stats, "sim_ticks")
    if ticks is None:
        raise CosimError(f"{meta.path}: no sim_ticks/simTicks stat, so epoch lengths are unknown")
    final = sim_stat(stats, "final_tick")
    # a dump covers simTicks up to finalTick; readers/epochs.py has made the dumps follow on from each other
    end = final if final is not None else np.cumsum(ticks)
    return {
        "end_tick": end.astype(np.int64),
        "start_tick": (end - ticks).astype(np.int64),
        "duration_s": ticks / meta.ticks_per_s,
    }
