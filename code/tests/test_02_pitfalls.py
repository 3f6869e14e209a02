"""Tests of code/02_pitfalls.py: each mistake's computation against an independent numpy reference,
the fixes against the chapter's own functions, the small decoder's padding facts, and bad input.

The page's sentences and tables built from these results: tests/test_chapter_pitfalls.py; the same
mistakes in PyTorch and Transformers: tests/crosscheck/test_pitfalls_record.py.
"""

from __future__ import annotations

import importlib
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import (
    attention_problems,
    fuzz_failures,
    numpy_attention,
    numpy_causal,
    numpy_softmax,
    public_functions,
    reals,
)

pf = importlib.import_module("02_pitfalls")
att = importlib.import_module("02_attention")
CODE = Path(pf.__file__)

fast = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
flags_lists = st.lists(st.booleans(), min_size=1, max_size=6)


# -- the tables a line of PyTorch builds -----------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 5])
@pytest.mark.parametrize("diagonal", [-2, -1, 0, 1, 3])
def test_tril_and_triu_are_numpys(n, diagonal):
    ones = np.ones((n, n))
    assert pf.tril(n, diagonal) == np.tril(ones, diagonal).tolist()
    assert pf.triu(n, diagonal) == np.triu(ones, diagonal).tolist()


@pytest.mark.parametrize("n", [1, 3, 6])
def test_the_four_lines_block_what_masked_fill_blocks(n):
    ones = np.ones((n, n))
    causal = numpy_causal(n, n)
    for table, where in [(np.tril(ones), "== 0"), (np.triu(ones, 1), "!= 0")]:
        assert (np.array(pf.masked_fill_visibility(table.tolist(), where)) == causal).all()
    # the slips: tril with .bool() reads the strict future; triu without diagonal=1 the strict past
    assert (np.array(pf.masked_fill_visibility(np.tril(ones).tolist(), "!= 0")) == ~causal).all()
    strict_past = np.tril(np.ones((n, n), dtype=bool), -1)
    assert (
        np.array(pf.masked_fill_visibility(np.triu(ones).tolist(), "!= 0")) == strict_past
    ).all()


@fast
@given(
    st.lists(flags_lists, min_size=1, max_size=4).filter(lambda t: len({len(r) for r in t}) == 1)
)
def test_inverting_twice_gives_the_table_back(table):
    once = pf.inverted(table)
    assert all(a != b for ra, rb in zip(once, table) for a, b in zip(ra, rb))
    assert pf.inverted(once) == table


# -- a float mask is added -------------------------------------------------------------------------
@fast
@given(attention_problems(bound=5.0, with_past=False), st.data())
def test_biased_attention_adds_the_table_to_the_scaled_scores(problem, data):
    q, k, v, _ = problem
    bias = data.draw(
        st.lists(
            st.lists(reals(3.0), min_size=len(k), max_size=len(k)), min_size=len(q), max_size=len(q)
        )
    )
    weights, outputs = pf.biased_attention(q, k, v, bias)
    scores = np.array(q) @ np.array(k).T / math.sqrt(len(k[0])) + np.array(bias)
    expected = numpy_softmax(scores)
    assert np.allclose(weights, expected, atol=1e-12)
    assert np.allclose(outputs, expected @ np.array(v), atol=1e-9)


@fast
@given(attention_problems(bound=5.0, with_past=False))
def test_a_table_of_zeros_and_minus_infinity_is_the_mask_and_a_table_of_ones_and_zeros_is_not(
    problem,
):
    q, k, v, _ = problem
    n_query = len(q)
    n_key = len(k)
    visible = [[j <= i for j in range(n_key)] for i in range(n_query)]
    right = att.masked_attention(q, k, v, visible)
    fixed = pf.biased_attention(q, k, v, att.additive_mask(visible))
    assert att.max_abs_diff(fixed[0], right[0]) < 1e-12
    ones = [[1.0 if ok else 0.0 for ok in row] for row in visible]
    weights, _ = pf.biased_attention(q, k, v, ones)
    # every forbidden key keeps a positive weight: the 0/1 table masks nothing
    assert all(w > 0 for row, vis in zip(weights, visible) for w, ok in zip(row, vis) if not ok)


