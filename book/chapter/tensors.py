"""The tensors page's book side (``book/ch02/tensors.md``): what it glues, from ``code/02_tensors.py``.

Each ``*_values`` function runs one example once and returns every name the page glues for it (text,
:class:`Table`, :class:`Md`, figures from ``chapter.tensors_figures``); its sentences are chosen from the
same results as its tables and tested on other inputs in ``tests/test_chapter_tensors.py``.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import numpy as np

from chapter import fmt
from chapter import conventions
from chapter import tensors_figures as figures
from chapter.fmt import Md, Table, glue_all  # noqa: F401  (glue_all: the page calls page.glue_all)

att = importlib.import_module("02_attention")
mh = importlib.import_module("02_multihead")
rope = importlib.import_module("02_rope")
tn = importlib.import_module("02_tensors")
ex = importlib.import_module("02_exercises_tensors")

TOLERANCE = 1e-12  # float64: the batched and the row-by-row results may differ only by rounding


def visible_keys(row) -> str:
    """The keys a query row may read: ``[True, True, False, True]`` → ``0、1、3``; none → ``无``."""
    keys = [str(j) for j, ok in enumerate(row) if ok]
    return "、".join(keys) if keys else "无"


def flags(values) -> str:
    return "、".join(str(int(v)) for v in values)


def rows_text(rows_per_sequence) -> str:
    """Query rows per sequence: ``[[0, 1], []]`` → 「序列 0：查询 0、查询 1；序列 1：无」."""
    return "；".join(f"序列 {b}：" + ("、".join(f"查询 {i}" for i in rows) or "无")
                    for b, rows in enumerate(rows_per_sequence))


def masks_text(masks) -> str:
    """``attention_mask`` row by row: 「序列 0：0、1；序列 1：1、1」."""
    return "；".join(f"序列 {b}：{flags(row)}" for b, row in enumerate(np.asarray(masks)))


# -- one batch, end to end ------------------------------------------------------------------------------------
def pure_rows(inputs: dict) -> dict:
    """Every (sequence, head) of the batch by the earlier pages' pure-Python functions, row by row.

    RoPE by ``02_rope.rotate_rows`` at ``02_rope.padded_positions``, the K/V head by
    ``02_multihead.kv_group``, the table by ``02_attention.visibility`` (``past``, ``key_valid``), the
    attention by ``02_attention.attention``. Returns ``{(b, h): (weights, outputs)}``.
    """
    q, k, v, past = inputs["q"], inputs["k"], inputs["v"], inputs["past"]
    (batch, heads, _, _), kv_heads = q.shape, k.shape[1]
    out = {}
    for b in range(batch):
        valid = [m == 1 for m in np.asarray(inputs["attention_mask"])[b].tolist()]
        positions = rope.padded_positions(valid)
        for h in range(heads):
            g = mh.kv_group(h, heads, kv_heads)
            q_rot = rope.rotate_rows(q[b, h].tolist(), positions[past:])
            k_rot = rope.rotate_rows(k[b, g].tolist(), positions)
            out[b, h] = att.attention(q_rot, k_rot, v[b, g].tolist(), past=past, key_valid=valid, empty_row="zero")
    return out


def agreement_sentence(diffs: dict, tolerance: float = TOLERANCE) -> str:
    """``{(b, h): [max |diff| of each query row]}`` as one conclusion.

    >>> agreement_sentence({(0, 0): [0.0, 1e-16], (0, 1): [0.0, 0.0]})
    '2 个（序列，头）共 4 行，每一行都与纯 Python 的结果相符：最大的差是 1.0 × 10⁻¹⁶，其中 3 行逐位相同。'
    >>> agreement_sentence({(0, 0): [0.0, 0.5], (1, 0): [0.0, 0.0]})
    '2 个（序列，头）共 4 行，有 1 行与纯 Python 的结果不符（序列 0 头 0 的第 1 行），最大的差是 0.5000。'
    """
    if not isinstance(diffs, dict) or not diffs:
        raise ValueError("diffs 必须是非空字典：(序列, 头) → 每行的最大差")
    rows = [(key, i, d) for key, ds in diffs.items() for i, d in enumerate(ds)]
    worst, exact = max(d for _, _, d in rows), sum(d == 0.0 for _, _, d in rows)
    bad = [f"序列 {b} 头 {h} 的第 {i} 行" for (b, h), i, d in rows if d > tolerance]
    head = f"{len(diffs)} 个（序列，头）共 {len(rows)} 行，"
    if bad:
        return head + f"有 {len(bad)} 行与纯 Python 的结果不符（{'、'.join(bad)}），最大的差是 {fmt.difference(worst)}。"
    return head + f"每一行都与纯 Python 的结果相符：最大的差是 {fmt.difference(worst)}，其中 {exact} 行逐位相同。"


def batch_values(inputs: dict) -> dict:
    """The end-to-end batch: inputs, positions, K/V heads, the table, and the largest differences."""
    q, k, r, pure = inputs["q"], inputs["k"], tn.forward(inputs), pure_rows(inputs)
    (batch, heads, n_query, d), (kv_heads, n_key) = q.shape, k.shape[1:3]
    mask, past = np.asarray(inputs["attention_mask"]), inputs["past"]
    diffs, rows = {}, []
    for (b, h), (weights, outputs) in pure.items():
        diffs[b, h] = [max(float(np.abs(r["weights"][b, h, i] - weights[i]).max()),
                           float(np.abs(r["outputs"][b, h, i] - outputs[i]).max())) for i in range(n_query)]
        rows.append([f"序列 {b}", f"头 {h}", f"K/V 头 {mh.kv_group(h, heads, kv_heads)}"]
                    + [fmt.difference(x) for x in diffs[b, h]])
    positions = [[f"序列 {b}", flags(mask[b]), flags(r["positions"][b]),
                  "相同" if r["positions"][b, mask[b] == 1].tolist() == [p for p, m in zip(
                      rope.padded_positions([m == 1 for m in mask[b].tolist()]), mask[b]) if m] else "不同"]
                 for b in range(batch)]
    index = np.arange(kv_heads, dtype=float).reshape(1, kv_heads, 1, 1)
    repeated = tn.repeat_kv(index, heads // kv_heads)[0, :, 0, 0]
    groups = [[f"头 {h}", f"K/V 头 {int(repeated[h])}", f"K/V 头 {mh.kv_group(h, heads, kv_heads)}"] for h in range(heads)]
    table = [[f"序列 {b}", f"查询 {i}", fmt.count(past + i), fmt.count(int(r["positions"][b, past + i])),
              visible_keys(r["visible"][b, 0, i]), fmt.count(int(r["visible"][b, 0, i].sum()))]
             for b in range(batch) for i in range(n_query)]
    same_heads = all((r["visible"][:, h] == r["visible"][:, 0]).all() for h in range(heads))
    return {
        "b_batch": fmt.count(batch), "b_heads": fmt.count(heads), "b_kv_heads": fmt.count(kv_heads),
        "b_rep": fmt.count(heads // kv_heads), "b_d": fmt.count(d), "b_past": fmt.count(past),
        "b_new": fmt.count(n_query), "b_n_key": fmt.count(n_key), "b_mask": masks_text(mask),
        "b_one": fmt.count(1), "b_zero": fmt.count(0), "b_seed": fmt.count(tn.DEMO_SEED), "b_lo": fmt.short(-1.0),
        "b_hi": fmt.short(1.0), "b_shape_q": str(tuple(q.shape)), "b_shape_k": str(tuple(k.shape)),
        "b_shape_vis": str(tuple(r["visible"].shape)),
        "tbl_b_positions": Table(["序列", "attention_mask", "positions_from_mask", "与 RoPE 一页的旋转位置"], positions),
        "tbl_b_groups": Table(["查询头", "repeat_kv 之后读的", "多头一页的 kv_group"], groups),
        "tbl_b_visible": Table(["序列", "新查询", "绝对位置", "位置编号", "可见的 Key", "个数"], table),
        "fig_batch": figures.batch_figure(r["visible"], mask),
        "b_same_heads": "每个头的表都相同，所以表里只列头 0" if same_heads else "各个头的表并不相同",
        "tbl_b_diffs": Table(["序列", "查询头", "读的 K/V 头"] + [f"查询 {i} 的最大差" for i in range(n_query)], rows),
        "b_sentence": agreement_sentence(diffs),
    }


# -- dtype: two fills added in a batch ---------------------------------------------------------------------------
def _nan_rows(masked, score: float, dtype: str) -> int:
    """Rows that softmax turns into NaN when every score is ``score``: the score is added to the mask in ``dtype``
    (where the overflow happens), the softmax then runs in float64, so only that addition can overflow."""
    t = np.dtype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        x = (np.full(masked.shape, score, dtype=t) + masked).astype(np.float64)
        e = np.exp(x - x.max(axis=-1, keepdims=True))  # a row of −∞ only: (−∞) − (−∞) = NaN
        weights = e / e.sum(axis=-1, keepdims=True)
    return int(np.isnan(weights).any(axis=-1).sum())


def fill_counts(mask, dtype: str, scores=(-10.0, -20.0)) -> dict:
    """Prefill of a batch (queries = keys): the causal and the PAD mask filled with finfo.min each and added,
    against one boolean table (``and_rules``) filled once. Counts of −∞ cells, of fully masked query rows, and of
    the rows softmax turns into NaN when every score is one of ``scores`` (``nan[s] = (summed, once)``)."""
    mask = np.asarray(mask)
    batch, n = mask.shape
    causal = tn.visibility_batch(tn.causal, batch, 1, n, n)
    pad = tn.visibility_batch(tn.padding(mask), batch, 1, n, n)
    with np.errstate(over="ignore"):  # finfo.min + finfo.min overflows: what this table counts
        summed = tn.additive(causal, dtype) + tn.additive(pad, dtype)
    allowed = tn.visibility_batch(tn.and_rules(tn.causal, tn.padding(mask)), batch, 1, n, n)
    once = tn.additive(allowed, dtype)
    return {"summed_inf": int(np.isneginf(summed).sum()), "once_inf": int(np.isneginf(once).sum()),
            "both": int((~causal & ~pad).sum()), "cells": int(summed.size),
            "empty_rows": int((~allowed.any(axis=-1)).sum()),
            "nan": {float(s): (_nan_rows(summed, s, dtype), _nan_rows(once, s, dtype)) for s in scores}}


def overflow_threshold(dtype: str = "float16") -> int:
    """The smallest whole score s ≥ 1 for which ``finfo(dtype).min − s`` is −∞ in ``dtype`` (0: none to 2¹⁶)."""
    t = np.dtype(dtype)
    with np.errstate(over="ignore"):
        for s in range(1, 2**16 + 1):
            if np.isneginf(np.finfo(t).min - t.type(s)):
                return s
    return 0


def fill_sentence(counts: dict) -> str:
    """``{dtype: fill_counts(...)}`` as the sentences under the fill table: the −∞ cells, then the NaN rows.

    >>> c = {"summed_inf": 3, "once_inf": 0, "both": 3, "cells": 16, "empty_rows": 0, "nan": {-20.0: (0, 0)}}
    >>> fill_sentence({"float16": c, "float64": c})
    '两条规则同时挡住的 3 个格子，两张 mask 相加后在 float16、float64 里都成了 −∞；先把布尔表取“与”、只填一次 finfo.min，两种类型里都没有 −∞。这一批没有整行被屏蔽的查询行，softmax 也就不会给出 NaN。'
    """
    if not isinstance(counts, dict) or not counts:
        raise ValueError("counts 必须是非空字典：dtype → fill_counts 的结果")
    both = {c["both"] for c in counts.values()}.pop()
    inf = [t for t, c in counts.items() if c["summed_inf"] == c["both"] > 0]
    n_types = {2: "两种", 3: "三种"}.get(len(counts), f"{len(counts)} 种")
    where = f" {'、'.join(inf)} 里{'都' if len(inf) > 1 else ''}" if inf else "任何一种类型里都没有"
    text = f"两条规则同时挡住的 {both} 个格子，两张 mask 相加后在{where}成了 −∞；" if inf else f"两条规则同时挡住的 {both} 个格子，两张 mask 相加后{where}变成 −∞；"
    clean = all(c["once_inf"] == 0 for c in counts.values())
    text += f"先把布尔表取“与”、只填一次 finfo.min，{n_types}类型里{'都没有 −∞' if clean else '仍有 −∞'}。"
    return text + nan_sentence(counts)


def nan_sentence(counts: dict) -> str:
    """Which fully masked rows softmax turns into NaN, at which score, and whether the second fill matters.

    >>> c16 = {"empty_rows": 2, "nan": {-10.0: (0, 0), -20.0: (2, 2)}}
    >>> c32 = {"empty_rows": 2, "nan": {-10.0: (0, 0), -20.0: (0, 0)}}
    >>> nan_sentence({"float16": c16, "float32": c32})
    '整行被屏蔽的 2 个查询行，分数为 −10 时哪种类型里都不是 NaN；分数为 −20 时在 float16 里成了 NaN，相加与只填一次都一样：让这一行变成 NaN 的是分数，不是第二份 finfo.min。'
    """
    empty = {c["empty_rows"] for c in counts.values()}.pop()
    if not empty:
        return "这一批没有整行被屏蔽的查询行，softmax 也就不会给出 NaN。"
    parts, same = [], True
    for s in next(iter(counts.values()))["nan"]:
        hit = [t for t, c in counts.items() if any(c["nan"][s])]
        same &= all(c["nan"][s][0] == c["nan"][s][1] for c in counts.values())
        parts.append(f"分数为 {fmt.short(s)} 时" + (f"在 {'、'.join(hit)} 里成了 NaN" if hit else "哪种类型里都不是 NaN"))
    text = f"整行被屏蔽的 {empty} 个查询行，" + "；".join(parts)
    if any(any(c["nan"][s]) for c in counts.values() for s in c["nan"]):
        return text + ("，相加与只填一次都一样：让这一行变成 NaN 的是分数，不是第二份 finfo.min。" if same else
                       "，而相加与只填一次的结果不同：第二份 finfo.min 也起了作用。")
    return text + "。"


def torch_where(torch: dict) -> str:
    """Where a PyTorch observation of ``02_library_conventions.json`` was made: ``PyTorch 2.13.0+cpu，CPU``."""
    return f"PyTorch {torch['version']}，{conventions.DEVICE_NAMES[torch['device']]}"


def sdpa_empty_rows(seen: dict | None = None) -> dict:
    """The recorded SDPA result for a fully masked row (float16, boolean mask, default path), and where."""
    torch = (conventions.observed() if seen is None else seen)["cpu"]["torch"]
    got = torch["sdpa_fully_masked"]["default"]["float16"]["bool"]
    return {"f_sdpa_empty": conventions.FULLY_MASKED[got],
            "f_torch": torch_where(torch)}


def dtype_values(mask, scores=(-10.0, -20.0)) -> dict:
    """The dtype section: −∞ counts and NaN rows per dtype in a left-padded prefill, and the float16 threshold."""
    counts = {t: fill_counts(mask, t, scores) for t in tn.FLOAT_DTYPES}
    rows = [[t, fmt.count(c["both"]), fmt.count(c["summed_inf"]), fmt.count(c["once_inf"])]
            + [f"{fmt.count(c['nan'][float(s)][0])} / {fmt.count(c['nan'][float(s)][1])}" for s in scores]
            for t, c in counts.items()]
    fmin = np.finfo(np.float16).min
    with np.errstate(over="ignore"):
        shifted = [(s, float(fmin + np.float16(s))) for s in scores]
    row = [f"分数 {fmt.short(s)}：finfo.min + ({fmt.short(s)}) = {fmt.short(x)}" for s, x in shifted]
    return {
        "f_mask": masks_text(mask), **sdpa_empty_rows(),
        "f_cells": fmt.count(counts["float16"]["cells"]), "f_empty": fmt.count(counts["float16"]["empty_rows"]),
        "f_scores_list": "、".join(fmt.short(s) for s in scores),
        "tbl_fill": Table(["dtype", "两条规则都禁止的格子", "相加后 −∞ 的格子", "填一次后 −∞ 的格子"]
                          + [f"分数 {fmt.short(s)} 时 NaN 的行（相加 / 填一次）" for s in scores], rows),
        "f_sentence": fill_sentence(counts),
        "f_threshold": fmt.count(overflow_threshold("float16")), "f_min16": fmt.short(float(fmin)),
        "f_scores": "；".join(row),
    }


# -- more visibility rules -----------------------------------------------------------------------------------------
def rules_of(n: int, w: int, n_prefix: int, n_sink: int, doc_ids) -> dict:
    """The page's rules on one sequence of ``n`` positions, by name: ``(rule, its predicate as written)``."""
    return {
        "因果": (tn.causal, "k ≤ q"),
        f"滑动窗口 w = {w}": (tn.sliding_window(w), "q − w < k ≤ q"),
        "同一文档（且因果）": (tn.and_rules(tn.causal, tn.document([doc_ids])), "doc[q] = doc[k] 且 k ≤ q"),
        f"前缀 n = {n_prefix}": (tn.prefix_lm(n_prefix), "k < n 或 k ≤ q"),
        f"汇点 {n_sink} 个 + 窗口 w = {w}": (tn.sinks(n_sink, w), "k ≤ q 且（k < n_sink 或 k > q − w）"),
    }


