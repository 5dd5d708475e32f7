"""The text of the CPU timeline's ``flags`` column, and the warnings about epochs a clock change split."""

from __future__ import annotations

import warnings

import numpy as np

from cosim import columns as cols
from cosim.errors import CosimWarning
from cosim.models.envelope import above_top, interval_flags
from cosim.models.modelfile import Model
from cosim.readers.gem5_config import Cluster
from cosim.timeline.clock_change import ClockChange
from cosim.timeline.wake import WakeCredit


def warn_clock_change(change: ClockChange, epochs: np.ndarray, cluster: Cluster, freq: np.ndarray) -> None:
    """Say which epochs were split between two clocks, and which had a change no core's cycles place."""
    _warn_first(
        change.split,
        lambda i, more: (
            f"cluster '{cluster.name}': the clock changed inside epoch {epochs[i]}{more}, from {change.before_mhz[i]:g} to "
            f"{freq[i]:g} MHz after {change.share_before[i]:.1%} of it (from the cycles its busiest core counted); "
            "priced at both operating points, each for its share (flag clock_change_split)"
        ),
    )
    unplaced = np.flatnonzero(change.unplaced)
    if unplaced.size:
        i = int(unplaced[0])
        warnings.warn(
            CosimWarning(
                f"cluster '{cluster.name}': the clock changed to {freq[i]:g} MHz during or at the end of epoch {epochs[i]}, in which "
                "no core counted a cycle, so the change cannot be placed; priced at the end clock (flag clock_change_unplaced)"
            ),
            stacklevel=4,
        )


def warn_wake_credit(credit: WakeCredit, credited: np.ndarray, epochs: np.ndarray, cluster: Cluster) -> None:
    """Say which epochs hold cycles a CPU slept before them, priced with an interval over what the stats allow."""
    _warn_first(
        credited,
        lambda i, more: (
            f"cluster '{cluster.name}': in epoch {epochs[i]}{more} {str(credit.cpus[i]).replace(';', ', ')} counted cycles it slept "
            "before the epoch (gem5 adds them when a CPU wakes) with its power state ON, so when in the epoch it woke is "
            "unknown; priced at the middle of the cycles its statistics allow, the interval covering both ends (flag wake_credit)"
        ),
    )


def _warn_first(rows: np.ndarray, message) -> None:
    """Warn ``message(i, more)`` about the first of ``rows`` (``more`` counts the others), if any."""
    where = np.flatnonzero(rows)
    if where.size:
        more = f" (and {where.size - 1} more epoch(s))" if where.size > 1 else ""
        warnings.warn(CosimWarning(message(int(where[0]), more)), stacklevel=5)


def flag_cumulative(part: cols.Columns, dumps: list[int]) -> None:
    """Flag ``cumulative_dump`` on rows the reader differenced from cumulative counts (no stats reset)."""
    for i in np.flatnonzero(np.isin(part["epoch"], dumps)):
        part["flags"][i] = ";".join(filter(None, [part["flags"][i], "cumulative_dump"]))


def flag_text(
    op,
    substitutes: dict[str, str],
    nan_input: np.ndarray,
    implausible: np.ndarray,
    model: Model,
    cluster: Cluster,
    extra: list[str],
    freq: np.ndarray,
) -> list[str]:
    """Per epoch, the ``flags`` text: its operating point's flags, then those every row of the cluster carries."""
    common = extra + [f"subst:{e}" for e in sorted(substitutes)]
    up = above_top(model, freq)
    only_extrapolation = interval_flags(model, freq)
    flags = []
    for i in range(len(nan_input)):
        f = []
        if op.freq_outside_training[i]:
            f.append("freq_outside_training")
        if up[i]:
            f.append("extrapolated")
        if only_extrapolation[i]:
            f.append("interval_extrapolation_only")
        if op.voltage_outside_training[i]:
            f.append("voltage_outside_training")
        if op.voltage_not_in_table[i]:
            f.append("voltage_not_in_vf_table")
        if nan_input[i]:
            f.append("nan_input")
        if implausible[i]:
            f.append("implausible")
        flags.append(";".join(f + common))
    return flags
