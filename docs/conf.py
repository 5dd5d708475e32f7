"""Sphinx configuration for cosim's documentation.

Why Sphinx (with MyST for Markdown pages): its autodoc reads the package's
docstrings, which carry the units, into the API reference, and the CLI and
counter-map references are generated here from the code and data at build
time, so no reference page can drift from the code.  Built in CI with -W
(every warning is an error).
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS))

from _generate import generate_all  # noqa: E402

import cosim  # noqa: E402

project = "cosim"
release = version = cosim.__version__
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = [
    "_build",
    "_generated/*.png",
    "_generated/validation-table.md",
    "_generated/silicon-*.md",
    "_generated/kernel-*.md",
    "_generated/gpu-energy-table.md",
    "_generated/gpu-energy-public-table.md",
    "_generated/gpu-energy-public-names.md",
    "_generated/gpu-energy-made-table.md",
    "_generated/ruby-runs.md",
    "_generated/whatif-score-table.md",
]  # included by explanation/validation.md and the kernel how-tos
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3
html_theme = "alabaster"
html_title = f"cosim {release}"
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
suppress_warnings = ["myst.header"]

generate_all(DOCS / "_generated")
