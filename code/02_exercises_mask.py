"""第 2 章 mask 页练习的参考解：题目的输入、可见性表、每一步的数与两项检查，全部由教学代码算出。
另有正文深入一节“大负数与 finfo.min 在各种数据类型里”的 numpy 实验 ``empty_row_in_dtype``：
``02_attention.py`` 只用标准库，这一页要 numpy 的只有它，调用时才导入 numpy。

数据都是人工构造的小例子。把本文件和 ``02_attention.py`` 放在同一目录，运行
``python3 02_exercises_mask.py``：先自检，再以 JSON 打印每道题的答案（不用 numpy）。
"""

from __future__ import annotations

import importlib
import math

att = importlib.import_module("02_attention")

# 练习 2.2.1：缓存里有 PAST 个位置（句首 PAD_FRONT 个是 PAD），新来 NEW 个查询，因果规则。
PAST = 2
NEW = 3
PAD_FRONT = 1
# 练习 2.2.2：一行给定的分数、哪些 Key 可读。
SCORES = [2.0, 0.0, 1.0]
VISIBLE = [True, True, False]
# 练习 2.2.3：带缓存的两种写法，用同一组 Q、K、V 比较。
BUG_Q = BUG_K = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0]]
BUG_V = [[1.0], [2.0], [3.0], [4.0]]
BUG_PAST = 2
BUG_NEW = 2
BUG_POISON = 100.0  # “改动未来”时给最后一个位置的 V
CHECKS = ("不泄漏", "与整段重算一致")  # 练习 2.2.3 的两项检查
DTYPES = ("float16", "float32", "float64")  # empty_row_in_dtype 用 numpy 重算的数据类型


def front_padding(n_key: int, pad_front: int) -> list[bool]:
    """句首 ``pad_front`` 个 Key 是 PAD（左侧填充），其余是内容。

    >>> front_padding(5, 1)
    [False, True, True, True, True]
    """
    att.check_count(n_key, "n_key", maximum=att.MAX_POSITIONS)
    att.check_count(pad_front, "pad_front", minimum=0, maximum=n_key, why="PAD 不会多于 n_key 个")
    return [j >= pad_front for j in range(n_key)]


