"""第2章教学代码：注意力的代价与规模——n² 的分数表、真实模型的 KV 缓存字节数、构建机上的实测增长。

本文件是《手算注意力与因果掩码》第2章“代价与规模”一页的配套代码，书页在构建时直接运行它，
页面上的每个数都来自这里的函数。三部分：

- 分数表的规模：按公式数出分数表的格子、字节和乘加次数，因果规则禁止的格子数；
- KV 缓存的字节数：每个 token 要存 2（K 和 V）× 层数 × K/V 头数 × head_dim × 每个元素的字节数；
  所用的模型配置（``MODELS``、``GEMMA_7B``）抄自各模型公开的 config.json，每条都注明出处；
- 实测：用 numpy 写一个最朴素的因果注意力，在构建机上计时，再在对数坐标里拟合斜率。

计数和配置部分只用 Python 标准库，可以用纸笔复算；只有计时和作图用到 numpy 与 matplotlib，
在函数内部才导入。计时结果取决于运行它的机器和当时的负载，不是任何产品的性能数据，
所以它不进入 ``run_demo()``：演示结果只含计数，每次运行都一样。

直接运行 ``python3 code/02_costs.py`` 会先做自检，再以 JSON 打印演示结果。
"""

from __future__ import annotations

import math
import statistics
import time
from numbers import Real

from book_tools import load

att = load("02_attention")

__all__ = [
    "MODELS",
    "GEMMA_7B",
    "causal_forbidden",
    "score_costs",
    "kv_bytes_per_token",
    "kv_cache_bytes",
    "full_mha",
    "naive_head_dim",
    "build_kv_cache",
    "count_elements",
    "size",
    "compare_sentence",
    "query_heads_sentence",
    "head_dim_sentence",
    "slope_sentence",
    "numpy_attention",
    "time_attention",
    "fit_slope",
    "synthetic_seconds",
    "law_formula",
    "law_label",
    "synthetic_sentence",
    "scaling_figure",
    "self_test",
    "run_demo",
]

# -- 公开的模型配置 -----------------------------------------------------------------------------------
# 数字抄自各模型在 Hugging Face 上公开的 config.json（``cite`` 是书中参考文献的键）。
# 键名与 config.json 对应：layers = num_hidden_layers，hidden = hidden_size，
# heads = num_attention_heads，kv_heads = num_key_value_heads，max_positions = max_position_embeddings。
# head_dim 单独作为一项数据写在这里，代码从不用 hidden / heads 去推它：
# 前四个模型的 config.json 没有 head_dim 一项，Transformers 这时取 hidden_size ÷ num_attention_heads；
# Gemma-7B 的 config.json 明写 head_dim = 256，与 3072 ÷ 16 = 192 不同。
_NO_HEAD_DIM_KEY = "config.json 无 head_dim 项，取 hidden_size ÷ num_attention_heads"

MODELS = [
    {
        "name": "Llama-2-7B",
        "cite": "llama2_7b_config",
        "source": "https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json",
        "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 32, "head_dim": 128,
        "head_dim_from": _NO_HEAD_DIM_KEY,
        "max_positions": 4096,  # 最初发布的配置写的是 2048，后来改正为 4096
    },
    {
        "name": "Llama-3-8B",
        "cite": "llama3_8b_config",
        "source": "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json",
        "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128,
        "head_dim_from": _NO_HEAD_DIM_KEY,
        "max_positions": 8192,
    },
    {
        "name": "Mistral-7B-v0.1",
        "cite": "mistral7b_config",
        "source": "https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json",
        "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128,
        "head_dim_from": _NO_HEAD_DIM_KEY,
        "max_positions": 32768,
        "sliding_window": 4096,  # 只有这个配置有；本页的公式按存下全部位置计算，不考虑它
    },
    {
        "name": "Qwen2-7B",
        "cite": "qwen2_7b_config",
        "source": "https://huggingface.co/Qwen/Qwen2-7B/blob/main/config.json",
        "layers": 28, "hidden": 3584, "heads": 28, "kv_heads": 4, "head_dim": 128,
        "head_dim_from": _NO_HEAD_DIM_KEY,
        "max_positions": 131072,
    },
]

GEMMA_7B = {
    "name": "Gemma-7B",
    "cite": "gemma7b_config",
    "source": "https://huggingface.co/google/gemma-7b/blob/main/config.json",
    "layers": 28, "hidden": 3072, "heads": 16, "kv_heads": 16, "head_dim": 256,
    "head_dim_from": "config.json 的 head_dim 项",
    "max_positions": 8192,
}

_MODEL_COUNTS = ("layers", "hidden", "heads", "kv_heads", "head_dim", "max_positions")


