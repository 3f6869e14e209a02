"""The pitfalls page's book side: one function per section of book/ch02/pitfalls.md, each a page.Section.

Each mistake is computed by ``02_pitfalls`` and observed in the record ``make crosscheck`` keeps
(``code/02_pitfalls_torch.json``, read by :func:`torch_record`). A section checks the facts of the page's
fixed sentences against both with ``Section.holds``: an edited record stops the build naming the fact.
The page types the examples' inputs ({input} roles naming 02_pitfalls' constants); a section glues what
the run computes or the record holds.
"""

from __future__ import annotations

import importlib
import json
import math
import sys
from operator import itemgetter
from pathlib import Path

from chapter import conventions, fmt
from chapter.page import Col, Section, key, listing

att = importlib.import_module("02_attention")
pf = importlib.import_module("02_pitfalls")
ex = importlib.import_module("02_exercises_pitfalls")

PAGE = "写进真实代码一页"
TOLERANCE = 1e-12  # float64: the library and the teaching code may differ only by rounding
ROPE_FLOAT32 = (
    1e-5  # Transformers turns RoPE's angles in float32: a shift moves the logits this little
)
FLOAT32_GAP = 1e-4  # batched and single float32 runs may differ by this much: rounding, not padding
TORCH_RECORD = Path(pf.__file__).with_name("02_pitfalls_torch.json")
N = len(pf.DEMO_Q)


def torch_record() -> dict:
    """What ``code/02_pitfalls_torch.py`` printed when ``make crosscheck`` last ran it (a build: no torch)."""
    return json.loads(TORCH_RECORD.read_text(encoding="utf-8"))


def where(record: dict) -> str:
    """Where the record was made: ``PyTorch 2.13.0+cpu、Transformers 5.17.0，CPU，float64``."""
    device = conventions.DEVICE_NAMES[record["device"]]
    return f"PyTorch {record['torch']}、Transformers {record['transformers']}，{device}，{record['dtype']}"


def observed(x: float | None) -> str:
    """A value the library gave, or NaN where it gave NaN (the record writes it as null)."""
    return "NaN" if x is None or (isinstance(x, float) and math.isnan(x)) else fmt.fmt(x)


def observed_all(xs) -> str:
    return listing(map(observed, xs))


def keys_read(row) -> str:
    """The keys a row of a visibility table reads: ``0、2``; none: ``无``."""
    return listing(j for j, ok in enumerate(row) if ok)


def at(i: int) -> str:
    """A query's label in a table: ``位置 2``."""
    return f"位置 {i}"


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


def tokens(ids) -> str:
    return " ".join(map(str, ids))


def texts(*headers: str) -> list[Col]:
    """Columns of rows already written as words, one header each."""
    return [Col(h, itemgetter(c), "text") for c, h in enumerate(headers)]


def right_outputs() -> list[float]:
    """The causal outputs of the shared example, by ``02_attention.attention``."""
    return column(att.attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V)[1])


# -- the shared example ------------------------------------------------------------------------------
def demo() -> Section:
    s = Section(PAGE, "怎样实现")
    s.value("count", demo_n=N)
    s.text(
        demo_v=listing(fmt.short(row[0]) for row in pf.DEMO_V),
        demo_right=listing(map(fmt.fmt, right_outputs())),
        demo_where=where(torch_record()),
    )
    return s


# -- the table given to the library ------------------------------------------------------------------
def polarity() -> Section:
    """SDPA and nn.MultiheadAttention given the same True = allowed table."""
    s = Section(PAGE, "布尔的方向")
    r = torch_record()["polarity"]
    flipped = pf.inverted(pf.causal_table(N))
    literal = column(att.unguarded_attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V, flipped)[1])
    right = right_outputs()
    s.holds(
        sdpa_reads_right=gap(r["sdpa"], right) <= TOLERANCE,
        mha_reads_the_inverted_table=gap(r["mha"], literal) <= TOLERANCE,
        last_row_reads_nothing_and_is_nan=r["mha_nan_rows"] == [N - 1] == rows_with_nan(literal),
        inverted_equals_sdpa=gap(r["mha_fixed"], right) <= TOLERANCE,
    )
    s.table(
        "tbl_a",
        range(N),
        Col("查询", at, "text"),
        Col("SDPA 的输出", lambda i: observed(r["sdpa"][i]), "text"),
        Col("MHA 读的 Key", lambda i: keys_read(flipped[i]), "text"),
        Col("MHA 的输出", lambda i: observed(r["mha"][i]), "text"),
        Col("交给 MHA ~allowed", lambda i: observed(r["mha_fixed"][i]), "text"),
    )
    reads = [
        f"{at(i)} 读 {keys_read(row)}" if any(row) else f"{at(i)} 什么也读不到"
        for i, row in enumerate(flipped)
    ]
    s.text(
        a_reads="；".join(reads),
        a_nan=fmt.names("位置", r["mha_nan_rows"]),
        a_wrong0=observed(r["mha"][0]),
    )
    s.value(a_right0=right[0])
    return s


