"""The rotation page's exercises: every answer against an independent computation (numpy rotation
matrices), bad input answered with a ValueError, and the file run alone beside its teaching files.
"""

from __future__ import annotations

import importlib
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import fuzz_failures

ex = importlib.import_module("02_exercises_rope")
rope = importlib.import_module("02_rope")


def thetas(d: int, base: float) -> np.ndarray:
    return base ** (-np.arange(0, d, 2) / d)


def numpy_rotate(x, position: int, base: float) -> np.ndarray:
    """Adjacent pairs, each turned by a 2×2 rotation matrix."""
    x = np.asarray(x, dtype=float)
    phi = position * np.repeat(thetas(len(x), base), 2)
    out = x.copy()
    out[0::2] = x[0::2] * np.cos(phi[0::2]) - x[1::2] * np.sin(phi[0::2])
    out[1::2] = x[1::2] * np.cos(phi[1::2]) + x[0::2] * np.sin(phi[1::2])
    return out


def test_undoing_the_rotation_is_the_transposed_matrix_and_turns_back():
    s = ex.undo_steps()
    angle = ex.UNDO_POSITION * 1.0
    r = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    assert np.allclose(s["original"], r.T @ np.asarray(ex.UNDO_X), atol=1e-12)
    assert np.allclose(r @ np.asarray(s["original"]), ex.UNDO_X, atol=1e-12)
    assert s["back"] == pytest.approx(ex.UNDO_X)
    assert s["norm_after"] == pytest.approx(np.linalg.norm(ex.UNDO_X))


def test_the_frequency_table_equals_numpy():
    t = ex.frequency_table()
    theta = thetas(ex.FREQ_D, ex.FREQ_BASE)
    assert np.allclose([r["theta"] for r in t["rows"]], theta)
    assert np.allclose([r["angle"] for r in t["rows"]], ex.FREQ_POSITION * theta)
    assert np.allclose([r["wavelength"] for r in t["rows"]], 2 * np.pi / theta)
    assert t["slowest"] == pytest.approx(2 * np.pi / theta.min())
    # base 64, d 6: the frequencies are powers of 1/4, exactly.
    assert np.allclose(theta, [1, 1 / 4, 1 / 16])


@pytest.mark.parametrize("position", [0, 1, 3, 17])
@pytest.mark.parametrize("d, base", [(2, 10000.0), (4, 100.0), (6, 64.0), (8, 10000.0)])
def test_rotation_angles_equal_numpy_and_the_pages_angles(position, d, base):
    expected = position * thetas(d, base)
    assert np.allclose(ex.rotation_angles(position, d, base), expected, rtol=1e-12, atol=0)
    # Second route: the page's per-component angles, one per pair (adjacent pairs repeat each).
    per_pair = rope.angles(d, position, base)[0::2]
    assert ex.rotation_angles(position, d, base) == pytest.approx(per_pair)


def test_the_shifted_scores_are_equal_and_equal_numpy():
    s = ex.shift_scores()
    q = np.asarray(ex.SHIFT_Q)
    k = np.asarray(ex.SHIFT_K)
    d = len(q)
    for g in s["groups"]:
        m, n = g["positions"]
        base = ex.SHIFT_D_BASE
        expected = numpy_rotate(q, m, base) @ numpy_rotate(k, n, base) / math.sqrt(d)
        assert g["score"] == pytest.approx(expected, abs=1e-12)
        assert np.allclose(g["q"], numpy_rotate(q, m, ex.SHIFT_D_BASE))
    assert s["groups"][0]["score"] == pytest.approx(s["groups"][1]["score"], abs=1e-12)
    assert s["plain"] == pytest.approx(q @ k / math.sqrt(d))
    assert abs(s["plain"] - s["groups"][0]["score"]) > 1e-3  # the rotation matters here


