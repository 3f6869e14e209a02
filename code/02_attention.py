"""第 2 章教学代码：可手算的小矩阵注意力、稳定 softmax 与可见性表（mask）。

数据都是人工构造的小矩阵，没有训练过的模型；只用标准库，每一步都能用纸笔复算。运行本文件：
先自检，再以 JSON 打印演示结果。

形状：``q`` (n_query, d)、``k`` (n_key, d)、``v`` (n_key, d_v)、``visible`` (n_query, n_key)，
True 表示允许读；``past`` 是本批之前的位置数（没有丢掉旧键值时，就是 KV 缓存里的位置数），
查询行 i 的绝对位置是 ``past + i``。

先读前半：softmax、分数、可见性表与注意力。后半是边界上的输入检查（``real``、``as_vector``、
``as_matrix``、``check_count``、``flags``）与几个矩阵小工具（``matmul``、``max_abs_diff``、
``print_json``）；本章其余的 ``02_*.py`` 也从这里导入它们。
"""

from __future__ import annotations

import json
import math
from numbers import Real

# 可见性表是 n × n 的 Python 列表：4096 × 4096 已是一千六百多万格，再大就该换 numpy 了。
MAX_POSITIONS = 4096
# 整行都被禁止时的两种明确策略：报错，或让这一行输出 0。
EMPTY_ROW_POLICIES = ("error", "zero")


# -- 注意力：softmax、分数、可见性表，再按权重混合 V -----------------------------------------
def softmax(values: list[float], temperature: float = 1.0) -> list[float]:
    """把一行分数变成和为 1 的权重；−∞ 表示该候选被屏蔽，权重恰为 0。

    先减去最大值再取指数：结果不变（分子分母同乘一个常数），exp 却不会溢出。
    >>> [round(p, 4) for p in softmax([0, 1, 2])]
    [0.09, 0.2447, 0.6652]
    >>> [round(p, 4) for p in softmax([1000, 1001, 1002])]  # 平移不改变结果
    [0.09, 0.2447, 0.6652]
    >>> [round(p, 4) for p in softmax([0, 1, float("-inf")])]
    [0.2689, 0.7311, 0.0]
    >>> [round(p, 4) for p in softmax([0, 1, 2], temperature=2.0)]
    [0.1863, 0.3072, 0.5065]
    """
    t = real(temperature, "temperature")
    if not math.isfinite(t) or t <= 0:
        raise ValueError(f"temperature 必须是正的有限数，收到 {temperature!r}")
    xs = as_vector(values, "values", masked=True)
    m = max(xs)
    if m == -math.inf:  # 分母会是 0
        raise ValueError("softmax 的全部候选都被屏蔽（全是 −∞），没有可分配的权重")
    exps = [math.exp((x - m) / t) for x in xs]  # 最大项为 exp(0) = 1
    total = sum(exps)
    return [e / total for e in exps]


def score_scale(d: int) -> float:
    """缩放点积的除数 √d（d 是一个头里 Q、K 的维度）：d 项独立、方差为 1 的乘积之和，方差是 d。
    >>> score_scale(4)
    2.0
    >>> score_scale(2)
    1.4142135623730951
    """
    return math.sqrt(check_count(d, "d"))


def scaled_scores(q: list[list[float]], k: list[list[float]]) -> list[list[float]]:
    """缩放点积分数 ``scores[i][j] = q[i]·k[j] / √d``，形状 ``(n_query, n_key)``。
    >>> scaled_scores([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    [[0.7071067811865475, 0.0, 0.7071067811865475]]
    """
    q = as_matrix(q, "Q")
    k = as_matrix(k, "K")
    if len(q[0]) != len(k[0]):
        raise ValueError(f"Q 与 K 的列数（向量维度）必须相同，收到 {len(q[0])} 与 {len(k[0])}")
    scale = score_scale(len(k[0]))
    scores = [[sum(a * b for a, b in zip(qi, kj)) / scale for kj in k] for qi in q]
    _check_finite_scores(scores)  # 元素都有限，点积仍可能溢出
    return scores  # (n_query, n_key)


def key_padding(valid_len: int, n_key: int) -> list[bool]:
    """PAD 规则：前 ``valid_len`` 个 Key 是内容，其余只为凑齐批次长度。
    >>> key_padding(2, 4)
    [True, True, False, False]
    """
    check_count(n_key, "n_key", maximum=MAX_POSITIONS)
    check_count(valid_len, "valid_len", minimum=0, maximum=n_key, why="内容不会多于 n_key 个 Key")
    return [j < valid_len for j in range(n_key)]


