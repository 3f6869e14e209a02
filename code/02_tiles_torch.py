"""第 2 章教学代码：分块计算——同样的块交给 PyTorch 的 FlexAttention（需要 PyTorch）。

要 PyTorch（CPU 版即可）；与 ``02_attention.py``、``02_tiles.py`` 放在同一目录运行。
``create_block_mask`` 把一条规则切成块：每个查询块的 ``kv_num_blocks`` 是部分可见的 Key 块数，
``full_kv_num_blocks`` 是全可见的，其余的块不算；``sparsity()`` 把算了的块按每块 B × B 格计，
是没算的格子所占的百分比。这里按 ``kv_indices``、``full_kv_indices`` 把每块的种类摊成表，与
``02_tiles.block_kinds`` 逐块比较，再把
``flex_attention`` 的输出与 ``tiled_attention`` 比较，最后看一个 Key 也不可见的行得到什么输出和
logsumexp。FlexAttention 的 ``q_idx`` 从 0 数起：有缓存时规则里要加上 past（右下对齐）。
"""

import importlib
import warnings

import torch
from torch.nn.attention.flex_attention import AuxRequest, create_block_mask, flex_attention

att = importlib.import_module("02_attention")
tl = importlib.import_module("02_tiles")  # block_kinds、tiled_attention 与演示数据


def _documents(doc_lengths, n_key: int) -> list[int] | None:
    """每个位置的文档编号；``doc_lengths`` 为 None 时没有文档规则。"""
    if doc_lengths is None:
        return None
    lengths = [
        att.check_count(x, f"doc_lengths[{d}]")
        for d, x in enumerate(att.as_list(doc_lengths, "doc_lengths"))
    ]
    if sum(lengths) != n_key:
        raise ValueError(f"doc_lengths 之和必须等于 n_key = {n_key}，收到 {sum(lengths)}")
    return [d for d, x in enumerate(lengths) for _ in range(x)]


def rule(n_query: int, n_key: int, *, window: int | None = None, doc_lengths=None):
    """FlexAttention 的 ``mask_mod(b, h, q_idx, kv_idx)``：因果（可再加窗口与文档），查询是最后
    ``n_query`` 个位置。整数与张量都能传进来。
    >>> allowed = rule(2, 4)
    >>> [bool(allowed(0, 0, 0, k)) for k in range(4)]  # 第 0 行的绝对位置是 past = 2
    [True, True, True, False]
    """
    n_key = att.check_count(n_key, "n_key", maximum=tl.MAX_COUNTED)
    n_query = att.check_count(n_query, "n_query", maximum=n_key, why="查询是最后几个位置")
    if window is not None:
        window = att.check_count(window, "window", maximum=tl.MAX_COUNTED)
    doc = _documents(doc_lengths, n_key)
    past = n_key - n_query
    ids = None if doc is None else torch.tensor(doc)

    def mask_mod(b, h, q_idx, kv_idx):
        p = q_idx + past  # FlexAttention 的 q_idx 从 0 数起：加上 past 才是绝对位置
        ok = kv_idx <= p
        if window is not None:
            ok = ok & (kv_idx > p - window)
        if ids is not None:
            same = ids[kv_idx] == ids[p] if isinstance(p, torch.Tensor) else doc[kv_idx] == doc[p]
            ok = ok & same
        return ok

    return mask_mod


def _table(n_query: int, n_key: int, mask_mod) -> list[list[bool]]:
    """用同一个谓词在纯 Python 整数上造出可见性表，交给 ``02_tiles.block_kinds``。"""
    return [[bool(mask_mod(0, 0, i, j)) for j in range(n_key)] for i in range(n_query)]


def _flex_kinds(mask) -> list[list[str]]:
    """``create_block_mask`` 造出的 block mask 按块的索引摊成与 ``block_kinds`` 同样的表：
    ``full_kv_indices`` 的前 ``full_kv_num_blocks`` 个是全可见，``kv_indices`` 的前
    ``kv_num_blocks`` 个是部分可见，其余的块不算（批与头都取第 0 个）。"""
    t_k = mask.kv_indices.shape[-1]
    grid = []
    for a in range(mask.kv_num_blocks.shape[-1]):
        row = ["empty"] * t_k
        for kind, counts, indices in (
            ("partial", mask.kv_num_blocks, mask.kv_indices),
            ("full", mask.full_kv_num_blocks, mask.full_kv_indices),
        ):
            for b in indices[0, 0, a, : int(counts[0, 0, a])].tolist():
                row[b] = kind
        grid.append(row)
    return grid  # (查询块数, Key 块数)


def compare_blocks(n_query: int, n_key: int, block: int, *, window=None, doc_lengths=None) -> dict:
    """``create_block_mask`` 的块与 ``block_kinds`` 的块：每个查询块的部分可见、全可见块数，
    ``sparsity()``，块的大小；``differ`` 是两边种类不同的块（查询块，Key 块），``same`` 是
    逐块（按块的索引）比较是否全部相同。
    >>> r = compare_blocks(4, 6, 2)
    >>> r["flex"]["partial"], r["flex"]["full"], r["differ"], r["same"]
    ([1, 1], [1, 2], [], True)
    """
    mask_mod = rule(n_query, n_key, window=window, doc_lengths=doc_lengths)
    block = att.check_count(block, "block", maximum=n_key, why="一块不超过整个序列")
    mask = create_block_mask(mask_mod, None, None, n_query, n_key, device="cpu", BLOCK_SIZE=block)
    kinds = tl.block_kinds(_table(n_query, n_key, mask_mod), block, block)
    theirs = _flex_kinds(mask)
    flex = {
        "partial": mask.kv_num_blocks[0, 0].tolist(),
        "full": mask.full_kv_num_blocks[0, 0].tolist(),
        "sparsity": float(mask.sparsity()),
        "block_size": list(mask.BLOCK_SIZE),
    }
    ours = {kind: [row.count(kind) for row in kinds] for kind in ("partial", "full")}
    differ = [
        [a, b]
        for a, (mine, flexs) in enumerate(zip(kinds, theirs))
        for b, (x, y) in enumerate(zip(mine, flexs))
        if x != y
    ]
    return {
        "n_query": n_query,
        "n_key": n_key,
        "block": block,
        "window": window,
        "doc_lengths": doc_lengths,
        "flex": flex,
        "ours": ours,
        "differ": differ,
        "same": theirs == kinds,
    }


