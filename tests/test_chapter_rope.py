"""The rotary position page's book side (book/chapter/rope.py): its numbers, sentences and tables.

Fast unit tests, no build. Each section takes no arguments and reads the teaching files' constants, so a
test gives it other inputs than the page's by setting those constants (``monkeypatch``), and checks its
tables against the teaching code they are written from; a fact of the page's fixed sentences planted
false must stop the build naming the fact.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import math
import re

import pytest

from chapter import fmt
from chapter import rope as page

rope = importlib.import_module("02_rope")
att = importlib.import_module("02_attention")
ex = importlib.import_module("02_exercises_rope")

MINUS = fmt.MINUS


def given(monkeypatch, module=rope, **constants):
    """The page's inputs replaced by other ones, for one test."""
    for name, value in constants.items():
        assert hasattr(module, name), name
        monkeypatch.setattr(module, name, value)


def exercise_values() -> dict:
    values = {}
    for section in page.exercises():
        values |= section.values
    return values


# -- the page's kinds of numbers -------------------------------------------------------------------------
def test_gap_is_scientific_with_the_printed_minus():
    assert fmt.sci(1.5e-12) == "1.5 × 10⁻¹²"
    assert fmt.sci(-2.0) == f"{MINUS}2.0 × 10⁰"
    assert fmt.sci(math.inf) == "∞"
    assert "-" not in fmt.sci(-3.25e-7)


def test_grouped_writes_thousands_like_a_model_card():
    assert [fmt.grouped(x) for x in (1.0, 999.0, 12345.0, 5e5, -2500.0)] == [
        "1",
        "999",
        "12,345",
        "500,000",
        f"{MINUS}2,500",
    ]


def test_only_negative_factors_are_put_in_parentheses():
    steps = page.undo_rows([2.0, 1.0], 4)  # cos(−4) < 0 < sin(−4)
    assert steps[3][1] == f"2 × ({MINUS}0.6536) − 1 × 0.7568"
    steps = page.undo_rows([2.0, 1.0], 0)  # sin(−0) prints as zero: no sign, no parentheses
    assert steps[3][1] == "2 × 1.0000 − 1 × 0.0000"


def test_places_names_a_run_or_lists_the_positions():
    assert page.places([4, 5, 6, 7, 8]) == "4 至 8"
    assert page.places([4, 5, 6]) == "4、5、6"
    assert page.places([0, 2, 3, 4]) == "0、2、3、4"


def test_vec_and_pair():
    assert page.vec([-1.0, 0.123456]) == f"({MINUS}1.0000, 0.1235)"
    assert page.pair(10, 0) == "m = 10，n = 0"


# -- the facts the page's fixed sentences state ----------------------------------------------------------
def test_a_column_is_steady_only_within_the_tolerance():
    assert page.steady([1.0, 1.0, 1.0]) and page.steady([3.0, 3.0 + 1e-12])
    assert not page.steady([1.0, 2.0])


def test_the_layout_facts_hold_on_the_page_and_on_other_vectors():
    page.layouts()  # the page's: the two layouts steady, the mixed one moving, its length changed
    q = [0.5, -1.0, 2.0, 0.0]
    k = [1.0, 1.0, -0.5, 0.5]
    right = [rope.rope_scores([q], [k], [m], [m - 2], 100.0)[0][0] for m in (2, 6, 11)]
    mixed = [
        att.scaled_scores([rope.mixed_rotate(q, m, 100.0)], [rope.mixed_rotate(k, m - 2, 100.0)])[
            0
        ][0]
        for m in (2, 6, 11)
    ]
    assert page.steady(right) and not page.steady(mixed)


def test_the_layout_words_stop_the_build_where_they_would_be_false(monkeypatch):
    q = [1.0] * 4  # at m = 0 nothing turns, in any layout: nothing moves, the length stays
    given(monkeypatch, DEMO_Q8=q, DEMO_K8=q, LAYOUT_OFFSET=0, LAYOUT_M=[0])
    with pytest.raises(ValueError, match="「两种配对") as error:
        page.layouts()
    assert str(error.value).endswith("mixed_moves_with_the_positions、mixed_changes_the_length")


# -- the examples, on other inputs than the page's ----------------------------------------------------------
def test_the_long_example_states_each_models_slowest_wavelength():
    values = page.long().values
    for j, row in enumerate(rope.MODEL_BASES):
        assert values[f"lr_model_{j}"] == row["model"]
        assert values[f"lr_dim_{j}"] == fmt.count(row["head_dim"])
        assert values[f"lr_wave_{j}"] == fmt.multiple(
            rope.slowest_wavelength(row["head_dim"], row["base"])
        )


