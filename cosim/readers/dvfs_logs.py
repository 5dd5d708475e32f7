"""A folder of per-clock-pair GPU logs -> one kernel DVFS table (Wang & Chu's layout, ICPADS 2018).

Each benchmark is run at each (core, memory) clock pair and leaves three files,
``benchmark_<name>_core<C>_mem<M>_input<NN>_<kind>.log``:

* ``metrics``: ``nvprof --metrics`` output (read by :mod:`cosim.readers.nvprof`);
* ``perf``: the program's output and nvprof's default summary, whose ``Avg`` of a
  kernel's row is its time per launch (:func:`cosim.readers.nvprof_trace.read_gpu_summary`);
* ``power``: board power samples every ~500 ms (``P-state Core-F(MHz) Mem-F(MHz) Power(mW)``)
  while the program repeats its kernel for ~10 s, idle before and after.

The table has one row per (benchmark, kernel, core_mhz, mem_mhz), see :data:`PLATEAU_RULE`
for how the power samples are chosen.
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from cosim.errors import CosimError, CosimWarning
from cosim.readers._files import read_text
from cosim.readers.cutoff import ends_mid_line, left_out

LOG_NAME = re.compile(
    r"^benchmark_(?P<bench>.+?)_core(?P<core>\d+)_mem(?P<mem>\d+)(?:_input(?P<input>[^_]+))?_(?P<kind>metrics|perf|power)\.log$"
)
KINDS = ("metrics", "perf", "power")

# The kernel each benchmark of the study times and repeats (its configs/kernels_settings.cfg).
STUDY_KERNELS = {
    "backprop": "bpnn_layerforward_CUDA",
    "bfs": "bfs",
    "binomialOptions": "binomialOptionsKernel",
    "conjugateGradient": "csrMv_kernel",
    "convolutionSeparable": "convolutionRowsKernel",
    "convolutionTexture": "convolutionRowsKernel",
    "fastWalshTransform": "fwtBatch1Kernel",
    "histogram": "histogram256Kernel",
    "hotspot": "calculate_temp",
    "nn": "euclid",
    "quasirandomGenerator": "quasirandomGeneratorKernel",
    "reduction": "reduce2",
    "scalarProd": "scalarProdGPU",
    "scan": "scanExclusiveShared",
    "SobolQRNG": "sobolGPU_kernel",
    "sortingNetworks": "bitonicMergeGlobal",
    "transpose": "transposeCoalesced",
}

PLATEAU_RULE = """\
idle = median of the log's first 5 samples (before the program starts); peak = the highest median
of 3 consecutive samples (a lone sample is no plateau);
a log whose peak is less than max(1 W, 3 % of idle) above idle has no active plateau.  Active
samples are >= idle + (peak - idle) / 2; the first run of them, less its first and last sample (a
500 ms sample straddles the start or the end), is the plateau; at least 3 samples.  When the run
holds two levels (a second kernel repeated after the first: the best least-squares split has
means > 4 % and > 10 standard errors apart), only the first level is kept."""
_POWER_LINE = re.compile(r"^\s*(?P<pstate>\d+)\s+(?P<core>\d+(?:\.\d*)?)\s+(?P<mem>\d+(?:\.\d*)?)\s+(?P<mw>\d+(?:\.\d*)?)\s*$")


def kernel_name(text: str) -> str:
    """The function name of nvprof's kernel text: ``void reduce2<float>(float*, ...)`` -> ``reduce2``."""
    head = text.split("(", 1)[0].split("<", 1)[0].strip()
    return head.split()[-1] if head else text.strip()


