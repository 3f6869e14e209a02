"""The mask page's side (book/ch02/mask.md) in one module; F12's frames and explore panel are in
``mask_figure``.

- One function per hidden cell of the page, each returning the ``page.Section`` it glues. The page's
  sentences live in the page. Where a fixed sentence holds only because of a fact of the run
  (「它没有传开」, 「权重全是 NaN」), the section that glues its numbers checks the fact with ``s.holds``,
  which stops the build naming the page, the section and the fact when it is false.
- A visibility table's facts row by row (``visibility_facts``), and the row sentences that F12, its
  explore panel and the exercises write from exactly those lists.
- The page's checks (如何判断是否做对), defined once: the mask page runs them on its three algorithms,
  the summary page on the chapter's mistakes.

  - 不泄漏: change the V of the keys a query must not read; that query's output must not move.
  - 与整段重算一致: the rows computed with a cache equal the same rows of a *correct* full recomputation
    (``attention`` of 02_attention.py: the causal and PAD rules, no cache), never the checked code's own.
  - 权重有限: every weight is a finite number, and every row that may read a key sums to 1.

  An attention under check is a function ``run(q, k, v)`` that returns the output rows of the queries
  ``q`` (with a cache, ``q`` holds the new queries only and ``k``, ``v`` the cached keys too).
"""

from __future__ import annotations

import importlib
import math

from chapter import fmt, pitfalls
from chapter.conventions import (
    DEVICE_NAMES,
    FULLY_MASKED_HEADER,
    HEADER,
    conventions_rows,
    float_mask_sentence,
    fully_masked_rows,
    observed,
    unavailable_sentence,
    versions_words,
)
from chapter.fmt import rows_of, slashed
from chapter.page import Col, Section, keys, listing, span

att = importlib.import_module("02_attention")
ex = importlib.import_module("02_exercises_mask")
PAGE = "mask 一页"  # how s.holds names this page when a fixed sentence fails

# F12's inputs (the page types them): mask_figure.f12_frames reads them here.
N_POSITIONS = 3  # frames 1–3: valid positions, no cache, no PAD, the causal rule
SCORE_ROW = (0.0, 1.0, 2.0)  # frame 4: a given row of scores, with and without the mask
PAST = 3
NEW = 2  # frame 5: past positions in the cache, new queries


# -- a visibility table's facts row by row, and the row sentences written from exactly those lists ------
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
    return keys(js)


def positions_text(ps: list[int]) -> str:
    """Positions as a sentence names them: ``位置 1、2、3``."""
    return "位置 " + listing(_indices(ps, "ps"))


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


# -- the page's checks, defined once (the summary page runs them too) ------------------------------------
TOLERANCE = 1e-12  # a row of weights "sums to 1" within this


def same_row(a: list[float], b: list[float]) -> bool:
    """Two output rows are the same: equal entry by entry, NaN counted equal to NaN.

    A NaN row is not a leak (the poisoned V did not move it): the weights check catches it.
    """
    a = [att.real(x, f"a[{j}]") for j, x in enumerate(att.as_list(a, "a"))]
    b = [att.real(x, f"b[{j}]") for j, x in enumerate(att.as_list(b, "b"))]
    if len(a) != len(b):
        raise ValueError(f"a 与 b 的长度必须相同，收到 {len(a)} 与 {len(b)}")
    return all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b))


def after_query(n_query: int, n_key: int, past: int = 0) -> list[list[bool]]:
    """The keys each query must not read under the causal rule: those after its position ``past + i``."""
    att.check_count(n_query, "n_query", maximum=att.MAX_POSITIONS)
    att.check_count(n_key, "n_key", maximum=att.MAX_POSITIONS)
    att.check_count(past, "past", minimum=0, maximum=att.MAX_POSITIONS)
    return [[j > past + i for j in range(n_key)] for i in range(n_query)]


def pad_keys(key_valid: list[bool], n_query: int) -> list[list[bool]]:
    """The keys every query must not read under the PAD rule: the PAD keys (``key_valid`` False)."""
    key_valid = att.flags(key_valid, "key_valid")
    att.check_count(n_query, "n_query", maximum=att.MAX_POSITIONS)
    return [[not ok for ok in key_valid] for _ in range(n_query)]


def _callable(run: object) -> None:
    if not callable(run):
        raise ValueError(f"run 必须是一个函数 run(q, k, v)，收到 {type(run).__name__}")


