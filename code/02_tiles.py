"""第 2 章教学代码：分块计算——在线 softmax、FlashAttention 的分块，以及 mask 让内核跳过的块。

前几页一次算完一整行分数。内核却把 Key 切成块，一块一块地读，每个查询行只记三个量：
运行中的最大值 m、以 m 为基准的指数和 l、以同一基准加权的 V 之和 O（累加器）。读完最后一块，
O / l 就是这一行的输出（FlashAttention 2 的算法 1）。可见性表把每个（查询块，Key 块）分成三类：
全可见（full）的块不必查表，部分可见（partial）的块要在块内加 mask，全不可见（empty）的块整块
跳过；因果 mask 真正少做的计算，就是这些跳过的块。

数据都是人工构造的小矩阵；只用标准库（numpy 只用于计时，在函数里才导入）。与 ``02_attention.py``
放在同一目录运行 ``python3 02_tiles.py``：先自检，再以 JSON 打印演示结果。形状：``q``
(n_query, d)、``k`` (n_key, d)、``v`` (n_key, d_v)、``visible`` (n_query, n_key)；查询每
``block_q`` 行一块，Key 每 ``block_k`` 个一块，最后一块可以不满。
"""

from __future__ import annotations

import bisect
import importlib
import math
import time

att = importlib.import_module("02_attention")  # softmax、visibility、attention 与输入检查

KINDS = ("full", "partial", "empty")  # 全可见、部分可见、全不可见（跳过）
MAX_BLOCKS = 4 * 10**6  # block_counts 逐块判断：一个笔误（块大小 1、长度一百万）不该一等不返
MAX_COUNTED = 2**20  # block_counts 接受的最长序列


# -- 一行分数，一块一块地读：在线 softmax ----------------------------------------------------------
def _update(m_old, l_old, o_old, s, v_rows):
    """读进一块 Key：旧的 (m, l, O) 与这一块的分数 ``s``、V 行 → 新的 (m, l, O)。"""
    m_new = max(m_old, *s)  # 运行中的最大值
    # 这一行到此还没有一个可见的 Key（m_new = −∞）：以 0 代替 m_new 作基准，免得 (−∞) − (−∞) = NaN
    base = 0.0 if m_new == -math.inf else m_new
    alpha = math.exp(m_old - base)  # 旧的 l、O 以 m_old 为基准：乘 e^(m_old − m_new) 换到新基准
    p = [math.exp(x - base) for x in s]  # 这一块的 e^(s − m_new)；被禁止的 −∞ 得 0
    l_new = alpha * l_old + sum(p)
    o_new = [
        alpha * o + sum(pj * row[c] for pj, row in zip(p, v_rows)) for c, o in enumerate(o_old)
    ]
    return m_new, l_new, o_new


def spans(n: int, block: int) -> list[range]:
    """0 … n−1 切成每 ``block`` 个一块，最后一块可以不满。
    >>> [list(r) for r in spans(5, 2)]
    [[0, 1], [2, 3], [4]]
    """
    n = att.check_count(n, "n", maximum=MAX_COUNTED)
    block = att.check_count(block, "block", maximum=MAX_COUNTED)
    return [range(start, min(start + block, n)) for start in range(0, n, block)]


def online_softmax(scores, block: int) -> dict:
    """一行分数每 ``block`` 个一块地读，只记 (m, l)：``trace`` 是每读完一块后的 (m, l)，
    ``weights`` 用最后的 m、l 再算一遍 e^(s − m) / l，等于 ``02_attention.softmax(scores)``。
    >>> r = online_softmax([1.0, 0.0, 3.0, 2.0], 2)
    >>> [(m, round(l, 4)) for m, l in r["trace"]]
    [(1.0, 1.3679), (3.0, 1.553)]
    >>> [round(w, 4) for w in r["weights"]] == [round(w, 4) for w in att.softmax([1, 0, 3, 2])]
    True
    """
    s = att.as_vector(scores, "scores", masked=True)
    block = att.check_count(block, "block", maximum=att.MAX_POSITIONS)
    if max(s) == -math.inf:
        raise ValueError("scores 的全部候选都被屏蔽（全是 −∞），没有可分配的权重")
    m = -math.inf
    total = 0.0
    trace = []
    for cols in spans(len(s), block):
        m, total, _ = _update(m, total, [], [s[j] for j in cols], [[] for _ in cols])
        trace.append((m, total))
    return {"weights": [math.exp(x - m) / total for x in s], "trace": trace}


