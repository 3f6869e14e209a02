"""第2章教学代码：真的训练一次——同一个小模型，训练时加或不加因果规则，再像使用时那样逐词算。
模型：token 与位置嵌入、一个注意力头、到词表的输出投影，交叉熵，Adam；反向是“反向传播”一页的公式
换成 numpy。需要 numpy 与同一目录里的 ``02_attention.py``。运行：先自检，再打印 JSON。
"""

from __future__ import annotations

import importlib
import math
from numbers import Integral

import numpy as np

att = importlib.import_module("02_attention")

VOCAB = 8  # 词表大小 |V|
LENGTH = 8  # 序列长度 T
LAG = 4  # 重复的间隔（T = 2·LAG：只重复一轮）
D_MODEL = 8  # 嵌入宽度，也是注意力头的宽度
BATCH = 32  # 每步的序列数
STEPS = 200  # 训练步数
LEARNING_RATE = 0.05  # Adam 的学习率
BETA1 = 0.9  # Adam 的两个滑动平均系数
BETA2 = 0.999
ADAM_EPS = 1e-8  # Adam 分母里防止除以 0 的常数
EVAL_SEQUENCES = 256  # 评估的序列数
MAX_STEPS = 2000  # 两个上限（构建时间）
MAX_SEQUENCES = 100_000
RULES = ("causal", "none")  # 正文的两个模型：因果规则，或不加规则（每个位置读整条序列）
AHEAD = "ahead"  # 练习里的第三种规则：因果规则错了一位，查询 i 还读得到 Key i + 1
POSITIONS = ("absolute", "row_index")  # 逐词算时的位置：past + 行号（正确），或只用行号（错误）
PARAM_NAMES = ("embed", "position", "w_q", "w_k", "w_v", "w_out")


# -- 任务 --------------------------------------------------------------------------------------
def sequences(n, *, seed, vocab=VOCAB, length=LENGTH, lag=LAG) -> np.ndarray:
    """``n`` 条任务序列 (n, length)：前 ``lag`` 个 token 均匀随机，之后 ``x[t] = x[t − lag]``。
    >>> sequences(2, seed=0, vocab=5, length=6, lag=3).tolist()
    [[4, 3, 2, 4, 3, 2], [1, 1, 0, 1, 1, 0]]
    """
    n = _count(n, "n", 1, MAX_SEQUENCES, "（构建时间）")
    _task(seed, vocab, length, lag)
    return _sequences(np.random.default_rng(seed), n, vocab, length, lag)


def _sequences(rng, n, vocab, length, lag):
    first = rng.integers(0, vocab, size=(n, lag))  # (n, lag)：均匀随机
    rounds = -(-length // lag)  # 向上取整：重复几轮才够 length 个
    return np.tile(first, (1, rounds))[:, :length]  # (n, length)：x[t] = x[t − lag]


def loss_floor(vocab: int = VOCAB, length: int = LENGTH, lag: int = LAG) -> float:
    """因果规则下平均损失的下限：前 ``lag − 1`` 个目标只能猜（各 ln vocab），其余的可趋近 0。
    >>> round(loss_floor(8, 8, 4), 4)
    0.8912
    >>> round(3 / 7 * math.log(8), 4)  # 7 个目标里 3 个只能猜
    0.8912
    """
    _task(0, vocab, length, lag)
    return (lag - 1) / (length - 1) * math.log(vocab)


# -- 模型：可见性表、前向、交叉熵与反向 --------------------------------------------------------
def visible_table(rule: str, n: int) -> np.ndarray:
    """训练时的可见性表 (n, n)：``"causal"`` 与 ``"none"`` 是 Mask 一页的 ``visibility``；
    ``"ahead"`` 是错了一位的因果规则（j ≤ i + 1：还读得到下一个 Key）。
    >>> visible_table("ahead", 3).astype(int).tolist()
    [[1, 1, 0], [1, 1, 1], [1, 1, 1]]
    """
    if rule not in (*RULES, AHEAD):
        raise ValueError(f'rule 必须是 "causal"、"none" 或 "ahead"，收到 {rule!r}')
    n = _count(n, "n", 1, att.MAX_POSITIONS, "（可见性表的上限）")
    ahead = np.eye(n, k=1, dtype=bool) if rule == AHEAD else False  # 对角线右边紧挨着的一格
    return np.array(att.visibility(n, n, causal=rule != "none")) | ahead  # (n, n)


def init_params(*, seed, vocab=VOCAB, length=LENGTH, d_model=D_MODEL) -> dict:
    """随机初始化的参数：嵌入的标准差 1，投影的标准差 1/√d_model。
    >>> init_params(seed=0, vocab=3, length=4, d_model=2)["w_out"].shape
    (2, 3)
    """
    _task(seed, vocab, length)
    d_model = _count(d_model, "d_model", 1, 1024, "（演示用的小模型）")
    rng = np.random.default_rng(seed)
    s = 1 / math.sqrt(d_model)
    shapes = {
        "embed": (vocab, d_model),
        "position": (length, d_model),
        **dict.fromkeys(("w_q", "w_k", "w_v"), (d_model, d_model)),
        "w_out": (d_model, vocab),
    }
    return {
        name: rng.normal(0.0, 1.0 if name in ("embed", "position") else s, shape)
        for name, shape in shapes.items()
    }


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))  # 减去每行的最大值：不溢出；−∞ 得到恰好 0
    return e / e.sum(axis=-1, keepdims=True)