def test_turning_k_alone_by_the_offset_gives_the_score_of_rotating_both():
    q = np.asarray(ex.PAIR_Q)
    k = np.asarray(ex.PAIR_K)
    m = ex.PAIR_M
    n = ex.PAIR_N
    base = ex.PAIR_BASE
    s = ex.offset_score()
    both = numpy_rotate(q, m, base) @ numpy_rotate(k, n, base) / math.sqrt(q.size)
    assert s["offset"] == m - n > 0  # Δ = m − n: the exercise turns k by −Δ·θ_i, backwards
    assert np.allclose(s["angles"], (n - m) * thetas(q.size, base))
    assert math.isclose(s["score"], both, abs_tol=1e-12)
    assert math.isclose(s["both"], both, abs_tol=1e-12)
    # Only the offset matters: the same vectors two positions further give the same score.
    assert math.isclose(ex.offset_score(m=m + 2, n=n + 2)["score"], s["score"], abs_tol=1e-12)
    turned = np.asarray(s["k_turned"])
    assert np.isclose(np.linalg.norm(turned), np.linalg.norm(k))
    assert np.allclose(s["terms"], (q * turned).reshape(-1, 2).sum(1))


@settings(max_examples=15, deadline=None)
@given(
    st.lists(st.integers(-3, 3), min_size=4, max_size=4),
    st.lists(st.integers(-3, 3), min_size=4, max_size=4),
    st.integers(0, 20),
    st.integers(0, 20),
)
def test_the_offset_score_is_the_rotated_score_anywhere(q, k, m, n):
    q = [float(x) for x in q]
    k = [float(x) for x in k]
    s = ex.offset_score(q, k, m, n, 100.0)
    assert math.isclose(s["score"], s["both"], abs_tol=1e-9)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: ex.rotation_angles(-1, 4), "position"),
        (lambda: ex.rotation_angles(1.0, 4), "position"),
        (lambda: ex.rotation_angles(2**60, 4), "太大"),
        (lambda: ex.rotation_angles(1, 0), "偶数"),
        (lambda: ex.rotation_angles(1, 4, 0.0), "base"),
        (lambda: ex.rotation_angles(1, 4, math.nan), "base"),
        (lambda: ex.undo_steps([1.0, 2.0, 3.0, 4.0], 1), "二维向量"),
        (lambda: ex.undo_steps([1.0, 2.0], -1), "position 必须是不小于 0"),
        (lambda: ex.shift_scores(shift=-1), "shift"),
        (lambda: ex.shift_scores(m="x"), "m 必须是"),
        (lambda: ex.rotation_angles(1, 10**12), "d 太大了"),
        (lambda: ex.offset_score(q=[1.0, 2.0]), "一样长"),
        (lambda: ex.offset_score(q=[1.0, 2.0, 3.0], k=[1.0, 2.0, 3.0]), "偶数"),
        (lambda: ex.offset_score(m=-1), "m"),
    ],
)
def test_bad_input_is_named(call, words):
    with pytest.raises(ValueError, match=words):
        call()


VALID_CALLS = {
    "undo_steps": ([2.0, 1.0], 4),
    "rotation_angles": (2, 4, 100.0),
    "frequency_table": (6, 64.0, 3),
    "shift_scores": ([1.0, 2.0, 0.0, 1.0], [2.0, 0.0, 1.0, 1.0], 4, 1, 5, 100.0),
    "offset_score": ([1.0, 2.0, 0.0, 1.0], [1.0, 0.0, 2.0, 1.0], 5, 2, 100.0),
}


@pytest.mark.parametrize("name", sorted(VALID_CALLS))
def test_bad_arguments_get_a_value_error_and_nothing_else(name):
    assert fuzz_failures(getattr(ex, name), {}, args=VALID_CALLS[name], names=False) == []


def test_the_self_test_catches_a_wrong_answer(monkeypatch):
    ex.self_test()
    monkeypatch.setattr(ex, "offset_score", lambda: {"score": 0.0, "both": 1.0})
    with pytest.raises(AssertionError, match="只转 k"):
        ex.self_test()


def test_the_file_runs_alone_beside_its_teaching_files(tmp_path):
    code = Path(ex.__file__).resolve().parent
    for name in ("02_attention.py", "02_rope.py", "02_exercises_rope.py"):
        shutil.copy(code / name, tmp_path / name)
    run = subprocess.run(
        [sys.executable, "-E", "-s", "02_exercises_rope.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(run.stdout) == json.loads(json.dumps(ex.answers(), ensure_ascii=False))
