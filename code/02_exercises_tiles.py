"""第 2 章“分块计算”一页的练习：题目的输入与答案，全部由教学代码算出。

题目里的数来自这里的常量，解答里的每个数来自 ``02_tiles.py``（它又用 ``02_attention.py``，三个文件
放在同一目录）。每道题的数据都是人工构造的小例子，与正文的演示数据不同。运行
``python3 02_exercises_tiles.py``：先核对答案，再以 JSON 打印每道题的答案。
"""

from __future__ import annotations

import importlib
import math

att = importlib.import_module("02_attention")
tl = importlib.import_module("02_tiles")

# 练习 2.10.1：一行分数，每块 ONLINE_BLOCK 个（最后一块不满）。
ONLINE_SCORES = [2.0, 0.0, 1.0, 4.0, 3.0]
ONLINE_BLOCK = 2
# 练习 2.10.2：缓存里 CACHE_PAST 个位置，新来 CACHE_NEW 个查询，因果规则；查询每块 CACHE_BQ 行，
# Key 每块 CACHE_BK 个。
CACHE_PAST = 3
CACHE_NEW = 5
CACHE_BQ = 2
CACHE_BK = 3
# 练习 2.10.3：滑动窗口 WINDOW，每块 WINDOW_BLOCK × WINDOW_BLOCK，几个序列长度，没有缓存。
WINDOW = 1024
WINDOW_BLOCK = 128
WINDOW_NS = [2048, 4096, 8192, 16384]
# 练习 2.10.4：一条打包的序列，文档长度依次为 GUARD_DOCS，因果且同一文档；块是 GUARD_BLOCK 见方。
GUARD_DOCS = [3, 5]
GUARD_BLOCK = 2


# -- 练习 2.10.1 -----------------------------------------------------------------------------------
def online_trace(scores=ONLINE_SCORES, block: int = ONLINE_BLOCK) -> dict:
    """练习 2.10.1 的答案：每读完一块后的 (m, l)、每块的缩放因子 e^(m_old − m_new)、最后的权重。

    >>> a = online_trace()
    >>> [(m, round(l, 4)) for m, l in a["trace"]]
    [(2.0, 1.1353), (4.0, 1.2034), (4.0, 1.5713)]
    >>> [round(x, 4) for x in a["factors"]]
    [0.0, 0.1353, 1.0]
    """
    r = tl.online_softmax(scores, block)
    factors = tl.rescale_factors([m for m, _ in r["trace"]])  # 第一块之前 m = −∞：因子 0
    return {"trace": r["trace"], "factors": factors, "weights": r["weights"]}


# -- 练习 2.10.2 -----------------------------------------------------------------------------------
def cache_blocks(
    past: int = CACHE_PAST, new: int = CACHE_NEW, block_q: int = CACHE_BQ, block_k: int = CACHE_BK
) -> dict:
    """练习 2.10.2 的答案：每个（查询块，Key 块）的种类，三类各几块，以及算了几块、共几块。

    >>> a = cache_blocks()
    >>> a["kinds"]
    [['full', 'partial', 'empty'], ['full', 'full', 'partial'], ['full', 'full', 'full']]
    >>> a["counts"]
    {'full': 6, 'partial': 2, 'empty': 1}
    """
    past = att.check_count(past, "past", minimum=0, maximum=att.MAX_POSITIONS)
    new = att.check_count(new, "new", maximum=att.MAX_POSITIONS)
    visible = att.visibility(new, past + new, past=past)
    kinds = tl.block_kinds(visible, block_q, block_k)
    counts = tl.block_counts(new, past + new, block_q, block_k)
    return {
        "visible": visible,
        "kinds": kinds,
        "counts": counts,
        "computed": counts["full"] + counts["partial"],
        "blocks": sum(counts.values()),
    }


