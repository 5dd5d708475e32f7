"""The DVFS what-if's refusals: a recorded run it cannot rescale (a clock change inside an epoch), and a clock whose
static power ``cosim power`` would call implausible."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.models.modelfile import Model
from cosim.models.plausibility import refuse_implausible, static_reasons
from cosim.timeline.clock_change import clock_change
from cosim.timeline.trust import refuse_rates


def refuse_clock_change(stats: pd.DataFrame, cluster, *, freq_mhz: np.ndarray, duration_s: np.ndarray, path: str) -> None:
    """Refuse a run whose clock changed inside an epoch (:mod:`cosim.timeline.clock_change`): the what-if rescales each
    epoch from the one clock it ran at."""
    change = clock_change(stats, cluster, freq_mhz=freq_mhz, duration_s=duration_s)
    bad = np.flatnonzero(change.split | (change.reasons != ""))
    if bad.size:
        i = int(bad[0])
        epoch = stats["epoch"].to_numpy()[i]
        prev = freq_mhz[i - 1] if i > 0 else freq_mhz[i]
        raise CosimError(
            f"{path}: epoch {epoch}, cluster '{cluster.name}': the clock changed from {prev:g} to {freq_mhz[i]:g} MHz inside this "
            "epoch, and the what-if rescales each epoch from the one clock it ran at; price the run as recorded with "
            "cosim power (which splits that epoch between the two clocks), or dump the stats at each clock change in gem5"
        )


def refuse_implausible_clocks(name: str, model: Model, freq_mhz: np.ndarray, voltage_v: np.ndarray, static_w: np.ndarray) -> None:
    """Refuse a clock whose static power [W] (the model's own curve) the rule ``cosim power`` applies calls implausible
    (:func:`cosim.models.plausibility.static_reasons`): the what-if writes no row ``cosim power`` would refuse."""
    refuse_implausible(
        static_reasons(model, static_w=static_w, freq_mhz=freq_mhz, voltage_v=voltage_v),
        lambda i: f"--freqs {name}={freq_mhz[i]:g} ({model.name})",
        f"drop it from --freqs (the model was trained at {model.train_freq_mhz[0]:g}-{model.train_freq_mhz[1]:g} MHz), "
        "or price it with another --model",
        unit="clock",
        keep=None,  # the what-if writes no implausible row
    )


def refuse_whatif_rates(stats: pd.DataFrame, cluster, model: Model, eph, *, path: str) -> None:
    """Refuse an epoch whose events per cycle no ``model`` core can count, as ``cosim power`` does
    (:func:`cosim.timeline.trust.refuse_rates`): a rate per cycle is the same at every clock the what-if tries."""
    epochs = stats["epoch"].to_numpy()
    refuse_rates(
        model,
        eph,
        lambda i: f"{path}: epoch {epochs[i]}, cluster '{cluster.name}' ({model.name})",
        ways_out="price it with another --model (or fit one with cosim fit)",
    )
