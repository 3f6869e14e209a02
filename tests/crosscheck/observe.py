"""Observe, by running them, how real attention APIs read masks; write what was seen for the book.

Each ``observe_*`` function runs the library on small random float64 inputs and compares its output
with a reference written here in numpy, under each reading a convention could have (True means
"allowed" or "forbidden"; a causal flag aligned top-left or bottom-right; a fully masked row giving
NaN, zeros, the uniform average of V, or an error). The answer is the reading that matches.

``python tests/crosscheck/observe.py --write`` (in the crosscheck venv) stores the observations in
``code/02_library_conventions.json``, which the mask page reads for its table of conventions;
``tests/crosscheck/test_conventions.py`` checks that the stored file still matches the installed
libraries, so the page can never disagree with them.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("JAX_ENABLE_X64", "1")  # float64 in JAX, and in Keras on JAX

STORED = Path(__file__).resolve().parents[2] / "code" / "02_library_conventions.json"
N_QUERY, N_KEY, D = 2, 5, 4  # fewer queries than keys, as with a KV cache (past = 3)


def inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((N_QUERY, D)), rng.standard_normal((N_KEY, D)), rng.standard_normal((N_KEY, D))


def reference(q, k, v, allowed=None, bias=None):
    """Softmax attention in numpy: scores / √d, plus bias, forbidden cells excluded."""
    scores = q @ k.T / np.sqrt(q.shape[-1])
    if bias is not None:
        scores = scores + bias
    if allowed is not None:
        scores = np.where(allowed, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    return (weights / weights.sum(axis=-1, keepdims=True)) @ v


def some_mask(seed: int = 1) -> np.ndarray:
    """A boolean table with both values in every row (so either reading leaves something to read)."""
    rng = np.random.default_rng(seed)
    mask = rng.random((N_QUERY, N_KEY)) > 0.5
    mask[:, 0], mask[:, 1] = True, False
    return mask


TOP_LEFT = np.tril(np.ones((N_QUERY, N_KEY), dtype=bool))  # row i reads keys 0 … i
BOTTOM_RIGHT = np.tril(np.ones((N_QUERY, N_KEY), dtype=bool), N_KEY - N_QUERY)  # row i reads 0 … past + i


def meaning_of_true(run, q, k, v) -> str:
    """'allowed' or 'forbidden': what True means in a boolean mask that ``run(mask)`` applies."""
    mask = some_mask()
    out = run(mask)
    for name, allowed in (("allowed", mask), ("forbidden", ~mask)):
        if np.allclose(out, reference(q, k, v, allowed), atol=1e-6):
            return name
    return "other"


def alignment(out, q, k, v) -> str:
    for name, allowed in (("top-left", TOP_LEFT), ("bottom-right", BOTTOM_RIGHT)):
        if np.allclose(out, reference(q, k, v, allowed), atol=1e-6):
            return name
    return "other"


def fully_masked_row(run, v) -> str:
    """What the API gives for a query row that may read no key at all (row 0 here)."""
    allowed = np.ones((N_QUERY, N_KEY), dtype=bool)
    allowed[0] = False
    try:
        row = np.asarray(run(allowed))[0]
    except Exception:  # noqa: BLE001 - any refusal counts as "error"
        return "error"
    if np.isnan(row).all():
        return "nan"
    if np.allclose(row, 0.0):
        return "zeros"
    if np.allclose(row, v.mean(axis=0), atol=1e-6):
        return "uniform"
    return "other"


# -- PyTorch ----------------------------------------------------------------------------------------
def observe_torch() -> dict:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention.bias import causal_lower_right, causal_upper_left

    q, k, v = inputs()
    t = lambda a: torch.tensor(a, dtype=torch.float64)  # noqa: E731

    def sdpa(**kwargs):
        return F.scaled_dot_product_attention(t(q), t(k), t(v), **kwargs).numpy()

    bias = np.random.default_rng(2).standard_normal((N_QUERY, N_KEY))
    sdpa_facts = {
        "bool_true": meaning_of_true(lambda m: sdpa(attn_mask=torch.tensor(m)), q, k, v),
        "float_added": bool(np.allclose(sdpa(attn_mask=t(bias)), reference(q, k, v, bias=bias))),
        "is_causal": alignment(sdpa(is_causal=True), q, k, v),
        "fully_masked_bool": fully_masked_row(lambda m: sdpa(attn_mask=torch.tensor(m)), v),
        "fully_masked_float": fully_masked_row(
            lambda m: sdpa(attn_mask=t(np.where(m, 0.0, -np.inf))), v
        ),
    }
    bias_facts = {
        "causal_upper_left": alignment(sdpa(attn_mask=causal_upper_left(N_QUERY, N_KEY)), q, k, v),
        "causal_lower_right": alignment(sdpa(attn_mask=causal_lower_right(N_QUERY, N_KEY)), q, k, v),
    }

    # nn.MultiheadAttention has its own projections: with one head and identity projections
    # (no bias) it computes exactly softmax(q kᵀ/√d + mask) v, so the same reference applies.
    mha = torch.nn.MultiheadAttention(D, 1, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([torch.eye(D, dtype=torch.float64)] * 3))
        mha.out_proj.weight.copy_(torch.eye(D, dtype=torch.float64))
    mha.eval()

    def run_mha(**kwargs):
        with torch.no_grad():
            out, _ = mha(t(q)[None], t(k)[None], t(v)[None], **kwargs)
        return out[0].numpy()

    def key_padding(m):  # one row of the table per call: key_padding_mask is per key, not per query
        rows = [run_mha(key_padding_mask=torch.tensor(row)[None])[i] for i, row in enumerate(m)]
        return np.stack(rows)

    mha_facts = {
        "attn_mask_bool_true": meaning_of_true(lambda m: run_mha(attn_mask=torch.tensor(m)), q, k, v),
        "key_padding_mask_true": meaning_of_true(key_padding, q, k, v),
        "float_added": bool(np.allclose(run_mha(attn_mask=t(bias)), reference(q, k, v, bias=bias))),
        # With the default need_weights=True the layer computes the weights itself; without them it
        # may take a fused path. Both are observed: they need not agree.
        "fully_masked_bool": fully_masked_row(lambda m: run_mha(attn_mask=torch.tensor(~m)), v),
        "fully_masked_bool_no_weights": fully_masked_row(
            lambda m: run_mha(attn_mask=torch.tensor(~m), need_weights=False), v
        ),
    }
    return {"version": torch.__version__, "sdpa": sdpa_facts, "attn_bias": bias_facts, "mha": mha_facts}


# -- JAX --------------------------------------------------------------------------------------------
def observe_jax() -> dict:
    import jax

    jax.config.update("jax_enable_x64", True)
    q, k, v = inputs()
    # jax.nn.dot_product_attention takes (batch, length, heads, head_dim) and masks (batch, heads, T, S).
    shape = lambda a: a[None, :, None, :]  # noqa: E731

    def dpa(**kwargs):
        return np.asarray(jax.nn.dot_product_attention(shape(q), shape(k), shape(v), **kwargs))[0, :, 0, :]

    bias = np.random.default_rng(2).standard_normal((N_QUERY, N_KEY))
    facts = {
        "mask_true": meaning_of_true(lambda m: dpa(mask=m[None, None]), q, k, v),
        "bias_added": bool(np.allclose(dpa(bias=bias[None, None]), reference(q, k, v, bias=bias))),
        "is_causal": alignment(dpa(is_causal=True), q, k, v),
        "fully_masked": fully_masked_row(lambda m: dpa(mask=m[None, None]), v),
    }
    return {"version": jax.__version__, "dot_product_attention": facts}


# -- Keras ------------------------------------------------------------------------------------------
def observe_keras() -> dict:
    import keras

    q, k, v = inputs()
    # One head, identity projections without bias: the layer computes softmax(q kᵀ/√d + mask) v.
    layer = keras.layers.MultiHeadAttention(num_heads=1, key_dim=D, use_bias=False, dtype="float64")
    layer(q[None], v[None], key=k[None])  # build the weights
    eye = np.eye(D)
    for dense in (layer.query_dense, layer.key_dense, layer.value_dense):
        dense.kernel.assign(eye[:, None, :])  # (d_model, heads, key_dim)
    layer.output_dense.kernel.assign(eye[None, :, :])  # (heads, key_dim, d_model)

    def run(**kwargs):
        out = layer(q[None], v[None], key=k[None], **kwargs)
        return np.asarray(out[0] if kwargs.get("return_attention_scores") else out)[0]

    facts = {
        "attention_mask_true": meaning_of_true(lambda m: run(attention_mask=m[None]), q, k, v),
        "use_causal_mask": alignment(run(use_causal_mask=True), q, k, v),
        "fully_masked": fully_masked_row(lambda m: run(attention_mask=m[None]), v),
        # Asking for the scores takes the layer's own softmax instead of the fused function.
        "fully_masked_with_scores": fully_masked_row(
            lambda m: run(attention_mask=m[None], return_attention_scores=True), v
        ),
    }
    return {"version": keras.__version__, "backend": keras.backend.backend(), "MultiHeadAttention": facts}


def observe() -> dict:
    return {"torch": observe_torch(), "jax": observe_jax(), "keras": observe_keras()}


if __name__ == "__main__":
    seen = observe()
    text = json.dumps(seen, ensure_ascii=False, indent=2) + "\n"
    if sys.argv[1:] == ["--write"]:
        STORED.write_text(text, encoding="utf-8")
        print(f"wrote {STORED}")
    else:
        print(text, end="")
