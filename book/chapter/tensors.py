"""The tensors page's facts, tables and figures; a section raises where the page's words would be false."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import numpy as np

from chapter import conventions, fmt
from chapter import tensors_figures as figures
from chapter.fmt import Md, Table, glue_all  # noqa: F401  (glue_all: the page calls page.glue_all)

att = importlib.import_module("02_attention")
mh = importlib.import_module("02_multihead")
rope = importlib.import_module("02_rope")
tn = importlib.import_module("02_tensors")
ex = importlib.import_module("02_exercises_tensors")

PAGE = "张量一页"  # how fmt.holds names this page when a fixed sentence no longer holds
TOLERANCE = 1e-12  # float64: the batched and the row-by-row results may differ only by rounding


def visible_keys(row) -> str:
    """The keys a query row may read: ``[True, True, False, True]`` → ``0、1、3``; none → ``无``."""
    return "、".join(str(j) for j, ok in enumerate(row) if ok) or "无"


def flags(values) -> str:
    return "、".join(str(int(v)) for v in values)


def rows_text(rows_per_sequence) -> str:
    """Query rows per sequence: ``[[0, 1], []]`` → 「序列 0：查询 0、查询 1；序列 1：无」."""
    return "；".join(
        f"序列 {b}：{fmt.names('查询', rows)}" for b, rows in enumerate(rows_per_sequence)
    )


def masks_text(masks) -> str:
    """``attention_mask`` row by row: 「序列 0：0、1；序列 1：1、1」."""
    return "；".join(f"序列 {b}：{flags(row)}" for b, row in enumerate(np.asarray(masks)))


def observed_torch(seen: dict | None = None) -> dict:
    """The PyTorch observations on the CPU in ``02_library_conventions.json`` (or in ``seen``)."""
    return conventions.observed_on(seen, "cpu")["torch"]


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
    batch, heads, _, _ = q.shape
    kv_heads = k.shape[1]
    out = {}
    for b in range(batch):
        valid = [m == 1 for m in np.asarray(inputs["attention_mask"])[b].tolist()]
        positions = rope.padded_positions(valid)
        for h in range(heads):
            g = mh.kv_group(h, heads, kv_heads)
            q_rot = rope.rotate_rows(q[b, h].tolist(), positions[past:])
            k_rot = rope.rotate_rows(k[b, g].tolist(), positions)
            out[b, h] = att.attention(
                q_rot, k_rot, v[b, g].tolist(), past=past, key_valid=valid, empty_row="zero"
            )
    return out


def batch_values(inputs: dict) -> dict:
    """The end-to-end batch: inputs, positions, K/V heads, the table, and the largest differences."""
    q = inputs["q"]
    k = inputs["k"]
    r = tn.forward(inputs)
    pure = pure_rows(inputs)
    batch, heads, n_query, d = q.shape
    kv_heads, n_key = k.shape[1:3]
    mask = np.asarray(inputs["attention_mask"])
    past = inputs["past"]
    header = ["序列", "查询头", "读的 K/V 头", *(f"查询 {i} 的最大差" for i in range(n_query))]
    diffs = {}
    rows = []
    for (b, h), (weights, outputs) in pure.items():
        diffs[b, h] = [
            max(
                float(np.abs(r["weights"][b, h, i] - weights[i]).max()),
                float(np.abs(r["outputs"][b, h, i] - outputs[i]).max()),
            )
            for i in range(n_query)
        ]
        rows.append(
            [f"序列 {b}", f"头 {h}", f"K/V 头 {mh.kv_group(h, heads, kv_heads)}"]
            + [fmt.difference(x) for x in diffs[b, h]]
        )
    every = [x for ds in diffs.values() for x in ds]
    fmt.holds(PAGE, {"整批结果每一行都与纯 Python 的结果相符": max(every) <= TOLERANCE})
    rope_positions = [np.array(rope.padded_positions((m == 1).tolist())) for m in mask]
    same = [
        (r["positions"][b] == p)[mask[b] == 1].all() for b, p in enumerate(rope_positions)
    ]  # real tokens
    fmt.holds(
        PAGE,
        {
            "positions_from_mask 与 RoPE 一页的旋转位置相同": all(same),
            "PAD 处的位置编号是占位的 0": (r["positions"][mask == 0] == 0).all(),
        },
    )
    positions = [
        [f"序列 {b}", flags(m), flags(r["positions"][b]), "相同" if same[b] else "不同"]
        for b, m in enumerate(mask)
    ]
    index = np.arange(kv_heads, dtype=float).reshape(1, kv_heads, 1, 1)
    repeated = tn.repeat_kv(index, heads // kv_heads)[0, :, 0, 0]
    groups = [
        [f"头 {h}", f"K/V 头 {int(repeated[h])}", f"K/V 头 {mh.kv_group(h, heads, kv_heads)}"]
        for h in range(heads)
    ]
    table = [
        [
            f"序列 {b}",
            f"查询 {i}",
            fmt.count(past + i),
            fmt.count(int(r["positions"][b, past + i])),
            visible_keys(r["visible"][b, 0, i]),
            fmt.count(int(r["visible"][b, 0, i].sum())),
        ]
        for b in range(batch)
        for i in range(n_query)
    ]
    return {
        "b_batch": fmt.count(batch),
        "b_heads": fmt.count(heads),
        "b_kv_heads": fmt.count(kv_heads),
        "b_rep": fmt.count(heads // kv_heads),
        "b_d": fmt.count(d),
        "b_past": fmt.count(past),
        "b_new": fmt.count(n_query),
        "b_n_key": fmt.count(n_key),
        "b_mask": masks_text(mask),
        "b_one": fmt.count(1),
        "b_zero": fmt.count(0),
        "b_seed": fmt.count(tn.DEMO_SEED),
        "b_lo": fmt.short(-1.0),
        "b_hi": fmt.short(1.0),
        "b_shape_q": str(tuple(q.shape)),
        "b_shape_k": str(tuple(k.shape)),
        "b_shape_vis": str(tuple(r["visible"].shape)),
        "tbl_b_positions": Table(
            [
                "序列",
                "attention_mask",
                "positions_from_mask（PAD 处的 0 只是占位）",
                "与 RoPE 一页的旋转位置（真实 token）",
            ],
            positions,
        ),
        "tbl_b_groups": Table(["查询头", "repeat_kv 之后读的", "多头一页的 kv_group"], groups),
        "tbl_b_visible": Table(
            ["序列", "新查询", "绝对位置", "位置编号", "可见的 Key", "个数"], table
        ),
        "fig_batch": figures.batch_figure(r["visible"], mask),
        "tbl_b_diffs": Table(header, rows),
        "b_pairs": fmt.count(len(diffs)),
        "b_rows": fmt.count(len(every)),
        "b_worst": fmt.difference(max(every)),
        "b_exact": fmt.count(sum(x == 0.0 for x in every)),
    }


# -- dtype: two fills added in a batch -------------------------------------------------------------
def _nan_rows(masked, score: float, dtype: str) -> int:
    """Rows softmax turns into NaN when every score is ``score`` (added to the mask in ``dtype``)."""
    t = np.dtype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        x = (np.full(masked.shape, score, dtype=t) + masked).astype(np.float64)
        e = np.exp(x - x.max(axis=-1, keepdims=True))  # a row of −∞ only: (−∞) − (−∞) = NaN
        weights = e / e.sum(axis=-1, keepdims=True)
    return int(np.isnan(weights).any(axis=-1).sum())


def fill_counts(mask, dtype: str, scores=(-10.0, -20.0)) -> dict:
    """Causal and PAD masks of finfo.min added, against one table filled once: −∞ cells, empty, NaN rows."""
    mask = np.asarray(mask)
    batch, n = mask.shape
    causal = tn.visibility_batch(tn.causal, batch, 1, n, n)
    pad = tn.visibility_batch(tn.padding(mask), batch, 1, n, n)
    with np.errstate(over="ignore"):  # finfo.min + finfo.min overflows: what this table counts
        summed = tn.additive(causal, dtype) + tn.additive(pad, dtype)
    own = np.eye(n, dtype=bool)  # the query's own cell: causal allows it, only PAD can block it
    allowed = tn.visibility_batch(tn.and_rules(tn.causal, tn.padding(mask)), batch, 1, n, n)
    once = tn.additive(allowed, dtype)
    return {
        "summed_inf": int(np.isneginf(summed).sum()),
        "summed_inf_rows": int(np.isneginf(summed).all(axis=-1).sum()),
        "own_cell_causal": bool(causal[..., own].all()),
        "once_inf": int(np.isneginf(once).sum()),
        "both": int((~causal & ~pad).sum()),
        "cells": int(summed.size),
        "empty_rows": int((~allowed.any(axis=-1)).sum()),
        "nan": {float(s): (_nan_rows(summed, s, dtype), _nan_rows(once, s, dtype)) for s in scores},
    }


def overflow_threshold(dtype: str = "float16") -> int:
    """The smallest whole score s ≥ 1 with ``finfo(dtype).min − s`` = −∞ in ``dtype`` (0: none up to 2¹⁶)."""
    t = np.dtype(dtype)
    with np.errstate(over="ignore"):
        for s in range(1, 2**16 + 1):
            if np.isneginf(np.finfo(t).min - t.type(s)):
                return s
    return 0


def dtype_values(mask, scores=(-10.0, -20.0), seen: dict | None = None) -> dict:
    """The dtype section: −∞ and NaN counts per dtype, the float16 threshold, SDPA's fully masked row."""
    torch = observed_torch(seen)
    counts = {t: fill_counts(mask, t, scores) for t in tn.FLOAT_DTYPES}
    c16 = counts["float16"]
    low, high = (float(s) for s in scores)
    nan_types = [t for t, c in counts.items() if any(c["nan"][high])]
    claims = {
        "每种类型里相加都成了 −∞": all(c["summed_inf"] == c["both"] > 0 for c in counts.values()),
        "查询自己那一格因果规则总允许，相加不会让整行成 −∞": all(
            c["own_cell_causal"] and c["summed_inf_rows"] == 0 for c in counts.values()
        ),
        "填一次没有 −∞": all(c["once_inf"] == 0 for c in counts.values()),
        "有整行被屏蔽的行": c16["empty_rows"] > 0,
        f"分数 {low} 时没有 NaN": not any(any(c["nan"][low]) for c in counts.values()),
        f"分数 {high} 时有 NaN": bool(nan_types),
        "三种类型": len(counts) == 3,
        "相加与填一次的 NaN 行相同": all(
            a == b for c in counts.values() for a, b in c["nan"].values()
        ),
    }
    fmt.holds(PAGE, claims)
    rows = [
        [t, fmt.count(c["both"]), fmt.count(c["summed_inf"]), fmt.count(c["once_inf"])]
        + [
            f"{fmt.count(c['nan'][float(s)][0])} / {fmt.count(c['nan'][float(s)][1])}"
            for s in scores
        ]
        for t, c in counts.items()
    ]
    fmin = np.finfo(np.float16).min
    with np.errstate(over="ignore"):
        shifted = [(s, float(fmin + np.float16(s))) for s in scores]
    sdpa16 = torch["sdpa_fully_masked"]["default"]["float16"]
    finfo16 = torch["sdpa_fully_masked_finfo_min"]["float16"]
    fmt.holds(
        PAGE,
        {
            "float16 的整行被屏蔽的行，布尔与 −∞ 的 mask 给出同样的结果": sdpa16["bool"]
            == sdpa16["float"],
            "填 finfo.min 的 mask 与布尔的 mask 走同一个内核": finfo16["kernels"]
            == sdpa16["kernels"],
        },
    )
    return {
        "f_mask": masks_text(mask),
        "f_cells": fmt.count(c16["cells"]),
        "f_torch": torch_where(torch),
        "f_sdpa_empty": conventions.FULLY_MASKED[sdpa16["bool"]],
        "f_sdpa_kernels": conventions.kernel_words(sdpa16["kernels"]),
        "f_sdpa_finfo_min": conventions.FULLY_MASKED[finfo16["float"]],
        "f_empty": fmt.count(c16["empty_rows"]),
        "f_both": fmt.count(c16["both"]),
        "f_types": "、".join(counts),
        "f_nan_types": "、".join(nan_types),
        "f_low": fmt.short(low),
        "f_high": fmt.short(high),
        "tbl_fill": Table(
            ["dtype", "两条规则都禁止的格子", "相加后 −∞ 的格子", "填一次后 −∞ 的格子"]
            + [f"分数 {fmt.short(s)} 时 NaN 的行（相加 / 填一次）" for s in scores],
            rows,
        ),
        "f_threshold": fmt.count(overflow_threshold("float16")),
        "f_min16": fmt.short(float(fmin)),
        "f_scores": "；".join(
            f"分数 {fmt.short(s)}：finfo.min + ({fmt.short(s)}) = {fmt.short(x)}"
            for s, x in shifted
        ),
    }


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


