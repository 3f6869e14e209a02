"""第 2 章教学代码：可手算的小矩阵注意力、稳定 softmax 与可见性表（mask）。

本文件是《手算注意力与因果掩码》第 2 章的配套代码，书页在构建时直接运行它，
页面上的每个数都来自这里的函数。全部数据都是人工构造的小矩阵，没有训练过的
模型；所有函数只用 Python 标准库，每一步都能用纸笔复算。

对象与形状（与正文一致）：

- ``q``：查询矩阵，形状 ``(n_query, d)``，每行是一个“接收者”；
- ``k``：键矩阵，形状 ``(n_key, d)``，每行是一个“提供者”；
- ``v``：值矩阵，形状 ``(n_key, d_v)``；
- ``visible``：可见性表，形状 ``(n_query, n_key)``，True 表示允许读取；
- ``past``：KV 缓存里已经存在的位置数，第 i 个查询行的绝对位置是 ``past + i``。

直接运行 ``python3 code/02_attention.py`` 会先做自检，再以 JSON 打印演示结果。
"""

from __future__ import annotations

import math
from numbers import Real

__all__ = [
    "softmax",
    "validate_matrix",
    "score_scale",
    "scaled_scores",
    "key_padding",
    "visibility",
    "row_index_visibility",
    "additive_mask",
    "masked_attention",
    "attention",
    "row_steps",
    "unguarded_attention",
    "self_test",
    "run_demo",
]


def _real(x: object, where: str) -> float:
    """边界上把一个数变成 float：之后的计算只见 float，不会有整数溢出或回绕。"""
    # bool 是 int 的子类，但 True/False 不是分数，拒绝它能及早暴露传错参数。
    if not isinstance(x, Real) or isinstance(x, bool):
        raise ValueError(f"{where} 必须是实数，收到 {x!r}")
    try:
        return float(x)
    except OverflowError:
        raise ValueError(f"{where} 超出浮点数的范围，收到 {x!r}") from None


# 集合没有顺序，字符串和字典不是一行数：这些可迭代对象都不当作列表。
_NOT_A_LIST = (str, bytes, dict, set, frozenset)


def _as_list(values: object, name: str) -> list:
    # 在边界上拒绝，而不是在计算中途出错。
    if isinstance(values, _NOT_A_LIST) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name} 必须是有序的列表，收到的是 {type(values).__name__}")
    try:
        return list(values)
    except TypeError as error:  # 例如 0 维 numpy 数组
        raise ValueError(f"{name} 必须是有序的列表：{error}") from None


def _matrix(a: object, name: str) -> list[list[float]]:
    """校验并复制成 float 的列表的列表；之后只用这份副本，生成器也只读一次。"""
    rows = _as_list(a, name)
    if not rows:
        raise ValueError(f"{name} 不能为空：至少需要一行")
    out: list[list[float]] = []
    for i, row in enumerate(rows):
        if isinstance(row, (Real, *_NOT_A_LIST)) or not hasattr(row, "__iter__"):
            raise ValueError(f"{name} 必须是二维矩阵（行的列表），第 {i} 行是 {row!r}")
        cells = _as_list(row, f"{name}[{i}]")
        if not cells:
            raise ValueError(f"{name} 的行不能为空：第 {i} 行没有元素")
        if out and len(cells) != len(out[0]):
            raise ValueError(f"{name} 不是矩形矩阵：第 0 行有 {len(out[0])} 列，第 {i} 行有 {len(cells)} 列")
        values = [_real(x, f"{name}[{i}][{j}]") for j, x in enumerate(cells)]
        for j, x in enumerate(values):
            if not math.isfinite(x):
                raise ValueError(f"{name}[{i}][{j}] 是 {x}：矩阵元素必须有限（不可为 NaN 或 ±∞）")
        out.append(values)
    return out


