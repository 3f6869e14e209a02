"""The backpropagation page's book side: the facts, tables and few sentences its examples decide.

``code/02_backprop.py`` computes the gradients. Each ``*_values`` function runs it once on one
example and returns every name the page (``book/ch02/backprop.md``) glues: strings, :class:`Md`
tables and the figure (``chapter.backprop_figure``). A sentence that depends on the data is built
here from the same results as its table. Values by ``fmt.fmt``, errors by ``fmt.difference``.

>>> cell(0.0), cell(-0.25), cell(float("nan")), fmt.difference(2.3e-11), fmt.power(1e-5)
('0.0000', '−0.2500', 'NaN', '2.3 × 10⁻¹¹', '10⁻⁵')
"""

from __future__ import annotations

import importlib
import math
import random
import sys

from chapter import fmt
from chapter.backprop_figure import chain_figure
from chapter.fmt import Md, glue_all  # noqa: F401 (the page calls page.glue_all)

att = importlib.import_module("02_attention")
bp = importlib.import_module("02_backprop")
ex = importlib.import_module("02_exercises_backprop")

# The five ways of treating a fully masked row: the two policies of masked_attention, then three demos:
# the forbidden scores replaced by −∞ (masked_fill / where: no gradient through them), the additive mask
# S + M of this chapter (the gradient of S flows through M), and a large negative replacement.
POLICY_NAMES = ("error", "zero", "fill=-inf", "additive", "fill=-1e9")
POLICY_LABELS = {"error": "error：报错", "zero": "zero：输出 0", "fill=-inf": "演示：换成 −∞（masked_fill / where）",
                 "additive": "演示：加上 −∞（S + M）", "fill=-1e9": "演示：换成 −1e9"}


cell = fmt.fmt  # a computed value, whole or not: four decimals (an exact zero is said in words)


def paren(text: str) -> str:
    return f"({text})" if text.startswith(fmt.MINUS) else text


def inp(x: float) -> str:
    """An input inside a product: as typed, negatives in brackets."""
    return paren(fmt.short(x))


def val(x: float) -> str:
    """A computed value inside a product: four digits, negatives in brackets."""
    return paren(cell(x))


def written_out(text: str, from_printed: float, exact: float) -> str:
    """A calculation as the page writes it: its printed numbers, = or ≈ (``fmt.equals``), the result."""
    return f"{text} {fmt.equals(from_printed, exact)} {cell(exact)}"


def products(pairs, exact: float, sqrt_of: int | None = None) -> str:
    """``a×b + c×d = r`` from pairs of printed factors; with ``sqrt_of``, ``(a×b + c×d) / √d = r``.

    >>> products([("0.5000", "2"), ("0.5000", "(−1)")], 0.5)
    '0.5000×2 + 0.5000×(−1) = 0.5000'
    """
    text = " + ".join(f"{a}×{b}" for a, b in pairs)
    value = sum(fmt.printed(a) * fmt.printed(b) for a, b in pairs)
    if sqrt_of is not None:
        text, value = f"({text}) / √{sqrt_of}", value / math.sqrt(sqrt_of)
    return written_out(text, value, exact)


def ds_cell(p: float, dp: float, d: float, exact: float) -> str:
    """One cell of dS = P ∘ (dP − D), written out: ``p×(dp − D) = dS``."""
    value = fmt.printed(val(p)) * (fmt.printed(cell(dp)) - fmt.printed(val(d)))
    return written_out(f"{val(p)}×({cell(dp)} − {val(d)})", value, exact)


def queries(n: int, past: int = 0) -> list[str]:
    return [f"查询 {i}（位置 {past + i}）" for i in range(n)]


def table(corner: str, columns: list[str], matrix, labels: list[str]) -> Md:
    """A matrix as a table: one row per label, every entry a :func:`cell`."""
    return Md(fmt.md_table([corner] + columns, [[r] + [cell(x) for x in line] for r, line in zip(labels, matrix)]))


def dims(n: int, word: str = "维") -> list[str]:
    return [f"第 {c} {word}" for c in range(n)]


def flags(values) -> str:
    return "、".join(str(f) for f in values)


