"""What every mechanism page of chapter 2 must have, checked once for every page of conftest.CHAPTER_PAGES.

Each page: its sections in order, its place in the chapter's table of contents, the complete
teaching file shown as it is on disk, the run output equal to what the file prints, downloads that
run where a reader puts them (an empty folder, nothing but the downloaded files, ``python -E -s``),
no request leaving the book, every formula typeset, no serious axe violation, no sideways scrolling on
a phone. What is particular to a page (its
numbers, sentences and figure) is tested in ``tests/test_page_<page>.py``.
"""

from __future__ import annotations

import copy
import json
import re
import zipfile
from pathlib import Path

import pytest
from conftest import (
    CHAPTER_PAGES,
    MECHANISM_SECTIONS,
    ROOT,
    article_of,
    assert_axe_clean,
    assert_offline,
    heading_text,
    section_of,
    soup_of,
)
from test_listings import assert_a_100_column_line_fits_the_listing
from test_mathjax import assert_typeset

from chapter import fmt, take_home

PAGES = CHAPTER_PAGES
NAMES = [page for page, _ in PAGES]


def _article(book_html: Path, page: str):
    """The page's article, parsed once per worker and shared (conftest.soup_of)."""
    return article_of(book_html, f"ch02/{page}.html")


@pytest.mark.build
@pytest.mark.parametrize("page", NAMES)
def test_the_sections_are_the_mechanism_sections_in_order(book_html, page):
    article = _article(book_html, page)
    assert [heading_text(h) for h in article.find_all("h2")] == MECHANISM_SECTIONS


@pytest.mark.build
def test_the_chapter_contents_list_the_pages_in_reading_order(book_html):
    chapter = soup_of(book_html, "ch02/index.html")
    toc = [a["href"] for a in chapter.select(".toctree-wrapper a") if not a["href"].startswith("#")]
    assert [href for href in toc if href.removesuffix(".html") in NAMES] == [
        f"{p}.html" for p in NAMES
    ]
    for before, after in zip(NAMES, NAMES[1:]):
        assert (
            soup_of(book_html, f"ch02/{before}.html").select_one("a.right-next")["href"]
            == f"{after}.html"
        )


@pytest.mark.build
@pytest.mark.parametrize("page, teaching", PAGES)
def test_the_whole_teaching_file_is_shown_as_it_is(book_html, page, teaching):
    shown = section_of(article_of(book_html, f"ch02/{page}.html"), "完整教学代码").find("pre")
    pre = copy.copy(shown)  # the shared page is read-only (conftest.soup_of)
    for number in pre.select("span.linenos"):  # the listing's line numbers are not code
        number.decompose()
    shown = pre.get_text()
    assert shown.rstrip("\n") == (ROOT / "code" / teaching).read_text(encoding="utf-8").rstrip("\n")


def json_listings(article) -> list[str]:
    """The page's listings that are a JSON object: run outputs and the records of make crosscheck."""
    found = []
    for block in article.find_all("pre"):
        text = block.get_text()
        if not text.lstrip().startswith("{"):
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            found.append(text)
    return found


def lines_that_scroll(text: str) -> list[str]:
    r"""Lines wider than a listing (fmt.WIDTH columns), unless all the line holds, past its keys and
    brackets, is one string (a library's warning text): a JSON string cannot wrap.

    >>> lines_that_scroll('{\n  "a": [1, 2],\n  "note": ["' + "x" * 120 + '"]\n}')
    []
    >>> len(lines_that_scroll('{"rows": [' + ", ".join(["0.5"] * 40) + "]}"))
    1
    """
    wide = []
    for line in text.splitlines():
        if fmt.columns(line) > fmt.WIDTH and not one_long_string(line):
            wide.append(line)
    return wide


def one_long_string(line: str) -> bool:
    """Whether ``line`` holds one JSON string and nothing else but keys, brackets and commas."""
    rest = line.strip()
    while True:
        before = rest
        rest = re.sub(r'^"(?:[^"\\]|\\.)*":\s*', "", rest).strip("[]{}, ")
        if rest == before:
            break
    try:
        return isinstance(json.loads(rest), str)
    except json.JSONDecodeError:
        return False


