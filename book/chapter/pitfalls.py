"""The pitfalls page's facts and tables: each mistake computed by ``02_pitfalls`` and observed in the record
``make crosscheck`` keeps (``code/02_pitfalls_torch.json``); a section raises where the page's words would be false.
"""

from __future__ import annotations

import importlib
import json
import math
import sys
from pathlib import Path

from chapter import conventions, fmt
from chapter.fmt import Md, Table, glue_all  # noqa: F401  (glue_all: the page calls page.glue_all)

att = importlib.import_module("02_attention")
pf = importlib.import_module("02_pitfalls")
ex = importlib.import_module("02_exercises_pitfalls")

TOLERANCE = 1e-12  # float64: the library and the teaching code may differ only by rounding
ROPE_FLOAT32 = (
    1e-5  # Transformers turns RoPE's angles in float32: a shift moves the logits this little
)
PAGE = "写进真实代码一页"
FLOAT32_GAP = 1e-4  # batched and single float32 runs may differ by this much: rounding, not padding
TORCH_RECORD = Path(pf.__file__).with_name("02_pitfalls_torch.json")


def torch_record() -> dict:
    """What ``code/02_pitfalls_torch.py`` printed when ``make crosscheck`` last ran it (a build: no torch)."""
    return json.loads(TORCH_RECORD.read_text(encoding="utf-8"))


def where(record: dict) -> str:
    """Where the record was made: ``PyTorch 2.13.0+cpu、Transformers 5.17.0，CPU，float64``."""
    device = conventions.DEVICE_NAMES[record["device"]]
    return f"PyTorch {record['torch']}、Transformers {record['transformers']}，{device}，{record['dtype']}"


def value(x: float | None) -> str:
    """A computed value, or NaN where the library gave NaN (the record writes it as null)."""
    return "NaN" if x is None or (isinstance(x, float) and math.isnan(x)) else fmt.fmt(x)


def keys_read(row) -> str:
    """The keys a row of a visibility table reads: ``0、2``; none: ``无``."""
    return "、".join(str(j) for j, ok in enumerate(row) if ok) or "无"


def column(outputs) -> list[float]:
    """The first column of a teaching-code output matrix (the V of the examples has one column)."""
    return [row[0] for row in outputs]


def gap(seen, expected) -> float:
    """The largest difference between what the library gave and the teaching code's numbers; NaN where
    both are NaN counts as equal, NaN on one side only as infinitely far."""
    worst = 0.0
    for a, b in zip(seen, expected, strict=True):
        a_nan = a is None or math.isnan(a)
        b_nan = b is None or math.isnan(b)
        worst = max(worst, 0.0 if a_nan and b_nan else math.inf if a_nan or b_nan else abs(a - b))
    return worst


def rows_with_nan(outputs) -> list[int]:
    return [i for i, x in enumerate(outputs) if x is None or math.isnan(x)]


def _record(record: dict | None) -> dict:
    return torch_record() if record is None else record


# -- the shared example ------------------------------------------------------------------------------
N = len(pf.DEMO_Q)


def right_outputs() -> list[float]:
    """The causal outputs of the shared example, by ``02_attention.attention``."""
    return column(att.attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V)[1])


def demo_values(record: dict | None = None) -> dict:
    r = _record(record)
    return {
        "demo_n": fmt.count(N),
        "demo_qk": fmt.vectors(pf.DEMO_Q),
        "demo_v": "、".join(fmt.short(row[0]) for row in pf.DEMO_V),
        "demo_right": "、".join(fmt.fmt(x) for x in right_outputs()),
        "demo_where": where(r),
    }


# -- the table given to the library ------------------------------------------------------------------
def polarity_values(record: dict | None = None) -> dict:
    """SDPA and nn.MultiheadAttention given the same True = allowed table."""
    r = _record(record)["polarity"]
    causal = pf.causal_table(N)
    flipped = pf.inverted(causal)
    literal = column(att.unguarded_attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V, flipped)[1])
    right = right_outputs()
    fmt.holds(
        PAGE,
        {
            "SDPA 读对了": gap(r["sdpa"], right) <= TOLERANCE,
            "MultiheadAttention 读的是反过来的表": gap(r["mha"], literal) <= TOLERANCE,
            "最后一行什么也读不到、是 NaN": r["mha_nan_rows"] == [N - 1] == rows_with_nan(literal),
            "取反之后与 SDPA 相同": gap(r["mha_fixed"], right) <= TOLERANCE,
        },
    )
    rows = [
        [f"位置 {i}", value(r["sdpa"][i]), keys_read(flipped[i]), value(r["mha"][i])]
        + [value(r["mha_fixed"][i])]
        for i in range(N)
    ]
    header = ["查询", "SDPA 的输出", "MHA 读的 Key", "MHA 的输出", "交给 MHA ~allowed"]
    return {
        "tbl_a": Table(header, rows),
        "a_reads": "；".join(
            f"位置 {i} 读 {keys_read(row)}" if any(row) else f"位置 {i} 什么也读不到"
            for i, row in enumerate(flipped)
        ),
        "a_nan": fmt.names("位置", r["mha_nan_rows"]),
        "a_wrong0": value(r["mha"][0]),
        "a_right0": fmt.fmt(right[0]),
    }