def online_row(scores, v, block: int, *, empty_row: str = "error") -> dict:
    """一个查询行的注意力，Key 每 ``block`` 个一块：``trace`` 是每读完一块后的 (m, l, O)，
    ``output`` 是 O / l，``logsumexp`` 是 m + ln l（这一行 softmax 的分母取对数）。
    一个 Key 也不可见（``scores`` 全是 −∞）时按 ``empty_row``：``"error"`` 报错，``"zero"``
    输出 0、logsumexp 为 −∞（FlexAttention 的约定）。
    >>> r = online_row([1.0, 0.0, 3.0], [[10.0], [20.0], [30.0]], 2)
    >>> [(m, round(l, 4), [round(o, 4) for o in acc]) for m, l, acc in r["trace"]]
    [(1.0, 1.3679, [17.3576]), (3.0, 1.1851, [32.3491])]
    >>> [round(x, 4) for x in r["output"]]
    [27.296]
    >>> round(r["logsumexp"], 4)
    3.1698
    """
    s = att.as_vector(scores, "scores", masked=True)
    v = att.as_matrix(v, "V")
    block = att.check_count(block, "block", maximum=att.MAX_POSITIONS)
    if len(v) != len(s):
        raise ValueError(f"V 的行数必须等于 scores 的个数，收到 {len(v)} 与 {len(s)}")
    if empty_row not in att.EMPTY_ROW_POLICIES:
        raise ValueError(f'empty_row 必须是 "error" 或 "zero"，收到 {empty_row!r}')
    if empty_row == "error" and max(s) == -math.inf:
        raise ValueError('这一行没有任何可见的 Key；可用 empty_row="zero" 让它输出 0')
    m = -math.inf
    total = 0.0
    o = [0.0] * len(v[0])
    trace = []
    for cols in spans(len(s), block):
        m, total, o = _update(m, total, o, [s[j] for j in cols], [v[j] for j in cols])
        trace.append((m, total, o))
    if total == 0.0:  # 一个 Key 也没读到：输出 0，logsumexp = −∞
        return {"output": [0.0] * len(o), "trace": trace, "logsumexp": -math.inf}
    return {"output": [x / total for x in o], "trace": trace, "logsumexp": m + math.log(total)}


def rescale_factors(maxima) -> list[float]:
    """读进每一块时，旧的 l、O 所乘的因子 e^(m_old − m_new)；``maxima`` 是每读完一块后的 m
    （``trace`` 里的第一项）。第一块之前 m = −∞，因子是 e^(−∞) = 0：那时 l、O 都是 0。
    m_new 仍是 −∞ 时与 ``_update`` 一样以 0 作基准。
    >>> rescale_factors([m for m, l in online_softmax([1.0, 0.0, 3.0, 2.0], 2)["trace"]])
    [0.0, 0.1353352832366127]
    """
    maxima = [-math.inf] + att.as_vector(maxima, "maxima", masked=True)
    if any(a > b for a, b in zip(maxima, maxima[1:])):
        raise ValueError(f"maxima 是运行中的最大值，不会变小，收到 {maxima[1:]}")
    bases = [0.0 if m == -math.inf else m for m in maxima[1:]]  # 与 _update 的 base 相同
    return [math.exp(old - base) for old, base in zip(maxima, bases)]


def masked_scores(q, k, visible) -> list[list[float]]:
    """缩放后的分数表，禁止的格子换成 −∞：每一行就是 ``online_row`` 读的一行分数。
    >>> masked_scores([[1.0, 0.0]], [[2.0, 0.0], [0.0, 2.0]], [[True, False]])
    [[1.414213562373095, -inf]]
    """
    q = att.as_matrix(q, "Q")
    k = att.as_matrix(k, "K")
    visible = _table(visible)
    if len(visible) != len(q) or len(visible[0]) != len(k):
        shape = f"{len(visible)}×{len(visible[0])}"
        raise ValueError(f"visible 的形状应为 {len(q)}×{len(k)}，收到 {shape}")
    scores = att.scaled_scores(q, k)
    return [
        [x if ok else -math.inf for x, ok in zip(row, allowed)]
        for row, allowed in zip(scores, visible)
    ]  # (n_query, n_key)


# -- 块的三类：全可见、部分可见、全不可见 ---------------------------------------------------------
def _table(visible, name: str = "visible") -> list[list[bool]]:
    """非空、矩形的 True/False 表。"""
    rows = [att.flags(row, f"{name}[{i}]") for i, row in enumerate(att.as_list(visible, name))]
    if not rows or not rows[0] or any(len(row) != len(rows[0]) for row in rows):
        raise ValueError(f"{name} 必须是非空的矩形表，收到各行的长度 {[len(r) for r in rows]}")
    return rows


