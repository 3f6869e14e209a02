"""The backprop page's book side (book/chapter/backprop.py): numbers as printed, tables, the facts its prose reads.

Fast unit tests, no build. Facts on inputs other than the page's, a clause the data choose on inputs
that go each way; the page's own numbers are checked in tests/test_page_backprop.py.
"""

from __future__ import annotations

import importlib
import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chapter import backprop as page
from chapter import fmt

att = importlib.import_module("02_attention")
bp = importlib.import_module("02_backprop")

fast = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
small = st.floats(min_value=-2, max_value=2, allow_nan=False, allow_infinity=False)

# Another worked example than the page's: four positions, three dimensions, V with one column.
Q4 = [[0.5, -1.0, 0.0], [1.0, 0.5, -0.5], [0.0, 1.0, 1.0], [-1.0, 0.0, 0.5]]
K4 = [[1.0, 0.0, 0.5], [-0.5, 1.0, 0.0], [0.0, -1.0, 1.0], [1.0, 1.0, -1.0]]
V4 = [[2.0], [-1.0], [0.5], [1.5]]
D4 = [[0.3], [-0.8], [1.2], [-0.4]]
PAD4 = [True, True, True, False]
LEFT4 = [False, True, True, True]


def checks(seed=3, lo=-2, hi=2, steps=(1e-5,)):
    """The gradient-check section on the four-position example (a cache of 2)."""
    return page.check_values(Q4, K4, V4, seed, lo, hi, 2, PAD4, LEFT4, list(steps))


def matrix(rows, cols, elements=small):
    return st.lists(st.lists(elements, min_size=cols, max_size=cols), min_size=rows, max_size=rows)


# -- numbers ------------------------------------------------------------------------------------------------
def test_exact_zero_and_the_machine_precision_are_written_as_the_page_does():
    assert page.zero([0.0, -0.0]) and not page.zero([0.0, 1e-17])  # 恰为 0: ``==``, no tolerance
    v = checks()
    assert (v["eps64"], v["eps32"]) == ("2⁻⁵²", "2⁻²³")


def test_scientific_and_powers_use_one_minus_sign_and_superscripts():
    assert fmt.sci(2.34e-11) == "2.3 × 10⁻¹¹"
    assert fmt.sci(4.0e3) == "4.0 × 10³"
    assert fmt.power(1e-6) == "10⁻⁶" and fmt.power(1e-9) == "10⁻⁹"
    assert "-" not in fmt.sci(-3e-5)
    with pytest.raises(ValueError, match="sci 的 x"):
        fmt.sci("1e-5")


def test_a_written_out_product_says_approximately_when_rounding_moved_the_last_digit():
    # 0.3302 × (−1 − (−2.3395)) with printed factors is 0.44230…, the exact cell 0.44236 prints 0.4424
    assert page.ds_cell(0.33022, -1.0, -2.33947, 0.44236) == "0.3302×(−1.0000 − (−2.3395)) ≈ 0.4424"
    assert page.products(
        [(page.val(0.5), page.inp(2.0)), (page.val(-0.25), page.inp(-1.0))], 1.25
    ) == ("0.5000×2 + (−0.2500)×(−1) = 1.2500")
    assert (
        page.products([("1.0000", "1")], 1 / math.sqrt(2), sqrt_of=2) == "(1.0000×1) / √2 = 0.7071"
    )


# -- sections on other inputs ---------------------------------------------------------------------------------
def test_the_worked_example_writes_out_the_cells_its_tables_show():
    values = page.worked_values(Q4, K4, V4, D4)
    steps = bp.backward_steps(Q4, K4, V4, D4, att.visibility(4, 4))
    assert values["tbl_ex_dv"].rows[0] == ["Key 0", fmt.fmt(steps["dv"][0][0])]
    assert values["calc_dv"].endswith(fmt.fmt(steps["dv"][0][0]))
    assert values["calc_dv"].count("×") == 4  # one product per query that reads Key 0
    assert values["calc_dq"].startswith("(") and "/ √3" in values["calc_dq"]
    assert values["calc_ds"].endswith(fmt.fmt(steps["ds"][1][0]))
    assert values["tbl_ex_dq"].rows[0] == ["查询 0（位置 0）"] + ["0.0000"] * 3  # reads only itself
    assert steps["dq"][0] == [0.0] * 3  # the page's 「它的 dQ 恰为 0」 (holds checks it)
    texts = [
        t.get_text() for t in values["fig_chain"].axes[0].texts
    ]  # the tables' values, −∞ where forbidden
    assert fmt.fmt(steps["dk"][3][2]) in texts and texts.count("−∞") == 6
    assert values["tbl_ex_s"].rows[0][2:] == ["−∞"] * 3
    assert values["ex_n"] == "4" and values["ex_d"] == "3"


