"""第2章教学代码：注意力的反向传播——手推的梯度、逐步的数值和有限差分核对。

本文件配合《手算注意力与因果掩码》第2章的“反向传播”一页。前向计算不在这里重写，
而是从 ``02_attention.py`` 导入（``visibility``、``masked_attention``、``softmax``）；
这里只补上反过来的一步：给定损失对输出的梯度 ``d_out``，算出损失对 Q、K、V 以及
对投影矩阵的梯度。全部数据都是人工构造的小矩阵，只用 Python 标准库，可以逐格手算。

约定（与正文和 PyTorch 的写法一致；这里 ``A B`` 是矩阵乘法，``^T`` 是转置，
``*`` 是逐元素相乘，即正文里的圆圈乘号）：

- ``q`` 形状 ``(n_query, d)``，``k`` 形状 ``(n_key, d)``，``v`` 形状 ``(n_key, d_v)``；
- 前向 ``S = Q K^T / √d``，禁止的格子按可见性表排除，``P = softmax(S)``（逐行），``O = P V``；
- ``d_out`` 是 ``∂L/∂O``，形状 ``(n_query, d_v)``；等价地，损失就是 ``L = Σ d_out * O``；
- 反向（按推导顺序）：``dV = P^T dO``，``dP = dO V^T``，``D = rowsum(dO * O)``，
  ``dS = P * (dP − D)``，``dQ = dS K / √d``，``dK = dS^T Q / √d``；
- 可见性表是常量，没有梯度；因果规则按绝对位置 ``past + i`` 判断（右下角对齐）；
- 全部 Key 都被禁止的查询行要明确选策略：``"error"`` 报错，``"zero"`` 让这一行
  权重与输出全为 0（这一行的梯度也全为 0）。

直接运行 ``python3 code/02_backprop.py`` 会先做自检，再以 JSON 打印演示结果。
"""

from __future__ import annotations

import math

from book_tools import load

att = load("02_attention")

__all__ = [
    "EMPTY_ROW_POLICIES",
    "POLICY_NAMES",
    "TOLERANCE",
    "STEP",
    "softmax_jacobian",
    "softmax_backward",
    "backward_steps",
    "attention_backward",
    "wrong_backward_no_rowsum",
    "wrong_backward_forgets_d_out",
    "projected_attention",
    "projection_backward",
    "fill_backward_demo",
    "empty_row_policies",
    "policy_sentence",
    "attention_loss",
    "finite_difference",
    "relative_error",
    "gradient_check",
    "projection_gradient_check",
    "zero_sentence",
    "check_sentence",
    "self_test",
    "run_demo",
]

# 全行都被禁止时的两种明确策略，就是 02_attention 的 empty_row。
EMPTY_ROW_POLICIES = att.EMPTY_ROW_POLICIES
# 有限差分核对的标准：float64 下相对误差不超过 1e-6；中心差分的步长。
TOLERANCE = 1e-6
STEP = 1e-5


# -- 边界上的校验 -------------------------------------------------------------------------------------
def _matrix(a: object, name: str) -> list[list[float]]:
    # 与前向共用同一套校验：非空、矩形、有限实数，复制成 float。
    return att._matrix(a, name)


def _check_policy(empty_row: object) -> str:
    if empty_row not in EMPTY_ROW_POLICIES:
        raise ValueError(f"empty_row 必须是 \"error\" 或 \"zero\"，收到 {empty_row!r}")
    return empty_row


def _table(visible: object, n_query: int, n_key: int) -> list[list[bool]]:
    """校验可见性表（布尔、矩形）并检查它的形状是 (n_query, n_key)。"""
    mask = att.additive_mask(visible)  # 逐格检查 True/False 与矩形
    if len(mask) != n_query or len(mask[0]) != n_key:
        raise ValueError(
            f"visible 的形状必须是 (n_query, n_key) = ({n_query}, {n_key})，收到 ({len(mask)}, {len(mask[0])})"
        )
    return [[m == 0.0 for m in row] for row in mask]


def _shapes(q, k, v, d_out, visible):
    """校验一次注意力调用的全部输入，返回复制后的 float 矩阵与可见性表。"""
    q, k, v = _matrix(q, "Q"), _matrix(k, "K"), _matrix(v, "V")
    if len(q[0]) != len(k[0]):
        raise ValueError(f"Q 与 K 的列数（向量维度）必须相同，收到 Q 为 {len(q[0])}、K 为 {len(k[0])}")
    if len(v) != len(k):
        raise ValueError(f"V 的行数必须等于 K 的行数，收到 V 为 {len(v)}、K 为 {len(k)}")
    d_out = _matrix(d_out, "d_out")
    if len(d_out) != len(q) or len(d_out[0]) != len(v[0]):
        raise ValueError(
            f"d_out 的形状必须与输出相同：(n_query, d_v) = ({len(q)}, {len(v[0])})，"
            f"收到 ({len(d_out)}, {len(d_out[0])})"
        )
    return q, k, v, d_out, _table(visible, len(q), len(k))


def _prepare(q, k, v, d_out, causal, past, key_valid):
    """校验输入（每个只读一次），按 causal、past、key_valid 造出可见性表，再检查形状。"""
    q, k, v = _matrix(q, "Q"), _matrix(k, "K"), _matrix(v, "V")
    visible = att.visibility(len(q), len(k), causal=causal, past=past, key_valid=key_valid)
    return _shapes(q, k, v, d_out, visible)


