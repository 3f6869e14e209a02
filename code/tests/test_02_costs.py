"""Tests of code/02_costs.py: the counting formulas against explicitly built arrays, the slope fit on
synthetic timings, the generated sentences on other inputs, and bad input.

The doctests in the module run too (``--doctest-modules``). Nothing here checks how fast this machine
is: timings are only ever checked for their shape, and the fit is checked on timings made by formula.
Two deliberately wrong formulas are kept here as the proof that the explicit counts can fail.
"""

from __future__ import annotations

import importlib
import json
import math
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

costs = importlib.import_module("02_costs")
att = importlib.import_module("02_attention")
CODE = Path(costs.__file__)
BIB = CODE.parent.parent / "book" / "references.bib"

small = st.integers(1, 4)


# -- the score table: n² entries ---------------------------------------------------------------------
def numpy_score_tables(n: int, head_dim: int, heads: int, dtype=np.float32) -> list[np.ndarray]:
    """An independent reference: one explicitly built (n, n) score table per head."""
    rng = np.random.default_rng(n * 100 + head_dim * 10 + heads)
    tables = []
    for _ in range(heads):
        q = rng.standard_normal((n, head_dim)).astype(dtype)
        k = rng.standard_normal((n, head_dim)).astype(dtype)
        tables.append(q @ k.T)  # (n, n)
    return tables


@given(n=st.integers(1, 40), head_dim=st.integers(1, 8), heads=small)
@settings(max_examples=20, deadline=None)
def test_score_costs_match_an_explicitly_built_score_table(n, head_dim, heads):
    tables = numpy_score_tables(n, head_dim, heads)
    c = costs.score_costs(n, head_dim, heads, bytes_per_element=4)
    assert c["entries"] == sum(t.size for t in tables)
    assert c["bytes"] == sum(t.nbytes for t in tables)  # float32: 4 bytes a cell
    forbidden = sum(int(np.triu(np.ones((n, n), dtype=bool), k=1).sum()) for _ in tables)
    assert c["forbidden"] == forbidden == heads * costs.causal_forbidden(n)


def counted_multiply_adds(n: int, head_dim: int, heads: int) -> tuple[int, int]:
    """Count the multiply-adds of a plain attention by running its loops (on zeros)."""
    qk = mix = 0
    for _ in range(heads):
        for _i in range(n):
            for _j in range(n):
                for _c in range(head_dim):  # scores[i][j] += q[i][c] * k[j][c]
                    qk += 1
            for _c in range(head_dim):
                for _j in range(n):  # out[i][c] += w[i][j] * v[j][c]
                    mix += 1
    return qk, mix


@given(n=st.integers(1, 20), head_dim=st.integers(1, 6), heads=small, batch=small)
@settings(max_examples=15, deadline=None)
def test_a_batch_has_one_score_table_per_sequence_and_head(n, head_dim, heads, batch):
    tables = [t for _ in range(batch) for t in numpy_score_tables(n, head_dim, heads)]
    c = costs.score_costs(n, head_dim, heads, 4, batch=batch)
    assert c["entries"] == sum(t.size for t in tables) and c["bytes"] == sum(t.nbytes for t in tables)
    one = costs.score_costs(n, head_dim, heads, 4)
    assert c == {key: value * batch for key, value in one.items()}


@given(n=st.integers(1, 12), head_dim=st.integers(1, 5), heads=small)
@settings(max_examples=25, deadline=None)
def test_multiply_adds_match_the_loops_of_a_plain_attention(n, head_dim, heads):
    c = costs.score_costs(n, head_dim, heads)
    assert (c["qk_madds"], c["mix_madds"]) == counted_multiply_adds(n, head_dim, heads)


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_causal_forbidden_counts_the_visibility_table_of_the_chapter(n):
    visible = att.visibility(n, n)
    assert costs.causal_forbidden(n) == sum(not x for row in visible for x in row)


def test_a_wrong_forbidden_count_is_caught():
    # Mutant: counting the diagonal as forbidden, n(n+1)/2. The explicit count must disagree.
    wrong = lambda n: n * (n + 1) // 2  # noqa: E731
    n = 5
    explicit = int(np.triu(np.ones((n, n), dtype=bool), k=1).sum())
    assert wrong(n) != explicit == costs.causal_forbidden(n)


