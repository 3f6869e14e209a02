"""The scaling page's book side: one function per section of book/ch02/scaling.md, each a page.Section.

The page types each example's inputs ({input} roles naming the teaching files' constants, or ``SHIFT``
below); a section glues what the run computes and checks the facts of the page's fixed sentences with
``Section.holds``. ``f13_frames`` gives figure F13's frames, each sentence written from its step's numbers.
"""

from __future__ import annotations

import importlib
import math
import statistics
import sys
import warnings

import numpy as np

from chapter import fmt
from chapter.page import Col, Section, key, keys, listing

att = importlib.import_module("02_attention")
sc = importlib.import_module("02_scaling")
ex = importlib.import_module("02_exercises_scaling")

PAGE = "缩放一页"
# The checks' inputs that no teaching file has (the page types SHIFT; tests/test_typed_inputs.py compares).
SHIFT = 1000  # added to the scaled scores of F13's row
ORDER = (2, 0, 1)  # the keys (and values) reordered
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


def products(q, k, exact: float) -> fmt.Calculation:
    """The dot product q·k written out from the inputs as typed: ``1×2 + 2×1 = 4.0000``."""
    return fmt.products([(fmt.short(a), fmt.short(b)) for a, b in zip(q, k)], exact)


def between(xs) -> str:
    """The range of computed values, as the page says 「在 … 之间」: ``0.9816 到 1.0549``."""
    return f"{fmt.fmt(min(xs))} 到 {fmt.fmt(max(xs))}"


def numpy_reference(q, k, v):
    """检查第 4 项的独立参照：softmax(Q K^T / √d) V，用 numpy 数组从头再写一遍。"""
    q = np.asarray(q, dtype=float)
    k = np.asarray(k, dtype=float)
    v = np.asarray(v, dtype=float)
    scores = q @ k.T / np.sqrt(k.shape[1])  # (n_query, n_key)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ v  # (n_query, d_v)


def inside(outputs, values) -> list[bool]:
    """For each output row: is every component within V's column?"""
    cols = list(zip(*values))
    return [all(min(c) - TOL <= x <= max(c) + TOL for x, c in zip(o, cols)) for o in outputs]


def row_parts(w: float, vj, exact) -> list[fmt.Calculation]:
    """A weight times a V row, one calculation per component (``0.6225×4 ≈ 2.4898``)."""
    return [
        fmt.Calculation(f"{fmt.fmt(w)}×{fmt.short(y)}", fmt.printed(fmt.fmt(w)) * y, c)
        for y, c in zip(vj, exact)
    ]


def weighted_row(w: float, vj, exact) -> str:
    """A weight times a V row, ``0.6225 × (4, 0) ≈ (2.4898, 0.0000)``: "=" only when the printed
    weight times the row prints as the printed result in every component."""
    sign = "=" if all(p.result.startswith("=") for p in row_parts(w, vj, exact)) else "≈"
    return f"{fmt.fmt(w)} × {fmt.vector(vj)} {sign} {fmt.vector(exact, fmt.fmt)}"


def exp_term(x: float, e: float) -> fmt.Calculation:
    """``exp(−0.5000) = 0.6065``: "=" only when exp of the printed x prints as the printed value."""
    return fmt.Calculation(f"exp({fmt.fmt(x)})", math.exp(fmt.printed(fmt.fmt(x))), e)


def weight_sums(s: Section, name: str, weights) -> None:
    """A table of weights, query by key, each row with its sum and a last row of the columns' sums."""
    rows = [(f"查询 {i}", row, fmt.fmt(sum(row))) for i, row in enumerate(weights)]
    rows.append(("列之和", [sum(col) for col in zip(*weights)], ""))
    s.table(
        name,
        rows,
        Col("查询 ＼ Key", lambda r: r[0], "text"),
        *[Col(key(j), lambda r, j=j: r[1][j]) for j in range(len(weights[0]))],
        Col("行之和", lambda r: r[2], "text"),
    )


