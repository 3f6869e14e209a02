"""The tiles page's book side: one function per section of book/ch02/tiles.md, each a page.Section.

The page types each example's inputs ({input} roles naming the teaching files' constants, or the book side's
constants below); a section glues what the run computes and checks the facts of the page's fixed sentences
with ``Section.holds``. ``f15_frames`` gives figure F15's frames. ``flex`` reads the record that
``code/02_tiles_torch.py`` printed under ``make crosscheck`` (tests/crosscheck checks it against PyTorch).
"""

from __future__ import annotations

import importlib
import json
import math
import os
import platform
from pathlib import Path

from chapter import fmt
from chapter.conventions import DEVICE_NAMES
from chapter.page import Col, Section, listing

att = importlib.import_module("02_attention")
sc = importlib.import_module("02_scaling")
costs = importlib.import_module("02_costs")
tl = importlib.import_module("02_tiles")
ex = importlib.import_module("02_exercises_tiles")

PAGE = "分块一页"
TOLERANCE = 1e-12  # float64: the tiled and the one-pass results may differ only by rounding
KIND_WORDS = {"full": "全可见", "partial": "部分可见", "empty": "全不可见（跳过）"}
# The inputs that no teaching file has (the page types them; tests/test_typed_inputs.py compares).
F15_QUERY_BLOCK = 0  # the query block F15 sweeps
DOC_LENGTH = 1024  # the documents of the count table: packed, each this long
RAGGED_N = 1000  # a length the block size does not divide
GUARD_WINDOW = (
    2  # the window of the guard example and of the checks: the page's demo inputs, no PAD
)
TIMED_NS = [
    512,
    1024,
    2048,
]  # the timing: lengths, block, head size, repeats, seed, budget in seconds
TIMED_BLOCK = 128
TIMED_D = 32
TIMED_REPEATS = 3
TIMED_SEED = 0
TIMED_BUDGET = 3.0
TORCH_RECORD = Path(tl.__file__).with_name("02_tiles_torch.json")


def dash(unit: str, items, past: int = 0) -> str:
    """A run of numbered things as the tables name a block: ``Key 2–3``, ``行 0–1``; one thing ``Key 4``.

    >>> dash("Key ", range(2, 4))
    'Key 2–3'
    >>> dash("行 ", [7])
    '行 7'
    >>> dash("", range(0, 2), past=3)
    '3–4'
    """
    items = list(items)
    first = past + items[0]
    last = past + items[-1]
    return f"{unit}{first}" if first == last else f"{unit}{first}–{last}"


def counts(values) -> str:
    """Inputs as the prose lists them: 1024、4096、16,384."""
    return listing(fmt.count(n) for n in values)


def kind_grid(s: Section, name: str, kinds, query_spans, key_spans, label=None) -> None:
    """A table of every (query block, key block) and its kind; ``label`` names a query block's rows."""
    label = label or (lambda rows: dash("行 ", rows))
    s.table(
        name,
        list(enumerate(zip(query_spans, kinds))),
        Col("查询块 ＼ Key 块", lambda r: f"查询块 {r[0]}（{label(r[1][0])}）", "text"),
        *[
            Col(
                f"Key 块 {b}（{dash('Key ', cols)}）", lambda r, b=b: KIND_WORDS[r[1][1][b]], "text"
            )
            for b, cols in enumerate(key_spans)
        ],
    )


