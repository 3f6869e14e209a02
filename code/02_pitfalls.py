"""第 2 章教学代码：写进真实代码——常见的 mask 错误，照错的写法算一次，再改对。

每个错误都用前几页的函数重算：``02_attention`` 的 softmax、visibility、attention、
masked_attention 与 unguarded_attention，``02_rope`` 的 rotate_rows 与 padded_positions。
例子都是人工构造的小矩阵，小解码器的三张表由固定的种子取出，没有训练过。只用标准库；与
``02_attention.py``、``02_rope.py`` 放在同一目录运行。同样的错误交给 PyTorch 与 Transformers
的一侧在 ``02_pitfalls_torch.py``（它要 PyTorch）。
"""

from __future__ import annotations

import importlib
import math
import random

att = importlib.import_module("02_attention")  # softmax、visibility、attention 与输入检查
rope = importlib.import_module("02_rope")  # rotate_rows、padded_positions

IGNORE_INDEX = -100  # 交叉熵不计的标签（PyTorch 的 ignore_index 默认值）
FILL_WHERE = ("== 0", "!= 0")  # masked_fill(mask == 0, …) 与 masked_fill(mask.bool(), …)
PADDING_AXES = ("key", "query", "both")
LAYOUTS = ("repeat", "repeat_interleave")
EMBEDDINGS = ("rope", "absolute")
POSITIONS = ("mask", "arange")
SIDES = ("left", "right")
SLIDING_COUNTS = ("tokens_seen", "cache_length")


# -- 一张 0/1 表，和 masked_fill 挡住的格子 --------------------------------------------------------
def tril(n: int, diagonal: int = 0) -> list[list[float]]:
    """``torch.tril(torch.ones(n, n), diagonal)``：``j − i ≤ diagonal`` 的格子为 1，其余为 0。
    >>> tril(3)
    [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    """
    n = att.check_count(n, "n", maximum=att.MAX_POSITIONS)
    diagonal = _whole(diagonal, "diagonal")
    return [[1.0 if j - i <= diagonal else 0.0 for j in range(n)] for i in range(n)]  # (n, n)


def triu(n: int, diagonal: int = 0) -> list[list[float]]:
    """``torch.triu(torch.ones(n, n), diagonal)``：``j − i ≥ diagonal`` 处为 1，其余为 0。
    >>> triu(3, 1)
    [[0.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    """
    n = att.check_count(n, "n", maximum=att.MAX_POSITIONS)
    diagonal = _whole(diagonal, "diagonal")
    return [[1.0 if j - i >= diagonal else 0.0 for j in range(n)] for i in range(n)]  # (n, n)


def masked_fill_visibility(table, where: str) -> list[list[bool]]:
    """``scores.masked_fill(条件, −inf)`` 之后还读得到的格子：条件为真的格子被挡住。

    ``where="== 0"`` 是 ``masked_fill(mask == 0, …)``（挡住 0 的格子），``"!= 0"`` 是
    ``masked_fill(mask.bool(), …)``（挡住非 0 的格子）。同一张 ``tril`` 配两种条件，挡住的恰好相反。
    >>> masked_fill_visibility(tril(2), "== 0")
    [[True, False], [True, True]]
    >>> masked_fill_visibility(tril(2), "!= 0")
    [[False, True], [False, False]]
    """
    cells = att.as_matrix(table, "table")
    if where not in FILL_WHERE:
        raise ValueError(f"where 必须是 {' 或 '.join(map(repr, FILL_WHERE))}，收到 {where!r}")
    blocked_if_zero = where == "== 0"
    return [[(x == 0) != blocked_if_zero for x in row] for row in cells]  # True = 还读得到


def inverted(visible) -> list[list[bool]]:
    """同一张表换成相反的读法：True = 允许的表交给 True = 禁止的接口，读到的正是原本禁止的格子。
    >>> inverted([[True, False], [True, True]])
    [[False, True], [False, False]]
    """
    return [[not x for x in row] for row in _table(visible, "visible")]


