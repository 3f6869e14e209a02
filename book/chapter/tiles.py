"""The tiles page (分块计算): what each section glues, from ``code/02_tiles.py``; F15's frames; the record
``code/02_tiles_torch.py`` printed under ``make crosscheck``. A section stops the build (``fmt.holds``) where the page's
words would be false."""

from __future__ import annotations

import importlib
import json
import math
import os
import platform
from pathlib import Path

from chapter import fmt
from chapter.fmt import Md, Table, glue_all  # noqa: F401  (glue_all: the page calls page.glue_all)

att = importlib.import_module("02_attention")
sc = importlib.import_module("02_scaling")
costs = importlib.import_module("02_costs")
tl = importlib.import_module("02_tiles")
ex = importlib.import_module("02_exercises_tiles")

PAGE = "分块一页"  # how fmt.holds names this page when a fixed sentence no longer holds
TOLERANCE = 1e-12  # float64: the tiled and the one-pass results may differ only by rounding
KIND_WORDS = {"full": "全可见", "partial": "部分可见", "empty": "全不可见（跳过）"}
KIND_STATES = {"full": "allowed", "partial": None, "empty": "forbidden"}


def span(cols) -> str:
    """A block's keys: ``range(2, 4)`` → ``Key 2–3``; one key → ``Key 4``."""
    cols = list(cols)
    return f"Key {cols[0]}" if len(cols) == 1 else f"Key {cols[0]}–{cols[-1]}"


def rows_span(rows) -> str:
    """A query block's rows: ``range(0, 2)`` → ``行 0–1``."""
    rows = list(rows)
    return f"行 {rows[0]}" if len(rows) == 1 else f"行 {rows[0]}–{rows[-1]}"


def positions(rows, past: int) -> str:
    """A query block's absolute positions past + i: ``range(0, 2)``, past 3 → ``3–4``; one row → ``7``."""
    rows = list(rows)
    first = past + rows[0]
    last = past + rows[-1]
    return f"{first}" if first == last else f"{first}–{last}"


def listing(values) -> str:
    """Inputs as the prose lists them: 1024、4096、16,384."""
    return "、".join(fmt.count(n) for n in values)


# -- one row of scores, block by block ----------------------------------------------------------------
def one_row(scores, v, block: int) -> dict:
    """The trace of one row (its scores given: Q = [1], K = the scores, d = 1) and the one-pass result."""
    r = tl.online_row(scores, v, block)
    weights = att.softmax(scores)  # the scaling page's one-pass softmax, then its mix
    one_pass = sc.mix(weights, v)
    q = [[1.0]]
    k = [[s] for s in scores]  # d = 1: the score of key j is k_j itself
    wrong, _ = tl.mistaken_tiled_attention(
        q, k, v, [[True] * len(scores)], "no_rescale", block_q=1, block_k=block
    )
    return {"row": r, "one_pass": one_pass, "no_rescale": wrong[0]}


def online_values(scores=tl.ROW_SCORES, v=tl.ROW_V, block: int = tl.ROW_BLOCK) -> dict:
    """The hand example: the inputs, the (m, l, O) after each block, the output against the one-pass one."""
    r = one_row(scores, v, block)
    trace = r["row"]["trace"]
    factors = tl.rescale_factors([m for m, _, _ in trace])
    rows = []
    for b, cols in enumerate(tl.spans(len(scores), block)):
        m, total, o = trace[b]
        rows.append(
            [
                f"块 {b + 1}（{span(cols)}）",
                fmt.vector([scores[j] for j in cols]),
                fmt.short(max(scores[j] for j in cols)),
                fmt.fmt(m),
                fmt.fmt(factors[b]),
                fmt.fmt(total),
                fmt.fmt(o[0]),
            ]
        )
    out = r["row"]["output"][0]
    gap = abs(out - r["one_pass"][0])
    grew = [b + 1 for b in range(1, len(trace)) if factors[b] < 1.0]
    kept = [b + 1 for b in range(1, len(trace)) if factors[b] == 1.0]
    fmt.holds(
        PAGE,
        {
            "分块的输出等于一次算完的": gap <= TOLERANCE,
            "有一块让最大值变大": bool(grew),
            "有一块最大值不变、因子是 1": bool(kept),
            "漏乘因子的输出不同": abs(r["no_rescale"][0] - out) >= 1e-3,
        },
    )
    return {
        "o_scores": fmt.vector(scores),
        "o_v": fmt.vector([row[0] for row in v]),
        "o_block": fmt.count(block),
        "o_blocks": fmt.count(len(trace)),
        "tbl_online": Table(
            ["读完", "这一块的分数", "块内最大值", "m", "因子 e^(m_old − m_new)", "l", "O"], rows
        ),
        "o_out": fmt.fmt(out),
        "o_one_pass": fmt.fmt(r["one_pass"][0]),
        "o_gap": fmt.difference(gap),
        "o_grew": "、".join(f"块 {b}" for b in grew),
        "o_kept": "、".join(f"块 {b}" for b in kept),
        "o_wrong": fmt.fmt(r["no_rescale"][0]),
        "o_lse": fmt.fmt(r["row"]["logsumexp"]),
    }


