"""第2章教学代码：注意力的反向传播——手推的梯度、逐步的数值和有限差分核对。

配合“反向传播”一页；前向从 ``02_attention.py`` 导入（放在同一目录）。给定 ``d_out = ∂L/∂O``
（损失 ``L = Σ d_out * O``），按推导顺序算出 ``dV = P^T dO``、``dP = dO V^T``、
``D = rowsum(dO * O)``、``dS = P * (dP − D)``、``dQ = dS K / √d``、``dK = dS^T Q / √d``，
再到投影矩阵（``*`` 逐元素乘，``^T`` 转置）。``python3 02_backprop.py``：先自检，再打印 JSON。
"""

from __future__ import annotations

import importlib
import math
import struct

att = importlib.import_module("02_attention")

TOLERANCE = 1e-6  # 有限差分核对的标准：float64 下的相对误差
STEP = 1e-5  # 中心差分的步长 ε


# -- softmax 的一行 --------------------------------------------------------------------------------
def softmax_jacobian(scores: list[float]) -> list[list[float]]:
    """一行 softmax 的雅可比矩阵 ``J[a][b] = ∂p_a/∂s_b = p_a(δ_ab − p_b)``，即 ``diag(p) − p p^T``。

    每行之和为 0（分数整体平移，权重不变）；对称；每格的绝对值不超过所在行的对角线 p(1 − p) ≤ 1/4。

    >>> [[round(x, 4) for x in row] for row in softmax_jacobian([0, 1, 2])]
    [[0.0819, -0.022, -0.0599], [-0.022, 0.1848, -0.1628], [-0.0599, -0.1628, 0.2227]]
    """
    s = att.as_vector(scores, "scores")  # 有限的分数；J 是 n × n 的列表，n 有上限
    att.check_count(len(s), "scores 的长度", maximum=att.MAX_POSITIONS)
    p = att.softmax(s)
    return [[pa * (float(a == b) - pb) for b, pb in enumerate(p)] for a, pa in enumerate(p)]


def softmax_backward(weights: list[float], d_weights: list[float]) -> list[float]:
    """一行 softmax 的反向：``ds = J dp = p * (dp − Σ_b p_b dp_b)``，不必造出整张 J。

    ``weights`` 是前向的一行权重 p，``d_weights`` 是损失对它们的梯度 dp；结果之和恒为 0。

    >>> softmax_backward([0.5, 0.5], [1.0, 0.0])
    [0.25, -0.25]
    >>> softmax_backward([1.0, 0.0], [3.0, 4.0])  # 权重全在一格：分数的梯度为 0
    [0.0, 0.0]
    """
    p = att.as_vector(weights, "weights")
    dp = att.as_vector(d_weights, "d_weights")
    if len(p) != len(dp):
        raise ValueError(f"weights 与 d_weights 的长度必须相同，收到 {len(p)} 和 {len(dp)}")
    dot = sum(pb * x for pb, x in zip(p, dp))  # Σ_b p_b dp_b
    return [pa * (x - dot) for pa, x in zip(p, dp)]


# -- 反向：按推导顺序的每一步 ----------------------------------------------------------------------
def _rowsum_d_out_out(p, dp, out, d_out):
    # 正确的修正项：D_i = Σ_c dO[i][c]·O[i][c]（等于 Σ_j P[i][j]·dP[i][j]）。
    return [sum(a * b for a, b in zip(do_i, o_i)) for do_i, o_i in zip(d_out, out)]


