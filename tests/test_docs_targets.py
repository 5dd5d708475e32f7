"""README.md and the docs show one set of benchmark figures, and only what the benchmarks produced.

The validation page's speed table and README's "Measured" table are both made from ``[[bench]]`` in
docs/explanation/validation.toml, filled from tests/bench/measured.json (written by ``pytest tests/bench
--benchmark-enable``).  README is a file, not a build product, so this test holds it to the same rows: a target or a
figure typed there by hand, or one left behind after the benchmarks ran again, fails here.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib

import pytest
from helpers import REPO

sys.path.insert(0, str(REPO / "docs"))
from _validation import MEASURED, bench_value, readme_table  # noqa: E402

DATA = tomllib.loads((REPO / "docs" / "explanation" / "validation.toml").read_text())
README = (REPO / "README.md").read_text()


def measured_table(readme_text: str) -> list[str]:
    """README's "Measured" table, line by line."""
    section = readme_text.split("## Measured", 1)[1]
    return [line.strip() for line in section.splitlines() if line.startswith("|")]


def test_readme_shows_exactly_the_benchmarks_rows():
    """Rerun the benchmarks, then paste ``python docs/_validation.py`` into README's "Measured" section."""
    assert measured_table(README) == readme_table(DATA)
    assert f"varies by {DATA['variance']} between runs" in " ".join(README.split())


def test_every_benchmark_row_was_measured():
    """No row reads "not measured yet": each ``[[bench]]`` key has a recorded run with every field it shows."""
    missing = [b["bench"] for b in DATA["bench"] if bench_value(b).startswith("not measured")]
    assert missing == []


def test_every_key_is_recorded_by_a_benchmark():
    """Each key is one a benchmark in tests/bench/ records (named in its source; a trailing size as in
    ``gem5_attach_power_size60`` is the benchmark's parameter), so no row can name a figure nobody measures."""
    source = "".join(p.read_text() for p in (REPO / "tests" / "bench").glob("test_*.py"))
    for b in DATA["bench"]:
        assert f'"{re.sub(r"[0-9]+$", "", b["bench"])}' in source, b["bench"]
    assert json.loads(MEASURED.read_text()).keys() >= {b["bench"] for b in DATA["bench"]}


def test_no_benchmark_figure_is_typed_into_the_accuracy_rows():
    assert not [r["what"] for r in DATA["row"] if "tests/bench" in r["what"]]


@pytest.mark.parametrize(
    ("runs", "shown"),
    [
        ([{"a": 4.19}, {"a": 4.26}, {"a": 4.2}], "4.19–4.26 M"),  # a range over the recorded runs
        ([{"a": 4.2}, {"a": 4.2}], "4.20 M"),  # one value when they agree
        ([{"b": 1.0}], "not measured yet"),  # a run without the field does not count
    ],
)
def test_a_value_is_shown_as_measured(runs, shown):
    assert bench_value({"bench": "k", "show": "{a:.2f} M"}, {"k": runs}).startswith(shown)


def test_a_readme_figure_typed_by_hand_is_caught():
    """The check can fail: a README target changed, or a figure edited away from the benchmarks' record."""
    table = measured_table(README)
    wrong_target = README.replace(table[2], table[2].rsplit("|", 2)[0] + "| ≥ 1.0 M |")
    assert measured_table(wrong_target) != readme_table(DATA)
    cells = table[2].split("|")
    wrong_figure = README.replace(table[2], "|".join(cells[:2] + [" 9.99 M lines/s "] + cells[3:]))
    assert measured_table(wrong_figure) != readme_table(DATA)


def test_the_design_file_page_quotes_the_explore_driver_cost_the_benchmark_recorded():
    """docs/reference/design-file.md repeats test_explore_overhead.py's figures: those of measured.json, as README shows."""
    page = " ".join((REPO / "docs" / "reference" / "design-file.md").read_text().split())
    for name in ("driver_ms", "wall_overhead_ms"):
        shown = bench_value({"bench": "explore_driver_1000_points", "show": f"{{{name}:.1f}} ms"})
        assert not shown.startswith("not measured") and shown in page, shown
    readme_row = next(b for b in DATA["bench"] if b["bench"] == "explore_driver_1000_points")
    assert bench_value(readme_row) in page


# --- the silicon figures: every one a recomputation ------------------------------------------------------------------

import math  # noqa: E402

from _silicon import silicon_table  # noqa: E402
from _silicon_figures import CLAIMS, RECORDED, from_validation, quoted  # noqa: E402
from helpers import needs_shared  # noqa: E402

from cosim.validate.interval import read_validation  # noqa: E402


@pytest.fixture
def silicon(silicon_validation):
    """``cosim validate`` as the docs give it, run now on ../shared (once a test run: tests/conftest.py), and every
    figure from it."""
    return silicon_validation


def test_every_quoted_silicon_figure_is_the_recorded_tables():
    """Without ../shared too: each figure README and the docs quote (``_silicon_figures.CLAIMS``) reads, at the digits
    shown, what the recorded ``cosim validate`` table gives (the test split's figure needs the board's log: below)."""
    figures = from_validation(read_validation(RECORDED))
    checked = [(file, name, value, shown) for file, name, value, shown in quoted(figures | _absent_test_split(figures)) if name in figures]
    assert len(checked) == len(CLAIMS) - 1
    assert [c for c in checked if c[3] is None] == [], (
        "rerun: python docs/_silicon_figures.py --write (it writes each quoted figure into its text)"
    )


def _absent_test_split(figures: dict) -> dict:
    return {name: math.nan for _, _, name, _ in CLAIMS if name not in figures}


@needs_shared
def test_the_silicon_table_is_what_cosim_validate_gives_now(silicon):
    """docs/explanation/silicon/xu3-a15-mibench-train.csv, which the docs render, is what the docs' command writes now
    from ../shared.  Tolerance: 1e-6 relative on every numeric cell.  The same code on the same data is deterministic;
    the CSV keeps 9 significant digits, so only its formatting (~1e-9) and a platform's float rounding may differ, while
    the smallest change the docs would show is 0.05 of a rounded 0.1 % (5e-4 relative): any re-pricing that could move a
    shown figure fails here (a re-run of the 0.4 table differed by up to 0.24 points)."""
    out, _ = silicon
    now, recorded = read_validation(out), read_validation(RECORDED)
    assert [(r["program"], r["clock_mhz"], r["model"]) for r in now] == [(r["program"], r["clock_mhz"], r["model"]) for r in recorded]
    for a, b in zip(now, recorded):
        for key, value in a.items():
            if isinstance(value, float) and math.isfinite(value):
                assert b[key] == pytest.approx(value, rel=1e-6, abs=1e-12), (
                    a["program"],
                    a["clock_mhz"],
                    a["model"],
                    key,
                    "rerun: python docs/_silicon_figures.py --write",
                )
            else:
                assert str(b[key]) == str(value) or (isinstance(value, float) and math.isnan(b[key])), (a["program"], key)
    assert silicon_table(out) == silicon_table(RECORDED)


@needs_shared
def test_every_quoted_silicon_figure_is_the_recomputation(silicon):
    """Each figure README and the docs quote is, at the digits shown, what ../shared gives now, the test split's
    included (the board's model on its test programs' own counters)."""
    _, figures = silicon
    wrong = [(file, name, f"{value:.2f} %") for file, name, value, shown in quoted(figures) if shown is None]
    assert wrong == [], "rerun: python docs/_silicon_figures.py --write (it writes each quoted figure into its text)"
