"""The backprop page's book side (book/chapter/backprop.py): numbers as printed, tables, the facts its prose reads.

Fast unit tests, no build. Each section takes no arguments: a fact of the page's fixed sentences is
planted false by changing what a teaching function returns, and the section must stop the build naming
the fact; the page's own numbers are checked in tests/test_page_backprop.py.
"""

from __future__ import annotations

import importlib
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chapter import backprop as page
from chapter import fmt
from chapter.page import Section

att = importlib.import_module("02_attention")
bp = importlib.import_module("02_backprop")
ex = importlib.import_module("02_exercises_backprop")

fast = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
small = st.floats(min_value=-2, max_value=2, allow_nan=False, allow_infinity=False)


def matrix(rows, cols, elements=small):
    return st.lists(st.lists(elements, min_size=cols, max_size=cols), min_size=rows, max_size=rows)


# -- numbers ------------------------------------------------------------------------------------------------
def test_exact_zero_and_the_machine_precision_are_written_as_the_page_does():
    assert page.zero([0.0, -0.0]) and not page.zero([0.0, 1e-17])  # 恰为 0: ``==``, no tolerance
    v = page.step_sizes().values
    assert (v["eps64"], v["eps32"]) == ("2⁻⁵²", "2⁻²³")


def test_a_written_out_product_says_approximately_when_rounding_moved_the_last_digit():
    # 0.3302 × (−1 − (−2.3395)) with printed factors is 0.44230…, the exact cell 0.44236 prints 0.4424
    cell = page.ds_cell(0.33022, -1.0, -2.33947, 0.44236)
    assert str(cell) == "0.3302×(−1.0000 − (−2.3395)) ≈ 0.4424" and cell.adds_up
    product = fmt.products(
        [(page.val(0.5), page.inp(2.0)), (page.val(-0.25), page.inp(-1.0))], 1.25
    )
    assert str(product) == "0.5000×2 + (−0.2500)×(−1) = 1.2500" and product.adds_up
    scaled = fmt.products([("1.0000", "1")], 1 / math.sqrt(2), sqrt_of=2)
    assert str(scaled) == "(1.0000×1) / √2 = 0.7071" and scaled.adds_up
    # A wrong term is no rounding: the section holds adds_up, so the build stops.
    assert not fmt.products([("1.0000", "2")], 1 / math.sqrt(2), sqrt_of=2).adds_up


def test_float32_rounds_as_numpy_does():
    np = pytest.importorskip("numpy")
    for x in (0.1, -1e9 + 0.7071, 1 / 3, -1e9):
        assert page.float32(x) == float(np.float32(x))


# -- the sections' numbers ----------------------------------------------------------------------------------
def test_the_worked_example_writes_out_the_cells_its_tables_show():
    values = page.worked().values
    steps = bp.backward_steps(*page.EXAMPLE, att.visibility(3, 3))
    assert values["tbl_ex_dv"].rows[0] == ["Key 0"] + [fmt.fmt(x) for x in steps["dv"][0]]
    assert values["calc_dv"].endswith(fmt.fmt(steps["dv"][0][0]))
    assert values["calc_dv"].count("×") == 3  # one product per query that reads Key 0
    assert values["calc_dq"].startswith("(") and "/ √2" in values["calc_dq"]
    assert values["calc_ds"].endswith(fmt.fmt(steps["ds"][1][0]))
    assert values["tbl_ex_dq"].rows[0] == [
        "查询 0（位置 0）",
        "0.0000",
        "0.0000",
    ]  # reads only itself
    texts = [t.get_text() for t in values["fig_chain"].axes[0].texts]
    assert fmt.fmt(steps["dk"][2][1]) in texts and texts.count("−∞") == 3  # forbidden: −∞
    assert values["tbl_ex_s"].rows[0][2:] == ["−∞"] * 2
    assert (values["ex_n"], values["ex_d"]) == ("3", "2")


@fast
@given(st.integers(1, 3), st.integers(0, 2), st.data())
def test_the_zero_facts_count_what_the_tables_show(n_query, past, data):
    n_key = past + n_query
    key_valid = data.draw(st.lists(st.booleans(), min_size=n_key, max_size=n_key))
    q, k, v, d_out = (
        data.draw(matrix(r, c)) for r, c in ((n_query, 2), (n_key, 2), (n_key, 1), (n_query, 1))
    )
    visible = att.visibility(n_query, n_key, past=past, key_valid=key_valid)
    s = Section(page.PAGE, "测试")
    page.zero_facts(s, bp.backward_steps(q, k, v, d_out, visible, empty_row="zero"), "t")
    forbidden = str(sum(not ok for row in visible for ok in row))
    facts = s.values
    assert facts["t_forbidden"] == facts["t_zero_p"] == facts["t_zero_ds"] == forbidden
    unread = [j for j in range(n_key) if not any(row[j] for row in visible)]
    assert facts["t_unread"] == ("、".join(f"Key {j}" for j in unread) or "无")


