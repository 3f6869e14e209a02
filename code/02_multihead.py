"""第2章教学代码：多头注意力与分组 K/V 头（GQA、MQA），全部可以手算。

本文件是《手算注意力与因果掩码》第2章“多头”一页的配套代码，书页在构建时直接运行它，
页面上的每个数都来自这里的函数。输入 X 与投影矩阵 W_q、W_k、W_v、W_o 都是人工构造的
小矩阵，没有训练过的模型。softmax、可见性表和单头注意力不在这里重写，而是从
``02_attention.py`` 导入：多头只是在它们外面改变了表示的分组方式。

权重的写法（与正文一致，也是 PyTorch ``nn.Linear`` 转置后的写法）：行向量乘矩阵，``x @ W``。

- ``x``：输入，形状 ``(n, d_model)``，每行是一个位置；
- ``w_q``：形状 ``(d_model, heads·head_dim)``；
- ``w_k``、``w_v``：形状 ``(d_model, kv_heads·head_dim)``，kv_heads = heads 时就是普通多头；
- ``w_o``：形状 ``(heads·head_dim, d_model)``；
- 第 h 个头用 Q、K、V 的第 ``h·head_dim`` 到 ``(h+1)·head_dim − 1`` 列（K、V 用它所属组的那个头）。

直接运行 ``python3 code/02_multihead.py`` 会先做自检，再以 JSON 打印演示结果。
"""

from __future__ import annotations

import math

from book_tools import fmt, load, short

att = load("02_attention")

__all__ = [
    "matmul",
    "head_columns",
    "split_heads",
    "concat_heads",
    "reshape_heads",
    "swap_01",
    "kv_group",
    "repeat_kv_columns",
    "multihead_steps",
    "multihead_attention",
    "multihead_attention_fused",
    "projection_params",
    "multiply_adds",
    "kv_cache_numbers",
    "config_head_dim",
    "check_rows",
    "check_sentence",
    "compare_text",
    "head_view_rows",
    "head_view_sentence",
    "flatter_sentence",
    "moved_sentence",
    "output_heads",
    "mixing_sentence",
    "reach_sentence",
    "wrong_scale_weights",
    "cost_rows",
    "cost_sentence",
    "f14_frames",
    "self_test",
    "run_demo",
]


# -- 边界校验 -----------------------------------------------------------------------------------------
def _count(n: object, name: str, *, minimum: int = 1) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < minimum:
        raise ValueError(f"{name} 必须是不小于 {minimum} 的整数，收到 {n!r}")
    return n


def _shape(m: list[list[float]]) -> tuple[int, int]:
    return len(m), len(m[0])


def _layout(d_model: int, heads: object, kv_heads: object, head_dim: object) -> tuple[int, int, int]:
    """核对头数与头维度，返回 (heads, kv_heads, head_dim)。"""
    heads = _count(heads, "heads")
    kv_heads = heads if kv_heads is None else _count(kv_heads, "kv_heads")
    if heads % kv_heads:
        raise ValueError(f"kv_heads={kv_heads} 必须整除 heads={heads}：每个 K/V 头要分到同样多的查询头")
    if head_dim is None:
        # 只有没给 head_dim 时才用 d_model / heads 推出它；真实配置常把它单独写出。
        if d_model % heads:
            raise ValueError(f"d_model={d_model} 不能被 heads={heads} 整除：请另给 head_dim")
        head_dim = d_model // heads
    return heads, kv_heads, _count(head_dim, "head_dim")


def _weights(x, w_q, w_k, w_v, w_o, heads, kv_heads, head_dim):
    """校验输入与四个投影矩阵的形状；返回浮点副本和 (heads, kv_heads, head_dim)。"""
    # att._matrix 是 02_attention 的边界校验（非空、矩形、有限实数），这里直接沿用。
    x = att._matrix(x, "x")
    d_model = len(x[0])
    mats = {name: att._matrix(m, name) for name, m in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v), ("w_o", w_o))}
    heads, kv_heads, head_dim = _layout(d_model, heads, kv_heads, head_dim)
    expected = {
        "w_q": (d_model, heads * head_dim),
        "w_k": (d_model, kv_heads * head_dim),
        "w_v": (d_model, kv_heads * head_dim),
        "w_o": (heads * head_dim, None),
    }
    for name, (rows, cols) in expected.items():
        got = _shape(mats[name])
        if got[0] != rows or (cols is not None and got[1] != cols):
            want = f"({rows}, {cols})" if cols is not None else f"({rows}, 任意)"
            raise ValueError(
                f"{name} 的形状必须是 {want}（d_model={d_model}、heads={heads}、kv_heads={kv_heads}、"
                f"head_dim={head_dim}），收到 {got}"
            )
    return x, mats, (heads, kv_heads, head_dim)


# -- 小工具：矩阵乘法、按列切头、拼接、reshape / transpose ---------------------------------------------------
def matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    """矩阵乘法 ``a @ b``：``(n, m) @ (m, p) → (n, p)``。

    >>> matmul([[1.0, 2.0]], [[1.0, 0.0], [0.0, 1.0]])
    [[1.0, 2.0]]
    >>> matmul([[1.0, 2.0]], [[1.0, 0.0]])
    Traceback (most recent call last):
    ...
    ValueError: 矩阵乘法的形状对不上：a 有 2 列，b 有 1 行
    """
    a, b = att._matrix(a, "a"), att._matrix(b, "b")
    if len(a[0]) != len(b):
        raise ValueError(f"矩阵乘法的形状对不上：a 有 {len(a[0])} 列，b 有 {len(b)} 行")
    out = [[sum(ai[t] * b[t][c] for t in range(len(b))) for c in range(len(b[0]))] for ai in a]
    for i, row in enumerate(out):
        for c, x in enumerate(row):
            if not math.isfinite(x):  # 元素都有限，乘积之和仍可能溢出
                raise ValueError(f"矩阵乘积的第{i}行第{c}列超出浮点数的范围（得到 {x}）：请缩小输入的数值")
    return out  # (n, p)


def head_columns(h: int, head_dim: int) -> range:
    """第 h 个头在 Q（或 K、V）里占的列：``h·head_dim`` 到 ``(h+1)·head_dim − 1``。

    >>> list(head_columns(1, 2))
    [2, 3]
    """
    _count(h, "h", minimum=0)
    _count(head_dim, "head_dim")
    return range(h * head_dim, (h + 1) * head_dim)


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
    m = att._matrix(m, "m")
    heads = _count(heads, "heads")
    if len(m[0]) % heads:
        raise ValueError(f"列数 {len(m[0])} 不能被 heads={heads} 整除，无法平均切成头")
    d = len(m[0]) // heads
    return [[[row[c] for c in head_columns(h, d)] for row in m] for h in range(heads)]  # (heads, n, d)


