"""第 2 章教学代码：多头注意力与分组 K/V 头（GQA、MQA），全部可以手算。

“多头”一页的配套代码；X 与四个投影矩阵都是人工构造的小矩阵。softmax、可见性表、单头注意力、
矩阵乘法和输入检查从同一目录的 ``02_attention.py`` 导入：多头只在外面改变表示的分组方式。
权重按行向量乘矩阵 ``x @ W`` 写（PyTorch ``nn.Linear.weight`` 的转置）：``x`` (n, d_model)；
``w_q`` (d_model, heads·head_dim)；``w_k``、``w_v`` (d_model, kv_heads·head_dim)，kv_heads =
heads 时就是普通多头；``w_o`` (heads·head_dim, d_model)。头 ``head`` 用 Q、K、V 的第
``head·head_dim`` 到 ``(head+1)·head_dim − 1`` 列。运行 ``python3 02_multihead.py``：先自检，
再以 JSON 打印演示结果。
"""

from __future__ import annotations

import importlib
import math

att = importlib.import_module("02_attention")


# -- 按列切头、reshape / transpose、分组 ----------------------------------------------------------
def head_columns(head: int, head_dim: int) -> range:
    """头 ``head`` 在 Q（或 K、V）里占的列：``head·head_dim`` 到 ``(head+1)·head_dim − 1``。
    >>> list(head_columns(1, 2))
    [2, 3]
    """
    head = att.check_count(head, "head", minimum=0)
    head_dim = att.check_count(head_dim, "head_dim")
    return range(head * head_dim, (head + 1) * head_dim)


def split_heads(m: list[list[float]], heads: int) -> list[list[list[float]]]:
    """把 ``(rows, heads·head_dim)`` 按列切成 heads 块，每块 ``(rows, head_dim)``；行一个不少。

    切 ``w_q`` 得到各头的小投影 ``(d_model, head_dim)``；切 Q 得到各头的查询 ``(n, head_dim)``。

    >>> split_heads([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]], 2)
    [[[1.0, 2.0], [5.0, 6.0]], [[3.0, 4.0], [7.0, 8.0]]]
    >>> split_heads([[1.0, 2.0, 3.0]], 2)
    Traceback (most recent call last):
    ...
    ValueError: 列数 3 不能被 heads=2 整除，无法平均切成头
    """
    m, heads, d = _per_head(m, heads, "无法平均切成头")
    return [
        [[row[c] for c in head_columns(head, d)] for row in m] for head in range(heads)
    ]  # (heads, n, d)


def reshape_heads(m: list[list[float]], heads: int) -> list[list[list[float]]]:
    """reshape：``(n, heads·head_dim) → (n, heads, head_dim)``，每行的列按头分段，不搬动数。
    >>> reshape_heads([[1.0, 2.0, 3.0, 4.0]], 2)
    [[[1.0, 2.0], [3.0, 4.0]]]
    """
    m, heads, d = _per_head(m, heads, "无法 reshape 成头")
    return [[row[head * d : (head + 1) * d] for head in range(heads)] for row in m]


def swap_01(t: list[list[list[float]]]) -> list[list[list[float]]]:
    """transpose：交换前两个轴，``(a, b, c) → (b, a, c)``；用两次就回到原样。
    >>> swap_01([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])
    [[[1.0, 2.0], [5.0, 6.0]], [[3.0, 4.0], [7.0, 8.0]]]
    """
    blocks = [att.as_matrix(b, f"t[{a}]") for a, b in enumerate(att.as_list(t, "t"))]  # (b, c) 各一
    if not blocks or any(len(b) != len(blocks[0]) for b in blocks):
        raise ValueError("t 必须是非空的三维列表 (a, b, c)，第二个轴的长度处处相同")
    return [[b[j] for b in blocks] for j in range(len(blocks[0]))]  # (b, a, c)


def kv_group(head: int, heads: int, kv_heads: int) -> int:
    """查询头 ``head`` 用哪个 K/V 头：相邻的 ``heads / kv_heads`` 个查询头为一组，共用一个。
    >>> [kv_group(c, 4, 2) for c in range(4)]  # GQA
    [0, 0, 1, 1]
    >>> [kv_group(c, 4, 1) for c in range(4)]  # MQA
    [0, 0, 0, 0]
    """
    heads, kv_heads, _ = _layout(1, heads, att.check_count(kv_heads, "kv_heads"), 1)
    if not isinstance(head, int) or isinstance(head, bool) or not 0 <= head < heads:
        raise ValueError(f"head 必须是 0 到 {heads - 1} 之间的整数，收到 {head!r}")
    return head // (heads // kv_heads)


