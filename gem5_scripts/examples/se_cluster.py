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
import sys

import m5
from m5.objects import Root

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # gem5_scripts/
import se_system  # noqa: E402
from se_system import devices  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--cpu", default="TimingSimpleCPU")
p.add_argument("--freq", default="1GHz")
p.add_argument("--cores", type=int, default=1)
p.add_argument("--levels", type=int, choices=(1, 2), default=2)
se_system.add_options(p)
args = p.parse_args()

system = se_system.system(args, atomic="Atomic" in args.cpu)
system.cluster = devices.ArmCpuCluster(
    system, args.cores, args.freq, "1.0V", getattr(m5.objects, args.cpu), devices.L1I, devices.L1D, devices.L2 if args.levels == 2 else None
)
se_system.finish(system, args, list(system.cluster.cpus), levels=args.levels)

root = Root(full_system=False, system=system)
m5.instantiate()
m5.stats.periodicStatDump(se_system.epoch_ticks(args))
event = m5.simulate()
print("exit:", event.getCause(), "at tick", m5.curTick())
