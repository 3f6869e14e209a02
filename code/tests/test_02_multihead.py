"""Tests of code/02_multihead.py: properties on random inputs, a numpy reference, mutants and bad input.

The doctests in the module run too. These tests add what the examples cannot show: that the
page's checks hold for many random inputs, that each check can fail (three deliberately wrong
variants are kept here and each is caught), that the generated sentences follow their tables on
other inputs, and that every bad input gets a ``ValueError`` that names what was wrong.
"""

from __future__ import annotations

import importlib
import json
import math
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

att = importlib.import_module("02_attention")
mh = importlib.import_module("02_multihead")

finite = st.floats(min_value=-3, max_value=3, allow_nan=False, allow_infinity=False)
FAST = settings(max_examples=10, deadline=None)
QUICK = settings(max_examples=15, deadline=None)


def matrix(rows: int, cols: int):
    return st.lists(st.lists(finite, min_size=cols, max_size=cols), min_size=rows, max_size=rows)


@st.composite
def problems(draw, *, grouped: bool = True, free_head_dim: bool = False):
    """Random x and four projections for heads / kv_heads / head_dim that fit together."""
    kv_heads = draw(st.integers(1, 2)) if grouped else None
    group = draw(st.integers(1, 3))
    heads = (kv_heads or 1) * group if grouped else draw(st.integers(1, 4))
    kv = kv_heads or heads
    head_dim = draw(st.integers(1, 3))
    d_model = draw(st.integers(1, 5)) if free_head_dim else heads * head_dim
    n = draw(st.integers(1, 4))
    x = draw(matrix(n, d_model))
    w_q = draw(matrix(d_model, heads * head_dim))
    w_k = draw(matrix(d_model, kv * head_dim))
    w_v = draw(matrix(d_model, kv * head_dim))
    w_o = draw(matrix(heads * head_dim, d_model))
    return x, w_q, w_k, w_v, w_o, heads, kv, head_dim


