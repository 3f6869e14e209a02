"""The built-in search works in Chinese, from the HTML opened from disk.

Sphinx 9.0's own Chinese search ends its script with a stemmer name that no script defines
(https://github.com/sphinx-doc/sphinx/issues/14229); book/_ext/zh_search.py is the shim that names the
stemmer it ships. One test here fails as soon as the pinned Sphinx writes a name its script defines: the
shim is then deleted.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import CHINESE

ASSIGNED = re.compile(r"window\.Stemmer\s*=\s*(\w+)\s*;")


def defines(script: str, name: str) -> bool:
    """Whether ``script`` (language_data.js) defines ``name`` as a class, function or variable."""
    pattern = rf"(?:\bclass\s+{name}\b|\bfunction\s+{name}\s*\(|\b(?:var|let|const)\s+{name}\s*=)"
    return re.search(pattern, script) is not None


def stemmer(html: Path) -> tuple[str, str]:
    """The name language_data.js assigns to ``window.Stemmer``, and the script."""
    script = (html / "_static" / "language_data.js").read_text(encoding="utf-8")
    found = ASSIGNED.search(script)
    assert found, "language_data.js assigns no stemmer"
    return found.group(1), script


def test_defines_reads_a_class_a_function_and_a_variable():
    assert defines("class EnglishStemmer extends BaseStemmer {}", "EnglishStemmer")
    assert defines("var Stemmer = function () {}", "Stemmer")
    assert defines("function Stemmer() {}", "Stemmer")
    assert not defines("window.Stemmer = ChineseStemmer;", "ChineseStemmer")


@pytest.mark.build
def test_sphinx_still_needs_the_chinese_search_shim(tmp_path):
    """A one-page book in Chinese without the shim: Sphinx's script names a stemmer it never defines.

    When this fails, the pinned Sphinx has the fix (sphinx-doc/sphinx#14416): delete
    book/_ext/zh_search.py, take ``zh_search`` out of conf.py's extensions, and delete this test.
    """
    source = tmp_path / "src"
    source.mkdir()
    (source / "conf.py").write_text(CHINESE, encoding="utf-8")
    (source / "index.rst").write_text("标题\n====\n\n因果掩码与可见性表。\n", encoding="utf-8")
    out = tmp_path / "html"
    build = [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(source), str(out)]
    subprocess.run(build, check=True, capture_output=True, text=True)
    name, script = stemmer(out)
    assert not defines(script, name), (
        f"Sphinx now defines {name}: book/_ext/zh_search.py is no longer needed"
    )


@pytest.mark.build
def test_the_books_search_script_assigns_a_stemmer_it_defines(book_html):
    name, script = stemmer(book_html)
    assert defines(script, name), name


def finished(page) -> None:
    """Wait until the search has listed every result: Sphinx adds them one by one, then writes its summary."""
    page.wait_for_function(
        "document.querySelector('#search-results p.search-summary')?.innerText.length > 0",
        timeout=30_000,
    )


@pytest.mark.browser
@pytest.mark.parametrize("query", ["因果", "掩码", "可见性表"])
def test_searching_a_chinese_term_lists_the_mask_page(book_html, browser, query):
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto((book_html / "search.html").as_uri() + "?q=" + quote(query))
    finished(page)
    results = page.locator("#search-results ul.search li a")
    links = results.evaluate_all("els => els.map(a => a.getAttribute('href'))")
    assert any(link.startswith("ch02/mask.html") for link in links), links
    assert errors == []
    page.close()


@pytest.mark.browser
def test_a_word_that_is_not_in_the_book_finds_nothing(book_html, browser):
    page = browser.new_page()
    page.goto((book_html / "search.html").as_uri() + "?q=" + quote("不存在的词语甲乙丙"))
    finished(page)
    assert page.locator("#search-results ul.search li").count() == 0
    page.close()
