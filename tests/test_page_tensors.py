"""The tensors page (book/ch02/tensors.md): its computed tables and sentences in the built HTML.

What every page must have (sections in order, place in the contents, run output, listing, downloads, offline,
axe) is tested once for all pages in tests/test_pages.py; the book side's sentences on other inputs in
tests/test_chapter_tensors.py.
"""

from __future__ import annotations

import pytest
from conftest import article_of, flat, table_rows
from test_chapter_tensors import SECTIONS

from chapter import tensors as page

PAGE = "ch02/tensors.html"


@pytest.mark.build
def test_the_page_shows_the_batch_checked_row_by_row_and_states_every_input_first(book_html):
    article = article_of(book_html, PAGE)
    boxes = [a for a in article.find_all(class_="admonition") if "输入与适用条件" in a.get_text()]
    assert len(boxes) >= 9  # five examples and four exercises
    values = page.batch().values
    rows = table_rows(article)
    for row in values["tbl_b_diffs"].rows + values["tbl_b_positions"].rows:
        assert row in rows
    text = flat(article.get_text())
    assert (
        flat(
            f"{values['b_pairs']}个（序列，头）共{values['b_rows']}行，每一行都与纯Python的结果相符"
        )
        in text
    )


@pytest.mark.build
def test_the_rules_dtype_and_packing_tables_are_the_computed_ones(book_html):
    article = article_of(book_html, PAGE)
    rows = table_rows(article)
    text = flat(article.get_text())
    rules = page.rules().values
    packing = page.packing().values
    dtype = page.dtype().values
    for table in (rules["tbl_rules"], packing["tbl_packing"], dtype["tbl_fill"]):
        for row in table.rows:
            assert row in rows
    assert (
        flat(
            f"两条规则同时挡住的{dtype['f_both']}个格子，两张mask相加后在{dtype['f_types']}里都成了−∞"
        )
        in text
    )


@pytest.mark.build
def test_every_glued_text_is_on_the_page(book_html):
    # The page's prose holds the words; the book side's facts (text glued with {glue:text}) are in it.
    glued = {
        name: value
        for section in SECTIONS
        if section is not page.run_output  # it glues the run's listing, not words of the prose
        for name, value in section().values.items()
        if type(value) is str
    }
    assert len(glued) > 50
    text = flat(article_of(book_html, PAGE).get_text())
    assert [name for name, value in glued.items() if flat(value) not in text] == []


@pytest.mark.build
def test_the_library_table_cites_its_sources(book_html):
    article = article_of(book_html, PAGE)
    table = next(t for t in article.find_all("table") if "flash-attn" in t.get_text())
    assert len(table.select("a[href*='references']")) >= 4 or len(table.find_all("a")) >= 4


@pytest.mark.build
def test_the_page_draws_the_batch_and_the_two_alignments_with_alt_text(book_html):
    article = article_of(book_html, PAGE)
    figures = {f.get("id"): f for f in article.find_all("figure")}
    for name in ("fig-tensors-batch", "fig-tensors-align"):
        image = figures[name].find(["img", "object"]) or figures[name].find("svg")
        assert image is not None and "Figure size" not in figures[name].get_text(), name
        assert len(figures[name].find("img").get("alt", "")) > 20, name
    text = flat(article.get_text())
    exercises = page.exercises().values
    assert flat(exercises["x5_wrong"]) in text
    rows = table_rows(article)
    for row in exercises["x5_table"].rows + page.batch().values["tbl_b_visible"].rows:
        assert row in rows
