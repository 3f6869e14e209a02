"""第2章：把可见性表交给真实的库之前——各库怎样读 mask，由运行结果给出。

本书的 ``visibility`` 一律用 True 表示“允许读取”，并按绝对位置 ``past + i`` 判断因果。真实的
注意力接口各有约定：布尔值的方向、浮点 mask 是否加到分数上、查询比 Key 少时因果标志怎样对齐、
整行都被禁止时给出什么。这里的约定表有两种来源，表里逐行写明：

- **本机运行观察**：``make crosscheck`` 在独立的虚拟环境里安装 PyTorch、JAX 与 Keras，
  逐项运行、与参照实现比较，把看到的结果存进 ``02_library_conventions.json``
  （``tests/crosscheck/observe.py``）；版本号也记在那里。库的行为一变，检查就会失败。
- **据文档**：没有在本机运行的库（Hugging Face Transformers），只写它文档里写明的部分。

对齐方式本身不需要任何库：``causal_table`` 按两种对齐方式造表，``alignment_facts`` 把它们与
本书的正确偏移和故意写错的偏移逐格比较，页面上的结论句由这些比较生成。
"""

from __future__ import annotations

import json
from pathlib import Path

from book_tools import load

att = load("02_attention")

OBSERVED_FILE = Path(__file__).with_name("02_library_conventions.json")

# Words for what the observations say; every cell of the table is made from these.
TRUE_MEANS = {"allowed": "True = 允许", "forbidden": "True = 禁止"}
ALIGNMENT = {"top-left": "左上对齐（行 i 读 Key 0…i）", "bottom-right": "右下对齐（行 i 读 Key 0…past + i）"}
FULLY_MASKED = {
    "nan": "NaN",
    "zeros": "输出全 0",
    "uniform": "平均读所有 Key（含禁止的）",
    "error": "报错",
}

# The official documentation page of each interface (the same addresses as book/references.bib).
DOCS = {
    "pytorch_sdpa": "https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html",
    "pytorch_mha": "https://pytorch.org/docs/stable/generated/torch.nn.MultiheadAttention.html",
    "pytorch_attn_bias": "https://pytorch.org/docs/stable/nn.attention.bias.html",
    "hf_attention_mask": "https://huggingface.co/docs/transformers/glossary#attention-mask",
    "jax_dot_product_attention": "https://docs.jax.dev/en/latest/_autosummary/jax.nn.dot_product_attention.html",
    "keras_mha": "https://keras.io/api/layers/attention_layers/multi_head_attention/",
}

HEADER = ["接口", "布尔 mask", "浮点 mask", "因果标志（查询比 Key 少时）", "整行都被禁止时", "依据"]


def observed() -> dict:
    """``make crosscheck`` 在本机观察到的约定（含各库版本）。

    >>> observed()["torch"]["sdpa"]["bool_true"]
    'allowed'
    """
    return json.loads(OBSERVED_FILE.read_text(encoding="utf-8"))


def _link(text: str, key: str) -> str:
    return f"[{text}]({DOCS[key]})"


def _added(flag: bool) -> str:
    return "加到分数上" if flag else "不是加到分数上"


