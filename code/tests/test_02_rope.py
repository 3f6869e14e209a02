"""Tests of code/02_rope.py: the offset property, norms, both pair layouts, the cache and bad input.

The doctests of the module run too. These tests add what examples cannot show: that the properties
hold on many random inputs (hypothesis), that numpy computes the same rotation independently, that
the checks can fail — the mixed layout and the row-index offset are kept in the module as the
mistakes the checks must catch — and that every public function answers bad input with a ValueError.
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
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import fuzz_failures

rope = importlib.import_module("02_rope")
att = importlib.import_module("02_attention")

# -- strategies ------------------------------------------------------------------------------------
finite = st.floats(min_value=-4, max_value=4, allow_nan=False, allow_infinity=False)
dims = st.sampled_from([2, 4, 6, 8])
positions = st.integers(0, 300)
bases = st.sampled_from([10.0, 100.0, 10000.0, 500000.0])
layouts = st.sampled_from(rope.LAYOUTS)


def vectors(d):
    return st.lists(finite, min_size=d, max_size=d)


@st.composite
def pair_of_vectors(draw, dim=dims):
    d = draw(dim)
    return draw(vectors(d)), draw(vectors(d))


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def close(a, b, tol=1e-9):
    return all(math.isclose(x, y, rel_tol=tol, abs_tol=tol) for x, y in zip(a, b))


def numpy_rotate(x, m, base, layout):
    """An independent reference: HF-style x·cos + rotate_half(x)·sin, or its interleaved twin."""
    x = np.asarray(x, dtype=float)
    d = len(x)
    theta = base ** (-np.arange(0, d, 2) / d)
    if layout == "half":
        phi = np.concatenate([theta, theta]) * m
        rotated = np.concatenate([-x[d // 2 :], x[: d // 2]])
    else:
        phi = np.repeat(theta, 2) * m
        rotated = np.stack([-x[1::2], x[0::2]], axis=1).reshape(-1)
    return x * np.cos(phi) + rotated * np.sin(phi)


# -- the rotation itself ---------------------------------------------------------------------------
@settings(max_examples=15, deadline=None)
@given(pair_of_vectors(), positions, layouts, bases)
def test_rotation_equals_numpy(qk, m, layout, base):
    q, _ = qk
    expected = numpy_rotate(q, m, base, layout)
    assert np.allclose(rope.rotate(q, m, base, layout), expected, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(pair_of_vectors(), positions, positions, st.integers(0, 300), layouts, bases)
def test_score_depends_only_on_the_offset(qk, m, n, shift, layout, base):
    q, k = qk
    before = dot(rope.rotate(q, m, base, layout), rope.rotate(k, n, base, layout))
    after = dot(rope.rotate(q, m + shift, base, layout), rope.rotate(k, n + shift, base, layout))
    assert math.isclose(before, after, rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=15, deadline=None)
@given(pair_of_vectors(), positions, layouts, bases)
def test_rotation_keeps_the_norm(qk, m, layout, base):
    q, _ = qk
    length = math.hypot(*rope.rotate(q, m, base, layout))
    assert math.isclose(length, math.hypot(*q), rel_tol=1e-12, abs_tol=1e-12)


@settings(max_examples=15, deadline=None)
@given(pair_of_vectors(), layouts, bases)
def test_position_zero_is_the_identity(qk, layout, base):
    q, _ = qk
    assert rope.rotate(q, 0, base, layout) == q


@settings(max_examples=15, deadline=None)
@given(pair_of_vectors(), positions, layouts)
def test_rope_scores_use_the_chapters_scaled_dot_product(qk, m, layout):
    q, k = qk
    qr = rope.rotate(q, m, layout=layout)
    kr = rope.rotate(k, 1, layout=layout)
    score = rope.rope_scores([q], [k], [m], [1], layout=layout)[0][0]
    assert math.isclose(score, dot(qr, kr) / math.sqrt(len(q)), abs_tol=1e-12)


def test_d2_is_a_plain_rotation_by_m_radians():
    for m in range(6):
        c = math.cos(m)
        s = math.sin(m)
        assert close(rope.rotate([0.3, -0.7], m), [0.3 * c + 0.7 * s, -0.7 * c + 0.3 * s], 1e-12)


def test_frequencies_follow_the_formula_for_d4_and_d8():
    assert rope.frequencies(4, 10000.0) == [1.0, 10000.0**-0.5]
    assert close(rope.frequencies(8, 10000.0), [1.0, 0.1, 0.01, 0.001], 1e-12)


# -- two layouts, one rotation ---------------------------------------------------------------------
@settings(max_examples=15, deadline=None)
@given(pair_of_vectors(st.sampled_from([2, 4, 6, 8, 12])), positions, bases)
def test_the_layouts_agree_after_the_permutation(qk, m, base):
    q, _ = qk
    order = rope.layout_permutation(len(q))
    half = rope.rotate(rope.permute(q, order), m, base, "half")
    assert close(rope.permute(rope.rotate(q, m, base), order), half, 1e-12)


@settings(max_examples=15, deadline=None)
@given(pair_of_vectors(), positions, positions)
def test_permuting_both_q_and_k_keeps_every_score(qk, m, n):
    q, k = qk
    order = rope.layout_permutation(len(q))
    adjacent = rope.rope_scores([q], [k], [m], [n])[0][0]
    qh = rope.permute(q, order)
    kh = rope.permute(k, order)
    half = rope.rope_scores([qh], [kh], [m], [n], layout="half")[0][0]
    assert math.isclose(adjacent, half, rel_tol=1e-9, abs_tol=1e-9)


def test_permuting_weight_columns_converts_a_model_between_layouts():
    # The chapter's convention: q = x @ W_q, so the column j of W_q makes q_j.
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 3))
    w_q = rng.normal(size=(3, 8))
    w_k = rng.normal(size=(3, 8))
    order = rope.layout_permutation(8)
    ps = [0, 1, 2, 3]
    xs = x.tolist()
    adjacent = rope.rope_scores(att.matmul(xs, w_q.tolist()), att.matmul(xs, w_k.tolist()), ps, ps)
    qh = (x @ w_q[:, order]).tolist()
    kh = (x @ w_k[:, order]).tolist()
    converted = rope.rope_scores(qh, kh, ps, ps, layout="half")
    unconverted = rope.rope_scores((x @ w_q).tolist(), (x @ w_k).tolist(), ps, ps, layout="half")
    assert np.allclose(adjacent, converted, atol=1e-12)
    assert not np.allclose(adjacent, unconverted, atol=1e-3)


@pytest.mark.parametrize("n_heads, n_kv_heads", [(2, 2), (4, 2), (4, 1)])
def test_with_several_heads_the_columns_are_permuted_inside_each_heads_block(n_heads, n_kv_heads):
    # Hugging Face's Llama conversion: q_proj in blocks of the query heads, k_proj of the K/V heads.
    rng = np.random.default_rng(n_heads + n_kv_heads)
    d_head = 4
    ps = [0, 1, 2]
    x = rng.normal(size=(3, 5))
    w_q = rng.normal(size=(5, n_heads * d_head))
    w_k = rng.normal(size=(5, n_kv_heads * d_head))

    def scores(wq, wk, layout):  # query head h reads K/V head h // (n_heads / n_kv_heads)
        q = x @ wq
        k = x @ wk
        group = n_heads // n_kv_heads

        def block(m, j):
            return m[:, j * d_head : (j + 1) * d_head].tolist()

        return [
            rope.rope_scores(block(q, h), block(k, h // group), ps, ps, layout=layout)
            for h in range(n_heads)
        ]

    reference = scores(w_q, w_k, "adjacent")
    per_q = rope.head_permutation(n_heads, d_head)
    per_k = rope.head_permutation(n_kv_heads, d_head)
    assert np.allclose(scores(w_q[:, per_q], w_k[:, per_k], "half"), reference, atol=1e-12)
    whole_q = rope.layout_permutation(n_heads * d_head)
    whole_k = rope.layout_permutation(n_kv_heads * d_head)
    assert not np.allclose(scores(w_q[:, whole_q], w_k[:, whole_k], "half"), reference, atol=1e-3)
    assert sorted(per_q) == list(range(n_heads * d_head))


def offset_gap(rotate, q, k, m, n, shift):
    """How much q·k changes when both positions move by ``shift`` (0 for a relative rotation)."""
    return abs(dot(rotate(q, m), rotate(k, n)) - dot(rotate(q, m + shift), rotate(k, n + shift)))


def test_the_offset_check_catches_the_mixed_layout():
    q = rope.DEMO_Q8
    k = rope.DEMO_K8

    def right(x, m):
        return rope.rotate(x, m, 100.0)

    def mixed(x, m):
        return rope.mixed_rotate(x, m, 100.0)

    assert offset_gap(right, q, k, 5, 2, 4) < 1e-12
    assert offset_gap(mixed, q, k, 5, 2, 4) > 1e-3


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from([4, 6, 8]), st.integers(0, 2**32 - 1), st.sampled_from([10.0, 100.0, 10000.0])
)
def test_the_mixed_layout_fails_the_offset_property_on_random_vectors(d, seed, base):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=d).tolist()
    k = rng.normal(size=d).tolist()

    def mixed(x, m):
        return rope.mixed_rotate(x, m, base)

    gaps = [offset_gap(mixed, q, k, m, 0, shift) for m in (1, 3) for shift in (1, 2, 5)]
    assert max(gaps) > 1e-6


def test_the_mixed_layout_changes_norms():
    x = [1.0, 1.0, 0.0, 0.0]
    assert not math.isclose(math.hypot(*rope.mixed_rotate(x, 2)), math.hypot(*x))


# -- the cache and its offset ----------------------------------------------------------------------
@st.composite
def sequences(draw):
    n = draw(st.integers(2, 6))
    d = draw(st.sampled_from([2, 4]))

    def matrix(cols):
        return st.lists(vectors(cols), min_size=n, max_size=n)

    q = draw(matrix(d))
    k = draw(matrix(d))
    v = draw(matrix(1))
    cuts = draw(st.lists(st.booleans(), min_size=n - 1, max_size=n - 1))
    chunks = []
    size = 1
    for cut in cuts:
        if cut:
            chunks.append(size)
            size = 0
        size += 1
    chunks.append(size)
    return q, k, v, chunks


@settings(max_examples=15, deadline=None)
@given(sequences())
def test_cached_decoding_equals_the_full_recomputation(problem):
    q, k, v, chunks = problem
    _, full = rope.full_attention(q, k, v)
    assert att.max_abs_diff(rope.decode(q, k, v, chunks), full) < 1e-9
    assert att.max_abs_diff(rope.decode(q, k, v, [1] * len(q)), full) < 1e-9


def test_the_full_recomputation_equals_numpy():
    q = k = rope.DEMO_SEQ
    ps = range(len(q))
    qr = np.array([numpy_rotate(x, m, rope.BASE, "adjacent") for x, m in zip(q, ps)])
    scores = qr @ qr.T / np.sqrt(2)
    scores[np.triu_indices(len(q), 1)] = -np.inf
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    _, out = rope.full_attention(q, k, rope.DEMO_V)
    assert np.allclose(out, w @ np.array(rope.DEMO_V), atol=1e-12)


@pytest.mark.parametrize("chunks", [[1, 1, 1, 1, 1], [3, 2], [2, 1, 2]])
def test_the_invariant_catches_the_row_index_offset(chunks):
    q = k = rope.DEMO_SEQ
    _, full = rope.full_attention(q, k, rope.DEMO_V)
    assert att.max_abs_diff(rope.row_index_decode(q, k, rope.DEMO_V, chunks), full) > 1e-3


def test_the_row_index_offset_is_harmless_only_without_a_cache():
    q = k = rope.DEMO_SEQ
    _, full = rope.full_attention(q, k, rope.DEMO_V)
    # One step over the whole sequence: row index and absolute position coincide.
    assert att.max_abs_diff(rope.row_index_decode(q, k, rope.DEMO_V, [5]), full) < 1e-12


def test_token_by_token_row_index_decoding_forgets_positions_altogether():
    q = k = rope.DEMO_SEQ
    _, plain = att.attention(q, k, rope.DEMO_V)
    assert att.max_abs_diff(rope.row_index_decode(q, k, rope.DEMO_V, [1] * 5), plain) < 1e-12


def test_v_is_never_rotated_the_cache_keeps_values_as_given():
    ck, cv, _, _ = rope.cached_step(
        [], [], [[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [3.0, 4.0]], [3, 4]
    )
    assert cv == [[1.0, 2.0], [3.0, 4.0]]
    assert close(ck[0], rope.rotate([1.0, 0.0], 3)) and close(ck[1], rope.rotate([0.0, 1.0], 4))


def test_cached_step_does_not_change_the_old_cache():
    ck = rope.rotate_rows([[1.0, 0.0]], [0])
    cv = [[1.0]]
    rope.cached_step(ck, cv, [[0.0, 1.0]], [[0.0, 1.0]], [[2.0]], [1])
    assert len(ck) == len(cv) == 1


# -- left padding ----------------------------------------------------------------------------------
@settings(max_examples=15, deadline=None)
@given(st.integers(0, 4), st.lists(st.booleans(), max_size=6))
def test_padded_positions_count_the_real_tokens_before(pads, tail):
    valid = [False] * pads + [True] + tail
    ps = rope.padded_positions(valid)
    assert ps == [sum(valid[:j]) for j in range(len(valid))]
    assert ps[pads] == 0  # the first real token is at position 0, however many PADs precede it


def _padded_new_token_scores(prefill_positions, new_position, pads):
    seq = rope.DEMO_SEQ[:4]
    q = seq[-1]
    k = seq[:-1]
    v = rope.DEMO_V[:3]
    pad_rows = [[0.0, 0.0]] * pads
    ck = rope.rotate_rows(pad_rows + k, prefill_positions)
    cv = [[0.0]] * pads + v
    valid = [False] * pads + [True] * 4
    _, _, w, out = rope.cached_step(
        ck, cv, [q], [q], [rope.DEMO_V[3]], [new_position], key_valid=valid
    )
    return out


@pytest.mark.parametrize("pads", [1, 2, 3])
def test_left_padding_needs_consistent_positions(pads):
    _, full = rope.full_attention(rope.DEMO_SEQ[:4], rope.DEMO_SEQ[:4], rope.DEMO_V[:4])
    valid = [False] * pads + [True] * 3
    counted = _padded_new_token_scores(rope.padded_positions(valid), 3, pads)
    shifted = _padded_new_token_scores(list(range(pads + 3)), pads + 3, pads)
    mixed = _padded_new_token_scores(rope.padded_positions(valid), pads + 3, pads)
    assert att.max_abs_diff(counted, full[3:]) < 1e-12
    assert att.max_abs_diff(shifted, full[3:]) < 1e-9  # a uniform shift is harmless to RoPE alone
    assert att.max_abs_diff(mixed, full[3:]) > 1e-3


# -- long range ------------------------------------------------------------------------------------
def test_slowest_wavelength_is_the_period_of_the_slowest_pair():
    for d, base in [(8, 100.0), (16, 10000.0)]:
        wave = rope.slowest_wavelength(d, base)
        assert math.isclose(wave, 2 * math.pi / rope.frequencies(d, base)[-1], rel_tol=1e-12)


def test_model_bases_name_their_sources_in_the_bibliography():
    book = Path(rope.__file__).resolve().parent.parent / "book"
    bib = (book / "references.bib").read_text(encoding="utf-8")
    for row in rope.MODEL_BASES:
        assert "@misc{" + row["source"] + "," in bib
    assert [row["base"] for row in rope.MODEL_BASES] == [10000.0, 500000.0, 1000000.0]
    waves = [rope.slowest_wavelength(row["head_dim"], row["base"]) for row in rope.MODEL_BASES]
    assert waves == sorted(waves)
    assert rope.run_demo()["最慢波长"] == {r["model"]: w for r, w in zip(rope.MODEL_BASES, waves)}


# -- bad input -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: rope.frequencies(3), "d 必须是不小于 2 的偶数"),
        (lambda: rope.frequencies(0), "d 必须是不小于 2 的整数"),
        (lambda: rope.frequencies(True), "d 必须是"),
        (lambda: rope.frequencies(10**12), "d 不能超过 4096"),
        (lambda: rope.frequencies(4, 0), "base 必须是不小于 1 的有限数"),
        (lambda: rope.frequencies(4, 0.5), "base 必须是不小于 1 的有限数"),
        (lambda: rope.frequencies(4, -10.0), "base 必须是不小于 1 的有限数"),
        (lambda: rope.frequencies(4, float("inf")), "base 必须是不小于 1 的有限数"),
        (lambda: rope.frequencies(4, "10000"), "base 必须是实数"),
        (lambda: rope.frequencies(4, 10**400), "base 超出浮点数的范围"),
        (lambda: rope.rotate([1.0, 2.0, 3.0], 1), "x 的长度 d 必须是偶数"),
        (lambda: rope.rotate([], 1), "x 不能为空"),
        (lambda: rope.rotate([1.0, 0.0], -1), "position 必须是不小于 0 的整数"),
        (lambda: rope.rotate([1.0, 0.0], 1.5), "position 必须是不小于 0 的整数"),
        (lambda: rope.rotate([1.0, 0.0], 10**400), "position 不能超过 2\\*\\*53"),
        (lambda: rope.rotate([1.0, float("nan")], 1), r"x\[1\] 是 nan"),
        (lambda: rope.rotate([1.0, 0.0], 1, layout="interleaved"), "layout 必须是 'adjacent'"),
        (lambda: rope.rotate([1.0, 0.0], 1, layout=["half"]), "layout 必须是 'adjacent'"),
        (lambda: rope.rotate("ab", 1), "x 必须是有序的列表"),
        (lambda: rope.rotate_rows([[1.0, 0.0]], [0, 1]), "positions 的个数必须等于行数 1"),
        (lambda: rope.rotate_rows([[1.0, 0.0]], [-2]), r"positions\[0\] 必须是不小于 0 的整数"),
        (lambda: rope.rope_scores([[1.0, None]], [[1.0, 0.0]], [0], [0]), r"Q\[0\]\[1\] 必须是"),
        (lambda: rope.permute([1.0, 2.0], [0, 0]), "order 必须是 0 … 1 的一个排列"),
        (lambda: rope.permute([1.0, 2.0], [None, "x"]), "order 必须是 0 … 1 的一个排列"),
        (lambda: rope.full_attention([[1.0, 0.0]], [[1.0, 0.0]] * 2, [[1.0]] * 2), "行数必须相同"),
        (
            lambda: rope.cached_step([[1.0, 0.0]], [], [[1.0, 0.0]], [[1.0, 0.0]], [[1.0]], [1]),
            "cache_k 与 cache_v 的行数",
        ),
        (
            lambda: rope.cached_step(None, [], [[1.0, 0.0]], [[1.0, 0.0]], [[1.0]], [0]),
            "cache_k 必须是有序的列表",
        ),
        (
            lambda: rope.decode([[1.0, 0.0]] * 2, [[1.0, 0.0]] * 2, [[1.0]] * 2, [1]),
            "chunks 之和必须等于序列长度 2",
        ),
        (
            lambda: rope.decode([[1.0, 0.0]] * 2, [[1.0, 0.0]] * 2, [[1.0]] * 2, [0, 2]),
            r"chunks\[0\] 必须是不小于 1",
        ),
        (lambda: rope.padded_positions([]), "valid 的长度 必须是不小于 1"),
        (lambda: rope.padded_positions([1, 0]), r"valid\[0\] 必须是 True 或 False"),
        (lambda: rope.padded_positions([True] * 5000), "valid 的长度 不能超过 4096"),
        (lambda: rope.slowest_wavelength(5), "d 必须是不小于 2 的偶数"),
    ],
)
def test_bad_input_gets_a_value_error_that_names_it(call, words):
    with pytest.raises(ValueError, match=words):
        call()


# The fuzz of issue 20: each public function, called as in its doctest, with one argument at a time
# replaced by a bad value. The answer is a result or a ValueError, never another error or a hang.
Q2 = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
V2 = [[10.0], [20.0], [30.0]]
VALID_CALLS = {
    "frequencies": (4,),
    "pairs": (8, "half"),
    "angles": (4, 2, 10000.0, "half"),
    "rotate": ([1.0, 0.0], 1, 100.0, "adjacent"),
    "mixed_rotate": ([1.0, 1.0, 0.0, 0.0], 2, 100.0),
    "rotate_rows": ([[1.0, 0.0], [1.0, 0.0]], [0, 1], 100.0, "adjacent"),
    "rope_scores": ([[1.0, 0.0]], [[1.0, 0.0]], [3], [1], 100.0, "half"),
    "layout_permutation": (8,),
    "head_permutation": (2, 4),
    "permute": ([10.0, 11.0, 12.0, 13.0], [0, 2, 1, 3]),
    "full_attention": (Q2, Q2, V2, 100.0),
    "cached_step": ([[1.0, 0.0]], [[10.0]], [[0.0, 1.0]], [[0.0, 1.0]], [[20.0]], [1]),
    "decode": (Q2, Q2, V2, [1, 2], 100.0),
    "row_index_decode": (Q2, Q2, V2, [2, 1], 100.0),
    "padded_positions": ([False, True, True],),
    "slowest_wavelength": (128, 10000.0),
}


def test_the_fuzz_covers_every_public_function():
    assert set(VALID_CALLS) == set(rope.__all__) - {"self_test", "run_demo"}


@pytest.mark.parametrize("name", sorted(VALID_CALLS))
def test_bad_arguments_get_a_value_error_and_nothing_else(name):
    assert fuzz_failures(getattr(rope, name), {}, args=VALID_CALLS[name], names=False) == []


def test_huge_sizes_are_refused_not_built():
    for call in (
        lambda: rope.pairs(10**12),
        lambda: rope.layout_permutation(10**12),
        lambda: rope.angles(10**12, 1),
    ):
        with pytest.raises(ValueError, match="不能超过"):
            call()


# -- the script ------------------------------------------------------------------------------------
def test_running_the_file_self_tests_and_prints_the_demo_as_json():
    run = subprocess.run(
        [sys.executable, rope.__file__], capture_output=True, text=True, check=True
    )
    demo = json.loads(run.stdout)
    assert demo == json.loads(json.dumps(rope.run_demo(), ensure_ascii=False))
    assert demo["逐词解码与整段重算之差"] < 1e-12 < demo["按行号旋转与整段重算之差"]


def test_self_test_fails_when_the_offset_is_the_row_index(monkeypatch):
    monkeypatch.setattr(rope, "decode", rope.row_index_decode)
    with pytest.raises(AssertionError, match="整段重算"):
        rope.self_test()


def test_self_test_fails_when_the_layouts_are_mixed(monkeypatch):
    def wrong(x, m, base=rope.BASE, layout="adjacent"):
        return rope.mixed_rotate(x, m, base)

    monkeypatch.setattr(rope, "rotate", wrong)
    with pytest.raises(AssertionError):
        rope.self_test()


def test_the_other_mix_breaks_the_offset_property_too():
    # Angles laid out for adjacent pairs, pairs taken as halves: the mirror image of mixed_rotate.
    def other(x, m):
        return rope._turn(x, rope.angles(len(x), m, 100.0, "adjacent"), "half")

    assert offset_gap(other, rope.DEMO_Q8, rope.DEMO_K8, 5, 2, 4) > 1e-3
