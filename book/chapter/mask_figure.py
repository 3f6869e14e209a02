"""F12, the visibility-table player of the mask page, and its explore panel.

``f12_frames`` returns the frames (plain dicts and lists, no markup, so the HTML player and the
PDF's static frames render the same data); ``f12_explore_states`` precomputes every setting the
panel can reach, and ``explore_state`` decodes one the way the page's script does. The two causal
alignments are compared with the book's offsets here too (``causal_table``, ``alignment_facts``).
"""

from __future__ import annotations

import importlib
import re

from chapter import fmt
from chapter.conventions import ALIGNMENT
from chapter.mask_facts import (keys_text, lost_sentence, row_label, row_sentence, visibility_facts)

att = importlib.import_module("02_attention")

# 第 1—3 帧：三个有效位置，没有缓存，没有 PAD，因果规则。
N_POSITIONS = 3
# 第 4 帧：位置 1 这一行的原始分数（人工给定的输入，不来自其他例子），对照加与不加 mask。
SCORE_ROW = (0.0, 1.0, 2.0)
SCORE_QUERY = 1
# 第 5 帧：缓存里已有 past 个位置，新来 new 个查询。
PAST, NEW = 3, 2
# 一张图的表要能排进一页：F12 的位置数与 past + new 不超过这个数。
FIGURE_MAX_POSITIONS = 16


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
