"""The doc pages' shell and Python blocks, run as written.

``tests/test_docs_runnable.py`` runs every ``sh`` and ``python`` block of the pages in :data:`PAGES`, in a fresh
folder that holds the checkout's bundled inputs (``traces/``, ``models/``, ``tests/``, ``docs/``) and ``../shared`` beside
it, as a new user's clone does.  A block followed by ``{literalinclude} _generated/out/NAME.txt`` (the page's relative
path to it) shows its output: the docs build runs that block the same way and writes what it printed there
(:func:`write_outputs`), so no output on a page is typed by hand.

A placeholder a page names as such (``m5out/``: your gem5 output folder) is replaced by the bundled run it stands for,
and the page says so in the words of :data:`PAGES`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
BUNDLED_RUN = "traces/cosim-v24-se-biglittle-1800-1400MHz"

#: page -> its placeholders and the bundled file each stands for when the block runs (each page states them)
PAGES: dict[str, dict[str, str]] = {
    "tutorial.md": {},
    "howto/price-a-gpu-trace.md": {"m5out/stats.txt": f"{BUNDLED_RUN}/stats.txt.gz"},
    "howto/fit-your-board.md": {},
    "howto/add-a-model-file.md": {
        "my-board.json": "models/cortex-a15-walker2017.json",
        "measured.csv": "../shared/data/gemstone/sample-input-data/asrtpm-A15-powmon-data.csv",
        "m5out/": f"{BUNDLED_RUN}/",
    },
    "howto/sweep-on-a-cluster.md": {"runs/": "../shared/data/gem5/xu3-mibench-train/automotive_susan_c/"},
    "explore.md": {},
    "howto/gem5-to-hotspot.md": {"m5out/": f"{BUNDLED_RUN}/"},
    "howto/gpu-energy-per-kernel.md": {},
}

#: pages with blocks that cannot run on a fresh checkout, and why (the test checks every how-to is in one of the two)
NOT_RUN = {
    "howto/gem5-in-the-loop.md": "its blocks run inside gem5, which cosim does not ship",
    "howto/kernel-models.md": "the GTX 980 logs it reads are in ../shared, and its commands take minutes (tests/test_kernel_dvfs.py runs them)",
    "howto/ncu-dcgm-kernel-models.md": "its commands name a user's own ncu and DCGM files",
}

#: blocks of a runnable page that are not run, by a text they hold, and why (a cluster the checkout has no access to)
SKIPPED = {
    "from dask_jobqueue import": "it starts SLURM jobs: needs dask-jobqueue and a SLURM cluster",
    "--scheduler tcp://": "it needs a running Dask scheduler at that address",
    "nice -n 10 cosim explore": "it runs gem5, which cosim does not ship (the page shows the committed results)",
    "--search pareto --budget": "it runs gem5, which cosim does not ship",
    "hotspot -c hotspot.config": "it runs HotSpot, which cosim does not ship",
    "nsys profile -o run ./app": "it records a run with nvidia-smi and nsys on a GPU",
    "cosim gpu-energy power.csv run_cuda_gpu_trace.csv": "it names the files the GPU run above writes; the next block runs it on the bundled pair",
    "--split ../shared/data/armpm/cbench_split.data": "tests/test_fit.py runs this fit (it reproduces the shipped cortex-a15-armpm-xu3)",
}

_FENCE = re.compile(r"^```(sh|bash|python)\s*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
_OUTPUT = re.compile(r"\s*```\{literalinclude\} (?:\.\./)*_generated/out/(?P<name>[\w.-]+)\.txt\s*\n")


@dataclass(frozen=True)
class Block:
    page: str
    index: int  # the page's n-th runnable block
    language: str  # sh or python
    text: str  # as the page shows it
    output: str | None  # the name of the _generated/out/ file that shows its output, if any

    @property
    def code(self) -> str:
        """What runs: the page's text with the page's placeholders replaced by the bundled files they stand for."""
        code = self.text
        for placeholder, bundled in PAGES[self.page].items():
            code = code.replace(placeholder, bundled)
        return code

    @property
    def needs_shared(self) -> bool:
        return "../shared" in self.code

    @property
    def skipped(self) -> str | None:
        return next((why for text, why in SKIPPED.items() if text in self.text), None)


def blocks(page: str) -> list[Block]:
    text = (DOCS / page).read_text()
    found = []
    for i, m in enumerate(_FENCE.finditer(text)):
        out = _OUTPUT.match(text, m.end())
        found.append(Block(page, i, m.group(1), m.group(2), out["name"] if out else None))
    return found


def checkout(folder: Path) -> Path:
    """A fresh folder laid out as a clone: the bundled inputs (links, read-only use) and ``../shared`` beside it."""
    work = folder / "cosim"
    work.mkdir(parents=True)
    for name in ("traces", "models", "tests", "docs"):
        (work / name).symlink_to(REPO / name)
    if (REPO.parent / "shared").is_dir():
        (folder / "shared").symlink_to(REPO.parent / "shared")
    return work


def run_block(block: Block, cwd: Path, *, timeout_s: float = 300) -> subprocess.CompletedProcess:
    """Run ``block`` in ``cwd`` with the ``cosim`` of this Python's environment first on the PATH."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", "MPLBACKEND": "Agg"}
    if block.language == "python":
        args = [sys.executable, "-c", block.code]
    else:
        args = ["bash", "-e", "-o", "pipefail", "-c", block.code]
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s)


def shown(stdout: str) -> str:
    """Output as a page shows it: paths inside this checkout relative to it, and the bundled runs as ``traces/`` (``cosim
    demo`` names its bundled run where cosim is installed: ``site-packages/cosim/_traces`` after ``pip install .``), so
    a page reads the same on every machine and install."""
    from importlib import resources

    installed = str(resources.files("cosim").joinpath("_traces"))
    return stdout.replace(f"{installed}{os.sep}", "traces/").replace(f"{REPO}{os.sep}", "")


def write_outputs(out: Path) -> list[Path]:
    """Run every block whose output a page shows, in page order, and write its standard output to ``out/NAME.txt``."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for page in PAGES:
        with_output = [b for b in blocks(page) if b.output]
        if not with_output:
            continue
        absent = any(b.needs_shared for b in blocks(page)) and not (REPO.parent / "shared").is_dir()
        # the test session runs every block once (tests/test_docs_runnable.py); its docs-build test need not run them again
        if absent or os.environ.get("COSIM_DOCS_BLOCKS_RUN_BY_TESTS"):
            note = "../shared/data, which was absent when these pages were built" if absent else "tests/test_docs_runnable.py"
            for block in with_output:  # the page still builds; it says where its output is
                path = out / f"{block.output}.txt"
                path.write_text(f"(this output is made by running the block above; here it was left to {note})\n")
                written.append(path)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            cwd = checkout(Path(tmp))
            for block in blocks(page):  # every block in order: a shown one may read what an earlier one wrote
                if block.skipped:
                    continue
                result = run_block(block, cwd)
                if result.returncode != 0:
                    raise RuntimeError(f"{page}, block {block.index}: exit {result.returncode}: {result.stderr.strip()[-400:]}")
                if block.output:
                    path = out / f"{block.output}.txt"
                    path.write_text(shown(result.stdout))
                    written.append(path)
    return written


if __name__ == "__main__":  # python docs/_runnable.py: write the shown outputs into docs/_generated/out
    for path in write_outputs(DOCS / "_generated" / "out"):
        print(path)
