# gem5 v24 SE config: one ARM CPU cluster of any CPU type, with or without an L2, periodic stats dumps.
# Offline and self-contained (gem5's own configs/ and the bundled workload; no downloads).
#
#   ../shared/tools/gem5/gem5 --outdir=m5out gem5_scripts/examples/se_cluster.py \
#       --cpu TimingSimpleCPU --freq 1GHz --cores 1 --levels 2 --epoch 100us \
#       -- ../shared/tools/gem5/workloads/phases.aarch64 5
#
# --cpu: any gem5 CPU class (O3CPU, MinorCPU, TimingSimpleCPU, AtomicSimpleCPU); the memory mode follows it.
# --levels 1: private L1s straight onto the memory bus (no L2).
import argparse
import os
import shlex

import m5
from m5.objects import AddrRange, Process, Root, SEWorkload
from m5.util import addToPath

addToPath(os.path.join(os.environ.get("GEM5_ROOT", "."), "configs"))
addToPath(os.path.join(os.environ.get("GEM5_ROOT", "."), "configs", "example", "arm"))
import devices  # noqa: E402  (gem5's configs/example/arm/devices.py)
from common import MemConfig  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--cpu", default="TimingSimpleCPU")
p.add_argument("--freq", default="1GHz")
p.add_argument("--cores", type=int, default=1)
p.add_argument("--levels", type=int, choices=(1, 2), default=2)
p.add_argument("--epoch", default="100us")
p.add_argument("--mem-type", default="DDR3_1600_8x8")
p.add_argument("--mem-channels", type=int, default=1)
p.add_argument("--mem-ranks", type=int, default=None)
p.add_argument("--mem-size", default="2GB")
p.add_argument("cmd", nargs=argparse.REMAINDER)
args = p.parse_args()
argv = shlex.split(" ".join(c for c in args.cmd if c != "--"))

system = devices.SimpleSeSystem(mem_mode="atomic" if "Atomic" in args.cpu else "timing")
system.cluster = devices.ArmCpuCluster(
    system, args.cores, args.freq, "1.0V", getattr(m5.objects, args.cpu),
    devices.L1I, devices.L1D, devices.L2 if args.levels == 2 else None)
system.addCaches(True, last_cache_level=args.levels)
system.mem_ranges = [AddrRange(start=0, size=args.mem_size)]
MemConfig.config_mem(args, system)
system.connect()

procs = [Process(pid=100 + i, cwd=os.getcwd(), cmd=argv, executable=argv[0]) for i in range(args.cores)]
for cpu, proc in zip(system.cluster.cpus, procs):
    cpu.workload = proc
system.workload = SEWorkload.init_compatible(argv[0])

root = Root(full_system=False, system=system)
m5.instantiate()
m5.stats.periodicStatDump(m5.ticks.fromSeconds(m5.util.convert.toLatency(args.epoch)))
event = m5.simulate()
print("exit:", event.getCause(), "at tick", m5.curTick())