def _rows(outputs: object, n: int) -> list:
    """What ``run`` returned, as its ``n`` output rows (one per query)."""
    rows = att.as_list(outputs, "run 的返回值")
    if len(rows) != n:
        raise ValueError(f"run 必须为每个查询返回一行输出（{n} 行），收到 {len(rows)} 行")
    return rows


def leak_probe(run, q, k, v, forbidden: list[list[bool]], poison: float) -> dict:
    """不泄漏: for each query row, the V of the keys it must not read set to ``poison``; its output again.

    Returns the outputs, each row's output after its probe, and the rows that moved (``leaking``).
    """
    _callable(run)
    q = att.as_matrix(q, "Q")
    v = att.as_matrix(v, "V")
    poison = att.real(poison, "poison")
    forbidden = [
        att.flags(row, f"forbidden[{i}]", len(v))
        for i, row in enumerate(att.as_list(forbidden, "forbidden"))
    ]
    if len(forbidden) != len(q):
        raise ValueError(f"forbidden 必须有 {len(q)} 行（每个查询一行），收到 {len(forbidden)}")
    outputs = _rows(run(q, k, v), len(q))
    probed = []
    for i, row in enumerate(forbidden):
        if any(row):
            changed = [[poison] * len(vj) if row[j] else vj for j, vj in enumerate(v)]
            probed.append(_rows(run(q, k, changed), len(q))[i])
        else:  # nothing this row must not read: nothing to change
            probed.append(outputs[i])
    leaking = [i for i, (a, b) in enumerate(zip(outputs, probed)) if not same_row(a, b)]
    return {"outputs": outputs, "probed": probed, "leaking": leaking}


def recompute_check(
    run, q_full, k, v, past: int, key_valid: list[bool] | None = None, tolerance: float = TOLERANCE
) -> dict:
    """与整段重算一致: ``run`` on the new queries ``q_full[past:]`` (with a cache of ``past`` positions)
    against the correct full recomputation's same rows (causal rule, ``key_valid``, fully masked rows 0).

    Returns both and the new rows that differ by more than ``tolerance`` (``differ``, counted from the
    first new query): code that sums in another order (in tiles, say) differs in the last bits only.
    """
    _callable(run)
    q_full = att.as_matrix(q_full, "q_full")
    if len(q_full) < 2:
        raise ValueError(f"q_full 至少要有两行（缓存里的与新来的），收到 {len(q_full)} 行")
    att.check_count(past, "past", minimum=1, maximum=len(q_full) - 1, why="至少留一个新查询")
    _, full = att.attention(q_full, k, v, key_valid=key_valid, empty_row="zero")
    reference = full[past:]
    outputs = _rows(run(q_full[past:], k, v), len(reference))
    tolerance = att.real(tolerance, "tolerance")
    if not 0.0 <= tolerance < 1.0:
        raise ValueError(f"tolerance 必须在 0 与 1 之间，收到 {tolerance!r}")
    differ = [
        i
        for i, (a, b) in enumerate(zip(outputs, reference))
        if not same_row(a, b)
        and not all(abs(x - y) <= tolerance for x, y in zip(a, b))  # NaN is never within it
    ]
    return {"outputs": outputs, "reference": reference, "differ": differ}


def weights_check(weights: list[list[float]], visible: list[list[bool]]) -> list[int]:
    """权重有限: the rows whose weights are not all finite, or that may read a key (``visible``, the
    correct table) and do not sum to 1."""
    rows = [
        [att.real(w, f"weights[{i}][{j}]") for j, w in enumerate(att.as_list(row, f"weights[{i}]"))]
        for i, row in enumerate(att.as_list(weights, "weights"))
    ]
    visible = [
        att.flags(row, f"visible[{i}]") for i, row in enumerate(att.as_list(visible, "visible"))
    ]
    if len(rows) != len(visible):
        raise ValueError(f"weights 与 visible 的行数必须相同，收到 {len(rows)} 与 {len(visible)}")
    return [
        i
        for i, (row, may) in enumerate(zip(rows, visible))
        if not all(math.isfinite(w) for w in row) or (any(may) and abs(sum(row) - 1.0) > TOLERANCE)
    ]


# -- the page's helpers ------------------------------------------------------------------------------
position = "绝对位置 {}".format  # a row label by absolute position: position(2) is 绝对位置 2


def column(matrix) -> str:
    """A one-column V as typed: ``10、−2.5``."""
    return "、".join(fmt.short(row[0]) for row in matrix)


