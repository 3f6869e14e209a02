"""The mask page (book/ch02/mask.md): one function per cell of the page, each returning the facts it glues;
row facts in ``mask_facts``, F12 and its panel in ``mask_figure``, the page's checks in ``mask_checks``.

The page's sentences live in the page. Where a fixed sentence holds only because of a fact of the run
(「它没有传开」, 「权重全是 NaN」), the cell that glues its numbers checks the fact with ``fmt.holds`` and stops
the build with the sentence named when the fact is false; a fact that depends
on the arguments names them (在这组 q、v 下)."""

from __future__ import annotations

import importlib
import math

from chapter import fmt, mask_checks, pitfalls
from chapter.conventions import (
    ALIGNMENT,
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
from chapter.fmt import Md, Table, glue_all, rows_of, slashed  # noqa: F401 - the page's cells call glue_all
from chapter.mask_facts import (
    count_words,
    error_of,
    keys_text,
    pad_change_sentence,
    positions_text,
    row_sentence,
    visibility_facts,
)
from chapter.mask_figure import (
    FIGURE_MAX_POSITIONS,
    N_POSITIONS,
    NEW,
    PAST,
    SCORE_ROW,
)

att = importlib.import_module("02_attention")
ex = importlib.import_module("02_exercises_mask")
PAGE = "mask 一页"  # how fmt.holds names this page when a fixed sentence fails

position = "绝对位置 {}".format  # a row label by absolute position: position(2) is 绝对位置 2


def column(matrix) -> str:
    """A one-column V as typed: ``10、−2.5``."""
    return "、".join(fmt.short(row[0]) for row in att.as_matrix(matrix, "matrix"))


def row_text(values, cell=fmt.short) -> str:
    """A row of scores as typed: ``[0, 1, −2]`` (as computed with ``cell=fmt.fmt``)."""
    return "[" + ", ".join(cell(x) for x in att.as_vector(values, "values")) + "]"


def symbols(row) -> str:
    """A visibility row in symbols only: ``✓ ✗``."""
    return " ".join("✓" if flag else "✗" for flag in att.flags(row, "row"))


def quoted(names) -> str:
    """Names in Chinese quotation marks: ``“不泄漏”、“与整段重算一致”``."""
    return "、".join(f"“{name}”" for name in names)


# -- the page's inputs (hand-made; each example states them in its 输入与适用条件) -----------------------
LEFT_Q = [[0.5, 0.5], [0.5, -0.5], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]  # Q = K
LEFT_V = [[90.0], [80.0], [10.0], [20.0], [30.0]]  # the PAD's V far from the content's
LEFT_VALID = [False, False, True, True, True]  # left padding: two PAD in front
BIG = -1e9  # the large negative number many code bases write instead of −∞
LEAK_Q = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0], [2.0, 0.0], [0.0, -1.0], [1.0, 2.0]]
LEAK_POISON = 100.0  # the last position's V when "the future changes"


# -- the page, cell by cell ----------------------------------------------------------------------------
def figure_inputs() -> dict:
    """The inputs F12 names in its 输入与适用条件 (the defaults of ``f12_frames``)."""
    return {
        "f12_n": N_POSITIONS,
        "f12_causal_steps": f"第 1 至 {N_POSITIONS} 步",
        "f12_score_step": f"第 {N_POSITIONS + 1} 步",
        "f12_cache_step": f"第 {N_POSITIONS + 2} 步",
        "f12_past": PAST,
        "f12_new": NEW,
    }


