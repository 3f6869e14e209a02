"""What the scaling page (ch02/scaling.md) glues, from ``code/02_scaling.py``, and F13's frames."""

from __future__ import annotations

import importlib
import math
import statistics
import sys
import warnings

import numpy as np

from chapter import fmt
from chapter.fmt import Md, Table, glue_all  # noqa: F401 (the page calls page.glue_all)

att = importlib.import_module("02_attention")
PAGE = "缩放一页"  # how fmt.holds names this page when a fixed sentence fails
sc = importlib.import_module("02_scaling")
ex = importlib.import_module("02_exercises_scaling")

Q = sc.EXAMPLE_Q
K = sc.EXAMPLE_K
V = sc.EXAMPLE_V
ROW = sc.QUERY
TOL = 1e-12  # how far outside V's range an output may be and still count as inside (rounding)

# F13: each step's name and rule
STEP_NAMES = [
    "分数（点积、除以 √d）",
    "权重（减去最大值、取指数、除以总和）",
    "输出（按权重混合 V 的行）",
]
RULES = ["s_j = q·k_j ÷ √d", "w_j = exp(s_j − max s) ÷ Σ exp", "o = Σ w_j v_j"]


def python_list(xs, cell=fmt.short) -> str:  # a row of scores as Python prints a list
    return "[" + ", ".join(cell(x) for x in xs) + "]"


def products(q, k) -> str:
    return " + ".join(f"{fmt.short(a)}×{fmt.short(b)}" for a, b in zip(q, k))


def slashed(xs) -> str:
    return " / ".join(fmt.fmt(x) for x in xs)


def numpy_reference(q, k, v):
    """检查第 4 项的独立参照：softmax(Q K^T / √d) V，用 numpy 数组从头再写一遍。"""
    q = np.asarray(q, dtype=float)
    k = np.asarray(k, dtype=float)
    v = np.asarray(v, dtype=float)
    scores = q @ k.T / np.sqrt(k.shape[1])  # (n_query, n_key)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ v  # (n_query, d_v)


def inside(
    outputs, values
) -> list[bool]:  # for each output row: is every component within V's column?
    cols = list(zip(*values))
    return [all(min(c) - TOL <= x <= max(c) + TOL for x, c in zip(o, cols)) for o in outputs]


def printed_sum(
    xs, total: float
) -> str:  # "= total" when the printed terms add up to it, else "≈ total"
    return f"{fmt.equals(sum(fmt.printed(fmt.fmt(x)) for x in xs), total)} {fmt.fmt(total)}"


def inputs(q=Q, k=K, v=V, row=ROW) -> dict:
    """F13's inputs, as its 输入与适用条件 box names them."""
    return {
        "f13_q": fmt.vector(q[row]),
        "f13_k": fmt.vectors(k),
        "f13_v": fmt.vectors(v),
        "ex_q": fmt.vectors(q),
        "n_queries": fmt.count(len(q)),
        "f13_frames": fmt.count(len(STEP_NAMES)),
        "f13_d": fmt.count(len(q[0])),
        "f13_n": fmt.count(len(k)),
        "f13_row": fmt.count(row),
    }


