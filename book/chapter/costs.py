"""The costs page (代价与规模): the facts its tables and sentences are written from, and its figure.

``code/02_costs.py`` counts (score tables, KV-cache bytes) and times a plain numpy attention. Each
section's function (``score_values``, ``kv_values`` …) returns what the page glues under each name;
the page calls ``page.glue_all`` on it. Wording that depends on the data is chosen here, from the same
rows as the table next to it; every other sentence is in the page.
"""

from __future__ import annotations

import importlib
import itertools
import math
import os
import platform
import statistics
import time
from fractions import Fraction

from chapter import fmt
from chapter.fmt import glue_all  # noqa: F401 (the page calls page.glue_all)

att = importlib.import_module("02_attention")
costs = importlib.import_module("02_costs")
ex = importlib.import_module("02_exercises_costs")

# -- kinds of number ---------------------------------------------------------------------------------
def times(ratio: float) -> str:
    """A positive ratio in 倍 (``fmt.multiple``): 4 倍, 4.4 倍."""
    x = att.real(ratio, "ratio")
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"ratio 必须是有限的正数，收到 {ratio!r}")
    return f"{fmt.multiple(x)} 倍"


def about_times(verb: str, ratio: float) -> str:
    """``verb`` and a ratio, with 约 in front when the ratio is not whole (it has been rounded)."""
    text = times(ratio)
    return ("" if float(ratio).is_integer() else "约") + f"{verb} {text}"


def share(part: int, whole: int) -> str:
    """``part ÷ whole`` as a percentage, with more decimals where ``fmt.percent``'s would show a
    whole percentage that the share is not: 4,294,705,152 of 8,589,934,592 is 49.997%, not 50.00%."""
    whole = att.check_count(whole, "whole")
    part = att.check_count(part, "part", minimum=0, maximum=whole)
    value = Fraction(100 * part, whole)
    for digits in range(fmt.DECIMALS["percent"][0], 16):
        shown = round(value, digits)
        if shown == value or shown.denominator != 1:  # exact, or not a whole percentage
            break
    return fmt.fmt(float(value), digits) + "%"


def listing(values: list) -> str:
    """Inputs listed the way the prose lists them: 1024、4096、16,384 (a count groups its thousands)."""
    return "、".join(fmt.count(x) if isinstance(x, int) else fmt.short(x) for x in att.as_list(values, "values"))


def put_in(*counts: int) -> str:
    """Counts put into a product, the way a calculation is written out: 3 × 2 × 6."""
    return " × ".join(fmt.count(n) for n in counts)


def _names(names: list[str]) -> str:
    return "、".join(names[:-1]) + "与" + names[-1] if len(names) > 1 else names[0]


def _counts(values: dict, prefix: str) -> dict:
    """Glue names ``prefix + key`` for the whole numbers of an input box."""
    return {prefix + key: fmt.count(n) for key, n in values.items()}


# -- 分数表：n² 个格子 ---------------------------------------------------------------------------------
def score_rows(ns: list[int] = costs.SCORE_NS) -> list[dict]:
    """The score-table counts of the page at each length (one sequence, the page's heads and head_dim)."""
    return [{"n": n, **costs.score_costs(n, costs.SCORE_HEAD_DIM, costs.SCORE_HEADS, costs.SCORE_BYTES,
                                         batch=costs.SCORE_BATCH)} for n in att.as_list(ns, "ns")]


def score_table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    """Entries, bytes, forbidden cells (with their share) and the two multiply-adds at each length."""
    header = ["序列长度 n", "分数表格子数", "字节（float32）", "因果禁止的格子（占比）",
              "乘加：算分数、混合 V 各"]
    return header, [[fmt.count(r["n"]), fmt.grouped(r["entries"]), fmt.size(r["bytes"]),
                     f"{fmt.grouped(r['forbidden'])}（{share(r['forbidden'], r['entries'])}）",
                     fmt.grouped(r["qk_madds"])] for r in rows]