def row_text(values, cell=fmt.short) -> str:
    """A row of scores as typed: ``[0, 1, −2]`` (as computed with ``cell=fmt.fmt``)."""
    return "[" + ", ".join(cell(x) for x in values) + "]"


def symbols(row) -> str:
    """A visibility row in symbols only: ``✓ ✗``."""
    return " ".join("✓" if flag else "✗" for flag in row)


def table(s: Section, name: str, header: list[str], rows: list[list[str]]) -> None:
    """A table whose cells are already written: one text column per header."""
    s.table(name, rows, *[Col(h, lambda r, c=c: r[c], "text") for c, h in enumerate(header)])


# -- the page's inputs (hand-made; each example states them in its 输入与适用条件) -----------------------
LEFT_Q = [[0.5, 0.5], [0.5, -0.5], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]  # Q = K
LEFT_V = [[90.0], [80.0], [10.0], [20.0], [30.0]]  # the PAD's V far from the content's
LEFT_VALID = [False, False, True, True, True]  # left padding: two PAD in front
BIG = -1e9  # the large negative number many code bases write instead of −∞
LEAK_Q = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0], [2.0, 0.0], [0.0, -1.0], [1.0, 2.0]]
LEAK_POISON = 100.0  # the last position's V when "the future changes"


# -- the page, cell by cell ----------------------------------------------------------------------------
def figure_inputs() -> Section:
    """The inputs F12 names in its 输入与适用条件 (``f12_frames`` reads them from this module)."""
    s = Section(PAGE, "F12")
    n = N_POSITIONS
    s.text(
        f12_causal_steps=f"第 1 至 {n} 步",
        f12_score_step=f"第 {n + 1} 步",
        f12_cache_step=f"第 {n + 2} 步",
    )
    return s


def demo_section() -> Section:
    """一步一步, then 一行从头算到尾 by ``row_steps`` (a row with two readable keys and a forbidden one):
    the masked scores, the maximum subtracted, the exponentials, the weights."""
    s = Section(PAGE, "一步一步")
    q = att.DEMO_Q
    k = att.DEMO_K
    v = att.DEMO_V
    n = len(q)
    header = fmt.keys(len(k))
    scores = att.scaled_scores(q, k)
    visible = att.visibility(len(q), len(k))
    mask = att.additive_mask(visible)
    weights, outputs = att.masked_attention(q, k, v, visible)
    pairs = [
        [f"{fmt.mark(f)} → {fmt.fmt(m, 0)}" for f, m in zip(*rows)] for rows in zip(visible, mask)
    ]
    masked = [[x + m for x, m in zip(*r)] for r in zip(scores, mask)]
    mixed = [w + o[:1] for w, o in zip(weights, outputs)]  # the weights, then the output
    row = next(i for i, r in enumerate(visible) if sum(r) >= 2 and not all(r))
    forbidden = [j for j, ok in enumerate(visible[row]) if not ok]
    steps = att.row_steps(q[row], k, v, visible[row])
    weighted = [x[0] for x in steps["weighted"]]
    output = steps["output"][0]
    # The weights as the table prints them, multiplied by V: what a reader recomputing by hand gets.
    shown = [fmt.printed(fmt.fmt(w)) for w in steps["weights"]]
    approx = sum(w * x[0] for w, x in zip(shown, v))
    # The row "权重 × V" added up as the table prints it: the output.
    added = fmt.printed_sum(weighted, output)
    s.holds(
        printed_weights_sum_to_one=fmt.fmt(sum(shown)) == fmt.fmt(1.0),
        printed_weights_miss_the_output=fmt.fmt(approx) != fmt.fmt(output),
        weighted_row_adds_up_to_the_output=added.adds_up,
    )
    s.value("count", demo_n=n, demo_d=len(q[0]), demo_past=0, hand_row=row)
    s.text(
        demo_positions=listing(range(n)),
        demo_v=column(v),
    )
    table(s, "tbl_scores", header, rows_of(scores, position))
    table(s, "tbl_visible_mask", header, rows_of(pairs, position, str))
    table(s, "tbl_masked", header, rows_of(masked, position))
    table(s, "tbl_weights", header + ["输出"], rows_of(mixed, position))
    s.text(
        hand_forbidden=keys_text(forbidden),
        hand_scores=row_text(steps["scaled"], fmt.fmt),
    )
    hand = [
        ("分数（取自分数表）", steps["scaled"], fmt.fmt),
        ("加 mask", steps["masked"], fmt.fmt),
        ("减去最大值", steps["shifted"], fmt.fmt),
        ("exp", steps["exps"], fmt.fmt),
        ("权重 = exp ÷ 总和", steps["weights"], fmt.fmt),
        ("V", [x[0] for x in v], fmt.short),
        ("权重 × V", weighted, fmt.fmt),
    ]
    table(
        s,
        "tbl_hand",
        fmt.keys(len(k), "步骤 ＼ Key"),
        [[name] + [cell(x) for x in xs] for name, xs, cell in hand],
    )
    s.value(
        hand_max=steps["max"],
        hand_total=steps["total"],
        hand_output=output,
        hand_approx=approx,
    )
    s.text(hand_sum=added.terms, hand_equals=fmt.equals(added.from_printed, added.exact))
    s.value("difference", hand_gap=abs(approx - output))
    return s


