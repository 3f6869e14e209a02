"""The built HTML book: pages, sections, numbers from the run, offline reading and Chinese search."""

from __future__ import annotations

import functools
import importlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import ROOT, article_of, heading_text, section_of, soup_of, table_rows

from chapter import fmt, mask, mask_figure, opening

pytestmark = pytest.mark.build  # every test here reads the session's book build

att = importlib.import_module("02_attention")


@functools.cache
def page(book_html: Path, name: str):
    """A built page parsed once per test process, for the tests that only read it (_prose, which takes
    parts out of a page, parses its own copy)."""
    return soup_of(book_html, name)


def test_chapter_opening_and_landing_page(book_html):
    opening = page(book_html, "ch02/index.html")
    headings = [heading_text(h) for h in opening.find("article").find_all(["h1", "h2", "h3"])]
    assert headings[:2] == ["注意力：对象、状态与步骤", "沿着对象与状态理解本章"]
    for term in ("多头", "位置旋转", "反向传播"):
        assert term in opening.find("article").get_text()
    # X → Q/K/V is introduced here, once, with its figure; the per-head scale is the multi-head page's.
    projections = opening.find(id="ch02-projections")
    assert projections is not None and projections.find("img") is not None
    assert projections.find("img").get("alt", "").startswith("示意图")
    assert opening.find("article").find("a", href="multihead.html") is not None
    landing = page(book_html, "index.html")
    toc = landing.find(class_="toctree-wrapper")
    assert toc.find(class_="caption").get_text(strip=True) == "第 2 章"
    # The chapter's opening and every page of its toctree, in order, as titles only.
    links = [a["href"] for a in toc.find_all("a")]
    assert links == ["ch02/index.html"] + [f"ch02/{name}.html" for name in chapter_pages()]


def chapter_pages() -> list[str]:
    """The pages the chapter's opening lists in its toctree, in order."""
    text = (ROOT / "book" / "ch02" / "index.md").read_text(encoding="utf-8")
    body = re.search(r"```\{toctree\}\n(.*?)```", text, re.S).group(1)
    return [line.strip() for line in body.splitlines() if line.strip() and not line.startswith(":")]


def test_the_chapter_lists_the_mask_page():
    assert chapter_pages()[0] == "mask"


@pytest.mark.parametrize("name", ["index.html", "ch02/index.html", "ch02/mask.html"])
def test_the_sidebar_shows_every_page_once_under_distinct_titles(book_html, name):
    soup = page(book_html, name)
    sidebar = soup.select_one(".bd-sidebar-primary")
    brand = sidebar.select_one(".navbar-brand").get_text(" ", strip=True)
    caption = sidebar.select_one(".caption-text").get_text(strip=True)
    entries = [a.get_text(" ", strip=True) for a in sidebar.select("nav.bd-docs-nav a")]
    titles = [brand, caption] + entries
    assert len(titles) == len(set(titles)), titles
    assert entries[0] == "前言" and "Mask 是可见性表，不是额外语义" in entries
    # The chapter's pages are unfolded under its opening: visible without a click.
    for details in sidebar.select("nav.bd-docs-nav details"):
        assert details.has_attr("open")


def test_every_example_states_its_inputs_first(book_html):
    soup = page(book_html, "ch02/mask.html")
    boxes = [
        a
        for a in soup.find("article").find_all(class_="admonition")
        if "输入与适用条件" in a.get_text()
    ]
    assert len(boxes) >= 11


def test_the_softmax_numbers_come_from_the_run(book_html):
    text = page(book_html, "ch02/mask.html").find("article").get_text()
    p = att.softmax([0, 1, 2])
    assert "softmax([0, 1, 2]) ≈ [" + ", ".join(fmt.fmt(x) for x in p) + "]" in text
    mixed = sum(pj * x for pj, x in zip(p, [10, 20, 30]))
    assert fmt.fmt(mixed) in text


def test_the_weight_table_holds_the_computed_weights(book_html):
    soup = page(book_html, "ch02/mask.html")
    weights, outputs = att.attention(att.DEMO_Q, att.DEMO_K, att.DEMO_V)
    rows = table_rows(soup.find("article"), cells=("td",))
    for i, (row, out) in enumerate(zip(weights, outputs)):
        assert [f"绝对位置 {i}"] + [fmt.fmt(w) for w in row] + [fmt.fmt(out[0])] in rows


def test_the_empty_row_error_is_the_codes_own_message(book_html):
    text = page(book_html, "ch02/mask.html").find("article").get_text()
    with pytest.raises(ValueError) as error:
        att.attention(att.DEMO_Q, att.DEMO_K, att.DEMO_V, key_valid=[False, True, True])
    assert str(error.value) in text


