"""Tests of code/02_exercises_tensors.py: each answer against an independent count; bad input."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from reference import fuzz_failures, public_functions

tn = importlib.import_module("02_tensors")
ex = importlib.import_module("02_exercises_tensors")


def test_the_exercise_answers():
    assert ex.sink_rows()["cache"] == ex.SINK_SINKS + ex.SINK_W
    a2 = ex.decode_positions()
    for mask, nxt in zip(ex.POS_MASK, a2["next"]):
        assert nxt == sum(mask)  # the real tokens before it
    for mask in ex.FILL_MASKS.values():
        row = mask[0]
        n = len(mask[0])
        a3 = ex.empty_rows(mask)
        no_content = [q for q in range(n) if not any(row[k] for k in range(q + 1))]
        assert a3["empty"] == no_content
        assert a3["nan"] == a3["empty"]  # float16: finfo.min + (−20) overflows
        assert ex.empty_rows(mask, dtype="float32")["nan"] == []


@pytest.mark.parametrize("name", sorted(public_functions(ex) - {"self_test", "answers"}))
def test_the_exercise_functions_answer_bad_input(name):
    args = {"window_counts": (5, 2)}.get(name, ())
    assert fuzz_failures(getattr(ex, name), {}, args=args) == []


def test_window_counts_uses_the_standard_library_only_and_has_no_4096_cap():
    assert ex.window_counts(5000, 2)[-1] == 2 and ex.window_counts(5000, 2, before=True)[-1] == 3
    for n in range(1, 9):
        for w in range(1, 9):
            for before in (False, True):
                table = tn.visibility_batch(tn.sliding_window(w + before), 1, 1, n, n)[0, 0]
                assert ex.window_counts(n, w, before=before) == table.sum(-1).tolist()
    with pytest.raises(ValueError, match="n 不能超过"):
        ex.window_counts(10**8, 1)
    with pytest.raises(ValueError, match="before 必须是 True 或 False"):
        ex.window_counts(3, 1, before="yes")
    source = open(ex.__file__, encoding="utf-8").read()
    body = source[source.index("def window_counts(") : source.index("def library_masks(")]
    assert "att." not in body and "np." not in body and "tn." not in body


def test_the_library_masks_against_a_count_by_hand():
    a = ex.library_masks([[0, 0, 1, 1, 1], [1, 1, 1, 1, 0]], 3)
    for b, row in enumerate([[0, 0, 1, 1, 1], [1, 1, 1, 1, 0]]):
        for i in range(2):
            keys = [k for k in range(5) if k <= 3 + i and row[k] == 1]
            assert np.flatnonzero(a["attn_mask"][b, 0, i]).tolist() == keys
        assert a["key_padding_mask"][b].tolist() == [m == 0 for m in row]
    assert a["is_causal"].astype(int).tolist() == [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0]]
    assert a["wrong"] == [[0, 1], [0, 1]]
    assert ex.library_masks([[1, 1]], 0)["wrong"] == [[]]  # no cache: top-left is right
    with pytest.raises(ValueError, match="past 不能超过 1"):
        ex.library_masks([[1, 1]], 2)
