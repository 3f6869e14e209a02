"""The costs page (代价与规模) in the built book: its numbers recomputed from code/02_costs.py, the
values of book/chapter/costs.py, the measured timing (its table, slope and figure), the exercises,
and the page in the PDF edition with its plot as a vector figure.

What every page must have (sections in order, table of contents, run output, the listing, offline,
axe) is checked once for all pages in tests/test_pages.py.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from conftest import ROOT, article_of, assert_numbered_sections, flat, section_of, table_rows

from chapter import costs as page
from chapter import fmt

pytestmark = pytest.mark.build

costs = importlib.import_module("02_costs")
PAGE = "ch02/costs.html"
SOURCE = ROOT / "book" / "ch02" / "costs.md"


def article(book_html: Path):
    return article_of(book_html, PAGE)


def prose(book_html: Path) -> str:
    """The page's text without its code listings, whitespace collapsed."""
    node = article_of(book_html, PAGE, own=True)
    for block in node.find_all("div", class_="highlight"):
        block.decompose()
    return re.sub(r"\s+", " ", node.get_text(" "))


def rows(book_html: Path) -> list[list[str]]:
    return table_rows(article(book_html), cells=("td",))


def section(book_html: Path, title: str):
    return section_of(article(book_html), title)


def test_every_example_states_its_inputs_first(book_html):
    boxes = [
        a
        for a in article(book_html).find_all(class_="admonition")
        if "输入与适用条件" in a.get_text()
    ]
    assert len(boxes) >= 5


def test_the_score_table_holds_the_computed_counts(book_html):
    table = rows(book_html)
    for n in costs.SCORE_NS:
        c = costs.score_costs(
            n, costs.SCORE_HEAD_DIM, costs.SCORE_HEADS, costs.SCORE_BYTES, batch=costs.SCORE_BATCH
        )
        row = next(
            r for r in table if r[:3] == [fmt.count(n), f"{c['entries']:,}", fmt.size(c["bytes"])]
        )
        forbidden, share = re.fullmatch(r"([\d,]+)（([\d.]+)%）", row[3]).groups()
        assert forbidden == f"{c['forbidden']:,}"
        exact = 100 * c["forbidden"] / c["entries"]
        assert abs(float(share) - exact) <= 0.5 * 10.0 ** -len(share.split(".")[1])
        assert not float(share).is_integer()  # 49.997% is not 50.00%: (n − 1)/(2n) is never a half
        assert row[4] == f"{c['qk_madds']:,}" == f"{c['mix_madds']:,}"


def test_the_kv_table_holds_the_computed_bytes_of_every_model(book_html):
    kv = next(
        t for t in article(book_html).find_all("table") if "每 token" in t.find("tr").get_text()
    )
    table = {row[0]: row for row in table_rows(kv, cells=("td",)) if row}
    for m in costs.MODELS:
        row = table[m["name"]]
        per_token = costs.kv_bytes_per_token(m["layers"], m["kv_heads"], m["head_dim"], 2)
        assert row[1] == fmt.size(per_token)
        assert row[2] == fmt.size(costs.kv_cache_bytes(m, costs.CONTEXT, costs.BATCH, 2))
        assert row[3] == fmt.size(costs.kv_cache_bytes(m, costs.CONTEXT, costs.BATCH, 1))
        assert row[4] == fmt.size(
            costs.kv_cache_bytes(costs.full_mha(m), costs.CONTEXT, costs.BATCH, 2)
        )
        assert row[6] == fmt.size(costs.kv_cache_bytes(m, m["max_positions"], costs.BATCH, 2))


def test_the_page_shows_the_glued_rankings_and_query_heads(book_html):
    text = prose(book_html)
    values = page.kv_cache().values
    for name in (
        "kv_small",
        "kv_small_size",
        "kv_large",
        "kv_large_size",
        "kv_ratio",
        "kv_max_small",
        "kv_max_ratio",
        "mis_a",
        "mis_b",
        "mis_per_a",
        "mis_per_b",
        "mis_ratio",
    ):
        assert values[name] in text, name
    # The ranking at the maximum lengths names the window that caps a cache (Mistral-7B-v0.1's).
    mistral = costs.MODELS[2]
    assert values["kv_max_small"] == mistral["name"] == page.windows().values["win_on"]
    said = f"时，KV 缓存最小的是 {values['kv_small']}（{values['kv_small_size']}），最大的是 {values['kv_large']}"
    assert said.replace(" ", "") in text.replace(" ", "")


def test_every_configuration_that_writes_a_window_is_named_with_it(book_html):
    text = prose(book_html).replace(" ", "")
    for m in costs.MODELS:
        if m.get("sliding_window"):
            assert (
                f"{m['name']}的配置" in text
                and f"sliding_window={fmt.count(m['sliding_window'])}" in text
            )