def _check_count(n: object, name: str, *, minimum: int) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < minimum:
        raise ValueError(f"{name} 必须是不小于 {minimum} 的整数，收到 {n!r}")
    return n


def softmax(values: list[float], temperature: float = 1.0) -> list[float]:
    """把一行分数变成和为 1 的权重；−∞ 表示该候选被屏蔽，权重恰为 0。

    先减去最大值再取指数：结果不变（分子分母同乘一个常数），
    但 exp 不会溢出。温度越小，分数差距被放得越大，权重越集中。

    >>> [round(p, 4) for p in softmax([0, 1, 2])]
    [0.09, 0.2447, 0.6652]
    >>> [round(p, 4) for p in softmax([1000, 1001, 1002])]  # 平移不改变结果
    [0.09, 0.2447, 0.6652]
    >>> [round(p, 4) for p in softmax([0, 1, float("-inf")])]
    [0.2689, 0.7311, 0.0]
    >>> [round(p, 4) for p in softmax([0, 1, 2], temperature=2.0)]
    [0.1863, 0.3072, 0.5065]
    >>> softmax([float("-inf"), float("-inf")])
    Traceback (most recent call last):
    ...
    ValueError: softmax 的全部候选都被屏蔽（全是 −∞），没有可分配的权重
    """
    t = _real(temperature, "temperature")
    if not math.isfinite(t) or t <= 0:
        raise ValueError(f"temperature 必须是正的有限数，收到 {temperature!r}")
    xs = [_real(x, f"values[{j}]") for j, x in enumerate(_as_list(values, "values"))]
    if not xs:
        raise ValueError("values 不能为空：softmax 至少需要一个分数")
    for j, x in enumerate(xs):
        if math.isnan(x) or x == math.inf:
            raise ValueError(f"values[{j}] 是 {x}：分数不可为 NaN 或 +∞（只有 −∞ 表示屏蔽）")
    m = max(xs)
    if m == -math.inf:
        raise ValueError("softmax 的全部候选都被屏蔽（全是 −∞），没有可分配的权重")
    exps = [math.exp((x - m) / t) for x in xs]  # 最大项为 exp(0) = 1
    total = sum(exps)
    return [e / total for e in exps]


def validate_matrix(a: list[list[float]], name: str) -> tuple[int, int]:
    """检查 ``a`` 是非空、矩形、全部有限实数的二维矩阵，返回 ``(行数, 列数)``。

    >>> validate_matrix([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], "Q")
    (3, 2)
    >>> validate_matrix([[1.0, 2.0], [3.0]], "K")
    Traceback (most recent call last):
    ...
    ValueError: K 不是矩形矩阵：第 0 行有 2 列，第 1 行有 1 列
    """
    m = _matrix(a, name)
    return len(m), len(m[0])


def score_scale(d: int) -> float:
    """缩放点积的除数 √d，d 是一个头里 Q、K 的向量维度；本章所有分数都除以它。

    点积是 d 项之和：各分量独立、方差为 1 时，它的方差是 d，除以 √d 后回到 1。

    >>> score_scale(4), score_scale(2)
    (2.0, 1.4142135623730951)
    """
    return math.sqrt(_check_count(d, "d", minimum=1))


def scaled_scores(q: list[list[float]], k: list[list[float]]) -> list[list[float]]:
    """缩放点积分数：``scores[i][j] = q[i]·k[j] / √d``，形状 ``(n_query, n_key)``。

    除以 √d 让分数的尺度不随维度 d 增长，softmax 不至于过早饱和。

    >>> scaled_scores([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    [[0.7071067811865475, 0.0, 0.7071067811865475]]
    """
    return _scores(_matrix(q, "Q"), _matrix(k, "K"))


