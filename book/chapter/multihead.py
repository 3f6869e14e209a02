"""The multi-head page's book side: the facts book/ch02/multihead.md glues (its words are the page's)."""

from __future__ import annotations

import importlib
import math

from chapter import fmt
from chapter.fmt import cell, glue_all, names, rows_of, slashed  # noqa: F401 (the page calls page.glue_all)
from chapter.grid_figures import split_figure
from chapter.mask_facts import error_of

att = importlib.import_module("02_attention")
PAGE = "多头一页"  # how fmt.holds names this page when a fixed sentence fails
mh = importlib.import_module("02_multihead")
ex = importlib.import_module("02_exercises_multihead")

DEMO = mh.DEMO  # X, W_q, W_k, W_v, W_o of the page's worked example
AT = "位置 {}".format  # a table row's label: AT(2) is 位置 2
WRONG_D_POS = 1  # 误解二: head 0's row at this position, divided by √d_head and by √d_model
BUMP_HEAD = 0
BUMP_DELTA = 1.0  # “只动一个头”: this head's W_q columns, each plus this
COST_N = 16
COST_D_MODEL = 64
COST_FIXED = 16
COST_HEADS = [1, 2, 4, 8, 16]
GQA_COUNT_HEADS = (
    8  # the GQA paragraph's claims, checked at COST_N positions and width COST_D_MODEL
)

# The public configuration the page quotes (gemma7b_config): head_dim is an entry of its own.
GEMMA_7B = {
    "source": "https://huggingface.co/google/gemma-7b/blob/main/config.json",
    "hidden_size": 3072,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "head_dim": 256,
}


def span(columns) -> str:
    columns = list(columns)
    return f"列 {columns[0]}–{columns[-1]}" if len(columns) > 1 else f"列 {columns[0]}"


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