def verdict(error: float) -> str:
    return "通过" if error <= bp.TOLERANCE else "未通过"


def exact_zero(xs) -> str:
    return "恰为 0" if all(x == 0.0 for x in xs) else "不全为 0"


# -- sentences computed from the results ------------------------------------------------------------------
def zero_sentence(steps: dict) -> str:
    """Count the forbidden cells of ``bp.backward_steps``'s result and the gradients that are exactly 0.

    >>> s = bp.backward_steps([[1.0]], [[1.0], [2.0]], [[10.0], [30.0]], [[1.0]], [[True, False]])
    >>> zero_sentence(s)
    '可见性表禁止了 1 个格子，其中权重恰为 0 的有 1 个，dS 恰为 0 的有 1 个；所有查询都不许读的 Key 有 1 个（Key 1），它的 dK 与 dV 全部恰为 0。'
    """
    visible, p, ds = steps["visible"], steps["weights"], steps["ds"]
    cells = [(i, j) for i, row in enumerate(visible) for j, ok in enumerate(row) if not ok]
    zero_p = sum(p[i][j] == 0.0 for i, j in cells)
    zero_ds = sum(ds[i][j] == 0.0 for i, j in cells)
    unread = [j for j in range(len(visible[0])) if not any(row[j] for row in visible)]
    text = f"可见性表禁止了 {len(cells)} 个格子，其中权重恰为 0 的有 {zero_p} 个，dS 恰为 0 的有 {zero_ds} 个；"
    if not unread:
        return text + "没有哪个 Key 被所有查询禁止，所以每个 Key 都可能拿到梯度。"
    exact = all(x == 0.0 for j in unread for x in steps["dk"][j] + steps["dv"][j])
    names = "、".join(f"Key {j}" for j in unread)
    verdict_ = "全部恰为 0" if exact else "并不全为 0"
    it = "它" if len(unread) == 1 else "它们"
    return text + f"所有查询都不许读的 Key 有 {len(unread)} 个（{names}），{it}的 dK 与 dV {verdict_}。"


def check_facts(results: dict) -> dict:
    """``{implementation: (max error with dO all ones, with a random dO)}``: what each check caught.

    >>> check_facts({"正确": (1e-10, 1e-10), "丢掉修正项": (0.3, 0.4), "忘乘 dO": (0.0, 0.2)})["caught_ones"]
    '1 个（丢掉修正项）'
    """
    if not isinstance(results, dict) or not results:
        raise ValueError("results 必须是非空字典：实现名 → (全 1 误差, 随机误差)")
    found = lambda names: f"{len(names)} 个（{'、'.join(names) or '无'}）"  # noqa: E731
    return {"caught_rand": found([n for n, (_, rand) in results.items() if rand > bp.TOLERANCE]),
            "caught_ones": found([n for n, (ones, _) in results.items() if ones > bp.TOLERANCE]),
            "passed_both": "、".join(n for n, e in results.items() if max(e) <= bp.TOLERANCE) or "无"}


def _nan_count(m) -> int:
    return sum(math.isnan(x) for row in m for x in row)


def policies(q, k, v, d_out, visible) -> dict:
    """The same inputs under the four ways of :data:`POLICY_NAMES`: forward, gradients, NaN count.

    ``"error"`` gives ``{"raised": message or None}``; the others ``{"raised": None, "weights",
    "outputs", "dq", "dk", "dv", "nan": NaN among the three gradients}``.

    >>> r = policies([[0.0]], [[0.0], [0.0]], [[10.0], [30.0]], [[1.0]], [[False, False]])
    >>> r["error"]["raised"].startswith("第 0 个查询行没有任何可见的 Key")
    True
    >>> r["zero"]["dv"], r["fill=-inf"]["nan"], r["additive"]["nan"], r["fill=-1e9"]["dv"]
    ([[0.0], [0.0]], 2, 5, [[0.5], [0.5]])
    """
    try:
        att.masked_attention(q, k, v, visible, empty_row="error")
        results = {"error": {"raised": None}}
    except ValueError as error:
        if not str(error).startswith("第 "):  # a bad input, not the fully masked row this table is about
            raise
        results = {"error": {"raised": str(error)}}
    steps = bp.backward_steps(q, k, v, d_out, visible, empty_row="zero")
    results["zero"] = {key: steps[key] for key in ("weights", "outputs", "dq", "dk", "dv")}
    for name, fill in (("fill=-inf", -math.inf), ("fill=-1e9", -1e9)):
        results[name] = bp.fill_backward_demo(q, k, v, d_out, visible, fill=fill)
    results["additive"] = bp.fill_backward_demo(q, k, v, d_out, visible, fill=-math.inf, added=True)
    for name in POLICY_NAMES[1:]:
        results[name] |= {"raised": None, "nan": sum(_nan_count(results[name][g]) for g in ("dq", "dk", "dv"))}
    return results