def test_the_head_dim_misconception_has_its_number_in_the_core(book_html):
    values = page.head_dim().values
    g = costs.GEMMA_7B
    core = article_of(book_html, PAGE, own=True)
    for block in core.find_all("details"):
        block.decompose()
    text = re.sub(r"\s+", "", core.get_text())
    said = f"{g['hidden']}÷{g['heads']}={values['hd_guess']}"
    assert said in text and values["hd_wrong"].replace(" ", "") in text
    assert values["hd_right"].replace(" ", "") in text and values["hd_short"] in text


def test_the_kv_tables_inputs_are_in_the_core_input_box(book_html):
    box = input_box(book_html, "公开模型")
    assert box.find_parent("details") is None
    rows = {r[0]: r for r in table_rows(box, cells=("td",)) if r}
    for m in costs.MODELS:
        assert [rows[m["name"]][i] for i in (1, 3, 4)] == [
            fmt.count(m[k]) for k in ("layers", "kv_heads", "head_dim")
        ]


def test_the_tiny_configuration_is_counted_both_ways(book_html):
    t = costs.TINY
    formula = (
        costs.kv_bytes_per_token(t["layers"], t["kv_heads"], t["head_dim"], 2)
        * t["context"]
        * t["batch"]
    )
    table = table_rows(
        article(book_html), cells=("td",), sep=" "
    )  # the page's table: glued numbers, typed words
    assert ["公式：每 token 字节 × 上下文 × 批大小", f"{formula:,} 字节"] in table
    assert ["造出全部 K、V 数组，逐个数元素", f"{formula // 2:,} 个元素"] in table
    assert ["元素数 × 每元素字节", f"{formula:,} 字节"] in table and ["两者一致", "是"] in table


def input_box(book_html: Path, words: str):
    return next(
        a
        for a in article(book_html).find_all(class_="admonition")
        if "输入与适用条件" in a.get_text() and words in a.get_text()
    )


def test_the_input_boxes_show_the_constants_the_tables_use(book_html):
    kv = re.sub(r"\s+", "", input_box(book_html, "公开模型").get_text())
    assert f"上下文{costs.CONTEXT}、批大小{costs.BATCH}" in kv
    assert f"{8 * costs.FLOAT16_BYTES}位" in kv and f"每元素{costs.FLOAT16_BYTES}字节" in kv
    assert f"{8 * costs.INT8_BYTES}位{costs.INT8_BYTES}字节" in kv
    assert {m["dtype"] for m in costs.MODELS} <= set(
        re.findall(r"b?float16", kv)
    )  # the published dtypes


def test_the_synthetic_laws_in_the_table_are_the_ones_fitted(book_html):
    table = section(book_html, "如何判断是否做对").find_all("table")[-1]
    shown = [m.get_text() for m in table.find_all(class_="math")]
    assert shown == [f"\\({page.law_formula(law)}\\)" for law in page.SYNTHETIC_LAWS]
    noisy = [law for law in page.SYNTHETIC_LAWS if law["noise"]]
    assert noisy and all(f"{x:g}" in table.get_text() for law in noisy for x in law["noise"])
    ns = costs.TIMING["ns"]
    body = [
        [td.get_text(strip=True) for td in tr.find_all("td")]
        for tr in table.find_all("tr")
        if tr.find("td")
    ]
    slopes = [
        costs.fit_slope(ns, page.synthetic_seconds(ns, law))[0] for law in page.SYNTHETIC_LAWS
    ]
    assert [row[2] for row in body] == [
        fmt.ratio(slope) for slope in slopes
    ]  # slopes are ratios: 2 decimals
    assert [row[1] for row in body] == [f"{law['power']:g}" for law in page.SYNTHETIC_LAWS]


def timing_rows(book_html: Path) -> list[list[str]]:
    body = section(book_html, "怎样观察与验证")
    table = body.find("table")
    return [
        [td.get_text(strip=True) for td in tr.find_all("td")]
        for tr in table.find_all("tr")
        if tr.find("td")
    ]


