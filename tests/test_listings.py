"""Listings fit: no line of code/ is wider than 100 columns, and such a line fits where a reader reads it.

The HTML check runs on the page tests/test_pages.py opens for each chapter page
(``assert_a_100_column_line_fits_the_listing``); the rest runs here.

A column is one character, two for a wide (Chinese, full-width) one, as a terminal shows it. In the HTML
at a 1280-px window a full listing (inside its 深入 block, line numbers included) shows a 100-column line
without scrolling; in the PDF the listings' font is chosen so that it is not wrapped (book/latex/preamble.tex).
"""

from __future__ import annotations

import unicodedata

from conftest import ROOT

MAX_COLUMNS = 100
CODE_FILES = sorted((ROOT / "code").rglob("*.py"))


def columns(line: str) -> int:
    """How wide a line is on a terminal: a wide character counts two.

    >>> columns("abc")
    3
    >>> columns("注意力")
    6
    >>> columns("x = 1  # 缓存")
    13
    """
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def wide_lines(text: str) -> list[int]:
    """The numbers (from 1) of the lines wider than MAX_COLUMNS."""
    return [n for n, line in enumerate(text.splitlines(), start=1) if columns(line) > MAX_COLUMNS]


def test_a_wide_line_is_found():
    assert wide_lines("x = 1\n" + "# " + "宽" * 50 + "\n") == [2]
    assert wide_lines("y" * MAX_COLUMNS) == []


def test_no_line_of_the_code_is_wider_than_100_columns():
    found = {
        str(p.relative_to(ROOT)): wide_lines(p.read_text(encoding="utf-8")) for p in CODE_FILES
    }
    assert len(found) > 30
    assert {name: lines for name, lines in found.items() if lines} == {}


def assert_a_100_column_line_fits_the_listing(shown, page: str) -> None:
    """On a chapter page open at 1280 px: the full listing shows a 100-column line without scrolling.

    tests/test_pages.py calls it on the page it opens for each chapter page (one browser page each).
    """
    fit = shown.evaluate(
        """(n) => {
      const pre = [...document.querySelectorAll('article details.sd-dropdown pre')]
        .find(p => p.querySelector('span.linenos'));
      pre.closest('details').open = true;
      const probe = document.createElement('span');
      probe.textContent = 'x'.repeat(n);
      const number = pre.querySelector('span.linenos').cloneNode(true);
      pre.prepend(document.createTextNode('\\n'));
      pre.prepend(probe);
      pre.prepend(number);
      const box = pre.getBoundingClientRect(), style = getComputedStyle(pre);
      const right = box.right - parseFloat(style.paddingRight) - parseFloat(style.borderRightWidth);
      const out = {probe_right: probe.getBoundingClientRect().right, content_right: right,
                   scroll: pre.scrollWidth, client: pre.clientWidth};
      probe.remove(); number.remove(); pre.firstChild.remove();
      out.scroll_after = pre.scrollWidth;
      return out;
    }""",
        MAX_COLUMNS,
    )
    assert fit["probe_right"] <= fit["content_right"], fit
    assert fit["scroll_after"] <= fit["client"], f"{page}: a line of the listing scrolls: {fit}"
