"""``cosim models``: every shipped model file listed with its core, board, clocks, training range, error and source,
read from the files (the expectations below are read from the JSON files by the test itself)."""

from __future__ import annotations

import json

import pandas as pd
from helpers import REPO, run_cosim

MODELS = sorted((REPO / "models").glob("*.json"))


def _block(stdout: str, name: str) -> str:
    """The lines ``cosim models`` prints for one model: its name line and the indented lines below it."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[0] == name)
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
    return "\n".join(lines[start:end])


def test_cosim_models_lists_every_shipped_file_with_what_it_says(tmp_path):
    result = run_cosim("models", "-o", tmp_path / "models.csv")
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(tmp_path / "models.csv", keep_default_na=False)
    assert sorted(table["name"]) == sorted(json.loads(p.read_text()).get("name", p.stem) for p in MODELS)
    for path in MODELS:
        data = json.loads(path.read_text())
        if data["schema"] != "cosim-model/1":
            continue
        block = _block(result.stdout, data["name"])
        lo, hi = data["training"]["freq_mhz"]
        assert f"trained:      {lo:g}-{hi:g} MHz" in block
        assert "clocks [MHz]: " + ", ".join(f"{p[0]:g}" for p in data["vf_table"]["points_mhz_v"]) in block
        assert "ODROID-XU3" in block and data["source"]["citation"][:40] in block
        ser = data["fit"]["ser_w"]
        assert (f"SER {ser:g} W" in block) if ser is not None else ("none published" in block)


def test_each_core_kind_has_one_default_and_cosim_models_marks_it():
    from cosim.timeline.core_kind import DEFAULT_MODELS

    result = run_cosim("models")
    marked = [line.split()[0] for line in result.stdout.splitlines() if "default for gem5" in line]
    assert sorted(marked) == sorted(set(DEFAULT_MODELS.values()))
    kinds = {json.loads((REPO / "models" / f"{m}.json").read_text())["core_kind"] for m in marked}
    assert kinds == {"in-order", "out-of-order"}  # one per kind of core, each measured on a core of that kind


def test_every_line_is_complete_and_wrapped_never_cut_and_no_empty_kind():
    """#53: `Cortex-A15 ()` for a fitted file that states no kind, and the AGX source cut mid-sentence at 120 characters."""
    result = run_cosim("models")
    assert result.returncode == 0 and "()" not in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 110
    for path in MODELS:
        data = json.loads(path.read_text())
        source = data.get("source", "")
        source = source.get("citation", "") if isinstance(source, dict) else source
        block = _block(result.stdout, data.get("name", path.stem)).split("  source:", 1)[1]
        assert " ".join(block.split()) == " ".join(source.split()), path.name  # the file's own words, to the end
