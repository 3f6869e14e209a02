"""The RoPE page's book side: one function per section of book/ch02/rope.md, each a page.Section.

The page types each example's inputs ({input} roles naming the constants of ``code/02_rope.py`` and
``code/02_exercises_rope.py``); a section reads those constants, glues what the run computes (and the
counts and listings derived from the inputs) and checks the facts of the page's fixed sentences with
``Section.holds``. Tables say per row what the data decide (``SAME``, ``VERDICT``).
"""

from __future__ import annotations

import importlib
import inspect
import math
from fractions import Fraction

from chapter import fmt
from chapter.page import Col, Section, figure, key, listing

att = importlib.import_module("02_attention")
rope = importlib.import_module("02_rope")
ex = importlib.import_module("02_exercises_rope")

PAGE = "RoPE 一页"
TOL = 1e-9  # two scores closer than this are "the same" in a sentence or a verdict
SAME = {True: "一致", False: "不一致"}  # a row's result against the reference
VERDICT = {True: "通过", False: "被认出"}  # the invariant check on a row
KEPT = {True: "不变", False: "变了"}  # the output after shifting every position


def vec(xs) -> str:
    """A computed vector, four decimals: ``(0.2500, −1.0000)``."""
    return fmt.vector(xs, cell=fmt.fmt)


def same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0.0, abs_tol=TOL)


def steady(xs) -> bool:
    """A column of scores that stays the same (to TOL) over groups of positions with one offset."""
    return max(xs) - min(xs) <= TOL


def places(positions) -> str:
    """Positions as an input box names them: ``0、1、2``, or ``0 至 4`` for a longer unbroken run."""
    ps = list(positions)
    run = len(ps) >= 4 and ps == list(range(ps[0], ps[0] + len(ps)))
    return f"{ps[0]} 至 {ps[-1]}" if run else listing(map(fmt.count, ps))


def base_text(base: float) -> str:
    """A base as model cards write it (``10,000``), a small one as typed (``64``)."""
    return fmt.grouped(base) if float(base).is_integer() else fmt.short(base)


def pair(m: int, n: int) -> str:
    """The positions of a query and a key, as a table heads a row: ``m = 3，n = 1``."""
    return f"m = {fmt.count(m)}，n = {fmt.count(n)}"


def score(q, k, m: int, n: int, base: float = rope.BASE, layout: str = "adjacent") -> float:
    """q at position m against k at position n: one RoPE score."""
    return rope.rope_scores([q], [k], [m], [n], base, layout=layout)[0][0]


def components(indices) -> str:
    """The components of a pair by number: ``(2, 3)``."""
    return f"({', '.join(map(str, indices))})"


def order_text(order) -> str:
    """A permutation as the page writes it: ``[0, 2, 1, 3]``."""
    return f"[{', '.join(map(fmt.count, order))}]"


