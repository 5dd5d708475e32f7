"""Every silicon figure README.md and the docs quote, recomputed from ../shared: which rows chose it, which scored it.

    python docs/_silicon_figures.py              # runs cosim validate as the docs give it, prints every figure
    python docs/_silicon_figures.py --write      # also re-records docs/explanation/silicon/xu3-a15-mibench-train.csv
                                                 # and writes every quoted figure (CLAIMS) into its text

The board is ARMPM's ODROID-XU3 (cBench log), split by ARMPM's own ``cbench_split.data``: its training programs fitted
the board's model (``models/cortex-a15-armpm-xu3.json``) and chose its events; 11 of them have gem5 runs
(``xu3-mibench-train``), so every gem5 + cosim figure is on training programs: **no test program has a gem5 run here**.
Those 33 rows (11 programs x 3 clocks) also chose the default among the A15 models (their 1000 and 1500 MHz rows) and
the voltage rule (same rows), and calibrate ``validate``'s interval (each row's without its own program).  The test
programs (15) are scored only with the board's own counters (the model on the board's rates).

``tests/test_docs_targets.py`` recomputes each figure and checks the text that quotes it (``CLAIMS``).
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
SHARED = REPO.parent / "shared" / "data"
CBENCH = SHARED / "armpm" / "Concatenated_Data" / "cBench" / "xu3_cset_perfcpu_cBench_eMMC_big.data"
SPLIT = SHARED / "armpm" / "cbench_split.data"
XU3_RUNS = SHARED / "gem5" / "xu3-mibench-train"
RECORDED = DOCS / "explanation" / "silicon" / "xu3-a15-mibench-train.csv"
MODELS = ("cortex-a15-armpm-xu3", "cortex-a15-gemstone2018", "cortex-a15-walker2017")
# the command the docs give (validation.md), relative to the repository's root
COMMAND = (
    "cosim validate ../shared/data/armpm/Concatenated_Data/cBench/xu3_cset_perfcpu_cBench_eMMC_big.data "
    "../shared/data/gem5/xu3-mibench-train --split ../shared/data/armpm/cbench_split.data " + " ".join(f"--model {m}" for m in MODELS)
)

# (file, text before the figure, figure, digits): the text must read "<before><figure at digits> %", where ``{x}`` in
# ``before`` stands for any figure (a figure of the same table row, itself claimed); a figure named "..., signed" is
# written with its sign (+1.0 %, −2.3 %)
_G, _W = "| `cortex-a15-gemstone2018` | ", "| `cortex-a15-walker2017` | "
CLAIMS = (
    ("README.md", "GemStone's (fitted on another XU3), is ", "gemstone2018 board rates, table V, all 33", 1),
    ("README.md", "activity and ", "gemstone2018 gem5 + cosim power, 33 training rows", 1),
    ("README.md", "model fitted on the training split is ", "armpm-xu3 board rates, test split (45 rows)", 1),
    ("README.md", "(on its own training programs ", "armpm-xu3 board rates, 33 training rows", 1),
    ("README.md", "and through gem5 ", "armpm-xu3 gem5 + cosim power, 33 training rows", 1),
    ("docs/explanation/methodology.md", _G, "gemstone2018 board rates, table V, 1000+1500 (choose)", 1),
    ("docs/explanation/methodology.md", _G + "{x} (signed ", "gemstone2018 board rates, table V, 1000+1500 (choose), signed", 1),
    ("docs/explanation/methodology.md", _G + "{x} (signed {x}) | ", "gemstone2018 board rates, table V, 2000 (held out)", 1),
    ("docs/explanation/methodology.md", _G + "{x} (signed {x}) | {x} (", "gemstone2018 board rates, table V, 2000 (held out), signed", 1),
    ("docs/explanation/methodology.md", _G + "{x} (signed {x}) | {x} ({x}) | ", "gemstone2018 gem5 + cosim power, 33 training rows", 1),
    (
        "docs/explanation/methodology.md",
        _G + "{x} (signed {x}) | {x} ({x}) | {x} (",
        "gemstone2018 gem5 + cosim power, 33 training rows, signed",
        1,
    ),
    ("docs/explanation/methodology.md", _W, "walker2017 board rates, table V, 1000+1500 (choose)", 1),
    ("docs/explanation/methodology.md", _W + "{x} (", "walker2017 board rates, table V, 1000+1500 (choose), signed", 1),
    ("docs/explanation/methodology.md", _W + "{x} ({x}) | ", "walker2017 board rates, table V, 2000 (held out)", 1),
    ("docs/explanation/methodology.md", _W + "{x} ({x}) | {x} (", "walker2017 board rates, table V, 2000 (held out), signed", 1),
    ("docs/explanation/methodology.md", _W + "{x} ({x}) | {x} ({x}) | ", "walker2017 gem5 + cosim power, 33 training rows", 1),
    ("docs/explanation/methodology.md", _W + "{x} ({x}) | {x} ({x}) | {x} (", "walker2017 gem5 + cosim power, 33 training rows, signed", 1),
    (
        "docs/explanation/methodology.md",
        "At the board's voltage the ranking turns, ",
        "gemstone2018 board rates, board V, 1000+1500 (choose)",
        1,
    ),
    (
        "docs/explanation/methodology.md",
        "At the board's voltage the ranking turns, {x} against ",
        "walker2017 board rates, board V, 1000+1500 (choose)",
        1,
    ),
    (
        "docs/explanation/methodology.md",
        "both, on the choosing rows and on the held-out ones. walker2017's bias on the board's rates (",
        "walker2017 board rates, table V, all 33, signed",
        1,
    ),
    ("docs/explanation/methodology.md", "offsets gem5's excess activity (", "walker2017 gem5 activity, 33 training rows, signed", 1),
    ("docs/explanation/envelope.md", "| 1000 + 1500 MHz (decide) | ", "gemstone2018 board rates, table V, 1000+1500 (choose)", 2),
    ("docs/explanation/envelope.md", "| 1000 + 1500 MHz (decide) | {x} (", "gemstone2018 board rates, table V, 1000, signed", 1),
    ("docs/explanation/envelope.md", "| 1000 + 1500 MHz (decide) | {x} ({x} / ", "gemstone2018 board rates, table V, 1500, signed", 1),
    (
        "docs/explanation/envelope.md",
        "| 1000 + 1500 MHz (decide) | {x} ({x} / {x} signed) | ",
        "gemstone2018 board rates, board V, 1000+1500 (choose)",
        2,
    ),
    (
        "docs/explanation/envelope.md",
        "| 1000 + 1500 MHz (decide) | {x} ({x} / {x} signed) | {x} (",
        "gemstone2018 board rates, board V, 1000, signed",
        1,
    ),
    (
        "docs/explanation/envelope.md",
        "| 1000 + 1500 MHz (decide) | {x} ({x} / {x} signed) | {x} ({x} / ",
        "gemstone2018 board rates, board V, 1500, signed",
        1,
    ),
    ("docs/explanation/envelope.md", "| 2000 MHz (score) | **", "gemstone2018 board rates, table V, 2000 (held out)", 2),
    ("docs/explanation/envelope.md", "| 2000 MHz (score) | **{x}** (", "gemstone2018 board rates, table V, 2000 (held out), signed", 1),
    ("docs/explanation/envelope.md", "| 2000 MHz (score) | **{x}** ({x}) | ", "gemstone2018 board rates, board V, 2000 (held out)", 2),
    (
        "docs/explanation/envelope.md",
        "| 2000 MHz (score) | **{x}** ({x}) | {x} (",
        "gemstone2018 board rates, board V, 2000 (held out), signed",
        1,
    ),
    ("docs/explanation/limits.md", "the model on the board's rates is ", "gemstone2018 board rates, table V, 2000 (held out)", 2),
    ("docs/explanation/limits.md", "off at the table's voltage and ", "gemstone2018 board rates, board V, 2000 (held out)", 1),
)
_FIGURE = r"[−+-]?\d+(?:\.\d+)? %"


# what the rows behind each kind of figure did: (key fragment, rows, what those rows chose)
ROLES = (
    ("gem5 activity", "the 33 rows of the 11 training programs gem5 ran", "as gem5 + cosim power"),
    ("gem5 + cosim power", "the 33 rows of the 11 training programs gem5 ran (test programs: no gem5 run)",
     "the board's model (fit, events) and the interval; for another board's model, the default among the A15 models"),
    ("board rates, 33 training", "the same 33 training rows, the board's own counters",
     "armpm-xu3: its fit (in-sample); the other two: the default (22 of the rows)"),
    ("test split", "the test split's 15 programs x 3 clocks, the board's own counters", "nothing: never used to fit or choose"),
    ("(choose)", "the training programs' 1000 and 1500 MHz rows (22)", "the default A15 model and the voltage rule (table, not board)"),
    ("(held out)", "the training programs' 2000 MHz rows (11)", "nothing (scored once, after)"),
    ("all 33", "the 33 training rows", "the default and the voltage rule (22 of them)"),
    ("interval coverage", "the 33 training rows, each with the interval calibrated without its own program", "the interval's calibration (other programs)"),
)  # fmt: skip


def figures_table(figures: dict[str, float]) -> str:
    """Markdown: every figure, its value, the rows it is on, what those rows chose, and where it is quoted."""
    where: dict[str, list[str]] = {}
    for file, _, name, _ in CLAIMS:
        where.setdefault(name, []).append(f"`{file}`")
    lines = ["| figure | value | rows | what those rows chose | quoted in |", "|---|---|---|---|---|"]
    for name, value in figures.items():
        if name.endswith(", signed") and name not in where:
            continue
        rows, chose = next(((r, c) for key, r, c in ROLES if key in name), ("", ""))
        shown = f"{value:.2f} %" if math.isfinite(value) else "needs ../shared (the board's log)"
        lines.append(f"| {name} | {shown} | {rows} | {chose} | {', '.join(dict.fromkeys(where.get(name, []))) or '–'} |")
    return "\n".join(lines) + "\n"


def recorded_table() -> str:
    """:func:`figures_table` of the recorded ``cosim validate`` output (no ../shared needed; the test-split figure,
    which needs the board's log, is added where ../shared is here)."""
    if not RECORDED.exists():
        return f"*(the recorded results {RECORDED.name} are not here, so this table is left out)*\n"
    from cosim.validate.interval import read_validation

    figures = from_validation(read_validation(RECORDED))
    if CBENCH.exists():
        mape, n = board_rates_on_split(role="test")
        figures[f"armpm-xu3 board rates, test split ({n} rows)"] = mape
    else:
        figures["armpm-xu3 board rates, test split (45 rows)"] = float("nan")
    return figures_table(figures)


def _mape(errors: list[float]) -> float:
    return sum(abs(e) for e in errors) / len(errors) if errors else float("nan")


def _mean(errors: list[float]) -> float:
    return sum(errors) / len(errors) if errors else float("nan")


def from_validation(rows: list[dict]) -> dict[str, float]:
    """The figures of a ``cosim validate`` table (its rows as :func:`cosim.validate.interval.read_validation` reads
    them) [%]: per model its gem5 + cosim power MAPE, and the model on the board's rates at the board's voltage and
    at the model's table voltage (the board's price times e^ln_clock_voltage, the exact swap to gem5's clock and the
    table's voltage), on the rows that chose (1000 + 1500 MHz) and on those held out (2000 MHz)."""
    out: dict[str, float] = {}
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == model and r["split"] == "train" and math.isfinite(r["power_gem5_w"])]
        short = model.removeprefix("cortex-a15-")
        out[f"{short} gem5 + cosim power, {len(mine)} training rows"] = _mape([r["power_err_pct"] for r in mine])
        out[f"{short} board rates, {len(mine)} training rows"] = _mape(
            [100 * (r["power_model_board_w"] / r["power_board_w"] - 1) for r in mine]
        )
        out[f"{short} gem5 + cosim power, {len(mine)} training rows, signed"] = _mean([r["power_err_pct"] for r in mine])
        # gem5's activity alone: gem5 + cosim's price over the model's on the board's rates at gem5's clock and the table
        # voltage (e^(ln_total - ln_model - ln_clock_voltage)), so the model's own error on the board is not in it
        out[f"{short} gem5 activity, {len(mine)} training rows, signed"] = _mean(
            [100 * (math.exp(r["ln_total"] - r["ln_model"] - r["ln_clock_voltage"]) - 1) for r in mine]
        )
        for name, factor in (("board V", lambda r: 1.0), ("table V", lambda r: math.exp(r["ln_clock_voltage"]))):
            err = {id(r): 100 * (r["power_model_board_w"] * factor(r) / r["power_board_w"] - 1) for r in mine}
            if name == "table V":  # at the board's voltage this is "board rates, 33 training rows" above
                out[f"{short} board rates, {name}, all {len(mine)}"] = _mape(list(err.values()))
                out[f"{short} board rates, {name}, all {len(mine)}, signed"] = _mean(list(err.values()))
            for rows_name, chosen in (
                ("1000+1500 (choose)", [err[id(r)] for r in mine if r["clock_mhz"] < 1750]),
                ("2000 (held out)", [err[id(r)] for r in mine if r["clock_mhz"] >= 1750]),
            ):
                out[f"{short} board rates, {name}, {rows_name}"] = _mape(chosen)
                out[f"{short} board rates, {name}, {rows_name}, signed"] = _mean(chosen)
            for clock in (1000, 1500):
                out[f"{short} board rates, {name}, {clock}, signed"] = _mean(
                    [err[id(r)] for r in mine if abs(r["clock_mhz"] - clock) < 250]
                )
        judged = [r for r in mine if math.isfinite(r["board_lo_w"])]
        if judged:
            out[f"{short} interval coverage, {len(judged)} training rows"] = (
                100 * sum(bool(r["board_inside"]) for r in judged) / len(judged)
            )
    return out


