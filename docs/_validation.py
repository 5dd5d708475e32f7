"""The validation page's table, made while the docs build from ``explanation/validation.toml``.

Rows marked ``live`` are computed here from the bundled demo run, the recorded what-if suite and the measured
board data, so the page says what the code gives today.  Rows marked ``bench`` show what the benchmarks in ``tests/bench/`` measured,
from ``tests/bench/measured.json`` (their last three runs, as a range; written by a run with
``--benchmark-enable``): no benchmark figure is typed by hand.
"""

from __future__ import annotations

import json
import os
import string
import tomllib
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROWS = DOCS / "explanation" / "validation.toml"
MEASURED = DOCS.parent / "tests" / "bench" / "measured.json"
POWMON = DOCS.parent.parent / "shared" / "data" / "gemstone" / "sample-input-data" / "asrtpm-A15-powmon-data.csv"


def validation_table() -> str:
    """The Markdown table of every row, live values computed now."""
    data = tomllib.loads(ROWS.read_text())
    live = {
        "apply_a15": _apply_a15,
        "demo_whatif": _demo_whatif,
        "whatif_suite_1c": lambda: _whatif_suite(("1c-epoch", "1c-one"), together=True),
        "whatif_suite_2c": lambda: _whatif_suite(("2c-epoch", "2c-one"), together=False),
        "whatif_suite_se": lambda: _whatif_suite(("se-one",), together=True),
        "whatif_suite_se_minor": lambda: _whatif_suite(("se-minor",), together=True),
    }
    lines = ["| what | measured | target |", "|---|---|---|"]
    for row in data["row"]:
        if "live" in row:
            measured = live[row["live"]]() or row["measured"]
        elif "bench" in row:
            measured = bench_value(row)
        else:
            measured = row["measured"]
        lines.append(f"| {row['what']} | {measured} | {row['target']} |")
    lines += ["", 'Speed and memory, from the benchmarks in `tests/bench/` (README\'s "Measured" table shows the same rows):', ""]
    lines += readme_table(data)
    lines += ["", f"Speeds are from this project's 2-core machine, which varies by {data['variance']} between runs."]
    return "\n".join(lines) + "\n"


def readme_table(data: dict | None = None, measured: dict | None = None) -> list[str]:
    """The benchmarks' table, as README's "Measured" section must show it: every ``[[bench]]`` row, in order."""
    data = data if data is not None else tomllib.loads(ROWS.read_text())
    lines = ["| benchmark (file) | measured | target |", "|---|---|---|"]
    return lines + [f"| {b['readme']} | {bench_value(b, measured)} | {b['target']} |" for b in data["bench"]]


def bench_value(row: dict, measured: dict | None = None) -> str:
    """``row['show']`` filled from the benchmark runs recorded under ``row['bench']``: each field as the range
    of its recorded runs ("4.19–4.26"), or one value when they agree."""
    if measured is None:
        measured = json.loads(MEASURED.read_text()) if MEASURED.exists() else {}
    runs = measured.get(row["bench"], [])
    fields = [(name, spec) for _, name, spec, _ in string.Formatter().parse(row["show"]) if name]
    runs = [r for r in runs if all(r.get(name) is not None for name, _ in fields)]
    if not runs:
        return f"not measured yet (`{row['bench']}`: `pytest tests/bench --benchmark-enable -n 0`)"
    text = row["show"]
    for name, spec in fields:
        values = [format(r[name], spec) for r in runs]
        low, high = min(values, key=float), max(values, key=float)
        text = text.replace(f"{{{name}:{spec}}}" if spec else f"{{{name}}}", low if low == high else f"{low}–{high}", 1)
    return text


def _whatif_suite(setups: tuple[str, ...], *, together: bool) -> str:
    """The what-if against gem5 on the recorded workload suite (tests/data/whatif_suite), every ordered pair of
    ``setups``: as one group (``together``) or side by side ("41 / 43")."""
    import sys

    import pandas as pd

    tests = str(DOCS.parent / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    from whatif_pairs import suite_rows, summary
    from whatif_suite import RUNS, TEST

    if os.environ.get("COSIM_WHATIF_SUITE_CSV"):  # the test session's pairs (tests/test_house.py), not computed twice
        every = pd.read_csv(os.environ["COSIM_WHATIF_SUITE_CSV"])
        parts = [every[every["setup"] == s].reset_index(drop=True) for s in setups]
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parts = [suite_rows(RUNS, s) for s in setups]
    groups = [pd.concat(parts, ignore_index=True)] if together else parts
    heads = [summary(g) for g in groups]
    # the interval is scored on the programs its constants were not set on (tests/whatif_suite.py TEST)
    tests = [summary(g[g["program"].isin(TEST)]) for g in groups]

    def each(key: str, scale: float = 1.0, digits: int = 1) -> str:
        return " / ".join(f"{h[key] * scale:.{digits}f}" for h in heads)

    def worst(key: str) -> str:
        return " / ".join(h[f"worst_{key}"].split(" %")[0] for h in heads)

    def test(key: str, scale: float = 1.0, digits: int = 1) -> str:
        return " / ".join(f"{h[key] * scale:.{digits}f}" for h in tests)

    return (
        f"runtime within 5 % on {each('runtime_s_within_5', digits=0)} (worst {worst('runtime_s')} %), "
        f"energy on {each('energy_j_within_5', digits=0)} (worst {worst('energy_j')} %); interval on the test programs "
        f"({test('pairs', digits=0)} pairs): coverage {test('runtime_s_coverage', 100)} % and {test('energy_j_coverage', 100)} %, "
        f"mean half-width {test('runtime_s_mean_width')} % and {test('energy_j_mean_width')} % (computed while these pages build)"
    )


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
    from cosim.cli.demo import find_demo_run, open_demo
    from cosim.dse.choose import choose, pareto_front
    from cosim.dse.whatif import dvfs_grid, recorded_run, whatif
    from cosim.readers.gem5_stats import read_stats

    demo = find_demo_run()
    assert demo is not None, "the bundled gem5 run in traces/ is missing"
    run = open_demo(demo)
    specs = list(run.clusters)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = read_stats(run.stats_path)
        recorded = recorded_run(stats, run.config, specs)
        table = whatif(recorded, dvfs_grid(recorded, {}))
    pareto = pareto_front(table)
    choice = choose(table, power_cap_w=1.0)
    names = " + ".join(f"{s.name} ({s.model.name}, {len(s.model.vf_points)} points)" for s in specs)
    text = f"{len(specs)} clusters, {names}: {len(table)} configurations of a {stats['duration_s'].sum() * 1e3:.2f} ms run, {int(pareto.sum())} on the Pareto front"
    if choice.row is None:
        return text + f"; under a 1 W cap: {choice.reason}"
    r = choice.row
    clocks = ", ".join(f"{s.name} {r[f'{s.name}_freq_mhz']:g} MHz" for s in specs)
    return (
        text
        + f"; under a 1 W peak cap: {clocks}, {r['runtime_s'] * 1e3:.3f} ms, {r['energy_j'] * 1e3:.3f} mJ, {r['peak_power_w']:.3f} W peak"
    )


if __name__ == "__main__":  # python docs/_validation.py: README's "Measured" table from the last benchmark runs
    print("\n".join(readme_table()))
