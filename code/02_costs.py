"""第2章教学代码：注意力的代价与规模——n² 的分数表、真实模型的 KV 缓存字节数、本机上的实测增长。

按公式数出分数表的格子、字节、乘加次数和因果规则禁止的格子；按公开的模型配置（``MODELS``、``GEMMA_7B``，
抄自各自的 config.json）算出 KV 缓存的字节数；给一个最朴素的 numpy 因果注意力计时，再在对数坐标里拟合斜率。
计数只用标准库，可以用纸笔复算；只有计时用 numpy（在函数里才导入），它随机器和负载而变，所以不进
``run_demo()``。与 ``02_attention.py`` 放在同一目录，运行 ``python3 02_costs.py``：先自检，再打印 JSON 演示。
"""

from __future__ import annotations

import importlib
import math
import statistics
import time

att = importlib.import_module("02_attention")

# -- 公开的模型配置 -----------------------------------------------------------------------------------
# 抄自 Hugging Face 上的 config.json（source）：layers、hidden、heads、kv_heads、max_positions 即 num_hidden_layers、
# hidden_size、num_attention_heads、num_key_value_heads、max_position_embeddings。head_dim 是单独的一项数据，
# 代码从不用 hidden ÷ heads 推它：head_dim_in_config 为 False 时 config.json 没有这一项，Transformers 取
# hidden_size ÷ num_attention_heads；Gemma-7B 明写 256，而 3072 ÷ 16 = 192。Llama-2-7B 的 max_positions 最初
# 写作 2048，后来改正为 4096。sliding_window 照抄配置：Mistral 写了 4096；Qwen2 写了 131072，但同时写了
# use_sliding_window: false（不启用）。本页的公式不考虑滑动窗口：按存下全部位置计算。
_HF = "https://huggingface.co/{}/blob/main/config.json"
MODELS = [
    {"name": "Llama-2-7B", "source": _HF.format("meta-llama/Llama-2-7b-hf"), "layers": 32, "hidden": 4096,
     "heads": 32, "kv_heads": 32, "head_dim": 128, "head_dim_in_config": False, "max_positions": 4096},
    {"name": "Llama-3-8B", "source": _HF.format("meta-llama/Meta-Llama-3-8B"), "layers": 32, "hidden": 4096,
     "heads": 32, "kv_heads": 8, "head_dim": 128, "head_dim_in_config": False, "max_positions": 8192},
    {"name": "Mistral-7B-v0.1", "source": _HF.format("mistralai/Mistral-7B-v0.1"), "layers": 32, "hidden": 4096,
     "heads": 32, "kv_heads": 8, "head_dim": 128, "head_dim_in_config": False, "max_positions": 32768,
     "sliding_window": 4096},
    {"name": "Qwen2-7B", "source": _HF.format("Qwen/Qwen2-7B"), "layers": 28, "hidden": 3584,
     "heads": 28, "kv_heads": 4, "head_dim": 128, "head_dim_in_config": False, "max_positions": 131072,
     "sliding_window": 131072, "use_sliding_window": False},
]
GEMMA_7B = {"name": "Gemma-7B", "source": _HF.format("google/gemma-7b"), "layers": 28, "hidden": 3072,
            "heads": 16, "kv_heads": 16, "head_dim": 256, "head_dim_in_config": True, "max_positions": 8192}
MAX_BUILT_ELEMENTS = 10**6  # build_kv_cache 造的是纯 Python 列表：一个笔误不该吃光内存
_MODEL_COUNTS = ("layers", "hidden", "heads", "kv_heads", "head_dim", "max_positions")


# -- 边界上的检查（其余的在 02_attention.py 里）------------------------------------------------------
def _model(model: object) -> dict:  # 像 MODELS 里的条目：各项计数都是正整数，查询头能均分给 K/V 头
    if not isinstance(model, dict) or not {"name", *_MODEL_COUNTS} <= set(model):
        raise ValueError(f"model 必须是含 name、{'、'.join(_MODEL_COUNTS)} 的配置字典，收到 {model!r}")
    for key in _MODEL_COUNTS:
        att.check_count(model[key], f"model[{key!r}]")
    if model["heads"] % model["kv_heads"]:
        raise ValueError(f"model 的查询头数 heads={model['heads']} 必须是 kv_heads={model['kv_heads']} 的整数倍")
    return model


def _counts(**counts: object) -> None:  # 每一项都是不小于 1 的整数
    for name, n in counts.items():
        att.check_count(n, name)


