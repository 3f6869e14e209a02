"""The tensors page's book side: one function per section of book/ch02/tensors.md, each a page.Section.

The page types each example's inputs ({input} roles naming 02_tensors' and 02_exercises_tensors'
constants, or the ones below); a section glues what the run computes and checks the facts of the
page's fixed sentences with ``Section.holds``. The PyTorch section reads what ``make crosscheck``
recorded (``code/02_tensors_torch.json``, the observations of ``chapter.conventions``).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import numpy as np

from chapter import conventions, fmt
from chapter import tensors_figures as figures
from chapter.page import Col, Section, listing

att = importlib.import_module("02_attention")
mh = importlib.import_module("02_multihead")
rope = importlib.import_module("02_rope")
tn = importlib.import_module("02_tensors")
ex = importlib.import_module("02_exercises_tensors")

PAGE = "张量一页"
TOLERANCE = 1e-12  # float64: the batched and the row-by-row results may differ only by rounding
# The rules example is 02_tensors.RULES_EXAMPLE (the summary's rules table counts on it too); the page
# types these entries of it.
RULES_N = tn.RULES_EXAMPLE["n"]
RULES_W = tn.RULES_EXAMPLE["w"]
RULES_PREFIX = tn.RULES_EXAMPLE["n_prefix"]
RULES_SINK = tn.RULES_EXAMPLE["n_sink"]
RULES_DOCS = tn.RULES_EXAMPLE["doc_ids"]
# The page's inputs that no teaching file has (the page types them; tests/test_typed_inputs.py compares).
LO = -1.0
HI = (
    1.0  # the bug examples draw Q, K, V uniformly in [LO, HI]; the demo batch's draws lie there too
)
D = 2  # the bug examples' one head
SCORE_LOW = -10.0
SCORE_HIGH = -20.0  # the dtype table's scores: every score of a row equal to one of them
WINDOW_N = 6
WINDOW_W = 3
WINDOW_SEED = 1
PACK_DOCS = [0, 0, 0, 1, 1, 1]
PACK_SEED = 3
EMBEDDINGS = ("rope", "absolute")
TORCH_RECORD = Path(tn.__file__).with_name("02_tensors_torch.json")


def flags(values) -> str:
    """A mask row as the page prints it: ``0、1、1``."""
    return listing(int(v) for v in values)


def readable(row) -> str:
    """The keys a query row may read: ``[True, True, False, True]`` → ``0、1、3``; none → ``无``."""
    return listing(j for j, ok in enumerate(row) if ok)


def rows_text(rows_per_sequence) -> str:
    """Query rows per sequence: ``[[0, 1], []]`` → 「序列 0：查询 0、查询 1；序列 1：无」."""
    return "；".join(
        f"序列 {b}：{fmt.names('查询', rows)}" for b, rows in enumerate(rows_per_sequence)
    )


def masks_text(masks) -> str:
    """``attention_mask`` row by row: 「序列 0：0、1；序列 1：1、1」."""
    return "；".join(f"序列 {b}：{flags(row)}" for b, row in enumerate(masks))


def observed_torch() -> dict:
    """The PyTorch observations on the CPU in ``02_library_conventions.json``."""
    return conventions.observed_on(None, "cpu")["torch"]


def torch_where(torch: dict) -> str:
    """Where a PyTorch observation was made: ``PyTorch 2.13.0+cpu，CPU``."""
    return f"PyTorch {torch['version']}，{conventions.DEVICE_NAMES[torch['device']]}"


# -- one batch, end to end -------------------------------------------------------------------------
def pure_rows(inputs: dict) -> dict:
    """Each (sequence, head) by the earlier pages' pure-Python functions: ``{(b, h): (weights, outputs)}``."""
    q = inputs["q"]
    k = inputs["k"]
    v = inputs["v"]
    past = inputs["past"]
    heads = q.shape[1]
    kv_heads = k.shape[1]
    out = {}
    for b, row in enumerate(np.asarray(inputs["attention_mask"]).tolist()):
        valid = [m == 1 for m in row]
        positions = rope.padded_positions(valid)
        for h in range(heads):
            g = mh.kv_group(h, heads, kv_heads)
            q_rot = rope.rotate_rows(q[b, h].tolist(), positions[past:])
            k_rot = rope.rotate_rows(k[b, g].tolist(), positions)
            out[b, h] = att.attention(
                q_rot, k_rot, v[b, g].tolist(), past=past, key_valid=valid, empty_row="zero"
            )
    return out


