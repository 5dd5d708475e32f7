"""big.LITTLE full-system gem5 run with cosim epochs and power (gem5 v21+).

Run from a gem5 checkout, after building build/ARM/gem5.opt:

    build/ARM/gem5.opt --outdir=m5out path/to/cosim/gem5_scripts/examples/fs_biglittle_power.py \
        --kernel vmlinux --disk rootfs.img --dtb armv8.dtb

then `cosim power m5out/stats.txt -o power.csv --plot power.png` (no flags: cosim-run.json says it all).
The system is the one of gem5's configs/example/arm/fs_bigLITTLE.py; only the three cosim lines are new.
"""

import argparse
import sys
from pathlib import Path

import m5

sys.path.append(str(Path(__file__).resolve().parents[1]))  # gem5_scripts/
import cosim_gem5  # noqa: E402

sys.path.append("configs/example/arm")  # gem5's own big.LITTLE builder
import fs_bigLITTLE as bL  # noqa: E402

parser = argparse.ArgumentParser()
bL.addOptions(parser)
parser.add_argument("--epoch", default="100us", help="one stats dump (cosim epoch) every ...")
options = parser.parse_args()
options.big_cpu_clock = ["1.8GHz", "1.4GHz", "1GHz"]  # points of the cosim A15 model's V-f table
options.little_cpu_clock = ["1.4GHz", "1GHz", "600MHz"]  # ... and of the A7 model's

root = bL.build(options)
run = cosim_gem5.attach_power(
    root.system,
    models={"big": ("system.bigCluster", "cortex-a15-walker2017"), "little": ("system.littleCluster", "cortex-a7-gemstone2018")},
    epoch=options.epoch,
    outdir=m5.options.outdir,
    online=False,  # the TCAD A15 model needs Vector stats, which MathExprPowerModel cannot read
)
bL.instantiate(options)
run.start()
event = m5.simulate()
print(f"exit: {event.getCause()} at tick {m5.curTick()}")
