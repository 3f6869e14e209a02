"""What the scaling page (ch02/scaling.md) prints: its tables, sentences and figure F13's frames.

The teaching code (``02_scaling.py``, ``02_attention.py``, ``02_exercises_scaling.py``) computes every
number; this module only writes them, through ``chapter.fmt``. Each function of a section takes the
inputs of its example (the page's own by default) and returns what the page glues under each name:
a text for ``{glue:text}``, or a ``(header, rows)`` table for ``{glue:md}``. ``glue_all`` glues them.
A sentence is built from the same numbers as the table beside it, so the two cannot disagree.

>>> inputs()["f13_q"], inputs()["f13_k"]
('(1, 2, 0, 1)', '(1, 0, 1, 0)、(2, 1, 0, 1)、(0, 1, 1, 2)')
>>> largest_value(65504.0), python_list([1000.0, 1001.0])
('65504', '[1000, 1001]')
"""

from __future__ import annotations

import importlib
import math
import statistics
import sys
import warnings

import numpy as np

from chapter import fmt
from chapter.fmt import glue_all

att = importlib.import_module("02_attention")
sc = importlib.import_module("02_scaling")
ex = importlib.import_module("02_exercises_scaling")

Q, K, V, ROW = sc.EXAMPLE_Q, sc.EXAMPLE_K, sc.EXAMPLE_V, sc.QUERY


# -- kinds of number that chapter.fmt has no function for ------------------------------------------------
def largest_value(x: float) -> str:
    """A format's largest finite value, to six significant digits (``numpy.finfo(...).max``).

    >>> largest_value(3.4028234663852886e38), largest_value(1.7976931348623157e308)
    ('3.40282e+38', '1.79769e+308')
    """
    return f"{float(x):.6g}".replace("-", fmt.MINUS)


def python_list(xs, cell=fmt.short) -> str:
    """A row of scores written as a Python list, each entry by ``cell`` (as typed, by default).

    >>> python_list([0.5, -2.0]), python_list([0.25], cell=fmt.fmt)
    ('[0.5, −2]', '[0.2500]')
    """
    return "[" + ", ".join(cell(x) for x in xs) + "]"


def _products(q, k) -> str:
    return " + ".join(f"{fmt.short(a)}×{fmt.short(b)}" for a, b in zip(q, k))


def _keys_word(js) -> str:
    return "、".join(f"Key {j}" for j in js)


def same_or_gap(diff: float) -> str:
    """Two results' largest difference in words: 完全相同 when it is exactly 0.

    >>> same_or_gap(0.0), same_or_gap(2.5e-16)
    ('完全相同', '最多相差 2.5 × 10⁻¹⁶')
    """
    diff = att.real(diff, "diff")
    return "完全相同" if diff == 0 else f"最多相差 {fmt.sci(diff)}"


def scaled_product(w: float, vj, exact) -> str:
    """A weight times a V row, written out: ``=`` when the printed weight gives the printed result, else ``≈``.

    >>> scaled_product(0.62246, [4, 0], [2.48984, 0.0])
    '0.6225 × (4, 0) ≈ (2.4898, 0.0000)'
    >>> scaled_product(0.25, [4, 0], [1.0, 0.0])
    '0.2500 × (4, 0) = (1.0000, 0.0000)'
    """
    w, vj, exact = att.real(w, "w"), att.as_vector(vj, "vj"), att.as_vector(exact, "exact")
    if len(vj) != len(exact):
        raise ValueError(f"vj 与 exact 的长度必须相同，收到 {len(vj)} 与 {len(exact)}")
    shown = fmt.printed(fmt.fmt(w))
    sign = "=" if all(fmt.equals(shown * y, c) == "=" for y, c in zip(vj, exact)) else "≈"
    return f"{fmt.fmt(w)} × {fmt.vector(vj)} {sign} {fmt.vector(exact, fmt.fmt)}"


def exp_term(x: float, e: float) -> str:
    """``exp(x) = e``, with ``≈`` when exp of the printed x does not print as the printed e.

    >>> exp_term(-2.0, math.exp(-2.0)), exp_term(-0.49996, math.exp(-0.49996))
    ('exp(−2.0000) = 0.1353', 'exp(−0.5000) ≈ 0.6066')
    """
    x, e = att.real(x, "x"), att.real(e, "e")
    if not (math.isfinite(x) and x <= sc.exp_limit()) or not math.isfinite(e):
        raise ValueError(f"x 必须是不超过 exp 上界的有限数、e 必须有限，收到 {x!r} 与 {e!r}")
    return f"exp({fmt.fmt(x)}) {fmt.equals(math.exp(fmt.printed(fmt.fmt(x))), e)} {fmt.fmt(e)}"


def printed_sum(xs, total: float) -> str:
    """``= total`` or ``≈ total``: whether the printed terms add up to the printed total.

    >>> printed_sum([0.13534, 1.0, 0.60653], 1.741866), printed_sum([0.25, 0.75], 1.0)
    ('≈ 1.7419', '= 1.0000')
    """
    xs, total = att.as_vector(xs, "xs"), att.real(total, "total")
    return f"{fmt.equals(sum(fmt.printed(fmt.fmt(x)) for x in xs), total)} {fmt.fmt(total)}"


