"""The costs page's book side: one function per section of book/ch02/costs.md, each a page.Section.

The page types each example's inputs ({input} roles naming the teaching files' constants or their
entries, or :data:`CHECK_NS` and :data:`CHECK_D` below); a section glues what the run computes and checks the facts
of the page's fixed sentences with ``Section.holds``. The timing section glues this build's measurement
and the words that measurement decides (:data:`SAY`). The other pages' figures take their fonts from
:func:`figure_fonts`.
"""

from __future__ import annotations

import importlib
import math
import os
import platform
import statistics
import time
from fractions import Fraction

from chapter import fmt
from chapter.page import Col, Section, listing

att = importlib.import_module("02_attention")
costs = importlib.import_module("02_costs")
ex = importlib.import_module("02_exercises_costs")

PAGE = "代价一页"
# The wording a timing decides (it changes from build to build, so it cannot stop the build).
SAY = {
    "steady": "与拟合斜率一致",
    "uneven": "并不整齐：单看某一个比值说明不了什么",
    "near": "与分数表格子数的 n² 增长相符",
    "low": "明显低于 2",
    "high": "明显高于 2",
}
# The page's inputs that no teaching file has (the page types them; tests/test_typed_inputs.py compares).
CHECK_NS = [1, 2, 3, 4, 5]  # the score tables counted cell by cell: their lengths
CHECK_D = 2  # and the width of each Q and K
# Each law is t = coefficient × n^power, the lengths multiplied in turn by its noise factors. Three
# factors: 1.1 and 0.9 alternating over five lengths are symmetric and leave the slope as it was.
SYNTHETIC_LAWS = [
    {"coefficient": 3e-9, "power": 2, "noise": ()},
    {"coefficient": 2e-6, "power": 1, "noise": ()},
    {"coefficient": 1e-10, "power": 3, "noise": ()},
    {"coefficient": 3e-9, "power": 2, "noise": (1.1, 0.9, 1.0)},
]
# The figures' words are Chinese, set in Noto Sans CJK SC (Debian: fonts-noto-cjk, which the PDF needs
# too); Latin letters and digits come from DejaVu Sans, first in the list. Other pages import this list.
FIGURE_FONT = "Noto Sans CJK SC"


def times(ratio: float, verb: str = "") -> str:
    """4 倍, 4.4 倍; after a verb, with 约 in front when the ratio is not whole (it has been rounded)."""
    about = "约" if verb and not float(ratio).is_integer() else ""
    return f"{about}{verb} {fmt.multiple(ratio)} 倍" if verb else f"{fmt.multiple(ratio)} 倍"


def share(part: int, whole: int) -> str:
    """``part ÷ whole`` in percent, never a whole one it is not: 4,294,705,152 of 8,589,934,592 is 49.997%."""
    value = Fraction(100 * part, whole)
    for digits in range(fmt.DECIMALS["percent"][0], 16):
        shown = round(value, digits)
        if shown == value or shown.denominator != 1:  # exact, or not a whole percentage
            break
    return fmt.fmt(float(value), digits) + "%"


def numbers(values) -> str:
    """Inputs as the prose lists them: 1024、4096、16,384 (whole numbers as counts)."""
    return listing(fmt.count(x) if isinstance(x, int) else fmt.short(x) for x in values)


def ranking(rows: list[dict], key: str) -> dict:
    """The smallest and the largest cache of ``rows[...][key]`` (names, sizes) and how many times larger."""
    sizes = [r[key] for r in rows]
    low = min(sizes)
    high = max(sizes)

    def named(size: int) -> str:  # 甲、乙与丙
        found = [r["model"]["name"] for r in rows if r[key] == size]
        return "、".join(found[:-1]) + "与" + found[-1] if len(found) > 1 else found[0]

    return {
        "small": named(low),
        "small_size": fmt.size(low),
        "large": named(high),
        "large_size": fmt.size(high),
        "ratio": times(high / low, "是最小者的"),
    }


