"""The costs page (代价与规模): what each section glues, from ``code/02_costs.py``, and its figure."""

from __future__ import annotations

import importlib
import math
import os
import platform
import statistics
import time
from fractions import Fraction

from chapter import fmt
from chapter.fmt import Md, Table, glue_all  # noqa: F401 (the page calls page.glue_all)

att = importlib.import_module("02_attention")
costs = importlib.import_module("02_costs")
ex = importlib.import_module("02_exercises_costs")

# -- the wording a timing decides (it changes from build to build, so it cannot stop the build) ------
SAY = {
    "steady": "与拟合斜率一致",
    "uneven": "并不整齐：单看某一个比值说明不了什么",
    "near": "与分数表格子数的 n² 增长相符",
    "low": "明显低于 2",
    "high": "明显高于 2",
}
PAGE = "代价一页"  # how fmt.holds names this page when a fixed sentence no longer holds
BITS = f"{8 * costs.FLOAT16_BYTES} 位"
BITS_8 = f"{8 * costs.INT8_BYTES} 位"
CHECK_NS = [1, 2, 3, 4, 5]
CHECK_D = 2  # the score-table check: lengths, and the width of each Q and K


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


def listing(values: list) -> str:  # inputs as the prose lists them: 1024、4096、16,384
    return "、".join(fmt.count(x) if isinstance(x, int) else fmt.short(x) for x in values)


def counts(
    prefix: str, **values: int
) -> dict:  # an input box's whole numbers, glued as prefix + key
    return {prefix + key: fmt.count(n) for key, n in values.items()}


def score_values(ns: list[int] = costs.SCORE_NS) -> dict:
    """The table at each length, how every count grows (one ratio), and the largest length for the mask."""
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
        for n in ns
    ]
    first = rows[0]
    second = rows[1]
    last = rows[-1]
    ratios = {second[key] / first[key] for key in ("entries", "bytes", "qk_madds", "mix_madds")}
    fmt.holds(PAGE, {"格子、字节与乘加都变为同一倍数": len(ratios) == 1})
    growth = ratios.pop()
    forbidden = second["forbidden"] / first["forbidden"]
    # n(n − 1)/2 = n²/2 − n/2: the page says the forbidden cells grow a little faster
    fmt.holds(PAGE, {"禁止的格子比格子数长得略快": forbidden > growth})
    table = Table(
        [
            "序列长度 n",
            "分数表格子数",
            "字节（float32）",
            "因果禁止的格子（占比）",
            "乘加：算分数、混合 V 各",
        ],
        [
            [
                fmt.count(r["n"]),
                fmt.grouped(r["entries"]),
                fmt.size(r["bytes"]),
                f"{fmt.grouped(r['forbidden'])}（{share(r['forbidden'], r['entries'])}）",
                fmt.grouped(r["qk_madds"]),
            ]
            for r in rows
        ],
    )
    return {
        **counts(
            "sc_",
            batch=costs.SCORE_BATCH,
            heads=costs.SCORE_HEADS,
            d=costs.SCORE_HEAD_DIM,
            bytes=costs.SCORE_BYTES,
        ),
        "sc_ns": listing(ns),
        "tbl_scores": table,
        "sc_n0": fmt.count(first["n"]),
        "sc_n1": fmt.count(second["n"]),
        "sc_n_ratio": times(second["n"] / first["n"]),
        "sc_growth": times(growth),
        "sc_forbidden_growth": f"{fmt.ratio(forbidden)} 倍",
        "mis_n": fmt.count(last["n"]),
        "mis_share": share(last["forbidden"], last["entries"]),
        "mis_entries": fmt.grouped(last["entries"]),
        "mis_madds": fmt.grouped(last["qk_madds"]),
    }


def ranking(rows: list[dict], key: str) -> dict:
    """The smallest and the largest cache of ``rows[...][key]`` (names, sizes) and how many times larger."""
    sizes = [r[key] for r in rows]
    low = min(sizes)
    high = max(sizes)
    if low == high:
        raise ValueError(f"各模型的 {key} 一样大：这一句要比较大小不同的缓存")

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


def window_models(models: list[dict] = costs.MODELS) -> dict:
    """The two configurations the page names for their sliding_window: the one that uses it (and so is
    the one model whose cache stops growing before its maximum positions) and the one that writes it
    switched off. A ``ValueError`` names the claim that the configurations no longer bear out."""
    written = [m for m in models if m.get("sliding_window")]
    on = [m for m in written if m.get("use_sliding_window") is not False]
    off = [m for m in written if m.get("use_sliding_window") is False]
    capped = [
        m for m in models if costs.cached_positions(m, m["max_positions"]) < m["max_positions"]
    ]
    claims = {
        "恰有一个配置启用了滑动窗口": len(on) == 1,
        "恰有一个配置写了 sliding_window 却写明 use_sliding_window = false": len(off) == 1,
        "其余配置都没写 sliding_window": len(written) == 2,
        "只有启用窗口的那个模型在最大位置数下缓存封顶": capped == on,
    }
    fmt.holds(PAGE, claims)
    return {
        "win_on": on[0]["name"],
        "win_on_w": fmt.count(on[0]["sliding_window"]),
        "win_off": off[0]["name"],
        "win_off_w": fmt.count(off[0]["sliding_window"]),
    }


