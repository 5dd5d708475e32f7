"""Replay a recorded study: copy the stats.txt and config.ini of the recorded point whose gem5 options are these."""

import json
import shutil
import sys
from pathlib import Path

recording, outdir, options = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
index = json.loads((recording / "index.json").read_text())  # " ".join(options before "--") -> point folder
key = " ".join(options[: options.index("--")] if "--" in options else options)
if key not in index:
    sys.exit(f"replay: no recorded run for options {key}")
for name in ("stats.txt", "config.ini"):
    shutil.copy(recording / index[key] / name, outdir / name)
