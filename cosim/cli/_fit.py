"""``cosim fit``: measured table -> model file, model card and plots."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import numpy as np

from cosim.errors import CosimError
from cosim.fit.design import Term
from cosim.fit.select import correlation_clusters, stage1, stage2
from cosim.fit.walker_fit import fit_table, fit_walker, model_card, model_file, plot_diagnostics
from cosim.output import write_atomic


def _write(path: Path, text: str) -> None:
    path.write_text(text)


def _events(text: str) -> list[Term]:
    return [Term.parse(part) for part in text.split(",") if part.strip()]


def run_fit(args: argparse.Namespace) -> int:
    import time

    from cosim.cli._args import _pairs
    from cosim.readers.armpm import read_armpm
    from cosim.readers.measured import read_measured

    if bool(args.events) == bool(args.select):
        raise CosimError("give either --events LIST or --select N")
    if args.split and args.format != "armpm":
        raise CosimError(f"--split {args.split}: an ARMPM split file names ARMPM's programs; give it with --format armpm")
    terms = _events(args.events) if args.events else []
    needed = sorted({e for t in terms for e in t.events})
    if args.format == "armpm":
        measured = read_armpm(args.measured, cores=args.cores)
    else:
        wanted = needed or [e.strip().lower() for e in (args.candidates or "").split(",") if e.strip()]
        if not wanted:
            raise CosimError("--select on a table needs --candidates LIST (an ARMPM log names its events itself)")
        measured = read_measured(
            args.measured,
            events=wanted,
            label=args.label,
            freq_col=args.freq_col,
            voltage_col=args.voltage_col,
            event_cols=_pairs(args.event_col, "--event-col"),
        )
    groups = [c for c in (args.group_by,) if c]
    workload_col = args.group_by or ("Workload Name" if "Workload Name" in measured.table.columns else None)
    if args.idle and workload_col and workload_col not in groups:
        groups.append(workload_col)
    if args.split and "Benchmark" not in groups:
        groups.append("Benchmark")  # the split names programs
    table = fit_table(measured, power_col=args.power_col, group_cols=groups, source=str(args.measured))
    if args.format == "armpm":
        table.static_points = "clock"  # ARMPM's sensed voltage moves around its clocks' only by load sag
    held_out = None
    if args.split:
        table, held_out = split_rows(table, measured.table["Benchmark"].astype(str).to_numpy(), args.split)
    _check_folds(args, table)
    started = time.perf_counter()

    if args.select:
        if args.candidates:
            named = [e.strip().lower() for e in args.candidates.split(",") if e.strip()]
        elif args.format == "armpm":
            named = gem5_countable(table)
            print(f"candidates: the events the board logged that gem5 counts ({', '.join(named)}); gem5 mappings in cosim/counters/maps")
        else:
            named = list(table.rates)
        candidates = [e for e in named if np.ptp(table.rates[e]) > 0]  # a constant event carries nothing
        selection = stage2(table, stage1(table, candidates, n_events=args.select))
        terms = selection.terms
        print(f"stage 1 picked {', '.join(selection.events)} (R^2 after each: {', '.join(f'{r:.4f}' for r in selection.r2_steps)})")
        print("  VIF: " + ", ".join(f"{e} {v:.2f}" for e, v in selection.vif.items()))
        if selection.transforms and selection.terms_vif is not None:
            print(
                f"stage 2: {'; '.join(selection.transforms)}; VIF now " + ", ".join(f"{e} {v:.2f}" for e, v in selection.terms_vif.items())
            )
        clusters = correlation_clusters(table, candidates)
        print("  correlation clusters: " + "; ".join(f"{c}: {', '.join(g['event'])}" for c, g in clusters.groupby("cluster")))

    idle = None
    if args.idle:
        if workload_col is None:
            raise CosimError("--idle needs --group-by naming the workload column")
        idle = (table.groups[workload_col].astype(str) == args.idle).to_numpy()
        if not idle.any():
            raise CosimError(f"no row has {workload_col} == '{args.idle}'")
    fit = fit_walker(table, terms, k=args.folds, group_by=args.group_by, idle=idle)
    fit_time_s = time.perf_counter() - started
    data = model_file(
        fit, name=args.name, component=args.component, cores_per_cluster=args.cores, source_note=str(args.measured), isa=args.isa
    )
    data["fit"]["fit_time_s"] = round(fit_time_s, 2)
    data["source"]["command"] = shlex.join(["cosim", *sys.argv[1:]]) if sys.argv[1:2] == ["fit"] else "cosim fit (from Python)"
    if args.split:
        data["training"]["programs"] = sorted(set(table.groups["Benchmark"].astype(str)))
        data["training"]["split"] = f"training column of {args.split}; its test column's programs were never used to fit or choose"
        if held_out is not None and len(held_out):
            data["test_split"] = score_held_out(fit, held_out)
    if args.select and args.format == "armpm" and not args.candidates:
        data["fit"]["left_out_events"] = cost_of_left_out(table, terms, args, group_by=args.group_by)
    write_atomic(args.output, lambda tmp: _write(tmp, json.dumps(data, indent=1) + "\n"))
    plots = plot_diagnostics(fit, args.output.with_suffix(""), group_by=args.group_by)
    card = args.output.with_suffix(".md")
    write_atomic(card, lambda tmp: _write(tmp, model_card(fit, data, plots)))

    s = data["fit"]
    print(f"{args.measured}: {s['n_obs']} rows -> {args.output} (model card {card})")
    print(f"  R^2 {s['r2']:.5f}  adj R^2 {s['adj_r2']:.5f}  F {s['f_statistic']:.1f}  SER {s['ser_w']:.5f} W")
    for key in ("cv_by_row", "cv_by_group"):
        cv = s[key]
        if cv:
            split = f"grouped by {cv['grouped_by']}" if cv["grouped_by"] else "by row"
            print(
                f"  {cv['k']}-fold CV {split}: MAPE {cv['mape_pct']:.2f} %  RMSE {cv['rmse_w']:.4f} W  "
                f"95 % PI coverage {cv['pi95_coverage'] * 100:.1f} %"
            )
    if "test_split" in data:
        t = data["test_split"]
        per = ", ".join(f"{c} MHz {v['mape_pct']:.2f} % (bias {v['bias_pct']:+.2f} %)" for c, v in t["per_clock"].items())
        print(
            f"  test split ({len(t['programs'])} programs, {t['rows']} rows, the board's own counters, never used to fit or "
            f"choose): MAPE {t['mape_pct']:.2f} %, bias {t['bias_pct']:+.2f} % ({per})"
        )
    if "left_out_events" in data["fit"]:
        print(f"  {data['fit']['left_out_events']['note']}")
    print(f"  fit time {fit_time_s:.1f} s (selection, fit and cross-validation)")
    return 0


def split_rows(table, programs: np.ndarray, split_path: Path):
    """The rows of the split's training programs, and those of its test programs (``None`` when it names none)."""
    from cosim.readers.armpm import read_split

    split = read_split(split_path)
    role = np.array([split.get(p, "") for p in programs])
    unnamed = sorted(set(programs[role == ""]))
    if unnamed:
        print(f"  {split_path} names neither as training nor test program: {', '.join(unnamed)} ({int((role == '').sum())} rows left out)")
    train = np.flatnonzero(role == "train")
    if not len(train):
        raise CosimError(f"{split_path}: none of its training programs is in the log; give the split of this log's programs")
    test = np.flatnonzero(role == "test")
    return table.subset(train), table.subset(test) if len(test) else None


