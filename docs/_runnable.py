"""The doc pages' shell and Python blocks, run as written.

``tests/test_docs_runnable.py`` runs every ``sh`` and ``python`` block of the pages in :data:`PAGES`, in a fresh
folder that holds the checkout's bundled inputs (``traces/``, ``models/``, ``tests/``, ``docs/``) and ``../shared`` beside
it, as a new user's clone does.  A block followed by the line :data:`MARK` and a ``text`` block shows its output in
the Markdown itself (read on the repository page as in the built docs): ``python docs/_runnable.py`` runs the pages
and writes what each such block printed into that ``text`` block (:func:`fill_pages`), and the test checks that
what the page shows is what the block prints now (:func:`normalised`), so no output on a page is typed by hand.

A placeholder a page names as such (``m5out/``: your gem5 output folder) is replaced by the bundled run it stands for,
and the page says so in the words of :data:`PAGES`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
BUNDLED_RUN = "traces/cosim-v24-se-biglittle-1800-1400MHz"

#: page -> its placeholders and the bundled file each stands for when the block runs (each page states them)
PAGES: dict[str, dict[str, str]] = {
    "../README.md": {
        "m5out/": f"{BUNDLED_RUN}/",
        "study/points": "traces/",
        "nvprof-metrics.log": "traces/cosim-nvprof-dct.txt",
        "gpu-trace.log": "traces/cosim-nvprof-dct-gputrace.txt",
        "run.log": "traces/cosim-nvprof-dct-gputrace.txt",
    },
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
    "python3 -m venv .venv && .venv/bin/pip install": "README's set-up installs into a fresh venv; the test command is this suite, and "
    "cosim demo's output is checked by test_readme_shows_what_cosim_demo_prints",
    "cosim explore design.toml -o study/": "it runs gem5 (tests/test_explore.py runs cosim explore with a stand-in), cosim validate "
    "reads ../shared's board log and runs (tests/test_validate.py), kernel-fit --validate takes minutes (tests/test_kernel_dvfs.py)",
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
#: the line between a block and the ``text`` block that shows its output (an HTML comment: neither GitHub nor Sphinx shows it)
MARK = "<!-- output of the block above: written by python docs/_runnable.py, checked by tests/test_docs_runnable.py -->"
_OUTPUT = re.compile(r"\s*" + re.escape(MARK) + r"\n```text\n(?P<shown>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    page: str
    index: int  # the page's n-th runnable block
    language: str  # sh or python
    text: str  # as the page shows it
    output: str | None  # the output the page shows under it (its text block), if any
    span: tuple[int, int] | None = None  # where that output is in the page's text

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
        found.append(Block(page, i, m.group(1), m.group(2), out["shown"] if out else None, out.span("shown") if out else None))
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


#: runs ``cosim ARGV`` in a folder: its exit status and outputs (tests/helpers.run_cosim)
Cosim = Callable[[list[str], Path], subprocess.CompletedProcess]
#: runs Python code in a folder as ``python -c CODE`` would: its exit status and outputs
Python = Callable[[str, Path], subprocess.CompletedProcess]


def run_block(
    block: Block, cwd: Path, *, timeout_s: float = 300, cosim: Cosim | None = None, python: Python | None = None
) -> subprocess.CompletedProcess:
    """Run ``block`` in ``cwd`` with the ``cosim`` of this Python's environment first on the PATH: a shell block through
    ``bash -e -o pipefail``, a Python block through a new Python.

    With ``cosim`` (``cosim(argv, cwd)`` runs the command line ``cosim ARGV`` in ``cwd``; tests/helpers.run_cosim runs
    ``cosim.cli.main(argv)`` in the test's own process), a shell block's plain ``cosim`` lines (:func:`steps`) are given
    to it with the argv bash gives the ``cosim`` program, and its other lines run through bash, in order, as the block
    runs: it stops at the first that fails, with that one's exit status; the outputs are the steps' in order.  With
    ``python`` (``python(code, cwd)``), a Python block's code is given to it."""
    if block.language == "python":
        return python(block.code, cwd) if python is not None else _bash_or_python("python", block.code, cwd, timeout_s)
    parts = steps(block.code)
    if cosim is None or not parts:
        return _bash_or_python("sh", block.code, cwd, timeout_s)
    stdout, stderr = [], []
    for kind, what in parts:
        result = cosim(what, cwd) if kind == "cosim" and isinstance(what, list) else _bash_or_python("sh", str(what), cwd, timeout_s)
        stdout.append(result.stdout)
        stderr.append(result.stderr)
        if result.returncode != 0:
            break
    return subprocess.CompletedProcess(result.args, result.returncode, "".join(stdout), "".join(stderr))


def _bash_or_python(language: str, code: str, cwd: Path, timeout_s: float) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", "MPLBACKEND": "Agg"}
    if language == "python":
        args = [sys.executable, "-c", code]
    else:
        args = ["bash", "-e", "-o", "pipefail", "-c", code]
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s)