def float_mask() -> Section:
    """``torch.tril(torch.ones(n, n))`` added to the scores."""
    s = Section(PAGE, "0/1 的浮点表是加上去的")
    r = torch_record()["float_mask"]
    weights, outputs = pf.biased_attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V, pf.tril(N))
    future = pf.future_weights(weights)
    wrong = column(outputs)
    right = right_outputs()
    s.holds(
        first_row_weighs_the_future=future[0] > 0,
        sdpa_adds_the_table=gap(r["wrong"], wrong) <= TOLERANCE,
        boolean_table_reads_right=gap(r["fixed"], right) <= TOLERANCE,
    )
    s.table(
        "tbl_b",
        range(N),
        Col("查询", at, "text"),
        Col("落在未来 Key 上的权重", future.__getitem__),
        Col("0/1 浮点表的输出", wrong.__getitem__),
        Col("布尔表的输出", right.__getitem__),
    )
    s.value(b_future0=future[0])
    s.value("difference", b_gap=gap(r["wrong"], wrong))
    return s


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


def lines() -> Section:
    """Which keys each masked_fill line leaves readable; the record's rows against them."""
    s = Section(PAGE, "tril 还是 triu，== 0 还是 .bool()")
    r = torch_record()["lines"]
    tables = {name: line_table(name) for name in LINES}
    s.holds(
        tril_equals_zero_is_causal=tables["tril == 0"] == pf.causal_table(N),
        triu_1_bool_is_causal=tables["triu(1).bool()"] == pf.causal_table(N),
        record_matches_row_by_row=all(
            r[name]["read"] == [sum(row) for row in t]
            and r[name]["nan_rows"] == [i for i, row in enumerate(t) if not any(row)]
            for name, t in tables.items()
        ),
        triu_bool_first_row_reads_nothing=not any(tables["triu.bool()"][0]),
        tril_bool_last_row_reads_nothing=not any(tables["tril.bool()"][-1]),
    )
    s.table(
        "tbl_c",
        LINES,
        Col("写法", lambda name: LINES[name][3], "text"),
        *(
            Col(f"位置 {i} 读的 Key", lambda name, i=i: keys_read(tables[name][i]), "text")
            for i in range(N)
        ),
        Col("NaN 的行（PyTorch）", lambda name: fmt.names("位置", r[name]["nan_rows"]), "text"),
    )
    s.text(c_bool0=keys_read(tables["tril.bool()"][0]))
    return s


def causal() -> Section:
    """``is_causal=True`` together with ``attn_mask``: SDPA's error, MultiheadAttention's dropped mask."""
    s = Section(PAGE, "is_causal=True 与 attn_mask 一起给")
    full = torch_record()
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
    fast_content = [paths["fast"][i] for i in content]
    s.holds(
        sdpa_raises=r["sdpa"] != "ran",
        conventions_drop_attn_mask=mha["is_causal_with_mask_no_weights"] == "top-left",
        conventions_use_attn_mask_with_weights_or_padding=mha["is_causal_with_mask"]
        == mha["is_causal_with_mask_and_padding_no_weights"]
        == "attn_mask",
        empty_rows_are_pad_rows=empty == [not ok for ok in valid],
        mha_uses_causal_rule_only=gap(r["mha"], causal_only) <= TOLERANCE,
        pad_is_read=gap([r["mha"][i] for i in content], [with_pad[i] for i in content]) > 1e-3,
        slow_path_drops_attn_mask=gap(paths["slow"], slow_expected) <= TOLERANCE,
        fast_path_uses_attn_mask=gap(fast_content, [fast_expected[i] for i in content])
        <= TOLERANCE,
        fast_path_pad_row_nan=rows_with_nan(paths["fast"]) == [valid.index(False)],
        batch_first_false_takes_slow_path=gap(paths["batch_first_false"], slow_expected)
        <= TOLERANCE,
        conventions_is_causal_alone_raises=mha["is_causal_without_mask"] == "error",
        fast_is_causal_alone_masks_nothing=gap(paths["fast_is_causal_alone"], unmasked) <= TOLERANCE
        and gap(paths["fast_is_causal_alone"], slow_expected) > 1e-3,
    )
    s.table(
        "tbl_d",
        range(N),
        Col("查询", at, "text"),
        Col("MHA 的输出", lambda i: observed(r["mha"][i]), "text"),
        Col("只用因果规则", causal_only.__getitem__),
        Col(
            "因果与 PAD（应得）",
            lambda i: "无（一个 Key 也读不到）" if empty[i] else fmt.fmt(with_pad[i]),
            "text",
        ),
    )
    s.text(
        d_pad=listing(i for i, ok in enumerate(valid) if not ok),
        d_where=where(full),
        d_wrong=observed(r["mha"][content[0]]),
        d_at=str(content[0]),
        d_fast=observed_all(paths["fast"]),
        d_slow=observed_all(paths["slow"]),
        d_seq_first=observed_all(paths["batch_first_false"]),
        d_fast_alone=observed_all(paths["fast_is_causal_alone"]),
    )
    s.md(d_error=f"```text\nRuntimeError: {r['sdpa']}\n```")
    s.value("difference", d_gap=gap(r["mha"], causal_only))
    s.value(d_right=with_pad[content[0]])
    return s