# -- figure F13 ---------------------------------------------------------------------------------------------
def f13_explanations(s: dict, v) -> list[str]:
    """One sentence a step, written from its numbers (which key is largest, = or ≈, inside V's range)."""
    scores = s["dots"]
    total = fmt.printed_sum(s["exps"], s["total"])
    top = keys(j for j, x in enumerate(scores) if x == max(scores))
    dots = [products(s["query"], kj, x) for kj, x in zip(s["keys"], scores)]
    exps = [exp_term(x, e) for x, e in zip(s["shifted"], s["exps"])]
    rows = [row_parts(*t) for t in zip(s["weights"], v, s["weighted"])]
    Section(PAGE, "F13").holds(
        written_dots_add_up=all(c.adds_up for c in dots),
        written_exps_add_up=all(c.adds_up for c in exps),
        written_sum_adds_up=total.adds_up,
        written_rows_add_up=all(p.adds_up for row in rows for p in row),
    )
    sums = "；".join(f"q·k_{j} = {c}" for j, c in enumerate(dots))
    return [
        f"逐分量相乘再相加：{sums}"
        + (f"（{top} 最大）。" if max(scores) > min(scores) else "（各分数相等）。")
        + f"再除以 √d = {fmt.fmt(s['scale'])}：顺序不变，差距缩成原来的 1/√d。",
        f"减去最大值 {fmt.fmt(s['max'])}，再取指数："
        + "，".join(str(c) for c in exps)
        + f"；和 {total.result}{'' if total.result.startswith('=') else '（由未舍入的指数相加）'}。每一项除以和，得到和为 1 的权重。",
        "V 行乘以权重："
        + "；".join(
            f"{key(j)}：{weighted_row(*t)}"
            for j, t in enumerate(zip(s["weights"], v, s["weighted"]))
        )
        + f"。逐分量相加，输出是 {fmt.vector(s['output'], fmt.fmt)}"
        + (
            "，每个分量都在 V 那一列的范围之内。"
            if inside([s["output"]], v)[0]
            else "——不对，它跑到了 V 的范围之外，权重算错了。"
        ),
    ]


def row_frames(q, k, v) -> list[dict]:
    """The frames of one query row through every step: each step adds its rows to one table, marked."""
    s = {**sc.visible_steps(q, k, v), "query": q, "keys": k}
    weights_sum = fmt.printed_sum(s["weights"], sum(s["weights"]))
    Section(PAGE, "F13").holds(written_weights_add_up=weights_sum.adds_up)

    def cells(field):
        return [fmt.fmt(x) for x in s[field]]

    rows = [  # (the step that adds it, label, one cell per key, the whole row's cell)
        (0, "分数 q·k", cells("dots"), f"q = {fmt.vector(s['query'])}"),
        (0, "÷ √d", cells("scaled"), f"d = {s['d']}，√d = {fmt.fmt(s['scale'])}"),
        (1, "− 最大值", cells("shifted"), f"最大值 = {fmt.fmt(s['max'])}"),
        (1, "exp", cells("exps"), f"和 {fmt.printed_sum(s['exps'], s['total']).result}"),
        (1, "÷ 和 = 权重", cells("weights"), f"权重之和 {weights_sum.result}"),
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
                        [fmt.cell(t, highlight=at == step) for t in [label, *row_cells, whole]]
                        for at, label, row_cells, whole in rows
                        if at <= step
                    ],
                }
            ],
        }
        for step, name in enumerate(STEP_NAMES)
    ]


def f13_frames() -> list[dict]:
    """Figure F13's frames: the page's query row (``QUERY``) of the page's example."""
    return row_frames(sc.EXAMPLE_Q[sc.QUERY], sc.EXAMPLE_K, sc.EXAMPLE_V)


