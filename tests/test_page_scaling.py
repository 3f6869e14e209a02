"""The scaling page (ch02/scaling.md) as built: its numbers from the code, figure F13 in HTML, browser and PDF.

What every page must have (sections in order, place in the contents, run output, listing, offline, axe)
is tested once for all pages in tests/test_pages.py; this file keeps what is this page's own.
Book tests share the session's builds (``book_html``, ``pdf``/``text``, ``browser`` in conftest.py).
Alone: ``BOOK_TEST_BUILD=_build/scaling-test-html .venv/bin/pytest tests/test_page_scaling.py``.
"""

from __future__ import annotations

import importlib
import math
import sys

import numpy as np
import pytest
from conftest import (
    article_of,
    assert_axe_clean,
    assert_frames_shown,
    flat,
    section_of,
    set_theme,
    table_rows,
    use_the_figure,
)

from chapter import fmt
from chapter import scaling as book_page

pytestmark = pytest.mark.build

att = importlib.import_module("02_attention")
sc = importlib.import_module("02_scaling")
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


# -- the page's own links and boxes ---------------------------------------------------------------------
def test_the_page_teaches_the_row_first_and_owns_its_labels(article, page_text):
    links = [a["href"] for a in article.find_all("a", href=True)]
    assert "mask.html#ch02-mask" in links
    # This page is the first to work a row through ÷√d, the max and exp: it does not say "again".
    assert "再手算" not in page_text and "一行从头算到尾" not in page_text
    # Other pages link to these: temperature, the Jacobian, the stable softmax, the head dimension.
    for label in ("ch02-scaling-temperature", "ch02-scaling-jacobian", "ch02-scaling-stable"):
        assert article.find(id=label) is not None, label


def test_the_core_ends_with_what_to_remember_and_the_depth_is_folded(article):
    remember = article.select("div.admonition.remember")
    assert len(remember) == 1 and 3 <= len(remember[0].find_all("li")) <= 5
    assert remember[0] is article.select("div.admonition")[-1]  # the last box of the page
    titles = [d.find("summary").get_text(strip=True) for d in article.find_all("details")]
    assert all(t.startswith("深入：") for t in titles if "练习" not in t and "解" not in t)
    for section in ("完整教学代码", "运行结果示例"):
        assert section_of(article, section).find("details").find("pre") is not None, section


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
    shown = article.select_one(FIGURE).select(".step-figure-explanation")[0].get_text()
    q = sc.EXAMPLE_Q[sc.QUERY]
    for j, k in enumerate(sc.EXAMPLE_K):
        terms = " + ".join(f"{a:g}×{b:g}" for a, b in zip(q, k))
        score = sum(a * b for a, b in zip(q, k))
        assert f"q·k_{j} = {terms} = {score:.4f}" in shown, (j, terms)


def test_the_variance_table_is_the_measurement_of_the_code(article):
    rows = table_rows(article, sep=" ")
    for d in sc.MEASURE_DIMS:
        m = sc.measure_scaling(d)
        assert [str(d)] + [f"{m[k]:.4f}" for k in ("var_raw", "var_scaled")] in rows, d
        saturation = [str(d)] + [
            f"{m[k]:.4f}"
            for k in ("max_weight_raw", "max_weight_scaled", "grad_raw", "grad_scaled")
        ]
        assert saturation in rows, saturation


def test_the_overflow_limits_are_computed_from_each_formats_largest_value(article, page_text):
    rows = table_rows(article, sep=" ")
    for name in ("float16", "float32", "float64"):
        limit = math.log(float(np.finfo(name).max))
        assert any(row[0] == name and row[-1] == f"{limit:.4f}" for row in rows), name
    assert f"{math.log(sys.float_info.max):.4f}" in page_text
    assert "OverflowError: math range error" in page_text
    assert "[inf, inf, inf]" in page_text and "[nan, nan, nan]" in page_text


def test_the_page_shows_the_texts_the_book_side_writes(page_text):
    sections = (
        book_page.f13,
        book_page.measurement,
        book_page.overflow,
        book_page.axis,
        book_page.checks,
        book_page.sweep,
        book_page.hand_exercise,
        book_page.grow_exercise,
    )
    for section in sections:
        for name, value in section().values.items():
            if isinstance(value, str) and not isinstance(value, fmt.Md):
                assert value in page_text, name


def test_the_weights_and_output_are_the_codes(article):
    figure = article.select_one(FIGURE).get_text()
    weights, out = att.attention(sc.EXAMPLE_Q, sc.EXAMPLE_K, sc.EXAMPLE_V, causal=False)
    assert "输出 = (" + ", ".join(f"{x:.4f}" for x in out[sc.QUERY]) + ")" in figure
    assert all(f"{w:.4f} × " in figure for w in weights[sc.QUERY])


def test_the_wrong_axis_row_sums_are_computed(article):
    wrong = sc.softmax_over_queries(att.scaled_scores(sc.EXAMPLE_Q, sc.EXAMPLE_K))
    sums = [f"{sum(row):.4f}" for row in wrong]
    assert "1.0000" not in sums  # 「每一行之和（最后一列）却都不是」
    rows = table_rows(article, sep=" ")
    for i, total in enumerate(sums):
        assert any(r[0] == f"查询 {i}" and r[-1] == total for r in rows), i


