"""第2章教学代码：手算一次注意力——点积、除以 √d、减去最大值、softmax、混合 V。

本文件是《手算注意力与因果掩码》第2章“缩放与混合”一页的配套代码。softmax、分数与
注意力本身来自 ``02_attention.py``（一个想法只有一处实现）；这里只补上那一页新讲的东西：

- ``visible_steps``：不加 mask 时一个查询行的每一步（由 ``02_attention.row_steps`` 算出），
  动态图解 F13 的每一帧就是其中一步；``scaled_by``：按另一个维度缩放，作“用错了 d”的对照；
- ``mix``：输出 = Σ 权重 × V 行；
- ``measure_scaling``：用固定种子的随机向量，实测点积的方差随 d 增长、softmax 随之饱和；
- ``naive_softmax`` 与 ``exp_limit``：不减最大值的写法在哪里溢出；
- ``softmax_over_queries``：故意写错的轴，只用于对照和测试。

全部例子都是人工构造的小整数矩阵，没有训练过的模型；只用 Python 标准库。
直接运行 ``python3 code/02_scaling.py`` 会先做自检，再以 JSON 打印演示结果。
"""

from __future__ import annotations

import math
import random
import statistics
import sys

from book_tools import fmt, load, short

att = load("02_attention")

__all__ = [
    "visible_steps",
    "scaled_by",
    "mix",
    "softmax_over_queries",
    "row_sum_sentence",
    "naive_softmax",
    "exp_limit",
    "measure_scaling",
    "temperature_sweep",
    "sweep_sentence",
    "f13_frames",
    "self_test",
    "run_demo",
]

# 本页自己的例子：d = 4（√d = 2），三个查询、三个 Key，V 是平面上的三个点。
EXAMPLE_Q = [[1.0, 2.0, 0.0, 1.0], [0.0, 1.0, 2.0, 0.0], [2.0, 0.0, 1.0, 1.0]]
EXAMPLE_K = [[1.0, 0.0, 1.0, 0.0], [2.0, 1.0, 0.0, 1.0], [0.0, 1.0, 1.0, 2.0]]
EXAMPLE_V = [[6.0, 0.0], [0.0, 6.0], [6.0, 6.0]]
QUERY = 0  # F13 一步一步走的是查询 0 这一行
N_HEADS = 4  # “按模型宽度缩放”的错误：假设这个头属于 4 个头、宽度 4 × d 的模型
BIG_SCORES = [1000.0, 1001.0, 1002.0]  # 不减最大值就溢出的一行分数
TEMPERATURES = [0.25, 0.5, 1.0, 2.0, 4.0, 16.0]
# 实测方差与饱和：几个 d、每个 d 的试验次数、每次的 Key 数，以及固定的随机种子。
MEASURE_DIMS = [2, 8, 32, 128]
MEASURE_TRIALS = 200
MEASURE_KEYS = 8
MEASURE_SEED = 2017


def _vector(x: object, name: str) -> list[float]:
    """边界校验一行向量：非空、有序、全是有限实数；返回 float 的副本。"""
    cells = att._as_list(x, name)
    if not cells:
        raise ValueError(f"{name} 不能为空：至少需要一个数")
    out = [att._real(c, f"{name}[{j}]") for j, c in enumerate(cells)]
    for j, c in enumerate(out):
        if not math.isfinite(c):
            raise ValueError(f"{name}[{j}] 是 {c}：必须有限（不可为 NaN 或 ±∞）")
    return out


def _matrix(a: object, name: str) -> list[list[float]]:
    return att._matrix(a, name)


def _vec(xs: list[float]) -> str:
    return "(" + ", ".join(short(x) for x in xs) + ")"


def _vec4(xs: list[float]) -> str:
    return "(" + ", ".join(fmt(x).replace("-", "−") for x in xs) + ")"


