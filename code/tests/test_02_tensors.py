"""Tests of code/02_tensors.py: the batched code equals the pure-Python chapter, every rule's table
equals its predicate, the K/V grouping, positions, dtype fills, and bad input (each condition).

The page's sentences and tables built from these results: tests/test_chapter_tensors.py.
"""

from __future__ import annotations

import importlib
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import fuzz_failures, public_functions

tn = importlib.import_module("02_tensors")
att = importlib.import_module("02_attention")
mh = importlib.import_module("02_multihead")
rope = importlib.import_module("02_rope")
CODE = Path(tn.__file__)

fast = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def batches(draw):
    """A random batch: left and right PAD (PAD queries and whole PAD rows too), a cache, grouped K/V
    heads, Q, K, V."""

    def ints(lo, hi):
        return draw(st.integers(lo, hi))

    batch = ints(1, 3)
    kv_heads = ints(1, 2)
    n_rep = ints(1, 3)
    n_query = ints(1, 3)
    past = ints(0, 3)
    d = draw(st.sampled_from([2, 4]))
    n_key = past + n_query
    rows = []
    for _ in range(batch):
        left = draw(st.integers(0, n_key))  # may reach into the new queries: fully masked rows
        right = draw(st.integers(0, n_key - left))
        rows.append([0] * left + [1] * (n_key - left - right) + [0] * right)
    mask = np.array(rows)
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    q = np.round(rng.uniform(-2, 2, (batch, kv_heads * n_rep, n_query, d)), 2)
    k, v = (np.round(rng.uniform(-2, 2, (batch, kv_heads, n_key, d)), 2) for _ in range(2))
    return {"attention_mask": mask, "past": past, "q": q, "k": k, "v": v}


# -- the batched code against the chapter's pure Python --------------------------------------------
@fast
@given(batches())
def test_every_row_of_the_batch_equals_the_pure_python_attention(x):
    q = x["q"]
    k = x["k"]
    v = x["v"]
    mask = x["attention_mask"]
    past = x["past"]
    batch, heads, n_query, _ = q.shape
    kv_heads = k.shape[1]
    rule = tn.and_rules(tn.causal, tn.padding(mask))
    visible = tn.visibility_batch(rule, batch, heads, n_query, k.shape[2])
    weights, outputs = tn.attention_batched(q, k, v, visible, empty_row="zero")
    for b, h in itertools.product(range(batch), range(heads)):
        g = mh.kv_group(h, heads, kv_heads)
        valid = [m == 1 for m in mask[b].tolist()]
        w, out = att.attention(
            q[b, h].tolist(),
            k[b, g].tolist(),
            v[b, g].tolist(),
            past=past,
            key_valid=valid,
            empty_row="zero",
        )
        assert np.allclose(weights[b, h], w, atol=1e-12)
        assert np.allclose(outputs[b, h], out, atol=1e-12)


@fast
@given(batches())
def test_the_whole_forward_with_rope_equals_the_earlier_pages(x):
    r = tn.forward(x)
    batch, heads, n_query, _ = x["q"].shape
    kv_heads = x["k"].shape[1]
    past = x["past"]
    for b, h in itertools.product(range(batch), range(heads)):
        valid = [m == 1 for m in x["attention_mask"][b].tolist()]
        positions = rope.padded_positions(valid)

        def real(xs, valid=valid):
            return [p for p, ok in zip(xs, valid) if ok]

        assert real(r["positions"][b].tolist()) == real(positions)
        g = mh.kv_group(h, heads, kv_heads)
        qr = rope.rotate_rows(x["q"][b, h].tolist(), positions[past:])
        kr = rope.rotate_rows(x["k"][b, g].tolist(), positions)
        _, out = att.attention(
            qr, kr, x["v"][b, g].tolist(), past=past, key_valid=valid, empty_row="zero"
        )
        content = valid[past:]  # a PAD query's output is dropped: its rotation is arbitrary
        assert np.allclose(r["outputs"][b, h][content], np.array(out)[content], atol=1e-12)


