"""Take the page home: one zip of its files and one notebook, made at build time (``chapter.take_home``).

A page asks for its downloads with the directive ``{take-home}`` (in its 运行命令 section):

- **HTML.** When the page is written (``html-page-context``), its zip and notebook are written into ``<outdir>/take-home/``; the
  directive becomes a paragraph with the two download links. The notebook's exercises are the page's own
  exercise texts, read from the page as it was built (glued numbers filled in), under their numbers.
- **PDF and text.** The same paragraph names the two files (there is no file to link to on paper).

The notebook's worked example is written in the page too, beside the section it follows, with the
directive ``{notebook-example}``; it shows nothing on any builder (the page's text is unchanged)::

    :::{notebook-example}
    :edits: causal = False

    ```python
    import importlib

    att = importlib.import_module("02_attention")
    ```

    输入与本页“一步一步”一节相同：…… 改下面一格里的 `q`、`k`、`v`，再从这一格往下运行。

    ```python
    q = att.DEMO_Q
    ```

    ```python
    weights, outputs = att.attention(q, k, v, causal=causal)
    ```
    :::

Its content is the notebook's cells in order: each code block a code cell, the text between them one
Markdown cell (the notebook puts it under the heading 例子). The code cell after that text holds the
inputs the reader edits (the notebook writes an input read from a teaching constant, ``q = att.DEMO_Q``,
out as its value: ``chapter.take_home.written_out``), the next one prints what the page shows.
``edits`` (one per line) are the edits
the text suggests, each a line run after the inputs cell: tests/test_take_home.py runs each one and
checks that it changes what the example prints. The directive keeps all of this on a node of the
page's doctree, so the notebook is written from the page as it was read.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

FOLDER = "take-home"
logger = logging.getLogger(__name__)


def _module(app: Sphinx):
    """``chapter.take_home``, read afresh from the book's folders (as the figure directive reads its data)."""
    from step_figure.directive import load_fresh

    return load_fresh(
        "chapter.take_home", Path(app.config.code_deps_dir), Path(app.config.code_deps_package)
    )


class take_home_node(nodes.General, nodes.Element):
    """Where a page offers its zip and notebook; ``page`` names the page."""


def _page(docname: str) -> str:
    return docname.rsplit("/", 1)[-1]


class notebook_example_node(nodes.General, nodes.Invisible, nodes.Element):
    """A page's notebook example: ``cells``, a list of (``"markdown"`` or ``"code"``, source), and
    ``edits``, the lines its text suggests running after the inputs cell. It has no children: no
    builder shows it, and the search index does not read it."""