def head_dim_values(model: dict = costs.GEMMA_7B, b: int = costs.FLOAT16_BYTES) -> dict:
    """A configuration whose head_dim is not hidden ÷ heads: the cache per token both ways, and how much
    the guess leaves out (the page: "头维度就是 hidden ÷ heads" is a misconception)."""
    guess = model["hidden"] // model["heads"]
    claim = f"{model['name']} 的 head_dim 不是 hidden ÷ heads"
    fmt.holds(PAGE, {claim: model["hidden"] % model["heads"] == 0 and guess != model["head_dim"]})
    wrong = costs.kv_bytes_per_token(model["layers"], model["kv_heads"], guess, b)
    right = costs.kv_bytes_per_token(model["layers"], model["kv_heads"], model["head_dim"], b)
    return {
        "hd_name": model["name"],
        **counts(
            "hd_", **{k: model[k] for k in ("layers", "hidden", "heads", "kv_heads", "head_dim")}
        ),
        "hd_guess": fmt.count(guess),
        "hd_wrong": fmt.size(wrong),
        "hd_right": fmt.size(right),
        "hd_short": share(right - wrong, right),
    }


def kv_values(
    models: list[dict] = costs.MODELS, context: int = costs.CONTEXT, batch: int = costs.BATCH
) -> dict:
    """The configurations (each model's L, h_kv and d_head, the inputs of the KV table), each model's cache
    (16 bits unless said), two rankings, the first two models with as many query heads and other K/V heads.
    """
    b = costs.FLOAT16_BYTES
    b8 = costs.INT8_BYTES
    c = fmt.count(context)
    keys = ("layers", "heads", "kv_heads", "head_dim", "max_positions")

    def off(m):
        return "（未启用）" if m.get("use_sliding_window") is False else ""

    # the box: 16 位（各自发布的 dtype）；“同宽全多头”一列取 h_kv = h
    fmt.holds(
        PAGE,
        {
            "各自发布的 dtype 都是 16 位": all(
                m["dtype"] in ("float16", "bfloat16") for m in models
            ),
            "同宽全多头取 h_kv = h": all(
                costs.full_mha(m)["kv_heads"] == m["heads"] for m in models
            ),
        },
    )
    configs = Table(
        [
            "模型",
            "层数 $L$",
            "查询头 $h$",
            "K/V 头 $h_{kv}$",
            "头维度 $d_{\\text{head}}$",
            "最大位置数",
            "滑动窗口",
            "发布的 dtype",
        ],
        [
            [
                m["name"],
                *(fmt.count(m[key]) for key in keys),
                fmt.count(m["sliding_window"]) + off(m) if m.get("sliding_window") else "—",
                m["dtype"],
            ]
            for m in models
        ],
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

    table = Table(
        [
            "模型",
            f"每 token（{BITS}）",
            f"上下文 {c}（{BITS}）",
            f"上下文 {c}（{BITS_8}）",
            f"同宽全多头（{BITS}）",
            "分组省下",
            f"最大位置数下（{BITS}，计入滑动窗口）",
        ],
        [
            [
                r["model"]["name"],
                *(fmt.size(r[k]) for k in ("per_token", "at_context", "at_context_8", "as_mha")),
                saving(r["model"]),
                fmt.size(r["at_max"]),
            ]
            for r in rows
        ],
    )
    qa, qb = next(
        (a, b)
        for i, a in enumerate(models)
        for b in models[i + 1 :]
        if a["heads"] == b["heads"] and a["kv_heads"] != b["kv_heads"]
    )
    per_a = costs.kv_cache_bytes(qa, 1)
    per_b = costs.kv_cache_bytes(qb, 1)
    return {
        **counts(
            "kv_", context=context, batch=batch, fp16=b, int8=b8, int8_bits=8 * b8, bits=8 * b
        ),
        "tbl_configs": configs,
        "tbl_kv": table,
        **{f"kv_{k}": v for k, v in ranking(rows, "at_context").items()},
        **{f"kv_max_{k}": v for k, v in ranking(rows, "at_max").items()},
        "fp16_over_int8": times(b / b8),  # the formula changes only b
        "mis_a": qa["name"],
        "mis_b": qb["name"],
        "mis_heads": fmt.count(qa["heads"]),
        "mis_kv_a": fmt.count(qa["kv_heads"]),
        "mis_kv_b": fmt.count(qb["kv_heads"]),
        "mis_per_a": fmt.size(per_a),
        "mis_per_b": fmt.size(per_b),
        "mis_ratio": times(max(per_a, per_b) / min(per_a, per_b), "相差"),
    }


# Each law is t = coefficient × n^power, the lengths multiplied in turn by its noise factors. Three
# factors: 1.1 and 0.9 alternating over five lengths are symmetric and leave the slope as it was.
FIT_NS = costs.TIMING["ns"]
SYNTHETIC_LAWS = [
    {"coefficient": 3e-9, "power": 2, "noise": ()},
    {"coefficient": 2e-6, "power": 1, "noise": ()},
    {"coefficient": 1e-10, "power": 3, "noise": ()},
    {"coefficient": 3e-9, "power": 2, "noise": (1.1, 0.9, 1.0)},
]


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


def count_check_values(
    tiny: dict = costs.TINY,
    ns: list[int] = CHECK_NS,
    d: int = CHECK_D,
    laws: list[dict] = SYNTHETIC_LAWS,
) -> dict:
    """Formulas against what is built and counted; each synthetic law's fitted slope (noiseless: exact)."""
    fitted = [costs.fit_slope(FIT_NS, synthetic_seconds(FIT_NS, law))[0] for law in laws]
    off = [(bool(law["noise"]), abs(s - law["power"])) for law, s in zip(laws, fitted)]
    exact = max((gap for noisy, gap in off if not noisy), default=1.0) <= 1e-9
    fmt.holds(
        PAGE,
        {
            "不带噪声的行，拟合斜率恰是指数": exact,
            "合成计时里也有带噪声的行": any(noisy for noisy, _ in off),
        },
    )

    def noise(law):
        return f"，依次轮流乘以 {listing(list(law['noise']))}" if law["noise"] else ""

    b = costs.FLOAT16_BYTES
    counted = costs.count_elements(costs.build_kv_cache(**tiny))
    per_token = costs.kv_bytes_per_token(tiny["layers"], tiny["kv_heads"], tiny["head_dim"], b)
    formula = per_token * tiny["context"] * tiny["batch"]
    fmt.holds(PAGE, {"公式算出的缓存字节与逐个数出的一致": counted * b == formula})
    checked = []
    for n in ns:
        q = [[float(i)] + [1.0] * (d - 1) for i in range(n)]  # (n, d)
        c = costs.score_costs(n, head_dim=d)
        visible = att.visibility(n, n)
        checked.append(
            [
                fmt.count(x)
                for x in (
                    n,
                    c["entries"],
                    costs.count_elements(att.scaled_scores(q, q)),
                    c["forbidden"],
                    sum(not x for row in visible for x in row),
                )
            ]
        )
    return {
        **counts(
            "tiny_", **{k: tiny[k] for k in ("layers", "kv_heads", "head_dim", "context", "batch")}
        ),
        "tiny_formula": fmt.grouped(formula),
        "tiny_elements": fmt.grouped(counted),
        "tiny_bytes": fmt.grouped(counted * b),
        "check_ns": listing(ns),
        "check_d": fmt.count(d),
        "tbl_table_check": Table(
            ["n", "公式 n²", "分数表里数出的格子", "公式 n(n−1)/2", "可见性表里数出的禁止格"],
            checked,
        ),
        "wrong_count": fmt.count(len(costs.WRONG_VERSIONS)),
        "wrong_names": "；".join(costs.WRONG_VERSIONS),
        "fit_ns": listing(FIT_NS),
        "fit_noise_gap": fmt.ratio(max(gap for noisy, gap in off if noisy)),
        "tbl_fit": Table(
            ["合成计时", "指数", "拟合斜率"],
            [
                [f"${law_formula(law)}$" + noise(law), fmt.short(law["power"]), fmt.ratio(s)]
                for law, s in zip(laws, fitted)
            ],
        ),
    }


# The figures' words are Chinese, set in Noto Sans CJK SC (Debian: fonts-noto-cjk, which the PDF needs
# too); Latin letters and digits come from DejaVu Sans, first in the list. Other pages import this list.
FIGURE_FONT = "Noto Sans CJK SC"


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
    if not all(x > 0 for x in shown):
        raise ValueError(f"计时表里的中位数必须都大于 0 毫秒，才能算相邻两行之比：{shown}")
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


def measured(timed: list[dict]) -> dict:
    """A timing's table, its ratios as local slopes, the fitted slope against 2, and the log-log plot."""
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
    facts = timing_facts(timed)
    return {
        "tbl_timing": Table(
            ["n", "计时次数", "中位数（毫秒）", "与上一行之比"],
            [
                [fmt.count(r["n"]), fmt.count(r["runs"]), fmt.ms(r["median"]), ratio]
                for r, ratio in zip(timed, ["—"] + [fmt.ratio(x) for x in facts["ratios"]])
            ],
        ),
        "obs_ratio_low": fmt.ratio(min(facts["ratios"])),
        "obs_ratio_high": fmt.ratio(max(facts["ratios"])),
        "obs_local_low": fmt.ratio(min(facts["local"])),
        "obs_local_high": fmt.ratio(max(facts["local"])),
        "obs_steady": SAY["steady" if facts["steady"] else "uneven"],
        "obs_slope": fmt.ratio(slope),
        "obs_verdict": SAY[facts["verdict"]],
        "obs_doubling": fmt.multiple(2**slope),
        "obs_points": fmt.count(len(timed)),
        "fig_scaling": fig,
    }


def timing_values(timing: dict = costs.TIMING) -> dict:
    """Time ``numpy_attention`` here and now (the page's first cell set one BLAS thread before numpy)."""
    import numpy as np

    start = time.perf_counter()
    facts = measured(costs.time_attention(**timing))
    return {
        **counts("obs_", **{key: timing[key] for key in ("d", "seed", "repeats")}),
        **facts,
        "obs_ns": listing(timing["ns"]),
        "obs_budget": fmt.short(timing["budget"]),
        "obs_cpus": fmt.count(os.cpu_count() or 1),
        "obs_python": platform.python_version(),
        "obs_numpy": np.__version__,
        "obs_elapsed": fmt.seconds(time.perf_counter() - start),
    }


def exercise_values(m: dict = ex.EX_MODEL) -> dict:
    """The four exercises' inputs and solutions."""
    plans = ex.kv_plans(m)
    crossing = ex.table_beats_cache(m)
    grouped, full, low = (p["total"] for p in plans)
    per = 2 * m["layers"] * m["kv_heads"] * m["head_dim"]
    first = crossing["first"]

    def put_in(*ns):
        # (3 × 2 × 6)
        return " × ".join(fmt.count(n) for n in ns)

    return {
        **counts("cx_", **{key: m[key] for key in ("layers", "heads", "kv_heads", "head_dim")}),
        **counts(
            "cx_",
            context=ex.KV_CONTEXT,
            batch=ex.KV_BATCH,
            fp16=ex.FLOAT16_BYTES,
            int8=ex.INT8_BYTES,
            window=ex.WINDOW,
            threshold=crossing["threshold"],
            first=first,
            per_position=per,
            **{
                f"{name}_{end}": n
                for name, pair in ex.LIMITS.items()
                for end, n in zip(("min", "max"), pair)
            },
        ),
        "cx_contexts": listing(ex.WINDOW_CONTEXTS),
        "cx1_table": Table(
            ["n", "分数表：h × n²", "格数", "缓存：2·L·h_kv·d × n", "个数", "分数表更多"],
            [
                [
                    fmt.count(n),
                    f"{put_in(m['heads'], n)}²",
                    fmt.grouped(m["heads"] * n * n),
                    put_in(per, n),
                    fmt.grouped(per * n),
                    "是" if m["heads"] * n > per else "否",
                ]
                for n in (first - 1, first)
            ],
        ),
        "cx2_table": Table(
            [
                "做法",
                "每 token：2 × L × h_kv × d × b",
                "每 token",
                f"× 上下文 {fmt.count(ex.KV_CONTEXT)} × 批大小 {fmt.count(ex.KV_BATCH)}",
                "换成二进制单位",
            ],
            [
                [
                    p["name"],
                    "2 × " + put_in(m["layers"], p["kv_heads"], m["head_dim"], p["bytes"]),
                    f"{fmt.grouped(p['per_token'])} 字节",
                    f"{fmt.grouped(p['total'])} 字节",
                    fmt.size(p["total"]),
                ]
                for p in plans
            ],
        ),
        "cx2_mha": times(full / grouped),
        "cx2_bits_ratio": times(grouped / low),
        "cx3_table": Table(
            ["上下文", "缓存的位置数", "有窗口", "无窗口", "省下"],
            [
                [
                    fmt.count(r["context"]),
                    fmt.count(r["positions"]),
                    fmt.size(r["windowed"]),
                    fmt.size(r["full"]),
                    share(r["full"] - r["windowed"], r["full"]),
                ]
                for r in ex.window_rows(m)
            ],
        ),
        "cx4_doctest": Md(fmt.doctest_block(ex.generation_cells)),
    }
