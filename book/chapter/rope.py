"""The rotary position page (book/ch02/rope.md): what each example glues, from ``code/02_rope.py``."""

from __future__ import annotations

import functools
import importlib
import inspect
import math
from fractions import Fraction

from chapter import fmt
from chapter.fmt import Md, Table, glue_all  # noqa: F401 (the page calls page.glue_all)

att = importlib.import_module("02_attention")
PAGE = "RoPE 一页"  # how fmt.holds names this page when a fixed sentence fails
rope = importlib.import_module("02_rope")
ex = importlib.import_module("02_exercises_rope")

TOL = 1e-9  # two scores closer than this are "the same" in a sentence or a verdict
SAME = "一致"
DIFFERENT = "不一致"
PASSED = "通过"
CAUGHT = "被认出"

vec = functools.partial(fmt.vector, cell=fmt.fmt)  # a computed vector, four decimals
same = functools.partial(math.isclose, rel_tol=0.0, abs_tol=TOL)


def places(positions) -> str:
    """Positions as an input box names them: ``0、1、2``, or ``0 至 4`` for a longer unbroken run."""
    ps = list(positions)
    run = len(ps) >= 4 and ps == list(range(ps[0], ps[0] + len(ps)))
    return f"{ps[0]} 至 {ps[-1]}" if run else "、".join(map(fmt.count, ps))


def base_text(
    base: float,
) -> str:  # a base as model cards write it (10,000), a small one as typed (64)
    return fmt.grouped(base) if float(base).is_integer() else fmt.short(base)


def pair(m: int, n: int) -> str:  # the positions of a query and a key, as a table heads a row
    return f"m = {fmt.count(m)}，n = {fmt.count(n)}"


def steady(xs) -> bool:
    """A column of scores that stays the same (to TOL) over groups of positions with one offset."""
    return max(xs) - min(xs) <= TOL


def d2_example(
    q: list[float] = rope.DEMO_Q2,
    k: list[float] = rope.DEMO_K2,
    first=rope.D2_FIRST,
    shift: int = rope.D2_SHIFT,
    n: int = rope.TOEPLITZ_N,
    figure: bool = True,
) -> dict:
    """d = 2: q and k at two groups of positions with one offset (plotted); all scores at 0 … n − 1."""
    m0, n0 = first
    groups = [first, (first[0] + shift, first[1] + shift)]
    rows = [
        [
            pair(m, n),
            fmt.count(m - n),
            vec(rope.rotate(q, m)),
            vec(rope.rotate(k, n)),
            fmt.fmt(rope.rope_scores([q], [k], [m], [n])[0][0]),
        ]
        for m, n in groups
    ]
    positions = list(range(n))
    table = rope.rope_scores([q] * n, [k] * n, positions, positions)
    spread = max(abs(table[i][j] - table[i + 1][j + 1]) for i in range(n - 1) for j in range(n - 1))
    twin = rope.rope_scores([q] * n, [q] * n, positions, positions)  # k replaced by q: collinear
    fmt.holds(
        PAGE,
        {
            "d = 2 的分数表沿对角线只差浮点舍入": spread < 1e-12,
            "位置差为 +1 与 −1 的分数不同": not same(table[1][0], table[0][1]),
            "q 与 k 不共线": not same(q[0] * k[1] - q[1] * k[0], 0.0),
            "把 k 换成 q，表是对称的": all(
                same(twin[i][j], twin[j][i]) for i in range(n) for j in range(n)
            ),
        },
    )
    values = {
        "d2_d": len(q),
        "d2_theta": fmt.fmt(rope.frequencies(len(q))[0]),
        "d2_q": fmt.vector(q),
        "d2_k": fmt.vector(k),
        "d2_m0": m0,
        "d2_n0": n0,
        "d2_shift": shift,
        "tbl_d2": Table(["位置", "Δ = m − n", "转后的 q", "转后的 k", "分数 q·k/√d"], rows),
        "d2_plain": fmt.fmt(att.scaled_scores([q], [k])[0][0]),
        "toe_positions": places(positions),
        "tbl_toeplitz": Table(
            ["q 的位置 ＼ k 的位置"] + [f"n = {j}" for j in positions],
            [[f"m = {m}"] + [fmt.fmt(x) for x in row] for m, row in zip(positions, table)],
        ),
        "toe_spread": fmt.difference(spread),
        "toe_ahead": fmt.fmt(table[1][0]),
        "toe_behind": fmt.fmt(table[0][1]),
        "toe_same": fmt.fmt(twin[1][0]),
    }
    if figure:
        values["fig_d2"] = d2_figure(q, k, groups)
    return values