def rounding_note(matrix) -> str:
    """A note under a table of weights with row sums: only when a printed sum is not the sum of its printed cells.

    >>> rounding_note([[0.25, 0.75]]), rounding_note([[0.13534, 0.60653, 1.0]])
    ('', '表中的合计由未舍入的权重相加，所以与表中四位小数之和可能差最后一位。')
    """
    rows = [list(r) for r in att.as_matrix(matrix, "matrix")]
    lines = rows + [list(c) for c in zip(*rows)]
    if all(fmt.equals(sum(fmt.printed(fmt.fmt(x)) for x in r), sum(r)) == "=" for r in lines):
        return ""
    return "表中的合计由未舍入的权重相加，所以与表中四位小数之和可能差最后一位。"


def inputs(q=Q, k=K, v=V, row=ROW) -> dict:
    """F13's and the page's inputs as its 输入与适用条件 boxes name them."""
    return {
        "f13_q": fmt.vector(q[row]), "f13_k": fmt.vectors(k), "f13_v": fmt.vectors(v), "ex_q": fmt.vectors(q),
        "f13_d": fmt.count(len(q[0])), "f13_n": fmt.count(len(k)), "f13_row": fmt.count(row),
        "f13_frames": fmt.count(len(f13_frames(q[row], k, v))),
    }


def dots(q=Q, k=K, v=V, row=ROW) -> dict:
    """The row's scores written as sums of products, the largest and smallest, and every query's scores.

    >>> d = dots()
    >>> d["tbl_dot"][1][1], d["dot_best"], d["dot_best_score"]
    (['Key 1', '(2, 1, 0, 1)', '1×2 + 2×1 + 0×0 + 1×1', '5'], '1', '5')
    """
    s = sc.visible_steps(q[row], k, v)
    best = max(range(len(k)), key=lambda j: s["dots"][j])
    worst = min(range(len(k)), key=lambda j: s["dots"][j])
    every = att.matmul(q, [list(col) for col in zip(*k)])  # Q Kᵀ, not yet divided by √d: (n_query, n_key)
    return {
        "tbl_dot": (["Key", "k_j", "q·k_j 逐项相乘再相加", "分数 q·k_j"],
                    [[f"Key {j}", fmt.vector(kj), _products(q[row], kj), fmt.short(x)]
                     for j, (kj, x) in enumerate(zip(k, s["dots"]))]),
        "dot_best": fmt.count(best), "dot_best_score": fmt.short(s["dots"][best]),
        "dot_worst": fmt.count(worst), "dot_worst_score": fmt.short(s["dots"][worst]),
        "tbl_dot_all": (fmt.keys(len(k)), [[f"查询 {i}"] + [fmt.short(x) for x in r] for i, r in enumerate(every)]),
    }


# -- why divide by √d: the measurement, and √d as a temperature ---------------------------------------------
def measurement(dims=sc.MEASURE_DIMS, trials=sc.MEASURE_TRIALS, n_keys=sc.MEASURE_KEYS, seed=sc.MEASURE_SEED) -> dict:
    """The variance and saturation tables of ``measure_scaling``, and the sentence's numbers (largest d)."""
    measured = [sc.measure_scaling(d, trials=trials, n_keys=n_keys, seed=seed) for d in dims]
    big = measured[-1]
    return {
        "meas_dims": "、".join(fmt.count(d) for d in dims), "meas_trials": fmt.count(trials),
        "meas_keys": fmt.count(n_keys), "meas_seed": fmt.count(seed), "meas_uniform": fmt.fmt(1 / n_keys),
        "tbl_variance": (["d", "q·k 的方差", "q·k / √d 的方差"],
                         [[fmt.count(m["d"]), fmt.fmt(m["var_raw"]), fmt.fmt(m["var_scaled"])] for m in measured]),
        "meas_scaled_range": _range(m["var_scaled"] for m in measured),
        "meas_grad_note": grad_note(measured),
        "tbl_saturation": (["d", "最大权重：不缩放", "最大权重：缩放", "雅可比最大元：不缩放", "雅可比最大元：缩放"],
                           [[fmt.count(m["d"])] + [fmt.fmt(m[key]) for key in
                             ("max_weight_raw", "max_weight_scaled", "grad_raw", "grad_scaled")] for m in measured]),
        "meas_big_d": fmt.count(big["d"]),
        **{f"meas_big_{tag}": fmt.fmt(big[key]) for tag, key in (
            ("w_raw", "max_weight_raw"), ("w_scaled", "max_weight_scaled"),
            ("g_raw", "grad_raw"), ("g_scaled", "grad_scaled"))},
    }


def _range(xs) -> str:
    xs = list(xs)
    return f"{fmt.fmt(min(xs))} 到 {fmt.fmt(max(xs))}"


