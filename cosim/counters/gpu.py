"""GPU counts -> Tegra K1 model inputs, per kernel launch.

Both GPU inputs become one table with a row per kernel and the counts the rail
model prices: ``n_l2r n_l1r n_l1w n_int n_f32 n_f64 n_cnv n_msc n_control``,
``n_mem_other_busy`` (EMC cycles, where the input can estimate them) and
``elapsed_cycles`` (GPU cycles; duration = cycles / f_gpu, Eq. 11).
"""

from __future__ import annotations

import functools
import re
import tomllib
from importlib import resources

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.readers.nvprof import TEGRA_K1_METRICS
from cosim.readers.ocelot import OCELOT_CLASSES

TK1_COUNTS = ("l2r", "l1r", "l1w", "int", "f32", "f64", "cnv", "msc", "control", "mem_other_busy")


def tegra_k1_counts_from_nvprof(metrics: pd.DataFrame) -> pd.DataFrame:
    """nvprof per-kernel averages -> Tegra K1 counts per launch (paper Section 4.2, Eq. 6).

    L1 reads = global load hits + local load hits + shared load transactions x
    shared efficiency; L1 writes = local store hits + shared store transactions x
    shared efficiency.  GPU memory cycles are not in nvprof's metrics: they come
    from ACTMON-style activity (see :func:`cosim.timeline.gpu.tegra_k1_timeline`).
    """
    path = metrics.attrs.get("nvprof", {}).get("path", "nvprof file")
    for _, row in metrics.iterrows():
        missing = [m for m in TEGRA_K1_METRICS if m not in row or pd.isna(row[m])]
        if missing:
            raise CosimError(
                f"{path}:{row['line']}: kernel '{row['kernel']}' lacks metric(s) {', '.join(missing)}; "
                "collect them with nvprof --metrics (elapsed_cycles_sm with --events)"
            )
    eff = metrics["shared_efficiency"]
    out = pd.DataFrame(
        {
            "kernel": metrics["kernel"],
            "kernel_display": metrics["kernel"],
            "device": metrics["device"],
            "invocations": metrics["invocations"],
            "n_l2r": metrics["l2_subp0_total_read_sector_queries"],
            "n_l1r": metrics["l1_global_load_hit"] + metrics["l1_local_load_hit"] + metrics["l1_shared_load_transactions"] * eff,
            "n_l1w": metrics["l1_local_store_hit"] + metrics["l1_shared_store_transactions"] * eff,
            "n_int": metrics["inst_integer"],
            "n_f32": metrics["inst_fp_32"],
            "n_f64": metrics["inst_fp_64"],
            "n_cnv": metrics["inst_bit_convert"],
            "n_msc": metrics["inst_misc"],
            "n_control": metrics["inst_control"],
            "n_mem_other_busy": np.nan,
            "elapsed_cycles": metrics["elapsed_cycles_sm"],
            "approximations": "",
        }
    )
    zero = out["elapsed_cycles"] <= 0
    if zero.any():
        row = metrics[zero].iloc[0]
        raise CosimError(f"{path}:{row['line']}: kernel '{row['kernel']}' has elapsed_cycles_sm 0, so its duration is zero; re-profile it")
    out.attrs = dict(metrics.attrs)
    return out


@functools.cache
def ocelot_map() -> dict:
    """The shipped Ocelot class -> Tegra K1 predictor map (``counters/maps/ocelot-to-tegra-k1.toml``)."""
    text = (resources.files("cosim.counters") / "maps" / "ocelot-to-tegra-k1.toml").read_text()
    data = tomllib.loads(text)
    unknown = set(data["predictors"]) ^ set(OCELOT_CLASSES)
    if unknown:  # a packaging error, not a user error
        raise RuntimeError(f"ocelot-to-tegra-k1.toml and OCELOT_CLASSES disagree on {sorted(unknown)}")
    return data


def tegra_k1_counts_from_ocelot(trace: pd.DataFrame, *, mapping: dict | None = None) -> pd.DataFrame:
    """Ocelot per-launch class counts -> Tegra K1 counts, via the documented map.

    ``elapsed_cycles`` comes from thesis Eq. 6.8 with the map's GK20A
    throughputs (cycles = sum of count / throughput per clock).  Every row's
    ``approximations`` lists the map's approximations that apply to it.
    """
    mapping = mapping or ocelot_map()
    out = pd.DataFrame({"kernel": trace["kernel"], "kernel_display": trace["kernel_display"], "launch": trace["launch"]})
    for name in TK1_COUNTS:
        out[f"n_{name}"] = 0.0
    cycles = np.zeros(len(trace))
    for cls, weights in mapping["predictors"].items():
        counts = trace[f"n_{cls}"].to_numpy(dtype=float)
        for predictor, weight in weights.items():
            out[f"n_{predictor}"] += weight * counts
        cycles += counts / float(mapping["throughput_per_clock"][cls])
    out["elapsed_cycles"] = cycles
    if (cycles <= 0).any():
        row = trace[cycles <= 0].iloc[0]
        raise CosimError(
            f"{trace.attrs.get('ocelot', {}).get('path', 'trace')}:{row['line']}: kernel '{row['kernel']}' has no instructions, so its duration is zero"
        )
    out["approximations"] = _ocelot_flags(trace)
    out.attrs = dict(trace.attrs)
    return out


