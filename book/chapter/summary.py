"""The chapter's summary page (book/ch02/summary.md): three tables a learner keeps, every cell computed.

- **The visibility rules** (``rules_table``): each rule's predicate, written as the Python expression the
  page prints, is checked against the teaching code's own rule on a grid of inputs before it is shown
  (``predicate_agrees``), and each row gets the visible-key counts of one small example computed by that
  rule.
- **The libraries' conventions** (``conventions_table``): what True means, float masks, where a causal flag
  puts the diagonal when there are fewer queries than keys, the padding mask's shape and polarity, what a
  fully masked row gives, and where each was observed. Every observed cell is read from
  ``code/02_library_conventions.json`` through ``chapter.conventions``; shapes come from the cited
  documentation.
- **The checks and the mistakes they catch** (``checks_table``): four deliberate mistakes of the
  forward pass and one of the backward pass, run through four checks and the gradient check; a cell says
  whether that check caught that mistake on the page's example.
"""

from __future__ import annotations

import importlib
import itertools

from chapter import conventions, fmt
from chapter.fmt import Table, glue_all  # noqa: F401  (the page calls page.glue_all)

att = importlib.import_module("02_attention")
bp = importlib.import_module("02_backprop")
tn = importlib.import_module("02_tensors")

# -- the visibility rules ---------------------------------------------------------------------------
# The example every rule is counted on: six positions (queries and keys alike, no cache), a window of 3,
# a prefix of 2, one sink, two documents of three tokens, the first position a PAD.
N = 6
W, PREFIX, N_SINK = 3, 2, 1
DOCS = [0, 0, 0, 1, 1, 1]
VALID = [False, True, True, True, True, True]

# rule: (what it says, its predicate in the page's variables, the teaching code's rule, where taught).
# In the predicates q is the query's 绝对位置 (past + i) and k the key's.
RULES = {
    "因果": ("只读自己和更早的位置", "k <= q", lambda: tn.causal, "ch02-mask"),
    "PAD": ("只读有内容的 Key", "valid[k]", lambda: tn.padding([[int(x) for x in VALID]]), "ch02-mask"),
    "因果 + PAD": ("两条同时生效，取“与”", "valid[k] and k <= q",
                 lambda: tn.and_rules(tn.causal, tn.padding([[int(x) for x in VALID]])), "ch02-mask"),
    "滑动窗口": (f"只读最近的 w 个（这里 w = {W}）", "q - w < k <= q", lambda: tn.sliding_window(W), "ch02-tensors"),
    "前缀语言模型": (f"前 n 个对所有人可见（这里 n = {PREFIX}）", "k < n or k <= q", lambda: tn.prefix_lm(PREFIX),
                "ch02-tensors"),
    "汇点加窗口": (f"因果，且是前 {N_SINK} 个之一或在窗口里", "k <= q and (k < n_sink or k > q - w)",
              lambda: tn.sinks(N_SINK, W), "ch02-tensors"),
    "同一文档": ("打包时只读同一篇文档", "doc[k] == doc[q]", lambda: tn.document([DOCS]), "ch02-tensors"),
}


# How a table names the page a label points to (short: a table cell is narrow).
PAGE_NAMES = {"ch02-mask": "mask 一页", "ch02-mask-cache": "mask 一页", "ch02-mask-empty-rows": "mask 一页",
              "ch02-tensors": "张量一页", "ch02-backprop": "反向传播一页"}


def link(label: str) -> str:
    """A cross-reference to a page of the chapter, named short.

    >>> link("ch02-mask")
    '{ref}`mask 一页 <ch02-mask>`'
    """
    return f"{{ref}}`{PAGE_NAMES[label]} <{label}>`"


def predicate(text: str, q: int, k: int) -> bool:
    """Evaluate a rule's printed predicate for one query and one key of the example.

    >>> predicate("k <= q", 2, 3), predicate("q - w < k <= q", 4, 2)
    (False, True)
    """
    env = {"q": q, "k": k, "w": W, "n": PREFIX, "n_sink": N_SINK, "valid": VALID, "doc": DOCS}
    return bool(eval(text, {"__builtins__": {}}, env))  # noqa: S307 (the module's own constant strings)


def rule_table(name: str) -> list[list[bool]]:
    """The example's visibility table under the teaching code's rule ``name``."""
    rule = RULES[name][2]()
    return tn.visibility_batch(rule, 1, 1, N, N)[0, 0].tolist()


