"""Observe, by running them, how real attention APIs read masks; write what was seen, and where, for the book.

Each ``observe_*`` function runs the library on small random inputs and compares its output with a
reference written here in numpy, under each reading a convention could have (True means "allowed"
or "forbidden"; a float mask added to the scores or cast to bool; a causal flag aligned top-left or
bottom-right; a fully masked row giving NaN, zeros, the uniform average of V, or an error). The
answer is the reading that matches. Every observation says where it was made: the library's version,
the device, the dtype, and for PyTorch which ``scaled_dot_product_attention`` kernel ran (read from
the profiler's list of the aten operators that ran, so it is seen, not assumed).

Fully masked rows are observed on a grid: every SDPA kernel forced in turn with
``torch.nn.attention.sdpa_kernel`` (and the one PyTorch picks itself), JAX's implementations, and
float64, float32, float16 and bfloat16. A kernel that refuses the call when forced (absent on the
device, or not taking a mask or that dtype) is recorded as "unavailable", not guessed. Three more mask
forms and paths are observed on the same rows, each in every dtype: SDPA given a float mask filled with
``finfo(dtype).min`` instead of −∞, ``nn.MultiheadAttention``'s fast path (whether it ran is read from
the profiler too), and JAX given a −∞ ``bias`` instead of a boolean ``mask``.

``python tests/crosscheck/observe.py --device cpu --write`` (in the crosscheck venv) stores the
observations under the key ``"cpu"`` of ``code/02_library_conventions.json``; on a machine with
CUDA, ``--device cuda --write`` stores the CUDA ones under ``"cuda"`` beside them (a library that is
not installed there is left out, nothing else is touched). The mask page reads this file for its
tables; ``tests/crosscheck/test_conventions.py`` checks that it still matches the installed libraries.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("JAX_ENABLE_X64", "1")  # float64 in JAX, and in Keras on JAX

STORED = Path(__file__).resolve().parents[2] / "code" / "02_library_conventions.json"
DEVICES = ("cpu", "cuda")
# Fewer queries than keys, as with a KV cache (past = 3); d = 8 meets the fused CUDA kernels' alignment.
N_QUERY = 2
N_KEY = 5
D = 8
DTYPES = ("float64", "float32", "float16", "bfloat16")
PROBE_DTYPE = (
    "float64"  # the conventions (direction, alignment, float masks) are read in this dtype
)
# How close "the uniform average of V" must be, per dtype (float16 keeps about 3 decimals, bfloat16 2).
TOLERANCE = {"float64": 1e-6, "float32": 1e-5, "float16": 1e-2, "bfloat16": 5e-2}
# The aten operator each SDPA kernel runs as (what the profiler lists) → the kernel's name here.
SDPA_OPS = {
    "aten::_scaled_dot_product_attention_math": "math",
    "aten::_scaled_dot_product_flash_attention_for_cpu": "flash",
    "aten::_scaled_dot_product_flash_attention": "flash",
    "aten::_scaled_dot_product_efficient_attention": "efficient",
    "aten::_scaled_dot_product_cudnn_attention": "cudnn",
}
SDPA_BACKENDS = {
    "math": "MATH",
    "flash": "FLASH_ATTENTION",
    "efficient": "EFFICIENT_ATTENTION",
    "cudnn": "CUDNN_ATTENTION",
}


class NotHere(Exception):
    """The library is installed but cannot see the device (e.g. a CPU-only JAX on a CUDA machine)."""


def inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((N_QUERY, D)),
        rng.standard_normal((N_KEY, D)),
        rng.standard_normal((N_KEY, D)),
    )


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
    mask[:, 0] = True
    mask[:, 1] = False
    return mask


def some_bias(seed: int = 2) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((N_QUERY, N_KEY))


TOP_LEFT = np.tril(np.ones((N_QUERY, N_KEY), dtype=bool))  # row i reads keys 0 … i
BOTTOM_RIGHT = np.tril(
    np.ones((N_QUERY, N_KEY), dtype=bool), N_KEY - N_QUERY
)  # row i reads 0 … past + i
EVERYTHING = np.ones((N_QUERY, N_KEY), dtype=bool)


def meaning_of_true(run, q, k, v) -> str:
    """'allowed' or 'forbidden': what True means in a boolean mask that ``run(mask)`` applies."""
    mask = some_mask()
    out = run(mask)
    for name, allowed in (("allowed", mask), ("forbidden", ~mask)):
        if np.allclose(out, reference(q, k, v, allowed), atol=1e-6):
            return name
    return "other"


def float_mask_reading(run, q, k, v) -> str:
    """How ``run(float_mask)`` reads a float mask, from two probes: a 0/−∞ mask and a random bias.

    'added': both are added to the scores. 'nonzero_allowed': the mask is cast to bool and every
    non-zero cell is allowed, so the 0/−∞ mask reads only its −∞ (forbidden) keys and a random
    bias reads every key.
    """
    mask = some_mask()
    bias = some_bias()
    zero_inf = np.where(mask, 0.0, -np.inf)
    try:
        outs = [run(zero_inf), run(bias)]
    except Exception:  # noqa: BLE001 - a refusal is a reading too
        return "error"
    readings = {
        "added": [reference(q, k, v, allowed=mask), reference(q, k, v, bias=bias)],
        "nonzero_allowed": [reference(q, k, v, allowed=~mask), reference(q, k, v)],
    }
    for name, expected in readings.items():
        if all(np.allclose(o, e, atol=1e-6) for o, e in zip(outs, expected)):
            return name
    return "other"


def alignment(out, q, k, v, given=None) -> str:
    """Which table ``out`` was computed with: 'top-left', 'bottom-right', or the mask ``given`` to the call."""
    tables = [("top-left", TOP_LEFT), ("bottom-right", BOTTOM_RIGHT)]
    if given is not None:
        tables.insert(0, ("attn_mask", given))
    for name, allowed in tables:
        if np.allclose(out, reference(q, k, v, allowed), atol=1e-6):
            return name
    return "other"


def precision(run, q, k, v) -> str:
    """How precisely a float64 call was computed: 'float64' (to 1e-12), 'float32' (to 1e-5) or 'other'."""
    mask = some_mask()
    out = run(mask)
    expected = reference(q, k, v, mask)
    for name, tol in (("float64", 1e-12), ("float32", 1e-5)):
        if np.allclose(out, expected, rtol=0, atol=tol):
            return name
    return "other"


def fully_masked_row(run, v, dtype: str = PROBE_DTYPE, unmasked=None) -> str:
    """What ``run(allowed)`` gives for a query row that may read no key at all (row 0 here).

    ``unmasked``, when given, is that row computed with no mask: 'unmasked' means the row came out as
    if the mask were not there (every key read, weighted by its score).
    """
    allowed = np.ones((N_QUERY, N_KEY), dtype=bool)
    allowed[0] = False
    try:
        row = np.asarray(run(allowed), dtype=np.float64)[0]
    except Exception:  # noqa: BLE001 - any refusal counts as "error"
        return "error"
    if np.isnan(row).all():
        return "nan"
    if (row == 0.0).all():
        return "zeros"
    if np.allclose(row, v.mean(axis=0), rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype]):
        return "uniform"
    if unmasked is not None and np.allclose(
        row, unmasked, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype]
    ):
        return "unmasked"
    return "other"


# -- PyTorch ----------------------------------------------------------------------------------------
def observe_torch(device: str = "cpu") -> dict:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.attention.bias import causal_lower_right, causal_upper_left
    from torch.profiler import profile

    kernels_seen: set[str] = set()

    def ran(call):
        """Run ``call`` under the profiler; note which SDPA kernels ran (the aten operators listed)."""
        with profile() as prof:
            out = call()
        names = {SDPA_OPS[e.name] for e in prof.events() if e.name in SDPA_OPS}
        kernels_seen.update(names)
        return out, sorted(names)

    q, k, v = inputs()

    def t(a, dtype=PROBE_DTYPE):
        return torch.tensor(np.asarray(a), device=device).to(getattr(torch, dtype))

    def numpy(x):
        return x.detach().to("cpu", torch.float64).numpy()

    def sdpa(
        dtype=PROBE_DTYPE, backend=None, **kwargs
    ):  # (batch, heads, length, d), as the fused kernels want
        mask = kwargs.get("attn_mask")
        if isinstance(mask, np.ndarray):
            kwargs["attn_mask"] = (
                torch.tensor(mask, device=device) if mask.dtype == bool else t(mask, dtype)
            )
        context = (
            sdpa_kernel([getattr(SDPBackend, SDPA_BACKENDS[backend])])
            if backend
            else contextlib.nullcontext()
        )
        with context:
            out, _ = ran(
                lambda: F.scaled_dot_product_attention(
                    t(q, dtype)[None, None],
                    t(k, dtype)[None, None],
                    t(v, dtype)[None, None],
                    **kwargs,
                )
            )
        return numpy(out[0, 0])

    kernels_seen.clear()
    sdpa_facts = {
        "bool_true": meaning_of_true(lambda m: sdpa(attn_mask=m), q, k, v),
        "float_mask": float_mask_reading(lambda m: sdpa(attn_mask=m), q, k, v),
        "is_causal": alignment(sdpa(is_causal=True), q, k, v),
        "precision": precision(lambda m: sdpa(attn_mask=m), q, k, v),
    }
    sdpa_facts["kernels"] = sorted(kernels_seen)

    kernels_seen.clear()
    bias_facts = {
        "causal_upper_left": alignment(sdpa(attn_mask=causal_upper_left(N_QUERY, N_KEY)), q, k, v),
        "causal_lower_right": alignment(
            sdpa(attn_mask=causal_lower_right(N_QUERY, N_KEY)), q, k, v
        ),
    }
    bias_facts["kernels"] = sorted(kernels_seen)

    # Fully masked rows: each kernel forced in turn, and the one PyTorch picks itself ("default").
    def masked_run(dtype, backend, kind):
        def run(allowed):
            mask = allowed if kind == "bool" else np.where(allowed, 0.0, -np.inf)
            return sdpa(dtype, backend, attn_mask=mask)

        return run

    def unavailable_or(dtype, backend, kind):
        try:
            sdpa(dtype, backend, attn_mask=EVERYTHING)  # a call the kernel can take at all?
        except RuntimeError:
            return "unavailable"
        return fully_masked_row(masked_run(dtype, backend, kind), v, dtype)

    grid = {
        backend: {
            dtype: {kind: unavailable_or(dtype, backend, kind) for kind in ("bool", "float")}
            for dtype in DTYPES
        }
        for backend in SDPA_BACKENDS
    }
    default = {}
    for dtype in DTYPES:
        kernels_seen.clear()
        default[dtype] = {
            kind: fully_masked_row(masked_run(dtype, None, kind), v, dtype)
            for kind in ("bool", "float")
        }
        default[dtype]["kernels"] = sorted(kernels_seen)
    sdpa_masked = {"default": default, **grid}

    # The same rows with the float mask many libraries build: forbidden cells finfo(dtype).min, not −∞.
    def finfo_min_run(dtype):
        lowest = torch.finfo(getattr(torch, dtype)).min

        def run(allowed):
            return sdpa(dtype, attn_mask=np.where(allowed, 0.0, lowest))

        return run

    finfo_min = {}
    for dtype in DTYPES:
        kernels_seen.clear()
        finfo_min[dtype] = {
            "float": fully_masked_row(finfo_min_run(dtype), v, dtype, reference(q, k, v)[0]),
            "kernels": sorted(kernels_seen),
        }

    # nn.MultiheadAttention has its own projections: with one head and identity projections
    # (no bias) it computes exactly softmax(q kᵀ/√d + mask) v, so the same reference applies.
    # Query, key and value are different tensors (cross-attention), so the layer's fast path is not taken.
    def make_mha(dtype):
        dt = getattr(torch, dtype)
        mha = torch.nn.MultiheadAttention(
            D, 1, bias=False, batch_first=True, device=device, dtype=dt
        )
        with torch.no_grad():
            mha.in_proj_weight.copy_(torch.cat([torch.eye(D, device=device, dtype=dt)] * 3))
            mha.out_proj.weight.copy_(torch.eye(D, device=device, dtype=dt))
        return mha.eval()

    def run_mha(mha, dtype=PROBE_DTYPE, **kwargs):
        for name in ("attn_mask", "key_padding_mask"):
            if isinstance(kwargs.get(name), np.ndarray):
                m = kwargs[name]
                kwargs[name] = torch.tensor(m, device=device) if m.dtype == bool else t(m, dtype)
        with torch.no_grad():
            (out, _), _ = ran(
                lambda: mha(t(q, dtype)[None], t(k, dtype)[None], t(v, dtype)[None], **kwargs)
            )
        return numpy(out[0])

    mha = make_mha(PROBE_DTYPE)

    def key_padding(m):  # one row of the table per call: key_padding_mask is per key, not per query
        return np.stack([run_mha(mha, key_padding_mask=row[None])[i] for i, row in enumerate(m)])

    def causal_hint(**kwargs):
        try:
            out = run_mha(mha, is_causal=True, **kwargs)
        except RuntimeError:
            return "error"
        return alignment(out, q, k, v, given=EVERYTHING)

    kernels_seen.clear()
    mha_facts = {
        "attn_mask_bool_true": meaning_of_true(lambda m: run_mha(mha, attn_mask=m), q, k, v),
        "key_padding_mask_true": meaning_of_true(key_padding, q, k, v),
        "float_mask": float_mask_reading(lambda m: run_mha(mha, attn_mask=m), q, k, v),
    }
    mha_facts["kernels"] = sorted(
        kernels_seen
    )  # none: with need_weights=True it does its own softmax
    kernels_seen.clear()
    mha_facts |= {
        # is_causal is documented as a hint that attn_mask is the causal table. Observed with a mask that
        # forbids nothing (not causal): what does the layer compute then?
        "is_causal_without_mask": causal_hint(),
        "is_causal_with_mask": causal_hint(attn_mask=~EVERYTHING),
        "is_causal_with_mask_no_weights": causal_hint(attn_mask=~EVERYTHING, need_weights=False),
        # The same call with a key_padding_mask that pads nothing: does the layer still drop attn_mask?
        "is_causal_with_mask_and_padding_no_weights": causal_hint(
            attn_mask=~EVERYTHING,
            key_padding_mask=np.zeros((1, N_KEY), dtype=bool),
            need_weights=False,
        ),
    }
    mha_facts["is_causal_kernels"] = sorted(kernels_seen)
    # With the default need_weights=True the layer computes the weights itself; without them it calls SDPA.
    mha_masked = {}
    for dtype in DTYPES:
        layer = make_mha(dtype)
        kernels_seen.clear()
        with_weights = fully_masked_row(
            lambda m, layer=layer, dtype=dtype: run_mha(layer, dtype, attn_mask=~m), v, dtype
        )
        weights_kernels = sorted(kernels_seen)
        kernels_seen.clear()
        no_weights = fully_masked_row(
            lambda m, layer=layer, dtype=dtype: run_mha(
                layer, dtype, attn_mask=~m, need_weights=False
            ),
            v,
            dtype,
        )
        mha_masked[dtype] = {
            "weights": with_weights,
            "weights_kernels": weights_kernels,
            "no_weights": no_weights,
            "no_weights_kernels": sorted(kernels_seen),
        }

    # The layer's fast path: a default layer (bias=True) with an even number of heads, in eval mode under
    # inference_mode, q, k and v one tensor (self-attention over the keys). Identity projections and zero
    # biases, two heads: each head averages its half of V, so "the uniform average of V" is still v's mean.
    def make_fast(dtype):
        dt = getattr(torch, dtype)
        layer = torch.nn.MultiheadAttention(D, 2, batch_first=True, device=device, dtype=dt)
        with torch.no_grad():
            layer.in_proj_weight.copy_(torch.cat([torch.eye(D, device=device, dtype=dt)] * 3))
            layer.out_proj.weight.copy_(torch.eye(D, device=device, dtype=dt))
            layer.in_proj_bias.zero_()
            layer.out_proj.bias.zero_()
        return layer.eval()

    def run_fast(layer, dtype, allowed, need_weights):
        # self-attention over the keys: row 0 as given, every other row reads all
        square = np.ones((N_KEY, N_KEY), dtype=bool)
        square[0] = allowed[0]
        x = t(k, dtype)[None]
        with torch.inference_mode(), profile() as prof:
            out, _ = layer(
                x, x, x, attn_mask=torch.tensor(~square, device=device), need_weights=need_weights
            )
        fast_seen.append(any(e.name == "aten::_native_multi_head_attention" for e in prof.events()))
        return numpy(out[0])

    mha_fast = {}
    for dtype in DTYPES:
        layer = make_fast(dtype)
        mha_fast[dtype] = {}
        for key, need in (("weights", True), ("no_weights", False)):
            fast_seen: list[bool] = []
            mha_fast[dtype][key] = fully_masked_row(
                lambda m, layer=layer, dtype=dtype, need=need: run_fast(layer, dtype, m, need),
                k,
                dtype,
            )
            mha_fast[dtype][f"{key}_fast_path"] = all(fast_seen) and bool(fast_seen)
    # The is_causal hint on the fast path, with a mask that forbids nothing: compared with the same layer
    # given that mask alone and given the causal table alone (square here, so either corner is the same).
    layer = make_fast(PROBE_DTYPE)
    x = t(k)[None]

    def fast(**kwargs):
        with torch.inference_mode(), profile() as prof:
            out, _ = layer(x, x, x, need_weights=False, **kwargs)
        fast_seen.append(any(e.name == "aten::_native_multi_head_attention" for e in prof.events()))
        return numpy(out[0])

    fast_seen = []
    nothing = torch.zeros((N_KEY, N_KEY), dtype=torch.bool, device=device)
    hinted = fast(attn_mask=nothing, is_causal=True)
    readings = {
        "attn_mask": fast(attn_mask=nothing),
        "causal": fast(attn_mask=torch.ones_like(nothing).triu(1)),
    }
    fast_path = {
        "fully_masked": mha_fast,
        "is_causal_with_mask_no_weights": next(
            (name for name, out in readings.items() if np.allclose(hinted, out, atol=1e-6)),
            "other",
        ),
        "is_causal_ran_fast_path": all(fast_seen),
    }
    where = {"version": torch.__version__, "device": device, "dtype": PROBE_DTYPE}
    if device == "cuda":
        where["gpu"] = torch.cuda.get_device_name(0)
    return {
        **where,
        "sdpa": sdpa_facts,
        "sdpa_fully_masked": sdpa_masked,
        "attn_bias": bias_facts,
        "mha": mha_facts,
        "mha_fully_masked": mha_masked,
        "sdpa_fully_masked_finfo_min": finfo_min,
        "mha_fast_path": fast_path,
    }


# -- JAX --------------------------------------------------------------------------------------------
def _jax_device(jax, device: str):
    try:
        return jax.devices(device)[0]
    except RuntimeError as error:  # "Unknown backend cuda": this JAX was built without it
        raise NotHere(f"JAX sees no {device} device: {error}") from error


JAX_IMPLEMENTATIONS = ("xla", "cudnn")


def observe_jax(device: str = "cpu") -> dict:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    place = _jax_device(jax, device)
    q, k, v = inputs()

    def a(x, dtype=PROBE_DTYPE):
        return jax.device_put(jnp.asarray(x, dtype=dtype), place)

    # jax.nn.dot_product_attention takes (batch, length, heads, head_dim) and masks (batch, heads, T, S).
    def dpa(dtype=PROBE_DTYPE, implementation=None, **kwargs):
        for name in ("mask", "bias"):
            if name in kwargs:
                kwargs[name] = a(kwargs[name][None, None], dtype if name == "bias" else bool)

        def shape(x):
            return a(x, dtype)[None, :, None, :]

        out = jax.nn.dot_product_attention(
            shape(q), shape(k), shape(v), implementation=implementation, **kwargs
        )
        return np.asarray(out.astype(jnp.float64))[0, :, 0, :]

    facts = {
        "mask_true": meaning_of_true(lambda m: dpa(mask=m), q, k, v),
        "bias": float_mask_reading(lambda b: dpa(bias=b), q, k, v),
        "is_causal": alignment(dpa(is_causal=True), q, k, v),
        # JAX computes the softmax in float32 even for float64 inputs: the output shows it.
        "precision": precision(lambda m: dpa(mask=m), q, k, v),
    }
    # Which implementation ran when none is named: the one whose output is bit for bit the default's.
    default = dpa(mask=some_mask())
    facts["implementation"] = "other"
    for impl in JAX_IMPLEMENTATIONS:
        try:
            if np.array_equal(dpa(implementation=impl, mask=some_mask()), default):
                facts["implementation"] = impl
                break
        except Exception:  # noqa: BLE001 - not available on this device
            continue

    def masked(dtype, implementation):
        try:
            dpa(dtype, implementation, mask=EVERYTHING)
        except Exception:  # noqa: BLE001 - e.g. "cuDNN is not detected" on a CPU
            return "unavailable"
        return fully_masked_row(lambda m: dpa(dtype, implementation, mask=m), v, dtype)

    grid = {impl: {dtype: masked(dtype, impl) for dtype in DTYPES} for impl in JAX_IMPLEMENTATIONS}
    # The same rows given as a float bias, 0 where allowed and −∞ where forbidden (the default implementation).
    bias_grid = {
        dtype: fully_masked_row(
            lambda m, dtype=dtype: dpa(dtype, bias=np.where(m, 0.0, -np.inf)), v, dtype
        )
        for dtype in DTYPES
    }
    return {
        "version": jax.__version__,
        "device": device,
        "dtype": PROBE_DTYPE,
        "dot_product_attention": facts,
        "fully_masked": grid,
        "fully_masked_bias": bias_grid,
    }


# -- Keras ------------------------------------------------------------------------------------------
def observe_keras(device: str = "cpu") -> dict:
    import jax
    import keras

    q, k, v = inputs()

    def make(dtype):
        # One head, identity projections without bias: the layer computes softmax(q kᵀ/√d + mask) v.
        layer = keras.layers.MultiHeadAttention(num_heads=1, key_dim=D, use_bias=False, dtype=dtype)
        layer(q[None], v[None], key=k[None])  # build the weights
        eye = np.eye(D)
        for dense in (layer.query_dense, layer.key_dense, layer.value_dense):
            dense.kernel.assign(eye[:, None, :])  # (d_model, heads, key_dim)
        layer.output_dense.kernel.assign(eye[None, :, :])  # (heads, key_dim, d_model)
        return layer

    def run(layer, **kwargs):
        out = layer(q[None], v[None], key=k[None], **kwargs)
        return np.asarray(
            out[0] if kwargs.get("return_attention_scores") else out, dtype=np.float64
        )[0]

    with jax.default_device(_jax_device(jax, device)):
        layer = make(PROBE_DTYPE)
        facts = {
            "attention_mask_true": meaning_of_true(
                lambda m: run(layer, attention_mask=m[None]), q, k, v
            ),
            "float_mask": float_mask_reading(lambda m: run(layer, attention_mask=m[None]), q, k, v),
            "use_causal_mask": alignment(run(layer, use_causal_mask=True), q, k, v),
            "precision": precision(lambda m: run(layer, attention_mask=m[None]), q, k, v),
        }
        grid = {}
        for dtype in DTYPES:
            layer = make(dtype)
            grid[dtype] = {
                "fused": fully_masked_row(
                    lambda m, layer=layer: run(layer, attention_mask=m[None]), v, dtype
                ),
                # Asking for the scores takes the layer's own softmax instead of the fused function.
                "with_scores": fully_masked_row(
                    lambda m, layer=layer: run(
                        layer, attention_mask=m[None], return_attention_scores=True
                    ),
                    v,
                    dtype,
                ),
            }
    return {
        "version": keras.__version__,
        "backend": keras.backend.backend(),
        "backend_version": jax.__version__,
        "device": device,
        "dtype": PROBE_DTYPE,
        "MultiHeadAttention": facts,
        "fully_masked": grid,
    }


OBSERVERS = {"torch": observe_torch, "jax": observe_jax, "keras": observe_keras}


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def observe(device: str = "cpu") -> dict:
    """Every library's observations on ``device``. On CUDA a library that is not installed is left out."""
    if device not in DEVICES:
        raise ValueError(f"device 必须是 {' 或 '.join(DEVICES)}，收到 {device!r}")
    if device == "cuda" and not cuda_available():
        raise ValueError("device='cuda'：这台机器上的 PyTorch 看不到 CUDA")
    seen = {}
    for name, observer in OBSERVERS.items():
        try:
            seen[name] = observer(device)
        except (ImportError, NotHere):
            if device == "cpu":  # the crosscheck venv has all three: missing one there is an error
                raise
    return seen


def stored() -> dict:
    return json.loads(STORED.read_text(encoding="utf-8")) if STORED.exists() else {}


def write(device: str, seen: dict) -> None:
    """Store ``seen`` under ``device``, keeping every other device's observations as they were."""
    everything = stored()
    everything[device] = seen
    ordered = {d: everything[d] for d in DEVICES if d in everything}
    STORED.write_text(json.dumps(ordered, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=DEVICES, default="cpu")
    parser.add_argument(
        "--write", action="store_true", help=f"store the observations in {STORED.name}"
    )
    args = parser.parse_args(argv)
    if args.device == "cuda" and not cuda_available():
        parser.exit(0, "no CUDA device here: nothing observed, nothing written\n")
    seen = observe(args.device)
    if args.write:
        write(args.device, seen)
        print(f"wrote the {args.device} observations into {STORED}")
    else:
        print(json.dumps(seen, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