# -- 边界上的检查 -------------------------------------------------------------------------------------
def _count(n: object, name: str, *, minimum: int = 1) -> int:
    # bool 是 int 的子类，但 True 不是一个长度；浮点数 4096.0 也不收，免得悄悄截断。
    if not isinstance(n, int) or isinstance(n, bool) or n < minimum:
        raise ValueError(f"{name} 必须是不小于 {minimum} 的整数，收到 {n!r}")
    return n


def _model(model: object) -> dict:
    if not isinstance(model, dict):
        raise ValueError(f"model 必须是一个配置字典（像 MODELS 里的条目），收到 {type(model).__name__}")
    missing = [key for key in ("name", *_MODEL_COUNTS) if key not in model]
    if missing:
        raise ValueError(f"model 缺少配置项：{'、'.join(missing)}")
    for key in _MODEL_COUNTS:
        _count(model[key], f"model[{key!r}]")
    if model["heads"] % model["kv_heads"]:
        raise ValueError(
            f"model 的查询头数 heads={model['heads']} 必须是 K/V 头数 kv_heads={model['kv_heads']} 的整数倍"
        )
    return model


def _list(values: object, name: str) -> list:
    # 集合没有顺序，字符串和字典不是一列数：这些都不当作列表。
    if isinstance(values, (str, bytes, dict, set, frozenset)) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name} 必须是有序的列表，收到 {type(values).__name__}")
    return list(values)


def _numbers(values: object, name: str) -> list[float]:
    out = []
    for i, x in enumerate(_list(values, name)):
        if not isinstance(x, Real) or isinstance(x, bool) or not math.isfinite(x) or x <= 0:
            raise ValueError(f"{name}[{i}] 必须是有限的正数，收到 {x!r}")
        out.append(float(x))
    return out


def _real_number(x: object, name: str) -> float:
    if not isinstance(x, Real) or isinstance(x, bool) or not math.isfinite(x):
        raise ValueError(f"{name} 必须是有限的实数，收到 {x!r}")
    return float(x)


# -- 分数表：n² 个格子 -------------------------------------------------------------------------------
def causal_forbidden(n: int) -> int:
    """因果规则在一张 ``n × n`` 的分数表里禁止的格子数：第 i 行禁止 ``n − 1 − i`` 格，合计 ``n(n − 1)/2``。

    >>> causal_forbidden(3), causal_forbidden(4096)
    (3, 8386560)
    """
    _count(n, "n")
    return n * (n - 1) // 2


def score_costs(n: int, head_dim: int, heads: int = 1, bytes_per_element: int = 4, *, batch: int = 1) -> dict:
    """一层自注意力、批里 ``batch`` 个序列、每个长度 ``n`` 时分数表的规模，按最朴素的实现计数。

    - ``entries``：分数表的格子数，每个序列的每个头一张 ``(n, n)`` 的表；
    - ``bytes``：把这些格子存下来要的字节数；
    - ``qk_madds``：算 QK^T 的乘加次数，每格是长为 ``head_dim`` 的点积；
    - ``mix_madds``：用权重混合 V 的乘加次数（V 每行也是 ``head_dim`` 维）；
    - ``forbidden``：因果规则禁止的格子数——朴素实现照样算它、存它，再把它改成 −∞。

    >>> score_costs(4, head_dim=2)
    {'entries': 16, 'bytes': 64, 'qk_madds': 32, 'mix_madds': 32, 'forbidden': 6}
    >>> score_costs(2, head_dim=2, heads=3)["entries"], score_costs(2, head_dim=2, heads=3, batch=2)["entries"]
    (12, 24)
    >>> score_costs(0, head_dim=2)
    Traceback (most recent call last):
    ...
    ValueError: n 必须是不小于 1 的整数，收到 0
    """
    _count(n, "n")
    _count(head_dim, "head_dim")
    _count(heads, "heads")
    _count(bytes_per_element, "bytes_per_element")
    _count(batch, "batch")
    entries = batch * heads * n * n  # 每个序列的每个头一张 (n, n) 的表
    return {
        "entries": entries,
        "bytes": entries * bytes_per_element,
        "qk_madds": entries * head_dim,  # 每格一次长为 head_dim 的点积
        "mix_madds": entries * head_dim,  # 每个输出元素是 n 个乘加，共 n × head_dim 个输出元素
        "forbidden": batch * heads * causal_forbidden(n),
    }


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
    _count(layers, "layers")
    _count(kv_heads, "kv_heads")
    _count(head_dim, "head_dim")
    _count(bytes_per_element, "bytes_per_element")
    return 2 * layers * kv_heads * head_dim * bytes_per_element