def _ocelot_flags(trace: pd.DataFrame) -> list[str]:
    """Per launch, the map's approximations its counts rely on (``;``-joined, sorted)."""

    def has(*classes: str) -> np.ndarray:
        return sum(trace[f"n_{c}"].to_numpy() for c in classes) > 0

    conditions = {
        "division_as_one": has("integer_division", "float_division", "double_division"),
        "l1_split": has("memory_onchip"),
        "l2_from_offchip": has("memory_offchip"),
        "mem_from_offchip": has("memory_offchip"),
        "no_cnv": np.ones(len(trace), dtype=bool),
        "no_special": has("special"),
    }
    names = sorted(conditions)
    return [";".join(n for n in names if conditions[n][i]) for i in range(len(trace))]


@functools.cache
def gpgpusim_map() -> dict:
    """The shipped GPGPU-Sim counter -> Ocelot class map (``counters/maps/gpgpusim-to-ocelot.toml``)."""
    return tomllib.loads((resources.files("cosim.counters") / "maps" / "gpgpusim-to-ocelot.toml").read_text())


def ocelot_counts_from_gpgpusim(runs: pd.DataFrame, *, mapping: dict | None = None) -> pd.DataFrame:
    """GPGPU-Sim per-kernel counters (:func:`cosim.readers.gpgpusim.read_gpgpusim`) -> an Ocelot class trace.

    The result has the columns the access-rate model prices (``n_<class>``),
    the simulator's ``duration_s`` [s] and ``flags`` naming every substitution.
    Blocks with no instructions (empty multi-stream blocks) are left out.
    """
    mapping = mapping or gpgpusim_map()
    path = runs.attrs.get("gpgpusim", {}).get("path", "GPGPU-Sim log")
    runs = runs[runs["gpu_sim_insn"] > 0]
    if runs.empty:
        raise CosimError(f"{path}: no kernel with instructions to price")
    out = pd.DataFrame({"launch": runs["launch"], "kernel": runs["kernel"], "kernel_display": runs["kernel"], "line": runs["line"]})

    def total(names: list[str]) -> np.ndarray:
        return sum((runs[n].fillna(0.0).to_numpy(dtype=float) for n in names if n in runs), np.zeros(len(runs)))

    for cls in OCELOT_CLASSES:
        out[f"n_{cls}"] = total(mapping["classes"].get(cls, []))
    offchip = mapping["offchip"]
    source = next((i for i, names in enumerate(offchip["sources"]) if all(n in runs for n in names)), None)
    if source is None:
        out["n_memory_offchip"] = total(offchip["fallback"])
        out["n_memory_onchip"] -= out["n_memory_offchip"]
        offchip_flag = offchip["fallback_flag"]
    else:
        out["n_memory_offchip"] = total(offchip["sources"][source])
        offchip_flag = offchip["flags"][source]
    thread_memory = total(mapping["classes"]["memory_onchip"])
    rest = runs["gpu_sim_insn"].to_numpy(dtype=float) - thread_memory
    bad = np.flatnonzero(rest < 0)
    if len(bad):
        row = runs.iloc[bad[0]]
        raise CosimError(
            f"{path}:{row['line']}: kernel '{row['kernel']}' has more memory instructions than instructions "
            "(gpu_sim_insn); are the counters from one run?"
        )
    out[f"n_{mapping['remainder']['class']}"] += rest
    out["duration_s"] = runs["duration_s"].to_numpy(dtype=float)
    cached = total(["gpgpu_n_const_mem_insn", "gpgpu_n_param_mem_insn", "gpgpu_n_tex_insn"])
    out["flags"] = [
        ";".join(
            f
            for f, on in (("remainder_as_integer", r > 0), (offchip_flag, o > 0), ("cached_as_onchip", c > 0), (sim_flags, bool(sim_flags)))
            if on
        )
        for r, o, c, sim_flags in zip(rest, out["n_memory_offchip"], cached, runs["flags"])
    ]
    out.attrs = {"ocelot": {"path": path}, "gpgpusim": runs.attrs.get("gpgpusim", {})}
    return out.reset_index(drop=True)


def dram_busy_cycles(stats: pd.DataFrame, *, bytes_per_cycle: float = 4.0) -> np.ndarray:
    """Per-epoch memory cycles serving the CPU, from a gem5 run's DRAM controller bytes.

    bytes read + written at the system interface (``bytesReadSys``/``bytesWrittenSys``;
    2016-era and later, every DRAM controller), or ``bytes_read/bytes_written::total``
    (older), or ``bytesRead/bytesWritten::total`` (v21+ SimpleMemory), divided by the CPU memory controller's 4 B per active memory cycle
    (Stokke et al., Section 6.3).
    """
    for pattern in (r"\.bytes(ReadSys|WrittenSys)$", r"\.bytes_(read|written)::total$", r"\.bytes(Read|Written)::total$"):
        cols = [c for c in stats.columns if re.search(pattern, c)]
        if cols:
            return np.nan_to_num(stats[cols].to_numpy(dtype=float)).sum(axis=1) / bytes_per_cycle
    path = stats.attrs.get("gem5").path if "gem5" in stats.attrs else "stats.txt"
    raise CosimError(
        f"{path}: no DRAM byte counts (bytesReadSys/bytesWrittenSys or bytes_read::total); give the CPU memory cycles with --activity (mem_cpu_busy_per_s)"
    )
