"""F12, the mask page's visibility-table player, as plain data, and every state of its explore panel."""

from __future__ import annotations

import importlib
import re

from chapter import fmt, mask
from chapter.mask import (
    error_of,
    gap,
    keys_text,
    lost_sentence,
    row_label,
    row_sentence,
    visibility_facts,
)

att = importlib.import_module("02_attention")

SCORE_QUERY = 1  # frame 4: the query whose row of scores (mask.SCORE_ROW) it shows


# -- F12's frames -----------------------------------------------------------------------------------
def _flag(flag: bool, highlight: bool = False) -> dict:
    # The symbol and the word (fmt.mark) carry the meaning; the state only adds a colour.
    return fmt.cell(fmt.mark(flag), "allowed" if flag else "forbidden", highlight)


def _visibility_table(
    title: str, table: list[list[bool]], labels: list[str], current: set[int]
) -> dict:
    return {
        "title": title,
        "header": fmt.keys(len(table[0])),
        "rows": [
            [fmt.cell(label, None, i in current)] + [_flag(flag, i in current) for flag in row]
            for i, (label, row) in enumerate(zip(labels, table))
        ],
    }


def _causal_frame(facts: dict, n: int) -> dict:
    fact = facts["rows"][n]
    n_key = facts["n_key"]
    text = f"位置 {n} 能读的是 {keys_text(fact['readable'])}"
    if len(fact["readable"]) == 1:
        text += "，也就是它自己，输出就是它自己的 V"
    if fact["future"]:  # the reason is given once, in the first frame that forbids a key
        first = next(r["row"] for r in facts["rows"] if r["future"])
        text += f"；{keys_text(fact['future'])} 排在它后面" + (
            "：读了就是偷看答案，禁止。" if n == first else "，禁止。"
        )
    else:
        text += "：没有更晚的 Key，整行都允许。"
    table = _visibility_table(
        f"可见性表：{n_key} 个有效位置，当前行是绝对位置 {n}",
        facts["visible"],
        [f"绝对位置 {i}" for i in range(n_key)],
        {n},
    )
    return {
        "condition": f"处理绝对位置 {n}",
        "tables": [table],
        "rule": f"允许 Key 位置 ≤ {n}",
        "explanation": text,
    }


def _score_frame(facts: dict, scores: list[float], query: int) -> dict:
    visible = facts["visible"][query]
    fact = facts["rows"][query]
    allowed = fact["readable"]
    forbidden = fact["future"]
    additive = att.additive_mask([visible])[0]
    masked = [s + m for s, m in zip(scores, additive)]
    open_w = att.softmax(scores)
    masked_w = att.softmax(masked)  # without and with the mask

    def numbers(w, js, sep="、"):
        return sep.join(fmt.fmt(w[j]) for j in js)

    if forbidden:
        text = (
            f"{keys_text(forbidden)} 在位置 {query} 之后，分数加 −∞：不加 mask 时分走 {numbers(open_w, forbidden)} "
            f"的权重，加了 mask 权重恰好是 {numbers(masked_w, forbidden)}，{keys_text(allowed)} 重新分到 "
            f"{numbers(masked_w, allowed, ' 与 ')}，每行之和仍是 1。"
        )
    else:
        text = f"位置 {query} 之后没有 Key，mask 全是 0，权重都是 {numbers(masked_w, range(len(scores)))}。"
    rows = [
        ("原始分数", [fmt.short(s) for s in scores]),
        ("加性 mask", [fmt.short(m) for m in additive]),
        ("加 mask 后的分数", [fmt.fmt(s) for s in masked]),
        ("不加 mask 的权重", [fmt.fmt(w) for w in open_w]),
        ("加 mask 的权重", [fmt.fmt(w) for w in masked_w]),
    ]
    table = {
        "title": f"分数行 [{', '.join(fmt.short(s) for s in scores)}]，查询在绝对位置 {query}",
        "header": fmt.keys(len(scores), "项目 ＼ Key"),
        "rows": [[fmt.cell("可见性")] + [_flag(flag) for flag in visible]]
        + [[fmt.cell(t, None, k == "加 mask 的权重") for t in [k, *cells]] for k, cells in rows],
    }
    return {
        "condition": f"绝对位置 {query} 的一行分数，加不加 mask",
        "tables": [table],
        "rule": f"允许 Key 位置 ≤ {query}",
        "explanation": text,
    }