def _positives(values: object, name: str) -> list[float]:  # 序列长度、秒数：有限的正数
    out = [att.real(x, f"{name}[{i}]") for i, x in enumerate(att.as_list(values, name))]
    for i, x in enumerate(out):
        if not (math.isfinite(x) and x > 0):
            raise ValueError(f"{name}[{i}] 必须是有限的正数，收到 {x!r}")
    return out


# -- 分数表：n² 个格子 -------------------------------------------------------------------------------
def causal_forbidden(n: int) -> int:
    """因果规则在一张 ``n × n`` 的分数表里禁止的格子数：第 i 行禁止 ``n − 1 − i`` 格，合计 ``n(n − 1)/2``。

    >>> causal_forbidden(3), causal_forbidden(4096)
    (3, 8386560)
    """
    n = att.check_count(n, "n")
    return n * (n - 1) // 2


def score_costs(n: int, head_dim: int, heads: int = 1, bytes_per_element: int = 4, *, batch: int = 1) -> dict:
    """一层自注意力、批里 ``batch`` 个序列、每个长度 ``n`` 时分数表的规模，按最朴素的实现计数：
    ``entries`` 格子数（每个序列的每个头一张 ``(n, n)`` 的表），``bytes`` 存下它们的字节，``qk_madds`` 与
    ``mix_madds`` 算 QK^T 与混合 V 的乘加次数，``forbidden`` 因果规则禁止的格子——朴素实现照样算它、存它。

    >>> score_costs(4, head_dim=2)
    {'entries': 16, 'bytes': 64, 'qk_madds': 32, 'mix_madds': 32, 'forbidden': 6}
    >>> score_costs(2, head_dim=2, heads=3)["entries"], score_costs(2, head_dim=2, heads=3, batch=2)["entries"]
    (12, 24)
    """
    _counts(n=n, head_dim=head_dim, heads=heads, bytes_per_element=bytes_per_element, batch=batch)
    entries = batch * heads * n * n  # 每个序列的每个头一张 (n, n) 的表
    # QK^T：每格一次长为 head_dim 的点积。混合 V：n × head_dim 个输出元素，每个 n 次乘加——同样多。
    return {"entries": entries, "bytes": entries * bytes_per_element, "qk_madds": entries * head_dim,
            "mix_madds": entries * head_dim, "forbidden": batch * heads * causal_forbidden(n)}


# -- KV 缓存的字节数 ---------------------------------------------------------------------------------
def kv_bytes_per_token(layers: int, kv_heads: int, head_dim: int, bytes_per_element: int = 2) -> int:
    """每个 token 在 KV 缓存里占的字节：2（K 和 V）× 层数 × K/V 头数 × head_dim × 每元素字节。
    float16 每个元素 2 字节，8 位量化 1 字节。查询头数不出现在公式里：缓存只存 K 和 V。

    >>> kv_bytes_per_token(layers=32, kv_heads=8, head_dim=128)
    131072
    >>> kv_bytes_per_token(layers=32, kv_heads=8, head_dim=128, bytes_per_element=1)
    65536
    >>> kv_bytes_per_token(layers=32, kv_heads=8, head_dim=128.0)
    Traceback (most recent call last):
    ...
    ValueError: head_dim 必须是不小于 1 的整数，收到 128.0
    """
    _counts(layers=layers, kv_heads=kv_heads, head_dim=head_dim, bytes_per_element=bytes_per_element)
    return 2 * layers * kv_heads * head_dim * bytes_per_element


def kv_cache_bytes(model: dict, context: int, batch: int = 1, bytes_per_element: int = 2) -> int:
    """一个模型的 KV 缓存：每 token 字节 × 上下文长度 × 批大小。head_dim 取配置里的值。

    >>> llama3 = MODELS[1]
    >>> kv_cache_bytes(llama3, context=4096) // 2**20  # MiB
    512
    >>> kv_cache_bytes(llama3, context=4096, batch=8, bytes_per_element=1) // 2**30  # GiB
    2
    """
    m = _model(model)
    _counts(context=context, batch=batch)
    return kv_bytes_per_token(m["layers"], m["kv_heads"], m["head_dim"], bytes_per_element) * context * batch


def full_mha(model: dict) -> dict:
    """同样宽度、同样 head_dim 的全多头版本：每个查询头都有自己的 K/V 头（kv_heads = heads）。

    >>> full_mha(MODELS[3])["kv_heads"], MODELS[3]["kv_heads"]
    (28, 4)
    """
    m = _model(model)
    return {**m, "name": f"{m['name']}（全多头）", "kv_heads": m["heads"]}


