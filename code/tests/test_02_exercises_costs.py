"""The costs page's exercises: every answer against an independent computation (numpy arrays,
counting), bad input, and the downloaded files run alone."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from reference import fuzz_failures, public_functions

ex = importlib.import_module("02_exercises_costs")
costs = importlib.import_module("02_costs")
att = importlib.import_module("02_attention")
CODE = Path(costs.__file__).parent


def test_the_crossover_is_the_first_length_where_the_table_outnumbers_the_cache():
    m = ex.EX_MODEL
    first = ex.table_beats_cache()["first"]

    def table_beats_cache(n):  # numpy arrays of one layer's score tables and of the whole cache
        tables = np.zeros((m["heads"], n, n))
        cache = np.zeros((2, m["layers"], m["kv_heads"], n, m["head_dim"]))
        return tables.size > cache.size

    ns = range(1, first + 3)
    assert [table_beats_cache(n) for n in ns] == [n >= first for n in ns]
    for heads, kv_heads in ((4, 4), (8, 1), (6, 2)):
        other = {**m, "heads": heads, "kv_heads": kv_heads}
        n = ex.table_beats_cache(other)["first"]
        per = 2 * m["layers"] * kv_heads * m["head_dim"]
        assert heads * n * n > per * n >= heads * (n - 1) ** 2


def numpy_kv_bytes(layers, kv_heads, head_dim, context, batch, dtype) -> int:
    k = np.zeros((layers, batch, kv_heads, context, head_dim), dtype=dtype)
    return 2 * k.nbytes  # one K and one V of that shape


def test_the_kv_answers_equal_numpy_arrays():
    m = ex.EX_MODEL
    grouped, full, low = ex.kv_plans()
    layers = m["layers"]
    head_dim = m["head_dim"]
    context = ex.KV_CONTEXT
    batch = ex.KV_BATCH
    kv_heads = m["kv_heads"]
    assert grouped["total"] == numpy_kv_bytes(
        layers, kv_heads, head_dim, context, batch, np.float16
    )
    heads = m["heads"]
    assert full["total"] == numpy_kv_bytes(layers, heads, head_dim, context, batch, np.float16)
    assert low["total"] == numpy_kv_bytes(layers, m["kv_heads"], head_dim, context, batch, np.int8)
    assert grouped["per_token"] * context * batch == grouped["total"]


def test_the_kv_plans_follow_the_query_and_kv_heads_on_other_models():
    m = ex.EX_MODEL
    for heads, kv_heads in ((6, 2), (4, 4), (8, 1)):
        grouped, full, low = ex.kv_plans({**m, "heads": heads, "kv_heads": kv_heads})
        assert full["total"] * kv_heads == grouped["total"] * heads
        assert grouped["total"] == 2 * low["total"]  # 16 bits against 8 bits


def test_the_window_caps_the_cache_at_its_size_and_saves_the_rest():
    m = ex.EX_MODEL
    w = ex.WINDOW
    for r in ex.window_rows():
        c = r["context"]
        assert r["positions"] == min(c, w)
        shape = (m["layers"], m["kv_heads"], m["head_dim"])
        assert r["windowed"] == numpy_kv_bytes(*shape, min(c, w), 1, np.float16)
        assert r["full"] == numpy_kv_bytes(*shape, c, 1, np.float16)
    assert ex.window_rows(contexts=[w - 1, w, w + 1])[-1]["positions"] == w


@pytest.mark.parametrize("prompt", [1, 2, 4, 7])
@pytest.mark.parametrize("steps", [0, 1, 3])
def test_generation_cells_count_the_tables_a_plain_generation_builds(prompt, steps):
    with_cache = prompt * prompt  # the prompt's table, then one row of n keys per new token
    without = prompt * prompt
    for n in range(prompt + 1, prompt + steps + 1):
        rows = att.visibility(1, n, past=n - 1)
        with_cache += sum(len(row) for row in rows)
        without += int(np.ones((n, n)).size)
    assert ex.generation_cells(prompt, steps) == with_cache
    assert ex.generation_cells(prompt, steps, cache=False) == without


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: ex.generation_cells(0, 1), "prompt"),
        (lambda: ex.generation_cells(2, -1), "steps"),
        (lambda: ex.generation_cells(2.0, 1), "prompt"),
        (lambda: ex.generation_cells(True, 1), "prompt"),
        (lambda: ex.generation_cells(2, 1, cache=1), "cache"),
        (lambda: ex.generation_cells(10**12, 1), "prompt"),
        (lambda: ex.table_beats_cache({**ex.EX_MODEL, "kv_heads": 3}), "整数倍"),
        (lambda: ex.window_rows(window=0), "window"),
        (lambda: ex.window_rows(contexts=[0]), "context"),
        (lambda: ex.kv_plans({**ex.EX_MODEL, "kv_heads": 3}), "整数倍"),
        (lambda: ex.kv_plans(context=0), "context"),
    ],
)
def test_bad_input_is_named(call, words):
    with pytest.raises(ValueError, match=words):
        call()


VALID = {
    ex.table_beats_cache: {"model": ex.EX_MODEL},
    ex.kv_plans: {"model": ex.EX_MODEL, "context": 1000, "batch": 2},
    ex.window_rows: {"model": ex.EX_MODEL, "window": 256, "contexts": [100, 4000]},
    ex.generation_cells: {"prompt": 4, "steps": 3, "cache": False},
}


def test_every_public_function_is_fuzzed():
    assert public_functions(ex) - {"answers", "self_test"} == {f.__name__ for f in VALID}


@pytest.mark.parametrize("function", list(VALID), ids=lambda f: f.__name__)
def test_fuzz_every_argument_gets_a_value_error_that_names_it_or_a_result(function):
    assert fuzz_failures(function, VALID[function]) == []


def test_the_downloads_run_alone_and_print_json(tmp_path):
    # What a reader does: the three files in an empty folder, run without the book's environment.
    for name in ("02_attention.py", "02_costs.py", "02_exercises_costs.py"):
        shutil.copy(CODE / name, tmp_path / name)
    for script, check in (("02_costs.py", costs.run_demo), ("02_exercises_costs.py", ex.answers)):
        run = subprocess.run(
            [sys.executable, "-E", "-s", script],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        )
        assert json.loads(run.stdout) == json.loads(json.dumps(check()))
