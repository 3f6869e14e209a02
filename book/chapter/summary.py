"""The summary page (book/ch02/summary.md): three tables, each cell computed or read from observations.

One page.Section per section of the page (:func:`rules`, :func:`libraries`, :func:`checks`); the page types
the examples' inputs ({input} roles naming the constants below, the tensors page's RULES_EXAMPLE and the mask
page's BIG), and each section checks the facts of the page's fixed sentences with ``Section.holds``.
"""

from __future__ import annotations

import importlib
import math
import operator

import numpy as np

from chapter import conventions, fmt, mask
from chapter.mask import positions_text
from chapter.page import Col, Section, keys

att = importlib.import_module("02_attention")
bp = importlib.import_module("02_backprop")
pf = importlib.import_module("02_pitfalls")
tn = importlib.import_module("02_tensors")
tl = importlib.import_module("02_tiles")

PAGE = "小结一页"  # how Section.holds names this page when a fixed sentence no longer holds

# -- the visibility rules ---------------------------------------------------------------------------
# The example every rule is counted on is the tensors page's, read from its one home (02_tensors.RULES_EXAMPLE:
# queries and keys alike, no cache), with the first position a PAD for the rules that read PAD.
VALID = [False] + [True] * (tn.RULES_EXAMPLE["n"] - 1)
PAD = tn.padding([[int(x) for x in VALID]])
BLOCK = 2  # the rules table's blocks when the example is computed in tiles (the tiles page)

# rule: (what it says, its predicate in the page's variables, the teaching code's rule, where taught).
# The predicates are in array form: q the queries' 绝对位置 (past + i) as a column of integers, k the
# keys' as a row, valid and doc numpy arrays; & and | with every comparison in parentheses.
RULES = {
    "因果": ("只读自己和更早的位置", "k <= q", tn.causal, "ch02-mask"),
    "PAD": ("只读有内容的 Key", "valid[k]", PAD, "ch02-mask"),
    "因果 + PAD": (
        "两条同时生效，取“与”",
        "valid[k] & (k <= q)",
        tn.and_rules(tn.causal, PAD),
        "ch02-mask",
    ),
    "滑动窗口": (
        f"只读最近的 w 个（这里 w = {tn.RULES_EXAMPLE['w']}）",
        "(q - w < k) & (k <= q)",
        tn.sliding_window(tn.RULES_EXAMPLE["w"]),
        "ch02-tensors",
    ),
    "前缀语言模型": (
        f"前 n 个对所有人可见（这里 n = {tn.RULES_EXAMPLE['n_prefix']}）",
        "(k < n) | (k <= q)",
        tn.prefix_lm(tn.RULES_EXAMPLE["n_prefix"]),
        "ch02-tensors",
    ),
    "汇点加窗口": (
        f"因果，且是前 {tn.RULES_EXAMPLE['n_sink']} 个之一或在窗口里",
        "(k <= q) & ((k < n_sink) | (k > q - w))",
        tn.sinks(tn.RULES_EXAMPLE["n_sink"], tn.RULES_EXAMPLE["w"]),
        "ch02-tensors",
    ),
    "同一文档（且因果）": (
        "打包时只读同一篇文档里不晚于自己的位置",
        "(doc[k] == doc[q]) & (k <= q)",
        tn.and_rules(tn.causal, tn.document([tn.RULES_EXAMPLE["doc_ids"]])),
        "ch02-tensors",
    ),
}
# The PAD rule's condition with its parentheses dropped: & is taken before <=, so it reads
# (valid[k] & k) <= q, a different table, and no error says so.
UNBRACKETED = "valid[k] & k <= q"
# How a table names the page a label points to (short: a table cell is narrow).
PAGE_NAMES = {
    "ch02-mask": "mask 一页",
    "ch02-mask-cache": "mask 一页",
    "ch02-mask-empty-rows": "mask 一页",
    "ch02-mask-checks": "mask 一页",
    "ch02-mask-conventions": "mask 一页的深入块",
    "ch02-tensors": "张量一页",
    "ch02-backprop": "反向传播一页",
    "ch02-tiles": "分块一页",
    "ch02-tiles-count": "分块一页",
}