def measurement(
    dims=sc.MEASURE_DIMS, trials=sc.MEASURE_TRIALS, n_keys=sc.MEASURE_KEYS, seed=sc.MEASURE_SEED
) -> dict:
    """The tables of ``measure_scaling``, their sentences' numbers, and F13's ÷√d against T = √d."""
    measured = [sc.measure_scaling(d, trials=trials, n_keys=n_keys, seed=seed) for d in dims]
    small = measured[0]
    big = measured[-1]
    scaled_var = [m["var_scaled"] for m in measured]
    raw_w = [m["max_weight_raw"] for m in measured]
    scaled_w = [m["max_weight_scaled"] for m in measured]
    keys = ("max_weight_raw", "max_weight_scaled", "grad_raw", "grad_scaled")
    lower = [m["d"] for m in measured if m["grad_scaled"] < m["grad_raw"]]
    higher = [m["d"] for m in measured if m["d"] not in lower]
    s = sc.visible_steps(Q[ROW], K, V)
    same = att.softmax(s["dots"], temperature=s["scale"])
    fmt.holds(
        PAGE,
        {
            "不缩放的最大权重随 d 一路变大": raw_w == sorted(set(raw_w)),
            "缩放后的最大权重只在一个窄得多的范围里变": max(scaled_w) - min(scaled_w)
            < (max(raw_w) - min(raw_w)) / 4,
            "有的 d 上缩放后的雅可比最大元反而略小，而且都是较小的 d": bool(lower)
            and bool(higher)
            and max(lower) < min(higher),
            "除以 √d 的权重与温度 T = √d 的权重完全相同": att.max_abs_diff([s["weights"]], [same])
            == 0,
        },
    )
    return {
        "meas_dims": "、".join(fmt.count(d) for d in dims),
        "meas_trials": fmt.count(trials),
        "meas_keys": fmt.count(n_keys),
        "meas_seed": fmt.count(seed),
        "meas_uniform": fmt.fmt(1 / n_keys),
        "tbl_variance": Table(
            ["d", "q·k 的方差", "q·k / √d 的方差"],
            [
                [fmt.count(m["d"]), fmt.fmt(m["var_raw"]), fmt.fmt(m["var_scaled"])]
                for m in measured
            ],
        ),
        "meas_scaled_range": f"{fmt.fmt(min(scaled_var))} 到 {fmt.fmt(max(scaled_var))}",
        "meas_lower_ds": "、".join(f"d = {fmt.count(d)}" for d in lower),
        "tbl_saturation": Table(
            [
                "d",
                "最大权重：不缩放",
                "最大权重：缩放",
                "雅可比最大元：不缩放",
                "雅可比最大元：缩放",
            ],
            [[fmt.count(m["d"])] + [fmt.fmt(m[key]) for key in keys] for m in measured],
        ),
        "meas_small_d": fmt.count(small["d"]),
        "meas_big_d": fmt.count(big["d"]),
        "meas_small_w_raw": fmt.fmt(small["max_weight_raw"]),
        "meas_big_w_raw": fmt.fmt(big["max_weight_raw"]),
        "meas_w_scaled_range": f"{fmt.fmt(min(scaled_w))} 到 {fmt.fmt(max(scaled_w))}",
        "meas_big_g_raw": fmt.fmt(big["grad_raw"]),
        "meas_big_g_scaled": fmt.fmt(big["grad_scaled"]),
        "temp_sqrt_d": fmt.fmt(s["scale"]),
    }


