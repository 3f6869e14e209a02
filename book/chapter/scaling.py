"""What the scaling page (ch02/scaling.md) glues: its tables, the few sentences its data decide, F13's frames.

The teaching code computes every number; this module writes them through ``chapter.fmt``. Each function
takes its example's inputs (the page's by default) and returns ``{glue name: text or (header, rows)}``.

>>> inputs()["f13_q"], inputs()["f13_k"]
('(1, 2, 0, 1)', '(1, 0, 1, 0)、(2, 1, 0, 1)、(0, 1, 1, 2)')
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


# -- small writers -----------------------------------------------------------------------------------------
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


def _slashed(xs) -> str:
    return " / ".join(fmt.fmt(x) for x in xs)


def _gap(x: float) -> str:
    return "差 " + fmt.difference(x)


def same_or_gap(diff: float) -> str:
    """Two results' largest difference in words: 完全相同 when it is exactly 0.

    >>> same_or_gap(0.0), same_or_gap(2.5e-16)
    ('完全相同', '最多相差 2.5 × 10⁻¹⁶')
    """
    diff = att.real(diff, "diff")
    return "完全相同" if diff == 0 else f"最多相差 {fmt.difference(diff)}"


def scaled_product(w: float, vj, exact) -> str:
    """A weight times a V row, written out: ``=`` when the printed weight gives the printed result, else ``≈``.

    >>> scaled_product(0.62246, [4, 0], [2.48984, 0.0]), scaled_product(0.25, [4, 0], [1.0, 0.0])[-18:]
    ('0.6225 × (4, 0) ≈ (2.4898, 0.0000)', '= (1.0000, 0.0000)')
    """
    w, vj, exact = att.real(w, "w"), att.as_vector(vj, "vj"), att.as_vector(exact, "exact")
    if len(vj) != len(exact):
        raise ValueError(f"vj 与 exact 的维数必须相同，收到 {len(vj)} 与 {len(exact)}")
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
    """A note under a table with sums, only when a printed sum is not the sum of its printed cells.

    >>> rounding_note([[0.25, 0.75]]), rounding_note([[0.13534, 0.60653, 1.0]])
    ('', '表中的合计由未舍入的权重相加，所以与表中四位小数之和可能差最后一位。')
    """
    rows = [list(r) for r in att.as_matrix(matrix, "matrix")]
    exact = all(fmt.equals(sum(fmt.printed(fmt.fmt(x)) for x in r), sum(r)) == "=" for r in rows + list(zip(*rows)))
    return "" if exact else "表中的合计由未舍入的权重相加，所以与表中四位小数之和可能差最后一位。"


def inputs(q=Q, k=K, v=V, row=ROW) -> dict:
    """F13's and the page's inputs as its 输入与适用条件 boxes name them."""
    return {
        "f13_q": fmt.vector(q[row]), "f13_k": fmt.vectors(k), "f13_v": fmt.vectors(v),
        "ex_q": fmt.vectors(q), "n_queries": fmt.count(len(q)), "f13_frames": fmt.count(len(f13_frames(q[row], k, v))),
        "f13_d": fmt.count(len(q[0])), "f13_n": fmt.count(len(k)), "f13_row": fmt.count(row),
    }


# -- why divide by √d: the measurement, and √d as a temperature ---------------------------------------------
def measurement(dims=sc.MEASURE_DIMS, trials=sc.MEASURE_TRIALS, n_keys=sc.MEASURE_KEYS,
                seed=sc.MEASURE_SEED) -> dict:
    """The tables of ``measure_scaling``, their sentence's numbers (largest d), and F13's ÷√d against T = √d."""
    measured = [sc.measure_scaling(d, trials=trials, n_keys=n_keys, seed=seed) for d in dims]
    big, scaled_var = measured[-1], [m["var_scaled"] for m in measured]
    keys = ("max_weight_raw", "max_weight_scaled", "grad_raw", "grad_scaled")
    s = sc.visible_steps(Q[ROW], K, V)
    by_temperature = att.softmax(s["dots"], temperature=s["scale"])
    return {
        "meas_dims": "、".join(fmt.count(d) for d in dims), "meas_trials": fmt.count(trials),
        "meas_keys": fmt.count(n_keys), "meas_seed": fmt.count(seed), "meas_uniform": fmt.fmt(1 / n_keys),
        "tbl_variance": (["d", "q·k 的方差", "q·k / √d 的方差"],
                         [[fmt.count(m["d"]), fmt.fmt(m["var_raw"]), fmt.fmt(m["var_scaled"])] for m in measured]),
        "meas_scaled_range": f"{fmt.fmt(min(scaled_var))} 到 {fmt.fmt(max(scaled_var))}",
        "meas_grad_note": grad_note(measured),
        "tbl_saturation": (["d", "最大权重：不缩放", "最大权重：缩放", "雅可比最大元：不缩放", "雅可比最大元：缩放"],
                           [[fmt.count(m["d"])] + [fmt.fmt(m[key]) for key in keys] for m in measured]),
        "meas_big_d": fmt.count(big["d"]),
        **{f"meas_big_{tag}": fmt.fmt(big[key]) for tag, key in zip(("w_raw", "w_scaled", "g_raw", "g_scaled"), keys)},
        "temp_equal_diff": same_or_gap(att.max_abs_diff([s["weights"]], [by_temperature])),
        "temp_sqrt_d": fmt.fmt(s["scale"]),
    }


def grad_note(measured: list[dict]) -> str:
    """The d's where scaling made the Jacobian's largest entry smaller (softmax was not saturated there).

    >>> grad_note([{"d": 2, "grad_raw": 0.2, "grad_scaled": 0.1}, {"d": 8, "grad_raw": 0.1, "grad_scaled": 0.2}])[:9]
    'd = 2 时缩放'
    """
    measured = att.as_list(measured, "measured")
    if not all(isinstance(m, dict) and {"d", "grad_raw", "grad_scaled"} <= m.keys() for m in measured):
        raise ValueError("measured 的每一项必须是 measure_scaling 返回的字典（有 d、grad_raw、grad_scaled）")
    smaller = [m["d"] for m in measured if att.real(m["grad_scaled"], "measured") < att.real(m["grad_raw"], "measured")]
    return "" if not smaller else (
        f"{'、'.join(f'd = {fmt.count(d)}' for d in smaller)} 时缩放后的值反而略小：d 小时不缩放的分数本来就不大，"
        "softmax 没有饱和；除以 √d 让权重更平均，而 p_j 小于 1/2 时 p_j(1 − p_j) 随 p_j 变小。")


# -- the stable softmax ------------------------------------------------------------------------------------
def overflow(scores=sc.BIG_SCORES, small=sc.SMALL_SCORES) -> dict:
    """What Python, numpy and the naive formula make of a row whose exp overflows; each format's limit;
    a second row where exp(x − max) underflows to exactly 0, though in exact arithmetic it is positive."""
    xs, ys = att.as_vector(scores, "scores"), att.as_vector(small, "small")
    if max(xs) <= sc.exp_limit():
        raise ValueError(f"scores 的最大值 {fmt.short(max(xs))} 没有超过 exp 的界：这一节要一行会溢出的分数")
    under = [math.exp(y - max(ys)) for y in ys]
    if all(e > 0 for e in under):
        raise ValueError(f"small {python_list(ys)} 减去最大值后没有一项下溢为 0：这一段要一行会下溢的分数")
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
                       [[name, fmt.sci(x), fmt.fmt(sc.exp_limit(x))] for name, x in limits]),
        "f16_limit": fmt.fmt(sc.exp_limit(limits[0][1])), "under_scores": python_list(ys),
        "under_exps": python_list(under, cell=fmt.fmt), "under_weights": python_list(att.softmax(ys), cell=fmt.fmt),
    }


def row_sum_sentence(weights) -> str:
    """How each query row's total compares with 1, read from the printed total (a wrong-axis softmax).

    >>> row_sum_sentence([[0.25, 0.5], [0.5, 0.25], [0.25, 0.25]])
    '查询 0、查询 1 的合计为 0.7500，不到 1；查询 2 的合计为 0.5000，不到 1。'
    """
    groups: dict[str, list[int]] = {}
    for i, row in enumerate(att.as_matrix(weights, "weights")):
        groups.setdefault(fmt.fmt(sum(row)), []).append(i)
    verdict = {True: "恰为 1", False: "不到 1"}
    return "；".join(f"{'、'.join(f'查询 {i}' for i in rows)} 的合计为 {total}，"
                    + ("超过 1" if fmt.printed(total) > 1 else verdict[fmt.printed(total) == 1])
                    for total, rows in groups.items()) + "。"


def wrong_output_sentence(outputs, values) -> str:
    """Whether the outputs mixed with the wrong-axis table stay inside each column's range of V.

    >>> wrong_output_sentence([[1.0, 2.0], [7.0, 2.0]], [[0, 0], [6, 6]]).split("；")[1]
    '查询 1 的输出已跑出 V 各列的范围。'
    """
    out, v = att.as_matrix(outputs, "outputs"), att.as_matrix(values, "values")
    outside = [i for i, o in enumerate(out) if any(not min(c) - 1e-12 <= x <= max(c) + 1e-12 for x, c in zip(o, zip(*v)))]
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

    def sums(m):
        return ([[f"查询 {i}"] + [fmt.fmt(x) for x in row] + [fmt.fmt(sum(row))] for i, row in enumerate(m)]
                + [["列之和"] + [fmt.fmt(sum(col)) for col in zip(*m)] + [""]])

    return {
        "tbl_axis_right": (header, sums(right)), "tbl_axis_wrong": (header, sums(wrong)),
        "axis_sum_note": rounding_note(right + wrong),
        "axis_wrong_sentence": row_sum_sentence(wrong),
        "axis_wrong_outputs": wrong_output_sentence(att.matmul(wrong, att.as_matrix(v, "v")), v),
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
        naive = "算出了结果" if sc.naive_softmax(moved) else ""
    except ValueError:
        naive = "ValueError：exp 溢出"
    _, both = att.attention(q, [k[j] for j in order], [v[j] for j in order], causal=False)
    _, keys_only = att.attention(q, [k[j] for j in order], v, causal=False)
    reference = numpy_attention(q, k, v)
    width = heads * len(q[0])
    by_width = [sc.scaled_by(qi, k, v, width)["output"] for qi in q]
    off = ["与 1 " + _gap(max(abs(sum(r) - 1) for r in w)) for w in (right, wrong)]
    return {
        "chk_shift": fmt.short(shift), "chk_order": _keys_word(order),
        "tbl_checks": (["检查", "正确实现", "故意写错的变体", "变体的结果"], [
            ["每行权重之和为 1", off[0], "沿查询（列）做 softmax", off[1]],
            [f"分数加 {fmt.short(shift)}，权重不变",
             _gap(att.max_abs_diff([att.softmax(scaled)], [att.softmax(moved)])), "不减最大值的原式", naive],
            ["Key 与 V 一起重排，输出不变", _gap(att.max_abs_diff(out, both)), "只重排 Key", _gap(att.max_abs_diff(out, keys_only))],
            ["与 numpy 参照一致", _gap(att.max_abs_diff(out, reference)), f"按模型宽度 {fmt.count(width)} 缩放",
             _gap(att.max_abs_diff(by_width, reference))],
        ]),
    }


# -- temperature -------------------------------------------------------------------------------------------
def sweep(q=Q, k=K, v=V, row=ROW, temperatures=sc.TEMPERATURES) -> dict:
    """The temperature table (weights, peak, output per T) and, from the same rows, the coldest and the
    hottest: their peak weights, and the output's distance to the top key's V row and to V's mean.

    >>> values = sweep(temperatures=[0.5, 4.0])
    >>> values["sweep_peak_0"], values["sweep_peak_1"], values["sweep_to_top_1"], values["sweep_mean"]
    ('0.7214', '0.4018', '3.8758', '(4.0000, 4.0000)')
    """
    scaled = sc.visible_steps(q[row], k, v)["scaled"]
    rows = sc.temperature_sweep(scaled, v, temperatures)
    ends = [min(rows, key=lambda r: r["temperature"]), max(rows, key=lambda r: r["temperature"])]
    if ends[0] is ends[1]:
        raise ValueError("temperatures 至少要有两个不同的温度，才谈得上“从……增到……”")
    # The colder, the more weight goes to the highest score: the largest weight at the lowest T.
    top = max(range(len(v)), key=lambda j: ends[0]["weights"][j])
    mean = [statistics.fmean(col) for col in zip(*v)]
    return {
        "sweep_scores": python_list(scaled, cell=fmt.fmt), "sweep_ts": "、".join(fmt.short(t) for t in temperatures),
        "tbl_sweep": (["温度 T", "权重（Key " + " / ".join(str(j) for j in range(len(k))) + "）", "最大权重", "输出"], [
            [fmt.short(r["temperature"]), _slashed(r["weights"]), fmt.fmt(max(r["weights"])),
             fmt.vector(r["output"], fmt.fmt)] for r in rows]),
        "sweep_top": fmt.count(top), "sweep_top_v": fmt.vector(v[top]), "sweep_mean": fmt.vector(mean, fmt.fmt),
        **{f"sweep_{name}_{i}": cell(r) for i, r in enumerate(ends) for name, cell in (
            ("t", lambda r: fmt.short(r["temperature"])), ("peak", lambda r: fmt.fmt(max(r["weights"]))),
            ("to_top", lambda r: fmt.fmt(math.dist(r["output"], v[top]))),
            ("to_mean", lambda r: fmt.fmt(math.dist(r["output"], mean))))},
    }


# -- figure F13 --------------------------------------------------------------------------------------------
STEP_NAMES = ["分数（点积、除以 √d）", "权重（减去最大值、取指数、除以总和）", "输出（按权重混合 V 的行）"]
RULES = ["s_j = q·k_j ÷ √d", "w_j = exp(s_j − max s) ÷ Σ exp", "o = Σ w_j v_j"]


def _f13_rows(s: dict, v) -> list[tuple[int, str, list[str], str]]:
    """The table's rows: (the step that adds it, label, one cell per key, the whole row's cell)."""
    return [
        (0, "分数 q·k", [fmt.fmt(x) for x in s["dots"]], f"q = {fmt.vector(s['query'])}"),
        (0, "÷ √d", [fmt.fmt(x) for x in s["scaled"]], f"d = {s['d']}，√d = {fmt.fmt(s['scale'])}"),
        (1, "− 最大值", [fmt.fmt(x) for x in s["shifted"]], f"最大值 = {fmt.fmt(s['max'])}"),
        (1, "exp", [fmt.fmt(x) for x in s["exps"]], f"和 {printed_sum(s['exps'], s['total'])}"),
        (1, "÷ 和 = 权重", [fmt.fmt(x) for x in s["weights"]], f"权重之和 {printed_sum(s['weights'], sum(s['weights']))}"),
        (2, "V 行", [fmt.vector(vj) for vj in v], ""),
        (2, "权重 × V 行", [fmt.vector(c, fmt.fmt) for c in s["weighted"]], f"输出 = {fmt.vector(s['output'], fmt.fmt)}"),
    ]


def _f13_explanations(s: dict, v) -> list[str]:
    scores = s["dots"]
    top = _keys_word([j for j, x in enumerate(scores) if x == max(scores)])
    inside = all(min(c) - 1e-12 <= x <= max(c) + 1e-12 for x, c in zip(s["output"], zip(*v)))
    sums = "；".join(f"q·k_{j} = {_products(s['query'], kj)} = {fmt.fmt(x)}"
                    for j, (kj, x) in enumerate(zip(s["keys"], scores)))
    total = printed_sum(s["exps"], s["total"])
    return [
        f"逐分量相乘再相加：{sums}"
        + (f"（{top} 最大）。" if max(scores) > min(scores) else "（各分数相等）。")
        + f"再除以 √d = {fmt.fmt(s['scale'])}：顺序不变，差距缩成原来的 1/√d。",
        f"减去最大值 {fmt.fmt(s['max'])}，再取指数："
        + "，".join(exp_term(x, e) for x, e in zip(s["shifted"], s["exps"]))
        + f"；和 {total}{'' if total[0] == '=' else '（由未舍入的指数相加）'}。每一项除以和，得到和为 1 的权重。",
        "V 行乘以权重：" + "；".join(f"Key {j}：{scaled_product(x, vj, c)}"
                                 for j, (x, vj, c) in enumerate(zip(s["weights"], v, s["weighted"])))
        + f"。逐分量相加，输出是 {fmt.vector(s['output'], fmt.fmt)}"
        + ("，每个分量都在 V 那一列的范围之内。" if inside else "——不对，它跑到了 V 的范围之外，权重算错了。"),
    ]


def f13_frames(query=None, keys=None, values=None) -> list[dict]:
    """Figure F13's frames: one query row from scores to output, one step of the row per frame, marked.

    Without arguments: the page's example (query 0). Every sentence is built from its frame's numbers.

    >>> frames = f13_frames()
    >>> frames[0]["condition"], len(frames)
    ('第1步：分数（点积、除以 √d）', 3)
    >>> [c["text"] for c in frames[0]["tables"][0]["rows"][0]]
    ['分数 q·k', '1.0000', '5.0000', '4.0000', 'q = (1, 2, 0, 1)']
    >>> [row[0]["highlight"] for row in frames[1]["tables"][0]["rows"]]
    [False, False, True, True, True]
    >>> [c["text"] for c in frames[-1]["tables"][0]["rows"][-1]][-1]
    '输出 = (2.5554, 5.5338)'
    """
    q = att.as_vector(Q[ROW] if query is None else query, "query")
    k = att.as_matrix(K if keys is None else keys, "keys")
    v = att.as_matrix(V if values is None else values, "values")
    s = {**sc.visible_steps(q, k, v), "query": q, "keys": k}
    rows, texts = _f13_rows(s, v), _f13_explanations(s, v)
    header, title = fmt.keys(len(k), corner="步骤 ＼ Key") + ["整行"], "一个查询行"
    frames = []
    for step, name in enumerate(STEP_NAMES):
        # Each step adds its rows to the one table, marked; the earlier rows stay.
        table = [[{"text": t, "state": None, "highlight": at == step} for t in [label, *cells, whole]]
                 for at, label, cells, whole in rows if at <= step]
        frames.append({"condition": f"第{step + 1}步：{name}", "tables": [{"title": title, "header": header, "rows": table}],
                       "rule": RULES[step], "explanation": texts[step]})
    return frames


# -- the exercises ---------------------------------------------------------------------------------------
def jg_sentence(jg, peak: float) -> str:
    """Exercise 1's comparison: J·g's largest component against J's largest entry.

    >>> jg_sentence([0.47, -0.47], 0.235)[:18], jg_sentence([0.1, -0.1], 0.2)[:11]
    ('它绝对值最大的分量是最大元的 2 倍', '它的分量都不超过最大元')
    """
    top, peak = max(abs(x) for x in att.as_vector(jg, "jg")), att.real(peak, "peak")
    if not peak > 0:
        raise ValueError(f"peak 必须是正数，收到 {peak!r}")
    return (f"它绝对值最大的分量是最大元的 {fmt.multiple(top / peak)} 倍：最大元只管一个分数对一个权重，"
            "g 的各个分量一起变时，影响叠加了起来。" if top > peak else "它的分量都不超过最大元：这个 g 的各个分量的影响互相抵消了一部分。")


def exercise_hand(q=ex.HAND_Q, k=ex.HAND_K, g=ex.HAND_G) -> dict:
    """Exercise 1: the inputs, the steps to the weights, J row by row, J·g and the comparison."""
    h = ex.hand_row(q, k, g)
    steps = [["点积（逐项相乘再相加）"] + [f"{_products(q, kj)} = {fmt.fmt(x)}" for kj, x in zip(k, h["dots"])]]
    steps += [[name] + [fmt.fmt(x) for x in h[key]] for name, key in (
        ("÷ √d", "scaled"), ("− 最大值", "shifted"), ("exp", "exps"), ("÷ 指数之和（权重 p）", "weights"))]
    steps += [[f"J 的第 {i} 行（∂p_{i}/∂s_j）"] + [fmt.fmt(x) for x in row] for i, row in enumerate(h["jacobian"])]
    return {
        "ex1_q": fmt.vector(q), "ex1_k": fmt.vectors(k), "ex1_g": fmt.vector(g), "ex1_d": fmt.count(h["d"]),
        "ex1_n": fmt.count(len(k)), "ex1_steps": (fmt.keys(len(k), corner="步骤"), steps),
        "ex1_sqrt": fmt.fmt(h["scale"]), "ex1_total": printed_sum(h["exps"], h["total"]),
        "ex1_peak": fmt.fmt(h["peak"]), "ex1_jg": fmt.vector(h["jg"], fmt.fmt), "ex1_sentence": jg_sentence(h["jg"], h["peak"]),
    }


def grow_sentence(r: dict) -> str:
    """Exercise 2's answer from ``copied_row``: the copied row is the d-dimensional row at another temperature.

    >>> grow_sentence(ex.copied_row()).split("；")[1]
    '不缩放相当于 T = 0.1768，最大权重 0.9817，几乎全给了 Key 2。'
    """
    if not isinstance(r, dict) or not {"weights_big", "weights_raw", "scaled", "temperature_big"} <= r.keys():
        raise ValueError("r 必须是 copied_row 返回的字典")
    same, raw = att.softmax(r["scaled"], temperature=r["temperature_big"]), r["weights_raw"]
    top = max(range(len(raw)), key=lambda j: raw[j])
    how = "几乎全给了" if raw[top] > 0.9 else "最多的给了"
    return (f"d = {fmt.count(r['d_big'])} 时除以 √{fmt.count(r['d_big'])} 的权重，与 d = {fmt.count(r['d'])} 的那一行在 "
            f"T = {fmt.fmt(r['temperature_big'])} 时的权重{same_or_gap(att.max_abs_diff([r['weights_big']], [same]))}；"
            f"不缩放相当于 T = {fmt.fmt(r['temperature_raw'])}，最大权重 {fmt.fmt(raw[top])}，{how} Key {top}。")


def exercise_grow(q=ex.GROW_Q, k=ex.GROW_K, copies=ex.COPIES) -> dict:
    """Exercise 2: the inputs, the three ways to score the row (d, copied and scaled, copied and not), the sentence."""
    r = ex.copied_row(q, k, copies)
    d, big = fmt.count(r["d"]), fmt.count(r["d_big"])
    rows = [(f"d = {d}，除以 √{d}", "scaled", 1.0, "weights"),
            (f"d = {big}，除以 √{big}", "scaled_big", r["temperature_big"], "weights_big"),
            (f"d = {big}，不缩放", "dots_big", r["temperature_raw"], "weights_raw")]
    return {
        "ex2_q": fmt.vector(q), "ex2_k": fmt.vectors(k), "ex2_copies": fmt.count(copies), "ex2_n": fmt.count(len(k)),
        "ex2_d": d, "ex2_d_big": big, "ex2_dots": _slashed(r["dots"]), "ex2_dots_big": _slashed(r["dots_big"]),
        "ex2_table": (["分数的算法", "分数（Key " + " / ".join(str(j) for j in range(len(k))) + "）",
                       f"相当于 d = {d} 那一行的温度", "权重", "最大权重"],
                      [[name, _slashed(r[s]), fmt.fmt(t), _slashed(r[w]), fmt.fmt(max(r[w]))] for name, s, t, w in rows]),
        "ex2_sentence": grow_sentence(r),
    }


def exercise_code() -> dict:
    """Exercise 3: a row of scores to try, and the doctest the reader's function must pass."""
    return {"ex3_scores": python_list(ex.CODE_SCORES), "ex3_doctest": fmt.Md(fmt.doctest_block(ex.shifted_softmax))}