def heads() -> Section:
    """Which sequence's table each (sequence, head) got, and the recorded difference it made."""
    s = Section(PAGE, "三维 mask 的头顺序")
    r = torch_record()["head_order"]
    batch = len(r["valid"])
    n_heads = len(r["repeat"][0])
    slots = [(b, h) for b in range(batch) for h in range(n_heads)]
    owners = {layout: pf.slot_owners(batch, n_heads, layout) for layout in pf.LAYOUTS}
    wrong = {
        layout: [(b, h) for b, h in slots if owners[layout][b][h] != b] for layout in pf.LAYOUTS
    }
    moved = {
        layout: [(b, h) for b, h in slots if r[layout][b][h] > TOLERANCE] for layout in pf.LAYOUTS
    }
    s.holds(
        wrong_tables_are_the_moved_outputs=wrong == moved,
        repeat_gives_wrong_tables=bool(wrong["repeat"]),
        repeat_interleave_gives_none=not wrong["repeat_interleave"],
    )
    cols = [
        Col("序列", lambda bh: f"序列 {bh[0]}", "text"),
        Col("头", lambda bh: f"头 {bh[1]}", "text"),
    ]
    for layout in pf.LAYOUTS:
        cols.append(
            Col(
                f"{layout}：拿到", lambda bh, x=layout: f"序列 {owners[x][bh[0]][bh[1]]} 的", "text"
            )
        )
        cols.append(Col("最大差", lambda bh, x=layout: r[x][bh[0]][bh[1]], "difference"))
    s.table("tbl_e", slots, *cols)
    s.value("count", e_batch=batch, e_heads=n_heads, e_slots=len(slots))
    s.value("count", e_wrong_n=len(wrong["repeat"]))
    s.text(
        e_valid="；".join(
            f"序列 {b}：{listing(int(x) for x in v)}" for b, v in enumerate(r["valid"])
        ),
        e_wrong=listing(f"序列 {b} 的头 {h}" for b, h in wrong["repeat"]),
    )
    s.value("difference", e_worst=max(max(row) for row in r["repeat"]))
    return s


# -- PAD, the loss, dropout, cross-attention ----------------------------------------------------------
def axis() -> Section:
    """The PAD table broadcast over the keys (right) and over the queries (wrong)."""
    s = Section(PAGE, "PAD 挡在了查询的行上")
    r = torch_record()["padding_axis"]
    valid = pf.DEMO_VALID
    pad = valid.index(False)
    tables = {name: pf.padding_visibility(valid, name) for name in ("key", "query")}
    outs = {}
    weights = {}
    for name, table in tables.items():
        w, o = att.masked_attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V, table, empty_row="zero")
        outs[name] = column(o)
        weights[name] = w
    content = [i for i, ok in enumerate(valid) if ok]
    sdpa_row = r["query_axis"][pad]
    s.holds(
        key_axis_matches_library=gap(r["key_axis"], outs["key"]) <= TOLERANCE,
        query_axis_content_rows_match_library=gap(
            [r["query_axis"][i] for i in content], [outs["query"][i] for i in content]
        )
        <= TOLERANCE,
        content_rows_read_pad=all(weights["query"][i][pad] > 0 for i in content),
        pad_row_reads_nothing=not any(tables["query"][pad]),
        mha_pad_row_nan=r["mha_both_nan_rows"] == [pad],
    )
    s.table(
        "tbl_f",
        range(N),
        Col("查询", at, "text"),
        Col("挡 Key 的列：读的 Key", lambda i: keys_read(tables["key"][i]), "text"),
        Col("输出（SDPA）", lambda i: observed(r["key_axis"][i]), "text"),
        Col("挡查询的行：读的 Key", lambda i: keys_read(tables["query"][i]), "text"),
        Col("输出（SDPA）", lambda i: observed(r["query_axis"][i]), "text"),
    )
    s.text(
        f_pad=str(pad),
        f_pad_weight=listing(fmt.fmt(weights["query"][i][pad]) for i in content),
        f_sdpa_row="NaN" if sdpa_row is None else "全 0" if sdpa_row == 0 else fmt.fmt(sdpa_row),
        f_nan=listing(r["mha_both_nan_rows"]),
    )
    s.value(f_pad_weight0=weights["query"][content[0]][pad])
    return s


