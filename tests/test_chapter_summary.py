"""Tests of book/chapter/summary.py and the summary page: each table's cells are the facts they claim to be.

The predicates the page prints are checked against the teaching code's rules (and a wrong predicate is
refused). A check is defined once: the checks table runs the mask page's own check functions
(chapter.mask), so that the summary cannot say what a check catches under a definition of its
own (a planted summary that recomputes its own reference is caught). The sentences under the table are
facts checked both ways, and the conventions cells follow the recorded observations. Each section
(``summary.rules()``, ``libraries()``, ``checks()``) takes no arguments: a planted fact or observation
is planted where the section reads it (monkeypatch).
"""

from __future__ import annotations

import collections
import copy
import re
from pathlib import Path

import pytest
from conftest import article_of, load_module, table_rows

from chapter import conventions, mask, summary, tensors


def rows_of(section, name: str) -> list[list[str]]:
    """The rows of the table a section glues as ``name``."""
    return section.values[name].rows


@pytest.mark.parametrize("name", list(summary.RULES))
def test_every_printed_predicate_is_the_teaching_codes_rule(name):
    assert summary.predicate_agrees(name)


def test_a_predicate_that_differs_from_the_code_is_refused(monkeypatch):
    rules = dict(summary.RULES)
    says, _, rule, label = rules["滑动窗口"]
    rules["滑动窗口"] = (
        says,
        "(q - w <= k) & (k <= q)",
        rule,
        label,
    )  # one key too many: the off-by-one window
    monkeypatch.setattr(summary, "RULES", rules)
    assert not summary.predicate_agrees("滑动窗口")
    with pytest.raises(ValueError, match="every_printed_predicate_is_the_rule"):
        summary.rules()


def test_the_rules_example_is_the_tensors_pages_and_its_document_row_is_causal():
    # one home for the example (02_tensors.RULES_EXAMPLE): the summary keeps no copy of its entries, and
    # the tensors page types them once, naming the entries the tensors page's book side reads from it
    assert not {"N", "W", "PREFIX", "N_SINK", "DOCS"} & set(vars(summary))
    ex = summary.tn.RULES_EXAMPLE
    assert (tensors.RULES_N, tensors.RULES_W, tensors.RULES_PREFIX) == (
        ex["n"],
        ex["w"],
        ex["n_prefix"],
    )
    assert (tensors.RULES_SINK, tensors.RULES_DOCS) == (ex["n_sink"], ex["doc_ids"])
    tensors_md = (Path(__file__).parent.parent / "book" / "ch02" / "tensors.md").read_text("utf-8")
    assert "<chapter.tensors:RULES_DOCS>" in tensors_md and "page.rules().glue()" in tensors_md
    # packing reads its own document and nothing after itself: the tensors page's 1 2 3 1 2 3
    row = next(r for r in rows_of(summary.rules(), "tbl_rules") if r[0].startswith("同一文档"))
    assert row[0] == "同一文档（且因果）" and "k <= q" in row[2]
    assert row[3].split() == ["1", "2", "3", "1", "2", "3"]


def test_the_page_types_its_examples_inputs_naming_the_constants():
    # inputs typed once, in the page (tests/test_typed_inputs.py compares each with its constant); what the
    # summary computes from them (counts, the PAD's position and key) stays glued
    text = (Path(__file__).parent.parent / "book" / "ch02" / "summary.md").read_text("utf-8")
    typed = set(re.findall(r"\{input\}`[^`]*<([^>`]+)>`", text))
    assert {f"02_tensors:RULES_EXAMPLE[{k}]" for k in ("n", "w", "n_prefix", "n_sink")} <= typed
    assert {
        f"chapter.summary:{name}"
        for name in ("BLOCK", "Q", "V_COLUMN", "POISON", "PAST", "GRAD_QK", "GRAD_V_COLUMN")
    } <= typed
    assert summary.V == [[x] for x in summary.V_COLUMN] and summary.BIG == summary.mask.BIG


def test_the_printed_predicates_are_in_array_form():
    # A reader copies them into numpy or a mask_mod: no scalar-only `and`/`or` (chained comparisons
    # raise on arrays: predicate_agrees evaluates every one on numpy arrays).
    for name, (_, text, _, _) in summary.RULES.items():
        assert " and " not in text and " or " not in text, name
    # the parentheses matter: without them & is taken first, a different table and no error
    assert summary.predicate_table(summary.UNBRACKETED) != summary.rule_table("因果 + PAD")


