"""Tests of code/02_exercises_pitfalls.py: each answer against an independent count; bad input."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from reference import fuzz_failures, numpy_softmax, public_functions

ex = importlib.import_module("02_exercises_pitfalls")
pf = importlib.import_module("02_pitfalls")


def test_the_strict_causal_line_reads_only_the_earlier_positions():
    a = ex.strict_causal()
    assert a["visible"] == [list(range(i)) for i in range(ex.LINE_N)]
    assert a["empty"] == [0]
    assert ex.strict_causal(3, 0)["visible"] == [[0], [0, 1], [0, 1, 2]]  # diagonal 0: causal


def test_the_float_row_is_numpys_softmax_of_the_scores_plus_the_row():
    a = ex.float_row()
    row = np.tril(np.ones((len(ex.FLOAT_SCORES),) * 2))[ex.FLOAT_ROW]
    expected = numpy_softmax(np.array(ex.FLOAT_SCORES) + row)
    assert np.allclose(a["weights"], expected, atol=1e-15)
    assert a["future"] == pytest.approx(expected[ex.FLOAT_ROW + 1 :].sum(), abs=1e-15)
    assert a["right"] == [1.0, 0.0, 0.0, 0.0]  # row 0 of the causal rule reads key 0 only


def test_the_last_column_of_a_right_padded_row_is_a_pad_unless_the_row_is_full():
    a = ex.read_columns()
    for mask, pad, last in zip(ex.RIGHT_MASK, a["pad_at_last"], a["last_real"]):
        assert pad == (mask[-1] == 0)
        assert last == len([m for m in mask if m == 1]) - 1
    with pytest.raises(ValueError, match="至少要有一个真实 token"):
        ex.read_columns([[1, 1], [0, 0]])


def test_loss_labels_is_labels_from_by_position_and_uses_the_standard_library_only():
    rng = np.random.default_rng(0)
    for _ in range(30):
        n = int(rng.integers(1, 8))
        ids = rng.integers(0, 5, n).tolist()
        real = int(rng.integers(1, n + 1))
        mask = [1] * real + [0] * (n - real)
        assert ex.loss_labels(ids, mask) == pf.labels_from(ids, mask, 0)
    source = open(ex.__file__, encoding="utf-8").read()
    body = source[source.index("def loss_labels(") : source.index("def answers(")]
    assert "att." not in body and "pf." not in body
    with pytest.raises(ValueError, match="attention_mask 只能含 0 与 1"):
        ex.loss_labels([1, 2], [1, 2])


@pytest.mark.parametrize("name", sorted(public_functions(ex) - {"self_test", "answers"}))
def test_the_exercise_functions_answer_bad_input(name):
    args = {
        "strict_causal": (4, -1),
        "float_row": ([1.0, 2.0, 0.0], 1),
        "read_columns": ([[1, 1], [1, 0]],),
        "loss_labels": ([4, 2, 0], [1, 1, 0]),
    }[name]
    assert fuzz_failures(getattr(ex, name), {}, args=args) == []