def concat_heads(parts: list[list[list[float]]]) -> list[list[float]]:
    """``split_heads`` 的逆操作：heads 块 ``(n, head_dim)`` 左右拼成 ``(n, heads·head_dim)``。

    >>> concat_heads([[[1.0, 2.0], [5.0, 6.0]], [[3.0, 4.0], [7.0, 8.0]]])
    [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]
    """
    if not isinstance(parts, (list, tuple)) or not parts:
        raise ValueError("parts 必须是非空的头列表")
    blocks = [att._matrix(p, f"parts[{h}]") for h, p in enumerate(parts)]
    for h, b in enumerate(blocks):
        if len(b) != len(blocks[0]):
            raise ValueError(f"每个头的行数（位置数）必须相同：头 0 有 {len(blocks[0])} 行，头 {h} 有 {len(b)} 行")
    return [[x for b in blocks for x in b[i]] for i in range(len(blocks[0]))]  # (n, heads·head_dim)


def reshape_heads(m: list[list[float]], heads: int) -> list[list[list[float]]]:
    """reshape：``(n, heads·head_dim) → (n, heads, head_dim)``，每行的列按头分段，不搬动数。

    >>> reshape_heads([[1.0, 2.0, 3.0, 4.0]], 2)
    [[[1.0, 2.0], [3.0, 4.0]]]
    """
    m = att._matrix(m, "m")
    heads = _count(heads, "heads")
    if len(m[0]) % heads:
        raise ValueError(f"列数 {len(m[0])} 不能被 heads={heads} 整除，无法 reshape 成头")
    d = len(m[0]) // heads
    return [[row[h * d : (h + 1) * d] for h in range(heads)] for row in m]


def swap_01(t: list[list[list[float]]]) -> list[list[list[float]]]:
    """transpose：交换前两个轴，``(a, b, c) → (b, a, c)``；用两次就回到原样。

    >>> swap_01([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])
    [[[1.0, 2.0], [5.0, 6.0]], [[3.0, 4.0], [7.0, 8.0]]]
    """
    if not isinstance(t, (list, tuple)) or not t or not isinstance(t[0], (list, tuple)) or not t[0]:
        raise ValueError("t 必须是非空的三维列表 (a, b, c)")
    b = len(t[0])
    if any(not isinstance(row, (list, tuple)) or len(row) != b for row in t):
        raise ValueError(f"t 的第二个轴长度必须处处相同（{b}）")
    return [[list(t[a][j]) for a in range(len(t))] for j in range(b)]


def kv_group(h: int, heads: int, kv_heads: int) -> int:
    """查询头 h 用哪个 K/V 头：相邻的 ``heads / kv_heads`` 个查询头为一组，共用一个。

    >>> [kv_group(h, 4, 2) for h in range(4)]
    [0, 0, 1, 1]
    >>> [kv_group(h, 4, 1) for h in range(4)]  # MQA：全部共用一个
    [0, 0, 0, 0]
    """
    heads, kv_heads = _count(heads, "heads"), _count(kv_heads, "kv_heads")
    if heads % kv_heads:
        raise ValueError(f"kv_heads={kv_heads} 必须整除 heads={heads}：每个 K/V 头要分到同样多的查询头")
    if not isinstance(h, int) or isinstance(h, bool) or not 0 <= h < heads:
        raise ValueError(f"h 必须是 0 到 {heads - 1} 之间的整数，收到 {h!r}")
    return h // (heads // kv_heads)


def repeat_kv_columns(w: list[list[float]], heads: int, kv_heads: int) -> list[list[float]]:
    """把 ``(d_model, kv_heads·head_dim)`` 的 W_k 或 W_v 按组重复成 ``(d_model, heads·head_dim)``。

    重复后交给普通多头，结果与分组 K/V 头完全相同：GQA 省的是存储，不是算法。

    >>> repeat_kv_columns([[1.0, 2.0]], 4, 2)  # head_dim = 1：K/V 头 0、0、1、1
    [[1.0, 1.0, 2.0, 2.0]]
    """
    w = att._matrix(w, "w")
    heads, kv_heads = _count(heads, "heads"), _count(kv_heads, "kv_heads")
    kv_group(0, heads, kv_heads)  # 校验整除
    if len(w[0]) % kv_heads:
        raise ValueError(f"w 的列数 {len(w[0])} 不能被 kv_heads={kv_heads} 整除")
    d = len(w[0]) // kv_heads
    cols = [c for h in range(heads) for c in head_columns(kv_group(h, heads, kv_heads), d)]
    return [[row[c] for c in cols] for row in w]


# -- 多头注意力：两种写法 -------------------------------------------------------------------------------
def multihead_steps(
    x, w_q, w_k, w_v, w_o, heads, kv_heads=None, causal=True, *, head_dim=None, key_valid=None
) -> dict:
    """多头注意力的每个中间对象（“头的列表”写法：每个头用自己的小投影），供正文逐步展示。

    返回字典：``q``、``k``、``v``（各头投影左右拼起来，等于 ``x @ w_q`` 等），``q_heads``、``k_heads``、``v_heads``（切开后），
    ``visible``（所有头共用的可见性表），``weights``、``head_outputs``（每头一份），
    ``concat`` 与 ``output``；以及 ``heads``、``kv_heads``、``head_dim``。

    >>> s = multihead_steps([[1.0, 0.0], [0.0, 1.0]], *[[[1.0, 0.0], [0.0, 1.0]]] * 4, heads=2)
    >>> s["head_dim"], [len(w) for w in s["weights"]], s["visible"]
    (1, [2, 2], [[True, False], [True, True]])
    """
    x, m, (heads, kv_heads, head_dim) = _weights(x, w_q, w_k, w_v, w_o, heads, kv_heads, head_dim)
    # 每个头有自己的小投影：W_q 的第 h 组列，形状 (d_model, head_dim)。
    q_heads = [matmul(x, w) for w in split_heads(m["w_q"], heads)]  # heads 块，每块 (n, head_dim)
    k_heads = [matmul(x, w) for w in split_heads(m["w_k"], kv_heads)]  # kv_heads 块，每块 (n, head_dim)
    v_heads = [matmul(x, w) for w in split_heads(m["w_v"], kv_heads)]
    # 各头的投影左右摆在一起，就是 X·W_q 等（只为展示；计算不需要它们）。
    q, k, v = concat_heads(q_heads), concat_heads(k_heads), concat_heads(v_heads)  # (n, heads·head_dim) 等
    # 每个头读的是同样的 n 个位置：可见性表只造一次，所有头共用。
    visible = att.visibility(len(x), len(x), causal=causal, key_valid=key_valid)  # (n, n)
    weights, head_outputs = [], []
    for h in range(heads):
        g = kv_group(h, heads, kv_heads)
        # att.masked_attention 用 K 的列数 head_dim 缩放：除以 √head_dim，不是 √d_model。
        w, out = att.masked_attention(q_heads[h], k_heads[g], v_heads[g], visible)  # (n, n), (n, head_dim)
        weights.append(w)
        head_outputs.append(out)
    concat = concat_heads(head_outputs)  # (n, heads·head_dim)
    output = matmul(concat, m["w_o"])  # (n, d_model)
    return {
        "q": q, "k": k, "v": v,
        "q_heads": q_heads, "k_heads": k_heads, "v_heads": v_heads,
        "visible": visible, "weights": weights, "head_outputs": head_outputs,
        "concat": concat, "output": output,
        "heads": heads, "kv_heads": kv_heads, "head_dim": head_dim,
    }  # fmt: skip


