"""The training page (真的训练一次): what it glues, from code/02_training.py.

The page's sentences are fixed prose. A sentence about a training result either states what holds on
other seeds too (tests/test_chapter_training.py trains other seeds and runs every section on them), or says
it is this run's with the words :data:`THIS_RUN`. Each section checks the facts its sentences state with
``fmt.holds(PAGE, …)``, which stops the build naming a claim that is false; the claims in
:data:`THIS_RUN_CLAIMS` are checked on the page's own run only (:func:`is_page_run`). :data:`KEY_CLAIMS`
names, for each glued result, the claims that back the sentences around it.
"""

from __future__ import annotations

import importlib
import math

from chapter import fmt
from chapter.costs import figure_fonts
from chapter.fmt import Table, glue_all  # noqa: F401  (the page glues through this module)

tr = importlib.import_module("02_training")
ex = importlib.import_module("02_exercises_training")

PAGE = "训练一页"  # how fmt.holds names this page when a fixed sentence no longer holds
TRAIN_SEED = 0
EVAL_SEED = 1
SHOW_SEED = 0  # init and batches; the other sequences drawn for use; the map's sequence
LAST = 20  # the training loss is the mean of the last LAST steps (one step's batch is noisy)
CHECKPOINTS = (10, 25, 50, 100, 150)  # steps at which the chart also shows the use-time loss
RULE_NAMES = {"causal": "因果规则", "none": "不加规则", tr.AHEAD: "多看一个 Key（j ≤ i + 1）"}
EXACT = 1e-12  # two losses this close are the same computation in another order
LN_V = math.log(tr.VOCAB)
GUESS = 1 / tr.VOCAB  # top-1 accuracy of guessing

THIS_RUN = "这一次"  # the words of a sentence that states a result of this run only
# Claims the page states as this run's (its sentences say THIS_RUN): on other seeds they may fail.
THIS_RUN_CLAIMS = frozenset(
    {
        "accuracy_below_causal",  # the unmasked model's use-time accuracy below the causal one's
        "x5_first_targets_carry_most",  # the off-by-one model: its first lag − 1 positions carry most
        "none_reads_later_yet_right",  # a query of the map reads the later copy, yet answers in use
    }
)
# For each glued result in a sentence that does not say THIS_RUN: the claims (checked on every seed)
# that back what the sentence says about it.
KEY_CLAIMS = {
    "none_train": ("below_floor", "far_below_floor", "trains_far_lower"),
    "causal_train": ("causal_trains_above_floor", "trains_far_lower"),
    "turn_step": ("turns_above_guessing",),
    "none_use": ("use_above_guessing",),
    "none_acc": ("accuracy_above_guessing",),
    "causal_use": ("causal_same",),
    "row_right": ("loss_rises_above_guessing",),
    "row_wrong": ("loss_rises_above_guessing",),
    "row_hit": ("right_by_chance",),
    "row_hit_right": ("right_by_chance",),
    "leak_none": ("none_leaks",),
    "map_lag": ("causal_reads_lag_back",),
    "map_target": ("none_reads_the_targets",),
    "map_behind": ("next_key_only_part",),
    "map_ahead": ("next_key_only_part",),
    "map_first": ("first_queries_read_ahead",),
    "map_back": ("lag_query_reads_key_0",),
    "floor_model": ("causal_above_floor_in_use",),
    "floor_first": ("first_targets_above_guessing",),
    "floor_rest": ("rest_below_guessing",),
    "floor_over": ("causal_above_floor_in_use",),
    "floor_over_first": ("first_targets_above_guessing",),
    "floor_over_rest": ("causal_above_floor_in_use",),
    "none_first": ("none_first_targets_far_above_guessing",),
    "none_mean": ("none_first_targets_carry_most",),
    "none_share": ("none_first_targets_carry_most",),
    "x5_train": ("ahead_below_floor", "ahead_far_below_causal"),
    "x5_use": ("ahead_use_above_guessing",),
    "x5_first": ("x5_first_targets_far_above_guessing",),
    "x5_leak": ("ahead_leaks",),
}


def is_page_run(runs: dict, eval_seed: int) -> bool:
    """Whether ``runs`` and ``eval_seed`` are the page's own (the runs :func:`run` made with TRAIN_SEED)."""
    return eval_seed == EVAL_SEED and all(r.get("seed") == TRAIN_SEED for r in runs.values())