def loss_labels() -> dict:
    """The three ways of writing the labels (02_pitfalls_torch.loss)."""
    ids = pf.LOSS_IDS
    return {
        "no_ignore": ("不挡 PAD", ids),
        "by_position": ("按位置挡", pf.labels_from(ids, pf.LOSS_MASK, pf.PAD)),
        "by_id": ("按编号挡", pf.labels_from(ids, pf.LOSS_MASK, pf.PAD, "id")),
    }


def label_text(labels) -> str:
    """Labels as the page writes them, −100 for the ignored."""
    return listing("−100" if t == pf.IGNORE_INDEX else str(t) for t in labels)


def loss() -> Section:
    s = Section(PAGE, "PAD 目标进了损失")
    r = torch_record()["loss"]
    content = [m == 1 for m in pf.LOSS_MASK]
    logits = pf.decoder_logits(pf.LOSS_IDS, content, pf.position_ids(content))
    rows = []
    for name, (label, y) in loss_labels().items():
        result = pf.mean_loss(logits, y)
        eos = [t for t, ok in zip(y[1:], content[1:]) if t == pf.EOS and ok]  # real EOS kept
        rows.append((name, label, y, result, len(eos)))
    eos_kept = {row[0]: row[4] for row in rows}
    gaps = [abs(row[3]["loss"] - r[row[0]]) for row in rows]
    s.holds(
        matches_cross_entropy=max(gaps) <= TOLERANCE,
        by_position_keeps_real_eos=eos_kept["by_position"] == 1,
        by_id_drops_real_eos=eos_kept["by_id"] == 0,
    )
    s.table(
        "tbl_g",
        rows,
        Col("标签", itemgetter(1), "text"),
        Col("逐个位置", lambda row: label_text(row[2]), "text"),
        Col("计入的目标", lambda row: row[3]["counted"], "count"),
        Col("其中真的 EOS", itemgetter(4), "count"),
        Col("平均损失", lambda row: row[3]["loss"]),
    )
    s.value("difference", g_gap=max(gaps))
    s.value(g_by_position=r["by_position"], g_by_id=r["by_id"])
    return s


def nan_rows_after_dropout(scores, keep) -> list[int]:
    """Rows that hold NaN once the masked scores are dropped with ``keep`` (softmax keeps a NaN row NaN)."""
    dropped = pf.dropped(scores, keep, pf.DROP_P)
    return [i for i, row in enumerate(dropped) if any(math.isnan(x) for x in row)]