def policy_facts(counted: dict, excluded: dict, visible) -> dict:
    """Two :func:`policies` results (the fully masked rows counted in the loss, then left out): the facts
    the page's sentence states, and the one clause on the −1e9 fill that the data decide.

    >>> vis = [[False, False], [True, True]]
    >>> a = policies([[0.0], [1.0]], [[0.0], [1.0]], [[1.0], [3.0]], [[1.0], [1.0]], vis)
    >>> b = policies([[0.0], [1.0]], [[0.0], [1.0]], [[1.0], [3.0]], [[0.0], [1.0]], vis)
    >>> f = policy_facts(a, b, vis)
    >>> f["pol_rows"], f["pol_total"], f["pol_nan"], f["pol_big"], f["pol_zero"]
    ('第 0 行', '6', ('2', '5', '2', '5'), '没有 NaN，但读了被禁止的 Key，第 0 行的输出不为 0', '恰为 0')
    """
    empty = [i for i, row in enumerate(visible) if not any(row)]
    if not empty:
        raise ValueError("visible 里没有全屏蔽的行：五种做法的结果相同，没有可比的")
    rows = "、".join(f"第 {i} 行" for i in empty)
    zero, big = counted["zero"], counted["fill=-1e9"]
    unread = [j for j in range(len(visible[0])) if not any(row[j] for row in visible)]
    pad_grad = "、".join(f"Key {j}" for j in unread if any(x != 0.0 for x in big["dv"][j]))
    reads = any(x != 0.0 for i in empty for x in big["outputs"][i])
    big_text = ("有 NaN" if big["nan"] else "没有 NaN") + (
        f"，但被所有查询禁止的 {pad_grad} 拿到了不为 0 的 dV" if pad_grad
        else f"，但读了被禁止的 Key，{rows}的输出不为 0" if reads else "")
    return {"pol_rows": rows, "pol_total": fmt.count(sum(len(m) * len(m[0]) for m in
                                                          (zero["dq"], zero["dk"], zero["dv"]))),
            "pol_nan": tuple(fmt.count(r[name]["nan"]) for r in (counted, excluded)
                             for name in ("fill=-inf", "additive")),
            "pol_big": big_text,
            "pol_zero": exact_zero([zero["nan"]] + [x for i in empty for x in zero["outputs"][i] + zero["dq"][i]])}


def correction_sentence(cases: dict) -> str:
    """Exercise 4: for each upstream gradient, whether its correction term D is zero and what dropping D changed.

    >>> correction_sentence({"甲": {"D": [0.5, 0.0], "gap": 0.25}, "乙": {"D": [0.0, 0.0], "gap": 0.0}})
    '对甲，D 不全为 0，丢掉 D 的梯度与正确梯度最多差 0.2500；对乙，D 每行恰为 0，丢掉 D 的梯度与正确梯度逐位相同。'
    """
    if not isinstance(cases, dict) or not cases:
        raise ValueError("cases 必须是非空字典：上游梯度的名字 → {\"D\", \"gap\"}")
    parts = []
    for name, case in cases.items():
        zero = all(x == 0.0 for x in case["D"])
        same = "逐位相同" if case["gap"] == 0.0 else f"最多差 {fmt.difference(case['gap'])}"
        parts.append(f"对{name}，D {'每行恰为 0' if zero else '不全为 0'}，丢掉 D 的梯度与正确梯度{same}")
    return "；".join(parts) + "。"


