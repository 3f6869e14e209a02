"""The facts of a visibility table, row by row, and the sentences written from exactly those lists.

``visibility_facts`` counts what a table shows; ``row_sentence``, ``lost_sentence``,
``pad_change_sentence`` … read only those lists, so a sentence can never claim a key its table does
not show. The mask page (``chapter.mask``) and its figure (``chapter.mask_figure``) use them.
"""

from __future__ import annotations

import importlib

from chapter import fmt

att = importlib.import_module("02_attention")


def _index_list(values: object, name: str) -> list[int]:
    out = att.as_list(values, name)
    for j, x in enumerate(out):
        if not isinstance(x, int) or isinstance(x, bool) or x < 0:
            raise ValueError(f"{name}[{j}] 必须是非负整数，收到 {x!r}")
    return out


# -- 句子的素材：从一张可见性表数出来的事实 ------------------------------------------------------
def keys_text(js: list[int]) -> str:
    """一组 Key 的写法：三个以上连续的写成区间，其余逐个列出。

    >>> keys_text([1, 2, 3]), keys_text([3, 4]), keys_text([0, 2])
    ('Key 1–3', 'Key 3、Key 4', 'Key 0、Key 2')
    >>> keys_text([])
    Traceback (most recent call last):
    ...
    ValueError: js 不能为空：没有 Key 可写
    """
    js = _index_list(js, "js")
    if not js:
        raise ValueError("js 不能为空：没有 Key 可写")
    if len(js) > 2 and js == list(range(js[0], js[-1] + 1)):
        return f"Key {js[0]}–{js[-1]}"
    return "、".join(f"Key {j}" for j in js)


def positions_text(ps: list[int]) -> str:
    """一组位置的写法，如“位置 1、2、3”。

    >>> positions_text([1, 2, 3])
    '位置 1、2、3'
    """
    ps = _index_list(ps, "ps")
    if not ps:
        raise ValueError("ps 不能为空：没有位置可写")
    return "位置 " + "、".join(str(p) for p in ps)


def visibility_facts(
    n_query: int, *, past: int = 0, key_valid: list[bool] | None = None, causal: bool = True
) -> dict:
    """一张可见性表逐行的事实：可读哪些 Key，其余为什么不能读，写错偏移会少读哪些。

    返回 ``{"past", "n_key", "visible", "row_index", "rows"}``：``visible`` 是正确的表
    （``visibility``），``row_index`` 是把行号当位置的错误写法（PAD 规则照旧）。
    ``rows`` 的第 i 项是字典：``row``、``position``（= past + i）、``readable``、
    ``future``（因果规则挡住的 Key）、``pad``（只被 PAD 规则挡住的 Key，即因果规则
    本来允许的 PAD）、``empty``（整行无 Key 可读）、``lost_cached`` 与 ``lost_new``
    （错误写法少读的 Key，分成早已在缓存里的与本批新来的）。所有列表都直接从这两张
    表里数出，句子函数只读这些列表。

    >>> f = visibility_facts(2, past=3)
    >>> [(r["position"], r["readable"], r["future"]) for r in f["rows"]]
    [(3, [0, 1, 2, 3], [4]), (4, [0, 1, 2, 3, 4], [])]
    >>> [(r["lost_cached"], r["lost_new"]) for r in f["rows"]]
    [([1, 2], [3]), ([2], [3, 4])]
    >>> f = visibility_facts(3, key_valid=[False, True, True])
    >>> [(r["readable"], r["pad"], r["empty"]) for r in f["rows"]]
    [([], [0], True), ([1], [0], False), ([1, 2], [0], False)]
    """
    att.check_count(n_query, "n_query", maximum=att.MAX_POSITIONS)
    att.check_count(past, "past", minimum=0, maximum=att.MAX_POSITIONS)
    n_key = past + n_query
    if key_valid is not None:
        key_valid = att.flags(key_valid, "key_valid")
        if not causal and not past:
            n_key = len(key_valid)  # 编码器：查询与 Key 的个数可以不同
    visible = att.visibility(n_query, n_key, causal=causal, past=past, key_valid=key_valid)
    causal_only = att.visibility(n_query, n_key, causal=causal, past=past)  # 不看 PAD 的表
    valid = key_valid if key_valid is not None else [True] * n_key
    if causal:
        wrong = [[flag and ok for flag, ok in zip(row, valid)] for row in att.row_index_visibility(n_query, n_key)]
    else:
        wrong = [list(row) for row in visible]  # 没有因果规则，行号与位置无从混淆
    rows = []
    for i, (right_row, wrong_row, causal_row) in enumerate(zip(visible, wrong, causal_only)):
        lost = [j for j in range(n_key) if right_row[j] and not wrong_row[j]]
        rows.append({
            "row": i,
            "position": past + i,
            "readable": [j for j in range(n_key) if right_row[j]],
            "future": [j for j in range(n_key) if not causal_row[j]],
            "pad": [j for j in range(n_key) if causal_row[j] and not right_row[j]],
            "empty": not any(right_row),
            "lost_cached": [j for j in lost if j < past],
            "lost_new": [j for j in lost if j >= past],
        })
    return {"past": past, "n_key": n_key, "visible": visible, "row_index": wrong, "rows": rows}