def demo_section(q=att.DEMO_Q, k=att.DEMO_K, v=att.DEMO_V, row: int | None = None) -> dict:
    """一步一步, then 一行从头算到尾 by ``row_steps`` (by default a row with two readable keys and a
    forbidden one): the masked scores, the maximum subtracted, the exponentials, the weights."""
    q = att.as_matrix(q, "Q")
    k = att.as_matrix(k, "K")
    v = att.as_matrix(v, "V")
    n = len(q)
    keys = fmt.keys(len(k))
    scores = att.scaled_scores(q, k)
    table = att.visibility(len(q), len(k))
    mask = att.additive_mask(table)
    weights, outputs = att.masked_attention(q, k, v, table)
    pairs = [
        [f"{fmt.mark(f)} → {fmt.fmt(m, 0)}" for f, m in zip(*rows)] for rows in zip(table, mask)
    ]
    masked = [[s + m for s, m in zip(*r)] for r in zip(scores, mask)]
    mixed = [w + o[:1] for w, o in zip(weights, outputs)]  # the weights, then the output
    if row is None:
        row = next((i for i, r in enumerate(table) if sum(r) >= 2 and not all(r)), n - 1)
    if not isinstance(row, int) or isinstance(row, bool) or not 0 <= row < n:
        raise ValueError(f"row 必须是 0 到 {n - 1} 之间的整数，收到 {row!r}")
    forbidden = [j for j, ok in enumerate(table[row]) if not ok]
    if not forbidden:
        raise ValueError(f"row={row} 读得到全部 Key：这一节要演示的是一个被因果规则禁止的 Key")
    steps = att.row_steps(q[row], k, v, table[row])
    weighted = [x[0] for x in steps["weighted"]]
    output = steps["output"][0]
    # The weights as the table prints them, multiplied by V: what a reader recomputing by hand gets.
    shown = [fmt.printed(fmt.fmt(w)) for w in steps["weights"]]
    approx = sum(w * x[0] for w, x in zip(shown, v))
    fmt.holds(
        PAGE,
        {
            "（表中）权重 = exp ÷ 总和：印出的权重相加是 1（在这组 q、k、v、row 下）": fmt.fmt(
                sum(shown)
            )
            == fmt.fmt(1.0)
        },
    )
    fmt.holds(
        PAGE,
        {
            "用这些印出的权重去乘 V 再相加……比精确的输出差一点（在这组 q、k、v、row 下）": fmt.fmt(
                approx
            )
            != fmt.fmt(output)
        },
    )
    return {
        "demo_n": n,
        "demo_d": len(q[0]),
        "demo_past": 0,
        "demo_positions": "、".join(map(str, range(n))),
        "demo_qk": fmt.vectors(q),
        "demo_v": column(v),
        "tbl_scores": Table(keys, rows_of(scores, position)),
        "tbl_visible_mask": Table(keys, rows_of(pairs, position, str)),
        "tbl_masked": Table(keys, rows_of(masked, position)),
        "tbl_weights": Table(keys + ["输出"], rows_of(mixed, position)),
        "hand_row": row,
        "hand_forbidden": keys_text(forbidden),
        "hand_scores": row_text(steps["scaled"], fmt.fmt),
        "tbl_hand": Table(
            fmt.keys(len(k), "步骤 ＼ Key"),
            [
                [name] + [cell(x) for x in xs]
                for name, xs, cell in [
                    ("分数（取自分数表）", steps["scaled"], fmt.fmt),
                    ("加 mask", steps["masked"], fmt.fmt),
                    ("减去最大值", steps["shifted"], fmt.fmt),
                    ("exp", steps["exps"], fmt.fmt),
                    ("权重 = exp ÷ 总和", steps["weights"], fmt.fmt),
                    ("V", [x[0] for x in v], fmt.short),
                    ("权重 × V", weighted, fmt.fmt),
                ]
            ],
        ),
        "hand_max": fmt.fmt(steps["max"]),
        "hand_total": fmt.fmt(steps["total"]),
        "hand_sum": " + ".join(fmt.fmt(x) for x in weighted),
        "hand_equals": fmt.equals(sum(fmt.printed(fmt.fmt(x)) for x in weighted), output),
        "hand_output": fmt.fmt(output),
        "hand_approx": fmt.fmt(approx),
        "hand_gap": fmt.difference(abs(approx - output)),
    }