def kv_cache_bytes(model: dict, context: int, batch: int = 1, bytes_per_element: int = 2) -> int:
    """一个模型的 KV 缓存：每 token 字节 × 上下文长度 × 批大小。head_dim 取配置里的值。

    >>> llama3 = MODELS[1]
    >>> kv_cache_bytes(llama3, context=4096) // 2**20  # MiB
    512
    >>> kv_cache_bytes(llama3, context=4096, batch=8, bytes_per_element=1) // 2**30  # GiB
    2
    >>> kv_cache_bytes(llama3, context=0)
    Traceback (most recent call last):
    ...
    ValueError: context 必须是不小于 1 的整数，收到 0
    """
    m = _model(model)
    _count(context, "context")
    _count(batch, "batch")
    per_token = kv_bytes_per_token(m["layers"], m["kv_heads"], m["head_dim"], bytes_per_element)
    return per_token * context * batch


def full_mha(model: dict) -> dict:
    """同样宽度、同样 head_dim 的全多头版本：每个查询头都有自己的 K/V 头（kv_heads = heads）。

    >>> full_mha(MODELS[3])["kv_heads"], MODELS[3]["kv_heads"]
    (28, 4)
    """
    m = _model(model)
    return {**m, "name": m["name"] + "（全多头）", "kv_heads": m["heads"]}


def naive_head_dim(model: dict) -> float:
    """常见的误推：head_dim = hidden ÷ heads。只用来对照配置里写明的 head_dim。

    >>> naive_head_dim(GEMMA_7B), GEMMA_7B["head_dim"]
    (192.0, 256)
    """
    m = _model(model)
    return m["hidden"] / m["heads"]


def build_kv_cache(layers: int, kv_heads: int, head_dim: int, context: int, batch: int = 1) -> list:
    """真的造出一份全零的 KV 缓存：每层一对 K、V，各是 ``(batch, kv_heads, context, head_dim)``。

    只用来对照公式：数一数其中的元素，再乘每元素字节，应当等于 ``kv_bytes_per_token × context × batch``。
    为了不让一个笔误吃光内存，元素总数限制在一百万以内。

    >>> cache = build_kv_cache(layers=2, kv_heads=1, head_dim=3, context=4)
    >>> len(cache), sorted(cache[0]), count_elements(cache)
    (2, ['K', 'V'], 48)
    """
    for value, name in ((layers, "layers"), (kv_heads, "kv_heads"), (head_dim, "head_dim"),
                        (context, "context"), (batch, "batch")):
        _count(value, name)
    total = 2 * layers * batch * kv_heads * context * head_dim
    if total > 10**6:
        raise ValueError(f"build_kv_cache 只造小缓存：元素总数 {total} 超过了一百万，请缩小参数")

    def tensor() -> list:  # (batch, kv_heads, context, head_dim)
        return [[[[0.0] * head_dim for _ in range(context)] for _ in range(kv_heads)] for _ in range(batch)]

    return [{"K": tensor(), "V": tensor()} for _ in range(layers)]


def count_elements(nested: object) -> int:
    """数出嵌套列表 / 字典里的数有多少个（逐个去数，不用任何形状公式）。

    >>> count_elements([[1.0, 2.0], [3.0]]), count_elements({"K": [0.0], "V": [0.0, 0.0]})
    (3, 3)
    >>> count_elements("abc")
    Traceback (most recent call last):
    ...
    ValueError: nested 里只能有列表、字典和数，收到 str
    """
    if isinstance(nested, dict):
        return sum(count_elements(x) for x in nested.values())
    if isinstance(nested, (list, tuple)):
        return sum(count_elements(x) for x in nested)
    if isinstance(nested, Real) and not isinstance(nested, bool):
        return 1
    raise ValueError(f"nested 里只能有列表、字典和数，收到 {type(nested).__name__}")


# -- 由同一份数据生成的句子 ----------------------------------------------------------------------------
def size(nbytes: int) -> str:
    """字节数写成二进制单位（1 KiB = 1024 字节），最多两位小数，末尾的 0 去掉。

    >>> size(57344), size(2**31), size(1536 * 2**20), size(1000)
    ('56 KiB', '2 GiB', '1.5 GiB', '1000 B')
    """
    _count(nbytes, "nbytes", minimum=0)
    value, unit = float(nbytes), "B"
    for next_unit in ("KiB", "MiB", "GiB", "TiB"):
        if value < 1024:
            break
        value, unit = value / 1024, next_unit
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{text} {unit}"


def _times(verb: str, ratio: float) -> str:
    # 整数倍照写；不是整数时保留一位小数，并说“约”。
    return f"{verb} {ratio:.0f} 倍" if ratio.is_integer() else f"约{verb} {ratio:.1f} 倍"