def _cache_frame(past: int, new: int) -> dict:
    """F12's last frame: the right rows, then what the row-index mistake loses (the moral is the page's)."""
    facts = visibility_facts(new, past=past)
    rows = facts["rows"]
    text = (
        f"缓存里已有 {past} 个位置，新来的 {len(rows)} 个查询从行 0 数起，"
        f"绝对位置{'却' if past else '也'}是 {'、'.join(str(r['position']) for r in rows)}："
        + "，".join(f"行 {r['row']} 能读 {keys_text(r['readable'])}" for r in rows)
        + "。"
    )
    if any(r["lost_cached"] or r["lost_new"] for r in rows):
        text += "把行号当位置时，" + "；".join(lost_sentence(r) for r in rows) + "。"
    else:
        text += "没有缓存时行号就是位置，两张表完全相同，一个 Key 也不少读。"
    return {
        "condition": f"带缓存：past = {past}，new = {new}",
        "tables": [
            _visibility_table(
                "正确：按绝对位置 past + 行号判断",
                facts["visible"],
                [f"行 {r['row']}（绝对位置 {r['position']}）" for r in rows],
                set(range(new)),
            ),
            _visibility_table(
                "写错：把本批行号当成位置",
                facts["row_index"],
                [f"行 {r['row']}（误当位置 {r['row']}）" for r in rows],
                set(),
            ),
        ],
        "rule": "允许 Key 位置 ≤ past + 行号："
        + "，".join(f"行 {r['row']} ≤ {r['position']}" for r in rows),
        "explanation": text,
    }


def f12_frames() -> list[dict]:
    """F12 on the page's inputs (``mask.N_POSITIONS``, ``SCORE_ROW``, ``PAST``, ``NEW``; query
    ``SCORE_QUERY``): a causal frame per position, the score row with and without the mask, the cache's
    two tables."""
    facts = visibility_facts(mask.N_POSITIONS)
    return [_causal_frame(facts, n) for n in range(mask.N_POSITIONS)] + [
        _score_frame(facts, list(mask.SCORE_ROW), SCORE_QUERY),
        _cache_frame(mask.PAST, mask.NEW),
    ]


# -- F12's explore panel: every setting precomputed; the page only looks it up ---------------------
EXPLORE_MAX_PAST = EXPLORE_MAX_NEW = 6
PAD_PLACES = ("none", "front", "end")  # no PAD, PAD in front (left padding), PAD at the end
# Sentences are stored cut into these pieces: a keys_text group, a row name, a lone number.
_PIECES = re.compile(r"(Key \d+(?:–\d+|(?:、Key \d+)*)|行 \d+（绝对位置 \d+）|位置 \d+|\d+)")


def pad_valid(n_key: int, pad: str = "none", count: int = 0) -> list[bool] | None:
    """``key_valid`` with ``count`` PAD in front or at the end; None without PAD."""
    if pad not in PAD_PLACES:
        raise ValueError(f"pad 必须是 {'、'.join(PAD_PLACES)} 之一，收到 {pad!r}")
    if pad == "none":
        if count != 0:
            raise ValueError(f"没有 PAD 时 count 必须是 0，收到 {count!r}")
        return None
    att.check_count(n_key, "n_key", maximum=att.MAX_POSITIONS)
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= n_key:
        raise ValueError(f"count 必须是 1 到 n_key = {n_key} 之间的整数，收到 {count!r}")
    tail = att.key_padding(n_key - count, n_key)  # content first, PAD at the end
    return tail if pad == "end" else tail[::-1]


def empty_row_note(facts: dict) -> str:
    """The policy on fully masked rows, by ``masked_attention`` (Q = K = 0, V = 1, 2, 3 …); empty if none."""
    rows = facts["rows"]
    past = facts["past"]
    n_key = facts["n_key"]
    empty = [r for r in rows if r["empty"]]
    if not empty:
        return ""
    q = [[0.0]] * len(rows)
    k = [[0.0]] * n_key
    v = [[float(j + 1)] for j in range(n_key)]
    message = error_of(
        att.masked_attention, q, k, v, facts["visible"]
    )  # the default, empty_row="error"
    _, out = att.masked_attention(q, k, v, facts["visible"], empty_row="zero")
    one = len(empty) == 1
    zeros = "、".join(fmt.short(out[r["row"]][0]) for r in empty)
    return (
        f'{gap("、".join(row_label(r, past) for r in empty))}整行被屏蔽。本书默认 empty_row="error"，'
        f"算到{'这一行' if one else gap(row_label(empty[0], past))}就报错：ValueError: {message}。"
        f'传 empty_row="zero" 时，{"这一行" if one else "这些行"}的输出是 {zeros}，'
        f"计算损失时要把{'它' if one else '它们'}排除。"
    )


def explore_status(facts: dict) -> str:
    """What a screen reader says after a change: the table's size and its fully masked rows."""
    empty = [row_label(r, facts["past"]) for r in facts["rows"] if r["empty"]]
    return f"{len(facts['rows'])} 个查询行、{facts['n_key']} 个 Key，" + (
        f"{gap('、'.join(empty))}整行被屏蔽。" if empty else "每行都有可读的 Key。"
    )


def lost_status(facts: dict) -> str:
    """The line after ``explore_status`` when the wrong offset is shown: how many keys are lost, and where."""
    cached = sum(len(r["lost_cached"]) for r in facts["rows"])
    new = sum(len(r["lost_new"]) for r in facts["rows"])
    if not cached + new:
        return "把行号当位置时一个也不少读。"
    split = (
        f"：缓存里的 {cached} 个，本批新来的 {new} 个。"
        if cached and new
        else "，全是缓存里的。"
        if cached
        else "，全是本批新来的。"
    )
    return f"把行号当位置时共少读 {cached + new} 个{split}"


