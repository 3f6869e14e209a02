"""第 2 章图解的数据：动态图解 F12“可见性表播放器”的各帧（默认五帧），全部由 ``02_attention.py`` 算出。

书页上的 ``step-figure`` 指令在构建时调用这里的函数，把返回的数据排成表格和说明。
这里只返回普通数据（字典、列表、字符串、布尔值），不含任何排版代码，所以同一份数据
既能变成网页上的播放器，也能变成 PDF 里按顺序排开的五张静态表。教学代码一改，
下次构建时图里的表、规则和数都跟着变。所用输入都是人工构造的小例子。

每一帧是一个字典：

- ``condition``：这一帧的条件，图注写成“k / 5 · 条件”；
- ``tables``：若干张表，每张有 ``title``、``header`` 和 ``rows``；
  每个格子是 ``{"text": 文字, "state": "allowed" / "forbidden" / None, "highlight": 是否当前行}``；
- ``rule``：当前行的规则；``explanation``：一段说明。

说明里凡是说到个数、Key 的列表或比较的句子，都由 ``visibility_facts`` 从表格所用的
同一张可见性表里数出来（``row_sentence``、``lost_sentence`` 把它们写成句子），
不另用公式推算。书页上的其他例子也用这几个函数生成句子；``explain_rows`` 把事实和
句子按行打包，供逐行探索可见性表时使用。

网页上 F12 下方的探索面板（读者自己设定 past、new、PAD 与因果规则）也不自己计算：
``f12_explore_states`` 把面板能到达的每一种设定预先算好、按结构压缩成一份数据，
``explore_state`` 把其中一种还原成完整的表和句子，网页的脚本只做同样的查找。

直接运行 ``python3 code/02_figures.py`` 会以 JSON 打印这五帧。
"""

from __future__ import annotations

import re

from book_tools import fmt, load, mark, short

att = load("02_attention")

