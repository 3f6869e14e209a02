"""The multi-head page's book side: the facts its tables, sentences, figures and solutions are built from.

Everything comes from ``code/02_multihead.py`` and its exercises; numbers go through ``chapter.fmt``. Each
section's function (``inputs``, ``steps_values`` …) returns what the page glues (``page.glue_all``).
"""

from __future__ import annotations

import importlib
import math

from chapter import fmt
from chapter.fmt import glue_all  # noqa: F401 (the page calls page.glue_all)
from chapter.multihead_figure import split_figure

att = importlib.import_module("02_attention")
mh = importlib.import_module("02_multihead")
ex = importlib.import_module("02_exercises_multihead")

DEMO = mh.DEMO  # X, W_q, W_k, W_v, W_o of the page's worked example
WRONG_D_POS = 1  # 误解二: head 0's row at this position, divided by √d_head and by √d_model
BUMP_HEAD, BUMP_DELTA = 0, 1.0  # “只动一个头”: this head's W_q columns, each plus this
COST_N, COST_D_MODEL, COST_FIXED, COST_HEADS = 16, 64, 16, [1, 2, 4, 8, 16]

# The public configuration the page quotes: head_dim is an entry of its own, not always
# hidden_size / num_attention_heads. Source: Hugging Face google/gemma-7b, config.json (gemma7b_config).
GEMMA_7B = {"source": "https://huggingface.co/google/gemma-7b/blob/main/config.json", "hidden_size": 3072,
            "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256}


# -- how a column, a position, a shape and a difference are written ---------------------------------------
def columns_text(columns) -> str:
    return "、".join(f"列 {j}" for j in columns)


def column_span(columns) -> str:
    """A head's run of columns: ``列 0–1``, or ``列 2`` for a single one."""
    columns = list(columns)
    return f"列 {columns[0]}–{columns[-1]}" if len(columns) > 1 else f"列 {columns[0]}"


def dims(m) -> str:
    return f"{fmt.count(len(m))} × {fmt.count(len(m[0]))}"


def shape(*sizes: int) -> str:
    return "(" + ", ".join(fmt.count(n) for n in sizes) + ")"


def slashed(row) -> str:
    return " / ".join(fmt.fmt(p) for p in row)


def root(n: int) -> str:
    """``= √n = r`` when the square root is a whole number, ``= √n ≈ r`` (four decimals) when it is rounded."""
    n = att.check_count(n, "n")
    r = math.isqrt(n)
    return f"= √{n} = {r}" if r * r == n else f"= √{n} ≈ {fmt.fmt(math.sqrt(n))}"


def positions(matrix, digits: int = 4) -> list[list[str]]:
    """A matrix as table rows, each led by its position (``位置 0``); ``digits=0`` for whole numbers."""
    return [[f"位置 {i}"] + [fmt.fmt(x, digits) for x in row] for i, row in enumerate(matrix)]


def head_header(n_cols: int, head_dim: int, corner: str = "位置 ＼ 列") -> list[str]:
    return [corner] + [f"列 {c}（头 {c // head_dim}）" for c in range(n_cols)]


def compare_text(diff: float) -> str:
    """Two results' largest difference in words: “完全相同” when it is exactly 0."""
    return "逐元素完全相同（最大差为 0）" if diff == 0 else f"最大差为 {fmt.difference(diff)}"


# -- 从 X 到输出 ------------------------------------------------------------------------------------------
def shape_rows(x, s: dict) -> tuple[list[str], list[list[str]]]:
    """The table of every step's shape (``s`` from ``multihead_steps``): the general case, then this example's size."""
    n, heads = len(s["q"]), s["heads"]
    rows = [
        ["输入", "X", "`(n, d_model)`", dims(x)],
        ["投影", "Q = X·W_q，K = X·W_k，V = X·W_v", "`(n, h·d_head)`", f"{dims(s['q'])}（Q、K、V 各一个）"],
        ["切成头", r"头 $c$ 取 Q、K、V 第 $c \cdot d_{\text{head}}$ 列起的 $d_{\text{head}}$ 列", "h 块 `(n, d_head)`",
         f"{fmt.count(len(s['q_heads']))} 块 {dims(s['q_heads'][0])}"],
        ["每头分数", r"$Q_c K_c^{\top} / \sqrt{d_{\text{head}}}$", "每头一张 `(n, n)`", f"{fmt.count(heads)} 张 {fmt.count(n)} × {fmt.count(n)}"],
        ["可见性表", "所有头共用一张", "`(n, n)`", dims(s["visible"])],
        ["每头权重", "softmax（分数 + 加性 mask）", "每头一张 `(n, n)`", f"{fmt.count(len(s['weights']))} 张 {dims(s['weights'][0])}"],
        ["每头输出", "权重 · V_c", "h 块 `(n, d_head)`", f"{fmt.count(len(s['head_outputs']))} 块 {dims(s['head_outputs'][0])}"],
        ["拼接", "各头输出左右相接", "`(n, h·d_head)`", dims(s["concat"])],
        ["输出", "拼接 · W_o", "`(n, d_model)`", dims(s["output"])],
    ]  # fmt: skip
    return ["步骤", "算式", "形状", "本例大小"], rows


def split_sentence(heads: int, head_dim: int) -> str:
    return "，".join(f"头 {h} 用{columns_text(mh.head_columns(h, head_dim))}" for h in range(heads)) + "。"


def output_heads(w_o: list[list[float]], heads: int) -> list[list[int]]:
    """Which heads each output column takes: column j uses head h when W_o is non-zero on h's rows."""
    w_o, heads = att.as_matrix(w_o, "w_o"), att.check_count(heads, "heads")
    if len(w_o) % heads:
        raise ValueError(f"w_o 的行数 {len(w_o)} 必须能被 heads={heads} 整除：每个头占同样多的行")
    d = len(w_o) // heads
    return [[h for h in range(heads) if any(w_o[r][j] != 0 for r in mh.head_columns(h, d))] for j in range(len(w_o[0]))]


def mixing_sentence(used: list[list[int]], heads: int) -> str:
    """From ``output_heads``: which output columns mix several heads, which take one."""
    heads = att.check_count(heads, "heads", minimum=2)  # one head has nothing to mix
    mixed = [j for j, u in enumerate(used) if len(u) >= 2]
    rest = [f"列 {j} 只取头 {u[0]}" if u else f"列 {j} 全是 0" for j, u in enumerate(used) if len(u) < 2]
    if len(mixed) == len(used):
        many = f"全部 {heads} 个头" if {len(u) for u in used} == {heads} else "不止一个头"
        return f"输出的每一列都同时取了{many}的列，各头的结果在这里才第一次混到一起。"
    if not mixed:
        return "输出没有一列同时取两个头的列：" + "，".join(rest) + "，各头的结果在输出里仍是分开的。"
    sizes = {len(used[j]) for j in mixed}
    many = f" {sizes.pop()} 个头" if len(sizes) == 1 else "不止一个头"
    return f"输出的{columns_text(mixed)} 同时取了{many}的列，各头的结果在这里才第一次混到一起；" + "，".join(rest) + "。"


# -- 两种写法 ---------------------------------------------------------------------------------------------
def fused_shape_rows(x, w_q, heads: int) -> tuple[list[str], list[list[str]]]:
    """The shapes Q takes in the fused version, measured on the teaching code's own reshape / transpose."""
    q_flat = att.matmul(x, w_q)
    q_3d = mh.reshape_heads(q_flat, heads)
    q_first = mh.swap_01(q_3d)
    back = mh.swap_01(q_first)
    three = lambda t: shape(len(t), len(t[0]), len(t[0][0]))  # noqa: E731
    rows = [
        ["一次投影 X·W_q", shape(len(q_flat), len(q_flat[0]))],
        ["reshape 成 `(n, h, d_head)`", three(q_3d)],
        ["transpose 成 `(h, n, d_head)`", three(q_first)],
        ["逐头注意力后 transpose 回 `(n, h, d_head)`", three(back)],
        ["reshape 成 `(n, h·d_head)`，再乘 W_o", shape(len(back), sum(len(part) for part in back[0]))],
    ]
    return ["步骤", "本例形状"], rows


def two_ways(x, w_q, w_k, w_v, w_o, heads: int) -> dict:
    """Both versions on the same numbers: the output table and the two differences in words."""
    w_list, out_list = mh.multihead_attention(x, w_q, w_k, w_v, w_o, heads)
    w_fused, out_fused = mh.multihead_attention_fused(x, w_q, w_k, w_v, w_o, heads)
    rows = [[f"位置 {i}", slashed(a), slashed(b)] for i, (a, b) in enumerate(zip(out_list, out_fused))]
    diff_w = max(att.max_abs_diff(a, b) for a, b in zip(w_list, w_fused))
    return {
        "header": ["位置", "头的列表：输出", "大投影：输出"],
        "rows": rows,
        "sentence": two_ways_sentence(att.max_abs_diff(out_list, out_fused), diff_w),
    }


def two_ways_sentence(diff_out: float, diff_w: float) -> str:
    """The two versions compared, saying each verdict once."""
    diff_out, diff_w = att.real(diff_out, "diff_out"), att.real(diff_w, "diff_w")
    if diff_out == diff_w:
        return f"两者的输出与各头的权重表都{compare_text(diff_out)}。"
    return f"两者的输出{compare_text(diff_out)}；各头的权重表{compare_text(diff_w)}。"


# -- 分组 K/V 头 -----------------------------------------------------------------------------------------
def gqa_tables(x, w_q, w_o, heads: int, plans: dict) -> dict:
    """The grouping table and the check against repeated K/V for the plans (``{name: (w_k, w_v)}``)."""
    d = len(w_q[0]) // heads
    groups, checks = [], [["普通多头（MHA）", fmt.count(heads), shape(len(w_q), heads * d), "—"]]
    for name, (w_k, w_v) in plans.items():
        kv = len(w_k[0]) // d
        row = mh.check_rows(x, w_q, w_k, w_v, w_o, heads, kv)[2]  # 分组 K/V 等于重复 K/V
        groups.append([name, fmt.count(kv)] + [f"K/V 头 {mh.kv_group(h, heads, kv)}" for h in range(heads)])
        checks.append([name, fmt.count(kv), shape(len(w_k), len(w_k[0])), compare_text(row["detail"])])
    return {
        "groups": (["方案", "K/V 头数"] + [f"查询头 {h}" for h in range(heads)], groups),
        "checks": (["方案", "K/V 头数", "W_k 形状", "与“重复 K/V 后的普通多头”相比"], checks),
    }


# -- 误解一：头是专家 --------------------------------------------------------------------------------------
def favourite(row: list[float]) -> int:
    """The key a weight row weighs most (the first one on a tie)."""
    return max(range(len(row)), key=lambda j: row[j])


def head_view_rows(steps: dict, i: int) -> list[dict]:
    """How each head reads query row ``i``: its columns, the keys it may read, its weights, its favourite."""
    n = len(steps["visible"])
    return [
        {"head": h, "columns": list(mh.head_columns(h, steps["head_dim"])),
         "keys": [j for j, ok in enumerate(steps["visible"][i]) if ok], "weights": w[i], "favourite": favourite(w[i])}
        for h, w in enumerate(steps["weights"])
    ]  # fmt: skip


def head_view_sentence(rows: list[dict]) -> str:
    """From ``head_view_rows``: the same keys or not, overlapping columns or not, each head's favourite."""
    same = all(r["keys"] == rows[0]["keys"] for r in rows)
    columns = [c for r in rows for c in r["columns"]]
    apart = len(columns) == len(set(columns))
    favourites = "，".join(f"头 {h} 最看重 Key {r['favourite']}" for h, r in enumerate(rows))
    return (f"{len(rows)} 个头可读的 Key " + ("完全相同" if same else "并不相同")
            + "，用到的列" + ("互不重叠" if apart else "有重叠") + f"；{favourites}。")  # fmt: skip


# -- 误解二：头维度 ----------------------------------------------------------------------------------------
def config_head_dim(config: dict) -> dict:
    """A configuration's stated head_dim beside ``hidden_size / num_attention_heads``, and both parameter counts."""
    if not isinstance(config, dict):
        raise ValueError("config 必须是字典（模型 config.json 的内容）")
    d_model, heads, stated = (att.check_count(config.get(k), k) for k in ("hidden_size", "num_attention_heads", "head_dim"))
    kv = att.check_count(config.get("num_key_value_heads", heads), "num_key_value_heads")
    return {
        "stated": stated,
        "derived": d_model // heads if d_model % heads == 0 else d_model / heads,
        "heads_times_head_dim": heads * stated,
        "params_stated": mh.projection_params(d_model, heads, stated, kv)["total"],
        "params_if_derived": mh.projection_params(d_model, heads, None, kv)["total"] if d_model % heads == 0 else None,
    }


# -- 如何判断是否做对 --------------------------------------------------------------------------------------
def check_detail(row: dict) -> str:
    """What a check saw: the heads whose table moved, or the largest difference."""
    if isinstance(row["detail"], list):
        return "权重变了的头：" + ("、".join(f"头 {h}" for h in row["detail"]) or "无")
    return compare_text(row["detail"])


def checks_table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    return ["检查", "结果", "通过？"], [[r["check"], check_detail(r), "是" if r["holds"] else "否"] for r in rows]


def check_sentence(rows: list[dict]) -> str:
    """How many checks passed, and which did not."""
    failed = [r["check"] for r in rows if not r["holds"]]
    if not failed:
        return f"{len(rows)} 项检查全部通过。"
    return f"{len(rows)} 项检查里 {len(rows) - len(failed)} 项通过；没有通过的是：{'、'.join(failed)}。"


# -- 头数变了，什么不变 ------------------------------------------------------------------------------------
def cost_rows(n: int, d_model: int, heads_list: list[int], head_dim: int | None = None) -> list[dict]:
    """Parameters and multiply-adds for each number of heads (``head_dim`` defaults to ``d_model // heads``)."""
    rows = []
    for heads in heads_list:
        macs = mh.multiply_adds(n, d_model, heads, head_dim)
        d = head_dim if head_dim is not None else d_model // heads
        rows.append({"heads": heads, "head_dim": d, "params": mh.projection_params(d_model, heads, head_dim)["total"],
                     "multiply_adds": macs["total"], "score_cells": macs["score_cells"]})  # fmt: skip
    return rows


def cost_table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    header = ["头数 h", "头维度", "四个投影的参数", "乘加次数", "分数表格子数（softmax 的指数个数）"]
    keys = ("heads", "head_dim", "params", "multiply_adds", "score_cells")
    return header, [[fmt.count(r[k]) for k in keys] for r in rows]


def cost_sentence(rows: list[dict]) -> str:
    """Which quantities are the same on every row of the cost table, and which change with the heads."""

    def say(key: str, name: str) -> str:
        values = [r[key] for r in rows]
        if len(set(values)) == 1:
            return f"{name}都是 {fmt.count(values[0])}"
        return f"{name}从 {fmt.count(values[0])} 变到 {fmt.count(values[-1])}"

    return (f"头数从 {fmt.count(rows[0]['heads'])} 变到 {fmt.count(rows[-1]['heads'])}：{say('params', '参数个数')}，"
            f"{say('multiply_adds', '乘加次数')}；{say('score_cells', '分数表格子数')}。")  # fmt: skip


# -- 图 F14：一个头的列切片与它自己的权重表，旁边是另一个头 ----------------------------------------------------
def _cell(text: str, state: str | None = None, highlight: bool = False) -> dict:
    return {"text": text, "state": state, "highlight": highlight}


def _matrix_table(title: str, m: list[list[float]], header: list[str], lit=frozenset()) -> dict:
    return {
        "title": title,
        "header": ["位置 ＼ 列"] + header,
        "rows": [[_cell(f"位置 {i}")] + [_cell(fmt.fmt(x), None, c in lit) for c, x in enumerate(row)]
                 for i, row in enumerate(m)],
    }  # fmt: skip


def _weight_table(title: str, w: list[list[float]], visible: list[list[bool]], current: int) -> dict:
    # The mark is written with the number: colour only adds to it; a forbidden cell says 禁止. The row the
    # explanation talks about is bold.
    return {
        "title": title,
        "header": fmt.keys(len(w[0])),
        "rows": [[_cell(f"位置 {i}", None, i == current)]
                 + [_cell(f"✓ {fmt.fmt(p)}", "allowed", i == current) if ok else _cell(fmt.FORBIDDEN, "forbidden", i == current)
                    for p, ok in zip(row, vis)]
                 for i, (row, vis) in enumerate(zip(w, visible))],
    }  # fmt: skip


def f14_frames(x=None, w_q=None, w_k=None, w_v=None, w_o=None, heads=None) -> list[dict]:
    """动态图解 F14：Q 按列切成头；头 0 与头 1 各用自己的列算出自己的权重表；拼接后乘 W_o。"""
    args = [d if a is None else a for a, d in zip((x, w_q, w_k, w_v, w_o), DEMO)]
    s = mh.multihead_steps(*args, mh.DEMO_HEADS if heads is None else heads)
    heads, d, n = s["heads"], s["head_dim"], len(s["q"])
    if heads < 2:
        raise ValueError("图 F14 要并排比较两个头：heads 至少为 2")
    labels = [f"列 {c}（头 {c // d}）" for c in range(heads * d)]
    cols = [mh.head_columns(h, d) for h in range(heads)]
    last = n - 1
    favs = [favourite(s["weights"][h][last]) for h in range(heads)]

    def head_frame(h: int, other: int | None) -> dict:
        sub = [f"列 {c}" for c in cols[h]]
        tables = [
            _matrix_table(f"头 {h} 的 Q：Q 的{column_span(cols[h])}，{shape(n, d)}", s["q_heads"][h], sub),
            _matrix_table(f"头 {h} 的 K：K 的{column_span(cols[h])}，{shape(n, d)}", s["k_heads"][h], sub),
            _weight_table(f"头 {h} 的权重表 {shape(n, n)}，加粗的是位置 {last}", s["weights"][h], s["visible"], last),
        ]
        text = (f"头 {h} 只用 Q、K 的{column_span(cols[h])}，每个点积只有 {d} 项（头维度为 {d}），分数除以 √{d}。"
                f"位置 {last} 在头 {h} 里的权重是 {slashed(s['weights'][h][last])}，最看重 Key {favs[h]}。")  # fmt: skip
        if other is not None:  # the other head's table is the frame before: compared in words only
            same = "同一个" if favs[h] == favs[other] else "不同的"
            text += (f"头 {other} 里它最看重 Key {favs[other]}：两个头最看重的是{same} Key。"
                     f"两张表的行、列都是同样的 {n} 个位置，禁止的格子也一样；不同的只是各自用的列。")  # fmt: skip
        side = f" 与它自己的权重表，对照头 {other}" if other is not None else " 与它自己的权重表"
        return {"condition": f"头 {h}：{column_span(cols[h])}" + side, "tables": tables,
                "rule": f"头 {h} = {column_span(cols[h])}；每行在可见的 Key 上求 softmax", "explanation": text}  # fmt: skip

    first = {
        "condition": f"投影后的 Q：{shape(n, heads * d)}，按列分给 {heads} 个头",
        "tables": [_matrix_table(f"Q = X · W_q，{shape(n, heads * d)}；头 0 的列加粗", s["q"], labels, set(cols[0]))],
        "rule": "；".join(f"头 {h} 用{column_span(cols[h])}" for h in range(heads)),
        "explanation": (f"Q 有 {n} 行（{'位置 0–' + str(n - 1) if n > 1 else '位置 0'}）、{heads * d} 列。切成头只切列，不切行："
                        + "，".join(f"头 {h} 拿{column_span(cols[h])}" for h in range(heads))
                        + f"，每个头都拿到全部 {n} 个位置。K、V 也按同样的列切开。"),
    }  # fmt: skip
    out_cols = len(s["output"][0])
    final = {
        "condition": f"拼接各头输出 {shape(n, heads * d)}，再乘输出矩阵",
        "tables": [
            _matrix_table(f"各头输出左右拼接，{shape(n, heads * d)}", s["concat"],
                           [f"头 {c // d} · 列 {c}" for c in range(heads * d)]),
            _matrix_table(f"输出 = 拼接 · W_o，{shape(n, out_cols)}", s["output"], [f"列 {c}" for c in range(out_cols)]),
        ],
        "rule": f"拼接：{heads} 块 {shape(n, d)} → {shape(n, heads * d)}；输出矩阵：{shape(heads * d, out_cols)}",
        "explanation": (f"每个头交出 {shape(n, d)} 的输出，按头的顺序左右拼回 {heads * d} 列，列的位置正是它在 Q 里占的位置。"
                        "输出矩阵再把各头的列混在一起：输出的每一列都可以同时用到所有头。"),
    }  # fmt: skip
    return [first, head_frame(0, None), head_frame(1, 0), final]


# -- 练习的解答 -------------------------------------------------------------------------------------------
def other_head_sentence(head: int, weights: list[float], other: int, other_weights: list[float]) -> str:
    """Exercise 1: the same query position in another head — the same keys, another row of weights."""
    weights, other_weights = att.as_vector(weights, "weights"), att.as_vector(other_weights, "other_weights")
    if len(weights) != len(other_weights):
        raise ValueError(f"weights 与 other_weights 必须一样长，收到 {len(weights)} 与 {len(other_weights)}")
    head, other = att.check_count(head, "head", minimum=0), att.check_count(other, "other", minimum=0)
    if head == other:
        raise ValueError(f"other 必须是另一个头，收到 head = other = {head}")
    a, b = favourite(weights), favourite(other_weights)
    if a == b:
        told = (f"两个头都最看重 Key {a}，但头 {head} 给它 {fmt.fmt(weights[a])}，头 {other} 给它 {fmt.fmt(other_weights[b])}。"
                if weights[a] != other_weights[b] else f"两个头都最看重 Key {a}，给它的权重也相同。")
    else:
        told = f"头 {head} 最看重 Key {a}，头 {other} 最看重 Key {b}。"
    return (f"头 {other} 在同一位置读的是同样的 {len(weights)} 个 Key，权重却是 {slashed(other_weights)}：{told}"
            "两个头用的列不同，点积就不同。")


def cols_sentence(rows: list[dict]) -> str:
    """Exercise 2: whether the K/V columns shrink by exactly the group size."""
    same = all(r["fraction"] == r["group_size"] for r in rows)
    sizes = "、".join(fmt.count(r["group_size"]) for r in rows)
    return (f"{len(rows)} 种 K/V 头数下，K/V 的列缩小的倍数" + ("都等于" if same else "并不都等于")
            + f"每组的查询头数（{sizes}）。")


def reshape_verdict(touched: list[int]) -> str:
    """Exercise 3: whether changing head 0's columns moves other heads too (the check then fails)."""
    touched = att.as_list(touched, "touched")
    if touched == [0]:
        return "只有头 0 变了：这项检查认不出这个错。"
    return "改了它们，头 0 之外的头也变了：这项检查失败，认得出这个错。"


# -- what each section of the page glues (``page.glue_all(page.<section>())``) -----------------------------
def _demo_steps() -> dict:
    return mh.multihead_steps(*DEMO, mh.DEMO_HEADS)


def inputs() -> dict:
    """The worked example's inputs as the 输入与适用条件 boxes name them."""
    x, s = DEMO[0], _demo_steps()
    values = {
        "n": fmt.count(len(x)), "d_model": fmt.count(len(x[0])), "heads": fmt.count(s["heads"]),
        "head_dim": fmt.count(s["head_dim"]), "last": fmt.count(len(x) - 1),
        "positions": f"位置 0 到 {fmt.count(len(x) - 1)}", "x_rows": fmt.vectors(x),
        "w_dims": "、".join(dict.fromkeys(dims(m) for m in DEMO[1:])),
    }
    values.update({f"{name}_rows": fmt.vectors(m) for name, m in zip(("wq", "wk", "wv", "wo"), DEMO[1:])})
    return values


def steps_values() -> dict:
    """从 X 到输出: every step's table, the split and the mix in words."""
    x, w_o, s = DEMO[0], DEMO[4], _demo_steps()
    heads, d, n = s["heads"], s["head_dim"], len(x)
    # Q, the weight tables, the concatenation and the output are the figure's: shown once, there.
    values = {"tbl_shapes": shape_rows(x, s), "fig_split": split_figure()}
    for name in ("k", "v"):
        values[f"tbl_{name}"] = (head_header(heads * d, d), positions(s[name]))
    for h in range(heads):
        values[f"tbl_scores_{h}"] = (fmt.keys(n), positions(att.scaled_scores(s["q_heads"][h], s["k_heads"][h])))
    values.update({
        "sqrt_head_dim": root(d), "split_sentence": split_sentence(heads, d),
        "mix_sentence": fmt.Md(mixing_sentence(output_heads(w_o, heads), heads)),
    })
    return values


def two_ways_values() -> dict:
    """两种常见写法: the fused version's shapes, both outputs and their difference."""
    both = two_ways(*DEMO, mh.DEMO_HEADS)
    return {"tbl_fused_shapes": fused_shape_rows(DEMO[0], DEMO[1], mh.DEMO_HEADS),
            "tbl_two_ways": (both["header"], both["rows"]), "two_ways_sentence": both["sentence"]}


def gqa_values() -> dict:
    """分组 K/V 头: the inputs, who uses which K/V head, the check against repeated K/V and the cache."""
    x, w_q, w_o = DEMO[0], DEMO[1], DEMO[4]
    heads = mh.GQA_HEADS
    d = len(w_q[0]) // heads
    plans = {"GQA": (mh.GQA_WK, mh.GQA_WV), "MQA": (mh.MQA_WK, mh.MQA_WV)}
    tables = gqa_tables(x, w_q, w_o, heads, plans)
    return {
        "gqa_heads": fmt.count(heads), "gqa_head_dim": fmt.count(d),
        "gqa_kv": fmt.count(len(mh.GQA_WK[0]) // d), "gqa_wk_rows": fmt.vectors(mh.GQA_WK),
        "gqa_wv_rows": fmt.vectors(mh.GQA_WV), "mqa_kv": fmt.count(len(mh.MQA_WK[0]) // d),
        "mqa_wk_rows": fmt.vectors(mh.MQA_WK), "mqa_wv_rows": fmt.vectors(mh.MQA_WV),
        "tbl_groups": tables["groups"], "tbl_gqa": tables["checks"],
        "gqa_repeat_example": fmt.vectors(mh.repeat_kv_columns(mh.GQA_WK, heads, len(mh.GQA_WK[0]) // d)),
    }


def experts_values() -> dict:
    """误解一: how each head reads the last position."""
    s = _demo_steps()
    view = head_view_rows(s, len(DEMO[0]) - 1)
    return {"experts_sentence": head_view_sentence(view)}


def head_dim_values(config: dict = GEMMA_7B) -> dict:
    """误解二: a stated head_dim beside hidden_size / heads, and the error when heads does not divide d_model."""
    c = config_head_dim(config)
    s, pos = _demo_steps(), WRONG_D_POS
    q, keys = s["q_heads"][0][pos], s["k_heads"][0][: pos + 1]  # head 0, one causal row
    dots = [sum(a * b for a, b in zip(q, k)) for k in keys]
    d_model = len(DEMO[0][0])
    right, wrong = (att.softmax([x / math.sqrt(r) for x in dots]) for r in (s["head_dim"], d_model))
    try:
        mh.multihead_attention(*DEMO, 3)
    except ValueError as error:
        divide_error = str(error)
    return {
        "gemma_hidden": fmt.count(config["hidden_size"]), "gemma_heads": fmt.count(config["num_attention_heads"]),
        "gemma_head_dim": fmt.count(config["head_dim"]), "gemma_kv": fmt.count(config["num_key_value_heads"]),
        "gemma_derived": fmt.short(c["derived"]), "gemma_product": fmt.count(c["heads_times_head_dim"]),
        "gemma_params": fmt.count(c["params_stated"]), "gemma_params_derived": fmt.count(c["params_if_derived"]),
        "divide_error": fmt.Md(f"`ValueError: {divide_error}`"), "sqrt_d_model": root(d_model),
        "wrong_pos": fmt.count(pos), "right_row": slashed(right), "wrong_row": slashed(wrong),
    }


def checks_values() -> dict:
    """如何判断是否做对: the checks on the worked example and how many passed."""
    heads = mh.DEMO_HEADS
    rows = mh.check_rows(*DEMO, heads, heads, head=BUMP_HEAD, delta=BUMP_DELTA)
    return {"bump_head": fmt.count(BUMP_HEAD), "bump_delta": fmt.short(BUMP_DELTA),
            "tbl_checks": checks_table(rows), "checks_sentence": check_sentence(rows)}


def cost_values(n: int = COST_N, d_model: int = COST_D_MODEL, heads_list=COST_HEADS, fixed: int = COST_FIXED) -> dict:
    """头数变了，什么不变: the two cost tables and the sentences read from their rows."""
    split = cost_rows(n, d_model, heads_list)
    same_dim = cost_rows(n, d_model, heads_list, head_dim=fixed)
    return {
        "cost_n": fmt.count(n), "cost_d_model": fmt.count(d_model), "cost_fixed": fmt.count(fixed),
        "tbl_cost_split": cost_table(split), "tbl_cost_fixed": cost_table(same_dim),
        "cost_split_sentence": cost_sentence(split), "cost_fixed_sentence": cost_sentence(same_dim),
    }


def exercise_split() -> dict:
    """Exercise 1: cut Q into heads, then one head's row of weights, step by step; the other head beside it."""
    a = ex.split_and_row()
    d = a["head_dim"]
    values = {
        "ex1_n": fmt.count(len(ex.SPLIT_Q)), "ex1_cols": fmt.count(len(ex.SPLIT_Q[0])),
        "ex1_heads": fmt.count(ex.SPLIT_HEADS), "ex1_q": fmt.vectors(ex.SPLIT_Q), "ex1_k": fmt.vectors(ex.SPLIT_K),
        "ex1_head": fmt.count(ex.ROW_HEAD), "ex1_pos": fmt.count(ex.ROW_POS), "ex1_d": fmt.count(d),
        "ex1_columns": "；".join(f"头 {h} 拿" + columns_text(cols) for h, cols in enumerate(a["columns"])),
    }
    for h, block in enumerate(a["q_heads"]):
        values[f"ex1_block_{h}"] = (["位置 ＼ 列"] + [f"列 {c}" for c in a["columns"][h]], positions(block, 0))
    values.update({
        "ex1_q_row": fmt.vector(a["q_row"]), "ex1_k_rows": fmt.vectors(a["k_rows"]),
        "ex1_visible_keys": "、".join(f"Key {j}" for j in range(ex.ROW_POS + 1)), "ex1_sqrt": root(d),
        "ex1_steps": (["步骤"] + [f"Key {j}" for j in range(ex.ROW_POS + 1)], [
            ["点积 q·k"] + [fmt.fmt(x) for x in a["dots"]],
            [f"÷ √{d}"] + [fmt.fmt(x) for x in a["scaled"]],
            ["− 最大值"] + [fmt.fmt(x - a["max"]) for x in a["scaled"]],
            ["exp"] + [fmt.fmt(x) for x in a["exps"]],
            ["÷ 指数之和（权重）"] + [fmt.fmt(x) for x in a["weights"]],
        ]),
        "ex1_total": fmt.fmt(a["total"]), "ex1_other": fmt.count(a["other_head"]),
        "ex1_compare": other_head_sentence(ex.ROW_HEAD, a["weights"], a["other_head"], a["other_weights"]),
    })
    return values


def exercise_gqa() -> dict:
    """Exercise 2: which K/V head each query head uses, and the K/V columns for each number of K/V heads."""
    plan = ex.gqa_plan()
    return {
        "ex2_heads": fmt.count(ex.GQA_HEADS), "ex2_kv_list": "、".join(fmt.count(kv) for kv in ex.GQA_KV_CHOICES),
        "ex2_d": fmt.count(ex.GQA_HEAD_DIM),
        "ex2_ask_kv": fmt.count(ex.GQA_ASK_KV), "ex2_ask_group": fmt.count(ex.GQA_ASK_GROUP),
        "ex2_groups": (["K/V 头数", "每组查询头数"] + [f"查询头 {h}" for h in range(ex.GQA_HEADS)],
                       [[fmt.count(r["kv_heads"]), fmt.count(r["group_size"])] + [fmt.count(g) for g in r["groups"]]
                        for r in plan]),
        "ex2_cols": (["K/V 头数", "K 的列数（K/V 头数 · 头维度）", "缩小到几分之一"],
                     [[fmt.count(r["kv_heads"]), f"{r['kv_heads']} · {ex.GQA_HEAD_DIM} = {fmt.count(r['kv_cols'])}",
                       fmt.count(r["fraction"])] for r in plan]),
        "ex2_sharing": "、".join(f"查询头 {h}" for h in ex.sharing_heads()),
        "ex2_cols_sentence": cols_sentence(plan),
    }  # fmt: skip


def exercise_reshape() -> dict:
    """Exercise 3: the right and the swapped reshape of one row of Q, and what changing head 0 moves."""
    a = ex.reshape_split()
    rows = [[f"头 {c}", columns_text(a["right_cols"][c]), fmt.vector(a["right"][c]),
             columns_text(a["wrong_cols"][c]), fmt.vector(a["wrong"][c])] for c in range(ex.RESHAPE_HEADS)]
    return {
        "ex3_row": fmt.vector(ex.RESHAPE_ROW), "ex3_heads": fmt.count(ex.RESHAPE_HEADS), "ex3_d": fmt.count(a["head_dim"]),
        "ex3_table": (["头", "`(n, h, d_head)`：列", "数", "`(n, d_head, h)`：列", "数"], rows),
        "ex3_head0_cols": columns_text(a["right_cols"][0]),
        "ex3_touched": "、".join(f"头 {c}" for c in a["touched"]), "ex3_verdict": reshape_verdict(a["touched"]),
    }  # fmt: skip


def exercise_code() -> dict:
    """Exercise 4: the doctest the reader's function must pass."""
    return {"ex4_doctest": fmt.Md(fmt.doctest_block(ex.attention_params))}
