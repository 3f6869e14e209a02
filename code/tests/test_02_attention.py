"""Tests of code/02_attention.py: properties, a numpy cross-check, leak checks and bad input.

The doctests in the module run too (``--doctest-modules`` in .pytest.ini); these tests add what
examples cannot show: that the properties hold for many random inputs, that the leak check can
fail (a deliberately wrong offset is kept here as its proof), and that every bad input gets a
``ValueError`` that names what was wrong.
"""

from __future__ import annotations

import importlib
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

att = importlib.import_module("02_attention")
CODE = Path(att.__file__)

# -- strategies --------------------------------------------------------------------------------------
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
    matrix = lambda rows, cols: st.lists(st.lists(finite, min_size=cols, max_size=cols), min_size=rows, max_size=rows)
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


# -- softmax -----------------------------------------------------------------------------------------
@given(scores_row)
def test_softmax_sums_to_one_and_is_positive(xs):
    p = att.softmax(xs)
    assert math.isclose(sum(p), 1.0, rel_tol=1e-12)
    assert all(0.0 < pj <= 1.0 for pj in p)


@given(scores_row, st.floats(min_value=-1e6, max_value=1e6))
def test_softmax_ignores_a_constant_shift(xs, c):
    assert np.allclose(att.softmax(xs), att.softmax([x + c for x in xs]), atol=1e-9)


@given(scores_row, st.floats(min_value=0.05, max_value=20))
def test_softmax_keeps_order(xs, temperature):
    p = att.softmax(xs, temperature=temperature)
    for i in range(len(xs)):
        for j in range(len(xs)):
            if xs[i] < xs[j]:
                assert p[i] <= p[j]


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


# -- attention against numpy ------------------------------------------------------------------------
@settings(max_examples=150)
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


# -- leak checks -------------------------------------------------------------------------------------
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
    no_mask = lambda q, k, v: att.attention(q, k, v, causal=False)
    assert not leak_check(no_mask, Q5, Q5, V5, 0)


@settings(max_examples=60)
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


@settings(max_examples=60)
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


@settings(max_examples=60)
@given(problems())
def test_cached_rows_equal_the_full_recomputation(problem):
    q_new, k, v, past = problem
    q_full = k[:past] + q_new  # the earlier queries do not matter for the new rows
    _, full = att.attention(q_full, k, v)
    _, cached = att.attention(q_new, k, v, past=past)
    assert np.allclose(cached, full[past:], atol=1e-9)