# -- the page's sections, in its order -------------------------------------------------------------------
def d2() -> Section:
    """d = 2: q and k at two groups of positions with one offset (plotted); all scores at 0 … n − 1."""
    s = Section(PAGE, "d = 2：一次平面旋转")
    q = rope.DEMO_Q2
    k = rope.DEMO_K2
    m0, n0 = rope.D2_FIRST
    shift = rope.D2_SHIFT
    n = rope.TOEPLITZ_N
    groups = [(m0, n0), (m0 + shift, n0 + shift)]
    positions = list(range(n))
    table = rope.rope_scores([q] * n, [k] * n, positions, positions)
    spread = max(abs(table[i][j] - table[i + 1][j + 1]) for i in range(n - 1) for j in range(n - 1))
    twin = rope.rope_scores([q] * n, [q] * n, positions, positions)  # k replaced by q: collinear
    s.holds(
        diagonals_differ_by_rounding=spread < 1e-12,
        plus_and_minus_one_differ=not same(table[1][0], table[0][1]),
        q_k_not_collinear=not same(q[0] * k[1] - q[1] * k[0], 0.0),
        q_for_k_symmetric=all(same(twin[i][j], twin[j][i]) for i in range(n) for j in range(n)),
    )
    s.value("count", d2_d=len(q), d2_m0=m0, d2_n0=n0)
    s.value(d2_theta=rope.frequencies(len(q))[0])
    s.table(
        "tbl_d2",
        groups,
        Col("位置", lambda g: pair(*g), "text"),
        Col("Δ = m − n", lambda g: g[0] - g[1], "count"),
        Col("转后的 q", lambda g: vec(rope.rotate(q, g[0])), "text"),
        Col("转后的 k", lambda g: vec(rope.rotate(k, g[1])), "text"),
        Col("分数 q·k/√d", lambda g: score(q, k, *g)),
    )
    s.figure("fig_d2", d2_figure(q, k, groups))
    s.value(d2_plain=att.scaled_scores([q], [k])[0][0])
    s.text(toe_positions=places(positions))
    s.grid(
        "tbl_toeplitz",
        "q 的位置 ＼ k 的位置",
        table,
        [f"m = {m}" for m in positions],
        [f"n = {j}" for j in positions],
    )
    s.value("difference", toe_spread=spread)
    s.value(toe_ahead=table[1][0], toe_behind=table[0][1], toe_same=twin[1][0])
    return s


def d2_figure(q: list[float], k: list[float], groups: list[tuple[int, int]]):
    """Before and after the rotation, one panel per group of positions."""
    radius = max(math.hypot(*q), math.hypot(*k))
    circle = [
        (radius * math.cos(2 * math.pi * t / 120), radius * math.sin(2 * math.pi * t / 120))
        for t in range(121)
    ]
    with figure((7.2, 3.6), "rope") as (fig, frame):
        frame.remove()  # two panels with axes instead of the factory's bare frame
        axes = fig.subplots(1, 2)
        for ax, (m, n) in zip(axes, groups):
            ax.plot(*zip(*circle), color="0.8", lw=0.8)
            for v, pos, label, color in [(q, m, "q", "tab:blue"), (k, n, "k", "tab:orange")]:
                rotated = rope.rotate(v, pos)
                before = dict(arrowstyle="->", color=color, lw=1.2, ls="--", alpha=0.6)
                after = dict(arrowstyle="->", color=color, lw=2)
                ax.annotate("", xy=v, xytext=(0, 0), arrowprops=before)
                ax.annotate("", xy=rotated, xytext=(0, 0), arrowprops=after)
                ax.text(v[0] * 1.2, v[1] * 1.2, label, color=color, ha="center", va="center")
                ax.text(
                    rotated[0] * 1.3,
                    rotated[1] * 1.3,
                    f"R({pos}) {label}",
                    color=color,
                    ha="center",
                    va="center",
                )
            delta = fmt.count(m - n)
            title = f"查询在 m = {fmt.count(m)}，键在 n = {fmt.count(n)}，Δ = {delta}"
            ax.set_title(title, fontsize=10)
            ax.set(aspect="equal", xlim=(-1.9, 1.9), ylim=(-1.9, 1.9))
            ax.axhline(0, color="0.7", lw=0.5)
            ax.axvline(0, color="0.7", lw=0.5)
        fig.subplots_adjust(left=0.07, right=0.98, bottom=0.08, top=0.92, wspace=0.2)
    return fig


