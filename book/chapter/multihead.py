"""The multi-head page's book side: one function per section of book/ch02/multihead.md, each a page.Section.

The page types each example's inputs ({input} roles naming the teaching files' constants or the ones
below); a section glues what the run computes and checks the facts of the page's fixed sentences with
``Section.holds``. Figure F14's frames are built from one ``multihead_steps`` result (:func:`frames`).
"""

from __future__ import annotations

import importlib
import math

from chapter import fmt
from chapter.grid_figures import split_figure
from chapter.mask import error_of
from chapter.page import Col, Section, key, keys, listing

att = importlib.import_module("02_attention")
costs = importlib.import_module("02_costs")
mh = importlib.import_module("02_multihead")
ex = importlib.import_module("02_exercises_multihead")

PAGE = "多头一页"
# The page's inputs that no teaching file has (the page types them; tests/test_typed_inputs.py compares).
WRONG_D_POS = 1  # 误解二: head 0's row at this position, divided by √d_head and by √d_model
BUMP_HEAD = 0  # “只改一个头”: this head's W_q columns, each plus BUMP_DELTA
BUMP_DELTA = 1.0
COST_N = 16
COST_D_MODEL = 64
COST_FIXED = 16
COST_HEADS = [1, 2, 4, 8, 16]
# The GQA paragraph's claims are checked with this many query heads, COST_N positions, width COST_D_MODEL.
GQA_COUNT_HEADS = 8
KV_PLANS = ("GQA", "MQA")  # the plans of 02_multihead.PLANS the GQA example compares
# The Gemma-7B configuration the page quotes is 02_costs.py's; the page types these four of its entries.
GEMMA_HIDDEN = costs.GEMMA_7B["hidden"]
GEMMA_HEADS = costs.GEMMA_7B["heads"]
GEMMA_KV_HEADS = costs.GEMMA_7B["kv_heads"]
GEMMA_HEAD_DIM = costs.GEMMA_7B["head_dim"]
VERDICT = {True: "是", False: "否"}  # the checks table's 通过？ column
AT = "位置 {}".format  # a table row's label: AT(2) is 位置 2


def at(n: int) -> list[str]:
    """The row labels of an ``n``-row table: 位置 0 … 位置 n − 1."""
    return [AT(i) for i in range(n)]


def columns(h: int, d: int) -> str:
    """Head ``h``'s columns when each head has ``d``: ``列 2–3`` (one column: ``列 2``)."""
    cols = mh.head_columns(h, d)
    return f"列 {cols[0]}–{cols[-1]}" if d > 1 else f"列 {cols[0]}"


def dims(m) -> str:
    return f"{fmt.count(len(m))} × {fmt.count(len(m[0]))}"


def shape(*sizes: int) -> str:
    return "(" + ", ".join(fmt.count(n) for n in sizes) + ")"


def root(n: int) -> str:
    """``= √n = r`` when the square root is whole, ``= √n ≈ r`` when it is rounded."""
    r = math.isqrt(n)
    return f"= √{n} = {r}" if r * r == n else f"= √{n} ≈ {fmt.fmt(math.sqrt(n))}"


def favourite(row: list[float]) -> int:
    """The key a weight row weighs most (the first on a tie)."""
    return max(range(len(row)), key=lambda j: row[j])


def demo_steps() -> dict:
    """The page's worked example, step by step."""
    return mh.multihead_steps(*mh.DEMO, mh.DEMO_HEADS)