def _backward(
    q, k, v, d_out, visible, empty_row, correction=_rowsum_d_out_out, weights=None, outputs=None
):
    """已校验的输入上做反向，返回全部中间量。``correction`` 只为保留故意写错的变体而可换。"""
    if weights is None:  # 前向就是 02_attention 的 masked_attention，全屏蔽行按 empty_row 处理
        weights, outputs = att.masked_attention(q, k, v, visible, empty_row=empty_row)
    nq = len(q)  # n_query
    nk = len(k)  # n_key
    d = len(q[0])
    d_v = len(v[0])
    scale = att.score_scale(d)  # 前向用的同一个 √d（02_attention）
    p = weights  # (nq, nk)
    # O = P V  ⇒  dV = P^T dO：(nk, d_v)，dP = dO V^T：(nq, nk)
    dv = [[sum(p[i][j] * d_out[i][c] for i in range(nq)) for c in range(d_v)] for j in range(nk)]
    dp = [[sum(d_out[i][c] * v[j][c] for c in range(d_v)) for j in range(nk)] for i in range(nq)]
    # P = softmax(S) 逐行  ⇒  dS = P * (dP − D)，D 是每行一个数
    rowsum_do_o = correction(p, dp, outputs, d_out)  # (n_query,)
    rowsum_dp_p = [sum(a * b for a, b in zip(p_i, dp_i)) for p_i, dp_i in zip(p, dp)]  # (n_query,)
    # 禁止的格子 P = 0，所以 dS 在那里恰为 0：梯度不经由它流回 Q、K。
    ds = [[p[i][j] * (dp[i][j] - rowsum_do_o[i]) for j in range(nk)] for i in range(nq)]  # (nq, nk)
    # S = Q K^T / √d  ⇒  dQ = dS K / √d：(nq, d)，dK = dS^T Q / √d：(nk, d)
    dq = [[sum(ds[i][j] * k[j][c] for j in range(nk)) / scale for c in range(d)] for i in range(nq)]
    dk = [[sum(ds[i][j] * q[i][c] for i in range(nq)) / scale for c in range(d)] for j in range(nk)]
    return {
        "weights": p,
        "outputs": outputs,
        "dv": dv,
        "dp": dp,
        "rowsum_do_o": rowsum_do_o,
        "rowsum_dp_p": rowsum_dp_p,
        "ds": ds,
        "dq": dq,
        "dk": dk,
        "visible": visible,
    }


def backward_steps(q, k, v, d_out, visible, *, empty_row: str = "error") -> dict:
    """按给定可见性表做一次前向和反向，返回推导顺序里的每个中间量（供逐格手算核对）。

    键：``weights`` (P)、``outputs`` (O)、``dv``、``dp``、``rowsum_do_o`` (D = rowsum(dO * O))、
    ``rowsum_dp_p`` (rowsum(dP * P)，与 D 相等)、``ds``、``dq``、``dk``、``visible``。

    >>> s = backward_steps([[1.0]], [[1.0], [2.0]], [[10.0], [30.0]], [[1.0]], [[True, False]])
    >>> s["weights"]  # Key 1 被禁止：权重 0
    [[1.0, 0.0]]
    >>> s["ds"]  # 禁止的格子 dS 恰为 0；这一行只读一个 Key，允许的那格也是 0
    [[0.0, 0.0]]
    >>> s["dk"]
    [[0.0], [0.0]]
    >>> s["dv"]  # 没有查询读 Key 1：它的 dV 恰为 0
    [[1.0], [0.0]]
    """
    return _backward(*_shapes(q, k, v, d_out, visible, empty_row))


def _run(q, k, v, d_out, causal, past, key_valid, empty_row, correction=_rowsum_d_out_out):
    rule = dict(causal=causal, past=past, key_valid=key_valid)
    steps = _backward(*_shapes(q, k, v, d_out, None, empty_row, rule), correction)
    return steps["dq"], steps["dk"], steps["dv"]


def attention_backward(q, k, v, d_out, *, causal=True, past=0, key_valid=None, empty_row="error"):
    """一次注意力调用的反向传播，返回 ``(dq, dk, dv)``（嵌套列表，形状同 q、k、v）。

    ``d_out = ∂L/∂O``；分数除以 √d；可见性表由 ``causal``、``past``（查询行 i 的绝对位置是
    ``past + i``）与 ``key_valid``（False 是 PAD）造出，是常量，没有梯度；``empty_row`` 为
    ``"error"`` 时全屏蔽行报错，为 ``"zero"`` 时这一行输出与梯度全为 0。

    >>> q = k = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> dq, dk, dv = attention_backward(q, k, [[10.0], [20.0], [30.0]], [[1.0], [-1.0], [0.5]])
    >>> [[round(x, 4) for x in row] for row in dq]
    [[0.0, 0.0], [1.564, -1.564], [0.224, 1.1017]]
    >>> [[round(x, 4) for x in row] for row in dv]
    [[0.7939], [-0.5456], [0.2517]]
    """
    return _run(q, k, v, d_out, causal, past, key_valid, empty_row)


