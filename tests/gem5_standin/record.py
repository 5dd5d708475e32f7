"""Record a finished cosim explore study for the stand-in to replay (tests/data/explore-grid.tar.xz).

    python tests/gem5_standin/record.py STUDY OUT.tar.xz

Per point: its config.ini, and its stats.txt with only the lines cosim reads (the stats the models it was priced with and the
what-if need, and every stat outside system.*); index.json maps each point's gem5 options to its folder.
"""

import csv
import io
import json
import shlex
import sys
import tarfile
from pathlib import Path

from cosim.dse.whatif import whatif_stats
from cosim.run import open_run
from cosim.timeline.clusters import stats_needed


def kept(line: str, needed: set) -> bool:
    name = line.split(" ", 1)[0]
    return not name.startswith("system.") or name in needed


def main(study: Path, out: Path) -> None:
    index = {}
    with tarfile.open(out, "w:xz") as tar:

        def add(name: str, data: bytes) -> None:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))

        with open(study / "results.csv", newline="") as f:  # the study's points (not those of an earlier grid in the folder)
            listed = {r["point"] for r in csv.DictReader(f) if r["source"] == "simulated"}
        for folder in sorted(study / "points" / p for p in listed):
            if not json.loads((folder / "result.json").read_text())["status"] == "ok":
                continue
            words = shlex.split((folder / "command.txt").read_text().splitlines()[-1])
            options = words[3:]  # after gem5, --outdir=. and the config script; the workload is not part of the key
            index[" ".join(options[: options.index("--")] if "--" in options else options)] = folder.name
            run = open_run(folder)
            needed = stats_needed(run.config, list(run.clusters)) | whatif_stats(run.config, list(run.clusters))
            text = (folder / "stats.txt").read_text()
            add(f"{folder.name}/stats.txt", "".join(line for line in text.splitlines(True) if kept(line, needed)).encode())
            add(f"{folder.name}/config.ini", (folder / "config.ini").read_bytes())
        add("index.json", json.dumps(index, indent=1, sort_keys=True).encode())
    print(f"{len(index)} points -> {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
