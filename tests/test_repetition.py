"""Each idea is taught once: no sentence of 25 characters or more appears twice in the built chapter.

The chapter is the pages ch02/*.html (本章导读 and every mechanism page, conftest.CHAPTER_PAGES) and the glossary, read
from the session's HTML build (``book_html``). What counts as a sentence, exactly (``sentences``):

- Only the page's ``<article>`` is read (not the theme's navigation).
- Left out entirely: headings (h1–h6, with the section names every page shares), admonition titles
  (「输入与适用条件」, 「练习 2.x.y」, 「解答 …」), code blocks and run output (``div.highlight``, ``pre``), tables
  (every ``<table>``, the tables of the step figures' frames included), display maths (``div.math``),
  scripts (the explore panel's JSON), the step figures' interface help (``.step-figure-help``) and buttons,
  the permalink marks, and each page's 「本页参考文献」 section (bibliography entries, not prose).
- Inline maths (``span.math``) stays in the sentence as its TeX source, so that two sentences that differ
  only in a formula are different; its characters do not count towards the 25.
- Text is read block by block (p, li, dt, dd, figcaption, …): a sentence never runs across two blocks.
  Within a block it is split after 。！？ (with any closing quote or bracket that follows); the block's
  end ends the last sentence too, so a paragraph that ends in 「：」 before a table is a sentence.
- All whitespace is removed before sentences are compared or measured (the HTML spaces glued values and
  inline code unpredictably); the length is counted in characters, the inline maths left out.
- A sentence that is one of the section names or the 输入与适用条件 title is not counted (they are
  headings' words, whatever element carries them).

A sentence counts as repeated when it occurs twice or more anywhere in those pages, on one page
or on two.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import CHAPTER_PAGES, MECHANISM_SECTIONS, article_of
from reading import PARSER, bibliography

PAGES = [
    f"ch02/{name}.html" for name in ("index", *(page for page, _ in CHAPTER_PAGES), "summary")
] + ["glossary.html"]
MIN_LENGTH = 25
ASIDE = {*MECHANISM_SECTIONS, "输入与适用条件"}

# Elements whose whole content is left out (CSS selectors).
LEFT_OUT = ", ".join(
    [
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "p.admonition-title",
        "div.highlight",
        "pre",
        "table",
        "div.math",
        "script",
        "style",
        "button",
        ".step-figure-help",
        "a.headerlink",
    ]
)
# Elements that start a new block of text: a sentence never crosses one of their boundaries.
BLOCKS = {
    "p",
    "li",
    "dt",
    "dd",
    "div",
    "section",
    "figure",
    "figcaption",
    "caption",
    "blockquote",
    "ul",
    "ol",
    "dl",
    "details",
    "summary",
    "aside",
    "header",
    "footer",
    "main",
    "article",
    "nav",
    "form",
    "br",
    "hr",
}
MATH_OPEN = "\ue000"
MATH_CLOSE = "\ue001"  # private-use marks around inline maths while splitting
END = re.compile("[。！？][”’」』）》\\)]*")


def _blocks(node, skipped=frozenset()) -> list[str]:
    """The texts of ``node``'s blocks, in document order, inline maths marked."""
    from bs4 import NavigableString, Tag

    out = []
    current = []

    def flush():
        if current:
            out.append("".join(current))
            current.clear()

    def walk(tag):
        for child in tag.children:
            if isinstance(child, Tag):
                if id(child) in skipped:
                    continue
                if child.name == "span" and "math" in (child.get("class") or []):
                    current.append(MATH_OPEN + child.get_text() + MATH_CLOSE)
                elif child.name in BLOCKS:
                    flush()
                    walk(child)
                    flush()
                else:
                    walk(child)
            elif type(child) is NavigableString:  # not a comment or a CDATA section
                current.append(str(child))

    walk(node)
    flush()
    return out


def _length(sentence: str) -> int:
    return len(re.sub(f"{MATH_OPEN}.*?{MATH_CLOSE}", "", sentence))