def overflow(scores=sc.BIG_SCORES, small=sc.SMALL_SCORES) -> dict:
    """A row whose exp overflows in Python, numpy and the naive formula; each format's limit; an underflow."""
    under = [math.exp(y - max(small)) for y in small]
    if max(scores) <= sc.exp_limit() or all(e > 0 for e in under):
        raise ValueError(
            "这一节要一行会溢出的分数（scores）和一行减去最大值后会下溢的分数（small）"
        )
    try:
        math.exp(max(scores))
    except OverflowError as error:
        python = f"{type(error).__name__}: {error}"
    # numpy raises nothing: it warns (RuntimeWarning) and goes on; the warnings are recorded, not silenced.
    with warnings.catch_warnings(record=True) as caught, np.errstate(over="warn", invalid="warn"):
        warnings.simplefilter("always")
        e = np.exp(np.array(scores))
        naive = e / e.sum()
    try:
        sc.naive_softmax(scores)
    except ValueError as error:
        naive_error = str(error)
    limits = [(name, float(np.finfo(name).max)) for name in ("float16", "float32", "float64")]
    f16_limit = sc.exp_limit(limits[0][1])
    # every float16 from 11 to 12 (0x4980 to 0x4A00): exp in float16 is inf exactly above the limit;
    # a float32 score just above it, its exp cast to float16 afterwards, is still finite.
    halves = np.arange(0x4980, 0x4A01, dtype=np.uint16).view(np.float16)
    just_above = np.nextafter(np.float32(f16_limit), np.float32(np.inf))
    with np.errstate(over="ignore"):
        f16_exps = np.exp(halves)
        cast_later = np.exp(just_above).astype(np.float16)
    fmt.holds(
        PAGE,
        {
            "float16 的分数超过界时 exp 是 inf，不超过时有限": bool(
                np.all(np.isinf(f16_exps) == (halves.astype(float) > f16_limit))
            ),
            "float32 的分数略超过界，exp 转成 float16 仍有限": bool(np.isfinite(cast_later)),
        },
    )
    return {
        "big_max": fmt.short(max(scores)),
        "big_scores": python_list(scores),
        "py_overflow": python,
        "np_warnings": "；".join(
            dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught)
        ),
        "np_exp": str([float(x) for x in e]),
        "np_naive": str([float(x) for x in naive]),  # as Python prints them
        "naive_error": naive_error,
        "stable_big": python_list(att.softmax(scores), cell=fmt.fmt),
        "py_limit": fmt.fmt(sc.exp_limit(sys.float_info.max)),
        "tbl_limits": Table(
            ["格式", "最大有限值", "exp 不溢出的最大参数 ln(最大值)"],
            [[name, fmt.sci(x), fmt.fmt(sc.exp_limit(x))] for name, x in limits],
        ),
        "f16_limit": fmt.fmt(f16_limit),
        "under_scores": python_list(small),
        "under_exps": python_list(under, cell=fmt.fmt),
        "under_weights": python_list(att.softmax(small), cell=fmt.fmt),
    }


def axis(q=Q, k=K, v=V) -> dict:
    """Softmax over the rows (right) and over the columns (wrong), each with its row and column sums."""
    right, _ = att.attention(q, k, v, causal=False)
    wrong = sc.softmax_over_queries(att.scaled_scores(q, k))
    header = fmt.keys(len(k)) + ["行之和"]

    def sums(m):
        rows = [
            [f"查询 {i}"] + [fmt.fmt(x) for x in row] + [fmt.fmt(sum(row))]
            for i, row in enumerate(m)
        ]
        return rows + [["列之和"] + [fmt.fmt(sum(col)) for col in zip(*m)] + [""]]

    outputs = att.matmul(wrong, v)
    fmt.holds(
        PAGE,
        {
            "按列做 softmax 时每一列之和是 1": all(
                fmt.fmt(sum(col)) == fmt.fmt(1.0) for col in zip(*wrong)
            ),
            "按列做 softmax 时每一行之和都不是 1": all(
                fmt.fmt(sum(row)) != fmt.fmt(1.0) for row in wrong
            ),
            "这些输出都还在 V 各列的范围之内": all(inside(outputs, v)),
        },
    )
    return {
        "tbl_axis_right": Table(header, sums(right)),
        "tbl_axis_wrong": Table(header, sums(wrong)),
        "axis_wrong_shown": "、".join(fmt.vector(o, fmt.fmt) for o in outputs),
    }