def repeat_kv_columns(w: list[list[float]], heads: int, kv_heads: int) -> list[list[float]]:
    """把 ``(d_model, kv_heads·head_dim)`` 的 W_k 或 W_v 按组重复成 ``(d_model, heads·head_dim)``。

    重复后交给普通多头，结果与分组 K/V 头完全相同：GQA 省的是存储，不是算法。

    >>> repeat_kv_columns([[1.0, 2.0]], 4, 2)  # head_dim = 1：K/V 头 0、0、1、1
    [[1.0, 1.0, 2.0, 2.0]]
    """
    w = att.as_matrix(w, "w")
    heads, kv_heads, _ = _layout(1, heads, att.check_count(kv_heads, "kv_heads"), 1)
    if len(w[0]) % kv_heads:
        raise ValueError(f"w 的列数 {len(w[0])} 不能被 kv_heads={kv_heads} 整除")
    d = len(w[0]) // kv_heads
    cols = [c for head in range(heads) for c in head_columns(kv_group(head, heads, kv_heads), d)]
    return [[row[c] for c in cols] for row in w]  # (d_model, heads·head_dim)


def _concat(parts: list[list[list[float]]]) -> list[list[float]]:
    # 各头的 (n, d) 按头的顺序左右拼起来
    return [[c for block in row for c in block] for row in zip(*parts)]  # → (n, heads·d)


def _project(x: list[list[float]], w: list[list[float]], name: str) -> list[list[float]]:
    out = att.matmul(x, w)  # (n, d_in) @ (d_in, d_out) → (n, d_out)
    # 元素都有限，乘积之和仍可能超出浮点数的范围
    if not all(math.isfinite(c) for row in out for c in row):
        raise ValueError(f"乘以 {name} 的结果超出浮点数的范围：请缩小输入的数值")
    return out


# -- 多头注意力：两种写法 ------------------------------------------------------------------------
def multihead_steps(
    x, w_q, w_k, w_v, w_o, heads, kv_heads=None, causal=True, *, head_dim=None, key_valid=None
) -> dict:
    """多头注意力的每个中间对象（“头的列表”写法：每个头用自己的小投影），供正文逐步展示。
    >>> eye = [[1.0, 0.0], [0.0, 1.0]]
    >>> s = multihead_steps([[1.0, 0.0], [0.0, 1.0]], eye, eye, eye, eye, heads=2)
    >>> s["head_dim"]
    1
    >>> [len(w) for w in s["weights"]]
    [2, 2]
    >>> s["visible"]
    [[True, False], [True, True]]
    """
    x, m, (heads, kv_heads, head_dim) = _weights(x, w_q, w_k, w_v, w_o, heads, kv_heads, head_dim)
    # 每个头有自己的小投影：W_q 里属于它的那组列，形状 (d_model, head_dim)。
    q_heads = [_project(x, w, "w_q") for w in split_heads(m["w_q"], heads)]  # 每块 (n, head_dim)
    k_heads = [_project(x, w, "w_k") for w in split_heads(m["w_k"], kv_heads)]  # kv_heads 块
    v_heads = [_project(x, w, "w_v") for w in split_heads(m["w_v"], kv_heads)]
    # 每个头读的是同样的 n 个位置：可见性表只造一次，所有头共用。
    visible = att.visibility(len(x), len(x), causal=causal, key_valid=key_valid)  # (n, n)
    weights = []
    head_outputs = []
    for head in range(heads):
        g = kv_group(head, heads, kv_heads)
        # masked_attention 按 K 的列数缩放：除以 √head_dim，不是 √d_model。
        w, out = att.masked_attention(q_heads[head], k_heads[g], v_heads[g], visible)
        weights.append(w)
        head_outputs.append(out)
    concat = _concat(head_outputs)  # (n, heads·head_dim)：列的位置正是它在 Q 里占的位置
    output = _project(concat, m["w_o"], "w_o")  # (n, d_model)
    return {
        "q": _concat(q_heads),
        "k": _concat(k_heads),
        "v": _concat(v_heads),
        "q_heads": q_heads,
        "k_heads": k_heads,
        "v_heads": v_heads,
        "visible": visible,
        "weights": weights,
        "head_outputs": head_outputs,
        "concat": concat,
        "output": output,
        "heads": heads,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
    }


