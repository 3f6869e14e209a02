"""The training page (真的训练一次): its facts, tables, sentences and figures, from code/02_training.py.

The page trains once (:func:`run`) and hands the runs to each ``*_values`` function, which returns the
names the page glues for one section. Prose that does not depend on the data is in the page; the
sentences here compare what the numbers say (lower, higher, equal), so they stay true on another seed.

>>> positions([0, 2, 3])
'0、2、3'
"""

from __future__ import annotations

import importlib
import math

from chapter import fmt
from chapter.costs import figure_fonts
from chapter.fmt import Md, glue_all  # noqa: F401  (the page glues through this module)

tr = importlib.import_module("02_training")
ex = importlib.import_module("02_exercises_training")

TRAIN_SEED, EVAL_SEED, SHOW_SEED = 0, 1, 0  # init and batches; use-time sequences; the map's sequence
# (the map's sequence has lag distinct first tokens: a target there has no earlier copy)
LAST = 20  # the training loss is the mean of the last LAST steps (one step's batch is noisy)
CHECKPOINTS = (10, 25, 50, 100, 150)  # steps at which the chart also shows the use-time loss
RULE_NAMES = {"causal": "因果规则", "none": "不加规则", tr.AHEAD: "多看一个 Key（j ≤ i + 1）"}
EXACT = 1e-12  # two losses this close are the same computation in another order
SMALL = 0.1  # a per-position loss at most this is a target the model gets right
LN_V = math.log(tr.VOCAB)
GUESS = 1 / tr.VOCAB  # top-1 accuracy of guessing


def value(x: float) -> str:
    """A loss: four decimals, or scientific notation when four decimals would write a nonzero as 0.

    >>> value(1.3), value(2.9371e-05), value(0.0)
    ('1.3000', '2.9 × 10⁻⁵', '0.0000')
    """
    return fmt.sci(x) if 0.0 < abs(x) < 5e-5 else fmt.fmt(x)


def positions(ts) -> str:
    return "、".join(fmt.count(int(t)) for t in ts)


def mean(xs) -> float:
    return sum(xs := list(xs)) / len(xs)


def run(seed: int = TRAIN_SEED) -> dict:
    """Both models from the same initial parameters on the same batches: ``{rule: train(...)}``,
    each keeping its parameters at CHECKPOINTS."""
    return {rule: tr.train(rule, seed=seed, keep=CHECKPOINTS) for rule in tr.RULES}


def summary(runs: dict, eval_seed: int = EVAL_SEED) -> dict:
    """Per rule: the training loss (mean of the last steps), the loss computed whole, and at use time
    the mean loss and top-1 accuracy with their per-position lists."""
    tokens, out = tr.sequences(tr.EVAL_SEQUENCES, seed=eval_seed), {}
    for rule, r in runs.items():
        u = tr.use_time(r["params"], rule, seed=eval_seed)
        out[rule] = {"train": mean(r["train_loss"][-LAST:]), "use": u["mean_loss"],
                     "full": tr.loss_and_grads(r["params"], tokens, rule)[0],
                     "accuracy": u["mean_accuracy"], "losses": u["loss"], "accuracies": u["accuracy"]}
    return out


def checkpoints(runs: dict, eval_seed: int = EVAL_SEED) -> dict:
    """Per rule, ``{step: use-time mean loss}`` at the kept steps and the last step."""
    out = {}
    for rule, r in runs.items():
        params = {**r["kept"], len(r["train_loss"]): r["params"]}
        out[rule] = {k: tr.use_time(p, rule, seed=eval_seed)["mean_loss"] for k, p in params.items()}
    return out


