"""The backprop page's book side (book/chapter/backprop.py): numbers as printed, tables, sentences.

Fast unit tests, no build. Every sentence is checked on inputs other than the page's, against the
same results its table shows; the page's own numbers are checked in tests/test_page_backprop.py.
"""

from __future__ import annotations

import importlib
import math

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


def matrix(rows, cols, elements=small):
    return st.lists(st.lists(elements, min_size=cols, max_size=cols), min_size=rows, max_size=rows)


def rows_of(md: str) -> list[list[str]]:
    """The body rows of a Markdown table written by fmt.md_table."""
    return [[c.strip() for c in line.strip("|").split("|")] for line in md.splitlines()[2:]]


# -- numbers ------------------------------------------------------------------------------------------------
def test_a_cell_is_a_computed_value_with_four_decimals_whole_or_not():
    assert page.cell(0.0) == page.cell(-0.0) == page.cell(1e-7) == page.cell(-1e-7) == "0.0000"
    assert page.cell(-0.25) == f"{fmt.MINUS}0.2500" and page.cell(math.nan) == "NaN"
    assert page.cell(1.0) == "1.0000"  # a computed whole number keeps its decimals
    assert page.exact_zero([0.0, -0.0]) == "恰为 0" and page.exact_zero([0.0, 1e-17]) == "不全为 0"
    assert page.power_of_two(2.0 ** -52) == "2⁻⁵²"


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
    assert page.products([(page.val(0.5), page.inp(2.0)), (page.val(-0.25), page.inp(-1.0))], 1.25) == (
        "0.5000×2 + (−0.2500)×(−1) = 1.2500"
    )
    assert page.products([("1.0000", "1")], 1 / math.sqrt(2), sqrt_of=2) == "(1.0000×1) / √2 = 0.7071"


# -- sections on other inputs ---------------------------------------------------------------------------------
def test_the_worked_example_writes_out_the_cells_its_tables_show():
    values = page.worked_values(Q4, K4, V4, D4)
    steps = bp.backward_steps(Q4, K4, V4, D4, att.visibility(4, 4))
    dv = rows_of(values["tbl_ex_dv"])
    assert dv[0] == ["Key 0", page.cell(steps["dv"][0][0])]
    assert values["calc_dv"].endswith(page.cell(steps["dv"][0][0]))
    assert values["calc_dv"].count("×") == 4  # one product per query that reads Key 0
    assert values["calc_dq"].startswith("(") and "/ √3" in values["calc_dq"]
    assert values["calc_ds"].endswith(page.cell(steps["ds"][1][0]))
    assert rows_of(values["tbl_ex_dq"])[0] == ["查询 0（位置 0）"] + ["0.0000"] * 3  # reads only itself
    assert values["dq0_exact"] == "恰为 0" and steps["dq"][0] == [0.0] * 3
    assert values["masked_p_exact"] == values["masked_ds_exact"] == "恰为 0"
    fig = values["fig_chain"]  # the figure shows the tables' values, forbidden scores as −∞
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert len(fig.axes) == 9 and page.cell(steps["dk"][3][2]) in texts and texts.count("−∞") == 6
    assert rows_of(values["tbl_ex_s"])[0][2:] == ["−∞"] * 3
    assert values["ex_n"] == "4" and values["ex_d"] == "3"


def test_the_pad_example_counts_the_zeros_its_tables_show():
    values = page.pad_values(Q4, K4, V4, D4, [True, True, False, True])
    assert values["pad_key"] == "2" and values["pad_fd"] == values["pad_dkv"] == "恰为 0"
    assert rows_of(values["tbl_pad_kv"])[2] == ["Key 2"] + ["0.0000"] * 4
    # the causal rule forbids 6 cells; the PAD key adds the 2 queries at or after it
    assert values["pad_sentence"].startswith("可见性表禁止了 8 个格子，其中权重恰为 0 的有 8 个，dS 恰为 0 的有 8 个")
    assert "（Key 2）" in values["pad_sentence"]


@fast
@given(st.integers(1, 3), st.integers(0, 2), st.data())
def test_zero_sentence_counts_what_the_tables_show(n_query, past, data):
    n_key = past + n_query
    key_valid = data.draw(st.lists(st.booleans(), min_size=n_key, max_size=n_key))
    q, k, v, d_out = (data.draw(matrix(r, c)) for r, c in ((n_query, 2), (n_key, 2), (n_key, 1), (n_query, 1)))
    visible = att.visibility(n_query, n_key, past=past, key_valid=key_valid)
    steps = bp.backward_steps(q, k, v, d_out, visible, empty_row="zero")
    text = page.zero_sentence(steps)
    forbidden = sum(not ok for row in visible for ok in row)
    assert text.startswith(f"可见性表禁止了 {forbidden} 个格子，其中权重恰为 0 的有 {forbidden} 个，dS 恰为 0 的有 {forbidden} 个")
    unread = [j for j in range(n_key) if not any(row[j] for row in visible)]
    if unread:
        it = "它的" if len(unread) == 1 else "它们的"  # one Key, these Keys
        assert f"所有查询都不许读的 Key 有 {len(unread)} 个" in text and f"{it} dK 与 dV 全部恰为 0" in text
    else:
        assert "没有哪个 Key 被所有查询禁止" in text


