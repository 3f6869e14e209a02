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
from reading import PARSER, bibliography, text

from chapter import fmt

CHAPTER = sorted(p.stem for p in (ROOT / "book" / "ch02").glob("*.md"))
BOOK_SIDE = sorted((ROOT / "book" / "chapter").glob("*.py"))

# Code names that prose writes in words or maths (头维度 / d_head, 头数 / h): in the text they appear
# only as code (a configuration key, an argument), never as a bare word.
CODE_NAMES = ("head_dim", "d_head", "d_model", "n_heads", "num_heads", "kv_heads")


def prose(book_html: Path, page: str) -> str:
    """The page's running text: code, run output, maths, scripts and the page's bibliography left out
    (an entry's title, such as "LlamaAttention (head_dim)", is the source's own words)."""
    article = article_of(book_html, f"ch02/{page}.html")
    left_out = "code, pre, div.highlight, span.math, div.math, script, .headerlink"
    return text(article, left_out, " ", also=bibliography(article))


@pytest.mark.build
@pytest.mark.parametrize("page", CHAPTER)
def test_a_printed_minus_is_the_minus_sign(book_html, page):
    ascii_minus = re.findall(r"(?<![\w\-.])-(?=[\d∞])\S*", prose(book_html, page))
    assert not ascii_minus, (
        f"{page}: ASCII '-' before a number (write U+2212 through fmt): {ascii_minus}"
    )


@pytest.mark.build
@pytest.mark.parametrize("page", CHAPTER)
def test_code_names_appear_only_as_code(book_html, page):
    text = prose(book_html, page)
    bare = {name for name in CODE_NAMES if re.search(rf"(?<![\w`]){name}(?!\w)", text)}
    assert not bare, (
        f"{page}: {sorted(bare)} written as a bare word; say 头维度 / 头数 or mark it as code"
    )


def test_the_finite_difference_step_is_not_the_number_of_heads():
    # The multi-head page: "h 总是头的个数". No other page gives h another meaning.
    for page in CHAPTER:
        source = (ROOT / "book" / "ch02" / f"{page}.md").read_text(encoding="utf-8")
        display = re.findall(r"\$\$(.+?)\$\$", source, flags=re.S)
        maths = display + re.findall(
            r"\$([^$\n]+)\$", re.sub(r"\$\$.+?\$\$", "", source, flags=re.S)
        )
        lone_h = [m for m in maths if re.search(r"(?<![\\\w{])h(?![\w}])", m)]
        if page not in {"multihead", "costs", "tensors", "index"}:
            assert not lone_h, (
                f"{page}: the symbol h (the number of heads) used for something else: {lone_h[:3]}"
            )


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


@pytest.mark.parametrize(
    "name, x, shown",
    [
        ("ratio", 4.0, "4.00"),
        ("ms", 0.0021, "2.100"),
        ("multiple", 2.83, "2.8"),
        ("percent", 0.5, "50.00%"),
        ("seconds", 1.0, "1.00"),
    ],
)
def test_each_kind_has_its_decimals(name, x, shown):
    assert getattr(fmt, name)(x) == shown


# -- one symbol, one meaning (issue: V, ε, L, h, 长度, 绝对位置) ---------------------------------------------------
def text_with_maths(book_html: Path, page: str) -> str:
    """The page's text with its formulas kept as their TeX source (code and scripts left out)."""
    article = article_of(book_html, f"ch02/{page}.html")
    return re.sub(r"\s+", " ", text(article, "code, pre, div.highlight, script, .headerlink", " "))


def sentences_of(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[。！？；])", text) if s.strip()]


# Each rule: the symbol or word, and a pattern that finds it used in its other meaning.
SYMBOL_RULES = {
    "V is the Value matrix, not the vocabulary size": re.compile(
        r"\\ln\s*\{?\s*V\b|(?<![\w\\])ln\s*V\b|词表大小\s*\\?\(?\s*V\b"
    ),
    "h counts heads, it indexes none": re.compile(
        r"第\s*\\?\(?\s*h\s*\\?\)?\s*(个头|组)|头\s*\\?\(?\s*h\s*\\?\)?\s*的"
    ),
    "长度 is a norm, the number of components is 维数": re.compile(
        r"向量的长度\s*\\?\(?\s*d\b|长度\s*\\?\(?\s*d\s*\\?\)?\s*(维|个分量)"
    ),
}


def symbol_misuses(text: str) -> dict[str, list[str]]:
    """For each rule, the sentences of ``text`` that use the symbol in its other meaning."""
    found = {
        rule: [s for s in sentences_of(text) if pattern.search(s)]
        for rule, pattern in SYMBOL_RULES.items()
    }
    # ε is the finite-difference step: never float64's machine precision in the same sentence.
    found["ε is the finite-difference step only"] = [
        s for s in sentences_of(text) if re.search(r"ε|\\varepsilon|\\epsilon", s) and "机器" in s
    ]
    # L is the number of layers: a sentence about the loss never calls it L.
    found["L is the layer count, not the loss"] = [
        s
        for s in sentences_of(text)
        if "损失" in s and re.search(r"(?<![\\\w{])L(?![\w}])\s*\\?\)?\s*(=|是|为)", s)
    ]
    return {rule: hits for rule, hits in found.items() if hits}


