"""Tests of book/chapter/mask.py: every sentence against its own table, F12's frames and explore data, the conventions table.

The frames are built for many inputs (not only the book's). Each frame's facts are read from its own
table cells (which keys a row allows, which weights it prints), independently of the helpers that wrote
the sentence; then each word the data chooses is checked both ways: the key list the table shows is
named, a clause that only some data earn (「也就是它自己」, 「早已在缓存里」, 「整行被屏蔽」) appears exactly
when its fact holds. The page's fixed sentences are checked where they are made: the book side stops
the build (``s.holds``, naming the fact) when the fact under one of them is false, on the page's data
or on other data (the teaching constants monkeypatched).

The explore panel on the mask page only looks states up in ``f12_explore_states()``; what it shows in
every state the controls can reach is read in the browser and compared with what ``02_attention``
computes (tests/test_explore.py). Here: the data's ranges, size and words, and the status sentences
and the policy note it stores, on other inputs. The conventions table follows the stored observations; the two causal
alignments are compared cell by cell with the book's offsets. No build, no browser.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import json
import math
import re
import sys
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chapter import conventions, fmt, mask_figure, pitfalls
from chapter import mask as page

# code/tests/reference.py (the shared bad-input fuzz) is not on the path for tests/ by default.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "code" / "tests"))
from reference import fuzz_failures  # noqa: E402

att = importlib.import_module("02_attention")
ex = importlib.import_module("02_exercises_mask")
BIB = Path(__file__).resolve().parents[1] / "book" / "references.bib"

CJK_NEXT_TO_LATIN = re.compile(r"[\u4e00-\u9fff][A-Za-z0-9]|[A-Za-z0-9][\u4e00-\u9fff]")
keys_text = page.keys_text
# After a list of keys a sentence goes on with one of these (never with 、 or a digit: the list is whole).
AFTER = "，；：。 （"


def names(text: str, before: str, keys: list[int], after: str = AFTER) -> bool:
    """Whether ``text`` names exactly ``keys`` right after ``before`` (the whole list, not a prefix)."""
    said = f"{before}{keys_text(keys)}"
    return any(said + end in text for end in after) or text.endswith(said)


def test_keys_are_named_as_a_span_or_a_list():
    # the formatter the sentences name keys with: a run of three or more as a span, else a list
    assert keys_text([1, 2, 3]) == "Key 1–3" and keys_text([1, 3]) == "Key 1、Key 3"
    assert keys_text([4]) == "Key 4" and keys_text([0, 1]) == "Key 0、Key 1"
    assert names("能读的是 Key 0、Key 1；", "能读的是 ", [0, 1])
    assert not names(
        "能读的是 Key 0、Key 1；", "能读的是 ", [0]
    )  # a prefix of the list is not the list


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


def check_causal_frame(frame: dict, first_forbidding: bool) -> None:
    (table,) = frame["tables"]
    (current,) = [row for row in table["rows"] if row[0]["highlight"]]
    position = table["rows"].index(current)
    allowed = sorted(allowed_keys(current))
    later = sorted(set(range(len(current) - 1)) - set(allowed))
    text = frame["explanation"]
    assert names(text, f"位置 {position} 能读的是 ", allowed), text
    if later:
        assert names(text, "；", later, " ") and f"{keys_text(later)} 排在它后面" in text, text
        assert "整行都允许" not in text
    else:
        assert "排在它后面" not in text and "整行都允许" in text, text
    assert ("也就是它自己" in text) == (len(allowed) == 1), text
    assert ("偷看答案" in text) == first_forbidding, text


def check_score_frame(frame: dict, query: int) -> None:
    (table,) = frame["tables"]
    rows = {row[0]["text"]: row[1:] for row in table["rows"]}
    allowed = [j for j, c in enumerate(rows["可见性"]) if c["state"] == "allowed"]
    forbidden = [j for j, c in enumerate(rows["可见性"]) if c["state"] != "allowed"]
    open_w = [c["text"] for c in rows["不加 mask 的权重"]]
    masked_w = [c["text"] for c in rows["加 mask 的权重"]]
    text = frame["explanation"]
    if forbidden:
        assert text.startswith(f"{keys_text(forbidden)} 在位置 {query} 之后"), text
        assert f"分走 {'、'.join(open_w[j] for j in forbidden)} 的权重" in text, text
        assert f"权重恰好是 {'、'.join(masked_w[j] for j in forbidden)}，" in text, text
        assert (
            f"{keys_text(allowed)} 重新分到 {' 与 '.join(masked_w[j] for j in allowed)}，" in text
        )
        assert "权重都是" not in text
    else:
        assert open_w == masked_w and "之后没有 Key" in text and "分走" not in text
        assert f"权重都是 {'、'.join(masked_w)}。" in text, text


def check_cache_frame(frame: dict, past: int) -> None:
    right, wrong = frame["tables"]
    labels = [row[0]["text"] for row in right["rows"]]
    assert labels == [f"行 {i}（绝对位置 {past + i}）" for i in range(len(labels))]
    text = frame["explanation"]
    assert f"缓存里已有 {past} 个位置，新来的 {len(labels)} 个查询" in text, text
    assert ("绝对位置却是" in text) == bool(past) and ("绝对位置也是" in text) == (not past)
    any_lost = False
    for i, (r_row, w_row) in enumerate(zip(right["rows"], wrong["rows"])):
        r_keys = allowed_keys(r_row)
        lost = sorted(r_keys - allowed_keys(w_row))
        cached = [j for j in lost if j < past]
        new = [j for j in lost if j >= past]
        assert names(text, f"行 {i} 能读 ", sorted(r_keys)), text
        assert (f"行 {i} 少读 " in text) == bool(lost), text
        if not lost:
            continue
        any_lost = True
        assert f"行 {i} 少读 {len(lost)} 个：" in text, text
        part = text.split(f"行 {i} 少读 {len(lost)} 个：")[1].split("；")[0]
        assert ("早已在缓存里" in part) == bool(cached), part
        assert ("是本批新来的" in part) == bool(new), part
        if cached:
            assert part.startswith(f"{keys_text(cached)} 早已在缓存里"), part
        if new:
            assert names(part, "，" if cached else "", new, " ") and "是本批新来的" in part, part
        own = past + i in new
        assert ("（它自己）" in part) == (own and new == [past + i]), part
        assert ("（含它自己）" in part) == (own and len(new) > 1), part
    assert ("两张表完全相同" in text) == (not any_lost), text
    # The moral of the wrong offset is said once, in the cache section's text, not again in the frame.
    assert "不会泄漏未来" not in text


CONFIGS = list(itertools.product([0, 1, 3, 5], [1, 2, 4]))


def plant_f12(monkeypatch, **inputs):
    """Other F12 inputs than the page's: ``mask``'s constants (and ``SCORE_QUERY``) replaced."""
    for name, value in inputs.items():
        module = mask_figure if name == "SCORE_QUERY" else page
        monkeypatch.setattr(module, name, value)


@pytest.mark.parametrize("past, new", CONFIGS)
def test_every_f12_sentence_agrees_with_its_tables(monkeypatch, past, new):
    plant_f12(monkeypatch, PAST=past, NEW=new)
    frames = mask_figure.f12_frames()
    for n, frame in enumerate(frames[:-2]):
        check_causal_frame(frame, first_forbidding=n == 0)
    check_score_frame(frames[-2], mask_figure.SCORE_QUERY)
    check_cache_frame(frames[-1], past)
    assert frames[-1]["condition"] == f"带缓存：past = {past}，new = {new}"


@pytest.mark.parametrize(
    "n_positions, score_row, score_query",
    [
        (1, [0.5], 0),
        (2, [1.0, -1.0], 0),
        (3, [0.0, 1.0, 2.0], 2),
        (4, [3.0, 0.0, 1.0, 2.0], 1),
        (5, [0.0] * 5, 0),
    ],
)
def test_causal_and_score_frames_agree_with_their_tables_for_other_inputs(
    monkeypatch, n_positions, score_row, score_query
):
    plant_f12(monkeypatch, N_POSITIONS=n_positions, SCORE_ROW=score_row, SCORE_QUERY=score_query)
    frames = mask_figure.f12_frames()
    assert len(frames) == n_positions + 2
    for n, frame in enumerate(frames[:n_positions]):
        check_causal_frame(frame, first_forbidding=n == 0 and n_positions > 1)
    check_score_frame(frames[n_positions], score_query)


@pytest.mark.parametrize("n_positions", [2, 3, 5])
def test_no_long_frame_sentence_is_said_twice(monkeypatch, n_positions):
    """Frames 1 and 2 once shared the whole reason for the causal rule; it is given once now."""
    plant_f12(monkeypatch, N_POSITIONS=n_positions, SCORE_ROW=[0.0] * n_positions, SCORE_QUERY=0)
    frames = mask_figure.f12_frames()
    sentences = [
        s for f in frames for s in re.split(r"(?<=[。！？])", f["explanation"]) if len(s) >= 25
    ]
    assert len(sentences) == len(set(sentences)), sentences
    assert sum("偷看答案" in f["explanation"] for f in frames) == 1


def test_the_checker_catches_the_old_false_sentence():
    """The sentence F12 once had: all lost keys called cached. The checker must reject it."""
    frame = mask_figure.f12_frames()[-1]
    frame = {
        **frame,
        "explanation": re.sub(
            r"把行号当位置时.*",
            "把行号当位置时，行 0 少读 3 个：Key 1–3 早已在缓存里；"
            "行 1 少读 3 个：Key 2–4 早已在缓存里。",
            frame["explanation"],
        ),
    }
    with pytest.raises(AssertionError):
        check_cache_frame(frame, page.PAST)


@pytest.mark.parametrize("past, new", CONFIGS)
def test_generated_text_spaces_chinese_and_numbers(monkeypatch, past, new):
    plant_f12(monkeypatch, PAST=past, NEW=new)
    for frame in mask_figure.f12_frames():
        for text in texts(frame):
            assert not CJK_NEXT_TO_LATIN.search(text), text


# -- facts and sentences on random tables ----------------------------------------------------------
@settings(max_examples=50, deadline=None)
@given(st.integers(0, 4), st.integers(1, 4), st.booleans(), st.data())
def test_facts_split_every_key_into_exactly_one_reason(past, n_query, causal, data):
    n_key = past + n_query
    valid = data.draw(st.lists(st.booleans(), min_size=n_key, max_size=n_key))
    facts = page.visibility_facts(n_query, past=past, key_valid=valid, causal=causal)
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
        assert all(j < past for j in fact["lost_cached"]) and all(
            j >= past for j in fact["lost_new"]
        )
        sentence = page.row_sentence(fact, past)
        assert not CJK_NEXT_TO_LATIN.search(sentence), sentence


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.data())
def test_the_pad_sentence_names_exactly_the_real_queries_that_changed(n, data):
    causal = data.draw(st.booleans())
    valid = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    before = page.visibility_facts(n, causal=causal)
    after = page.visibility_facts(n, key_valid=valid, causal=causal)
    sentence = page.pad_change_sentence(before, after, valid)
    # Independently: a real query changed when some key it could read is PAD; grouped by what it lost.
    table = att.visibility(n, n, causal=causal)
    groups: dict = {}
    for i in range(n):
        gone = [j for j in range(n) if table[i][j] and not valid[j]]
        if valid[i] and gone:
            groups.setdefault(tuple(gone), []).append(i)
    for gone, positions in groups.items():
        said = f"{page.positions_text(positions)} 因 PAD 规则不再读 {keys_text(list(gone))}"
        assert any(said + end in sentence for end in "；。"), sentence
    assert sentence.count("因 PAD 规则不再读") == len(groups), sentence
    assert ("没有哪个真实查询因 PAD 规则而改变" in sentence) == (not groups), sentence
    empty = [
        i for i in range(n) if not valid[i] and not any(table[i][j] and valid[j] for j in range(n))
    ]
    assert ("整行被屏蔽" in sentence) == bool(empty), sentence
    if empty:
        assert f"PAD 查询{page.positions_text(empty)} 整行被屏蔽" in sentence, sentence


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: page.visibility_facts(0), "n_query 必须是不小于 1 的整数"),
        (lambda: page.keys_text([]), "js 不能为空"),
        (
            lambda: page.pad_change_sentence(
                page.visibility_facts(2), page.visibility_facts(2), [True]
            ),
            "行数必须相同",
        ),
    ],
)
def test_bad_input_gets_a_value_error_that_names_it(call, words):
    with pytest.raises(ValueError, match=words):
        call()


# -- the explore panel's data ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def data():
    return mask_figure.f12_explore_states()


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


def test_the_panels_words_space_chinese_from_latin_and_digits(data):
    # The sentences the panel shows in each state are checked in the browser (tests/test_explore.py).
    texts = set(data["words"]["pad_options"]) | {
        w for w in data["words"].values() if isinstance(w, str)
    }
    texts |= set(data["wrong_labels"]) | {label for labels in data["labels"] for label in labels}
    bad = sorted(t for t in texts if CJK_NEXT_TO_LATIN.search(t))
    assert bad == [], bad[:5]


def test_the_wrong_offset_only_loses_history_with_a_cache(data):
    # With a cache and the causal rule, every row loses keys; without a cache, none.
    for past, new, pad, count, causal in reachable(data):
        valid = None if pad == "none" else valid_keys(past + new, pad, count)
        facts = page.visibility_facts(new, past=past, key_valid=valid, causal=causal)
        lost = sum(len(r["lost_cached"]) + len(r["lost_new"]) for r in facts["rows"])
        said = mask_figure.lost_status(facts)
        if not causal or past == 0:
            assert lost == 0 and said == "把行号当位置时一个也不少读。"
        elif pad == "none":
            assert lost == new * past  # every row loses exactly the past keys it should have read
            assert said.startswith(f"把行号当位置时共少读 {lost} 个")


def test_the_data_is_small_and_plain(data):
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    assert json.loads(text) == data  # plain JSON: lists, dicts, strings, ints, booleans
    size = len(text.encode())
    assert size < 120_000, size
    assert len(zlib.compress(text.encode(), 9)) < 30_000
    # Compressed by structure: far fewer stored rows and sentences than rows shown (new in each state).
    shown = sum(new for _, new, *_ in reachable(data))
    assert len(data["rows"]) < shown / 3 and len(data["sentences"]) < shown / 3


def test_the_words_take_the_cells_from_the_teaching_code(data):
    assert data["cells"] == [fmt.mark(False), fmt.mark(True)] == ["✗ 禁止", "✓ 允许"]
    assert data["mask_cells"] == [fmt.short(0.0), fmt.short(-math.inf)]
    assert data["words"]["mask"].endswith(f"加 {fmt.short(-math.inf)}")


@settings(max_examples=40, deadline=None)
@given(past=st.integers(0, 4), new=st.integers(1, 4), front=st.integers(0, 8), causal=st.booleans())
def test_the_status_sentences_count_what_the_table_shows(past, new, front, causal):
    n_key = past + new
    front = min(front, n_key)
    valid = [j >= front for j in range(n_key)]
    facts = page.visibility_facts(new, past=past, key_valid=valid, causal=causal)
    status = mask_figure.explore_status(facts)
    assert status.startswith(f"{new} 个查询行、{n_key} 个 Key，"), status
    empty = [i for i, row in enumerate(facts["visible"]) if not any(row)]
    labels = [f"行 {i}（绝对位置 {past + i}）" if past else f"位置 {i}" for i in empty]
    if empty:
        assert status.endswith(f"{page.gap('、'.join(labels))}整行被屏蔽。"), status
    assert ("每行都有可读的 Key" in status) == (not empty), status
    lost = mask_figure.lost_status(facts)
    cached = sum(
        facts["visible"][i][j] and not facts["row_index"][i][j] and j < past
        for i in range(new)
        for j in range(n_key)
    )
    fresh = sum(
        facts["visible"][i][j] and not facts["row_index"][i][j] and j >= past
        for i in range(new)
        for j in range(n_key)
    )
    # each word the counts choose, checked both ways
    assert lost.startswith(f"把行号当位置时共少读 {cached + fresh} 个") == bool(cached + fresh)
    assert (f"：缓存里的 {cached} 个，本批新来的 {fresh} 个。" in lost) == bool(cached and fresh)
    assert lost.endswith("，全是缓存里的。") == bool(cached and not fresh), lost
    assert lost.endswith("，全是本批新来的。") == bool(fresh and not cached), lost
    assert ("一个也不少读" in lost) == (not cached + fresh), lost
    note = mask_figure.empty_row_note(facts)
    assert bool(note) == bool(empty)
    if empty:  # the book's policy: the error masked_attention raises, and empty_row="zero"
        with pytest.raises(ValueError) as error:
            att.masked_attention([[0.0]] * new, [[0.0]] * n_key, [[1.0]] * n_key, facts["visible"])
        assert f"第 {empty[0]} 个查询行" in str(error.value)
        assert str(error.value) in note and 'empty_row="zero"' in note, note


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((4, "middle", 1), "pad 必须是"),
        ((4, "none", 2), "没有 PAD 时 count 必须是 0"),
        ((0, "front", 1), "n_key 必须是不小于 1 的整数"),
        ((3, "end", 0), "count 必须是 1 到 n_key = 3"),
    ],
)
def test_pad_valid_rejects_bad_input(args, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        mask_figure.pad_valid(*args)


def test_pad_valid_uses_the_padding_rule():
    for n_key in range(1, 8):
        for count in range(1, n_key + 1):
            assert mask_figure.pad_valid(n_key, "end", count) == att.key_padding(
                n_key - count, n_key
            )
            assert mask_figure.pad_valid(n_key, "front", count) == valid_keys(n_key, "front", count)


# -- the two causal alignments ---------------------------------------------------------------------


@pytest.mark.parametrize("past", [0, 1, 3, 5])
@pytest.mark.parametrize("new", [1, 2, 4])
def test_bottom_right_is_the_books_offset_and_top_left_the_wrong_one(past, new, monkeypatch):
    n_key = past + new
    assert page.causal_table(new, n_key, "bottom-right") == att.visibility(new, n_key, past=past)
    assert page.causal_table(new, n_key, "top-left") == att.row_index_visibility(new, n_key)
    if past:  # every row of the top-left table misses exactly the cached keys
        monkeypatch.setattr(page, "PAST", past)
        monkeypatch.setattr(page, "NEW", new)
        values = page.conventions_section().values
        assert values["align_lost"] == str(past * new)


# -- the page's sections: sentences and tables from the same data, on other inputs -------------------
@pytest.mark.parametrize("past, new", [(1, 2), (2, 3), (3, 4)])
def test_the_checks_facts_name_what_the_checks_table_shows(past, new, monkeypatch):
    monkeypatch.setattr(page, "PAST", past)
    monkeypatch.setattr(page, "NEW", new)
    values = page.checks_section().values
    rows = {r[0]: r[1:] for r in values["tbl_checks"].rows}
    assert list(rows) == list(page.PLANS)
    open_, right, wrong = (rows[plan] for plan in page.PLANS)
    # the core's sentence: each algorithm's output at the first new position, before and after the change
    assert (values["check_open"], values["check_open_probed"]) == (open_[0], open_[1])
    assert values["check_right"] == right[0] == right[1] and values["check_wrong"] == wrong[0]
    # what the fixed sentences say, read from the table: only the open one leaks; only the right one
    # equals the reference (the last column names the positions that differ from it)
    assert [r[2] for r in (open_, right, wrong)] == ["是（泄漏）", "否", "否"]
    assert right[4] == "一致" and right[0] == values["ref_first"] and right[3] == values["ref_last"]
    assert wrong[4].startswith(f"位置 {past}") and wrong[4].endswith("不同")
    assert wrong[0] != values["ref_first"]


def test_the_checks_are_the_check_functions_on_the_three_tables():
    # The section runs the page's checks (defined once): its table is what those functions return.
    n = page.PAST + page.NEW
    q = page.LEAK_Q[:n]
    v = [[float(j + 1)] for j in range(n)]

    def wrong(q_new, k, values):
        return att.masked_attention(q_new, k, values, att.row_index_visibility(len(q_new), n))[1]

    full = page.recompute_check(wrong, q, q, v, page.PAST)
    assert full["differ"] and full["reference"] == att.attention(q, q, v)[1][page.PAST :]
    rows = page.checks_section().values["tbl_checks"].rows
    row = next(r for r in rows if r[0] == page.PLANS[2])
    assert row[5] == page.positions_text([page.PAST + i for i in full["differ"]]) + " 不同"


@pytest.mark.parametrize(
    "scores, visible",
    [
        ([2.0, 0.0, 1.0], [True, True, False]),
        ([1.0, 3.0], [True, True]),
        ([0.0, 0.0, 5.0], [False, True, True]),
    ],
)
def test_the_row_sentence_compares_with_the_softmax_of_the_visible_scores(scores, visible):
    steps = ex.masked_softmax_steps(scores, visible)
    kept = att.softmax([x for x, ok in zip(scores, visible) if ok])
    # masking a key equals removing it from the row: the same weights (what the solution's sentence says)
    assert [fmt.fmt(w) for w in kept] == [
        fmt.fmt(w) for w, ok in zip(steps["weights"], visible) if ok
    ]


def test_the_exercise_facts_are_the_solutions():
    values = page.exercises().values
    c3 = ex.decoding_checks()
    kept = [x for x, ok in zip(ex.SCORES, ex.VISIBLE) if ok]
    assert values["ex2_kept"] == page.row_text(kept)
    assert values["ex2_kept_n"] == page.count_words(len(kept))
    assert values["ex2_plain"] == "[" + ", ".join(fmt.fmt(w) for w in att.softmax(kept)) + "]"
    # the solution's steps subtract the row's maximum, as softmax does (and the scaling page teaches)
    steps = {row[0]: row[1:] for row in values["ex2_steps"].rows}
    assert "减去最大值" in steps and values["ex2_max"] == fmt.fmt(max(ex.SCORES[:2]))
    # the solution's fixed sentence: both ways pass 不泄漏, only 与整段重算一致 catches way B
    assert c3["passed"] == ["不泄漏"] and c3["caught_by"] == ["与整段重算一致"]


def test_the_exercise_sentence_stops_the_build_when_its_fact_changes(monkeypatch):
    # Without a cache both ways pass both checks: the solution's sentence would be false.
    monkeypatch.setattr(ex, "decoding_checks", functools.partial(ex.decoding_checks, 0, 3))
    with pytest.raises(ValueError, match="only_recompute_catches_b"):
        page.exercises()


@pytest.mark.parametrize("past, new, pad", [(0, 2, 1), (2, 3, 1), (3, 2, 4), (1, 1, 0)])
def test_the_exercise_sentences_read_the_exercise_table(past, new, pad, monkeypatch):
    monkeypatch.setattr(ex, "PAST", past)
    monkeypatch.setattr(ex, "NEW", new)
    monkeypatch.setattr(ex, "PAD_FRONT", pad)
    table = ex.pad_cache_table(past, new, pad)
    sentences = str(page.exercises().values["ex1_sentences"]).splitlines()
    assert len(sentences) == len(table["visible"])
    for i, (sentence, row) in enumerate(zip(sentences, table["visible"])):
        readable = [j for j, ok in enumerate(row) if ok]
        pad_keys = [j for j in range(pad) if j <= past + i]  # PAD the causal rule alone would allow
        if readable:
            assert names(sentence, "可读 ", readable), sentence
        assert ("可读 " in sentence) == bool(readable), sentence
        assert ("整行被屏蔽" in sentence) == (not readable), sentence
        said_pad = (
            f"{keys_text(pad_keys)} 是 PAD" in sentence if pad_keys else "是 PAD" not in sentence
        )
        assert said_pad, sentence


def test_the_hand_row_is_a_masked_row_and_adds_up():
    values = page.demo_section().values  # the first row with two readable keys and a forbidden one
    columns = dict(zip(values["tbl_hand"].header, zip(*values["tbl_hand"].rows)))
    steps = [row[0] for row in values["tbl_hand"].rows]
    assert values["hand_row"] == "1" and values["hand_forbidden"] == "Key 2"
    # every step is row_steps', the function the page teaches: the maximum subtracted before exp
    row_steps = att.row_steps(att.DEMO_Q[1], att.DEMO_K, att.DEMO_V, att.visibility(3, 3)[1])
    assert steps[:4] == ["分数（取自分数表）", "加 mask", "减去最大值", "exp"]
    assert values["hand_max"] == fmt.fmt(row_steps["max"])
    assert values["hand_total"] == fmt.fmt(row_steps["total"]) == fmt.fmt(sum(row_steps["exps"]))
    masked = columns["Key 2"]
    assert masked[steps.index("加 mask")] == "−∞" and masked[steps.index("exp")] == "0.0000"
    assert masked[steps.index("权重 = exp ÷ 总和")] == "0.0000"
    assert max(fmt.printed(x) for x in values["tbl_hand"].rows[2][1:3]) == 0.0
    total = sum(fmt.printed(x) for x in values["hand_sum"].split(" + "))
    assert values["hand_equals"] == fmt.equals(total, fmt.printed(values["hand_output"]))


def demo_inputs(monkeypatch, q, v):
    """The demo's Q = K and V replaced by other data (the section reads the teaching constants)."""
    monkeypatch.setattr(att, "DEMO_Q", q)
    monkeypatch.setattr(att, "DEMO_K", q)
    monkeypatch.setattr(att, "DEMO_V", v)


