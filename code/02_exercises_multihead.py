"""第 2 章“多头”一页的练习：题目的输入与参考解答，全部由教学代码算出。

题目里的数来自这里的常量，解答里的每一步中间值来自这里的函数，它们再调用 ``02_multihead.py``
与 ``02_attention.py``，所以答案不会与正文不一致。每道题的数据都是人工构造的小例子，与正文的
演示数据不同。运行 ``python3 02_exercises_multihead.py``（三个文件放在同一目录）：先自检，再以 JSON
打印每道题的答案。
"""

from __future__ import annotations

import importlib
import math

att = importlib.import_module("02_attention")
mh = importlib.import_module("02_multihead")

# 练习 2.4.1：投影后的 Q、K（3 个位置、4 列）切成 SPLIT_HEADS 个头；算头 ROW_HEAD 在位置
# ROW_POS 的一行权重，再与头 OTHER_HEAD 在同一位置的一行比较。
SPLIT_Q = [[1.0, 0.0, 2.0, 1.0], [0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 2.0]]
SPLIT_K = [[0.0, 1.0, 1.0, 1.0], [1.0, 0.0, 2.0, 0.0], [1.0, 1.0, 0.0, 2.0]]
SPLIT_HEADS = 2
ROW_HEAD = 1
ROW_POS = 2
OTHER_HEAD = 0
# 练习 2.4.2：查询头数、几种 K/V 头数、头维度，以及（测试用的）缓存位置数。
GQA_HEADS = 8
GQA_KV_CHOICES = [8, 4, 2, 1]
GQA_HEAD_DIM = 16
GQA_TOKENS = 100
GQA_ASK_KV = 2
GQA_ASK_GROUP = 1  # 问：kv_heads = 2 时，哪些查询头共用 K/V 头 1？
# 练习 2.4.3：一行 Q 切成 RESHAPE_HEADS 个头，按对的与写反的 reshape 各切一次。
RESHAPE_ROW = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
RESHAPE_HEADS = 3
# 三个写错的多头（测试用）：2 个位置，4 个查询头，2 个 K/V 头，每头 2 列。
BUG_Q = [[1.0, 0.0, 2.0, -1.0, 0.0, 1.0, 1.0, 2.0], [0.0, 2.0, 1.0, 1.0, -1.0, 0.0, 2.0, 1.0]]
BUG_K = [[1.0, -1.0, 0.0, 2.0], [2.0, 1.0, 1.0, -1.0]]
BUG_V = [[1.0, 0.0, 2.0, 1.0], [0.0, 3.0, -1.0, 2.0]]
BUG_HEADS = 4
BUG_KV = 2
BUG_DELTA = 1.0  # “只改一个头”：头 BUMP_HEAD 的 Q 列都加上它
BUMP_HEAD = 0
VARIANTS = {
    "right": "正确写法",
    "reshape": "A：按 (n, d_head, h) reshape",
    "concat": "B：拼回时各头倒序",
    "round_robin": "C：轮流分组 c mod h_kv",
}
CHECKS = [
    "只改一个头的 Q 列",
    "分组 K/V 等于重复 K/V",
    "只设一个头等于单头注意力",
    "与独立参照一致",
]


def _index(i: object, name: str, n: int) -> int:
    if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < n:
        raise ValueError(f"{name} 必须是 0 到 {n - 1} 之间的整数，收到 {i!r}")
    return i


