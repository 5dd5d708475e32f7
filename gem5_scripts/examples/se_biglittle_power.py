# gem5 v24 SE big.LITTLE run with cosim's power models attached (offline and, per cluster, online).
# Offline and self-contained: gem5's own configs/ and a static AArch64 binary; nothing is downloaded.
#
#   ../shared/tools/gem5/gem5 --outdir=m5out gem5_scripts/examples/se_biglittle_power.py \
#       --big-freq 1800MHz --little-freq 1400MHz --online little \
#       -- ../shared/tools/gem5/workloads/phases.aarch64 5
#   cosim power m5out/stats.txt -o power.csv --plot power.png     # cosim-run.json names clusters and models
#
# Each epoch's dump holds only the statistics cosim reads (--dumps full: every statistic).
#
# The O3 big cluster is priced by the Cortex-A15 model, the Minor LITTLE cluster by the Cortex-A7 model.
# --online CLUSTER also evaluates that cluster's model inside gem5 (MathExprPowerModel per CPU: the
# power_model.dynamicPower/staticPower stats of every dump); the A15 model needs Vector stats that
# gem5's expressions cannot read, so asked online it stays offline with a warning.
import argparse
import os
import sys

import m5
from m5.objects import Root

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # gem5_scripts/
import cosim_gem5  # noqa: E402
import se_system  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--big-freq", default="1800MHz")
p.add_argument("--little-freq", default="1400MHz")
p.add_argument("--big-cores", type=int, default=2)
p.add_argument("--little-cores", type=int, default=2)
p.add_argument("--online", action="append", default=[], choices=("big", "little"), help="evaluate this cluster's model in gem5")
p.add_argument(
    "--dumps",
    default="cosim",
    choices=("cosim", "full", "end"),
    help="each epoch: the stats cosim reads (default), every stat (full_stats=True); end: one full dump at exit, no epochs",
)
p.add_argument(
    "--keep-voltages",
    action="store_true",
    help="leave the voltage domains as configured (1.0 V) instead of the models' V-f table voltages, for clocks outside the table",
)
se_system.add_options(p)
args = p.parse_args()

system = se_system.system(args)
system.bigCluster = se_system.big_cluster(system, args.big_cores, args.big_freq)
system.littleCluster = se_system.little_cluster(system, args.little_cores, args.little_freq)
se_system.finish(system, args, list(system.bigCluster.cpus) + list(system.littleCluster.cpus))

root = Root(full_system=False, system=system)
try:
    run = cosim_gem5.attach_power(
        system,
        models={"big": ("system.bigCluster", "cortex-a15-walker2017"), "little": ("system.littleCluster", "cortex-a7-gemstone2018")},
        epoch=args.epoch,
        outdir=m5.options.outdir,
        online={name: name in args.online for name in ("big", "little")},
        full_stats=args.dumps != "cosim",
        set_voltages=not args.keep_voltages,
    )
except ValueError as err:  # a clock outside a model's V-f table, an epoch gem5 cannot take: one line, no traceback
    print(f"se_biglittle_power.py: {err}", file=sys.stderr)
    sys.exit(2)  # gem5 takes an integer status only
m5.instantiate()
if args.dumps != "end":
    run.start()
event = m5.simulate()
print("exit:", event.getCause(), "at tick", m5.curTick())