# -- the page's examples, one function each ----------------------------------------------------------------
def worked_values(q, k, v, d_out) -> dict:
    """The causal worked example, step by step: every table, and one cell of each step written out.

    The written-out cells are the ones the prose names (dV[0][0], dP[1][0], D[1], dS[1][0], dQ[2][0],
    dK[0][1]), so the example needs at least three positions and two dimensions.
    """
    n, d, d_v = len(q), len(q[0]), len(v[0])
    visible = att.visibility(n, n)
    s = bp.backward_steps(q, k, v, d_out, visible)
    p, o, rows, key_cols = s["weights"], s["outputs"], queries(n), fmt.keys(n, corner="")[1:]
    masked = [[a + m for a, m in zip(sr, mr)] for sr, mr in zip(att.scaled_scores(q, k), att.additive_mask(visible))]
    rowsum = [[r, cell(a), cell(b), fmt.difference(abs(a - b))]
              for r, a, b in zip(rows, s["rowsum_do_o"], s["rowsum_dp_p"])]
    return {
        "fig_chain": chain_figure(s, att.scaled_scores(q, k)), "dq0_exact": exact_zero(s["dq"][0]),
        "masked_p_exact": exact_zero(p[i][j] for i, r in enumerate(visible) for j, ok in enumerate(r) if not ok),
        "masked_ds_exact": exact_zero(s["ds"][i][j] for i, r in enumerate(visible) for j, ok in enumerate(r) if not ok),
        "ex_d": fmt.count(d), "ex_n": fmt.count(n),
        "ex_q": fmt.vectors(q), "ex_k": fmt.vectors(k), "ex_v": fmt.vectors(v), "ex_do": fmt.vectors(d_out),
        "tbl_ex_s": Md(fmt.md_table(["S"] + key_cols, [[r] + [fmt.fmt(x) for x in row] for r, row in zip(rows, masked)])),
        "tbl_ex_p": table("P", key_cols, p, rows),
        "tbl_ex_o": table("O", dims(d_v, "列"), o, rows),
        "tbl_ex_dv": table("dV", dims(d_v, "列"), s["dv"], key_cols),
        "tbl_ex_dp": table("dP", key_cols, s["dp"], rows),
        "tbl_ex_rowsum": Md(fmt.md_table(["查询", "dO 与 O 同一行的点积", "dP 与 P 同一行的点积", "两者之差"], rowsum)),
        "tbl_ex_ds": table("dS", key_cols, s["ds"], rows),
        "tbl_ex_dq": table("dQ", dims(d), s["dq"], rows),
        "tbl_ex_dk": table("dK", dims(d), s["dk"], key_cols),
        "calc_dv": products([(val(p[i][0]), inp(d_out[i][0])) for i in range(n)], s["dv"][0][0]),
        "calc_dp": products([(inp(d_out[1][c]), inp(v[0][c])) for c in range(d_v)], s["dp"][1][0]),
        "calc_d": products([(inp(d_out[1][c]), val(o[1][c])) for c in range(d_v)], s["rowsum_do_o"][1]),
        "calc_ds": ds_cell(p[1][0], s["dp"][1][0], s["rowsum_do_o"][1], s["ds"][1][0]),
        "calc_dq": products([(val(s["ds"][2][j]), inp(k[j][0])) for j in range(n)], s["dq"][2][0], sqrt_of=d),
        "calc_dk": products([(val(s["ds"][i][0]), inp(q[i][1])) for i in range(n)], s["dk"][0][1], sqrt_of=d),
    }


