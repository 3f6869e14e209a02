"""The mask page (book/ch02/mask.md): every sentence, table and figure frame.

The mechanism lives in ``code/02_attention.py`` (visibility tables, additive masks, attention) and
``code/02_exercises_mask.py`` (the exercises' reference solutions). This module turns what they
compute into the page, and computes nothing the chapter states on its own:

- the facts of a visibility table, row by row (``visibility_facts``), and the sentences written
  from exactly those lists (``row_sentence``, ``lost_sentence``, ``pad_change_sentence`` …), so a
  sentence can never claim a key its table does not show;
- F12, the visibility-table player (``f12_frames``), and its explore panel (``f12_explore_states``,
  every reachable setting precomputed; ``explore_state`` decodes one the way the page's script does);
- the table of library conventions and the table of fully masked rows come from
  ``chapter.conventions`` (what ``make crosscheck`` observed); here, the two causal alignments
  compared with the book's offsets (``causal_table``, ``alignment_facts``);
- one function per section of the page (``demo_section`` … ``exercises``), each returning the
  values the page glues: strings, integers, ``Md`` (Markdown text) and ``Table`` (header, rows).

Figure data are plain dicts and lists, no markup, so the HTML player and the PDF's static frames
render the same data. Every number is written by ``chapter.fmt``. Neither MyST-NB nor IPython is
imported at module level (``glue_all`` imports them when a page calls it), so the crosscheck
environment can import this module too.

>>> keys_text([1, 2, 3]), row_sentence(visibility_facts(2, past=3)["rows"][0], 3)
('Key 1–3', '行 0（绝对位置 3）可读 Key 0–3；Key 4 在它之后。')
"""

from __future__ import annotations

import importlib
import math
import re

from chapter import fmt
from chapter.conventions import (ALIGNMENT, FULLY_MASKED_HEADER, HEADER, conventions_rows, float_mask_sentence,
                                 fully_masked_rows, gpu_sentence, observed, unavailable_sentence,
                                 versions_words)
from chapter.fmt import Md, Table, glue_all

att = importlib.import_module("02_attention")
ex = importlib.import_module("02_exercises_mask")

# 第 1—3 帧：三个有效位置，没有缓存，没有 PAD，因果规则。
N_POSITIONS = 3
# 第 4 帧：位置 1 这一行的原始分数（人工给定的输入，不来自其他例子），对照加与不加 mask。
SCORE_ROW = (0.0, 1.0, 2.0)
SCORE_QUERY = 1
# 第 5 帧：缓存里已有 past 个位置，新来 new 个查询。
PAST, NEW = 3, 2
# 一张图的表要能排进一页：F12 的位置数与 past + new 不超过这个数。
FIGURE_MAX_POSITIONS = 16


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


# -- F12 的五帧 ---------------------------------------------------------------------------------
def _cell(text: str, state: str | None = None, highlight: bool = False) -> dict:
    return {"text": text, "state": state, "highlight": highlight}


def _flag(flag: bool, highlight: bool = False) -> dict:
    # 符号和文字一起写（mark），颜色只靠 state 附加，含义从不只靠颜色。
    return _cell(fmt.mark(flag), "allowed" if flag else "forbidden", highlight)


def _visibility_table(title: str, table: list[list[bool]], labels: list[str], current: set[int]) -> dict:
    n_key = len(table[0])
    return {
        "title": title,
        "header": ["查询 ＼ Key"] + [f"Key {j}" for j in range(n_key)],
        "rows": [
            [_cell(label, None, i in current)] + [_flag(flag, i in current) for flag in row]
            for i, (label, row) in enumerate(zip(labels, table))
        ],
    }


def _causal_frame(facts: dict, n: int) -> dict:
    n_positions = facts["n_key"]
    fact = facts["rows"][n]
    text = f"位置 {n} 能读的是 {keys_text(fact['readable'])}"
    if len(fact["readable"]) == 1:
        text += "，也就是它自己，输出就是它自己的 V"
    # The reason is given once, in the first frame that forbids a key.
    first = next(r["row"] for r in facts["rows"] if r["future"]) if fact["future"] else None
    why = "：读了就是偷看答案，禁止。" if n == first else "，禁止。"
    text += f"；{keys_text(fact['future'])} 排在它后面{why}" if fact["future"] else "：没有更晚的 Key，整行都允许。"
    return {
        "condition": f"处理绝对位置 {n}",
        "tables": [
            _visibility_table(
                f"可见性表：{n_positions} 个有效位置，当前行是绝对位置 {n}",
                facts["visible"],
                [f"绝对位置 {i}" for i in range(n_positions)],
                {n},
            )
        ],
        "rule": f"允许 Key 位置 ≤ {n}",
        "explanation": text,
    }


def _score_frame(facts: dict, score_row: list[float], query: int) -> dict:
    visible = facts["visible"][query]
    mask = att.additive_mask([visible])[0]
    masked = [s + m for s, m in zip(score_row, mask)]
    open_weights = att.softmax(score_row)  # 不加 mask
    masked_weights = att.softmax(masked)  # 加 mask：禁止的格子权重恰为 0
    fact = facts["rows"][query]
    allowed, forbidden = fact["readable"], fact["future"]

    def row(label: str, texts: list[str], highlight: bool = False) -> list[dict]:
        return [_cell(label, None, highlight)] + [_cell(t, None, highlight) for t in texts]

    scores_text = "[" + ", ".join(fmt.short(s) for s in score_row) + "]"
    if forbidden:
        text = (
            f"{keys_text(forbidden)} 在位置 {query} 之后，分数加 −∞：不加 mask 时分走 "
            f"{'、'.join(fmt.fmt(open_weights[j]) for j in forbidden)} 的权重，加了 mask 权重恰好是 "
            f"{'、'.join(fmt.fmt(masked_weights[j]) for j in forbidden)}，"
            f"{keys_text(allowed)} 重新分到 {' 与 '.join(fmt.fmt(masked_weights[j]) for j in allowed)}，"
            "每行之和仍是 1。"
        )
    else:
        text = f"位置 {query} 之后没有 Key，mask 全是 0，权重都是 {'、'.join(fmt.fmt(w) for w in masked_weights)}。"
    return {
        "condition": f"绝对位置 {query} 的一行分数，加 mask 与不加 mask 对照",
        "tables": [
            {
                "title": f"分数行 {scores_text}，查询在绝对位置 {query}",
                "header": ["项目 ＼ Key"] + [f"Key {j}" for j in range(len(score_row))],
                "rows": [
                    [_cell("可见性")] + [_flag(flag) for flag in visible],
                    row("原始分数", [fmt.short(s) for s in score_row]),
                    row("加性 mask", [fmt.short(m) for m in mask]),
                    row("加 mask 后的分数", [fmt.fmt(s) for s in masked]),  # 算出的数
                    row("不加 mask 的权重", [fmt.fmt(w) for w in open_weights]),
                    row("加 mask 的权重", [fmt.fmt(w) for w in masked_weights], True),
                ],
            }
        ],
        "rule": f"允许 Key 位置 ≤ {query}",
        "explanation": text,
    }


def cache_explanation(facts: dict) -> str:
    """带缓存时正确与写错偏移的对照说明，句句出自 ``visibility_facts`` 的列表（F12 最后一步的图注）。

    >>> print(cache_explanation(visibility_facts(1, past=3)))  # doctest: +NORMALIZE_WHITESPACE
    缓存里已有 3 个位置，新来的 1 个查询从行 0 数起，绝对位置却是 3：行 0 能读 Key 0–3。
    把行号当位置时，行 0 少读 3 个：Key 1、Key 2 早已在缓存里，Key 3 是本批新来的（它自己）。
    """
    rows, past = facts["rows"], facts["past"]
    text = (
        f"缓存里已有 {past} 个位置，新来的 {len(rows)} 个查询从行 0 数起，"
        f"绝对位置{'却' if past else '也'}是 {'、'.join(str(r['position']) for r in rows)}："
        + "，".join(f"行 {r['row']} 能读 {keys_text(r['readable'])}" for r in rows) + "。"
    )
    if not any(r["lost_cached"] or r["lost_new"] for r in rows):
        return text + "没有缓存时行号就是位置，两张表完全相同，一个 Key 也不少读。"
    return text + "\n把行号当位置时，" + "；".join(lost_sentence(r) for r in rows) + "。"


