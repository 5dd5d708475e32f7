"""Build a Walker-formulation model from measured data, and write it as a cosim model file.

``fit_walker`` fits Eq. 2 by OLS with HC3 errors, reports the statistics of the
paper's Table III, cross-validates (Table IV), and ``model_file`` turns it into
the same schema as the shipped models, so ``cosim power`` and ``cosim apply``
use it unchanged.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from cosim.errors import CosimError
from cosim.fit.design import FitTable, Term, check_table, static_terms_for, walker_design
from cosim.fit.ols import OLSFit, fit_ols_hc3, vif
from cosim.fit.validate import CVResult, cross_validate
from cosim.fit.voltage import fit_voltage_model
from cosim.readers.measured import MeasuredInputs


@dataclass
class WalkerFit:
    table: FitTable
    terms: list[Term]
    static: tuple[tuple[str, int, int], ...]
    ols: OLSFit
    vif: pd.Series  # of the dynamic inputs, and of all inputs
    vif_all: pd.Series
    cv_rows: CVResult | None = None
    cv_grouped: CVResult | None = None
    voltage_model: list[list[float]] | None = None

    @property
    def fitted_w(self) -> np.ndarray:
        return self.ols.predict(walker_design(self.table, self.terms, self.static))


def fit_table(measured: MeasuredInputs, *, power_col: str, group_cols: Sequence[str] = (), source: str = "") -> FitTable:
    """A :class:`FitTable` from a measured table: power [W], frequency, voltage, rates and grouping columns."""

    for col in (power_col, *group_cols):
        if col not in measured.table.columns:
            raise CosimError(f"{source}: no column '{col}'; columns are: {', '.join(map(str, measured.table.columns[:12]))}, ...")
    power = pd.to_numeric(measured.table[power_col], errors="coerce").to_numpy(dtype=float)
    return FitTable(
        source=source,
        power_w=power,
        freq_mhz=measured.freq_mhz,
        voltage_v=measured.voltage_v,
        rates=measured.rates,
        groups=measured.table[list(group_cols)].reset_index(drop=True) if group_cols else pd.DataFrame(index=range(len(power))),
    )


def fit_walker(
    table: FitTable,
    terms: Sequence[Term],
    *,
    k: int = 10,
    group_by: str | None = None,
    idle: np.ndarray | None = None,
    seed: int = 0,
) -> WalkerFit:
    """Fit Eq. 2 with OLS + HC3, VIFs, k-fold CV by row (and by ``group_by``), and the voltage model when ``idle`` rows are marked."""
    terms = list(terms)
    check_table(table, terms)
    static = static_terms_for(table)
    X = walker_design(table, terms, static)
    values = X.to_numpy(dtype=float)
    if not np.isfinite(values).all():  # finite inputs whose products overflow (a rate of 2^64 events/s)
        row, col = (int(i[0]) for i in np.nonzero(~np.isfinite(values)))
        raise CosimError(f"{table.source}: row {row + 2}: model input {X.columns[col]} is not finite; drop or repair that row")
    try:
        ols = fit_ols_hc3(X, table.power_w)
    except np.linalg.LinAlgError as err:
        raise CosimError(f"{table.source}: the least-squares fit does not converge ({err}); look for rows with extreme values") from None
    dyn = [c for c in X.columns if c.startswith("dyn:")]
    fit = WalkerFit(
        table=table,
        terms=terms,
        static=static,
        ols=ols,
        vif=vif(X[dyn]),
        vif_all=vif(X.drop(columns=["static:intercept"])),
    )
    if k > 1:
        fit.cv_rows = cross_validate(table, terms, k=k, seed=seed)
        if group_by:
            fit.cv_grouped = cross_validate(table, terms, k=k, group_by=group_by, seed=seed)
    if idle is not None and idle.any() and len(np.unique(table.freq_mhz)) > 1:
        fit.voltage_model = fit_voltage_model(ols, table, terms, idle=idle)
    return fit


def _static_form(static_terms: list[dict], vf: list[list[float]]) -> dict | None:
    """The fitted static polynomial's one physical form (cosim.models.static_form), written into the file."""
    from cosim.models.static_form import static_form_block
    from cosim.models.walker import StaticTerm

    terms = tuple(StaticTerm(t["name"], t["f_exp"], t["v_exp"], t["coefficient"]) for t in static_terms)
    return static_form_block(terms, tuple((f, v) for f, v in vf))


