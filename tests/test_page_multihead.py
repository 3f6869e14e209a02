"""The multi-head page (book/ch02/multihead.md) in the built HTML, in the PDF and in a browser.

Only what is this page's own: its numbers, its sentences, figure F14. What every page must have
(sections in order, its place in the contents, the run output, the whole listing, offline, axe on the
whole page) is tests/test_pages.py's. HTML checks use the session build (``book_html``); the PDF checks
share the session's PDF (``text``); F14 is driven in Debian's chromium with reduced motion, so that
nothing is measured while a transition runs.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from conftest import (
    article_of,
    assert_axe_clean,
    assert_frames_shown,
    flat,
    set_theme,
    table_rows,
    use_the_figure,
)

from chapter import fmt
from chapter import multihead as page_side

costs = importlib.import_module("02_costs")
mh = importlib.import_module("02_multihead")
PAGE = "ch02/multihead.html"


def article(book_html: Path):
    return article_of(book_html, PAGE)


def demo_steps() -> dict:
    return mh.multihead_steps(
        mh.DEMO_X, mh.DEMO_WQ, mh.DEMO_WK, mh.DEMO_WV, mh.DEMO_WO, mh.DEMO_HEADS
    )


# -- HTML ----------------------------------------------------------------------------------------------
@pytest.mark.build
def test_every_example_states_its_inputs_first(book_html):
    boxes = [
        b
        for b in article(book_html).find_all(class_="admonition")
        if "输入与适用条件" in b.get_text()
    ]
    assert len(boxes) >= 8


@pytest.mark.build
def test_the_worked_example_states_x_and_the_four_matrices_in_the_core(book_html):
    # A reader who opens nothing can recompute every weight of the example: its inputs are in the core.
    box = next(
        b
        for b in article(book_html).find_all(class_="admonition")
        if "输入与适用条件" in b.get_text()
    )
    assert box.find_parent("details") is None
    text = box.get_text()
    for m in mh.DEMO:
        assert fmt.vectors(m) in text


@pytest.mark.build
def test_the_split_figure_is_in_the_core_with_its_alt_text(book_html):
    # The column split is a picture computed at build time (its numbers: tests/test_chapter_multihead.py).
    a = article(book_html)
    figure = a.find(id="fig-multihead-split")
    assert figure is not None and figure.find_parent("details") is None
    image = figure.find("img")
    assert image is not None and "权重表" in image["alt"] and "拼接" in image["alt"]
    assert (book_html / "ch02" / image["src"]).resolve().is_file()


@pytest.mark.build
def test_each_weight_table_is_shown_once_in_f14_and_not_again_in_the_text(book_html):
    a = article(book_html)
    rows = table_rows(a)
    s = demo_steps()
    for weights in s["weights"]:
        for i, row in enumerate(weights):
            assert [f"位置 {i}"] + [fmt.fmt(w) for w in row] not in rows  # the figure holds them
    cells = [c.get_text(strip=True) for c in a.select("[data-step-figure='F14'] td")]
    for h, weights in enumerate(s["weights"]):
        last = [f"✓ {fmt.fmt(w)}" for w in weights[-1]]
        assert sum(cells[k : k + len(last)] == last for k in range(len(cells))) == 1, h


@pytest.mark.build
def test_the_output_table_holds_the_computed_output(book_html):
    rows = table_rows(article(book_html))
    for i, row in enumerate(demo_steps()["output"]):
        assert [f"位置 {i}"] + [fmt.fmt(x) for x in row] in rows


@pytest.mark.build
def test_gemma_numbers_and_the_error_come_from_the_code(book_html):
    text = article(book_html).get_text()
    g = costs.GEMMA_7B
    entries = {
        "hidden_size": "hidden",
        "num_attention_heads": "heads",
        "num_key_value_heads": "kv_heads",
        "head_dim": "head_dim",
    }
    for name, key in entries.items():
        assert f"{name} = {g[key]}" in text
    for value in (
        g["hidden"] // g["heads"],
        g["heads"] * g["head_dim"],
        mh.projection_params(g["hidden"], g["heads"], g["head_dim"], g["kv_heads"])["total"],
        mh.projection_params(g["hidden"], g["heads"], None, g["kv_heads"])["total"],
    ):
        assert fmt.count(value) in text
    with pytest.raises(ValueError) as error:
        mh.multihead_attention(mh.DEMO_X, mh.DEMO_WQ, mh.DEMO_WK, mh.DEMO_WV, mh.DEMO_WO, 3)
    assert str(error.value) in text


SECTIONS = (
    "steps",
    "two_ways",
    "gqa",
    "misreadings",
    "checks",
    "cost_tables",
)


@pytest.mark.build
def test_every_glued_text_is_on_the_page(book_html):
    # The page's prose holds the words; the book side's facts (text glued with {glue:text}) are in it.
    text = flat(article(book_html).get_text())
    sections = [getattr(page_side, f)() for f in SECTIONS] + page_side.exercises()
    glued = {k: v for s in sections for k, v in s.values.items() if type(v) is str}
    assert len(glued) > 60
    assert [k for k, v in glued.items() if flat(v) not in text] == []
    cost = page_side.cost_tables().values
    assert (
        flat(
            f"参数个数都是{cost['cost_split_params_0']}，"
            f"乘加次数都是{cost['cost_split_multiply_adds_0']}"
        )
        in text
    )
    assert flat(f"{page_side.checks().values['checks_n']}项检查通过了") in text


@pytest.mark.build
def test_d_head_is_taught_here_under_its_label(book_html):
    # This page owns 「除以 √d_head，不是 √d_model」 and Gemma's head_dim: other pages link to the label.
    art = article(book_html)
    heading = art.find(id="ch02-multihead-dhead")
    assert heading is not None and art.find(id="ch02-multihead-head-dim") is not None
    v = page_side.misreadings().values
    text = art.get_text()
    assert v["right_row"] in text and v["wrong_row"] in text and v["right_row"] != v["wrong_row"]


@pytest.mark.build
def test_what_w_o_mixes_is_said_from_w_o(book_html):
    text = article(book_html).get_text()
    assert page_side.steps().values["mix_cols"] in text
    assert "每一列都用到拼接结果的全部列" not in text  # the old claim, false for this W_o


@pytest.mark.build
def test_grouped_kv_is_compared_with_repeated_kv_and_the_cache_bytes_are_the_costs_page(book_html):
    a = article(book_html)
    rows = table_rows(a)
    for name in ("GQA", "MQA"):
        row = next(r for r in rows if r and r[0] == name and r[2].startswith("("))
        assert row[3] == "0"  # the largest difference from repeated K/V
    assert "costs.html" in " ".join(link["href"] for link in a.find_all("a", href=True))


@pytest.mark.build
def test_figure_f14_has_its_frames_in_order(book_html):
    figure = article(book_html).select_one("[data-step-figure='F14']")
    assert figure is not None
    assert_frames_shown(figure, page_side.f14_frames())


@pytest.mark.build
def test_the_downloads_say_what_must_sit_beside_them(book_html):
    # 02_multihead.py imports 02_attention.py; the exercises import both: the page says so and offers all three.
    a = article(book_html)
    links = {link.get_text(strip=True): link for link in a.find_all("a", class_="download")}
    for name in ("02_multihead.py", "02_attention.py", "02_exercises_multihead.py"):
        assert name in links, name
        assert (book_html / "ch02" / links[name]["href"]).resolve().is_file()
    paragraph = links["02_attention.py"].find_parent("p").get_text()
    assert "同一个文件夹" in paragraph and "02_multihead.py" in paragraph


@pytest.mark.build
def test_the_page_cites_its_sources(book_html):
    # The citations link to the bibliography, and the page's own reference list names each source.
    a = article(book_html)
    assert len(a.select("a[href*='references.html#']")) >= 4
    listed = a.get_text().lower()
    for title in (
        "attention is all you need",
        "gqa",
        "one write-head is all you need",
        "gemma-7b: config.json",
    ):
        assert title in listed, title


# -- PDF -----------------------------------------------------------------------------------------------
@pytest.mark.pdf
def test_pdf_has_the_f14_frames_in_order(text):
    frames = page_side.f14_frames()
    where = [
        text.find(flat(f"{k} / {len(frames)} · {f['condition']}")) for k, f in enumerate(frames, 1)
    ]
    assert -1 not in where, where
    assert where == sorted(where)


@pytest.mark.pdf
def test_pdf_weights_come_from_the_code(text):
    for row in demo_steps()["weights"][1]:
        for w in row:
            assert fmt.fmt(w) in text


@pytest.mark.build
def test_the_exercises_show_the_answers_the_code_computes(book_html):
    ex = importlib.import_module("02_exercises_multihead")
    text = article(book_html).get_text()
    a = ex.split_and_row()
    for w in a["weights"] + a["other_weights"]:
        assert fmt.fmt(w) in text
    assert ">>> attention_params(8, 4, 1, 2)" in text


# -- browser: F14 ----------------------------------------------------------------------------------------
FIGURE = "[data-step-figure='F14']"
STATUS = f"{FIGURE} [role=status]"
READY = f"{FIGURE}.is-ready"


def open_f14(open_page, **options):
    """The page with F14's 深入 block opened, as a reader opens it, and the player ready."""
    page = open_page(PAGE, **options)
    page.locator(FIGURE).evaluate("f => { f.closest('details').open = true; }")
    page.wait_for_selector(READY)
    return page