class NotebookExample(SphinxDirective):
    has_content = True
    option_spec = {"edits": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        cells = []
        parsed = self.parse_content_to_nodes()
        for code, run in itertools.groupby(parsed, lambda n: isinstance(n, nodes.literal_block)):
            if code:
                cells += [("code", block.astext().removesuffix("\n")) for block in run]
            else:
                cells.append(("markdown", _blocks(run)))
        kinds = [kind for kind, _ in cells]
        text = kinds.index("markdown") if "markdown" in kinds else len(kinds)
        if kinds[text + 1 : text + 3] != ["code", "code"]:
            raise self.error(
                "notebook-example: 说明文字之后要有两个代码块（读者改的输入，打印书页上的数）"
            )
        edits = self.options.get("edits", "").splitlines()
        return [notebook_example_node(cells=cells, edits=[e for e in edits if e.strip()])]


class TakeHome(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        take_home = _module(self.env.app)
        page = _page(self.env.docname)
        if page not in take_home.TEACHING:
            raise self.error(f"take-home: 页面 {page} 没有教学文件（chapter.take_home.TEACHING）")
        return [
            take_home_node(
                page=page, zip=take_home.zip_name(page), notebook=take_home.notebook_name(page)
            )
        ]


def _links(node: take_home_node) -> tuple[str, str]:
    return node["zip"], node["notebook"]


def visit_html(self, node: take_home_node) -> None:
    zip_file, notebook = _links(node)
    href = f"{'../' * self.builder.current_docname.count('/')}{FOLDER}/"
    self.body.append(
        f'<p class="take-home">下载本页的全部文件（解压到一个空文件夹即可运行）：'
        f'<a class="reference external take-home-zip" href="{href}{zip_file}" download="">{zip_file}</a>；'
        f"配套的 notebook（放进同一个文件夹，用 Jupyter 打开）："
        f'<a class="reference external take-home-notebook" href="{href}{notebook}" download="">{notebook}</a>。</p>\n'
    )
    raise nodes.SkipNode


def visit_latex(self, node: take_home_node) -> None:
    zip_file, notebook = (name.replace("_", r"\_") for name in _links(node))
    self.body.append(
        f"\n\n网页版的这一节可以下载本页的全部文件 \\sphinxcode{{{zip_file}}}"
        f" 和配套的 notebook \\sphinxcode{{{notebook}}}：解压到同一个文件夹即可运行。\n\n"
    )
    raise nodes.SkipNode


def visit_text(self, node: take_home_node) -> None:
    zip_file, notebook = _links(node)
    self.add_text(f"下载：{zip_file}、{notebook}")
    raise nodes.SkipNode


def _skip(self, node: notebook_example_node) -> None:
    raise nodes.SkipNode


def _exercises(doctree: nodes.document) -> list[tuple[str, str]]:
    """The page's exercises as (「练习 2.3.1（标题）」, their text in Markdown), glued values filled in."""
    from book_exercises import numbered_exercises

    found = []
    for title, text in numbered_exercises(doctree):
        # The title as the page shows it: 「练习 2.3.1 （标题）」; the notebook's heading closes the gap
        # before the bracket.
        found.append((title.strip().replace(" （", "（", 1), _blocks(text).strip()))
    return found


# -- an exercise's text as the notebook's Markdown: what the page shows, as CommonMark renders it ------
_ESCAPE = str.maketrans({c: "\\" + c for c in "\\`*_[]<>$#|"})


def _inline(node: nodes.Node) -> str:
    """A paragraph's content: code in backticks, maths in ``$…$``, everything else as its text."""
    if isinstance(node, nodes.Text):
        return node.astext().replace("\n", " ").translate(_ESCAPE)
    if isinstance(node, nodes.literal):
        text = node.astext()
        fence = "``" if "`" in text else "`"
        return f"{fence}{text}{fence}"
    if isinstance(node, nodes.math):
        return f"${node.astext().strip()}$"
    inner = "".join(_inline(child) for child in node.children)
    if isinstance(node, nodes.strong):
        return f"**{inner}**"
    if isinstance(node, nodes.emphasis):
        return f"*{inner}*"
    return inner


def _blocks(children) -> str:
    """Block nodes in Markdown: paragraphs, a titled box as a quoted block, code and doctests fenced."""
    parts = []
    for node in children:
        if isinstance(node, nodes.paragraph):
            parts.append(_inline(node))
        elif isinstance(node, (nodes.literal_block, nodes.doctest_block)):
            parts.append("```python\n" + node.astext().rstrip("\n") + "\n```")
        elif isinstance(node, nodes.math_block):
            parts.append("$$\n" + node.astext().strip() + "\n$$")
        elif (
            isinstance(node, nodes.admonition)
            and node.children
            and isinstance(node[0], nodes.title)
        ):
            body = f"**{_inline(node[0])}**\n\n" + _blocks(node.children[1:])
            parts.append("\n".join(f"> {line}".rstrip() for line in body.strip().splitlines()))
        elif isinstance(node, (nodes.bullet_list, nodes.enumerated_list)):
            mark = "-" if isinstance(node, nodes.bullet_list) else "1."
            parts.append(
                "\n".join(f"{mark} {_blocks(item.children).strip()}" for item in node.children)
            )
        elif isinstance(node, nodes.Element):
            parts.append(_blocks(node.children))
        else:
            parts.append(_inline(node))
    return "\n\n".join(p.strip("\n") for p in parts if p.strip())


def _write(
    app: Sphinx, docname: str, templatename: str, context: dict, doctree: nodes.document | None
) -> None:
    if doctree is None or app.builder.format != "html":
        return
    if not any(True for _ in doctree.findall(take_home_node)):
        return
    examples = list(doctree.findall(notebook_example_node))
    if len(examples) != 1:
        logger.warning(
            "take-home: 页面要有一个 notebook-example（notebook 的例子），找到 %d 个",
            len(examples),
            location=docname,
        )
        return
    take_home = _module(app)
    page = _page(docname)
    folder = Path(app.outdir) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    title = app.env.titles[docname].astext()
    take_home.write_zip(page, title, folder)
    take_home.write_notebook(page, title, examples[0]["cells"], _exercises(doctree), folder)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_node(
        take_home_node, html=(visit_html, None), latex=(visit_latex, None), text=(visit_text, None)
    )
    app.add_directive("take-home", TakeHome)
    app.add_node(
        notebook_example_node,
        html=(_skip, None),
        latex=(_skip, None),
        text=(_skip, None),
    )
    app.add_directive("notebook-example", NotebookExample)
    # When the page is written (with -j, in one of Sphinx's writing processes).
    app.connect("html-page-context", _write)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