# -- the mask page and the opening read as one book: nothing said twice, no stray space, true claims ----------
CJK = "\u4e00-\u9fff"


def _prose(book_html: Path, name: str) -> list:
    """The page's paragraphs and list items that hold no paragraph (tables, code, scripts and math left out)."""
    article = article_of(book_html, name, own=True)
    for tag in article.find_all(["pre", "script", "style", "mjx-container"]):
        tag.decompose()
    return [
        t
        for t in article.find_all(["p", "li"])
        if (t.name == "p" or not t.find("p")) and not t.find_parent(["table", "pre"])
    ]


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[。！？])", text) if s.strip()]


def test_no_long_sentence_of_the_mask_page_is_said_twice(book_html):
    # F12's frames are paragraphs of the page's markup too: a frame sentence and a text sentence count alike.
    seen: dict[str, int] = {}
    for node in _prose(book_html, "ch02/mask.html"):
        for sentence in _sentences(node.get_text()):
            if len(sentence) >= 25:
                seen[sentence] = seen.get(sentence, 0) + 1
    twice = {s: n for s, n in seen.items() if n > 1}
    assert not twice, twice


def test_the_wrong_offset_is_summed_up_once(book_html):
    text = page(book_html, "ch02/mask.html").find("article").get_text()
    assert text.count("不会泄漏未来，却悄悄丢掉了缓存里的部分历史，连自己的位置也读不到") == 1
    # and the temperature table is the scaling page's: no table on the mask page has a temperature row
    rows = table_rows(page(book_html, "ch02/mask.html").find("article"))
    assert not any(cell.startswith("基准 [") for row in rows for cell in row)


@pytest.mark.parametrize("name", ["ch02/index.html", "ch02/mask.html"])
def test_glued_text_meets_the_prose_without_a_stray_space(book_html, name):
    """Where a glued value meets the text or another value: no space between Chinese characters or after
    Chinese punctuation (「第 4 步 只取」「。 真实查询」「。 所以 KV 缓存」 were such spaces)."""
    left = f"[{CJK}。，；：！？）”]"
    right = f"[{CJK}“（]"
    stray = re.compile(f"{left}\x02\\s+\x01?{right}|{left}\x02?\\s+\x01{right}")
    bad = []
    for node in _prose(book_html, name):
        for span in node.select(".pasted-text"):  # mark where each glued value starts and ends
            span.insert_before("\x01")
            span.insert_after("\x02")
        text = node.get_text()
        bad += [
            text[max(m.start() - 8, 0) : m.end() + 8].replace("\x01", "").replace("\x02", "")
            for m in stray.finditer(text)
        ]
    assert not bad, bad


@pytest.mark.parametrize("name", ["ch02/index.html", "ch02/mask.html"])
def test_no_emphasis_is_left_as_asterisks(book_html, name):
    # CommonMark closes ** after 。 only before a space or punctuation: 「**…。**上表」 prints its asterisks.
    assert not [n.get_text()[:40] for n in _prose(book_html, name) if "**" in n.get_text()]


def test_the_dtype_paragraph_shows_float16(book_html):
    import numpy as np

    text = page(book_html, "ch02/mask.html").find("article").get_text()
    with np.errstate(over="ignore"):
        assert np.isinf(np.float16(-1e9)) and np.isinf(
            np.finfo(np.float16).min + np.finfo(np.float16).min
        )
    values = mask.empty_rows_section().values  # its facts hold, or the build would have stopped
    big = values["policy_big"]
    assert f"numpy.float16({big}) 就是 −∞" in text and "位置 0 的权重全是 NaN" in text
    assert f"被两条规则同时挡住的 {values['dtype_doubled_keys']} 又成了 −∞" in text
    assert fmt.short(float(np.finfo(np.float16).min)) in text


def test_the_opening_says_which_teaching_file_uses_numpy(book_html):
    text = page(book_html, "ch02/index.html").find("article").get_text()
    assert "没有用到任何矩阵库" not in text
    values = opening.opening().values
    assert f"要 numpy 才能运行的是 {values['numpy_files']}：" in text
    assert f"用到 transformers 的 {values['transformers_files']} 也要 numpy" in text
    assert f"{values['torch_files']} 要 PyTorch：" in text
    # Only numpy is blocked in the numpy run: PyTorch is simply not installed (review r-mask 8).
    assert "一次让 numpy 导入不了，一次让 PyTorch 导入不了" in text


def _html_files(book_html: Path):
    return sorted(p for p in book_html.rglob("*.html") if "_static" not in p.parts)


