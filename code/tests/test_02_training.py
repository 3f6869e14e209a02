"""The training page's teaching code (02_training.py): its backward against the backprop page and
finite differences, determinism, the claims the page makes on other seeds, and bad input.

The numpy backward is compared with 02_backprop's pure-Python ``attention_backward`` and
``projection_backward`` (another implementation, written for the backprop page), and the whole
model's gradient with central finite differences; a backward with a step left out must fail
that check.
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
from reference import fuzz_failures, matrices, public_functions, reals

tr = importlib.import_module("02_training")
bp = importlib.import_module("02_backprop")
att = importlib.import_module("02_attention")
CODE = Path(__file__).resolve().parent.parent / "02_training.py"
few = settings(max_examples=15, deadline=None)
SEEDS = (3,)


@pytest.fixture(scope="module")
def trained():
    """Both rules on a seed other than the page's (tests/test_chapter_training.py trains more)."""
    return {s: {rule: tr.train(rule, seed=s)["params"] for rule in tr.RULES} for s in SEEDS}


# -- the backward: the backprop page's formulas --------------------------------------------------
@st.composite
def self_attention(draw):
    n = draw(st.integers(1, 4))
    d = draw(st.integers(1, 3))
    d_v = draw(st.integers(1, 2))
    cell = reals(2.0)
    return (
        draw(matrices(n, d, cell)),
        draw(matrices(n, d, cell)),
        draw(matrices(n, d_v, cell)),
        draw(matrices(n, d_v, cell)),
    )


