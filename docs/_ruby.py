"""The Ruby page's table of priced public Ruby runs, made while the docs build by pricing them as ``cosim power`` does.

The runs live in ../shared/data/gem5 (public gem5 output, never committed); where they are absent a line says so
instead of a table, never a failed build.
"""

from __future__ import annotations

import warnings
from pathlib import Path

GEM5_RUNS = Path(__file__).resolve().parents[2] / "shared" / "data" / "gem5"
#: run folder, model, options: what the page prices (the A15 models take 2 GHz inside their extrapolation band)
RUNS = (
    ("public-old2016-arm64-fs-timingsimple-ruby-moesi", "cortex-a15-walker2017", {}),
    ("public-old2016-arm64-fs-timingsimple-ruby-moesi", "cortex-a15-gemstone2018", {}),
    ("public-old-x86-fs-timingsimple-ruby-mesi", "cortex-a15-walker2017", {"any_isa": True}),
    ("public-old-x86-fs-timingsimple-ruby-mesi", "cortex-a15-gemstone2018", {"any_isa": True}),
)


def ruby_runs_table() -> str:
    """Markdown: per run and model, the mean power per cluster [W], its interval and the flags of its rows."""
    if not GEM5_RUNS.is_dir():
        return f"*({GEM5_RUNS} is not here, so this table is left out)*\n"
    import numpy as np

    from cosim.run import open_run, price_run

    lines = ["| run | model | cluster | CPUs | clock [MHz] | mean power [W] | interval [W] | flags |", "|---|---|---|---|---|---|---|---|"]
    for folder, model, options in RUNS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, t = price_run(open_run(GEM5_RUNS / folder, models=[model]), **options)
        for cluster in dict.fromkeys(t["cluster"]):
            rows = t["cluster"] == cluster
            weights = t["duration_s"][rows]
            mean = float(np.average(t["power_w"][rows], weights=weights))
            lo = float(np.average(t["power_lo_w"][rows], weights=weights))
            hi = float(np.average(t["power_hi_w"][rows], weights=weights))
            flags = ", ".join(sorted({f for text in t["flags"][rows] for f in str(text).split(";") if f}))
            f_mhz = float(np.average(t["freq_mhz"][rows], weights=weights))
            lines.append(
                f"| {folder} | {model} | {cluster} | {int(t['n_cpus'][rows][0])} | {f_mhz:.0f} | {mean:.3f} | {lo:.3f}-{hi:.3f} | {flags} |"
            )
    return "\n".join(lines) + "\n"