def checks(q=Q, k=K, v=V, row=ROW, shift=1000, order=(2, 0, 1), heads=sc.N_HEADS) -> dict:
    """The four checks, each on the right implementation and on the mistake it is meant to catch."""
    right, out = att.attention(q, k, v, causal=False)
    wrong = sc.softmax_over_queries(att.scaled_scores(q, k))
    scaled = sc.visible_steps(q[row], k, v)["scaled"]
    moved = [x + shift for x in scaled]
    try:
        sc.naive_softmax(moved)
    except ValueError as error:
        overflowed = "exp 溢出" in str(error)
    else:
        overflowed = False
    fmt.holds(PAGE, {"分数加上这个常数后，不减最大值的原式 exp 溢出而报错": overflowed})
    _, both = att.attention(q, [k[j] for j in order], [v[j] for j in order], causal=False)
    _, keys_only = att.attention(q, [k[j] for j in order], v, causal=False)
    reference = numpy_reference(q, k, v).tolist()
    width = heads * len(q[0])
    by_width = [sc.scaled_by(qi, k, v, width)["output"] for qi in q]
    root = math.sqrt(width)  # the variant divides by √(model width) instead of √d

    def gap(a, b):
        return fmt.difference(att.max_abs_diff(a, b))

    def sums(w):
        # (each row's total against 1)
        return gap([[sum(r) for r in w]], [[1.0] * len(w)])

    return {
        "chk_shift": fmt.short(shift),
        "chk_order": "、".join(f"Key {j}" for j in order),
        "chk_heads": fmt.count(heads),
        "chk_width": fmt.count(width),
        "chk_root": fmt.count(int(root)) if root.is_integer() else fmt.fmt(root),
        "chk_sum_right": sums(right),
        "chk_sum_wrong": sums(wrong),
        "chk_shift_right": gap([att.softmax(scaled)], [att.softmax(moved)]),
        "chk_order_right": gap(out, both),
        "chk_order_wrong": gap(out, keys_only),
        "chk_numpy_right": gap(out, reference),
        "chk_numpy_wrong": gap(by_width, reference),
    }


def sweep(q=Q, k=K, v=V, row=ROW, temperatures=sc.TEMPERATURES) -> dict:
    """The temperature table and, from its rows, the coldest's and hottest's peaks and distances."""
    scaled = sc.visible_steps(q[row], k, v)["scaled"]
    rows = sc.temperature_sweep(scaled, v, temperatures)
    ends = [min(rows, key=lambda r: r["temperature"]), max(rows, key=lambda r: r["temperature"])]
    if ends[0] is ends[1]:
        raise ValueError("temperatures 至少要有两个不同的温度，才谈得上“从……增到……”")
    top = max(
        range(len(v)), key=lambda j: ends[0]["weights"][j]
    )  # the largest weight at the lowest T
    mean = [statistics.fmean(col) for col in zip(*v)]
    cells = {
        "t": lambda r: fmt.short(r["temperature"]),
        "peak": lambda r: fmt.fmt(max(r["weights"])),
        "to_top": lambda r: fmt.fmt(math.dist(r["output"], v[top])),
        "to_mean": lambda r: fmt.fmt(math.dist(r["output"], mean)),
    }
    return {
        "sweep_scores": python_list(scaled, cell=fmt.fmt),
        "sweep_ts": "、".join(fmt.short(t) for t in temperatures),
        "tbl_sweep": Table(
            [
                "温度 T",
                "权重（Key " + " / ".join(str(j) for j in range(len(k))) + "）",
                "最大权重",
                "输出",
            ],
            [
                [
                    fmt.short(r["temperature"]),
                    slashed(r["weights"]),
                    fmt.fmt(max(r["weights"])),
                    fmt.vector(r["output"], fmt.fmt),
                ]
                for r in rows
            ],
        ),
        "sweep_top": fmt.count(top),
        "sweep_top_v": fmt.vector(v[top]),
        "sweep_mean": fmt.vector(mean, fmt.fmt),
        **{
            f"sweep_{name}_{i}": cell(r) for i, r in enumerate(ends) for name, cell in cells.items()
        },
    }


def weighted_row(w: float, vj, exact) -> str:
    """A weight times a V row, ``0.6225 × (4, 0) ≈ (2.4898, 0.0000)``: "=" only when the printed
    weight times the row prints as the printed result in every component."""
    signs = {fmt.equals(fmt.printed(fmt.fmt(w)) * y, c) for y, c in zip(vj, exact)}
    sign = "=" if signs == {"="} else "≈"
    return f"{fmt.fmt(w)} × {fmt.vector(vj)} {sign} {fmt.vector(exact, fmt.fmt)}"


def exp_term(x: float, e: float) -> str:
    """``exp(−0.5000) = 0.6065``: "=" only when exp of the printed x prints as the printed value."""
    return f"exp({fmt.fmt(x)}) {fmt.equals(math.exp(fmt.printed(fmt.fmt(x))), e)} {fmt.fmt(e)}"