def _flex(q, k, v, mask_mod, block: int):
    """flex_attention 在 float64、CPU 上的输出、logsumexp 与它发出的警告（说明走了哪条路）。"""
    n_query = len(q)
    n_key = len(k)
    mask = create_block_mask(mask_mod, None, None, n_query, n_key, device="cpu", BLOCK_SIZE=block)

    def tensor(x):
        return torch.tensor(x, dtype=torch.float64)[None, None]  # (1, 1, n, d)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, aux = flex_attention(
            tensor(q), tensor(k), tensor(v), block_mask=mask, return_aux=AuxRequest(lse=True)
        )
    said = [str(w.message).split("\n")[0] for w in caught]
    return out[0, 0].tolist(), aux.lse[0, 0].tolist(), said


def compare_attention(q, k, v, *, past: int, block: int, key_valid=None) -> dict:
    """同一个例子（因果，可带 PAD）交给 ``flex_attention`` 与 ``tiled_attention``（``"zero"``）：
    最大差（不含一个 Key 也不可见的行），以及 FlexAttention 在那些行给出的输出与 logsumexp。
    >>> r = compare_attention(tl.DEMO_Q, tl.DEMO_K, tl.DEMO_V, past=2, block=2)
    >>> r["gap"] < 1e-12, r["empty_rows"]
    (True, [])
    """
    q = att.as_matrix(q, "Q")
    k = att.as_matrix(k, "K")
    v = att.as_matrix(v, "V")
    visible = att.visibility(len(q), len(k), past=past, key_valid=key_valid)
    block = att.check_count(block, "block", maximum=len(k), why="一块不超过整个序列")
    ours, _ = tl.tiled_attention(q, k, v, visible, block_q=block, block_k=block, empty_row="zero")
    valid = [True] * len(k) if key_valid is None else key_valid

    def mask_mod(b, h, q_idx, kv_idx):
        allowed = torch.tensor(valid)[kv_idx] if isinstance(kv_idx, torch.Tensor) else valid[kv_idx]
        return rule(len(q), len(k))(b, h, q_idx, kv_idx) & allowed

    out, lse, said = _flex(q, k, v, mask_mod, block)
    empty = [i for i, row in enumerate(visible) if not any(row)]
    rest = [i for i in range(len(q)) if i not in empty]
    scores = tl.masked_scores(
        q, k, visible
    )  # 一行一行地在线算出 logsumexp，与 FlexAttention 的比较
    lse_ours = [tl.online_row(scores[i], v, block)["logsumexp"] for i in rest]
    return {
        "empty_rows": empty,
        "gap": max(abs(a - b) for i in rest for a, b in zip(out[i], ours[i])),
        "lse_gap": max(abs(lse[i] - x) for i, x in zip(rest, lse_ours)),
        "output_on_empty_rows": [out[i] for i in empty],
        "lse_on_empty_rows": [str(lse[i]) for i in empty],  # JSON 写不出 −∞：记成文字 "-inf"
        "warnings": said,
    }


# 记录里的块：本页图解的例子、FlexAttention 文档的例子、滑动窗口、打包的三篇文档、块大小除不尽长度
BLOCK_CASES = {
    "cache": {"n_query": 4, "n_key": 6, "block": 2},
    "causal": {"n_query": 1024, "n_key": 1024, "block": 128},
    "window": {"n_query": 1024, "n_key": 1024, "block": 128, "window": 256},
    "documents": {"n_query": 1024, "n_key": 1024, "block": 128, "doc_lengths": [300, 500, 224]},
    "ragged": {"n_query": 1000, "n_key": 1000, "block": 128},
}
EMPTY_VALID = [False, False, True, True, True, True]  # 左侧两个 PAD：前两个查询行一个 Key 也读不到


def run_demo() -> dict:
    """每种块的比较、演示数据上的注意力、整行被屏蔽的行，以及在哪里算的。"""
    demo = {"past": tl.DEMO_PAST, "block": tl.DEMO_BLOCK}
    k = tl.DEMO_K
    return {
        "性质": "人工构造的小矩阵",
        "torch": torch.__version__,
        "device": "cpu",
        "dtype": "float64",
        "blocks": {name: compare_blocks(**case) for name, case in BLOCK_CASES.items()},
        "attention": compare_attention(tl.DEMO_Q, k, tl.DEMO_V, **demo),
        "empty_rows": compare_attention(k, k, tl.DEMO_V, past=0, block=2, key_valid=EMPTY_VALID),
    }


if __name__ == "__main__":
    import doctest

    result = run_demo()  # 先于示例：flex_attention 的警告每个进程只发一次，要记在结果里
    att.check(doctest.testmod().failed == 0, "上面的 >>> 示例应当全部通过")
    att.print_json(result)
