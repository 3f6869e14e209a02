"""The scaling page (ch02/scaling.md) as built: sections, numbers from the code, figure F13 in HTML, browser and PDF.

Book tests share the session's builds (``book_html``, ``pdf``/``text``, ``browser`` in conftest.py).
Run this file alone with ``BOOK_TEST_BUILD=_build/scaling-test-html .venv/bin/pytest tests/test_page_scaling.py``.
"""

from __future__ import annotations

import importlib
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import (
    MECHANISM_SECTIONS, ROOT, article_of, assert_axe_clean, assert_numbered_sections, assert_offline, flat,
    heading_text, section_of, soup_of, table_rows, use_the_figure,
)

pytestmark = pytest.mark.build

att = importlib.import_module("02_attention")
sc = importlib.import_module("02_scaling")
SOURCE = ROOT / "book" / "ch02" / "scaling.md"
TITLE = "缩放与混合（手算一次注意力）"
FIGURE = "[data-step-figure='F13']"
STATUS = f"{FIGURE} [role=status]"
READY = f"{FIGURE}.is-ready"
PAGE = "ch02/scaling.html"


@pytest.fixture(scope="module")
def article(book_html):
    return article_of(book_html, PAGE)


@pytest.fixture(scope="module")
def page_text(article) -> str:
    return article.get_text()


# -- shape ----------------------------------------------------------------------------------------------
def test_the_page_has_the_mechanism_sections_in_order(article):
    assert heading_text(article.find("h1")) == TITLE
    assert [heading_text(h) for h in article.find_all("h2")] == MECHANISM_SECTIONS


def test_the_page_comes_right_after_the_mask_page(book_html):
    chapter = soup_of(book_html, "ch02/index.html")
    toc = [a["href"] for a in chapter.select(".toctree-wrapper a")]
    assert toc.index("scaling.html") == toc.index("mask.html") + 1
    mask = soup_of(book_html, "ch02/mask.html")
    assert mask.select_one("a.right-next")["href"] == "scaling.html"


def test_the_page_links_back_to_the_mask_pages_worked_row_and_temperature_table(article):
    links = [a["href"] for a in article.find_all("a", href=True)]
    assert "mask.html#ch02-mask" in links
    worked = article.find("a", string="一行从头算到尾")
    assert worked is not None and worked["href"].startswith("mask.html#")
    temperature = article.find("a", string="分数差距与温度")
    assert temperature is not None and temperature["href"].startswith("mask.html#")


def test_every_example_states_its_inputs_first(article):
    boxes = [a for a in article.find_all(class_="admonition") if "输入与适用条件" in a.get_text()]
    assert len(boxes) >= 9
    # F13's inputs are stated inside the figure, before its frames.
    figure = article.select_one(FIGURE)
    box = figure.find(class_="admonition")
    assert box is not None and "输入与适用条件" in box.get_text()
    assert box.find_next(class_="step-figure-frame") is not None


# -- numbers from the code --------------------------------------------------------------------------
def test_every_score_of_the_row_is_written_as_its_sum_of_products(article):
    rows = table_rows(article, sep=" ")
    q = sc.EXAMPLE_Q[sc.QUERY]
    for j, k in enumerate(sc.EXAMPLE_K):
        terms = " + ".join(f"{a:g}×{b:g}" for a, b in zip(q, k))
        score = sum(a * b for a, b in zip(q, k))
        assert any(row[0] == f"Key {j}" and terms in row and f"{score:g}" in row for row in rows), (j, terms)


def test_the_variance_table_is_the_measurement_of_the_code(article):
    rows = table_rows(article, sep=" ")
    for d in sc.MEASURE_DIMS:
        m = sc.measure_scaling(d)
        assert [str(d)] + [f"{m[k]:.4f}" for k in ("var_raw", "var_scaled")] in rows, d
        saturation = [str(d)] + [f"{m[k]:.4f}" for k in ("max_weight_raw", "max_weight_scaled", "grad_raw", "grad_scaled")]
        assert saturation in rows, saturation


