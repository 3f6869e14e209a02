"""第 2 章“从手算到张量”一页的练习：题目的输入与答案，全部由教学代码算出。

题目里的数来自这里的常量，解答里的每个数来自 ``02_tensors.py``（它又用 ``02_attention.py``，三个文件
放在同一目录）。每道题的数据都是人工构造的小例子，与正文的演示数据不同。运行
``python3 02_exercises_tensors.py``：先核对答案，再以 JSON 打印每道题的答案。
"""

from __future__ import annotations

import importlib

import numpy as np

att = importlib.import_module("02_attention")
tn = importlib.import_module("02_tensors")

# 练习 2.9.1：汇点加窗口，n 个位置。
SINK_N = 7
SINK_SINKS = 2
SINK_W = 2
# 练习 2.9.2：左侧 PAD 的一批，预填之后再解码一个新词元。
POS_MASK = [[0, 0, 0, 1, 1], [0, 1, 1, 1, 1], [1, 1, 1, 1, 1]]
# 练习 2.9.3：哪一种 PAD 会有整行被屏蔽的查询行；float16 里分数为 FILL_SCORE 时，哪些行整行成了 −∞。
FILL_MASKS = {"左侧 PAD": [[0, 0, 1, 1]], "右侧 PAD": [[1, 1, 0, 0]]}
FILL_SCORE = -20.0
# 练习 2.9.4：写一个函数。练习 2.9.5：由 attention_mask 与 past 造出库要的 mask。
LIB_MASK = [[0, 1, 1, 1], [1, 1, 1, 1]]
LIB_PAST = 2


# -- 练习 2.9.1 ------------------------------------------------------------------------------------
def sink_rows(n: int = SINK_N, n_sink: int = SINK_SINKS, w: int = SINK_W) -> dict:
    """练习 2.9.1 的答案：每个查询可见的 Key，以及解码到最后一个位置时缓存至少要留几个 Key。

    >>> a = sink_rows()
    >>> a["visible"][-1]  # 最后一个查询：两个汇点与窗口里的两个
    [0, 1, 5, 6]
    >>> a["cache"]
    4
    """
    table = tn.visibility_batch(tn.sinks(n_sink, w), 1, 1, n, n)[0, 0]
    visible = [np.flatnonzero(row).tolist() for row in table]
    return {"visible": visible, "counts": [len(v) for v in visible], "cache": len(visible[-1])}


# -- 练习 2.9.2 ------------------------------------------------------------------------------------
def decode_positions(mask=POS_MASK) -> dict:
    """练习 2.9.2 的答案：预填时每个词元的位置，
    以及下一个新词元（接在每个序列末尾、不是 PAD）的位置。

    >>> a = decode_positions()
    >>> a["prefill"]
    [[0, 0, 0, 0, 1], [0, 0, 1, 2, 3], [0, 1, 2, 3, 4]]
    >>> a["next"]
    [2, 4, 5]
    """
    prefill = tn.positions_from_mask(mask)
    grown = np.concatenate([np.asarray(mask), np.ones((len(prefill), 1), dtype=int)], axis=1)
    return {"prefill": prefill.tolist(), "next": tn.positions_from_mask(grown)[:, -1].tolist()}


# -- 练习 2.9.3 ------------------------------------------------------------------------------------
def empty_rows(mask=FILL_MASKS["左侧 PAD"], score: float = FILL_SCORE, dtype: str = "float16"):
    """练习 2.9.3 的答案：因果与 PAD 取“与”后整行被屏蔽的行；
    只填一次 finfo.min、分数都是 ``score`` 时，
    在 ``dtype`` 里整行成了 −∞（softmax 会给出 NaN）的行。

    >>> empty_rows()
    {'empty': [0, 1], 'nan': [0, 1]}
    >>> empty_rows(FILL_MASKS["右侧 PAD"])
    {'empty': [], 'nan': []}
    """
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not np.isfinite(score):
        raise ValueError(f"score 必须是有限的数，收到 {score!r}")
    batch, n = tn.positions_from_mask(mask).shape  # 也检查 mask
    if batch != 1:
        raise ValueError(f"mask 必须只含一个序列，收到 {batch} 个")
    allowed = tn.visibility_batch(tn.and_rules(tn.causal, tn.padding(mask)), 1, 1, n, n)[0, 0]
    filled = tn.additive(allowed, dtype)  # 也检查 dtype
    with np.errstate(over="ignore"):  # float16 里 finfo.min 加上分数会溢出：这正是这道题要看的
        x = filled + filled.dtype.type(score)

    def rows(flags):
        return np.flatnonzero(flags).tolist()

    return {"empty": rows(~allowed.any(-1)), "nan": rows(np.isneginf(x).all(-1))}