def model_file(fit: WalkerFit, *, name: str, component: str, cores_per_cluster: int, source_note: str, isa: str = "arm") -> dict:
    """The fit as a ``cosim-model/1`` model file (see models/README.md)."""
    params = fit.ols.table()

    def stats(column: str) -> dict:
        row = params.loc[column]
        return {
            "coefficient": float(row["coefficient"]),
            "std_err_hc3": float(row["std_err"]),
            "p_value": float(row["p_value"]),
            **{f"ci{lv}": [float(row[f"ci{lv}_lo"]), float(row[f"ci{lv}_hi"])] for lv in (90, 95, 99)},
        }

    table = fit.table
    freqs = np.unique(table.freq_mhz)
    vf = [[float(f), round(float(table.voltage_v[table.freq_mhz == f].mean()), 4)] for f in freqs]
    summary = fit.ols.summary()
    data = {
        "schema": "cosim-model/1",
        "name": name,
        "formulation": "walker2017: P = sum_n beta_n * E_n * V^2 * f + sum_k c_k * f^a_k * V^b_k (fitted by cosim fit)",
        "component": component,
        "cores_per_cluster": cores_per_cluster,
        "isa": isa,
        "plausibility": {
            "max_power_w": round(2 * float(np.nanmax(table.power_w)), 4),
            "max_power_basis": "2 x the largest measured power in the training data; scaled by simulated cores / cores_per_cluster",
        },
        "source": {
            "citation": f"fitted by cosim fit on {_dt.date.today().isoformat()}",
            "figures_from": source_note,
            "hardware": component,
        },
        "units": {
            "power": "W",
            "frequency": "MHz",
            "voltage": "V",
            "event_input": "per-core event rate [events/s], averaged over the cluster's cores, divided by the cluster frequency [MHz]",
            "dynamic_term": "coefficient * E * f[MHz] * V[V]^2 -> W",
            "static_term": "coefficient * f[MHz]^f_exp * V[V]^v_exp -> W",
        },
        "events": {e: e for t in fit.terms for e in t.events},
        "dynamic_terms": [{"name": t.name, "events": dict(t.events), **stats(f"dyn:{t.name}")} for t in fit.terms],
        "static_terms": (static := [{"name": n, "f_exp": fa, "v_exp": vb, **stats(f"static:{n}")} for n, fa, vb in fit.static]),
        "vf_table": {"source": "mean measured voltage per frequency in the training data", "points_mhz_v": vf},
        **({"static_form": form} if (form := _static_form(static, vf)) is not None else {}),
        "training": {
            "freq_mhz": [float(freqs.min()), float(freqs.max())],
            "voltage_v": [float(table.voltage_v.min()), float(table.voltage_v.max())],
            "n_obs": len(table),
            "data": table.source,
        },
        "fit": {
            **{k: (round(v, 6) if isinstance(v, float) else v) for k, v in summary.items()},
            "ser_source": "training residuals of this fit",
            "estimator": "OLS with HC3 standard errors (p-values and CIs are HC3)",
            "vif_dynamic": {k.removeprefix("dyn:"): round(float(v), 3) for k, v in fit.vif.items()},
            "vif_all": {k: round(float(v), 3) for k, v in fit.vif_all.items()},
            "cv_by_row": fit.cv_rows.as_dict() if fit.cv_rows else None,
            "cv_by_group": fit.cv_grouped.as_dict() if fit.cv_grouped else None,
        },
    }
    if fit.voltage_model:
        data["voltage_model"] = {
            "source": "Walker et al. Section VIII: V = v_target(f) + slope(f) * P_dyn at v_target; target = mean idle voltage",
            "points_mhz_target_v_slope_v_per_w": fit.voltage_model,
        }
    return data