def test_a_predicate_that_only_works_on_scalars_is_refused(monkeypatch):
    rules = dict(summary.RULES)
    says, _, rule, label = rules["滑动窗口"]
    rules["滑动窗口"] = (says, "q - w < k <= q", rule, label)  # the old scalar form
    monkeypatch.setattr(summary, "RULES", rules)
    with pytest.raises(ValueError):
        summary.rules()


def test_the_mha_causal_flag_cell_states_when_the_mask_is_dropped():
    rows = {row[0]: row[1:] for row in rows_of(summary.libraries(), "tbl_conventions_all")}
    cell = rows["因果标志（查询比 Key 少时）"][1]
    assert "need_weights=False" in cell and "key_padding_mask" in cell and "慢路径" in cell
    assert conventions.CAUSAL_HINT["top-left"] in cell
    fast = conventions.observed()["cpu"]["torch"]["mha_fast_path"]
    assert cell.endswith(
        "快路径上" + conventions.CAUSAL_HINT[fast["is_causal_with_mask_no_weights"]]
    )
    jax_pad = rows["PAD 怎样给（形状据文档）"][3]
    assert "query_seq_lengths" in jax_pad


def test_the_counts_column_counts_the_rules_table():
    causal_pad = next(r for r in rows_of(summary.rules(), "tbl_rules") if r[0] == "因果 + PAD")
    assert causal_pad[3].split() == [str(sum(r)) for r in summary.rule_table("因果 + PAD")]
    assert (
        causal_pad[3].split()[0] == "0"
    )  # the PAD query reads nothing: the page's sentence says so


# -- a check is defined once: the summary runs the mask page's check functions -------------------
# calls per mistake of the one-pass code, and per version of the tiled code (which gives no weights)
CHECK_FUNCTIONS = {"leak_probe": (2, 2), "recompute_check": (1, 1), "weights_check": (1, 0)}


