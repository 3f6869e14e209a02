"""The backprop page's book side: the facts book/ch02/backprop.md glues.

The page's sentences are fixed prose; where one states a fact of its example (a gradient exactly 0, a
check passed, no NaN), the section that glues the example checks the fact with :func:`holds` and stops
the build naming the claim if it is false. Tables say per row what the data decide (``VERDICT``).
"""

from __future__ import annotations

import importlib
import math
import random
import sys

from chapter import fmt
from chapter.fmt import Md, glue_all, names, slashed  # noqa: F401 (the page calls page.glue_all)
from chapter.grid_figures import chain_figure

att = importlib.import_module("02_attention")
bp = importlib.import_module("02_backprop")
ex = importlib.import_module("02_exercises_backprop")

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


def holds(**claims: bool) -> None:
    """The page's fixed sentences, each checked against its example (:func:`chapter.fmt.holds`)."""
    fmt.holds("反向传播一页", claims)


def zero(xs) -> bool:
    """Every entry exactly 0 (what the page writes 「恰为 0」 and a test checks with ``==``)."""
    return all(x == 0.0 for x in xs)


def flat(*matrices) -> list[float]:
    return [x for m in matrices for row in m for x in row]


def inp(x: float, write=fmt.short) -> str:
    """A factor inside a product: an input as typed (``val``: a computed value), negatives in brackets."""
    return f"({write(x)})" if x < 0 and write(x) != write(0.0) else write(x)


def val(x: float) -> str:
    return inp(x, fmt.fmt)


def products(pairs, exact: float, sqrt_of: int | None = None) -> str:
    """``a×b + c×d = r`` from pairs of printed factors (``≈`` where rounding moved the last digit)."""
    text = " + ".join(f"{a}×{b}" for a, b in pairs)
    value = sum(fmt.printed(a) * fmt.printed(b) for a, b in pairs)
    if sqrt_of is not None:
        text = f"({text}) / √{sqrt_of}"
        value = value / math.sqrt(sqrt_of)
    return f"{text} {fmt.equals(value, exact)} {fmt.fmt(exact)}"


def ds_cell(p: float, dp: float, d: float, exact: float) -> str:
    """One cell of dS = P ∘ (dP − D), written out: ``p×(dp − D) = dS``."""
    value = fmt.printed(val(p)) * (fmt.printed(fmt.fmt(dp)) - fmt.printed(val(d)))
    return f"{val(p)}×({fmt.fmt(dp)} − {val(d)}) {fmt.equals(value, exact)} {fmt.fmt(exact)}"


def table(corner: str, columns: list[str], matrix, labels: list[str]) -> fmt.Table:
    return fmt.Table([corner] + columns, fmt.rows_of(matrix, labels.__getitem__))


def queries(n: int, past: int = 0) -> list[str]:
    return [f"查询 {i}（位置 {past + i}）" for i in range(n)]


def inputs(prefix: str, **matrices) -> dict:
    return {f"{prefix}_{name}": fmt.vectors(m) for name, m in matrices.items()}


def verdict(error: float) -> str:
    return VERDICT[error <= bp.TOLERANCE]


def forbidden_cells(visible) -> list[tuple[int, int]]:
    return [(i, j) for i, row in enumerate(visible) for j, ok in enumerate(row) if not ok]


def unread_keys(visible) -> list[int]:
    """The keys no query may read (a PAD key, say)."""
    return [j for j in range(len(visible[0])) if not any(row[j] for row in visible)]


def zero_facts(steps: dict, prefix: str) -> dict:
    """The forbidden cells, how many have weight and dS exactly 0; the keys no query reads.

    The page says those keys' dK and dV are exactly 0: :func:`holds` checks it.
    """
    visible = steps["visible"]
    cells = forbidden_cells(visible)
    keys = unread_keys(visible)
    unread_gradients = [x for j in keys for x in steps["dk"][j] + steps["dv"][j]]
    holds(**{f"{prefix}_unread_keys_get_no_gradient": zero(unread_gradients)})
    return {
        f"{prefix}_forbidden": fmt.count(len(cells)),
        f"{prefix}_zero_p": fmt.count(sum(steps["weights"][i][j] == 0.0 for i, j in cells)),
        f"{prefix}_zero_ds": fmt.count(sum(steps["ds"][i][j] == 0.0 for i, j in cells)),
        f"{prefix}_unread": names("Key", keys),
    }