def padding_section() -> Section:
    """Left padding (three tables, the changed queries, the weights), then the encoder, PAD at the end."""
    s = Section(PAGE, "左侧填充与编码器")
    q = LEFT_Q
    v = LEFT_V
    valid = LEFT_VALID
    n = len(q)
    before = visibility_facts(n)
    after = visibility_facts(n, key_valid=valid)
    pad_only = att.visibility(n, n, causal=False, key_valid=valid)
    w, out = att.attention(q, q, v, key_valid=valid, empty_row="zero")
    order = [j for j in range(n) if valid[j]] + [j for j in range(n) if not valid[j]]  # PAD last
    enc_q = [q[j] for j in order]
    enc_v = [v[j] for j in order]
    pad = att.key_padding(valid.count(True), n)
    open_enc = visibility_facts(n, causal=False)
    pad_enc = visibility_facts(n, causal=False, key_valid=pad)
    _, open_out = att.attention(enc_q, enc_q, enc_v, causal=False)
    _, pad_out = att.attention(enc_q, enc_q, enc_v, causal=False, key_valid=pad)
    s.value("count", left_n=n, enc_n=n, enc_valid=valid.count(True))
    s.text(
        left_pad_keys=keys_text([j for j, ok in enumerate(valid) if not ok]),
        left_real_keys=keys_text([j for j, ok in enumerate(valid) if ok]),
        left_v=column(v),
    )
    table(
        s,
        "tbl_left_and",
        ["查询", "只用因果", "只用 PAD", "两者取“与”"],
        [
            [position(i), symbols(c), symbols(p), symbols(b)]
            for i, (c, p, b) in enumerate(zip(before["visible"], pad_only, after["visible"]))
        ],
    )
    table(
        s,
        "tbl_left_weights",
        fmt.keys(n) + ["输出"],
        [
            [position(i) + "（整行被屏蔽）"] + ["—"] * (n + 1)
            if fact["empty"]
            else [position(i)] + [fmt.fmt(x) for x in wi] + [fmt.fmt(o[0])]
            for i, (fact, wi, o) in enumerate(zip(after["rows"], w, out))
        ],
    )
    s.text(
        left_change=pad_change_sentence(before, after, valid),
        enc_real_keys=keys_text([j for j, ok in enumerate(pad) if ok]),
        enc_qk=fmt.vectors(enc_q),
        enc_v=column(enc_v),
        enc_change=pad_change_sentence(open_enc, pad_enc, pad),
    )
    table(
        s,
        "tbl_enc",
        ["查询", "PAD 规则下的可见性", "不加 PAD 规则的输出", "加 PAD 规则的输出"],
        [
            [position(i), symbols(vis), fmt.fmt(o[0]), fmt.fmt(p[0])]
            for i, (vis, o, p) in enumerate(zip(pad_enc["visible"], open_out, pad_out))
        ],
    )
    return s


def causal_table(n_query: int, n_key: int, align: str) -> list[list[bool]]:
    """A causal table aligned ``"top-left"`` (row i reads keys 0 … i) or ``"bottom-right"`` (0 … i + past)."""
    shift = n_key - n_query if align == "bottom-right" else 0
    return [[j <= i + shift for j in range(n_key)] for i in range(n_query)]


