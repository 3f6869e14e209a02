"""The backprop page's hand-derived gradients and the multi-head page's layer, against PyTorch.

- ``02_backprop.attention_backward`` equals PyTorch autograd through ``scaled_dot_product_attention``
  (float64, the book's visibility table as a boolean ``attn_mask``), for a random upstream gradient,
  with causal, PAD and cache masks, and with fully masked rows under the zero-output policy.
- ``02_multihead.multihead_attention`` equals ``torch.nn.MultiheadAttention`` given the same weights
  (its layout is the transpose of the book's ``x @ W``; its boolean mask means "forbidden").
"""

from __future__ import annotations

import importlib

import numpy as np
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

att = importlib.import_module("02_attention")
bp = importlib.import_module("02_backprop")
mh = importlib.import_module("02_multihead")

finite = st.floats(min_value=-3, max_value=3, allow_nan=False, allow_infinity=False)


def matrix(rows: int, cols: int):
    return st.lists(st.lists(finite, min_size=cols, max_size=cols), min_size=rows, max_size=rows)


@st.composite
def backward_problems(draw):
    d = draw(st.integers(1, 4))
    d_v = draw(st.integers(1, 3))
    past = draw(st.integers(0, 3))
    new = draw(st.integers(1, 4))
    n_key = past + new
    q = draw(matrix(new, d))
    k = draw(matrix(n_key, d))
    v = draw(matrix(n_key, d_v))
    d_out = draw(matrix(new, d_v))  # a random upstream gradient, never all ones
    causal = draw(st.booleans())
    key_valid = draw(st.lists(st.booleans(), min_size=n_key, max_size=n_key) | st.none())
    return q, k, v, d_out, past, causal, key_valid


def leaf(a):
    return torch.tensor(a, dtype=torch.float64, requires_grad=True)


@settings(max_examples=150, deadline=None)
@given(backward_problems())
def test_hand_derived_gradients_equal_autograd(problem):
    q, k, v, d_out, past, causal, key_valid = problem
    visible = att.visibility(len(q), len(k), causal=causal, past=past, key_valid=key_valid)
    empty = not all(any(row) for row in visible)
    tq = leaf(q)
    tk = leaf(k)
    tv = leaf(v)
    out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=torch.tensor(visible))
    out.backward(torch.tensor(d_out, dtype=torch.float64))
    # PyTorch gives a fully masked row zero output and zero gradient: the book's "zero" policy.
    dq, dk, dv = bp.attention_backward(
        q,
        k,
        v,
        d_out,
        causal=causal,
        past=past,
        key_valid=key_valid,
        empty_row="zero" if empty else "error",
    )
    for mine, theirs in ((dq, tq.grad), (dk, tk.grad), (dv, tv.grad)):
        assert np.allclose(np.asarray(mine), theirs.numpy(), rtol=1e-9, atol=1e-9)


@st.composite
def layers(draw):
    heads = draw(st.sampled_from([1, 2, 4]))
    head_dim = draw(st.integers(1, 2))
    d_model = heads * head_dim
    n = draw(st.integers(1, 4))
    x = draw(matrix(n, d_model))
    w_q, w_k, w_v, w_o = (draw(matrix(d_model, d_model)) for _ in range(4))
    causal = draw(st.booleans())
    return x, w_q, w_k, w_v, w_o, heads, causal


@settings(max_examples=100, deadline=None)
@given(layers())
def test_multihead_equals_torch_multiheadattention(layer):
    x, w_q, w_k, w_v, w_o, heads, causal = layer
    d_model = len(x[0])
    weights, out = mh.multihead_attention(x, w_q, w_k, w_v, w_o, heads, causal=causal)
    torch_layer = torch.nn.MultiheadAttention(
        d_model, heads, bias=False, batch_first=True, dtype=torch.float64
    )

    def t(a):
        return torch.tensor(a, dtype=torch.float64)

    with torch.no_grad():
        torch_layer.in_proj_weight.copy_(torch.cat([t(w_q).T, t(w_k).T, t(w_v).T]))
        torch_layer.out_proj.weight.copy_(t(w_o).T)
    visible = att.visibility(len(x), len(x), causal=causal)
    forbidden = ~torch.tensor(visible)  # nn.MultiheadAttention: True = not allowed
    with torch.no_grad():
        expected, expected_weights = torch_layer(
            t(x)[None], t(x)[None], t(x)[None], attn_mask=forbidden, average_attn_weights=False
        )
    assert np.allclose(np.asarray(out), expected[0].numpy(), rtol=1e-9, atol=1e-9)
    assert np.allclose(np.asarray(weights), expected_weights[0].numpy(), rtol=1e-9, atol=1e-9)


def test_a_config_without_head_dim_falls_back_per_config_class():
    """The multi-head page's 误解三 and the glossary's 头维度 (review M2): without ``head_dim``,
    Transformers' LlamaConfig takes hidden_size // num_attention_heads, GemmaConfig and Qwen3Config keep a
    default of their own that is not that quotient."""
    import transformers

    sizes = {"hidden_size": 1024, "num_attention_heads": 16}
    assert transformers.LlamaConfig(**sizes).head_dim == 1024 // 16
    for config in (transformers.GemmaConfig, transformers.Qwen3Config):
        assert config(**sizes).head_dim == config().head_dim != 1024 // 16, config.__name__
    # Qwen2Config has no head_dim: the attention module takes the floor of the quotient, unchecked.
    from transformers.models.qwen2 import modeling_qwen2

    odd = transformers.Qwen2Config(hidden_size=10, num_attention_heads=3, num_key_value_heads=3)
    assert not hasattr(odd, "head_dim")
    assert modeling_qwen2.Qwen2Attention(odd, layer_idx=0).head_dim == 10 // 3