# 故意写错的两个反向（参数与 attention_backward 相同）：只用于对照和测试，证明核对真的会失败。
def wrong_backward_no_rowsum(
    q, k, v, d_out, *, causal=True, past=0, key_valid=None, empty_row="error"
):
    """故意写错：丢掉修正项，写成 ``dS = P * dP``（下例正确的 dQ 是 5）。

    >>> q = [[0.0]]
    >>> k = [[0.0], [1.0]]
    >>> v = [[10.0], [30.0]]
    >>> wrong_backward_no_rowsum(q, k, v, [[1.0]], causal=False)[0]
    [[15.0]]
    """

    def no_rowsum(p, dp, out, d_out):
        return [0.0] * len(p)

    return _run(q, k, v, d_out, causal, past, key_valid, empty_row, no_rowsum)


def wrong_backward_forgets_d_out(
    q, k, v, d_out, *, causal=True, past=0, key_valid=None, empty_row="error"
):
    """故意写错：修正项写成 ``rowsum(O)``，忘了乘上游梯度 dO。

    dO 全为 1 时 ``rowsum(dO * O) = rowsum(O)``，这个错误完全看不出来；只有随机的 dO 才能暴露它。

    >>> q = [[1.0, 0.0]]
    >>> k = [[1.0, 0.0], [0.0, 1.0]]
    >>> v = [[1.0, 2.0], [3.0, 0.0]]
    >>> ones = [[1.0, 1.0]]
    >>> wrong_backward_forgets_d_out(q, k, v, ones, causal=False) == attention_backward(
    ...     q, k, v, ones, causal=False
    ... )
    True
    >>> d_out = [[0.5, -1.0]]  # 随意取的 dO
    >>> wrong_backward_forgets_d_out(q, k, v, d_out, causal=False) == attention_backward(
    ...     q, k, v, d_out, causal=False
    ... )
    False
    """

    def rowsum_of_out(p, dp, out, d_out):
        # (忘了乘 dO)
        return [sum(o_i) for o_i in out]

    return _run(q, k, v, d_out, causal, past, key_valid, empty_row, rowsum_of_out)


def wrong_backward_transposes_p(
    q, k, v, d_out, *, causal=True, past=0, key_valid=None, empty_row="error"
):
    """故意写错：``dV = P dO``，漏了转置（n_query = n_key 时形状仍对得上）。dO 全为 1 也认得出。"""
    rule = dict(causal=causal, past=past, key_valid=key_valid)
    steps = _backward(*_shapes(q, k, v, d_out, None, empty_row, rule))
    if len(q) != len(k):
        raise ValueError(f"Q 与 K 的行数必须相同（P dO 才有意义），收到 {len(q)} 和 {len(k)}")
    return steps["dq"], steps["dk"], att.matmul(steps["weights"], d_out)


# -- 再往前一步：投影矩阵 --------------------------------------------------------------------------
def projection_backward(x, w_q, w_k, w_v, dq, dk, dv) -> dict:
    """由 dQ、dK、dV 算出投影矩阵与输入的梯度（单头）。

    ``Q = X W_q`` ⇒ ``dW_q = X^T dQ``，K、V 同理；X 同时产生 Q、K、V，
    所以 ``dX = dQ W_q^T + dK W_k^T + dV W_v^T``。返回 ``{"dw_q", "dw_k", "dw_v", "dx"}``。

    >>> w_q = [[1.0], [0.0]]
    >>> w_k = [[0.0], [1.0]]
    >>> w_v = [[1.0], [1.0]]
    >>> g = projection_backward([[1.0, 2.0]], w_q, w_k, w_v, [[1.0]], [[0.5]], [[2.0]])
    >>> g["dw_q"]
    [[1.0], [2.0]]
    >>> g["dw_k"]
    [[0.5], [1.0]]
    >>> g["dw_v"]
    [[2.0], [4.0]]
    >>> g["dx"]
    [[3.0, 2.5]]
    """
    x, w_q, w_k, w_v = _projection_inputs(x, w_q, w_k, w_v)
    dq = _gradient(dq, "dQ", x, w_q)
    dk = _gradient(dk, "dK", x, w_k)
    dv = _gradient(dv, "dV", x, w_v)
    # X 同时产生 Q、K、V：dX 是三条路的梯度之和。
    from_q = att.matmul(dq, list(zip(*w_q)))  # dQ W_q^T：(n, d_model)
    from_k = att.matmul(dk, list(zip(*w_k)))  # dK W_k^T
    from_v = att.matmul(dv, list(zip(*w_v)))  # dV W_v^T
    dx = [[a + b + c for a, b, c in zip(*rows)] for rows in zip(from_q, from_k, from_v)]
    xt = list(zip(*x))  # X^T：(d_model, n)
    return {
        "dw_q": att.matmul(xt, dq),  # (d_model, d)
        "dw_k": att.matmul(xt, dk),
        "dw_v": att.matmul(xt, dv),  # (d_model, d_v)
        "dx": dx,
    }