def link(label: str) -> str:
    return f"{{ref}}`{PAGE_NAMES[label]} <{label}>`"


def rule_table(name: str) -> list[list[bool]]:
    """The example's visibility table under the teaching code's rule ``name``."""
    n = tn.RULES_EXAMPLE["n"]
    return tn.visibility_batch(RULES[name][2], 1, 1, n, n)[0, 0].tolist()


def predicate_table(text: str) -> list[list[bool]]:
    """The example's table from a printed condition, evaluated as printed on numpy arrays."""
    n = tn.RULES_EXAMPLE["n"]
    env = {
        "q": np.arange(n)[:, None],
        "k": np.arange(n)[None, :],
        "w": tn.RULES_EXAMPLE["w"],
        "n": tn.RULES_EXAMPLE["n_prefix"],
        "n_sink": tn.RULES_EXAMPLE["n_sink"],
        "valid": np.array(VALID),
        "doc": np.array(tn.RULES_EXAMPLE["doc_ids"]),
        "__builtins__": {},
    }
    values = eval(text, env)  # noqa: S307 (RULES' own strings)
    return (np.broadcast_to(values, (n, n)) != 0).tolist()


def predicate_agrees(name: str) -> bool:
    """Whether the printed predicate and the teaching code's rule give the same table on the example."""
    return predicate_table(RULES[name][1]) == rule_table(name)


def counts(name: str) -> str:
    """How many keys each row of the example reads under rule ``name``."""
    return " ".join(fmt.count(sum(row)) for row in rule_table(name))


def skipped(name: str) -> str:
    """The blocks of BLOCK × BLOCK that rule ``name`` forbids whole, of all the example's blocks."""
    kinds = [x for row in tl.block_kinds(rule_table(name), BLOCK, BLOCK) for x in row]
    return f"{fmt.count(kinds.count('empty'))} / {fmt.count(len(kinds))}"


def text_table(s: Section, name: str, header: list[str], rows: list[list[str]]) -> None:
    """A table whose cells are written already: one column per header, the row's cell at its index."""
    s.table(name, rows, *(Col(h, operator.itemgetter(i), "text") for i, h in enumerate(header)))