def test_the_float32_batch_is_computed_in_float32():
    x = tn.demo_inputs()
    w, out = tn.attention_batched(*(x[n].astype(np.float32) for n in "qkv"), True)
    assert w.dtype == out.dtype == np.float32


# -- every rule's table equals its predicate, cell by cell -----------------------------------------
DOCS = [[0, 0, 1, 1, 1, 2], [0, 1, 1, 1, 2, 2]]
PADS = [[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 0]]


def rule_cases():
    return {
        "causal": (tn.causal, lambda b, q, k: k <= q),
        "window": (tn.sliding_window(3), lambda b, q, k: q - 3 < k <= q),
        "document": (tn.document(DOCS), lambda b, q, k: DOCS[b][q] == DOCS[b][k]),
        "prefix": (tn.prefix_lm(2), lambda b, q, k: k < 2 or k <= q),
        "sinks": (tn.sinks(1, 2), lambda b, q, k: k <= q and (k < 1 or q - k < 2)),
        "padding": (tn.padding(PADS), lambda b, q, k: PADS[b][k] == 1),
        "and": (tn.and_rules(tn.causal, tn.sliding_window(2)), lambda b, q, k: q - 2 < k <= q),
        "or": (
            tn.or_rules(tn.sliding_window(1), lambda b, h, q, k: k < 1),
            lambda b, q, k: k == q or k < 1,
        ),
    }


@pytest.mark.parametrize("name", list(rule_cases()))
@pytest.mark.parametrize("n_query", [6, 2])
def test_every_rule_table_equals_its_predicate_cell_by_cell(name, n_query):
    rule, by_hand = rule_cases()[name]
    table = tn.visibility_batch(rule, 2, 3, n_query, 6)
    past = 6 - n_query
    for b, h, i, k in itertools.product(range(2), range(3), range(n_query), range(6)):
        assert table[b, h, i, k] == bool(by_hand(b, past + i, k)), (name, b, h, i, k)
        assert bool(rule(b, h, past + i, k)) == table[b, h, i, k]  # on plain integers too


@fast
@given(st.integers(1, 8), st.integers(1, 9), st.integers(0, 3))
def test_window_and_sinks_bound_what_a_row_and_the_cache_hold(n, w, n_sink):
    assert tn.visibility_batch(tn.sliding_window(w), 1, 1, n, n).sum(-1).max() == min(n, w)
    assert tn.visibility_batch(tn.sinks(n_sink, w), 1, 1, n, n).sum(-1).max() <= n_sink + w


def test_the_causal_table_with_a_cache_is_the_mask_page_table():
    for past, new in ((0, 3), (3, 2), (4, 1)):
        table = tn.visibility_batch(tn.causal, 1, 1, new, past + new)[0, 0]
        assert table.tolist() == att.visibility(new, past + new, past=past)


# -- K/V heads, positions, RoPE, fills -------------------------------------------------------------
@pytest.mark.parametrize("heads, kv_heads", [(4, 2), (6, 2), (4, 1), (3, 3)])
def test_repeat_kv_lets_query_head_h_read_kv_head_h_over_n_rep(heads, kv_heads):
    x = np.arange(kv_heads, dtype=float).reshape(1, kv_heads, 1, 1)
    got = tn.repeat_kv(x, heads // kv_heads)[0, :, 0, 0].tolist()
    assert got == [float(mh.kv_group(h, heads, kv_heads)) for h in range(heads)]


def test_positions_count_the_real_tokens_before_and_give_pad_zero():
    mask = [[0, 0, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]
    expected = [[0, 0, 0, 1, 2], [0, 1, 2, 0, 0], [0, 1, 2, 3, 4]]
    assert tn.positions_from_mask(mask).tolist() == expected


def test_rope_batched_equals_the_rope_page_row_by_row():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 3, 4, 6))
    pos = rng.integers(0, 50, size=(2, 4))
    got = tn.rope_batched(x, pos)
    for b, h, r in itertools.product(range(2), range(3), range(4)):
        one = rope.rotate(x[b, h, r].tolist(), int(pos[b, r]))
        assert np.allclose(got[b, h, r], one, atol=1e-13)


