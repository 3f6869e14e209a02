"""The summary page (book/ch02/summary.md): three tables, each cell computed or read from observations."""

from __future__ import annotations

import importlib
import itertools
import math

from chapter import conventions, fmt
from chapter.fmt import Table, glue_all  # noqa: F401  (the page calls page.glue_all)

att = importlib.import_module("02_attention")
bp = importlib.import_module("02_backprop")
tn = importlib.import_module("02_tensors")
tl = importlib.import_module("02_tiles")

# -- the visibility rules ---------------------------------------------------------------------------
# The example every rule is counted on: six positions (queries and keys alike, no cache), a window of 3,
# a prefix of 2, one sink, two documents of three tokens, the first position a PAD.
N = 6
W = 3
PREFIX = 2
N_SINK = 1
DOCS = [0, 0, 0, 1, 1, 1]
VALID = [False, True, True, True, True, True]
PAD = tn.padding([[int(x) for x in VALID]])
BLOCK = 2  # the rules table's blocks when the example is computed in tiles (the tiles page)

# rule: (what it says, its predicate in the page's variables, the teaching code's rule, where taught).
# In the predicates q is the query's 绝对位置 (past + i) and k the key's.
RULES = {
    "因果": ("只读自己和更早的位置", "k <= q", tn.causal, "ch02-mask"),
    "PAD": ("只读有内容的 Key", "valid[k]", PAD, "ch02-mask"),
    "因果 + PAD": (
        "两条同时生效，取“与”",
        "valid[k] and k <= q",
        tn.and_rules(tn.causal, PAD),
        "ch02-mask",
    ),
    "滑动窗口": (
        f"只读最近的 w 个（这里 w = {W}）",
        "q - w < k <= q",
        tn.sliding_window(W),
        "ch02-tensors",
    ),
    "前缀语言模型": (
        f"前 n 个对所有人可见（这里 n = {PREFIX}）",
        "k < n or k <= q",
        tn.prefix_lm(PREFIX),
        "ch02-tensors",
    ),
    "汇点加窗口": (
        f"因果，且是前 {N_SINK} 个之一或在窗口里",
        "k <= q and (k < n_sink or k > q - w)",
        tn.sinks(N_SINK, W),
        "ch02-tensors",
    ),
    "同一文档": ("打包时只读同一篇文档", "doc[k] == doc[q]", tn.document([DOCS]), "ch02-tensors"),
}
# How a table names the page a label points to (short: a table cell is narrow).
PAGE_NAMES = {
    "ch02-mask": "mask 一页",
    "ch02-mask-cache": "mask 一页",
    "ch02-mask-empty-rows": "mask 一页",
    "ch02-tensors": "张量一页",
    "ch02-backprop": "反向传播一页",
    "ch02-tiles": "分块一页",
    "ch02-tiles-count": "分块一页",
}


def link(label: str) -> str:
    return f"{{ref}}`{PAGE_NAMES[label]} <{label}>`"


def rule_table(name: str) -> list[list[bool]]:
    """The example's visibility table under the teaching code's rule ``name``."""
    return tn.visibility_batch(RULES[name][2], 1, 1, N, N)[0, 0].tolist()


def predicate_agrees(name: str) -> bool:
    """Whether the printed predicate and the teaching code's rule give the same table on the example."""
    table = rule_table(name)
    text = RULES[name][1]
    env = {"w": W, "n": PREFIX, "n_sink": N_SINK, "valid": VALID, "doc": DOCS, "__builtins__": {}}
    return all(
        bool(eval(text, env | {"q": q, "k": k})) == table[q][k]  # noqa: S307 (RULES' own strings)
        for q, k in itertools.product(range(N), repeat=2)
    )