def padding_section(q=LEFT_Q, v=LEFT_V, valid=LEFT_VALID) -> dict:
    """Left padding (three tables, the changed queries, the weights), then the encoder, PAD at the end."""
    q = att.as_matrix(q, "Q")
    v = att.as_matrix(v, "V")
    n = len(q)
    valid = att.flags(valid, "valid", len(q))
    before = visibility_facts(n)
    after = visibility_facts(n, key_valid=valid)
    pad_only = att.visibility(n, n, causal=False, key_valid=valid)
    w, out = att.attention(q, q, v, key_valid=valid, empty_row="zero")
    order = [j for j in range(n) if valid[j]] + [
        j for j in range(n) if not valid[j]
    ]  # PAD to the end
    enc_q = [q[j] for j in order]
    enc_v = [v[j] for j in order]
    pad = att.key_padding(valid.count(True), n)
    open_enc = visibility_facts(n, causal=False)
    pad_enc = visibility_facts(n, causal=False, key_valid=pad)
    _, open_out = att.attention(enc_q, enc_q, enc_v, causal=False)
    _, pad_out = att.attention(enc_q, enc_q, enc_v, causal=False, key_valid=pad)
    return {
        "left_n": n,
        "left_pad_keys": keys_text([j for j, ok in enumerate(valid) if not ok]),
        "left_real_keys": keys_text([j for j, ok in enumerate(valid) if ok]),
        "left_qk": fmt.vectors(q),
        "left_v": column(v),
        "tbl_left_and": Table(
            ["查询", "只用因果", "只用 PAD", "两者取“与”"],
            [
                [position(i), symbols(c), symbols(p), symbols(b)]
                for i, (c, p, b) in enumerate(zip(before["visible"], pad_only, after["visible"]))
            ],
        ),
        "tbl_left_weights": Table(
            fmt.keys(n) + ["输出"],
            [
                [position(i) + "（整行被屏蔽）"] + ["—"] * (n + 1)
                if fact["empty"]
                else [position(i)] + [fmt.fmt(x) for x in wi] + [fmt.fmt(o[0])]
                for i, (fact, wi, o) in enumerate(zip(after["rows"], w, out))
            ],
        ),
        "left_change": pad_change_sentence(before, after, valid),
        "enc_n": n,
        "enc_valid": valid.count(True),
        "enc_real_keys": keys_text([j for j, ok in enumerate(pad) if ok]),
        "enc_qk": fmt.vectors(enc_q),
        "enc_v": column(enc_v),
        "tbl_enc": Table(
            ["查询", "PAD 规则下的可见性", "不加 PAD 规则的输出", "加 PAD 规则的输出"],
            [
                [position(i), symbols(vis), fmt.fmt(o[0]), fmt.fmt(p[0])]
                for i, (vis, o, p) in enumerate(zip(pad_enc["visible"], open_out, pad_out))
            ],
        ),
        "enc_change": pad_change_sentence(open_enc, pad_enc, pad),
    }


def causal_table(n_query: int, n_key: int, align: str) -> list[list[bool]]:
    """A causal table aligned ``"top-left"`` (row i reads keys 0 … i) or ``"bottom-right"`` (0 … i + past)."""
    if not isinstance(align, str) or align not in ALIGNMENT:
        raise ValueError(f"align 必须是 'top-left' 或 'bottom-right'，收到 {align!r}")
    att.check_count(n_query, "n_query", maximum=att.MAX_POSITIONS)
    att.check_count(n_key, "n_key", maximum=att.MAX_POSITIONS)
    if n_key < n_query:
        raise ValueError(f"n_key={n_key} 不能少于 n_query={n_query}：查询读的是缓存加新位置")
    shift = n_key - n_query if align == "bottom-right" else 0
    return [[j <= i + shift for j in range(n_key)] for i in range(n_query)]


def conventions_section(seen: dict | None = None, past: int = PAST, new: int = NEW) -> dict:
    """The libraries' conventions and fully masked rows as observed; the two alignments on F12's last step."""
    att.check_count(
        past, "past", maximum=att.MAX_POSITIONS
    )  # with a cache: without one the two coincide
    n_key = past + att.check_count(new, "new", maximum=att.MAX_POSITIONS)
    right = att.visibility(new, n_key, past=past)
    top_left = causal_table(new, n_key, "top-left")
    if causal_table(new, n_key, "bottom-right") != right or top_left != att.row_index_visibility(
        new, n_key
    ):
        raise AssertionError("右下对齐应当是本书的偏移，左上对齐应当是把行号当位置")
    seen = observed() if seen is None else seen
    fmt.holds(
        PAGE,
        {
            "这两张表里的观察都是在 CPU 上做的，本书还没有在 GPU 上运行过这些库": sorted(seen)
            == ["cpu"]
        },
    )
    return {
        "tbl_conventions": Table(HEADER, conventions_rows(seen)),
        "tbl_fully_masked": Table(FULLY_MASKED_HEADER, fully_masked_rows(seen)),
        "fully_masked_versions": versions_words(seen),
        "float_mask_sentence": Md(float_mask_sentence(seen)),
        "unavailable_sentence": Md(unavailable_sentence(seen)),
        "align_past": past,
        "align_new": new,
        "align_lost": sum(r and not t for rr, tr in zip(right, top_left) for r, t in zip(rr, tr)),
    }