def _figure():  # Chinese labels (Noto Sans CJK SC after DejaVu Sans); fixed SVG ids keep the HTML the same
    import matplotlib
    from matplotlib.figure import Figure  # a Figure, not pyplot: no global list of figures to close

    matplotlib.rcParams.update(
        {
            "svg.hashsalt": "rope",
            "font.size": 10,
            "axes.titlesize": 10,
            "font.family": ["DejaVu Sans", "Noto Sans CJK SC"],
        }
    )
    return Figure(figsize=(7.2, 3.6))


def d2_figure(
    q: list[float], k: list[float], groups: list[tuple[int, int]]
):  # before/after, per group
    fig = _figure()
    axes = fig.subplots(1, 2)
    radius = max(math.hypot(*q), math.hypot(*k))
    circle = [
        (radius * math.cos(2 * math.pi * t / 120), radius * math.sin(2 * math.pi * t / 120))
        for t in range(121)
    ]
    for ax, (m, n) in zip(axes, groups):
        ax.plot(*zip(*circle), color="0.8", lw=0.8)
        for v, pos, label, color in [(q, m, "q", "tab:blue"), (k, n, "k", "tab:orange")]:
            rotated = rope.rotate(v, pos)
            ax.annotate(
                "",
                xy=v,
                xytext=(0, 0),
                arrowprops=dict(arrowstyle="->", color=color, lw=1.2, ls="--", alpha=0.6),
            )
            ax.annotate(
                "", xy=rotated, xytext=(0, 0), arrowprops=dict(arrowstyle="->", color=color, lw=2)
            )
            ax.text(v[0] * 1.2, v[1] * 1.2, label, color=color, ha="center", va="center")
            ax.text(
                rotated[0] * 1.3,
                rotated[1] * 1.3,
                f"R({pos}) {label}",
                color=color,
                ha="center",
                va="center",
            )
        ax.set_title(f"查询在 m = {fmt.count(m)}，键在 n = {fmt.count(n)}，Δ = {fmt.count(m - n)}")
        ax.set(aspect="equal", xlim=(-1.9, 1.9), ylim=(-1.9, 1.9))
        ax.axhline(0, color="0.7", lw=0.5)
        ax.axvline(0, color="0.7", lw=0.5)
    fig.subplots_adjust(left=7 / 100, right=98 / 100, bottom=8 / 100, top=92 / 100, wspace=0.2)
    return fig


def d4_example(x: list[float] = rope.D4_X, m: int = rope.D4_M, d8: int = rope.D8) -> dict:
    """d = 4: each pair turns by its own angle, the length stays; d = 8: the frequencies and periods."""
    theta = rope.frequencies(len(x))
    out = rope.rotate(x, m)
    rows8 = [
        [fmt.count(i), f"({a}, {b})", fmt.fmt(t), fmt.multiple(2 * math.pi / t)]
        for i, ((a, b), t) in enumerate(zip(rope.pairs(d8), rope.frequencies(d8)))
    ]
    rows = [
        [
            fmt.count(i),
            f"({a}, {b})",
            fmt.fmt(theta[i]),
            fmt.fmt(m * theta[i]),
            fmt.vector([x[a], x[b]]),
            vec([out[a], out[b]]),
        ]
        for i, (a, b) in enumerate(rope.pairs(len(x)))
    ]
    return {
        "d4_d": len(x),
        "d4_base": base_text(rope.BASE),
        "d4_x": fmt.vector(x),
        "d4_m": m,
        "tbl_d4": Table(["第 i 对", "分量", "θ_i", "转角 m·θ_i", "转前", "转后"], rows),
        "d4_norm_before": fmt.fmt(math.hypot(*x)),
        "d4_angle0": fmt.fmt(m * theta[0]),
        "d4_angle1": fmt.fmt(m * theta[1]),
        "d4_norm_after": fmt.fmt(math.hypot(*out)),
        "d8_d": d8,
        "tbl_d8": Table(
            ["第 i 对", "相邻成对的分量", f"θ_i = base^(−2i/{d8})", "波长 2π/θ_i（位置数）"], rows8
        ),
    }