# -- one row of scores, block by block ----------------------------------------------------------------
def online() -> Section:
    """The hand example: the (m, l, O) after each block, the output against the one-pass one."""
    s = Section(PAGE, "一行分数，一块一块地读")
    scores = tl.ROW_SCORES
    v = tl.ROW_V
    block = tl.ROW_BLOCK
    row = tl.online_row(scores, v, block)
    trace = row["trace"]
    factors = tl.rescale_factors([m for m, _, _ in trace])
    one_pass = sc.mix(att.softmax(scores), v)  # the scaling page's one-pass softmax, then its mix
    k = [[x] for x in scores]  # Q = [1], d = 1: the score of key j is k_j itself
    everything = [[True] * len(scores)]
    wrong, _ = tl.mistaken_tiled_attention(
        [[1.0]], k, v, everything, "no_rescale", block_q=1, block_k=block
    )
    out = row["output"][0]
    gap = abs(out - one_pass[0])
    grew = [b + 1 for b in range(1, len(trace)) if factors[b] < 1.0]
    kept = [b + 1 for b in range(1, len(trace)) if factors[b] == 1.0]
    s.holds(
        tiled_equals_one_pass=gap <= TOLERANCE,
        a_block_raises_the_maximum=bool(grew),
        a_block_keeps_the_maximum=bool(kept),
        no_rescale_differs=abs(wrong[0][0] - out) >= 1e-3,
    )
    s.text(o_v=fmt.vector([row[0] for row in v]))
    s.value("count", o_blocks=len(trace))
    blocks = [
        {"b": b, "cols": cols, "scores": [scores[j] for j in cols], "trace": t, "factor": f}
        for b, (cols, t, f) in enumerate(zip(tl.spans(len(scores), block), trace, factors))
    ]
    s.table(
        "tbl_online",
        blocks,
        Col("读完", lambda r: f"块 {r['b'] + 1}（{dash('Key ', r['cols'])}）", "text"),
        Col("这一块的分数", lambda r: fmt.vector(r["scores"]), "text"),
        Col("块内最大值", lambda r: max(r["scores"]), "short"),
        Col("m", lambda r: r["trace"][0]),
        Col("因子 e^(m_old − m_new)", lambda r: r["factor"]),
        Col("l", lambda r: r["trace"][1]),
        Col("O", lambda r: r["trace"][2][0]),
    )
    s.value(o_out=out, o_one_pass=one_pass[0], o_wrong=wrong[0][0], o_lse=row["logsumexp"])
    s.value("difference", o_gap=gap)
    s.text(o_grew=listing(f"块 {b}" for b in grew), o_kept=listing(f"块 {b}" for b in kept))
    return s


# -- F15: the blocks of one query block, swept ------------------------------------------------------
def demo() -> dict:
    """The page's tiled example (02_tiles' demo): its visibility, kinds and the rows' traces."""
    q = tl.DEMO_Q
    k = tl.DEMO_K
    visible = att.visibility(len(q), len(k), past=tl.DEMO_PAST)
    scores = tl.masked_scores(q, k, visible)
    traces = [tl.online_row(row, tl.DEMO_V, tl.DEMO_BLOCK)["trace"] for row in scores]
    return {
        "visible": visible,
        "kinds": tl.block_kinds(visible, tl.DEMO_BLOCK, tl.DEMO_BLOCK),
        "traces": traces,  # (m, l, O) of each row after each key block
    }


def _state(trace_row, b: int) -> list[str]:
    if b < 0:
        return ["−∞（还没读）", fmt.fmt(0.0), fmt.fmt(0.0)]
    m, total, o = trace_row[b]
    return [fmt.fmt(m), fmt.fmt(total), fmt.fmt(o[0])]


def _sweep_frame(d: dict, a: int, b: int) -> dict:
    n_key = len(tl.DEMO_K)
    rows = tl.spans(len(tl.DEMO_Q), tl.DEMO_BLOCK)[a]
    blocks = tl.spans(n_key, tl.DEMO_BLOCK)
    kind = d["kinds"][a][b]
    visible = d["visible"]

    def key_cell(i, j):
        at = next(c for c, cols in enumerate(blocks) if j in cols)
        if at > b:
            return fmt.cell("未读")
        if d["kinds"][a][at] == "empty":
            return fmt.cell("跳过", "forbidden", at == b)
        flag = visible[i][j]
        return fmt.cell(fmt.mark(flag), "allowed" if flag else "forbidden", at == b)

    def readable(i):
        keys = [j for j in blocks[b] if visible[i][j]]
        return f"行 {i} 可读 {fmt.names('Key', keys)}" if keys else f"行 {i} 一个也不可读"

    table = {
        "title": f"查询块 {a}（{dash('行 ', rows)}）读到 Key 块 {b}（{dash('Key ', blocks[b])}）为止",
        "header": fmt.keys(n_key) + ["m", "l", "O"],
        "rows": [
            [fmt.cell(f"行 {i}（绝对位置 {tl.DEMO_PAST + i}）")]
            + [key_cell(i, j) for j in range(n_key)]
            + [fmt.cell(x, None, True) for x in _state(d["traces"][i], b)]
            for i in rows
        ],
    }
    if kind == "empty":
        text = "整块禁止：不读 K、V，不算分数，m、l、O 不变。"
    elif kind == "full":
        text = "整块允许：不查表，算出分数就更新 m、l、O。"
    else:
        blocked = [
            f"行 {i} 不能读 {fmt.names('Key', [j for j in blocks[b] if not visible[i][j]])}"
            for i in rows
            if not all(visible[i][j] for j in blocks[b])
        ]
        text = f"先把禁止的格子换成 −∞（{'；'.join(blocked)}），它的 e^(−∞) = 0，不进 l 和 O。"
    return {
        "condition": f"Key 块 {b}（{dash('Key ', blocks[b])}）：{KIND_WORDS[kind]}",
        "tables": [table],
        "rule": "这一块里" + "，".join(readable(i) for i in rows),
        "explanation": text,
    }