# -- 浮点 mask 是加上去的 --------------------------------------------------------------------------
def biased_attention(q, k, v, bias):
    """浮点 ``attn_mask`` 的读法：*加* 到缩放后的分数上再做 softmax，返回 ``(weights, outputs)``。

    0/−∞ 的表这样用才是 mask；0/1 的表加上去，只是让允许的格子多 1 分，禁止的格子照样有权重。
    >>> w, out = biased_attention([[0.0]], [[0.0], [0.0]], [[10.0], [30.0]], [[1.0, 0.0]])
    >>> [round(x, 4) for x in w[0]]
    [0.7311, 0.2689]
    >>> round(out[0][0], 4)
    15.3788
    """
    scores = att.scaled_scores(q, k)  # (n_query, n_key)
    v = att.as_matrix(v, "V")
    rows = [
        att.as_vector(row, f"bias[{i}]", masked=True) for i, row in enumerate(_rows(bias, "bias"))
    ]
    if len(rows) != len(scores) or any(len(row) != len(v) for row in rows):
        shape = f"{len(scores)}×{len(v)}"
        raise ValueError(f"bias 的形状应为 {shape}（n_query × n_key），收到 {len(rows)} 行")
    if len(v) != len(scores[0]):
        raise ValueError(f"V 的行数必须等于 K 的行数，收到 V 为 {len(v)}、K 为 {len(scores[0])}")
    weights = [att.softmax([s + b for s, b in zip(srow, brow)]) for srow, brow in zip(scores, rows)]
    return weights, att.matmul(weights, v)  # (n_query, n_key), (n_query, d_v)


def future_weights(weights) -> list[float]:
    """每一行落在未来 Key（列号大于行号）上的权重之和：因果表交对了，每一行都是 0。
    >>> future_weights([[0.75, 0.25], [0.5, 0.5]])
    [0.25, 0.0]
    """
    rows = [att.as_vector(row, f"weights[{i}]") for i, row in enumerate(_rows(weights, "weights"))]
    if any(len(row) < len(rows) for row in rows):
        raise ValueError(f"weights 每行至少要有 {len(rows)} 列（n_query ≤ n_key），收到 {rows}")
    return [math.fsum(row[i + 1 :]) for i, row in enumerate(rows)]


# -- PAD：挡 Key 的列，不挡查询的行 ----------------------------------------------------------------
def padding_visibility(valid, axis: str = "key", causal: bool = False) -> list[list[bool]]:
    """PAD 规则广播到了哪一轴。``valid`` 标出内容（False 是 PAD）。

    ``"key"``：挡住 PAD 的 *列*，形状 (B, 1, 1, n) 的写法，正确；``"query"``：挡住 PAD 的 *行*，
    (B, 1, n, 1) 的写法（unsqueeze 错了一轴）；``"both"``：行与列都挡，PAD 查询整行被屏蔽。
    >>> padding_visibility([True, False])
    [[True, False], [True, False]]
    >>> padding_visibility([True, False], "query")
    [[True, True], [False, False]]
    """
    flags = att.flags(valid, "valid")
    n = att.check_count(len(flags), "valid 的长度", maximum=att.MAX_POSITIONS)
    if axis not in PADDING_AXES:
        raise ValueError(f"axis 必须是 {'、'.join(PADDING_AXES)} 之一，收到 {axis!r}")
    rule = att.visibility(n, n, causal=causal)  # 只有因果规则（或全 True）
    return [
        [
            ok and (axis == "query" or flags[j]) and (axis == "key" or flags[i])
            for j, ok in enumerate(row)
        ]
        for i, row in enumerate(rule)
    ]  # (n, n)