def value(x: float) -> str:
    """A loss: four decimals, or scientific notation below 10⁻³ (as the book writes small differences), so
    that every small loss in a table is written one way.

    >>> value(1.3)
    '1.3000'
    >>> value(2.9371e-05)
    '2.9 × 10⁻⁵'
    >>> value(7.7e-05)
    '7.7 × 10⁻⁵'
    >>> value(0.0087)
    '0.0087'
    >>> value(0.0)
    '0'
    """
    return fmt.difference(x)


def positions(ts) -> str:
    """Positions (or keys) listed as the prose lists them: 0、2、3."""
    return "、".join(fmt.count(int(t)) for t in ts)


def keys(row) -> str:
    """The keys a visibility row lets its query read."""
    return positions(j for j, ok in enumerate(row) if ok)


def mean(xs) -> float:
    return sum(xs := list(xs)) / len(xs)


def run(seed: int = TRAIN_SEED) -> dict:
    """Both models from the same initial parameters on the same batches, each keeping CHECKPOINTS."""
    return {
        rule: {**tr.train(rule, seed=seed, keep=CHECKPOINTS), "seed": seed} for rule in tr.RULES
    }


def summary(runs: dict, eval_seed: int = EVAL_SEED) -> dict:
    """Per rule: the training loss (last LAST steps), the whole loss, and the use-time loss and accuracy."""
    tokens = tr.sequences(tr.EVAL_SEQUENCES, seed=eval_seed)
    out = {}
    for rule, r in runs.items():
        u = tr.use_time(r["params"], rule, seed=eval_seed)
        out[rule] = {
            "train": mean(r["train_loss"][-LAST:]),
            "use": u["mean_loss"],
            "full": tr.loss_and_grads(r["params"], tokens, rule)[0],
            "accuracy": u["mean_accuracy"],
            "losses": u["loss"],
            "accuracies": u["accuracy"],
        }
    return out


def checkpoints(runs: dict, eval_seed: int = EVAL_SEED) -> dict:
    """Per rule, ``{step: use-time mean loss}`` at the kept steps and the last step."""
    out = {}
    for rule, r in runs.items():
        params = {**r["kept"], len(r["train_loss"]): r["params"]}
        out[rule] = {
            k: tr.use_time(p, rule, seed=eval_seed)["mean_loss"] for k, p in params.items()
        }
    return out


def seen_share(vocab: int = tr.VOCAB, lag: int = tr.LAG, draws: int = tr.BATCH * tr.STEPS) -> float:
    """The chance that a sequence drawn anew was among the ``draws`` training sequences: the task has
    ``vocab ** lag`` sequences (the first ``lag`` tokens decide the rest), each drawn with equal chance.

    >>> round(seen_share(8, 4, 6400), 4)
    0.7904
    >>> round(seen_share(2, 1, 1), 4)
    0.5
    """
    return 1 - (1 - vocab**-lag) ** draws


def use_facts(losses: list[float], accuracies: list[float], prefix: str, lag: int = tr.LAG) -> dict:
    """Where a leaking model's use-time loss comes from: the first ``lag − 1`` targets (their answer is
    only ahead), then the worst of the rest (their answer is also behind: whether the model answers from
    that copy when the later one is missing is this run's)."""
    first = losses[: lag - 1]
    worst = max(range(lag - 1, len(losses)), key=losses.__getitem__)
    return {
        f"{prefix}_first": "、".join(map(fmt.fmt, first)),
        f"{prefix}_mean": fmt.fmt(mean(losses)),
        f"{prefix}_share": fmt.fmt(sum(first) / len(losses)),
        f"{prefix}_worst": fmt.count(worst),
        f"{prefix}_worst_loss": value(losses[worst]),
        f"{prefix}_worst_acc": fmt.percent(accuracies[worst]),
    }


def use_claims(losses: list[float], prefix: str, lag: int = tr.LAG) -> dict:
    """The facts :func:`use_facts`'s sentences state: the first targets far above guessing, and (this
    run's) carrying most of the mean."""
    first = losses[: lag - 1]
    return {
        f"{prefix}_first_targets_far_above_guessing": all(x > 2 * LN_V for x in first),
        f"{prefix}_first_targets_carry_most": sum(first) > sum(losses) / 2,
    }


