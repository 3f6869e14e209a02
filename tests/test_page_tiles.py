"""The tiles page (book/ch02/tiles.md): its computed tables, sentences and figure F15 in the built HTML.

What every page must have (sections in order, place in the contents, run output, listing, downloads, offline,
axe) is tested once for all pages in tests/test_pages.py; the book side's facts on other inputs in
tests/test_chapter_tiles.py.
"""

from __future__ import annotations

import pytest
from conftest import article_of, assert_frames_shown, flat, table_rows

from chapter import fmt
from chapter import tiles as page

PAGE = "ch02/tiles.html"
FIGURE = "[data-step-figure='F15']"


@pytest.fixture(scope="module")
def article(book_html):
    return article_of(book_html, PAGE)


@pytest.mark.build
def test_every_example_and_exercise_states_its_inputs(article):
    boxes = [a for a in article.find_all(class_="admonition") if "输入与适用条件" in a.get_text()]
    assert len(boxes) >= 10  # five examples, the timing, four exercises


@pytest.mark.build
def test_every_glued_text_is_on_the_page(article):
    # The timing is measured again by every build: its numbers are not compared here.
    sections = [page.online, page.tiles, page.count, page.guard, page.checks, page.flex]
    values = [section().values for section in sections] + [s.values for s in page.exercises()]
    glued = {name: v for each in values for name, v in each.items() if type(v) is str}
    assert len(glued) > 50  # the inputs are typed in the page, not glued
    text = flat(article.get_text())
    assert [name for name, value in glued.items() if flat(value) not in text] == []


@pytest.mark.build
def test_the_computed_tables_are_on_the_page(article):
    rows = table_rows(article)
    tables = [
        page.online().values["tbl_online"],
        page.tiles().values["tbl_grid"],
        page.count().values["tbl_counts"],
        page.flex().values["tbl_flex"],
        page.cache_exercise().values["x2_table"],
    ]
    for table in tables:
        for row in table.rows:
            assert row in rows, row
    checks = page.checks().values["tbl_checks"]
    assert all(row in rows for row in checks.rows)


@pytest.mark.build
def test_f15_shows_each_frame_with_its_caption_and_sentence(article):
    frames = page.f15_frames()
    figure = article.select_one(FIGURE)
    assert_frames_shown(figure, frames)
    # F15's inputs are stated inside the figure, before its frames.
    box = figure.find(class_="admonition")
    assert "输入与适用条件" in box.get_text() and box.find_next(class_="step-figure-frame")
    for frame, data in zip(figure.select(".step-figure-frame"), frames):
        cells = [[td.get_text(strip=True) for td in tr.find_all(["th", "td"])]
                 for tr in frame.find("tbody").find_all("tr")]  # fmt: skip
        assert cells == [[c["text"] for c in row] for row in data["tables"][0]["rows"]]


@pytest.mark.build
def test_the_timing_is_said_to_be_this_builds(article):
    text = flat(article.get_text())
    assert flat("这只是这台机器、这一次的数") in text
    table = next(t for t in article.find_all("table") if "跳过空块（毫秒）" in t.get_text())
    assert len(table.find_all("tr")) == 1 + len(page.TIMED_NS)
    # the core gives the bound (the ratio of blocks, not a measurement) before this run's number
    t = page.TIMED_NS[-1] // page.TIMED_BLOCK
    bound = f"{fmt.count(t * (t + 1) // 2)} / {fmt.count(t * t)} 块，比是 {fmt.ratio(t * t / (t * (t + 1) // 2))}"
    assert flat(bound) in text
    for row in table.find_all("tr")[1:]:
        n, blocks, *_ = [td.get_text(strip=True) for td in row.find_all("td")]
        t = int(n.replace(",", "")) // page.TIMED_BLOCK
        assert blocks == f"{fmt.count(t * (t + 1) // 2)} / {fmt.count(t * t)}"


@pytest.mark.build
def test_the_record_is_shown_in_html(article):
    assert flat('"sparsity": 43.75') in flat(article.get_text())