def _kind(cells: list[bool]) -> str:
    return "full" if all(cells) else "partial" if any(cells) else "empty"


def block_kinds(visible, block_q: int, block_k: int) -> list[list[str]]:
    """把可见性表切成 ``block_q × block_k`` 的块，每块标成 ``"full"``（格子全允许）、
    ``"partial"``（有的允许）或 ``"empty"``（全禁止）：第 a 行第 b 列是查询块 a 与 Key 块 b。
    >>> block_kinds(att.visibility(4, 6, past=2), 2, 2)
    [['full', 'partial', 'empty'], ['full', 'full', 'partial']]
    """
    visible = _table(visible)
    block_q = att.check_count(block_q, "block_q", maximum=att.MAX_POSITIONS)
    block_k = att.check_count(block_k, "block_k", maximum=att.MAX_POSITIONS)
    return [
        [
            _kind([visible[i][j] for i in rows for j in cols])
            for cols in spans(len(visible[0]), block_k)
        ]
        for rows in spans(len(visible), block_q)
    ]  # (查询块数, Key 块数)


# -- 分块注意力：一次一个查询块，一块一块地读 Key -------------------------------------------------
def _tiled(q, k, v, kinds, inside, block_q: int, block_k: int, update=_update):
    """分块注意力的循环（输入已检查）。``inside`` 是部分可见的块里查的表，``update`` 是读进
    一块的那一步；两者只为故意写错的版本而可换。返回 ``(outputs, counts)``。"""
    scale = att.score_scale(len(q[0]))
    outputs = []
    counts = dict.fromkeys(KINDS, 0)
    for a, rows in enumerate(spans(len(q), block_q)):  # 查询块 a：它的每一行各有 m、l、O
        m_i = [-math.inf for _ in rows]
        l_i = [0.0 for _ in rows]
        o_i = [[0.0] * len(v[0]) for _ in rows]
        for b, cols in enumerate(spans(len(k), block_k)):  # Key 块 b
            counts[kinds[a][b]] += 1
            if kinds[a][b] == "empty":
                continue  # 整块都禁止：不读 K、V，也不算分数
            for r, i in enumerate(rows):
                s = [sum(x * y for x, y in zip(q[i], k[j])) / scale for j in cols]
                if kinds[a][b] == "partial":  # 只有部分可见的块要查表
                    s = [x if inside[i][j] else -math.inf for x, j in zip(s, cols)]
                m_i[r], l_i[r], o_i[r] = update(m_i[r], l_i[r], o_i[r], s, [v[j] for j in cols])
        for total, o in zip(l_i, o_i):  # l = 0：一个 Key 也没读到，把 l 当 1，输出 0
            outputs.append([x / (total if total > 0 else 1.0) for x in o])
    return outputs, counts  # (n_query, d_v)


def _inputs(q, k, v, visible, block_q, block_k):
    """检查 Q、K、V、可见性表与块的大小，返回检查过的 (q, k, v, visible, block_q, block_k)。"""
    q = att.as_matrix(q, "Q")
    k = att.as_matrix(k, "K")
    v = att.as_matrix(v, "V")
    visible = _table(visible)
    block_q = att.check_count(block_q, "block_q", maximum=att.MAX_POSITIONS)
    block_k = att.check_count(block_k, "block_k", maximum=att.MAX_POSITIONS)
    if len(q[0]) != len(k[0]):
        raise ValueError(f"Q 与 K 的列数（向量维度）必须相同，收到 {len(q[0])} 与 {len(k[0])}")
    if len(v) != len(k):
        raise ValueError(f"V 的行数必须等于 K 的行数，收到 V 为 {len(v)}、K 为 {len(k)}")
    if len(visible) != len(q) or len(visible[0]) != len(k):
        shape = f"{len(visible)}×{len(visible[0])}"
        raise ValueError(f"visible 的形状应为 {len(q)}×{len(k)}，收到 {shape}")
    att.scaled_scores(q, k)  # 点积溢出时在这里报错，而不是在块里留下 inf
    return q, k, v, visible, block_q, block_k


