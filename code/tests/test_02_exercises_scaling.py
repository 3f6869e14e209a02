"""Tests of code/02_exercises_scaling.py: every answer of the scaling page's 练习 against numpy."""

from __future__ import annotations

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

ex = importlib.import_module("02_exercises_scaling")


def softmax(s, axis):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_the_hand_row_is_numpys():
    q, k, g = (np.asarray(x, dtype=float) for x in (ex.HAND_Q, ex.HAND_K, ex.HAND_G))
    s = ex.hand_row()
    scores = k @ q / np.sqrt(q.size)
    w = softmax(scores, 0)
    jac = np.diag(w) - np.outer(w, w)
    assert np.allclose(s["scaled"], scores) and np.allclose(s["weights"], w)
    assert np.allclose(s["jacobian"], jac) and np.allclose(s["jg"], jac @ g)
    assert np.isclose(s["peak"], np.abs(jac).max()) and s["peak"] <= 0.25
    # The point of the exercise: J·g goes past the largest entry of J.
    assert np.abs(jac @ g).max() > s["peak"]


@pytest.mark.parametrize(
    "args",
    [
        ([1.0, 2.0], [[1.0, 0.0]], [1.0, -1.0]),
        ([1.0], [[1.0]], [math.nan]),
        ([1.0], [[1.0, 2.0]], [1.0]),
    ],
)
def test_hand_row_refuses_bad_input(args):
    with pytest.raises(ValueError):
        ex.hand_row(*args)


def test_the_copied_row_is_what_numpy_computes():
    q = np.asarray(ex.GROW_Q)
    k = np.asarray(ex.GROW_K)
    c = ex.COPIES
    q_big = np.tile(q, c)
    k_big = np.tile(k, (1, c))
    r = ex.copied_row()
    assert r["d_big"] == c * r["d"] == q_big.size
    assert np.allclose(r["dots_big"], k_big @ q_big) and np.allclose(r["dots_big"], c * (k @ q))
    assert np.allclose(r["weights"], softmax(k @ q / np.sqrt(q.size), 0))
    assert np.allclose(r["weights_big"], softmax(k_big @ q_big / np.sqrt(q_big.size), 0))
    assert np.allclose(r["weights_raw"], softmax(k_big @ q_big, 0))
    # Both are the first row at another temperature: T = 1/√c scaled, T = 1/(c √d) unscaled.
    scaled = k @ q / np.sqrt(q.size)
    assert np.allclose(r["weights_big"], softmax(scaled / r["temperature_big"], 0))
    assert np.allclose(r["weights_raw"], softmax(scaled / r["temperature_raw"], 0))
    assert max(r["weights"]) < max(r["weights_big"]) < max(r["weights_raw"])  # something to show


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(-4, 4), min_size=1, max_size=3), st.integers(1, 5), st.integers(1, 6))
def test_copying_is_a_temperature_on_any_row(q, n_keys, copies):
    k = [[float((i + j) % 3 - 1) for j in range(len(q))] for i in range(n_keys)]
    r = ex.copied_row([float(x) for x in q], k, copies)
    scaled = np.asarray(r["scaled"])
    assert np.allclose(r["weights_big"], softmax(scaled * np.sqrt(copies), 0), atol=1e-12)


@pytest.mark.parametrize(
    "args",
    [([1.0, 2.0], [[1.0]], 2), ([1.0], [[1.0]], 0), ([1.0], [[1.0]], True), ([], [[1.0]], 2)],
)
def test_copied_row_refuses_bad_input(args):
    with pytest.raises(ValueError):
        ex.copied_row(*args)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-1e300, 1e300), min_size=1, max_size=6))
def test_shifted_softmax_never_overflows_and_equals_numpy(xs):
    p = ex.shifted_softmax(xs)
    a = np.asarray(xs)
    assert np.isclose(sum(p), 1.0) and np.allclose(p, softmax(a, 0), atol=1e-12)


@pytest.mark.parametrize(
    "bad",
    [
        None,
        "x",
        math.nan,
        math.inf,
        -math.inf,
        -1,
        0,
        True,
        [],
        [[1.0], [1.0, 2.0]],
        10**12,
        [math.nan, 1.0],
        [None],
        ["1"],
        [True, 1.0],
        [10**400, 1],  # an int no float holds: math.isfinite alone raised OverflowError
        [1, -(10**5000)],  # too long even for repr()
    ],
)
def test_bad_input_gets_a_value_error_that_names_values(bad):
    with pytest.raises(ValueError, match="values"):
        ex.shifted_softmax(bad)


def test_huge_ints_that_floats_hold_do_not_overflow():
    # x − m of two ints was an int too large for exp; converted to float first, it is −inf, exp 0.
    assert ex.shifted_softmax([10**308, -(10**308)]) == [1.0, 0.0]
    assert ex.shifted_softmax([10**308, 1.0]) == [1.0, 0.0]


def test_self_test_fails_when_the_reference_solution_is_wrong(monkeypatch):
    monkeypatch.setattr(ex, "shifted_softmax", lambda xs: [1 / len(xs)] * len(xs))
    with pytest.raises(AssertionError, match="不会溢出的 softmax"):
        ex.self_test()


def test_running_the_file_prints_the_answers():
    run = subprocess.run(
        [sys.executable, str(Path(ex.__file__))], capture_output=True, text=True, check=True
    )
    answers = json.loads(run.stdout)
    keys = ("weights", "jacobian", "jg")
    assert answers["练习 2.3.1"] == {key: ex.hand_row()[key] for key in keys}
    assert answers["练习 2.3.2"] == {
        key: ex.copied_row()[key] for key in ("weights", "weights_big", "weights_raw")
    }
    assert np.allclose(answers["练习 2.3.3"], softmax(np.asarray(ex.CODE_SCORES), 0))
    assert run.stderr == ""
