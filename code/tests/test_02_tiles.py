"""Tests of code/02_tiles.py: the online softmax against the one-pass softmax, the tiled
attention against the one-pass attention on random shapes, block sizes, caches and every rule of
the tensors page, the block counts against a brute-force count, the deliberately wrong versions
caught, the numpy tiles, and bad input.

The page's sentences and tables built from these results: tests/test_chapter_tiles.py. Nothing
here checks how fast this machine is.
"""

from __future__ import annotations

import importlib
import itertools
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import fuzz_failures, numpy_attention, public_functions, reals

tl = importlib.import_module("02_tiles")
att = importlib.import_module("02_attention")
tn = importlib.import_module("02_tensors")
CODE = Path(tl.__file__)

fast = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def brute_kinds(visible, block_q: int, block_k: int) -> list[list[str]]:
    """An independent reference: numpy slices of the table, each block's cells counted."""
    table = np.asarray(visible, dtype=bool)
    rows = range(0, table.shape[0], block_q)
    cols = range(0, table.shape[1], block_k)
    out = []
    for a in rows:
        line = []
        for b in cols:
            cells = table[a : a + block_q, b : b + block_k]
            line.append("full" if cells.all() else "empty" if not cells.any() else "partial")
        out.append(line)
    return out


def tally(kinds) -> dict:
    flat = [x for row in kinds for x in row]
    return {kind: flat.count(kind) for kind in tl.KINDS}


# -- the online softmax ----------------------------------------------------------------------------
@st.composite
def score_rows(draw):
    """A row of finite scores, some replaced by −∞ (never all), and a block size."""
    n = draw(st.integers(1, 12))
    scores = draw(st.lists(reals(30.0), min_size=n, max_size=n))
    masked = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    keep = draw(st.integers(0, n - 1))
    row = [
        -math.inf if hide and j != keep else x for j, (x, hide) in enumerate(zip(scores, masked))
    ]
    return row, draw(st.integers(1, n + 2))


@fast
@given(score_rows())
def test_the_online_softmax_is_the_one_pass_softmax(case):
    scores, block = case
    r = tl.online_softmax(scores, block)
    assert att.max_abs_diff([r["weights"]], [att.softmax(scores)]) <= 1e-12
    assert len(r["trace"]) == math.ceil(len(scores) / block)
    maxima = [m for m, _ in r["trace"]]
    assert maxima == sorted(maxima) and maxima[-1] == max(scores)  # m only grows, ends at the max
    top = max(scores)
    assert math.isclose(r["trace"][-1][1], sum(math.exp(x - top) for x in scores), rel_tol=1e-12)
    for j, (m, total) in enumerate(r["trace"]):  # after each block: l is the sum so far, based on m
        seen = scores[: (j + 1) * block]
        expected = sum(math.exp(x - m) for x in seen) if m > -math.inf else 0.0  # nothing yet
        assert math.isclose(total, expected, rel_tol=1e-12)


@fast
@given(score_rows(), st.integers(1, 3), st.data())
def test_one_row_through_the_blocks_is_one_row_of_attention(case, d_v, data):
    scores, block = case
    v = data.draw(
        st.lists(
            st.lists(reals(10.0), min_size=d_v, max_size=d_v),
            min_size=len(scores),
            max_size=len(scores),
        )
    )
    r = tl.online_row(scores, v, block)
    weights = att.softmax(scores)
    expected = [sum(w * row[c] for w, row in zip(weights, v)) for c in range(d_v)]
    assert att.max_abs_diff([r["output"]], [expected]) <= 1e-9
    top = max(scores)
    lse = top + math.log(sum(math.exp(x - top) for x in scores))
    assert math.isclose(r["logsumexp"], lse, rel_tol=1e-12, abs_tol=1e-12)


def test_a_fully_masked_row_is_refused_or_gives_zero_and_minus_infinity():
    with pytest.raises(ValueError, match="没有任何可见的 Key"):
        tl.online_row([-math.inf, -math.inf], [[1.0], [2.0]], 1)
    r = tl.online_row([-math.inf, -math.inf], [[1.0], [2.0]], 1, empty_row="zero")
    assert r["output"] == [0.0] and r["logsumexp"] == -math.inf
    assert [(m, total) for m, total, _ in r["trace"]] == [(-math.inf, 0.0)] * 2  # no NaN anywhere
    with pytest.raises(ValueError, match="全部候选都被屏蔽"):
        tl.online_softmax([-math.inf], 1)