@few
@given(self_attention(), st.booleans())
def test_the_numpy_backward_equals_the_backprop_pages_pure_python_backward(problem, causal):
    q, k, v, d_out = problem
    visible = np.array(att.visibility(len(q), len(k), causal=causal))
    qa, ka, va = (np.array(m) for m in (q, k, v))
    weights = tr._softmax(np.where(visible, qa @ ka.T / math.sqrt(qa.shape[1]), -np.inf))
    mine = tr._attention_backward(qa, ka, va, weights, weights @ va, np.array(d_out))
    theirs = bp.attention_backward(q, k, v, d_out, causal=causal)
    for a, b in zip(mine, theirs):
        assert np.allclose(a, b, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("rule", tr.RULES)
def test_the_model_gradient_equals_the_backprop_pages_chain_on_one_sequence(rule):
    # One sequence: the backprop page's pure-Python attention_backward and projection_backward, fed
    # the same upstream gradient dO, give the projections' gradients loss_and_grads computes.
    p = tr.init_params(seed=5, vocab=4, length=5, d_model=3)
    tokens = np.array([[1, 3, 0, 1, 3]])
    causal = rule == "causal"
    f = tr._forward(p, tokens, np.array(att.visibility(5, 5, causal=causal)))
    d_logits = np.zeros_like(f["logits"])
    d_logits[:, :-1] = tr.cross_entropy(f["logits"][:, :-1], tokens[:, 1:])[1]
    d_out = (d_logits @ p["w_out"].T)[0]
    x = f["x"][0]
    q = x @ p["w_q"]
    k = x @ p["w_k"]
    v = x @ p["w_v"]
    dq, dk, dv = bp.attention_backward(q, k, v, d_out.tolist(), causal=causal)
    proj = bp.projection_backward(x.tolist(), p["w_q"], p["w_k"], p["w_v"], dq, dk, dv)
    _, grads = tr.loss_and_grads(p, tokens, rule)
    for name in ("w_q", "w_k", "w_v"):
        assert np.allclose(grads[name], proj["d" + name], atol=1e-12)
    dx = np.array(proj["dx"])
    assert np.allclose(grads["position"], dx, atol=1e-12)  # each position once in one sequence
    assert np.allclose(grads["embed"][1], dx[0] + dx[3], atol=1e-12)  # token 1 at positions 0, 3


def test_central_finite_differences_agree_on_two_seeds():
    assert tr.gradient_check(seed=0) < 1e-7
    assert tr.gradient_check(seed=7) < 1e-7


def test_a_backward_without_the_correction_term_fails_the_check(monkeypatch):
    right = tr._attention_backward

    def no_correction(q, k, v, weights, out, d_out):  # dS = P ∘ dP: the slip
        return right(q, k, v, weights, out * 0.0, d_out)

    monkeypatch.setattr(tr, "_attention_backward", no_correction)
    assert tr.gradient_check() > 1e-3
    with pytest.raises(AssertionError, match="有限差分"):
        tr.self_test()


def test_cross_entropy_of_equal_logits_is_ln_v_and_its_gradient_sums_to_zero():
    loss, grad = tr.cross_entropy(np.zeros((3, 8)), np.array([0, 5, 7]))
    assert math.isclose(loss, math.log(8), rel_tol=1e-15)
    assert np.allclose(grad.sum(axis=-1), 0.0, atol=1e-15)


# -- the task and the floor ----------------------------------------------------------------------
def test_sequences_repeat_lag_positions_back_and_are_deterministic():
    x = tr.sequences(50, seed=9)
    assert (x[:, tr.LAG :] == x[:, : tr.LENGTH - tr.LAG]).all()
    assert (x == tr.sequences(50, seed=9)).all() and not (x == tr.sequences(50, seed=10)).all()
    assert x.min() >= 0 and x.max() < tr.VOCAB


def test_the_floor_counts_the_first_lag_minus_one_targets_as_guesses():
    assert math.isclose(tr.loss_floor(8, 8, 4), 3 / 7 * math.log(8))
    assert tr.loss_floor(16, 10, 1) == 0.0


# -- training and use, on seeds other than the page's --------------------------------------------
def test_training_is_deterministic():
    a = tr.train("none", seed=11, steps=5)
    b = tr.train("none", seed=11, steps=5)
    assert a["train_loss"] == b["train_loss"]
    assert all((a["params"][n] == b["params"][n]).all() for n in tr.PARAM_NAMES)
    assert tr.train("none", seed=12, steps=5)["train_loss"] != a["train_loss"]
    # both rules start from the same parameters and batches: the first losses differ by the mask
    assert tr.train("causal", seed=11, steps=1)["train_loss"] != a["train_loss"][:1]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_unmasked_model_trains_below_the_floor_and_loses_more_than_guessing(trained, seed):
    causal = trained[seed]["causal"]
    ln_v = math.log(tr.VOCAB)
    e = 100 + seed
    tokens = tr.sequences(tr.EVAL_SEQUENCES, seed=e)
    whole = {r: tr.loss_and_grads(trained[seed][r], tokens, r)[0] for r in tr.RULES}
    assert whole["none"] < tr.loss_floor() < whole["causal"] < ln_v
    use = {r: tr.use_time(trained[seed][r], r, seed=e) for r in tr.RULES}
    assert use["none"]["mean_loss"] > ln_v
    assert abs(use["causal"]["mean_loss"] - whole["causal"]) < 1e-12
    row = tr.use_time(causal, "causal", seed=e, positions="row_index")["mean_loss"]
    assert row > use["causal"]["mean_loss"]
    # top-1 accuracy: both beat guessing (1/|V|); the loss alone does not say how often it is right
    assert min(use[r]["mean_accuracy"] for r in tr.RULES) > 1 / tr.VOCAB
    assert all(0.0 <= a <= 1.0 for r in tr.RULES for a in use[r]["accuracy"])


def test_use_time_accuracy_is_the_share_of_argmax_hits():
    p = tr.init_params(seed=4)
    u = tr.use_time(p, "causal", seed=2)
    tokens = tr.sequences(tr.EVAL_SEQUENCES, seed=2)
    f = tr._forward(p, tokens, np.array(att.visibility(tr.LENGTH, tr.LENGTH)))
    hits = (f["logits"][:, :-1].argmax(axis=-1) == tokens[:, 1:]).mean(axis=0)
    assert np.allclose(u["accuracy"], hits)  # the cache computes what the whole sequence computes
    assert math.isclose(u["mean_accuracy"], float(hits.mean()))


@pytest.mark.parametrize("seed", SEEDS)
def test_the_causal_model_looks_lag_minus_one_back_and_the_other_ahead(trained, seed):
    tokens = tr.sequences(1, seed=seed)[0]
    c = np.array(tr.attention_map(trained[seed]["causal"], "causal", tokens))
    n = np.array(tr.attention_map(trained[seed]["none"], "none", tokens))
    assert np.all(np.triu(c, 1) == 0.0)
    assert np.mean([c[t, t + 1 - tr.LAG] for t in range(tr.LAG - 1, tr.LENGTH - 1)]) > 0.7
    assert np.mean([n[t, t + 1 :].sum() for t in range(tr.LAG - 1)]) > 0.7  # answers only ahead


@pytest.mark.parametrize("seed", SEEDS)
def test_only_the_causal_model_passes_the_leak_check(trained, seed):
    assert tr.leak_check(trained[seed]["causal"], "causal", seed=1) == 0.0
    assert tr.leak_check(trained[seed]["none"], "none", seed=1) > 1.0


def test_the_row_index_cache_uses_row_zero_and_only_key_zero():
    assert tr.cache_step(0, "causal") == tr.cache_step(0, "causal", "row_index") == (0, [True])
    for past in (1, 4, 7):
        assert tr.cache_step(past, "causal") == (past, [True] * (past + 1))
        assert tr.cache_step(past, "causal", "row_index") == (0, [True] + [False] * past)


def test_the_visible_tables_are_the_mask_pages_and_one_key_more_for_ahead():
    for n in (1, 2, 5):
        causal, none, ahead = (tr.visible_table(r, n) for r in ("causal", "none", "ahead"))
        assert causal.tolist() == att.visibility(n, n) and none.all()
        rows, cols = np.indices((n, n))
        assert (ahead == (cols <= rows + 1)).all()  # key j visible to query i when j ≤ i + 1
        assert (ahead & ~causal).sum() == n - 1  # one key more per query, none for the last


def test_the_ahead_rule_leaks_one_step_and_vanishes_at_use_time():
    p = tr.init_params(seed=2)
    assert tr.leak_check(p, "ahead", seed=3) > 0.0
    # at use time the key ahead is not in the cache yet: the step is the causal rule's
    for past in (0, 3, 7):
        assert tr.cache_step(past, "ahead") == tr.cache_step(past, "causal")
    assert tr.cache_step(3, "ahead", "row_index") == (0, [True, True, False, False])
    u = tr.use_time(p, "ahead", seed=4)
    assert u["loss"] == tr.use_time(p, "causal", seed=4)["loss"]
    # trained, the next key gives each target away (below the causal floor), not so in use
    trained = tr.train("ahead", seed=3)
    assert sum(trained["train_loss"][-20:]) / 20 < tr.loss_floor()
    assert tr.use_time(trained["params"], "ahead", seed=4)["mean_loss"] > math.log(tr.VOCAB)


# -- the command, the self-test and bad input ----------------------------------------------------
def test_running_the_file_self_tests_and_prints_the_demo_as_json():
    result = subprocess.run([sys.executable, str(CODE)], capture_output=True, text=True, check=True)
    demo = json.loads(result.stdout)  # the page shows exactly this
    assert set(demo) == {"性质", "词表大小", "因果规则的损失下限", "瞎猜的准确率", *tr.RULES}
    assert demo["none"]["损失比瞎猜还高"] is True and demo["causal"]["损失比瞎猜还高"] is False
    # the row-index variant is the page's (only key 0 visible): computed for the causal model only
    assert "用行号当位置的损失" in demo["causal"] and "用行号当位置的损失" not in demo["none"]
    assert result.stderr == ""


P8 = tr.init_params(seed=0)
P = tr.init_params(seed=0, vocab=3, length=4, d_model=2)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: tr.train("mask", seed=0), "rule 必须是"),
        (lambda: tr.visible_table("ahead", 0), "n 必须是不小于 1"),
        (lambda: tr.train("causal", seed=0, steps=10**6), "steps 不能超过"),
        (lambda: tr.sequences(2, seed=0, length=4, lag=4), "lag 不能超过"),
        (lambda: tr.use_time(P8, "causal", seed=0, positions="row"), "positions 必须是"),
        (lambda: tr.loss_and_grads(P8, [[0, 9]], "none"), "tokens 必须在 0 到 7 之间"),
        (lambda: tr.loss_and_grads({"embed": 1}, [[0, 1]], "none"), "'position'"),
        (lambda: tr.loss_and_grads({**P8, "bias": P8["embed"]}, [[0, 1]], "none"), "多出 ['bias']"),
        (
            lambda: tr.loss_and_grads({**P8, "position": P8["position"][:2]}, [[0, 1, 2]], "none"),
            "params['position'] 只有 2 行",
        ),
        (
            lambda: tr.loss_and_grads(
                {**P8, "w_q": P8["w_q"].astype(np.float32)}, [[0, 1]], "none"
            ),
            "float64",
        ),
        (lambda: tr.train("causal", seed=-1), "seed 必须是不小于 0 的整数"),
        (lambda: tr.cross_entropy([[0.0, 1.0]], [2]), "targets 必须非空，且在 0 到 1 之间"),
    ],
)
def test_bad_input_gets_a_chinese_value_error_naming_it(call, words):
    with pytest.raises(ValueError) as error:
        call()
    assert words in str(error.value)
    assert "纯 Python 列表" not in str(error.value)  # the limits give their own reason


