"""One vocabulary across the chapter: one minus sign, one way to write each kind of number, code names
kept in code, and one meaning per symbol.

The preface says how the book writes numbers (``fmt.decimals_sentence``, from ``fmt.DECIMALS``); the
tests here check that the pages keep to it, on the built text and on the book side's sources.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT, article_of

from chapter import fmt

CHAPTER = sorted(p.stem for p in (ROOT / "book" / "ch02").glob("*.md"))
BOOK_SIDE = sorted((ROOT / "book" / "chapter").glob("*.py"))

# Code names that prose writes in words or maths (头维度 / d_head, 头数 / h): in the text they appear
# only as code (a configuration key, an argument), never as a bare word.
CODE_NAMES = ("head_dim", "d_head", "d_model", "n_heads", "num_heads", "kv_heads")


# The rubric over each page's own bibliography (book/_ext/page_refs.py, ``page_refs_title``).
BIBLIOGRAPHY_TITLE = "本页参考文献"


def prose(book_html: Path, page: str) -> str:
    """The page's running text: code, run output, maths, scripts and the page's bibliography left out
    (an entry's title, such as "LlamaAttention (head_dim)", is the source's own words)."""
    article = article_of(book_html, f"ch02/{page}.html")
    for rubric in article.select("p.rubric"):
        if rubric.get_text(strip=True) == BIBLIOGRAPHY_TITLE:
            entries = rubric.find_next_sibling()
            if entries is not None and (entries.name == "ul" or "citation-list" in entries.get("class", [])):
                entries.decompose()
            rubric.decompose()
    for node in article.select("code, pre, div.highlight, span.math, div.math, script, .headerlink"):
        node.decompose()
    return article.get_text(" ")


@pytest.mark.build
@pytest.mark.parametrize("page", CHAPTER)
def test_a_printed_minus_is_the_minus_sign(book_html, page):
    ascii_minus = re.findall(r"(?<![\w\-.])-(?=[\d∞])\S*", prose(book_html, page))
    assert not ascii_minus, f"{page}: ASCII '-' before a number (write U+2212 through fmt): {ascii_minus}"


@pytest.mark.build
@pytest.mark.parametrize("page", CHAPTER)
def test_code_names_appear_only_as_code(book_html, page):
    text = prose(book_html, page)
    bare = {name for name in CODE_NAMES if re.search(rf"(?<![\w`]){name}(?!\w)", text)}
    assert not bare, f"{page}: {sorted(bare)} written as a bare word; say 头维度 / 头数 or mark it as code"


def test_the_finite_difference_step_is_not_the_number_of_heads():
    # The multi-head page: "h 总是头的个数". No other page gives h another meaning.
    for page in CHAPTER:
        source = (ROOT / "book" / "ch02" / f"{page}.md").read_text(encoding="utf-8")
        display = re.findall(r"\$\$(.+?)\$\$", source, flags=re.S)
        maths = display + re.findall(r"\$([^$\n]+)\$", re.sub(r"\$\$.+?\$\$", "", source, flags=re.S))
        lone_h = [m for m in maths if re.search(r"(?<![\\\w{])h(?![\w}])", m)]
        if page not in {"multihead", "costs", "tensors", "index"}:
            assert not lone_h, f"{page}: the symbol h (the number of heads) used for something else: {lone_h[:3]}"


@pytest.mark.parametrize("path", BOOK_SIDE, ids=lambda p: p.name)
def test_the_book_side_writes_decimals_only_through_the_kinds(path):
    """``fmt.fmt(x, 2)`` or ``f"{x:.3f}"`` would give one kind of number two formats: a page asks
    ``fmt`` for the kind (``fmt.ratio``, ``fmt.ms``, ``fmt.multiple``, …) instead."""
    if path.name == "fmt.py":
        return
    source = path.read_text(encoding="utf-8")
    literal = re.findall(r"fmt\.fmt\([^()]*(?:\([^()]*\)[^()]*)*,\s*[1-9]\d*\s*\)", source)
    specs = re.findall(r"\{[^{}]*:\.\d+f\}", source)
    assert not literal and not specs, f"{path.name}: {literal + specs}"


def test_the_preface_states_every_kind_and_its_decimals():
    sentence = fmt.decimals_sentence()
    for digits, what in fmt.DECIMALS.values():
        assert f"{what}保留 {digits} 位小数" in sentence
    assert fmt.sci(2.0**-52) in sentence and fmt.MINUS in sentence


@pytest.mark.build
def test_the_preface_shows_the_statement(book_html):
    text = article_of(book_html, "index.html").get_text()
    assert fmt.decimals_sentence() in re.sub(r"\s+(?=[，。；])", "", text)


@pytest.mark.parametrize("name, x, shown", [("ratio", 4.0, "4.00"), ("ms", 0.0021, "2.100"),
                                            ("multiple", 2.83, "2.8"), ("percent", 0.5, "50.00%"),
                                            ("seconds", 1.0, "1.00")])
def test_each_kind_has_its_decimals(name, x, shown):
    assert getattr(fmt, name)(x) == shown