def rules() -> Section:
    """The visibility rules on the tensors page's example: printed predicates, counts, skipped blocks."""
    s = Section(PAGE, "可见性规则")
    n = tn.RULES_EXAMPLE["n"]
    document_only = tn.visibility_batch(tn.document([tn.RULES_EXAMPLE["doc_ids"]]), 1, 1, n, n)
    s.holds(
        every_printed_predicate_is_the_rule=all(predicate_agrees(name) for name in RULES),
        document_alone_reads_later=any(document_only[0, 0, q, q + 1 :].any() for q in range(n)),
        unbracketed_pad_rule_differs=predicate_table(UNBRACKETED) != rule_table("因果 + PAD"),
        causal_pad_first_row_reads_nothing=sum(rule_table("因果 + PAD")[0]) == 0,
        two_documents_half_each=tn.RULES_EXAMPLE["doc_ids"] == [0] * (n // 2) + [1] * (n - n // 2),
    )
    s.table(
        "tbl_rules",
        RULES,
        Col("规则", str, "text"),
        Col("意思", lambda name: RULES[name][0], "text"),
        Col("查询 q 可读 Key k 的条件", lambda name: f"`{RULES[name][1]}`", "text"),
        Col("例子里每行可见几个 Key", counts, "text"),
        Col(f"每块 {BLOCK} × {BLOCK} 时跳过的块（{link('ch02-tiles-count')}）", skipped, "text"),
        Col("在哪一页讲", lambda name: link(RULES[name][3]), "text"),
    )
    s.text(rules_pad=positions_text([j for j, ok in enumerate(VALID) if not ok]))
    return s


# -- the libraries' conventions -----------------------------------------------------------------------
# The padding mask each interface takes, as its documentation describes it (the book cites each page).
PADDING = {
    "sdpa": "并进 `attn_mask`，可广播成 (B, H, n_query, n_key) {cite:p}`pytorch_sdpa`",
    "mha": "`key_padding_mask`，(B, n_key) {cite:p}`pytorch_mha`",
    "hf": "`attention_mask`，(B, 序列长度)，1 = 内容、0 = PAD {cite:p}`hf_attention_mask`",
    "jax": "并进布尔的 `mask`，可广播成 (B, H, n_query, n_key)；PAD 都在末尾时也可只给每个序列的长度"
    "（`query_seq_lengths` 等参数） {cite:p}`jax_dot_product_attention`",
    "keras": "`attention_mask`，(B, n_query, n_key) {cite:p}`keras_mha`",
}
# Short words for a narrow cell; the mask page's tables say the same at length (chapter.conventions).
FLOAT_SHORT = {"added": "加到分数上", "nonzero_allowed": "转成布尔（非 0 = 允许）", "error": "报错"}
ALIGN_SHORT = {"top-left": "左上对齐", "bottom-right": "右下对齐"}
INTERFACES = ["PyTorch SDPA", "PyTorch MHA", "Hugging Face", "JAX", "Keras"]


def forms_cell(forms: dict) -> str:
    """A fully masked row under each mask form, forms that gave the same result named together."""
    results = list(dict.fromkeys(forms.values()))
    return "；".join(
        "、".join(form for form, r in forms.items() if r == result)
        + f"：{conventions.FULLY_MASKED[result]}"
        for result in results
    )


def fast_path_facts(seen: dict) -> dict[str, bool]:
    """The facts of the page's sentence on MultiheadAttention's fast path, from the CPU observations."""
    torch = seen["cpu"]["torch"]
    fast = torch["mha_fast_path"]
    return {
        "mha_fast_path_ran": all(
            fast["fully_masked"][d][f"{key}_fast_path"]
            for d in conventions.DTYPES
            for key in ("weights", "no_weights")
        )
        and fast["is_causal_ran_fast_path"],
        "slow_path_observed_without_fast_path": not any(
            "_native_multi_head_attention" in k
            for d in conventions.DTYPES
            for k in torch["mha_fully_masked"][d]["weights_kernels"]
        ),
    }


def conventions_rows(seen: dict) -> list[list[str]]:
    """One row per convention, one column per interface (:data:`INTERFACES`); every observed cell from
    the CPU observations of ``seen``."""
    lib = seen["cpu"]
    torch = lib["torch"]
    jax = lib["jax"]
    keras = lib["keras"]
    sdpa = torch["sdpa"]
    mha = torch["mha"]
    jdpa = jax["dot_product_attention"]
    kmha = keras["MultiHeadAttention"]
    true = conventions.TRUE_MEANS
    empty = conventions.FULLY_MASKED

    def where(x, n):
        return f"{n} {x['version']}，{conventions.device_words(x)}，{x['dtype']}"

    mha_true = f"`attn_mask` 与 `key_padding_mask`：{true[mha['attn_mask_bool_true']]}" + (
        ""
        if mha["attn_mask_bool_true"] == mha["key_padding_mask_true"]
        else f"（`key_padding_mask`：{true[mha['key_padding_mask_true']]}）"
    )
    mha_empty = torch["mha_fully_masked"]["float32"]
    fast = torch["mha_fast_path"]
    fast_empty = fast["fully_masked"]["float32"]
    keras_empty = keras["fully_masked"]["float32"]
    sdpa_empty = torch["sdpa_fully_masked"]["default"]["float32"]
    sdpa_forms = {  # the mask forms SDPA was given a fully masked row in, and what it gave
        "布尔的 `attn_mask`": sdpa_empty["bool"],
        "−∞ 的浮点 `attn_mask`": sdpa_empty["float"],
        "填 `finfo.min` 的浮点 `attn_mask`": torch["sdpa_fully_masked_finfo_min"]["float32"][
            "float"
        ],
    }
    jax_forms = {
        "布尔的 `mask`": jax["fully_masked"]["xla"]["float32"],
        "−∞ 的 `bias`": jax["fully_masked_bias"]["float32"],
    }
    rows = [
        [
            "布尔 True 表示",
            true[sdpa["bool_true"]],
            mha_true,
            "1 = 内容，0 = PAD（文档写的是 0 与 1）",
            true[jdpa["mask_true"]],
            true[kmha["attention_mask_true"]],
        ],
        [
            "浮点 mask",
            *(FLOAT_SHORT[x] for x in (sdpa["float_mask"], mha["float_mask"])),
            "—",
            f"`bias`：{FLOAT_SHORT[jdpa['bias']]}",
            FLOAT_SHORT[kmha["float_mask"]],
        ],
        [
            "因果标志（查询比 Key 少时）",
            f"`is_causal`：{ALIGN_SHORT[sdpa['is_causal']]}",
            f"`is_causal` 只是提示；`need_weights=False`、不给 `key_padding_mask` 时"
            f"{conventions.CAUSAL_HINT[mha['is_causal_with_mask_no_weights']]}"
            f"（{conventions.MHA_PATH}；{link('ch02-mask-conventions')}）；快路径上"
            f"{conventions.CAUSAL_HINT[fast['is_causal_with_mask_no_weights']]}",
            "—",
            f"`is_causal`：{ALIGN_SHORT[jdpa['is_causal']]}",
            f"`use_causal_mask`：{ALIGN_SHORT[kmha['use_causal_mask']]}",
        ],
        ["PAD 怎样给（形状据文档）", *PADDING.values()],
        [
            f"全屏蔽的行（{conventions.device_words(torch)} 上的 float32；"
            f"GPU 上另有 NaN 的报告，见{link('ch02-mask-empty-rows')}）",
            forms_cell(sdpa_forms),
            f"慢路径：返回权重 {empty[mha_empty['weights']]}，"
            f"`need_weights=False` {empty[mha_empty['no_weights']]}；"
            f"快路径：返回权重 {empty[fast_empty['weights']]}，"
            f"`need_weights=False` {empty[fast_empty['no_weights']]}",
            "—",
            forms_cell(jax_forms),
            "；".join(
                f"{words}：{empty[keras_empty[key]]}"
                for key, words in conventions.KERAS_PATHS.items()
            ),
        ],
        [
            "布尔、浮点与因果标志的观察在哪里做的",
            where(torch, "PyTorch"),
            where(torch, "PyTorch"),
            "据文档 {cite:p}`hf_attention_mask`",
            where(jax, "JAX") + f"，实现 `{jdpa['implementation']}`",
            where(keras, "Keras") + f"（后端 {keras['backend']} {keras['backend_version']}）",
        ],
    ]
    return rows


def libraries() -> Section:
    """The libraries' conventions, read from the record of observations."""
    s = Section(PAGE, "各库的约定")
    seen = conventions.observed()
    s.holds(**fast_path_facts(seen))
    text_table(s, "tbl_conventions_all", ["", *INTERFACES], conventions_rows(seen))
    return s


# -- the checks and the mistakes they catch ------------------------------------------------------------
# The checks are the mask page's own (chapter.mask): this page only runs them on more mistakes.
# The example: four positions of two-dimensional vectors (queries = keys), a one-column V whose rows are
# far apart, so that any change in who is read shows in the outputs.
Q = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0]]
V_COLUMN = [10.0, 20.0, 30.0, 40.0]  # V's one column, as the page types it
V = [[x] for x in V_COLUMN]
POISON = 1000.0  # what a probe writes into a V row that must not be read
PAST = 2  # the cache of the cache check
PADDED = [False, True, True, True]  # key 0 a PAD, for the PAD probe and the weights check
BIG = mask.BIG  # the large negative number of the mask page
# Each way of writing as the chapter warns of it, by what it changes in the right one.
MISTAKES = {
    "正确的写法": {},
    "忘了因果规则": {"causal": False},
    "有缓存时把行号当位置": {"row_index": True},
    "把 PAD 当内容读": {"pad": False},
    "全屏蔽的行照常做 softmax（−∞）": {"fill": -math.inf},
    "全屏蔽的行填大负数": {"fill": BIG},
    # two mistakes of library code (the pitfalls page)
    "因果表写成 0/1 的浮点表": {"float": True},
    "PAD 表挡在查询的行上": {"pad_axis": "query"},
}


