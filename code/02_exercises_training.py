"""第2章“真的训练一次”一页的练习：题目的输入与答案，全部由教学代码算出。

题目里的数来自这里的常量，答案来自 ``02_training.py`` 与 ``02_attention.py``（放在同一目录，需要
numpy）。每道题的数据都是人工构造的小例子。运行：先核对答案，再以 JSON 打印每道题的答案。
"""

from __future__ import annotations

import importlib
import math

att = importlib.import_module("02_attention")
tr = importlib.import_module("02_training")

# 练习 2.7.1：两种任务大小下的损失下限（词表大小、序列长度、重复的间隔）。
FLOOR_CASES = [(16, 10, 3), (16, 10, 1)]
# 练习 2.7.2：词表大小 4，一个位置的 logits；分别以 token 0（最看好的）和 token 1 为目标。
GUESS_LOGITS = [3.0, 0.0, 0.0, 0.0]
GUESS_TARGETS = [0, 1]
# 练习 2.7.3：因果规则的模型逐词算、用行号当位置，新 token 之前已有 past 个位置（都在缓存里）。
CACHE_PAST = 5
# 练习 2.7.4：不加规则时一条 3 个位置的序列上的注意力权重（人工构造，每行之和为 1）。
LEAK_WEIGHTS = [[0.5, 0.25, 0.25], [0.0, 0.5, 0.5], [0.25, 0.25, 0.5]]
# 练习 2.7.5：训练时多看一个 Key（规则 "ahead"），与正文的两个模型同一个种子、同样的步数；
# 逐词算用正文那些另抽的序列。训练损失取最后 TAIL 步的平均（一步只有一批序列，噪声大）。
AHEAD_SEED = 0
AHEAD_EVAL_SEED = 1
TAIL = 20


# -- 练习 2.7.1 ----------------------------------------------------------------------------------
def floor_answers(cases=FLOOR_CASES) -> list[dict]:
    """每种大小下无从预测的目标（位置 t 的目标是 token t + 1）、它们的个数与损失下限。

    >>> [(a["unpredictable"], round(a["floor"], 4)) for a in floor_answers()]
    [([0, 1], 0.6161), ([], 0.0)]
    """
    cases = att.as_list(cases, "cases")
    if not cases:
        raise ValueError("cases 不能为空：至少要给一组 (vocab, length, lag)")
    out = []
    for case in cases:
        if isinstance(case, (str, bytes)) or not hasattr(case, "__len__") or len(case) != 3:
            raise ValueError(f"cases 的每一项必须是 (vocab, length, lag)，收到 {case!r}")
        vocab, length, lag = case
        floor = tr.loss_floor(vocab, length, lag)  # 也校验三个数
        unpredictable = [t for t, ok in enumerate(predictable_targets(length, lag)) if not ok]
        out.append(
            {
                "vocab": vocab,
                "length": length,
                "lag": lag,
                "unpredictable": unpredictable,
                "targets": length - 1,
                "floor": floor,
                "ln_vocab": math.log(vocab),
            }
        )
    return out


# -- 练习 2.7.2 ----------------------------------------------------------------------------------
def guess_answers(logits=GUESS_LOGITS, targets=GUESS_TARGETS) -> dict:
    """softmax 概率、每个目标的交叉熵，以及瞎猜（均匀分布）的 ln |V|。

    >>> a = guess_answers()
    >>> [round(x, 4) for x in a["p"]]
    [0.87, 0.0433, 0.0433, 0.0433]
    >>> [round(x, 4) for x in a["losses"]]
    [0.1392, 3.1392]
    >>> round(a["ln_vocab"], 4)  # 瞎猜
    1.3863
    """
    z = att.as_vector(logits, "logits")
    p = att.softmax(z)
    targets = att.as_list(targets, "targets")
    if not targets:
        raise ValueError("targets 不能为空：至少要给一个目标 token")
    losses = [tr.cross_entropy([z], [t])[0] for t in targets]  # 也校验每个目标
    uniform = tr.cross_entropy([[0.0] * len(z)], [0])[0]
    return {"p": p, "losses": losses, "ln_vocab": math.log(len(z)), "uniform": uniform}


# -- 练习 2.7.3 ----------------------------------------------------------------------------------
def cache_answers(past: int = CACHE_PAST) -> dict:
    """因果规则的模型逐词算一步：新 token 的位置嵌入行与它能读的 Key，正确的与用行号的。

    >>> a = cache_answers()
    >>> a["absolute"][0]  # 位置嵌入的行号：past
    5
    >>> sum(a["absolute"][1])  # 能读的 Key：past + 1 个
    6
    >>> a["row_index"][0]  # 写错：行号 0
    0
    >>> sum(a["row_index"][1])  # 只读得到 Key 0
    1
    """
    return {
        "absolute": tr.cache_step(past, "causal"),
        "row_index": tr.cache_step(past, "causal", "row_index"),
    }