def policies(q, k, v, d_out, visible) -> dict:
    """The same inputs under the five ways of :data:`POLICY_LABELS`: forward, gradients, NaN count."""
    try:
        att.masked_attention(q, k, v, visible, empty_row="error")
        results = {"error": {"raised": None}}
    except ValueError as error:
        if not str(error).startswith("第 "):  # a bad input, not the fully masked row this is about
            raise
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


# -- the page's examples, one function each ----------------------------------------------------------------
def worked_values(q, k, v, d_out) -> dict:
    """The causal example step by step: every table, and the cells the prose writes out (three positions)."""
    n = len(q)
    d = len(q[0])
    d_v = len(v[0])
    visible = att.visibility(n, n)
    s = bp.backward_steps(q, k, v, d_out, visible)
    scores = att.scaled_scores(q, k)
    p = s["weights"]
    o = s["outputs"]
    ds = s["ds"]
    rows = queries(n)
    key_cols = fmt.keys(n, corner="")[1:]
    masked = [[a + m for a, m in zip(sr, mr)] for sr, mr in zip(scores, att.additive_mask(visible))]
    dims = [f"第 {c} 维" for c in range(d)]
    cols = [f"第 {c} 列" for c in range(d_v)]
    holds(
        first_query_reads_only_itself=p[0][0] == 1.0,
        first_query_dq_zero=zero(s["dq"][0]),
        ds_rows_sum_to_zero=all(abs(sum(row)) < ROUNDING for row in ds),
        forbidden_ds_zero=zero(ds[i][j] for i, j in forbidden_cells(visible)),
    )
    return {
        "fig_chain": chain_figure(s, scores),
        "ex_d": fmt.count(d), "ex_n": fmt.count(n), **inputs("ex", q=q, k=k, v=v, do=d_out),
        "tbl_ex_s": table("S", key_cols, masked, rows), "tbl_ex_p": table("P", key_cols, p, rows),
        "tbl_ex_o": table("O", cols, o, rows), "tbl_ex_dv": table("dV", cols, s["dv"], key_cols),
        "tbl_ex_dp": table("dP", key_cols, s["dp"], rows),
        "tbl_ex_rowsum": fmt.Table(["查询", "dO 与 O 同一行的点积", "dP 与 P 同一行的点积", "两者之差"],
                                   [[r, fmt.fmt(a), fmt.fmt(b), fmt.difference(abs(a - b))]
                                    for r, a, b in zip(rows, s["rowsum_do_o"], s["rowsum_dp_p"])]),
        "tbl_ex_ds": table("dS", key_cols, ds, rows),
        "tbl_ex_dq": table("dQ", dims, s["dq"], rows), "tbl_ex_dk": table("dK", dims, s["dk"], key_cols),
        "calc_dv": products([(val(p[i][0]), inp(d_out[i][0])) for i in range(n)], s["dv"][0][0]),
        "calc_dp": products([(inp(d_out[1][c]), inp(v[0][c])) for c in range(d_v)], s["dp"][1][0]),
        "calc_d": products([(inp(d_out[1][c]), val(o[1][c])) for c in range(d_v)], s["rowsum_do_o"][1]),
        "calc_ds": ds_cell(p[1][0], s["dp"][1][0], s["rowsum_do_o"][1], ds[1][0]),
        "calc_dq": products([(val(ds[2][j]), inp(k[j][0])) for j in range(n)], s["dq"][2][0], sqrt_of=d),
        "calc_dk": products([(val(ds[i][0]), inp(q[i][1])) for i in range(n)], s["dk"][0][1], sqrt_of=d),
    }  # fmt: skip