def slot_owners(batch: int, heads: int, layout: str) -> list[list[int]]:
    """三维 ``attn_mask`` (batch·heads, L, S) 的第 s 片给序列 ``s // heads`` 的头 ``s % heads``
    （MultiheadAttention 的排法）。每个序列一张表，按 ``layout`` 复制成 batch·heads 片之后，
    序列 b 的头 h 实际拿到的是哪个序列的表。``repeat`` 把整批排成一轮再重复，``repeat_interleave``
    把每张表连着复制 heads 份。
    >>> slot_owners(2, 2, "repeat")
    [[0, 1], [0, 1]]
    >>> slot_owners(2, 2, "repeat_interleave")
    [[0, 0], [1, 1]]
    """
    batch = att.check_count(batch, "batch", maximum=att.MAX_POSITIONS)
    heads = att.check_count(heads, "heads", maximum=att.MAX_POSITIONS)
    if layout not in LAYOUTS:
        raise ValueError(f"layout 必须是 {'、'.join(LAYOUTS)} 之一，收到 {layout!r}")
    if batch * heads > att.MAX_POSITIONS:
        raise ValueError(f"batch × heads 不能超过 {att.MAX_POSITIONS}，收到 {batch} × {heads}")
    slots = range(batch * heads)  # 第 s 片：序列 s // heads 的头 s % heads
    owner = [s % batch if layout == "repeat" else s // heads for s in slots]
    return [owner[b * heads : (b + 1) * heads] for b in range(batch)]  # (batch, heads)


def cross_visibility(n_target: int, source_valid, causal_across: bool = False) -> list[list[bool]]:
    """交叉注意力的表：目标（解码器）的第 i 行读源（编码器输出）的第 j 个 Key。

    源在目标开始之前就全部给定，没有“未来”：只挡源里的 PAD。``causal_across=True`` 是错的写法，
    把因果表也用在这里：第 i 行只读源的 0…i。
    >>> cross_visibility(2, [True, True, False])
    [[True, True, False], [True, True, False]]
    >>> cross_visibility(2, [True, True, False], causal_across=True)
    [[True, False, False], [True, True, False]]
    """
    n_target = att.check_count(n_target, "n_target", maximum=att.MAX_POSITIONS)
    valid = att.flags(source_valid, "source_valid")
    n_source = att.check_count(len(valid), "source_valid 的长度", maximum=att.MAX_POSITIONS)
    if not isinstance(causal_across, bool):
        raise ValueError(f"causal_across 必须是 True 或 False，收到 {causal_across!r}")
    table = att.visibility(n_target, n_source, causal=False, key_valid=valid)
    if not causal_across:
        return table
    rows = att.row_index_visibility(n_target, n_source)  # 行 i 只读 0…i：把行号当成了源的位置
    return [[a and b for a, b in zip(ra, rb)] for ra, rb in zip(table, rows)]


# -- 损失里的 PAD 与 dropout -----------------------------------------------------------------------
def labels_from(input_ids, attention_mask, pad_id: int, by: str = "position") -> list[int]:
    """语言模型的标签：就是输入本身（算损失时再错开一位），PAD 处写成 −100，不计入损失。

    ``by="position"`` 按 ``attention_mask`` 找 PAD（0 的位置）；``by="id"`` 按 token 编号找
    （``labels[labels == pad_id] = -100``）：PAD 与 EOS 共用一个编号时，真的 EOS 也被去掉了。
    >>> labels_from([5, 2, 0, 0], [1, 1, 1, 0], 0)
    [5, 2, 0, -100]
    >>> labels_from([5, 2, 0, 0], [1, 1, 1, 0], 0, by="id")
    [5, 2, -100, -100]
    """
    ids = _ids(input_ids, "input_ids")
    mask = _ids(attention_mask, "attention_mask")
    if len(mask) != len(ids) or any(m not in (0, 1) for m in mask):
        raise ValueError(f"attention_mask 必须是与 input_ids 等长的 0/1 序列，收到 {mask}")
    pad_id = _whole(pad_id, "pad_id")
    if by not in ("position", "id"):
        raise ValueError(f"by 必须是 'position' 或 'id'，收到 {by!r}")
    pad = [m == 0 for m in mask] if by == "position" else [t == pad_id for t in ids]
    return [IGNORE_INDEX if is_pad else t for t, is_pad in zip(ids, pad)]


def mean_loss(logits, labels, ignore_index: int = IGNORE_INDEX) -> dict:
    """交叉熵的平均：第 t 行 logits 预测 ``labels[t + 1]``（错开一位），不计 ``ignore_index``。
    >>> r = mean_loss([[0.0, 0.0], [0.0, 5.0], [9.0, 0.0]], [0, 1, -100])
    >>> round(r["loss"], 4), r["counted"]
    (0.6931, 1)
    """
    rows = att.as_matrix(logits, "logits")
    targets = _ids(labels, "labels")
    ignore_index = _whole(ignore_index, "ignore_index")
    if len(targets) != len(rows):
        raise ValueError(f"labels 的个数必须等于 logits 的行数 {len(rows)}，收到 {len(targets)}")
    pairs = [(row, t) for row, t in zip(rows[:-1], targets[1:]) if t != ignore_index]  # 错开一位
    if any(not 0 <= t < len(rows[0]) for _, t in pairs):
        raise ValueError(f"labels 里的 token 编号必须在 0 与 {len(rows[0]) - 1} 之间：{targets}")
    if not pairs:
        raise ValueError("没有一个要计入损失的标签：全是 ignore_index，平均值没有意义")
    losses = [-math.log(att.softmax(row)[t]) for row, t in pairs]  # −log p(目标)
    return {"loss": sum(losses) / len(losses), "counted": len(losses)}


def dropped(x, keep, p: float) -> list[list[float]]:
    """inverted dropout 的一次取样：``keep`` 为 1 的格子除以 1 − p，为 0 的格子乘 0。

    放在 softmax 之后，被屏蔽的权重 0 仍是 0，行和却不再是 1；放在加了 −∞ 的分数上，
    −∞ × 0 是 NaN，这一行 softmax 之后全是 NaN。
    >>> dropped([[0.5, 0.5]], [[1, 0]], 0.5)
    [[1.0, 0.0]]
    >>> dropped([[2.0, -math.inf]], [[1, 0]], 0.5)
    [[4.0, nan]]
    """
    rows = [att.as_vector(row, f"x[{i}]", masked=True) for i, row in enumerate(_rows(x, "x"))]
    marks = [_ids(row, f"keep[{i}]") for i, row in enumerate(_rows(keep, "keep"))]
    same_shape = [len(r) for r in marks] == [len(r) for r in rows]
    if not same_shape or any(m not in (0, 1) for r in marks for m in r):
        raise ValueError("keep 必须是与 x 同形的 0/1 表")
    p = att.real(p, "p")
    if not 0 < p < 1:
        raise ValueError(f"p 必须在 0 与 1 之间（不含两端），收到 {p}")
    return [[c * m / (1 - p) for c, m in zip(row, mark)] for row, mark in zip(rows, marks)]


# -- 一个小解码器：批量生成时 PAD 补在哪一侧，位置编号从哪里来 ------------------------------------
VOCAB = 6  # token 0 是 EOS，也当 PAD 用（pad_token = eos_token），1…5 是内容
D = 4  # 词向量的维度，也是注意力的维度（RoPE 要偶数）
MAX_LEN = 16  # 位置嵌入表的行数
EOS = PAD = 0
MODEL_SEED = 14


def _draw(rows: int, seed: int) -> list[list[float]]:
    """``rows`` 行 ``D`` 列、在 −1 与 1 之间均匀取出、保留一位小数的表（固定的种子，没有训练）。"""
    rng = random.Random(seed)
    return [[round(rng.uniform(-1.0, 1.0), 1) for _ in range(D)] for _ in range(rows)]


EMBED = _draw(VOCAB, MODEL_SEED)  # (VOCAB, D)：词向量
POS = _draw(MAX_LEN, MODEL_SEED + 1)  # (MAX_LEN, D)：位置嵌入（学出来的那种；这里只是取出的数）
UNEMBED = _draw(VOCAB, MODEL_SEED + 2)  # (VOCAB, D)：把输出变回 logits，第 t 行给 token t 打分


def decoder_logits(tokens, valid, positions, embedding: str = "rope") -> list[list[float]]:
    """一层注意力的小解码器，每个位置的 logits，形状 (n, VOCAB)。

    x 是词向量（``absolute`` 时再加第 ``positions[t]`` 行位置向量）；Q = K = x，``rope`` 时按
    ``positions`` 旋转；V = x；因果与 PAD 取“与”；h = x + 注意力输出；logits = h 乘 UNEMBED 的转置。
    >>> [round(z, 4) for z in decoder_logits([1, 2], [True, True], [0, 1])[-1]]
    [0.1631, 0.6414, -0.0276, 0.3324, 1.003, 0.2755]
    """
    ids = _tokens(tokens, "tokens")
    flags = att.flags(valid, "valid", len(ids))
    spots = _ids(positions, "positions")
    if len(spots) != len(ids) or any(not 0 <= p < MAX_LEN for p in spots):
        raise ValueError(f"positions 必须是 {len(ids)} 个 0 到 {MAX_LEN - 1} 之间的整数：{spots}")
    if embedding not in EMBEDDINGS:
        raise ValueError(f"embedding 必须是 {'、'.join(EMBEDDINGS)} 之一，收到 {embedding!r}")
    x = [EMBED[t] for t in ids]  # (n, D)
    if embedding == "absolute":
        x = [[a + b for a, b in zip(row, POS[p])] for row, p in zip(x, spots)]
    qk = rope.rotate_rows(x, spots) if embedding == "rope" else x
    _, mixed = att.attention(qk, qk, x, key_valid=flags, empty_row="zero")  # (n, D)
    h = [[a + b for a, b in zip(r, m)] for r, m in zip(x, mixed)]  # 残差连接
    return att.matmul(h, [list(col) for col in zip(*UNEMBED)])  # (n, VOCAB)


def pad_batch(prompts, side: str):
    """把长短不一的提示补成一样长：``side="left"`` 补在前面，``"right"`` 补在后面。
    返回 ``(tokens, valid)``，每个序列一行。
    >>> pad_batch([[3, 1], [2]], "left")
    ([[3, 1], [0, 2]], [[True, True], [False, True]])
    """
    rows = [_ids(p, f"prompts[{b}]") for b, p in enumerate(_rows(prompts, "prompts"))]
    if side not in SIDES:
        raise ValueError(f"side 必须是 'left' 或 'right'，收到 {side!r}")
    if any(not row for row in rows):
        raise ValueError("每个提示至少要有一个 token")
    n = max(len(row) for row in rows)
    tokens = []
    valid = []
    for row in rows:
        pads = [PAD] * (n - len(row))
        marks = [False] * len(pads) + [True] * len(row)  # 先按左侧排好
        tokens.append(pads + row if side == "left" else row + pads)
        valid.append(marks if side == "left" else marks[::-1])
    return tokens, valid


def position_ids(valid, positions: str = "mask") -> list[int]:
    """位置编号：``"mask"`` 按 attention_mask 数（前面真实 token 的个数，RoPE 一页的
    ``padded_positions``），``"arange"`` 直接用下标 0、1、2…（忘了传 position_ids 时的样子）。
    >>> position_ids([False, True, True])
    [0, 0, 1]
    >>> position_ids([False, True, True], "arange")
    [0, 1, 2]
    """
    flags = att.flags(valid, "valid")
    if positions not in POSITIONS:
        raise ValueError(f"positions 必须是 'mask' 或 'arange'，收到 {positions!r}")
    return rope.padded_positions(flags) if positions == "mask" else list(range(len(flags)))


def greedy(tokens, valid, steps: int, embedding: str = "rope", positions: str = "mask") -> list:
    """贪心生成 ``steps`` 个 token：每一步取 *最后一列* 的 logits 里最大的那个，接在后面。

    最后一列就是这一行最后一个位置，不管它是不是 PAD：右侧补 PAD 时，第一个新 token 由 PAD 算出。
    >>> greedy([2, 3], [True, True], 3)
    [5, 1, 5]
    """
    ids = _tokens(tokens, "tokens", longest=MAX_LEN - 1)
    flags = att.flags(valid, "valid", len(ids))
    room = MAX_LEN - len(ids)  # 位置向量表只有 MAX_LEN 行
    steps = att.check_count(steps, "steps", maximum=room, why="位置向量表只有 MAX_LEN 行")
    new = []
    for _ in range(steps):
        logits = decoder_logits(ids, flags, position_ids(flags, positions), embedding)[-1]
        best = max(range(VOCAB), key=logits.__getitem__)  # 最后一列：(VOCAB,)
        ids = ids + [best]
        flags = flags + [True]  # 新 token 是内容
        new.append(best)
    return new


def sliding_positions(prompt_len: int, steps: int, window: int, count: str = "tokens_seen") -> dict:
    """滑动窗口的缓存解码，预填之后每步一个新 token：缓存只留 ``window − 1`` 个位置的 K/V
    （Transformers 5.17 如此），位置却要数看过的 token；``"cache_length"`` 拿缓存的长度当位置，错。
    >>> sliding_positions(5, 3, 3)
    {'positions': [5, 6, 7], 'cache_held': [2, 2, 2]}
    >>> sliding_positions(5, 3, 3, "cache_length")["positions"]
    [2, 2, 2]
    """
    prompt_len = att.check_count(prompt_len, "prompt_len", maximum=att.MAX_POSITIONS)
    steps = att.check_count(steps, "steps", maximum=att.MAX_POSITIONS)
    window = att.check_count(window, "window", minimum=2, maximum=att.MAX_POSITIONS)
    if count not in SLIDING_COUNTS:
        raise ValueError(f"count 必须是 {'、'.join(SLIDING_COUNTS)} 之一，收到 {count!r}")
    seen = [prompt_len + t for t in range(steps)]  # 第 t 步之前看过的 token
    held = [min(n, window - 1) for n in seen]  # 缓存里留着的 K/V
    return {"positions": seen if count == "tokens_seen" else held, "cache_held": held}


def last_logits_gap(prompt, pad: int, embedding: str, positions: str) -> float:
    """左侧补 ``pad`` 个 PAD 之后，最后一个位置的 logits 与不补 PAD 时的最大差。
    >>> last_logits_gap([2, 3], 1, "rope", "mask")
    0.0
    """
    ids = _tokens(prompt, "prompt", longest=MAX_LEN)
    room = MAX_LEN - len(ids)
    pad = att.check_count(pad, "pad", minimum=0, maximum=room, why="位置向量表只有 MAX_LEN 行")
    alone = decoder_logits(ids, [True] * len(ids), list(range(len(ids))), embedding)[-1]
    valid = [False] * pad + [True] * len(ids)
    padded = decoder_logits([PAD] * pad + ids, valid, position_ids(valid, positions), embedding)[-1]
    return max(abs(a - b) for a, b in zip(alone, padded))


# -- 边界上的检查 ----------------------------------------------------------------------------------
def _whole(x: object, name: str) -> int:
    if not isinstance(x, int) or isinstance(x, bool):
        raise ValueError(f"{name} 必须是整数，收到 {x!r}")
    return x


def _ids(values: object, name: str) -> list[int]:
    """非空的一串整数（token 编号、标签、0/1 标记）。"""
    out = att.as_list(values, name)
    if not out:
        raise ValueError(f"{name} 不能为空")
    if len(out) > att.MAX_POSITIONS:
        raise ValueError(f"{name} 不能长于 {att.MAX_POSITIONS}，收到 {len(out)} 个")
    return [_whole(x, f"{name}[{i}]") for i, x in enumerate(out)]


def _tokens(values: object, name: str, longest: int = MAX_LEN) -> list[int]:
    """小解码器的 token 编号：0 到 VOCAB − 1，至多 ``longest`` 个（位置向量表只有 MAX_LEN 行）。"""
    ids = _ids(values, name)
    if any(not 0 <= t < VOCAB for t in ids):
        raise ValueError(f"{name} 里的 token 必须在 0 与 {VOCAB - 1} 之间，收到 {ids}")
    if len(ids) > longest:
        raise ValueError(
            f"{name} 至多 {longest} 个 token（位置向量表只有 {MAX_LEN} 行），收到 {len(ids)} 个"
        )
    return ids


def _rows(table: object, name: str) -> list:
    rows = att.as_list(table, name)
    if not rows:
        raise ValueError(f"{name} 不能为空：至少需要一行")
    return rows


def _table(visible: object, name: str) -> list[list[bool]]:
    """非空、矩形的 True/False 表。"""
    rows = [att.flags(row, f"{name}[{i}]") for i, row in enumerate(att.as_list(visible, name))]
    if not rows or not rows[0] or any(len(row) != len(rows[0]) for row in rows):
        raise ValueError(f"{name} 必须是非空的矩形表，收到各行的长度 {[len(r) for r in rows]}")
    return rows


# -- 自检与演示 ------------------------------------------------------------------------------------
DEMO_Q = DEMO_K = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0]]  # 四个位置，Q = K
DEMO_V = [[10.0], [20.0], [30.0], [40.0]]  # 输出读了谁，一看便知
DEMO_VALID = [True, True, True, False]  # 右侧补了一个 PAD（编码器的例子）
CROSS_TARGET = 3  # 交叉注意力的例子：目标（解码器）的前三个位置读这四个位置的源
DEMO_PROMPTS = [[3, 1, 4, 1, 5], [2, 5, 3]]  # 两个长短不一的提示
DEMO_STEPS = 3
LOSS_IDS = [3, 1, 4, EOS, PAD, PAD]  # 一条训练序列：EOS 之后补了两个 PAD（PAD 与 EOS 同号）
LOSS_MASK = [1, 1, 1, 1, 0, 0]
DECODE_HF_MASK = [0, 1, 1, 1]  # Hugging Face 的 attention_mask：1 = 内容，0 = PAD（位置 0）
WINDOW = 3  # 滑动窗口：每个查询只读最近的 3 个位置
DROP_P = 0.5
DROP_KEEP = [[1, 0, 1, 1], [0, 1, 1, 0], [1, 1, 0, 1], [1, 0, 1, 1]]  # 一次取样：1 留下，0 丢掉