def test_check_facts_name_what_each_check_caught():
    facts = page.check_facts({"正确": (0.0, 0.0), "甲": (0.5, 0.5), "乙": (0.0, 0.5), "丙": (0.0, 0.0)})
    assert facts == {"caught_rand": "2 个（甲、乙）", "caught_ones": "1 个（甲）", "passed_both": "正确、丙"}
    assert page.check_facts({"甲": (0.5, 0.5)})["passed_both"] == "无"
    with pytest.raises(ValueError, match="results 必须是非空字典"):
        page.check_facts({})


def test_the_mutant_table_and_its_sentence_agree_on_another_example():
    values = page.mutant_values(Q4, K4, V4, 3, -2, 2)
    verdicts = {r[0]: (r[2], r[4]) for r in rows_of(values["tbl_mutants"])}
    assert verdicts == {"正确": ("通过", "通过"), "丢掉修正项": ("未通过", "未通过"), "忘乘 dO": ("通过", "未通过"),
                        "dV 漏了转置": ("未通过", "未通过")}  # all ones do catch a missing transpose
    assert values["caught_rand"] == "3 个（丢掉修正项、忘乘 dO、dV 漏了转置）"
    assert values["caught_ones"] == "2 个（丢掉修正项、dV 漏了转置）" and values["passed_both"] == "正确"
    assert values["mutant_same"] == "逐位相同" and values["rand_lo"] == "−2" and values["fd_tol"] == "10⁻⁶"
    assert values["rand_do"] == fmt.vectors(page.random_d_out(3, -2, 2, 4, 1))


@fast
@given(st.integers(1, 3), st.integers(1, 2), st.integers(1, 2), st.integers(1, 2), st.data())
def test_policy_sentence_counts_what_the_policies_computed(n_pad, n_real, d, d_v, data):
    n = n_pad + n_real
    key_valid = [False] * n_pad + [True] * n_real  # left padding: the first rows see nothing under causal
    visible = att.visibility(n, n, key_valid=key_valid)
    q, k, v = data.draw(matrix(n, d)), data.draw(matrix(n, d)), data.draw(matrix(n, d_v, st.floats(0.5, 2)))
    d_out = data.draw(matrix(n, d_v, st.floats(0.5, 2)))
    excluded = [[0.0] * d_v if not any(row) else list(g) for row, g in zip(visible, d_out)]
    counted, left_out = page.policies(q, k, v, d_out, visible), page.policies(q, k, v, excluded, visible)
    facts = page.policy_facts(counted, left_out, visible)
    nan_dv = n * d_v  # masked_fill / where: only dV, where every key meets a NaN weight
    nan_added = n_pad * d + n * d + n * d_v  # S + M: also the empty rows' dQ and every key's dK
    assert facts["pol_total"] == str(n * d + n * d + n * d_v)
    assert facts["pol_nan"] == (str(nan_dv), str(nan_added)) * 2  # leaving the rows out saves nothing
    assert (counted["fill=-inf"]["nan"], counted["additive"]["nan"]) == (nan_dv, nan_added)
    assert facts["pol_rows"] == "、".join(f"第 {i} 行" for i in range(n_pad))
    pad_keys = "、".join(f"Key {j}" for j in range(n_pad))
    assert facts["pol_big"] == f"没有 NaN，但被所有查询禁止的 {pad_keys} 拿到了不为 0 的 dV"
    assert facts["pol_zero"] == "恰为 0"
    assert counted["error"]["raised"].startswith("第 0 个查询行没有任何可见的 Key")


def test_policy_sentence_without_empty_rows_and_bad_input_is_not_swallowed():
    visible = att.visibility(3, 3)
    r = page.policies(bp.EXAMPLE_Q, bp.EXAMPLE_K, bp.EXAMPLE_V, bp.EXAMPLE_D_OUT, visible)
    assert r["error"]["raised"] is None
    with pytest.raises(ValueError, match="没有全屏蔽的行"):
        page.policy_facts(r, r, visible)
    with pytest.raises(ValueError, match="V 的行数"):
        page.policies(bp.EXAMPLE_Q, bp.EXAMPLE_K, bp.EXAMPLE_V[:2], bp.EXAMPLE_D_OUT, visible)