def _forward(p: dict, tokens: np.ndarray, visible: np.ndarray) -> dict:
    x = p["embed"][tokens] + p["position"][: tokens.shape[1]]  # (B, T, d)：token 加位置嵌入
    q = x @ p["w_q"]  # (B, T, d_head)
    k = x @ p["w_k"]  # (B, T, d_head)
    v = x @ p["w_v"]  # (B, T, d_head)
    s = np.where(visible, q @ k.swapaxes(1, 2) / math.sqrt(q.shape[-1]), -np.inf)  # (B, T, T)
    weights = _softmax(s)
    out = weights @ v  # (B, T, d_head)
    logits = out @ p["w_out"]  # (B, T, |V|)：每个 token 一个分数，softmax 后是概率
    return {"x": x, "q": q, "k": k, "v": v, "weights": weights, "out": out, "logits": logits}


def cross_entropy(logits, targets) -> tuple[float, np.ndarray]:
    """平均交叉熵 ``−mean log softmax(logits)[target]`` 与它对 logits 的梯度。
    >>> loss, grad = cross_entropy([[0.0, 0.0], [2.0, 0.0]], [1, 0])
    >>> round(loss, 4)  # 两个目标的平均：ln 2 与 ln(1 + exp(−2))
    0.41
    >>> np.round(grad, 4).tolist()
    [[0.25, -0.25], [-0.0596, 0.0596]]
    """
    z = _array(logits, "logits", float)
    y = _array(targets, "targets")
    if (
        z.ndim < 2
        or z.shape[:-1] != y.shape
        or z.shape[-1] < 2
        or y.dtype.kind not in "iu"
        or not np.isfinite(z).all()
    ):
        raise ValueError(
            f"logits 必须是 (…, |V|) 的有限数组，targets 是形状 (…) 的整数，"
            f"收到 {z.shape} 与 {y.shape}"
        )
    if y.size == 0 or y.min() < 0 or y.max() >= z.shape[-1]:
        raise ValueError(f"targets 必须非空，且在 0 到 {z.shape[-1] - 1} 之间")
    return _cross_entropy(z, y)


def _cross_entropy(z, y):
    log_p = z - z.max(axis=-1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(axis=-1, keepdims=True))  # log softmax，不会下溢
    one_hot = np.eye(z.shape[-1])[y]  # (…, |V|)
    loss = float(-(log_p * one_hot).sum() / y.size)
    grad = (np.exp(log_p) - one_hot) / y.size  # (softmax − one-hot) / N
    return loss, grad


def _attention_backward(q, k, v, weights, out, d_out):
    """“反向传播”一页的五步，按批（最前面的维度）一次算完。"""
    scale = math.sqrt(q.shape[-1])
    d_v = weights.swapaxes(-1, -2) @ d_out  # dV = P^T dO
    d_p = d_out @ v.swapaxes(-1, -2)  # dP = dO V^T
    correction = (d_out * out).sum(axis=-1, keepdims=True)  # D = rowsum(dO * O)
    d_s = weights * (d_p - correction)  # dS = P * (dP − D)：禁止的格子 P = 0，dS 恰为 0
    d_q = d_s @ k / scale  # dQ = dS K / √d
    d_k = d_s.swapaxes(-1, -2) @ q / scale  # dK = dS^T Q / √d
    return d_q, d_k, d_v


