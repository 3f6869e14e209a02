"""The libraries' mask conventions as `make crosscheck` observed them (code/02_library_conventions.json)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

att = importlib.import_module("02_attention")

OBSERVED_FILE = Path(att.__file__).with_name("02_library_conventions.json")

# Words for what the observations say; every observed cell of the tables is made from these.
TRUE_MEANS = {"allowed": "True = 允许", "forbidden": "True = 禁止"}
ALIGNMENT = {
    "top-left": "左上对齐（行 i 读 Key 0…i）",
    "bottom-right": "右下对齐（行 i 读 Key 0…past + i）",
}
FLOAT_MASK = {
    "added": "加到分数上（0/−∞ 的表与任意偏置都是）",
    "nonzero_allowed": "不报错，转成布尔（非 0 = 允许），于是 0/−∞ 的表只读被禁止的 Key，偏置里恰为 0 的格子也被禁止",
    "error": "报错",
}
CAUSAL_HINT = {  # what nn.MultiheadAttention computed when told is_causal=True
    "error": "报错",
    "attn_mask": "照 `attn_mask` 算（提示不起作用）",
    "top-left": "丢掉 `attn_mask`，按左上对齐的因果表算",
    "bottom-right": "丢掉 `attn_mask`，按右下对齐的因果表算",
    "causal": "丢掉 `attn_mask`，按因果表算",
}
# Where the is_causal observations of nn.MultiheadAttention were made: its slow path (a layer with the fast
# path, a default layer in eval mode under no_grad with q, k, v one tensor, reads attn_mask instead).
MHA_PATH = "观察时走慢路径：层不带偏置，Q、K、V 各不相同"
FULLY_MASKED = {
    "nan": "NaN",
    "zeros": "全 0",
    "uniform": "平均读所有 Key",
    "unmasked": "像没有 mask 一样按分数读所有 Key",
    "error": "报错",
}
UNAVAILABLE = "unavailable"  # a kernel the device does not have: recorded, never shown as a result
KERNELS = {"math": "math", "flash": "flash", "efficient": "memory-efficient", "cudnn": "cuDNN"}
DEVICE_NAMES = {"cpu": "CPU", "cuda": "CUDA"}
# Keras MultiHeadAttention's two paths on a fully masked row, as both pages' tables name them; the mask
# page's wide column adds the argument that chooses the second.
KERAS_PATHS = {"fused": "默认", "with_scores": "返回分数"}
KERAS_ARGUMENTS = {"fused": "", "with_scores": "（`return_attention_scores=True`）"}
DTYPES = ("float64", "float32", "float16", "bfloat16")

# The official documentation page of each interface, and the source the Hugging Face row's causal cell
# is read from (the same addresses as book/references.bib).
DOCS = {
    "pytorch_sdpa": "https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html",
    "pytorch_mha": "https://pytorch.org/docs/stable/generated/torch.nn.MultiheadAttention.html",
    "pytorch_attn_bias": "https://pytorch.org/docs/stable/nn.attention.bias.html",
    "hf_attention_mask": "https://huggingface.co/docs/transformers/glossary#attention-mask",
    "hf_masking_utils_v517": "https://github.com/huggingface/transformers/blob/v5.17.0/src/transformers/masking_utils.py",
    "jax_dot_product_attention": "https://docs.jax.dev/en/latest/_autosummary/jax.nn.dot_product_attention.html",
    "keras_mha": "https://keras.io/api/layers/attention_layers/multi_head_attention/",
}

HEADER = ["接口", "布尔 mask", "浮点 mask", "因果标志（查询比 Key 少时）", "依据（观察在哪里做的）"]
FULLY_MASKED_HEADER = ["设备", "接口与路径", *DTYPES]


def observed() -> dict:
    """``make crosscheck`` 记下的观察，按设备分开（``"cpu"``，有 GPU 时还有 ``"cuda"``）。"""
    return json.loads(OBSERVED_FILE.read_text(encoding="utf-8"))


def observed_on(seen: dict | None, device: str) -> dict:
    """The observations made on ``device`` (``"cpu"`` or ``"cuda"``), from ``seen`` or the record."""
    seen = observed() if seen is None else seen
    if not isinstance(device, str) or device not in DEVICE_NAMES:
        raise ValueError(f"device 必须是 'cpu' 或 'cuda'，收到 {device!r}")
    if device not in seen:
        raise ValueError(f"device={device!r}：观察记录里没有这个设备")
    return seen[device]


def _link(text: str, key: str) -> str:
    return f"[{text}]({DOCS[key]})"


def _spaced(*parts: str) -> str:
    """Join pieces of a sentence, with a space only where Latin (or code) meets Chinese."""

    def latin(ch):
        return ch.isascii() and (ch.isalnum() or ch in "`_")

    text = ""
    for part in parts:
        text += (" " if text and part and (latin(text[-1]) or latin(part[0])) else "") + part
    return text


def _names(items: list[str]) -> str:
    """``a``、``b`` 与 ``c``。"""
    return items[0] if len(items) == 1 else _spaced("、".join(items[:-1]), "与", items[-1])


def device_words(lib: dict) -> str:
    """``CPU``，或 ``CUDA（GPU 的名字）``。"""
    name = DEVICE_NAMES[lib["device"]]
    return f"{name}（{lib['gpu']}）" if lib.get("gpu") else name


def kernel_words(kernels: list[str]) -> str:
    """Profiler 里看到的 SDPA 内核（``math 与 flash 内核``）；一个也没有时说不经过 SDPA。"""
    return _names([KERNELS[k] for k in kernels]) + " 内核" if kernels else "不经过 SDPA"


def where_words(library: str, lib: dict, extra: str = "", precision: str | None = None) -> str:
    """“依据”一格：库与版本、设备、dtype（计算精度 ``precision`` 不同时照实写出），再加 ``extra``。"""
    dtype = (
        lib["dtype"]
        if precision in (None, lib["dtype"])
        else f"{lib['dtype']} 输入（结果只有 {precision} 的精度）"
    )
    return f"观察记录：{library}，{device_words(lib)}，{dtype}" + (f"，{extra}" if extra else "")


def conventions_rows(seen: dict | None = None, device: str = "cpu") -> list[list[str]]:
    """约定表的各行（与 ``HEADER`` 对应）：除 Hugging Face 一行据文档与源码外，每格都由 ``device`` 上的观察生成。"""
    here = observed_on(seen, device)
    torch = here["torch"]
    jax = here["jax"]
    keras = here["keras"]
    sdpa = torch["sdpa"]
    bias = torch["attn_bias"]
    mha = torch["mha"]
    mha_paths = torch["mha_fully_masked"][torch["dtype"]]
    dpa = jax["dot_product_attention"]
    kmha = keras["MultiHeadAttention"]
    pytorch = f"PyTorch {torch['version']}"

    def hint(key):
        return CAUSAL_HINT[mha[f"is_causal_{key}"]]

    return [
        [
            _link("`scaled_dot_product_attention`", "pytorch_sdpa"),
            f"`attn_mask`：{TRUE_MEANS[sdpa['bool_true']]}",
            FLOAT_MASK[sdpa["float_mask"]],
            f"`is_causal=True`：{ALIGNMENT[sdpa['is_causal']]}",
            where_words(
                pytorch, torch, f"SDPA 走 {kernel_words(sdpa['kernels'])}", sdpa["precision"]
            ),
        ],
        [
            _link("`nn.MultiheadAttention`", "pytorch_mha"),
            f"`attn_mask`：{TRUE_MEANS[mha['attn_mask_bool_true']]}；"
            f"`key_padding_mask`：{TRUE_MEANS[mha['key_padding_mask_true']]}",
            FLOAT_MASK[mha["float_mask"]],
            f"`is_causal=True` 只是提示：不给 `attn_mask` 时{hint('without_mask')}；"
            f"给了 `attn_mask`，返回权重（默认）时{hint('with_mask')}，"
            f"`need_weights=False` 且不给 `key_padding_mask` 时{hint('with_mask_no_weights')}，"
            f"同时给了 `key_padding_mask` 时{hint('with_mask_and_padding_no_weights')}（{MHA_PATH}）",
            where_words(
                pytorch,
                torch,
                f"返回权重时{kernel_words(mha_paths['weights_kernels'])}，"
                f"`need_weights=False` 时走 {kernel_words(mha_paths['no_weights_kernels'])}",
            ),
        ],
        [
            _link("`torch.nn.attention.bias`", "pytorch_attn_bias"),
            "—（两个函数直接造因果偏置）",
            "—",
            f"`causal_upper_left`：{ALIGNMENT[bias['causal_upper_left']]}；"
            f"`causal_lower_right`：{ALIGNMENT[bias['causal_lower_right']]}",
            where_words(pytorch, torch, f"SDPA 走 {kernel_words(bias['kernels'])}"),
        ],
        [
            _link("Hugging Face `attention_mask`", "hf_attention_mask"),
            "整数 0/1：1 = 内容，0 = PAD",
            "所引的词汇表只讲 1 与 0 的表",
            "由模型内部构造（"
            + _link("`masking_utils.create_causal_mask`", "hf_masking_utils_v517")
            + "）",
            "前两格据文档，因果一格据源码（都未运行）",
        ],
        [
            _link("`jax.nn.dot_product_attention`", "jax_dot_product_attention"),
            f"`mask`：{TRUE_MEANS[dpa['mask_true']]}",
            f"`bias`：{FLOAT_MASK[dpa['bias']]}",
            f"`is_causal=True`：{ALIGNMENT[dpa['is_causal']]}",
            where_words(
                f"JAX {jax['version']}", jax, f"实现 `{dpa['implementation']}`", dpa["precision"]
            ),
        ],
        [
            _link("Keras `MultiHeadAttention`", "keras_mha"),
            f"`attention_mask`：{TRUE_MEANS[kmha['attention_mask_true']]}",
            f"`attention_mask` 传浮点表：{FLOAT_MASK[kmha['float_mask']]}",
            f"`use_causal_mask=True`：{ALIGNMENT[kmha['use_causal_mask']]}",
            where_words(
                f"Keras {keras['version']}（{keras['backend']} {keras['backend_version']} 后端）",
                keras,
                precision=kmha["precision"],
            ),
        ],
    ]


def float_mask_readings(seen: dict | None = None, device: str = "cpu") -> list[tuple[str, str]]:
    """每个收浮点 mask 的接口观察到的读法：``[(接口, "added" 或 "nonzero_allowed" …), ...]``。"""
    here = observed_on(seen, device)
    torch = here["torch"]
    jax = here["jax"]
    keras = here["keras"]
    return [
        ("PyTorch 的 `scaled_dot_product_attention`", torch["sdpa"]["float_mask"]),
        ("`nn.MultiheadAttention`", torch["mha"]["float_mask"]),
        ("JAX 的 `bias`", jax["dot_product_attention"]["bias"]),
        ("Keras 的 `MultiHeadAttention`", keras["MultiHeadAttention"]["float_mask"]),
    ]


def float_mask_sentence(seen: dict | None = None, device: str = "cpu") -> str:
    """约定表下面那句：同一张 0/−∞ 的浮点表，哪些接口加到分数上、哪些读反了、哪些报错。"""
    readings = float_mask_readings(seen, device)
    cast = [a for a, r in readings if r == "nonzero_allowed"]
    added = [a for a, r in readings if r == "added"]
    refused = [a for a, r in readings if r == "error"]
    if not cast:
        text = _spaced(_names(added), "都把 0/−∞ 的表加到分数上") if added else ""
    else:
        text = _spaced("浮点 mask 一列里最要小心的是", _names(cast)) + "：同一张 0/−∞ 的表，"
        text += _spaced(_names(added), "把它加到分数上，") if added else ""
        text += _spaced(_names(cast), "却把允许与禁止读反了，而且不报错")
    if refused:
        text += ("；" if text else "") + _spaced(_names(refused), "收到浮点表时报错")
    return text + "。"


def fully_masked_paths(seen: dict | None = None, device: str = "cpu") -> dict:
    """Each path's words and results by dtype on a fully masked row; the kernels ``device`` lacks."""
    here = observed_on(seen, device)
    torch = here["torch"]
    jax = here["jax"]
    keras = here["keras"]
    sdpa = torch["sdpa_fully_masked"]
    mha = torch["mha_fully_masked"]
    kgrid = keras["fully_masked"]

    def one(grid, key=None):
        return {d: {"all": grid[d] if key is None else grid[d][key]} for d in DTYPES}

    default = {d: {k: sdpa["default"][d][k] for k in ("bool", "float")} for d in DTYPES}
    kernels = sorted({k for d in DTYPES for k in sdpa["default"][d]["kernels"]})
    api = "`scaled_dot_product_attention`"
    unavailable = []
    paths = [(api, f"不指定内核（PyTorch 选用 {kernel_words(kernels)}）", "不指定内核时", default)]
    for kernel, name in KERNELS.items():
        if all(r == UNAVAILABLE for d in DTYPES for r in sdpa[kernel][d].values()):
            unavailable.append(f"SDPA 的 {name} 内核")
        else:
            paths.append((api, f"强制 {name} 内核", f"强制 {name} 内核时", sdpa[kernel]))
    finfo_min = torch["sdpa_fully_masked_finfo_min"]
    finfo_kernels = sorted({k for d in DTYPES for k in finfo_min[d]["kernels"]})
    fast = torch["mha_fast_path"]["fully_masked"]
    mha_api = "`nn.MultiheadAttention`"
    paths += [
        (
            api,
            f"不指定内核（{kernel_words(finfo_kernels)}），禁止处填 `finfo.min` 的浮点 mask",
            "填 finfo.min 时",
            one(finfo_min, "float"),
        ),
        (
            mha_api,
            "慢路径（层不带偏置，Q、K、V 各不相同），返回权重（默认）",
            "返回权重时",
            one(mha, "weights"),
        ),
        (
            mha_api,
            "慢路径（同一层，不带偏置），`need_weights=False`",
            "`need_weights=False` 时",
            one(mha, "no_weights"),
        ),
        (
            mha_api,
            "快路径（batch_first=True、带偏置、偶数个头、Q、K、V 是同一个张量、布尔 mask、eval、inference_mode），返回权重（默认）",
            "快路径返回权重时",
            one(fast, "weights"),
        ),
        (
            mha_api,
            "快路径，`need_weights=False`",
            "快路径 `need_weights=False` 时",
            one(fast, "no_weights"),
        ),
    ]
    for impl, grid in jax["fully_masked"].items():
        if all(grid[d] == UNAVAILABLE for d in DTYPES):
            unavailable.append(f"JAX 的 {impl} 实现")
        else:
            paths.append(
                (
                    "`jax.nn.dot_product_attention`",
                    f'`implementation="{impl}"`，布尔的 `mask`',
                    f"{impl} 实现",
                    one(grid),
                )
            )
    paths.append(
        (
            "`jax.nn.dot_product_attention`",
            "不指定实现，−∞ 的浮点 `bias`",
            "−∞ 的 bias 时",
            one(jax["fully_masked_bias"]),
        )
    )
    paths += [
        (
            "Keras `MultiHeadAttention`",
            KERAS_PATHS["fused"] + KERAS_ARGUMENTS["fused"],
            "不返回分数时",
            one(kgrid, "fused"),
        ),
        (
            "Keras `MultiHeadAttention`",
            KERAS_PATHS["with_scores"] + KERAS_ARGUMENTS["with_scores"],
            "返回分数时",
            one(kgrid, "with_scores"),
        ),
    ]
    return {"device": device_words(torch), "paths": paths, "unavailable": unavailable}