def d4() -> Section:
    """d = 4: each pair turns by its own angle, the length stays; d = 8: the frequencies and periods."""
    s = Section(PAGE, "d 更大时：分量两两成对，各转各的")
    x = rope.D4_X
    m = rope.D4_M
    d8 = rope.D8
    theta = rope.frequencies(len(x))
    out = rope.rotate(x, m)
    s.value("count", d4_d=len(x))
    s.text(d4_base=base_text(rope.BASE))
    s.table(
        "tbl_d4",
        list(enumerate(rope.pairs(len(x)))),
        Col("第 i 对", lambda r: r[0], "count"),
        Col("分量", lambda r: components(r[1]), "text"),
        Col("θ_i", lambda r: theta[r[0]]),
        Col("转角 m·θ_i", lambda r: m * theta[r[0]]),
        Col("转前", lambda r: fmt.vector([x[j] for j in r[1]]), "text"),
        Col("转后", lambda r: vec([out[j] for j in r[1]]), "text"),
    )
    s.value(
        d4_norm_before=math.hypot(*x),
        d4_angle0=m * theta[0],
        d4_angle1=m * theta[1],
        d4_norm_after=math.hypot(*out),
    )
    s.table(
        "tbl_d8",
        list(enumerate(zip(rope.pairs(d8), rope.frequencies(d8)))),
        Col("第 i 对", lambda r: r[0], "count"),
        Col("相邻成对的分量", lambda r: components(r[1][0]), "text"),
        Col(f"θ_i = base^(−2i/{d8})", lambda r: r[1][1]),
        Col("波长 2π/θ_i（位置数）", lambda r: 2 * math.pi / r[1][1], "multiple"),
    )
    return s


def layouts() -> Section:
    """Adjacent pairs, half pairs after the permutation, and the mixed layout, at one offset."""
    s = Section(PAGE, "两种配对：同一个旋转，只差一个置换")
    q = rope.DEMO_Q8
    k = rope.DEMO_K8
    offset = rope.LAYOUT_OFFSET
    d = len(q)
    order = rope.layout_permutation(d)
    qh = rope.permute(q, order)
    kh = rope.permute(k, order)
    groups = [(m, m - offset) for m in rope.LAYOUT_M]
    right = [score(q, k, m, n) for m, n in groups]
    half = [score(qh, kh, m, n, layout="half") for m, n in groups]
    mixed_q = [rope.mixed_rotate(q, m) for m, _ in groups]
    mixed = [
        att.scaled_scores([mq], [rope.mixed_rotate(k, n)])[0][0]
        for mq, (_, n) in zip(mixed_q, groups)
    ]
    mixed_norms = [math.hypot(*mq) for mq in mixed_q]
    s.holds(
        two_layouts_depend_on_the_offset_only=steady(right) and steady(half),
        mixed_moves_with_the_positions=not steady(mixed),
        mixed_changes_the_length=not any(same(x, math.hypot(*q)) for x in mixed_norms),
    )
    s.value("count", lay_d=d)
    s.text(lay_n=places(n for _, n in groups), lay_order=order_text(order))
    s.table(
        "tbl_pairs",
        list(enumerate(zip(rope.pairs(d), rope.pairs(d, "half")))),
        Col("第 i 对", lambda r: r[0], "count"),
        Col("相邻成对", lambda r: components(r[1][0]), "text"),
        Col("前后两半成对", lambda r: components(r[1][1]), "text"),
        Col("重排后落在", lambda r: components(map(order.index, r[1][0])), "text"),
    )
    s.table(
        "tbl_layouts",
        range(len(groups)),
        Col("位置", lambda i: pair(*groups[i]), "text"),
        Col("相邻成对", right.__getitem__),
        Col("前后两半成对（重排后）", half.__getitem__),
        Col("错配", mixed.__getitem__),
        Col("错配后 q 的长度", mixed_norms.__getitem__),
    )
    s.value(lay_norm=math.hypot(*q))
    return s


