"""The training page's exercises: every answer against an independent computation, the listing,
bad input.

The solution sentences the page builds from these answers are tested in
tests/test_chapter_training.py.
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from reference import fuzz_failures, public_functions

ex = importlib.import_module("02_exercises_training")
tr = importlib.import_module("02_training")


def test_the_floor_answers_count_the_targets_that_no_earlier_token_determines():
    for (vocab, length, lag), a in zip(ex.FLOOR_CASES, ex.floor_answers()):
        # brute force: position t's target (token t + 1) repeats an earlier token iff t + 1 ≥ lag
        x = tr.sequences(200, seed=3, vocab=vocab, length=length, lag=lag)
        determined = [
            bool(np.all(x[:, t + 1] == x[:, t + 1 - lag])) and t + 1 - lag >= 0
            for t in range(length - 1)
        ]
        assert a["unpredictable"] == [t for t, ok in enumerate(determined) if not ok]
        assert math.isclose(a["floor"], len(a["unpredictable"]) / (length - 1) * math.log(vocab))


def test_the_guess_answers_equal_numpy():
    a = ex.guess_answers()
    z = np.asarray(ex.GUESS_LOGITS)
    p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    assert np.allclose(a["p"], p)
    assert np.allclose(a["losses"], [-np.log(p[t]) for t in ex.GUESS_TARGETS])
    assert a["losses"][1] > a["ln_vocab"] > a["losses"][0]
    assert math.isclose(a["uniform"], math.log(len(z)))


def test_the_cache_answers_are_the_mask_pages_tables():
    att = importlib.import_module("02_attention")
    a = ex.cache_answers()
    past = ex.CACHE_PAST
    assert a["absolute"] == (past, att.visibility(1, past + 1, past=past)[0])
    assert a["row_index"] == (0, att.row_index_visibility(1, past + 1)[0])


@pytest.mark.parametrize("seed", [0, 1])
def test_future_weight_is_the_strict_upper_triangle_of_each_row(seed):
    w = np.random.default_rng(seed).dirichlet(np.ones(5), size=5)
    assert np.allclose(ex.future_weight(w.tolist()), np.triu(w, 1).sum(axis=1))
    assert ex.future_weight(np.tril(w).tolist()) == [0.0] * 5


@pytest.mark.parametrize("seed", [4, 9])  # seeds the page does not use
def test_the_ahead_answers_against_a_mask_built_here_on_other_seeds(seed):
    a = ex.ahead_answers(seed=seed, eval_seed=seed + 1, tail=10)
    run = tr.train("ahead", seed=seed)
    assert a["train_loss"] == pytest.approx(np.mean(run["train_loss"][-10:]), rel=1e-12)
    # the whole-sequence loss with the off-by-one mask written out here: key j seen when j <= i + 1
    tokens = tr.sequences(tr.EVAL_SEQUENCES, seed=seed + 1)
    rows, cols = np.indices((tr.LENGTH, tr.LENGTH))
    logits = tr._forward(run["params"], tokens, cols <= rows + 1)["logits"][:, :-1]
    assert a["whole_loss"] == pytest.approx(tr.cross_entropy(logits, tokens[:, 1:])[0], rel=1e-12)
    # at use time the key ahead is not in the cache: the same computation as under the causal rule
    assert a["losses"] == tr.use_time(run["params"], "causal", seed=seed + 1)["loss"]
    # the facts the solution states hold on these seeds too
    assert a["whole_loss"] < a["floor"] and a["train_loss"] < a["floor"]
    assert a["use_loss"] > a["ln_vocab"] and a["leak"] > 0
    assert all(x > 2 * a["ln_vocab"] for x in a["losses"][: tr.LAG - 1])  # the answer only ahead


def test_the_reference_solution_uses_only_the_standard_library():
    source = inspect.getsource(ex.future_weight)
    assert "att." not in source and "tr." not in source and "np." not in source


def test_the_solution_listing_is_exactly_the_reference_function():
    source = inspect.getsource(ex)
    shown = source[source.index("def future_weight(") : source.index("def predictable_targets(")]
    assert shown.strip() == inspect.getsource(ex.future_weight).strip()


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: ex.future_weight([[1.0, 0.0]]), "weights 必须是方阵"),
        (lambda: ex.floor_answers([(8, 4, 4)]), "lag"),
        (lambda: ex.guess_answers(targets=[4]), "targets"),
        (lambda: ex.cache_answers(past=-1), "past"),
        (lambda: ex.predictable_targets(1, 1), "length"),
        (lambda: ex.ahead_answers(tail=201), "tail 不能超过"),
    ],
)
def test_bad_input_is_named(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_running_the_file_checks_itself_and_prints_the_answers():
    run = subprocess.run(
        [sys.executable, "-E", "-s", ex.__file__], capture_output=True, text=True, check=True
    )
    assert json.loads(run.stdout) == json.loads(json.dumps(ex.answers()))
    assert run.stderr == ""


def test_the_self_test_fails_when_an_answer_is_wrong(monkeypatch):
    monkeypatch.setattr(ex, "future_weight", lambda weights: [1.0, 1.0, 1.0])
    with pytest.raises(AssertionError, match="最后一个查询"):
        ex.self_test()


VALID = {  # one valid call of each public function, every argument named
    "floor_answers": dict(cases=ex.FLOOR_CASES),
    "guess_answers": dict(logits=ex.GUESS_LOGITS, targets=ex.GUESS_TARGETS),
    "cache_answers": dict(past=ex.CACHE_PAST),
    "future_weight": dict(weights=ex.LEAK_WEIGHTS),
    "predictable_targets": dict(length=8, lag=4),
    "ahead_answers": dict(seed=0, eval_seed=1, tail=20),
    "answers": {},
    "self_test": {},
}


def test_bad_input_anywhere_is_a_value_error_naming_the_argument():
    assert public_functions(ex) == set(VALID), "every public function needs a valid call here"
    assert [f for name, kw in VALID.items() for f in fuzz_failures(getattr(ex, name), kw)] == []