class Loads(HTMLParser):
    """What a page loads: each script, stylesheet or preload link, image and frame, as (tag, url).

    Only the tags are read, with the parser BeautifulSoup itself uses, not a whole tree per page.

    >>> page = Loads()
    >>> page.feed('<link rel="stylesheet" href="a.css"><link rel="prev" href="b.html"><img src="c.png">')
    >>> page.loads
    [('link', 'a.css'), ('img', 'c.png')]
    """

    WHERE = {"script": "src", "link": "href", "img": "src", "iframe": "src"}

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attributes = dict(attrs)
        url = attributes.get(self.WHERE.get(tag, ""))
        rel = (attributes.get("rel") or "").split()
        if url and (tag != "link" or "stylesheet" in rel or "preload" in rel):
            self.loads.append((tag, url))


def test_no_page_loads_anything_from_the_network(book_html):
    for html in _html_files(book_html):
        page = Loads()
        page.feed(html.read_text(encoding="utf-8"))
        for tag, url in page.loads:
            assert not re.match(r"^(https?:)?//", url), f"{html.name}: {tag} {url}"
            assert (html.parent / url.split("?")[0]).resolve().is_file(), (
                f"{html.name}: {url} missing"
            )


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
        docs = [
            index[kind].get(term) for kind in ("terms", "titleterms")
        ]  # a word is in one of them
        found = {
            d for hit in docs if hit is not None for d in (hit if isinstance(hit, list) else [hit])
        }
        assert mask in found, term


def test_the_search_script_names_a_stemmer_that_exists(book_html):
    js = (book_html / "_static" / "language_data.js").read_text(encoding="utf-8")
    assigned = re.search(r"window\.Stemmer = (\w+);", js).group(1)
    assert re.search(
        rf"\b{assigned}\b\s*=|class {assigned}|function {assigned}\b|var {assigned}\b",
        js.replace(f"window.Stemmer = {assigned};", ""),
    )


def tables(soup: BeautifulSoup) -> list[list[list[str]]]:
    """Every table of the article as rows of cell texts (header row first)."""
    return [
        [
            [c.get_text(" ", strip=True) for c in tr.find_all(["th", "td"])]
            for tr in table.find_all("tr")
        ]
        for table in soup.find("article").find_all("table")
    ]


def test_the_fully_masked_row_policies_are_computed_side_by_side(book_html):
    soup = page(book_html, "ch02/mask.html")
    (policies,) = [t for t in tables(soup) if t[0][0] == "策略"]
    rows = {row[0]: row[1:] for row in policies[1:]}
    assert len(rows) == 4
    (minus_inf,) = [r for name, r in rows.items() if "−∞" in name]
    (big,) = [r for name, r in rows.items() if "−1e9" in name]
    (zero,) = [r for name, r in rows.items() if '"zero"' in name]
    (error,) = [r for name, r in rows.items() if '"error"' in name]

    def weights(cell):
        return cell.split(" / ")

    assert set(weights(minus_inf[0])) == {"NaN"} and minus_inf[1] == "NaN"
    assert set(weights(minus_inf[3])) == {"NaN"}  # one more product spreads it to every real query
    n = len(weights(big[0]))
    assert set(weights(big[0])) == {fmt.fmt(1 / n)}  # uniform over the forbidden keys
    assert set(weights(zero[0])) == {"0.0000"} and zero[1] == "0.0000"
    assert zero[2] == big[2] == minus_inf[2]  # the real queries of this layer agree
    assert zero[3] == big[3] and "NaN" not in zero[3]
    assert error[0] == "报错"
    text = soup.find("article").get_text()
    assert "计算损失时必须排除" in text and 'empty_row="zero"' in text


def test_the_cache_section_names_the_fix_and_shows_new_1(book_html):
    text = page(book_html, "ch02/mask.html").find("article").get_text()
    assert "causal_lower_right（torch.nn.attention.bias）" in text
    cache = mask.cache_section().values
    assert (
        f"正确的表许这个新查询读 {cache['worst_right']}，写错的表只许读 {cache['worst_wrong']}"
        in text
    )
    worst = mask.visibility_facts(1, past=mask.PAST)
    assert (
        f"把行号当位置时，{mask.lost_sentence(worst['rows'][0])}。" not in text
    )  # F12 says it for new = 2
    # new = 2 is F12's last step; the text names it and does not draw its two tables again
    label = f"行 1（绝对位置 {mask.PAST + 1}）"  # the second new query of F12's last step
    shown = [
        t for t in tables(page(book_html, "ch02/mask.html")) if any(row[0] == label for row in t)
    ]
    assert len(shown) == 1  # F12's own table, not a second copy in the text
    assert f"past = {mask.PAST}、new = {mask.NEW} 的下表" in text
    # the library flag is defined where the core first uses it: a link to the glossary
    section = page(book_html, "ch02/mask.html").find(id="ch02-mask-cache")
    links = section.find_all("a", href=True)
    assert any(a.get_text() == "因果标志" and "glossary.html" in a["href"] for a in links)