def conventions_section() -> Section:
    """The libraries' conventions and fully masked rows as observed; the two alignments on F12's last step."""
    s = Section(PAGE, "各库怎样读布尔 mask 与因果标志")
    n_key = PAST + NEW
    right = att.visibility(NEW, n_key, past=PAST)
    top_left = causal_table(NEW, n_key, "top-left")
    seen = observed()
    s.holds(
        bottom_right_is_past_offset=causal_table(NEW, n_key, "bottom-right") == right,
        top_left_is_row_index=top_left == att.row_index_visibility(NEW, n_key),
        observed_on_cpu_only=sorted(seen) == ["cpu"],
    )
    table(s, "tbl_conventions", HEADER, conventions_rows(seen))
    table(s, "tbl_fully_masked", FULLY_MASKED_HEADER, fully_masked_rows(seen))
    s.text(fully_masked_versions=versions_words(seen))
    s.md(
        float_mask_sentence=float_mask_sentence(seen),
        unavailable_sentence=unavailable_sentence(seen),
    )
    lost = sum(r and not t for rr, tr in zip(right, top_left) for r, t in zip(rr, tr))
    s.value("count", align_lost=lost)
    return s


def big_text(big: float) -> str:
    """A large negative power of ten the way code writes it: ``−1e9``."""
    return f"{fmt.MINUS}1e{round(math.log10(-big))}"


def empty_rows_section() -> Section:
    """A fully masked row four ways, then in numpy's float16; every fixed sentence about it checked.
    The pitfalls page's PyTorch record says what PyTorch does with −1e9 in float16."""
    s = Section(PAGE, "整行都被禁止")
    dtype = ex.DTYPES[0]  # float16: the dtype the page's paragraph is about
    q = LEFT_Q
    v = LEFT_V
    valid = LEFT_VALID
    n = len(q)
    big_words = big_text(BIG)
    record = pitfalls.torch_record()
    # 02_pitfalls_torch.finite_fills: what masked_fill and torch.tensor make of −1e9 in float16
    fills = record["decode_loop"]["finite_fills"]
    facts = visibility_facts(n, key_valid=valid)
    empty = [r["row"] for r in facts["rows"] if r["empty"]]
    real = [i for i, ok in enumerate(valid) if ok]
    first = empty[0]
    lead = next((i for i, ok in enumerate(valid) if ok), n)  # the PAD in front
    big_name = f"填大负数 {big_words}"
    zero_name = '输出置零（"zero"）'
    results = {
        "−∞ 加普通 softmax": att.unguarded_attention(q, q, v, facts["visible"]),
        big_name: att.unguarded_attention(q, q, v, facts["visible"], fill=BIG),
        zero_name: att.attention(q, q, v, key_valid=valid, empty_row="zero"),
    }
    # One more product: the real rows mix this layer's outputs with the same (correct) weights.
    nexts = {
        name: slashed(sum(w * o[0] for w, o in zip(results[zero_name][0][i], out)) for i in real)
        for name, (_, out) in results.items()
    }
    w_big, out_big = results[big_name]
    added = {d: ex.empty_row_in_dtype(q, valid, d, BIG)["added"] for d in ("float64", "float32")}
    f = ex.empty_row_in_dtype(q, valid, dtype, BIG)
    d_big = f["weights"]["big"]
    d_min = f["weights"]["min"]
    d_two = f["weights"]["two_masks"]
    s.holds(
        pad_rows_read_nothing=empty == list(range(lead))
        and not any(r["empty"] for r in visibility_facts(n)["rows"]),
        big_spreads_evenly=len(set(w_big[first])) == 1 and math.isclose(sum(w_big[first]), 1.0),
        big_added_follows_scores_in_float64_only=len(set(added["float64"])) > 1
        and len(set(added["float32"])) == 1,
        big_does_not_spread=nexts[big_name] == nexts[zero_name],
        big_is_inf_weights_nan=f["big_is_inf"] and all(math.isnan(x) for x in d_big),
        finfo_min_spreads_evenly=all(math.isfinite(x) for x in d_min) and len(set(d_min)) == 1,
        finfo_min_twice_is_inf=math.isinf(f["twice"]),
        big_below_finfo_min=BIG < f["min"],
        torch_fill_fails_tensor_inf=BIG == -1e9
        and fills["float16_of_minus_1e9"] == "-inf"
        and fills["float16_masked_fill_error"] != "ran",
        two_masks_weight_zero=bool(f["doubled"]) and d_two[f["doubled"][0]] == 0.0,
        two_masks_row_nan=all(math.isnan(x) for x in f["row_twice"]),
    )

    def number(x):
        return fmt.short(x) if not math.isfinite(x) or abs(x) < 1e6 else fmt.sci(x)

    names = {
        "big": f"禁止的格子换成 {big_words}",
        "min": f"禁止的格子换成 finfo({dtype}).min",
        "two_masks": f"因果 mask 与 PAD mask 各取 finfo({dtype}).min，都加到分数上",
    }
    s.text(policy_empty_rows=positions_text(empty), policy_big=big_words)
    rows = [
        [name, slashed(w[first]), fmt.fmt(out[first][0]), slashed(out[i][0] for i in real)]
        + [nexts[name]]
        for name, (w, out) in results.items()
    ]
    table(
        s,
        "tbl_policies",
        [
            "策略",
            f"位置 {first} 的权重",
            f"位置 {first} 的输出",
            f"真实查询{positions_text(real)} 的输出",
            "下一层后真实查询的输出",
        ],
        rows + [['报错（"error"，本书默认）', "报错", "报错", "—", "—"]],
    )
    s.text(
        empty_row_error=error_of(att.attention, q, q, v, key_valid=valid),
        policy_big_reads=keys_text([j for j in range(n) if w_big[first][j] > 0]),
        policy_added64=slashed(added["float64"]),
        policy_pad_rows=positions_text([i for i, ok in enumerate(valid) if not ok]),
        policy_real_rows=positions_text(real),
        dtype_name=dtype,
        dtype_min=number(f["min"]),
        dtype_twice=number(f["twice"]),
    )
    s.value(policy_uniform=w_big[first][0], policy_big_out=out_big[first][0])
    s.value("count", dtype_row=first)
    table(
        s,
        "tbl_dtype",
        ["写法", f"禁止的格子在 {dtype} 里是", f"位置 {first} 的权重（{dtype}）"],
        [
            [names[name], " 或 ".join(map(number, f["blocked"][name])), slashed(weights)]
            for name, weights in f["weights"].items()
        ],
    )
    s.text(
        dtype_doubled_keys=keys_text(f["doubled"]),
        torch_fill_where=f"PyTorch {record['torch']}，{DEVICE_NAMES[record['device']]}",
        torch_fill_error=fills["float16_masked_fill_error"],
    )
    s.value(dtype_doubled_weight=d_two[f["doubled"][0]])
    return s


