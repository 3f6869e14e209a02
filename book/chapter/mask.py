"""The mask page (book/ch02/mask.md): one function per section, each returning what the page glues.

The mechanism lives in ``code/02_attention.py`` and ``code/02_exercises_mask.py``; the facts of a
visibility table and their sentences in ``chapter.mask_facts``; F12 and its explore panel in
``chapter.mask_figure`` (re-exported here: the page names ``chapter.mask:f12_frames``); the library
observations in ``chapter.conventions``. Values are strings, integers, ``Md`` and ``Table``; every
number is written by ``chapter.fmt``. Neither MyST-NB nor IPython is imported at module level.

>>> keys_text([1, 2, 3]), row_sentence(visibility_facts(2, past=3)["rows"][0], 3)
('Key 1–3', '行 0（绝对位置 3）可读 Key 0–3；Key 4 在它之后。')
"""

from __future__ import annotations

import importlib
import math

from chapter import fmt
from chapter.conventions import (FULLY_MASKED_HEADER, HEADER, conventions_rows, float_mask_sentence,
                                 fully_masked_rows, gpu_sentence, observed, unavailable_sentence,
                                 versions_words)
from chapter.fmt import Md, Table, glue_all  # noqa: F401 - glue_all is what the page's cells call
# The facts, sentences and figure live in their own modules; the page and its tests reach them here.
from chapter.mask_facts import *  # noqa: F401,F403
from chapter.mask_figure import *  # noqa: F401,F403
from chapter.mask_facts import count_words, keys_text, pad_change_sentence, positions_text, rounding_note
from chapter.mask_figure import FIGURE_MAX_POSITIONS, NEW, PAST, alignment_facts, cache_moral

att = importlib.import_module("02_attention")
ex = importlib.import_module("02_exercises_mask")


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