def dropout() -> Section:
    s = Section(PAGE, "dropout 放在哪里")
    full = torch_record()
    r = full["dropout"]
    weights = att.attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V)[0]
    after = pf.dropped(weights, pf.DROP_KEEP, pf.DROP_P)
    visible = pf.causal_table(N)
    scores = [
        [x if ok else -math.inf for x, ok in zip(row, vis)]
        for row, vis in zip(att.scaled_scores(pf.DEMO_Q, pf.DEMO_K), visible)
    ]
    nan_rows = nan_rows_after_dropout(scores, pf.DROP_KEEP)
    torch_after = pf.dropped(weights, r["keep_after"], pf.DROP_P)
    s.holds(
        masked_stay_zero=all(
            x == 0 for row, vis in zip(after, visible) for x, ok in zip(row, vis) if not ok
        ),
        row_sums_are_not_one=any(abs(sum(row) - 1) > 1e-3 for row in after),
        dropped_inf_rows_are_nan=bool(nan_rows),
        torch_sample_after_softmax_matches=max(
            abs(a - b) for ra, rb in zip(torch_after, r["after"]) for a, b in zip(ra, rb)
        )
        <= TOLERANCE,
        torch_sample_inf_rows_are_nan=nan_rows_after_dropout(scores, r["keep_before"])
        == r["before_nan_rows"],
        eval_calls_differ=r["eval_gap"] > 1e-3,
        guarded_calls_agree=r["guarded_gap"] == 0.0,
    )
    s.table(
        "tbl_h",
        range(N),
        Col("查询", at, "text"),
        Col("softmax 之后的权重", lambda i: fmt.vector(weights[i], fmt.fmt), "text"),
        Col("dropout 之后", lambda i: fmt.vector(after[i], fmt.fmt), "text"),
        Col("行和", lambda i: math.fsum(after[i])),
    )
    s.text(
        h_keep="；".join(listing(row) for row in pf.DROP_KEEP),
        h_nan=listing(nan_rows),
        h_torch_nan=listing(r["before_nan_rows"]),
    )
    s.value("count", h_seed=full["seed"])
    s.value("difference", h_eval_gap=r["eval_gap"], h_guarded_gap=r["guarded_gap"])
    return s


def cross() -> Section:
    s = Section(PAGE, "交叉注意力没有因果规则")
    r = torch_record()["cross_attention"]
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
    s.holds(
        unit_projection_layer_matches=gap(r["right"], outs[False]) <= TOLERANCE
        and gap(r["causal_across"], outs[True]) <= TOLERANCE,
        probes_match_tables=all(r[k] == v for k, v in expected.items()),
    )
    s.table(
        "tbl_i",
        range(n_target),
        Col("目标行", lambda i: f"目标 {i}", "text"),
        Col("正确：读源的", lambda i: keys_read(tables[False][i]), "text"),
        Col("输出", outs[False].__getitem__),
        Col("因果错用：读源的", lambda i: keys_read(tables[True][i]), "text"),
        Col("输出", outs[True].__getitem__),
    )
    moves = {True: "变", False: "不变"}
    probes = [
        (
            f"源的位置 {last}（最后一个内容）",
            "`memory_key_padding_mask`",
            "probe_last_content",
            "变",
        ),
        (
            f"源的位置 {last}",
            "另给因果形状的 `memory_mask`",
            "probe_last_content_causal_across",
            "变",
        ),
        (f"源的位置 {pad}（PAD）", "`memory_key_padding_mask`", "probe_pad", "不变"),
        (f"源的位置 {pad}（PAD）", "不给", "probe_pad_no_padding_mask", "不变"),
    ]
    s.table(
        "tbl_i_probes",
        probes,
        Col("改动", itemgetter(0), "text"),
        Col("源的表", itemgetter(1), "text"),
        Col("目标第 0 行", lambda p: moves[r[p[2]]], "text"),
        Col("应当", itemgetter(3), "text"),
    )
    s.text(i_pad=str(pad))
    s.value(i_right0=outs[False][0], i_wrong0=outs[True][0])
    return s


# -- batched generation and positions -----------------------------------------------------------------
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


def generation_table(s: Section, name: str, g: dict) -> None:
    s.table(
        name,
        range(len(pf.DEMO_PROMPTS)),
        Col("提示", lambda b: f"提示 {b}：{tokens(pf.DEMO_PROMPTS[b])}", "text"),
        Col("单独生成", lambda b: tokens(g["alone"][b]), "text"),
        Col("补在左边", lambda b: tokens(g["left"][b]), "text"),
        Col("补在右边", lambda b: tokens(g["right"][b]), "text"),
    )


