"""第 2 章教学代码：从手算到张量——用 numpy 把前几页的规则写成整批的计算（人工构造的小数组）。

可见性表形状 ``(batch, heads, n_query, n_key)``；规则是谓词 ``rule(b, h, q_idx, kv_idx)``
（FlexAttention 的 ``mask_mod``），True 表示允许。与 ``02_attention.py`` 放在同一目录运行。
"""

import functools
import importlib
import operator

import numpy as np

att = importlib.import_module("02_attention")  # score_scale、check_count 与纯 Python 的逐行注意力

FLOAT_DTYPES = ("float16", "float32", "float64")
MAX_ELEMENTS = 10**7  # 一个笔误（batch = 10¹²）不该吃光内存
MAX_POSITION = 2**53  # float64 能逐个表示的整数到此为止：更大的位置编号转角不准


# -- 规则：谓词 rule(b, h, q_idx, kv_idx) -> bool --------------------------------------------------
def causal(b, h, q_idx, kv_idx):
    """因果：查询只读位置不晚于自己的 Key（``q_idx`` 是绝对位置 past + i，缓存里的也算）。
    >>> causal(0, 0, 2, np.arange(4))
    array([ True,  True,  True, False])
    """
    return _index(kv_idx, "kv_idx") <= _index(q_idx, "q_idx")


def sliding_window(w: int):
    """滑动窗口（本页的读法）：读自己和前面 ``w − 1`` 个 Key，``q − w < k ≤ q``，每行至多 ``w`` 个。
    >>> sliding_window(2)(0, 0, 3, np.arange(5))
    array([False, False,  True,  True, False])
    """
    w = att.check_count(w, "w")
    return lambda b, h, q_idx, kv_idx: causal(b, h, q_idx, kv_idx) & (kv_idx > q_idx - w)


def document(doc_ids):
    """同一文档：打包的序列里，查询只读同一文档的 Key。``doc_ids`` 形状 (batch, n_key)。
    >>> document([[0, 0, 1, 1]])(0, 0, 2, np.arange(4))
    array([False, False,  True,  True])
    """
    ids = _array(doc_ids, "doc_ids", 2, "iu")

    def rule(b, h, q_idx, kv_idx):
        table = _like(ids, _index(kv_idx, "kv_idx"))
        return table[b, _index(q_idx, "q_idx")] == table[b, kv_idx]

    rule.tables = [("doc_ids", ids.shape)]  # visibility_batch 核对它与 (batch, n_key) 相同
    return rule


def prefix_lm(n: int):
    """前缀语言模型：前 ``n`` 个 Key（前缀）对每个查询都可见，其余按因果规则。
    >>> prefix_lm(2)(0, 0, 0, np.arange(4))
    array([ True,  True, False, False])
    """
    n = att.check_count(n, "n", minimum=0)
    return lambda b, h, q_idx, kv_idx: causal(b, h, q_idx, kv_idx) | (kv_idx < n)


def sinks(n_sink: int, w: int):
    """注意力汇点加窗口：因果，且 Key 是前 ``n_sink`` 个之一，或在大小为 ``w`` 的窗口里。
    >>> sinks(1, 2)(0, 0, 4, np.arange(6))
    array([ True, False, False,  True,  True, False])
    """
    n_sink = att.check_count(n_sink, "n_sink", minimum=0)
    w = att.check_count(w, "w")
    return lambda b, h, q_idx, kv_idx: (
        causal(b, h, q_idx, kv_idx) & ((kv_idx < n_sink) | (kv_idx > q_idx - w))
    )


def padding(attention_mask):
    """PAD：``attention_mask[b, k] == 1`` 的 Key 是内容。只看 Key：PAD 查询行照样读内容。
    >>> padding([[0, 1, 1]])(0, 0, 2, np.arange(3))
    array([False,  True,  True])
    """
    mask = _array(attention_mask, "attention_mask", 2, "01")

    def rule(b, h, q_idx, kv_idx):
        return _like(mask, _index(kv_idx, "kv_idx"))[b, kv_idx] == 1

    rule.tables = [("attention_mask", mask.shape)]
    return rule


