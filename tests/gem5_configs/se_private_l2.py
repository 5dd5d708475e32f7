# gem5 v24 SE config for cosim's tests: one cluster of O3 CPUs (O3_ARM_v7a), each with its OWN L2 (as gem5's
# stdlib PrivateL1PrivateL2 hierarchy), onto one memory bus; periodic stats dumps.
#   ../shared/tools/gem5/gem5 --outdir=OUT tests/gem5_configs/se_private_l2.py --freq 1GHz --cores 2 -- PROGRAM ARGS
import argparse
import os
import sys

import m5
from m5.objects import L2XBar, Root

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "gem5_scripts"))
import se_system  # noqa: E402
from common.cores.arm import O3_ARM_v7a  # noqa: E402
from se_system import devices  # noqa: E402


class PrivateL2Cluster(devices.ArmCpuCluster):
    """devices.ArmCpuCluster with one L2 (and one L2 bus) per CPU instead of one for the cluster."""

    def addL2(self, clk_domain):
        self.toL2Buses = [L2XBar(width=64, clk_domain=clk_domain) for _ in self.cpus]
        self.l2s = [self._l2_type() for _ in self.cpus]
        for cpu, bus, l2 in zip(self.cpus, self.toL2Buses, self.l2s):
            cpu.connectCachedPorts(bus.cpu_side_ports)
            bus.mem_side_ports = l2.cpu_side

    def connectMemSide(self, bus):
        for l2 in self.l2s:
            l2.mem_side = bus.cpu_side_ports


p = argparse.ArgumentParser()
p.add_argument("--freq", default="1GHz")
p.add_argument("--cores", type=int, default=2)
se_system.add_options(p)
args = p.parse_args()

system = se_system.system(args)
system.cluster = PrivateL2Cluster(
    system,
    args.cores,
    args.freq,
    "1.0V",
    O3_ARM_v7a.O3_ARM_v7a_3,
    O3_ARM_v7a.O3_ARM_v7a_ICache,
    O3_ARM_v7a.O3_ARM_v7a_DCache,
    O3_ARM_v7a.O3_ARM_v7aL2,
)
se_system.finish(system, args, list(system.cluster.cpus))

root = Root(full_system=False, system=system)
m5.instantiate()
m5.stats.periodicStatDump(se_system.epoch_ticks(args))
event = m5.simulate()
print("exit:", event.getCause(), "at tick", m5.curTick())
