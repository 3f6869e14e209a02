"""The chapter in two layers: a core that reads in one sitting, and depth one click away.

The core of each page (what shows before anything is opened) is measured by one rule
(tests/reading.py) on the built HTML and held to 15 minutes a page and two and a half hours for the chapter.
Depth sits in 「深入：……」 blocks (sphinx-design's dropdown, a native <details>): closed by default,
opened by the keyboard, and printed in the PDF in place. Every mechanism page closes its core with
要记住.
"""

from __future__ import annotations

import pytest
from conftest import CHAPTER_PAGES, article_of, soup_of
from reading import BIBLIOGRAPHY_TITLE, CHAPTER_BUDGET, DEPTH_TITLE, PAGE_BUDGET, report, table


@pytest.fixture(scope="module")
def readings(book_html):
    rows = report(book_html, lambda name: soup_of(book_html, name))
    print("\n" + table(rows))
    return dict(rows)


@pytest.mark.build
@pytest.mark.parametrize("page", ["index", "summary", *(p for p, _ in CHAPTER_PAGES)])
def test_the_core_of_every_page_reads_in_one_sitting(readings, page):
    name = f"ch02/{page}.html"
    assert name in readings, f"{name} is not in the chapter's contents: {sorted(readings)}"
    assert readings[name].minutes <= PAGE_BUDGET, (
        f"{name}: {readings[name]} = {readings[name].minutes:.1f} min"
    )


@pytest.mark.build
def test_the_whole_chapter_reads_in_two_hours(readings):
    assert sum(r.minutes for r in readings.values()) <= CHAPTER_BUDGET, table(
        list(readings.items())
    )


@pytest.mark.build
@pytest.mark.parametrize("page", [p for p, _ in CHAPTER_PAGES])
def test_depth_is_folded_under_a_title_that_says_what_it_holds(book_html, page):
    article = article_of(book_html, f"ch02/{page}.html")
    blocks = article.select("details.sd-dropdown")
    assert blocks, f"{page}: no 深入 block"
    for block in blocks:
        title = block.find("summary").get_text(" ", strip=True)
        assert title.startswith(DEPTH_TITLE) and len(title) > len(DEPTH_TITLE) + 2, title
        assert not block.has_attr("open"), f"{page}: {title} is open by default"
    # The full listing and the run output are depth on every page.
    for section in ("完整教学代码", "运行结果示例"):
        heading = next(
            h for h in article.find_all("h2") if h.get_text(strip=True).rstrip("#") == section
        )
        assert heading.find_parent("section").select("details.sd-dropdown pre"), (
            f"{page}: {section}"
        )


@pytest.mark.build
@pytest.mark.parametrize("page", [p for p, _ in CHAPTER_PAGES])
def test_every_page_closes_its_core_with_what_to_remember(book_html, page):
    article = article_of(book_html, f"ch02/{page}.html")
    boxes = article.select("div.admonition.remember")
    assert len(boxes) == 1, f"{page}: {len(boxes)} 要记住 boxes"
    box = boxes[0]
    assert box.find(class_="admonition-title").get_text(strip=True) == "要记住"
    assert 3 <= len(box.find_all("li")) <= 5, box.get_text()
    exercises = next(
        h for h in article.find_all("h2") if h.get_text(strip=True).rstrip("#") == "练习"
    ).parent
    assert box.parent is exercises, f"{page}: 要记住 is not in the 练习 section"
    # After it only the page's own bibliography may follow (book/_ext/page_refs.py appends it in HTML).
    after = box.find_next_siblings()
    assert not after or (after[0].get_text(strip=True) == BIBLIOGRAPHY_TITLE and len(after) == 2), (
        f"{page}: 要记住 is not the last thing on the page: {[a.get_text()[:30] for a in after]}"
    )


@pytest.mark.browser
def test_a_depth_block_opens_from_the_keyboard(open_page):
    shown = open_page("ch02/mask.html")
    block = shown.locator("details.sd-dropdown").first
    assert not block.evaluate("d => d.open")
    block.locator("summary").focus()
    shown.keyboard.press("Enter")
    assert block.evaluate("d => d.open")
    assert block.locator("pre").first.is_visible()


WEB_ONLY = "只下载单个文件"


@pytest.mark.pdf
def test_every_depth_block_is_printed_in_the_pdf(book_html, text):
    """The PDF is the complete edition: each 深入 block's title (and so its box) is in it, in place.

    One kind of block is the web edition's own: 运行命令's 「只下载单个文件」 block, whose links fetch single
    files and whose commands run in the book's folder (the PDF names each page's zip and notebook instead,
    test_the_pdf_names_each_pages_downloads). It is left out of the PDF, and only it."""
    from conftest import flat

    for page, _ in CHAPTER_PAGES:
        for block in article_of(book_html, f"ch02/{page}.html").select("details.sd-dropdown"):
            title = flat(block.find("summary").get_text(" ", strip=True))
            if WEB_ONLY in title:
                assert title not in text, f"{page}: {title} is in the PDF, which has no downloads"
            else:
                assert title in text, f"{page}: {title} is not in the PDF"


@pytest.mark.pdf
def test_the_pdf_names_each_pages_downloads(text):
    from chapter import take_home

    for page, _ in CHAPTER_PAGES:
        assert take_home.zip_name(page) in text and take_home.notebook_name(page) in text, page