def test_the_mask_does_not_shrink_the_plain_table():
    # The plain numpy attention computes every cell: the scores it builds are (n, n) whatever the mask.
    n = 6
    c = costs.score_costs(n, head_dim=2)
    assert c["entries"] == n * n and c["forbidden"] == n * (n - 1) // 2
    assert c["forbidden"] / c["entries"] < 0.5


# -- the KV cache -------------------------------------------------------------------------------------
def numpy_kv_cache_bytes(layers, kv_heads, head_dim, context, batch, dtype) -> int:
    """An independent reference: allocate every layer's K and V and add up their bytes."""
    cache = [
        {"K": np.zeros((batch, kv_heads, context, head_dim), dtype=dtype),
         "V": np.zeros((batch, kv_heads, context, head_dim), dtype=dtype)}
        for _ in range(layers)
    ]
    return sum(a.nbytes for layer in cache for a in layer.values())


@given(layers=small, kv_heads=small, head_dim=st.integers(1, 6), context=st.integers(1, 9), batch=small)
@settings(max_examples=20, deadline=None)
def test_kv_formula_matches_explicitly_built_arrays(layers, kv_heads, head_dim, context, batch):
    for dtype, b in ((np.float16, 2), (np.int8, 1)):
        formula = costs.kv_bytes_per_token(layers, kv_heads, head_dim, b) * context * batch
        assert formula == numpy_kv_cache_bytes(layers, kv_heads, head_dim, context, batch, dtype)
    built = costs.build_kv_cache(layers, kv_heads, head_dim, context, batch)
    assert costs.count_elements(built) * 2 == costs.kv_bytes_per_token(layers, kv_heads, head_dim, 2) * context * batch


def test_kv_cache_bytes_of_a_model_is_per_token_times_context_times_batch():
    m = {"name": "tiny", "layers": 3, "hidden": 8, "heads": 4, "kv_heads": 2, "head_dim": 5, "max_positions": 16}
    assert costs.kv_cache_bytes(m, context=7, batch=3) == numpy_kv_cache_bytes(3, 2, 5, 7, 3, np.float16)
    # The query heads are not in the formula: changing them (at the same K/V heads) changes nothing.
    assert costs.kv_cache_bytes({**m, "heads": 8}, 7, 3) == costs.kv_cache_bytes(m, 7, 3)


def test_a_formula_without_the_factor_two_is_caught():
    # Mutant: forgetting that K and V are stored separately.
    wrong = lambda layers, kv_heads, head_dim, b: layers * kv_heads * head_dim * b  # noqa: E731
    assert wrong(2, 2, 3, 2) * 5 != numpy_kv_cache_bytes(2, 2, 3, 5, 1, np.float16)


