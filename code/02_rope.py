"""第2章教学代码：位置旋转（RoPE）——按位置旋转 Q、K 的分量对，让分数只依赖位置之差。

本文件是《手算注意力与因果掩码》第2章“位置旋转”一页的配套代码，书页在构建时直接运行它，
页面上的每个数都来自这里的函数。数据都是人工构造的小向量，没有训练过的模型；只用 Python
标准库（math），注意力本身不在这里重写，而是调用同一章的 ``02_attention.py``。

对象与形状（与正文一致）：

- ``x``：一个查询或键向量，长度 ``d``（头维度，必须是偶数：分量两两成对旋转）；
- ``position``：绝对位置 m，非负整数；用了 KV 缓存时，本批第 i 行的位置是 ``past + i``；
- ``base``：频率的底数，第 i 对的频率是 ``θ_i = base^(−2i/d)``；
- ``layout``：分量怎样配对。``"adjacent"`` 是相邻成对 (0,1)、(2,3)……（RoFormer 论文的写法）；
  ``"half"`` 是前后两半成对 (i, i + d/2)（``rotate_half`` 的写法）。

旋转只作用在投影之后的 Q 和 K 上，在点积之前；V 不旋转。缓存里存的是已经在各自绝对位置上
旋转过的键。

直接运行 ``python3 code/02_rope.py`` 会先做自检，再以 JSON 打印演示结果。
"""

from __future__ import annotations

import importlib
import math
from numbers import Real

att = importlib.import_module("02_attention")  # 同一章的注意力：softmax、可见性表、缩放点积

__all__ = [
    "frequencies",
    "pairs",
    "angles",
    "rotate",
    "mixed_rotate",
    "rotate_rows",
    "rope_scores",
    "layout_permutation",
    "permute",
    "project",
    "full_attention",
    "fill_cache",
    "cached_step",
    "decode",
    "row_index_decode",
    "padded_positions",
    "max_abs_diff",
    "offset_verdict",
    "offset_scores",
    "slowest_wavelength",
    "model_bases",
    "self_test",
    "run_demo",
]

# RoFormer 论文取的底数，也是本页例子的默认值。
BASE = 10000.0
LAYOUTS = ("adjacent", "half")

# 公开模型配置里的底数（config.json 的 rope_theta）与头维度。数据留在代码里，连同出处：
# 书页的表和波长都由这里算出。Llama-2-7B 的 config.json 没有写 rope_theta，Transformers 的
# LlamaConfig 便取默认值 10000，与 RoFormer 论文相同。
MODEL_BASES = [
    {"model": "Llama-2-7B", "base": 10000.0, "head_dim": 128, "source": "llama2_7b_config"},
    {"model": "Llama-3-8B", "base": 500000.0, "head_dim": 128, "source": "llama3_8b_config"},
    {"model": "Qwen2-7B", "base": 1000000.0, "head_dim": 128, "source": "qwen2_7b_config"},
]


# -- 边界上的检查 --------------------------------------------------------------------------------
def _dim(d: object) -> int:
    if not isinstance(d, int) or isinstance(d, bool) or d < 2 or d % 2:
        raise ValueError(f"d 必须是不小于 2 的偶数（分量两两成对旋转），收到 {d!r}")
    return d


def _base(base: object) -> float:
    b = att._real(base, "base")
    if not math.isfinite(b) or b <= 0:
        raise ValueError(f"base 必须是正的有限数，收到 {base!r}")
    return b


def _position(position: object, name: str = "position") -> int:
    if not isinstance(position, int) or isinstance(position, bool):
        raise ValueError(f"{name} 必须是非负整数，收到 {position!r}")
    if position < 0:
        raise ValueError(f"{name} 不能是负数：位置从 0 数起，收到 {position}")
    att._real(position, name)  # 大到不能变成浮点数的位置在这里就报错
    return position


def _layout(layout: object) -> str:
    if layout not in LAYOUTS:
        raise ValueError(f"layout 必须是 'adjacent'（相邻成对）或 'half'（前后两半成对），收到 {layout!r}")
    return layout


