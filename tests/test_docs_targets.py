"""README.md and the docs state one set of targets: the validation page's rows (docs/explanation/validation.toml)
and README's "Measured" table must name the same target for the same benchmark, and the same run-to-run variance."""

from __future__ import annotations

import tomllib

from helpers import REPO

ROWS = tomllib.loads((REPO / "docs" / "explanation" / "validation.toml").read_text())
README = (REPO / "README.md").read_text()


def disagreements(readme_text: str) -> list[str]:
    """Every target (and the variance) on which ``readme_text`` and the validation page differ."""
    targets = {}
    for line in readme_text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 3:
            targets[cells[0]] = cells[-1]
    out = []
    for row in (r for r in ROWS["row"] if "readme" in r):
        match = [target for first, target in targets.items() if first.startswith(row["readme"])]
        if match != [row["target"]]:
            out.append(f"{row['readme']}: README {match}, validation page {row['target']!r}")
    if f"varies by {ROWS['variance']} between runs" not in " ".join(readme_text.split()):
        out.append(f"README does not say the machine varies by {ROWS['variance']} between runs")
    return out


def test_readme_and_docs_name_the_same_targets():
    assert sum("readme" in r for r in ROWS["row"]) >= 8  # every benchmark with a target is compared
    assert disagreements(README) == []


def test_a_disagreement_is_caught():
    """The check can fail: README saying 1.2x where the docs say 1.1x, or ±30 % where they say 2x, is reported."""
    wrong = README.replace("| ≤ 1.1× filtered |", "| ≤ 1.2× |").replace("varies by up to 2× between runs", "varies by ±30 %")
    found = disagreements(wrong)
    assert len(found) == 2 and "peak memory" in found[0] and "varies" in found[1]
