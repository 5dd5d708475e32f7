"""Reader for ``cosim-run.json``, the sidecar gem5_scripts/cosim_gem5.attach_power writes beside stats.txt."""

from __future__ import annotations

import json
from pathlib import Path

from cosim.errors import CosimError
from cosim.readers._files import read_text

SIDECAR = "cosim-run.json"


def read_sidecar(path: str | Path) -> dict[str, tuple[str, str]]:
    """``{cluster name: (config path of its CPUs, model name)}``."""
    path = Path(path)
    text = read_text(path, missing_hint="give the cosim-run.json gem5_scripts/cosim_gem5.py wrote, or name the clusters")
    try:
        data = json.loads(text)
        return {name: (c["path"], c["model"]) for name, c in data["clusters"].items()}
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError, RecursionError) as err:
        raise CosimError(f"{path}: not a cosim-run.json sidecar ({err}); remove it or name the clusters") from None