def _names(names: list[str]) -> str:
    return "、".join(names[:-1]) + "与" + names[-1] if len(names) > 1 else names[0]


def compare_sentence(names: list[str], nbytes: list[int], condition: str) -> str:
    """一句比较：在给定条件下，谁的缓存最小、谁最大、大的是小的几倍。数与表格来自同一份数据。

    >>> compare_sentence(["A", "B", "C"], [4096, 1024, 1024], "上下文 8")
    '上下文 8 时，KV 缓存最小的是 B与C（1 KiB），最大的是 A（4 KiB），是最小者的 4 倍。'
    >>> compare_sentence(["A", "B"], [5, 5], "批大小 1（float16）")
    '批大小 1（float16）时，A与B 的 KV 缓存一样大（5 B）。'
    """
    names = [str(x) for x in _list(names, "names")]
    sizes = [_count(x, f"nbytes[{i}]") for i, x in enumerate(_list(nbytes, "nbytes"))]
    if not names or len(names) != len(sizes):
        raise ValueError(f"names 与 nbytes 必须非空且一样长，收到 {len(names)} 个名字、{len(sizes)} 个字节数")
    low, high = min(sizes), max(sizes)
    smallest = [n for n, b in zip(names, sizes) if b == low]
    largest = [n for n, b in zip(names, sizes) if b == high]
    # 中文与数字、西文之间留一个空格，与正文的写法一致。
    when = condition + (" 时" if condition[-1:].isascii() and condition[-1:].isalnum() else "时")
    if low == high:
        return f"{when}，{_names(names)} 的 KV 缓存一样大（{size(low)}）。"
    return (
        f"{when}，KV 缓存最小的是 {_names(smallest)}（{size(low)}），"
        f"最大的是 {_names(largest)}（{size(high)}），{_times('是最小者的', high / low)}。"
    )


def query_heads_sentence(models: list[dict]) -> str:
    """找出查询头一样多、K/V 头却不同的两个模型，说明缓存跟着 K/V 头走。没有这样一对时如实说明。

    >>> print(query_heads_sentence(MODELS[:2]))
    Llama-2-7B 与 Llama-3-8B 都有 32 个查询头，K/V 头却分别是 32 个和 8 个；每 token 的缓存分别是 512 KiB 和 128 KiB，相差 4 倍。
    >>> print(query_heads_sentence(MODELS[1:3]))
    这几个模型里没有查询头一样多、K/V 头却不同的两个。
    """
    ms = [_model(m) for m in _list(models, "models")]
    for i, a in enumerate(ms):
        for b in ms[i + 1:]:
            if a["heads"] == b["heads"] and a["kv_heads"] != b["kv_heads"]:
                per = {m["name"]: kv_bytes_per_token(m["layers"], m["kv_heads"], m["head_dim"]) for m in (a, b)}
                start = (
                    f"{a['name']} 与 {b['name']} 都有 {a['heads']} 个查询头，"
                    f"K/V 头却分别是 {a['kv_heads']} 个和 {b['kv_heads']} 个；"
                )
                low, high = sorted(per.values())
                if low == high:  # 层数或 head_dim 也不同，恰好抵消
                    return start + f"每 token 的缓存却都是 {size(low)}：层数与 head_dim 的差别恰好抵消了。"
                return (
                    start + f"每 token 的缓存分别是 {size(per[a['name']])} 和 {size(per[b['name']])}，"
                    f"{_times('相差', high / low)}。"
                )
    return "这几个模型里没有查询头一样多、K/V 头却不同的两个。"


def head_dim_sentence(model: dict) -> str:
    """对照配置里的 head_dim 与 hidden ÷ heads：两者不同时，说出按误推值估算的缓存差多少。

    >>> print(head_dim_sentence(GEMMA_7B))
    Gemma-7B：hidden ÷ heads = 3072 ÷ 16 = 192，但配置写明 head_dim = 256；按 192 估算，每 token 的缓存是 336 KiB，实际是 448 KiB，少算了 25%。
    >>> print(head_dim_sentence(MODELS[0]))
    Llama-2-7B：hidden ÷ heads = 4096 ÷ 32 = 128，与配置的 head_dim = 128 一致；但这只是这个模型的巧合，不是规律。
    """
    m = _model(model)
    guess = naive_head_dim(m)
    shown = f"{guess:.0f}" if guess.is_integer() else f"{guess:.2f}"
    start = f"{m['name']}：hidden ÷ heads = {m['hidden']} ÷ {m['heads']} = {shown}"
    if guess == m["head_dim"]:
        return f"{start}，与配置的 head_dim = {m['head_dim']} 一致；但这只是这个模型的巧合，不是规律。"
    real = kv_bytes_per_token(m["layers"], m["kv_heads"], m["head_dim"])
    # 误推值未必是整数，按同一公式用浮点数算，再四舍五入到字节。
    wrong = round(2 * m["layers"] * m["kv_heads"] * guess * 2)
    change = (wrong - real) / real
    verb = "少算了" if change < 0 else "多算了"
    return (
        f"{start}，但配置写明 head_dim = {m['head_dim']}；按 {shown} 估算，"
        f"每 token 的缓存是 {size(wrong)}，实际是 {size(real)}，{verb} {abs(change):.0%}。"
    )


