"""The multi-head page's exercises: every answer against an independent computation (numpy, counts).

The solution sentences are the book side's (tests/test_chapter_multihead.py); here: the numbers, the
check table, bad input for every public function, and the file run on its own as a reader runs it.
"""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ex = importlib.import_module("02_exercises_multihead")
mh = importlib.import_module("02_multihead")


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True)


def numpy_heads(q, k, v, heads, kv_heads, variant="right"):
    """Per-head weights and the concatenated output: numpy reshape / transpose / repeat."""
    q, k, v = (np.asarray(a, dtype=float) for a in (q, k, v))
    n = q.shape[0]
    d = q.shape[1] // heads

    def split(m, count):  # (n, count·d) → (count, n, d)
        if variant == "reshape":
            return m.reshape(n, d, count).transpose(2, 0, 1)
        return m.reshape(n, count, d).transpose(1, 0, 2)

    qh = split(q, heads)
    kh = split(k, kv_heads)
    vh = split(v, kv_heads)
    if variant == "round_robin":
        kh = np.tile(kh, (heads // kv_heads, 1, 1))
        vh = np.tile(vh, (heads // kv_heads, 1, 1))
    else:
        kh = np.repeat(kh, heads // kv_heads, axis=0)
        vh = np.repeat(vh, heads // kv_heads, axis=0)
    scale = np.sqrt(d)
    causal = np.tril(np.ones((n, n), dtype=bool))
    scores = np.where(causal, qh @ kh.transpose(0, 2, 1) / scale, -np.inf)
    w = softmax_rows(scores)
    out = w @ vh  # (heads, n, d)
    if variant == "concat":
        out = out[::-1]  # each head right, placed in reverse order
    axes = (1, 2, 0) if variant == "reshape" else (1, 0, 2)
    merged = out.transpose(*axes).reshape(n, -1)
    return w, merged


def test_the_split_and_the_weight_row_equal_numpy():
    a = ex.split_and_row()
    q = np.asarray(ex.SPLIT_Q)
    k = np.asarray(ex.SPLIT_K)
    n = q.shape[0]
    d = q.shape[1] // ex.SPLIT_HEADS
    qh = q.reshape(n, ex.SPLIT_HEADS, d).transpose(1, 0, 2)
    assert np.array_equal(np.asarray(a["q_heads"]), qh)
    for h, cols in enumerate(a["columns"]):
        assert np.array_equal(q[:, cols], qh[h])
    kh = k.reshape(n, ex.SPLIT_HEADS, d).transpose(1, 0, 2)[ex.ROW_HEAD]
    scores = kh[: ex.ROW_POS + 1] @ qh[ex.ROW_HEAD, ex.ROW_POS]
    assert np.allclose(a["dots"], scores)
    assert np.allclose(a["weights"], softmax_rows(scores / np.sqrt(d)), atol=1e-12)
    assert np.isclose(sum(a["weights"]), 1.0)
    assert np.allclose(a["exps"], np.exp(scores / np.sqrt(d) - (scores / np.sqrt(d)).max()))
    ko = k.reshape(n, ex.SPLIT_HEADS, d).transpose(1, 0, 2)[ex.OTHER_HEAD]
    other = ko[: ex.ROW_POS + 1] @ qh[ex.OTHER_HEAD, ex.ROW_POS]
    assert np.allclose(a["other_weights"], softmax_rows(other / np.sqrt(d)), atol=1e-12)
    assert not np.allclose(a["other_weights"], a["weights"])  # same keys, other columns


@pytest.mark.parametrize("heads, kv_choices", [(8, [8, 4, 2, 1]), (6, [6, 3, 2, 1]), (4, [2])])
def test_the_group_table_and_the_cache_equal_numpy(heads, kv_choices):
    for row in ex.gqa_plan(heads, kv_choices, 4, 10):
        kv = row["kv_heads"]
        assert row["groups"] == np.repeat(np.arange(kv), heads // kv).tolist()
        assert row["cache"] == np.zeros((2, 10, kv, 4)).size  # K, V: tokens × kv_heads × head_dim
        assert row["fraction"] * kv == heads
    for kv in kv_choices:
        for g in range(kv):
            groups = np.repeat(np.arange(kv), heads // kv)
            assert ex.sharing_heads(heads, kv, g) == np.flatnonzero(groups == g).tolist()


@pytest.mark.parametrize("variant", list(ex.VARIANTS))
def test_each_written_variant_equals_its_numpy_twin(variant):
    w, out = ex.suspect_heads(ex.BUG_Q, ex.BUG_K, ex.BUG_V, ex.BUG_HEADS, ex.BUG_KV, variant)
    w_np, out_np = numpy_heads(ex.BUG_Q, ex.BUG_K, ex.BUG_V, ex.BUG_HEADS, ex.BUG_KV, variant)
    assert np.allclose(w, w_np, atol=1e-12) and np.allclose(out, out_np, atol=1e-12)


def numpy_checks(variant):
    q = np.asarray(ex.BUG_Q)
    k = np.asarray(ex.BUG_K)
    v = np.asarray(ex.BUG_V)
    heads = ex.BUG_HEADS
    kv = ex.BUG_KV
    d = q.shape[1] // heads
    w, out = numpy_heads(q, k, v, heads, kv, variant)
    bumped = q.copy()
    bumped[:, :d] += ex.BUG_DELTA
    w2, _ = numpy_heads(bumped, k, v, heads, kv, variant)
    only_head_0 = not np.any(~np.isclose(w[1:], w2[1:], atol=1e-12))

    def rep(m):
        return np.repeat(m.reshape(len(m), kv, d), heads // kv, axis=1).reshape(len(m), -1)

    _, repeated = numpy_heads(q, rep(k), rep(v), heads, heads, variant)
    _, one = numpy_heads(q, rep(k), rep(v), 1, 1, variant)
    _, single = numpy_heads(q, rep(k), rep(v), 1, 1, "right")
    w_ref, out_ref = numpy_heads(q, k, v, heads, kv, "right")
    return [
        only_head_0,
        np.allclose(out, repeated, atol=1e-12),
        np.allclose(one, single, atol=1e-12),
        np.allclose(out, out_ref, atol=1e-12) and np.allclose(w, w_ref, atol=1e-12),
    ]


def test_the_check_table_equals_the_checks_recomputed_with_numpy():
    checks = ex.bug_checks()
    for row in checks:
        assert row["passed"] == numpy_checks(row["key"]), row["name"]
    # The lesson of the exercise: a reversed concatenation slips past every self-consistency check,
    # and one head catches nothing.
    concat = next(r for r in checks if r["key"] == "concat")
    assert concat["passed"] == [True, True, True, False]
    assert all(r["passed"][2] for r in checks)


def test_the_reshape_split_equals_numpy_both_ways():
    a = ex.reshape_split()
    row = np.asarray([ex.RESHAPE_ROW])
    h = ex.RESHAPE_HEADS
    d = row.shape[1] // h
    assert np.array_equal(np.asarray(a["right"]), row.reshape(1, h, d)[0])
    wrong = row.reshape(1, d, h).transpose(0, 2, 1)[0]  # the head is the last axis
    assert np.array_equal(np.asarray(a["wrong"]), wrong)
    # Head 0's columns in the right split, bumped, as the wrong split reads them: which heads moved.
    bumped = row.copy()
    bumped[0, a["right_cols"][0]] += 1
    moved = np.any(bumped.reshape(1, d, h) != row.reshape(1, d, h), axis=(0, 1))
    assert a["touched"] == [int(c) for c in np.flatnonzero(moved)]
    assert ex.answers()["练习 2.4.3"] == a["wrong"]


def test_with_one_column_a_head_the_two_reshapes_agree():
    a = ex.reshape_split([1.0, 2.0, 3.0], 3)
    assert a["right"] == a["wrong"] and a["touched"] == [0]


@pytest.mark.parametrize(
    "d_model, heads, kv_heads, head_dim",
    [(8, 2, 2, 4), (8, 4, 1, 2), (3072, 16, 16, 256), (12, 6, 3, 5)],
)
def test_the_parameter_count_equals_the_weights_shapes(d_model, heads, kv_heads, head_dim):
    q_cols = heads * head_dim
    kv_cols = kv_heads * head_dim
    shapes = [(d_model, q_cols), (d_model, kv_cols), (d_model, kv_cols), (q_cols, d_model)]
    small = d_model < 100
    expected = sum(np.zeros(s).size for s in shapes) if small else sum(a * b for a, b in shapes)
    assert ex.attention_params(d_model, heads, kv_heads, head_dim) == expected
    counted = mh.projection_params(d_model, heads, head_dim, kv_heads)["total"]
    assert ex.attention_params(d_model, heads, kv_heads, head_dim) == counted


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: ex.split_and_row(heads=3), "heads=3"),
        (lambda: ex.split_and_row(head=2), "head 必须是 0 到 1"),
        (lambda: ex.split_and_row(pos=3), "pos 必须是 0 到 2"),
        (lambda: ex.split_and_row(k=[[1.0, 2.0]] * 3), "形状必须相同"),
        (lambda: ex.gqa_plan(8, [3]), "kv_heads=3 必须整除"),
        (lambda: ex.gqa_plan(8, []), "kv_choices"),
        (lambda: ex.sharing_heads(8, 2, 5), "group 必须是 0 到 1"),
        (lambda: ex.sharing_heads(10**12, 1, 0), "heads 不能超过"),
        (lambda: ex.gqa_plan(10**12, [1]), "heads 不能超过"),
        (lambda: ex.suspect_heads(ex.BUG_Q, ex.BUG_K, ex.BUG_V, 4, 2, []), "variant"),
        (lambda: ex.suspect_heads(ex.BUG_Q, ex.BUG_K, ex.BUG_V, 4, 2, "other"), "variant"),
        (lambda: ex.suspect_heads(ex.BUG_Q, ex.BUG_Q, ex.BUG_V, 4, 2), "k 与 v 必须各有"),
        (lambda: ex.bug_checks(delta=float("nan")), "delta"),
        (lambda: ex.reshape_split([1.0, 2.0, 3.0], 2), "不能被 heads=2 整除"),
        (lambda: ex.reshape_split([], 2), "row"),
        (lambda: ex.attention_params(8, 4, 3, 2), "kv_heads=3 必须整除"),
        (lambda: ex.attention_params(0, 4, 1, 2), "d_model"),
        (lambda: ex.attention_params(8, 4, 1, True), "head_dim"),
    ],
)
def test_bad_input_is_named(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_the_solution_listing_is_exactly_the_reference_function():
    # The page shows attention_params with :start-at: / :end-before: "def answers(": nothing else.
    import inspect

    source = inspect.getsource(ex)
    shown = source[source.index("def attention_params(") : source.index("def answers(")]
    assert shown.strip() == inspect.getsource(ex.attention_params).strip()


def test_the_self_test_catches_a_wrong_answer(monkeypatch):
    ex.self_test()
    monkeypatch.setattr(ex, "attention_params", lambda *args: 0)
    with pytest.raises(AssertionError, match="练习 4"):
        ex.self_test()


def test_the_file_runs_alone_beside_its_teaching_files(tmp_path):
    # What a reader does: the three downloads in one folder, the standard library only.
    code = Path(ex.__file__).parent
    for name in ("02_attention.py", "02_multihead.py", "02_exercises_multihead.py"):
        shutil.copy(code / name, tmp_path / name)
    run = subprocess.run(
        [sys.executable, "-E", "-s", "02_exercises_multihead.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(run.stdout) == json.loads(json.dumps(ex.answers(), ensure_ascii=False))


# -- the fuzz: every public function, one argument at a time replaced by something wrong -----------
def test_every_public_function_answers_bad_input_with_a_value_error():
    from test_02_multihead import fuzz

    failures = fuzz(
        ex,
        {
            "split_and_row": ((ex.SPLIT_Q, ex.SPLIT_K, 2, 1, 2), {}),
            "gqa_plan": ((8, [8, 2], 16, 100), {}),
            "sharing_heads": ((8, 2, 1), {}),
            "suspect_heads": ((ex.BUG_Q, ex.BUG_K, ex.BUG_V, 4, 2, "concat"), {}),
            "bug_checks": ((ex.BUG_Q, ex.BUG_K, ex.BUG_V, 4, 2, 1.0), {}),
            "reshape_split": ((ex.RESHAPE_ROW, 3), {}),
            "attention_params": ((8, 4, 1, 2), {}),
            "answers": ((), {}),
            "self_test": ((), {}),
        },
    )
    assert failures == []
