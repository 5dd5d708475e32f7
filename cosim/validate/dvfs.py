"""DVFS decisions against silicon: what a DVFS choice reads from the what-if, against what the board measured.

For each program, from its gem5 run at one clock f1, the what-if (:func:`cosim.dse.whatif.whatif`, as ``cosim whatif``
prices it) gives the run's energy at every clock the board ran; with the same instructions at every clock, the energy
per instruction at f2 over that at f1 is its energy ratio E(f2) / E(f1).  The board's ratio is its measured energy per
instruction at f2 over f1 (power over its instruction rate, :mod:`cosim.validate.compare`).  The ratio is what a
DVFS decision uses (which clock costs less energy per instruction), so its error is the decision's error:
``ratio_err_pct`` = 100 * (what-if ratio / board ratio - 1), one row per program, model and clock pair, split into
the what-if's own part (against gem5's run at f2, priced as ``cosim power`` prices it: ``whatif_vs_gem5_pct``) and
gem5 + the model's (that run against the board: ``gem5_vs_board_pct``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np


def dvfs_rows(rows: list[dict], runs: dict[tuple[str, float], Path]) -> list[dict]:
    """One row per (model, program, f1 -> f2), f1 != f2, from the validation's rows (their ``epi_board_nj``) and the
    gem5 run folder of each (program, clock) (``runs``).  A run the what-if refuses gets its reason in ``not_priced``."""
    out = []
    by_model: dict[str, dict[tuple[str, float], dict]] = {}
    for r in rows:
        by_model.setdefault(r["model"], {})[(r["program"], r["clock_mhz"])] = r
    for model, found in by_model.items():
        for (program, f1), row in sorted(found.items()):
            others = sorted(c for p, c in found if p == program and c != f1)
            if not others or (program, f1) not in runs:
                continue
            clocks = [f1, *others]
            energy, why = _whatif_energy_j(runs[(program, f1)], model, clocks)
            for f2 in others:
                board = found[(program, f2)]["epi_board_nj"] / row["epi_board_nj"]
                sim = energy[f2] / energy[f1] if energy else float("nan")
                gem5 = found[(program, f2)]["epi_gem5_nj"] / row["epi_gem5_nj"]  # gem5's own run at f2 over f1, priced
                out.append(
                    {
                        "model": model,
                        "program": program,
                        "split": row.get("split", ""),
                        "from_mhz": f1,
                        "to_mhz": f2,
                        "ratio_board": board,
                        "ratio_whatif": sim,
                        "ratio_gem5": gem5,
                        "ratio_err_pct": 100 * (sim / board - 1) if math.isfinite(sim) and board > 0 else float("nan"),
                        # the error's two parts: the what-if against gem5's own run at f2, and gem5 + the model against the board
                        "whatif_vs_gem5_pct": 100 * (sim / gem5 - 1) if math.isfinite(sim) and gem5 > 0 else float("nan"),
                        "gem5_vs_board_pct": 100 * (gem5 / board - 1) if gem5 > 0 and board > 0 else float("nan"),
                        "gem5_run": str(runs[(program, f1)]),
                        "not_priced": why,
                    }
                )
    return out


def _whatif_energy_j(folder: Path, model: str, clocks: list[float]) -> tuple[dict[float, float], str]:
    """The what-if's energy [J] of the run in ``folder`` at each clock [MHz] (every cluster at it), or the refusal."""
    import pandas as pd

    from cosim.dse.whatif import recorded_run, whatif, whatif_stats
    from cosim.errors import CosimError
    from cosim.readers.gem5_stats import read_stats
    from cosim.run import open_run

    try:
        run = open_run(folder, models=(model,))
        stats = read_stats(run.stats_path, stats=whatif_stats(run.config, list(run.clusters)))
        recorded = recorded_run(stats, run.config, list(run.clusters))
        grid = pd.DataFrame({f"{c.name}_freq_mhz": clocks for c in run.clusters})
        table = whatif(recorded, grid)
    except CosimError as err:
        return {}, str(err)
    return dict(zip(clocks, table["energy_j"].to_numpy(dtype=float))), ""


def dvfs_summary(rows: list[dict], model: str) -> list[dict]:
    """Per clock pair and split: rows, mean board and what-if ratio, mean |error| and the largest [%]."""
    out = []
    chosen = [r for r in rows if r["model"] == model and math.isfinite(r["ratio_err_pct"])]
    for key in sorted({(r["split"], r["from_mhz"], r["to_mhz"]) for r in chosen}):
        part = [r for r in chosen if (r["split"], r["from_mhz"], r["to_mhz"]) == key]
        err = np.array([r["ratio_err_pct"] for r in part])
        out.append(
            {
                "split": key[0] or "unsplit",
                "from_mhz": key[1],
                "to_mhz": key[2],
                "rows": len(part),
                "ratio_board": float(np.mean([r["ratio_board"] for r in part])),
                "ratio_whatif": float(np.mean([r["ratio_whatif"] for r in part])),
                "mean_abs_err_pct": float(np.mean(np.abs(err))),
                "bias_pct": float(np.mean(err)),
                "max_abs_err_pct": float(np.max(np.abs(err))),
                "ratio_of_means_err_pct": 100
                * (np.mean([r["ratio_whatif"] for r in part]) / np.mean([r["ratio_board"] for r in part]) - 1),
                "whatif_vs_gem5_abs_pct": float(np.nanmean([abs(r["whatif_vs_gem5_pct"]) for r in part])),
                "gem5_vs_board_abs_pct": float(np.nanmean([abs(r["gem5_vs_board_pct"]) for r in part])),
            }
        )
    return out