def _vector(x: object, name: str) -> list[float]:
    values = att._as_list(x, name)
    out = []
    for j, value in enumerate(values):
        f = att._real(value, f"{name}[{j}]")
        if not math.isfinite(f):
            raise ValueError(f"{name}[{j}] 是 {f}：向量元素必须有限（不可为 NaN 或 ±∞）")
        out.append(f)
    if not out or len(out) % 2:
        raise ValueError(f"{name} 的长度 d 必须是不小于 2 的偶数（分量两两成对旋转），收到长度 {len(out)}")
    return out


def _positions(positions: object, n: int, name: str = "positions") -> list[int]:
    ps = att._as_list(positions, name)
    if len(ps) != n:
        raise ValueError(f"{name} 的个数必须等于行数 {n}，收到 {len(ps)} 个")
    return [_position(p, f"{name}[{i}]") for i, p in enumerate(ps)]


# -- 频率、配对与旋转 ------------------------------------------------------------------------------
def frequencies(d: int, base: float = BASE) -> list[float]:
    """每一对分量的频率 ``θ_i = base^(−2i/d)``，i = 0 … d/2 − 1：第一对转得最快。

    >>> frequencies(2)
    [1.0]
    >>> [round(t, 4) for t in frequencies(4)]
    [1.0, 0.01]
    >>> frequencies(3)
    Traceback (most recent call last):
    ...
    ValueError: d 必须是不小于 2 的偶数（分量两两成对旋转），收到 3
    """
    d, b = _dim(d), _base(base)
    return [b ** (-2 * i / d) for i in range(d // 2)]


def pairs(d: int, layout: str = "adjacent") -> list[tuple[int, int]]:
    """第 i 对由哪两个分量组成：相邻成对是 ``(2i, 2i+1)``，前后两半成对是 ``(i, i + d/2)``。

    >>> pairs(8)
    [(0, 1), (2, 3), (4, 5), (6, 7)]
    >>> pairs(8, "half")
    [(0, 4), (1, 5), (2, 6), (3, 7)]
    """
    d, layout = _dim(d), _layout(layout)
    if layout == "adjacent":
        return [(2 * i, 2 * i + 1) for i in range(d // 2)]
    return [(i, i + d // 2) for i in range(d // 2)]


def angles(d: int, position: int, base: float = BASE, layout: str = "adjacent") -> list[float]:
    """每个分量的旋转角 ``position × θ``，按 ``layout`` 排开（长度 d，同一对的两个分量角度相同）。

    相邻成对时频率两两重复 ``[θ0, θ0, θ1, θ1, …]``；前后两半成对时整段重复 ``[θ0, θ1, …, θ0, θ1, …]``。

    >>> [round(a, 4) for a in angles(4, 2)]
    [2.0, 2.0, 0.02, 0.02]
    >>> [round(a, 4) for a in angles(4, 2, layout="half")]
    [2.0, 0.02, 2.0, 0.02]
    """
    theta = frequencies(d, base)
    m = _position(position)
    if _layout(layout) == "adjacent":
        return [m * theta[j // 2] for j in range(d)]
    return [m * theta[j % (d // 2)] for j in range(d)]


def _turn(x: list[float], phi: list[float], layout: str) -> list[float]:
    # 每一对 (a, b) 转一个角度：a' = a·cos − b·sin，b' = b·cos + a·sin。
    # 两个分量各用自己那一格的角度；两格相等时这才是一次真正的旋转。
    out = list(x)
    for a, b in pairs(len(x), layout):
        out[a] = x[a] * math.cos(phi[a]) - x[b] * math.sin(phi[a])
        out[b] = x[b] * math.cos(phi[b]) + x[a] * math.sin(phi[b])
    return out


def rotate(x: list[float], position: int, base: float = BASE, layout: str = "adjacent") -> list[float]:
    """把向量 ``x`` 按位置旋转：第 i 对分量转 ``position × θ_i`` 弧度。长度不变，位置 0 不变。

    >>> [round(c, 4) for c in rotate([1.0, 0.0], 1)]  # d = 2 时 θ = 1：转 1 弧度
    [0.5403, 0.8415]
    >>> rotate([1.0, 2.0, 3.0, 4.0], 0)
    [1.0, 2.0, 3.0, 4.0]
    >>> rotate([1.0, 0.0], -1)
    Traceback (most recent call last):
    ...
    ValueError: position 不能是负数：位置从 0 数起，收到 -1
    """
    v = _vector(x, "x")
    return _turn(v, angles(len(v), position, base, layout), layout)


def mixed_rotate(x: list[float], position: int, base: float = BASE) -> list[float]:
    """故意写错的旋转：角度按“前后两半”排开，配对却按“相邻”取。只用于对照和测试。

    同一对的两个分量拿到不同的角度，这不再是旋转：长度会变，分数也不再只依赖位置之差。

    >>> x = [1.0, 1.0, 0.0, 0.0]
    >>> round(math.hypot(*rotate(x, 2)), 4), round(math.hypot(*mixed_rotate(x, 2)), 4)
    (1.4142, 1.6724)
    """
    v = _vector(x, "x")
    return _turn(v, angles(len(v), position, base, "half"), "adjacent")


def rotate_rows(
    x: list[list[float]], positions: list[int], base: float = BASE, layout: str = "adjacent"
) -> list[list[float]]:
    """逐行旋转：第 r 行按 ``positions[r]`` 旋转。形状不变 ``(n, d)``。

    >>> [[round(c, 4) for c in row] for row in rotate_rows([[1.0, 0.0], [1.0, 0.0]], [0, 1])]
    [[1.0, 0.0], [0.5403, 0.8415]]
    """
    m = att._matrix(x, "x")
    ps = _positions(positions, len(m))
    return [rotate(row, p, base, layout) for row, p in zip(m, ps)]  # (n, d)


def rope_scores(
    q: list[list[float]],
    k: list[list[float]],
    q_positions: list[int],
    k_positions: list[int],
    base: float = BASE,
    layout: str = "adjacent",
) -> list[list[float]]:
    """先按各自的位置旋转 Q 和 K，再算同一章的缩放点积分数 ``q·k / √d``。形状 ``(n_query, n_key)``。

    >>> s = rope_scores([[1.0, 0.0]], [[1.0, 0.0]], [3], [1])
    >>> t = rope_scores([[1.0, 0.0]], [[1.0, 0.0]], [7], [5])  # 两个位置都加 4：差仍是 2
    >>> round(s[0][0], 4), round(t[0][0], 4)
    (-0.2943, -0.2943)
    """
    return att.scaled_scores(rotate_rows(q, q_positions, base, layout), rotate_rows(k, k_positions, base, layout))


# -- 两种配对：同一个旋转，只差一个固定的置换 ---------------------------------------------------------
def layout_permutation(d: int) -> list[int]:
    """把“相邻成对”的分量顺序换成“前后两半成对”的顺序：先取偶数号分量，再取奇数号分量。

    相邻的第 i 对 (2i, 2i+1) 在新顺序里落到 (i, i + d/2)，正好是前后两半的第 i 对。

    >>> layout_permutation(8)
    [0, 2, 4, 6, 1, 3, 5, 7]
    """
    d = _dim(d)
    return list(range(0, d, 2)) + list(range(1, d, 2))


def permute(x: list, order: list[int]) -> list:
    """按 ``order`` 重排：新序列的第 j 个是 ``x[order[j]]``。向量的分量、矩阵的行都可以这样重排。

    >>> permute([10.0, 11.0, 12.0, 13.0], layout_permutation(4))
    [10.0, 12.0, 11.0, 13.0]
    """
    xs = att._as_list(x, "x")
    idx = att._as_list(order, "order")
    if sorted(idx) != list(range(len(xs))) or any(isinstance(i, bool) for i in idx):
        raise ValueError(f"order 必须是 0 … {len(xs) - 1} 的一个排列，收到 {idx!r}")
    return [xs[i] for i in idx]


def project(x: list[list[float]], w: list[list[float]]) -> list[list[float]]:
    """线性投影 ``x W^T``：``w`` 的每一行产生输出的一个分量（与常见框架的权重形状一致）。

    所以重排输出分量，就是重排 ``w`` 的行。形状 ``(n, d_model) → (n, d)``。

    >>> project([[1.0, 2.0]], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    [[1.0, 2.0, 3.0]]
    """
    xs, ws = att._matrix(x, "x"), att._matrix(w, "W")
    if len(xs[0]) != len(ws[0]):
        raise ValueError(f"x 的列数必须等于 W 的列数（输入维度），收到 x 为 {len(xs[0])}、W 为 {len(ws[0])}")
    return [[sum(a * b for a, b in zip(row, w_row)) for w_row in ws] for row in xs]  # (n, d)


# -- 整段计算与带缓存的逐步计算 ---------------------------------------------------------------------
def full_attention(
    q: list[list[float]], k: list[list[float]], v: list[list[float]], base: float = BASE
) -> tuple[list[list[float]], list[list[float]]]:
    """整段重算：第 r 行的 Q、K 都在位置 r 旋转，V 不动，再做因果注意力。返回 ``(weights, outputs)``。

    >>> q = k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> w, out = full_attention(q, k, [[10.0], [20.0], [30.0]])
    >>> [round(row[0], 4) for row in out]
    [10.0, 17.8619, 25.1965]
    """
    qs, ks = att._matrix(q, "Q"), att._matrix(k, "K")
    if len(qs) != len(ks):
        raise ValueError(f"整段重算时 Q 与 K 的行数必须相同，收到 Q 为 {len(qs)}、K 为 {len(ks)}")
    positions = list(range(len(qs)))
    return att.attention(rotate_rows(qs, positions, base), rotate_rows(ks, positions, base), v)


def fill_cache(
    k: list[list[float]], v: list[list[float]], positions: list[int], base: float = BASE
) -> tuple[list[list[float]], list[list[float]]]:
    """把键在各自的绝对位置上旋转好后放进缓存；值原样放进去。返回 ``(cache_k, cache_v)``。

    >>> ck, cv = fill_cache([[1.0, 0.0]], [[5.0]], [1])
    >>> [round(c, 4) for c in ck[0]], cv
    ([0.5403, 0.8415], [[5.0]])
    """
    ks, vs = att._matrix(k, "K"), att._matrix(v, "V")
    if len(ks) != len(vs):
        raise ValueError(f"K 与 V 的行数必须相同，收到 K 为 {len(ks)}、V 为 {len(vs)}")
    return rotate_rows(ks, positions, base), vs


def cached_step(
    cache_k: list[list[float]],
    cache_v: list[list[float]],
    q_new: list[list[float]],
    k_new: list[list[float]],
    v_new: list[list[float]],
    positions: list[int],
    *,
    base: float = BASE,
    key_valid: list[bool] | None = None,
) -> tuple[list[list[float]], list[list[float]], list[list[float]], list[list[float]]]:
    """解码一步：新来的 Q、K 在 ``positions`` 上旋转，旋转后的 K 与原样的 V 接到缓存后面，
    新 Q 再按同一章的因果规则（``past`` 为缓存长度）读全部键。

    返回 ``(cache_k, cache_v, weights, outputs)``，前两个是加长后的新缓存（旧缓存不被改动）。

    >>> ck, cv = fill_cache([[1.0, 0.0]], [[10.0]], [0])
    >>> ck, cv, w, out = cached_step(ck, cv, [[0.0, 1.0]], [[0.0, 1.0]], [[20.0]], [1])
    >>> [round(x, 4) for x in w[0]], round(out[0][0], 4)
    ([0.2138, 0.7862], 17.8619)
    """
    ks_new = rotate_rows(k_new, positions, base)
    ck = [list(row) for row in cache_k] + ks_new  # (past + new, d)
    cv = [list(row) for row in cache_v] + att._matrix(v_new, "V")
    past = len(ck) - len(ks_new)
    weights, outputs = att.attention(rotate_rows(q_new, positions, base), ck, cv, past=past, key_valid=key_valid)
    return ck, cv, weights, outputs


def _chunks(chunks: object, n: int) -> list[int]:
    sizes = att._as_list(chunks, "chunks")
    for j, c in enumerate(sizes):
        att._check_count(c, f"chunks[{j}]", minimum=1)
    if sum(sizes) != n:
        raise ValueError(f"chunks 之和必须等于序列长度 {n}，收到 {sizes!r}")
    return sizes


def _decode(q, k, v, chunks, base, by_row: bool) -> list[list[float]]:
    qs, ks, vs = att._matrix(q, "Q"), att._matrix(k, "K"), att._matrix(v, "V")
    if not len(qs) == len(ks) == len(vs):
        raise ValueError(f"Q、K、V 的行数必须相同，收到 {len(qs)}、{len(ks)}、{len(vs)}")
    cache_k: list[list[float]] = []
    cache_v: list[list[float]] = []
    outputs: list[list[float]] = []
    start = 0
    for size in _chunks(chunks, len(qs)):
        rows = slice(start, start + size)
        # 正确：本批第 i 行的绝对位置是 past + i（past = 缓存里已有的位置数）。
        # 写错：把批内行号 i 当位置——每一步都从 0 数起。
        positions = [i if by_row else start + i for i in range(size)]
        cache_k, cache_v, _, out = cached_step(cache_k, cache_v, qs[rows], ks[rows], vs[rows], positions, base=base)
        outputs += out
        start += size
    return outputs  # (n, d_v)


def decode(
    q: list[list[float]], k: list[list[float]], v: list[list[float]], chunks: list[int], base: float = BASE
) -> list[list[float]]:
    """带 KV 缓存逐段计算：``chunks`` 是每一步新来的位置数（全是 1 就是逐词解码）。返回全部输出。

    正确的实现与整段重算（``full_attention``）逐行一致。

    >>> q = k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> [round(row[0], 4) for row in decode(q, k, [[10.0], [20.0], [30.0]], [1, 1, 1])]
    [10.0, 17.8619, 25.1965]
    """
    return _decode(q, k, v, chunks, base, by_row=False)


def row_index_decode(
    q: list[list[float]], k: list[list[float]], v: list[list[float]], chunks: list[int], base: float = BASE
) -> list[list[float]]:
    """故意写错的偏移：每一步都按批内行号旋转新的 Q 和 K（忘了加 ``past``）。只用于对照和测试。

    可见性表仍然正确，分数却错了：与整段重算不一致。逐词解码时每个 Q、K 都“在位置 0”，
    结果退化成完全不旋转的注意力（与 ``02_attention.attention`` 相同）。

    >>> q = k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> [round(row[0], 4) for row in row_index_decode(q, k, [[10.0], [20.0], [30.0]], [1, 1, 1])]
    [10.0, 16.6976, 22.5523]
    """
    return _decode(q, k, v, chunks, base, by_row=True)


def padded_positions(valid: list[bool]) -> list[int]:
    """左侧补 PAD 时每个位置的旋转位置：它前面真实词元的个数（PAD 自己不计数）。

    >>> padded_positions([False, False, True, True, True])
    [0, 0, 0, 1, 2]
    """
    flags = att._as_list(valid, "valid")
    if not flags:
        raise ValueError("valid 不能为空：至少需要一个位置")
    out, count = [], 0
    for j, flag in enumerate(flags):
        if not isinstance(flag, bool):
            raise ValueError(f"valid[{j}] 必须是 True 或 False，收到 {flag!r}")
        out.append(count)
        count += flag
    return out


def max_abs_diff(a: list[list[float]], b: list[list[float]]) -> float:
    """两个同形矩阵逐格之差的最大绝对值：检查“逐步计算 = 整段重算”用。

    >>> max_abs_diff([[1.0, 2.0]], [[1.0, 2.5]])
    0.5
    """
    ma, mb = att._matrix(a, "a"), att._matrix(b, "b")
    if len(ma) != len(mb) or len(ma[0]) != len(mb[0]):
        raise ValueError(f"a 与 b 的形状必须相同，收到 ({len(ma)}, {len(ma[0])}) 与 ({len(mb)}, {len(mb[0])})")
    return max(abs(x - y) for ra, rb in zip(ma, mb) for x, y in zip(ra, rb))


def offset_verdict(columns: dict[str, list[float]], tol: float = 1e-9) -> str:
    """一句话：哪几列分数在“位置差相同、位置不同”的各组里保持不变，哪几列在变。

    ``columns`` 的每一列是同一种做法在几组位置上的分数（各组的位置差相同）。

    >>> offset_verdict({"甲": [0.5, 0.5], "乙": [0.5, 0.7]})
    '「甲」在各组位置上分数相同，只依赖位置差；「乙」随位置变化，不只依赖位置差。'
    >>> offset_verdict({"甲": [1.0, 1.0], "乙": [2.0, 2.0]})
    '「甲」「乙」在各组位置上分数相同，只依赖位置差。'
    """
    if not isinstance(columns, dict) or not columns:
        raise ValueError(f"columns 必须是非空的字典（列名 → 分数列表），收到 {columns!r}")
    t = att._real(tol, "tol")
    if not math.isfinite(t) or t < 0:
        raise ValueError(f"tol 必须是非负的有限数，收到 {tol!r}")
    steady, moving = [], []
    for name, values in columns.items():
        xs = [att._real(x, f"columns[{name!r}][{j}]") for j, x in enumerate(att._as_list(values, f"columns[{name!r}]"))]
        if not xs or not all(math.isfinite(x) for x in xs):
            raise ValueError(f"columns[{name!r}] 必须是非空的有限分数列表，收到 {values!r}")
        (steady if max(xs) - min(xs) <= t else moving).append(f"「{name}」")
    parts = []
    if steady:
        parts.append("".join(steady) + "在各组位置上分数相同，只依赖位置差")
    if moving:
        parts.append("".join(moving) + "随位置变化，不只依赖位置差")
    return "；".join(parts) + "。"


# -- 远距离 -----------------------------------------------------------------------------------------
def offset_scores(
    q: list[float], k: list[float], offsets: list[int], base: float = BASE, layout: str = "adjacent"
) -> list[float]:
    """固定的 q、k 相隔 ``offset`` 个位置时的缩放点积分数（k 在位置 0，q 在位置 offset）。

    >>> [round(s, 4) for s in offset_scores([1.0, 0.0], [1.0, 0.0], [0, 1, 2])]
    [0.7071, 0.3821, -0.2943]
    """
    kv, qv = _vector(k, "k"), _vector(q, "q")
    if len(kv) != len(qv):
        raise ValueError(f"q 与 k 的长度必须相同，收到 q 为 {len(qv)}、k 为 {len(kv)}")
    ms = [_position(m, f"offsets[{j}]") for j, m in enumerate(att._as_list(offsets, "offsets"))]
    layout = _layout(layout)
    theta = frequencies(len(qv), base)
    # 每个分量的频率只排一次：曲线要在很多偏移上取点，校验也只在边界上做一次。
    per_dim = [theta[j // 2] if layout == "adjacent" else theta[j % len(theta)] for j in range(len(qv))]
    scale = att.score_scale(len(qv))
    return [sum(a * b for a, b in zip(_turn(qv, [m * t for t in per_dim], layout), kv)) / scale for m in ms]


def slowest_wavelength(d: int, base: float = BASE) -> float:
    """最慢的一对（i = d/2 − 1）转一整圈要多少个位置：``2π / θ_min = 2π·base^((d−2)/d)``。

    >>> round(slowest_wavelength(2), 4)  # d = 2 只有一对，θ = 1
    6.2832
    >>> round(slowest_wavelength(128, 10000.0))
    54410
    >>> slowest_wavelength(128, 0)
    Traceback (most recent call last):
    ...
    ValueError: base 必须是正的有限数，收到 0
    """
    d, b = _dim(d), _base(base)
    return 2 * math.pi * b ** ((d - 2) / d)


def model_bases() -> list[dict]:
    """公开模型的底数、头维度与最慢波长（出处见 ``MODEL_BASES`` 的 ``source``）。

    >>> [(row["model"], round(row["slowest_wavelength"])) for row in model_bases()][:1]
    [('Llama-2-7B', 54410)]
    """
    return [
        {**row, "slowest_wavelength": slowest_wavelength(row["head_dim"], row["base"])} for row in MODEL_BASES
    ]


# -- 自检与演示 -------------------------------------------------------------------------------------
def _check(condition: bool, message: str) -> None:
    # 不用 assert：python -O 会删掉 assert，自检就形同虚设。
    if not condition:
        raise AssertionError(message)


# 演示与自检共用的构造数据。
DEMO_Q2, DEMO_K2 = [1.0, 0.5], [0.5, 1.0]  # d = 2 的一对查询与键
DEMO_Q8 = [1.0, 0.0, 0.5, -1.0, 0.0, 1.0, -0.5, 0.5]  # d = 8
DEMO_K8 = [0.5, 1.0, -1.0, 0.0, 1.0, 0.5, 0.0, -0.5]
DEMO_SEQ = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0], [2.0, 0.0]]  # 五个位置的 Q = K
DEMO_V = [[1.0], [2.0], [3.0], [4.0], [5.0]]


def self_test() -> None:
    """快速自检：只依赖位置差、长度不变、两种配对一致、错配与写错偏移都被认出。

    >>> self_test()
    """
    s = rope_scores([DEMO_Q8], [DEMO_K8], [5], [2])[0][0]
    t = rope_scores([DEMO_Q8], [DEMO_K8], [9], [6])[0][0]
    _check(abs(s - t) < 1e-12, "两个位置同加一个数，分数应当不变")
    r = rotate(DEMO_Q8, 7)
    _check(abs(math.hypot(*r) - math.hypot(*DEMO_Q8)) < 1e-12, "旋转应当保持长度")
    order = layout_permutation(8)
    a = permute(rotate(DEMO_Q8, 3), order)
    b = rotate(permute(DEMO_Q8, order), 3, layout="half")
    _check(max(abs(x - y) for x, y in zip(a, b)) < 1e-12, "两种配对应当只差一个置换")
    mixed = [
        sum(x * y for x, y in zip(mixed_rotate(DEMO_Q8, m, 100.0), mixed_rotate(DEMO_K8, n, 100.0)))
        for m, n in ((5, 2), (9, 6))
    ]
    _check(abs(mixed[0] - mixed[1]) > 1e-6, "错配的旋转不应满足只依赖位置差")
    _, full = full_attention(DEMO_SEQ, DEMO_SEQ, DEMO_V)
    _check(max_abs_diff(decode(DEMO_SEQ, DEMO_SEQ, DEMO_V, [1] * 5), full) < 1e-12, "逐词解码必须等于整段重算")
    _check(max_abs_diff(decode(DEMO_SEQ, DEMO_SEQ, DEMO_V, [3, 2]), full) < 1e-12, "分段解码必须等于整段重算")
    _check(max_abs_diff(row_index_decode(DEMO_SEQ, DEMO_SEQ, DEMO_V, [3, 2]), full) > 1e-6, "按行号旋转应被认出")


def run_demo() -> dict:
    """演示结果：d = 2 的分数只看位置差、d = 8 的频率、两种配对、缓存偏移与公开模型的最慢波长。

    >>> demo = run_demo()
    >>> abs(demo["d2_分数_位置3与1"] - demo["d2_分数_位置6与4"]) < 1e-12
    True
    >>> demo["逐词解码与整段重算之差"] < 1e-12 < demo["按行号旋转与整段重算之差"]
    True
    """
    _, full = full_attention(DEMO_SEQ, DEMO_SEQ, DEMO_V)
    order = layout_permutation(8)
    return {
        "性质": "人工构造的小向量，没有训练过的模型",
        "d2_分数_位置3与1": rope_scores([DEMO_Q2], [DEMO_K2], [3], [1])[0][0],
        "d2_分数_位置6与4": rope_scores([DEMO_Q2], [DEMO_K2], [6], [4])[0][0],
        "d8_频率": frequencies(8),
        "d8_相邻成对_位置5与2": rope_scores([DEMO_Q8], [DEMO_K8], [5], [2])[0][0],
        "d8_前后两半成对_置换后_位置5与2": rope_scores(
            [permute(DEMO_Q8, order)], [permute(DEMO_K8, order)], [5], [2], layout="half"
        )[0][0],
        "整段重算输出": [row[0] for row in full],
        "逐词解码与整段重算之差": max_abs_diff(decode(DEMO_SEQ, DEMO_SEQ, DEMO_V, [1] * 5), full),
        "按行号旋转与整段重算之差": max_abs_diff(row_index_decode(DEMO_SEQ, DEMO_SEQ, DEMO_V, [1] * 5), full),
        "最慢波长": {row["model"]: row["slowest_wavelength"] for row in model_bases()},
    }


if __name__ == "__main__":
    import json

    self_test()
    print(json.dumps(run_demo(), ensure_ascii=False, indent=2))
