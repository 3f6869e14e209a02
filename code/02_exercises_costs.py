"""第2章“代价与规模”页练习的参考解：题目的输入是这里的常量，答案由 ``02_costs.py`` 与 ``02_attention.py`` 算出。

每道题的配置都是人工构造的小例子，不是任何公开模型；这里不计时。与 ``02_costs.py``、``02_attention.py``
放在同一目录，运行 ``python3 02_exercises_costs.py``：先自检，再以 JSON 打印每道题的答案。
"""

from __future__ import annotations

import importlib

att = importlib.import_module("02_attention")
costs = importlib.import_module("02_costs")

# 练习 1：一层注意力的分数表，一个新的小规模；再把长度翻倍。
TABLE_N, TABLE_HEAD_DIM, TABLE_HEADS, TABLE_BATCH, TABLE_BYTES = 6, 4, 2, 3, 2
TABLE_SCALE = 2
# 练习 2：一个虚构的小模型（不是任何公开模型），K/V 头分组。
EX_MODEL = {"name": "练习模型", "layers": 4, "hidden": 128, "heads": 8, "kv_heads": 2, "head_dim": 16,
            "max_positions": 2048}
KV_CONTEXT, KV_BATCH = 1000, 2
FLOAT16_BYTES, INT8_BYTES = costs.FLOAT16_BYTES, costs.INT8_BYTES
# 练习 3：两个能真的造出缓存的小配置。甲的 head_dim 恰等于 hidden ÷ heads，乙的不等。
SMALL_A = {"name": "小配置甲", "layers": 2, "hidden": 6, "heads": 2, "kv_heads": 1, "head_dim": 3, "max_positions": 8}
SMALL_B = {"name": "小配置乙", "layers": 2, "hidden": 6, "heads": 3, "kv_heads": 1, "head_dim": 4, "max_positions": 8}
SMALL_CONTEXT = 4
BIG_N, HALF_TOL = 4096, 1e-3  # 检查 3：n 很大时，禁止格的占比离一半不超过 HALF_TOL
SMALL_NS = [1, 2, 3, 4, 5]  # 检查 4：逐格去数可见性表


def score_table_steps(n: int = TABLE_N, head_dim: int = TABLE_HEAD_DIM, heads: int = TABLE_HEADS,
                      batch: int = TABLE_BATCH, bytes_per_element: int = TABLE_BYTES, scale: int = TABLE_SCALE) -> dict:
    """练习 1：长度 ``n`` 与 ``scale × n`` 时分数表的格子、字节、乘加与禁止格，及其倍数。

    >>> s = score_table_steps()
    >>> s["small"]
    {'entries': 216, 'bytes': 432, 'qk_madds': 864, 'mix_madds': 864, 'forbidden': 90}
    >>> s["large"]["entries"], s["ratio"]["entries"], s["ratio"]["forbidden"]
    (864, 4.0, 4.4)
    """
    att.check_count(scale, "scale", minimum=2)
    small = costs.score_costs(n, head_dim, heads, bytes_per_element, batch=batch)
    large = costs.score_costs(scale * n, head_dim, heads, bytes_per_element, batch=batch)
    # n = 1 时一格也不禁止：倍数无从说起，记作 None
    return {"small": small, "large": large,
            "ratio": {key: large[key] / small[key] if small[key] else None for key in small}}


def kv_plans(model: dict = EX_MODEL, context: int = KV_CONTEXT, batch: int = KV_BATCH) -> list[dict]:
    """练习 2：分组 K/V 头（float16）、同宽全多头（float16）、分组 K/V 头（8 位）三种做法的字节数。

    >>> [(p["name"], p["per_token"], p["total"]) for p in kv_plans()]
    [('分组 K/V 头，float16', 512, 1024000), ('同宽全多头，float16', 2048, 4096000), ('分组 K/V 头，8 位', 256, 512000)]
    """
    plans = [("分组 K/V 头，float16", model, FLOAT16_BYTES), ("同宽全多头，float16", costs.full_mha(model), FLOAT16_BYTES),
             ("分组 K/V 头，8 位", model, INT8_BYTES)]
    return [{"name": name, "kv_heads": m["kv_heads"], "bytes": b, "per_token": costs.kv_cache_bytes(m, 1, 1, b),
             "total": costs.kv_cache_bytes(m, context, batch, b)} for name, m, b in plans]


def forbidden_cells(new: int, past: int = 0) -> int:
    """练习 4 的参考解：缓存里已有 ``past`` 个位置、新来 ``new`` 个查询时，因果规则禁止的格子数。

    新查询第 i 行在绝对位置 ``past + i``，只禁止它之后的 ``new − 1 − i`` 个 Key；缓存里的 Key 全都可读。

    >>> forbidden_cells(4)
    6
    >>> forbidden_cells(4, past=3), forbidden_cells(1, past=100)
    (6, 0)
    >>> forbidden_cells(0)
    Traceback (most recent call last):
    ...
    ValueError: new 必须是不小于 1 的整数，收到 0
    """
    att.check_count(new, "new", maximum=att.MAX_POSITIONS)  # 逐行相加：行数要有个上限
    att.check_count(past, "past", minimum=0)
    return sum(new - 1 - i for i in range(new))