def mix(weights: list[float], values: list[list[float]]) -> list[float]:
    """输出 = Σ 权重 × V 行。权重必须非负、和为 1，所以输出是 V 各行的加权平均。

    >>> mix([0.25, 0.75], [[0, 8], [4, 0]])
    [3.0, 2.0]
    >>> mix([0.5, 0.6], [[0, 8], [4, 0]])
    Traceback (most recent call last):
    ...
    ValueError: weights 之和必须为 1，收到 1.1
    """
    w = _vector(weights, "weights")
    v = _matrix(values, "values")
    if len(w) != len(v):
        raise ValueError(f"weights 的长度必须等于 values 的行数，收到 {len(w)} 与 {len(v)}")
    for j, x in enumerate(w):
        if x < 0:
            raise ValueError(f"weights[{j}] 是 {x}：权重不可为负")
    if not math.isclose(sum(w), 1.0, rel_tol=0, abs_tol=1e-9):
        raise ValueError(f"weights 之和必须为 1，收到 {sum(w):.6g}")
    return [sum(wj * vj[c] for wj, vj in zip(w, v)) for c in range(len(v[0]))]  # (d_v,)


def visible_steps(query: list[float], keys: list[list[float]], values: list[list[float]]) -> dict:
    """不加 mask 的一个查询行：``02_attention.row_steps`` 在全部 Key 都可见时的每一步，另加 ``d``。

    >>> s = visible_steps([1, 2, 0, 1], [[1, 0, 1, 0], [2, 1, 0, 1], [0, 1, 1, 2]],
    ...                   [[6, 0], [0, 6], [6, 6]])
    >>> s["d"], s["dots"], s["scale"], s["scaled"], s["shifted"]
    (4, [1.0, 5.0, 4.0], 2.0, [0.5, 2.5, 2.0], [-2.0, 0.0, -0.5])
    >>> [round(x, 4) for x in s["weights"]], [round(x, 4) for x in s["output"]]
    ([0.0777, 0.5741, 0.3482], [2.5554, 5.5338])
    """
    k = _matrix(keys, "keys")
    steps = att.row_steps(query, k, values, [True] * len(k))
    return {"d": len(steps["products"][0]), **steps}


def scaled_by(query: list[float], keys: list[list[float]], values: list[list[float]], dim: int) -> dict:
    """按维度 ``dim`` 缩放（除以 √dim）后的分数、权重与输出。``dim`` 取模型宽度，就是“用错了 d”。

    >>> s = scaled_by([1, 2, 0, 1], [[1, 0, 1, 0], [2, 1, 0, 1], [0, 1, 1, 2]], [[6, 0], [0, 6], [6, 6]], 16)
    >>> s["scale"], s["scaled"], [round(w, 4) for w in s["weights"]]
    (4.0, [0.25, 1.25, 1.0], [0.1714, 0.4658, 0.3628])
    >>> scaled_by([1.0], [[1.0]], [[1.0]], 0)
    Traceback (most recent call last):
    ...
    ValueError: dim 必须是不小于 1 的整数，收到 0
    """
    att._check_count(dim, "dim", minimum=1)
    v = _matrix(values, "values")
    dots = visible_steps(query, keys, v)["dots"]  # 点积只有一处实现：02_attention.row_steps
    scale = att.score_scale(dim)
    scaled = [x / scale for x in dots]
    weights = att.softmax(scaled)
    return {"d": dim, "scale": scale, "scaled": scaled, "weights": weights, "output": mix(weights, v)}


def softmax_over_queries(scores: list[list[float]]) -> list[list[float]]:
    """故意写错的轴：对每一列（同一个 Key、不同查询）做 softmax。只用于对照和测试。

    每一列之和变成 1，每一行之和却不再是 1。

    >>> w = softmax_over_queries([[0.0, 0.0], [0.0, 2.0]])
    >>> [[round(x, 4) for x in row] for row in w]
    [[0.5, 0.1192], [0.5, 0.8808]]
    >>> [round(sum(row), 4) for row in w]
    [0.6192, 1.3808]
    """
    s = _matrix(scores, "scores")
    columns = [att.softmax([row[j] for row in s]) for j in range(len(s[0]))]
    return [[columns[j][i] for j in range(len(s[0]))] for i in range(len(s))]  # (n_query, n_key)