def rules_values(n: int, w: int, n_prefix: int, n_sink: int, doc_ids) -> dict:
    """One table: for each query position, the keys each rule lets it read; the cache each rule needs."""
    rules = rules_of(n, w, n_prefix, n_sink, doc_ids)
    tables = {
        name: tn.visibility_batch(rule, 1, 1, n, n)[0, 0] for name, (rule, _) in rules.items()
    }
    rows = [[f"查询 {i}"] + [visible_keys(t[i]) for t in tables.values()] for i in range(n)]
    rows.append(["最后一个查询读几个 Key"] + [fmt.count(int(t[-1].sum())) for t in tables.values()])
    defs = [
        [name, f"`{text}`", fmt.count(int(tables[name].sum(-1).max()))]
        for name, (_, text) in rules.items()
    ]
    return {
        "r_n": fmt.count(n),
        "r_w": fmt.count(w),
        "r_prefix": fmt.count(n_prefix),
        "r_docs": flags(doc_ids),
        "r_sink": fmt.count(n_sink),
        "r_sink_cache": fmt.count(n_sink + w),
        "tbl_rules": Table(["查询"] + list(tables), rows),
        "tbl_rule_defs": Table(["规则", "谓词（True = 可见）", "一行最多可见的 Key"], defs),
    }