def tiled_attention(q, k, v, visible, *, block_q: int, block_k: int, empty_row: str = "error"):
    """按 ``block_q × block_k`` 的块计算注意力，返回 ``(outputs, counts)``：输出与
    ``02_attention.masked_attention`` 相同（只差舍入），``counts`` 数出全可见、部分可见和跳过的块。

    只在部分可见的块里查 ``visible``；全不可见的块不读。一个 Key 也不可见的行按 ``empty_row``：
    ``"error"`` 报错并指出是哪一行，``"zero"`` 输出 0，绝不留下 NaN。
    >>> q = k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0]]
    >>> v = [[10.0], [20.0], [30.0], [40.0]]
    >>> out, counts = tiled_attention(q, k, v, att.visibility(4, 4), block_q=2, block_k=2)
    >>> [round(row[0], 4) for row in out], counts
    ([10.0, 16.6976, 22.5523, 29.4288], {'full': 1, 'partial': 2, 'empty': 1})
    """
    if empty_row not in att.EMPTY_ROW_POLICIES:
        raise ValueError(f'empty_row 必须是 "error" 或 "zero"，收到 {empty_row!r}')
    q, k, v, visible, block_q, block_k = _inputs(q, k, v, visible, block_q, block_k)
    empty = [i for i, row in enumerate(visible) if not any(row)]
    if empty and empty_row == "error":
        raise ValueError(
            f"第 {empty[0]} 个查询行没有任何可见的 Key，不能做普通 softmax；"
            '可用 empty_row="zero" 让这一行输出 0'
        )
    kinds = block_kinds(visible, block_q, block_k)
    return _tiled(q, k, v, kinds, visible, block_q, block_k)