def test_the_pad_example_counts_the_zeros_its_tables_show():
    values = page.masked_values(
        Q4, K4, V4, D4, [True, True, False, True], [False] + [True] * 3, [[1.0]] * 4
    )
    assert (
        values["pad_key"] == "2"
    )  # its dK, dV and finite differences exactly 0: holds checks them
    assert values["tbl_pad_kv"].rows[2] == ["Key 2"] + ["0.0000"] * 4
    # the causal rule forbids 6 cells; the PAD key adds the 2 queries at or after it
    assert (values["pad_forbidden"], values["pad_zero_p"], values["pad_zero_ds"]) == ("8", "8", "8")
    assert values["pad_unread"] == "Key 2"


@fast
@given(st.integers(1, 3), st.integers(0, 2), st.data())
def test_the_zero_facts_count_what_the_tables_show(n_query, past, data):
    n_key = past + n_query
    key_valid = data.draw(st.lists(st.booleans(), min_size=n_key, max_size=n_key))
    q, k, v, d_out = (
        data.draw(matrix(r, c)) for r, c in ((n_query, 2), (n_key, 2), (n_key, 1), (n_query, 1))
    )
    visible = att.visibility(n_query, n_key, past=past, key_valid=key_valid)
    facts = page.zero_facts(bp.backward_steps(q, k, v, d_out, visible, empty_row="zero"), "t")
    forbidden = str(sum(not ok for row in visible for ok in row))
    assert (
        facts["t_forbidden"] == facts["t_zero_p"] == facts["t_zero_ds"] == forbidden
    )  # every one exactly 0
    unread = [j for j in range(n_key) if not any(row[j] for row in visible)]
    assert facts["t_unread"] == ("、".join(f"Key {j}" for j in unread) or "无")


def test_the_mutant_facts_name_what_each_check_caught(monkeypatch):
    monkeypatch.setattr(
        page, "MUTANTS", {"甲": bp.wrong_backward_no_rowsum, "乙": bp.wrong_backward_forgets_d_out}
    )
    facts = checks()
    assert (facts["caught_rand"], facts["caught_ones"], facts["passed_both"]) == (
        "2 个（甲、乙）",
        "1 个（甲）",
        "无",
    )


def test_the_mutant_table_and_its_facts_agree_on_another_example():
    values = checks()
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
    assert values["caught_rand"].startswith("3 个") and values["caught_ones"].startswith("2 个")
    assert (
        values["passed_both"] == "正确" and values["mutant_gap"] == "0"
    )  # times 1 is no multiplication
    assert values["rand_lo"] == "−2" and values["fd_tol"] == "10⁻⁶"
    rng = random.Random(3)  # the random dO: uniform in [lo, hi], one decimal
    assert values["rand_do"] == fmt.vectors([[round(rng.uniform(-2, 2), 1)] for _ in range(4)])


@fast
@given(st.integers(1, 3), st.integers(1, 2), st.integers(1, 2), st.integers(1, 2), st.data())
def test_the_policies_count_their_nans(n_pad, n_real, d, d_v, data):
    n = n_pad + n_real
    key_valid = [False] * n_pad + [
        True
    ] * n_real  # left padding: the first rows see nothing under causal
    q = data.draw(matrix(n, d))
    k = data.draw(matrix(n, d))
    v = data.draw(matrix(n, d_v, st.floats(0.5, 2)))
    d_out = data.draw(matrix(n, d_v, st.floats(0.5, 2)))
    values = page.masked_values(
        q, k, v, d_out, [True] * (n - 1) + [False], key_valid, [[1.0] * 2] * n
    )
    nan_dv = n * d_v
    nan_added = n_pad * d + n * d + n * d_v  # S + M: also the empty rows' dQ and every dK
    assert values["pol_total"] == str(n * d + n * d + n * d_v)
    assert (
        (values["nan_inf"], values["nan_add"])
        == (values["nan_inf_ex"], values["nan_add_ex"])
        == (str(nan_dv), str(nan_added))
    )  # leaving the rows out saves nothing
    assert values["pol_rows"] == "、".join(f"第 {i} 行" for i in range(n_pad))
    # the −1e9 fill: no NaN, and every PAD key gets a dV (the page's fixed sentence; holds checks it)
    assert values["big_pad_keys"] == "、".join(f"Key {j}" for j in range(n_pad))


# -- the page's fixed sentences: a fact that fails stops the build, naming the claim ---------------------------
def test_holds_names_every_claim_that_fails():
    page.holds(a=True, b=True)
    with pytest.raises(ValueError, match="b、c"):
        page.holds(a=True, b=False, c=False)