def numpy_multihead(x, w_q, w_k, w_v, w_o, heads, kv_heads, head_dim, causal=True):
    """An independent reference: reshape / transpose with numpy, K/V heads repeated with np.repeat."""
    x, w_q, w_k, w_v, w_o = (np.asarray(a, dtype=float) for a in (x, w_q, w_k, w_v, w_o))
    n = x.shape[0]
    q = (x @ w_q).reshape(n, heads, head_dim).transpose(1, 0, 2)  # (h, n, d)
    k = (x @ w_k).reshape(n, kv_heads, head_dim).transpose(1, 0, 2)
    v = (x @ w_v).reshape(n, kv_heads, head_dim).transpose(1, 0, 2)
    k, v = np.repeat(k, heads // kv_heads, axis=0), np.repeat(v, heads // kv_heads, axis=0)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(head_dim)  # (h, n, n)
    if causal:
        scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    scores -= scores.max(axis=2, keepdims=True)
    w = np.exp(scores)
    w /= w.sum(axis=2, keepdims=True)
    out = (w @ v).transpose(1, 0, 2).reshape(n, heads * head_dim)
    return w, out @ w_o


def run(p, fn=None, **kw):
    x, w_q, w_k, w_v, w_o, heads, kv, head_dim = p
    fn = fn or mh.multihead_attention
    return fn(x, w_q, w_k, w_v, w_o, heads, kv, head_dim=head_dim, **kw)


# -- the page's checks, on random inputs ----------------------------------------------------------------
@FAST
@given(problems(free_head_dim=True), st.booleans())
def test_both_implementations_equal_the_numpy_reference(p, causal):
    w1, out1 = run(p, causal=causal)
    w2, out2 = run(p, mh.multihead_attention_fused, causal=causal)
    w_ref, out_ref = numpy_multihead(*p, causal=causal)
    assert np.allclose(w1, w_ref, atol=1e-9) and np.allclose(out1, out_ref, atol=1e-8)
    assert np.allclose(w2, w_ref, atol=1e-9) and np.allclose(out2, out_ref, atol=1e-8)


@FAST
@given(problems(grouped=False))
def test_one_head_is_single_head_attention_with_the_same_projections(p):
    x, w_q, w_k, w_v, w_o, heads, kv, head_dim = p
    _, one = mh.multihead_attention(x, w_q, w_k, w_v, w_o, 1, head_dim=heads * head_dim)
    weights, single = att.attention(mh.matmul(x, w_q), mh.matmul(x, w_k), mh.matmul(x, w_v))
    w1, _ = mh.multihead_attention(x, w_q, w_k, w_v, w_o, 1, head_dim=heads * head_dim)
    assert np.allclose(one, np.asarray(single) @ np.asarray(w_o), atol=1e-9)
    assert w1 == [weights]


@FAST
@given(problems(), st.data())
def test_changing_one_heads_w_q_columns_changes_only_that_heads_weights(p, data):
    x, w_q, w_k, w_v, w_o, heads, kv, head_dim = p
    head = data.draw(st.integers(0, heads - 1))
    delta = data.draw(st.floats(min_value=0.5, max_value=2))
    cols = mh.head_columns(head, head_dim)
    bumped = [[c + delta if j in cols else c for j, c in enumerate(row)] for row in w_q]
    before, _ = mh.multihead_attention(x, w_q, w_k, w_v, w_o, heads, kv, head_dim=head_dim)
    after, _ = mh.multihead_attention(x, bumped, w_k, w_v, w_o, heads, kv, head_dim=head_dim)
    for h in range(heads):
        if h != head:
            assert after[h] == before[h]


def test_changing_one_heads_w_q_columns_does_change_that_head_on_the_demo():
    rows = mh.check_rows(*mh._demo_args(), mh.DEMO_HEADS, mh.DEMO_HEADS, head=1)
    assert rows[1]["detail"] == [1]


@FAST
@given(problems())
def test_grouped_kv_equals_repeated_kv(p):
    x, w_q, w_k, w_v, w_o, heads, kv, head_dim = p
    _, grouped = mh.multihead_attention(x, w_q, w_k, w_v, w_o, heads, kv, head_dim=head_dim)
    wk_r = mh.repeat_kv_columns(w_k, heads, kv)
    wv_r = mh.repeat_kv_columns(w_v, heads, kv)
    _, repeated = mh.multihead_attention(x, w_q, wk_r, wv_r, w_o, heads, head_dim=head_dim)
    assert np.allclose(grouped, repeated, atol=1e-12)
    # The independent repetition: numpy's repeat of whole K/V heads.
    assert np.allclose(grouped, numpy_multihead(*p)[1], atol=1e-8)


@FAST
@given(problems(free_head_dim=True))
def test_check_rows_hold_on_random_inputs(p):
    x, w_q, w_k, w_v, w_o, heads, kv, head_dim = p
    if head_dim * heads != len(x[0]):
        return  # check_rows derives head_dim from d_model
    assert all(r["holds"] for r in mh.check_rows(x, w_q, w_k, w_v, w_o, heads, kv))


@QUICK
@given(st.integers(1, 64), st.sampled_from([1, 2, 4, 8, 16]), st.integers(1, 16))
def test_parameters_and_multiply_adds_do_not_depend_on_heads_when_they_fill_d_model(n, heads, head_dim):
    d_model = heads * head_dim
    assert mh.projection_params(d_model, heads)["total"] == 4 * d_model * d_model
    assert mh.projection_params(d_model, 1)["total"] == mh.projection_params(d_model, heads)["total"]
    macs, one = mh.multiply_adds(n, d_model, heads), mh.multiply_adds(n, d_model, 1)
    assert macs["total"] == one["total"]
    assert macs["score_cells"] == heads * one["score_cells"]  # what grows: one score table per head


@QUICK
@given(st.integers(1, 512), st.integers(1, 8), st.integers(1, 64))
def test_with_head_dim_fixed_the_parameters_grow_with_heads(d_model, heads, head_dim):
    p = mh.projection_params(d_model, heads, head_dim)["total"]
    assert p == 4 * d_model * heads * head_dim
    assert mh.projection_params(d_model, heads + 1, head_dim)["total"] > p


@QUICK
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 100), st.integers(1, 64))
def test_kv_cache_shrinks_by_the_group_size(kv_heads, group, n, head_dim):
    heads = kv_heads * group
    full = mh.kv_cache_numbers(n, heads, head_dim)
    assert full == group * mh.kv_cache_numbers(n, kv_heads, head_dim)
    assert mh.projection_params(heads * head_dim, heads, kv_heads=kv_heads)["w_k"] * group == (
        mh.projection_params(heads * head_dim, heads)["w_k"]
    )