def float_values(record: dict | None = None) -> dict:
    """``torch.tril(torch.ones(n, n))`` added to the scores."""
    r = _record(record)["float_mask"]
    weights, outputs = pf.biased_attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V, pf.tril(N))
    future = pf.future_weights(weights)
    wrong = column(outputs)
    right = right_outputs()
    fmt.holds(
        PAGE,
        {
            "位置 0 有权重落在未来": future[0] > 0,
            "SDPA 加上了这张表": gap(r["wrong"], wrong) <= TOLERANCE,
            "布尔表读对了": gap(r["fixed"], right) <= TOLERANCE,
        },
    )
    rows = [
        [f"位置 {i}", fmt.fmt(future[i]), fmt.fmt(wrong[i]), fmt.fmt(right[i])] for i in range(N)
    ]
    header = ["查询", "落在未来 Key 上的权重", "0/1 浮点表的输出", "布尔表的输出"]
    return {
        "tbl_b": Table(header, rows),
        "b_future0": fmt.fmt(future[0]),
        "b_gap": fmt.difference(gap(r["wrong"], wrong)),
    }


# The four lines of 02_pitfalls_torch.masked_fill_lines, as the teaching code reads each.
LINES = {
    "tril == 0": ("tril", 0, "== 0", "`masked_fill(torch.tril(ones) == 0, −inf)`"),
    "tril.bool()": ("tril", 0, "!= 0", "`masked_fill(torch.tril(ones).bool(), −inf)`"),
    "triu(1).bool()": (
        "triu",
        1,
        "!= 0",
        "`masked_fill(torch.triu(ones, diagonal=1).bool(), −inf)`",
    ),
    "triu.bool()": ("triu", 0, "!= 0", "`masked_fill(torch.triu(ones).bool(), −inf)`"),
}


def line_table(name: str) -> list[list[bool]]:
    kind, diagonal, where_, _ = LINES[name]
    table = pf.tril(N, diagonal) if kind == "tril" else pf.triu(N, diagonal)
    return pf.masked_fill_visibility(table, where_)


def lines_values(record: dict | None = None) -> dict:
    """Which keys each masked_fill line leaves readable; the record's rows against them."""
    r = _record(record)["lines"]
    tables = {name: line_table(name) for name in LINES}
    same = all(
        r[name]["read"] == [sum(row) for row in t]
        and r[name]["nan_rows"] == [i for i, row in enumerate(t) if not any(row)]
        for name, t in tables.items()
    )
    fmt.holds(
        PAGE,
        {
            "tril == 0 是因果表": tables["tril == 0"] == pf.causal_table(N),
            "triu(1).bool() 是因果表": tables["triu(1).bool()"] == pf.causal_table(N),
            "记录与教学代码逐行相同": same,
            "忘了 diagonal=1，第一行什么也读不到": not any(tables["triu.bool()"][0]),
            "tril.bool() 的最后一行什么也读不到": not any(tables["tril.bool()"][-1]),
        },
    )
    rows = [
        [LINES[name][3]] + [keys_read(row) for row in t] + [fmt.names("位置", r[name]["nan_rows"])]
        for name, t in tables.items()
    ]
    header = ["写法", *(f"位置 {i} 读的 Key" for i in range(N)), "NaN 的行（PyTorch）"]
    return {"tbl_c": Table(header, rows), "c_bool0": keys_read(tables["tril.bool()"][0])}


def causal_values(record: dict | None = None) -> dict:
    """``is_causal=True`` together with ``attn_mask``: SDPA's error, MultiheadAttention's dropped mask."""
    full = _record(record)
    r = full["causal_and_mask"]
    valid = r["valid"]
    causal_only = right_outputs()
    with_pad = column(
        att.attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V, key_valid=valid, empty_row="zero")[1]
    )
    content = [i for i, ok in enumerate(valid) if ok]
    v_is_q = [
        [row[0]] for row in pf.DEMO_Q
    ]  # the fast path's self-attention: V is Q (first column)
    paths = r["self_attention_v_is_q"]
    fast_expected = column(
        att.attention(pf.DEMO_Q, pf.DEMO_K, v_is_q, key_valid=valid, empty_row="zero")[1]
    )
    slow_expected = column(att.attention(pf.DEMO_Q, pf.DEMO_K, v_is_q)[1])
    unmasked = column(att.attention(pf.DEMO_Q, pf.DEMO_K, v_is_q, False)[1])
    mha = conventions.observed()["cpu"]["torch"]["mha"]
    empty = [not any(valid[: i + 1]) for i in range(N)]  # causal and PAD: no key to read
    fmt.holds(
        PAGE,
        {
            "SDPA 报错": r["sdpa"] != "ran",
            "与约定表的观察一致（丢掉 attn_mask，左上对齐）": mha["is_causal_with_mask_no_weights"]
            == "top-left",
            "约定表：返回权重或给了 key_padding_mask 时用 attn_mask": mha["is_causal_with_mask"]
            == mha["is_causal_with_mask_and_padding_no_weights"]
            == "attn_mask",
            "表里读不到 Key 的行正是 PAD 行": empty == [not ok for ok in valid],
            "MultiheadAttention 只用了因果规则": gap(r["mha"], causal_only) <= TOLERANCE,
            "PAD 被读了进来": gap([r["mha"][i] for i in content], [with_pad[i] for i in content])
            > 1e-3,
            "慢路径丢掉 attn_mask": gap(paths["slow"], slow_expected) <= TOLERANCE,
            "快路径用了 attn_mask，不看 is_causal": gap(
                [paths["fast"][i] for i in content], [fast_expected[i] for i in content]
            )
            <= TOLERANCE,
            "快路径的 PAD 行是 NaN": rows_with_nan(paths["fast"]) == [valid.index(False)],
            "默认 batch_first=False：eval() 里也走慢路径": gap(
                paths["batch_first_false"], slow_expected
            )
            <= TOLERANCE,
            "约定表：慢路径单给 is_causal 报错": mha["is_causal_without_mask"] == "error",
            "快路径单给 is_causal：与不加 mask 相同，不挡未来": gap(
                paths["fast_is_causal_alone"], unmasked
            )
            <= TOLERANCE
            and gap(paths["fast_is_causal_alone"], slow_expected) > 1e-3,
        },
    )
    rows = [
        [f"位置 {i}", value(r["mha"][i]), fmt.fmt(causal_only[i])]
        + ["无（一个 Key 也读不到）" if empty[i] else fmt.fmt(with_pad[i])]
        for i in range(N)
    ]
    header = ["查询", "MHA 的输出", "只用因果规则", "因果与 PAD（应得）"]
    return {
        "d_pad": "、".join(str(i) for i, ok in enumerate(valid) if not ok),
        "d_where": where(full),
        "d_error": Md(f"```text\nRuntimeError: {r['sdpa']}\n```"),
        "tbl_d": Table(header, rows),
        "d_gap": fmt.difference(gap(r["mha"], causal_only)),
        "d_wrong": value(r["mha"][content[0]]),
        "d_right": fmt.fmt(with_pad[content[0]]),
        "d_at": str(content[0]),
        "d_fast": "、".join(value(x) for x in paths["fast"]),
        "d_slow": "、".join(value(x) for x in paths["slow"]),
        "d_seq_first": "、".join(value(x) for x in paths["batch_first_false"]),
        "d_fast_alone": "、".join(value(x) for x in paths["fast_is_causal_alone"]),
    }


