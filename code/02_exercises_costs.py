"""第2章“代价与规模”页练习的参考解：题目的输入是这里的常量，答案由 ``02_costs.py`` 算出。

每道题的配置都是人工构造的小例子，不是任何公开模型；这里不计时。与 ``02_costs.py``、
``02_attention.py`` 放在同一目录，运行 ``python3 02_exercises_costs.py``：先自检，再打印答案。
"""

from __future__ import annotations

import importlib

att = importlib.import_module("02_attention")
costs = importlib.import_module("02_costs")

# 练习 2.8.1、2、3：一个虚构的小模型（不是任何公开模型），K/V 头分组。
EX_MODEL = {
    "name": "练习模型",
    "layers": 4,
    "hidden": 128,
    "heads": 8,
    "kv_heads": 2,
    "head_dim": 16,
    "max_positions": 8192,
}
FLOAT16_BYTES = costs.FLOAT16_BYTES
INT8_BYTES = costs.INT8_BYTES
# 练习 2.8.2：上下文长度与批大小。
KV_CONTEXT = 1000
KV_BATCH = 2
# 练习 2.8.3：滑动窗口与几个上下文长度。
WINDOW = 256
WINDOW_CONTEXTS = [100, 256, 1000, 4000]
# 练习 2.8.4 的例子：提示 4 个 token，再生成 3 个；两个输入的取值范围（含两端）。
PROMPT = 4
STEPS = 3
LIMITS = {"prompt": (1, 4096), "steps": (0, 4096)}


def table_beats_cache(model: dict = EX_MODEL) -> dict:
    """练习 2.8.1：一层、一个序列的分数表（``heads × n²`` 格）从哪个长度起多于 n 个位置的
    整个 KV 缓存（``2 × L × h_kv × d × n`` 个数）。两边每个数的字节相同，比的是个数。

    >>> table_beats_cache()
    {'threshold': 32, 'first': 33}
    """
    costs.kv_cache_bytes(model, 1)  # 检查 model
    m = model
    per_position = 2 * m["layers"] * m["kv_heads"] * m["head_dim"]  # 缓存：每个位置这么多个数
    # heads × n² > per_position × n  ⟺  n > per_position ÷ heads
    threshold = per_position // m["heads"]
    return {"threshold": threshold, "first": threshold + 1}


def kv_plans(model: dict = EX_MODEL, context: int = KV_CONTEXT, batch: int = KV_BATCH) -> list:
    """练习 2.8.2：分组 K/V 头（16 位）、同宽全多头（16 位）、分组 K/V 头（8 位）三种做法的字节数。

    >>> [(p["per_token"], p["total"]) for p in kv_plans()]
    [(512, 1024000), (2048, 4096000), (256, 512000)]
    """
    plans = [
        ("分组 K/V 头，16 位", model, FLOAT16_BYTES),
        ("同宽全多头，16 位", costs.full_mha(model), FLOAT16_BYTES),
        ("分组 K/V 头，8 位", model, INT8_BYTES),
    ]
    return [
        {
            "name": name,
            "kv_heads": m["kv_heads"],
            "bytes": b,
            "per_token": costs.kv_cache_bytes(m, 1, 1, b),
            "total": costs.kv_cache_bytes(m, context, batch, b),
        }
        for name, m, b in plans
    ]


def window_rows(
    model: dict = EX_MODEL, window: int = WINDOW, contexts: list = WINDOW_CONTEXTS
) -> list:
    """练习 2.8.3：加上滑动窗口 ``window`` 之后，每个上下文长度下缓存存几个位置、多少字节（16 位，
    批大小 1），与不加窗口时相比。

    >>> [(r["context"], r["positions"], r["windowed"], r["full"]) for r in window_rows()][-1]
    (4000, 256, 131072, 2048000)
    """
    att.check_count(window, "window")
    costs.kv_cache_bytes(model, 1)  # 检查 model
    windowed = {**model, "sliding_window": window, "use_sliding_window": True}
    cs = [
        att.check_count(c, f"contexts[{i}]")
        for i, c in enumerate(att.as_list(contexts, "contexts"))
    ]
    if not cs:
        raise ValueError("contexts 不能为空：至少要给一个上下文长度")
    return [
        {
            "context": c,
            "positions": costs.cached_positions(windowed, c),
            "windowed": costs.kv_cache_bytes(windowed, c),
            "full": costs.kv_cache_bytes(model, c),
        }
        for c in cs
    ]