def causal_table(n: int) -> list[list[bool]]:
    """因果表（True = 允许）：``torch.tril(torch.ones(n, n, dtype=torch.bool))``。
    >>> causal_table(2)
    [[True, False], [True, True]]
    """
    return att.visibility(n, n)


def self_test() -> None:
    """自检：每个错误都算得出它的症状，改对之后与前几页的函数一致。出错时抛 AssertionError。"""
    n = len(DEMO_Q)
    right = att.attention(DEMO_Q, DEMO_K, DEMO_V)
    w, _ = biased_attention(DEMO_Q, DEMO_K, DEMO_V, tril(n))
    att.check(w[0][1] > 0, "0/1 的浮点表加上去，第 0 行仍读到未来")
    fixed = biased_attention(DEMO_Q, DEMO_K, DEMO_V, att.additive_mask(causal_table(n)))
    att.check(att.max_abs_diff(fixed[1], right[1]) < 1e-12, "0/−∞ 的表加上去就是因果 mask")
    att.check(masked_fill_visibility(tril(n), "== 0") == causal_table(n), "tril == 0 挡住未来")
    att.check(inverted(causal_table(n))[-1] == [False] * n, "反过来读，最后一行什么也读不到")
    both = padding_visibility(DEMO_VALID, "both")
    att.check(both[-1] == [False] * n and padding_visibility(DEMO_VALID)[-1][0], "只挡 Key")
    att.check(slot_owners(2, 3, "repeat_interleave") == [[0, 0, 0], [1, 1, 1]], "头的排法")
    tokens, valid = pad_batch(DEMO_PROMPTS, "left")
    alone = [greedy(p, [True] * len(p), DEMO_STEPS) for p in DEMO_PROMPTS]
    left = [greedy(t, v, DEMO_STEPS) for t, v in zip(tokens, valid)]
    att.check(left == alone, "左侧补 PAD、位置按 mask 数：与单独生成相同")
    att.check(last_logits_gap(DEMO_PROMPTS[1], 2, "absolute", "arange") > 1e-3, "位置嵌入被挪动")