def cache_moral(facts: dict) -> str:
    """写错偏移的后果，一句话（页面上只说一次，在“用了缓存”一节）；两张表相同时是空字符串。

    >>> cache_moral(visibility_facts(1, past=3))
    '这种写法不会泄漏未来，却悄悄丢掉了缓存里的历史，连查询自己的位置也读不到。'
    >>> cache_moral(visibility_facts(2, past=3, key_valid=[False] * 3 + [True] * 2))
    '这种写法不会泄漏未来，却悄悄少读了本批的 Key，连查询自己的位置也读不到。'
    >>> cache_moral(visibility_facts(2))
    ''
    """
    rows = facts["rows"]
    if not any(r["lost_cached"] or r["lost_new"] for r in rows):
        return ""
    lost_history = any(r["lost_cached"] for r in rows)
    lost_self = any(r["position"] in r["lost_new"] for r in rows)
    text = "这种写法不会泄漏未来，却悄悄" + ("丢掉了缓存里的历史" if lost_history else "少读了本批的 Key")
    return text + ("，连查询自己的位置也读不到。" if lost_self else "。")


def _cache_frame(past: int, new: int) -> dict:
    facts = visibility_facts(new, past=past)
    limits = "，".join(f"行 {r['row']} ≤ {r['position']}" for r in facts["rows"])
    return {
        "condition": f"带缓存：past = {past}，new = {new}",
        "tables": [
            _visibility_table(
                "正确：按绝对位置 past + 行号判断",
                facts["visible"],
                [f"行 {r['row']}（绝对位置 {r['position']}）" for r in facts["rows"]],
                set(range(new)),
            ),
            _visibility_table(
                "写错：把本批行号当成位置",
                facts["row_index"],
                [f"行 {r['row']}（误当位置 {r['row']}）" for r in facts["rows"]],
                set(),
            ),
        ],
        "rule": f"允许 Key 位置 ≤ past + 行号：{limits}",
        "explanation": cache_explanation(facts).replace("\n", ""),  # the moral is the cache section's
    }


def f12_frames(
    n_positions: int = N_POSITIONS,
    score_row: list[float] = SCORE_ROW,
    score_query: int = SCORE_QUERY,
    past: int = PAST,
    new: int = NEW,
) -> list[dict]:
    """动态图解 F12 的各帧：每个位置一帧因果可见性表、一帧分数对照、一帧缓存偏移。

    默认输入就是书中 F12 所用的；其他输入用于测试说明是否句句属实。

    >>> frames = f12_frames()
    >>> [f["condition"] for f in frames]  # doctest: +NORMALIZE_WHITESPACE
    ['处理绝对位置 0', '处理绝对位置 1', '处理绝对位置 2',
     '绝对位置 1 的一行分数，加 mask 与不加 mask 对照', '带缓存：past = 3，new = 2']
    >>> [f["rule"] for f in frames[:3]]
    ['允许 Key 位置 ≤ 0', '允许 Key 位置 ≤ 1', '允许 Key 位置 ≤ 2']
    >>> [(c["text"], c["state"], c["highlight"]) for c in frames[0]["tables"][0]["rows"][0]]
    [('绝对位置 0', None, True), ('✓ 允许', 'allowed', True), ('✗ 禁止', 'forbidden', True), ('✗ 禁止', 'forbidden', True)]
    >>> [[c["text"] for c in row] for row in frames[3]["tables"][0]["rows"][1:]]  # doctest: +NORMALIZE_WHITESPACE
    [['原始分数', '0', '1', '2'], ['加性 mask', '0', '0', '−∞'], ['加 mask 后的分数', '0.0000', '1.0000', '−∞'],
     ['不加 mask 的权重', '0.0900', '0.2447', '0.6652'], ['加 mask 的权重', '0.2689', '0.7311', '0.0000']]
    >>> [[c["state"] == "allowed" for c in row[1:]] for row in frames[4]["tables"][0]["rows"]]
    [[True, True, True, True, False], [True, True, True, True, True]]
    >>> frames[4]["rule"]
    '允许 Key 位置 ≤ past + 行号：行 0 ≤ 3，行 1 ≤ 4'
    >>> len(f12_frames(n_positions=2, score_row=[0.0, 1.0], score_query=0, past=0, new=1))
    4
    >>> f12_frames(score_row=[0.0, 1.0])
    Traceback (most recent call last):
    ...
    ValueError: score_row 必须有 n_positions = 3 个分数，收到 2 个
    """
    att.check_count(n_positions, "n_positions", maximum=FIGURE_MAX_POSITIONS)
    att.check_count(past, "past", minimum=0, maximum=FIGURE_MAX_POSITIONS)
    att.check_count(new, "new", maximum=FIGURE_MAX_POSITIONS)
    if past + new > FIGURE_MAX_POSITIONS:
        raise ValueError(f"past + new 不能超过 {FIGURE_MAX_POSITIONS}（一张图的表要排进一页），收到 {past + new}")
    facts = visibility_facts(n_positions)
    score_row = att.as_vector(score_row, "score_row")
    if len(score_row) != n_positions:
        raise ValueError(f"score_row 必须有 n_positions = {n_positions} 个分数，收到 {len(score_row)} 个")
    if not isinstance(score_query, int) or isinstance(score_query, bool) or not 0 <= score_query < n_positions:
        raise ValueError(f"score_query 必须是 0 到 {n_positions - 1} 之间的整数，收到 {score_query!r}")
    return (
        [_causal_frame(facts, n) for n in range(n_positions)]
        + [_score_frame(facts, score_row, score_query), _cache_frame(past, new)]
    )


# -- F12 的探索面板：读者自己设定 past、new、PAD 与因果规则 ----------------------------------------
# 面板不自己算：每一种设定的表、mask 与句子都在这里预先算好，网页只按读者的选择查出来。
EXPLORE_MAX_PAST = 6
EXPLORE_MAX_NEW = 6
PAD_PLACES = ("none", "front", "end")  # 没有 PAD、PAD 在前面（左侧填充）、PAD 在末尾（右侧填充）
# 句子按这些片段切开存放：keys_text 写出的一组 Key、行名、单独的数。
_PIECES = re.compile(r"(Key \d+(?:–\d+|(?:、Key \d+)*)|行 \d+（绝对位置 \d+）|位置 \d+|\d+)")


def pad_valid(n_key: int, pad: str = "none", count: int = 0) -> list[bool] | None:
    """PAD 放在前面或末尾时的 ``key_valid``（True 是内容）；没有 PAD 时是 None。

    >>> pad_valid(4, "front", 1), pad_valid(4, "end", 2), pad_valid(4)
    ([False, True, True, True], [True, True, False, False], None)
    >>> pad_valid(4, "end", 5)
    Traceback (most recent call last):
    ...
    ValueError: count 必须是 1 到 n_key = 4 之间的整数，收到 5
    """
    if pad not in PAD_PLACES:
        raise ValueError(f"pad 必须是 {'、'.join(PAD_PLACES)} 之一，收到 {pad!r}")
    if pad == "none":
        if count != 0:
            raise ValueError(f"没有 PAD 时 count 必须是 0，收到 {count!r}")
        return None
    att.check_count(n_key, "n_key", maximum=att.MAX_POSITIONS)
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= n_key:
        raise ValueError(f"count 必须是 1 到 n_key = {n_key} 之间的整数，收到 {count!r}")
    tail = att.key_padding(n_key - count, n_key)  # 内容在前，PAD 在末尾
    return tail if pad == "end" else tail[::-1]


def _label_gap(label: str) -> str:
    return label if label.endswith("）") else label + " "  # 数字后空一格，全角括号后不空


def empty_row_note(facts: dict) -> str:
    """整行被屏蔽的行按本书的策略怎么办：错误信息和置零后的输出都由 ``masked_attention`` 给出。

    所用的 Q、K 全是 0，V 依次是 1、2、3……：输出 0 不是碰巧。没有整行被屏蔽的行时返回空字符串。

    >>> print(empty_row_note(visibility_facts(2, key_valid=[False, True])))
    位置 0 整行被屏蔽。本书默认 empty_row="error"，算到这一行就报错：ValueError: 第 0 个查询行没有任何可见的 Key，不能对它做普通 softmax；可用 empty_row="zero" 让这一行输出 0。传 empty_row="zero" 时，这一行的输出是 0，计算损失时要把它排除。
    >>> print(empty_row_note(visibility_facts(2, past=1, key_valid=[False, False, True])))
    行 0（绝对位置 1）整行被屏蔽。本书默认 empty_row="error"，算到这一行就报错：ValueError: 第 0 个查询行没有任何可见的 Key，不能对它做普通 softmax；可用 empty_row="zero" 让这一行输出 0。传 empty_row="zero" 时，这一行的输出是 0，计算损失时要把它排除。
    >>> print(empty_row_note(visibility_facts(3, key_valid=[False, False, True])))
    位置 0、位置 1 整行被屏蔽。本书默认 empty_row="error"，算到位置 0 就报错：ValueError: 第 0 个查询行没有任何可见的 Key，不能对它做普通 softmax；可用 empty_row="zero" 让这一行输出 0。传 empty_row="zero" 时，这些行的输出是 0、0，计算损失时要把它们排除。
    >>> empty_row_note(visibility_facts(2))
    ''
    """
    rows, past, n_key = facts["rows"], facts["past"], facts["n_key"]
    empty = [r for r in rows if r["empty"]]
    if not empty:
        return ""
    q, k = [[0.0]] * len(rows), [[0.0]] * n_key
    v = [[float(j + 1)] for j in range(n_key)]
    try:
        att.masked_attention(q, k, v, facts["visible"])  # 本书的默认策略 empty_row="error"
    except ValueError as error:
        message = str(error)
    else:
        raise AssertionError("masked_attention 应当对整行被屏蔽的行报错")
    _, out = att.masked_attention(q, k, v, facts["visible"], empty_row="zero")
    labels = "、".join(row_label(r, past) for r in empty)
    these = "这一行" if len(empty) == 1 else "这些行"
    zeros = "、".join(fmt.short(out[r["row"]][0]) for r in empty)
    first = "这一行" if len(empty) == 1 else _label_gap(row_label(empty[0], past))
    return (
        f"{_label_gap(labels)}整行被屏蔽。本书默认 empty_row=\"error\"，算到{first}就报错：ValueError: {message}。"
        f"传 empty_row=\"zero\" 时，{these}的输出是 {zeros}，计算损失时要把{'它' if len(empty) == 1 else '它们'}排除。"
    )


