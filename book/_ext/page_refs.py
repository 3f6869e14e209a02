"""Each page that cites lists its own references at its end, in the HTML edition.

Every ``{cite}`` in the book links to the one bibliography on ``references.md`` (in the PDF the
chapter 参考文献, where LaTeX gathers all entries anyway). A reader of one HTML page should still
see, at the foot of that page, what it cites. While a page that holds a citation role is read,
this extension appends a block visible in HTML only: a rubric 「本页参考文献」 and a bullet-list
bibliography filtered to the keys cited on that page. Bullet-list bibliographies are not
citation targets, so the page's citations keep linking to the one full bibliography.

In the PDF, LaTeX collects every entry into one unnumbered chapter 参考文献 at the end of the book
(``\bibname``, set in ``conf.py``). The bibliography page itself is reduced to its entries there,
so that its title and introduction do not make a second, empty 参考文献 chapter.

Two things keep the bibliography cheap, both through pybtex's and sphinxcontrib-bibtex's documented
plugin interface (``register_plugin``):

- The book's style, ``book`` (conf.py's ``bibtex_default_style``), is pybtex's ``plain`` style that
  formats an entry once per process: sphinxcontrib-bibtex formats every bibliography on every build,
  nothing changed or not, and each page's own list here formats its entries again.
- pybtex and sphinxcontrib-bibtex look a style up among the installed packages' entry points on every
  use, a scan of every installed distribution (a few milliseconds each, dozens of times per build).
  When the builder starts, the styles this configuration uses are looked up once and registered as
  runtime plugins, which both libraries consult first. A style missing from that list is still found
  the slow way.
"""

from __future__ import annotations

import re

import pybtex.plugin
import sphinxcontrib.bibtex.plugin
from docutils import nodes
from pybtex.style import FormattedEntry
from pybtex.style.formatting.plain import Style as PlainStyle
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.writers.html5 import HTML5Translator

#: What this module relies on that upstream does not document, named as tests/test_public_ground.py
#: finds it: for each distribution, the version it was checked against and, for each reliance, the
#: upstream API that is missing (the test fails on an upgrade, and on a reliance not named here).
UNDOCUMENTED = {
    "sphinxcontrib-bibtex": (
        "2.7.0",
        {
            "builder-inited handler priority 400": (
                "no documented order of sphinxcontrib-bibtex's builder-inited handlers: the styles "
                "are registered before them"
            ),
            "KeepOnlyEntries priority 700": (
                "after sphinxcontrib-bibtex's bibliography post-transform (5) and before the LaTeX "
                "builder's BibliographyTransform (750), whose priority Sphinx does not document"
            ),
        },
    ),
    "sphinx": (
        "9.0.4",
        {
            "sphinx.writers.html5.HTML5Translator.depart_citation": (
                "no documented way to change only the opening tag HTML writes for a citation: the "
                "book's visit_citation_html is paired with the translator's own depart_citation"
            ),
        },
    ),
}

CITES = re.compile(r"\{(?:foot)?cite(?::\w+)?\}`")

BLOCK = """

:::{{only}} html
```{{rubric}} {title}
```
```{{bibliography}}
:list: bullet
:filter: docname in docnames
```
:::
"""


def _append_page_references(app: Sphinx, docname: str, source: list[str]) -> None:
    if docname == app.config.page_refs_bibliography or not CITES.search(source[0]):
        return
    source[0] += BLOCK.format(title=app.config.page_refs_title)