def projection_values(x, w_q, w_k, w_v, d_out) -> dict:
    """The projection example: dW_q, dW_k, dW_v in one table, and the finite-difference check."""
    q, k, v = (att.matmul(x, w) for w in (w_q, w_k, w_v))  # Q = X W_q, K = X W_k, V = X W_v
    grads = bp.projection_backward(x, w_q, w_k, w_v, *bp.attention_backward(q, k, v, d_out))
    header = ["梯度"] + [
        f"第 {a} 行 · 第 {c} 列" for a in range(len(x[0])) for c in range(len(w_q[0]))
    ]
    rows = [
        [name] + [fmt.fmt(g) for row in grads[name.lower()] for g in row]
        for name in ("dW_q", "dW_k", "dW_v")
    ]
    check = bp.projection_gradient_check(x, w_q, w_k, w_v, d_out)["max"]
    holds(projection_check_passes=check <= bp.TOLERANCE)
    return {
        "pj_n": fmt.count(len(x)),
        **inputs("pj", x=x, wq=w_q, wk=w_k, wv=w_v),
        "tbl_pj": fmt.Table(header, rows),
        "pj_err": fmt.difference(check),
    }


def forbidden_values(q, k, v, d_out) -> dict:
    """The causal example's forbidden cells: weight and dS exactly 0 with −∞, and with the finite fills
    (−1e9, float64's most negative number) the very weights and gradients of −∞, bit for bit."""
    n = len(q)
    causal = att.visibility(n, n)
    c = bp.backward_steps(q, k, v, d_out, causal)
    filled = [bp.fill_backward_demo(q, k, v, d_out, causal, fill=f) for f in FINITE_FILLS]
    same = ("weights", "dq", "dk", "dv")
    holds(
        every_row_has_an_allowed_key=all(any(row) for row in causal),
        forbidden_weights_zero=zero(c["weights"][i][j] for i, j in forbidden_cells(causal)),
        forbidden_ds_zero=zero(c["ds"][i][j] for i, j in forbidden_cells(causal)),
        finite_fills_give_the_same_weights_and_gradients=all(
            f[g] == c[g] for f in filled for g in same
        ),
    )
    return {
        "big_fill": f"{fmt.MINUS}1e{round(math.log10(-BIG))}",  # as the demo's code types it
        "float_min": fmt.sci(FINITE_FILLS[1]),
    }


