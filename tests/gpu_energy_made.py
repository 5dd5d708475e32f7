"""Made-here GPU runs with known per-name power: a kernel trace, the board's true power, and what a power sensor
with a given averaging window, lag and noise would log.  The truth is the generator's, never cosim's.

* ``phased``: the run passes through phases of 4-30 s; in each, one to three of the names are launched (or none:
  an idle phase); each launch's power above idle is its name's power times a per-phase context factor (sd 5 %), so a
  name's power changes with what runs around it.
* ``steady``: every name launched throughout, interleaved at random: one window holds the same mix as the next.
* ``locked``: names launched in a fixed sequence (``a`` then ``b``, always): their busy series move together.

``python tests/gpu_energy_made.py --table`` scores cosim's per-name energy on these logs (the table in
docs/howto/gpu-energy-per-kernel.md); seeds 0-9 chose the identifiability constants, seeds 10-29 score them.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

IDLE_W = 45.0
LIMIT_W = 300.0


@dataclass
class MadeRun:
    kernels: pd.DataFrame  # kernel, launch, start_s, end_s [s] (the trace's clock = the log's here)
    samples: pd.DataFrame  # time_s [s], power_w [W]
    truth_j: dict[str, float]  # per name: the board's energy while it ran [J]
    busy_s: dict[str, float]
    run_j: float  # the board's true energy between the first and last reading's window centres [J]
    limit_w: float


def _launches(rng, mix: str, duration_s: float, names: list[str], mean_s: dict[str, float]) -> list[tuple[str, float, float, int]]:
    """(name, start, duration, phase) of each launch, one after another (no two at once)."""
    out = []
    t, phase = 0.5, 0
    while t < duration_s - 0.5:
        length = rng.uniform(4, 30) if mix == "phased" else duration_s
        end = min(t + length, duration_s - 0.5)
        if mix == "phased":
            k = rng.integers(0 if out else 1, 4)  # 0: an idle phase (never the first)
            active = list(rng.choice(names, size=k, replace=False)) if k else []
        else:
            active = names
        while active and t < end:
            if mix == "locked":
                seq = active
            else:
                seq = [active[rng.integers(len(active))]]
            for name in seq:
                locked = mix == "locked"  # the same duration and gap every time: shares in fixed proportion
                d = mean_s[name] if locked else float(rng.lognormal(math.log(mean_s[name]), 0.3))
                out.append((str(name), t, d, phase))
                t += d + (0.15 * mean_s[name] if locked else float(rng.exponential(0.15 * mean_s[name])))
            if rng.random() < 0.02:  # now and then a pause
                t += float(rng.uniform(0.05, 0.5))
        t, phase = max(t, end), phase + 1
    return out


def made_run(
    *,
    seed: int,
    mix: str = "phased",
    duration_s: float = 300.0,
    period_s: float = 1.0,
    window_s: float = 1.0,
    lag_s: float = 0.0,
    names: int = 6,
    noise_w: float = 1.5,
    kernel_s: tuple[float, float] = (0.002, 0.03),
) -> MadeRun:
    """One run (module docstring): ``names`` kernel names with powers above idle drawn from 20-200 W, launches of
    ``kernel_s`` mean durations [s], readings every ``period_s`` [s], each the mean over ``window_s`` [s] ending
    ``lag_s`` [s] before its time, with AR(1) noise (sd ``noise_w`` [W], lag-1 correlation 0.8) rounded to 0.01 W."""
    rng = np.random.default_rng(seed)
    labels = [f"k{i}_{'gemm' if i % 2 else 'elementwise'}" for i in range(names)]
    power = {n: float(rng.uniform(20, 200)) for n in labels}
    mean_s = {n: float(math.exp(rng.uniform(math.log(kernel_s[0]), math.log(kernel_s[1])))) for n in labels}
    launches = _launches(rng, mix, duration_s, labels, mean_s)
    context = rng.normal(1.0, 0.05, size=max(p for *_, p in launches) + 1) if launches else np.ones(1)
    name = np.array([n for n, *_ in launches])
    start = np.array([s for _, s, _, _ in launches])
    dur = np.array([d for _, _, d, _ in launches])
    watts = np.array([power[n] * context[ph] for n, _, _, ph in launches])
    # the board's cumulative energy [J] at every launch edge: idle all along, plus each launch's power while it runs
    edges = np.empty(2 * len(start))
    edges[0::2], edges[1::2] = start, start + dur
    dyn = np.empty(2 * len(start))
    before = np.r_[0.0, np.cumsum(watts * dur)[:-1]]
    dyn[0::2], dyn[1::2] = before, before + watts * dur

    def energy_at(x):
        return IDLE_W * x + np.interp(x, edges, dyn)

    def power_at(x):
        i = np.searchsorted(edges, x, side="right")
        return IDLE_W + np.where(i % 2 == 1, watts[np.minimum((i - 1) // 2, len(watts) - 1)], 0.0)

    t = np.arange(period_s, duration_s + 1e-9, period_s)
    if window_s > 0:
        true = (energy_at(t - lag_s) - energy_at(t - lag_s - window_s)) / window_s
    else:
        true = power_at(t - lag_s)
    ar = np.zeros(len(t))
    e = rng.normal(0, noise_w * math.sqrt(1 - 0.8**2), size=len(t))
    for i in range(1, len(t)):
        ar[i] = 0.8 * ar[i - 1] + e[i]
    samples = pd.DataFrame({"time_s": t, "power_w": np.round(true + ar, 2)})
    kernels = pd.DataFrame({"kernel": name, "launch": np.arange(len(name)), "start_s": start, "end_s": start + dur})
    truth = {n: float(((watts + IDLE_W) * dur)[name == n].sum()) for n in labels if (name == n).any()}
    busy = {n: float(dur[name == n].sum()) for n in labels if (name == n).any()}
    # what the readings' integral measures: the energy between their first and last window's centres
    centre = lag_s + window_s / 2
    return MadeRun(kernels, samples, truth, busy, float(energy_at(t[-1] - centre) - energy_at(t[0] - centre)), LIMIT_W)


def score(run: MadeRun, *, window_s: float | None = None, replicates: int = 200) -> pd.DataFrame:
    """cosim's per-name energy beside the truth: one row per name holding >= 5 % of the busy time."""
    from cosim.timeline.measured_energy import sample_period_s
    from cosim.timeline.name_energy import estimate

    period = sample_period_s(run.samples["time_s"].to_numpy())
    est = estimate(
        run.kernels,
        run.samples,
        offset_s=0.0,
        period_s=period,
        lags_s=(-0.5, 1.0),
        window_s=window_s,
        doc_window_s=1.0,
        power_limit_w=run.limit_w,
        replicates=replicates,
    )
    table = est.table.set_index("kernel")
    total = sum(run.busy_s.values())
    rows = []
    for name, truth in run.truth_j.items():
        if run.busy_s[name] < 0.05 * total:
            continue
        r = table.loc[name]
        rows.append(
            {
                "kernel": name,
                "busy_share": run.busy_s[name] / total,
                "truth_j": truth,
                "energy_j": r["energy_j"],
                "error": r["energy_j"] / truth - 1,
                "covered": bool(r["energy_j_lo"] <= truth <= r["energy_j_hi"]),
                "flagged": r["flags"] == "not_identifiable",
            }
        )
    out = pd.DataFrame(rows)
    out.attrs.update(
        window_s=est.search.window_s,
        lag_s=est.search.lag_s,
        kernel_j=est.kernel_j,
        kernel_lo_j=est.kernel_lo_j,
        kernel_hi_j=est.kernel_hi_j,
        kernel_truth_j=sum(run.truth_j.values()),
        run_j=est.run_j,
        run_truth_j=run.run_j,
    )
    return out