def conventions_rows(seen: dict | None = None) -> list[list[str]]:
    """约定表的各行（与 ``HEADER`` 对应），每格由观察结果或文档所述生成。

    >>> rows = conventions_rows()
    >>> [row[1] for row in rows[:2]]
    ['`attn_mask`：True = 允许', '`attn_mask`：True = 禁止；`key_padding_mask`：True = 禁止']
    >>> rows[-1][4]
    '平均读所有 Key（含禁止的）；返回分数时：输出全 0'
    """
    seen = observed() if seen is None else seen
    torch, jax, keras = seen["torch"], seen["jax"], seen["keras"]
    sdpa, bias, mha = torch["sdpa"], torch["attn_bias"], torch["mha"]
    dpa, kmha = jax["dot_product_attention"], keras["MultiHeadAttention"]
    ran = lambda name, version: f"本机运行 {name} {version}"  # noqa: E731
    return [
        [
            _link("`scaled_dot_product_attention`", "pytorch_sdpa"),
            f"`attn_mask`：{TRUE_MEANS[sdpa['bool_true']]}",
            _added(sdpa["float_added"]),
            f"`is_causal=True`：{ALIGNMENT[sdpa['is_causal']]}",
            f"布尔：{FULLY_MASKED[sdpa['fully_masked_bool']]}；−∞：{FULLY_MASKED[sdpa['fully_masked_float']]}",
            ran("PyTorch", torch["version"]),
        ],
        [
            _link("`nn.MultiheadAttention`", "pytorch_mha"),
            f"`attn_mask`：{TRUE_MEANS[mha['attn_mask_bool_true']]}；"
            f"`key_padding_mask`：{TRUE_MEANS[mha['key_padding_mask_true']]}",
            _added(mha["float_added"]),
            "无：`is_causal` 只是提示，表要自己给",
            f"返回权重（默认）：{FULLY_MASKED[mha['fully_masked_bool']]}；"
            f"`need_weights=False`：{FULLY_MASKED[mha['fully_masked_bool_no_weights']]}",
            ran("PyTorch", torch["version"]),
        ],
        [
            _link("`torch.nn.attention.bias`", "pytorch_attn_bias"),
            "—（两个函数直接造因果偏置）",
            "—",
            f"`causal_upper_left`：{ALIGNMENT[bias['causal_upper_left']]}；"
            f"`causal_lower_right`：{ALIGNMENT[bias['causal_lower_right']]}",
            "—",
            ran("PyTorch", torch["version"]),
        ],
        [
            _link("Hugging Face `attention_mask`", "hf_attention_mask"),
            "1 = 内容，0 = PAD",
            "文档没有规定（它只讲 1 与 0 的表）",
            "由模型内部构造",
            "文档没有规定",
            "据文档（未在本机运行）",
        ],
        [
            _link("`jax.nn.dot_product_attention`", "jax_dot_product_attention"),
            f"`mask`：{TRUE_MEANS[dpa['mask_true']]}",
            f"`bias`：{_added(dpa['bias_added'])}",
            f"`is_causal=True`：{ALIGNMENT[dpa['is_causal']]}",
            FULLY_MASKED[dpa["fully_masked"]],
            ran("JAX", jax["version"]),
        ],
        [
            _link("Keras `MultiHeadAttention`", "keras_mha"),
            f"`attention_mask`：{TRUE_MEANS[kmha['attention_mask_true']]}",
            "不接受",
            f"`use_causal_mask=True`：{ALIGNMENT[kmha['use_causal_mask']]}",
            f"{FULLY_MASKED[kmha['fully_masked']]}；"
            f"返回分数时：{FULLY_MASKED[kmha['fully_masked_with_scores']]}",
            f"本机运行 Keras {keras['version']}（{keras['backend']} 后端）",
        ],
    ]


def causal_table(n_query: int, n_key: int, align: str) -> list[list[bool]]:
    """按某种对齐方式造因果表：``"top-left"`` 让第 i 行读 Key 0…i，``"bottom-right"`` 读 0…i + n_key − n_query。

    这正是各库文档描述的两种“下三角”：查询和 Key 一样多时两者相同，查询更少时才分开。

    >>> causal_table(2, 5, "bottom-right")
    [[True, True, True, True, False], [True, True, True, True, True]]
    >>> causal_table(2, 5, "middle")
    Traceback (most recent call last):
    ...
    ValueError: align 必须是 'top-left' 或 'bottom-right'，收到 'middle'
    """
    if align not in ALIGNMENT:
        raise ValueError(f"align 必须是 'top-left' 或 'bottom-right'，收到 {align!r}")
    att._check_count(n_query, "n_query", minimum=1)
    att._check_count(n_key, "n_key", minimum=1)
    if n_key < n_query:
        raise ValueError(f"n_key={n_key} 不能少于 n_query={n_query}：查询读的是缓存加新位置")
    shift = n_key - n_query if align == "bottom-right" else 0
    return [[j <= i + shift for j in range(n_key)] for i in range(n_query)]


def alignment_facts(past: int, new: int) -> dict:
    """把两种对齐方式与本书的正确偏移、故意写错的偏移逐格比较，并生成结论句。

    >>> facts = alignment_facts(3, 2)
    >>> facts["bottom_right_is_past"], facts["top_left_is_row_index"]
    (True, True)
    >>> facts["sentence"]
    '缓存里有 3 个位置、新来 2 个查询时：右下对齐的表与本书按 past + i 造的表逐格相同；左上对齐的表与把行号当位置的错误写法逐格相同，比正确的表少了 6 格。'
    """
    n_key = past + new
    right = att.visibility(new, n_key, past=past)
    wrong = att.row_index_visibility(new, n_key)
    bottom_right = causal_table(new, n_key, "bottom-right")
    top_left = causal_table(new, n_key, "top-left")
    lost = sum(r and not t for rr, tr in zip(right, top_left) for r, t in zip(rr, tr))
    facts = {
        "bottom_right_is_past": bottom_right == right,
        "top_left_is_row_index": top_left == wrong,
        "top_left_lost_cells": lost,
    }
    first = "相同" if facts["bottom_right_is_past"] else "不同"
    second = "相同" if facts["top_left_is_row_index"] else "不同"
    tail = f"，比正确的表少了 {lost} 格" if lost else "，与正确的表也一样（没有缓存时两种对齐方式重合）"
    facts["sentence"] = (
        f"缓存里有 {past} 个位置、新来 {new} 个查询时：右下对齐的表与本书按 past + i 造的表逐格{first}；"
        f"左上对齐的表与把行号当位置的错误写法逐格{second}{tail}。"
    )
    return facts