def f13_explanations(s: dict, v) -> list[str]:
    """One sentence a step, written from its numbers (which key is largest, = or ≈, inside V's range)."""
    scores = s["dots"]
    total = printed_sum(s["exps"], s["total"])
    top = "、".join(f"Key {j}" for j, x in enumerate(scores) if x == max(scores))
    sums = "；".join(
        f"q·k_{j} = {products(s['query'], kj)} = {fmt.fmt(x)}"
        for j, (kj, x) in enumerate(zip(s["keys"], scores))
    )
    return [
        f"逐分量相乘再相加：{sums}"
        + (f"（{top} 最大）。" if max(scores) > min(scores) else "（各分数相等）。")
        + f"再除以 √d = {fmt.fmt(s['scale'])}：顺序不变，差距缩成原来的 1/√d。",
        f"减去最大值 {fmt.fmt(s['max'])}，再取指数："
        + "，".join(exp_term(x, e) for x, e in zip(s["shifted"], s["exps"]))
        + f"；和 {total}{'' if total[0] == '=' else '（由未舍入的指数相加）'}。每一项除以和，得到和为 1 的权重。",
        "V 行乘以权重："
        + "；".join(
            f"Key {j}：{weighted_row(*t)}"
            for j, t in enumerate(zip(s["weights"], v, s["weighted"]))
        )
        + f"。逐分量相加，输出是 {fmt.vector(s['output'], fmt.fmt)}"
        + (
            "，每个分量都在 V 那一列的范围之内。"
            if inside([s["output"]], v)[0]
            else "——不对，它跑到了 V 的范围之外，权重算错了。"
        ),
    ]


def f13_frames(query=None, keys=None, values=None) -> list[dict]:
    """Figure F13's frames (the page's query row by default): each step adds its rows to one table, marked."""
    q = Q[ROW] if query is None else query
    k = K if keys is None else keys
    v = V if values is None else values
    s = {**sc.visible_steps(q, k, v), "query": q, "keys": k}

    def cells(key):
        return [fmt.fmt(x) for x in s[key]]

    rows = [  # (the step that adds it, label, one cell per key, the whole row's cell)
        (0, "分数 q·k", cells("dots"), f"q = {fmt.vector(s['query'])}"),
        (0, "÷ √d", cells("scaled"), f"d = {s['d']}，√d = {fmt.fmt(s['scale'])}"),
        (1, "− 最大值", cells("shifted"), f"最大值 = {fmt.fmt(s['max'])}"),
        (1, "exp", cells("exps"), f"和 {printed_sum(s['exps'], s['total'])}"),
        (
            1,
            "÷ 和 = 权重",
            cells("weights"),
            f"权重之和 {printed_sum(s['weights'], sum(s['weights']))}",
        ),
        (2, "V 行", [fmt.vector(vj) for vj in v], ""),
        (
            2,
            "权重 × V 行",
            [fmt.vector(c, fmt.fmt) for c in s["weighted"]],
            f"输出 = {fmt.vector(s['output'], fmt.fmt)}",
        ),
    ]
    texts = f13_explanations(s, v)
    header = fmt.keys(len(k), corner="步骤 ＼ Key") + ["整行"]
    return [
        {
            "condition": f"第{step + 1}步：{name}",
            "rule": RULES[step],
            "explanation": texts[step],
            "tables": [
                {
                    "title": "一个查询行",
                    "header": header,
                    "rows": [
                        [
                            {"text": t, "state": None, "highlight": at == step}
                            for t in [label, *cells, whole]
                        ]
                        for at, label, cells, whole in rows
                        if at <= step
                    ],
                }
            ],
        }
        for step, name in enumerate(STEP_NAMES)
    ]