# 第 1—3 帧：三个有效位置，没有缓存，没有 PAD，因果规则。
N_POSITIONS = 3
# 第 4 帧：位置 1 这一行的原始分数（人工给定的输入，不来自其他例子），对照加与不加 mask。
SCORE_ROW = (0.0, 1.0, 2.0)
SCORE_QUERY = 1
# 第 5 帧：缓存里已有 past 个位置，新来 new 个查询。
PAST, NEW = 3, 2


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
    js = [int(j) for j in js]
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
    if not ps:
        raise ValueError("ps 不能为空：没有位置可写")
    return "位置 " + "、".join(str(int(p)) for p in ps)


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
    for name, value, minimum in (("n_query", n_query, 1), ("past", past, 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise ValueError(f"{name} 必须是不小于 {minimum} 的整数，收到 {value!r}")
    n_key = past + n_query
    if key_valid is not None:
        key_valid = list(key_valid)
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
        text += f"；PAD 查询{positions_text(reading)} 仍读真实的 Key，但它的输出不是内容"
    return text + "。"


def loss_rows_sentence(query_valid: list[bool]) -> str:
    """计算损失时必须排除的行：PAD 查询行（无论它的输出是 0、NaN 还是读到了什么）。

    >>> loss_rows_sentence([False, False, True, True])
    '计算损失时必须排除位置 0、1 这些 PAD 查询行，只对位置 2、3 求损失。'
    """
    pad = [i for i, ok in enumerate(query_valid) if not ok]
    real = [i for i, ok in enumerate(query_valid) if ok]
    if not pad:
        return "没有 PAD 查询行，每一行都参与损失。"
    if not real:
        return "每一行都是 PAD，这一条样本不参与损失。"
    return f"计算损失时必须排除{positions_text(pad)} 这些 PAD 查询行，只对{positions_text(real)} 求损失。"


def rounding_note(weights: list[float], values: list[float], output: float, digits: int = 4) -> str:
    """按表中印出的位数复算时会差在哪里；没有差别就返回空字符串（只在发生处才说）。

    ``weights`` 是一行权重，``values`` 是 V 的一列，``output`` 是精确的输出。

    >>> print(rounding_note([0.24825507, 0.24825507, 0.50348984], [10.0, 20.0, 30.0], 22.55234765))
    表中的权重四舍五入到小数点后 4 位，三个相加是 1.0001，而不是 1。用这些印出的权重去乘 V 再相加，得到 22.5540，精确的输出是 22.5523：两者只在小数点后 2 位上一致。纸笔复算时多带几位小数，就能对上更多位。
    >>> rounding_note([0.5, 0.5], [10.0, 30.0], 20.0)
    ''
    """
    weights = [float(w) for w in weights]
    values = [float(x) for x in values]
    if not weights or len(weights) != len(values):
        raise ValueError(f"weights 与 values 必须非空且一样长，收到 {len(weights)} 与 {len(values)} 个")
    if not isinstance(digits, int) or isinstance(digits, bool) or digits < 1:
        raise ValueError(f"digits 必须是正整数，收到 {digits!r}")
    shown = [float(fmt(w, digits)) for w in weights]  # 读者在表里看到的数
    total = fmt(sum(shown), digits)
    approx = sum(w * x for w, x in zip(shown, values))
    parts = []
    if total != fmt(1.0, digits):
        parts.append(f"表中的权重四舍五入到小数点后 {digits} 位，{_count(len(shown))}相加是 {total}，而不是 1。")
    if fmt(approx, digits) != fmt(output, digits):
        agree = max((n for n in range(digits + 1) if fmt(approx, n) == fmt(output, n)), default=None)
        same = f"两者只在小数点后 {agree} 位上一致" if agree else "两者连整数部分都不一致"
        parts.append(
            f"用这些印出的权重去乘 V 再相加，得到 {fmt(approx, digits)}，精确的输出是 {fmt(output, digits)}："
            f"{same}。纸笔复算时多带几位小数，就能对上更多位。"
        )
    return "".join(parts)


def _count(n: int) -> str:
    return "三个" if n == 3 else ("两个" if n == 2 else f"{n} 个")


# -- F12 的五帧 ---------------------------------------------------------------------------------
def _cell(text: str, state: str | None = None, highlight: bool = False) -> dict:
    return {"text": text, "state": state, "highlight": highlight}


def _flag(flag: bool, highlight: bool = False) -> dict:
    # 符号和文字一起写（mark），颜色只靠 state 附加，含义从不只靠颜色。
    return _cell(mark(flag), "allowed" if flag else "forbidden", highlight)


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
    text = f"查询在位置 {n}，能读的是 {keys_text(fact['readable'])}"
    if len(fact["readable"]) == 1:
        text += "，也就是它自己，所以这一行的输出就是它自己的 Value"
    if fact["future"]:
        text += (
            f"。{keys_text(fact['future'])} 排在它后面：训练时整段文本已经在同一个输入数组里，"
            "可后面的位置里就有这一行要预测的下一个词，读了就等于偷看答案，所以一律禁止。"
        )
    else:
        text += "。没有比它更晚的 Key，整行都允许：这一行加不加因果 mask，结果都一样。"
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

    scores_text = "[" + ", ".join(short(s) for s in score_row) + "]"
    if forbidden:
        it = "它" if len(forbidden) == 1 else "它们"
        text = (
            f"{keys_text(forbidden)} 在位置 {query} 之后，加性 mask 在{it}的分数上加 −∞。"
            f"不加 mask 时{it}分走 {'、'.join(fmt(open_weights[j]) for j in forbidden)} 的权重；"
            f"加了 mask，{it}的权重恰好是 {'、'.join(fmt(masked_weights[j]) for j in forbidden)}，"
            f"{keys_text(allowed)} 重新分到 {' 与 '.join(fmt(masked_weights[j]) for j in allowed)}，"
            "每行之和仍然是 1。被禁止的格子根本进不了 softmax 的分母。"
        )
    else:
        text = (
            f"位置 {query} 之后没有 Key，加性 mask 全是 0：加与不加 mask，权重都是 "
            f"{'、'.join(fmt(w) for w in masked_weights)}。"
        )
    return {
        "condition": f"绝对位置 {query} 的一行分数，加 mask 与不加 mask 对照",
        "tables": [
            {
                "title": f"分数行 {scores_text}，查询在绝对位置 {query}",
                "header": ["项目 ＼ Key"] + [f"Key {j}" for j in range(len(score_row))],
                "rows": [
                    [_cell("可见性")] + [_flag(flag) for flag in visible],
                    row("原始分数", [short(s) for s in score_row]),
                    row("加性 mask", [short(m) for m in mask]),
                    row("加 mask 后的分数", [short(s) for s in masked]),
                    row("不加 mask 的权重", [fmt(w) for w in open_weights]),
                    row("加 mask 的权重", [fmt(w) for w in masked_weights], True),
                ],
            }
        ],
        "rule": f"允许 Key 位置 ≤ {query}",
        "explanation": text,
    }


def cache_explanation(facts: dict) -> str:
    """带缓存时正确与写错偏移的对照说明，句句出自 ``visibility_facts`` 的列表。

    >>> print(cache_explanation(visibility_facts(1, past=3)))  # doctest: +NORMALIZE_WHITESPACE
    缓存里已有 3 个位置，新来的 1 个查询在本批里从行 0 数起，绝对位置却是 3。按绝对位置判断，行 0 能读 Key 0–3。
    把行号当位置时，行 0 少读 3 个：Key 1、Key 2 早已在缓存里，Key 3 是本批新来的（它自己）。
    这种写法不会泄漏未来，却悄悄丢掉了缓存里的历史，连查询自己的位置也读不到。
    """
    rows, past = facts["rows"], facts["past"]
    text = (
        f"缓存里已有 {past} 个位置，新来的 {len(rows)} 个查询在本批里从行 0 数起，"
        f"绝对位置{'却' if past else '也'}是 {'、'.join(str(r['position']) for r in rows)}。"
        "按绝对位置判断，" + "，".join(f"行 {r['row']} 能读 {keys_text(r['readable'])}" for r in rows) + "。"
    )
    if not any(r["lost_cached"] or r["lost_new"] for r in rows):
        return text + "没有缓存时行号就是位置，两张表完全相同，一个 Key 也不少读。"
    text += "\n把行号当位置时，" + "；".join(lost_sentence(r) for r in rows) + "。\n"
    lost_history = any(r["lost_cached"] for r in rows)
    lost_self = any(r["position"] in r["lost_new"] for r in rows)
    text += "这种写法不会泄漏未来，却悄悄" + ("丢掉了缓存里的历史" if lost_history else "少读了本批的 Key")
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
        "explanation": cache_explanation(facts).replace("\n", ""),
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
    [['原始分数', '0', '1', '2'], ['加性 mask', '0', '0', '−∞'], ['加 mask 后的分数', '0', '1', '−∞'],
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
    for name, value, minimum in (("n_positions", n_positions, 1), ("past", past, 0), ("new", new, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise ValueError(f"{name} 必须是不小于 {minimum} 的整数，收到 {value!r}")
    facts = visibility_facts(n_positions)
    score_row = list(score_row)
    att.softmax(score_row)  # 让教学代码校验分数：有限实数、非空
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
    if not isinstance(n_key, int) or isinstance(n_key, bool) or n_key < 1:
        raise ValueError(f"n_key 必须是正整数，收到 {n_key!r}")
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
    zeros = "、".join(short(out[r["row"]][0]) for r in empty)
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
    """探索面板上的固定文字：控件名、表题、图例。单元格的写法取自教学代码（``mark``、``additive_mask``）。

    >>> explore_words()["mask"]
    '加性 mask：允许的格子加 0，禁止的格子加 −∞'
    """
    allowed, forbidden = (short(x) for x in att.additive_mask([[True, False]])[0])
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
    minus_inf, zero = (short(x) for x in att.additive_mask([[False, True]])[0])
    return {
        "choices": {
            "past": list(range(max_past + 1)), "new": list(range(1, max_new + 1)),
            "causal": [True, False], "pad": list(PAD_PLACES),
        },
        "start": {"past": min(PAST, max_past), "new": min(NEW, max_new), "pad": "none", "causal": True},
        "counts": [[list(range(1, past + new + 1)) for new in range(1, max_new + 1)] for past in range(max_past + 1)],
        "words": explore_words(),
        "cells": [mark(False), mark(True)],  # 按“可见”位取：0 禁止，1 允许
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


if __name__ == "__main__":
    import json

    print(json.dumps(f12_frames(), ensure_ascii=False, indent=2))
