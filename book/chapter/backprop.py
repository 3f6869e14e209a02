"""The backprop page's book side: one function per section of book/ch02/backprop.md, each a page.Section.

The page types each example's inputs ({input} roles naming the constants below or the teaching files');
a section glues what the run computes and checks the facts of the page's fixed sentences with
``Section.holds``. Tables say per row what the data decide (``VERDICT``).
"""

from __future__ import annotations

import importlib
import math
import random
import struct
import sys

from chapter import fmt
from chapter.grid_figures import chain_figure
from chapter.page import Col, Section, key, keys, listing, positions, span

att = importlib.import_module("02_attention")
bp = importlib.import_module("02_backprop")
ex = importlib.import_module("02_exercises_backprop")

PAGE = "反向传播一页"
# The page's inputs that no teaching file has (the page types them; tests/test_typed_inputs.py compares).
PAD = [True, True, False]  # key_valid of the PAD example: the last key is PAD
LEFT = [False, True, True]  # key_valid of the fully masked row: PAD in front
SEED = 7  # the random dO: random.Random(SEED), uniform in [LO, HI], one decimal
LO = -1
HI = 1
CACHE_PAST = 1  # the cached condition: past positions already in the cache
STEPS = [1e-1, 1e-3, 1e-5, 1e-7, 1e-9]  # the finite-difference steps ε compared

# A fully masked row five ways: masked_attention's two policies, then the forbidden scores replaced by −∞
# (masked_fill / where: no gradient through them), −∞ added (S + M: it flows through M), replaced by −1e9.
POLICY_LABELS = {
    "error": "error：报错",
    "zero": "zero：输出 0",
    "fill=-inf": "演示：换成 −∞（masked_fill / where）",
    "additive": "演示：加上 −∞（S + M）",
    "fill=-1e9": "演示：换成 −1e9",
}
MUTANTS = {
    "正确": bp.attention_backward,
    "丢掉修正项": bp.wrong_backward_no_rowsum,
    "忘乘 dO": bp.wrong_backward_forgets_d_out,
    "dV 漏了转置": bp.wrong_backward_transposes_p,
}
BIG = -1e9  # the finite fill the page shows beside −∞
FINITE_FILLS = (BIG, -sys.float_info.max)  # −1e9 and float64's most negative number (finfo.min)
VERDICT = {
    True: "通过",
    False: "未通过",
}  # a table's verdict column: each row as its check came out
ROUNDING = 1e-12  # a sum the page calls 0 "在舍入误差以内"
EXAMPLE = (bp.EXAMPLE_Q, bp.EXAMPLE_K, bp.EXAMPLE_V, bp.EXAMPLE_D_OUT)


def zero(xs) -> bool:
    """Every entry exactly 0 (what the page writes 「恰为 0」 and a test checks with ``==``)."""
    return all(x == 0.0 for x in xs)


def flat(*matrices) -> list[float]:
    return [x for m in matrices for row in m for x in row]


def float32(x: float) -> float:
    """``x`` rounded to float32, as numpy.float32(x) is."""
    return struct.unpack("f", struct.pack("f", x))[0]


def inp(x: float, write=fmt.short) -> str:
    """A factor inside a product: an input as typed (``val``: a computed value), negatives in brackets."""
    return f"({write(x)})" if x < 0 and write(x) != write(0.0) else write(x)


def val(x: float) -> str:
    return inp(x, fmt.fmt)


def ds_cell(p: float, dp: float, d: float, exact: float) -> fmt.Calculation:
    """One cell of dS = P ∘ (dP − D), written out: ``p×(dp − D) = dS``."""
    value = fmt.printed(val(p)) * (fmt.printed(fmt.fmt(dp)) - fmt.printed(val(d)))
    return fmt.Calculation(f"{val(p)}×({fmt.fmt(dp)} − {val(d)})", value, exact)


def forbidden_cells(visible) -> list[tuple[int, int]]:
    return [(i, j) for i, row in enumerate(visible) for j, ok in enumerate(row) if not ok]


def unread_keys(visible) -> list[int]:
    """The keys no query may read (a PAD key, say)."""
    return [j for j in range(len(visible[0])) if not any(row[j] for row in visible)]