def slope_sentence(slope: float) -> str:
    """读一条拟合斜率：它离 2（n² 的增长）有多远，长度每翻一倍时间变成几倍。

    >>> print(slope_sentence(2.0))
    拟合斜率是 2.00：长度每翻一倍，时间约变为 4.0 倍，与分数表格子数的 n² 增长一致。
    >>> print(slope_sentence(1.5))
    拟合斜率是 1.50，明显低于 2：长度每翻一倍，时间约变为 2.8 倍。短序列上每次调用的固定开销占比较大，可能把直线压平；只凭这一次测量不能断定原因。
    """
    s = _real_number(slope, "slope")
    text = f"拟合斜率是 {s:.2f}"
    factor = f"长度每翻一倍，时间约变为 {2**s:.1f} 倍"
    if abs(s - 2) <= 0.25:
        return f"{text}：{factor}，与分数表格子数的 n² 增长一致。"
    if s < 2:
        return (f"{text}，明显低于 2：{factor}。短序列上每次调用的固定开销占比较大，可能把直线压平；"
                "只凭这一次测量不能断定原因。")
    return (f"{text}，明显高于 2：{factor}。长序列的分数表装不进处理器缓存、测量时机器正忙，"
            "都可能让直线变陡；只凭这一次测量不能断定原因。")


# -- 实测：朴素的 numpy 注意力 ------------------------------------------------------------------------
MAX_TIMED_N = 8192  # 再长，一张 float64 的分数表就要 512 MiB：拒绝，而不是让机器卡住


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

    q, k, v = (np.asarray(x, dtype=float) for x in (q, k, v))
    if q.ndim != 2 or q.shape != k.shape or v.ndim != 2 or v.shape[0] != k.shape[0] or q.size == 0:
        raise ValueError(
            f"q、k 必须是同形状的非空二维数组 (n, d)，v 是 (n, d_v)；收到 {q.shape}、{k.shape}、{v.shape}"
        )
    if not (np.isfinite(q).all() and np.isfinite(k).all() and np.isfinite(v).all()):
        raise ValueError("q、k、v 的元素必须有限（不可为 NaN 或 ±∞）")
    n = q.shape[0]
    scores = q @ k.T / np.sqrt(q.shape[1])  # (n, n)：禁止的格子也算了
    scores = np.where(np.tri(n, dtype=bool), scores, -np.inf)  # (n, n)：再覆盖成 −∞
    scores -= scores.max(axis=1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=1, keepdims=True)  # (n, n)
    return weights @ v  # (n, d_v)


def time_attention(
    ns: list[int], d: int = 32, repeats: int = 5, seed: int = 0, budget: float | None = None
) -> list[dict]:
    """在本机上给 ``numpy_attention`` 计时：每个 n 先热身一次，再跑至多 ``repeats`` 次，取中位数（秒）。

    返回每个 n 一条记录：``{"n": n, "median": 中位数秒数, "runs": 实际计时的次数}``。
    输入是固定种子的随机数；时间取决于机器和当时的负载，每次运行都会不同。
    ``budget``（秒）给整个测量设一个时限：超过时限后，每个 n 只再计时一次，
    所以机器再忙，测量也会很快结束；实际次数如实记在 ``runs`` 里。

    >>> rows = time_attention([8, 16], d=4, repeats=2)
    >>> [row["n"] for row in rows], [row["runs"] for row in rows], all(row["median"] > 0 for row in rows)
    ([8, 16], [2, 2], True)
    >>> [row["runs"] for row in time_attention([8, 16], d=4, repeats=3, budget=0)]
    [1, 1]
    >>> time_attention([100000])
    Traceback (most recent call last):
    ...
    ValueError: ns[0] 必须是 1 到 8192 之间的整数，收到 100000
    """
    import numpy as np  # 只有计时需要 numpy

    ns = _list(ns, "ns")
    if not ns:
        raise ValueError("ns 不能为空：至少要给一个序列长度")
    for i, n in enumerate(ns):
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_TIMED_N:
            raise ValueError(f"ns[{i}] 必须是 1 到 {MAX_TIMED_N} 之间的整数，收到 {n!r}")
    _count(d, "d")
    _count(repeats, "repeats")
    if budget is not None and (_real_number(budget, "budget") < 0):
        raise ValueError(f"budget 必须是不小于 0 的秒数（或 None 表示不限），收到 {budget!r}")
    rng = np.random.default_rng(_count(seed, "seed", minimum=0))
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
        # 中位数不怕偶尔一次被别的程序打断
        rows.append({"n": n, "median": statistics.median(runs), "runs": len(runs)})
    return rows