def test_the_measured_slope_is_fitted_from_the_timing_table(book_html):
    measured = timing_rows(book_html)
    ns = [int(row[0]) for row in measured]
    assert ns == costs.TIMING["ns"]
    assert all(int(row[1]) >= 1 for row in measured)
    seconds = [float(row[2]) / 1000 for row in measured]
    slope, _ = costs.fit_slope(ns, seconds)
    shown = re.search(r"拟合斜率是 (\d+\.\d\d)", prose(book_html))
    assert shown, "no slope sentence"
    # The table rounds each median to a microsecond; the slope from it agrees to the shown digits.
    assert float(shown.group(1)) == pytest.approx(slope, abs=0.02)
    # The verdict is chosen from the unrounded slope: a shown slope on a boundary (2.25 may be 2.2504)
    # allows the verdicts on both sides of it.
    shown = float(shown.group(1))
    verdicts = {
        "near" if abs(s - 2) <= 0.25 else "low" if s < 2 else "high"
        for s in (shown - 0.005, shown + 0.005)
    }
    assert any(page.SAY[verdict] in prose(book_html) for verdict in verdicts)
    assert f"一次构建、{len(ns)}个长度、一台" in prose(book_html).replace(" ", "")
    # The ratios per doubling are read out, not passed over: the range said is the table's last column.
    ratios = [row[3] for row in measured[1:]]
    low = min(ratios, key=float)
    high = max(ratios, key=float)
    assert f"相邻两行之比在 {low} 到 {high} 之间" in prose(book_html)
    # Each ratio is that of the medians the table shows (a reader can divide them and get it).
    medians = [float(row[2]) for row in measured]
    assert ratios == [fmt.ratio(b / a) for a, b in zip(medians, medians[1:])]


def test_the_figure_is_an_image_with_a_chinese_caption_saying_what_it_is_not(book_html):
    figure = article(book_html).find("figure", id="fig-costs-scaling")
    image = figure.find("img")
    assert image["src"].endswith(".svg")
    assert (book_html / "ch02" / image["src"]).resolve().is_file()
    svg = (book_html / "ch02" / image["src"]).resolve().read_text(encoding="utf-8")
    assert "<svg" in svg
    caption = figure.find("figcaption").get_text()
    assert "构建机" in caption and "不是任何产品的性能测试" in caption
    assert image.get("alt") and not image["alt"].endswith(".svg")


def test_the_run_section_offers_the_teaching_file_with_02_attention_beside_it(book_html):
    run = section(book_html, "运行命令")
    links = {a.get_text(strip=True): a["href"] for a in run.find_all("a", class_="download")}
    assert {"02_costs.py", "02_attention.py"} <= set(links)
    assert "同一个文件夹" in run.get_text()
    for name, href in links.items():
        # The file offered is the teaching file itself, byte for byte.
        assert (book_html / "ch02" / href).resolve().read_bytes() == (
            ROOT / "code" / name
        ).read_bytes()


# -- the PDF edition ---------------------------------------------------------------------------------
def title() -> str:
    return re.search(r"^# (.+)$", SOURCE.read_text(encoding="utf-8"), flags=re.M).group(1)


@pytest.mark.pdf
def test_the_page_is_a_section_of_chapter_2_with_its_sections_numbered_in_order(text):
    assert_numbered_sections(text, title())


@pytest.mark.pdf
def test_the_plot_is_a_vector_figure_in_the_pdf(pdf, text):
    # The figure's labels come through as text (a raster image would have none), under its caption.
    tex = next(pdf.parent.glob("*.tex")).read_text(encoding="utf-8")
    graphics = re.findall(r"\\sphinxincludegraphics\S*", tex)
    assert any(g.endswith(".pdf}") for g in graphics), graphics
    assert flat("每次调用耗时的中位数（秒）") in text and flat("参照：斜率 = 2") in text
    assert flat("这不是任何产品的性能测试") in text


# -- in a browser ------------------------------------------------------------------------------------
@pytest.mark.browser
def test_the_page_shows_its_plot_without_console_errors(open_page):
    tab = open_page(PAGE)
    image = tab.locator("#fig-costs-scaling img")
    image.scroll_into_view_if_needed()
    # Wait for the image to finish loading instead of measuring it half-way.
    tab.wait_for_function(
        "() => { const img = document.querySelector('#fig-costs-scaling img');"
        " return img && img.complete; }"
    )
    assert image.evaluate("img => img.naturalWidth > 0")
    assert tab.errors == []


# -- 练习 ---------------------------------------------------------------------------------------------
def test_the_exercises_show_the_computed_answers(book_html):
    ex = importlib.import_module("02_exercises_costs")
    exercises = section(book_html, "练习")
    table = [
        [td.get_text(strip=True) for td in tr.find_all("td")] for tr in exercises.find_all("tr")
    ]
    first = ex.table_beats_cache()["first"]
    assert [r[-1] for r in table if len(r) == 6 and r[0] in {str(first - 1), str(first)}] == [
        "否",
        "是",
    ]
    for plan in ex.kv_plans():
        assert [plan["name"], f"{plan['per_token']:,} 字节", f"{plan['total']:,} 字节"] == next(
            r[:1] + r[2:4] for r in table if r and r[0] == plan["name"]
        )
    windowed = [r for r in table if len(r) == 5 and r[0] in {str(c) for c in ex.WINDOW_CONTEXTS}]
    assert [r[2] for r in windowed] == [fmt.size(r["windowed"]) for r in ex.window_rows()]
    text = re.sub(r"\s+", " ", exercises.get_text(" "))
    assert ">>> generation_cells(4, 3)" in text
    assert "要记住" in text
