"""第 2 章“写进真实代码”一页的练习：题目的输入与答案，全部由教学代码算出。

题目里的数来自这里的常量，解答里的每个数来自 ``02_pitfalls.py``（它又用 ``02_attention.py`` 与
``02_rope.py``，几个文件放在同一目录）。每道题的数据都是人工构造的小例子，与正文的例子不同。运行
``python3 02_exercises_pitfalls.py``：先核对答案，再以 JSON 打印每道题的答案。
"""

from __future__ import annotations

import importlib
import math

att = importlib.import_module("02_attention")
pf = importlib.import_module("02_pitfalls")

# 少一格的因果：scores.masked_fill(torch.tril(torch.ones(n, n), diagonal=-1) == 0, −inf)。
LINE_N = 4
LINE_DIAGONAL = -1
# 一行分数加上 0/1 的浮点表的这一行（查询 0：只许读 Key 0）。
FLOAT_SCORES = [1.0, 2.0, 0.0, 1.0]
FLOAT_ROW = 0
# 右侧补齐的一批提示（attention_mask），批量生成第一个新 token。
RIGHT_MASK = [[1, 1, 1, 1], [1, 1, 0, 0], [1, 1, 1, 0]]
# 写一个函数：按位置把 PAD 的标签写成 −100。
CODE_IDS = [4, 2, 0, 0, 0]
CODE_MASK = [1, 1, 1, 0, 0]  # 第一个 0 是真的 EOS，后两个是 PAD（PAD 与 EOS 同号）


def strict_causal(n: int = LINE_N, diagonal: int = LINE_DIAGONAL) -> dict:
    """少一格的因果（tril 的 diagonal = −1，配 ``== 0``）：每行读得到的 Key，和整行被挡住的行。

    >>> a = strict_causal()
    >>> a["visible"], a["empty"]
    ([[], [0], [0, 1], [0, 1, 2]], [0])
    """
    table = pf.masked_fill_visibility(pf.tril(n, diagonal), "== 0")
    visible = [[j for j, ok in enumerate(row) if ok] for row in table]
    return {"visible": visible, "empty": [i for i, keys in enumerate(visible) if not keys]}


def float_row(scores=FLOAT_SCORES, row: int = FLOAT_ROW) -> dict:
    """一行分数加上 ``torch.tril(torch.ones(n, n))`` 的第 ``row`` 行：权重，落在未来 Key 上的和；
    再与加上 0/−∞（真正的因果 mask）比较。

    >>> a = float_row()
    >>> [round(w, 4) for w in a["weights"]]
    [0.3995, 0.3995, 0.0541, 0.147]
    >>> round(a["future"], 4)
    0.6005
    >>> a["right"]
    [1.0, 0.0, 0.0, 0.0]
    """
    values = att.as_vector(scores, "scores")
    n = len(values)
    row = att.check_count(row, "row", minimum=0, maximum=n - 1, why="行号从 0 数起")
    bias = pf.tril(n)[row]  # 0/1：允许处 1，禁止处 0
    weights = att.softmax([s + b for s, b in zip(values, bias)])
    right = att.softmax([s if b else -math.inf for s, b in zip(values, bias)])
    return {"weights": weights, "future": math.fsum(weights[row + 1 :]), "right": right}


def read_columns(mask=RIGHT_MASK) -> dict:
    """贪心生成的第一步读每行 *最后一列* 的 logits：那一列是不是 PAD；改成左侧补齐后，
    最后一列是哪个 token（序列里第几个真实 token，从 0 数）。

    >>> a = read_columns()
    >>> a["pad_at_last"], a["last_real"]
    ([False, True, True], [3, 1, 2])
    """
    rows = [att.as_list(row, f"mask[{b}]") for b, row in enumerate(att.as_list(mask, "mask"))]
    flat = [m for row in rows for m in row]
    binary = all(type(m) is int and m in (0, 1) for m in flat)  # bool 不算
    if not rows or not binary or len({len(r) for r in rows}) != 1:
        raise ValueError(f"mask 必须是非空、等长的 0/1 行（attention_mask），收到 {mask!r}")
    if any(not any(row) for row in rows):
        raise ValueError("每个序列至少要有一个真实 token")
    return {
        "pad_at_last": [row[-1] == 0 for row in rows],
        "last_real": [sum(row) - 1 for row in rows],  # 左侧补齐后最后一列就是它
    }


def loss_labels(input_ids: list, attention_mask: list) -> list:
    """语言模型的标签：照抄 ``input_ids``，``attention_mask`` 为 0 的位置写成 −100。

    >>> loss_labels([4, 2, 0, 0, 0], [1, 1, 1, 0, 0])
    [4, 2, 0, -100, -100]
    >>> loss_labels([4, 2], [1])
    Traceback (most recent call last):
    ...
    ValueError: input_ids 与 attention_mask 必须一样长，收到 2 与 1
    """
    if not isinstance(input_ids, list) or not isinstance(attention_mask, list):
        raise ValueError("input_ids 与 attention_mask 必须是列表")
    if len(input_ids) != len(attention_mask):
        n = len(input_ids)
        raise ValueError(
            f"input_ids 与 attention_mask 必须一样长，收到 {n} 与 {len(attention_mask)}"
        )
    for name, values in (("input_ids", input_ids), ("attention_mask", attention_mask)):
        if any(not isinstance(x, int) or isinstance(x, bool) for x in values):
            raise ValueError(f"{name} 里必须都是整数，收到 {values!r}")
    if any(m not in (0, 1) for m in attention_mask):
        raise ValueError(f"attention_mask 只能含 0 与 1，收到 {attention_mask!r}")
    return [t if m == 1 else -100 for t, m in zip(input_ids, attention_mask)]  # 按位置，不按编号


def answers() -> dict:
    """每道题的答案（JSON 可打印）。

    >>> sorted(answers())
    ['代码', '右侧补齐', '少一格的因果', '浮点表']
    """
    return {
        "少一格的因果": strict_causal(),
        "浮点表": float_row(),
        "右侧补齐": read_columns(),
        "代码": {
            "按位置": loss_labels(CODE_IDS, CODE_MASK),
            "按编号": pf.labels_from(CODE_IDS, CODE_MASK, pf.PAD, "id"),
        },
    }


def self_test() -> None:
    """核对答案：函数与 02_pitfalls 的 labels_from 一致；浮点表的权重之和是 1，0/−∞ 只读 Key 0。"""
    by_position = pf.labels_from(CODE_IDS, CODE_MASK, pf.PAD)
    att.check(loss_labels(CODE_IDS, CODE_MASK) == by_position, "代码题应等于按位置挡的标签")
    a = float_row()
    att.check(abs(sum(a["weights"]) - 1) < 1e-12 and a["right"][0] == 1.0, "浮点表的一行")
    att.check(strict_causal()["empty"] == [0], "少一格的因果：第 0 行什么也读不到")


if __name__ == "__main__":
    self_test()
    att.print_json(answers())
