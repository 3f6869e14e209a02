"""The multi-head page's book side (book/chapter/multihead.py): numbers as printed, tables, the facts its prose reads.

Fast unit tests, no build. Each section takes no arguments: a section is run on other inputs by changing a
teaching constant, and a fact of the page's fixed sentences is planted false by changing what a teaching
function returns (or an input of the book side), and the section must stop the build naming the fact;
figure F14's sentences are checked against the numbers in its own tables.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chapter import fmt
from chapter import multihead as page
from chapter.page import listing

att = importlib.import_module("02_attention")
costs = importlib.import_module("02_costs")
mh = importlib.import_module("02_multihead")
ex = importlib.import_module("02_exercises_multihead")

finite = st.floats(min_value=-3, max_value=3, allow_nan=False, allow_infinity=False)
QUICK = settings(max_examples=15, deadline=None)


def matrix(rows: int, cols: int):
    return st.lists(st.lists(finite, min_size=cols, max_size=cols), min_size=rows, max_size=rows)


@st.composite
def layers(draw):
    """Random x and four projections, heads · head_dim = d_model."""
    heads = draw(st.integers(1, 4))
    head_dim = draw(st.integers(1, 3))
    n = draw(st.integers(1, 4))
    d_model = heads * head_dim
    x = draw(matrix(n, d_model))
    w_q, w_k, w_v = (draw(matrix(d_model, d_model)) for _ in range(3))
    return x, w_q, w_k, w_v, draw(matrix(d_model, d_model)), heads, head_dim


def planted(monkeypatch, module, name, change):
    original = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **kw: change(original(*a, **kw)))


# -- figure F14 ------------------------------------------------------------------------------------------
@settings(max_examples=10, deadline=None)
@given(layers())
def test_f14_sentences_follow_the_frame_tables(p):
    x, w_q, w_k, w_v, w_o, heads, head_dim = p
    if heads < 2:
        return
    frames = page.frames(mh.multihead_steps(x, w_q, w_k, w_v, w_o, heads))
    weights, _ = mh.multihead_attention(x, w_q, w_k, w_v, w_o, heads)
    for h, frame in ((0, frames[1]), (1, frames[2])):
        last = [c["text"] for c in frame["tables"][2]["rows"][-1][1:]]
        numbers = [fmt.printed(t.split()[1]) if t.startswith("✓") else None for t in last]
        assert " / ".join(t.split()[1] for t in last if t.startswith("✓")) in frame["explanation"]
        assert (
            f"每个点积只有 {head_dim} 项（头维度为 {head_dim}），分数除以 √{head_dim}。"
            in frame["explanation"]
        )
        assert f"最看重 Key {page.favourite(weights[h][-1])}" in frame["explanation"]
        assert max(v for v in numbers if v is not None) == round(max(weights[h][-1]), 4)
    assert f"每个头都拿到全部 {len(x)} 个位置" in frames[0]["explanation"]
    same = (
        "同一个" if page.favourite(weights[0][-1]) == page.favourite(weights[1][-1]) else "不同的"
    )
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


# -- facts the page's sentences are built from ----------------------------------------------------------------
def test_the_checks_count_what_the_table_shows():
    v = page.checks().values
    rows = v["tbl_checks"].rows
    assert v["checks_n"] == str(len(rows)) and v["checks_passed"] == str(
        sum(r[2] == "是" for r in rows)
    )
    assert (
        rows[0][1] == "0" and rows[1][1] == "头 0"
    )  # the two ways agree exactly; only head 0 moved


def test_the_cost_sentences_state_the_first_and_last_rows():
    v = page.cost_tables().values
    for name in ("split", "fixed"):
        rows = v[f"tbl_cost_{name}"].rows
        for column, key in ((2, "params"), (3, "multiply_adds"), (4, "score_cells")):
            assert (v[f"cost_{name}_{key}_0"], v[f"cost_{name}_{key}_1"]) == (
                rows[0][column],
                rows[-1][column],
            )
    split = v["tbl_cost_split"].rows
    assert len({r[2] for r in split}) == len({r[3] for r in split}) == 1  # 「都是」
    fixed = v["tbl_cost_fixed"].rows
    equal = [r[0] for r in fixed if int(r[0]) * int(r[1]) == page.COST_D_MODEL]
    assert equal == [v["cost_fixed_equal"]]  # 「除了 h = 4 那一行」


def test_the_cost_words_stop_the_build_where_they_would_be_false(monkeypatch):
    monkeypatch.setattr(page, "COST_FIXED", 3)  # no number of heads times 3 is 64
    with pytest.raises(
        ValueError, match="「怎样观察与验证」.*fixed_one_row_where_width_is_d_model"
    ):
        page.cost_tables()
    monkeypatch.undo()
    monkeypatch.setattr(page, "COST_HEADS", [4, 2, 1])  # fewer heads down the table
    with pytest.raises(ValueError, match="score_cells_grow_with_heads"):
        page.cost_tables()


@QUICK
@given(st.integers(1, 32), st.sampled_from([[1, 2, 4], [2, 4, 8], [1, 8]]), st.integers(1, 8))
def test_the_cost_facts_follow_their_table(n, heads_list, head_dim):
    split = page.cost_rows(n, max(heads_list) * head_dim, heads_list, None)
    fixed = page.cost_rows(n, 64, heads_list, head_dim)
    assert (
        len({r["params"] for r in split}) == len({r["multiply_adds"] for r in split}) == 1
    )  # d_head = d_model / h
    assert len({r["params"] for r in fixed}) == len(
        heads_list
    )  # a fixed head dimension: more heads, more weights
    assert [r["score_cells"] for r in split] == [h * n * n for h in heads_list]


@settings(max_examples=15, deadline=None)
@given(layers(), st.data())
def test_every_head_reads_the_same_keys_with_its_own_columns(p, data):
    x, w_q, w_k, w_v, w_o, heads, head_dim = p
    s = mh.multihead_steps(x, w_q, w_k, w_v, w_o, heads)
    columns = [c for h in range(heads) for c in mh.head_columns(h, s["head_dim"])]
    assert sorted(columns) == list(range(heads * s["head_dim"]))  # each column one head's (误解一)
    i = data.draw(st.integers(0, len(x) - 1))
    assert [page.favourite(w[i]) for w in s["weights"]] == [
        int(np.argmax(w[i])) for w in s["weights"]
    ]


def test_the_experts_facts_are_the_figure_s():
    s = mh.multihead_steps(*mh.DEMO, mh.DEMO_HEADS)
    favs = [page.favourite(w[-1]) for w in s["weights"]]
    assert page.misreadings().values["experts_favs"] == "，".join(
        f"头 {h} 最看重 Key {j}" for h, j in enumerate(favs)
    )


@QUICK
@given(st.integers(2, 4), st.integers(1, 3), st.integers(1, 5), st.data())
def test_output_heads_follow_w_o(heads, head_dim, out_cols, data):
    cells = st.sampled_from([0.0, 0.0, 0.0, 1.0, -2.0])  # sparse whole numbers, as a hand-made W_o
    w_o = data.draw(st.lists(st.lists(cells, min_size=out_cols, max_size=out_cols),
                             min_size=heads * head_dim, max_size=heads * head_dim))  # fmt: skip
    w = np.array(w_o)
    expected = [
        [h for h in range(heads) if np.any(w[h * head_dim : (h + 1) * head_dim, j] != 0)]
        for j in range(out_cols)
    ]
    assert page.output_heads(w_o, heads) == expected


def test_the_page_s_w_o_mixes_some_columns_and_not_others():
    used = page.output_heads(mh.DEMO_WO, mh.DEMO_HEADS)
    assert {len(u) for u in used} == {1, 2}  # the sentence's 取自不止一个头 has cases on both sides
    first = listing(f"头 {h}" for h in used[0])
    assert page.steps().values["mix_cols"].split("；")[0] == f"列 0 ← {first}"


def test_gqa_shrinks_the_kv_projections_and_the_cache_but_not_the_scores_and_mixing():
    # Counted by hand (d_model 64, 16 positions, 8 query heads of 8 columns): Q and O projections
    # 2 · 16 · 64 · 64, K and V projections 2 · 16 · 64 · 8 · h_kv, scores and mixing 2 · 8 · 16² · 8.
    rows = page.gqa_counts(16, 64, 8)
    assert [r["kv_heads"] for r in rows] == [8, 4, 2, 1]
    assert [r["total"] for r in rows] == [294_912, 229_376, 196_608, 180_224]
    assert {r["scores_mixing"] for r in rows} == {32_768}  # 「算分数与混合的乘加次数不变」
    assert [r["kv_projections"] for r in rows] == [2 * 16 * 64 * 8 * kv for kv in (8, 4, 2, 1)]
    assert [r["cache"] for r in rows] == [2 * 8 * kv for kv in (8, 4, 2, 1)]
    page.gqa()  # the page's claims hold


def test_gqa_tables_follow_the_checks():
    v = page.gqa().values
    assert v["tbl_gqa"].rows[1:] == [["GQA", "2", "(4, 2)", "0"], ["MQA", "1", "(4, 1)", "0"]]
    groups = {r[0]: r[2:] for r in v["tbl_groups"].rows}
    assert groups == {
        "GQA": ["K/V 头 0", "K/V 头 0", "K/V 头 1", "K/V 头 1"],  # neighbours share a K/V head
        "MQA": ["K/V 头 0"] * 4,
    }
    assert v["gqa_repeat_example"] == fmt.vectors(mh.repeat_kv_columns(mh.GQA_WK, 4, 2))


def test_a_gqa_count_that_moves_the_scores_stops_the_build(monkeypatch):
    def skew(rows):
        rows[-1]["scores_mixing"] += 1  # were MQA to change the score and mixing multiply-adds
        return rows

    planted(monkeypatch, page, "gqa_counts", skew)
    with pytest.raises(
        ValueError, match="「分组 K/V 头：GQA 与 MQA」.*scores_and_mixing_unchanged"
    ):
        page.gqa()


def test_the_two_ways_and_the_fused_shapes_come_from_the_code(monkeypatch):
    assert page.two_ways().values["two_ways_diff"] == "0"
    monkeypatch.setattr(mh, "DEMO_HEADS", 4)  # four heads of one column: not the page's two
    both = page.two_ways().values
    assert both["two_ways_diff"] == "0"
    assert [r[1] for r in both["tbl_two_ways"].rows] == [r[2] for r in both["tbl_two_ways"].rows]
    shapes = [both[f"fused_{i}"] for i in range(5)]
    assert shapes == ["(3, 4)", "(3, 4, 1)", "(4, 3, 1)", "(3, 4, 1)", "(3, 4)"]


def test_the_shape_table_measures_the_steps(monkeypatch):
    monkeypatch.setattr(mh, "DEMO_HEADS", 4)  # four heads of one column: not the page's two
    size = page.steps().values
    shown = [size[f"size_{k}"] for k in ("q_heads", "scores", "output")]
    assert shown == ["4 块 3 × 1", "4 张 3 × 3", "3 × 4"]


def test_gemma_is_the_costs_page_s_configuration_and_its_head_dim_is_not_the_quotient(monkeypatch):
    g = costs.GEMMA_7B
    typed = (page.GEMMA_HIDDEN, page.GEMMA_HEADS, page.GEMMA_KV_HEADS, page.GEMMA_HEAD_DIM)
    assert typed == (g["hidden"], g["heads"], g["kv_heads"], g["head_dim"])
    v = page.misreadings().values
    assert v["gemma_derived"] == fmt.count(g["hidden"] // g["heads"]) != fmt.count(g["head_dim"])
    assert v["gemma_params"] == fmt.count(4 * g["hidden"] * g["heads"] * g["head_dim"])
    assert v["gemma_params_derived"] == fmt.count(4 * g["hidden"] ** 2)
    monkeypatch.setattr(page, "GEMMA_HEAD_DIM", g["hidden"] // g["heads"])  # were it the quotient
    with pytest.raises(
        ValueError, match="「可能的代价与误解」.*gemma_head_dim_is_not_the_quotient"
    ):
        page.misreadings()


def test_a_row_that_does_not_flatten_stops_the_build(monkeypatch):
    v = page.misreadings().values
    right, wrong = ([fmt.printed(x) for x in v[k].split(" / ")] for k in ("right_row", "wrong_row"))
    assert max(wrong) < max(right) and v["sqrt_d_model"] == page.root(len(mh.DEMO_X[0]))
    monkeypatch.setattr(page, "WRONG_D_POS", 0)  # position 0 reads one key: weight 1 either way
    with pytest.raises(ValueError, match="dividing_by_root_d_model_flattens_the_row"):
        page.misreadings()


# -- the exercises' facts -------------------------------------------------------------------------------------
def test_the_exercise_compares_two_heads_that_read_the_same_keys(monkeypatch):
    a = ex.split_and_row()
    assert (
        len(a["weights"]) == len(a["other_weights"]) == ex.ROW_POS + 1
        and a["weights"] != a["other_weights"]
    )
    fav = int(np.argmax(a["weights"]))
    assert fav == int(np.argmax(a["other_weights"]))  # 「两个头都最看重 Key 2」
    v = page.split_exercise().values
    assert v["ex1_other_w"] == fmt.slashed(a["other_weights"])
    assert (v["ex1_fav_key"], v["ex1_fav_w"], v["ex1_fav_v"]) == (
        str(fav),
        fmt.fmt(a["weights"][fav]),
        fmt.fmt(a["other_weights"][fav]),
    )
    apart = {**a, "other_weights": [0.7, 0.2, 0.1]}  # the other head favours key 0
    monkeypatch.setattr(page.ex, "split_and_row", lambda: apart)
    with pytest.raises(ValueError, match="two_heads_favour_the_same_key"):
        page.split_exercise()


@pytest.mark.parametrize(
    "n, text", [(1, "= √1 = 1"), (2, "= √2 ≈ 1.4142"), (4, "= √4 = 2"), (8, "= √8 ≈ 2.8284")]
)
def test_a_square_root_says_approximately_only_when_it_is_rounded(n, text):
    assert page.root(n) == text


@pytest.mark.parametrize("heads, kv_choices", [(8, [8, 4, 2, 1]), (6, [3, 1])])
def test_the_columns_shrink_by_the_group_size(heads, kv_choices):
    rows = ex.gqa_plan(heads, kv_choices, 2, 5)
    assert all(
        r["fraction"] == r["group_size"] == heads // r["kv_heads"] for r in rows
    )  # what the page says
    assert page.gqa_exercise().values["ex2_sizes"] == "、".join(
        str(r["group_size"]) for r in ex.gqa_plan()
    )


def test_the_reshape_exercise_says_what_the_split_found(monkeypatch):
    v = page.reshape_exercise().values
    a = ex.reshape_split()
    assert v["ex3_touched"] == listing(f"头 {c}" for c in a["touched"]) and a["touched"] != [0]
    rows = v["ex3_table"].rows
    assert [r[2] for r in rows] == [fmt.vector(part) for part in a["right"]]
    assert [r[4] for r in rows] == [fmt.vector(part) for part in a["wrong"]]
    # A split that touches head 0 only: 「头 0 之外的头也变了」 would be false, and the build stops.
    monkeypatch.setattr(page.ex, "reshape_split", lambda: {**a, "touched": [0]})
    with pytest.raises(ValueError, match="swapped_reshape_touches_other_heads"):
        page.reshape_exercise()


def test_the_reader_may_word_the_bad_input_message():
    # The exercise lets the reader write the reason: its doctest compares the exception's type only.
    raising = [
        e
        for e in doctest.DocTestParser().get_examples(inspect.getdoc(ex.attention_params))
        if e.exc_msg is not None
    ]
    assert raising and all(e.options.get(doctest.IGNORE_EXCEPTION_DETAIL) for e in raising)
    assert "IGNORE_EXCEPTION_DETAIL" in page.code_exercise().values["ex4_doctest"]


def test_the_split_figure_shows_every_weight_of_the_example():
    from chapter.grid_figures import split_figure

    s = mh.multihead_steps(*mh.DEMO, mh.DEMO_HEADS)
    texts = {t.get_text() for t in split_figure(s).axes[0].texts}
    for table in s["weights"]:
        for row, vis in zip(table, s["visible"]):
            assert all((fmt.fmt(p) if ok else "禁止") in texts for p, ok in zip(row, vis))
    assert all(fmt.fmt(x) in texts for row in s["output"] for x in row)
    five = [[1.0] * 5] * 5  # five heads of one column: more heads than the figure has colours
    with pytest.raises(ValueError, match="heads 至多为"):
        split_figure(mh.multihead_steps([[1.0] * 5], five, five, five, five, 5))


def test_the_page_glues_only_through_the_book_side():
    # One way to glue: a section of the book module returns a page.Section, the page calls its glue().
    source = (Path(__file__).resolve().parent.parent / "book" / "ch02" / "multihead.md").read_text(
        encoding="utf-8"
    )
    assert re.findall(r"\b(?:glue_all|glue_md|Markdown)\(", source) == []
    assert source.count(".glue()") >= 7


def test_every_section_glues_each_name_once_and_no_float():
    names = []
    sections = [
        page.steps(),
        page.two_ways(),
        page.gqa(),
        page.misreadings(),
        page.checks(),
        page.cost_tables(),
        *page.exercises(),
    ]
    for s in sections:
        assert not any(isinstance(v, float) for v in s.values.values()), s.title
        names += list(s.values)
    assert len(names) == len(set(names))
