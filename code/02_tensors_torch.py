"""第 2 章教学代码：从手算到张量——同一批数据交给 PyTorch 与 Hugging Face（需要 PyTorch）。

要 PyTorch（CPU 版即可），``hf_masks`` 另要 transformers；与 ``02_attention.py``、
``02_tensors.py`` 放在同一目录运行。布尔表 True = 允许（SDPA 的读法），MultiheadAttention
的两张表反过来。整行被屏蔽的查询行（左侧 PAD 作查询，预填时才有）各库给的数不一：先记下
SDPA 给了什么，再把它们置 0，与 ``attention_batched(empty_row="zero")`` 比较。
"""

import importlib

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right

att = importlib.import_module("02_attention")
tn = importlib.import_module("02_tensors")  # visibility_batch、attention_batched、demo_inputs


def _parts(attention_mask, past: int):
    """检查过的两半：PAD (batch, n_key)，True = 内容；因果 (n_query, n_key)，行 i 在 past + i。"""
    n_key = tn.positions_from_mask(attention_mask).shape[1]  # 顺带检查 attention_mask
    past = att.check_count(past, "past", minimum=0, maximum=n_key - 1, why="至少要有一个新查询")
    pad = torch.as_tensor(np.asarray(attention_mask)) == 1
    causal = torch.arange(n_key)[None, :] <= torch.arange(past, n_key)[:, None]  # 右下对齐
    return pad, causal


def bool_mask(attention_mask, past: int) -> torch.Tensor:
    """SDPA 的布尔 ``attn_mask`` (batch, 1, n_query, n_key)，True = 允许：因果且不是 PAD。
    >>> bool_mask([[0, 1, 1]], 1)[0, 0].int().tolist()
    [[0, 1, 0], [0, 1, 1]]
    """
    pad, causal = _parts(attention_mask, past)
    return causal[None, None] & pad[:, None, None, :]  # 头这一维为 1：广播到每个头


def mha_masks(attention_mask, past: int):
    """``nn.MultiheadAttention`` 的 (key_padding_mask, attn_mask)，方向相反：True = 不读。
    >>> [m.int().tolist() for m in mha_masks([[0, 1, 1]], 1)]
    [[[1, 0, 0]], [[0, 0, 1], [0, 0, 0]]]
    """
    pad, causal = _parts(attention_mask, past)
    return ~pad, ~causal  # (batch, n_key) 与 (n_query, n_key)：层里再合成一张


def hf_masks(attention_mask, past: int):
    """Hugging Face 的 ``masking_utils``：两条谓词取“与”，``sdpa_mask`` 造布尔表（不许它
    返回 None 而让 SDPA 用 is_causal），``eager_mask`` 再把禁止处一次填成 float16 的 finfo.min。
    >>> sdpa, eager = hf_masks([[0, 1, 1]], 1)
    >>> (sdpa == bool_mask([[0, 1, 1]], 1)).all().item()
    True
    >>> eager[0, 0, 0].tolist()
    [-65504.0, 0.0, -65504.0]
    """
    from transformers import masking_utils as mu

    pad, causal = _parts(attention_mask, past)
    rule = mu.and_masks(mu.causal_mask_function, mu.padding_mask_function(pad))
    size = dict(
        batch_size=pad.shape[0],
        q_length=causal.shape[0],
        kv_length=pad.shape[1],
        q_offset=past,  # 查询从 past 数起：右下对齐
        mask_function=rule,
    )
    sdpa = mu.sdpa_mask(**size, allow_is_causal_skip=False)
    eager = mu.eager_mask(**size, dtype=torch.float16)
    return sdpa, eager