def test_the_hand_section_on_other_data_stops_at_the_sentence_it_cannot_say(monkeypatch):
    # Equal scores: the hand row's weights 0.5 and 0.5 print exactly, so the page's sentence
    # 「……比精确的输出差一点」 would be false there.
    q = [[0.0, 0.0]] * 3
    demo_inputs(monkeypatch, q, [[2.0], [4.0], [6.0]])
    with pytest.raises(ValueError, match="printed_weights_miss_the_output"):
        page.demo_section()
    # A row whose printed weights miss the output: the section goes through, with = or ≈ as printed.
    q = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    demo_inputs(monkeypatch, q, [[10.0], [20.0], [70.0]])
    values = page.demo_section().values
    total = sum(fmt.printed(x) for x in values["hand_sum"].split(" + "))
    assert values["hand_equals"] == fmt.equals(total, fmt.printed(values["hand_output"]))


def test_the_left_padding_sections_on_other_padding(monkeypatch):
    valid = [False, True, True, True, True]
    monkeypatch.setattr(page, "LEFT_VALID", valid)
    left = page.padding_section().values
    assert left["left_pad_keys"] == "Key 0" and left["left_real_keys"] == "Key 1–4"
    heads = [row[0] for row in left["tbl_left_weights"].rows]
    assert heads[0] == "绝对位置 0（整行被屏蔽）" and all("屏蔽" not in h for h in heads[1:])
    assert "不再读 Key 0" in left["left_change"]
    assert left["enc_valid"] == "4" and left["enc_real_keys"] == "Key 0–3"
    # With one PAD in front no key is blocked by both rules in the fully masked row: the page's
    # sentence about the doubled cell would be false, and the section says which fact.
    assert ex.empty_row_in_dtype(page.LEFT_Q, valid, "float16")["doubled"] == []
    with pytest.raises(ValueError, match="two_masks_weight_zero"):
        page.empty_rows_section()