def generate() -> Section:
    s = Section(PAGE, "批量生成：PAD 补在哪一侧")
    full = torch_record()
    g = full["generation"]
    mine = numpy_generation()
    ends_in_pad = padded_last("right")
    float32_gaps = g["float32_left_first_step_gap"]
    s.holds(
        left_equals_alone=g["left"] == g["alone"] and mine["left"] == mine["alone"],
        left_first_step_bitwise_equal=max(g["first_step_gap"]["left"]) == 0.0,
        right_only_short_prompt_ends_in_pad=ends_in_pad.count(True) == 1
        and not padded_last("left")[0],
        pad_ending_prompt_changes_at_first_step=all(
            (g["first_step_gap"]["right"][b] > 1e-3) == ends
            and (mine["first_step_gap"]["right"][b] > 1e-3) == ends
            for b, ends in enumerate(ends_in_pad)
        ),
        float32_differs_by_rounding_only=0 < max(float32_gaps) <= FLOAT32_GAP,
        float32_long_prompt_differs_too=float32_gaps[0] > 0,
        numpy_right_short_prompt_first_token_changes=all(
            (mine["right"][b][0] != mine["alone"][b][0]) == ends
            for b, ends in enumerate(ends_in_pad)
        ),
    )
    short = ends_in_pad.index(True)
    config = g["config"]
    generation_table(s, "tbl_j", g)
    generation_table(s, "tbl_j_numpy", mine)
    s.value(
        "count",
        j_vocab=config["vocab_size"],
        j_width=config["hidden_size"],
        j_layers=config["num_hidden_layers"],
        j_seed=full["seed"],
    )
    s.text(
        j_prompts="；".join(tokens(p) for p in pf.DEMO_PROMPTS),
        j_where=where(full),
        j_changed=f"短提示（提示 {short}）的续写变了"
        if g["right"][short] != g["alone"][short]
        else f"短提示（提示 {short}）的续写碰巧相同，第一步的 logits 却不同",
        j_first_gap="；".join(
            f"{'左' if side == 'left' else '右'}侧补齐，"
            + listing(f"提示 {b} 为 {fmt.difference(x)}" for b, x in enumerate(gaps))
            for side, gaps in g["first_step_gap"].items()
        ),
    )
    s.value("difference", j_float32_gap=max(float32_gaps), j_tolerance=FLOAT32_GAP)
    return s


def positions() -> Section:
    s = Section(PAGE, "左侧补齐与位置向量")
    full = torch_record()
    r = full["positions"]
    prompt = pf.DEMO_PROMPTS[1]
    pad = len(pf.DEMO_PROMPTS[0]) - len(prompt)
    mine = {
        (e, p): pf.last_logits_gap(prompt, pad, e, p) for e in pf.EMBEDDINGS for p in pf.POSITIONS
    }
    s.holds(
        gpt2_changes_without_position_ids=r["gpt2"]["arange_gap"] > 1e-3,
        gpt2_right_with_position_ids=r["gpt2"]["mask_gap"] <= TOLERANCE,
        llama_differs_by_float32_rounding_only=0 < r["llama"]["arange_gap"] <= ROPE_FLOAT32,
        llama_bitwise_with_position_ids=r["llama"]["mask_gap"] <= TOLERANCE,
        small_decoder_absolute_changes_rope_rounds=mine["absolute", "arange"] > 1e-3
        and mine["rope", "arange"] <= TOLERANCE
        and mine["absolute", "mask"] == mine["rope", "mask"] == 0.0,
    )
    rows = [
        ("GPT-2（记录）", "位置嵌入", r["gpt2"]["arange_gap"], r["gpt2"]["mask_gap"]),
        (
            "Llama（记录）",
            "RoPE，转角在 float32 里算",
            r["llama"]["arange_gap"],
            r["llama"]["mask_gap"],
        ),
        (
            "小解码器（02_pitfalls）",
            "位置嵌入",
            mine["absolute", "arange"],
            mine["absolute", "mask"],
        ),
        ("小解码器（02_pitfalls）", "RoPE，float64", mine["rope", "arange"], mine["rope", "mask"]),
    ]
    s.table(
        "tbl_k",
        rows,
        *texts("模型", "位置怎样进来"),
        Col("不传：0、1、2…", itemgetter(2), "difference"),
        Col("按 attention_mask 数", itemgetter(3), "difference"),
    )
    s.text(k_prompt=tokens(prompt))
    s.value("count", k_pad=pad, k_seed=full["seed"])
    s.value(
        "difference",
        k_llama_gap=r["llama"]["arange_gap"],
        k_numpy_rope=mine["rope", "arange"],
        k_gpt_gap=r["gpt2"]["arange_gap"],
        k_numpy_abs=mine["absolute", "arange"],
    )
    return s