#: characters that make a line more than one program run with literal arguments: pipes, redirections, lists, globs,
#: expansions, substitutions, escapes (outside quotes; inside double quotes ``$``, a backquote, ``\`` and ``!``)
_SPECIAL = set("|&;<>()$`*?[]{}~\\!")
_IN_DOUBLE_QUOTES = set("$`\\!")
#: a line that starts with one of these changes what the lines after it run in (or holds them): the block runs in bash
_SHELL_STATE = {"cd", "pushd", "popd", "export", "unset", "set", "shopt", "source", ".", "alias", "eval", "exec", "trap",
                "for", "while", "until", "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "function",
                "select", "declare", "typeset", "local", "readonly", "umask", "ulimit", "hash", "{", "}", "(", ")"}  # fmt: skip


def _scan(line: str) -> tuple[str, bool, bool]:
    r"""A logical shell line (its continuations ``\`` + newline kept): (the line up to its comment with the continuations
    outside quotes removed, whether it holds a special character outside single quotes (:data:`_SPECIAL`), whether its
    quotes close)."""
    quote, body, special, i = None, [], False, 0
    while i < len(line):
        ch = line[i]
        if quote == "'":
            quote = None if ch == "'" else quote
        elif quote == '"':
            special |= ch in _IN_DOUBLE_QUOTES
            quote = None if ch == '"' else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "\\" and line[i + 1 : i + 2] == "\n":  # a continuation: bash joins the lines
            i += 2
            continue
        elif ch == "#" and (not body or body[-1].isspace()):  # a word starts here (after a continuation too)
            break
        else:
            special |= ch in _SPECIAL
        body.append(ch)
        i += 1
    return "".join(body), special, quote is None


def plain_cosim(line: str) -> list[str] | None:
    """The arguments after ``cosim`` of a logical shell line that runs ``cosim`` alone with literal arguments (no pipe,
    redirection, list, glob, expansion, substitution, escape, variable assignment), as bash gives them to it (quotes
    removed; a ``#`` that starts a word starts a comment); None for any other line."""
    import shlex

    body, special, closed = _scan(line)
    if special or not closed:
        return None
    words = shlex.split(body)
    return words[1:] if words[:1] == ["cosim"] else None


def steps(code: str) -> list[tuple[str, list[str] | str]]:
    """A shell block as ``("cosim", argv)`` for each plain ``cosim`` line (:func:`plain_cosim`) and ``("sh", text)``
    for the lines between (the block's own text, run together through bash); the whole block as one ``sh`` step
    where a line changes the shell's state or holds other lines (``cd``, ``export``, an assignment, a loop, a group, a
    here-document, a quote over lines, a background job), since one step's bash does not keep it for the next."""
    out: list[tuple[str, list[str] | str]] = []
    for line in re.split(r"(?<!\\)\n", code):  # logical lines: a line ending in \ goes on on the next
        argv = plain_cosim(line)
        if argv is not None:
            out.append(("cosim", argv))
            continue
        body, _, closed = _scan(line)
        words = body.split()
        if not closed or "<<" in body or body.rstrip().endswith("&") and not body.rstrip().endswith("&&"):
            return [("sh", code)]
        if words and (words[0] in _SHELL_STATE or re.match(r"[A-Za-z_][A-Za-z0-9_]*(\[.*\])?\+?=", words[0])):
            return [("sh", code)]
        if out and out[-1][0] == "sh":
            out[-1] = ("sh", f"{out[-1][1]}{line}\n")
        elif words:
            out.append(("sh", f"{line}\n"))
    return out