def table(seeds: range, *, progress: bool = True) -> list[dict]:
    """The made-here scorecard, one row per setting: names holding >= 5 % of the busy time over all seeds, how many
    were flagged (and why, in short), how many of the others lie within 10 % of the truth and inside their interval,
    how often the pooled kernel energy's interval holds the truth, the run energy's largest error, the window found."""
    import sys
    import time

    rows = []
    for mix in ("phased", "steady", "locked"):
        for duration in (20.0, 60.0, 300.0):
            for period in (0.1, 1.0):
                start = time.perf_counter()
                scored = []
                pooled, windows, lags, run_err = 0, [], [], []
                for seed in seeds:
                    run = made_run(seed=seed, mix=mix, duration_s=duration, period_s=period, window_s=1.0, lag_s=0.0)
                    s = score(run, replicates=100)
                    scored.append(s)
                    pooled += int(s.attrs["kernel_lo_j"] <= s.attrs["kernel_truth_j"] <= s.attrs["kernel_hi_j"])
                    windows.append(s.attrs["window_s"])
                    lags.append(s.attrs["lag_s"])
                    run_err.append(abs(s.attrs["run_j"] / s.attrs["run_truth_j"] - 1))
                d = pd.concat(scored)
                numbers = d[~d["flagged"]]
                rows.append(
                    {
                        "mix": mix,
                        "duration_s": duration,
                        "period_s": period,
                        "runs": len(seeds),
                        "names": len(d),
                        "flagged": int(d["flagged"].sum()),
                        "with_number": len(numbers),
                        "within_10pct": int((numbers["error"].abs() <= 0.10).sum()),
                        "covered": int(numbers["covered"].sum()),
                        "median_abs_error_pct": round(100 * float(numbers["error"].abs().median()), 2) if len(numbers) else None,
                        "pooled_covered": pooled,
                        "run_energy_max_error_pct": round(100 * max(run_err), 3),
                        "window_found_s": [
                            round(float(np.min(windows)), 3),
                            round(float(np.median(windows)), 3),
                            round(float(np.max(windows)), 3),
                        ],
                        "lag_found_s": [round(float(np.min(lags)), 3), round(float(np.max(lags)), 3)],
                    }
                )
                if progress:
                    print(
                        f"gpu_energy_made: {mix} {duration:g} s every {period:g} s: {time.perf_counter() - start:.1f} s",
                        file=sys.stderr,
                        flush=True,
                    )
    return rows