def rules_table() -> Table:
    rows = []
    for name, (says, text, _, label) in RULES.items():
        if not predicate_agrees(name):
            raise AssertionError(f"{name}：印出的谓词 {text} 与教学代码的规则不一致")
        counts = " ".join(fmt.count(sum(row)) for row in rule_table(name))
        kinds = [x for row in tl.block_kinds(rule_table(name), BLOCK, BLOCK) for x in row]
        skipped = f"{fmt.count(kinds.count('empty'))} / {fmt.count(len(kinds))}"
        rows.append([name, says, f"`{text}`", counts, skipped, link(label)])
    return Table(
        [
            "规则",
            "意思",
            "查询 q 可读 Key k 的条件",
            "例子里每行可见几个 Key",
            f"每块 {BLOCK} × {BLOCK} 时跳过的块（{link('ch02-tiles-count')}）",
            "在哪一页讲",
        ],
        rows,
    )


# -- the libraries' conventions -----------------------------------------------------------------------
# The padding mask each interface takes, as its documentation describes it (the book cites each page).
PADDING = {
    "sdpa": "并进 `attn_mask`，可广播成 (B, H, n_query, n_key) {cite:p}`pytorch_sdpa`",
    "mha": "`key_padding_mask`，(B, n_key) {cite:p}`pytorch_mha`",
    "hf": "`attention_mask`，(B, 序列长度)，1 = 内容 {cite:p}`hf_attention_mask`",
    "jax": "并进 `mask`，可广播成 (B, H, n_query, n_key) {cite:p}`jax_dot_product_attention`",
    "keras": "`attention_mask`，(B, n_query, n_key) {cite:p}`keras_mha`",
}
# Short words for a narrow cell; the mask page's tables say the same at length (chapter.conventions).
FLOAT_SHORT = {"added": "加到分数上", "nonzero_allowed": "转成布尔（非 0 = 允许）", "error": "报错"}
ALIGN_SHORT = {"top-left": "左上对齐", "bottom-right": "右下对齐"}
INTERFACES = ["PyTorch SDPA", "PyTorch MHA", "Hugging Face", "JAX", "Keras"]


def conventions_table(seen: dict | None = None, device: str = "cpu") -> Table:
    """One row per convention, one column per interface; every observed cell from ``seen``."""
    lib = (conventions.observed() if seen is None else seen)[device]
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
    keras_empty = keras["fully_masked"]["float32"]
    rows = [
        [
            "布尔 True 表示",
            true[sdpa["bool_true"]],
            mha_true,
            "1 = 内容（整数，不是布尔）",
            true[jdpa["mask_true"]],
            true[kmha["attention_mask_true"]],
        ],
        [
            "浮点 mask",
            *(FLOAT_SHORT[x] for x in (sdpa["float_mask"], mha["float_mask"])),
            "—",
            FLOAT_SHORT[jdpa["bias"]],
            FLOAT_SHORT[kmha["float_mask"]],
        ],
        [
            "因果标志（查询比 Key 少时）",
            f"`is_causal`：{ALIGN_SHORT[sdpa['is_causal']]}",
            f"`is_causal` 只是提示（{link('ch02-mask')}）",
            "—",
            f"`is_causal`：{ALIGN_SHORT[jdpa['is_causal']]}",
            f"`use_causal_mask`：{ALIGN_SHORT[kmha['use_causal_mask']]}",
        ],
        ["PAD 怎样给（形状据文档）", *PADDING.values()],
        [
            "全屏蔽的行（float32）",
            empty[torch["sdpa_fully_masked"]["default"]["float32"]["bool"]],
            f"返回权重：{empty[mha_empty['weights']]}；"
            f"`need_weights=False`：{empty[mha_empty['no_weights']]}",
            "—",
            empty[jax["fully_masked"]["xla"]["float32"]],
            f"融合路径：{empty[keras_empty['fused']]}；返回分数：{empty[keras_empty['with_scores']]}",
        ],
        [
            "观察在哪里做的",
            where(torch, "PyTorch"),
            where(torch, "PyTorch"),
            "据文档 {cite:p}`hf_attention_mask`",
            where(jax, "JAX") + f"，实现 `{jdpa['implementation']}`",
            where(keras, "Keras") + f"（后端 {keras['backend']} {keras['backend_version']}）",
        ],
    ]
    return Table(["", *INTERFACES], rows)