def closed_form(logits, target: int) -> str:
    """Exercise 2's cross entropy in closed form, ``ln(Σ e^z) − z[target]``, for whole-number logits.

    >>> closed_form([3.0, 0.0, 0.0, 0.0], 0)
    'ln(e³ + 3) − 3'
    >>> closed_form([3.0, 0.0, 0.0, 0.0], 1)
    'ln(e³ + 3)'
    >>> closed_form([1.0, 2.0], 0)
    'ln(e¹ + e²) − 1'
    """
    zs = [int(z) for z in logits]
    if zs != list(logits):
        raise ValueError(f"logits 必须都是整数，收到 {logits!r}")
    terms = [f"e{str(z).translate(fmt._SUPERSCRIPT)}" for z in zs if z != 0]
    terms += [fmt.count(zs.count(0))] * (0 in zs)
    text = f"ln({' + '.join(terms)})"
    z = zs[target]
    return text if z == 0 else text + (f" − {fmt.count(z)}" if z > 0 else f" + {fmt.count(-z)}")


# -- figures ---------------------------------------------------------------------------------------
def curves_figure(runs: dict, turns: dict, floor: float):
    """Both training curves, both use-time losses at the checkpoints, guessing and the causal floor."""
    from matplotlib.figure import Figure  # a Figure, not pyplot: no global list of figures to close

    fonts = {"family": figure_fonts()}
    fig = Figure(figsize=(6.0, 3.6))
    ax = fig.subplots()
    colours = {"causal": "#1f5fa8", "none": "#c0392b"}
    for rule, r in runs.items():
        ax.plot(
            range(1, len(r["train_loss"]) + 1),
            r["train_loss"],
            "-",
            color=colours[rule],
            lw=1.2,
            label=f"{RULE_NAMES[rule]}：训练损失",
        )
    for rule, use in turns.items():
        steps = sorted(use)
        ax.plot(
            steps,
            [use[k] for k in steps],
            "o--",
            color=colours[rule],
            lw=1.0,
            ms=4,
            label=f"{RULE_NAMES[rule]}：逐词算的损失",
        )
    ax.axhline(
        LN_V,
        ls="--",
        color="#555555",
        lw=1,
        label=f"瞎猜：ln {fmt.count(tr.VOCAB)} = {fmt.fmt(LN_V)}",
    )
    ax.axhline(floor, ls=":", color="#1f5fa8", lw=1.2, label=f"因果规则的下限 {fmt.fmt(floor)}")
    ax.set_xlabel("训练步数", fontdict=fonts)
    ax.set_ylabel("交叉熵损失", fontdict=fonts)
    ax.set_ylim(bottom=0)
    ax.tick_params(labelfontfamily=fonts["family"])
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
        ax.tick_params(labelfontfamily=fonts["family"])
    axes[0].set_ylabel("查询位置", fontdict={**fonts, "fontsize": 9})
    bar = fig.colorbar(image, ax=list(axes), shrink=0.85)
    bar.set_label("注意力权重", fontdict={**fonts, "fontsize": 9})
    return fig


# -- the page's sections, one function each ------------------------------------------------------------
def task_values(seed: int = SHOW_SEED) -> dict:
    """The task: its sizes, one sequence, and where each target's answer is under the causal rule."""
    tokens = tr.sequences(1, seed=seed)[0].tolist()
    n = tr.LENGTH
    lag = tr.LAG
    where = [
        f"Key {fmt.count(t + 1 - lag)}" if t + 1 >= lag else "无从得知" for t in range(n - 1)
    ] + ["—"]
    rows = [
        ["token"] + [fmt.count(x) for x in tokens],
        ["目标（下一个 token）"] + [fmt.count(x) for x in tokens[1:]] + ["—"],
        ["因果规则下答案所在"] + where,
    ]
    fmt.holds(
        PAGE, {"one_round": n == 2 * lag}
    )  # the box: T is twice lag, the first lag tokens repeat once
    return {
        "task_vocab": fmt.count(tr.VOCAB),
        "task_length": fmt.count(n),
        "task_lag": fmt.count(lag),
        "task_lag_minus": fmt.count(lag - 1),
        "task_seed": fmt.count(seed),
        "task_last": fmt.count(n - 1),
        "tbl_task": Table(["位置 t"] + [fmt.count(t) for t in range(n)], rows),
        "task_unpredictable": positions(range(lag - 1)),
        "task_before_last": fmt.count(n - 2),
    }