def gem5_countable(table) -> list[str]:
    """The table's events that cosim's gem5 counter maps count (in both stat-name generations), cycle counter first."""
    from cosim.counters.pmc import load_event_map

    mapped = load_event_map("v20.1+").sources.keys() & load_event_map("pre-v20.1").sources.keys()
    return sorted((e for e in table.rates if e in mapped), key=lambda e: (e != "0x11", e))


def score_held_out(fit, held_out) -> dict:
    """The fitted model on the held-out programs' rows (the board's own counters and voltage): MAPE and bias [%]."""
    from cosim.fit.design import walker_design

    error = (fit.ols.predict(walker_design(held_out, fit.terms, fit.static)) - held_out.power_w) / held_out.power_w * 100
    clocks = held_out.freq_mhz
    return {
        "programs": sorted(set(held_out.groups["Benchmark"].astype(str))),
        "rows": len(held_out),
        "mape_pct": round(float(np.mean(np.abs(error))), 4),
        "bias_pct": round(float(np.mean(error)), 4),
        "per_clock": {
            f"{c:g}": {
                "mape_pct": round(float(np.mean(np.abs(error[clocks == c]))), 4),
                "bias_pct": round(float(np.mean(error[clocks == c])), 4),
            }
            for c in np.unique(clocks)
        },
    }


