"""The built HTML book: pages, sections, numbers from the run, offline reading and Chinese search."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from conftest import MASK_SECTIONS, ROOT

att = importlib.import_module("02_attention")


def page(book_html: Path, name: str) -> BeautifulSoup:
    return BeautifulSoup((book_html / name).read_text(encoding="utf-8"), "html.parser")


def heading_text(tag) -> str:
    return tag.get_text(" ", strip=True).rstrip("#").strip()


def article(soup: BeautifulSoup):
    return soup.find("article")


def test_mask_page_has_the_sections_in_order(book_html):
    soup = page(book_html, "ch02/mask.html")
    assert heading_text(article(soup).find("h1")) == "Mask是可见性表，不是额外语义"
    assert [heading_text(h) for h in article(soup).find_all("h2")] == MASK_SECTIONS


def test_chapter_opening_and_landing_page(book_html):
    opening = page(book_html, "ch02/index.html")
    headings = [heading_text(h) for h in article(opening).find_all(["h1", "h2", "h3"])]
    assert headings[:2] == ["手算注意力与因果掩码", "沿着对象与状态理解本章"]
    for term in ("多头", "位置旋转", "反向传播"):
        assert term in article(opening).get_text()
    landing = page(book_html, "index.html")
    assert "第2章 手算注意力与因果掩码" in landing.get_text()
    assert landing.find("a", href="ch02/mask.html")


def test_every_example_states_its_inputs_first(book_html):
    soup = page(book_html, "ch02/mask.html")
    boxes = [a for a in article(soup).find_all(class_="admonition") if "输入与适用条件" in a.get_text()]
    assert len(boxes) >= 6


def test_the_softmax_numbers_come_from_the_run(book_html):
    text = article(page(book_html, "ch02/mask.html")).get_text()
    p = att.softmax([0, 1, 2])
    assert "softmax([0, 1, 2]) ≈ [" + ", ".join(f"{x:.4f}" for x in p) + "]" in text
    mixed = sum(pj * x for pj, x in zip(p, [10, 20, 30]))
    assert f"{mixed:.4f}" in text


def test_the_weight_table_holds_the_computed_weights(book_html):
    soup = page(book_html, "ch02/mask.html")
    weights, _ = att.attention(att.DEMO_Q, att.DEMO_K, att.DEMO_V)
    rows = [[td.get_text(strip=True) for td in tr.find_all("td")] for tr in article(soup).find_all("tr")]
    for i, row in enumerate(weights):
        assert [f"绝对位置 {i}"] + [f"{w:.4f}" for w in row] in rows


def test_the_empty_row_error_is_the_codes_own_message(book_html):
    text = article(page(book_html, "ch02/mask.html")).get_text()
    with pytest.raises(ValueError) as error:
        att.attention(att.DEMO_Q, att.DEMO_K, att.DEMO_V, key_valid=[False, True, True])
    assert str(error.value) in text


def test_run_output_is_the_real_stdout_of_the_script(book_html):
    soup = page(book_html, "ch02/mask.html")
    section = next(s for s in article(soup).find_all("section") if s.find("h2", recursive=False) and heading_text(s.find("h2")) == "运行结果示例")
    shown = section.find("pre").get_text()
    run = subprocess.run([sys.executable, str(ROOT / "code" / "02_attention.py")], capture_output=True, text=True, check=True)
    assert json.loads(shown) == json.loads(run.stdout)


def test_the_whole_teaching_code_is_shown(book_html):
    text = article(page(book_html, "ch02/mask.html")).get_text()
    source = (ROOT / "code" / "02_attention.py").read_text(encoding="utf-8")
    for name in att.__all__:
        assert f"def {name}(" in text
    assert source.splitlines()[0] in text


def _html_files(book_html: Path):
    return sorted(p for p in book_html.rglob("*.html") if "_static" not in p.parts)


def test_no_page_loads_anything_from_the_network(book_html):
    for html in _html_files(book_html):
        soup = BeautifulSoup(html.read_text(encoding="utf-8"), "html.parser")
        for tag, attr in (("script", "src"), ("link", "href"), ("img", "src"), ("iframe", "src")):
            for el in soup.find_all(tag):
                url = el.get(attr)
                if not url or (tag == "link" and "stylesheet" not in el.get("rel", []) and "preload" not in el.get("rel", [])):
                    continue
                assert not re.match(r"^(https?:)?//", url), f"{html.name}: {tag} {url}"
                assert (html.parent / url.split("?")[0]).resolve().is_file(), f"{html.name}: {url} missing"


def test_maths_is_rendered_by_a_local_mathjax(book_html):
    soup = page(book_html, "ch02/index.html")
    sources = [s.get("src", "") for s in soup.find_all("script")]
    assert any(s.startswith("../_static/mathjax/") for s in sources), sources
    assert (book_html / "_static" / "mathjax" / "tex-chtml.js").is_file()


def test_search_index_holds_the_chinese_terms_of_the_mask_page(book_html):
    raw = (book_html / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(raw[raw.index("(") + 1 : raw.rindex(")")])
    mask = index["docnames"].index("ch02/mask")
    for term in ("因果", "掩码", "可见性表", "缓存"):
        docs = [index[kind].get(term) for kind in ("terms", "titleterms")]  # a word is in one of them
        found = {d for hit in docs if hit is not None for d in (hit if isinstance(hit, list) else [hit])}
        assert mask in found, term


def test_the_search_script_names_a_stemmer_that_exists(book_html):
    js = (book_html / "_static" / "language_data.js").read_text(encoding="utf-8")
    assigned = re.search(r"window\.Stemmer = (\w+);", js).group(1)
    assert re.search(rf"\b{assigned}\b\s*=|class {assigned}|function {assigned}\b|var {assigned}\b", js.replace(f"window.Stemmer = {assigned};", ""))