def test_the_policy_table_follows_the_empty_row_and_the_pad_key():
    values = page.empty_row_values(Q4, K4, V4, D4, [False, False, True, True], [[1.0, 0.0]] * 4)
    header = values["tbl_policies"].splitlines()[0]
    assert "查询 0 的输出" in header and "Key 0（PAD）的 dV" in header
    table = {r[0]: r for r in rows_of(values["tbl_policies"])}
    assert table["error：报错"][1:] == ["报错，不计算"] + ["—"] * 4  # said once, not in every cell
    assert table["zero：输出 0"][1:4] == ["(0.0000)", "(0.0000, 0.0000, 0.0000)", "(0.0000)"]
    assert table["演示：换成 −∞（masked_fill / where）"][4] == "4"  # every key's dV is NaN: 4 keys × 1 column
    assert table["演示：加上 −∞（S + M）"][2] == "(NaN, NaN, NaN)"  # the gradient flows through M into dQ
    assert table["演示：加上 −∞（S + M）"][4] == str(2 * 3 + 4 * 3 + 4)  # 2 empty rows' dQ, every dK and dV
    assert values["left_row"] == "0" and values["pol_rows"] == "第 0 行、第 1 行"
    assert (values["nan_inf"], values["nan_add"]) == ("4", str(2 * 3 + 4 * 3 + 4))
    assert (values["nan_w_total"], values["nan_w_count"]) == ("2", "2")  # X's zero column too: 0 × NaN is NaN


def test_the_check_passes_under_every_mask_and_the_best_step_is_in_the_table():
    configs = page.config_values(Q4, K4, V4, D4, 2, [True, True, True, False], [False, True, True, True])
    assert [r[-1] for r in rows_of(configs["tbl_configs"])] == ["通过"] * 5
    assert rows_of(configs["tbl_configs"])[3][0] == "缓存 past = 2" and configs["cache_new"] == "2"
    steps = page.step_values(Q4, K4, V4, D4, [1e-2, 1e-5, 1e-8])
    table = rows_of(steps["tbl_h"])
    assert [r[0] for r in table] == ["10⁻²", "10⁻⁵", "10⁻⁸"]
    assert steps["h_best"] in [r[0] for r in table] and steps["h_best_err"] in [r[1] for r in table]


def test_the_exercise_sentences_come_from_the_answers():
    ex = importlib.import_module("02_exercises_backprop")
    values = page.exercise_values()
    assert values["x3_sentence"] == page.zero_sentence(ex.mask_zeros()["steps"])
    assert values["x4_sentence"] == page.correction_sentence(ex.correction_cases()["cases"])
    assert values["x3_zero_keys"] == "Key 0"
    d_perp = [row[-1] for row in rows_of(values["x4_rows"])]
    assert all(cell.endswith("= 0.0000") for cell in d_perp)  # each row of dO⊥ is orthogonal to O's row
    assert all(x == 0.0 for x in list(ex.correction_cases()["cases"].values())[1]["D"])
    assert values["x5_doctest"].startswith("```pycon\n>>> rowsum_correction(")
    assert all("-" not in values[name] for name in ("x1_scores", "x2_do", "x3_k", "x4_q", "x1_offdiag"))


def test_correction_sentence_reads_its_cases():
    text = page.correction_sentence({"dO": {"D": [0.0, -0.5], "gap": 0.0}, "dO⊥": {"D": [0.0, 0.0], "gap": 0.0}})
    assert text == "对dO，D 不全为 0，丢掉 D 的梯度与正确梯度逐位相同；对dO⊥，D 每行恰为 0，丢掉 D 的梯度与正确梯度逐位相同。"
    with pytest.raises(ValueError, match="cases"):
        page.correction_sentence({})


def test_no_generated_sentence_asks_and_answers_itself():
    """No 「…吗？是。」: a generated clause states the fact (the kind of item 33 of the review)."""
    values = page.exercise_values()
    texts = [v for v in values.values() if isinstance(v, str)]
    assert not any(t in ("是", "不是") for t in texts)
    assert not any("吗？" in t for t in texts)


def test_glue_all_glues_tables_as_markdown_and_the_rest_as_text(monkeypatch):
    myst_nb = pytest.importorskip("myst_nb")
    glued = {}
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display: glued.update({name: (value, display)}))
    page.glue_all({"a": page.Md("| x |\n|---|\n| 1 |"), "b": "text"})
    assert type(glued["a"][0]).__name__ == "Markdown" and glued["a"][0].data.startswith("| x |")
    assert glued["b"] == ("text", False)