def cost_of_left_out(table, terms: list[Term], args: argparse.Namespace, *, group_by: str | None) -> dict:
    """The same selection over every event the board logged: where its best set holds an event gem5 cannot count,
    what leaving that event out costs in cross-validated error [percentage points]."""
    from cosim.fit.validate import cross_validate

    everything = [e for e in table.rates if np.ptp(table.rates[e]) > 0]
    best = stage2(table, stage1(table, everything, n_events=args.select)).terms
    countable = set(gem5_countable(table))
    lacking = sorted({e for t in best for e in t.events} - countable)
    ours = cross_validate(table, terms, k=args.folds, group_by=group_by).mape_pct
    if not lacking:
        return {
            "best_over_every_event": [t.name for t in best],
            "note": "every event of the best set over all the board's events is one gem5 counts",
        }
    theirs = cross_validate(table, best, k=args.folds, group_by=group_by).mape_pct
    return {
        "best_over_every_event": [t.name for t in best],
        "gem5_cannot_count": lacking,
        "cv_mape_pct_best": round(theirs, 4),
        "cv_mape_pct_gem5_countable": round(ours, 4),
        "note": (
            f"over every event the board logged, selection picks {', '.join(t.name for t in best)}; gem5 cannot count "
            f"{', '.join(lacking)}: leaving it out costs {ours - theirs:+.2f} points of {args.folds}-fold CV MAPE "
            f"({theirs:.2f} % -> {ours:.2f} %{', grouped by ' + group_by if group_by else ''})"
        ),
    }


def _check_folds(args: argparse.Namespace, table) -> None:
    """Before any selection or fitting: cross-validation needs at least as many rows (groups) as folds."""
    if args.folds < 2:
        raise CosimError(f"--folds {args.folds}: k-fold cross-validation needs k >= 2")
    if args.group_by:
        n = table.groups[args.group_by].nunique()
        if args.folds > n:
            raise CosimError(
                f"--folds {args.folds} but --group-by '{args.group_by}' has only {n} groups; "
                f"use --folds {n} or fewer (each fold holds out whole groups)"
            )
    elif args.folds > len(table):
        raise CosimError(f"--folds {args.folds} but only {len(table)} rows; use fewer folds")


def run_fit_rail(args: argparse.Namespace) -> int:
    from cosim.fit.rail import RailSpec, fit_rail
    from cosim.readers._files import read_text
    from cosim.readers.measured import read_table

    try:
        spec = json.loads(read_text(args.spec, missing_hint="give the rail spec JSON"))
        rails = [RailSpec(**r) for r in spec["rails"]]
    except json.JSONDecodeError as err:
        raise CosimError(f"{args.spec}:{err.lineno}: not valid JSON ({err.msg})") from None
    except RecursionError:
        raise CosimError(f"{args.spec}: JSON nested deeper than any rail spec is; give the file as written") from None
    except (KeyError, TypeError) as err:
        raise CosimError(f"{args.spec}: rail spec needs 'rails': [{{name, voltage_col, predictors, ...}}] ({err})") from None
    table = read_table(args.measured)
    fit = fit_rail(table, rails, power_col=spec.get("power_col"))
    out: dict[str, Any] = {
        "schema": "cosim-rail-fit/1",
        "data": str(args.measured),
        "rails": [r.__dict__ | {"predictors": list(r.predictors), "offsets_mhz": list(r.offsets_mhz)} for r in rails],
        "regressions": {},
    }
    for name, ols in fit.fits.items():
        coef = ols.table()
        out["regressions"][name] = {
            "coefficients": {
                term: {
                    "value": float(row["coefficient"]),
                    "p_value": float(row["p_value"]),
                    "ci95": [float(row["ci95_lo"]), float(row["ci95_hi"])],
                }
                for term, row in coef.iterrows()
            },
            "units": "rho*V^2 terms: C per occurrence [coulomb/volt = W/(V^2/s)]; leak: current [A]; offset and base: [W]",
            "fit": ols.summary(),
        }
        s = ols.summary()
        print(
            f"{name}: R^2 {s['r2']:.5f}  SER {s['ser_w']:.4f} W  "
            + "  ".join(f"{t} {v['value']:.4g}" for t, v in out["regressions"][name]["coefficients"].items())
        )
    write_atomic(args.output, lambda tmp: _write(tmp, json.dumps(out, indent=1) + "\n"))
    print(f"-> {args.output}")
    return 0