# -- the checks and the mistakes they catch ------------------------------------------------------------
# The example: four positions of two-dimensional vectors (queries = keys), a one-column V whose rows are
# far apart, so that any change in who is read shows in the outputs.
Q = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0]]
V = [[10.0], [20.0], [30.0], [40.0]]
POISON = 1000.0  # what a probe writes into a V row that must not be read
PAST = 2  # the cache of the cache check
PADDED = [False, True, True, True]  # key 0 a PAD, for the PAD probe and the row check
# Each way of writing as the chapter warns of it, by what it changes in the right one.
MISTAKES = {
    "正确的写法": {},
    "忘了因果规则": {"causal": False},
    "有缓存时把行号当位置": {"row_index": True},
    "把 PAD 当内容读": {"pad": False},
    "全屏蔽的行照常做 softmax": {"guarded": False},
}


def attend(mistake: str, q, v, past: int = 0, valid=None):
    """The example's attention (K = Q, fully masked rows 0) written as ``mistake`` says: weights, outputs."""
    how = {"causal": True, "row_index": False, "pad": True, "guarded": True} | MISTAKES[mistake]
    causal = how["causal"] and not how["row_index"]
    n = len(q)
    valid = valid if how["pad"] else None
    visible = att.visibility(n, len(Q), causal=causal, past=past, key_valid=valid)
    if how["row_index"]:  # row i reads keys 0 … i, whatever the cache
        rows = att.row_index_visibility(n, len(Q))
        visible = [[a and b for a, b in zip(*pair)] for pair in zip(visible, rows)]
    if not how["guarded"]:
        return att.unguarded_attention(q, Q, v, visible)
    return att.masked_attention(q, Q, v, visible, empty_row="zero")


CHECKS = {
    "泄漏探针（改后面的 V）": "ch02-mask",
    "PAD 探针（改 PAD 的 V）": "ch02-mask",
    "缓存对整段重算": "ch02-mask-cache",
    "权重有限、行和为 1": "ch02-mask-empty-rows",
}


def passes(mistake: str) -> list[bool]:
    """Which of the four :data:`CHECKS` the way of writing ``mistake`` passes, in order."""
    out = attend(mistake, Q, V)[1]
    weights, padded = attend(mistake, Q, V, 0, PADDED)
    # no output moves after the V of a later position changes (no cache, no PAD)
    leak = all(
        attend(mistake, Q, [row if j <= i else [POISON] for j, row in enumerate(V)])[1][: i + 1]
        == out[: i + 1]
        for i in range(len(Q) - 1)
    )
    pad = (
        attend(mistake, Q, [[POISON], *V[1:]], 0, PADDED)[1][1:] == padded[1:]
    )  # the content rows stay put
    # the new rows computed with a cache are the same rows of a full recomputation
    cache = all(
        abs(x - y) <= 1e-12
        for a, b in zip(attend(mistake, Q[PAST:], V, PAST)[1], out[PAST:])
        for x, y in zip(a, b)
    )
    # every weight is finite and every content row's weights add up to 1
    rows = all(map(math.isfinite, sum(weights, []))) and all(
        abs(sum(r) - 1.0) <= 1e-12 for r in weights[1:]
    )
    return [leak, pad, cache, rows]


# The backward pass's mistake and the check that catches it (the backprop page's gradient check).
GRAD_QK = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
GRAD_X = (GRAD_QK, GRAD_QK, [[10.0], [20.0], [30.0]], [[0.3], [-1.2], [0.7]])


# The tiled versions (the tiles page): the right one and its four mistakes, in blocks of BLOCK.
TILE_MISTAKES = {
    "分块：旧的 l、O 没有重新缩放": "no_rescale",
    "分块：跳过部分可见的块": "skip_partial",
    "分块：块内按行号判断因果": "row_index",
    "分块：m = −∞ 时没有保护": "no_guard",
}