def board_rates_on_split(model_name: str = MODELS[0], *, role: str = "test") -> tuple[float, int]:
    """(MAPE [%], rows) of ``model_name`` priced on the board's own rates, voltage, clock and four powered cores, per
    program and clock of the split's ``role`` programs (``test``: never used to fit or choose anything), as
    ``cosim validate`` prices its ``power_model_board_w``.  Needs every model event counted by the board."""
    import numpy as np

    from cosim.models.envelope import cores_factor, operating_point_power_w
    from cosim.models.modelfile import load_model
    from cosim.readers.armpm import read_split
    from cosim.validate import excluded_programs, read_board
    from cosim.validate.compare import BOARD_POWERED_CORES

    model, split, excluded = load_model(model_name), read_split(SPLIT), excluded_programs()
    board, _ = read_board(CBENCH)
    errors = []
    for (program, clock), row in sorted(board.items()):
        if split.get(program) != role or program in excluded:
            continue
        eph = {e: np.array([row.per_s(e) / (model.cores_per_cluster * clock)]) for e in model.events}
        power = operating_point_power_w(
            model,
            eph=eph,
            freq_mhz=np.array([clock]),
            voltage_v=np.array([row.voltage_v]),
            static_scale=cores_factor(model, BOARD_POWERED_CORES),
        )["power_w"][0]
        errors.append(100 * (float(power) / row.power_w - 1))
    return _mape(errors), len(errors)