def settings_values() -> dict:
    return {
        "set_d": fmt.count(tr.D_MODEL),
        "set_batch": fmt.count(tr.BATCH),
        "set_steps": fmt.count(tr.STEPS),
        "set_lr": fmt.short(tr.LEARNING_RATE),
        "set_beta1": fmt.short(tr.BETA1),
        "set_beta2": fmt.short(tr.BETA2),
        "set_adam_eps": fmt.power(tr.ADAM_EPS),
        "set_train_seed": fmt.count(TRAIN_SEED),
        "set_eval_seed": fmt.count(EVAL_SEED),
        "set_eval_n": fmt.count(tr.EVAL_SEQUENCES),
        "set_kinds": fmt.count(tr.VOCAB**tr.LAG),
        "set_draws": fmt.count(tr.BATCH * tr.STEPS),
        "set_seen": fmt.percent(seen_share()),
        "set_last": fmt.count(LAST),
        "set_checkpoints": positions(CHECKPOINTS),
        "ln_v": fmt.fmt(LN_V),
        "guess_acc": fmt.percent(GUESS),
    }


def loss_rows(s: dict) -> list[list[str]]:
    """One row per rule of a summary: training loss, the loss computed whole and in use, accuracy."""
    return [
        [
            RULE_NAMES[rule],
            *(value(v[k]) for k in ("train", "full", "use")),
            fmt.percent(v["accuracy"]),
        ]
        for rule, v in s.items()
    ]


def loss_table(rows: list[list[str]]) -> Table:
    header = [
        "模型",
        f"训练损失（最后 {fmt.count(LAST)} 步的平均）",
        "另抽的序列，整段一次算（训练时的算法）",
    ]
    return Table(header + ["另抽的序列，逐词算（使用时的算法）", "逐词算的准确率"], rows)


def loss_values(runs: dict, eval_seed: int = EVAL_SEED) -> dict:
    """The chart, the loss table (train, whole, in use, accuracy) and the numbers the prose reads."""
    s = summary(runs, eval_seed)
    floor = tr.loss_floor()
    turns = checkpoints(runs, eval_seed=eval_seed)
    c = s["causal"]
    n = s["none"]
    use = turns["none"]
    above = [step for step in sorted(use) if all(use[k] > LN_V for k in use if k >= step)]
    fmt.holds(
        PAGE,
        {
            "trains_far_lower": n["train"] < c["train"] / 2,
            "below_floor": n["train"] < floor,
            "far_below_floor": n["train"] < floor / 100,
            "causal_trains_above_floor": c["train"] > floor,
            "use_above_guessing": n["use"] > LN_V,
            "turns_above_guessing": bool(above),
            "accuracy_above_guessing": n["accuracy"] > GUESS,
            "causal_same": abs(c["use"] - c["full"]) < EXACT,
        },
    )
    if is_page_run(runs, eval_seed):  # the page says 这一次
        fmt.holds(PAGE, {"accuracy_below_causal": n["accuracy"] < c["accuracy"]})
    rows = [
        *loss_rows(s),
        ["瞎猜（每个 token 的概率相同）", *[fmt.fmt(LN_V)] * 3, fmt.percent(GUESS)],
    ]
    return {
        "fig_curves": curves_figure(runs, turns, floor),
        "floor": fmt.fmt(floor),
        "tbl_losses": loss_table(rows),
        "turn_step": fmt.count(above[0]),
        "none_train": value(n["train"]),
        "causal_train": value(c["train"]),
        "none_use": value(n["use"]),
        "causal_use": value(c["use"]),
        "none_acc": fmt.percent(n["accuracy"]),
        "causal_acc": fmt.percent(c["accuracy"]),
    }


def generation_values(runs: dict, eval_seed: int = EVAL_SEED, index: int = 0) -> dict:
    """Greedy generation with the cache from the first lag tokens: each model's tokens against the truth."""
    tokens = tr.sequences(tr.EVAL_SEQUENCES, seed=eval_seed)[index].tolist()
    lag = tr.LAG
    made = {
        r: tr.use_time(runs[r]["params"], r, seed=eval_seed, prompt=lag)["predicted"][index][
            lag - 1 :
        ]
        for r in tr.RULES
    }
    truth = tokens[lag:]
    rows = [
        ["真实的续写", *map(fmt.count, truth)],
        *(
            [
                RULE_NAMES[r],
                *(f"{fmt.count(g)} {'✓' if g == t else '✗'}" for g, t in zip(made[r], truth)),
            ]
            for r in tr.RULES
        ),
    ]
    return {
        "tbl_generation": Table(["位置", *map(fmt.count, range(lag, tr.LENGTH))], rows),
        "gen_prompt": positions(tokens[:lag]),
        "gen_index": fmt.count(index),
        "gen_new": fmt.count(len(truth)),
        **{
            f"gen_hits_{r}": fmt.count(sum(g == t for g, t in zip(made[r], truth)))
            for r in tr.RULES
        },
    }