def big_text(big: float = BIG) -> str:
    """A large negative number the way code writes it: ``−1e9`` (a negative whole power of ten only)."""
    big = att.real(big, "big")
    exponent = round(math.log10(-big)) if big < 0 and math.isfinite(big) else None
    if exponent is None or -big != 10.0**exponent:
        raise ValueError(f"big 必须是 −10 的整数次幂（如 −1e9），收到 {big!r}")
    return f"{fmt.MINUS}1e{exponent}"


def empty_rows_section(
    dtype: str = "float16",
    q=LEFT_Q,
    v=LEFT_V,
    valid=LEFT_VALID,
    big: float = BIG,
    torch_record: dict | None = None,
):
    """A fully masked row four ways, then in numpy's ``dtype``; every fixed sentence about it checked.
    ``torch_record``: the pitfalls page's PyTorch record (``pitfalls.torch_record()`` when ``None``), read
    here only for what PyTorch does with −1e9 in float16."""
    q = att.as_matrix(q, "Q")
    v = att.as_matrix(v, "V")
    n = len(q)
    valid = att.flags(valid, "valid", len(q))
    big = att.real(big, "big")
    big_words = big_text(big)
    record = pitfalls.torch_record() if torch_record is None else torch_record
    try:  # 02_pitfalls_torch.finite_fills: what masked_fill and torch.tensor make of −1e9 in float16
        fills = record["decode_loop"]["finite_fills"]
        fill_where = f"PyTorch {record['torch']}，{DEVICE_NAMES[record['device']]}"
        fill_error = fills["float16_masked_fill_error"]
        fill_tensor = fills["float16_of_minus_1e9"]
    except (KeyError, TypeError, IndexError) as error:
        raise ValueError(
            f"torch_record 必须是 02_pitfalls_torch.json 那样的记录，收到 {torch_record!r}"
        ) from error
    facts = visibility_facts(n, key_valid=valid)
    empty = [r["row"] for r in facts["rows"] if r["empty"]]
    real = [i for i, ok in enumerate(valid) if ok]
    if not empty or not real:
        raise ValueError(
            "valid 必须让至少一行整行被屏蔽，又至少有一个真实位置：这一节比较的正是它们"
        )
    first = empty[0]
    lead = next((i for i, ok in enumerate(valid) if ok), n)  # the PAD in front
    fmt.holds(
        PAGE,
        {
            "两条规则取“与”后，句首的 PAD 查询行一个 Key 也读不到（只用因果规则时每行都读得到自己；在这组 valid 下）": empty
            == list(range(lead))
            and not any(r["empty"] for r in visibility_facts(n)["rows"])
        },
    )
    big_name = f"填大负数 {big_words}"
    zero_name = '输出置零（"zero"）'
    results = {
        "−∞ 加普通 softmax": att.unguarded_attention(q, q, v, facts["visible"]),
        big_name: att.unguarded_attention(q, q, v, facts["visible"], fill=big),
        zero_name: att.attention(q, q, v, key_valid=valid, empty_row="zero"),
    }
    # One more product: the real rows mix this layer's outputs with the same (correct) weights.
    nexts = {
        name: slashed(sum(w * o[0] for w, o in zip(results[zero_name][0][i], out)) for i in real)
        for name, (_, out) in results.items()
    }
    rows = [
        [
            name,
            slashed(w[first]),
            fmt.fmt(out[first][0]),
            slashed(out[i][0] for i in real),
            nexts[name],
        ]
        for name, (w, out) in results.items()
    ]
    w_big, out_big = results[big_name]
    added = {d: ex.empty_row_in_dtype(q, valid, d, big)["added"] for d in ("float64", "float32")}
    fmt.holds(
        PAGE,
        {
            "改用大负数（如 −1e9），这一行读的就全是被禁止的 Key；禁止的格子换成它后，权重平均分成……（在这组 q、v、valid、big 下）": len(
                set(w_big[first])
            )
            == 1
            and math.isclose(sum(w_big[first]), 1.0)
        },
    )
    fmt.holds(
        PAGE,
        {
            "把大负数加到分数上时，双精度里权重随分数变，float32 里又是平均分配（在这组 q、v、valid、big 下）": len(
                set(added["float64"])
            )
            > 1
            and len(set(added["float32"])) == 1
        },
    )
    fmt.holds(
        PAGE,
        {
            "“下一层”一列里，它与“输出置零”给出的真实输出逐个相同……它没有传开（在这组 q、v、valid、big 下）": nexts[
                big_name
            ]
            == nexts[zero_name]
        },
    )
    f = ex.empty_row_in_dtype(q, valid, dtype, big)
    d_big = f["weights"]["big"]
    d_min = f["weights"]["min"]
    d_two = f["weights"]["two_masks"]
    fmt.holds(
        PAGE,
        {
            f"{big_words} 比最小的有限数还小，numpy.{dtype}({big_words}) 就是 −∞……权重全是 NaN（在这组 dtype、q、v、valid、big 下）": f[
                "big_is_inf"
            ]
            and all(math.isnan(x) for x in d_big)
        },
    )
    fmt.holds(
        PAGE,
        {
            f"numpy.finfo({dtype}).min 本身是有限的……权重平均分配（在这组 dtype、q、v、valid、big 下）": all(
                math.isfinite(x) for x in d_min
            )
            and len(set(d_min)) == 1
        },
    )
    fmt.holds(
        PAGE,
        {f"finfo.min + (finfo.min) 在 {dtype} 里是 −∞（在这组 dtype 下）": math.isinf(f["twice"])},
    )
    fmt.holds(PAGE, {f"{dtype} 写不下它（{big_words} 比 finfo({dtype}).min 还小）": big < f["min"]})
    fmt.holds(
        PAGE,
        {
            f"PyTorch 里 torch.tensor 把 {big_words} 转成 float16 也是 −∞，float16 张量的 masked_fill 填 {big_words} 却直接报错（记录里，它填的是 −1e9）": big
            == -1e9
            and fill_tensor == "-inf"
            and fill_error != "ran"
        },
    )
    fmt.holds(
        PAGE,
        {
            "被两条规则同时挡住的 Key 又成了 −∞，权重为 0（在这组 dtype、q、v、valid、big 下）": bool(
                f["doubled"]
            )
            and d_two[f["doubled"][0]] == 0.0
        },
    )
    fmt.holds(
        PAGE,
        {
            "一整行的格子都被两条规则同时挡住时，这一行又是 NaN（在这组 dtype、q、v、valid、big 下）": all(
                math.isnan(x) for x in f["row_twice"]
            )
        },
    )

    def number(x):
        return fmt.short(x) if not math.isfinite(x) or abs(x) < 1e6 else fmt.sci(x)

    names = {
        "big": f"禁止的格子换成 {big_words}",
        "min": f"禁止的格子换成 finfo({dtype}).min",
        "two_masks": f"因果 mask 与 PAD mask 各取 finfo({dtype}).min，都加到分数上",
    }
    return {
        "policy_empty_rows": positions_text(empty),
        "policy_big": big_words,
        "tbl_policies": Table(
            [
                "策略",
                f"位置 {first} 的权重",
                f"位置 {first} 的输出",
                f"真实查询{positions_text(real)} 的输出",
                "下一层后真实查询的输出",
            ],
            rows + [['报错（"error"，本书默认）', "报错", "报错", "—", "—"]],
        ),
        "empty_row_error": error_of(att.attention, q, q, v, key_valid=valid),
        "policy_uniform": fmt.fmt(w_big[first][0]),
        "policy_big_out": fmt.fmt(out_big[first][0]),
        "policy_big_reads": keys_text([j for j in range(n) if w_big[first][j] > 0]),
        "policy_added64": slashed(added["float64"]),
        "policy_pad_rows": positions_text([i for i, ok in enumerate(valid) if not ok]),
        "policy_real_rows": positions_text(real),
        "dtype_name": dtype,
        "dtype_row": first,
        "dtype_min": number(f["min"]),
        "dtype_twice": number(f["twice"]),
        "tbl_dtype": Table(
            ["写法", f"禁止的格子在 {dtype} 里是", f"位置 {first} 的权重（{dtype}）"],
            [
                [names[name], " 或 ".join(map(number, f["blocked"][name])), slashed(weights)]
                for name, weights in f["weights"].items()
            ],
        ),
        "dtype_doubled_keys": keys_text(f["doubled"]),
        "torch_fill_where": fill_where,
        "torch_fill_error": fill_error,
        "dtype_doubled_weight": fmt.fmt(d_two[f["doubled"][0]]),
    }