def power_samples(path: Path) -> np.ndarray:
    """(n, 3) array of sampled core clock [MHz], memory clock [MHz] and board power [W]."""
    text = read_text(path, missing_hint="give the power log sampled while the kernel ran", empty_hint="give the power log")
    lines = text.splitlines()
    if ends_mid_line(text) and _POWER_LINE.match(lines[-1]):  # a cut sample reads as a smaller power: never used
        lines.pop()
        left_out(path, len(lines) + 1, "the last power sample", "the log ends mid-line", kept=len(lines), unit="sample")
    rows = []
    for line in lines:
        if m := _POWER_LINE.match(line):
            rows.append((float(m["core"]), float(m["mem"]), float(m["mw"]) / 1000.0))
    if not rows:
        raise CosimError(f"{path}: no power samples ('P-state Core-F(MHz) Mem-F(MHz) Power(mW)' rows)")
    return np.array(rows)


def plateau(power_w: np.ndarray, *, source: str) -> slice:
    """The samples of the kernel's active plateau (:data:`PLATEAU_RULE`); a :class:`CosimError` if none."""
    idle = float(np.median(power_w[:5]))
    peak = float(np.max(np.median(np.lib.stride_tricks.sliding_window_view(power_w, 3), axis=1))) if len(power_w) >= 3 else idle
    if peak - idle < max(1.0, 0.03 * idle):
        raise CosimError(
            f"{source}: no active plateau (power stays at {idle:.1f} W, idle); the kernel ran shorter than a sample: "
            "repeat it for seconds while sampling"
        )
    active = power_w >= idle + (peak - idle) / 2
    start = int(np.argmax(active))
    end = start + int(np.argmin(active[start:])) if not active[start:].all() else len(power_w)
    start, end = start + 1, end - 1  # a 500 ms sample may straddle the start or the end
    if end - start < 3:
        raise CosimError(
            f"{source}: no active plateau ({max(0, end - start + 2)} active sample(s) of {len(power_w)}); the kernel ran "
            "shorter than a few samples: repeat it for seconds while sampling"
        )
    return slice(start, start + first_level(power_w[start:end]))


def first_level(run: np.ndarray) -> int:
    """How many of ``run``'s samples belong to its first power level: all of them, unless the best two-level
    split (least squares) has levels > 4 % and > 10 standard errors apart (a second kernel's plateau)."""
    n = len(run)
    if n < 10:
        return n
    k = np.arange(5, n - 4)
    csum, csq = np.cumsum(run), np.cumsum(run * run)
    total, total_sq = csum[-1], csq[-1]
    left, left_sq = csum[k - 1], csq[k - 1]
    sse = (left_sq - left**2 / k) + (total_sq - left_sq - (total - left) ** 2 / (n - k))
    best = int(np.argmin(sse))
    cut = int(k[best])
    a, b = run[:cut].mean(), run[cut:].mean()
    se = np.sqrt(max(sse[best], 0.0) / (n - 2) * (1 / cut + 1 / (n - cut)))
    step = abs(a - b)
    return cut if step > 0.04 * a and step > 10 * se else n


def summary_kernel(path: Path, benchmark: str) -> tuple[str, float]:
    """(kernel text, time per launch [s]) of the benchmark's kernel in the perf log's nvprof summary."""
    from cosim.readers.nvprof_trace import read_gpu_summary

    summary = read_gpu_summary(path)
    kernels = summary[~summary["name"].str.startswith("[")]  # memcpy/memset rows are not kernels
    if kernels.empty:
        raise CosimError(f"{path}: nvprof's summary lists no kernel (only memory copies)")
    wanted = STUDY_KERNELS.get(benchmark)
    if wanted is not None:
        hit = kernels[[kernel_name(n) == wanted for n in kernels["name"]]]
        if not hit.empty:
            kernels = hit
    row = kernels.loc[kernels["time_s"].idxmax()]
    return str(row["name"]), float(row["avg_s"])


def kernel_metrics(path: Path, kernel: str) -> tuple[str, dict[str, float]]:
    """(device, {metric: Avg in SI}) of ``kernel`` in an nvprof --metrics log."""
    from cosim.readers.nvprof import metric_records

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CosimWarning)  # the program's output between sessions is expected here
        records = metric_records(path)
    mine = [r for r in records if r.kernel == kernel] or [r for r in records if kernel_name(r.kernel) == kernel_name(kernel)]
    if not mine:
        raise CosimError(f"{path}: no metrics of kernel '{kernel_name(kernel)}' (the one its perf log times)")
    return mine[0].device, {r.metric: r.avg for r in mine}


