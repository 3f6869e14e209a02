"""第2章“反向传播”一页的练习：题目的输入与答案，全部由教学代码算出。

题目里的数来自这里的常量，解答里每一步的中间值来自 ``02_backprop.py`` 与 ``02_attention.py``
（三个文件放在同一目录），所以答案不会与正文不一致。每道题的数据都是人工构造的小例子，与正文的
演示数据不同。运行 ``python3 02_exercises_backprop.py``：先核对答案，再以 JSON 打印每道题的答案。
"""

from __future__ import annotations

import importlib
import math

att = importlib.import_module("02_attention")
bp = importlib.import_module("02_backprop")

# 练习 2.6.1：一行新的分数，以及这一行权重收到的梯度 dp。
JAC_SCORES = [1.0, -1.0, 0.0]
JAC_D_WEIGHTS = [1.0, 0.0, -1.0]
# 练习 2.6.2：2 个位置的因果自注意力，d = 2，V 只有一列。
HAND_Q = [[1.0, 0.0], [1.0, 1.0]]
HAND_K = [[1.0, 0.0], [0.0, 2.0]]
HAND_V = [[1.0], [3.0]]
HAND_D_OUT = [[0.5], [-1.0]]
HAND_ROW = 1  # 问 dS 的这一行；dV 问第 0 行
# 练习 2.6.3：缓存里有 past 个位置，新来 new 个查询；Key 0 是句首的 PAD。
ZERO_PAST = 2
ZERO_NEW = 2
ZERO_VALID = [False, True, True, True]
ZERO_Q = [[1.0, 0.5], [0.5, 1.0]]
ZERO_K = [[1.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, -1.0]]
ZERO_V = [[5.0], [1.0], [2.0], [-1.0]]
ZERO_D_OUT = [[1.0], [0.5]]
# 练习 2.6.4：修正项 D 什么时候为 0。3 个位置的因果自注意力，V 两列；给定的上游梯度 dO。
CORR_Q = [[0.5, 1.0], [1.0, -1.0], [0.0, 1.0]]
CORR_K = [[1.0, 0.0], [0.5, 0.5], [-1.0, 1.0]]
CORR_V = [[1.0, 2.0], [0.0, -1.0], [2.0, 1.0]]
CORR_D_OUT = [[0.3, -0.7], [0.9, 0.2], [-0.4, 0.6]]


# -- 练习 2.6.1 ------------------------------------------------------------------------------------
def jacobian_row(scores: list[float] = JAC_SCORES, d_weights: list[float] = JAC_D_WEIGHTS) -> dict:
    """练习 2.6.1 的答案：权重 p、雅可比矩阵 J 与行和、对角线 p(1 − p)，及 ds = J dp 的两种算法。

    >>> a = jacobian_row()
    >>> [round(x, 4) for x in a["p"]]
    [0.6652, 0.09, 0.2447]
    >>> [[round(x, 4) for x in row] for row in a["jacobian"]]
    [[0.2227, -0.0599, -0.1628], [-0.0599, 0.0819, -0.022], [-0.1628, -0.022, 0.1848]]
    >>> [round(x, 4) for x in a["ds"]]
    [0.3855, -0.0379, -0.3476]
    >>> round(a["ds_sum"], 12)  # ds 之和恒为 0
    0.0
    """
    jac = bp.softmax_jacobian(scores)  # 也校验 scores
    p = att.softmax(scores)
    d_weights = att.as_vector(d_weights, "d_weights")
    if len(d_weights) != len(p):
        raise ValueError(f"d_weights 必须与 scores 一样长，收到 {len(d_weights)} 和 {len(p)}")
    ds = bp.softmax_backward(p, d_weights)  # p * (dp − Σ p dp)
    by_matrix = [sum(row[b] * d_weights[b] for b in range(len(p))) for row in jac]  # J dp
    return {
        "p": p,
        "jacobian": jac,
        "row_sums": [sum(row) for row in jac],
        "diagonal": [x * (1 - x) for x in p],
        "dot": sum(a * b for a, b in zip(p, d_weights)),
        "ds": ds,
        "ds_by_matrix": by_matrix,
        "ds_sum": sum(ds),
    }


