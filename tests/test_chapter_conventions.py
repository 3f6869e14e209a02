"""Tests of book/chapter/conventions.py: the library conventions table and the table of fully masked rows
follow the stored observations (code/02_library_conventions.json), each observed cell says where it
was observed, and every observed value has words. No build, no browser.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from chapter import conventions as page
from chapter import fmt, mask, summary

BIB = Path(__file__).resolve().parents[1] / "book" / "references.bib"
CJK_NEXT_TO_LATIN = re.compile(r"[\u4e00-\u9fff][A-Za-z0-9]|[A-Za-z0-9][\u4e00-\u9fff]")


def test_every_documentation_link_is_the_bibliographys_address():
    bib = BIB.read_text(encoding="utf-8")
    for key, url in page.DOCS.items():
        entry = re.search(rf"@\w+\{{{re.escape(key)},(.*?)\n\}}", bib, flags=re.S)
        assert entry, key
        assert re.search(r"url\s*=\s*\{(.*?)\}", entry.group(1)).group(1) == url, key


def _observed_cells(rows):
    """The cells of the rows whose 依据 says they were observed here (all but Hugging Face's)."""
    return [
        (i, j)
        for i, row in enumerate(rows)
        if row[-1].startswith("观察记录")
        for j in range(1, len(row))
    ]


def _every_leaf(tree, path=()):
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _every_leaf(value, (*path, key))
    else:
        yield path, tree


ALTERNATIVE = {  # for each kind of observed value, another value the page has words for
    "allowed": "forbidden",
    "forbidden": "allowed",
    "top-left": "bottom-right",
    "bottom-right": "top-left",
    "added": "nonzero_allowed",
    "nonzero_allowed": "added",
    "attn_mask": "top-left",
    "error": "attn_mask",
    "zeros": "nan",
    "nan": "uniform",
    "uniform": "zeros",
    "unmasked": "uniform",
    "float64": "float32",
    "float32": "float64",
}
PLACE = {"version", "backend", "backend_version", "device", "dtype", "gpu"}  # where it was observed


def test_the_tables_are_made_from_the_observations():
    seen = page.observed()
    rows = page.conventions_rows(seen)
    assert len(rows) == 6 and all(len(row) == len(page.HEADER) for row in rows)
    assert len(_observed_cells(rows)) == 5 * (len(page.HEADER) - 1)  # every row but Hugging Face's
    # Flip each observation in turn: some observed cell of a table, or a sentence, must change with it
    # (on the mask page, or in the summary's conventions table, which shows the fast path's is_causal).

    def shown(seen):
        with pytest.MonkeyPatch.context() as m:
            m.setattr(mask, "observed", lambda: seen)
            return mask.conventions_section().values, summary.conventions_rows(seen)

    baseline = shown(seen)
    flips = 0
    for path, value in _every_leaf(seen["cpu"]):
        if (
            path[-1] in PLACE
            or isinstance(value, list)
            or value in ("unavailable",)
            or value not in ALTERNATIVE
        ):
            continue
        flipped = copy.deepcopy(seen)
        node = flipped["cpu"]
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = ALTERNATIVE[value]
        after = shown(flipped)
        assert after != baseline, path
        flips += 1
    # SDPA 4, attn_bias 2, MHA 7 (need_weights=False with and without key_padding_mask), JAX 4, Keras 4 (each with its precision); fully masked: SDPA default, math, flash × 4 dtypes × 2 masks,
    # MHA 4 × 2, JAX xla 4, Keras 4 × 2 (the kernels this CPU lacks have nothing to flip); the other mask
    # forms and paths: SDPA's finfo.min mask 4, MHA's fast path 4 × 2 and its is_causal 1, JAX's bias 4
    assert flips == 4 + 2 + 7 + 4 + 4 + 3 * 4 * 2 + 4 * 2 + 4 + 4 * 2 + 4 + 4 * 2 + 1 + 4, flips


def test_every_observed_cell_says_where_it_was_observed():
    seen = page.observed()
    torch, jax, keras = (seen["cpu"][lib] for lib in ("torch", "jax", "keras"))
    where = [row[-1] for row in page.conventions_rows(seen)]
    for text in where[:3]:
        assert text.startswith(f"观察记录：PyTorch {torch['version']}，CPU，{torch['dtype']}，"), (
            text
        )
        assert "内核" in text or "不经过 SDPA" in text
    assert where[3] == "前两格据文档，因果一格据源码（都未运行）"
    dpa = jax["dot_product_attention"]
    assert (
        dpa["precision"] == "float32"
    )  # JAX's softmax is float32 even for float64 inputs: said, not hidden
    assert where[4] == (
        f"观察记录：JAX {jax['version']}，CPU，{jax['dtype']} 输入（结果只有 float32 的精度），"
        f"实现 `{dpa['implementation']}`"
    )
    assert where[5].startswith(
        f"观察记录：Keras {keras['version']}（jax {keras['backend_version']} 后端），CPU"
    )
    assert where[0].count("float64") == 1 and "精度" not in where[0]  # PyTorch's float64 is float64
    # Another place of observation is written as it is: a new version, another kernel.
    other = copy.deepcopy(seen)
    other["cpu"]["torch"].update(version="9.9.9")
    other["cpu"]["torch"]["sdpa"]["kernels"] = ["math", "flash"]
    rows = page.conventions_rows(other)
    assert rows[0][-1] == "观察记录：PyTorch 9.9.9，CPU，float64，SDPA 走 math 与 flash 内核"


def test_the_keras_float_mask_cell_is_the_observed_inversion():
    seen = page.observed()
    assert seen["cpu"]["keras"]["MultiHeadAttention"]["float_mask"] == "nonzero_allowed"
    cell = page.conventions_rows(seen)[5][2]
    assert "只读被禁止的 Key" in cell and "不接受" not in cell
    assert "Keras" in page.float_mask_sentence(seen).split("；")[0]
    added = copy.deepcopy(seen)
    added["cpu"]["keras"]["MultiHeadAttention"]["float_mask"] = "added"
    assert page.float_mask_sentence(added) == (
        "PyTorch 的 `scaled_dot_product_attention`、`nn.MultiheadAttention`、JAX 的 `bias` 与 Keras 的 "
        "`MultiHeadAttention` 都把 0/−∞ 的表加到分数上。"
    )
    # Each interface is named once, under what was observed for it.
    sentence = page.float_mask_sentence(seen)
    for api, reading in page.float_mask_readings(seen):
        assert sentence.count(api) == (2 if reading == "nonzero_allowed" else 1), api
    refused = copy.deepcopy(seen)
    refused["cpu"]["jax"]["dot_product_attention"]["bias"] = "error"
    assert page.float_mask_sentence(refused).endswith("；JAX 的 `bias` 收到浮点表时报错。")


def test_the_mha_causal_hint_cell_is_observed():
    seen = page.observed()
    mha = seen["cpu"]["torch"]["mha"]
    cell = page.conventions_rows(seen)[1][3]
    # need_weights=False is observed twice: without key_padding_mask and with one (C17); the cell says both.
    alone, padded = (
        page.CAUSAL_HINT[mha[key]]
        for key in ("is_causal_with_mask_no_weights", "is_causal_with_mask_and_padding_no_weights")
    )
    assert f"`need_weights=False` 且不给 `key_padding_mask` 时{alone}" in cell
    assert f"同时给了 `key_padding_mask` 时{padded}" in cell
    assert page.CAUSAL_HINT[mha["is_causal_with_mask"]] in cell
    flipped = copy.deepcopy(seen)
    flipped["cpu"]["torch"]["mha"]["is_causal_with_mask_and_padding_no_weights"] = "top-left"
    assert (
        f"同时给了 `key_padding_mask` 时{page.CAUSAL_HINT['top-left']}"
        in page.conventions_rows(flipped)[1][3]
    )


def test_the_versions_sentence_names_every_library_observed():
    seen = page.observed()
    words = page.versions_words(seen)
    for lib in ("torch", "jax", "keras"):
        assert seen["cpu"][lib]["version"] in words
    assert words.endswith("，CPU")


def test_the_fully_masked_table_has_one_cell_per_path_and_dtype():
    seen = page.observed()
    rows = page.fully_masked_rows(seen)
    facts = page.fully_masked_paths(seen)
    assert len(rows) == len(facts["paths"]) and all(
        len(r) == len(page.FULLY_MASKED_HEADER) for r in rows
    )
    words = set(page.FULLY_MASKED.values())
    for row, (api, path, _, cells) in zip(rows, facts["paths"]):
        assert row[0] == "CPU" and row[1] == f"{api}，{path}"
        for dtype, cell in zip(page.DTYPES, row[2:]):
            results = set(cells[dtype].values())
            assert (
                cell == page.FULLY_MASKED[results.pop()]
                if len(results) == 1
                else set(re.findall(r"：(\S+?)(?:；|$)", cell)) <= words
            )
    # A kernel the machine lacks gets no row, and the sentence names it.
    sdpa = seen["cpu"]["torch"]["sdpa_fully_masked"]
    for kernel, name in page.KERNELS.items():
        has_row = any(r[1].endswith(f"强制 {name} 内核") for r in rows)
        missing = all(v == "unavailable" for d in page.DTYPES for v in sdpa[kernel][d].values())
        assert has_row != missing, kernel
        assert (f"SDPA 的 {name} 内核" in page.unavailable_sentence(seen)) == missing


def test_a_bool_and_a_float_mask_that_differ_are_written_apart():
    seen = copy.deepcopy(page.observed())
    seen["cpu"]["torch"]["sdpa_fully_masked"]["math"]["float16"]["float"] = "nan"
    row = next(r for r in page.fully_masked_rows(seen) if r[1].endswith("强制 math 内核"))
    assert row[2 + page.DTYPES.index("float16")] == "布尔：全 0；−∞：NaN"


def test_the_tables_take_cuda_rows_and_the_pages_gpu_sentence_then_stops_the_build():
    from chapter import mask

    seen = copy.deepcopy(page.observed())
    assert "cuda" not in seen  # no GPU here: the mask page says so and cites the reports
    mask.conventions_section()
    cuda = copy.deepcopy(seen["cpu"])
    for lib in cuda.values():
        lib["device"] = "cuda"
    cuda["torch"].update(version="2.13.0+cu128", gpu="NVIDIA H200")
    seen["cuda"] = cuda
    # the page's fixed sentence 「本书还没有在 GPU 上运行过这些库」 is false now: the build stops on it
    with pytest.MonkeyPatch.context() as m:
        m.setattr(mask, "observed", lambda: seen)
        with pytest.raises(ValueError, match="observed_on_cpu_only"):
            mask.conventions_section()
    rows = page.fully_masked_rows(seen)
    assert [r[0] for r in rows].count("CUDA（NVIDIA H200）") == len(
        page.fully_masked_paths(seen, "cuda")["paths"]
    )
    assert page.conventions_rows(seen, "cuda")[0][-1].startswith(
        "观察记录：PyTorch 2.13.0+cu128，CUDA（NVIDIA H200）"
    )


@pytest.mark.parametrize("kernels", [["flash"], ["math", "flash"], []])
def test_the_conventions_text_spaces_chinese_from_latin(kernels):
    seen = copy.deepcopy(page.observed())
    seen["cpu"]["torch"]["sdpa"]["kernels"] = kernels
    seen["cpu"]["torch"]["sdpa_fully_masked"]["default"]["float32"]["kernels"] = kernels
    with pytest.MonkeyPatch.context() as m:
        m.setattr(mask, "observed", lambda: seen)
        section = mask.conventions_section().values
    texts = [c for v in section.values() if isinstance(v, fmt.Table) for row in v.rows for c in row]
    texts += [str(v) for v in section.values() if not isinstance(v, fmt.Table)]
    for text in texts:
        plain = re.sub(r"\]\(.*?\)", "]", text).replace("`", "")
        assert not CJK_NEXT_TO_LATIN.search(plain), text
        assert "  " not in text and not re.search(r"[，。；：、（）]\s|\s[，。；：、（）]", text), (
            text
        )


@pytest.mark.parametrize("device", ["tpu", 0, "cuda"])
def test_a_device_that_was_not_observed_is_named(device):
    with pytest.raises(ValueError, match="device"):
        page.conventions_rows(page.observed(), device)


def test_every_observation_has_words():
    seen = page.observed()
    words = {
        **page.TRUE_MEANS,
        **page.ALIGNMENT,
        **page.FLOAT_MASK,
        **page.CAUSAL_HINT,
        **page.FULLY_MASKED,
        page.UNAVAILABLE: "",
    }
    for path, value in _every_leaf(seen):
        if path[-1] in PLACE or path[-1] == "implementation":
            continue
        if path[-1] == "precision":
            assert value in page.DTYPES, (path, value)
            continue
        if isinstance(value, list):
            assert set(value) <= set(page.KERNELS), path
        else:
            assert isinstance(value, bool) or value in words, (path, value)
