"""Depth blocks: the part of a page a reader opens on demand, titled 「深入：……」.

A page has two layers. Its core is what shows before the reader opens anything; its depth (library
observations, derivations past the main line, provenance, the full listing and the run output) sits
in sphinx-design's ``dropdown``::

    :::{dropdown} 深入：各库怎样读布尔 mask
    ...
    :::

- **HTML.** sphinx-design writes a native ``<details>``: closed until opened, opened by a click or by
  the keyboard (the ``<summary>`` takes the focus; Enter or Space opens it), and readable without
  JavaScript, since the browser itself opens it.
- **PDF and text.** The PDF is the complete edition: every depth block is printed in place as a boxed
  admonition under its own title, so what the HTML folds away is there on paper. sphinx-design leaves
  a plain container with a rubric for builders other than HTML; this extension turns it into that box.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_design.shared import is_component

#: What this module relies on that upstream does not document, named as tests/test_public_ground.py
#: finds it: for each distribution, the version it was checked against and, for each reliance, the
#: upstream API that is missing (the test fails on an upgrade, and on a reliance not named here).
UNDOCUMENTED = {
    "sphinx-design": (
        "0.8.0",
        {
            "sphinx_design.shared.is_component": (
                "sphinx-design documents the dropdown directive, not the node it makes: a dropdown "
                "is found with sphinx-design's own test, its title by has_title and leading rubric"
            ),
            "DepthBoxes priority 199": (
                "needs no order against sphinx-design, whose dropdown post-transform (also 199) "
                "runs for HTML only, this one for LaTeX and text; 199 is Sphinx's documented "
                "preparation range, before the LaTeX builder's footnotes and URLs (400 on)"
            ),
        },
    ),
}

#: Every depth block's title begins with this (tests/test_reading.py holds the pages to it).
DEPTH_PREFIX = "深入："


def is_dropdown(node: nodes.Node) -> bool:
    return isinstance(node, nodes.container) and is_component(node, "dropdown")


class DepthBoxes(SphinxPostTransform):
    """Outside HTML, a dropdown becomes an admonition box titled as the dropdown is."""

    # Sphinx's preparation range (100-299): boxed before LaTeX's footnotes and URLs (400 on).
    default_priority = 199
    formats = ("latex", "text")

    def run(self, **kwargs: Any) -> None:
        for node in list(self.document.findall(is_dropdown)):
            # The box keeps the dropdown's ids: a label put just above the dropdown points at them.
            box = nodes.admonition("", classes=["depth"], ids=list(node["ids"]))
            children = list(node.children)
            if node.get("has_title") and children and isinstance(children[0], nodes.rubric):
                rubric = children.pop(0)
                box += nodes.title(rubric.rawsource, "", *rubric.children)
                box["ids"] += rubric["ids"]
            box.extend(children)
            node.replace_self(box)


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sphinx_design")
    app.add_post_transform(DepthBoxes)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