def _scores(q: list[list[float]], k: list[list[float]]) -> list[list[float]]:
    if len(q[0]) != len(k[0]):
        raise ValueError(f"Q 与 K 的列数（向量维度）必须相同，收到 Q 为 {len(q[0])}、K 为 {len(k[0])}")
    scale = score_scale(len(k[0]))
    scores = [[sum(a * b for a, b in zip(qi, kj)) / scale for kj in k] for qi in q]
    for i, row in enumerate(scores):
        for j, x in enumerate(row):
            if not math.isfinite(x):  # 元素都有限，点积仍可能溢出
                raise ValueError(f"Q[{i}]·K[{j}] 超出浮点数的范围（得到 {x}）：请缩小 Q 或 K 的数值")
    return scores  # (n_query, n_key)


def key_padding(valid_len: int, n_key: int) -> list[bool]:
    """PAD 规则：前 ``valid_len`` 个 Key 是内容，其余只是为了凑齐批次长度的填充。

    >>> key_padding(2, 4)
    [True, True, False, False]
    """
    _check_count(n_key, "n_key", minimum=1)
    _check_count(valid_len, "valid_len", minimum=0)
    if valid_len > n_key:
        raise ValueError(f"valid_len={valid_len} 超过了 Key 总数 n_key={n_key}")
    return [j < valid_len for j in range(n_key)]


def visibility(
    n_query: int,
    n_key: int,
    *,
    causal: bool = True,
    past: int = 0,
    key_valid: list[bool] | None = None,
) -> list[list[bool]]:
    """可见性表：``visible[i][j]`` 为 True 表示第 i 个查询行可以读取第 j 个 Key。

    因果规则按 *绝对位置* 判断：查询行 i 的位置是 ``past + i``，
    它只能读位置不大于 ``past + i`` 的 Key。PAD 规则只看 Key 是否有内容。
    两条规则同时生效时取“与”：两者都允许才可见。

    >>> visibility(3, 3)
    [[True, False, False], [True, True, False], [True, True, True]]
    >>> visibility(2, 5, past=3)
    [[True, True, True, True, False], [True, True, True, True, True]]
    >>> visibility(3, 3, key_valid=[True, True, False])
    [[True, False, False], [True, True, False], [True, True, False]]
    """
    _check_count(n_query, "n_query", minimum=1)
    _check_count(n_key, "n_key", minimum=1)
    _check_count(past, "past", minimum=0)
    if not isinstance(causal, bool):
        raise ValueError(f"causal 必须是 True 或 False，收到 {causal!r}")
    if (causal or past) and n_key != past + n_query:
        raise ValueError(
            f"长度对不上：使用缓存或因果规则时 n_key 必须等于 past + n_query，"
            f"收到 n_key={n_key}、past={past}、n_query={n_query}"
        )
    if key_valid is None:
        valid = [True] * n_key
    else:
        valid = _as_list(key_valid, "key_valid")
        if len(valid) != n_key:
            raise ValueError(f"key_valid 的长度必须等于 n_key={n_key}，收到 {len(valid)}")
        for j, flag in enumerate(valid):
            if not isinstance(flag, bool):
                raise ValueError(f"key_valid[{j}] 必须是 True 或 False，收到 {flag!r}")
    return [
        [valid[j] and (not causal or j <= past + i) for j in range(n_key)]
        for i in range(n_query)  # (n_query, n_key)
    ]


def row_index_visibility(n_query: int, n_key: int) -> list[list[bool]]:
    """故意写错的偏移：把批内行号 i 当成位置，只许读 Key ``0 … i``。

    只用于对照和测试。有缓存时它让新位置看不见大部分历史。

    >>> row_index_visibility(2, 5)
    [[True, False, False, False, False], [True, True, False, False, False]]
    """
    _check_count(n_query, "n_query", minimum=1)
    _check_count(n_key, "n_key", minimum=1)
    return [[j <= i for j in range(n_key)] for i in range(n_query)]