def growth(rows: list[dict]) -> dict:
    """From the first length to the second: how much n grew, and how much every count grew."""
    first, second = rows[0], rows[1]
    ratios = {second[key] / first[key] for key in ("entries", "bytes", "qk_madds", "mix_madds")}
    if len(ratios) != 1:
        raise ValueError(f"格子、字节与乘加的增长倍数应当相同：{ratios}")
    return {"n0": fmt.count(first["n"]), "n1": fmt.count(second["n"]),
            "n_ratio": times(second["n"] / first["n"]), "growth": times(ratios.pop())}


# -- KV 缓存 -----------------------------------------------------------------------------------------
BITS = f"{fmt.count(8 * costs.FLOAT16_BYTES)} 位"  # the 2-byte formats (float16, bfloat16)
BITS_8 = f"{fmt.count(8 * costs.INT8_BYTES)} 位"


def configs_table(models: list[dict]) -> tuple[list[str], list[list[str]]]:
    """The published configurations as data: one row a model, its published dtype last."""
    header = ["模型", "层数", "hidden", "查询头", "K/V 头", "头维度", "最大位置数", "滑动窗口", "发布的 dtype"]
    keys = ("layers", "hidden", "heads", "kv_heads", "head_dim", "max_positions")
    off = {False: "（未启用）"}  # use_sliding_window: false
    return header, [[m["name"], *(fmt.count(m[key]) for key in keys), fmt.count(m["sliding_window"])
                     + off.get(m.get("use_sliding_window"), "") if m.get("sliding_window") else "—",
                     m["dtype"]] for m in models]


def sliding_sentence(models: list[dict]) -> str:
    """Every sliding_window a configuration writes, and whether it is switched on; empty when none."""
    parts = []
    for m in att.as_list(models, "models"):
        if not m.get("sliding_window"):
            continue
        w = fmt.count(m["sliding_window"])
        start = f"{m['name']} 的配置{'也' if parts else ''}写了 sliding_window = {w}"
        parts.append(start + ("，但同时写明 use_sliding_window = false，不启用"
                              if m.get("use_sliding_window") is False
                              else f"：每层只存最近 {w} 个位置，上下文再长，缓存也不再变大"))
    return "；".join(parts) + "。" if parts else ""


def kv_rows(models: list[dict], context: int = costs.CONTEXT, batch: int = costs.BATCH) -> list[dict]:
    """Each model's KV-cache bytes under the page's conditions (16 bits unless said)."""
    b, b8 = costs.FLOAT16_BYTES, costs.INT8_BYTES
    return [{"model": m, "per_token": costs.kv_cache_bytes(m, 1, 1, b),
             "at_context": costs.kv_cache_bytes(m, context, batch, b),
             "at_context_8": costs.kv_cache_bytes(m, context, batch, b8),
             "as_mha": costs.kv_cache_bytes(costs.full_mha(m), context, batch, b),
             "at_max": costs.kv_cache_bytes(m, m["max_positions"], batch, b)} for m in models]