def _share(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f} %)" if n else "-"


def markdown(rows: list[dict]) -> str:
    """The scorecard as a Markdown table."""
    lines = [
        "| mix | length [s] | reading every [s] | names >= 5 % busy (runs) | flagged | within 10 % | in their 90 % interval | "
        "median error | pooled kernel energy in its interval | run energy's largest error | window found, min/median/max [s] (true 1) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        n = r["with_number"]
        med = "-" if r["median_abs_error_pct"] is None else f"{r['median_abs_error_pct']:.1f} %"
        w = r["window_found_s"]
        lines.append(
            f"| {r['mix']} | {r['duration_s']:g} | {r['period_s']:g} | {r['names']} ({r['runs']}) | {r['flagged']} | "
            f"{_share(r['within_10pct'], n)} | {_share(r['covered'], n)} | {med} | {r['pooled_covered']}/{r['runs']} | "
            f"{r['run_energy_max_error_pct']:.2f} % | {w[0]:g}/{w[1]:g}/{w[2]:g} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    import json
    from pathlib import Path

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--table", action="store_true")
    p.add_argument("--seeds", default="10-29", help="first-last seed scored (default 10-29; 0-9 chose the constants)")
    p.add_argument("--write", action="store_true", help="write docs/howto/gpu-energy-made.json")
    args = p.parse_args()
    a, b = (int(x) for x in args.seeds.split("-"))
    rows = table(range(a, b + 1))
    print(markdown(rows))
    if args.write:
        out = Path(__file__).resolve().parents[1] / "docs" / "howto" / "gpu-energy-made.json"
        out.write_text(
            json.dumps({"command": f"python tests/gpu_energy_made.py --table --seeds {args.seeds} --write", "rows": rows}, indent=1) + "\n"
        )


if __name__ == "__main__":
    main()