# -- the page's sections, in its order -------------------------------------------------------------------
def f13() -> Section:
    """F13's sizes and its query row (the example's matrices are typed in the page)."""
    s = Section(PAGE, "F13")
    s.value(
        "count",
        f13_d=len(sc.EXAMPLE_Q[0]),
        n_queries=len(sc.EXAMPLE_Q),
        f13_n=len(sc.EXAMPLE_K),
        f13_frames=len(STEP_NAMES),
    )
    s.text(f13_q=fmt.vector(sc.EXAMPLE_Q[sc.QUERY]))
    return s


def measurement() -> Section:
    """The tables of ``measure_scaling``, their sentences' numbers, and F13's ÷√d against T = √d."""
    s = Section(PAGE, "为什么除以 √d")
    measured = [
        sc.measure_scaling(
            d, trials=sc.MEASURE_TRIALS, n_keys=sc.MEASURE_KEYS, seed=sc.MEASURE_SEED
        )
        for d in sc.MEASURE_DIMS
    ]
    small = measured[0]
    big = measured[-1]
    scaled_var = [m["var_scaled"] for m in measured]
    raw_w = [m["max_weight_raw"] for m in measured]
    scaled_w = [m["max_weight_scaled"] for m in measured]
    lower = [m["d"] for m in measured if m["grad_scaled"] < m["grad_raw"]]
    higher = [m["d"] for m in measured if m["d"] not in lower]
    steps = sc.visible_steps(sc.EXAMPLE_Q[sc.QUERY], sc.EXAMPLE_K, sc.EXAMPLE_V)
    same = att.softmax(steps["dots"], temperature=steps["scale"])
    s.holds(
        raw_peak_grows_with_d=raw_w == sorted(set(raw_w)),
        scaled_peak_in_a_narrow_range=max(scaled_w) - min(scaled_w) < (max(raw_w) - min(raw_w)) / 4,
        scaling_lowers_the_jacobian_only_at_small_d=bool(lower)
        and bool(higher)
        and max(lower) < min(higher),
        dividing_by_root_d_is_temperature_root_d=att.max_abs_diff([steps["weights"]], [same]) == 0,
    )
    s.value(meas_uniform=1 / sc.MEASURE_KEYS)
    s.table(
        "tbl_variance",
        measured,
        Col("d", lambda m: m["d"], "count"),
        Col("q·k 的方差", lambda m: m["var_raw"]),
        Col("q·k / √d 的方差", lambda m: m["var_scaled"]),
    )
    s.text(
        meas_scaled_range=between(scaled_var),
        meas_lower_ds=listing(f"d = {fmt.count(d)}" for d in lower),
    )
    s.table(
        "tbl_saturation",
        measured,
        Col("d", lambda m: m["d"], "count"),
        Col("最大权重：不缩放", lambda m: m["max_weight_raw"]),
        Col("最大权重：缩放", lambda m: m["max_weight_scaled"]),
        Col("雅可比最大元：不缩放", lambda m: m["grad_raw"]),
        Col("雅可比最大元：缩放", lambda m: m["grad_scaled"]),
    )
    s.value("count", meas_small_d=small["d"], meas_big_d=big["d"])
    s.value(
        meas_small_w_raw=small["max_weight_raw"],
        meas_big_w_raw=big["max_weight_raw"],
        meas_big_g_raw=big["grad_raw"],
        meas_big_g_scaled=big["grad_scaled"],
        temp_sqrt_d=steps["scale"],
    )
    s.text(meas_w_scaled_range=between(scaled_w))
    return s