# -- sentences: the wording the data decides, kept together ----------------------------------------
def loss_sentence(s: dict) -> str:
    """What the loss table says: which model trains lower, each in use against guessing; then the accuracy.

    >>> s = {"causal": {"train": 1.3, "full": 1.31, "use": 1.31, "accuracy": 0.6},
    ...      "none": {"train": 0.001, "full": 0.0, "use": 9.0, "accuracy": 0.5}}
    >>> loss_sentence(s)
    '不加规则的模型训练损失降到 0.0010，远低于因果规则的 1.3000；可是逐词算时它的损失是 9.0000，比瞎猜的 2.0794 还高。它逐词算的准确率是 50.00%，高于瞎猜的 12.50%，但低于因果规则的 60.00%。因果规则的模型两种算法的损失相同。'
    """
    c, n = s["causal"], s["none"]
    text = f"不加规则的模型训练损失降到 {value(n['train'])}，"
    text += ("远低于" if n["train"] < c["train"] / 2 else "低于" if n["train"] < c["train"] else "并不低于")
    text += f"因果规则的 {value(c['train'])}；可是逐词算时它的损失是 {value(n['use'])}，"
    if n["use"] > LN_V:
        text += f"比瞎猜的 {fmt.fmt(LN_V)} 还高。"
    else:
        text += f"不及瞎猜的 {fmt.fmt(LN_V)}，{'高于' if n['use'] > c['use'] else '不高于'}因果规则的模型。"
    above, below = n["accuracy"] > GUESS, n["accuracy"] < c["accuracy"]
    text += (f"它逐词算的准确率是 {fmt.percent(n['accuracy'])}，{'高于' if above else '不高于'}瞎猜的 "
             f"{fmt.percent(GUESS)}，{'但' if above and below else ''}{'低于' if below else '不低于'}因果规则的 "
             f"{fmt.percent(c['accuracy'])}。")
    gap = abs(c["use"] - c["full"])
    return text + f"因果规则的模型两种算法的损失{'相同' if gap < EXACT else '相差 ' + fmt.difference(gap)}。"


def curve_sentence(runs: dict, turns: dict, floor: float) -> str:
    """What the chart shows: the last steps' training loss against the floor, and the step from which
    the unmasked model's use-time loss is above guessing.

    >>> runs = {"causal": {"train_loss": [2.0, 1.3, 1.3]}, "none": {"train_loss": [2.0, 0.1, 0.0]}}
    >>> curve_sentence(runs, {"none": {1: 1.5, 2: 3.0, 3: 4.0}}, 0.9)
    '最后 3 步里，不加规则的模型的训练损失平均是 0.7000，低于因果规则的下限 0.9000（因果规则的模型是 1.5333）；它逐词算的损失却从第 2 步起高于瞎猜的 2.0794，到第 3 步是 4.0000。'
    """
    k = len(runs["none"]["train_loss"][-LAST:])
    none, causal = (mean(runs[r]["train_loss"][-LAST:]) for r in ("none", "causal"))
    text = (f"最后 {fmt.count(k)} 步里，不加规则的模型的训练损失平均是 {value(none)}，"
            f"{'低于' if none < floor else '不低于'}因果规则的下限 {fmt.fmt(floor)}"
            f"（因果规则的模型是 {value(causal)}）；")
    use = turns["none"]
    above = [step for step in sorted(use) if all(use[k] > LN_V for k in use if k >= step)]
    last = max(use)
    if above:
        return text + (f"它逐词算的损失却从第 {fmt.count(above[0])} 步起高于瞎猜的 {fmt.fmt(LN_V)}，"
                       f"到第 {fmt.count(last)} 步是 {fmt.fmt(use[last])}。")
    return text + f"它逐词算的损失到第 {fmt.count(last)} 步是 {fmt.fmt(use[last])}，不高于瞎猜的 {fmt.fmt(LN_V)}。"


def lag_weight(weights, lag: int) -> float:
    """The mean weight that queries ``lag − 1 … n − 2`` (whose target repeats a token) give the key
    ``lag − 1`` positions back, where that token is."""
    return mean(weights[t][t + 1 - lag] for t in range(lag - 1, len(weights) - 1))


def target_weight(weights, tokens) -> float:
    """The mean weight that queries ``0 … n − 2`` give the keys holding their target token."""
    n = len(weights)
    return mean(sum(w for j, w in enumerate(weights[t]) if tokens[j] == tokens[t + 1]) for t in range(n - 1))


def copies_clause(tokens, lag: int) -> str:
    """How many keys hold each query's target on ``tokens``: the task repeats every token once, ``lag`` apart.

    >>> copies_clause([1, 2, 1, 2], 2), copies_clause([1, 0, 1], 2)
    ('（按任务的构造，每个目标 token 都存在两个 Key 上：紧挨着的下一个，和与它相隔 2 个位置的另一个）', '')
    """
    n = len(tokens)
    copies = {sum(tokens[j] == tokens[t + 1] for j in range(n)) for t in range(n - 1)}
    if copies != {2}:
        return ""
    return (f"（按任务的构造，每个目标 token 都存在两个 Key 上：紧挨着的下一个，"
            f"和与它相隔 {fmt.count(lag)} 个位置的另一个）")