def _combine(rules: tuple, both: bool):
    if not rules or not all(callable(r) for r in rules):
        raise ValueError(f"rules 必须是一个或几个谓词 rule(b, h, q_idx, kv_idx)，收到 {rules!r}")
    op = operator.and_ if both else operator.or_  # & 或 |：numpy 数组与 torch 张量都认

    def rule(b, h, q, k):
        return functools.reduce(op, (r(b, h, q, k) for r in rules))

    rule.tables = [t for r in rules for t in getattr(r, "tables", [])]
    return rule


def and_rules(*rules):
    """几条规则都允许才允许（“与”）：例如因果与 PAD。
    >>> and_rules(causal, padding([[0, 1, 1]]))(0, 0, 1, np.arange(3))
    array([False,  True, False])
    """
    return _combine(rules, both=True)


def or_rules(*rules):
    """任一条规则允许就允许（“或”）：例如因果或“同在前缀里”。
    >>> or_rules(causal, sliding_window(1))(0, 0, 1, np.arange(3))
    array([ True,  True, False])
    """
    return _combine(rules, both=False)


# -- 整批的可见性表与加性 mask ---------------------------------------------------------------------
def visibility_batch(rule, batch: int, heads: int, n_query: int, n_key: int) -> np.ndarray:
    """把谓词在整批上求值：形状 ``(batch, heads, n_query, n_key)`` 的布尔数组。

    查询是最后 ``n_query`` 个位置：第 i 行的绝对位置是 ``n_key − n_query + i``（右下对齐）。缓存留着
    之前的每一个 Key 时，这就是 KV 缓存要的 ``past + i``；缓存丢掉过 Key（滑动窗口、汇点）时
    past 比 ``n_key − n_query`` 大，这个函数不适用。
    >>> visibility_batch(causal, 1, 1, 2, 3)[0, 0]
    array([[ True,  True, False],
           [ True,  True,  True]])
    """
    if not callable(rule):
        raise ValueError(f"rule 必须是谓词 rule(b, h, q_idx, kv_idx)，收到 {rule!r}")
    shape = (
        att.check_count(batch, "batch", maximum=MAX_ELEMENTS, why="内存"),
        att.check_count(heads, "heads", maximum=MAX_ELEMENTS, why="内存"),
        att.check_count(n_query, "n_query", maximum=MAX_ELEMENTS, why="内存"),
        att.check_count(n_key, "n_key", maximum=MAX_ELEMENTS, why="内存"),
    )
    if n_query > n_key:
        raise ValueError(f"n_query 不能大于 n_key（查询是最后几个位置），收到 {n_query} > {n_key}")
    if np.prod(shape) > MAX_ELEMENTS:
        raise ValueError(f"batch × heads × n_query × n_key 不能超过 {MAX_ELEMENTS}，收到 {shape}")
    for name, table in getattr(rule, "tables", []):  # padding、document 查的表
        if table != (batch, n_key):
            raise ValueError(f"rule 的 {name} 形状须为 (batch, n_key) {batch, n_key}，收到 {table}")
    # 四个下标各占一轴，互相广播成整张表。
    b = np.arange(batch)[:, None, None, None]  # (batch, 1, 1, 1)
    h = np.arange(heads)[None, :, None, None]  # (1, heads, 1, 1)
    q = (n_key - n_query) + np.arange(n_query)[None, None, :, None]  # (1, 1, n_query, 1)：past + i
    kv = np.arange(n_key)  # (n_key,)
    try:
        out = np.broadcast_to(np.asarray(rule(b, h, q, kv)), shape)
    except (IndexError, TypeError, ValueError) as error:
        raise ValueError(f"rule 在形状 {shape} 上求值失败：{error}") from None
    if out.dtype != bool:
        raise ValueError(f"rule 必须返回 True/False，收到 dtype {out.dtype}")
    return out.copy()  # (batch, heads, n_query, n_key)


def additive(visible, dtype: str = "float32") -> np.ndarray:
    """加性 mask：允许处 0，禁止处 ``numpy.finfo(dtype).min``（有限的最小数，不是 −∞）。
    >>> additive(np.array([True, False]), "float16").tolist()
    [0.0, -65504.0]
    """
    name = getattr(dtype, "name", getattr(dtype, "__name__", dtype))  # "float16"、np.float16 …
    if name not in FLOAT_DTYPES:
        raise ValueError(f"dtype 必须是 {'、'.join(FLOAT_DTYPES)} 之一，收到 {dtype!r}")
    t = np.dtype(name)
    v = _array(visible, "visible", 0, "b")
    return np.where(v, t.type(0), np.finfo(t).min).astype(t)