def additive_mask(visible: list[list[bool]]) -> list[list[float]]:
    """把可见性表变成加性 mask：允许处加 0，禁止处加 −∞。

    >>> additive_mask([[True, False], [True, True]])
    [[0.0, -inf], [0.0, 0.0]]
    """
    rows = [_as_list(row, f"visible[{i}]") for i, row in enumerate(_as_list(visible, "visible"))]
    if not rows or not rows[0]:
        raise ValueError("visible 不能为空：至少需要一行、一列")
    for i, row in enumerate(rows):
        if len(row) != len(rows[0]):
            raise ValueError(f"visible 不是矩形表：第 0 行有 {len(rows[0])} 列，第 {i} 行有 {len(row)} 列")
        for j, flag in enumerate(row):
            if not isinstance(flag, bool):
                raise ValueError(f"visible[{i}][{j}] 必须是 True 或 False，收到 {flag!r}")
    return [[0.0 if flag else -math.inf for flag in row] for row in rows]


# 全行都被禁止时的两种明确策略（见 masked_attention 的 empty_row）。
EMPTY_ROW_POLICIES = ("error", "zero")


def _check_policy(empty_row: object) -> str:
    if empty_row not in EMPTY_ROW_POLICIES:
        raise ValueError(f"empty_row 必须是 \"error\" 或 \"zero\"，收到 {empty_row!r}")
    return empty_row


def masked_attention(
    q: list[list[float]],
    k: list[list[float]],
    v: list[list[float]],
    visible: list[list[bool]],
    *,
    empty_row: str = "error",
) -> tuple[list[list[float]], list[list[float]]]:
    """按给定可见性表计算注意力，返回 ``(weights, outputs)``。

    分数加上加性 mask 后逐行做 softmax。没有任何可见 Key 的行（例如左侧 PAD
    的查询行）不能做普通 softmax，``empty_row`` 明确规定怎么办：

    - ``"error"``（默认）：报错并指出是哪一行；
    - ``"zero"``：这一行的权重全为 0、输出全为 0（“安全 softmax”的做法）。
      这样的行不读任何 Value，计算损失时必须把它排除。

    >>> w, out = masked_attention([[0.0]], [[0.0], [0.0]], [[10.0], [30.0]],
    ...                           [[True, True]])
    >>> w, out
    ([[0.5, 0.5]], [[20.0]])
    >>> masked_attention([[0.0]], [[0.0]], [[10.0]], [[False]])
    Traceback (most recent call last):
    ...
    ValueError: 第 0 个查询行没有任何可见的 Key，不能对它做普通 softmax；可用 empty_row="zero" 让这一行输出 0
    >>> masked_attention([[0.0]], [[0.0]], [[10.0]], [[False]], empty_row="zero")
    ([[0.0]], [[0.0]])
    """
    policy = _check_policy(empty_row)
    return _attend(_matrix(q, "Q"), _matrix(k, "K"), _matrix(v, "V"), visible, policy)


def _attend(q, k, v, visible, empty_row) -> tuple[list[list[float]], list[list[float]]]:
    # q, k, v 已由 _matrix 校验并复制；这里只检查它们之间、以及与可见性表之间的形状。
    n_query, n_key, d_v = len(q), len(k), len(v[0])
    if len(v) != n_key:
        raise ValueError(f"V 的行数必须等于 K 的行数，收到 V 为 {len(v)}、K 为 {n_key}")
    mask = additive_mask(visible)  # (n_query, n_key)
    if len(mask) != n_query or len(mask[0]) != n_key:
        raise ValueError(
            f"visible 的形状必须是 (n_query, n_key) = ({n_query}, {n_key})，"
            f"收到 ({len(mask)}, {len(mask[0])})"
        )
    scores = _scores(q, k)  # (n_query, n_key)
    weights, outputs = [], []
    for i in range(n_query):
        if all(m == -math.inf for m in mask[i]):
            # 全行被屏蔽时 softmax 的分母为 0（0/0）；调用者必须明确选一种策略。
            if empty_row == "error":
                raise ValueError(
                    f"第 {i} 个查询行没有任何可见的 Key，不能对它做普通 softmax；"
                    "可用 empty_row=\"zero\" 让这一行输出 0"
                )
            weights.append([0.0] * n_key)  # 不读任何 Key：权重全 0，输出全 0
            outputs.append([0.0] * d_v)
            continue
        row = softmax([s + m for s, m in zip(scores[i], mask[i])])
        weights.append(row)
        outputs.append([sum(row[j] * v[j][c] for j in range(n_key)) for c in range(d_v)])
    return weights, outputs  # (n_query, n_key), (n_query, d_v)