def attention_sentence(causal_map, none_map, lag: int, tokens) -> str:
    """Where each model looks on the shown sequence.

    >>> c = [[1, 0, 0], [1, 0, 0], [0.1, 0.9, 0]]
    >>> n = [[0, 1, 0], [0, 0, 1], [0, 0.5, 0.5]]
    >>> attention_sentence(c, n, 2, [1, 0, 1])
    '因果规则的模型，查询 1 到 1 平均把 1.0000 的权重放在 1 个位置之前的 Key 上，目标 token 正在那里。不加规则的模型，查询 0 到 1 平均把 1.0000 的权重放在存着目标 token 的 Key 上，其中 1.0000 在自己后面（使用时那些 Key 还不存在），紧挨着的下一个 Key 占 1.0000；前 1 个查询的答案只在后面，它们放在后面的是 1.0000。'
    """
    n = len(causal_map)
    future = ex.future_weight(none_map)[: n - 1]  # the last query has no target
    ahead, behind = mean(none_map[t][t + 1] for t in range(n - 1)), mean(future)
    text = (f"因果规则的模型，查询 {fmt.count(lag - 1)} 到 {fmt.count(n - 2)} 平均把 "
            f"{fmt.fmt(lag_weight(causal_map, lag))} 的权重放在 {fmt.count(lag - 1)} 个位置之前的 Key 上，"
            f"目标 token 正在那里。不加规则的模型，查询 0 到 {fmt.count(n - 2)} 平均把 "
            f"{fmt.fmt(target_weight(none_map, tokens))} 的权重放在存着目标 token 的 Key 上"
            f"{copies_clause(tokens, lag)}，其中 "
            f"{fmt.fmt(behind)} 在自己后面（使用时那些 Key 还不存在），紧挨着的下一个 Key "
            f"{'只' if ahead < behind else ''}占 {fmt.fmt(ahead)}")
    if lag > 1:
        text += (f"；前 {fmt.count(lag - 1)} 个查询的答案只在后面，它们放在后面的是 "
                 f"{fmt.fmt(mean(future[: lag - 1]))}")
    return text + "。"


def row_index_sentence(right: float, wrong: float) -> str:
    """The causal model's use-time loss with the right positions and with the row index.

    >>> row_index_sentence(1.3, 2.5), row_index_sentence(1.3, 1.3)
    ('损失从 1.3000 升到 2.5000，比瞎猜的 2.0794 还高', '损失仍是 1.3000，没有变')
    """
    if abs(wrong - right) < EXACT:
        return f"损失仍是 {fmt.fmt(right)}，没有变"
    text = f"损失从 {fmt.fmt(right)} {'升到' if wrong > right else '降到'} {fmt.fmt(wrong)}"
    return text + (f"，比瞎猜的 {fmt.fmt(LN_V)} 还高" if wrong > LN_V else "")


def repeated_rows(losses: list[float], lag: int) -> list[int]:
    """The positions ``t ≥ lag`` whose loss is exactly that of position ``t − lag``."""
    return [t for t in range(lag, len(losses)) if abs(losses[t] - losses[t - lag]) < EXACT]


def row_repeat_sentence(right: list[float], wrong: list[float], lag: int) -> str:
    """Which rows of the row-index losses repeat earlier rows, and row ``lag − 1`` (target = token 0).

    >>> row_repeat_sentence([2.9, 2.4, 0.4, 0.4, 0.4], [2.9, 2.8, 0.3, 2.9, 2.8], 3)
    '位置 3、4 的目标与位置 0、1 的相同，损失也一模一样。位置 2 的目标正是位置 0 的 token，这一行碰巧答对：损失 0.3000，正确的写法是 0.4000。'
    """
    rows = repeated_rows(wrong, lag)
    text = (f"位置 {positions(rows)} 的目标与位置 {positions(t - lag for t in rows)} 的相同，损失也一模一样。"
            if rows else "没有哪一行的损失与前面的行相同。")
    if lag - 1 < len(wrong):
        t = lag - 1
        how = "这一行碰巧答对" if wrong[t] < LN_V / 2 else "这一行的损失"
        text += (f"位置 {fmt.count(t)} 的目标正是位置 0 的 token，{how}：损失 {fmt.fmt(wrong[t])}，"
                 f"正确的写法是 {fmt.fmt(right[t])}。")
    return text


