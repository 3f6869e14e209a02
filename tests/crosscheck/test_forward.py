"""The book's pure-Python attention equals the libraries' in float64, for every kind of mask.

The reference is PyTorch's ``scaled_dot_product_attention`` (and JAX's ``dot_product_attention``)
given the book's visibility table as a boolean mask: causal, PAD, and a KV cache (``past``). The
deliberately wrong offset of the mask page is PyTorch's top-left ``is_causal`` with a cache.
"""

from __future__ import annotations

import importlib

import numpy as np
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn.attention.bias import causal_lower_right

att = importlib.import_module("02_attention")

finite = st.floats(min_value=-4, max_value=4, allow_nan=False, allow_infinity=False)


@st.composite
def problems(draw, v_as_wide_as_k: bool = False):
    d = draw(st.integers(1, 4))
    d_v = d if v_as_wide_as_k else draw(st.integers(1, 3))
    past = draw(st.integers(0, 4))
    new = draw(st.integers(1, 4))
    n_key = past + new

    def matrix(rows, cols):
        return st.lists(
            st.lists(finite, min_size=cols, max_size=cols), min_size=rows, max_size=rows
        )

    q = draw(matrix(new, d))
    k = draw(matrix(n_key, d))
    v = draw(matrix(n_key, d_v))
    causal = draw(st.booleans())
    key_valid = draw(st.lists(st.booleans(), min_size=n_key, max_size=n_key) | st.none())
    return q, k, v, past, causal, key_valid


def t(a):
    return torch.tensor(a, dtype=torch.float64)


@settings(max_examples=200, deadline=None)
@given(problems())
def test_attention_equals_pytorch_sdpa(problem):
    q, k, v, past, causal, key_valid = problem
    visible = att.visibility(len(q), len(k), causal=causal, past=past, key_valid=key_valid)
    expected = F.scaled_dot_product_attention(
        t(q), t(k), t(v), attn_mask=torch.tensor(visible)
    ).numpy()
    empty = [i for i, row in enumerate(visible) if not any(row)]
    # A fully masked row: the book refuses it by default and, asked for its zero-output policy,
    # gives exactly what SDPA gives (zeros).
    _, out = att.attention(
        q, k, v, causal, past=past, key_valid=key_valid, empty_row="zero" if empty else "error"
    )
    assert np.allclose(np.asarray(out), expected, atol=1e-9)
    assert all((expected[i] == 0).all() for i in empty)


@settings(max_examples=100, deadline=None)
@given(problems())
def test_the_books_cache_offset_is_causal_lower_right_and_top_left_is_the_wrong_one(problem):
    q, k, v, past, _, _ = problem
    new = len(q)
    n_key = len(k)
    _, right = att.attention(q, k, v, past=past)
    lower = F.scaled_dot_product_attention(
        t(q), t(k), t(v), attn_mask=causal_lower_right(new, n_key)
    ).numpy()
    assert np.allclose(np.asarray(right), lower, atol=1e-9)
    _, wrong = att.masked_attention(q, k, v, att.row_index_visibility(new, n_key))
    top_left = F.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=True).numpy()
    assert np.allclose(np.asarray(wrong), top_left, atol=1e-9)


@settings(max_examples=50, deadline=None)
@given(problems(v_as_wide_as_k=True))  # jax.nn.dot_product_attention wants V as wide as K
def test_attention_equals_jax(problem):
    import jax

    q, k, v, past, _, _ = problem
    _, out = att.attention(q, k, v, past=past)

    def shape(a):
        return np.asarray(a, dtype=np.float64)[None, :, None, :]

    mask = np.asarray(att.visibility(len(q), len(k), past=past))[None, None]
    expected = np.asarray(jax.nn.dot_product_attention(shape(q), shape(k), shape(v), mask=mask))[
        0, :, 0, :
    ]
    # JAX 0.10.2 takes float64 inputs but computes the softmax in float32 (observe.py records the precision
    # it computed at: code/02_library_conventions.json), so the agreement is float32's, not float64's.
    assert np.allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)