def test_the_float_table_reads_the_future_in_the_demo():
    n = len(pf.DEMO_Q)
    weights, outputs = pf.biased_attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V, pf.tril(n))
    _, ref = numpy_attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V)  # no mask at all
    assert sum(weights[0][1:]) > 0.4 and outputs[0] != [10.0]
    assert outputs[-1][0] == pytest.approx(ref[-1][0])  # the last row reads everything anyway


@fast
@given(attention_problems(bound=5.0, with_past=False))
def test_future_weights_sum_what_lies_right_of_the_diagonal(problem):
    q, k, v, _ = problem
    weights, _ = numpy_attention(q, k, v)  # no mask at all
    expected = np.triu(weights, 1).sum(axis=1)
    assert np.allclose(pf.future_weights(weights.tolist()), expected, atol=1e-15)
    causal, _ = numpy_attention(q, k, v, np.tril(np.ones((len(q), len(k)), dtype=bool)))
    assert pf.future_weights(causal.tolist()) == [0.0] * len(q)  # the rule kept: none


# -- PAD, heads, cross-attention -------------------------------------------------------------------
@fast
@given(flags_lists, st.booleans())
def test_the_padding_axes(valid, causal):
    n = len(valid)
    rule = numpy_causal(n, n) if causal else np.ones((n, n), dtype=bool)
    v = np.array(valid)
    key = np.array(pf.padding_visibility(valid, "key", causal))
    query = np.array(pf.padding_visibility(valid, "query", causal))
    both = np.array(pf.padding_visibility(valid, "both", causal))
    assert (key == rule & v[None, :]).all()
    assert (query == rule & v[:, None]).all()  # what (B, 1, n, 1) broadcasts to
    assert (both == rule & v[:, None] & v[None, :]).all()
    assert key.tolist() == att.visibility(n, n, causal=causal, key_valid=valid)


@pytest.mark.parametrize("batch, heads", [(1, 1), (2, 2), (3, 2), (2, 4)])
def test_slot_owners_are_what_repeat_and_repeat_interleave_lay_out(batch, heads):
    samples = np.arange(batch)
    layouts = {"repeat": np.tile(samples, heads), "repeat_interleave": np.repeat(samples, heads)}
    for layout, slots in layouts.items():
        # MultiheadAttention reads slot b * heads + h as sequence b, head h
        expected = slots.reshape(batch, heads).tolist()
        assert pf.slot_owners(batch, heads, layout) == expected
    assert all(
        row == [b] * heads
        for b, row in enumerate(pf.slot_owners(batch, heads, "repeat_interleave"))
    )


@fast
@given(st.integers(1, 5), flags_lists)
def test_cross_attention_blocks_only_the_sources_pad_unless_told_causal(n_target, valid):
    right = np.array(pf.cross_visibility(n_target, valid))
    wrong = np.array(pf.cross_visibility(n_target, valid, causal_across=True))
    v = np.array(valid)
    assert (right == np.broadcast_to(v, right.shape)).all()
    top_left = np.arange(len(valid))[None, :] <= np.arange(n_target)[:, None]
    assert (wrong == right & top_left).all()


# -- the loss and dropout --------------------------------------------------------------------------
def test_labels_by_position_keep_the_real_eos_and_by_id_lose_it():
    by_position = pf.labels_from(pf.LOSS_IDS, pf.LOSS_MASK, pf.PAD)
    by_id = pf.labels_from(pf.LOSS_IDS, pf.LOSS_MASK, pf.PAD, "id")
    eos_at = pf.LOSS_MASK.index(0) - 1  # the last real token is the EOS
    assert pf.LOSS_IDS[eos_at] == pf.EOS == pf.PAD
    assert by_position[eos_at] == pf.EOS and by_id[eos_at] == pf.IGNORE_INDEX
    assert by_position.count(pf.IGNORE_INDEX) == pf.LOSS_MASK.count(0)