def loss_and_grads(params: dict, tokens, rule: str) -> tuple[float, dict]:
    """一批序列上的平均下一词损失，以及它对每个参数的梯度（字典，形状同 ``params``）。
    >>> p = init_params(seed=0, vocab=3, length=4, d_model=2)
    >>> loss, grads = loss_and_grads(p, [[0, 1, 2, 0]], "causal")
    >>> round(loss, 4)
    1.1473
    >>> sorted(grads) == sorted(p)
    True
    """
    p = _params(params)
    tokens = _tokens(tokens, p)
    n = tokens.shape[1]
    return _loss_and_grads(p, tokens, visible_table(rule, n))


def _loss_and_grads(p, tokens, visible):
    f = _forward(p, tokens, visible)
    # 位置 t 的目标是 tokens[t + 1]；最后一个位置没有目标，它的 logits 梯度为 0。
    loss, d_targets = _cross_entropy(f["logits"][:, :-1], tokens[:, 1:])
    d_logits = np.zeros_like(f["logits"])  # (B, T, |V|)
    d_logits[:, :-1] = d_targets
    d_out = d_logits @ p["w_out"].T  # (B, T, d_head)
    d_q, d_k, d_v = _attention_backward(f["q"], f["k"], f["v"], f["weights"], f["out"], d_out)

    def flat(a):
        # 摊平批与位置：dW = X^T dQ 对整批求和
        return a.reshape(-1, a.shape[-1])  # (B·T, …)

    x = flat(f["x"])  # (B·T, d)
    grads = {
        "w_q": x.T @ flat(d_q),  # dW_q = X^T dQ
        "w_k": x.T @ flat(d_k),
        "w_v": x.T @ flat(d_v),
        "w_out": flat(f["out"]).T @ flat(d_logits),
    }
    d_x = d_q @ p["w_q"].T + d_k @ p["w_k"].T + d_v @ p["w_v"].T  # X 产生 Q、K、V：三条路相加
    grads["position"] = np.zeros_like(p["position"])
    grads["position"][: tokens.shape[1]] = d_x.sum(axis=0)
    # 每一行 X 用到一行 token 嵌入：one_hot^T dX 把 dX 加回那一行（出现几次就加几次）
    grads["embed"] = flat(np.eye(len(p["embed"]))[tokens]).T @ flat(d_x)
    return loss, grads


# -- 训练 --------------------------------------------------------------------------------------
def train(rule: str, *, seed: int, steps: int = STEPS, keep=()) -> dict:
    """从 ``init_params(seed=seed)`` 出发，每步 ``BATCH`` 条新序列，按 ``rule`` 训练（Adam）。
    返回 ``{"train_loss": 每步更新前的损失, "params": 训练后的参数, "kept": {k: 第 k 步后的参数}}``
    （k 取 ``keep`` 里的步数）。
    >>> r = train("causal", seed=0, steps=3, keep=[2])
    >>> [round(x, 4) for x in r["train_loss"]]
    [2.8938, 2.4238, 2.2193]
    >>> sorted(r["kept"])
    [2]
    """
    steps = _count(steps, "steps", 1, MAX_STEPS, "（构建时间）")
    keep = {_count(k, "keep 里的步数", 1, steps, "（steps）") for k in att.as_list(keep, "keep")}
    p = init_params(seed=seed)
    visible = visible_table(rule, LENGTH)
    rng = np.random.default_rng([seed, 1])  # 训练序列的随机数流：与初始化、评估的不同
    m = {n: np.zeros_like(a) for n, a in p.items()}  # 梯度的滑动平均
    s = {n: np.zeros_like(a) for n, a in p.items()}  # 梯度平方的滑动平均
    losses = []
    kept = {}
    for step in range(1, steps + 1):
        loss, grads = _loss_and_grads(p, _sequences(rng, BATCH, VOCAB, LENGTH, LAG), visible)
        losses.append(loss)  # 这一批是新抽的，损失在更新之前算：模型没见过它们
        for name, g in grads.items():
            m[name] = BETA1 * m[name] + (1 - BETA1) * g
            s[name] = BETA2 * s[name] + (1 - BETA2) * g * g
            m_hat = m[name] / (1 - BETA1**step)
            s_hat = s[name] / (1 - BETA2**step)  # 起步修正
            p[name] = p[name] - LEARNING_RATE * m_hat / (np.sqrt(s_hat) + ADAM_EPS)
        if step in keep:
            kept[step] = {n: a.copy() for n, a in p.items()}
    return {"train_loss": losses, "params": p, "kept": kept}