def test_a_first_block_all_minus_infinity_needs_the_guard():
    # The row's first block is masked, its second is not: the guard keeps the first step finite.
    r = tl.online_row([-math.inf, -math.inf, 1.0, 2.0], [[5.0], [6.0], [1.0], [3.0]], 2)
    assert r["trace"][0][:2] == (-math.inf, 0.0)
    assert math.isclose(r["output"][0], (math.exp(-1) * 1 + 3) / (math.exp(-1) + 1))


# -- the tiled attention against the one-pass attention --------------------------------------------
DOCS = [[0, 0, 1, 1, 1, 2, 2, 2]]


def rule_tables(n_query: int, n_key: int, pad) -> dict:
    """Every rule of the tensors page (and some combinations) as a Python table, queries last."""
    rules = {
        "causal": tn.causal,
        "window": tn.sliding_window(3),
        "document": tn.and_rules(tn.causal, tn.document([DOCS[0][:n_key]])),
        "prefix": tn.prefix_lm(2),
        "sinks": tn.sinks(1, 2),
        "padding": tn.padding([pad]),
        "causal_padding": tn.and_rules(tn.causal, tn.padding([pad])),
        "window_padding": tn.and_rules(tn.sliding_window(2), tn.padding([pad])),
    }
    return {
        name: tn.visibility_batch(rule, 1, 1, n_query, n_key)[0, 0].tolist()
        for name, rule in rules.items()
    }


@st.composite
def tiled_problems(draw):
    """Random Q, K, V, a cache, a rule of the tensors page, blocks that may or may not divide."""
    n_key = draw(st.integers(1, 8))
    n_query = draw(st.integers(1, n_key))
    d = draw(st.integers(1, 3))
    d_v = draw(st.integers(1, 2))
    cell = reals(5.0)

    def matrix(rows, cols):
        return draw(
            st.lists(st.lists(cell, min_size=cols, max_size=cols), min_size=rows, max_size=rows)
        )

    pad = draw(st.lists(st.booleans(), min_size=n_key, max_size=n_key))
    pad = [int(x) for x in pad]
    name = draw(st.sampled_from(sorted(rule_tables(n_query, n_key, pad))))
    visible = rule_tables(n_query, n_key, pad)[name]
    blocks = (draw(st.integers(1, n_query + 1)), draw(st.integers(1, n_key + 1)))
    return matrix(n_query, d), matrix(n_key, d), matrix(n_key, d_v), visible, blocks, name


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiled_problems())
def test_tiled_attention_equals_the_one_pass_attention(problem):
    q, k, v, visible, (block_q, block_k), _ = problem
    _, expected = att.masked_attention(q, k, v, visible, empty_row="zero")
    got, counts = tl.tiled_attention(
        q, k, v, visible, block_q=block_q, block_k=block_k, empty_row="zero"
    )
    assert not any(math.isnan(x) for row in got for x in row)  # a fully masked row: 0, never NaN
    assert att.max_abs_diff(got, expected) <= 1e-12 * max(1.0, max(abs(x) for r in v for x in r))
    assert counts == tally(brute_kinds(visible, block_q, block_k))
    with np.errstate(invalid="ignore"):  # the reference's fully masked rows are NaN: left out
        _, reference = numpy_attention(q, k, v, visible)
    content = [i for i, row in enumerate(visible) if any(row)]
    assert np.allclose(np.asarray(got)[content], reference[content], atol=1e-9)


@fast
@given(tiled_problems())
def test_block_kinds_are_the_brute_force_classification(problem):
    _, _, _, visible, (block_q, block_k), _ = problem
    assert tl.block_kinds(visible, block_q, block_k) == brute_kinds(visible, block_q, block_k)


def test_a_fully_masked_row_is_named_or_gives_zero():
    visible = att.visibility(3, 3, key_valid=[False, True, True])  # row 0 reads nothing
    q = k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    v = [[10.0], [20.0], [30.0]]
    with pytest.raises(ValueError, match="第 0 个查询行没有任何可见的 Key"):
        tl.tiled_attention(q, k, v, visible, block_q=2, block_k=2)
    out, _ = tl.tiled_attention(q, k, v, visible, block_q=2, block_k=2, empty_row="zero")
    _, expected = att.masked_attention(q, k, v, visible, empty_row="zero")
    assert out[0] == [0.0] and att.max_abs_diff(out, expected) < 1e-12