def grad_note(measured: list[dict]) -> str:
    """The d's where scaling made the Jacobian's largest entry smaller (softmax was not saturated there).

    >>> grad_note([{"d": 2, "grad_raw": 0.20, "grad_scaled": 0.19}, {"d": 8, "grad_raw": 0.18, "grad_scaled": 0.21}])
    'd = 2 时缩放后的值反而略小：d 小时不缩放的分数本来就不大，softmax 没有饱和；除以 √d 让权重更平均，而 p_j 小于 1/2 时 p_j(1 − p_j) 随 p_j 变小。'
    >>> grad_note([{"d": 8, "grad_raw": 0.18, "grad_scaled": 0.21}])
    ''
    """
    measured = att.as_list(measured, "measured")
    if not all(isinstance(m, dict) and {"d", "grad_raw", "grad_scaled"} <= m.keys() for m in measured):
        raise ValueError("measured 的每一项必须是 measure_scaling 返回的字典（有 d、grad_raw、grad_scaled）")
    smaller = [m["d"] for m in measured if att.real(m["grad_scaled"], "measured") < att.real(m["grad_raw"], "measured")]
    if not smaller:
        return ""
    return (f"{'、'.join(f'd = {fmt.count(d)}' for d in smaller)} 时缩放后的值反而略小：d 小时不缩放的分数本来就不大，"
            "softmax 没有饱和；除以 √d 让权重更平均，而 p_j 小于 1/2 时 p_j(1 − p_j) 随 p_j 变小。")


def temperature_equivalence(q=Q, k=K, v=V, row=ROW) -> dict:
    """Dividing by √d and a temperature of √d give the same weights: how far apart they are."""
    s = sc.visible_steps(q[row], k, v)
    by_temperature = att.softmax(s["dots"], temperature=s["scale"])
    return {"temp_equal_diff": same_or_gap(att.max_abs_diff([s["weights"]], [by_temperature])),
            "temp_sqrt_d": fmt.short(s["scale"])}


# -- the stable softmax ------------------------------------------------------------------------------------
def overflow(scores=sc.BIG_SCORES) -> dict:
    """What Python, numpy and the naive formula make of a row whose exp overflows; each format's limit."""
    xs = att.as_vector(scores, "scores")
    if max(xs) <= sc.exp_limit():
        raise ValueError(f"scores 的最大值 {fmt.short(max(xs))} 没有超过 exp 的界：这一节要一行会溢出的分数")
    try:
        math.exp(max(xs))
    except OverflowError as error:
        python = f"{type(error).__name__}: {error}"
    # numpy raises nothing: it warns (RuntimeWarning) and goes on; the warnings are recorded, not silenced.
    with warnings.catch_warnings(record=True) as caught, np.errstate(over="warn", invalid="warn"):
        warnings.simplefilter("always")
        e = np.exp(np.array(xs))
        naive = e / e.sum()
    said = list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))
    try:
        sc.naive_softmax(xs)
    except ValueError as error:
        naive_error = str(error)
    limits = [(name, float(np.finfo(name).max)) for name in ("float16", "float32", "float64")]
    return {
        "big_max": fmt.short(max(xs)), "big_scores": python_list(xs), "py_overflow": python,
        "np_warnings": "；".join(said) if said else "没有警告",
        "np_exp": str([float(x) for x in e]), "np_naive": str([float(x) for x in naive]),  # as Python prints them
        "naive_error": naive_error, "stable_big": python_list(att.softmax(xs), cell=fmt.fmt),
        "py_limit": fmt.fmt(sc.exp_limit(sys.float_info.max)),
        "tbl_limits": (["格式", "最大有限值", "exp 不溢出的最大参数 ln(最大值)"],
                       [[name, largest_value(x), fmt.fmt(sc.exp_limit(x))] for name, x in limits]),
        "f16_limit": fmt.fmt(sc.exp_limit(limits[0][1])),
    }


def underflow(scores=sc.SMALL_SCORES) -> dict:
    """A row where exp(x − max) underflows to exactly 0 in floating point, though in exact arithmetic it is positive."""
    xs = att.as_vector(scores, "scores")
    m = max(xs)
    exps = [math.exp(x - m) for x in xs]
    if all(e > 0 for e in exps):
        raise ValueError(f"scores {python_list(xs)} 减去最大值后没有一项下溢为 0：这一段要一行会下溢的分数")
    return {"under_scores": python_list(xs), "under_exps": python_list(exps, cell=fmt.short),
            "under_weights": python_list(att.softmax(xs), cell=fmt.short)}


# -- the mix ---------------------------------------------------------------------------------------------
def mixing(q=Q, k=K, v=V, row=ROW) -> dict:
    """The mix written out: weights × V rows = contributions = output, and each column's range.

    >>> mixing()["mix_formula"]
    '0.0777 × (6, 0) + 0.5741 × (0, 6) + 0.3482 × (6, 6) = (0.4662, 0.0000) + (0.0000, 3.4446) + (2.0892, 2.0892) = (2.5554, 5.5338)'
    """
    s = sc.visible_steps(q[row], k, v)
    w, parts, out = s["weights"], s["weighted"], s["output"]
    # = where the printed numbers give the printed result, ≈ where rounding them moved a digit.
    by_hand = [[fmt.printed(fmt.fmt(x)) * y for y in vj] for x, vj in zip(w, v)]
    first = "=" if all(fmt.equals(a, b) == "=" for ra, rb in zip(by_hand, parts) for a, b in zip(ra, rb)) else "≈"
    summed = [sum(fmt.printed(fmt.fmt(x)) for x in col) for col in zip(*parts)]
    second = "=" if all(fmt.equals(a, b) == "=" for a, b in zip(summed, out)) else "≈"
    lo, hi = [min(col) for col in zip(*v)], [max(col) for col in zip(*v)]
    return {
        "mix_weights": "、".join(fmt.fmt(x) for x in w),
        "mix_formula": " + ".join(f"{fmt.fmt(x)} × {fmt.vector(vj)}" for x, vj in zip(w, v))
        + f" {first} " + " + ".join(fmt.vector(c, fmt.fmt) for c in parts) + f" {second} " + fmt.vector(out, fmt.fmt),
        "mix_ranges": "，".join(f"第 {c} 个分量在 {fmt.short(a)} 与 {fmt.short(b)} 之间" for c, (a, b) in enumerate(zip(lo, hi))),
        "mix_out": fmt.vector(out, fmt.fmt),
    }


