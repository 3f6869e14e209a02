"""The tensors page against PyTorch: every rule's table through FlexAttention's ``create_mask``, and the
batched attention through ``scaled_dot_product_attention`` (float64, with ``enable_gqa``).

``create_mask`` receives the page's predicates unchanged. Its ``q_idx`` counts the queries from 0, so with a
cache the offset ``past`` is added in a wrapper, as the page's libraries table says.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.attention.flex_attention import create_mask

tn = importlib.import_module("02_tensors")

MASK = [[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 0]]
DOCS = [[0, 0, 1, 1, 1, 2], [0, 1, 1, 1, 2, 2]]
RULES = {
    "causal": tn.causal,
    "window": tn.sliding_window(3),
    "document": tn.and_rules(tn.causal, tn.document(DOCS)),
    "prefix": tn.prefix_lm(2),
    "sinks": tn.sinks(1, 2),
    "padding": tn.and_rules(tn.causal, tn.padding(MASK)),
    "or": tn.or_rules(tn.sliding_window(1), tn.prefix_lm(1)),
}


@pytest.mark.parametrize("name", list(RULES))
@pytest.mark.parametrize("n_query", [6, 2])
def test_flex_create_mask_builds_the_same_table_from_the_same_predicate(name, n_query):
    rule = RULES[name]
    past = 6 - n_query
    shifted = rule if past == 0 else (lambda b, h, q_idx, kv_idx: rule(b, h, q_idx + past, kv_idx))
    built = create_mask(shifted, 2, 3, n_query, 6, device="cpu").numpy()
    assert (built == tn.visibility_batch(rule, 2, 3, n_query, 6)).all()


def test_flex_counts_queries_from_zero_so_a_cache_needs_the_offset():
    built = create_mask(tn.causal, 1, 1, 2, 6, device="cpu").numpy()
    assert not (built == tn.visibility_batch(tn.causal, 1, 1, 2, 6)).all()


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(list(RULES)),
    st.integers(0, 2**16),
    st.sampled_from([(4, 2), (4, 1), (2, 2)]),
    st.sampled_from([6, 2]),
)
def test_sdpa_with_the_page_mask_equals_attention_batched_in_float64(name, seed, heads, n_query):
    h, kv = heads
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(2, h, n_query, 4))
    k = rng.normal(size=(2, kv, 6, 4))
    v = rng.normal(size=(2, kv, 6, 3))
    visible = tn.visibility_batch(
        RULES[name], 2, 1, n_query, 6
    )  # (batch, 1, n_query, n_key): broadcast over heads
    _, ours = tn.attention_batched(q, k, v, visible, empty_row="zero")
    theirs = F.scaled_dot_product_attention(
        *(torch.tensor(x) for x in (q, k, v)), attn_mask=torch.tensor(visible), enable_gqa=True
    ).numpy()
    assert np.allclose(ours, theirs, atol=1e-12)


ex = importlib.import_module("02_exercises_tensors")


def test_the_library_mask_exercise_is_what_pytorch_computes():
    """Exercise 5: the bool attn_mask, the key_padding_mask's polarity, is_causal=True with a cache."""
    from torch.nn.attention.bias import causal_lower_right

    a = ex.library_masks()
    mask = np.array(ex.LIB_MASK)
    batch, n_key = mask.shape
    past = ex.LIB_PAST
    n_query = n_key - past
    rng = np.random.default_rng(0)
    q = rng.normal(size=(batch, 2, n_query, 4))
    k = rng.normal(size=(batch, 2, n_key, 4))
    v = rng.normal(size=(batch, 2, n_key, 3))
    t = [torch.tensor(x) for x in (q, k, v)]
    ours = tn.attention_batched(q, k, v, a["attn_mask"])[1]
    assert np.allclose(
        F.scaled_dot_product_attention(*t, attn_mask=torch.tensor(a["attn_mask"])).numpy(),
        ours,
        atol=1e-12,
    )
    flag = F.scaled_dot_product_attention(*t, is_causal=True).numpy()
    assert np.allclose(
        flag, tn.attention_batched(q, k, v, a["is_causal"])[1], atol=1e-12
    )  # top-left, PAD not cut
    for b, rows in enumerate(a["wrong"]):
        for i in range(n_query):
            assert np.allclose(flag[b, :, i], ours[b, :, i], atol=1e-12) == (i not in rows)
    lower = F.scaled_dot_product_attention(*t, attn_mask=causal_lower_right(n_query, n_key)).numpy()
    causal = tn.visibility_batch(tn.causal, batch, 1, n_query, n_key)
    assert np.allclose(
        lower, tn.attention_batched(q, k, v, causal)[1], atol=1e-12
    )  # the fix, PAD aside
    mha = torch.nn.MultiheadAttention(4, 2, batch_first=True, dtype=torch.float64)
    x = torch.tensor(rng.normal(size=(batch, n_key, 4)))
    _, weights = mha(
        x, x, x, key_padding_mask=torch.tensor(a["key_padding_mask"]), average_attn_weights=False
    )
    read = (weights.detach().numpy() > 0).all(axis=(1, 2))  # (batch, n_key): keys every query reads
    assert (read == ~a["key_padding_mask"]).all()  # True = the key is not read