def masked_values(q, k, v, d_out, pad, left, x) -> dict:
    """A PAD key (``pad``): its exact zeros; a fully masked row (``left``) five ways; the NaN in dW_v."""
    n = len(q)
    d = len(q[0])
    d_v = len(v[0])
    j = pad.index(False)
    s = bp.backward_steps(q, k, v, d_out, att.visibility(n, n, key_valid=pad))
    _, fd_k, fd_v = bp.finite_difference(q, k, v, d_out, key_valid=pad)
    holds(pad_key_finite_difference_zero=zero(fd_k[j] + fd_v[j]))
    key_cols = fmt.keys(n, corner="")[1:]
    kv = [f"dK {c}" for c in range(d)] + [f"dV {c}" for c in range(d_v)]
    visible = att.visibility(n, n, key_valid=left)
    row = [any(r) for r in visible].index(False)
    key = left.index(False)
    empty = [i for i, r in enumerate(visible) if not any(r)]
    counted = policies(q, k, v, d_out, visible)
    kept = [list(g) if any(vis) else [0.0] * d_v for g, vis in zip(d_out, visible)]
    excluded = policies(q, k, v, kept, visible)

    def vec(xs):
        return fmt.vector(xs, cell=fmt.fmt)

    rows = [
        [label, "报错，不计算"] + ["—"] * 4
        if counted[name]["raised"]
        else [
            label,
            vec(counted[name]["outputs"][row]),
            vec(counted[name]["dq"][row]),
            vec(counted[name]["dv"][key]),
            fmt.count(counted[name]["nan"]),
            fmt.count(excluded[name]["nan"]),
        ]
        for name, label in POLICY_LABELS.items()
    ]
    header = [
        "做法",
        f"查询 {row} 的输出",
        f"查询 {row} 的 dQ",
        f"Key {key}（PAD）的 dV",
        "梯度中 NaN 的个数",
        f"排除第 {row} 行后 NaN 的个数",
    ]
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
    holds(
        unguarded_nan_in_every_dv=all(map(math.isnan, flat(where["dv"]))),
        where_keeps_dq_dk_finite=where["nan_in"]["dq"] == where["nan_in"]["dk"] == 0,
        added_spoils_dq_dk=added["nan_in"]["dq"] > 0 and added["nan_in"]["dk"] > 0,
        excluding_the_row_saves_nothing=min(excluded[g]["nan"] for g in ("fill=-inf", "additive"))
        > 0,
        nan_in_every_dw_v=all(map(math.isnan, dw_v)),
        big_fill_no_nan=big["nan"] == 0,
        big_fill_spreads_the_empty_row=all(len(set(big["weights"][i])) == 1 for i in empty),
        big_fill_keeps_the_row_dq_zero=zero(x for i in empty for x in big["dq"][i]),
        big_fill_gives_a_pad_key_dv=bool(pad_read),
        excluded_big_fill_pad_keys_no_gradient=zero(
            x for j in unread for x in big_excluded["dk"][j] + big_excluded["dv"][j]
        ),
        zero_policy_outputs_and_dq_zero=zero_policy["nan"] == 0
        and zero(x for i in empty for x in zero_policy["outputs"][i] + zero_policy["dq"][i]),
    )
    return {
        "pad_valid": "、".join(map(str, pad)), "pad_key": fmt.count(j),
        "tbl_pad_p": table("P", key_cols, s["weights"], queries(n)),
        "tbl_pad_ds": table("dS", key_cols, s["ds"], queries(n)),
        "tbl_pad_kv": table("Key", kv, [a + b for a, b in zip(s["dk"], s["dv"])], key_cols),
        **zero_facts(s, "pad"),
        "left_valid": "、".join(map(str, left)), "left_row": fmt.count(row), "left_key": fmt.count(key),
        "zero_do": fmt.count(0),
        "tbl_policies": fmt.Table(header, rows), "pol_rows": "、".join(f"第 {i} 行" for i in empty),
        "pol_total": fmt.count(sum(len(zero_policy[g]) * len(zero_policy[g][0]) for g in ("dq", "dk", "dv"))),
        "nan_inf": fmt.count(where["nan"]), "nan_add": fmt.count(added["nan"]),
        "nan_inf_ex": fmt.count(excluded["fill=-inf"]["nan"]), "nan_add_ex": fmt.count(excluded["additive"]["nan"]),
        "big_pad_keys": names("Key", pad_read),
        "nan_w_total": fmt.count(len(dw_v)), "nan_w_count": fmt.count(sum(map(math.isnan, dw_v))),
    }  # fmt: skip