def synthetic_seconds(ns: list[float], law: dict) -> list[float]:
    """Timings made by a law: ``coefficient × n**power``, multiplied in turn by the ``noise`` factors."""
    noise = list(law["noise"]) or [1.0]
    return [
        law["coefficient"] * n ** law["power"] * noise[i % len(noise)] for i, n in enumerate(ns)
    ]


def law_formula(law: dict) -> str:
    """A law in LaTeX (without ``$``): the coefficient as mantissa × a power of ten, six digits at most."""
    mantissa, _, exponent = f"{law['coefficient']:.5e}".partition("e")
    return f"t = {mantissa.rstrip('0').rstrip('.')} \\times 10^{{{int(exponent)}}} \\, n^{{{law['power']:.6g}}}"


def figure_fonts() -> list[str]:
    """The font list of a figure's text (the other pages' figures too); a clear error without the font."""
    from matplotlib import font_manager

    try:
        font_manager.findfont(
            font_manager.FontProperties(family=FIGURE_FONT), fallback_to_default=False
        )
    except ValueError:
        raise ValueError(
            f"图里的中文要用字体 {FIGURE_FONT}：请安装 Debian 的 fonts-noto-cjk"
        ) from None
    return ["DejaVu Sans", FIGURE_FONT]


def timing_facts(timed: list[dict]) -> dict:
    """What the timing table says: the ratio of each median to the one before, as the table shows them
    (so a reader who divides the shown medians gets the shown ratio), each as a local slope, and how the
    fitted slope reads: ``near`` 2 (within 0.25), ``low`` or ``high``; ``steady`` when every local slope is
    within 0.25 of the fitted one."""
    ns = [r["n"] for r in timed]
    shown = [fmt.printed(fmt.ms(r["median"])) for r in timed]
    slope, _ = costs.fit_slope(ns, [r["median"] for r in timed])
    ratios = [b / a for a, b in zip(shown, shown[1:])]
    local = [math.log(r) / math.log(b / a) for r, a, b in zip(ratios, ns, ns[1:])]
    return {
        "ratios": ratios,
        "local": local,
        "slope": slope,
        "steady": max(abs(x - slope) for x in local) <= 0.25,
        "verdict": "near" if abs(slope - 2) <= 0.25 else "low" if slope < 2 else "high",
    }


def scaling_figure(timed: list[dict]):
    """The log-log plot of a timing: the medians, the least-squares line, and a reference of slope 2."""
    from matplotlib.figure import Figure  # not pyplot: no global list of figures to close

    ns = [r["n"] for r in timed]
    seconds = [r["median"] for r in timed]
    fonts = {"family": figure_fonts()}
    slope, c = costs.fit_slope(ns, seconds)
    fig = Figure(figsize=(6.0, 3.6))
    ax = fig.subplots()
    ax.loglog(ns, seconds, "o", color="#1f5fa8", label="实测（中位数）")
    ends = [min(ns), max(ns)]
    ax.loglog(
        ends,
        [math.exp(c) * n**slope for n in ends],
        "-",
        color="#c0392b",
        label=f"最小二乘拟合：斜率 = {fmt.ratio(slope)}",
    )
    # The reference has slope exactly 2 through the fitted line's middle: only the tilt compares.
    mid = math.exp(statistics.fmean(math.log(n) for n in ends))
    ax.loglog(
        ends,
        [math.exp(c) * mid**slope * (n / mid) ** 2 for n in ends],
        "--",
        color="#7f7f7f",
        label="参照：斜率 = 2（t ∝ n²）",
    )
    ax.set_xlabel("序列长度 n", fontdict=fonts)
    ax.set_ylabel("每次调用耗时的中位数（秒）", fontdict=fonts)
    ax.set_xticks(ns, [fmt.count(n) for n in ns], minor=False)
    ax.minorticks_off()
    for label in (*ax.get_xticklabels(), *ax.get_yticklabels()):
        label.set_fontfamily(fonts["family"])
    ax.set_title(
        "构建时在构建机上实测的 numpy 因果注意力（不是任何产品的性能测试）",
        fontdict={**fonts, "fontsize": 9},
    )
    ax.legend(loc="upper left", prop={**fonts, "size": 9})
    ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    return fig