TWO = ([[0.0], [1.0]], [[0.0], [1.0]], [[1.0], [3.0]], [[1.0], [1.0]], [True, False], [False, True])


def test_a_pad_key_without_a_gradient_from_the_big_fill_stops_the_build():
    # dO's row 0 is 0: the −1e9 row reads the forbidden keys but sends them no gradient, so the page's
    # 「被所有查询禁止的 Key … 拿到了不为 0 的 dV」 would be false
    q, k, v, _, pad, left = TWO
    with pytest.raises(ValueError, match="big_fill_gives_a_pad_key_dv"):
        page.masked_values(q, k, v, [[0.0], [1.0]], pad, left, [[1.0]] * 2)
    assert page.masked_values(*TWO, [[1.0]] * 2)["big_pad_keys"] == "Key 0"


@pytest.mark.parametrize(
    ("fill", "claim"),
    [
        (-1e9, "big_fill_no_nan"),  # were the −1e9 fill to give a NaN gradient
        (-math.inf, "where_keeps_dq_dk_finite"),  # were masked_fill's −∞ to spoil dQ too
    ],
)
def test_a_planted_nan_stops_the_build_naming_the_claim(monkeypatch, fill, claim):
    demo = bp.fill_backward_demo

    def spoilt(*a, fill, added=False, **kw):
        out = demo(*a, fill=fill, added=added, **kw)
        empty_row = not all(any(row) for row in a[4])  # the fully masked row's demo only
        return out | (
            {"dq": [[math.nan]] * len(out["dq"])} if empty_row and (fill, added) == planted else {}
        )

    planted = (fill, False)
    monkeypatch.setattr(bp, "fill_backward_demo", spoilt)
    with pytest.raises(ValueError, match=claim):
        page.masked_values(*TWO, [[1.0]] * 2)


def test_a_finite_fill_that_leaks_weight_stops_the_build(monkeypatch):
    # the core's claim: −1e9 and finfo.min give the very weights and gradients of −∞ in rows with a key
    demo = bp.fill_backward_demo

    def leaky(*a, fill, added=False, **kw):
        out = demo(*a, fill=fill, added=added, **kw)
        if fill == page.BIG:
            out["weights"] = [[w or 1e-17 for w in row] for row in out["weights"]]
        return out

    monkeypatch.setattr(bp, "fill_backward_demo", leaky)
    with pytest.raises(ValueError, match="finite_fills_give_the_same_weights_and_gradients"):
        page.forbidden_values(*bp_example())
    monkeypatch.undo()
    assert page.forbidden_values(Q4, K4, V4, D4) == {
        "big_fill": "−1e9",
        "float_min": "−1.8 × 10³⁰⁸",
    }


def test_a_nonzero_gradient_where_the_page_says_exactly_zero_stops_the_build(monkeypatch):
    steps = bp.backward_steps

    def leaky(*a, **kw):
        out = steps(*a, **kw)
        out["dq"][0] = [x + 1e-17 for x in out["dq"][0]]
        return out

    monkeypatch.setattr(bp, "backward_steps", leaky)
    with pytest.raises(ValueError, match="first_query_dq_zero"):
        page.worked_values(*bp_example())


def test_an_exercise_fact_that_fails_stops_the_build(monkeypatch):
    ex = importlib.import_module("02_exercises_backprop")
    cases = ex.correction_cases

    def skewed():
        out = cases()
        for case in out["cases"].values():
            case["D"] = [1.0] * len(case["D"])  # dO⊥'s correction no longer 0
        return out

    monkeypatch.setattr(ex, "correction_cases", skewed)
    with pytest.raises(ValueError, match="orthogonal_d_zero"):
        page.exercise_values()


def bp_example():
    return bp.EXAMPLE_Q, bp.EXAMPLE_K, bp.EXAMPLE_V, bp.EXAMPLE_D_OUT


def test_policies_without_empty_rows_and_bad_input_is_not_swallowed():
    visible = att.visibility(3, 3)
    assert (
        page.policies(bp.EXAMPLE_Q, bp.EXAMPLE_K, bp.EXAMPLE_V, bp.EXAMPLE_D_OUT, visible)["error"][
            "raised"
        ]
        is None
    )
    with pytest.raises(ValueError, match="V 的行数"):
        page.policies(bp.EXAMPLE_Q, bp.EXAMPLE_K, bp.EXAMPLE_V[:2], bp.EXAMPLE_D_OUT, visible)