# -- 练习 3：四种写法，四项检查 ------------------------------------------------------------------------
def _kv_right(m: dict, b: int) -> float:
    return costs.kv_bytes_per_token(m["layers"], m["kv_heads"], m["head_dim"], b)


def _kv_no_two(m: dict, b: int) -> float:
    return m["layers"] * m["kv_heads"] * m["head_dim"] * b  # 漏了“K 和 V 各一份”的 2


def _kv_naive_head_dim(m: dict, b: int) -> float:
    return 2 * m["layers"] * m["kv_heads"] * (m["hidden"] / m["heads"]) * b  # head_dim 用 hidden ÷ heads 推


def _forbidden_wrong(n: int) -> int:
    return n * (n + 1) // 2  # 把对角线也算成禁止


# 名字、每 token 字节的公式、禁止格数的公式。
VARIANTS = [
    ("A：正确", _kv_right, costs.causal_forbidden),
    ("B：漏了因子 2", _kv_no_two, costs.causal_forbidden),
    ("C：头维度取 hidden ÷ heads", _kv_naive_head_dim, costs.causal_forbidden),
    ("D：禁止格写成 n(n+1)/2", _kv_right, _forbidden_wrong),
]


def bug_checks(variants: list = VARIANTS) -> dict:
    """练习 3：每种写法在四项检查上算出的数与结论（``ok``）；``counted`` 与 ``counted_small`` 是直接数出的参照。
    ``variants`` 是 ``(名字, 每 token 字节的公式, 禁止格数的公式)`` 的列表，默认是本题的四种写法。

    检查 1、2：小配置甲、乙真的造出缓存、逐个数；检查 3：n = ``BIG_N`` 时禁止格约占一半；检查 4：逐格数可见性表。

    >>> [(r["name"][0], r["ok"]) for r in bug_checks()["rows"]]
    [('A', [True, True, True, True]), ('B', [False, False, True, True]), ('C', [True, False, True, True]), ('D', [True, True, True, False])]
    >>> bug_checks([("X", None, None)])
    Traceback (most recent call last):
    ...
    ValueError: variants[0] 必须是 (名字, 每 token 字节的公式, 禁止格数的公式)，收到 ('X', None, None)
    """
    for i, v in enumerate(att.as_list(variants, "variants")):
        if not (isinstance(v, (tuple, list)) and len(v) == 3 and isinstance(v[0], str) and callable(v[1]) and callable(v[2])):
            raise ValueError(f"variants[{i}] 必须是 (名字, 每 token 字节的公式, 禁止格数的公式)，收到 {v!r}")
    b = FLOAT16_BYTES
    counted = [costs.count_elements(costs.build_kv_cache(m["layers"], m["kv_heads"], m["head_dim"], SMALL_CONTEXT)) * b
               for m in (SMALL_A, SMALL_B)]
    counted_small = [sum(not ok for row in att.visibility(n, n) for ok in row) for n in SMALL_NS]
    rows = []
    for name, kv, forbidden in variants:
        formula = [kv(m, b) * SMALL_CONTEXT for m in (SMALL_A, SMALL_B)]
        share = forbidden(BIG_N) / (BIG_N * BIG_N)
        small = [forbidden(n) for n in SMALL_NS]
        ok = [formula[0] == counted[0], formula[1] == counted[1], abs(share - 0.5) <= HALF_TOL, small == counted_small]
        rows.append({"name": name, "formula": formula, "share": share, "small": small, "ok": ok})
    return {"rows": rows, "counted": counted, "counted_small": counted_small}


def self_test() -> None:
    """参考解对照逐格数出的可见性表与直接构造的缓存。出错时抛 AssertionError。

    >>> self_test()
    """
    for new, past in ((1, 0), (4, 0), (4, 3), (5, 7)):
        table = att.visibility(new, past + new, past=past)  # (new, past + new)
        att.check(forbidden_cells(new, past) == sum(not ok for row in table for ok in row), "禁止格数应等于数出的格子")
    grouped, full, _ = kv_plans()
    att.check(full["total"] * EX_MODEL["kv_heads"] == grouped["total"] * EX_MODEL["heads"], "全多头应是 heads/kv_heads 倍")
    att.check(all(bug_checks()["rows"][0]["ok"]), "正确的写法 A 应通过全部检查")


def answers() -> dict:
    """每道题的答案（JSON 可打印）。

    >>> sorted(answers())
    ['练习1', '练习2', '练习3', '练习4']
    """
    return {
        "练习1": score_table_steps()["small"],
        "练习2": {p["name"]: p["total"] for p in kv_plans()},
        "练习3": {r["name"]: r["ok"] for r in bug_checks()["rows"]},
        "练习4": [forbidden_cells(4), forbidden_cells(4, past=3)],
    }


if __name__ == "__main__":
    self_test()
    att.print_json(answers())
