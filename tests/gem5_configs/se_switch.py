# gem5 v24 SE config for cosim's tests: one core that starts on an AtomicSimpleCPU (fast-forward) and switches to
# a MinorCPU (switched_out at start, as se.py's switch_cpus) after --switch-at, with attach_power's periodic stats
# dumps (the switched-out CPU's statistics are dumped too).
import argparse
import os
import sys

import m5
from m5.objects import AtomicSimpleCPU, MinorCPU, Root

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "gem5_scripts"))
import cosim_gem5  # noqa: E402
import se_system  # noqa: E402
from se_system import devices  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--switch-at", default="300us")
p.add_argument("--full-stats", action="store_true", help="every statistic in every dump (attach_power's full_stats)")
se_system.add_options(p)
args = p.parse_args()

system = se_system.system(args, atomic=True)
system.cluster = devices.ArmCpuCluster(system, 1, "1GHz", "1.0V", AtomicSimpleCPU, devices.L1I, devices.L1D, devices.L2)
cpu = system.cluster.cpus[0]
se_system.finish(system, args, [cpu])

# as gem5's configs/common/Simulation.py makes its switch_cpus
detailed = MinorCPU(switched_out=True, cpu_id=0, clk_domain=system.cluster.clk_domain, workload=cpu.workload, isa=cpu.isa)
detailed.createThreads()
system.switch_cpus = [detailed]

root = Root(full_system=False, system=system)
run = cosim_gem5.attach_power(
    system,
    models={"c": ("system.cluster", "cortex-a7-gemstone2018")},
    epoch=args.epoch,
    outdir=m5.options.outdir,
    full_stats=args.full_stats,
)
m5.instantiate()
run.start()
m5.simulate(m5.ticks.fromSeconds(m5.util.convert.toLatency(args.switch_at)))
system.mem_mode = "timing"
m5.switchCpus(system, [(cpu, detailed)])
event = m5.simulate()
print("exit:", event.getCause(), "at tick", m5.curTick())
