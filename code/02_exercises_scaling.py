"""第2章“缩放与混合”一页的练习：题目的输入与答案，全部由教学代码算出。

书页在“练习”一节调用这里的函数：题目里的数来自这里的常量，解答里的表、句子和每一步的中间值来自
``02_attention.py`` 与 ``02_scaling.py``，所以答案不会与正文不一致。每道题的数据都是人工构造的小例子。

直接运行 ``python3 code/02_exercises_scaling.py`` 会以 JSON 打印每道题的答案。
"""

from __future__ import annotations

import math

from book_tools import load

att = load("02_attention")
sc = load("02_scaling")

# 练习 1：一个查询行，d = 4，两个 Key。
HAND_Q = [2.0, 0.0, 1.0, 1.0]
HAND_K = [[1.0, 1.0, 1.0, 0.0], [0.0, 2.0, 1.0, 1.0]]
HAND_V = [[4.0, 0.0], [0.0, 8.0]]
# 练习 2：两种写错的实现，用同一组 Q、K、V 检查。
BUG_Q = [[1.0, 0.0, 2.0, 1.0], [0.0, 2.0, 1.0, 0.0]]
BUG_K = [[1.0, 1.0, 0.0, 1.0], [2.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 1.0]]
BUG_V = [[3.0], [6.0], [9.0]]
BUG_HEADS = 4  # “按模型宽度缩放”：宽度 = 头数 × d
BUG_SHIFT = 1000.0
# 练习 3：写一个不会溢出的 softmax。
CODE_SCORES = [1000.0, 1001.0, 1002.0]


def hand_row() -> dict:
    """练习 1 的答案：一个不加 mask 的查询行的每一步。

    >>> s = hand_row()
    >>> s["dots"], s["scaled"], [round(w, 4) for w in s["weights"]]
    ([3.0, 2.0], [1.5, 1.0], [0.6225, 0.3775])
    """
    return sc.visible_steps(HAND_Q, HAND_K, HAND_V)


def _right(q, k, v):
    return att.attention(q, k, v, causal=False)


def _wide(q, k, v):
    width = BUG_HEADS * len(q[0])
    rows = [sc.scaled_by(qi, k, v, width) for qi in q]
    return [r["weights"] for r in rows], [r["output"] for r in rows]


def _wrong_axis(q, k, v):
    w = sc.softmax_over_queries(att.scaled_scores(q, k))
    out = [[sum(wj * vj[c] for wj, vj in zip(row, v)) for c in range(len(v[0]))] for row in w]
    return w, out


def _close(a, b) -> bool:
    return all(abs(x - y) < 1e-9 for ra, rb in zip(a, b) for x, y in zip(ra, rb))


# 练习 2 的三项检查：表头上的名字与结果里的键。
CHECKS = (("行之和为 1", "rows_sum_to_one"), ("重排 Key 与 V 不变", "permutation"), ("与 attention 一致", "matches"))


def bug_checks() -> dict:
    """练习 2 的答案：正确实现与两种写错的实现各做三项检查（名字与页面上表头相同，见 ``CHECKS``）。

    “与 attention 一致”比较的是 ``02_attention.attention`` 的结果；``sentence`` 由表里的结果生成。

    >>> c = bug_checks()
    >>> [(r["name"], r["rows_sum_to_one"], r["permutation"], r["matches"]) for r in c["rows"]]
    [('正确实现', True, True, True), ('按模型宽度缩放', True, True, False), ('沿查询做 softmax', False, True, False)]
    """
    q, k, v = BUG_Q, BUG_K, BUG_V
    _, reference = _right(q, k, v)
    order = list(range(len(k)))[::-1]
    rows = []
    for name, impl in (("正确实现", _right), ("按模型宽度缩放", _wide), ("沿查询做 softmax", _wrong_axis)):
        w, out = impl(q, k, v)
        _, moved = impl(q, [k[j] for j in order], [v[j] for j in order])
        rows.append(
            {
                "name": name,
                "output": out,
                "rows_sum_to_one": all(abs(sum(r) - 1) < 1e-9 for r in w),
                "permutation": _close(out, moved),
                "matches": _close(out, reference),
            }
        )
    caught = [
        f"“{r['name']}”没有通过的检查：{'、'.join(f'“{n}”' for n, key in CHECKS if not r[key])}"
        for r in rows[1:]
        if not (r["rows_sum_to_one"] and r["permutation"] and r["matches"])
    ]
    missed = [r["name"] for r in rows[1:] if r["rows_sum_to_one"] and r["permutation"] and r["matches"]]
    sentence = "；".join(caught) + "。" if caught else ""
    if missed:
        sentence += f"{'、'.join(f'“{n}”' for n in missed)}三项检查都通过了。"
    return {"rows": rows, "reference": reference, "order": order, "sentence": sentence}


def shifted_softmax(values: list[float]) -> list[float]:
    """练习 3 的参考解：先减去最大值再取指数的 softmax，只用标准库。

    >>> [round(p, 4) for p in shifted_softmax([1000, 1001, 1002])]
    [0.09, 0.2447, 0.6652]
    >>> [round(p, 4) for p in shifted_softmax([-1000, -1001])]
    [0.7311, 0.2689]
    >>> shifted_softmax([])
    Traceback (most recent call last):
    ...
    ValueError: values 不能为空
    """
    xs = [float(x) for x in values]
    if not xs:
        raise ValueError("values 不能为空")
    m = max(xs)
    exps = [math.exp(x - m) for x in xs]  # 每一项都在 (0, 1]，最大项恰为 1
    total = sum(exps)
    return [e / total for e in exps]


if __name__ == "__main__":
    import json

    answers = {
        "练习1_权重": hand_row()["weights"],
        "练习1_输出": hand_row()["output"],
        "练习2": bug_checks()["sentence"],
        "练习3": shifted_softmax(CODE_SCORES),
    }
    print(json.dumps(answers, ensure_ascii=False, indent=2))