def test_the_gap_section_is_the_seeds_softmax_only(monkeypatch):
    monkeypatch.setattr(page, "SCORE_ROW", (1.0, -1.0, 0.5))
    values = page.observe_section().values
    p = att.softmax([1.0, -1.0, 0.5])
    assert [values[f"p{j}"] for j in range(3)] == [fmt.fmt(x) for x in p]
    # the causal-against-open table only: the temperature table is the scaling page's
    assert [name for name, x in values.items() if isinstance(x, fmt.Table)] == [
        "tbl_causal_vs_open"
    ]


# -- the big negative number in other dtypes (numpy) ------------------------------------------------
@pytest.mark.parametrize("dtype", ex.DTYPES)
def test_the_dtype_paragraph_is_true_in_float16_only(dtype, monkeypatch):
    # The page's paragraph says −1e9 is −∞ and the row NaN: true in float16, false in the others,
    # where the section stops with the fact named instead of printing a false sentence.
    monkeypatch.setattr(ex, "DTYPES", (dtype, *(d for d in ex.DTYPES if d != dtype)))
    if dtype == "float16":
        values = page.empty_rows_section().values
        assert values["dtype_twice"] == "−∞" and values["dtype_doubled_keys"] == "Key 1"
        assert "−∞" in values["tbl_dtype"].rows[2][1] and values["dtype_doubled_weight"] == "0.0000"
    else:
        with pytest.raises(ValueError, match="big_is_inf_weights_nan"):
            page.empty_rows_section()


