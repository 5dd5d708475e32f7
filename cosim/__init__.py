"""cosim: hardware-trained power models for gem5 (and GPU simulator) output.

One call per command, each returning the table the command writes as a pandas DataFrame (:mod:`cosim.api`)::

    cosim.power("m5out/")            # cosim power m5out/
    cosim.whatif("m5out/")           # cosim whatif m5out/
    cosim.sweep(["runs/"])           # cosim sweep runs/
    cosim.gpu("nvprof.log")          # cosim gpu nvprof.log
    cosim.gpu_energy("power.csv", "trace.csv")   # cosim gpu-energy power.csv trace.csv

The flow, one sub-package per step::

    readers       gem5 stats.txt, config.ini/json, measured board tables, GPU Ocelot
                  traces, nvprof (metrics, gpu-trace, summary), ncu, GPGPU-Sim and
                  Accel-Sim logs, GPUWattch reports, ACTMON activity, Corsair logs;
                  ``read(path)`` turns any of them into one tidy table
    counters      gem5 stats -> PMU event rates; GPU counts -> Tegra K1 predictors
    models        model files (models/*.json): Walker CPU models, the Tegra K1 rail
                  model, the Ocelot access-rate model, the Eq. 1 rate-based baseline
    timeline      per-epoch, per-cluster CPU power and energy
    gpu_timeline  per-kernel GPU/memory/core rail power and energy
    soc           CPU clusters + GPU/memory rails on one time axis
    output        CSV/Parquet (atomic) and plots
"""

from importlib import import_module

from cosim.errors import CosimError, CosimWarning

# The public API, imported on first use (PEP 562) so that ``import cosim`` and ``cosim --help``
# stay light: pandas, pyarrow and matplotlib load only when a function that needs them is called.
_LAZY = {
    "apply_model": "cosim.fit.apply",
    "mape_pct": "cosim.fit.apply",
    "ocelot_timeline": "cosim.timeline.gpu",
    "tegra_k1_timeline": "cosim.timeline.gpu",
    "load_access_rate_model": "cosim.models.ocelot",
    "load_rail_model": "cosim.models.tegrak1",
    "Model": "cosim.models.modelfile",
    "load_model": "cosim.models.modelfile",
    "Cluster": "cosim.readers.gem5_config",
    "Gem5Config": "cosim.readers.gem5_config",
    "read_config": "cosim.readers.gem5_config",
    "read_stats": "cosim.readers.gem5_stats",
    "stats_meta": "cosim.readers.gem5_stats",
    "read_measured": "cosim.readers.measured",
    "read_nvprof": "cosim.readers.nvprof",
    "read": "cosim.readers.tidy",
    "detect_format": "cosim.readers.tidy",
    "read_gpu_trace": "cosim.readers.nvprof_trace",
    "read_gpu_summary": "cosim.readers.nvprof_trace",
    "read_ncu": "cosim.readers.ncu",
    "read_gpgpusim": "cosim.readers.gpgpusim",
    "read_power_report": "cosim.readers.gpgpusim",
    "read_ocelot_trace": "cosim.readers.ocelot",
    "power": "cosim.api",
    "whatif": "cosim.api",
    "sweep": "cosim.api",
    "gpu": "cosim.api",
    "gpu_energy": "cosim.api",
    "find_runs": "cosim.dse.sweep",
    "ClusterSpec": "cosim.timeline.clusters",
    "Run": "cosim.run",
    "open_run": "cosim.run",
    "price_run": "cosim.run",
    "GpuInput": "cosim.gpu_input",
    "open_gpu": "cosim.gpu_input",
    "price_gpu": "cosim.gpu_input",
    "power_timeline": "cosim.timeline.cpu",
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module 'cosim' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Cluster",
    "ClusterSpec",
    "CosimError",
    "CosimWarning",
    "Gem5Config",
    "GpuInput",
    "gpu",
    "gpu_energy",
    "Model",
    "Run",
    "apply_model",
    "load_access_rate_model",
    "load_model",
    "load_rail_model",
    "mape_pct",
    "open_gpu",
    "open_run",
    "price_gpu",
    "price_run",
    "power",
    "whatif",
    "ocelot_timeline",
    "power_timeline",
    "read_config",
    "read_measured",
    "read",
    "detect_format",
    "read_gpgpusim",
    "read_gpu_summary",
    "read_gpu_trace",
    "read_ncu",
    "read_nvprof",
    "read_power_report",
    "read_ocelot_trace",
    "read_stats",
    "stats_meta",
    "sweep",
    "find_runs",
    "tegra_k1_timeline",
]
__version__ = "0.4.0"  # the one place the version is written (pyproject.toml reads it)