def fit_slope(ns: list[float], seconds: list[float]) -> tuple[float, float]:
    """对数坐标里的最小二乘直线 ``log t = slope · log n + c``，返回 ``(slope, c)``。

    时间若按 n² 增长，斜率就是 2；按 n 增长，斜率是 1。

    >>> slope, c = fit_slope([128, 256, 512], [1e-3, 4e-3, 16e-3])
    >>> round(slope, 6)
    2.0
    >>> fit_slope([128, 128], [1e-3, 2e-3])
    Traceback (most recent call last):
    ...
    ValueError: ns 至少要有两个不同的值，才能拟合斜率
    """
    xs = [math.log(x) for x in _numbers(ns, "ns")]
    ys = [math.log(y) for y in _numbers(seconds, "seconds")]
    if len(xs) != len(ys):
        raise ValueError(f"ns 与 seconds 必须一样长，收到 {len(xs)} 个和 {len(ys)} 个")
    if len(set(xs)) < 2:
        raise ValueError("ns 至少要有两个不同的值，才能拟合斜率")
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return slope, my - slope * mx


# -- 合成计时：答案已知的“时间”，用来检验拟合 --------------------------------------------------------
# 每条是一个幂律 t = coefficient × n^power，拟合出的斜率应当恰是 power；noise 不空时，
# 按长度的顺序轮流乘上其中的因子，得到一个“带噪声”的版本。书页的表格和它的
# “输入与适用条件”都由这份数据生成，两者不会对不上。
# 噪声取三个因子一轮：若只是 1.1、0.9 交替，五个长度上的误差前后对称，斜率一点也不变，检验不出什么。
SYNTHETIC_LAWS = [
    {"coefficient": 3e-9, "power": 2, "noise": ()},
    {"coefficient": 2e-6, "power": 1, "noise": ()},
    {"coefficient": 1e-10, "power": 3, "noise": ()},
    {"coefficient": 3e-9, "power": 2, "noise": (1.1, 0.9, 1.0)},
]


def _law(law: object) -> dict:
    if not isinstance(law, dict) or not {"coefficient", "power", "noise"} <= set(law):
        raise ValueError(f"law 必须是含 coefficient、power、noise 三项的字典（像 SYNTHETIC_LAWS 里的条目），收到 {law!r}")
    if _real_number(law["coefficient"], "law['coefficient']") <= 0:
        raise ValueError(f"law['coefficient'] 必须是正数，收到 {law['coefficient']!r}")
    _real_number(law["power"], "law['power']")
    _numbers(law["noise"], "law['noise']")
    return law


def _number_text(x: float) -> str:
    # 最多六位有效数字，末尾的 0 去掉：1.1 写作 1.1，2.0 写作 2。
    return f"{x:.6g}"


def synthetic_seconds(ns: list[float], law: dict) -> list[float]:
    """按一条合成定律造出“时间”：``coefficient × n**power``，再按顺序轮流乘上 ``noise`` 里的因子。

    >>> synthetic_seconds([1, 2, 4], {"coefficient": 3.0, "power": 2, "noise": ()})
    [3.0, 12.0, 48.0]
    >>> [round(t, 9) for t in synthetic_seconds([1, 2, 4], {"coefficient": 1.0, "power": 1, "noise": (2.0, 0.5)})]
    [2.0, 1.0, 8.0]
    >>> synthetic_seconds([1, 2], {"coefficient": 1.0, "power": 1, "noise": (0,)})
    Traceback (most recent call last):
    ...
    ValueError: law['noise'][0] 必须是有限的正数，收到 0
    """
    xs = _numbers(ns, "ns")
    m = _law(law)
    noise = list(m["noise"]) or [1.0]
    try:
        seconds = [m["coefficient"] * n ** m["power"] * noise[i % len(noise)] for i, n in enumerate(xs)]
    except OverflowError:
        seconds = [math.inf]
    if not all(math.isfinite(t) and t > 0 for t in seconds):
        raise ValueError(f"law 造出的时间超出了浮点数的范围：{law!r}")
    return seconds


