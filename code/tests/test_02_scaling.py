"""Tests of code/02_scaling.py: the page's checks on random inputs, and the mutants they catch.

The page says a correct attention row passes four checks: every row of weights sums to 1; adding a
constant to a row of scores changes nothing; permuting the keys together with their values leaves
every output unchanged (permuting the keys alone does not); the pure-Python result equals numpy.
Each check is proved here on random inputs (hypothesis), and each is shown to catch the mistake it
is for: softmax over the wrong axis, scaling by the model width, the formula without the max, keys
permuted without their values.
"""

from __future__ import annotations

import functools
import importlib
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import fuzz_failures, matrices, reals, unmasked_problems

att = importlib.import_module("02_attention")
sc = importlib.import_module("02_scaling")
CODE = Path(sc.__file__)

finite = reals(20)
small_int = st.integers(-3, 3).map(float)


def matrix(rows: int, cols: int, cells=finite):
    return matrices(rows, cols, cells)


def problems(cells=finite):
    """Random Q, K, V without a mask (every query reads every key)."""
    return unmasked_problems(cells, max_d=6, max_keys=5)


def numpy_attention(q, k, v, d=None):
    """Independent reference with numpy; ``d`` is the dimension used for the scaling."""
    q, k, v = (np.asarray(x, dtype=float) for x in (q, k, v))
    scores = q @ k.T / np.sqrt(k.shape[1] if d is None else d)  # (n_query, n_key)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    w = e / e.sum(axis=1, keepdims=True)
    return w, w @ v


# -- the four checks, each as a function that says whether an implementation passes it -------------
def rows_sum_to_one(weights) -> bool:
    return all(math.isclose(sum(row), 1.0, abs_tol=1e-9) for row in weights)


def shift_invariant(softmax, scores, c=1000.0) -> bool:
    try:
        return np.allclose(softmax(scores), softmax([x + c for x in scores]), atol=1e-9)
    except ValueError:  # an implementation that cannot take the shifted row fails the check
        return False


def permutation_invariant(attend, q, k, v, order) -> bool:
    _, base = attend(q, k, v)
    _, moved = attend(q, [k[j] for j in order], [v[j] for j in order])
    return np.allclose(base, moved, atol=1e-9)


def equals_numpy(attend, q, k, v) -> bool:
    w, out = attend(q, k, v)
    w_np, out_np = numpy_attention(q, k, v)
    return np.allclose(w, w_np, atol=1e-9) and np.allclose(out, out_np, atol=1e-7)


def correct(q, k, v):
    return att.attention(q, k, v, causal=False)


# -- the checks hold on random inputs --------------------------------------------------------------
@settings(max_examples=12, deadline=None)
@given(problems())
def test_every_row_of_weights_sums_to_one(problem):
    w, _ = correct(*problem)
    assert rows_sum_to_one(w)
    assert all(x >= 0 for row in w for x in row)


@settings(max_examples=12, deadline=None)
@given(st.lists(finite, min_size=1, max_size=8), st.floats(-1e4, 1e4))
def test_adding_a_constant_to_a_row_changes_nothing(row, c):
    assert shift_invariant(att.softmax, row, c)


@settings(max_examples=12, deadline=None)
@given(problems(), st.data())
def test_permuting_keys_with_their_values_leaves_every_output_unchanged(problem, data):
    q, k, v = problem
    order = data.draw(st.permutations(range(len(k))))
    assert permutation_invariant(correct, q, k, v, order)


@settings(max_examples=12, deadline=None)
@given(problems(), st.data())
def test_permuting_keys_alone_gives_each_value_another_keys_weight(problem, data):
    q, k, v = problem
    order = data.draw(st.permutations(range(len(k))))
    w, _ = correct(q, k, v)
    _, moved = correct(q, [k[j] for j in order], v)
    # Value j now receives the weight of key order[j]: the pairing is broken.
    expected = [
        [sum(row[order[j]] * v[j][c] for j in range(len(k))) for c in range(len(v[0]))] for row in w
    ]
    assert np.allclose(moved, expected, atol=1e-7)


