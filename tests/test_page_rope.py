"""The rotary position page (book/ch02/rope.md) in the built HTML and in the PDF: what is its own.

Its numbers are recomputed here from code/02_rope.py and written with chapter.fmt, its two plots are
images in HTML and vector figures (included PDFs) in the PDF edition. What every page must have (its
sections, its place in the table of contents, the run output, the listing, offline, axe) is tested
once for all pages in tests/test_pages.py.
"""

from __future__ import annotations

import importlib
import re

import pytest
from conftest import article_of, flat, section_of, table_rows

from chapter import fmt
from chapter import rope as page

rope = importlib.import_module("02_rope")
att = importlib.import_module("02_attention")

PAGE = "ch02/rope.html"
TITLE = "位置旋转（RoPE）——改变 Q/K 的比较"
FIGURES = ["fig-rope-d2", "fig-rope-long"]


@pytest.fixture(scope="module")
def article(book_html):
    return article_of(book_html, PAGE)


def rows(article) -> list[list[str]]:
    return table_rows(article, cells=("td",))


def section(article, title: str):
    return section_of(article, title)


# -- HTML --------------------------------------------------------------------------------------------
@pytest.mark.build
def test_every_example_states_its_inputs_first(article):
    boxes = [a for a in article.find_all(class_="admonition") if "输入与适用条件" in a.get_text()]
    assert len(boxes) >= 9


@pytest.mark.build
def test_the_d2_scores_come_from_the_code_and_agree(article):
    q = rope.DEMO_Q2
    k = rope.DEMO_K2
    table = rows(article)
    for m, n in [(3, 1), (6, 4)]:
        score = rope.rope_scores([q], [k], [m], [n])[0][0]
        assert any(
            r[:2] == [f"m = {m}，n = {n}", str(m - n)] and r[-1] == fmt.fmt(score) for r in table
        ), (m, n)


@pytest.mark.build
def test_the_layout_sentence_is_the_codes_verdict_on_the_tables_columns(article):
    q = rope.DEMO_Q8
    k = rope.DEMO_K8
    order = rope.layout_permutation(8)
    columns = {"相邻成对": [], "前后两半成对（重排后）": [], "错配": []}
    for m in (3, 7, 12):
        columns["相邻成对"].append(rope.rope_scores([q], [k], [m], [m - 3])[0][0])
        columns["前后两半成对（重排后）"].append(
            rope.rope_scores(
                [rope.permute(q, order)], [rope.permute(k, order)], [m], [m - 3], layout="half"
            )[0][0]
        )
        columns["错配"].append(
            att.scaled_scores([rope.mixed_rotate(q, m)], [rope.mixed_rotate(k, m - 3)])[0][0]
        )
    text = article.get_text()
    # The facts that make the page's fixed sentence true (layouts() checks them on every build).
    assert page.steady(columns["相邻成对"]) and page.steady(columns["前后两半成对（重排后）"])
    assert not page.steady(columns["错配"])
    for name, values in columns.items():
        for x in values:
            assert fmt.fmt(x) in text, name


@pytest.mark.build
def test_the_weights_example_permutes_the_columns_of_x_at_w(article):
    # q = x @ W_q: the input box lists the columns of W_q, and only permuting them keeps the scores.
    text = re.sub(r"\s+", " ", article.get_text(" "))
    columns = "、".join(fmt.vector(c) for c in zip(*rope.W_Q))
    assert f"W_q\\) 的列依次为 {columns}" in text and f"各有 {len(rope.W_Q[0])} 列" in text
    verdicts = {r[0]: r[-1] for r in rows(article) if len(r) == 3 and r[-1] in ("一致", "不一致")}
    assert (
        verdicts
        == {  # two heads: permuting inside each head's block is the only conversion that works
            "相邻成对，原权重（参照）": "一致",
            "前后两半，每个头的块里重排 W_q、W_k 的列": "一致",
            "前后两半，整个宽度一次重排": "不一致",
            "前后两半，权重不重排": "不一致",
        }
    )
    assert "Hugging Face, 2026c" in text  # the conversion script that permutes per head