def build_kv_cache(layers: int, kv_heads: int, head_dim: int, context: int, batch: int = 1) -> list:
    """真的造出一份全零的 KV 缓存：每层一对 K、V，各是 ``(batch, kv_heads, context, head_dim)``。
    只用来对照公式：元素数 × 每元素字节应当等于 ``kv_bytes_per_token × context × batch``。元素总数至多
    ``MAX_BUILT_ELEMENTS``（一百万）。

    >>> cache = build_kv_cache(layers=2, kv_heads=1, head_dim=3, context=4)
    >>> len(cache), sorted(cache[0]), count_elements(cache)
    (2, ['K', 'V'], 48)
    """
    _counts(layers=layers, kv_heads=kv_heads, head_dim=head_dim, context=context, batch=batch)
    total = 2 * layers * batch * kv_heads * context * head_dim
    att.check_count(total, "元素总数 2 × layers × batch × kv_heads × context × head_dim", maximum=MAX_BUILT_ELEMENTS)
    return [{kv: [[[[0.0] * head_dim for _ in range(context)] for _ in range(kv_heads)] for _ in range(batch)]
             for kv in ("K", "V")} for _ in range(layers)]  # 每层一对 K、V，各 (batch, kv_heads, context, head_dim)


def count_elements(nested: object) -> int:
    """数出嵌套列表 / 字典里的数有多少个（逐个去数，不用任何形状公式）。

    >>> count_elements([[1.0, 2.0], [3.0]]), count_elements({"K": [0.0], "V": [0.0, 0.0]})
    (3, 3)
    """
    if isinstance(nested, dict):
        nested = list(nested.values())
    if isinstance(nested, (list, tuple)):
        return sum(count_elements(x) for x in nested)
    if isinstance(nested, (int, float)) and not isinstance(nested, bool):
        return 1
    raise ValueError(f"nested 里只能有列表、字典和数，收到 {type(nested).__name__}")


# -- 实测：朴素的 numpy 注意力 ------------------------------------------------------------------------
MAX_TIMED_N, MAX_TIMED_D, MAX_REPEATS = 8192, 1024, 1000  # 8192 × 8192 个 float64 已是 512 MiB


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


def numpy_attention(q, k, v):
    """最朴素的因果注意力（numpy）：整张 ``(n, n)`` 分数表先算出来、存下来，再把禁止的格子改成 −∞。
    因果 mask 在这里不省任何计算：被禁止的那一半格子照样做了点积，只是事后被覆盖。

    >>> import numpy as np
    >>> q = k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> out = numpy_attention(q, k, np.array([[10.0], [20.0], [30.0]]))
    >>> [round(float(x), 4) for x in out[:, 0]]
    [10.0, 16.6976, 22.5523]
    """
    import numpy as np  # 只有计时需要 numpy
    q, k, v = _array(q, "q"), _array(k, "k"), _array(v, "v")
    if q.shape != k.shape or v.shape[0] != k.shape[0]:
        raise ValueError(f"q、k 必须同形状 (n, d)，v 是 (n, d_v)；收到 {q.shape}、{k.shape}、{v.shape}")
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


def time_attention(ns: list[int], d: int = 32, repeats: int = 5, seed: int = 0,
                   budget: float | None = None) -> list[dict]:
    """在本机上给 ``numpy_attention`` 计时：每个 n 先热身一次，再跑至多 ``repeats`` 次，取中位数（秒）。
    每个 n 一条记录 ``{"n", "median"（秒）, "runs"（实际计时的次数）}``；输入是固定种子的随机数，时间每次
    运行都不同。``budget``（秒）是整个测量的时限：过了时限，每个 n 只再计时一次，机器再忙也很快结束。

    >>> rows = time_attention([8, 16], d=4, repeats=2)
    >>> [row["n"] for row in rows], [row["runs"] for row in rows], all(row["median"] > 0 for row in rows)
    ([8, 16], [2, 2], True)
    >>> [row["runs"] for row in time_attention([8, 16], d=4, repeats=3, budget=0)]
    [1, 1]
    """
    import numpy as np  # 只有计时需要 numpy
    ns = [att.check_count(n, f"ns[{i}]", maximum=MAX_TIMED_N, why="分数表是 n × n 的")
          for i, n in enumerate(att.as_list(ns, "ns"))]
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
        q, k, v = (rng.standard_normal((n, d)) for _ in range(3))  # 各 (n, d)
        numpy_attention(q, k, v)  # 热身：第一次调用的额外开销不计入
        runs = []
        while len(runs) < repeats and (not runs or time.perf_counter() < deadline):
            start = time.perf_counter()
            numpy_attention(q, k, v)
            runs.append(time.perf_counter() - start)
        rows.append({"n": n, "median": statistics.median(runs), "runs": len(runs)})  # 中位数不怕偶尔一次被打断
    return rows