# -- costs and misreadings ----------------------------------------------------------------------------------
def confidence(q=Q, k=K, v=V, row=ROW, factor=3) -> dict:
    """The largest weight of the row before and after the query is multiplied by ``factor``."""
    before = sc.visible_steps(q[row], k, v)["weights"]
    after = sc.visible_steps([factor * x for x in q[row]], k, v)["weights"]
    return {"conf_factor": fmt.short(factor), "conf_before": fmt.fmt(max(before)), "conf_after": fmt.fmt(max(after))}


def row_sum_sentence(weights) -> str:
    """Say how each query row's total compares with 1 (to read a softmax taken over the wrong axis).

    The verdict is read from the printed total, so the sentence never contradicts its own number.

    >>> row_sum_sentence([[0.25, 0.5], [0.5, 0.25], [0.25, 0.25]])
    '查询 0、查询 1 的合计为 0.7500，不到 1；查询 2 的合计为 0.5000，不到 1。'
    >>> row_sum_sentence(sc.softmax_over_queries([[0.0, 0.0], [0.0, 2.0]]))
    '查询 0 的合计为 0.6192，不到 1；查询 1 的合计为 1.3808，超过 1。'
    """
    groups: dict[str, list[int]] = {}
    for i, row in enumerate(att.as_matrix(weights, "weights")):
        groups.setdefault(fmt.fmt(sum(row)), []).append(i)
    parts = []
    for total, rows in groups.items():
        x = fmt.printed(total)
        verdict = "恰为 1" if x == 1 else ("超过 1" if x > 1 else "不到 1")
        parts.append(f"{'、'.join(f'查询 {i}' for i in rows)} 的合计为 {total}，{verdict}")
    return "；".join(parts) + "。"


def _with_sums(matrix) -> list[list[str]]:
    rows = [[f"查询 {i}"] + [fmt.fmt(x) for x in row] + [fmt.fmt(sum(row))] for i, row in enumerate(matrix)]
    return rows + [["列之和"] + [fmt.fmt(sum(col)) for col in zip(*matrix)] + [""]]


def wrong_output_sentence(outputs, values) -> str:
    """Whether the outputs mixed with the wrong-axis table stay inside each column's range of V.

    >>> wrong_output_sentence([[1.0, 2.0], [7.0, 2.0]], [[0, 0], [6, 6]])
    '用这张表混合出的输出依次为 (1.0000, 2.0000)、(7.0000, 2.0000)；查询 1 的输出已跑出 V 各列的范围。'
    >>> wrong_output_sentence([[1.0, 2.0]], [[0, 0], [6, 6]])
    '用这张表混合出的输出依次为 (1.0000, 2.0000)；本例里它们都还在 V 各列的范围之内，但已不是 V 各行的加权平均，合计不是 1 时并没有什么能把输出留在这个范围里。'
    """
    out, v = att.as_matrix(outputs, "outputs"), att.as_matrix(values, "values")
    lo, hi = [min(col) for col in zip(*v)], [max(col) for col in zip(*v)]
    outside = [i for i, o in enumerate(out) if any(not a - 1e-12 <= x <= b + 1e-12 for a, x, b in zip(lo, o, hi))]
    shown = "、".join(fmt.vector(o, fmt.fmt) for o in out)
    if outside:
        return f"用这张表混合出的输出依次为 {shown}；{'、'.join(f'查询 {i}' for i in outside)} 的输出已跑出 V 各列的范围。"
    return (f"用这张表混合出的输出依次为 {shown}；本例里它们都还在 V 各列的范围之内，但已不是 V 各行的加权平均，"
            "合计不是 1 时并没有什么能把输出留在这个范围里。")


def axis(q=Q, k=K, v=V) -> dict:
    """Softmax over the rows (right) and over the columns (wrong), each with its row and column sums."""
    right, _ = att.attention(q, k, v, causal=False)
    wrong = sc.softmax_over_queries(att.scaled_scores(q, k))
    header = fmt.keys(len(k)) + ["行之和"]
    return {
        "tbl_axis_right": (header, _with_sums(right)), "tbl_axis_wrong": (header, _with_sums(wrong)),
        "axis_sum_note": rounding_note(right + wrong),
        "axis_wrong_sentence": row_sum_sentence(wrong),
        "axis_wrong_outputs": wrong_output_sentence(att.matmul(wrong, att.as_matrix(v, "v")), v),
    }