# -- facts the sections are built from --------------------------------------------------------------------
def output_heads(w_o: list[list[float]], heads: int) -> list[list[int]]:
    """Which heads each output column takes: column j uses head h when W_o is non-zero on h's rows."""
    rows = [mh.head_columns(h, len(w_o) // heads) for h in range(heads)]
    return [
        [h for h in range(heads) if any(w_o[r][j] for r in rows[h])] for j in range(len(w_o[0]))
    ]


def config_head_dim(config: dict) -> dict:
    """A configuration's stated head_dim beside ``hidden_size / num_attention_heads``, and both parameter counts."""
    d_model, heads, stated = (
        att.check_count(config.get(k), k)
        for k in ("hidden_size", "num_attention_heads", "head_dim")
    )
    kv = config.get("num_key_value_heads", heads)
    whole = d_model % heads == 0
    return {
        "stated": stated,
        "derived": d_model // heads if whole else d_model / heads,
        "heads_times_head_dim": heads * stated,
        "params_stated": mh.projection_params(d_model, heads, stated, kv)["total"],
        "params_if_derived": mh.projection_params(d_model, heads, None, kv)["total"]
        if whole
        else None,
    }


def cost_rows(
    n: int, d_model: int, heads_list: list[int], head_dim: int | None = None
) -> list[dict]:
    """Parameters and multiply-adds for each number of heads (``head_dim`` defaults to ``d_model // heads``)."""
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


# -- 图 F14：一个头的列切片与它自己的权重表，旁边是另一个头 ----------------------------------------------------
def _matrix_table(title: str, m, header: list[str], lit=frozenset()) -> dict:
    return {
        "title": title,
        "header": ["位置 ＼ 列"] + header,
        "rows": [
            [cell(f"位置 {i}")] + [cell(fmt.fmt(x), None, c in lit) for c, x in enumerate(row)]
            for i, row in enumerate(m)
        ],
    }


def _weight_table(title: str, w, visible, current: int) -> dict:
    # A forbidden cell says 禁止 in words (colour only adds to it); the row the explanation names is bold.
    return {
        "title": title,
        "header": fmt.keys(len(w[0])),
        "rows": [
            [cell(f"位置 {i}", None, i == current)]
            + [
                cell(f"✓ {fmt.fmt(p)}", "allowed", i == current)
                if ok
                else cell(fmt.FORBIDDEN, "forbidden", i == current)
                for p, ok in zip(row, vis)
            ]
            for i, (row, vis) in enumerate(zip(w, visible))
        ],
    }


def f14_frames(*inputs, heads: int = mh.DEMO_HEADS) -> list[dict]:
    """动态图解 F14（默认用本页的 X 与四个投影）：Q 按列切成头，头 0、头 1 各算自己的权重表，拼接后乘 W_o。"""
    s = mh.multihead_steps(*(inputs or DEMO), heads)
    d = s["head_dim"]
    n = len(s["q"])
    width = heads * s["head_dim"]
    if heads < 2:
        raise ValueError("图 F14 要并排比较两个头：heads 至少为 2")
    cols = [span(mh.head_columns(h, d)) for h in range(heads)]
    last = n - 1
    favs = [favourite(w[n - 1]) for w in s["weights"]]
    header = [f"列 {c}（头 {c // d}）" for c in range(width)]

    def head_frame(h: int, other: int | None) -> dict:
        sub = [f"列 {c}" for c in mh.head_columns(h, d)]
        text = (
            f"头 {h} 只用 Q、K 的{cols[h]}，每个点积只有 {d} 项（头维度为 {d}），分数除以 √{d}。"
            f"位置 {last} 在头 {h} 里的权重是 {slashed(s['weights'][h][last])}，最看重 Key {favs[h]}。"
        )
        if other is not None:  # the other head's table is the frame before: compared in words only
            text += (
                f"头 {other} 里它最看重 Key {favs[other]}：两个头最看重的是"
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


# -- what each section of the page glues (``page.glue_all(page.<section>())``) -----------------------------
def steps_values(heads: int = mh.DEMO_HEADS) -> dict:
    """从 X 到输出: the inputs, each step's size, K, V and each head's scores (the rest: the figure's)."""
    s = mh.multihead_steps(*DEMO, heads)
    d = s["head_dim"]
    n = len(s["q"])
    h = fmt.count(heads)
    header = ["位置 ＼ 列"] + [f"列 {c}（头 {c // d}）" for c in range(heads * d)]
    mixes = output_heads(DEMO[4], heads)
    return {
        "n": fmt.count(n),
        "d_model": fmt.count(len(DEMO[0][0])),
        "heads": h,
        "head_dim": fmt.count(d),
        "last": fmt.count(n - 1),
        "x_rows": fmt.vectors(DEMO[0]),
        "w_dims": "、".join(dict.fromkeys(dims(m) for m in DEMO[1:])),
        **{f"{name}_rows": fmt.vectors(m) for name, m in zip(("wq", "wk", "wv", "wo"), DEMO[1:])},
        **{f"size_{k}": dims(s[k]) for k in ("q", "visible", "concat", "output")},
        "size_x": dims(DEMO[0]),
        **{f"size_{k}": f"{h} 块 {dims(s[k][0])}" for k in ("q_heads", "head_outputs")},
        **{f"size_{k}": f"{h} 张 {dims(s['weights'][0])}" for k in ("scores", "weights")},
        "fig_split": split_figure(s),
        "tbl_k": fmt.Table(header, rows_of(s["k"], AT)),
        "tbl_v": fmt.Table(header, rows_of(s["v"], AT)),
        **{
            f"tbl_scores_{h}": fmt.Table(fmt.keys(n), rows_of(att.scaled_scores(q, k), AT))
            for h, (q, k) in enumerate(zip(s["q_heads"], s["k_heads"]))
        },
        "sqrt_head_dim": root(d),
        "split_cols": "，".join(f"头 {h} 用{span(mh.head_columns(h, d))}" for h in range(heads)),
        "mix_cols": "；".join(f"列 {j} ← {names('头', u)}" for j, u in enumerate(mixes)),
    }


def two_ways_values(
    x=DEMO[0], w_q=DEMO[1], w_k=DEMO[2], w_v=DEMO[3], w_o=DEMO[4], heads=mh.DEMO_HEADS
) -> dict:
    """两种常见写法: the fused version's shapes of Q, both outputs and their largest difference."""
    w_list, out_list = mh.multihead_attention(x, w_q, w_k, w_v, w_o, heads)
    w_fused, out_fused = mh.multihead_attention_fused(x, w_q, w_k, w_v, w_o, heads)
    diff = max(
        [att.max_abs_diff(out_list, out_fused)]
        + [att.max_abs_diff(a, b) for a, b in zip(w_list, w_fused)]
    )
    rows = [
        [f"位置 {i}", slashed(a), slashed(b)] for i, (a, b) in enumerate(zip(out_list, out_fused))
    ]
    q_3d = mh.reshape_heads(att.matmul(x, w_q), heads)
    back = mh.swap_01(mh.swap_01(q_3d))
    three = [shape(len(t), len(t[0]), len(t[0][0])) for t in (q_3d, mh.swap_01(q_3d), back)]
    shapes = [
        shape(len(x), len(w_q[0])),
        *three,
        shape(len(back), sum(len(part) for part in back[0])),
    ]
    return {
        **{f"fused_{i}": text for i, text in enumerate(shapes)},
        "two_ways_diff": fmt.difference(diff),
        "tbl_two_ways": fmt.Table(["位置", "头的列表：输出", "大投影：输出"], rows),
    }


def gqa_counts(n: int = COST_N, d_model: int = COST_D_MODEL, heads: int = GQA_COUNT_HEADS):
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


def gqa_values(heads: int = mh.GQA_HEADS, plans: dict | None = None) -> dict:
    """分组 K/V 头 (``plans``: ``{name: (w_k, w_v)}``): who uses which K/V head; the gap to repeated K/V."""
    plans = plans or {"GQA": (mh.GQA_WK, mh.GQA_WV), "MQA": (mh.MQA_WK, mh.MQA_WV)}
    counts = gqa_counts()
    full = counts[0]
    fmt.holds(
        PAGE,
        {
            "GQA：K、V 投影的乘加与缓存都缩小到 h_kv/h": all(
                r[key] * full["kv_heads"] == full[key] * r["kv_heads"]
                for r in counts
                for key in ("kv_projections", "cache")
            ),
            "GQA：算分数与混合的乘加次数不变": len({r["scores_mixing"] for r in counts}) == 1,
        },
    )
    x, w_q, *_, w_o = DEMO
    d = len(DEMO[1][0]) // heads
    groups = []
    checks = [["普通多头（MHA）", fmt.count(heads), shape(len(w_q), heads * d), "—"]]
    for name, (w_k, w_v) in plans.items():
        kv = len(w_k[0]) // d
        diff = mh.check_rows(x, w_q, w_k, w_v, w_o, heads, kv)[2]["detail"]  # 分组 K/V 等于重复 K/V
        groups.append(
            [name, fmt.count(kv)] + [f"K/V 头 {mh.kv_group(h, heads, kv)}" for h in range(heads)]
        )
        checks.append([name, fmt.count(kv), shape(len(w_k), len(w_k[0])), fmt.difference(diff)])
    gqa_kv = len(mh.GQA_WK[0]) // d
    rows = {"gqa_wk": mh.GQA_WK, "gqa_wv": mh.GQA_WV, "mqa_wk": mh.MQA_WK, "mqa_wv": mh.MQA_WV}
    return {
        "gqa_heads": fmt.count(heads),
        "gqa_head_dim": fmt.count(d),
        "gqa_kv": fmt.count(gqa_kv),
        "mqa_kv": fmt.count(len(mh.MQA_WK[0]) // d),
        **{f"{k}_rows": fmt.vectors(w) for k, w in rows.items()},
        "tbl_groups": fmt.Table(
            ["方案", "K/V 头数"] + [f"查询头 {h}" for h in range(heads)], groups
        ),
        "tbl_gqa": fmt.Table(
            ["方案", "K/V 头数", "W_k 形状", "与重复 K/V 后的普通多头的最大差"], checks
        ),
        "gqa_repeat_example": fmt.vectors(mh.repeat_kv_columns(mh.GQA_WK, heads, gqa_kv)),
    }


def misreadings(config: dict = GEMMA_7B) -> dict:
    """误解一、二、三: each head's favourite key, √d_model against √d_head, a stated head_dim, 3 heads."""
    c = config_head_dim(config)
    s = mh.multihead_steps(*DEMO, mh.DEMO_HEADS)
    pos = WRONG_D_POS
    d_model = len(DEMO[0][0])
    favs = [favourite(w[-1]) for w in s["weights"]]  # at the last position
    dots = [
        sum(a * b for a, b in zip(s["q_heads"][0][pos], k)) for k in s["k_heads"][0][: pos + 1]
    ]  # causal row
    right, wrong = (att.softmax([x / math.sqrt(r) for x in dots]) for r in (s["head_dim"], d_model))
    divide_error = error_of(mh.multihead_attention, *DEMO, 3)  # 3 heads do not divide d_model
    return {
        "gemma_hidden": fmt.count(config["hidden_size"]),
        "gemma_heads": fmt.count(config["num_attention_heads"]),
        "gemma_head_dim": fmt.count(config["head_dim"]),
        "gemma_kv": fmt.count(config["num_key_value_heads"]),
        "gemma_derived": fmt.short(c["derived"]),
        "gemma_product": fmt.count(c["heads_times_head_dim"]),
        "gemma_params": fmt.count(c["params_stated"]),
        "gemma_params_derived": fmt.count(c["params_if_derived"]),
        "divide_error": fmt.Md(f"`ValueError: {divide_error}`"),
        "sqrt_d_model": root(d_model),
        "wrong_pos": fmt.count(pos),
        "right_row": slashed(right),
        "wrong_row": slashed(wrong),
        "experts_favs": "，".join(f"头 {h} 最看重 Key {j}" for h, j in enumerate(favs)),
    }


def checks_values(n=COST_N, d_model=COST_D_MODEL, heads_list=COST_HEADS, fixed=COST_FIXED) -> dict:
    """如何判断是否做对 and 怎样观察: the checks on the example; the cost tables, how each quantity moves."""
    rows = mh.check_rows(*DEMO, mh.DEMO_HEADS, mh.DEMO_HEADS, head=BUMP_HEAD, delta=BUMP_DELTA)
    seen = [
        names("头", r["detail"]) if isinstance(r["detail"], list) else fmt.difference(r["detail"])
        for r in rows
    ]
    values = {
        "bump_head": fmt.count(BUMP_HEAD),
        "bump_delta": fmt.short(BUMP_DELTA),
        "tbl_checks": fmt.Table(
            ["检查", "看到的量（最大差，或权重变了的头）", "通过？"],
            [[r["check"], v, "是" if r["holds"] else "否"] for r, v in zip(rows, seen)],
        ),
        "checks_n": fmt.count(len(rows)),
        "checks_passed": fmt.count(sum(r["holds"] for r in rows)),
        "cost_n": fmt.count(n),
        "cost_d_model": fmt.count(d_model),
        "cost_fixed": fmt.count(fixed),
        "cost_heads": "、".join(fmt.count(h) for h in heads_list),
        "cost_h0": fmt.count(heads_list[0]),
        "cost_h1": fmt.count(heads_list[-1]),
    }
    keys = ("heads", "head_dim", "params", "multiply_adds", "score_cells")
    header = [
        "头数 h",
        "头维度",
        "四个投影的参数",
        "乘加次数",
        "分数表格子数（softmax 的指数个数）",
    ]
    tables = {
        "split": cost_rows(n, d_model, heads_list),
        "fixed": cost_rows(n, d_model, heads_list, fixed),
    }
    equal = [r["heads"] for r in tables["fixed"] if r["heads"] * fixed == d_model]

    def constant(name, key):
        return len({r[key] for r in tables[name]}) == 1

    def growing(name, key):
        xs = [r[key] for r in tables[name]]
        return all(a < b for a, b in zip(xs, xs[1:]))

    fmt.holds(
        PAGE,
        {
            "头维度随头数缩小时，参数个数与乘加次数都不随头数变": constant("split", "params")
            and constant("split", "multiply_adds"),
            "分数表格子数随头数变多": growing("split", "score_cells")
            and growing("fixed", "score_cells"),
            "头维度固定时，参数个数与乘加次数随头数变多": growing("fixed", "params")
            and growing("fixed", "multiply_adds"),
            "头维度固定时，恰有一行 h·d_head = d_model": len(equal) == 1,
        },
    )
    for name, rows in tables.items():
        values[f"tbl_cost_{name}"] = fmt.Table(
            header, [[fmt.count(r[k]) for k in keys] for r in rows]
        )
        for key in ("params", "multiply_adds", "score_cells"):  # the first row and the last
            values[f"cost_{name}_{key}_0"] = fmt.count(rows[0][key])
            values[f"cost_{name}_{key}_1"] = fmt.count(rows[-1][key])
    values["cost_fixed_equal"] = fmt.count(equal[0])
    return values


def exercise_values() -> dict:
    """The four exercises: a head's row of weights, K/V groups, a swapped reshape, the reader's doctest."""
    a = ex.split_and_row()
    keys = [f"Key {j}" for j in range(ex.ROW_POS + 1)]
    fav = favourite(a["weights"])
    fmt.holds(PAGE, {"练习 2.4.1：两个头最看重同一个 Key": fav == favourite(a["other_weights"])})
    values = {
        "ex1_heads": fmt.count(ex.SPLIT_HEADS),
        "ex1_q": fmt.vectors(ex.SPLIT_Q),
        "ex1_k": fmt.vectors(ex.SPLIT_K),
        "ex1_head": fmt.count(ex.ROW_HEAD),
        "ex1_pos": fmt.count(ex.ROW_POS),
        "ex1_d": fmt.count(a["head_dim"]),
        "ex1_columns": "；".join(
            f"头 {h} 拿" + names("列", cols) for h, cols in enumerate(a["columns"])
        ),
        **{
            f"ex1_block_{h}": fmt.Table(
                ["位置 ＼ 列"] + [f"列 {c}" for c in cols], rows_of(block, AT, fmt.short)
            )
            for h, (cols, block) in enumerate(zip(a["columns"], a["q_heads"]))
        },
        "ex1_q_row": fmt.vector(a["q_row"]),
        "ex1_k_rows": fmt.vectors(a["k_rows"]),
        "ex1_visible_keys": "、".join(keys),
        "ex1_sqrt": root(a["head_dim"]),
        "ex1_steps": fmt.Table(
            ["步骤"] + keys,
            [
                [label] + [fmt.fmt(x) for x in xs]
                for label, xs in (
                    ("点积 q·k", a["dots"]),
                    (f"÷ √{a['head_dim']}", a["scaled"]),
                    ("− 最大值", [x - a["max"] for x in a["scaled"]]),
                    ("exp", a["exps"]),
                    ("÷ 指数之和（权重）", a["weights"]),
                )
            ],
        ),
        "ex1_total": fmt.fmt(a["total"]),
        "ex1_other": fmt.count(a["other_head"]),
        "ex1_other_w": slashed(a["other_weights"]),
        "ex1_fav_key": fmt.count(fav),
        "ex1_fav_w": fmt.fmt(a["weights"][fav]),
        "ex1_fav_v": fmt.fmt(a["other_weights"][fav]),
        "ex4_doctest": fmt.Md(fmt.doctest_block(ex.attention_params)),
    }
    plan = ex.gqa_plan()
    values |= {
        "ex2_heads": fmt.count(ex.GQA_HEADS),
        "ex2_kv_list": "、".join(fmt.count(kv) for kv in ex.GQA_KV_CHOICES),
        "ex2_d": fmt.count(ex.GQA_HEAD_DIM),
        "ex2_ask_kv": fmt.count(ex.GQA_ASK_KV),
        "ex2_ask_group": fmt.count(ex.GQA_ASK_GROUP),
        "ex2_groups": fmt.Table(
            ["K/V 头数", "每组查询头数"] + [f"查询头 {h}" for h in range(ex.GQA_HEADS)],
            [
                [fmt.count(r["kv_heads"]), fmt.count(r["group_size"])]
                + [fmt.count(g) for g in r["groups"]]
                for r in plan
            ],
        ),
        "ex2_cols": fmt.Table(
            ["K/V 头数", "K 的列数（K/V 头数 · 头维度）", "缩小到几分之一"],
            [
                [
                    fmt.count(r["kv_heads"]),
                    f"{r['kv_heads']} · {ex.GQA_HEAD_DIM} = {fmt.count(r['kv_cols'])}",
                    fmt.count(r["fraction"]),
                ]
                for r in plan
            ],
        ),
        "ex2_sharing": names("查询头", ex.sharing_heads()),
        "ex2_sizes": "、".join(fmt.count(r["group_size"]) for r in plan),
    }
    a = ex.reshape_split()
    fmt.holds(
        PAGE,
        {"练习 2.4.3：写反时改头 0 的列，头 0 之外的头也变了": any(h != 0 for h in a["touched"])},
    )
    rows = [
        [
            f"头 {c}",
            names("列", a["right_cols"][c]),
            fmt.vector(a["right"][c]),
            names("列", a["wrong_cols"][c]),
            fmt.vector(a["wrong"][c]),
        ]
        for c in range(ex.RESHAPE_HEADS)
    ]
    return values | {  # 3: the swapped reshape's columns
        "ex3_row": fmt.vector(ex.RESHAPE_ROW),
        "ex3_heads": fmt.count(ex.RESHAPE_HEADS),
        "ex3_d": fmt.count(a["head_dim"]),
        "ex3_head0_cols": names("列", a["right_cols"][0]),
        "ex3_table": fmt.Table(
            ["头", "`(n, h, d_head)`：列", "数", "`(n, d_head, h)`：列", "数"], rows
        ),
        "ex3_touched": names("头", a["touched"]),
    }