# -- 练习 2.9.4：写一个函数（只用 Python 标准库） --------------------------------------------------
def window_counts(n: int, w: int, before: bool = False) -> list[int]:
    """``n`` 个位置每行可见的 Key 数。``before=False``：窗口连同自己共 ``w`` 个（本页的读法）；
    ``before=True``：自己加上前面 ``w`` 个（Mistral 参考代码的读法）。
    >>> window_counts(5, 2)
    [1, 2, 2, 2, 2]
    >>> window_counts(5, 2, before=True)
    [1, 2, 3, 3, 3]
    >>> window_counts(3, 0)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    ValueError: w 必须是不小于 1 的整数，收到 0
    """
    for name, x in (("n", n), ("w", w)):
        if not isinstance(x, int) or isinstance(x, bool) or x < 1:
            raise ValueError(f"{name} 必须是不小于 1 的整数，收到 {x!r}")
    if n > 10**7:  # 返回的是一个列表：一个笔误（n = 10¹²）不该吃光内存
        raise ValueError(f"n 不能超过 {10**7}（返回的列表要放进内存），收到 {n}")
    if not isinstance(before, bool):
        raise ValueError(f"before 必须是 True 或 False，收到 {before!r}")
    most = w + 1 if before else w  # 一行最多可见的 Key
    return [min(i + 1, most) for i in range(n)]


# -- 练习 2.9.5 ------------------------------------------------------------------------------------
def library_masks(mask=LIB_MASK, past: int = LIB_PAST) -> dict:
    """练习 2.9.5 的答案：SDPA 的布尔 ``attn_mask``（形状 (batch, 1, n_query, n_key)，
    True = 允许）；
    MultiheadAttention 的 ``key_padding_mask``（True = 不读）；``is_causal=True`` 的表与它错的行。
    >>> a = library_masks()
    >>> a["attn_mask"][0, 0].astype(int).tolist()
    [[0, 1, 1, 0], [0, 1, 1, 1]]
    >>> a["key_padding_mask"][0].tolist()
    [True, False, False, False]
    >>> a["wrong"][0]
    [0, 1]
    """
    batch, n_key = tn.positions_from_mask(mask).shape  # 也检查 mask
    past = att.check_count(past, "past", minimum=0, maximum=n_key - 1, why="至少要有一个新查询")
    n_query = n_key - past
    rule = tn.and_rules(tn.causal, tn.padding(mask))
    attn_mask = tn.visibility_batch(rule, batch, 1, n_query, n_key)  # 查询的绝对位置 past + i
    top_left = np.tril(np.ones((n_query, n_key), dtype=bool))  # is_causal=True：行 i 读 Key 0…i
    wrong = [np.flatnonzero((attn_mask[b, 0] != top_left).any(-1)).tolist() for b in range(batch)]
    padding = np.asarray(mask) == 0
    return {
        "attn_mask": attn_mask,
        "key_padding_mask": padding,
        "is_causal": top_left,
        "wrong": wrong,
    }


def answers() -> dict:
    """每道题的答案（JSON 可打印）。

    >>> sorted(answers())
    ['练习 2.9.1', '练习 2.9.2', '练习 2.9.3', '练习 2.9.4', '练习 2.9.5']
    """
    return {
        "练习 2.9.1": sink_rows(),
        "练习 2.9.2": decode_positions(),
        "练习 2.9.3": {name: empty_rows(m) for name, m in FILL_MASKS.items()},
        "练习 2.9.4": [window_counts(SINK_N, SINK_W), window_counts(SINK_N, SINK_W, True)],
        "练习 2.9.5": {k: np.asarray(v).astype(int).tolist() for k, v in library_masks().items()},
    }


def self_test() -> None:
    """核对答案：练习 2.9.4 的函数等于 sliding_window 的表；右侧 PAD 没有整行被屏蔽的行。"""
    table = tn.visibility_batch(tn.sliding_window(SINK_W), 1, 1, SINK_N, SINK_N)[0, 0]
    att.check(window_counts(SINK_N, SINK_W) == table.sum(-1).tolist(), "练习 4 应等于那张表")
    att.check(sink_rows()["cache"] == SINK_SINKS + SINK_W, "汇点加窗口：缓存要留 n_sink + w 个 Key")
    att.check(empty_rows(FILL_MASKS["右侧 PAD"])["empty"] == [], "右侧 PAD 没有整行被屏蔽的查询行")


if __name__ == "__main__":
    self_test()
    att.print_json(answers())