def exercise_hand(q=ex.HAND_Q, k=ex.HAND_K, g=ex.HAND_G) -> dict:
    """Exercise 1: the inputs, the steps to the weights, J row by row, J·g and how it compares with J's peak."""
    h = ex.hand_row(q, k, g)
    steps = [
        ["点积（逐项相乘再相加）"]
        + [f"{products(q, kj)} = {fmt.fmt(x)}" for kj, x in zip(k, h["dots"])]
    ]
    steps += [
        [name] + [fmt.fmt(x) for x in h[key]]
        for name, key in (
            ("÷ √d", "scaled"),
            ("− 最大值", "shifted"),
            ("exp", "exps"),
            ("÷ 指数之和（权重 p）", "weights"),
        )
    ]
    steps += [
        [f"J 的第 {i} 行（∂p_{i}/∂s_j）"] + [fmt.fmt(x) for x in row]
        for i, row in enumerate(h["jacobian"])
    ]
    top = max(abs(x) for x in h["jg"])
    fmt.holds(PAGE, {"J g 绝对值最大的分量超过 J 的最大元": top > h["peak"]})
    return {
        "ex1_q": fmt.vector(q),
        "ex1_k": fmt.vectors(k),
        "ex1_g": fmt.vector(g),
        "ex1_d": fmt.count(h["d"]),
        "ex1_n": fmt.count(len(k)),
        "ex1_steps": Table(fmt.keys(len(k), corner="步骤"), steps),
        "ex1_sqrt": fmt.fmt(h["scale"]),
        "ex1_total": printed_sum(h["exps"], h["total"]),
        "ex1_peak": fmt.fmt(h["peak"]),
        "ex1_jg": fmt.vector(h["jg"], fmt.fmt),
        "ex1_ratio": fmt.multiple(top / h["peak"]),
    }


def exercise_grow(q=ex.GROW_Q, k=ex.GROW_K, copies=ex.COPIES) -> dict:
    """Exercise 2: the three ways to score the row (d; copied and scaled; copied and not) and the comparison."""
    r = ex.copied_row(q, k, copies)
    d = fmt.count(r["d"])
    big = fmt.count(r["d_big"])
    rows = [
        (f"d = {d}，除以 √{d}", "scaled", 1.0, "weights"),
        (f"d = {big}，除以 √{big}", "scaled_big", r["temperature_big"], "weights_big"),
        (f"d = {big}，不缩放", "dots_big", r["temperature_raw"], "weights_raw"),
    ]
    raw = r["weights_raw"]
    top = max(range(len(raw)), key=lambda j: raw[j])
    same = att.softmax(r["scaled"], temperature=r["temperature_big"])
    fmt.holds(
        PAGE,
        {
            "复制后除以 √d 的权重与原来那一行换温度后的权重完全相同": att.max_abs_diff(
                [r["weights_big"]], [same]
            )
            == 0,
            "不缩放时几乎全部权重给了一个 Key（超过 0.9）": raw[top] > 0.9,
        },
    )
    return {
        "ex2_q": fmt.vector(q),
        "ex2_k": fmt.vectors(k),
        "ex2_copies": fmt.count(copies),
        "ex2_n": fmt.count(len(k)),
        "ex2_d": d,
        "ex2_d_big": big,
        "ex2_dots": slashed(r["dots"]),
        "ex2_dots_big": slashed(r["dots_big"]),
        "ex2_table": Table(
            [
                "分数的算法",
                "分数（Key " + " / ".join(str(j) for j in range(len(k))) + "）",
                f"相当于 d = {d} 那一行的温度",
                "权重",
                "最大权重",
            ],
            [
                [name, slashed(r[s]), fmt.fmt(t), slashed(r[w]), fmt.fmt(max(r[w]))]
                for name, s, t, w in rows
            ],
        ),
        "ex2_t_big": fmt.fmt(r["temperature_big"]),
        "ex2_t_raw": fmt.fmt(r["temperature_raw"]),
        "ex2_peak_raw": fmt.fmt(raw[top]),
        "ex2_top": fmt.count(top),
    }


def exercise_code() -> dict:
    """Exercise 3: a row of scores to try, and the doctest the reader's function must pass."""
    return {
        "ex3_scores": python_list(ex.CODE_SCORES),
        "ex3_doctest": Md(fmt.doctest_block(ex.shifted_softmax)),
    }