def layouts_example(
    q: list[float] = rope.DEMO_Q8,
    k: list[float] = rope.DEMO_K8,
    offset: int = rope.LAYOUT_OFFSET,
    m_list: list[int] = rope.LAYOUT_M,
) -> dict:
    """Adjacent pairs, half pairs after the permutation, and the mixed layout, at one offset."""
    d = len(q)
    order = rope.layout_permutation(len(q))
    pairs_rows = [
        [fmt.count(i), f"({a}, {b})", f"({c}, {e})", f"({order.index(a)}, {order.index(b)})"]
        for i, ((a, b), (c, e)) in enumerate(zip(rope.pairs(d), rope.pairs(d, "half")))
    ]
    qh = rope.permute(q, order)
    kh = rope.permute(k, order)
    found = [
        (
            rope.rope_scores([q], [k], [m], [n])[0][0],
            rope.rope_scores([qh], [kh], [m], [n], layout="half")[0][0],
            att.scaled_scores([rope.mixed_rotate(q, m)], [rope.mixed_rotate(k, n)])[0][0],
            math.hypot(*rope.mixed_rotate(q, m)),
        )
        for m, n in ((m, m - offset) for m in m_list)
    ]
    *scores, mixed_norms = zip(
        *found
    )  # each column of the table, then the mixed q's length at each m
    right, half, mixed = scores
    fmt.holds(
        PAGE,
        {
            "“相邻成对”“前后两半成对（重排后）”两列只依赖位置差": steady(right) and steady(half),
            "“错配”一列随位置变化": not steady(mixed),
            "错配之后 q 的长度在每组位置上都变了": not any(
                same(x, math.hypot(*q)) for x in mixed_norms
            ),
        },
    )
    rows = [[pair(m, m - offset)] + [fmt.fmt(x) for x in row] for m, row in zip(m_list, found)]
    return {
        "lay_d": d,
        "lay_m": places(m_list),
        "lay_n": places(m - offset for m in m_list),
        "lay_q": fmt.vector(q),
        "lay_k": fmt.vector(k),
        "lay_offset": offset,
        "lay_order": "[" + ", ".join(fmt.count(j) for j in order) + "]",
        "tbl_pairs": Table(["第 i 对", "相邻成对", "前后两半成对", "重排后落在"], pairs_rows),
        "tbl_layouts": Table(
            ["位置", "相邻成对", "前后两半成对（重排后）", "错配", "错配后 q 的长度"], rows
        ),
        "lay_norm": fmt.fmt(math.hypot(*q)),
    }


def weights_example(
    x: list[list[float]] = rope.W_X, w_q=rope.W_Q, w_k=rope.W_K, n_heads: int = rope.W_HEADS
) -> dict:
    """Moving a model between layouts: permute the columns of W_q, W_k inside each head's block, not at once."""
    width = len(w_q[0])
    d_head = width // n_heads
    ps = list(range(len(x)))

    def columns(w, order):
        # (q = x @ W: a column per component)
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
    return {
        "w_n": len(x),
        "w_positions": places(ps),
        "w_cols": width,
        "w_dmodel": len(x[0]),
        "w_heads": n_heads,
        "w_dhead": d_head,
        "w_x": fmt.vectors(x),
        "w_q": fmt.vectors(zip(*w_q)),
        "w_k": fmt.vectors(zip(*w_k)),
        "w_order": f"[{', '.join(map(fmt.count, per_head))}]",
        "w_whole": f"[{', '.join(map(fmt.count, whole))}]",
        "tbl_weights": Table(
            ["做法", "与参照分数的最大差", "与参照"],
            [[plan, fmt.difference(g), SAME if g < TOL else DIFFERENT] for plan, g in gaps.items()],
        ),
    }


