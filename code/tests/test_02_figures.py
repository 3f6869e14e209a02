"""Tests of code/02_figures.py: every sentence of F12 is checked against the tables of its own frame.

The frames are built for many inputs (not only the book's), and each explanation is read back
with its own small parser and compared with what the frame's table cells say. The parser here is
independent of the helpers that wrote the sentences: a sentence that claims a key list, a count
or a split into cached and new keys that its table does not show fails.
"""

from __future__ import annotations

import importlib
import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

figs = importlib.import_module("02_figures")
att = importlib.import_module("02_attention")

KEYS = r"Key \d+(?:–\d+|(?:、Key \d+)*)"
CJK_NEXT_TO_LATIN = re.compile(r"[\u4e00-\u9fff][A-Za-z0-9]|[A-Za-z0-9][\u4e00-\u9fff]")


def parse_keys(text: str) -> set[int]:
    span = re.fullmatch(r"Key (\d+)–(\d+)", text)
    if span:
        return set(range(int(span.group(1)), int(span.group(2)) + 1))
    assert re.fullmatch(r"Key \d+(?:、Key \d+)*", text), text
    return {int(j) for j in re.findall(r"\d+", text)}


def allowed_keys(row: list[dict]) -> set[int]:
    """The keys a table row marks allowed (its first cell is the row label)."""
    return {j for j, cell in enumerate(row[1:]) if "允许" in cell["text"]}


def texts(frame: dict):
    yield frame["condition"]
    yield frame["rule"]
    yield frame["explanation"]
    for table in frame["tables"]:
        yield table["title"]
        yield from table["header"]
        for row in table["rows"]:
            yield from (cell["text"] for cell in row)


def check_causal_frame(frame: dict) -> None:
    (table,) = frame["tables"]
    (current,) = [row for row in table["rows"] if row[0]["highlight"]]
    allowed = allowed_keys(current)
    forbidden = set(range(len(current) - 1)) - allowed
    said = re.search(rf"能读的是 ({KEYS})", frame["explanation"])
    assert said and parse_keys(said.group(1)) == allowed, frame["explanation"]
    later = re.search(rf"({KEYS}) 排在它后面", frame["explanation"])
    if forbidden:
        assert later and parse_keys(later.group(1)) == forbidden, frame["explanation"]
    else:
        assert later is None and "整行都允许" in frame["explanation"]
    if len(allowed) == 1:
        assert "也就是它自己" in frame["explanation"]


def check_score_frame(frame: dict) -> None:
    (table,) = frame["tables"]
    rows = {row[0]["text"]: row[1:] for row in table["rows"]}
    allowed = {j for j, c in enumerate(rows["可见性"]) if c["state"] == "allowed"}
    forbidden = set(range(len(rows["可见性"]))) - allowed
    open_w = [c["text"] for c in rows["不加 mask 的权重"]]
    masked_w = [c["text"] for c in rows["加 mask 的权重"]]
    text = frame["explanation"]
    if forbidden:
        head = re.match(rf"({KEYS}) 在位置 (\d+) 之后", text)
        assert head and parse_keys(head.group(1)) == forbidden
        took = re.search(r"分走 (.+?) 的权重", text).group(1).split("、")
        assert took == [open_w[j] for j in sorted(forbidden)]
        zero = re.search(r"权重恰好是 (.+?)，", text).group(1).split("、")
        assert zero == [masked_w[j] for j in sorted(forbidden)]
        again = re.search(rf"({KEYS}) 重新分到 (.+?)，", text)
        assert parse_keys(again.group(1)) == allowed
        assert again.group(2).split(" 与 ") == [masked_w[j] for j in sorted(allowed)]
    else:
        assert open_w == masked_w
        assert re.search(r"权重都是 (.+?)。", text).group(1).split("、") == masked_w