# -- 评估：逐词算（使用时的算法；整段一次算就是 loss_and_grads） -------------------------------
def cache_step(past: int, rule: str, positions: str = "absolute") -> tuple[int, list[bool]]:
    """逐词算的一步：新 token 之前已有 ``past`` 个位置（都在缓存里）；返回位置嵌入行号与可见性行。
    ``"absolute"`` 按 ``past + 0`` 算，``"row_index"`` 用批内行号 0；可见性行取整段表的那一行。
    >>> cache_step(3, "causal")
    (3, [True, True, True, True])
    >>> cache_step(3, "causal", "row_index")
    (0, [True, False, False, False])
    >>> cache_step(3, "ahead") == cache_step(3, "causal")  # Key 4 还不在缓存里：多看的那个不存在
    True
    """
    past = _count(past, "past", 0, att.MAX_POSITIONS - 1, "（可见性表的上限）")
    if positions not in POSITIONS:
        raise ValueError(f'positions 必须是 "absolute" 或 "row_index"，收到 {positions!r}')
    row = past if positions == "absolute" else 0  # 行号当位置：缓存再长，新 token 也在第 0 行
    return row, visible_table(rule, past + 1)[row].tolist()


def use_time(params: dict, rule: str, *, seed: int, positions="absolute", prompt=None) -> dict:
    """逐词算、带 KV 缓存：每个位置的平均损失、top-1 准确率与两者的平均，每条序列的预测
    （``predicted``）。后面的 token 不在缓存里，所以 ``"absolute"`` 时 ``rule`` 不改变结果。
    给了 ``prompt`` 时只喂前 ``prompt`` 个真实 token，之后喂回模型自己的预测（贪心生成）。
    >>> u = use_time(init_params(seed=0), "causal", seed=1)
    >>> [round(x, 2) for x in u["loss"][:3]]
    [3.68, 3.1, 3.15]
    >>> [round(x, 2) for x in u["accuracy"][:3]]
    [0.12, 0.15, 0.12]
    """
    p = _params(params)
    truth = _tokens(sequences(EVAL_SEQUENCES, seed=seed), p)
    tokens = truth.copy()
    length = truth.shape[1]
    prompt = _count(length if prompt is None else prompt, "prompt", 1, length, "（序列长度）")
    keys = []
    values = []
    losses = []
    guesses = []
    for t in range(tokens.shape[1] - 1):
        row, visible = cache_step(t, rule, positions)
        x = p["embed"][tokens[:, t]] + p["position"][row]  # (B, d)：只为新 token 算
        keys.append(x @ p["w_k"])
        values.append(x @ p["w_v"])  # 新的 K、V 接在缓存后面
        k = np.stack(keys, axis=1)  # (B, t + 1, d)
        v = np.stack(values, axis=1)  # (B, t + 1, d)
        q = x @ p["w_q"]  # (B, d)：只有新 token 的查询
        s = np.einsum("bd,btd->bt", q, k) / math.sqrt(q.shape[-1])  # (B, t + 1)
        weights = _softmax(np.where(visible, s, -np.inf))
        out = np.einsum("bt,btd->bd", weights, v)  # (B, d)
        logits = out @ p["w_out"]  # (B, |V|)
        losses.append(_cross_entropy(logits, truth[:, t + 1])[0])
        guesses.append(logits.argmax(axis=-1))  # 概率最大的 token
        if t + 1 >= prompt:
            tokens[:, t + 1] = guesses[-1]  # 生成：下一步喂进去的是自己的预测
    guess = np.stack(guesses, axis=1)  # (n, length − 1)
    right = (guess == truth[:, 1:]).mean(axis=0).tolist()
    return {
        "loss": losses,
        "accuracy": right,
        "mean_loss": float(np.mean(losses)),
        "mean_accuracy": float(np.mean(right)),
        "predicted": guess.tolist(),
    }