# -- F15: the blocks of one query block, swept ------------------------------------------------------
F15_QUERY_BLOCK = 0  # the query block F15 sweeps


def demo() -> dict:
    """The page's tiled example (02_tiles' demo): inputs, table, kinds, scores, and the row traces."""
    q = tl.DEMO_Q
    k = tl.DEMO_K
    v = tl.DEMO_V
    past = tl.DEMO_PAST
    block = tl.DEMO_BLOCK
    visible = att.visibility(len(q), len(k), past=past)
    scores = tl.masked_scores(q, k, visible)
    traces = [tl.online_row(s, v, block)["trace"] for s in scores]  # (m, l, O) after each key block
    return {
        "q": q,
        "k": k,
        "v": v,
        "past": past,
        "block": block,
        "visible": visible,
        "kinds": tl.block_kinds(visible, block, block),
        "traces": traces,
    }


def _state(trace_row, b: int) -> list[str]:
    if b < 0:
        return ["−∞（还没读）", fmt.fmt(0.0), fmt.fmt(0.0)]
    m, total, o = trace_row[b]
    return [fmt.fmt(m), fmt.fmt(total), fmt.fmt(o[0])]


def _sweep_frame(d: dict, a: int, b: int) -> dict:
    rows = tl.spans(len(d["q"]), d["block"])[a]
    blocks = tl.spans(len(d["k"]), d["block"])
    kind = d["kinds"][a][b]
    past = d["past"]

    def key_cell(i, j):
        at = next(c for c, cols in enumerate(blocks) if j in cols)
        if at > b:
            return fmt.cell("未读")
        if d["kinds"][a][at] == "empty":
            return fmt.cell("跳过", "forbidden", at == b)
        flag = d["visible"][i][j]
        return fmt.cell(fmt.mark(flag), "allowed" if flag else "forbidden", at == b)

    def readable(i):
        keys = [j for j in blocks[b] if d["visible"][i][j]]
        return f"行 {i} 可读 {fmt.names('Key', keys)}" if keys else f"行 {i} 一个也不可读"

    table = {
        "title": f"查询块 {a}（{rows_span(rows)}）读到 Key 块 {b}（{span(blocks[b])}）为止",
        "header": fmt.keys(len(d["k"])) + ["m", "l", "O"],
        "rows": [
            [fmt.cell(f"行 {i}（绝对位置 {past + i}）")]
            + [key_cell(i, j) for j in range(len(d["k"]))]
            + [fmt.cell(x, None, True) for x in _state(d["traces"][i], b)]
            for i in rows
        ],
    }
    before = [_state(d["traces"][i], b - 1) for i in rows]
    after = [_state(d["traces"][i], b) for i in rows]
    if kind == "empty":
        fmt.holds(PAGE, {"跳过的块不改变 m、l、O": before == after})
        text = "整块禁止：不读 K、V，不算分数，m、l、O 不变。"
    elif kind == "full":
        text = "整块允许：不查表，算出分数就更新 m、l、O。"
    else:
        blocked = [
            f"行 {i} 不能读 {fmt.names('Key', [j for j in blocks[b] if not d['visible'][i][j]])}"
            for i in rows
            if not all(d["visible"][i][j] for j in blocks[b])
        ]
        text = f"先把禁止的格子换成 −∞（{'；'.join(blocked)}），它的 e^(−∞) = 0，不进 l 和 O。"
    return {
        "condition": f"Key 块 {b}（{span(blocks[b])}）：{KIND_WORDS[kind]}",
        "tables": [table],
        "rule": "这一块里" + "，".join(readable(i) for i in rows),
        "explanation": text,
    }


