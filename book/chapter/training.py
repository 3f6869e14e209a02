"""The training page's book side: one function per section of book/ch02/training.md, each a page.Section.

The page types the task's and the training's inputs ({input} roles naming 02_training's constants and the
seeds below); a section trains nothing itself: :func:`trained` trains both models once per seed. A section
glues what the runs compute and checks the facts of the page's fixed sentences with ``Section.holds``. A
sentence about a training result either states what holds on other seeds too (tests/test_chapter_training.py
runs every section with other seeds), or says it is this run's (这一次): its facts are checked on the page's
own seeds only (:func:`this_run`).
"""

from __future__ import annotations

import functools
import importlib
import math

from chapter import fmt
from chapter.costs import figure_fonts
from chapter.page import Col, Section, listing

tr = importlib.import_module("02_training")
ex = importlib.import_module("02_exercises_training")

PAGE = "训练一页"
# The page's inputs that no teaching file has (the page types them; tests/test_typed_inputs.py compares).
TRAIN_SEED = 0  # both models: init and batches
EVAL_SEED = 1  # the sequences drawn for use
SHOW_SEED = 0  # the task table's and the maps' sequence
PROMPTED = 0  # the sequence drawn for use whose first lag tokens prompt the generation
CHECKPOINTS = (10, 25, 50, 100, 150)  # steps at which the chart also shows the use-time loss
OWN_RUN = (
    TRAIN_SEED,
    EVAL_SEED,
    SHOW_SEED,
)  # the page's run: what it says of 这一次 is checked on it
RULE_NAMES = {"causal": "因果规则", "none": "不加规则", tr.AHEAD: "多看一个 Key（j ≤ i + 1）"}
EXACT = 1e-12  # two losses this close are the same computation in another order
LN_V = math.log(tr.VOCAB)
GUESS = 1 / tr.VOCAB  # top-1 accuracy of guessing


def this_run() -> bool:
    """Whether the sections run on the page's own seeds (facts said of 这一次 are checked there only)."""
    return (TRAIN_SEED, EVAL_SEED, SHOW_SEED) == OWN_RUN


def mean(xs) -> float:
    return sum(xs := list(xs)) / len(xs)


def numbers(ts) -> str:
    """Positions (or keys) listed as the prose lists them: 0、2、3."""
    return listing(map(fmt.count, map(int, ts)))


def readable(row) -> str:
    """The keys a visibility row lets its query read: 0、1、2."""
    return numbers(j for j, ok in enumerate(row) if ok)


@functools.cache
def run(seed: int) -> dict:
    """Both models from the same initial parameters on the same batches, each keeping CHECKPOINTS."""
    return {rule: tr.train(rule, seed=seed, keep=CHECKPOINTS) for rule in tr.RULES}


def trained() -> dict:
    """The runs of TRAIN_SEED (trained once per seed)."""
    return run(TRAIN_SEED)


def shown() -> list[int]:
    """The sequence of the task table and the maps."""
    return tr.sequences(1, seed=SHOW_SEED)[0].tolist()


def summary() -> dict:
    """Per rule: the training loss (last ex.TAIL steps), the whole loss, and the use-time loss and accuracy."""
    tokens = tr.sequences(tr.EVAL_SEQUENCES, seed=EVAL_SEED)
    out = {}
    for rule, r in trained().items():
        u = tr.use_time(r["params"], rule, seed=EVAL_SEED)
        out[rule] = {
            "train": mean(r["train_loss"][-ex.TAIL :]),
            "use": u["mean_loss"],
            "full": tr.loss_and_grads(r["params"], tokens, rule)[0],
            "accuracy": u["mean_accuracy"],
            "losses": u["loss"],
            "accuracies": u["accuracy"],
        }
    return out