# -- 看模型：注意力图与泄漏检查 ----------------------------------------------------------------
def attention_map(params: dict, rule: str, tokens) -> list[list[float]]:
    """一条序列上的注意力权重 (length, length)：第 i 行是查询 i 分给每个 Key 的权重。
    >>> p = init_params(seed=0, vocab=3, length=3, d_model=2)
    >>> np.round(attention_map(p, "causal", [0, 1, 2]), 2).tolist()[1]
    [0.62, 0.38, 0.0]
    """
    p = _params(params)
    t = _tokens([att.as_list(tokens, "tokens")], p)
    return _forward(p, t, visible_table(rule, t.shape[1]))["weights"][0].tolist()


def leak_check(params: dict, rule: str, *, seed: int) -> float:
    """泄漏检查：把位置 t 之后的 token 全换掉，位置 0 … t 的 logits 最多变了多少（取遍 t）。
    因果规则下必须恰为 0：一个位置的输出不能依赖它之后的 token。
    >>> p = init_params(seed=0)
    >>> leak_check(p, "causal", seed=1)
    0.0
    >>> leak_check(p, "none", seed=1) > 0
    True
    """
    p = _params(params)
    tokens = _tokens(sequences(EVAL_SEQUENCES, seed=seed), p)
    n = tokens.shape[1]
    vocab = p["embed"].shape[0]
    visible = visible_table(rule, n)
    base = _forward(p, tokens, visible)["logits"]
    worst = 0.0
    for t in range(n - 1):
        changed = tokens.copy()
        changed[:, t + 1 :] = (changed[:, t + 1 :] + 1) % vocab  # 后面的 token 都换成另一个
        moved = np.abs(_forward(p, changed, visible)["logits"][:, : t + 1] - base[:, : t + 1]).max()
        worst = max(worst, float(moved))
    return worst


# -- 核对：中心有限差分 ------------------------------------------------------------------------
def gradient_check(*, seed: int = 0, eps: float = 1e-5) -> float:
    """在很小的模型（|V| 3、长度 4、宽度 2）上用中心有限差分核对 ``loss_and_grads``。
    返回每个参数 ``‖解析 − 数值‖ / max(‖解析‖, ‖数值‖, 1)`` 的最大值（分母不小于 1）。
    >>> gradient_check() < 1e-6
    True
    """
    if not 0 < att.real(eps, "eps") <= 0.1:
        raise ValueError(f"eps 必须是 (0, 0.1] 里的数，收到 {eps!r}")
    p = init_params(seed=seed, vocab=3, length=4, d_model=2)
    tokens = sequences(3, seed=seed, vocab=3, length=4, lag=2)
    worst = 0.0
    for rule in RULES:
        _, grads = loss_and_grads(p, tokens, rule)
        for name, a in p.items():
            numeric = np.zeros_like(a)
            for i in np.ndindex(a.shape):  # 逐个元素原地扰动，用完即还原
                saved = a[i]
                losses = []
                for shift in (eps, -eps):
                    a[i] = saved + shift
                    losses.append(loss_and_grads(p, tokens, rule)[0])
                a[i] = saved
                numeric[i] = (losses[0] - losses[1]) / (2 * eps)  # (L(x + ε) − L(x − ε)) / 2ε
            norm = max(np.linalg.norm(grads[name]), np.linalg.norm(numeric), 1.0)
            worst = max(worst, float(np.linalg.norm(grads[name] - numeric) / norm))
    return worst


# -- 边界上的校验 ------------------------------------------------------------------------------
def _count(n: object, name: str, minimum: int = 1, maximum=None, why: str = "") -> int:
    if not isinstance(n, Integral) or isinstance(n, bool) or n < minimum:
        raise ValueError(f"{name} 必须是不小于 {minimum} 的整数（int 或 numpy 整数），收到 {n!r}")
    if maximum is not None and n > maximum:
        raise ValueError(f"{name} 不能超过 {maximum}{why}，收到 {n}")
    return int(n)


