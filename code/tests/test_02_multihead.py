"""Tests of code/02_multihead.py: properties on random inputs, a numpy reference, mutants, bad input

The doctests in the module run too. These tests add what the examples cannot show: that the
page's checks hold for many random inputs, that each check can fail (three deliberately wrong
variants are kept here and each is caught), and that every bad input, of every public function,
gets a ``ValueError`` that names what was wrong. The page's sentences and figure are tested in
tests/test_chapter_multihead.py.
"""

from __future__ import annotations

import importlib
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import fuzz_failures

att = importlib.import_module("02_attention")
mh = importlib.import_module("02_multihead")
ex = importlib.import_module("02_exercises_multihead")

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
    """An independent reference: numpy reshape / transpose, K/V heads repeated with np.repeat."""
    x, w_q, w_k, w_v, w_o = (np.asarray(a, dtype=float) for a in (x, w_q, w_k, w_v, w_o))
    n = x.shape[0]
    q = (x @ w_q).reshape(n, heads, head_dim).transpose(1, 0, 2)  # (h, n, d)
    k = (x @ w_k).reshape(n, kv_heads, head_dim).transpose(1, 0, 2)
    v = (x @ w_v).reshape(n, kv_heads, head_dim).transpose(1, 0, 2)
    k = np.repeat(k, heads // kv_heads, axis=0)
    v = np.repeat(v, heads // kv_heads, axis=0)
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


# -- the page's checks, on random inputs -----------------------------------------------------------
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
    weights, single = att.attention(att.matmul(x, w_q), att.matmul(x, w_k), att.matmul(x, w_v))
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
    rows = mh.check_rows(*mh.DEMO, mh.DEMO_HEADS, mh.DEMO_HEADS, head=1)
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
def test_parameters_and_multiply_adds_do_not_depend_on_heads_filling_d_model(n, heads, head_dim):
    d_model = heads * head_dim
    assert mh.projection_params(d_model, heads)["total"] == 4 * d_model * d_model
    params = mh.projection_params
    assert params(d_model, 1)["total"] == params(d_model, heads)["total"]
    macs = mh.multiply_adds(n, d_model, heads)
    one = mh.multiply_adds(n, d_model, 1)
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
    assert (
        mh.projection_params(heads * head_dim, heads, kv_heads=kv_heads)["w_k"] * group
        == (mh.projection_params(heads * head_dim, heads)["w_k"])
    )


# -- deliberate mutants: each is caught by one of the checks ---------------------------------------
def fused_with_interleaved_columns(
    x, w_q, w_k, w_v, w_o, heads, kv_heads=None, causal=True, *, head_dim=None
):
    """Wrong reshape: reads the columns as (head_dim, heads) instead of (heads, head_dim)."""
    kv_heads = kv_heads or heads
    xs = np.asarray(x, float)
    d = head_dim or len(x[0]) // heads
    n = len(x)

    def heads_of(w, count):
        m = (xs @ np.asarray(w, float)).reshape(n, d, count)
        return m.transpose(2, 1, 0).transpose(0, 2, 1)

    q = heads_of(w_q, heads)
    k = heads_of(w_k, kv_heads)
    v = heads_of(w_v, kv_heads)
    visible = att.visibility(n, n, causal=causal)
    g = heads // kv_heads
    pairs = [
        att.masked_attention(q[c].tolist(), k[c // g].tolist(), v[c // g].tolist(), visible)
        for c in range(heads)
    ]
    out = np.stack([np.asarray(o) for _, o in pairs], axis=1).reshape(n, heads * d)
    return [w for w, _ in pairs], (out @ np.asarray(w_o, float)).tolist()


def test_mutant_wrong_reshape_is_caught_by_the_two_implementations_check():
    p = (*mh.DEMO, mh.DEMO_HEADS, mh.DEMO_HEADS, 2)
    _, right = run(p)
    _, wrong = run(p, fused_with_interleaved_columns)
    assert not np.allclose(right, wrong)


def test_the_scores_are_divided_by_root_head_dim_not_root_d_model():
    # The multi-head code divides by √head_dim, not by √d_model.
    x = np.array(mh.DEMO_X)
    w_q = np.array(mh.DEMO_WQ)
    w_k = np.array(mh.DEMO_WK)
    q, k = ((x @ w).reshape(3, 2, 2).transpose(1, 0, 2) for w in (w_q, w_k))
    causal = np.tril(np.ones((3, 3), bool))
    weights, _ = mh.multihead_attention(
        mh.DEMO_X, mh.DEMO_WQ, mh.DEMO_WK, mh.DEMO_WK, mh.DEMO_WO, mh.DEMO_HEADS
    )
    for root, same in ((np.sqrt(2), True), (np.sqrt(4), False)):
        s = np.where(causal, q @ k.transpose(0, 2, 1) / root, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        assert np.allclose(weights, e / e.sum(-1, keepdims=True)) == same


def test_mutant_reversed_concatenation_is_caught_only_by_the_reference():
    # Variant B of the exercises: every head right, the outputs put back in reverse order.
    x = mh.DEMO_X
    w_q = mh.DEMO_WQ
    w_k = mh.DEMO_WK
    q = att.matmul(x, w_q)
    k = att.matmul(x, w_k)
    w_wrong, wrong = ex.suspect_heads(q, k, k, mh.DEMO_HEADS, mh.DEMO_HEADS, "concat")
    w_right, right = ex.suspect_heads(q, k, k, mh.DEMO_HEADS, mh.DEMO_HEADS, "right")
    assert w_wrong == w_right and not np.allclose(wrong, right)
    # With one head there is no order to get wrong.
    assert ex.suspect_heads(q, k, k, 1, 1, "concat") == ex.suspect_heads(q, k, k, 1, 1, "right")


def test_mutant_wrong_kv_grouping_is_caught_by_the_repeated_kv_check(monkeypatch):
    p = (mh.DEMO_X, mh.DEMO_WQ, mh.GQA_WK, mh.GQA_WV, mh.DEMO_WO, mh.GQA_HEADS, 2, 1)
    _, right = run(p)
    assert np.allclose(right, numpy_multihead(*p)[1])
    # Round-robin instead of neighbours: query head h uses K/V head h % kv_heads.
    monkeypatch.setattr(mh, "kv_group", lambda h, heads, kv_heads: h % kv_heads)
    _, wrong = run(p)
    assert not np.allclose(wrong, numpy_multihead(*p)[1])


# -- bad input: a clear Chinese ValueError naming the argument -------------------------------------
EYE4 = [[float(i == j) for j in range(4)] for i in range(4)]
X = mh.DEMO_X
E4 = (EYE4,) * 4  # W_q, W_k, W_v, W_o
MHA = mh.multihead_attention


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: MHA(X, *E4, 3), "d_model=4 不能被 heads=3 整除"),
        (lambda: MHA(X, *E4, 4, 3), "kv_heads=3 必须整除 heads=4"),
        (lambda: MHA(X, [r[:3] for r in EYE4], *E4[1:], 2), "w_q 的形状必须是 (4, 4)"),
        (lambda: MHA(X, *E4, 2, 1), "w_k 的形状必须是 (4, 2)"),
        (lambda: MHA(X, *E4[:3], EYE4[:3], 2), "w_o 的形状必须是 (4, 任意)"),
        (lambda: MHA(X, *E4, 0), "heads 必须是不小于 1 的整数"),
        (lambda: MHA(X, *E4, True), "heads 必须是不小于 1 的整数"),
        (lambda: MHA(X, *E4, 10**12), f"heads 不能超过 {att.MAX_POSITIONS}"),
        (lambda: MHA(X, *E4, 2, head_dim=0), "head_dim 必须是不小于 1"),
        (lambda: MHA([[1.0, float("nan"), 0.0, 0.0]], *E4, 2), "x[0][1]"),
        (lambda: MHA(X, *E4[:3], "W", 2), "w_o 必须是有序的列表"),
        (lambda: MHA(X, *E4, 2, causal="yes"), "causal 必须是 True 或 False"),
        (lambda: MHA(X, *E4, 2, key_valid=[True]), "key_valid 的长度"),
        (lambda: mh.multihead_attention_fused(X, *E4, 3), "不能被 heads=3 整除"),
        (lambda: mh.split_heads([[1.0, 2.0, 3.0]], 2), "列数 3 不能被 heads=2 整除"),
        (lambda: mh.reshape_heads([[1.0, 2.0, 3.0]], 2), "无法 reshape 成头"),
        (lambda: mh.swap_01([[[1.0]], [[1.0], [2.0]]]), "第二个轴的长度处处相同"),
        (lambda: mh.swap_01([]), "t 必须是非空的三维列表"),
        (lambda: mh.swap_01([[1.0, 2.0]]), "t[0] 必须是二维矩阵"),
        (lambda: mh.kv_group(4, 4, 2), "head 必须是 0 到 3 之间的整数"),
        (lambda: mh.kv_group(0, 4, 3), "kv_heads=3 必须整除 heads=4"),
        (lambda: mh.repeat_kv_columns([[1.0, 2.0, 3.0]], 4, 2), "列数 3 不能被 kv_heads=2 整除"),
        (lambda: mh.repeat_kv_columns([[1.0]], 10**12, 1), f"heads 不能超过 {att.MAX_POSITIONS}"),
        (lambda: mh.head_columns(-1, 2), "head 必须是不小于 0 的整数"),
        (lambda: MHA([[1e200] * 4] * 2, [[1e200] * 4] * 4, *E4[1:], 2), "超出浮点数的范围"),
        (lambda: mh.projection_params(4, 3), "d_model=4 不能被 heads=3 整除"),
        (lambda: mh.multiply_adds(0, 4, 2), "n 必须是不小于 1 的整数"),
        (lambda: mh.kv_cache_numbers(1, 0, 2), "kv_heads 必须是不小于 1 的整数"),
        (lambda: mh.check_rows(*mh.DEMO, 2, 2, head=2), "head 必须在 0 到 1 之间"),
        (lambda: mh.check_rows(*mh.DEMO, 2, 2, delta=float("inf")), "delta 必须是有限的数"),
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


# -- the script ------------------------------------------------------------------------------------
def test_script_prints_the_demo_as_json_after_its_self_test():
    run_ = subprocess.run([sys.executable, mh.__file__], capture_output=True, text=True, check=True)
    assert json.loads(run_.stdout) == json.loads(json.dumps(mh.run_demo(), ensure_ascii=False))


def test_run_demo_is_deterministic_and_reports_what_the_checks_found():
    # The same inputs give the same demo.
    first = mh.run_demo()
    assert mh.run_demo() == first
    assert all(math.isfinite(w) for row in first["头0权重"] + first["头1权重"] for w in row)
    assert first["两种写法最大差"] == first["GQA与重复KV最大差"] == 0.0
    assert first["MQA与重复KV最大差"] == 0.0
    assert set(first["四个投影的参数_d_model8"].values()) == {4 * 8 * 8}


# -- the fuzz: every public function, one argument at a time replaced by something wrong -----------
M24 = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]
LAYER = (*mh.DEMO, 2)
VALID = {  # a valid call of each public function: positional arguments, keyword arguments
    "head_columns": ((1, 2), {}),
    "split_heads": ((M24, 2), {}),
    "reshape_heads": ((M24, 2), {}),
    "swap_01": (([M24, M24],), {}),
    "kv_group": ((1, 4, 2), {}),
    "repeat_kv_columns": (([[1.0, 2.0]], 4, 2), {}),
    "multihead_steps": (
        LAYER,
        {"kv_heads": 2, "causal": True, "head_dim": 2, "key_valid": [True] * 3},
    ),
    "multihead_attention": (
        LAYER,
        {"kv_heads": 2, "causal": False, "head_dim": 2, "key_valid": [True] * 3},
    ),
    "multihead_attention_fused": (
        LAYER,
        {"kv_heads": 2, "causal": True, "head_dim": None, "key_valid": None},
    ),
    "projection_params": ((8, 2, 4, 2), {}),
    "multiply_adds": ((3, 4, 2, 2, 2), {}),
    "kv_cache_numbers": ((1, 2, 2), {}),
    "check_rows": ((*LAYER, 2), {"head": 1, "delta": 1.0}),
    "self_test": ((), {}),
    "run_demo": ((), {}),
}


def public_functions(module):
    return sorted(
        name
        for name, f in vars(module).items()
        if callable(f)
        and not name.startswith("_")
        and getattr(f, "__module__", None) == module.__name__
    )


def fuzz(module, valid) -> list[str]:
    """Every public function of ``module`` has a valid call in ``valid``; what goes wrong on bad
    (a result, or a ValueError that names an argument)."""
    assert public_functions(module) == sorted(valid), "every public function needs a valid call"
    return [
        failure
        for name, (args, kwargs) in valid.items()
        for failure in fuzz_failures(getattr(module, name), kwargs, args=args)
    ]


def test_every_public_function_answers_bad_input_with_a_value_error():
    assert fuzz(mh, VALID) == []