def checkpoints() -> dict:
    """Per rule, ``{step: use-time mean loss}`` at the kept steps and the last step."""
    out = {}
    for rule, r in trained().items():
        params = {**r["kept"], len(r["train_loss"]): r["params"]}
        out[rule] = {
            k: tr.use_time(p, rule, seed=EVAL_SEED)["mean_loss"] for k, p in params.items()
        }
    return out


def seen_share(vocab: int, lag: int, draws: int) -> float:
    """The chance that a sequence drawn anew was among the ``draws`` training sequences: the task has
    ``vocab ** lag`` sequences (the first ``lag`` tokens decide the rest), each drawn with equal chance.

    >>> round(seen_share(8, 4, 6400), 4)
    0.7904
    >>> round(seen_share(2, 1, 1), 4)
    0.5
    """
    return 1 - (1 - vocab**-lag) ** draws


def use_facts(s: Section, losses: list[float], accuracies: list[float], prefix: str) -> None:
    """Where a leaking model's use-time loss comes from: the first lag − 1 targets (their answer is only
    ahead), then the worst of the rest (whether the model answers from the copy behind is this run's)."""
    first = losses[: tr.LAG - 1]
    worst = max(range(tr.LAG - 1, len(losses)), key=losses.__getitem__)
    s.text(**{f"{prefix}_first": listing(map(fmt.fmt, first))})
    s.value(**{f"{prefix}_mean": mean(losses), f"{prefix}_share": sum(first) / len(losses)})
    s.value("count", **{f"{prefix}_worst": worst})
    s.value("difference", **{f"{prefix}_worst_loss": losses[worst]})
    s.value("percent", **{f"{prefix}_worst_acc": accuracies[worst]})