def cache_section() -> Section:
    """用了缓存: F12's last step in one sentence; in depth, one token at a time (new = 1)."""
    s = Section(PAGE, "用了缓存，位置就不再等于行号")
    worst = visibility_facts(1, past=PAST)
    wrong = [j for j in range(PAST + 1) if worst["row_index"][0][j]]
    rows = visibility_facts(NEW, past=PAST)["rows"]
    s.holds(
        row_index_loses_history_and_itself=any(r["lost_cached"] for r in rows)
        and all(len(r["lost_cached"]) < PAST for r in rows)
        and all(r["position"] in r["lost_new"] for r in rows),
        # 要记住 says it for any cache: with past ≥ 1, no row of the row-index table reads itself.
        no_row_reads_itself_with_any_cache=all(
            r["position"] in r["lost_new"]
            for past in range(1, PAST + 3)
            for new in range(1, NEW + 3)
            for r in visibility_facts(new, past=past)["rows"]
        ),
    )
    s.value(
        "count",
        worst_new=1,
        worst_keys=PAST + 1,
        worst_wrong_n=len(wrong),
    )
    s.text(worst_all=keys_text(list(range(PAST + 1))))
    table(
        s,
        "tbl_worst",
        fmt.keys(PAST + 1),
        [
            *rows_of(worst["visible"], lambda i: f"正确：行 {i}（绝对位置 {PAST + i}）", fmt.mark),
            *rows_of(worst["row_index"], lambda i: f"写错：行 {i}（误当位置 {i}）", fmt.mark),
        ],
    )
    s.text(
        worst_right=keys_text(worst["rows"][0]["readable"]),
        worst_wrong=keys_text(wrong),
    )
    return s


PLANS = ("不加 mask", "正确偏移 past + i", "写错偏移（行号 i）")