def none_use_sentence(losses: list[float], accuracies: list[float], lag: int) -> str:
    """Where a leaking model's use-time loss comes from (the unmasked one's, exercise 5's): the first
    ``lag − 1`` positions (their answer is only ahead) and the others above ``SMALL``, with their accuracy.

    >>> none_use_sentence([20.0, 18.0, 0.0, 0.01, 2.5], [0.1, 0.2, 1.0, 1.0, 0.5], 3)
    '前 2 个位置的答案只在后面，损失是 20.0000、18.0000，都比瞎猜的 2.0794 高得多；平均损失 8.1020 里，它们就占了 7.6000。其余位置里损失超过 0.1000 的只有位置 4（损失 2.5000，准确率 50.00%），别的最多 0.0100。这些位置的答案在前面也有一份，逐词算时它只能读前面那一份，并不总能答对。'
    """
    first, rest = losses[: lag - 1], list(enumerate(losses))[lag - 1 :]
    text = ""
    if first:
        cmp = (f"都比瞎猜的 {fmt.fmt(LN_V)} 高得多" if all(x > 2 * LN_V for x in first)
               else f"平均 {fmt.fmt(mean(first))}")
        text += (f"前 {fmt.count(len(first))} 个位置的答案只在后面，损失是 {'、'.join(fmt.fmt(x) for x in first)}，"
                 f"{cmp}；平均损失 {fmt.fmt(mean(losses))} 里，它们就占了 {fmt.fmt(sum(first) / len(losses))}。")
    high = [(t, x) for t, x in rest if x > SMALL]
    low = [x for _, x in rest if x <= SMALL]
    if not high:
        return text + f"其余位置的损失都不超过 {fmt.fmt(SMALL)}。"
    text += f"其余位置里损失超过 {fmt.fmt(SMALL)} 的{'只有' if low else '是'}" + "、".join(
        f"位置 {fmt.count(t)}（损失 {fmt.fmt(x)}，准确率 {fmt.percent(accuracies[t])}）" for t, x in high)
    text += f"，别的最多 {fmt.fmt(max(low))}。" if low else "。"
    how = "并不总能答对" if min(accuracies[t] for t, _ in high) < 1.0 else "答对了，却不够有把握"
    return text + f"这些位置的答案在前面也有一份，逐词算时它只能读前面那一份，{how}。"


def floor_sentence(losses: list[float], lag: int) -> str:
    """The causal model's per-position losses against guessing, split where the answer appears, and
    how much each part adds to the mean above the floor.

    >>> floor_sentence([2.5, 0.3, 0.4], 2)
    '前 1 个目标无从预测，模型在那里的平均损失是 2.5000，比瞎猜的 2.0794 还高；其余 2 个目标的平均损失是 0.3500。平均损失比下限多出 0.3735，其中前 1 个位置占 0.1402，其余位置占 0.2333。'
    """
    first, rest = losses[: lag - 1], losses[lag - 1 :]
    text = ""
    if first:
        a = mean(first)
        cmp = (f"与瞎猜的 {fmt.fmt(LN_V)} 相同" if abs(a - LN_V) < 5e-5
               else f"比瞎猜的 {fmt.fmt(LN_V)} " + ("还高" if a > LN_V else "低"))
        text = f"前 {fmt.count(len(first))} 个目标无从预测，模型在那里的平均损失是 {fmt.fmt(a)}，{cmp}；"
    text += f"其余 {fmt.count(len(rest))} 个目标的平均损失是 {fmt.fmt(mean(rest))}。"
    if not first:
        return text
    # the floor is ln |V| for each of the first targets and 0 for the rest: each part's excess
    over_first, over_rest = sum(x - LN_V for x in first) / len(losses), sum(rest) / len(losses)
    return text + (f"平均损失比下限多出 {fmt.fmt(over_first + over_rest)}，其中前 {fmt.count(len(first))} 个位置占 "
                   f"{fmt.fmt(over_first)}，其余位置占 {fmt.fmt(over_rest)}。")


def compare(a: float, b: float) -> str:
    """``a`` against ``b`` as the page prints them (four decimals).

    >>> compare(7.45, 8.57), compare(8.57, 7.45), compare(1.00001, 1.0)
    ('低于', '高于', '等于')
    """
    return "等于" if fmt.fmt(a) == fmt.fmt(b) else "高于" if a > b else "低于"