# -- 分组 K/V 头、位置编号与 RoPE ------------------------------------------------------------------
def repeat_kv(x, n_rep: int) -> np.ndarray:
    """(batch, kv_heads, n, d) 复制成 (batch, kv_heads·n_rep, n, d)：查询头 h 读 K/V 头 h // n_rep。
    >>> repeat_kv(np.arange(2.0).reshape(1, 2, 1, 1), 2)[0, :, 0, 0]
    array([0., 0., 1., 1.])
    """
    x = _array(x, "x", 4, "f")
    n_rep = att.check_count(n_rep, "n_rep", maximum=MAX_ELEMENTS // x.size or 1, why="要放进内存")
    return np.repeat(x, n_rep, axis=1)  # 每个 K/V 头连着复制 n_rep 份：相邻的查询头共用一个


def positions_from_mask(attention_mask) -> np.ndarray:
    """位置编号（RoPE 转的数）：每个真实词元前面真实词元的个数；PAD 得 0，它被屏蔽，值无关紧要。
    >>> positions_from_mask([[0, 0, 1, 1], [1, 1, 1, 1]])
    array([[0, 0, 0, 1],
           [0, 1, 2, 3]])
    """
    mask = _array(attention_mask, "attention_mask", 2, "01")
    return np.where(mask == 1, np.cumsum(mask, axis=-1) - 1, 0)  # (batch, n)


def rope_batched(x, positions, base: float = 10000.0) -> np.ndarray:
    """整批的 RoPE（相邻成对）：``x`` (batch, heads, n, d) 的第 r 行按 ``positions[b, r]`` 旋转。
    >>> np.round(rope_batched([[[[1.0, 0.0]]]], [[1]]), 4)  # d = 2 时 θ = 1：转 1 弧度
    array([[[[0.5403, 0.8415]]]])
    """
    x = _array(x, "x", 4, "f")
    pos = _array(positions, "positions", 2, "iu")
    if x.shape[-1] % 2:
        raise ValueError(f"x 的最后一维 d 必须是偶数（分量两两成对），收到 d = {x.shape[-1]}")
    if pos.shape != (x.shape[0], x.shape[2]):
        raise ValueError(f"positions 的形状须为 (batch, n) {x.shape[::2]}，收到 {pos.shape}")
    if (pos < 0).any() or (pos > MAX_POSITION).any():
        raise ValueError(f"positions 必须在 0 到 2**53 之间，收到 {pos.min()} 到 {pos.max()}")
    if isinstance(base, bool) or not isinstance(base, (int, float)) or not 1 < base < float("inf"):
        raise ValueError(f"base 必须是大于 1 的有限数，收到 {base!r}")
    theta = float(base) ** (-np.arange(0, x.shape[-1], 2) / x.shape[-1])  # 第 i 对的频率 θ_i
    phi = (pos[..., None] * theta)[:, None]  # (batch, 1, n, d/2)：每个头同样的转角
    a = x[..., 0::2]  # 第 i 对是分量 (2i, 2i+1)
    c = x[..., 1::2]
    out = np.empty_like(x)  # (batch, heads, n, d)
    out[..., 0::2] = a * np.cos(phi) - c * np.sin(phi)
    out[..., 1::2] = c * np.cos(phi) + a * np.sin(phi)
    return out


# -- 整批注意力 ------------------------------------------------------------------------------------
def attention_batched(q, k, v, visible, empty_row: str = "error"):
    """整批的缩放点积注意力：(weights, outputs)，形状 (batch, heads, n_query, n_key) 与 (…, d_v)。
    ``q`` (batch, heads, n_query, d)，``k``、``v`` (batch, kv_heads, n_key, d 或 d_v)，heads 是
    kv_heads 的整数倍；``visible`` 能广播成权重的形状。``empty_row`` 同 Mask 一页：``"error"``
    指出第一个整行被屏蔽的行，``"zero"`` 让它的权重和输出全为 0。
    >>> q = np.zeros((1, 2, 1, 1))
    >>> k = np.zeros((1, 1, 2, 1))
    >>> w, out = attention_batched(q, k, [[[[1], [3]]]], True)
    >>> w[0, :, 0].tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    >>> out[0, :, 0, 0].tolist()
    [2.0, 2.0]
    """
    q, k, v, vis = _attention_inputs(q, k, v, visible, empty_row)
    empty = ~vis.any(axis=-1)  # (batch, heads, n_query)：整行被屏蔽的行
    if empty_row == "error" and empty.any():
        b, h, i = np.argwhere(empty)[0].tolist()
        raise ValueError(
            f"序列 {b}、头 {h} 的第 {i} 个查询行没有可见的 Key，不能做普通 softmax；"
            '可用 empty_row="zero" 让这一行输出 0'
        )
    n_rep = q.shape[1] // k.shape[1]  # 头 h 读 K/V 头 h // n_rep
    k = repeat_kv(k, n_rep)  # (batch, heads, n_key, d)
    v = repeat_kv(v, n_rep)  # (batch, heads, n_key, d_v)
    with np.errstate(over="ignore", invalid="ignore"):  # 溢出由下面的检查指出，不只是一条警告
        scores = q @ k.swapaxes(-1, -2) / q.dtype.type(att.score_scale(q.shape[-1]))
    if not np.isfinite(scores).all():
        raise ValueError(f"q 与 k 的点积在 {scores.dtype} 里溢出（不是有限数）：请缩小 q、k 的元素")
    scores = np.where(vis, scores, -np.inf)  # 布尔 mask：禁止的格子直接换成 −∞，不做加法
    top = np.where(empty, 0, scores.max(axis=-1))[..., None]  # 整行 −∞ 时用 0 作最大值，exp 全是 0
    e = np.exp(scores - top)
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total == 0, 1, total)  # 整行被屏蔽：0 / 1 = 0
    return weights, weights @ v  # 权重之和为 1：有限的 v 求加权平均不会溢出