def test_permuting_keys_alone_changes_the_pages_outputs():
    q = sc.EXAMPLE_Q
    k = sc.EXAMPLE_K
    v = sc.EXAMPLE_V
    for order in ([1, 0, 2], [2, 0, 1], [0, 2, 1]):
        assert permutation_invariant(correct, q, k, v, order)

        def keys_only(q_, k_, v_):
            # - values stay in place
            return correct(q_, k_, v)

        assert not permutation_invariant(keys_only, q, k, v, order)


@settings(max_examples=12, deadline=None)
@given(problems())
def test_pure_python_equals_numpy(problem):
    assert equals_numpy(correct, *problem)


@settings(max_examples=12, deadline=None)
@given(problems())
def test_visible_steps_end_where_attention_ends(problem):
    q, k, v = problem
    w, out = correct(q, k, v)
    for i, row in enumerate(q):
        s = sc.visible_steps(row, k, v)
        assert np.allclose(s["scaled"], att.scaled_scores([row], k)[0], atol=1e-12)
        assert max(s["shifted"]) == 0.0 and max(s["exps"]) == 1.0
        assert np.allclose(s["weights"], w[i], atol=1e-12)
        assert np.allclose(s["output"], out[i], atol=1e-9)
        assert np.allclose([sum(t) for t in s["products"]], s["dots"])
        assert s["d"] == len(row)


@settings(max_examples=12, deadline=None)
@given(problems())
def test_the_output_lies_between_the_smallest_and_largest_value_of_each_column(problem):
    q, k, v = problem
    _, out = correct(q, k, v)
    v_np = np.asarray(v)
    for row in out:
        assert np.all(v_np.min(axis=0) - 1e-9 <= row) and np.all(row <= v_np.max(axis=0) + 1e-9)


@settings(max_examples=12, deadline=None)
@given(st.lists(finite, min_size=1, max_size=6), st.floats(0.1, 10))
def test_dividing_by_sqrt_d_is_temperature_sqrt_d(row, t):
    scaled = att.softmax([x / t for x in row])
    assert np.allclose(scaled, att.softmax(row, temperature=t), atol=1e-12)


# -- the mutants the checks catch ------------------------------------------------------------------
def test_softmax_over_the_wrong_axis_fails_the_row_sum_check():
    scores = att.scaled_scores(sc.EXAMPLE_Q, sc.EXAMPLE_K)
    wrong = sc.softmax_over_queries(scores)
    assert not rows_sum_to_one(wrong)
    assert all(math.isclose(sum(col), 1.0) for col in zip(*wrong))  # it normalised the columns


@settings(max_examples=12, deadline=None)
@given(problems())
def test_softmax_over_queries_is_numpys_softmax_over_axis_0(problem):
    q, k, _ = problem
    s = np.asarray(att.scaled_scores(q, k))
    e = np.exp(s - s.max(axis=0, keepdims=True))
    columns = e / e.sum(axis=0, keepdims=True)
    assert np.allclose(sc.softmax_over_queries(s.tolist()), columns, atol=1e-12)


def test_scaling_by_the_model_width_fails_the_numpy_check():
    q = sc.EXAMPLE_Q
    k = sc.EXAMPLE_K
    v = sc.EXAMPLE_V
    width = sc.N_HEADS * len(q[0])

    def wide(q_, k_, v_):
        steps = [sc.scaled_by(row, k_, v_, width) for row in q_]
        return [s["weights"] for s in steps], [s["output"] for s in steps]

    assert not equals_numpy(wide, q, k, v)
    # Scaling by the width is a temperature of √(width / d) on the right scores: flatter weights.
    right = sc.visible_steps(q[0], k, v)
    wrong = sc.scaled_by(q[0], k, v, width)
    hotter = att.softmax(right["scaled"], temperature=math.sqrt(width / len(q[0])))
    assert np.allclose(wrong["weights"], hotter)
    assert max(wrong["weights"]) < max(right["weights"])


def test_the_formula_without_the_max_fails_the_shift_check():
    assert not shift_invariant(sc.naive_softmax, [0.0, 1.0, 2.0])
    assert shift_invariant(att.softmax, [0.0, 1.0, 2.0])