def random_d_out() -> list[list[float]]:
    """The check's random dO: random.Random(SEED), uniform in [LO, HI], one decimal, shaped like dO."""
    rng = random.Random(SEED)
    return [[round(rng.uniform(LO, HI), 1) for _ in row] for row in bp.EXAMPLE_D_OUT]


def zero_facts(s: Section, steps: dict, prefix: str) -> None:
    """The forbidden cells, how many have weight and dS exactly 0; the keys no query reads, whose dK and dV
    the page says are exactly 0."""
    visible = steps["visible"]
    cells = forbidden_cells(visible)
    unread = unread_keys(visible)
    s.holds(
        unread_keys_get_no_gradient=zero(x for j in unread for x in steps["dk"][j] + steps["dv"][j])
    )
    s.value(
        "count",
        **{
            f"{prefix}_forbidden": len(cells),
            f"{prefix}_zero_p": sum(steps["weights"][i][j] == 0.0 for i, j in cells),
            f"{prefix}_zero_ds": sum(steps["ds"][i][j] == 0.0 for i, j in cells),
        },
    )
    s.text(**{f"{prefix}_unread": keys(unread)})


def policies(d_out, visible) -> dict:
    """The example under the five ways of :data:`POLICY_LABELS`: forward, gradients, NaN count."""
    q, k, v, _ = EXAMPLE
    try:
        att.masked_attention(q, k, v, visible, empty_row="error")
        results = {"error": {"raised": None}}
    except ValueError as error:
        results = {"error": {"raised": str(error)}}
    results["zero"] = bp.backward_steps(q, k, v, d_out, visible, empty_row="zero")
    for name, fill, added in (
        ("fill=-inf", -math.inf, False),
        ("additive", -math.inf, True),
        ("fill=-1e9", BIG, False),
    ):
        results[name] = bp.fill_backward_demo(q, k, v, d_out, visible, fill=fill, added=added)
    for r in list(results.values())[1:]:
        nan = {g: sum(map(math.isnan, flat(r[g]))) for g in ("dq", "dk", "dv")}
        r |= {"raised": None, "nan": sum(nan.values()), "nan_in": nan}
    return results


# -- the page's sections, in its order -------------------------------------------------------------------
def worked() -> Section:
    """The causal example step by step: every table, the cells the prose writes out, the figure."""
    s = Section(PAGE, "按推导顺序")
    q, k, v, d_out = EXAMPLE
    n = len(q)
    d = len(q[0])
    d_v = len(v[0])
    visible = att.visibility(n, n)
    st = bp.backward_steps(q, k, v, d_out, visible)
    scores = att.scaled_scores(q, k)
    p = st["weights"]
    o = st["outputs"]
    ds = st["ds"]
    rows = positions(n)
    cols = [key(j) for j in range(n)]
    masked = [[a + m for a, m in zip(sr, mr)] for sr, mr in zip(scores, att.additive_mask(visible))]
    dims = [f"第 {c} 维" for c in range(d)]
    v_cols = [f"第 {c} 列" for c in range(d_v)]
    s.holds(
        first_query_reads_only_itself=p[0][0] == 1.0,
        first_query_dq_zero=zero(st["dq"][0]),
        ds_rows_sum_to_zero=all(abs(sum(row)) < ROUNDING for row in ds),
        rowsum_two_ways_agree=all(
            abs(a - b) < ROUNDING for a, b in zip(st["rowsum_do_o"], st["rowsum_dp_p"])
        ),
        forbidden_ds_zero=zero(ds[i][j] for i, j in forbidden_cells(visible)),
    )
    s.figure("fig_chain", chain_figure(st, scores))
    s.value("count", ex_d=d, ex_n=n)
    s.grid("tbl_ex_s", "S", masked, rows, cols)
    s.grid("tbl_ex_p", "P", p, rows, cols)
    s.grid("tbl_ex_o", "O", o, rows, v_cols)
    s.grid("tbl_ex_dv", "dV", st["dv"], cols, v_cols)
    s.grid("tbl_ex_dp", "dP", st["dp"], rows, cols)
    s.table(
        "tbl_ex_rowsum",
        zip(rows, st["rowsum_do_o"], st["rowsum_dp_p"]),
        Col("查询", lambda r: r[0], "text"),
        Col("dO 与 O 同一行的点积", lambda r: r[1]),
        Col("dP 与 P 同一行的点积", lambda r: r[2]),
        Col("两者之差", lambda r: abs(r[1] - r[2]), "difference"),
    )
    s.grid("tbl_ex_ds", "dS", ds, rows, cols)
    s.grid("tbl_ex_dq", "dQ", st["dq"], rows, dims)
    s.grid("tbl_ex_dk", "dK", st["dk"], cols, dims)
    calculations = dict(
        calc_dv=fmt.products([(val(p[i][0]), inp(d_out[i][0])) for i in range(n)], st["dv"][0][0]),
        calc_dp=fmt.products(
            [(inp(d_out[1][c]), inp(v[0][c])) for c in range(d_v)], st["dp"][1][0]
        ),
        calc_d=fmt.products(
            [(inp(d_out[1][c]), val(o[1][c])) for c in range(d_v)], st["rowsum_do_o"][1]
        ),
        calc_ds=ds_cell(p[1][0], st["dp"][1][0], st["rowsum_do_o"][1], ds[1][0]),
        calc_dq=fmt.products(
            [(val(ds[2][j]), inp(k[j][0])) for j in range(n)], st["dq"][2][0], sqrt_of=d
        ),
        calc_dk=fmt.products(
            [(val(ds[i][0]), inp(q[i][1])) for i in range(n)], st["dk"][0][1], sqrt_of=d
        ),
    )
    s.holds(written_cells_add_up=all(c.adds_up for c in calculations.values()))
    s.text(**calculations)
    return s


