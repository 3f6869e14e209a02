"""The pitfalls page's book side (book/chapter/pitfalls.py): its facts, and the PyTorch record read against
the teaching code.

``code/02_pitfalls_torch.json`` is what ``make crosscheck`` saw PyTorch and Transformers do; here, without
torch, every section of it is recomputed with ``02_pitfalls`` and must agree, and an edited record (planted
through ``torch_record``) must stop the build naming the fact. Fast unit tests, no build; the built page is
tests/test_page_pitfalls.py.
"""

from __future__ import annotations

import copy
import importlib
import re
from pathlib import Path

import pytest

from chapter import conventions, fmt
from chapter import pitfalls as page

pf = importlib.import_module("02_pitfalls")
ROOT = Path(__file__).resolve().parents[1]


def record() -> dict:
    return copy.deepcopy(page.torch_record())


def plant(monkeypatch, r: dict) -> None:
    """Every section reads ``r`` as the record from now on."""
    monkeypatch.setattr(page, "torch_record", lambda: copy.deepcopy(r))


def test_the_record_agrees_with_the_teaching_code_section_by_section():
    page.check_record()  # raises, naming the fact, where one is false


def test_the_record_says_where_it_was_made_and_matches_the_pins():
    r = page.torch_record()
    pins = dict(
        re.findall(
            r"^([\w\[\]-]+)==([\w.+]+)",
            (ROOT / "tests/crosscheck/requirements.txt").read_text(encoding="utf-8"),
            re.M,
        )
    )
    assert r["torch"].split("+")[0] == pins["torch"] and r["transformers"] == pins["transformers"]
    assert r["torch"] == conventions.observed()["cpu"]["torch"]["version"]
    assert (r["device"], r["dtype"]) == ("cpu", "float64")
    assert page.where(r) == "PyTorch 2.13.0+cpu、Transformers 5.17.0，CPU，float64"


def edited(path: str, value) -> dict:
    r = record()
    *keys, last = path.split("/")
    node = r
    for key in keys:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return r


@pytest.mark.parametrize(
    "path, value, fact",
    [
        ("polarity/mha_nan_rows", [], "last_row_reads_nothing_and_is_nan"),
        ("polarity/mha/0", 10.0, "mha_reads_the_inverted_table"),
        ("float_mask/wrong/0", 10.0, "sdpa_adds_the_table"),
        ("lines/tril.bool()/nan_rows", [], "record_matches_row_by_row"),
        ("causal_and_mask/sdpa", "ran", "sdpa_raises"),
        ("head_order/repeat/0/1", 0.0, "wrong_tables_are_the_moved_outputs"),
        ("padding_axis/mha_both_nan_rows", [], "mha_pad_row_nan"),
        ("loss/by_id", 2.0, "matches_cross_entropy"),
        ("dropout/eval_gap", 0.0, "eval_calls_differ"),
        ("dropout/before_nan_rows", [], "torch_sample_inf_rows_are_nan"),
        ("cross_attention/probe_pad", True, "probes_match_tables"),
        ("generation/left/1", [1, 1, 1], "left_equals_alone"),
        ("generation/first_step_gap/right/1", 0.0, "pad_ending_prompt_changes_at_first_step"),
        ("positions/gpt2/arange_gap", 0.0, "gpt2_changes_without_position_ids"),
        ("positions/llama/arange_gap", 0.0, "llama_differs_by_float32_rounding_only"),
        ("causal_and_mask/self_attention_v_is_q/fast/1", 0.33, "fast_path_uses_attn_mask"),
        ("causal_and_mask/self_attention_v_is_q/slow/1", 0.0, "slow_path_drops_attn_mask"),
        (
            "causal_and_mask/self_attention_v_is_q/batch_first_false/1",
            0.0,
            "batch_first_false_takes_slow_path",
        ),
        (
            "causal_and_mask/self_attention_v_is_q/fast_is_causal_alone/0",
            1.0,
            "fast_is_causal_alone_masks_nothing",
        ),
        ("generation/float32_left_first_step_gap/0", 0.0, "float32_long_prompt_differs_too"),
        ("generation/float32_left_first_step_gap/1", 0.01, "float32_differs_by_rounding_only"),
        ("decode_loop/mask_grows/stale", [[2, 7, 2], [6, 7, 7]], "stale_mask_changes_silently"),
        ("decode_loop/mask_grows/grows/1", [1, 1, 1], "growing_mask_equals_generate"),
        ("decode_loop/generate_without_mask/warning", [], "warns_when_mask_cannot_be_inferred"),
        ("decode_loop/generate_without_mask/gap_with_mask", 0.5, "with_mask_equal"),
        (
            "decode_loop/one_query_mask/table_error",
            "ran",
            "whole_table_for_one_query_shape_error",
        ),
        ("decode_loop/one_query_mask/is_causal/0", 29.43, "is_causal_alone_reads_key_0"),
        ("decode_loop/hf_mask_to_mha/bool/0", 32.03, "bool_reads_only_pad"),
        ("decode_loop/finite_fills/pad_row/-1e9/0", None, "finite_fill_spreads_evenly"),
        (
            "decode_loop/finite_fills/float16_of_minus_1e9",
            "-65504.0",
            "float16_cannot_hold_minus_1e9",
        ),
        (
            "decode_loop/finite_fills/transformers_eager/float32/pad_row/0",
            None,
            "eager_float32_spreads_evenly_no_nan_logits",
        ),
        (
            "decode_loop/finite_fills/transformers_eager/float64/logits_nan",
            False,
            "eager_float64_empty_row_and_logits_nan",
        ),
        (
            "decode_loop/finite_fills/transformers_eager/float64/nan_query_rows/1",
            [0, 1],
            "eager_float64_nan_spreads_from_pad_rows",
        ),
        (
            "decode_loop/finite_fills/transformers_eager/float64/logits_nan_positions/1/4",
            False,
            "eager_float64_short_prompt_logits_all_nan",
        ),
        (
            "decode_loop/sliding_window/cache_length/positions/0",
            5,
            "sliding_positions_match_teaching_code",
        ),
        (
            "decode_loop/sliding_window/cache_length/tokens",
            [2, 0, 0],
            "cache_length_positions_change_continuation",
        ),
    ],
)
def test_an_edited_record_stops_the_build_naming_the_fact(monkeypatch, path, value, fact):
    plant(monkeypatch, edited(path, value))
    with pytest.raises(ValueError, match=rf"^{page.PAGE}「.+」的固定说法.*：(.*、)?{fact}(、|$)"):
        page.check_record()
    with pytest.raises(ValueError, match=re.escape(fact)):
        page.record()  # the section the page glues checks the whole record first