def heads_values(record: dict | None = None) -> dict:
    """Which sequence's table each (sequence, head) got, and the recorded difference it made."""
    r = _record(record)["head_order"]
    batch = len(r["valid"])
    heads = len(r["repeat"][0])
    owners = {layout: pf.slot_owners(batch, heads, layout) for layout in pf.LAYOUTS}
    wrong = {
        layout: [(b, h) for b in range(batch) for h in range(heads) if owners[layout][b][h] != b]
        for layout in pf.LAYOUTS
    }
    moved = {
        layout: [(b, h) for b in range(batch) for h in range(heads) if r[layout][b][h] > TOLERANCE]
        for layout in pf.LAYOUTS
    }
    fmt.holds(
        PAGE,
        {
            "差不为 0 的正是拿错表的": wrong == moved,
            "repeat 有拿错的": bool(wrong["repeat"]),
            "repeat_interleave 没有": not wrong["repeat_interleave"],
        },
    )
    rows = [
        [f"序列 {b}", f"头 {h}"]
        + [
            cell
            for layout in pf.LAYOUTS
            for cell in (f"序列 {owners[layout][b][h]} 的", fmt.difference(r[layout][b][h]))
        ]
        for b in range(batch)
        for h in range(heads)
    ]
    header = ["序列", "头", "repeat：拿到", "最大差", "repeat_interleave：拿到", "最大差"]
    return {
        "e_batch": fmt.count(batch),
        "e_heads": fmt.count(heads),
        "e_valid": "；".join(
            f"序列 {b}：{'、'.join(str(int(x)) for x in v)}" for b, v in enumerate(r["valid"])
        ),
        "tbl_e": Table(header, rows),
        "e_wrong": "、".join(f"序列 {b} 的头 {h}" for b, h in wrong["repeat"]),
        "e_worst": fmt.difference(max(max(row) for row in r["repeat"])),
        "e_share": f"{batch * heads} 个里有 {len(wrong['repeat'])} 个",
    }


# -- PAD, the loss, dropout, cross-attention ----------------------------------------------------------
def axis_values(record: dict | None = None) -> dict:
    """The PAD table broadcast over the keys (right) and over the queries (wrong)."""
    full = _record(record)
    r = full["padding_axis"]
    valid = pf.DEMO_VALID
    pad = valid.index(False)
    tables = {axis: pf.padding_visibility(valid, axis) for axis in ("key", "query")}
    outs = {}
    weights = {}
    for axis, table in tables.items():
        w, o = att.masked_attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V, table, empty_row="zero")
        outs[axis] = column(o)
        weights[axis] = w
    content = [i for i, ok in enumerate(valid) if ok]
    sdpa_row = r["query_axis"][pad]
    fmt.holds(
        PAGE,
        {
            "挡在列上与库相同": gap(r["key_axis"], outs["key"]) <= TOLERANCE,
            "挡在行上，内容行与库相同": gap(
                [r["query_axis"][i] for i in content], [outs["query"][i] for i in content]
            )
            <= TOLERANCE,
            "内容行读到了 PAD": all(weights["query"][i][pad] > 0 for i in content),
            "PAD 行什么也读不到": not any(tables["query"][pad]),
            "MultiheadAttention 的 PAD 行是 NaN": full["padding_axis"]["mha_both_nan_rows"]
            == [pad],
        },
    )
    rows = [
        [f"位置 {i}"]
        + [keys_read(tables["key"][i]), value(r["key_axis"][i])]
        + [keys_read(tables["query"][i]), value(r["query_axis"][i])]
        for i in range(N)
    ]
    header = [
        "查询",
        "挡 Key 的列：读的 Key",
        "输出（SDPA）",
        "挡查询的行：读的 Key",
        "输出（SDPA）",
    ]
    return {
        "f_pad": str(pad),
        "tbl_f": Table(header, rows),
        "f_pad_weight0": fmt.fmt(weights["query"][content[0]][pad]),
        "f_pad_weight": "、".join(fmt.fmt(weights["query"][i][pad]) for i in content),
        "f_sdpa_row": "NaN" if sdpa_row is None else "全 0" if sdpa_row == 0 else fmt.fmt(sdpa_row),
        "f_nan": "、".join(str(i) for i in r["mha_both_nan_rows"]),
    }


