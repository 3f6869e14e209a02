"""Tests of code/02_conventions.py: the table follows the observations, the alignments are exact."""

from __future__ import annotations

import copy
import importlib
import re
from pathlib import Path

import pytest

conv = importlib.import_module("02_conventions")
att = importlib.import_module("02_attention")
BIB = Path(conv.__file__).resolve().parent.parent / "book" / "references.bib"


def test_every_documentation_link_is_the_bibliographys_address():
    bib = BIB.read_text(encoding="utf-8")
    for key, url in conv.DOCS.items():
        entry = re.search(rf"@\w+\{{{re.escape(key)},(.*?)\n\}}", bib, flags=re.S)
        assert entry, key
        assert re.search(r"url\s*=\s*\{(.*?)\}", entry.group(1)).group(1) == url, key


def test_the_table_is_made_from_the_observations():
    seen = conv.observed()
    rows = conv.conventions_rows(seen)
    assert len(rows) == 6 and all(len(row) == len(conv.HEADER) for row in rows)
    # Flip every observation: every cell that states one must change with it.
    flipped = copy.deepcopy(seen)
    flipped["torch"]["sdpa"].update(bool_true="forbidden", is_causal="bottom-right", fully_masked_bool="nan")
    flipped["jax"]["dot_product_attention"].update(mask_true="forbidden", fully_masked="error")
    flipped["keras"]["MultiHeadAttention"].update(use_causal_mask="bottom-right")
    flipped["torch"]["version"] = "9.9.9"
    other = conv.conventions_rows(flipped)
    assert other[0][1] == "`attn_mask`：True = 禁止"
    assert other[0][3].endswith("右下对齐（行 i 读 Key 0…past + i）")
    assert other[0][4].startswith("布尔：NaN")
    assert other[0][5] == "本机运行 PyTorch 9.9.9"
    assert other[4][1] == "`mask`：True = 禁止" and other[4][4] == "报错"
    assert other[5][3].endswith("右下对齐（行 i 读 Key 0…past + i）")


def test_every_observation_has_words():
    seen = conv.observed()
    words = {**conv.TRUE_MEANS, **conv.ALIGNMENT, **conv.FULLY_MASKED}
    for library in seen.values():
        for api in library.values():
            if isinstance(api, dict):
                for value in api.values():
                    assert isinstance(value, bool) or value in words, value


@pytest.mark.parametrize("past", [0, 1, 3, 5])
@pytest.mark.parametrize("new", [1, 2, 4])
def test_bottom_right_is_the_books_offset_and_top_left_the_wrong_one(past, new):
    n_key = past + new
    assert conv.causal_table(new, n_key, "bottom-right") == att.visibility(new, n_key, past=past)
    assert conv.causal_table(new, n_key, "top-left") == att.row_index_visibility(new, n_key)
    facts = conv.alignment_facts(past, new)
    assert facts["bottom_right_is_past"] and facts["top_left_is_row_index"]
    assert facts["top_left_lost_cells"] == past * new  # every row misses exactly the cached keys
    if past:
        assert f"少了 {past * new} 格" in facts["sentence"]
    else:
        assert "两种对齐方式重合" in facts["sentence"]


@pytest.mark.parametrize(
    "args, words",
    [
        ((2, 5, "middle"), "align 必须是"),
        ((0, 5, "top-left"), "n_query 必须是不小于 1 的整数"),
        ((2, True, "top-left"), "n_key 必须是不小于 1 的整数"),
        ((3, 2, "top-left"), "不能少于"),
    ],
)
def test_bad_input_is_named(args, words):
    with pytest.raises(ValueError, match=words):
        conv.causal_table(*args)


def test_alignment_facts_rejects_a_bad_cache():
    with pytest.raises(ValueError, match="past"):
        conv.alignment_facts(-1, 2)