def multihead_attention(
    x, w_q, w_k, w_v, w_o, heads, kv_heads=None, causal=True, *, head_dim=None, key_valid=None
) -> tuple[list[list[list[float]]], list[list[float]]]:
    """多头自注意力（写法一：头的列表，逐头计算再拼接），返回 ``(weights, output)``。

    权重布局：行向量乘矩阵 ``x @ W``。``x`` 形状 ``(n, d_model)``；``w_q`` 为
    ``(d_model, heads·head_dim)``；``w_k``、``w_v`` 为 ``(d_model, kv_heads·head_dim)``；
    ``w_o`` 为 ``(heads·head_dim, d_model)``。PyTorch 的 ``nn.Linear.weight`` 是它的转置；
    对照 ``torch.nn.MultiheadAttention`` 时，``in_proj_weight`` 的三块依次是 ``w_q``、``w_k``、
    ``w_v`` 的转置，``out_proj.weight`` 是 ``w_o`` 的转置（偏置取 0），它的布尔 ``attn_mask``
    用 True 表示禁止，与这里的可见性表相反。
    第 h 个头用 Q 的第 ``h·head_dim`` 到 ``(h+1)·head_dim − 1`` 列，以及第
    ``h // (heads // kv_heads)`` 个 K/V 头。``kv_heads`` 缺省等于 ``heads``（普通多头）；
    ``head_dim`` 缺省为 ``d_model // heads``（不能整除时必须给出）。每个头的分数除以
    ``√head_dim``，所有头共用同一张可见性表（``causal`` 与 ``key_valid`` 同 ``02_attention``）。

    ``weights`` 形状 ``(heads, n, n)``，``output`` 形状 ``(n, w_o 的列数)``。

    >>> x = [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]
    >>> eye = [[float(i == j) for j in range(4)] for i in range(4)]
    >>> w, out = multihead_attention(x, eye, eye, eye, eye, heads=2)
    >>> [[round(p, 4) for p in row] for row in w[0]]
    [[1.0, 0.0], [0.3302, 0.6698]]
    >>> [[round(c, 4) for c in row] for row in out]
    [[1.0, 0.0, 1.0, 0.0], [0.3302, 0.6698, 0.3302, 0.6698]]
    >>> multihead_attention(x, eye, eye, eye, eye, heads=3)
    Traceback (most recent call last):
    ...
    ValueError: d_model=4 不能被 heads=3 整除：请另给 head_dim
    """
    s = multihead_steps(
        x, w_q, w_k, w_v, w_o, heads, kv_heads, causal, head_dim=head_dim, key_valid=key_valid
    )
    return s["weights"], s["output"]