def cache_section(past: int = PAST, new: int = NEW) -> dict:
    """用了缓存: F12's last step in one sentence; in depth, one token at a time (new = 1)."""
    att.check_count(
        past, "past", maximum=FIGURE_MAX_POSITIONS
    )  # with a cache: the section is about one
    att.check_count(new, "new", maximum=FIGURE_MAX_POSITIONS)
    worst = visibility_facts(1, past=past)
    wrong = [j for j in range(past + 1) if worst["row_index"][0][j]]
    rows = visibility_facts(new, past=past)["rows"]
    fmt.holds(
        PAGE,
        {
            "按行号造表……不会泄漏未来，却悄悄丢掉了缓存里的部分历史，连查询自己的位置也读不到（在这组 past、new 下）": any(
                r["lost_cached"] for r in rows
            )
            and all(len(r["lost_cached"]) < past for r in rows)
            and all(r["position"] in r["lost_new"] for r in rows)
        },
    )
    return {
        "offset_past": past,
        "offset_new": new,
        "worst_past": past,
        "worst_new": 1,
        "worst_keys": past + 1,
        "worst_all": keys_text(list(range(past + 1))),
        "tbl_worst": Table(
            fmt.keys(past + 1),
            [
                *rows_of(
                    worst["visible"], lambda i: f"正确：行 {i}（绝对位置 {past + i}）", fmt.mark
                ),
                *rows_of(worst["row_index"], lambda i: f"写错：行 {i}（误当位置 {i}）", fmt.mark),
            ],
        ),
        "worst_right": keys_text(worst["rows"][0]["readable"]),
        "worst_wrong": keys_text(wrong),
        "worst_wrong_n": len(wrong),
    }


