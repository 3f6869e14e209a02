"""第2章教学代码：注意力的代价与规模——n² 的分数表、公开模型的 KV 缓存字节数、本机上的实测增长。

计数只用标准库，可以用纸笔复算；只有计时用 numpy（在函数里才导入），它随机器而变，
不进 ``run_demo()``。与 ``02_attention.py`` 放在同一目录，运行 ``python3 02_costs.py``：
先自检，再打印 JSON。
"""

from __future__ import annotations

import importlib
import math
import statistics
import time

att = importlib.import_module("02_attention")

# -- 公开的模型配置 --------------------------------------------------------------------------------
# 抄自各自的 config.json（source），键名按 config.json 的意思缩短（dtype 即 torch_dtype）。
# head_dim 是单独的一项数据，代码从不用 hidden ÷ heads 推它；head_dim_in_config 为 False 时
# config.json 没有这一项（取值规则见多头一页）。sliding_window 与 use_sliding_window 照抄。
_HF = "https://huggingface.co/{}/blob/main/config.json"


def _config(name, repo, layers, hidden, heads, kv_heads, head_dim, max_positions, dtype, **extra):
    return {
        "name": name,
        "source": _HF.format(repo),
        "layers": layers,
        "hidden": hidden,
        "heads": heads,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "head_dim_in_config": extra.pop("head_dim_in_config", False),
        "max_positions": max_positions,
        "dtype": dtype,
        **extra,
    }


MODELS = [
    _config("Llama-2-7B", "meta-llama/Llama-2-7b-hf", 32, 4096, 32, 32, 128, 4096, "float16"),
    _config("Llama-3-8B", "meta-llama/Meta-Llama-3-8B", 32, 4096, 32, 8, 128, 8192, "bfloat16"),
    _config(
        "Mistral-7B-v0.1",
        "mistralai/Mistral-7B-v0.1",
        32,
        4096,
        32,
        8,
        128,
        32768,
        "bfloat16",
        sliding_window=4096,
    ),
    _config(
        "Qwen2-7B",
        "Qwen/Qwen2-7B",
        28,
        3584,
        28,
        4,
        128,
        131072,
        "bfloat16",
        sliding_window=131072,
        use_sliding_window=False,
    ),
]
GEMMA_7B = _config(
    "Gemma-7B", "google/gemma-7b", 28, 3072, 16, 16, 256, 8192, "bfloat16", head_dim_in_config=True
)
MAX_BUILT_ELEMENTS = 10**6  # build_kv_cache 造的是纯 Python 列表：一个笔误不该吃光内存
_MODEL_COUNTS = ("layers", "hidden", "heads", "kv_heads", "head_dim", "max_positions")


# -- 分数表：n² 个格子 -----------------------------------------------------------------------------
def causal_forbidden(n: int) -> int:
    """因果规则在一张 ``n × n`` 的分数表里禁止的格子数：第 i 行禁止 ``n − 1 − i`` 格，
    合计 ``n(n − 1)/2``。

    >>> causal_forbidden(3)
    3
    >>> causal_forbidden(4096)
    8386560
    """
    n = att.check_count(n, "n")
    return n * (n - 1) // 2


def score_costs(
    n: int, head_dim: int, heads: int = 1, bytes_per_element: int = 4, *, batch: int = 1
) -> dict:
    """批里 ``batch`` 个长为 ``n`` 的序列，一层注意力的分数表按最朴素的实现计数：``entries``
    格子数，``bytes`` 字节，``qk_madds`` 与 ``mix_madds`` 算 QK^T 与混合 V 的乘加次数，
    ``forbidden`` 因果规则禁止的格子——朴素实现照样算它、存它。

    >>> score_costs(4, head_dim=2)
    {'entries': 16, 'bytes': 64, 'qk_madds': 32, 'mix_madds': 32, 'forbidden': 6}
    >>> [score_costs(2, head_dim=2, heads=3, batch=b)["entries"] for b in (1, 2)]
    [12, 24]
    """
    _counts(n=n, head_dim=head_dim, heads=heads, bytes_per_element=bytes_per_element, batch=batch)
    entries = batch * heads * n * n  # 每个序列的每个头一张 (n, n) 的表
    # QK^T：每格一次长为 head_dim 的点积。混合 V：n × head_dim 个输出，每个 n 次乘加。
    return {
        "entries": entries,
        "bytes": entries * bytes_per_element,
        "qk_madds": entries * head_dim,
        "mix_madds": entries * head_dim,
        "forbidden": batch * heads * causal_forbidden(n),
    }