# -- 练习 2.4.1 ---------------------------------------------------------------------------------
def split_and_row(
    q=SPLIT_Q,
    k=SPLIT_K,
    heads: int = SPLIT_HEADS,
    head: int = ROW_HEAD,
    pos: int = ROW_POS,
    other: int = OTHER_HEAD,
) -> dict:
    """练习 2.4.1：每个头拿哪几列、各头的 Q 块；
    再按因果规则算头 ``head`` 在位置 ``pos`` 的一行权重，
    以及头 ``other`` 在同一位置的一行权重（同样的 Key，不同的列）。

    >>> a = split_and_row()
    >>> a["columns"], a["head_dim"]
    ([[0, 1], [2, 3]], 2)
    >>> a["q_row"], a["k_rows"], a["dots"]
    ([1.0, 2.0], [[1.0, 1.0], [2.0, 0.0], [0.0, 2.0]], [3.0, 2.0, 4.0])
    >>> [round(w, 4) for w in a["weights"]], [round(w, 4) for w in a["other_weights"]]
    ([0.284, 0.14, 0.576], [0.2483, 0.2483, 0.5035])
    """
    q = att.as_matrix(q, "q")
    k = att.as_matrix(k, "k")
    if len(q[0]) != len(k[0]) or len(q) != len(k):
        raise ValueError(
            f"自注意力里 q 与 k 的形状必须相同，收到 ({len(q)}, {len(q[0])}) 与 "
            f"({len(k)}, {len(k[0])})"
        )
    q_heads = mh.split_heads(q, heads)
    k_heads = mh.split_heads(k, heads)  # 也校验 heads 与整除
    d = len(q_heads[0][0])
    head = _index(head, "head", heads)
    other = _index(other, "other", heads)
    pos = _index(pos, "pos", len(q))
    q_row = q_heads[head][pos]
    k_rows = k_heads[head][: pos + 1]  # 因果：位置 pos 只读 Key 0 … pos
    dots = [sum(a * b for a, b in zip(q_row, kr)) for kr in k_rows]
    scaled = [x / math.sqrt(d) for x in dots]
    top = max(scaled)
    exps = [math.exp(x - top) for x in scaled]
    visible = att.visibility(len(q), len(q))  # 所有头共用同一张因果可见性表
    weights, _ = att.masked_attention(q_heads[head], k_heads[head], k_heads[head], visible)
    others, _ = att.masked_attention(q_heads[other], k_heads[other], k_heads[other], visible)
    return {
        "columns": [list(mh.head_columns(h, d)) for h in range(heads)],
        "q_heads": q_heads, "head_dim": d, "q_row": q_row, "k_rows": k_rows, "dots": dots,
        "scaled": scaled, "max": top, "exps": exps, "total": sum(exps),
        "weights": weights[pos][: pos + 1],
        "other_head": other, "other_weights": others[pos][: pos + 1],
    }  # fmt: skip


# -- 练习 2.4.2 ---------------------------------------------------------------------------------
def gqa_plan(
    heads: int = GQA_HEADS,
    kv_choices=GQA_KV_CHOICES,
    head_dim: int = GQA_HEAD_DIM,
    tokens: int = GQA_TOKENS,
) -> list[dict]:
    """练习 2.4.2：每种 K/V 头数下，各查询头用哪个 K/V 头，一层缓存存多少个数，缩小到几分之一。

    >>> rows = gqa_plan(4, [4, 2, 1], 2, 10)
    >>> [(r["kv_heads"], r["groups"], r["cache"], r["fraction"]) for r in rows]
    [(4, [0, 1, 2, 3], 160, 1), (2, [0, 0, 1, 1], 80, 2), (1, [0, 0, 0, 0], 40, 4)]
    >>> gqa_plan(4, [3], 2, 10)
    Traceback (most recent call last):
    ...
    ValueError: kv_heads=3 必须整除 heads=4：每个 K/V 头要分到同样多的查询头
    """
    choices = att.as_list(kv_choices, "kv_choices")
    if not choices:
        raise ValueError("kv_choices 必须是非空的 K/V 头数列表")
    full = mh.kv_cache_numbers(tokens, heads, head_dim)
    rows = []
    for kv in choices:
        groups = [mh.kv_group(h, heads, kv) for h in range(heads)]
        cache = mh.kv_cache_numbers(tokens, kv, head_dim)
        # kv 整除 heads，所以缓存正好缩小到 heads / kv 分之一。
        rows.append(
            {
                "kv_heads": kv,
                "group_size": heads // kv,
                "groups": groups,
                "kv_cols": kv * head_dim,
                "cache": cache,
                "fraction": full // cache,
            }
        )
    return rows


def sharing_heads(
    heads: int = GQA_HEADS, kv_heads: int = GQA_ASK_KV, group: int = GQA_ASK_GROUP
) -> list[int]:
    """共用第 ``group`` 个 K/V 头的查询头（``kv_group`` 反过来查）。

    >>> sharing_heads(8, 2, 1)
    [4, 5, 6, 7]
    """
    mh.kv_group(0, heads, kv_heads)  # 校验 heads 与 kv_heads
    group = _index(group, "group", kv_heads)
    return [h for h in range(heads) if mh.kv_group(h, heads, kv_heads) == group]