def test_additive_fills_finfo_min_and_two_of_them_overflow():
    visible = np.array([[True, False]])
    for dtype in tn.FLOAT_DTYPES:
        fill = tn.additive(visible, dtype)
        assert fill.dtype == np.dtype(dtype) and fill[0, 0] == 0
        assert fill[0, 1] == np.finfo(dtype).min
        with np.errstate(over="ignore"):
            assert np.isneginf((fill + fill)[0, 1])
    assert tn.additive(visible, np.float16).dtype == np.float16


def test_an_empty_row_is_named_or_zeroed():
    x = tn.demo_inputs()
    vis = np.ones((2, 4, 2, 6), dtype=bool)
    vis[1, 2, 1] = False
    with pytest.raises(ValueError, match="序列 1、头 2 的第 1 个查询行"):
        tn.attention_batched(x["q"], x["k"], x["v"], vis)
    w, out = tn.attention_batched(x["q"], x["k"], x["v"], vis, empty_row="zero")
    assert (w[1, 2, 1] == 0).all() and (out[1, 2, 1] == 0).all() and not np.isnan(out).any()


# -- bad input, the run, the exercises -------------------------------------------------------------
CALLS = {
    "causal": ((0, 0, 2, np.arange(3)), {}),
    "sliding_window": ((2,), {}),
    "prefix_lm": ((2,), {}),
    "sinks": ((1, 2), {}),
    "document": (([[0, 0, 1]],), {}),
    "padding": (([[0, 1, 1]],), {}),
    "and_rules": ((tn.causal,), {}),
    "or_rules": ((tn.causal,), {}),
    "visibility_batch": ((tn.causal, 1, 2, 2, 3), {}),
    "additive": ((np.array([True, False]), "float16"), {}),
    "repeat_kv": ((np.zeros((1, 2, 1, 1)), 2), {}),
    "positions_from_mask": (([[0, 1, 1]],), {}),
    "rope_batched": (([[[[1.0, 0.0]]]], [[1]]), {}),
    "attention_batched": (
        (np.zeros((1, 2, 1, 2)), np.zeros((1, 1, 2, 2)), np.ones((1, 1, 2, 2)), True),
        {},
    ),
    "demo_inputs": ((0,), {}),
    "forward": ((tn.demo_inputs(),), {}),
    "row_by_row_gap": ((tn.demo_inputs(),), {}),
}


def test_the_bad_input_calls_cover_every_public_function():
    assert set(CALLS) == public_functions(tn) - {"self_test", "run_demo"}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_bad_input_is_a_value_error_that_names_the_argument(name):
    args, kwargs = CALLS[name]
    spoken = {"args[0]": "rules"} if name.endswith("_rules") else None
    assert fuzz_failures(getattr(tn, name), kwargs, args=args, spoken=spoken) == []


def test_the_file_runs_alone_and_prints_json():
    run = subprocess.run(
        [sys.executable, str(CODE)], capture_output=True, text=True, check=True, cwd=CODE.parent
    )
    demo = json.loads(run.stdout)
    assert demo["位置编号"] == ["0 0 0 1 2 3", "0 1 2 3 4 5"]
    assert demo["规则_每行可见的Key数"]["滑动窗口_w3"] == "1 2 3 3 3 3"
    assert demo["整批与逐行的最大差_不含RoPE"] < 1e-12


# -- each condition of bad input, with its own message ---------------------------------------------
def test_scores_that_overflow_are_a_value_error_naming_q_and_k():
    big = np.full((1, 1, 1, 2), 1e200)
    with pytest.raises(ValueError, match="q 与 k 的点积在 float64 里溢出"):
        tn.attention_batched(big, big, np.ones((1, 1, 1, 2)), True)
    h = np.full((1, 1, 1, 2), 200.0, dtype=np.float16)  # 200 · 200 · 2 = 80,000 > 65,504
    with pytest.raises(ValueError, match="float16 里溢出"):
        tn.attention_batched(h, h, h, True)


