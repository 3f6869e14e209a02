"""第 2 章教学代码：从手算到张量——用 numpy 把前几页的规则写成整批的计算；数据都是人工构造的小数组。

可见性表的形状是 ``(batch, heads, n_query, n_key)``，查询是每个序列的最后 ``n_query`` 个位置（前面
``past = n_key − n_query`` 个在 KV 缓存里）。规则写成谓词 ``rule(b, h, q_idx, kv_idx) -> bool``（PyTorch
FlexAttention 的 ``mask_mod`` 的签名），参数是能互相广播的整数数组，True 表示允许读取。与 ``02_attention.py``
放在同一目录，运行 ``python3 02_tensors.py``：先自检，再以 JSON 打印演示结果。
"""

import importlib

import numpy as np

att = importlib.import_module("02_attention")  # score_scale、check_count 与纯 Python 的逐行注意力

FLOAT_DTYPES = ("float16", "float32", "float64")
MAX_ELEMENTS = 10**7  # 一个笔误（batch = 10¹²）不该吃光内存


# -- 边界上的检查 -------------------------------------------------------------------------------------
def _index(x: object, name: str):
    """位置下标：整数，或整数数组（numpy 数组；FlexAttention 传进来的 torch 张量也有整数 dtype）。"""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool) or "int" in str(getattr(x, "dtype", None)):
        return x
    raise ValueError(f"{name} 必须是整数或整数数组（位置的下标），收到 {x!r}")


def _array(x: object, name: str, ndim: int, kinds: str) -> np.ndarray:
    """非空的 ``ndim`` 维数组（0 表示维数不限），元素种类在 ``kinds`` 里（dtype.kind：i 整数、b 布尔、f 浮点）。"""
    try:
        a = np.asarray(None if isinstance(x, (str, bytes, dict, set)) else x)
    except ValueError:  # 参差不齐的列表
        a = np.asarray(None)
    binary, kinds = kinds == "01", "iub" if kinds == "01" else kinds  # "01"：只含 0 与 1（attention_mask）
    a = a.astype(np.float64) if "f" in kinds and a.dtype.kind in "iu" else a  # 整数的 Q、K、V 按 float64 算
    known = a.dtype.kind in kinds and (a.dtype.kind != "f" or a.dtype.name in FLOAT_DTYPES)
    if not known or a.ndim != (ndim or max(a.ndim, 1)) or a.size == 0 or not np.isfinite(a).all() or (
            binary and not np.isin(a, (0, 1)).all()):
        raise ValueError(f"{name} 必须是非空、全部有限的 {ndim} 维数组{'，只含 0（PAD）与 1（内容）' * binary}，收到 {x!r}")
    return a.astype(np.int64) if binary else a


def _inputs(x: object) -> dict:  # 像 demo_inputs() 那样的一批
    if not isinstance(x, dict) or not {"attention_mask", "q", "k", "v"} <= set(x):
        raise ValueError("inputs 必须是含 attention_mask、q、k、v 的字典（如 demo_inputs() 的结果）")
    return x


# -- 规则：谓词 rule(b, h, q_idx, kv_idx) -> bool -------------------------------------------------------
def causal(b, h, q_idx, kv_idx):
    """因果：查询只读位置不晚于自己的 Key（``q_idx`` 是绝对位置，缓存里的也算）。

    >>> causal(0, 0, 2, np.arange(4))
    array([ True,  True,  True, False])
    """
    return _index(kv_idx, "kv_idx") <= _index(q_idx, "q_idx")


def _like(table: np.ndarray, index):  # FlexAttention 传来的下标是 torch 张量：表也换成张量，才能用它索引
    return table if isinstance(index, (int, np.integer, np.ndarray)) else index.new_tensor(table)


def sliding_window(w: int):
    """滑动窗口：查询读自己和它前面的 ``w − 1`` 个 Key，即 ``q − w < k ≤ q``，每行最多 ``w`` 个。

    >>> sliding_window(2)(0, 0, 3, np.arange(5))
    array([False, False,  True,  True, False])
    """
    w = att.check_count(w, "w")
    return lambda b, h, q_idx, kv_idx: (kv_idx <= q_idx) & (kv_idx > q_idx - w)