def test_keys_permuted_without_their_values_fail_the_permutation_check():
    q = sc.EXAMPLE_Q
    k = sc.EXAMPLE_K
    v = sc.EXAMPLE_V

    def sorts_keys_only(q_, k_, v_):  # a "tidy-up" that reorders the keys but forgets the values
        return correct(q_, sorted(k_), v_)

    assert not permutation_invariant(sorts_keys_only, q, k, v, [2, 0, 1])


# -- the stable and the naive softmax, and where exp overflows -------------------------------------
@settings(max_examples=12, deadline=None)
@given(st.lists(st.floats(-50, 50), min_size=1, max_size=8))
def test_naive_softmax_agrees_where_it_works(row):
    assert np.allclose(sc.naive_softmax(row), att.softmax(row), atol=1e-12)


@pytest.mark.parametrize(
    "row, words", [(sc.BIG_SCORES, "exp 溢出"), ([-1000.0, -1001.0], "全部下溢为 0")]
)
def test_naive_softmax_says_why_it_has_no_answer(row, words):
    with pytest.raises(ValueError, match=words):
        sc.naive_softmax(row)
    assert math.isclose(sum(att.softmax(row)), 1.0)


def test_python_exp_raises_past_the_limit_and_numpy_gives_inf_then_nan():
    limit = sc.exp_limit()
    assert math.isfinite(math.exp(limit))
    with pytest.raises(OverflowError):
        math.exp(math.nextafter(limit, math.inf) + 1e-9)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(np.array(sc.BIG_SCORES))
        assert np.all(np.isinf(e)) and np.all(np.isnan(e / e.sum()))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_exp_limit_is_where_each_format_overflows(dtype):
    limit = sc.exp_limit(float(np.finfo(dtype).max))
    assert math.isclose(limit, float(np.log(np.float64(np.finfo(dtype).max))))
    with np.errstate(over="ignore"):
        assert np.isfinite(np.exp(dtype(limit * (1 - 1e-3))))
        assert np.isinf(np.exp(dtype(limit * (1 + 1e-3))))


# -- measured variance and saturation --------------------------------------------------------------
@functools.cache  # the page's measurements, made once for the tests that read them
def measured(d: int) -> dict:
    return sc.measure_scaling(d)


def test_measured_variance_grows_like_d_and_scaling_brings_it_back_to_one():
    rows = [measured(d) for d in sc.MEASURE_DIMS]
    for r in rows:
        assert 0.8 < r["var_raw"] / r["d"] < 1.25, r
        assert 0.8 < r["var_scaled"] < 1.25, r
    raw = [r["max_weight_raw"] for r in rows]
    assert raw == sorted(raw) and raw[-1] > 0.85  # saturation: one weight near 1
    assert rows[-1]["grad_raw"] < rows[-1]["grad_scaled"] / 2  # ... and small gradients
    scaled = [r["max_weight_scaled"] for r in rows]
    assert max(scaled) - min(scaled) < 0.1  # scaled, the peak weight does not grow with d
    assert all(r["grad_raw"] <= 0.25 and r["grad_scaled"] <= 0.25 for r in rows)  # p(1 − p) ≤ 1/4
    assert sc.measure_scaling(8) == rows[1]  # the seed is fixed: every build shows the same numbers


def test_measured_variance_agrees_with_numpy_on_the_same_samples():
    # numpy draws its own samples: the two measurements agree on the law, not on the digits.
    rng = np.random.default_rng(0)
    d = 32
    x = (rng.standard_normal((4000, d)) * rng.standard_normal((4000, d))).sum(axis=1)
    assert math.isclose(float(x.var()), measured(d)["var_raw"], rel_tol=0.2)