def loss_labels() -> dict:
    """The three ways of writing the labels (02_pitfalls_torch.loss)."""
    ids = pf.LOSS_IDS
    return {
        "no_ignore": ("不挡 PAD", ids),
        "by_position": ("按位置挡", pf.labels_from(ids, pf.LOSS_MASK, pf.PAD)),
        "by_id": ("按编号挡", pf.labels_from(ids, pf.LOSS_MASK, pf.PAD, "id")),
    }


def loss_values(record: dict | None = None) -> dict:
    r = _record(record)["loss"]
    content = [m == 1 for m in pf.LOSS_MASK]
    logits = pf.decoder_logits(pf.LOSS_IDS, content, pf.position_ids(content))
    rows = []
    gaps = []
    counted_eos = {}
    for name, (label, y) in loss_labels().items():
        result = pf.mean_loss(logits, y)
        gaps.append(abs(result["loss"] - r[name]))
        eos = [
            t for t, ok in zip(y[1:], content[1:]) if t == pf.EOS and ok
        ]  # real EOS targets kept
        counted_eos[name] = len(eos)
        labels = "、".join("−100" if t == pf.IGNORE_INDEX else str(t) for t in y)
        rows.append([label, labels, fmt.count(result["counted"]), fmt.count(len(eos))])
        rows[-1].append(fmt.fmt(result["loss"]))
    fmt.holds(
        PAGE,
        {
            "与 F.cross_entropy 相同": max(gaps) <= TOLERANCE,
            "按位置挡留下真的 EOS": counted_eos["by_position"] == 1,
            "按编号挡连真的 EOS 也挡掉了": counted_eos["by_id"] == 0,
        },
    )
    header = ["标签", "逐个位置", "计入的目标", "其中真的 EOS", "平均损失"]
    return {
        "g_ids": "、".join(map(str, pf.LOSS_IDS)),
        "g_mask": "、".join(map(str, pf.LOSS_MASK)),
        "g_pad": str(pf.PAD),
        "tbl_g": Table(header, rows),
        "g_gap": fmt.difference(max(gaps)),
        "g_by_position": fmt.fmt(r["by_position"]),
        "g_by_id": fmt.fmt(r["by_id"]),
    }


def _nan_rows_after_dropout(scores, keep) -> list[int]:
    """Rows that hold NaN once the masked scores are dropped with ``keep`` (softmax keeps a NaN row NaN)."""
    dropped = pf.dropped(scores, keep, pf.DROP_P)
    return [i for i, row in enumerate(dropped) if any(math.isnan(x) for x in row)]


def dropout_values(record: dict | None = None) -> dict:
    full = _record(record)
    r = full["dropout"]
    weights = att.attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V)[0]
    after = pf.dropped(weights, pf.DROP_KEEP, pf.DROP_P)
    causal = pf.causal_table(N)
    scores = [
        [s if ok else -math.inf for s, ok in zip(row, vis)]
        for row, vis in zip(att.scaled_scores(pf.DEMO_Q, pf.DEMO_K), causal)
    ]
    nan_rows = _nan_rows_after_dropout(scores, pf.DROP_KEEP)
    torch_after = pf.dropped(weights, r["keep_after"], pf.DROP_P)
    fmt.holds(
        PAGE,
        {
            "被屏蔽的仍是 0": all(
                x == 0 for row, vis in zip(after, causal) for x, ok in zip(row, vis) if not ok
            ),
            "行和不再是 1": any(abs(sum(row) - 1) > 1e-3 for row in after),
            "丢到 −∞ 的行成了 NaN": bool(nan_rows),
            "PyTorch 的取样：softmax 之后的数": max(
                abs(a - b) for ra, rb in zip(torch_after, r["after"]) for a, b in zip(ra, rb)
            )
            <= TOLERANCE,
            "PyTorch 的取样：丢到 −∞ 的行是 NaN": _nan_rows_after_dropout(scores, r["keep_before"])
            == r["before_nan_rows"],
            "eval 之后两次不同": r["eval_gap"] > 1e-3,
            "改对之后相同": r["guarded_gap"] == 0.0,
        },
    )
    rows = [
        [f"位置 {i}", fmt.vector(weights[i], fmt.fmt), fmt.vector(after[i], fmt.fmt)]
        + [fmt.fmt(math.fsum(after[i]))]
        for i in range(N)
    ]
    return {
        "h_p": fmt.short(pf.DROP_P),
        "h_one": "1",  # the sample's marks, glued as every number of an input box is
        "h_zero": "0",
        "h_keep": "；".join("、".join(map(str, row)) for row in pf.DROP_KEEP),
        "tbl_h": Table(["查询", "softmax 之后的权重", "dropout 之后", "行和"], rows),
        "h_nan": "、".join(map(str, nan_rows)),
        "h_torch_nan": "行 " + "、".join(map(str, r["before_nan_rows"])),
        "h_seed": fmt.count(full["seed"]),
        "h_eval_gap": fmt.difference(r["eval_gap"]),
        "h_guarded_gap": fmt.difference(r["guarded_gap"]),
    }