def wide(q=Q, k=K, v=V, row=ROW, heads=sc.N_HEADS) -> dict:
    """Scaling by the head dimension (right) and by the model width (wrong), side by side."""
    d = len(q[0])
    width = heads * d
    right, wrong = sc.visible_steps(q[row], k, v), sc.scaled_by(q[row], k, v, width)
    return {
        "wide_heads": fmt.count(heads), "wide_width": fmt.count(width), "wide_ratio": fmt.short(math.sqrt(width / d)),
        "tbl_wide": (["缩放方式", "除以", "缩放后的分数", "权重", "输出"], [
            [label, fmt.short(s["scale"]), " / ".join(fmt.fmt(x) for x in s["scaled"]),
             " / ".join(fmt.fmt(x) for x in s["weights"]), fmt.vector(s["output"], fmt.fmt)]
            for label, s in ((f"按头维度 d = {fmt.count(d)}（正确）", right), (f"按模型宽度 {fmt.count(width)}（错误）", wrong))
        ]),
        "wide_peak_right": fmt.fmt(max(right["weights"])), "wide_peak_wrong": fmt.fmt(max(wrong["weights"])),
    }


# -- how to tell it is right ------------------------------------------------------------------------------
def numpy_attention(q, k, v) -> list[list[float]]:
    """The independent reference the page compares with: softmax(Q Kᵀ / √d) V in float64 numpy arrays."""
    q, k, v = (np.asarray(x, dtype=float) for x in (q, k, v))
    s = q @ k.T / np.sqrt(k.shape[1])  # (n_query, n_key)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return ((e / e.sum(axis=1, keepdims=True)) @ v).tolist()


def checks(q=Q, k=K, v=V, row=ROW, shift=1000, order=(2, 0, 1), heads=sc.N_HEADS) -> dict:
    """The four checks, each on the right implementation and on the mistake it is meant to catch."""
    right, out = att.attention(q, k, v, causal=False)
    wrong = sc.softmax_over_queries(att.scaled_scores(q, k))
    scaled = sc.visible_steps(q[row], k, v)["scaled"]
    moved = [x + shift for x in scaled]
    try:
        sc.naive_softmax(moved)
        naive = "算出了结果"
    except ValueError:
        naive = "ValueError：exp 溢出"
    _, both = att.attention(q, [k[j] for j in order], [v[j] for j in order], causal=False)
    _, keys_only = att.attention(q, [k[j] for j in order], v, causal=False)
    reference = numpy_attention(q, k, v)
    width = heads * len(q[0])
    by_width = [sc.scaled_by(qi, k, v, width)["output"] for qi in q]

    def gap(x):
        return "差 " + fmt.sci(x)

    def off_one(w):
        return "与 1 " + gap(max(abs(sum(r) - 1) for r in w))

    return {
        "chk_shift": fmt.short(shift), "chk_order": _keys_word(order),
        "tbl_checks": (["检查", "正确实现", "故意写错的变体", "变体的结果"], [
            ["每行权重之和为 1", off_one(right), "沿查询（列）做 softmax", off_one(wrong)],
            [f"分数加 {fmt.short(shift)}，权重不变",
             gap(att.max_abs_diff([att.softmax(scaled)], [att.softmax(moved)])), "不减最大值的原式", naive],
            ["Key 与 V 一起重排，输出不变", gap(att.max_abs_diff(out, both)), "只重排 Key", gap(att.max_abs_diff(out, keys_only))],
            ["与 numpy 参照一致", gap(att.max_abs_diff(out, reference)), f"按模型宽度 {fmt.count(width)} 缩放",
             gap(att.max_abs_diff(by_width, reference))],
        ]),
    }


# -- temperature -------------------------------------------------------------------------------------------
def sweep_sentence(rows: list[dict], values) -> str:
    """One sentence from ``temperature_sweep``'s rows: as T grows, the peak weight and the output move.

    >>> rows = sc.temperature_sweep([0.5, 2.5, 2.0], [[6, 0], [0, 6], [6, 6]], [0.5, 4.0])
    >>> sweep_sentence(rows, [[6, 0], [0, 6], [6, 6]])  # doctest: +NORMALIZE_WHITESPACE
    'T 从 0.5 增到 4，最大权重从 0.7214 降到 0.4018；输出与分数最高的 Key 1 的 V 行 (0, 6)
     相距从 1.6735 变成 3.8758，与 V 各行的平均 (4, 4) 相距从 3.0184 变成 0.6767。'
    """
    v = att.as_matrix(values, "values")
    rows = sorted(att.as_list(rows, "rows"), key=lambda r: r["temperature"])
    if len(rows) < 2:
        raise ValueError("rows 至少要有两个温度，才谈得上“从……增到……”")
    first, last = rows[0], rows[-1]
    # The colder, the more the weight goes to the highest score: the key with the largest weight at the lowest T.
    top = max(range(len(v)), key=lambda j: first["weights"][j])
    mean = [statistics.fmean(col) for col in zip(*v)]
    to_top = [math.dist(r["output"], v[top]) for r in (first, last)]
    to_mean = [math.dist(r["output"], mean) for r in (first, last)]
    return (
        f"T 从 {fmt.short(first['temperature'])} 增到 {fmt.short(last['temperature'])}，"
        f"最大权重从 {fmt.fmt(max(first['weights']))} 降到 {fmt.fmt(max(last['weights']))}；"
        f"输出与分数最高的 Key {top} 的 V 行 {fmt.vector(v[top])} 相距从 {fmt.fmt(to_top[0])} 变成 {fmt.fmt(to_top[1])}，"
        f"与 V 各行的平均 {fmt.vector(mean)} 相距从 {fmt.fmt(to_mean[0])} 变成 {fmt.fmt(to_mean[1])}。"
    )


