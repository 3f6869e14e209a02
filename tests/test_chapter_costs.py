"""The book side of the costs page (book/chapter/costs.py): its sentences, tables, synthetic timings and
figure, each checked on other inputs than the page's and against the data its table shows.

Fast unit tests: no book build. The doctests of the module run too (``--doctest-modules``). Each section
takes no arguments: other inputs are planted by changing the teaching file's constants (``monkeypatch``),
and a fact of the page's fixed sentences planted false must stop the build naming the fact.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chapter import costs as page
from chapter import fmt
from chapter.page import Section

costs = importlib.import_module("02_costs")
ex = importlib.import_module("02_exercises_costs")
ROOT = Path(__file__).resolve().parent.parent
BIB = ROOT / "book" / "references.bib"
SOURCE = ROOT / "book" / "ch02" / "costs.md"


def _model(name, heads, kv_heads, layers=2, head_dim=4, hidden=None, **extra):
    # max_positions 8192: the page's context (4096) is within every model's positions.
    return {
        "name": name,
        "layers": layers,
        "hidden": hidden or heads * head_dim,
        "heads": heads,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "head_dim_in_config": hidden is not None,
        "max_positions": 8192,
        "dtype": "float16",
        **extra,
    }


# -- kinds of number ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "ratio, text",
    [(1, "1 倍"), (4.0, "4 倍"), (1.25, "1.2 倍"), (9.142857, "9.1 倍"), (1024, "1024 倍")],
)
def test_times(ratio, text):
    assert page.times(ratio) == text


@given(st.integers(1, 2**40), st.data())
@settings(max_examples=60, deadline=None)
def test_a_share_never_prints_as_a_whole_percentage_it_is_not(whole, data):
    part = data.draw(st.integers(0, whole))
    text = page.share(part, whole)
    value = 100 * part / whole
    shown = float(text.rstrip("%"))
    digits = len(text.rstrip("%").split(".")[1])
    assert digits >= 2 and abs(shown - value) <= 0.5 * 10.0**-digits + 1e-9
    if shown.is_integer():
        assert 100 * part % whole == 0 and shown == value, text  # 50.00% only for exactly a half


def test_the_forbidden_share_of_the_largest_table_is_not_rounded_to_a_half():
    values = page.scores().values
    assert costs.SCORE_NS[-1] == 16384
    assert values["mis_share"] == "49.997%" and values["tbl_scores"].rows[-1][3].endswith(
        "（49.997%）"
    )


def test_percent_and_grouped_print_the_one_minus_sign():
    assert fmt.percent(-0.5) == f"{fmt.MINUS}50.00%" and fmt.percent(0.00001) == "0.00%"
    assert fmt.grouped(-1234567) == f"{fmt.MINUS}1,234,567" and fmt.grouped(0) == "0"
    with pytest.raises(ValueError):
        fmt.grouped(1.5)


# -- the score table and its growth ------------------------------------------------------------------
def test_the_score_tables_show_the_counts_of_their_rows(monkeypatch):
    monkeypatch.setattr(costs, "SCORE_NS", [8, 32])
    values = page.scores().values
    header, body = values["tbl_scores"]
    assert len(header) == 5 and [r[0] for r in body] == ["8", "32"]
    first = costs.score_costs(
        8, costs.SCORE_HEAD_DIM, costs.SCORE_HEADS, costs.SCORE_BYTES, batch=costs.SCORE_BATCH
    )
    # 7/16 of the cells are forbidden: (n − 1)/(2n) at n = 8
    assert body[0] == [
        "8",
        fmt.grouped(first["entries"]),
        fmt.size(first["bytes"]),
        f"{fmt.grouped(first['forbidden'])}（43.75%）",
        fmt.grouped(first["qk_madds"]),
    ]
    assert first["qk_madds"] == first["mix_madds"]  # one column says both
    growth = {k: values[f"sc_{k}"] for k in ("n0", "n1", "n_ratio", "growth")}
    assert growth == {"n0": "8", "n1": "32", "n_ratio": "4 倍", "growth": "16 倍"}
    assert values["mis_n"] == "32" and values["mis_share"] == fmt.percent(31 / 64)


# -- the KV cache ------------------------------------------------------------------------------------
sizes = st.lists(st.integers(1, 2**34), min_size=2, max_size=6).filter(lambda xs: len(set(xs)) > 1)


@given(sizes)
@settings(max_examples=20, deadline=None)
def test_ranking_names_the_smallest_and_largest_with_the_ratio(values):
    rows = [{"model": {"name": f"M{i}"}, "b": v} for i, v in enumerate(values)]
    r = page.ranking(rows, "b")
    low = min(values)
    high = max(values)
    assert set(re.split("、|与", r["small"])) == {f"M{i}" for i, v in enumerate(values) if v == low}
    assert set(re.split("、|与", r["large"])) == {
        f"M{i}" for i, v in enumerate(values) if v == high
    }
    assert (r["small_size"], r["large_size"]) == (fmt.size(low), fmt.size(high))
    ratio = float(re.search(r"最小者的 ([\d.,]+) 倍", r["ratio"]).group(1).replace(",", ""))
    assert ratio == pytest.approx(high / low, abs=0.051)
    assert r["ratio"].startswith("约") == (not (high / low).is_integer())


def kv_values(monkeypatch, models, context=costs.CONTEXT, batch=costs.BATCH) -> dict:
    """The KV section's values for other configurations, context and batch size."""
    monkeypatch.setattr(costs, "MODELS", models)
    monkeypatch.setattr(costs, "CONTEXT", context)
    monkeypatch.setattr(costs, "BATCH", batch)
    return page.kv_cache().values


