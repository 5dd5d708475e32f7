"""Every shell and Python block of README, the tutorial and the how-tos that use bundled data runs as written (#46, #53).

Each page's blocks run in order in one fresh folder laid out as a clone (docs/_runnable.py), with the ``cosim`` of
this environment; a page's placeholders (``m5out/``) are replaced by the bundled files the page says they stand for.
Every output a page shows in its Markdown (a ``text`` block after docs/_runnable.py's MARK, written by
``python docs/_runnable.py``) must be what its block prints now, up to the volatile bits ``normalised`` names (a
temporary folder, a CPU time); README's demo output is checked against ``cosim demo``.

"As written" holds with the blocks run in this test's process (#53: a new Python for each of the pages' ~30 ``cosim``
lines was most of this file's CPU time): a shell block's plain ``cosim`` lines, with no pipe, redirection, list, glob,
expansion or assignment (docs/_runnable.py ``steps``), run ``cosim.cli.main`` with the argv bash gives the ``cosim``
program, in the block's folder (tests/helpers.run_cosim, which starts the real program where the command starts
processes of its own: ``--workers 2``, ``--scheduler``); every other line runs through bash, in the block's order,
stopping at the first that fails as ``bash -e`` does; a Python block's code runs as ``python -c`` runs it, as
``__main__`` in a namespace of its own.  ``python docs/_runnable.py`` writes the shown outputs from the real ``cosim``
program and a new Python, so this test also checks that the two ways print the same.
"""

from __future__ import annotations

import builtins
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO, SHARED, in_this_process, run_cosim

sys.path.insert(0, str(REPO / "docs"))
from _runnable import NOT_RUN, PAGES, blocks, checkout, normalised, run_block, shown  # noqa: E402


