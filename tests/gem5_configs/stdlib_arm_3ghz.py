# gem5 v24's stdlib ARM example (configs/example/gem5_library/arm-hello.py) as a new user runs it: a SimpleBoard at
# its default 3 GHz with one TIMING core, here with a local binary instead of a download and private L1/L2 caches
# so the models' cache events exist.  Argument: the size given to phases.aarch64.
import sys

import m5
from gem5.components.boards.simple_board import SimpleBoard
from gem5.components.cachehierarchies.classic.private_l1_private_l2_cache_hierarchy import PrivateL1PrivateL2CacheHierarchy
from gem5.components.memory import SingleChannelDDR3_1600
from gem5.components.processors.cpu_types import CPUTypes
from gem5.components.processors.simple_processor import SimpleProcessor
from gem5.isas import ISA
from gem5.resources.resource import BinaryResource
from gem5.simulate.simulator import Simulator

# the bundled gem5 has no Ruby, so no coherence protocol; classic caches need none (see stdlib_board_power.py)
if not str(m5.defines.buildEnv.get("PROTOCOL", "")):
    import gem5.utils.requires

    gem5.utils.requires.get_runtime_coherence_protocol = lambda: None

board = SimpleBoard(
    clk_freq="3GHz",
    processor=SimpleProcessor(cpu_type=CPUTypes.TIMING, isa=ISA.ARM, num_cores=1),
    memory=SingleChannelDDR3_1600(size="512MiB"),
    cache_hierarchy=PrivateL1PrivateL2CacheHierarchy(l1d_size="32KiB", l1i_size="32KiB", l2_size="512KiB"),
)
binary, *args = sys.argv[1:]
board.set_se_binary_workload(BinaryResource(local_path=binary), arguments=args)
Simulator(board=board).run()