def weights() -> Section:
    """Moving a model between layouts: permute the columns of W_q, W_k inside each head's block, not at once."""
    s = Section(PAGE, "逐头重排权重")
    x = rope.W_X
    w_q = rope.W_Q
    w_k = rope.W_K
    n_heads = rope.W_HEADS
    width = len(w_q[0])
    d_head = width // n_heads
    ps = list(range(len(x)))

    def columns(w, order):  # q = x @ W: a column per component
        return [rope.permute(row, order) for row in w]

    def scores(wq, wk, layout):  # every head's score table, one after the other
        q = att.matmul(x, wq)
        k = att.matmul(x, wk)

        def block(m, h):
            return [row[h * d_head : (h + 1) * d_head] for row in m]

        return [
            row
            for h in range(n_heads)
            for row in rope.rope_scores(block(q, h), block(k, h), ps, ps, layout=layout)
        ]

    reference = scores(w_q, w_k, "adjacent")
    per_head = rope.head_permutation(n_heads, d_head)
    whole = rope.layout_permutation(width)
    plans = {
        "相邻成对，原权重（参照）": (w_q, w_k, "adjacent"),
        "前后两半，每个头的块里重排 W_q、W_k 的列": (
            columns(w_q, per_head),
            columns(w_k, per_head),
            "half",
        ),
        "前后两半，整个宽度一次重排": (columns(w_q, whole), columns(w_k, whole), "half"),
        "前后两半，权重不重排": (w_q, w_k, "half"),
    }
    gaps = {plan: att.max_abs_diff(scores(*args), reference) for plan, args in plans.items()}
    s.value("count", w_n=len(x), w_cols=width, w_dmodel=len(x[0]), w_dhead=d_head)
    s.text(
        w_positions=places(ps),
        w_q=fmt.vectors(zip(*w_q)),  # the columns of W_q, as the page lists them
        w_k=fmt.vectors(zip(*w_k)),
        w_order=order_text(per_head),
        w_whole=order_text(whole),
    )
    s.table(
        "tbl_weights",
        gaps.items(),
        Col("做法", lambda r: r[0], "text"),
        Col("与参照分数的最大差", lambda r: r[1], "difference"),
        Col("与参照", lambda r: SAME[r[1] < TOL], "text"),
    )
    return s


def v_rotated() -> Section:
    """Rotating V as well makes the output depend on the absolute position."""
    s = Section(PAGE, "V 不旋转，mask 也不变")
    seq = rope.V_SEQ
    v = rope.V_V
    start = rope.V_START
    shift = rope.V_SHIFT

    def last_output(first, rotate_v):
        ps = [first + i for i in range(len(seq))]
        values = rope.rotate_rows(v, ps) if rotate_v else v
        return rope.cached_step([], [], seq, seq, values, ps)[3][-1]

    plans = [
        (plan, last_output(start, rotate_v), last_output(start + shift, rotate_v))
        for plan, rotate_v in [("只转 Q、K", False), ("连 V 也转", True)]
    ]
    s.value("count", v_d=len(seq[0]), v_n=len(seq), v_vdim=len(v[0]))
    s.table(
        "tbl_v",
        plans,
        Col("做法", lambda r: r[0], "text"),
        Col(f"从位置 {fmt.count(start)} 开始", lambda r: vec(r[1]), "text"),
        Col(f"后移 {fmt.count(shift)} 个位置", lambda r: vec(r[2]), "text"),
        Col("整体后移后", lambda r: KEPT[att.max_abs_diff([r[1]], [r[2]]) < TOL], "text"),
    )
    return s