# -- 练习 2.6.2 ------------------------------------------------------------------------------------
def hand_steps(q=HAND_Q, k=HAND_K, v=HAND_V, d_out=HAND_D_OUT, row: int = HAND_ROW) -> dict:
    """练习 2.6.2 的答案：因果规则下前向与反向的每个中间量，及 dV[0][0] 与 dS 第 ``row`` 行的算式。

    >>> a = hand_steps()
    >>> [[round(x, 4) for x in r] for r in a["steps"]["weights"]]
    [[1.0, 0.0], [0.3302, 0.6698]]
    >>> round(a["steps"]["dv"][0][0], 4)
    0.1698
    >>> [round(x, 4) for x in a["steps"]["ds"][1]]
    [0.4424, -0.4424]
    """
    q = att.as_matrix(q, "q")
    k = att.as_matrix(k, "k")
    if len(q) != len(k):
        raise ValueError(f"自注意力里 q 与 k 的行数必须相同，收到 {len(q)} 与 {len(k)}")
    n = len(q)
    if not isinstance(row, int) or isinstance(row, bool) or not 0 <= row < n:
        raise ValueError(f"row 必须是 0 到 {n - 1} 之间的整数，收到 {row!r}")
    steps = bp.backward_steps(q, k, v, d_out, att.visibility(n, n))  # 校验 v、d_out 的形状
    p = steps["weights"]
    dp = steps["dp"]
    big_d = steps["rowsum_do_o"]
    return {
        "steps": steps,
        "scores": att.scaled_scores(q, k),
        "dv_terms": [(p[i][0], d_out[i][0]) for i in range(n)],  # dV[0][0] = Σ_i P[i][0]·dO[i][0]
        "ds_terms": [(p[row][j], dp[row][j], big_d[row]) for j in range(n)],  # dS = P·(dP − D)
        "row": row,
    }


# -- 练习 2.6.3 ------------------------------------------------------------------------------------
def mask_zeros(
    q=ZERO_Q, k=ZERO_K, v=ZERO_V, d_out=ZERO_D_OUT, past: int = ZERO_PAST, key_valid=ZERO_VALID
) -> dict:
    """练习 2.6.3 的答案：可见性表、每个 Key 被哪些查询读，以及 dK 与 dV 恰为 0 的 Key。

    >>> a = mask_zeros()
    >>> a["readers"]  # Key j 被哪些查询读
    [[], [0, 1], [0, 1], [1]]
    >>> a["zero_keys"]
    [0]
    """
    q = att.as_matrix(q, "q")
    k = att.as_matrix(k, "k")
    visible = att.visibility(len(q), len(k), past=past, key_valid=key_valid)  # 查 past、key_valid
    steps = bp.backward_steps(q, k, v, d_out, visible)
    readers = [[i for i in range(len(q)) if visible[i][j]] for j in range(len(k))]
    zero_keys = [j for j in range(len(k)) if all(x == 0.0 for x in steps["dk"][j] + steps["dv"][j])]
    return {"visible": visible, "steps": steps, "readers": readers, "zero_keys": zero_keys}


# -- 练习 2.6.4 ------------------------------------------------------------------------------------
def correction_cases(q=CORR_Q, k=CORR_K, v=CORR_V, d_out=CORR_D_OUT) -> dict:
    """练习 2.6.4 的答案：给定的 dO 与每行都和 O 正交的 dO⊥ = (−O_i1, O_i0) 各自的修正项 D，
    以及丢掉 D 的反向（``dS = P * dP``）与正确反向之差。

    D_i = rowsum(dO * O) 是 dO 的第 i 行在 O 的第 i 行上的点积：两者正交时它恰为 0，丢不丢它都一样。

    >>> c = correction_cases()
    >>> [([round(x, 4) for x in case["D"]], case["gap"] > 0) for case in c["cases"].values()]
    [([-1.1, 0.8046, -0.1033], True), ([0.0, 0.0, 0.0], False)]
    """
    q = att.as_matrix(q, "q")
    k = att.as_matrix(k, "k")
    v = att.as_matrix(v, "v")
    d_out = att.as_matrix(d_out, "d_out")
    if len(v[0]) != 2:
        raise ValueError(f"v 必须恰有两列（dO⊥ 的每行取 (−O_i1, O_i0)），收到 {len(v[0])} 列")
    _, out = att.attention(q, k, v)  # 因果规则；形状也在这里检查
    orthogonal = [[-o[1], o[0]] for o in out]  # 每行与 O 的同一行正交
    cases = {}
    for name, g in (("给定的 dO", d_out), ("与 O 逐行正交的 dO⊥", orthogonal)):
        right = bp.attention_backward(q, k, v, g)
        dropped = bp.wrong_backward_no_rowsum(q, k, v, g)
        cases[name] = {
            "d_out": g,
            "D": rowsum_correction(g, out),
            "gap": max(att.max_abs_diff(a, b) for a, b in zip(right, dropped)),
        }
    return {"outputs": out, "cases": cases}