def projection() -> Section:
    """The projection example: dW_q, dW_k, dW_v in one table, and the finite-difference check."""
    s = Section(PAGE, "投影矩阵的梯度")
    x = bp.PROJ_X
    w_q = bp.PROJ_W_Q
    w_k = bp.PROJ_W_K
    w_v = bp.PROJ_W_V
    d_out = bp.EXAMPLE_D_OUT
    q, k, v = (att.matmul(x, w) for w in (w_q, w_k, w_v))  # Q = X W_q, K = X W_k, V = X W_v
    grads = bp.projection_backward(x, w_q, w_k, w_v, *bp.attention_backward(q, k, v, d_out))
    check = bp.projection_gradient_check(x, w_q, w_k, w_v, d_out)["max"]
    s.holds(projection_check_passes=check <= bp.TOLERANCE)
    cells = [(a, c) for a in range(len(x[0])) for c in range(len(w_q[0]))]
    s.value("count", pj_n=len(x))
    s.table(
        "tbl_pj",
        ("dW_q", "dW_k", "dW_v"),
        Col("梯度", lambda name: name, "text"),
        *[
            Col(f"第 {a} 行 · 第 {c} 列", lambda name, a=a, c=c: grads[name.lower()][a][c])
            for a, c in cells
        ],
    )
    s.value("difference", pj_err=check)
    return s


def forbidden() -> Section:
    """With −∞ the forbidden cells' weight and dS are exactly 0, and the finite fills
    (−1e9, float64's most negative number) give the very weights and gradients of −∞, bit for bit."""
    s = Section(PAGE, "mask 在反向传播里")
    q, k, v, d_out = EXAMPLE
    n = len(q)
    causal = att.visibility(n, n)
    c = bp.backward_steps(q, k, v, d_out, causal)
    filled = [bp.fill_backward_demo(q, k, v, d_out, causal, fill=f) for f in FINITE_FILLS]
    s.holds(
        every_row_has_an_allowed_key=all(any(row) for row in causal),
        forbidden_weights_zero=zero(c["weights"][i][j] for i, j in forbidden_cells(causal)),
        forbidden_ds_zero=zero(c["ds"][i][j] for i, j in forbidden_cells(causal)),
        finite_fills_same_as_inf=all(
            f[g] == c[g] for f in filled for g in ("weights", "dq", "dk", "dv")
        ),
    )
    s.text(big_fill=f"{fmt.MINUS}1e{round(math.log10(-BIG))}")  # as the demo's code types it
    s.value("sci", float_min=FINITE_FILLS[1])
    return s