def test_gemma_config_states_a_head_dim_that_is_not_d_model_over_heads():
    c = mh.config_head_dim(mh.GEMMA_7B)
    g = mh.GEMMA_7B
    assert c["stated"] == g["head_dim"] != g["hidden_size"] // g["num_attention_heads"] == c["derived"]
    assert c["params_stated"] == 4 * g["hidden_size"] * g["num_attention_heads"] * g["head_dim"]
    assert g["source"].startswith("https://huggingface.co/google/gemma-7b")


# -- deliberate mutants: each is caught by one of the checks --------------------------------------------
def fused_with_interleaved_columns(x, w_q, w_k, w_v, w_o, heads, kv_heads=None, causal=True, *, head_dim=None):
    """Wrong reshape: reads the columns as (head_dim, heads) instead of (heads, head_dim)."""
    kv_heads = kv_heads or heads
    xs, d = np.asarray(x, float), head_dim or len(x[0]) // heads
    n = len(x)

    def heads_of(w, count):
        return (xs @ np.asarray(w, float)).reshape(n, d, count).transpose(2, 1, 0).transpose(0, 2, 1)

    q, k, v = heads_of(w_q, heads), heads_of(w_k, kv_heads), heads_of(w_v, kv_heads)
    visible = att.visibility(n, n, causal=causal)
    g = heads // kv_heads
    pairs = [att.masked_attention(q[h].tolist(), k[h // g].tolist(), v[h // g].tolist(), visible) for h in range(heads)]
    out = np.stack([np.asarray(o) for _, o in pairs], axis=1).reshape(n, heads * d)
    return [w for w, _ in pairs], (out @ np.asarray(w_o, float)).tolist()


def test_mutant_wrong_reshape_is_caught_by_the_two_implementations_check():
    p = (*mh._demo_args(), mh.DEMO_HEADS, mh.DEMO_HEADS, 2)
    _, right = run(p)
    _, wrong = run(p, fused_with_interleaved_columns)
    assert not np.allclose(right, wrong)


def test_mutant_scaling_by_d_model_is_caught_by_the_reference():
    x, w_q, w_k = mh.DEMO_X, mh.DEMO_WQ, mh.DEMO_WK
    wrong = mh.wrong_scale_weights(x, w_q, w_k, mh.DEMO_HEADS)
    right, _ = mh.multihead_attention(x, w_q, w_k, w_k, mh.DEMO_WO, mh.DEMO_HEADS)
    assert not np.allclose(wrong, right)
    # With one head, head_dim = d_model: the two scalings agree, so the mutant needs heads > 1 to show.
    one_wrong = mh.wrong_scale_weights(x, w_q, w_k, 1)
    one_right, _ = mh.multihead_attention(x, w_q, w_k, w_k, mh.DEMO_WO, 1)
    assert np.allclose(one_wrong, one_right)


def test_mutant_wrong_kv_grouping_is_caught_by_the_repeated_kv_check(monkeypatch):
    p = (mh.DEMO_X, mh.DEMO_WQ, mh.GQA_WK, mh.GQA_WV, mh.DEMO_WO, mh.GQA_HEADS, 2, 1)
    _, right = run(p)
    assert np.allclose(right, numpy_multihead(*p)[1])
    # Round-robin instead of neighbours: query head h uses K/V head h % kv_heads.
    monkeypatch.setattr(mh, "kv_group", lambda h, heads, kv_heads: h % kv_heads)
    _, wrong = run(p)
    assert not np.allclose(wrong, numpy_multihead(*p)[1])


# -- generated sentences follow their tables on other inputs -------------------------------------------
@QUICK
@given(st.lists(st.booleans(), min_size=1, max_size=6))
def test_check_sentence_counts_what_the_table_shows(flags):
    rows = [{"check": f"检查{i}", "holds": f, "detail": 0} for i, f in enumerate(flags)]
    sentence = mh.check_sentence(rows)
    assert sentence.startswith(f"{len(rows)} 项检查")
    failed = [r["check"] for r in rows if not r["holds"]]
    if failed:
        assert f"{len(rows) - len(failed)} 项通过" in sentence and "、".join(failed) in sentence
    else:
        assert "全部通过" in sentence


@QUICK
@given(st.integers(1, 32), st.sampled_from([[1, 2, 4], [2, 4, 8], [1, 8]]), st.integers(1, 8), st.booleans())
def test_cost_sentence_follows_its_table(n, heads_list, head_dim, fixed):
    d_model = max(heads_list) * head_dim
    rows = mh.cost_rows(n, d_model, heads_list, head_dim if fixed else None)
    sentence = mh.cost_sentence(rows)
    for key, name in (("params", "参数个数"), ("multiply_adds", "乘加次数"), ("score_cells", "分数表格子数")):
        values = [r[key] for r in rows]
        expected = f"{name}都是 {values[0]}" if len(set(values)) == 1 else f"{name}从 {values[0]} 变到 {values[-1]}"
        assert expected in sentence


@settings(max_examples=10, deadline=None)
@given(problems(grouped=False))
def test_f14_sentences_follow_the_frame_tables(p):
    x, w_q, w_k, w_v, w_o, heads, kv, head_dim = p
    if heads < 2:
        return
    frames = mh.f14_frames(x, w_q, w_k, w_v, w_o, heads)
    n = len(x)
    for h, frame in ((0, frames[1]), (1, frames[2])):
        table = frame["tables"][2]
        last = [c["text"] for c in table["rows"][-1][1:]]
        numbers = [float(t.split()[1]) if t.startswith("✓") else None for t in last]
        shown = " / ".join(t.split()[1] for t in last if t.startswith("✓"))
        assert shown in frame["explanation"]
        assert f"√{head_dim}（head_dim）" in frame["explanation"]
        favourite = max((v, j) for j, v in enumerate(numbers) if v is not None)[1]
        weights, _ = mh.multihead_attention(x, w_q, w_k, w_v, w_o, heads)
        assert f"Key {mh._favourite(weights[h][-1])}" in frame["explanation"]
        assert numbers[favourite] == round(max(weights[h][-1]), 4)
    assert f"每个头都拿到全部 {n} 个位置" in frames[0]["explanation"]


@settings(max_examples=15, deadline=None)
@given(problems(grouped=False), st.data())
def test_head_view_sentence_follows_its_rows(p, data):
    x, w_q, w_k, w_v, w_o, heads, kv, head_dim = p
    steps = mh.multihead_steps(x, w_q, w_k, w_v, w_o, heads, head_dim=head_dim)
    i = data.draw(st.integers(0, len(x) - 1))
    rows = mh.head_view_rows(steps, i)
    assert [r["keys"] for r in rows] == [list(range(i + 1))] * heads  # causal: the same keys for every head
    assert [r["favourite"] for r in rows] == [int(np.argmax(steps["weights"][h][i])) for h in range(heads)]
    assert mh.head_view_sentence(rows) == f"{heads} 个头可读的 Key 完全相同，用到的列互不重叠。"
    other = [dict(rows[0], keys=[0]), dict(rows[0], keys=[0, 1])]
    assert mh.head_view_sentence(other) == "2 个头可读的 Key 并不相同，用到的列有重叠。"


@QUICK
@given(st.integers(1, 4).flatmap(lambda h: st.tuples(*[st.lists(st.floats(0.01, 1), min_size=2, max_size=2)] * (2 * h))))
def test_flatter_sentence_counts_the_heads_whose_top_weight_fell(rows):
    right, wrong = list(rows[: len(rows) // 2]), list(rows[len(rows) // 2 :])
    smaller = sum(max(w) < max(r) for r, w in zip(right, wrong))
    sentence = mh.flatter_sentence(right, wrong)
    assert sentence.startswith(f"{len(right)} 个头里")
    assert ("都变小了" in sentence) == (smaller == len(right))
    if smaller < len(right):
        assert f"变小的有 {smaller} 个" in sentence


@settings(max_examples=15, deadline=None)
@given(problems(grouped=False), st.data())
def test_moved_sentence_names_the_heads_whose_tables_changed(p, data):
    x, w_q, w_k, w_v, w_o, heads, kv, head_dim = p
    head = data.draw(st.integers(0, heads - 1))
    bumped = [[c + 1.0 if j in mh.head_columns(head, head_dim) else c for j, c in enumerate(row)] for row in w_q]
    before, _ = mh.multihead_attention(x, w_q, w_k, w_v, w_o, heads, head_dim=head_dim)
    after, _ = mh.multihead_attention(x, bumped, w_k, w_v, w_o, heads, head_dim=head_dim)
    sentence = mh.moved_sentence(before, after, head_dim)
    moved = [h for h in range(heads) if before[h] != after[h]]
    assert moved in ([], [head])
    changed_part, still_part = sentence.split("；")
    assert changed_part == "权重表变了的头：" + ("、".join(f"头 {h}" for h in moved) or "无")
    for h in range(heads):
        assert (f"头 {h}（只用" in still_part) == (h not in moved)


def test_f14_forbidden_cells_say_so_in_words():
    frames = mh.f14_frames()
    for frame in frames[1:3]:
        for table in frame["tables"][2:]:
            for row in table["rows"]:
                for cell in row[1:]:
                    assert (cell["state"] == "forbidden") == cell["text"].startswith("✗ 禁止")


# -- bad input: a clear Chinese ValueError naming the argument -------------------------------------------
EYE4 = [[float(i == j) for j in range(4)] for i in range(4)]
X = mh.DEMO_X


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: mh.multihead_attention(X, EYE4, EYE4, EYE4, EYE4, 3), "d_model=4 不能被 heads=3 整除"),
        (lambda: mh.multihead_attention(X, EYE4, EYE4, EYE4, EYE4, 4, 3), "kv_heads=3 必须整除 heads=4"),
        (lambda: mh.multihead_attention(X, [r[:3] for r in EYE4], EYE4, EYE4, EYE4, 2), "w_q 的形状必须是 (4, 4)"),
        (lambda: mh.multihead_attention(X, EYE4, EYE4, EYE4, EYE4, 2, 1), "w_k 的形状必须是 (4, 2)"),
        (lambda: mh.multihead_attention(X, EYE4, EYE4, EYE4, EYE4[:3], 2), "w_o 的形状必须是 (4, 任意)"),
        (lambda: mh.multihead_attention(X, EYE4, EYE4, EYE4, EYE4, 0), "heads 必须是不小于 1 的整数"),
        (lambda: mh.multihead_attention(X, EYE4, EYE4, EYE4, EYE4, True), "heads 必须是不小于 1 的整数"),
        (lambda: mh.multihead_attention(X, EYE4, EYE4, EYE4, EYE4, 2, head_dim=0), "head_dim 必须是不小于 1"),
        (lambda: mh.multihead_attention([[1.0, float("nan"), 0.0, 0.0]], EYE4, EYE4, EYE4, EYE4, 2), "x[0][1]"),
        (lambda: mh.multihead_attention(X, EYE4, EYE4, EYE4, "W", 2), "w_o 必须是有序的列表"),
        (lambda: mh.multihead_attention(X, EYE4, EYE4, EYE4, EYE4, 2, causal="yes"), "causal 必须是 True 或 False"),
        (lambda: mh.multihead_attention_fused(X, EYE4, EYE4, EYE4, EYE4, 3), "不能被 heads=3 整除"),
        (lambda: mh.split_heads([[1.0, 2.0, 3.0]], 2), "列数 3 不能被 heads=2 整除"),
        (lambda: mh.concat_heads([[[1.0]], [[1.0], [2.0]]]), "每个头的行数（位置数）必须相同"),
        (lambda: mh.concat_heads([]), "parts 必须是非空"),
        (lambda: mh.swap_01([[[1.0]], []]), "第二个轴长度必须处处相同"),
        (lambda: mh.kv_group(4, 4, 2), "h 必须是 0 到 3 之间的整数"),
        (lambda: mh.repeat_kv_columns([[1.0, 2.0, 3.0]], 4, 2), "列数 3 不能被 kv_heads=2 整除"),
        (lambda: mh.matmul([[1.0, 2.0]], [[1.0]]), "a 有 2 列，b 有 1 行"),
        (lambda: mh.multihead_attention([[1e200] * 4] * 2, [[1e200] * 4] * 4, EYE4, EYE4, EYE4, 2), "超出浮点数的范围"),
        (lambda: mh.projection_params(4, 3), "d_model=4 不能被 heads=3 整除"),
        (lambda: mh.multiply_adds(0, 4, 2), "n 必须是不小于 1 的整数"),
        (lambda: mh.kv_cache_numbers(1, 0, 2), "kv_heads 必须是不小于 1 的整数"),
        (lambda: mh.config_head_dim({"hidden_size": 8}), "config 缺少 num_attention_heads"),
        (lambda: mh.wrong_scale_weights(X, EYE4, [r[:2] for r in EYE4], 2), "w_k 的形状必须是 (4, 4)"),
        (lambda: mh.cost_rows(3, 8, []), "heads_list 必须是非空"),
        (lambda: mh.check_sentence([]), "rows 必须是非空"),
        (lambda: mh.compare_text(float("nan")), "diff 必须是非负数"),
        (lambda: mh.compare_text("0"), "diff 必须是实数"),
        (lambda: mh.head_view_rows({}, 0), "steps 必须是 multihead_steps 返回的字典"),
        (lambda: mh.head_view_rows(mh.multihead_steps(*mh._demo_args(), 2), 3), "i 必须是 0 到 2 之间的整数"),
        (lambda: mh.head_view_sentence([]), "rows 必须是非空"),
        (lambda: mh.flatter_sentence([[0.5]], []), "right 与 wrong 必须是同样多行"),
        (lambda: mh.moved_sentence([], [], 2), "before 与 after 必须是同样多头"),
        (lambda: mh.f14_frames(X, EYE4, EYE4, EYE4, EYE4, 1), "heads 至少为 2"),
        (lambda: mh.check_rows(*mh._demo_args(), 2, 2, head=2), "head 必须在 0 到 1 之间"),
        (lambda: mh.output_heads(EYE4[:3], 2), "w_o 的行数 3 必须能被 heads=2 整除"),
        (lambda: mh.output_heads(EYE4, 0), "heads 必须是不小于 1 的整数"),
        (lambda: mh.mixing_sentence([[0], [2]], 2), "头号必须在 0 到 1 之间"),
        (lambda: mh.mixing_sentence([], 2), "used 必须是非空的列表"),
        (lambda: mh.mixing_sentence([[0], [0]], 1), "heads 必须是不小于 2 的整数"),
        (lambda: mh.reach_sentence([[0]], 0, [[1.0, 2.0]], [[1.0, 2.0]]), "列数等于 used 的项数 1"),
        (lambda: mh.reach_sentence([[0]], -1, [[1.0]], [[1.0]]), "head 必须是不小于 0 的整数"),
    ],
)
def test_bad_input_raises_a_clear_value_error(call, words):
    with pytest.raises(ValueError) as error:
        call()
    assert words in str(error.value)


def test_head_dim_may_be_stated_when_d_model_does_not_divide():
    # Gemma-style: head_dim given on its own, heads·head_dim ≠ d_model.
    w_q = [[1.0] * 6 for _ in range(4)]  # (4, 3·2)
    w, out = mh.multihead_attention(X, w_q, w_q, w_q, [[1.0] * 4 for _ in range(6)], 3, head_dim=2)
    assert len(w) == 3 and len(out[0]) == 4


# -- the script ------------------------------------------------------------------------------------------
def test_script_prints_the_demo_as_json_after_its_self_test():
    run_ = subprocess.run([sys.executable, mh.__file__], capture_output=True, text=True, check=True)
    assert json.loads(run_.stdout) == json.loads(json.dumps(mh.run_demo(), ensure_ascii=False))


def test_run_demo_is_fast_and_deterministic():
    start = time.perf_counter()
    first = mh.run_demo()
    assert time.perf_counter() - start < 0.2
    assert mh.run_demo() == first
    assert math.isfinite(first["头0权重"][-1][0])


@QUICK
@given(st.integers(2, 4), st.integers(1, 3), st.integers(1, 5), st.data())
def test_output_heads_and_its_sentences_follow_w_o(heads, head_dim, out_cols, data):
    # A sparse W_o (whole numbers, many zeros), as a hand-made one is.
    cells = st.sampled_from([0.0, 0.0, 0.0, 1.0, -2.0])
    w_o = data.draw(st.lists(st.lists(cells, min_size=out_cols, max_size=out_cols),
                             min_size=heads * head_dim, max_size=heads * head_dim))
    used = mh.output_heads(w_o, heads)
    w = np.array(w_o)
    expected = [[h for h in range(heads) if np.any(w[h * head_dim:(h + 1) * head_dim, j] != 0)] for j in range(out_cols)]
    assert used == expected
    sentence = mh.mixing_sentence(used, heads)
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


@settings(max_examples=10, deadline=None)
@given(problems(grouped=False), st.data())
def test_reach_sentence_names_the_output_columns_that_moved(p, data):
    x, w_q, w_k, w_v, w_o, heads, kv, head_dim = p
    head = data.draw(st.integers(0, heads - 1))
    # Zero out some columns of W_o for this head, so that some outputs cannot move.
    keep = data.draw(st.lists(st.booleans(), min_size=len(w_o[0]), max_size=len(w_o[0])))
    w_o = [[c if keep[j] or r not in mh.head_columns(head, head_dim) else 0.0 for j, c in enumerate(row)]
           for r, row in enumerate(w_o)]
    bumped = [[c + 1.0 if j in mh.head_columns(head, head_dim) else c for j, c in enumerate(row)] for row in w_q]
    before = mh.multihead_attention(x, w_q, w_k, w_v, w_o, heads, head_dim=head_dim)[1]
    after = mh.multihead_attention(x, bumped, w_k, w_v, w_o, heads, head_dim=head_dim)[1]
    used = mh.output_heads(w_o, heads)
    sentence = mh.reach_sentence(used, head, before, after)
    still = [j for j in range(len(used)) if np.array_equal(np.array(before)[:, j], np.array(after)[:, j])]
    for j in range(len(used)):
        if head not in used[j]:
            assert j in still  # a column that does not take the head cannot move
    if not still:
        assert sentence.startswith("最终输出的每一列都变了")
    else:
        assert "一个数没变的列：" + "、".join(f"列 {j}" for j in still) in sentence