def gap_sentence(scores, factor: float = 2.0, shift: float = 100.0) -> str:
    """Multiplying the gaps by ``factor`` is the temperature 1/factor; adding ``shift`` to every score changes nothing.

    >>> gap_sentence([0.5, 2.5, 2.0])
    '把每个分数乘以 2（差距加倍），权重与 T = 0.5 时完全相同；每个分数都加上 100，权重与 T = 1 时完全相同：softmax 只看分数之间的差。'
    """
    s = att.as_vector(scores, "scores")
    factor, shift = att.real(factor, "factor"), att.real(shift, "shift")
    if not math.isfinite(factor) or factor <= 0 or not math.isfinite(shift):
        raise ValueError(f"factor 必须是正的有限数、shift 必须是有限数，收到 {factor!r} 与 {shift!r}")
    doubled = att.max_abs_diff([att.softmax([factor * x for x in s])], [att.softmax(s, temperature=1 / factor)])
    moved = att.max_abs_diff([att.softmax([x + shift for x in s])], [att.softmax(s)])
    return (f"把每个分数乘以 {fmt.short(factor)}（差距{'加倍' if factor == 2 else '放大'}），权重与 T = {fmt.short(1 / factor)} 时"
            f"{same_or_gap(doubled)}；每个分数都加上 {fmt.short(shift)}，权重与 T = 1 时{same_or_gap(moved)}"
            f"{'' if moved == 0 else '（浮点舍入）'}：softmax 只看分数之间的差。")


def sweep(q=Q, k=K, v=V, row=ROW, temperatures=sc.TEMPERATURES) -> dict:
    """The temperature table (weights, peak, output per T) and the sentence read from the same rows."""
    scaled = sc.visible_steps(q[row], k, v)["scaled"]
    rows = sc.temperature_sweep(scaled, v, temperatures)
    return {
        "sweep_scores": python_list(scaled, cell=fmt.fmt), "sweep_ts": "、".join(fmt.short(t) for t in temperatures),
        "tbl_sweep": (["温度 T", "权重（Key " + " / ".join(str(j) for j in range(len(k))) + "）", "最大权重", "输出"], [
            [fmt.short(r["temperature"]), " / ".join(fmt.fmt(x) for x in r["weights"]), fmt.fmt(max(r["weights"])),
             fmt.vector(r["output"], fmt.fmt)] for r in rows]),
        "sweep_sentence": sweep_sentence(rows, v),
        "sweep_gap_sentence": gap_sentence(scaled),
    }


# -- figure F13 --------------------------------------------------------------------------------------------
STEP_NAMES = ["点积分数", "除以 √d", "减去最大值", "取指数", "除以总和", "乘以 V 行", "相加得到输出"]


def _cell(text: str, highlight: bool = False) -> dict:
    return {"text": text, "state": None, "highlight": highlight}


def _f13_rows(s: dict) -> list[tuple[str, list[str], str]]:
    """The score table's rows of steps 1-5: (step, one cell per key, the whole row's cell)."""
    return [
        ("分数 q·k", [fmt.short(x) for x in s["dots"]], f"q = {fmt.vector(s['query'])}"),
        ("÷ √d", [fmt.fmt(x) for x in s["scaled"]], f"d = {s['d']}，√d = {fmt.short(s['scale'])}"),
        ("− 最大值", [fmt.fmt(x) for x in s["shifted"]], f"最大值 = {fmt.fmt(s['max'])}"),
        ("exp", [fmt.fmt(x) for x in s["exps"]], f"和 {printed_sum(s['exps'], s['total'])}"),
        ("÷ 和 = 权重", [fmt.fmt(x) for x in s["weights"]], f"权重之和 {printed_sum(s['weights'], sum(s['weights']))}"),
    ]


def _f13_mix_table(s: dict, v, step: int) -> dict:
    """The mix table of steps 6 and 7: one row per key (weight, V row, weight × V row), then the output."""
    rows = [
        [_cell(f"Key {j}"), _cell(fmt.fmt(w)), _cell(fmt.vector(vj)), _cell(fmt.vector(c, fmt.fmt), step == 5)]
        for j, (w, vj, c) in enumerate(zip(s["weights"], v, s["weighted"]))
    ]
    if step == 6:
        total = fmt.fmt(sum(s["weights"]))
        rows.append([_cell("输出 = Σ", True), _cell(total, True), _cell("", True), _cell(fmt.vector(s["output"], fmt.fmt), True)])
    return {"title": "按权重混合 V 的行", "header": ["Key", "权重", "V 行", "权重 × V 行"], "rows": rows}