def pad_key() -> Section:
    """A PAD key (``PAD``): its tables, its exact zeros, its finite differences."""
    s = Section(PAGE, "一个 PAD Key")
    q, k, v, d_out = EXAMPLE
    n = len(q)
    d = len(q[0])
    d_v = len(v[0])
    j = PAD.index(False)
    st = bp.backward_steps(q, k, v, d_out, att.visibility(n, n, key_valid=PAD))
    _, fd_k, fd_v = bp.finite_difference(q, k, v, d_out, key_valid=PAD)
    s.holds(pad_key_finite_difference_zero=zero(fd_k[j] + fd_v[j]))
    kv = [f"dK {c}" for c in range(d)] + [f"dV {c}" for c in range(d_v)]
    s.value("count", pad_key=j)
    cols = [key(j) for j in range(n)]
    s.grid("tbl_pad_p", "P", st["weights"], positions(n), cols)
    s.grid("tbl_pad_ds", "dS", st["ds"], positions(n), cols)
    s.grid("tbl_pad_kv", "Key", [a + b for a, b in zip(st["dk"], st["dv"])], cols, kv)
    zero_facts(s, st, "pad")
    return s


def empty_row() -> Section:
    """A fully masked row (``LEFT``) five ways, with the row in the loss and left out; the NaN in dW_v."""
    s = Section(PAGE, "整行都被禁止")
    q, k, v, d_out = EXAMPLE
    n = len(q)
    d_v = len(v[0])
    x = bp.PROJ_X
    visible = att.visibility(n, n, key_valid=LEFT)
    row = [any(r) for r in visible].index(False)
    pad = LEFT.index(False)  # the PAD key
    empty = [i for i, r in enumerate(visible) if not any(r)]
    counted = policies(d_out, visible)
    left_out = [list(g) if any(vis) else [0.0] * d_v for g, vis in zip(d_out, visible)]
    excluded = policies(left_out, visible)
    zero_policy = counted["zero"]
    where = counted["fill=-inf"]
    added = counted["additive"]
    big = counted["fill=-1e9"]
    # dW_v = Xᵀ dV by hand: att.matmul refuses NaN
    dw_v = [
        sum(x[j][a] * where["dv"][j][c] for j in range(n))
        for c in range(d_v)
        for a in range(len(x[0]))
    ]
    unread = unread_keys(visible)
    pad_read = [j for j in unread if any(big["dv"][j])]  # a PAD key's dV, from the −1e9 row
    big_excluded = excluded["fill=-1e9"]
    scores = att.scaled_scores(q, k)[row]
    wide = bp.fill_backward_demo(
        q, k, v, d_out, visible, fill=BIG, added=True
    )  # −1e9 added, float64
    narrow = bp.fill_backward_demo(q, k, v, d_out, visible, fill=BIG, added=True, dtype="float32")
    replaced32 = bp.fill_backward_demo(q, k, v, d_out, visible, fill=BIG, dtype="float32")
    added_big = wide["weights"][row]
    others = [i for i in range(n) if i not in empty]
    s.holds(
        unguarded_nan_in_every_dv=all(map(math.isnan, flat(where["dv"]))),
        where_keeps_dq_dk_finite=where["nan_in"]["dq"] == where["nan_in"]["dk"] == 0,
        added_spoils_the_row_dq_and_every_dk=all(
            math.isnan(x) for g in [*added["dk"], *(added["dq"][i] for i in empty)] for x in g
        )
        and not any(math.isnan(x) for i in others for x in added["dq"][i]),
        excluding_the_row_saves_nothing=min(excluded[g]["nan"] for g in ("fill=-inf", "additive"))
        > 0,
        nan_in_every_dw_v=all(map(math.isnan, dw_v)),
        big_fill_no_nan=big["nan"] == 0,
        big_fill_spreads_the_empty_row=all(
            len(set(r["weights"][i])) == 1 for r in (big, replaced32) for i in empty
        ),
        big_added_follows_the_scores=len(set(added_big)) > 1,
        big_added_in_float32_is_big=all(float32(float32(BIG) + float32(x)) == BIG for x in scores),
        big_added_in_float32_spreads_the_row=all(
            len(set(narrow["weights"][i])) == 1 for i in empty
        ),
        big_added_in_float32_moves_the_row_dq=not zero(narrow["dq"][row]),
        big_fill_keeps_the_row_dq_zero=zero(x for i in empty for x in big["dq"][i]),
        big_fill_gives_a_pad_key_dv=bool(pad_read),
        excluded_big_fill_pad_keys_no_gradient=zero(
            x for j in unread for x in big_excluded["dk"][j] + big_excluded["dv"][j]
        ),
        zero_policy_outputs_and_dq_zero=zero_policy["nan"] == 0
        and zero(x for i in empty for x in zero_policy["outputs"][i] + zero_policy["dq"][i]),
    )

    def vec(xs):
        return fmt.vector(xs, cell=fmt.fmt)

    def shown(get, refused="—"):  # a policy's cell; the error policy computes nothing
        return lambda name: (
            refused if counted[name]["raised"] else get(counted[name], excluded[name])
        )

    s.table(
        "tbl_policies",
        POLICY_LABELS,
        Col("做法", POLICY_LABELS.get, "text"),
        Col(
            f"查询 {row} 的输出", shown(lambda c, e: vec(c["outputs"][row]), "报错，不计算"), "text"
        ),
        Col(f"查询 {row} 的 dQ", shown(lambda c, e: vec(c["dq"][row])), "text"),
        Col(f"{key(pad)}（PAD）的 dV", shown(lambda c, e: vec(c["dv"][pad])), "text"),
        Col("梯度中 NaN 的个数", shown(lambda c, e: fmt.count(c["nan"])), "text"),
        Col(f"排除第 {row} 行后 NaN 的个数", shown(lambda c, e: fmt.count(e["nan"])), "text"),
    )
    s.value("count", left_row=row, left_key=pad, zero_do=0)
    s.text(
        pol_rows=listing(f"第 {i} 行" for i in empty),
        big_pad_keys=keys(pad_read),
        added_big_p=fmt.slashed(added_big),
        added32_dq=fmt.vector(narrow["dq"][row], cell=fmt.fmt),
    )
    s.value(
        "count",
        pol_total=sum(len(zero_policy[g]) * len(zero_policy[g][0]) for g in ("dq", "dk", "dv")),
        nan_inf=where["nan"],
        nan_add=added["nan"],
        nan_add_dq=added["nan_in"]["dq"],
        nan_add_dk=added["nan_in"]["dk"],
        nan_add_dv=added["nan_in"]["dv"],
        nan_inf_ex=excluded["fill=-inf"]["nan"],
        nan_add_ex=excluded["additive"]["nan"],
        nan_w_total=len(dw_v),
        nan_w_count=sum(map(math.isnan, dw_v)),
    )
    return s


