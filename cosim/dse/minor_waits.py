"""A Minor CPU's waits, as the DVFS what-if reads them: its load waits split between its clock and the memory's, and
its store misses' floor under its store-bound time (:mod:`cosim.dse.whatif`; the suite that checks each step is in
docs/explanation/whatif.md).

Minor's pipeline stops while it waits on a load miss (gem5's ``idleCycles`` = ``numCycles - tickCycles``, power state
ON: clocked cycles, counted by CPU_CYCLES), so its waits are idle cycles, outside its busy (ticked) time; the rest of
its idle time is its store buffer draining (or, in its last active epoch, time after it finished)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from cosim.dse.memory_stats import READ_MISSES, STORE_MISSES, l1_miss_latency_s, l1d_mshr_hits, l2_misses
from cosim.readers.gem5_config import Gem5Config


class MinorWaits(NamedTuple):
    """Per epoch [s], summed over the cluster's CPUs and divided by them (its average CPU)."""

    wait_clocked_s: np.ndarray  # load waits on the cluster clock (L2 hits, the L2's own cycles of a miss)
    load_wait_fixed_s: np.ndarray  # load waits off it (memory bus, DRAM)
    store_serial_s: np.ndarray  # the store floor: store misses' latency one after the other beyond the load waits
    store_serial_clocked_s: np.ndarray  # the floor's L2 cycles (on the cluster clock)
    store_drain_s: np.ndarray  # the drains (idle time that is no load wait) the floor explains
    drain_clocked_s: np.ndarray  # the store misses' L2 cycles among the drains a floor under every load wait leaves


def minor_waits(
    stats: pd.DataFrame,
    cluster,
    *,
    ticks_per_s: float,
    duration_s: np.ndarray,
    busy_s: np.ndarray,
    l2_cycles_s: np.ndarray,
    slots: float = 1.0,
    running: np.ndarray | float = 1.0,
) -> MinorWaits:
    """A Minor cluster's waits per epoch, from gem5's L1 and L2 miss statistics; ``l2_cycles_s``: each L2 miss's
    time on the cluster clock [s] per epoch; ``slots``: the accesses its CPUs may keep in the memory system at once
    (gem5's ``executeMaxAccessesInMemory``) where they count (:func:`memory_slots`), else 1; ``running``: the CPUs
    that ran in each epoch, among which its misses split."""
    idle = duration_s - busy_s
    # Minor blocks on a load miss: its load waits are its L1s' read-miss time, which splits as that time does: the L2
    # read misses' time off the cluster clock (memory bus, DRAM) is fixed, the rest (L2 hits, the L2's own cycles on a
    # miss) runs on the cluster clock
    l1 = l1_miss_latency_s(stats, cluster, ticks_per_s)
    l2_read, read_misses = l2_misses(stats, cluster, ticks_per_s, families=READ_MISSES)
    read_clocked = read_misses * l2_cycles_s
    with np.errstate(divide="ignore", invalid="ignore"):
        off_clock = np.where(l1 > 0, np.clip((l2_read - read_clocked) / l1, 0.0, 1.0), 1.0)
    load_wait = np.minimum(idle, l1 / running)
    # its store buffer drains its misses in order: a store-bound phase takes their latency plus the core cycles
    # outside them at any clock (mixed's next_idx loop: 98.5 ns a line at 600 MHz, 87 ns of it store-miss latency,
    # 75.5 and 70.5 ns at 1400 MHz: the L2's cycles less, 7 core cycles outside)
    store_lat, store_misses = l2_misses(stats, cluster, ticks_per_s, families=STORE_MISSES)
    drains = np.maximum(idle - load_wait, 0.0)
    latency_s, l2_s = store_lat / running, store_misses / running * l2_cycles_s
    # every access holds one of the memory slots until its line arrives, one that finds its line already being
    # fetched (an L1 MSHR hit, a load or a store) too: with h such accesses a store miss, misses to different lines
    # go out slots / (1 + h) at a time (se.py's Minor on ptrchase's random stores: h = 0.06, so 1.9; gem5 takes 50 ns + 75 cycles a store from
    # 600 to 1400 MHz where a miss is 77 ns + 42 cycles)
    with np.errstate(divide="ignore", invalid="ignore"):
        followers = np.where(store_misses > 0, l1d_mshr_hits(stats, cluster) / store_misses, 0.0)
    together = np.clip(slots / (1.0 + followers), 1.0, max(slots, 1.0))
    latency_s, l2_s = latency_s / together, l2_s / together
    # misses in flight together (more latency than the epoch): on the critical path only the epoch's share
    with np.errstate(divide="ignore", invalid="ignore"):
        in_flight = np.where(latency_s > duration_s, duration_s / latency_s, 1.0)
    latency_s, l2_s = latency_s * in_flight, l2_s * in_flight

    # a waiting load holds a slot too, so store misses drain under the load waits only while their followers leave
    # one free: at h >= 1 none do (se.py's Minor on stream, h = 1.66: its idle time, 17.5 ms at 600 MHz, is its store
    # latency, 8.3 ms, plus its load waits, 10.4 ms, less 1.2)
    def floor_beyond(hidden_s: np.ndarray) -> np.ndarray:  # the latency outlasting what hides it, at most busy + drains
        return np.clip(latency_s - hidden_s, 0.0, busy_s + drains)

    store_serial = floor_beyond(load_wait * np.clip(1.0 - followers, 0.0, 1.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        floor_share = np.where(latency_s > 0, store_serial / latency_s, 0.0)
    store_drain = np.minimum(drains, store_serial)
    # the interval's reading where every load wait hides store misses and the drains that leaves follow their L2 cycles
    all_hidden = np.minimum(drains, floor_beyond(load_wait))
    return MinorWaits(
        wait_clocked_s=load_wait * (1.0 - off_clock),
        load_wait_fixed_s=load_wait * off_clock,
        store_serial_s=store_serial,
        store_serial_clocked_s=np.minimum(l2_s * floor_share, store_serial),
        store_drain_s=store_drain,
        drain_clocked_s=np.minimum(drains - all_hidden, l2_s),
    )


def memory_slots(config: Gem5Config, cluster, *, alone: bool) -> float:
    """How many accesses a Minor cluster's CPU may keep in the memory system at once (``executeMaxAccessesInMemory``,
    gem5's default 2) where that sets its store misses' overlap at any clock: the only CPU on its memory.  With other
    CPUs on it their DRAM queueing grows as the clocks rise and offsets the overlap (``ptrchase`` on 2 O3 + 2 Minor
    CPUs: the LITTLE's store misses spend 94 ns beyond its L2 at 1000/600 MHz, 115 ns at 1800/1400), so the overlap
    the run recorded is kept: 1."""
    if not alone:
        return 1.0
    try:
        return max(float(config.objects.get(cluster.cores[0], {}).get("executeMaxAccessesInMemory", 1)), 1.0)
    except ValueError:
        return 1.0