def cross_values(record: dict | None = None) -> dict:
    r = _record(record)["cross_attention"]
    n_target = pf.CROSS_TARGET
    target = pf.DEMO_Q[:n_target]
    tables = {
        across: pf.cross_visibility(n_target, pf.DEMO_VALID, causal_across=across)
        for across in (False, True)
    }
    outs = {
        across: column(att.masked_attention(target, pf.DEMO_K, pf.DEMO_V, t)[1])
        for across, t in tables.items()
    }
    last = max(j for j, ok in enumerate(pf.DEMO_VALID) if ok)
    pad = pf.DEMO_VALID.index(False)
    expected = {  # does target row 0 read the source position? (the teaching code's tables)
        "probe_last_content": tables[False][0][last],
        "probe_last_content_causal_across": tables[True][0][last],
        "probe_pad": tables[False][0][pad],
        "probe_pad_no_padding_mask": True,  # without the PAD table every source position is read
    }
    fmt.holds(
        PAGE,
        {
            "单位投影的一层与教学代码相同": gap(r["right"], outs[False]) <= TOLERANCE
            and gap(r["causal_across"], outs[True]) <= TOLERANCE,
            "探针与表一致": all(r[k] == v for k, v in expected.items()),
        },
    )
    rows = [
        [f"目标 {i}", keys_read(tables[False][i]), fmt.fmt(outs[False][i])]
        + [keys_read(tables[True][i]), fmt.fmt(outs[True][i])]
        for i in range(n_target)
    ]
    header = ["目标行", "正确：读源的", "输出", "因果错用：读源的", "输出"]
    moves = {True: "变", False: "不变"}
    probes = [
        [f"源的位置 {last}（最后一个内容）", "`memory_key_padding_mask`"]
        + [moves[r["probe_last_content"]], "变"],
        [f"源的位置 {last}", "另给因果形状的 `memory_mask`"]
        + [moves[r["probe_last_content_causal_across"]], "变"],
        [f"源的位置 {pad}（PAD）", "`memory_key_padding_mask`", moves[r["probe_pad"]], "不变"],
        [f"源的位置 {pad}（PAD）", "不给", moves[r["probe_pad_no_padding_mask"]], "不变"],
    ]
    return {
        "i_target": fmt.count(n_target),
        "i_pad": str(pad),
        "i_right0": fmt.fmt(outs[False][0]),
        "i_wrong0": fmt.fmt(outs[True][0]),
        "tbl_i": Table(header, rows),
        "tbl_i_probes": Table(["改动", "源的表", "目标第 0 行", "应当"], probes),
    }


# -- batched generation and positions -----------------------------------------------------------------
def tokens(ids) -> str:
    return " ".join(map(str, ids))


def numpy_generation() -> dict:
    """The teaching code's small decoder on the same prompts: alone, left, right, and the first step's gap."""
    alone = [pf.greedy(p, [True] * len(p), pf.DEMO_STEPS) for p in pf.DEMO_PROMPTS]
    out = {"alone": alone}
    first = {}
    for side in pf.SIDES:
        batch, valid = pf.pad_batch(pf.DEMO_PROMPTS, side)
        out[side] = [pf.greedy(t, v, pf.DEMO_STEPS) for t, v in zip(batch, valid)]
        first[side] = [
            max(
                abs(a - b)
                for a, b in zip(
                    pf.decoder_logits(t, v, pf.position_ids(v))[-1],
                    pf.decoder_logits(p, [True] * len(p), pf.position_ids([True] * len(p)))[-1],
                )
            )
            for t, v, p in zip(batch, valid, pf.DEMO_PROMPTS)
        ]
    out["first_step_gap"] = first
    return out


def padded_last(side: str) -> list[bool]:
    """Which prompts end in a PAD once the batch is padded on ``side``."""
    return [not v[-1] for v in pf.pad_batch(pf.DEMO_PROMPTS, side)[1]]


def generation_table(g: dict) -> Table:
    rows = [
        [
            f"提示 {b}：{tokens(p)}",
            tokens(g["alone"][b]),
            tokens(g["left"][b]),
            tokens(g["right"][b]),
        ]
        for b, p in enumerate(pf.DEMO_PROMPTS)
    ]
    return Table(["提示", "单独生成", "补在左边", "补在右边"], rows)


def generate_values(record: dict | None = None) -> dict:
    full = _record(record)
    g = full["generation"]
    mine = numpy_generation()
    ends_in_pad = padded_last("right")
    changed = [b for b in range(len(pf.DEMO_PROMPTS)) if g["right"][b] != g["alone"][b]]
    fmt.holds(
        PAGE,
        {
            "补在左边都与单独相同": g["left"] == g["alone"] and mine["left"] == mine["alone"],
            "补在左边第一步逐位相同": max(g["first_step_gap"]["left"]) == 0.0,
            "补在右边只有短提示以 PAD 结尾": ends_in_pad.count(True) == 1
            and not padded_last("left")[0],
            "以 PAD 结尾的那个第一步就变了": all(
                (g["first_step_gap"]["right"][b] > 1e-3) == ends
                and (mine["first_step_gap"]["right"][b] > 1e-3) == ends
                for b, ends in enumerate(ends_in_pad)
            ),
            "float32 只差舍入": 0 < max(g["float32_left_first_step_gap"]) <= FLOAT32_GAP,
            "float32：没补 PAD 的长提示也差一点": g["float32_left_first_step_gap"][0] > 0,
            "小解码器右侧的短提示第一个 token 就变了": all(
                (mine["right"][b][0] != mine["alone"][b][0]) == ends
                for b, ends in enumerate(ends_in_pad)
            ),
        },
    )
    short = ends_in_pad.index(True)
    config = g["config"]
    return {
        "j_config": f"词表 {config['vocab_size']}，宽度 {config['hidden_size']}，"
        f"{config['num_hidden_layers']} 层",
        "j_seed": fmt.count(full["seed"]),
        "j_steps": fmt.count(pf.DEMO_STEPS),
        "j_prompts": "；".join(tokens(p) for p in pf.DEMO_PROMPTS),
        "j_pad": str(pf.PAD),
        "j_where": where(full),
        "tbl_j": generation_table(g),
        "j_changed": f"短提示（提示 {short}）的续写变了"
        if short in changed
        else f"短提示（提示 {short}）的续写碰巧相同，第一步的 logits 却不同",
        "j_first_gap": "；".join(
            f"{'左' if side == 'left' else '右'}侧补齐，"
            + "、".join(f"提示 {b} 为 {fmt.difference(x)}" for b, x in enumerate(gaps))
            for side, gaps in g["first_step_gap"].items()
        ),
        "tbl_j_numpy": generation_table(mine),
        "j_float32_gap": fmt.difference(max(g["float32_left_first_step_gap"])),
        "j_tolerance": fmt.difference(FLOAT32_GAP),
    }


