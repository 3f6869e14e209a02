"""The training page's book side (book/chapter/training.py): tables, sentences and figures on other seeds.

The page trains with seed 0 and evaluates with seed 1; here both models are trained on other seeds and
every generated sentence is checked against the numbers it reads, so that what the page says holds
beyond its own run. The page's own numbers are checked in tests/test_page_training.py.
"""

from __future__ import annotations

import importlib
import math

import pytest

from chapter import fmt
from chapter import training as page

tr = importlib.import_module("02_training")
ex = importlib.import_module("02_exercises_training")
LN_V = math.log(tr.VOCAB)
SEEDS = (1, 2, 5)


@pytest.fixture(scope="module")
def runs():
    return {seed: page.run(seed) for seed in SEEDS}


def rows_of(md: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in md.splitlines()[2:]]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_loss_sentence_says_what_the_table_shows_on_other_seeds(runs, seed):
    s = page.summary(runs[seed], eval_seed=seed + 10)
    values = page.loss_values(runs[seed], eval_seed=seed + 10)
    table = rows_of(values["tbl_losses"])
    assert table[0] == [page.RULE_NAMES["causal"]] + [page.value(s["causal"][k]) for k in ("train", "full", "use")]
    assert table[1] == [page.RULE_NAMES["none"]] + [page.value(s["none"][k]) for k in ("train", "full", "use")]
    assert "0.0000" not in table[1]  # a tiny leaked loss is written in scientific notation, not as zero
    text = str(values["loss_sentence"])
    # the claims the page makes hold on these seeds too, and the sentence says them
    assert s["none"]["train"] < s["causal"]["train"] / 2 and "远低于因果规则的" in text
    assert s["none"]["use"] > LN_V and f"比瞎猜的 ln V = {fmt.fmt(LN_V)} 还高" in text
    assert abs(s["causal"]["use"] - s["causal"]["full"]) < page.EXACT and text.endswith("与整段一次算出的相同。")
    assert fmt.fmt(s["none"]["use"]) in text
    assert "低于因果规则的下限" in str(values["curve_sentence"])
    assert str(values["below_floor"]).startswith(f"不加规则的模型降到了 {page.value(s['none']['train'])}，低于这个下限")


def test_the_loss_sentence_changes_its_words_when_the_numbers_do():
    worse = {"causal": {"train": 1.3, "full": 1.3, "use": 1.3}, "none": {"train": 1.0, "full": 1.0, "use": 1.5}}
    text = page.loss_sentence(worse, LN_V)
    assert "低于因果规则的 1.3000" in text and "远低于" not in text and "虽不及瞎猜" in text
    worse["causal"]["use"] = 1.4
    assert "相差 1.0 × 10⁻¹" in page.loss_sentence(worse, LN_V)
    good = {"causal": {"train": 1.3, "full": 1.3, "use": 1.3}, "none": {"train": 1.2, "full": 1.2, "use": 1.2}}
    assert "并不比因果规则的模型差" in page.loss_sentence(good, LN_V)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_attention_sentence_reads_the_maps_it_describes(runs, seed):
    tokens = tr.sequences(1, seed=seed + 20)[0].tolist()
    c = tr.attention_map(runs[seed]["causal"]["params"], "causal", tokens)
    n = tr.attention_map(runs[seed]["none"]["params"], "none", tokens)
    text = page.attention_sentence(c, n, tr.LAG, tokens)
    back = page.lag_weight(c, tr.LAG)
    first = sum(ex.future_weight(n)[: tr.LAG - 1]) / (tr.LAG - 1)
    assert f"平均把 {fmt.fmt(back)} 的权重放在 {tr.LAG - 1} 个位置之前的 Key 上" in text
    assert f"它们放在后面的是 {fmt.fmt(first)}" in text
    assert back > 0.7 and first > 0.7  # what the page's figure shows holds on these seeds as well
    held = page.target_weight(n, tokens)
    assert f"平均把 {fmt.fmt(held)} 的权重放在存着目标 token 的 Key 上" in text and held > 0.9
    ahead = sum(n[t][t + 1] for t in range(tr.LENGTH - 1)) / (tr.LENGTH - 1)
    assert ahead < held  # it does not just read the next key: the page's paragraph says so
    assert "答案（按任务的构造）只在后面" in text


def test_the_map_sequence_has_distinct_first_tokens():
    tokens = tr.sequences(1, seed=page.SHOW_SEED)[0].tolist()
    assert len(set(tokens[: tr.LAG])) == tr.LAG


