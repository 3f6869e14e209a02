"""第2章位置旋转（RoPE）页的练习：题目的输入与参考解答，由 ``02_rope.py`` 等算出。

每道题的数据都是人工构造的小向量，与正文的例子不同。把本文件与 ``02_rope.py``、``02_attention.py``
放在同一目录，运行 ``python3 02_exercises_rope.py``：先核对答案，再以 JSON 打印每道题的答案。
"""

from __future__ import annotations

import importlib
import math

att = importlib.import_module("02_attention")
rope = importlib.import_module("02_rope")

# 练习 2.5.1：d = 2 的一个向量在位置 UNDO_POSITION 上转好之后是 UNDO_X；把它转回去。
UNDO_X = [2.0, 1.0]
UNDO_POSITION = 4
# 练习 2.5.2：新的头维度与底数，一个位置上的各对转角。
FREQ_D = 6
FREQ_BASE = 64.0
FREQ_POSITION = 3
# 练习 2.5.3：两组位置差相同的位置，分数相同。
SHIFT_D_BASE = 100.0
SHIFT_Q = [1.0, 2.0, 0.0, 1.0]
SHIFT_K = [2.0, 0.0, 1.0, 1.0]
SHIFT_M = 4
SHIFT_N = 1
SHIFT_BY = 5
# 练习 2.5.4：查询在位置 PAIR_M、键在位置 PAIR_N；q 不转，只把 k 转过 −Δ·θ_i（Δ = m − n）。
PAIR_BASE = 100.0
PAIR_Q = [1.0, 2.0, 0.0, 1.0]
PAIR_K = [1.0, 0.0, 2.0, 1.0]
PAIR_M = 5
PAIR_N = 2


def undo_steps(x_rotated: list[float] = UNDO_X, position: int = UNDO_POSITION) -> dict:
    """练习 2.5.1 的答案：把位置 m 上转好的二维向量转回去，转角 −m·θ（d = 2 时 θ = 1）。

    >>> s = undo_steps()
    >>> s["angle"], round(s["cos"], 4), round(s["sin"], 4)
    (-4.0, -0.6536, 0.7568)
    >>> [round(c, 4) for c in s["original"]], [round(c, 4) for c in s["back"]]
    ([-2.0641, 0.86], [2.0, 1.0])
    """
    v = att.as_vector(x_rotated, "x_rotated")
    if len(v) != 2:
        raise ValueError(f"x_rotated 必须是二维向量（d = 2），收到长度 {len(v)}")
    (theta,) = rope.frequencies(2)
    angle, _ = rope.angles(2, position)
    c = math.cos(-angle)
    s = math.sin(-angle)  # R_m 的转置是 R_{−m}：转回去就是转负角
    a, b = v
    original = [a * c - b * s, b * c + a * s]  # 与 rope.rotate 同一个公式，这里把每一步摊开
    return {
        "theta": theta,
        "angle": -angle,
        "cos": c,
        "sin": s,
        "original": original,
        "back": rope.rotate(original, position),  # 再转 m 个位置，应当回到 x_rotated
        "norm_before": math.hypot(*v),
        "norm_after": math.hypot(*original),
    }