def map_values(runs: dict, seed: int = SHOW_SEED) -> dict:
    """Where each model looks on the shown sequence: the mean weights the map's paragraph reads."""
    tokens = tr.sequences(1, seed=seed)[0].tolist()
    n = tr.LENGTH
    lag = tr.LAG
    causal, none = (
        tr.attention_map(runs[rule]["params"], rule, tokens) for rule in ("causal", "none")
    )
    future = ex.future_weight(none)[: n - 1]  # the last query has no target
    ahead = mean(none[t][t + 1] for t in range(n - 1))
    behind = mean(future)
    targets = [
        [tokens[j] == tokens[t + 1] for j in range(n)] for t in range(n - 1)
    ]  # keys holding it
    held = mean(sum(w for w, ok in zip(none[t], row) if ok) for t, row in enumerate(targets))
    back = mean(causal[t][t + 1 - lag] for t in range(lag - 1, n - 1))
    first = mean(future[: lag - 1])
    fmt.holds(
        PAGE,
        {
            "two_keys_hold_each_target": {sum(row) for row in targets} == {2},
            "causal_reads_lag_back": back > 0.5,
            "none_reads_the_targets": held > 0.5,
            "next_key_only_part": ahead < behind,
            "first_queries_read_ahead": first > 0.5,
            "lag_query_reads_key_0": causal[lag - 1][0] > 0.9,  # 两者读到的几乎是同一个 Value
        },
    )
    return {
        "fig_maps": maps_figure(causal, none, tokens),
        "map_back": fmt.fmt(causal[lag - 1][0]),
        "map_lag": fmt.fmt(back),
        "map_target": fmt.fmt(held),
        "map_behind": fmt.fmt(behind),
        "map_ahead": fmt.fmt(ahead),
        "map_first": fmt.fmt(first),
    }


def row_index_values(runs: dict, eval_seed: int = EVAL_SEED) -> dict:
    """The causal model generating with the row index: the step-by-step table and the cost."""
    params = runs["causal"]["params"]
    lag = tr.LAG
    right = tr.use_time(params, "causal", seed=eval_seed)["loss"]
    wrong = tr.use_time(params, "causal", seed=eval_seed, positions="row_index")["loss"]
    rows = [
        t for t in range(lag, len(wrong)) if abs(wrong[t] - wrong[t - lag]) < EXACT
    ]  # repeats t − lag

    def reads_later(rule):  # some query reads a key after it
        table = tr.visible_table(rule, tr.LENGTH).tolist()
        return any(any(row[i + 1 :]) for i, row in enumerate(table))

    fmt.holds(
        PAGE,
        {
            "loss_rises_above_guessing": mean(wrong) > max(mean(right), LN_V),
            # 其他常见误解: 本页的规则里只有因果规则不让任何查询读到它之后的 Key
            "only_causal_reads_no_later_key": [
                r for r in (*tr.RULES, tr.AHEAD) if not reads_later(r)
            ]
            == ["causal"],
            "rows_repeat": bool(rows),
            "right_by_chance": wrong[lag - 1] < LN_V / 2,
        },
    )

    def step(t, how):
        return keys(tr.cache_step(t, "causal", how)[1])

    table = [
        [fmt.count(t), step(t, "absolute"), step(t, "row_index"), fmt.fmt(a), fmt.fmt(b)]
        for t, (a, b) in enumerate(zip(right, wrong))
    ]
    header = [
        "新 token 的位置",
        "能读的 Key：正确",
        "能读的 Key：用行号",
        "损失：正确",
        "损失：用行号",
    ]
    return {
        "tbl_row_index": Table(header, table),
        "row_right": fmt.fmt(mean(right)),
        "row_wrong": fmt.fmt(mean(wrong)),
        "row_repeats": positions(rows),
        "row_repeated": positions(t - lag for t in rows),
        "row_hit": fmt.fmt(wrong[lag - 1]),
        "row_hit_right": fmt.fmt(right[lag - 1]),
    }


