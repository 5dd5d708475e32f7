"""Roofline: platform peaks per DVFS point, balance points, and where a run's epochs sit.

Peaks per frequency follow the paper's description (``models/jetson-roofline.json``):
FLOP/s grow linearly with the clock up to the measured peak at the top frequency;
memory bandwidth grows with the clock up to a knee and is constant above it (for
the CPUs it is taken as constant).  The balance point is FLOP/s divided by bytes/s.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.models.modelfile import shipped_models_dir

# FP micro-op classes by FLOPs each: FMA counts 2; 128-bit SIMD single precision counts 4 lanes
_FLOPS = (
    (re.compile(r"::(Float(Add|Cmp|Cvt|Mult|Div|Misc|Sqrt))$"), 1),
    (re.compile(r"::FloatMultAcc$"), 2),
    (re.compile(r"::SimdFloat(Add|Alu|Cmp|Cvt|Div|Misc|Mult|Sqrt)$"), 4),
    (re.compile(r"::SimdFloatMultAcc$"), 8),
)
# Op-class counts, committed before issued: an O3 CPU prints both, and counting both would count FLOPs twice.
_OP_CLASS_FAMILIES = (
    "commitStats0.committedInstType",
    "commit.committedInstType_0",
    "committedInstType_0",
    "op_class_0",
    "op_class",
    "statIssuedInstType_0",
    "iq.FU_type_0",
)
_OP_CLASS_STATS = re.compile(r"^(.*?)\.(" + "|".join(re.escape(f) for f in _OP_CLASS_FAMILIES) + r")::")  # (CPU, family)
# DRAM controllers as gem5 has named them (physmem; mem_ctrls; mem_ctrlN.dram), not boot ROMs such as realview.nvmem
_DRAM_BYTES = re.compile(r"\.(physmem|mem_ctrls?\d*(\.dram)?)\.(bytes_read|bytesRead|bytes_written|bytesWritten)::total$")


def load_platform(name: str, path: str | Path | None = None) -> dict:
    data = json.loads(Path(path or shipped_models_dir() / "jetson-roofline.json").read_text())
    if name not in data["processors"]:
        raise CosimError(f"no platform '{name}'; known: {', '.join(data['processors'])}")
    return data["processors"][name]


def _value(x) -> float:
    return float(x["value"] if isinstance(x, dict) else x)


def peaks(platform: dict, freq_mhz) -> tuple[np.ndarray, np.ndarray]:
    """Peak GFLOP/s and GB/s at each frequency [MHz]."""
    f = np.asarray(freq_mhz, dtype=float)
    f_max = _value(platform["max_freq_mhz"])
    knee = _value(platform["bandwidth_knee_mhz"])
    gflops = platform["measured_gflops"] * f / f_max
    gbps = platform["measured_gbps"] * (np.minimum(1.0, f / knee) if knee > 0 else np.ones_like(f))
    return gflops, gbps


def balance_point(platform: dict, freq_mhz) -> np.ndarray:
    """FLOP/byte where compute and memory time are equal, at each frequency."""
    gflops, gbps = peaks(platform, freq_mhz)
    return gflops / gbps


def run_points(stats: pd.DataFrame) -> pd.DataFrame:
    """Per epoch: FLOPs (from FP op-class counts), DRAM bytes, intensity [FLOP/B] and achieved GFLOP/s."""
    families: dict[str, set[str]] = {}  # CPU path -> op-class families it prints
    for c in stats.columns:
        if m := _OP_CLASS_STATS.match(c):
            families.setdefault(m.group(1), set()).add(m.group(2))
    chosen = {cpu: next(f for f in _OP_CLASS_FAMILIES if f in found) for cpu, found in families.items()}
    flop_cols = [
        (c, w)
        for c in stats.columns
        if (m := _OP_CLASS_STATS.match(c)) and chosen[m.group(1)] == m.group(2)
        for rx, w in _FLOPS
        if rx.search(c)
    ]
    byte_cols = [c for c in stats.columns if _DRAM_BYTES.search(c)]
    if not byte_cols:
        raise CosimError(f"{stats.attrs['gem5'].path}: no DRAM byte counts (bytes_read/bytesRead::total of a memory controller)")
    flops = sum((stats[c].to_numpy() * w for c, w in flop_cols), np.zeros(len(stats)))
    dram = stats[byte_cols].sum(axis=1).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        return pd.DataFrame(
            {
                "epoch": stats["epoch"],
                "flops": flops,
                "dram_bytes": dram,
                "intensity_flop_per_byte": flops / dram,
                "gflops": flops / stats["duration_s"].to_numpy() / 1e9,
            }
        )


def plot_roofline(platform: dict, freqs_mhz, points: pd.DataFrame | None, path: str | Path, *, title: str = "") -> Path:
    from cosim.plots import pyplot, save_figure

    plt = pyplot()

    x = np.logspace(-3, 3, 200)
    fig, ax = plt.subplots(figsize=(6.5, 4.5), layout="constrained")
    for f in freqs_mhz:
        gflops, gbps = peaks(platform, [f])
        ax.plot(x, np.minimum(gflops[0], gbps[0] * x), label=f"{f:g} MHz (balance {gflops[0] / gbps[0]:.2f})")
    if points is not None and len(points):
        ok = np.isfinite(points["intensity_flop_per_byte"]) & (points["intensity_flop_per_byte"] > 0)
        ax.scatter(points.loc[ok, "intensity_flop_per_byte"], points.loc[ok, "gflops"], s=14, c="k", label="epochs", zorder=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("operational intensity [FLOP/byte]")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(title or platform.get("description", "Roofline"))
    ax.legend(fontsize="x-small")
    return save_figure(fig, path)


def plot_balance(platform: dict, freqs_mhz, path: str | Path, *, title: str = "") -> Path:
    """Balance point and peak bandwidth (left axis) and peak GFLOP/s (right axis) against frequency (the paper's Fig. 7)."""
    from cosim.plots import pyplot, save_figure

    plt = pyplot()

    f = np.asarray(sorted(freqs_mhz), dtype=float)
    gflops, gbps = peaks(platform, f)
    fig, left = plt.subplots(figsize=(6.5, 4.2), layout="constrained")
    left.plot(f, gflops / gbps, "o-", label="balance point [FLOP/B]")
    left.plot(f, gbps, "s--", label="peak bandwidth [GB/s]")
    left.set_xlabel("frequency [MHz]")
    right = left.twinx()
    right.plot(f, gflops, "^:", color="C2", label="peak GFLOP/s")
    right.set_ylabel("GFLOP/s")
    lines = left.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    left.legend(lines, [ln.get_label() for ln in lines], fontsize="small", loc="upper left")
    left.set_title(title or platform.get("description", ""))
    return save_figure(fig, path)
