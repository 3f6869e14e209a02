"""The costs page's exercises: every answer against an independent computation (numpy arrays, counting),
bad input, and the downloaded files run alone."""

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


def numpy_counts(n: int, head_dim: int, heads: int, batch: int, nbytes: int) -> dict:
    """Build the score tables as arrays and count; multiply-adds by the shapes of the two products."""
    tables = np.zeros((batch, heads, n, n), dtype=np.dtype(f"f{nbytes}"))
    forbidden = np.triu(np.ones((n, n), dtype=bool), 1)
    return {
        "entries": tables.size,
        "bytes": tables.nbytes,
        "qk_madds": batch * heads * n * n * head_dim,  # (n, d) @ (d, n): n·n outputs of d products each
        "mix_madds": batch * heads * n * head_dim * n,  # (n, n) @ (n, d): n·d outputs of n products each
        "forbidden": batch * heads * int(forbidden.sum()),
    }


def test_the_score_table_answer_equals_numpy_arrays():
    s = ex.score_table_steps()
    args = (ex.TABLE_HEAD_DIM, ex.TABLE_HEADS, ex.TABLE_BATCH, ex.TABLE_BYTES)
    assert s["small"] == numpy_counts(ex.TABLE_N, *args)
    assert s["large"] == numpy_counts(ex.TABLE_SCALE * ex.TABLE_N, *args)
    n, k = ex.TABLE_N, ex.TABLE_SCALE
    assert s["ratio"]["entries"] == k**2
    assert s["ratio"]["forbidden"] == pytest.approx(k * n * (k * n - 1) / (n * (n - 1)))


def numpy_kv_bytes(layers, kv_heads, head_dim, context, batch, dtype) -> int:
    k = np.zeros((layers, batch, kv_heads, context, head_dim), dtype=dtype)
    return 2 * k.nbytes  # one K and one V of that shape


def test_the_kv_answers_equal_numpy_arrays():
    m = ex.EX_MODEL
    grouped, full, low = ex.kv_plans()
    layers, head_dim, context, batch = m["layers"], m["head_dim"], ex.KV_CONTEXT, ex.KV_BATCH
    assert grouped["total"] == numpy_kv_bytes(layers, m["kv_heads"], head_dim, context, batch, np.float16)
    assert full["total"] == numpy_kv_bytes(layers, m["heads"], head_dim, context, batch, np.float16)
    assert low["total"] == numpy_kv_bytes(layers, m["kv_heads"], head_dim, context, batch, np.int8)
    assert grouped["per_token"] * context * batch == grouped["total"]


def test_the_kv_plans_follow_the_query_and_kv_heads_on_other_models():
    m = ex.EX_MODEL
    for heads, kv_heads in ((6, 2), (4, 4), (8, 1)):
        grouped, full, low = ex.kv_plans({**m, "heads": heads, "kv_heads": kv_heads})
        assert full["total"] * kv_heads == grouped["total"] * heads
        assert grouped["total"] == 2 * low["total"]  # float16 against 8 bits


def numpy_small_checks(head_dim_of, two: int, forbidden_of) -> list[bool]:
    """The four checks recomputed with numpy arrays for one variant of the formulas."""
    b = ex.FLOAT16_BYTES
    out = []
    for m in (ex.SMALL_A, ex.SMALL_B):
        counted = numpy_kv_bytes(m["layers"], m["kv_heads"], m["head_dim"], ex.SMALL_CONTEXT, 1, np.float16)
        formula = two * m["layers"] * m["kv_heads"] * head_dim_of(m) * b * ex.SMALL_CONTEXT
        out.append(formula == counted)
    out.append(abs(forbidden_of(ex.BIG_N) / ex.BIG_N**2 - 0.5) <= ex.HALF_TOL)
    out.append(all(forbidden_of(n) == int(np.triu(np.ones((n, n)), 1).sum()) for n in ex.SMALL_NS))
    return out


def test_each_variant_meets_the_checks_numpy_says():
    right_dim = lambda m: m["head_dim"]  # noqa: E731
    naive_dim = lambda m: m["hidden"] / m["heads"]  # noqa: E731
    right_forbidden = lambda n: n * (n - 1) // 2  # noqa: E731
    wrong_forbidden = lambda n: n * (n + 1) // 2  # noqa: E731
    expected = [
        numpy_small_checks(right_dim, 2, right_forbidden),
        numpy_small_checks(right_dim, 1, right_forbidden),
        numpy_small_checks(naive_dim, 2, right_forbidden),
        numpy_small_checks(right_dim, 2, wrong_forbidden),
    ]
    c = ex.bug_checks()
    assert [r["ok"] for r in c["rows"]] == expected
    assert expected[0] == [True] * 4  # the right formulas pass every check
    assert not any(r["ok"][2] is False for r in c["rows"])  # the "about half" check catches nothing
    # The two small configurations are chosen so that the coincidence holds for one and not the other.
    assert ex.SMALL_A["hidden"] / ex.SMALL_A["heads"] == ex.SMALL_A["head_dim"]
    assert ex.SMALL_B["hidden"] / ex.SMALL_B["heads"] != ex.SMALL_B["head_dim"]


@pytest.mark.parametrize("past", [0, 1, 3, 7])
@pytest.mark.parametrize("new", [1, 2, 4, 5])
def test_forbidden_cells_equals_the_visibility_table_and_numpy(new, past):
    table = att.visibility(new, past + new, past=past)
    counted = sum(not ok for row in table for ok in row)
    causal = np.tril(np.ones((new, past + new), dtype=bool), past)
    assert ex.forbidden_cells(new, past) == counted == int((~causal).sum())


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: ex.forbidden_cells(0), "new"),
        (lambda: ex.forbidden_cells(2, -1), "past"),
        (lambda: ex.forbidden_cells(2.0), "new"),
        (lambda: ex.forbidden_cells(True), "new"),
        (lambda: ex.score_table_steps(scale=1), "scale"),
        (lambda: ex.score_table_steps(n=0), "n"),
        (lambda: ex.kv_plans({**ex.EX_MODEL, "kv_heads": 3}), "整数倍"),
        (lambda: ex.kv_plans(context=0), "context"),
        (lambda: ex.forbidden_cells(10**12), "new"),
    ],
)
def test_bad_input_is_named(call, words):
    with pytest.raises(ValueError, match=words):
        call()


VALID = {
    ex.score_table_steps: {"n": 6, "head_dim": 4, "heads": 2, "batch": 3, "bytes_per_element": 2, "scale": 2},
    ex.kv_plans: {"model": ex.EX_MODEL, "context": 1000, "batch": 2},
    ex.forbidden_cells: {"new": 4, "past": 3},
    ex.bug_checks: {"variants": ex.VARIANTS},
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
        run = subprocess.run([sys.executable, "-E", "-s", script], cwd=tmp_path, capture_output=True, text=True,
                             check=True)
        assert json.loads(run.stdout) == json.loads(json.dumps(check()))
