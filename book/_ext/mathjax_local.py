"""MathJax from the book's own folder: the pages render maths opened from disk, with no network.

The files come from the MathJax 3 copy of the package sphinx-mathjax-offline (its own extension
would copy all 24 MB of it). The pages load one of them, ``tex-chtml.js`` (conf.py's ``mathjax_path``):
TeX in, HTML with CSS out, its TeX packages, menu and assistive MathML built in. What it fetches
afterwards is what ``shipped()`` lists, copied into ``_static/mathjax`` after a successful HTML build:

- the fonts of its CHTML output (``output/chtml/fonts/woff-v2/``): a page asks only for the fonts its
  formulas use, and every one is shipped, so a new formula cannot ask for a missing one;
- the SVG output and its font (``output/svg.js``, ``output/svg/fonts/tex.js``), which MathJax's menu
  loads when a reader picks 「Math Renderer → SVG」.

Everything else stays out: the other combined files, and the speech explorer of the menu's
accessibility options with its speech rules (``a11y/``, ``sre/``), which cannot work on a page opened
from disk anyway (the browser refuses the rule files it fetches there). A formula that needs a TeX
extension ``tex-chtml.js`` does not hold would make MathJax fetch it: ``tests/test_mathjax.py``
typesets every page in Chromium and fails on a MathJax request for a file not shipped.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util.fileutil import copy_asset_file

# Found, not imported: the package's name has hyphens, and its own setup is not used.
MATHJAX = (
    Path(importlib.util.find_spec("sphinx-mathjax-offline").origin).parent / "static" / "mathjax"
)
ENTRY = "tex-chtml.js"
FONTS = "output/chtml/fonts/woff-v2"
SVG = ("output/svg.js", "output/svg/fonts/tex.js")


def shipped(source: Path = MATHJAX) -> list[str]:
    """The files copied into ``_static/mathjax``, relative to it."""
    fonts = [path.relative_to(source).as_posix() for path in (source / FONTS).glob("*.woff")]
    return sorted([ENTRY, *fonts, *SVG])


def _copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / "mathjax"
    for name in shipped():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        copy_asset_file(MATHJAX / name, target / name)


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", _copy_mathjax)
    return {"version": "2.0", "parallel_read_safe": True, "parallel_write_safe": True}