def law_formula(law: dict) -> str:
    """一条合成定律的 LaTeX 公式（不带 ``$``），系数写成“尾数 × 10 的幂”。

    >>> print(law_formula({"coefficient": 3e-9, "power": 2, "noise": ()}))
    t = 3 \\times 10^{-9} n^{2}
    >>> law_formula({"coefficient": 1e-10, "power": 3, "noise": ()}), law_formula({"coefficient": 1.0, "power": 1, "noise": ()})
    ('t = 10^{-10} n^{3}', 't = n')
    """
    m = _law(law)
    mantissa, _, exponent = f"{m['coefficient']:.5e}".partition("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    if int(exponent) == 0:
        coefficient = "" if mantissa == "1" else mantissa + " "
    else:
        power_of_ten = f"10^{{{int(exponent)}}}"
        coefficient = (power_of_ten if mantissa == "1" else f"{mantissa} \\times {power_of_ten}") + " "
    n_part = "n" if m["power"] == 1 else f"n^{{{_number_text(m['power'])}}}"
    return f"t = {coefficient}{n_part}"


def _factors(noise) -> str:
    texts = [_number_text(x) for x in noise]
    return texts[0] if len(texts) == 1 else "、".join(texts[:-1]) + " 与 " + texts[-1]


def law_label(law: dict) -> str:
    """表格里的一行名字：公式（Markdown 行内数学），带噪声时再写出轮流乘上的因子。

    >>> print(law_label({"coefficient": 2e-6, "power": 1, "noise": ()}))
    $t = 2 \\times 10^{-6} n$
    >>> print(law_label({"coefficient": 2e-6, "power": 1, "noise": (1.5, 0.5)}))
    $t = 2 \\times 10^{-6} n$，依次轮流乘以 1.5 与 0.5
    """
    m = _law(law)
    text = f"${law_formula(m)}$"
    return text + (f"，依次轮流乘以 {_factors(m['noise'])}" if m["noise"] else "")


def synthetic_sentence(laws: list[dict]) -> str:
    """“输入与适用条件”里的那句话：列出各条合成定律，带噪声的另外说明。与表格出自同一份数据。

    >>> print(synthetic_sentence(SYNTHETIC_LAWS[:2]))
    $t = 3 \\times 10^{-9} n^{2}$、$t = 2 \\times 10^{-6} n$
    >>> print(synthetic_sentence([SYNTHETIC_LAWS[1], {"coefficient": 1e-3, "power": 1.5, "noise": (1.2,)}]))
    $t = 2 \\times 10^{-6} n$，以及在 $t = 10^{-3} n^{1.5}$ 上依次轮流乘以 1.2 的“带噪声”版本
    """
    ms = [_law(law) for law in _list(laws, "laws")]
    if not ms:
        raise ValueError("laws 不能为空：至少要有一条合成定律")
    plain = "、".join(f"${law_formula(m)}$" for m in ms if not m["noise"])
    noisy = "、".join(f"在 ${law_formula(m)}$ 上依次轮流乘以 {_factors(m['noise'])} 的“带噪声”版本"
                     for m in ms if m["noise"])
    return f"{plain}，以及{noisy}" if plain and noisy else plain or noisy


def scaling_figure(ns: list[int], seconds: list[float]):
    """对数坐标图：实测的中位数、拟合直线和斜率。图上只用西文与数学符号（中文图注写在正文里）。

    >>> fig = scaling_figure([128, 256, 512], [1e-3, 4e-3, 16e-3])
    >>> fig.axes[0].get_xscale(), fig.axes[0].get_yscale()
    ('log', 'log')
    """
    # 直接造 Figure，不经过 pyplot：不碰全局的图形列表，用完也不必关闭。
    from matplotlib.figure import Figure  # 只有作图需要 matplotlib

    slope, c = fit_slope(ns, seconds)
    fig = Figure(figsize=(6.0, 3.6))
    ax = fig.subplots()
    ax.loglog(ns, seconds, "o", color="#1f5fa8", label="measured (median)")
    ends = [min(ns), max(ns)]
    ax.loglog(ends, [math.exp(c) * n**slope for n in ends], "-", color="#c0392b",
              label=f"least-squares fit: slope = {slope:.2f}")
    # 参照线：斜率恰为 2（t ∝ n²），过拟合直线在中点的高度，只用来比较倾斜程度。
    mid = math.exp(statistics.fmean(math.log(n) for n in ends))
    at_mid = math.exp(c) * mid**slope
    ax.loglog(ends, [at_mid * (n / mid) ** 2 for n in ends], "--", color="#7f7f7f",
              label="reference: slope = 2 ($t \\propto n^2$)")
    ax.set_xlabel("sequence length $n$")
    ax.set_ylabel("median time per call (s)")
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.minorticks_off()
    ax.set_title("numpy causal attention, measured on the build machine at build time\n"
                 "(not a benchmark of any product)", fontsize=9)
    ax.legend(loc="upper left", fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    return fig


# -- 自检与演示 ---------------------------------------------------------------------------------------
def _check(condition: bool, message: str) -> None:
    # 不用 assert：python -O 会删掉 assert，自检就形同虚设。
    if not condition:
        raise AssertionError(message)


# 直接计数用的小配置：小到可以真的把缓存造出来。
TINY = {"layers": 2, "kv_heads": 2, "head_dim": 3, "context": 5, "batch": 2}
# 分数表一节用的宽度：一个序列（批大小 1），每层 32 个头、head_dim 128，分数按 float32 存（每格 4 字节）。
SCORE_BATCH, SCORE_HEADS, SCORE_HEAD_DIM, SCORE_BYTES = 1, 32, 128, 4
SCORE_NS = [1024, 4096, 16384]
# KV 缓存每个元素的字节数：float16 与 8 位。
FLOAT16_BYTES, INT8_BYTES = 2, 1
# KV 缓存一节的比较条件：上下文 4096 个 token、批大小 1。
CONTEXT, BATCH = 4096, 1


def self_test() -> None:
    """快速自检：计数公式对照直接构造的数组，因果禁止格对照可见性表。出错时抛 AssertionError。

    >>> self_test()
    """
    for n in (1, 2, 5):
        visible = att.visibility(n, n)  # (n, n)
        _check(sum(not x for row in visible for x in row) == causal_forbidden(n), "禁止格数应为 n(n−1)/2")
        scores = att.scaled_scores([[1.0, 0.0]] * n, [[0.0, 1.0]] * n)  # (n, n)
        _check(count_elements(scores) == score_costs(n, head_dim=2)["entries"], "分数表应有 n² 格")
    t = TINY
    cache = build_kv_cache(t["layers"], t["kv_heads"], t["head_dim"], t["context"], t["batch"])
    formula = kv_bytes_per_token(t["layers"], t["kv_heads"], t["head_dim"], FLOAT16_BYTES) * t["context"] * t["batch"]
    _check(count_elements(cache) * FLOAT16_BYTES == formula, "KV 缓存公式应等于逐个数出的元素 × 每元素字节")
    for m in MODELS:
        _check(kv_cache_bytes(full_mha(m), CONTEXT) == kv_cache_bytes(m, CONTEXT) * m["heads"] // m["kv_heads"],
               "全多头的缓存应是分组版本的 heads / kv_heads 倍")
    for law in SYNTHETIC_LAWS:
        if not law["noise"]:
            slope = fit_slope([1, 2, 4], synthetic_seconds([1, 2, 4], law))[0]
            _check(abs(slope - law["power"]) < 1e-9, "没有噪声的合成计时，拟合斜率应恰是指数")


def run_demo() -> dict:
    """演示结果：分数表的计数、四个公开配置的 KV 缓存字节数、比较句子。不含计时，每次运行都一样。

    >>> demo = run_demo()
    >>> demo["分数表"][0]["entries"], demo["KV缓存_每token字节_float16"]["Qwen2-7B"]
    (33554432, 57344)
    """
    tiny = TINY
    cache = build_kv_cache(tiny["layers"], tiny["kv_heads"], tiny["head_dim"], tiny["context"], tiny["batch"])
    at_context = [kv_cache_bytes(m, CONTEXT, BATCH) for m in MODELS]
    return {
        "性质": "按公式计数与公开配置推算；不含任何计时",
        "分数表": [
            {"n": n, **score_costs(n, SCORE_HEAD_DIM, SCORE_HEADS, SCORE_BYTES, batch=SCORE_BATCH)} for n in SCORE_NS
        ],
        "KV缓存_每token字节_float16": {
            m["name"]: kv_bytes_per_token(m["layers"], m["kv_heads"], m["head_dim"]) for m in MODELS
        },
        f"KV缓存_上下文{CONTEXT}_float16_字节": dict(zip((m["name"] for m in MODELS), at_context)),
        f"同宽全多头_上下文{CONTEXT}_float16_字节": {
            m["name"]: kv_cache_bytes(full_mha(m), CONTEXT, BATCH) for m in MODELS
        },
        "比较": compare_sentence([m["name"] for m in MODELS], at_context, f"上下文 {CONTEXT}、批大小 {BATCH}、float16"),
        "小配置_直接计数": {
            "配置": dict(tiny),
            "公式字节": kv_bytes_per_token(tiny["layers"], tiny["kv_heads"], tiny["head_dim"]) * tiny["context"] * tiny["batch"],
            "逐个数出的元素": count_elements(cache),
        },
    }


if __name__ == "__main__":
    import json

    self_test()
    print(json.dumps(run_demo(), ensure_ascii=False, indent=2))