def test_the_tiled_code_leaks_nothing_from_the_future():
    q = tl.DEMO_Q
    k = tl.DEMO_K
    v = tl.DEMO_V
    past = tl.DEMO_PAST
    visible = att.visibility(len(q), len(k), past=past)
    out, _ = tl.tiled_attention(q, k, v, visible, block_q=2, block_k=2)
    for i in range(len(q)):  # the V rows after row i's position replaced by a poison value
        poisoned = [row if j <= past + i else [1e6] for j, row in enumerate(v)]
        again, _ = tl.tiled_attention(q, k, poisoned, visible, block_q=2, block_k=2)
        assert again[i] == out[i]


def test_empty_blocks_are_never_read():
    # K and V rows that only empty blocks hold may be anything: the tiled code never touches them.
    q = tl.DEMO_Q
    k = tl.DEMO_K
    v = tl.DEMO_V
    visible = att.visibility(len(q), len(k), past=tl.DEMO_PAST)
    kinds = tl.block_kinds(visible, 2, 2)
    assert kinds[0][2] == "empty"  # query block 0 never reads keys 4 and 5 …
    out, counts = tl.tiled_attention(q[:2], k, v, visible[:2], block_q=2, block_k=2)
    assert counts == {"full": 1, "partial": 1, "empty": 1}
    _, expected = att.masked_attention(q[:2], k, v, visible[:2])
    assert att.max_abs_diff(out, expected) < 1e-12


# -- counting blocks without the table -------------------------------------------------------------
def interval_table(n_query: int, n_key: int, window, doc_lengths) -> list[list[bool]]:
    """The table block_counts counts, built from the tensors page's rules (queries last)."""
    rule = tn.causal
    if window is not None:
        rule = tn.and_rules(rule, tn.sliding_window(window))
    if doc_lengths is not None:
        ids = [d for d, n in enumerate(doc_lengths) for _ in range(n)]
        rule = tn.and_rules(rule, tn.document([ids]))
    return tn.visibility_batch(rule, 1, 1, n_query, n_key)[0, 0].tolist()


@st.composite
def count_problems(draw):
    n_key = draw(st.integers(1, 24))
    n_query = draw(st.integers(1, n_key))
    window = draw(st.none() | st.integers(1, n_key + 2))
    doc_lengths = None
    if draw(st.booleans()):
        cuts = sorted(draw(st.sets(st.integers(1, n_key - 1), max_size=4))) if n_key > 1 else []
        edges = [0, *cuts, n_key]
        doc_lengths = [b - a for a, b in zip(edges, edges[1:])]
    blocks = (draw(st.integers(1, n_query + 2)), draw(st.integers(1, n_key + 2)))
    return n_query, n_key, window, doc_lengths, blocks


@settings(max_examples=25, deadline=None)
@given(count_problems())
def test_block_counts_equal_the_blocks_of_the_table(problem):
    n_query, n_key, window, doc_lengths, (block_q, block_k) = problem
    table = interval_table(n_query, n_key, window, doc_lengths)
    expected = tally(brute_kinds(table, block_q, block_k))
    got = tl.block_counts(n_query, n_key, block_q, block_k, window=window, doc_lengths=doc_lengths)
    assert got == expected


@given(st.integers(1, 40), st.integers(1, 16))
@settings(max_examples=25, deadline=None)
def test_a_causal_mask_computes_t_t_plus_1_over_2_of_t_squared_blocks(t, b):
    counts = tl.block_counts(t * b, t * b, b, b)
    assert counts["full"] + counts["partial"] == t * (t + 1) // 2
    assert counts["empty"] == t * (t - 1) // 2
    # the diagonal's T blocks are partial; with b = 1 a diagonal block is one allowed cell: full
    assert counts["partial"] == (t if b > 1 else 0)


@given(st.integers(1, 6), st.integers(1, 8))
@settings(max_examples=30, deadline=None)
def test_a_sliding_window_grows_linearly(w_blocks, t):
    # a window of w_blocks blocks: at most w_blocks + 1 key blocks per query block, at any length
    b = 4
    counts = tl.block_counts(8 * t * b, 8 * t * b, b, b, window=w_blocks * b)
    computed = counts["full"] + counts["partial"]
    assert computed <= 8 * t * (w_blocks + 1)


def test_the_flexattention_example_of_1024_positions():
    assert tl.block_counts(1024, 1024, 128, 128) == {"full": 28, "partial": 8, "empty": 28}


