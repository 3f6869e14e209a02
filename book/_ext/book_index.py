"""The book's index: the functions a page shows, and Chinese terms sorted by their pinyin initial.

- A ``literalinclude`` with ``:pyobject:`` (how a page shows one function of ``code/``) also makes
  an index entry「name()（file）」 that points at the listing, so the index lists every function the
  chapter explains, with the pages that show it.
- Glossary terms carry their pinyin initial as index key (``可见性表 : K`` in ``glossary.md``).
  The HTML index groups them under that letter, next to the Latin entries. LaTeX's index ignores the
  key, so xindy would sort Chinese terms by code point after all Latin letters; here the key is put
  in front of the sort string (``\\index{k可见性表@可见性表}``), so the PDF's 索引 has the same
  letter groups as the HTML one.
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.directives.code import LiteralInclude
from sphinx.writers.latex import LaTeXTranslator

#: What this module relies on that upstream does not document: for each distribution, the version it
#: was checked against and the API that is missing (tests/test_public_ground.py fails on an upgrade).
UNDOCUMENTED = {
    "sphinx": (
        "9.0.4",
        "no documented way to escape an index entry for LaTeX or to give it a sort key: _escape copies "
        "the escaping of LaTeXTranslator.visit_index, which this calls for the other entries",
    ),
}


class IndexedLiteralInclude(LiteralInclude):
    """``literalinclude`` as usual; with ``:pyobject:`` also an index entry for that function."""

    def run(self) -> list[nodes.Node]:
        result = super().run()
        name = self.options.get("pyobject")
        if not name:
            return result
        filename = self.arguments[0].rsplit("/", 1)[-1]
        target_id = f"index-{self.env.new_serialno('index')}"
        target = nodes.target("", "", ids=[target_id])
        entry = ("single", f"{name}()（{filename}）", target_id, False, None)
        index = addnodes.index(entries=[entry], inline=False)
        self.set_source_info(index)
        return [index, target, *result]


def _escape(self: LaTeXTranslator, value: str) -> str:
    # As Sphinx escapes an index entry for makeindex/xindy (sphinx/writers/latex.py, visit_index).
    value = self.encode(value)
    value = value.replace(r"\{", r"\sphinxleftcurlybrace{}").replace(
        r"\}", r"\sphinxrightcurlybrace{}"
    )
    return (
        value.replace('"', '""').replace("@", '"@').replace("!", '"!').replace("|", r"\textbar{}")
    )


def visit_index_latex(self: LaTeXTranslator, node: addnodes.index) -> None:
    """Write single entries that have a key with the key in front of their sort string."""
    entries = node["entries"]
    keyed = [e for e in entries if e[0] == "single" and e[4] and ";" not in e[1]]
    if not node.get("inline", True) and keyed:
        self.body.append("\n")
    for _type, string, _target, main, key in keyed:
        text = _escape(self, string)
        self.body.append(
            rf"\index{{{_escape(self, key.lower())}{text}@\spxentry{{{text}}}{'|spxpagem' if main else ''}}}"
        )
    node["entries"] = [e for e in entries if e not in keyed]
    try:
        LaTeXTranslator.visit_index(self, node)  # the other entries, as Sphinx writes them
    finally:
        node["entries"] = entries


def setup(app: Sphinx) -> dict:
    app.add_directive("literalinclude", IndexedLiteralInclude, override=True)
    app.add_node(addnodes.index, override=True, latex=(visit_index_latex, None))
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
