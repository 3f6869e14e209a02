"""第2章教学代码：手算一次注意力——点积、除以 √d、减去最大值、softmax、混合 V。

本文件是《手算注意力与因果掩码》第2章“缩放与混合”一页的配套代码。softmax、分数与
注意力本身来自 ``02_attention.py``（一个想法只有一处实现）；这里只补上那一页新讲的东西：

- ``visible_steps``：不加 mask 时一个查询行的每一步（由 ``02_attention.row_steps`` 算出），
  动态图解 F13 的每一帧就是其中一步；``scaled_by``：按另一个维数缩放，作“用错了 d”的对照；
- ``mix``：输出 = Σ 权重 × V 行；``softmax_jacobian``：softmax 的雅可比矩阵 diag(p) − p p^T；
- ``measure_scaling``：用固定种子的随机向量，实测点积的方差随 d 增长、softmax 随之饱和；
- ``naive_softmax`` 与 ``exp_limit``：不减最大值的写法在哪里溢出；
- ``softmax_over_queries``：故意写错的轴，只用于对照和测试。

除 ``measure_scaling`` 的随机向量外，例子都是人工构造的小整数矩阵，没有训练过的模型；只用 Python
标准库。把本文件和 ``02_attention.py`` 放在同一目录，运行 ``python3 02_scaling.py``：先自检，再以
JSON 打印演示结果。
"""

from __future__ import annotations

import importlib
import math
import random
import statistics
import sys

att = importlib.import_module("02_attention")