def test_the_target_weight_counts_every_key_holding_the_target():
    weights = [[0.5, 0.25, 0.25], [0.0, 0.5, 0.5], [0.2, 0.3, 0.5]]
    assert page.target_weight(weights, [1, 1, 2]) == pytest.approx((0.75 + 0.5) / 2)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_row_index_table_and_sentence_on_other_seeds(runs, seed):
    values = page.row_index_values(runs[seed], eval_seed=seed + 10)
    table = rows_of(values["tbl_row_index"])
    assert len(table) == tr.LENGTH - 1
    assert all(r[1] == f"{r[0]} / 0" and r[3] == "0" for r in table)
    right = tr.use_loss(runs[seed]["causal"]["params"], "causal", seed=seed + 10)
    wrong = tr.use_loss(runs[seed]["causal"]["params"], "causal", seed=seed + 10, positions="row_index")
    assert str(values["row_sentence"]) == page.row_index_sentence(right, wrong, LN_V)
    assert wrong > right and f"升到 {fmt.fmt(wrong)}" in str(values["row_sentence"])
    assert ("比瞎猜的" in str(values["row_sentence"])) == (wrong > LN_V)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_row_index_repeats_the_first_rows_on_other_seeds(runs, seed):
    params = runs[seed]["causal"]["params"]
    right = tr.position_losses(params, "causal", seed=seed + 10)
    wrong = tr.position_losses(params, "causal", seed=seed + 10, positions="row_index")
    text = str(page.row_index_values(runs[seed], eval_seed=seed + 10)["row_repeat"])
    # every new token outputs what position 0 outputs: rows lag … 2·lag − 2 repeat rows 0 … lag − 2
    assert page.repeated_rows(wrong, tr.LAG) == list(range(tr.LAG, tr.LENGTH - 1))
    assert all(wrong[t] == wrong[t - tr.LAG] for t in range(tr.LAG, tr.LENGTH - 1))
    assert f"位置 {page.positions(range(tr.LAG, tr.LENGTH - 1))} 的目标与位置 {page.positions(range(tr.LENGTH - 1 - tr.LAG))} 的相同" in text
    assert wrong[tr.LAG - 1] < LN_V / 2 and "这一行碰巧答对" in text  # its target is token 0
    assert f"损失 {fmt.fmt(wrong[tr.LAG - 1])}，正确的写法是 {fmt.fmt(right[tr.LAG - 1])}" in text


def test_the_row_repeat_sentence_on_made_up_losses():
    assert "没有哪一行的损失与前面的行相同" in page.row_repeat_sentence([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], 2, LN_V)
    assert "这一行的损失：损失 3.0000" in page.row_repeat_sentence([1.0, 0.5, 0.5], [1.0, 3.0, 2.0], 2, LN_V)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_none_use_sentence_splits_its_losses_on_other_seeds(runs, seed):
    values = page.floor_values(runs[seed], eval_seed=seed + 10)
    losses = tr.position_losses(runs[seed]["none"]["params"], "none", seed=seed + 10)
    assert [r[-1] for r in rows_of(values["tbl_floor"])] == [page.value(x) for x in losses]
    text = str(values["none_sentence"])
    first = losses[: tr.LAG - 1]
    assert all(x > 2 * LN_V for x in first) and "高得多" in text  # the answer only ahead: far worse than guessing
    assert "、".join(fmt.fmt(x) for x in first) in text
    high = [t for t in range(tr.LAG - 1, tr.LENGTH - 1) if losses[t] > page.SMALL]
    assert all(f"位置 {t}（{fmt.fmt(losses[t])}）" in text for t in high)
    assert sum(first) / len(losses) > 0.7 * sum(losses) / len(losses)  # most of the mean comes from them
    assert f"就占了 {fmt.fmt(sum(first) / len(losses))}。" in text


def test_the_none_use_sentence_on_made_up_losses():
    assert page.none_use_sentence([0.0, 0.0], 1, LN_V) == "不加规则的模型逐词算时，其余位置的损失都不超过 0.1000。"
    assert "平均 1.0000" in page.none_use_sentence([1.0, 1.0, 0.0], 3, LN_V)
    assert "损失超过 0.1000 的是位置 1（3.0000）。" in page.none_use_sentence([9.0, 3.0], 2, LN_V)


def test_the_closed_form_of_exercise_2_reproduces_its_numbers():
    g = ex.guess_answers()
    for t, loss in zip(ex.GUESS_TARGETS, g["losses"]):
        z = ex.GUESS_LOGITS
        assert loss == pytest.approx(math.log(sum(math.exp(x) for x in z)) - z[t])
    assert page.closed_form(ex.GUESS_LOGITS, 0) == "ln(e³ + 3) − 3"
    assert page.closed_form([0.0, -2.0], 1) == "ln(e⁻² + 1) + 2"
    with pytest.raises(ValueError, match="logits"):
        page.closed_form([0.5, 0.0], 0)


