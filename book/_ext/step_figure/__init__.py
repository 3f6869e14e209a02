"""``step-figure``: a figure of numbered frames whose content is computed by the book's code.

Usage in a MyST page (the argument names a function of the book side, ``code_deps_package``, or of ``code_deps_dir``)::

    :::{step-figure} chapter.mask_figure:f12_frames
    :label: F12
    :heading: 动态图解 · F12
    :title: Mask是可见性表，不是额外语义
    :question: 怎样防止读到未来，或者把PAD读成内容？

    Body in MyST: terms, and the inputs the frames assume.
    :::

``:explore: module:function`` adds a panel after the player, in HTML only, whose every state is
precomputed by that function (see ``explore.py``); ``:explore-intro:`` is the page's line under the
panel's title.

The function is called at build time and returns plain data (see ``directive.py``). Every
builder gets all frames in order: HTML as real markup that a small script turns into a player
(previous / next / play, keys, enlarge); LaTeX and text as a static sequence of captions,
tables and paragraphs.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx

from .directive import StepFigureDirective
from .explore import add_explore_node, has_explore
from .nodes import add_nodes, has_step_figure

__version__ = "1.0"

STATIC = Path(__file__).resolve().parent / "static"

# Shown under the player only once the script runs: without it there are no keys to explain.
DEFAULT_HELP = (
    "图形默认静止：用“下一步”逐步读；“播放”到最后一步自己停下。"
    "点一下图形，就能用 ← → 逐步翻看，空格播放或暂停，Home、End 跳到首尾。"
    "屏幕窄时，图形可左右滑动（键盘用 Shift + ← →），或点“放大图形”。"
    "颜色只帮助区分，每格的含义都用符号和文字写明。"
)


def _add_static_path(app: Sphinx) -> None:
    # The files are copied into _static with the theme's own, so the page needs no network.
    if app.builder.format == "html":
        app.config.html_static_path.append(str(STATIC))


def _add_assets(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    # Called per page: only pages that hold a step-figure load its CSS and script.
    if doctree is not None and has_step_figure(doctree):
        app.add_css_file("step_figure.css")
        app.add_js_file("step_figure.js", defer="defer")
    if doctree is not None and has_explore(doctree):
        app.add_css_file("step_figure_explore.css")
        app.add_js_file("step_figure_explore.js", defer="defer")


def setup(app: Sphinx) -> dict:
    # The frames come from the folder code_deps watches; its file finder notes the dependencies.
    app.setup_extension("code_deps")
    app.add_config_value("step_figure_dwell", 2.0, "env", types=frozenset({int, float}))
    app.add_config_value("step_figure_help", DEFAULT_HELP, "env", types=frozenset({str}))
    add_nodes(app)
    add_explore_node(app)
    app.add_directive("step-figure", StepFigureDirective)
    app.connect("builder-inited", _add_static_path)
    app.connect("html-page-context", _add_assets)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
