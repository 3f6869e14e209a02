"""Give the PDF edition the book's chapter structure: numbered as in the HTML, pages as sections.

Sphinx's LaTeX builder pastes every page listed in a toctree where the toctree stands. Two things
then go wrong for this book:

- A page's toctree often comes at the end of one of its subsections (``ch02/index.md`` closes
  with its toctree under "三个容易混成一件事的步骤"), so the sub-pages would be typeset as
  sub-sub-sections of that subsection. Here they are moved up to the end of the page's own
  top section: ``ch02/mask`` becomes a section of chapter 2, as it is a child of ``ch02/index``
  in the HTML navigation.
- LaTeX counts chapters from 1, but the book's chapters are numbered by their folders
  (``ch02/`` is 第2章, like ``code/02_attention.py``). Before each page whose name matches
  ``pdf_chapters_docname`` (default ``ch<number>/index``) the chapter counter is set so that
  the chapter gets that number.

- The reference pages after the chapters (the glossary: ``pdf_chapters_appendix``) are
  appendices, 「附录 A」 and so on, not 第3章: ``\appendix`` goes before the first of them.
  (The bibliography is LaTeX's own unnumbered chapter 参考文献 at the end: see page_refs.py.)

All changes happen only in the assembled LaTeX tree; the HTML is untouched.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform


def _container(node: nodes.Element) -> nodes.Element:
    """The pasted page (or the whole document) that ``node`` sits in."""
    parent = node.parent
    while not isinstance(parent, (addnodes.start_of_file, nodes.document)):
        parent = parent.parent
    return parent


def _top_section(node: nodes.Element, container: nodes.Element) -> nodes.section | None:
    """The outermost section between ``node`` and its page ``container``."""
    top = None
    parent = node.parent
    while parent is not container:
        if isinstance(parent, nodes.section):
            top = parent
        parent = parent.parent
    return top


class PdfChapters(SphinxPostTransform):
    """Move pasted sub-pages to their page's top level and number chapters by their folder."""

    default_priority = 500
    formats = ("latex",)

    def run(self, **kwargs: object) -> None:
        pattern = re.compile(self.config.pdf_chapters_docname)
        appendix = re.compile(self.config.pdf_chapters_appendix)
        in_appendix = False
        for page in list(self.document.findall(addnodes.start_of_file)):
            top = _top_section(page, _container(page))
            if top is not None and page.parent is not top:
                page.parent.remove(page)
                top.append(page)
            match = pattern.fullmatch(page["docname"])
            if match:
                number = int(match.group("number"))
                counter = nodes.raw(
                    "", rf"\setcounter{{chapter}}{{{number - 1}}}" + "\n", format="latex"
                )
                page.parent.insert(page.parent.index(page), counter)
            if not in_appendix and appendix.fullmatch(page["docname"]):
                in_appendix = True
                page.parent.insert(
                    page.parent.index(page), nodes.raw("", "\\appendix\n", format="latex")
                )


def setup(app: Sphinx) -> dict:
    app.add_config_value("pdf_chapters_docname", r"ch(?P<number>\d+)/index", "env", types=[str])
    app.add_config_value("pdf_chapters_appendix", r"glossary", "env", types=[str])
    app.add_post_transform(PdfChapters)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