def row_index() -> Section:
    """New queries rotated at past + i (right) or at the row index i (wrong), against full recomputation."""
    s = Section(PAGE, "按行号旋转：可见性对了，分数错了")
    seq = rope.DEMO_SEQ
    v = rope.DEMO_V
    past = rope.PAST
    new = rope.NEW
    n = len(seq)
    mask = att.additive_mask(att.visibility(new, past + new, past=past))

    def masked(scores, m):
        return [[x + y for x, y in zip(r, mr)] for r, mr in zip(scores, m)]

    def step_scores(
        ps,
    ):  # the cached keys were rotated once, at their own positions; new rows at ps
        return masked(rope.rope_scores(seq[past:], seq, ps, list(range(past)) + ps), mask)

    full_scores = rope.rope_scores(seq, seq, list(range(n)), list(range(n)))
    variants = [
        (
            "整段重算（参照）",
            lambda i: f"绝对位置 {past + i}",
            masked(full_scores, att.additive_mask(att.visibility(n, n)))[past:],
        ),
        (
            "正确：转 past + i",
            lambda i: f"行 {i}（绝对位置 {past + i}）",
            step_scores([past + i for i in range(new)]),
        ),
        ("写错：转行号 i", lambda i: f"行 {i}（误当位置 {i}）", step_scores(list(range(new)))),
    ]
    rows = [(plan, label(i), row) for plan, label, table in variants for i, row in enumerate(table)]
    _, full = rope.full_attention(seq, seq, v)
    right = rope.decode(seq, seq, v, [past, new])
    wrong = rope.row_index_decode(seq, seq, v, [past, new])
    s.value("count", off_d=len(seq[0]), off_n=n)
    s.text(off_v=listing(fmt.short(r[0]) for r in v), off_cached=places(range(past)))
    s.table(
        "tbl_offset_scores",
        rows,
        Col("做法", lambda r: r[0], "text"),
        Col("查询", lambda r: r[1], "text"),
        *[Col(key(j), lambda r, j=j: r[2][j]) for j in range(past + new)],
    )
    s.table(
        "tbl_offset_out",
        range(past, past + new),
        Col("查询", lambda i: f"绝对位置 {i}", "text"),
        Col("整段重算", lambda i: full[i][0]),
        Col("正确：past + i", lambda i: right[i][0]),
        Col("写错：行号 i", lambda i: wrong[i][0]),
    )
    return s


def padding() -> Section:
    """Left padding: count the real tokens before a position, in the prefill and in the decoding alike."""
    s = Section(PAGE, "左侧补 PAD：位置编号是前面真实 token 的个数")
    seq = rope.DEMO_SEQ[:4]
    v = rope.DEMO_V[:4]
    pads = rope.PADS
    fill = rope.PAD_FILL
    n_pre = len(seq) - 1  # prefilled with the PAD; the last one is decoded alone
    valid = [False] * pads + [True] * n_pre
    counted = rope.padded_positions(valid)
    absolute = list(range(pads + n_pre))
    _, reference = rope.full_attention(seq, seq, v)

    def padded_decode(prefill, new_position):
        keys = [[fill] * len(seq[0])] * pads + seq[:n_pre]
        ck = rope.rotate_rows(keys, prefill)
        cv = [[fill] * len(v[0])] * pads + v[:n_pre]
        last = seq[n_pre]
        return rope.cached_step(
            ck, cv, [last], [last], [v[n_pre]], [new_position], key_valid=valid + [True]
        )[3][0][0]

    s.value("count", pad_d=len(seq[0]), pad_real=len(seq), pad_pre=n_pre)
    s.text(pad_seq=fmt.vectors(seq), pad_v=listing(fmt.short(r[0]) for r in v))
    s.value(pad_reference=reference[n_pre][0])
    every = valid + [True]  # the prefill and the decoded token: every position of the example
    s.table(
        "tbl_pad_positions",
        [
            ["内容"] + ["PAD" if not f else f"token {j - pads}" for j, f in enumerate(every)],
            ["位置编号（前面真实 token 的个数）"]
            + [fmt.count(p) for p in rope.padded_positions(every)],
        ],
        Col("绝对位置（含 PAD）", lambda r: r[0], "text"),
        *[Col(fmt.count(j), lambda r, j=j: r[j + 1], "text") for j in range(len(every))],
    )
    # The page's four plans, in its order: prefill and new token both counted, both absolute, then mixed.
    plans = [(counted, n_pre), (absolute, pads + n_pre), (counted, pads + n_pre), (absolute, n_pre)]
    for i, (prefill, at) in enumerate(plans):
        out = padded_decode(prefill, at)
        s.text(**{f"pad_{i}_pre": listing(map(fmt.count, prefill[pads:]))})
        s.value("count", **{f"pad_{i}_at": at})
        s.value(**{f"pad_{i}_out": out})
        s.text(**{f"pad_{i}_ok": SAME[same(out, reference[n_pre][0])]})
    return s