def attention(
    q: list[list[float]],
    k: list[list[float]],
    v: list[list[float]],
    causal: bool = True,
    *,
    past: int = 0,
    key_valid: list[bool] | None = None,
    empty_row: str = "error",
) -> tuple[list[list[float]], list[list[float]]]:
    """缩放点积注意力，返回 ``(weights, outputs)``。

    ``past`` 是缓存里已有的位置数：新查询行 i 的绝对位置是 ``past + i``，
    因此 Key 的个数必须等于 ``past + n_query``。``key_valid`` 标出哪些 Key
    是内容（False 是 PAD）。``empty_row`` 与 ``masked_attention`` 相同。

    >>> q = k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> w, out = attention(q, k, [[10.0], [20.0], [30.0]])
    >>> [[round(x, 4) for x in row] for row in w]
    [[1.0, 0.0, 0.0], [0.3302, 0.6698, 0.0], [0.2483, 0.2483, 0.5035]]
    >>> [round(row[0], 4) for row in out]
    [10.0, 16.6976, 22.5523]
    >>> w, out = attention(q, k, [[10.0], [20.0], [30.0]], key_valid=[False, True, True],
    ...                    empty_row="zero")  # 左侧 PAD：第 0 行无 Key 可读
    >>> [round(row[0], 4) for row in out]
    [0.0, 20.0, 26.6976]
    >>> attention([[1.0, 0.0]], q, [[1.0]] * 3)
    Traceback (most recent call last):
    ...
    ValueError: 长度对不上：使用缓存或因果规则时 n_key 必须等于 past + n_query，收到 n_key=3、past=0、n_query=1
    """
    policy = _check_policy(empty_row)
    q, k, v = _matrix(q, "Q"), _matrix(k, "K"), _matrix(v, "V")
    visible = visibility(len(q), len(k), causal=causal, past=past, key_valid=key_valid)
    return _attend(q, k, v, visible, policy)


def row_steps(
    query: list[float],
    k: list[list[float]],
    v: list[list[float]],
    visible_row: list[bool],
) -> dict:
    """一个查询行的全部中间值，供纸笔逐步核对（与 ``masked_attention`` 算的是同一件事）。

    返回的字典依次是：``products``（每个 Key 的逐项乘积 q[c]·k[j][c]）、``dots``
    （点积）、``scale``（√d）、``scaled``（点积 ÷ √d）、``masked``（禁止处为 −∞）、
    ``max``（可见分数的最大值）、``shifted``（减去最大值）、``exps``（取指数）、
    ``total``（指数之和）、``weights``、``weighted``（权重 × V 的每一项）和 ``output``。

    >>> s = row_steps([1.0, 1.0], [[1.0, 0.0], [0.0, 1.0]], [[10.0], [30.0]], [True, False])
    >>> s["products"], s["dots"], s["masked"][1], s["exps"], s["weights"], s["output"]
    ([[1.0, 0.0], [0.0, 1.0]], [1.0, 1.0], -inf, [1.0, 0.0], [1.0, 0.0], [10.0])
    >>> row_steps([1.0], [[1.0]], [[1.0]], [False])
    Traceback (most recent call last):
    ...
    ValueError: visible_row 没有任何可见的 Key：这一行没有可手算的 softmax
    """
    qi = _matrix([_as_list(query, "query")], "query")[0]
    k, v = _matrix(k, "K"), _matrix(v, "V")
    (mask,) = additive_mask([visible_row])
    if len(mask) != len(k) or len(v) != len(k):
        raise ValueError(f"visible_row、K、V 的长度必须相同，收到 {len(mask)}、{len(k)}、{len(v)}")
    if all(m == -math.inf for m in mask):
        raise ValueError("visible_row 没有任何可见的 Key：这一行没有可手算的 softmax")
    (scaled,) = _scores([qi], k)
    products = [[a * b for a, b in zip(qi, kj)] for kj in k]  # (n_key, d)
    dots = [sum(p) for p in products]
    masked = [s + m for s, m in zip(scaled, mask)]
    top = max(masked)
    shifted = [x - top for x in masked]  # 最大项变成 0，exp 不会溢出
    exps = [math.exp(x) for x in shifted]  # 禁止处 exp(−∞) = 0
    total = sum(exps)
    weights = [e / total for e in exps]
    weighted = [[w * x for x in vj] for w, vj in zip(weights, v)]  # (n_key, d_v)
    output = [sum(col) for col in zip(*weighted)]
    return {
        "products": products, "dots": dots, "scale": score_scale(len(qi)), "scaled": scaled,
        "masked": masked, "max": top, "shifted": shifted, "exps": exps, "total": total,
        "weights": weights, "weighted": weighted, "output": output,
    }