# -- 演示：不加保护的全屏蔽行 ----------------------------------------------------------------------
def fill_backward_demo(
    q, k, v, d_out, visible, *, fill: float, added: bool = False, dtype: str = "float64"
) -> dict:
    """只为演示：禁止格子的分数 *换成* ``fill``（``masked_fill`` 的写法），或 ``added=True`` 时
    *加上* ``fill``（加性 mask ``S = Q K^T / √d + M``），做不查全屏蔽行的 softmax，再做反向。

    ``fill = −∞``：全屏蔽行的权重是 NaN，``dV = P^T dO`` 让每个 Key 的 dV 沾上 NaN，即使这一行
    的 dO 为 0（0 × NaN 仍是 NaN）；``fill = −1e9``：换成时全屏蔽行平均地读被禁止的 Key，PAD 的
    Value 因此拿到梯度。被换掉的分数是常数，梯度不经由它流回 Q、K；加上的 M 是常数，dS 原样流回
    分数，NaN 也进 dQ 和 dK。``dtype="float32"`` 只模拟一处舍入：换成或加上之后的分数舍入成
    float32（其余仍按 float64 算）；加上 −1e9 时，小分数与它的和在 float32 里就是 −1e9。

    >>> k = [[0.0], [0.0]]
    >>> v = [[10.0], [30.0]]
    >>> nothing = [[False, False]]  # 唯一的查询行整行被禁止
    >>> fill_backward_demo([[0.0]], k, v, [[1.0]], nothing, fill=-math.inf)["dv"]
    [[nan], [nan]]
    >>> fill_backward_demo([[0.0]], k, v, [[1.0]], nothing, fill=-1e9)["dv"]
    [[0.5], [0.5]]
    >>> qk = [[0.0], [1.0]]
    >>> first_empty = [[False, False], [True, True]]
    >>> fill_backward_demo(qk, qk, v, [[1.0], [1.0]], first_empty, fill=-math.inf, added=True)["dk"]
    [[nan], [nan]]
    >>> one = [[1.0]]
    >>> apart = [[1.0], [-1.0]]  # 两个分数相差 2：加上 −1e9 后在 float64 里仍相差 2
    >>> r = fill_backward_demo(one, apart, v, one, nothing, fill=-1e9, added=True)
    >>> [round(w, 4) for w in r["weights"][0]]
    [0.8808, 0.1192]
    >>> r = fill_backward_demo(one, apart, v, one, nothing, fill=-1e9, added=True, dtype="float32")
    >>> r["weights"]
    [[0.5, 0.5]]
    """
    q, k, v, d_out, visible, _ = _shapes(q, k, v, d_out, visible, "zero")
    fill = att.real(fill, "fill")
    if math.isnan(fill) or fill >= 0:
        raise ValueError(f"fill 必须是负数或 −∞，收到 {fill}")
    if not isinstance(added, bool):
        raise ValueError(f"added 必须是 True 或 False，收到 {added!r}")
    if dtype not in ("float64", "float32"):
        raise ValueError(f"dtype 必须是 'float64' 或 'float32'，收到 {dtype!r}")
    if dtype == "float64" and (not added or fill == -math.inf):  # 加上 −∞ 与换成 −∞ 相同
        weights, outputs = att.unguarded_attention(q, k, v, visible, fill=fill)
    else:
        weights, outputs = _filled_attention(q, k, v, visible, fill, added, dtype)
    steps = _backward(q, k, v, d_out, visible, "zero", weights=weights, outputs=outputs)
    # 换掉的格子与 Q、K 无关，dS 不向前传（masked_fill 的反向置 0）；加上的 M 是常数，dS 照传。
    ds = [[x if ok or added else 0.0 for x, ok in zip(r, m)] for r, m in zip(steps["ds"], visible)]
    nq = len(q)
    nk = len(k)
    d = len(q[0])
    scale = att.score_scale(d)
    dq = [[sum(ds[i][j] * k[j][c] for j in range(nk)) / scale for c in range(d)] for i in range(nq)]
    dk = [[sum(ds[i][j] * q[i][c] for i in range(nq)) / scale for c in range(d)] for j in range(nk)]
    return {"weights": weights, "outputs": outputs, "dq": dq, "dk": dk, "dv": steps["dv"]}