def closed_form(logits, target: int) -> str:
    """Exercise 2's cross entropy in closed form, ``ln(Σ e^z) − z[target]``, for whole-number logits.

    >>> closed_form([3.0, 0.0, 0.0, 0.0], 0), closed_form([3.0, 0.0, 0.0, 0.0], 1), closed_form([1.0, 2.0], 0)
    ('ln(e³ + 3) − 3', 'ln(e³ + 3)', 'ln(e¹ + e²) − 1')
    """
    zs = [int(z) for z in logits]
    if zs != list(logits):
        raise ValueError(f"logits 必须都是整数，收到 {logits!r}")
    terms = [f"e{str(z).translate(fmt._SUPERSCRIPT)}" for z in zs if z != 0] + [fmt.count(zs.count(0))] * (0 in zs)
    text, z = f"ln({' + '.join(terms)})", zs[target]
    return text if z == 0 else text + (f" − {fmt.count(z)}" if z > 0 else f" + {fmt.count(-z)}")


# -- figures ---------------------------------------------------------------------------------------
def _fonts(ax, fonts) -> None:
    for label in (*ax.get_xticklabels(), *ax.get_yticklabels()):
        label.set_fontfamily(fonts["family"])


def curves_figure(runs: dict, turns: dict, floor: float):
    """Both training curves (loss per step) and both use-time losses at the checkpoints, with
    guessing (ln |V|) and the causal floor as horizontal lines."""
    from matplotlib.figure import Figure  # a Figure, not pyplot: no global list of figures to close

    fonts, fig = {"family": figure_fonts()}, Figure(figsize=(6.0, 3.6))
    ax = fig.subplots()
    colours = {"causal": "#1f5fa8", "none": "#c0392b"}
    for rule, r in runs.items():
        ax.plot(range(1, len(r["train_loss"]) + 1), r["train_loss"], "-", color=colours[rule], lw=1.2,
                label=f"{RULE_NAMES[rule]}：训练损失")
    for rule, use in turns.items():
        steps = sorted(use)
        ax.plot(steps, [use[k] for k in steps], "o--", color=colours[rule], lw=1.0, ms=4,
                label=f"{RULE_NAMES[rule]}：逐词算的损失")
    ax.axhline(LN_V, ls="--", color="#555555", lw=1, label=f"瞎猜：ln {fmt.count(tr.VOCAB)} = {fmt.fmt(LN_V)}")
    ax.axhline(floor, ls=":", color="#1f5fa8", lw=1.2, label=f"因果规则的下限 {fmt.fmt(floor)}")
    ax.set_xlabel("训练步数", fontdict=fonts)
    ax.set_ylabel("交叉熵损失", fontdict=fonts)
    ax.set_ylim(bottom=0)
    _fonts(ax, fonts)
    ax.legend(loc="center right", prop={**fonts, "size": 7})
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def maps_figure(causal_map, none_map, tokens):
    """The two attention maps on one sequence side by side (rows: queries, columns: keys)."""
    from matplotlib.figure import Figure

    fonts = {"family": figure_fonts()}
    fig = Figure(figsize=(6.4, 3.2))  # no constrained layout: it draws the figure several times
    grid = {"wspace": 0.08, "left": 0.08, "right": 0.98, "bottom": 0.2}
    axes = fig.subplots(1, 2, sharey=True, gridspec_kw=grid)
    n = len(tokens)
    ticks = [f"{fmt.count(t)}\n({fmt.count(int(x))})" for t, x in enumerate(tokens)]
    for ax, (rule, weights) in zip(axes, (("causal", causal_map), ("none", none_map))):
        image = ax.imshow(weights, cmap="Blues", vmin=0.0, vmax=1.0)
        ax.set_title(RULE_NAMES[rule], fontdict={**fonts, "fontsize": 10})
        ax.set_xticks(range(n), ticks, fontsize=7)
        ax.set_yticks(range(n), [fmt.count(t) for t in range(n)], fontsize=7)
        ax.set_xlabel("Key 位置（token）", fontdict={**fonts, "fontsize": 9})
        _fonts(ax, fonts)
    axes[0].set_ylabel("查询位置", fontdict={**fonts, "fontsize": 9})
    bar = fig.colorbar(image, ax=list(axes), shrink=0.85)
    bar.set_label("注意力权重", fontdict={**fonts, "fontsize": 9})
    return fig


