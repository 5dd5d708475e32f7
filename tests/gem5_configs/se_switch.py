# gem5 v24 SE config for cosim's tests: one core that starts on an AtomicSimpleCPU (fast-forward) and switches to
# a MinorCPU (switched_out at start, as se.py's switch_cpus) after --switch-at, with periodic stats dumps.
import argparse
import os
import shlex

import m5
from m5.objects import AddrRange, AtomicSimpleCPU, MinorCPU, Process, Root, SEWorkload
from m5.util import addToPath

addToPath(os.path.join(os.environ.get("GEM5_ROOT", "."), "configs"))
addToPath(os.path.join(os.environ.get("GEM5_ROOT", "."), "configs", "example", "arm"))
import devices  # noqa: E402
from common import MemConfig  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--switch-at", default="300us")
p.add_argument("--epoch", default="100us")
p.add_argument("--mem-type", default="DDR3_1600_8x8")
p.add_argument("--mem-channels", type=int, default=1)
p.add_argument("--mem-ranks", type=int, default=None)
p.add_argument("--mem-size", default="2GB")
p.add_argument("cmd", nargs=argparse.REMAINDER)
args = p.parse_args()
argv = shlex.split(" ".join(c for c in args.cmd if c != "--"))

system = devices.SimpleSeSystem(mem_mode="atomic")
system.cluster = devices.ArmCpuCluster(system, 1, "1GHz", "1.0V", AtomicSimpleCPU, devices.L1I, devices.L1D, devices.L2)
system.addCaches(True, last_cache_level=2)
system.mem_ranges = [AddrRange(start=0, size=args.mem_size)]
MemConfig.config_mem(args, system)
system.connect()
proc = Process(pid=100, cwd=os.getcwd(), cmd=argv, executable=argv[0])
cpu = system.cluster.cpus[0]
cpu.workload = proc
system.workload = SEWorkload.init_compatible(argv[0])

# as gem5's configs/common/Simulation.py makes its switch_cpus
detailed = MinorCPU(switched_out=True, cpu_id=0, clk_domain=system.cluster.clk_domain, workload=proc, isa=cpu.isa)
detailed.createThreads()
system.switch_cpus = [detailed]

root = Root(full_system=False, system=system)
m5.instantiate()
m5.stats.periodicStatDump(m5.ticks.fromSeconds(m5.util.convert.toLatency(args.epoch)))
event = m5.simulate(m5.ticks.fromSeconds(m5.util.convert.toLatency(args.switch_at)))
system.mem_mode = "timing"
m5.switchCpus(system, [(cpu, detailed)])
event = m5.simulate()
print("exit:", event.getCause(), "at tick", m5.curTick())