def how_the_checks_are_run(module, monkeypatch) -> list[str]:
    """What is wrong with how ``module`` (the summary's book side) runs its checks: a check it does not
    leave to the mask page's functions, or a result that disagrees with the mask page's definition."""
    called: collections.Counter = collections.Counter()
    for name in CHECK_FUNCTIONS:
        real = getattr(mask, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            called[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(mask, name, spy)
    facts = module.checks_facts()["forward"]
    tilings = len(module.TILE_MISTAKES) + 1  # the right tiling too
    expected = {
        name: one_pass * len(module.MISTAKES) + tiles * tilings
        for name, (one_pass, tiles) in CHECK_FUNCTIONS.items()
    }
    problems = [
        f"{name} called {called[name]} times, not {expected[name]}"
        for name in CHECK_FUNCTIONS
        if called[name] != expected[name]
    ]
    # The mask page's cache check compares with a correct full recomputation: it sees a missing causal
    # rule, which a recomputation by the same wrong code cannot.
    if not facts["忘了因果规则"]["与正确的整段重算一致"]:
        problems.append("the cache check does not catch a forgotten causal rule")
    return problems


def test_the_summary_runs_the_mask_pages_checks(monkeypatch):
    assert how_the_checks_are_run(summary, monkeypatch) == []


def test_a_summary_that_recomputes_with_its_own_code_is_caught(monkeypatch, tmp_path):
    # Planted: the cache check compares the cached rows with the same code run without a cache, as the
    # summary once did; the mask page's check is not called and the missing causal rule goes unseen.
    source = Path(summary.__file__).read_text(encoding="utf-8")
    right = "    cache = mask.recompute_check(runner(mistake, PAST, None), Q, Q, V, PAST)\n"
    planted = (
        "    own = attend(mistake, Q, Q, V, 0, None)[1][PAST:]\n"
        "    cached = runner(mistake, PAST, None)(Q[PAST:], Q, V)\n"
        '    cache = {"differ": [i for i, (a, b) in enumerate(zip(cached, own)) if a != b]}\n'
    )
    assert right in source
    (tmp_path / "planted_summary.py").write_text(source.replace(right, planted), encoding="utf-8")
    module = load_module(tmp_path / "planted_summary.py", "planted_summary")
    problems = how_the_checks_are_run(module, monkeypatch)
    assert any(p.startswith("recompute_check called") for p in problems), problems
    assert "the cache check does not catch a forgotten causal rule" in problems


# -- what the checks table shows, and the sentences under it ------------------------------------------
def test_the_table_is_what_the_checks_found():
    facts = summary.checks_facts()
    rows = {row[0]: row[1:] for row in rows_of(summary.checks(), "tbl_checks")}
    for mistake, caught in facts["forward"].items():
        assert rows[mistake][:4] == ["认出" if hit else "—" for hit in caught.values()], mistake
    assert rows["正确的写法"] == ["—"] * 6
    assert rows[summary.BACKWARD_MISTAKE] == ["只查前向"] * 4 + ["认出", "只查分块"]
    for name, caught in facts["tiles"].items():
        if name != "正确的写法":
            cells = [caught[c] for c in ("leak", "pad", "cache")]
            assert rows[name] == [
                *("认出" if hit else "—" for hit in cells),
                "没有权重",
                "只查反向",
            ] + ["认出" if caught["tiled"] else "—"], name
    # what the page says under the table, read from the facts
    assert summary.caught_by(facts, "全屏蔽的行填大负数") == ["不泄漏（改 PAD 的 V）"]
    assert summary.caught_by(facts, "全屏蔽的行照常做 softmax（−∞）") == ["权重有限、行和为 1"]
    assert "与正确的整段重算一致" in summary.caught_by(facts, "忘了因果规则")


def checks_with(monkeypatch, facts: dict):
    """The checks section run on ``facts`` planted in place of what the checks found."""
    monkeypatch.setattr(summary, "checks_facts", lambda: facts)
    return summary.checks()


@pytest.mark.parametrize(
    "mistake, check, fact",
    [
        ("有缓存时把行号当位置", "不泄漏（改后面的 V）", "leak_probe_misses_row_index"),
        ("有缓存时把行号当位置", "权重有限、行和为 1", "each_check_catches_one_alone"),
        (
            "全屏蔽的行填大负数",
            "权重有限、行和为 1",
            "only_pad_probe_catches_pad_read_and_big_fill",
        ),
        ("把 PAD 当内容读", "与正确的整段重算一致", "only_pad_probe_catches_pad_read_and_big_fill"),
        (
            "全屏蔽的行照常做 softmax（−∞）",
            "不泄漏（改 PAD 的 V）",
            "only_weights_check_catches_nan",
        ),
        ("忘了因果规则", "与正确的整段重算一致", "recompute_catches_causal_and_row_index"),
        ("正确的写法", "权重有限、行和为 1", "right_passes_every_check"),
    ],
)
def test_each_sentence_under_the_table_stops_the_build_when_its_fact_turns(
    monkeypatch, mistake, check, fact
):
    facts = summary.checks_facts()
    assert all(
        summary.sentence_facts(facts).values()
    )  # the facts of this build: every sentence holds
    turned = copy.deepcopy(facts)
    turned["forward"][mistake][check] = not turned["forward"][mistake][check]
    with pytest.raises(ValueError, match=f"小结一页「哪项检查认得出哪种错误」.*{fact}"):
        checks_with(monkeypatch, turned)


def test_the_conventions_cells_follow_the_observations():
    seen = copy.deepcopy(conventions.observed())
    before = summary.conventions_rows(seen)
    seen["cpu"]["torch"]["sdpa"]["bool_true"] = "forbidden"
    seen["cpu"]["jax"]["dot_product_attention"]["is_causal"] = "bottom-right"
    seen["cpu"]["keras"]["fully_masked"]["float32"]["fused"] = "nan"
    after = summary.conventions_rows(seen)
    rows = {row[0]: row[1:] for row in after}
    assert rows["布尔 True 表示"][0] == conventions.TRUE_MEANS["forbidden"] != before[0][1]
    assert rows["因果标志（查询比 Key 少时）"][3] == "`is_causal`：右下对齐" != before[2][4]
    (masked,) = [cells for name, cells in rows.items() if name.startswith("全屏蔽的行（CPU 上")]
    assert masked[4].startswith(f"{conventions.KERAS_PATHS['fused']}：NaN")
    # each fully masked cell names the mask form or the path it was observed on
    assert "布尔的 `attn_mask`、−∞ 的浮点 `attn_mask`：全 0" in masked[0]
    assert "填 `finfo.min` 的浮点 `attn_mask`：平均读所有 Key" in masked[0]
    assert masked[1] == (
        "慢路径：返回权重 NaN，`need_weights=False` 全 0；快路径：返回权重 NaN，`need_weights=False` NaN"
    )
    assert masked[3] == "布尔的 `mask`：平均读所有 Key；−∞ 的 `bias`：NaN"
    seen["cpu"]["jax"]["fully_masked_bias"]["float32"] = "uniform"
    joined = {row[0]: row[1:] for row in summary.conventions_rows(seen)}
    (masked,) = [cells for name, cells in joined.items() if name.startswith("全屏蔽的行（CPU 上")]
    assert masked[3] == "布尔的 `mask`、−∞ 的 `bias`：平均读所有 Key"
    # the JAX float mask goes through bias, the boolean mask through mask (as the mask page says)
    assert rows["浮点 mask"][3].startswith("`bias`：")
    # Every interface says where it was observed or what it cites, with the library's version.
    where = rows["布尔、浮点与因果标志的观察在哪里做的"]
    assert all(where) and where[0].startswith("PyTorch 2.") and "cite" in where[2]


@pytest.mark.build
def test_the_summary_page_comes_last_and_shows_its_three_tables(book_html):
    from reading import chapter_pages

    assert chapter_pages(book_html)[-1] == "ch02/summary.html"
    article = article_of(book_html, "ch02/summary.html")
    tables = article.find_all("table")
    assert len(tables) == 3
    rules = table_rows(tables[0])
    assert [r[0] for r in rules[1:]] == list(summary.RULES)
    assert all(a.get("href") for a in tables[2].find_all("a")), (
        "the checks table links to where each is taught"
    )


def test_the_tiled_mistakes_pass_the_leak_probe_and_fail_the_one_pass_comparison():
    tiles = summary.checks_facts()["tiles"]
    assert not any(tiles["正确的写法"].values())
    for name in summary.TILE_MISTAKES:
        assert not tiles[name]["leak"] and tiles[name]["tiled"], name
    assert tiles["分块：块内按行号判断因果"]["cache"]  # the row index shows with a cache


def test_the_skipped_blocks_column_counts_the_empty_blocks():
    rows = {row[0]: row for row in rows_of(summary.rules(), "tbl_rules")}
    assert rows["因果"][4] == "3 / 9" and rows["PAD"][4] == "0 / 9"  # 6 positions in blocks of 2


@pytest.mark.parametrize(
    "tiling, check, fact",
    [
        ("分块：跳过部分可见的块", "leak", "tiled_mistakes_unseen_but_by_one_pass_comparison"),
        ("分块：m = −∞ 时没有保护", "cache", "recompute_catches_three_tilings"),
        ("分块：m = −∞ 时没有保护", "tiled", "only_one_pass_comparison_catches_no_guard"),
        ("分块：旧的 l、O 没有重新缩放", "cache", "recompute_catches_three_tilings"),
    ],
)
def test_the_sentence_on_the_tiled_mistakes_stops_the_build_when_its_fact_turns(
    monkeypatch, tiling, check, fact
):
    facts = summary.checks_facts()
    turned = copy.deepcopy(facts)
    turned["tiles"][tiling][check] = not turned["tiles"][tiling][check]
    with pytest.raises(ValueError, match=fact):
        checks_with(monkeypatch, turned)


def test_a_fast_path_not_observed_stops_the_libraries_section(monkeypatch):
    seen = copy.deepcopy(conventions.observed())
    seen["cpu"]["torch"]["mha_fast_path"]["is_causal_ran_fast_path"] = False
    monkeypatch.setattr(conventions, "observed", lambda: seen)
    with pytest.raises(ValueError, match="小结一页「各库的约定」.*mha_fast_path_ran"):
        summary.libraries()


def test_another_rules_example_stops_the_sentences_it_falsifies(monkeypatch):
    # the input box says 「前后两篇文档各占一半」: planted as the teaching constant, other documents stop it
    monkeypatch.setitem(summary.tn.RULES_EXAMPLE, "doc_ids", [0, 0, 1, 1, 1, 1])
    with pytest.raises(ValueError, match="小结一页「可见性规则」.*two_documents_half_each"):
        summary.rules()