# -- the page's sections, one function each ------------------------------------------------------------
def task_values(seed: int = SHOW_SEED) -> dict:
    """The task: its sizes, one sequence, and where each target's answer is under the causal rule."""
    tokens = tr.sequences(1, seed=seed)[0].tolist()
    n, lag = tr.LENGTH, tr.LAG
    where = [f"Key {fmt.count(t + 1 - lag)}" if t + 1 >= lag else "无从得知" for t in range(n - 1)] + ["—"]
    rows = [["token"] + [fmt.count(x) for x in tokens],
            ["目标（下一个 token）"] + [fmt.count(x) for x in tokens[1:]] + ["—"], ["因果规则下答案所在"] + where]
    return {
        "task_vocab": fmt.count(tr.VOCAB), "task_length": fmt.count(n), "task_lag": fmt.count(lag),
        "task_lag_minus": fmt.count(lag - 1), "task_seed": fmt.count(seed), "task_last": fmt.count(n - 1),
        "task_once": "（本例 T = 2·lag，所以恰好重复一轮）" if n == 2 * lag else "",
        "tbl_task": Md(fmt.md_table(["位置 t"] + [fmt.count(t) for t in range(n)], rows)),
        "task_unpredictable": positions(range(lag - 1)),
    }


def settings_values() -> dict:
    return {
        "set_d": fmt.count(tr.D_MODEL), "set_batch": fmt.count(tr.BATCH), "set_steps": fmt.count(tr.STEPS),
        "set_lr": fmt.short(tr.LEARNING_RATE), "set_beta1": fmt.short(tr.BETA1),
        "set_beta2": fmt.short(tr.BETA2), "set_adam_eps": fmt.power(tr.ADAM_EPS),
        "set_train_seed": fmt.count(TRAIN_SEED), "set_eval_seed": fmt.count(EVAL_SEED),
        "set_eval_n": fmt.count(tr.EVAL_SEQUENCES), "set_vocab": fmt.count(tr.VOCAB),
        "set_checkpoints": positions(CHECKPOINTS), "ln_v": fmt.fmt(LN_V), "guess_acc": fmt.percent(GUESS),
    }


def loss_header() -> list[str]:
    return ["模型", f"训练损失（最后 {fmt.count(LAST)} 步的平均）", "新序列，整段一次算（训练时的算法）",
            "新序列，逐词算（使用时的算法）", "逐词算的准确率"]


def loss_rows(s: dict) -> list[list[str]]:
    """One row per rule of a summary: training loss, the loss computed whole and in use, accuracy."""
    return [[RULE_NAMES[rule], value(v["train"]), value(v["full"]), value(v["use"]), fmt.percent(v["accuracy"])]
            for rule, v in s.items()]


def loss_values(runs: dict, eval_seed: int = EVAL_SEED) -> dict:
    """The chart, the loss table (train, whole, in use, accuracy) and the sentences that read them."""
    s, floor, turns = summary(runs, eval_seed), tr.loss_floor(), checkpoints(runs, eval_seed=eval_seed)
    rows = [*loss_rows(s), ["瞎猜（每个 token 的概率相同）", fmt.fmt(LN_V), fmt.fmt(LN_V), fmt.fmt(LN_V),
                              fmt.percent(GUESS)]]
    return {
        "fig_curves": curves_figure(runs, turns, floor), "floor": fmt.fmt(floor),
        "tbl_losses": Md(fmt.md_table(loss_header(), rows)), "loss_sentence": Md(loss_sentence(s)),
        "curve_sentence": Md(curve_sentence(runs, turns, floor)),
        "none_train": value(s["none"]["train"]),
    }


def generation_values(runs: dict, eval_seed: int = EVAL_SEED, index: int = 0) -> dict:
    """Greedy generation with the cache: the first lag tokens of a new sequence as the prompt, each
    model continuing with its own most likely token; each generated token against the truth, ✓ or ✗."""
    tokens, lag = tr.sequences(tr.EVAL_SEQUENCES, seed=eval_seed)[index].tolist(), tr.LAG
    made = {r: tr.use_time(runs[r]["params"], r, seed=eval_seed, prompt=lag)["predicted"][index][lag - 1 :]
            for r in tr.RULES}
    truth = tokens[lag:]
    rows = [["真实的续写", *map(fmt.count, truth)],
            *([RULE_NAMES[r], *(f"{fmt.count(g)} {'✓' if g == t else '✗'}" for g, t in zip(made[r], truth))]
              for r in tr.RULES)]
    return {"tbl_generation": Md(fmt.md_table(["位置", *map(fmt.count, range(lag, tr.LENGTH))], rows)),
            "gen_prompt": positions(tokens[:lag]), "gen_index": fmt.count(index), "gen_new": fmt.count(len(truth)),
            **{f"gen_hits_{r}": fmt.count(sum(g == t for g, t in zip(made[r], truth))) for r in tr.RULES}}