def check_cache_frame(frame: dict) -> None:
    right, wrong = frame["tables"]
    labels = [re.fullmatch(r"行 (\d+)（绝对位置 (\d+)）", row[0]["text"]) for row in right["rows"]]
    past = int(labels[0].group(2)) - int(labels[0].group(1))
    assert all(int(m.group(2)) - int(m.group(1)) == past for m in labels)
    text = frame["explanation"]
    assert re.search(r"缓存里已有 (\d+) 个位置", text).group(1) == str(past)
    assert re.search(r"新来的 (\d+) 个查询", text).group(1) == str(len(right["rows"]))
    any_lost, lost_self = False, False
    for i, (r_row, w_row) in enumerate(zip(right["rows"], wrong["rows"])):
        r_keys, w_keys = allowed_keys(r_row), allowed_keys(w_row)
        said = re.search(rf"行 {i} 能读 ({KEYS})", text)
        assert said and parse_keys(said.group(1)) == r_keys, text
        lost = r_keys - w_keys
        cached, new = {j for j in lost if j < past}, {j for j in lost if j >= past}
        claim = re.search(rf"行 {i} 少读 (\d+) 个：([^；。]*)", text)
        if not lost:
            assert claim is None
            continue
        any_lost, lost_self = True, lost_self or (past + i) in lost
        assert claim and int(claim.group(1)) == len(lost), text
        parts = claim.group(2)
        said_cached = re.search(rf"({KEYS}) 早已在缓存里", parts)
        said_new = re.search(rf"({KEYS}) 是本批新来的", parts)
        assert (parse_keys(said_cached.group(1)) if said_cached else set()) == cached, parts
        assert (parse_keys(said_new.group(1)) if said_new else set()) == new, parts
    if not any_lost:
        assert "少读" not in text.replace("一个 Key 也不少读", "") and "两张表完全相同" in text
    assert ("连查询自己的位置也读不到" in text) == lost_self
    assert ("丢掉了缓存里的历史" in text) == any(
        j < past for r, w in zip(right["rows"], wrong["rows"]) for j in allowed_keys(r) - allowed_keys(w)
    )


CONFIGS = list(itertools.product([0, 1, 3, 5], [1, 2, 4]))


@pytest.mark.parametrize("past, new", CONFIGS)
def test_every_f12_sentence_agrees_with_its_tables(past, new):
    frames = figs.f12_frames(past=past, new=new)
    for frame in frames[:-2]:
        check_causal_frame(frame)
    check_score_frame(frames[-2])
    check_cache_frame(frames[-1])
    assert frames[-1]["condition"] == f"带缓存：past = {past}，new = {new}"


@pytest.mark.parametrize(
    "n_positions, score_row, score_query",
    [(1, [0.5], 0), (2, [1.0, -1.0], 0), (3, [0.0, 1.0, 2.0], 2), (4, [3.0, 0.0, 1.0, 2.0], 1), (5, [0.0] * 5, 0)],
)
def test_causal_and_score_frames_agree_with_their_tables_for_other_inputs(n_positions, score_row, score_query):
    frames = figs.f12_frames(n_positions=n_positions, score_row=score_row, score_query=score_query)
    assert len(frames) == n_positions + 2
    for frame in frames[:n_positions]:
        check_causal_frame(frame)
    check_score_frame(frames[n_positions])


def test_the_checker_catches_the_old_false_sentence():
    """The sentence F12 once had: all lost keys called cached. The checker must reject it."""
    frame = figs.f12_frames()[-1]
    frame = {**frame, "explanation": re.sub(r"把行号当位置时.*", "把行号当位置时，行 0 少读 3 个：Key 1–3 早已在缓存里；"
                                             "行 1 少读 3 个：Key 2–4 早已在缓存里。", frame["explanation"])}
    with pytest.raises(AssertionError):
        check_cache_frame(frame)


@pytest.mark.parametrize("past, new", CONFIGS)
def test_generated_text_spaces_chinese_and_numbers(past, new):
    for frame in figs.f12_frames(past=past, new=new):
        for text in texts(frame):
            assert not CJK_NEXT_TO_LATIN.search(text), text