def test_the_big_negative_number_added_follows_the_scores_in_float64_only():
    # The depth paragraph: added (not put in place), −1e9 keeps the scores apart in float64 and
    # rounds them together in float32; the row reads forbidden keys either way.
    wide = ex.empty_row_in_dtype(page.LEFT_Q, page.LEFT_VALID, "float64")["added"]
    narrow = ex.empty_row_in_dtype(page.LEFT_Q, page.LEFT_VALID, "float32")["added"]
    assert len(set(wide)) > 1 and len(set(narrow)) == 1 and math.isclose(sum(wide), 1.0)
    assert page.empty_rows_section().values["policy_added64"] == fmt.slashed(wide)


def test_the_big_negative_bullet_compares_the_next_layer_it_shows():
    values = page.empty_rows_section().values
    rows = {row[0]: row for row in values["tbl_policies"].rows}
    big = next(r for name, r in rows.items() if "大负数" in name)
    zero = next(r for name, r in rows.items() if "置零" in name)
    assert big[4] == zero[4]  # the page's sentence 「它没有传开」
    assert (values["policy_pad_rows"], values["policy_real_rows"]) == ("位置 0、1", "位置 2、3、4")


def test_the_gpu_sentence_stops_the_build_once_a_cuda_observation_is_recorded(monkeypatch):
    seen = conventions.observed()
    page.conventions_section()  # CPU only: the page's sentence holds
    monkeypatch.setattr(page, "observed", lambda: {**seen, "cuda": seen["cpu"]})
    with pytest.raises(ValueError, match="observed_on_cpu_only"):
        page.conventions_section()


