"""第2章“缩放与混合”一页的练习：题目的输入与参考答案，全部由教学代码算出。

题目里的数是这里的常量；答案的每一步由 ``02_attention.py`` 与 ``02_scaling.py`` 算出，所以与正文
用的是同一份代码。每道题的数据都是人工构造的小例子。把这三个文件放在同一目录，运行
``python3 02_exercises_scaling.py``：先核对答案，再以 JSON 打印每道题的答案。
"""

from __future__ import annotations

import importlib
import math

att = importlib.import_module("02_attention")
sc = importlib.import_module("02_scaling")

# 练习“雅可比矩阵作用在一整条向量上”：d = 4 的一行，两个 Key；分数的改变量 HAND_G。
HAND_Q = [2.0, 0.0, 1.0, 1.0]
HAND_K = [[1.0, 1.0, 1.0, 0.0], [0.0, 2.0, 1.0, 1.0]]
HAND_G = [1.0, -1.0]
# 练习“维数变大”：d = 2 的一行；查询与每个 Key 各复制 COPIES 份拼起来。
GROW_Q = [1.0, 2.0]
GROW_K = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
COPIES = 4
# 练习“写一个不会溢出的 softmax”。
CODE_SCORES = [1000.0, 1001.0, 1002.0]


def hand_row(
    q: list[float] = HAND_Q, k: list[list[float]] = HAND_K, g: list[float] = HAND_G
) -> dict:
    """“雅可比矩阵”一题的答案：一行的权重 p、J = diag(p) − p p^T 与 J·g。

    >>> s = hand_row()
    >>> s["dots"]
    [3.0, 2.0]
    >>> s["scaled"]
    [1.5, 1.0]
    >>> [round(w, 4) for w in s["weights"]]
    [0.6225, 0.3775]
    >>> round(s["peak"], 4)  # J 绝对值最大的元素，不超过 1/4
    0.235
    >>> [round(x, 4) for x in s["jg"]]
    [0.47, -0.47]
    """
    q = att.as_vector(q, "q")
    k = att.as_matrix(k, "k")
    g = att.as_vector(g, "g")
    if len(g) != len(k):
        raise ValueError(f"g 的分量个数必须等于 Key 的个数 {len(k)}，收到 {len(g)}")
    s = sc.visible_steps(q, k, [[0.0]] * len(k))  # 只用到权重，V 不参与
    jac = sc.softmax_jacobian(s["weights"])
    jg = [sum(a * b for a, b in zip(row, g)) for row in jac]  # (n_key,)
    peak = max(abs(x) for row in jac for x in row)
    return {**s, "jacobian": jac, "jg": jg, "peak": peak}


def copied_row(
    q: list[float] = GROW_Q, k: list[list[float]] = GROW_K, copies: int = COPIES
) -> dict:
    """“维数变大”一题的答案：d 维与复制成 ``copies`` 倍维数后，缩放与不缩放的权重。

    ``temperature_big`` 与 ``temperature_raw`` 是两种分数相当于 d 维那一行（已除以 √d）的温度。

    >>> r = copied_row()
    >>> r["d"]
    2
    >>> r["d_big"]
    8
    >>> r["dots"]
    [1.0, 2.0, 3.0]
    >>> r["dots_big"]  # 复制 4 份：点积恰好变成 4 倍
    [4.0, 8.0, 12.0]
    >>> [round(w, 4) for w in r["weights"]]
    [0.14, 0.284, 0.576]
    >>> [round(w, 4) for w in r["weights_big"]]
    [0.0454, 0.1867, 0.7679]
    >>> [round(w, 4) for w in r["weights_raw"]]
    [0.0003, 0.018, 0.9817]
    >>> r["temperature_big"]
    0.5
    >>> round(r["temperature_raw"], 4)
    0.1768
    """
    q = att.as_vector(q, "q")
    k = att.as_matrix(k, "k")
    copies = att.check_count(copies, "copies", maximum=att.MAX_POSITIONS, why="复制出的向量是列表")
    if len(k[0]) != len(q):
        raise ValueError(f"k 的每一行必须与 q 一样长（{len(q)}），收到 {len(k[0])}")
    q_big = q * copies
    k_big = [row * copies for row in k]  # 复制出来的分量与原来的完全相关
    d = len(q)
    d_big = len(q_big)
    scaled = att.scaled_scores([q], k)[0]
    scaled_big = att.scaled_scores([q_big], k_big)[0]
    dots_big = att.matmul([q_big], [list(col) for col in zip(*k_big)])[0]  # 不缩放：(n_key,)
    return {
        "d": d,
        "d_big": d_big,
        "dots": att.matmul([q], [list(col) for col in zip(*k)])[0],
        "dots_big": dots_big,
        "scaled": scaled,
        "scaled_big": scaled_big,
        "weights": att.softmax(scaled),
        "weights_big": att.softmax(scaled_big),
        "weights_raw": att.softmax(dots_big),
        # 点积恰好变成 copies 倍：除以 √(copies·d) 后是 d 维缩放分数的 √copies 倍，
        # 不缩放则是 copies·√d 倍。
        "temperature_big": 1 / math.sqrt(copies),
        "temperature_raw": 1 / (copies * math.sqrt(d)),
    }