@fast
@given(st.integers(2, 6), st.integers(2, 5), st.integers(0, 2**16))
def test_mean_loss_is_numpys_cross_entropy_of_the_shifted_targets(n, vocab, seed):
    rng = np.random.default_rng(seed)
    logits = np.round(rng.normal(size=(n, vocab)), 2)
    labels = rng.integers(0, vocab, n)
    labels[rng.random(n) < 0.3] = pf.IGNORE_INDEX
    kept = [(t - 1, y) for t, y in enumerate(labels) if t > 0 and y != pf.IGNORE_INDEX]
    if not kept:
        with pytest.raises(ValueError, match="ignore_index"):
            pf.mean_loss(logits.tolist(), labels.tolist())
        return
    log_p = np.log(numpy_softmax(logits))
    expected = -np.mean([log_p[row, y] for row, y in kept])
    got = pf.mean_loss(logits.tolist(), labels.tolist())
    assert got["loss"] == pytest.approx(expected, abs=1e-12) and got["counted"] == len(kept)


def test_dropout_after_softmax_keeps_masked_weights_zero_and_before_it_makes_nan():
    weights = att.attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V)[0]
    after = pf.dropped(weights, pf.DROP_KEEP, pf.DROP_P)
    expected = np.array(weights) * np.array(pf.DROP_KEEP) / (1 - pf.DROP_P)
    assert np.array_equal(after, expected)
    causal = numpy_causal(len(weights), len(weights))
    assert (np.array(after)[~causal] == 0).all()
    scores = np.where(causal, 1.0, -np.inf).tolist()
    before = np.array(pf.dropped(scores, pf.DROP_KEEP, pf.DROP_P))
    dropped_minus_inf = (~causal) & (np.array(pf.DROP_KEEP) == 0)
    assert (np.isnan(before) == dropped_minus_inf).all()


# -- the small decoder: padding side and positions -------------------------------------------------
prompts = st.lists(st.integers(1, pf.VOCAB - 1), min_size=1, max_size=5)


@fast
@given(prompts, st.integers(0, 4), st.sampled_from(pf.EMBEDDINGS))
def test_left_padding_with_positions_from_the_mask_is_the_prompt_alone(prompt, pad, embedding):
    assert pf.last_logits_gap(prompt, pad, embedding, "mask") == 0.0
    batch, valid = pf.pad_batch([prompt, [1] * (len(prompt) + pad)], "left")
    alone = pf.greedy(prompt, [True] * len(prompt), 2, embedding)
    assert pf.greedy(batch[0], valid[0], 2, embedding) == alone


@fast
@given(prompts, st.integers(1, 4))
def test_rope_needs_no_positions_from_the_mask_and_absolute_vectors_do(prompt, pad):
    assert (
        pf.last_logits_gap(prompt, pad, "rope", "arange") < 1e-12
    )  # a shift keeps the differences
    shifted = pf.decoder_logits(
        [pf.PAD] * pad + prompt,
        [False] * pad + [True] * len(prompt),
        list(range(pad + len(prompt))),
        "absolute",
    )[-1]
    moved = pf.decoder_logits(
        prompt, [True] * len(prompt), [pad + t for t in range(len(prompt))], "absolute"
    )[-1]
    assert shifted == pytest.approx(moved, abs=1e-12)  # arange is the prompt moved by pad positions


def test_right_padding_reads_the_pad_row_first():
    batch, valid = pf.pad_batch(pf.DEMO_PROMPTS, "right")
    short = valid.index(next(v for v in valid if not v[-1]))
    logits = pf.decoder_logits(batch[short], valid[short], pf.position_ids(valid[short]))[-1]
    first = pf.greedy(batch[short], valid[short], 1)[0]
    assert first == int(np.argmax(logits))  # the last column: a PAD row
    prompt = pf.DEMO_PROMPTS[short]
    alone = pf.decoder_logits(prompt, [True] * len(prompt), list(range(len(prompt))))[-1]
    assert max(abs(a - b) for a, b in zip(logits, alone)) > 1e-3