def projection_values(x, w_q, w_k, w_v, d_out) -> dict:
    """The projection example: dW_q, dW_k, dW_v in one table, and the finite-difference check."""
    q, k, v = (att.matmul(x, w) for w in (w_q, w_k, w_v))  # Q = X W_q, K = X W_k, V = X W_v
    grads = bp.projection_backward(x, w_q, w_k, w_v, *bp.attention_backward(q, k, v, d_out))
    header = ["梯度"] + [f"第 {a} 行 · 第 {c} 列" for a in range(len(x[0])) for c in range(len(w_q[0]))]
    rows = [[name] + [cell(g) for row in grads[key] for g in row]
            for name, key in (("dW_q", "dw_q"), ("dW_k", "dw_k"), ("dW_v", "dw_v"))]
    check = bp.projection_gradient_check(x, w_q, w_k, w_v, d_out)
    return {
        "pj_x": fmt.vectors(x), "pj_n": fmt.count(len(x)),
        "pj_wq": fmt.vectors(w_q), "pj_wk": fmt.vectors(w_k), "pj_wv": fmt.vectors(w_v),
        "tbl_pj": Md(fmt.md_table(header, rows)),
        "pj_err": fmt.difference(check["max"]), "pj_pass": "通过" if check["passed"] else "没有通过",
    }


def pad_values(q, k, v, d_out, key_valid) -> dict:
    """A PAD key under the causal rule: its exact zeros in the tables, the sentence and finite differences."""
    n, d, d_v = len(q), len(q[0]), len(v[0])
    s = bp.backward_steps(q, k, v, d_out, att.visibility(n, n, key_valid=key_valid))
    j = key_valid.index(False)
    _, fd_k, fd_v = bp.finite_difference(q, k, v, d_out, key_valid=key_valid)
    key_cols = fmt.keys(n, corner="")[1:]
    header = ["Key"] + [f"dK {c}" for c in range(d)] + [f"dV {c}" for c in range(d_v)]
    return {
        "pad_valid": flags(key_valid), "pad_key": fmt.count(j),
        "tbl_pad_p": table("P", key_cols, s["weights"], queries(n)),
        "tbl_pad_ds": table("dS", key_cols, s["ds"], queries(n)),
        "tbl_pad_kv": Md(fmt.md_table(header, [[r] + [cell(x) for x in a + b] for r, a, b in zip(key_cols, s["dk"], s["dv"])])),
        "pad_sentence": zero_sentence(s),
        "pad_fd": exact_zero(fd_k[j] + fd_v[j]), "pad_dkv": exact_zero(s["dk"][j] + s["dv"][j]),
    }


def empty_row_values(q, k, v, d_out, key_valid, x) -> dict:
    """Left padding makes a fully masked row: the four ways, counted in the loss and left out of it.

    ``x`` is an input X as in the projection example: were V = X W_v, how much of dW_v = Xᵀ dV is NaN.
    """
    n, d_v = len(q), len(v[0])
    visible = att.visibility(n, n, key_valid=key_valid)
    row, key = [any(r) for r in visible].index(False), key_valid.index(False)
    counted = policies(q, k, v, d_out, visible)
    left_out = [list(g) if any(vis) else [0.0] * d_v for g, vis in zip(d_out, visible)]
    excluded = policies(q, k, v, left_out, visible)
    vec = lambda xs: fmt.vector(xs, cell=cell)  # noqa: E731
    rows = []
    for name in POLICY_NAMES:
        a, b = counted[name], excluded[name]
        if a["raised"]:
            rows.append([POLICY_LABELS[name], "报错，不计算"] + ["—"] * 4)
            continue
        rows.append([POLICY_LABELS[name], vec(a["outputs"][row]), vec(a["dq"][row]), vec(a["dv"][key]),
                     fmt.count(a["nan"]), fmt.count(b["nan"])])
    header = ["做法", f"查询 {row} 的输出", f"查询 {row} 的 dQ", f"Key {key}（PAD）的 dV", "梯度中 NaN 的个数",
              f"排除第 {row} 行后 NaN 的个数"]
    facts = policy_facts(counted, excluded, visible)
    dv_nan = counted["fill=-inf"]["dv"]  # dW_v = Xᵀ dV by hand: att.matmul refuses the NaN on purpose
    dw_v = [[sum(x[j][a] * dv_nan[j][c] for j in range(n)) for c in range(d_v)] for a in range(len(x[0]))]
    return {
        "left_valid": flags(key_valid), "left_row": fmt.count(row), "left_key": fmt.count(key),
        "zero_do": fmt.count(0), "big_fill": f"{fmt.MINUS}1e9",  # as the demo's code types it
        "tbl_policies": Md(fmt.md_table(header, rows)),
        **{k: v for k, v in facts.items() if k != "pol_nan"},
        **dict(zip(("nan_inf", "nan_add", "nan_inf_ex", "nan_add_ex"), facts["pol_nan"])),
        "nan_w_total": fmt.count(len(dw_v) * len(dw_v[0])), "nan_w_count": fmt.count(_nan_count(dw_v)),
    }


