"""The mask page (book/ch02/mask.md): one function per cell of the page, each returning the facts it glues;
row facts in ``mask_facts``, F12 and its panel in ``mask_figure`` (re-exported: the page names them here)."""

from __future__ import annotations

import importlib
import math

from chapter import fmt
from chapter.conventions import (
    ALIGNMENT,
    FULLY_MASKED_HEADER,
    HEADER,
    conventions_rows,
    float_mask_sentence,
    fully_masked_rows,
    gpu_sentence,
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
from chapter.mask_figure import FIGURE_MAX_POSITIONS, N_POSITIONS, NEW, PAST, SCORE_ROW, cache_moral

att = importlib.import_module("02_attention")
ex = importlib.import_module("02_exercises_mask")

# -- the wording the data decides, all in one place ---------------------------------------------------
TEMPLATES = {
    "hand_approx": "（各项印出时已四舍五入，用印出的数相加，最后一位会差一点，所以写 ≈）",
    "rounding_total": "表中的权重四舍五入到小数点后 4 位，{n}相加是 {total}，而不是 1。",
    "rounding_output": "用这些印出的权重去乘 V 再相加，得到 {approx}，比精确的输出 {output} 差 {gap}；"
    "纸笔复算时多带几位小数，差就更小。",
    "next_layer": {
        True: "它与“输出置零”给出的真实输出逐个相同：下一层里真实查询给这一行的权重是 0，"
        "有限的数乘 0 仍是 0，它没有传开",
        False: "它与“输出置零”给出的真实输出不同：这一行的输出已经传进了下一层",
    },
    "big_inf": "{big} 比最小的有限数 {min} 还小，numpy.{dtype}({big}) 就是 −∞：大负数策略在这里退回成"
    "“−∞ 加普通 softmax”，位置 {row} 的权重{nan}。",
    "big_finite": "{big} 仍是有限数，位置 {row} 的权重{uniform}。",
    "nan": {True: "全是 NaN", False: "并不是 NaN"},
    "uniform": {True: "平均分配，与上表“填大负数”一行相同", False: "并不平均"},
    "doubled": "因果 mask 与 PAD mask 分别加到分数上时，被两条规则同时挡住的 {keys} 又成了 −∞，权重为 {weight}；",
}

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
FILL_DTYPES = ("float16", "float32", "float64")
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
    """一步一步, then 一行从头算到尾 (by default a row with two readable keys and a forbidden one)."""
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
    hand = (
        next((i for i, r in enumerate(table) if sum(r) >= 2 and not all(r)), n - 1)
        if row is None
        else row
    )
    if not isinstance(hand, int) or isinstance(hand, bool) or not 0 <= hand < n:
        raise ValueError(f"row 必须是 0 到 {n - 1} 之间的整数，收到 {row!r}")
    steps = ex.masked_softmax_steps(scores[hand], table[hand])  # exp(−∞) = 0
    weighted = [w * x[0] for w, x in zip(steps["weights"], v)]
    output = outputs[hand][0]
    sign = fmt.equals(sum(fmt.printed(fmt.fmt(x)) for x in weighted), output)
    shown = [
        fmt.printed(fmt.fmt(w)) for w in steps["weights"]
    ]  # the weights as the table prints them
    approx = sum(w * x[0] for w, x in zip(shown, v))
    r = {
        "n": count_words(len(v)),
        "total": fmt.fmt(sum(shown)),
        "approx": fmt.fmt(approx),
        "output": fmt.fmt(output),
        "gap": fmt.difference(abs(approx - output)),
    }
    forbidden = [j for j, ok in enumerate(table[hand]) if not ok]
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
        "hand_row": hand,
        "hand_forbidden": keys_text(forbidden) if forbidden else "没有 Key",
        "tbl_hand": Table(
            fmt.keys(len(k), "步骤 ＼ Key"),
            [
                [name] + [cell(x) for x in xs]
                for name, xs, cell in [
                    ("分数（取自分数表）", scores[hand], fmt.fmt),
                    ("加 mask", steps["masked"], fmt.fmt),
                    ("exp", steps["exps"], fmt.fmt),
                    ("权重 = exp ÷ 总和", steps["weights"], fmt.fmt),
                    ("V", [x[0] for x in v], fmt.short),
                    ("权重 × V", weighted, fmt.fmt),
                ]
            ],
        ),
        "hand_total": fmt.fmt(steps["total"]),
        "hand_sum": " + ".join(fmt.fmt(x) for x in weighted),
        "hand_output": fmt.fmt(output),
        "hand_equals": sign,
        "hand_equals_note": "" if sign == "=" else TEMPLATES["hand_approx"],
        "hand_rounding": (
            "" if r["total"] == fmt.fmt(1.0) else TEMPLATES["rounding_total"].format(**r)
        )
        + ("" if r["approx"] == r["output"] else TEMPLATES["rounding_output"].format(**r)),
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
    (_, open_out), (_, pad_out) = (
        att.attention(enc_q, enc_q, enc_v, causal=False, key_valid=p) for p in (None, pad)
    )
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
    return {
        "tbl_conventions": Table(HEADER, conventions_rows(seen)),
        "tbl_fully_masked": Table(FULLY_MASKED_HEADER, fully_masked_rows(seen)),
        "fully_masked_versions": versions_words(seen),
        "float_mask_sentence": Md(float_mask_sentence(seen)),
        "unavailable_sentence": Md(unavailable_sentence(seen)),
        "gpu_sentence": Md(gpu_sentence(seen)),
        "align_past": past,
        "align_new": new,
        "align_lost": sum(r and not t for rr, tr in zip(right, top_left) for r, t in zip(rr, tr)),
    }


def empty_rows_section(
    dtype: str = "float16", q=LEFT_Q, v=LEFT_V, valid=LEFT_VALID, big: float = BIG
):
    """A fully masked row four ways, then in numpy's ``dtype``: ``big``, ``finfo.min``, two masks added."""
    import numpy as np  # only the dtypes need numpy: Python's float is float64 alone

    q = att.as_matrix(q, "Q")
    v = att.as_matrix(v, "V")
    n = len(q)
    valid = att.flags(valid, "valid", len(q))
    big = att.real(big, "big")
    if dtype not in FILL_DTYPES:
        raise ValueError(f"dtype 必须是 {'、'.join(FILL_DTYPES)} 之一，收到 {dtype!r}")
    exponent = round(math.log10(-big)) if big < 0 and math.isfinite(big) else None
    if exponent is None or -big != 10.0**exponent:  # written the way code writes it: −1e9
        raise ValueError(f"big 必须是 −10 的整数次幂（如 −1e9），收到 {big!r}")
    big_text = f"{fmt.MINUS}1e{exponent}"
    facts = visibility_facts(n, key_valid=valid)
    empty = [r["row"] for r in facts["rows"] if r["empty"]]
    real = [i for i, ok in enumerate(valid) if ok]
    if not empty or not real:
        raise ValueError(
            "valid 必须让至少一行整行被屏蔽，又至少有一个真实位置：这一节比较的正是它们"
        )
    first = empty[0]
    big_name = f"填大负数 {big_text}"
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
    # In numpy's dtype: float16(−1e9) overflows to −∞ and (−∞) − (−∞) is NaN, the cases shown.
    t = np.dtype(dtype)
    fmin = np.finfo(dtype).min
    causal_ok = att.visibility(n, n)[first]
    both_ok = facts["visible"][first]
    scores = np.asarray(att.scaled_scores(q, q)[first], dtype=t)
    ok = np.asarray(both_ok)

    def fill(flags, value):
        return np.asarray([0.0 if f else value for f in flags]).astype(t)

    def number(x):
        return fmt.short(x) if not math.isfinite(x) or abs(x) < 1e6 else fmt.sci(x)

    with np.errstate(over="ignore", invalid="ignore"):

        def softmax_in(x):
            return [float(w) for w in np.exp(x - x.max()) / np.exp(x - x.max()).sum()]

        big_in = fill([False], big)[0]
        twice = float(fmin + fmin)  # numpy keeps the dtype of its operands
        cases = {
            f"禁止的格子换成 {big_text}": np.where(ok, scores, big_in),
            f"禁止的格子换成 finfo({dtype}).min": np.where(ok, scores, fmin),
            f"因果 mask 与 PAD mask 各取 finfo({dtype}).min，都加到分数上": scores
            + (fill(causal_ok, fmin) + fill(valid, fmin)),
        }
        weights = {name: softmax_in(x) for name, x in cases.items()}
        row_twice = softmax_in(
            np.full(n, fmin, dtype=t) + np.full(n, fmin, dtype=t)
        )  # every cell blocked twice
    d_big, d_min, d_two = weights.values()
    if not (
        all(math.isfinite(x) for x in d_min)
        and len(set(d_min)) == 1
        and math.isinf(twice)
        and all(math.isnan(x) for x in row_twice)
    ):
        raise AssertionError(
            "finfo.min 应当给出平均的权重，两个 finfo.min 相加应当是 −∞，整行如此时是 NaN"
        )
    doubled = [j for j, (a, b) in enumerate(zip(causal_ok, valid)) if not a and not b]
    min_text = number(float(fmin))
    is_inf = math.isinf(float(big_in))
    words = {
        "big": big_text,
        "min": min_text,
        "dtype": dtype,
        "row": first,
        "nan": TEMPLATES["nan"][all(math.isnan(x) for x in d_big)],
        "uniform": TEMPLATES["uniform"][len(set(d_big)) == 1],
    }

    def blocked(x):
        return sorted({float(c) for c, f in zip(x, both_ok) if not f}, reverse=True)

    return {
        "policy_empty_rows": positions_text(empty),
        "policy_big": big_text,
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
        "policy_pad_rows": positions_text([i for i, ok in enumerate(valid) if not ok]),
        "policy_real_rows": positions_text(real),
        "policy_big_next": TEMPLATES["next_layer"][nexts[big_name] == nexts[zero_name]],
        "dtype_name": dtype,
        "dtype_row": first,
        "dtype_min": min_text,
        "dtype_twice": number(twice),
        "dtype_big_is_inf": is_inf,
        "tbl_dtype": Table(
            ["写法", f"禁止的格子在 {dtype} 里是", f"位置 {first} 的权重（{dtype}）"],
            [
                [name, " 或 ".join(map(number, blocked(x))), slashed(weights[name])]
                for name, x in cases.items()
            ],
        ),
        "dtype_big_sentence": TEMPLATES["big_inf" if is_inf else "big_finite"].format(**words),
        "dtype_doubled": ""
        if not doubled
        else TEMPLATES["doubled"].format(
            keys=keys_text(doubled), weight=fmt.fmt(d_two[doubled[0]])
        ),
    }


def cache_section(past: int = PAST, new: int = NEW) -> dict:
    """用了缓存: F12's last step in one sentence; in depth, one token at a time (new = 1)."""
    att.check_count(
        past, "past", maximum=FIGURE_MAX_POSITIONS
    )  # with a cache: the section is about one
    att.check_count(new, "new", maximum=FIGURE_MAX_POSITIONS)
    worst = visibility_facts(1, past=past)
    wrong = [j for j in range(past + 1) if worst["row_index"][0][j]]
    return {
        "offset_past": past,
        "offset_new": new,
        "offset_moral": cache_moral(visibility_facts(new, past=past)),
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


def checks_section(past: int = PAST, new: int = NEW, poison: float = LEAK_POISON) -> dict:
    """No mask, the right offset and the row-index offset, each through 不泄漏 and 与整段重算一致."""
    att.check_count(past, "past")  # with a cache: without one the row-index offset is the right one
    # new ≥ 2: the check changes the V of the last position, which must come after the first new query.
    if att.check_count(new, "new", minimum=2) + past > len(LEAK_Q):
        raise ValueError(
            f"past + new 不能超过 {len(LEAK_Q)}（这一节只准备了这么多个向量），收到 {past + new}"
        )
    q = LEAK_Q[: past + new]
    v = [[float(j + 1)] for j in range(past + new)]
    v_future = v[:-1] + att.as_matrix([[poison]], "poison")
    first = past
    last = past + new - 1
    _, reference = att.attention(q, q, v)
    plans = {
        "不加 mask": att.visibility(new, past + new, causal=False),
        "正确偏移 past + i": att.visibility(new, past + new, past=past),
        "写错偏移（行号 i）": att.row_index_visibility(new, past + new),
    }
    rows = []
    passing = []
    firsts = []
    for plan, table in plans.items():
        out, out_future = (
            att.masked_attention(q[past:], q, values, table)[1] for values in (v, v_future)
        )
        leaks = out[0] != out_future[0]
        same = out == reference[past:]
        before = fmt.fmt(out[0][0])
        after = fmt.fmt(out_future[0][0])
        # The core's line shows position `first` only: it compares that row with the reference.
        firsts.append(
            f"“{plan}” {before} → {after}，泄漏"
            if leaks
            else f"“{plan}” {before}，不变"
            + ("" if out[0] == reference[first] else "，却与整段重算不同")
        )
        passing += [plan] if same and not leaks else []
        rows.append(
            [
                plan,
                before,
                after,
                "是（泄漏）" if leaks else "否",
                fmt.fmt(out[-1][0]),
                "一致" if same else "不一致",
            ]
        )
    return {
        "leak_n": len(q),
        "leak_qk": fmt.vectors(q),
        "leak_v": column(v),
        "leak_last": last,
        "leak_poison": fmt.short(v_future[-1][0]),
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
            rows,
        ),
        "ref_first_pos": first,
        "ref_last_pos": last,
        "ref_first": fmt.fmt(reference[first][0]),
        "ref_last": fmt.fmt(reference[last][0]),
        "checks_first_outputs": "；".join(
            firsts
        ),  # the core's line: position `first` before → after
        "checks_passing": quoted(passing),
    }


def observe_section(q=att.DEMO_Q, k=att.DEMO_K, v=att.DEMO_V, base=SCORE_ROW) -> dict:
    """Causal against no mask on the same Q, K, V; F12's row of scores through softmax and what it mixes."""
    w_c, out_c = att.attention(q, k, v)
    w_o, out_o = att.attention(q, k, v, causal=False)
    same = [i for i in range(len(out_c)) if out_c[i] == out_o[i]]
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
        "causal_same": positions_text(same) if same else "没有哪个位置",
        "gap_base": row_text(base),
        **{f"p{j}": fmt.fmt(x) for j, x in enumerate(p)},
        "mix_values": column(v),
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
    if not (c3["passed"] and c3["caught_by"]):
        raise AssertionError("练习 3 要有一项两种写法都通过的检查、一项认出写法 B 的检查")
    steps = [
        ("分数（给定）", ex.SCORES, fmt.short),
        ("加 mask", s2["masked"], fmt.fmt),
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
            ["写法", "新查询的输出", "与整段重算一致", "改动未来的 V 后"],
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
        "ex3_passed": quoted(c3["passed"]),
        "ex3_caught": quoted(c3["caught_by"]),
        "ex4_doctest": Md(fmt.doctest_block(ex.visible_counts)),
    }