def gradient_check() -> Section:
    """Each of MUTANTS checked with dO all ones and with the random dO."""
    s = Section(PAGE, "如何判断是否做对")
    q, k, v, _ = EXAMPLE
    rand = random_d_out()
    ones = [[1.0] * len(row) for row in rand]

    def check(d_out, backward):
        return bp.gradient_check(q, k, v, d_out, backward=backward)["max"]

    results = {name: (check(ones, f), check(rand, f)) for name, f in MUTANTS.items()}
    forgot = bp.wrong_backward_forgets_d_out(q, k, v, ones)
    same = max(att.max_abs_diff(a, b) for a, b in zip(forgot, bp.attention_backward(q, k, v, ones)))
    s.holds(forgetting_d_out_changes_nothing_when_it_is_ones=same == 0.0)

    def caught(which):
        found = [name for name, errors in results.items() if errors[which] > bp.TOLERANCE]
        return f"{len(found)} 个（{listing(found)}）"

    s.value("count", ones_value=1)
    s.text(
        rand_do=fmt.vectors(rand),
        caught_rand=caught(1),
        caught_ones=caught(0),
        passed_both=listing(name for name, e in results.items() if max(e) <= bp.TOLERANCE),
    )
    s.value("power", fd_h=bp.STEP, fd_tol=bp.TOLERANCE)
    s.table(
        "tbl_mutants",
        results.items(),
        Col("反向实现", lambda r: r[0], "text"),
        Col("dO 全为 1：最大相对误差", lambda r: r[1][0], "difference"),
        Col("结论", lambda r: VERDICT[r[1][0] <= bp.TOLERANCE], "text"),
        Col("随机 dO：最大相对误差", lambda r: r[1][1], "difference"),
        Col("结论", lambda r: VERDICT[r[1][1] <= bp.TOLERANCE], "text"),
    )
    s.value("difference", mutant_gap=same)
    return s