def row_gaps(inputs: dict, batched: dict) -> dict:
    """Per (sequence, head), per new query: the largest difference of weights and outputs to the pure rows."""
    gaps = {}
    for (b, h), (weights, outputs) in pure_rows(inputs).items():
        gaps[b, h] = [
            max(
                float(np.abs(batched["weights"][b, h, i] - weights[i]).max()),
                float(np.abs(batched["outputs"][b, h, i] - outputs[i]).max()),
            )
            for i in range(len(weights))
        ]
    return gaps


def batch() -> Section:
    """The demo batch: positions, K/V groups, visibility, and every row against the pure-Python functions."""
    s = Section(PAGE, "一批数据，从头到尾")
    x = tn.demo_inputs()
    r = tn.forward(x)
    mask = x["attention_mask"]
    past = x["past"]
    n_batch, heads, n_query, _ = x["q"].shape
    kv_heads, n_key = x["k"].shape[1:3]
    gaps = row_gaps(x, r)
    every = [g for row in gaps.values() for g in row]
    rope_positions = [rope.padded_positions((m == 1).tolist()) for m in mask]
    same = [(r["positions"][b] == p)[mask[b] == 1].all() for b, p in enumerate(rope_positions)]
    index = np.arange(kv_heads, dtype=float).reshape(1, kv_heads, 1, 1)
    repeated = tn.repeat_kv(index, heads // kv_heads)[0, :, 0, 0]
    drawn = np.concatenate([x[name].ravel() for name in ("q", "k", "v")])
    s.holds(
        every_row_matches_pure_python=max(every) <= TOLERANCE,
        positions_match_rope=all(same),
        pad_positions_are_zero=bool((r["positions"][mask == 0] == 0).all()),
        heads_share_one_table=bool((r["visible"] == r["visible"][:, :1]).all()),
        drawn_between_lo_and_hi=bool(((LO <= drawn) & (drawn <= HI)).all()),
    )
    s.value("count", b_batch=n_batch, b_rep=heads // kv_heads, b_new=n_query, b_n_key=n_key)
    s.text(
        b_mask=masks_text(mask),
        b_shape_q=str(tuple(x["q"].shape)),
        b_shape_k=str(tuple(x["k"].shape)),
        b_shape_vis=str(tuple(r["visible"].shape)),
    )
    s.table(
        "tbl_b_positions",
        range(n_batch),
        Col("序列", "序列 {}".format, "text"),
        Col("attention_mask", lambda b: flags(mask[b]), "text"),
        Col(
            "positions_from_mask（PAD 处的 0 只是占位）", lambda b: flags(r["positions"][b]), "text"
        ),
        Col(
            "与 RoPE 一页的旋转位置（真实 token）", lambda b: "相同" if same[b] else "不同", "text"
        ),
    )
    s.table(
        "tbl_b_groups",
        range(heads),
        Col("查询头", "头 {}".format, "text"),
        Col("repeat_kv 之后读的", lambda h: f"K/V 头 {int(repeated[h])}", "text"),
        Col("多头一页的 kv_group", lambda h: f"K/V 头 {mh.kv_group(h, heads, kv_heads)}", "text"),
    )
    s.table(
        "tbl_b_visible",
        [(b, i) for b in range(n_batch) for i in range(n_query)],
        Col("序列", lambda bi: f"序列 {bi[0]}", "text"),
        Col("新查询", lambda bi: f"查询 {bi[1]}", "text"),
        Col("绝对位置", lambda bi: past + bi[1], "count"),
        Col("位置编号", lambda bi: int(r["positions"][bi[0], past + bi[1]]), "count"),
        Col("可见的 Key", lambda bi: readable(r["visible"][bi[0], 0, bi[1]]), "text"),
        Col("个数", lambda bi: int(r["visible"][bi[0], 0, bi[1]].sum()), "count"),
    )
    s.figure("fig_batch", figures.batch_figure(r["visible"], mask))
    s.table(
        "tbl_b_diffs",
        gaps,
        Col("序列", lambda bh: f"序列 {bh[0]}", "text"),
        Col("查询头", lambda bh: f"头 {bh[1]}", "text"),
        Col("读的 K/V 头", lambda bh: f"K/V 头 {mh.kv_group(bh[1], heads, kv_heads)}", "text"),
        *(
            Col(f"查询 {i} 的最大差", lambda bh, i=i: gaps[bh][i], "difference")
            for i in range(n_query)
        ),
    )
    s.value("count", b_pairs=len(gaps), b_rows=len(every), b_exact=sum(g == 0.0 for g in every))
    s.value("difference", b_worst=max(every))
    return s


# -- more visibility rules -------------------------------------------------------------------------
def rules_of(n: int, w: int, n_prefix: int, n_sink: int, doc_ids) -> dict:
    """The page's rules on one sequence of ``n`` positions, by name: ``(rule, its predicate as written)``."""
    return {
        "因果": (tn.causal, "k ≤ q"),
        f"滑动窗口 w = {w}": (tn.sliding_window(w), "q − w < k ≤ q"),
        "同一文档（且因果）": (
            tn.and_rules(tn.causal, tn.document([doc_ids])),
            "doc[q] = doc[k] 且 k ≤ q",
        ),
        f"前缀 n = {n_prefix}": (tn.prefix_lm(n_prefix), "k < n 或 k ≤ q"),
        f"汇点 {n_sink} 个 + 窗口 w = {w}": (
            tn.sinks(n_sink, w),
            "k ≤ q 且（k < n_sink 或 k > q − w）",
        ),
    }


def rules() -> Section:
    """For each query position, the keys each rule lets it read; the cache each rule needs."""
    s = Section(PAGE, "更多可见性规则")
    n = RULES_N
    named = rules_of(n, RULES_W, RULES_PREFIX, RULES_SINK, RULES_DOCS)
    tables = {
        name: tn.visibility_batch(rule, 1, 1, n, n)[0, 0] for name, (rule, _) in named.items()
    }
    cells = [[readable(t[i]) for t in tables.values()] for i in range(n)]
    cells.append([fmt.count(int(t[-1].sum())) for t in tables.values()])
    labels = [f"查询 {i}" for i in range(n)] + ["最后一个查询读几个 Key"]
    s.grid("tbl_rules", "查询", cells, labels, list(tables), kind="text")
    s.table(
        "tbl_rule_defs",
        named,
        Col("规则", str, "text"),
        Col("谓词（True = 可见）", lambda name: f"`{named[name][1]}`", "text"),
        Col("一行最多可见的 Key", lambda name: int(tables[name].sum(-1).max()), "count"),
    )
    s.value("count", r_sink_cache=RULES_SINK + RULES_W)
    return s


# -- dtype: two fills added in a batch -------------------------------------------------------------
def _nan_rows(masked, score: float, dtype: str) -> int:
    """Rows softmax turns into NaN when every score is ``score`` (added to the mask in ``dtype``)."""
    t = np.dtype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        x = (np.full(masked.shape, score, dtype=t) + masked).astype(np.float64)
        e = np.exp(x - x.max(axis=-1, keepdims=True))  # a row of −∞ only: (−∞) − (−∞) = NaN
        weights = e / e.sum(axis=-1, keepdims=True)
    return int(np.isnan(weights).any(axis=-1).sum())


def fill_counts(mask, dtype: str, scores) -> dict:
    """Causal and PAD masks of finfo.min added, against one table filled once: −∞ cells, empty, NaN rows."""
    mask = np.asarray(mask)
    n_batch, n = mask.shape
    causal = tn.visibility_batch(tn.causal, n_batch, 1, n, n)
    pad = tn.visibility_batch(tn.padding(mask), n_batch, 1, n, n)
    with np.errstate(over="ignore"):  # finfo.min + finfo.min overflows: what this table counts
        summed = tn.additive(causal, dtype) + tn.additive(pad, dtype)
    own = np.eye(n, dtype=bool)  # the query's own cell: causal allows it, only PAD can block it
    allowed = tn.visibility_batch(tn.and_rules(tn.causal, tn.padding(mask)), n_batch, 1, n, n)
    once = tn.additive(allowed, dtype)
    return {
        "summed_inf": int(np.isneginf(summed).sum()),
        "summed_inf_rows": int(np.isneginf(summed).all(axis=-1).sum()),
        "own_cell_causal": bool(causal[..., own].all()),
        "once_inf": int(np.isneginf(once).sum()),
        "both": int((~causal & ~pad).sum()),
        "cells": int(summed.size),
        "empty_rows": int((~allowed.any(axis=-1)).sum()),
        "nan": {s: (_nan_rows(summed, s, dtype), _nan_rows(once, s, dtype)) for s in scores},
    }


def overflow_threshold(dtype: str = "float16") -> int:
    """The smallest whole score s ≥ 1 with ``finfo(dtype).min − s`` = −∞ in ``dtype`` (0: none up to 2¹⁶)."""
    t = np.dtype(dtype)
    with np.errstate(over="ignore"):
        for s in range(1, 2**16 + 1):
            if np.isneginf(np.finfo(t).min - t.type(s)):
                return s
    return 0


def dtype() -> Section:
    """−∞ and NaN counts per dtype on the demo mask, the float16 threshold, SDPA's fully masked row."""
    s = Section(PAGE, "两张加性 mask 相加：溢出成 −∞")
    scores = (SCORE_LOW, SCORE_HIGH)
    counts = {t: fill_counts(tn.DEMO_MASK, t, scores) for t in tn.FLOAT_DTYPES}
    c16 = counts["float16"]
    nan_types = [t for t, c in counts.items() if any(c["nan"][SCORE_HIGH])]
    torch = observed_torch()
    sdpa16 = torch["sdpa_fully_masked"]["default"]["float16"]
    finfo16 = torch["sdpa_fully_masked_finfo_min"]["float16"]
    s.holds(
        sums_overflow_to_minus_inf=all(c["summed_inf"] == c["both"] > 0 for c in counts.values()),
        own_cell_keeps_rows_finite=all(
            c["own_cell_causal"] and c["summed_inf_rows"] == 0 for c in counts.values()
        ),
        one_fill_has_no_minus_inf=all(c["once_inf"] == 0 for c in counts.values()),
        has_fully_masked_rows=c16["empty_rows"] > 0,
        no_nan_at_low_score=not any(any(c["nan"][SCORE_LOW]) for c in counts.values()),
        nan_at_high_score=bool(nan_types),
        three_dtypes=len(counts) == 3,
        same_nan_rows_summed_or_once=all(
            a == b for c in counts.values() for a, b in c["nan"].values()
        ),
        sdpa_bool_and_inf_masks_agree=sdpa16["bool"] == sdpa16["float"],
        finfo_min_mask_same_kernels=finfo16["kernels"] == sdpa16["kernels"],
    )
    s.text(
        f_mask=masks_text(tn.DEMO_MASK),
        f_torch=torch_where(torch),
        f_sdpa_empty=conventions.FULLY_MASKED[sdpa16["bool"]],
        f_sdpa_kernels=conventions.kernel_words(sdpa16["kernels"]),
        f_sdpa_finfo_min=conventions.FULLY_MASKED[finfo16["float"]],
        f_types=listing(counts),
        f_nan_types=listing(nan_types),
    )
    s.value("count", f_cells=c16["cells"], f_empty=c16["empty_rows"], f_both=c16["both"])

    def nan_rows(score):
        return lambda t: "{} / {}".format(*map(fmt.count, counts[t]["nan"][score]))

    s.table(
        "tbl_fill",
        counts,
        Col("dtype", str, "text"),
        Col("两条规则都禁止的格子", lambda t: counts[t]["both"], "count"),
        Col("相加后 −∞ 的格子", lambda t: counts[t]["summed_inf"], "count"),
        Col("填一次后 −∞ 的格子", lambda t: counts[t]["once_inf"], "count"),
        *(
            Col(f"分数 {fmt.short(x)} 时 NaN 的行（相加 / 填一次）", nan_rows(x), "text")
            for x in scores
        ),
    )
    fmin = np.finfo(np.float16).min
    with np.errstate(over="ignore"):
        shifted = {x: float(fmin + np.float16(x)) for x in scores}
    s.value("count", f_threshold=overflow_threshold("float16"))
    s.value("short", f_min16=float(fmin))
    s.text(
        f_scores="；".join(
            f"分数 {fmt.short(x)}：finfo.min + ({fmt.short(x)}) = {fmt.short(y)}"
            for x, y in shifted.items()
        )
    )
    return s


# -- the bugs, each against the right rule ---------------------------------------------------------
def draws(seed: int, n: int) -> list[np.ndarray]:
    """The bug examples' Q, K, V: one head of dimension D, uniform in [LO, HI], rounded to one decimal."""
    rng = np.random.default_rng(seed)
    return [np.round(rng.uniform(LO, HI, (1, 1, n, D)), 1) for _ in range(3)]


def window() -> Section:
    """The window's off-by-one: "w keys" against "w + 1 keys", with the check that exposes it."""
    s = Section(PAGE, "滑动窗口差一格")
    n = WINDOW_N
    w = WINDOW_W
    q, k, v = draws(WINDOW_SEED, n)
    readings = {
        f"连同自己共 w 个（sliding_window({w})）": tn.sliding_window(w),
        f"自己加上前面 w 个（sliding_window({w + 1})）": tn.sliding_window(w + 1),
    }
    visible = {name: tn.visibility_batch(rule, 1, 1, n, n) for name, rule in readings.items()}
    out = {name: tn.attention_batched(q, k, v, vis)[1] for name, vis in visible.items()}
    first = next(iter(out.values()))
    s.table(
        "tbl_window",
        readings,
        Col("“窗口 w”的读法", str, "text"),
        Col("一行最多可见的 Key", lambda name: int(visible[name].sum(-1).max()), "count"),
        Col(
            "输出与第一种读法相同的行",
            lambda name: sum(bool((out[name][0, 0, i] == first[0, 0, i]).all()) for i in range(n)),
            "count",
        ),
        Col(
            "输出与第一种读法的最大差",
            lambda name: float(np.abs(out[name] - first).max()),
            "difference",
        ),
    )
    return s


def packed_output(q, k, v, doc_ids, *, doc_mask: bool, reset: bool, embedding: str) -> np.ndarray:
    """One packed sequence (batch 1, one head): its outputs for a choice of mask, positions and embedding."""
    doc_ids = list(doc_ids)
    n = len(doc_ids)
    positions = np.array([[i - doc_ids.index(d) if reset else i for i, d in enumerate(doc_ids)]])
    if embedding == "rope":
        q = tn.rope_batched(q, positions)
        k = tn.rope_batched(k, positions)
    else:  # for comparison: each position's sinusoidal vector added to its row
        d = q.shape[-1]
        angle = positions[..., None] / 10000.0 ** (np.arange(0, d, 2) / d)  # (batch, n, d/2)
        e = np.empty(positions.shape + (d,))
        e[..., 0::2] = np.sin(angle)
        e[..., 1::2] = np.cos(angle)
        q, k, v = (x + e[:, None] for x in (q, k, v))
    rule = tn.and_rules(tn.causal, tn.document([doc_ids])) if doc_mask else tn.causal
    return tn.attention_batched(q, k, v, tn.visibility_batch(rule, 1, 1, n, n))[1]


def packing() -> Section:
    """The last document's outputs packed against it run alone, four ways × two embeddings."""
    s = Section(PAGE, "打包：文档 mask 与位置")
    n = len(PACK_DOCS)
    last = PACK_DOCS[-1]
    start = PACK_DOCS.index(last)
    q, k, v = draws(PACK_SEED, n)
    alone = {
        e: packed_output(
            q[:, :, start:],
            k[:, :, start:],
            v[:, :, start:],
            [0] * (n - start),
            doc_mask=False,
            reset=False,
            embedding=e,
        )
        for e in EMBEDDINGS
    }
    ways = [(doc_mask, reset) for doc_mask in (True, False) for reset in (True, False)]
    gap = {}
    for doc_mask, reset in ways:
        for e in EMBEDDINGS:
            out = packed_output(q, k, v, PACK_DOCS, doc_mask=doc_mask, reset=reset, embedding=e)
            gap[doc_mask, reset, e] = float(np.abs(out[:, :, start:] - alone[e]).max())
    ok = {way: g <= TOLERANCE for way, g in gap.items()}
    # without the document mask both embeddings read the earlier document; with it, RoPE needs no
    # reset of the positions (a shift keeps the differences) and the position embeddings do
    s.holds(
        no_doc_mask_reads_earlier_document=not any(
            ok[False, reset, e] for reset in (True, False) for e in EMBEDDINGS
        ),
        rope_matches_without_reset=ok[True, False, "rope"],
        embedding_differs_without_reset=not ok[True, False, "absolute"],
    )
    s.value("count", p_last=last)
    s.table(
        "tbl_packing",
        ways,
        Col("文档 mask", lambda way: "有" if way[0] else "没有", "text"),
        Col("位置", lambda way: "重新从 0 数" if way[1] else "接着数", "text"),
        Col("RoPE：与单独计算的最大差", lambda way: gap[(*way, "rope")], "difference"),
        Col("位置嵌入：与单独计算的最大差", lambda way: gap[(*way, "absolute")], "difference"),
    )
    return s


# -- reading the libraries -------------------------------------------------------------------------
def libraries() -> Section:
    """The recorded SDPA cells of the libraries table (the rest is cited in the page); its figure."""
    s = Section(PAGE, "读懂各库的 mask")
    torch = observed_torch()
    n_key = len(tn.DEMO_MASK[0])
    s.figure("fig_align", figures.alignment_figure(n_key - tn.DEMO_PAST, n_key))
    s.text(
        lib_sdpa_true=conventions.TRUE_MEANS[torch["sdpa"]["bool_true"]],
        lib_causal=conventions.ALIGNMENT[torch["sdpa"]["is_causal"]].split("（")[0],
        lib_torch=torch_where(torch),
    )
    return s


# -- the same batch through PyTorch and Hugging Face: what make crosscheck recorded ----------------
def torch_record() -> dict:
    """What ``code/02_tensors_torch.py`` printed when ``make crosscheck`` last ran it (a build: no torch)."""
    return json.loads(TORCH_RECORD.read_text(encoding="utf-8"))


def torch_section() -> Section:
    """Largest differences, the masks' equality, the pitfall's wrong rows, and where they were observed."""
    s = Section(PAGE, "同一批交给 PyTorch 与 Hugging Face")
    r = torch_record()
    b = r["batch"]
    p = r["prefill"]
    torch = observed_torch()
    mha = torch["mha"]
    empty = torch["mha_fully_masked"][r["dtype"]]
    fast = torch["mha_fast_path"]["fully_masked"][r["dtype"]]
    s.holds(
        hf_sdpa_mask_is_the_table=r["hf_equal"] and b["mask_equal"],
        eager_zeros_are_the_table=r["hf_eager_equal"],
        mha_weights_nan_on_empty_rows=empty["weights"] == "nan",
        mha_fast_path_taken=fast["weights_fast_path"] and fast["no_weights_fast_path"],
        gaps_at_rounding_level=max(x[g] for x in (b, p) for g in ("sdpa_gap", "mha_gap"))
        <= TOLERANCE,
    )
    device = conventions.DEVICE_NAMES[r["device"]]
    s.text(
        t_where=f"PyTorch {r['torch']}、Transformers {r['transformers']}，{device}，{r['dtype']}",
        t_mha_kpm=conventions.TRUE_MEANS[mha["key_padding_mask_true"]],
        t_mha_attn=conventions.TRUE_MEANS[mha["attn_mask_bool_true"]],
        t_mha_weights_empty=conventions.FULLY_MASKED[empty["weights"]],
        t_mha_no_weights_empty=conventions.FULLY_MASKED[empty["no_weights"]],
        t_mha_dtype=r["dtype"],
        t_mha_fast_weights_empty=conventions.FULLY_MASKED[fast["weights"]],
        t_mha_fast_no_weights_empty=conventions.FULLY_MASKED[fast["no_weights"]],
        t_eager_fill=listing(map(fmt.short, r["hf_eager_fill"])),
        t_wrong_causal=rows_text(b["wrong_rows"]["is_causal"]),
        t_wrong_lower=rows_text(b["wrong_rows"]["causal_lower_right"]),
        t_wrong_mask=rows_text(b["wrong_rows"]["attn_mask"]),
        t_prefill_gave=conventions.FULLY_MASKED.get(
            p["sdpa_on_empty_rows"], p["sdpa_on_empty_rows"]
        ),
        t_prefill_wrong=rows_text(p["wrong_rows"]["is_causal"]),
    )
    s.value(
        "difference",
        t_sdpa_gap=b["sdpa_gap"],
        t_mha_gap=b["mha_gap"],
        t_prefill_gap=max(p["sdpa_gap"], p["mha_gap"]),
    )
    s.value("count", t_prefill_empty=p["empty_rows"])
    s.md(t_record=f"```json\n{fmt.json_text(r)}\n```")
    return s


def run_output() -> Section:
    """What running 02_tensors.py prints."""
    s = Section(PAGE, "运行结果示例")
    s.md(run_output=fmt.run_output("02_tensors.py"))
    return s


# -- the exercises ---------------------------------------------------------------------------------
def bools(row) -> str:
    """A row of flags as torch prints a bool tensor: ``True、False``."""
    return listing(bool(x) for x in row)


def exercises() -> Section:
    """Every number and table of the exercises and their solutions."""
    s = Section(PAGE, "练习")
    a1 = ex.sink_rows()
    s.table(
        "x1_table",
        range(len(a1["visible"])),
        Col("查询", "查询 {}".format, "text"),
        Col("可见的 Key", lambda i: listing(a1["visible"][i]), "text"),
        Col("个数", lambda i: len(a1["visible"][i]), "count"),
    )
    s.value("count", x1_cache=a1["cache"])

    a2 = ex.decode_positions()
    n2 = len(ex.POS_MASK[0])  # the new token's absolute position
    wrong2 = [b for b, nxt in enumerate(a2["next"]) if nxt != n2]
    s.holds(
        wrong_are_the_padded_sequences=wrong2 == [b for b, m in enumerate(ex.POS_MASK) if 0 in m],
        pad_positions_are_placeholders=all(
            p == 0 for m, ps in zip(ex.POS_MASK, a2["prefill"]) for x, p in zip(m, ps) if not x
        ),
    )
    s.text(x2_masks=masks_text(ex.POS_MASK), x2_wrong=fmt.names("序列", wrong2))
    s.table(
        "x2_table",
        range(len(ex.POS_MASK)),
        Col("序列", "序列 {}".format, "text"),
        Col("attention_mask", lambda b: flags(ex.POS_MASK[b]), "text"),
        Col("预填时的位置", lambda b: flags(a2["prefill"][b]), "text"),
        Col("下一个 token 的位置", lambda b: a2["next"][b], "count"),
    )

    a3 = {name: ex.empty_rows(m) for name, m in ex.FILL_MASKS.items()}
    s.text(x3_masks="；".join(f"{name} 为 {flags(m[0])}" for name, m in ex.FILL_MASKS.items()))
    s.table(
        "x3_table",
        a3,
        Col("批", str, "text"),
        Col("attention_mask", lambda name: flags(ex.FILL_MASKS[name][0]), "text"),
        Col("整行被屏蔽的查询行", lambda name: fmt.names("查询", a3[name]["empty"]), "text"),
        Col(
            f"分数为 {fmt.short(ex.FILL_SCORE)} 时整行成了 −∞ 的行",
            lambda name: fmt.names("查询", a3[name]["nan"]),
            "text",
        ),
    )
    s.md(x4_doctest=fmt.doctest_block(ex.window_counts))

    a5 = ex.library_masks()
    past = ex.LIB_PAST
    s.text(x5_masks=masks_text(ex.LIB_MASK), x5_wrong=rows_text(a5["wrong"]))
    s.table(
        "x5_table",
        [(b, i) for b in range(len(ex.LIB_MASK)) for i in range(len(a5["is_causal"]))],
        Col("序列", lambda bi: f"序列 {bi[0]}", "text"),
        Col("查询", lambda bi: f"查询 {bi[1]}（绝对位置 {past + bi[1]}）", "text"),
        Col("attn_mask 的这一行", lambda bi: bools(a5["attn_mask"][bi[0], 0, bi[1]]), "text"),
        Col("应读的 Key", lambda bi: readable(a5["attn_mask"][bi[0], 0, bi[1]]), "text"),
        Col("is_causal=True 读的 Key", lambda bi: readable(a5["is_causal"][bi[1]]), "text"),
        Col(
            "is_causal=True 对不对",
            lambda bi: "错" if bi[1] in a5["wrong"][bi[0]] else "对",
            "text",
        ),
    )
    s.table(
        "x5_kpm",
        range(len(a5["key_padding_mask"])),
        Col("序列", "序列 {}".format, "text"),
        Col("key_padding_mask", lambda b: bools(a5["key_padding_mask"][b]), "text"),
    )
    return s
