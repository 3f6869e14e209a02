"""第2章位置旋转（RoPE）页的练习：题目的输入与参考解答，由 ``02_rope.py`` 与 ``02_attention.py`` 算出。

每道题的数据都是人工构造的小向量，与正文的例子不同。把本文件与 ``02_rope.py``、``02_attention.py``
放在同一目录，运行 ``python3 02_exercises_rope.py``：先核对答案，再以 JSON 打印每道题的答案。
"""

from __future__ import annotations

import importlib
import math

att = importlib.import_module("02_attention")
rope = importlib.import_module("02_rope")

# 练习 1：d = 2 的一个向量，在一个位置上旋转。
ROT_X, ROT_POSITION = [2.0, 1.0], 2
# 练习 2：新的头维度与底数，一个位置上的各对转角。
FREQ_D, FREQ_BASE, FREQ_POSITION = 6, 64.0, 3
# 练习 3：两组位置差相同的位置，分数相同。
SHIFT_D_BASE = 100.0
SHIFT_Q, SHIFT_K = [1.0, 2.0, 0.0, 1.0], [2.0, 0.0, 1.0, 1.0]
SHIFT_M, SHIFT_N, SHIFT_BY = 4, 1, 5
# 练习 4：找错。四个位置的 Q = K 与 V，缓存分两步：先 BUG_CHUNKS[0] 个，再 BUG_CHUNKS[1] 个。
BUG_BASE = 100.0
BUG_SEQ = [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, -1.0, 0.0], [0.0, -1.0, 1.0, 1.0]]
BUG_V = [[1.0], [2.0], [3.0], [4.0]]
BUG_CHUNKS = [2, 2]
# “只依赖位置差”检查：BUG_SEQ[OFFSET_Q] 放在位置 m、BUG_SEQ[OFFSET_K] 放在位置 n，再两个都加 OFFSET_SHIFT。
OFFSET_Q, OFFSET_K, OFFSET_M, OFFSET_N, OFFSET_SHIFT = 2, 0, 2, 0, 3
TOL = 1e-9


def rotation_steps(x: list[float] = ROT_X, position: int = ROT_POSITION) -> dict:
    """练习 1 的答案：d = 2 时（θ = 1）转角、cos、sin、转后的两个分量和转前转后的长度。

    >>> s = rotation_steps()
    >>> s["angle"], round(s["cos"], 4), round(s["sin"], 4)
    (2.0, -0.4161, 0.9093)
    >>> [round(c, 4) for c in s["rotated"]]
    [-1.7416, 1.4024]
    """
    v = att.as_vector(x, "x")
    if len(v) != 2:
        raise ValueError(f"x 必须是二维向量（d = 2），收到长度 {len(v)}")
    (theta,), (angle, _) = rope.frequencies(2), rope.angles(2, position)
    c, s = math.cos(angle), math.sin(angle)
    a, b = v
    rotated = [a * c - b * s, b * c + a * s]  # 与 rope.rotate 同一个公式，这里把每一步摊开
    return {
        "theta": theta, "angle": angle, "cos": c, "sin": s,
        "a_cos": a * c, "b_sin": b * s, "b_cos": b * c, "a_sin": a * s,
        "rotated": rotated, "norm_before": math.hypot(*v), "norm_after": math.hypot(*rotated),
    }