def measured(s: Section, timed: list[dict]) -> None:
    """A timing's table, its ratios as local slopes, the fitted slope against 2, and the log-log plot."""
    facts = timing_facts(timed)
    ratios = ["—"] + [fmt.ratio(x) for x in facts["ratios"]]
    s.table(
        "tbl_timing",
        zip(timed, ratios),
        Col("n", lambda r: r[0]["n"], "count"),
        Col("计时次数", lambda r: r[0]["runs"], "count"),
        Col("中位数（毫秒）", lambda r: r[0]["median"], "ms"),
        Col("与上一行之比", lambda r: r[1], "text"),
    )
    s.value(
        "ratio",
        obs_ratio_low=min(facts["ratios"]),
        obs_ratio_high=max(facts["ratios"]),
        obs_local_low=min(facts["local"]),
        obs_local_high=max(facts["local"]),
    )
    s.text(obs_steady=SAY["steady" if facts["steady"] else "uneven"])
    s.value("ratio", obs_slope=facts["slope"])
    s.text(obs_verdict=SAY[facts["verdict"]])
    s.value("multiple", obs_doubling=2 ** facts["slope"])
    s.value("count", obs_points=len(timed))
    s.figure("fig_scaling", scaling_figure(timed))


# -- the page's sections, in its order -------------------------------------------------------------------
def scores() -> Section:
    """The score table at each of SCORE_NS, how every count grows (one ratio), the largest length's share."""
    s = Section(PAGE, "分数表：n² 个格子")
    rows = [
        {
            "n": n,
            **costs.score_costs(
                n,
                costs.SCORE_HEAD_DIM,
                costs.SCORE_HEADS,
                costs.SCORE_BYTES,
                batch=costs.SCORE_BATCH,
            ),
        }
        for n in costs.SCORE_NS
    ]
    first = rows[0]
    second = rows[1]
    last = rows[-1]
    ratios = {second[key] / first[key] for key in ("entries", "bytes", "qk_madds", "mix_madds")}
    growth = second["entries"] / first["entries"]
    forbidden = second["forbidden"] / first["forbidden"]
    s.holds(
        every_count_grows_alike=len(ratios) == 1,
        # n(n − 1)/2 = n²/2 − n/2: the page says the forbidden cells grow a little faster
        forbidden_cells_grow_a_little_faster=forbidden > growth,
    )
    s.text(sc_ns=numbers(costs.SCORE_NS))
    s.table(
        "tbl_scores",
        rows,
        Col("序列长度 n", lambda r: r["n"], "count"),
        Col("分数表格子数", lambda r: fmt.grouped(r["entries"]), "text"),
        Col("字节（float32）", lambda r: r["bytes"], "size"),
        Col(
            "因果禁止的格子（占比）",
            lambda r: f"{fmt.grouped(r['forbidden'])}（{share(r['forbidden'], r['entries'])}）",
            "text",
        ),
        Col("乘加：算分数、混合 V 各", lambda r: fmt.grouped(r["qk_madds"]), "text"),
    )
    s.value("count", sc_n0=first["n"], sc_n1=second["n"], mis_n=last["n"])
    s.text(
        sc_n_ratio=times(second["n"] / first["n"]),
        sc_growth=times(growth),
        sc_forbidden_growth=f"{fmt.ratio(forbidden)} 倍",
        mis_share=share(last["forbidden"], last["entries"]),
        mis_entries=fmt.grouped(last["entries"]),
        mis_madds=fmt.grouped(last["qk_madds"]),
    )
    return s