def overflow() -> Section:
    """A row whose exp overflows in Python, numpy and the naive formula; each format's limit; an underflow."""
    s = Section(PAGE, "稳定的 softmax")
    scores = sc.BIG_SCORES
    small = sc.SMALL_SCORES
    under = [math.exp(y - max(small)) for y in small]
    try:
        math.exp(max(scores))
        python = None
    except OverflowError as error:
        python = f"{type(error).__name__}: {error}"
    # numpy raises nothing: it warns (RuntimeWarning) and goes on; the warnings are recorded, not silenced.
    with warnings.catch_warnings(record=True) as caught, np.errstate(over="warn", invalid="warn"):
        warnings.simplefilter("always")
        e = np.exp(np.array(scores))
        naive = e / e.sum()
    try:
        sc.naive_softmax(scores)
        naive_error = None
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
    s.holds(
        python_exp_overflows=python is not None,
        numpy_warns=bool(caught),
        naive_softmax_refuses=naive_error is not None,
        a_weight_underflows_to_zero=any(x == 0 for x in under),
        float16_exp_inf_exactly_above_the_limit=bool(
            np.all(np.isinf(f16_exps) == (halves.astype(float) > f16_limit))
        ),
        float32_exp_cast_to_float16_finite=bool(np.isfinite(cast_later)),
    )
    s.value("short", big_max=max(scores))
    s.text(
        py_overflow=python,
        np_warnings="；".join(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught)),
        np_exp=str([float(x) for x in e]),  # as Python prints them
        np_naive=str([float(x) for x in naive]),
        naive_error=naive_error,
        stable_big=python_list(att.softmax(scores), cell=fmt.fmt),
        under_exps=python_list(under, cell=fmt.fmt),
        under_weights=python_list(att.softmax(small), cell=fmt.fmt),
    )
    s.value(py_limit=sc.exp_limit(sys.float_info.max), f16_limit=f16_limit)
    s.table(
        "tbl_limits",
        limits,
        Col("格式", lambda r: r[0], "text"),
        Col("最大有限值", lambda r: r[1], "sci"),
        Col("exp 不溢出的最大参数 ln(最大值)", lambda r: sc.exp_limit(r[1])),
    )
    return s


def both_axes() -> tuple[list, list, list]:
    """The example's weights with softmax over each row (right) and their outputs, then the weights with
    softmax over each column (wrong): what the axis section shows and the checks section tells apart."""
    right, out = att.attention(sc.EXAMPLE_Q, sc.EXAMPLE_K, sc.EXAMPLE_V, causal=False)
    wrong = sc.softmax_over_queries(att.scaled_scores(sc.EXAMPLE_Q, sc.EXAMPLE_K))
    return right, out, wrong


def axis() -> Section:
    """Softmax over the rows (right) and over the columns (wrong), each with its row and column sums."""
    s = Section(PAGE, "softmax 沿错了轴")
    v = sc.EXAMPLE_V
    right, _, wrong = both_axes()
    outputs = att.matmul(wrong, v)
    s.holds(
        wrong_columns_sum_to_one=all(fmt.fmt(sum(col)) == fmt.fmt(1.0) for col in zip(*wrong)),
        no_wrong_row_sums_to_one=all(fmt.fmt(sum(row)) != fmt.fmt(1.0) for row in wrong),
        wrong_outputs_inside_v=all(inside(outputs, v)),
    )
    weight_sums(s, "tbl_axis_right", right)
    weight_sums(s, "tbl_axis_wrong", wrong)
    s.text(axis_wrong_shown=listing(fmt.vector(o, fmt.fmt) for o in outputs))
    return s