# -- KV 缓存的字节数 -------------------------------------------------------------------------------
def kv_bytes_per_token(
    layers: int, kv_heads: int, head_dim: int, bytes_per_element: int = 2
) -> int:
    """每个 token 在 KV 缓存里占的字节：2（K 和 V）× 层数 × K/V 头数 × head_dim × 每元素字节。
    16 位格式（float16、bfloat16）每元素 2 字节，8 位 1 字节。公式里没有查询头数。

    >>> kv_bytes_per_token(layers=32, kv_heads=8, head_dim=128)
    131072
    """
    _counts(
        layers=layers, kv_heads=kv_heads, head_dim=head_dim, bytes_per_element=bytes_per_element
    )
    return 2 * layers * kv_heads * head_dim * bytes_per_element


def cached_positions(model: dict, context: int, *, extrapolate: bool = False) -> int:
    """每层缓存里存的位置数：配置启用了滑动窗口时至多 ``sliding_window`` 个（写了
    ``use_sliding_window: False`` 就不启用），否则上下文有多长就存多少。

    ``context`` 不能超过配置的 ``max_positions``（模型没有为更长的上下文训练过）；只按公式外推
    更长的上下文时，写明 ``extrapolate=True``。

    >>> cached_positions(MODELS[2], 32768)  # Mistral：滑动窗口 4096
    4096
    >>> cached_positions(MODELS[3], 32768)  # Qwen2：use_sliding_window 为 False
    32768
    """
    m = _model(model)
    context = _context(context, m, extrapolate)
    window = m.get("sliding_window")
    if window is None or m.get("use_sliding_window") is False:
        return context
    return min(context, att.check_count(window, "model['sliding_window']"))


def kv_cache_bytes(
    model: dict,
    context: int,
    batch: int = 1,
    bytes_per_element: int = 2,
    *,
    extrapolate: bool = False,
) -> int:
    """一个模型的 KV 缓存：每 token 字节 × 缓存的位置数（``cached_positions``）× 批大小。
    ``context`` 超过配置的 ``max_positions`` 时报错，除非写明 ``extrapolate=True``。

    >>> kv_cache_bytes(MODELS[1], context=4096) // 2**20  # MiB
    512
    >>> kv_cache_bytes(MODELS[2], 32768) // 2**20
    512
    >>> kv_cache_bytes(MODELS[0], 32768)  # Llama-2-7B 只到 4096 个位置
    Traceback (most recent call last):
    ...
    ValueError: context=32768 超过了 Llama-2-7B 的最大位置数 4096；只按公式外推时写 extrapolate=True
    >>> kv_cache_bytes(MODELS[0], 32768, extrapolate=True) // 2**30  # GiB：外推
    16
    """
    m = _model(model)
    _counts(batch=batch)
    per_token = kv_bytes_per_token(m["layers"], m["kv_heads"], m["head_dim"], bytes_per_element)
    positions = cached_positions(m, context, extrapolate=extrapolate)
    return per_token * positions * batch


def full_mha(model: dict) -> dict:
    """同样宽度、同样 head_dim 的全多头版本：每个查询头都有自己的 K/V 头（kv_heads = heads）。"""
    m = _model(model)
    return {**m, "name": f"{m['name']}（全多头）", "kv_heads": m["heads"]}


def build_kv_cache(layers: int, kv_heads: int, head_dim: int, context: int, batch: int = 1) -> list:
    """真的造出一份全零的 KV 缓存：每层一对 K、V，各是 ``(batch, kv_heads, context, head_dim)``。
    只用来对照公式：元素数 × 每元素字节应等于 ``kv_bytes_per_token × context × batch``。

    >>> cache = build_kv_cache(layers=2, kv_heads=1, head_dim=3, context=4)
    >>> len(cache)  # 每层一项
    2
    >>> sorted(cache[0])
    ['K', 'V']
    >>> count_elements(cache)  # 2 层 × (K、V) × 1 × 1 × 4 × 3
    48
    """
    _counts(layers=layers, kv_heads=kv_heads, head_dim=head_dim, context=context, batch=batch)
    total = 2 * layers * batch * kv_heads * context * head_dim
    att.check_count(
        total,
        "元素总数 2 × layers × batch × kv_heads × context × head_dim",
        maximum=MAX_BUILT_ELEMENTS,
    )
    shape = (batch, kv_heads, context, head_dim)
    return [{kv: _zeros(shape) for kv in ("K", "V")} for _ in range(layers)]  # 每层一对 K、V