@pytest.mark.parametrize("prompt_len, steps, window", [(5, 3, 3), (1, 4, 3), (2, 2, 8)])
def test_sliding_positions_count_tokens_seen_while_the_cache_stops_at_the_window(
    prompt_len, steps, window
):
    right = pf.sliding_positions(prompt_len, steps, window)
    wrong = pf.sliding_positions(prompt_len, steps, window, "cache_length")
    assert right["positions"] == list(range(prompt_len, prompt_len + steps))
    assert right["cache_held"] == wrong["cache_held"] == wrong["positions"]
    assert all(h <= window - 1 for h in right["cache_held"])  # with the new one: the window
    assert (right["positions"] == wrong["positions"]) == (prompt_len + steps - 1 < window)


def test_pad_batch_and_position_ids():
    tokens, valid = pf.pad_batch([[3, 1, 2], [4]], "right")
    assert tokens == [[3, 1, 2], [4, pf.PAD, pf.PAD]] and valid[1] == [True, False, False]
    assert pf.position_ids([False, False, True, True]) == [0, 0, 0, 1]
    assert pf.position_ids([True, True, False, False]) == [0, 1, 2, 2]  # right PAD: not content


# -- the file as a reader runs it, and bad input ---------------------------------------------------
def test_the_file_runs_and_prints_its_demo():
    run = subprocess.run([sys.executable, str(CODE)], capture_output=True, text=True, check=True)
    demo = json.loads(run.stdout)
    assert demo["左侧PAD"] == demo["单独生成"] and demo["右侧PAD"] != demo["单独生成"]
    assert demo["每种写法可读的Key数"]["tril == 0"] == [1, 2, 3, 4]


CALLS = {
    "tril": ((3,), {}),
    "triu": ((3, 1), {}),
    "masked_fill_visibility": (([[1.0, 0.0], [1.0, 1.0]], "== 0"), {}),
    "inverted": (([[True, False]],), {}),
    "biased_attention": (([[0.0]], [[0.0], [1.0]], [[1.0], [2.0]], [[1.0, 0.0]]), {}),
    "padding_visibility": (([True, False],), {"axis": "query", "causal": True}),
    "slot_owners": ((2, 2, "repeat"), {}),
    "cross_visibility": ((2, [True, False]), {"causal_across": True}),
    "labels_from": (([5, 2, 0], [1, 1, 0], 0), {"by": "id"}),
    "mean_loss": (([[0.0, 1.0], [1.0, 0.0]], [0, 1]), {}),
    "dropped": (([[0.5, 0.5]], [[1, 0]], 0.5), {}),
    "decoder_logits": (([1, 2], [True, True], [0, 1]), {"embedding": "absolute"}),
    "pad_batch": (([[3, 1], [2]], "right"), {}),
    "position_ids": (([False, True],), {"positions": "arange"}),
    "greedy": (([2, 3], [True, True], 2), {}),
    "last_logits_gap": (([2, 3], 1, "absolute", "arange"), {}),
    "causal_table": ((3,), {}),
    "future_weights": (([[0.75, 0.25], [0.5, 0.5]],), {}),
    "sliding_positions": ((5, 3, 3), {"count": "cache_length"}),
}


def test_every_public_function_is_fuzzed():
    assert set(CALLS) == public_functions(pf) - {"self_test", "run_demo"}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_bad_input_is_a_value_error_that_names_the_argument(name):
    args, kwargs = CALLS[name]
    spoken = {"bias": "bias", "q": "Q", "k": "K", "v": "V", "tokens": "tokens"}
    failures = fuzz_failures(getattr(pf, name), kwargs, args=args, spoken=spoken, entries=True)
    assert failures == []