def visibility(
    n_query: int,
    n_key: int,
    *,
    causal: bool = True,
    past: int = 0,
    key_valid: list[bool] | None = None,
) -> list[list[bool]]:
    """可见性表：``visible[i][j]`` 为 True 表示第 i 个查询行可以读第 j 个 Key。

    因果规则按 *绝对位置* 判断：查询行 i 的位置是 ``past + i``，只能读位置不大于它的 Key；
    PAD 规则只看 Key 是否有内容。两条规则同时生效时取“与”。
    >>> visibility(3, 3)
    [[True, False, False], [True, True, False], [True, True, True]]
    >>> visibility(2, 5, past=3)
    [[True, True, True, True, False], [True, True, True, True, True]]
    >>> visibility(3, 3, key_valid=[True, True, False])
    [[True, False, False], [True, True, False], [True, True, False]]
    """
    check_count(n_query, "n_query", maximum=MAX_POSITIONS)
    check_count(n_key, "n_key", maximum=MAX_POSITIONS)
    check_count(past, "past", minimum=0)
    if not isinstance(causal, bool):
        raise ValueError(f"causal 必须是 True 或 False，收到 {causal!r}")
    if (causal or past) and n_key != past + n_query:
        raise ValueError(
            "长度对不上：使用缓存或因果规则时 n_key 必须等于 past + n_query，"
            f"收到 n_key={n_key}、past={past}、n_query={n_query}"
        )
    valid = [True] * n_key if key_valid is None else flags(key_valid, "key_valid", n_key)
    return [
        [valid[j] and (not causal or j <= past + i) for j in range(n_key)] for i in range(n_query)
    ]  # (n_query, n_key)


def row_index_visibility(n_query: int, n_key: int) -> list[list[bool]]:
    """故意写错的偏移：把批内行号 i 当成位置，只许读 Key ``0 … i``（只用于对照）。
    >>> row_index_visibility(2, 5)
    [[True, False, False, False, False], [True, True, False, False, False]]
    """
    check_count(n_query, "n_query", maximum=MAX_POSITIONS)
    check_count(n_key, "n_key", maximum=MAX_POSITIONS)
    return [[j <= i for j in range(n_key)] for i in range(n_query)]


def additive_mask(visible: list[list[bool]]) -> list[list[float]]:
    """把可见性表变成加性 mask：允许处加 0，禁止处加 −∞。
    >>> additive_mask([[True, False], [True, True]])
    [[0.0, -inf], [0.0, 0.0]]
    """
    rows = [flags(row, f"visible[{i}]") for i, row in enumerate(as_list(visible, "visible"))]
    if not rows or not rows[0] or any(len(row) != len(rows[0]) for row in rows):
        raise ValueError(f"visible 必须是非空的矩形表，收到各行的长度 {[len(row) for row in rows]}")
    return [[0.0 if flag else -math.inf for flag in row] for row in rows]


def masked_attention(q, k, v, visible, *, empty_row: str = "error"):
    """按给定可见性表计算注意力，返回 ``(weights, outputs)``。

    没有可见 Key 的行（如左侧 PAD 的查询行）不能做普通 softmax：``empty_row="error"``（默认）
    报错并指出是哪一行；``"zero"`` 让它的权重和输出全为 0（“安全 softmax”），算损失时须排除它。
    >>> masked_attention([[0.0]], [[0.0], [0.0]], [[10.0], [30.0]], [[True, True]])
    ([[0.5, 0.5]], [[20.0]])
    >>> masked_attention([[0.0]], [[0.0]], [[10.0]], [[False]], empty_row="zero")
    ([[0.0]], [[0.0]])
    """
    _check_policy(empty_row)
    q, k, v, mask = _attention_inputs(q, k, v, visible)
    scores = scaled_scores(q, k)  # (n_query, n_key)
    weights = []
    for i, (score_row, mask_row) in enumerate(zip(scores, mask)):
        if all(m == -math.inf for m in mask_row):  # 分母会是 0：0/0 没有意义，必须选一种策略
            if empty_row == "error":
                raise ValueError(
                    f"第 {i} 个查询行没有任何可见的 Key，不能对它做普通 softmax；"
                    '可用 empty_row="zero" 让这一行输出 0'
                )
            weights.append([0.0] * len(mask_row))  # 一个 Value 也不读，输出也就全是 0
        else:
            weights.append(softmax([s + m for s, m in zip(score_row, mask_row)]))
    outputs = matmul(weights, v)  # (n_query, n_key) @ (n_key, d_v) → (n_query, d_v)
    return weights, outputs