def shown(stdout: str) -> str:
    """Output as a page shows it: paths inside this checkout relative to it, and the bundled runs as ``traces/`` (``cosim
    demo`` names its bundled run where cosim is installed: ``site-packages/cosim/_traces`` after ``pip install .``), so
    a page reads the same on every machine and install."""
    from importlib import resources

    installed = str(resources.files("cosim").joinpath("_traces"))
    return stdout.replace(f"{installed}{os.sep}", "traces/").replace(f"{REPO}{os.sep}", "")


#: what changes from run to run in a shown output, and how the page and the test both write it
VOLATILE = [
    (re.compile(r"/tmp/[\w./-]*?/cosim/"), ""),  # the fresh folder a block ran in
    (re.compile(r"\bfit time \d+(\.\d+)? s\b"), "fit time N s"),  # cosim fit's own wall time
]


def normalised(text: str) -> str:
    """``text`` with what changes from run to run (:data:`VOLATILE`) written one way, and no trailing spaces."""
    for pattern, fixed in VOLATILE:
        text = pattern.sub(fixed, text)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def page_outputs(page: str) -> dict[int, str]:
    """Run every block of ``page`` in order, in a fresh clone-like folder: ``{block index: output as shown}`` for the
    blocks whose output the page shows (a shown one may read what an earlier one wrote)."""
    found = blocks(page)
    outputs = {}
    with tempfile.TemporaryDirectory() as tmp:
        cwd = checkout(Path(tmp))
        for block in found:
            if block.skipped:
                continue
            result = run_block(block, cwd)
            if result.returncode != 0:
                raise RuntimeError(f"{page}, block {block.index}: exit {result.returncode}: {result.stderr.strip()[-400:]}")
            if block.output is not None:  # as printed (the page keeps its timings); the test compares them normalised
                outputs[block.index] = "\n".join(line.rstrip() for line in shown(result.stdout).splitlines()) + "\n"
    return outputs


def fill_pages(pages=None) -> list[str]:
    """Write what each shown block prints now into its page's ``text`` block; the pages changed."""
    changed = []
    for page in pages or PAGES:
        found = [b for b in blocks(page) if b.output is not None]
        if not found or (any(b.needs_shared for b in blocks(page)) and not (REPO.parent / "shared").is_dir()):
            continue
        outputs = page_outputs(page)
        path = DOCS / page
        text = path.read_text()
        for block in reversed(found):  # from the end, so the earlier spans stay where they are
            assert block.span is not None
            text = text[: block.span[0]] + outputs[block.index] + text[block.span[1] :]
        if text != path.read_text():
            path.write_text(text)
            changed.append(page)
    return changed


def readme_demo_lines() -> tuple[str, str]:
    """README's ``cosim demo`` lines (the text block after "`cosim demo` prints"), and the ones it must show: the
    tutorial's checked ``cosim demo`` output without its first line (the run's description, which README says above)."""
    demo = next(b for b in blocks("tutorial.md") if b.text.strip().startswith("cosim demo") and b.output is not None)
    readme = (REPO / "README.md").read_text()
    in_readme = readme.split("`cosim demo` prints", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    return in_readme, "".join(normalised(demo.output).splitlines(keepends=True)[1:])


def fill_readme_demo() -> bool:
    """Write the tutorial's ``cosim demo`` output (run and written by :func:`fill_pages`) into README; True if changed."""
    shown_now, printed = readme_demo_lines()
    if shown_now == printed:
        return False
    path = REPO / "README.md"
    head, tail = path.read_text().split("`cosim demo` prints", 1)
    before, rest = tail.split("```text\n", 1)
    path.write_text(head + "`cosim demo` prints" + before + "```text\n" + printed + rest[len(shown_now) :])
    return True


if __name__ == "__main__":  # python docs/_runnable.py [PAGE ...]: write the shown outputs into the pages
    for page in fill_pages(sys.argv[1:] or None):
        print(f"docs/{page}")
    if fill_readme_demo():
        print("README.md (cosim demo's lines, from tutorial.md's)")