def positions_values(record: dict | None = None) -> dict:
    full = _record(record)
    r = full["positions"]
    prompt = pf.DEMO_PROMPTS[1]
    pad = len(pf.DEMO_PROMPTS[0]) - len(prompt)
    mine = {
        (e, p): pf.last_logits_gap(prompt, pad, e, p) for e in pf.EMBEDDINGS for p in pf.POSITIONS
    }
    fmt.holds(
        PAGE,
        {
            "GPT-2 不传 position_ids 就变了": r["gpt2"]["arange_gap"] > 1e-3,
            "GPT-2 传了就对": r["gpt2"]["mask_gap"] <= TOLERANCE,
            "Llama 不传也只差 float32 的舍入，但不是 0": 0
            < r["llama"]["arange_gap"]
            <= ROPE_FLOAT32,
            "Llama 传了逐位相同": r["llama"]["mask_gap"] <= TOLERANCE,
            "小解码器：位置嵌入按位置编号取行，变了；RoPE 只差舍入": mine["absolute", "arange"]
            > 1e-3
            and mine["rope", "arange"] <= TOLERANCE
            and mine["absolute", "mask"] == mine["rope", "mask"] == 0.0,
        },
    )
    rows = [
        ["GPT-2（记录）", "位置嵌入", fmt.difference(r["gpt2"]["arange_gap"])]
        + [fmt.difference(r["gpt2"]["mask_gap"])],
        ["Llama（记录）", "RoPE，转角在 float32 里算", fmt.difference(r["llama"]["arange_gap"])]
        + [fmt.difference(r["llama"]["mask_gap"])],
        ["小解码器（02_pitfalls）", "位置嵌入", fmt.difference(mine["absolute", "arange"])]
        + [fmt.difference(mine["absolute", "mask"])],
        ["小解码器（02_pitfalls）", "RoPE，float64", fmt.difference(mine["rope", "arange"])]
        + [fmt.difference(mine["rope", "mask"])],
    ]
    header = ["模型", "位置怎样进来", "不传：0、1、2…", "按 attention_mask 数"]
    return {
        "k_prompt": tokens(prompt),
        "k_pad": fmt.count(pad),
        "k_seed": fmt.count(full["seed"]),
        "k_gpt": "GPT-2（GPT2LMHeadModel）",
        "k_llama": "Llama（LlamaForCausalLM）",
        "tbl_k": Table(header, rows),
        "k_llama_gap": fmt.difference(r["llama"]["arange_gap"]),
        "k_numpy_rope": fmt.difference(mine["rope", "arange"]),
        "k_gpt_gap": fmt.difference(r["gpt2"]["arange_gap"]),
        "k_numpy_abs": fmt.difference(mine["absolute", "arange"]),
    }