def test_the_cache_sentence_stops_the_build_when_nothing_cached_is_lost(monkeypatch):
    # 「丢掉了缓存里的部分历史」: with one cached position the row-index table loses only new keys.
    facts = page.visibility_facts(2, past=1)
    assert not any(r["lost_cached"] for r in facts["rows"])
    assert all(r["position"] in r["lost_new"] for r in facts["rows"])
    page.cache_section()
    monkeypatch.setattr(page, "PAST", 1)
    with pytest.raises(ValueError, match="row_index_loses_history_and_itself"):
        page.cache_section()


def test_every_section_glues_plain_values():
    for section in (
        page.figure_inputs,
        page.demo_section,
        page.padding_section,
        page.conventions_section,
        page.empty_rows_section,
        page.cache_section,
        page.checks_section,
        page.observe_section,
        page.exercises,
    ):
        for name, value in section().values.items():
            assert re.fullmatch(r"[a-z][a-z0-9_]*", name), name
            assert isinstance(value, (str, int, fmt.Table)), (section.__name__, name)
            if isinstance(value, fmt.Table):
                assert all(len(row) == len(value.header) for row in value.rows), name
            cells = (
                [c for row in value.rows for c in row]
                if isinstance(value, fmt.Table)
                else [str(value)]
            )
            if name not in (
                "ex4_doctest",
                "empty_row_error",
            ):  # code as typed keeps its ASCII minus
                assert not any(re.search(r"-\d|-∞", c) for c in cells), (
                    name,
                    cells,
                )  # one minus sign, U+2212