def attention(
    q,
    k,
    v,
    causal: bool = True,
    *,
    past: int = 0,
    key_valid: list[bool] | None = None,
    empty_row: str = "error",
):
    """缩放点积注意力，返回 ``(weights, outputs)``。

    新查询行 i 的绝对位置是 ``past + i``，所以 Key 的个数必须等于 ``past + n_query``；
    ``key_valid`` 标出哪些 Key 是内容（False 是 PAD）；``empty_row`` 同 ``masked_attention``。
    >>> q = k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> w, out = attention(q, k, [[10.0], [20.0], [30.0]])
    >>> [[round(x, 4) for x in row] for row in w]
    [[1.0, 0.0, 0.0], [0.3302, 0.6698, 0.0], [0.2483, 0.2483, 0.5035]]
    >>> [round(row[0], 4) for row in out]
    [10.0, 16.6976, 22.5523]
    """
    q = as_matrix(q, "Q")
    k = as_matrix(k, "K")
    visible = visibility(len(q), len(k), causal=causal, past=past, key_valid=key_valid)
    return masked_attention(q, k, v, visible, empty_row=empty_row)


def row_steps(query: list[float], k, v, visible_row: list[bool]) -> dict:
    """一个查询行的全部中间值，供纸笔逐步核对（与 ``masked_attention`` 算的是同一件事）。
    >>> s = row_steps([1.0, 1.0], [[1.0, 0.0], [0.0, 1.0]], [[10.0], [30.0]], [True, False])
    >>> s["products"]
    [[1.0, 0.0], [0.0, 1.0]]
    >>> s["dots"]
    [1.0, 1.0]
    >>> s["masked"]
    [0.7071067811865475, -inf]
    >>> s["exps"]
    [1.0, 0.0]
    >>> s["weights"]
    [1.0, 0.0]
    >>> s["output"]
    [10.0]
    """
    qi = as_vector(query, "query")
    k = as_matrix(k, "K")
    v = as_matrix(v, "V")
    mask = [0.0 if flag else -math.inf for flag in flags(visible_row, "visible_row")]
    if len(mask) != len(k) or len(v) != len(k):
        raise ValueError(f"visible_row、K、V 的长度必须相同，收到 {len(mask)}、{len(k)}、{len(v)}")
    if all(m == -math.inf for m in mask):
        raise ValueError("visible_row 没有任何可见的 Key：这一行没有可手算的 softmax")
    scaled = scaled_scores([qi], k)[0]  # (n_key,)
    products = [[a * b for a, b in zip(qi, kj)] for kj in k]  # (n_key, d)
    masked = [s + m for s, m in zip(scaled, mask)]
    top = max(masked)
    shifted = [x - top for x in masked]  # 最大项变成 0，exp 不会溢出
    exps = [math.exp(x) for x in shifted]  # 禁止处 exp(−∞) = 0
    weights = [e / sum(exps) for e in exps]
    weighted = [[w * x for x in vj] for w, vj in zip(weights, v)]  # (n_key, d_v)
    return {
        "products": products,
        "dots": [sum(p) for p in products],
        "scale": score_scale(len(qi)),
        "scaled": scaled,
        "masked": masked,
        "max": top,
        "shifted": shifted,
        "exps": exps,
        "total": sum(exps),
        "weights": weights,
        "weighted": weighted,
        "output": [sum(col) for col in zip(*weighted)],  # (d_v,)
    }