# -- 练习 2.7.4 ----------------------------------------------------------------------------------
def future_weight(weights: list[list[float]]) -> list[float]:
    """每个查询行放在它之后的 Key 上的权重之和：查询 i 的 ``weights[i][i + 1:]`` 之和。

    不为 0 就是泄漏：使用时这些 Key 还不存在。只用 Python 标准库。

    >>> future_weight([[0.5, 0.5], [0.25, 0.75]])
    [0.5, 0.0]
    >>> future_weight([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.25, 0.25, 0.5]])  # 因果规则下的权重
    [0.0, 0.0, 0.0]
    """
    if not isinstance(weights, (list, tuple)) or not weights:
        raise ValueError(f"weights 必须是非空的方阵（嵌套列表），收到 {type(weights).__name__}")
    for i, row in enumerate(weights):
        if not isinstance(row, (list, tuple)) or len(row) != len(weights):
            raise ValueError(f"weights 必须是方阵（第 i 行是查询 i），每行 {len(weights)} 个数")
        for j, x in enumerate(row):
            if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
                raise ValueError(f"weights[{i}][{j}] 必须是有限的数，收到 {x!r}")
    return [sum(row[i + 1 :], 0.0) for i, row in enumerate(weights)]


def predictable_targets(length: int, lag: int) -> list[bool]:
    """位置 t（0 … length − 2）的目标能否由它自己和之前的 token 确定：``t + 1 ≥ lag`` 时能。

    >>> predictable_targets(5, 3)
    [False, False, True, True]
    """
    tr.loss_floor(2, length, lag)  # 校验 length 与 lag
    return [t + 1 >= lag for t in range(length - 1)]


# -- 练习 2.7.5 ----------------------------------------------------------------------------------
def ahead_answers(
    *, seed: int = AHEAD_SEED, eval_seed: int = AHEAD_EVAL_SEED, tail: int = TAIL
) -> dict:
    """按 ``"ahead"`` 规则（查询 i 读得到 Key 0 … i + 1）训练一次：训练损失（最后 ``tail`` 步的
    平均），另抽的序列上整段算与逐词算的损失、逐词算的准确率与每个位置的损失和准确率，泄漏检查，
    以及因果规则的下限和瞎猜的 ln |V|。

    >>> a = ahead_answers()
    >>> a["train_loss"] < a["floor"] < a["ln_vocab"] < a["use_loss"]
    True
    >>> a["leak"] > 0
    True
    """
    tail = att.check_count(tail, "tail", maximum=tr.STEPS, why="训练的步数")
    tokens = tr.sequences(tr.EVAL_SEQUENCES, seed=eval_seed)  # 也校验 eval_seed
    run = tr.train(tr.AHEAD, seed=seed)
    params = run["params"]
    use = tr.use_time(params, tr.AHEAD, seed=eval_seed)  # 逐词算：Key t + 1 还不在缓存里
    return {
        "train_loss": sum(run["train_loss"][-tail:]) / tail,
        "whole_loss": tr.loss_and_grads(params, tokens, tr.AHEAD)[0],
        "use_loss": use["mean_loss"],
        "use_accuracy": use["mean_accuracy"],
        "losses": use["loss"],
        "accuracies": use["accuracy"],
        "leak": tr.leak_check(params, tr.AHEAD, seed=eval_seed),
        "floor": tr.loss_floor(),
        "ln_vocab": math.log(tr.VOCAB),
    }


def answers() -> dict:
    """每道题的答案（运行本文件时以 JSON 打印）。"""
    return {
        "练习 2.7.1": floor_answers(),
        "练习 2.7.2": guess_answers(),
        "练习 2.7.3": cache_answers(),
        "练习 2.7.4": {"weights": LEAK_WEIGHTS, "future_weight": future_weight(LEAK_WEIGHTS)},
        "练习 2.7.5": ahead_answers(),
    }


def self_test() -> None:
    """核对答案：下限与无从预测的目标、交叉熵与瞎猜、逐词算的位置、多看一个 Key 的后果。"""
    a = floor_answers()
    att.check(all(len(c["unpredictable"]) == c["lag"] - 1 for c in a), "无从预测的是前 lag − 1 个")
    g = guess_answers()
    att.check(g["losses"][1] > g["ln_vocab"] > g["losses"][0], "看错的自信预测，损失比瞎猜还高")
    att.check(abs(g["uniform"] - g["ln_vocab"]) < 1e-12, "均匀分布的交叉熵就是 ln |V|")
    c = cache_answers()
    att.check(c["absolute"] == (CACHE_PAST, [True] * (CACHE_PAST + 1)), "正确的位置是 past")
    att.check(c["row_index"][1] == [True] + [False] * CACHE_PAST, "用行号时只读得到 Key 0")
    att.check(future_weight(LEAK_WEIGHTS)[-1] == 0.0, "最后一个查询后面没有 Key")
    a = ahead_answers()
    att.check(
        a["train_loss"] < a["floor"] and a["use_loss"] > a["ln_vocab"],
        "多看一个 Key：训练损失低于下限，逐词算的损失高于瞎猜",
    )


if __name__ == "__main__":
    self_test()
    att.print_json(answers())