def grid_table(d: dict) -> Table:
    """Every (query block, key block) of the example and its kind."""
    blocks = tl.spans(len(d["k"]), d["block"])
    queries = tl.spans(len(d["q"]), d["block"])
    return Table(
        ["查询块 ＼ Key 块", *(f"Key 块 {b}（{span(c)}）" for b, c in enumerate(blocks))],
        [
            [f"查询块 {a}（{rows_span(rows)}）"] + [KIND_WORDS[x] for x in d["kinds"][a]]
            for a, rows in enumerate(queries)
        ],
    )


def f15_frames() -> list[dict]:
    """F15: query block 0 reads its key blocks one by one: full, partial, empty."""
    d = demo()
    kinds = d["kinds"][F15_QUERY_BLOCK]
    fmt.holds(PAGE, {"F15 的查询块三类块各有": sorted(set(kinds)) == sorted(tl.KINDS)})
    return [_sweep_frame(d, F15_QUERY_BLOCK, b) for b in range(len(kinds))]


def tile_values() -> dict:
    """F15's inputs, named in its 输入与适用条件, and the counts the prose after it reads."""
    d = demo()
    counts = tl.block_counts(len(d["q"]), len(d["k"]), d["block"], d["block"])
    tiled, by_kind = tl.tiled_attention(
        d["q"], d["k"], d["v"], d["visible"], block_q=d["block"], block_k=d["block"]
    )
    _, one_pass = att.masked_attention(d["q"], d["k"], d["v"], d["visible"])
    gap = att.max_abs_diff(tiled, one_pass)
    fmt.holds(
        PAGE,
        {
            "不造表数出的块等于分块时数的": counts == by_kind,
            "F15 的输出等于一次算完的": gap <= TOLERANCE,
        },
    )
    return {
        "t_past": fmt.count(d["past"]),
        "t_new": fmt.count(len(d["q"])),
        "t_n_key": fmt.count(len(d["k"])),
        "t_block": fmt.count(d["block"]),
        "t_q": fmt.vectors(d["q"]),
        "t_k": fmt.vectors(d["k"]),
        "t_v": "、".join(fmt.short(row[0]) for row in d["v"]),
        "t_d": fmt.count(len(d["q"][0])),
        "t_frames": fmt.count(len(d["kinds"][F15_QUERY_BLOCK])),
        "t_full": fmt.count(counts["full"]),
        "t_partial": fmt.count(counts["partial"]),
        "t_empty": fmt.count(counts["empty"]),
        "t_gap": fmt.difference(gap),
        "tbl_grid": grid_table(d),
    }


# -- the count: how much a mask lets a kernel skip ------------------------------------------------------
COUNT_BLOCK = 128  # FlexAttention's default block size
DOC_LENGTH = 1024  # the documents of the count table: packed, each this long
RAGGED_N = 1000  # a length the block size does not divide


def _computed(counts: dict) -> int:
    return counts["full"] + counts["partial"]


