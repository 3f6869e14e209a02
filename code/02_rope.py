"""第2章教学代码：位置旋转（RoPE）——按位置旋转 Q、K 的分量对，让分数只依赖位置之差。

数据都是人工构造的小向量，没有训练过的模型；只用标准库，注意力调用同一章的 ``02_attention.py``
（放在同一目录）。``x`` 是长度为偶数 ``d`` 的查询或键；``position`` 是旋转用的位置编号 m
（用了 KV 缓存时本批第 i 行在 ``past + i``）；第 i 对的频率是 ``θ_i = base^(−2i/d)``；
``layout`` 为 ``"adjacent"``（相邻成对，RoFormer 论文）或 ``"half"``（前后两半成对，
``rotate_half``）。只有 Q、K 在投影之后、点积之前旋转，V 不旋转。
运行 ``python3 02_rope.py``：先自检，再以 JSON 打印演示结果。
"""

from __future__ import annotations

import importlib
import math

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
    "head_permutation",
    "permute",
    "full_attention",
    "cached_step",
    "decode",
    "row_index_decode",
    "padded_positions",
    "slowest_wavelength",
    "self_test",
    "run_demo",
]
Matrix = list[list[float]]

BASE = 10000.0  # RoFormer 论文取的底数，也是本页例子的默认值
LAYOUTS = ("adjacent", "half")  # 两种配对：相邻成对，或前后两半成对
MAX_POSITION = 2**53  # 位置要能精确地变成浮点数，转角 m·θ 才可信
# 公开模型 config.json 的 rope_theta、头维度与出处；Llama-2-7B 未写，取 LlamaConfig 默认值。
MODEL_BASES = [
    {"model": "Llama-2-7B", "base": 10000.0, "head_dim": 128, "source": "llama2_7b_config"},
    {"model": "Llama-3-8B", "base": 500000.0, "head_dim": 128, "source": "llama3_8b_config"},
    {"model": "Qwen2-7B", "base": 1000000.0, "head_dim": 128, "source": "qwen2_7b_config"},
]