def test_the_float16_sentences_say_what_numpy_and_pytorch_did(monkeypatch):
    # Review r-mask 2: numpy casts −1e9 to −∞ in float16, PyTorch's masked_fill refuses it (the pitfalls
    # page's record); the section stops with the fact named when the record says otherwise.
    record = pitfalls.torch_record()
    values = page.empty_rows_section().values
    fills = record["decode_loop"]["finite_fills"]
    assert values["torch_fill_error"] == fills["float16_masked_fill_error"] != "ran"
    assert values["torch_fill_where"] == f"PyTorch {record['torch']}，CPU"
    ran = {**fills, "float16_masked_fill_error": "ran"}
    monkeypatch.setattr(
        pitfalls, "torch_record", lambda: {**record, "decode_loop": {"finite_fills": ran}}
    )
    with pytest.raises(ValueError, match="torch_fill_fails_tensor_inf"):
        page.empty_rows_section()


def test_the_added_big_negative_sentence_stops_the_build_for_another_number(monkeypatch):
    # −1e4 added to these scores stays apart from them in float32 too: the page's sentence on the
    # added number would be false, and the section names its fact.
    monkeypatch.setattr(page, "BIG", -1e4)
    with pytest.raises(ValueError, match="big_added_follows_scores_in_float64_only"):
        page.empty_rows_section()