# -- 不造表，直接数块：因果、滑动窗口、文档，带缓存 -----------------------------------------------
def block_counts(
    n_query: int,
    n_key: int,
    block_q: int,
    block_k: int,
    *,
    window: int | None = None,
    doc_lengths: list[int] | None = None,
) -> dict:
    """因果规则（可再加滑动窗口 ``window`` 与文档 ``doc_lengths``）下三类块各有几个，不造可见性表。

    查询是最后 ``n_query`` 个位置（右下对齐）：第 i 行的绝对位置 p = past + i，
    past = n_key − n_query。
    位置 p 能读的 Key 是一整段 lo(p) … p：因果 lo = 0，窗口 lo = p − w + 1，文档 lo = 所在文档的
    起点（几条规则取最大的 lo）。lo 不随 p 减小，所以绝对位置 p0 … p1 这一块查询读到的 Key 合起来
    是 lo(p0) … p1；一块 Key k0 … k1 全可见，当且仅当 lo(p1) ≤ k0 且 k1 ≤ p0。
    >>> block_counts(8, 8, 2, 2)
    {'full': 6, 'partial': 4, 'empty': 6}
    >>> block_counts(4, 6, 2, 2)
    {'full': 3, 'partial': 2, 'empty': 1}
    >>> block_counts(8, 8, 2, 2, window=4)
    {'full': 3, 'partial': 6, 'empty': 7}
    >>> block_counts(8, 8, 2, 2, doc_lengths=[4, 4])
    {'full': 2, 'partial': 4, 'empty': 10}
    """
    n_query = att.check_count(n_query, "n_query", maximum=MAX_COUNTED, why="逐块判断要有个头")
    n_key = att.check_count(n_key, "n_key", maximum=MAX_COUNTED, why="逐块判断要有个头")
    block_q = att.check_count(block_q, "block_q", maximum=MAX_COUNTED)
    block_k = att.check_count(block_k, "block_k", maximum=MAX_COUNTED)
    if n_query > n_key:
        raise ValueError(f"n_query 不能大于 n_key（查询是最后几个位置），收到 {n_query} > {n_key}")
    if -(-n_query // block_q) * -(-n_key // block_k) > MAX_BLOCKS:
        raise ValueError(f"块数 (n_query / block_q) × (n_key / block_k) 不能超过 {MAX_BLOCKS}")
    if window is not None:
        window = att.check_count(window, "window", maximum=MAX_COUNTED)
    starts = [0]  # 每篇文档的起点
    if doc_lengths is not None:
        lengths = [
            att.check_count(n, f"doc_lengths[{d}]")
            for d, n in enumerate(att.as_list(doc_lengths, "doc_lengths"))
        ]
        if sum(lengths) != n_key:
            raise ValueError(f"doc_lengths 之和必须等于 n_key = {n_key}，收到 {sum(lengths)}")
        starts = [sum(lengths[:d]) for d in range(len(lengths))]

    def lo(p):  # 位置 p 能读的第一个 Key
        first = starts[bisect.bisect_right(starts, p) - 1]
        return first if window is None else max(first, p - window + 1)

    past = n_key - n_query
    keys = spans(n_key, block_k)
    counts = dict.fromkeys(KINDS, 0)
    for rows in spans(n_query, block_q):
        p0 = past + rows[0]
        p1 = past + rows[-1]  # 这一块查询的绝对位置 p0 … p1
        first = lo(p0) // block_k
        last = p1 // block_k  # 只有 first … last 这几块有可见的格子
        for cols in keys[first : last + 1]:
            full = lo(p1) <= cols[0] and cols[-1] <= p0
            counts["full" if full else "partial"] += 1
        counts["empty"] += len(keys) - (last + 1 - first)
    return counts


def rule_table(
    n_query: int,
    n_key: int,
    *,
    window: int | None = None,
    doc_lengths: list[int] | None = None,
) -> list[list[bool]]:
    """``block_counts`` 数的同一条规则，造成可见性表：因果（查询是最后 ``n_query`` 个位置），
    可再加滑动窗口 ``window``（连同自己共 w 个 Key）与文档 ``doc_lengths``（只读同一篇）。
    >>> [[int(x) for x in row] for row in rule_table(2, 4, window=2)]
    [[0, 1, 1, 0], [0, 0, 1, 1]]
    >>> [[int(x) for x in row] for row in rule_table(3, 3, doc_lengths=[1, 2])]
    [[1, 0, 0], [0, 1, 0], [0, 1, 1]]
    """
    n_key = att.check_count(n_key, "n_key", maximum=att.MAX_POSITIONS)
    n_query = att.check_count(n_query, "n_query", maximum=n_key, why="查询是最后几个位置")
    if window is not None:
        window = att.check_count(window, "window", maximum=MAX_COUNTED)
    lengths = [n_key]
    if doc_lengths is not None:
        lengths = [
            att.check_count(n, f"doc_lengths[{d}]")
            for d, n in enumerate(att.as_list(doc_lengths, "doc_lengths"))
        ]
        if sum(lengths) != n_key:
            raise ValueError(f"doc_lengths 之和必须等于 n_key = {n_key}，收到 {sum(lengths)}")
    doc = [d for d, length in enumerate(lengths) for _ in range(length)]  # 每个位置所在的文档
    past = n_key - n_query
    return [
        [
            j <= past + i and (window is None or j > past + i - window) and doc[j] == doc[past + i]
            for j in range(n_key)
        ]
        for i in range(n_query)
    ]  # (n_query, n_key)


# -- 故意写错的分块（只用于对照与测试，证明核对真的会失败） ---------------------------------------
def _update_without_rescale(m_old, l_old, o_old, s, v_rows):
    # 写错：这一块按新的最大值算，旧的 l、O 却原样加上，没有乘 e^(m_old − m_new)
    m_new, l_block, o_block = _update(m_old, 0.0, [0.0] * len(o_old), s, v_rows)
    return m_new, l_old + l_block, [a + b for a, b in zip(o_old, o_block)]


def _update_without_guard(m_old, l_old, o_old, s, v_rows):
    # 写错：不看 m_new 是不是 −∞；整块 −∞ 而 m_old 也是 −∞ 时，e^((−∞) − (−∞)) = NaN
    m_new = max(m_old, *s)
    alpha = math.exp(m_old - m_new)
    p = [math.exp(x - m_new) for x in s]
    l_new = alpha * l_old + sum(p)
    o_new = [
        alpha * o + sum(pj * row[c] for pj, row in zip(p, v_rows)) for c, o in enumerate(o_old)
    ]
    return m_new, l_new, o_new


MISTAKES = {
    "no_rescale": "读进新的一块时，旧的 l 与 O 没有乘 e^(m_old − m_new)",
    "skip_partial": "部分可见的块也整块跳过，只算全可见的块",
    "row_index": "部分可见的块里按批内行号判断因果（j ≤ i），忘了加 past",
    "no_guard": "m 还是 −∞ 时照样算 e^(s − m)，没有用 0 代替 −∞",
}


def mistaken_tiled_attention(q, k, v, visible, mistake: str, *, block_q: int, block_k: int):
    """故意写错的分块注意力（``mistake`` 是 ``MISTAKES`` 的键），返回 ``(outputs, counts)``；
    一个 Key 也不可见的行不报错（像 ``empty_row="zero"``），好让 NaN 露出来。只用于对照。
    >>> k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> v = [[10.0], [20.0], [30.0]]
    >>> table = att.visibility(2, 3, past=1)  # 缓存里 1 个位置，新来 2 个查询
    >>> out, _ = mistaken_tiled_attention(k[1:], k, v, table, "row_index", block_q=2, block_k=2)
    >>> [round(row[0], 4) for row in out]  # 正确的是 16.6976、22.5523
    [16.6976, 15.0]
    """
    if not isinstance(mistake, str) or mistake not in MISTAKES:
        raise ValueError(f"mistake 必须是 {'、'.join(MISTAKES)} 之一，收到 {mistake!r}")
    q, k, v, visible, block_q, block_k = _inputs(q, k, v, visible, block_q, block_k)
    kinds = block_kinds(visible, block_q, block_k)
    inside = visible
    update = _update
    if mistake == "no_rescale":
        update = _update_without_rescale
    elif mistake == "skip_partial":
        kinds = [["empty" if x == "partial" else x for x in row] for row in kinds]
    elif mistake == "row_index":
        inside = att.row_index_visibility(len(q), len(k))
    else:
        update = _update_without_guard
    return _tiled(q, k, v, kinds, inside, block_q, block_k, update)


# -- 实测：numpy 因果注意力，跳过空块与全部照算 ---------------------------------------------------
MAX_TIMED_N = 4096
MAX_TIMED_D = 1024
MAX_REPEATS = 1000


def _timed_array(x: object, name: str):
    import numpy as np  # 只有计时需要 numpy

    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):  # None、字符串、参差不齐的行
        raise ValueError(f"{name} 必须是由实数组成的二维数组，收到 {type(x).__name__}") from None
    if a.ndim != 2 or 0 in a.shape or not np.isfinite(a).all():
        raise ValueError(f"{name} 必须是非空、元素全部有限的二维数组，收到形状 {a.shape}")
    att.check_count(a.shape[0], f"{name} 的行数", maximum=MAX_TIMED_N, why="只为计时")
    return a


