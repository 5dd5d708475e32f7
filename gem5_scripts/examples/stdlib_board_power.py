# gem5 v24 standard-library board with cosim epochs and power, offline (a local binary, no download).
#
#   ../shared/tools/gem5/gem5 --outdir=m5out gem5_scripts/examples/stdlib_board_power.py \
#       --binary ../shared/tools/gem5/workloads/phases.aarch64 --args 5 --online
#   cosim power m5out/stats.txt -o power.csv --plot power.png
#
# A SimpleBoard with Minor cores and private L1/L2 caches, priced by the Cortex-A7 model (online inside
# gem5 too, with --online).  cosim must attach between the Root and m5.instantiate(), which the stdlib
# Simulator does in one step, so this script takes those steps itself and runs one epoch per simulate().
import argparse
import os
import sys

import m5
from gem5.components.boards.simple_board import SimpleBoard
from gem5.components.cachehierarchies.classic.private_l1_private_l2_cache_hierarchy import PrivateL1PrivateL2CacheHierarchy
from gem5.components.memory import SingleChannelDDR3_1600
from gem5.components.processors.cpu_types import CPUTypes
from gem5.components.processors.simple_processor import SimpleProcessor
from gem5.isas import ISA
from gem5.resources.resource import BinaryResource
from m5.objects import Root

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # gem5_scripts/
import cosim_gem5  # noqa: E402

# gem5 v24's stdlib asks every core for the build's Ruby coherence protocol, even with classic caches
# (requires() calls get_runtime_coherence_protocol unconditionally), and a build without Ruby, such as
# the bundled gem5, has none.  This board uses classic caches only, so it needs no protocol.
if not str(m5.defines.buildEnv.get("PROTOCOL", "")):
    import gem5.utils.requires

    gem5.utils.requires.get_runtime_coherence_protocol = lambda: None

p = argparse.ArgumentParser()
p.add_argument("--binary", required=True, help="a static AArch64 program")
p.add_argument("--args", nargs="*", default=[])
p.add_argument("--cores", type=int, default=1)
p.add_argument("--epoch", default="100us")
p.add_argument("--online", action="store_true", help="also evaluate the model inside gem5")
args = p.parse_args()

board = SimpleBoard(
    clk_freq="1.4GHz",  # a point of the A7 model's V-f table
    processor=SimpleProcessor(cpu_type=CPUTypes.MINOR, isa=ISA.ARM, num_cores=args.cores),
    memory=SingleChannelDDR3_1600(size="512MiB"),
    cache_hierarchy=PrivateL1PrivateL2CacheHierarchy(l1d_size="32KiB", l1i_size="32KiB", l2_size="512KiB"),
)
board.set_se_binary_workload(BinaryResource(local_path=os.path.abspath(args.binary)), arguments=args.args)

board._pre_instantiate()  # connects the caches
root = Root(full_system=False, board=board)
run = cosim_gem5.attach_power(
    board, models={"little": ("board.processor", "cortex-a7-gemstone2018")}, epoch=args.epoch, outdir=m5.options.outdir, online=args.online
)
m5.instantiate()
board._post_instantiate()
while True:  # one epoch a step, as se_system.run_epochs (which also builds SE systems this script does not need)
    event = m5.simulate(run.epoch_ticks)
    m5.stats.dump()
    m5.stats.reset()
    if event.getCause() != "simulate() limit reached":
        break
print("exit:", event.getCause(), "at tick", m5.curTick())