def row_sum_sentence(weights: list[list[float]]) -> str:
    """一句话说出每个查询行的权重合计与 1 相比如何（用来读沿错轴做 softmax 的结果）。

    >>> row_sum_sentence([[0.25, 0.5], [0.5, 0.25], [0.25, 0.25]])
    '查询 0、查询 1 的合计为 0.7500，不到 1；查询 2 的合计为 0.5000，不到 1。'
    >>> row_sum_sentence(softmax_over_queries([[0.0, 0.0], [0.0, 2.0]]))
    '查询 0 的合计为 0.6192，不到 1；查询 1 的合计为 1.3808，超过 1。'
    """
    w = _matrix(weights, "weights")
    groups: dict[str, list[int]] = {}
    for i, row in enumerate(w):
        groups.setdefault(fmt(sum(row)), []).append(i)
    parts = []
    for total, rows in groups.items():
        x = float(total)
        verdict = "恰为 1" if math.isclose(x, 1.0, abs_tol=5e-5) else ("超过 1" if x > 1 else "不到 1")
        parts.append(f"{'、'.join(f'查询 {i}' for i in rows)} 的合计为 {total}，{verdict}")
    return "；".join(parts) + "。"


def naive_softmax(values: list[float]) -> list[float]:
    """教科书上的原式 exp(x_j) / Σ exp(x)，不减最大值。只用于对照。

    分数大到 exp 溢出，或小到 exp 全部下溢为 0 时，它没有答案：这里报错并说明原因。

    >>> [round(p, 4) for p in naive_softmax([0, 1, 2])]
    [0.09, 0.2447, 0.6652]
    >>> naive_softmax([1000, 1001, 1002])
    Traceback (most recent call last):
    ...
    ValueError: values[0] = 1000：exp 溢出（float 的 exp 只到 x ≈ 709.7827），请先减去最大值
    >>> naive_softmax([-1000, -1001])
    Traceback (most recent call last):
    ...
    ValueError: values 的 exp 全部下溢为 0，分母为 0：请先减去最大值
    """
    xs = _vector(values, "values")
    exps = []
    for j, x in enumerate(xs):
        try:
            exps.append(math.exp(x))
        except OverflowError:
            raise ValueError(
                f"values[{j}] = {short(x)}：exp 溢出（float 的 exp 只到 x ≈ {exp_limit():.4f}），请先减去最大值"
            ) from None
    total = sum(exps)
    if total == 0:
        raise ValueError("values 的 exp 全部下溢为 0，分母为 0：请先减去最大值")
    return [e / total for e in exps]


def exp_limit(largest: float = sys.float_info.max) -> float:
    """exp(x) 仍有限的最大 x：ln(最大有限值)。默认是 Python float（float64）的界。

    >>> round(exp_limit(), 2)
    709.78
    >>> round(exp_limit(65504.0), 2)  # float16 的最大有限值
    11.09
    >>> exp_limit(0.5)
    Traceback (most recent call last):
    ...
    ValueError: largest 必须是大于 1 的有限数，收到 0.5
    """
    x = att._real(largest, "largest")
    if not math.isfinite(x) or x <= 1:
        raise ValueError(f"largest 必须是大于 1 的有限数，收到 {largest!r}")
    return math.log(x)


def _jacobian_peak(p: list[float]) -> float:
    # softmax 的雅可比矩阵是 diag(p) − p p^T，绝对值最大的元素是 max p_j(1 − p_j) ≤ 1/4。
    return max(pj * (1 - pj) for pj in p)