_MINUS_INF, _ZERO = (fmt.short(x) for x in att.additive_mask([[False, True]])[0])
EXPLORE_WORDS = {  # the panel's controls, table titles and legend
    "title": "自己试一试：可见性表探索",
    "past": "本批之前的位置数 past（都在缓存里）",
    "new": "新来的查询数 new",
    "pad": "PAD 放在哪里",
    "pad_options": ["没有 PAD", "在前面（左侧填充）", "在末尾（右侧填充）"],
    "count": "PAD 个数",
    "causal": "因果规则：不读之后的 Key",
    "wrong": "把本批行号当位置（写错的偏移）",
    "visible": "可见性表：按绝对位置 past + 行号判断",
    "mask": f"加性 mask：允许的格子加 {_ZERO}，禁止的格子加 {_MINUS_INF}",
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


def f12_explore_states() -> dict:
    """Every setting the panel reaches (past, new, causal on/off, PAD place and count), each string, sentence
    and table row stored once: ``states[past][new − 1][causal 0 / 1][pad][count − 1 or 0]`` is
    ``[n_key, row ids, status, lost status, policy note]``; a row is ``[visible, mask −∞, wrong, lost`` (bits)
    ``, lost cached, lost new, empty, sentence, lost sentence]``; a sentence is a list of ``text`` pieces."""
    max_past = EXPLORE_MAX_PAST
    max_new = EXPLORE_MAX_NEW
    pool = {}
    sentences = {}
    records = {}  # each text piece, sentence and row once, numbered in order

    def bits(flags):
        # - bit j is Key j
        return sum(1 << j for j, flag in enumerate(flags) if flag)

    def sentence_id(s: str) -> int:
        pieces = tuple(pool.setdefault(p, len(pool)) for p in _PIECES.split(s) if p)
        return sentences.setdefault(pieces, len(sentences))

    def row_id(
        r: dict, visible: list[bool], minus: list[float], wrong: list[bool], past: int
    ) -> int:
        sentence = row_sentence(r, past)
        lost = lost_sentence(r)
        prefix = gap(row_label(r, past))
        lost_prefix = f"行 {r['row']} "
        if not (sentence.startswith(prefix) and lost.startswith(lost_prefix)):
            raise AssertionError(f"句首与行名对不上：{sentence!r}、{lost!r}")
        lost_keys = r["lost_cached"] + r["lost_new"]
        record = (
            bits(visible),
            bits([m == float("-inf") for m in minus]),
            bits(wrong),
            bits([j in lost_keys for j in range(len(visible))]),
            len(r["lost_cached"]),
            len(r["lost_new"]),
            int(r["empty"]),
            sentence_id(sentence[len(prefix) :]),
            sentence_id(lost[len(lost_prefix) :]),
        )
        return records.setdefault(record, len(records))

    def state(past: int, new: int, causal: bool, pad: str, count: int) -> list:
        facts = visibility_facts(
            new, past=past, key_valid=pad_valid(past + new, pad, count), causal=causal
        )
        ids = [
            row_id(*row, past)
            for row in zip(
                facts["rows"],
                facts["visible"],
                att.additive_mask(facts["visible"]),
                facts["row_index"],
            )
        ]
        return [
            facts["n_key"],
            ids,
            sentence_id(explore_status(facts)),
            sentence_id(lost_status(facts)),
            sentence_id(empty_row_note(facts)),
        ]

    sentence_id("")  # id 0: the empty note, when no row is fully masked
    pasts = range(max_past + 1)
    news = range(1, max_new + 1)

    def counts(pad, n_key):
        return [0] if pad == "none" else range(1, n_key + 1)

    states = [
        [
            [
                [
                    [state(past, new, causal, pad, count) for count in counts(pad, past + new)]
                    for pad in PAD_PLACES
                ]
                for causal in (True, False)
            ]
            for new in news
        ]
        for past in pasts
    ]
    return {
        "choices": {
            "past": list(pasts),
            "new": list(news),
            "causal": [True, False],
            "pad": list(PAD_PLACES),
        },
        "start": {
            "past": min(mask.PAST, max_past),
            "new": min(mask.NEW, max_new),
            "pad": "none",
            "causal": True,
        },
        "counts": [[list(range(1, past + new + 1)) for new in news] for past in pasts],
        "words": dict(EXPLORE_WORDS),
        "cells": [fmt.mark(False), fmt.mark(True)],  # by the visible bit: 0 forbidden, 1 allowed
        "mask_cells": [_ZERO, _MINUS_INF],  # by the mask bit
        "keys": [f"Key {j}" for j in range(max_past + max_new)],
        "labels": [[f"行 {i}（绝对位置 {past + i}）" for i in range(max_new)] for past in pasts],
        "prefix": [
            [gap(row_label({"row": i, "position": past + i}, past)) for i in range(max_new)]
            for past in pasts
        ],
        "lost_prefix": [f"行 {i} " for i in range(max_new)],
        "wrong_labels": [f"行 {i}（误当位置 {i}）" for i in range(max_new)],
        "text": list(pool),
        "sentences": [list(s) for s in sentences],
        "rows": [list(r) for r in records],
        "states": states,
    }
