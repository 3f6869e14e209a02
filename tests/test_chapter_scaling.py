"""Tests of book/chapter/scaling.py: each sentence, table and frame of the scaling page states its own numbers.

Each sentence is checked on other inputs than the page's (hypothesis), against the numbers of the table
or frame it stands beside; the printed numbers use chapter.fmt's one minus sign. No build: fast unit tests.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chapter import fmt
from chapter import scaling as page

# The teaching code's tests keep the shared strategies and the fuzz (code/tests/reference.py).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "code" / "tests"))
from reference import matrices, reals, unmasked_problems  # noqa: E402

att = importlib.import_module("02_attention")
sc = importlib.import_module("02_scaling")
ex = importlib.import_module("02_exercises_scaling")

finite = reals(20)
small_int = st.integers(-3, 3).map(float)


def matrix(rows: int, cols: int, cells=finite):
    return matrices(rows, cols, cells)


def problems(cells=small_int):
    """Random Q, K, V without a mask (every query reads every key)."""
    return unmasked_problems(cells, max_d=5, max_keys=4)


def texts(values: dict):
    """Every text a section glues, table cells included."""
    for value in values.values():
        if isinstance(value, tuple):
            header, rows = value
            yield from header
            for row in rows:
                yield from row
        else:
            yield value


# -- the kinds of number this page adds to chapter.fmt -----------------------------------------------------
def test_a_difference_has_one_digit_and_the_printed_minus():
    assert fmt.sci(4.440892098500626e-16) == "4.4 × 10⁻¹⁶"
    assert fmt.sci(3.0) == "3.0 × 10⁰"


def test_the_float_limits_are_numpys_in_scientific_notation():
    _, rows = page.overflow()["tbl_limits"]
    assert [r[1] for r in rows] == [
        fmt.sci(float(np.finfo(t).max)) for t in ("float16", "float32", "float64")
    ]


SECTIONS = (
    "inputs",
    "measurement",
    "overflow",
    "axis",
    "checks",
    "sweep",
    "exercise_hand",
    "exercise_grow",
)  # exercise_code: a doctest, typed as Python


def test_every_printed_number_of_the_page_uses_the_one_minus_sign():
    for name in SECTIONS:
        for text in texts(getattr(page, name)()):
            assert not re.search(r"-\d", str(text)), text


def test_computed_numbers_print_with_four_decimals_and_differences_by_the_rule():
    f13 = page.f13_frames()[0]["tables"][0]["rows"]
    s = sc.visible_steps(sc.EXAMPLE_Q[sc.QUERY], sc.EXAMPLE_K, sc.EXAMPLE_V)
    assert [c["text"] for c in f13[0][1:-1]] == [fmt.fmt(x) for x in s["dots"]]  # 5.0000, not 5
    assert page.measurement()["temp_sqrt_d"] == fmt.fmt(s["scale"])
    _, rows = page.exercise_grow()["ex2_table"]
    assert [r[2] for r in rows] == [
        fmt.fmt(t) for t in (1.0, 1 / math.sqrt(ex.COPIES), 1 / (ex.COPIES * math.sqrt(2)))
    ]
    # A difference of 10⁻³ or more is a plain four-decimal number, never 3.6 × 10⁻¹.
    assert fmt.difference(0.36) == "0.3600"
    assert all(not c.endswith("× 10⁻¹") for c in page.checks().values())


# -- the wrong axis, the wrong d, the checks ----------------------------------------------------------------
def test_the_wrong_axis_facts_hold_on_the_page_and_fail_where_they_are_false():
    values = page.axis()  # columns sum to 1, no row does, every output inside V's range
    _, table = values["tbl_axis_wrong"]
    assert table[-1][1:-1] == ["1.0000"] * len(sc.EXAMPLE_K)
    assert all(row[-1] != "1.0000" for row in table[:-1])
    # Key 0 gives almost all of itself to query 0, key 1 a third to each: the rows sum to about 4/3,
    # 1/3 and 1/3, and with V = (1), (1) every output leaves V's range.
    with pytest.raises(ValueError, match="V 各列的范围之内"):
        page.axis(
            q=[[5.0, 0.0], [0.0, 0.0], [0.0, 0.0]], k=[[5.0, 0.0], [0.0, 0.0]], v=[[1.0], [1.0]]
        )
    # Two equal queries share every key half and half: each row sums to exactly 1.
    with pytest.raises(ValueError, match="每一行之和都不是 1"):
        page.axis(q=[[1.0], [1.0]], k=[[1.0], [2.0]], v=[[0.0], [1.0]])


def test_the_wrong_axis_outputs_inside_is_the_numpy_verdict():
    wrong = sc.softmax_over_queries(att.scaled_scores(sc.EXAMPLE_Q, sc.EXAMPLE_K))
    out = np.asarray(wrong) @ np.asarray(sc.EXAMPLE_V)
    v = np.asarray(sc.EXAMPLE_V)
    assert ((out >= v.min(0) - 1e-12) & (out <= v.max(0) + 1e-12)).all()  # what the page says
    assert page.axis()["axis_wrong_shown"] == "、".join(fmt.vector(o, fmt.fmt) for o in out)
    assert page.inside(
        [[1.0, 2.0], [7.0, 2.0], [0.0, -1.0], [6.0, 0.0]], [[0.0, 0.0], [6.0, 6.0]]
    ) == [
        True,
        False,
        False,
        True,
    ]


def test_the_checks_table_catches_each_mistake_on_other_inputs():
    q = [[1.0, 0.0, 2.0], [0.0, 3.0, 1.0]]
    k = [[1.0, 1.0, 0.0], [2.0, 0.0, 1.0], [0.0, 1.0, 3.0]]
    v = [[1.0], [5.0], [9.0]]
    values = page.checks(q, k, v, row=1, shift=1000, order=(1, 2, 0))
    right = [values[f"chk_{name}_right"] for name in ("sum", "shift", "order", "numpy")]
    assert all(x == "0" or "× 10⁻" in x for x in right)  # rounding only
    wrong = [fmt.printed(values[f"chk_{name}_wrong"]) for name in ("sum", "order", "numpy")]
    assert all(x > 1e-3 for x in wrong)
    assert (values["chk_heads"], values["chk_width"], values["chk_root"]) == (
        "4",
        "12",
        fmt.fmt(12**0.5),
    )
    # The page says the naive formula overflows: a shift too small to overflow stops the build.
    with pytest.raises(ValueError, match="exp 溢出"):
        page.checks(q, k, v, row=1, shift=1, order=(1, 2, 0))


@settings(max_examples=15, deadline=None)
@given(problems(cells=finite))
def test_the_numpy_reference_is_an_independent_attention(problem):
    q, k, v = problem
    _, out = att.attention(q, k, v, causal=False)
    assert np.allclose(page.numpy_reference(q, k, v), out, atol=1e-9)
    assert isinstance(page.numpy_reference(q, k, v), np.ndarray)


# -- the temperature sweep: the sentence's numbers -------------------------------------------------------
@settings(max_examples=15, deadline=None)
@given(problems(cells=finite), st.lists(st.floats(0.1, 20), min_size=2, max_size=5, unique=True))
def test_the_temperature_sentence_states_the_sweeps_own_numbers(problem, ts):
    q, k, v = problem
    values = page.sweep(q, k, v, 0, ts)
    rows = sc.temperature_sweep(sc.visible_steps(q[0], k, v)["scaled"], v, ts)
    cold = min(rows, key=lambda r: r["temperature"])
    hot = max(rows, key=lambda r: r["temperature"])
    top = int(np.argmax(cold["weights"]))
    mean = np.mean(v, axis=0)
    assert [values["sweep_t_0"], values["sweep_t_1"]] == [fmt.short(min(ts)), fmt.short(max(ts))]
    assert [values["sweep_peak_0"], values["sweep_peak_1"]] == [
        fmt.fmt(max(r["weights"])) for r in (cold, hot)
    ]
    assert (
        max(hot["weights"]) <= max(cold["weights"]) + 1e-12
    )  # "降到" is true: the peak never grows with T
    assert values["sweep_top"] == str(top) and values["sweep_top_v"] == fmt.vector(v[top])
    assert [values["sweep_to_top_0"], values["sweep_to_top_1"]] == [
        fmt.fmt(math.dist(r["output"], v[top])) for r in (cold, hot)
    ]
    assert [values["sweep_to_mean_0"], values["sweep_to_mean_1"]] == [
        fmt.fmt(float(np.linalg.norm(np.asarray(r["output"]) - mean))) for r in (cold, hot)
    ]


def test_the_sweep_table_and_sentence_come_from_the_same_rows():
    values = page.sweep(temperatures=[0.5, 8.0])
    _, rows = values["tbl_sweep"]
    assert [r[0] for r in rows] == ["0.5", "8"]  # inputs, as typed
    assert [values["sweep_peak_0"], values["sweep_peak_1"]] == [rows[0][2], rows[1][2]]


def test_the_sweep_needs_two_temperatures():
    with pytest.raises(ValueError, match="temperatures"):
        page.sweep(temperatures=[1.0])


# -- the overflow section and the measurement --------------------------------------------------------------
def test_the_overflow_section_on_another_row():
    values = page.overflow([800.0, 799.0])
    assert (
        values["big_max"] == "800"
        and values["np_exp"] == "[inf, inf]"
        and values["np_naive"] == "[nan, nan]"
    )
    assert values["naive_error"].startswith("values[0] = 800：exp 溢出")
    assert values["stable_big"] == page.python_list(att.softmax([800.0, 799.0]), cell=fmt.fmt)
    with pytest.raises(ValueError, match="scores"):
        page.overflow([1.0, 2.0])  # nothing overflows: the section has nothing to show


def test_the_measurement_sentences_state_the_tables_numbers():
    values = page.measurement()
    measured = [sc.measure_scaling(d) for d in sc.MEASURE_DIMS]
    _, rows = values["tbl_saturation"]
    assert rows[-1] == [str(sc.MEASURE_DIMS[-1])] + [
        fmt.fmt(measured[-1][k])
        for k in ("max_weight_raw", "max_weight_scaled", "grad_raw", "grad_scaled")
    ]
    assert (values["meas_small_w_raw"], values["meas_big_w_raw"]) == (rows[0][1], rows[-1][1])
    scaled = [fmt.printed(r[2]) for r in rows]
    assert values["meas_w_scaled_range"] == f"{fmt.fmt(min(scaled))} 到 {fmt.fmt(max(scaled))}"
    assert values["meas_uniform"] == fmt.fmt(1 / sc.MEASURE_KEYS)


def test_the_measurement_facts_hold_on_the_page_and_fail_where_they_are_false():
    measured = [sc.measure_scaling(d) for d in sc.MEASURE_DIMS]
    raw = [m["max_weight_raw"] for m in measured]
    scaled = [m["max_weight_scaled"] for m in measured]
    assert raw == sorted(raw) and max(scaled) - min(scaled) < (max(raw) - min(raw)) / 4
    # 「d = 2 时缩放后的值反而略小」: exactly the dimensions where the scaled peak is below the raw one.
    lower = [m["d"] for m in measured if m["grad_scaled"] < m["grad_raw"]]
    assert lower and page.measurement()["meas_lower_ds"] == "、".join(f"d = {d}" for d in lower)
    with pytest.raises(ValueError, match="一路变大"):
        page.measurement(dims=list(reversed(sc.MEASURE_DIMS)))  # the raw peak falls as d "grows"
    with pytest.raises(ValueError, match="雅可比最大元反而略小"):
        page.measurement(dims=sc.MEASURE_DIMS[1:])  # d = 2 gone: scaling never lowers it


def test_the_variance_range_is_the_third_columns():
    values = page.measurement()
    _, rows = values["tbl_variance"]
    third = [fmt.printed(r[2]) for r in rows]
    assert values["meas_scaled_range"] == f"{fmt.fmt(min(third))} 到 {fmt.fmt(max(third))}"


def test_the_variance_is_measured_on_the_scaled_scores():
    m = sc.measure_scaling(6, trials=30, n_keys=5, seed=4)
    assert math.isclose(m["var_scaled"], m["var_raw"] / 6, rel_tol=1e-9)  # the square law, measured


def test_scaling_needs_a_zero_mean_as_well_as_independence():
    # 「均值不为 0 时 … 除以 √d 后仍随 √d 增长」: iid N(1, 1) components, mean of q·k/√d ≈ √d.
    rng = np.random.default_rng(0)
    means = [
        float((rng.normal(1.0, 1.0, (4000, d)) * rng.normal(1.0, 1.0, (4000, d))).sum(1).mean())
        / math.sqrt(d)
        for d in (4, 16, 64)
    ]
    assert [round(m / math.sqrt(d)) for m, d in zip(means, (4, 16, 64))] == [1, 1, 1]
    assert means[0] < means[1] < means[2]


def test_dividing_by_the_root_is_exactly_the_temperature_root_on_f13():
    s = sc.visible_steps(sc.EXAMPLE_Q[sc.QUERY], sc.EXAMPLE_K, sc.EXAMPLE_V)
    same = att.softmax(s["dots"], temperature=s["scale"])
    assert att.max_abs_diff([s["weights"]], [same]) == 0  # 「完全相同」
    assert page.measurement()["temp_sqrt_d"] == fmt.fmt(s["scale"])


# -- figure F13: every sentence from its frame's numbers, on other inputs too --------------------------------
def cells(frame, row, table=0):
    return [c["text"] for c in frame["tables"][table]["rows"][row]]


def marks(frame, table):
    return [[c["highlight"] for c in row] for row in frame["tables"][table]["rows"]]


def check_frames(frames, q, k, v):
    s = sc.visible_steps(q, k, v)
    n_key = len(k)
    assert len(frames) == 3 and all(len(f["tables"]) == 1 for f in frames)
    # One table grows: each step adds its rows (2, 3, 2 of them), marked; the earlier rows stay, unmarked.
    for frame, before, new in zip(frames, (0, 2, 5), (2, 3, 2)):
        assert marks(frame, 0) == [[False] * (n_key + 2)] * before + [[True] * (n_key + 2)] * new
    last = frames[-1]
    # The numbers a sentence states are the ones its rows show, each calculation written by the one
    # function that decides its sign (tested both ways below).
    for j, x in enumerate(s["dots"]):
        assert cells(last, 0)[1 + j] == fmt.fmt(x)
        assert f"q·k_{j} = {page.products(q, k[j])} = {fmt.fmt(x)}" in frames[0]["explanation"]
    top = [j for j, x in enumerate(s["dots"]) if x == max(s["dots"])]
    if min(s["dots"]) < max(s["dots"]):
        assert "（" + "、".join(f"Key {j}" for j in top) + " 最大）" in frames[0]["explanation"]
    else:
        assert "各分数相等" in frames[0]["explanation"]
    for j, (x, e) in enumerate(zip(s["shifted"], s["exps"])):
        assert cells(last, 3)[1 + j] == fmt.fmt(e)
        assert page.exp_term(x, e) in frames[1]["explanation"]
    assert f"和 {page.printed_sum(s['exps'], s['total'])}" in frames[1]["explanation"]
    # The whole-row cells of the exp and weight rows write a sum of the printed cells beside them.
    for row, word, exact in ((3, "和", s["total"]), (4, "权重之和", sum(s["weights"]))):
        shown = sum(fmt.printed(c) for c in cells(last, row)[1:-1])
        sign = "=" if fmt.fmt(shown) == fmt.fmt(exact) else "≈"
        assert cells(last, row)[-1] == f"{word} {sign} {fmt.fmt(exact)}"
    for j in range(n_key):
        assert cells(last, 4)[1 + j] == fmt.fmt(s["weights"][j])
        assert cells(last, 6)[1 + j] == fmt.vector(s["weighted"][j], fmt.fmt)
        written = page.weighted_row(s["weights"][j], v[j], s["weighted"][j])
        assert f"Key {j}：{written}" in frames[2]["explanation"]
    out = cells(last, 6)[-1].removeprefix("输出 = ")
    assert out == fmt.vector(s["output"], fmt.fmt) and f"输出是 {out}" in frames[2]["explanation"]
    assert "不对" not in frames[2]["explanation"]
    for frame in frames:
        assert not re.search(r"-\d", frame["explanation"])  # one minus sign, U+2212


# -- a written-out calculation says "=" only when its printed terms give its printed result -------------------
def test_a_weighted_row_says_equals_only_when_the_printed_weight_gives_the_printed_row():
    assert (
        page.weighted_row(0.6225, [4.0, 0.0], [2.49, 0.0]) == "0.6225 × (4, 0) = (2.4900, 0.0000)"
    )
    # 0.62246 prints as 0.6225, and 0.6225 × 4 is 2.4900, but the product written is 2.4898.
    assert page.weighted_row(0.62246, [4.0, 0.0], [2.48984, 0.0]) == (
        "0.6225 × (4, 0) ≈ (2.4898, 0.0000)"
    )


def test_an_exp_says_equals_only_when_the_printed_argument_gives_the_printed_value():
    assert page.exp_term(-0.5, math.exp(-0.5)) == "exp(−0.5000) = 0.6065"
    # −0.49996 prints as −0.5000, whose exp is 0.6065; the exp written, of −0.49996, is 0.6066.
    assert page.exp_term(-0.49996, math.exp(-0.49996)) == "exp(−0.5000) ≈ 0.6066"


def test_every_written_out_calculation_of_the_page_is_written_by_its_sign_function():
    s = sc.visible_steps(sc.EXAMPLE_Q[sc.QUERY], sc.EXAMPLE_K, sc.EXAMPLE_V)
    text = "".join(f["explanation"] for f in page.f13_frames())
    written = [page.exp_term(x, e) for x, e in zip(s["shifted"], s["exps"])]
    written += [page.weighted_row(*t) for t in zip(s["weights"], sc.EXAMPLE_V, s["weighted"])]
    assert all(w in text for w in written)
    assert f"和 {page.printed_sum(s['exps'], s['total'])}" in text


def test_f13_frames_on_the_pages_example():
    check_frames(page.f13_frames(), sc.EXAMPLE_Q[sc.QUERY], sc.EXAMPLE_K, sc.EXAMPLE_V)


@settings(max_examples=12, deadline=None)
@given(problems())
def test_f13_frames_on_other_inputs(problem):
    q, k, v = problem
    check_frames(page.f13_frames(q[0], k, v), q[0], k, v)


def test_f13_sentence_flags_an_output_outside_the_values():
    s = dict(sc.visible_steps([1.0], [[1.0], [0.0]], [[0.0], [1.0]]))
    s["output"] = [5.0]  # a wrong mix
    s["query"] = [1.0]
    s["keys"] = [[1.0], [0.0]]
    assert "不对" in page.f13_explanations(s, [[0.0], [1.0]])[-1]


@pytest.mark.parametrize(
    "args, words",
    [
        (([1.0, 2.0], [[1.0]], [[1.0]]), "列数"),
        ((None, None, None), None),
        (("x", None, None), "query"),
        (([1.0], [[math.inf]], [[1.0]]), "keys"),
        (([1.0], [[1.0]], [[1.0], [2.0]]), "values"),
    ],
)
def test_f13_frames_name_bad_input(args, words):
    if words is None:  # no arguments: the page's example
        assert len(page.f13_frames(*args)) == len(page.STEP_NAMES)
        return
    with pytest.raises(ValueError, match=words):
        page.f13_frames(*args)


# -- the exercises ------------------------------------------------------------------------------------------
def test_exercise_one_on_other_inputs():
    q = [1.0, -1.0]
    k = [[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]
    g = [1.0, 0.0, -1.0]
    values = page.exercise_hand(q, k, g)
    header, rows = values["ex1_steps"]
    h = ex.hand_row(q, k, g)
    assert header == ["步骤", "Key 0", "Key 1", "Key 2"]
    assert rows[0][2] == "1×0 + −1×2 = −2.0000" and rows[2][1:] == [
        fmt.fmt(x) for x in h["shifted"]
    ]
    assert [r[1:] for r in rows[-3:]] == [[fmt.fmt(x) for x in r] for r in h["jacobian"]]
    assert values["ex1_jg"] == fmt.vector(h["jg"], fmt.fmt) and values["ex1_peak"] == fmt.fmt(
        h["peak"]
    )
    assert values["ex1_total"].endswith(fmt.fmt(h["total"]))


def test_the_jg_sentence_says_how_far_past_the_largest_entry():
    values = page.exercise_hand()
    h = ex.hand_row()
    ratio = max(abs(x) for x in h["jg"]) / h["peak"]
    assert ratio > 1 and values["ex1_ratio"] == fmt.multiple(ratio)
    # g = (1, 1): J·g = 0 (each row of J sums to 0), within the largest entry: the page's words fail.
    with pytest.raises(ValueError, match="J g"):
        page.exercise_hand(g=[1.0] * len(ex.HAND_K))


@settings(max_examples=15, deadline=None)
@given(
    st.lists(st.integers(-3, 3), min_size=2, max_size=2),
    st.lists(st.lists(st.integers(-3, 3), min_size=2, max_size=2), min_size=2, max_size=4),
    st.integers(1, 6),
)
def test_the_growth_table_follows_the_copied_row_and_its_words_hold_or_stop(q, k, copies):
    q = [float(x) for x in q]
    k = [[float(x) for x in row] for row in k]
    r = ex.copied_row(q, k, copies)
    same = att.softmax(r["scaled"], temperature=r["temperature_big"])
    facts = att.max_abs_diff([r["weights_big"]], [same]) == 0 and max(r["weights_raw"]) > 0.9
    if not facts:  # 「完全相同」 or 「几乎全给了」 is false here: the build stops
        with pytest.raises(ValueError, match="缩放一页的固定说法"):
            page.exercise_grow(q, k, copies)
        return
    values = page.exercise_grow(q, k, copies)
    _, rows = values["ex2_table"]
    assert [row[0] for row in rows] == [
        "d = 2，除以 √2",
        f"d = {2 * copies}，除以 √{2 * copies}",
        f"d = {2 * copies}，不缩放",
    ]
    for row, key in zip(rows, ("weights", "weights_big", "weights_raw")):
        assert row[3] == " / ".join(fmt.fmt(x) for x in r[key]) and row[4] == fmt.fmt(max(r[key]))
    assert rows[1][2] == fmt.fmt(1 / math.sqrt(copies))
    top = max(range(len(k)), key=lambda j: r["weights_raw"][j])
    assert (values["ex2_peak_raw"], values["ex2_top"]) == (fmt.fmt(r["weights_raw"][top]), str(top))


def test_the_growth_words_hold_on_the_page_and_fail_where_they_are_false():
    r = ex.copied_row()
    assert max(r["weights_raw"]) > 0.9  # 「几乎全给了」
    same = att.softmax(r["scaled"], temperature=r["temperature_big"])
    assert att.max_abs_diff([r["weights_big"]], [same]) == 0  # 「完全相同」
    page.exercise_grow()
    with pytest.raises(ValueError, match="几乎全部权重"):
        page.exercise_grow(q=[1.0, 0.0], k=[[1.0, 0.0], [0.0, 1.0]], copies=1)


def test_the_reader_may_word_the_bad_input_message():
    # The exercise lets the reader write the reason: its doctest compares the exception's type only.
    raising = [
        e
        for e in doctest.DocTestParser().get_examples(inspect.getdoc(ex.shifted_softmax))
        if e.exc_msg is not None
    ]
    assert raising and all(e.options.get(doctest.IGNORE_EXCEPTION_DETAIL) for e in raising)
    assert "IGNORE_EXCEPTION_DETAIL" in page.exercise_code()["ex3_doctest"]  # shown as it runs


def test_a_printed_sum_says_equals_only_when_the_printed_cells_add_up_to_it():
    assert page.printed_sum([0.5, 0.5], 1.0) == "= 1.0000"
    assert (
        page.printed_sum([0.13534, 0.60653, 1.0], 1.74187) == "≈ 1.7419"
    )  # the printed cells add up to 1.7418


def test_the_underflow_example_really_underflows():
    values = page.overflow(small=[0.0, -800.0, -1.0])
    assert values["under_exps"] == page.python_list([1.0, 0.0, math.exp(-1.0)], cell=fmt.fmt)
    with pytest.raises(ValueError, match="small"):
        page.overflow(small=[0.0, -1.0])


def test_numpys_warnings_are_recorded_not_silenced():
    said = page.overflow([800.0, 799.0])["np_warnings"]
    assert "RuntimeWarning: overflow encountered in exp" in said and "invalid value" in said