def multihead_attention(
    x, w_q, w_k, w_v, w_o, heads, kv_heads=None, causal=True, *, head_dim=None, key_valid=None
) -> tuple[list[list[list[float]]], list[list[float]]]:
    """多头自注意力（写法一：头的列表，逐头计算再拼接），返回 ``(weights, output)``。

    ``kv_heads`` 缺省等于 ``heads``；``head_dim`` 缺省为 ``d_model // heads``（除不尽时必须给出）。
    分数除以 ``√head_dim``；所有头共用一张可见性表（``causal``、``key_valid`` 同单头）。
    对照 ``torch.nn.MultiheadAttention``：``in_proj_weight`` 的三块是 ``w_q``、``w_k``、``w_v``
    的转置，``out_proj.weight`` 是 ``w_o`` 的转置（偏置取 0）；布尔 ``attn_mask`` 以 True 为禁止。

    >>> x = [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]
    >>> w, out = multihead_attention(x, EYE4, EYE4, EYE4, EYE4, heads=2)
    >>> [[round(p, 4) for p in row] for row in w[0]]
    [[1.0, 0.0], [0.3302, 0.6698]]
    >>> [round(c, 4) for c in out[1]]
    [0.3302, 0.6698, 0.3302, 0.6698]
    """
    s = multihead_steps(
        x, w_q, w_k, w_v, w_o, heads, kv_heads, causal, head_dim=head_dim, key_valid=key_valid
    )
    return s["weights"], s["output"]