def _filled_attention(q, k, v, visible, fill, added, dtype):
    """``unguarded_attention`` 的前向，但禁止格子的分数可以 *加上* ``fill``，并可舍入成 float32。"""
    scores = [
        [s + (0.0 if ok else fill) if added else s if ok else fill for s, ok in zip(row, m)]
        for row, m in zip(att.scaled_scores(q, k), visible)
    ]  # (n_query, n_key)
    if dtype == "float32":
        scores = [[_float32(x) for x in row] for row in scores]
    weights = []
    for row in scores:
        exps = [math.exp(x - max(row)) for x in row]  # 全是 −∞ 时 (−∞) − (−∞) 是 NaN
        weights.append([e / sum(exps) for e in exps])
    # 不经 matmul：它拒绝 NaN，而这里正要让读者看见 NaN。
    outputs = [[sum(w * x for w, x in zip(row, col)) for col in zip(*v)] for row in weights]
    return weights, outputs  # (n_query, n_key), (n_query, d_v)


def _float32(x: float) -> float:
    """``x`` 舍入成最近的 float32（``struct`` 的 ``"f"`` 格式，与 ``numpy.float32(x)`` 相同）。"""
    return struct.unpack("f", struct.pack("f", x))[0]


# -- 核对：中心有限差分 ----------------------------------------------------------------------------
def _numeric(outputs, d_out, m: list[list[float]], eps: object) -> list[list[float]]:
    """逐个元素原地扰动 ``m``（用完即还原），返回 ``L = Σ d_out * outputs()`` 的中心差分。"""
    step = att.real(eps, "eps")
    if not (math.isfinite(step) and 0 < step <= 0.1):  # 步长大了，差分就不再近似导数
        raise ValueError(f"eps 必须是正的有限数，且不大于 0.1，收到 {eps!r}")

    def loss():
        return sum(a * b for o, g in zip(outputs(), d_out) for a, b in zip(o, g))

    g = [[0.0] * len(m[0]) for _ in m]
    for i, row in enumerate(m):
        for c, saved in enumerate(row):
            row[c] = saved + step
            up = loss()
            row[c] = saved - step
            down = loss()
            row[c] = saved
            g[i][c] = (up - down) / (2 * step)
    return g


def finite_difference(
    q, k, v, d_out, *, eps=STEP, causal=True, past=0, key_valid=None, empty_row="error"
):
    """中心有限差分 ``(L(x + ε) − L(x − ε)) / 2ε``（``L = Σ d_out * O``），逐元素估计 dq、dk、dv。

    >>> dv = finite_difference([[0.0]], [[0.0]] * 2, [[10.0], [30.0]], [[1.0]], causal=False)[2]
    >>> [[round(x, 6) for x in row] for row in dv]
    [[0.5], [0.5]]
    """
    rule = dict(causal=causal, past=past, key_valid=key_valid)
    q, k, v, d_out, visible, policy = _shapes(q, k, v, d_out, None, empty_row, rule)

    def outputs():
        return att.masked_attention(q, k, v, visible, empty_row=policy)[1]

    return tuple(_numeric(outputs, d_out, m, eps) for m in (q, k, v))


def relative_error(a: list[list[float]], b: list[list[float]]) -> float:
    """两个同形矩阵的相对误差 ``‖a − b‖ / max(‖a‖, ‖b‖, 1)``（范数是全部元素的平方和开方）。

    分母至少取 1：梯度整体接近 0 时按绝对误差比较，不会被极小的分母放大。

    >>> relative_error([[3.0, 4.0]], [[0.0, 0.0]])
    1.0
    >>> relative_error([[1e-9]], [[2e-9]])  # 接近 0 时按绝对误差
    1e-09
    """
    a = att.as_matrix(a, "a")
    b = att.as_matrix(b, "b")
    if _shape(a) != _shape(b):
        raise ValueError(f"a 与 b 的形状必须相同，收到 {_shape(a)} 和 {_shape(b)}")

    def norm(m):
        return math.sqrt(sum(x * x for row in m for x in row))

    diff = math.sqrt(sum((x - y) ** 2 for ra, rb in zip(a, b) for x, y in zip(ra, rb)))
    return diff / max(norm(a), norm(b), 1.0)