def _f13_explanations(s: dict, v) -> list[str]:
    scores, weights = s["dots"], s["weights"]
    n = len(scores)
    best = [j for j in range(n) if scores[j] == max(scores)]
    worst = [j for j in range(n) if scores[j] == min(scores)]
    spread_raw = max(scores) - min(scores)
    spread = max(s["scaled"]) - min(s["scaled"])
    most = [j for j in range(n) if weights[j] == max(weights)]
    least = [j for j in range(n) if weights[j] == min(weights)]
    lo = [min(row[c] for row in v) for c in range(len(v[0]))]
    hi = [max(row[c] for row in v) for c in range(len(v[0]))]
    inside = all(a - 1e-12 <= x <= b + 1e-12 for a, x, b in zip(lo, s["output"], hi))
    q = fmt.vector(s["query"])
    sums = "；".join(
        f"q·k_{j} = {_products(s['query'], kj)} = {fmt.short(x)}" for j, (kj, x) in enumerate(zip(s["keys"], scores))
    )
    first = (
        f"查询 q = {q} 与每个 Key 逐分量相乘再相加：{sums}。"
        f"{_keys_word(best)} 的分数 {fmt.short(max(scores))} 最大，与 q 最相似；"
        f"{_keys_word(worst)} 的分数 {fmt.short(min(scores))} 最小。"
    )
    if best == worst:
        first = f"查询 q = {q} 与每个 Key 逐分量相乘再相加：{sums}。各分数都相等。"
    return [
        first,
        f"d = {s['d']}，每个分数除以 √d = {fmt.short(s['scale'])}。除以同一个正数不改变大小顺序，"
        f"只把最大与最小的差距缩成原来的 1/√d：从 {fmt.fmt(spread_raw)} 缩成 {fmt.fmt(spread)}。",
        f"这一行最大的缩放分数是 {fmt.fmt(s['max'])}（{_keys_word(best)}），每项都减去它："
        "最大项变成 0，其余不大于 0，下一步的 exp 不会超过 1，也就不会溢出；softmax 的结果不受影响。",
        "取指数后每一项都是正数，最大项 exp(0) = 1："
        + "，".join(exp_term(x, e) for x, e in zip(s["shifted"], s["exps"]))
        + f"；它们的和 {printed_sum(s['exps'], s['total'])}" + ("。" if printed_sum(s["exps"], s["total"])[0] == "=" else
                                                              "（由未舍入的指数相加）。"),
        f"每一项除以和 {fmt.fmt(s['total'])}，得到和为 1 的权重。"
        + (
            f"{_keys_word(most)} 分到最多（{fmt.fmt(max(weights))}），{_keys_word(least)} 最少（{fmt.fmt(min(weights))}）。"
            if most != least
            else f"各项的权重都是 {fmt.fmt(max(weights))}。"
        ),
        "每个 Key 的 V 行乘以它的权重："
        + "；".join(
            f"Key {j}：{scaled_product(w, vj, c)}" for j, (w, vj, c) in enumerate(zip(weights, v, s["weighted"]))
        )
        + "。",
        f"把 {n} 份贡献逐分量相加，输出是 {fmt.vector(s['output'], fmt.fmt)}。权重都不小于 0 且和为 1，"
        "所以输出是 V 各行的加权平均，落在它们围成的凸包里："
        + "，".join(
            f"第 {c} 个分量 {fmt.fmt(x)} 介于 {fmt.short(a)} 与 {fmt.short(b)} 之间"
            for c, (x, a, b) in enumerate(zip(s["output"], lo, hi))
        )
        + ("。" if inside else "——不对，输出跑到了 V 的范围之外，这说明权重算错了。"),
    ]


def f13_frames(query=None, keys=None, values=None) -> list[dict]:
    """Figure F13's seven frames: one query row from scores to output, one more step per frame, marked.

    Without arguments: the page's example (query 0). Every sentence is built from its frame's numbers.

    >>> frames = f13_frames()
    >>> [f["condition"] for f in frames]  # doctest: +NORMALIZE_WHITESPACE
    ['第1步：点积分数', '第2步：除以 √d', '第3步：减去最大值', '第4步：取指数',
     '第5步：除以总和', '第6步：乘以 V 行', '第7步：相加得到输出']
    >>> [c["text"] for c in frames[0]["tables"][0]["rows"][0]]
    ['分数 q·k', '1', '5', '4', 'q = (1, 2, 0, 1)']
    >>> frames[0]["explanation"].split("：")[1]
    'q·k_0 = 1×1 + 2×0 + 0×1 + 1×0 = 1；q·k_1 = 1×2 + 2×1 + 0×0 + 1×1 = 5；q·k_2 = 1×0 + 2×1 + 0×1 + 1×2 = 4。Key 1 的分数 5 最大，与 q 最相似；Key 0 的分数 1 最小。'
    >>> [[c["highlight"] for c in row] for row in frames[1]["tables"][0]["rows"]]
    [[False, False, False, False, False], [True, True, True, True, True]]
    >>> [c["text"] for c in frames[-1]["tables"][1]["rows"][-1]]
    ['输出 = Σ', '1.0000', '', '(2.5554, 5.5338)']
    """
    q = att.as_vector(Q[ROW] if query is None else query, "query")
    k = att.as_matrix(K if keys is None else keys, "keys")
    v = att.as_matrix(V if values is None else values, "values")
    s = {**sc.visible_steps(q, k, v), "query": q, "keys": k}
    rows = _f13_rows(s)
    texts = _f13_explanations(s, v)
    rules = ["s_j = q·k_j = Σ q_c k_jc", f"s_j ÷ √d，d = {s['d']}", "x_j − max(x)", "e_j = exp(x_j − max)",
             "w_j = e_j ÷ Σ e", "c_j = w_j × v_j", "o = Σ c_j"]
    header = fmt.keys(len(k), corner="步骤 ＼ Key") + ["整行"]
    title = f"查询 q = {fmt.vector(q)}，{len(k)} 个 Key，d = {s['d']}"
    frames = []
    for step, name in enumerate(STEP_NAMES):
        # Steps 1-5 add a row to the score table, the new one marked; steps 6-7 keep it and fill the mix table.
        table_rows = [
            [_cell(label, r == step)] + [_cell(t, r == step) for t in cells] + [_cell(whole, r == step)]
            for r, (label, cells, whole) in enumerate(rows[: step + 1])
        ]
        tables = [{"title": title, "header": header, "rows": table_rows}]
        if step >= len(rows):
            tables.append(_f13_mix_table(s, v, step))
        frames.append({"condition": f"第{step + 1}步：{name}", "tables": tables, "rule": rules[step],
                       "explanation": texts[step]})
    return frames


