"""The rotation page's exercises: every answer against an independent computation (numpy rotation matrices),
bad input answered with a ValueError, and the file run alone beside its two teaching files."""

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
from reference import fuzz_failures

ex = importlib.import_module("02_exercises_rope")
rope = importlib.import_module("02_rope")


def thetas(d: int, base: float) -> np.ndarray:
    return base ** (-np.arange(0, d, 2) / d)


def numpy_rotate(x, position: int, base: float, mixed: bool = False) -> np.ndarray:
    """Adjacent pairs, each turned by a 2×2 rotation matrix; ``mixed`` gives each component the angle
    of the other layout (the deliberate mistake), so a pair's two components turn by different angles."""
    x = np.asarray(x, dtype=float)
    d = len(x)
    theta = thetas(d, base)
    per_dim = np.tile(theta, 2) if mixed else np.repeat(theta, 2)  # half layout vs adjacent layout
    phi = position * per_dim
    out = x.copy()
    out[0::2] = x[0::2] * np.cos(phi[0::2]) - x[1::2] * np.sin(phi[0::2])
    out[1::2] = x[1::2] * np.cos(phi[1::2]) + x[0::2] * np.sin(phi[1::2])
    return out


def test_the_hand_rotation_equals_a_rotation_matrix():
    s = ex.rotation_steps()
    angle = ex.ROT_POSITION * 1.0
    r = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    expected = r @ np.asarray(ex.ROT_X)
    assert np.allclose(s["rotated"], expected, atol=1e-12)
    assert s["rotated"] == pytest.approx([s["a_cos"] - s["b_sin"], s["b_cos"] + s["a_sin"]])
    assert s["norm_after"] == pytest.approx(np.linalg.norm(ex.ROT_X))


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
    # Second route: the page's per-component angles, one per pair (adjacent layout repeats each twice).
    assert ex.rotation_angles(position, d, base) == pytest.approx(rope.angles(d, position, base)[0::2])


def test_the_shifted_scores_are_equal_and_equal_numpy():
    s = ex.shift_scores()
    q, k = np.asarray(ex.SHIFT_Q), np.asarray(ex.SHIFT_K)
    d = len(q)
    for g in s["groups"]:
        m, n = g["positions"]
        expected = numpy_rotate(q, m, ex.SHIFT_D_BASE) @ numpy_rotate(k, n, ex.SHIFT_D_BASE) / math.sqrt(d)
        assert g["score"] == pytest.approx(expected, abs=1e-12)
        assert np.allclose(g["q"], numpy_rotate(q, m, ex.SHIFT_D_BASE))
    assert s["groups"][0]["score"] == pytest.approx(s["groups"][1]["score"], abs=1e-12)
    assert s["plain"] == pytest.approx(q @ k / math.sqrt(d))
    assert abs(s["plain"] - s["groups"][0]["score"]) > 1e-3  # the exercise shows that rotation matters


def numpy_causal(q, k, v, past: int) -> np.ndarray:
    q, k, v = (np.asarray(a, dtype=float) for a in (q, k, v))
    visible = np.arange(k.shape[0])[None, :] <= past + np.arange(q.shape[0])[:, None]
    scores = np.where(visible, q @ k.T / np.sqrt(q.shape[1]), -np.inf)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ v


def numpy_variant(mixed: bool, by_row: bool) -> tuple[bool, bool]:
    """Both checks of the find-the-bug exercise, recomputed with numpy for one variant."""
    seq, v, base = np.asarray(ex.BUG_SEQ), np.asarray(ex.BUG_V), ex.BUG_BASE
    turn = lambda x, p: numpy_rotate(x, p, base, mixed)  # noqa: E731
    q, k = seq[ex.OFFSET_Q], seq[ex.OFFSET_K]
    m, n, s = ex.OFFSET_M, ex.OFFSET_N, ex.OFFSET_SHIFT
    offset_ok = abs(turn(q, m) @ turn(k, n) - turn(q, m + s) @ turn(k, n + s)) < 1e-9
    n_all = len(seq)
    rotated = np.array([turn(x, p) for p, x in enumerate(seq)])
    full = numpy_causal(rotated, rotated, v, 0)
    keys, outs, start = [], [], 0
    for size in ex.BUG_CHUNKS:
        ps = [i if by_row else start + i for i in range(size)]
        new = np.array([turn(x, p) for x, p in zip(seq[start:start + size], ps)])
        keys += list(new)
        outs += list(numpy_causal(new, np.array(keys), v[: start + size], start))
        start += size
    assert start == n_all
    return offset_ok, bool(np.allclose(outs, full, atol=1e-9))