# -- the bugs, each against the right rule ---------------------------------------------------------
LO = -1.0
HI = 1.0
D = 2  # the bug examples' Q, K, V: one head of dimension D, entries uniform in [LO, HI]


def _draws(prefix: str, seed: int, n: int) -> tuple:
    """The bug examples' Q, K, V (rounded to one decimal) and the glued range, dimension and seed."""
    rng = np.random.default_rng(seed)
    text = {
        f"{prefix}_lo": fmt.short(LO),
        f"{prefix}_hi": fmt.short(HI),
        f"{prefix}_d": fmt.count(D),
        f"{prefix}_seed": fmt.count(seed),
    }
    return text, *(np.round(rng.uniform(LO, HI, (1, 1, n, D)), 1) for _ in range(3))


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


def packing_values(doc_ids, seed: int) -> dict:
    """Packing: the last document's outputs packed against it run alone, four ways × two embeddings."""
    doc_ids = list(doc_ids)
    n = len(doc_ids)
    last = doc_ids[-1]
    start = doc_ids.index(last)
    text, q, k, v = _draws("p", seed, n)
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
        for e in ("rope", "absolute")
    }
    rows = []
    ok = {}
    for doc_mask in (True, False):
        for reset in (True, False):
            cells = []
            for e in ("rope", "absolute"):
                out = packed_output(q, k, v, doc_ids, doc_mask=doc_mask, reset=reset, embedding=e)
                gap = float(np.abs(out[:, :, start:] - alone[e]).max())
                ok[doc_mask, reset, e] = gap <= TOLERANCE
                cells.append(fmt.difference(gap))
            rows.append(
                ["有" if doc_mask else "没有", "重新从 0 数" if reset else "接着数"] + cells
            )
    # the page: without the document mask both embeddings read the earlier document; with it, RoPE needs
    # no reset of the positions (a shift keeps the differences) and the position embeddings do
    no_mask = [ok[False, reset, e] for reset in (True, False) for e in ("rope", "absolute")]
    fmt.holds(
        PAGE,
        {
            "没有文档 mask 时，两种位置编码都读进了前面的文档": not any(no_mask),
            "有了文档 mask，RoPE 下不重数位置也与单独计算相符": ok[True, False, "rope"],
            "位置嵌入下不重数位置就不相符": not ok[True, False, "absolute"],
        },
    )
    return {
        "p_docs": flags(doc_ids),
        "p_last": fmt.count(last),
        **text,
        "tbl_packing": Table(
            ["文档 mask", "位置", "RoPE：与单独计算的最大差", "位置嵌入：与单独计算的最大差"],
            rows,
        ),
    }


