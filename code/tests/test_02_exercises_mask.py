"""The mask page's exercises: every answer against an independent computation (numpy, or counting).

The solution sentences are the book's (tests/test_chapter_mask.py); here: the numbers, bad input,
and the file run the way a reader runs it, beside 02_attention.py alone.
"""

from __future__ import annotations

import importlib
import json
import math
import shutil
import subprocess
import sys

import numpy as np
import pytest
from reference import fuzz_failures

ex = importlib.import_module("02_exercises_mask")


def numpy_visibility(past: int, new: int, pad_front: int) -> np.ndarray:
    causal = np.tril(np.ones((new, past + new), dtype=bool), past)  # row i reads 0 … past + i
    causal[:, :pad_front] = False
    return causal


@pytest.mark.parametrize("past", [0, 1, 2, 4])
@pytest.mark.parametrize("new", [1, 3])
@pytest.mark.parametrize("pad_front", [0, 1, 3])
def test_the_table_and_the_counts_equal_numpy(past, new, pad_front):
    if pad_front > past + new:
        return
    expected = numpy_visibility(past, new, pad_front)
    answer = ex.pad_cache_table(past, new, pad_front)
    assert np.array_equal(np.asarray(answer["visible"]), expected)
    assert answer["counts"] == expected.sum(axis=1).tolist()
    assert ex.visible_counts(past, new, pad_front) == expected.sum(axis=1).tolist()
    assert answer["key_valid"] == [j >= pad_front for j in range(past + new)]


def test_the_softmax_steps_equal_numpy():
    s = ex.masked_softmax_steps()
    scores = np.where(ex.VISIBLE, ex.SCORES, -np.inf)
    exps = np.exp(scores - scores.max())
    weights = exps / exps.sum()
    assert np.allclose(s["weights"], weights, atol=1e-12)
    assert s["weights"][ex.VISIBLE.index(False)] == 0.0 == s["exps"][ex.VISIBLE.index(False)]
    assert np.isclose(s["total"], exps.sum()) and s["max"] == scores.max()


def numpy_attention(q, k, v, visible):
    q, k, v = (np.asarray(a, dtype=float) for a in (q, k, v))
    scores = np.where(visible, q @ k.T / np.sqrt(k.shape[1]), -np.inf)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ v


def test_only_the_recomputation_check_catches_the_row_index_offset():
    checks = ex.decoding_checks()
    past = ex.BUG_PAST
    new = ex.BUG_NEW
    n = past + new
    full = numpy_attention(
        ex.BUG_Q[:n], ex.BUG_K[:n], ex.BUG_V[:n], np.tril(np.ones((n, n), dtype=bool))
    )[past:]
    right, wrong = checks["rows"]
    assert np.allclose(right["output"], full) and right["matches_full"]
    assert not np.allclose(wrong["output"], full) and not wrong["matches_full"]
    assert right["no_leak"] and wrong["no_leak"]
    assert checks["caught_by"] == ["与整段重算一致"] and checks["passed"] == ["不泄漏"]
    lost = [
        np.flatnonzero(r & ~w).tolist()
        for r, w in zip(np.asarray(right["visible"]), np.asarray(wrong["visible"]))
    ]
    assert wrong["lost"] == lost and right["lost"] == [[], []]


def test_without_a_cache_both_ways_pass_both_checks():
    checks = ex.decoding_checks(0, 3)
    assert checks["caught_by"] == [] and checks["passed"] == list(ex.CHECKS)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: ex.visible_counts(-1, 2, 0), "past"),
        (lambda: ex.visible_counts(1, 0, 0), "new"),
        (lambda: ex.visible_counts(1, 1, 3), "pad_front"),
        (lambda: ex.front_padding(2, 3), "pad_front 不能超过 2（PAD 不会多于 n_key 个）"),
        (lambda: ex.masked_softmax_steps([1.0, 2.0], [True]), "visible 的长度"),
        (lambda: ex.masked_softmax_steps([1.0], [False]), "全部候选都被屏蔽"),
    ],
)
def test_bad_input_is_named(call, words):
    with pytest.raises(ValueError, match=words):
        call()


