"""A visibility table's facts row by row, and the row sentences written from exactly those lists."""

from __future__ import annotations

import importlib

att = importlib.import_module("02_attention")


def _indices(values: object, name: str) -> list[int]:
    out = [
        att.check_count(x, f"{name}[{j}]", minimum=0)
        for j, x in enumerate(att.as_list(values, name))
    ]
    if not out:
        raise ValueError(f"{name} 不能为空：没有可写的 Key 或位置")
    return out


def keys_text(js: list[int]) -> str:
    """Keys as a sentence names them: a run of three or more as a span (``Key 1–3``), or ``Key 3、Key 4``."""
    js = _indices(js, "js")
    if len(js) > 2 and js == list(range(js[0], js[-1] + 1)):
        return f"Key {js[0]}–{js[-1]}"
    return "、".join(f"Key {j}" for j in js)


def positions_text(ps: list[int]) -> str:
    """Positions as a sentence names them: ``位置 1、2、3``."""
    return "位置 " + "、".join(str(p) for p in _indices(ps, "ps"))


def count_words(n: int) -> str:
    """A count as a sentence says it: ``两个``, ``三个``, then in digits (``12 个``)."""
    n = att.check_count(n, "n")
    return {2: "两个", 3: "三个"}.get(n, f"{n} 个")


def visibility_facts(
    n_query: int, *, past: int = 0, key_valid: list[bool] | None = None, causal: bool = True
) -> dict:
    """Per row: the keys it reads, those the causal or PAD rule forbids, those the row-index mistake loses."""
    att.check_count(n_query, "n_query", maximum=att.MAX_POSITIONS)
    att.check_count(past, "past", minimum=0, maximum=att.MAX_POSITIONS)
    n_key = past + n_query
    if key_valid is not None:
        key_valid = att.flags(key_valid, "key_valid")
        if not causal and not past:
            n_key = len(key_valid)  # an encoder: as many keys as the padding says
    visible = att.visibility(n_query, n_key, causal=causal, past=past, key_valid=key_valid)
    causal_only = att.visibility(n_query, n_key, causal=causal, past=past)
    valid = key_valid or [True] * n_key
    wrong = (
        [
            [a and ok for a, ok in zip(row, valid)]
            for row in att.row_index_visibility(n_query, n_key)
        ]
        if causal
        else [list(row) for row in visible]
    )  # without the causal rule nothing to confuse
    rows = []
    for i, (right, bad, early) in enumerate(zip(visible, wrong, causal_only)):
        lost = [j for j in range(n_key) if right[j] and not bad[j]]
        rows.append(
            {
                "row": i,
                "position": past + i,
                "readable": [j for j in range(n_key) if right[j]],
                "future": [j for j in range(n_key) if not early[j]],
                "pad": [j for j in range(n_key) if early[j] and not right[j]],
                "empty": not any(right),
                "lost_cached": [j for j in lost if j < past],
                "lost_new": [j for j in lost if j >= past],
            }
        )
    return {"past": past, "n_key": n_key, "visible": visible, "row_index": wrong, "rows": rows}


def row_label(fact: dict, past: int) -> str:
    """A query row's name: its position, and with a cache its row too (``行 1（绝对位置 4）``)."""
    return (
        f"行 {fact['row']}（绝对位置 {fact['position']}）" if past else f"位置 {fact['position']}"
    )


def gap(label: str) -> str:
    """A label as a sentence begins with it: a space after a digit, none after a full-width bracket."""
    return label if label.endswith("）") else label + " "


def row_sentence(fact: dict, past: int = 0) -> str:
    """What one row reads and why it reads no more (``Key 0 是 PAD；Key 1 在它之后``)."""
    parts = [
        f"{keys_text(fact[kind])} {says}"
        for kind, says in (("pad", "是 PAD"), ("future", "在它之后"))
        if fact[kind]
    ]
    if fact["empty"]:
        return f"{gap(row_label(fact, past))}没有可读的 Key：" + "；".join(parts) + "。整行被屏蔽。"
    return (
        f"{gap(row_label(fact, past))}可读 {keys_text(fact['readable'])}"
        + "".join(f"；{p}" for p in parts)
        + "。"
    )


def lost_sentence(fact: dict) -> str:
    """What one row loses under the row-index mistake, cached and new apart (and whether itself)."""
    cached = fact["lost_cached"]
    new = fact["lost_new"]
    if not cached + new:
        return f"行 {fact['row']} 一个也不少读"
    parts = [f"{keys_text(cached)} 早已在缓存里"] if cached else []
    if new:
        note = (
            ""
            if fact["position"] not in new
            else "（它自己）"
            if new == [fact["position"]]
            else "（含它自己）"
        )
        parts.append(f"{keys_text(new)} 是本批新来的{note}")
    return f"行 {fact['row']} 少读 {len(cached + new)} 个：" + "，".join(parts)


def pad_change_sentence(before: dict, after: dict, query_valid: list[bool]) -> str:
    """Which real queries the PAD rule changes, and what the PAD queries do (``before``, ``after``: facts)."""
    query_valid = att.flags(query_valid, "query_valid")
    if not len(query_valid) == len(after["rows"]) == len(before["rows"]):
        raise ValueError("query_valid、before、after 的行数必须相同")
    rows = list(zip(before["rows"], after["rows"], query_valid))
    lost_by: dict = {}
    for b, a, real in rows:
        if gone := real and tuple(j for j in b["readable"] if j not in a["readable"]):
            lost_by.setdefault(gone, []).append(a["position"])
    parts = [
        f"{positions_text(ps)} 因 PAD 规则不再读 {keys_text(list(gone))}"
        for gone, ps in lost_by.items()
    ]
    text = "真实查询中，" + "；".join(parts) if parts else "没有哪个真实查询因 PAD 规则而改变"
    unchanged = [a["position"] for b, a, real in rows if real and b["readable"] == a["readable"]]
    if unchanged and parts:
        text += f"；{positions_text(unchanged)} 不变"
    pad = {
        flag: [a["position"] for _, a, real in rows if not real and a["empty"] == flag]
        for flag in (True, False)
    }
    if pad[True]:
        text += f"；PAD 查询{positions_text(pad[True])} 整行被屏蔽"
    if pad[False]:
        they = "它" if len(pad[False]) == 1 else "它们"
        text += f"；PAD 查询{positions_text(pad[False])} 仍读真实的 Key，但{they}的输出不是内容"
    return text + "。"


def error_of(call, *args, **kwargs) -> str:
    """The message of the ValueError that a call of the teaching code must raise."""
    try:
        call(*args, **kwargs)
    except ValueError as error:
        return str(error)
    raise AssertionError(f"{call.__name__} 应当报错")