def test_each_symbol_rule_catches_a_planted_misuse():
    planted = {
        "V is the Value matrix, not the vocabulary size": r"猜的损失是 \(\ln V\)。",
        "h counts heads, it indexes none": "取 W_q 的第 h 组列。",
        "长度 is a norm, the number of components is 维数": "参与点积的向量的长度 d 越大。",
        "ε is the finite-difference step only": "步长 ε 不能小于机器精度 ε。",
        "L is the layer count, not the loss": r"训练的损失 \(L\) 是交叉熵。",
    }
    for rule, sentence in planted.items():
        assert rule in symbol_misuses(sentence), rule
    assert symbol_misuses(r"模型有 \(L\) 层，每层 \(h\) 个头；\(V\) 的第 0 行。") == {}


@pytest.mark.build
@pytest.mark.parametrize("page", CHAPTER)
def test_one_symbol_one_meaning(book_html, page):
    assert symbol_misuses(text_with_maths(book_html, page)) == {}, page


# -- numbers outside the preface's rule (fmt's kinds) --------------------------------------------------------
NUMBER_RULES = {
    # fmt.sci is for what is smaller than 10⁻³ and for float limits: 3.6 × 10⁻¹ is a value (fmt.difference).
    "scientific notation for a number that is a value": re.compile(
        r"\d × 10(⁻[¹²³]|[⁰¹²³])(?![⁰¹²³⁴⁵⁶⁷⁸⁹])"
    ),
    "e-notation instead of × 10ⁿ": re.compile(r"(?<![\w.])\d+(\.\d+)?e[+\-−]\d+"),
    "more decimals than any kind has": re.compile(r"(?<![\d.])\d+\.\d{5,}(?!\d)"),
    "a large whole number without thousands separators": re.compile(
        r"(?<![\w.,\-−/#])\d{5,}(?![\w.,])"
    ),
}


def numbers_outside_the_rule(text: str) -> dict[str, list[str]]:
    return {
        rule: [m.group(0) for m in pattern.finditer(text)]
        for rule, pattern in NUMBER_RULES.items()
        if pattern.search(text)
    }


def test_each_number_rule_catches_a_planted_break():
    planted = "最大差 3.6 × 10⁻¹；finfo 是 3.40282e+38；权重 0.090031；周期 54410 个位置。"
    assert set(numbers_outside_the_rule(planted)) == set(NUMBER_RULES)
    assert (
        numbers_outside_the_rule(
            "差 2.2 × 10⁻¹⁶，最大数 3.4 × 10³⁸，权重 0.0900，周期 54,410.3，2017 年。"
        )
        == {}
    )


@pytest.mark.build
@pytest.mark.parametrize("page", CHAPTER)
def test_the_built_page_prints_numbers_by_the_rule(book_html, page):
    assert numbers_outside_the_rule(prose(book_html, page)) == {}, page


# -- a sentence about a library says where it was observed, or cites its source ------------------------------
LIBRARIES = re.compile(
    r"scaled_dot_product_attention|SDPA|MultiheadAttention|dot_product_attention|FlexAttention"
    r"|create_mask|Keras|transformers|Hugging Face|flash_attn|masking_utils|PyTorch|\bJAX\b"
)
# A version (2.13.0), an observation, make crosscheck, or the documentation named.
WHERE = re.compile(r"\d+\.\d+\.\d+|观察|crosscheck|文档")
BLOCKS = ["p", "li", "dd", "dt", "caption", "figcaption"]


def unsourced_library_claims(article) -> list[str]:
    """Blocks of text (a paragraph, a list item; a table as a whole) that name a library but neither say
    where it was observed nor cite a source. The page's bibliography is a list of sources itself."""
    for node in bibliography(article):
        node.decompose()
    for node in article.select("script, pre, div.highlight, div.citation"):
        node.decompose()

    def sourced(node) -> bool:
        return bool(
            WHERE.search(node.get_text(" ")) or node.select("a[href*='references.html'], span.cite")
        )

    found = []
    for table in article.find_all("table"):
        before = table.find_previous(["p", "caption"])
        if (
            LIBRARIES.search(table.get_text(" "))
            and not sourced(table)
            and not (before and sourced(before))
        ):
            found.append(table.get_text(" ", strip=True)[:120])
        table.decompose()
    for block in article.find_all(BLOCKS):
        if not block.find(BLOCKS) and LIBRARIES.search(block.get_text(" ")) and not sourced(block):
            found.append(block.get_text(" ", strip=True)[:120])
    return found


