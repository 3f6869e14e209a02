"""What the tests of the teaching code share: Hypothesis strategies and independent numpy references

A reference here is the same mechanism written again with numpy arrays, independently of the
pure-Python teaching code, so that a test compares two implementations rather than one with itself.
Test files import them with ``from reference import …``. The bad-input fuzz lives here too: ``BAD``
and ``fuzz_failures``. (They are not in a conftest.py: tests/ has
a conftest.py of its own, and only one module named ``conftest`` can be imported by name at a time.)
"""

from __future__ import annotations

import functools
import inspect
import math
import pickle
import signal

import numpy as np
from hypothesis import strategies as st


# -- strategies ------------------------------------------------------------------------------------
def reals(bound: float) -> st.SearchStrategy[float]:
    """Finite floats in [−bound, bound]: scores and vectors small enough that nothing overflows."""
    return st.floats(min_value=-bound, max_value=bound, allow_nan=False, allow_infinity=False)


def matrices(
    rows: int, cols: int, elements: st.SearchStrategy[float]
) -> st.SearchStrategy[list[list[float]]]:
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
    return (
        draw(matrices(n_query, d, cell)),
        draw(matrices(n_key, d, cell)),
        draw(matrices(n_key, d_v, cell)),
        past,
    )


@st.composite
def unmasked_problems(draw, cells: st.SearchStrategy[float], *, max_d: int = 6, max_keys: int = 5):
    """Random Q, K, V without a mask (every query reads every key): ``(q, k, v)``."""
    d = draw(st.integers(1, max_d))
    d_v = draw(st.integers(1, 3))
    n_query = draw(st.integers(1, 4))
    n_key = draw(st.integers(1, max_keys))
    return (
        draw(matrices(n_query, d, cells)),
        draw(matrices(n_key, d, cells)),
        draw(matrices(n_key, d_v, cells)),
    )


# -- numpy references ------------------------------------------------------------------------------
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
    """The causal table with the queries last: query i sees keys 0 … n_key − n_query + i."""
    past = n_key - n_query
    return np.arange(n_key)[None, :] <= past + np.arange(n_query)[:, None]


# -- the bad-input fuzz ----------------------------------------------------------------------------
BAD = [
    None,
    "x",
    math.nan,
    math.inf,
    -math.inf,
    -1,
    0,
    True,
    [],
    [[1.0], [1.0, 2.0]],
    [[1.0, 2.0], [3.0]],
    10**12,
    2.5,
    [[math.nan, 0.0]],
    {"a": 1},
]


class _Hang(Exception):
    pass


def _hang(signum, frame):
    raise _Hang


# What each call answered, kept for the whole run: the per-file fuzz tests and test_bad_input.py
# replace the arguments of the same functions by the same ``BAD`` values, often in the same calls
# (the doctests' calls and the per-file tables overlap once the defaults are filled in). A call is
# made once; a repeat reads its answer here. Keyed by the function object and the pickled bound
# arguments, so only calls equal argument for argument (``True`` is not ``1``) share an answer;
# arguments that cannot be pickled (a lambda) are simply called again.
_ANSWERS: dict = {}
_signature = functools.cache(inspect.signature)  # asked once per function, not once per call


def answer(function, args: tuple = (), kwargs: dict | None = None) -> tuple[str, str] | None:
    """What ``function(*args, **kwargs)`` does: ``None`` for a result, else ``(kind, message)``
    with kind the exception's name, or ``"hang"`` when no answer came within 5 s."""
    kwargs = kwargs or {}
    try:
        bound = _signature(function).bind(*args, **kwargs)
        bound.apply_defaults()
        key = (function, pickle.dumps(bound.arguments))
    except Exception:  # noqa: BLE001 - arguments that do not bind or pickle: no sharing
        key = None
    if key is not None and key in _ANSWERS:
        return _ANSWERS[key]
    old = signal.signal(signal.SIGALRM, _hang)
    signal.alarm(5)
    try:
        function(*args, **kwargs)
        result = None
    except _Hang:
        result = ("hang", "")
    except Exception as error:  # noqa: BLE001 - what the fuzz looks for
        result = (type(error).__name__, str(error))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    if key is not None:
        _ANSWERS[key] = result
    return result


def public_functions(module) -> set[str]:
    """The names of the public functions ``module`` defines: what a fuzz must cover."""
    return {
        name
        for name, f in vars(module).items()
        if inspect.isfunction(f) and f.__module__ == module.__name__ and not name.startswith("_")
    }


def fuzz_failures(
    function,
    kwargs: dict,
    *,
    args: tuple = (),
    names: bool = True,
    spoken: dict | None = None,
    entries: bool = False,
) -> list[str]:
    """What goes wrong when each argument of a valid call is replaced, one at a time, by ``BAD``.

    ``function(*args, **kwargs)`` must work. Then every replaced call must answer within 5 s with a
    result or a ``ValueError``; with ``names`` the message must contain, case aside, the name of an
    argument of the call (the replaced one, or another whose rule it breaks) or the word ``spoken``
    gives for it. ``entries`` also replaces the first entry of each list argument. Returns one
    sentence per failure. A call without arguments has nothing to replace: it is not made here
    (``self_test``, ``run_demo``, ``answers``: each file's run, a test of its own, calls them).
    """
    if not args and not kwargs:
        return []
    valid = answer(function, args, kwargs)
    if valid is not None:  # the valid call itself works
        return [f"{function.__name__}(…): the valid call raised {valid[0]}: {valid[1]}"]
    positional = [
        p.name
        for p in _signature(function).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    labels = [
        *(positional[i] if i < len(positional) else f"args[{i}]" for i in range(len(args))),
        *kwargs,
    ]
    words = [w.lower() for label in labels for w in (label, (spoken or {}).get(label, label))]
    slots = [*enumerate(args), *kwargs.items()]
    failures = []
    for (slot, good), label in zip(slots, labels):
        lists = (
            [[bad, *good[1:]] for bad in BAD] if entries and isinstance(good, list) and good else []
        )
        for bad in BAD + lists:
            a = list(args)
            kw = dict(kwargs)
            if isinstance(slot, int):
                a[slot] = bad
            else:
                kw[slot] = bad
            call = f"{function.__name__}({label}={bad!r})"
            got = answer(function, tuple(a), kw)
            if got is None:
                continue
            kind, message = got
            if kind == "ValueError":
                if names and not any(w in message.lower() for w in words):
                    failures.append(f"{call}: ValueError naming no argument: {message}")
            elif kind == "hang":
                failures.append(f"{call}: no answer within 5 s")
            else:
                failures.append(f"{call}: {kind}: {message}")
    return failures
