"""Shared pieces of cosim's SE-mode gem5 configs (examples/ and tests/gem5_configs/): gem5 v24, ARM, offline.

Imported by a gem5 config script, after ``sys.path`` holds this folder.  It builds on gem5's own
``configs/example/arm/devices.py`` (SimpleSeSystem, ArmCpuCluster) and ``configs/common/MemConfig``.
"""

import os
import shlex

import m5
from m5.objects import AddrRange, MinorCPU, Process, SEWorkload
from m5.util import addToPath

addToPath(os.path.join(os.environ.get("GEM5_ROOT", "."), "configs"))
addToPath(os.path.join(os.environ.get("GEM5_ROOT", "."), "configs", "example", "arm"))
import devices  # noqa: E402  (gem5's configs/example/arm/devices.py)
from common import MemConfig  # noqa: E402
from common.cores.arm import O3_ARM_v7a  # noqa: E402


def add_options(parser) -> None:
    """The epoch and the memory options gem5's MemConfig.config_mem reads; the program after '--'."""
    parser.add_argument("--epoch", default="100us", help="one stats dump (cosim epoch) every ...")
    parser.add_argument("--mem-type", default="DDR3_1600_8x8")
    parser.add_argument("--mem-channels", type=int, default=1)
    parser.add_argument("--mem-ranks", type=int, default=None)
    parser.add_argument("--mem-size", default="2GB")
    parser.add_argument("cmd", nargs="...", help="-- PROGRAM ARGS")


def system(args, *, atomic: bool = False):
    """An empty SimpleSeSystem; add clusters as ``system.NAME = devices.ArmCpuCluster(system, ...)``."""
    return devices.SimpleSeSystem(mem_mode="atomic" if atomic else "timing")


def big_cluster(system, cores: int, freq: str):
    """An out-of-order cluster as gem5's ARM examples build one: O3_ARM_v7a cores with their L1s and L2, at 1.0 V."""
    parts = (O3_ARM_v7a.O3_ARM_v7a_3, O3_ARM_v7a.O3_ARM_v7a_ICache, O3_ARM_v7a.O3_ARM_v7a_DCache, O3_ARM_v7a.O3_ARM_v7aL2)
    return devices.ArmCpuCluster(system, cores, freq, "1.0V", *parts)


def little_cluster(system, cores: int, freq: str):
    """An in-order cluster: MinorCPU cores with gem5's example L1s and L2, at 1.0 V."""
    return devices.ArmCpuCluster(system, cores, freq, "1.0V", MinorCPU, devices.L1I, devices.L1D, devices.L2)


def finish(system, args, cpus, *, levels: int = 2) -> None:
    """Caches (L1s, and a cluster L2 with ``levels=2``), memory, and every CPU running its own copy of the program."""
    system.addCaches(True, last_cache_level=levels)
    system.mem_ranges = [AddrRange(start=0, size=args.mem_size)]
    MemConfig.config_mem(args, system)
    system.connect()
    argv = shlex.split(" ".join(c for c in args.cmd if c != "--"))
    for i, cpu in enumerate(cpus):
        cpu.workload = Process(pid=100 + i, cwd=os.getcwd(), cmd=argv, executable=argv[0])
    system.workload = SEWorkload.init_compatible(argv[0])


def epoch_ticks(args) -> int:
    """The epoch in ticks (call after m5.instantiate(), which fixes the tick rate)."""
    return m5.ticks.fromSeconds(m5.util.convert.toLatency(args.epoch))


def run_epochs(args, on_epoch=None):
    """Simulate one epoch at a time, dumping and resetting the stats after each; ``on_epoch()`` runs before each dump."""
    while True:
        event = m5.simulate(epoch_ticks(args))
        if on_epoch is not None:
            on_epoch()
        m5.stats.dump()
        m5.stats.reset()
        if event.getCause() != "simulate() limit reached":
            return event