def invariant() -> Section:
    """The invariant check: chunked decoding against full recomputation, right and row-index rotation."""
    s = Section(PAGE, "如何判断是否做对")
    seq = rope.DEMO_SEQ
    v = rope.DEMO_V
    n = len(seq)
    _, full = rope.full_attention(seq, seq, v)
    checks = [
        (name, chunks, att.max_abs_diff(decode(seq, seq, v, chunks), full))
        for name, decode in [
            ("正确：转 past + i", rope.decode),
            ("写错：转行号 i", rope.row_index_decode),
        ]
        for chunks in ([1] * n, [rope.PAST, rope.NEW], [n])
    ]
    by_row = rope.row_index_decode(seq, seq, v, [1] * n)  # one at a time: every row index is 0
    s.table(
        "tbl_invariant",
        checks,
        Col("做法", lambda r: r[0], "text"),
        Col("逐段", lambda r: " + ".join(map(fmt.count, r[1])), "text"),
        Col("与整段重算的最大差", lambda r: r[2], "difference"),
        Col("检查结果", lambda r: VERDICT[r[2] < TOL], "text"),
    )
    s.value("sci", inv_tol=TOL)
    s.value(
        "difference",
        plain_gap=att.max_abs_diff(by_row, att.attention(seq, seq, v)[1]),
        row_step_gap=att.max_abs_diff(by_row, full),
    )
    return s


def long() -> Section:
    """One pair of vectors (all entries LONG_FILL) at growing offsets, for each published base (and the plot)."""
    s = Section(PAGE, "同一对向量，位置差越来越大")
    models = rope.MODEL_BASES
    offsets = rope.LONG_OFFSETS
    checkpoints = rope.CHECKPOINTS
    ones = [rope.LONG_FILL] * models[0]["head_dim"]

    def scores(at, base=rope.BASE):  # the key at position 0, the query ``at`` positions later
        return [row[0] for row in rope.rope_scores([ones] * len(at), [ones], list(at), [0], base)]

    outside = [m for m in checkpoints if not offsets[0] <= m <= offsets[-1]]
    s.holds(some_checkpoints_off_the_plot=bool(outside))
    s.value("count", lr_n_models=len(models), lr_d=len(ones), lr_min=offsets[0])
    s.text(
        lr_max=fmt.grouped(offsets[-1]),
        lr_checkpoints=listing(map(fmt.grouped, checkpoints)),
        lr_outside=listing(map(fmt.grouped, outside)),
        lr_models=listing(row["model"] for row in models),
        lr_bases=listing(fmt.grouped(row["base"]) for row in models),
    )
    s.table(
        "tbl_long",
        [(row["base"], scores(checkpoints, row["base"])) for row in models],
        Col("底数", lambda r: fmt.grouped(r[0]), "text"),
        *[Col(f"Δ = {fmt.grouped(m)}", lambda r, j=j: r[1][j]) for j, m in enumerate(checkpoints)],
    )
    s.value(lr_start=scores([0])[0])
    for j, row in enumerate(models):
        s.text(**{f"lr_base_{j}": fmt.grouped(row["base"]), f"lr_model_{j}": row["model"]})
        s.value("count", **{f"lr_dim_{j}": row["head_dim"]})
        s.value(
            "multiple", **{f"lr_wave_{j}": rope.slowest_wavelength(row["head_dim"], row["base"])}
        )
    s.figure("fig_long", long_figure(models, offsets, scores))
    return s