def explore_status(facts: dict) -> str:
    """探索面板换了设定之后读屏软件念的一句话：表有多大，哪些行整行被屏蔽。

    >>> explore_status(visibility_facts(2, past=3))
    '2 个查询行、5 个 Key，每行都有可读的 Key。'
    >>> explore_status(visibility_facts(2, key_valid=[False, True]))
    '2 个查询行、2 个 Key，位置 0 整行被屏蔽。'
    """
    rows = facts["rows"]
    empty = [row_label(r, facts["past"]) for r in rows if r["empty"]]
    text = f"{len(rows)} 个查询行、{facts['n_key']} 个 Key，"
    return text + (f"{_label_gap('、'.join(empty))}整行被屏蔽。" if empty else "每行都有可读的 Key。")


def lost_status(facts: dict) -> str:
    """打开“写错的偏移”时接在 ``explore_status`` 后面的一句：一共少读几个，缓存里的与本批的各几个。

    >>> lost_status(visibility_facts(2, past=3))
    '把行号当位置时共少读 6 个：缓存里的 3 个，本批新来的 3 个。'
    >>> lost_status(visibility_facts(2, past=3, key_valid=[False] * 3 + [True] * 2))
    '把行号当位置时共少读 3 个，全是本批新来的。'
    >>> lost_status(visibility_facts(2))
    '把行号当位置时一个也不少读。'
    """
    cached = sum(len(r["lost_cached"]) for r in facts["rows"])
    new = sum(len(r["lost_new"]) for r in facts["rows"])
    text = f"把行号当位置时共少读 {cached + new} 个"
    if cached and new:
        return text + f"：缓存里的 {cached} 个，本批新来的 {new} 个。"
    if cached or new:
        return text + ("，全是缓存里的。" if cached else "，全是本批新来的。")
    return "把行号当位置时一个也不少读。"


def explore_words() -> dict:
    """探索面板上的固定文字：控件名、表题、图例。单元格的写法取自 ``fmt.mark`` 与教学代码的 ``additive_mask``。

    >>> explore_words()["mask"]
    '加性 mask：允许的格子加 0，禁止的格子加 −∞'
    """
    allowed, forbidden = (fmt.short(x) for x in att.additive_mask([[True, False]])[0])
    return {
        "title": "自己试一试：可见性表探索",
        "intro": "自己设定缓存、新查询、PAD 和因果规则，看可见性表怎样变。表、mask 和每一句说明，"
                 "都是构建本书时由教学代码对每一种设定预先算好的；这里只按你的选择把它们找出来。",
        "past": "缓存里已有的位置数 past",
        "new": "新来的查询数 new",
        "pad": "PAD 放在哪里",
        "pad_options": ["没有 PAD", "在前面（左侧填充）", "在末尾（右侧填充）"],
        "count": "PAD 个数",
        "causal": "因果规则：不读之后的 Key",
        "wrong": "把本批行号当位置（写错的偏移）",
        "visible": "可见性表：按绝对位置 past + 行号判断",
        "mask": f"加性 mask：允许的格子加 {allowed}，禁止的格子加 {forbidden}",
        "wrong_table": "写错：把本批行号当成位置",
        "corner": "查询 ＼ Key",
        "lost_cached": "少读：缓存里的",
        "lost_new": "少读：本批新来的",
        "empty": "（整行被屏蔽）",
        "diff": "与正确的表不同",
        "diff_mark": "◆",
        "legend": "◆ 标出与正确的表不同的格子：按绝对位置，这些 Key 本该可读。",
        "sentences": "逐行说明",
        "lost_sentences": "把行号当位置时，每行少读的 Key",
        "tables": "探索面板的表格，可左右滚动",
    }


def _bits(flags: list[bool]) -> int:
    return sum(1 << j for j, flag in enumerate(flags) if flag)  # Key j 对应第 j 位


