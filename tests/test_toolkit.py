"""The reader's toolkit: glossary, index, references, in the HTML and in the PDF."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from bench import make_html, make_project
from bs4 import BeautifulSoup
from conftest import CHAPTER_PAGES, ROOT, flat, soup_of
from reading import PARSER

pytestmark = pytest.mark.build  # every test here reads the session's book build

GLOSSARY = ROOT / "book" / "glossary.md"
# The terms the glossary must define (each exactly once).
TERMS = [
    "查询",
    "Query",
    "键",
    "Key",
    "值",
    "Value",
    "分数",
    "可见性表",
    "因果",
    "加性 mask",
    "PAD",
    "绝对位置",
    "KV 缓存",
    "多头",
    "头维度",
    "位置旋转（RoPE）",
    "反向传播",
    "softmax",
    "温度",
]


def glossary_terms(book_html: Path) -> dict[str, str]:
    """Each term of the built glossary and its anchor."""
    page = soup_of(book_html, "glossary.html")
    return {
        dt.get_text(strip=True).rstrip("¶#").strip(): dt["id"]
        for dt in page.select("dl.glossary dt")
    }


def test_the_glossary_defines_each_term_once(book_html):
    page = soup_of(book_html, "glossary.html")
    names = [dt.get_text(strip=True).rstrip("¶#").strip() for dt in page.select("dl.glossary dt")]
    assert len(names) == len(set(names)), names
    assert set(TERMS) <= set(names), set(TERMS) - set(names)


class TermLinks(HTMLParser):
    """The href of each internal reference that holds a glossary term (``a.reference.internal`` around
    ``span.std-term``), read tag by tag rather than as a whole tree per page.

    >>> page = TermLinks()
    >>> page.feed('<a class="reference internal" href="g.html#term-k"><span class="xref std std-term">'
    ...           'Key</span></a> <a class="reference internal" href="p.html"><span>页</span></a>')
    >>> page.links
    ['g.html#term-k']
    """

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.href: str | None = None  # of the internal reference we are in

    def handle_starttag(self, tag: str, attrs: list) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag == "a":
            self.href = (
                dict(attrs).get("href") if {"reference", "internal"} <= set(classes) else None
            )
        elif tag == "span" and "std-term" in classes and self.href is not None:
            self.links.append(self.href)
            self.href = None  # one link per reference

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self.href = None


def test_term_links_resolve_to_their_definition(book_html):
    anchors = set(glossary_terms(book_html).values())
    links = []
    for html in sorted(book_html.rglob("*.html")):
        if "_static" in html.parts:
            continue
        page = TermLinks()
        page.feed(html.read_text(encoding="utf-8"))
        # An entry of the glossary may link another entry on the same page ("#term-8").
        here = "glossary.html" if html.name == "glossary.html" else ""
        links += [here + href if href.startswith("#") else href for href in page.links]
    assert links, "no page links a glossary term"
    for href in links:
        page, _, anchor = href.partition("#")
        assert page.endswith("glossary.html") and anchor in anchors, href


def test_no_page_defines_a_glossary_term_a_second_time():
    # A definition list item "term\n: definition" whose term is in the glossary repeats a definition.
    for page in sorted((ROOT / "book").rglob("*.md")):
        if page == GLOSSARY or "_ext" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        for term in re.findall(r"^(\S[^\n]*)\n: ", text, flags=re.M):
            assert term.strip() not in TERMS, f"{page.name} defines {term!r} again"


def test_the_index_lists_terms_by_pinyin_and_the_shown_functions(book_html):
    page = soup_of(book_html, "genindex.html")
    groups = {h2.get_text(strip=True): h2.find_next("table") for h2 in page.select("article h2")}
    assert "可见性表" in groups["K"].get_text() and "因果" in groups["Y"].get_text()
    link = page.find("a", string=re.compile(r"^visibility\(\)（02_attention\.py）$"))
    assert link is not None
    target, _, anchor = link["href"].partition("#")
    assert (book_html / target).is_file()
    assert soup_of(book_html, target).find(id=anchor) is not None


def test_citations_link_to_the_bibliography_and_each_page_lists_its_own(book_html):
    opening = soup_of(book_html, "ch02/index.html")
    cite = opening.select_one("span.bibtex-citation a")
    assert "Vaswani" in cite.get_text()
    target, _, anchor = cite["href"].partition("#")
    assert target == "../references.html"
    assert soup_of(book_html, "references.html").find(id=anchor) is not None
    rubric = opening.find("p", class_="rubric", string="本页参考文献")
    listed = rubric.find_next("ul").get_text()
    assert "Attention is all you need" in listed
    assert "FlashAttention" not in listed  # only what the page cites


@pytest.fixture()
def floor_book(tmp_path):
    return make_project(tmp_path, floor=True)  # with the bibliography and its page


def cite_page(project: Path, key: str) -> None:
    index = project / "book" / "index.md"
    index.write_text(
        index.read_text(encoding="utf-8") + f"\n见 {{cite:p}}`{key}`。\n", encoding="utf-8"
    )


def test_names_in_reference_titles_keep_their_letters(book_html):
    # A documentation page or a configuration is cited by its name (torch.nn.MultiheadAttention,
    # Meta-Llama-3-8B); the bibliography style must not turn it into "Torch.nn.multiheadattention".
    bib = (ROOT / "book" / "references.bib").read_text(encoding="utf-8")
    names = [
        t.replace("\\_", "_").replace("\\%", "%")
        for t in re.findall(r"^\s*title\s*=\s*\{\{([^{}]*)\}\},$", bib, flags=re.M)
    ]
    assert len(names) >= 10
    text = " ".join(
        BeautifulSoup((book_html / "references.html").read_text(encoding="utf-8"), PARSER)
        .get_text(" ")
        .split()
    )
    assert [name for name in names if name not in text] == []


def test_no_two_entries_are_cited_with_the_same_author_and_year():
    # Citations read "(PyTorch Contributors, 2026b)": two pages of one project in one year need a, b, ….
    from pybtex.database import parse_file

    entries = parse_file(str(ROOT / "book" / "references.bib")).entries
    labels = {}
    for key, entry in entries.items():
        authors = " and ".join(str(person) for person in entry.persons.get("author", []))
        labels.setdefault((authors, entry.fields["year"]), []).append(key)
    assert {label: keys for label, keys in labels.items() if len(keys) > 1} == {}


@pytest.mark.build
def test_a_known_key_lists_its_reference_and_an_unknown_key_fails_the_build(floor_book):
    # One build of the floor book whose page cites a known key and an unknown one: the unknown key is
    # the build's one warning (so it fails under -W), and the known key gets the page its reference list.
    cite_page(floor_book, "su2021roformer")
    cite_page(floor_book, "nosuchkey2099")
    result = make_html(floor_book)
    assert result.returncode != 0
    warnings = [line for line in result.stderr.splitlines() if "WARNING" in line]
    assert len(warnings) == 1, result.stderr
    assert 'could not find bibtex key "nosuchkey2099"' in warnings[0]
    page = soup_of(floor_book / "_build" / "html", "index.html")
    assert (
        "RoFormer"
        in page.find("p", class_="rubric", string="本页参考文献").find_next("ul").get_text()
    )


@pytest.mark.pdf
def test_the_pdf_has_glossary_bibliography_and_index_in_chinese(pages, text):
    toc = flat(next(p for p in pages if "目录" in p))
    assert "附录A" in toc and "术语表" in toc and "参考文献" in toc and "索引" in toc
    for english in (
        "Bibliography",
        "Index",
        "Appendix",
        "APPENDIX",
    ):  # as a word: IndexError in a listing is code
        assert not re.search(rf"(?<![A-Za-z]){english}(?![A-Za-z])", text), english
    last = "".join(pages[-3:])
    assert "索引" in last and "visibility()（02_attention.py）" in last.replace(" ", "")
    bibliography = next(p for p in pages if p.lstrip().startswith("参考文献") and "Vaswani" in p)
    assert "Attention is all you need" in bibliography


@pytest.mark.browser
def test_no_page_scrolls_sideways_on_a_narrow_screen(browser, book_html):
    # Wide tables and figures scroll inside their own boxes; long words in lists and references wrap.
    # The chapter's mechanism pages are checked in the one visit tests/test_pages.py pays each of them.
    context = browser.new_context(viewport={"width": 360, "height": 800})
    page = context.new_page()
    wide = {}
    mechanism = {f"{name}.html" for name, _ in CHAPTER_PAGES}
    for html in sorted(book_html.rglob("*.html")):
        if "_static" in html.parts or html.name in {"search.html", "genindex.html"}:
            continue
        if html.parent.name == "ch02" and html.name in mechanism:
            continue
        page.goto(html.as_uri())
        page.wait_for_load_state("load")
        width = page.evaluate("document.scrollingElement.scrollWidth")
        if width > 360:
            wide[html.relative_to(book_html).as_posix()] = width
    context.close()
    assert wide == {}


# ClipboardJS (used by sphinx-copybutton) copies through a selected, off-screen textarea and
# document.execCommand("copy"); record what it hands over instead of touching the real clipboard.
RECORD_COPIES = """
window.__copied = [];
document.execCommand = function (command) {
  if (command === "copy") window.__copied.push(window.getSelection().toString());
  return true;
};
"""


@pytest.mark.browser
def test_the_copy_button_copies_a_doctest_without_prompts_or_output(browser, book_html):
    import doctest
    import importlib

    ex = importlib.import_module("02_exercises_mask")  # the mask page's exercise shows its doctest
    expected = "\n".join(
        e.source.rstrip("\n")
        for e in doctest.DocTestParser().get_examples(ex.visible_counts.__doc__)
    )
    context = browser.new_context()
    context.add_init_script(RECORD_COPIES)
    page = context.new_page()
    page.goto((book_html / "ch02" / "mask.html").as_uri())
    page.wait_for_load_state("load")
    block = page.locator("div.highlight-pycon").filter(has_text=">>> visible_counts(").first
    block.hover()
    block.locator("button.copybtn").click()
    page.wait_for_function("window.__copied.length > 0")
    copied = page.evaluate("window.__copied[0]")
    context.close()
    assert copied.strip() == expected
    assert ">>>" not in copied and "[[True" not in copied


@pytest.mark.browser
def test_a_glossary_link_lands_on_its_definition(browser, book_html):
    page = browser.new_page()
    page.goto((book_html / "ch02" / "mask.html").as_uri())
    link = page.locator("a:has(span.std-term)", has_text="可见性表").first
    link.click()
    page.wait_for_load_state("load")
    assert page.url.split("#")[0].endswith("/glossary.html")
    anchor = page.url.split("#")[1]
    assert page.locator(f"dt[id='{anchor}']").inner_text().startswith("可见性表")
    page.close()


@pytest.mark.browser
@pytest.mark.parametrize("name", ["glossary.html", "references.html", "genindex.html"])
def test_the_reference_pages_pass_axe(browser, book_html, name):
    from axe_playwright_python.sync_playwright import Axe

    page = browser.new_page()
    page.goto((book_html / name).as_uri())
    page.wait_for_load_state("load")
    violations = Axe().run(page, context="article").response["violations"]
    page.close()
    serious = [(v["id"], v["help"]) for v in violations if v["impact"] in {"serious", "critical"}]
    assert serious == []