def window_values(n: int, w: int, seed: int) -> dict:
    """The window's off-by-one: "w keys" against "w + 1 keys", with the check that exposes it."""
    text, q, k, v = _draws("w", seed, n)
    rows = []
    first = None
    for name, rule in (
        (f"连同自己共 w 个（sliding_window({w})）", tn.sliding_window(w)),
        (f"自己加上前面 w 个（sliding_window({w + 1})）", tn.sliding_window(w + 1)),
    ):
        vis = tn.visibility_batch(rule, 1, 1, n, n)
        out = tn.attention_batched(q, k, v, vis)[1]
        first = out if first is None else first
        same = sum(int(np.abs(out[0, 0, i] - first[0, 0, i]).max() == 0) for i in range(n))
        rows.append(
            [
                name,
                fmt.count(int(vis.sum(-1).max())),
                fmt.count(same),
                fmt.difference(float(np.abs(out - first).max())),
            ]
        )
    header = [
        "“窗口 w”的读法",
        "一行最多可见的 Key",
        "输出与第一种读法相同的行",
        "输出与第一种读法的最大差",
    ]
    return {"w_n": fmt.count(n), "w_w": fmt.count(w), **text, "tbl_window": Table(header, rows)}


# -- reading the libraries -------------------------------------------------------------------------
def library_values(seen: dict | None = None) -> dict:
    """The recorded SDPA cells of the libraries table (the rest is cited in the page); its figure."""
    torch = observed_torch(seen)
    n_key = np.shape(tn.DEMO_MASK)[1]
    return {
        "fig_align": figures.alignment_figure(n_key - tn.DEMO_PAST, n_key),
        "lib_sdpa_true": conventions.TRUE_MEANS[torch["sdpa"]["bool_true"]],
        "lib_causal": conventions.ALIGNMENT[torch["sdpa"]["is_causal"]].split("（")[0],
        "lib_torch": torch_where(torch),
    }


