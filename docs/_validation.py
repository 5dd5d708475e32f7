"""The validation page's table, made while the docs build from ``explanation/validation.toml``.

Rows marked ``live`` are computed here from the bundled demo run and the measured board data, so the page
says what the code gives today; the benchmark rows carry the ranges last measured by the named benchmark.
"""

from __future__ import annotations

import tomllib
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROWS = DOCS / "explanation" / "validation.toml"
POWMON = DOCS.parent.parent / "shared" / "data" / "gemstone" / "sample-input-data" / "asrtpm-A15-powmon-data.csv"


def validation_table() -> str:
    """The Markdown table of every row, live values computed now."""
    data = tomllib.loads(ROWS.read_text())
    live = {"apply_a15": _apply_a15, "demo_whatif": _demo_whatif}
    lines = ["| what | measured | target |", "|---|---|---|"]
    for row in data["row"]:
        measured = live[row["live"]]() if "live" in row else row["measured"]
        lines.append(f"| {row['what']} | {measured or row['measured']} | {row['target']} |")
    lines += ["", f"Speeds are from this project's 2-core machine, which varies by {data['variance']} between runs."]
    return "\n".join(lines) + "\n"


def _apply_a15() -> str:
    """MAPE of the shipped TCAD A15 model on its measured Powmon rows ("" when ../shared is not here)."""
    if not POWMON.exists():
        return ""
    from cosim.fit.apply import apply_model, mape_pct
    from cosim.models.modelfile import load_model
    from cosim.readers.measured import read_measured

    model = load_model("cortex-a15-walker2017")
    measured = read_measured(POWMON, events=model.events, label="A15")
    pred = apply_model(model, measured, voltage="measured", keep_implausible=False, source=str(POWMON))
    actual = measured.table["Power A15"].to_numpy(dtype=float)
    return f"MAPE {mape_pct(pred['power_w'].to_numpy(), actual):.2f} % (computed while these pages build)"


def _demo_whatif() -> str:
    """The what-if of the bundled demo run over its models' V-f tables, and the choice under a 1 W cap."""
    from cosim.cli.demo import find_demo_run
    from cosim.dse.choose import choose, pareto_front
    from cosim.dse.whatif import dvfs_grid, recorded_run, whatif
    from cosim.models.modelfile import load_model
    from cosim.readers.gem5_config import read_config
    from cosim.readers.gem5_stats import read_stats
    from cosim.timeline.cpu import ClusterSpec

    run = find_demo_run()
    assert run is not None, "the bundled gem5 run in traces/ is missing"
    specs = [ClusterSpec(name=name, path=path, model=load_model(model)) for name, path, model in run.clusters]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = read_stats(run.stats)
        recorded = recorded_run(stats, read_config(run.config), specs)
        table = whatif(recorded, dvfs_grid(recorded, {}))
    pareto = pareto_front(table)
    choice = choose(table, power_cap_w=1.0)
    names = " + ".join(f"{s.name} ({s.model.name}, {len(s.model.vf_points)} points)" for s in specs)
    text = f"{len(specs)} clusters, {names}: {len(table)} configurations of a {stats['duration_s'].sum() * 1e3:.2f} ms run, {int(pareto.sum())} on the Pareto front"
    if choice.row is None:
        return text + f"; under a 1 W cap: {choice.why}"
    r = choice.row
    clocks = ", ".join(f"{s.name} {r[f'{s.name}_freq_mhz']:g} MHz" for s in specs)
    return text + f"; under a 1 W peak cap: {clocks}, {r['runtime_s'] * 1e3:.3f} ms, {r['energy_j'] * 1e3:.3f} mJ, {r['peak_power_w']:.3f} W peak"
