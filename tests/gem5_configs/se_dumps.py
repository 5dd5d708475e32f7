# gem5 v24 SE config for cosim's epoch-tiling test: one O3 (O3_ARM_v7a) big CPU and one Minor LITTLE CPU, each
# in its own cluster and clock domain (as se_biglittle.py), with a stats dump by hand every --epoch.
# --no-reset dumps with m5.stats.dump() only, as `m5 dumpstats` does, so every counter and simTicks is cumulative;
# the default resets the stats after each dump.  cosim must price both runs to the same energy.
import argparse
import os
import sys

import m5
from m5.objects import Root

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "gem5_scripts"))
import se_system  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--big-freq", default="1800MHz")
p.add_argument("--little-freq", default="1400MHz")
p.add_argument("--no-reset", action="store_true", help="dump without resetting the stats (cumulative dumps)")
se_system.add_options(p)
args = p.parse_args()

system = se_system.system(args)
system.bigCluster = se_system.big_cluster(system, 1, args.big_freq)
system.littleCluster = se_system.little_cluster(system, 1, args.little_freq)
se_system.finish(system, args, list(system.bigCluster.cpus) + list(system.littleCluster.cpus))

root = Root(full_system=False, system=system)
m5.instantiate()
while True:
    event = m5.simulate(se_system.epoch_ticks(args))
    m5.stats.dump()
    if not args.no_reset:
        m5.stats.reset()
    if event.getCause() != "simulate() limit reached":
        break
print("exit:", event.getCause(), "at tick", m5.curTick())