def document(doc_ids):
    """同一文档：打包的序列里，查询只读与自己同属一个文档的 Key。``doc_ids`` 形状 (batch, n_key)。

    >>> document([[0, 0, 1, 1]])(0, 0, 2, np.arange(4))
    array([False, False,  True,  True])
    """
    ids = _array(doc_ids, "doc_ids", 2, "iu")
    return lambda b, h, q_idx, kv_idx: _like(ids, kv_idx)[b, q_idx] == _like(ids, kv_idx)[b, kv_idx]


def prefix_lm(n: int):
    """前缀语言模型：前 ``n`` 个 Key（前缀）对每个查询都可见，其余按因果规则。

    >>> prefix_lm(2)(0, 0, 0, np.arange(4))
    array([ True,  True, False, False])
    """
    n = att.check_count(n, "n", minimum=0)
    return lambda b, h, q_idx, kv_idx: (kv_idx < n) | (kv_idx <= q_idx)


def sinks(n_sink: int, w: int):
    """注意力汇点加窗口：因果，且 Key 是前 ``n_sink`` 个之一，或在大小为 ``w`` 的窗口里。

    >>> sinks(1, 2)(0, 0, 4, np.arange(6))
    array([ True, False, False,  True,  True, False])
    """
    n_sink, w = att.check_count(n_sink, "n_sink", minimum=0), att.check_count(w, "w")
    return lambda b, h, q_idx, kv_idx: (kv_idx <= q_idx) & ((kv_idx < n_sink) | (kv_idx > q_idx - w))


def padding(attention_mask):
    """PAD：``attention_mask[b, k] == 1`` 的 Key 是内容。它只看 Key：单看这条规则时，PAD 查询行照样去读内容。

    >>> padding([[0, 1, 1]])(0, 0, 2, np.arange(3))
    array([False,  True,  True])
    """
    mask = _array(attention_mask, "attention_mask", 2, "01")
    return lambda b, h, q_idx, kv_idx: _like(mask, kv_idx)[b, kv_idx] == 1


def _combine(rules: tuple, both: bool):
    if not rules or not all(callable(r) for r in rules):
        raise ValueError(f"rules 必须是一个或几个谓词 rule(b, h, q_idx, kv_idx)，收到 {rules!r}")

    def rule(b, h, q_idx, kv_idx):
        out = rules[0](b, h, q_idx, kv_idx)
        for r in rules[1:]:
            out = (out & r(b, h, q_idx, kv_idx)) if both else (out | r(b, h, q_idx, kv_idx))
        return out
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


# -- 整批的可见性表与加性 mask ----------------------------------------------------------------------
def visibility_batch(rule, batch: int, heads: int, n_query: int, n_key: int) -> np.ndarray:
    """把谓词在整批上求值：形状 ``(batch, heads, n_query, n_key)`` 的布尔数组。

    查询是最后 ``n_query`` 个位置：第 i 行的绝对位置是 ``past + i``，``past = n_key − n_query``
    （右下对齐，Mask 一页证明了 KV 缓存要的正是它）。
    >>> visibility_batch(causal, 1, 1, 2, 3)[0, 0]
    array([[ True,  True, False],
           [ True,  True,  True]])
    """
    if not callable(rule):
        raise ValueError(f"rule 必须是谓词 rule(b, h, q_idx, kv_idx)，收到 {rule!r}")
    shape = tuple(att.check_count(n, name, maximum=MAX_ELEMENTS, why="这是一个内存里的数组") for name, n in (
        ("batch", batch), ("heads", heads), ("n_query", n_query), ("n_key", n_key)))
    if n_query > n_key or np.prod(shape) > MAX_ELEMENTS:
        raise ValueError(f"n_query 不能大于 n_key（查询是最后 n_query 个位置），batch × heads × n_query × n_key "
                         f"不能超过 {MAX_ELEMENTS}，收到 {shape}")
    b = np.arange(batch)[:, None, None, None]  # 四个下标各占一个轴，广播成整张表
    h = np.arange(heads)[None, :, None, None]
    q, k = (n_key - n_query) + np.arange(n_query)[None, None, :, None], np.arange(n_key)  # q 是绝对位置 past + i
    try:
        out = np.broadcast_to(np.asarray(rule(b, h, q, k)), shape)
    except (IndexError, TypeError, ValueError) as error:  # 例如 doc_ids 比 n_key 短
        raise ValueError(f"rule 在形状 {shape} 上求值失败（它的表与 batch、n_key 对得上吗？）：{error}") from None
    if out.dtype != bool:
        raise ValueError(f"rule 必须返回 True/False，收到 dtype {out.dtype}")
    return out.copy()


