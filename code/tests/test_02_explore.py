"""Tests of F12's explore data (code/02_figures.py): every reachable state against the teaching code.

The panel on the mask page only looks states up in ``f12_explore_states()``. Here every state the
controls can reach is decoded with ``explore_state`` and compared with what ``02_attention``
computes directly (the visibility table, the additive mask, the row-index mistake, the empty-row
error), with the row sentences of ``explain_rows``, and with counts made here independently.
"""

from __future__ import annotations

import importlib
import json
import math
import re
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

figs = importlib.import_module("02_figures")
att = importlib.import_module("02_attention")
tools = importlib.import_module("book_tools")


@pytest.fixture(scope="module")
def data():
    return figs.f12_explore_states()


def reachable(data):
    """Every setting the panel's controls can produce."""
    ch = data["choices"]
    for past in ch["past"]:
        for new in ch["new"]:
            for causal in ch["causal"]:
                yield past, new, "none", 0, causal
                for pad in ("front", "end"):
                    for count in range(1, past + new + 1):
                        yield past, new, pad, count, causal


def valid_keys(n_key, pad, count):
    """Independent of pad_valid: PAD marks written out by hand."""
    if pad == "none":
        return [True] * n_key
    flags = [j >= count for j in range(n_key)]
    return flags if pad == "front" else flags[::-1]


def test_the_controls_reach_the_issues_ranges(data):
    assert data["choices"]["past"] == list(range(0, 7))
    assert data["choices"]["new"] == list(range(1, 7))
    assert data["choices"]["pad"] == ["none", "front", "end"]
    assert len(list(reachable(data))) == 1176


def test_every_state_equals_the_teaching_code(data):
    for past, new, pad, count, causal in reachable(data):
        n_key = past + new
        valid = valid_keys(n_key, pad, count)
        state = figs.explore_state(data, past, new, pad, count, causal)
        where = (past, new, pad, count, causal)
        visible = att.visibility(new, n_key, causal=causal, past=past, key_valid=valid)
        mask = att.additive_mask(visible)
        if causal:
            wrong = [[a and ok for a, ok in zip(row, valid)] for row in att.row_index_visibility(new, n_key)]
        else:
            wrong = visible
        explained = figs.explain_rows(new, past=past, key_valid=None if pad == "none" else valid, causal=causal)
        assert state["keys"] == [f"Key {j}" for j in range(n_key)], where
        assert len(state["rows"]) == new, where
        for i, row in enumerate(state["rows"]):
            assert row["visible"] == visible[i], where
            assert row["cells"] == [tools.mark(f) for f in visible[i]], where
            assert row["mask"] == [tools.short(m) for m in mask[i]], where
            assert row["wrong"] == wrong[i], where
            lost = [j for j in range(n_key) if visible[i][j] and not wrong[i][j]]
            assert row["lost"] == [j in lost for j in range(n_key)], where
            assert (row["lost_cached"], row["lost_new"]) == (
                sum(j < past for j in lost), sum(j >= past for j in lost)
            ), where
            assert row["empty"] == (not any(visible[i])), where
            assert row["label"] == f"行 {i}（绝对位置 {past + i}）", where
            assert row["sentence"] == explained[i]["sentence"], where
            assert row["lost_sentence"] == explained[i]["lost"], where
        assert state["status"].startswith(f"{new} 个查询行、{n_key} 个 Key，"), where
        empty = [i for i in range(new) if not any(visible[i])]
        if empty:
            with pytest.raises(ValueError) as error:
                att.masked_attention([[0.0]] * new, [[0.0]] * n_key, [[1.0]] * n_key, visible)
            assert f"第 {empty[0]} 个查询行" in str(error.value)
            assert str(error.value) in state["note"] and "empty_row=\"zero\"" in state["note"], where
            assert "整行被屏蔽" in state["status"], where
        else:
            assert state["note"] == "" and "每行都有可读的 Key" in state["status"], where


CJK_NEXT_TO_LATIN = re.compile(r"[\u4e00-\u9fff][A-Za-z0-9]|[A-Za-z0-9][\u4e00-\u9fff]")


def test_every_shown_text_spaces_chinese_from_latin_and_digits(data):
    texts = set(data["words"]["pad_options"]) | {w for w in data["words"].values() if isinstance(w, str)}
    for state in reachable(data):
        s = figs.explore_state(data, *state)
        texts |= {s["status"], s["lost_status"], s["note"]}
        texts |= {t for r in s["rows"] for t in (r["label"], r["wrong_label"], r["sentence"], r["lost_sentence"])}
    bad = sorted(t for t in texts if CJK_NEXT_TO_LATIN.search(t))
    assert bad == [], bad[:5]