def fit_slope(ns: list[float], seconds: list[float]) -> tuple[float, float]:
    """对数坐标里的最小二乘直线 ``log t = slope · log n + c``，返回 ``(slope, c)``。
    时间若按 n² 增长，斜率就是 2；按 n 增长，斜率是 1。

    >>> slope, c = fit_slope([128, 256, 512], [1e-3, 4e-3, 16e-3])
    >>> round(slope, 6)
    2.0
    """
    xs, ys = ([math.log(x) for x in _positives(v, name)] for v, name in ((ns, "ns"), (seconds, "seconds")))
    if len(xs) != len(ys):
        raise ValueError(f"ns 与 seconds 必须一样长，收到 {len(xs)} 个和 {len(ys)} 个")
    if len(set(xs)) < 2:
        raise ValueError("ns 至少要有两个不同的值，才能拟合斜率")
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return slope, my - slope * mx


# -- 自检与演示 ---------------------------------------------------------------------------------------
TINY = {"layers": 2, "kv_heads": 2, "head_dim": 3, "context": 5, "batch": 2}  # 小到可以真的造出来
# 分数表一节：一个序列（批大小 1），每层 32 个头、head_dim 128，分数按 float32 存（每格 4 字节）。
SCORE_BATCH, SCORE_HEADS, SCORE_HEAD_DIM, SCORE_BYTES = 1, 32, 128, 4
SCORE_NS = [1024, 4096, 16384]
FLOAT16_BYTES, INT8_BYTES = 2, 1  # KV 缓存每个元素的字节数
CONTEXT, BATCH = 4096, 1  # KV 缓存一节的比较条件：上下文 4096 个 token、批大小 1


def self_test() -> None:
    """快速自检：计数公式对照直接构造的数组，因果禁止格对照可见性表。出错时抛 AssertionError。

    >>> self_test()
    """
    for n in (1, 2, 5):
        visible = att.visibility(n, n)  # (n, n)
        att.check(sum(not x for row in visible for x in row) == causal_forbidden(n), "禁止格数应为 n(n−1)/2")
        scores = att.scaled_scores([[1.0, 0.0]] * n, [[0.0, 1.0]] * n)  # (n, n)
        att.check(count_elements(scores) == score_costs(n, head_dim=2)["entries"], "分数表应有 n² 格")
    t = TINY
    formula = kv_bytes_per_token(t["layers"], t["kv_heads"], t["head_dim"], FLOAT16_BYTES) * t["context"] * t["batch"]
    att.check(count_elements(build_kv_cache(**t)) * FLOAT16_BYTES == formula, "KV 缓存公式应等于元素数 × 每元素字节")
    for power in (1, 2, 3):  # 答案已知的“时间”t = 1e-9 · n**power：拟合出的斜率应当恰是 power
        slope, _ = fit_slope([1, 2, 4], [1e-9 * n**power for n in (1, 2, 4)])
        att.check(abs(slope - power) < 1e-9, "按幂律造出的时间，拟合斜率应恰是指数")


def run_demo() -> dict:
    """演示结果：分数表的计数、四个公开配置的 KV 缓存字节数。不含计时，每次运行都一样。

    >>> demo = run_demo()
    >>> demo["分数表"][0]["entries"], demo["KV缓存_每token字节_float16"]["Qwen2-7B"]
    (33554432, 57344)
    """
    t = TINY
    return {
        "性质": "按公式计数与公开配置推算；不含任何计时",
        "分数表": [{"n": n, **score_costs(n, SCORE_HEAD_DIM, SCORE_HEADS, SCORE_BYTES, batch=SCORE_BATCH)}
                for n in SCORE_NS],
        "KV缓存_每token字节_float16": {m["name"]: kv_cache_bytes(m, context=1) for m in MODELS},
        f"KV缓存_上下文{CONTEXT}_float16_字节": {m["name"]: kv_cache_bytes(m, CONTEXT, BATCH) for m in MODELS},
        f"同宽全多头_上下文{CONTEXT}_float16_字节": {m["name"]: kv_cache_bytes(full_mha(m), CONTEXT, BATCH)
                                                for m in MODELS},
        "小配置_直接计数": {"配置": dict(t), "公式字节": kv_bytes_per_token(t["layers"], t["kv_heads"], t["head_dim"])
                      * t["context"] * t["batch"], "逐个数出的元素": count_elements(build_kv_cache(**t))},
    }


if __name__ == "__main__":
    self_test()
    att.print_json(run_demo())