def test_the_long_table_holds_the_scores_with_the_key_at_zero(monkeypatch):
    given(monkeypatch, LONG_FILL=0.5, LONG_OFFSETS=[1, 10], CHECKPOINTS=[0, 3, 40])
    values = page.long().values
    q = [0.5] * rope.MODEL_BASES[0]["head_dim"]
    for row, model in zip(values["tbl_long"].rows, rope.MODEL_BASES):
        assert row[1:] == [
            fmt.fmt(rope.rope_scores([q], [q], [m], [0], model["base"])[0][0]) for m in (0, 3, 40)
        ]


def test_d2_example_table_holds_the_scores_of_both_groups(monkeypatch):
    q = [0.0, 1.0]
    k = [2.0, -1.0]
    given(monkeypatch, DEMO_Q2=q, DEMO_K2=k, D2_FIRST=(5, 2), D2_SHIFT=4)
    values = page.d2().values
    rows = values["tbl_d2"].rows
    assert [r[0] for r in rows] == ["m = 5，n = 2", "m = 9，n = 6"]
    assert rows[0][-1] == rows[1][-1] == fmt.fmt(rope.rope_scores([q], [k], [5], [2])[0][0])
    assert (values["d2_m0"], values["d2_n0"]) == ("5", "2")


def test_the_plots_are_figures_with_their_panels_and_chinese_labels(monkeypatch):
    han = re.compile(r"[\u4e00-\u9fff]")
    fig = page.d2().values["fig_d2"]
    assert len(fig.axes) == 2
    assert all(han.search(ax.get_title()) for ax in fig.axes)
    given(monkeypatch, LONG_OFFSETS=[1, 10, 100])
    fig = page.long().values["fig_long"]
    ax = fig.axes[0]
    assert han.search(ax.get_xlabel()) and han.search(ax.get_ylabel())
    assert all(han.search(t.get_text()) for t in ax.get_legend().get_texts())
    assert "-" not in ax.get_xlabel() + ax.get_ylabel()  # one minus sign, U+2212


def test_theta_has_the_chapters_four_decimals():
    values = page.d4().values
    assert [row[2] for row in values["tbl_d8"].rows] == [
        "1.0000",
        "0.1000",
        "0.0100",
        "0.0010",
    ]
    assert values["d4_base"] == "10,000"  # as the model table and the plot write it


def test_d4_and_d8_tables_follow_the_frequencies(monkeypatch):
    x = [0.0, 2.0, -1.0, 1.0, 0.5, 0.5]
    given(monkeypatch, D4_X=x, D4_M=3, D8=6)
    values = page.d4().values
    theta = rope.frequencies(6)
    assert [r[3] for r in values["tbl_d4"].rows] == [fmt.fmt(3 * t) for t in theta]
    assert values["d4_norm_before"] == values["d4_norm_after"] == fmt.fmt(math.hypot(*x))
    d6 = values["tbl_d8"]
    assert d6.header[2] == "θ_i = base^(−2i/6)" and len(d6.rows) == 3


def test_layouts_example_verdict_is_written_from_its_own_table(monkeypatch):
    q = [1.0, 2.0, -1.0, 0.5]
    k = [0.0, 1.0, 1.0, -2.0]
    given(monkeypatch, DEMO_Q8=q, DEMO_K8=k, LAYOUT_OFFSET=2, LAYOUT_M=[2, 9])
    values = page.layouts().values
    rows = values["tbl_layouts"].rows
    assert [r[0] for r in rows] == ["m = 2，n = 0", "m = 9，n = 7"]
    assert all(r[1] == r[2] for r in rows)  # the two layouts give the same score
    assert values["lay_n"] == "0、7" and values["lay_order"] == "[0, 2, 1, 3]"


def test_weights_example_only_permuting_the_columns_keeps_the_scores(monkeypatch):
    x = [[1.0, -1.0], [0.5, 2.0]]
    w_q = [[1, 0, 2, -1], [0, 1, 1, 1]]
    w_k = [[2, 1, 0, 1], [-1, 0, 1, 2]]
    given(monkeypatch, W_X=x, W_Q=w_q, W_K=w_k, W_HEADS=1)  # one head: the whole width is its block
    values = page.weights().values
    assert [r[-1] for r in values["tbl_weights"].rows] == ["一致", "一致", "一致", "不一致"]
    assert values["w_cols"] == "4" and values["w_dmodel"] == "2"
    assert values["w_q"] == f"(1, 0)、(0, 1)、(2, 1)、({MINUS}1, 1)"  # the columns of W_q


