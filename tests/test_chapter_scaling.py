"""Tests of book/chapter/scaling.py: each sentence, table and frame of the scaling page states its own numbers.

Each section takes no arguments and reads its inputs from the teaching files' constants (and ``SHIFT``,
``ORDER``); a test runs it on other inputs by planting other constants, and a fact of the page's fixed
sentences planted false must stop the build naming page, section and fact. Figure F13's frames are
checked on other rows (hypothesis) through ``row_frames``. No build: fast unit tests.
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
from chapter.page import Section

# The teaching code's tests keep the shared strategies and the fuzz (code/tests/reference.py).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "code" / "tests"))
from reference import reals, unmasked_problems  # noqa: E402

att = importlib.import_module("02_attention")
sc = importlib.import_module("02_scaling")
ex = importlib.import_module("02_exercises_scaling")

finite = reals(20)
small_int = st.integers(-3, 3).map(float)
SECTIONS = [
    page.f13,
    page.measurement,
    page.overflow,
    page.axis,
    page.checks,
    page.sweep,
    page.hand_exercise,
    page.grow_exercise,
]  # code_exercise: a doctest, typed as Python; run_output: the teaching file's JSON


def problems(cells=small_int):
    """Random Q, K, V without a mask (every query reads every key)."""
    return unmasked_problems(cells, max_d=5, max_keys=4)


def texts(values: dict):
    """Every text a section glues, table cells included."""
    for value in values.values():
        if isinstance(value, fmt.Table):
            yield from value.header
            for row in value.rows:
                yield from row
        else:
            yield value


def fails(fact: str):
    """The build stops, naming the page and the fact (the section's title in between)."""
    return pytest.raises(
        ValueError, match=rf"^{page.PAGE}「.*」的固定说法与这次算出的不符：.*{fact}"
    )


def example(mp, q, k, v, row=0):
    """Plant another example in place of the page's (F13's Q, K, V and query row)."""
    for name, value in (("EXAMPLE_Q", q), ("EXAMPLE_K", k), ("EXAMPLE_V", v), ("QUERY", row)):
        mp.setattr(sc, name, value)


# -- the shape of the module ---------------------------------------------------------------------------------
def test_each_exercise_is_a_section():
    assert all(isinstance(s, Section) for s in page.exercises())


def test_the_page_types_the_inputs_the_sections_read():
    text = (Path(__file__).resolve().parents[1] / "book" / "ch02" / "scaling.md").read_text(
        encoding="utf-8"
    )
    for name in ("EXAMPLE_Q", "EXAMPLE_K", "EXAMPLE_V", "QUERY", "TEMPERATURES", "MEASURE_SEED"):
        assert f"<02_scaling:{name}>`" in text, name
    for name in ("HAND_Q", "HAND_G", "GROW_K", "COPIES", "CODE_SCORES"):
        assert f"<02_exercises_scaling:{name}>`" in text, name
    assert "<chapter.scaling:SHIFT>`" in text


# -- the kinds of number this page adds to chapter.fmt -----------------------------------------------------
def test_a_difference_has_one_digit_and_the_printed_minus():
    assert fmt.sci(4.440892098500626e-16) == "4.4 × 10⁻¹⁶"
    assert fmt.sci(3.0) == "3.0 × 10⁰"


def test_the_float_limits_are_numpys_in_scientific_notation():
    rows = page.overflow().values["tbl_limits"].rows
    assert [r[1] for r in rows] == [
        fmt.sci(float(np.finfo(t).max)) for t in ("float16", "float32", "float64")
    ]


def test_every_printed_number_of_the_page_uses_the_one_minus_sign():
    for section in SECTIONS:
        for text in texts(section().values):
            assert not re.search(r"-\d", str(text)), text


def test_computed_numbers_print_with_four_decimals_and_differences_by_the_rule():
    f13 = page.f13_frames()[0]["tables"][0]["rows"]
    s = sc.visible_steps(sc.EXAMPLE_Q[sc.QUERY], sc.EXAMPLE_K, sc.EXAMPLE_V)
    assert [c["text"] for c in f13[0][1:-1]] == [fmt.fmt(x) for x in s["dots"]]  # 5.0000, not 5
    assert page.measurement().values["temp_sqrt_d"] == fmt.fmt(s["scale"])
    rows = page.grow_exercise().values["ex2_table"].rows
    assert [r[2] for r in rows] == [
        fmt.fmt(t) for t in (1.0, 1 / math.sqrt(ex.COPIES), 1 / (ex.COPIES * math.sqrt(2)))
    ]
    # A difference of 10⁻³ or more is a plain four-decimal number, never 3.6 × 10⁻¹.
    assert fmt.difference(0.36) == "0.3600"
    assert all(not c.endswith("× 10⁻¹") for c in page.checks().values.values())


# -- the wrong axis, the wrong d, the checks ----------------------------------------------------------------
def test_the_wrong_axis_facts_hold_on_the_page_and_fail_where_they_are_false(monkeypatch):
    table = page.axis().values["tbl_axis_wrong"].rows  # columns sum to 1, no row does
    assert table[-1][1:-1] == ["1.0000"] * len(sc.EXAMPLE_K)
    assert all(row[-1] != "1.0000" for row in table[:-1])
    # Key 0 gives almost all of itself to query 0, key 1 a third to each: the rows sum to about 4/3,
    # 1/3 and 1/3, and with V = (1), (1) every output leaves V's range.
    example(
        monkeypatch, [[5.0, 0.0], [0.0, 0.0], [0.0, 0.0]], [[5.0, 0.0], [0.0, 0.0]], [[1.0], [1.0]]
    )
    with fails("wrong_outputs_inside_v"):
        page.axis()
    # Two equal queries share every key half and half: each row sums to exactly 1.
    example(monkeypatch, [[1.0], [1.0]], [[1.0], [2.0]], [[0.0], [1.0]])
    with fails("no_wrong_row_sums_to_one"):
        page.axis()


def test_the_wrong_axis_outputs_inside_is_the_numpy_verdict():
    wrong = sc.softmax_over_queries(att.scaled_scores(sc.EXAMPLE_Q, sc.EXAMPLE_K))
    out = np.asarray(wrong) @ np.asarray(sc.EXAMPLE_V)
    v = np.asarray(sc.EXAMPLE_V)
    assert ((out >= v.min(0) - 1e-12) & (out <= v.max(0) + 1e-12)).all()  # what the page says
    shown = page.axis().values["axis_wrong_shown"]
    assert shown == "、".join(fmt.vector(o, fmt.fmt) for o in out)
    outputs = [[1.0, 2.0], [7.0, 2.0], [0.0, -1.0], [6.0, 0.0]]
    assert page.inside(outputs, [[0.0, 0.0], [6.0, 6.0]]) == [True, False, False, True]


def test_the_checks_table_catches_each_mistake_on_other_inputs(monkeypatch):
    q = [[1.0, 0.0, 2.0], [0.0, 3.0, 1.0]]
    k = [[1.0, 1.0, 0.0], [2.0, 0.0, 1.0], [0.0, 1.0, 3.0]]
    v = [[1.0], [5.0], [9.0]]
    example(monkeypatch, q, k, v, row=1)
    monkeypatch.setattr(page, "ORDER", (1, 2, 0))
    values = page.checks().values
    right = [values[f"chk_{name}_right"] for name in ("sum", "shift", "order", "numpy")]
    assert all(x == "0" or "× 10⁻" in x for x in right)  # rounding only
    wrong = [fmt.printed(values[f"chk_{name}_wrong"]) for name in ("sum", "order", "numpy")]
    assert all(x > 1e-3 for x in wrong)
    assert (values["chk_order"], values["chk_width"], values["chk_root"]) == (
        "Key 1、Key 2、Key 0",
        "12",
        fmt.fmt(12**0.5),
    )
    # The page says the naive formula overflows: a shift too small to overflow stops the build.
    monkeypatch.setattr(page, "SHIFT", 1)
    with fails("naive_formula_overflows_after_the_shift"):
        page.checks()


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
    rows = sc.temperature_sweep(sc.visible_steps(q[0], k, v)["scaled"], v, ts)
    cold = min(rows, key=lambda r: r["temperature"])
    hot = max(rows, key=lambda r: r["temperature"])
    with pytest.MonkeyPatch.context() as mp:
        example(mp, q, k, v)
        mp.setattr(sc, "TEMPERATURES", ts)
        if not max(hot["weights"]) < max(cold["weights"]):  # 「降到」 is false: the build stops
            with fails("peak_falls_as_t_grows"):
                page.sweep()
            return
        values = page.sweep().values
    top = int(np.argmax(cold["weights"]))
    mean = np.mean(v, axis=0)
    assert [values["sweep_t_0"], values["sweep_t_1"]] == [fmt.short(min(ts)), fmt.short(max(ts))]
    assert [values["sweep_peak_0"], values["sweep_peak_1"]] == [
        fmt.fmt(max(r["weights"])) for r in (cold, hot)
    ]
    assert values["sweep_top"] == str(top) and values["sweep_top_v"] == fmt.vector(v[top])
    assert [values["sweep_to_top_0"], values["sweep_to_top_1"]] == [
        fmt.fmt(math.dist(r["output"], v[top])) for r in (cold, hot)
    ]
    assert [values["sweep_to_mean_0"], values["sweep_to_mean_1"]] == [
        fmt.fmt(float(np.linalg.norm(np.asarray(r["output"]) - mean))) for r in (cold, hot)
    ]


def test_the_sweep_table_and_sentence_come_from_the_same_rows(monkeypatch):
    monkeypatch.setattr(sc, "TEMPERATURES", [0.5, 8.0])
    values = page.sweep().values
    rows = values["tbl_sweep"].rows
    assert [r[0] for r in rows] == ["0.5", "8"]  # inputs, as typed
    assert [values["sweep_peak_0"], values["sweep_peak_1"]] == [rows[0][2], rows[1][2]]


# -- the overflow section and the measurement --------------------------------------------------------------
def test_the_overflow_section_on_another_row(monkeypatch):
    monkeypatch.setattr(sc, "BIG_SCORES", [800.0, 799.0])
    values = page.overflow().values
    assert (
        values["big_max"] == "800"
        and values["np_exp"] == "[inf, inf]"
        and values["np_naive"] == "[nan, nan]"
    )
    assert values["naive_error"].startswith("values[0] = 800：exp 溢出")
    assert values["stable_big"] == page.python_list(att.softmax([800.0, 799.0]), cell=fmt.fmt)
    said = values["np_warnings"]  # numpy's warnings are recorded, not silenced
    assert "RuntimeWarning: overflow encountered in exp" in said and "invalid value" in said
    monkeypatch.setattr(sc, "BIG_SCORES", [1.0, 2.0])  # nothing overflows: the sentences are false
    with fails("python_exp_overflows、numpy_warns、naive_softmax_refuses"):
        page.overflow()


def test_the_underflow_example_really_underflows(monkeypatch):
    monkeypatch.setattr(sc, "SMALL_SCORES", [0.0, -800.0, -1.0])
    exps = page.overflow().values["under_exps"]
    assert exps == page.python_list([1.0, 0.0, math.exp(-1.0)], cell=fmt.fmt)
    monkeypatch.setattr(sc, "SMALL_SCORES", [0.0, -1.0])
    with fails("a_weight_underflows_to_zero"):
        page.overflow()


def test_the_measurement_sentences_state_the_tables_numbers():
    values = page.measurement().values
    measured = [sc.measure_scaling(d) for d in sc.MEASURE_DIMS]
    rows = values["tbl_saturation"].rows
    assert rows[-1] == [str(sc.MEASURE_DIMS[-1])] + [
        fmt.fmt(measured[-1][k])
        for k in ("max_weight_raw", "max_weight_scaled", "grad_raw", "grad_scaled")
    ]
    assert (values["meas_small_w_raw"], values["meas_big_w_raw"]) == (rows[0][1], rows[-1][1])
    scaled = [fmt.printed(r[2]) for r in rows]
    assert values["meas_w_scaled_range"] == f"{fmt.fmt(min(scaled))} 到 {fmt.fmt(max(scaled))}"
    assert values["meas_uniform"] == fmt.fmt(1 / sc.MEASURE_KEYS)
    third = [fmt.printed(r[2]) for r in values["tbl_variance"].rows]
    assert values["meas_scaled_range"] == f"{fmt.fmt(min(third))} 到 {fmt.fmt(max(third))}"


def test_the_measurement_facts_hold_on_the_page_and_fail_where_they_are_false(monkeypatch):
    measured = [sc.measure_scaling(d) for d in sc.MEASURE_DIMS]
    raw = [m["max_weight_raw"] for m in measured]
    scaled = [m["max_weight_scaled"] for m in measured]
    assert raw == sorted(raw) and max(scaled) - min(scaled) < (max(raw) - min(raw)) / 4
    # 「d = 2 时缩放后的值反而略小」: exactly the dimensions where the scaled peak is below the raw one.
    lower = [m["d"] for m in measured if m["grad_scaled"] < m["grad_raw"]]
    shown = page.measurement().values["meas_lower_ds"]
    assert lower and shown == "、".join(f"d = {d}" for d in lower)
    monkeypatch.setattr(sc, "MEASURE_DIMS", list(reversed(sc.MEASURE_DIMS)))
    with fails("raw_peak_grows_with_d"):
        page.measurement()  # the raw peak falls as d "grows"
    monkeypatch.setattr(sc, "MEASURE_DIMS", sorted(sc.MEASURE_DIMS)[1:])
    with fails("scaling_lowers_the_jacobian_only_at_small_d"):
        page.measurement()  # d = 2 gone: scaling never lowers it


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
    assert page.measurement().values["temp_sqrt_d"] == fmt.fmt(s["scale"])


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
        assert f"q·k_{j} = {page.products(q, k[j], x)}" in frames[0]["explanation"]
    top = [j for j, x in enumerate(s["dots"]) if x == max(s["dots"])]
    if min(s["dots"]) < max(s["dots"]):
        assert "（" + "、".join(f"Key {j}" for j in top) + " 最大）" in frames[0]["explanation"]
    else:
        assert "各分数相等" in frames[0]["explanation"]
    for j, (x, e) in enumerate(zip(s["shifted"], s["exps"])):
        assert cells(last, 3)[1 + j] == fmt.fmt(e)
        assert str(page.exp_term(x, e)) in frames[1]["explanation"]
    assert f"和 {fmt.printed_sum(s['exps'], s['total']).result}" in frames[1]["explanation"]
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
    assert str(page.exp_term(-0.5, math.exp(-0.5))) == "exp(−0.5000) = 0.6065"
    # −0.49996 prints as −0.5000, whose exp is 0.6065; the exp written, of −0.49996, is 0.6066.
    assert str(page.exp_term(-0.49996, math.exp(-0.49996))) == "exp(−0.5000) ≈ 0.6066"


def test_every_written_out_calculation_of_the_page_is_written_by_its_sign_function():
    s = sc.visible_steps(sc.EXAMPLE_Q[sc.QUERY], sc.EXAMPLE_K, sc.EXAMPLE_V)
    text = "".join(f["explanation"] for f in page.f13_frames())
    written = [str(page.exp_term(x, e)) for x, e in zip(s["shifted"], s["exps"])]
    written += [page.weighted_row(*t) for t in zip(s["weights"], sc.EXAMPLE_V, s["weighted"])]
    assert all(w in text for w in written)
    assert f"和 {fmt.printed_sum(s['exps'], s['total']).result}" in text


def test_f13_frames_on_the_pages_example():
    check_frames(page.f13_frames(), sc.EXAMPLE_Q[sc.QUERY], sc.EXAMPLE_K, sc.EXAMPLE_V)


@settings(max_examples=12, deadline=None)
@given(problems())
def test_f13_frames_on_other_inputs(problem):
    q, k, v = problem
    check_frames(page.row_frames(q[0], k, v), q[0], k, v)


def test_f13_sentence_flags_an_output_outside_the_values():
    s = dict(sc.visible_steps([1.0], [[1.0], [0.0]], [[0.0], [1.0]]))
    s["output"] = [5.0]  # a wrong mix
    s["query"] = [1.0]
    s["keys"] = [[1.0], [0.0]]
    assert "不对" in page.f13_explanations(s, [[0.0], [1.0]])[-1]


# -- the exercises ------------------------------------------------------------------------------------------
def test_exercise_one_on_other_inputs(monkeypatch):
    q = [1.0, -1.0]
    k = [[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]
    g = [1.0, 0.0, -1.0]
    for name, value in (("HAND_Q", q), ("HAND_K", k), ("HAND_G", g)):
        monkeypatch.setattr(ex, name, value)
    values = page.hand_exercise().values
    header, rows = values["ex1_steps"]
    h = ex.hand_row(q, k, g)
    assert header == ["步骤", "Key 0", "Key 1", "Key 2"]
    assert rows[0][2] == "1×0 + −1×2 = −2.0000"
    assert rows[2][1:] == [fmt.fmt(x) for x in h["shifted"]]
    assert [r[1:] for r in rows[-3:]] == [[fmt.fmt(x) for x in r] for r in h["jacobian"]]
    assert values["ex1_jg"] == fmt.vector(h["jg"], fmt.fmt)
    assert values["ex1_peak"] == fmt.fmt(h["peak"])
    assert values["ex1_total"].endswith(fmt.fmt(h["total"]))


def test_the_jg_sentence_says_how_far_past_the_largest_entry(monkeypatch):
    values = page.hand_exercise().values
    h = ex.hand_row()
    ratio = max(abs(x) for x in h["jg"]) / h["peak"]
    assert ratio > 1 and values["ex1_ratio"] == fmt.multiple(ratio)
    # g = (1, 1): J·g = 0 (each row of J sums to 0), within the largest entry: the page's words fail.
    monkeypatch.setattr(ex, "HAND_G", [1.0] * len(ex.HAND_K))
    with fails("jg_exceeds_the_largest_entry"):
        page.hand_exercise()


def grown(q, k, copies):
    """The growth exercise's section on other inputs (planted in place of the teaching constants)."""
    with pytest.MonkeyPatch.context() as mp:
        for name, value in (("GROW_Q", q), ("GROW_K", k), ("COPIES", copies)):
            mp.setattr(ex, name, value)
        return page.grow_exercise().values


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
        with fails(""):
            grown(q, k, copies)
        return
    values = grown(q, k, copies)
    rows = values["ex2_table"].rows
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
    page.grow_exercise()
    with fails("unscaled_gives_one_key_almost_all"):
        grown([1.0, 0.0], [[1.0, 0.0], [0.0, 1.0]], 1)


def test_the_reader_may_word_the_bad_input_message():
    # The exercise lets the reader write the reason: its doctest compares the exception's type only.
    raising = [
        e
        for e in doctest.DocTestParser().get_examples(inspect.getdoc(ex.shifted_softmax))
        if e.exc_msg is not None
    ]
    assert raising and all(e.options.get(doctest.IGNORE_EXCEPTION_DETAIL) for e in raising)
    assert (
        "IGNORE_EXCEPTION_DETAIL" in page.code_exercise().values["ex3_doctest"]
    )  # shown as it runs


def test_a_written_out_calculation_that_does_not_add_up_stops_the_build(monkeypatch):
    steps = sc.visible_steps

    def wrong_product(q, k, v):  # the first key's weighted V row off by 0.01
        s = steps(q, k, v)
        return {**s, "weighted": [[x + 0.01 for x in s["weighted"][0]], *s["weighted"][1:]]}

    monkeypatch.setattr(sc, "visible_steps", wrong_product)
    with pytest.raises(ValueError, match="written_rows_add_up"):
        page.f13_frames()