def floor_values(runs: dict, eval_seed: int = EVAL_SEED) -> dict:
    """Where the causal floor comes from: both models' per-position use-time loss and accuracy."""
    s = summary(runs, eval_seed)
    lag = tr.LAG
    c = s["causal"]
    n = s["none"]
    rows = [
        [
            fmt.count(t),
            "无从得知" if t + 1 < lag else f"Key {fmt.count(t + 1 - lag)}",
            fmt.fmt(LN_V) if t + 1 < lag else "0",
            value(c["losses"][t]),
            fmt.percent(c["accuracies"][t]),
            value(n["losses"][t]),
            fmt.percent(n["accuracies"][t]),
        ]
        for t in range(tr.LENGTH - 1)
    ]
    header = [
        "查询位置 t",
        "答案所在",
        "下限",
        "因果规则：损失",
        "因果规则：准确率",
        "不加规则：损失",
        "不加规则：准确率",
    ]
    first = c["losses"][: lag - 1]
    rest = c["losses"][lag - 1 :]
    fmt.holds(
        PAGE,
        {
            "first_targets_above_guessing": mean(first) - LN_V >= 5e-5,
            "rest_below_guessing": mean(rest) < LN_V,
            "causal_above_floor_in_use": c["use"] > tr.loss_floor(),
            **use_claims(n["losses"], "none"),
        },
    )
    if is_page_run(runs, eval_seed):  # 这一次，注意力图上有的查询几乎只读后面那份，逐词算时照样答对
        shown = tr.sequences(1, seed=SHOW_SEED)[0].tolist()  # the map's sequence
        weights = tr.attention_map(runs["none"]["params"], "none", shown)
        later = [t for t in range(lag - 1, tr.LENGTH - 1) if weights[t][t + 1] > 0.9]
        fmt.holds(
            PAGE, {"none_reads_later_yet_right": any(n["accuracies"][t] > 0.95 for t in later)}
        )
    # the floor is ln |V| for each of the first targets and 0 for the rest: each part's excess
    over_first = sum(x - LN_V for x in first) / len(c["losses"])
    over_rest = sum(rest) / len(c["losses"])
    return {
        "tbl_floor": Table(header, rows),
        "floor_targets": fmt.count(tr.LENGTH - 1),
        "floor_model": fmt.fmt(c["use"]),
        "floor_first": fmt.fmt(mean(first)),
        "floor_rest_n": fmt.count(len(rest)),
        "floor_rest": fmt.fmt(mean(rest)),
        "floor_over": fmt.fmt(over_first + over_rest),
        "floor_over_first": fmt.fmt(over_first),
        "floor_over_rest": fmt.fmt(over_rest),
        **use_facts(n["losses"], n["accuracies"], "none"),
    }


def check_values(runs: dict, eval_seed: int = EVAL_SEED) -> dict:
    """The leak check of both models and the finite-difference check of the backward."""
    leak = {rule: tr.leak_check(r["params"], rule, seed=eval_seed) for rule, r in runs.items()}
    fmt.holds(PAGE, {"causal_no_leak": leak["causal"] == 0.0, "none_leaks": leak["none"] > 0.0})
    return {
        "leak_causal": "0" if leak["causal"] == 0.0 else value(leak["causal"]),  # exactly 0 is 0
        "leak_none": fmt.fmt(leak["none"]),
        "fd_error": fmt.difference(tr.gradient_check()),
        "fd_tol": fmt.power(1e-6),
    }