MUTANTS = {"正确": bp.attention_backward, "丢掉修正项": bp.wrong_backward_no_rowsum,
           "忘乘 dO": bp.wrong_backward_forgets_d_out, "dV 漏了转置": bp.wrong_backward_transposes_p}


def random_d_out(seed: int, lo: int, hi: int, n: int, d_v: int) -> list[list[float]]:
    """A pseudo-random upstream gradient, each entry uniform in [lo, hi] and rounded to one decimal."""
    rng = random.Random(seed)
    return [[round(rng.uniform(lo, hi), 1) for _ in range(d_v)] for _ in range(n)]


def mutant_values(q, k, v, seed: int, lo: int, hi: int) -> dict:
    """Three backwards, each checked with dO all ones and with a random dO: the table and its sentence."""
    n, d_v = len(q), len(v[0])
    rand, ones = random_d_out(seed, lo, hi, n, d_v), [[1.0] * d_v for _ in range(n)]
    check = lambda d, f: bp.gradient_check(q, k, v, d, backward=f)["max"]  # noqa: E731
    results = {name: (check(ones, f), check(rand, f)) for name, f in MUTANTS.items()}
    same = bp.wrong_backward_forgets_d_out(q, k, v, ones) == bp.attention_backward(q, k, v, ones)
    return {
        "ones_value": fmt.count(1), "rand_lo": fmt.count(lo), "rand_hi": fmt.count(hi), "rand_seed": fmt.count(seed),
        "rand_do": fmt.vectors(rand), "fd_h": fmt.power(bp.STEP), "fd_tol": fmt.power(bp.TOLERANCE),
        "tbl_mutants": mutant_table(results),
        **check_facts(results), "mutant_same": "逐位相同" if same else "并不相同",
    }


def mutant_table(results: dict) -> Md:
    header = ["反向实现", "dO 全为 1：最大相对误差", "结论", "随机 dO：最大相对误差", "结论"]
    return Md(fmt.md_table(header, [[name, fmt.difference(a), verdict(a), fmt.difference(b), verdict(b)]
                                    for name, (a, b) in results.items()]))


def config_values(q, k, v, d_out, cache_past: int, pad, left) -> dict:
    """The finite-difference check under five masks (none, causal, PAD, a cache, left PAD with zero)."""
    configs = [
        ("不加 mask", (q, d_out), dict(causal=False)),
        ("因果", (q, d_out), dict()),
        ("因果 + PAD", (q, d_out), dict(key_valid=pad)),
        (f"缓存 past = {fmt.count(cache_past)}", (q[cache_past:], d_out[cache_past:]), dict(past=cache_past)),
        ("左侧 PAD + zero", (q, d_out), dict(key_valid=left, empty_row="zero")),
    ]
    rows = []
    for name, (q_, d_), options in configs:
        r = bp.gradient_check(q_, k, v, d_, **options)
        rows.append([name] + [fmt.difference(r[g]) for g in ("dq", "dk", "dv")] + [verdict(r["max"])])
    passed = sum(row[-1] == "通过" for row in rows)
    return {
        "configs_passed": "都通过" if passed == len(rows) else f"只有 {fmt.count(passed)} 种通过",
        "configs_n": fmt.count(len(rows)),
        "cache_past": fmt.count(cache_past), "cache_new": fmt.count(len(q) - cache_past),
        "tbl_configs": Md(fmt.md_table(["条件", "dQ 相对误差", "dK 相对误差", "dV 相对误差", "结论"], rows)),
    }