def test_the_pad_example_counts_the_zeros_its_tables_show():
    values = page.pad_key().values
    assert values["pad_key"] == str(page.PAD.index(False))
    assert values["tbl_pad_kv"].rows[2] == ["Key 2"] + ["0.0000"] * 4
    # the causal rule forbids 3 cells; the PAD key adds one, its own query's
    assert (values["pad_forbidden"], values["pad_zero_p"], values["pad_zero_ds"]) == ("4", "4", "4")
    assert values["pad_unread"] == "Key 2"


def test_the_mutant_facts_name_what_each_check_caught(monkeypatch):
    monkeypatch.setattr(
        page, "MUTANTS", {"甲": bp.wrong_backward_no_rowsum, "乙": bp.wrong_backward_forgets_d_out}
    )
    v = page.gradient_check().values
    assert (v["caught_rand"], v["caught_ones"], v["passed_both"]) == (
        "2 个（甲、乙）",
        "1 个（甲）",
        "无",
    )


def test_the_mutant_table_and_its_facts_agree():
    values = page.gradient_check().values
    verdicts = {
        r[0]: (r[2] == page.VERDICT[True], r[4] == page.VERDICT[True])
        for r in values["tbl_mutants"].rows
    }
    assert verdicts == {
        "正确": (True, True),
        "丢掉修正项": (False, False),
        "忘乘 dO": (True, False),
        "dV 漏了转置": (False, False),
    }  # all ones do catch a missing transpose
    assert (
        values["passed_both"] == "正确" and values["mutant_gap"] == "0"
    )  # times 1 changes nothing
    assert values["rand_do"] == fmt.vectors(page.random_d_out())


def test_the_policy_table_follows_the_empty_row_and_the_pad_key():
    values = page.empty_row().values
    header, rows = values["tbl_policies"]
    assert "查询 0 的输出" in header and "Key 0（PAD）的 dV" in header
    table = {r[0]: r for r in rows}
    assert table["error：报错"][1:] == ["报错，不计算"] + ["—"] * 4  # said once, not in every cell
    assert table["zero：输出 0"][1:3] == ["(0.0000, 0.0000)", "(0.0000, 0.0000)"]
    # every key's dV is NaN (3 keys × 2 columns); S + M also spoils the empty row's dQ and every dK
    assert table["演示：换成 −∞（masked_fill / where）"][4:] == ["6", "6"]
    assert table["演示：加上 −∞（S + M）"][2] == "(NaN, NaN)"
    assert table["演示：加上 −∞（S + M）"][4:] == [str(2 + 6 + 6)] * 2
    assert values["left_row"] == "0" and values["pol_rows"] == "第 0 行"
    assert (values["nan_w_total"], values["nan_w_count"]) == ("4", "4")


def test_the_added_big_fill_follows_the_scores_of_the_empty_row():
    values = page.empty_row().values
    scores = att.scaled_scores(bp.EXAMPLE_Q, bp.EXAMPLE_K)[0]
    assert values["added_big_p"] == fmt.slashed(att.softmax(scores))  # as if nothing were added


def test_the_check_passes_under_every_mask_and_the_best_step_is_in_the_table():
    configs = page.masks().values
    assert [r[-1] for r in configs["tbl_configs"].rows] == [page.VERDICT[True]] * 5
    assert configs["configs_passed"] == configs["configs_n"] == "5"
    assert configs["tbl_configs"].rows[3][0] == f"缓存 past = {page.CACHE_PAST}"
    steps = page.step_sizes().values
    table = steps["tbl_h"].rows
    assert [r[0] for r in table] == [fmt.power(eps) for eps in page.STEPS]
    assert steps["h_best"] in [r[0] for r in table] and steps["h_best_err"] in [r[1] for r in table]


def test_the_exercise_facts_come_from_the_answers():
    values = {k: v for s in page.exercises() for k, v in s.values.items()}
    assert values["x3_zero_keys"] == values["x3_unread"] == "Key 0"
    assert values["x3_forbidden"] == values["x3_zero_p"] == values["x3_zero_ds"]
    (_, given), (_, orth) = ex.correction_cases()["cases"].items()
    assert values["x4_orth_gap"] == "0" and values["x4_given_gap"] == fmt.difference(given["gap"])
    # the question names its measure: the largest absolute difference over dQ, dK and dV together
    right = bp.attention_backward(ex.CORR_Q, ex.CORR_K, ex.CORR_V, given["d_out"])
    dropped = bp.wrong_backward_no_rowsum(ex.CORR_Q, ex.CORR_K, ex.CORR_V, given["d_out"])
    gaps = [att.max_abs_diff(a, b) for a, b in zip(right, dropped)]
    assert values["x4_gaps"].rows[0][2:] == [fmt.difference(g) for g in gaps + [max(gaps)]]
    assert gaps[2] == 0.0 and values["x4_given_where"] == ["dQ", "dK"][gaps.index(max(gaps))]
    assert all(r[-1].endswith("= 0.0000") for r in values["x4_rows"].rows)  # dO⊥ ⟂ O
    assert values["x5_doctest"].startswith("```pycon\n>>> rowsum_correction(")