def test_weights_example_with_two_heads_permutes_inside_each_head(monkeypatch):
    x = [[1.0, -1.0], [0.5, 2.0], [0.0, 1.0]]
    w_q = [[1, 0, 2, -1, 0, 1, 1, 2], [0, 1, 1, 1, 2, -1, 0, 1]]
    w_k = [[2, 1, 0, 1, 1, 0, -1, 1], [-1, 0, 1, 2, 0, 1, 2, 0]]
    given(monkeypatch, W_X=x, W_Q=w_q, W_K=w_k, W_HEADS=2)
    values = page.weights().values
    verdicts = {r[0]: r[-1] for r in values["tbl_weights"].rows}
    assert verdicts == {
        "相邻成对，原权重（参照）": "一致",
        "前后两半，每个头的块里重排 W_q、W_k 的列": "一致",
        "前后两半，整个宽度一次重排": "不一致",
        "前后两半，权重不重排": "不一致",
    }
    assert values["w_dhead"] == "4"
    assert (
        values["w_order"] == "[0, 2, 1, 3, 4, 6, 5, 7]"
        and values["w_whole"] == "[0, 2, 4, 6, 1, 3, 5, 7]"
    )


def test_v_example_rotating_v_moves_the_output(monkeypatch):
    seq = [[1.0, 0.0], [0.5, 0.5]]
    given(monkeypatch, V_SEQ=seq, V_V=[[1.0, 2.0], [0.0, -1.0]], V_START=2, V_SHIFT=3)
    values = page.v_rotated().values
    assert [r[-1] for r in values["tbl_v"].rows] == ["不变", "变了"]
    assert values["tbl_v"].header[1:3] == ["从位置 2 开始", "后移 3 个位置"]


def test_cache_example_right_and_wrong_rows_share_the_mask(monkeypatch):
    given(monkeypatch, PAST=2, NEW=3)
    values = page.row_index().values
    rows = values["tbl_offset_scores"].rows
    right = [r for r in rows if r[0] == "正确：转 past + i"]
    wrong = [r for r in rows if r[0] == "写错：转行号 i"]
    assert len(right) == len(wrong) == 3
    assert [[c == fmt.fmt(-math.inf) for c in r[2:]] for r in right] == [
        [c == "−∞" for c in r[2:]] for r in wrong
    ]
    reference = [r for r in rows if r[0] == "整段重算（参照）"]
    assert [r[2:] for r in reference] == [r[2:] for r in right]
    assert values["off_cached"] == "0、1"


@pytest.mark.parametrize("pads", [1, 3])
def test_padding_example_counts_real_tokens(monkeypatch, pads):
    given(monkeypatch, PADS=pads)
    values = page.padding().values
    assert [values[f"pad_{i}_ok"] for i in range(4)] == ["一致", "一致", "不一致", "不一致"]
    assert [values[f"pad_{i}_at"] for i in range(4)] == [
        str(3),
        str(pads + 3),
        str(pads + 3),
        str(3),
    ]
    assert values["tbl_pad_positions"].rows[1][1:] == [
        fmt.count(p) for p in rope.padded_positions([False] * pads + [True] * 4)
    ]  # the three prefilled tokens and the decoded one (review C3)


def test_invariant_example_catches_the_row_index_only_with_a_cache(monkeypatch):
    seq = [[1.0, 1.0], [0.0, -1.0], [2.0, 0.5], [1.0, 0.0]]
    v = [[1.0], [0.0], [2.0], [3.0]]
    given(monkeypatch, DEMO_SEQ=seq, DEMO_V=v, PAST=1, NEW=3)
    rows = page.invariant().values["tbl_invariant"].rows
    verdicts = {(r[0], r[1]): r[3] for r in rows}
    assert verdicts[("正确：转 past + i", "1 + 3")] == "通过"
    assert verdicts[("写错：转行号 i", "1 + 3")] == "被认出"
    assert verdicts[("写错：转行号 i", "4")] == "通过"


def test_long_example_table_and_note(monkeypatch):
    given(monkeypatch, LONG_FILL=0.5, LONG_OFFSETS=[1, 10, 100], CHECKPOINTS=[0, 10, 1000])
    values = page.long().values
    assert values["lr_outside"] == "0、1,000"  # off the plot's log axis: only in the table
    given(monkeypatch, CHECKPOINTS=[1, 10])
    with pytest.raises(ValueError, match="some_checkpoints_off_the_plot"):
        page.long()
    assert [r[0] for r in values["tbl_long"].rows] == ["10,000", "500,000", "1,000,000"]
    d = rope.MODEL_BASES[0]["head_dim"]
    assert values["lr_start"] == fmt.fmt(0.25 * d / math.sqrt(d))