def test_the_row_index_sentence_on_made_up_losses():
    assert "降到 1.0000。" in page.row_index_sentence(1.3, 1.0, LN_V)
    assert "比瞎猜" not in page.row_index_sentence(1.3, 1.5, LN_V)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_floor_sentence_splits_the_losses_where_the_answer_appears(runs, seed):
    values = page.floor_values(runs[seed], eval_seed=seed + 10)
    losses = tr.position_losses(runs[seed]["causal"]["params"], "causal", seed=seed + 10)
    first = sum(losses[: tr.LAG - 1]) / (tr.LAG - 1)
    rest = sum(losses[tr.LAG - 1 :]) / (tr.LENGTH - tr.LAG)
    text = str(values["floor_sentence"])
    assert f"平均损失是 {fmt.fmt(first)}" in text and f"平均损失是 {fmt.fmt(rest)}。" in text
    over = sum(losses) / len(losses) - tr.loss_floor()  # the two parts add up to the gap above the floor
    assert f"平均损失比下限多出 {fmt.fmt(over)}" in text
    assert ("还高" in text) == (first > LN_V)
    assert first > LN_V and rest < LN_V  # the page's prose after the table relies on both
    assert [r[1] for r in rows_of(values["tbl_floor"])][: tr.LAG] == ["无从得知"] * (tr.LAG - 1) + ["Key 0"]
    assert sum(losses) / len(losses) > tr.loss_floor()  # no model goes below the floor


def test_the_floor_sentence_on_made_up_losses():
    assert "与瞎猜的 2.0794 相同" in page.floor_sentence([LN_V, 0.1], 2, LN_V)
    assert "比瞎猜的 2.0794 低" in page.floor_sentence([1.0, 0.1], 2, LN_V)
    assert page.floor_sentence([0.2, 0.1], 1, LN_V) == "其余 2 个目标的平均损失是 0.1500。"
    assert page.floor_sentence([LN_V + 0.7, 0.0], 2, LN_V).endswith("其中前 1 个位置占 0.3500，其余位置占 0.0000。")


@pytest.mark.parametrize("seed", SEEDS)
def test_the_leak_sentence_on_other_seeds(runs, seed):
    values = page.check_values(runs[seed], eval_seed=seed + 10)
    text = str(values["leak_sentence"])
    assert text.startswith("因果规则的模型：前面各位置的 logits 一点都没变（最大变化恰为 0）。")
    assert "不加规则的模型：最多变了" in text


def test_the_curves_and_the_maps_are_labelled_in_chinese(runs):
    fig = page.curves_figure(runs[SEEDS[0]], LN_V, tr.loss_floor())
    ax = fig.axes[0]
    assert ax.get_xlabel() == "训练步数" and "交叉熵" in ax.get_ylabel()
    assert [t.get_text() for t in ax.get_legend().get_texts()][:2] == ["因果规则：训练损失", "不加规则：训练损失"]
    assert len(ax.lines) == 4  # two curves, guessing and the floor
    tokens = tr.sequences(1, seed=2)[0].tolist()
    maps = page.maps_figure([[1.0] + [0.0] * 7] * 8, [[0.0] * 7 + [1.0]] * 8, tokens)
    assert [a.get_title() for a in maps.axes[:2]] == ["因果规则", "不加规则"]
    assert maps.axes[0].get_xlabel() == "Key 位置（token）" and maps.axes[0].get_ylabel() == "查询位置"


def test_the_task_table_marks_where_each_answer_is():
    values = page.task_values(seed=7)
    tokens = tr.sequences(1, seed=7)[0].tolist()
    token_row, target_row, where_row = rows_of(values["tbl_task"])
    assert token_row[1:] == [str(x) for x in tokens] and target_row[1:-1] == [str(x) for x in tokens[1:]]
    for t, where in enumerate(where_row[1:-1]):
        if t + 1 < tr.LAG:
            assert where == "无从得知"
        else:  # the answer is the token at that key
            assert tokens[int(where.removeprefix("Key "))] == tokens[t + 1]


def test_the_exercise_solutions_come_from_the_answers():
    values = page.exercise_values()
    floor_rows = rows_of(values["x1_table"])
    for row, a in zip(floor_rows, ex.floor_answers()):
        assert row[-1].endswith(f"= {page.exact(a['floor'])}") and row[5] == str(len(a["unpredictable"]))
    assert str(values["x1_note"]).startswith("lag = 1 时") and floor_rows[1][-1].endswith("= 0")
    g = ex.guess_answers()
    assert str(values["x2_compare"]) == page.guess_sentence(ex.GUESS_TARGETS, g["losses"], g["ln_vocab"])
    assert "比瞎猜低；" in str(values["x2_compare"]) and str(values["x2_compare"]).endswith("比瞎猜高。")
    assert "只许读 Key 0，" in str(values["x3_sentence"]) and f"第 {ex.CACHE_PAST} 行" in str(values["x3_sentence"])
    assert values["x4_leaking"] == "0、1"
    assert ">>> future_weight(" in str(values["x4_doctest"])