def shifted_softmax(values: list[float]) -> list[float]:
    """“不会溢出的 softmax”一题的参考解：先减去最大值再取指数，只用标准库。

    >>> [round(p, 4) for p in shifted_softmax([1000, 1001, 1002])]
    [0.09, 0.2447, 0.6652]
    >>> shifted_softmax([])  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    ValueError: values 不能为空
    """
    if not isinstance(values, (list, tuple)):
        raise ValueError(f"values 必须是列表或元组，收到 {type(values).__name__}")
    if not values:
        raise ValueError("values 不能为空")
    xs = []
    for j, x in enumerate(values):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise ValueError(f"values[{j}] 必须是实数，收到 {type(x).__name__}")
        try:
            x = float(x)  # 先全部转成 float：大整数相减不会再在 exp 里溢出
        except OverflowError:
            raise ValueError(f"values[{j}] 是 float 装不下的整数") from None
        if not math.isfinite(x):
            raise ValueError(f"values[{j}] 必须是有限数，收到 {x}")
        xs.append(x)
    m = max(xs)
    exps = [math.exp(x - m) for x in xs]  # 都在 [0, 1]，最大项恰为 1，分母至少是 1
    total = sum(exps)
    return [e / total for e in exps]


def self_test() -> None:
    """核对答案：权重与 attention 一致，复制等于换一个温度，shifted_softmax 不溢出。

    >>> self_test()
    """
    h = hand_row()
    w, _ = att.attention([HAND_Q], HAND_K, [[0.0]] * len(HAND_K), causal=False)
    att.check(att.max_abs_diff([h["weights"]], w) < 1e-12, "雅可比一题的权重应与 attention 一致")
    att.check(h["peak"] <= 0.25 < max(abs(x) for x in h["jg"]), "雅可比一题：J·g 应超过最大元 1/4")
    r = copied_row()
    for key in ("big", "raw"):
        same = att.softmax(r["scaled"], temperature=r[f"temperature_{key}"])
        att.check(
            att.max_abs_diff([r[f"weights_{key}"]], [same]) < 1e-12,
            f"维数一题的 weights_{key} 应等于换了温度的一行",
        )
    att.check(
        max(r["weights"]) < max(r["weights_big"]) < max(r["weights_raw"]),
        "维数一题：维数越大、不缩放，权重越集中",
    )
    shifted = shifted_softmax(CODE_SCORES)
    att.check(
        att.max_abs_diff([shifted], [att.softmax(CODE_SCORES)]) < 1e-12,
        "不会溢出的 softmax 应与 softmax 一致",
    )


if __name__ == "__main__":
    self_test()
    answers = {
        "练习 2.3.1": {key: hand_row()[key] for key in ("weights", "jacobian", "jg")},
        "练习 2.3.2": {key: copied_row()[key] for key in ("weights", "weights_big", "weights_raw")},
        "练习 2.3.3": shifted_softmax(CODE_SCORES),
    }
    att.print_json(answers)
