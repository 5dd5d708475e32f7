"""Measured data -> the Walker Eq. 2 design matrix.

Columns: one ``E * V^2 * f`` column per dynamic term (an event, or a transformed
event such as INST_SPEC - DP_SPEC), then the static/background polynomial in V
and f of the published models.  E is the per-core event rate [events/s]
divided by f [MHz], as in the Powmon "EPH" inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from cosim.errors import CosimError

# (name, f exponent, V exponent): the static/background terms of the published A15/A7 models
WALKER_STATIC = (
    ("intercept", 0, 0),
    ("f", 1, 0),
    ("V", 0, 1),
    ("f*V", 1, 1),
    ("V^2", 0, 2),
    ("f*V^2", 1, 2),
    ("V^3", 0, 3),
    ("f*V^3", 1, 3),
)
# Smallest/largest singular value of the column-scaled static block below which a term adds no
# information the data can carry.  The published A15 data keeps all 8 terms (worst ratio 1.9e-6);
# one frequency (f = intercept) or three nominal (f, V) points (rank 3) fall far below (< 1e-14).
_STATIC_CONDITION = 1e-7


@dataclass(frozen=True)
class Term:
    """A dynamic term: a weighted sum of events, e.g. {"0x1b": 1, "0x73": -1}."""

    events: Mapping[str, float]

    @property
    def name(self) -> str:
        parts: list[str] = []
        for event, weight in self.events.items():
            sign = "-" if weight < 0 else ("+" if parts else "")
            parts.append(f"{sign}{event}" if abs(weight) == 1 else f"{sign}{abs(weight):g}*{event}")
        return "".join(parts)

    @staticmethod
    def parse(text: str) -> Term:
        """``"0x1b-0x73"`` -> Term({"0x1b": 1, "0x73": -1})."""
        events: dict[str, float] = {}
        token, sign = "", 1.0
        for ch in text.replace(" ", "").lower() + "+":
            if ch in "+-" and token:
                events[token] = events.get(token, 0.0) + sign
                token = ""
            if ch in "+-":
                sign = 1.0 if ch == "+" else -1.0
            else:
                token += ch
        if not events:
            raise CosimError(f"'{text}' names no event")
        return Term(events)


@dataclass
class FitTable:
    """Measured rows ready for fitting."""

    source: str
    power_w: np.ndarray
    freq_mhz: np.ndarray
    voltage_v: np.ndarray
    rates: dict[str, np.ndarray]  # event -> per-core average rate [events/s]
    groups: pd.DataFrame = field(default_factory=pd.DataFrame)  # workload, core mask ... per row
    # "clock": the static terms are chosen on each clock's mean voltage, for data whose voltage moves around a few
    # nominal points only by load sag (ARMPM's sensed voltage: +-3 mV at each clock), which is no operating point
    static_points: str = "rows"

    def __len__(self) -> int:
        return len(self.power_w)

    def subset(self, rows: np.ndarray) -> FitTable:
        return FitTable(
            source=self.source,
            power_w=self.power_w[rows],
            freq_mhz=self.freq_mhz[rows],
            voltage_v=self.voltage_v[rows],
            rates={e: r[rows] for e, r in self.rates.items()},
            groups=self.groups.iloc[rows].reset_index(drop=True) if len(self.groups) else self.groups,
            static_points=self.static_points,
        )

    def eph(self, event: str) -> np.ndarray:
        """Event input E [events/s per core / MHz]."""
        if event not in self.rates:
            raise CosimError(f"{self.source}: no rate column for event {event}; known: {', '.join(sorted(self.rates))}")
        return self.rates[event] / self.freq_mhz


def static_terms_for(table: FitTable) -> tuple[tuple[str, int, int], ...]:
    """The published static polynomial, less the terms the data's operating points cannot tell apart.

    Terms are taken in the published order and one is skipped when it would make the
    static block (nearly) singular: with a single frequency every f term is the
    intercept again; with three nominal (f, V) points only three terms can be fitted.
    With ``table.static_points == "clock"`` the points judged are each clock at its mean voltage.
    """
    volts = table.voltage_v
    if table.static_points == "clock":
        volts = _mean_per_clock(table.freq_mhz, table.voltage_v)
    kept: list[tuple[str, int, int]] = []
    for term in WALKER_STATIC:
        trial = kept + [term]
        X = np.column_stack([table.freq_mhz**fa * volts**vb for _, fa, vb in trial])
        s = np.linalg.svd(X / np.abs(X).max(axis=0), compute_uv=False)
        if s[-1] / s[0] > _STATIC_CONDITION:
            kept = trial
    return tuple(kept)


def _mean_per_clock(freq_mhz: np.ndarray, voltage_v: np.ndarray) -> np.ndarray:
    """Each row's clock's mean voltage [V] (nan where the clock is nan): one mean per clock, not one per row (that
    was quadratic in the rows: most of `cosim fit`'s time on a board log of thousands of samples)."""
    clocks, which = np.unique(freq_mhz, return_inverse=True)
    means = np.array([voltage_v[freq_mhz == f].mean() if f == f else np.nan for f in clocks])
    return means[which.reshape(-1)]


def walker_design(table: FitTable, terms: Sequence[Term], static: Sequence[tuple[str, int, int]] | None = None) -> pd.DataFrame:
    """Design matrix of Eq. 2: ``E*V^2*f`` per dynamic term, then ``f^a * V^b`` per static term."""
    f, v = table.freq_mhz, table.voltage_v
    columns: dict[str, np.ndarray] = {}
    for term in terms:
        e = sum(w * table.eph(ev) for ev, w in term.events.items())
        columns[f"dyn:{term.name}"] = e * v**2 * f
    for name, fa, vb in static if static is not None else static_terms_for(table):
        columns[f"static:{name}"] = f**fa * v**vb
    return pd.DataFrame(columns)


def check_table(table: FitTable, terms: Sequence[Term], *, min_rows_per_parameter: int = 5) -> None:
    """Refuse data that cannot give a sound fit, naming the column and row."""
    named = {"power": table.power_w, "frequency": table.freq_mhz, "voltage": table.voltage_v}
    named |= {f"event {e}": table.rates[e] for t in terms for e in t.events if e in table.rates}
    for name, values in named.items():
        bad = ~np.isfinite(values)
        if bad.any():
            raise CosimError(f"{table.source}: {name} is nan/inf in row {int(np.flatnonzero(bad)[0]) + 2}; drop or repair those rows")
    n_params = len(terms) + len(static_terms_for(table))
    if len(table) < min_rows_per_parameter * n_params:
        raise CosimError(
            f"{table.source}: {len(table)} rows for {n_params} coefficients; need at least "
            f"{min_rows_per_parameter * n_params} ({min_rows_per_parameter} per coefficient)"
        )
    for term in terms:
        for event in term.events:
            table.eph(event)  # names a missing event
            values = table.rates[event]
            if np.ptp(values) == 0:
                raise CosimError(
                    f"{table.source}: event {event} is constant ({values[0]:g}) in every row; it carries no information, leave it out"
                )
    if np.any(table.freq_mhz <= 0) or np.any(table.voltage_v <= 0):
        raise CosimError(f"{table.source}: frequency and voltage must be positive in every row")