def row_label(fact: dict, past: int) -> str:
    """查询行的称呼：没有缓存时就是位置，有缓存时写出行号和绝对位置。

    >>> row_label({"row": 1, "position": 4}, 3), row_label({"row": 2, "position": 2}, 0)
    ('行 1（绝对位置 4）', '位置 2')
    """
    return f"行 {fact['row']}（绝对位置 {fact['position']}）" if past else f"位置 {fact['position']}"


def row_sentence(fact: dict, past: int = 0) -> str:
    """一行一句：这一行可以读哪些 Key，其余的为什么不能读。

    >>> f = visibility_facts(3, key_valid=[False, True, True])
    >>> for r in f["rows"]:
    ...     print(row_sentence(r))
    位置 0 没有可读的 Key：Key 0 是 PAD；Key 1、Key 2 在它之后。整行被屏蔽。
    位置 1 可读 Key 1；Key 0 是 PAD；Key 2 在它之后。
    位置 2 可读 Key 1、Key 2；Key 0 是 PAD。
    """
    parts = []
    if fact["pad"]:
        parts.append(f"{keys_text(fact['pad'])} 是 PAD")
    if fact["future"]:
        parts.append(f"{keys_text(fact['future'])} 在它之后")
    label = row_label(fact, past)
    label += "" if label.endswith("）") else " "  # 数字后空一格，全角括号后不空
    if fact["empty"]:
        return f"{label}没有可读的 Key：" + "；".join(parts) + "。整行被屏蔽。"
    return f"{label}可读 {keys_text(fact['readable'])}" + "".join(f"；{p}" for p in parts) + "。"


def lost_sentence(fact: dict) -> str:
    """把行号当位置时，这一行少读的 Key：分成早已在缓存里的与本批新来的。

    >>> f = visibility_facts(2, past=3)
    >>> for r in f["rows"]:
    ...     print(lost_sentence(r))
    行 0 少读 3 个：Key 1、Key 2 早已在缓存里，Key 3 是本批新来的（它自己）
    行 1 少读 3 个：Key 2 早已在缓存里，Key 3、Key 4 是本批新来的（含它自己）
    >>> lost_sentence(visibility_facts(1)["rows"][0])
    '行 0 一个也不少读'
    """
    lost = fact["lost_cached"] + fact["lost_new"]
    if not lost:
        return f"行 {fact['row']} 一个也不少读"
    parts = []
    if fact["lost_cached"]:
        parts.append(f"{keys_text(fact['lost_cached'])} 早已在缓存里")
    if fact["lost_new"]:
        own = fact["position"] in fact["lost_new"]
        note = ("（它自己）" if fact["lost_new"] == [fact["position"]] else "（含它自己）") if own else ""
        parts.append(f"{keys_text(fact['lost_new'])} 是本批新来的{note}")
    return f"行 {fact['row']} 少读 {len(lost)} 个：" + "，".join(parts)


def explain_rows(
    new: int, *, past: int = 0, key_valid: list[bool] | None = None, causal: bool = True
) -> list[dict]:
    """逐行解释一张可见性表：每行的事实，加上“可读什么、为什么”和“写错偏移少读什么”两句话。

    ``new`` 个查询行，缓存里已有 ``past`` 个位置；每项是 ``visibility_facts`` 的一行，
    另加 ``sentence``（``row_sentence``）与 ``lost``（``lost_sentence``）。

    >>> for r in explain_rows(2, past=3, key_valid=[False, True, True, True, True]):
    ...     print(r["sentence"], r["lost"])
    行 0（绝对位置 3）可读 Key 1–3；Key 0 是 PAD；Key 4 在它之后。 行 0 少读 3 个：Key 1、Key 2 早已在缓存里，Key 3 是本批新来的（它自己）
    行 1（绝对位置 4）可读 Key 1–4；Key 0 是 PAD。 行 1 少读 3 个：Key 2 早已在缓存里，Key 3、Key 4 是本批新来的（含它自己）
    """
    att.check_count(new, "new", maximum=att.MAX_POSITIONS)
    facts = visibility_facts(new, past=past, key_valid=key_valid, causal=causal)
    return [{**r, "sentence": row_sentence(r, past), "lost": lost_sentence(r)} for r in facts["rows"]]