def v_example(
    seq=rope.V_SEQ, v=rope.V_V, start: int = rope.V_START, shift: int = rope.V_SHIFT
) -> dict:
    """Rotating V as well makes the output depend on the absolute position."""

    def last_output(first, rotate_v):
        ps = [first + i for i in range(len(seq))]
        values = rope.rotate_rows(v, ps) if rotate_v else v
        return rope.cached_step([], [], seq, seq, values, ps)[3][-1]

    rows = [
        [plan, vec(a), vec(b), "不变" if att.max_abs_diff([a], [b]) < TOL else "变了"]
        for plan, rotate_v in [("只转 Q、K", False), ("连 V 也转", True)]
        for a, b in [(last_output(start, rotate_v), last_output(start + shift, rotate_v))]
    ]
    return {
        "v_d": len(seq[0]),
        "v_n": len(seq),
        "v_vdim": len(v[0]),
        "v_start": start,
        "v_seq": fmt.vectors(seq),
        "v_v": fmt.vectors(v),
        "v_shift": shift,
        "tbl_v": Table(
            [
                "做法",
                f"从位置 {fmt.count(start)} 开始",
                f"后移 {fmt.count(shift)} 个位置",
                "整体后移后",
            ],
            rows,
        ),
    }


def cache_example(
    seq=rope.DEMO_SEQ, v=rope.DEMO_V, past: int = rope.PAST, new: int = rope.NEW
) -> dict:
    """New queries rotated at past + i (right) or at the row index i (wrong), against full recomputation."""
    n = len(seq)
    mask = att.additive_mask(att.visibility(new, past + new, past=past))

    def masked(scores, m):
        return [[x + y for x, y in zip(r, mr)] for r, mr in zip(scores, m)]

    def step_scores(
        ps,
    ):  # the cached keys were rotated once, at their own positions; the new rows at ps
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
    rows = [
        [plan, label(i)] + [fmt.fmt(x) for x in row]
        for plan, label, table in variants
        for i, row in enumerate(table)
    ]
    _, full = rope.full_attention(seq, seq, v)
    right = rope.decode(seq, seq, v, [past, new])
    wrong = rope.row_index_decode(seq, seq, v, [past, new])
    out_rows = [
        [f"绝对位置 {past + i}"] + [fmt.fmt(o[past + i][0]) for o in (full, right, wrong)]
        for i in range(new)
    ]
    checks = [
        [name, " + ".join(map(fmt.count, chunks)), fmt.difference(g), PASSED if g < TOL else CAUGHT]
        for name, decode in [
            ("正确：转 past + i", rope.decode),
            ("写错：转行号 i", rope.row_index_decode),
        ]
        for chunks in ([1] * n, [past, new], [n])
        for g in [att.max_abs_diff(decode(seq, seq, v, chunks), full)]
    ]
    by_row = rope.row_index_decode(seq, seq, v, [1] * n)  # one at a time: every row index is 0
    return {
        "tbl_invariant": Table(["做法", "逐段", "与整段重算的最大差", "检查结果"], checks),
        "inv_tol": fmt.sci(TOL),
        "plain_gap": fmt.difference(att.max_abs_diff(by_row, att.attention(seq, seq, v)[1])),
        "row_step_gap": fmt.difference(att.max_abs_diff(by_row, full)),
        "off_d": len(seq[0]),
        "off_n": n,
        "off_seq": fmt.vectors(seq),
        "off_v": "、".join(fmt.short(r[0]) for r in v),
        "off_past": past,
        "off_new": new,
        "off_cached": places(range(past)),
        "tbl_offset_scores": Table(
            ["做法", "查询"] + [f"Key {j}" for j in range(past + new)], rows
        ),
        "tbl_offset_out": Table(["查询", "整段重算", "正确：past + i", "写错：行号 i"], out_rows),
    }