def attend(mistake: str, q, k, v, past: int, valid: list[bool] | None):
    """The example's attention written as ``mistake`` says: ``(weights, outputs)``.

    Written right, a fully masked row gets weights and output 0 (``empty_row="zero"``); the two
    fill mistakes put ``fill`` in the forbidden cells and run an unguarded softmax instead.
    """
    how = {"causal": True, "row_index": False, "pad": True, "fill": None}
    how |= {"float": False, "pad_axis": "key"} | MISTAKES[mistake]
    causal = how["causal"] and not how["row_index"]
    n = len(q)
    valid = valid if how["pad"] else None
    key_valid = valid if how["pad_axis"] == "key" else None
    visible = att.visibility(n, len(k), causal=causal, past=past, key_valid=key_valid)
    if valid is not None and how["pad_axis"] == "query":  # the PAD table broadcast over the rows
        rows = pf.padding_visibility(valid, "query")[past:]
        visible = [[a and b for a, b in zip(*pair)] for pair in zip(visible, rows)]
    if how["float"]:  # the causal part a 0/1 float table, added to the scores; PAD still −∞
        pad = [False] * len(k) if valid is None else [not ok for ok in valid]
        causal_rows = att.visibility(n, len(k), causal=causal, past=past)
        bias = [[-math.inf if pad[j] else float(c) for j, c in enumerate(r)] for r in causal_rows]
        return pf.biased_attention(q, k, v, bias)
    if how["row_index"]:  # row i reads keys 0 … i, whatever the cache
        rows = att.row_index_visibility(n, len(k))
        visible = [[a and b for a, b in zip(*pair)] for pair in zip(visible, rows)]
    if how["fill"] is not None:
        return att.unguarded_attention(q, k, v, visible, fill=how["fill"])
    return att.masked_attention(q, k, v, visible, empty_row="zero")