def checks() -> Section:
    """The four checks, each on the right implementation and on the mistake it is meant to catch."""
    s = Section(PAGE, "如何判断是否做对")
    q = sc.EXAMPLE_Q
    k = sc.EXAMPLE_K
    v = sc.EXAMPLE_V
    right, out, wrong = both_axes()
    scaled = sc.visible_steps(q[sc.QUERY], k, v)["scaled"]
    moved = [x + SHIFT for x in scaled]
    try:
        sc.naive_softmax(moved)
        overflowed = False
    except ValueError as error:
        overflowed = "exp 溢出" in str(error)
    s.holds(naive_formula_overflows_after_the_shift=overflowed)
    _, both = att.attention(q, [k[j] for j in ORDER], [v[j] for j in ORDER], causal=False)
    _, keys_only = att.attention(q, [k[j] for j in ORDER], v, causal=False)
    reference = numpy_reference(q, k, v).tolist()
    width = sc.N_HEADS * len(q[0])
    by_width = [sc.scaled_by(qi, k, v, width)["output"] for qi in q]
    root = math.sqrt(width)  # the variant divides by √(model width) instead of √d
    s.text(
        chk_order=keys(ORDER),
        chk_root=fmt.count(int(root)) if root.is_integer() else fmt.fmt(root),
    )
    s.value("count", chk_width=width)
    s.value(
        "difference",
        chk_sum_right=att.max_abs_diff([[sum(r) for r in right]], [[1.0] * len(right)]),
        chk_sum_wrong=att.max_abs_diff([[sum(r) for r in wrong]], [[1.0] * len(wrong)]),
        chk_shift_right=att.max_abs_diff([att.softmax(scaled)], [att.softmax(moved)]),
        chk_order_right=att.max_abs_diff(out, both),
        chk_order_wrong=att.max_abs_diff(out, keys_only),
        chk_numpy_right=att.max_abs_diff(out, reference),
        chk_numpy_wrong=att.max_abs_diff(by_width, reference),
    )
    return s


def sweep() -> Section:
    """The temperature table and, from its rows, the coldest's and hottest's peaks and distances."""
    s = Section(PAGE, "温度")
    v = sc.EXAMPLE_V
    scaled = sc.visible_steps(sc.EXAMPLE_Q[sc.QUERY], sc.EXAMPLE_K, v)["scaled"]
    rows = sc.temperature_sweep(scaled, v, sc.TEMPERATURES)
    ends = [min(rows, key=lambda r: r["temperature"]), max(rows, key=lambda r: r["temperature"])]
    top = max(
        range(len(v)), key=lambda j: ends[0]["weights"][j]
    )  # the largest weight at the lowest T
    mean = [statistics.fmean(col) for col in zip(*v)]
    s.holds(peak_falls_as_t_grows=max(ends[1]["weights"]) < max(ends[0]["weights"]))
    s.text(sweep_scores=python_list(scaled, cell=fmt.fmt))
    s.table(
        "tbl_sweep",
        rows,
        Col("温度 T", lambda r: r["temperature"], "short"),
        Col(
            "权重（Key " + " / ".join(str(j) for j in range(len(v))) + "）",
            lambda r: fmt.slashed(r["weights"]),
            "text",
        ),
        Col("最大权重", lambda r: max(r["weights"])),
        Col("输出", lambda r: fmt.vector(r["output"], fmt.fmt), "text"),
    )
    s.value("count", sweep_top=top)
    s.text(sweep_top_v=fmt.vector(v[top]), sweep_mean=fmt.vector(mean, fmt.fmt))
    for i, r in enumerate(ends):
        s.value("short", **{f"sweep_t_{i}": r["temperature"]})
        s.value(
            **{
                f"sweep_peak_{i}": max(r["weights"]),
                f"sweep_to_top_{i}": math.dist(r["output"], v[top]),
                f"sweep_to_mean_{i}": math.dist(r["output"], mean),
            }
        )
    return s


def run_output() -> Section:
    """What running 02_scaling.py prints."""
    s = Section(PAGE, "运行结果示例")
    s.md(run_output=fmt.run_output("02_scaling.py"))
    return s