def unguarded_attention(q, k, v, visible, *, fill: float = -math.inf):
    """只为演示：许多代码库的写法，把禁止格子的分数 *换成* ``fill`` 再做普通 softmax，不检查整行。

    ``fill = −∞`` 时全屏蔽行是 (−∞) − (−∞) = NaN；``fill`` 是很大的有限负数（如 −1e9）时，
    全屏蔽行的分数全相同，权重平均分给被禁止的 Key。正式计算请用 ``masked_attention``。
    >>> unguarded_attention([[0.0]], [[0.0], [0.0]], [[10.0], [30.0]], [[False, False]])
    ([[nan, nan]], [[nan]])
    >>> unguarded_attention([[0.0]], [[0.0], [0.0]], [[10.0], [30.0]], [[False, False]], fill=-1e9)
    ([[0.5, 0.5]], [[20.0]])
    """
    fill = real(fill, "fill")
    if math.isnan(fill) or fill >= 0:
        raise ValueError(f"fill 必须是负数或 −∞，收到 {fill}")
    q, k, v, mask = _attention_inputs(q, k, v, visible)
    scores = scaled_scores(q, k)  # (n_query, n_key)
    weights = []
    for score_row, mask_row in zip(scores, mask):
        row = [s if m == 0.0 else fill for s, m in zip(score_row, mask_row)]  # masked_fill 的写法
        exps = [math.exp(x - max(row)) for x in row]  # 全是 −∞ 时 (−∞) − (−∞) 是 NaN
        weights.append([e / sum(exps) for e in exps])
    # 不经 matmul：它拒绝 NaN，而这里正要让读者看见 NaN。
    outputs = [[sum(w * x for w, x in zip(row, col)) for col in zip(*v)] for row in weights]
    return weights, outputs  # (n_query, n_key), (n_query, d_v)


# -- 边界上的检查：之后的计算只见 float 的列表（其余 02_*.py 也用它们） --------------------------
# 无序的集合、字符串和字典都不是“一行数”。
_NOT_A_LIST = (str, bytes, dict, set, frozenset)


def real(x: object, name: str) -> float:
    """把一个实数变成 float，拒绝 bool、字符串和溢出；错误信息写出 ``name``。
    >>> real(3, "d")
    3.0
    >>> real(True, "d")
    Traceback (most recent call last):
    ...
    ValueError: d 必须是实数，收到 True
    """
    if type(x) is float:  # 最常见的情形，先放行：下面对抽象类 Real 的检查慢得多
        return x
    if not isinstance(x, Real) or isinstance(x, bool):  # True 是 int，却不是分数
        raise ValueError(f"{name} 必须是实数，收到 {x!r}")
    try:
        return float(x)
    except OverflowError:
        raise ValueError(f"{name} 超出浮点数的范围，收到 {x!r}") from None


def as_list(values: object, name: str) -> list:
    """有序的一串值复制成列表（生成器也只读一次）；集合、字符串、字典不算。
    >>> as_list((x for x in "ab"), "xs")
    ['a', 'b']
    """
    if isinstance(values, _NOT_A_LIST) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name} 必须是有序的列表，收到的是 {type(values).__name__}")
    try:
        return list(values)
    except TypeError as error:  # 例如 0 维 numpy 数组
        raise ValueError(f"{name} 必须是有序的列表：{error}") from None


def as_vector(x: object, name: str, *, masked: bool = False) -> list[float]:
    """非空的一行实数，复制成 float 的列表：须有限；``masked=True`` 时另许 −∞（被屏蔽）。
    >>> as_vector((1, 2.5), "q")
    [1.0, 2.5]
    >>> as_vector([1.0, float("nan")], "q")
    Traceback (most recent call last):
    ...
    ValueError: q[1] 是 nan：必须是有限数（不可为 NaN 或 ±∞）
    """
    cells = [real(v, f"{name}[{j}]") for j, v in enumerate(as_list(x, name))]
    if not cells:
        raise ValueError(f"{name} 不能为空：至少需要一个数")
    for j, v in enumerate(cells):
        if not (math.isfinite(v) or masked and v == -math.inf):
            allowed = "有限数或 −∞（只有 −∞ 表示屏蔽）" if masked else "有限数（不可为 NaN 或 ±∞）"
            raise ValueError(f"{name}[{j}] 是 {v}：必须是{allowed}")
    return cells


def as_matrix(a: object, name: str) -> list[list[float]]:
    """非空、矩形、全部有限的实数矩阵，逐行复制成 float 的列表。
    >>> as_matrix([[1, 0]], "Q")
    [[1.0, 0.0]]
    >>> as_matrix([[1.0, 2.0], [3.0]], "K")
    Traceback (most recent call last):
    ...
    ValueError: K 不是矩形矩阵：各行的列数是 [2, 1]
    """
    rows = as_list(a, name)
    if not rows:
        raise ValueError(f"{name} 不能为空：至少需要一行")
    out = []
    for i, row in enumerate(rows):
        if isinstance(row, (Real, *_NOT_A_LIST)) or not hasattr(row, "__iter__"):
            raise ValueError(f"{name} 必须是二维矩阵（行的列表），第 {i} 行是 {row!r}")
        out.append(as_vector(row, f"{name}[{i}]"))
    if any(len(row) != len(out[0]) for row in out):
        raise ValueError(f"{name} 不是矩形矩阵：各行的列数是 {[len(row) for row in out]}")
    return out