def runner(mistake: str, past: int, valid: list[bool] | None):
    """``attend`` as the mask page's checks call an attention: ``run(q, k, v)`` gives the outputs."""

    def run(q, k, v):
        return attend(mistake, q, k, v, past, valid)[1]

    return run


# The mask page's checks (its section 如何判断是否做对), as this page's table heads them.
CHECKS = (
    "不泄漏（改后面的 V）",
    "不泄漏（改 PAD 的 V）",
    "与正确的整段重算一致",
    "权重有限、行和为 1",
)


def passes(mistake: str) -> list[bool]:
    """Which of the four :data:`CHECKS` the way of writing ``mistake`` passes, in order: each check is
    the mask page's own function, on this page's example."""
    n = len(Q)
    # 不泄漏 without PAD: each query's output, the V of the positions after it changed
    leak = mask.leak_probe(runner(mistake, 0, None), Q, Q, V, mask.after_query(n, n), POISON)
    # 不泄漏 with a PAD in front: every query, the PAD query included, the V of the PAD changed
    pad = mask.leak_probe(runner(mistake, 0, PADDED), Q, Q, V, mask.pad_keys(PADDED, n), POISON)
    # the new rows computed with a cache against a correct full recomputation
    cache = mask.recompute_check(runner(mistake, PAST, None), Q, Q, V, PAST)
    weights, _ = attend(mistake, Q, Q, V, 0, PADDED)
    bad_rows = mask.weights_check(weights, att.visibility(n, n, key_valid=PADDED))
    return [not leak["leaking"], not pad["leaking"], not cache["differ"], not bad_rows]