def _zeros(shape: tuple) -> list:  # 一个全零的嵌套列表，形状为 shape
    return [_zeros(shape[1:]) for _ in range(shape[0])] if len(shape) > 1 else [0.0] * shape[0]


def count_elements(nested: object) -> int:
    """数出嵌套列表 / 字典里的数有多少个（逐个去数，不用任何形状公式）。

    >>> count_elements([[1.0, 2.0], [3.0]])
    3
    >>> count_elements({"K": [0.0], "V": [0.0, 0.0]})
    3
    """
    if isinstance(nested, dict):
        nested = list(nested.values())
    if isinstance(nested, (list, tuple)):
        return sum(count_elements(x) for x in nested)
    if isinstance(nested, (int, float)) and not isinstance(nested, bool):
        return 1
    raise ValueError(f"nested 里只能有列表、字典和数，收到 {type(nested).__name__}")


# -- 实测：朴素的 numpy 注意力 ---------------------------------------------------------------------
MAX_TIMED_N = 8192  # 8192 × 8192 个 float64 已是 512 MiB
MAX_TIMED_D = 1024  # 真实模型的 head_dim 不过几百
MAX_REPEATS = 1000


def numpy_attention(q, k, v):
    """最朴素的因果注意力（numpy）：整张 ``(n, n)`` 分数表先算出来、存下来，再把禁止的格子改成 −∞。
    因果 mask 在这里不省任何计算：被禁止的那一半格子照样做了点积，只是事后被覆盖。

    >>> q = k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> out = numpy_attention(q, k, [[10.0], [20.0], [30.0]])
    >>> [round(float(x), 4) for x in out[:, 0]]
    [10.0, 16.6976, 22.5523]
    """
    import numpy as np  # 只有计时需要 numpy

    q = _array(q, "q")
    k = _array(k, "k")
    v = _array(v, "v")
    if q.shape != k.shape or v.shape[0] != k.shape[0]:
        raise ValueError(
            f"q、k 必须同形状 (n, d)，v 是 (n, d_v)；收到 {q.shape}、{k.shape}、{v.shape}"
        )
    with np.errstate(over="ignore", invalid="ignore"):  # 溢出在下面统一报告
        scores = q @ k.T / np.sqrt(q.shape[1])  # (n, n)：禁止的格子也算了
        scores = np.where(np.tri(len(q), dtype=bool), scores, -np.inf)  # (n, n)：再覆盖成 −∞
        scores -= scores.max(axis=1, keepdims=True)
        weights = np.exp(scores)
        weights /= weights.sum(axis=1, keepdims=True)  # (n, n)
        out = weights @ v  # (n, d_v)
    if not np.isfinite(out).all():
        raise ValueError("q·k 或输出超出了浮点数的范围：请缩小 q、k、v 的数值")
    return out


def time_attention(
    ns: list[int], d: int = 32, repeats: int = 5, seed: int = 0, budget: float | None = None
) -> list[dict]:
    """在本机上给 ``numpy_attention`` 计时：每个 n 先热身一次，再跑至多 ``repeats`` 次，
    取中位数（秒）。每个 n 一条记录 ``{"n", "median", "runs"（实际计时的次数）}``；输入是
    固定种子的随机数。``budget``（秒）是整个测量的时限：过了时限，每个 n 只再计时一次。

    >>> rows = time_attention([8, 16], d=4, repeats=2)
    >>> [(row["n"], row["runs"]) for row in rows]
    [(8, 2), (16, 2)]
    >>> all(row["median"] > 0 for row in rows)
    True
    """
    import numpy as np  # 只有计时需要 numpy

    ns = [
        att.check_count(n, f"ns[{i}]", maximum=MAX_TIMED_N, why="分数表是 n × n 的")
        for i, n in enumerate(att.as_list(ns, "ns"))
    ]
    att.check_count(d, "d", maximum=MAX_TIMED_D, why="真实模型的 head_dim 不过几百")
    att.check_count(repeats, "repeats", maximum=MAX_REPEATS, why="免得一等不返")
    if not ns:
        raise ValueError("ns 不能为空：至少要给一个序列长度")
    if budget is not None and not (math.isfinite(att.real(budget, "budget")) and budget >= 0):
        raise ValueError(f"budget 必须是不小于 0 的有限秒数（或 None 表示不限），收到 {budget!r}")
    rng = np.random.default_rng(att.check_count(seed, "seed", minimum=0))
    deadline = math.inf if budget is None else time.perf_counter() + budget
    rows = []
    for n in ns:
        q = rng.standard_normal((n, d))  # (n, d)
        k = rng.standard_normal((n, d))
        v = rng.standard_normal((n, d))
        numpy_attention(q, k, v)  # 热身：第一次调用的额外开销不计入
        runs = []
        while len(runs) < repeats and (not runs or time.perf_counter() < deadline):
            start = time.perf_counter()
            numpy_attention(q, k, v)
            runs.append(time.perf_counter() - start)
        rows.append({"n": n, "median": statistics.median(runs), "runs": len(runs)})  # 中位数
    return rows