def masks() -> Section:
    """The random dO's check under five masks."""
    s = Section(PAGE, "换一种 mask")
    q, k, v, _ = EXAMPLE
    rand = random_d_out()
    configs = [
        ("不加 mask", q, rand, dict(causal=False)),
        ("因果", q, rand, dict()),
        ("因果 + PAD", q, rand, dict(key_valid=PAD)),
        (f"缓存 past = {CACHE_PAST}", q[CACHE_PAST:], rand[CACHE_PAST:], dict(past=CACHE_PAST)),
        ("左侧 PAD + zero", q, rand, dict(key_valid=LEFT, empty_row="zero")),
    ]
    checks = [
        (name, bp.gradient_check(q_, k, v, d_, **options)) for name, q_, d_, options in configs
    ]
    s.value(
        "count",
        configs_n=len(checks),
        configs_passed=sum(r["max"] <= bp.TOLERANCE for _, r in checks),
        cache_new=len(q) - CACHE_PAST,
    )
    s.table(
        "tbl_configs",
        checks,
        Col("条件", lambda r: r[0], "text"),
        *[
            Col(f"{g} 相对误差", lambda r, g=g: r[1][g.lower()], "difference")
            for g in ("dQ", "dK", "dV")
        ],
        Col("结论", lambda r: VERDICT[r[1]["max"] <= bp.TOLERANCE], "text"),
    )
    return s


def step_sizes() -> Section:
    """The random dO's check at each of STEPS; float64's and float32's precision."""
    s = Section(PAGE, "步长 ε")
    q, k, v, _ = EXAMPLE
    rand = random_d_out()
    errors = [bp.gradient_check(q, k, v, rand, eps=eps)["max"] for eps in STEPS]
    best = min(range(len(STEPS)), key=errors.__getitem__)

    def two(x):
        return "2" + str(round(math.log2(x))).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))

    s.table(
        "tbl_h",
        zip(STEPS, errors),
        Col("步长 ε", lambda r: r[0], "power"),
        Col("最大相对误差", lambda r: r[1], "difference"),
        Col("结论", lambda r: VERDICT[r[1] <= bp.TOLERANCE], "text"),
    )
    s.value("power", h_best=STEPS[best])
    s.value("difference", h_best_err=errors[best])
    s.text(eps64=two(sys.float_info.epsilon), eps32=two(2.0**-23))
    s.value("sci", eps_cbrt=sys.float_info.epsilon ** (1 / 3))
    return s


def run_output() -> Section:
    """What running 02_backprop.py prints."""
    s = Section(PAGE, "运行结果示例")
    s.md(run_output=fmt.run_output("02_backprop.py"))
    return s


# -- the exercises ----------------------------------------------------------------------------------------
def jacobian_exercise() -> Section:
    s = Section(PAGE, "练习 一行 softmax 的雅可比矩阵")
    a = ex.jacobian_row()
    m = len(ex.JAC_SCORES)
    p0 = a["p"][0]
    p1 = a["p"][1]
    s.holds(
        jacobian_rows_sum_to_zero=all(abs(x) < ROUNDING for x in a["row_sums"]),
        jacobian_diagonal_is_p_one_minus_p=all(
            fmt.fmt(row[i]) == fmt.fmt(dg)
            for i, (row, dg) in enumerate(zip(a["jacobian"], a["diagonal"]))
        ),
        ds_sums_to_zero=abs(a["ds_sum"]) < ROUNDING,
    )
    offdiag = fmt.Calculation(
        f"{fmt.MINUS}{fmt.fmt(p0)}×{fmt.fmt(p1)}",
        -fmt.printed(fmt.fmt(p0)) * fmt.printed(fmt.fmt(p1)),
        a["jacobian"][0][1],
    )
    dot = fmt.products([(val(p), inp(x)) for p, x in zip(a["p"], ex.JAC_D_WEIGHTS)], a["dot"])
    s.holds(written_products_add_up=offdiag.adds_up and dot.adds_up)
    s.text(
        x1_p=", ".join(fmt.fmt(x) for x in a["p"]),
        x1_offdiag=f"J₀₁ = −p₀p₁ = {offdiag}",
        x1_dot=dot,
    )
    s.table(
        "x1_jac",
        range(m),
        Col("∂p ＼ ∂s", lambda i: f"∂p{i}", "text"),
        *[Col(f"∂s{b}", lambda i, b=b: a["jacobian"][i][b]) for b in range(m)],
        Col("行和", lambda i: abs(a["row_sums"][i]), "difference"),
        Col("p(1 − p)", lambda i: a["diagonal"][i]),
    )
    s.value("difference", x1_agree=max(abs(x - y) for x, y in zip(a["ds"], a["ds_by_matrix"])))
    s.table(
        "x1_ds",
        [("p ∘ (dp − Σ p dp)", a["ds"]), ("J · dp", a["ds_by_matrix"])],
        Col("算法", lambda r: r[0], "text"),
        *[Col(f"ds{b}", lambda r, b=b: r[1][b]) for b in range(m)],
        Col("之和", lambda r: abs(sum(r[1])), "difference"),
    )
    return s


