"""gem5-stdlib board run with cosim epochs (gem5 v24).

The stdlib has no DUMPSTATS exit event in v24, so epochs come from scheduled-tick exits: each
one dumps and resets the stats and schedules the next.

    build/ARM/gem5.opt --outdir=m5out path/to/cosim/gem5_scripts/examples/stdlib_board_power.py
    cosim power m5out/stats.txt -o power.csv --plot power.png
"""

import sys
from pathlib import Path

import m5
from gem5.components.boards.simple_board import SimpleBoard
from gem5.components.cachehierarchies.classic.private_l1_private_l2_cache_hierarchy import PrivateL1PrivateL2CacheHierarchy
from gem5.components.memory import SingleChannelDDR3_1600
from gem5.components.processors.cpu_types import CPUTypes
from gem5.components.processors.simple_processor import SimpleProcessor
from gem5.isas import ISA
from gem5.resources.resource import obtain_resource
from gem5.simulate.exit_event import ExitEvent
from gem5.simulate.simulator import Simulator

sys.path.append(str(Path(__file__).resolve().parents[1]))  # gem5_scripts/
import cosim_gem5  # noqa: E402

EPOCH = "100us"

board = SimpleBoard(
    clk_freq="1.8GHz",  # a point of the A15 model's V-f table
    processor=SimpleProcessor(cpu_type=CPUTypes.O3, isa=ISA.ARM, num_cores=2),
    memory=SingleChannelDDR3_1600(size="512MiB"),
    cache_hierarchy=PrivateL1PrivateL2CacheHierarchy(l1d_size="32KiB", l1i_size="32KiB", l2_size="512KiB"),
)
board.set_se_binary_workload(obtain_resource("arm-hello64-static"))
run = cosim_gem5.attach_power(board, models={"big": ("board.processor", "cortex-a15-walker2017")},
                              epoch=EPOCH, outdir=m5.options.outdir)


def epochs():
    """On each scheduled-tick exit: close the epoch, start the next."""
    while True:
        m5.stats.dump()
        m5.stats.reset()
        m5.scheduleTickExitFromCurrent(run.epoch_ticks)
        yield False  # keep simulating


simulator = Simulator(board=board, on_exit_event={ExitEvent.SCHEDULED_TICK: epochs()})
simulator._instantiate()  # the first exit can only be scheduled once the system exists
m5.scheduleTickExitFromCurrent(run.epoch_ticks)
simulator.run()