def long_figure(models, offsets, scores):
    """The score against the offset on a log axis, one curve per base."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    with figure((7.2, 3.6), "rope") as (fig, frame):
        frame.remove()  # an axes with ticks instead of the factory's bare frame
        ax = fig.subplots()
        for row, style in zip(models, ["-", "--", ":"]):
            label = f"{row['model']}：底数 {fmt.grouped(row['base'])}"
            ax.plot(offsets, scores(offsets, row["base"]), style, lw=1.4, label=label)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(
            FuncFormatter(lambda x, _: base_text(x))
        )  # 1, 10, not mathtext
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set(xlabel="位置差 Δ = m − n（对数刻度）", ylabel="分数 q·k / √d")
        ax.axhline(0, color="0.6", lw=0.6)
        ax.legend(frameon=False)
        fig.subplots_adjust(left=0.1, right=0.98, bottom=0.14, top=0.97)
    return fig


def run_output() -> Section:
    """What running 02_rope.py prints."""
    s = Section(PAGE, "运行结果示例")
    s.md(run_output=fmt.run_output("02_rope.py"))
    return s


# -- the exercises ----------------------------------------------------------------------------------------
def undo_calculations(x: list[float], position: int) -> list[tuple[str, fmt.Calculation]]:
    """Exercise 1's written-out steps (step, calculation) for ``x`` turned back from ``position``."""
    r = ex.undo_steps(x, position)
    a, b = x
    cos, sin = (
        f"({t})" if t.startswith(fmt.MINUS) else t for t in (fmt.fmt(r["cos"]), fmt.fmt(r["sin"]))
    )
    c = fmt.printed(cos)
    s_ = fmt.printed(sin)
    angle = fmt.printed(fmt.fmt(r["angle"]))
    return [
        (
            "转回去的角度",
            fmt.Calculation(
                f"−m·θ = −{fmt.count(position)} × {fmt.short(r['theta'])}",
                -position * r["theta"],
                r["angle"],
            ),
        ),
        ("cos(−m·θ)", fmt.Calculation(f"cos({fmt.fmt(r['angle'])})", math.cos(angle), r["cos"])),
        ("sin(−m·θ)", fmt.Calculation(f"sin({fmt.fmt(r['angle'])})", math.sin(angle), r["sin"])),
        (
            "a = a′·cos − b′·sin",
            fmt.Calculation(
                f"{fmt.short(a)} × {cos} − {fmt.short(b)} × {sin}",
                a * c - b * s_,
                r["original"][0],
            ),
        ),
        (
            "b = b′·cos + a′·sin",
            fmt.Calculation(
                f"{fmt.short(b)} × {cos} + {fmt.short(a)} × {sin}",
                b * c + a * s_,
                r["original"][1],
            ),
        ),
    ]


def undo_rows(x: list[float], position: int) -> list[list[str]]:
    """Exercise 1's steps (step, calculation, value) for ``x`` turned back from ``position``; a step says
    "= v" when its printed terms give its printed value, else "≈ v"."""
    r = ex.undo_steps(x, position)
    return [[step, c.terms, c.result] for step, c in undo_calculations(x, position)] + [
        [
            "长度（x′ → x）",
            "√(a′² + b′²) → √(a² + b²)",
            f"{fmt.fmt(r['norm_before'])} → {fmt.fmt(r['norm_after'])}",
        ],
    ]


def undo_exercise() -> Section:
    s = Section(PAGE, "练习 把转好的向量转回去")
    x = ex.UNDO_X
    r = ex.undo_steps(x, ex.UNDO_POSITION)
    s.holds(
        turned_again_gives_x=att.max_abs_diff([r["back"]], [list(x)]) < TOL,
        written_steps_add_up=all(c.adds_up for _, c in undo_calculations(x, ex.UNDO_POSITION)),
    )
    s.value("count", rx1_d=len(x))
    s.value(rx1_theta=r["theta"])
    s.table(
        "rx1_steps",
        undo_rows(x, ex.UNDO_POSITION),
        Col("步骤", lambda row: row[0], "text"),
        Col("算式", lambda row: row[1], "text"),
        Col("值", lambda row: row[2], "text"),
    )
    s.text(rx1_back=vec(r["back"]))
    return s