def test_the_kv_table_and_its_sentences_come_from_the_same_rows(monkeypatch):
    models = [
        _model("A", heads=8, kv_heads=2, max_positions=20),
        _model("B", heads=8, kv_heads=8, max_positions=64),
    ]
    values = kv_values(monkeypatch, models, context=16, batch=2)
    header, body = values["tbl_kv"]
    assert header[2] == "上下文 16（16 位）" and header[3] == "上下文 16（8 位）"
    assert body[0] == ["A", "64 B", "2 KiB", "1 KiB", "8 KiB", "4 倍", "2.5 KiB"]
    assert (
        body[1][5] == "不分组" and body[1][4] == body[1][2]
    )  # without grouping, full multi-head is itself
    assert {k: values[f"kv_{k}"] for k in ("small", "small_size", "large", "large_size")} == {
        "small": "A",
        "small_size": "2 KiB",
        "large": "B",
        "large_size": "8 KiB",
    }
    assert (values["kv_max_small_size"], values["kv_max_large_size"]) == ("2.5 KiB", "32 KiB")


def test_a_table_context_past_a_model_s_maximum_positions_stops_the_build(monkeypatch):
    models = [_model("A", heads=8, kv_heads=2, max_positions=10), _model("B", heads=8, kv_heads=8)]
    with pytest.raises(ValueError, match="context=16 超过了 A 的最大位置数 10"):
        kv_values(monkeypatch, models, context=16, batch=2)


def test_the_ranking_at_the_maximum_length_counts_the_sliding_window():
    # Mistral-7B-v0.1's window of 4096 caps its cache at 512 MiB: the smallest at the maximum lengths.
    values = page.kv_cache().values
    at_max = {
        m["name"]: costs.kv_cache_bytes(m, m["max_positions"], costs.BATCH) for m in costs.MODELS
    }
    mistral = costs.MODELS[2]
    assert (
        at_max[mistral["name"]]
        == costs.kv_bytes_per_token(32, 8, 128, 2) * mistral["sliding_window"]
    )
    assert min(at_max, key=at_max.get) == mistral["name"]
    assert values["kv_max_small"] == mistral["name"]
    # The caveat names Mistral's window, not Qwen2's (switched off).
    assert page.windows().values["win_on"] == mistral["name"]
    header, body = values["tbl_kv"]
    assert "计入滑动窗口" in header[-1] and body[2][-1] == fmt.size(at_max[mistral["name"]])