def causal_plan(n: int, block: int, *, skip_empty: bool = True) -> list[list[str]]:
    """``numpy_tiled_attention`` 对每个（查询块，Key 块）做什么：``"full"`` 算、不加 mask，
    ``"partial"`` 算、加 mask，``"skip"`` 不算，``"discard"`` 像全可见的块一样照算、不加 mask，
    结果丢掉。对角线右上的块，``skip_empty=True`` 时跳过，``False`` 时照算后丢掉：两种算法在每个
    算了的块上做同样的事，只差算不算那些块。
    >>> causal_plan(6, 2)
    [['partial', 'skip', 'skip'], ['full', 'partial', 'skip'], ['full', 'full', 'partial']]
    >>> causal_plan(6, 2, skip_empty=False)[0]
    ['partial', 'discard', 'discard']
    """
    n = att.check_count(n, "n", maximum=MAX_TIMED_N, why="只为计时")
    block = att.check_count(block, "block", maximum=MAX_TIMED_N)
    if not isinstance(skip_empty, bool):
        raise ValueError(f"skip_empty 必须是 True 或 False，收到 {skip_empty!r}")
    empty = "skip" if skip_empty else "discard"
    return [
        [
            empty if cols[0] > rows[-1] else "partial" if cols[-1] > rows[0] else "full"
            for cols in spans(n, block)
        ]
        for rows in spans(n, block)
    ]  # (查询块数, Key 块数)


def _numpy_update(m, total, o, s, v_cols):
    """numpy 版的读进一块：与 ``_update`` 相同，一次算一个查询块的每一行。"""
    import numpy as np  # 只有计时需要 numpy

    m_new = np.maximum(m, s.max(axis=1))
    base = np.where(m_new == -np.inf, 0.0, m_new)  # 与 _update 一样，免得 (−∞) − (−∞)
    alpha = np.exp(m - base)
    p = np.exp(s - base[:, None])
    return m_new, alpha * total + p.sum(axis=1), alpha[:, None] * o + p @ v_cols


def numpy_tiled_attention(q, k, v, block: int, *, skip_empty: bool = True):
    """因果注意力（查询与 Key 一样多，没有缓存），按 ``block × block`` 的块用 numpy 算，
    每块做什么见 ``causal_plan``。``skip_empty=False`` 时对角线右上的块也照算（不加 mask，
    与全可见的块同样的工作），再把结果丢掉，不改变输出。
    >>> q = k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> out = numpy_tiled_attention(q, k, [[10.0], [20.0], [30.0]], 2, skip_empty=False)
    >>> [round(float(x), 4) for x in out[:, 0]]
    [10.0, 16.6976, 22.5523]
    """
    import numpy as np  # 只有计时需要 numpy

    q = _timed_array(q, "q")
    k = _timed_array(k, "k")
    v = _timed_array(v, "v")
    if q.shape != k.shape or v.shape[0] != k.shape[0]:
        raise ValueError(
            f"q、k 必须同形状 (n, d)，v 是 (n, d_v)；收到 {q.shape}、{k.shape}、{v.shape}"
        )
    n, d = q.shape
    plan = causal_plan(n, block, skip_empty=skip_empty)
    out = np.empty_like(v)
    with np.errstate(over="ignore", invalid="ignore"):  # 溢出在下面统一报告
        for rows, todo in zip(spans(n, block), plan):
            rows = np.array(rows)
            m = np.full(len(rows), -np.inf)
            total = np.zeros(len(rows))
            o = np.zeros((len(rows), v.shape[1]))
            for cols, what in zip(spans(n, block), todo):
                if what == "skip":
                    continue  # 不读 K、V，也不算分数
                cols = np.array(cols)
                s = q[rows] @ k[cols].T / np.sqrt(d)  # (block, block)
                if what == "partial":  # 只有对角线上的块要加 mask
                    s = np.where(cols[None, :] <= rows[:, None], s, -np.inf)
                state = _numpy_update(m, total, o, s, v[cols])
                if what != "discard":  # 全不可见的块照算了，结果却不能用
                    m, total, o = state
            out[rows] = o / total[:, None]
    if not np.isfinite(out).all():
        raise ValueError("q·k 或输出超出了浮点数的范围：请缩小 q、k、v 的数值")
    return out


