"""cosim: hardware-trained power models for gem5 (and GPU simulator) output.

The flow, one sub-package per step::

    readers   gem5 stats.txt, config.ini/json, measured board tables
    counters  gem5 stats -> the PMU event rates the models were trained on
    models    model files (models/*.json) and the Walker formulation
    timeline  per-epoch, per-cluster power and energy
    output    CSV/Parquet (atomic) and plots
"""

from cosim.apply import apply_model, mape_pct
from cosim.errors import CosimError, CosimWarning
from cosim.models.modelfile import Model, load_model
from cosim.readers.gem5_config import Cluster, Gem5Config, read_config
from cosim.readers.gem5_stats import read_stats, stats_meta
from cosim.readers.measured import read_measured
from cosim.timeline import ClusterSpec, power_timeline

__all__ = [
    "Cluster",
    "ClusterSpec",
    "CosimError",
    "CosimWarning",
    "Gem5Config",
    "Model",
    "apply_model",
    "load_model",
    "mape_pct",
    "power_timeline",
    "read_config",
    "read_measured",
    "read_stats",
    "stats_meta",
]
__version__ = "0.1.0"