# -- the deliberately wrong versions ---------------------------------------------------------------
def wrong_and_right(mistake: str, q, k, v, visible, blocks=(2, 2)):
    bq, bk = blocks
    wrong, _ = tl.mistaken_tiled_attention(q, k, v, visible, mistake, block_q=bq, block_k=bk)
    right, _ = tl.tiled_attention(q, k, v, visible, block_q=bq, block_k=bk, empty_row="zero")
    return wrong, right


def differs(a, b) -> bool:
    return any(math.isnan(x) or abs(x - y) > 1e-9 for ra, rb in zip(a, b) for x, y in zip(ra, rb))


@pytest.mark.parametrize("mistake", list(tl.MISTAKES))
def test_each_mistake_is_caught_by_comparing_with_the_one_pass_attention(mistake):
    q = tl.DEMO_Q
    k = tl.DEMO_K
    v = tl.DEMO_V
    if mistake == "no_guard":  # a row whose first block read is all −∞: a window of 2
        visible = tn.visibility_batch(tn.sliding_window(2), 1, 1, 4, 6)[0, 0].tolist()
        wrong, right = wrong_and_right(mistake, q, k, v, visible, (2, 2))
        assert any(math.isnan(x) for row in wrong for x in row)
    else:
        visible = att.visibility(4, 6, past=tl.DEMO_PAST)
        wrong, right = wrong_and_right(mistake, q, k, v, visible)
    _, one_pass = att.masked_attention(q, k, v, visible)
    assert att.max_abs_diff(right, one_pass) < 1e-12
    assert differs(wrong, one_pass)


def test_the_row_index_mistake_shows_only_with_a_cache():
    q = k = tl.DEMO_K
    v = tl.DEMO_V
    visible = att.visibility(6, 6)  # no cache: the row index is the position
    wrong, right = wrong_and_right("row_index", q, k, v, visible)
    assert not differs(wrong, right)


def test_the_missing_guard_shows_only_where_a_block_is_all_minus_infinity_first():
    q = tl.DEMO_Q
    k = tl.DEMO_K
    v = tl.DEMO_V
    visible = att.visibility(4, 6, past=tl.DEMO_PAST)  # causal: key 0 is in every row's first block
    wrong, right = wrong_and_right("no_guard", q, k, v, visible)
    assert not differs(wrong, right)


def test_the_missing_rescale_shows_only_where_the_maximum_grows():
    # scores that fall block after block: the maximum never changes, the factor is 1 anyway
    q = [[1.0]]
    k = [[3.0], [2.0], [1.0], [0.0]]
    v = [[1.0], [2.0], [3.0], [4.0]]
    visible = [[True] * 4]
    wrong, right = wrong_and_right("no_rescale", q, k, v, visible, (1, 2))
    assert not differs(wrong, right)
    wrong, right = wrong_and_right("no_rescale", q, k[::-1], v, visible, (1, 2))
    assert differs(wrong, right)


# -- numpy tiles and the timing --------------------------------------------------------------------
@given(st.integers(1, 20), st.integers(1, 8), st.integers(1, 3), st.integers(0, 2**16))
@settings(max_examples=30, deadline=None)
def test_the_numpy_tiles_are_the_causal_attention_with_or_without_the_empty_blocks(
    n, block, d, seed
):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.uniform(-2, 2, (n, d)) for _ in range(3))
    _, expected = att.attention(q.tolist(), k.tolist(), v.tolist())
    for skip in (True, False):
        got = tl.numpy_tiled_attention(q, k, v, block, skip_empty=skip)
        assert np.allclose(got, expected, atol=1e-12)


@pytest.fixture
def fake_clock(monkeypatch):
    """Both clocks read 0, 1, 2, …: every timed call lasts one second of processor time, and the
    wall clock (the budget's) moves on with every reading."""
    ticks = itertools.count()
    monkeypatch.setattr(tl.time, "perf_counter", lambda: float(next(ticks)))
    monkeypatch.setattr(tl.time, "process_time", lambda: float(next(ticks)))


def test_timing_takes_the_shortest_of_alternating_repeats(fake_clock):
    rows = tl.time_tiles([4, 8], block=2, d=2, repeats=3)
    blocks = {4: {"skip": 3, "all": 4}, 8: {"skip": 10, "all": 16}}
    assert rows == [
        {"n": n, "skip": 1.0, "all": 1.0, "runs": 3, "same": True, "blocks": blocks[n]}
        for n in (4, 8)
    ]


