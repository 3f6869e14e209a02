"""Tests of code/02_costs.py: the counting formulas against explicitly built arrays, the slope
fit on timings made by formula, the numpy attention against the chapter's, the timing loop on a
fake clock, and bad input (a fuzz of every public function).

The doctests in the module run too (``--doctest-modules``). Nothing here checks how fast this
machine is. The module's deliberately wrong versions (``WRONG_VERSIONS``) are the proof that the
explicit counts can fail.
"""

from __future__ import annotations

import importlib
import itertools
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import fuzz_failures, public_functions

costs = importlib.import_module("02_costs")
att = importlib.import_module("02_attention")
CODE = Path(costs.__file__)

small = st.integers(1, 4)


# -- the score table: n² entries -------------------------------------------------------------------
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
    assert c["entries"] == sum(t.size for t in tables)
    assert c["bytes"] == sum(t.nbytes for t in tables)
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


def test_the_mask_does_not_shrink_the_plain_table():
    n = 6
    c = costs.score_costs(n, head_dim=2)
    assert c["entries"] == n * n and c["forbidden"] == n * (n - 1) // 2
    assert c["forbidden"] / c["entries"] < 0.5


# -- the KV cache ----------------------------------------------------------------------------------
def numpy_kv_cache_bytes(layers, kv_heads, head_dim, context, batch, dtype) -> int:
    """An independent reference: allocate every layer's K and V and add up their bytes."""
    cache = [
        {
            "K": np.zeros((batch, kv_heads, context, head_dim), dtype=dtype),
            "V": np.zeros((batch, kv_heads, context, head_dim), dtype=dtype),
        }
        for _ in range(layers)
    ]
    return sum(a.nbytes for layer in cache for a in layer.values())


@given(
    layers=small, kv_heads=small, head_dim=st.integers(1, 6), context=st.integers(1, 9), batch=small
)
@settings(max_examples=20, deadline=None)
def test_kv_formula_matches_explicitly_built_arrays(layers, kv_heads, head_dim, context, batch):
    for dtype, b in ((np.float16, 2), (np.int8, 1)):
        formula = costs.kv_bytes_per_token(layers, kv_heads, head_dim, b) * context * batch
        assert formula == numpy_kv_cache_bytes(layers, kv_heads, head_dim, context, batch, dtype)
    built = costs.build_kv_cache(layers, kv_heads, head_dim, context, batch)
    assert np.array(built[0]["K"]).shape == (batch, kv_heads, context, head_dim)
    per_token = costs.kv_bytes_per_token(layers, kv_heads, head_dim, 2)
    assert costs.count_elements(built) * 2 == per_token * context * batch


def test_kv_cache_bytes_of_a_model_is_per_token_times_context_times_batch():
    m = {
        "name": "tiny",
        "layers": 3,
        "hidden": 8,
        "heads": 4,
        "kv_heads": 2,
        "head_dim": 5,
        "max_positions": 16,
    }
    expected = numpy_kv_cache_bytes(3, 2, 5, 7, 3, np.float16)
    assert costs.kv_cache_bytes(m, context=7, batch=3) == expected
    # The query heads are not in the formula: changing them (at the same K/V heads) changes nothing.
    assert costs.kv_cache_bytes({**m, "heads": 8}, 7, 3) == costs.kv_cache_bytes(m, 7, 3)


@pytest.mark.parametrize("name", list(costs.WRONG_VERSIONS))
def test_each_wrong_version_is_caught_by_an_explicit_count(name):
    formula, wrong = costs.WRONG_VERSIONS[name]
    if formula == "forbidden":  # against the numpy upper triangle, n = 1 … 5
        explicit = [int(np.triu(np.ones((n, n), dtype=bool), k=1).sum()) for n in range(1, 6)]
        assert [wrong(n) for n in range(1, 6)] != explicit
        assert [costs.causal_forbidden(n) for n in range(1, 6)] == explicit
        return
    # Against numpy arrays of the configuration whose head_dim is not hidden ÷ heads, and Gemma-7B.
    for m in (costs.CHECK_MODEL, costs.GEMMA_7B):
        explicit = numpy_kv_cache_bytes(m["layers"], m["kv_heads"], m["head_dim"], 1, 1, np.float16)
        assert wrong(m, 2) != explicit == costs.kv_cache_bytes(m, 1)
    llama = costs.MODELS[0]  # where the two agree, a derived head_dim goes unseen
    assert llama["hidden"] // llama["heads"] == llama["head_dim"]