# -- 旋转：频率、配对、转角 ----------------------------------------------------------------------
def frequencies(d: int, base: float = BASE) -> list[float]:
    """每一对分量的频率 ``θ_i = base^(−2i/d)``，i = 0 … d/2 − 1：第一对转得最快。

    >>> [round(t, 4) for t in frequencies(4)]
    [1.0, 0.01]
    """
    d = _dim(d)
    b = _base(base)
    return [b ** (-2 * i / d) for i in range(d // 2)]


def pairs(d: int, layout: str = "adjacent") -> list[tuple[int, int]]:
    """第 i 对由哪两个分量组成：相邻成对是 ``(2i, 2i+1)``，前后两半成对是 ``(i, i + d/2)``。

    >>> pairs(8)
    [(0, 1), (2, 3), (4, 5), (6, 7)]
    >>> pairs(8, "half")
    [(0, 4), (1, 5), (2, 6), (3, 7)]
    """
    d = _dim(d)
    layout = _layout(layout)
    return [(2 * i, 2 * i + 1) if layout == "adjacent" else (i, i + d // 2) for i in range(d // 2)]


def angles(d: int, position: int, base: float = BASE, layout: str = "adjacent") -> list[float]:
    """各分量的转角 ``position × θ``：相邻 ``[θ0, θ0, θ1, …]``；前后两半 ``[θ0, θ1, …, θ0, …]``。

    >>> [round(a, 4) for a in angles(4, 2)]
    [2.0, 2.0, 0.02, 0.02]
    >>> [round(a, 4) for a in angles(4, 2, layout="half")]
    [2.0, 0.02, 2.0, 0.02]
    """
    theta = frequencies(d, base)
    m = _position(position)
    adjacent = _layout(layout) == "adjacent"
    return [m * theta[j // 2 if adjacent else j % (d // 2)] for j in range(d)]


def _turn(x: list[float], phi: list[float], layout: str) -> list[float]:
    """每一对 (a, b) 转一个角度：a' = a·cos − b·sin，b' = b·cos + a·sin；各用自己那一格的角度。

    >>> [round(c, 4) for c in _turn([1.0, 0.0], [math.pi / 2] * 2, "adjacent")]  # 两格相等：真旋转
    [0.0, 1.0]
    """
    out = list(x)
    for a, b in pairs(len(x), layout):
        out[a] = x[a] * math.cos(phi[a]) - x[b] * math.sin(phi[a])
        out[b] = x[b] * math.cos(phi[b]) + x[a] * math.sin(phi[b])
    return out


def rotate(x: list[float], position: int, base: float = BASE, layout: str = "adjacent") -> list:
    """把向量 ``x`` 按位置旋转：第 i 对分量转 ``position × θ_i`` 弧度。长度不变，位置 0 不变。

    >>> [round(c, 4) for c in rotate([1.0, 0.0], 1)]  # d = 2 时 θ = 1：转 1 弧度
    [0.5403, 0.8415]
    """
    v = _vector(x, "x")
    return _turn(v, angles(len(v), position, base, layout), layout)


def mixed_rotate(x: list[float], position: int, base: float = BASE) -> list[float]:
    """故意写错：角度按“前后两半”排开，配对却按“相邻”取。同一对的两个分量角度不同，这不再是旋转。

    >>> round(math.hypot(*mixed_rotate([1.0, 1.0, 0.0, 0.0], 2)), 4)  # 转前长度 √2 ≈ 1.4142
    1.6724
    """
    v = _vector(x, "x")
    return _turn(v, angles(len(v), position, base, "half"), "adjacent")


def rotate_rows(x: Matrix, positions: list[int], base: float = BASE, layout="adjacent") -> Matrix:
    """逐行旋转：第 r 行按 ``positions[r]`` 旋转。形状不变 ``(n, d)``。

    >>> [[round(c, 4) for c in row] for row in rotate_rows([[1.0, 0.0], [1.0, 0.0]], [0, 1])]
    [[1.0, 0.0], [0.5403, 0.8415]]
    """
    m = att.as_matrix(x, "x")
    ps = att.as_list(positions, "positions")
    if len(ps) != len(m):
        raise ValueError(f"positions 的个数必须等于行数 {len(m)}，收到 {len(ps)} 个")
    return [
        rotate(row, _position(p, f"positions[{i}]"), base, layout)
        for i, (row, p) in enumerate(zip(m, ps))
    ]


def rope_scores(
    q: Matrix,
    k: Matrix,
    q_positions: list[int],
    k_positions: list[int],
    base: float = BASE,
    layout: str = "adjacent",
) -> Matrix:
    """先按各自的位置旋转 Q 和 K，再算同一章的缩放点积分数 ``q·k / √d``。形状 ``(n_query, n_key)``。

    >>> q = k = [[1.0, 0.0]]
    >>> [round(rope_scores(q, k, [m], [n])[0][0], 4) for m, n in ((3, 1), (7, 5))]
    [-0.2943, -0.2943]
    """
    q_rot = rotate_rows(att.as_matrix(q, "Q"), q_positions, base, layout)
    k_rot = rotate_rows(att.as_matrix(k, "K"), k_positions, base, layout)
    return att.scaled_scores(q_rot, k_rot)


# -- 两种配对只差一个置换 ------------------------------------------------------------------------
def layout_permutation(d: int) -> list[int]:
    """先取偶数号、再取奇数号分量：相邻的第 i 对 (2i, 2i+1) 落到前后两半的第 i 对 (i, i + d/2)。

    >>> layout_permutation(8)
    [0, 2, 4, 6, 1, 3, 5, 7]
    """
    d = _dim(d)
    return list(range(0, d, 2)) + list(range(1, d, 2))


def head_permutation(n_heads: int, d_head: int) -> list[int]:
    """多头投影 ``Q = X W``（每个头占相邻的 ``d_head`` 列）换写法时的列序：每个头在自己的块里
    做 ``layout_permutation(d_head)``，头与头的先后不变（整个宽度一次重排是错的）。

    >>> head_permutation(2, 4)
    [0, 2, 1, 3, 4, 6, 5, 7]
    """
    heads = att.check_count(n_heads, "n_heads", maximum=att.MAX_POSITIONS)
    if att.check_count(d_head, "d_head", minimum=2, maximum=att.MAX_POSITIONS) % 2:
        raise ValueError(f"d_head 必须是不小于 2 的偶数（分量两两成对旋转），收到 {d_head!r}")
    return [h * d_head + j for h in range(heads) for j in layout_permutation(d_head)]


def permute(x: list, order: list[int]) -> list:
    """按 ``order`` 重排：新序列的第 j 个是 ``x[order[j]]``（向量的分量、矩阵的行都可以）。

    >>> permute([10.0, 11.0, 12.0, 13.0], layout_permutation(4))
    [10.0, 12.0, 11.0, 13.0]
    """
    xs = att.as_list(x, "x")
    idx = att.as_list(order, "order")
    ints = all(isinstance(i, int) and not isinstance(i, bool) for i in idx)
    if not ints or sorted(idx) != list(range(len(xs))):
        raise ValueError(f"order 必须是 0 … {len(xs) - 1} 的一个排列，收到 {idx!r}")
    return [xs[i] for i in idx]


# -- 注意力：整段重算与带缓存的解码 ----------------------------------------------------------------
def full_attention(q: Matrix, k: Matrix, v: Matrix, base: float = BASE) -> tuple[Matrix, Matrix]:
    """整段重算：第 r 行的 Q、K 在位置 r 旋转，V 不动，再做因果注意力。返回 ``(weights, outputs)``。

    >>> q = k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> [round(row[0], 4) for row in full_attention(q, k, [[10.0], [20.0], [30.0]])[1]]
    [10.0, 17.8619, 25.1965]
    """
    qs = att.as_matrix(q, "Q")
    ks = att.as_matrix(k, "K")
    if len(qs) != len(ks):
        raise ValueError(f"整段重算时 Q 与 K 的行数必须相同，收到 Q 为 {len(qs)}、K 为 {len(ks)}")
    positions = list(range(len(qs)))
    return att.attention(rotate_rows(qs, positions, base), rotate_rows(ks, positions, base), v)


def cached_step(
    cache_k: Matrix,
    cache_v: Matrix,
    q_new: Matrix,
    k_new: Matrix,
    v_new: Matrix,
    positions: list[int],
    *,
    base: float = BASE,
    key_valid: list[bool] | None = None,
):
    """解码一步：新的 Q、K 在 ``positions`` 上旋转，转好的 K 与原样的 V 接到缓存后面，
    新 Q 按因果规则读全部键（这里缓存不丢旧键值，``past`` 就是缓存长度）。
    返回 ``(cache_k, cache_v, weights, outputs)``，旧缓存不被改动。

    >>> ck, cv, _, _ = cached_step([], [], [[1.0, 0.0]], [[1.0, 0.0]], [[10.0]], [0])  # 第一步
    >>> ck, cv, w, out = cached_step(ck, cv, [[0.0, 1.0]], [[0.0, 1.0]], [[20.0]], [1])
    >>> [round(x, 4) for x in w[0]]
    [0.2138, 0.7862]
    >>> round(out[0][0], 4)
    17.8619
    """
    old_k = att.as_matrix(cache_k, "cache_k") if att.as_list(cache_k, "cache_k") else []  # 可以为空
    old_v = att.as_matrix(cache_v, "cache_v") if att.as_list(cache_v, "cache_v") else []
    if len(old_k) != len(old_v):
        raise ValueError(f"cache_k 与 cache_v 的行数必须相同，收到 {len(old_k)} 与 {len(old_v)}")
    ck = old_k + rotate_rows(k_new, positions, base)  # (past + new, d)
    cv = old_v + att.as_matrix(v_new, "V")  # (past + new, d_v)：V 原样存入
    q_rot = rotate_rows(q_new, positions, base)
    weights, outputs = att.attention(q_rot, ck, cv, past=len(old_k), key_valid=key_valid)
    return ck, cv, weights, outputs


def _decode(q: Matrix, k: Matrix, v: Matrix, chunks: list[int], base: float, by_row: bool):
    qs = att.as_matrix(q, "Q")
    ks = att.as_matrix(k, "K")
    vs = att.as_matrix(v, "V")
    if not len(qs) == len(ks) == len(vs):
        raise ValueError(f"Q、K、V 的行数必须相同，收到 {len(qs)}、{len(ks)}、{len(vs)}")
    sizes = [
        att.check_count(c, f"chunks[{j}]") for j, c in enumerate(att.as_list(chunks, "chunks"))
    ]
    if sum(sizes) != len(qs):
        raise ValueError(f"chunks 之和必须等于序列长度 {len(qs)}，收到 {sizes!r}")
    cache_k = []
    cache_v = []
    outputs = []
    start = 0
    for size in sizes:
        rows = slice(start, start + size)
        # 正确：本批第 i 行的绝对位置是 past + i（past = 本批之前的位置数；
        # 这里缓存全留着，也就是缓存长度）。
        # 写错（by_row）：把批内行号 i 当位置，每一步都从 0 数起。
        positions = [i if by_row else start + i for i in range(size)]
        cache_k, cache_v, _, out = cached_step(
            cache_k, cache_v, qs[rows], ks[rows], vs[rows], positions, base=base
        )
        outputs += out
        start += size
    return outputs  # (n, d_v)


def decode(q: Matrix, k: Matrix, v: Matrix, chunks: list[int], base: float = BASE) -> Matrix:
    """带 KV 缓存逐段计算：``chunks`` 是每一步新来的位置数（全是 1 就是逐词解码）。返回全部输出。

    >>> q = k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> [round(row[0], 4) for row in decode(q, k, [[10.0], [20.0], [30.0]], [1, 1, 1])]
    [10.0, 17.8619, 25.1965]
    """
    return _decode(q, k, v, chunks, base, by_row=False)


def row_index_decode(q: Matrix, k: Matrix, v: Matrix, chunks: list[int], base: float = BASE):
    """故意写错：每一步按批内行号旋转新的 Q、K（忘了加 ``past``）。可见性表仍对，分数却错了。

    >>> q = k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> [round(row[0], 4) for row in row_index_decode(q, k, [[10.0], [20.0], [30.0]], [1, 1, 1])]
    [10.0, 16.6976, 22.5523]
    """
    return _decode(q, k, v, chunks, base, by_row=True)


def padded_positions(valid: list[bool]) -> list[int]:
    """左侧补 PAD 时每个位置的位置编号：它前面真实 token 的个数（PAD 自己不计数）。

    >>> padded_positions([False, False, True, True, True])
    [0, 0, 0, 1, 2]
    """
    flags = att.flags(valid, "valid")
    att.check_count(len(flags), "valid 的长度", maximum=att.MAX_POSITIONS)
    return [sum(flags[:j]) for j in range(len(flags))]  # 第 j 个位置之前有几个 True


def slowest_wavelength(d: int, base: float = BASE) -> float:
    """最慢的一对（i = d/2 − 1）转一整圈要多少个位置：``2π / θ_min = 2π·base^((d−2)/d)``。

    >>> round(slowest_wavelength(2), 4)  # d = 2：θ = 1，一圈 2π 个位置
    6.2832
    >>> round(slowest_wavelength(128, 10000.0))
    54410
    """
    d = _dim(d)
    b = _base(base)
    return 2 * math.pi * b ** ((d - 2) / d)


# -- 边界上的检查 ------------------------------------------------------------------------------
def _dim(d: object) -> int:
    if att.check_count(d, "d", minimum=2, maximum=att.MAX_POSITIONS) % 2:
        raise ValueError(f"d 必须是不小于 2 的偶数（分量两两成对旋转），收到 {d!r}")
    return d


def _base(base: object) -> float:
    b = att.real(base, "base")
    if not 1 <= b < math.inf:  # base ≥ 1：频率 base^(−2i/d) 都不大于 1，第 0 对转得最快
        raise ValueError(f"base 必须是不小于 1 的有限数，收到 {base!r}")
    return b


def _position(position: object, name: str = "position") -> int:
    if att.check_count(position, name, minimum=0) > MAX_POSITION:
        raise ValueError(f"{name} 不能超过 2**53（再大就不能精确地变成浮点数），收到 {position!r}")
    return position


def _layout(layout: object) -> str:
    if not isinstance(layout, str) or layout not in LAYOUTS:
        raise ValueError(f"layout 必须是 'adjacent'（相邻）或 'half'（前后两半），收到 {layout!r}")
    return layout


def _vector(x: object, name: str) -> list[float]:
    v = att.as_vector(x, name)
    if len(v) % 2:
        raise ValueError(f"{name} 的长度 d 必须是偶数（分量两两成对旋转），收到长度 {len(v)}")
    return v


# -- 自检与演示 ------------------------------------------------------------------------------------
DEMO_Q2 = [1.0, 0.5]
DEMO_K2 = [0.5, 1.0]  # d = 2 的一对查询与键
DEMO_Q8 = [1.0, 0.0, 0.5, -1.0, 0.0, 1.0, -0.5, 0.5]  # d = 8
DEMO_K8 = [0.5, 1.0, -1.0, 0.0, 1.0, 0.5, 0.0, -0.5]
DEMO_SEQ = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0], [2.0, 0.0]]  # 五个位置的 Q = K
DEMO_V = [[1.0], [2.0], [3.0], [4.0], [5.0]]

# 页面各例的输入（人工构造；页面先写出输入，再给出由下面的函数算出的数）
D2_FIRST = (3, 1)  # d = 2：DEMO_Q2、DEMO_K2 先放在位置 (m, n)
D2_SHIFT = 3  # 再把两个位置都加上同一个数
TOEPLITZ_N = 5  # d = 2：位置 0 … 4 两两之间的分数表
D4_X = [1.0, 0.0, 0.5, -1.0]  # d = 4：一个向量
D4_M = 2  # 它所在的位置
D8 = 8  # 再看 d = 8 的频率
LAYOUT_OFFSET = 3  # 两种配对：DEMO_Q8、DEMO_K8 的位置差
LAYOUT_M = [3, 7, 12]  # 查询所在的几个位置
# 三个 token，两个宽 4 的头的 W_q、W_k（3 × 8）：q = x @ W_q，q 的每个分量一列。
W_X = [[1.0, 0.0, 2.0], [0.0, 1.0, -1.0], [1.0, 1.0, 0.0]]
W_Q = [[1, 0, 2, -1, 0, 1, 2, 0], [0, 1, 1, 0, 2, -1, 0, 1], [2, -1, 0, 1, 1, 0, -1, 1]]
W_K = [[0, 1, -1, 1, 2, 0, 1, 0], [1, 0, 2, 1, 0, -1, 0, 2], [1, -1, 0, 0, 1, 2, 0, -1]]
W_HEADS = 2
V_SEQ = DEMO_SEQ[:3]  # RoPE 只转 Q、K：V 不转
V_V = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
V_START = 0
V_SHIFT = 5
PAST = 3  # 带缓存的例子：缓存里的位置数
NEW = 2  # 新来的查询数
PADS = 2  # 左侧补 PAD 的例子：PAD 的个数
PAD_FILL = 0.0  # PAD 的键、值
LONG_FILL = 1.0  # 长距离的例子：一对各分量都是它的向量
CHECKPOINTS = [0, 10, 100, 1000, 10000]  # 表里列出的位置差
LONG_OFFSETS = sorted({int(round(10 ** (e / 25))) for e in range(0, 126)})  # 在对数轴上均匀的位置差


def self_test() -> None:
    """快速自检：只依赖位置差、长度不变、两种配对一致、错配与写错偏移都被认出。

    >>> self_test()
    """
    q = DEMO_Q8
    k = DEMO_K8
    seq = DEMO_SEQ
    v = DEMO_V
    near = rope_scores([q], [k], [5], [2])[0][0]
    far = rope_scores([q], [k], [9], [6])[0][0]  # 两个位置各加 4
    att.check(abs(near - far) < 1e-12, "两个位置同加一个数，分数应当不变")
    att.check(abs(math.hypot(*rotate(q, 7)) - math.hypot(*q)) < 1e-12, "旋转应当保持长度")
    order = layout_permutation(8)
    a = permute(rotate(q, 3), order)
    b = rotate(permute(q, order), 3, layout="half")
    att.check(att.max_abs_diff([a], [b]) < 1e-12, "两种配对应当只差一个置换")
    mixed = [
        att.scaled_scores([mixed_rotate(q, m, 100.0)], [mixed_rotate(k, n, 100.0)])
        for m, n in ((5, 2), (9, 6))
    ]
    att.check(att.max_abs_diff(*mixed) > 1e-6, "错配的旋转不应满足只依赖位置差")
    _, full = full_attention(seq, seq, v)

    def gap(run, chunks):
        return att.max_abs_diff(run(seq, seq, v, chunks), full)

    att.check(gap(decode, [1] * 5) < 1e-12, "逐词解码必须等于整段重算")
    att.check(gap(decode, [3, 2]) < 1e-12, "分段解码必须等于整段重算")
    att.check(gap(row_index_decode, [3, 2]) > 1e-6, "按行号旋转应被认出")


def run_demo() -> dict:
    """演示结果：d = 2 的分数只看位置差、d = 8 的频率、两种配对、缓存偏移与公开模型的最慢波长。

    >>> demo = run_demo()
    >>> demo["逐词解码与整段重算之差"] < 1e-12 < demo["按行号旋转与整段重算之差"]
    True
    """
    seq = DEMO_SEQ
    v = DEMO_V
    order = layout_permutation(8)
    _, full = full_attention(seq, seq, v)
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
        "逐词解码与整段重算之差": att.max_abs_diff(decode(seq, seq, v, [1] * 5), full),
        "按行号旋转与整段重算之差": att.max_abs_diff(row_index_decode(seq, seq, v, [1] * 5), full),
        "最慢波长": {r["model"]: slowest_wavelength(r["head_dim"], r["base"]) for r in MODEL_BASES},
    }


if __name__ == "__main__":
    self_test()
    att.print_json(run_demo())
