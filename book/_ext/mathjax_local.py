"""MathJax from the book's own folder: the pages render maths opened from disk, with no network.

The MathJax files are the copy that the package sphinx-mathjax-offline ships. That package's own
extension does just this (point ``mathjax_path`` at ``_static/mathjax`` and copy the files there
after a successful build) but does not declare itself safe for parallel reading, which keeps Sphinx
from reading (and executing) the pages in parallel; this one does the same and says so.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util.fileutil import copy_asset

MATHJAX = (
    Path(importlib.import_module("sphinx-mathjax-offline").__file__).parent / "static" / "mathjax"
)


def _copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        copy_asset(MATHJAX, Path(app.outdir) / "_static" / "mathjax")


def setup(app: Sphinx) -> dict:
    app.config.mathjax_path = "mathjax/tex-chtml.js"
    app.connect("build-finished", _copy_mathjax)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