def map_values(runs: dict, seed: int = SHOW_SEED) -> dict:
    tokens = tr.sequences(1, seed=seed)[0].tolist()
    maps = {rule: tr.attention_map(r["params"], rule, tokens) for rule, r in runs.items()}
    return {"fig_maps": maps_figure(maps["causal"], maps["none"], tokens),
            "map_sentence": Md(attention_sentence(maps["causal"], maps["none"], tr.LAG, tokens)),
            "map_back": fmt.fmt(maps["causal"][tr.LAG - 1][0]), "map_query": fmt.count(tr.LAG - 1)}


def row_index_values(runs: dict, eval_seed: int = EVAL_SEED) -> dict:
    """The causal model generating with the row index: the step-by-step table and the cost."""
    params = runs["causal"]["params"]
    right = tr.use_time(params, "causal", seed=eval_seed)["loss"]
    wrong = tr.use_time(params, "causal", seed=eval_seed, positions="row_index")["loss"]
    keys = lambda t, how: positions(j for j, ok in enumerate(tr.cache_step(t, "causal", how)[1]) if ok)  # noqa: E731
    rows = [[fmt.count(t), keys(t, "absolute"), keys(t, "row_index"), fmt.fmt(a), fmt.fmt(b)]
            for t, (a, b) in enumerate(zip(right, wrong))]
    header = ["新 token 的位置", "能读的 Key：正确", "能读的 Key：用行号", "损失：正确", "损失：用行号"]
    return {"tbl_row_index": Md(fmt.md_table(header, rows)),
            "row_sentence": Md(row_index_sentence(mean(right), mean(wrong))),
            "row_repeat": Md(row_repeat_sentence(right, wrong, tr.LAG))}


def floor_values(runs: dict, eval_seed: int = EVAL_SEED) -> dict:
    """Where the causal floor comes from: both models' per-position use-time loss and accuracy."""
    s, lag = summary(runs, eval_seed), tr.LAG
    c, n = s["causal"], s["none"]
    rows = [[fmt.count(t), "无从得知" if t + 1 < lag else f"Key {fmt.count(t + 1 - lag)}",
             fmt.fmt(LN_V) if t + 1 < lag else "0", value(c["losses"][t]), fmt.percent(c["accuracies"][t]),
             value(n["losses"][t]), fmt.percent(n["accuracies"][t])] for t in range(tr.LENGTH - 1)]
    header = ["查询位置 t", "答案所在", "下限", "因果规则：损失", "因果规则：准确率", "不加规则：损失",
              "不加规则：准确率"]
    return {"tbl_floor": Md(fmt.md_table(header, rows)), "floor_sentence": Md(floor_sentence(c["losses"], lag)),
            "none_sentence": Md(none_use_sentence(n["losses"], n["accuracies"], lag)),
            "floor_targets": fmt.count(tr.LENGTH - 1), "floor_model": fmt.fmt(c["use"])}


def check_values(runs: dict, eval_seed: int = EVAL_SEED) -> dict:
    """The leak check of both models and the finite-difference check of the backward."""
    leak = {rule: tr.leak_check(r["params"], rule, seed=eval_seed) for rule, r in runs.items()}
    return {"leak_causal": "0" if leak["causal"] == 0.0 else value(leak["causal"]),  # exactly 0 is 0
            "leak_none": fmt.fmt(leak["none"]),
            "fd_error": fmt.difference(tr.gradient_check()), "fd_tol": fmt.power(1e-6)}


def run_values() -> dict:
    return {"run_output": fmt.run_output("02_training.py")}


