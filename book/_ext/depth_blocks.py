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

#: What this module relies on that upstream does not document: for each distribution, the version it
#: was checked against and the API that is missing (tests/test_public_ground.py fails on an upgrade).
UNDOCUMENTED = {
    "sphinx-design": (
        "0.8.0",
        "no documented node or event for a dropdown: is_dropdown reads its container's "
        "design_component, has_title and leading rubric, and DepthBoxes runs at the priority of its "
        "dropdown post-transform (199, sphinx_design/dropdown.py)",
    ),
}

#: Every depth block's title begins with this (tests/test_reading.py holds the pages to it).
DEPTH_PREFIX = "深入："


def is_dropdown(node: nodes.Node) -> bool:
    return isinstance(node, nodes.container) and node.get("design_component") == "dropdown"


class DepthBoxes(SphinxPostTransform):
    """Outside HTML, a dropdown becomes an admonition box titled as the dropdown is."""

    default_priority = 199  # where sphinx-design turns dropdowns into <details> for HTML
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