def rules_values(n: int, w: int, n_prefix: int, n_sink: int, doc_ids) -> dict:
    """One table: for each query position, the keys each rule lets it read; the cache each rule needs."""
    rules = rules_of(n, w, n_prefix, n_sink, doc_ids)
    tables = {name: tn.visibility_batch(rule, 1, 1, n, n)[0, 0] for name, (rule, _) in rules.items()}
    rows = [[f"查询 {i}"] + [visible_keys(t[i]) for t in tables.values()] for i in range(n)]
    rows.append(["最后一个查询读几个 Key"] + [fmt.count(int(t[-1].sum())) for t in tables.values()])
    defs = [[name, f"`{text}`", fmt.count(int(tables[name].sum(-1).max()))] for name, (_, text) in rules.items()]
    doc_positions = [i - list(doc_ids).index(doc) for i, doc in enumerate(doc_ids)]
    return {
        "r_n": fmt.count(n), "r_w": fmt.count(w), "r_prefix": fmt.count(n_prefix), "r_sink": fmt.count(n_sink),
        "r_docs": flags(doc_ids), "r_doc_positions": flags(doc_positions),
        "tbl_rules": Table(["查询"] + list(tables), rows),
        "tbl_rule_defs": Table(["规则", "谓词（True = 可见）", "一行最多可见的 Key"], defs),
        "r_sink_cache": fmt.count(n_sink + w),
    }