def test_the_causal_table_gives_the_row_that_reads_nothing_no_number():
    # The PAD query at position 0 reads no key under causal and PAD: no expected output, not SDPA's 0.
    rows = page.causal().values["tbl_d"].rows
    assert rows[0][3] == "无（一个 Key 也读不到）"
    assert all(fmt.printed(r[3]) != fmt.printed(r[2]) for r in rows[1:])  # the PAD moves each one


def test_the_polarity_table_reads_the_inverted_table():
    v = page.polarity().values
    rows = v["tbl_a"].rows
    assert [r[2] for r in rows] == ["1、2、3", "2、3", "3", "无"]
    assert rows[-1][3] == "NaN" and v["a_nan"] == "位置 3"
    assert v["a_reads"].endswith("位置 3 什么也读不到")


def test_the_float_table_puts_weight_on_the_future_and_the_fix_is_the_causal_output():
    v = page.float_mask().values
    future = [fmt.printed(r[1]) for r in v["tbl_b"].rows]
    assert future[0] > 0.4 and future[-1] == 0.0 and v["b_future0"] == v["tbl_b"].rows[0][1]
    assert [r[3] for r in v["tbl_b"].rows] == [fmt.fmt(x) for x in page.right_outputs()]


def test_the_lines_table():
    rows = {r[0]: r[1:] for r in page.lines().values["tbl_c"].rows}
    assert rows["`masked_fill(torch.triu(ones).bool(), −inf)`"] == [
        "无",
        "0",
        "0、1",
        "0、1、2",
        "位置 0",
    ]
    assert rows["`masked_fill(torch.tril(ones) == 0, −inf)`"][-1] == "无"


def test_the_heads_table_and_its_sentence():
    v = page.heads().values
    assert v["e_wrong"] == "序列 0 的头 1、序列 1 的头 0"
    assert (v["e_slots"], v["e_wrong_n"]) == ("4", "2")
    got = {(r[0], r[1]): r[2] for r in v["tbl_e"].rows}
    assert got["序列 0", "头 1"] == "序列 1 的" and got["序列 1", "头 1"] == "序列 1 的"