def check_values(q, k, v, seed: int, lo: int, hi: int, cache_past: int, pad, left, steps) -> dict:
    """The gradient check: each of MUTANTS on dO all ones and on a random dO; five masks; each ε."""
    n = len(q)
    d_v = len(v[0])
    rng = random.Random(seed)
    rand = [[round(rng.uniform(lo, hi), 1) for _ in range(d_v)] for _ in range(n)]
    ones = [[1.0] * d_v for _ in range(n)]

    def check(d, f):
        return bp.gradient_check(q, k, v, d, backward=f)["max"]

    results = {name: (check(ones, f), check(rand, f)) for name, f in MUTANTS.items()}
    same = [
        att.max_abs_diff(a, b)
        for a, b in zip(
            bp.wrong_backward_forgets_d_out(q, k, v, ones), bp.attention_backward(q, k, v, ones)
        )
    ]
    holds(forgetting_d_out_changes_nothing_when_it_is_ones=max(same) == 0.0)
    header = ["反向实现", "dO 全为 1：最大相对误差", "结论", "随机 dO：最大相对误差", "结论"]

    def found(ns):
        return f"{len(ns)} 个（{'、'.join(ns) or '无'}）"

    values = {
        "ones_value": fmt.count(1), "rand_lo": fmt.count(lo), "rand_hi": fmt.count(hi), "rand_seed": fmt.count(seed),
        "rand_do": fmt.vectors(rand), "fd_h": fmt.power(bp.STEP), "fd_tol": fmt.power(bp.TOLERANCE),
        "tbl_mutants": fmt.Table(header, [[name, fmt.difference(a), verdict(a), fmt.difference(b), verdict(b)]
                                          for name, (a, b) in results.items()]),
        "caught_rand": found([name for name, (_, e) in results.items() if e > bp.TOLERANCE]),
        "caught_ones": found([name for name, (e, _) in results.items() if e > bp.TOLERANCE]),
        "passed_both": "、".join(name for name, e in results.items() if max(e) <= bp.TOLERANCE) or "无",
        "mutant_gap": fmt.difference(max(same)),
    }  # fmt: skip
    configs = [
        ("不加 mask", (q, rand), dict(causal=False)),
        ("因果", (q, rand), dict()),
        ("因果 + PAD", (q, rand), dict(key_valid=pad)),
        (
            f"缓存 past = {fmt.count(cache_past)}",
            (q[cache_past:], rand[cache_past:]),
            dict(past=cache_past),
        ),
        ("左侧 PAD + zero", (q, rand), dict(key_valid=left, empty_row="zero")),
    ]
    checks = [
        (name, bp.gradient_check(q_, k, v, d_, **options)) for name, (q_, d_), options in configs
    ]
    errors = [bp.gradient_check(q, k, v, rand, eps=eps)["max"] for eps in steps]
    best = min(range(len(steps)), key=errors.__getitem__)

    def two(x):
        return "2" + str(round(math.log2(x))).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))

    return values | {
        "configs_n": fmt.count(len(checks)),
        "configs_passed": fmt.count(sum(r["max"] <= bp.TOLERANCE for _, r in checks)),
        "cache_past": fmt.count(cache_past),
        "cache_new": fmt.count(len(q) - cache_past),
        "tbl_configs": fmt.Table(
            ["条件", "dQ 相对误差", "dK 相对误差", "dV 相对误差", "结论"],
            [
                [name] + [fmt.difference(r[g]) for g in ("dq", "dk", "dv")] + [verdict(r["max"])]
                for name, r in checks
            ],
        ),
        "h_steps": "、".join(fmt.power(eps) for eps in steps),
        "tbl_h": fmt.Table(
            ["步长 ε", "最大相对误差", "结论"],
            [[fmt.power(eps), fmt.difference(e), verdict(e)] for eps, e in zip(steps, errors)],
        ),
        "h_best": fmt.power(steps[best]),
        "h_best_err": fmt.difference(errors[best]),
        "eps64": two(sys.float_info.epsilon),
        "eps32": two(2.0**-23),
        "eps_cbrt": fmt.sci(sys.float_info.epsilon ** (1 / 3)),
    }