def use_claims(losses: list[float]) -> dict:
    """The facts :func:`use_facts`'s sentences state: the first targets far above guessing, and carrying
    most of the mean."""
    first = losses[: tr.LAG - 1]
    return {
        "first_targets_far_above_guessing": all(x > 2 * LN_V for x in first),
        "first_targets_carry_most": sum(first) > sum(losses) / 2,
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
    terms = [f"e{str(z).translate(fmt._SUPERSCRIPT)}" for z in zs if z != 0]
    terms += [fmt.count(zs.count(0))] * (0 in zs)
    text = f"ln({' + '.join(terms)})"
    z = zs[target]
    return text if z == 0 else text + (f" − {fmt.count(z)}" if z > 0 else f" + {fmt.count(-z)}")


def loss_table(s: Section, name: str, rows) -> None:
    """One row per (label, summary of a rule): training loss, the loss computed whole and in use, accuracy."""
    s.table(
        name,
        rows,
        Col("模型", lambda r: r[0], "text"),
        Col(
            f"训练损失（最后 {fmt.count(ex.TAIL)} 步的平均）", lambda r: r[1]["train"], "difference"
        ),
        Col("另抽的序列，整段一次算（训练时的算法）", lambda r: r[1]["full"], "difference"),
        Col("另抽的序列，逐词算（使用时的算法）", lambda r: r[1]["use"], "difference"),
        Col("逐词算的准确率", lambda r: r[1]["accuracy"], "percent"),
    )


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


# -- the page's sections, in its order -------------------------------------------------------------------
def task() -> Section:
    """The task: one sequence, and where each target's answer is under the causal rule."""
    s = Section(PAGE, "任务")
    tokens = shown()
    n = tr.LENGTH
    lag = tr.LAG
    where = [f"Key {t + 1 - lag}" if t + 1 >= lag else "无从得知" for t in range(n - 1)]
    s.holds(one_round=n == 2 * lag)  # the box: T is twice lag, the first lag tokens repeat once
    s.grid(
        "tbl_task",
        "位置 t",
        [tokens, [*tokens[1:], "—"], [*where, "—"]],
        ["token", "目标（下一个 token）", "因果规则下答案所在"],
        [fmt.count(t) for t in range(n)],
        "text",
    )
    s.value("count", task_lag_minus=lag - 1, task_last=n - 1, task_before_last=n - 2)
    s.text(task_unpredictable=numbers(range(lag - 1)))
    return s


def settings() -> Section:
    """What the training's and the use's settings come to: sequences, draws, guessing."""
    s = Section(PAGE, "训练")
    s.value("count", set_kinds=tr.VOCAB**tr.LAG, set_draws=tr.BATCH * tr.STEPS)
    s.value("percent", set_seen=seen_share(tr.VOCAB, tr.LAG, tr.BATCH * tr.STEPS), guess_acc=GUESS)
    s.value(ln_v=LN_V)
    return s


def losses() -> Section:
    """The chart, the loss table (train, whole, in use, accuracy) and the numbers the prose reads."""
    s = Section(PAGE, "用起来")
    sm = summary()
    floor = tr.loss_floor()
    turns = checkpoints()
    c = sm["causal"]
    n = sm["none"]
    use = turns["none"]
    above = [step for step in sorted(use) if all(use[k] > LN_V for k in use if k >= step)]
    s.holds(
        trains_far_lower=n["train"] < c["train"] / 2,
        below_floor=n["train"] < floor,
        far_below_floor=n["train"] < floor / 100,
        causal_trains_above_floor=c["train"] > floor,
        use_above_guessing=n["use"] > LN_V,
        turns_above_guessing=bool(above),
        accuracy_above_guessing=n["accuracy"] > GUESS,
        causal_same=abs(c["use"] - c["full"]) < EXACT,
    )
    if this_run():  # the page says 这一次
        s.holds(accuracy_below_causal=n["accuracy"] < c["accuracy"])
    s.figure("fig_curves", curves_figure(trained(), turns, floor))
    guess = {"train": LN_V, "full": LN_V, "use": LN_V, "accuracy": GUESS}
    rows = [(RULE_NAMES[rule], v) for rule, v in sm.items()]
    loss_table(s, "tbl_losses", [*rows, ("瞎猜（每个 token 的概率相同）", guess)])
    s.value(floor=floor)
    s.value("count", turn_step=above[0])
    s.value(
        "difference",
        none_train=n["train"],
        causal_train=c["train"],
        none_use=n["use"],
        causal_use=c["use"],
    )
    s.value("percent", none_acc=n["accuracy"], causal_acc=c["accuracy"])
    return s


def generation() -> Section:
    """Greedy generation with the cache from the first lag tokens: each model's tokens against the truth."""
    s = Section(PAGE, "贪心生成")
    runs = trained()
    tokens = tr.sequences(tr.EVAL_SEQUENCES, seed=EVAL_SEED)[PROMPTED].tolist()
    lag = tr.LAG
    made = {
        r: tr.use_time(runs[r]["params"], r, seed=EVAL_SEED, prompt=lag)["predicted"][PROMPTED][
            lag - 1 :
        ]
        for r in tr.RULES
    }
    truth = tokens[lag:]
    marked = [[f"{g} {'✓' if g == t else '✗'}" for g, t in zip(made[r], truth)] for r in tr.RULES]
    s.grid(
        "tbl_generation",
        "位置",
        [truth, *marked],
        ["真实的续写", *(RULE_NAMES[r] for r in tr.RULES)],
        [fmt.count(t) for t in range(lag, tr.LENGTH)],
        "text",
    )
    s.text(gen_prompt=numbers(tokens[:lag]))
    s.value("count", gen_new=len(truth))
    hits = {f"gen_hits_{r}": sum(g == t for g, t in zip(made[r], truth)) for r in tr.RULES}
    s.value("count", **hits)
    return s


def row_index() -> Section:
    """The causal model generating with the row index: the step-by-step table and the cost."""
    s = Section(PAGE, "用行号当位置")
    params = trained()["causal"]["params"]
    lag = tr.LAG
    right = tr.use_time(params, "causal", seed=EVAL_SEED)["loss"]
    wrong = tr.use_time(params, "causal", seed=EVAL_SEED, positions="row_index")["loss"]
    rows = [t for t in range(lag, len(wrong)) if abs(wrong[t] - wrong[t - lag]) < EXACT]

    def reads_later(rule):  # some query reads a key after it
        table = tr.visible_table(rule, tr.LENGTH).tolist()
        return any(any(row[i + 1 :]) for i, row in enumerate(table))

    s.holds(
        loss_rises_above_guessing=mean(wrong) > max(mean(right), LN_V),
        # 其他常见误解: 本页的规则里只有因果规则不让任何查询读到它之后的 Key
        only_causal_reads_no_later_key=[r for r in (*tr.RULES, tr.AHEAD) if not reads_later(r)]
        == ["causal"],
        rows_repeat=bool(rows),
        right_by_chance=wrong[lag - 1] < LN_V / 2,
    )

    def step(t, how):
        return readable(tr.cache_step(t, "causal", how)[1])

    s.table(
        "tbl_row_index",
        range(len(right)),
        Col("新 token 的位置", fmt.count, "text"),
        Col("能读的 Key：正确", lambda t: step(t, "absolute"), "text"),
        Col("能读的 Key：用行号", lambda t: step(t, "row_index"), "text"),
        Col("损失：正确", right.__getitem__),
        Col("损失：用行号", wrong.__getitem__),
    )
    s.value(
        row_right=mean(right),
        row_wrong=mean(wrong),
        row_hit=wrong[lag - 1],
        row_hit_right=right[lag - 1],
    )
    s.text(row_repeats=numbers(rows), row_repeated=numbers(t - lag for t in rows))
    return s


def checks() -> Section:
    """The leak check of both models and the finite-difference check of the backward."""
    s = Section(PAGE, "如何判断是否做对")
    leak = {rule: tr.leak_check(r["params"], rule, seed=EVAL_SEED) for rule, r in trained().items()}
    s.holds(causal_no_leak=leak["causal"] == 0.0, none_leaks=leak["none"] > 0.0)
    s.value("difference", leak_causal=leak["causal"], fd_error=tr.gradient_check())
    s.value(leak_none=leak["none"])
    s.value("power", fd_tol=1e-6)
    return s


def maps() -> Section:
    """Where each model looks on the shown sequence: the mean weights the map's paragraph reads."""
    s = Section(PAGE, "注意力图")
    runs = trained()
    tokens = shown()
    n = tr.LENGTH
    lag = tr.LAG
    causal, none = (tr.attention_map(runs[rule]["params"], rule, tokens) for rule in tr.RULES)
    future = ex.future_weight(none)[: n - 1]  # the last query has no target
    ahead = mean(none[t][t + 1] for t in range(n - 1))
    behind = mean(future)
    targets = [
        [tokens[j] == tokens[t + 1] for j in range(n)] for t in range(n - 1)
    ]  # keys holding it
    held = mean(sum(w for w, ok in zip(none[t], row) if ok) for t, row in enumerate(targets))
    back = mean(causal[t][t + 1 - lag] for t in range(lag - 1, n - 1))
    first = mean(future[: lag - 1])
    s.holds(
        two_keys_hold_each_target={sum(row) for row in targets} == {2},
        causal_reads_lag_back=back > 0.5,
        none_reads_the_targets=held > 0.5,
        next_key_only_part=ahead < behind,
        first_queries_read_ahead=first > 0.5,
        lag_query_reads_key_0=causal[lag - 1][0] > 0.9,  # 两者读到的几乎是同一个 Value
    )
    s.figure("fig_maps", maps_figure(causal, none, tokens))
    s.value(
        map_back=causal[lag - 1][0],
        map_lag=back,
        map_target=held,
        map_behind=behind,
        map_ahead=ahead,
        map_first=first,
    )
    return s


def floor() -> Section:
    """Where the causal floor comes from: both models' per-position use-time loss and accuracy."""
    s = Section(PAGE, "因果损失的下限")
    sm = summary()
    lag = tr.LAG
    c = sm["causal"]
    n = sm["none"]
    first = c["losses"][: lag - 1]
    rest = c["losses"][lag - 1 :]
    none_first = use_claims(n["losses"])
    s.holds(
        first_targets_above_guessing=mean(first) - LN_V >= 5e-5,
        rest_below_guessing=mean(rest) < LN_V,
        causal_above_floor_in_use=c["use"] > tr.loss_floor(),
        none_first_targets_far_above_guessing=none_first["first_targets_far_above_guessing"],
        none_first_targets_carry_most=none_first["first_targets_carry_most"],
    )
    if this_run():  # the page says 这一次: a query reading the later copy answers in use
        weights = tr.attention_map(trained()["none"]["params"], "none", shown())
        later = [t for t in range(lag - 1, tr.LENGTH - 1) if weights[t][t + 1] > 0.9]
        s.holds(none_reads_later_yet_right=any(n["accuracies"][t] > 0.95 for t in later))
    s.table(
        "tbl_floor",
        range(tr.LENGTH - 1),
        Col("查询位置 t", fmt.count, "text"),
        Col("答案所在", lambda t: "无从得知" if t + 1 < lag else f"Key {t + 1 - lag}", "text"),
        Col("下限", lambda t: fmt.fmt(LN_V) if t + 1 < lag else "0", "text"),
        Col("因果规则：损失", c["losses"].__getitem__, "difference"),
        Col("因果规则：准确率", c["accuracies"].__getitem__, "percent"),
        Col("不加规则：损失", n["losses"].__getitem__, "difference"),
        Col("不加规则：准确率", n["accuracies"].__getitem__, "percent"),
    )
    # the floor is ln |V| for each of the first targets and 0 for the rest: each part's excess
    over_first = sum(x - LN_V for x in first) / len(c["losses"])
    over_rest = sum(rest) / len(c["losses"])
    s.value("count", floor_targets=tr.LENGTH - 1, floor_rest_n=len(rest))
    s.value(
        floor_model=c["use"],
        floor_first=mean(first),
        floor_rest=mean(rest),
        floor_over=over_first + over_rest,
        floor_over_first=over_first,
        floor_over_rest=over_rest,
    )
    use_facts(s, n["losses"], n["accuracies"], "none")
    return s


def run_output() -> Section:
    """What running 02_training.py prints."""
    s = Section(PAGE, "运行结果示例")
    s.md(run_output=fmt.run_output("02_training.py"))
    return s


# -- the exercises ---------------------------------------------------------------------------------
def exercises() -> Section:
    """Exercises 1–4: the floor of other sizes, a loss above guessing, the row index, the leak function."""
    s = Section(PAGE, "练习")
    cases = ex.floor_answers()
    g = ex.guess_answers()
    cache = ex.cache_answers()
    fw = ex.future_weight(ex.LEAK_WEIGHTS)
    zero = [c["lag"] for c in cases if not c["unpredictable"]]

    def floor_of(c) -> fmt.Calculation:  # unpredictable / targets × ln(vocab)
        n = len(c["unpredictable"])
        return fmt.Calculation(
            f"{fmt.count(n)}/{fmt.count(c['targets'])} × {fmt.fmt(c['ln_vocab'])}",
            n / c["targets"] * fmt.printed(fmt.fmt(c["ln_vocab"])),
            c["floor"],
        )

    def floor_cell(c):  # an exact 0 is 0
        return f"{floor_of(c).terms} = 0" if c["floor"] == 0.0 else str(floor_of(c))

    s.holds(
        one_case_without_unpredictable_targets=len(zero) == 1,
        two_targets=len(g["losses"]) == 2,
        below_then_above_guessing=g["losses"][0] < g["ln_vocab"] < g["losses"][1],
        written_floors_add_up=all(floor_of(c).adds_up for c in cases),
    )
    s.text(
        x1_cases="；".join(f"词表大小 {v}、T = {t}、lag = {lag}" for v, t, lag in ex.FLOOR_CASES)
    )
    s.table(
        "x1_table",
        cases,
        Col("词表大小", lambda c: c["vocab"], "count"),
        Col("T", lambda c: c["length"], "count"),
        Col("lag", lambda c: c["lag"], "count"),
        Col("目标数", lambda c: c["targets"], "count"),
        Col(
            "无从预测的目标",
            lambda c: numbers(c["unpredictable"]) if c["unpredictable"] else "没有",
            "text",
        ),
        Col("个数", lambda c: len(c["unpredictable"]), "count"),
        Col("下限", floor_cell, "text"),
    )
    s.value("count", x1_zero_lag=zero[0], x2_vocab=len(ex.GUESS_LOGITS))
    s.value("count", x2_top=max(range(len(g["p"])), key=g["p"].__getitem__))
    s.value("count", **{f"x2_t{k}": t for k, t in enumerate(ex.GUESS_TARGETS)})
    s.text(x2_p=fmt.vector(g["p"], cell=fmt.fmt))
    s.value(x2_ln=g["ln_vocab"], x2_uniform=g["uniform"])
    s.text(
        **{f"x2_form{k}": closed_form(ex.GUESS_LOGITS, t) for k, t in enumerate(ex.GUESS_TARGETS)}
    )
    s.value(**{f"x2_loss{k}": x for k, x in enumerate(g["losses"])})
    s.text(x3_keys=readable(cache["row_index"][1]))
    s.table(
        "x3_table",
        (("位置 = past + 行号", cache["absolute"]), ("位置 = 行号", cache["row_index"])),
        Col("写法", lambda r: r[0], "text"),
        Col("位置嵌入的行", lambda r: r[1][0], "count"),
        Col("能读的 Key", lambda r: readable(r[1][1]), "text"),
    )
    s.table(
        "x4_future",
        range(len(fw)),
        Col("查询", lambda i: f"查询 {i}", "text"),
        Col("它之后的 Key 上的权重之和", fw.__getitem__, "short"),
    )
    s.text(x4_leaking=numbers(i for i, x in enumerate(fw) if x > 0))
    s.md(x4_doctest=fmt.doctest_block(ex.future_weight))
    return s


def ahead() -> Section:
    """Exercise 5: the off-by-one rule (key i + 1 visible) trained like the page's models, beside them."""
    s = Section(PAGE, "练习 多看一个 Key")
    a = ex.ahead_answers(seed=TRAIN_SEED, eval_seed=EVAL_SEED, tail=ex.TAIL)
    sm = summary()
    first = use_claims(a["losses"])
    s.holds(
        ahead_below_floor=a["train_loss"] < a["floor"],
        ahead_far_below_causal=a["train_loss"] < sm["causal"]["train"] / 2,
        ahead_use_above_guessing=a["use_loss"] > LN_V,
        ahead_leaks=a["leak"] > 0.0,
        x5_first_targets_far_above_guessing=first["first_targets_far_above_guessing"],
    )
    if this_run():  # the page says 这一次
        s.holds(x5_first_targets_carry_most=first["first_targets_carry_most"])
    mine = {
        "train": a["train_loss"],
        "full": a["whole_loss"],
        "use": a["use_loss"],
        "accuracy": a["use_accuracy"],
    }
    rows = [("causal", sm["causal"]), (tr.AHEAD, mine), ("none", sm["none"])]
    loss_table(s, "x5_table", [(RULE_NAMES[rule], v) for rule, v in rows])
    s.value("difference", x5_train=a["train_loss"])
    s.value(x5_use=a["use_loss"], x5_leak=a["leak"])
    use_facts(s, a["losses"], a["accuracies"], "x5")
    return s