# -- the exercises ---------------------------------------------------------------------------------------
def exercise_hand(q=None, k=None, v=None) -> dict:
    """Exercise 1: the inputs and the worked steps (by default the exercise's own, solved by ``hand_row``)."""
    if q is None:
        q, k, v, h = ex.HAND_Q, ex.HAND_K, ex.HAND_V, ex.hand_row()
    else:
        h = sc.visible_steps(q, k, v)
    return {
        "ex1_q": fmt.vector(q), "ex1_k": fmt.vectors(k), "ex1_v": fmt.vectors(v), "ex1_d": fmt.count(h["d"]),
        "ex1_steps": (fmt.keys(len(k), corner="步骤"), [
            ["点积（逐项相乘再相加）"] + [f"{_products(q, kj)} = {fmt.short(x)}" for kj, x in zip(k, h["dots"])],
            ["÷ √d"] + [fmt.fmt(x) for x in h["scaled"]],
            ["− 最大值"] + [fmt.fmt(x) for x in h["shifted"]],
            ["exp"] + [fmt.fmt(x) for x in h["exps"]],
            ["÷ 指数之和（权重）"] + [fmt.fmt(x) for x in h["weights"]],
            ["权重 × V 行"] + [scaled_product(w, vj, c) for w, vj, c in zip(h["weights"], v, h["weighted"])],
        ]),
        "ex1_sqrt": fmt.short(h["scale"]), "ex1_total": printed_sum(h["exps"], h["total"]), "ex1_out": fmt.vector(h["output"], fmt.fmt),
    }


def grow_sentence(r: dict) -> str:
    """Exercise 2's answer in words, from ``copied_row``: the copied row is the d-dimensional row at another temperature.

    >>> grow_sentence(ex.copied_row()).split("；")
    ['d = 8 时除以 √8 的权重，与 d = 2 的那一行在 T = 0.5 时的权重完全相同', '不缩放相当于 T = 0.1768，最大权重 0.9817，几乎全给了 Key 2。']
    """
    if not isinstance(r, dict) or not {"weights_big", "weights_raw", "scaled", "temperature_big"} <= r.keys():
        raise ValueError("r 必须是 copied_row 返回的字典")
    same = att.softmax(r["scaled"], temperature=r["temperature_big"])
    raw = r["weights_raw"]
    top = max(range(len(raw)), key=lambda j: raw[j])
    how = "几乎全给了" if raw[top] > 0.9 else "最多的给了"
    return (f"d = {fmt.count(r['d_big'])} 时除以 √{fmt.count(r['d_big'])} 的权重，与 d = {fmt.count(r['d'])} 的那一行在 "
            f"T = {fmt.short(r['temperature_big'])} 时的权重{same_or_gap(att.max_abs_diff([r['weights_big']], [same]))}；"
            f"不缩放相当于 T = {fmt.fmt(r['temperature_raw'])}，最大权重 {fmt.fmt(raw[top])}，{how} Key {top}。")


def exercise_grow(q=ex.GROW_Q, k=ex.GROW_K, copies=ex.COPIES) -> dict:
    """Exercise 2: the inputs, the three ways to score the row (d, copied and scaled, copied and not), the sentence."""
    r = ex.copied_row(q, k, copies)
    d, big = fmt.count(r["d"]), fmt.count(r["d_big"])

    def row(name, scores, temperature, weights, cell=fmt.fmt):
        return [name, " / ".join(cell(x) for x in scores), temperature, " / ".join(fmt.fmt(x) for x in weights),
                fmt.fmt(max(weights))]

    return {
        "ex2_q": fmt.vector(q), "ex2_k": fmt.vectors(k), "ex2_copies": fmt.count(copies), "ex2_n": fmt.count(len(k)), "ex2_d": d, "ex2_d_big": big,
        "ex2_dots": " / ".join(fmt.short(x) for x in r["dots"]), "ex2_dots_big": " / ".join(fmt.short(x) for x in r["dots_big"]),
        "ex2_table": (["分数的算法", "分数（Key " + " / ".join(str(j) for j in range(len(k))) + "）",
                       f"相当于 d = {d} 那一行的温度", "权重", "最大权重"], [
            row(f"d = {d}，除以 √{d}", r["scaled"], "1", r["weights"]),
            row(f"d = {big}，除以 √{big}", r["scaled_big"], fmt.short(r["temperature_big"]), r["weights_big"]),
            row(f"d = {big}，不缩放", r["dots_big"], fmt.fmt(r["temperature_raw"]), r["weights_raw"], fmt.short),
        ]),
        "ex2_sentence": grow_sentence(r),
    }


def exercise_code() -> dict:
    """Exercise 3: a row of scores to try, and the doctest the reader's function must pass."""
    return {"ex3_scores": python_list(ex.CODE_SCORES), "ex3_doctest": fmt.Md(fmt.doctest_block(ex.shifted_softmax))}