def _params(params: object) -> dict:
    if not isinstance(params, dict):
        raise ValueError(f"params 必须是含 {', '.join(PARAM_NAMES)} 的字典")
    missing = set(PARAM_NAMES) - set(params)
    extra = set(params) - set(PARAM_NAMES)
    if missing or extra:
        raise ValueError(f"params 缺少 {sorted(missing)}、多出 {sorted(map(str, extra))}")
    for name, a in params.items():
        if not (
            isinstance(a, np.ndarray)
            and a.ndim == 2
            and a.size
            and a.dtype == np.float64
            and np.isfinite(a).all()
        ):
            raise ValueError(f"params[{name!r}] 必须是非空、有限的二维 float64 数组")
    vocab, d = params["embed"].shape
    n = len(params["position"])
    d_head = params["w_q"].shape[1]
    want = {
        "position": (n, d),
        "w_q": (d, d_head),
        "w_k": (d, d_head),
        "w_v": (d, d_head),
        "w_out": (d_head, vocab),
    }
    for name, shape in want.items():
        if params[name].shape != shape:
            raise ValueError(f"params[{name!r}] 的形状必须是 {shape}，收到 {params[name].shape}")
    return params


def _task(seed, vocab, length, lag=1) -> None:  # 种子与任务的大小
    _count(seed, "seed", 0, 2**63 - 1, "（numpy 种子的范围）")
    _count(vocab, "vocab", 2, 10_000, "（演示用的小词表）")
    _count(length, "length", 2, att.MAX_POSITIONS, "（可见性表的上限）")
    _count(lag, "lag", 1, length - 1, "（length − 1：至少要有一个位置重复）")


def _array(x: object, name: str, dtype=None) -> np.ndarray:
    try:
        return np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as error:  # 参差不齐的行、字符串、字典
        raise ValueError(f"{name} 必须是矩形的数值数组：{error}") from None


def _tokens(tokens: object, params: dict) -> np.ndarray:  # (n, length) 的整数 token
    t = _array(tokens, "tokens")
    vocab = params["embed"].shape[0]
    rows = len(params["position"])
    if t.ndim != 2 or t.shape[0] < 1 or t.shape[1] < 2 or t.dtype.kind not in "iu":
        raise ValueError(f"tokens 必须是 (n, length) 的整数矩阵，n ≥ 1、length ≥ 2，收到 {t.shape}")
    if t.shape[1] > rows:
        raise ValueError(f"params['position'] 只有 {rows} 行，放不下长度 {t.shape[1]} 的 tokens")
    if t.min() < 0 or t.max() >= vocab:
        raise ValueError(f"tokens 必须在 0 到 {vocab - 1} 之间")
    return t


# -- 自检与演示 --------------------------------------------------------------------------------
def self_test() -> None:
    """快速自检：梯度核对、因果模型不泄漏、整段算与逐词算一致、行号当位置改变结果。"""
    att.check(gradient_check() < 1e-6, "loss_and_grads 应当通过有限差分核对")
    p = init_params(seed=0)

    def use(pos):
        return use_time(p, "causal", seed=1, positions=pos)["mean_loss"]

    leak = [leak_check(p, rule, seed=1) for rule in (*RULES, AHEAD)]
    att.check(leak[0] == 0.0 < min(leak[1:]), "只有因果规则挡得住后面的 token")
    whole = loss_and_grads(p, sequences(EVAL_SEQUENCES, seed=1), "causal")[0]
    att.check(abs(use("absolute") - whole) < 1e-12, "逐词算应与整段算一致")
    att.check(use("row_index") != use("absolute"), "行号当位置应当出错")


def run_demo() -> dict:
    """两种规则各训练一次，比较训练时与使用时的损失和准确率（运行本文件时以 JSON 打印）。"""
    params_of = {}
    out = {
        "性质": "人工构造的任务，构建时训练的小模型",
        "词表大小": VOCAB,
        "因果规则的损失下限": loss_floor(),
        "瞎猜的准确率": 1 / VOCAB,
    }
    for rule in RULES:
        params = train(rule, seed=0)["params"]
        params_of[rule] = params
        use = use_time(params, rule, seed=1)
        eval_tokens = sequences(EVAL_SEQUENCES, seed=1)
        out[rule] = {
            "整段算的损失": loss_and_grads(params, eval_tokens, rule)[0],
            "逐词算的损失": use["mean_loss"],
            "逐词算的准确率": use["mean_accuracy"],
        }
        out[rule]["损失比瞎猜还高"] = use["mean_loss"] > math.log(VOCAB)
    row = use_time(params_of["causal"], "causal", seed=1, positions="row_index")  # 只许读 Key 0
    out["causal"]["用行号当位置的损失"] = row["mean_loss"]
    return out


if __name__ == "__main__":
    self_test()
    att.print_json(run_demo())