# -- temperature and the mix -----------------------------------------------------------------------
def test_temperature_moves_the_output_from_the_top_value_row_to_the_mean():
    s = sc.visible_steps(sc.EXAMPLE_Q[0], sc.EXAMPLE_K, sc.EXAMPLE_V)
    rows = sc.temperature_sweep(s["scaled"], sc.EXAMPLE_V, [0.01] + sc.TEMPERATURES + [1e4])
    top = sc.EXAMPLE_V[max(range(3), key=lambda j: s["scaled"][j])]
    mean = np.mean(sc.EXAMPLE_V, axis=0)
    peaks = [max(r["weights"]) for r in rows]
    assert peaks == sorted(peaks, reverse=True)
    assert np.allclose(rows[0]["output"], top, atol=1e-6)
    assert np.allclose(rows[-1]["output"], mean, atol=1e-3)


@settings(max_examples=12, deadline=None)
@given(st.lists(st.floats(0, 10), min_size=1, max_size=5), st.data())
def test_mix_is_numpys_weighted_sum(raw, data):
    total = sum(raw)
    w = [x / total for x in raw] if total > 0 else [1 / len(raw)] * len(raw)
    v = data.draw(matrix(len(w), 2))
    assert np.allclose(sc.mix(w, v), np.asarray(w) @ np.asarray(v), atol=1e-9)


# -- bad input -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: sc.visible_steps([], [[1.0]], [[1.0]]), "query 不能为空"),
        (lambda: sc.visible_steps([1.0, math.nan], [[1.0, 0.0]], [[1.0]]), r"query\[1\]"),
        (lambda: sc.visible_steps("12", [[1.0, 0.0]], [[1.0]]), "query 必须是有序的列表"),
        (lambda: sc.visible_steps([1.0], [[1.0, 0.0]], [[1.0]]), "列数"),
        (lambda: sc.visible_steps([1.0], [[math.inf]], [[1.0]]), r"keys\[0\]\[0\]"),
        (lambda: sc.visible_steps([1.0], [[1.0]], [[1.0], [2.0]]), "行数（Key 的个数）必须相同"),
        (lambda: sc.visible_steps([1e200], [[1e200]], [[1.0]]), "超出浮点数的范围"),
        (lambda: sc.scaled_by([1.0], [[1.0]], [[1.0]], 2.0), "dim"),
        (lambda: sc.scaled_by([1.0], [[1.0]], [[1.0]], True), "dim"),
        (lambda: sc.scaled_by([1.0], [[1.0]], [[1.0], [2.0]], 4), "行数（Key 的个数）必须相同"),
        (lambda: sc.mix([1.0], [[1.0], [2.0]]), "weights 的个数"),
        (lambda: sc.mix([1.5, -0.5], [[1.0], [2.0]]), r"weights\[1\].*不可为负"),
        (lambda: sc.mix([0.5, 0.4], [[1.0], [2.0]]), "weights 之和必须为 1"),
        (lambda: sc.mix([1.0], []), "values 不能为空"),
        (lambda: sc.softmax_over_queries([[1.0], [1.0, 2.0]]), "scores 不是矩形矩阵"),
        (lambda: sc.softmax_jacobian([0.5, 0.6]), "weights 之和必须为 1"),
        (lambda: sc.softmax_jacobian([1.5, -0.5]), "weights 不可为负"),
        (lambda: sc.naive_softmax([]), "values.*不能为空"),
        (lambda: sc.naive_softmax([1.0, "2"]), r"values\[1\] 必须是实数"),
        (lambda: sc.exp_limit(math.inf), "largest 必须是大于 1 的有限数"),
        (lambda: sc.exp_limit(-3.0), "largest"),
        (lambda: sc.exp_limit("big"), "largest 必须是实数"),
        (lambda: sc.measure_scaling(2.5), "d 必须是不小于 1 的整数"),
        (lambda: sc.measure_scaling(4, trials=1), "trials"),
        (lambda: sc.measure_scaling(4, n_keys=1), "n_keys"),
        (lambda: sc.measure_scaling(4, seed=None), "seed"),
        (lambda: sc.measure_scaling(4096, trials=10**4), "不能超过 10000000"),
        (lambda: sc.temperature_sweep([0.5], [[1.0]], [0.0]), "temperature"),
        (lambda: sc.temperature_sweep([0.5], [[1.0]], "1"), "temperatures 必须是有序的列表"),
        (lambda: sc.temperature_sweep([0.5, 1.0], [[1.0]], [1.0]), "scores 的个数"),
    ],
)
def test_bad_input_gets_a_value_error_that_names_it(call, words):
    with pytest.raises(ValueError, match=words):
        call()


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-20, 20), min_size=1, max_size=6))
def test_the_jacobian_is_the_derivative_and_its_entries_stay_under_a_quarter(scores):
    p = att.softmax(scores)
    jac = np.asarray(sc.softmax_jacobian(p))
    assert np.allclose(jac, np.diag(p) - np.outer(p, p), atol=1e-15)
    assert np.abs(jac).max() <= 0.25 + 1e-15 and np.linalg.norm(jac, 2) <= 0.5 + 1e-12
    eps = 1e-6  # central differences: column j is ∂p/∂s_j
    for j in range(len(scores)):
        up = list(scores)
        down = list(scores)
        up[j] += eps
        down[j] -= eps
        column = (np.asarray(att.softmax(up)) - np.asarray(att.softmax(down))) / (2 * eps)
        assert np.allclose(jac[:, j], column, atol=1e-7)