# The backward pass's mistake and the check that catches it (the backprop page's gradient check).
GRAD_QK = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
GRAD_V_COLUMN = [10.0, 20.0, 30.0]  # V's and dO's one column, as the page types them
GRAD_DO_COLUMN = [0.3, -1.2, 0.7]
GRAD_V = [[x] for x in GRAD_V_COLUMN]
GRAD_DO = [[x] for x in GRAD_DO_COLUMN]
GRAD_X = (GRAD_QK, GRAD_QK, GRAD_V, GRAD_DO)
BACKWARD_MISTAKE = "反向传播漏掉修正项"


# The tiled versions (the tiles page): the right one and its four mistakes, in blocks of BLOCK.
TILE_MISTAKES = {
    "分块：旧的 l、O 没有重新缩放": "no_rescale",
    "分块：跳过部分可见的块": "skip_partial",
    "分块：块内按行号判断因果": "row_index",
    "分块：m = −∞ 时没有保护": "no_guard",
}


def tiled_runner(mistake: str | None, past: int, valid: list[bool] | None):
    """The example's attention in tiles, right (``None``) or with a mistake, as the mask page's checks
    call an attention: ``run(q, k, v)`` gives the outputs."""

    def run(q, k, v):
        visible = att.visibility(len(q), len(k), past=past, key_valid=valid)
        blocks = {"block_q": BLOCK, "block_k": BLOCK}
        if mistake is None:
            return tl.tiled_attention(q, k, v, visible, empty_row="zero", **blocks)[0]
        return tl.mistaken_tiled_attention(q, k, v, visible, mistake, **blocks)[0]

    return run


def tile_passes(mistake: str | None) -> dict:
    """The mask page's output checks run on the tiled code, and the tiled against the one-pass attention."""
    n = len(Q)
    leak = mask.leak_probe(tiled_runner(mistake, 0, None), Q, Q, V, mask.after_query(n, n), POISON)
    pad = mask.leak_probe(
        tiled_runner(mistake, 0, PADDED), Q, Q, V, mask.pad_keys(PADDED, n), POISON
    )
    cache = mask.recompute_check(tiled_runner(mistake, PAST, None), Q, Q, V, PAST)
    one_pass = [  # no cache, a cache, a PAD: the tiled result against the one-pass one
        (tiled_runner(mistake, past, valid)(q, Q, V), attend("正确的写法", q, Q, V, past, valid)[1])
        for q, past, valid in ((Q, 0, None), (Q[PAST:], PAST, None), (Q, 0, PADDED))
    ]
    same = all(
        not math.isnan(x) and abs(x - y) <= mask.TOLERANCE
        for got, right in one_pass
        for a, b in zip(got, right)
        for x, y in zip(a, b)
    )
    return {
        "leak": not leak["leaking"],
        "pad": not pad["leaking"],
        "cache": not cache["differ"],
        "tiled": same,
    }


def checks_facts() -> dict:
    """Which check caught which mistake: ``{mistake: {check: caught}}``; the right version is never caught."""
    facts = {name: {check: not ok for check, ok in zip(CHECKS, passes(name))} for name in MISTAKES}
    right = bp.gradient_check(*GRAD_X)["passed"]
    wrong = bp.gradient_check(*GRAD_X, backward=bp.wrong_backward_no_rowsum)["passed"]
    tiles = {
        name: {check: not ok for check, ok in tile_passes(mistake).items()}
        for name, mistake in {"正确的写法": None, **TILE_MISTAKES}.items()
    }
    return {
        "forward": facts,
        "gradient": {"正确的写法": not right, BACKWARD_MISTAKE: not wrong},
        "tiles": tiles,
    }


def caught_by(facts: dict, mistake: str) -> list[str]:
    """The forward checks that caught ``mistake``, in the table's order."""
    return [check for check, hit in facts["forward"][mistake].items() if hit]


def empty_rows() -> list[int]:
    """The queries of the checks example whose whole row is masked (the PAD query)."""
    visible = att.visibility(len(Q), len(Q), key_valid=PADDED)
    return [i for i, row in enumerate(visible) if not any(row)]