def test_the_window_claims_hold_for_the_pages_models_and_stop_the_build_otherwise(monkeypatch):
    assert page.windows().values == {
        "win_on": "Mistral-7B-v0.1",
        "win_on_w": "4096",
        "win_off": "Qwen2-7B",
        "win_off_w": "131,072",
    }
    on = _model("W", 4, 2, sliding_window=16)
    off = _model("X", 4, 2, sliding_window=16, use_sliding_window=False)
    plain = _model("A", 4, 2)
    monkeypatch.setattr(costs, "MODELS", [plain, on, off])
    assert page.windows().values["win_off"] == "X"
    # Each claim of the page, made false once: the ValueError names it.
    for models, claim in [
        ([plain, off], "one_config_uses_a_window"),
        ([on, {**on, "name": "V"}, off], "one_config_uses_a_window"),
        ([on, plain], "one_config_writes_use_sliding_window_false"),
        ([on, off, {**off, "name": "Y"}], "the_others_write_no_window"),
        ([{**on, "sliding_window": 10**5}, off], "only_the_windowed_cache_is_capped"),  # too wide
    ]:
        monkeypatch.setattr(costs, "MODELS", models)
        with pytest.raises(ValueError, match=claim):
            page.windows()


def test_the_configuration_table_shows_every_input_of_the_kv_table(monkeypatch):
    configs = page.kv_cache().values["tbl_configs"]
    assert [row[-1] for row in configs.rows] == [m["dtype"] for m in costs.MODELS]
    assert configs.rows[3][-2] == "131,072（未启用）"
    # L, h_kv and d_head of every model: the per-token cache of the KV table from the shown numbers.
    kv = page.kv_cache().values["tbl_kv"]
    for config, row in zip(configs.rows, kv.rows):
        layers, kv_heads, head_dim = (int(config[i]) for i in (1, 3, 4))
        assert row[1] == fmt.size(2 * layers * kv_heads * head_dim * costs.FLOAT16_BYTES)
    with_key = _model("G", heads=4, kv_heads=4, head_dim=8, hidden=16, dtype="bfloat16")
    values = kv_values(monkeypatch, [with_key, _model("B", heads=4, kv_heads=2)])
    header, body = values["tbl_configs"]
    assert body[0] == ["G", "2", "4", "4", "8", "8192", "—", "bfloat16"] and len(header) == 8