def f15_frames() -> list[dict]:
    """F15: query block 0 reads its key blocks one by one: full, partial, empty."""
    d = demo()
    kinds = d["kinds"][F15_QUERY_BLOCK]
    rows = tl.spans(len(tl.DEMO_Q), tl.DEMO_BLOCK)[F15_QUERY_BLOCK]
    skipped = [b for b, kind in enumerate(kinds) if kind == "empty"]
    Section(PAGE, "F15").holds(
        three_kinds=sorted(set(kinds)) == sorted(tl.KINDS),
        a_skipped_block_changes_nothing=all(
            _state(d["traces"][i], b - 1) == _state(d["traces"][i], b)
            for b in skipped
            for i in rows
        ),
    )
    return [_sweep_frame(d, F15_QUERY_BLOCK, b) for b in range(len(kinds))]


def tiles() -> Section:
    """F15's sizes and V, the grid of every block and the counts the prose after it reads."""
    s = Section(PAGE, "三类块")
    q = tl.DEMO_Q
    k = tl.DEMO_K
    v = tl.DEMO_V
    block = tl.DEMO_BLOCK
    d = demo()
    found = tl.block_counts(len(q), len(k), block, block)
    tiled, by_kind = tl.tiled_attention(q, k, v, d["visible"], block_q=block, block_k=block)
    _, one_pass = att.masked_attention(q, k, v, d["visible"])
    gap = att.max_abs_diff(tiled, one_pass)
    s.holds(counted_equals_tiled=found == by_kind, tiled_equals_one_pass=gap <= TOLERANCE)
    s.value("count", t_new=len(q), t_frames=len(d["kinds"][F15_QUERY_BLOCK]))
    s.text(t_v=listing(fmt.short(row[0]) for row in v))
    s.value("count", t_full=found["full"], t_partial=found["partial"], t_empty=found["empty"])
    s.value("difference", t_gap=gap)
    kind_grid(s, "tbl_grid", d["kinds"], tl.spans(len(q), block), tl.spans(len(k), block))
    return s