def check_count(
    n: object,
    name: str,
    *,
    minimum: int = 1,
    maximum: int | None = None,
    why: str = "这里的表是纯 Python 列表",
) -> int:
    """一个计数（维度、头数、位置数）：``minimum`` 到 ``maximum`` 之间的整数；``why`` 说明上限。
    >>> check_count(0, "n", minimum=0)
    0
    >>> check_count(5000, "n_key", maximum=4096)
    Traceback (most recent call last):
    ...
    ValueError: n_key 不能超过 4096（这里的表是纯 Python 列表），收到 5000
    """
    if not _is_int(minimum) or not (maximum is None or _is_int(maximum) and maximum >= minimum):
        raise ValueError(f"minimum={minimum!r}、maximum={maximum!r}：须为整数且 minimum ≤ maximum")
    if not _is_int(n) or n < minimum:
        raise ValueError(f"{name} 必须是不小于 {minimum} 的整数，收到 {n!r}")
    if maximum is not None and n > maximum:
        raise ValueError(f"{name} 不能超过 {maximum}（{why}），收到 {n}")
    return n


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)  # True 是 int，却不是计数


def flags(values: object, name: str, n_key: int | None = None) -> list[bool]:
    """一串 True/False（PAD 标记、可见性表的一行），可要求长度为 ``n_key``。
    >>> flags([True], "pad")
    [True]
    >>> flags([True, 1], "pad")
    Traceback (most recent call last):
    ...
    ValueError: pad[1] 必须是 True 或 False，收到 1
    """
    out = as_list(values, name)
    if n_key is not None and len(out) != n_key:
        raise ValueError(f"{name} 的长度必须等于 n_key={n_key}，收到 {len(out)}")
    for j, flag in enumerate(out):
        if not isinstance(flag, bool):
            raise ValueError(f"{name}[{j}] 必须是 True 或 False，收到 {flag!r}")
    return out


def _check_policy(empty_row: object) -> None:
    if empty_row not in EMPTY_ROW_POLICIES:
        raise ValueError(f'empty_row 必须是 "error" 或 "zero"，收到 {empty_row!r}')


def _attention_inputs(q, k, v, visible):
    """检查 Q、K、V 与可见性表的形状，返回 float 的 Q、K、V 与加性 mask (n_query, n_key)。"""
    q = as_matrix(q, "Q")
    k = as_matrix(k, "K")
    v = as_matrix(v, "V")
    if len(v) != len(k):
        raise ValueError(f"V 的行数必须等于 K 的行数，收到 V 为 {len(v)}、K 为 {len(k)}")
    mask = additive_mask(visible)
    if len(mask) != len(q) or len(mask[0]) != len(k):
        raise ValueError(f"visible 的形状应为 {len(q)}×{len(k)}，收到 {len(mask)}×{len(mask[0])}")
    return q, k, v, mask


def _check_finite_scores(scores: list[list[float]]) -> None:
    for i, row in enumerate(scores):
        for j, x in enumerate(row):
            if not math.isfinite(x):
                raise ValueError(f"Q[{i}]·K[{j}] 超出浮点数的范围：请缩小 Q 或 K 的数值")


# -- 矩阵小工具（其余 02_*.py 也用它们） -------------------------------------------------------
def check(condition: bool, message: str) -> None:
    """自检用的断言：不用 assert，因为 ``python -O`` 会删掉 assert。
    >>> check(True, "不会报错")
    >>> check(1 + 1 == 3, "算错了")
    Traceback (most recent call last):
    ...
    AssertionError: 算错了
    """
    if not condition:
        raise AssertionError(message)


def matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    """矩阵乘积 ``a @ b``；本章的投影都写成“行向量乘权重”：``x @ W``。
    >>> matmul([[1.0, 2.0]], [[1.0], [1.0]])
    [[3.0]]
    """
    a = as_matrix(a, "a")
    b = as_matrix(b, "b")
    if len(a[0]) != len(b):
        raise ValueError(f"a 的列数 {len(a[0])} 必须等于 b 的行数 {len(b)}")
    return [[sum(x * y for x, y in zip(row, col)) for col in zip(*b)] for row in a]  # (n, m)