@pytest.mark.build
def test_the_offset_tables_show_right_and_wrong_side_by_side(article):
    seq = rope.DEMO_SEQ
    v = rope.DEMO_V
    _, full = rope.full_attention(seq, seq, v)
    right = rope.decode(seq, seq, v, [3, 2])
    wrong = rope.row_index_decode(seq, seq, v, [3, 2])
    table = rows(article)
    for i in (3, 4):
        assert [
            f"绝对位置 {i}",
            fmt.fmt(full[i][0]),
            fmt.fmt(right[i][0]),
            fmt.fmt(wrong[i][0]),
        ] in table
    # The mask is the same in both: −∞ in the same cells of the right and the wrong rows.
    right_rows = [r for r in table if r and r[0] == "正确：转 past + i"]
    wrong_rows = [r for r in table if r and r[0] == "写错：转行号 i"]
    assert right_rows and len(right_rows) == len(wrong_rows)
    assert [[c == "−∞" for c in r] for r in right_rows] == [
        [c == "−∞" for c in r] for r in wrong_rows
    ]


@pytest.mark.build
def test_the_invariant_table_catches_the_row_index_offset_only_with_a_cache(article):
    checks = rows(section(article, "如何判断是否做对"))
    verdicts = {(r[0], r[1]): r[3] for r in checks if len(r) == 4 and r[3] in ("通过", "被认出")}
    assert verdicts == {
        ("正确：转 past + i", "1 + 1 + 1 + 1 + 1"): "通过",
        ("正确：转 past + i", "3 + 2"): "通过",
        ("正确：转 past + i", "5"): "通过",
        ("写错：转行号 i", "1 + 1 + 1 + 1 + 1"): "被认出",
        ("写错：转行号 i", "3 + 2"): "被认出",
        ("写错：转行号 i", "5"): "通过",
    }


@pytest.mark.build
def test_left_padding_positions_and_verdicts(article):
    table = rows(article)
    numbers = [str(p) for p in rope.padded_positions([False, False, True, True, True, True])]
    assert ["位置编号（前面真实 token 的个数）"] + numbers in table
    verdicts = [r[-1] for r in table if len(r) == 5 and r[0].startswith("预填")]
    assert verdicts == ["一致", "一致", "不一致", "不一致"]


@pytest.mark.build
def test_the_bases_table_holds_the_codes_wavelengths_and_cites_each_source(article):
    table = rows(article)
    for row in rope.MODEL_BASES:
        found = [r for r in table if r and r[0] == row["model"]]
        assert found, row["model"]
        cells = found[0]
        wave = rope.slowest_wavelength(row["head_dim"], row["base"])
        assert cells[1:4] == [fmt.grouped(row["base"]), str(row["head_dim"]), fmt.multiple(wave)]
        assert "[" in cells[4]  # a citation, linked to the references
    text = article.get_text()
    assert "Meta, 2023" in text and "Meta, 2024" in text and "Qwen Team, 2024" in text


@pytest.mark.build
def test_both_plots_are_images_with_their_chinese_captions(book_html, article):
    for name in FIGURES:
        figure = article.find(id=name)
        assert figure is not None, name
        img = figure.find("img")
        assert img is not None and img["src"].endswith(".svg"), name
        svg = (book_html / "ch02" / img["src"]).resolve()
        assert svg.is_file() and svg.stat().st_size > 1000
        caption = figure.find("figcaption").get_text()
        assert re.search(r"[\u4e00-\u9fff]", caption)
        assert re.search(r"[\u4e00-\u9fff]", img["alt"]) and "/" not in img["alt"], img[
            "alt"
        ]  # not the path


# -- the browser -------------------------------------------------------------------------------------
@pytest.mark.browser
def test_the_page_loads_its_plots_without_console_errors(open_page):
    browser_page = open_page(PAGE)
    widths = browser_page.eval_on_selector_all(
        "article figure img", "imgs => imgs.map(i => i.complete ? i.naturalWidth : 0)"
    )
    assert len(widths) == len(FIGURES) and all(w > 0 for w in widths), widths
    assert browser_page.errors == []