def log_sets(folder: Path) -> tuple[dict[tuple[str, int, int], dict[str, Path]], list[str]]:
    """(benchmark, core, mem) -> {kind: path}; and the names of incomplete sets (missing kinds)."""
    sets: dict[tuple[str, int, int], dict[str, Path]] = {}
    for p in sorted(folder.iterdir()):
        if m := LOG_NAME.match(p.name):
            bench = m["bench"] if m["input"] in (None, "00") else f"{m['bench']}_input{m['input']}"
            sets.setdefault((bench, int(m["core"]), int(m["mem"])), {})[m["kind"]] = p
    if not sets:
        raise CosimError(f"{folder}: no benchmark_<name>_core<C>_mem<M>_input<NN>_<metrics|perf|power>.log files")
    incomplete = [f"{b} core {c} mem {m} (no {', '.join(k for k in KINDS if k not in f)})" for (b, c, m), f in sets.items() if len(f) < 3]
    return sets, incomplete


def is_log_folder(path: Path) -> bool:
    return path.is_dir() and any(LOG_NAME.match(p.name) for p in path.iterdir())


def read_dvfs_folder(folder: str | Path) -> pd.DataFrame:
    """The kernel DVFS table of a folder of logs: ``benchmark, kernel, core_mhz, mem_mhz, runtime_s`` [s],
    ``power_w`` [W], then ``device``, ``power_samples``, ``idle_power_w`` [W], ``core_mhz_sampled``,
    ``mem_mhz_sampled`` [MHz], ``kernel_signature`` and one column per nvprof metric (SI, fractions).

    Sets missing a file are dropped with one warning naming them; ``attrs["dvfs"]["dropped"]`` lists them.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise CosimError(f"{folder}: not a folder; give the folder of benchmark_*_core*_mem*_*.log files")
    sets, dropped = log_sets(folder)
    if dropped:
        warnings.warn(
            CosimWarning(f"{folder}: dropped {len(dropped)} clock pair(s) with logs missing: {'; '.join(dropped[:5])}"), stacklevel=2
        )
    rows: list[dict] = []
    devices: dict[str, Path] = {}
    for (bench, core, mem), files in sorted(sets.items()):
        if len(files) < 3:
            continue
        signature, runtime_s = summary_kernel(files["perf"], bench)
        device, metrics = kernel_metrics(files["metrics"], signature)
        devices.setdefault(device, files["metrics"])
        samples = power_samples(files["power"])
        keep = plateau(samples[:, 2], source=str(files["power"]))
        rows.append(
            {
                "benchmark": bench,
                "kernel": kernel_name(signature),
                "core_mhz": float(core),
                "mem_mhz": float(mem),
                "runtime_s": runtime_s,
                "power_w": float(samples[keep, 2].mean()),
                "device": device,
                "power_samples": keep.stop - keep.start,
                "idle_power_w": float(np.median(samples[:5, 2])),
                "core_mhz_sampled": float(np.median(samples[keep, 0])),
                "mem_mhz_sampled": float(np.median(samples[keep, 1])),
                "kernel_signature": signature,
                **metrics,
            }
        )
        if len(devices) > 1:
            first, other = list(devices.items())[:2]
            raise CosimError(
                f"{other[1]}: device '{other[0]}', but {first[1]} is '{first[0]}'; one folder holds one device's logs: "
                "move the other device's logs to their own folder"
            )
    if not rows:
        raise CosimError(f"{folder}: no complete set of metrics, perf and power logs for any clock pair")
    out = pd.DataFrame(rows)
    bad = [c for c in ("runtime_s", "power_w") if not all(math.isfinite(v) and v > 0 for v in out[c])]
    if bad:
        raise CosimError(f"{folder}: {bad[0]} is not a positive number in every row")
    out.attrs["dvfs"] = {"path": str(folder), "dropped": dropped, "rule": PLATEAU_RULE}
    return out