@torch.no_grad()
def _mha(q, k, v, key_padding_mask, attn_mask) -> torch.Tensor:
    """MultiheadAttention 算 (batch, heads, n, d) 的一批：投影是单位矩阵、没有偏置，它算的就是
    softmax(q @ k.T / √d) @ v。它不分组 K/V 头：K、V 先复制成 heads 份。"""
    _, heads, _, d = q.shape
    eye = torch.eye(q.shape[1] * q.shape[3], dtype=q.dtype)
    layer = torch.nn.MultiheadAttention(heads * d, heads, bias=False, batch_first=True).to(q.dtype)
    layer.in_proj_weight.copy_(eye.repeat(3, 1))
    layer.out_proj.weight.copy_(eye)

    def flat(x):
        return x.repeat_interleave(heads // x.shape[1], 1).transpose(1, 2).flatten(2)

    out = layer(
        flat(q),
        flat(k),
        flat(v),
        key_padding_mask=key_padding_mask,
        attn_mask=attn_mask,
        need_weights=False,
    )[0]  # 层把两张表合成一张
    return out.unflatten(2, (heads, d)).transpose(1, 2)  # 换回 (batch, heads, n, d)


def _what_it_gave(rows: torch.Tensor) -> str:
    """一个库在整行被屏蔽的行上给了什么：没有这样的行、全是 NaN、全是 0，或别的。"""
    if not rows.numel():
        return "none"
    if rows.isnan().all():
        return "nan"
    if (rows == 0).all():
        return "zeros"
    return "other"


def compare(inputs: dict) -> dict:
    """一批交给 SDPA（enable_gqa）、MultiheadAttention 与 is_causal，与 attention_batched 比较。"""
    q, k, v, mask, past = tn._batch(inputs)  # 形状与 past 的检查
    allowed = bool_mask(mask, past)
    kpm, causal = mha_masks(mask, past)
    ours = tn.attention_batched(q, k, v, allowed.numpy(), empty_row="zero")[1]
    tq = torch.as_tensor(q)
    tk = torch.as_tensor(k)
    tv = torch.as_tensor(v)
    empty = ~allowed.any(dim=-1, keepdim=True)  # (batch, 1, n_query, 1)：整行被屏蔽
    sdpa = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=allowed, enable_gqa=True)
    gave = _what_it_gave(sdpa[empty.expand_as(sdpa)])  # 先记下整行被屏蔽的行，再把它们置 0
    sdpa = sdpa.masked_fill(empty, 0.0)
    layer = _mha(tq, tk, tv, kpm, causal).masked_fill(empty, 0)
    # 坑与它的修法：is_causal 按左上对齐，causal_lower_right 按右下对齐。
    top_left = F.scaled_dot_product_attention(tq, tk, tv, is_causal=True, enable_gqa=True)
    lower = F.scaled_dot_product_attention(
        tq, tk, tv, attn_mask=causal_lower_right(*causal.shape), enable_gqa=True
    )
    visible = tn.forward(inputs)["visible"][:, :1]  # 02_tensors 的表：因果与 PAD 取“与”

    def gap(x):
        return float(np.abs(x.numpy() - ours).max())

    def rows(x):
        # 与 ours 不符的查询行：任一头差过 1e-12
        wrong = (np.abs(x.numpy() - ours) > 1e-12).any(axis=(1, 3))
        return [np.flatnonzero(r).tolist() for r in wrong]

    return {
        "mask": allowed.int().tolist(),
        "mask_equal": bool((allowed.numpy() == visible).all()),
        "key_padding_mask": kpm.int().tolist(),
        "mha_attn_mask": causal.int().tolist(),
        "empty_rows": int(empty.sum()),
        "sdpa_on_empty_rows": gave,
        "sdpa_gap": gap(sdpa),
        "mha_gap": gap(layer),
        "wrong_rows": {
            "is_causal": rows(top_left),
            "causal_lower_right": rows(lower),
            "attn_mask": rows(sdpa),
        },
    }


def run_demo() -> dict:
    """本页的一批（带缓存）与它的预填（past = 0，查询取 K：有整行被屏蔽的行），在哪里算的。"""
    x = tn.demo_inputs()
    prefill = dict(x, past=0, q=tn.repeat_kv(x["k"], x["q"].shape[1] // x["k"].shape[1]))
    hf, eager = hf_masks(x["attention_mask"], x["past"])
    return {
        "性质": "人工构造的小数组",
        "torch": torch.__version__,
        "dtype": "float64",
        "transformers": importlib.import_module("transformers").__version__,
        "device": "cpu",
        "batch": compare(x),
        "prefill": compare(prefill),
        "hf_mask": hf.int().tolist(),
        "hf_equal": bool((hf == bool_mask(x["attention_mask"], x["past"])).all()),
        "hf_eager_fill": eager.unique().tolist(),
        "hf_eager_equal": bool(((eager == 0) == hf).all()),
    }


if __name__ == "__main__":
    import doctest

    att.check(doctest.testmod().failed == 0, "上面的 >>> 示例应当全部通过")
    att.print_json(run_demo())