def rotation_angles(position: int, d: int, base: float = 10000.0) -> list[float]:
    """练习 5 的参考解：位置 ``position`` 上第 i 对分量的转角 ``position × base^(−2i/d)``，i = 0 … d/2 − 1。

    >>> [round(a, 4) for a in rotation_angles(2, 4, 100.0)]
    [2.0, 0.2]
    >>> rotation_angles(0, 4)
    [0.0, 0.0]
    >>> rotation_angles(1, 5)
    Traceback (most recent call last):
    ...
    ValueError: d 必须是不小于 2 的偶数（分量两两成对旋转），收到 5
    """
    if not isinstance(position, int) or isinstance(position, bool) or position < 0:
        raise ValueError(f"position 必须是非负整数（位置从 0 数起），收到 {position!r}")
    if position > 2**53:  # 再大就不能精确变成浮点数，转角也就不可信
        raise ValueError(f"position 太大了（超过 2**53），收到 {position!r}")
    if not isinstance(d, int) or isinstance(d, bool) or d < 2 or d % 2:
        raise ValueError(f"d 必须是不小于 2 的偶数（分量两两成对旋转），收到 {d!r}")
    if d > 4096:  # 结果是 d/2 个数的列表：头维度不会这么大
        raise ValueError(f"d 太大了（超过 4096），收到 {d!r}")
    if not isinstance(base, (int, float)) or isinstance(base, bool) or not 0 < base < 1e308:
        raise ValueError(f"base 必须是正的有限数，收到 {base!r}")
    # 第 i 对的频率 θ_i = base^(−2i/d)；转角与位置成正比。
    return [position * base ** (-2 * i / d) for i in range(d // 2)]


def frequency_table(d: int = FREQ_D, base: float = FREQ_BASE, position: int = FREQ_POSITION) -> dict:
    """练习 2 的答案：每一对的分量、频率 θ_i、转角 m·θ_i、波长 2π/θ_i，以及最慢的波长。

    >>> t = frequency_table()
    >>> [round(r["theta"], 4) for r in t["rows"]], [round(r["angle"], 4) for r in t["rows"]]
    ([1.0, 0.25, 0.0625], [3.0, 0.75, 0.1875])
    >>> round(t["slowest"], 4)
    100.531
    """
    thetas, angles = rope.frequencies(d, base), rotation_angles(position, d, base)
    rows = [
        {"pair": p, "theta": t, "angle": a, "wavelength": 2 * math.pi / t}
        for p, t, a in zip(rope.pairs(d), thetas, angles)
    ]
    return {"rows": rows, "slowest": rope.slowest_wavelength(d, base)}


def shift_scores(
    q: list[float] = SHIFT_Q, k: list[float] = SHIFT_K, m: int = SHIFT_M, n: int = SHIFT_N,
    shift: int = SHIFT_BY, base: float = SHIFT_D_BASE,
) -> dict:
    """练习 3 的答案：两组位置 (m, n) 与 (m + shift, n + shift) 上转后的 q、k 与分数，以及不转时的分数。

    >>> s = shift_scores()
    >>> [g["positions"] for g in s["groups"]]
    [(4, 1), (9, 6)]
    >>> [round(g["score"], 4) for g in s["groups"]], round(s["plain"], 4)
    ([-0.9423, -0.9423], 1.5)
    """
    m, n, shift = (att.check_count(x, name, minimum=0) for x, name in ((m, "m"), (n, "n"), (shift, "shift")))
    groups = []
    for mm, nn in ((m, n), (m + shift, n + shift)):
        qr, kr = rope.rotate(q, mm, base), rope.rotate(k, nn, base)
        groups.append({
            "positions": (mm, nn),
            "q_angles": rotation_angles(mm, len(qr), base),
            "k_angles": rotation_angles(nn, len(kr), base),
            "q": qr, "k": kr,
            "dot": sum(a * b for a, b in zip(qr, kr)),
            "score": rope.rope_scores([q], [k], [mm], [nn], base)[0][0],
        })
    return {"groups": groups, "plain": att.scaled_scores([q], [k])[0][0], "d": len(groups[0]["q"])}


# -- 练习 4：三种写法，两项检查 ------------------------------------------------------------------------
def _mixed(x: list[float], position: int, base: float) -> list[float]:
    return rope.mixed_rotate(x, position, base)


def _right(x: list[float], position: int, base: float) -> list[float]:
    return rope.rotate(x, position, base)


# 名字、旋转函数、是否把批内行号当位置。
VARIANTS = [
    ("A：正确", _right, False),
    ("B：配对错配", _mixed, False),
    ("C：按行号旋转", _right, True),
]


def _attend(turn, q, k, v, q_positions, k_positions, past, base):
    qs = [turn(row, p, base) for row, p in zip(q, q_positions)]
    ks = [turn(row, p, base) for row, p in zip(k, k_positions)]
    return att.attention(qs, ks, v, past=past)[1]


def _decode(turn, by_row: bool, q, k, v, chunks, base) -> list[list[float]]:
    # 缓存里的键在写入时已经转好（按各自当时用的位置），之后不再动。
    cache_k, cache_v, outputs, start = [], [], [], 0
    for size in chunks:
        positions = [i if by_row else start + i for i in range(size)]
        new_k = [turn(row, p, base) for row, p in zip(k[start:start + size], positions)]
        cache_k, cache_v = cache_k + new_k, cache_v + v[start:start + size]
        new_q = [turn(row, p, base) for row, p in zip(q[start:start + size], positions)]
        outputs += att.attention(new_q, cache_k, cache_v, past=start)[1]
        start += size
    return outputs


def bug_checks(seq: list[list[float]] = BUG_SEQ, v: list[list[float]] = BUG_V,
               chunks: list[int] = BUG_CHUNKS, base: float = BUG_BASE) -> dict:
    """练习 4 的答案：三种写法各过一遍两项检查，每项检查的数都算出来。

    “只依赖位置差”：同一对 q、k 放在 (m, n) 与 (m + s, n + s)，两个分数应当相同（检查的是旋转函数本身）。
    “逐步计算等于整段重算”：按 ``chunks`` 分步用缓存计算，输出应当等于不用缓存整段重算（两者用同一个旋转函数）。

    >>> c = bug_checks()
    >>> [(r["name"], r["offset_ok"], r["decode_ok"]) for r in c["rows"]]
    [('A：正确', True, True), ('B：配对错配', False, True), ('C：按行号旋转', True, False)]
    """
    seq_m, v_m = att.as_matrix(seq, "seq"), att.as_matrix(v, "v")
    if len(v_m) != len(seq_m):
        raise ValueError(f"seq 与 v 的行数必须相同，收到 {len(seq_m)} 与 {len(v_m)}")
    sizes = [att.check_count(c, f"chunks[{j}]") for j, c in enumerate(att.as_list(chunks, "chunks"))]
    if sum(sizes) != len(seq_m):
        raise ValueError(f"chunks 之和必须等于序列长度 {len(seq_m)}，收到 {sizes!r}")
    if len(seq_m) <= max(OFFSET_Q, OFFSET_K):
        raise ValueError(f"seq 至少要有 {max(OFFSET_Q, OFFSET_K) + 1} 行，收到 {len(seq_m)} 行")
    q, k = seq_m[OFFSET_Q], seq_m[OFFSET_K]
    groups = ((OFFSET_M, OFFSET_N), (OFFSET_M + OFFSET_SHIFT, OFFSET_N + OFFSET_SHIFT))
    n = len(seq_m)
    rows = []
    for name, turn, by_row in VARIANTS:
        scores = [att.scaled_scores([turn(q, mm, base)], [turn(k, nn, base)])[0][0] for mm, nn in groups]
        full = _attend(turn, seq_m, seq_m, v_m, range(n), range(n), 0, base)
        stepped = _decode(turn, by_row, seq_m, seq_m, v_m, sizes, base)
        gap = att.max_abs_diff(stepped, full)
        rows.append({
            "name": name, "scores": scores, "offset_ok": abs(scores[0] - scores[1]) <= TOL,
            "full": [r[0] for r in full], "stepped": [r[0] for r in stepped], "gap": gap, "decode_ok": gap <= TOL,
        })
    return {"rows": rows, "groups": groups}


def answers() -> dict:
    """每道题的答案（JSON 可打印）。

    >>> sorted(answers())
    ['练习1', '练习2', '练习3', '练习4', '练习5']
    """
    return {
        "练习1": rotation_steps()["rotated"],
        "练习2": [r["angle"] for r in frequency_table()["rows"]],
        "练习3": [g["score"] for g in shift_scores()["groups"]],
        "练习4": [[r["name"], r["offset_ok"], r["decode_ok"]] for r in bug_checks()["rows"]],
        "练习5": rotation_angles(FREQ_POSITION, FREQ_D, FREQ_BASE),
    }


def self_test() -> None:
    """核对答案：旋转保持长度，位置同时后移分数不变，两项检查各认出一种错误。

    >>> self_test()
    """
    steps = rotation_steps()
    att.check(abs(steps["norm_before"] - steps["norm_after"]) < 1e-12, "旋转应当保持长度")
    att.check(rotation_angles(FREQ_POSITION, FREQ_D, FREQ_BASE) == rope.angles(FREQ_D, FREQ_POSITION, FREQ_BASE)[0::2],
              "练习 5 的转角应当与 02_rope.angles 一致")
    first, second = (g["score"] for g in shift_scores()["groups"])
    att.check(abs(first - second) < 1e-12, "两组位置差相同的位置应当给出同一个分数")
    verdicts = [(r["offset_ok"], r["decode_ok"]) for r in bug_checks()["rows"]]
    att.check(verdicts == [(True, True), (False, True), (True, False)], "两项检查应当各认出一种错误")


if __name__ == "__main__":
    import json

    self_test()
    print(json.dumps(answers(), ensure_ascii=False, indent=2))