def gradient_check(
    q,
    k,
    v,
    d_out,
    *,
    backward=None,
    eps=STEP,
    causal=True,
    past=0,
    key_valid=None,
    empty_row="error",
):
    """用中心有限差分核对一个反向实现：每个梯度的相对误差、最大值、是否通过（≤ ``TOLERANCE``）。

    ``backward`` 默认是 ``attention_backward``；换成故意写错的版本，核对应当失败。

    >>> ex = ([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]], [[10.0], [20.0]], [[1.0], [-1.0]])
    >>> [gradient_check(*ex, backward=b)["passed"] for b in (None, wrong_backward_no_rowsum)]
    [True, False]
    """
    backward = attention_backward if backward is None else backward
    if not callable(backward):
        raise ValueError(f"backward 必须是可调用的反向函数，收到 {backward!r}")
    q = att.as_matrix(q, "Q")
    k = att.as_matrix(k, "K")
    v = att.as_matrix(v, "V")
    d_out = att.as_matrix(d_out, "d_out")
    options = dict(causal=causal, past=past, key_valid=key_valid, empty_row=empty_row)
    hand = backward(q, k, v, d_out, **options)
    numeric = finite_difference(q, k, v, d_out, eps=eps, **options)
    errors = {name: relative_error(a, b) for name, a, b in zip(("dq", "dk", "dv"), hand, numeric)}
    worst = max(errors.values())
    return {**errors, "max": worst, "passed": worst <= TOLERANCE}


def projection_gradient_check(
    x, w_q, w_k, w_v, d_out, *, eps=STEP, causal=True, key_valid=None, empty_row="error"
):
    """用中心有限差分核对投影矩阵与输入的梯度（``projection_backward``），返回各自的相对误差。

    >>> projection_gradient_check(PROJ_X, PROJ_W_Q, PROJ_W_K, PROJ_W_V, EXAMPLE_D_OUT)["passed"]
    True
    """
    options = dict(causal=causal, key_valid=key_valid, empty_row=empty_row)
    x, w_q, w_k, w_v = _projection_inputs(x, w_q, w_k, w_v)
    d_out = att.as_matrix(d_out, "d_out")  # 形状由 attention_backward 检查

    def qkv():
        # Q = X W_q，K、V 同理
        return [att.matmul(x, w) for w in (w_q, w_k, w_v)]

    hand = projection_backward(x, w_q, w_k, w_v, *attention_backward(*qkv(), d_out, **options))
    mask = dict(key_valid=key_valid, empty_row=empty_row)

    def outputs():
        return att.attention(*qkv(), causal, **mask)[1]

    params = (("dw_q", w_q), ("dw_k", w_k), ("dw_v", w_v), ("dx", x))
    errors = {n: relative_error(hand[n], _numeric(outputs, d_out, m, eps)) for n, m in params}
    worst = max(errors.values())
    return {**errors, "max": worst, "passed": worst <= TOLERANCE}


# -- 边界上的检查 ----------------------------------------------------------------------------------
def _shapes(q, k, v, d_out, visible, empty_row, rule=None):
    """校验全部输入，返回 float 矩阵、可见性表与策略；给了 ``rule`` 就按它造可见性表。"""
    if empty_row not in att.EMPTY_ROW_POLICIES:  # 全屏蔽行的两种明确策略
        raise ValueError(f'empty_row 必须是 "error" 或 "zero"，收到 {empty_row!r}')
    q = att.as_matrix(q, "Q")
    k = att.as_matrix(k, "K")
    v = att.as_matrix(v, "V")
    d_out = att.as_matrix(d_out, "d_out")
    if len(q[0]) != len(k[0]) or len(v) != len(k):
        raise ValueError(
            f"Q 与 K 的列数、V 与 K 的行数必须相同，"
            f"收到 Q {_shape(q)}、K {_shape(k)}、V {_shape(v)}"
        )
    visible = att.visibility(len(q), len(k), **rule) if rule is not None else visible
    visible = [[m == 0.0 for m in row] for row in att.additive_mask(visible)]  # 查布尔与矩形
    if _shape(d_out) != (len(q), len(v[0])):
        want = (len(q), len(v[0]))
        raise ValueError(f"d_out 的形状必须是 (n_query, d_v) = {want}，收到 {_shape(d_out)}")
    if _shape(visible) != (len(q), len(k)):
        want = (len(q), len(k))
        raise ValueError(f"visible 的形状必须是 (n_query, n_key) = {want}，收到 {_shape(visible)}")
    return q, k, v, d_out, visible, empty_row