# -- 练习 2.6.5：写一个函数 ------------------------------------------------------------------------
def rowsum_correction(d_out: list[list[float]], out: list[list[float]]) -> list[float]:
    """每个查询行的修正项 ``D_i = Σ_c dO[i][c]·O[i][c]``，即 ``rowsum(dO * O)``（``*`` 逐元素乘）。

    >>> rowsum_correction([[1.0, -1.0], [0.5, 2.0]], [[2.0, 3.0], [4.0, 0.5]])
    [-1.0, 3.0]
    >>> rowsum_correction([[1.0]], [[1.0, 2.0]])
    Traceback (most recent call last):
    ...
    ValueError: d_out 与 out 的形状必须相同，收到 (1, 1) 与 (1, 2)
    """
    # 题目要求只用 Python 标准库，所以这里不调用 02_attention 的检查，自己在边界上查一遍。
    for name, m in (("d_out", d_out), ("out", out)):
        if not isinstance(m, (list, tuple)) or not m:
            raise ValueError(
                f"{name} 必须是非空的嵌套列表（每行一个查询），收到 {type(m).__name__}"
            )
        for i, row in enumerate(m):
            if not isinstance(row, (list, tuple)) or len(row) != len(m[0]) or not row:
                raise ValueError(f"{name} 必须是矩形的嵌套列表：第 {i} 行与第 0 行不一样长")
            for c, x in enumerate(row):
                if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                    raise ValueError(f"{name}[{i}][{c}] 必须是有限的实数，收到 {x!r}")
    if len(d_out) != len(out) or len(d_out[0]) != len(out[0]):
        raise ValueError(
            f"d_out 与 out 的形状必须相同，"
            f"收到 ({len(d_out)}, {len(d_out[0])}) 与 ({len(out)}, {len(out[0])})"
        )
    correction = [sum(a * b for a, b in zip(do_i, o_i)) for do_i, o_i in zip(d_out, out)]
    if not all(math.isfinite(x) for x in correction):  # 每个数都有限，乘积之和仍可能溢出
        raise ValueError("d_out 与 out 的逐行点积超出了浮点数的范围：请缩小输入的数值")
    return correction


def answers() -> dict:
    """每道题的答案（JSON 可打印）；练习 2.6.4 给出两种 dO 的修正项 D 与丢掉 D 之后梯度差多少。

    >>> sorted(answers())
    ['练习 2.6.1', '练习 2.6.2', '练习 2.6.3', '练习 2.6.4', '练习 2.6.5']
    """
    hand = hand_steps()["steps"]
    cases = correction_cases()["cases"]
    return {
        "练习 2.6.1": jacobian_row()["ds"],
        "练习 2.6.2": {"dV[0][0]": hand["dv"][0][0], f"dS[{HAND_ROW}]": hand["ds"][HAND_ROW]},
        "练习 2.6.3": mask_zeros()["zero_keys"],
        "练习 2.6.4": {n: {"D": c["D"], "丢掉D后的最大差": c["gap"]} for n, c in cases.items()},
        "练习 2.6.5": rowsum_correction(HAND_D_OUT, hand["outputs"]),
    }


def self_test() -> None:
    """核对答案：两种 ds 算法一致，修正项两种写法相等，D 为 0 时丢掉它不改变梯度。"""
    a1 = jacobian_row()
    hand = hand_steps()["steps"]

    def same(a, b):
        return att.max_abs_diff([a], [b]) < 1e-12

    att.check(same(a1["ds"], a1["ds_by_matrix"]), "J dp 与 p * (dp − Σ p dp) 应当相同")
    correction = rowsum_correction(HAND_D_OUT, hand["outputs"])
    att.check(same(correction, hand["rowsum_dp_p"]), "rowsum(dO * O) 应当等于 rowsum(dP * P)")
    att.check(mask_zeros()["zero_keys"] == [0], "只有句首的 PAD Key 0 没有任何查询读")
    given, orthogonal = correction_cases()["cases"].values()
    att.check(given["gap"] > 1e-3, "给定的 dO：丢掉 D 应当改变梯度")
    att.check(max(map(abs, orthogonal["D"])) == 0.0, "与 O 逐行正交的 dO：D 应当恰为 0")
    att.check(orthogonal["gap"] == 0.0, "D 为 0 时丢掉它不改变梯度")


if __name__ == "__main__":
    self_test()
    att.print_json(answers())