# -- 边界上的检查 ----------------------------------------------------------------------------------
def _index(x: object, name: str):
    """位置下标：整数，或整数数组（numpy 数组；FlexAttention 传来的 torch 张量也有整数 dtype）。"""
    whole = isinstance(x, (int, np.integer)) and not isinstance(x, bool)
    if whole or "int" in str(getattr(x, "dtype", None)):
        return x
    got = f"dtype {x.dtype}" if hasattr(x, "dtype") else repr(x)  # 数组只写 dtype，不整个印出
    raise ValueError(f"{name} 必须是整数或整数数组（位置的下标），收到 {got}")


def _like(table, index):
    # FlexAttention 的下标是 torch 张量：表也换成张量
    return table if isinstance(index, (int, np.integer, np.ndarray)) else index.new_tensor(table)


def _array(x: object, name: str, ndim: int, kinds: str) -> np.ndarray:
    """非空的 ``ndim`` 维数组（0：维数不限，也可是一个数），元素种类在 ``kinds`` 里：``"f"`` 浮点
    （整数按 float64 读），``"iu"`` 整数，``"b"`` 布尔，``"01"`` 只含 0 与 1 的整数或布尔。
    错误信息写出哪里不对（哪一格、什么形状或 dtype），不把整个数组印出来。"""
    kind = {"f": "浮点", "b": "布尔"}.get(kinds, "整数")
    dims = f" {ndim} 维" if ndim else ""
    only = "，只含 0（PAD）与 1（内容）" if kinds == "01" else ""
    wanted = f"{name} 必须是非空、全部有限的{dims}{kind}数组{only}"
    if isinstance(x, (str, bytes, dict, set)):
        raise ValueError(f"{wanted}，收到 {type(x).__name__}")
    try:
        a = np.asarray(x)
    except ValueError:  # 参差不齐的列表
        raise ValueError(f"{wanted}，收到各行长度不一的列表") from None
    want = "iub" if kinds == "01" else kinds
    if "f" in want and a.dtype.kind in "iu":
        a = a.astype(np.float64)  # 整数按 float64
    if a.dtype.kind not in want or (a.dtype.kind == "f" and a.dtype.name not in FLOAT_DTYPES):
        got = repr(x) if x is None or isinstance(x, (bool, int, float)) else f"dtype {a.dtype}"
        raise ValueError(f"{wanted}，收到 {got}")
    if ndim and a.ndim != ndim:
        raise ValueError(f"{wanted}，收到形状 {a.shape}")
    if a.size == 0:
        raise ValueError(f"{wanted}，收到空数组（形状 {a.shape}）")
    if kinds == "01":
        bad = ~np.isin(a, [0, 1])
    else:
        bad = ~np.isfinite(a)
    if bad.any():
        where = tuple(np.argwhere(bad)[0].tolist())  # 第一个不合格的格子
        cell = f"{name}[{', '.join(map(str, where))}]" if where else name
        raise ValueError(f"{wanted}：{cell} 是 {a[where]}")
    return a.astype(np.int64) if kinds == "01" else a