# -- PDF ---------------------------------------------------------------------------------------------
@pytest.mark.pdf
def test_the_plots_are_vector_figures_in_the_pdf_in_order(pdf, text):
    tex = pdf.with_suffix(".tex").read_text(encoding="utf-8")
    # The page is its own \section (the chapter opening links to it by title, so start at the heading)
    # and ends where the next page of the chapter (a \section) or the next chapter begins.
    page = tex[tex.index(r"\section{" + TITLE + "}") + len(r"\section{") :]
    ends = [page.find(mark) for mark in (r"\section{", r"\chapter{") if mark in page]
    page = page[: min(ends)] if ends else page
    included = [
        name.replace("{", "").replace("}", "")
        for name in re.findall(r"\\sphinxincludegraphics(?:\[[^\]]*\])?\{(.+?)\}\s*$", page, re.M)
    ]
    # Both plots are included as PDF files: vector graphics, not a bitmap.
    assert len(included) == len(FIGURES), included
    for name in included:
        assert name.endswith(".pdf"), name
        assert (pdf.parent / name).read_bytes().startswith(b"%PDF")
    # The Chinese captions follow one another in the PDF text, in the page's order.
    captions = ["虚线是转前的", "分数随位置差的变化"]
    where = [text.find(flat(c)) for c in captions]
    assert -1 not in where and where == sorted(where), where


@pytest.mark.pdf
def test_the_wavelengths_and_the_offset_numbers_are_in_the_pdf(text):
    for row in rope.MODEL_BASES:
        assert fmt.multiple(rope.slowest_wavelength(row["head_dim"], row["base"])) in text
    seq = rope.DEMO_SEQ
    v = rope.DEMO_V
    wrong = rope.row_index_decode(seq, seq, v, [3, 2])
    assert fmt.fmt(wrong[3][0]) in text


@pytest.mark.build
def test_rotating_v_makes_the_output_depend_on_the_absolute_position(article):
    verdicts = {r[0]: r[-1] for r in rows(article) if len(r) == 4 and r[-1] in ("不变", "变了")}
    assert verdicts == {"只转 Q、K": "不变", "连 V 也转": "变了"}


# -- 练习 ---------------------------------------------------------------------------------------------
@pytest.mark.build
def test_the_exercises_show_the_computed_answers(article):
    ex = importlib.import_module("02_exercises_rope")
    exercises = section(article, "练习")
    table = rows(exercises)
    text = re.sub(r"\s+", " ", exercises.get_text(" "))
    s = ex.offset_score()
    assert fmt.fmt(s["score"]) in text and fmt.fmt(ex.shift_scores()["plain"]) in text
    assert [r[-1] for r in table if r and r[0].startswith("第 ") and len(r) == 7] == [
        fmt.fmt(t) for t in s["terms"]
    ]
    original = ex.undo_steps()["original"]
    assert {fmt.fmt(original[0]), fmt.fmt(original[1])} <= {
        r[-1].split(" ")[-1] for r in table if r
    }
    scores = [fmt.fmt(g["score"]) for g in ex.shift_scores()["groups"]]
    assert ["分数 q·k/√d"] + scores in table
    assert ">>> rotation_angles(0, 4)" in text


@pytest.mark.build
def test_the_download_of_the_teaching_code_offers_02_attention_beside_it(article):
    run = section(article, "运行命令")
    links = {a.get_text(strip=True): a["href"] for a in run.select("a.download")}
    assert set(links) >= {"02_rope.py", "02_attention.py"}, links
    assert all(href.endswith(name) for name, href in links.items())
    assert "同一个文件夹" in run.get_text()


@pytest.mark.build
def test_one_sign_for_the_position_difference_and_the_page_ends_with_what_to_remember(article):
    text = re.sub(r"\s+", " ", article.get_text(" "))
    assert "n − m" not in text  # Δ = m − n on the whole page (the exercise turns k by −Δ·θ_i)
    assert "词元" not in text  # the glossary's word is token
    last = section(article, "练习").find_all(class_="admonition")[-1]
    assert "要记住" in last.get_text() and "remember" in last["class"]