# -- bad input: the builders answer with a ValueError that names the argument, and never hang -------
def causal_outputs(q, k, v):
    """The teaching code's causal attention as the mask page's checks call an attention."""
    return att.attention(q, k, v)[1]


CALLS = {  # a valid call of each public builder whose arguments are plain values
    page.keys_text: {"js": [0, 1]},
    page.positions_text: {"ps": [0, 1]},
    page.visibility_facts: {
        "n_query": 2,
        "past": 1,
        "key_valid": [True, True, True],
        "causal": True,
    },
    page.count_words: {"n": 2},
    mask_figure.pad_valid: {"n_key": 4, "pad": "front", "count": 1},
    page.same_row: {"a": [1.0, math.nan], "b": [1.0, math.nan]},
    page.after_query: {"n_query": 2, "n_key": 3, "past": 1},
    page.pad_keys: {"key_valid": [False, True], "n_query": 2},
    page.leak_probe: {
        "run": causal_outputs,
        "q": att.DEMO_Q,
        "k": att.DEMO_K,
        "v": att.DEMO_V,
        "forbidden": page.after_query(3, 3),
        "poison": 100.0,
    },
    page.weights_check: {"weights": [[1.0, 0.0]], "visible": [[True, False]]},
}


def test_the_exercise_that_says_standard_library_only_calls_nothing_else():
    """Exercise 4 says 只用 Python 标准库: its reference solution imports nothing and calls no other module."""
    import ast
    import builtins
    import inspect

    text = (Path(__file__).resolve().parents[1] / "book" / "ch02" / "mask.md").read_text(
        encoding="utf-8"
    )
    blocks = [
        b
        for b in re.findall(r"::::\{exercise\}.*?::::\n\n::::\{solution\}.*?::::", text, re.S)
        if "只用 Python 标准库" in b
    ]
    assert [re.findall(r":pyobject: (\w+)", b) for b in blocks] == [["visible_counts"]]
    for block in blocks:
        (name,) = re.findall(r":pyobject: (\w+)", block)
        tree = ast.parse(inspect.getsource(getattr(ex, name)).lstrip())
        modules = {
            n.value.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
        }
        called = {
            n.func.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        assert modules <= {"math"} and called <= set(dir(builtins)), (name, modules, called)


@pytest.mark.parametrize("function", list(CALLS), ids=lambda f: f.__name__)
def test_bad_arguments_get_a_value_error_that_names_them(function):
    assert fuzz_failures(function, CALLS[function]) == []


def test_the_cache_examples_take_their_inputs_from_the_figure():
    # The page's cache section, its checks and its conventions sentence use F12's last step (past, new).
    assert (
        mask_figure.f12_frames()[-1]["condition"] == f"带缓存：past = {page.PAST}，new = {page.NEW}"
    )
    assert page.cache_section().values["worst_keys"] == str(page.PAST + 1)
    assert page.checks_section().values["leak_n"] == str(page.PAST + page.NEW)
    assert page.conventions_section().values["align_lost"] == str(page.PAST * page.NEW)


@pytest.mark.parametrize("n", [3, 5])
def test_the_step_by_step_tables_put_the_mask_beside_its_rule_and_the_output_beside_its_weights(
    n, monkeypatch
):
    q = [[float(i % 2), float(i // 2)] for i in range(n)]
    v = [[10.0 * (i + 1)] for i in range(n)]
    demo_inputs(monkeypatch, q, v)
    values = page.demo_section().values
    visible = att.visibility(n, n)
    weights, outputs = att.attention(q, q, v)
    for flags, cells in zip(visible, values["tbl_visible_mask"].rows):
        # one cell says both: the rule in symbol and words, then what the additive mask adds there
        assert cells[1:] == [fmt.mark(ok) + " → " + ("0" if ok else "−∞") for ok in flags]
    for w, out, cells in zip(weights, outputs, values["tbl_weights"].rows):
        assert cells[1:] == [fmt.fmt(x) for x in w] + [fmt.fmt(out[0])]


@pytest.mark.parametrize("past", [2, 5])
def test_the_worst_case_table_shows_the_right_row_above_the_wrong_one(past, monkeypatch):
    monkeypatch.setattr(page, "PAST", past)
    values = page.cache_section().values
    right, wrong = values["tbl_worst"].rows
    assert right == [f"正确：行 0（绝对位置 {past}）"] + [
        fmt.mark(ok) for ok in att.visibility(1, past + 1, past=past)[0]
    ]
    assert wrong == ["写错：行 0（误当位置 0）"] + [
        fmt.mark(ok) for ok in att.row_index_visibility(1, past + 1)[0]
    ]
    # the sentence under the table names what it shows: all keys up to the query against key 0 alone
    assert (values["worst_right"], values["worst_wrong"], values["worst_wrong_n"]) == (
        page.keys_text(list(range(past + 1))),
        "Key 0",
        "1",
    )


# -- the page's checks, defined once (chapter.mask) ---------------------------------------------
def test_each_check_fails_on_the_mistake_it_is_for_and_passes_the_right_code():
    q = page.LEAK_Q[:4]
    v = [[1.0], [2.0], [3.0], [4.0]]
    after = page.after_query(4, 4)

    def open_outputs(q_, k, v_):
        return att.attention(q_, k, v_, causal=False)[1]

    assert page.leak_probe(open_outputs, q, q, v, after, 100.0)["leaking"] == [0, 1, 2]
    assert page.leak_probe(causal_outputs, q, q, v, after, 100.0)["leaking"] == []

    def row_index(q_new, k, v_):
        return att.masked_attention(q_new, k, v_, att.row_index_visibility(len(q_new), len(k)))[1]

    def cached(q_new, k, v_):
        return att.attention(q_new, k, v_, past=len(k) - len(q_new))[1]

    assert page.recompute_check(row_index, q, q, v, 2)["differ"] == [0, 1]
    assert page.recompute_check(cached, q, q, v, 2)["differ"] == []
    # NaN is not a leak (the weights check sees it); a row of NaN weights, or one not summing to 1, is caught
    assert page.same_row([math.nan], [math.nan]) and not page.same_row([1.0], [2.0])
    assert page.weights_check([[math.nan, math.nan], [0.5, 0.4]], [[False] * 2, [True] * 2]) == [
        0,
        1,
    ]
    assert page.weights_check([[0.0, 0.0], [0.5, 0.5]], [[False] * 2, [True] * 2]) == []
    with pytest.raises(ValueError, match="run 必须为每个查询返回一行输出"):
        page.recompute_check(lambda q_new, k, v_: [], q, q, v, 2)
