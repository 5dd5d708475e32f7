"""Plots of every timeline, on one look: matplotlib's file-only backend, stacked power over time."""

from __future__ import annotations

from pathlib import Path

from cosim.output import write_atomic


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: str | Path, *, dpi: int = 120) -> Path:
    """Write ``fig`` atomically in the format of ``path``'s suffix (PNG by default), then close it."""
    from cosim.output import FIGURE_SUFFIXES, check_output

    path = Path(path)
    if path.suffix:
        check_output(path, option="plot", suffixes=FIGURE_SUFFIXES)
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
