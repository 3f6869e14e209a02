"""The backprop page (book/ch02/backprop.md): its sections, numbers from the run, and its PDF pages.

Every number the page shows is glued from code/02_backprop.py; these tests recompute some of them
here and look for them in the built HTML, read the generated sentences back against the code, and
compare the printed run output with the script's real stdout.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import (
    MECHANISM_SECTIONS, ROOT, article_of, assert_axe_clean, assert_numbered_sections, assert_offline, flat,
    heading_text, soup_of, table_rows,
)

bp = importlib.import_module("02_backprop")
att = importlib.import_module("02_attention")

PAGE = "ch02/backprop.html"
SOURCE = ROOT / "book" / "ch02" / "backprop.md"
TITLE = "反向传播——计算参数的影响"
EX = (bp.EXAMPLE_Q, bp.EXAMPLE_K, bp.EXAMPLE_V, bp.EXAMPLE_D_OUT)


def article(book_html: Path):
    return article_of(book_html, PAGE)


def rows(book_html: Path) -> list[list[str]]:
    return table_rows(article(book_html))


def cell(x: float) -> str:
    """As the page writes a table cell: exact zero as 0, NaN as NaN, else four digits."""
    if x != x:
        return "NaN"
    return "0" if x == 0.0 else f"{x:.4f}"


def text_of(book_html: Path) -> str:
    return article(book_html).get_text()


# -- HTML ------------------------------------------------------------------------------------------------
@pytest.mark.build
def test_sections_in_order_and_title(book_html):
    art = article(book_html)
    assert heading_text(art.find("h1")) == TITLE
    assert [heading_text(h) for h in art.find_all("h2")] == MECHANISM_SECTIONS


@pytest.mark.build
def test_the_page_is_in_the_chapter_toc_after_mask(book_html):
    soup = soup_of(book_html, "ch02/index.html")
    links = [a.get("href") for a in soup.find("article").find_all("a")]
    assert "backprop.html" in [href.split("#")[0] for href in links if href]


@pytest.mark.build
def test_every_example_states_its_inputs_first(book_html):
    boxes = [a for a in article(book_html).find_all(class_="admonition") if "输入与适用条件" in a.get_text()]
    assert len(boxes) >= 7


@pytest.mark.build
def test_the_jacobian_table_holds_the_computed_jacobian(book_html):
    J = bp.softmax_jacobian([0, 1, 2])
    table = rows(book_html)
    for a, row in enumerate(J):
        assert [f"∂p{a}"] + [cell(x) for x in row] == next(r for r in table if r and r[0] == f"∂p{a}")[:4]


@pytest.mark.build
def test_the_worked_example_tables_hold_the_computed_gradients(book_html):
    steps = bp.backward_steps(*EX, att.visibility(3, 3))
    table = rows(book_html)
    for j, row in enumerate(steps["dv"]):
        assert [f"Key {j}"] + [cell(x) for x in row] in table
    for i, row in enumerate(steps["dq"]):
        assert [f"查询 {i}（位置 {i}）"] + [cell(x) for x in row] in table
    for i, row in enumerate(steps["ds"]):
        assert [f"查询 {i}（位置 {i}）"] + [cell(x) for x in row] in table
    # the first query reads only itself: its dQ is exactly zero, and the page writes it as 0
    assert steps["dq"][0] == [0.0, 0.0]
    assert ["查询 0（位置 0）", "0", "0"] in table


@pytest.mark.build
def test_a_worked_cell_is_written_out_with_its_numbers(book_html):
    steps = bp.backward_steps(*EX, att.visibility(3, 3))
    p, d_out = steps["weights"], bp.EXAMPLE_D_OUT
    text = flat(text_of(book_html))
    expected = " + ".join(
        f"{cell(p[i][0])}×{d_out[i][0]:g}" if d_out[i][0] >= 0 else f"{cell(p[i][0])}×({d_out[i][0]:g})" for i in range(3)
    )
    assert flat(f"{expected} = {cell(steps['dv'][0][0])}") in text


@pytest.mark.build
def test_the_pad_key_row_is_exactly_zero_and_the_sentence_counts_it(book_html):
    steps = bp.backward_steps(*EX, att.visibility(3, 3, key_valid=[True, True, False]))
    assert steps["dk"][2] == [0.0, 0.0] and steps["dv"][2] == [0.0, 0.0]
    assert ["Key 2", "0", "0", "0", "0"] in rows(book_html)
    assert bp.zero_sentence(steps) in text_of(book_html)


@pytest.mark.build
def test_the_policy_table_and_sentence_come_from_the_code(book_html):
    visible = att.visibility(3, 3, key_valid=[False, True, True])
    counted = bp.empty_row_policies(*EX, visible)
    excluded = bp.empty_row_policies(*EX[:3], [[0.0, 0.0]] + bp.EXAMPLE_D_OUT[1:], visible)
    text = text_of(book_html)
    assert bp.policy_sentence(counted, excluded, visible) in text
    assert counted["error"]["raised"] in text
    table = rows(book_html)
    nan_row = next(r for r in table if r and r[0] == "演示：换成 −∞")
    assert nan_row[-2:] == [str(counted["fill=-inf"]["nan"]), str(excluded["fill=-inf"]["nan"])]
    assert nan_row[1] == "(NaN, NaN)"


@pytest.mark.build
def test_the_mutant_table_and_sentence_come_from_the_code(book_html):
    table = rows(book_html)
    verdicts = {r[0]: (r[2], r[4]) for r in table if r and r[0] in ("正确", "丢掉修正项", "忘乘 dO")}
    assert verdicts == {"正确": ("通过", "通过"), "丢掉修正项": ("未通过", "未通过"), "忘乘 dO": ("通过", "未通过")}
    assert "随机 dO 的核对认出了 2 个错误实现（丢掉修正项、忘乘 dO）" in text_of(book_html)
    assert "逐位相同" in text_of(book_html)


@pytest.mark.build
def test_run_output_is_the_real_stdout_of_the_script(book_html):
    section = next(
        s for s in article(book_html).find_all("section")
        if s.find("h2", recursive=False) and heading_text(s.find("h2")) == "运行结果示例"
    )
    shown = section.find("pre").get_text()
    run = subprocess.run([sys.executable, str(ROOT / "code" / "02_backprop.py")], capture_output=True, text=True, check=True)
    assert json.loads(shown) == json.loads(run.stdout)


@pytest.mark.build
def test_the_whole_teaching_code_is_shown(book_html):
    text = text_of(book_html)
    for name in bp.__all__:
        if callable(getattr(bp, name)):
            assert f"def {name}(" in text, name
    assert (ROOT / "code" / "02_backprop.py").read_text(encoding="utf-8").splitlines()[0] in text


@pytest.mark.build
def test_the_download_link_and_the_citations(book_html):
    art = article(book_html)
    assert any(a.get("href", "").endswith("02_backprop.py") for a in art.find_all("a"))
    text = art.get_text(" ")
    assert "Dao" in text and "Vaswani" in text


@pytest.mark.build
def test_the_exercises_show_the_answers_the_code_computes(book_html):
    ex = importlib.import_module("02_exercises_backprop")
    text = text_of(book_html)
    table = rows(book_html)
    jac = ex.jacobian_row()
    for a, row in enumerate(jac["jacobian"]):
        expected = [f"∂p{a}"] + [cell(x) for x in row]
        assert any(r[: len(expected)] == expected for r in table), expected
    for x in jac["ds"]:
        assert cell(x) in text
    hand = ex.hand_steps()["steps"]
    # "=" when the printed numbers give the printed result, "≈" when rounding moved its last digit
    assert re.search(rf"[=≈] {re.escape(cell(hand['dv'][0][0]))}", text)
    for x in hand["ds"][ex.HAND_ROW]:
        assert re.search(rf"[=≈] {re.escape(cell(x))}", text)
    zeros = ex.mask_zeros()
    assert zeros["sentence"] in text
    assert ex.bug_checks()["sentence"] in text
    assert ">>> rowsum_correction(" in text


# -- PDF -------------------------------------------------------------------------------------------------
@pytest.mark.pdf
def test_the_page_is_a_section_of_chapter_2_with_its_sections_in_order(text):
    assert_numbered_sections(text, TITLE)


@pytest.mark.pdf
def test_the_pdf_shows_the_generated_sentences(text):
    steps = bp.backward_steps(*EX, att.visibility(3, 3, key_valid=[True, True, False]))
    assert flat(bp.zero_sentence(steps)) in text


# -- in a browser ------------------------------------------------------------------------------------------
@pytest.mark.browser
def test_no_console_error_and_no_request_leaves_the_book(open_page, book_html):
    page = open_page(PAGE, maths=True)
    assert_offline(page, book_html)
    assert page.errors == []
    # the maths is typeset: MathJax replaced the TeX of the five steps
    assert page.locator("mjx-container").count() > 20


# The page has no figure CSS of its own: the whole page once, in light.
@pytest.mark.browser
def test_no_serious_accessibility_violations(open_page):
    page = open_page(PAGE, maths=True, theme="light")
    page.wait_for_timeout(300)
    assert_axe_clean(page)
