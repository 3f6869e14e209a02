"""The explore panel: an HTML-only companion of a step-figure, driven by precomputed states.

Usage: the option ``:explore: module:function`` on a ``step-figure``. The function (in
``code_deps_dir``, like the frames function) returns plain JSON data: every state the panel's
controls can reach, computed by the book's code (see ``chapter.mask_figure.f12_explore_states``). The
page ships that data inside the figure as ``<script type="application/json">``; the script
``step_figure_explore.js`` builds the controls and only looks states up, so the panel never
shows a number the code did not compute.

Without JavaScript there is nothing to see (the container is ``hidden`` and holds only the data),
and the LaTeX and text builders skip the node: the printed figure is the frames alone.
"""

from __future__ import annotations

import json
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

# What the script reads; anything else in the data is the code's own business.
REQUIRED = (
    "choices",
    "start",
    "counts",
    "words",
    "cells",
    "mask_cells",
    "keys",
    "labels",
    "prefix",
    "lost_prefix",
    "wrong_labels",
    "text",
    "sentences",
    "rows",
    "states",
)


class ExploreDataError(ValueError):
    """The explore function returned data the panel cannot use; the message says what."""


class step_figure_explore(nodes.General, nodes.Element):
    """The panel's data (attribute ``data``: a JSON string) and the page's line that introduces it
    (``intro``: the ``:explore-intro:`` option). Written by HTML builders only."""


def explore_json(data: Any) -> str:
    """Check the top level of the data and write it as compact JSON that is safe inside <script>."""
    if not isinstance(data, dict):
        raise ExploreDataError(f"must be a dict, got {type(data).__name__}")
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise ExploreDataError(f"lacks {missing}")
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ExploreDataError(f"is not plain JSON data: {error}") from None
    # "</script>" or "<!--" inside a string must not end or confuse the script element.
    return text.replace("<", "\\u003c")


def visit_explore_html(self, node: step_figure_explore) -> None:
    # hidden: without the script the reader sees nothing here, not a dead control.
    self.body.append(
        self.starttag(
            node,
            "div",
            CLASS="step-figure-explore",
            hidden="hidden",
            **{"data-intro": node.get("intro", "")},
        )
    )
    self.body.append(
        f'<script type="application/json" class="step-figure-explore-data">{node["data"]}</script>'
    )
    self.body.append("</div>\n")
    raise nodes.SkipNode


def visit_skip(self, node: nodes.Element) -> None:
    raise nodes.SkipNode


def has_explore(doctree: nodes.Node) -> bool:
    return next(doctree.findall(step_figure_explore), None) is not None


def _skip_elsewhere(app: Sphinx) -> None:
    # Every builder but HTML (latex, text, man, ...) leaves the panel out.
    if app.builder.format != "html":
        app.add_node(step_figure_explore, override=True, **{app.builder.name: (visit_skip, None)})


def add_explore_node(app: Sphinx) -> None:
    app.add_node(
        step_figure_explore,
        override=True,
        html=(visit_explore_html, None),
        latex=(visit_skip, None),
        text=(visit_skip, None),
    )
    app.connect("builder-inited", _skip_elsewhere)