def measure_scaling(d: int, *, trials: int = MEASURE_TRIALS, n_keys: int = MEASURE_KEYS, seed: int = MEASURE_SEED) -> dict:
    """实测：分量独立、均值 0、方差 1 的随机 q 与 k，点积的方差约为 d；除以 √d 后约为 1。

    每次试验取一个查询和 ``n_keys`` 个 Key，分别不缩放、缩放地做 softmax，
    记录最大权重与 softmax 雅可比矩阵中最大的元素（梯度能有多大），对全部试验取平均。
    种子固定，所以每次构建的数都相同。

    >>> m = measure_scaling(64, trials=50)
    >>> 30 < m["var_raw"] < 100, 0.5 < m["var_scaled"] < 1.6
    (True, True)
    >>> m["max_weight_raw"] > m["max_weight_scaled"], m["grad_raw"] < m["grad_scaled"]
    (True, True)
    >>> measure_scaling(0)
    Traceback (most recent call last):
    ...
    ValueError: d 必须是不小于 1 的整数，收到 0
    """
    att._check_count(d, "d", minimum=1)
    att._check_count(trials, "trials", minimum=2)
    att._check_count(n_keys, "n_keys", minimum=2)
    rng = random.Random(seed)
    raw_all, peaks = [], {"max_weight_raw": [], "max_weight_scaled": [], "grad_raw": [], "grad_scaled": []}
    scale = math.sqrt(d)
    for _ in range(trials):
        q = [rng.gauss(0.0, 1.0) for _ in range(d)]
        raw = [sum(a * rng.gauss(0.0, 1.0) for a in q) for _ in range(n_keys)]  # (n_keys,)
        raw_all += raw
        for kind, row in (("raw", raw), ("scaled", [s / scale for s in raw])):
            p = att.softmax(row)
            peaks[f"max_weight_{kind}"].append(max(p))
            peaks[f"grad_{kind}"].append(_jacobian_peak(p))
    var_raw = statistics.pvariance(raw_all)
    return {
        "d": d,
        "var_raw": var_raw,
        "var_scaled": var_raw / d,  # Var(x / √d) = Var(x) / d
        **{name: statistics.fmean(xs) for name, xs in peaks.items()},
    }


def temperature_sweep(scores: list[float], values: list[list[float]], temperatures: list[float]) -> list[dict]:
    """同一行分数在不同温度下的权重与输出（温度作用在已经除以 √d 的分数上）。

    >>> rows = temperature_sweep([0.5, 2.5, 2.0], [[6, 0], [0, 6], [6, 6]], [0.5, 4.0])
    >>> [(r["temperature"], round(max(r["weights"]), 4)) for r in rows]
    [(0.5, 0.7214), (4.0, 0.4018)]
    >>> temperature_sweep([0.5], [[1]], [])
    Traceback (most recent call last):
    ...
    ValueError: temperatures 不能为空
    """
    v = _matrix(values, "values")
    ts = list(temperatures) if isinstance(temperatures, (list, tuple)) else att._as_list(temperatures, "temperatures")
    if not ts:
        raise ValueError("temperatures 不能为空")
    rows = []
    for t in ts:
        w = att.softmax(scores, temperature=t)
        rows.append({"temperature": float(t), "weights": w, "output": mix(w, v)})
    return rows


