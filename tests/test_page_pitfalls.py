"""The pitfalls page (book/ch02/pitfalls.md) as built: the symptom table leads to every mistake's section,
each section's numbers are the computed and recorded ones, every input is stated first, and the trackers'
threads are cited.

What every page must have is tested once in tests/test_pages.py; the book side's facts on other inputs in
tests/test_chapter_pitfalls.py.
"""

from __future__ import annotations

import pytest
from conftest import article_of, flat, section_of, table_rows

from chapter import fmt
from chapter import pitfalls as page

PAGE = "ch02/pitfalls.html"
SECTIONS = [page.demo, *page.SECTIONS, page.record]
MISTAKES = [
    "polarity",
    "float",
    "lines",
    "causal",
    "heads",
    "axis",
    "loss",
    "dropout",
    "cross",
    "generate",
    "positions",
    "decode",
]


@pytest.mark.build
def test_the_symptom_table_is_in_the_core_and_leads_to_every_mistake(book_html):
    article = article_of(book_html, PAGE)
    table = section_of(article, "为什么需要").find("table")
    assert table.find_parent("details") is None  # the core: open without a click
    rows = table.find_all("tr")[1:]
    assert len(rows) == len(MISTAKES)
    targets = [
        a["href"] for a in table.select("a.reference.internal") if "#ch02-pitfalls-" in a["href"]
    ]
    assert targets == [f"#ch02-pitfalls-{m}" for m in MISTAKES]
    for m in MISTAKES:
        section = article.find(id=f"ch02-pitfalls-{m}")
        assert section is not None and section.find("details", class_="sd-dropdown") is not None, m
    # every row links to the page that teaches its rule, or a term of the glossary
    assert all(row.find_all("td")[-1].find("a") or "本页" in row.get_text() for row in rows)


@pytest.mark.build
def test_every_glued_text_and_table_is_on_the_page(book_html):
    article = article_of(book_html, PAGE)
    text = flat(article.get_text())
    rows = [[flat(c) for c in row] for row in table_rows(article)]
    glued = {}
    tables = []
    for section in [f() for f in SECTIONS] + page.exercises():
        for name, value in section.values.items():
            if type(value) is str:
                glued[name] = value
            elif isinstance(value, fmt.Table):
                tables.append((name, value))
    assert len(glued) > 50 and len(tables) >= 15
    assert [name for name, v in glued.items() if flat(v) not in text] == []
    for name, t in tables:  # code in a cell (`…`) is shown without its backticks
        assert all([flat(cell.replace("`", "")) for cell in row] in rows for row in t.rows), name


@pytest.mark.build
def test_every_example_states_its_inputs_before_its_numbers(book_html):
    article = article_of(book_html, PAGE)
    boxes = [
        a
        for a in article.select("div.admonition")
        if (title := a.find("p", class_="admonition-title", recursive=False))
        and title.get_text(strip=True) == "输入与适用条件"
    ]
    assert len(boxes) >= 13  # the shared example, eight sections with their own, four exercises
    core = [
        b
        for b in boxes
        if b.find_parent("details") is None and b.find_parent(class_="exercise") is None
    ]
    assert len(core) == 2  # the shared example, and the generation check's worked example


@pytest.mark.build
def test_the_recorded_continuations_are_on_the_page(book_html):
    record = page.torch_record()["generation"]
    rows = table_rows(article_of(book_html, PAGE))
    for b, prompt in enumerate(page.pf.DEMO_PROMPTS):
        expected = [page.tokens(record[k][b]) for k in ("alone", "left", "right")]
        assert [f"提示 {b}：{page.tokens(prompt)}", *expected] in rows


@pytest.mark.build
def test_the_threads_are_cited_and_listed(book_html):
    article = article_of(book_html, PAGE)
    cited = {a["href"] for a in article.select("a[href*='references.html#']")}
    assert len(cited) >= 15
    listed = flat(article.get_text())  # the page's own bibliography follows its 要记住
    for title in (
        "SDPA does not switch off dropout during evaluation",
        "Mismatch between logits from generate and forward",
        "wrong masking for multi-head attention",
        "LlamaRotaryEmbedding",
    ):
        assert flat(title) in listed, title