def fit_slope(ns: list[float], seconds: list[float]) -> tuple[float, float]:
    """对数坐标里的最小二乘直线 ``log t = slope · log n + c``，返回 ``(slope, c)``。
    时间若按 n² 增长，斜率就是 2；按 n 增长，斜率是 1。

    >>> round(fit_slope([128, 256, 512], [1e-3, 4e-3, 16e-3])[0], 6)
    2.0
    """
    xs = [math.log(x) for x in _positives(ns, "ns")]
    ys = [math.log(x) for x in _positives(seconds, "seconds")]
    if len(xs) != len(ys):
        raise ValueError(f"ns 与 seconds 必须一样长，收到 {len(xs)} 个和 {len(ys)} 个")
    if len(set(xs)) < 2:
        raise ValueError("ns 至少要有两个不同的值，才能拟合斜率")
    mx = statistics.fmean(xs)
    my = statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return slope, my - slope * mx


# -- 边界上的检查（其余的在 02_attention.py 里）----------------------------------------------------
def _model(model: object) -> dict:  # 像 MODELS 里的条目：各项计数都是正整数，查询头能均分给 K/V 头
    wanted = f"model 必须是含 name、{'、'.join(_MODEL_COUNTS)} 的配置字典"
    if not isinstance(model, dict):
        raise ValueError(f"{wanted}，收到 {type(model).__name__}")
    missing = [key for key in ("name", *_MODEL_COUNTS) if key not in model]
    if missing:
        raise ValueError(f"{wanted}，缺少 {'、'.join(missing)}")
    for key in _MODEL_COUNTS:
        att.check_count(model[key], f"model[{key!r}]")
    if model["heads"] % model["kv_heads"]:
        raise ValueError(
            f"model 的查询头数 heads={model['heads']} 必须是 kv_heads={model['kv_heads']} 的整数倍"
        )
    return model


def _context(context: object, model: dict, extrapolate: object) -> int:
    """上下文长度：正整数，不超过配置的 max_positions（除非明说要外推）。"""
    context = att.check_count(context, "context")
    if not isinstance(extrapolate, bool):
        raise ValueError(f"extrapolate 必须是 True 或 False，收到 {extrapolate!r}")
    if context > model["max_positions"] and not extrapolate:
        raise ValueError(
            f"context={context} 超过了 {model['name']} 的最大位置数 {model['max_positions']}；"
            "只按公式外推时写 extrapolate=True"
        )
    return context


def _counts(**counts: object) -> None:  # 每一项都是不小于 1 的整数
    for name, n in counts.items():
        att.check_count(n, name)


def _positives(values: object, name: str) -> list[float]:  # 序列长度、秒数：有限的正数
    out = [att.real(x, f"{name}[{i}]") for i, x in enumerate(att.as_list(values, name))]
    for i, x in enumerate(out):
        if not (math.isfinite(x) and x > 0):
            raise ValueError(f"{name}[{i}] 必须是有限的正数，收到 {x!r}")
    return out


def _array(x: object, name: str):
    import numpy as np  # 只有计时需要 numpy

    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):  # None、字符串、参差不齐的行
        raise ValueError(f"{name} 必须是由实数组成的二维数组，收到 {type(x).__name__}") from None
    if a.ndim != 2 or 0 in a.shape or not np.isfinite(a).all():
        raise ValueError(f"{name} 必须是非空、元素全部有限的二维数组，收到形状 {a.shape}")
    att.check_count(a.shape[0], f"{name} 的行数", maximum=MAX_TIMED_N, why="分数表是 n × n 的")
    return a