def pad_change_sentence(before: dict, after: dict, query_valid: list[bool]) -> str:
    """加上 PAD 规则后，哪些真实查询的可读 Key 变了；PAD 查询行怎样。

    ``before``、``after`` 是同一组查询不加、加 PAD 规则时的 ``visibility_facts``。

    >>> before = visibility_facts(3)
    >>> after = visibility_facts(3, key_valid=[False, True, True])
    >>> pad_change_sentence(before, after, [False, True, True])
    '真实查询中，位置 1、2 因 PAD 规则不再读 Key 0；PAD 查询位置 0 整行被屏蔽。'
    """
    query_valid = att.flags(query_valid, "query_valid")
    if len(query_valid) != len(after["rows"]) or len(before["rows"]) != len(after["rows"]):
        raise ValueError("query_valid、before、after 的行数必须相同")
    lost_by = {}
    for b, a, real in zip(before["rows"], after["rows"], query_valid):
        gone = [j for j in b["readable"] if j not in a["readable"]]
        if real and gone:
            lost_by.setdefault(tuple(gone), []).append(a["position"])
    if lost_by:
        parts = [f"{positions_text(ps)} 因 PAD 规则不再读 {keys_text(list(gone))}" for gone, ps in lost_by.items()]
        text = "真实查询中，" + "；".join(parts)
    else:
        text = "没有哪个真实查询因 PAD 规则而改变"
    unchanged = [a["position"] for b, a, real in zip(before["rows"], after["rows"], query_valid)
                 if real and b["readable"] == a["readable"]]
    if unchanged and lost_by:
        text += f"；{positions_text(unchanged)} 不变"
    empty = [a["position"] for a, real in zip(after["rows"], query_valid) if not real and a["empty"]]
    if empty:
        text += f"；PAD 查询{positions_text(empty)} 整行被屏蔽"
    reading = [a["position"] for a, real in zip(after["rows"], query_valid) if not real and not a["empty"]]
    if reading:
        it = "它" if len(reading) == 1 else "它们"
        text += f"；PAD 查询{positions_text(reading)} 仍读真实的 Key，但{it}的输出不是内容"
    return text + "。"


def loss_rows_sentence(query_valid: list[bool]) -> str:
    """计算损失时必须排除的行：PAD 查询行（无论它的输出是 0、NaN 还是读到了什么）。

    >>> loss_rows_sentence([False, False, True, True])
    '计算损失时必须排除位置 0、1 这些 PAD 查询行，只对位置 2、3 求损失。'
    """
    query_valid = att.flags(query_valid, "query_valid")
    pad = [i for i, ok in enumerate(query_valid) if not ok]
    real = [i for i, ok in enumerate(query_valid) if ok]
    if not pad:
        return "没有 PAD 查询行，每一行都参与损失。"
    if not real:
        return "每一行都是 PAD，这一条样本不参与损失。"
    return f"计算损失时必须排除{positions_text(pad)} 这些 PAD 查询行，只对{positions_text(real)} 求损失。"


def rounding_note(weights: list[float], values: list[float], output: float, digits: int = 4) -> str:
    """按表中印出的位数复算时差多少；没有差别就返回空字符串（只在发生处才说）。

    >>> print(rounding_note([0.24825507, 0.24825507, 0.50348984], [10.0, 20.0, 30.0], 22.55234765))
    表中的权重四舍五入到小数点后 4 位，三个相加是 1.0001，而不是 1。用这些印出的权重去乘 V 再相加，得到 22.5540，比精确的输出 22.5523 差 0.0017；纸笔复算时多带几位小数，差就更小。
    >>> rounding_note([0.5, 0.5], [10.0, 30.0], 20.0)
    ''
    """
    weights, values = att.as_vector(weights, "weights"), att.as_vector(values, "values")
    output = att.real(output, "output")
    if len(weights) != len(values):
        raise ValueError(f"weights 与 values 必须一样长，收到 {len(weights)} 与 {len(values)} 个")
    att.check_count(digits, "digits", maximum=12)
    shown = [fmt.printed(fmt.fmt(w, digits)) for w in weights]  # 读者在表里看到的数
    total = fmt.fmt(sum(shown), digits)
    approx = sum(w * x for w, x in zip(shown, values))
    parts = []
    if total != fmt.fmt(1.0, digits):
        parts.append(f"表中的权重四舍五入到小数点后 {digits} 位，{count_words(len(shown))}相加是 {total}，而不是 1。")
    if fmt.fmt(approx, digits) != fmt.fmt(output, digits):
        parts.append(f"用这些印出的权重去乘 V 再相加，得到 {fmt.fmt(approx, digits)}，比精确的输出 "
                     f"{fmt.fmt(output, digits)} 差 {fmt.difference(abs(approx - output))}；"
                     "纸笔复算时多带几位小数，差就更小。")
    return "".join(parts)


def count_words(n: int) -> str:
    """How many, as a sentence says it: 两个, 三个, then digits.

    >>> count_words(2), count_words(3), count_words(12)
    ('两个', '三个', '12 个')
    """
    n = att.check_count(n, "n")
    return "三个" if n == 3 else ("两个" if n == 2 else f"{n} 个")