# -- the count: how much a mask lets a kernel skip ------------------------------------------------------
def count() -> Section:
    """The causal, window and document counts at the costs page's lengths; the formula T(T + 1)/2 checked."""
    s = Section(PAGE, "因果 mask 能省一半的计算")
    block = tl.COUNT_BLOCK
    window = next(m["sliding_window"] for m in costs.MODELS if m["name"].startswith("Mistral"))
    rows = []
    for n in costs.SCORE_NS:
        t = -(-n // block)
        docs = [DOC_LENGTH] * (n // DOC_LENGTH) + ([n % DOC_LENGTH] if n % DOC_LENGTH else [])
        causal = tl.block_counts(n, n, block, block)
        windowed = tl.block_counts(n, n, block, block, window=window)
        packed = tl.block_counts(n, n, block, block, doc_lengths=docs)
        half = t * (t - 1) // 2
        rows.append(
            {
                "n": n,
                "t": t,
                "causal": causal["full"] + causal["partial"],
                "partial": causal["partial"],
                "window": windowed["full"] + windowed["partial"],
                "documents": packed["full"] + packed["partial"],
                "formula": n % block == 0 and causal == {"full": half, "partial": t, "empty": half},
            }
        )
    ratios = [r["t"] ** 2 / r["causal"] for r in rows]
    s.holds(
        causal_computes_t_t_plus_1_over_2=all(r["formula"] for r in rows),
        ratio_grows_towards_2=all(a < b < 2 for a, b in zip(ratios, ratios[1:])),
    )
    s.text(c_ns=counts(costs.SCORE_NS))
    s.value("count", c_window=window)
    s.table(
        "tbl_counts",
        rows,
        Col("n", lambda r: r["n"], "count"),
        Col("T = n / b", lambda r: r["t"], "count"),
        Col("全部块 T²", lambda r: r["t"] ** 2, "count"),
        Col("因果要算的块", lambda r: r["causal"], "count"),
        Col("其中部分可见", lambda r: r["partial"], "count"),
        Col(f"滑动窗口 w = {fmt.count(window)} 要算的块", lambda r: r["window"], "count"),
        Col(
            f"因果且只读同一文档（每篇 {fmt.count(DOC_LENGTH)} 个位置）要算的块",
            lambda r: r["documents"],
            "count",
        ),
    )
    s.text(c_ratios=listing(fmt.ratio(x) for x in ratios))
    ragged = tl.block_counts(RAGGED_N, RAGGED_N, block, block)
    t_ragged = -(-RAGGED_N // block)
    s.value(
        "count",
        c_ragged_t=t_ragged,
        c_ragged_last=RAGGED_N - (t_ragged - 1) * block,
        c_ragged_computed=ragged["full"] + ragged["partial"],
    )
    return s


# -- the fully masked row inside an online softmax -------------------------------------------------------
def guard() -> Section:
    """A fully masked row and a row whose first block read is all −∞: NaN without the guard, 0 / finite with it."""
    s = Section(PAGE, "整行被屏蔽：在线 softmax 里的 NaN")
    q = tl.DEMO_Q
    k = tl.DEMO_K
    v = tl.DEMO_V
    pad = [False] + [True] * (len(k) - 1)  # one left PAD: the first query row reads nothing
    padded = att.visibility(len(k), len(k), key_valid=pad)
    blocks = {"block_q": tl.DEMO_BLOCK, "block_k": tl.DEMO_BLOCK}
    guarded, _ = tl.tiled_attention(k, k, v, padded, empty_row="zero", **blocks)  # Q = K: prefill
    unguarded, _ = tl.mistaken_tiled_attention(k, k, v, padded, "no_guard", **blocks)
    empty = [i for i, row in enumerate(padded) if not any(row)]
    nan = [i for i, row in enumerate(unguarded) if math.isnan(row[0])]
    row = tl.online_row([-math.inf] * len(k), v, tl.DEMO_BLOCK, empty_row="zero")
    window = tl.rule_table(len(q), len(k), window=GUARD_WINDOW)
    w_right, _ = tl.tiled_attention(q, k, v, window, **blocks)
    w_wrong, _ = tl.mistaken_tiled_attention(q, k, v, window, "no_guard", **blocks)
    _, w_one_pass = att.masked_attention(q, k, v, window)
    w_nan = [i for i, r in enumerate(w_wrong) if math.isnan(r[0])]
    s.holds(
        fully_masked_rows_are_nan_without_the_guard=bool(empty) and nan == empty,
        guarded_output_is_zero=all(guarded[i] == [0.0] for i in empty),
        logsumexp_is_minus_inf=row["logsumexp"] == -math.inf and row["output"] == [0.0],
        l_stays_zero=row["trace"][-1][1] == 0.0,
        window_rows_not_fully_masked_are_nan=bool(w_nan) and all(any(window[i]) for i in w_nan),
        guarded_window_equals_one_pass=att.max_abs_diff(w_right, w_one_pass) <= TOLERANCE,
    )
    s.text(
        g_pad=listing("内容" if ok else "PAD" for ok in pad),
        g_nan=fmt.names("行", nan),
        g_zero=listing(fmt.short(guarded[i][0]) for i in empty),
        g_window_nan=fmt.names("行", w_nan),
    )
    s.value(g_lse=row["logsumexp"], g_inf_minus_inf=-math.inf - -math.inf)
    return s


# -- the checks and the mistakes they catch ----------------------------------------------------------------
CHECK_NAMES = {
    "causal": "与一次算完比较：因果，没有缓存",
    "cache": "与一次算完比较：因果，带缓存",
    "window": f"与一次算完比较：滑动窗口 w = {GUARD_WINDOW}，带缓存",
    "leak": "泄漏探针：改后面的 V",
}
MISTAKE_NAMES = {
    None: "正确的写法",
    "no_rescale": "旧的 l、O 没有乘 e^(m_old − m_new)",
    "skip_partial": "部分可见的块也跳过",
    "row_index": "部分可见的块里按行号判断因果",
    "no_guard": "m = −∞ 时没有用 0 代替",
}
# block_counts against block_kinds: (n_query, n_key, block_q, block_k, window, doc_lengths)
COUNT_CASES = [(8, 8, 2, 3, None, None), (5, 9, 2, 2, 3, None), (6, 10, 3, 4, None, [4, 6])]


def _compare(attend, q, k, v, visible) -> bool:
    """Whether ``attend`` (a tiled version) agrees with the one-pass attention: no NaN, within TOLERANCE."""
    got, _ = attend(q, k, v, visible)
    _, right = att.masked_attention(q, k, v, visible, empty_row="zero")
    nan = any(math.isnan(x) for r in got for x in r)
    return not nan and att.max_abs_diff(got, right) <= TOLERANCE


def _leak_free(attend, q, k, v, visible, past: int) -> bool:
    """The leak probe through the tiled code: a V row after a query's position changed, its output stays."""
    out, _ = attend(q, k, v, visible)
    for i in range(len(q)):
        poisoned = [row if j <= past + i else [1e6] for j, row in enumerate(v)]
        again, _ = attend(q, k, poisoned, visible)
        if again[i] != out[i] and not all(math.isnan(x) for x in again[i] + out[i]):
            return False
    return True


def checks_facts() -> dict:
    """For the right tiling and each mistake, which check it passes: ``{name: {check: passed}}``."""
    q = tl.DEMO_Q
    k = tl.DEMO_K
    v = tl.DEMO_V
    past = tl.DEMO_PAST
    block = tl.DEMO_BLOCK
    visible = demo()["visible"]
    cases = {
        "causal": (k, att.visibility(len(k), len(k))),
        "cache": (q, visible),
        "window": (q, tl.rule_table(len(q), len(k), window=GUARD_WINDOW)),
    }

    def version(mistake):
        def attend(q_, k_, v_, table):
            if mistake is None:
                return tl.tiled_attention(q_, k_, v_, table, block_q=block, block_k=block)
            return tl.mistaken_tiled_attention(
                q_, k_, v_, table, mistake, block_q=block, block_k=block
            )

        return attend

    facts = {}
    for mistake in (None, *tl.MISTAKES):
        attend = version(mistake)
        passed = {
            name: _compare(attend, rows, k, v, table) for name, (rows, table) in cases.items()
        }
        passed["leak"] = _leak_free(attend, q, k, v, visible, past)
        facts[mistake] = passed
    return facts


def _case_words(n_query, n_key, bq, bk, window, docs) -> str:
    """One example of the count check as the page names it: 8 × 8、块 2 × 3、w = 3."""
    words = [f"{n_query} × {n_key}", f"块 {bq} × {bk}"]
    if window is not None:
        words.append(f"w = {window}")
    if docs is not None:
        words.append(f"文档长 {counts(docs)}")
    return "、".join(words)


def checks() -> Section:
    """The checks table, the block-count check, and which check caught nothing."""
    s = Section(PAGE, "如何判断是否做对")
    facts = checks_facts()
    silent = [c for c in CHECK_NAMES if all(p[c] for p in facts.values())]
    agree = 0
    for n_query, n_key, bq, bk, window, docs in COUNT_CASES:
        table = tl.rule_table(n_query, n_key, window=window, doc_lengths=docs)
        flat = [x for row in tl.block_kinds(table, bq, bk) for x in row]
        direct = tl.block_counts(n_query, n_key, bq, bk, window=window, doc_lengths=docs)
        agree += direct == {x: flat.count(x) for x in tl.KINDS}
    s.holds(
        right_tiling_passes_all=all(facts[None].values()),
        each_mistake_fails_one=not any(all(p.values()) for m, p in facts.items() if m),
        direct_count_agrees_on_every_case=agree == len(COUNT_CASES),
        only_the_leak_probe_caught_nothing=silent == ["leak"],
    )
    caught = {True: "—", False: "认出"}
    s.table(
        "tbl_checks",
        list(facts.items()),
        Col("写法", lambda r: MISTAKE_NAMES[r[0]], "text"),
        *[Col(name, lambda r, c=c: caught[r[1][c]], "text") for c, name in CHECK_NAMES.items()],
    )
    s.value("count", k_cases=len(COUNT_CASES), k_agree=agree)
    s.text(k_case_list="；".join(_case_words(*case) for case in COUNT_CASES))
    return s


# -- measured here and now -----------------------------------------------------------------------------------
def timing() -> Section:
    """Time the numpy tiles here and now, skipping the empty blocks and computing them all (one thread)."""
    import numpy as np

    s = Section(PAGE, "在构建机上实测")
    rows = tl.time_tiles(
        TIMED_NS,
        block=TIMED_BLOCK,
        d=TIMED_D,
        repeats=TIMED_REPEATS,
        seed=TIMED_SEED,
        budget=TIMED_BUDGET,
    )
    formula = []
    masked = []
    for r in rows:
        t = -(-r["n"] // TIMED_BLOCK)
        r["bound"] = r["blocks"]["all"] / r["blocks"]["skip"]
        r["ratio"] = r["all"] / r["skip"]
        r["computed"] = f"{fmt.count(r['blocks']['skip'])} / {fmt.count(r['blocks']['all'])}"
        formula.append(r["blocks"] == {"skip": t * (t + 1) // 2, "all": t * t})
        for skip in (True, False):
            plan = tl.causal_plan(r["n"], TIMED_BLOCK, skip_empty=skip)
            masked.append(sum(row.count("partial") for row in plan) == t)
    s.holds(
        skipping_gives_the_same_output=all(r["same"] for r in rows),
        blocks_are_t_t_plus_1_over_2_and_t_squared=all(formula),
        both_mask_only_the_diagonal=all(masked),
    )
    s.value("count", m_cpus=os.cpu_count() or 1)
    s.text(m_python=platform.python_version(), m_numpy=np.__version__)
    s.table(
        "tbl_timing",
        rows,
        Col("n", lambda r: r["n"], "count"),
        Col("跳过空块时算的块 / 全部块", lambda r: r["computed"], "text"),
        Col("跳过空块（毫秒）", lambda r: r["skip"], "ms"),
        Col("全部照算（毫秒）", lambda r: r["all"], "ms"),
        Col("块数之比", lambda r: r["bound"], "ratio"),
        Col("这一次实测之比", lambda r: r["ratio"], "ratio"),
        Col("计时次数", lambda r: r["runs"], "count"),
    )
    last = rows[-1]
    s.value("count", m_last_n=last["n"])
    s.value("ratio", m_last_ratio=last["ratio"], m_last_bound=last["bound"])
    s.text(m_last_blocks=last["computed"])
    return s


# -- FlexAttention: what make crosscheck recorded ------------------------------------------------------------
FLEX_CASE_NAMES = {
    "cache": "本页图解的例子（带缓存）",
    "causal": "因果",
    "window": "滑动窗口",
    "documents": "打包的三篇文档",
    "ragged": "块大小除不尽长度",
}


def torch_record() -> dict:
    """What ``code/02_tiles_torch.py`` printed when ``make crosscheck`` last ran it (a build: no torch)."""
    return json.loads(TORCH_RECORD.read_text(encoding="utf-8"))


def _rule_words(case: dict) -> str:
    extra = []
    if case["window"] is not None:
        extra.append(f"w = {fmt.count(case['window'])}")
    if case["doc_lengths"] is not None:
        extra.append(f"文档长 {counts(case['doc_lengths'])}")
    past = case["n_key"] - case["n_query"]
    if past:
        extra.append(f"past = {fmt.count(past)}")
    return "、".join(extra) or "—"


def _flex_cells(case: dict) -> str:
    flex = case["flex"]
    full = sum(flex["full"])
    partial = sum(flex["partial"])
    skipped = len(flex["partial"]) * -(-case["n_key"] // case["block"]) - full - partial
    return " / ".join(fmt.count(x) for x in (full, partial, skipped))


def flex() -> Section:
    """The FlexAttention section: the blocks compared case by case, the attention, the fully masked rows."""
    s = Section(PAGE, "交给 PyTorch 的 FlexAttention")
    r = torch_record()
    ragged = r["blocks"]["ragged"]
    t = len(ragged["flex"]["partial"])
    computed = sum(ragged["flex"]["partial"]) + sum(ragged["flex"]["full"])
    a = r["attention"]
    e = r["empty_rows"]
    s.holds(
        only_the_ragged_case_differs=[n for n, c in r["blocks"].items() if not c["same"]]
        == ["ragged"],
        ragged_differs_in_the_last_query_block=bool(ragged["differ"])
        and all(block == t - 1 for block, _ in ragged["differ"]),
        empty_rows_zero_with_minus_inf_logsumexp=all(
            x == 0.0 for row in e["output_on_empty_rows"] for x in row
        )
        and set(e["lse_on_empty_rows"]) == {"-inf"}
        and bool(e["empty_rows"]),
        # the core: the book calls flex_attention without torch.compile, so it runs the unfused path
        flex_attention_unfused=any("unfused" in w for w in a["warnings"]),
    )
    s.text(x_where=f"PyTorch {r['torch']}，{DEVICE_NAMES[r['device']]}，{r['dtype']}")
    s.table(
        "tbl_flex",
        list(r["blocks"].items()),
        Col("例子", lambda c: FLEX_CASE_NAMES[c[0]], "text"),
        Col(
            "查询 × Key",
            lambda c: f"{fmt.count(c[1]['n_query'])} × {fmt.count(c[1]['n_key'])}",
            "text",
        ),
        Col("块", lambda c: c[1]["block"], "count"),
        Col("规则", lambda c: _rule_words(c[1]), "text"),
        Col("FlexAttention：全可见 / 部分可见 / 跳过", lambda c: _flex_cells(c[1]), "text"),
        Col(
            "block_kinds：全可见 / 部分可见",
            lambda c: (
                f"{fmt.count(sum(c[1]['ours']['full']))} / {fmt.count(sum(c[1]['ours']['partial']))}"
            ),
            "text",
        ),
        Col("逐块比较", lambda c: "相同" if c[1]["same"] else "不同", "text"),
        Col("sparsity()", lambda c: c[1]["flex"]["sparsity"] / 100, "percent"),
    )
    s.text(x_same=listing(FLEX_CASE_NAMES[n] for n, c in r["blocks"].items() if c["same"]))
    s.value(
        "count",
        x_causal_n=r["blocks"]["causal"]["n_key"],
        x_ragged_n=ragged["n_key"],
        x_ragged_last_partial=ragged["flex"]["partial"][-1],
        x_ragged_ours_full=ragged["ours"]["full"][-1],
    )
    s.value(
        "percent",
        x_causal_sparsity=r["blocks"]["causal"]["flex"]["sparsity"] / 100,
        x_ragged_sparsity=ragged["flex"]["sparsity"] / 100,
        x_ragged_share=(t * t - computed) / (t * t),
    )
    s.value(
        "difference",
        x_gap=a["gap"],
        x_lse_gap=max(a["lse_gap"], e["lse_gap"]),
        x_empty_gap=e["gap"],
    )
    s.text(x_empty=fmt.names("行", e["empty_rows"]))
    s.md(x_record=f"```json\n{fmt.json_text(r)}\n```")
    return s


def run_output() -> Section:
    """What running 02_tiles.py prints."""
    s = Section(PAGE, "运行结果示例")
    s.md(run_output=fmt.run_output("02_tiles.py"))
    return s


# -- the exercises ------------------------------------------------------------------------------------------
def online_exercise() -> Section:
    """Exercise 1: a row read block by block, with a last block not full."""
    s = Section(PAGE, "练习：一行分数，一块一块地读")
    a = ex.online_trace()
    s.holds(first_factor_zero_last_one=a["factors"][0] == 0.0 and a["factors"][-1] == 1.0)
    blocks = [
        {"b": b, "cols": cols, "m": m, "l": total, "factor": f}
        for b, (cols, (m, total), f) in enumerate(
            zip(tl.spans(len(ex.ONLINE_SCORES), ex.ONLINE_BLOCK), a["trace"], a["factors"])
        )
    ]
    s.table(
        "x1_table",
        blocks,
        Col("读完", lambda r: f"块 {r['b'] + 1}（{dash('Key ', r['cols'])}）", "text"),
        Col("这一块的分数", lambda r: fmt.vector([ex.ONLINE_SCORES[j] for j in r["cols"]]), "text"),
        Col("m", lambda r: r["m"]),
        Col("因子 e^(m_old − m_new)", lambda r: r["factor"]),
        Col("l", lambda r: r["l"]),
    )
    s.text(x1_weights=fmt.vector(a["weights"], fmt.fmt))
    return s


def cache_exercise() -> Section:
    """Exercise 2: blocks with a cache, query and key blocks of different sizes."""
    s = Section(PAGE, "练习：带缓存的块")
    a = ex.cache_blocks()
    kind_grid(
        s,
        "x2_table",
        a["kinds"],
        tl.spans(ex.CACHE_NEW, ex.CACHE_BQ),
        tl.spans(ex.CACHE_PAST + ex.CACHE_NEW, ex.CACHE_BK),
        label=lambda rows: f"{dash('行 ', rows)}，绝对位置 {dash('', rows, ex.CACHE_PAST)}",
    )
    s.value(
        "count",
        x2_full=a["counts"]["full"],
        x2_partial=a["counts"]["partial"],
        x2_empty=a["counts"]["empty"],
        x2_computed=a["computed"],
        x2_blocks=a["blocks"],
    )
    return s


def window_exercise() -> Section:
    """Exercise 3: how a sliding window's blocks grow with the length."""
    s = Section(PAGE, "练习：滑动窗口的块")
    a = ex.window_growth()
    steps = [b["window"] - a_["window"] for a_, b in zip(a, a[1:])]
    per_block = [
        step // ((b["n"] - a_["n"]) // ex.WINDOW_BLOCK) for step, a_, b in zip(steps, a, a[1:])
    ]
    s.holds(
        blocks_per_query_block_constant=len(set(per_block)) == 1,
        one_block_more_than_w_over_b=per_block[0] == ex.WINDOW // ex.WINDOW_BLOCK + 1,
    )
    s.text(x3_ns=counts(ex.WINDOW_NS))
    s.table(
        "x3_table",
        a,
        Col("n", lambda r: r["n"], "count"),
        Col("全部块", lambda r: r["blocks"], "count"),
        Col("因果要算的块", lambda r: r["causal"], "count"),
        Col("滑动窗口要算的块", lambda r: r["window"], "count"),
    )
    s.value("count", x3_per_block=per_block[0])
    return s


def guard_exercise() -> Section:
    """Exercise 4: which rows of a packed sequence cannot do without the guard."""
    s = Section(PAGE, "练习：哪些行离不开 −∞ 的保护")
    a = ex.packed_guard()
    n = len(a["doc"])
    second = a["doc"].index(1)  # the solution: the second document's first position
    s.holds(
        only_the_second_documents_first_row=a["rows"] == [second],
        it_shares_a_query_block_with_the_first=second % ex.GUARD_BLOCK != 0,
    )
    spans = tl.spans(n, ex.GUARD_BLOCK)
    kind_grid(s, "x4_table", a["kinds"], spans, spans)
    s.text(x4_rows=fmt.names("行", a["rows"]))
    return s


def exercises() -> list[Section]:
    return [online_exercise(), cache_exercise(), window_exercise(), guard_exercise()]