def checks_section() -> Section:
    """No mask, the right offset and the row-index offset, each through the page's two checks
    (defined above): 不泄漏 (the last position's V changed) and 与整段重算一致 (against a correct one)."""
    s = Section(PAGE, "如何判断是否做对")
    n = PAST + NEW
    q = LEAK_Q[:n]
    v = [[float(j + 1)] for j in range(n)]
    first = PAST
    last = n - 1
    tables = dict(
        zip(
            PLANS,
            [
                att.visibility(NEW, n, causal=False),
                att.visibility(NEW, n, past=PAST),
                att.row_index_visibility(NEW, n),
            ],
        )
    )
    # 不泄漏: only the last position's V changes ("改动未来"): the queries before it must not move.
    future = [[j == last and j > PAST + i for j in range(n)] for i in range(NEW)]
    results = {}
    for plan, visible in tables.items():

        def run(q_new, k, values, visible=visible):
            return att.masked_attention(q_new, k, values, visible)[1]

        results[plan] = {
            "leak": leak_probe(run, q[PAST:], q, v, future, LEAK_POISON),
            "full": recompute_check(run, q, q, v, PAST),
        }
    reference = results[PLANS[1]]["full"]["reference"]
    # The same code recomputed in full (no cache: past = 0) as its own reference: the no-mask rows match
    # theirs, a bug both sides share; the row-index offset is right there (row = position) and is caught.
    own_full = {
        PLANS[0]: att.visibility(n, n, causal=False),
        PLANS[2]: att.row_index_visibility(n, n),
    }
    own = {plan: att.masked_attention(q, q, v, t)[1][PAST:] for plan, t in own_full.items()}

    def same_rows(a, b):
        return att.max_abs_diff(a, b) <= TOLERANCE

    leaks = {plan: 0 in r["leak"]["leaking"] for plan, r in results.items()}
    differs = {plan: r["full"]["differ"] for plan, r in results.items()}
    passing = [plan for plan in PLANS if not leaks[plan] and not differs[plan]]
    s.holds(
        own_recompute_misses_no_mask_catches_row_index=same_rows(
            results[PLANS[0]]["full"]["outputs"], own[PLANS[0]]
        )
        and same_rows(own[PLANS[2]], reference)
        and not same_rows(results[PLANS[2]]["full"]["outputs"], own[PLANS[2]]),
        only_no_mask_leaks=leaks[PLANS[0]] and not leaks[PLANS[1]] and not leaks[PLANS[2]],
        only_row_index_differs=not differs[PLANS[1]] and 0 in differs[PLANS[2]],
        only_right_offset_passes=passing == [PLANS[1]],
    )

    def first_output(plan, key):
        return fmt.fmt(results[plan]["leak"][key][0][0])

    def agreement(plan):
        rows = differs[plan]
        return "一致" if not rows else positions_text([first + i for i in rows]) + " 不同"

    s.value(
        "count",
        leak_n=n,
        leak_last=last,
        ref_first_pos=first,
        ref_last_pos=last,
    )
    s.text(leak_qk=fmt.vectors(q), leak_v=column(v))
    table(
        s,
        "tbl_checks",
        [
            "算法",
            f"位置 {first} 输出",
            f"改动未来后位置 {first} 输出",
            f"位置 {first} 受未来影响？",
            f"位置 {last} 输出",
            "与整段重算",
        ],
        [
            [
                plan,
                first_output(plan, "outputs"),
                first_output(plan, "probed"),
                "是（泄漏）" if leaks[plan] else "否",
                fmt.fmt(r["leak"]["outputs"][-1][0]),
                agreement(plan),
            ]
            for plan, r in results.items()
        ],
    )
    s.value(ref_first=reference[0][0], ref_last=reference[-1][0])
    s.text(
        check_open=first_output(PLANS[0], "outputs"),
        check_open_probed=first_output(PLANS[0], "probed"),
        check_right=first_output(PLANS[1], "outputs"),
        check_wrong=first_output(PLANS[2], "outputs"),
    )
    return s


def observe_section() -> Section:
    """Causal against no mask on the same Q, K, V; F12's row of scores through softmax without the
    mask, and what it mixes from this V."""
    s = Section(PAGE, "怎样观察与验证")
    q = att.DEMO_Q
    k = att.DEMO_K
    v = att.DEMO_V
    w_c, out_c = att.attention(q, k, v)
    w_o, out_o = att.attention(q, k, v, causal=False)
    same = [i for i in range(len(out_c)) if out_c[i] == out_o[i]]
    s.holds(some_rows_unchanged=bool(same))
    p = att.softmax(SCORE_ROW)
    table(
        s,
        "tbl_causal_vs_open",
        ["查询", "因果：权重", "因果：输出", "无 mask：权重", "无 mask：输出"],
        [
            [position(i), slashed(wc), fmt.fmt(oc[0]), slashed(wo), fmt.fmt(oo[0])]
            for i, (wc, oc, wo, oo) in enumerate(zip(w_c, out_c, w_o, out_o))
        ],
    )
    s.text(causal_same=positions_text(same))
    s.value(**{f"p{j}": x for j, x in enumerate(p)})
    s.value(mix_base=sum(pj * x[0] for pj, x in zip(p, v)))
    return s