def tiled(mistake: str | None, q, v, past: int = 0, valid=None):
    """The example's attention (K = Q) in tiles, right (``None``) or with a mistake: its outputs."""
    visible = att.visibility(len(q), len(Q), past=past, key_valid=valid)
    blocks = {"block_q": BLOCK, "block_k": BLOCK}
    if mistake is None:
        return tl.tiled_attention(q, Q, v, visible, empty_row="zero", **blocks)[0]
    return tl.mistaken_tiled_attention(q, Q, v, visible, mistake, **blocks)[0]


def tile_passes(mistake: str | None) -> dict:
    """The output checks through the tiled code, and the tiled against the one-pass attention."""
    out = tiled(mistake, Q, V)
    padded = tiled(mistake, Q, V, 0, PADDED)
    leak = all(
        tiled(mistake, Q, [row if j <= i else [POISON] for j, row in enumerate(V)])[: i + 1]
        == out[: i + 1]
        for i in range(len(Q) - 1)
    )
    pad = tiled(mistake, Q, [[POISON], *V[1:]], 0, PADDED)[1:] == padded[1:]
    cache = all(
        abs(x - y) <= 1e-12
        for a, b in zip(tiled(mistake, Q[PAST:], V, PAST), out[PAST:])
        for x, y in zip(a, b)
    )
    one_pass = [  # no cache, a cache, a PAD: the tiled result against the one-pass one
        (tiled(mistake, q, V, past, valid), attend("正确的写法", q, V, past, valid)[1])
        for q, past, valid in ((Q, 0, None), (Q[PAST:], PAST, None), (Q, 0, PADDED))
    ]
    same = all(
        not math.isnan(x) and abs(x - y) <= 1e-12
        for got, right in one_pass
        for a, b in zip(got, right)
        for x, y in zip(a, b)
    )
    return {"leak": leak, "pad": pad, "cache": cache, "tiled": same}


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
        "gradient": {"正确的写法": not right, "反向传播漏掉修正项": not wrong},
        "tiles": tiles,
    }


def checks_table() -> Table:
    facts = checks_facts()
    caught = {True: "认出", False: "—"}
    tiles = facts["tiles"]
    header = [
        "写法",
        *(f"{name}（{link(label)}）" for name, label in CHECKS.items()),
        f"梯度检查（{link('ch02-backprop')}）",
        f"分块对照一次算完（{link('ch02-tiles')}）",
    ]
    rows = [
        [name, *(caught[c] for c in row.values()), "只查反向", "只查分块"]
        for name, row in facts["forward"].items()
    ]
    rows[0][-2] = caught[facts["gradient"]["正确的写法"]]
    rows[0][-1] = caught[tiles["正确的写法"]["tiled"]]
    wrong = "反向传播漏掉修正项"
    rows.append(
        [wrong, *(["只查前向"] * len(CHECKS)), caught[facts["gradient"][wrong]], "只查分块"]
    )
    leak_none = not any(row["leak"] for row in tiles.values())
    tiled_all = all(row["tiled"] for name, row in tiles.items() if name != "正确的写法")
    if not (leak_none and tiled_all and not tiles["正确的写法"]["tiled"]):  # the page's sentence
        raise ValueError(f"分块的四种错误不再是泄漏探针全认不出、对照一次算完全认出：{tiles}")
    for name in TILE_MISTAKES:
        t = tiles[name]
        rows.append(
            [name, caught[t["leak"]], caught[t["pad"]], caught[t["cache"]], "没有权重", "只查反向"]
            + [caught[t["tiled"]]]
        )
    return Table(header, rows)


def summary() -> dict:
    return {
        "tbl_rules": rules_table(),
        "tbl_conventions_all": conventions_table(),
        "tbl_checks": checks_table(),
        "rules_n": N,
        "rules_w": W,
        "rules_prefix": PREFIX,
        "rules_sinks": N_SINK,
        "rules_block": BLOCK,
    }
