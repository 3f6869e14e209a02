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

#: What this module relies on that upstream does not document, named as tests/test_public_ground.py
#: finds it: for each distribution, the version it was checked against and, for each reliance, the
#: upstream API that is missing (the test fails on an upgrade, and on a reliance not named here).
UNDOCUMENTED = {
    "sphinx": (
        "9.0.4",
        {
            "sphinx.writers.latex.LaTeXTranslator.visit_index": (
                "no documented way to give a LaTeX index entry a sort key, nor to escape one: the "
                "keyed entries are written by Sphinx's own visit_index (same in 9.1.1), the key put "
                "in front of its sort string"
            ),
        },
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


def _as_sphinx_writes(self: LaTeXTranslator, entry: tuple) -> str:
    """The ``\\index{…}`` Sphinx writes for one entry, escaped its way (taken back out of the body)."""
    alone = addnodes.index(entries=[entry], inline=True)  # without a block's line breaks
    start = len(self.body)
    try:
        LaTeXTranslator.visit_index(self, alone)
    except nodes.SkipNode:
        pass
    written = "".join(self.body[start:])
    del self.body[start:]
    return written


def visit_index_latex(self: LaTeXTranslator, node: addnodes.index) -> None:
    """Write single entries that have a key with the key in front of their sort string."""
    entries = node["entries"]
    keyed = [e for e in entries if e[0] == "single" and e[4] and ";" not in e[1]]
    written = []
    for entry in keyed:
        key = entry[4].lower()
        if not (key.isascii() and key.isalpha()):
            raise ValueError(f"index key {entry[4]!r} of {entry[1]!r}: a pinyin initial, A to Z")
        sphinx = _as_sphinx_writes(self, entry)
        if not sphinx.startswith("\\index{"):
            raise ValueError(f"Sphinx wrote the index entry {entry[1]!r} as {sphinx!r}")
        written.append("\\index{" + key + sphinx.removeprefix("\\index{"))
    if not node.get("inline", True) and keyed:
        self.body.append("\n")
    self.body.extend(written)
    node["entries"] = [e for e in entries if e not in keyed]
    try:
        LaTeXTranslator.visit_index(self, node)  # the other entries, as Sphinx writes them
    finally:
        node["entries"] = entries


def setup(app: Sphinx) -> dict:
    app.add_directive("literalinclude", IndexedLiteralInclude, override=True)
    app.add_node(addnodes.index, override=True, latex=(visit_index_latex, None))
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
