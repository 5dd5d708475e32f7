"""PMC event selection (Walker et al. Section V).

Stage 1 (Fig. 5): start from the cycle counter, then add, one at a time, the
event that raises R^2 most, up to the number of hardware counters.
Stage 2: measure each selected event's VIF; where two events are nested (one
counts a subset of the other, such as INST_SPEC and DP_SPEC) replace the larger
by the difference, until every VIF is below the limit.
Also: hierarchical clustering of the candidates by correlation (Fig. 4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.fit.design import FitTable, Term, static_terms_for, walker_design
from cosim.fit.ols import r_squared, vif


@dataclass
class Selection:
    events: list[str]
    r2_steps: list[float]  # R^2 after each event was added
    vif: pd.Series  # VIF of each selected event's model input, all selected together
    terms: list[Term] = field(default_factory=list)  # after stage 2
    terms_vif: pd.Series | None = None
    transforms: list[str] = field(default_factory=list)  # e.g. "0x1b -> 0x1b-0x73"


def _design_inputs(table: FitTable, terms: Sequence[Term]) -> pd.DataFrame:
    X = walker_design(table, terms)
    return X[[c for c in X.columns if c.startswith("dyn:")]]


def stage1(table: FitTable, candidates: Sequence[str], *, n_events: int, first: str = "0x11") -> Selection:
    """Greedy forward selection by R^2 of the Eq. 2 model, cycle counter first."""
    if first not in candidates:
        raise CosimError(f"the cycle counter {first} must be among the candidate events")
    static = static_terms_for(table)
    static_cols = walker_design(table, [], static).to_numpy()
    selected = [first]
    r2_steps = [r_squared(np.column_stack([static_cols, _design_inputs(table, [Term({first: 1})]).to_numpy()]), table.power_w)]
    while len(selected) < min(n_events, len(candidates)):
        best, best_r2 = None, -np.inf
        for event in candidates:
            if event in selected:
                continue
            X = np.column_stack([static_cols, _design_inputs(table, [Term({e: 1}) for e in selected + [event]]).to_numpy()])
            r2 = r_squared(X, table.power_w)
            if r2 > best_r2:
                best, best_r2 = event, r2
        assert best is not None  # at least one candidate is left while the loop runs
        selected.append(best)
        r2_steps.append(best_r2)
    inputs = _design_inputs(table, [Term({e: 1}) for e in selected])
    return Selection(events=selected, r2_steps=r2_steps, vif=vif(inputs).set_axis(selected))


def nested(table: FitTable, big: str, small: str, *, tolerance: float = 0.02) -> bool:
    """``small`` counts a subset of ``big``: never more than it (to a tolerance) in any row."""
    a, b = table.rates[big], table.rates[small]
    return bool(np.all(b <= a * (1 + tolerance) + 1e-9)) and bool(np.mean(b) < np.mean(a))


def stage2(table: FitTable, selection: Selection, *, vif_limit: float = 5.0, keep: str = "0x11") -> Selection:
    """While an event's VIF is at or over ``vif_limit``, replace it by its difference with an event nested in it
    (or replace a containing event by its difference with it), taking the transform that lowers the worst VIF most."""
    terms = {e: Term({e: 1}) for e in selection.events}
    transforms = []

    def worst(candidate: dict[str, Term]) -> float:
        return float(vif(_design_inputs(table, list(candidate.values()))).max())

    for _ in range(len(terms)):
        values = vif(_design_inputs(table, list(terms.values()))).set_axis(list(terms))
        if values.max() < vif_limit:
            break
        options = []
        for high in values[values >= vif_limit].index:
            for other in terms:
                for big, small in ((high, other), (other, high)):
                    if big == small or keep in (big, small) or len(terms[big].events) != 1 or not nested(table, big, small):
                        continue
                    trial = {**terms, big: Term({big: 1, small: -1})}
                    options.append((worst(trial), big, small))
        if not options:
            break
        score, big, small = min(options)
        if score >= values.max():
            break
        terms[big] = Term({big: 1, small: -1})
        transforms.append(f"{big} -> {terms[big].name}")
    final = list(terms.values())
    selection.terms = final
    selection.transforms = transforms
    selection.terms_vif = vif(_design_inputs(table, final)).set_axis([t.name for t in final])
    return selection


def correlation_clusters(table: FitTable, candidates: Sequence[str], *, n_clusters: int = 8) -> pd.DataFrame:
    """Hierarchical clustering of the candidate events by correlation, with each one's correlation with power."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    data = pd.DataFrame({e: table.eph(e) for e in candidates})
    corr = data.corr().fillna(0).to_numpy()
    distance = 1 - np.abs(corr)
    np.fill_diagonal(distance, 0)
    labels = fcluster(
        linkage(squareform(distance, checks=False), method="average"), t=min(n_clusters, len(candidates)), criterion="maxclust"
    )
    # correlate each event's model input (E*V^2*f, its dynamic-power proxy) with power, as Fig. 4 does at one frequency
    inputs = _design_inputs(table, [Term({e: 1}) for e in candidates])
    power_corr = [float(np.corrcoef(inputs.iloc[:, i], table.power_w)[0, 1]) for i in range(len(candidates))]
    return pd.DataFrame({"event": list(candidates), "cluster": labels, "corr_with_power": power_corr}).sort_values(
        ["cluster", "event"], ignore_index=True
    )