def saving(model: dict) -> str:
    """What grouping the K/V heads saves: heads ÷ kv_heads, or 不分组."""
    return times(model["heads"] // model["kv_heads"]) if model["heads"] > model["kv_heads"] else "不分组"


def kv_table(rows: list[dict], context: int = costs.CONTEXT) -> tuple[list[str], list[list[str]]]:
    """The KV-cache table: per token, at the context, in 8 bits, as full multi-head, at the maximum."""
    c = fmt.count(context)
    header = ["模型", f"每 token（{BITS}）", f"上下文 {c}（{BITS}）", f"上下文 {c}（{BITS_8}）",
              f"同宽全多头（{BITS}）", "分组省下", f"最大位置数下（{BITS}，计入滑动窗口）"]
    keys = ("per_token", "at_context", "at_context_8", "as_mha")
    return header, [[r["model"]["name"], *(fmt.size(r[key]) for key in keys), saving(r["model"]),
                     fmt.size(r["at_max"])] for r in rows]


def compare_sentence(names: list[str], nbytes: list[int], condition: str) -> str:
    """Which cache is smallest and which largest under ``condition``, and by how much."""
    names = [str(x) for x in att.as_list(names, "names")]
    sizes = [att.check_count(x, f"nbytes[{i}]") for i, x in enumerate(att.as_list(nbytes, "nbytes"))]
    if not names or len(names) != len(sizes):
        raise ValueError(f"names 与 nbytes 必须非空且一样长，收到 {len(names)} 个名字、{len(sizes)} 个字节数")
    if not isinstance(condition, str) or not condition:
        raise ValueError(f"condition 必须是非空的文字，收到 {condition!r}")
    low, high = min(sizes), max(sizes)
    # 中文与数字、西文之间留一个空格，与正文的写法一致。
    when = condition + (" 时" if condition[-1].isascii() and condition[-1].isalnum() else "时")
    if low == high:
        return f"{when}，{_names(names)} 的 KV 缓存一样大（{fmt.size(low)}）。"
    smallest = _names([n for n, b in zip(names, sizes) if b == low])
    largest = _names([n for n, b in zip(names, sizes) if b == high])
    return (f"{when}，KV 缓存最小的是 {smallest}（{fmt.size(low)}），最大的是 {largest}（{fmt.size(high)}），"
            f"{about_times('是最小者的', high / low)}。")


def kv_comparisons(rows: list[dict], context: int = costs.CONTEXT, batch: int = costs.BATCH) -> tuple:
    """The two rankings under the KV table: at the page's context, and at each model's maximum length,
    where a sliding window that caps a cache is named in the condition."""
    names = [r["model"]["name"] for r in rows]
    at = f"批大小 {fmt.count(batch)}、{BITS}"
    capped = [f"{m['name']} 只存最近 {fmt.count(m['sliding_window'])} 个位置" for m in (r["model"] for r in rows)
              if costs.cached_positions(m, m["max_positions"]) < m["max_positions"]]  # a window caps it
    cap = f"；{'，'.join(capped)}" if capped else ""
    return (compare_sentence(names, [r["at_context"] for r in rows], f"上下文 {fmt.count(context)}、{at}"),
            compare_sentence(names, [r["at_max"] for r in rows], f"取各自的最大位置数作上下文（{at}{cap}）"))


# -- 误解 ----------------------------------------------------------------------------------------------
def query_heads_sentence(models: list[dict]) -> str:
    """Two models with as many query heads but different K/V heads: the cache follows the K/V heads."""
    ms = att.as_list(models, "models")
    per = [costs.kv_cache_bytes(m, 1) for m in ms]  # also checks every model
    pairs = [(i, j) for i, j in itertools.combinations(range(len(ms)), 2)
             if ms[i]["heads"] == ms[j]["heads"] and ms[i]["kv_heads"] != ms[j]["kv_heads"]]
    if not pairs:
        return "这几个模型里没有查询头一样多、K/V 头却不同的两个。"
    (i, j), (a, b) = pairs[0], (ms[pairs[0][0]], ms[pairs[0][1]])
    start = (f"{a['name']} 与 {b['name']} 都有 {fmt.count(a['heads'])} 个查询头，"
             f"K/V 头却分别是 {fmt.count(a['kv_heads'])} 个和 {fmt.count(b['kv_heads'])} 个；")
    low, high = sorted((per[i], per[j]))
    if low == high:  # 层数或头维度也不同，恰好抵消
        return start + f"每 token 的缓存却都是 {fmt.size(low)}：层数与头维度的差别恰好抵消了。"
    return start + f"每 token 的缓存分别是 {fmt.size(per[i])} 和 {fmt.size(per[j])}，{about_times('相差', high / low)}。"


# -- 公式对照直接计数 ---------------------------------------------------------------------------------
def tiny_table(tiny: dict = costs.TINY) -> tuple[list[str], list[list[str]]]:
    """The tiny cache two ways: by the formula, and by building every array and counting its elements."""
    b, t = costs.FLOAT16_BYTES, tiny
    counted = costs.count_elements(costs.build_kv_cache(**t))
    formula = costs.kv_bytes_per_token(t["layers"], t["kv_heads"], t["head_dim"], b) * t["context"] * t["batch"]
    return ["做法", "结果"], [["公式：每 token 字节 × 上下文 × 批大小", f"{fmt.grouped(formula)} 字节"],
                             ["造出全部 K、V 数组，逐个数元素", f"{fmt.grouped(counted)} 个元素"],
                             ["元素数 × 每元素字节", f"{fmt.grouped(counted * b)} 字节"],
                             ["两者一致", "是" if counted * b == formula else "否"]]


CHECK_NS, CHECK_D = [1, 2, 3, 4, 5], 2  # the score-table check: lengths, and the width of each Q and K


def table_check(ns: list[int] = CHECK_NS, d: int = CHECK_D) -> tuple[list[str], list[list[str]]]:
    """For each n: n² against the cells of a score table really computed, n(n−1)/2 against a visibility table."""
    rows = []
    for n in att.as_list(ns, "ns"):
        q = [[float(i)] + [1.0] * (d - 1) for i in range(n)]  # (n, d)
        scores, visible = att.scaled_scores(q, q), att.visibility(n, n)  # (n, n) each
        c = costs.score_costs(n, head_dim=d)
        rows.append([fmt.count(x) for x in (n, c["entries"], costs.count_elements(scores), c["forbidden"],
                                            sum(not x for row in visible for x in row))])
    return ["n", "公式 n²", "分数表里数出的格子", "公式 n(n−1)/2", "可见性表里数出的禁止格"], rows


# -- 用合成计时检验拟合 -------------------------------------------------------------------------------
# Each law is t = coefficient × n^power; the fitted slope must be exactly power. A noisy law multiplies
# the lengths in turn by its factors. Three factors a round: with 1.1 and 0.9 alternating, the errors
# over five lengths are symmetric and leave the slope exactly as it was, which would test nothing.
FIT_NS = costs.TIMING["ns"]
SYNTHETIC_LAWS = [
    {"coefficient": 3e-9, "power": 2, "noise": ()},
    {"coefficient": 2e-6, "power": 1, "noise": ()},
    {"coefficient": 1e-10, "power": 3, "noise": ()},
    {"coefficient": 3e-9, "power": 2, "noise": (1.1, 0.9, 1.0)},
]


def check_law(law: object) -> dict:
    """A synthetic law: positive ``coefficient``, finite ``power``, a list of positive ``noise`` factors."""
    if not isinstance(law, dict) or not {"coefficient", "power", "noise"} <= set(law):
        raise ValueError(f"law 必须是含 coefficient、power、noise 三项的字典，收到 {law!r}")
    noise = [(f, f"law['noise'][{i}]") for i, f in enumerate(att.as_list(law["noise"], "law['noise']"))]
    for x, name, kind in ((law["coefficient"], "law['coefficient']", "正数"),
                          (law["power"], "law['power']", "实数"), *((f, n, "正数") for f, n in noise)):
        if not (math.isfinite(att.real(x, name)) and (x > 0 or kind == "实数")):
            raise ValueError(f"{name} 必须是有限的{kind}，收到 {x!r}")
    return law


def synthetic_seconds(ns: list[float], law: dict) -> list[float]:
    """Timings made by a law: ``coefficient × n**power``, multiplied in turn by the ``noise`` factors."""
    m = check_law(law)
    noise = list(m["noise"]) or [1.0]
    try:
        seconds = [m["coefficient"] * att.real(n, f"ns[{i}]") ** m["power"] * noise[i % len(noise)]
                   for i, n in enumerate(att.as_list(ns, "ns"))]
    except (OverflowError, ZeroDivisionError):
        seconds = [math.inf]
    if not all(isinstance(t, float) and math.isfinite(t) and t > 0 for t in seconds):
        raise ValueError(f"law 造出的时间不是有限的正数：{law!r}")
    return seconds


def law_formula(law: dict) -> str:
    """A law in LaTeX (without ``$``): the coefficient as mantissa × a power of ten, six digits at most."""
    m = check_law(law)
    mantissa, _, exponent = f"{m['coefficient']:.5e}".partition("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"t = {mantissa} \\times 10^{{{int(exponent)}}} \\, n^{{{m['power']:.6g}}}"


def law_label(law: dict) -> str:
    """A row name of the fit table: the formula as inline maths, and the noise factors if any."""
    m = check_law(law)
    return f"${law_formula(m)}$" + (f"，依次轮流乘以 {listing(list(m['noise']))}" if m["noise"] else "")


def fit_check(ns: list[int] = FIT_NS, laws: list[dict] = SYNTHETIC_LAWS) -> dict:
    """Each law's fitted slope, the fit table, and how far the noisy slopes moved (the noiseless must not)."""
    fitted = [costs.fit_slope(ns, synthetic_seconds(ns, law))[0] for law in laws]
    exact = [abs(s - law["power"]) for law, s in zip(laws, fitted) if not law["noise"]]
    noisy = [abs(s - law["power"]) for law, s in zip(laws, fitted) if law["noise"]]
    if not exact or not noisy or max(exact) > 1e-9:
        raise ValueError(f"合成计时应当既有不带噪声的（斜率恰是指数），也有带噪声的：{laws}，{fitted}")
    table = (["合成计时", "指数", "拟合斜率"],
             [[law_label(law), fmt.short(law["power"]), fmt.ratio(s)] for law, s in zip(laws, fitted)])
    return {"slopes": fitted, "table": table, "noise_gap": fmt.ratio(max(noisy))}


# -- 实测 ---------------------------------------------------------------------------------------------
TIMING = costs.TIMING  # the page's measurement: the settings a reader's own run uses too


def timing_table(timed: list[dict]) -> tuple[list[str], list[list[str]]]:
    """The measured medians in milliseconds, and each one over the one before."""
    return ["n", "计时次数", "中位数（毫秒）", "与上一行之比"], [
        [fmt.count(r["n"]), fmt.count(r["runs"]), fmt.ms(r["median"]),
         "—" if i == 0 else fmt.ratio(r["median"] / timed[i - 1]["median"])] for i, r in enumerate(timed)]


# The wording the measurement decides: whether the local slopes agree with the fitted one, and where
# the fitted slope lies against 2 (the page says, once, why a slope may come out low or high).
STEADY, UNEVEN = "与拟合斜率一致", "并不整齐：单看某一个比值说明不了什么"
VERDICTS = {"near": "与分数表格子数的 n² 增长相符", "low": "明显低于 2", "high": "明显高于 2"}


def ratios_sentence(timed: list[dict], slope: float) -> str:
    """Read the timing table's last column: each ratio as the slope it implies between two lengths,
    and whether those local slopes stay within 0.25 of the fitted one."""
    rows = att.as_list(timed, "timed")
    if len(rows) < 3:
        raise ValueError(f"timed 至少要有 3 行，才有两个相邻之比可比，收到 {len(rows)} 行")
    s = att.real(slope, "slope")
    ratios = [b["median"] / a["median"] for a, b in zip(rows, rows[1:])]
    local = [math.log(r) / math.log(b["n"] / a["n"]) for r, a, b in zip(ratios, rows, rows[1:])]
    (low, high), (s_low, s_high) = ([fmt.ratio(min(x)), fmt.ratio(max(x))] for x in (ratios, local))
    told = (f"相邻两行之比都是 {low}，折成斜率都是 {s_low}" if low == high
            else f"相邻两行之比在 {low} 到 {high} 之间，折成斜率是 {s_low} 到 {s_high}")
    return f"{told}，{STEADY if max(abs(x - s) for x in local) <= 0.25 else UNEVEN}。"


def slope_sentence(slope: float, *, points: int, cpus: int) -> str:
    """Read a fitted slope against 2 and say what doubling the length does to the time, no wider than
    one measurement of ``points`` lengths on a machine of ``cpus`` logical processors."""
    s = att.real(slope, "slope")
    if not math.isfinite(s) or abs(s) > 100:
        raise ValueError(f"slope 必须是有限的实数（且不过 ±100），收到 {slope!r}")
    points, cpus = att.check_count(points, "points", minimum=2), att.check_count(cpus, "cpus")
    verdict = VERDICTS["near" if abs(s - 2) <= 0.25 else "low" if s < 2 else "high"]
    return (f"拟合斜率是 {fmt.ratio(s)}，{verdict}：长度每翻一倍，时间约变为 {fmt.multiple(2**s)} 倍。"
            f"这只是一次构建、{fmt.count(points)} 个长度、一台 {fmt.count(cpus)} 个逻辑处理器的机器上的结果。")


# The figure's words are Chinese, set in Noto Sans CJK SC (Debian: fonts-noto-cjk, which the PDF edition
# needs too); Latin letters and digits come from DejaVu Sans, matplotlib's own font, first in the list.
FIGURE_FONT = "Noto Sans CJK SC"


def figure_fonts() -> list[str]:
    """The font list of a figure's text (the training page's too); a clear error without the font."""
    from matplotlib import font_manager

    try:
        font_manager.findfont(font_manager.FontProperties(family=FIGURE_FONT), fallback_to_default=False)
    except ValueError:
        raise ValueError(f"图里的中文要用字体 {FIGURE_FONT}：请安装 Debian 的 fonts-noto-cjk") from None
    return ["DejaVu Sans", FIGURE_FONT]


def scaling_figure(ns: list[int], seconds: list[float]):
    """Log-log plot: the measured medians, the fitted line and its slope, and a slope-2 reference.
    Every word on it is Chinese; no mathtext, whose fonts have no Chinese glyphs."""
    from matplotlib.figure import Figure  # a Figure, not pyplot: no global list of figures to close

    fonts = {"family": figure_fonts()}
    slope, c = costs.fit_slope(ns, seconds)
    fig = Figure(figsize=(6.0, 3.6))
    ax = fig.subplots()
    ax.loglog(ns, seconds, "o", color="#1f5fa8", label="实测（中位数）")
    ends = [min(ns), max(ns)]
    ax.loglog(ends, [math.exp(c) * n**slope for n in ends], "-", color="#c0392b",
              label=f"最小二乘拟合：斜率 = {fmt.ratio(slope)}")
    # The reference has slope exactly 2 (t ∝ n²) through the fitted line's middle: only the tilt compares.
    mid = math.exp(statistics.fmean(math.log(n) for n in ends))
    at_mid = math.exp(c) * mid**slope
    ax.loglog(ends, [at_mid * (n / mid) ** 2 for n in ends], "--", color="#7f7f7f", label="参照：斜率 = 2（t ∝ n²）")
    ax.set_xlabel("序列长度 n", fontdict=fonts)
    ax.set_ylabel("每次调用耗时的中位数（秒）", fontdict=fonts)
    ax.set_xticks(ns, [fmt.count(n) for n in ns], minor=False)
    ax.minorticks_off()
    for label in (*ax.get_xticklabels(), *ax.get_yticklabels()):
        label.set_fontfamily(fonts["family"])
    ax.set_title("构建时在构建机上实测的 numpy 因果注意力（不是任何产品的性能测试）", fontdict={**fonts, "fontsize": 9})
    ax.legend(loc="upper left", prop={**fonts, "size": 9})
    ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    return fig


# -- 练习 ---------------------------------------------------------------------------------------------
def crossover_table(model: dict = ex.EX_MODEL) -> tuple[list[str], list[list[str]]]:
    """Exercise 1: one layer's score table against the whole cache, just below and at the crossover."""
    m, first = model, ex.table_beats_cache(model)["first"]
    per = 2 * m["layers"] * m["kv_heads"] * m["head_dim"]
    rows = [[fmt.count(n), f"{put_in(m['heads'], n)}²", fmt.grouped(m["heads"] * n * n),
             f"{put_in(per, n)}", fmt.grouped(per * n), "是" if m["heads"] * n > per else "否"]
            for n in (first - 1, first)]
    return ["n", "分数表：h × n²", "格数", "缓存：2·L·h_kv·d × n", "个数", "分数表更多"], rows


def kv_plan_table(plans: list[dict], model: dict = ex.EX_MODEL) -> tuple[list[str], list[list[str]]]:
    """Exercise 2: each way of storing the cache, with the formula put in."""
    header = ["做法", "每 token：2 × L × h_kv × d × b", "每 token",
              f"× 上下文 {fmt.count(ex.KV_CONTEXT)} × 批大小 {fmt.count(ex.KV_BATCH)}", "换成二进制单位"]
    return header, [[p["name"], f"2 × {put_in(model['layers'], p['kv_heads'], model['head_dim'], p['bytes'])}",
                     f"{fmt.grouped(p['per_token'])} 字节", f"{fmt.grouped(p['total'])} 字节", fmt.size(p["total"])]
                    for p in plans]


def kv_ratios(plans: list[dict]) -> dict:
    """Exercise 2's two ratios: full multi-head over grouped, 16 bits over 8 bits."""
    grouped, full, low = (p["total"] for p in att.as_list(plans, "plans"))
    return {"mha": times(full / grouped), "bits": times(grouped / low)}


def window_table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    """Exercise 3: positions stored and bytes with the window, against without it."""
    return ["上下文", "缓存的位置数", "有窗口", "无窗口", "省下"], [
        [fmt.count(r["context"]), fmt.count(r["positions"]), fmt.size(r["windowed"]), fmt.size(r["full"]),
         share(r["full"] - r["windowed"], r["full"])] for r in rows]


# -- what each section of the page glues (``page.glue_all(page.<section>())``) ----------------------
def score_values(ns: list[int] = costs.SCORE_NS) -> dict:
    """分数表：n² 个格子: the inputs, the table, how it grows, and the largest row for the mask section."""
    rows = score_rows(ns)
    inputs = {"batch": costs.SCORE_BATCH, "heads": costs.SCORE_HEADS, "d": costs.SCORE_HEAD_DIM, "bytes": costs.SCORE_BYTES}
    last = rows[-1]  # the largest table, for the section on the causal mask
    return {**_counts(inputs, "sc_"), "sc_ns": listing(ns), "tbl_scores": score_table(rows),
            **{f"sc_{key}": value for key, value in growth(rows).items()}, "mis_n": fmt.count(last["n"]),
            "mis_share": share(last["forbidden"], last["entries"]), "mis_entries": fmt.grouped(last["entries"]),
            "mis_madds": fmt.grouped(last["qk_madds"])}


def kv_values(models: list[dict] = costs.MODELS, context: int = costs.CONTEXT, batch: int = costs.BATCH) -> dict:
    """KV 缓存: the inputs, the configurations, the cache per model and the two rankings."""
    rows = kv_rows(models, context, batch)
    at_context, at_max = kv_comparisons(rows, context, batch)
    return {
        **_counts({"context": context, "batch": batch, "fp16": costs.FLOAT16_BYTES, "int8": costs.INT8_BYTES,
                   "int8_bits": 8 * costs.INT8_BYTES, "bits": 8 * costs.FLOAT16_BYTES}, "kv_"),
        "tbl_configs": configs_table(models), "sliding": fmt.Md(sliding_sentence(models)),
        "tbl_kv": kv_table(rows, context), "kv_compare": fmt.Md(at_context), "kv_compare_max": fmt.Md(at_max),
        "fp16_over_int8": times(costs.FLOAT16_BYTES / costs.INT8_BYTES),  # the formula changes only b
    }


def misreading_values(models: list[dict] = costs.MODELS) -> dict:
    """可能的代价与误解: the query heads, in a sentence."""
    return {"mis_heads": fmt.Md(query_heads_sentence(models))}


def count_check_values(tiny: dict = costs.TINY) -> dict:
    """公式对照直接计数: the tiny cache both ways, the score tables counted, the wrong versions kept."""
    return {
        **_counts({key: tiny[key] for key in ("layers", "kv_heads", "head_dim", "context", "batch")}, "tiny_"),
        "tbl_tiny": tiny_table(tiny), "check_ns": listing(CHECK_NS), "check_d": fmt.count(CHECK_D),
        "tbl_table_check": table_check(CHECK_NS, CHECK_D), "wrong_count": fmt.count(len(costs.WRONG_VERSIONS)),
        "wrong_names": "；".join(costs.WRONG_VERSIONS),
    }


def fit_values(ns: list[int] = FIT_NS, laws: list[dict] = SYNTHETIC_LAWS) -> dict:
    """用合成计时检验拟合: the synthetic laws and the slopes the fit finds."""
    fit = fit_check(ns, laws)
    return {"fit_ns": listing(ns), "fit_noise_gap": fit["noise_gap"], "tbl_fit": fit["table"]}


def timing_values(timing: dict = TIMING) -> dict:
    """实测: time ``numpy_attention`` on this machine now, and write the table, figure and sentences.

    The page must have set the BLAS thread count before numpy was imported (its first cell does).
    """
    import numpy as np

    cpus = os.cpu_count() or 1
    values = {**_counts({key: timing[key] for key in ("d", "seed", "repeats")}, "obs_"),
              "obs_ns": listing(timing["ns"]), "obs_budget": fmt.short(timing["budget"]), "obs_cpus": fmt.count(cpus),
              "obs_python": platform.python_version(), "obs_numpy": np.__version__}
    start = time.perf_counter()
    timed = costs.time_attention(**timing)
    seconds = [row["median"] for row in timed]
    slope, _ = costs.fit_slope(timing["ns"], seconds)
    values["fig_scaling"] = scaling_figure(timing["ns"], seconds)
    values["obs_elapsed"] = fmt.seconds(time.perf_counter() - start)
    return {**values, "tbl_timing": timing_table(timed), "obs_ratios": fmt.Md(ratios_sentence(timed, slope)),
            "obs_sentence": fmt.Md(slope_sentence(slope, points=len(timed), cpus=cpus)), "obs_slope": fmt.ratio(slope)}


def exercise_values() -> dict:
    """The four exercises: inputs and solutions."""
    m, plans, crossing = ex.EX_MODEL, ex.kv_plans(), ex.table_beats_cache()
    ratios = kv_ratios(plans)
    return {
        **_counts({key: m[key] for key in ("layers", "heads", "kv_heads", "head_dim")}, "cx_"),
        **_counts({"context": ex.KV_CONTEXT, "batch": ex.KV_BATCH, "fp16": ex.FLOAT16_BYTES,
                   "int8": ex.INT8_BYTES, "bits": 8 * ex.INT8_BYTES, "window": ex.WINDOW,
                   "threshold": crossing["threshold"], "first": crossing["first"],
                   "per_position": 2 * m["layers"] * m["kv_heads"] * m["head_dim"]}, "cx_"),
        "cx_contexts": listing(ex.WINDOW_CONTEXTS), "cx1_table": crossover_table(m),
        "cx2_table": kv_plan_table(plans, m), "cx2_mha": ratios["mha"], "cx2_bits_ratio": ratios["bits"],
        "cx3_table": window_table(ex.window_rows()),
        "cx4_doctest": fmt.Md(fmt.doctest_block(ex.generation_cells)),
    }