@given(st.integers(1, 40), st.integers(1, 9))
@settings(max_examples=25, deadline=None)
def test_computing_every_block_masks_only_the_blocks_that_need_it(n, block):
    # The timing compares like with like: both variants mask the same diagonal blocks; the empty
    # blocks above the diagonal are skipped by one, computed unmasked (then dropped) by the other.
    table = att.visibility(n, n)
    kinds = tl.block_kinds(table, block, block)
    skip = tl.causal_plan(n, block)
    every = tl.causal_plan(n, block, skip_empty=False)
    assert skip == [[{"empty": "skip"}.get(x, x) for x in row] for row in kinds]
    assert every == [[{"empty": "discard"}.get(x, x) for x in row] for row in kinds]
    masked = [sum(row.count("partial") for row in plan) for plan in (skip, every)]
    assert masked[0] == masked[1] == sum(row.count("partial") for row in kinds)


def test_timing_keeps_to_its_budget_with_at_least_one_run_each(fake_clock):
    assert [r["runs"] for r in tl.time_tiles([4, 8], block=2, d=2, repeats=50, budget=0)] == [1, 1]


# -- bad input: a clear Chinese ValueError naming the argument -------------------------------------
Q = [[1.0, 0.0], [0.0, 1.0]]
TABLE = att.visibility(2, 2)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: tl.online_softmax([1.0, 2.0], 0), "block 必须是不小于 1 的整数"),
        (lambda: tl.online_softmax([1.0, 2.0], 1.5), "block 必须是不小于 1 的整数"),
        (lambda: tl.online_softmax([1.0, float("nan")], 1), "scores[1] 是 nan"),
        (lambda: tl.online_softmax([1.0, float("inf")], 1), "scores[1] 是 inf"),
        (lambda: tl.online_row([1.0], [[1.0], [2.0]], 1), "V 的行数必须等于 scores 的个数"),
        (lambda: tl.online_row([1.0], [[1.0]], 1, empty_row="nan"), "empty_row 必须是"),
        (lambda: tl.block_kinds(TABLE, 0, 1), "block_q 必须是不小于 1 的整数"),
        (lambda: tl.block_kinds(TABLE, 1, 2.0), "block_k 必须是不小于 1 的整数"),
        (lambda: tl.block_kinds([[True], [True, False]], 1, 1), "visible 必须是非空的矩形表"),
        (lambda: tl.block_kinds([[1, 0]], 1, 1), "visible[0][0] 必须是 True 或 False"),
        (
            lambda: tl.tiled_attention(Q, Q, Q, [[True, True]], block_q=1, block_k=1),
            "visible 的形状应为 2×2，收到 1×2",
        ),
        (
            lambda: tl.tiled_attention(Q, Q, Q, TABLE, block_q=0, block_k=1),
            "block_q 必须是不小于 1 的整数",
        ),
        (
            lambda: tl.tiled_attention(Q, Q, Q, TABLE, block_q=1, block_k=True),
            "block_k 必须是不小于 1 的整数",
        ),
        (
            lambda: tl.tiled_attention(
                [[float("nan"), 0.0]], Q, Q, TABLE[:1], block_q=1, block_k=1
            ),
            "Q[0][0] 是 nan",
        ),
        (
            lambda: tl.tiled_attention(
                [[1e200, 1e200]], [[1e200, 1e200]], [[1.0]], [[True]], block_q=1, block_k=1
            ),
            "超出浮点数的范围",
        ),
        (
            lambda: tl.tiled_attention(Q, Q, [[1.0]], TABLE, block_q=1, block_k=1),
            "V 的行数必须等于 K 的行数",
        ),
        (
            lambda: tl.tiled_attention(Q, Q, Q, TABLE, block_q=1, block_k=1, empty_row=0),
            "empty_row 必须是",
        ),
        (lambda: tl.block_counts(4, 2, 1, 1), "n_query 不能大于 n_key"),
        (lambda: tl.block_counts(4, 4, 0, 1), "block_q 必须是不小于 1 的整数"),
        (lambda: tl.block_counts(2**20, 2**20, 1, 1), "块数"),
        (lambda: tl.block_counts(4, 4, 1, 1, window=0), "window 必须是不小于 1 的整数"),
        (lambda: tl.block_counts(4, 4, 1, 1, doc_lengths=[1, 2]), "doc_lengths 之和必须等于 n_key"),
        (lambda: tl.block_counts(4, 4, 1, 1, doc_lengths=[4, 0]), "doc_lengths[1] 必须是不小于 1"),
        (
            lambda: tl.mistaken_tiled_attention(Q, Q, Q, TABLE, "typo", block_q=1, block_k=1),
            "mistake 必须是",
        ),
        (lambda: tl.numpy_tiled_attention(Q, Q, Q, 0), "block 必须是不小于 1 的整数"),
        (lambda: tl.numpy_tiled_attention(Q, Q, Q, 1, skip_empty=1), "skip_empty 必须是"),
        (lambda: tl.numpy_tiled_attention([[1.0]], Q, Q, 1), "q、k 必须同形状"),
        (lambda: tl.time_tiles([]), "ns 不能为空"),
        (lambda: tl.spans(4, 0), "block 必须是不小于 1 的整数"),
        (lambda: tl.rescale_factors([3.0, 1.0]), "maxima 是运行中的最大值"),
        (lambda: tl.masked_scores(Q, Q, TABLE[:1]), "visible 的形状应为 2×2"),
        (lambda: tl.rule_table(3, 2), "n_query 不能超过 2"),
        (lambda: tl.rule_table(2, 4, doc_lengths=[1, 2]), "doc_lengths 之和必须等于 n_key"),
        (lambda: tl.causal_plan(4, 2, skip_empty=None), "skip_empty 必须是"),
        (lambda: tl.time_tiles([8], block=0), "block 必须是不小于 1 的整数"),
        (lambda: tl.time_tiles([8], budget=-1.0), "budget 必须是不小于 0 的有限秒数"),
    ],
)
def test_bad_input_gets_a_clear_chinese_error(call, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        call()


V2 = [[10.0], [20.0]]
VALID = {
    tl.online_softmax: {"scores": [1.0, 0.0, 3.0], "block": 2},
    tl.online_row: {
        "scores": [1.0, 0.0, 3.0],
        "v": [[1.0], [2.0], [3.0]],
        "block": 2,
        "empty_row": "zero",
    },
    tl.block_kinds: {"visible": att.visibility(2, 3, past=1), "block_q": 1, "block_k": 2},
    tl.tiled_attention: {
        "q": Q,
        "k": Q,
        "v": V2,
        "visible": TABLE,
        "block_q": 1,
        "block_k": 1,
        "empty_row": "zero",
    },
    tl.block_counts: {
        "n_query": 4,
        "n_key": 6,
        "block_q": 2,
        "block_k": 2,
        "window": 3,
        "doc_lengths": [2, 4],
    },
    tl.mistaken_tiled_attention: {
        "q": Q,
        "k": Q,
        "v": V2,
        "visible": TABLE,
        "mistake": "no_rescale",
        "block_q": 1,
        "block_k": 1,
    },
    tl.numpy_tiled_attention: {"q": Q, "k": Q, "v": V2, "block": 1, "skip_empty": False},
    tl.spans: {"n": 5, "block": 2},
    tl.rescale_factors: {"maxima": [1.0, 3.0]},
    tl.masked_scores: {"q": Q, "k": Q, "visible": TABLE},
    tl.rule_table: {"n_query": 2, "n_key": 4, "window": 2, "doc_lengths": [1, 3]},
    tl.causal_plan: {"n": 4, "block": 2, "skip_empty": False},
    tl.time_tiles: {"ns": [4, 8], "block": 2, "d": 2, "repeats": 1, "seed": 0, "budget": 0.01},
}


def test_every_public_function_is_fuzzed():
    assert public_functions(tl) - {"self_test", "run_demo"} == {f.__name__ for f in VALID}


@pytest.mark.parametrize("function", list(VALID), ids=lambda f: f.__name__)
def test_fuzz_every_argument_gets_a_value_error_that_names_it_or_a_result(function):
    assert fuzz_failures(function, VALID[function], entries=True) == []


# -- the demo and the script -----------------------------------------------------------------------
def test_run_demo_is_deterministic_and_agrees_with_the_brute_force_count():
    demo = tl.run_demo()
    assert demo == tl.run_demo()
    visible = att.visibility(len(tl.DEMO_Q), len(tl.DEMO_K), past=tl.DEMO_PAST)
    assert demo["演示_块的种类"] == brute_kinds(visible, 2, 2)
    assert demo["演示_分块与一次算完的最大差"] < 1e-12
    for n, counts in demo["因果_每块128_块数"].items():
        t = int(n) // 128
        assert counts["partial"] == t and counts["full"] == counts["empty"] == t * (t - 1) // 2


def test_script_prints_the_demo_as_json_after_its_self_test():
    run = subprocess.run(
        [sys.executable, str(CODE)], capture_output=True, text=True, check=True, cwd=CODE.parent
    )
    assert json.loads(run.stdout) == json.loads(json.dumps(tl.run_demo()))