def visible_counts(past: int, new: int, pad_front: int) -> list[int]:
    """练习 2.2.4 的参考解：每个新查询行可读几个 Key（因果规则 + 句首 PAD）。

    查询行 i 的绝对位置是 ``past + i``，可读位置 ``0 … past + i``，再去掉句首的 PAD。

    >>> visible_counts(2, 3, 1)
    [2, 3, 4]
    >>> visible_counts(0, 2, 0)
    [1, 2]
    >>> visible_counts(0, 2, 1)
    [0, 1]
    """
    # 题目要求只用 Python 标准库，所以这里不调用 02_attention 的检查，自己在边界上查一遍。
    for name, value, low in (("past", past, 0), ("new", new, 1), ("pad_front", pad_front, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= 4096:
            raise ValueError(f"{name} 必须是 {low} 到 4096 之间的整数，收到 {value!r}")
    if pad_front > past + new:
        raise ValueError(f"pad_front={pad_front} 超过了 Key 总数 {past + new}")
    return [max(0, past + i + 1 - pad_front) for i in range(new)]


def pad_cache_table(past: int = PAST, new: int = NEW, pad_front: int = PAD_FRONT) -> dict:
    """练习 2.2.1 的答案：哪些 Key 是内容、新查询的可见性表、每行可读的 Key 数。

    >>> answer = pad_cache_table()
    >>> answer["visible"][0]  # Key 0 是 PAD；位置 2 读到 Key 2 为止
    [False, True, True, False, False]
    >>> answer["counts"]
    [2, 3, 4]
    """
    att.check_count(past, "past", minimum=0, maximum=att.MAX_POSITIONS)
    att.check_count(new, "new", maximum=att.MAX_POSITIONS)
    key_valid = front_padding(past + new, pad_front)
    visible = att.visibility(new, past + new, past=past, key_valid=key_valid)  # (new, past + new)
    return {"key_valid": key_valid, "visible": visible, "counts": [sum(row) for row in visible]}


def masked_softmax_steps(scores: list[float] = SCORES, visible: list[bool] = VISIBLE) -> dict:
    """练习 2.2.2 的答案：加 mask、减去最大值、取指数、求和、权重，每一步的数。

    与 ``softmax`` 一样先减去这一行的最大值：权重不变，exp 却不会溢出。

    >>> s = masked_softmax_steps()
    >>> s["masked"]
    [2.0, 0.0, -inf]
    >>> s["max"]
    2.0
    >>> s["shifted"]
    [0.0, -2.0, -inf]
    >>> [round(e, 4) for e in s["exps"]]
    [1.0, 0.1353, 0.0]
    >>> [round(w, 4) for w in s["weights"]]
    [0.8808, 0.1192, 0.0]
    """
    scores = att.as_vector(scores, "scores")
    (mask,) = att.additive_mask([att.flags(visible, "visible", len(scores))])
    masked = [s + m for s, m in zip(scores, mask)]
    weights = att.softmax(masked)  # 也检查“整行被屏蔽”
    top = max(masked)
    shifted = [x - top for x in masked]  # 最大项变成 0
    exps = [math.exp(x) for x in shifted]  # exp(−∞) = 0：被禁止的 Key 不进分母
    return {
        "masked": masked,
        "max": top,
        "shifted": shifted,
        "exps": exps,
        "total": sum(exps),
        "weights": weights,
    }


def decoding_checks(past: int = BUG_PAST, new: int = BUG_NEW) -> dict:
    """练习 2.2.3 的答案：两种缓存写法的表、输出、少读的 Key，与两项检查的结果。

    写法 A 按绝对位置 ``past + i`` 造表；写法 B 把本批行号当位置（左上角对齐的因果表，
    例如有缓存时直接用 ``is_causal=True``）。``caught_by`` 是只有写法 A 通过的检查。

    >>> checks = decoding_checks()
    >>> [(c["name"], c["no_leak"], c["matches_full"]) for c in checks["rows"]]
    [('A：按 past + i', True, True), ('B：按行号 i', True, False)]
    >>> checks["rows"][1]["lost"]
    [[1, 2], [2, 3]]
    >>> checks["passed"]
    ['不泄漏']
    >>> checks["caught_by"]
    ['与整段重算一致']
    """
    att.check_count(past, "past", minimum=0)
    if att.check_count(new, "new") + past > len(BUG_Q):
        raise ValueError(
            f"past + new 不能超过 {len(BUG_Q)}（练习只有这么多个位置），收到 {past + new}"
        )
    n_key = past + new
    q = BUG_Q[past:n_key]
    k = BUG_K[:n_key]
    v = BUG_V[:n_key]
    poisoned = v[:-1] + [[BUG_POISON]]
    _, full = att.attention(BUG_Q[:n_key], k, v)
    plans = [
        ("A：按 past + i", att.visibility(new, n_key, past=past)),
        ("B：按行号 i", att.row_index_visibility(new, n_key)),
    ]
    rows = []
    for name, table in plans:
        _, out = att.masked_attention(q, k, v, table)
        _, out_poisoned = att.masked_attention(q, k, poisoned, table)
        # 不泄漏：最后一个 Key 在它之后的查询行，输出不许随它的 V 变。
        future_rows = [i for i in range(new) if past + i < n_key - 1]
        no_leak = all(out[i] == out_poisoned[i] for i in future_rows)
        lost = [
            [j for j in range(n_key) if right[j] and not mine[j]]
            for right, mine in zip(plans[0][1], table)
        ]  # 比按 past + i 少读的 Key
        rows.append(
            {
                "name": name,
                "no_leak": no_leak,
                "matches_full": out == full[past:],
                "output": out,
                "visible": table,
                "lost": lost,
            }
        )
    keys = ("no_leak", "matches_full")
    results = [(label, [r[key] for r in rows]) for label, key in zip(CHECKS, keys)]
    return {
        "rows": rows,
        "full": full[past:],
        "passed": [label for label, (a, b) in results if a and b],
        "caught_by": [label for label, (a, b) in results if a and not b],
    }


def empty_row_in_dtype(
    q: list[list[float]], key_valid: list[bool], dtype: str = "float16", big: float = -1e9
) -> dict:
    """Q = K，因果规则与 PAD 规则取“与”：第一个整行被屏蔽的查询，在 numpy 的 ``dtype`` 里算出什么。

    分数与写进禁止格子的数都先转成 ``dtype`` 再相加、做 softmax（先减最大值）。
    ``weights`` 里三种写法：禁止的格子换成 ``big``（``"big"``）、换成 ``finfo(dtype).min``
    （``"min"``）、因果 mask 与 PAD mask 各在禁止处取 ``finfo.min`` 再都加到分数上
    （``"two_masks"``）；``blocked`` 是它们的禁止格子里的数。``added`` 是把 ``big`` 加到分数上
    （不是换掉分数）时的权重；``twice`` 是 ``finfo.min + finfo.min``，``row_twice`` 是一整行都取
    这个和时的权重；``doubled`` 是两条规则同时挡住的 Key。

    >>> r = empty_row_in_dtype([[1.0, 0.0], [0.0, 1.0]], [False, True], "float16")
    >>> r["row"], r["big_is_inf"], r["weights"]["big"], r["weights"]["min"]
    (0, True, [nan, nan], [0.5, 0.5])
    >>> r["twice"], r["row_twice"]
    (-inf, [nan, nan])
    >>> empty_row_in_dtype([[1.0]], [True])  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    ValueError: key_valid 必须让至少一行整行被屏蔽
    """
    import numpy as np  # 只有数据类型要 numpy：Python 的 float 只有双精度一种

    q = att.as_matrix(q, "Q")
    n = len(q)
    key_valid = att.flags(key_valid, "key_valid", n)
    big = att.real(big, "big")
    if dtype not in DTYPES:
        raise ValueError(f"dtype 必须是 {'、'.join(DTYPES)} 之一，收到 {dtype!r}")
    visible = att.visibility(n, n, key_valid=key_valid)
    empty = [i for i, row in enumerate(visible) if not any(row)]
    if not empty:
        raise ValueError("key_valid 必须让至少一行整行被屏蔽：这里比较的正是这样的行")
    i = empty[0]
    causal_ok = att.visibility(n, n)[i]
    t = np.dtype(dtype)
    fmin = np.finfo(t).min
    scores = np.asarray(att.scaled_scores(q, q)[i], dtype=t)

    def fill(ok, value):
        return np.asarray([0.0 if f else value for f in ok]).astype(t)

    def softmax(x):
        e = np.exp(x - x.max())
        return [float(w) for w in e / e.sum()]

    with np.errstate(over="ignore", invalid="ignore"):
        big_in = fill([False], big)[0]  # float16 里 −1e9 溢出成 −∞
        rows = {
            "big": np.where(visible[i], scores, big_in),
            "min": np.where(visible[i], scores, fmin),
            "two_masks": scores + (fill(causal_ok, fmin) + fill(key_valid, fmin)),
        }
        weights = {name: softmax(x) for name, x in rows.items()}
        added = softmax(scores + big_in)
        twice = fmin + fmin  # numpy 保持操作数的数据类型
        row_twice = softmax(np.full(n, fmin, dtype=t) + np.full(n, fmin, dtype=t))
    return {
        "row": i,
        "min": float(fmin),
        "big_is_inf": bool(np.isinf(big_in)),
        "twice": float(twice),
        "weights": weights,
        "blocked": {
            name: sorted({float(c) for c, ok in zip(x, visible[i]) if not ok}, reverse=True)
            for name, x in rows.items()
        },
        "added": added,
        "row_twice": row_twice,
        "doubled": [j for j, (a, b) in enumerate(zip(causal_ok, key_valid)) if not a and not b],
    }


def answers() -> dict:
    """每道题的答案（JSON 可打印）。

    >>> sorted(answers())
    ['练习2.2.1', '练习2.2.2', '练习2.2.3', '练习2.2.4']
    """
    return {
        "练习2.2.1": pad_cache_table()["counts"],
        "练习2.2.2": masked_softmax_steps()["weights"],
        "练习2.2.3": decoding_checks()["caught_by"],
        "练习2.2.4": visible_counts(PAST, NEW, PAD_FRONT),
    }


def self_test() -> None:
    """参考解彼此核对：数格子与公式一致，权重和为 1，只有“与整段重算一致”认得出写法 B。"""
    for past, new, pad in ((0, 1, 0), (2, 3, 1), (3, 2, 4), (1, 2, 3)):
        att.check(
            pad_cache_table(past, new, pad)["counts"] == visible_counts(past, new, pad),
            f"past={past}、new={new}、pad_front={pad}：数出的格子数应等于公式",
        )
    steps = masked_softmax_steps()
    att.check(abs(sum(steps["weights"]) - 1) < 1e-12, "练习 2.2.2 的权重之和应为 1")
    att.check(steps["weights"][2] == 0.0, "练习 2.2.2：被禁止的 Key 权重恰为 0")
    att.check(decoding_checks()["caught_by"] == [CHECKS[1]], "只有“与整段重算一致”应认出写法 B")


if __name__ == "__main__":
    self_test()
    att.print_json(answers())