def f12_explore_states(max_past: int = EXPLORE_MAX_PAST, max_new: int = EXPLORE_MAX_NEW) -> dict:
    """探索面板能到达的每一种设定，预先算好，按结构压缩成一份小数据（网页只查表）。

    设定是 past（0 到 ``max_past``）、new（1 到 ``max_new``）、因果规则开或关、PAD 的位置
    （``PAD_PLACES``）与个数（1 到 Key 总数）。同样的字符串、句子和表行只存一次：

    - ``text``：字符串池，句子切成的片段（一组 Key、行名、单独的数各成一片）；
    - ``sentences``：每句是 ``text`` 片段的编号列表（表行的句子不含句首的行名）；
    - ``rows``：每个表行是 ``[可见, mask 为 −∞, 写错的表, 少读, 少读缓存数, 少读本批数, 整行被屏蔽,
      句子, 少读句子]``，前四项是按 Key 编号排的位（第 j 位是 Key j）；
    - ``states[past][new - 1][因果开 0 / 关 1][PAD 位置][个数 - 1 或 0]`` 是
      ``[Key 总数, 表行编号列表, 状态句, 少读的状态句, 策略说明]``（后三项是 ``sentences`` 的编号）；
    - ``start``：面板打开时的设定（F12 最后一步的 past 与 new）；``counts[past][new - 1]``：PAD 个数的选项；
    - ``labels``、``prefix``、``lost_prefix``、``wrong_labels``、``keys``：行名、句首、表头；
      ``cells`` 与 ``mask_cells``：格子的写法；``words``：控件与表题的文字。

    ``explore_state`` 把一种设定还原成完整的表和句子。

    >>> data = f12_explore_states(max_past=1, max_new=1)
    >>> data["choices"]
    {'past': [0, 1], 'new': [1], 'causal': [True, False], 'pad': ['none', 'front', 'end']}
    >>> n_key, ids, status, lost, note = data["states"][1][0][0][1][0]  # past = 1，new = 1，因果，PAD 在前面 1 个
    >>> n_key, data["rows"][ids[0]][:4]  # 按位：可见（Key 1）、mask 为 −∞（Key 0）、写错的表（无）、少读（Key 1）
    (2, [2, 1, 0, 2])
    >>> f12_explore_states(max_new=0)
    Traceback (most recent call last):
    ...
    ValueError: max_new 必须是 1 到 9 之间的整数，收到 0
    """
    for name, value, low in (("max_past", max_past, 0), ("max_new", max_new, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= 9:
            raise ValueError(f"{name} 必须是 {low} 到 9 之间的整数，收到 {value!r}")
    pool: dict = {}
    sentences: dict = {}
    records: dict = {}

    def text_id(s: str) -> int:
        return pool.setdefault(s, len(pool))

    def sentence_id(s: str) -> int:
        pieces = tuple(text_id(p) for p in _PIECES.split(s) if p)
        return sentences.setdefault(pieces, len(sentences))

    sentence_id("")  # 编号 0：空句，没有整行被屏蔽的行时的策略说明
    states = []
    for past in range(max_past + 1):
        by_new = []
        for new in range(1, max_new + 1):
            n_key = past + new
            by_causal = []
            for causal in (True, False):
                by_pad = []
                for pad in PAD_PLACES:
                    counts = [0] if pad == "none" else range(1, n_key + 1)
                    by_count = []
                    for count in counts:
                        facts = visibility_facts(new, past=past, key_valid=pad_valid(n_key, pad, count), causal=causal)
                        mask = att.additive_mask(facts["visible"])
                        ids = []
                        for r, visible, minus, wrong in zip(facts["rows"], facts["visible"], mask, facts["row_index"]):
                            prefix = _label_gap(row_label(r, past))
                            sentence, lost = row_sentence(r, past), lost_sentence(r)
                            lost_prefix = f"行 {r['row']} "
                            if not (sentence.startswith(prefix) and lost.startswith(lost_prefix)):
                                raise AssertionError(f"句首与行名对不上：{sentence!r}、{lost!r}")
                            lost_keys = r["lost_cached"] + r["lost_new"]
                            record = (
                                _bits(visible), _bits([m == float("-inf") for m in minus]), _bits(wrong),
                                _bits([j in lost_keys for j in range(n_key)]),
                                len(r["lost_cached"]), len(r["lost_new"]), int(r["empty"]),
                                sentence_id(sentence[len(prefix):]), sentence_id(lost[len(lost_prefix):]),
                            )
                            ids.append(records.setdefault(record, len(records)))
                        by_count.append([
                            n_key, ids, sentence_id(explore_status(facts)),
                            sentence_id(lost_status(facts)), sentence_id(empty_row_note(facts)),
                        ])
                    by_pad.append(by_count)
                by_causal.append(by_pad)
            by_new.append(by_causal)
        states.append(by_new)

    n_max = max_past + max_new
    minus_inf, zero = (fmt.short(x) for x in att.additive_mask([[False, True]])[0])
    return {
        "choices": {
            "past": list(range(max_past + 1)), "new": list(range(1, max_new + 1)),
            "causal": [True, False], "pad": list(PAD_PLACES),
        },
        "start": {"past": min(PAST, max_past), "new": min(NEW, max_new), "pad": "none", "causal": True},
        "counts": [[list(range(1, past + new + 1)) for new in range(1, max_new + 1)] for past in range(max_past + 1)],
        "words": explore_words(),
        "cells": [fmt.mark(False), fmt.mark(True)],  # 按“可见”位取：0 禁止，1 允许
        "mask_cells": [zero, minus_inf],  # 按“mask 为 −∞”位取
        "keys": [f"Key {j}" for j in range(n_max)],
        "labels": [[f"行 {i}（绝对位置 {past + i}）" for i in range(max_new)] for past in range(max_past + 1)],
        "prefix": [
            [_label_gap(row_label({"row": i, "position": past + i}, past)) for i in range(max_new)]
            for past in range(max_past + 1)
        ],
        "lost_prefix": [f"行 {i} " for i in range(max_new)],
        "wrong_labels": [f"行 {i}（误当位置 {i}）" for i in range(max_new)],
        "text": list(pool),
        "sentences": [list(s) for s in sentences],
        "rows": [list(r) for r in records],
        "states": states,
    }


def explore_state(data: dict, past: int, new: int, pad: str = "none", count: int = 0, causal: bool = True) -> dict:
    """从 ``f12_explore_states`` 的数据里查出一种设定，还原成完整的表和句子（网页的脚本做同样的查找）。

    >>> data = f12_explore_states(max_past=3, max_new=2)
    >>> s = explore_state(data, 3, 2)
    >>> s["keys"], s["status"]
    (['Key 0', 'Key 1', 'Key 2', 'Key 3', 'Key 4'], '2 个查询行、5 个 Key，每行都有可读的 Key。')
    >>> [(r["label"], r["sentence"]) for r in s["rows"]][0]
    ('行 0（绝对位置 3）', '行 0（绝对位置 3）可读 Key 0–3；Key 4 在它之后。')
    >>> s["rows"][0]["visible"], s["rows"][0]["mask"], s["rows"][0]["lost_cached"], s["rows"][0]["lost_new"]
    ([True, True, True, True, False], ['0', '0', '0', '0', '−∞'], 2, 1)
    >>> explore_state(data, 4, 2)
    Traceback (most recent call last):
    ...
    ValueError: past 必须是 0、1、2、3 之一，收到 4
    """
    choices = data["choices"]
    for name, value in (("past", past), ("new", new), ("pad", pad), ("causal", causal)):
        if isinstance(value, bool) != (name == "causal") or value not in choices[name]:
            raise ValueError(f"{name} 必须是 {'、'.join(str(c) for c in choices[name])} 之一，收到 {value!r}")
    p = choices["past"].index(past)
    by_count = data["states"][p][choices["new"].index(new)][choices["causal"].index(causal)][choices["pad"].index(pad)]
    index = 0 if pad == "none" else count - 1
    if not isinstance(count, int) or isinstance(count, bool) or (pad == "none") != (count == 0) \
            or not 0 <= index < len(by_count):
        raise ValueError(f"count 必须是 0（没有 PAD）或 1 到 {len(by_count)}，收到 {count!r}")
    n_key, ids, status, lost, note = by_count[index]
    text = data["text"]

    def bits(b: int) -> list[bool]:
        return [bool(b >> j & 1) for j in range(n_key)]

    def words(s: int) -> str:
        return "".join(text[t] for t in data["sentences"][s])

    rows = []
    for i, rid in enumerate(ids):
        visible, minus, wrong, lost_bits, lost_cached, lost_new, empty, sentence, lost_text = data["rows"][rid]
        rows.append({
            "label": data["labels"][p][i], "wrong_label": data["wrong_labels"][i],
            "visible": bits(visible), "cells": [data["cells"][b] for b in bits(visible)],
            "mask": [data["mask_cells"][b] for b in bits(minus)], "wrong": bits(wrong), "lost": bits(lost_bits),
            "lost_cached": lost_cached, "lost_new": lost_new, "empty": bool(empty),
            "sentence": data["prefix"][p][i] + words(sentence), "lost_sentence": data["lost_prefix"][i] + words(lost_text),
        })
    return {
        "keys": data["keys"][:n_key], "rows": rows,
        "status": words(status), "lost_status": words(lost), "note": words(note),
    }


def causal_table(n_query: int, n_key: int, align: str) -> list[list[bool]]:
    """按某种对齐方式造因果表：``"top-left"`` 让第 i 行读 Key 0…i，``"bottom-right"`` 读 0…i + n_key − n_query。

    这正是各库文档描述的两种“下三角”：查询和 Key 一样多时两者相同，查询更少时才分开。

    >>> causal_table(2, 5, "bottom-right")
    [[True, True, True, True, False], [True, True, True, True, True]]
    >>> causal_table(2, 5, "middle")
    Traceback (most recent call last):
    ...
    ValueError: align 必须是 'top-left' 或 'bottom-right'，收到 'middle'
    """
    if not isinstance(align, str) or align not in ALIGNMENT:
        raise ValueError(f"align 必须是 'top-left' 或 'bottom-right'，收到 {align!r}")
    att.check_count(n_query, "n_query", maximum=att.MAX_POSITIONS)
    att.check_count(n_key, "n_key", maximum=att.MAX_POSITIONS)
    if n_key < n_query:
        raise ValueError(f"n_key={n_key} 不能少于 n_query={n_query}：查询读的是缓存加新位置")
    shift = n_key - n_query if align == "bottom-right" else 0
    return [[j <= i + shift for j in range(n_key)] for i in range(n_query)]


def alignment_facts(past: int, new: int) -> dict:
    """把两种对齐方式与本书的正确偏移、故意写错的偏移逐格比较，并生成结论句。

    缓存里有 ``past`` 个位置、新来 ``new`` 个查询：右下对齐应当就是 ``visibility(past=past)``，
    左上对齐就是把行号当位置的 ``row_index_visibility``。

    >>> facts = alignment_facts(3, 2)
    >>> facts["bottom_right_is_past"], facts["top_left_is_row_index"]
    (True, True)
    >>> facts["sentence"]
    '缓存里有 3 个位置、新来 2 个查询时：右下对齐的表与本书按 past + i 造的表逐格相同；左上对齐的表与把行号当位置的错误写法逐格相同，比正确的表少了 6 格。'
    """
    att.check_count(past, "past", minimum=0, maximum=att.MAX_POSITIONS)
    n_key = past + att.check_count(new, "new", maximum=att.MAX_POSITIONS)
    right = att.visibility(new, n_key, past=past)
    wrong = att.row_index_visibility(new, n_key)
    bottom_right = causal_table(new, n_key, "bottom-right")
    top_left = causal_table(new, n_key, "top-left")
    lost = sum(r and not t for rr, tr in zip(right, top_left) for r, t in zip(rr, tr))
    facts = {
        "bottom_right_is_past": bottom_right == right,
        "top_left_is_row_index": top_left == wrong,
        "top_left_lost_cells": lost,
    }
    first = "相同" if facts["bottom_right_is_past"] else "不同"
    second = "相同" if facts["top_left_is_row_index"] else "不同"
    tail = f"，比正确的表少了 {lost} 格" if lost else "，与正确的表也一样（没有缓存时两种对齐方式重合）"
    facts["sentence"] = (
        f"缓存里有 {past} 个位置、新来 {new} 个查询时：右下对齐的表与本书按 past + i 造的表逐格{first}；"
        f"左上对齐的表与把行号当位置的错误写法逐格{second}{tail}。"
    )
    return facts


# -- the page's own small writers ------------------------------------------------------------------
def position(past: int = 0):
    """A row label by absolute position: ``position()(2)`` is ``绝对位置 2``."""
    return lambda i: f"绝对位置 {past + i}"


def numbers(matrix, label, digits: int = 4) -> list[list[str]]:
    """Table rows: a label, then each computed value (``fmt.fmt``)."""
    return [[label(i)] + [fmt.fmt(x, digits) for x in row] for i, row in enumerate(matrix)]


def marks(table, label) -> list[list[str]]:
    """Table rows: a label, then each visibility cell in symbol and words (``fmt.mark``)."""
    return [[label(i)] + [fmt.mark(flag) for flag in row] for i, row in enumerate(table)]


def column(matrix) -> str:
    """The first entries of a matrix's rows, as typed: a one-column V, ``10、20、30``.

    >>> column([[10.0], [-2.5]])
    '10、−2.5'
    """
    return "、".join(fmt.short(row[0]) for row in att.as_matrix(matrix, "matrix"))


def row_text(values) -> str:
    """One row of scores as typed, in square brackets.

    >>> row_text([0.0, 1.0, -2.0])
    '[0, 1, −2]'
    """
    return "[" + ", ".join(fmt.short(x) for x in att.as_vector(values, "values")) + "]"


def symbols(row) -> str:
    """A row of a visibility table in symbols only, for a table cell that lists every key.

    >>> symbols([True, False])
    '✓ ✗'
    """
    return " ".join("✓" if flag else "✗" for flag in att.flags(row, "row"))


def power_of_ten(x: float) -> str:
    """A large round number the way code writes it: −1e9.

    >>> power_of_ten(-1e9), power_of_ten(1e4)
    ('−1e9', '1e4')
    """
    x = att.real(x, "x")
    exponent = round(math.log10(abs(x))) if x and math.isfinite(x) else None
    if exponent is None or abs(x) != 10.0**exponent:
        raise ValueError(f"x 必须是 ±10 的整数次幂，收到 {x!r}")
    return ("" if x > 0 else fmt.MINUS) + f"1e{exponent}"


def bullets(lines) -> Md:
    """A Markdown list, one line an item."""
    return Md("\n".join(f"- {line}" for line in lines))


def quoted(names) -> str:
    """Names in Chinese quotation marks, joined by 、.

    >>> quoted(["不泄漏", "与整段重算一致"])
    '“不泄漏”、“与整段重算一致”'
    """
    return "、".join(f"“{name}”" for name in names)


# -- the page's inputs (hand-made; each example states them in its 输入与适用条件) -------------------
LEFT_Q = [[0.5, 0.5], [0.5, -0.5], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]  # Q = K
LEFT_V = [[90.0], [80.0], [10.0], [20.0], [30.0]]  # the PAD's V far from the content's
LEFT_VALID = [False, False, True, True, True]  # left padding: two PAD in front
BIG = -1e9  # the large negative number many code bases write instead of −∞
LEAK_Q = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0], [2.0, 0.0], [0.0, -1.0], [1.0, 2.0]]
LEAK_POISON = 100.0  # the last position's V when "the future changes"
GAP_BASE = [0.0, 1.0, 2.0]