def kv_cache() -> Section:
    """The configurations (each model's L, h_kv and d_head, the inputs of the KV table), each model's cache
    (16 bits unless said), two rankings, the first two models with as many query heads and other K/V heads.
    """
    s = Section(PAGE, "KV 缓存：每个 token 存多少字节")
    models = costs.MODELS
    context = costs.CONTEXT
    batch = costs.BATCH
    b = costs.FLOAT16_BYTES
    b8 = costs.INT8_BYTES
    bits = f"{8 * b} 位"
    bits_8 = f"{8 * b8} 位"
    c = fmt.count(context)
    # the box: 16 位（各自发布的 dtype）；“同宽全多头”一列取 h_kv = h
    s.holds(
        published_dtypes_are_16_bit=all(m["dtype"] in ("float16", "bfloat16") for m in models),
        full_mha_has_a_kv_head_per_query_head=all(
            costs.full_mha(m)["kv_heads"] == m["heads"] for m in models
        ),
    )
    s.value("count", kv_bits=8 * b, kv_int8_bits=8 * b8)

    def window(m):
        if not m.get("sliding_window"):
            return "—"
        off = "（未启用）" if m.get("use_sliding_window") is False else ""
        return fmt.count(m["sliding_window"]) + off

    s.table(
        "tbl_configs",
        models,
        Col("模型", lambda m: m["name"], "text"),
        Col("层数 $L$", lambda m: m["layers"], "count"),
        Col("查询头 $h$", lambda m: m["heads"], "count"),
        Col("K/V 头 $h_{kv}$", lambda m: m["kv_heads"], "count"),
        Col("头维度 $d_{\\text{head}}$", lambda m: m["head_dim"], "count"),
        Col("最大位置数", lambda m: m["max_positions"], "count"),
        Col("滑动窗口", window, "text"),
        Col("发布的 dtype", lambda m: m["dtype"], "text"),
    )
    rows = [
        {
            "model": m,
            "per_token": costs.kv_cache_bytes(m, 1, 1, b),
            "at_context": costs.kv_cache_bytes(m, context, batch, b),
            "at_context_8": costs.kv_cache_bytes(m, context, batch, b8),
            "as_mha": costs.kv_cache_bytes(costs.full_mha(m), context, batch, b),
            "at_max": costs.kv_cache_bytes(m, m["max_positions"], batch, b),
        }
        for m in models
    ]

    def saving(m):
        return times(m["heads"] // m["kv_heads"]) if m["heads"] > m["kv_heads"] else "不分组"

    s.table(
        "tbl_kv",
        rows,
        Col("模型", lambda r: r["model"]["name"], "text"),
        Col(f"每 token（{bits}）", lambda r: r["per_token"], "size"),
        Col(f"上下文 {c}（{bits}）", lambda r: r["at_context"], "size"),
        Col(f"上下文 {c}（{bits_8}）", lambda r: r["at_context_8"], "size"),
        Col(f"同宽全多头（{bits}）", lambda r: r["as_mha"], "size"),
        Col("分组省下", lambda r: saving(r["model"]), "text"),
        Col(f"最大位置数下（{bits}，计入滑动窗口）", lambda r: r["at_max"], "size"),
    )
    s.text(**{f"kv_{k}": v for k, v in ranking(rows, "at_context").items()})
    s.text(**{f"kv_max_{k}": v for k, v in ranking(rows, "at_max").items()})
    s.text(fp16_over_int8=times(b / b8))  # the formula changes only b
    qa, qb = next(
        (a, b)
        for i, a in enumerate(models)
        for b in models[i + 1 :]
        if a["heads"] == b["heads"] and a["kv_heads"] != b["kv_heads"]
    )
    per_a = costs.kv_cache_bytes(qa, 1)
    per_b = costs.kv_cache_bytes(qb, 1)
    s.text(mis_a=qa["name"], mis_b=qb["name"])
    s.value("count", mis_heads=qa["heads"], mis_kv_a=qa["kv_heads"], mis_kv_b=qb["kv_heads"])
    s.value("size", mis_per_a=per_a, mis_per_b=per_b)
    s.text(mis_ratio=times(max(per_a, per_b) / min(per_a, per_b), "相差"))
    return s


def windows() -> Section:
    """The two configurations the page names for their sliding_window: the one that uses it (and so is
    the one model whose cache stops growing before its maximum positions) and the one that writes it
    switched off."""
    s = Section(PAGE, "深入：滑动窗口、8 位与配置里的头维度")
    models = costs.MODELS
    written = [m for m in models if m.get("sliding_window")]
    on = [m for m in written if m.get("use_sliding_window") is not False]
    off = [m for m in written if m.get("use_sliding_window") is False]
    capped = [
        m for m in models if costs.cached_positions(m, m["max_positions"]) < m["max_positions"]
    ]
    s.holds(
        one_config_uses_a_window=len(on) == 1,
        one_config_writes_use_sliding_window_false=len(off) == 1,
        the_others_write_no_window=len(written) == 2,
        only_the_windowed_cache_is_capped=capped == on,
    )
    s.text(win_on=on[0]["name"], win_off=off[0]["name"])
    s.value("count", win_on_w=on[0]["sliding_window"], win_off_w=off[0]["sliding_window"])
    return s


def head_dim() -> Section:
    """A configuration whose head_dim is not hidden ÷ heads: the cache per token both ways, and how much
    the guess leaves out (the page: "头维度就是 hidden ÷ heads" is a misconception)."""
    s = Section(PAGE, "“头维度就是 hidden ÷ heads”")
    model = costs.GEMMA_7B
    b = costs.FLOAT16_BYTES
    guess = model["hidden"] // model["heads"]
    s.holds(
        head_dim_is_not_hidden_over_heads=model["hidden"] % model["heads"] == 0
        and guess != model["head_dim"]
    )
    wrong = costs.kv_bytes_per_token(model["layers"], model["kv_heads"], guess, b)
    right = costs.kv_bytes_per_token(model["layers"], model["kv_heads"], model["head_dim"], b)
    s.text(hd_name=model["name"])
    s.value("count", hd_guess=guess)
    s.value("size", hd_wrong=wrong, hd_right=right)
    s.text(hd_short=share(right - wrong, right))
    return s


def count_check() -> Section:
    """Formulas against what is built and counted; each synthetic law's fitted slope (noiseless: exact)."""
    s = Section(PAGE, "如何判断是否做对")
    tiny = costs.TINY
    ns = costs.TIMING["ns"]
    fitted = [costs.fit_slope(ns, synthetic_seconds(ns, law))[0] for law in SYNTHETIC_LAWS]
    off = [(bool(law["noise"]), abs(x - law["power"])) for law, x in zip(SYNTHETIC_LAWS, fitted)]
    b = costs.FLOAT16_BYTES
    counted = costs.count_elements(costs.build_kv_cache(**tiny))
    per_token = costs.kv_bytes_per_token(tiny["layers"], tiny["kv_heads"], tiny["head_dim"], b)
    formula = per_token * tiny["context"] * tiny["batch"]
    s.holds(
        noiseless_slopes_are_the_powers=max(gap for noisy, gap in off if not noisy) <= 1e-9,
        some_synthetic_timing_is_noisy=any(noisy for noisy, _ in off),
        formula_agrees_with_the_count=counted * b == formula,
    )
    s.text(
        tiny_formula=fmt.grouped(formula),
        tiny_elements=fmt.grouped(counted),
        tiny_bytes=fmt.grouped(counted * b),
    )

    def counts(n):
        q = [[float(i)] + [1.0] * (CHECK_D - 1) for i in range(n)]  # (n, d)
        c = costs.score_costs(n, head_dim=CHECK_D)
        visible = att.visibility(n, n)
        return [
            n,
            c["entries"],
            costs.count_elements(att.scaled_scores(q, q)),
            c["forbidden"],
            sum(not x for row in visible for x in row),
        ]

    checked = [counts(n) for n in CHECK_NS]
    headers = ["n", "公式 n²", "分数表里数出的格子", "公式 n(n−1)/2", "可见性表里数出的禁止格"]
    s.table(
        "tbl_table_check",
        checked,
        *[Col(h, lambda r, i=i: r[i], "count") for i, h in enumerate(headers)],
    )
    s.value("count", wrong_count=len(costs.WRONG_VERSIONS))
    s.text(wrong_names="；".join(costs.WRONG_VERSIONS))
    s.value("ratio", fit_noise_gap=max(gap for noisy, gap in off if noisy))

    def law_cell(law):
        noise = f"，依次轮流乘以 {numbers(law['noise'])}" if law["noise"] else ""
        return f"${law_formula(law)}$" + noise

    s.table(
        "tbl_fit",
        zip(SYNTHETIC_LAWS, fitted),
        Col("合成计时", lambda r: law_cell(r[0]), "text"),
        Col("指数", lambda r: r[0]["power"], "short"),
        Col("拟合斜率", lambda r: r[1], "ratio"),
    )
    return s


def timing() -> Section:
    """Time ``numpy_attention`` here and now (the page's first cell set one BLAS thread before numpy)."""
    import numpy as np

    s = Section(PAGE, "怎样观察与验证")
    start = time.perf_counter()
    measured(s, costs.time_attention(**costs.TIMING))
    s.value("count", obs_cpus=os.cpu_count() or 1)
    s.text(obs_python=platform.python_version(), obs_numpy=np.__version__)
    s.value("seconds", obs_elapsed=time.perf_counter() - start)
    return s


def run_output() -> Section:
    """What running 02_costs.py prints."""
    s = Section(PAGE, "运行结果示例")
    s.md(run_output=fmt.run_output("02_costs.py"))
    return s


def exercises() -> Section:
    """The four exercises' inputs and solutions."""
    s = Section(PAGE, "练习")
    m = ex.EX_MODEL
    plans = ex.kv_plans()
    crossing = ex.table_beats_cache()
    grouped, full, low = (p["total"] for p in plans)
    per = 2 * m["layers"] * m["kv_heads"] * m["head_dim"]
    first = crossing["first"]

    def put_in(*ns):  # 3 × 2 × 6
        return " × ".join(fmt.count(n) for n in ns)

    # The calculations the solutions write out: per-position count ÷ heads, and the bytes per token and
    # in all as products of the configuration (the tables' other products are computed from their cells).
    s.holds(
        threshold_is_per_position_over_heads=crossing["threshold"] * m["heads"] == per,
        table_outgrows_the_cache_from_first=m["heads"] * (first - 1) <= per < m["heads"] * first,
        per_token_is_the_written_product=all(
            p["per_token"] == 2 * m["layers"] * p["kv_heads"] * m["head_dim"] * p["bytes"]
            for p in plans
        ),
        total_is_per_token_times_context_and_batch=all(
            p["total"] == p["per_token"] * ex.KV_CONTEXT * ex.KV_BATCH for p in plans
        ),
    )
    s.value("count", cx_threshold=crossing["threshold"], cx_first=first, cx_per_position=per)
    s.table(
        "cx1_table",
        (first - 1, first),
        Col("n", lambda n: n, "count"),
        Col("分数表：h × n²", lambda n: f"{put_in(m['heads'], n)}²", "text"),
        Col("格数", lambda n: fmt.grouped(m["heads"] * n * n), "text"),
        Col("缓存：2·L·h_kv·d × n", lambda n: put_in(per, n), "text"),
        Col("个数", lambda n: fmt.grouped(per * n), "text"),
        Col("分数表更多", lambda n: "是" if m["heads"] * n > per else "否", "text"),
    )
    s.table(
        "cx2_table",
        plans,
        Col("做法", lambda p: p["name"], "text"),
        Col(
            "每 token：2 × L × h_kv × d × b",
            lambda p: "2 × " + put_in(m["layers"], p["kv_heads"], m["head_dim"], p["bytes"]),
            "text",
        ),
        Col("每 token", lambda p: f"{fmt.grouped(p['per_token'])} 字节", "text"),
        Col(
            f"× 上下文 {fmt.count(ex.KV_CONTEXT)} × 批大小 {fmt.count(ex.KV_BATCH)}",
            lambda p: f"{fmt.grouped(p['total'])} 字节",
            "text",
        ),
        Col("换成二进制单位", lambda p: p["total"], "size"),
    )
    s.text(cx2_mha=times(full / grouped), cx2_bits_ratio=times(grouped / low))
    s.table(
        "cx3_table",
        ex.window_rows(),
        Col("上下文", lambda r: r["context"], "count"),
        Col("缓存的位置数", lambda r: r["positions"], "count"),
        Col("有窗口", lambda r: r["windowed"], "size"),
        Col("无窗口", lambda r: r["full"], "size"),
        Col("省下", lambda r: share(r["full"] - r["windowed"], r["full"]), "text"),
    )
    s.md(cx4_doctest=fmt.doctest_block(ex.generation_cells))
    return s
