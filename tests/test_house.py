"""The habits of the house, checked with the tests (so CI runs them): lint, format, types, docs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from helpers import REPO


def _run(*args: str, timeout: int = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    environ = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=timeout, env=environ)


def test_ruff_lints_clean():
    run = _run("ruff", "check", "cosim", "tests", "gem5_scripts")
    assert run.returncode == 0, run.stdout[-3000:]


def test_ruff_format_is_applied():
    run = _run("ruff", "format", "--check", "cosim", "tests", "gem5_scripts")
    assert run.returncode == 0, run.stdout[-3000:]


def test_mypy_on_the_package():
    run = _run("mypy")
    assert run.returncode == 0, run.stdout[-3000:]


def test_docs_build_with_warnings_as_errors(tmp_path, whatif_suite_rows, monkeypatch):
    """The docs build; the validation page's what-if suite figures from this run's pairs (tests/conftest.py computes
    them once for this and tests/test_whatif_suite.py), not computed a second time in the build.

    ``sphinx -W --keep-going -q -b html`` runs in this process (``sphinx.cmd.build.build_main``, what ``python -m
    sphinx`` calls, with the same arguments; it restores docutils' registries when it ends): a new Python would import
    cosim, pandas and matplotlib again for the build's generated pages (#53)."""
    import contextlib
    import io
    import warnings

    from sphinx.cmd.build import build_main

    suite = tmp_path / "whatif-suite.csv"
    whatif_suite_rows.to_csv(suite, index=False)
    out = tmp_path / "html"
    args = ["-W", "--keep-going", "-q", "-b", "html", "-d", str(tmp_path / "doctrees"), str(REPO / "docs"), str(out)]
    # the pages' shown outputs are in the pages (tests/test_docs_runnable.py checks them); the build runs no block
    monkeypatch.setenv("COSIM_WHATIF_SUITE_CSV", str(suite))
    monkeypatch.chdir(REPO)
    stdout, stderr = io.StringIO(), io.StringIO()
    # Python's warnings (the figures' pricing notes, sphinx's deprecations) went to a stderr no check read when the build
    # was a process of its own; -W is about sphinx's own warnings, which build_main still makes errors
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        status = build_main(args)
    assert status == 0, (stdout.getvalue() + stderr.getvalue())[-3000:]
    for page in ("index.html", "tutorial.html", "_generated/cli.html", "_generated/api.html", "_generated/counter-maps.html"):
        assert (out / page).exists(), page
    assert "cosim read" in (out / "_generated" / "cli.html").read_text()
    assert (out / "_images").is_dir() and any((out / "_images").glob("tutorial-power*.png"))
    shutil.rmtree(REPO / "docs" / "_generated", ignore_errors=True)  # made by the build; not part of the tree


@pytest.mark.parametrize("path", ["README.md"])
def test_readme_is_a_landing_page(path):
    text = (REPO / path).read_text()
    # 120 lines until #53 put the API's calls and their output, run by tests/test_docs_runnable.py, on the page
    assert len(text.splitlines()) <= 145
    blocks = text.split("```")
    setup = [b for b in blocks[1::2] if "pip install" in b]
    assert len(setup) == 2, "exactly two set-up commands"
    assert "'.[test]'" in setup[1] and "pytest" in setup[1]
    ci = (REPO / ".ci" / "run").read_text()
    assert "pip install '.[test]'" in ci and "pytest" in ci


@pytest.mark.parametrize(
    ("extra", "package", "pages"),
    [
        ("explore", "optuna", ["README.md", "docs/explore.md", "docs/reference/design-file.md"]),
        ("kernels", "scikit-learn", ["README.md", "docs/howto/kernel-models.md"]),
        ("fit", "statsmodels", ["README.md", "docs/howto/fit-your-board.md"]),  # issue #46: the README named none of these
        ("parquet", "pyarrow", ["README.md", "docs/tutorial.md"]),
        ("distributed", "distributed", ["README.md", "docs/howto/sweep-on-a-cluster.md"]),
    ],
)
def test_the_pages_of_a_command_say_which_extra_it_needs(extra, package, pages):
    """`pip install .` leaves out the optional dependencies; each page a user reads before running the command names
    the extra (pyproject.toml's) that installs it."""
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(d.startswith(package) for d in extras[extra])
    for page in pages:
        assert f"'.[{extra}]'" in (REPO / page).read_text(), page
