"""Each builder gets its figures in the one format it uses: SVG for the HTML, PDF for the LaTeX edition.

The pages' figures are drawn in their notebooks (``chapter.fmt.FigureImage``), which read the format
from ``BOOK_FIGURE_FORMATS``; the kernels inherit it from this process. Drawing only one format saves
each page with a figure its second drawing. The pages read by one builder keep that builder's format in
their doctrees, so a build with a builder of the other format reads (and runs) them again.
"""

from __future__ import annotations

import os

from sphinx.application import Sphinx

VARIABLE = "BOOK_FIGURE_FORMATS"


def formats(builder_format: str) -> str:
    """The figure format a builder takes: ``pdf`` for LaTeX, ``svg`` for every other builder."""
    return "pdf" if builder_format == "latex" else "svg"


def _set(app: Sphinx) -> None:
    os.environ[VARIABLE] = formats(app.builder.format)


def _outdated(app: Sphinx, env, added, changed, removed) -> list[str]:
    """Every page read with the other format is read again; then the environment records this one."""
    wanted = formats(app.builder.format)
    stale = (
        []
        if getattr(env, "book_figure_formats", wanted) == wanted
        else sorted(env.found_docs - added)
    )
    env.book_figure_formats = wanted
    return stale


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", _set)
    app.connect("env-get-outdated", _outdated)
    return {
        "version": "1.0",
        "parallel_read_safe": True,
        "parallel_write_safe": True,
        "env_version": 1,
    }