# -- 小矩阵运算（全是循环，便于对照手算） ---------------------------------------------------------------
def _matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    return [[sum(a[i][t] * b[t][j] for t in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def _transpose(a: list[list[float]]) -> list[list[float]]:
    return [list(col) for col in zip(*a)]


# -- softmax 的一行 -----------------------------------------------------------------------------------
def softmax_jacobian(scores: list[float]) -> list[list[float]]:
    """一行 softmax 的雅可比矩阵 ``J[a][b] = ∂p_a/∂s_b = p_a(δ_ab − p_b)``，即 ``diag(p) − p p^T``。

    每行之和为 0：给所有分数加同一个常数，权重不变。它是对称的，
    对角线是 p(1 − p)，每一格的绝对值都不超过所在行的对角线，也就不超过 1/4。

    >>> J = softmax_jacobian([0, 1, 2])
    >>> [[round(x, 4) for x in row] for row in J]
    [[0.0819, -0.022, -0.0599], [-0.022, 0.1848, -0.1628], [-0.0599, -0.1628, 0.2227]]
    >>> [abs(round(sum(row), 12)) for row in J]
    [0.0, 0.0, 0.0]
    """
    p = att.softmax(scores)
    return [[pa * ((1.0 if a == b else 0.0) - pb) for b, pb in enumerate(p)] for a, pa in enumerate(p)]


def softmax_backward(weights: list[float], d_weights: list[float]) -> list[float]:
    """一行 softmax 的反向：``ds = J dp = p * (dp − Σ_b p_b dp_b)``，不必造出整张 J。

    ``weights`` 是前向得到的一行权重 p，``d_weights`` 是损失对它们的梯度 dp。
    结果之和恒为 0（权重之和固定为 1，分数整体平移不改变损失）。

    >>> [round(x, 4) for x in softmax_backward([0.5, 0.5], [1.0, 0.0])]
    [0.25, -0.25]
    >>> softmax_backward([1.0, 0.0], [3.0, 4.0])  # 权重为 0 的格子梯度恰为 0
    [0.0, 0.0]
    >>> softmax_backward([0.5, 0.5], [1.0])
    Traceback (most recent call last):
    ...
    ValueError: weights 与 d_weights 必须非空且长度相同，收到 2 和 1
    """
    p = [att._real(x, f"weights[{j}]") for j, x in enumerate(att._as_list(weights, "weights"))]
    dp = [att._real(x, f"d_weights[{j}]") for j, x in enumerate(att._as_list(d_weights, "d_weights"))]
    if not p or len(p) != len(dp):
        raise ValueError(f"weights 与 d_weights 必须非空且长度相同，收到 {len(p)} 和 {len(dp)}")
    if not all(math.isfinite(x) for x in p + dp):
        raise ValueError("weights 与 d_weights 必须全部有限（不可为 NaN 或 ±∞）")
    dot = sum(pb * x for pb, x in zip(p, dp))  # Σ_b p_b dp_b
    return [pa * (x - dot) for pa, x in zip(p, dp)]


# -- 前向：记录权重，全屏蔽行有明确策略 -----------------------------------------------------------------
def _forward(q, k, v, visible, empty_row):
    """已校验的输入上做前向，返回 (P, O)；全屏蔽行按 ``empty_row`` 处理（见 02_attention）。"""
    return att.masked_attention(q, k, v, visible, empty_row=empty_row)


# -- 反向：按推导顺序的每一步 ---------------------------------------------------------------------------
def _rowsum_d_out_out(p, dp, out, d_out):
    # 正确的修正项：D_i = Σ_c dO[i][c]·O[i][c]（等于 Σ_j P[i][j]·dP[i][j]）。
    return [sum(a * b for a, b in zip(do_i, o_i)) for do_i, o_i in zip(d_out, out)]


def _backward(q, k, v, d_out, visible, empty_row, correction=_rowsum_d_out_out, weights=None, outputs=None):
    """已校验的输入上做反向，返回全部中间量。``correction`` 只为保留故意写错的变体而可换。"""
    if weights is None:
        weights, outputs = _forward(q, k, v, visible, empty_row)
    n_query, n_key, d, d_v = len(q), len(k), len(q[0]), len(v[0])
    scale = att.score_scale(d)  # the forward's own √d (02_attention)
    p = weights  # (n_query, n_key)
    # O = P V  ⇒  dV = P^T dO，dP = dO V^T
    dv = [[sum(p[i][j] * d_out[i][c] for i in range(n_query)) for c in range(d_v)] for j in range(n_key)]  # (n_key, d_v)
    dp = [[sum(d_out[i][c] * v[j][c] for c in range(d_v)) for j in range(n_key)] for i in range(n_query)]  # (n_query, n_key)
    # P = softmax(S) 逐行  ⇒  dS = P * (dP − D)，D 是每行一个数
    rowsum_do_o = correction(p, dp, outputs, d_out)  # (n_query,)
    rowsum_dp_p = [sum(a * b for a, b in zip(p_i, dp_i)) for p_i, dp_i in zip(p, dp)]  # (n_query,)
    # 禁止的格子 P = 0，所以 dS 在那里恰为 0：梯度不经由它流回 Q、K。
    ds = [[p[i][j] * (dp[i][j] - rowsum_do_o[i]) for j in range(n_key)] for i in range(n_query)]  # (n_query, n_key)
    # S = Q K^T / √d  ⇒  dQ = dS K / √d，dK = dS^T Q / √d
    dq = [[sum(ds[i][j] * k[j][c] for j in range(n_key)) / scale for c in range(d)] for i in range(n_query)]  # (n_query, d)
    dk = [[sum(ds[i][j] * q[i][c] for i in range(n_query)) / scale for c in range(d)] for j in range(n_key)]  # (n_key, d)
    return {
        "weights": p, "outputs": outputs, "dv": dv, "dp": dp, "rowsum_do_o": rowsum_do_o,
        "rowsum_dp_p": rowsum_dp_p, "ds": ds, "dq": dq, "dk": dk, "visible": visible,
    }


def backward_steps(
    q: list[list[float]],
    k: list[list[float]],
    v: list[list[float]],
    d_out: list[list[float]],
    visible: list[list[bool]],
    *,
    empty_row: str = "error",
) -> dict:
    """按给定可见性表做一次前向和反向，返回推导顺序里的每个中间量（供逐格手算核对）。

    字典的键：``weights`` (P)、``outputs`` (O)、``dv`` (= P^T dO)、``dp`` (= dO V^T)、
    ``rowsum_do_o`` (D = rowsum(dO * O))、``rowsum_dp_p`` (rowsum(dP * P)，与 D 相等)、
    ``ds`` (= P * (dP − D))、``dq`` (= dS K / √d)、``dk`` (= dS^T Q / √d)、``visible``。

    >>> s = backward_steps([[0.0]], [[0.0], [0.0]], [[10.0], [30.0]], [[1.0]], [[True, True]])
    >>> s["weights"], s["dv"], s["dp"], s["rowsum_do_o"], s["ds"]
    ([[0.5, 0.5]], [[0.5], [0.5]], [[10.0, 30.0]], [20.0], [[-5.0, 5.0]])
    >>> s = backward_steps([[1.0]], [[1.0], [2.0]], [[10.0], [30.0]], [[1.0]], [[True, False]])
    >>> s["ds"], s["dk"], s["dv"]  # 禁止的格子：权重 0，dS、dK、dV 恰为 0
    ([[0.0, 0.0]], [[0.0], [0.0]], [[1.0], [0.0]])
    >>> backward_steps([[1.0]], [[1.0]], [[1.0]], [[1.0, 2.0]], [[True]])
    Traceback (most recent call last):
    ...
    ValueError: d_out 的形状必须与输出相同：(n_query, d_v) = (1, 1)，收到 (1, 2)
    """
    policy = _check_policy(empty_row)
    q, k, v, d_out, visible = _shapes(q, k, v, d_out, visible)
    return _backward(q, k, v, d_out, visible, policy)


def _run(q, k, v, d_out, causal, past, key_valid, empty_row, correction=_rowsum_d_out_out):
    policy = _check_policy(empty_row)
    q, k, v, d_out, visible = _prepare(q, k, v, d_out, causal, past, key_valid)
    steps = _backward(q, k, v, d_out, visible, policy, correction)
    return steps["dq"], steps["dk"], steps["dv"]


def attention_backward(
    q: list[list[float]],
    k: list[list[float]],
    v: list[list[float]],
    d_out: list[list[float]],
    *,
    causal: bool = True,
    past: int = 0,
    key_valid: list[bool] | None = None,
    empty_row: str = "error",
) -> tuple[list[list[float]], list[list[float]], list[list[float]]]:
    """一次注意力调用的反向传播，返回 ``(dq, dk, dv)``（嵌套列表，形状同 q、k、v）。

    约定：``d_out = ∂L/∂O``，形状 ``(n_query, d_v)``；分数除以 √d；可见性表由
    ``causal``、``past``（查询行 i 的绝对位置是 ``past + i``，即右下角对齐）与
    ``key_valid``（True 是内容，False 是 PAD）造出，它是常量，没有梯度；
    ``empty_row`` 为 ``"error"`` 时全屏蔽行报错，为 ``"zero"`` 时这一行输出 0、
    梯度也全为 0。用 PyTorch 核对时，对应的是 float64 下把同一张表作为布尔
    ``attn_mask``（True 表示参与）传给 ``scaled_dot_product_attention``，再对输出
    以 ``d_out`` 为上游梯度求 autograd（有缓存时不要用 ``is_causal``：它按左上角对齐）。

    >>> q = k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> dq, dk, dv = attention_backward(q, k, [[10.0], [20.0], [30.0]], [[1.0], [-1.0], [0.5]])
    >>> [[round(x, 4) for x in row] for row in dq]
    [[0.0, 0.0], [1.564, -1.564], [0.224, 1.1017]]
    >>> [[round(x, 4) for x in row] for row in dv]
    [[0.7939], [-0.5456], [0.2517]]
    >>> attention_backward(q, k, [[10.0], [20.0], [30.0]], [[1.0], [-1.0]])
    Traceback (most recent call last):
    ...
    ValueError: d_out 的形状必须与输出相同：(n_query, d_v) = (3, 1)，收到 (2, 1)
    """
    return _run(q, k, v, d_out, causal, past, key_valid, empty_row)


# 故意写错的两个反向：只用于对照和测试，证明核对真的会失败。
def _no_rowsum(p, dp, out, d_out):
    return [0.0] * len(p)


def _rowsum_of_out(p, dp, out, d_out):
    return [sum(o_i) for o_i in out]  # 忘了乘 dO：dO 全为 1 时恰好与正确的 D 相同


def wrong_backward_no_rowsum(q, k, v, d_out, *, causal=True, past=0, key_valid=None, empty_row="error"):
    """故意写错：丢掉修正项，写成 ``dS = P * dP``。参数与 ``attention_backward`` 相同。

    只用于对照和测试：梯度核对必须认出它。

    >>> q, k, v, d_out = [[0.0]], [[0.0], [1.0]], [[10.0], [30.0]], [[1.0]]
    >>> [round(x[0], 4) for x in attention_backward(q, k, v, d_out, causal=False)[0]]
    [5.0]
    >>> [round(x[0], 4) for x in wrong_backward_no_rowsum(q, k, v, d_out, causal=False)[0]]
    [15.0]
    """
    return _run(q, k, v, d_out, causal, past, key_valid, empty_row, _no_rowsum)


def wrong_backward_forgets_d_out(q, k, v, d_out, *, causal=True, past=0, key_valid=None, empty_row="error"):
    """故意写错：修正项写成 ``rowsum(O)``，忘了乘上游梯度 dO。参数与 ``attention_backward`` 相同。

    dO 全为 1 时 ``rowsum(dO * O) = rowsum(O)``，这个错误完全看不出来；
    只有随机的 dO 才能暴露它。只用于对照和测试。

    >>> q = [[1.0, 0.0]]; k = [[1.0, 0.0], [0.0, 1.0]]; v = [[1.0, 2.0], [3.0, 0.0]]
    >>> ones = [[1.0, 1.0]]
    >>> wrong_backward_forgets_d_out(q, k, v, ones, causal=False) == attention_backward(q, k, v, ones, causal=False)
    True
    >>> rand = [[0.5, -1.0]]
    >>> wrong_backward_forgets_d_out(q, k, v, rand, causal=False) == attention_backward(q, k, v, rand, causal=False)
    False
    """
    return _run(q, k, v, d_out, causal, past, key_valid, empty_row, _rowsum_of_out)


# -- 再往前一步：投影矩阵 -------------------------------------------------------------------------------
def projected_attention(
    x: list[list[float]],
    w_q: list[list[float]],
    w_k: list[list[float]],
    w_v: list[list[float]],
    *,
    causal: bool = True,
    key_valid: list[bool] | None = None,
    empty_row: str = "error",
) -> dict:
    """单头自注意力连同投影：``Q = X W_q``、``K = X W_k``、``V = X W_v``，再做注意力。

    返回 ``{"q", "k", "v", "weights", "outputs"}``。``x`` 形状 ``(n, d_model)``，
    ``w_q``、``w_k`` 形状 ``(d_model, d)``，``w_v`` 形状 ``(d_model, d_v)``。

    >>> r = projected_attention([[1.0, 0.0], [0.0, 1.0]], [[1.0], [0.0]], [[1.0], [1.0]], [[2.0], [1.0]])
    >>> r["q"], r["k"], r["v"], [round(row[0], 4) for row in r["outputs"]]
    ([[1.0], [0.0]], [[1.0], [1.0]], [[2.0], [1.0]], [2.0, 1.5])
    """
    x, w_q, w_k, w_v = _projection_inputs(x, w_q, w_k, w_v)
    q, k, v = _matmul(x, w_q), _matmul(x, w_k), _matmul(x, w_v)  # (n, d), (n, d), (n, d_v)
    weights, outputs = att.attention(q, k, v, causal, key_valid=key_valid, empty_row=empty_row)
    return {"q": q, "k": k, "v": v, "weights": weights, "outputs": outputs}


def _projection_inputs(x, w_q, w_k, w_v):
    x = _matrix(x, "X")
    ws = [_matrix(w, name) for w, name in ((w_q, "W_q"), (w_k, "W_k"), (w_v, "W_v"))]
    for w, name in zip(ws, ("W_q", "W_k", "W_v")):
        if len(w) != len(x[0]):
            raise ValueError(f"{name} 的行数必须等于 X 的列数 d_model={len(x[0])}，收到 {len(w)}")
    if len(ws[0][0]) != len(ws[1][0]):
        raise ValueError(f"W_q 与 W_k 的列数必须相同，收到 {len(ws[0][0])} 和 {len(ws[1][0])}")
    return (x, *ws)


def projection_backward(
    x: list[list[float]],
    w_q: list[list[float]],
    w_k: list[list[float]],
    w_v: list[list[float]],
    dq: list[list[float]],
    dk: list[list[float]],
    dv: list[list[float]],
) -> dict:
    """由 dQ、dK、dV 算出投影矩阵与输入的梯度（单头）。

    ``Q = X W_q`` ⇒ ``dW_q = X^T dQ``，K、V 同理；X 同时产生 Q、K、V，
    所以 ``dX = dQ W_q^T + dK W_k^T + dV W_v^T``。返回 ``{"dw_q", "dw_k", "dw_v", "dx"}``。

    >>> g = projection_backward([[1.0, 2.0]], [[1.0], [0.0]], [[0.0], [1.0]], [[1.0], [1.0]],
    ...                         [[1.0]], [[0.5]], [[2.0]])
    >>> g["dw_q"], g["dw_k"], g["dw_v"], g["dx"]
    ([[1.0], [2.0]], [[0.5], [1.0]], [[2.0], [4.0]], [[3.0, 2.5]])
    >>> projection_backward([[1.0, 2.0]], [[1.0], [0.0]], [[0.0], [1.0]], [[1.0], [1.0]],
    ...                     [[1.0]], [[0.5]], [[2.0, 0.0]])
    Traceback (most recent call last):
    ...
    ValueError: dV 的形状必须是 (1, 1)，收到 (1, 2)
    """
    x, w_q, w_k, w_v = _projection_inputs(x, w_q, w_k, w_v)
    grads = []
    for g, w, name in ((dq, w_q, "dQ"), (dk, w_k, "dK"), (dv, w_v, "dV")):
        g = _matrix(g, name)
        if len(g) != len(x) or len(g[0]) != len(w[0]):
            raise ValueError(f"{name} 的形状必须是 ({len(x)}, {len(w[0])})，收到 ({len(g)}, {len(g[0])})")
        grads.append(g)
    dq, dk, dv = grads
    xt = _transpose(x)  # (d_model, n)
    dx_parts = [_matmul(g, _transpose(w)) for g, w in ((dq, w_q), (dk, w_k), (dv, w_v))]  # 每个 (n, d_model)
    dx = [[a + b + c for a, b, c in zip(*rows)] for rows in zip(*dx_parts)]
    return {"dw_q": _matmul(xt, dq), "dw_k": _matmul(xt, dk), "dw_v": _matmul(xt, dv), "dx": dx}


# -- 演示：不加保护的全屏蔽行 ----------------------------------------------------------------------------
def fill_backward_demo(
    q: list[list[float]],
    k: list[list[float]],
    v: list[list[float]],
    d_out: list[list[float]],
    visible: list[list[bool]],
    *,
    fill: float,
) -> dict:
    """只为演示：前向用 ``02_attention.unguarded_attention``（禁止格子的分数 *换成* ``fill``，不检查全屏蔽行），再做反向。

    - ``fill = −∞``：全屏蔽行的权重是 NaN；``dV = P^T dO`` 让每个 Key 的 dV 都沾上 NaN，
      即使这一行的 dO 为 0（0 × NaN 仍是 NaN）；
    - ``fill = −1e9``：全屏蔽行平均地读所有被禁止的 Key，PAD（和未来）的 Value 因此拿到梯度。

    被换掉的格子的分数是常数，梯度不经由它流回 Q、K（dS 在那里记为 0）。
    返回 ``{"weights", "outputs", "dq", "dk", "dv"}``。正式计算请用 ``attention_backward``。

    >>> r = fill_backward_demo([[0.0]], [[0.0], [0.0]], [[10.0], [30.0]], [[0.0]], [[False, False]],
    ...                        fill=float("-inf"))
    >>> r["weights"], r["dv"]
    ([[nan, nan]], [[nan], [nan]])
    >>> r = fill_backward_demo([[0.0]], [[0.0], [0.0]], [[10.0], [30.0]], [[1.0]], [[False, False]], fill=-1e9)
    >>> r["weights"], r["outputs"], r["dv"], r["dq"]
    ([[0.5, 0.5]], [[20.0]], [[0.5], [0.5]], [[0.0]])
    """
    q, k, v, d_out, visible = _shapes(q, k, v, d_out, visible)
    fill = att._real(fill, "fill")
    if math.isnan(fill) or fill >= 0:
        raise ValueError(f"fill 必须是负数或 −∞，收到 {fill}")
    # 前向就是 02_attention 的演示函数：禁止格子的分数换成 fill，不检查全屏蔽行。
    weights, outputs = att.unguarded_attention(q, k, v, visible, fill=fill)
    steps = _backward(q, k, v, d_out, visible, "zero", weights=weights, outputs=outputs)
    # 被换成 fill 的格子与 Q、K 无关：它们的 dS 不向前传（masked_fill 的反向把它们置 0）。
    ds = [[x if ok else 0.0 for x, ok in zip(row, vrow)] for row, vrow in zip(steps["ds"], visible)]
    scale = att.score_scale(len(q[0]))
    dq = [[sum(ds[i][j] * k[j][c] for j in range(len(k))) / scale for c in range(len(q[0]))] for i in range(len(q))]
    dk = [[sum(ds[i][j] * q[i][c] for i in range(len(q))) / scale for c in range(len(q[0]))] for j in range(len(k))]
    return {"weights": weights, "outputs": outputs, "dq": dq, "dk": dk, "dv": steps["dv"]}


# 四种做法的名字：两种正式策略，两种只为演示的填充。
POLICY_NAMES = ("error", "zero", "fill=-inf", "fill=-1e9")


def _nan_count(m: list[list[float]]) -> int:
    return sum(math.isnan(x) for row in m for x in row)


def empty_row_policies(q, k, v, d_out, visible) -> dict:
    """同一组输入在四种做法下的前向与梯度：``"error"``、``"zero"`` 两种策略，``fill=−∞``、``fill=−1e9`` 两个演示。

    返回 ``{名字: 结果}``。``"error"`` 的结果是 ``{"raised": 报错信息}``；其余是
    ``{"raised": None, "weights", "outputs", "dq", "dk", "dv", "nan": 三个梯度里 NaN 的个数}``。

    >>> r = empty_row_policies([[0.0]], [[0.0], [0.0]], [[10.0], [30.0]], [[1.0]], [[False, False]])
    >>> r["error"]["raised"].startswith("第 0 个查询行没有任何可见的 Key")
    True
    >>> r["zero"]["dv"], r["fill=-inf"]["nan"], r["fill=-1e9"]["dv"]
    ([[0.0], [0.0]], 2, [[0.5], [0.5]])
    """
    q, k, v, d_out, visible = _shapes(q, k, v, d_out, visible)
    results = {}
    try:
        _forward(q, k, v, visible, "error")
        results["error"] = {"raised": None}
    except ValueError as error:
        results["error"] = {"raised": str(error)}
    steps = _backward(q, k, v, d_out, visible, "zero")
    results["zero"] = {key: steps[key] for key in ("weights", "outputs", "dq", "dk", "dv")}
    for name, fill in (("fill=-inf", -math.inf), ("fill=-1e9", -1e9)):
        results[name] = fill_backward_demo(q, k, v, d_out, visible, fill=fill)
    for name in POLICY_NAMES[1:]:
        r = results[name]
        r["raised"] = None
        r["nan"] = sum(_nan_count(r[g]) for g in ("dq", "dk", "dv"))
    return results


def policy_sentence(counted: dict, excluded: dict, visible) -> str:
    """比较两组 ``empty_row_policies`` 的结果（全屏蔽行计入损失 / 排除出损失），写成结论。

    ``visible`` 用来找出全屏蔽的行与所有查询都不许读的 Key。

    >>> vis = [[False, False], [True, True]]
    >>> a = empty_row_policies([[0.0], [1.0]], [[0.0], [1.0]], [[1.0], [3.0]], [[1.0], [1.0]], vis)
    >>> b = empty_row_policies([[0.0], [1.0]], [[0.0], [1.0]], [[1.0], [3.0]], [[0.0], [1.0]], vis)
    >>> policy_sentence(a, b, vis)
    '全屏蔽的是第 0 行。fill = −∞：梯度的 6 个元素中有 2 个是 NaN，把这一行排除出损失后仍有 2 个。fill = −1e9：没有 NaN，但读了被禁止的 Key，第 0 行的输出不为 0。zero：没有 NaN，全屏蔽行的输出与 dQ 恰为 0。'
    """
    empty = [i for i, row in enumerate(visible) if not any(row)]
    if not empty:
        return "没有全屏蔽的行：四种做法的结果相同。"
    rows = "、".join(f"第 {i} 行" for i in empty)
    total = sum(len(m) * len(m[0]) for m in (counted["zero"]["dq"], counted["zero"]["dk"], counted["zero"]["dv"]))
    text = f"全屏蔽的是{rows}。"
    text += f"fill = −∞：梯度的 {total} 个元素中有 {counted['fill=-inf']['nan']} 个是 NaN，"
    these = "这一行" if len(empty) == 1 else "这些行"
    text += f"把{these}排除出损失后仍有 {excluded['fill=-inf']['nan']} 个。"
    big = counted["fill=-1e9"]
    reads = any(x != 0.0 for i in empty for x in big["outputs"][i])
    unread = [j for j in range(len(visible[0])) if not any(row[j] for row in visible)]
    pad_grad = [j for j in unread if any(x != 0.0 for x in big["dv"][j])]
    text += "fill = −1e9：" + ("有 NaN" if big["nan"] else "没有 NaN")
    if pad_grad:
        text += f"，但被所有查询禁止的 {'、'.join(f'Key {j}' for j in pad_grad)} 拿到了不为 0 的 dV。"
    elif reads:
        text += f"，但读了被禁止的 Key，{rows}的输出不为 0。"
    else:
        text += "。"
    zero = counted["zero"]
    clean = zero["nan"] == 0 and all(x == 0.0 for i in empty for x in zero["outputs"][i] + zero["dq"][i])
    text += "zero：" + ("没有 NaN，全屏蔽行的输出与 dQ 恰为 0。" if clean else "结果不符合“输出与梯度为 0”的约定。")
    return text


# -- 核对：中心有限差分 ---------------------------------------------------------------------------------
def attention_loss(q, k, v, d_out, *, causal=True, past=0, key_valid=None, empty_row="error") -> float:
    """以 ``d_out`` 为上游梯度的损失 ``L = Σ d_out * O``：它对 O 的梯度恰好就是 ``d_out``。

    >>> attention_loss([[0.0]], [[0.0], [0.0]], [[10.0], [30.0]], [[2.0]], causal=False)
    40.0
    """
    policy = _check_policy(empty_row)
    q, k, v, d_out, visible = _prepare(q, k, v, d_out, causal, past, key_valid)
    _, outputs = _forward(q, k, v, visible, policy)
    return sum(a * b for o_i, do_i in zip(outputs, d_out) for a, b in zip(o_i, do_i))


def finite_difference(q, k, v, d_out, *, h=STEP, causal=True, past=0, key_valid=None, empty_row="error"):
    """中心有限差分 ``(L(x + h) − L(x − h)) / 2h``，逐个元素估计 ``(dq, dk, dv)``。

    >>> dq, dk, dv = finite_difference([[0.0]], [[0.0], [0.0]], [[10.0], [30.0]], [[1.0]], causal=False)
    >>> [[round(x, 6) for x in row] for row in dv]
    [[0.5], [0.5]]
    """
    step = att._real(h, "h")
    if not (math.isfinite(step) and step > 0):
        raise ValueError(f"h 必须是正的有限数，收到 {h!r}")
    policy = _check_policy(empty_row)
    q, k, v, d_out, visible = _prepare(q, k, v, d_out, causal, past, key_valid)

    def loss(qq, kk, vv):
        _, outputs = _forward(qq, kk, vv, visible, policy)
        return sum(a * b for o_i, do_i in zip(outputs, d_out) for a, b in zip(o_i, do_i))

    grads = []
    for which, m in enumerate((q, k, v)):
        g = [[0.0] * len(m[0]) for _ in m]
        for i in range(len(m)):
            for c in range(len(m[0])):
                saved = m[i][c]
                m[i][c] = saved + step
                up = loss(q, k, v)
                m[i][c] = saved - step
                down = loss(q, k, v)
                m[i][c] = saved
                g[i][c] = (up - down) / (2 * step)
        grads.append(g)
    return tuple(grads)


def relative_error(a: list[list[float]], b: list[list[float]]) -> float:
    """两个同形矩阵的相对误差 ``‖a − b‖ / max(‖a‖, ‖b‖, 1)``（范数是全部元素的平方和开方）。

    分母至少取 1：梯度整体接近 0 时，按绝对误差比较，不会被极小的分母放大。

    >>> relative_error([[3.0, 4.0]], [[3.0, 4.0]])
    0.0
    >>> relative_error([[3.0, 4.0]], [[0.0, 0.0]])
    1.0
    >>> relative_error([[1e-9]], [[2e-9]])  # 两边都接近 0：按绝对误差
    1e-09
    """
    a, b = _matrix(a, "a"), _matrix(b, "b")
    if len(a) != len(b) or len(a[0]) != len(b[0]):
        raise ValueError(f"a 与 b 的形状必须相同，收到 ({len(a)}, {len(a[0])}) 和 ({len(b)}, {len(b[0])})")
    norm = lambda m: math.sqrt(sum(x * x for row in m for x in row))
    diff = math.sqrt(sum((x - y) ** 2 for ra, rb in zip(a, b) for x, y in zip(ra, rb)))
    return diff / max(norm(a), norm(b), 1.0)


def gradient_check(
    q, k, v, d_out, *, backward=None, h=STEP, causal=True, past=0, key_valid=None, empty_row="error"
) -> dict:
    """用中心有限差分核对一个反向实现，返回每个梯度的相对误差、最大值与是否通过。

    ``backward`` 默认是 ``attention_backward``；换成故意写错的版本，核对应当失败。
    通过的标准是最大相对误差不超过 ``TOLERANCE``。

    >>> q = k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> v = [[10.0], [20.0], [30.0]]
    >>> gradient_check(q, k, v, [[1.0], [-1.0], [0.5]])["passed"]
    True
    >>> gradient_check(q, k, v, [[1.0], [-1.0], [0.5]], backward=wrong_backward_no_rowsum)["passed"]
    False
    """
    backward = attention_backward if backward is None else backward
    if not callable(backward):
        raise ValueError(f"backward 必须是可调用的反向函数，收到 {backward!r}")
    q, k, v, d_out = (_matrix(m, name) for m, name in ((q, "Q"), (k, "K"), (v, "V"), (d_out, "d_out")))
    options = dict(causal=causal, past=past, key_valid=key_valid, empty_row=empty_row)
    hand = backward(q, k, v, d_out, **options)
    numeric = finite_difference(q, k, v, d_out, h=h, **options)
    errors = {name: relative_error(a, b) for name, a, b in zip(("dq", "dk", "dv"), hand, numeric)}
    worst = max(errors.values())
    return {**errors, "max": worst, "passed": worst <= TOLERANCE}


def projection_gradient_check(
    x, w_q, w_k, w_v, d_out, *, h=STEP, causal=True, key_valid=None, empty_row="error"
) -> dict:
    """用中心有限差分核对投影矩阵与输入的梯度（``projection_backward``），返回各自的相对误差。

    >>> r = projection_gradient_check(PROJ_X, PROJ_W_Q, PROJ_W_K, PROJ_W_V, EXAMPLE_D_OUT)
    >>> sorted(r), r["passed"]
    (['dw_k', 'dw_q', 'dw_v', 'dx', 'max', 'passed'], True)
    """
    step = att._real(h, "h")
    if not (math.isfinite(step) and step > 0):
        raise ValueError(f"h 必须是正的有限数，收到 {h!r}")
    options = dict(causal=causal, key_valid=key_valid, empty_row=empty_row)
    x, w_q, w_k, w_v = _projection_inputs(x, w_q, w_k, w_v)
    r = projected_attention(x, w_q, w_k, w_v, **options)
    d_out = _matrix(d_out, "d_out")  # 形状由 attention_backward 检查
    hand = projection_backward(x, w_q, w_k, w_v, *attention_backward(r["q"], r["k"], r["v"], d_out, **options))

    def loss():
        out = projected_attention(x, w_q, w_k, w_v, **options)["outputs"]
        return sum(a * b for o_i, do_i in zip(out, d_out) for a, b in zip(o_i, do_i))

    errors = {}
    for name, m in (("dw_q", w_q), ("dw_k", w_k), ("dw_v", w_v), ("dx", x)):
        g = [[0.0] * len(m[0]) for _ in m]
        for i in range(len(m)):
            for c in range(len(m[0])):
                saved = m[i][c]
                m[i][c] = saved + step
                up = loss()
                m[i][c] = saved - step
                down = loss()
                m[i][c] = saved
                g[i][c] = (up - down) / (2 * step)
        errors[name] = relative_error(hand[name], g)
    worst = max(errors.values())
    return {**errors, "max": worst, "passed": worst <= TOLERANCE}


# -- 由数据生成的句子 -----------------------------------------------------------------------------------
def zero_sentence(steps: dict) -> str:
    """数一数 ``backward_steps`` 结果里禁止格子与恰为 0 的梯度，写成一句话。

    >>> s = backward_steps([[1.0]], [[1.0], [2.0]], [[10.0], [30.0]], [[1.0]], [[True, False]])
    >>> zero_sentence(s)
    '可见性表禁止了 1 个格子，其中权重恰为 0 的有 1 个，dS 恰为 0 的有 1 个；所有查询都不许读的 Key 有 1 个（Key 1），它们的 dK 与 dV 全部恰为 0。'
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
    verdict = "全部恰为 0" if exact else "并不全为 0"
    return text + f"所有查询都不许读的 Key 有 {len(unread)} 个（{names}），它们的 dK 与 dV {verdict}。"


def check_sentence(results: dict) -> str:
    """把“反向实现 → (dO 全为 1 时的误差, 随机 dO 时的误差)”写成一句结论。

    >>> check_sentence({"正确": (1e-10, 1e-10), "丢掉修正项": (0.3, 0.4), "忘乘 dO": (0.0, 0.2)})
    '随机 dO 的核对认出了 2 个错误实现（丢掉修正项、忘乘 dO），dO 全为 1 的核对只认出 1 个（丢掉修正项）；正确实现在两种核对下都通过。'
    """
    if not isinstance(results, dict) or not results:
        raise ValueError("results 必须是非空字典：实现名 → (全 1 误差, 随机误差)")
    caught_ones = [name for name, (ones, _) in results.items() if ones > TOLERANCE]
    caught_rand = [name for name, (_, rand) in results.items() if rand > TOLERANCE]
    passed_both = [name for name, (ones, rand) in results.items() if ones <= TOLERANCE and rand <= TOLERANCE]
    lst = lambda names: "、".join(names) if names else "无"
    text = (
        f"随机 dO 的核对认出了 {len(caught_rand)} 个错误实现（{lst(caught_rand)}），"
        f"dO 全为 1 的核对只认出 {len(caught_ones)} 个（{lst(caught_ones)}）；"
    )
    if passed_both == ["正确"]:
        return text + "正确实现在两种核对下都通过。"
    return text + f"在两种核对下都通过的是：{lst(passed_both)}。"


# -- 自检与演示 ----------------------------------------------------------------------------------------
# 3 个位置的例子（人工构造）：Q 与 K 不同，V 两列，随机挑选的上游梯度 dO。
EXAMPLE_Q = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
EXAMPLE_K = [[1.0, 1.0], [0.0, 1.0], [1.0, 0.0]]
EXAMPLE_V = [[1.0, 2.0], [3.0, 0.0], [0.0, 1.0]]
EXAMPLE_D_OUT = [[1.0, -1.0], [0.5, 2.0], [-1.0, 0.5]]
# 投影的例子：3 个位置的输入 X（每行 2 维）与三个 2×2 的投影矩阵。
PROJ_X = [[1.0, 0.0], [0.5, 1.0], [-1.0, 1.0]]
PROJ_W_Q = [[1.0, 0.5], [0.0, 1.0]]
PROJ_W_K = [[0.5, 0.0], [1.0, -0.5]]
PROJ_W_V = [[1.0, 2.0], [-1.0, 1.0]]


def _check(condition: bool, message: str) -> None:
    # 不用 assert：python -O 会删掉 assert，自检就形同虚设。
    if not condition:
        raise AssertionError(message)


def self_test() -> None:
    """快速自检：有限差分核对、故意写错的变体被认出、禁止格子的梯度恰为 0。

    >>> self_test()
    """
    ex = (EXAMPLE_Q, EXAMPLE_K, EXAMPLE_V, EXAMPLE_D_OUT)
    _check(gradient_check(*ex)["passed"], "手推的梯度应当通过有限差分核对")
    _check(not gradient_check(*ex, backward=wrong_backward_no_rowsum)["passed"], "丢掉修正项的变体应当被认出")
    ones = [[1.0] * len(row) for row in EXAMPLE_D_OUT]
    _check(gradient_check(*ex[:3], ones, backward=wrong_backward_forgets_d_out)["passed"], "dO 全为 1 时忘乘 dO 看不出来")
    _check(not gradient_check(*ex, backward=wrong_backward_forgets_d_out)["passed"], "随机 dO 应当认出忘乘 dO")
    steps = backward_steps(*ex, att.visibility(3, 3, key_valid=[True, True, False]))
    _check(all(x == 0.0 for x in steps["dk"][2] + steps["dv"][2]), "PAD Key 的 dK、dV 必须恰为 0")
    _check(all(abs(a - b) < 1e-12 for a, b in zip(steps["rowsum_do_o"], steps["rowsum_dp_p"])), "两种修正项应当相等")


def run_demo() -> dict:
    """演示结果：[0, 1, 2] 的雅可比矩阵、3 个位置例子的梯度、有限差分误差与 PAD Key 的梯度。

    >>> demo = run_demo()
    >>> demo["有限差分核对"]["通过"], demo["PAD_Key_2"]["dK"], demo["PAD_Key_2"]["dV"]
    (True, [0.0, 0.0], [0.0, 0.0])
    """
    ex = (EXAMPLE_Q, EXAMPLE_K, EXAMPLE_V, EXAMPLE_D_OUT)
    dq, dk, dv = attention_backward(*ex)
    check = gradient_check(*ex)
    _, dk_pad, dv_pad = attention_backward(*ex, key_valid=[True, True, False])
    return {
        "性质": "人工构造的小矩阵，没有训练过的模型",
        "softmax_jacobian_0_1_2": softmax_jacobian([0, 1, 2]),
        "例子_因果": {"dQ": dq, "dK": dk, "dV": dv},
        "有限差分核对": {"最大相对误差": check["max"], "标准": TOLERANCE, "通过": check["passed"]},
        "PAD_Key_2": {"dK": dk_pad[2], "dV": dv_pad[2]},
    }


if __name__ == "__main__":
    import json

    self_test()
    print(json.dumps(run_demo(), ensure_ascii=False, indent=2))