# -- the exercises ---------------------------------------------------------------------------------
def ahead_values(runs: dict, seed: int = TRAIN_SEED, eval_seed: int = EVAL_SEED) -> dict:
    """Exercise 5: the off-by-one rule (key i + 1 visible) trained like ``runs``, its losses beside theirs."""
    a = ex.ahead_answers(seed=seed, eval_seed=eval_seed, tail=LAST)
    s = summary(runs, eval_seed)
    ahead = {
        "train": a["train_loss"],
        "full": a["whole_loss"],
        "use": a["use_loss"],
        "accuracy": a["use_accuracy"],
    }
    first = use_claims(a["losses"], "x5")
    carry = "x5_first_targets_carry_most"  # the solution says 这一次
    fmt.holds(
        PAGE,
        {
            "ahead_below_floor": a["train_loss"] < a["floor"],
            "ahead_far_below_causal": a["train_loss"] < s["causal"]["train"] / 2,
            "ahead_use_above_guessing": a["use_loss"] > LN_V,
            "ahead_leaks": a["leak"] > 0.0,
            **{name: ok for name, ok in first.items() if name != carry},
        },
    )
    if is_page_run(runs, eval_seed) and seed == TRAIN_SEED:
        fmt.holds(PAGE, {carry: first[carry]})
    return {
        "x5_table": loss_table(
            loss_rows({"causal": s["causal"], tr.AHEAD: ahead, "none": s["none"]})
        ),
        "x5_train": value(a["train_loss"]),
        "x5_use": fmt.fmt(a["use_loss"]),
        "x5_leak": fmt.fmt(a["leak"]),
        **use_facts(a["losses"], a["accuracies"], "x5"),
    }


def exercise_values() -> dict:
    cases = ex.floor_answers()
    g = ex.guess_answers()
    cache = ex.cache_answers()
    fw = ex.future_weight(ex.LEAK_WEIGHTS)
    rows = [
        [
            fmt.count(c["vocab"]),
            fmt.count(c["length"]),
            fmt.count(c["lag"]),
            fmt.count(c["targets"]),
            positions(c["unpredictable"]) or "没有",
            fmt.count(len(c["unpredictable"])),
            f"{fmt.count(len(c['unpredictable']))}/{fmt.count(c['targets'])} × {fmt.fmt(c['ln_vocab'])} = "
            + ("0" if c["floor"] == 0.0 else fmt.fmt(c["floor"])),
        ]
        for c in cases
    ]  # an exact 0 is 0
    zero = [c["lag"] for c in cases if not c["unpredictable"]]
    losses = g["losses"]
    fmt.holds(
        PAGE,
        {
            "one_case_without_unpredictable_targets": len(zero) == 1,
            "two_targets": len(losses) == 2,
            "below_then_above_guessing": losses[0] < g["ln_vocab"] < losses[1],
        },
    )
    return {
        "x1_cases": "；".join(
            f"词表大小 {fmt.count(v)}、T = {fmt.count(t)}、lag = {fmt.count(lag)}"
            for v, t, lag in ex.FLOOR_CASES
        ),
        "x1_table": Table(
            ["词表大小", "T", "lag", "目标数", "无从预测的目标", "个数", "下限"], rows
        ),
        "x1_zero_lag": fmt.count(zero[0]),
        "x2_logits": fmt.vector(ex.GUESS_LOGITS),
        "x2_vocab": fmt.count(len(ex.GUESS_LOGITS)),
        "x2_targets": positions(ex.GUESS_TARGETS),
        "x2_p": fmt.vector(g["p"], cell=fmt.fmt),
        "x2_top": fmt.count(max(range(len(g["p"])), key=g["p"].__getitem__)),
        "x2_ln": fmt.fmt(g["ln_vocab"]),
        "x2_uniform": fmt.fmt(g["uniform"]),
        **{f"x2_t{k}": fmt.count(t) for k, t in enumerate(ex.GUESS_TARGETS)},
        **{f"x2_form{k}": closed_form(ex.GUESS_LOGITS, t) for k, t in enumerate(ex.GUESS_TARGETS)},
        **{f"x2_loss{k}": fmt.fmt(x) for k, x in enumerate(losses)},
        "x3_past": fmt.count(ex.CACHE_PAST),
        "x3_lag": fmt.count(tr.LAG),
        "x3_keys": keys(cache["row_index"][1]),
        "x3_table": Table(
            ["写法", "位置嵌入的行", "能读的 Key"],
            [
                ["位置 = past + 行号", fmt.count(cache["absolute"][0]), keys(cache["absolute"][1])],
                ["位置 = 行号", fmt.count(cache["row_index"][0]), keys(cache["row_index"][1])],
            ],
        ),
        "x4_weights": fmt.vectors(ex.LEAK_WEIGHTS),
        "x4_future": Table(
            ["查询", "它之后的 Key 上的权重之和"],
            [[f"查询 {fmt.count(i)}", fmt.short(x)] for i, x in enumerate(fw)],
        ),
        "x4_leaking": positions(i for i, x in enumerate(fw) if x > 0) or "没有",
        "x4_doctest": fmt.Md(fmt.doctest_block(ex.future_weight)),
    }