def padding_example(
    seq=rope.DEMO_SEQ[:4], v=rope.DEMO_V[:4], pads: int = rope.PADS, fill: float = rope.PAD_FILL
) -> dict:
    """Left padding: count the real tokens before a position, in the prefill and in the decoding alike."""
    n_pre = len(seq) - 1  # prefilled with the PAD; the last one is decoded alone
    valid = [False] * pads + [True] * n_pre
    counted = rope.padded_positions(valid)
    absolute = list(range(pads + n_pre))  # rotation vs absolute positions
    _, reference = rope.full_attention(seq, seq, v)

    def padded_decode(prefill, new_position):
        keys = [[fill] * len(seq[0])] * pads + seq[:n_pre]
        ck = rope.rotate_rows(keys, prefill)
        cv = [[fill] * len(v[0])] * pads + v[:n_pre]
        last = seq[n_pre]
        return rope.cached_step(
            ck, cv, [last], [last], [v[n_pre]], [new_position], key_valid=valid + [True]
        )[3][0][0]

    values = {
        "pad_d": len(seq[0]),
        "pad_real": len(seq),
        "pad_pre": n_pre,
        "pad_fill": fmt.short(fill),
        "pad_seq": fmt.vectors(seq),
        "pad_v": "、".join(fmt.short(r[0]) for r in v),
        "pad_n": pads,
        "tbl_pad_positions": Table(  # the prefill and the decoded token: every position of the example
            ["绝对位置（含 PAD）"] + [fmt.count(j) for j in range(len(valid) + 1)],
            [
                ["内容"]
                + ["PAD" if not f else f"token {j - pads}" for j, f in enumerate(valid + [True])],
                ["位置编号（前面真实 token 的个数）"]
                + [fmt.count(p) for p in rope.padded_positions(valid + [True])],
            ],
        ),
        "pad_reference": fmt.fmt(reference[n_pre][0]),
    }
    # The page's four plans, in its order: prefill and new token both counted, both absolute, then mixed.
    plans = [(counted, n_pre), (absolute, pads + n_pre), (counted, pads + n_pre), (absolute, n_pre)]
    for i, (prefill, at) in enumerate(plans):
        out = padded_decode(prefill, at)
        ok = SAME if same(out, reference[n_pre][0]) else DIFFERENT
        values |= {
            f"pad_{i}_pre": "、".join(map(fmt.count, prefill[pads:])),
            f"pad_{i}_at": fmt.count(at),
            f"pad_{i}_out": fmt.fmt(out),
            f"pad_{i}_ok": ok,
        }
    return values