def multihead_attention_fused(
    x, w_q, w_k, w_v, w_o, heads, kv_heads=None, causal=True, *, head_dim=None, key_valid=None
) -> tuple[list[list[list[float]]], list[list[float]]]:
    """多头自注意力（写法二：一次大投影，再 reshape / transpose），返回 ``(weights, output)``。

    参数与权重布局同 ``multihead_attention``。这是 nanoGPT 一类代码的形状变化：
    ``(n, h·d) → reshape (n, h, d) → transpose (h, n, d)``，逐头注意力后再
    ``transpose (n, h, d) → reshape (n, h·d)``，最后乘 ``w_o``。

    >>> x = [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]
    >>> eye = [[float(i == j) for j in range(4)] for i in range(4)]
    >>> multihead_attention_fused(x, eye, eye, eye, eye, heads=2) == multihead_attention(x, eye, eye, eye, eye, heads=2)
    True
    """
    x, m, (heads, kv_heads, head_dim) = _weights(x, w_q, w_k, w_v, w_o, heads, kv_heads, head_dim)
    group = heads // kv_heads
    q = swap_01(reshape_heads(matmul(x, m["w_q"]), heads))  # (n, h·d) → (n, h, d) → (h, n, d)
    k = swap_01(reshape_heads(matmul(x, m["w_k"]), kv_heads))  # (kv_heads, n, d)
    v = swap_01(reshape_heads(matmul(x, m["w_v"]), kv_heads))  # (kv_heads, n, d)
    visible = att.visibility(len(x), len(x), causal=causal, key_valid=key_valid)  # (n, n)
    pairs = [att.masked_attention(q[h], k[h // group], v[h // group], visible) for h in range(heads)]
    weights = [w for w, _ in pairs]  # (h, n, n)
    out = swap_01([o for _, o in pairs])  # (h, n, d) → (n, h, d)
    merged = [[c for part in row for c in part] for row in out]  # reshape (n, h, d) → (n, h·d)
    return weights, matmul(merged, m["w_o"])  # (n, d_model)


# -- 代价：参数、乘加、KV 缓存 ---------------------------------------------------------------------------
def projection_params(d_model: int, heads: int, head_dim: int | None = None, kv_heads: int | None = None) -> dict:
    """四个投影矩阵的参数个数（不计偏置）。

    ``head_dim·heads = d_model`` 且 ``kv_heads = heads`` 时总数是 ``4·d_model²``，与头数无关。

    >>> projection_params(8, 2)
    {'w_q': 64, 'w_k': 64, 'w_v': 64, 'w_o': 64, 'total': 256}
    >>> projection_params(8, 4, kv_heads=1)["total"]
    160
    """
    d_model = _count(d_model, "d_model")
    heads, kv_heads, head_dim = _layout(d_model, heads, kv_heads, head_dim)
    p = {
        "w_q": d_model * heads * head_dim,
        "w_k": d_model * kv_heads * head_dim,
        "w_v": d_model * kv_heads * head_dim,
        "w_o": heads * head_dim * d_model,
    }
    p["total"] = sum(p.values())
    return p


def multiply_adds(n: int, d_model: int, heads: int, head_dim: int | None = None, kv_heads: int | None = None) -> dict:
    """n 个位置的一次多头自注意力的乘加次数（整张 n×n 分数表都算，掩码不省计算）。

    ``score_cells`` 是所有头的分数表格子数 ``heads·n²``：也是 softmax 要取的指数个数。

    >>> multiply_adds(3, 4, 2)
    {'projections': 192, 'scores': 36, 'mixing': 36, 'total': 264, 'score_cells': 18}
    """
    n = _count(n, "n")
    p = projection_params(d_model, heads, head_dim, kv_heads)
    heads, _, head_dim = _layout(d_model, heads, kv_heads, head_dim)
    counts = {
        "projections": n * p["total"],  # 每个位置乘一遍四个矩阵
        "scores": heads * n * n * head_dim,  # 每头 n×n 个点积，每个 head_dim 次乘加
        "mixing": heads * n * n * head_dim,  # 每头用 n×n 个权重混合 head_dim 列
    }
    counts["total"] = sum(counts.values())
    counts["score_cells"] = heads * n * n
    return counts


def kv_cache_numbers(n_tokens: int, kv_heads: int, head_dim: int) -> int:
    """一层 KV 缓存为 ``n_tokens`` 个位置存多少个数：K 与 V 各 ``kv_heads·head_dim`` 列。

    >>> kv_cache_numbers(1, 2, 2), kv_cache_numbers(1, 1, 2)
    (8, 4)
    """
    return 2 * _count(n_tokens, "n_tokens") * _count(kv_heads, "kv_heads") * _count(head_dim, "head_dim")


# 公开模型配置里的头维度：head_dim 是单独的一项，并不总是 hidden_size / num_attention_heads。
# 来源：Hugging Face google/gemma-7b 的 config.json（参考文献 gemma7b_config）。
GEMMA_7B = {
    "source": "https://huggingface.co/google/gemma-7b/blob/main/config.json",
    "hidden_size": 3072,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "head_dim": 256,
}


def config_head_dim(config: dict) -> dict:
    """比较配置写明的 head_dim 与 ``hidden_size / num_attention_heads`` 推出的值。

    >>> c = config_head_dim(GEMMA_7B)
    >>> c["stated"], c["derived"], c["heads_times_head_dim"]
    (256, 192, 4096)
    """
    if not isinstance(config, dict):
        raise ValueError("config 必须是字典（模型的 config.json 内容）")
    for key in ("hidden_size", "num_attention_heads", "head_dim"):
        if key not in config:
            raise ValueError(f"config 缺少 {key}")
    d_model = _count(config["hidden_size"], "hidden_size")
    heads = _count(config["num_attention_heads"], "num_attention_heads")
    kv = _count(config.get("num_key_value_heads", heads), "num_key_value_heads")
    stated = _count(config["head_dim"], "head_dim")
    derived = d_model / heads
    return {
        "stated": stated,
        "derived": int(derived) if derived.is_integer() else derived,
        "heads_times_head_dim": heads * stated,
        "params_stated": projection_params(d_model, heads, stated, kv)["total"],
        "params_if_derived": 4 * d_model * d_model if kv == heads else None,
    }


# -- 检查：正文的表与测试用同一组函数 -----------------------------------------------------------------------
def _max_diff(a, b) -> float:
    return max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def _changed(a, b) -> bool:
    return any(x != y for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def check_rows(x, w_q, w_k, w_v, w_o, heads, kv_heads, *, head: int = 0, delta: float = 1.0) -> list[dict]:
    """在一组输入上跑本页的检查，每项返回 ``{"check", "holds", "detail"}``。

    1. 头的列表与大投影两种写法结果相同；
    2. 把第 ``head`` 个头的 W_q 列加上 ``delta``：只有这个头的权重可能变，其余头一格不变；
    3. 分组 K/V 头等于把 W_k、W_v 按组重复后的普通多头；
    4. heads = 1 等于用同样投影的单头注意力（W_q 等照用，输出再乘 W_o）。

    >>> eye = [[float(i == j) for j in range(4)] for i in range(4)]
    >>> x = [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, -1.0]]
    >>> [r["holds"] for r in check_rows(x, eye, eye, eye, eye, 2, 2)]
    [True, True, True, True]
    """
    s = multihead_steps(x, w_q, w_k, w_v, w_o, heads, kv_heads)
    heads, kv_heads, d = s["heads"], s["kv_heads"], s["head_dim"]
    if not 0 <= head < heads:
        raise ValueError(f"head 必须在 0 到 {heads - 1} 之间，收到 {head!r}")
    rows = []
    _, fused = multihead_attention_fused(x, w_q, w_k, w_v, w_o, heads, kv_heads)
    diff = _max_diff(s["output"], fused)
    rows.append({"check": "两种写法相同", "holds": diff <= 1e-12, "detail": diff})

    bumped = [[c + delta if j in head_columns(head, d) else c for j, c in enumerate(row)] for row in att._matrix(w_q, "w_q")]
    w2, _ = multihead_attention(x, bumped, w_k, w_v, w_o, heads, kv_heads)
    moved = [h for h in range(heads) if _changed(s["weights"][h], w2[h])]
    rows.append({"check": f"只改头 {head} 的 W_q 列", "holds": set(moved) <= {head}, "detail": moved})

    wk_r, wv_r = (repeat_kv_columns(w, heads, kv_heads) for w in (w_k, w_v))
    _, repeated = multihead_attention(x, w_q, wk_r, wv_r, w_o, heads)
    diff = _max_diff(s["output"], repeated)
    rows.append({"check": "分组 K/V 等于重复 K/V", "holds": diff <= 1e-12, "detail": diff})

    # heads = 1：整块 W_q、W_k、W_v 当一个头用（K/V 先按组重复，让列数相同）。
    _, one = multihead_attention(x, w_q, wk_r, wv_r, w_o, 1, head_dim=heads * d)
    _, single = att.attention(matmul(x, w_q), matmul(x, wk_r), matmul(x, wv_r))
    diff = _max_diff(one, matmul(single, w_o))
    rows.append({"check": "heads = 1 等于单头", "holds": diff <= 1e-12, "detail": diff})
    return rows


def check_sentence(rows: list[dict]) -> str:
    """由检查表生成结论句：几项通过、哪几项没通过。

    >>> check_sentence([{"check": "甲", "holds": True, "detail": 0}, {"check": "乙", "holds": False, "detail": 1}])
    '2 项检查里 1 项通过；没有通过的是：乙。'
    >>> check_sentence([{"check": "甲", "holds": True, "detail": 0}])
    '1 项检查全部通过。'
    """
    if not isinstance(rows, list) or not rows:
        raise ValueError("rows 必须是非空的检查列表")
    failed = [r["check"] for r in rows if not r["holds"]]
    if not failed:
        return f"{len(rows)} 项检查全部通过。"
    return f"{len(rows)} 项检查里 {len(rows) - len(failed)} 项通过；没有通过的是：{'、'.join(failed)}。"


def compare_text(diff: float) -> str:
    """两个结果的最大差写成一句话：恰为 0 时说“完全相同”，否则给出差的大小。

    >>> compare_text(0.0), compare_text(2.5e-16)
    ('逐元素完全相同（最大差为 0）', '最大差为 2.5e-16')
    """
    diff = att._real(diff, "diff")
    if not diff >= 0:
        raise ValueError(f"diff 必须是非负数，收到 {diff!r}")
    return "逐元素完全相同（最大差为 0）" if diff == 0 else f"最大差为 {diff:.1e}"


def head_view_rows(steps: dict, i: int) -> list[dict]:
    """每个头怎样看第 i 个查询行：用哪些列、能读哪些 Key、权重、最看重哪个 Key。

    >>> s = multihead_steps(DEMO_X, DEMO_WQ, DEMO_WK, DEMO_WV, DEMO_WO, DEMO_HEADS)
    >>> [(r["head"], r["columns"], r["keys"], r["favourite"]) for r in head_view_rows(s, 2)]
    [(0, [0, 1], [0, 1, 2], 1), (1, [2, 3], [0, 1, 2], 0)]
    """
    if not isinstance(steps, dict) or "weights" not in steps or "visible" not in steps:
        raise ValueError("steps 必须是 multihead_steps 返回的字典")
    n = len(steps["visible"])
    if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < n:
        raise ValueError(f"i 必须是 0 到 {n - 1} 之间的整数，收到 {i!r}")
    return [
        {
            "head": h,
            "columns": list(head_columns(h, steps["head_dim"])),
            "keys": [j for j, ok in enumerate(steps["visible"][i]) if ok],
            "weights": w[i],
            "favourite": _favourite(w[i]),
        }
        for h, w in enumerate(steps["weights"])
    ]


def head_view_sentence(rows: list[dict]) -> str:
    """由 ``head_view_rows`` 的表生成结论：各头能读的 Key 是否相同，用的列是否重叠。

    >>> head_view_sentence([{"keys": [0, 1], "columns": [0]}, {"keys": [0, 1], "columns": [1]}])
    '2 个头可读的 Key 完全相同，用到的列互不重叠。'
    """
    if not isinstance(rows, list) or not rows:
        raise ValueError("rows 必须是非空的列表")
    same = all(r["keys"] == rows[0]["keys"] for r in rows)
    columns = [c for r in rows for c in r["columns"]]
    apart = len(columns) == len(set(columns))
    return (
        f"{len(rows)} 个头可读的 Key " + ("完全相同" if same else "并不相同")
        + "，用到的列" + ("互不重叠。" if apart else "有重叠。")
    )


def flatter_sentence(right: list[list[float]], wrong: list[list[float]]) -> str:
    """逐头比较两行权重的最大值：写错缩放后，有几个头的最大权重变小了。

    >>> flatter_sentence([[0.2, 0.8], [0.6, 0.4]], [[0.3, 0.7], [0.55, 0.45]])
    '2 个头里，最大的权重都变小了：分布被摊平。'
    >>> flatter_sentence([[0.2, 0.8]], [[0.1, 0.9]])
    '1 个头里，最大的权重变小的有 0 个。'
    """
    if not isinstance(right, list) or not right or len(right) != len(wrong):
        raise ValueError("right 与 wrong 必须是同样多行的非空列表（每头一行权重）")
    smaller = sum(max(w) < max(r) for r, w in zip(right, wrong))
    if smaller == len(right):
        return f"{len(right)} 个头里，最大的权重都变小了：分布被摊平。"
    return f"{len(right)} 个头里，最大的权重变小的有 {smaller} 个。"


def moved_sentence(before: list, after: list, head_dim: int) -> str:
    """改动 W_q 之后，列出权重表变了的头和一格未变的头（附上它们用的列）。

    >>> moved_sentence([[[1.0]], [[1.0]]], [[[0.5]], [[1.0]]], 2)
    '权重表变了的头：头 0；一格未变的头：头 1（只用列 2、列 3）。'
    """
    if not isinstance(before, list) or not before or len(before) != len(after):
        raise ValueError("before 与 after 必须是同样多头的非空列表")
    moved = [h for h in range(len(before)) if before[h] != after[h]]
    still = [h for h in range(len(before)) if h not in moved]
    return (
        "权重表变了的头：" + ("、".join(f"头 {h}" for h in moved) or "无")
        + "；一格未变的头：" + ("、".join(f"头 {h}（只用{_columns_text(head_columns(h, head_dim))}）" for h in still)
                           or "无") + "。"
    )


def _columns_text(columns) -> str:
    """“列 0、列 3”：列号的写法，句子和表头一致。"""
    return "、".join(f"列 {j}" for j in columns)


def output_heads(w_o: list[list[float]], heads: int) -> list[list[int]]:
    """输出的每一列取了哪些头：W_o 第 j 列在某个头的那几行上有非零数，第 j 列就用到了这个头。

    W_o 的行对应拼接结果的列（头 0 的列在前），所以按行分成 ``heads`` 段，每段是一个头。

    >>> output_heads([[1.0, 0.0], [0.0, 2.0]], 2)  # 对角的 W_o：每一列只取一个头
    [[0], [1]]
    >>> output_heads([[1.0, 0.5], [1.0, 0.0], [0.0, 0.0], [0.0, 3.0]], 2)
    [[0], [0, 1]]
    """
    w_o = att._matrix(w_o, "w_o")
    heads = _count(heads, "heads")
    rows = len(w_o)
    if rows % heads:
        raise ValueError(f"w_o 的行数 {rows} 必须能被 heads={heads} 整除：每个头占同样多的行")
    d = rows // heads
    return [
        [h for h in range(heads) if any(w_o[r][j] != 0 for r in head_columns(h, d))]
        for j in range(len(w_o[0]))
    ]


def mixing_sentence(used: list[list[int]], heads: int) -> str:
    """由 ``output_heads`` 的结果说：输出的哪些列把几个头混在了一起，哪些列只取一个头。

    >>> mixing_sentence([[0, 1], [0], [1], [0, 1]], 2)
    '输出的列 0、列 3 同时取了 2 个头的列，各头的结果在这里才第一次混到一起；列 1 只取头 0，列 2 只取头 1。'
    >>> mixing_sentence([[0, 1], [0, 1]], 2)
    '输出的每一列都同时取了全部 2 个头的列，各头的结果在这里才第一次混到一起。'
    >>> mixing_sentence([[0], [1]], 2)
    '输出没有一列同时取两个头的列：列 0 只取头 0，列 1 只取头 1，各头的结果在输出里仍是分开的。'
    """
    heads = _count(heads, "heads", minimum=2)  # 一个头没有什么可混
    if not isinstance(used, list) or not used or not all(isinstance(u, list) for u in used):
        raise ValueError("used 必须是非空的列表，每一项是一列用到的头（output_heads 的结果）")
    if any(not 0 <= h < heads for u in used for h in u):
        raise ValueError(f"used 里的头号必须在 0 到 {heads - 1} 之间")
    mixed = [j for j, u in enumerate(used) if len(u) >= 2]
    rest = []
    for j, u in enumerate(used):
        if len(u) == 1:
            rest.append(f"列 {j} 只取头 {u[0]}")
        elif not u:
            rest.append(f"列 {j} 全是 0")
    every = len(mixed) == len(used)
    if every:
        counts = {len(u) for u in used}
        many = f"全部 {heads} 个头" if counts == {heads} else "不止一个头"
        return f"输出的每一列都同时取了{many}的列，各头的结果在这里才第一次混到一起。"
    if not mixed:
        return "输出没有一列同时取两个头的列：" + "，".join(rest) + "，各头的结果在输出里仍是分开的。"
    sizes = {len(used[j]) for j in mixed}
    many = f" {sizes.pop()} 个头" if len(sizes) == 1 else "不止一个头"
    return (
        f"输出的{_columns_text(mixed)} 同时取了{many}的列，各头的结果在这里才第一次混到一起；"
        + "，".join(rest) + "。"
    )


def reach_sentence(used: list[list[int]], head: int, before: list[list[float]], after: list[list[float]]) -> str:
    """只改了头 ``head`` 之后，最终输出的哪些列变了、哪些一个数没变；没变的列若不取这个头，就说出来。

    >>> reach_sentence([[0, 1], [0], [1]], 0, [[1.0, 2.0, 3.0]], [[1.5, 2.5, 3.0]])
    '最终输出里变了的列：列 0、列 1；一个数没变的列：列 2——$W_o$ 的这一列不取头 0 的列。'
    >>> reach_sentence([[0, 1]], 1, [[1.0]], [[2.0]])
    '最终输出的每一列都变了：$W_o$ 的每一列都取了头 1 的列。'
    """
    if not isinstance(used, list) or not used:
        raise ValueError("used 必须是非空的列表（output_heads 的结果）")
    head = _count(head, "head", minimum=0)
    before, after = att._matrix(before, "before"), att._matrix(after, "after")
    if _shape(before) != _shape(after) or len(before[0]) != len(used):
        raise ValueError(
            f"before、after 必须同形状，且列数等于 used 的项数 {len(used)}："
            f"收到 {_shape(before)} 与 {_shape(after)}"
        )
    changed = [j for j in range(len(used)) if any(b[j] != a[j] for b, a in zip(before, after))]
    still = [j for j in range(len(used)) if j not in changed]
    if not still:
        if all(head in u for u in used):
            return f"最终输出的每一列都变了：$W_o$ 的每一列都取了头 {head} 的列。"
        return "最终输出的每一列都变了。"
    text = ("最终输出里变了的列：" + (_columns_text(changed) if changed else "无")
            + "；一个数没变的列：" + _columns_text(still))
    if all(head not in used[j] for j in still):
        text += f"——$W_o$ 的{'这一列' if len(still) == 1 else '这些列'}不取头 {head} 的列"
    return text + "。"


def wrong_scale_weights(x, w_q, w_k, heads, *, head_dim=None) -> list[list[list[float]]]:
    """故意写错的缩放：每个头的分数除以 √d_model 而不是 √head_dim。只用于对照和测试。

    做法是先把每头的 Q 乘上 √(head_dim / d_model)，再交给同一个 ``att.masked_attention``：
    ``q·k/√head_dim · √(head_dim/d_model) = q·k/√d_model``。分数被压扁，权重变得更平均。

    >>> x = [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]
    >>> eye = [[float(i == j) for j in range(4)] for i in range(4)]
    >>> [round(p, 4) for p in wrong_scale_weights(x, eye, eye, 2)[0][1]]  # 正确缩放是 0.3302、0.6698
    [0.3775, 0.6225]
    """
    x, w_q, w_k = att._matrix(x, "x"), att._matrix(w_q, "w_q"), att._matrix(w_k, "w_k")
    heads, _, d = _layout(len(x[0]), heads, None, head_dim)
    for name, w in (("w_q", w_q), ("w_k", w_k)):
        if _shape(w) != (len(x[0]), heads * d):
            raise ValueError(f"{name} 的形状必须是 ({len(x[0])}, {heads * d})，收到 {_shape(w)}")
    shrink = math.sqrt(d / len(x[0]))
    q_heads = split_heads([[c * shrink for c in row] for row in matmul(x, w_q)], heads)
    k_heads = split_heads(matmul(x, w_k), heads)
    visible = att.visibility(len(x), len(x))
    return [att.masked_attention(q_heads[h], k_heads[h], k_heads[h], visible)[0] for h in range(heads)]


def cost_rows(n: int, d_model: int, heads_list: list[int], head_dim: int | None = None) -> list[dict]:
    """头数变化时的参数与乘加次数，一行一个头数（``head_dim`` 缺省为 ``d_model // heads``）。

    >>> [(r["heads"], r["head_dim"], r["params"], r["multiply_adds"]) for r in cost_rows(4, 8, [1, 2])]
    [(1, 8, 256, 1280), (2, 4, 256, 1280)]
    """
    if not isinstance(heads_list, list) or not heads_list:
        raise ValueError("heads_list 必须是非空的头数列表")
    rows = []
    for heads in heads_list:
        heads_, _, d = _layout(_count(d_model, "d_model"), heads, None, head_dim)
        macs = multiply_adds(n, d_model, heads_, d)
        rows.append({
            "heads": heads_, "head_dim": d, "params": projection_params(d_model, heads_, d)["total"],
            "multiply_adds": macs["total"], "score_cells": macs["score_cells"],
        })  # fmt: skip
    return rows


def cost_sentence(rows: list[dict]) -> str:
    """由成本表生成结论句：哪些量在各行相同，哪些随头数变。

    >>> cost_sentence(cost_rows(4, 8, [1, 2]))
    '头数从 1 变到 2：参数个数都是 256，乘加次数都是 1280；分数表格子数从 16 变到 32。'
    >>> cost_sentence(cost_rows(4, 8, [1, 2], head_dim=4))
    '头数从 1 变到 2：参数个数从 128 变到 256，乘加次数从 640 变到 1280；分数表格子数从 16 变到 32。'
    """
    if not isinstance(rows, list) or not rows:
        raise ValueError("rows 必须是非空的成本表")

    def say(key: str, name: str) -> str:
        values = [r[key] for r in rows]
        if len(set(values)) == 1:
            return f"{name}都是 {values[0]}"
        return f"{name}从 {values[0]} 变到 {values[-1]}"

    return (
        f"头数从 {rows[0]['heads']} 变到 {rows[-1]['heads']}：{say('params', '参数个数')}，"
        f"{say('multiply_adds', '乘加次数')}；{say('score_cells', '分数表格子数')}。"
    )


# -- 演示数据：人工构造，整数便于手算 ---------------------------------------------------------------------
# 3 个位置、d_model = 4；普通多头用 2 个头，每头 2 列。
DEMO_X = [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, -1.0]]
DEMO_WQ = [[0.0, -1.0, 1.0, 0.0], [-1.0, -1.0, 1.0, -1.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
DEMO_WK = [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.0], [-1.0, 0.0, 1.0, 0.0], [0.0, 0.0, -1.0, 0.0]]
DEMO_WV = [[1.0, 0.0, 2.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 2.0]]
DEMO_WO = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 1.0]]
DEMO_HEADS = 2
# 分组 K/V：同一个 X 与 W_q，4 个查询头、每头 1 列；2 个 K/V 头（GQA）或 1 个（MQA）。
GQA_HEADS = 4
GQA_WK = [[1.0, 0.0], [0.0, -1.0], [-1.0, 1.0], [0.0, 1.0]]
GQA_WV = [[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [1.0, 1.0]]
MQA_WK = [[row[0]] for row in GQA_WK]
MQA_WV = [[row[0]] for row in GQA_WV]


# -- 图 F14：一个头的列切片与它自己的权重表，旁边是另一个头 ----------------------------------------------------
def _cell(text: str, state: str | None = None, highlight: bool = False) -> dict:
    return {"text": text, "state": state, "highlight": highlight}


def _cols(cols) -> str:
    cols = list(cols)
    return f"列 {cols[0]}–{cols[-1]}" if len(cols) > 1 else f"列 {cols[0]}"


def _matrix_table(title: str, m: list[list[float]], header: list[str], lit: set[int] = frozenset()) -> dict:
    return {
        "title": title,
        "header": ["位置 ＼ 列"] + header,
        "rows": [
            [_cell(f"位置 {i}")] + [_cell(short(x), None, c in lit) for c, x in enumerate(row)]
            for i, row in enumerate(m)
        ],
    }


def _weight_table(title: str, w: list[list[float]], visible: list[list[bool]], current: int) -> dict:
    # 符号与文字一起写：颜色只是附加，禁止的格子写明“禁止”。当前行（说明里讲的那一行）加粗。
    return {
        "title": title,
        "header": ["查询 ＼ Key"] + [f"Key {j}" for j in range(len(w[0]))],
        "rows": [
            [_cell(f"位置 {i}", None, i == current)]
            + [
                _cell(f"✓ {fmt(p)}", "allowed", i == current) if ok else _cell("✗ 禁止", "forbidden", i == current)
                for p, ok in zip(row, vis)
            ]
            for i, (row, vis) in enumerate(zip(w, visible))
        ],
    }


def _positions(n: int) -> str:
    return f"位置 0–{n - 1}" if n > 1 else "位置 0"


def _favourite(row: list[float]) -> int:
    return max(range(len(row)), key=lambda j: row[j])


def f14_frames(x=None, w_q=None, w_k=None, w_v=None, w_o=None, heads=None) -> list[dict]:
    """动态图解 F14：Q 按列切成头；头 0 与头 1 各用自己的列算出自己的权重表；拼接后乘 W_o。

    缺省用本页的演示数据（``DEMO_*``）；每一帧的句子都由这一帧表里的数生成。

    >>> frames = f14_frames()
    >>> [f["condition"] for f in frames]  # doctest: +NORMALIZE_WHITESPACE
    ['投影后的 Q：(3, 4)，按列分给 2 个头', '头 0：列 0–1 与它自己的权重表',
     '头 1：列 2–3，旁边是头 0 的权重表', '拼接各头输出 (3, 4)，再乘 W_o']
    >>> [c["text"] for c in frames[1]["tables"][2]["rows"][1]]
    ['位置 1', '✓ 0.3302', '✓ 0.6698', '✗ 禁止']
    """
    x = DEMO_X if x is None else x
    args = [DEMO_WQ if w_q is None else w_q, DEMO_WK if w_k is None else w_k,
            DEMO_WV if w_v is None else w_v, DEMO_WO if w_o is None else w_o]  # fmt: skip
    s = multihead_steps(x, *args, DEMO_HEADS if heads is None else heads)
    heads, d, n = s["heads"], s["head_dim"], len(s["q"])
    if heads < 2:
        raise ValueError("图 F14 要并排比较两个头：heads 至少为 2")
    labels = [f"列 {c}（头 {c // d}）" for c in range(heads * d)]
    cols = [head_columns(h, d) for h in range(heads)]
    last = n - 1
    favs = [_favourite(s["weights"][h][last]) for h in range(heads)]

    def head_frame(h: int, other: int | None) -> dict:
        sub = [f"列 {c}" for c in cols[h]]
        tables = [
            _matrix_table(f"头 {h} 的 Q：Q 的{_cols(cols[h])}，({n}, {d})", s["q_heads"][h], sub),
            _matrix_table(f"头 {h} 的 K：K 的{_cols(cols[h])}，({n}, {d})", s["k_heads"][h], sub),
            _weight_table(f"头 {h} 的权重表 ({n}, {n})，加粗的是位置 {last}", s["weights"][h], s["visible"], last),
        ]
        row = s["weights"][h][last]
        text = (
            f"头 {h} 只用 Q、K 的{_cols(cols[h])}，分数除以 √{d}（head_dim），不是 √{len(x[0])}（d_model）。"
            f"位置 {last} 在头 {h} 里的权重是 {' / '.join(fmt(p) for p in row)}，最看重 Key {favs[h]}。"
        )
        if other is not None:
            tables.append(_weight_table(f"对照：头 {other} 的权重表 ({n}, {n})", s["weights"][other], s["visible"], last))
            same = "同一个" if favs[h] == favs[other] else "不同的"
            text += (
                f"头 {other} 里它最看重 Key {favs[other]}：两个头最看重的是{same} Key。"
                f"两张表的行、列都是同样的 {n} 个位置，禁止的格子也一样；不同的只是各自用的列。"
            )
        return {
            "condition": f"头 {h}：{_cols(cols[h])}" + ("，旁边是头 %d 的权重表" % other if other is not None else " 与它自己的权重表"),
            "tables": tables,
            "rule": f"头 {h} = {_cols(cols[h])}；每行在可见的 Key 上求 softmax",
            "explanation": text,
        }

    first = {
        "condition": f"投影后的 Q：({n}, {heads * d})，按列分给 {heads} 个头",
        "tables": [_matrix_table(f"Q = X · W_q，({n}, {heads * d})；头 0 的列加粗", s["q"], labels, set(cols[0]))],
        "rule": "；".join(f"头 {h} 用{_cols(cols[h])}" for h in range(heads)),
        "explanation": (
            f"Q 有 {n} 行（{_positions(n)}）、{heads * d} 列。切成头只切列，不切行："
            + "，".join(f"头 {h} 拿{_cols(cols[h])}" for h in range(heads))
            + f"，每个头都拿到全部 {n} 个位置。K、V 也按同样的列切开。"
        ),
    }
    concat_header = [f"头 {c // d} · 列 {c}" for c in range(heads * d)]
    out_cols = len(s["output"][0])
    final = {
        "condition": f"拼接各头输出 ({n}, {heads * d})，再乘 W_o",
        "tables": [
            {
                "title": f"各头输出左右拼接，({n}, {heads * d})",
                "header": ["位置 ＼ 列"] + concat_header,
                "rows": [[_cell(f"位置 {i}")] + [_cell(fmt(c)) for c in row] for i, row in enumerate(s["concat"])],
            },
            {
                "title": f"输出 = 拼接 · W_o，({n}, {out_cols})",
                "header": ["位置 ＼ 列"] + [f"列 {c}" for c in range(out_cols)],
                "rows": [[_cell(f"位置 {i}")] + [_cell(fmt(c)) for c in row] for i, row in enumerate(s["output"])],
            },
        ],
        "rule": f"拼接：{heads} 块 ({n}, {d}) → ({n}, {heads * d})；W_o：({heads * d}, {out_cols})",
        "explanation": (
            f"每个头交出 ({n}, {d}) 的输出，按头的顺序左右拼回 {heads * d} 列，列的位置正是它在 Q 里占的位置。"
            f"W_o 再把各头的列混在一起：输出的每一列都可以同时用到所有头。"
        ),
    }
    return [first, head_frame(0, None), head_frame(1, 0), final]


def _check(condition: bool, message: str) -> None:
    # 不用 assert：python -O 会删掉 assert，自检就形同虚设。
    if not condition:
        raise AssertionError(message)


def _shape_text(m: list[list[float]]) -> str:
    return f"({len(m)}, {len(m[0])})"


def _demo_args() -> tuple:
    return DEMO_X, DEMO_WQ, DEMO_WK, DEMO_WV, DEMO_WO


def self_test() -> None:
    """快速自检：两种写法、只动一个头、分组 K/V、单头、参数与头数无关。出错时抛 AssertionError。

    >>> self_test()
    """
    rows = check_rows(*_demo_args(), DEMO_HEADS, DEMO_HEADS)
    _check(all(r["holds"] for r in rows), check_sentence(rows))
    for kv, wk, wv in ((2, GQA_WK, GQA_WV), (1, MQA_WK, MQA_WV)):
        _, grouped = multihead_attention(DEMO_X, DEMO_WQ, wk, wv, DEMO_WO, GQA_HEADS, kv)
        wk_r, wv_r = repeat_kv_columns(wk, GQA_HEADS, kv), repeat_kv_columns(wv, GQA_HEADS, kv)
        _, repeated = multihead_attention(DEMO_X, DEMO_WQ, wk_r, wv_r, DEMO_WO, GQA_HEADS)
        _check(grouped == repeated, f"kv_heads={kv} 的分组 K/V 必须等于重复 K/V")
    totals = {r["params"] for r in cost_rows(3, 8, [1, 2, 4, 8])}
    _check(totals == {4 * 8 * 8}, "head_dim·heads = d_model 时参数个数不应随头数变")
    # 单头的每一行权重都来自同一张可见性表：禁止的格子在每个头里都恰为 0。
    weights, _ = multihead_attention(*_demo_args(), DEMO_HEADS)
    _check(all(w[0][1:] == [0.0, 0.0] for w in weights), "每个头都必须遵守同一张因果可见性表")


def run_demo() -> dict:
    """演示结果：两个头的权重、两种写法之差、分组 K/V、KV 缓存与参数个数。

    >>> demo = run_demo()
    >>> demo["形状"]["Q"], demo["两种写法最大差"], demo["KV缓存_每位置每层"]
    ('(3, 4)', 0.0, {'MHA_4头': 8, 'GQA_2组': 4, 'MQA_1组': 2})
    """
    s = multihead_steps(*_demo_args(), DEMO_HEADS)
    _, fused = multihead_attention_fused(*_demo_args(), DEMO_HEADS)
    gqa_diff = []
    for kv, wk, wv in ((2, GQA_WK, GQA_WV), (1, MQA_WK, MQA_WV)):
        _, grouped = multihead_attention(DEMO_X, DEMO_WQ, wk, wv, DEMO_WO, GQA_HEADS, kv)
        wk_r, wv_r = repeat_kv_columns(wk, GQA_HEADS, kv), repeat_kv_columns(wv, GQA_HEADS, kv)
        _, repeated = multihead_attention(DEMO_X, DEMO_WQ, wk_r, wv_r, DEMO_WO, GQA_HEADS)
        gqa_diff.append(_max_diff(grouped, repeated))
    d = len(DEMO_WQ[0]) // GQA_HEADS
    return {
        "性质": "人工构造的小矩阵，没有训练过的模型",
        "形状": {"X": _shape_text(DEMO_X), "Q": _shape_text(s["q"]),
                 "每头Q": _shape_text(s["q_heads"][0]), "输出": _shape_text(s["output"])},
        "头0权重": s["weights"][0],
        "头1权重": s["weights"][1],
        "两种写法最大差": _max_diff(s["output"], fused),
        "GQA与重复KV最大差": gqa_diff[0],
        "MQA与重复KV最大差": gqa_diff[1],
        "KV缓存_每位置每层": {
            "MHA_4头": kv_cache_numbers(1, GQA_HEADS, d),
            "GQA_2组": kv_cache_numbers(1, 2, d),
            "MQA_1组": kv_cache_numbers(1, 1, d),
        },
        "四个投影的参数_d_model8": {str(r["heads"]): r["params"] for r in cost_rows(3, 8, [1, 2, 4, 8])},
        "Gemma-7B_head_dim": config_head_dim(GEMMA_7B),
    }  # fmt: skip


if __name__ == "__main__":
    import json

    self_test()
    print(json.dumps(run_demo(), ensure_ascii=False, indent=2))