def predicate_agrees(name: str) -> bool:
    """Whether the printed predicate and the teaching code's rule give the same table on the example."""
    text = RULES[name][1]
    table = rule_table(name)
    return all(predicate(text, q, k) == table[q][k] for q, k in itertools.product(range(N), repeat=2))


def rules_table() -> Table:
    rows = []
    for name, (says, text, _, label) in RULES.items():
        if not predicate_agrees(name):
            raise AssertionError(f"{name}：印出的谓词 {text} 与教学代码的规则不一致")
        counts = " ".join(fmt.count(sum(row)) for row in rule_table(name))
        rows.append([name, says, f"`{text}`", counts, link(label)])
    return Table(["规则", "意思", "查询 q 可读 Key k 的条件", "例子里每行可见几个 Key", "在哪一页讲"], rows)


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


def _version_words(lib: dict, name: str) -> str:
    return f"{name} {lib['version']}，{conventions.device_words(lib)}，{lib['dtype']}"


def conventions_table(seen: dict | None = None, device: str = "cpu") -> Table:
    """One row per convention, one column per interface; every observed cell from ``seen``."""
    seen = conventions.observed() if seen is None else seen
    lib = seen[device]
    torch, jax, keras = lib["torch"], lib["jax"], lib["keras"]
    sdpa, mha = torch["sdpa"], torch["mha"]
    jdpa, kmha = jax["dot_product_attention"], keras["MultiHeadAttention"]
    true, empty = conventions.TRUE_MEANS, conventions.FULLY_MASKED
    docs = "据文档 {cite:p}`hf_attention_mask`"
    rows = [
        ["布尔 True 表示", true[sdpa["bool_true"]],
         f"`attn_mask` 与 `key_padding_mask`：{true[mha['attn_mask_bool_true']]}"
         + ("" if mha["attn_mask_bool_true"] == mha["key_padding_mask_true"]
            else f"（`key_padding_mask`：{true[mha['key_padding_mask_true']]}）"),
         "1 = 内容（整数，不是布尔）", true[jdpa["mask_true"]], true[kmha["attention_mask_true"]]],
        ["浮点 mask", FLOAT_SHORT[sdpa["float_mask"]], FLOAT_SHORT[mha["float_mask"]], "—",
         FLOAT_SHORT[jdpa["bias"]], FLOAT_SHORT[kmha["float_mask"]]],
        ["因果标志（查询比 Key 少时）", f"`is_causal`：{ALIGN_SHORT[sdpa['is_causal']]}",
         f"`is_causal` 只是提示（{link('ch02-mask')}）", "—", f"`is_causal`：{ALIGN_SHORT[jdpa['is_causal']]}",
         f"`use_causal_mask`：{ALIGN_SHORT[kmha['use_causal_mask']]}"],
        ["PAD 怎样给（形状据文档）", PADDING["sdpa"], PADDING["mha"], PADDING["hf"], PADDING["jax"], PADDING["keras"]],
        ["全屏蔽的行（float32）", empty[torch["sdpa_fully_masked"]["default"]["float32"]["bool"]],
         f"返回权重：{empty[torch['mha_fully_masked']['float32']['weights']]}；"
         f"`need_weights=False`：{empty[torch['mha_fully_masked']['float32']['no_weights']]}", "—",
         empty[jax["fully_masked"]["xla"]["float32"]],
         f"融合路径：{empty[keras['fully_masked']['float32']['fused']]}；"
         f"返回分数：{empty[keras['fully_masked']['float32']['with_scores']]}"],
        ["观察在哪里做的", _version_words(torch, "PyTorch"), _version_words(torch, "PyTorch"), docs,
         _version_words(jax, "JAX") + f"，实现 `{jdpa['implementation']}`",
         _version_words(keras, "Keras") + f"（后端 {keras['backend']} {keras['backend_version']}）"],
    ]
    return Table(["", *INTERFACES], rows)


# -- the checks and the mistakes they catch ------------------------------------------------------------
# The example: four positions of two-dimensional vectors (queries = keys), a one-column V whose rows are
# far apart, so that any change in who is read shows in the outputs.
Q = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0]]
V = [[10.0], [20.0], [30.0], [40.0]]
POISON = 1000.0  # what a probe writes into a V row that must not be read
PAST = 2  # the cache of the cache check


def _right(q, k, v, past, valid):
    return att.attention(q, k, v, causal=True, past=past, key_valid=valid, empty_row="zero")


def _no_causal(q, k, v, past, valid):
    return att.attention(q, k, v, causal=False, past=past, key_valid=valid, empty_row="zero")