def test_the_overflow_limits_are_computed_from_each_formats_largest_value(article, page_text):
    rows = table_rows(article, sep=" ")
    for name in ("float16", "float32", "float64"):
        limit = math.log(float(np.finfo(name).max))
        assert any(row[0] == name and row[-1] == f"{limit:.4f}" for row in rows), name
    assert f"{math.log(sys.float_info.max):.4f}" in page_text
    assert "OverflowError: math range error" in page_text
    assert "[inf, inf, inf]" in page_text and "[nan, nan, nan]" in page_text


def test_the_weights_output_and_mix_are_the_codes(page_text):
    s = sc.visible_steps(sc.EXAMPLE_Q[sc.QUERY], sc.EXAMPLE_K, sc.EXAMPLE_V)
    _, out = att.attention(sc.EXAMPLE_Q, sc.EXAMPLE_K, sc.EXAMPLE_V, causal=False)
    shown = "(" + ", ".join(f"{x:.4f}" for x in out[sc.QUERY]) + ")"
    assert f"= {shown}" in page_text  # the end of the written-out mix
    assert "、".join(f"{w:.4f}" for w in s["weights"]) in page_text


def test_the_wrong_axis_row_sums_are_computed(page_text):
    wrong = sc.softmax_over_queries(att.scaled_scores(sc.EXAMPLE_Q, sc.EXAMPLE_K))
    sums = [sum(row) for row in wrong]
    assert "、".join(f"{x:.4f}" for x in sums) in page_text
    assert any(abs(x - 1) > 0.01 for x in sums)
    assert sc.row_sum_sentence(wrong) in page_text


def test_the_temperature_sentence_is_generated_from_the_sweep(page_text):
    s = sc.visible_steps(sc.EXAMPLE_Q[sc.QUERY], sc.EXAMPLE_K, sc.EXAMPLE_V)
    sweep = sc.temperature_sweep(s["scaled"], sc.EXAMPLE_V, sc.TEMPERATURES)
    assert sc.sweep_sentence(sweep, sc.EXAMPLE_V) in page_text


def test_run_output_is_the_real_stdout_of_the_script(article):
    section = section_of(article, "运行结果示例")
    shown = section.find("pre").get_text()
    run = subprocess.run([sys.executable, str(ROOT / "code" / "02_scaling.py")], capture_output=True, text=True, check=True)
    assert json.loads(shown) == json.loads(run.stdout)


def test_the_whole_teaching_code_is_shown(page_text):
    for name in sc.__all__:
        assert f"def {name}(" in page_text


def test_the_download_link_is_the_teaching_file(article):
    link = next(a for a in article.find_all("a", href=True) if a["href"].endswith("02_scaling.py"))
    assert "_downloads" in link["href"]


def test_the_exercises_show_the_computed_answers(page_text):
    ex = importlib.import_module("02_exercises_scaling")
    assert ex.bug_checks()["sentence"] in page_text
    assert ">>> [round(p, 4) for p in shifted_softmax([1000, 1001, 1002])]" in page_text
    h = ex.hand_row()
    assert "(" + ", ".join(f"{x:.4f}" for x in h["output"]) + ")" in page_text


# -- figure F13 in the HTML ------------------------------------------------------------------------------
def test_f13_has_one_frame_per_step_with_its_caption_and_sentence(article):
    frames = sc.f13_frames()
    figure = article.select_one(FIGURE)
    captions = [c.get_text(strip=True) for c in figure.select(".step-figure-caption")]
    assert captions == [f"{k} / {len(frames)} · {f['condition']}" for k, f in enumerate(frames, 1)]
    sentences = [e.get_text(strip=True) for e in figure.select(".step-figure-explanation")]
    assert sentences == [f["explanation"] for f in frames]