def generation_cells(prompt: int, steps: int, cache: bool = True) -> int:
    """练习 2.8.4 的参考解：先处理 ``prompt`` 个 token 的提示（一张 ``prompt × prompt`` 的表），
    再把生成的 ``steps`` 个 token 逐个送回模型（最后一个也送回，每送一个算一步），朴素实现
    一共算多少个分数格。用缓存时，第 t 步只有一个新查询，与此前的 ``prompt + t`` 个 Key
    各比一次；不用缓存时，每一步把整段重算一遍。

    >>> generation_cells(4, 0)
    16
    >>> generation_cells(4, 3)
    34
    >>> generation_cells(4, 3, cache=False)
    126
    >>> generation_cells(0, 3)
    Traceback (most recent call last):
    ...
    ValueError: prompt 必须是 1 到 4096 的整数，收到 0
    """
    # 题目要求只用 Python 标准库：自己检查输入。每个数：值、最小、最大（含两端）。
    ranges = {"prompt": (prompt, 1, 4096), "steps": (steps, 0, 4096)}
    for name, (n, least, most) in ranges.items():
        if isinstance(n, bool) or not isinstance(n, int) or not least <= n <= most:
            raise ValueError(f"{name} 必须是 {least} 到 {most} 的整数，收到 {n!r}")
    if not isinstance(cache, bool):
        raise ValueError(f"cache 必须是 True 或 False，收到 {cache!r}")
    lengths = range(prompt + 1, prompt + steps + 1)  # 第 t 步之后序列的长度
    return prompt * prompt + sum(n if cache else n * n for n in lengths)


def self_test() -> None:
    """参考解对照逐格数出的可见性表与直接构造的缓存。出错时抛 AssertionError。

    >>> self_test()
    """
    first = table_beats_cache()["first"]
    m = EX_MODEL
    for n, more in ((first - 1, False), (first, True)):
        table = costs.score_costs(n, m["head_dim"], m["heads"], 1)["entries"]
        cache = costs.kv_bytes_per_token(m["layers"], m["kv_heads"], m["head_dim"], 1) * n
        att.check((table > cache) is more, "分数表应从 first 起多于整个缓存")
    grouped, full, _ = kv_plans()
    att.check(
        full["total"] * m["kv_heads"] == grouped["total"] * m["heads"],
        "全多头应是 heads/kv_heads 倍",
    )
    # 用缓存的每一步：一个新查询（past = n − 1）那一行可见性表的格数，即 n 个 Key
    steps = [sum(len(row) for row in att.visibility(1, n, past=n - 1)) for n in (5, 6, 7)]
    att.check(generation_cells(4, 3) == 16 + sum(steps), "用缓存的一步：一个新查询 × 全部 Key")

    def accepted(**n):
        try:
            generation_cells(**{"prompt": 1, "steps": 0, **n})
        except ValueError:
            return False
        return True

    for name, (least, most) in LIMITS.items():  # 题目写的范围就是参考解接受的范围
        inside = accepted(**{name: least}) and accepted(**{name: most})
        outside = accepted(**{name: least - 1}) or accepted(**{name: most + 1})
        att.check(inside and not outside, f"练习 2.8.4：{name} 的范围应是 {least} 到 {most}")


def answers() -> dict:
    """每道题的答案（JSON 可打印）。

    >>> sorted(answers())
    ['练习 2.8.1', '练习 2.8.2', '练习 2.8.3', '练习 2.8.4']
    """
    return {
        "练习 2.8.1": table_beats_cache(),
        "练习 2.8.2": {p["name"]: p["total"] for p in kv_plans()},
        "练习 2.8.3": {r["context"]: r["windowed"] for r in window_rows()},
        "练习 2.8.4": [
            generation_cells(PROMPT, STEPS),
            generation_cells(PROMPT, STEPS, cache=False),
        ],
    }


if __name__ == "__main__":
    self_test()
    att.print_json(answers())
