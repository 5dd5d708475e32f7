"""CPU voltage model (Walker et al. Section VIII).

A real regulator's output sags with load, so the voltage under a workload is not
the idle ("target") voltage of the frequency.  Per frequency, the measured
voltage is regressed on the dynamic power the model predicts at the target
voltage:  V = V_target(f) + k(f) * P_dyn(V_target).  At run time (or in gem5,
where only nominal voltages exist) the power model is evaluated once at the
target voltage, the voltage model gives the load voltage, and the power model is
evaluated again at that voltage.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cosim.errors import CosimError
from cosim.fit.design import FitTable, Term, walker_design
from cosim.fit.ols import OLSFit


def dynamic_power_w(fit: OLSFit, table: FitTable, terms: Sequence[Term], voltage_v: np.ndarray) -> np.ndarray:
    """The fitted model's dynamic (event) power [W] at ``voltage_v``."""
    at_v = FitTable(table.source, table.power_w, table.freq_mhz, voltage_v, table.rates, table.groups, table.static_points)
    X = walker_design(at_v, terms)
    dyn = [c for c in fit.columns if c.startswith("dyn:")]
    return X[dyn].to_numpy() @ fit.params[dyn].to_numpy()


def fit_voltage_model(fit: OLSFit, table: FitTable, terms: Sequence[Term], *, idle: np.ndarray) -> list[list[float]]:
    """``[[freq_mhz, v_target_v, slope_v_per_w], ...]``: target = mean idle voltage at that frequency."""
    points = []
    for f in np.unique(table.freq_mhz):
        at_f = table.freq_mhz == f
        if not (idle & at_f).any():
            raise CosimError(f"{table.source}: no idle rows at {f:g} MHz to give the target voltage there")
        v_target = float(table.voltage_v[idle & at_f].mean())
        p_dyn = dynamic_power_w(fit, table.subset(np.flatnonzero(at_f)), terms, np.full(at_f.sum(), v_target))
        dv = table.voltage_v[at_f] - v_target
        slope = float(p_dyn @ dv / (p_dyn @ p_dyn)) if p_dyn @ p_dyn > 0 else 0.0  # through the origin: no load, no sag
        points.append([float(f), round(v_target, 6), slope])
    return points