def test_the_largest_entry_does_not_bound_the_whole_product():
    jac = np.asarray(sc.softmax_jacobian([0.5, 0.5]))
    assert np.allclose(jac @ [1.0, -1.0], [0.5, -0.5]) and np.abs(jac).max() == 0.25


# Every public function, called as its doctest calls it, then with one argument (or a list's first
# entry) replaced by a bad value: a ValueError naming an argument or an answer, nothing else.
VALID = {
    "visible_steps": dict(query=[1.0, 2.0, 0.0, 1.0], keys=sc.EXAMPLE_K, values=sc.EXAMPLE_V),
    "scaled_by": dict(query=[1.0, 2.0, 0.0, 1.0], keys=sc.EXAMPLE_K, values=sc.EXAMPLE_V, dim=16),
    "mix": dict(weights=[0.25, 0.75], values=[[0.0, 8.0], [4.0, 0.0]]),
    "softmax_jacobian": dict(weights=[0.25, 0.75]),
    "softmax_over_queries": dict(scores=[[0.0, 0.0], [0.0, 2.0]]),
    "naive_softmax": dict(values=[0.0, 1.0, 2.0]),
    "exp_limit": dict(largest=65504.0),
    "measure_scaling": dict(d=4, trials=3, n_keys=2, seed=1),
    "temperature_sweep": dict(scores=[0.5, 2.5, 2.0], values=sc.EXAMPLE_V, temperatures=[0.5, 4.0]),
}


def test_the_fuzz_covers_every_public_function():
    assert set(VALID) == set(sc.__all__) - {"self_test", "run_demo"}


@pytest.mark.parametrize("name", sorted(VALID))
def test_bad_input_gets_a_value_error_or_an_answer_never_another_exception(name):
    spoken = {"temperatures": "temperature"}
    assert fuzz_failures(getattr(sc, name), VALID[name], spoken=spoken, entries=True) == []


# -- the command -----------------------------------------------------------------------------------
def test_running_the_file_self_tests_and_prints_the_demo_as_json():
    result = subprocess.run([sys.executable, str(CODE)], capture_output=True, text=True, check=True)
    demo = json.loads(result.stdout)
    assert demo == json.loads(json.dumps(sc.run_demo()))
    _, out = numpy_attention(sc.EXAMPLE_Q, sc.EXAMPLE_K, sc.EXAMPLE_V)
    assert np.allclose(demo["查询0_输出"], out[0])
    assert result.stderr == ""


def test_run_demo_is_deterministic():
    assert sc.run_demo() == sc.run_demo()


def test_self_test_fails_when_the_max_is_not_subtracted(monkeypatch):
    monkeypatch.setattr(sc, "naive_softmax", att.softmax)  # a "naive" softmax that never overflows
    with pytest.raises(AssertionError, match="溢出"):
        sc.self_test()


def test_self_test_fails_when_softmax_runs_over_the_wrong_axis(monkeypatch):
    monkeypatch.setattr(sc, "softmax_over_queries", lambda s: [att.softmax(row) for row in s])
    with pytest.raises(AssertionError, match="错的轴"):
        sc.self_test()