def _attention_inputs(q, k, v, visible, empty_row):
    """整批注意力的输入：三个四维浮点数组、能广播成权重形状的布尔表与整行策略。"""
    if empty_row not in att.EMPTY_ROW_POLICIES:
        raise ValueError(f'empty_row 必须是 "error" 或 "zero"，收到 {empty_row!r}')
    q = _array(q, "q", 4, "f")
    k = _array(k, "k", 4, "f")
    v = _array(v, "v", 4, "f")
    batch, heads, n_query, d = q.shape
    kb, kv_heads, n_key, kd = k.shape
    if (kb, kd) != (batch, d) or v.shape[:3] != k.shape[:3] or heads % kv_heads:
        raise ValueError(
            f"形状对不上：q {q.shape}、k {k.shape}、v {v.shape}（batch 与 d 相同，"
            "v 与 k 的前三维相同，heads 是 kv_heads 的整数倍）"
        )
    shape = (batch, heads, n_query, n_key)
    vis = _array(visible, "visible", 0, "b")  # True/False，或能广播的布尔数组
    if not all(a in (1, n) for a, n in zip(vis.shape[::-1], shape[::-1])) or vis.ndim > 4:
        raise ValueError(f"visible 必须能广播成 {shape}（True 表示允许），收到形状 {vis.shape}")
    return q, k, v, np.broadcast_to(vis, shape)


def _batch(inputs: dict):
    """一批的 q、k、v、attention_mask、past：核对 past = n_key − n_query 与 mask 的形状。"""
    if not isinstance(inputs, dict) or not {"attention_mask", "past", "q", "k", "v"} <= set(inputs):
        raise ValueError("inputs 必须是含 attention_mask、past、q、k、v 的字典（如 demo_inputs()）")
    q = _array(inputs["q"], "q", 4, "f")
    k = _array(inputs["k"], "k", 4, "f")
    v = _array(inputs["v"], "v", 4, "f")
    mask = _array(inputs["attention_mask"], "attention_mask", 2, "01")
    batch = q.shape[0]
    n_query = q.shape[2]
    n_key = k.shape[2]
    if mask.shape != (batch, n_key):
        raise ValueError(f"attention_mask 形状须为 (batch, n_key) {batch, n_key}：{mask.shape}")
    past = att.check_count(inputs["past"], "past", minimum=0)
    if past != n_key - n_query:
        raise ValueError(f"past 必须等于 n_key − n_query = {n_key - n_query}，收到 {past}")
    return q, k, v, mask, past


# -- 自检与演示 ------------------------------------------------------------------------------------
DEMO_MASK = [[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]]  # 序列 0 左侧有两个 PAD
DEMO_PAST = 4
DEMO_HEADS = 4
DEMO_KV_HEADS = 2
DEMO_D = 2
DEMO_SEED = 0
# 张量一页“更多可见性规则”的例子，本章小结的规则表也用它：一个序列，没有缓存
RULES_EXAMPLE = {"n": 6, "w": 3, "n_prefix": 2, "n_sink": 1, "doc_ids": [0, 0, 0, 1, 1, 1]}


def demo_inputs(seed: int = DEMO_SEED) -> dict:
    """演示的一批：Q (2, 4, 2, 2)，缓存与新位置的 K、V (2, 2, 6, 2)；依次取 q、k、v，一位小数。"""
    rng = np.random.default_rng(att.check_count(seed, "seed", minimum=0))
    batch, n_key = np.shape(DEMO_MASK)

    def draw(*shape):
        return np.round(rng.uniform(-1, 1, shape), 1)

    q = draw(batch, DEMO_HEADS, n_key - DEMO_PAST, DEMO_D)
    k = draw(batch, DEMO_KV_HEADS, n_key, DEMO_D)
    v = draw(batch, DEMO_KV_HEADS, n_key, DEMO_D)
    return {"attention_mask": np.asarray(DEMO_MASK), "past": DEMO_PAST, "q": q, "k": k, "v": v}