# -- 练习 2.4.3：reshape 的顺序 ---------------------------------------------------------------
def reshape_split(row=RESHAPE_ROW, heads: int = RESHAPE_HEADS) -> dict:
    """练习 2.4.3：一行 Q 按 ``(n, heads, d_head)`` 与写反的 ``(n, d_head, heads)`` 切成头，
    各头拿到哪几列；写反时，只改头 0 该用的列会牵动哪些头。

    >>> a = reshape_split()
    >>> a["right_cols"], a["wrong_cols"], a["touched"]
    ([[0, 1], [2, 3], [4, 5]], [[0, 3], [1, 4], [2, 5]], [0, 1])
    """
    row = att.as_vector(row, "row")
    right = mh.reshape_heads([row], heads)[0]  # 教学代码的 reshape；也校验 heads 整除列数
    d = len(right[0])
    right_cols = [list(mh.head_columns(c, d)) for c in range(heads)]
    wrong_cols = [[c + heads * t for t in range(d)] for c in range(heads)]  # 错：头是最后一个轴
    mine = set(right_cols[0])
    return {
        "head_dim": d, "right_cols": right_cols, "wrong_cols": wrong_cols,
        "right": right, "wrong": [[row[j] for j in cols] for cols in wrong_cols],
        "touched": [c for c, cols in enumerate(wrong_cols) if mine & set(cols)],
    }  # fmt: skip


# -- 三个写错的多头（测试用） ------------------------------------------------------------
def suspect_heads(q, k, v, heads: int, kv_heads: int, variant: str = "right"):
    """从投影后的 Q、K、V 算多头（因果规则），返回 ``(weights, concat)``；``variant`` 选一种写法。

    ``"right"`` 按正文；``"reshape"`` 按 ``(n, d_head, heads)`` 去 reshape（头 c 拿到列 c、
    c + heads……，拼回时也这样）；``"concat"`` 每个头都算对，拼回时却把头 c 的输出放进头
    ``heads − 1 − c`` 的列；``"round_robin"`` 让查询头 c 用 K/V 头 ``c mod kv_heads``。
    后三种故意写错，只用于测试。

    >>> q = [[1.0, 0.0], [0.0, 1.0]]
    >>> w, out = suspect_heads(q, q, [[1.0, 2.0], [3.0, 4.0]], 2, 2)
    >>> [round(p, 4) for p in w[0][1]], [round(c, 4) for c in out[1]]
    ([0.5, 0.5], [2.0, 3.4621])
    """
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise ValueError(f"variant 必须是 {'、'.join(VARIANTS)} 之一，收到 {variant!r}")
    q = att.as_matrix(q, "q")
    k = att.as_matrix(k, "k")
    v = att.as_matrix(v, "v")
    mh.kv_group(0, heads, kv_heads)  # 校验 heads 与 kv_heads
    if len(q[0]) % heads:
        raise ValueError(f"q 的列数 {len(q[0])} 不能被 heads={heads} 整除")
    d = len(q[0]) // heads
    if len(k[0]) != kv_heads * d or len(v[0]) != kv_heads * d:
        raise ValueError(
            f"k 与 v 必须各有 kv_heads·d_head = {kv_heads * d} 列，收到 {len(k[0])} 与 {len(v[0])}"
        )
    if not len(q) == len(k) == len(v):
        raise ValueError(f"q、k、v 的行数必须相同，收到 {len(q)}、{len(k)}、{len(v)}")

    def cols(head: int, count: int) -> list[int]:
        if variant == "reshape":
            return [head + count * t for t in range(d)]  # 错：头成了最后一个轴
        return list(mh.head_columns(head, d))

    def take(m, columns):
        return [[row[c] for c in columns] for row in m]

    visible = att.visibility(len(q), len(k))
    weights = []
    concat = [[0.0] * (heads * d) for _ in q]
    for head in range(heads):
        g = head % kv_heads if variant == "round_robin" else mh.kv_group(head, heads, kv_heads)
        kv_cols = cols(g, kv_heads)
        w, out = att.masked_attention(
            take(q, cols(head, heads)), take(k, kv_cols), take(v, kv_cols), visible
        )
        weights.append(w)
        back = heads - 1 - head if variant == "concat" else head  # 错：倒序拼回
        place = cols(back, heads)
        for i, row in enumerate(out):
            for t, c in enumerate(place):
                concat[i][c] = row[t]
    return weights, concat