def test_each_check_catches_exactly_one_mistake_as_numpy_says():
    c = ex.bug_checks()
    flags = [(False, False), (True, False), (False, True)]  # A, B (mixed), C (row index)
    for row, (mixed, by_row) in zip(c["rows"], flags):
        assert (row["offset_ok"], row["decode_ok"]) == numpy_variant(mixed, by_row), row["name"]
    assert [(r["offset_ok"], r["decode_ok"]) for r in c["rows"]] == [(True, True), (False, True), (True, False)]
    # The page's own mistakes: the exercise's B and C are the page's mixed_rotate and row_index_decode.
    right = c["rows"][0]
    assert np.allclose(rope.decode(ex.BUG_SEQ, ex.BUG_SEQ, ex.BUG_V, ex.BUG_CHUNKS, ex.BUG_BASE),
                       np.asarray(right["stepped"])[:, None])
    wrong = rope.row_index_decode(ex.BUG_SEQ, ex.BUG_SEQ, ex.BUG_V, ex.BUG_CHUNKS, ex.BUG_BASE)
    assert np.allclose(wrong, np.asarray(c["rows"][2]["stepped"])[:, None])


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: ex.rotation_angles(-1, 4), "position"),
        (lambda: ex.rotation_angles(1.0, 4), "position"),
        (lambda: ex.rotation_angles(2**60, 4), "太大"),
        (lambda: ex.rotation_angles(1, 0), "偶数"),
        (lambda: ex.rotation_angles(1, 4, 0.0), "base"),
        (lambda: ex.rotation_angles(1, 4, math.nan), "base"),
        (lambda: ex.rotation_steps([1.0, 2.0, 3.0, 4.0], 1), "二维向量"),
        (lambda: ex.rotation_steps([1.0, 2.0], -1), "position 必须是不小于 0"),
        (lambda: ex.shift_scores(shift=-1), "shift"),
        (lambda: ex.shift_scores(m="x"), "m 必须是"),
        (lambda: ex.rotation_angles(1, 10**12), "d 太大了"),
        (lambda: ex.bug_checks(seq=[[1.0, 0.0]], v=[[1.0]], chunks=[1]), "seq 至少要有 3 行"),
        (lambda: ex.bug_checks(chunks=[1, 1]), "chunks"),
        (lambda: ex.bug_checks(v=[[1.0]]), "行数"),
    ],
)
def test_bad_input_is_named(call, words):
    with pytest.raises(ValueError, match=words):
        call()


VALID_CALLS = {
    "rotation_steps": ([2.0, 1.0], 2),
    "rotation_angles": (2, 4, 100.0),
    "frequency_table": (6, 64.0, 3),
    "shift_scores": ([1.0, 2.0, 0.0, 1.0], [2.0, 0.0, 1.0, 1.0], 4, 1, 5, 100.0),
    "bug_checks": (ex.BUG_SEQ, ex.BUG_V, [2, 2], 100.0),
}


@pytest.mark.parametrize("name", sorted(VALID_CALLS))
def test_bad_arguments_get_a_value_error_and_nothing_else(name):
    assert fuzz_failures(getattr(ex, name), {}, args=VALID_CALLS[name], names=False) == []


def test_the_self_test_catches_a_wrong_answer(monkeypatch):
    ex.self_test()
    monkeypatch.setattr(ex, "VARIANTS", [ex.VARIANTS[0], ex.VARIANTS[0], ex.VARIANTS[2]])
    with pytest.raises(AssertionError, match="各认出一种错误"):
        ex.self_test()


def test_the_file_runs_alone_beside_its_teaching_files(tmp_path):
    code = Path(ex.__file__).resolve().parent
    for name in ("02_attention.py", "02_rope.py", "02_exercises_rope.py"):
        shutil.copy(code / name, tmp_path / name)
    run = subprocess.run([sys.executable, "-E", "-s", "02_exercises_rope.py"], cwd=tmp_path,
                         capture_output=True, text=True, check=True)
    assert json.loads(run.stdout) == json.loads(json.dumps(ex.answers(), ensure_ascii=False))