PLANS = ("不加 mask", "正确偏移 past + i", "写错偏移（行号 i）")


def checks_section(past: int = PAST, new: int = NEW, poison: float = LEAK_POISON) -> dict:
    """No mask, the right offset and the row-index offset, each through the page's two checks
    (``mask_checks``): 不泄漏 (the last position's V changed) and 与整段重算一致 (against a correct one)."""
    att.check_count(past, "past")  # with a cache: without one the row-index offset is the right one
    # new ≥ 2: the check changes the V of the last position, which must come after the first new query.
    if att.check_count(new, "new", minimum=2) + past > len(LEAK_Q):
        raise ValueError(
            f"past + new 不能超过 {len(LEAK_Q)}（这一节只准备了这么多个向量），收到 {past + new}"
        )
    q = LEAK_Q[: past + new]
    v = [[float(j + 1)] for j in range(past + new)]
    poison = att.real(poison, "poison")
    if not math.isfinite(poison):
        raise ValueError(f"poison 必须是有限数，收到 {poison!r}")
    n = past + new
    first = past
    last = n - 1
    tables = dict(
        zip(
            PLANS,
            [
                att.visibility(new, n, causal=False),
                att.visibility(new, n, past=past),
                att.row_index_visibility(new, n),
            ],
        )
    )
    # 不泄漏: only the last position's V changes ("改动未来"): the queries before it must not move.
    future = [[j == last and j > past + i for j in range(n)] for i in range(new)]
    results = {}
    for plan, table in tables.items():

        def run(q_new, k, values, table=table):
            return att.masked_attention(q_new, k, values, table)[1]

        results[plan] = {
            "leak": mask_checks.leak_probe(run, q[past:], q, v, future, poison),
            "full": mask_checks.recompute_check(run, q, q, v, past),
        }
    reference = results[PLANS[1]]["full"]["reference"]
    # The same code recomputed in full (no cache: past = 0) as its own reference: the no-mask rows match
    # theirs, a bug both sides share; the row-index offset is right there (row = position) and is caught.
    own_full = {
        PLANS[0]: att.visibility(n, n, causal=False),
        PLANS[2]: att.row_index_visibility(n, n),
    }
    own = {plan: att.masked_attention(q, q, v, table)[1][past:] for plan, table in own_full.items()}

    def same_rows(a, b):
        return att.max_abs_diff(a, b) <= mask_checks.TOLERANCE

    fmt.holds(
        PAGE,
        {
            "拿同一份代码整段重算当参照：“不加 mask”带缓存的行与它自己整段重算的相同；"
            "“写错偏移（行号 i）”整段重算时算对，带缓存的行与它不同（在这组 past、new 下）": same_rows(
                results[PLANS[0]]["full"]["outputs"], own[PLANS[0]]
            )
            and same_rows(own[PLANS[2]], reference)
            and not same_rows(results[PLANS[2]]["full"]["outputs"], own[PLANS[2]])
        },
    )
    leaks = {plan: 0 in r["leak"]["leaking"] for plan, r in results.items()}
    differs = {plan: r["full"]["differ"] for plan, r in results.items()}
    passing = [plan for plan in PLANS if not leaks[plan] and not differs[plan]]
    fmt.holds(
        PAGE,
        {
            "“不加 mask” …，泄漏；“正确偏移 past + i” …，不变；“写错偏移（行号 i）” …，不变（在这组 past、new、poison 下）": leaks[
                PLANS[0]
            ]
            and not leaks[PLANS[1]]
            and not leaks[PLANS[2]]
        },
    )
    fmt.holds(
        PAGE,
        {
            "“正确偏移 past + i” 与整段重算相同；“写错偏移（行号 i）” 却与整段重算不同（在这组 past、new、poison 下）": not differs[
                PLANS[1]
            ]
            and 0 in differs[PLANS[2]]
        },
    )
    fmt.holds(
        PAGE,
        {"只有“正确偏移 past + i”两项都通过（在这组 past、new、poison 下）": passing == [PLANS[1]]},
    )

    def first_output(plan, key):
        return fmt.fmt(results[plan]["leak"][key][0][0])

    def agreement(plan):
        rows = differs[plan]
        return "一致" if not rows else positions_text([first + i for i in rows]) + " 不同"

    return {
        "leak_n": n,
        "leak_qk": fmt.vectors(q),
        "leak_v": column(v),
        "leak_last": last,
        "leak_poison": fmt.short(poison),
        "leak_past": past,
        "leak_new": new,
        "tbl_checks": Table(
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
        ),
        "ref_first_pos": first,
        "ref_last_pos": last,
        "ref_first": fmt.fmt(reference[0][0]),
        "ref_last": fmt.fmt(reference[-1][0]),
        "check_open": first_output(PLANS[0], "outputs"),
        "check_open_probed": first_output(PLANS[0], "probed"),
        "check_right": first_output(PLANS[1], "outputs"),
        "check_wrong": first_output(PLANS[2], "outputs"),
    }