def unguarded_attention(
    q: list[list[float]],
    k: list[list[float]],
    v: list[list[float]],
    visible: list[list[bool]],
    *,
    fill: float = -math.inf,
) -> tuple[list[list[float]], list[list[float]]]:
    """只为演示：不加保护的掩码注意力，全屏蔽的行会得到 NaN 或读到被禁止的 Key。

    照许多代码库的写法，把禁止格子的分数 *换成* ``fill``，再做普通的 softmax
    （减最大值、取指数、除以总和），不检查整行是否都被禁止。于是：

    - ``fill = −∞``：全屏蔽行是 (−∞) − (−∞) = NaN，权重和输出都是 NaN；
    - ``fill`` 是很大的有限负数（如 −1e9）：全屏蔽行的分数全相同，权重平均分给
      被禁止的 Key，输出就是它们 Value 的平均。

    本书正文用它展示这两种后果；正式计算请用 ``masked_attention``。

    >>> w, out = unguarded_attention([[0.0]], [[0.0], [0.0]], [[10.0], [30.0]], [[False, False]])
    >>> w, out
    ([[nan, nan]], [[nan]])
    >>> unguarded_attention([[0.0]], [[0.0], [0.0]], [[10.0], [30.0]], [[False, False]], fill=-1e9)
    ([[0.5, 0.5]], [[20.0]])
    """
    q, k, v = _matrix(q, "Q"), _matrix(k, "K"), _matrix(v, "V")
    fill = _real(fill, "fill")
    if math.isnan(fill) or fill == math.inf:
        raise ValueError(f"fill 必须是负数或 −∞，收到 {fill}")
    mask = additive_mask(visible)
    if len(mask) != len(q) or len(mask[0]) != len(k) or len(v) != len(k):
        raise ValueError("visible 的形状必须是 (n_query, n_key)，V 的行数必须等于 K 的行数")
    scores = _scores(q, k)
    weights, outputs = [], []
    for srow, mrow in zip(scores, mask):
        row = [s if m == 0.0 else fill for s, m in zip(srow, mrow)]  # masked_fill 的写法
        top = max(row)
        exps = [math.exp(x - top) for x in row]  # 全是 −∞ 时 x − top 是 NaN，exp(NaN) 仍是 NaN
        total = sum(exps)
        w = [e / total for e in exps]
        weights.append(w)
        outputs.append([sum(wj * vj[c] for wj, vj in zip(w, v)) for c in range(len(v[0]))])
    return weights, outputs



