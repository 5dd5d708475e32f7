"""cosim: hardware-trained power models for gem5 (and GPU simulator) output.

The flow, one sub-package per step::

    readers       gem5 stats.txt, config.ini/json, measured board tables,
                  GPU Ocelot traces, nvprof metrics, ACTMON activity, Corsair logs
    counters      gem5 stats -> PMU event rates; GPU counts -> Tegra K1 predictors
    models        model files (models/*.json): Walker CPU models, the Tegra K1 rail
                  model, the Ocelot access-rate model, the Eq. 1 rate-based baseline
    timeline      per-epoch, per-cluster CPU power and energy
    gpu_timeline  per-kernel GPU/memory/core rail power and energy
    soc           CPU clusters + GPU/memory rails on one time axis
    output        CSV/Parquet (atomic) and plots
"""

from cosim.apply import apply_model, mape_pct
from cosim.errors import CosimError, CosimWarning
from cosim.gpu_timeline import ocelot_timeline, tegra_k1_timeline
from cosim.models.ocelot import load_access_rate_model
from cosim.models.tegrak1 import load_rail_model
from cosim.models.modelfile import Model, load_model
from cosim.readers.gem5_config import Cluster, Gem5Config, read_config
from cosim.readers.gem5_stats import read_stats, stats_meta
from cosim.readers.measured import read_measured
from cosim.readers.nvprof import read_nvprof
from cosim.readers.ocelot import read_ocelot_trace
from cosim.timeline import ClusterSpec, power_timeline

__all__ = [
    "Cluster",
    "ClusterSpec",
    "CosimError",
    "CosimWarning",
    "Gem5Config",
    "Model",
    "apply_model",
    "load_access_rate_model",
    "load_model",
    "load_rail_model",
    "mape_pct",
    "ocelot_timeline",
    "power_timeline",
    "read_config",
    "read_measured",
    "read_nvprof",
    "read_ocelot_trace",
    "read_stats",
    "stats_meta",
    "tegra_k1_timeline",
]
__version__ = "0.1.0"
