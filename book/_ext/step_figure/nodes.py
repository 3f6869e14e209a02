"""The figure's nodes and how each builder writes them.

The tree is output-neutral: four thin custom containers around standard docutils paragraphs
and tables. A builder therefore only has to decide what the containers become; everything
inside them (captions, tables, rules, explanations) is written by the builder's own code.

    step_figure                 the whole figure (heading, title, question, MyST body, help)
      step_figure_frames        the frames; in HTML the player's stage
        step_figure_frame       one frame: caption, tables, rule, explanation
      step_figure_help          how to use the player: HTML only, no keys exist elsewhere
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx


class step_figure(nodes.General, nodes.Element):
    """The whole figure. Attributes: ``label``, ``title``, ``total``, ``dwell_ms``."""


class step_figure_frames(nodes.General, nodes.Element):
    """The sequence of frames."""


class step_figure_frame(nodes.General, nodes.Element):
    """One frame. Attributes: ``step`` (1-based) and ``total``."""


class step_figure_help(nodes.General, nodes.TextElement):
    """A line on how to drive the player; written by HTML builders only."""


def has_step_figure(doctree: nodes.Node) -> bool:
    return next(doctree.findall(step_figure), None) is not None


# -- HTML: real markup first; step_figure.js finds it through the data-* attributes ---------------


def visit_figure_html(self, node: step_figure) -> None:
    attributes = {"data-step-figure": node["label"], "data-dwell": str(node["dwell_ms"])}
    self.body.append(self.starttag(node, "div", CLASS="step-figure", **attributes))


def visit_frames_html(self, node: step_figure_frames) -> None:
    figure = node.parent
    attributes = {
        # Focusable even without the script, so a keyboard can scroll a wide table sideways.
        "tabindex": "0",
        "role": "group",
        "aria-label": f"{figure['label']}：{figure['title']}（共{figure['total']}步）".lstrip("："),
    }
    self.body.append(self.starttag(node, "div", CLASS="step-figure-stage", **attributes))


def visit_frame_html(self, node: step_figure_frame) -> None:
    attributes = {"data-step": str(node["step"])}
    self.body.append(self.starttag(node, "div", CLASS="step-figure-frame", **attributes))


def depart_div_html(self, node: nodes.Element) -> None:
    self.body.append("</div>\n")


def visit_help_html(self, node: step_figure_help) -> None:
    self.body.append(self.starttag(node, "p", CLASS="step-figure-help"))


def depart_help_html(self, node: step_figure_help) -> None:
    self.body.append("</p>\n")


# -- LaTeX: a static sequence; rules set the figure off from the running text --------------------


def visit_figure_latex(self, node: step_figure) -> None:
    self.body.append("\n\n\\par\\medskip\\noindent\\rule{\\linewidth}{0.4pt}\\par\\nobreak\n")


def depart_figure_latex(self, node: step_figure) -> None:
    self.body.append("\n\n\\par\\noindent\\rule{\\linewidth}{0.4pt}\\par\\medskip\n\n")


def visit_frame_latex(self, node: step_figure_frame) -> None:
    # Keep a frame's caption on the page of its table (needspace comes with Sphinx's LaTeX).
    self.body.append("\n\n\\par\\medskip\\needspace{8\\baselineskip}\n")


def visit_skip(self, node: nodes.Element) -> None:
    raise nodes.SkipNode


def visit_pass(self, node: nodes.Element) -> None:
    pass


def depart_pass(self, node: nodes.Element) -> None:
    pass


# The text builder needs nothing around the standard nodes: they already read in order.
PASS = (visit_pass, depart_pass)
SKIP = (visit_skip, None)
HANDLERS = {
    step_figure: {
        "html": (visit_figure_html, depart_div_html),
        "latex": (visit_figure_latex, depart_figure_latex),
        "text": PASS,
    },
    step_figure_frames: {"html": (visit_frames_html, depart_div_html), "latex": PASS, "text": PASS},
    step_figure_frame: {
        "html": (visit_frame_html, depart_div_html),
        "latex": (visit_frame_latex, depart_pass),
        "text": PASS,
    },
    step_figure_help: {"html": (visit_help_html, depart_help_html), "latex": SKIP, "text": SKIP},
}


def _add_default_handlers(app: Sphinx) -> None:
    # Any other builder (man, texinfo, a third-party one) writes the standard nodes inside the
    # containers and nothing for the containers themselves, instead of failing on unknown nodes.
    if app.builder.format in {"html", "latex", "text"} or app.builder.name in {
        "html",
        "latex",
        "text",
    }:
        return
    for node in HANDLERS:
        app.add_node(
            node, override=True, **{app.builder.name: SKIP if node is step_figure_help else PASS}
        )


def add_nodes(app: Sphinx) -> None:
    # override=True: tests and sphinx-autobuild start several Sphinx apps in one process, and
    # docutils keeps node classes registered globally.
    for node, handlers in HANDLERS.items():
        app.add_node(node, override=True, **handlers)
    app.connect("builder-inited", _add_default_handlers)