def test_the_head_dim_example_is_a_model_whose_head_dim_is_not_hidden_over_heads(monkeypatch):
    values = page.head_dim().values
    g = costs.GEMMA_7B
    assert values["hd_guess"] == str(g["hidden"] // g["heads"]) != str(g["head_dim"])
    assert values["hd_wrong"] == "336 KiB" and values["hd_right"] == "448 KiB"
    assert values["hd_short"] == "25.00%"
    # Llama-2-7B: 4096 ÷ 32 = 128 is its head_dim, the example would show nothing.
    monkeypatch.setattr(costs, "GEMMA_7B", costs.MODELS[0])
    with pytest.raises(ValueError, match="head_dim_is_not_hidden_over_heads"):
        page.head_dim()


def test_the_forbidden_cells_grow_a_little_faster_than_the_table():
    assert costs.SCORE_NS[:2] == [1024, 4096]
    values = page.scores().values
    assert values["sc_growth"] == "16 倍" and values["sc_forbidden_growth"] == "16.01 倍"
    assert (4096 * 4095) / (1024 * 1023) > 16


def query_heads(monkeypatch, models):
    return {
        k.removeprefix("mis_"): v
        for k, v in kv_values(monkeypatch, models).items()
        if k.startswith("mis_")
        and k.removeprefix("mis_") in ("a", "b", "heads", "kv_a", "kv_b", "per_a", "per_b", "ratio")
    }


def test_query_heads_on_other_models(monkeypatch):
    a = _model("A", heads=12, kv_heads=12)
    b = _model("B", heads=12, kv_heads=3)
    assert query_heads(monkeypatch, [_model("E", heads=8, kv_heads=2), a, b]) == {
        "a": "A",
        "b": "B",
        "heads": "12",
        "kv_a": "12",
        "kv_b": "3",
        "per_a": "384 B",
        "per_b": "96 B",
        "ratio": "相差 4 倍",
    }
    odd = query_heads(
        monkeypatch,
        [
            _model("C", heads=6, kv_heads=3, head_dim=4),
            _model("D", heads=6, kv_heads=2, head_dim=5),
        ],
    )
    assert (odd["per_a"], odd["per_b"], odd["ratio"]) == (
        "96 B",
        "80 B",
        "约相差 1.2 倍",
    )  # 3×4 against 2×5 numbers


def test_every_configuration_has_a_citation_in_the_bibliography_and_on_the_page():
    keys = set(re.findall(r"^@\w+\{(\w+),", BIB.read_text(encoding="utf-8"), flags=re.M))
    source = SOURCE.read_text(encoding="utf-8")
    citations = {
        "Llama-2-7B": "llama2_7b_config",
        "Llama-3-8B": "llama3_8b_config",
        "Mistral-7B-v0.1": "mistral7b_config",
        "Qwen2-7B": "qwen2_7b_config",
    }
    for m in costs.MODELS:
        key = citations[m["name"]]
        assert key in keys and key in source, key


# -- the direct counts -------------------------------------------------------------------------------
def test_the_tiny_table_counts_both_ways_on_another_configuration(monkeypatch):
    tiny = {"layers": 3, "kv_heads": 1, "head_dim": 2, "context": 4, "batch": 1}
    monkeypatch.setattr(costs, "TINY", tiny)
    values = page.count_check().values
    facts = [values[f"tiny_{k}"] for k in ("formula", "elements", "bytes")]
    assert facts == ["96", "48", "96"]


def test_a_formula_that_disagrees_with_the_count_stops_the_build(monkeypatch):
    # Planted: the formula without the factor 2 of K and V (one of the wrong versions the page names).
    wrong = costs.WRONG_VERSIONS["漏了 K 和 V 各一份的因子 2"][1]

    def forgets_the_two(layers, kv_heads, head_dim, b):
        return wrong({"layers": layers, "kv_heads": kv_heads, "head_dim": head_dim}, b)

    monkeypatch.setattr(costs, "kv_bytes_per_token", forgets_the_two)
    with pytest.raises(ValueError, match="formula_agrees_with_the_count"):
        page.count_check()


def test_the_table_check_counts_what_it_built(monkeypatch):
    monkeypatch.setattr(page, "CHECK_NS", [2, 6])
    monkeypatch.setattr(page, "CHECK_D", 3)
    _, body = page.count_check().values["tbl_table_check"]
    assert body == [["2", "4", "4", "1", "1"], ["6", "36", "36", "15", "15"]]


# -- the synthetic timings that check the fit --------------------------------------------------------
NS = costs.TIMING["ns"]
laws = st.fixed_dictionaries(
    {
        "coefficient": st.floats(1e-12, 1e-2),
        "power": st.floats(0.5, 3.5),
        "noise": st.lists(st.floats(0.5, 2.0), max_size=4).map(tuple),
    }
)


@given(law=laws)
@settings(max_examples=15, deadline=None)
def test_synthetic_seconds_follow_their_law_and_a_noiseless_law_fits_exactly(law):
    seconds = page.synthetic_seconds(NS, law)
    noise = list(law["noise"]) or [1.0]
    assert seconds == pytest.approx(
        [law["coefficient"] * n ** law["power"] * noise[i % len(noise)] for i, n in enumerate(NS)],
        rel=1e-12,
    )
    slope, _ = costs.fit_slope(NS, page.synthetic_seconds(NS, {**law, "noise": ()}))
    assert slope == pytest.approx(law["power"], abs=1e-9)


def latex_value(formula: str, n: float) -> float:
    """Read a law_formula back by hand: ``t = [m \\times] [10^{e}] n[^{p}]`` evaluated at n."""
    found = re.fullmatch(r"t = ([\d.]+) \\times 10\^\{(-?\d+)\} \\, n\^\{([\d.e+-]+)\}", formula)
    assert found, formula
    mantissa, exponent, power = found.groups()
    return float(mantissa) * 10.0 ** int(exponent) * n ** float(power)


@given(law=laws)
@settings(max_examples=20, deadline=None)
def test_the_formula_shown_is_the_law_used(law):
    formula = page.law_formula(law)
    for n in (3.0, 100.0):
        # six significant digits are shown, of the coefficient and of the power
        assert latex_value(formula, n) == pytest.approx(
            law["coefficient"] * n ** law["power"], rel=2e-4
        )
    laws = [{"coefficient": 1e-9, "power": 2, "noise": ()}, law | {"noise": (1.2, 1.0, 0.9)}]
    with pytest.MonkeyPatch.context() as patch:  # hypothesis runs many examples in one test
        patch.setattr(page, "SYNTHETIC_LAWS", laws)
        table = page.count_check().values["tbl_fit"]
    assert table.rows[1][0].startswith(f"${formula}$，依次轮流乘以 1.2、1、0.9")


def test_the_pages_noisy_law_actually_moves_the_slope():
    # Mutant: a noise pattern symmetric about the middle length (1.1, 0.9, 1.1, 0.9, 1.1) leaves the
    # fitted slope exactly as it was, so it would test nothing. The page's noisy law must move it.
    symmetric = {"coefficient": 3e-9, "power": 2, "noise": (1.1, 0.9)}
    assert costs.fit_slope(NS, page.synthetic_seconds(NS, symmetric))[0] == pytest.approx(
        2, abs=1e-12
    )
    slopes = [
        costs.fit_slope(NS, page.synthetic_seconds(NS, law))[0] for law in page.SYNTHETIC_LAWS
    ]
    for law, slope in zip(page.SYNTHETIC_LAWS, slopes):
        if law["noise"]:
            assert abs(slope - law["power"]) > 1e-3
        else:
            assert slope == pytest.approx(law["power"], abs=1e-9)
    values = page.count_check().values
    assert [row[2] for row in values["tbl_fit"].rows] == [fmt.ratio(s) for s in slopes]
    noisy = [abs(s - law["power"]) for law, s in zip(page.SYNTHETIC_LAWS, slopes) if law["noise"]]
    assert values["fit_noise_gap"] == fmt.ratio(max(noisy))


def test_a_fit_check_without_a_noisy_law_is_refused(monkeypatch):
    noiseless = [law for law in page.SYNTHETIC_LAWS if not law["noise"]]
    monkeypatch.setattr(page, "SYNTHETIC_LAWS", noiseless)
    with pytest.raises(ValueError, match="some_synthetic_timing_is_noisy"):
        page.count_check()


# -- the measurement ---------------------------------------------------------------------------------
def _timed(ns, seconds):
    return [{"n": n, "runs": 3, "median": t} for n, t in zip(ns, seconds)]


def measured(timed) -> dict:
    """What the timing section glues for a measurement (``timed``, as time_attention returns it)."""
    s = Section(page.PAGE, "怎样观察与验证")
    page.measured(s, timed)
    return s.values


@pytest.mark.parametrize(
    "slope, verdict",
    [
        (2.0, "near"),
        (1.76, "near"),
        (2.24, "near"),
        (1.74, "low"),
        (2.26, "high"),
        (3.0, "high"),
        (-0.5, "low"),
    ],
)
def test_the_verdict_reads_the_fitted_slope(slope, verdict):
    values = measured(_timed([100, 200], [1.0, 2.0**slope]))  # two points: the fit is their slope
    assert values["obs_slope"] == fmt.ratio(slope) and values["obs_verdict"] == page.SAY[verdict]


def test_the_ratios_are_those_of_the_shown_medians_and_their_range_is_glued():
    # 0.1744 and 0.5836 ms: the shown 0.174 and 0.584 give 3.36, the unrounded medians 3.35.
    timed = _timed([256, 512], [0.1744e-3, 0.5836e-3])
    values = measured(timed)
    assert [r[2] for r in values["tbl_timing"].rows] == ["0.174", "0.584"]
    assert values["tbl_timing"].rows[1][3] == "3.36" == fmt.ratio(0.584 / 0.174)
    assert fmt.ratio(0.5836 / 0.1744) == "3.35"
    four = measured(_timed([100, 200, 400, 800], [1.0, 3.9, 16.2, 63.0]))
    ratios = [r[3] for r in four["tbl_timing"].rows[1:]]
    assert (four["obs_ratio_low"], four["obs_ratio_high"]) == (
        min(ratios, key=float),
        max(ratios, key=float),
    )


def test_the_steadiness_word_both_ways():
    steady = page.timing_facts(_timed([100, 200, 400, 800], [1.0, 3.9, 16.2, 63.0]))
    assert (
        steady["steady"]
        and measured(_timed([100, 200, 400, 800], [1.0, 3.9, 16.2, 63.0]))["obs_steady"]
        == page.SAY["steady"]
    )
    # The alternating ratios of a build on a busy machine (3.26 / 5.11 / 3.30 / 5.11): said, not passed over.
    jumpy = _timed(
        [128, 256, 512, 1024, 2048],
        [1.0, 3.26, 3.26 * 5.11, 3.26 * 5.11 * 3.30, 3.26 * 5.11 * 3.30 * 5.11],
    )
    facts = page.timing_facts(jumpy)
    assert not facts["steady"]
    assert [fmt.ratio(x) for x in facts["local"]] == ["1.70", "2.35", "1.72", "2.35"]
    assert measured(jumpy)["obs_steady"] == page.SAY["uneven"]


def test_the_timing_table_shows_milliseconds_and_ratios():
    timed = [{"n": 100, "runs": 5, "median": 2e-4}, {"n": 200, "runs": 2, "median": 9e-4}]
    values = measured(timed)
    assert values["tbl_timing"].rows == [["100", "5", "0.200", "—"], ["200", "2", "0.900", "4.50"]]
    assert values["obs_points"] == "2" and values["obs_doubling"] == fmt.multiple(4.5)


def test_every_word_on_the_figure_is_chinese():
    fig = measured(_timed([100, 200, 400], [1.0, 3.0, 9.0]))["fig_scaling"]
    ax = fig.axes[0]
    words = [
        ax.get_title(),
        ax.get_xlabel(),
        ax.get_ylabel(),
        *(t.get_text() for t in ax.get_legend().get_texts()),
    ]
    assert all(re.search(r"[\u4e00-\u9fff]", w) for w in words), words
    # Latin words are names (numpy) or symbols (n, t); nothing in English.
    assert {w for text in words for w in re.findall(r"[A-Za-z]{2,}", text)} <= {"numpy"}, words
    assert not any("$" in w for w in words), "mathtext has no Chinese glyphs"


def test_the_figure_plots_the_data_and_the_fit():
    ns = [100, 200, 400]
    seconds = [1.0, 3.0, 9.0]
    fig = measured(_timed(ns, seconds))["fig_scaling"]
    lines = fig.axes[0].get_lines()
    assert list(lines[0].get_xdata()) == ns and list(lines[0].get_ydata()) == seconds
    slope, _ = costs.fit_slope(ns, seconds)
    assert f"斜率 = {fmt.fmt(slope, 2)}" in fig.axes[0].get_legend().get_texts()[1].get_text()
    fitted = lines[1].get_ydata()
    reference = lines[2].get_ydata()
    assert np.log(fitted[1] / fitted[0]) / np.log(4) == pytest.approx(slope)
    assert np.log(reference[1] / reference[0]) / np.log(4) == pytest.approx(2)


# -- the exercises -----------------------------------------------------------------------------------
def test_the_exercise_tables_show_the_answers():
    m = ex.EX_MODEL
    first = ex.table_beats_cache()["first"]
    values = page.exercises().values
    header, body = values["cx1_table"]
    assert [r[0] for r in body] == [str(first - 1), str(first)] and [r[-1] for r in body] == [
        "否",
        "是",
    ]
    assert (
        values["cx2_table"].rows[0][1]
        == f"2 × {m['layers']} × {m['kv_heads']} × {m['head_dim']} × 2"
    )
    rows = ex.window_rows()
    _, body = values["cx3_table"]
    assert [r[1] for r in body] == [str(min(c, ex.WINDOW)) for c in ex.WINDOW_CONTEXTS]
    assert body[0][-1] == "0.00%" and body[-1][-1] == page.share(
        rows[-1]["full"] - rows[-1]["windowed"], rows[-1]["full"]
    )


def test_the_wrong_versions_are_counted_from_the_code():
    values = page.count_check().values
    assert values["wrong_count"] == str(len(costs.WRONG_VERSIONS)) == "3"
    assert values["wrong_names"].split("；") == list(costs.WRONG_VERSIONS)


def test_the_page_glues_only_through_the_book_side():
    # One way to glue: each hidden cell glues sections of the book module, page.<section>().glue().
    source = SOURCE.read_text(encoding="utf-8")
    cells = re.findall(
        r"```\{code-cell\} ipython3\n:tags: \[remove-cell\]\n\n(.*?)```", source, re.S
    )
    glued = [line for cell in cells[1:] for line in cell.splitlines() if line]
    assert glued and all(re.fullmatch(r"page\.\w+\(\)\.glue\(\)", line) for line in glued), glued
    assert re.findall(r"\b(?:glue_all|glue_md|Markdown)\(", source) == []