def sweep_sentence(rows: list[dict], values: list[list[float]]) -> str:
    """用 ``temperature_sweep`` 的结果写一句话：温度从小到大，最大权重和输出怎样变。

    >>> rows = temperature_sweep([0.5, 2.5, 2.0], [[6, 0], [0, 6], [6, 6]], [0.5, 4.0])
    >>> sweep_sentence(rows, [[6, 0], [0, 6], [6, 6]])  # doctest: +NORMALIZE_WHITESPACE
    'T 从 0.5 增到 4，最大权重从 0.7214 降到 0.4018；输出与分数最高的 Key 1 的 V 行 (0, 6)
     相距从 1.6735 变成 3.8758，与 V 各行的平均 (4, 4) 相距从 3.0184 变成 0.6767。'
    """
    v = _matrix(values, "values")
    if not rows:
        raise ValueError("rows 不能为空")
    rows = sorted(rows, key=lambda r: r["temperature"])
    first, last = rows[0], rows[-1]
    # 温度越低，权重越集中到分数最高的 Key：它就是最低温度下权重最大的那个。
    top = max(range(len(v)), key=lambda j: first["weights"][j])
    mean = [statistics.fmean(col) for col in zip(*v)]
    to_top = [math.dist(r["output"], v[top]) for r in (first, last)]
    to_mean = [math.dist(r["output"], mean) for r in (first, last)]
    return (
        f"T 从 {first['temperature']:g} 增到 {last['temperature']:g}，"
        f"最大权重从 {fmt(max(first['weights']))} 降到 {fmt(max(last['weights']))}；"
        f"输出与分数最高的 Key {top} 的 V 行 {_vec(v[top])} 相距从 {fmt(to_top[0])} 变成 {fmt(to_top[1])}，"
        f"与 V 各行的平均 {_vec(mean)} 相距从 {fmt(to_mean[0])} 变成 {fmt(to_mean[1])}。"
    )


# -- 动态图解 F13 -----------------------------------------------------------------------------------
def _num(x: float) -> str:
    # 负号用数学的减号 −（U+2212）：排版时不会被当成连字符断行或删掉。
    return fmt(x).replace("-", "−")


def _short(x: float) -> str:
    return short(x).replace("-", "−")


def _vec_(xs: list[float]) -> str:
    return "(" + ", ".join(_short(x) for x in xs) + ")"


STEP_NAMES = ["点积分数", "除以 √d", "减去最大值", "取指数", "除以总和", "乘以 V 行", "相加得到输出"]


def _cell(text: str, highlight: bool = False) -> dict:
    return {"text": text, "state": None, "highlight": highlight}


def _keys_word(js: list[int]) -> str:
    return "、".join(f"Key {j}" for j in js)


def _f13_rows(s: dict) -> list[tuple[str, list[str], str]]:
    """前五步的分数表行：(步骤名, 每个 Key 的格子, 整行的格子)。"""
    return [
        ("分数 q·k", [_short(x) for x in s["dots"]], f"q = {_vec_(s['query'])}"),
        ("÷ √d", [_num(x) for x in s["scaled"]], f"d = {s['d']}，√d = {_short(s['scale'])}"),
        ("− max", [_num(x) for x in s["shifted"]], f"max = {_num(s['max'])}"),
        ("exp", [_num(x) for x in s["exps"]], f"和 = {_num(s['total'])}"),
        ("÷ 和 = 权重", [_num(x) for x in s["weights"]], f"权重之和 = {_num(sum(s['weights']))}"),
    ]


def _f13_mix_table(s: dict, v: list[list[float]], step: int) -> dict:
    """第6、7步的混合表：每个 Key 一行（权重、V 行、权重 × V 行），第7步再加一行输出。"""
    rows = [
        [_cell(f"Key {j}"), _cell(_num(w)), _cell(_vec_(vj)), _cell(_vec4(c), step == 5)]
        for j, (w, vj, c) in enumerate(zip(s["weights"], v, s["weighted"]))
    ]
    if step == 6:
        total = _num(sum(s["weights"]))
        rows.append([_cell("输出 = Σ", True), _cell(total, True), _cell("", True), _cell(_vec4(s["output"]), True)])
    return {"title": "按权重混合 V 的行", "header": ["Key", "权重", "V 行", "权重 × V 行"], "rows": rows}