def test_every_tutorial_and_howto_page_is_run_or_says_why_not():
    pages = {"tutorial.md", "explore.md", *(p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs" / "howto").glob("*.md"))}
    assert pages <= set(PAGES) | set(NOT_RUN), sorted(pages - set(PAGES) - set(NOT_RUN))
    assert not set(PAGES) & set(NOT_RUN)
    for page, placeholders in PAGES.items():
        text = (REPO / "docs" / page).read_text()
        for placeholder in placeholders:  # each placeholder is named as such on its page, with what stands in for it
            assert f"`{placeholder}`" in text and any(b.text.count(placeholder) for b in blocks(page)), (page, placeholder)


@pytest.mark.parametrize("page", list(PAGES))
def test_the_pages_blocks_run_as_written(page, tmp_path):
    found = blocks(page)
    assert found, f"{page} has no sh or python block"
    if any(b.needs_shared for b in found) and not SHARED.is_dir():
        pytest.skip("../shared is not here")
    cwd = checkout(tmp_path)
    start, ran, compared = time.perf_counter(), 0, 0
    for block in found:
        if block.skipped:
            assert block.output is None, f"{page}, block {block.index} shows an output no test makes"
            continue
        result = run_block(block, cwd, cosim=_cosim, python=_python)
        assert result.returncode == 0, f"{page}, block {block.index}:\n{block.code}\n{result.stderr[-2000:]}"
        assert "Traceback" not in result.stderr, result.stderr[-2000:]
        ran += 1
        if block.output is not None:  # what the page shows is what the block prints (python docs/_runnable.py writes it)
            assert normalised(block.output) == normalised(shown(result.stdout)), (
                f"{page}, block {block.index}: run python docs/_runnable.py"
            )
            compared += 1
    lines = sum(len([x for x in b.text.splitlines() if x.strip() and not x.lstrip().startswith("#")]) for b in found if not b.skipped)
    print(
        f"\n{page}: {ran} of {len(found)} blocks ({lines} lines) run, {compared} shown outputs compared, in {time.perf_counter() - start:.1f} s"
    )
    assert ran == len(found) - sum(1 for b in found if b.skipped)


def _cosim(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """A shell block's plain ``cosim`` line, with the argv bash gives the ``cosim`` program, in this process."""
    return run_cosim(*argv, cwd=cwd)


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    """A Python block's code in this process as ``python -c CODE`` runs it: as ``__main__`` in a namespace of its own,
    in ``cwd``, its outputs captured; an uncaught exception prints its traceback and exits 1."""
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    return in_this_process(lambda: exec(compile(code, "<string>", "exec"), namespace), cwd=cwd, args=[sys.executable, "-c", code])


def test_shown_outputs_are_in_the_markdown_not_left_to_the_build():
    """#53: the tutorial and the how-tos filled their outputs in only when the docs were built; a reader of the
    repository page saw none.  Every shown output is now a ``text`` block in the page itself."""
    for page in PAGES:
        text = (REPO / "docs" / page).read_text()
        assert "_generated/out/" not in text, page
        for block in blocks(page):
            assert block.output is None or block.output.strip() not in ("", "(not yet run)"), (page, block.index)
    assert sum(1 for page in PAGES for b in blocks(page) if b.output is not None) >= 14


def test_readme_shows_what_cosim_demo_prints():
    """README's demo output is the command's own: its lines as the tutorial shows ``cosim demo``'s output, which
    test_the_pages_blocks_run_as_written[tutorial.md] checks against the command run in a fresh folder (one run for both)."""
    demo = next(b for b in blocks("tutorial.md") if b.text.strip().startswith("cosim demo") and b.output is not None)
    readme = (REPO / "README.md").read_text()
    in_readme = readme.split("`cosim demo` prints", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    printed = normalised(demo.output).splitlines()[1:]  # the first line is the run's description, which README says above
    assert in_readme.splitlines() == printed


def test_only_plain_cosim_lines_leave_bash():
    """docs/_runnable.steps: a line runs in this process only where bash would run ``cosim`` alone with literal
    arguments; the argv is what bash gives it (quotes removed, continuations joined, a comment dropped)."""
    from _runnable import plain_cosim, steps

    assert plain_cosim("""cosim fit a.csv --power-col "Power A15" --name 'x y'   # a comment""") == [
        "fit",
        "a.csv",
        "--power-col",
        "Power A15",
        "--name",
        "x y",
    ]
    assert plain_cosim("cosim power run/ \\\n    --cluster big=system.bigCluster#1") == [
        "power",
        "run/",
        "--cluster",
        "big=system.bigCluster#1",
    ]
    assert plain_cosim("cosim read 'a|b' \"A15 Power(W)\"") == ["read", "a|b", "A15 Power(W)"]
    assert plain_cosim("cosim read a\\\n#b") == ["read", "a#b"]  # a "#" inside a word, after a continuation
    for line in (
        "cosim gpu x 2>&1 | grep y",
        "cosim gpu x > /dev/null",
        "cosim gpu x || true",
        "cosim gpu x; ls",
        "cosim gpu *.log",
        "cosim gpu $RUN",
        'cosim gpu "$RUN"',
        "cosim gpu ~/x",
        "cosim gpu x &",
        "cosim gpu {a,b}",
        "X=1 cosim gpu x",
        "nice cosim gpu x",
        "cosim gpu 'x",
    ):
        assert plain_cosim(line) is None, line
    assert steps("cosim models\nhead -3 a.csv\ngrep b a.csv\ncosim read x -o y\n") == [
        ("cosim", ["models"]),
        ("sh", "head -3 a.csv\ngrep b a.csv\n"),
        ("cosim", ["read", "x", "-o", "y"]),
    ]
    for block in ("cd x\ncosim models\n", "export A=1\ncosim models\n", "A=1\ncosim models\n", "for f in a b; do\ncosim models\ndone\n",
                  "cat <<EOF\ncosim models\nEOF\n", "sleep 1 &\ncosim models\n", "echo 'a\ncosim models'\n"):  # fmt: skip
        assert steps(block) == [("sh", block)], block