def time_tiles(
    ns: list[int],
    block: int = 64,
    d: int = 32,
    repeats: int = 3,
    seed: int = 0,
    budget: float | None = None,
) -> list[dict]:
    """在本机上给 ``numpy_tiled_attention`` 计时，跳过空块与全部照算各一次：每个 n 先各热身
    一次，再交替计时至多 ``repeats`` 次，取最短的一次（秒）。计的是本进程占用处理器的时间
    （``time.process_time``）：机器同时做别的事时，等着轮到它的时间不算在内。
    每个 n 一条记录 ``{"n", "skip", "all", "runs", "same", "blocks"}``：``same`` 是两种算法的
    输出之差是否不超过 1e-12，``blocks`` 是两者各算几块（``causal_plan`` 里不是 ``"skip"`` 的块）。
    ``budget``（秒）过了之后不再重复：已经计过一次的 n 就此停下，还没计的 n 各计一次。
    >>> rows = time_tiles([8, 16], block=4, d=4, repeats=2)
    >>> [(row["n"], row["runs"], row["same"], row["blocks"]) for row in rows]
    [(8, 2, True, {'skip': 3, 'all': 4}), (16, 2, True, {'skip': 10, 'all': 16})]
    """
    import numpy as np  # 只有计时需要 numpy

    ns = [
        att.check_count(n, f"ns[{i}]", maximum=MAX_TIMED_N, why="只为计时")
        for i, n in enumerate(att.as_list(ns, "ns"))
    ]
    if not ns:
        raise ValueError("ns 不能为空：至少要给一个序列长度")
    att.check_count(block, "block", maximum=MAX_TIMED_N)
    att.check_count(d, "d", maximum=MAX_TIMED_D, why="真实模型的 head_dim 不过几百")
    att.check_count(repeats, "repeats", maximum=MAX_REPEATS, why="免得一等不返")
    if budget is not None and not (math.isfinite(att.real(budget, "budget")) and budget >= 0):
        raise ValueError(f"budget 必须是不小于 0 的有限秒数（或 None 表示不限），收到 {budget!r}")
    rng = np.random.default_rng(att.check_count(seed, "seed", minimum=0))
    deadline = math.inf if budget is None else time.perf_counter() + budget
    rows = []
    for n in ns:
        q, k, v = (rng.standard_normal((n, d)) for _ in range(3))  # 各 (n, d)
        kept = numpy_tiled_attention(q, k, v, block)  # 热身：第一次调用的额外开销不计入
        every = numpy_tiled_attention(q, k, v, block, skip_empty=False)
        runs = {True: [], False: []}
        while len(runs[True]) < repeats and (not runs[True] or time.perf_counter() < deadline):
            for skip in (True, False):  # 交替计时：机器忽快忽慢时两边受的影响相近
                start = time.process_time()
                numpy_tiled_attention(q, k, v, block, skip_empty=skip)
                runs[skip].append(time.process_time() - start)
        computed = {
            "skip" if skip else "all": sum(
                what != "skip" for row in causal_plan(n, block, skip_empty=skip) for what in row
            )
            for skip in (True, False)
        }
        rows.append(
            {
                "n": n,
                "skip": min(runs[True]),
                "all": min(runs[False]),
                "runs": len(runs[True]),
                "same": bool(np.abs(kept - every).max() <= 1e-12),
                "blocks": computed,
            }
        )
    return rows


