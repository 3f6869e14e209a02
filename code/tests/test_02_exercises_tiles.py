"""Tests of code/02_exercises_tiles.py: each answer against an independent count; bad input."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import fuzz_failures, public_functions

att = importlib.import_module("02_attention")
tl = importlib.import_module("02_tiles")
ex = importlib.import_module("02_exercises_tiles")


def test_the_online_trace_is_the_running_maximum_and_sum():
    a = ex.online_trace()
    scores = ex.ONLINE_SCORES
    for j, (m, total) in enumerate(a["trace"]):
        seen = scores[: (j + 1) * ex.ONLINE_BLOCK]
        assert m == max(seen)
        assert math.isclose(total, sum(math.exp(x - m) for x in seen), rel_tol=1e-12)
    assert a["factors"][0] == 0.0 and a["factors"][-1] == 1.0  # the last block holds no new maximum
    assert np.allclose(a["weights"], att.softmax(scores), atol=1e-12)


def test_the_cache_blocks_are_the_table_cut_into_blocks():
    a = ex.cache_blocks()
    table = np.array(att.visibility(ex.CACHE_NEW, ex.CACHE_PAST + ex.CACHE_NEW, past=ex.CACHE_PAST))
    for r, row in enumerate(a["kinds"]):
        for c, kind in enumerate(row):
            cells = table[
                r * ex.CACHE_BQ : (r + 1) * ex.CACHE_BQ, c * ex.CACHE_BK : (c + 1) * ex.CACHE_BK
            ]
            assert kind == ("full" if cells.all() else "partial" if cells.any() else "empty")
    assert (
        a["computed"] + a["counts"]["empty"] == a["blocks"] == len(a["kinds"]) * len(a["kinds"][0])
    )


def test_the_window_grows_by_a_constant_per_query_block_and_the_causal_mask_quadratically():
    rows = ex.window_growth()
    for r in rows:
        t = r["n"] // ex.WINDOW_BLOCK
        assert r["causal"] == t * (t + 1) // 2 and r["blocks"] == t * t
    # from the length on where the window is full, each query block adds w / b + 1 key blocks
    per_block = ex.WINDOW // ex.WINDOW_BLOCK + 1
    for a, b in zip(rows, rows[1:]):
        assert b["window"] - a["window"] == per_block * (b["n"] - a["n"]) // ex.WINDOW_BLOCK


@given(st.lists(st.integers(1, 5), min_size=1, max_size=4), st.integers(1, 4))
@settings(max_examples=25, deadline=None)
def test_the_guard_rows_are_the_rows_the_unguarded_tiles_make_nan(docs, block):
    a = ex.packed_guard(docs, block)
    n = len(a["doc"])
    q = [[float(i % 3), 1.0] for i in range(n)]
    v = [[float(i)] for i in range(n)]
    out, _ = tl.mistaken_tiled_attention(
        q, q, v, a["visible"], "no_guard", block_q=block, block_k=block
    )
    assert [i for i, row in enumerate(out) if math.isnan(row[0])] == a["rows"]


@pytest.mark.parametrize("name", sorted(public_functions(ex) - {"self_test", "answers"}))
def test_the_exercise_functions_answer_bad_input(name):
    args = {"guard_rows": (att.visibility(2, 2), 1, 1)}.get(name, ())
    assert fuzz_failures(getattr(ex, name), {}, args=args) == []
