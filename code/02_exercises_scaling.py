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

# 练习 1：一个查询行，d = 4，两个 Key。
HAND_Q = [2.0, 0.0, 1.0, 1.0]
HAND_K = [[1.0, 1.0, 1.0, 0.0], [0.0, 2.0, 1.0, 1.0]]
HAND_V = [[4.0, 0.0], [0.0, 8.0]]
# 练习 2：两种写错的实现，用同一组 Q、K、V 检查。
BUG_Q = [[1.0, 0.0, 2.0, 1.0], [0.0, 2.0, 1.0, 0.0]]
BUG_K = [[1.0, 1.0, 0.0, 1.0], [2.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 1.0]]
BUG_V = [[3.0], [6.0], [9.0]]
BUG_HEADS = 4  # “按模型宽度缩放”：宽度 = 头数 × d
BUG_ORDER = [2, 1, 0]  # “重排”检查：把 Key 与 V 一起倒过来
# 练习 3：写一个不会溢出的 softmax。
CODE_SCORES = [1000.0, 1001.0, 1002.0]
# 练习 2 的三项检查：页面表头上的名字与结果里的键。
CHECKS = (("行之和为 1", "rows_sum_to_one"), ("重排 Key 与 V 不变", "permutation"), ("与 attention 一致", "matches"))


def hand_row() -> dict:
    """练习 1 的答案：一个不加 mask 的查询行的每一步。

    >>> s = hand_row()
    >>> s["dots"], s["scaled"], [round(w, 4) for w in s["weights"]]
    ([3.0, 2.0], [1.5, 1.0], [0.6225, 0.3775])
    """
    return sc.visible_steps(HAND_Q, HAND_K, HAND_V)


def _right(q, k, v):
    return att.attention(q, k, v, causal=False)


def _wide(q, k, v):  # 按模型宽度缩放
    rows = [sc.scaled_by(qi, k, v, BUG_HEADS * len(q[0])) for qi in q]
    return [r["weights"] for r in rows], [r["output"] for r in rows]


def _wrong_axis(q, k, v):  # 沿查询做 softmax
    w = sc.softmax_over_queries(att.scaled_scores(q, k))
    return w, att.matmul(w, v)


def bug_checks() -> list[dict]:
    """练习 2 的答案：正确实现与两种写错的实现各做 ``CHECKS`` 的三项检查。

    “与 attention 一致”比较的是 ``02_attention.attention`` 的结果；重排的顺序是 ``BUG_ORDER``。

    >>> [(r["name"], r["rows_sum_to_one"], r["permutation"], r["matches"]) for r in bug_checks()]
    [('正确实现', True, True, True), ('按模型宽度缩放', True, True, False), ('沿查询做 softmax', False, True, False)]
    """
    q, k, v, order = BUG_Q, BUG_K, BUG_V, BUG_ORDER
    _, reference = _right(q, k, v)
    rows = []
    for name, impl in (("正确实现", _right), ("按模型宽度缩放", _wide), ("沿查询做 softmax", _wrong_axis)):
        w, out = impl(q, k, v)
        _, moved = impl(q, [k[j] for j in order], [v[j] for j in order])
        rows.append({
            "name": name,
            "output": out,
            "rows_sum_to_one": all(abs(sum(r) - 1) < 1e-9 for r in w),
            "permutation": att.max_abs_diff(out, moved) < 1e-9,
            "matches": att.max_abs_diff(out, reference) < 1e-9,
        })
    return rows


def shifted_softmax(values: list[float]) -> list[float]:
    """第 3 道练习（写一个不会溢出的 softmax）的参考解：先减去最大值再取指数的 softmax，只用标准库。

    >>> [round(p, 4) for p in shifted_softmax([1000, 1001, 1002])]
    [0.09, 0.2447, 0.6652]
    >>> [round(p, 4) for p in shifted_softmax([-1000, -1001])]
    [0.7311, 0.2689]
    >>> shifted_softmax([])
    Traceback (most recent call last):
    ...
    ValueError: values 不能为空
    """
    if isinstance(values, (list, tuple)) and not values:
        raise ValueError("values 不能为空")
    xs = att.as_vector(values, "values")  # 有限实数，否则 ValueError（02_attention 也只用标准库）
    m = max(xs)
    exps = [math.exp(x - m) for x in xs]  # 每一项都在 [0, 1]（太小的会下溢成 0），最大项恰为 1，分母至少是 1
    total = sum(exps)
    return [e / total for e in exps]


def self_test() -> None:
    """核对答案：练习 1 与 attention 一致，练习 2 的两种错误各被一项检查抓住，练习 3 不溢出。

    >>> self_test()
    """
    _, out = att.attention([HAND_Q], HAND_K, HAND_V, causal=False)
    att.check(att.max_abs_diff([hand_row()["output"]], out) < 1e-12, "练习 1 的输出应与 attention 一致")
    right, *wrong = bug_checks()
    att.check(all(right[key] for _, key in CHECKS), "正确实现应通过全部三项检查")
    att.check(all(not all(r[key] for _, key in CHECKS) for r in wrong), "每种写错的实现都应被某项检查抓住")
    att.check(att.max_abs_diff([shifted_softmax(CODE_SCORES)], [att.softmax(CODE_SCORES)]) < 1e-12, "练习 3 应与 softmax 一致")


if __name__ == "__main__":
    import json

    self_test()
    answers = {
        "练习1_权重": hand_row()["weights"],
        "练习1_输出": hand_row()["output"],
        "练习2": {r["name"]: {name: r[key] for name, key in CHECKS} for r in bug_checks()},
        "练习3": shifted_softmax(CODE_SCORES),
    }
    print(json.dumps(answers, ensure_ascii=False, indent=2))