def long_example(
    fill: float = rope.LONG_FILL,
    offsets: list[int] = rope.LONG_OFFSETS,
    checkpoints: list[int] = rope.CHECKPOINTS,
    figure: bool = True,
) -> dict:
    """One pair of vectors (all entries ``fill``) at growing offsets, for each published base (and the plot)."""
    models = rope.MODEL_BASES
    ones = [fill] * models[0]["head_dim"]

    def scores(at, base=rope.BASE):  # the key at position 0, the query ``at`` positions later
        return [row[0] for row in rope.rope_scores([ones] * len(at), [ones], list(at), [0], base)]

    outside = [m for m in checkpoints if not offsets[0] <= m <= offsets[-1]]
    fmt.holds(PAGE, {"表里有图的横轴画不到的位置差": bool(outside)})
    values = {
        "lr_fill": fmt.short(fill),
        "lr_n_models": len(models),
        "lr_d": len(ones),
        "lr_max": fmt.grouped(offsets[-1]),
        "lr_min": offsets[0],
        "lr_checkpoints": "、".join(fmt.grouped(m) for m in checkpoints),
        "lr_outside": "、".join(map(fmt.grouped, outside)),
        "tbl_long": Table(
            ["底数"] + [f"Δ = {fmt.grouped(m)}" for m in checkpoints],
            [
                [fmt.grouped(row["base"])] + [fmt.fmt(s) for s in scores(checkpoints, row["base"])]
                for row in models
            ],
        ),
        "lr_start": fmt.fmt(scores([0])[0]),
        "lr_models": "、".join(row["model"] for row in models),
        "lr_bases": "、".join(fmt.grouped(row["base"]) for row in models),
    }
    for j, row in enumerate(models):
        wave = rope.slowest_wavelength(row["head_dim"], row["base"])
        values |= {
            f"lr_base_{j}": fmt.grouped(row["base"]),
            f"lr_wave_{j}": fmt.multiple(wave),
            f"lr_dim_{j}": row["head_dim"],
            f"lr_model_{j}": row["model"],
        }
    if figure:  # the score against the offset on a log axis, one curve per base
        from matplotlib.ticker import FuncFormatter, NullFormatter

        values["fig_long"] = fig = _figure()
        ax = fig.subplots()
        for row, style in zip(models, ["-", "--", ":"]):
            ax.plot(
                offsets,
                scores(offsets, row["base"]),
                style,
                lw=1.4,
                label=f"{row['model']}：底数 {fmt.grouped(row['base'])}",
            )
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(
            FuncFormatter(lambda x, _: base_text(x))
        )  # 1, 10, 100, not mathtext
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set(xlabel="位置差 Δ = m − n（对数刻度）", ylabel="分数 q·k / √d")
        ax.axhline(0, color="0.6", lw=0.6)
        ax.legend(frameon=False)
        fig.subplots_adjust(left=0.1, right=98 / 100, bottom=14 / 100, top=97 / 100)
    return values