def recompute(out: Path) -> dict[str, float]:
    """Run the docs' ``cosim validate`` into ``out`` and return every figure (the test split's too).

    The command runs in this process (``cosim.cli.main`` with its arguments, in the repository's root, as the ``cosim``
    program calls it; its outputs captured, the warnings' settings it makes put back): the same table as a new
    ``cosim`` process writes, without a second Python's start (tests/test_docs_targets.py runs it)."""
    import contextlib
    import io
    import os
    import warnings

    from cosim.cli import main

    here, stdout, stderr = os.getcwd(), io.StringIO(), io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            os.chdir(REPO)
            status = main([*COMMAND.split()[1:], "-o", str(out)])
        finally:
            os.chdir(here)
    if status != 0:
        raise RuntimeError(f"{COMMAND} -o {out}: exit status {status}\n{stderr.getvalue()[-2000:]}")
    from cosim.validate.interval import read_validation

    figures = from_validation(read_validation(out))
    mape, n = board_rates_on_split(role="test")
    figures[f"armpm-xu3 board rates, test split ({n} rows)"] = mape
    return figures


def as_quoted(value: float, name: str, digits: int) -> str:
    """A figure as the text writes it: ``4.9 %``; a signed one ``+1.0 %`` / ``−2.3 %`` (a typographic minus)."""
    return (f"{value:+.{digits}f} %" if name.endswith(", signed") else f"{value:.{digits}f} %").replace("-", "−")