def test_an_unsourced_library_claim_is_found():
    from bs4 import BeautifulSoup

    planted = BeautifulSoup(
        "<article><p>SDPA 的布尔 True 表示允许。</p>"
        "<p>SDPA 的布尔 True 表示允许（PyTorch 2.13.0，CPU，float64 上观察）。</p>"
        "<p>见 <a href='../references.html#x'>文档</a>：Keras 把浮点 mask 转成布尔。</p></article>",
        PARSER,
    ).find("article")
    assert unsourced_library_claims(planted) == ["SDPA 的布尔 True 表示允许。"]


@pytest.mark.build
@pytest.mark.parametrize("page", CHAPTER)
def test_a_sentence_about_a_library_says_where_it_was_observed(book_html, page):
    assert unsourced_library_claims(article_of(book_html, f"ch02/{page}.html", own=True)) == [], (
        page
    )


# -- one term, one definition: the glossary defines it, the pages link to it (issue 43) ----------------------
# Terms whose one meaning the glossary gives and that pages have given another. A page's first use of each
# links to the glossary ({term}); no page (nor the glossary) says it in the words of the other meaning.
LINKED_TERMS = ("绝对位置", "位置编号", "位置嵌入", "注意力汇点")
OTHER_MEANINGS = {
    # past counts the positions before the first new query, whatever the cache still keeps (a sliding
    # window drops the oldest K/V): never "the cache's length"
    "past is not the cache's length": re.compile(
        r"缓存(里|中)?(已有|现有)?的(位置数|长度)\s*(记作|就是|即|是|为)?\s*past"
        r"|past\s*(是|为|即|指|记作|等于)\s*缓存(里|中)?(已有|现有)?的?(位置数|长度)"
    ),
    # 绝对位置 is a position's index (PAD counted); the vector added to a token is a 位置嵌入
    "绝对位置 is an index, not a kind of position vector": re.compile(r"绝对位置(的)?向量"),
}
# (page, rule) pairs allowed to give a term its other meaning while a page is being rewritten: none now.
PENDING: set[tuple[str, str]] = set()
# First uses where a link cannot go, in computed text: the mask page's figure frames, the rope page's tables.
PENDING_LINKS = {
    "mask": ["绝对位置"],
    "rope": ["绝对位置"],
}


def running_text(article) -> str:
    """The page's text, inline code and maths kept, listings, run output and scripts left out."""
    return re.sub(r"\s+", " ", text(article, "pre, div.highlight, script, .headerlink", " "))


def other_meanings(text: str) -> dict[str, list[str]]:
    """For each rule of OTHER_MEANINGS, the sentences of ``text`` that give the term its other meaning."""
    found = {
        rule: [s for s in sentences_of(text) if pattern.search(s.replace("`", ""))]
        for rule, pattern in OTHER_MEANINGS.items()
    }
    return {rule: hits for rule, hits in found.items() if hits}


def used_before_linked(article, terms=LINKED_TERMS) -> list[str]:
    """The terms whose first use in ``article`` (headings and listings left out) is not a link to the
    glossary's entry."""
    for node in article.select("h1, h2, h3, h4, h5, h6, pre, div.highlight, script, .headerlink"):
        node.decompose()
    unlinked = []
    for term in terms:
        first = next((s for s in article.find_all(string=True) if term in s), None)
        if first is None:
            continue
        link = first.find_parent("a")
        if not (link and "glossary.html#term-" in link.get("href", "")):
            unlinked.append(term)
    return unlinked


def test_a_term_given_its_other_meaning_or_used_before_its_link_is_found():
    from bs4 import BeautifulSoup

    planted = {
        "past is not the cache's length": "缓存里已有的位置数记作 `past`。",
        "绝对位置 is an index, not a kind of position vector": "绝对位置向量按编号取出。",
    }
    for rule, sentence in planted.items():
        assert rule in other_meanings(sentence), rule
    assert (
        other_meanings("新查询的位置从 `past` 数起；past 是它之前的位置数，不管缓存留着多少。")
        == {}
    )
    page = (
        "<article><h2>位置编号</h2><p>绝对位置是 past + i。</p>"
        "<p><a href='../glossary.html#term-0'>绝对位置</a>；"
        "<a href='../glossary.html#term-1'>位置编号</a>，再说位置编号。</p></article>"
    )
    article = BeautifulSoup(page, PARSER).find("article")
    assert used_before_linked(article, ("绝对位置", "位置编号")) == ["绝对位置"]


@pytest.mark.build
@pytest.mark.parametrize("page", [*CHAPTER, "glossary"])
def test_one_term_one_meaning_and_the_first_use_links_to_the_glossary(book_html, page):
    name = "glossary.html" if page == "glossary" else f"ch02/{page}.html"
    found = other_meanings(running_text(article_of(book_html, name)))
    pending = {rule for p, rule in PENDING if p == page}
    assert set(found) == pending, (page, found)
    if page != "glossary":
        assert used_before_linked(article_of(book_html, name, own=True)) == PENDING_LINKS.get(
            page, []
        ), page