def hand_exercise() -> Section:
    s = Section(PAGE, "练习 手算一格 dV 与一行 dS")
    a = ex.hand_steps()
    st = a["steps"]
    n = len(ex.HAND_Q)
    r = a["row"]
    s.holds(
        hand_ds_row_sums_to_zero=abs(sum(st["ds"][r])) < ROUNDING,
        hand_first_query_reads_only_itself=st["weights"][0][0] == 1.0,
        hand_first_query_dp_equals_d=st["dp"][0][0] == st["rowsum_do_o"][0],
    )
    s.value("count", x2_n=n, x2_d=len(ex.HAND_Q[0]), x2_zero=0)
    s.table(
        "x2_forward",
        range(n),
        Col("查询", positions(n).__getitem__, "text"),
        Col("分数（可见的 Key）", lambda i: fmt.slashed(x for x, ok in zip(a["scores"][i], st["visible"][i]) if ok), "text"),
        Col("权重 P", lambda i: fmt.slashed(st["weights"][i]), "text"),
        Col("输出 O", lambda i: fmt.slashed(st["outputs"][i]), "text"),
    )  # fmt: skip
    s.table(
        "x2_backward",
        range(n),
        Col("查询", positions(n).__getitem__, "text"),
        Col("dP（dO 乘 V 的转置）", lambda i: fmt.slashed(st["dp"][i]), "text"),
        Col("D（dO 与 O 逐行点积）", lambda i: st["rowsum_do_o"][i]),
    )
    dv = fmt.products([(val(p), inp(x)) for p, x in a["dv_terms"]], st["dv"][0][0])
    ds_row = [ds_cell(p, dp, d, st["ds"][r][j]) for j, (p, dp, d) in enumerate(a["ds_terms"])]
    s.holds(written_cells_add_up=dv.adds_up and all(c.adds_up for c in ds_row))
    s.text(x2_dv=dv)
    s.md(x2_ds="\n".join(f"- Key {j}：{c}" for j, c in enumerate(ds_row)))
    s.value("difference", x2_ds_sum=abs(sum(st["ds"][r])))
    s.text(x2_ds_first=listing(fmt.fmt(x) for x in st["ds"][0]))
    return s


def zeros_exercise() -> Section:
    s = Section(PAGE, "练习 哪些 Key 的梯度恰为 0")
    a = ex.mask_zeros()
    st = a["steps"]
    n_key = len(ex.ZERO_K)
    rows = positions(len(ex.ZERO_Q), ex.ZERO_PAST)
    s.text(x3_keys=span(0, n_key - 1))
    s.table(
        "x3_table",
        range(len(rows)),
        Col("查询 ＼ Key", rows.__getitem__, "text"),
        *[Col(key(j), lambda i, j=j: fmt.mark(a["visible"][i][j]), "text") for j in range(n_key)],
    )
    d_k = len(ex.ZERO_K[0])
    d_v = len(ex.ZERO_V[0])
    s.table(
        "x3_grads",
        range(n_key),
        Col("Key", key, "text"),
        Col(
            "被哪些查询读",
            lambda j: "、".join(f"查询 {i}" for i in a["readers"][j]) or "没有",
            "text",
        ),
        *[Col(f"dK {c}", lambda j, c=c: st["dk"][j][c]) for c in range(d_k)],
        *[Col(f"dV {c}", lambda j, c=c: st["dv"][j][c]) for c in range(d_v)],
    )
    s.text(x3_zero_keys=keys(a["zero_keys"]))
    zero_facts(s, st, "x3")
    return s