def multihead_attention_fused(
    x, w_q, w_k, w_v, w_o, heads, kv_heads=None, causal=True, *, head_dim=None, key_valid=None
) -> tuple[list, list[list[float]]]:
    """多头自注意力（写法二：一次大投影，再 reshape / transpose），返回 ``(weights, output)``。

    参数同 ``multihead_attention``。nanoGPT 一类代码的形状变化：``(n, h·d) → reshape (n, h, d) →
    transpose (h, n, d)``，逐头注意力后 ``transpose (n, h, d) → reshape (n, h·d)``，最后乘 ``w_o``。

    >>> x = [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]
    >>> e = EYE4
    >>> multihead_attention_fused(x, e, e, e, e, 2) == multihead_attention(x, e, e, e, e, 2)
    True
    """
    x, m, (heads, kv_heads, head_dim) = _weights(x, w_q, w_k, w_v, w_o, heads, kv_heads, head_dim)
    group = heads // kv_heads
    q = swap_01(reshape_heads(_project(x, m["w_q"], "w_q"), heads))  # (n, h·d)→(n, h, d)→(h, n, d)
    k = swap_01(reshape_heads(_project(x, m["w_k"], "w_k"), kv_heads))  # (kv_heads, n, d)
    v = swap_01(reshape_heads(_project(x, m["w_v"], "w_v"), kv_heads))  # (kv_heads, n, d)
    visible = att.visibility(len(x), len(x), causal=causal, key_valid=key_valid)  # (n, n)
    weights = []
    head_outputs = []
    for c in range(heads):
        # 查询头 c 读 K/V 头 c // group
        w, out = att.masked_attention(q[c], k[c // group], v[c // group], visible)
        weights.append(w)  # (n, n)
        head_outputs.append(out)  # (n, d)
    out = swap_01(head_outputs)  # (h, n, d) → (n, h, d)
    merged = [[c for part in row for c in part] for row in out]  # reshape (n, h, d) → (n, h·d)
    return weights, _project(merged, m["w_o"], "w_o")  # (h, n, n), (n, d_model)


# -- 代价：参数、乘加、KV 缓存 ------------------------------------------------------------------
def projection_params(
    d_model: int, heads: int, head_dim: int | None = None, kv_heads: int | None = None
) -> dict:
    """四个投影的参数个数（不计偏置）；heads·head_dim = d_model、kv_heads = heads 时为 4·d_model²。
    >>> projection_params(8, 2)
    {'w_q': 64, 'w_k': 64, 'w_v': 64, 'w_o': 64, 'total': 256}
    >>> projection_params(8, 4, kv_heads=1)["total"]
    160
    """
    d_model = att.check_count(d_model, "d_model")
    heads, kv_heads, head_dim = _layout(d_model, heads, kv_heads, head_dim)
    q_cols = heads * head_dim
    kv_cols = kv_heads * head_dim
    p = {
        "w_q": d_model * q_cols,
        "w_k": d_model * kv_cols,
        "w_v": d_model * kv_cols,
        "w_o": q_cols * d_model,
    }
    return {**p, "total": sum(p.values())}


def multiply_adds(
    n: int, d_model: int, heads: int, head_dim: int | None = None, kv_heads: int | None = None
) -> dict:
    """n 个位置一次多头自注意力的乘加次数（整张 n×n 分数表都算，掩码不省计算）；``score_cells``
    是所有头的分数表格子数 ``heads·n²``，也是 softmax 要取的指数个数。
    >>> multiply_adds(3, 4, 2)
    {'projections': 192, 'scores': 36, 'mixing': 36, 'total': 264, 'score_cells': 18}
    """
    n = att.check_count(n, "n")
    p = projection_params(d_model, heads, head_dim, kv_heads)
    heads, _, head_dim = _layout(d_model, heads, kv_heads, head_dim)
    counts = {
        "projections": n * p["total"],  # 每个位置乘一遍四个矩阵
        "scores": heads * n * n * head_dim,  # 每头 n×n 个点积，每个 head_dim 次乘加
        "mixing": heads * n * n * head_dim,  # 每头用 n×n 个权重混合 head_dim 列
    }
    return {**counts, "total": sum(counts.values()), "score_cells": heads * n * n}


def kv_cache_numbers(n_tokens: int, kv_heads: int, head_dim: int) -> int:
    """一层 KV 缓存为 ``n_tokens`` 个位置存多少个数：K 与 V 各 ``kv_heads·head_dim`` 列。
    >>> kv_cache_numbers(1, 2, 2)
    8
    >>> kv_cache_numbers(1, 1, 2)
    4
    """
    n_tokens = att.check_count(n_tokens, "n_tokens")
    kv_heads = att.check_count(kv_heads, "kv_heads")
    head_dim = att.check_count(head_dim, "head_dim")
    return 2 * n_tokens * kv_heads * head_dim


# -- 检查：正文的表与测试用同一组函数 ------------------------------------------------------------
def check_rows(
    x, w_q, w_k, w_v, w_o, heads, kv_heads, *, head: int = 0, delta: float = 1.0
) -> list[dict]:
    """本页的四项检查，每项返回 ``{"check", "holds", "detail"}``：两种写法相同；只把头 ``head`` 的
    W_q 列加上 ``delta``，别的头的权重一格不变；分组 K/V 等于按组重复后的普通多头；heads = 1 等于
    用同样投影的单头注意力（输出再乘 W_o）。

    >>> x = [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]
    >>> [r["holds"] for r in check_rows(x, EYE4, EYE4, EYE4, EYE4, 2, 2)]
    [True, True, True, True]
    """
    s = multihead_steps(x, w_q, w_k, w_v, w_o, heads, kv_heads)
    heads = s["heads"]
    kv_heads = s["kv_heads"]
    d = s["head_dim"]
    if not isinstance(head, int) or isinstance(head, bool) or not 0 <= head < heads:
        raise ValueError(f"head 必须在 0 到 {heads - 1} 之间，收到 {head!r}")
    delta = att.real(delta, "delta")
    if not math.isfinite(delta):
        raise ValueError(f"delta 必须是有限的数，收到 {delta!r}")
    _, fused = multihead_attention_fused(x, w_q, w_k, w_v, w_o, heads, kv_heads)
    diff = att.max_abs_diff(s["output"], fused)
    rows = [{"check": "两种写法相同", "holds": diff <= 1e-12, "detail": diff}]
    cols = head_columns(head, d)
    bumped = [
        [c + delta if j in cols else c for j, c in enumerate(r)] for r in att.as_matrix(w_q, "w_q")
    ]
    w2, _ = multihead_attention(x, bumped, w_k, w_v, w_o, heads, kv_heads)
    moved = [c for c in range(heads) if s["weights"][c] != w2[c]]
    rows.append(
        {"check": f"只改头 {head} 的 W_q 列", "holds": set(moved) <= {head}, "detail": moved}
    )
    wk_r = repeat_kv_columns(w_k, heads, kv_heads)  # (d_model, heads·head_dim)
    wv_r = repeat_kv_columns(w_v, heads, kv_heads)
    _, repeated = multihead_attention(x, w_q, wk_r, wv_r, w_o, heads)
    diff = att.max_abs_diff(s["output"], repeated)
    rows.append({"check": "分组 K/V 等于重复 K/V", "holds": diff <= 1e-12, "detail": diff})
    # heads = 1：整块 W_q、W_k、W_v 当一个头用（K/V 先按组重复，让列数相同）。
    _, one = multihead_attention(x, w_q, wk_r, wv_r, w_o, 1, head_dim=heads * d)
    _, single = att.attention(att.matmul(x, w_q), att.matmul(x, wk_r), att.matmul(x, wv_r))
    diff = att.max_abs_diff(one, att.matmul(single, w_o))
    rows.append({"check": "只设一个头等于单头", "holds": diff <= 1e-12, "detail": diff})
    return rows


# -- 边界上的检查 --------------------------------------------------------------------------------
def _layout(d_model: int, heads: object, kv_heads: object, head_dim: object) -> tuple[int, ...]:
    """查询头数、K/V 头数与头维度：kv_heads 整除 heads；没给 head_dim 时由 d_model / heads 推出。"""
    heads = att.check_count(heads, "heads", maximum=att.MAX_POSITIONS)  # 上限同位置数
    kv_heads = heads if kv_heads is None else att.check_count(kv_heads, "kv_heads")
    if heads % kv_heads:
        raise ValueError(
            f"kv_heads={kv_heads} 必须整除 heads={heads}：每个 K/V 头要分到同样多的查询头"
        )
    if head_dim is None:  # 只有没给 head_dim 时才用 d_model / heads 推出它；真实配置常把它单独写出
        if d_model % heads:
            raise ValueError(f"d_model={d_model} 不能被 heads={heads} 整除：请另给 head_dim")
        head_dim = d_model // heads
    head_dim = att.check_count(head_dim, "head_dim")
    return heads, kv_heads, head_dim


def _weights(x, w_q, w_k, w_v, w_o, heads, kv_heads, head_dim):
    """X 与四个投影矩阵变成 float 的矩阵，并核对它们的形状；返回 (x, 矩阵字典, 三个头数)。"""
    x = att.as_matrix(x, "x")
    m = {
        "w_q": att.as_matrix(w_q, "w_q"),
        "w_k": att.as_matrix(w_k, "w_k"),
        "w_v": att.as_matrix(w_v, "w_v"),
        "w_o": att.as_matrix(w_o, "w_o"),
    }
    d_model = len(x[0])
    heads, kv_heads, head_dim = _layout(d_model, heads, kv_heads, head_dim)
    want = {
        "w_q": (d_model, heads * head_dim),
        "w_k": (d_model, kv_heads * head_dim),
        "w_v": (d_model, kv_heads * head_dim),
        "w_o": (heads * head_dim, "任意"),  # 输出的宽度可以不是 d_model
    }
    for name, (rows, cols) in want.items():
        if len(m[name]) != rows or cols not in ("任意", len(m[name][0])):
            raise ValueError(
                f"{name} 的形状必须是 ({rows}, {cols})（d_model={d_model}、"
                f"heads={heads}、kv_heads={kv_heads}、head_dim={head_dim}），"
                f"收到 ({len(m[name])}, {len(m[name][0])})"
            )
    return x, m, (heads, kv_heads, head_dim)


def _per_head(m: object, heads: object, what: str) -> tuple[list[list[float]], int, int]:
    """矩阵、头数与每头的列数 head_dim：列数必须能被 heads 整除。"""
    m = att.as_matrix(m, "m")
    heads = att.check_count(heads, "heads")
    if len(m[0]) % heads:
        raise ValueError(f"列数 {len(m[0])} 不能被 heads={heads} 整除，{what}")
    return m, heads, len(m[0]) // heads


# -- 演示数据：人工构造，整数便于手算 ------------------------------------------------------------
# 3 个位置、d_model = 4；普通多头用 2 个头，每头 2 列。
DEMO_X = [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, -1.0]]
DEMO_WQ = [
    [0.0, -1.0, 1.0, 0.0],
    [-1.0, -1.0, 1.0, -1.0],
    [0.0, 0.0, 0.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
]
DEMO_WK = [
    [1.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, -1.0, 0.0],
    [-1.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, -1.0, 0.0],
]
DEMO_WV = [
    [1.0, 0.0, 2.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
    [1.0, 0.0, 0.0, 2.0],
]
DEMO_WO = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 1.0],
    [0.0, 0.0, 1.0, 0.0],
    [1.0, 0.0, 0.0, 1.0],
]
DEMO_HEADS = 2
# 分组 K/V：同一个 X 与 W_q，4 个查询头、每头 1 列；2 个 K/V 头（GQA）或 1 个（MQA）。
GQA_HEADS = 4
GQA_WK = [[1.0, 0.0], [0.0, -1.0], [-1.0, 1.0], [0.0, 1.0]]
GQA_WV = [[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [1.0, 1.0]]
MQA_WK = [[row[0]] for row in GQA_WK]
MQA_WV = [[row[0]] for row in GQA_WV]
DEMO = (DEMO_X, DEMO_WQ, DEMO_WK, DEMO_WV, DEMO_WO)
EYE4 = [[float(i == j) for j in range(4)] for i in range(4)]  # 函数示例用的单位矩阵
# 每个方案：W_k、W_v、W_o、查询头数、K/V 头数
PLANS = {
    "MHA": (DEMO_WK, DEMO_WV, DEMO_WO, DEMO_HEADS, DEMO_HEADS),
    "GQA": (GQA_WK, GQA_WV, DEMO_WO, GQA_HEADS, 2),
    "MQA": (MQA_WK, MQA_WV, DEMO_WO, GQA_HEADS, 1),
}


def self_test() -> None:
    """快速自检：普通多头、GQA、MQA 各过一遍本页的检查；参数与头数无关；各头守同一张可见性表。"""
    for name, plan in PLANS.items():
        failed = [r["check"] for r in check_rows(DEMO_X, DEMO_WQ, *plan) if not r["holds"]]
        att.check(not failed, f"{name} 没有通过的检查：{failed}")
    counts = {projection_params(8, heads)["total"] for heads in (1, 2, 4, 8)}
    att.check(counts == {4 * 8 * 8}, "参数个数不应随头数变")
    # 每个头的第 0 行都来自同一张因果可见性表：只能读 Key 0，其余格子恰为 0。
    weights, _ = multihead_attention(*DEMO, DEMO_HEADS)
    att.check(all(w[0][1:] == [0.0, 0.0] for w in weights), "每个头都必须遵守同一张因果可见性表")


def run_demo() -> dict:
    """演示结果：两个头的权重、两种写法之差、分组 K/V、KV 缓存与参数个数。
    >>> demo = run_demo()
    >>> demo["形状"]["Q"]
    '(3, 4)'
    >>> demo["两种写法最大差"]
    0.0
    >>> demo["KV缓存_每位置每层_每头1列"]
    {'MHA_4头': 8, 'GQA_2组': 4, 'MQA_1组': 2}
    """
    s = multihead_steps(*DEMO, DEMO_HEADS)
    _, fused = multihead_attention_fused(*DEMO, DEMO_HEADS)
    grouped = {
        name: check_rows(DEMO_X, DEMO_WQ, *PLANS[name])[2]["detail"] for name in ("GQA", "MQA")
    }
    d = len(DEMO_WQ[0]) // GQA_HEADS

    def shape(m):
        return str((len(m), len(m[0])))

    return {
        "性质": "人工构造的小矩阵，没有训练过的模型",
        "形状": {
            "X": shape(DEMO_X),
            "Q": shape(s["q"]),
            "每头Q": shape(s["q_heads"][0]),
            "输出": shape(s["output"]),
        },
        "头0权重": s["weights"][0],
        "头1权重": s["weights"][1],
        "两种写法最大差": att.max_abs_diff(s["output"], fused),
        "GQA与重复KV最大差": grouped["GQA"],
        "MQA与重复KV最大差": grouped["MQA"],
        f"KV缓存_每位置每层_每头{d}列": {
            "MHA_4头": kv_cache_numbers(1, GQA_HEADS, d),
            "GQA_2组": kv_cache_numbers(1, 2, d),
            "MQA_1组": kv_cache_numbers(1, 1, d),
        },
        "四个投影的参数_d_model8": {str(c): projection_params(8, c)["total"] for c in (1, 2, 4, 8)},
    }


if __name__ == "__main__":
    self_test()
    att.print_json(run_demo())