@pytest.mark.parametrize(
    "rule, name",
    [
        (tn.padding([[1, 1, 1, 1]]), "attention_mask"),
        (tn.padding([[1, 1, 1]] * 3), "attention_mask"),
        (tn.document([[0, 0, 1, 1]]), "doc_ids"),
        (tn.and_rules(tn.causal, tn.document([[0, 1]])), "doc_ids"),
    ],
)
def test_a_table_that_does_not_match_batch_and_n_key_is_refused(rule, name):
    with pytest.raises(ValueError, match=f"rule 的 {name} 形状须为 \\(batch, n_key\\) \\(2, 3\\)"):
        tn.visibility_batch(rule, 2, 1, 3, 3)


@pytest.mark.parametrize(
    "x, positions, words",
    [
        (np.ones((1, 1, 2, 3)), [[0, 1]], "d 必须是偶数"),
        (np.ones((1, 1, 2, 2)), [[0, 1, 2]], "positions 的形状"),
        (np.ones((1, 1, 2, 2)), [[0, -1]], r"0 到 2\*\*53"),
        (np.ones((1, 1, 1, 2)), [[2**53 + 1]], r"0 到 2\*\*53"),
    ],
)
def test_rope_batched_names_each_condition_on_its_own(x, positions, words):
    with pytest.raises(ValueError, match=words):
        tn.rope_batched(x, positions)


def test_a_number_for_visible_is_asked_to_be_boolean_not_a_zero_dimensional_array():
    x = tn.demo_inputs()
    with pytest.raises(ValueError) as error:
        tn.attention_batched(x["q"], x["k"], x["v"], 5)
    assert "布尔数组" in str(error.value) and "0 维" not in str(error.value)


def test_forward_and_row_by_row_both_check_past():
    x = tn.demo_inputs()
    for function in (tn.forward, tn.row_by_row_gap):
        with pytest.raises(ValueError, match="past 必须等于 n_key − n_query = 4"):
            function({**x, "past": 3})
        with pytest.raises(ValueError, match="inputs 必须是含 attention_mask、past"):
            function({n: x[n] for n in ("attention_mask", "q", "k", "v")})


@pytest.mark.parametrize(
    "rule, reads_q",
    [
        (tn.causal, True),
        (tn.sliding_window(2), True),
        (tn.prefix_lm(1), True),
        (tn.sinks(1, 2), True),
        (tn.padding([[1, 1, 1]]), False),
        (tn.document([[0, 0, 1]]), True),
    ],
)
def test_every_predicate_refuses_float_indices(rule, reads_q):
    with pytest.raises(ValueError, match="kv_idx"):
        rule(0, 0, 2, np.arange(3.0))
    if reads_q:  # padding looks at the key only
        with pytest.raises(ValueError, match="q_idx"):
            rule(0, 0, 2.0, np.arange(3))


def test_a_nan_in_a_four_dimensional_input_is_named_by_its_index_not_printed_whole():
    x = tn.demo_inputs()
    k = x["k"].copy()
    k[0, 1, 3, 1] = np.nan
    with pytest.raises(ValueError) as error:
        tn.attention_batched(x["q"], k, x["v"], True)
    message = str(error.value)
    assert message == "k 必须是非空、全部有限的 4 维浮点数组：k[0, 1, 3, 1] 是 nan"
    with pytest.raises(ValueError, match=re.escape("attention_mask[0, 1] 是 2")):
        tn.positions_from_mask([[0, 2, 1]])
    with pytest.raises(ValueError, match=re.escape("收到形状 (4, 2, 2)")):
        tn.attention_batched(x["q"][0], x["k"], x["v"], True)
