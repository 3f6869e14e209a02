"""The multi-head page's book side (book/chapter/multihead.py): its sentences follow their tables.

Fast unit tests, no build: every sentence is tested on inputs other than the page's, against the
rows it is written from; figure F14's sentences against the numbers in its own tables.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chapter import fmt
from chapter import multihead as page

att = importlib.import_module("02_attention")
mh = importlib.import_module("02_multihead")
ex = importlib.import_module("02_exercises_multihead")

finite = st.floats(min_value=-3, max_value=3, allow_nan=False, allow_infinity=False)
QUICK = settings(max_examples=15, deadline=None)


def matrix(rows: int, cols: int):
    return st.lists(st.lists(finite, min_size=cols, max_size=cols), min_size=rows, max_size=rows)


@st.composite
def layers(draw):
    """Random x and four projections, heads · head_dim = d_model."""
    heads, head_dim, n = draw(st.integers(1, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 4))
    d_model = heads * head_dim
    x = draw(matrix(n, d_model))
    w_q, w_k, w_v = (draw(matrix(d_model, d_model)) for _ in range(3))
    return x, w_q, w_k, w_v, draw(matrix(d_model, d_model)), heads, head_dim


# -- figure F14 ------------------------------------------------------------------------------------------
@settings(max_examples=10, deadline=None)
@given(layers())
def test_f14_sentences_follow_the_frame_tables(p):
    x, w_q, w_k, w_v, w_o, heads, head_dim = p
    if heads < 2:
        return
    frames = page.f14_frames(x, w_q, w_k, w_v, w_o, heads)
    weights, _ = mh.multihead_attention(x, w_q, w_k, w_v, w_o, heads)
    for h, frame in ((0, frames[1]), (1, frames[2])):
        last = [c["text"] for c in frame["tables"][2]["rows"][-1][1:]]
        numbers = [fmt.printed(t.split()[1]) if t.startswith("✓") else None for t in last]
        assert " / ".join(t.split()[1] for t in last if t.startswith("✓")) in frame["explanation"]
        assert f"每个点积只有 {head_dim} 项（头维度为 {head_dim}），分数除以 √{head_dim}。" in frame["explanation"]
        assert f"最看重 Key {page.favourite(weights[h][-1])}" in frame["explanation"]
        assert max(v for v in numbers if v is not None) == round(max(weights[h][-1]), 4)
    assert f"每个头都拿到全部 {len(x)} 个位置" in frames[0]["explanation"]
    same = "同一个" if page.favourite(weights[0][-1]) == page.favourite(weights[1][-1]) else "不同的"
    assert f"两个头最看重的是{same} Key" in frames[2]["explanation"]


def test_f14_forbidden_cells_say_so_in_words_and_a_minus_is_a_minus():
    frames = page.f14_frames()
    for frame in frames[1:3]:
        for table in frame["tables"][2:]:
            for row in table["rows"]:
                for cell in row[1:]:
                    assert (cell["state"] == "forbidden") == cell["text"].startswith("✗ 禁止")
    cells = [c["text"] for f in frames for t in f["tables"] for r in t["rows"] for c in r]
    assert "−1.0000" in cells and not any(c.startswith("-") for c in cells)


def test_f14_needs_two_heads():
    with pytest.raises(ValueError, match="heads 至少为 2"):
        page.f14_frames(heads=1, w_q=mh.DEMO_WQ)


# -- tables and sentences --------------------------------------------------------------------------------
@QUICK
@given(st.lists(st.booleans(), min_size=1, max_size=6))
def test_check_sentence_counts_what_the_table_shows(flags):
    rows = [{"check": f"检查{i}", "holds": f, "detail": 0.0} for i, f in enumerate(flags)]
    sentence = page.check_sentence(rows)
    assert sentence.startswith(f"{len(rows)} 项检查")
    failed = [r["check"] for r in rows if not r["holds"]]
    if failed:
        assert f"{len(rows) - len(failed)} 项通过" in sentence and "、".join(failed) in sentence
    else:
        assert "全部通过" in sentence
    assert [r[2] for r in page.checks_table(rows)[1]] == ["是" if f else "否" for f in flags]


@QUICK
@given(st.integers(1, 32), st.sampled_from([[1, 2, 4], [2, 4, 8], [1, 8]]), st.integers(1, 8), st.booleans())
def test_cost_sentence_follows_its_table(n, heads_list, head_dim, fixed):
    d_model = max(heads_list) * head_dim
    rows = page.cost_rows(n, d_model, heads_list, head_dim if fixed else None)
    sentence = page.cost_sentence(rows)
    table = page.cost_table(rows)[1]
    for column, (key, name) in ((2, ("params", "参数个数")), (3, ("multiply_adds", "乘加次数")), (4, ("score_cells", "分数表格子数"))):
        values = [r[column] for r in table]
        assert values == [fmt.count(r[key]) for r in rows]
        expected = f"{name}都是 {values[0]}" if len(set(values)) == 1 else f"{name}从 {values[0]} 变到 {values[-1]}"
        assert expected in sentence


@settings(max_examples=15, deadline=None)
@given(layers(), st.data())
def test_head_view_sentence_follows_its_rows(p, data):
    x, w_q, w_k, w_v, w_o, heads, head_dim = p
    steps = mh.multihead_steps(x, w_q, w_k, w_v, w_o, heads)
    i = data.draw(st.integers(0, len(x) - 1))
    rows = page.head_view_rows(steps, i)
    assert [r["keys"] for r in rows] == [list(range(i + 1))] * heads  # causal: the same keys for every head
    assert [r["favourite"] for r in rows] == [int(np.argmax(steps["weights"][h][i])) for h in range(heads)]
    said = page.head_view_sentence(rows)
    assert said.startswith(f"{heads} 个头") and "完全相同" in said and "互不重叠" in said
    assert all(f"头 {h} 最看重 Key {r['favourite']}" in said for h, r in enumerate(rows))
    other = page.head_view_sentence([dict(rows[0], keys=[0]), dict(rows[0], keys=[0, 1])])
    assert "并不相同" in other and "有重叠" in other


@QUICK
@given(st.integers(2, 4), st.integers(1, 3), st.integers(1, 5), st.data())
def test_output_heads_and_its_sentences_follow_w_o(heads, head_dim, out_cols, data):
    # A sparse W_o (whole numbers, many zeros), as a hand-made one is.
    cells = st.sampled_from([0.0, 0.0, 0.0, 1.0, -2.0])
    w_o = data.draw(st.lists(st.lists(cells, min_size=out_cols, max_size=out_cols),
                             min_size=heads * head_dim, max_size=heads * head_dim))  # fmt: skip
    used = page.output_heads(w_o, heads)
    w = np.array(w_o)
    expected = [[h for h in range(heads) if np.any(w[h * head_dim:(h + 1) * head_dim, j] != 0)] for j in range(out_cols)]
    assert used == expected
    sentence = page.mixing_sentence(used, heads)
    mixed = [j for j, u in enumerate(used) if len(u) >= 2]
    if len(mixed) == len(used):
        assert sentence.startswith("输出的每一列都同时取了")
    elif not mixed:
        assert sentence.startswith("输出没有一列同时取两个头的列")
    else:
        assert sentence.startswith("输出的" + "、".join(f"列 {j}" for j in mixed) + " 同时取了")
    for j, u in enumerate(used):
        if len(u) == 1 and len(mixed) < len(used):
            assert f"列 {j} 只取头 {u[0]}" in sentence
        if not u:
            assert f"列 {j} 全是 0" in sentence


@pytest.mark.parametrize("diff, words", [(0.0, "逐元素完全相同（最大差为 0）"), (3.3e-16, "最大差为 3.3 × 10⁻¹⁶"), (0.5, "最大差为 0.5000")])
def test_compare_text_says_exact_only_when_it_is(diff, words):
    assert page.compare_text(diff) == words


def test_gqa_tables_follow_the_checks():
    wk = [[1.0], [0.0], [2.0], [-1.0]]  # one K/V head for four query heads: MQA on other inputs than the page's
    tables = page.gqa_tables(mh.DEMO_X, mh.DEMO_WQ, mh.DEMO_WO, 4, {"甲": (wk, wk)})
    header, rows = tables["checks"]
    assert rows[1] == ["甲", "1", "(4, 1)", page.compare_text(0.0)] and len(header) == 4  # no cache here: costs'
    assert tables["groups"][1] == [["甲", "1"] + ["K/V 头 0"] * 4]


def test_the_two_ways_and_the_fused_shapes_come_from_the_code():
    x, w_q, w_k, w_v, w_o = mh.DEMO
    both = page.two_ways(x, w_q, w_k, w_v, w_o, 4)  # four heads of one column: not the page's two
    assert both["sentence"] == "两者的输出与各头的权重表都逐元素完全相同（最大差为 0）。"
    _, rows = page.fused_shape_rows(x, w_q, 4)
    assert [r[1] for r in rows] == ["(3, 4)", "(3, 4, 1)", "(4, 3, 1)", "(3, 4, 1)", "(3, 4)"]


def test_the_shape_table_measures_the_steps():
    x, w_q, w_k, w_v, w_o = mh.DEMO
    s = mh.multihead_steps(x, w_q, w_k, w_v, w_o, 4)
    rows = {r[0]: r[3] for r in page.shape_rows(x, s)[1]}
    assert rows["切成头"] == "4 块 3 × 1" and rows["每头分数"] == "4 张 3 × 3" and rows["输出"] == "3 × 4"


def test_gemma_states_a_head_dim_that_is_not_d_model_over_heads():
    g = page.GEMMA_7B
    c = page.config_head_dim(g)
    assert c["stated"] == g["head_dim"] != g["hidden_size"] // g["num_attention_heads"] == c["derived"]
    assert c["params_stated"] == 4 * g["hidden_size"] * g["num_attention_heads"] * g["head_dim"]
    assert c["params_if_derived"] == 4 * g["hidden_size"] ** 2
    assert g["source"].startswith("https://huggingface.co/google/gemma-7b")
    other = page.config_head_dim({"hidden_size": 10, "num_attention_heads": 4, "head_dim": 3, "num_key_value_heads": 2})
    assert other["derived"] == 2.5 and other["params_if_derived"] is None and other["heads_times_head_dim"] == 12
    with pytest.raises(ValueError, match="num_attention_heads"):
        page.config_head_dim({"hidden_size": 8})


# -- the exercises' solution sentences -------------------------------------------------------------------
@QUICK
@given(st.integers(1, 5).flatmap(lambda n: st.tuples(*[st.lists(st.floats(0.01, 1), min_size=n, max_size=n)] * 2)))
def test_the_other_head_sentence_follows_the_two_rows(rows):
    mine, other = ([x / sum(r) for x in r] for r in rows)
    sentence = page.other_head_sentence(1, mine, 0, other)
    assert sentence.startswith(f"头 0 在同一位置读的是同样的 {len(mine)} 个 Key，权重却是 {page.slashed(other)}：")
    a, b = page.favourite(mine), page.favourite(other)
    if a == b:
        assert f"两个头都最看重 Key {a}" in sentence
    else:
        assert f"头 1 最看重 Key {a}，头 0 最看重 Key {b}" in sentence
    with pytest.raises(ValueError, match="other_weights"):
        page.other_head_sentence(1, mine, 0, other + [0.5])


def test_the_exercise_compares_two_heads_that_read_the_same_keys():
    a = ex.split_and_row()
    assert len(a["weights"]) == len(a["other_weights"]) == ex.ROW_POS + 1 and a["weights"] != a["other_weights"]


@pytest.mark.parametrize("n, text", [(1, "= √1 = 1"), (2, "= √2 ≈ 1.4142"), (4, "= √4 = 2"), (8, "= √8 ≈ 2.8284")])
def test_a_square_root_says_approximately_only_when_it_is_rounded(n, text):
    assert page.root(n) == text


def test_the_two_ways_sentence_says_each_verdict_once():
    assert page.two_ways_sentence(0.0, 0.0).count("完全相同") == 1
    both = page.two_ways_sentence(2.5e-16, 0.0)
    assert "输出最大差为 2.5 × 10⁻¹⁶" in both and "权重表逐元素完全相同" in both


@pytest.mark.parametrize("heads, kv_choices", [(8, [8, 4, 2, 1]), (6, [3, 1])])
def test_the_columns_sentence_follows_its_table(heads, kv_choices):
    rows = ex.gqa_plan(heads, kv_choices, 2, 5)
    sentence = page.cols_sentence(rows)
    assert sentence.startswith(f"{len(kv_choices)} 种") and "都等于" in sentence
    assert "、".join(str(heads // kv) for kv in kv_choices) in sentence
    rows[0]["fraction"] += 1  # a table where one row disagrees
    assert "并不都等于" in page.cols_sentence(rows)


def test_the_reshape_exercise_says_what_the_split_found():
    v = page.exercise_reshape()
    a = ex.reshape_split()
    assert v["ex3_touched"] == "、".join(f"头 {c}" for c in a["touched"])
    assert ("认得出" in v["ex3_verdict"]) == (a["touched"] != [0])
    assert "认不出" in page.reshape_verdict([0])
    _, rows = v["ex3_table"]
    assert [r[2] for r in rows] == [fmt.vector(part) for part in a["right"]]
    assert [r[4] for r in rows] == [fmt.vector(part) for part in a["wrong"]]


def test_the_wrong_root_row_is_flatter_than_the_right_one():
    v = page.head_dim_values()
    right, wrong = ([fmt.printed(x) for x in v[k].split(" / ")] for k in ("right_row", "wrong_row"))
    assert max(wrong) < max(right) and v["sqrt_d_model"] == page.root(len(mh.DEMO_X[0]))


def test_the_split_figure_shows_every_weight_of_the_example():
    from chapter.multihead_figure import split_figure

    fig = split_figure()
    texts = {t.get_text() for t in fig.axes[0].texts}
    s = mh.multihead_steps(*mh.DEMO, mh.DEMO_HEADS)
    for table in s["weights"]:
        for row, vis in zip(table, s["visible"]):
            assert all((fmt.fmt(p) if ok else "禁止") in texts for p, ok in zip(row, vis))
    assert all(fmt.fmt(x) in texts for row in s["output"] for x in row)
    five = [[1.0] * 5] * 5  # five heads of one column: more heads than the figure has colours
    with pytest.raises(ValueError, match="heads 至多为"):
        split_figure([[1.0] * 5], five, five, five, five, 5)


# -- bad input to the functions this pass added: a ValueError that names the argument -----------------------
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "code" / "tests"))
from reference import fuzz_failures  # noqa: E402

NEW_CALLS = {
    page.root: {"n": 2},
    page.two_ways_sentence: {"diff_out": 0.0, "diff_w": 0.0},
    page.other_head_sentence: {"head": 1, "weights": [0.7, 0.3], "other": 0, "other_weights": [0.4, 0.6]},
}


@pytest.mark.parametrize("function", list(NEW_CALLS), ids=lambda f: f.__name__)
def test_bad_arguments_get_a_value_error_that_names_them(function):
    assert fuzz_failures(function, NEW_CALLS[function]) == []


def test_the_page_glues_only_through_the_book_side():
    # One way to glue: the book module returns a section's values as a dict, the page calls page.glue_all.
    source = (Path(__file__).resolve().parent.parent / "book" / "ch02" / "multihead.md").read_text(encoding="utf-8")
    assert re.findall(r"\b(?:glue|glue_md|Markdown)\(", source) == []
    assert source.count("page.glue_all(") >= 4