# -- the page, section by section ------------------------------------------------------------------
def figure_inputs() -> dict:
    """The inputs F12 names in its 输入与适用条件 (the defaults of ``f12_frames``)."""
    return {"f12_n": N_POSITIONS, "f12_causal_steps": f"第 1 至 {N_POSITIONS} 步",
            "f12_score_step": f"第 {N_POSITIONS + 1} 步", "f12_cache_step": f"第 {N_POSITIONS + 2} 步",
            "f12_past": PAST, "f12_new": NEW}


def demo_section(q=att.DEMO_Q, k=att.DEMO_K, v=att.DEMO_V) -> dict:
    """一步一步：分数、可见性表与它的加性 mask（一张表）、屏蔽后的分数、权重与输出（因果，没有缓存与 PAD）。"""
    q, k, v = att.as_matrix(q, "Q"), att.as_matrix(k, "K"), att.as_matrix(v, "V")
    n, d = len(q), len(q[0])
    scores = att.scaled_scores(q, k)
    visible = att.visibility(n, len(k))
    mask = att.additive_mask(visible)
    masked = [[s + m for s, m in zip(srow, mrow)] for srow, mrow in zip(scores, mask)]
    weights, outputs = att.masked_attention(q, k, v, visible)
    keys = fmt.keys(len(k))
    return {
        "demo_n": n, "demo_d": d, "demo_past": 0,
        "demo_positions": "、".join(str(i) for i in range(n)),
        "demo_qk": fmt.vectors(q), "demo_v": column(v),
        "tbl_scores": Table(keys, numbers(scores, position())),
        "tbl_visible_mask": Table(keys, [  # each cell: the rule in symbol and words, then what the mask adds
            [position()(i)] + [f"{fmt.mark(flag)} → {fmt.fmt(m, 0)}" for flag, m in zip(vrow, mrow)]
            for i, (vrow, mrow) in enumerate(zip(visible, mask))
        ]),
        "tbl_masked": Table(keys, numbers(masked, position())),
        "tbl_weights": Table(keys + ["输出"], [  # the output column: the weights of its row times V
            row + [fmt.fmt(out[0])] for row, out in zip(numbers(weights, position()), outputs)
        ]),
        "demo_first": 0, "demo_last": n - 1,
        "demo_first_reads": keys_text(visibility_facts(n)["rows"][0]["readable"]),
    }


def hand_section(q=att.DEMO_Q, k=att.DEMO_K, v=att.DEMO_V, row: int | None = None) -> dict:
    """一行从头算到尾：分数取自分数表，加 mask、取指数、相除、乘 V，每一步一行表。

    默认取第一个既有两个以上可读的 Key、又有被禁止的 Key 的行（演示数据里是位置 1）。
    """
    q, k, v = att.as_matrix(q, "Q"), att.as_matrix(k, "K"), att.as_matrix(v, "V")
    table = att.visibility(len(q), len(k))
    masked_rows = [i for i, r in enumerate(table) if sum(r) >= 2 and not all(r)]
    hand = (masked_rows[0] if masked_rows else len(q) - 1) if row is None else row
    if not isinstance(hand, int) or isinstance(hand, bool) or not 0 <= hand < len(q):
        raise ValueError(f"row 必须是 0 到 {len(q) - 1} 之间的整数，收到 {row!r}")
    visible = table[hand]
    scores = att.scaled_scores(q, k)[hand]
    masked = [s + m for s, m in zip(scores, att.additive_mask([visible])[0])]
    exps = [math.exp(x) for x in masked]  # exp(−∞) = 0
    weights = [e / sum(exps) for e in exps]
    weighted = [w * x[0] for w, x in zip(weights, v)]
    weights_code, out_code = att.masked_attention([q[hand]], k, v, [visible])
    if max(abs(a - b) for a, b in zip(weights, weights_code[0])) > 1e-12:
        raise AssertionError("手算的权重应当等于 masked_attention 的权重")
    output = out_code[0][0]
    cells = lambda xs: [fmt.fmt(x) for x in xs]  # noqa: E731
    sign = fmt.equals(sum(fmt.printed(fmt.fmt(x)) for x in weighted), output)
    return {
        "hand_row": hand,
        "hand_keys": keys_text([j for j, ok in enumerate(visible) if ok]),
        "hand_forbidden": keys_text([j for j, ok in enumerate(visible) if not ok]) if not all(visible) else "没有 Key",
        "tbl_hand": Table(["步骤 ＼ Key"] + [f"Key {j}" for j in range(len(k))], [
            ["分数（取自分数表）"] + cells(scores), ["加 mask"] + cells(masked), ["exp"] + cells(exps),
            ["权重 = exp ÷ 总和"] + cells(weights), ["V"] + [fmt.short(x[0]) for x in v],
            ["权重 × V"] + cells(weighted)]),
        "hand_total": fmt.fmt(sum(exps)),
        "hand_sum": " + ".join(cells(weighted)), "hand_output": fmt.fmt(output), "hand_equals": sign,
        "hand_equals_note": "" if sign == "=" else
        "（各项印出时已四舍五入，用印出的数相加，最后一位会差一点，所以写 ≈）",
        "hand_rounding": rounding_note(weights, [x[0] for x in v], output),
    }