def observe_section(q=att.DEMO_Q, k=att.DEMO_K, v=att.DEMO_V, base=SCORE_ROW) -> dict:
    """Causal against no mask on the same Q, K, V; F12's row of scores through softmax without the
    mask, and what it mixes from this V."""
    w_c, out_c = att.attention(q, k, v)
    w_o, out_o = att.attention(q, k, v, causal=False)
    same = [i for i in range(len(out_c)) if out_c[i] == out_o[i]]
    fmt.holds(PAGE, {"只有…不变，其余位置读到了自己之后的 Value（在这组 q、k、v 下）": bool(same)})
    base = att.as_vector(base, "base")
    v = att.as_matrix(v, "V")
    if len(v) != len(base):
        raise ValueError(f"V 的行数必须等于分数的个数 {len(base)}，收到 {len(v)}")
    p = att.softmax(base)
    return {
        "tbl_causal_vs_open": Table(
            ["查询", "因果：权重", "因果：输出", "无 mask：权重", "无 mask：输出"],
            [
                [position(i), slashed(wc), fmt.fmt(oc[0]), slashed(wo), fmt.fmt(oo[0])]
                for i, (wc, oc, wo, oo) in enumerate(zip(w_c, out_c, w_o, out_o))
            ],
        ),
        "causal_same": positions_text(same),
        "gap_base": row_text(base),
        **{f"p{j}": fmt.fmt(x) for j, x in enumerate(p)},
        "mix_base": fmt.fmt(sum(pj * x[0] for pj, x in zip(p, v))),
    }


