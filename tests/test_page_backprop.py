"""The backprop page (book/ch02/backprop.md): its numbers in the built HTML and PDF, its downloads, its maths.

Every number the page shows is glued from code/02_backprop.py through book/chapter/backprop.py;
these tests recompute some of them with the teaching code and look for them in the built page.
What every page must have (sections in order, place in the contents, run output, listing, offline,
axe) is tested once for all pages in tests/test_pages.py.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from conftest import article_of, flat, table_rows

from chapter import backprop as page
from chapter import fmt

bp = importlib.import_module("02_backprop")
att = importlib.import_module("02_attention")

PAGE = "ch02/backprop.html"
EX = page.EXAMPLE
cell = fmt.fmt  # a computed value: four decimals (whole or not), U+2212 for minus, NaN as NaN


def article(book_html: Path):
    return article_of(book_html, PAGE)


def rows(book_html: Path) -> list[list[str]]:
    return table_rows(article(book_html))


def text_of(book_html: Path) -> str:
    return article(book_html).get_text()


# -- HTML ------------------------------------------------------------------------------------------------
@pytest.mark.build
def test_every_example_states_its_inputs_first(book_html):
    boxes = [
        a
        for a in article(book_html).find_all(class_="admonition")
        if "输入与适用条件" in a.get_text()
    ]
    assert len(boxes) >= 7


@pytest.mark.build
def test_the_core_derives_the_steps_and_states_every_examples_inputs(book_html):
    art = article_of(book_html, PAGE, own=True)
    for details in art.find_all("details"):
        details.decompose()  # what a reader sees before opening anything
    core = art.get_text()
    # the matrix formulas follow from scalar partial derivatives, written out in index form
    for line in (r"(P^\top dO)_{jc}", r"(dO\,V^\top)_{ij}", r"(dS\,K)_{ic}", r"(dS^\top Q)_{jc}"):
        assert line in core, line
    boxes = [
        a.get_text() for a in art.find_all(class_="admonition") if "输入与适用条件" in a.get_text()
    ]
    steps = "、".join(fmt.power(10.0**-e) for e in range(1, 10, 2))
    assert any(steps in box for box in boxes)  # the step-size example's inputs
    assert any("past = 1" in box and "True、True、False" in box for box in boxes)  # five conditions


@pytest.mark.build
def test_the_chain_figure_is_an_image_with_alt_text_and_the_jacobian_is_a_pointer(book_html):
    art = article(book_html)
    figure = art.find(id="fig-backprop-chain")
    img = figure.find("img")
    assert img is not None and "dV、dP、D、dS、dQ、dK" in img.get("alt", "")
    assert any(a.get("href", "").startswith("scaling.html") for a in art.find_all("a"))
    body = art.get_text().split("练习 2.6.1")[0]
    assert (
        "∂p0" not in body
    )  # the Jacobian's table is the scaling page's (an exercise still uses it)


@pytest.mark.build
def test_the_masked_gradient_condition_has_its_label_and_the_page_ends_with_what_to_remember(
    book_html,
):
    art = article(book_html)
    assert art.find(id="ch02-backprop-masked-grad") is not None
    remember = art.find_all(class_="remember")
    assert len(remember) == 1 and 3 <= len(remember[0].find_all("li")) <= 5
    later = remember[0].find_all_next(class_=["exercise", "solution", "admonition"])
    assert all(
        el in remember[0].find_all(True) for el in later
    )  # nothing after it but its own items


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
    # the first query reads only itself: its dQ is exactly zero, written as a computed value is
    assert steps["dq"][0] == [0.0, 0.0]
    assert ["查询 0（位置 0）", "0.0000", "0.0000"] in table
    assert not any(
        "-" in c for r in table for c in r if re.fullmatch(r"[-−]?\d+\.\d{4}", c)
    )  # one minus sign


@pytest.mark.build
def test_a_worked_cell_is_written_out_with_its_numbers(book_html):
    steps = bp.backward_steps(*EX, att.visibility(3, 3))
    p = steps["weights"]
    d_out = bp.EXAMPLE_D_OUT

    def factor(x):
        return f"{x:g}" if x >= 0 else f"({x:g})".replace("-", "−")

    expected = " + ".join(f"{cell(p[i][0])}×{factor(d_out[i][0])}" for i in range(3))
    assert flat(f"{expected} = {cell(steps['dv'][0][0])}") in flat(text_of(book_html))


@pytest.mark.build
def test_the_pad_key_row_is_exactly_zero_and_the_sentence_counts_it(book_html):
    steps = bp.backward_steps(*EX, att.visibility(3, 3, key_valid=page.PAD))
    assert steps["dk"][2] == [0.0, 0.0] and steps["dv"][2] == [0.0, 0.0]
    assert ["Key 2"] + ["0.0000"] * 4 in rows(book_html)
    v = page.pad_key().values
    assert flat(f"禁止了{v['pad_forbidden']}个格子，其中权重恰为0的有{v['pad_zero_p']}个") in flat(
        text_of(book_html)
    )


@pytest.mark.build
def test_the_policy_table_and_sentence_come_from_the_code(book_html):
    visible = att.visibility(3, 3, key_valid=page.LEFT)
    counted = page.policies(bp.EXAMPLE_D_OUT, visible)
    excluded = page.policies([[0.0, 0.0]] + bp.EXAMPLE_D_OUT[1:], visible)
    text = text_of(book_html)
    facts = page.empty_row().values
    assert flat(f"禁止的{facts['big_pad_keys']}拿到了不为0的") in flat(text)
    assert flat(f"{facts['nan_inf']}个是NaN") in flat(text)
    # The error policy's message is the mask page's; here the page says which row it names.
    assert counted["error"]["raised"].startswith("第 0 个查询行")
    assert "指出第 0 个查询行没有任何可见的 Key" in text
    for name in ("fill=-inf", "additive"):
        nan_row = next(r for r in rows(book_html) if r and r[0] == page.POLICY_LABELS[name])
        assert nan_row[-2:] == [str(counted[name]["nan"]), str(excluded[name]["nan"])]
        assert nan_row[1] == "(NaN, NaN)"
    assert counted["additive"]["nan"] > counted["fill=-inf"]["nan"]  # S + M also spoils dQ and dK


@pytest.mark.build
def test_the_mutant_table_and_sentence_come_from_the_code(book_html):
    table = rows(book_html)
    verdicts = {r[0]: (r[2], r[4]) for r in table if r and r[0] in page.MUTANTS}
    assert verdicts == {
        "正确": ("通过", "通过"),
        "丢掉修正项": ("未通过", "未通过"),
        "忘乘 dO": ("通过", "未通过"),
        "dV 漏了转置": ("未通过", "未通过"),
    }
    assert "只认出 2 个（丢掉修正项、dV 漏了转置）" in text_of(book_html)
    assert (
        page.gradient_check().values["mutant_gap"] == "0"
    )  # dO all ones: forgetting it changes nothing


@pytest.mark.build
def test_every_glued_text_is_on_the_page(book_html):
    # The page's prose holds the words; the book side's facts (text glued with {glue:text}) are in it.
    sections = [
        page.worked(),
        page.projection(),
        page.forbidden(),
        page.pad_key(),
        page.empty_row(),
        page.gradient_check(),
        page.masks(),
        page.step_sizes(),
        *page.exercises(),
    ]
    glued = {
        name: value for s in sections for name, value in s.values.items() if type(value) is str
    }
    assert len(glued) > 60
    text = flat(text_of(book_html))
    assert [name for name, value in glued.items() if flat(value) not in text] == []
    assert flat(f"所有查询都不许读的Key是{glued['pad_unread']}") in text


@pytest.mark.build
def test_the_downloads_come_with_02_attention_and_the_citations(book_html):
    art = article(book_html)
    links = [a.get("href", "") for a in art.find_all("a")]
    for name in ("02_backprop.py", "02_exercises_backprop.py", "02_attention.py"):
        assert any(href.endswith(name) for href in links), name
    assert "必须与它放在同一目录" in art.get_text()
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
    assert ">>> rowsum_correction(" in text


# -- PDF -------------------------------------------------------------------------------------------------
@pytest.mark.pdf
def test_the_pdf_shows_the_generated_sentences(text):
    v = page.pad_key().values
    assert (
        flat(f"可见性表禁止了{v['pad_forbidden']}个格子，其中权重恰为0的有{v['pad_zero_p']}个")
        in text
    )


# -- in a browser ------------------------------------------------------------------------------------------
@pytest.mark.browser
def test_no_console_error_and_the_maths_is_typeset(open_page):
    browser_page = open_page(PAGE, maths=True)
    assert browser_page.errors == []
    # MathJax replaced the TeX of the five steps
    assert browser_page.locator("mjx-container").count() > 20