# -- the same batch through PyTorch and Hugging Face: what make crosscheck recorded ----------------
TORCH_RECORD = Path(tn.__file__).with_name("02_tensors_torch.json")


def torch_record() -> dict:
    """What ``code/02_tensors_torch.py`` printed when ``make crosscheck`` last ran it (a build: no torch)."""
    return json.loads(TORCH_RECORD.read_text(encoding="utf-8"))


def torch_values(record: dict | None = None, seen: dict | None = None) -> dict:
    """The PyTorch section: largest differences, the masks' equality, the pitfall's wrong rows, and where."""
    r = torch_record() if record is None else record
    b = r["batch"]
    p = r["prefill"]
    torch = observed_torch(seen)
    mha = torch["mha"]
    empty = torch["mha_fully_masked"][r["dtype"]]
    fast = torch["mha_fast_path"]["fully_masked"][r["dtype"]]
    claims = {  # the page's fixed sentences about the record and the observations
        "Hugging Face 的 sdpa_mask 造出的表与 visibility_batch 逐格相同": r["hf_equal"]
        and b["mask_equal"],
        "eager_mask 里 0 的位置与布尔表相同": r["hf_eager_equal"],
        "MultiheadAttention 要返回权重时，整行被屏蔽的行是 NaN": empty["weights"] == "nan",
        "MultiheadAttention 的快路径观察时真的走了": fast["weights_fast_path"]
        and fast["no_weights_fast_path"],
        "与 attention_batched 只差舍入量级": max(
            x[key] for x in (b, p) for key in ("sdpa_gap", "mha_gap")
        )
        <= TOLERANCE,
    }
    fmt.holds(PAGE, claims)
    device = conventions.DEVICE_NAMES[r["device"]]
    return {
        "t_where": f"PyTorch {r['torch']}、Transformers {r['transformers']}，{device}，{r['dtype']}",
        "t_mha_kpm": conventions.TRUE_MEANS[mha["key_padding_mask_true"]],
        "t_mha_attn": conventions.TRUE_MEANS[mha["attn_mask_bool_true"]],
        "t_sdpa_gap": fmt.difference(b["sdpa_gap"]),
        "t_mha_gap": fmt.difference(b["mha_gap"]),
        "t_mha_weights_empty": conventions.FULLY_MASKED[empty["weights"]],
        "t_mha_no_weights_empty": conventions.FULLY_MASKED[empty["no_weights"]],
        "t_mha_dtype": r["dtype"],
        "t_mha_fast_weights_empty": conventions.FULLY_MASKED[fast["weights"]],
        "t_mha_fast_no_weights_empty": conventions.FULLY_MASKED[fast["no_weights"]],
        "t_eager_fill": "、".join(fmt.short(x) for x in r["hf_eager_fill"]),
        "t_wrong_causal": rows_text(b["wrong_rows"]["is_causal"]),
        "t_wrong_lower": rows_text(b["wrong_rows"]["causal_lower_right"]),
        "t_wrong_mask": rows_text(b["wrong_rows"]["attn_mask"]),
        "t_prefill_empty": fmt.count(p["empty_rows"]),
        "t_prefill_gave": conventions.FULLY_MASKED.get(
            p["sdpa_on_empty_rows"], p["sdpa_on_empty_rows"]
        ),
        "t_prefill_gap": fmt.difference(max(p["sdpa_gap"], p["mha_gap"])),
        "t_prefill_wrong": rows_text(p["wrong_rows"]["is_causal"]),
        "t_tolerance": fmt.power(TOLERANCE),
        "t_record": Md(f"```json\n{fmt.json_text(r)}\n```"),
    }


