"""The book ships the MathJax files its pages load, and every formula renders from them, offline.

book/_ext/mathjax_local.py copies ``tex-chtml.js``, the fonts of its HTML output and the SVG output
that MathJax's menu offers into ``_static/mathjax``. Here Chromium opens every page that has maths from
disk and waits for MathJax: every formula is typeset, none is a MathJax error, nothing fails to load,
and every MathJax file a page asks for is one the book ships (the chapter's mechanism pages in the one
visit tests/test_pages.py pays each of them). A formula that needs a file not shipped
(a TeX extension that ``tex-chtml.js`` loads on demand) fails here with that file's name.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from conftest import CHAPTER_PAGES, ROOT

sys.path.insert(0, str(ROOT / "book" / "_ext"))
from mathjax_local import ENTRY, FONTS, SVG, shipped  # noqa: E402

STATIC = "_static/mathjax/"


def _pages(book_html: Path) -> list[str]:
    """Every built page, relative to the book's folder."""
    return sorted(
        page.relative_to(book_html).as_posix()
        for page in book_html.rglob("*.html")
        if page.relative_to(book_html).parts[0] not in ("_static", "take-home")
    )


# What Sphinx writes around a formula (HTML's own class list), and a script's source. Read with regular
# expressions: parsing every page would take longer than all the rest of these tests.
MATHS = re.compile(r'<(?:span|div) class="math(?: [^"]*)?"')
SCRIPT = re.compile(r'<script\b[^>]*\bsrc="([^"]*)"')


def _html(book_html: Path, name: str) -> str:
    return (book_html / name).read_text(encoding="utf-8")


def _with_maths(book_html: Path) -> list[str]:
    return [name for name in _pages(book_html) if MATHS.search(_html(book_html, name))]


def _mathjax_files(page) -> set[str]:
    """The MathJax files a page asked for, relative to _static/mathjax."""
    return {url.split(STATIC, 1)[1] for url in page.requests if STATIC in url}


def test_what_is_shipped_is_the_entry_point_its_fonts_and_the_svg_output():
    files = shipped()
    assert ENTRY in files
    assert set(SVG) <= set(files)
    fonts = [name for name in files if name.startswith(FONTS + "/")]
    assert "output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff" in fonts
    assert len(files) == 1 + len(SVG) + len(fonts)


@pytest.mark.build
def test_the_book_folder_holds_only_the_shipped_mathjax(book_html):
    folder = book_html / STATIC
    held = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert held == shipped()


@pytest.mark.build
def test_every_page_with_maths_loads_the_shipped_entry_point_and_no_other_page_does(book_html):
    with_maths = set(_with_maths(book_html))
    assert {"ch02/mask.html", "ch02/scaling.html", "glossary.html"} <= with_maths
    for name in _pages(book_html):
        loads = [src for src in SCRIPT.findall(_html(book_html, name)) if STATIC in src]
        if name in with_maths:
            assert [src.split(STATIC, 1)[1] for src in loads] == [ENTRY], (name, loads)
        else:
            assert loads == [], (name, loads)


def assert_typeset(page, name: str) -> set[str]:
    """Every formula of the opened ``page`` is typeset, none is a MathJax error, no file failed to load,
    and every MathJax file it asked for is shipped. Returns those files (relative to _static/mathjax)."""
    formulas = page.locator(".math").count()
    assert formulas > 0, name
    assert page.locator("mjx-container").count() == formulas, name
    assert page.locator("mjx-merror").count() == 0, name
    assert page.errors == [], (name, page.errors)  # a file that failed to load is an error
    files = _mathjax_files(page)
    assert ENTRY in files, name
    assert files <= set(shipped()), (name, files - set(shipped()))
    return files


@pytest.mark.browser
def test_every_formula_of_every_page_renders_from_the_shipped_files(open_page, book_html):
    # The chapter's mechanism pages are opened once each by tests/test_pages.py, which checks them
    # with assert_typeset; here, every other page with maths.
    asked = set()
    mechanism = {f"ch02/{page}.html" for page, _ in CHAPTER_PAGES}
    others = [name for name in _with_maths(book_html) if name not in mechanism]
    assert "glossary.html" in others
    for name in others:
        page = open_page(name, maths=True)
        asked |= assert_typeset(page, name)
        page.context.close()
    # The fonts are shipped as one set; the entry point and the fonts are what the pages ask for.
    assert {ENTRY, "output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff"} <= asked


@pytest.mark.browser
def test_the_menus_svg_renderer_works_offline(open_page, book_html):
    page = open_page("ch02/scaling.html", maths=True)
    assert_typeset(page, "ch02/scaling.html")
    formulas = page.locator(".math").count()
    formula = page.locator("mjx-container").first
    formula.scroll_into_view_if_needed()
    formula.click(button="right")
    page.get_by_role("menuitem", name="Math Settings").hover()
    page.get_by_role("menuitem", name="Math Renderer").hover()
    page.get_by_role("menuitemradio", name="SVG").click()
    svg = 'mjx-container[jax="SVG"]'
    page.wait_for_function(f"document.querySelectorAll('{svg}').length === {formulas}")
    assert page.locator("mjx-merror").count() == 0
    assert page.errors == []
    assert set(SVG) <= _mathjax_files(page) <= set(shipped())