def forward(inputs: dict, rule=None) -> dict:
    """一批从头到尾：位置编号、RoPE、可见性表（默认因果与 PAD）、整批注意力（empty_row="zero"）。
    >>> r = forward(demo_inputs())
    >>> r["positions"].tolist()
    [[0, 0, 0, 1, 2, 3], [0, 1, 2, 3, 4, 5]]
    >>> r["visible"].shape
    (2, 4, 2, 6)
    >>> r["outputs"].shape
    (2, 4, 2, 2)
    """
    q, k, v, mask, past = _batch(inputs)
    positions = positions_from_mask(mask)  # (batch, n_key)
    rule = rule or and_rules(causal, padding(mask))
    batch, heads, n_query, _ = q.shape
    visible = visibility_batch(rule, batch, heads, n_query, k.shape[2])
    q_rot = rope_batched(q, positions[:, past:])  # 新查询在最后
    k_rot = rope_batched(k, positions)
    weights, outputs = attention_batched(q_rot, k_rot, v, visible, empty_row="zero")
    return {"positions": positions, "visible": visible, "weights": weights, "outputs": outputs}


def row_by_row_gap(inputs: dict) -> float:
    """整批输出与逐个（序列，头）调用 ``02_attention.attention`` 的最大差（因果与 PAD，不旋转）。
    >>> row_by_row_gap(demo_inputs()) < 1e-12
    True
    """
    q, k, v, mask, past = _batch(inputs)
    batch, heads, n_query, _ = q.shape
    kv_heads = k.shape[1]
    n_key = k.shape[2]
    visible = visibility_batch(and_rules(causal, padding(mask)), batch, heads, n_query, n_key)
    _, out = attention_batched(q, k, v, visible, empty_row="zero")
    gap = 0.0
    for b in range(batch):
        valid = [m == 1 for m in mask[b].tolist()]
        for h in range(heads):
            g = h // (heads // kv_heads)  # K/V 头 h // n_rep
            _, ref = att.attention(
                q[b, h].tolist(),
                k[b, g].tolist(),
                v[b, g].tolist(),
                past=past,
                key_valid=valid,
                empty_row="zero",
            )
            gap = max(gap, float(np.abs(out[b, h] - ref).max()))
    return gap


def self_test() -> None:
    """自检：整批逐行等于纯 Python 的注意力；几条规则的表；float16 里两份 finfo.min 相加是 −∞。"""
    att.check(row_by_row_gap(demo_inputs()) < 1e-12, "整批结果应逐行等于纯 Python 的注意力")

    def most(rule):
        return visibility_batch(rule, 1, 1, 6, 6).sum(-1).max()

    att.check(most(sliding_window(2)) == 2, "滑动窗口每行至多 w 个 Key")
    att.check(most(sinks(1, 2)) == 3, "汇点加窗口每行至多 n_sink + w 个 Key")
    fill = additive(np.array([False]), "float16")
    with np.errstate(over="ignore"):
        att.check(np.isneginf(fill + fill).all(), "float16 里两份 finfo.min 相加溢出成 −∞")


def run_demo() -> dict:
    """演示结果（JSON）：位置编号、新查询可见的 Key 数、与逐行的最大差、几条规则每行的 Key 数。"""
    x = demo_inputs()

    def line(xs):
        return " ".join(map(str, xs))

    rules = {
        "因果": causal,
        "滑动窗口_w3": sliding_window(3),
        "前缀_n2": prefix_lm(2),
        "汇点1_窗口3": sinks(1, 3),
    }
    r = forward(x)

    def table(rule):
        return visibility_batch(rule, 1, 1, 6, 6)[0, 0]

    counts = {name: line(table(rule).sum(-1)) for name, rule in rules.items()}
    return {
        "性质": "人工构造的小数组",
        "位置编号": [line(p) for p in r["positions"]],
        "新查询可见的Key数_头0": [line(c) for c in r["visible"][:, 0].sum(-1).tolist()],
        "整批与逐行的最大差_不含RoPE": row_by_row_gap(x),
        "规则_每行可见的Key数": counts,
        "float16_finfo_min": float(np.finfo(np.float16).min),
    }


if __name__ == "__main__":
    self_test()
    att.print_json(run_demo())