# -- the exercises ----------------------------------------------------------------------------------------------
def exercise_values() -> dict:
    """Every number and table of the five exercises and their solutions."""
    a1 = ex.jacobian_row()
    m1 = len(ex.JAC_SCORES)
    p0 = a1["p"][0]
    p1 = a1["p"][1]
    holds(
        jacobian_rows_sum_to_zero=all(abs(x) < ROUNDING for x in a1["row_sums"]),
        jacobian_diagonal_is_p_one_minus_p=all(
            fmt.fmt(row[a]) == fmt.fmt(dg) for a, (row, dg) in enumerate(zip(a1["jacobian"], a1["diagonal"]))
        ),
        ds_sums_to_zero=abs(a1["ds_sum"]) < ROUNDING,
    )  # fmt: skip

    def listed(xs, cell=fmt.short):
        return ", ".join(cell(x) for x in xs)

    values = {
        "x1_scores": listed(ex.JAC_SCORES), "x1_dp": listed(ex.JAC_D_WEIGHTS), "x1_p": listed(a1["p"], fmt.fmt),
        "x1_jac": fmt.Table(["∂p ＼ ∂s"] + [f"∂s{b}" for b in range(m1)] + ["行和", "p(1 − p)"],
                            [[f"∂p{a}"] + [fmt.fmt(x) for x in row] + [fmt.difference(abs(s)), fmt.fmt(dg)]
                             for a, (row, s, dg) in enumerate(zip(a1["jacobian"], a1["row_sums"], a1["diagonal"]))]),
        "x1_offdiag": f"J₀₁ = −p₀p₁ = {fmt.MINUS}{fmt.fmt(p0)}×{fmt.fmt(p1)} = {fmt.fmt(a1['jacobian'][0][1])}",
        "x1_dot": " + ".join(f"{val(p)}×{inp(x)}" for p, x in zip(a1["p"], ex.JAC_D_WEIGHTS)) + f" = {fmt.fmt(a1['dot'])}",
        "x1_agree": fmt.difference(max(abs(a - b) for a, b in zip(a1["ds"], a1["ds_by_matrix"]))),
        "x1_ds": fmt.Table(["算法"] + [f"ds{b}" for b in range(m1)] + ["之和"], [
            ["p ∘ (dp − Σ p dp)"] + [fmt.fmt(x) for x in a1["ds"]] + [fmt.difference(abs(a1["ds_sum"]))],
            ["J · dp"] + [fmt.fmt(x) for x in a1["ds_by_matrix"]] + [fmt.difference(abs(sum(a1["ds_by_matrix"])))]]),
    }  # fmt: skip
    a2 = ex.hand_steps()
    s2 = a2["steps"]
    n2 = len(ex.HAND_Q)
    r2 = a2["row"]
    holds(
        hand_ds_row_sums_to_zero=abs(sum(s2["ds"][r2])) < ROUNDING,
        hand_first_query_reads_only_itself=s2["weights"][0][0] == 1.0,
        hand_first_query_dp_equals_d=s2["dp"][0][0] == s2["rowsum_do_o"][0],
    )
    values |= {
        "x2_n": fmt.count(n2), "x2_d": fmt.count(len(ex.HAND_Q[0])), "x2_row": fmt.count(r2),
        "x2_zero": fmt.count(0), **inputs("x2", q=ex.HAND_Q, k=ex.HAND_K, v=ex.HAND_V, do=ex.HAND_D_OUT),
        "x2_forward": fmt.Table(["查询", "分数（可见的 Key）", "权重 P", "输出 O"], [
            [queries(n2)[i], slashed(x for x, ok in zip(a2["scores"][i], vis) if ok),
             slashed(s2["weights"][i]), slashed(s2["outputs"][i])] for i, vis in enumerate(s2["visible"])]),
        "x2_backward": fmt.Table(["查询", "dP（dO 乘 V 的转置）", "D（dO 与 O 逐行点积）"], [
            [queries(n2)[i], slashed(s2["dp"][i]), fmt.fmt(s2["rowsum_do_o"][i])] for i in range(n2)]),
        "x2_dv": products([(val(p), inp(x)) for p, x in a2["dv_terms"]], s2["dv"][0][0]),
        "x2_ds": Md("\n".join(f"- Key {j}：{ds_cell(p, dp, big, s2['ds'][r2][j])}"
                              for j, (p, dp, big) in enumerate(a2["ds_terms"]))),
        "x2_ds_sum": fmt.difference(abs(sum(s2["ds"][r2]))), "x2_ds_first": "、".join(fmt.fmt(x) for x in s2["ds"][0]),
    }  # fmt: skip
    a3 = ex.mask_zeros()
    s3 = a3["steps"]
    nq3 = len(ex.ZERO_Q)
    nk3 = len(ex.ZERO_K)
    values |= {
        "x3_past": fmt.count(ex.ZERO_PAST), "x3_new": fmt.count(ex.ZERO_NEW), "x3_valid": "、".join(map(str, ex.ZERO_VALID)),
        **inputs("x3", q=ex.ZERO_Q, k=ex.ZERO_K, v=ex.ZERO_V, do=ex.ZERO_D_OUT),
        "x3_keys": f"Key 0 到 Key {nk3 - 1}",
        "x3_table": fmt.Table(fmt.keys(nk3), [[queries(nq3, ex.ZERO_PAST)[i]] + [fmt.mark(ok) for ok in row]
                                              for i, row in enumerate(a3["visible"])]),
        "x3_grads": fmt.Table(["Key", "被哪些查询读"] + [f"dK {c}" for c in range(len(ex.ZERO_K[0]))]
                              + [f"dV {c}" for c in range(len(ex.ZERO_V[0]))],
                              [[f"Key {j}", "、".join(f"查询 {i}" for i in rd) or "没有"]
                               + [fmt.fmt(x) for x in s3["dk"][j] + s3["dv"][j]] for j, rd in enumerate(a3["readers"])]),
        "x3_zero_keys": names("Key", a3["zero_keys"]), **zero_facts(s3, "x3"),
    }  # fmt: skip
    values |= correction_values()
    values["x5_doctest"] = Md(fmt.doctest_block(ex.rowsum_correction))
    return values