# -- the bugs, each against the right rule -------------------------------------------------------------------------
LO, HI, D = -1.0, 1.0, 2  # the bug examples' Q, K, V: one head of dimension D, entries uniform in [LO, HI]


def _draw_text(prefix: str) -> dict:  # the draws' range and dimension, as the page's boxes state them
    return {f"{prefix}_lo": fmt.short(LO), f"{prefix}_hi": fmt.short(HI), f"{prefix}_d": fmt.count(D)}


def absolute_embed(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Absolute position embeddings for comparison: the sinusoidal vector of each position added to each row."""
    d = x.shape[-1]
    angle = positions[..., None] / 10000.0 ** (np.arange(0, d, 2) / d)  # (batch, n, d/2)
    e = np.empty(positions.shape + (d,))
    e[..., 0::2], e[..., 1::2] = np.sin(angle), np.cos(angle)
    return x + e[:, None]


def packed_output(q, k, v, doc_ids, *, doc_mask: bool, reset: bool, embedding: str) -> np.ndarray:
    """One packed sequence (batch 1, one head): its outputs under a choice of mask, positions and embedding."""
    doc_ids = list(doc_ids)
    n = len(doc_ids)
    positions = np.array([[i - doc_ids.index(d) if reset else i for i, d in enumerate(doc_ids)]])
    if embedding == "rope":
        q, k = tn.rope_batched(q, positions), tn.rope_batched(k, positions)
    else:
        q, k, v = (absolute_embed(x, positions) for x in (q, k, v))
    rule = tn.and_rules(tn.causal, tn.document([doc_ids])) if doc_mask else tn.causal
    return tn.attention_batched(q, k, v, tn.visibility_batch(rule, 1, 1, n, n))[1]


def packing_values(doc_ids, seed: int) -> dict:
    """Packing: the last document's outputs packed against the same document run alone, four ways × two embeddings."""
    doc_ids = list(doc_ids)
    n, last = len(doc_ids), doc_ids[-1]
    start = doc_ids.index(last)
    rng = np.random.default_rng(seed)
    q, k, v = (np.round(rng.uniform(LO, HI, (1, 1, n, D)), 1) for _ in range(3))
    alone = {e: packed_output(q[:, :, start:], k[:, :, start:], v[:, :, start:], [0] * (n - start), doc_mask=False,
                              reset=False, embedding=e) for e in ("rope", "absolute")}
    rows, gaps = [], {}
    for doc_mask in (True, False):
        for reset in (True, False):
            cells = []
            for e in ("rope", "absolute"):
                out = packed_output(q, k, v, doc_ids, doc_mask=doc_mask, reset=reset, embedding=e)[:, :, start:]
                gaps[doc_mask, reset, e] = float(np.abs(out - alone[e]).max())
                cells.append(fmt.difference(gaps[doc_mask, reset, e]))
            rows.append(["有" if doc_mask else "没有", "重新从 0 数" if reset else "接着数"] + cells)
    return {
        "p_docs": flags(doc_ids), "p_seed": fmt.count(seed), "p_last": fmt.count(last), **_draw_text("p"),
        "tbl_packing": Table(["文档 mask", "位置", "RoPE：与单独计算的最大差", "绝对位置向量：与单独计算的最大差"], rows),
        "p_sentence": packing_sentence(gaps),
    }


def packing_sentence(gaps: dict, tolerance: float = TOLERANCE) -> str:
    """``{(doc_mask, reset, embedding): gap}`` as the conclusion the packing table supports."""
    ok = {key: gap <= tolerance for key, gap in gaps.items()}
    leak = [e for e in ("rope", "absolute") if not ok[False, True, e] and not ok[False, False, e]]
    text = ("没有文档 mask 时，两种位置编码都读进了前面的文档；" if len(leak) == 2 else
            f"没有文档 mask 时，读进前面文档的是：{'、'.join(leak) or '没有'}；")
    rope_ok, abs_ok = ok[True, False, "rope"], ok[True, False, "absolute"]
    text += "有了文档 mask，RoPE 下不重数位置" + ("也与单独计算相符（整体平移不改变位置差）" if rope_ok else "仍不相符")
    return text + "，绝对位置向量下不重数位置" + ("也相符。" if abs_ok else "就不相符。")


def window_values(n: int, w: int, seed: int) -> dict:
    """The window's off-by-one: "w keys" against "w + 1 keys", with the check that exposes it."""
    rng = np.random.default_rng(seed)
    q, k, v = (np.round(rng.uniform(LO, HI, (1, 1, n, D)), 1) for _ in range(3))
    rows, first = [], None
    for name, rule in ((f"连同自己共 w 个（sliding_window({w})）", tn.sliding_window(w)),
                       (f"自己加上前面 w 个（sliding_window({w + 1})）", tn.sliding_window(w + 1))):
        vis = tn.visibility_batch(rule, 1, 1, n, n)
        out = tn.attention_batched(q, k, v, vis)[1]
        first = out if first is None else first
        same = sum(int(np.abs(out[0, 0, i] - first[0, 0, i]).max() == 0) for i in range(n))
        rows.append([name, fmt.count(int(vis.sum(-1).max())), fmt.count(same),
                     fmt.difference(float(np.abs(out - first).max()))])
    return {"w_n": fmt.count(n), "w_w": fmt.count(w), "w_seed": fmt.count(seed), **_draw_text("w"),
            "w_plus": fmt.count(w + 1),
            "tbl_window": Table(["“窗口 w”的读法", "一行最多可见的 Key", "输出与第一种读法相同的行",
                                 "输出与第一种读法的最大差"], rows)}


# -- reading the libraries -----------------------------------------------------------------------------------------
def library_values(seen: dict | None = None) -> dict:
    """The recorded SDPA cells of the libraries table (the rest is cited, in the page), the alignment figure."""
    torch = (conventions.observed() if seen is None else seen)["cpu"]["torch"]
    n_key = np.shape(tn.DEMO_MASK)[1]
    return {"fig_align": figures.alignment_figure(n_key - tn.DEMO_PAST, n_key),
            "lib_sdpa_true": conventions.TRUE_MEANS[torch["sdpa"]["bool_true"]],
            "lib_causal": conventions.ALIGNMENT[torch["sdpa"]["is_causal"]].split("（")[0],
            "lib_torch": torch_where(torch)}


# -- the same batch through PyTorch and Hugging Face: what make crosscheck recorded --------------------------------
TORCH_RECORD = Path(tn.__file__).with_name("02_tensors_torch.json")


def torch_record() -> dict:
    """What ``code/02_tensors_torch.py`` printed when ``make crosscheck`` last ran it (the build never imports torch;
    tests/crosscheck/test_tensors_record.py fails when the file prints something else now)."""
    return json.loads(TORCH_RECORD.read_text(encoding="utf-8"))


def torch_values(record: dict | None = None) -> dict:
    """The PyTorch section: the largest differences, the masks' equality, the pitfall's wrong rows, and where."""
    r = torch_record() if record is None else record
    b, p, mha = r["batch"], r["prefill"], conventions.observed()["cpu"]["torch"]["mha"]
    same = lambda ok: "逐格相同" if ok else "并不相同"  # noqa: E731
    text = json.dumps(r, ensure_ascii=False, indent=1) if record is not None else TORCH_RECORD.read_text(encoding="utf-8")
    return {
        "t_where": f"PyTorch {r['torch']}、Transformers {r['transformers']}，{conventions.DEVICE_NAMES[r['device']]}，{r['dtype']}",
        "t_mha_kpm": conventions.TRUE_MEANS[mha["key_padding_mask_true"]],
        "t_mha_attn": conventions.TRUE_MEANS[mha["attn_mask_bool_true"]],
        "t_sdpa_gap": fmt.difference(b["sdpa_gap"]), "t_mha_gap": fmt.difference(b["mha_gap"]),
        "t_mask_same": same(b["mask_equal"]), "t_hf_same": same(r["hf_equal"] and b["mask_equal"]),
        "t_eager_same": same(r["hf_eager_equal"]), "t_eager_fill": "、".join(fmt.short(x) for x in r["hf_eager_fill"]),
        "t_wrong_causal": rows_text(b["wrong_rows"]["is_causal"]),
        "t_wrong_lower": rows_text(b["wrong_rows"]["causal_lower_right"]),
        "t_wrong_mask": rows_text(b["wrong_rows"]["attn_mask"]),
        "t_prefill_empty": fmt.count(p["empty_rows"]),
        "t_prefill_gave": conventions.FULLY_MASKED.get(p["sdpa_on_empty_rows"], p["sdpa_on_empty_rows"]),
        "t_prefill_gap": fmt.difference(max(p["sdpa_gap"], p["mha_gap"])),
        "t_prefill_wrong": rows_text(p["wrong_rows"]["is_causal"]),
        "t_record": Md(f"```json\n{text.rstrip()}\n```"),
    }


# -- the exercises -----------------------------------------------------------------------------------------------------
def exercise_values() -> dict:
    """Every number, table and sentence of the four exercises and their solutions."""
    a1 = ex.sink_rows()
    rows1 = [[f"查询 {i}", "、".join(map(str, keys)), fmt.count(len(keys))] for i, keys in enumerate(a1["visible"])]
    a2 = ex.decode_positions()
    rows2 = [[f"序列 {b}", flags(m), flags(p), fmt.count(nxt)] for b, (m, p, nxt) in
             enumerate(zip(ex.POS_MASK, a2["prefill"], a2["next"]))]
    a3 = {name: ex.empty_rows(m) for name, m in ex.FILL_MASKS.items()}
    rows_of = lambda rows: "、".join(f"查询 {i}" for i in rows) or "无"  # noqa: E731
    rows3 = [[name, flags(ex.FILL_MASKS[name][0]), rows_of(a["empty"]), rows_of(a["nan"])] for name, a in a3.items()]
    return {
        "x1_n": fmt.count(ex.SINK_N), "x1_sinks": fmt.count(ex.SINK_SINKS), "x1_w": fmt.count(ex.SINK_W),
        "x1_table": Table(["查询", "可见的 Key", "个数"], rows1), "x1_cache": fmt.count(a1["cache"]),
        "x2_masks": masks_text(ex.POS_MASK),
        "x2_table": Table(["序列", "attention_mask", "预填时的位置", "下一个 token 的位置"], rows2),
        "x3_masks": "；".join(f"{name} 为 {flags(m[0])}" for name, m in ex.FILL_MASKS.items()),
        "x3_score": fmt.short(ex.FILL_SCORE),
        "x3_table": Table(["批", "attention_mask", "整行被屏蔽的查询行", f"分数为 {fmt.short(ex.FILL_SCORE)} 时整行成了 −∞ 的行"], rows3),
        "x4_doctest": Md(fmt.doctest_block(ex.window_counts)), **library_exercise(),
    }


def library_exercise(seen: dict | None = None) -> dict:
    """Exercise 5: the SDPA mask and what is_causal=True reads, row by row; the key_padding_mask."""
    lib, torch = library_values(seen), (conventions.observed() if seen is None else seen)["cpu"]["torch"]
    a, past = ex.library_masks(), ex.LIB_PAST
    bools = lambda row: "、".join(str(bool(x)) for x in row)  # noqa: E731  as torch prints a bool tensor
    rows = [[f"序列 {b}", f"查询 {i}（绝对位置 {past + i}）", bools(a["attn_mask"][b, 0, i]),
             visible_keys(a["attn_mask"][b, 0, i]), visible_keys(a["is_causal"][i]),
             "对" if i not in a["wrong"][b] else "错"]
            for b in range(len(ex.LIB_MASK)) for i in range(len(a["is_causal"]))]
    return {
        "x5_masks": masks_text(ex.LIB_MASK), "x5_past": fmt.count(past), "x5_torch": lib["lib_torch"],
        "x5_table": Table(["序列", "查询", "attn_mask 的这一行", "应读的 Key", "is_causal=True 读的 Key",
                           "is_causal=True 对不对"], rows),
        "x5_kpm": Table(["序列", "key_padding_mask"],
                        [[f"序列 {b}", bools(r)] for b, r in enumerate(a["key_padding_mask"])]),
        "x5_wrong": rows_text(a["wrong"]),
        "x5_sdpa_true": lib["lib_sdpa_true"], "x5_causal": lib["lib_causal"],
        "x5_kpm_true": conventions.TRUE_MEANS[torch["mha"]["key_padding_mask_true"]],
    }