def left_section(q=LEFT_Q, v=LEFT_V, valid=LEFT_VALID) -> dict:
    """左侧填充：因果、PAD 与两者取“与”的一张表，哪些真实查询变了，以及真实查询的权重。"""
    q, v = att.as_matrix(q, "Q"), att.as_matrix(v, "V")
    n = len(q)
    valid = att.flags(valid, "valid", n)
    before, after = visibility_facts(n), visibility_facts(n, key_valid=valid)
    pad_only = att.visibility(n, n, causal=False, key_valid=valid)
    w, out = att.attention(q, q, v, key_valid=valid, empty_row="zero")
    return {
        "left_n": n,
        "left_pad_keys": keys_text([j for j, ok in enumerate(valid) if not ok]),
        "left_real_keys": keys_text([j for j, ok in enumerate(valid) if ok]),
        "left_qk": fmt.vectors(q), "left_v": column(v),
        "tbl_left_and": Table(["查询", "只用因果", "只用 PAD", "两者取“与”"], [
            [position()(i), symbols(c), symbols(p), symbols(b)]
            for i, (c, p, b) in enumerate(zip(before["visible"], pad_only, after["visible"]))
        ]),
        "tbl_left_weights": Table(fmt.keys(n) + ["输出"], [
            [position()(i) + ("（整行被屏蔽）" if fact["empty"] else "")]
            + (["—"] * (n + 1) if fact["empty"] else [fmt.fmt(x) for x in wi] + [fmt.fmt(o[0])])
            for i, (fact, wi, o) in enumerate(zip(after["rows"], w, out))
        ]),
        "left_change": pad_change_sentence(before, after, valid),
    }


def encoder_section(q=LEFT_Q, v=LEFT_V, valid=LEFT_VALID) -> dict:
    """编码器：同样的行，PAD 换到句尾，没有因果规则；加与不加 PAD 规则的输出对照。"""
    q, v = att.as_matrix(q, "Q"), att.as_matrix(v, "V")
    n = len(q)
    valid = att.flags(valid, "valid", n)
    order = [j for j in range(n) if valid[j]] + [j for j in range(n) if not valid[j]]  # PAD to the end
    enc_q, enc_v = [q[j] for j in order], [v[j] for j in order]
    pad = att.key_padding(valid.count(True), n)
    before, after = visibility_facts(n, causal=False), visibility_facts(n, causal=False, key_valid=pad)
    _, open_out = att.attention(enc_q, enc_q, enc_v, causal=False)
    _, pad_out = att.attention(enc_q, enc_q, enc_v, causal=False, key_valid=pad)
    return {
        "enc_n": n, "enc_valid": valid.count(True),
        "enc_real_keys": keys_text([j for j, ok in enumerate(pad) if ok]),
        "enc_qk": fmt.vectors(enc_q), "enc_v": column(enc_v),
        "tbl_enc": Table(["查询", "PAD 规则下的可见性", "不加 PAD 规则的输出", "加 PAD 规则的输出"], [
            [position()(i), symbols(vis), fmt.fmt(o[0]), fmt.fmt(p[0])]
            for i, (vis, o, p) in enumerate(zip(after["visible"], open_out, pad_out))
        ]),
        "enc_change": pad_change_sentence(before, after, pad),
    }


def conventions_section(seen: dict | None = None, past: int = PAST, new: int = NEW) -> dict:
    """各库约定表、全屏蔽的行在各条路径上的观察与说明它们的句子，以及 F12 最后一步的输入上两种对齐方式的结论句。"""
    align = alignment_facts(past, new)
    seen = observed() if seen is None else seen
    return {
        "tbl_conventions": Table(HEADER, conventions_rows(seen)),
        "tbl_fully_masked": Table(FULLY_MASKED_HEADER, fully_masked_rows(seen)),
        "fully_masked_versions": versions_words(seen),
        "float_mask_sentence": Md(float_mask_sentence(seen)),
        "unavailable_sentence": Md(unavailable_sentence(seen)),
        "gpu_sentence": Md(gpu_sentence(seen)),
        "align_sentence": align["sentence"],
        "align_cache": "所以 KV 缓存要的是右下对齐" if align["bottom_right_is_past"] else "两种对齐都不等于本书的偏移",
    }


def policies_section(q=LEFT_Q, v=LEFT_V, valid=LEFT_VALID, big: float = BIG) -> dict:
    """整行都被禁止：−∞ 加普通 softmax、大负数、置零、报错，在左侧填充的例子上并排算出。"""
    q, v = att.as_matrix(q, "Q"), att.as_matrix(v, "V")
    n = len(q)
    valid = att.flags(valid, "valid", n)
    facts = visibility_facts(n, key_valid=valid)
    empty_rows = [r["position"] for r in facts["rows"] if r["empty"]]
    if not empty_rows:
        raise ValueError("valid 必须让至少一行整行被屏蔽：这一节比较的正是这样的行")
    real_rows = [i for i, ok in enumerate(valid) if ok]
    first = empty_rows[0]
    big_text = power_of_ten(big)
    visible = facts["visible"]
    w_right, _ = att.attention(q, q, v, key_valid=valid, empty_row="zero")
    results = {
        "−∞ 加普通 softmax": att.unguarded_attention(q, q, v, visible),
        f"填大负数 {big_text}": att.unguarded_attention(q, q, v, visible, fill=big),
        "输出置零（\"zero\"）": att.attention(q, q, v, key_valid=valid, empty_row="zero"),
    }

    def next_layer(out):
        # One more product: the real rows mix this layer's outputs with the same (correct) weights.
        return [sum(w * o[0] for w, o in zip(w_right[i], out)) for i in real_rows]

    rows = [[name, " / ".join(fmt.fmt(x) for x in w[first]), fmt.fmt(out[first][0]),
             " / ".join(fmt.fmt(out[i][0]) for i in real_rows), " / ".join(fmt.fmt(x) for x in next_layer(out))]
            for name, (w, out) in results.items()]
    try:
        att.attention(q, q, v, key_valid=valid)
    except ValueError as error:
        message = str(error)
    else:
        raise AssertionError("attention 应当对整行被屏蔽的行报错")
    rows.append(["报错（\"error\"，本书默认）", "报错", "报错", "—", "—"])
    w_big, out_big = results[f"填大负数 {big_text}"]
    nexts = {name: [fmt.fmt(x) for x in next_layer(out)] for name, (w, out) in results.items()}
    same_next = nexts[f"填大负数 {big_text}"] == nexts["输出置零（\"zero\"）"]
    return {
        "policy_empty_rows": positions_text(empty_rows), "policy_big": big_text,
        "tbl_policies": Table(["策略", f"位置 {first} 的权重", f"位置 {first} 的输出",
                               f"真实查询{positions_text(real_rows)} 的输出", "下一层后真实查询的输出"], rows),
        "empty_row_error": message,
        "policy_uniform": fmt.fmt(w_big[first][0]), "policy_big_out": fmt.fmt(out_big[first][0]),
        "policy_big_reads": keys_text([j for j in range(n) if w_big[first][j] > 0]),
        "policy_loss": loss_rows_sentence(valid),
        "policy_big_next": "“下一层”一列里，它与“输出置零”给出的真实输出逐个相同：下一层里真实查询给这一行的权重是 0，"
                           "有限的数乘 0 仍是 0，它没有传开" if same_next else
                           "“下一层”一列里，它与“输出置零”给出的真实输出不同：这一行的输出已经传进了下一层",
    }


FILL_DTYPES = ("float16", "float32", "float64")  # the floating formats of the −1e9 section


def _dtype_number(x: float) -> str:
    return fmt.short(x) if not math.isfinite(x) or abs(x) < 1e6 else fmt.sci(x)


