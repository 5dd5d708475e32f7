# gem5 v24 SE config for cosim's online-equals-offline test: one Minor cluster with cosim's Cortex-A7 model
# attached online.  Each epoch it reads every CPU's power from the C++ model with full double precision
# (PowerModel.getDynamicPower/getStaticPower, which gem5 exports to Python), then dumps and resets the stats,
# so cosim's offline pricing of the same dumps can be compared to far better than stats.txt's 6 decimals.
import argparse
import json
import os
import shlex
import sys

import m5
from m5.objects import AddrRange, MinorCPU, Process, Root, SEWorkload
from m5.util import addToPath

addToPath(os.path.join(os.environ.get("GEM5_ROOT", "."), "configs"))
addToPath(os.path.join(os.environ.get("GEM5_ROOT", "."), "configs", "example", "arm"))
import devices  # noqa: E402
from common import MemConfig  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--gem5-scripts", required=True)
p.add_argument("--freq", default="1400MHz")
p.add_argument("--cores", type=int, default=2)
p.add_argument("--epoch", default="100us")
p.add_argument("--mem-type", default="DDR3_1600_8x8")
p.add_argument("--mem-channels", type=int, default=1)
p.add_argument("--mem-ranks", type=int, default=None)
p.add_argument("--mem-size", default="2GB")
p.add_argument("cmd", nargs=argparse.REMAINDER)
args = p.parse_args()
argv = shlex.split(" ".join(c for c in args.cmd if c != "--"))
sys.path.append(args.gem5_scripts)
import cosim_gem5  # noqa: E402

system = devices.SimpleSeSystem(mem_mode="timing")
system.littleCluster = devices.ArmCpuCluster(system, args.cores, args.freq, "1.0V", MinorCPU, devices.L1I, devices.L1D, devices.L2)
system.addCaches(True, last_cache_level=2)
system.mem_ranges = [AddrRange(start=0, size=args.mem_size)]
MemConfig.config_mem(args, system)
system.connect()
for i, cpu in enumerate(system.littleCluster.cpus):
    cpu.workload = Process(pid=100 + i, cwd=os.getcwd(), cmd=argv, executable=argv[0])
system.workload = SEWorkload.init_compatible(argv[0])

root = Root(full_system=False, system=system)
run = cosim_gem5.attach_power(system, models={"little": ("system.littleCluster", "cortex-a7-gemstone2018")},
                              epoch=args.epoch, outdir=m5.options.outdir, online=True)
m5.instantiate()
epochs = []
while True:
    event = m5.simulate(run.epoch_ticks)
    models = [cpu.power_model[0] for cpu in system.littleCluster.cpus]  # power_model is a VectorParam
    epochs.append([pm.getDynamicPower() + pm.getStaticPower() for pm in models])
    m5.stats.dump()
    m5.stats.reset()
    if event.getCause() != "simulate() limit reached":
        break
with open(os.path.join(m5.options.outdir, "online-power.json"), "w") as f:
    json.dump({"power_w_per_cpu": epochs}, f)
print("exit:", event.getCause(), "at tick", m5.curTick())