def exercises(x: list[float] = ex.UNDO_X, position: int = ex.UNDO_POSITION) -> dict:
    """Every exercise's values (1: undoing the rotation of ``x``), from the reference solutions; a step of
    exercise 1 says "= v" when its printed terms give its printed value, else "≈ v"."""
    r = ex.undo_steps(x, position)
    a, b = x
    cos, sin = (
        f"({t})" if t.startswith(fmt.MINUS) else t for t in (fmt.fmt(r["cos"]), fmt.fmt(r["sin"]))
    )
    c = fmt.printed(cos)
    s_ = fmt.printed(sin)
    angle = fmt.printed(fmt.fmt(r["angle"]))

    def written(from_printed, exact):
        return f"{fmt.equals(from_printed, exact)} {fmt.fmt(exact)}"

    steps = [
        [
            "转回去的角度",
            f"−m·θ = −{fmt.count(position)} × {fmt.short(r['theta'])}",
            written(-position * r["theta"], r["angle"]),
        ],
        ["cos(−m·θ)", f"cos({fmt.fmt(r['angle'])})", written(math.cos(angle), r["cos"])],
        ["sin(−m·θ)", f"sin({fmt.fmt(r['angle'])})", written(math.sin(angle), r["sin"])],
        [
            "a = a′·cos − b′·sin",
            f"{fmt.short(a)} × {cos} − {fmt.short(b)} × {sin}",
            written(a * c - b * s_, r["original"][0]),
        ],
        [
            "b = b′·cos + a′·sin",
            f"{fmt.short(b)} × {cos} + {fmt.short(a)} × {sin}",
            written(b * c + a * s_, r["original"][1]),
        ],
        [
            "长度（x′ → x）",
            "√(a′² + b′²) → √(a² + b²)",
            f"{fmt.fmt(r['norm_before'])} → {fmt.fmt(r['norm_after'])}",
        ],
    ]
    t = ex.frequency_table()
    s3 = ex.shift_scores()
    s4 = ex.offset_score()
    first, second = (g["score"] for g in s3["groups"])
    fmt.holds(
        PAGE,
        {
            "练习 2.5.1：把求出的 x 再转回去，回到了 x′": att.max_abs_diff([r["back"]], [list(x)])
            < TOL,
            "练习 2.5.3：两组位置给出同一个分数": same(first, second),
            "练习 2.5.3：旋转改变了分数": not same(s3["plain"], first),
            "练习 2.5.4：只转 k 的分数与两个向量各自旋转后的分数一致": same(
                s4["score"], s4["both"]
            ),
        },
    )

    def exponent(i):
        # (−2i/d)
        return fmt.MINUS + str(Fraction(2 * i, ex.FREQ_D)) if i else "0"

    rx2 = [
        [
            fmt.count(i),
            f"({a}, {b})",
            exponent(i),
            fmt.fmt(r["theta"]),
            fmt.fmt(r["angle"]),
            fmt.multiple(r["wavelength"]),
        ]
        for i, r in enumerate(t["rows"])
        for a, b in [r["pair"]]
    ]
    g0, g1 = s3["groups"]
    m, n = g0["positions"]
    ms, ns = g1["positions"]

    def angles(xs):
        return "、".join(fmt.fmt(a) for a in xs)

    cells = [
        ("q 各对的转角", "q_angles", angles),
        ("k 各对的转角", "k_angles", angles),
        ("转后的 q", "q", vec),
        ("转后的 k", "k", vec),
        ("点积 q·k", "dot", fmt.fmt),
        ("分数 q·k/√d", "score", fmt.fmt),
    ]
    q = ex.PAIR_Q
    k = ex.PAIR_K
    rx4 = [
        [
            f"第 {i} 对",
            fmt.short(theta),
            fmt.fmt(angle),
            fmt.vector(k[2 * i : 2 * i + 2]),
            vec(s4["k_turned"][2 * i : 2 * i + 2]),
            fmt.vector(q[2 * i : 2 * i + 2]),
            fmt.fmt(term),
        ]
        for i, (theta, angle, term) in enumerate(
            zip(rope.frequencies(len(k), ex.PAIR_BASE), s4["angles"], s4["terms"])
        )
    ]
    return {
        "rx1_d": len(x),
        "rx1_theta": fmt.fmt(r["theta"]),
        "rx1_x": fmt.vector(x),
        "rx1_m": position,
        "rx1_steps": Table(["步骤", "算式", "值"], steps),
        "rx1_back": vec(r["back"]),
        "rx2_d": ex.FREQ_D,
        "rx2_base": base_text(ex.FREQ_BASE),
        "rx2_m": ex.FREQ_POSITION,
        "rx2_table": Table(
            [
                "第 i 对",
                "相邻成对的分量",
                "指数 −2i/d",
                "θ_i = base^(−2i/d)",
                "转角 m·θ_i",
                "波长 2π/θ_i（位置数）",
            ],
            rx2,
        ),
        "rx2_last": len(t["rows"]) - 1,
        "rx2_slowest": fmt.multiple(t["slowest"]),
        "rx3_d": s3["d"],
        "rx3_base": base_text(ex.SHIFT_D_BASE),
        "rx3_q": fmt.vector(ex.SHIFT_Q),
        "rx3_k": fmt.vector(ex.SHIFT_K),
        "rx3_m": m,
        "rx3_n": n,
        "rx3_s": ex.SHIFT_BY,
        "rx3_shifted": pair(ms, ns),
        "rx3_table": Table(
            ["", pair(m, n), pair(ms, ns)],
            [[label] + [cell(g[key]) for g in (g0, g1)] for label, key, cell in cells],
        ),
        "rx3_plain": fmt.fmt(s3["plain"]),
        "rx4_d": len(q),
        "rx4_base": base_text(ex.PAIR_BASE),
        "rx4_q": fmt.vector(q),
        "rx4_k": fmt.vector(k),
        "rx4_m": ex.PAIR_M,
        "rx4_n": ex.PAIR_N,
        "rx4_offset": fmt.count(s4["offset"]),
        "rx4_table": Table(
            ["对", "频率 θ_i", "转角 −Δ·θ_i", "k 的这一对", "转后", "q 的这一对", "这一对的点积"],
            rx4,
        ),
        "rx4_sum": fmt.fmt(sum(s4["terms"])),
        "rx4_score": fmt.fmt(s4["score"]),
        "rx5_doctest": Md(fmt.doctest_block(ex.rotation_angles)),
        "rx5_base": base_text(inspect.signature(ex.rotation_angles).parameters["base"].default),
    }