# -- facts the sections are built from --------------------------------------------------------------------
def output_heads(w_o: list[list[float]], heads: int) -> list[list[int]]:
    """Which heads each output column takes: column j uses head h when W_o is non-zero on h's rows."""
    rows = [mh.head_columns(h, len(w_o) // heads) for h in range(heads)]
    return [
        [h for h in range(heads) if any(w_o[r][j] for r in rows[h])] for j in range(len(w_o[0]))
    ]


def cost_rows(n: int, d_model: int, heads_list: list[int], head_dim: int | None) -> list[dict]:
    """Parameters and multiply-adds for each number of heads (``head_dim`` None: ``d_model // heads``)."""
    return [
        {
            "heads": h,
            "head_dim": head_dim or d_model // h,
            "params": mh.projection_params(d_model, h, head_dim)["total"],
            "multiply_adds": (m := mh.multiply_adds(n, d_model, h, head_dim))["total"],
            "score_cells": m["score_cells"],
        }
        for h in heads_list
    ]


def gqa_counts(n: int, d_model: int, heads: int) -> list[dict]:
    """For each number of K/V heads that divides ``heads`` (most first): the K/V projections'
    multiply-adds, the cache's numbers per position, the score and mixing multiply-adds, the total."""
    rows = []
    for kv in (k for k in range(heads, 0, -1) if heads % k == 0):
        p = mh.projection_params(d_model, heads, kv_heads=kv)
        m = mh.multiply_adds(n, d_model, heads, kv_heads=kv)
        rows.append(
            {
                "kv_heads": kv,
                "kv_projections": n * (p["w_k"] + p["w_v"]),
                "cache": mh.kv_cache_numbers(1, kv, d_model // heads),
                "scores_mixing": m["scores"] + m["mixing"],
                "total": m["total"],
            }
        )
    return rows


# -- 图 F14：一个头的列切片与它自己的权重表，旁边是另一个头 ----------------------------------------------------
def _matrix_table(title: str, m, header: list[str], lit=frozenset()) -> dict:
    return {
        "title": title,
        "header": ["位置 ＼ 列"] + header,
        "rows": [
            [fmt.cell(AT(i))] + [fmt.cell(fmt.fmt(x), None, c in lit) for c, x in enumerate(row)]
            for i, row in enumerate(m)
        ],
    }


def _weight_table(title: str, w, visible, current: int) -> dict:
    # A forbidden cell says 禁止 in words (colour only adds to it); the row the explanation names is bold.
    return {
        "title": title,
        "header": fmt.keys(len(w[0])),
        "rows": [
            [fmt.cell(AT(i), None, i == current)]
            + [
                fmt.cell(f"✓ {fmt.fmt(p)}", "allowed", i == current)
                if ok
                else fmt.cell(fmt.FORBIDDEN, "forbidden", i == current)
                for p, ok in zip(row, vis)
            ]
            for i, (row, vis) in enumerate(zip(w, visible))
        ],
    }


def frames(s: dict) -> list[dict]:
    """F14's frames for one ``multihead_steps`` result: Q cut into heads by columns, head 0's and head 1's
    own weight tables, the heads' outputs joined and multiplied by W_o."""
    heads = s["heads"]
    d = s["head_dim"]
    n = len(s["q"])
    width = heads * d
    cols = [columns(h, d) for h in range(heads)]
    last = n - 1
    favs = [favourite(w[last]) for w in s["weights"]]
    header = [f"列 {c}（头 {c // d}）" for c in range(width)]

    def head_frame(h: int, other: int | None) -> dict:
        sub = [f"列 {c}" for c in mh.head_columns(h, d)]
        text = (
            f"头 {h} 只用 Q、K 的{cols[h]}，每个点积只有 {d} 项（头维度为 {d}），分数除以 √{d}。"
            f"位置 {last} 在头 {h} 里的权重是 {fmt.slashed(s['weights'][h][last])}，"
            f"最看重 {key(favs[h])}。"
        )
        if other is not None:  # the other head's table is the frame before: compared in words only
            text += (
                f"头 {other} 里它最看重 {key(favs[other])}：两个头最看重的是"
                f"{'同一个' if favs[h] == favs[other] else '不同的'} Key。"
                f"两张表的行、列都是同样的 {n} 个位置，禁止的格子也一样；不同的只是各自用的列。"
            )
        return {
            "condition": f"头 {h}：{cols[h]} 与它自己的权重表"
            + (f"，对照头 {other}" if other is not None else ""),
            "tables": [
                _matrix_table(f"头 {h} 的 Q：Q 的{cols[h]}，{shape(n, d)}", s["q_heads"][h], sub),
                _matrix_table(f"头 {h} 的 K：K 的{cols[h]}，{shape(n, d)}", s["k_heads"][h], sub),
                _weight_table(
                    f"头 {h} 的权重表 {shape(n, n)}，加粗的是位置 {last}",
                    s["weights"][h],
                    s["visible"],
                    last,
                ),
            ],
            "rule": f"头 {h} = {cols[h]}；每行在可见的 Key 上求 softmax",
            "explanation": text,
        }

    first = {
        "condition": f"投影后的 Q：{shape(n, width)}，按列分给 {heads} 个头",
        "tables": [
            _matrix_table(
                f"Q = X · W_q，{shape(n, width)}；头 0 的列加粗",
                s["q"],
                header,
                set(mh.head_columns(0, d)),
            )
        ],
        "rule": "；".join(f"头 {h} 用{cols[h]}" for h in range(heads)),
        "explanation": (
            f"Q 有 {n} 行（{f'位置 0–{last}' if n > 1 else '位置 0'}）、{width} 列。"
            "切成头只切列，不切行："
            + "，".join(f"头 {h} 拿{cols[h]}" for h in range(heads))
            + f"，每个头都拿到全部 {n} 个位置。K、V 也按同样的列切开。"
        ),
    }
    out_cols = len(s["output"][0])
    final = {
        "condition": f"拼接各头输出 {shape(n, width)}，再乘输出矩阵",
        "tables": [
            _matrix_table(
                f"各头输出左右拼接，{shape(n, width)}",
                s["concat"],
                [f"头 {c // d} · 列 {c}" for c in range(width)],
            ),
            _matrix_table(
                f"输出 = 拼接 · W_o，{shape(n, out_cols)}",
                s["output"],
                [f"列 {c}" for c in range(out_cols)],
            ),
        ],
        "rule": f"拼接：{heads} 块 {shape(n, d)} → {shape(n, width)}；输出矩阵：{shape(width, out_cols)}",
        "explanation": (
            f"每个头交出 {shape(n, d)} 的输出，按头的顺序左右拼回 {width} 列，"
            "列的位置正是它在 Q 里占的位置。输出矩阵再把各头的列混在一起："
            "输出的每一列都可以同时用到所有头。"
        ),
    }
    return [first, head_frame(0, None), head_frame(1, 0), final]


def f14_frames() -> list[dict]:
    """动态图解 F14 on the page's example."""
    return frames(demo_steps())


# -- the page's sections, in its order -------------------------------------------------------------------
def steps() -> Section:
    """From X to the output: each step's size, K, V and each head's scores (the rest: the figure's)."""
    s = Section(PAGE, "从 X 到输出")
    st = demo_steps()
    heads = st["heads"]
    d = st["head_dim"]
    n = len(st["q"])
    h = fmt.count(heads)
    header = [f"列 {c}（头 {c // d}）" for c in range(heads * d)]
    s.value("count", n=n, d_model=len(mh.DEMO_X[0]), head_dim=d, last=n - 1)
    s.text(w_dims=listing(dict.fromkeys(dims(m) for m in mh.DEMO[1:])))
    s.text(**{f"size_{k}": dims(st[k]) for k in ("q", "visible", "concat", "output")})
    s.text(size_x=dims(mh.DEMO_X))
    s.text(**{f"size_{k}": f"{h} 块 {dims(st[k][0])}" for k in ("q_heads", "head_outputs")})
    s.text(**{f"size_{k}": f"{h} 张 {dims(st['weights'][0])}" for k in ("scores", "weights")})
    s.figure("fig_split", split_figure(st))
    s.grid("tbl_k", "位置 ＼ 列", st["k"], at(n), header)
    s.grid("tbl_v", "位置 ＼ 列", st["v"], at(n), header)
    for c, (q, k) in enumerate(zip(st["q_heads"], st["k_heads"])):
        s.grid(
            f"tbl_scores_{c}",
            "查询 ＼ Key",
            att.scaled_scores(q, k),
            at(n),
            [key(j) for j in range(n)],
        )
    s.text(
        sqrt_head_dim=root(d),
        split_cols="，".join(f"头 {c} 用{columns(c, d)}" for c in range(heads)),
        mix_cols="；".join(
            f"列 {j} ← {listing(f'头 {c}' for c in u)}"
            for j, u in enumerate(output_heads(mh.DEMO_WO, heads))
        ),
    )
    return s


def two_ways() -> Section:
    """The fused version: the shapes of Q, both outputs, their largest difference (outputs and weights)."""
    s = Section(PAGE, "两种常见写法，同一个结果")
    x = mh.DEMO_X
    w_q = mh.DEMO_WQ
    heads = mh.DEMO_HEADS
    w_list, out_list = mh.multihead_attention(*mh.DEMO, heads)
    w_fused, out_fused = mh.multihead_attention_fused(*mh.DEMO, heads)
    diff = max(
        [att.max_abs_diff(out_list, out_fused)]
        + [att.max_abs_diff(a, b) for a, b in zip(w_list, w_fused)]
    )
    q_3d = mh.reshape_heads(att.matmul(x, w_q), heads)
    back = mh.swap_01(mh.swap_01(q_3d))
    three = [shape(len(t), len(t[0]), len(t[0][0])) for t in (q_3d, mh.swap_01(q_3d), back)]
    shapes = [
        shape(len(x), len(w_q[0])),
        *three,
        shape(len(back), sum(len(part) for part in back[0])),
    ]
    s.text(**{f"fused_{i}": text for i, text in enumerate(shapes)})
    s.value("difference", two_ways_diff=diff)
    s.table(
        "tbl_two_ways",
        range(len(out_list)),
        Col("位置", AT, "text"),
        Col("头的列表：输出", lambda i: fmt.slashed(out_list[i]), "text"),
        Col("大投影：输出", lambda i: fmt.slashed(out_fused[i]), "text"),
    )
    return s


def gqa() -> Section:
    """Grouped K/V heads: who uses which K/V head; the gap to repeated K/V; the paragraph's counts."""
    s = Section(PAGE, "分组 K/V 头：GQA 与 MQA")
    counts = gqa_counts(COST_N, COST_D_MODEL, GQA_COUNT_HEADS)
    full = counts[0]
    s.holds(
        kv_projections_and_cache_shrink_to_the_share=all(
            r[k] * full["kv_heads"] == full[k] * r["kv_heads"]
            for r in counts
            for k in ("kv_projections", "cache")
        ),
        scores_and_mixing_unchanged=len({r["scores_mixing"] for r in counts}) == 1,
    )
    x = mh.DEMO_X
    w_q = mh.DEMO_WQ
    heads = mh.GQA_HEADS
    d = len(w_q[0]) // heads
    plans = {name: mh.PLANS[name] for name in KV_PLANS}  # W_k, W_v, W_o, heads, K/V heads
    diffs = {  # grouped K/V against repeated K/V: check_rows' third row
        name: mh.check_rows(x, w_q, w_k, w_v, w_o, h, kv)[2]["detail"]
        for name, (w_k, w_v, w_o, h, kv) in plans.items()
    }
    s.value("count", gqa_head_dim=d, gqa_kv=plans["GQA"][4], mqa_kv=plans["MQA"][4])
    s.table(
        "tbl_groups",
        plans.items(),
        Col("方案", lambda r: r[0], "text"),
        Col("K/V 头数", lambda r: r[1][4], "count"),
        *[
            Col(f"查询头 {c}", lambda r, c=c: f"K/V 头 {mh.kv_group(c, heads, r[1][4])}", "text")
            for c in range(heads)
        ],
    )
    rows = [("普通多头（MHA）", heads, shape(len(w_q), heads * d), "—")]
    rows += [
        (name, p[4], shape(len(p[0]), len(p[0][0])), fmt.difference(diffs[name]))
        for name, p in plans.items()
    ]
    s.table(
        "tbl_gqa",
        rows,
        Col("方案", lambda r: r[0], "text"),
        Col("K/V 头数", lambda r: r[1], "count"),
        Col("W_k 形状", lambda r: r[2], "text"),
        Col("与重复 K/V 后的普通多头的最大差", lambda r: r[3], "text"),
    )
    s.text(gqa_repeat_example=fmt.vectors(mh.repeat_kv_columns(mh.GQA_WK, heads, plans["GQA"][4])))
    return s


def misreadings() -> Section:
    """误解一、二、三: each head's favourite key, √d_model against √d_head, a stated head_dim, 3 heads."""
    s = Section(PAGE, "可能的代价与误解")
    st = demo_steps()
    pos = WRONG_D_POS
    d_model = len(mh.DEMO_X[0])
    q_row = st["q_heads"][0][pos]
    dots = [sum(a * b for a, b in zip(q_row, k)) for k in st["k_heads"][0][: pos + 1]]  # causal
    right, wrong = (
        att.softmax([x / math.sqrt(r) for x in dots]) for r in (st["head_dim"], d_model)
    )
    derived = GEMMA_HIDDEN // GEMMA_HEADS
    product = GEMMA_HEADS * GEMMA_HEAD_DIM
    s.holds(
        dividing_by_root_d_model_flattens_the_row=max(wrong) < max(right),
        gemma_head_dim_is_not_the_quotient=GEMMA_HIDDEN % GEMMA_HEADS == 0
        and derived != GEMMA_HEAD_DIM,
        gemma_heads_times_head_dim_exceeds_d_model=product > GEMMA_HIDDEN,
    )
    params = mh.projection_params(GEMMA_HIDDEN, GEMMA_HEADS, GEMMA_HEAD_DIM, GEMMA_KV_HEADS)
    params_derived = mh.projection_params(GEMMA_HIDDEN, GEMMA_HEADS, None, GEMMA_KV_HEADS)
    s.value(
        "count",
        gemma_derived=derived,
        gemma_product=product,
        gemma_params=params["total"],
        gemma_params_derived=params_derived["total"],
    )
    divide_error = error_of(mh.multihead_attention, *mh.DEMO, 3)  # 3 heads do not divide d_model
    s.md(divide_error=f"`ValueError: {divide_error}`")
    s.text(
        sqrt_d_model=root(d_model),
        right_row=fmt.slashed(right),
        wrong_row=fmt.slashed(wrong),
        experts_favs="，".join(
            f"头 {c} 最看重 {key(favourite(w[-1]))}" for c, w in enumerate(st["weights"])
        ),  # at the last position
    )
    return s


def checks() -> Section:
    """The checks on the example: what each sees, and whether it passes."""
    s = Section(PAGE, "如何判断是否做对")
    heads = mh.DEMO_HEADS
    rows = mh.check_rows(*mh.DEMO, heads, heads, head=BUMP_HEAD, delta=BUMP_DELTA)

    def seen(r: dict) -> str:
        detail = r["detail"]
        if isinstance(detail, list):  # the heads whose weights moved
            return listing(f"头 {c}" for c in detail)
        return fmt.difference(detail)

    s.table(
        "tbl_checks",
        rows,
        Col("检查", lambda r: r["check"], "text"),
        Col("看到的量（最大差，或权重变了的头）", seen, "text"),
        Col("通过？", lambda r: VERDICT[r["holds"]], "text"),
    )
    s.value("count", checks_n=len(rows), checks_passed=sum(r["holds"] for r in rows))
    return s


def cost_tables() -> Section:
    """The cost tables (head dimension d_model / h, then fixed), and how each quantity moves."""
    s = Section(PAGE, "怎样观察与验证")
    tables = {
        "split": cost_rows(COST_N, COST_D_MODEL, COST_HEADS, None),
        "fixed": cost_rows(COST_N, COST_D_MODEL, COST_HEADS, COST_FIXED),
    }
    equal = [r["heads"] for r in tables["fixed"] if r["heads"] * COST_FIXED == COST_D_MODEL]

    def constant(name, k):
        return len({r[k] for r in tables[name]}) == 1

    def growing(name, k):
        xs = [r[k] for r in tables[name]]
        return all(a < b for a, b in zip(xs, xs[1:]))

    s.holds(
        split_params_and_multiply_adds_constant=constant("split", "params")
        and constant("split", "multiply_adds"),
        score_cells_grow_with_heads=growing("split", "score_cells")
        and growing("fixed", "score_cells"),
        fixed_params_and_multiply_adds_grow=growing("fixed", "params")
        and growing("fixed", "multiply_adds"),
        fixed_one_row_where_width_is_d_model=len(equal) == 1,
    )
    s.value("count", cost_h0=COST_HEADS[0], cost_h1=COST_HEADS[-1])
    header = {
        "heads": "头数 h",
        "head_dim": "头维度",
        "params": "四个投影的参数",
        "multiply_adds": "乘加次数",
        "score_cells": "分数表格子数（softmax 的指数个数）",
    }
    for name, rows in tables.items():
        s.table(
            f"tbl_cost_{name}",
            rows,
            *[Col(title, lambda r, k=k: r[k], "count") for k, title in header.items()],
        )
        for k in ("params", "multiply_adds", "score_cells"):  # the first row and the last
            s.value(
                "count", **{f"cost_{name}_{k}_0": rows[0][k], f"cost_{name}_{k}_1": rows[-1][k]}
            )
    s.value("count", cost_fixed_equal=equal[0])
    return s


def run_output() -> Section:
    """What running 02_multihead.py prints."""
    s = Section(PAGE, "运行结果示例")
    s.md(run_output=fmt.run_output("02_multihead.py"))
    return s


# -- the exercises ----------------------------------------------------------------------------------------
def split_exercise() -> Section:
    """A head's row of weights, step by step, beside another head's at the same position."""
    s = Section(PAGE, "练习 把 Q 切成头，再算一个头的一行权重")
    a = ex.split_and_row()
    read = range(ex.ROW_POS + 1)
    fav = favourite(a["weights"])
    s.holds(two_heads_favour_the_same_key=fav == favourite(a["other_weights"]))
    s.value("count", ex1_d=a["head_dim"], ex1_fav_key=fav)
    s.text(
        ex1_columns="；".join(
            f"头 {c} 拿{listing(f'列 {j}' for j in cols)}" for c, cols in enumerate(a["columns"])
        )
    )
    for c, (cols, block) in enumerate(zip(a["columns"], a["q_heads"])):
        s.grid(
            f"ex1_block_{c}",
            "位置 ＼ 列",
            block,
            at(len(block)),
            [f"列 {j}" for j in cols],
            kind="short",
        )
    s.text(
        ex1_q_row=fmt.vector(a["q_row"]),
        ex1_k_rows=fmt.vectors(a["k_rows"]),
        ex1_visible_keys=keys(read),
        ex1_sqrt=root(a["head_dim"]),
    )
    s.table(
        "ex1_steps",
        [
            ("点积 q·k", a["dots"]),
            (f"÷ √{a['head_dim']}", a["scaled"]),
            ("− 最大值", [x - a["max"] for x in a["scaled"]]),
            ("exp", a["exps"]),
            ("÷ 指数之和（权重）", a["weights"]),
        ],
        Col("步骤", lambda r: r[0], "text"),
        *[Col(key(j), lambda r, j=j: r[1][j]) for j in read],
    )
    s.value(
        ex1_total=a["total"],
        ex1_fav_w=a["weights"][fav],
        ex1_fav_v=a["other_weights"][fav],
    )
    s.text(ex1_other_w=fmt.slashed(a["other_weights"]))
    return s


def gqa_exercise() -> Section:
    """Which K/V head each query head uses, and how many columns K keeps, for each number of K/V heads."""
    s = Section(PAGE, "练习 分组 K/V 头：谁用哪一个，K/V 剩多少列")
    plan = ex.gqa_plan()
    s.table(
        "ex2_groups",
        plan,
        Col("K/V 头数", lambda r: r["kv_heads"], "count"),
        Col("每组查询头数", lambda r: r["group_size"], "count"),
        *[Col(f"查询头 {c}", lambda r, c=c: r["groups"][c], "count") for c in range(ex.GQA_HEADS)],
    )
    s.table(
        "ex2_cols",
        plan,
        Col("K/V 头数", lambda r: r["kv_heads"], "count"),
        Col(
            "K 的列数（K/V 头数 · 头维度）",
            lambda r: f"{r['kv_heads']} · {ex.GQA_HEAD_DIM} = {fmt.count(r['kv_cols'])}",
            "text",
        ),
        Col("缩小到几分之一", lambda r: r["fraction"], "count"),
    )
    s.text(
        ex2_sharing=listing(f"查询头 {c}" for c in ex.sharing_heads()),
        ex2_sizes=listing(fmt.count(r["group_size"]) for r in plan),
    )
    return s


def reshape_exercise() -> Section:
    """The columns each head takes with the right reshape and with the swapped one."""
    s = Section(PAGE, "练习 reshape 的顺序写反了")
    a = ex.reshape_split()
    s.holds(swapped_reshape_touches_other_heads=any(c != 0 for c in a["touched"]))
    s.value("count", ex3_d=a["head_dim"])
    s.text(
        ex3_head0_cols=listing(f"列 {j}" for j in a["right_cols"][0]),
        ex3_touched=listing(f"头 {c}" for c in a["touched"]),
    )
    s.table(
        "ex3_table",
        range(ex.RESHAPE_HEADS),
        Col("头", lambda c: f"头 {c}", "text"),
        Col(
            "`(n, h, d_head)`：列", lambda c: listing(f"列 {j}" for j in a["right_cols"][c]), "text"
        ),
        Col("数", lambda c: fmt.vector(a["right"][c]), "text"),
        Col(
            "`(n, d_head, h)`：列", lambda c: listing(f"列 {j}" for j in a["wrong_cols"][c]), "text"
        ),
        Col("数", lambda c: fmt.vector(a["wrong"][c]), "text"),
    )
    return s


def code_exercise() -> Section:
    """The doctest the reader's function must pass."""
    s = Section(PAGE, "练习 写一个函数数出注意力的参数")
    s.md(ex4_doctest=fmt.doctest_block(ex.attention_params))
    return s


def exercises() -> list[Section]:
    return [split_exercise(), gqa_exercise(), reshape_exercise(), code_exercise()]