def frequency_exercise() -> Section:
    s = Section(PAGE, "练习 换一个头维度和底数")
    t = ex.frequency_table()

    def exponent(i):  # −2i/d
        return fmt.MINUS + str(Fraction(2 * i, ex.FREQ_D)) if i else "0"

    s.table(
        "rx2_table",
        list(enumerate(t["rows"])),
        Col("第 i 对", lambda r: r[0], "count"),
        Col("相邻成对的分量", lambda r: components(r[1]["pair"]), "text"),
        Col("指数 −2i/d", lambda r: exponent(r[0]), "text"),
        Col("θ_i = base^(−2i/d)", lambda r: r[1]["theta"]),
        Col("转角 m·θ_i", lambda r: r[1]["angle"]),
        Col("波长 2π/θ_i（位置数）", lambda r: r[1]["wavelength"], "multiple"),
    )
    s.value("count", rx2_last=len(t["rows"]) - 1)
    s.value("multiple", rx2_slowest=t["slowest"])
    return s


def shift_exercise() -> Section:
    s = Section(PAGE, "练习 位置同时后移，分数不变")
    s3 = ex.shift_scores()
    g0, g1 = s3["groups"]
    s.holds(
        two_groups_same_score=same(g0["score"], g1["score"]),
        rotation_changes_the_score=not same(s3["plain"], g0["score"]),
    )

    def angles(xs):
        return listing(map(fmt.fmt, xs))

    cells = [
        ("q 各对的转角", "q_angles", angles),
        ("k 各对的转角", "k_angles", angles),
        ("转后的 q", "q", vec),
        ("转后的 k", "k", vec),
        ("点积 q·k", "dot", fmt.fmt),
        ("分数 q·k/√d", "score", fmt.fmt),
    ]
    s.value("count", rx3_d=s3["d"])
    s.text(rx3_shifted=pair(*g1["positions"]))
    s.table(
        "rx3_table",
        cells,
        Col("", lambda c: c[0], "text"),
        Col(pair(*g0["positions"]), lambda c: c[2](g0[c[1]]), "text"),
        Col(pair(*g1["positions"]), lambda c: c[2](g1[c[1]]), "text"),
    )
    s.value(rx3_plain=s3["plain"])
    return s


def offset_exercise() -> Section:
    s = Section(PAGE, "练习 只转 k：分数里只有位置差")
    s4 = ex.offset_score()
    q = ex.PAIR_Q
    k = ex.PAIR_K
    s.holds(only_k_turned_gives_the_score=same(s4["score"], s4["both"]))
    s.value("count", rx4_d=len(q), rx4_offset=s4["offset"])
    thetas = rope.frequencies(len(k), ex.PAIR_BASE)
    s.table(
        "rx4_table",
        range(len(thetas)),
        Col("对", lambda i: f"第 {i} 对", "text"),
        Col("频率 θ_i", lambda i: thetas[i], "short"),
        Col("转角 −Δ·θ_i", lambda i: s4["angles"][i]),
        Col("k 的这一对", lambda i: fmt.vector(k[2 * i : 2 * i + 2]), "text"),
        Col("转后", lambda i: vec(s4["k_turned"][2 * i : 2 * i + 2]), "text"),
        Col("q 的这一对", lambda i: fmt.vector(q[2 * i : 2 * i + 2]), "text"),
        Col("这一对的点积", lambda i: s4["terms"][i]),
    )
    s.value(rx4_sum=sum(s4["terms"]), rx4_score=s4["score"])
    return s


def code_exercise() -> Section:
    """The doctest the reader's function must pass, and its default base."""
    s = Section(PAGE, "练习 写一个函数算出各对的转角")
    s.md(rx5_doctest=fmt.doctest_block(ex.rotation_angles))
    default = inspect.signature(ex.rotation_angles).parameters["base"].default
    s.text(rx5_base=base_text(default))
    return s


def exercises() -> list[Section]:
    return [
        undo_exercise(),
        frequency_exercise(),
        shift_exercise(),
        offset_exercise(),
        code_exercise(),
    ]