def test_a_sliding_window_caps_the_positions_stored():
    mistral = costs.MODELS[2]
    qwen = costs.MODELS[3]
    stored = [costs.cached_positions(mistral, c) for c in (1, 4096, 4097, 32768)]
    assert stored == [1, 4096, 4096, 4096]
    assert costs.cached_positions(qwen, 131072) == 131072  # use_sliding_window: false
    assert costs.kv_cache_bytes(mistral, 32768) == costs.kv_cache_bytes(mistral, 4096)
    unwindowed = {**mistral, "sliding_window": None}
    assert costs.kv_cache_bytes(unwindowed, 32768) == 8 * costs.kv_cache_bytes(mistral, 4096)
    with pytest.raises(ValueError, match=re.escape("model['sliding_window'] 必须是不小于 1")):
        costs.cached_positions({**mistral, "sliding_window": 0}, 10)


def test_full_mha_saves_exactly_heads_over_kv_heads():
    for m in costs.MODELS:
        full = costs.full_mha(m)
        assert [full[k] for k in ("kv_heads", "head_dim", "layers")] == [
            m["heads"],
            m["head_dim"],
            m["layers"],
        ]
        assert (
            costs.kv_cache_bytes(full, 4096) * m["kv_heads"]
            == costs.kv_cache_bytes(m, 4096) * m["heads"]
        )


def test_the_published_configurations_are_data_with_their_sources():
    for m in [*costs.MODELS, costs.GEMMA_7B]:
        hf = r"https://huggingface\.co/[\w.-]+/[\w.-]+/blob/main/config\.json"
        assert re.fullmatch(hf, m["source"])
        assert isinstance(m["head_dim_in_config"], bool)  # where head_dim came from is written down
        assert m["dtype"] in {"float16", "bfloat16"}  # torch_dtype as published: 2 bytes either way
        assert m["heads"] % m["kv_heads"] == 0
        if not m["head_dim_in_config"]:  # then Transformers takes hidden ÷ heads, as the data does
            assert m["head_dim"] * m["heads"] == m["hidden"]
    # Values from the published config.json files (see book/references.bib).
    by_name = {m["name"]: m for m in costs.MODELS}
    llama3 = by_name["Llama-3-8B"]
    qwen2 = by_name["Qwen2-7B"]
    gemma = costs.GEMMA_7B
    assert [llama3[k] for k in ("layers", "heads", "kv_heads", "head_dim")] == [32, 32, 8, 128]
    assert [qwen2[k] for k in ("layers", "hidden", "heads", "kv_heads")] == [28, 3584, 28, 4]
    assert (gemma["hidden"], gemma["heads"], gemma["head_dim"]) == (3072, 16, 256)


# -- the slope fit, on timings made by formula (never on this machine's speed) ---------------------
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


# -- the numpy attention that is timed, and the timing loop on a fake clock ------------------------
@given(n=st.integers(1, 6), d=st.integers(1, 3), d_v=st.integers(1, 2), data=st.data())
@settings(max_examples=20, deadline=None)
def test_numpy_attention_equals_the_chapters_attention(n, d, d_v, data):
    value = st.floats(-5, 5, allow_nan=False)
    q = data.draw(st.lists(st.lists(value, min_size=d, max_size=d), min_size=n, max_size=n))
    k = data.draw(st.lists(st.lists(value, min_size=d, max_size=d), min_size=n, max_size=n))
    v = data.draw(st.lists(st.lists(value, min_size=d_v, max_size=d_v), min_size=n, max_size=n))
    _, expected = att.attention(q, k, v)
    assert np.allclose(costs.numpy_attention(q, k, v), expected, atol=1e-9)


def test_numpy_attention_reports_an_overflow_instead_of_returning_nan():
    with pytest.raises(ValueError, match="超出了浮点数的范围"):
        costs.numpy_attention([[1e200], [1e200]], [[1e200], [1e200]], [[1.0], [2.0]])


@pytest.fixture
def fake_clock(monkeypatch):
    """perf_counter reads 0, 1, 2, …: every timed call lasts exactly one second."""
    ticks = itertools.count()
    monkeypatch.setattr(costs.time, "perf_counter", lambda: float(next(ticks)))


def test_timing_takes_the_median_of_repeats_per_length(fake_clock):
    rows = costs.time_attention([4, 8, 16], d=2, repeats=3)
    assert rows == [{"n": n, "median": 1.0, "runs": 3} for n in (4, 8, 16)]