def _before(before: str) -> str:
    """The regular expression of a claim's ``before``: ``{x}`` any figure, a space any run of white space."""
    return r"\s+".join(re.escape(part).replace(re.escape("{x}"), _FIGURE) for part in before.split(" "))


def quoted(figures: dict[str, float], root: Path = REPO) -> list[tuple[str, str, float, str | None]]:
    """Per claim: (file, figure, recomputed value, the text there or None where the file does not read it)."""
    out = []
    for file, before, name, digits in CLAIMS:
        text = (root / file).read_text()
        figure = as_quoted(figures[name], name, digits)
        found = re.search(_before(before) + re.escape(figure).replace(r"\ ", r"\s+"), text)
        out.append((file, name, figures[name], figure if found else None))
    return out


def write_claims(figures: dict[str, float], root: Path = REPO) -> list[str]:
    """Write each claimed figure into the text that quotes it (the text around it kept); the files changed."""
    changed = []
    for file in dict.fromkeys(c[0] for c in CLAIMS):
        path = root / file
        text = old = path.read_text()
        for claim_file, before, name, digits in CLAIMS:
            if claim_file != file:
                continue
            pattern = re.compile(f"({_before(before)}){_FIGURE}")
            if not pattern.search(text):
                raise SystemExit(f"{file}: no text reads {before!r} followed by a figure (claim {name!r})")
            figure = as_quoted(figures[name], name, digits)
            text = pattern.sub(lambda m, figure=figure: m.group(1) + figure, text, count=1)
        if text != old:
            path.write_text(text)
            changed.append(file)
    return changed


if __name__ == "__main__":
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "validate.csv"
        figures = recompute(table)
        for name, value in figures.items():
            print(f"{value:7.2f} %  {name}")
        for file, name, value, shown in quoted(figures):
            print(f"{'ok  ' if shown else 'DIFF'} {file}: {name} = {value:.2f} %")
        if "--write" in sys.argv:
            shutil.copyfile(table, RECORDED)
            print(f"written: {RECORDED}")
            for file in write_claims(figures):
                print(f"written: {file}")
