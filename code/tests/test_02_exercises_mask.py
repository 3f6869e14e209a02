"""The mask page's exercises: every answer against an independent computation (numpy, or counting)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

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
    for sentence, row in zip(answer["sentences"], expected):
        readable = [j for j, ok in enumerate(row) if ok]
        said = sentence.split("可读 ", 1)[1].split("；")[0].rstrip("。") if "可读 " in sentence else ""
        if readable:  # the sentence names the readable keys (as a list or a range)
            assert said in {"、".join(f"Key {j}" for j in readable), f"Key {readable[0]}–{readable[-1]}"}, sentence


def test_the_softmax_steps_equal_numpy():
    s = ex.masked_softmax_steps()
    scores = np.where(ex.VISIBLE, ex.SCORES, -np.inf) / ex.TEMPERATURE
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    assert np.allclose(s["weights"], weights, atol=1e-12)
    assert s["weights"][ex.VISIBLE.index(False)] == 0.0
    assert np.isclose(s["total"], np.exp(scores - scores.max()).sum())


def numpy_attention(q, k, v, visible):
    q, k, v = (np.asarray(a, dtype=float) for a in (q, k, v))
    scores = np.where(visible, q @ k.T / np.sqrt(k.shape[1]), -np.inf)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ v


def test_only_the_recomputation_check_catches_the_row_index_offset():
    checks = ex.decoding_checks()
    past, new = ex.BUG_PAST, ex.BUG_NEW
    n = past + new
    full = numpy_attention(ex.BUG_Q[:n], ex.BUG_K[:n], ex.BUG_V[:n], np.tril(np.ones((n, n), dtype=bool)))[past:]
    right, wrong = checks["rows"]
    assert np.allclose(right["output"], full) and right["matches_full"]
    assert not np.allclose(wrong["output"], full) and not wrong["matches_full"]
    assert right["no_leak"] and wrong["no_leak"]
    assert checks["caught_by"] == ["与整段重算一致"]


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: ex.visible_counts(-1, 2, 0), "past"),
        (lambda: ex.visible_counts(1, 0, 0), "new"),
        (lambda: ex.visible_counts(1, 1, 3), "pad_front"),
        (lambda: ex.front_padding(2, 3), "超过了 Key 总数"),
        (lambda: ex.masked_softmax_steps([1.0, 2.0], [True], 1.0), "长度必须相同"),
        (lambda: ex.masked_softmax_steps([1.0], [True], 0.0), "temperature"),
        (lambda: ex.masked_softmax_steps([1.0], [False], 1.0), "全部候选都被屏蔽"),
    ],
)
def test_bad_input_is_named(call, words):
    with pytest.raises(ValueError, match=words):
        call()
