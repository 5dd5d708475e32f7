"""The physics family's inputs from any profiler's names: one map per tool (``counters/maps/kernel-physics-*.toml``).

Each map names, per quantity (DRAM traffic, issue rate, occupancy), the columns that carry it, their
unit, the factor to cosim's unit and the documentation it comes from.  A table's tool is the first
whose every quantity has a column in it, in the order of :data:`TOOLS`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd

from cosim.errors import CosimError

TOOLS = ("nvprof", "ncu", "dcgm")


@cache
def feature_map(tool: str) -> dict[str, Any]:
    """The shipped map of ``tool`` (``cosim/counters/maps/kernel-physics-<tool>.toml``)."""
    text = (resources.files("cosim.counters") / "maps" / f"kernel-physics-{tool}.toml").read_text()
    return tomllib.loads(text)


def _alias_groups(spec: dict[str, Any]) -> list[list[str]]:
    return [list(spec["columns"]), *(list(g) for g in spec.get("also", []))]


def _first(names: list[str], have: set[str]) -> str | None:
    return next((n for n in names if n in have), None)


def resolve_tool(columns: Iterable[str], *, prefix: str = "") -> str | None:
    """The first tool whose every quantity has a column among ``columns`` (each name after ``prefix``), else None."""
    have = {c.removeprefix(prefix) for c in columns if c.startswith(prefix)}
    for tool in TOOLS:
        if all(_first(spec["columns"], have) for spec in feature_map(tool)["quantities"].values()):
            return tool
    return None


def missing_text(columns: Iterable[str], *, prefix: str = "") -> str:
    """One line: which columns each tool's map lacks in ``columns``."""
    have = {c.removeprefix(prefix) for c in columns if c.startswith(prefix)}
    parts = []
    for tool in TOOLS:
        lacking = [spec["columns"][0] for spec in feature_map(tool)["quantities"].values() if not _first(spec["columns"], have)]
        parts.append(f"{tool}: {', '.join(lacking)}")
    return "; ".join(parts)


def physics_inputs(rows: pd.DataFrame, tool: str, *, prefix: str = "f_") -> dict[str, np.ndarray]:
    """``dram`` (traffic per memory cycle: [B/cycle] from throughputs, or DCGM's active ratio), ``ipc`` and
    ``occupancy`` [fraction] of each row, from its ``prefix``-ed feature columns named as ``tool`` names them."""
    have = {c.removeprefix(prefix) for c in rows.columns if c.startswith(prefix)}
    spec = feature_map(tool)["quantities"]

    def value(name: str) -> np.ndarray:
        q = spec[name]
        total = np.zeros(len(rows))
        found = False
        for group in _alias_groups(q):
            col = _first(group, have)
            if col is not None:
                values = rows[prefix + col].to_numpy(float) * float(q["scale"])
                lo, hi = q.get("range", (-np.inf, np.inf))
                off = (values < lo) | (values > hi)
                if off.any():
                    raise CosimError(
                        f"{col} is {values[off][0]:g} in a profile; as {feature_map(tool)['title']} it is a {q['unit']} "
                        f"within {lo:g}-{hi:g}: give a percentage as a fraction (divide by 100), as cosim read writes it"
                    )
                total = total + values
                found = True
        if not found:
            raise CosimError(
                f"the physics model was fitted on {feature_map(tool)['title']}; the table lacks {q['columns'][0]} "
                f"(or {', '.join(q['columns'][1:]) or 'an alias'}): profile with the same tool, or use --family trees"
            )
        return total

    if "dram_active" in spec:
        dram = value("dram_active")
    else:  # bytes per second over the reference memory clock: bytes per memory cycle
        dram = (value("dram_read") + value("dram_write")) / (rows["mem_mhz_ref"].to_numpy(float) * 1e6)
    return {"dram": dram, "ipc": value("ipc"), "occupancy": value("occupancy")}


def physics_tool(rows: pd.DataFrame) -> str:
    """The profiler whose names the rows' features use (the maps above), or a one-line refusal."""
    tool = resolve_tool(rows.columns, prefix="f_")
    if tool is None:
        raise CosimError(
            "the physics and roofline families need DRAM traffic, IPC and occupancy columns as nvprof, Nsight Compute or DCGM name them; "
            f"the table lacks ({missing_text(rows.columns, prefix='f_')}): add them, or fit --family trees"
        )
    return tool
