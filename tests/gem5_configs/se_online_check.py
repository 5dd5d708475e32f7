# gem5 v24 SE config for cosim's online-equals-offline test: one Minor cluster with cosim's Cortex-A7 model
# attached online.  Each epoch it reads every CPU's power from the C++ model with full double precision
# (PowerModel.getDynamicPower/getStaticPower, which gem5 exports to Python), then dumps and resets the stats,
# so cosim's offline pricing of the same dumps can be compared to far better than stats.txt's 6 decimals.
# The dumps are attach_power's default ones (only the statistics cosim reads).
import argparse
import json
import os
import sys

import m5
from m5.objects import Root

p = argparse.ArgumentParser()
p.add_argument("--gem5-scripts", required=True)
p.add_argument("--freq", default="1400MHz")
p.add_argument("--cores", type=int, default=2)
known, _ = p.parse_known_args()
sys.path.append(known.gem5_scripts)
import cosim_gem5  # noqa: E402
import se_system  # noqa: E402

se_system.add_options(p)
args = p.parse_args()

system = se_system.system(args)
system.littleCluster = se_system.little_cluster(system, args.cores, args.freq)
se_system.finish(system, args, list(system.littleCluster.cpus))

root = Root(full_system=False, system=system)
run = cosim_gem5.attach_power(
    system, models={"little": ("system.littleCluster", "cortex-a7-gemstone2018")}, epoch=args.epoch, outdir=m5.options.outdir, online=True
)
m5.instantiate()
run.start(periodic=False)  # this config dumps in its own loop: cosim's cheap dumps, as attach_power gives by default
epochs = []


def record():
    models = [cpu.power_model[0] for cpu in system.littleCluster.cpus]  # power_model is a VectorParam
    epochs.append([pm.getDynamicPower() + pm.getStaticPower() for pm in models])


event = se_system.run_epochs(args, record)
with open(os.path.join(m5.options.outdir, "online-power.json"), "w") as f:
    json.dump({"power_w_per_cpu": epochs}, f)
print("exit:", event.getCause(), "at tick", m5.curTick())