@pytest.mark.browser
def test_f14_keys_step_and_the_status_announces_it(open_page):
    page = open_f14(open_page)
    total = len(page_side.f14_frames())
    status = page.locator(STATUS)
    assert status.inner_text() == f"第1步，共{total}步"
    assert status.get_attribute("aria-live") == "polite"
    page.locator(f"{FIGURE} .step-figure-stage").focus()
    for k in range(2, total + 1):
        page.keyboard.press("ArrowRight")
        assert status.inner_text() == f"第{k}步，共{total}步"
        current = page.locator(
            f"{FIGURE} .step-figure-frame.is-current .step-figure-caption"
        ).inner_text()
        assert current.startswith(f"{k} / {total} · ")
    page.keyboard.press("Home")
    assert status.inner_text() == f"第1步，共{total}步"


@pytest.mark.browser
def test_f14_used_to_its_end_logs_no_console_error(open_page):
    page = open_f14(open_page)
    use_the_figure(page, FIGURE)
    assert page.errors == []


# F14 has its own figure CSS: checked in both themes, on its first and last step. Reduced motion: the
# figure's CSS has no transition then, so axe measures the colours the reader ends up seeing.
@pytest.mark.browser
def test_f14_has_no_serious_accessibility_violations(open_page):
    page = open_f14(open_page, theme="light", reduced_motion="reduce")
    status = page.locator(STATUS)
    total = len(page_side.f14_frames())
    for scheme in ("light", "dark"):  # the theme follows the reader's setting as it changes
        set_theme(page, scheme)
        for key, step in (("Home", 1), ("End", total)):
            page.locator(f"{FIGURE} .step-figure-stage").focus()
            page.keyboard.press(key)
            assert status.inner_text() == f"第{step}步，共{total}步"
            assert_axe_clean(page, FIGURE, note=(scheme, key))