def _masked_cell(results: dict) -> str:
    """One cell of the fully-masked table: ``{"bool": r, "float": r}`` or a single result."""
    if len(set(results.values())) == 1:
        return FULLY_MASKED[next(iter(results.values()))]
    return "；".join(
        f"{'布尔' if kind == 'bool' else '−∞'}：{FULLY_MASKED[r]}" for kind, r in results.items()
    )


def fully_masked_rows(seen: dict | None = None) -> list[list[str]]:
    """全屏蔽的行那张表（与 ``FULLY_MASKED_HEADER`` 对应），每个记下的设备各占几行，每格都是观察。"""
    seen = observed() if seen is None else seen
    rows = []
    for device in filter(seen.__contains__, DEVICE_NAMES):
        facts = fully_masked_paths(seen, device)
        for api, path, _, cells in facts["paths"]:
            shown = [
                "强制时报错" if UNAVAILABLE in cells[d].values() else _masked_cell(cells[d])
                for d in DTYPES
            ]
            rows.append([facts["device"], f"{api}，{path}", *shown])
    return rows


def unavailable_sentence(seen: dict | None = None, device: str = "cpu") -> str:
    """强制使用时报错、因而表里没有的内核与实现。"""
    facts = fully_masked_paths(seen, device)
    if not facts["unavailable"]:
        return _spaced("在", facts["device"], "上每个内核都能强制运行，表里每条路径都有观察。")
    unavailable = _names(facts["unavailable"])
    return (
        _spaced("在", facts["device"], "上强制使用", unavailable) + "时报错，表里也就没有它们的行。"
    )


def versions_words(seen: dict | None = None, device: str = "cpu") -> str:
    """哪几个版本、在哪种设备上观察的，如 ``PyTorch 2.13.0+cpu、JAX 0.10.2、Keras 3.15.1，CPU``。"""
    here = observed_on(seen, device)
    libs = (("torch", "PyTorch"), ("jax", "JAX"), ("keras", "Keras"))
    return (
        "、".join(f"{n} {here[k]['version']}" for k, n in libs if k in here)
        + f"，{DEVICE_NAMES[device]}"
    )
