"""Every shell and Python block of the tutorial and of the how-tos that use bundled data runs as written (issue #46).

Each page's blocks run in order in one fresh folder laid out as a clone (docs/_runnable.py), with the ``cosim`` of
this environment; a page's placeholders (``m5out/``) are replaced by the bundled files the page says they stand for.
The outputs those pages show are written from the same runs when the docs build (docs/_generate.py), so this test
also checks that README's demo output is what ``cosim demo`` prints.
"""

from __future__ import annotations

import sys
import time

import pytest
from helpers import REPO, SHARED

sys.path.insert(0, str(REPO / "docs"))
from _runnable import NOT_RUN, PAGES, blocks, checkout, run_block, shown  # noqa: E402


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
    start, ran = time.perf_counter(), 0
    for block in found:
        if block.skipped:
            continue
        result = run_block(block, cwd)
        assert result.returncode == 0, f"{page}, block {block.index}:\n{block.code}\n{result.stderr[-2000:]}"
        assert "Traceback" not in result.stderr, result.stderr[-2000:]
        ran += 1
    print(f"\n{page}: {ran} of {len(found)} blocks run in {time.perf_counter() - start:.1f} s")
    assert ran >= len(found) - sum(1 for b in found if b.skipped)


def test_readme_shows_what_cosim_demo_prints(tmp_path):
    """README's demo output is the command's own: its lines, as ``cosim demo`` prints them in a fresh folder."""
    from _runnable import Block

    result = run_block(Block("tutorial.md", 0, "sh", "cosim demo", None), checkout(tmp_path))
    assert result.returncode == 0, result.stderr
    readme = (REPO / "README.md").read_text()
    in_readme = readme.split("`cosim demo` prints", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    printed = shown(result.stdout).splitlines()[1:]  # the first line is the run's description, which README says above
    assert in_readme.splitlines() == printed