def _check(condition: bool, message: str) -> None:
    # 不用 assert：python -O 会删掉 assert，自检就形同虚设。
    if not condition:
        raise AssertionError(message)


# 演示与自检共用的构造数据：三个二维向量，V 的值一眼可辨。
DEMO_Q = DEMO_K = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
DEMO_V = [[10.0], [20.0], [30.0]]


def self_test() -> None:
    """快速自检：稳定性、无未来泄漏、缓存偏移与 PAD。出错时抛 AssertionError。

    >>> self_test()
    """
    _check(abs(sum(softmax([1000, 1001, 1002])) - 1) < 1e-12, "大分数下 softmax 之和应为 1")
    v_future = [[10.0], [20.0], [9999.0]]
    w, a = attention(DEMO_Q, DEMO_K, DEMO_V)
    _, b = attention(DEMO_Q, DEMO_K, v_future)
    _check(a[:2] == b[:2], "改动未来位置的 Value 不应影响前两个位置")
    _check(a[2] != b[2], "最后一个位置可以读自己，改动它的 Value 应当生效")
    _check(w[0][1:] == [0.0, 0.0] and w[1][2] == 0.0, "被屏蔽的权重必须恰为 0")
    # 缓存：只算最后两行（past=1）必须与整段计算的最后两行一致。
    _, full = attention(DEMO_Q, DEMO_K, DEMO_V)
    _, cached = attention(DEMO_Q[1:], DEMO_K, DEMO_V, past=1)
    _check(cached == full[1:], "带缓存的结果必须与整段重算一致")
    # PAD：最后一个 Key 是填充时，它的 Value 无论是多少都不影响输出。
    pad = [True, True, False]
    _, c = attention(DEMO_Q[:2], DEMO_K, DEMO_V, causal=False, key_valid=pad)
    _, d = attention(DEMO_Q[:2], DEMO_K, v_future, causal=False, key_valid=pad)
    _check(c == d, "PAD 的 Value 不应影响任何输出")
    # 整行被屏蔽（左侧 PAD 的第 0 行）：默认报错，明确选 "zero" 时这一行输出 0，其余行不变。
    left = [False, True, True]
    _, z = attention(DEMO_Q, DEMO_K, DEMO_V, key_valid=left, empty_row="zero")
    _, y = attention(DEMO_Q[1:], DEMO_K, DEMO_V, past=1, key_valid=left)
    _check(z[0] == [0.0] and z[1:] == y, "empty_row=\"zero\" 只应把整行被屏蔽的那一行置零")


def run_demo() -> dict:
    """演示结果：softmax([0,1,2])、因果权重与输出、缓存偏移、PAD。

    >>> demo = run_demo()
    >>> [round(p, 4) for p in demo["softmax_0_1_2"]], round(demo["加权10_20_30"], 4)
    ([0.09, 0.2447, 0.6652], 25.7521)
    >>> demo["PAD_末位无效_权重"][2]
    [0.5, 0.5, 0.0]
    """
    p = softmax([0, 1, 2])
    weights, outputs = attention(DEMO_Q, DEMO_K, DEMO_V)
    cached_weights, cached_outputs = attention(DEMO_Q[1:], DEMO_K, DEMO_V, past=1)
    pad_weights, _ = attention(DEMO_Q, DEMO_K, DEMO_V, key_valid=[True, True, False])
    return {
        "性质": "人工构造的小矩阵，没有训练过的模型",
        "softmax_0_1_2": p,
        "加权10_20_30": sum(pj * x for pj, x in zip(p, [10, 20, 30])),
        "因果权重": weights,
        "输出": outputs,
        "缓存_past1_权重": cached_weights,
        "缓存_past1_输出": cached_outputs,
        "PAD_末位无效_权重": pad_weights,
    }


if __name__ == "__main__":
    import json

    self_test()
    print(json.dumps(run_demo(), ensure_ascii=False, indent=2))
