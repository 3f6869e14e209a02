"""第2章“代价与规模”页的练习：题目的输入与答案，全部由教学代码算出。

书页在“练习”一节调用这里的函数：题目里的数来自这里的常量，解答里的表、句子和每一步的中间值来自
``02_costs.py`` 与 ``02_attention.py``，所以答案不会与正文不一致。每道题的配置都是人工构造的小例子，
不是任何公开模型；这里不计时。

直接运行 ``python3 code/02_exercises_costs.py`` 会以 JSON 打印每道题的答案。
"""

from __future__ import annotations

from book_tools import load

att = load("02_attention")
costs = load("02_costs")

# 练习 1：一层注意力的分数表，一个新的小规模；再把长度翻倍。
TABLE_N, TABLE_HEAD_DIM, TABLE_HEADS, TABLE_BATCH, TABLE_BYTES = 6, 4, 2, 3, 2
TABLE_SCALE = 2
# 练习 2：一个虚构的小模型（不是任何公开模型），K/V 头分组。
EX_MODEL = {
    "name": "练习模型", "layers": 4, "hidden": 128, "heads": 8, "kv_heads": 2, "head_dim": 16,
    "max_positions": 2048,
}
KV_CONTEXT, KV_BATCH = 1000, 2
FLOAT16_BYTES, INT8_BYTES = costs.FLOAT16_BYTES, costs.INT8_BYTES
# 练习 3：两个能真的造出缓存的小配置。甲的 head_dim 恰等于 hidden ÷ heads，乙的不等。
SMALL_A = {"name": "小配置甲", "layers": 2, "hidden": 6, "heads": 2, "kv_heads": 1, "head_dim": 3, "max_positions": 8}
SMALL_B = {"name": "小配置乙", "layers": 2, "hidden": 6, "heads": 3, "kv_heads": 1, "head_dim": 4, "max_positions": 8}
SMALL_CONTEXT = 4
BIG_N, HALF_TOL = 4096, 1e-3  # 检查 3：n 很大时，禁止格的占比离一半不超过 HALF_TOL
SMALL_NS = [1, 2, 3, 4, 5]  # 检查 4：逐格去数可见性表


def score_table_steps(
    n: int = TABLE_N, head_dim: int = TABLE_HEAD_DIM, heads: int = TABLE_HEADS,
    batch: int = TABLE_BATCH, bytes_per_element: int = TABLE_BYTES, scale: int = TABLE_SCALE,
) -> dict:
    """练习 1 的答案：长度 ``n`` 与 ``scale × n`` 时分数表的格子、字节、乘加与禁止格，及其倍数。

    >>> s = score_table_steps()
    >>> s["small"]
    {'entries': 216, 'bytes': 432, 'qk_madds': 864, 'mix_madds': 864, 'forbidden': 90}
    >>> s["large"]["entries"], s["ratio"]["entries"], s["ratio"]["forbidden"]
    (864, 4.0, 4.4)
    """
    costs._count(scale, "scale", minimum=2)
    small = costs.score_costs(n, head_dim, heads, bytes_per_element, batch=batch)
    large = costs.score_costs(scale * n, head_dim, heads, bytes_per_element, batch=batch)
    return {
        "small": small, "large": large,
        "ratio": {key: large[key] / small[key] if small[key] else None for key in small},
    }


def kv_plans(model: dict = EX_MODEL, context: int = KV_CONTEXT, batch: int = KV_BATCH) -> list[dict]:
    """练习 2 的答案：分组 K/V 头（float16）、同宽全多头（float16）、分组 K/V 头（8 位）三种做法的字节数。

    >>> [(p["name"], p["per_token"], p["total"]) for p in kv_plans()]
    [('分组 K/V 头，float16', 512, 1024000), ('同宽全多头，float16', 2048, 4096000), ('分组 K/V 头，8 位', 256, 512000)]
    """
    m = costs._model(model)
    plans = [
        ("分组 K/V 头，float16", m, FLOAT16_BYTES),
        ("同宽全多头，float16", costs.full_mha(m), FLOAT16_BYTES),
        (f"分组 K/V 头，{8 * INT8_BYTES} 位", m, INT8_BYTES),
    ]
    return [
        {
            "name": name, "kv_heads": cfg["kv_heads"], "bytes": b,
            "per_token": costs.kv_bytes_per_token(cfg["layers"], cfg["kv_heads"], cfg["head_dim"], b),
            "total": costs.kv_cache_bytes(cfg, context, batch, b),
        }
        for name, cfg, b in plans
    ]


def kv_sentence(plans: list[dict]) -> str:
    """由三种做法的字节数生成比较句：全多头是分组的几倍，float16 是 8 位的几倍。

    >>> kv_sentence(kv_plans())
    '同宽全多头的缓存是分组 K/V 头的 4 倍（查询头数 ÷ K/V 头数）；float16 的缓存是 8 位的 2 倍（每元素字节之比）。'
    """
    grouped, full, low = plans
    bits = f"是 {8 * low['bytes']} 位的"
    return (
        f"同宽全多头的缓存{costs._times('是分组 K/V 头的', full['total'] / grouped['total'])}（查询头数 ÷ K/V 头数）；"
        f"float16 的缓存{costs._times(bits, grouped['total'] / low['total'])}（每元素字节之比）。"
    )


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
    for value, name, minimum in ((new, "new", 1), (past, "past", 0)):
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise ValueError(f"{name} 必须是不小于 {minimum} 的整数，收到 {value!r}")
    return sum(new - 1 - i for i in range(new))


