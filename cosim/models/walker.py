"""Walker et al. PMC power model (IEEE TCAD 2017, Eq. 2), as pure functions over arrays.

    P_cluster = sum_n beta_n * E_n * V^2 * f  +  sum_k c_k * f^a_k * V^b_k
                \\______ dynamic activity ____/    \\__ static + background __/

E_n are the event inputs (see :mod:`cosim.counters.pmc`), f the cluster
frequency [MHz] and V the cluster voltage [V].  The static/background polynomial
is exactly the set of terms in the published parameter files (intercept, f, V,
f*V, V^2, f*V^2, V^3, f*V^3); its coefficients are large and cancel, so only
their sum is meaningful.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DynamicTerm:
    """beta * (sum of weighted events) * V^2 * f."""

    name: str  # "0x11", or "0x1b-0x73" for a transformed event
    events: Mapping[str, float]  # event -> weight, e.g. {"0x1b": 1, "0x73": -1}
    coefficient: float


@dataclass(frozen=True)
class StaticTerm:
    """c * f^f_exp * V^v_exp."""

    name: str
    f_exp: int
    v_exp: int
    coefficient: float


def dynamic_term_power_w(eph: Mapping[str, np.ndarray], freq_mhz: np.ndarray, voltage_v: np.ndarray, term: DynamicTerm) -> np.ndarray:
    """Power of one dynamic term [W].

    ``eph[event]`` is the event input [events/s per core / MHz], ``freq_mhz`` [MHz], ``voltage_v`` [V].
    """
    e = sum(weight * np.asarray(eph[event], dtype=float) for event, weight in term.events.items())
    return term.coefficient * e * np.asarray(voltage_v) ** 2 * np.asarray(freq_mhz)


def static_power_w(freq_mhz: np.ndarray, voltage_v: np.ndarray, terms: tuple[StaticTerm, ...]) -> np.ndarray:
    """Static and background-dynamic power [W] at frequency ``freq_mhz`` [MHz] and voltage ``voltage_v`` [V]."""
    f = np.asarray(freq_mhz, dtype=float)
    v = np.asarray(voltage_v, dtype=float)
    return sum(t.coefficient * f**t.f_exp * v**t.v_exp for t in terms) + np.zeros(np.broadcast(f, v).shape)


def cluster_power_w(
    eph: Mapping[str, np.ndarray],
    freq_mhz: np.ndarray,
    voltage_v: np.ndarray,
    dynamic: tuple[DynamicTerm, ...],
    static: tuple[StaticTerm, ...],
) -> dict[str, np.ndarray]:
    """Eq. 2 with its breakdown: ``{"dynamic_w", "static_w", "power_w", "term_<name>_w"...}`` [W]."""
    out = {f"term_{t.name}_w": dynamic_term_power_w(eph, freq_mhz, voltage_v, t) for t in dynamic}
    out["dynamic_w"] = np.asarray(sum(out.values())) if out else np.zeros(np.shape(freq_mhz))
    out["static_w"] = static_power_w(freq_mhz, voltage_v, static)
    out["power_w"] = out["dynamic_w"] + out["static_w"]
    return out