# -- the hand-written decode loop ------------------------------------------------------------------------
def decode() -> Section:
    """Six mistakes of a hand-written cached decode loop, as the record saw them, against the teaching code."""
    s = Section(PAGE, "自己写的解码循环")
    full = torch_record()
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
    top_left_table = att.row_index_visibility(1, N)
    top_left = column(att.masked_attention(pf.DEMO_Q[-1:], pf.DEMO_K, pf.DEMO_V, top_left_table)[1])
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
    bias = [[0.0 if ok else -1e9 for ok in row] for row in both]
    added = pf.biased_attention(pf.DEMO_Q, pf.DEMO_K, pf.DEMO_V, bias)[0][-1]
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
    s.holds(
        growing_mask_equals_generate=grows["grows"]
        == grows["generate"]
        == full["generation"]["left"],
        stale_mask_changes_silently=grows["stale"] != grows["generate"],
        warns_when_mask_cannot_be_inferred=len(nomask["warning"]) == 1
        and "cannot be inferred" in nomask["warning"][0],
        no_mask_changes_padded_prompt_first_step=nomask["gap_without_mask"] > 1e-3
        and numpy_gap > 1e-3,
        with_mask_equal=nomask["gap_with_mask"] == 0.0,
        whole_table_for_one_query_shape_error=one["table_error"] != "ran",
        last_row_only_is_right=gap(one["last_row"], last) <= TOLERANCE,
        is_causal_alone_reads_key_0=gap(one["is_causal"], top_left) <= TOLERANCE,
        integer_key_padding_mask_raises=hf["integer_error"] != "ran",
        bool_reads_only_pad=gap(hf["bool"], outs["bool"]) <= TOLERANCE,
        equals_zero_is_right=gap(hf["equals_zero"], outs["equals_zero"]) <= TOLERANCE,
        inf_empty_row_is_nan=all(x is None for x in fills["pad_row"]["-inf"]),
        finite_fill_spreads_evenly=all(
            gap(fills["pad_row"][k], w) <= TOLERANCE and len(set(w)) == 1 for k, w in filled.items()
        ),
        float16_cannot_hold_minus_1e9=fills["float16_masked_fill_error"] != "ran"
        and fills["float16_of_minus_1e9"] == "-inf",
        eager_float32_spreads_evenly_no_nan_logits=len(set(eager32["pad_row"])) == 1
        and abs(eager32["pad_row"][0] * len(eager32["pad_row"]) - 1) <= 1e-6
        and not eager32["logits_nan"],
        eager_float64_empty_row_and_logits_nan=all(x is None for x in eager64["pad_row"])
        and eager64["logits_nan"],
        eager_float64_nan_spreads_from_pad_rows=eager64["nan_query_rows"] == nan_spread,
        eager_float64_short_prompt_logits_all_nan=eager64["logits_nan_positions"] == nan_logits,
        added_minus_1e9_only_shifts_the_row=gap(added, unmasked) <= 1e-6
        and len({round(w, 4) for w in added}) > 1,
        default_left_padding_equals_alone=full["generation"]["left"] == full["generation"]["alone"],
        sliding_positions_count_tokens_seen=slide["tokens_seen"]["tokens"] == slide["generate"],
        cache_length_positions_change_continuation=slide["cache_length"]["tokens"]
        != slide["generate"],
        sliding_positions_match_teaching_code=all(
            slide[c]["positions"] == slid[c]["positions"]
            and slide[c]["cache_held"] == slid[c]["cache_held"]
            for c in pf.SLIDING_COUNTS
        ),
    )
    loops = [
        (f"提示 {b}：{tokens(p)}", grows["generate"][b], grows["grows"][b], grows["stale"][b])
        for b, p in enumerate(pf.DEMO_PROMPTS)
    ]
    loops.append(
        (
            f"滑动窗口 {pf.WINDOW}，提示 {tokens(pf.DEMO_PROMPTS[0])}",
            slide["generate"],
            slide["tokens_seen"]["tokens"],
            slide["cache_length"]["tokens"],
        )
    )
    s.table(
        "tbl_m",
        loops,
        Col("提示", itemgetter(0), "text"),
        Col("generate", lambda row: tokens(row[1]), "text"),
        Col("对的循环", lambda row: tokens(row[2]), "text"),
        Col("错的循环", lambda row: tokens(row[3]), "text"),
    )
    messages = [
        ("`generate` 不给 `attention_mask`（警告）", nomask["warning"][0]),
        ("整张因果表交给一个查询", f"RuntimeError: {one['table_error']}"),
        ("整数的 `key_padding_mask`", f"AssertionError: {hf['integer_error']}"),
        (
            "float16 的 `masked_fill(…, -1e9)`",
            f"RuntimeError: {fills['float16_masked_fill_error']}",
        ),
    ]
    s.table("tbl_m_messages", messages, *texts("哪一种错", "库给出的原文"))
    changed = next(
        b for b in range(len(pf.DEMO_PROMPTS)) if grows["stale"][b] != grows["generate"][b]
    )
    s.text(
        m_where=where(full),
        m_changed_prompt=str(changed),
        m_changed_right=tokens(grows["generate"][changed]),
        m_changed_wrong=tokens(grows["stale"][changed]),
        m_short=str(nomask["short"]),
        m_bool=observed_all(hf["bool"]),
        m_bool0=observed(hf["bool"][0]),
        m_equals_zero=observed_all(hf["equals_zero"]),
        m_seen=listing(slide["tokens_seen"]["positions"]),
        m_wrong_positions=listing(slide["cache_length"]["positions"]),
    )
    s.value(
        "difference",
        m_gap_without=nomask["gap_without_mask"],
        m_gap_with=nomask["gap_with_mask"],
        m_numpy_gap=numpy_gap,
    )
    s.value(
        m_last_row=one["last_row"][0],
        m_is_causal=one["is_causal"][0],
        m_uniform=fills["pad_row"]["-1e9"][0],
        m_eager32=eager32["pad_row"][0],
    )
    s.value("count", m_held=slide["tokens_seen"]["cache_held"][0])
    return s