def plot_diagnostics(fit: WalkerFit, prefix: Path, *, group_by: str | None) -> list[Path]:
    """Residuals against fitted power, and mean held-out error per workload (PNG files)."""
    from cosim.plots import pyplot, save_figure

    plt = pyplot()

    paths = []
    fitted = fit.fitted_w
    fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    ax.scatter(fitted, fit.table.power_w - fitted, s=4, alpha=0.5)
    ax.axhline(0, color="k", lw=0.8)
    ser = fit.ols.summary()["ser_w"]
    for sign in (-2, 2):
        ax.axhline(sign * ser, color="r", lw=0.8, ls="--")
    ax.set_xlabel("fitted power [W]")
    ax.set_ylabel("residual [W]")
    ax.set_title("residuals (dashed: ±2·SER)")
    paths.append(save_figure(fig, prefix.with_name(prefix.name + "-residuals.png"), dpi=110))
    cv = fit.cv_grouped or fit.cv_rows
    if cv is not None and group_by and group_by in fit.table.groups:
        errors = pd.Series(np.abs(cv.per_row_error_pct)).groupby(fit.table.groups[group_by].to_numpy()).mean().sort_values()
        fig, ax = plt.subplots(figsize=(6, max(3, 0.12 * len(errors))), layout="constrained")
        ax.barh(errors.index.astype(str), errors.to_numpy())
        ax.set_xlabel(f"mean |held-out error| [%] ({cv.k}-fold CV{', grouped' if cv.grouped_by else ''})")
        ax.tick_params(axis="y", labelsize=6)
        paths.append(save_figure(fig, prefix.with_name(prefix.name + "-workloads.png"), dpi=110))
    return paths


def model_card(fit: WalkerFit, data: dict, plots: Sequence[Path]) -> str:
    """A Markdown summary of the fit: data, coefficients, statistics, validation, plots."""
    s = data["fit"]
    lines = [
        f"# Model card: {data['name']}",
        "",
        f"{data['component']}. Fitted by `cosim fit` from `{data['training']['data']}` ({s['n_obs']} rows), "
        f"{data['training']['freq_mhz'][0]:g}-{data['training']['freq_mhz'][1]:g} MHz, "
        f"{data['training']['voltage_v'][0]:.4f}-{data['training']['voltage_v'][1]:.4f} V.",
        "",
        "## Fit (OLS, HC3 standard errors)",
        "",
        f"R² {s['r2']:.5f} · adjusted R² {s['adj_r2']:.5f} · F {s['f_statistic']:.1f} (p {s['f_p_value']:.2g}) · SER {s['ser_w']:.5f} W · "
        f"95 % prediction interval ≈ ±{2 * s['ser_w']:.4f} W",
        "",
        "| term | coefficient | p-value | 95 % CI | VIF |",
        "|---|---|---|---|---|",
    ]
    for t in data["dynamic_terms"]:
        lines.append(
            f"| {t['name']} | {t['coefficient']:.6g} | {t['p_value']:.3g} | [{t['ci95'][0]:.4g}, {t['ci95'][1]:.4g}] | {s['vif_dynamic'].get(t['name'], float('nan')):.2f} |"
        )
    for t in data["static_terms"]:
        lines.append(f"| static {t['name']} | {t['coefficient']:.6g} | {t['p_value']:.3g} | [{t['ci95'][0]:.4g}, {t['ci95'][1]:.4g}] | |")
    lines += [
        "",
        "## Cross-validation",
        "",
        "| split | k | MAPE [%] | MSE [W²] | RMSE [W] | 95 % PI coverage |",
        "|---|---|---|---|---|---|",
    ]
    for key in ("cv_by_row", "cv_by_group"):
        cv = s.get(key)
        if cv:
            split = f"grouped by {cv['grouped_by']}" if cv["grouped_by"] else "by row"
            lines.append(
                f"| {split} | {cv['k']} | {cv['mape_pct']:.3f} | {cv['mse_w2']:.3g} | {cv['rmse_w']:.4f} | {cv['pi95_coverage'] * 100:.1f} % |"
            )
    if "voltage_model" in data:
        lines += ["", "## Voltage model", "", "| f [MHz] | target V | slope [V/W] |", "|---|---|---|"]
        lines += [f"| {f:g} | {v:.4f} | {k:.5f} |" for f, v, k in data["voltage_model"]["points_mhz_target_v_slope_v_per_w"]]
    lines += ["", "## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots]
    return "\n".join(lines) + "\n"