class KeepOnlyEntries(SphinxPostTransform):
    """LaTeX: the bibliography page keeps only its citations, which LaTeX gathers at the end."""

    default_priority = 700  # before Sphinx gathers the citations (its BibliographyTransform, 750)
    formats = ("latex",)

    def run(self, **kwargs: object) -> None:
        for page in self.document.findall(addnodes.start_of_file):
            docname = page["docname"]
            if docname != self.config.page_refs_bibliography:
                continue
            entries = list(page.findall(nodes.citation))
            for entry in entries:
                entry.parent.remove(entry)
            # Links to the page ({ref}`参考文献 <references>`) land on the page where LaTeX's
            # 参考文献 chapter starts (its \chapter* finds the page already cleared).
            ids = [i for section in page.findall(nodes.section) for i in section["ids"]]
            labels = "".join(rf"\label{{\detokenize{{{docname}:{i}}}}}" for i in ids)
            anchor = nodes.raw(
                "", rf"\cleardoublepage\phantomsection{labels}" + "\n", format="latex"
            )
            page.children = []
            page.extend([anchor, *entries])


def visit_citation_html(self, node: nodes.citation) -> None:
    """An entry of the bibliography as a list item of its list (docutils writes role doc-biblioentry,
    which is not a list item, so screen readers and axe find a list without items)."""
    if not isinstance(node.previous_sibling(), nodes.citation):
        self.body.append('<div role="list" class="citation-list">\n')
    self.body.append(self.starttag(node, "div", classes=[node.tagname], role="listitem"))


STYLE = "book"  # the name the book's style is registered under (conf.py: bibtex_default_style)
_FORMATTED: dict = {}  # what the book's style has formatted in this process


class FormattedOnce(PlainStyle):
    """pybtex's plain style; an entry it has formatted is not formatted again.

    A bibliography numbers its entries itself, so one entry comes under several labels (its number in
    the book's bibliography and in each page's list); the plain style's text does not depend on the
    label, so the text is kept and the label put with it. The entry and the bibliography data are kept
    with the text, so their ids stay theirs.
    """

    def format_entry(self, label, entry, bib_data=None):
        how = (
            type(self.name_style),
            type(self.label_style),
            self.abbreviate_names,
            self.min_crossrefs,
        )
        key = (*how, id(entry), id(bib_data))
        if key not in _FORMATTED:
            formatted = super().format_entry(label, entry, bib_data=bib_data)
            _FORMATTED[key] = (formatted.text, entry, bib_data)
        return FormattedEntry(entry.key, _FORMATTED[key][0], label)


def _register_styles(app: Sphinx) -> None:
    """The book's style, then every style this configuration uses, as runtime plugins."""
    pybtex.plugin.register_plugin("pybtex.style.formatting", STYLE, FormattedOnce, force=True)
    style = pybtex.plugin.find_plugin("pybtex.style.formatting", app.config.bibtex_default_style)
    used = {
        "pybtex.style.formatting": [app.config.bibtex_default_style],
        # A style that names no label, name or sorting style gets pybtex's defaults for the group.
        "pybtex.style.labels": [style.default_label_style or "number"],
        "pybtex.style.names": [
            style.default_name_style or "plain",
            "last",
        ],  # "last": author-year citations
        "pybtex.style.sorting": [style.default_sorting_style or "none"],
        "pybtex.backends": ["plaintext"],  # the tooltips and the labels of citations
    }
    for group, names in used.items():
        for name in names:
            pybtex.plugin.register_plugin(
                group, name, pybtex.plugin.find_plugin(group, name), force=True
            )
    group = "sphinxcontrib.bibtex.style.referencing"
    for name in (app.config.bibtex_reference_style, app.config.bibtex_foot_reference_style):
        plugin = sphinxcontrib.bibtex.plugin.find_plugin(group, name)
        sphinxcontrib.bibtex.plugin.register_plugin(group, name, plugin, force=True)


def setup(app: Sphinx) -> dict:
    app.setup_extension("sphinxcontrib.bibtex")
    app.connect(
        "builder-inited", _register_styles, priority=400
    )  # before sphinxcontrib-bibtex's own
    app.add_config_value("page_refs_title", "本页参考文献", "env", types=[str])
    app.add_config_value("page_refs_bibliography", "references", "env", types=[str])
    app.connect("source-read", _append_page_references)
    app.add_post_transform(KeepOnlyEntries)
    app.add_node(
        nodes.citation, override=True, html=(visit_citation_html, HTML5Translator.depart_citation)
    )
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