def count_values(ns=costs.SCORE_NS, block: int = COUNT_BLOCK) -> dict:
    """The causal, window and document counts at the costs page's lengths; the formula T(T + 1)/2 checked."""
    window = next(m["sliding_window"] for m in costs.MODELS if m["name"].startswith("Mistral"))
    rows = []
    ratios = []
    for n in ns:
        t = -(-n // block)
        causal = tl.block_counts(n, n, block, block)
        half = t * (t - 1) // 2
        formula = n % block == 0 and causal == {"full": half, "partial": t, "empty": half}
        fmt.holds(PAGE, {"因果要算 T(T + 1)/2 块、其中 T 块部分可见": formula})
        windowed = tl.block_counts(n, n, block, block, window=window)
        docs = [DOC_LENGTH] * (n // DOC_LENGTH) + ([n % DOC_LENGTH] if n % DOC_LENGTH else [])
        packed = tl.block_counts(n, n, block, block, doc_lengths=docs)
        ratios.append(t * t / _computed(causal))
        rows.append(
            [
                fmt.count(n),
                fmt.count(t),
                fmt.count(t * t),
                fmt.count(_computed(causal)),
                fmt.count(causal["partial"]),
                fmt.count(_computed(windowed)),
                fmt.count(_computed(packed)),
            ]
        )
    fmt.holds(
        PAGE, {"块数之比随 n 增大而趋近 2": all(a < b < 2 for a, b in zip(ratios, ratios[1:]))}
    )
    ragged = tl.block_counts(RAGGED_N, RAGGED_N, block, block)
    t_ragged = -(-RAGGED_N // block)
    return {
        "c_block": fmt.count(block),
        "c_ns": listing(ns),
        "c_window": fmt.count(window),
        "c_doc": fmt.count(DOC_LENGTH),
        "tbl_counts": Table(
            [
                "n",
                "T = n / b",
                "全部块 T²",
                "因果要算的块",
                "其中部分可见",
                f"滑动窗口 w = {fmt.count(window)} 要算的块",
                f"因果且只读同一文档（每篇 {fmt.count(DOC_LENGTH)} 个位置）要算的块",
            ],
            rows,
        ),
        "c_ratios": "、".join(fmt.ratio(x) for x in ratios),
        "c_ragged_n": fmt.count(RAGGED_N),
        "c_ragged_t": fmt.count(t_ragged),
        "c_ragged_last": fmt.count(RAGGED_N - (t_ragged - 1) * block),
        "c_ragged_computed": fmt.count(_computed(ragged)),
        "c_ragged_partial": fmt.count(ragged["partial"]),
    }


# -- the fully masked row inside an online softmax -------------------------------------------------------
GUARD_WINDOW = 2  # the window of the guard example: the page's demo inputs, no PAD


def guard_values() -> dict:
    """A fully masked row and a row whose first block read is all −∞: NaN without the guard, 0 / finite with it."""
    d = demo()
    q = d["q"]
    k = d["k"]
    v = d["v"]
    pad = [False] + [True] * (len(k) - 1)  # one left PAD: the first query row reads nothing
    padded = att.visibility(len(k), len(k), key_valid=pad)
    blocks = {"block_q": d["block"], "block_k": d["block"]}
    guarded, _ = tl.tiled_attention(k, k, v, padded, empty_row="zero", **blocks)  # Q = K: prefill
    unguarded, _ = tl.mistaken_tiled_attention(k, k, v, padded, "no_guard", **blocks)
    empty = [i for i, row in enumerate(padded) if not any(row)]
    nan = [i for i, row in enumerate(unguarded) if math.isnan(row[0])]
    row = tl.online_row([-math.inf] * len(k), v, d["block"], empty_row="zero")
    window = tl.rule_table(len(q), len(k), window=GUARD_WINDOW)
    w_right, _ = tl.tiled_attention(q, k, v, window, **blocks)
    w_wrong, _ = tl.mistaken_tiled_attention(q, k, v, window, "no_guard", **blocks)
    _, w_one_pass = att.masked_attention(q, k, v, window)
    w_nan = [i for i, r in enumerate(w_wrong) if math.isnan(r[0])]
    fmt.holds(
        PAGE,
        {
            "没有保护时整行被屏蔽的行是 NaN": bool(empty) and nan == empty,
            "有保护时输出 0": all(guarded[i] == [0.0] for i in empty),
            "logsumexp 是 −∞": row["logsumexp"] == -math.inf and row["output"] == [0.0],
            "有保护时读完 l 仍是 0，要把 l 当 1": row["trace"][-1][1] == 0.0,
            "窗口里有行不是整行被屏蔽，却也成了 NaN": bool(w_nan)
            and all(any(window[i]) for i in w_nan),
            "有保护时窗口的结果与一次算完相同": att.max_abs_diff(w_right, w_one_pass) <= TOLERANCE,
        },
    )
    return {
        "g_pad": "、".join("PAD" if not ok else "内容" for ok in pad),
        "g_empty": fmt.names("行", empty),
        "g_nan": fmt.names("行", nan),
        "g_zero": "、".join(fmt.short(guarded[i][0]) for i in empty),
        "g_lse": fmt.fmt(row["logsumexp"]),
        "g_window": fmt.count(GUARD_WINDOW),
        "g_window_nan": fmt.names("行", w_nan),
        "g_window_gap": fmt.difference(att.max_abs_diff(w_right, w_one_pass)),
        "g_nan_value": fmt.fmt(float("nan")),
        "g_inf_minus_inf": fmt.fmt(-math.inf - -math.inf),
    }


# -- the checks and the mistakes they catch ----------------------------------------------------------------
def _compare(attend, q, k, v, visible) -> bool:
    """Whether ``attend`` (a tiled version) agrees with the one-pass attention: no NaN, within TOLERANCE."""
    got, _ = attend(q, k, v, visible)
    _, right = att.masked_attention(q, k, v, visible, empty_row="zero")
    return (
        not any(math.isnan(x) for r in got for x in r) and att.max_abs_diff(got, right) <= TOLERANCE
    )


def _leak_free(attend, q, k, v, visible, past: int) -> bool:
    """The leak probe through the tiled code: a V row after a query's position changed, its output stays."""
    out, _ = attend(q, k, v, visible)
    for i in range(len(q)):
        poisoned = [row if j <= past + i else [1e6] for j, row in enumerate(v)]
        again, _ = attend(q, k, poisoned, visible)
        if again[i] != out[i] and not all(math.isnan(x) for x in again[i] + out[i]):
            return False
    return True


CHECK_NAMES = {
    "causal": "与一次算完比较：因果，没有缓存",
    "cache": "与一次算完比较：因果，带缓存",
    "window": f"与一次算完比较：滑动窗口 w = {GUARD_WINDOW}，带缓存",
    "leak": "泄漏探针：改后面的 V",
}


def checks_facts() -> dict:
    """For the right tiling and each mistake, which check it passes: ``{name: {check: passed}}``."""
    d = demo()
    q = d["q"]
    k = d["k"]
    v = d["v"]
    past = d["past"]
    block = d["block"]
    cases = {
        "causal": (k, att.visibility(len(k), len(k)), 0),
        "cache": (q, d["visible"], past),
        "window": (q, tl.rule_table(len(q), len(k), window=GUARD_WINDOW), past),
    }

    def version(mistake):
        def attend(q_, k_, v_, visible):
            if mistake is None:
                return tl.tiled_attention(q_, k_, v_, visible, block_q=block, block_k=block)
            return tl.mistaken_tiled_attention(
                q_, k_, v_, visible, mistake, block_q=block, block_k=block
            )

        return attend

    facts = {}
    for mistake in (None, *tl.MISTAKES):
        attend = version(mistake)
        passed = {
            name: _compare(attend, rows, k, v, table) for name, (rows, table, _) in cases.items()
        }
        passed["leak"] = _leak_free(attend, q, k, v, d["visible"], past)
        facts[mistake] = passed
    fmt.holds(
        PAGE,
        {
            "正确的写法全过": all(facts[None].values()),
            "每个写错的版本至少一项不过": not any(all(p.values()) for m, p in facts.items() if m),
        },
    )
    return facts


# block_counts against block_kinds: (n_query, n_key, block_q, block_k, window, doc_lengths)
COUNT_CASES = [(8, 8, 2, 3, None, None), (5, 9, 2, 2, 3, None), (6, 10, 3, 4, None, [4, 6])]


def _case_words(n_query, n_key, bq, bk, window, docs) -> str:
    """One example of the count check as the page names it: 8 × 8、块 2 × 3、w = 3."""
    words = [f"{n_query} × {n_key}", f"块 {bq} × {bk}"]
    if window is not None:
        words.append(f"w = {window}")
    if docs is not None:
        words.append(f"文档长 {listing(docs)}")
    return "、".join(words)


MISTAKE_NAMES = {
    None: "正确的写法",
    "no_rescale": "旧的 l、O 没有乘 e^(m_old − m_new)",
    "skip_partial": "部分可见的块也跳过",
    "row_index": "部分可见的块里按行号判断因果",
    "no_guard": "m = −∞ 时没有用 0 代替",
}


def check_values() -> dict:
    """The checks table, the block-count check, and which check caught nothing."""
    facts = checks_facts()
    caught = {True: "—", False: "认出"}
    rows = [[MISTAKE_NAMES[m], *(caught[p[c]] for c in CHECK_NAMES)] for m, p in facts.items()]
    silent = [CHECK_NAMES[c] for c in CHECK_NAMES if all(p[c] for p in facts.values())]
    agree = 0
    for n_query, n_key, bq, bk, window, docs in COUNT_CASES:
        table = tl.rule_table(n_query, n_key, window=window, doc_lengths=docs)
        flat = [x for row in tl.block_kinds(table, bq, bk) for x in row]
        direct = tl.block_counts(n_query, n_key, bq, bk, window=window, doc_lengths=docs)
        agree += direct == {x: flat.count(x) for x in tl.KINDS}
    fmt.holds(
        PAGE,
        {
            "直接数块与逐块查表在每个例子上相同": agree == len(COUNT_CASES),
            "什么也没认出的只有泄漏探针": silent == [CHECK_NAMES["leak"]],
        },
    )
    return {
        "tbl_checks": Table(["写法", *CHECK_NAMES.values()], rows),
        "k_cases": fmt.count(len(COUNT_CASES)),
        "k_case_list": "；".join(_case_words(*case) for case in COUNT_CASES),
        "k_agree": fmt.count(agree),
        "k_window": fmt.count(GUARD_WINDOW),
        "k_tol": fmt.power(TOLERANCE),
    }


# -- measured here and now -----------------------------------------------------------------------------------
TIMING = {"ns": [512, 1024, 2048], "block": 128, "d": 32, "repeats": 3, "seed": 0, "budget": 3.0}


def timing_values(timing: dict = TIMING) -> dict:
    """Time the numpy tiles here and now, skipping the empty blocks and computing them all (one thread)."""
    import numpy as np

    rows = tl.time_tiles(**timing)
    bounds = [r["blocks"]["all"] / r["blocks"]["skip"] for r in rows]
    ratios = [r["all"] / r["skip"] for r in rows]
    formula = []
    masked = []
    for r in rows:
        t = -(-r["n"] // timing["block"])
        formula.append(r["blocks"] == {"skip": t * (t + 1) // 2, "all": t * t})
        for skip in (True, False):
            plan = tl.causal_plan(r["n"], timing["block"], skip_empty=skip)
            masked.append(sum(row.count("partial") for row in plan) == t)
    fmt.holds(
        PAGE,
        {
            "跳过空块与全部照算的输出相同": all(r["same"] for r in rows),
            "跳过时算 T(T + 1)/2 块、照算时算 T² 块": all(formula),
            "两种算法都只给对角线上的 T 块加 mask": all(masked),
        },
    )
    table = [
        [
            fmt.count(r["n"]),
            f"{fmt.count(r['blocks']['skip'])} / {fmt.count(r['blocks']['all'])}",
            fmt.ms(r["skip"]),
            fmt.ms(r["all"]),
            fmt.ratio(bound),
            fmt.ratio(ratio),
            fmt.count(r["runs"]),
        ]
        for r, bound, ratio in zip(rows, bounds, ratios)
    ]
    return {
        "m_ns": listing(timing["ns"]),
        "m_block": fmt.count(timing["block"]),
        "m_d": fmt.count(timing["d"]),
        "m_seed": fmt.count(timing["seed"]),
        "m_repeats": fmt.count(timing["repeats"]),
        "m_budget": fmt.short(timing["budget"]),
        "m_cpus": fmt.count(os.cpu_count() or 1),
        "m_python": platform.python_version(),
        "m_numpy": np.__version__,
        "tbl_timing": Table(
            [
                "n",
                "跳过空块时算的块 / 全部块",
                "跳过空块（毫秒）",
                "全部照算（毫秒）",
                "块数之比",
                "这一次实测之比",
                "计时次数",
            ],
            table,
        ),
        "m_last_n": fmt.count(rows[-1]["n"]),
        "m_last_ratio": fmt.ratio(ratios[-1]),
        "m_last_bound": fmt.ratio(bounds[-1]),
        "m_last_blocks": f"{fmt.count(rows[-1]['blocks']['skip'])} / {fmt.count(rows[-1]['blocks']['all'])}",
    }


# -- FlexAttention: what make crosscheck recorded ------------------------------------------------------------
TORCH_RECORD = Path(tl.__file__).with_name("02_tiles_torch.json")


def torch_record() -> dict:
    """What ``code/02_tiles_torch.py`` printed when ``make crosscheck`` last ran it (a build: no torch)."""
    return json.loads(TORCH_RECORD.read_text(encoding="utf-8"))


FLEX_CASE_NAMES = {
    "cache": "本页图解的例子（带缓存）",
    "causal": "因果",
    "window": "滑动窗口",
    "documents": "打包的三篇文档",
    "ragged": "块大小除不尽长度",
}


def _rule_words(case: dict) -> str:
    extra = []
    if case["window"] is not None:
        extra.append(f"w = {fmt.count(case['window'])}")
    if case["doc_lengths"] is not None:
        extra.append(f"文档长 {listing(case['doc_lengths'])}")
    past = case["n_key"] - case["n_query"]
    if past:
        extra.append(f"past = {fmt.count(past)}")
    return "、".join(extra) or "—"


def torch_values(record: dict | None = None) -> dict:
    """The FlexAttention section: the blocks compared case by case, the attention, the fully masked rows."""
    r = torch_record() if record is None else record
    rows = []
    for name, case in r["blocks"].items():
        flex = case["flex"]
        computed = sum(flex["partial"]) + sum(flex["full"])
        t_q = len(flex["partial"])
        t_k = -(-case["n_key"] // case["block"])
        rows.append(
            [
                FLEX_CASE_NAMES[name],
                f"{fmt.count(case['n_query'])} × {fmt.count(case['n_key'])}",
                fmt.count(case["block"]),
                _rule_words(case),
                f"{fmt.count(sum(flex['full']))} / {fmt.count(sum(flex['partial']))} / "
                f"{fmt.count(t_q * t_k - computed)}",
                f"{fmt.count(sum(case['ours']['full']))} / {fmt.count(sum(case['ours']['partial']))}",
                "相同" if case["same"] else "不同",
                fmt.percent(flex["sparsity"] / 100),
            ]
        )
    ragged = r["blocks"]["ragged"]
    last_partial = ragged["flex"]["partial"][-1]
    ours_last_full = ragged["ours"]["full"][-1]
    t = len(ragged["flex"]["partial"])
    skipped_share = (t * t - sum(ragged["flex"]["partial"]) - sum(ragged["flex"]["full"])) / (t * t)
    same = [FLEX_CASE_NAMES[n] for n, c in r["blocks"].items() if c["same"]]
    differ = [FLEX_CASE_NAMES[n] for n, c in r["blocks"].items() if not c["same"]]
    a = r["attention"]
    e = r["empty_rows"]
    zeros = all(x == 0.0 for row in e["output_on_empty_rows"] for x in row)
    last = len(ragged["flex"]["partial"]) - 1
    fmt.holds(
        PAGE,
        {
            "与 FlexAttention 的块不同的只有除不尽的一例": differ == [FLEX_CASE_NAMES["ragged"]],
            "除不尽时不同的块都在最后一个查询块里": bool(ragged["differ"])
            and all(a_ == last for a_, _ in ragged["differ"]),
            "记录里整行被屏蔽的行输出 0、logsumexp 为 −∞": zeros
            and set(e["lse_on_empty_rows"]) == {"-inf"}
            and bool(e["empty_rows"]),
        },
    )
    unfused = any("unfused" in w for w in a["warnings"])
    # The core says the book calls flex_attention without torch.compile, so it runs the unfused path.
    fmt.holds(PAGE, {"记录里 flex_attention 不经 torch.compile、走不融合的实现": unfused})
    return {
        "x_where": f"PyTorch {r['torch']}，{'CPU' if r['device'] == 'cpu' else r['device']}，{r['dtype']}",
        "x_path": "不融合的实现（本书不自己用 torch.compile 包装）" if unfused else "融合的内核",
        "tbl_flex": Table(
            [
                "例子",
                "查询 × Key",
                "块",
                "规则",
                "FlexAttention：全可见 / 部分可见 / 跳过",
                "block_kinds：全可见 / 部分可见",
                "逐块比较",
                "sparsity()",
            ],
            rows,
        ),
        "x_same": "、".join(same),
        "x_causal_n": fmt.count(r["blocks"]["causal"]["n_key"]),
        "x_causal_sparsity": fmt.percent(r["blocks"]["causal"]["flex"]["sparsity"] / 100),
        "x_ragged_n": fmt.count(ragged["n_key"]),
        "x_ragged_last_partial": fmt.count(last_partial),
        "x_ragged_ours_full": fmt.count(ours_last_full),
        "x_ragged_sparsity": fmt.percent(ragged["flex"]["sparsity"] / 100),
        "x_ragged_share": fmt.percent(skipped_share),
        "x_gap": fmt.difference(a["gap"]),
        "x_lse_gap": fmt.difference(max(a["lse_gap"], e["lse_gap"])),
        "x_empty": fmt.names("行", e["empty_rows"]),
        "x_empty_gap": fmt.difference(e["gap"]),
        "x_record": Md(f"```json\n{fmt.json_text(r)}\n```"),
    }


# -- the exercises ------------------------------------------------------------------------------------------
def exercise_values() -> dict:
    """Every number and table of the exercises and their solutions."""
    a1 = ex.online_trace()
    fmt.holds(
        PAGE,
        {
            "练习 1：第一块的因子是 0、最后一块的是 1": a1["factors"][0] == 0.0
            and a1["factors"][-1] == 1.0
        },
    )
    rows1 = [
        [
            f"块 {b + 1}（{span(cols)}）",
            fmt.vector([ex.ONLINE_SCORES[j] for j in cols]),
            fmt.fmt(m),
            fmt.fmt(f),
            fmt.fmt(total),
        ]
        for b, (cols, (m, total), f) in enumerate(
            zip(tl.spans(len(ex.ONLINE_SCORES), ex.ONLINE_BLOCK), a1["trace"], a1["factors"])
        )
    ]
    a2 = ex.cache_blocks()
    keys2 = tl.spans(ex.CACHE_PAST + ex.CACHE_NEW, ex.CACHE_BK)
    rows2 = [
        [f"查询块 {a}（{rows_span(rows)}，绝对位置 {positions(rows, ex.CACHE_PAST)}）"]
        + [KIND_WORDS[x] for x in kinds]
        for a, (rows, kinds) in enumerate(zip(tl.spans(ex.CACHE_NEW, ex.CACHE_BQ), a2["kinds"]))
    ]
    a3 = ex.window_growth()
    rows3 = [
        [fmt.count(r["n"]), fmt.count(r["blocks"]), fmt.count(r["causal"]), fmt.count(r["window"])]
        for r in a3
    ]
    steps = [b["window"] - a["window"] for a, b in zip(a3, a3[1:])]
    per_block = [s // ((b["n"] - a["n"]) // ex.WINDOW_BLOCK) for s, a, b in zip(steps, a3, a3[1:])]
    fmt.holds(
        PAGE,
        {
            "练习 3：窗口填满后每个查询块多出的块数不变": len(set(per_block)) == 1,
            "练习 3：每个查询块读的块比 w / b 多一块": per_block[0]
            == ex.WINDOW // ex.WINDOW_BLOCK + 1,
        },
    )
    a4 = ex.packed_guard()
    n4 = len(a4["doc"])
    second = a4["doc"].index(1)  # the solution: the second document's first position
    fmt.holds(
        PAGE,
        {
            "练习 4：离不开保护的只有第二篇文档的第一个位置": a4["rows"] == [second],
            "练习 4：它与上一篇的最后一行同在一个查询块": second % ex.GUARD_BLOCK != 0,
        },
    )
    rows4 = [
        [f"查询块 {a}（{rows_span(rows)}）"] + [KIND_WORDS[x] for x in kinds]
        for a, (rows, kinds) in enumerate(zip(tl.spans(n4, ex.GUARD_BLOCK), a4["kinds"]))
    ]
    return {
        "x1_scores": fmt.vector(ex.ONLINE_SCORES),
        "x1_block": fmt.count(ex.ONLINE_BLOCK),
        "x1_table": Table(["读完", "这一块的分数", "m", "因子 e^(m_old − m_new)", "l"], rows1),
        "x1_weights": fmt.vector(a1["weights"], fmt.fmt),
        "x2_past": fmt.count(ex.CACHE_PAST),
        "x2_new": fmt.count(ex.CACHE_NEW),
        "x2_bq": fmt.count(ex.CACHE_BQ),
        "x2_bk": fmt.count(ex.CACHE_BK),
        "x2_table": Table(
            ["查询块 ＼ Key 块", *(f"Key 块 {b}（{span(c)}）" for b, c in enumerate(keys2))], rows2
        ),
        "x2_full": fmt.count(a2["counts"]["full"]),
        "x2_partial": fmt.count(a2["counts"]["partial"]),
        "x2_empty": fmt.count(a2["counts"]["empty"]),
        "x2_computed": fmt.count(a2["computed"]),
        "x2_blocks": fmt.count(a2["blocks"]),
        "x3_window": fmt.count(ex.WINDOW),
        "x3_block": fmt.count(ex.WINDOW_BLOCK),
        "x3_ns": listing(ex.WINDOW_NS),
        "x3_table": Table(["n", "全部块", "因果要算的块", "滑动窗口要算的块"], rows3),
        "x3_per_block": fmt.count(per_block[0]),
        "x4_docs": listing(ex.GUARD_DOCS),
        "x4_block": fmt.count(ex.GUARD_BLOCK),
        "x4_table": Table(
            [
                "查询块 ＼ Key 块",
                *(f"Key 块 {b}（{span(c)}）" for b, c in enumerate(tl.spans(n4, ex.GUARD_BLOCK))),
            ],
            rows4,
        ),
        "x4_rows": fmt.names("行", a4["rows"]),
    }