def test_numpy_integers_are_counts_too():
    assert tr.sequences(np.int64(2), seed=np.int64(0), lag=np.int64(3)).shape == (2, tr.LENGTH)
    assert tr.cache_step(np.int64(3), "causal") == tr.cache_step(3, "causal")


VALID = {  # one valid call of each public function, every argument named
    "sequences": dict(n=2, seed=0, vocab=5, length=6, lag=3),
    "loss_floor": dict(vocab=8, length=8, lag=4),
    "init_params": dict(seed=0, vocab=3, length=4, d_model=2),
    "cross_entropy": dict(logits=[[0.0, 0.0], [2.0, 0.0]], targets=[1, 0]),
    "loss_and_grads": dict(params=P, tokens=[[0, 1, 2, 0]], rule="causal"),
    "visible_table": dict(rule="ahead", n=4),
    "train": dict(rule="none", seed=0, steps=2),
    "cache_step": dict(past=3, rule="causal", positions="row_index"),
    "use_time": dict(params=tr.init_params(seed=0), rule="causal", seed=1, positions="row_index"),
    "attention_map": dict(params=P, rule="causal", tokens=[0, 1, 2]),
    "leak_check": dict(params=tr.init_params(seed=0), rule="none", seed=1),
    "gradient_check": dict(seed=0, eps=1e-5),
    "self_test": {},
    "run_demo": {},
}


def test_bad_input_anywhere_is_a_value_error_naming_the_argument():
    assert public_functions(tr) == set(VALID), "every public function needs a valid call here"
    failures = [f for name, kw in VALID.items() for f in fuzz_failures(getattr(tr, name), kw)]
    assert failures == []