# -- the hand-written decode loop ------------------------------------------------------------------------
def decode_values(record: dict | None = None) -> dict:
    """Six mistakes of a hand-written cached decode loop, as the record saw them, against the teaching code."""
    full = _record(record)
    r = full["decode_loop"]
    grows = r["mask_grows"]
    nomask = r["generate_without_mask"]
    one = r["one_query_mask"]
    hf = r["hf_mask_to_mha"]
    fills = r["finite_fills"]
    slide = r["sliding_window"]
    eager32 = fills["transformers_eager"]["float32"]
    eager64 = fills["transformers_eager"]["float64"]
    # (b) the small decoder reading its PAD as content, with positions 0, 1, 2…
    short = pf.DEMO_PROMPTS[nomask["short"]]
    padded = pf.pad_batch(pf.DEMO_PROMPTS, "left")[0][nomask["short"]]
    alone = pf.decoder_logits(short, [True] * len(short), list(range(len(short))))[-1]
    as_content = pf.decoder_logits(padded, [True] * len(padded), list(range(len(padded))))[-1]
    numpy_gap = max(abs(a - b) for a, b in zip(alone, as_content))
    # (c) one new query after N − 1 cached positions
    last = column(att.attention(pf.DEMO_Q[-1:], pf.DEMO_K, pf.DEMO_V, past=N - 1)[1])
    top_left = column(
        att.masked_attention(pf.DEMO_Q[-1:], pf.DEMO_K, pf.DEMO_V, att.row_index_visibility(1, N))[
            1
        ]
    )
    # (d) Hugging Face's 1 = keep mask for nn.MultiheadAttention, encoder (no causal rule)
    content = [m == 1 for m in pf.DECODE_HF_MASK]
    flipped = [not ok for ok in content]  # .bool(): True where the mask is 1, read as "do not read"
    outs = {
        "bool": column(att.attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V, False, key_valid=flipped)[1]),
        "equals_zero": column(
            att.attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V, False, key_valid=content)[1]
        ),
    }
    # (e) a fully masked row: the PAD's row once rows and columns of the PAD are blocked
    both = pf.padding_visibility(pf.DEMO_VALID, "both")
    filled = {
        name: att.unguarded_attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V, both, fill=f)[0][-1]
        for name, f in (("-1e9", -1e9), ("finfo.min", -sys.float_info.max))
    }
    # ... and -1e9 added to the scores instead (an additive mask), in float64: the row only shifts
    added = pf.biased_attention(
        pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V, [[0.0 if ok else -1e9 for ok in row] for row in both]
    )[0][-1]
    unmasked = att.attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V, False)[0][-1]
    # (e) Transformers' eager attention in float64: which query rows are NaN, layer by layer (the short
    # prompt's PAD rows first, then every row of it), and which positions' logits
    left_valid = pf.pad_batch(pf.DEMO_PROMPTS, "left")[1]
    pads = [i for i, ok in enumerate(left_valid[nomask["short"]]) if not ok]
    nan_spread = [pads, list(range(len(left_valid[0])))]
    nan_logits = [[b == nomask["short"]] * len(row) for b, row in enumerate(left_valid)]
    # (f) the sliding window's positions
    plen = len(pf.DEMO_PROMPTS[0])
    slid = {c: pf.sliding_positions(plen, pf.DEMO_STEPS, pf.WINDOW, c) for c in pf.SLIDING_COUNTS}
    fmt.holds(
        PAGE,
        {
            "mask 每步补一列：与 generate 相同": grows["grows"]
            == grows["generate"]
            == full["generation"]["left"],
            "旧的 mask：不报错，续写变了": grows["stale"] != grows["generate"],
            "推断不出 mask 时有提示": len(nomask["warning"]) == 1
            and "cannot be inferred" in nomask["warning"][0],
            "不给 mask，补了 PAD 的提示第一步就变了": nomask["gap_without_mask"] > 1e-3
            and numpy_gap > 1e-3,
            "给了 mask 就相同": nomask["gap_with_mask"] == 0.0,
            "整张表交给一个查询：形状错": one["table_error"] != "ran",
            "只给最后一行就对": gap(one["last_row"], last) <= TOLERANCE,
            "单用 is_causal：只读 Key 0": gap(one["is_causal"], top_left) <= TOLERANCE,
            "整数的 key_padding_mask 报错": hf["integer_error"] != "ran",
            ".bool() 只读 PAD": gap(hf["bool"], outs["bool"]) <= TOLERANCE,
            "== 0 才对": gap(hf["equals_zero"], outs["equals_zero"]) <= TOLERANCE,
            "−inf 的空行是 NaN": all(x is None for x in fills["pad_row"]["-inf"]),
            "有限的填充值：空行平均分配": all(
                gap(fills["pad_row"][k], w) <= TOLERANCE and len(set(w)) == 1
                for k, w in filled.items()
            ),
            "float16 放不下 -1e9": fills["float16_masked_fill_error"] != "ran"
            and fills["float16_of_minus_1e9"] == "-inf",
            "eager，float32 的模型：空行平均分配，logits 里没有 NaN": len(set(eager32["pad_row"]))
            == 1
            and abs(eager32["pad_row"][0] * len(eager32["pad_row"]) - 1) <= 1e-6
            and not eager32["logits_nan"],
            "eager，float64 的模型：空行是 NaN，logits 里也有": all(
                x is None for x in eager64["pad_row"]
            )
            and eager64["logits_nan"],
            "eager，float64：第一层只有 PAD 行是 NaN，第二层短提示每一行都是": eager64[
                "nan_query_rows"
            ]
            == nan_spread,
            "eager，float64：短提示每个位置的 logits 都是 NaN，长提示没有": eager64[
                "logits_nan_positions"
            ]
            == nan_logits,
            "-1e9 加到分数上（float64）：整行平移，照原分数读所有 Key": gap(added, unmasked) <= 1e-6
            and len({round(w, 4) for w in added}) > 1,
            "默认的实现：float64 的左侧补齐与单独生成相同": full["generation"]["left"]
            == full["generation"]["alone"],
            "滑动窗口：位置数看过的 token，与 generate 相同": slide["tokens_seen"]["tokens"]
            == slide["generate"],
            "拿缓存的长度当位置：续写变了": slide["cache_length"]["tokens"] != slide["generate"],
            "位置与缓存长度与教学代码相同": all(
                slide[c]["positions"] == slid[c]["positions"]
                and slide[c]["cache_held"] == slid[c]["cache_held"]
                for c in pf.SLIDING_COUNTS
            ),
        },
    )
    tokens_rows = [
        [f"提示 {b}：{tokens(p)}", tokens(grows["generate"][b]), tokens(grows["grows"][b])]
        + [tokens(grows["stale"][b])]
        for b, p in enumerate(pf.DEMO_PROMPTS)
    ] + [
        [
            f"滑动窗口 {pf.WINDOW}，提示 {tokens(pf.DEMO_PROMPTS[0])}",
            tokens(slide["generate"]),
            tokens(slide["tokens_seen"]["tokens"]),
            tokens(slide["cache_length"]["tokens"]),
        ]
    ]
    changed = next(
        b for b in range(len(pf.DEMO_PROMPTS)) if grows["stale"][b] != grows["generate"][b]
    )
    return {
        "m_where": where(full),
        "m_changed_prompt": str(changed),
        "m_changed_right": tokens(grows["generate"][changed]),
        "m_changed_wrong": tokens(grows["stale"][changed]),
        "m_gap_without": fmt.difference(nomask["gap_without_mask"]),
        "m_gap_with": fmt.difference(nomask["gap_with_mask"]),
        "m_numpy_gap": fmt.difference(numpy_gap),
        "m_short": str(nomask["short"]),
        "m_last_row": fmt.fmt(one["last_row"][0]),
        "m_is_causal": fmt.fmt(one["is_causal"][0]),
        "m_hf_mask": "、".join(map(str, pf.DECODE_HF_MASK)),
        "m_bool": "、".join(value(x) for x in hf["bool"]),
        "m_bool0": value(hf["bool"][0]),
        "m_equals_zero": "、".join(value(x) for x in hf["equals_zero"]),
        "m_uniform": fmt.fmt(fills["pad_row"]["-1e9"][0]),
        "m_eager32": fmt.fmt(eager32["pad_row"][0]),
        "m_window": fmt.count(pf.WINDOW),
        "m_held": fmt.count(slide["tokens_seen"]["cache_held"][0]),
        "m_seen": "、".join(map(str, slide["tokens_seen"]["positions"])),
        "m_wrong_positions": "、".join(map(str, slide["cache_length"]["positions"])),
        "tbl_m_messages": Table(
            ["哪一种错", "库给出的原文"],
            [
                ["`generate` 不给 `attention_mask`（警告）", nomask["warning"][0]],
                ["整张因果表交给一个查询", f"RuntimeError: {one['table_error']}"],
                ["整数的 `key_padding_mask`", f"AssertionError: {hf['integer_error']}"],
                [
                    "float16 的 `masked_fill(…, -1e9)`",
                    f"RuntimeError: {fills['float16_masked_fill_error']}",
                ],
            ],
        ),
        "tbl_m": Table(["提示", "generate", "对的循环", "错的循环"], tokens_rows),
    }