def test_the_figure_explanations_are_the_generated_ones(book_html):
    soup = page(book_html, "ch02/mask.html")
    shown = [
        e.get_text(strip=True)
        for e in soup.select("[data-step-figure='F12'] .step-figure-explanation")
    ]
    assert shown == [f["explanation"] for f in mask_figure.f12_frames()]
    assert "Key 3 是本批新来的" in shown[-1]  # not 「早已在缓存里」, as F12 once said


def test_f12_shows_the_teaching_codes_frames_and_explore_states(book_html):
    figure = page(book_html, "ch02/mask.html").select_one("[data-step-figure='F12']")
    data = json.loads(figure.select_one(".step-figure-explore script").string)
    assert data == mask_figure.f12_explore_states()
    frames = figure.select(".step-figure-frame")
    assert [f.select_one(".step-figure-caption").get_text() for f in frames[:3]] == [
        f"{k + 1} / 5 · 处理绝对位置 {k}" for k in range(3)
    ]
    assert [f.select_one(".step-figure-rule").get_text() for f in frames[:3]] == [
        f"当前行规则：允许 Key 位置 ≤ {k}" for k in range(3)
    ]
    # Frame 4: the weights are the teaching code's softmax, with and without the mask.
    weights = {
        tr.th.get_text(strip=True): [td.get_text(strip=True) for td in tr.select("td")]
        for tr in frames[3].select("tbody tr")
    }
    assert weights["不加 mask 的权重"] == [f"{p:.4f}" for p in att.softmax([0, 1, 2])]
    assert weights["加 mask 的权重"] == [f"{p:.4f}" for p in att.softmax([0, 1, float("-inf")])]
    # Frame 5: the right table is visibility(2, 5, past=3), the contrast is the row-index mistake.
    right, wrong = frames[4].select("table")

    def allowed(table):
        return [
            ["允许" in td.get_text() for td in tr.select("td")] for tr in table.select("tbody tr")
        ]

    assert allowed(right) == att.visibility(2, 5, past=3)
    assert allowed(wrong) == att.row_index_visibility(2, 5)


def test_one_row_is_computed_through_every_step_by_row_steps(book_html):
    soup = page(book_html, "ch02/mask.html")
    (hand,) = [{row[0]: row[1:] for row in t[1:]} for t in tables(soup) if t[0][0] == "步骤 ＼ Key"]
    q = att.DEMO_Q
    k = att.DEMO_K
    v = att.DEMO_V
    row = int(mask.demo_section().values["hand_row"])
    visible = att.visibility(len(q), len(k))[row]
    assert 2 <= sum(visible) < len(k)  # a row with a forbidden key: the mask page's row
    # Every step is the teaching function's (row_steps): the maximum is subtracted before exp.
    steps = att.row_steps(q[row], k, v, visible)
    assert hand["加 mask"] == [fmt.fmt(x) for x in steps["masked"]] and "−∞" in hand["加 mask"]
    assert hand["减去最大值"] == [fmt.fmt(x) for x in steps["shifted"]]
    assert hand["exp"] == [fmt.fmt(x) for x in steps["exps"]]
    assert hand["权重 = exp ÷ 总和"] == [fmt.fmt(w) for w in steps["weights"]]
    assert hand["权重 × V"] == [fmt.fmt(x[0]) for x in steps["weighted"]]
    text = soup.find("article").get_text()
    assert f"指数之和是 {fmt.fmt(steps['total'])}" in text
    assert f"最大值 {fmt.fmt(steps['max'])}" in text
    # Recomputed from the weights as printed: the output they give, and how far it is from the exact one.
    approx = sum(fmt.printed(fmt.fmt(w)) * x[0] for w, x in zip(steps["weights"], v))
    assert fmt.fmt(approx) != fmt.fmt(steps["output"][0])
    gap = fmt.difference(abs(approx - steps["output"][0]))
    assert f"得到 {fmt.fmt(approx)}，比精确的输出 {fmt.fmt(steps['output'][0])} 差 {gap}" in text


def test_the_pad_examples_say_which_real_queries_changed(book_html):
    text = page(book_html, "ch02/mask.html").find("article").get_text()
    assert text.count("因 PAD 规则不再读") >= 2
    assert "整行被屏蔽" in text


def test_the_run_commands_say_how_to_get_the_test_tools(book_html):
    soup = page(book_html, "ch02/mask.html")
    section = section_of(soup.find("article"), "运行命令")
    code = section.get_text()
    assert "make venv" in code and ".venv/bin/pytest code/" in code
    # The page's two files, with the note that the exercises need 02_attention.py beside them.
    downloads = {a.get_text(strip=True) for a in section.select("a.download")}
    assert {"02_attention.py", "02_exercises_mask.py"} <= downloads, downloads
    assert "同一个文件夹" in code