def _f13_explanations(s: dict, v: list[list[float]]) -> list[str]:
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
    sums = "；".join(
        f"q·k_{j} = " + " + ".join(f"{_short(a)}×{_short(b)}" for a, b in pair) + f" = {_short(x)}"
        for j, (pair, x) in enumerate(zip(s["pairs"], scores))
    )
    first = (
        f"查询 q = {_vec_(s['query'])} 与每个 Key 逐分量相乘再相加：{sums}。"
        f"{_keys_word(best)} 的分数 {_short(max(scores))} 最大，与 q 最相似；"
        f"{_keys_word(worst)} 的分数 {_short(min(scores))} 最小。"
    )
    if best == worst:
        first = f"查询 q = {_vec_(s['query'])} 与每个 Key 逐分量相乘再相加：{sums}。各分数都相等。"
    return [
        first,
        f"d = {s['d']}，每个分数除以 √d = {_short(s['scale'])}。除以同一个正数不改变大小顺序，"
        f"只把最大与最小的差距从 {_short(spread_raw)} 缩成 {_num(spread)}。",
        f"这一行最大的缩放分数是 {_num(s['max'])}（{_keys_word(best)}），每项都减去它："
        "最大项变成 0，其余不大于 0，下一步的 exp 不会超过 1，也就不会溢出；softmax 的结果不受影响。",
        "取指数后每一项都是正数，最大项 exp(0) = 1："
        + "，".join(f"exp({_num(x)}) = {_num(e)}" for x, e in zip(s["shifted"], s["exps"]))
        + f"；它们的和是 {_num(s['total'])}。",
        f"每一项除以和 {_num(s['total'])}，得到和为 1 的权重。"
        + (
            f"{_keys_word(most)} 分到最多（{_num(max(weights))}），{_keys_word(least)} 最少（{_num(min(weights))}）。"
            if most != least
            else f"各项的权重都是 {_num(max(weights))}。"
        ),
        "每个 Key 的 V 行乘以它的权重："
        + "；".join(f"Key {j}：{_num(w)} × {_vec_(vj)} = {_vec4(c)}" for j, (w, vj, c) in enumerate(zip(weights, v, s["weighted"])))
        + "。",
        f"把 {n} 份贡献逐分量相加，输出是 {_vec4(s['output'])}。权重都不小于 0 且和为 1，"
        "所以输出是 V 各行的加权平均，落在它们围成的凸包里："
        + "，".join(
            f"第 {c} 个分量 {_num(x)} 介于 {_short(a)} 与 {_short(b)} 之间" for c, (x, a, b) in enumerate(zip(s["output"], lo, hi))
        )
        + ("。" if inside else "——不对，输出跑到了 V 的范围之外，这说明权重算错了。"),
    ]


