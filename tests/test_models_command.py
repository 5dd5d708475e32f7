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


def test_a_non_model_file_in_models_is_listed_as_what_it_is_and_refused_as_a_model():
    """The thermal constants sit beside the model files: `cosim models` names them as such, and --model refuses them
    by their schema, and the hint for a missing model lists only the models a reader takes."""
    result = run_cosim("models")
    assert "thermal-xu3  (thermal constants (no power))" in result.stdout
    refused = run_cosim("power", REPO / "traces" / "cosim-v24-se-biglittle-1800-1400MHz", "--model", "thermal-xu3")
    assert refused.returncode == 2 and "schema is 'cosim-thermal/1'" in refused.stderr
    missing = run_cosim("power", REPO / "traces" / "cosim-v24-se-biglittle-1800-1400MHz", "--model", "no-such-model")
    hint = missing.stderr.split("shipped model:", 1)[1]
    cpu = [p.stem for p in MODELS if json.loads(p.read_text()).get("schema") == "cosim-model/1"]
    assert missing.returncode == 2 and sorted(hint.strip().split(", ")) == sorted(cpu), missing.stderr


def test_an_installed_cosim_finds_its_thermal_constants(tmp_path):
    """Installed, models/ is the package's _models (pyproject): the thermal file was looked for in the repository's
    models/ alone, so an installed cosim refused every A15 run ("cannot read the thermal constants")."""
    import shutil
    import subprocess
    import sys

    shutil.copytree(REPO / "cosim", tmp_path / "cosim", ignore=shutil.ignore_patterns("__pycache__", "_models"))
    shutil.copytree(REPO / "models", tmp_path / "cosim" / "_models")
    code = "import cosim; from cosim.models.modelfile import load_model; from cosim.models.thermal import thermal_for; "
    code += "print(cosim.__file__); print(thermal_for(load_model('cortex-a15-walker2017')).r_k_per_w)"
    # -E -s, not -I: the copy is found from the working folder, before the editable install
    out = subprocess.run([sys.executable, "-E", "-s", "-c", code], cwd=tmp_path, capture_output=True, text=True)
    r = json.loads((REPO / "models" / "thermal-xu3.json").read_text())["clusters"]["xu3-a15"]["r_k_per_w"]["value"]
    assert out.returncode == 0, out.stderr
    where, got = out.stdout.split()
    assert where == str(tmp_path / "cosim" / "__init__.py") and float(got) == r