def test_timing_keeps_to_its_budget_with_at_least_one_run_each(fake_clock):
    # Clock: 0 sets the deadline at 3.5; n = 4 runs over 1–2 and 4–5, reads 6, stops; n = 8 once.
    assert [r["runs"] for r in costs.time_attention([4, 8], d=2, repeats=5, budget=3.5)] == [2, 1]
    assert [r["runs"] for r in costs.time_attention([4, 8], d=2, repeats=50, budget=0)] == [1, 1]


def test_timing_on_the_real_clock_returns_one_record_per_length():
    rows = costs.time_attention([4, 8], d=2, repeats=2)
    assert [(r["n"], r["runs"]) for r in rows] == [(4, 2), (8, 2)]
    assert all(isinstance(r["median"], float) and r["median"] >= 0 for r in rows)


# -- bad input: a clear Chinese ValueError naming the argument -------------------------------------
@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: costs.score_costs(0, 2), "n 必须是不小于 1 的整数"),
        (lambda: costs.score_costs(4, 2, heads=True), "heads 必须是不小于 1 的整数"),
        (lambda: costs.score_costs(4.0, 2), "n 必须是不小于 1 的整数"),
        (lambda: costs.score_costs(4, 2, batch=0), "batch 必须是不小于 1 的整数"),
        (lambda: costs.causal_forbidden(-1), "n 必须是不小于 1 的整数"),
        (
            lambda: costs.kv_bytes_per_token(32, 8, 128, 0),
            "bytes_per_element 必须是不小于 1 的整数",
        ),
        (lambda: costs.kv_cache_bytes("Llama", 4096), "model 必须是含 name、layers"),
        (lambda: costs.kv_cache_bytes({"name": "x"}, 4096), "model 必须是含 name、layers"),
        (
            lambda: costs.kv_cache_bytes(
                {k: v for k, v in costs.MODELS[1].items() if k != "head_dim"}, 16
            ),
            "缺少 head_dim",
        ),
        (
            lambda: costs.kv_cache_bytes(costs.MODELS[0], 32768),
            "context=32768 超过了 Llama-2-7B 的最大位置数 4096",
        ),
        (
            lambda: costs.cached_positions(costs.MODELS[1], 8193),
            "context=8193 超过了 Llama-3-8B 的最大位置数 8192",
        ),
        (
            lambda: costs.kv_cache_bytes(costs.MODELS[0], 4096, extrapolate=1),
            "extrapolate 必须是 True 或 False",
        ),
        (
            lambda: costs.kv_cache_bytes({**costs.MODELS[1], "kv_heads": 5}, 16),
            "必须是 kv_heads=5 的整数倍",
        ),
        (
            lambda: costs.kv_cache_bytes({**costs.MODELS[1], "head_dim": "128"}, 16),
            "model['head_dim'] 必须是",
        ),
        (
            lambda: costs.kv_cache_bytes(costs.MODELS[1], 4096, batch=0),
            "batch 必须是不小于 1 的整数",
        ),
        (
            lambda: costs.build_kv_cache(32, 8, 128, 4096),
            "元素总数 2 × layers × batch × kv_heads × context × head_dim 不能超过",
        ),
        (lambda: costs.count_elements([1.0, None]), "nested 里只能有列表、字典和数"),
        (lambda: costs.fit_slope([1, 2], [1.0]), "ns 与 seconds 必须一样长"),
        (lambda: costs.fit_slope([1, 2], [1.0, 0.0]), "seconds[1] 必须是有限的正数"),
        (lambda: costs.fit_slope([1, 2], [1.0, float("inf")]), "seconds[1] 必须是有限的正数"),
        (lambda: costs.fit_slope([5, 5], [1.0, 2.0]), "至少要有两个不同的值"),
        (lambda: costs.time_attention([]), "ns 不能为空"),
        (lambda: costs.time_attention([16], d=0), "d 必须是不小于 1 的整数"),
        (lambda: costs.time_attention([16], d=10**6), "d 不能超过 1024"),
        (lambda: costs.time_attention([16], repeats=0), "repeats 必须是不小于 1 的整数"),
        (lambda: costs.time_attention([16], repeats=10**12), "repeats 不能超过 1000"),
        (lambda: costs.time_attention([9000]), "ns[0] 不能超过 8192"),
        (lambda: costs.time_attention([16], budget=-1), "budget 必须是不小于 0 的有限秒数"),
        (
            lambda: costs.time_attention([16], budget=float("inf")),
            "budget 必须是不小于 0 的有限秒数",
        ),
        (lambda: costs.time_attention([16], budget="1"), "budget 必须是实数"),
        (lambda: costs.numpy_attention([[1.0]], [[1.0, 2.0]], [[1.0]]), "q、k 必须同形状"),
        (
            lambda: costs.numpy_attention([[float("nan")]], [[1.0]], [[1.0]]),
            "q 必须是非空、元素全部有限",
        ),
        (
            lambda: costs.numpy_attention(None, [[1.0]], [[1.0]]),
            "q 必须是非空、元素全部有限的二维数组",
        ),
        (
            lambda: costs.numpy_attention([[1.0]], [[1.0], [2.0, 3.0]], [[1.0]]),
            "k 必须是由实数组成的二维数组",
        ),
        (lambda: costs.numpy_attention(*[np.zeros((9000, 1))] * 3), "q 的行数 不能超过"),
    ],
)
def test_bad_input_gets_a_clear_chinese_error(call, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        call()


Q3 = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
# One valid call of each public function (from its doctest); each argument is replaced in turn.
VALID = {
    costs.causal_forbidden: {"n": 3},
    costs.score_costs: {"n": 4, "head_dim": 2, "heads": 3, "bytes_per_element": 4, "batch": 2},
    costs.kv_bytes_per_token: {
        "layers": 32,
        "kv_heads": 8,
        "head_dim": 128,
        "bytes_per_element": 1,
    },
    costs.kv_cache_bytes: {
        "model": costs.MODELS[1],
        "context": 4096,
        "batch": 8,
        "bytes_per_element": 1,
    },
    costs.cached_positions: {"model": costs.MODELS[2], "context": 32768},
    costs.full_mha: {"model": costs.MODELS[3]},
    costs.build_kv_cache: {"layers": 2, "kv_heads": 1, "head_dim": 3, "context": 4, "batch": 1},
    costs.count_elements: {"nested": [[1.0, 2.0], [3.0]]},
    costs.numpy_attention: {"q": Q3, "k": Q3, "v": [[10.0], [20.0], [30.0]]},
    costs.time_attention: {"ns": [8, 16], "d": 4, "repeats": 2, "seed": 0, "budget": 0.01},
    costs.fit_slope: {"ns": [128, 256, 512], "seconds": [1e-3, 4e-3, 16e-3]},
}


def test_a_missing_key_is_named_and_the_model_is_not_dumped():
    model = {k: v for k, v in costs.MODELS[1].items() if k not in ("layers", "kv_heads")}
    with pytest.raises(ValueError) as error:
        costs.kv_cache_bytes(model, 16)
    assert "缺少 layers、kv_heads" in str(error.value)
    assert "huggingface" not in str(error.value)  # the dict's other values are not printed


def test_a_context_past_the_maximum_positions_is_refused_unless_extrapolating():
    for m in costs.MODELS:
        limit = m["max_positions"]
        assert costs.kv_cache_bytes(m, limit) == costs.kv_cache_bytes(m, limit, extrapolate=True)
        with pytest.raises(ValueError, match=re.escape(f"最大位置数 {limit}")):
            costs.kv_cache_bytes(m, limit + 1)
        per_token = costs.kv_cache_bytes(m, 1)
        longer = costs.kv_cache_bytes(m, 2 * limit, extrapolate=True)
        assert longer == per_token * costs.cached_positions(m, 2 * limit, extrapolate=True)


def test_every_public_function_is_fuzzed():
    assert public_functions(costs) - {"self_test", "run_demo"} == {f.__name__ for f in VALID}


@pytest.mark.parametrize("function", list(VALID), ids=lambda f: f.__name__)
def test_fuzz_every_argument_gets_a_value_error_that_names_it_or_a_result(function):
    assert fuzz_failures(function, VALID[function]) == []  # and no call hangs


# -- the demo and the script -----------------------------------------------------------------------
def test_run_demo_is_deterministic_and_agrees_with_the_direct_count():
    first = costs.run_demo()
    assert first == costs.run_demo()
    tiny = first["小配置_直接计数"]
    assert tiny["公式字节"] == tiny["逐个数出的元素"] * costs.FLOAT16_BYTES
    assert first["KV缓存_每token字节_16位"]["Llama-3-8B"] == 131072
    assert first["KV缓存_最大位置数_16位_字节"]["Mistral-7B-v0.1"] == 4096 * 131072  # the window


def test_script_prints_the_demo_as_json_after_its_self_test():
    run = subprocess.run(
        [sys.executable, str(CODE)], capture_output=True, text=True, check=True, cwd=CODE.parent
    )
    assert json.loads(run.stdout) == json.loads(json.dumps(costs.run_demo()))