# -- 练习 3：四种写法，四项检查 ------------------------------------------------------------------------
def _kv_right(m: dict, b: int) -> float:
    return costs.kv_bytes_per_token(m["layers"], m["kv_heads"], m["head_dim"], b)


def _kv_no_two(m: dict, b: int) -> float:
    return m["layers"] * m["kv_heads"] * m["head_dim"] * b  # 漏了“K 和 V 各一份”的 2


def _kv_naive_head_dim(m: dict, b: int) -> float:
    return 2 * m["layers"] * m["kv_heads"] * costs.naive_head_dim(m) * b  # head_dim 用 hidden ÷ heads 推


def _forbidden_right(n: int) -> int:
    return costs.causal_forbidden(n)


def _forbidden_wrong(n: int) -> int:
    return n * (n + 1) // 2  # 把对角线也算成禁止


# 名字、每 token 字节的公式、禁止格数的公式。
VARIANTS = [
    ("A：正确", _kv_right, _forbidden_right),
    ("B：漏了因子 2", _kv_no_two, _forbidden_right),
    ("C：head_dim 取 hidden ÷ heads", _kv_naive_head_dim, _forbidden_right),
    ("D：禁止格写成 n(n+1)/2", _kv_right, _forbidden_wrong),
]


def _counted_cache_bytes(m: dict, context: int, b: int) -> int:
    cache = costs.build_kv_cache(m["layers"], m["kv_heads"], m["head_dim"], context)
    return costs.count_elements(cache) * b


def _counted_forbidden(n: int) -> int:
    return sum(not ok for row in att.visibility(n, n) for ok in row)


def check_names() -> list[str]:
    """四项检查的名字（表头与句子都用它）。

    >>> check_names()[0]
    '检查 1：小配置甲造出缓存逐个数'
    """
    return [
        f"检查 1：{SMALL_A['name']}造出缓存逐个数",
        f"检查 2：{SMALL_B['name']}造出缓存逐个数",
        f"检查 3：n = {BIG_N} 时禁止格约占一半",
        f"检查 4：n = {SMALL_NS[0]}…{SMALL_NS[-1]} 逐格数可见性表",
    ]


def bug_checks() -> dict:
    """练习 3 的答案：每种写法在每项检查上算出的数与结论。

    >>> c = bug_checks()
    >>> [(r["name"][0], r["ok"]) for r in c["rows"]]
    [('A', [True, True, True, True]), ('B', [False, False, True, True]), ('C', [True, False, True, True]), ('D', [True, True, True, False])]
    >>> c["sentence"]
    '只有写法 A 通过全部四项检查；检查 1 认出 B，检查 2 认出 B、C，检查 3 一种也认不出，检查 4 认出 D。'
    """
    b = FLOAT16_BYTES
    counted = [_counted_cache_bytes(m, SMALL_CONTEXT, b) for m in (SMALL_A, SMALL_B)]
    counted_small = [_counted_forbidden(n) for n in SMALL_NS]
    rows = []
    for name, kv, forbidden in VARIANTS:
        formula = [kv(m, b) * SMALL_CONTEXT for m in (SMALL_A, SMALL_B)]
        share = forbidden(BIG_N) / (BIG_N * BIG_N)
        small = [forbidden(n) for n in SMALL_NS]
        ok = [formula[0] == counted[0], formula[1] == counted[1], abs(share - 0.5) <= HALF_TOL, small == counted_small]
        rows.append({"name": name, "formula": formula, "share": share, "small": small, "ok": ok})
    return {
        "rows": rows, "counted": counted, "counted_small": counted_small, "names": check_names(),
        "sentence": _bug_sentence(rows),
    }


def _bug_sentence(rows: list[dict]) -> str:
    """由检查结果生成一句话：谁通过全部检查，每项检查各认出哪些写法。"""
    letters = [r["name"].split("：")[0] for r in rows]
    n_checks = len(rows[0]["ok"])
    passed = [x for x, r in zip(letters, rows) if all(r["ok"])]
    digits = "一二三四五六七八九"
    count = digits[n_checks - 1] if n_checks <= len(digits) else str(n_checks)
    if passed:
        start = ("只有" if len(passed) == 1 else "") + f"写法 {'、'.join(passed)} 通过全部{count}项检查；"
    else:
        start = "没有一种写法通过全部检查；"
    parts = []
    for j in range(n_checks):
        caught = [x for x, r in zip(letters, rows) if not r["ok"][j]]
        parts.append(f"检查 {j + 1} " + (f"认出 {'、'.join(caught)}" if caught else "一种也认不出"))
    return start + "，".join(parts) + "。"


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
    import json

    print(json.dumps(answers(), ensure_ascii=False, indent=2))