def test_no_generated_text_asks_and_answers_itself():
    """No 「…吗？是。」: a glued clause states the fact (the kind of item 33 of the review)."""
    texts = [v for s in page.exercises() for v in s.values.values() if type(v) is str]
    assert not any(t in ("是", "不是") for t in texts) and not any("吗？" in t for t in texts)


# -- the page's fixed sentences: a fact planted false stops the build, naming page, section and fact -------
def planted(monkeypatch, module, name, change):
    original = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **kw: change(original(*a, **kw), *a, **kw))


def test_a_nonzero_gradient_where_the_page_says_exactly_zero_stops_the_build(monkeypatch):
    def leak(out, *a, **kw):
        out["dq"][0] = [x + 1e-17 for x in out["dq"][0]]
        return out

    planted(monkeypatch, bp, "backward_steps", leak)
    with pytest.raises(ValueError, match="反向传播一页「按推导顺序」.*first_query_dq_zero"):
        page.worked()


def test_a_finite_fill_that_leaks_weight_stops_the_build(monkeypatch):
    def leak(out, *a, fill, **kw):
        if fill == page.BIG:
            out["weights"] = [[w or 1e-17 for w in row] for row in out["weights"]]
        return out

    planted(monkeypatch, bp, "fill_backward_demo", leak)
    with pytest.raises(ValueError, match="「mask 在反向传播里」.*finite_fills_same_as_inf"):
        page.forbidden()


@pytest.mark.parametrize(
    ("fill", "added", "fact"),
    [
        (-1e9, False, "big_fill_no_nan"),  # were the −1e9 fill to give a NaN gradient
        (-math.inf, False, "where_keeps_dq_dk_finite"),  # were where's −∞ to spoil dQ too
    ],
)
def test_a_planted_nan_stops_the_build_naming_the_fact(monkeypatch, fill, added, fact):
    def spoil(out, *a, **kw):
        if (kw["fill"], kw.get("added", False)) == (fill, added):
            out["dq"] = [[math.nan] * len(row) for row in out["dq"]]
        return out

    planted(monkeypatch, bp, "fill_backward_demo", spoil)
    with pytest.raises(ValueError, match=f"「整行都被禁止」.*{fact}"):
        page.empty_row()


def test_a_pad_key_without_a_gradient_from_the_big_fill_stops_the_build(monkeypatch):
    def no_gradient(out, *a, **kw):
        if kw["fill"] == page.BIG:
            out["dv"] = [[0.0] * len(row) for row in out["dv"]]
        return out

    planted(monkeypatch, bp, "fill_backward_demo", no_gradient)
    with pytest.raises(ValueError, match="big_fill_gives_a_pad_key_dv"):
        page.empty_row()


def test_a_fill_that_swallows_the_scores_in_float64_too_stops_the_build(monkeypatch):
    # K3 of the fourth reading: −1e9 *added* in float64 follows the scores; a fill of −1e300 would not
    monkeypatch.setattr(page, "BIG", -1e300)
    with pytest.raises(ValueError, match="big_added_follows_the_scores"):
        page.empty_row()


def test_an_exercise_fact_that_fails_stops_the_build(monkeypatch):
    def skew(out):
        for case in out["cases"].values():
            case["D"] = [1.0] * len(case["D"])  # dO⊥'s correction no longer 0
        return out

    planted(monkeypatch, ex, "correction_cases", skew)
    with pytest.raises(ValueError, match="「练习 修正项 D 什么时候为 0」.*orthogonal_d_zero"):
        page.correction_exercise()


def test_every_section_glues_each_name_once_and_no_float():
    names = []
    sections = [
        page.worked(),
        page.projection(),
        page.forbidden(),
        page.pad_key(),
        page.empty_row(),
        page.gradient_check(),
        page.masks(),
        page.step_sizes(),
        *page.exercises(),
    ]
    for s in sections:
        assert not any(isinstance(v, float) for v in s.values.values()), s.title
        names += list(s.values)
    assert len(names) == len(set(names))


def test_an_added_fill_whose_float32_backward_stops_at_the_scores_stops_the_build(monkeypatch):
    # W1 of the fifth reading: in float32 the added −1e9 averages, but dS still flows back to Q
    def stopped(out, *a, **kw):
        if kw.get("added") and kw.get("dtype") == "float32":
            out["dq"] = [[0.0] * len(row) for row in out["dq"]]
        return out

    planted(monkeypatch, bp, "fill_backward_demo", stopped)
    with pytest.raises(ValueError, match="big_added_in_float32_moves_the_row_dq"):
        page.empty_row()


def test_an_added_infinity_that_spoils_another_rows_dq_stops_the_build(monkeypatch):
    def spoil(out, *a, **kw):
        if kw.get("added") and kw["fill"] == -math.inf:
            out["dq"] = [[math.nan] * len(row) for row in out["dq"]]
        return out

    planted(monkeypatch, bp, "fill_backward_demo", spoil)
    with pytest.raises(ValueError, match="added_spoils_the_row_dq_and_every_dk"):
        page.empty_row()