# -- the record -----------------------------------------------------------------------------------------
SECTIONS = (
    polarity,
    float_mask,
    lines,
    causal,
    heads,
    axis,
    loss,
    dropout,
    cross,
    generate,
    positions,
    decode,
)


def check_record() -> None:
    """Every section's facts against the teaching code: a ``ValueError`` names the first that fails."""
    for section in SECTIONS:
        section()


def record() -> Section:
    s = Section(PAGE, "怎样观察与验证")
    check_record()
    r = torch_record()
    s.text(r_where=where(r))
    s.md(r_record=f"```json\n{fmt.json_text(r)}\n```")
    return s


def run_output() -> Section:
    """What running 02_pitfalls.py prints."""
    s = Section(PAGE, "运行结果示例")
    s.md(run_output=fmt.run_output("02_pitfalls.py"))
    return s


# -- the exercises ---------------------------------------------------------------------------------------
def strict_exercise() -> Section:
    s = Section(PAGE, "少挡一格还是多挡一格")
    a = ex.strict_causal()
    s.md(
        x1_line="`scores.masked_fill(torch.tril(torch.ones(n, n), "
        f'diagonal={ex.LINE_DIAGONAL}) == 0, float("-inf"))`'
    )
    s.table(
        "x1_table",
        enumerate(a["visible"]),
        Col("查询", lambda row: f"查询 {row[0]}", "text"),
        Col("读得到的 Key", lambda row: listing(row[1]), "text"),
        Col("softmax 之后", lambda row: "—" if row[1] else "NaN", "text"),
    )
    s.text(x1_empty=fmt.names("查询", a["empty"]))
    return s


def float_exercise() -> Section:
    s = Section(PAGE, "0/1 的浮点表加到一行分数上")
    a = ex.float_row()
    bias = pf.tril(len(ex.FLOAT_SCORES))[ex.FLOAT_ROW]
    rows = list(zip(ex.FLOAT_SCORES, bias, a["weights"], a["right"]))
    s.text(x2_bias=fmt.vector(bias))
    s.table(
        "x2_table",
        range(len(rows)),
        Col("Key", key, "text"),
        Col("分数", lambda j: rows[j][0], "short"),
        Col("加上的数", lambda j: rows[j][1], "short"),
        Col("权重（0/1 表）", lambda j: rows[j][2]),
        Col("权重（0/−∞ 表）", lambda j: rows[j][3]),
    )
    s.value(x2_future=a["future"])
    return s


def right_exercise() -> Section:
    s = Section(PAGE, "右侧补齐时读的是哪一列")
    a = ex.read_columns()
    s.text(x3_masks="；".join(f"序列 {b}：{listing(m)}" for b, m in enumerate(ex.RIGHT_MASK)))
    s.table(
        "x3_table",
        range(len(ex.RIGHT_MASK)),
        Col("序列", lambda b: f"序列 {b}", "text"),
        Col("attention_mask", lambda b: listing(ex.RIGHT_MASK[b]), "text"),
        Col("最后一列是 PAD", lambda b: "是" if a["pad_at_last"][b] else "不是", "text"),
        Col(
            "左侧补齐后最后一列（真实 token，从 0 数）",
            lambda b: f"第 {a['last_real'][b]} 个",
            "text",
        ),
    )
    return s


def code_exercise() -> Section:
    s = Section(PAGE, "写一个函数按位置写 −100")
    s.md(x4_doctest=fmt.doctest_block(ex.loss_labels))
    s.text(x4_by_id=label_text(pf.labels_from(ex.CODE_IDS, ex.CODE_MASK, pf.PAD, "id")))
    return s


def exercises() -> list[Section]:
    return [strict_exercise(), float_exercise(), right_exercise(), code_exercise()]
