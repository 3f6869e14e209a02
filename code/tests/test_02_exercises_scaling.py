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
    q, k, v = (np.asarray(x, dtype=float) for x in (ex.HAND_Q, ex.HAND_K, ex.HAND_V))
    s = ex.hand_row()
    scores = k @ q / np.sqrt(q.size)
    w = softmax(scores, 0)
    assert np.allclose(s["scaled"], scores) and np.allclose(s["weights"], w)
    assert np.allclose(s["output"], w @ v)
    assert len(set(s["dots"])) == len(s["dots"])  # the exercise has something to tell apart


def test_the_bug_table_is_what_numpy_computes():
    q, k, v = (np.asarray(x, dtype=float) for x in (ex.BUG_Q, ex.BUG_K, ex.BUG_V))
    d = q.shape[1]
    right = softmax(q @ k.T / np.sqrt(d), 1) @ v
    wide = softmax(q @ k.T / np.sqrt(ex.BUG_HEADS * d), 1) @ v
    axis = softmax(q @ k.T / np.sqrt(d), 0) @ v
    rows = {r["name"]: r for r in ex.bug_checks()}
    assert np.allclose(rows["正确实现"]["output"], right)
    assert np.allclose(rows["按模型宽度缩放"]["output"], wide)
    assert np.allclose(rows["沿查询做 softmax"]["output"], axis)
    # Each wrong implementation is caught by at least one check; the right one passes all three.
    checks = [key for _, key in ex.CHECKS]
    assert checks == ["rows_sum_to_one", "permutation", "matches"]
    assert all(rows["正确实现"][c] for c in checks)
    assert not all(rows["按模型宽度缩放"][c] for c in checks)
    assert not all(rows["沿查询做 softmax"][c] for c in checks)
    # The checks themselves, recomputed: rows of the wrong-axis weights do not sum to one.
    assert not np.allclose(softmax(q @ k.T / np.sqrt(d), 0).sum(axis=1), 1)
    assert sorted(ex.BUG_ORDER) == list(range(len(ex.BUG_K))) and ex.BUG_ORDER != sorted(ex.BUG_ORDER)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-1e300, 1e300), min_size=1, max_size=6))
def test_shifted_softmax_never_overflows_and_equals_numpy(xs):
    p = ex.shifted_softmax(xs)
    a = np.asarray(xs)
    assert np.isclose(sum(p), 1.0) and np.allclose(p, softmax(a, 0), atol=1e-12)


@pytest.mark.parametrize("bad", [None, "x", math.nan, math.inf, -math.inf, -1, 0, True, [], [[1.0], [1.0, 2.0]], 10**12,
                                 [math.nan, 1.0], [None], ["1"], [True, 1.0]])
def test_bad_input_gets_a_value_error_that_names_values(bad):
    with pytest.raises(ValueError, match="values"):
        ex.shifted_softmax(bad)


def test_self_test_fails_when_the_reference_solution_is_wrong(monkeypatch):
    monkeypatch.setattr(ex, "shifted_softmax", lambda xs: [1 / len(xs)] * len(xs))
    with pytest.raises(AssertionError, match="练习 3"):
        ex.self_test()


def test_running_the_file_prints_the_answers():
    run = subprocess.run([sys.executable, str(Path(ex.__file__))], capture_output=True, text=True, check=True)
    answers = json.loads(run.stdout)
    assert answers["练习2"] == {r["name"]: {name: r[key] for name, key in ex.CHECKS} for r in ex.bug_checks()}
    assert np.allclose(answers["练习3"], softmax(np.asarray(ex.CODE_SCORES), 0))
    assert run.stderr == ""