def sentence_facts(facts: dict) -> dict[str, bool]:
    """The facts of the page's sentences under the checks table, from which check caught which mistake."""
    leak, pad, cache, rows = CHECKS
    tiles = facts["tiles"]
    wrong_tilings = [name for name in tiles if name != "正确的写法"]
    unguarded = tiled_runner("no_guard", 0, PADDED)(Q, Q, V)
    nan_rows = [i for i, row in enumerate(unguarded) if any(math.isnan(x) for x in row)]
    return {
        "right_passes_every_check": not caught_by(facts, "正确的写法")
        and not facts["gradient"]["正确的写法"],
        "leak_probe_misses_row_index": leak not in caught_by(facts, "有缓存时把行号当位置"),
        "only_pad_probe_catches_pad_read_and_big_fill": caught_by(facts, "把 PAD 当内容读")
        == caught_by(facts, "全屏蔽的行填大负数")
        == [pad],
        "only_weights_check_catches_nan": caught_by(facts, "全屏蔽的行照常做 softmax（−∞）")
        == [rows],
        "recompute_catches_causal_and_row_index": cache in caught_by(facts, "忘了因果规则")
        and cache in caught_by(facts, "有缓存时把行号当位置"),
        "only_gradient_check_catches_backward": facts["gradient"][BACKWARD_MISTAKE],
        "each_check_catches_one_alone": all(
            any(caught_by(facts, mistake) == [check] for mistake in facts["forward"])
            for check in (pad, cache, rows)
        ),
        "tiled_mistakes_unseen_but_by_one_pass_comparison": not any(tiles["正确的写法"].values())
        and not any(tiles[name]["leak"] for name in wrong_tilings)
        and all(tiles[name]["tiled"] for name in wrong_tilings),
        "recompute_catches_three_tilings": [name for name in wrong_tilings if tiles[name]["cache"]]
        == [name for name in wrong_tilings if TILE_MISTAKES[name] != "no_guard"],
        "only_one_pass_comparison_catches_no_guard": [
            c for c, hit in tiles["分块：m = −∞ 时没有保护"].items() if hit
        ]
        == ["tiled"],
        "no_guard_nan_only_in_empty_rows": bool(empty_rows()) and nan_rows == empty_rows(),
    }


def checks() -> Section:
    """Which check catches which mistake: the mask page's checks, the gradient check and the tiled
    comparison run on every way of writing, and the facts of the sentences under the table."""
    s = Section(PAGE, "哪项检查认得出哪种错误")
    facts = checks_facts()
    s.holds(**sentence_facts(facts))
    caught = {True: "认出", False: "—"}
    tiles = facts["tiles"]
    header = [
        "写法",
        *CHECKS,
        f"梯度检查（{link('ch02-backprop')}）",
        f"分块对照一次算完（{link('ch02-tiles')}）",
    ]
    rows = [
        [name, *(caught[c] for c in row.values()), "只查反向", "只查分块"]
        for name, row in facts["forward"].items()
    ]
    rows[0][-2] = caught[facts["gradient"]["正确的写法"]]
    rows[0][-1] = caught[tiles["正确的写法"]["tiled"]]
    rows.append(
        [
            BACKWARD_MISTAKE,
            *(["只查前向"] * len(CHECKS)),
            caught[facts["gradient"][BACKWARD_MISTAKE]],
            "只查分块",
        ]
    )
    for name in TILE_MISTAKES:
        t = tiles[name]
        rows.append(
            [name, caught[t["leak"]], caught[t["pad"]], caught[t["cache"]], "没有权重", "只查反向"]
            + [caught[t["tiled"]]]
        )
    text_table(s, "tbl_checks", header, rows)
    s.value("count", chk_n=len(Q))
    s.text(
        chk_pad_keys=keys(j for j, ok in enumerate(PADDED) if not ok),
        chk_pad_rows=positions_text(empty_rows()),
    )
    return s