def test_a_derived_head_dim_is_caught_on_gemma():
    # Mutant: head_dim = hidden // heads. For Gemma-7B the explicit cache with the configured
    # head_dim (one layer, one token) disagrees with it; for Llama-2-7B the two happen to agree.
    g = costs.GEMMA_7B
    explicit = numpy_kv_cache_bytes(1, g["kv_heads"], g["head_dim"], 1, 1, np.float16)
    derived = costs.kv_bytes_per_token(1, g["kv_heads"], g["hidden"] // g["heads"], 2)
    assert derived != explicit == costs.kv_bytes_per_token(1, g["kv_heads"], g["head_dim"], 2)
    llama = costs.MODELS[0]
    assert llama["hidden"] // llama["heads"] == llama["head_dim"]


def test_full_mha_saves_exactly_heads_over_kv_heads():
    for m in costs.MODELS:
        full = costs.full_mha(m)
        assert full["kv_heads"] == m["heads"] and full["head_dim"] == m["head_dim"] and full["layers"] == m["layers"]
        assert costs.kv_cache_bytes(full, 4096) * m["kv_heads"] == costs.kv_cache_bytes(m, 4096) * m["heads"]


def test_the_published_configurations_are_data_with_their_sources():
    keys = set(re.findall(r"^@\w+\{(\w+),", BIB.read_text(encoding="utf-8"), flags=re.M))
    wanted = {"llama2_7b_config", "llama3_8b_config", "mistral7b_config", "qwen2_7b_config"}
    assert {m["cite"] for m in costs.MODELS} == wanted
    for m in [*costs.MODELS, costs.GEMMA_7B]:
        assert m["cite"] in keys
        assert m["source"].startswith("https://huggingface.co/") and m["source"].endswith("/config.json")
        assert m["head_dim_from"]  # where head_dim came from is written down
        assert m["heads"] % m["kv_heads"] == 0
    # Values from the published config.json files (see book/references.bib).
    by_name = {m["name"]: m for m in costs.MODELS}
    assert [by_name["Llama-3-8B"][k] for k in ("layers", "heads", "kv_heads", "head_dim")] == [32, 32, 8, 128]
    assert [by_name["Qwen2-7B"][k] for k in ("layers", "hidden", "heads", "kv_heads")] == [28, 3584, 28, 4]
    assert (costs.GEMMA_7B["hidden"], costs.GEMMA_7B["heads"], costs.GEMMA_7B["head_dim"]) == (3072, 16, 256)


# -- sizes and generated sentences on other inputs ---------------------------------------------------
@pytest.mark.parametrize(
    "nbytes, text",
    [(0, "0 B"), (1023, "1023 B"), (1024, "1 KiB"), (1536, "1.5 KiB"), (57344, "56 KiB"),
     (1644167168, "1.53 GiB"), (2**40, "1 TiB")],
)
def test_size(nbytes, text):
    assert costs.size(nbytes) == text


sizes = st.lists(st.integers(1, 2**34), min_size=1, max_size=6)


@given(sizes)
@settings(max_examples=20, deadline=None)
def test_compare_sentence_names_the_smallest_and_largest_with_the_ratio(values):
    names = [f"M{i}" for i in range(len(values))]
    sentence = costs.compare_sentence(names, values, "条件")
    low, high = min(values), max(values)
    if low == high:
        assert "一样大" in sentence and costs.size(low) in sentence
        return
    smallest = re.search(r"最小的是 (.+?)（(.+?)）", sentence)
    largest = re.search(r"最大的是 (.+?)（(.+?)）", sentence)
    assert set(re.split("、|与", smallest.group(1))) == {n for n, v in zip(names, values) if v == low}
    assert set(re.split("、|与", largest.group(1))) == {n for n, v in zip(names, values) if v == high}
    assert (smallest.group(2), largest.group(2)) == (costs.size(low), costs.size(high))
    ratio = float(re.search(r"最小者的 ([\d.]+) 倍", sentence).group(1))
    assert ratio == pytest.approx(high / low, abs=0.051)
    assert ("约" in sentence) == (not (high / low).is_integer())


def test_compare_sentence_of_the_page_follows_its_table():
    values = [costs.kv_cache_bytes(m, 4096) for m in costs.MODELS]
    sentence = costs.compare_sentence([m["name"] for m in costs.MODELS], values, "上下文 4096")
    smallest = costs.MODELS[values.index(min(values))]["name"]
    largest = costs.MODELS[values.index(max(values))]["name"]
    assert f"最小的是 {smallest}（{costs.size(min(values))}）" in sentence
    assert f"最大的是 {largest}（{costs.size(max(values))}）" in sentence


def _model(name, heads, kv_heads, layers=2, head_dim=4, hidden=None):
    return {"name": name, "layers": layers, "hidden": hidden or heads * head_dim, "heads": heads,
            "kv_heads": kv_heads, "head_dim": head_dim, "max_positions": 64}


def test_query_heads_sentence_on_other_models():
    a, b = _model("A", heads=12, kv_heads=12), _model("B", heads=12, kv_heads=3)
    sentence = costs.query_heads_sentence([a, b])
    assert sentence.startswith("A 与 B 都有 12 个查询头，K/V 头却分别是 12 个和 3 个")
    assert "相差 4 倍" in sentence
    odd = costs.query_heads_sentence([_model("C", heads=6, kv_heads=3, head_dim=4), _model("D", heads=6, kv_heads=2, head_dim=5)])
    assert "分别是 96 B 和 80 B，约相差 1.2 倍" in odd  # 3×4 against 2×5 numbers a token
    even = costs.query_heads_sentence([_model("F", heads=4, kv_heads=4, head_dim=4), _model("G", heads=4, kv_heads=2, head_dim=8)])
    assert "却都是 128 B" in even
    assert "没有" in costs.query_heads_sentence([a, _model("E", heads=8, kv_heads=2)])


def test_head_dim_sentence_on_other_models():
    same = costs.head_dim_sentence(_model("S", heads=4, kv_heads=4, head_dim=8, hidden=32))
    assert "一致" in same and "巧合" in same
    more = costs.head_dim_sentence(_model("M", heads=4, kv_heads=4, head_dim=8, hidden=64))
    assert "hidden ÷ heads = 64 ÷ 4 = 16" in more and "多算了 100%" in more
    less = costs.head_dim_sentence(_model("L", heads=3, kv_heads=3, head_dim=16, hidden=40))
    assert "13.33" in less and "少算了" in less


@pytest.mark.parametrize(
    "slope, words",
    [(2.0, "一致"), (1.8, "一致"), (2.25, "一致"), (1.0, "明显低于 2"), (3.0, "明显高于 2")],
)
def test_slope_sentence_reads_the_slope(slope, words):
    sentence = costs.slope_sentence(slope)
    assert words in sentence
    assert f"拟合斜率是 {slope:.2f}" in sentence
    assert f"约变为 {2 ** slope:.1f} 倍" in sentence


# -- the slope fit, on timings made by formula (never on this machine's speed) -----------------------
NS = [128, 256, 512, 1024, 2048]


@given(p=st.floats(0.5, 3.5), c=st.floats(1e-10, 1e-2))
@settings(max_examples=15, deadline=None)
def test_fit_recovers_the_exponent_of_exact_power_laws(p, c):
    slope, log_c = costs.fit_slope(NS, [c * n**p for n in NS])
    assert slope == pytest.approx(p, abs=1e-9)
    assert log_c == pytest.approx(math.log(c), abs=1e-7)


@given(p=st.floats(1.0, 3.0), noise=st.lists(st.floats(0.9, 1.1), min_size=5, max_size=5))
@settings(max_examples=15, deadline=None)
def test_fit_with_bounded_noise_stays_close_and_equals_numpy(p, noise):
    seconds = [1e-9 * n**p * e for n, e in zip(NS, noise)]
    slope, _ = costs.fit_slope(NS, seconds)
    assert slope == pytest.approx(np.polyfit(np.log(NS), np.log(seconds), 1)[0], abs=1e-9)
    xs = [math.log(n) for n in NS]
    mx = sum(xs) / len(xs)
    bound = math.log(1.1 / 0.9) * sum(abs(x - mx) for x in xs) / sum((x - mx) ** 2 for x in xs)
    assert abs(slope - p) <= bound


laws = st.fixed_dictionaries({
    "coefficient": st.floats(1e-12, 1e-2),
    "power": st.floats(0.5, 3.5),
    "noise": st.lists(st.floats(0.5, 2.0), max_size=4).map(tuple),
})


@given(law=laws)
@settings(max_examples=15, deadline=None)
def test_synthetic_seconds_follow_their_law_and_a_noiseless_law_fits_exactly(law):
    seconds = costs.synthetic_seconds(NS, law)
    noise = list(law["noise"]) or [1.0]
    assert seconds == pytest.approx([law["coefficient"] * n ** law["power"] * noise[i % len(noise)]
                                     for i, n in enumerate(NS)], rel=1e-12)
    slope, _ = costs.fit_slope(NS, costs.synthetic_seconds(NS, {**law, "noise": ()}))
    assert slope == pytest.approx(law["power"], abs=1e-9)


def latex_value(formula: str, n: float) -> float:
    """Read a law_formula back by hand: ``t = [m \\times] [10^{e}] n[^{p}]`` evaluated at n."""
    found = re.fullmatch(r"t = (?:([\d.]+) )?(?:\\times )?(?:10\^\{(-?\d+)\} )?n(?:\^\{([\d.e+-]+)\})?", formula)
    assert found, formula
    mantissa, exponent, power = found.groups()
    return float(mantissa or 1) * 10.0 ** int(exponent or 0) * n ** float(power or 1)


@given(law=laws)
@settings(max_examples=20, deadline=None)
def test_the_formula_shown_is_the_law_used(law):
    formula = costs.law_formula(law)
    for n in (3.0, 100.0):
        # six significant digits are shown, of the coefficient and of the power
        assert latex_value(formula, n) == pytest.approx(law["coefficient"] * n ** law["power"], rel=2e-4)
    label = costs.law_label(law)
    assert label.startswith(f"${formula}$")
    assert ("依次轮流乘以" in label) == bool(law["noise"])


def test_the_sentence_lists_every_law_and_its_noise_factors():
    plain = {"coefficient": 5e-7, "power": 1.5, "noise": ()}
    noisy = {"coefficient": 1.0, "power": 2, "noise": (1.25, 0.75, 1.0)}
    sentence = costs.synthetic_sentence([plain, noisy, plain])
    assert sentence == (
        "$t = 5 \\times 10^{-7} n^{1.5}$、$t = 5 \\times 10^{-7} n^{1.5}$，"
        "以及在 $t = n^{2}$ 上依次轮流乘以 1.25、0.75 与 1 的“带噪声”版本"
    )
    assert costs.synthetic_sentence([noisy]).startswith("在 $t = n^{2}$ 上")
    assert "以及" not in costs.synthetic_sentence([plain])


def test_the_pages_noisy_law_actually_moves_the_slope():
    # Mutant: a noise pattern symmetric about the middle length (1.1, 0.9, 1.1, 0.9, 1.1) leaves the
    # fitted slope exactly as it was, so it would test nothing. The page's noisy law must move it.
    symmetric = {"coefficient": 3e-9, "power": 2, "noise": (1.1, 0.9)}
    assert costs.fit_slope(NS, costs.synthetic_seconds(NS, symmetric))[0] == pytest.approx(2, abs=1e-12)
    for law in costs.SYNTHETIC_LAWS:
        slope, _ = costs.fit_slope(NS, costs.synthetic_seconds(NS, law))
        if law["noise"]:
            assert abs(slope - law["power"]) > 1e-3
        else:
            assert slope == pytest.approx(law["power"], abs=1e-9)


def test_timing_returns_one_median_per_length_without_checking_speed():
    rows = costs.time_attention([4, 8, 16], d=2, repeats=2)
    assert [r["n"] for r in rows] == [4, 8, 16] and [r["runs"] for r in rows] == [2, 2, 2]
    assert all(isinstance(r["median"], float) and r["median"] > 0 for r in rows)


def test_timing_keeps_to_its_budget_with_at_least_one_run_each():
    assert [r["runs"] for r in costs.time_attention([4, 8], d=2, repeats=50, budget=0.0)] == [1, 1]


# -- the numpy attention that is timed --------------------------------------------------------------
@given(n=st.integers(1, 6), d=st.integers(1, 3), d_v=st.integers(1, 2), data=st.data())
@settings(max_examples=20, deadline=None)
def test_numpy_attention_equals_the_chapters_attention(n, d, d_v, data):
    value = st.floats(-5, 5, allow_nan=False)
    q = data.draw(st.lists(st.lists(value, min_size=d, max_size=d), min_size=n, max_size=n))
    k = data.draw(st.lists(st.lists(value, min_size=d, max_size=d), min_size=n, max_size=n))
    v = data.draw(st.lists(st.lists(value, min_size=d_v, max_size=d_v), min_size=n, max_size=n))
    _, expected = att.attention(q, k, v)
    assert np.allclose(costs.numpy_attention(q, k, v), expected, atol=1e-9)


# -- bad input: a clear Chinese ValueError naming the argument --------------------------------------
@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: costs.score_costs(0, 2), "n 必须是不小于 1 的整数"),
        (lambda: costs.score_costs(4, 2, heads=True), "heads 必须是不小于 1 的整数"),
        (lambda: costs.score_costs(4.0, 2), "n 必须是不小于 1 的整数"),
        (lambda: costs.score_costs(4, 2, batch=0), "batch 必须是不小于 1 的整数"),
        (lambda: costs.synthetic_seconds([1, 2], "t = n"), "law 必须是含 coefficient、power、noise 三项的字典"),
        (lambda: costs.synthetic_seconds([1, 2], {"coefficient": 0.0, "power": 1, "noise": ()}), "law['coefficient'] 必须是正数"),
        (lambda: costs.synthetic_seconds([1, 2], {"coefficient": 1.0, "power": "2", "noise": ()}), "law['power'] 必须是有限的实数"),
        (lambda: costs.synthetic_seconds([1, 2], {"coefficient": 1.0, "power": 1, "noise": 1.1}), "law['noise'] 必须是有序的列表"),
        (lambda: costs.synthetic_seconds([0, 2], costs.SYNTHETIC_LAWS[0]), "ns[0] 必须是有限的正数"),
        (lambda: costs.synthetic_seconds([10], {"coefficient": 1.0, "power": 1e5, "noise": ()}), "超出了浮点数的范围"),
        (lambda: costs.law_formula({"coefficient": 1.0}), "law 必须是含 coefficient、power、noise 三项的字典"),
        (lambda: costs.synthetic_sentence([]), "laws 不能为空"),
        (lambda: costs.causal_forbidden(-1), "n 必须是不小于 1 的整数"),
        (lambda: costs.kv_bytes_per_token(32, 8, 128, 0), "bytes_per_element 必须是不小于 1 的整数"),
        (lambda: costs.kv_bytes_per_token(32, 8, 128.0), "head_dim 必须是不小于 1 的整数"),
        (lambda: costs.kv_cache_bytes("Llama", 4096), "model 必须是一个配置字典"),
        (lambda: costs.kv_cache_bytes({"name": "x"}, 4096), "model 缺少配置项"),
        (lambda: costs.kv_cache_bytes({**costs.MODELS[1], "kv_heads": 5}, 16), "必须是 K/V 头数 kv_heads=5 的整数倍"),
        (lambda: costs.kv_cache_bytes({**costs.MODELS[1], "head_dim": "128"}, 16), "model['head_dim'] 必须是"),
        (lambda: costs.kv_cache_bytes(costs.MODELS[1], 4096, batch=0), "batch 必须是不小于 1 的整数"),
        (lambda: costs.build_kv_cache(32, 8, 128, 4096), "只造小缓存"),
        (lambda: costs.count_elements([1.0, None]), "nested 里只能有列表、字典和数"),
        (lambda: costs.size(-1), "nbytes 必须是不小于 0 的整数"),
        (lambda: costs.compare_sentence(["A"], [1, 2], "c"), "names 与 nbytes 必须非空且一样长"),
        (lambda: costs.compare_sentence("AB", [1, 2], "c"), "names 必须是有序的列表"),
        (lambda: costs.slope_sentence(float("nan")), "slope 必须是有限的实数"),
        (lambda: costs.fit_slope([1, 2], [1.0]), "ns 与 seconds 必须一样长"),
        (lambda: costs.fit_slope([1, 2], [1.0, 0.0]), "seconds[1] 必须是有限的正数"),
        (lambda: costs.fit_slope([1, 2], [1.0, float("inf")]), "seconds[1] 必须是有限的正数"),
        (lambda: costs.fit_slope([5], [1.0]), "至少要有两个不同的值"),
        (lambda: costs.time_attention([]), "ns 不能为空"),
        (lambda: costs.time_attention([16], d=0), "d 必须是不小于 1 的整数"),
        (lambda: costs.time_attention([16], repeats=0), "repeats 必须是不小于 1 的整数"),
        (lambda: costs.time_attention([9000]), "必须是 1 到 8192 之间的整数"),
        (lambda: costs.time_attention([16], budget=-1), "budget 必须是不小于 0 的秒数"),
        (lambda: costs.time_attention([16], budget="1"), "budget 必须是有限的实数"),
        (lambda: costs.numpy_attention([[1.0]], [[1.0, 2.0]], [[1.0]]), "q、k 必须是同形状"),
        (lambda: costs.numpy_attention([[float("nan")]], [[1.0]], [[1.0]]), "元素必须有限"),
    ],
)
def test_bad_input_gets_a_clear_chinese_error(call, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        call()


# -- the demo and the script -------------------------------------------------------------------------
def test_run_demo_is_fast_and_deterministic():
    start = time.perf_counter()
    first = costs.run_demo()
    assert time.perf_counter() - start < 0.2
    assert first == costs.run_demo()
    assert first["小配置_直接计数"]["公式字节"] == first["小配置_直接计数"]["逐个数出的元素"] * 2


def test_script_prints_the_demo_as_json_after_its_self_test():
    run = subprocess.run([sys.executable, str(CODE)], capture_output=True, text=True, check=True)
    assert json.loads(run.stdout) == json.loads(json.dumps(costs.run_demo()))