def additive(visible, dtype: str = "float32") -> np.ndarray:
    """加性 mask：允许处 0，禁止处 ``numpy.finfo(dtype).min``（有限的最小数，不是 −∞）。

    >>> additive(np.array([True, False]), "float16").tolist()
    [0.0, -65504.0]
    """
    name = getattr(dtype, "name", getattr(dtype, "__name__", dtype))  # "float16"、np.float16、np.dtype(...)
    if name not in FLOAT_DTYPES:
        raise ValueError(f"dtype 必须是 {'、'.join(FLOAT_DTYPES)} 之一，收到 {dtype!r}")
    t, v = np.dtype(name), _array(visible, "visible", 0, "b")
    return np.where(v, t.type(0), np.finfo(t).min).astype(t)


# -- 分组 K/V 头、位置与 RoPE ---------------------------------------------------------------------------
def repeat_kv(x, n_rep: int) -> np.ndarray:
    """把 (batch, kv_heads, n, d) 的 K 或 V 复制成 (batch, kv_heads·n_rep, n, d)：查询头 h 读 K/V 头 h // n_rep。

    >>> repeat_kv(np.arange(2.0).reshape(1, 2, 1, 1), 2)[0, :, 0, 0]
    array([0., 0., 1., 1.])
    """
    x = _array(x, "x", 4, "f")
    n_rep = att.check_count(n_rep, "n_rep", maximum=MAX_ELEMENTS // x.size or 1, why="复制后的数组要放进内存")
    return np.repeat(x, n_rep, axis=1)  # 每个 K/V 头连着复制 n_rep 份：相邻的查询头共用一个


def positions_from_mask(attention_mask) -> np.ndarray:
    """每个真实词元的绝对位置：它前面真实词元的个数（PAD 不计数）；PAD 自己得 0，这个值无关紧要：它被屏蔽。

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
    if x.shape[-1] % 2 or pos.shape != (x.shape[0], x.shape[2]) or (pos < 0).any():
        raise ValueError(f"x 的 d 必须是偶数，positions 必须是形状 {(x.shape[0], x.shape[2])} 的非负整数，收到 {pos.shape}")
    if not (isinstance(base, (int, float)) and not isinstance(base, bool) and 1 < base < float("inf")):
        raise ValueError(f"base 必须是大于 1 的有限数，收到 {base!r}")
    theta = float(base) ** (-np.arange(0, x.shape[-1], 2) / x.shape[-1])  # 第 i 对的频率 θ_i
    phi = (pos[..., None] * theta)[:, None]  # (batch, 1, n, d/2)：每个头同样的转角
    a, c, out = x[..., 0::2], x[..., 1::2], np.empty_like(x)  # 第 i 对是分量 (2i, 2i+1)
    out[..., 0::2] = a * np.cos(phi) - c * np.sin(phi)
    out[..., 1::2] = c * np.cos(phi) + a * np.sin(phi)
    return out


# -- 整批注意力 ---------------------------------------------------------------------------------------
def attention_batched(q, k, v, visible, empty_row: str = "error"):
    """整批的缩放点积注意力，返回 ``(weights, outputs)``，形状 (batch, heads, n_query, n_key) 与 (…, d_v)。

    ``q`` (batch, heads, n_query, d)，``k``、``v`` (batch, kv_heads, n_key, d 或 d_v)，heads 是 kv_heads 的
    整数倍；``visible`` 能广播成权重的形状。``empty_row`` 同 Mask 一页：``"error"`` 指出第一个整行被屏蔽
    的行，``"zero"`` 让它的权重和输出全为 0。
    >>> w, out = attention_batched(np.zeros((1, 2, 1, 1)), np.zeros((1, 1, 2, 1)), [[[[10.0], [30.0]]]], True)
    >>> w[0, :, 0].tolist(), out[0, :, 0, 0].tolist()
    ([[0.5, 0.5], [0.5, 0.5]], [20.0, 20.0])
    """
    if empty_row not in att.EMPTY_ROW_POLICIES:
        raise ValueError(f"empty_row 必须是 \"error\" 或 \"zero\"，收到 {empty_row!r}")
    q, k, v = _array(q, "q", 4, "f"), _array(k, "k", 4, "f"), _array(v, "v", 4, "f")
    (batch, heads, n_query, d), (kb, kv_heads, n_key, kd) = q.shape, k.shape
    if (kb, kd) != (batch, d) or v.shape[:3] != k.shape[:3] or heads % kv_heads:
        raise ValueError(f"形状对不上：q {q.shape}、k {k.shape}、v {v.shape}（batch 与 d 相同，"
                         "v 与 k 的前三维相同，heads 是 kv_heads 的整数倍）")
    shape = (batch, heads, n_query, n_key)
    vis = np.asarray(visible) if isinstance(visible, (bool, np.bool_)) else _array(visible, "visible", 0, "b")
    if vis.dtype != bool or not all(a in (1, n) for a, n in zip(vis.shape[::-1], shape[::-1])) or vis.ndim > 4:
        raise ValueError(f"visible 必须是能广播成 {shape} 的布尔数组（True 表示允许），收到 {visible!r}")
    vis = np.broadcast_to(vis, shape)
    empty = ~vis.any(axis=-1)  # (batch, heads, n_query)：整行被屏蔽的行
    if empty_row == "error" and empty.any():
        b, h, i = np.argwhere(empty)[0].tolist()
        raise ValueError(f"序列 {b}、头 {h} 的第 {i} 个查询行没有任何可见的 Key，不能对它做普通 softmax；"
                         "可用 empty_row=\"zero\" 让这一行输出 0")
    k, v = repeat_kv(k, heads // kv_heads), repeat_kv(v, heads // kv_heads)  # 查询头 h 读 K/V 头 h // n_rep
    scores = q @ k.swapaxes(-1, -2) / q.dtype.type(att.score_scale(d))  # (batch, heads, n_query, n_key)
    scores = np.where(vis, scores, -np.inf)  # 布尔 mask：禁止的格子直接换成 −∞，不做加法
    top = np.where(empty, 0, scores.max(axis=-1))[..., None]  # 整行 −∞ 时用 0 作最大值，exp 全是 0
    e = np.exp(scores - top)
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total == 0, 1, total)  # 整行被屏蔽：0 / 1 = 0
    return weights, weights @ v  # (batch, heads, n_query, n_key), (batch, heads, n_query, d_v)


# -- 自检与演示 ---------------------------------------------------------------------------------------
DEMO_MASK = [[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]]  # 序列 0 左侧有两个 PAD
DEMO_PAST, DEMO_HEADS, DEMO_KV_HEADS, DEMO_D, DEMO_SEED = 4, 4, 2, 2, 0


def demo_inputs(seed: int = DEMO_SEED) -> dict:
    """演示用的一批：新查询的 Q (2, 4, 2, 2)，缓存与新位置的 K、V (2, 2, 6, 2)，元素取一位小数。
    >>> {name: x.shape for name, x in demo_inputs().items() if name in ("q", "k", "v")}
    {'q': (2, 4, 2, 2), 'k': (2, 2, 6, 2), 'v': (2, 2, 6, 2)}
    """
    rng, (batch, n_key) = np.random.default_rng(att.check_count(seed, "seed", minimum=0)), np.shape(DEMO_MASK)
    draw = lambda *shape: np.round(rng.uniform(-1, 1, shape), 1)  # noqa: E731
    return {"attention_mask": np.asarray(DEMO_MASK), "past": DEMO_PAST, "q": draw(batch, DEMO_HEADS, n_key - DEMO_PAST, DEMO_D),
            "k": draw(batch, DEMO_KV_HEADS, n_key, DEMO_D), "v": draw(batch, DEMO_KV_HEADS, n_key, DEMO_D)}


def forward(inputs: dict, rule=None) -> dict:
    """一批从头到尾：位置、RoPE、可见性表（默认因果与 PAD 取“与”），再做整批注意力（``empty_row="zero"``）。

    >>> r = forward(demo_inputs())
    >>> r["positions"].tolist(), r["visible"].shape, r["outputs"].shape
    ([[0, 0, 0, 1, 2, 3], [0, 1, 2, 3, 4, 5]], (2, 4, 2, 6), (2, 4, 2, 2))
    """
    q, k = _array(_inputs(inputs)["q"], "q", 4, "f"), _array(inputs["k"], "k", 4, "f")
    positions = positions_from_mask(inputs["attention_mask"])  # (batch, n_key)
    (batch, heads, n_query, _), n_key = q.shape, k.shape[2]
    if positions.shape != (batch, n_key) or n_query > n_key:
        raise ValueError(f"attention_mask 的形状必须是 {(batch, n_key)}，收到 {positions.shape}")
    rule = and_rules(causal, padding(inputs["attention_mask"])) if rule is None else rule
    visible = visibility_batch(rule, batch, heads, n_query, n_key)
    q_rot = rope_batched(q, positions[:, n_key - n_query:])  # 新查询在最后 n_query 个位置
    weights, outputs = attention_batched(q_rot, rope_batched(k, positions), inputs["v"], visible, empty_row="zero")
    return {"positions": positions, "visible": visible, "weights": weights, "outputs": outputs}


def row_by_row_gap(inputs: dict) -> float:
    """整批的输出与逐个（序列，头）调用 ``02_attention.attention`` 的最大差（因果与 PAD 取“与”，不旋转）。

    >>> row_by_row_gap(demo_inputs()) < 1e-12
    True
    """
    (q, k, v), past = (_array(inputs[n], n, 4, "f") for n in "qkv"), _inputs(inputs).get("past", 0)
    mask, (batch, heads, n_query, _), (kv_heads, n_key) = _array(inputs["attention_mask"], "attention_mask", 2, "01"), q.shape, k.shape[1:3]
    visible = visibility_batch(and_rules(causal, padding(mask)), batch, heads, n_query, n_key)
    _, out = attention_batched(q, k, v, visible, empty_row="zero")
    gap = 0.0
    for b, h in ((b, h) for b in range(batch) for h in range(heads)):
        g, valid = h // (heads // kv_heads), [m == 1 for m in mask[b].tolist()]  # 查询头 h 读 K/V 头 h // n_rep
        _, ref = att.attention(q[b, h].tolist(), k[b, g].tolist(), v[b, g].tolist(), past=past, key_valid=valid,
                               empty_row="zero")
        gap = max(gap, float(np.abs(out[b, h] - ref).max()))
    return gap


def self_test() -> None:
    """自检：整批结果逐行等于纯 Python 的注意力；几条规则的表；float16 里两份 finfo.min 相加是 −∞。"""
    x = demo_inputs()
    att.check(row_by_row_gap(x) < 1e-12, "整批结果应逐行等于纯 Python 的注意力")
    att.check(visibility_batch(sliding_window(2), 1, 1, 6, 6).sum(-1).max() == 2, "窗口 w 每行最多 w 个 Key")
    att.check(visibility_batch(sinks(1, 2), 1, 1, 6, 6).sum(-1).max() == 3, "汇点加窗口每行最多 n_sink + w 个")
    att.check((rope_batched(x["k"], np.zeros(np.shape(DEMO_MASK), dtype=int)) == x["k"]).all(), "位置 0 不旋转")
    with np.errstate(over="ignore"):
        twice = additive(np.array([False]), "float16") + additive(np.array([False]), "float16")
    att.check(np.isneginf(twice).all(), "float16 里两份 finfo.min 相加溢出成 −∞")
    _, z = attention_batched(x["q"], x["k"], x["v"], False, empty_row="zero")
    att.check((z == 0).all(), "整行被屏蔽时 zero 策略输出 0")


def run_demo() -> dict:
    """演示结果：位置、新查询可见的 Key 数、整批与逐行的最大差（不含 RoPE）、几条规则每行可见的 Key 数（以 JSON 打印）。"""
    x = demo_inputs()
    r = forward(x)
    counts = {name: " ".join(map(str, visibility_batch(rule, 1, 1, 6, 6)[0, 0].sum(-1).tolist())) for name, rule in (
        ("因果", causal), ("滑动窗口_w3", sliding_window(3)), ("前缀_n2", prefix_lm(2)), ("汇点1_窗口3", sinks(1, 3)))}
    return {"性质": "人工构造的小数组，没有训练过的模型", "位置": [" ".join(map(str, p)) for p in r["positions"].tolist()],
            "新查询可见的Key数_头0": [" ".join(map(str, c)) for c in r["visible"][:, 0].sum(-1).tolist()],
            "整批与逐行的最大差_不含RoPE": row_by_row_gap(x), "规则_每行可见的Key数": counts,
            "float16_finfo_min": float(np.finfo(np.float16).min)}


if __name__ == "__main__":
    self_test()
    att.print_json(run_demo())