def run_demo() -> dict:
    """演示结果（JSON）：每个错误的症状，与改对之后的数。"""
    n = len(DEMO_Q)
    causal = causal_table(n)
    wrong_w, wrong_out = biased_attention(DEMO_Q, DEMO_K, DEMO_V, tril(n))
    _, right_out = att.attention(DEMO_Q, DEMO_K, DEMO_V)
    flipped = att.unguarded_attention(DEMO_Q, DEMO_K, DEMO_V, inverted(causal))[1]
    lines = {
        "tril == 0": masked_fill_visibility(tril(n), "== 0"),
        "tril.bool()": masked_fill_visibility(tril(n), "!= 0"),
        "triu(1).bool()": masked_fill_visibility(triu(n, 1), "!= 0"),
        "triu.bool()": masked_fill_visibility(triu(n), "!= 0"),
    }
    tokens_l, valid_l = pad_batch(DEMO_PROMPTS, "left")
    tokens_r, valid_r = pad_batch(DEMO_PROMPTS, "right")
    ids = LOSS_IDS
    content = [m == 1 for m in LOSS_MASK]
    logits = decoder_logits(ids, content, position_ids(content))
    weights = att.attention(DEMO_Q, DEMO_K, DEMO_V)[0]
    return {
        "性质": "人工构造的小矩阵与一个没有训练过的小解码器",
        "浮点01表_未来的权重": future_weights(wrong_w),
        "浮点01表_输出": [row[0] for row in wrong_out],
        "正确的输出": [row[0] for row in right_out],
        "方向反了_输出": [None if math.isnan(row[0]) else row[0] for row in flipped],
        "每种写法可读的Key数": {k: [sum(row) for row in t] for k, t in lines.items()},
        "repeat_拿到的表": slot_owners(2, 2, "repeat"),
        "损失_不挡PAD": mean_loss(logits, ids)["loss"],
        "损失_按位置挡": mean_loss(logits, labels_from(ids, LOSS_MASK, PAD))["loss"],
        "损失_按编号挡": mean_loss(logits, labels_from(ids, LOSS_MASK, PAD, "id"))["loss"],
        "dropout后的行和": [sum(row) for row in dropped(weights, DROP_KEEP, DROP_P)],
        "单独生成": [greedy(p, [True] * len(p), DEMO_STEPS) for p in DEMO_PROMPTS],
        "左侧PAD": [greedy(t, v, DEMO_STEPS) for t, v in zip(tokens_l, valid_l)],
        "右侧PAD": [greedy(t, v, DEMO_STEPS) for t, v in zip(tokens_r, valid_r)],
        "位置嵌入_arange_最大差": last_logits_gap(DEMO_PROMPTS[1], 2, "absolute", "arange"),
        "RoPE_arange_最大差": last_logits_gap(DEMO_PROMPTS[1], 2, "rope", "arange"),
    }


if __name__ == "__main__":
    self_test()
    att.print_json(run_demo())