def test_the_wrong_offset_only_loses_history_with_a_cache(data):
    # With a cache and the causal rule, every row loses keys; without a cache, none.
    for past, new, pad, count, causal in reachable(data):
        state = figs.explore_state(data, past, new, pad, count, causal)
        lost = sum(r["lost_cached"] + r["lost_new"] for r in state["rows"])
        if not causal or past == 0:
            assert lost == 0 and state["lost_status"] == "把行号当位置时一个也不少读。"
        elif pad == "none":
            assert lost == new * past  # every row loses exactly the past keys it should have read
            assert re.match(rf"把行号当位置时共少读 {lost} 个[：，]", state["lost_status"])


def test_the_data_is_small_and_plain(data):
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    assert json.loads(text) == data  # plain JSON: lists, dicts, strings, ints, booleans
    size = len(text.encode())
    assert size < 120_000, size
    assert len(zlib.compress(text.encode(), 9)) < 30_000
    # Compressed by structure: far fewer stored rows and sentences than rows shown.
    shown = sum(len(figs.explore_state(data, *s)["rows"]) for s in reachable(data))
    assert len(data["rows"]) < shown / 3 and len(data["sentences"]) < shown / 3


def test_the_words_take_the_cells_from_the_teaching_code(data):
    assert data["cells"] == [tools.mark(False), tools.mark(True)] == ["✗ 禁止", "✓ 允许"]
    assert data["mask_cells"] == [tools.short(0.0), tools.short(-math.inf)]
    assert data["words"]["mask"].endswith(f"加 {tools.short(-math.inf)}")


@settings(max_examples=40, deadline=None)
@given(past=st.integers(0, 4), new=st.integers(1, 4), front=st.integers(0, 8), causal=st.booleans())
def test_the_status_sentences_count_what_the_table_shows(past, new, front, causal):
    n_key = past + new
    front = min(front, n_key)
    valid = [j >= front for j in range(n_key)]
    facts = figs.visibility_facts(new, past=past, key_valid=valid, causal=causal)
    size, _, rest = figs.explore_status(facts).partition("，")
    assert [int(n) for n in re.findall(r"\d+", size)] == [new, n_key]
    empty = [i for i, row in enumerate(facts["visible"]) if not any(row)]
    named = re.findall(r"行 (\d+)（绝对位置 \d+）" if past else r"位置 (\d+)", rest)
    assert [int(n) for n in named] == empty
    assert rest.endswith("整行被屏蔽。" if empty else "每行都有可读的 Key。")
    lost = figs.lost_status(facts)
    cached = sum(facts["visible"][i][j] and not facts["row_index"][i][j] and j < past
                 for i in range(new) for j in range(n_key))
    fresh = sum(facts["visible"][i][j] and not facts["row_index"][i][j] and j >= past
                for i in range(new) for j in range(n_key))
    if cached and fresh:
        assert [int(n) for n in re.findall(r"\d+", lost)] == [cached + fresh, cached, fresh]
    elif cached or fresh:
        assert [int(n) for n in re.findall(r"\d+", lost)] == [cached + fresh]
        assert lost.endswith("全是缓存里的。" if cached else "全是本批新来的。")
    else:
        assert "一个也不少读" in lost
    note = figs.empty_row_note(facts)
    assert bool(note) == bool(empty)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((7, 1), "past 必须是 0、1、2、3、4、5、6 之一，收到 7"),
        ((0, 0), "new 必须是 1、2、3、4、5、6 之一，收到 0"),
        ((0, 1, "left", 1), "pad 必须是 none、front、end 之一"),
        ((0, 1, "front", 2), "count 必须是 0（没有 PAD）或 1 到 1，收到 2"),
        ((0, 1, "none", 1), "count 必须是 0（没有 PAD）"),
        ((0, 1, "none", 0, 1), "causal 必须是 True、False 之一，收到 1"),
        ((True, 1), "past 必须是"),
    ],
)
def test_a_state_outside_the_controls_is_a_clear_error(data, args, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        figs.explore_state(data, *args)


@pytest.mark.parametrize(
    ("args", "message"),
    [((4, "middle", 1), "pad 必须是"), ((4, "none", 2), "没有 PAD 时 count 必须是 0"),
     ((0, "front", 1), "n_key 必须是正整数"), ((3, "end", 0), "count 必须是 1 到 n_key = 3")],
)
def test_pad_valid_rejects_bad_input(args, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        figs.pad_valid(*args)


def test_pad_valid_uses_the_padding_rule():
    for n_key in range(1, 8):
        for count in range(1, n_key + 1):
            assert figs.pad_valid(n_key, "end", count) == att.key_padding(n_key - count, n_key)
            assert figs.pad_valid(n_key, "front", count) == valid_keys(n_key, "front", count)


def test_the_explore_data_rejects_bad_ranges():
    with pytest.raises(ValueError, match="max_past 必须是 0 到 9 之间的整数"):
        figs.f12_explore_states(max_past=-1)