# -- the exercises ---------------------------------------------------------------------------------
def exercise_values() -> dict:
    """Every number and table of the exercises and their solutions."""
    a1 = ex.sink_rows()
    a2 = ex.decode_positions()
    rows1 = [
        [f"查询 {i}", "、".join(map(str, ks)), fmt.count(len(ks))]
        for i, ks in enumerate(a1["visible"])
    ]
    rows2 = [
        [f"序列 {b}", flags(m), flags(p), fmt.count(nxt)]
        for b, (m, p, nxt) in enumerate(zip(ex.POS_MASK, a2["prefill"], a2["next"]))
    ]
    n2 = len(ex.POS_MASK[0])  # the new token's absolute position
    wrong2 = [b for b, nxt in enumerate(a2["next"]) if nxt != n2]
    fmt.holds(
        PAGE,
        {
            "会错的正是有 PAD 的序列": wrong2 == [b for b, m in enumerate(ex.POS_MASK) if 0 in m],
            "练习 2 的表里 PAD 处的 0 只是占位": all(
                p == 0 for m, ps in zip(ex.POS_MASK, a2["prefill"]) for x, p in zip(m, ps) if not x
            ),
        },
    )
    a3 = {name: ex.empty_rows(m) for name, m in ex.FILL_MASKS.items()}
    rows3 = [
        [
            name,
            flags(ex.FILL_MASKS[name][0]),
            fmt.names("查询", a["empty"]),
            fmt.names("查询", a["nan"]),
        ]
        for name, a in a3.items()
    ]
    score = fmt.short(ex.FILL_SCORE)
    empty = f"分数为 {score} 时整行成了 −∞ 的行"
    a5 = ex.library_masks()
    past = ex.LIB_PAST  # exercise 5: the SDPA mask and what is_causal=True reads

    def bools(row):
        # as torch prints a bool tensor
        return "、".join(str(bool(x)) for x in row)

    rows5 = [
        [
            f"序列 {b}",
            f"查询 {i}（绝对位置 {past + i}）",
            bools(a5["attn_mask"][b, 0, i]),
            visible_keys(a5["attn_mask"][b, 0, i]),
            visible_keys(a5["is_causal"][i]),
            "对" if i not in a5["wrong"][b] else "错",
        ]
        for b in range(len(ex.LIB_MASK))
        for i in range(len(a5["is_causal"]))
    ]
    return {
        "x1_n": fmt.count(ex.SINK_N),
        "x1_sinks": fmt.count(ex.SINK_SINKS),
        "x1_w": fmt.count(ex.SINK_W),
        "x1_table": Table(["查询", "可见的 Key", "个数"], rows1),
        "x1_cache": fmt.count(a1["cache"]),
        "x2_masks": masks_text(ex.POS_MASK),
        "x2_table": Table(["序列", "attention_mask", "预填时的位置", "下一个 token 的位置"], rows2),
        "x2_wrong": fmt.names("序列", wrong2),
        "x3_masks": "；".join(f"{name} 为 {flags(m[0])}" for name, m in ex.FILL_MASKS.items()),
        "x3_score": score,
        "x3_table": Table(["批", "attention_mask", "整行被屏蔽的查询行", empty], rows3),
        "x4_doctest": Md(fmt.doctest_block(ex.window_counts)),
        "x5_masks": masks_text(ex.LIB_MASK),
        "x5_past": fmt.count(past),
        "x5_wrong": rows_text(a5["wrong"]),
        "x5_table": Table(
            [
                "序列",
                "查询",
                "attn_mask 的这一行",
                "应读的 Key",
                "is_causal=True 读的 Key",
                "is_causal=True 对不对",
            ],
            rows5,
        ),
        "x5_kpm": Table(
            ["序列", "key_padding_mask"],
            [[f"序列 {b}", bools(r)] for b, r in enumerate(a5["key_padding_mask"])],
        ),
    }