def max_abs_diff(a: list[list[float]], b: list[list[float]]) -> float:
    """两个同形矩阵逐格差的绝对值的最大者：本章比较两种算法用的唯一尺子。
    >>> max_abs_diff([[1.0]], [[1.5]])
    0.5
    """
    a = as_matrix(a, "a")
    b = as_matrix(b, "b")
    if len(a) != len(b) or len(a[0]) != len(b[0]):
        raise ValueError(f"两个矩阵形状不同：{len(a)}×{len(a[0])} 与 {len(b)}×{len(b[0])}")
    return max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def print_json(result: dict) -> None:
    """以 JSON 打印演示结果：一个键一行，数组不拆开（各 02_*.py 运行时都这样打印）。
    >>> print_json({"权重": [0.5, 0.5]})
    {
      "权重": [0.5, 0.5]
    }
    """
    if not isinstance(result, dict):
        raise ValueError(f"result 必须是字典，收到 {type(result).__name__}")

    def dumps(x):
        # 中文照原样写出
        return json.dumps(x, ensure_ascii=False)

    print("{\n" + ",\n".join(f"  {dumps(key)}: {dumps(x)}" for key, x in result.items()) + "\n}")


# -- 自检与演示 ------------------------------------------------------------------------------------
DEMO_Q = DEMO_K = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]  # 三个二维向量
DEMO_V = [[10.0], [20.0], [30.0]]  # V 的值一眼可辨：输出混合了谁，一看便知


def self_test() -> None:
    """快速自检：稳定性、无未来泄漏、缓存偏移与 PAD。出错时抛 AssertionError。"""
    check(abs(sum(softmax([1000, 1001, 1002])) - 1) < 1e-12, "大分数下 softmax 之和应为 1")
    v_future = [[10.0], [20.0], [9999.0]]
    w, a = attention(DEMO_Q, DEMO_K, DEMO_V)
    _, b = attention(DEMO_Q, DEMO_K, v_future)
    check(a[:2] == b[:2] and a[2] != b[2], "改动未来位置的 Value 只应改变最后一个位置的输出")
    check(w[0][1:] == [0.0, 0.0] and w[1][2] == 0.0, "被屏蔽的权重必须恰为 0")
    _, cached = attention(DEMO_Q[1:], DEMO_K, DEMO_V, past=1)  # 只算最后两行
    check(cached == a[1:], "带缓存的结果必须与整段重算一致")
    pad = {"causal": False, "key_valid": [True, True, False]}  # 最后一个 Key 是填充
    _, c = attention(DEMO_Q[:2], DEMO_K, DEMO_V, **pad)
    _, c_future = attention(DEMO_Q[:2], DEMO_K, v_future, **pad)
    check(c == c_future, "PAD 的 Value 不应影响任何输出")
    left = [False, True, True]  # 左侧 PAD：第 0 行无 Key 可读，"zero" 只把这一行置零
    _, z = attention(DEMO_Q, DEMO_K, DEMO_V, key_valid=left, empty_row="zero")
    _, y = attention(DEMO_Q[1:], DEMO_K, DEMO_V, past=1, key_valid=left)
    check(z[0] == [0.0] and z[1:] == y, 'empty_row="zero" 只应把整行被屏蔽的那一行置零')


def run_demo() -> dict:
    """演示结果：softmax([0,1,2])、因果权重与输出、缓存偏移、PAD（运行本文件时以 JSON 打印）。"""
    p = softmax([0, 1, 2])
    weights, outputs = attention(DEMO_Q, DEMO_K, DEMO_V)
    _, cached_outputs = attention(DEMO_Q[1:], DEMO_K, DEMO_V, past=1)  # 权重就是因果权重的后两行
    pad_weights, _ = attention(DEMO_Q, DEMO_K, DEMO_V, key_valid=[True, True, False])
    return {
        "性质": "人工构造的小矩阵，没有训练过的模型",
        "softmax_0_1_2": p,
        "加权10_20_30": sum(pj * x for pj, x in zip(p, [10, 20, 30])),
        "因果权重": weights,
        "输出": outputs,
        "缓存_past1_输出": cached_outputs,
        "PAD_末位无效_权重": pad_weights,
    }


if __name__ == "__main__":
    self_test()
    print_json(run_demo())
