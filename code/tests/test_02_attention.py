"""Tests of code/02_attention.py: properties, a numpy cross-check, leak checks and bad input.

The doctests in the module run too (``--doctest-modules`` in .pytest.ini); these tests add what
examples cannot show: that the properties hold for many random inputs, that the leak check can
fail (a deliberately wrong offset is kept here as its proof), and that every bad input gets a
``ValueError`` that names what was wrong.
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from reference import fuzz_failures

att = importlib.import_module("02_attention")
CODE = Path(att.__file__)

# -- strategies ------------------------------------------------------------------------------------
finite = st.floats(min_value=-50, max_value=50, allow_nan=False, allow_infinity=False)
scores_row = st.lists(finite, min_size=1, max_size=8)


@st.composite
def problems(draw, *, with_past: bool = True):
    """Random Q, K, V with a cache offset and a validity list: one attention problem."""
    d = draw(st.integers(1, 3))
    d_v = draw(st.integers(1, 2))
    past = draw(st.integers(0, 3)) if with_past else 0
    n_query = draw(st.integers(1, 4))
    n_key = past + n_query

    def matrix(rows, cols):
        return st.lists(
            st.lists(finite, min_size=cols, max_size=cols), min_size=rows, max_size=rows
        )

    q = draw(matrix(n_query, d))
    k = draw(matrix(n_key, d))
    v = draw(matrix(n_key, d_v))
    return q, k, v, past


def numpy_attention(q, k, v, visible):
    """An independent reference: the same mechanism written with numpy arrays."""
    q, k, v = (np.asarray(x, dtype=float) for x in (q, k, v))
    scores = q @ k.T / np.sqrt(k.shape[1])  # (n_query, n_key)
    scores = np.where(np.asarray(visible), scores, -np.inf)
    scores -= scores.max(axis=1, keepdims=True)
    w = np.exp(scores)
    w /= w.sum(axis=1, keepdims=True)
    return w, w @ v


# -- softmax ---------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(scores_row)
def test_softmax_sums_to_one_and_is_positive(xs):
    p = att.softmax(xs)
    assert math.isclose(sum(p), 1.0, rel_tol=1e-12)
    assert all(0.0 < pj <= 1.0 for pj in p)


@settings(max_examples=25, deadline=None)
@given(scores_row, st.floats(min_value=-1e6, max_value=1e6))
def test_softmax_ignores_a_constant_shift(xs, c):
    assert np.allclose(att.softmax(xs), att.softmax([x + c for x in xs]), atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(scores_row, st.floats(min_value=0.05, max_value=20))
def test_softmax_keeps_order(xs, temperature):
    p = att.softmax(xs, temperature=temperature)
    for i in range(len(xs)):
        for j in range(len(xs)):
            if xs[i] < xs[j]:
                assert p[i] <= p[j]


@settings(max_examples=25, deadline=None)
@given(scores_row)
def test_softmax_minus_infinity_gets_exactly_zero(xs):
    p = att.softmax(xs + [-math.inf])
    assert p[-1] == 0.0
    assert np.allclose(p[:-1], att.softmax(xs))


def test_softmax_of_huge_scores_does_not_overflow():
    assert att.softmax([1e308, 1e308]) == [0.5, 0.5]


def test_smaller_temperature_concentrates_weights():
    hot, base, cold = (att.softmax([0, 1, 2], temperature=t)[-1] for t in (2.0, 1.0, 0.5))
    assert hot < base < cold


# -- attention against numpy -----------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(problems(), st.booleans(), st.data())
def test_attention_equals_numpy_for_every_mask_combination(problem, causal, data):
    q, k, v, past = problem
    key_valid = data.draw(st.lists(st.booleans(), min_size=len(k), max_size=len(k)) | st.none())
    visible = att.visibility(len(q), len(k), causal=causal, past=past, key_valid=key_valid)
    if not all(any(row) for row in visible):
        with pytest.raises(ValueError, match="没有任何可见的 Key"):
            att.attention(q, k, v, causal, past=past, key_valid=key_valid)
        return
    w, out = att.attention(q, k, v, causal, past=past, key_valid=key_valid)
    w_np, out_np = numpy_attention(q, k, v, visible)
    assert np.allclose(w, w_np, atol=1e-9)
    assert np.allclose(out, out_np, atol=1e-7)
    assert all(wij == 0.0 for row, vis in zip(w, visible) for wij, ok in zip(row, vis) if not ok)


# -- leak checks -----------------------------------------------------------------------------------
def influence_table(run, q, k, v):
    """Which keys actually move each query's output: change one key's V (and K) at a time."""
    _, base = run(q, k, v)
    table = []
    for i in range(len(q)):
        row = []
        for j in range(len(k)):
            v2 = [list(r) for r in v]
            v2[j] = [x + 1000.0 for x in v2[j]]
            k2 = [list(r) for r in k]
            k2[j] = [x + 7.0 for x in k2[j]]
            moved = run(q, k2, v2)[1][i] != base[i]
            row.append(moved)
        table.append(row)
    return table


def correct_run(past, key_valid=None):
    return lambda q, k, v: att.attention(q, k, v, past=past, key_valid=key_valid)


def wrong_offset_run(past, key_valid=None):
    """The mutant: row index i used as the position instead of past + i."""
    return lambda q, k, v: att.masked_attention(q, k, v, att.row_index_visibility(len(q), len(k)))


def leak_check(run, q, k, v, past, key_valid=None):
    """True when exactly the allowed keys influence each query: no leak and nothing hidden."""
    allowed = att.visibility(len(q), len(k), past=past, key_valid=key_valid)
    return influence_table(run, q, k, v) == allowed


# Distinct keys and values so that every allowed key visibly moves the output.
Q5 = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0], [2.0, 0.0]]
V5 = [[1.0], [2.0], [3.0], [4.0], [5.0]]


@pytest.mark.parametrize("past", [0, 1, 2, 3, 4])
def test_no_leak_and_nothing_hidden_with_and_without_past(past):
    q = Q5[past:]
    assert leak_check(correct_run(past), q, Q5, V5, past)


@pytest.mark.parametrize("past", [1, 2, 3])
def test_leak_check_catches_the_wrong_offset(past):
    """Proof that the check can fail: the row-index mutant hides the cached past."""
    q = Q5[past:]
    assert not leak_check(wrong_offset_run(past), q, Q5, V5, past)


def test_leak_check_catches_a_missing_mask():
    def no_mask(q, k, v):
        return att.attention(q, k, v, causal=False)

    assert not leak_check(no_mask, Q5, Q5, V5, 0)


# Moderate entries keep every allowed weight far from underflow: changing an allowed V always shows.
moderate = st.floats(min_value=-3, max_value=3, allow_nan=False, allow_infinity=False)


@st.composite
def cached_problems(draw):
    """Random Q, K, V with at least one cached position: where a wrong offset can hide something."""
    d = draw(st.integers(1, 3))
    past = draw(st.integers(1, 3))
    n_query = draw(st.integers(1, 3))

    def matrix(rows):
        return st.lists(st.lists(moderate, min_size=d, max_size=d), min_size=rows, max_size=rows)

    k = draw(matrix(past + n_query))
    v = draw(
        st.lists(
            st.lists(moderate, min_size=1, max_size=1),
            min_size=past + n_query,
            max_size=past + n_query,
        )
    )
    return draw(matrix(n_query)), k, v, past


@settings(max_examples=15, deadline=None)
@given(cached_problems())
def test_on_random_inputs_the_checks_pass_the_right_offset_and_catch_the_wrong_one(problem):
    """What the page claims: both checks run on random Q, K, V; the row-index mutant is caught."""
    q, k, v, past = problem
    assert leak_check(correct_run(past), q, k, v, past)
    assert not leak_check(wrong_offset_run(past), q, k, v, past)
    # The second check the page names, cached rows against the full recomputation, needs values
    # that tell the keys apart; on random ones it holds for the right offset.
    _, full = att.attention(k[:past] + q, k, v)
    assert np.allclose(correct_run(past)(q, k, v)[1], full[past:], atol=1e-9)


@settings(max_examples=20, deadline=None)
@given(problems(), st.data())
def test_changing_an_invisible_key_never_changes_that_query(problem, data):
    q, k, v, past = problem
    key_valid = data.draw(st.lists(st.booleans(), min_size=len(k), max_size=len(k)))
    visible = att.visibility(len(q), len(k), past=past, key_valid=key_valid)
    assume(all(any(row) for row in visible))
    _, base = att.attention(q, k, v, past=past, key_valid=key_valid)
    j = data.draw(st.integers(0, len(k) - 1))
    k2 = [list(r) for r in k]
    v2 = [list(r) for r in v]
    k2[j] = [x + data.draw(finite) for x in k2[j]]
    v2[j] = [x + data.draw(finite) for x in v2[j]]
    _, changed = att.attention(q, k2, v2, past=past, key_valid=key_valid)
    for i in range(len(q)):
        if not visible[i][j]:
            assert changed[i] == base[i]


@settings(max_examples=25, deadline=None)
@given(problems(with_past=False), st.data())
def test_pad_keys_never_influence_any_output(problem, data):
    q, k, v, _ = problem
    # Without the causal rule the queries need not match the keys in number (cross-attention).
    q = q[: data.draw(st.integers(1, len(q)))]
    n_key = len(k)
    valid_len = data.draw(st.integers(1, n_key))
    pad = att.key_padding(valid_len, n_key)
    poisoned = [row if ok else [9999.0] * len(row) for row, ok in zip(v, pad)]
    poisoned_k = [row if ok else [-9999.0] * len(row) for row, ok in zip(k, pad)]
    for causal in (True, False):
        if causal and len(q) != n_key:
            continue
        visible = att.visibility(len(q), n_key, causal=causal, key_valid=pad)
        if not all(any(row) for row in visible):
            continue
        _, a = att.attention(q, k, v, causal, key_valid=pad)
        _, b = att.attention(q, poisoned_k, poisoned, causal, key_valid=pad)
        assert a == b


@settings(max_examples=20, deadline=None)
@given(problems())
def test_cached_rows_equal_the_full_recomputation(problem):
    q_new, k, v, past = problem
    q_full = k[:past] + q_new  # the earlier queries do not matter for the new rows
    _, full = att.attention(q_full, k, v)
    _, cached = att.attention(q_new, k, v, past=past)
    assert np.allclose(cached, full[past:], atol=1e-9)


# -- a fully masked row: the two named policies, and what unguarded code does ----------------------
@settings(max_examples=25, deadline=None)
@given(problems(), st.booleans(), st.data())
def test_zero_policy_zeroes_exactly_the_empty_rows_and_leaves_the_others(problem, causal, data):
    q, k, v, past = problem
    key_valid = data.draw(st.lists(st.booleans(), min_size=len(k), max_size=len(k)))
    visible = att.visibility(len(q), len(k), causal=causal, past=past, key_valid=key_valid)
    w, out = att.attention(q, k, v, causal, past=past, key_valid=key_valid, empty_row="zero")
    for i, row in enumerate(visible):
        if any(row):
            w_np, out_np = numpy_attention([q[i]], k, v, [row])
            assert np.allclose(w[i], w_np[0], atol=1e-9) and np.allclose(
                out[i], out_np[0], atol=1e-7
            )
        else:
            assert w[i] == [0.0] * len(k) and out[i] == [0.0] * len(v[0])
    if all(any(row) for row in visible):  # no empty row: both policies give the same answer
        assert (w, out) == att.attention(q, k, v, causal, past=past, key_valid=key_valid)


def test_the_error_policy_names_the_first_empty_row():
    with pytest.raises(ValueError, match='第 1 个查询行没有任何可见的 Key.*empty_row="zero"'):
        att.masked_attention(GOOD, GOOD, GOOD, [[True, False], [False, False]], empty_row="error")


@pytest.mark.parametrize("policy", ["ignore", "Zero", None, 0, "nan"])
def test_an_unknown_policy_is_refused(policy):
    with pytest.raises(ValueError, match="empty_row 必须是"):
        att.attention(GOOD, GOOD, GOOD, empty_row=policy)
    with pytest.raises(ValueError, match="empty_row 必须是"):
        att.masked_attention(GOOD, GOOD, GOOD, [[True, True]] * 2, empty_row=policy)


@settings(max_examples=25, deadline=None)
@given(problems(), st.data())
def test_unguarded_attention_agrees_where_a_row_has_a_visible_key(problem, data):
    q, k, v, past = problem
    key_valid = data.draw(st.lists(st.booleans(), min_size=len(k), max_size=len(k)))
    visible = att.visibility(len(q), len(k), past=past, key_valid=key_valid)
    w_inf, out_inf = att.unguarded_attention(q, k, v, visible)
    w_big, out_big = att.unguarded_attention(q, k, v, visible, fill=-1e9)
    w, out = att.masked_attention(q, k, v, visible, empty_row="zero")
    for i, row in enumerate(visible):
        if any(row):
            assert w_inf[i] == w[i] and out_inf[i] == out[i]
        else:
            # -inf: 0/0 is NaN; -1e9: every key gets the same weight: the row reads the PAD values.
            assert all(math.isnan(x) for x in w_inf[i] + out_inf[i])
            assert np.allclose(w_big[i], [1 / len(k)] * len(k))
            assert np.allclose(out_big[i], np.mean(v, axis=0))


def test_one_nan_row_spreads_through_the_next_product_even_where_its_weight_is_zero():
    table = att.visibility(3, 3, key_valid=[False, True, True])
    _, out = att.unguarded_attention(att.DEMO_Q, att.DEMO_K, att.DEMO_V, table)
    assert math.isnan(out[0][0]) and not math.isnan(out[1][0])
    assert math.isnan(sum(w * o[0] for w, o in zip([0.0, 0.5, 0.5], out)))  # 0 × NaN is NaN


@settings(max_examples=25, deadline=None)
@given(problems(), st.data())
def test_row_steps_reach_the_same_weights_and_output(problem, data):
    q, k, v, past = problem
    visible = att.visibility(len(q), len(k), past=past)
    i = data.draw(st.integers(0, len(q) - 1))
    steps = att.row_steps(q[i], k, v, visible[i])
    w, out = att.masked_attention(q, k, v, visible)
    assert steps["weights"] == w[i] and np.allclose(steps["output"], out[i], atol=1e-9)
    assert steps["dots"] == [sum(p) for p in steps["products"]]
    assert np.allclose(steps["scaled"], np.asarray(steps["dots"]) / math.sqrt(len(k[0])))
    assert max(steps["shifted"]) == 0.0
    assert math.isclose(sum(steps["weights"]), 1.0, rel_tol=1e-12)


# -- bad input -------------------------------------------------------------------------------------
NAN = math.nan
INF = math.inf
GOOD = [[1.0, 0.0], [0.0, 1.0]]


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: att.softmax([]), "values 不能为空"),
        (lambda: att.softmax([1.0, NAN]), r"values\[1\]"),
        (lambda: att.softmax([INF, 0.0]), r"values\[0\]"),
        (lambda: att.softmax([-INF, -INF]), "全部候选都被屏蔽"),
        (
            lambda: att.as_vector([0.0, -INF], "s"),
            r"s\[1\] 是 -inf：必须是有限数（不可为 NaN 或 ±∞）",
        ),
        (lambda: att.as_vector([-INF, INF], "s", masked=True), r"s\[1\] 是 inf：必须是有限数或 −∞"),
        (lambda: att.softmax("012"), "values 必须是有序的列表"),
        (lambda: att.softmax({0.0, 1.0}), "values 必须是有序的列表"),
        (lambda: att.softmax(np.array(1.0)), "values 必须是有序的列表"),
        (lambda: att.softmax([np.array(1.0)]), r"values\[0\] 必须是实数"),
        (lambda: att.softmax([10**400, 0]), r"values\[0\] 超出浮点数的范围"),
        (lambda: att.softmax([0.0], temperature=10**400), "temperature 超出浮点数的范围"),
        (lambda: att.softmax([1, "2"]), r"values\[1\] 必须是实数"),
        (lambda: att.softmax([True, 2.0]), r"values\[0\] 必须是实数"),
        (lambda: att.softmax([0.0], temperature=0), "temperature"),
        (lambda: att.softmax([0.0], temperature=-1.0), "temperature"),
        (lambda: att.softmax([0.0], temperature=INF), "temperature"),
        (lambda: att.softmax([0.0], temperature=NAN), "temperature"),
        (lambda: att.as_matrix([], "Q"), "Q 不能为空"),
        (lambda: att.as_matrix([[]], "Q"), r"Q\[0\] 不能为空"),
        (lambda: att.as_matrix([1.0, 2.0], "Q"), "Q 必须是二维矩阵"),
        (lambda: att.as_matrix([[1.0, 2.0], [3.0]], "K"), "K 不是矩形矩阵"),
        (lambda: att.as_matrix([[1.0, NAN]], "V"), r"V\[0\]\[1\]"),
        (lambda: att.as_matrix([[INF]], "V"), r"V\[0\]\[0\]"),
        (lambda: att.as_matrix([[-INF]], "K"), r"K\[0\]\[0\]"),
        (lambda: att.as_matrix([[[1.0]]], "Q"), r"Q\[0\]\[0\] 必须是实数"),
        (lambda: att.as_matrix(None, "Q"), "Q 必须是有序的列表"),
        (lambda: att.as_matrix([{1.0, 2.0}], "Q"), "Q 必须是二维矩阵"),
        (lambda: att.as_matrix([[10**400]], "Q"), r"Q\[0\]\[0\] 超出浮点数的范围"),
        (lambda: att.scaled_scores([[1e200]], [[1e200]]), r"Q\[0\]·K\[0\] 超出浮点数的范围"),
        (
            lambda: att.attention([[1e200], [1.0]], [[1e200], [1.0]], [[1.0], [2.0]]),
            r"Q\[0\]·K\[0\]",
        ),
        (lambda: att.scaled_scores([[1.0]], GOOD), "Q 与 K 的列数"),
        (lambda: att.key_padding(3, 2), "valid_len 不能超过 2（内容不会多于 n_key 个 Key）"),
        (lambda: att.key_padding(-1, 2), "valid_len"),
        (lambda: att.visibility(0, 0), "n_query"),
        (lambda: att.visibility(2, 2, past=-1), "past"),
        (lambda: att.visibility(2, 2, past=1.5), "past"),
        (lambda: att.visibility(2, 5, past=1), "n_key 必须等于 past \\+ n_query"),
        (lambda: att.visibility(2, 3), "n_key 必须等于 past \\+ n_query"),
        (lambda: att.visibility(2, 2, causal=1), "causal"),
        (lambda: att.visibility(2, 2, key_valid=[True]), "key_valid 的长度"),
        (lambda: att.visibility(2, 2, key_valid=[1, 0]), r"key_valid\[0\]"),
        (lambda: att.additive_mask([]), "visible 必须是非空的矩形表"),
        (
            lambda: att.additive_mask([[True], [True, False]]),
            r"visible 必须是非空的矩形表，收到各行的长度 \[1, 2\]",
        ),
        (lambda: att.additive_mask([[1, 0]]), r"visible\[0\]\[0\]"),
        (lambda: att.masked_attention(GOOD, GOOD, [[1.0]], [[True, True]] * 2), "V 的行数"),
        (lambda: att.masked_attention(GOOD, GOOD, GOOD, [[True, True]]), "visible 的形状"),
        (
            lambda: att.masked_attention(GOOD, GOOD, GOOD, [[False, False], [True, True]]),
            "第 0 个查询行没有任何可见的 Key",
        ),
        (lambda: att.attention(GOOD, GOOD, GOOD, key_valid=[False, True]), "第 0 个查询行"),
        (lambda: att.attention(GOOD, GOOD + GOOD, GOOD), "n_key 必须等于 past \\+ n_query"),
        (lambda: att.attention(GOOD, GOOD, GOOD, past=1), "n_key 必须等于 past \\+ n_query"),
        (lambda: att.attention(GOOD, [[1.0, 2.0, 3.0]] * 2, GOOD), "Q 与 K 的列数"),
        (lambda: att.attention([[NAN, 0.0]] * 2, GOOD, GOOD), r"Q\[0\]\[0\]"),
        (
            lambda: att.row_steps([1.0, 0.0], GOOD, GOOD, [False, False]),
            "visible_row 没有任何可见的 Key",
        ),
        (lambda: att.row_steps([1.0, 0.0], GOOD, GOOD, [True]), "visible_row、K、V 的长度必须相同"),
        (lambda: att.row_steps([1.0], GOOD, GOOD, [True, True]), "Q 与 K 的列数"),
        (lambda: att.row_steps("ab", GOOD, GOOD, [True, True]), "query 必须是有序的列表"),
        (
            lambda: att.unguarded_attention(GOOD, GOOD, GOOD, [[True, True]] * 2, fill=NAN),
            "fill 必须是负数",
        ),
        (lambda: att.unguarded_attention(GOOD, GOOD, GOOD, [[True, True]]), "visible 的形状"),
    ],
)
def test_bad_input_gets_a_value_error_that_names_it(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_a_masked_row_may_hold_minus_infinity_and_nothing_else_that_is_not_finite():
    # softmax's scores: −∞ marks a forbidden key; every other row of numbers must be finite.
    assert att.as_vector([0.0, -INF], "s", masked=True) == [0.0, -INF]
    for bad in (NAN, INF):
        with pytest.raises(ValueError, match=r"s\[0\]"):
            att.as_vector([bad, 0.0], "s", masked=True)


def test_numbers_become_floats_at_the_boundary():
    # numpy's fixed-width integers would wrap around (100 * 100 in int8); floats do not.
    q = [[np.int8(100)]]
    assert att.scaled_scores(q, q) == [[10000.0]]
    assert att.softmax([np.int8(100), np.int8(-100)]) == att.softmax([100.0, -100.0])
    assert att.softmax(x for x in (0, 1, 2)) == att.softmax([0, 1, 2])


def test_generators_and_tuples_are_read_once_and_work():
    def rows(m):
        return (tuple(r) for r in m)

    expected = att.attention(att.DEMO_Q, att.DEMO_K, att.DEMO_V)
    assert att.attention(rows(att.DEMO_Q), rows(att.DEMO_K), rows(att.DEMO_V)) == expected
    visible = att.visibility(3, 3)
    assert (
        att.masked_attention(rows(att.DEMO_Q), rows(att.DEMO_K), rows(att.DEMO_V), rows(visible))
        == expected
    )


# -- the command -----------------------------------------------------------------------------------
def test_running_the_file_self_tests_and_prints_the_demo_as_json():
    result = subprocess.run([sys.executable, str(CODE)], capture_output=True, text=True, check=True)
    demo = json.loads(result.stdout)
    assert demo == json.loads(json.dumps(att.run_demo()))
    e = np.exp([0.0, 1.0, 2.0])
    assert np.allclose(demo["softmax_0_1_2"], e / e.sum())
    assert demo["因果权重"][0] == [1.0, 0.0, 0.0]
    assert result.stderr == ""


def test_self_test_fails_when_the_mask_leaks(monkeypatch):
    monkeypatch.setattr(
        att, "visibility", lambda n_query, n_key, **kw: [[True] * n_key for _ in range(n_query)]
    )
    with pytest.raises(AssertionError, match="未来"):
        att.self_test()


# -- fuzz: every public function, one argument at a time replaced by a bad value -------------------
VIS = [[True, False], [True, True]]
# A valid call of each public function (its own doctests' kind of input). ``check`` is left out:
# it is the self-test's assert and answers a false condition with AssertionError by design.
FUZZ_CALLS = {
    att.real: {"x": 3},
    att.as_list: {"values": [1, 2]},
    att.as_vector: {"x": [1.0, 2.0]},
    att.as_matrix: {"a": GOOD},
    att.print_json: {"result": {"权重": [0.5, 0.5]}},
    att.check_count: {"n": 3, "minimum": 1, "maximum": 5},
    att.flags: {"values": [True, False], "n_key": 2},
    att.matmul: {"a": GOOD, "b": GOOD},
    att.max_abs_diff: {"a": GOOD, "b": GOOD},
    att.softmax: {"values": [0.0, 1.0], "temperature": 1.0},
    att.score_scale: {"d": 4},
    att.scaled_scores: {"q": GOOD, "k": GOOD},
    att.key_padding: {"valid_len": 1, "n_key": 2},
    att.visibility: {
        "n_query": 2,
        "n_key": 2,
        "causal": True,
        "past": 0,
        "key_valid": [True, True],
    },
    att.row_index_visibility: {"n_query": 2, "n_key": 2},
    att.additive_mask: {"visible": VIS},
    att.masked_attention: {"q": GOOD, "k": GOOD, "v": GOOD, "visible": VIS, "empty_row": "error"},
    att.attention: {
        "q": GOOD,
        "k": GOOD,
        "v": GOOD,
        "causal": True,
        "past": 0,
        "key_valid": [True, True],
        "empty_row": "error",
    },
    att.row_steps: {"query": [1.0, 0.0], "k": GOOD, "v": GOOD, "visible_row": [True, True]},
    att.unguarded_attention: {"q": GOOD, "k": GOOD, "v": GOOD, "visible": VIS, "fill": -1e9},
}
LABEL = "arg"  # the ``name`` given to the helpers that take one: their messages may say it


@pytest.mark.parametrize("function", FUZZ_CALLS, ids=lambda f: f.__name__)
def test_bad_values_get_a_value_error_that_names_the_argument(function):
    takes_name = "name" in inspect.signature(function).parameters
    assert (
        fuzz_failures(
            function,
            {**FUZZ_CALLS[function], **({"name": LABEL} if takes_name else {})},
            spoken={"name": LABEL},
        )
        == []
    )
