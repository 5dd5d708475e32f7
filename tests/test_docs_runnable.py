"""Every shell and Python block of README, the tutorial and the how-tos that use bundled data runs as written (#46, #53).

Each page's blocks run in order in one fresh folder laid out as a clone (docs/_runnable.py), with the ``cosim`` of
this environment; a page's placeholders (``m5out/``) are replaced by the bundled files the page says they stand for.
Every output a page shows in its Markdown (a ``text`` block after docs/_runnable.py's MARK, written by
``python docs/_runnable.py``) must be what its block prints now, up to the volatile bits ``normalised`` names (a
temporary folder, a CPU time); README's demo output is checked against ``cosim demo``.
"""

from __future__ import annotations

import sys
import time

import pytest
from helpers import REPO, SHARED

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
        result = run_block(block, cwd)
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