def _row_index(q, k, v, past, valid):
    valid = [True] * len(k) if valid is None else valid
    table = [[ok and seen for ok, seen in zip(valid, row)] for row in att.row_index_visibility(len(q), len(k))]
    return att.masked_attention(q, k, v, table, empty_row="zero")


def _pad_as_content(q, k, v, past, valid):
    return att.attention(q, k, v, causal=True, past=past, empty_row="zero")


def _plain_softmax(q, k, v, past, valid):
    return att.unguarded_attention(q, k, v, att.visibility(len(q), len(k), past=past, key_valid=valid))


MISTAKES = {
    "正确的写法": _right,
    "忘了因果规则": _no_causal,
    "有缓存时把行号当位置": _row_index,
    "把 PAD 当内容读": _pad_as_content,
    "全屏蔽的行照常做 softmax": _plain_softmax,
}


def _same(a, b) -> bool:
    return all(x == y for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def leak_probe(f) -> bool:
    """Passes when no output moves after the V of a later position changes (no cache, no PAD)."""
    _, out = f(Q, Q, V, 0, None)
    for i in range(len(Q) - 1):
        poisoned = [row if j <= i else [POISON] for j, row in enumerate(V)]
        if not _same(f(Q, Q, poisoned, 0, None)[1][: i + 1], out[: i + 1]):
            return False
    return True


def pad_probe(f) -> bool:
    """Passes when the content rows' outputs stay put after the PAD key's V changes (key 0 is a PAD)."""
    valid = [False, True, True, True]
    poisoned = [[POISON], *V[1:]]
    return _same(f(Q, Q, V, 0, valid)[1][1:], f(Q, Q, poisoned, 0, valid)[1][1:])


def cache_check(f) -> bool:
    """Passes when the new rows computed with a cache equal the same rows of a full recomputation."""
    _, with_cache = f(Q[PAST:], Q, V, PAST, None)
    _, full = f(Q, Q, V, 0, None)
    return all(abs(x - y) <= 1e-12 for a, b in zip(with_cache, full[PAST:]) for x, y in zip(a, b))


def rows_check(f) -> bool:
    """Passes when every weight is finite and every content row's weights add up to 1 (key 0 is a PAD)."""
    valid = [False, True, True, True]
    weights, _ = f(Q, Q, V, 0, valid)
    finite = all(w == w and abs(w) != float("inf") for row in weights for w in row)
    return finite and all(abs(sum(row) - 1.0) <= 1e-12 for row in weights[1:])


CHECKS = {
    "泄漏探针（改后面的 V）": (leak_probe, "ch02-mask"),
    "PAD 探针（改 PAD 的 V）": (pad_probe, "ch02-mask"),
    "缓存对整段重算": (cache_check, "ch02-mask-cache"),
    "权重有限、行和为 1": (rows_check, "ch02-mask-empty-rows"),
}
# The backward pass's mistake and the check that catches it (the backprop page's gradient check).
GRAD_X = ([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [[10.0], [20.0], [30.0]],
          [[0.3], [-1.2], [0.7]])


def checks_facts() -> dict:
    """Which check caught which mistake: ``{mistake: {check: caught}}``; the right version is never caught."""
    facts = {name: {check: not run(f) for check, (run, _) in CHECKS.items()} for name, f in MISTAKES.items()}
    right = bp.gradient_check(*GRAD_X)["passed"]
    wrong = bp.gradient_check(*GRAD_X, backward=bp.wrong_backward_no_rowsum)["passed"]
    return {"forward": facts, "gradient": {"正确的写法": not right, "反向传播漏掉修正项": not wrong}}


def checks_table() -> Table:
    facts = checks_facts()
    header = ["写法", *(f"{name}（{link(label)}）" for name, (_, label) in CHECKS.items()),
              f"梯度检查（{link('ch02-backprop')}）"]
    caught = {True: "认出", False: "—"}
    rows = [[name, *(caught[c] for c in row.values()), "只查反向"] for name, row in facts["forward"].items()]
    rows[0][-1] = caught[facts["gradient"]["正确的写法"]]
    rows.append(["反向传播漏掉修正项", *(["只查前向"] * len(CHECKS)), caught[facts["gradient"]["反向传播漏掉修正项"]]])
    return Table(header, rows)


def summary() -> dict:
    """Everything the summary page glues."""
    return {"tbl_rules": rules_table(), "tbl_conventions_all": conventions_table(), "tbl_checks": checks_table(),
            "rules_n": N, "rules_w": W, "rules_prefix": PREFIX, "rules_sinks": N_SINK}