def step_values(q, k, v, d_out, steps) -> dict:
    """The check's error for each step ε: truncation for a large step, rounding for a small one."""
    errors = [bp.gradient_check(q, k, v, d_out, eps=eps)["max"] for eps in steps]
    best = min(range(len(steps)), key=lambda i: errors[i])
    return {
        "tbl_h": Md(fmt.md_table(["步长 ε", "最大相对误差", "结论"],
                                 [[fmt.power(eps), fmt.difference(e), verdict(e)]
                                  for eps, e in zip(steps, errors)])),
        "h_best": fmt.power(steps[best]), "h_best_err": fmt.difference(errors[best]),
        "eps64": power_of_two(sys.float_info.epsilon), "eps32": power_of_two(2.0 ** -23),
        "eps_cbrt": fmt.sci(sys.float_info.epsilon ** (1 / 3)),
    }


def power_of_two(x: float) -> str:
    """A machine precision as the page writes it: ``2⁻⁵²``."""
    return "2" + str(round(math.log2(x))).replace("-", "⁻").translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


# -- the exercises ----------------------------------------------------------------------------------------------
def exercise_values() -> dict:
    """Every number, table and sentence of the five exercises and their solutions."""
    values = {}
    a1, m1 = ex.jacobian_row(), len(ex.JAC_SCORES)
    rows = [[f"∂p{a}"] + [cell(x) for x in row] + [fmt.difference(abs(s)), cell(dg)]
            for a, (row, s, dg) in enumerate(zip(a1["jacobian"], a1["row_sums"], a1["diagonal"]))]
    p0, p1 = a1["p"][0], a1["p"][1]
    values |= {
        "x1_scores": ", ".join(fmt.short(s) for s in ex.JAC_SCORES),
        "x1_dp": ", ".join(fmt.short(s) for s in ex.JAC_D_WEIGHTS),
        "x1_p": ", ".join(cell(x) for x in a1["p"]),
        "x1_jac": Md(fmt.md_table(["∂p ＼ ∂s"] + [f"∂s{b}" for b in range(m1)] + ["行和", "p(1 − p)"], rows)),
        "x1_offdiag": f"J₀₁ = −p₀p₁ = {fmt.MINUS}{cell(p0)}×{cell(p1)} = {cell(a1['jacobian'][0][1])}",
        "x1_dot": " + ".join(f"{val(p)}×{inp(x)}" for p, x in zip(a1["p"], ex.JAC_D_WEIGHTS)) + f" = {cell(a1['dot'])}",
        "x1_agree": fmt.difference(max(abs(a - b) for a, b in zip(a1["ds"], a1["ds_by_matrix"]))),
        "x1_ds": Md(fmt.md_table(["算法"] + [f"ds{b}" for b in range(m1)] + ["之和"], [
            ["p ∘ (dp − Σ p dp)"] + [cell(x) for x in a1["ds"]] + [fmt.difference(abs(a1["ds_sum"]))],
            ["J · dp"] + [cell(x) for x in a1["ds_by_matrix"]] + [fmt.difference(abs(sum(a1["ds_by_matrix"])))],
        ])),
    }
    a2 = ex.hand_steps()
    s2, n2, r2 = a2["steps"], len(ex.HAND_Q), a2["row"]
    forward = [[queries(n2)[i], " / ".join(fmt.fmt(x) for x, ok in zip(a2["scores"][i], vis) if ok),
                " / ".join(cell(x) for x in s2["weights"][i]), " / ".join(cell(x) for x in s2["outputs"][i])]
               for i, vis in enumerate(s2["visible"])]
    backward = [[queries(n2)[i], " / ".join(cell(x) for x in s2["dp"][i]), cell(s2["rowsum_do_o"][i])] for i in range(n2)]
    row_sum = sum(s2["ds"][r2])
    values |= {
        "x2_n": fmt.count(n2), "x2_d": fmt.count(len(ex.HAND_Q[0])), "x2_q": fmt.vectors(ex.HAND_Q),
        "x2_k": fmt.vectors(ex.HAND_K), "x2_v": fmt.vectors(ex.HAND_V), "x2_do": fmt.vectors(ex.HAND_D_OUT),
        "x2_row": fmt.count(r2), "x2_zero": fmt.count(0),
        "x2_forward": Md(fmt.md_table(["查询", "分数（可见的 Key）", "权重 P", "输出 O"], forward)),
        "x2_backward": Md(fmt.md_table(["查询", "dP（dO 乘 V 的转置）", "D（dO 与 O 逐行点积）"], backward)),
        "x2_dv": products([(val(p), inp(x)) for p, x in a2["dv_terms"]], s2["dv"][0][0]),
        "x2_ds": Md("\n".join(f"- Key {j}：{ds_cell(p, dp, big, s2['ds'][r2][j])}"
                              for j, (p, dp, big) in enumerate(a2["ds_terms"]))),
        "x2_ds_sum": "恰为 0" if row_sum == 0 else f"是 {fmt.difference(abs(row_sum))}，舍入误差以内为 0",
        "x2_ds_first": "、".join(cell(x) for x in s2["ds"][0]),
    }
    a3 = ex.mask_zeros()
    s3, nq3, nk3 = a3["steps"], len(ex.ZERO_Q), len(ex.ZERO_K)
    grads = [[f"Key {j}", "、".join(f"查询 {i}" for i in rd) or "没有"] + [cell(x) for x in s3["dk"][j] + s3["dv"][j]]
             for j, rd in enumerate(a3["readers"])]
    values |= {
        "x3_past": fmt.count(ex.ZERO_PAST), "x3_new": fmt.count(ex.ZERO_NEW), "x3_valid": flags(ex.ZERO_VALID),
        "x3_q": fmt.vectors(ex.ZERO_Q), "x3_k": fmt.vectors(ex.ZERO_K), "x3_v": fmt.vectors(ex.ZERO_V),
        "x3_do": fmt.vectors(ex.ZERO_D_OUT), "x3_keys": f"Key 0 到 Key {nk3 - 1}",
        "x3_table": Md(fmt.md_table(fmt.keys(nk3), [[queries(nq3, ex.ZERO_PAST)[i]] + [fmt.mark(ok) for ok in row]
                                                    for i, row in enumerate(a3["visible"])])),
        "x3_grads": Md(fmt.md_table(["Key", "被哪些查询读"] + [f"dK {c}" for c in range(len(ex.ZERO_K[0]))]
                                    + [f"dV {c}" for c in range(len(ex.ZERO_V[0]))], grads)),
        "x3_sentence": zero_sentence(s3),
        "x3_zero_keys": "、".join(f"Key {j}" for j in a3["zero_keys"]) or "没有",
    }
    c4 = ex.correction_cases()
    (given_name, given), (orth_name, orth) = c4["cases"].items()
    rows4 = [[f"查询 {i}", fmt.vector(o, cell=cell), fmt.vector(g, cell=fmt.short),
              products([(inp(a), val(b)) for a, b in zip(g, o)], given["D"][i]),
              fmt.vector(h, cell=cell), products([(val(a), val(b)) for a, b in zip(h, o)], orth["D"][i])]
             for i, (o, g, h) in enumerate(zip(c4["outputs"], given["d_out"], orth["d_out"]))]
    values |= {
        "x4_n": fmt.count(len(ex.CORR_Q)), "x4_q": fmt.vectors(ex.CORR_Q), "x4_k": fmt.vectors(ex.CORR_K), "x4_v": fmt.vectors(ex.CORR_V),
        "x4_do": fmt.vectors(ex.CORR_D_OUT),
        "x4_rows": Md(fmt.md_table(["查询", "O 的这一行", "dO 的这一行", "D = rowsum(dO ∘ O)", "dO⊥ 的这一行",
                                    "D⊥ = rowsum(dO⊥ ∘ O)"], rows4)),
        "x4_gaps": Md(fmt.md_table(["上游梯度", "D 的最大绝对值", "丢掉 D 后与正确梯度的最大差"],
                                   [[name, cell(max(map(abs, case["D"]))), fmt.difference(case["gap"])]
                                    for name, case in c4["cases"].items()])),
        "x4_sentence": correction_sentence(c4["cases"]),
        "x5_doctest": Md(fmt.doctest_block(ex.rowsum_correction)),
    }
    return values