def dtype_section(dtype: str = "float16", q=LEFT_Q, valid=LEFT_VALID, big: float = BIG) -> dict:
    """大负数在别的数据类型里：用 numpy 在 ``dtype`` 里重算左侧填充例子里第一个整行被屏蔽的行。

    三种写法：把禁止格子的分数换成 ``big``（与“大负数”策略相同）；换成 ``numpy.finfo(dtype).min``；
    因果 mask 与 PAD mask 各在禁止处取 ``finfo.min``、允许处取 0，两张都加到分数上。分数、填进去的数
    与 mask 都先转成 ``dtype``，再在 ``dtype`` 里相加、做 softmax。
    返回表 ``tbl_dtype`` 与三句结论（每句只说表里算出的事）。

    >>> d = dtype_section()
    >>> d["dtype_min"], d["dtype_twice"], [row[1] for row in d["tbl_dtype"].rows]
    ('−65504', '−∞', ['−∞', '−65504', '−65504 或 −∞'])
    >>> print(d["dtype_big_sentence"])
    在 float16 里，−1e9 比最小的有限数 −65504 还小，numpy.float16(−1e9) 就是 −∞：大负数策略在这里退回成“−∞ 加普通 softmax”，位置 0 的权重全是 NaN。
    >>> dtype_section("int8")
    Traceback (most recent call last):
    ...
    ValueError: dtype 必须是 float16、float32、float64 之一，收到 'int8'
    """
    import numpy as np  # 只有这一节需要 numpy：Python 的 float 只有 float64 一种

    if dtype not in FILL_DTYPES:
        raise ValueError(f"dtype 必须是 {'、'.join(FILL_DTYPES)} 之一，收到 {dtype!r}")
    q = att.as_matrix(q, "Q")
    n = len(q)
    valid = att.flags(valid, "valid", n)
    big = att.real(big, "big")
    try:
        if big >= 0:
            raise ValueError
        big_text = power_of_ten(big)
    except ValueError:
        raise ValueError(f"big 必须是 −10 的整数次幂（如 −1e9），收到 {big!r}") from None
    facts = visibility_facts(n, key_valid=valid)
    empty = [r["row"] for r in facts["rows"] if r["empty"]]
    if not empty:
        raise ValueError("valid 必须让至少一行整行被屏蔽：这一节比较的正是这样的行")
    row = empty[0]
    t = np.dtype(dtype)
    fmin = np.finfo(t).min
    causal_ok, both_ok = att.visibility(n, n)[row], facts["visible"][row]
    scores = np.asarray(att.scaled_scores(q, q)[row], dtype=t)

    def fill(ok: list[bool], value) -> "np.ndarray":
        with np.errstate(over="ignore"):  # float16(−1e9) overflows to −∞: that is what this section shows
            return np.asarray([0.0 if flag else value for flag in ok], dtype=np.float64).astype(t)

    def softmax_in(x) -> list[float]:
        with np.errstate(over="ignore", invalid="ignore"):  # (−∞) − (−∞) is NaN: the case shown
            e = np.exp(x - x.max())
            return [float(w) for w in e / e.sum()]

    ok = np.asarray(both_ok)
    with np.errstate(over="ignore"):
        twice = float(fmin + fmin)  # in dtype: numpy keeps the type of its operands
        cases = [
            (f"禁止的格子换成 {big_text}", np.where(ok, scores, fill([False], big)[0])),
            (f"禁止的格子换成 finfo({dtype}).min", np.where(ok, scores, fmin)),
            (f"因果 mask 与 PAD mask 各取 finfo({dtype}).min，都加到分数上",
             scores + (fill(causal_ok, fmin) + fill(valid, fmin))),
        ]
    rows, weights = [], []
    for name, x in cases:
        w, cells = softmax_in(x), [float(c) for c in x]
        weights.append(w)
        values = sorted({c for c, flag in zip(cells, both_ok) if not flag}, reverse=True)
        rows.append([name, " 或 ".join(_dtype_number(c) for c in values), " / ".join(fmt.fmt(x) for x in w)])
    w_big, w_min, w_two = weights
    min_text, big_in = _dtype_number(float(fmin)), float(fill([False], big)[0])
    if math.isinf(big_in):
        big_sentence = (f"在 {dtype} 里，{big_text} 比最小的有限数 {min_text} 还小，numpy.{dtype}({big_text}) 就是 −∞："
                        f"大负数策略在这里退回成“−∞ 加普通 softmax”，位置 {row} 的权重"
                        + ("全是 NaN。" if all(math.isnan(x) for x in w_big) else "并不是 NaN。"))
    else:
        big_sentence = (f"在 {dtype} 里，{big_text} 仍是有限数，位置 {row} 的权重"
                        + ("平均分配，与上表“填大负数”一行相同。" if len(set(w_big)) == 1 else "并不平均。"))
    uniform = all(math.isfinite(x) for x in w_min) and len(set(w_min)) == 1
    min_sentence = (f"numpy.finfo({dtype}).min 本身是有限的：位置 {row} 的分数换成它之后全都相同，"
                    + ("权重平均分配，又回到了大负数的结果，读的仍全是被禁止的 Key。" if uniform else "权重却不平均。"))
    doubled = [j for j, (a, b) in enumerate(zip(fill(causal_ok, fmin), fill(valid, fmin))) if a and b]
    with np.errstate(over="ignore", invalid="ignore"):
        all_twice = np.full(n, fmin, dtype=t) + np.full(n, fmin, dtype=t)
        all_twice_nan = bool(np.isnan(np.exp(all_twice - all_twice.max())).all())
    two_sentence = f"可它经不起相加：{min_text} + ({min_text}) 在 {dtype} 里是 {_dtype_number(twice)}。"
    if doubled and math.isinf(twice):
        two_sentence += (f"因果 mask 与 PAD mask 分别加到分数上时，被两条规则同时挡住的 {keys_text(doubled)} "
                         f"又成了 −∞，权重为 {fmt.fmt(w_two[doubled[0]])}")
        two_sentence += "；" if all_twice_nan else "。"
    if all_twice_nan:
        two_sentence += ("一整行的格子都被两条规则同时挡住时，" if doubled else "") + "这一行又是 NaN。"
    return {
        "dtype_name": dtype, "dtype_row": row, "dtype_min": min_text, "dtype_twice": _dtype_number(twice),
        "tbl_dtype": Table(["写法", f"禁止的格子在 {dtype} 里是", f"位置 {row} 的权重（{dtype}）"], rows),
        "dtype_big_sentence": big_sentence, "dtype_min_sentence": min_sentence, "dtype_two_sentence": two_sentence,
    }


def cache_section(past: int = PAST, new: int = NEW) -> dict:
    """用了缓存：F12 最后一步（past、new）的后果一句；深入块里是逐词生成（new = 1）的一张表。"""
    att.check_count(past, "past", minimum=0, maximum=FIGURE_MAX_POSITIONS)
    att.check_count(new, "new", maximum=FIGURE_MAX_POSITIONS)
    facts, worst = visibility_facts(new, past=past), visibility_facts(1, past=past)
    n_key = past + 1
    (row,) = worst["rows"]
    wrong = [j for j in range(n_key) if worst["row_index"][0][j]]
    return {
        "offset_past": past, "offset_new": new, "offset_moral": cache_moral(facts),
        "worst_past": past, "worst_new": 1, "worst_keys": n_key, "worst_range": f"位置 0 到 {n_key - 1}",
        "tbl_worst": Table(fmt.keys(n_key),
                           marks(worst["visible"], lambda i: f"正确：行 {i}（绝对位置 {past + i}）")
                           + marks(worst["row_index"], lambda i: f"写错：行 {i}（误当位置 {i}）")),
        "worst_reads": f"正确的表许这个新查询读 {keys_text(row['readable'])}，写错的表只许读 "
                       f"{keys_text(wrong)}：每生成一个词，都只剩 {len(wrong)} 个 Key 可读。",
    }


def checks_section(past: int = PAST, new: int = NEW, poison: float = LEAK_POISON) -> dict:
    """如何判断是否做对：不加 mask、正确偏移、写错偏移各过一遍“不泄漏”与“与整段重算一致”。"""
    att.check_count(past, "past", minimum=0)
    # new ≥ 2: the check changes the V of the last position, which must come after the first new query.
    if att.check_count(new, "new", minimum=2) + past > len(LEAK_Q):
        raise ValueError(f"past + new 不能超过 {len(LEAK_Q)}（这一节只准备了这么多个向量），收到 {past + new}")
    q = LEAK_Q[: past + new]
    v = [[float(j + 1)] for j in range(past + new)]
    v_future = v[:-1] + att.as_matrix([[poison]], "poison")
    first, last = past, past + new - 1
    _, reference = att.attention(q, q, v)
    plans = {
        "不加 mask": att.visibility(new, past + new, causal=False),
        "正确偏移 past + i": att.visibility(new, past + new, past=past),
        "写错偏移（行号 i）": att.row_index_visibility(new, past + new),
    }
    rows, verdict = [], {}
    for plan, table in plans.items():
        out = att.masked_attention(q[past:], q, v, table)[1]
        out_future = att.masked_attention(q[past:], q, v_future, table)[1]
        leaks, same = out[0] != out_future[0], out == reference[past:]
        verdict[plan] = (leaks, same)
        rows.append([plan, fmt.fmt(out[0][0]), fmt.fmt(out_future[0][0]), "是（泄漏）" if leaks else "否",
                     fmt.fmt(out[-1][0]), "一致" if same else "不一致"])
    return {
        "leak_n": len(q), "leak_qk": fmt.vectors(q), "leak_v": column(v), "leak_last": last,
        "leak_poison": fmt.short(v_future[-1][0]), "leak_past": past, "leak_new": new,
        "tbl_checks": Table(["算法", f"位置 {first} 输出", f"改动未来后位置 {first} 输出",
                             f"位置 {first} 受未来影响？", f"位置 {last} 输出", "与整段重算"], rows),
        "ref_first_pos": first, "ref_last_pos": last,
        "ref_first": fmt.fmt(reference[first][0]), "ref_last": fmt.fmt(reference[last][0]),
        "checks_sentence": checks_sentence(verdict, first, last),
    }


