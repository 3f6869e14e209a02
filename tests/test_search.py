"""The built-in search works in Chinese, from the HTML opened from disk."""

from __future__ import annotations

from urllib.parse import quote

import pytest

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("query", ["因果", "掩码", "可见性表"])
def test_searching_a_chinese_term_lists_the_mask_page(book_html, browser, query):
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto((book_html / "search.html").as_uri() + "?q=" + quote(query))
    results = page.locator("#search-results ul.search li a")
    results.first.wait_for(timeout=15_000)
    links = results.evaluate_all("els => els.map(a => a.getAttribute('href'))")
    assert any(link.startswith("ch02/mask.html") for link in links), links
    assert errors == []
    page.close()


def test_a_word_that_is_not_in_the_book_finds_nothing(book_html, browser):
    page = browser.new_page()
    page.goto((book_html / "search.html").as_uri() + "?q=" + quote("不存在的词语甲乙丙"))
    page.locator("#search-results p.search-summary").wait_for(timeout=15_000)
    assert page.locator("#search-results ul.search li").count() == 0
    page.close()