def test_the_policy_table_follows_the_empty_row_and_the_pad_key():
    pad = [True, True, True, False]
    left = [False, False, True, True]
    values = page.masked_values(Q4, K4, V4, D4, pad, left, [[1.0, 0.0]] * 4)
    header, rows = values["tbl_policies"]
    assert "查询 0 的输出" in header and "Key 0（PAD）的 dV" in header
    table = {r[0]: r for r in rows}
    assert table["error：报错"][1:] == ["报错，不计算"] + ["—"] * 4  # said once, not in every cell
    assert table["zero：输出 0"][1:4] == ["(0.0000)", "(0.0000, 0.0000, 0.0000)", "(0.0000)"]
    assert (
        table["演示：换成 −∞（masked_fill / where）"][4] == "4"
    )  # every key's dV is NaN: 4 keys × 1 column
    assert (
        table["演示：加上 −∞（S + M）"][2] == "(NaN, NaN, NaN)"
    )  # the gradient flows through M into dQ
    assert table["演示：加上 −∞（S + M）"][4] == str(
        2 * 3 + 4 * 3 + 4
    )  # 2 empty rows' dQ, every dK and dV
    assert values["left_row"] == "0" and values["pol_rows"] == "第 0 行、第 1 行"
    assert (values["nan_w_total"], values["nan_w_count"]) == (
        "2",
        "2",
    )  # X's zero column too: 0 × NaN is NaN


def test_the_check_passes_under_every_mask_and_the_best_step_is_in_the_table():
    configs = checks(steps=(1e-2, 1e-5, 1e-8))
    assert [r[-1] for r in configs["tbl_configs"].rows] == [page.VERDICT[True]] * 5
    assert configs["configs_passed"] == configs["configs_n"] == "5"
    assert configs["tbl_configs"].rows[3][0] == "缓存 past = 2" and configs["cache_new"] == "2"
    steps = configs
    table = steps["tbl_h"].rows
    assert [r[0] for r in table] == ["10⁻²", "10⁻⁵", "10⁻⁸"] and steps[
        "h_steps"
    ] == "10⁻²、10⁻⁵、10⁻⁸"
    assert steps["h_best"] in [r[0] for r in table] and steps["h_best_err"] in [r[1] for r in table]


def test_the_exercise_facts_come_from_the_answers():
    ex = importlib.import_module("02_exercises_backprop")
    values = page.exercise_values()
    assert values["x3_zero_keys"] == values["x3_unread"] == "Key 0"
    assert values["x3_forbidden"] == values["x3_zero_p"] == values["x3_zero_ds"]
    (_, given), (_, orth) = ex.correction_cases()["cases"].items()
    assert any(given["D"]) and not any(orth["D"])  # 不全为 0 / 恰为 0: the solution's fixed words
    assert (
        values["x4_orth_gap"] == "0"
        and values["x4_given_gap"] == fmt.difference(given["gap"]) != "0"
    )
    # the question names its measure: the largest absolute difference over dQ, dK and dV together
    right = bp.attention_backward(ex.CORR_Q, ex.CORR_K, ex.CORR_V, given["d_out"])
    dropped = bp.wrong_backward_no_rowsum(ex.CORR_Q, ex.CORR_K, ex.CORR_V, given["d_out"])
    gaps = [att.max_abs_diff(a, b) for a, b in zip(right, dropped)]
    assert values["x4_gaps"].rows[0][2:] == [fmt.difference(g) for g in gaps + [max(gaps)]]
    assert gaps[2] == 0.0 and values["x4_given_where"] == ["dQ", "dK"][gaps.index(max(gaps))]
    assert all(
        cell.endswith("= 0.0000") for cell in [r[-1] for r in values["x4_rows"].rows]
    )  # dO⊥ ⟂ O
    assert all(x == 0.0 for x in orth["D"])
    assert values["x5_doctest"].startswith("```pycon\n>>> rowsum_correction(")
    assert all(
        "-" not in values[name] for name in ("x1_scores", "x2_do", "x3_k", "x4_q", "x1_offdiag")
    )


def test_no_generated_text_asks_and_answers_itself():
    """No 「…吗？是。」: a glued clause states the fact (the kind of item 33 of the review)."""
    texts = [v for v in page.exercise_values().values() if isinstance(v, str)]
    assert not any(t in ("是", "不是") for t in texts) and not any("吗？" in t for t in texts)


def test_glue_all_glues_tables_as_markdown_and_the_rest_as_text(monkeypatch):
    myst_nb = pytest.importorskip("myst_nb")
    glued = {}
    monkeypatch.setattr(
        myst_nb, "glue", lambda name, value, display: glued.update({name: (value, display)})
    )
    page.glue_all({"a": page.Md("| x |\n|---|\n| 1 |"), "b": "text"})
    assert type(glued["a"][0]).__name__ == "Markdown" and glued["a"][0].data.startswith("| x |")
    assert glued["b"] == ("text", False)