def run_output() -> Section:
    """What running ``02_attention.py`` prints."""
    s = Section(PAGE, "运行结果示例")
    s.md(run_output=str(fmt.run_output("02_attention.py")))
    return s


# -- the exercises' solutions (the numbers come from code/02_exercises_mask.py) -----------------------
def exercises() -> Section:
    """Everything the exercises glue: inputs, the solutions' tables, facts and steps."""
    s = Section(PAGE, "练习")
    past = ex.PAST
    new = ex.NEW
    pad_front = ex.PAD_FRONT
    t1 = ex.pad_cache_table(past, new, pad_front)
    s2 = ex.masked_softmax_steps()
    c3 = ex.decoding_checks()
    facts = visibility_facts(new, past=past, key_valid=t1["key_valid"])
    n3 = ex.BUG_PAST + ex.BUG_NEW
    kept = [x for x, ok in zip(ex.SCORES, ex.VISIBLE) if ok]
    plain = row_text(att.softmax(kept), fmt.fmt)
    s.holds(
        sentences_read_the_exercise_table=facts["visible"] == t1["visible"],
        masked_weights_are_visible_softmax=plain
        == row_text([w for w, ok in zip(s2["weights"], ex.VISIBLE) if ok], fmt.fmt),
        only_recompute_catches_b=c3["passed"] == ["不泄漏"]
        and c3["caught_by"] == ["与整段重算一致"],
    )
    steps = [
        ("分数（给定）", ex.SCORES, fmt.short),
        ("加 mask", s2["masked"], fmt.fmt),
        ("减去最大值", s2["shifted"], fmt.fmt),
        ("exp", s2["exps"], fmt.fmt),
        ("÷ 指数之和（权重）", s2["weights"], fmt.fmt),
    ]
    s.text(
        ex1_keys=span(0, past + new - 1),
        ex1_pad_keys=keys_text(list(range(pad_front))) if pad_front else "没有 Key",
    )
    table(
        s,
        "ex1_table",
        fmt.keys(past + new),
        rows_of(t1["visible"], lambda i: f"行 {i}（绝对位置 {past + i}）", fmt.mark),
    )
    s.md(ex1_sentences="\n".join(f"- {row_sentence(row, past)}" for row in facts["rows"]))
    s.text(
        ex1_positions=listing(past + i for i in range(new)),
        ex2_visible=symbols(ex.VISIBLE),
    )
    table(
        s,
        "ex2_steps",
        fmt.keys(len(ex.SCORES), "步骤"),
        [[name] + [cell(x) for x in xs] for name, xs, cell in steps],
    )
    s.value(ex2_max=s2["max"], ex2_total=s2["total"])
    s.text(ex2_kept_n=count_words(len(kept)), ex2_kept=row_text(kept), ex2_plain=plain)
    s.value("count", ex3_last=n3 - 1)
    s.text(ex3_v=column(ex.BUG_V[:n3]))
    table(
        s,
        "ex3_tables",
        fmt.keys(n3),
        [
            row
            for r in c3["rows"]
            for row in rows_of(
                r["visible"],
                lambda i, r=r: f"{r['name']}：行 {i}（绝对位置 {ex.BUG_PAST + i}）",
                fmt.mark,
            )
        ],
    )
    table(
        s,
        "ex3_table",
        ["写法", "新查询的输出", "与整段重算一致", "改动最后一个位置的 V 后，它之前的新查询"],
        [
            [
                r["name"],
                slashed(o[0] for o in r["output"]),
                "是" if r["matches_full"] else "否",
                "不变" if r["no_leak"] else "变了",
            ]
            for r in c3["rows"]
        ],
    )
    s.text(
        ex3_full=slashed(o[0] for o in c3["full"]),
        ex3_lost="；".join(
            f"行 {i} 少读 {keys_text(lost)}" if lost else f"行 {i} 一个也不少读"
            for i, lost in enumerate(c3["rows"][1]["lost"])
        ),
    )
    s.md(ex4_doctest=str(fmt.doctest_block(ex.visible_counts)))
    return s
