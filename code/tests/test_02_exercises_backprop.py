"""The backprop page's exercises: each answer against an independent computation (numpy), bad input.

The solution sentences the page builds from these answers: tests/test_chapter_backprop.py.
"""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys

import numpy as np
import pytest
from reference import fuzz_failures, public_functions

ex = importlib.import_module("02_exercises_backprop")
bp = importlib.import_module("02_backprop")


def numpy_backward(q, k, v, d_out, visible):
    """Forward and backward of masked attention written with numpy matrices (no teaching code)."""
    q, k, v, d_out = (np.asarray(a, dtype=float) for a in (q, k, v, d_out))
    visible = np.asarray(visible, dtype=bool)
    s = np.where(visible, q @ k.T / np.sqrt(q.shape[1]), -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    o = p @ v
    dv = p.T @ d_out
    dp = d_out @ v.T
    ds = p * (dp - (dp * p).sum(axis=1, keepdims=True))  # the softmax formula, not rowsum(dO ∘ O)
    scale = np.sqrt(q.shape[1])
    dq = ds @ k / scale
    dk = ds.T @ q / scale
    return {"p": p, "o": o, "dv": dv, "dp": dp, "ds": ds, "dq": dq, "dk": dk}


def test_the_jacobian_row_equals_numpy():
    a = ex.jacobian_row()
    s = np.asarray(ex.JAC_SCORES)
    p = np.exp(s - s.max())
    p /= p.sum()
    jac = np.diag(p) - np.outer(p, p)
    assert np.allclose(a["p"], p) and np.allclose(a["jacobian"], jac, atol=1e-15)
    assert np.allclose(a["row_sums"], 0.0, atol=1e-15)
    assert np.allclose(a["diagonal"], np.diag(jac))
    assert np.allclose(a["ds"], jac @ np.asarray(ex.JAC_D_WEIGHTS))
    assert np.allclose(a["ds_by_matrix"], a["ds"])
    assert abs(a["ds_sum"]) < 1e-15


def test_the_hand_steps_equal_numpy():
    a = ex.hand_steps()
    n = len(ex.HAND_Q)
    causal = np.tril(np.ones((n, n), dtype=bool))
    ref = numpy_backward(ex.HAND_Q, ex.HAND_K, ex.HAND_V, ex.HAND_D_OUT, causal)
    s = a["steps"]
    pairs = (("p", "weights"), ("o", "outputs"), *((g, g) for g in ("dv", "dp", "ds", "dq", "dk")))
    for key, mine in pairs:
        assert np.allclose(s[mine], ref[key], atol=1e-12), key
    assert np.isclose(sum(p * g for p, g in a["dv_terms"]), ref["dv"][0, 0])
    assert np.allclose([p * (dp - d) for p, dp, d in a["ds_terms"]], ref["ds"][ex.HAND_ROW])
    assert np.allclose(s["rowsum_do_o"], (np.asarray(ex.HAND_D_OUT) * ref["o"]).sum(axis=1))


def test_the_mask_zeros_equal_numpy_and_are_exact():
    a = ex.mask_zeros()
    new = len(ex.ZERO_Q)
    n_key = len(ex.ZERO_K)
    visible = np.tril(np.ones((new, n_key), dtype=bool), ex.ZERO_PAST) & np.asarray(ex.ZERO_VALID)
    assert np.array_equal(np.asarray(a["visible"]), visible)
    ref = numpy_backward(ex.ZERO_Q, ex.ZERO_K, ex.ZERO_V, ex.ZERO_D_OUT, visible)
    assert np.allclose(a["steps"]["dk"], ref["dk"], atol=1e-12)
    assert np.allclose(a["steps"]["dv"], ref["dv"], atol=1e-12)
    unread = np.flatnonzero(~visible.any(axis=0)).tolist()
    assert a["zero_keys"] == unread
    assert a["readers"] == [np.flatnonzero(visible[:, j]).tolist() for j in range(n_key)]
    for j in unread:  # exactly zero, not close to zero
        assert all(x == 0.0 for x in a["steps"]["dk"][j] + a["steps"]["dv"][j])
    # and every key that some query reads does get a gradient here
    assert all(np.any(ref["dv"][j] != 0) for j in range(n_key) if j not in unread)


def test_the_correction_term_is_zero_exactly_when_d_out_is_orthogonal_to_o():
    c = ex.correction_cases()
    q = ex.CORR_Q
    k = ex.CORR_K
    v = ex.CORR_V
    n = len(q)
    causal = np.tril(np.ones((n, n), dtype=bool))
    o = numpy_backward(q, k, v, ex.CORR_D_OUT, causal)["o"]
    assert np.allclose(c["outputs"], o, atol=1e-12)
    given, orthogonal = c["cases"].values()
    assert np.allclose(orthogonal["d_out"], np.stack([-o[:, 1], o[:, 0]], axis=1), atol=1e-12)
    for case in (given, orthogonal):
        ref = numpy_backward(q, k, v, case["d_out"], causal)
        d_out = np.asarray(case["d_out"])
        assert np.allclose(case["D"], (d_out * ref["o"]).sum(axis=1), atol=1e-12)
        # dropping D is dS = P ∘ dP: the gap to the right dQ, dK, dV, computed here with numpy
        ds = ref["p"] * ref["dp"]
        gap = max(
            np.abs(ds @ np.asarray(k) / np.sqrt(2) - ref["dq"]).max(),
            np.abs(ds.T @ np.asarray(q) / np.sqrt(2) - ref["dk"]).max(),
        )
        assert np.isclose(case["gap"], gap, atol=1e-12)
    assert orthogonal["D"] == [0.0] * n and orthogonal["gap"] == 0.0 and given["gap"] > 1e-3


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_rowsum_correction_equals_rowsum_dp_p(seed):
    rng = np.random.default_rng(seed)
    q, k, v, d_out = (rng.normal(size=(3, 2)) for _ in range(4))
    ref = numpy_backward(q, k, v, d_out, np.tril(np.ones((3, 3), dtype=bool)))
    got = ex.rowsum_correction(d_out.tolist(), ref["o"].tolist())
    assert np.allclose(got, (ref["dp"] * ref["p"]).sum(axis=1), atol=1e-12)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: ex.jacobian_row([1.0, 2.0], [1.0]), "d_weights"),
        (lambda: ex.jacobian_row([1.0, float("nan")], [1.0, 0.0]), "nan"),
        (lambda: ex.hand_steps(row=2), "row 必须是 0 到 1"),
        (lambda: ex.hand_steps(k=[[1.0, 0.0]]), "行数必须相同"),
        (lambda: ex.hand_steps(d_out=[[1.0, 2.0], [0.0, 1.0]]), "d_out 的形状"),
        (lambda: ex.mask_zeros(key_valid=[True, True]), "key_valid"),
        (lambda: ex.mask_zeros(past=-1), "past"),
        (lambda: ex.correction_cases(d_out=[[1.0]]), "d_out"),
        (lambda: ex.correction_cases(v=[[1.0], [2.0], [3.0]]), "v 必须恰有两列"),
        (lambda: ex.rowsum_correction([[1.0]], [[1.0, 2.0]]), "形状必须相同"),
        (lambda: ex.rowsum_correction([], [[1.0]]), "d_out"),
    ],
)
def test_bad_input_is_named(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_the_solution_listing_is_exactly_the_reference_function():
    # The page shows rowsum_correction by :start-at: / :end-before: "def answers(": nothing between.

    source = inspect.getsource(ex)
    shown = source[source.index("def rowsum_correction(") : source.index("def answers(")]
    assert shown.strip() == inspect.getsource(ex.rowsum_correction).strip()


def test_the_answers_are_json_and_say_when_dropping_d_changes_nothing():
    a = json.loads(json.dumps(ex.answers(), ensure_ascii=False))
    assert a["练习 2.6.3"] == [0]
    assert a["练习 2.6.4"]["与 O 逐行正交的 dO⊥"] == {"D": [0.0, 0.0, 0.0], "丢掉D后的最大差": 0.0}
    assert a["练习 2.6.4"]["给定的 dO"]["丢掉D后的最大差"] > 1e-3


def test_running_the_file_checks_itself_and_prints_the_answers():
    command = [sys.executable, "-E", "-s", ex.__file__]
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    assert json.loads(run.stdout) == json.loads(json.dumps(ex.answers()))
    assert run.stderr == ""


def test_the_self_test_fails_when_an_answer_is_wrong(monkeypatch):
    monkeypatch.setattr(ex, "mask_zeros", lambda: {"zero_keys": [0, 1]})
    with pytest.raises(AssertionError, match="PAD Key 0"):
        ex.self_test()


# -- fuzz: every public function, one argument at a time replaced by bad input ---------------------
VALID = {  # one valid call of each public function, every argument named
    "jacobian_row": dict(scores=ex.JAC_SCORES, d_weights=ex.JAC_D_WEIGHTS),
    "hand_steps": dict(q=ex.HAND_Q, k=ex.HAND_K, v=ex.HAND_V, d_out=ex.HAND_D_OUT, row=ex.HAND_ROW),
    "mask_zeros": dict(
        q=ex.ZERO_Q,
        k=ex.ZERO_K,
        v=ex.ZERO_V,
        d_out=ex.ZERO_D_OUT,
        past=ex.ZERO_PAST,
        key_valid=ex.ZERO_VALID,
    ),
    "correction_cases": dict(q=ex.CORR_Q, k=ex.CORR_K, v=ex.CORR_V, d_out=ex.CORR_D_OUT),
    "rowsum_correction": dict(d_out=[[1.0, -1.0]], out=[[2.0, 3.0]]),
    "answers": {},
    "self_test": {},
}


def test_bad_input_anywhere_is_a_value_error_naming_the_argument():
    assert public_functions(ex) == set(VALID), "every public function needs a valid call here"
    failures = (f for name, call in VALID.items() for f in fuzz_failures(getattr(ex, name), call))
    assert list(failures) == []