# -- the exercises ---------------------------------------------------------------------------------
def ahead_values(runs: dict, seed: int = TRAIN_SEED, eval_seed: int = EVAL_SEED) -> dict:
    """Exercise 5: the off-by-one rule (key i + 1 visible), trained from ``seed`` like the page's two
    models ``runs``; its losses in a table beside theirs, and where its use-time loss comes from."""
    a, s = ex.ahead_answers(seed=seed, eval_seed=eval_seed, tail=LAST), summary(runs, eval_seed)
    ahead = {"train": a["train_loss"], "full": a["whole_loss"], "use": a["use_loss"], "accuracy": a["use_accuracy"]}
    return {"x5_table": Md(fmt.md_table(loss_header(), loss_rows({"causal": s["causal"], tr.AHEAD: ahead,
                                                                   "none": s["none"]}))),
            "x5_train": value(a["train_loss"]), "x5_use": fmt.fmt(a["use_loss"]), "x5_leak": fmt.fmt(a["leak"]),
            "x5_vs_none": compare(a["use_loss"], s["none"]["use"]), "x5_none_use": fmt.fmt(s["none"]["use"]),
            "x5_positions": Md(none_use_sentence(a["losses"], a["accuracies"], tr.LAG))}



def exercise_values() -> dict:
    values, cases = {}, ex.floor_answers()
    rows = [[fmt.count(c["vocab"]), fmt.count(c["length"]), fmt.count(c["lag"]), fmt.count(c["targets"]),
             positions(c["unpredictable"]) or "没有", fmt.count(len(c["unpredictable"])),
             f"{fmt.count(len(c['unpredictable']))}/{fmt.count(c['targets'])} × {fmt.fmt(c['ln_vocab'])} = "
             + ("0" if c["floor"] == 0.0 else fmt.fmt(c["floor"]))] for c in cases]  # an exact 0 is 0
    values |= {
        "x1_cases": "；".join(f"词表大小 {fmt.count(v)}、T = {fmt.count(t)}、lag = {fmt.count(g)}"
                             for v, t, g in ex.FLOOR_CASES),
        "x1_table": Md(fmt.md_table(["词表大小", "T", "lag", "目标数", "无从预测的目标", "个数", "下限"], rows)),
        "x1_note": Md("".join(f"lag = {fmt.count(c['lag'])} 时，每个 token 都重复它前面的那一个，"
                              "没有无从预测的目标，下限是 0。" for c in cases if not c["unpredictable"])),
    }
    g = ex.guess_answers()
    values |= {
        "x2_logits": fmt.vector(ex.GUESS_LOGITS), "x2_vocab": fmt.count(len(ex.GUESS_LOGITS)),
        "x2_targets": "、".join(fmt.count(t) for t in ex.GUESS_TARGETS), "x2_p": fmt.vector(g["p"], cell=fmt.fmt),
        "x2_losses": Md("\n".join(f"- 目标 token {fmt.count(t)}：{closed_form(ex.GUESS_LOGITS, t)} = {fmt.fmt(x)}"
                                  for t, x in zip(ex.GUESS_TARGETS, g["losses"]))),
        "x2_top": fmt.count(max(range(len(g["p"])), key=g["p"].__getitem__)),
        "x2_ln": fmt.fmt(g["ln_vocab"]), "x2_uniform": fmt.fmt(g["uniform"]),
        **{f"x2_t{k}": fmt.count(t) for k, t in enumerate(ex.GUESS_TARGETS)},
        **{f"x2_loss{k}": fmt.fmt(x) for k, x in enumerate(g["losses"])},
    }
    c = ex.cache_answers()
    keys = lambda row: positions(j for j, ok in enumerate(row) if ok)  # noqa: E731
    values |= {
        "x3_past": fmt.count(ex.CACHE_PAST), "x3_lag": fmt.count(tr.LAG),
        "x3_table": Md(fmt.md_table(["写法", "位置嵌入的行", "能读的 Key"], [
            ["位置 = past + 行号", fmt.count(c["absolute"][0]), keys(c["absolute"][1])],
            ["位置 = 行号", fmt.count(c["row_index"][0]), keys(c["row_index"][1])]])),
        "x3_keys": keys(c["row_index"][1]),
    }
    fw = ex.future_weight(ex.LEAK_WEIGHTS)
    values |= {
        "x4_weights": fmt.vectors(ex.LEAK_WEIGHTS),
        "x4_future": Md(fmt.md_table(["查询", "它之后的 Key 上的权重之和"],
                                     [[f"查询 {fmt.count(i)}", fmt.short(x)] for i, x in enumerate(fw)])),
        "x4_leaking": positions(i for i, x in enumerate(fw) if x > 0) or "没有",
        "x4_doctest": Md(fmt.doctest_block(ex.future_weight)),
    }
    return values
