"""Writing results: atomic CSV/Parquet files and the stacked power plot."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from cosim.errors import CosimError


def write_atomic(path: str | Path, write: Callable[[Path], None]) -> Path:
    """Run ``write(tmp)`` on a temporary file beside ``path``, then rename it onto ``path``.

    Readers never see a half-written file, and a failed write leaves any old file intact.
    """
    path = Path(path)
    if path.parent and not path.parent.exists():
        raise CosimError(f"{path}: folder {path.parent} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual mode
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_table(df: pd.DataFrame, path: str | Path) -> Path:
    """Write ``df`` as CSV, or as Parquet when ``path`` ends in ``.parquet`` (needs pyarrow)."""
    path = Path(path)
    df = df.copy(deep=False)
    df.attrs = {}  # run metadata stays in memory; Parquet would try to serialise it
    if path.suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise CosimError(f"{path}: Parquet needs pyarrow; pip install 'cosim[parquet]' or write .csv") from None
        return write_atomic(path, lambda tmp: df.to_parquet(tmp, index=False))
    return write_atomic(path, lambda tmp: df.to_csv(tmp, index=False, float_format="%.9g"))


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: str | Path, *, dpi: int = 120) -> Path:
    """Write ``fig`` atomically in the format of ``path``'s suffix (PNG by default), then close it."""
    path = Path(path)
    write_atomic(path, lambda tmp: fig.savefig(tmp, format=path.suffix.lstrip(".") or "png", dpi=dpi))
    pyplot().close(fig)
    return path


def time_unit(span_s: float) -> tuple[str, float]:
    """The largest of s, ms, µs, ns in which ``span_s`` [s] is at least 1, and its scale factor."""
    return next((u, k) for u, k in (("s", 1.0), ("ms", 1e3), ("µs", 1e6), ("ns", 1e9)) if span_s * k >= 1 or u == "ns")


def finish_power_axes(ax, *, xlabel: str, title: str) -> None:
    """Label a stacked power-over-time plot the same way everywhere."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel("power [W]")
    ax.set_title(title)
    ax.legend(loc="upper right", fontsize="small")
    ax.set_ylim(bottom=0)


def plot_timeline(timeline: pd.DataFrame, path: str | Path, *, title: str = "") -> Path:
    """Stacked per-cluster power over simulated time, with the +-2*SER interval band of the total."""
    import numpy as np

    plt = pyplot()

    clusters = list(dict.fromkeys(timeline["cluster"]))
    # pivot, not pivot_table: epochs without a value stay (as gaps), so every cluster has one value per epoch
    wide = timeline.pivot(index=["epoch", "start_s", "end_s"], columns="cluster", values="power_w").sort_index()
    wide = wide[clusters].reset_index()
    fig, ax = plt.subplots(figsize=(9, 4.5), layout="constrained")
    # a step plot: each epoch's power is constant from its start to its end
    span_s = wide["end_s"].to_numpy()[-1]
    unit, scale = time_unit(span_s)
    edges = np.append(wide["start_s"].to_numpy(), span_s) * scale
    base = np.zeros(len(wide))
    if not np.isfinite(wide[clusters].to_numpy(dtype=float)).any():
        ax.text(0.5, 0.5, "no epoch has a power value (see the flags column)", ha="center", va="center", transform=ax.transAxes)
    for name in clusters:
        values = np.nan_to_num(wide[name].to_numpy(dtype=float))  # a missing epoch draws as a gap, not a crash
        model = timeline.loc[timeline["cluster"] == name, "model"].iloc[0]
        ax.stairs(base + values, edges, baseline=base, fill=True, alpha=0.75, label=f"{name} ({model})")
        base = base + values
    half = timeline.assign(half=(timeline["power_hi_w"] - timeline["power_w"]) ** 2).groupby("epoch", sort=True)["half"].sum() ** 0.5
    if (half.to_numpy() > 0).any():
        ax.stairs(base + half.to_numpy(), edges, baseline=base - half.to_numpy(), fill=True, color="k", alpha=0.15, label="total ±2·SER")
    flagged = timeline.groupby("epoch")["flags"].apply(lambda s: any("outside" in f or "not_in" in f for f in s))
    if flagged.any():
        ax.plot([], [], " ", label="(some epochs extrapolated: see flags column)")
    finish_power_axes(ax, xlabel=f"simulated time [{unit}]", title=title or "cosim power timeline")
    return save_figure(fig, path)
