"""A Minor CPU's waits, as the DVFS what-if reads them: its load waits split between its clock and the memory's, and
its store misses' floor under its store-bound time (:mod:`cosim.dse.whatif`; the suite that checks each step is in
docs/explanation/whatif.md).

Minor quiesces while it waits on a load miss, so its waits are idle cycles, outside its busy time; the rest of its
idle time is its store buffer draining (or, in its last active epoch, time after it finished)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from cosim.dse.memory_stats import READ_MISSES, STORE_MISSES, l1_miss_latency_s, l2_misses


class MinorWaits(NamedTuple):
    """Per epoch [s], summed over the cluster's CPUs and divided by them (its average CPU)."""

    wait_clocked_s: np.ndarray  # load waits on the cluster clock (L2 hits, the L2's own cycles of a miss)
    load_wait_fixed_s: np.ndarray  # load waits off it (memory bus, DRAM)
    store_serial_s: np.ndarray  # the store floor: store misses' latency one after the other beyond the load waits
    store_serial_clocked_s: np.ndarray  # the floor's L2 cycles (on the cluster clock)
    store_drain_s: np.ndarray  # the drains (idle time that is no load wait) the floor explains
    drain_clocked_s: np.ndarray  # the store misses' L2 cycles among the drains the floor leaves


def minor_waits(
    stats: pd.DataFrame,
    cluster,
    *,
    ticks_per_s: float,
    duration_s: np.ndarray,
    busy_s: np.ndarray,
    l2_cycles_s: np.ndarray,
) -> MinorWaits:
    """A Minor cluster's waits per epoch, from gem5's L1 and L2 miss statistics; ``l2_cycles_s``: each L2 miss's
    time on the cluster clock [s] per epoch."""
    idle = duration_s - busy_s
    # Minor blocks on a load miss: its load waits are its L1s' read-miss time, which splits as that time does: the L2
    # read misses' time off the cluster clock (memory bus, DRAM) is fixed, the rest (L2 hits, the L2's own cycles on a
    # miss) runs on the cluster clock
    l1 = l1_miss_latency_s(stats, cluster, ticks_per_s)
    l2_read, read_misses = l2_misses(stats, cluster, ticks_per_s, families=READ_MISSES)
    read_clocked = read_misses * l2_cycles_s
    with np.errstate(divide="ignore", invalid="ignore"):
        off_clock = np.where(l1 > 0, np.clip((l2_read - read_clocked) / l1, 0.0, 1.0), 1.0)
    load_wait = np.minimum(idle, l1 / cluster.n_cpus)
    # its store buffer drains its misses one after the other: a store-bound phase takes their latency plus the core
    # cycles outside them at any clock (mixed's next_idx loop: 98.5 ns a line at 600 MHz, 87 ns of it store-miss
    # latency, 75.5 and 70.5 ns at 1400 MHz: the L2's cycles less, 7 core cycles outside)
    store_lat, store_misses = l2_misses(stats, cluster, ticks_per_s, families=STORE_MISSES)
    drains = np.maximum(idle - load_wait, 0.0)
    latency_s, l2_s = store_lat / cluster.n_cpus, store_misses / cluster.n_cpus * l2_cycles_s
    # misses in flight together (more latency than the epoch): on the critical path only the epoch's share
    with np.errstate(divide="ignore", invalid="ignore"):
        in_flight = np.where(latency_s > duration_s, duration_s / latency_s, 1.0)
    latency_s, l2_s = latency_s * in_flight, l2_s * in_flight
    # they drain while the core waits on a load first: only what outlasts the load waits is a floor
    store_serial = np.clip(latency_s - load_wait, 0.0, busy_s + drains)
    with np.errstate(divide="ignore", invalid="ignore"):
        floor_share = np.where(latency_s > 0, store_serial / latency_s, 0.0)
    store_drain = np.minimum(drains, store_serial)
    return MinorWaits(
        wait_clocked_s=load_wait * (1.0 - off_clock),
        load_wait_fixed_s=load_wait * off_clock,
        store_serial_s=store_serial,
        store_serial_clocked_s=np.minimum(l2_s * floor_share, store_serial),
        store_drain_s=store_drain,
        drain_clocked_s=np.minimum(drains - store_drain, l2_s),
    )