# -- bad input: every public function, one argument at a time --------------------------------------
CALLS = {
    ex.front_padding: {"n_key": 5, "pad_front": 1},
    ex.visible_counts: {"past": 2, "new": 3, "pad_front": 1},
    ex.pad_cache_table: {"past": 2, "new": 3, "pad_front": 1},
    ex.masked_softmax_steps: {"scores": [2.0, 0.0, 1.0], "visible": [True, True, False]},
    ex.decoding_checks: {"past": 2, "new": 2},
    ex.empty_row_in_dtype: {
        "q": [[0.5, 0.5], [0.5, -0.5], [1.0, 0.0]],
        "key_valid": [False, False, True],
        "dtype": "float16",
        "big": -1e9,
    },
}


@pytest.mark.parametrize("function", list(CALLS), ids=lambda f: f.__name__)
def test_every_bad_argument_gets_a_value_error_that_names_it(function):
    assert fuzz_failures(function, CALLS[function]) == []


def test_the_self_test_catches_a_wrong_formula(monkeypatch):
    ex.self_test()
    monkeypatch.setattr(
        ex, "visible_counts", lambda past, new, pad_front: [past + i + 1 for i in range(new)]
    )
    with pytest.raises(AssertionError, match="公式"):
        ex.self_test()


def test_it_runs_beside_02_attention_alone(tmp_path):
    for name in ("02_attention.py", "02_exercises_mask.py"):
        shutil.copy(ex.att.__file__ if name == "02_attention.py" else ex.__file__, tmp_path / name)
    run = subprocess.run(
        [sys.executable, "-E", "-s", "02_exercises_mask.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(run.stdout) == json.loads(json.dumps(ex.answers(), ensure_ascii=False))
    assert run.stderr == ""


# -- the mask page's dtype experiment (numpy) ------------------------------------------------------
@pytest.mark.parametrize("dtype", ex.DTYPES)
def test_the_empty_row_in_each_dtype_is_what_numpy_computes(dtype):
    q = [[0.5, 0.5], [0.5, -0.5], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    valid = [False, False, True, True, True]
    facts = ex.empty_row_in_dtype(q, valid, dtype)
    t = np.dtype(dtype)
    with np.errstate(over="ignore"):
        big_is_inf = bool(np.isinf(np.asarray(-1e9).astype(t)))
        twice = np.finfo(t).min + np.finfo(t).min
    assert facts["row"] == 0 and facts["min"] == float(np.finfo(t).min)
    assert facts["big_is_inf"] == big_is_inf == (dtype == "float16")
    big = facts["weights"]["big"]
    # −1e9 is −∞ in float16 only: there the row is NaN, elsewhere it is spread evenly
    assert all(math.isnan(w) for w in big) == big_is_inf
    assert (len(set(big)) == 1 and not math.isnan(big[0])) == (not big_is_inf)
    weights_min = facts["weights"]["min"]
    assert not any(math.isnan(w) for w in weights_min) and len(set(weights_min)) == 1
    assert bool(np.isinf(twice)) and math.isinf(facts["twice"])
    # the two masks: Key 1 is PAD and after position 0, so it is the doubled cell, with weight 0
    assert facts["doubled"] == [1] and facts["weights"]["two_masks"][1] == 0.0
    assert all(math.isnan(w) for w in facts["row_twice"])
    # −1e9 added to the scores: they stay apart in float64 and round together in float32
    added = facts["added"]
    if dtype == "float64":
        assert len(set(added)) > 1 and math.isclose(sum(added), 1.0)
    if dtype == "float32":
        assert len(set(added)) == 1


def test_the_dtype_experiment_is_the_one_function_that_imports_numpy(tmp_path):
    """The file runs without numpy (its JSON needs none); the experiment imports it when called."""
    from pathlib import Path

    code = Path(ex.__file__).parent
    for name in ("02_attention.py", "02_exercises_mask.py"):
        (tmp_path / name).write_bytes((code / name).read_bytes())
    run = [sys.executable, "-E", "-S"]
    alone = subprocess.run([*run, "02_exercises_mask.py"], cwd=tmp_path, capture_output=True)
    assert alone.returncode == 0, alone.stderr
    call = "import importlib; m = importlib.import_module('02_exercises_mask')\n"
    call += "m.empty_row_in_dtype([[1.0]], [False])"
    done = subprocess.run([*run, "-c", call], cwd=tmp_path, capture_output=True, text=True)
    assert "No module named 'numpy'" in done.stderr
