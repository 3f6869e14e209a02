"""What the tests of the teaching code share: Hypothesis strategies and independent numpy references.

A reference here is the same mechanism written again with numpy arrays, independently of the
pure-Python teaching code, so that a test compares two implementations rather than one with itself.
Test files import them with ``from reference import …``. (They are not in a conftest.py: tests/ has
a conftest.py of its own, and only one module named ``conftest`` can be imported by name at a time.)
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st


# -- strategies -------------------------------------------------------------------------------------------
def reals(bound: float) -> st.SearchStrategy[float]:
    """Finite floats in [−bound, bound]: scores and vectors small enough that nothing overflows."""
    return st.floats(min_value=-bound, max_value=bound, allow_nan=False, allow_infinity=False)


def matrices(rows: int, cols: int, elements: st.SearchStrategy[float]) -> st.SearchStrategy[list[list[float]]]:
    """A ``rows × cols`` list of lists drawn from ``elements``."""
    return st.lists(st.lists(elements, min_size=cols, max_size=cols), min_size=rows, max_size=rows)


@st.composite
def attention_problems(draw, *, bound: float = 50.0, with_past: bool = True, max_d: int = 3):
    """Random Q, K, V with a cache offset: one attention problem, ``(q, k, v, past)``."""
    d = draw(st.integers(1, max_d))
    d_v = draw(st.integers(1, 2))
    past = draw(st.integers(0, 3)) if with_past else 0
    n_query = draw(st.integers(1, 4))
    n_key = past + n_query
    cell = reals(bound)
    return draw(matrices(n_query, d, cell)), draw(matrices(n_key, d, cell)), draw(matrices(n_key, d_v, cell)), past


# -- numpy references ---------------------------------------------------------------------------------------
def numpy_softmax(scores, axis: int = -1) -> np.ndarray:
    """Softmax along ``axis``, −∞ entries weighing exactly 0."""
    scores = np.asarray(scores, dtype=float)
    shifted = np.exp(scores - scores.max(axis=axis, keepdims=True))
    return shifted / shifted.sum(axis=axis, keepdims=True)


def numpy_attention(q, k, v, visible=None, *, d: int | None = None):
    """Scaled dot-product attention with a boolean visibility table: ``(weights, outputs)``.

    ``d`` is the dimension the scores are divided by (√d); by default the width of K.
    """
    q, k, v = (np.asarray(x, dtype=float) for x in (q, k, v))
    scores = q @ k.T / np.sqrt(d or k.shape[1])  # (n_query, n_key)
    if visible is not None:
        scores = np.where(np.asarray(visible, dtype=bool), scores, -np.inf)
    weights = numpy_softmax(scores)
    return weights, weights @ v


def numpy_causal(n_query: int, n_key: int) -> np.ndarray:
    """The causal table with the queries at the last positions: query i sees keys 0 … n_key − n_query + i."""
    past = n_key - n_query
    return np.arange(n_key)[None, :] <= past + np.arange(n_query)[:, None]