# -- the exercises ----------------------------------------------------------------------------------------
def hand_exercise() -> Section:
    """The steps to the weights, J row by row, J·g and how it compares with J's largest entry."""
    s = Section(PAGE, "练习 雅可比矩阵作用在一整条向量上")
    q = ex.HAND_Q
    k = ex.HAND_K
    h = ex.hand_row(q, k, ex.HAND_G)
    top = max(abs(x) for x in h["jg"])
    dots = [products(q, kj, x) for kj, x in zip(k, h["dots"])]
    total = fmt.printed_sum(h["exps"], h["total"])
    s.holds(
        jg_exceeds_the_largest_entry=top > h["peak"],
        written_dots_add_up=all(c.adds_up for c in dots),
        written_sum_adds_up=total.adds_up,
    )
    rows = [("点积（逐项相乘再相加）", [str(c) for c in dots])]
    rows += [
        (name, [fmt.fmt(x) for x in h[field]])
        for name, field in (
            ("÷ √d", "scaled"),
            ("− 最大值", "shifted"),
            ("exp", "exps"),
            ("÷ 指数之和（权重 p）", "weights"),
        )
    ]
    rows += [
        (f"J 的第 {i} 行（∂p_{i}/∂s_j）", [fmt.fmt(x) for x in row])
        for i, row in enumerate(h["jacobian"])
    ]
    s.table(
        "ex1_steps",
        rows,
        Col("步骤", lambda r: r[0], "text"),
        *[Col(key(j), lambda r, j=j: r[1][j], "text") for j in range(len(k))],
    )
    s.value("count", ex1_d=h["d"], ex1_n=len(k))
    s.value(ex1_sqrt=h["scale"], ex1_peak=h["peak"])
    s.text(ex1_total=total.result, ex1_jg=fmt.vector(h["jg"], fmt.fmt))
    s.value("multiple", ex1_ratio=top / h["peak"])
    return s


def grow_exercise() -> Section:
    """The three ways to score the row (d; copied and scaled; copied and not) and the comparison."""
    s = Section(PAGE, "练习 维数变大，同一行的权重怎样变")
    r = ex.copied_row(ex.GROW_Q, ex.GROW_K, ex.COPIES)
    raw = r["weights_raw"]
    top = max(range(len(raw)), key=lambda j: raw[j])
    same = att.softmax(r["scaled"], temperature=r["temperature_big"])
    s.holds(
        copied_and_scaled_is_a_temperature=att.max_abs_diff([r["weights_big"]], [same]) == 0,
        unscaled_gives_one_key_almost_all=raw[top] > 0.9,
    )
    d = fmt.count(r["d"])
    big = fmt.count(r["d_big"])
    ways = [
        (f"d = {d}，除以 √{d}", r["scaled"], 1.0, r["weights"]),
        (f"d = {big}，除以 √{big}", r["scaled_big"], r["temperature_big"], r["weights_big"]),
        (f"d = {big}，不缩放", r["dots_big"], r["temperature_raw"], raw),
    ]
    s.table(
        "ex2_table",
        ways,
        Col("分数的算法", lambda w: w[0], "text"),
        Col(
            "分数（Key " + " / ".join(str(j) for j in range(len(ex.GROW_K))) + "）",
            lambda w: fmt.slashed(w[1]),
            "text",
        ),
        Col(f"相当于 d = {d} 那一行的温度", lambda w: w[2]),
        Col("权重", lambda w: fmt.slashed(w[3]), "text"),
        Col("最大权重", lambda w: max(w[3])),
    )
    s.value("count", ex2_n=len(ex.GROW_K), ex2_d=r["d"], ex2_d_big=r["d_big"], ex2_top=top)
    s.text(ex2_dots=fmt.slashed(r["dots"]), ex2_dots_big=fmt.slashed(r["dots_big"]))
    s.value(ex2_t_big=r["temperature_big"], ex2_t_raw=r["temperature_raw"], ex2_peak_raw=raw[top])
    return s


def code_exercise() -> Section:
    """The doctest the reader's function must pass."""
    s = Section(PAGE, "练习 写一个不会溢出的 softmax")
    s.md(ex3_doctest=fmt.doctest_block(ex.shifted_softmax))
    return s


def exercises() -> list[Section]:
    return [hand_exercise(), grow_exercise(), code_exercise()]
