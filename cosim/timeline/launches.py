"""Kernel launches on one time axis, shared by both GPU timelines: expanding nvprof's per-kernel
summaries into launches, ordering them by an nvprof gpu-trace, start times, and the idle gaps."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cosim.errors import CosimError


def expand_launches(kernels: pd.DataFrame) -> pd.DataFrame:
    """One row per launch: nvprof summaries (``invocations`` > 1) are repeated, in file order."""
    if "launch" in kernels.columns:
        return kernels.reset_index(drop=True)
    reps = kernels["invocations"].to_numpy(dtype=int) if "invocations" in kernels else np.ones(len(kernels), dtype=int)
    out = kernels.loc[kernels.index.repeat(reps)].reset_index(drop=True)
    out.insert(0, "launch", np.arange(len(out)))
    return out


def order_by_gpu_trace(kernels: pd.DataFrame, trace: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Launches in the order an nvprof gpu-trace saw them, with its start times and durations [s].

    The i-th launch of a kernel in the trace is the i-th launch of that kernel in
    the metrics; times start at the trace's first activity (copies included).
    Returns the launches (``launch`` renumbered in time order), launch times
    (``launch``, ``start_s``, ``duration_s``, ``kernel``) and the copies and memsets
    (``name``, ``start_s``, ``duration_s``, ``size_b``) for the timeline.
    """
    where = trace.attrs.get("nvprof", {}).get("path", "gpu-trace")
    launches = expand_launches(kernels)
    runs = trace[trace["kind"] == "kernel"].reset_index(drop=True)
    pools: dict[str, list[int]] = {}
    for i, name in enumerate(launches["kernel"]):
        pools.setdefault(name, []).append(i)
    order = []
    for row in runs.itertuples():
        pool = pools.get(row.kernel)
        if pool is None:
            raise CosimError(f"{where}:{row.line}: kernel '{row.kernel}' is not in the metrics (kernels: {', '.join(sorted(pools))[:300]})")
        if not pool:
            raise CosimError(
                f"{where}:{row.line}: kernel '{row.kernel}' runs more often in the trace than in the metrics; same program and input?"
            )
        order.append(pool.pop(0))
    left = {name: len(pool) for name, pool in pools.items() if pool}
    if left:
        name, n = next(iter(left.items()))
        raise CosimError(f"{where}: kernel '{name}' has {n} launch(es) in the metrics that the trace lacks; same program and input?")
    ordered = launches.iloc[order].reset_index(drop=True)
    ordered["launch"] = np.arange(len(ordered))
    start = runs["start_s"].to_numpy(dtype=float)
    end = start + runs["duration_s"].to_numpy(dtype=float)
    for i in range(1, len(start)):  # nvprof prints 5 digits: a start may round to before the last kernel's end
        if end[i - 1] - 1e-4 * start[i] <= start[i] < end[i - 1]:
            start[i], end[i] = end[i - 1], end[i - 1] + end[i] - start[i]
    times = pd.DataFrame(
        {
            "launch": ordered["launch"],
            "start_s": start - trace["start_s"].min(),
            "duration_s": runs["duration_s"],
            "kernel": ordered["kernel"],
        }
    )
    times.attrs["path"] = where
    moves = trace[trace["kind"].isin(["memcpy", "memset"])]
    copies = pd.DataFrame(
        {
            "name": moves["name"],
            "start_s": moves["start_s"] - trace["start_s"].min(),
            "duration_s": moves["duration_s"],
            "size_b": moves["size_b"].fillna(0.0),
        }
    ).reset_index(drop=True)
    return ordered, times, copies


def rows_at(start_s: np.ndarray, end_s: np.ndarray, t_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For sorted, non-overlapping rows [start, end) [s]: the row index at each time (clipped to >= 0) and whether a row covers it."""
    idx = np.searchsorted(np.asarray(start_s), t_s, side="right") - 1
    idx = np.clip(idx, 0, None)
    inside = (np.asarray(start_s)[idx] <= t_s) & (t_s < np.asarray(end_s)[idx])
    return idx, inside


def starts(launches: pd.DataFrame, duration_s: np.ndarray, launch_times: pd.DataFrame | None, gap_s: float) -> np.ndarray:
    if gap_s < 0 or not np.isfinite(gap_s):
        raise CosimError(f"--gap-s {gap_s}: the time between kernels must be >= 0 [s]")
    if launch_times is not None and gap_s:  # the launch times would silently win
        raise CosimError(f"--gap-s {gap_s:g} spaces kernels that have no start times, but the launch times give them; drop --gap-s")
    if launch_times is None:
        return np.concatenate([[0.0], np.cumsum(duration_s[:-1] + gap_s)])
    where = launch_times.attrs.get("path", "launch times")
    if len(launch_times) != len(launches) or (launch_times["launch"].to_numpy() != launches["launch"].to_numpy()).any():
        raise CosimError(
            f"{where}: lists {len(launch_times)} launches, the GPU input has {len(launches)} (launch 0..{len(launches) - 1}); give one row per launch"
        )
    if "kernel" in launch_times.columns:
        for i, (given, row) in enumerate(zip(launch_times["kernel"].astype(str), launches.itertuples(), strict=True)):
            if given not in (row.kernel, row.kernel_display):
                raise CosimError(f"{where}:{i + 2}: launch {row.launch} is kernel '{row.kernel_display}' in the GPU input, not '{given}'")
    start = launch_times["start_s"].to_numpy(dtype=float)
    overlap = np.flatnonzero(start[1:] < start[:-1] + duration_s[:-1] * (1 - 1e-9))
    if len(overlap):
        i = overlap[0] + 1
        raise CosimError(
            f"{where}: launch {i} starts at {start[i]:g} s, before launch {i - 1} ends ({start[i - 1] + duration_s[i - 1]:g} s); the GPU runs kernels one at a time"
        )
    return start


def gap_pieces(
    end_s: np.ndarray, next_start_s: np.ndarray, stages: list[tuple[str, float | None]]
) -> list[tuple[str, float, float, float]]:
    """Split each idle gap [end, next start) [s] into stages that each last their tail time (None: the rest).

    Returns ``(stage, start_s, duration_s, gap_s)`` per piece: the GPU's inactivity
    timer (idle, then gated) and the Fermi performance levels (highest, middle, lowest)
    are both stages.
    """
    pieces = []
    for gap_start, gap_end in zip(end_s, next_start_s, strict=True):
        gap = gap_end - gap_start
        since = 0.0  # time since the GPU went idle
        for name, tail_s in stages:
            if since >= gap - 1e-15:
                break
            stop = gap if tail_s is None else min(gap, since + tail_s)
            pieces.append((name, gap_start + since, stop - since, gap))
            since = stop
    return pieces