# -- 自检与演示 ------------------------------------------------------------------------------------
TINY = {"layers": 2, "kv_heads": 2, "head_dim": 3, "context": 5, "batch": 2}  # 小到可以真的造出来
# 分数表一节：一个序列（批大小 1），每层 32 个头、head_dim 128，分数按 float32 存（每格 4 字节）。
SCORE_BATCH = 1
SCORE_HEADS = 32
SCORE_HEAD_DIM = 128
SCORE_BYTES = 4
SCORE_NS = [1024, 4096, 16384]
# KV 缓存每个元素的字节数：16 位格式与 8 位格式。
FLOAT16_BYTES = 2
INT8_BYTES = 1
# KV 缓存一节的比较条件：上下文 4096 个 token、批大小 1。
CONTEXT = 4096
BATCH = 1
# 本页的计时设置：time_attention(**TIMING)
TIMING = {"ns": [128, 256, 512, 1024, 2048], "d": 32, "repeats": 3, "seed": 0, "budget": 0.5}
# 一个 head_dim ≠ hidden ÷ heads、又小到能造出来的配置：认出“头维度取 hidden ÷ heads”要靠它
CHECK_MODEL = {
    "name": "对照配置",
    "layers": 2,
    "hidden": 6,
    "heads": 3,
    "kv_heads": 1,
    "head_dim": 4,
    "max_positions": 8,
}


# 故意写错的版本：自检与测试都必须认出它们，这说明直接计数的对照确实会失败。
WRONG_VERSIONS = {  # 名字：(写错的是哪个公式, 写错的版本)
    "漏了 K 和 V 各一份的因子 2": (
        "kv",
        lambda m, b: m["layers"] * m["kv_heads"] * m["head_dim"] * b,
    ),
    "头维度取 hidden ÷ heads": (
        "kv",
        lambda m, b: 2 * m["layers"] * m["kv_heads"] * (m["hidden"] // m["heads"]) * b,
    ),
    "禁止格写成 n(n+1)/2": ("forbidden", lambda n: n * (n + 1) // 2),
}


def self_test() -> None:
    """快速自检：公式对照直接构造的数组与可见性表，并认出每个写错的版本。出错抛 AssertionError。

    >>> self_test()
    """
    counted = {n: sum(not x for row in att.visibility(n, n) for x in row) for n in (1, 2, 5)}
    for n in counted:
        att.check(counted[n] == causal_forbidden(n), "禁止格数应为 n(n−1)/2")
        scores = att.scaled_scores([[1.0, 0.0]] * n, [[0.0, 1.0]] * n)  # (n, n)
        entries = score_costs(n, head_dim=2)["entries"]
        att.check(count_elements(scores) == entries, "分数表应有 n² 格")
    m = CHECK_MODEL
    b = FLOAT16_BYTES
    built = count_elements(build_kv_cache(m["layers"], m["kv_heads"], m["head_dim"], 1)) * b
    att.check(built == kv_cache_bytes(m, 1), "KV 缓存公式应等于元素数 × 每元素字节")
    for name, (formula, wrong) in WRONG_VERSIONS.items():
        caught = (
            wrong(m, b) != built
            if formula == "kv"
            else any(wrong(n) != c for n, c in counted.items())
        )
        att.check(caught, f"对照应当认出写错的版本：{name}")
    for power in (1, 2, 3):  # 答案已知的“时间”t = 1e-9 · n**power：拟合出的斜率应当恰是 power
        slope, _ = fit_slope([1, 2, 4], [1e-9 * n**power for n in (1, 2, 4)])
        att.check(abs(slope - power) < 1e-9, "按幂律造出的时间，拟合斜率应恰是指数")


def run_demo() -> dict:
    """演示结果：分数表的计数、四个公开配置的 KV 缓存字节数。不含计时，每次运行都一样。

    >>> demo = run_demo()
    >>> demo["分数表"][0]["entries"]
    33554432
    >>> demo["KV缓存_每token字节_16位"]["Qwen2-7B"]
    57344
    """
    t = TINY
    per_token = kv_bytes_per_token(t["layers"], t["kv_heads"], t["head_dim"])
    return {
        "性质": "按公式计数与公开配置推算；不含任何计时",
        "分数表": [
            {"n": n, **score_costs(n, SCORE_HEAD_DIM, SCORE_HEADS, SCORE_BYTES, batch=SCORE_BATCH)}
            for n in SCORE_NS
        ],
        "KV缓存_每token字节_16位": {m["name"]: kv_cache_bytes(m, context=1) for m in MODELS},
        f"KV缓存_上下文{CONTEXT}_16位_字节": {
            m["name"]: kv_cache_bytes(m, CONTEXT, BATCH) for m in MODELS
        },
        "KV缓存_最大位置数_16位_字节": {
            m["name"]: kv_cache_bytes(m, m["max_positions"], BATCH) for m in MODELS
        },
        "小配置_直接计数": {
            "配置": dict(t),
            "公式字节": per_token * t["context"] * t["batch"],
            "逐个数出的元素": count_elements(build_kv_cache(**t)),
        },
    }


if __name__ == "__main__":
    self_test()
    att.print_json(run_demo())