def test_the_padding_axis_words_follow_the_record_both_ways(monkeypatch):
    assert page.axis().values["f_sdpa_row"] == "全 0"
    plant(monkeypatch, edited("padding_axis/query_axis/3", None))
    assert page.axis().values["f_sdpa_row"] == "NaN"


def test_the_loss_table_counts_the_targets_and_the_real_eos():
    rows = {r[0]: r for r in page.loss().values["tbl_g"].rows}
    assert (rows["不挡 PAD"][2], rows["按位置挡"][2], rows["按编号挡"][2]) == ("5", "3", "2")
    assert (rows["按位置挡"][3], rows["按编号挡"][3]) == ("1", "0")


def test_the_dropout_section():
    v = page.dropout().values
    sums = [fmt.printed(r[3]) for r in v["tbl_h"].rows]
    assert any(abs(s - 1) > 1e-3 for s in sums)
    assert v["h_nan"] == "0、1" and v["h_guarded_gap"] == "0"


def test_the_cross_attention_probes_read_as_the_tables_say():
    v = page.cross().values
    assert [r[2] == r[3] for r in v["tbl_i_probes"].rows] == [True, False, True, False]
    rows = v["tbl_i"].rows
    assert [r[1] for r in rows] == ["0、1、2"] * 3 and [r[3] for r in rows] == [
        "0",
        "0、1",
        "0、1、2",
    ]


def test_the_generation_words_are_chosen_by_the_record_both_ways(monkeypatch):
    v = page.generate().values
    assert v["j_changed"] == "短提示（提示 1）的续写变了"
    assert [row[1] == row[2] for row in v["tbl_j"].rows] == [True, True]
    r = record()
    r["generation"]["right"][1] = list(r["generation"]["alone"][1])  # the same tokens by chance
    plant(monkeypatch, r)
    assert "碰巧相同" in page.generate().values["j_changed"]


def test_the_positions_table():
    rows = page.positions().values["tbl_k"].rows
    assert fmt.printed(rows[0][2]) > 1e-3 and fmt.printed(rows[2][2]) > 1e-3  # absolute: moved
    assert fmt.printed(rows[1][2]) < 1e-5 and fmt.printed(rows[3][2]) < 1e-12  # RoPE: rounding only
    assert [r[3] for r in rows[2:]] == ["0", "0"]


def test_the_exercise_values_are_the_answers():
    v = {}
    for section in page.exercises():
        v |= section.values
    assert [r[1] for r in v["x1_table"].rows] == ["无", "0", "0、1", "0、1、2"]
    assert v["x1_empty"] == "查询 0" and "diagonal=-1) == 0" in v["x1_line"]
    assert fmt.printed(v["x2_future"]) == pytest.approx(
        sum(fmt.printed(r[3]) for r in v["x2_table"].rows[1:]), abs=2e-4
    )
    assert [r[2] for r in v["x3_table"].rows] == ["不是", "是", "是"]
    assert (
        v["x4_doctest"].startswith("```pycon\n>>> loss_labels(")
        and v["x4_by_id"].count("−100") == 3
    )


def test_the_page_calls_every_section():
    text = (ROOT / "book" / "ch02" / "pitfalls.md").read_text(encoding="utf-8")
    called = set(re.findall(r"page\.(\w+)\(\)\.glue\(\)", text))
    assert {f.__name__ for f in page.SECTIONS} | {"demo", "record", "run_output"} <= called
    assert "for section in page.exercises():" in text


def test_the_decode_loop_words_and_table():
    v = page.decode().values
    rows = v["tbl_m"].rows
    assert [r[1] == r[2] for r in rows] == [True] * 3  # the right loop is generate
    assert [r[1] == r[3] for r in rows] == [False] * 3  # each wrong loop changed a continuation
    assert v["m_changed_right"] != v["m_changed_wrong"]
    assert (v["m_is_causal"], v["m_bool0"]) == ("10.0000", "10.0000")  # both read key 0 only
    assert v["m_uniform"] == "0.2500" and v["m_seen"] == "5、6、7" and v["m_held"] == "2"
    messages = [r[1] for r in v["tbl_m_messages"].rows]
    assert "cannot be inferred" in messages[0] and messages[1].startswith("RuntimeError")


def test_the_is_causal_paths_words():
    v = page.causal().values
    assert v["d_fast"].startswith("NaN、") and v["d_slow"].startswith("1.0000、")