def correction_values() -> dict:
    """Exercise 2.6.4: D for the given dO and for dO⊥, and how far dropping D moves dQ, dK and dV."""
    c4 = ex.correction_cases()
    corr = (ex.CORR_Q, ex.CORR_K, ex.CORR_V)
    gaps = {}  # per case: the largest absolute difference in dQ, in dK, in dV
    for name, case in c4["cases"].items():
        right = bp.attention_backward(*corr, case["d_out"])
        dropped = bp.wrong_backward_no_rowsum(*corr, case["d_out"])
        gaps[name] = [att.max_abs_diff(a, b) for a, b in zip(right, dropped)]
    (_, given), (_, orth) = c4["cases"].items()
    holds(
        given_d_not_all_zero=not zero(given["D"]),
        orthogonal_d_zero=zero(orth["D"]),
        dropping_d_changes_nothing_when_it_is_zero=orth["gap"] == 0.0,
        dv_does_not_use_d=all(g[2] == 0.0 for g in gaps.values()),
        largest_gap_is_the_answer=all(max(gaps[n]) == c["gap"] for n, c in c4["cases"].items()),
    )
    header = [
        "上游梯度",
        "D 的最大绝对值",
        "dQ 的最大差",
        "dK 的最大差",
        "dV 的最大差",
        "三者中最大",
    ]
    return {
        "x4_n": fmt.count(len(ex.CORR_Q)),
        **inputs("x4", q=ex.CORR_Q, k=ex.CORR_K, v=ex.CORR_V, do=ex.CORR_D_OUT),
        "x4_rows": fmt.Table(["查询", "O 的这一行", "dO 的这一行", "D = rowsum(dO ∘ O)", "dO⊥ 的这一行",
                              "D⊥ = rowsum(dO⊥ ∘ O)"], [
            [f"查询 {i}", fmt.vector(o, cell=fmt.fmt), fmt.vector(g), products([(inp(a), val(b)) for a, b in zip(g, o)],
             given["D"][i]), fmt.vector(h, cell=fmt.fmt), products([(val(a), val(b)) for a, b in zip(h, o)], orth["D"][i])]
            for i, (o, g, h) in enumerate(zip(c4["outputs"], given["d_out"], orth["d_out"]))]),
        "x4_gaps": fmt.Table(header, [[name, fmt.fmt(max(map(abs, case["D"])))]
                                      + [fmt.difference(g) for g in gaps[name]] + [fmt.difference(case["gap"])]
                                      for name, case in c4["cases"].items()]),
        "x4_given_gap": fmt.difference(given["gap"]), "x4_orth_gap": fmt.difference(orth["gap"]),
        "x4_given_where": "、".join(g for g, x in zip(("dQ", "dK"), gaps[next(iter(gaps))]) if x == given["gap"]),
    }  # fmt: skip