def correction_exercise() -> Section:
    """D for the given dO and for dO⊥, and how far dropping D moves dQ, dK and dV."""
    s = Section(PAGE, "练习 修正项 D 什么时候为 0")
    c4 = ex.correction_cases()
    corr = (ex.CORR_Q, ex.CORR_K, ex.CORR_V)
    gaps = {}  # per case: the largest absolute difference in dQ, in dK, in dV
    for name, case in c4["cases"].items():
        right = bp.attention_backward(*corr, case["d_out"])
        dropped = bp.wrong_backward_no_rowsum(*corr, case["d_out"])
        gaps[name] = [att.max_abs_diff(a, b) for a, b in zip(right, dropped)]
    (given_name, given), (_, orth) = c4["cases"].items()
    s.holds(
        given_d_not_all_zero=not zero(given["D"]),
        orthogonal_d_zero=zero(orth["D"]),
        dropping_d_changes_nothing_when_it_is_zero=orth["gap"] == 0.0,
        dv_does_not_use_d=all(g[2] == 0.0 for g in gaps.values()),
        largest_gap_is_the_answer=all(max(gaps[n]) == c["gap"] for n, c in c4["cases"].items()),
    )
    s.value("count", x4_n=len(ex.CORR_Q))
    o = c4["outputs"]
    g = given["d_out"]
    h = orth["d_out"]
    d = [
        fmt.products([(inp(x), val(y)) for x, y in zip(g[i], o[i])], given["D"][i])
        for i in range(len(o))
    ]
    d_orth = [
        fmt.products([(val(x), val(y)) for x, y in zip(h[i], o[i])], orth["D"][i])
        for i in range(len(o))
    ]
    s.holds(written_rowsums_add_up=all(c.adds_up for c in d + d_orth))
    s.table(
        "x4_rows",
        range(len(o)),
        Col("查询", lambda i: f"查询 {i}", "text"),
        Col("O 的这一行", lambda i: fmt.vector(o[i], cell=fmt.fmt), "text"),
        Col("dO 的这一行", lambda i: fmt.vector(g[i]), "text"),
        Col("D = rowsum(dO ∘ O)", d.__getitem__, "text"),
        Col("dO⊥ 的这一行", lambda i: fmt.vector(h[i], cell=fmt.fmt), "text"),
        Col("D⊥ = rowsum(dO⊥ ∘ O)", d_orth.__getitem__, "text"),
    )
    s.table(
        "x4_gaps",
        c4["cases"].items(),
        Col("上游梯度", lambda r: r[0], "text"),
        Col("D 的最大绝对值", lambda r: max(map(abs, r[1]["D"]))),
        Col("dQ 的最大差", lambda r: gaps[r[0]][0], "difference"),
        Col("dK 的最大差", lambda r: gaps[r[0]][1], "difference"),
        Col("dV 的最大差", lambda r: gaps[r[0]][2], "difference"),
        Col("三者中最大", lambda r: r[1]["gap"], "difference"),
    )
    s.value("difference", x4_given_gap=given["gap"], x4_orth_gap=orth["gap"])
    s.text(
        x4_given_where=listing(
            g for g, x in zip(("dQ", "dK"), gaps[given_name]) if x == given["gap"]
        )
    )
    return s


def code_exercise() -> Section:
    """The doctest the reader's function must pass."""
    s = Section(PAGE, "练习 写一个函数算出修正项")
    s.md(x5_doctest=fmt.doctest_block(ex.rowsum_correction))
    return s


def exercises() -> list[Section]:
    return [
        jacobian_exercise(),
        hand_exercise(),
        zeros_exercise(),
        correction_exercise(),
        code_exercise(),
    ]