__all__ = [
    "visible_steps",
    "scaled_by",
    "mix",
    "softmax_jacobian",
    "softmax_over_queries",
    "naive_softmax",
    "exp_limit",
    "measure_scaling",
    "temperature_sweep",
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
SMALL_SCORES = [0.0, -1000.0]  # 减去最大值后 exp(−1000) 在浮点数里下溢为 0 的一行
TEMPERATURES = [0.25, 0.5, 1.0, 2.0, 4.0, 16.0]
# 实测方差与饱和：几个 d、每个 d 的试验次数、每次的 Key 数，以及固定的随机种子。
MEASURE_DIMS = [2, 8, 32, 128]
MEASURE_TRIALS = 200
MEASURE_KEYS = 8
MEASURE_SEED = 2017
# 实测是纯 Python 逐个抽样：trials × n_keys × d 个随机数，超过一千万个就要等很久，该换 numpy 了。
MAX_DRAWS = 10**7


def mix(weights: list[float], values: list[list[float]]) -> list[float]:
    """输出 = Σ 权重 × V 行。权重必须非负、和为 1，所以输出是 V 各行的加权平均。

    >>> mix([0.25, 0.75], [[0, 8], [4, 0]])
    [3.0, 2.0]
    >>> mix([0.5, 0.6], [[0, 8], [4, 0]])
    Traceback (most recent call last):
    ...
    ValueError: weights 之和必须为 1，收到 1.1
    """
    w = att.as_vector(weights, "weights")
    v = att.as_matrix(values, "values")
    if len(w) != len(v):
        raise ValueError(f"weights 的个数必须等于 values 的行数，收到 {len(w)} 与 {len(v)}")
    for j, x in enumerate(w):
        if x < 0:
            raise ValueError(f"weights[{j}] 是 {x}：权重不可为负")
    if not math.isclose(sum(w), 1.0, rel_tol=0, abs_tol=1e-9):
        raise ValueError(f"weights 之和必须为 1，收到 {sum(w):.6g}")
    return [sum(wj * vj[c] for wj, vj in zip(w, v)) for c in range(len(v[0]))]  # (d_v,)


def visible_steps(query: list[float], keys: list[list[float]], values: list[list[float]]) -> dict:
    """不加 mask 的一个查询行：``02_attention.row_steps`` 在全部 Key 都可见时的每一步，另加 ``d``。

    >>> k = [[1, 0, 1, 0], [2, 1, 0, 1], [0, 1, 1, 2]]
    >>> v = [[6, 0], [0, 6], [6, 6]]
    >>> s = visible_steps([1, 2, 0, 1], k, v)
    >>> s["d"]
    4
    >>> s["dots"]
    [1.0, 5.0, 4.0]
    >>> s["scale"]
    2.0
    >>> s["scaled"]
    [0.5, 2.5, 2.0]
    >>> s["shifted"]
    [-2.0, 0.0, -0.5]
    >>> [round(x, 4) for x in s["weights"]]
    [0.0777, 0.5741, 0.3482]
    >>> [round(x, 4) for x in s["output"]]
    [2.5554, 5.5338]
    """
    k = att.as_matrix(keys, "keys")
    v = att.as_matrix(values, "values")
    if len(k) != len(v):
        raise ValueError(f"keys 与 values 的行数（Key 的个数）必须相同：{len(k)} 与 {len(v)}")
    steps = att.row_steps(query, k, v, [True] * len(k))  # 全部 Key 都可见
    return {"d": len(steps["products"][0]), **steps}


def scaled_by(
    query: list[float], keys: list[list[float]], values: list[list[float]], dim: int
) -> dict:
    """按维数 ``dim`` 缩放（除以 √dim）后的分数、权重与输出。``dim`` 取模型宽度，就是“用错了 d”。

    >>> k = [[1, 0, 1, 0], [2, 1, 0, 1], [0, 1, 1, 2]]
    >>> v = [[6, 0], [0, 6], [6, 6]]
    >>> s = scaled_by([1, 2, 0, 1], k, v, 16)
    >>> s["scale"]
    4.0
    >>> s["scaled"]
    [0.25, 1.25, 1.0]
    >>> [round(w, 4) for w in s["weights"]]
    [0.1714, 0.4658, 0.3628]
    >>> scaled_by([1.0], [[1.0]], [[1.0]], 0)
    Traceback (most recent call last):
    ...
    ValueError: dim 必须是不小于 1 的整数，收到 0
    """
    att.check_count(dim, "dim", minimum=1)
    v = att.as_matrix(values, "values")
    dots = visible_steps(query, keys, v)["dots"]  # 点积只有一处实现：02_attention.row_steps
    scale = att.score_scale(dim)
    scaled = [x / scale for x in dots]
    weights = att.softmax(scaled)
    return {
        "d": dim,
        "scale": scale,
        "scaled": scaled,
        "weights": weights,
        "output": mix(weights, v),
    }


def softmax_over_queries(scores: list[list[float]]) -> list[list[float]]:
    """故意写错的轴：对每一列（同一个 Key、不同查询）做 softmax。只用于对照和测试。

    每一列之和变成 1，每一行之和却不再是 1。

    >>> w = softmax_over_queries([[0.0, 0.0], [0.0, 2.0]])
    >>> [[round(x, 4) for x in row] for row in w]
    [[0.5, 0.1192], [0.5, 0.8808]]
    >>> [round(sum(row), 4) for row in w]
    [0.6192, 1.3808]
    """
    s = att.as_matrix(scores, "scores")
    columns = [att.softmax([row[j] for row in s]) for j in range(len(s[0]))]
    return [[columns[j][i] for j in range(len(s[0]))] for i in range(len(s))]  # (n_query, n_key)


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
    xs = att.as_vector(values, "values")
    exps = []
    for j, x in enumerate(xs):
        try:
            exps.append(math.exp(x))
        except OverflowError:
            raise ValueError(
                f"values[{j}] = {x:g}：exp 溢出（float 的 exp 只到 x ≈ "
                f"{exp_limit():.4f}），请先减去最大值"
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
    x = att.real(largest, "largest")
    if not math.isfinite(x) or x <= 1:
        raise ValueError(f"largest 必须是大于 1 的有限数，收到 {largest!r}")
    return math.log(x)


def softmax_jacobian(weights: list[float]) -> list[list[float]]:
    """softmax 的雅可比矩阵 J = diag(p) − p p^T，J[i][j] = ∂p_i/∂s_j。

    每个元素的绝对值不超过 max p_j(1 − p_j) ≤ 1/4：一个分数对一个权重的影响。

    >>> softmax_jacobian([0.5, 0.5])
    [[0.25, -0.25], [-0.25, 0.25]]
    >>> softmax_jacobian([0.5, 0.6])
    Traceback (most recent call last):
    ...
    ValueError: weights 之和必须为 1，收到 1.1
    """
    p = att.as_vector(weights, "weights")
    if any(x < 0 for x in p):
        raise ValueError("weights 不可为负")
    if not math.isclose(sum(p), 1.0, rel_tol=0, abs_tol=1e-9):
        raise ValueError(f"weights 之和必须为 1，收到 {sum(p):.6g}")
    return [[pi * ((i == j) - pj) for j, pj in enumerate(p)] for i, pi in enumerate(p)]


def _jacobian_peak(p: list[float]) -> float:
    # J = diag(p) − p p^T 绝对值最大的元素是对角元 max p_j(1 − p_j) ≤ 1/4。
    return max(pj * (1 - pj) for pj in p)


def measure_scaling(
    d: int, *, trials: int = MEASURE_TRIALS, n_keys: int = MEASURE_KEYS, seed: int = MEASURE_SEED
) -> dict:
    """实测：分量独立、均值 0、方差 1 的随机 q 与 k，点积的方差约为 d；除以 √d 后约为 1。

    每次试验取一个查询和 ``n_keys`` 个 Key，分别不缩放、缩放地做 softmax，记录最大权重与
    雅可比矩阵的最大元 max p_j(1 − p_j)（一个分数对一个权重的最大影响），对全部试验取平均。
    随机数来自 ``random.Random(seed).gauss``：每次试验先抽查询的 d 个分量，再逐个 Key 抽 d 个。

    >>> m = measure_scaling(64, trials=50)
    >>> 30 < m["var_raw"] < 100  # 约为 d = 64
    True
    >>> 0.5 < m["var_scaled"] < 1.6  # 约为 1
    True
    >>> m["max_weight_raw"] > m["max_weight_scaled"]  # 不缩放：权重更集中
    True
    >>> m["grad_raw"] < m["grad_scaled"]  # 不缩放：梯度更小
    True
    >>> measure_scaling(0)
    Traceback (most recent call last):
    ...
    ValueError: d 必须是不小于 1 的整数，收到 0
    """
    att.check_count(d, "d", minimum=1)
    att.check_count(trials, "trials", minimum=2)
    att.check_count(n_keys, "n_keys", minimum=2)
    att.check_count(seed, "seed", minimum=0)
    if trials * n_keys * d > MAX_DRAWS:
        raise ValueError(
            f"trials × n_keys × d 不能超过 {MAX_DRAWS}（纯 Python 逐个抽样），"
            f"收到 {trials * n_keys * d}"
        )
    rng = random.Random(seed)
    raw_all = []
    scaled_all = []
    peaks = {"max_weight_raw": [], "max_weight_scaled": [], "grad_raw": [], "grad_scaled": []}
    scale = math.sqrt(d)
    for _ in range(trials):
        q = [rng.gauss(0.0, 1.0) for _ in range(d)]
        raw = [sum(a * rng.gauss(0.0, 1.0) for a in q) for _ in range(n_keys)]  # 逐个 Key 抽
        scaled = [s / scale for s in raw]
        raw_all += raw
        scaled_all += scaled
        for kind, row in (("raw", raw), ("scaled", scaled)):
            p = att.softmax(row)
            peaks[f"max_weight_{kind}"].append(max(p))
            peaks[f"grad_{kind}"].append(_jacobian_peak(p))
    return {
        "d": d,
        "var_raw": statistics.pvariance(raw_all),
        "var_scaled": statistics.pvariance(scaled_all),  # 直接量出；数学上就是 var_raw / d
        **{name: statistics.fmean(xs) for name, xs in peaks.items()},
    }


def temperature_sweep(
    scores: list[float], values: list[list[float]], temperatures: list[float]
) -> list[dict]:
    """同一行（有限的）分数在不同温度下的权重与输出（温度作用在已经除以 √d 的分数上）。

    >>> rows = temperature_sweep([0.5, 2.5, 2.0], [[6, 0], [0, 6], [6, 6]], [0.5, 4.0])
    >>> [(r["temperature"], round(max(r["weights"]), 4)) for r in rows]
    [(0.5, 0.7214), (4.0, 0.4018)]
    >>> temperature_sweep([0.5], [[1]], [])
    Traceback (most recent call last):
    ...
    ValueError: temperatures 不能为空
    """
    s = att.as_vector(scores, "scores")
    v = att.as_matrix(values, "values")
    ts = att.as_list(temperatures, "temperatures")
    if not ts:
        raise ValueError("temperatures 不能为空")
    if len(s) != len(v):
        raise ValueError(f"scores 的个数必须等于 values 的行数，收到 {len(s)} 与 {len(v)}")
    rows = []
    for t in ts:
        w = att.softmax(s, temperature=t)
        rows.append({"temperature": float(t), "weights": w, "output": mix(w, v)})
    return rows


# -- 自检与演示 ---------------------------------------------------------------------------
def self_test() -> None:
    """快速自检：逐步计算与 02_attention 一致、平移不变、重排 Key 与 V、错轴与溢出。

    >>> self_test()
    """
    q = EXAMPLE_Q
    k = EXAMPLE_K
    v = EXAMPLE_V
    weights, outputs = att.attention(q, k, v, causal=False)
    s = visible_steps(q[QUERY], k, v)
    att.check(att.max_abs_diff([s["weights"]], [weights[QUERY]]) < 1e-12, "逐步的权重应一致")
    att.check(att.max_abs_diff([s["output"]], [outputs[QUERY]]) < 1e-12, "逐步的输出应一致")
    att.check(all(abs(sum(row) - 1) < 1e-12 for row in weights), "每行权重之和应为 1")
    shifted = att.softmax([x + 1000 for x in s["scaled"]])
    att.check(att.max_abs_diff([shifted], [s["weights"]]) < 1e-12, "分数整体平移不应改变权重")
    order = [2, 0, 1]
    _, both = att.attention(q, [k[j] for j in order], [v[j] for j in order], causal=False)
    _, keys_only = att.attention(q, [k[j] for j in order], v, causal=False)
    att.check(att.max_abs_diff(both, outputs) < 1e-12, "Key 与 V 一起重排，输出不应改变")
    att.check(att.max_abs_diff(keys_only, outputs) > 1e-6, "只重排 Key 时输出应当改变")
    wrong = softmax_over_queries(att.scaled_scores(q, k))
    att.check(any(abs(sum(row) - 1) > 1e-6 for row in wrong), "沿错的轴做 softmax，行之和不再是 1")
    try:
        naive_softmax(BIG_SCORES)
    except ValueError:
        pass
    else:
        raise AssertionError("不减最大值的 softmax 在大分数上应当溢出")


def run_demo() -> dict:
    """演示结果：本页例子的逐步计算、溢出界、错轴与温度。

    >>> demo = run_demo()
    >>> demo["查询0_分数"]
    [1.0, 5.0, 4.0]
    >>> [round(x, 4) for x in demo["查询0_输出"]]
    [2.5554, 5.5338]
    >>> round(demo["float64_exp上限"], 4)
    709.7827
    """
    q = EXAMPLE_Q
    k = EXAMPLE_K
    v = EXAMPLE_V
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
    self_test()
    att.print_json(run_demo())