def rotation_angles(position: int, d: int, base: float = 10000.0) -> list[float]:
    """练习 2.5.5 的参考解：第 i 对分量的转角 ``position × base^(−2i/d)``，i = 0 … d/2 − 1。

    >>> [round(a, 4) for a in rotation_angles(2, 4, 100.0)]
    [2.0, 0.2]
    >>> rotation_angles(0, 4)
    [0.0, 0.0]
    >>> rotation_angles(1, 5)  # doctest: +IGNORE_EXCEPTION_DETAIL
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


def frequency_table(d: int = FREQ_D, base: float = FREQ_BASE, position: int = FREQ_POSITION):
    """练习 2.5.2 的答案：每一对的分量、频率 θ_i、转角 m·θ_i、波长 2π/θ_i，以及最慢的波长。

    >>> t = frequency_table()
    >>> [round(r["theta"], 4) for r in t["rows"]], [round(r["angle"], 4) for r in t["rows"]]
    ([1.0, 0.25, 0.0625], [3.0, 0.75, 0.1875])
    >>> round(t["slowest"], 4)
    100.531
    """
    thetas = rope.frequencies(d, base)
    angles = rotation_angles(position, d, base)
    rows = [
        {"pair": p, "theta": t, "angle": a, "wavelength": 2 * math.pi / t}
        for p, t, a in zip(rope.pairs(d), thetas, angles)
    ]
    return {"rows": rows, "slowest": rope.slowest_wavelength(d, base)}


def shift_scores(
    q: list[float] = SHIFT_Q,
    k: list[float] = SHIFT_K,
    m: int = SHIFT_M,
    n: int = SHIFT_N,
    shift: int = SHIFT_BY,
    base: float = SHIFT_D_BASE,
) -> dict:
    """练习 2.5.3 的答案：(m, n) 与 (m + shift, n + shift) 上转后的 q、k 与分数，及不转时的分数。

    >>> s = shift_scores()
    >>> [g["positions"] for g in s["groups"]]
    [(4, 1), (9, 6)]
    >>> [round(g["score"], 4) for g in s["groups"]], round(s["plain"], 4)
    ([-0.9423, -0.9423], 1.5)
    """
    m, n, shift = (
        att.check_count(x, name, minimum=0) for x, name in ((m, "m"), (n, "n"), (shift, "shift"))
    )
    groups = []
    for mm, nn in ((m, n), (m + shift, n + shift)):
        qr = rope.rotate(q, mm, base)
        kr = rope.rotate(k, nn, base)
        groups.append(
            {
                "positions": (mm, nn),
                "q_angles": rotation_angles(mm, len(qr), base),
                "k_angles": rotation_angles(nn, len(kr), base),
                "q": qr,
                "k": kr,
                "dot": sum(a * b for a, b in zip(qr, kr)),
                "score": rope.rope_scores([q], [k], [mm], [nn], base)[0][0],
            }
        )
    return {"groups": groups, "plain": att.scaled_scores([q], [k])[0][0], "d": len(groups[0]["q"])}


def offset_score(
    q: list[float] = PAIR_Q,
    k: list[float] = PAIR_K,
    m: int = PAIR_M,
    n: int = PAIR_N,
    base: float = PAIR_BASE,
) -> dict:
    """练习 2.5.4 的答案：(R_m q)·(R_n k) = q·(R_{−Δ} k)，Δ = m − n：只把 k 转过 −Δ·θ_i，
    再与 q 做点积。

    ``both`` 是两个向量都按绝对位置旋转后的分数（``02_rope.rope_scores``），用来核对。

    >>> s = offset_score()
    >>> s["offset"], [round(a, 4) for a in s["angles"]], [round(x, 4) for x in s["k_turned"]]
    (3, [-3.0, -0.3], [-0.99, -0.1411, 2.2062, 0.3643])
    >>> [round(t, 4) for t in s["terms"]], round(s["score"], 4), round(s["both"], 4)
    ([-1.2722, 0.3643], -0.454, -0.454)
    """
    q = att.as_vector(q, "q")
    k = att.as_vector(k, "k")
    if len(q) != len(k) or len(q) % 2:
        raise ValueError(f"q 与 k 必须一样长、长度为偶数（两两成对），收到 {len(q)} 与 {len(k)}")
    m = att.check_count(m, "m", minimum=0)
    n = att.check_count(n, "n", minimum=0)
    delta = m - n  # 位置差 Δ：查询的位置减键的位置
    angles = [-delta * theta for theta in rope.frequencies(len(k), base)]  # 第 i 对转 −Δ·θ_i
    k_turned = []
    terms = []
    for (a, b), (qa, qb), phi in zip(zip(k[0::2], k[1::2]), zip(q[0::2], q[1::2]), angles):
        c = math.cos(phi)
        s = math.sin(phi)
        turned = [a * c - b * s, b * c + a * s]  # 与 rope.rotate 同一个公式，角度换成位置差的
        k_turned += turned
        terms.append(qa * turned[0] + qb * turned[1])
    return {
        "offset": delta,
        "angles": angles,
        "k_turned": k_turned,
        "terms": terms,
        "score": sum(terms) / math.sqrt(len(q)),
        "both": rope.rope_scores([q], [k], [m], [n], base)[0][0],
    }


def answers() -> dict:
    """每道题的答案（JSON 可打印）。

    >>> sorted(answers())
    ['练习 2.5.1', '练习 2.5.2', '练习 2.5.3', '练习 2.5.4', '练习 2.5.5']
    """
    return {
        "练习 2.5.1": undo_steps()["original"],
        "练习 2.5.2": [r["angle"] for r in frequency_table()["rows"]],
        "练习 2.5.3": [g["score"] for g in shift_scores()["groups"]],
        "练习 2.5.4": offset_score()["score"],
        "练习 2.5.5": rotation_angles(FREQ_POSITION, FREQ_D, FREQ_BASE),
    }


def self_test() -> None:
    """核对答案：旋转保持长度，位置同时后移分数不变，只转 k 过位置差与两个都转给出同一个分数。

    >>> self_test()
    """
    steps = undo_steps()
    att.check(att.max_abs_diff([steps["back"]], [UNDO_X]) < 1e-12, "转回去再转过来，应当回到原处")
    per_pair = rope.angles(FREQ_D, FREQ_POSITION, FREQ_BASE)[0::2]
    att.check(
        rotation_angles(FREQ_POSITION, FREQ_D, FREQ_BASE) == per_pair,
        "练习 5 的转角应当与 02_rope.angles 一致",
    )
    first, second = (g["score"] for g in shift_scores()["groups"])
    att.check(abs(first - second) < 1e-12, "两组位置差相同的位置应当给出同一个分数")
    s = offset_score()
    att.check(abs(s["score"] - s["both"]) < 1e-12, "只转 k，分数应当与两个都按位置旋转时相同")


if __name__ == "__main__":
    self_test()
    att.print_json(answers())