def test_the_checks_numpy_reference_is_shown_where_it_lives(article):
    # The reference of check 4 is not in the download: the page says so and shows its code.
    block = next(
        d for d in article.find_all("details") if "numpy 参照" in d.find("summary").get_text()
    )
    code = block.find("pre").get_text()
    assert "def numpy_reference(q, k, v):" in code and "np.exp(scores - scores.max(" in code
    assert "book/chapter/scaling.py" in block.find("summary").get_text()


def test_the_temperature_sentence_is_generated_from_the_sweep(page_text):
    v = book_page.sweep().values
    assert (
        f"T 从 {v['sweep_t_0']} 增到 {v['sweep_t_1']}，最大权重从 {v['sweep_peak_0']} 降到 {v['sweep_peak_1']}"
        in page_text
    )


def test_the_run_section_offers_the_files_with_02_attention_beside_them(article):
    section = section_of(article, "运行命令")
    links = {a["href"].rsplit("/", 1)[-1]: a["href"] for a in section.find_all("a", href=True)}
    for name in ("02_scaling.py", "02_attention.py", "02_exercises_scaling.py"):
        assert name in links and "_downloads" in links[name], name
    assert "同一个文件夹" in section.get_text()


def test_the_exercises_show_the_computed_answers(page_text):
    ex = importlib.import_module("02_exercises_scaling")
    v = book_page.grow_exercise().values
    assert (
        f"时的权重完全相同；不缩放相当于 T = {v['ex2_t_raw']}，最大权重 {v['ex2_peak_raw']}，"
        f"几乎全给了 Key {v['ex2_top']}。"
    ) in page_text
    assert ">>> [round(p, 4) for p in shifted_softmax([1000, 1001, 1002])]" in page_text
    h = ex.hand_row()
    assert "(" + ", ".join(f"{x:.4f}" for x in h["jg"]).replace("-", "−") + ")" in page_text


# -- figure F13 in the HTML ------------------------------------------------------------------------------
def test_f13_has_one_frame_per_step_with_its_caption_and_sentence(article):
    assert_frames_shown(article.select_one(FIGURE), book_page.f13_frames())


def test_f13_marks_the_cells_each_step_computes(article):
    # The HTML carries the frames function's marks: in each frame the rows its step adds.
    figure = article.select_one(FIGURE)
    for frame, data in zip(figure.select(".step-figure-frame"), book_page.f13_frames()):
        tables = frame.find_all("table")
        assert len(tables) == len(data["tables"])
        for table, expected in zip(tables, data["tables"]):
            shown = [
                [
                    (td.get_text(strip=True), "step-figure-current" in td.get("class", []))
                    for td in tr.find_all(["td", "th"])
                ]
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
    n = len(book_page.f13_frames())
    assert _status(page) == f"第1步，共{n}步"
    page.locator(f"{FIGURE} .step-figure-stage").focus()
    for k in range(2, n + 1):
        page.keyboard.press("ArrowRight")
        assert _status(page) == f"第{k}步，共{n}步"
        current = page.locator(
            f"{FIGURE} .step-figure-frame.is-current .step-figure-caption"
        ).inner_text()
        assert current.startswith(f"{k} / {n} · ")
    page.keyboard.press("ArrowRight")  # the last step: stays
    assert _status(page) == f"第{n}步，共{n}步"
    page.keyboard.press("Home")
    assert _status(page) == f"第1步，共{n}步"
    page.get_by_role("button", name="下一步", exact=True).click()
    assert _status(page) == f"第2步，共{n}步"


@pytest.mark.browser
def test_f13_has_no_console_error_when_used(open_page):
    browser_page = open_page(PAGE, ready=READY)
    use_the_figure(browser_page, FIGURE)
    assert browser_page.errors == []


# F13 has its own figure CSS, so its fullest frame is checked in both themes. Reduced motion: the frame
# is shown at once, with no fade-in, so axe never measures colours in the middle of a transition.
@pytest.mark.browser
def test_f13s_fullest_frame_has_no_serious_accessibility_violations(open_page):
    browser_page = open_page(PAGE, ready=READY, theme="light", reduced_motion="reduce")
    browser_page.locator(f"{FIGURE} .step-figure-stage").focus()
    browser_page.keyboard.press("End")
    last = len(book_page.f13_frames())
    browser_page.wait_for_selector(f"{FIGURE} .step-figure-frame.is-current[data-step='{last}']")
    for theme in ("light", "dark"):  # the theme follows the reader's setting as it changes
        set_theme(browser_page, theme)
        assert_axe_clean(browser_page, FIGURE, note=theme)


# -- the PDF ---------------------------------------------------------------------------------------------
@pytest.mark.pdf
def test_the_pdf_carries_f13s_frames_in_order(text):
    frames = book_page.f13_frames()
    where = [
        text.find(flat(f"{k} / {len(frames)} · {f['condition']}")) for k, f in enumerate(frames, 1)
    ]
    assert -1 not in where, where
    assert where == sorted(where)
    for k, f in enumerate(frames):  # each frame's sentence follows its caption
        assert text.find(flat(f["explanation"]), where[k]) > where[k]