def bug_checks(
    q=BUG_Q,
    k=BUG_K,
    v=BUG_V,
    heads: int = BUG_HEADS,
    kv_heads: int = BUG_KV,
    delta: float = BUG_DELTA,
) -> list[dict]:
    """每种写法过一遍正文的四项检查；``passed`` 与 ``details`` 依次对应 ``CHECKS``。

    >>> [(r["name"][0], r["passed"]) for r in bug_checks()]  # doctest: +NORMALIZE_WHITESPACE
    [('正', [True, True, True, True]), ('A', [False, False, True, False]),
     ('B', [True, True, True, False]), ('C', [True, False, True, False])]
    """
    q = att.as_matrix(q, "q")
    k = att.as_matrix(k, "k")
    v = att.as_matrix(v, "v")
    if not math.isfinite(delta := att.real(delta, "delta")) or delta == 0:
        raise ValueError(f"delta 必须是非零的有限数，收到 {delta!r}")
    ref_w, ref_out = suspect_heads(q, k, v, heads, kv_heads, "right")
    cols = mh.head_columns(BUMP_HEAD, len(q[0]) // heads)
    bumped = [[x + delta if c in cols else x for c, x in enumerate(row)] for row in q]
    k_rep, v_rep = (mh.repeat_kv_columns(m, heads, kv_heads) for m in (k, v))  # 相邻重复
    rows = []
    for key, name in VARIANTS.items():
        w, out = suspect_heads(q, k, v, heads, kv_heads, key)
        w2, _ = suspect_heads(bumped, k, v, heads, kv_heads, key)
        moved = [c for c in range(heads) if w[c] != w2[c]]
        _, repeated = suspect_heads(q, k_rep, v_rep, heads, heads, key)
        _, one = suspect_heads(q, k_rep, v_rep, 1, 1, key)  # 一个头须与 Q 同宽：用重复后的 K、V
        _, single = att.attention(q, k_rep, v_rep)
        ref = max(
            [att.max_abs_diff(out, ref_out)] + [att.max_abs_diff(a, b) for a, b in zip(w, ref_w)]
        )
        details = [moved, att.max_abs_diff(out, repeated), att.max_abs_diff(one, single), ref]
        passed = [set(moved) <= {BUMP_HEAD}] + [x <= 1e-12 for x in details[1:]]
        rows.append({"key": key, "name": name, "passed": passed, "details": details})
    return rows


# -- 练习 2.4.4：写一个函数 -------------------------------------------------------------------
def attention_params(d_model: int, heads: int, kv_heads: int, head_dim: int) -> int:
    """一层注意力四个投影矩阵的参数个数（不计偏置），K/V 头可以分组，头维度单独给出。

    W_q 与 W_o 各有 d_model·heads·head_dim 个数，W_k 与 W_v 各有 d_model·kv_heads·head_dim 个。

    >>> attention_params(8, 2, 2, 4)  # 普通多头，heads·head_dim = d_model：4·d_model²
    256
    >>> attention_params(8, 4, 1, 2)  # MQA：K、V 只剩一个头
    160
    >>> attention_params(8, 4, 3, 2)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    ValueError: kv_heads=3 必须整除 heads=4
    """
    d_model = att.check_count(d_model, "d_model")
    heads = att.check_count(heads, "heads")
    kv_heads = att.check_count(kv_heads, "kv_heads")
    head_dim = att.check_count(head_dim, "head_dim")
    if heads % kv_heads:
        raise ValueError(f"kv_heads={kv_heads} 必须整除 heads={heads}")
    return 2 * d_model * heads * head_dim + 2 * d_model * kv_heads * head_dim


def answers() -> dict:
    """每道题的答案（JSON 可打印）；练习 2.4.3 是写反的 reshape 给各头的数。

    >>> sorted(answers())
    ['练习 2.4.1', '练习 2.4.2', '练习 2.4.3', '练习 2.4.4']
    """
    return {
        "练习 2.4.1": split_and_row()["weights"],
        "练习 2.4.2": {str(r["kv_heads"]): r["kv_cols"] for r in gqa_plan()},
        "练习 2.4.3": reshape_split()["wrong"],
        "练习 2.4.4": attention_params(8, 4, 1, 2),
    }


def self_test() -> None:
    """自检：各题的答案与教学代码、与彼此的关系一致。"""
    a = split_and_row()
    sums = [sum(w) for w in (a["weights"], a["other_weights"])]
    att.check(all(abs(t - 1) < 1e-12 for t in sums), "练习 1 的权重之和应为 1")
    att.check(a["weights"] != a["other_weights"], "练习 1：两个头用的列不同，权重应当不同")
    shrink = all(r["fraction"] == r["group_size"] for r in gqa_plan())
    att.check(shrink, "练习 2：K/V 的列应缩小到每组查询头数分之一")
    att.check(reshape_split()["touched"] == [0, 1], "练习 3：写反时头 0 的列分属头 0 与头 1")
    same = attention_params(8, 4, 1, 2) == mh.projection_params(8, 4, 2, 1)["total"]
    att.check(same, "练习 4 与 projection_params 不一致")


if __name__ == "__main__":
    self_test()
    att.print_json(answers())