# -- 练习 2.10.3 -----------------------------------------------------------------------------------
def window_growth(window: int = WINDOW, block: int = WINDOW_BLOCK, ns=WINDOW_NS) -> list[dict]:
    """练习 2.10.3 的答案：每个长度下，因果与滑动窗口各算几块（全可见加部分可见）。

    >>> [(r["n"], r["causal"], r["window"]) for r in window_growth()]
    [(2048, 136, 108), (4096, 528, 252), (8192, 2080, 540), (16384, 8256, 1116)]
    """
    rows = []
    for i, n in enumerate(att.as_list(ns, "ns")):
        n = att.check_count(n, f"ns[{i}]", maximum=tl.MAX_COUNTED)
        causal = tl.block_counts(n, n, block, block)
        windowed = tl.block_counts(n, n, block, block, window=window)
        rows.append(
            {
                "n": n,
                "causal": causal["full"] + causal["partial"],
                "window": windowed["full"] + windowed["partial"],
                "blocks": sum(causal.values()),
            }
        )
    return rows


# -- 练习 2.10.4 -----------------------------------------------------------------------------------
def guard_rows(visible, block_q: int, block_k: int) -> list[int]:
    """分块计算时，哪些查询行读到一块全是 −∞ 的分数时，m 还是 −∞（没有保护就得 NaN）：按顺序
    读一个查询块里不跳过的 Key 块，某一行在这一块里一个 Key 也不可见，而此前的块里也没有。

    >>> guard_rows(att.visibility(4, 4, key_valid=[False, True, True, True]), 2, 2)
    [0]
    """
    kinds = tl.block_kinds(visible, block_q, block_k)  # 也检查了 visible 与块的大小
    n_query = len(visible)
    n_key = len(visible[0])
    rows = []
    for a, start in enumerate(range(0, n_query, block_q)):
        for i in range(start, min(start + block_q, n_query)):
            seen = False  # 这一行此前读到过可见的 Key 吗
            for b, first in enumerate(range(0, n_key, block_k)):
                if kinds[a][b] == "empty":
                    continue
                here = any(visible[i][first : first + block_k])
                if not here and not seen:
                    rows.append(i)
                    break
                seen = seen or here
    return rows


def packed_guard(docs=GUARD_DOCS, block: int = GUARD_BLOCK) -> dict:
    """练习 2.10.4 的答案：打包序列（因果且同一文档）的可见性表、块的种类，以及离不开保护的行。

    >>> packed_guard()["rows"]
    [3]
    """
    lengths = [att.check_count(n, f"docs[{d}]") for d, n in enumerate(att.as_list(docs, "docs"))]
    n = att.check_count(sum(lengths), "sum(docs)", maximum=att.MAX_POSITIONS)
    doc = [d for d, length in enumerate(lengths) for _ in range(length)]
    visible = tl.rule_table(n, n, doc_lengths=lengths)
    return {
        "doc": doc,
        "visible": visible,
        "kinds": tl.block_kinds(visible, block, block),
        "rows": guard_rows(visible, block, block),
    }


def answers() -> dict:
    """每道题的答案（JSON 可打印）。

    >>> sorted(answers())
    ['练习 2.10.1', '练习 2.10.2', '练习 2.10.3', '练习 2.10.4']
    """
    return {
        "练习 2.10.1": online_trace(),
        "练习 2.10.2": {key: value for key, value in cache_blocks().items() if key != "visible"},
        "练习 2.10.3": window_growth(),
        "练习 2.10.4": {key: value for key, value in packed_guard().items() if key != "visible"},
    }


def self_test() -> None:
    """核对答案：在线的权重等于 softmax；直接数块等于逐块查表；没有保护时恰是那几行成了 NaN。"""
    a1 = online_trace()
    gap = att.max_abs_diff([a1["weights"]], [att.softmax(ONLINE_SCORES)])
    att.check(gap < 1e-12, "练习 1：在线的权重应等于 softmax")
    a2 = cache_blocks()
    flat = [x for row in a2["kinds"] for x in row]
    att.check(a2["counts"] == {x: flat.count(x) for x in tl.KINDS}, "练习 2：两种数法应相同")
    a4 = packed_guard()
    n = len(a4["doc"])
    q = [[float(i % 3), 1.0] for i in range(n)]
    v = [[float(i)] for i in range(n)]
    blocks = {"block_q": GUARD_BLOCK, "block_k": GUARD_BLOCK}
    out, _ = tl.mistaken_tiled_attention(q, q, v, a4["visible"], "no_guard", **blocks)
    nan = [i for i, row in enumerate(out) if math.isnan(row[0])]
    att.check(nan == a4["rows"], "练习 4：没有保护时，恰是这几行成了 NaN")


if __name__ == "__main__":
    self_test()
    att.print_json(answers())