# -- bad input ---------------------------------------------------------------------------------------
NAN, INF = math.nan, math.inf
GOOD = [[1.0, 0.0], [0.0, 1.0]]


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: att.softmax([]), "values 不能为空"),
        (lambda: att.softmax([1.0, NAN]), r"values\[1\]"),
        (lambda: att.softmax([INF, 0.0]), r"values\[0\]"),
        (lambda: att.softmax([-INF, -INF]), "全部候选都被屏蔽"),
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
        (lambda: att.validate_matrix([], "Q"), "Q 不能为空"),
        (lambda: att.validate_matrix([[]], "Q"), "Q 的行不能为空"),
        (lambda: att.validate_matrix([1.0, 2.0], "Q"), "Q 必须是二维矩阵"),
        (lambda: att.validate_matrix([[1.0, 2.0], [3.0]], "K"), "K 不是矩形矩阵"),
        (lambda: att.validate_matrix([[1.0, NAN]], "V"), r"V\[0\]\[1\]"),
        (lambda: att.validate_matrix([[INF]], "V"), r"V\[0\]\[0\]"),
        (lambda: att.validate_matrix([[-INF]], "K"), r"K\[0\]\[0\]"),
        (lambda: att.validate_matrix([[[1.0]]], "Q"), r"Q\[0\]\[0\] 必须是实数"),
        (lambda: att.validate_matrix(None, "Q"), "Q 必须是有序的列表"),
        (lambda: att.validate_matrix([{1.0, 2.0}], "Q"), "Q 必须是二维矩阵"),
        (lambda: att.validate_matrix([[10**400]], "Q"), r"Q\[0\]\[0\] 超出浮点数的范围"),
        (lambda: att.scaled_scores([[1e200]], [[1e200]]), r"Q\[0\]·K\[0\] 超出浮点数的范围"),
        (lambda: att.attention([[1e200], [1.0]], [[1e200], [1.0]], [[1.0], [2.0]]), r"Q\[0\]·K\[0\]"),
        (lambda: att.scaled_scores([[1.0]], GOOD), "Q 与 K 的列数"),
        (lambda: att.key_padding(3, 2), "valid_len=3 超过"),
        (lambda: att.key_padding(-1, 2), "valid_len"),
        (lambda: att.visibility(0, 0), "n_query"),
        (lambda: att.visibility(2, 2, past=-1), "past"),
        (lambda: att.visibility(2, 2, past=1.5), "past"),
        (lambda: att.visibility(2, 5, past=1), "n_key 必须等于 past \\+ n_query"),
        (lambda: att.visibility(2, 3), "n_key 必须等于 past \\+ n_query"),
        (lambda: att.visibility(2, 2, causal=1), "causal"),
        (lambda: att.visibility(2, 2, key_valid=[True]), "key_valid 的长度"),
        (lambda: att.visibility(2, 2, key_valid=[1, 0]), r"key_valid\[0\]"),
        (lambda: att.additive_mask([]), "visible 不能为空"),
        (lambda: att.additive_mask([[True], [True, False]]), "visible 不是矩形表"),
        (lambda: att.additive_mask([[1, 0]]), r"visible\[0\]\[0\]"),
        (lambda: att.masked_attention(GOOD, GOOD, [[1.0]], [[True, True]] * 2), "V 的行数"),
        (lambda: att.masked_attention(GOOD, GOOD, GOOD, [[True, True]]), "visible 的形状"),
        (lambda: att.masked_attention(GOOD, GOOD, GOOD, [[False, False], [True, True]]), "第0个查询行没有任何可见的 Key"),
        (lambda: att.attention(GOOD, GOOD, GOOD, key_valid=[False, True]), "第0个查询行"),
        (lambda: att.attention(GOOD, GOOD + GOOD, GOOD), "n_key 必须等于 past \\+ n_query"),
        (lambda: att.attention(GOOD, GOOD, GOOD, past=1), "n_key 必须等于 past \\+ n_query"),
        (lambda: att.attention(GOOD, [[1.0, 2.0, 3.0]] * 2, GOOD), "Q 与 K 的列数"),
        (lambda: att.attention([[NAN, 0.0]] * 2, GOOD, GOOD), r"Q\[0\]\[0\]"),
    ],
)
def test_bad_input_gets_a_value_error_that_names_it(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_numbers_become_floats_at_the_boundary():
    # numpy's fixed-width integers would wrap around (100 * 100 in int8); floats do not.
    q = [[np.int8(100)]]
    assert att.scaled_scores(q, q) == [[10000.0]]
    assert att.softmax([np.int8(100), np.int8(-100)]) == att.softmax([100.0, -100.0])
    assert att.softmax((x for x in (0, 1, 2))) == att.softmax([0, 1, 2])


def test_generators_and_tuples_are_read_once_and_work():
    rows = lambda m: (tuple(r) for r in m)
    expected = att.attention(att.DEMO_Q, att.DEMO_K, att.DEMO_V)
    assert att.attention(rows(att.DEMO_Q), rows(att.DEMO_K), rows(att.DEMO_V)) == expected
    visible = att.visibility(3, 3)
    assert att.masked_attention(rows(att.DEMO_Q), rows(att.DEMO_K), rows(att.DEMO_V), rows(visible)) == expected


# -- the command ---------------------------------------------------------------------------------------
def test_running_the_file_self_tests_and_prints_the_demo_as_json():
    result = subprocess.run([sys.executable, str(CODE)], capture_output=True, text=True, check=True)
    demo = json.loads(result.stdout)
    assert demo == json.loads(json.dumps(att.run_demo()))
    e = np.exp([0.0, 1.0, 2.0])
    assert np.allclose(demo["softmax_0_1_2"], e / e.sum())
    assert demo["因果权重"][0] == [1.0, 0.0, 0.0]
    assert result.stderr == ""


def test_self_test_fails_when_the_mask_leaks(monkeypatch):
    monkeypatch.setattr(att, "visibility", lambda n_query, n_key, **kw: [[True] * n_key for _ in range(n_query)])
    with pytest.raises(AssertionError, match="未来"):
        att.self_test()