@pytest.mark.build
@pytest.mark.parametrize("page", NAMES)
def test_no_line_of_a_json_listing_scrolls_sideways(book_html, page):
    # A line longer than a listing's width scrolls (up to 736 columns once); only a single value that is
    # itself longer (a library's warning text) may stay on its line. Run outputs and crosscheck records.
    article = _article(book_html, page)
    shown = section_of(article, "运行结果示例").find("pre").get_text()
    assert shown in json_listings(article)
    for text in json_listings(article):
        assert lines_that_scroll(text) == [], lines_that_scroll(text)[0][:120]


def test_the_json_layout_keeps_the_json_and_the_width():
    record = {"性质": "人工构造", "rows": [[0.5] * 40] * 3, "n": list(range(100)), "empty": []}
    text = fmt.json_text(record)
    assert json.loads(text) == record
    assert max(fmt.columns(line) for line in text.splitlines()) <= fmt.WIDTH
    assert fmt.json_text({"short": [1, 2]}) == '{\n  "short": [1, 2]\n}'


def _downloads(book_html: Path, page: str) -> list[Path]:
    """The files the page offers (Sphinx copies them to _downloads/<hash>/<name>)."""
    html = book_html / "ch02" / f"{page}.html"
    links = {a["href"] for a in _article(book_html, page).select("a.download")}
    return sorted({(html.parent / href).resolve() for href in links}, key=lambda p: p.name)


@pytest.mark.build
@pytest.mark.parametrize("page, teaching", PAGES)
def test_the_page_offers_the_files_of_its_zip_one_by_one(book_html, page, teaching):
    """The page's downloads are the zip's files, byte for byte: tests/test_take_home.py runs them there
    as a reader does."""
    files = _downloads(book_html, page)
    names = [f.name for f in files]
    assert teaching in names and f"02_exercises_{page}.py" in names, names
    assert names == sorted(take_home.files(page))
    with zipfile.ZipFile(book_html / "take-home" / take_home.zip_name(page)) as z:
        assert all(f.read_bytes() == z.read(f.name) for f in files), names
    if "02_attention.py" in names and teaching != "02_attention.py":
        # The page says, next to the download, that the file needs 02_attention.py beside it.
        paragraph = next(
            a.find_parent("p")
            for a in _article(book_html, page).select("a.download")
            if a.get_text(strip=True) == teaching
        )
        assert "02_attention.py" in paragraph.get_text(), paragraph.get_text()


NEXT_FRAME_WIDTH = """() => new Promise(done => requestAnimationFrame(
    () => done(document.scrollingElement.scrollWidth)))"""


@pytest.mark.browser
@pytest.mark.parametrize("page", NAMES)
def test_the_page_reads_offline_renders_its_maths_passes_axe_and_fits_a_phone_and_a_100_column_line(
    open_page, book_html, page
):
    # One visit for all that a page shows in the browser (a visit of a large page costs seconds).
    name = f"ch02/{page}.html"
    shown = open_page(name, maths=True, reduced_motion="reduce")
    assert_offline(shown, book_html)
    assert not shown.errors, shown.errors
    assert_typeset(
        shown, name
    )  # every formula, from the shipped MathJax files (tests/test_mathjax.py)
    assert_axe_clean(shown, note=page)
    # On a phone the page never scrolls sideways: wide tables and figures scroll in their own boxes.
    shown.set_viewport_size({"width": 360, "height": 800})
    width = shown.evaluate(NEXT_FRAME_WIDTH)  # measured once the new size is laid out
    assert width <= 360, f"{name} scrolls sideways on a phone: {width} px"
    shown.set_viewport_size({"width": 1280, "height": 900})
    assert_a_100_column_line_fits_the_listing(shown, page)  # last: it opens the listing's block
