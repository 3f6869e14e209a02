"""第2章 mask 页的练习：题目的输入与答案，全部由教学代码算出。

书页在“练习”一节调用这里的函数：题目里的数来自这里的常量，解答里的表、句子和每一步的中间值来自
``02_attention.py`` 与 ``02_figures.py``，所以答案不会与正文不一致。每道题的数据都是人工构造的小例子。

直接运行 ``python3 code/02_exercises_mask.py`` 会以 JSON 打印每道题的答案。
"""

from __future__ import annotations

import math

from book_tools import load

att = load("02_attention")
figs = load("02_figures")

# 练习 1：缓存里有 PAST 个位置（句首 PAD_FRONT 个是 PAD），新来 NEW 个查询，因果规则。
PAST, NEW, PAD_FRONT = 2, 3, 1
# 练习 2：一行分数、哪些 Key 可读、温度。
SCORES = [2.0, 0.0, 1.0]
VISIBLE = [True, True, False]
TEMPERATURE = 0.5
# 练习 3：逐词生成的两种写法，用同一组 Q、K、V 检查。
BUG_Q = BUG_K = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0]]
BUG_V = [[1.0], [2.0], [3.0], [4.0]]
BUG_PAST, BUG_NEW = 2, 2
BUG_POISON = 100.0  # “改动未来”时给最后一个位置的 V


def front_padding(n_key: int, pad_front: int) -> list[bool]:
    """句首 ``pad_front`` 个 Key 是 PAD（左侧填充），其余是内容。

    >>> front_padding(5, 1)
    [False, True, True, True, True]
    >>> front_padding(2, 3)
    Traceback (most recent call last):
    ...
    ValueError: pad_front=3 超过了 Key 总数 n_key=2
    """
    att._check_count(n_key, "n_key", minimum=1)
    att._check_count(pad_front, "pad_front", minimum=0)
    if pad_front > n_key:
        raise ValueError(f"pad_front={pad_front} 超过了 Key 总数 n_key={n_key}")
    return [j >= pad_front for j in range(n_key)]


def visible_counts(past: int, new: int, pad_front: int) -> list[int]:
    """练习 4 的参考解：每个新查询行可读几个 Key（因果规则 + 句首 PAD）。

    查询行 i 的绝对位置是 ``past + i``，可读位置 ``0 … past + i``，再去掉句首的 PAD。

    >>> visible_counts(2, 3, 1)
    [2, 3, 4]
    >>> visible_counts(0, 2, 0)
    [1, 2]
    >>> visible_counts(0, 2, 1)
    [0, 1]
    """
    att._check_count(past, "past", minimum=0)
    att._check_count(new, "new", minimum=1)
    att._check_count(pad_front, "pad_front", minimum=0)
    if pad_front > past + new:
        raise ValueError(f"pad_front={pad_front} 超过了 Key 总数 {past + new}")
    return [max(0, past + i + 1 - pad_front) for i in range(new)]


def pad_cache_table(past: int = PAST, new: int = NEW, pad_front: int = PAD_FRONT) -> dict:
    """练习 1 的答案：可见性表、每行一句说明、每行可读的 Key 数。

    >>> answer = pad_cache_table()
    >>> answer["counts"]
    [2, 3, 4]
    >>> answer["sentences"][0]
    '行 0（绝对位置 2）可读 Key 1、Key 2；Key 0 是 PAD；Key 3、Key 4 在它之后。'
    """
    key_valid = front_padding(past + new, pad_front)
    facts = figs.visibility_facts(new, past=past, key_valid=key_valid)
    return {
        "key_valid": key_valid,
        "visible": facts["visible"],
        "sentences": [figs.row_sentence(row, past) for row in facts["rows"]],
        "counts": [len(row["readable"]) for row in facts["rows"]],
    }


def masked_softmax_steps(
    scores: list[float] = SCORES, visible: list[bool] = VISIBLE, temperature: float = TEMPERATURE
) -> dict:
    """练习 2 的答案：加 mask、除以温度、减最大值、取指数、求和、权重，每一步的数。

    >>> s = masked_softmax_steps()
    >>> s["masked"], s["divided"], s["shifted"]
    ([2.0, 0.0, -inf], [4.0, 0.0, -inf], [0.0, -4.0, -inf])
    >>> [round(w, 4) for w in s["weights"]]
    [0.982, 0.018, 0.0]
    """
    (mask,) = att.additive_mask([visible])
    if len(mask) != len(scores):
        raise ValueError(f"scores 与 visible 的长度必须相同，收到 {len(scores)} 与 {len(mask)}")
    weights = att.softmax([s + m for s, m in zip(scores, mask)], temperature=temperature)  # 也校验输入
    masked = [float(s) + m for s, m in zip(scores, mask)]
    divided = [x / temperature for x in masked]
    top = max(divided)
    shifted = [x - top for x in divided]
    exps = [math.exp(x) for x in shifted]
    return {
        "masked": masked, "divided": divided, "max": top, "shifted": shifted,
        "exps": exps, "total": sum(exps), "weights": weights,
    }


def decoding_checks(past: int = BUG_PAST, new: int = BUG_NEW) -> dict:
    """练习 3 的答案：两种缓存写法各过一遍“不泄漏”和“与整段重算一致”两项检查。

    写法 A 按绝对位置 ``past + i`` 造表；写法 B 把本批行号当位置（左上角对齐的因果表，
    例如有缓存时直接用 ``is_causal=True``）。

    >>> checks = decoding_checks()
    >>> [(c["name"], c["no_leak"], c["matches_full"]) for c in checks["rows"]]
    [('A：按 past + i', True, True), ('B：按行号 i', True, False)]
    >>> checks["sentence"]
    '两种写法都通过“不泄漏”检查；只有“与整段重算一致”一项能认出写法 B。'
    """
    n_key = past + new
    q, k, v = BUG_Q[past:n_key], BUG_K[:n_key], BUG_V[:n_key]
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
        rows.append({"name": name, "no_leak": no_leak, "matches_full": out == full[past:], "output": out})
    caught_by = [label for label, key in (("不泄漏", "no_leak"), ("与整段重算一致", "matches_full"))
                 if rows[0][key] and not rows[1][key]]
    passed = [label for label, key in (("不泄漏", "no_leak"), ("与整段重算一致", "matches_full"))
              if rows[0][key] and rows[1][key]]
    sentence = (
        ("两种写法都通过" + "、".join(f"“{p}”" for p in passed) + "检查；" if passed else "")
        + ("只有" + "、".join(f"“{c}”" for c in caught_by) + "一项能认出写法 B。" if caught_by else "两项检查都认不出写法 B。")
    )
    return {"rows": rows, "full": full[past:], "caught_by": caught_by, "sentence": sentence}


def answers() -> dict:
    """每道题的答案（JSON 可打印）。

    >>> sorted(answers())
    ['练习1', '练习2', '练习3', '练习4']
    """
    steps = masked_softmax_steps()
    return {
        "练习1": pad_cache_table()["counts"],
        "练习2": steps["weights"],
        "练习3": decoding_checks()["caught_by"],
        "练习4": visible_counts(PAST, NEW, PAD_FRONT),
    }


if __name__ == "__main__":
    import json

    print(json.dumps(answers(), ensure_ascii=False, indent=2))