def _shape(m: list[list]) -> tuple[int, int]:
    return len(m), len(m[0])


def _projection_inputs(x, w_q, w_k, w_v):
    """X 与三个投影矩阵：每个 W 的行数等于 X 的列数 d_model，W_q 与 W_k 的列数相同。"""
    x = att.as_matrix(x, "X")
    w_q = att.as_matrix(w_q, "W_q")
    w_k = att.as_matrix(w_k, "W_k")
    w_v = att.as_matrix(w_v, "W_v")
    for w, name in ((w_q, "W_q"), (w_k, "W_k"), (w_v, "W_v")):
        if len(w) != len(x[0]):
            raise ValueError(f"{name} 的行数必须等于 X 的列数 d_model={len(x[0])}，收到 {len(w)}")
    if len(w_q[0]) != len(w_k[0]):
        raise ValueError(f"W_q 与 W_k 的列数必须相同，收到 {len(w_q[0])} 和 {len(w_k[0])}")
    return x, w_q, w_k, w_v


def _gradient(
    g: object, name: str, x: list[list[float]], w: list[list[float]]
) -> list[list[float]]:
    """dQ、dK 或 dV：形状必须与 X W 相同，即 (n, W 的列数)。"""
    g = att.as_matrix(g, name)
    if _shape(g) != (len(x), len(w[0])):
        raise ValueError(f"{name} 的形状必须是 ({len(x)}, {len(w[0])})，收到 {_shape(g)}")
    return g


# -- 自检与演示 ------------------------------------------------------------------------------------
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


def self_test() -> None:
    """快速自检：有限差分核对、故意写错的变体被认出、禁止格子的梯度恰为 0。"""
    ex = (EXAMPLE_Q, EXAMPLE_K, EXAMPLE_V, EXAMPLE_D_OUT)
    ones = [[1.0] * 2 for _ in range(3)]

    def passes(d, f=None):
        return gradient_check(*ex[:3], d, backward=f)["passed"]

    att.check(passes(ex[3]), "手推的梯度应当通过有限差分核对")
    att.check(not passes(ex[3], wrong_backward_no_rowsum), "丢掉修正项的变体应当被认出")
    att.check(passes(ones, wrong_backward_forgets_d_out), "dO 全为 1 时忘乘 dO 看不出来")
    att.check(not passes(ex[3], wrong_backward_forgets_d_out), "随机 dO 应当认出忘乘 dO")
    att.check(not passes(ones, wrong_backward_transposes_p), "dO 全为 1 也应当认出漏了转置")
    steps = backward_steps(*ex, att.visibility(3, 3, key_valid=[True, True, False]))
    att.check(all(x == 0.0 for x in steps["dk"][2] + steps["dv"][2]), "PAD Key 的 dK、dV 须恰为 0")


def run_demo() -> dict:
    """演示结果：[0, 1, 2] 的雅可比矩阵、3 个位置例子的梯度、有限差分误差与 PAD Key 的梯度。"""
    ex = (EXAMPLE_Q, EXAMPLE_K, EXAMPLE_V, EXAMPLE_D_OUT)
    dq, dk, dv = attention_backward(*ex)
    check = gradient_check(*ex)
    _, dk_pad, dv_pad = attention_backward(*ex, key_valid=[True, True, False])
    fd = {"最大相对误差": check["max"], "标准": TOLERANCE, "通过": check["passed"]}
    return {
        "性质": "人工构造的小矩阵，没有训练过的模型",
        "softmax_jacobian_0_1_2": softmax_jacobian([0, 1, 2]),
        "例子_因果": {"dQ": dq, "dK": dk, "dV": dv},
        "有限差分核对": fd,
        "PAD_Key_2": {"dK": dk_pad[2], "dV": dv_pad[2]},
    }


if __name__ == "__main__":
    self_test()
    att.print_json(run_demo())