def f13_frames(query: list[float] | None = None, keys: list[list[float]] | None = None, values: list[list[float]] | None = None) -> list[dict]:
    """动态图解 F13 的七帧：一个查询行从分数到输出，每帧多算一步，当前一步的格子高亮。

    不给参数时用本页的例子（查询 0）。每帧的说明都由这一帧的数生成。

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
    q = EXAMPLE_Q[QUERY] if query is None else query
    k = EXAMPLE_K if keys is None else keys
    v = _matrix(EXAMPLE_V if values is None else values, "values")
    s = dict(visible_steps(q, k, v))
    s["query"] = _vector(q, "query")
    s["pairs"] = [list(zip(s["query"], kj)) for kj in _matrix(k, "keys")]
    n_key = len(s["dots"])
    rows = _f13_rows(s)
    texts = _f13_explanations(s, v)
    rules = [
        "s_j = q·k_j = Σ q_c k_jc",
        f"s_j ÷ √d，d = {s['d']}",
        "x_j − max(x)",
        "e_j = exp(x_j − max)",
        "w_j = e_j ÷ Σ e",
        "c_j = w_j × v_j",
        "o = Σ c_j",
    ]
    header = ["步骤 ＼ Key"] + [f"Key {j}" for j in range(n_key)] + ["整行"]
    title = f"查询 q = {_vec_(s['query'])}，{n_key} 个 Key，d = {s['d']}"
    frames = []
    for step in range(len(STEP_NAMES)):
        # 前五步每帧在分数表里多一行，新的一行高亮；后两步分数表停在权重，混合表接着算。
        table_rows = [
            [_cell(name, r == step)] + [_cell(t, r == step) for t in cells] + [_cell(whole, r == step)]
            for r, (name, cells, whole) in enumerate(rows[: step + 1])
        ]
        tables = [{"title": title, "header": header, "rows": table_rows}]
        if step >= len(rows):
            tables.append(_f13_mix_table(s, v, step))
        frames.append(
            {
                "condition": f"第{step + 1}步：{STEP_NAMES[step]}",
                "tables": tables,
                "rule": rules[step],
                "explanation": texts[step],
            }
        )
    return frames


# -- 自检与演示 -------------------------------------------------------------------------------------
def _check(condition: bool, message: str) -> None:
    # 不用 assert：python -O 会删掉 assert。
    if not condition:
        raise AssertionError(message)


def self_test() -> None:
    """快速自检：逐步计算与 02_attention 一致、平移不变、重排 Key 与 V、错轴与溢出。

    >>> self_test()
    """
    q, k, v = EXAMPLE_Q, EXAMPLE_K, EXAMPLE_V
    weights, outputs = att.attention(q, k, v, causal=False)
    s = visible_steps(q[QUERY], k, v)
    _check(max(abs(a - b) for a, b in zip(s["weights"], weights[QUERY])) < 1e-12, "逐步计算的权重应与 attention 一致")
    _check(max(abs(a - b) for a, b in zip(s["output"], outputs[QUERY])) < 1e-12, "逐步计算的输出应与 attention 一致")
    _check(all(abs(sum(row) - 1) < 1e-12 for row in weights), "每行权重之和应为 1")
    shifted = att.softmax([x + 1000 for x in s["scaled"]])
    _check(max(abs(a - b) for a, b in zip(shifted, s["weights"])) < 1e-12, "分数整体平移不应改变权重")
    order = [2, 0, 1]
    _, both = att.attention(q, [k[j] for j in order], [v[j] for j in order], causal=False)
    _, keys_only = att.attention(q, [k[j] for j in order], v, causal=False)
    _check(max(abs(a - b) for r1, r2 in zip(both, outputs) for a, b in zip(r1, r2)) < 1e-12, "Key 与 V 一起重排，输出不应改变")
    _check(keys_only != outputs, "只重排 Key 时输出应当改变")
    wrong = softmax_over_queries(att.scaled_scores(q, k))
    _check(any(abs(sum(row) - 1) > 1e-6 for row in wrong), "沿错的轴做 softmax，行之和不再是 1")
    try:
        naive_softmax(BIG_SCORES)
    except ValueError:
        pass
    else:
        raise AssertionError("不减最大值的 softmax 在大分数上应当溢出")


def run_demo() -> dict:
    """演示结果：本页例子的逐步计算、溢出界、错轴与温度。

    >>> demo = run_demo()
    >>> demo["查询0_分数"], [round(x, 4) for x in demo["查询0_输出"]]
    ([1.0, 5.0, 4.0], [2.5554, 5.5338])
    >>> round(demo["float64_exp上限"], 4)
    709.7827
    """
    q, k, v = EXAMPLE_Q, EXAMPLE_K, EXAMPLE_V
    s = visible_steps(q[QUERY], k, v)
    wide = scaled_by(q[QUERY], k, v, N_HEADS * len(q[0]))
    weights, outputs = att.attention(q, k, v, causal=False)
    wrong = softmax_over_queries(att.scaled_scores(q, k))
    return {
        "性质": "人工构造的小整数矩阵，没有训练过的模型",
        "查询0_分数": s["dots"],
        "查询0_缩放分数": s["scaled"],
        "查询0_权重": s["weights"],
        "查询0_输出": s["output"],
        f"按宽度{N_HEADS * len(q[0])}缩放_权重": wide["weights"],
        "全部权重": weights,
        "全部输出": outputs,
        "错轴_每行之和": [sum(row) for row in wrong],
        "稳定softmax_1000_1001_1002": att.softmax(BIG_SCORES),
        "float64_exp上限": exp_limit(),
    }


if __name__ == "__main__":
    import json

    self_test()
    print(json.dumps(run_demo(), ensure_ascii=False, indent=2))