def test_f13_marks_the_cells_each_step_computes(article):
    # The HTML carries the frames function's marks: in frames 1-5 the new row of the score table,
    # in frame 6 the products weight × V row, in frame 7 the output row.
    figure = article.select_one(FIGURE)
    for frame, data in zip(figure.select(".step-figure-frame"), sc.f13_frames()):
        tables = frame.find_all("table")
        assert len(tables) == len(data["tables"])
        for table, expected in zip(tables, data["tables"]):
            shown = [
                [(td.get_text(strip=True), "step-figure-current" in td.get("class", [])) for td in tr.find_all(["td", "th"])]
                for tr in table.find("tbody").find_all("tr")
            ]
            assert shown == [[(c["text"], c["highlight"]) for c in row] for row in expected["rows"]]
        marked = frame.select(".step-figure-current")
        assert marked, "every frame marks the cells of its step"


# -- the browser ----------------------------------------------------------------------------------------
def _status(page) -> str:
    return page.locator(STATUS).inner_text()


@pytest.mark.browser
def test_f13_steps_with_the_keys_and_announces_each_step(open_page):
    page = open_page(PAGE, ready=READY)
    n = len(sc.f13_frames())
    assert _status(page) == f"第1步，共{n}步"
    page.locator(f"{FIGURE} .step-figure-stage").focus()
    for k in range(2, n + 1):
        page.keyboard.press("ArrowRight")
        assert _status(page) == f"第{k}步，共{n}步"
        current = page.locator(f"{FIGURE} .step-figure-frame.is-current .step-figure-caption").inner_text()
        assert current.startswith(f"{k} / {n} · ")
    page.keyboard.press("ArrowRight")  # the last step: stays
    assert _status(page) == f"第{n}步，共{n}步"
    page.keyboard.press("Home")
    assert _status(page) == f"第1步，共{n}步"
    page.get_by_role("button", name="下一步", exact=True).click()
    assert _status(page) == f"第2步，共{n}步"


@pytest.mark.browser
def test_f13_has_no_console_error_and_no_request_leaves_the_book(open_page, book_html):
    page = open_page(PAGE, ready=READY)
    use_the_figure(page, FIGURE)
    assert page.errors == []
    assert_offline(page, book_html)


def _fullest_frame(page) -> None:
    page.locator(f"{FIGURE} .step-figure-stage").focus()
    page.keyboard.press("End")  # the fullest frame
    page.wait_for_timeout(500)  # let the frame's fade-in end


# F13 has its own figure CSS, so it is checked in both themes: in light by the page-wide run (which
# includes F13 on the same frame), in dark on its own.
@pytest.mark.browser
def test_f13_and_the_page_have_no_serious_accessibility_violations_in_light(open_page):
    page = open_page(PAGE, ready=READY, theme="light")
    _fullest_frame(page)
    assert_axe_clean(page)


@pytest.mark.browser
def test_f13_has_no_serious_accessibility_violations_in_dark(open_page):
    page = open_page(PAGE, ready=READY, theme="dark")
    _fullest_frame(page)
    assert_axe_clean(page, FIGURE)


# -- the PDF ---------------------------------------------------------------------------------------------
def _headings(level: int) -> list[str]:
    marks = "#" * level
    return re.findall(rf"^{marks} (.+)$", SOURCE.read_text(encoding="utf-8"), flags=re.M)


@pytest.mark.pdf
def test_the_pdf_carries_the_page_with_its_sections_numbered_in_order(text):
    assert _headings(2) == MECHANISM_SECTIONS
    number = assert_numbered_sections(text, TITLE)
    mask = re.search(rf"2\.(\d+){re.escape(flat('Mask是可见性表，不是额外语义'))}", text)
    assert number == int(mask.group(1)) + 1


@pytest.mark.pdf
def test_the_pdf_carries_f13s_frames_in_order(text):
    frames = sc.f13_frames()
    where = [text.find(flat(f"{k} / {len(frames)} · {f['condition']}")) for k, f in enumerate(frames, 1)]
    assert -1 not in where, where
    assert where == sorted(where)
    for k, f in enumerate(frames):  # each frame's sentence follows its caption
        assert text.find(flat(f["explanation"]), where[k]) > where[k]