# -- the exercises' solutions (the numbers come from code/02_exercises_mask.py) -----------------------
def exercises(past: int = ex.PAST, new: int = ex.NEW, pad_front: int = ex.PAD_FRONT) -> dict:
    """Everything the exercises glue: inputs, the solutions' tables, facts and steps."""
    t1 = ex.pad_cache_table(past, new, pad_front)
    s2 = ex.masked_softmax_steps()
    c3 = ex.decoding_checks()
    facts = visibility_facts(new, past=past, key_valid=t1["key_valid"])
    if facts["visible"] != t1["visible"]:
        raise AssertionError("练习 1 的表与逐行说明所数的表不同")
    n3 = ex.BUG_PAST + ex.BUG_NEW
    kept = [x for x, ok in zip(ex.SCORES, ex.VISIBLE) if ok]
    plain = row_text(att.softmax(kept), fmt.fmt)
    if plain != row_text([w for w, ok in zip(s2["weights"], ex.VISIBLE) if ok], fmt.fmt):
        raise AssertionError("加 mask 的权重应当等于只对可见分数做 softmax 的权重")
    fmt.holds(
        PAGE,
        {
            "两种写法都通过“不泄漏”检查；只有“与整段重算一致”一项能认出写法 B": c3["passed"]
            == ["不泄漏"]
            and c3["caught_by"] == ["与整段重算一致"]
        },
    )
    steps = [
        ("分数（给定）", ex.SCORES, fmt.short),
        ("加 mask", s2["masked"], fmt.fmt),
        ("减去最大值", s2["shifted"], fmt.fmt),
        ("exp", s2["exps"], fmt.fmt),
        ("÷ 指数之和（权重）", s2["weights"], fmt.fmt),
    ]
    return {
        "ex1_past": past,
        "ex1_new": new,
        "ex1_pad": pad_front,
        "ex1_keys": f"Key 0 到 Key {past + new - 1}",
        "ex1_pad_keys": keys_text(list(range(pad_front)))
        if pad_front
        else "没有 Key",  # front_padding's PAD
        "ex1_table": Table(
            fmt.keys(past + new),
            rows_of(t1["visible"], lambda i: f"行 {i}（绝对位置 {past + i}）", fmt.mark),
        ),
        "ex1_sentences": Md("\n".join(f"- {row_sentence(row, past)}" for row in facts["rows"])),
        "ex1_positions": "、".join(str(past + i) for i in range(new)),
        "ex2_scores": row_text(ex.SCORES),
        "ex2_visible": symbols(ex.VISIBLE),
        "ex2_steps": Table(
            fmt.keys(len(ex.SCORES), "步骤"),
            [[name] + [cell(x) for x in xs] for name, xs, cell in steps],
        ),
        "ex2_max": fmt.fmt(s2["max"]),
        "ex2_total": fmt.fmt(s2["total"]),
        "ex2_kept_n": count_words(len(kept)),
        "ex2_kept": row_text(kept),
        "ex2_plain": plain,
        "ex3_past": ex.BUG_PAST,
        "ex3_new": ex.BUG_NEW,
        "ex3_qk": fmt.vectors(ex.BUG_Q[:n3]),
        "ex3_v": column(ex.BUG_V[:n3]),
        "ex3_poison": fmt.short(ex.BUG_POISON),
        "ex3_last": n3 - 1,
        "ex3_tables": Table(
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
        ),
        "ex3_table": Table(
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
        ),
        "ex3_full": slashed(o[0] for o in c3["full"]),
        "ex3_lost": "；".join(
            f"行 {i} 少读 {keys_text(lost)}" if lost else f"行 {i} 一个也不少读"
            for i, lost in enumerate(c3["rows"][1]["lost"])
        ),
        "ex4_doctest": Md(fmt.doctest_block(ex.visible_counts)),
    }
