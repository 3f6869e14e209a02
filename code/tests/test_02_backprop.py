"""Tests of code/02_backprop.py: finite differences, numpy cross-check, mutants, zeros, bad input.

The page's sentences and tables built from these results: tests/test_chapter_backprop.py.

The hand-derived gradients are checked against central finite differences with a random upstream
gradient dO, in float64, over random inputs with and without masks and a cache offset. Two
deliberately wrong backwards are kept here as proof that the check can fail: one that drops the
rowsum term (every check catches it) and one that forgets dO in that term (a check with dO = all
ones cannot see it; a random dO does). Where the mask forbids, zeros are asserted with ``==``.
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
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from reference import fuzz_failures, public_functions

bp = importlib.import_module("02_backprop")
att = importlib.import_module("02_attention")
CODE = Path(bp.__file__)

# The whole file must stay fast (pytest code/ runs it every time): few, small examples.
fast = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def rule_of(options: dict) -> dict:
    return {n: options[n] for n in ("causal", "past", "key_valid")}


# -- strategies ------------------------------------------------------------------------------------
small = st.floats(min_value=-2, max_value=2, allow_nan=False, allow_infinity=False)


def matrix(rows, cols, elements=small):
    return st.lists(st.lists(elements, min_size=cols, max_size=cols), min_size=rows, max_size=rows)


@st.composite
def problems(draw, *, masks: bool = True):
    """Q, K, V, a random dO and the mask options (causal, past, key_valid) of one attention call."""
    d = draw(st.integers(1, 3))
    d_v = draw(st.integers(1, 2))
    past = draw(st.integers(0, 2)) if masks else 0
    n_query = draw(st.integers(1, 3))
    n_key = past + n_query
    causal = draw(st.booleans()) if masks else False
    if masks and draw(st.booleans()):
        key_valid = draw(st.lists(st.booleans(), min_size=n_key, max_size=n_key))
    else:
        key_valid = None
    q = draw(matrix(n_query, d))
    k = draw(matrix(n_key, d))
    v = draw(matrix(n_key, d_v))
    d_out = draw(matrix(n_query, d_v))
    options = dict(causal=causal or past > 0, past=past, key_valid=key_valid, empty_row="zero")
    return q, k, v, d_out, options


def numpy_backward(q, k, v, d_out, visible):
    """An independent reference with numpy arrays (rows without any visible key output 0)."""
    q, k, v, d_out = (np.asarray(x, dtype=float) for x in (q, k, v, d_out))
    visible = np.asarray(visible, dtype=bool)
    s = np.where(visible, q @ k.T / np.sqrt(q.shape[1]), -np.inf)
    p = np.zeros_like(s)
    rows = visible.any(axis=1)
    e = np.exp(s[rows] - s[rows].max(axis=1, keepdims=True))
    p[rows] = e / e.sum(axis=1, keepdims=True)
    o = p @ v
    dv = p.T @ d_out
    dp = d_out @ v.T
    ds = p * (dp - (d_out * o).sum(axis=1, keepdims=True))
    return ds @ k / np.sqrt(q.shape[1]), ds.T @ q / np.sqrt(q.shape[1]), dv


# -- the softmax Jacobian --------------------------------------------------------------------------
@fast
@given(st.lists(st.floats(min_value=-20, max_value=20), min_size=1, max_size=6))
def test_softmax_jacobian_rows_sum_to_zero_symmetric_and_bounded(scores):
    J = bp.softmax_jacobian(scores)
    p = att.softmax(scores)
    assert all(abs(sum(row)) < 1e-12 for row in J)
    assert all(J[a][b] == J[b][a] for a in range(len(J)) for b in range(len(J)))
    assert all(J[a][a] == pytest.approx(p[a] * (1 - p[a]), abs=1e-15) for a in range(len(J)))
    assert all(abs(x) <= 0.25 for row in J for x in row)
    # the diagonal bounds its row (equal for two scores, so allow rounding: p(1 − p) with p near 1
    # loses digits to cancellation, an absolute error of about one unit in the last place of 1)
    assert all(abs(x) <= row[a] * (1 + 1e-12) + 1e-15 for a, row in enumerate(J) for x in row)
    e = np.exp(np.asarray(scores) - max(scores))
    pn = e / e.sum()
    assert np.allclose(J, np.diag(pn) - np.outer(pn, pn), atol=1e-12)


def test_softmax_jacobian_of_0_1_2_by_finite_differences():
    h = 1e-6
    J = bp.softmax_jacobian([0, 1, 2])
    for b in range(3):
        up = att.softmax([x + (h if j == b else 0) for j, x in enumerate([0.0, 1.0, 2.0])])
        down = att.softmax([x - (h if j == b else 0) for j, x in enumerate([0.0, 1.0, 2.0])])
        column = [(u - d) / (2 * h) for u, d in zip(up, down)]
        assert np.allclose([row[b] for row in J], column, atol=1e-9)


@fast
@given(st.lists(small, min_size=1, max_size=5), st.data())
def test_softmax_backward_is_the_jacobian_times_dp_and_sums_to_zero(scores, data):
    dp = data.draw(st.lists(small, min_size=len(scores), max_size=len(scores)))
    p = att.softmax(scores)
    ds = bp.softmax_backward(p, dp)
    assert np.allclose(ds, np.asarray(bp.softmax_jacobian(scores)) @ np.asarray(dp), atol=1e-12)
    assert abs(sum(ds)) < 1e-12


# -- the hand-derived gradients --------------------------------------------------------------------
@fast
@given(problems())
def test_backward_equals_numpy_reference(problem):
    q, k, v, d_out, options = problem
    visible = att.visibility(len(q), len(k), **rule_of(options))
    ref_grads = numpy_backward(q, k, v, d_out, visible)
    for mine, ref in zip(bp.attention_backward(q, k, v, d_out, **options), ref_grads):
        assert np.allclose(mine, ref, atol=1e-10)


@fast
@given(problems(masks=False))
def test_finite_differences_agree_without_masks(problem):
    q, k, v, d_out, options = problem
    result = bp.gradient_check(q, k, v, d_out, **options)
    assert result["max"] <= bp.TOLERANCE, result


@fast
@given(problems())
def test_finite_differences_agree_with_masks_and_a_cache_offset(problem):
    q, k, v, d_out, options = problem
    result = bp.gradient_check(q, k, v, d_out, **options)
    assert result["max"] <= bp.TOLERANCE, result


@fast
@given(problems())
def test_the_two_rowsums_are_equal(problem):
    q, k, v, d_out, options = problem
    visible = att.visibility(len(q), len(k), **rule_of(options))
    steps = bp.backward_steps(q, k, v, d_out, visible, empty_row="zero")
    assert np.allclose(steps["rowsum_do_o"], steps["rowsum_dp_p"], atol=1e-12)


def test_the_worked_example_passes_with_a_cache_offset_too():
    q = bp.EXAMPLE_Q[1:]
    d_out = bp.EXAMPLE_D_OUT[1:]
    result = bp.gradient_check(q, bp.EXAMPLE_K, bp.EXAMPLE_V, d_out, past=1)
    assert result["passed"] and result["max"] < 1e-8
    # The cached rows' gradients of Q equal the full computation's rows 1 and 2.
    dq_full, _, _ = bp.attention_backward(*EX[:3], [[0.0, 0.0]] + d_out)
    dq_cached, _, _ = bp.attention_backward(q, bp.EXAMPLE_K, bp.EXAMPLE_V, d_out, past=1)
    assert dq_cached == dq_full[1:]


# -- mutants: the check must catch them ------------------------------------------------------------
RNG = np.random.default_rng(12)
RANDOM_CASES = [
    tuple(RNG.uniform(-2, 2, shape).tolist() for shape in ((n, d), (n, d), (n, d_v), (n, d_v)))
    for n, d, d_v in [(3, 2, 2), (4, 3, 2), (2, 1, 1), (5, 2, 3)]
]


@pytest.mark.parametrize("case", RANDOM_CASES, ids=lambda c: f"n{len(c[0])}")
def test_dropping_the_rowsum_term_is_caught(case):
    assert not bp.gradient_check(*case, backward=bp.wrong_backward_no_rowsum)["passed"]
    assert bp.gradient_check(*case)["passed"]


@pytest.mark.parametrize("case", RANDOM_CASES, ids=lambda c: f"n{len(c[0])}")
def test_forgetting_d_out_passes_the_all_ones_check_but_not_a_random_one(case):
    q, k, v, d_out = case
    ones = [[1.0] * len(row) for row in d_out]
    assert bp.gradient_check(q, k, v, ones, backward=bp.wrong_backward_forgets_d_out)["passed"]
    assert not bp.gradient_check(q, k, v, d_out, backward=bp.wrong_backward_forgets_d_out)["passed"]


@pytest.mark.parametrize("case", RANDOM_CASES, ids=lambda c: f"n{len(c[0])}")
def test_a_missing_transpose_in_dv_is_caught_even_by_the_all_ones_check(case):
    q, k, v, d_out = case
    ones = [[1.0] * len(row) for row in d_out]
    for upstream in (ones, d_out):
        check = bp.gradient_check(q, k, v, upstream, backward=bp.wrong_backward_transposes_p)
        assert not check["passed"]


@fast
@given(problems())
def test_the_check_catches_the_mutant_whenever_it_is_really_wrong(problem):
    q, k, v, d_out, options = problem
    right = bp.attention_backward(q, k, v, d_out, **options)
    wrong = bp.wrong_backward_no_rowsum(q, k, v, d_out, **options)
    assume(max(bp.relative_error(a, b) for a, b in zip(right, wrong)) > 1e-4)
    check = bp.gradient_check(q, k, v, d_out, backward=bp.wrong_backward_no_rowsum, **options)
    assert not check["passed"]


# -- the mask: exact zeros -------------------------------------------------------------------------
@fast
@given(problems())
def test_forbidden_cells_and_unread_keys_get_exactly_zero(problem):
    q, k, v, d_out, options = problem
    visible = att.visibility(len(q), len(k), **rule_of(options))
    steps = bp.backward_steps(q, k, v, d_out, visible, empty_row="zero")
    for i, row in enumerate(visible):
        for j, ok in enumerate(row):
            if not ok:
                assert steps["weights"][i][j] == 0.0
                assert steps["ds"][i][j] == 0.0
        if not any(row):  # zero policy: the row reads nothing and gets no gradient
            assert steps["dq"][i] == [0.0] * len(q[0])
            assert steps["outputs"][i] == [0.0] * len(v[0])
    for j in range(len(k)):
        if not any(row[j] for row in visible):
            assert steps["dk"][j] == [0.0] * len(k[0])
            assert steps["dv"][j] == [0.0] * len(v[0])


def test_a_pad_key_gets_exactly_zero_and_its_values_do_not_matter():
    pad = [True, True, False]
    q = bp.EXAMPLE_Q
    k = bp.EXAMPLE_K
    v = bp.EXAMPLE_V
    d_out = bp.EXAMPLE_D_OUT
    dq, dk, dv = bp.attention_backward(q, k, v, d_out, key_valid=pad)
    assert dk[2] == [0.0, 0.0] and dv[2] == [0.0, 0.0]
    # finite differences through a PAD key are exactly 0 too: the loss does not move at all
    _, fd_k, fd_v = bp.finite_difference(q, k, v, d_out, key_valid=pad)
    assert fd_k[2] == [0.0, 0.0] and fd_v[2] == [0.0, 0.0]


# -- fully masked rows: the policies ---------------------------------------------------------------
LEFT_PAD = [False, True, True]


def test_error_policy_names_the_row():
    with pytest.raises(ValueError, match="第 0 个查询行没有任何可见的 Key"):
        bp.attention_backward(*EX, key_valid=LEFT_PAD)


def test_minus_infinity_fill_spreads_nan_into_every_key_even_when_the_row_is_left_out_of_the_loss():
    visible = att.visibility(3, 3, key_valid=LEFT_PAD)
    d_out = [[0.0, 0.0]] + bp.EXAMPLE_D_OUT[1:]  # the loss excludes row 0
    r = bp.fill_backward_demo(*EX[:3], d_out, visible, fill=-math.inf)
    assert all(math.isnan(x) for x in r["weights"][0] + r["outputs"][0])
    assert all(math.isnan(x) for row in r["dv"] for x in row)
    # the zero policy on the same input: no NaN anywhere, and it agrees with -inf on the other rows
    dq, dk, dv = bp.attention_backward(*EX[:3], d_out, key_valid=LEFT_PAD, empty_row="zero")
    assert not any(math.isnan(x) for m in (dq, dk, dv) for row in m for x in row)
    assert r["dq"][1:] == dq[1:]


def test_large_negative_fill_reads_and_sends_gradient_into_forbidden_keys():
    visible = att.visibility(3, 3, key_valid=LEFT_PAD)
    d_out = bp.EXAMPLE_D_OUT
    r = bp.fill_backward_demo(bp.EXAMPLE_Q, bp.EXAMPLE_K, bp.EXAMPLE_V, d_out, visible, fill=-1e9)
    assert r["weights"][0] == [1 / 3] * 3
    assert np.allclose(r["outputs"][0], np.mean(bp.EXAMPLE_V, axis=0))
    assert np.allclose(r["dv"][0], np.asarray(d_out[0]) / 3)  # the PAD key 0 is only read by row 0
    assert r["dq"][0] == [0.0, 0.0]  # the filled scores are constants
    _, _, dv_zero = bp.attention_backward(*EX[:3], d_out, key_valid=LEFT_PAD, empty_row="zero")
    assert dv_zero[0] == [0.0, 0.0]


def test_the_additive_mask_sends_the_nan_also_into_dq_and_every_dk():
    visible = att.visibility(3, 3, key_valid=LEFT_PAD)
    ex = (bp.EXAMPLE_Q, bp.EXAMPLE_K, bp.EXAMPLE_V)
    for d_out in (bp.EXAMPLE_D_OUT, [[0.0, 0.0]] + bp.EXAMPLE_D_OUT[1:]):  # row 0 counted, left out
        added = bp.fill_backward_demo(*ex, d_out, visible, fill=-math.inf, added=True)
        filled = bp.fill_backward_demo(*ex, d_out, visible, fill=-math.inf)
        assert str(added["outputs"]) == str(filled["outputs"])  # the same forward (NaN in row 0)
        assert all(math.isnan(x) for x in added["dq"][0])
        assert not any(math.isnan(x) for x in filled["dq"][0])
        assert all(math.isnan(x) for row in added["dk"] + added["dv"] for x in row)
        assert added["dq"][1:] == filled["dq"][1:]
    # with a row to read everywhere, masked_fill, where and S + M are the same backward
    causal = att.visibility(3, 3)
    added = bp.fill_backward_demo(*ex, bp.EXAMPLE_D_OUT, causal, fill=-math.inf, added=True)
    assert added["dq"] == list(bp.attention_backward(*ex, bp.EXAMPLE_D_OUT)[0])


def test_adding_a_large_negative_number_follows_the_scores_in_float64_and_averages_in_float32():
    visible = att.visibility(3, 3, key_valid=LEFT_PAD)
    ex = (bp.EXAMPLE_Q, bp.EXAMPLE_K, bp.EXAMPLE_V, bp.EXAMPLE_D_OUT)
    replaced = bp.fill_backward_demo(*ex, visible, fill=-1e9)
    wide = bp.fill_backward_demo(*ex, visible, fill=-1e9, added=True)
    narrow = bp.fill_backward_demo(*ex, visible, fill=-1e9, added=True, dtype="float32")
    scores = np.asarray(att.scaled_scores(*ex[:2])[0])
    assert np.allclose(wide["weights"][0], np.exp(scores) / np.exp(scores).sum())
    assert narrow["weights"][0] == replaced["weights"][0] == [1 / 3] * 3  # the same forward...
    assert replaced["dq"][0] == [0.0, 0.0]
    # ...but the addition passes dS on: dQ = dS K / √d with dS = P ∘ (dP − D) of the averaged row
    p = np.full(3, 1 / 3)
    dp = np.asarray(ex[3][0]) @ np.asarray(ex[2]).T
    ds = p * (dp - p @ dp)
    assert np.allclose(narrow["dq"][0], ds @ np.asarray(ex[1]) / math.sqrt(2))
    assert not np.allclose(narrow["dq"][0], 0.0)
    assert bp._float32(-1e9) == np.float32(-1e9) and bp._float32(0.1) == np.float32(0.1)
    with pytest.raises(ValueError, match="dtype 必须是"):
        bp.fill_backward_demo(*ex, visible, fill=-1e9, dtype="float16")


def test_fill_demo_agrees_with_the_backward_when_no_row_is_empty():
    visible = att.visibility(3, 3)
    ex = (bp.EXAMPLE_Q, bp.EXAMPLE_K, bp.EXAMPLE_V, bp.EXAMPLE_D_OUT)
    for fill in (-math.inf, -1e9):
        r = bp.fill_backward_demo(*ex, visible, fill=fill)
        assert np.allclose([r["dq"], r["dk"]], bp.attention_backward(*ex)[:2], atol=1e-12)
        assert np.allclose(r["dv"], bp.attention_backward(*ex)[2], atol=1e-12)


# -- projection weights ----------------------------------------------------------------------------
def projected(x, w_q, w_k, w_v, **options):
    q, k, v = (att.matmul(x, w) for w in (w_q, w_k, w_v))
    return q, k, v, att.attention(q, k, v, **options)[1]


def projection_loss(x, w_q, w_k, w_v, d_out, **options):
    out = projected(x, w_q, w_k, w_v, **options)[3]
    return float(np.sum(np.asarray(out) * np.asarray(d_out)))


@pytest.mark.parametrize("key_valid", [None, [True, True, False], [False, True, True]])
def test_projection_gradients_by_finite_differences(key_valid):
    rng = np.random.default_rng(3)
    shapes = ((3, 3), (3, 2), (3, 2), (3, 2), (3, 2))
    x, w_q, w_k, w_v, d_out = (rng.uniform(-1.5, 1.5, s).tolist() for s in shapes)
    options = dict(key_valid=key_valid, empty_row="zero")
    q, k, v, _ = projected(x, w_q, w_k, w_v, **options)
    dq, dk, dv = bp.attention_backward(q, k, v, d_out, **options)
    grads = bp.projection_backward(x, w_q, w_k, w_v, dq, dk, dv)
    h = 1e-5
    params = {"dw_q": w_q, "dw_k": w_k, "dw_v": w_v, "dx": x}
    for name, m in params.items():
        numeric = np.zeros((len(m), len(m[0])))
        for i in range(len(m)):
            for c in range(len(m[0])):
                saved = m[i][c]
                m[i][c] = saved + h
                up = projection_loss(x, w_q, w_k, w_v, d_out, **options)
                m[i][c] = saved - h
                down = projection_loss(x, w_q, w_k, w_v, d_out, **options)
                m[i][c] = saved
                numeric[i, c] = (up - down) / (2 * h)
        assert bp.relative_error(grads[name], numeric.tolist()) <= bp.TOLERANCE, name


# -- bad input -------------------------------------------------------------------------------------
EX = (bp.EXAMPLE_Q, bp.EXAMPLE_K, bp.EXAMPLE_V, bp.EXAMPLE_D_OUT)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: bp.attention_backward(*EX[:3], [[1.0, 2.0]] * 2), "d_out 的形状必须是"),
        (
            lambda: bp.attention_backward(*EX[:3], [[1.0]] * 3),
            "d_out 的形状必须是 (n_query, d_v) = (3, 2)",
        ),
        (lambda: bp.attention_backward(*EX[:3], [[1.0, math.nan]] * 3), "d_out[0][1] 是 nan"),
        (lambda: bp.attention_backward(*EX[:3], "abc"), "d_out 必须是有序的列表"),
        (
            lambda: bp.attention_backward(*EX, key_valid=[True, False]),
            "key_valid 的长度必须等于 n_key=3",
        ),
        (lambda: bp.attention_backward(*EX, empty_row="nan"), 'empty_row 必须是 "error" 或 "zero"'),
        (lambda: bp.attention_backward(*EX, past=1), "n_key 必须等于 past + n_query"),
        (lambda: bp.attention_backward([[1.0]] * 3, *EX[1:]), "Q 与 K 的列数"),
        (lambda: bp.attention_backward(EX[0], EX[1], EX[2][:2], EX[3]), "V 与 K 的行数必须相同"),
        (lambda: bp.attention_backward([], *EX[1:]), "Q 不能为空"),
        (
            lambda: bp.backward_steps(*EX, [[True, False]]),
            "visible 的形状必须是 (n_query, n_key) = (3, 3)",
        ),
        (lambda: bp.backward_steps(*EX, [[1, 0, 0]] * 3), "visible[0][0] 必须是 True 或 False"),
        (lambda: bp.softmax_backward([0.5, 0.5], [1.0]), "长度必须相同"),
        (lambda: bp.softmax_backward([0.5, math.inf], [1.0, 0.0]), "weights[1] 是 inf"),
        (lambda: bp.softmax_jacobian([]), "scores 不能为空"),
        (
            lambda: bp.softmax_jacobian([0.0] * (att.MAX_POSITIONS + 1)),
            "scores 的长度 不能超过 4096",
        ),
        (lambda: bp.finite_difference(*EX, eps=0.0), "eps 必须是正的有限数"),
        (
            lambda: bp.fill_backward_demo(*EX, att.visibility(3, 3), fill=0.0),
            "fill 必须是负数或 −∞",
        ),
        (
            lambda: bp.fill_backward_demo(*EX, att.visibility(3, 3), fill=math.nan),
            "fill 必须是负数或 −∞",
        ),
        (lambda: bp.gradient_check(*EX, backward="attention_backward"), "backward 必须是可调用的"),
        (lambda: bp.relative_error([[1.0]], [[1.0, 2.0]]), "a 与 b 的形状必须相同"),
        (
            lambda: bp.projection_gradient_check([[1.0, 2.0]], [[1.0]], [[1.0]], [[1.0]], [[1.0]]),
            "W_q 的行数必须等于 X 的列数",
        ),
        (
            lambda: bp.projection_gradient_check([[1.0]], [[1.0]], [[1.0, 2.0]], [[1.0]], [[1.0]]),
            "W_q 与 W_k 的列数必须相同",
        ),
        (
            lambda: bp.projection_backward(*[[[1.0]]] * 5, [[1.0], [2.0]], [[1.0]]),
            "dK 的形状必须是 (1, 1)",
        ),
    ],
)
def test_bad_input_gets_a_chinese_value_error(call, words):
    with pytest.raises(ValueError) as error:
        call()
    assert words in str(error.value)


def test_generators_and_tuples_are_read_once_and_work():
    def rows(m):
        return (tuple(r) for r in m)

    expected = bp.attention_backward(*EX)
    assert bp.attention_backward(*(rows(m) for m in EX)) == expected
    assert bp.gradient_check(*(rows(m) for m in EX))["passed"]
    assert bp.finite_difference(*(rows(m) for m in EX)) == bp.finite_difference(*EX)


# -- the command and the self-test -----------------------------------------------------------------
def test_running_the_file_self_tests_and_prints_the_demo_as_json():
    result = subprocess.run([sys.executable, str(CODE)], capture_output=True, text=True, check=True)
    demo = json.loads(result.stdout)
    assert demo == json.loads(json.dumps(bp.run_demo()))
    assert demo["有限差分核对"]["通过"] is True
    assert result.stderr == ""


def test_self_test_fails_when_the_backward_is_wrong(monkeypatch):
    monkeypatch.setattr(bp, "attention_backward", bp.wrong_backward_no_rowsum)
    with pytest.raises(AssertionError, match="有限差分"):
        bp.self_test()


# -- the projection check --------------------------------------------------------------------------
def test_projection_check_passes_and_catches_a_wrong_projection(monkeypatch):
    args = (bp.PROJ_X, bp.PROJ_W_Q, bp.PROJ_W_K, bp.PROJ_W_V, bp.EXAMPLE_D_OUT)
    assert bp.projection_gradient_check(*args)["max"] < 1e-8
    left = dict(key_valid=[False, True, True], empty_row="zero")
    assert bp.projection_gradient_check(*args, **left)["passed"]
    right = bp.projection_backward

    def swapped(x, w_q, w_k, w_v, dq, dk, dv):  # dW_q and dW_k swapped: a plausible slip
        g = right(x, w_q, w_k, w_v, dq, dk, dv)
        return {**g, "dw_q": g["dw_k"], "dw_k": g["dw_q"]}

    monkeypatch.setattr(bp, "projection_backward", swapped)
    assert not bp.projection_gradient_check(*args)["passed"]


# -- fuzz: every public function, one argument at a time replaced by bad input ---------------------
PROJ = dict(x=bp.PROJ_X, w_q=bp.PROJ_W_Q, w_k=bp.PROJ_W_K, w_v=bp.PROJ_W_V)
ATT = dict(q=EX[0], k=EX[1], v=EX[2], d_out=EX[3])
MASK = dict(causal=True, past=0, key_valid=[True, True, False], empty_row="error")
VALID = {  # one valid call of each public function, every argument named
    "softmax_jacobian": dict(scores=[0.0, 1.0, 2.0]),
    "softmax_backward": dict(weights=[0.5, 0.5], d_weights=[1.0, 0.0]),
    "backward_steps": dict(ATT, visible=att.visibility(3, 3), empty_row="zero"),
    "attention_backward": dict(ATT, **MASK),
    "wrong_backward_no_rowsum": dict(ATT, **MASK),
    "wrong_backward_forgets_d_out": dict(ATT, **MASK),
    "wrong_backward_transposes_p": dict(ATT, **MASK),
    "projection_backward": dict(PROJ, dq=EX[3], dk=EX[3], dv=EX[3]),
    "fill_backward_demo": dict(
        ATT,
        visible=att.visibility(3, 3, key_valid=[False, True, True]),
        fill=-1e9,
        added=False,
        dtype="float64",
    ),
    "finite_difference": dict(ATT, eps=1e-5, **MASK),
    "relative_error": dict(a=EX[0], b=EX[1]),
    "gradient_check": dict(ATT, backward=bp.attention_backward, eps=1e-5, **MASK),
    "projection_gradient_check": dict(
        PROJ, d_out=EX[3], eps=1e-5, causal=True, key_valid=None, empty_row="zero"
    ),
    "self_test": {},
    "run_demo": {},
}


def fuzz(module, valid: dict) -> list[str]:
    """Each argument of each call replaced by each BAD value: a result or a ValueError naming it."""
    assert public_functions(module) == set(valid), "every public function needs a valid call here"
    return [f for name, call in valid.items() for f in fuzz_failures(getattr(module, name), call)]


def test_bad_input_anywhere_is_a_value_error_naming_the_argument():
    assert fuzz(bp, VALID) == []
