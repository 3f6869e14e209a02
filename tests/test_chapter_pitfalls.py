"""The pitfalls page's book side (book/chapter/pitfalls.py): its facts, and the PyTorch record read against
the teaching code.

``code/02_pitfalls_torch.json`` is what ``make crosscheck`` saw PyTorch and Transformers do; here, without
torch, every section of it is recomputed with ``02_pitfalls`` and must agree, and an edited record must
stop the build. Fast unit tests, no build; the built page is tests/test_page_pitfalls.py.
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


def test_the_record_agrees_with_the_teaching_code_section_by_section():
    page.check_record(page.torch_record())  # raises, naming the claim, where one is false


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


def _edit(path: str, value):
    def change(r):
        *keys, last = path.split("/")
        node = r
        for key in keys:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return change


@pytest.mark.parametrize(
    "path, value, claim",
    [
        ("polarity/mha_nan_rows", [], "最后一行什么也读不到"),
        ("polarity/mha/0", 10.0, "反过来的表"),
        ("float_mask/wrong/0", 10.0, "SDPA 加上了这张表"),
        ("lines/tril.bool()/nan_rows", [], "逐行相同"),
        ("causal_and_mask/sdpa", "ran", "SDPA 报错"),
        ("head_order/repeat/0/1", 0.0, "拿错表"),
        ("padding_axis/mha_both_nan_rows", [], "NaN"),
        ("loss/by_id", 2.0, "F.cross_entropy"),
        ("dropout/eval_gap", 0.0, "两次不同"),
        ("dropout/before_nan_rows", [], "−∞ 的行是 NaN"),
        ("cross_attention/probe_pad", True, "探针"),
        ("generation/left/1", [1, 1, 1], "补在左边"),
        ("generation/first_step_gap/right/1", 0.0, "第一步就变了"),
        ("positions/gpt2/arange_gap", 0.0, "GPT-2"),
        ("positions/llama/arange_gap", 0.0, "不是 0"),
        ("causal_and_mask/self_attention_v_is_q/fast/1", 0.33, "快路径用了 attn_mask"),
        ("causal_and_mask/self_attention_v_is_q/slow/1", 0.0, "慢路径丢掉 attn_mask"),
        ("causal_and_mask/self_attention_v_is_q/batch_first_false/1", 0.0, "batch_first=False"),
        ("causal_and_mask/self_attention_v_is_q/fast_is_causal_alone/0", 1.0, "不挡未来"),
        ("generation/float32_left_first_step_gap/0", 0.0, "长提示也差"),
        ("generation/float32_left_first_step_gap/1", 0.01, "float32 只差舍入"),
        ("decode_loop/mask_grows/stale", [[2, 7, 2], [6, 7, 7]], "续写变了"),
        ("decode_loop/mask_grows/grows/1", [1, 1, 1], "与 generate 相同"),
        ("decode_loop/generate_without_mask/warning", [], "提示"),
        ("decode_loop/generate_without_mask/gap_with_mask", 0.5, "给了 mask 就相同"),
        ("decode_loop/one_query_mask/table_error", "ran", "形状错"),
        ("decode_loop/one_query_mask/is_causal/0", 29.43, "只读 Key 0"),
        ("decode_loop/hf_mask_to_mha/bool/0", 32.03, ".bool() 只读 PAD"),
        ("decode_loop/finite_fills/pad_row/-1e9/0", None, "平均分配"),
        ("decode_loop/finite_fills/float16_of_minus_1e9", "-65504.0", "float16"),
        ("decode_loop/finite_fills/transformers_eager/float32/pad_row/0", None, "float32 的模型"),
        ("decode_loop/finite_fills/transformers_eager/float64/logits_nan", False, "float64 的模型"),
        (
            "decode_loop/finite_fills/transformers_eager/float64/nan_query_rows/1",
            [0, 1],
            "第二层短提示每一行都是",
        ),
        (
            "decode_loop/finite_fills/transformers_eager/float64/logits_nan_positions/1/4",
            False,
            "短提示每个位置的 logits 都是 NaN",
        ),
        ("decode_loop/sliding_window/cache_length/positions/0", 5, "教学代码相同"),
        ("decode_loop/sliding_window/cache_length/tokens", [2, 0, 0], "续写变了"),
    ],
)
def test_an_edited_record_stops_the_build_naming_the_claim(path, value, claim):
    r = record()
    _edit(path, value)(r)
    with pytest.raises(ValueError, match=re.escape(claim)):
        page.check_record(r)


def test_the_causal_table_gives_the_row_that_reads_nothing_no_number():
    # The PAD query at position 0 reads no key under causal and PAD: no expected output, not SDPA's 0.
    rows = page.causal_values()["tbl_d"].rows
    assert rows[0][3] == "无（一个 Key 也读不到）"
    assert all(fmt.printed(r[3]) != fmt.printed(r[2]) for r in rows[1:])  # the PAD moves each one


def test_the_polarity_table_reads_the_inverted_table():
    v = page.polarity_values()
    rows = v["tbl_a"].rows
    assert [r[2] for r in rows] == ["1、2、3", "2、3", "3", "无"]
    assert rows[-1][3] == "NaN" and v["a_nan"] == "位置 3"
    assert v["a_reads"].endswith("位置 3 什么也读不到")


def test_the_float_table_puts_weight_on_the_future_and_the_fix_is_the_causal_output():
    v = page.float_values()
    future = [fmt.printed(r[1]) for r in v["tbl_b"].rows]
    assert future[0] > 0.4 and future[-1] == 0.0 and v["b_future0"] == v["tbl_b"].rows[0][1]
    assert [r[3] for r in v["tbl_b"].rows] == [fmt.fmt(x) for x in page.right_outputs()]


def test_the_lines_table():
    rows = {r[0]: r[1:] for r in page.lines_values()["tbl_c"].rows}
    assert rows["`masked_fill(torch.triu(ones).bool(), −inf)`"] == [
        "无",
        "0",
        "0、1",
        "0、1、2",
        "位置 0",
    ]
    assert rows["`masked_fill(torch.tril(ones) == 0, −inf)`"][-1] == "无"


def test_the_heads_table_and_its_sentence():
    v = page.heads_values()
    assert v["e_wrong"] == "序列 0 的头 1、序列 1 的头 0"
    got = {(r[0], r[1]): r[2] for r in v["tbl_e"].rows}
    assert got["序列 0", "头 1"] == "序列 1 的" and got["序列 1", "头 1"] == "序列 1 的"


def test_the_padding_axis_words_follow_the_record_both_ways():
    r = record()
    assert page.axis_values(r)["f_sdpa_row"] == "全 0"
    r["padding_axis"]["query_axis"][3] = None
    assert page.axis_values(r)["f_sdpa_row"] == "NaN"


def test_the_loss_table_counts_the_targets_and_the_real_eos():
    rows = {r[0]: r for r in page.loss_values()["tbl_g"].rows}
    assert (rows["不挡 PAD"][2], rows["按位置挡"][2], rows["按编号挡"][2]) == ("5", "3", "2")
    assert (rows["按位置挡"][3], rows["按编号挡"][3]) == ("1", "0")


def test_the_dropout_section():
    v = page.dropout_values()
    sums = [fmt.printed(r[3]) for r in v["tbl_h"].rows]
    assert any(abs(s - 1) > 1e-3 for s in sums)
    assert v["h_nan"] == "0、1" and v["h_guarded_gap"] == "0"


def test_the_cross_attention_probes_read_as_the_tables_say():
    v = page.cross_values()
    assert [r[2] == r[3] for r in v["tbl_i_probes"].rows] == [True, False, True, False]
    rows = v["tbl_i"].rows
    assert [r[1] for r in rows] == ["0、1、2"] * 3 and [r[3] for r in rows] == [
        "0",
        "0、1",
        "0、1、2",
    ]


def test_the_generation_words_are_chosen_by_the_record_both_ways():
    v = page.generate_values()
    assert v["j_changed"] == "短提示（提示 1）的续写变了"
    r = record()
    r["generation"]["right"][1] = list(r["generation"]["alone"][1])  # the same tokens by chance
    assert "碰巧相同" in page.generate_values(r)["j_changed"]
    assert [row[1] == row[2] for row in v["tbl_j"].rows] == [True, True]


def test_the_positions_table():
    rows = page.positions_values()["tbl_k"].rows
    assert fmt.printed(rows[0][2]) > 1e-3 and fmt.printed(rows[2][2]) > 1e-3  # absolute: moved
    assert fmt.printed(rows[1][2]) < 1e-5 and fmt.printed(rows[3][2]) < 1e-12  # RoPE: rounding only
    assert [r[3] for r in rows[2:]] == ["0", "0"]


def test_the_exercise_values_are_the_answers():
    v = page.exercise_values()
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
    called = set(re.findall(r"page\.(\w+_values)\(", text))
    assert {f.__name__ for f in page.SECTIONS} <= called


def test_the_decode_loop_words_and_table():
    v = page.decode_values()
    rows = v["tbl_m"].rows
    assert [r[1] == r[2] for r in rows] == [True] * 3  # the right loop is generate
    assert [r[1] == r[3] for r in rows] == [False] * 3  # each wrong loop changed a continuation
    assert v["m_changed_right"] != v["m_changed_wrong"]
    assert (v["m_is_causal"], v["m_bool0"]) == ("10.0000", "10.0000")  # both read key 0 only
    assert v["m_uniform"] == "0.2500" and v["m_seen"] == "5、6、7" and v["m_held"] == "2"
    messages = [r[1] for r in v["tbl_m_messages"].rows]
    assert "cannot be inferred" in messages[0] and messages[1].startswith("RuntimeError")


def test_the_is_causal_paths_words():
    v = page.causal_values()
    assert v["d_fast"].startswith("NaN、") and v["d_slow"].startswith("1.0000、")