def checks_sentence(verdict: dict, first: int, last: int) -> str:
    """哪种算法泄漏、哪种遗漏、哪种两项都通过；``verdict[名字] = (泄漏?, 与整段重算一致?)``。

    >>> print(checks_sentence({"甲": (True, False), "乙": (False, True), "丙": (False, False)}, 3, 4))
    “甲”时，位置 3 的输出随位置 4 的 V 而变，这就是泄漏；“丙”时没有泄漏，结果却与参照答案不一致。只有“乙”两项都通过。
    """
    passing = [p for p, (leaks, same) in verdict.items() if not leaks and same]
    leaking = [p for p, (leaks, _) in verdict.items() if leaks]
    missing = [p for p, (leaks, same) in verdict.items() if not leaks and not same]
    parts = []
    if leaking:
        parts.append(f"{quoted(leaking)}时，位置 {first} 的输出随位置 {last} 的 V 而变，这就是泄漏")
    if missing:
        parts.append(f"{quoted(missing)}时没有泄漏，结果却与参照答案不一致")
    text = "；".join(parts) + ("。" if parts else "")
    return text + (f"只有{quoted(passing)}两项都通过。" if passing else "没有哪种算法两项都通过。")


def causal_vs_open_section(q=att.DEMO_Q, k=att.DEMO_K, v=att.DEMO_V) -> dict:
    """有无因果 mask：同样的 Q、K、V，一次用因果规则，一次不用任何 mask。"""
    w_causal, out_causal = att.attention(q, k, v)
    w_open, out_open = att.attention(q, k, v, causal=False)
    same_rows = [i for i in range(len(out_causal)) if out_causal[i] == out_open[i]]
    return {
        "tbl_causal_vs_open": Table(["查询", "因果：权重", "因果：输出", "无 mask：权重", "无 mask：输出"], [
            [position()(i), " / ".join(fmt.fmt(x) for x in wc), fmt.fmt(oc[0]),
             " / ".join(fmt.fmt(x) for x in wo), fmt.fmt(oo[0])]
            for i, (wc, oc, wo, oo) in enumerate(zip(w_causal, out_causal, w_open, out_open))
        ]),
        "causal_same": positions_text(same_rows) if same_rows else "没有哪个位置",
    }


def gap_section(base=GAP_BASE, v=att.DEMO_V) -> dict:
    """一行分数的 softmax 与它混合出的输出（差距、平移与温度的对照表在缩放页）。"""
    base = att.as_vector(base, "base")
    p_base = att.softmax(base)
    v = att.as_matrix(v, "V")
    if len(v) != len(base):
        raise ValueError(f"V 的行数必须等于分数的个数 {len(base)}，收到 {len(v)}")
    return {
        "gap_base": row_text(base),
        **{f"p{j}": fmt.fmt(p) for j, p in enumerate(p_base)},
        "mix_values": column(v), "mix_base": fmt.fmt(sum(p * x[0] for p, x in zip(p_base, v))),
    }


# -- the exercises' solutions (the numbers come from code/02_exercises_mask.py) ---------------------
def row_compare_sentence(scores, visible, weights) -> str:
    """练习 2.2.2 的对照句：加 mask 的权重与只对可见分数做 softmax 是否相同。

    >>> row_compare_sentence([2.0, 0.0, 1.0], [True, True, False], [0.8808, 0.1192, 0.0])
    '只对可见的两个分数 [2, 0] 做 softmax，得到的也是 [0.8808, 0.1192]：加 mask 等于把被禁止的 Key 从这一行里拿掉。'
    """
    flags = att.flags(visible, "visible")
    kept = [x for x, ok in zip(att.as_vector(scores, "scores"), flags) if ok]
    plain = [fmt.fmt(w) for w in att.softmax(kept)]
    same = plain == [fmt.fmt(w) for w, ok in zip(att.as_vector(weights, "weights"), flags) if ok]
    return (f"只对可见的{count_words(len(kept))}分数 {row_text(kept)} 做 softmax，得到的"
            + (f"也是 [{', '.join(plain)}]：加 mask 等于把被禁止的 Key 从这一行里拿掉。" if same
               else f"却是 [{', '.join(plain)}]。"))


def decoding_sentence(passed: list[str], caught_by: list[str]) -> str:
    """练习 3 的结论句，由 ``decoding_checks`` 的 ``passed`` 与 ``caught_by`` 写出。

    >>> decoding_sentence(["不泄漏"], ["与整段重算一致"])
    '两种写法都通过“不泄漏”检查；只有“与整段重算一致”一项能认出写法 B。'
    >>> decoding_sentence([], [])
    '两项检查都认不出写法 B。'
    """
    return (("两种写法都通过" + quoted(passed) + "检查；" if passed else "")
            + ("只有" + quoted(caught_by) + "一项能认出写法 B。" if caught_by else "两项检查都认不出写法 B。"))


def pad_cache_sentences(past: int = ex.PAST, new: int = ex.NEW, pad_front: int = ex.PAD_FRONT) -> list[str]:
    """练习 1 的逐行说明：由同一张可见性表（``pad_cache_table``）数出的事实写成。

    >>> pad_cache_sentences()[0]
    '行 0（绝对位置 2）可读 Key 1、Key 2；Key 0 是 PAD；Key 3、Key 4 在它之后。'
    """
    answer = ex.pad_cache_table(past, new, pad_front)
    facts = visibility_facts(new, past=past, key_valid=answer["key_valid"])
    if facts["visible"] != answer["visible"]:
        raise AssertionError("练习 1 的表与逐行说明所数的表不同")
    return [row_sentence(row, past) for row in facts["rows"]]


def exercises() -> dict:
    """练习一节要 glue 的全部值：题目的输入、解答的表、句子和每一步的数。"""
    t1 = ex.pad_cache_table()
    n_key1 = ex.PAST + ex.NEW
    s2 = ex.masked_softmax_steps()
    c3 = ex.decoding_checks()
    n3 = ex.BUG_PAST + ex.BUG_NEW
    return {
        # 练习 1：左侧填充 + 缓存的可见性表
        "ex1_past": ex.PAST, "ex1_new": ex.NEW, "ex1_pad": ex.PAD_FRONT,
        "ex1_keys": f"Key 0 到 Key {n_key1 - 1}",
        "ex1_pad_keys": keys_text([j for j, ok in enumerate(t1["key_valid"]) if not ok]),
        "ex1_table": Table(fmt.keys(n_key1), marks(t1["visible"], lambda i: f"行 {i}（绝对位置 {ex.PAST + i}）")),
        "ex1_sentences": bullets(pad_cache_sentences()),
        "ex1_positions": "、".join(str(ex.PAST + i) for i in range(ex.NEW)),
        # 练习 2.2.2：一行给定的分数加 mask
        "ex2_scores": row_text(ex.SCORES), "ex2_visible": symbols(ex.VISIBLE),
        "ex2_steps": Table(["步骤"] + [f"Key {j}" for j in range(len(ex.SCORES))], [
            ["分数（给定）"] + [fmt.short(x) for x in ex.SCORES],
            ["加 mask"] + [fmt.fmt(x) for x in s2["masked"]],
            ["exp"] + [fmt.fmt(x) for x in s2["exps"]],
            ["÷ 指数之和（权重）"] + [fmt.fmt(x) for x in s2["weights"]],
        ]),
        "ex2_total": fmt.fmt(s2["total"]),
        "ex2_compare": row_compare_sentence(ex.SCORES, ex.VISIBLE, s2["weights"]),
        # 练习 2.2.3：写错的偏移少读了什么
        "ex3_past": ex.BUG_PAST, "ex3_new": ex.BUG_NEW,
        "ex3_qk": fmt.vectors(ex.BUG_Q[:n3]), "ex3_v": column(ex.BUG_V[:n3]),
        "ex3_poison": fmt.short(ex.BUG_POISON), "ex3_last": n3 - 1,
        "ex3_tables": Table(fmt.keys(n3), [row for r in c3["rows"] for row in marks(
            r["visible"], lambda i, r=r: f"{r['name']}：行 {i}（绝对位置 {ex.BUG_PAST + i}）")]),
        "ex3_table": Table(["写法", "新查询的输出", "与整段重算一致", "改动未来的 V 后"], [
            [r["name"], " / ".join(fmt.fmt(o[0]) for o in r["output"]),
             "是" if r["matches_full"] else "否", "不变" if r["no_leak"] else "变了"] for r in c3["rows"]]),
        "ex3_full": " / ".join(fmt.fmt(o[0]) for o in c3["full"]),
        "ex3_lost": "写法 B " + "；".join(
            f"行 {i} 少读 {keys_text(lost)}" if lost else f"行 {i} 一个也不少读"
            for i, lost in enumerate(c3["rows"][1]["lost"])) + "。",
        "ex3_sentence": decoding_sentence(c3["passed"], c3["caught_by"]),
        # 练习 4：写一个函数
        "ex4_doctest": Md(fmt.doctest_block(ex.visible_counts)),
    }