# -- 自检与演示 ------------------------------------------------------------------------------------
# 演示：缓存里已有 2 个位置，新来 4 个查询，因果规则；每块 2 × 2。
DEMO_Q = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 1.0]]
DEMO_K = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0], [0.0, -1.0], [1.0, -1.0]]
DEMO_V = [[10.0], [20.0], [30.0], [40.0], [50.0], [60.0]]
DEMO_PAST = 2
DEMO_BLOCK = 2
# 一行分数一块一块地读：第二块的最大值比第一块的大，第三块的不比前面的大。
ROW_SCORES = [1.0, 0.0, 3.0, 2.0, 0.5, 2.5]
ROW_V = [[2.0], [4.0], [6.0], [8.0], [10.0], [12.0]]
ROW_BLOCK = 2
COUNT_NS = [1024, 4096, 16384]  # 代价一页分数表一节的长度
COUNT_BLOCK = 128  # FlexAttention 的默认块大小


def self_test() -> None:
    """快速自检：在线 softmax 等于一次算完的 softmax，分块等于一次算完的注意力，直接数块等于
    逐块查表，四种写错的版本都被认出。出错时抛 AssertionError。"""
    online = online_softmax(ROW_SCORES, ROW_BLOCK)["weights"]
    gap = att.max_abs_diff([online], [att.softmax(ROW_SCORES)])
    att.check(gap < 1e-12, "在线 softmax 应等于一次算完的 softmax")
    visible = att.visibility(len(DEMO_Q), len(DEMO_K), past=DEMO_PAST)
    _, right = att.masked_attention(DEMO_Q, DEMO_K, DEMO_V, visible)
    blocks = {"block_q": DEMO_BLOCK, "block_k": DEMO_BLOCK}
    tiled, counts = tiled_attention(DEMO_Q, DEMO_K, DEMO_V, visible, **blocks)
    att.check(att.max_abs_diff(tiled, right) < 1e-12, "分块的输出应等于一次算完的注意力")
    kinds = [x for row in block_kinds(visible, DEMO_BLOCK, DEMO_BLOCK) for x in row]
    att.check(counts == {x: kinds.count(x) for x in KINDS}, "counts 应是 block_kinds 里各类的个数")
    direct = block_counts(len(DEMO_Q), len(DEMO_K), DEMO_BLOCK, DEMO_BLOCK)
    att.check(direct == counts, "不造表数出的块应等于逐块查表")
    poisoned = [row if j <= DEMO_PAST else [9999.0] for j, row in enumerate(DEMO_V)]
    first, _ = tiled_attention(DEMO_Q[:1], DEMO_K, poisoned, [visible[0]], **blocks)
    att.check(first == tiled[:1], "改动未来位置的 V 不应改变第 0 行的输出")
    padded = att.visibility(4, 4, key_valid=[False, True, True, True])  # 行 0 整行被屏蔽
    for mistake in MISTAKES:
        table = padded if mistake == "no_guard" else visible
        q = DEMO_Q[: len(table)]
        k = DEMO_K[: len(table[0])]
        v = DEMO_V[: len(table[0])]
        wrong, _ = mistaken_tiled_attention(q, k, v, table, mistake, **blocks)
        good, _ = tiled_attention(q, k, v, table, empty_row="zero", **blocks)
        caught = any(math.isnan(x[0]) or abs(x[0] - y[0]) > 1e-9 for x, y in zip(wrong, good))
        att.check(caught, f"对照应当认出写错的版本：{MISTAKES[mistake]}")


def run_demo() -> dict:
    """演示结果（JSON）：一行分数的 (m, l)，演示的块、分块与一次算完之差，长序列的因果块数。"""
    visible = att.visibility(len(DEMO_Q), len(DEMO_K), past=DEMO_PAST)
    blocks = {"block_q": DEMO_BLOCK, "block_k": DEMO_BLOCK}
    tiled, counts = tiled_attention(DEMO_Q, DEMO_K, DEMO_V, visible, **blocks)
    _, right = att.masked_attention(DEMO_Q, DEMO_K, DEMO_V, visible)
    row = online_row(ROW_SCORES, ROW_V, ROW_BLOCK)
    return {
        "性质": "人工构造的小矩阵，没有训练过的模型",
        "一行分数_每块后的m与l": [[m, total] for m, total, _ in row["trace"]],
        "一行分数_输出": row["output"],
        "演示_块的种类": block_kinds(visible, DEMO_BLOCK, DEMO_BLOCK),
        "演示_块数": counts,
        "演示_分块与一次算完的最大差": att.max_abs_diff(tiled, right),
        f"因果_每块{COUNT_BLOCK}_块数": {
            str(n): block_counts(n, n, COUNT_BLOCK, COUNT_BLOCK) for n in COUNT_NS
        },
    }


if __name__ == "__main__":
    self_test()
    att.print_json(run_demo())