def test_the_d2_table_of_all_positions_diagonals_and_sign(monkeypatch):
    q = [1.0, 0.0]
    k = [0.0, 1.0]
    given(monkeypatch, DEMO_Q2=q, DEMO_K2=k, TOEPLITZ_N=4)
    values = page.d2().values
    assert values["toe_spread"] == "0" or "× 10⁻¹" in values["toe_spread"]  # rounding only
    table = rope.rope_scores([q] * 4, [k] * 4, list(range(4)), list(range(4)))
    assert (values["toe_ahead"], values["toe_behind"]) == (
        fmt.fmt(table[1][0]),
        fmt.fmt(table[0][1]),
    )
    assert not math.isclose(table[1][0], table[0][1])  # 「两者不同」
    given(monkeypatch, DEMO_K2=q, TOEPLITZ_N=3)  # q = k: +1 and −1 agree
    with pytest.raises(ValueError, match="plus_and_minus_one_differ"):
        page.d2()
    assert values["tbl_toeplitz"].rows[2][1:] == [fmt.fmt(x) for x in table[2]]


# -- the exercises -------------------------------------------------------------------------------------
def vec_of(x: list[float]) -> str:
    return page.vec(x)


@pytest.mark.parametrize(
    "x, position", [([2.0, 1.0], 2), ([1.0, -0.5], 3), ([0.3, 0.7], 5), ([1.0, 0.0], 0)]
)
def test_a_written_out_step_is_computed_from_its_printed_terms(x, position):
    """Review item 26 was a step that said = where its printed digits gave another last digit. A step's
    sign is fmt.equals of what its printed terms give (fmt.Calculation), and the section holds that
    they give its result up to rounding."""
    assert all(c.adds_up for _, c in page.undo_calculations(x, position))
    _, c = page.undo_calculations([2.0, 1.0], 2)[3]  # the review's instance
    assert c.terms == f"2 × ({MINUS}0.4161) − 1 × ({MINUS}0.9093)"
    assert c.from_printed == pytest.approx(2 * -0.4161 - 1 * -0.9093)
    assert page.undo_rows([2.0, 1.0], 2)[3][2] == f"≈ {fmt.fmt(c.exact)}"


def test_the_exercise_tables_come_from_the_reference_solutions():
    r = ex.undo_steps()
    values = exercise_values()
    steps = values["rx1_steps"].rows
    assert (
        steps[3][2].endswith(fmt.fmt(r["original"][0])) and f"({MINUS}" in steps[3][1]
    )  # cos(−4) < 0: in parentheses
    assert fmt.fmt(r["angle"]) == f"{MINUS}4.0000"
    assert (
        values["rx1_back"] == vec_of(r["back"])
        and max(abs(a - b) for a, b in zip(r["back"], ex.UNDO_X)) < 1e-9
    )  # 「回到了 x′」
    freq = shift = offset = values
    assert [row[2] for row in freq["rx2_table"].rows] == ["0", f"{MINUS}1/3", f"{MINUS}2/3"]
    s3 = ex.shift_scores()
    first, second = (g["score"] for g in s3["groups"])
    assert math.isclose(first, second) and not math.isclose(first, s3["plain"])  # same, changed
    assert shift["rx3_plain"] == fmt.fmt(s3["plain"])
    s = ex.offset_score()
    assert abs(s["score"] - s["both"]) < 1e-9  # 「一致」
    assert [r[-1] for r in offset["rx4_table"].rows] == [fmt.fmt(t) for t in s["terms"]]
    assert offset["rx4_score"] == fmt.fmt(s["score"]) and offset["rx4_offset"] == "3"  # Δ = m − n
    assert values["rx5_doctest"].startswith("```pycon\n>>> ")


def test_the_exercise_words_stop_the_build_where_they_would_be_false(monkeypatch):
    s3 = ex.shift_scores()
    moved = {**s3, "groups": [s3["groups"][0], {**s3["groups"][1], "score": 0.123}]}
    monkeypatch.setattr(page.ex, "shift_scores", lambda: moved)
    with pytest.raises(ValueError, match="two_groups_same_score"):
        page.shift_exercise()
    monkeypatch.setattr(page.ex, "shift_scores", lambda: {**s3, "plain": s3["groups"][0]["score"]})
    with pytest.raises(ValueError, match="rotation_changes_the_score"):
        page.shift_exercise()


def test_the_reader_may_word_the_bad_input_message():
    # The exercise lets the reader write the reason: its doctest compares the exception's type only.
    raising = [
        e
        for e in doctest.DocTestParser().get_examples(inspect.getdoc(ex.rotation_angles))
        if e.exc_msg is not None
    ]
    assert raising and all(e.options.get(doctest.IGNORE_EXCEPTION_DETAIL) for e in raising)
    assert "IGNORE_EXCEPTION_DETAIL" in page.code_exercise().values["rx5_doctest"]