# -- the record -----------------------------------------------------------------------------------------
SECTIONS = (
    polarity_values,
    float_values,
    lines_values,
    causal_values,
    heads_values,
    axis_values,
    loss_values,
    dropout_values,
    cross_values,
    generate_values,
    positions_values,
    decode_values,
)


def check_record(record: dict) -> None:
    """Every section's claims against the teaching code: a ``ValueError`` names the first that fails."""
    for section in SECTIONS:
        section(record)


def record_values(record: dict | None = None) -> dict:
    r = _record(record)
    check_record(r)
    return {"r_where": where(r), "r_record": Md(f"```json\n{fmt.json_text(r)}\n```")}


# -- the exercises ---------------------------------------------------------------------------------------
def exercise_values() -> dict:
    """Every number and table of the exercises and their solutions."""
    a1 = ex.strict_causal()
    rows1 = [
        [f"查询 {i}", "、".join(map(str, keys)) or "无", "NaN" if not keys else "—"]
        for i, keys in enumerate(a1["visible"])
    ]
    a2 = ex.float_row()
    bias = pf.tril(len(ex.FLOAT_SCORES))[ex.FLOAT_ROW]
    rows2 = [
        [f"Key {j}", fmt.short(s), fmt.short(b), fmt.fmt(w), fmt.fmt(r)]
        for j, (s, b, w, r) in enumerate(zip(ex.FLOAT_SCORES, bias, a2["weights"], a2["right"]))
    ]
    a3 = ex.read_columns()
    rows3 = [
        [f"序列 {b}", "、".join(map(str, m)), "是" if pad else "不是", f"第 {last} 个"]
        for b, (m, pad, last) in enumerate(zip(ex.RIGHT_MASK, a3["pad_at_last"], a3["last_real"]))
    ]
    by_id = pf.labels_from(ex.CODE_IDS, ex.CODE_MASK, pf.PAD, "id")
    return {
        "x1_n": fmt.count(ex.LINE_N),
        "x1_line": Md(
            f"`scores.masked_fill(torch.tril(torch.ones(n, n), diagonal={ex.LINE_DIAGONAL}) == 0, "
            'float("-inf"))`'
        ),
        "x1_table": Table(["查询", "读得到的 Key", "softmax 之后"], rows1),
        "x1_empty": fmt.names("查询", a1["empty"]),
        "x2_scores": fmt.vector(ex.FLOAT_SCORES),
        "x2_row": fmt.count(ex.FLOAT_ROW),
        "x2_bias": fmt.vector(bias),
        "x2_table": Table(["Key", "分数", "加上的数", "权重（0/1 表）", "权重（0/−∞ 表）"], rows2),
        "x2_future": fmt.fmt(a2["future"]),
        "x3_masks": "；".join(
            f"序列 {b}：{'、'.join(map(str, m))}" for b, m in enumerate(ex.RIGHT_MASK)
        ),
        "x3_table": Table(
            [
                "序列",
                "attention_mask",
                "最后一列是 PAD",
                "左侧补齐后最后一列（真实 token，从 0 数）",
            ],
            rows3,
        ),
        "x4_doctest": Md(fmt.doctest_block(ex.loss_labels)),
        "x4_by_id": "、".join("−100" if t == pf.IGNORE_INDEX else str(t) for t in by_id),
    }