# -- facts and sentences on random tables ----------------------------------------------------------
@settings(max_examples=50, deadline=None)
@given(st.integers(0, 4), st.integers(1, 4), st.booleans(), st.data())
def test_facts_split_every_key_into_exactly_one_reason(past, n_query, causal, data):
    n_key = past + n_query
    valid = data.draw(st.lists(st.booleans(), min_size=n_key, max_size=n_key))
    facts = figs.visibility_facts(n_query, past=past, key_valid=valid, causal=causal)
    visible = att.visibility(n_query, n_key, past=past, key_valid=valid, causal=causal)
    for i, fact in enumerate(facts["rows"]):
        reasons = [fact["readable"], fact["future"], fact["pad"]]
        assert sorted(sum(reasons, [])) == list(range(n_key))
        assert fact["readable"] == [j for j in range(n_key) if visible[i][j]]
        assert fact["empty"] == (not fact["readable"])
        assert all(not valid[j] for j in fact["pad"])
        assert all(j > past + i for j in fact["future"]) and (causal or not fact["future"])
        # Under the row-index mistake the row reads keys 0 … i that are valid.
        lost = [j for j in fact["readable"] if j > i] if causal else []
        assert fact["lost_cached"] + fact["lost_new"] == lost
        assert all(j < past for j in fact["lost_cached"]) and all(j >= past for j in fact["lost_new"])
        sentence = figs.row_sentence(fact, past)
        assert not CJK_NEXT_TO_LATIN.search(sentence), sentence


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.data())
def test_the_pad_sentence_names_exactly_the_real_queries_that_changed(n, data):
    causal = data.draw(st.booleans())
    valid = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    before = figs.visibility_facts(n, causal=causal)
    after = figs.visibility_facts(n, key_valid=valid, causal=causal)
    sentence = figs.pad_change_sentence(before, after, valid)
    # Independently: a real query changed when some key it could read is PAD.
    table = att.visibility(n, n, causal=causal)
    changed = {i for i in range(n) if valid[i] and any(table[i][j] and not valid[j] for j in range(n))}
    named = set()
    for group in re.findall(r"位置 ([\d、]+) 因 PAD 规则不再读", sentence):
        named |= {int(p) for p in group.split("、")}
    assert named == changed, sentence
    empty = {i for i in range(n) if not valid[i] and not any(table[i][j] and valid[j] for j in range(n))}
    said_empty = re.search(r"PAD 查询位置 ([\d、]+) 整行被屏蔽", sentence)
    assert ({int(p) for p in said_empty.group(1).split("、")} if said_empty else set()) == empty


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: figs.f12_frames(score_row=[0.0, 1.0]), "score_row 必须有 n_positions = 3 个分数"),
        (lambda: figs.f12_frames(score_query=3), "score_query 必须是 0 到 2 之间的整数"),
        (lambda: figs.f12_frames(score_row=[0.0, float("nan"), 1.0]), r"values\[1\]"),
        (lambda: figs.f12_frames(n_positions=0), "n_positions 必须是不小于 1 的整数"),
        (lambda: figs.f12_frames(past=-1), "past 必须是不小于 0 的整数"),
        (lambda: figs.f12_frames(new=0), "new 必须是不小于 1 的整数"),
        (lambda: figs.f12_frames(new=True), "new 必须是不小于 1 的整数"),
        (lambda: figs.visibility_facts(0), "n_query 必须是不小于 1 的整数"),
        (lambda: figs.keys_text([]), "js 不能为空"),
        (lambda: figs.pad_change_sentence(figs.visibility_facts(2), figs.visibility_facts(2), [True]), "行数必须相同"),
    ],
)
def test_bad_input_gets_a_value_error_that_names_it(call, words):
    with pytest.raises(ValueError, match=words):
        call()