def _split(block: str) -> list[str]:
    text = re.sub(r"\s+", "", block)
    parts = []
    start = 0
    for end in END.finditer(text):
        parts.append(text[start : end.end()])
        start = end.end()
    parts.append(text[start:])
    return [p for p in parts if p]


def sentences(article) -> list[str]:
    """The sentences of a page's <article> (see the module docstring), in order, whitespace removed,
    inline maths kept as ``$TeX$``; only those of at least MIN_LENGTH characters (maths not counted)."""
    # Left out: LEFT_OUT, and 「本页参考文献」 with the list of entries after it (the page is not changed).
    skipped = {id(tag) for tag in article.select(LEFT_OUT) + bibliography(article)}
    found = []
    for block in _blocks(article, skipped):
        for sentence in _split(block):
            if sentence in ASIDE or _length(sentence) < MIN_LENGTH:
                continue
            found.append(sentence.replace(MATH_OPEN, "$").replace(MATH_CLOSE, "$"))
    return found


def repeated(book_html: Path) -> dict[str, list[str]]:
    """Every sentence that occurs twice or more, with the pages where it occurs (a page once per occurrence)."""
    where = defaultdict(list)
    for page in PAGES:
        for sentence in sentences(article_of(book_html, page)):
            where[sentence].append(page)
    return {s: pages for s, pages in where.items() if len(pages) > 1}


# -- the extraction itself, on small hand-made pages -----------------------------------------------
def _article(html: str):
    from bs4 import BeautifulSoup

    return BeautifulSoup(f"<article>{html}</article>", PARSER).find("article")


def test_the_extraction_splits_sentences_and_leaves_out_what_is_not_prose():
    long = "这是一句足够长的句子，它的长度超过了二十五个字符，所以会被计入。"
    html = (
        f"<h2>为什么需要<a class='headerlink'>#</a></h2><p>{long}短句。<code>x</code> 与 "
        f"<span class='math'>\\(n^2\\)</span> 一起出现在这一段里，并且这一段一直没有句号就结束了：</p>"
        f"<div class='admonition'><p class='admonition-title'>输入与适用条件</p><p>{long}</p></div>"
        f"<table><tr><td>{long}</td></tr></table><div class='highlight'><pre>{long}</pre></div>"
        f"<div class='math'>{long}</div><script>{long}</script>"
        "<p class='rubric'>本页参考文献</p><ul><li>A very long bibliography entry that is not prose at all.</li></ul>"
    )
    found = sentences(_article(html))
    assert found == [
        long,
        "x与$\\(n^2\\)$一起出现在这一段里，并且这一段一直没有句号就结束了：",
        long,
    ]


def test_a_sentence_never_runs_across_two_blocks_and_maths_does_not_count_towards_the_length():
    html = (
        "<ul><li>第一项的文字写到这里还没有结束标点</li><li>第二项接着写下去也没有句号结束</li></ul>"
        "<p><span class='math'>\\(a + b + c + d + e + f + g + h + i + j + k\\)</span>很短。</p>"
        "<p>“引号里的一句话也要算进来，连同它后面的引号一起。”后面还有一句不够长。</p>"
    )
    assert sentences(_article(html)) == ["“引号里的一句话也要算进来，连同它后面的引号一起。”"]


def test_the_same_sentence_in_two_places_is_found():
    long = "同一个想法只在它所属的那一页讲一次，其他地方只用一句话和一个链接。"
    html = f"<p>{long}</p><p>别的内容。</p><ol><li><p>{long}</p></li></ol>"
    assert sentences(_article(html)) == [long, long]


# -- the chapter -------------------------------------------------------------------------------------
@pytest.mark.build
def test_no_sentence_of_25_characters_or_more_appears_twice_in_the_chapter(book_html):
    found = repeated(book_html)
    report = "\n".join(
        f"{len(pages)}× {', '.join(sorted(set(pages)))}: {s}"
        for s, pages in sorted(found.items(), key=lambda x: x[1])
    )
    assert not found, f"{len(found)} sentences appear more than once:\n{report}"
