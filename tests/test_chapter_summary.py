"""Tests of book/chapter/summary.py and the summary page: each table's cells are the facts they claim to be.

The predicates the page prints are checked against the teaching code's rules (and a wrong predicate is
refused); each deliberate mistake is caught by the one check the page says catches it; the conventions
cells follow the recorded observations when an observation changes.
"""

from __future__ import annotations

import copy

import pytest
from conftest import article_of, table_rows

from chapter import conventions, summary


@pytest.mark.parametrize("name", list(summary.RULES))
def test_every_printed_predicate_is_the_teaching_codes_rule(name):
    assert summary.predicate_agrees(name)


def test_a_predicate_that_differs_from_the_code_is_refused(monkeypatch):
    rules = dict(summary.RULES)
    says, _, rule, label = rules["滑动窗口"]
    rules["滑动窗口"] = (
        says,
        "q - w <= k <= q",
        rule,
        label,
    )  # one key too many: the off-by-one window
    monkeypatch.setattr(summary, "RULES", rules)
    assert not summary.predicate_agrees("滑动窗口")
    with pytest.raises(AssertionError, match="滑动窗口"):
        summary.rules_table()


def test_the_counts_column_counts_the_rules_table():
    table = summary.rules_table()
    causal_pad = next(row for row in table.rows if row[0] == "因果 + PAD")
    assert causal_pad[3].split() == [str(sum(r)) for r in summary.rule_table("因果 + PAD")]
    assert (
        causal_pad[3].split()[0] == "0"
    )  # the PAD query reads nothing: the page's sentence says so


def test_each_mistake_is_caught_by_exactly_one_check_and_the_right_version_by_none():
    facts = summary.checks_facts()
    forward = facts["forward"]
    assert not any(forward["正确的写法"].values()) and not facts["gradient"]["正确的写法"]
    for name, caught in forward.items():
        if name != "正确的写法":
            assert sum(caught.values()) == 1, (name, caught)
    # Each forward check catches a different mistake, and the gradient check the backward one.
    assert (
        len(
            {
                next(c for c, hit in row.items() if hit)
                for n, row in forward.items()
                if n != "正确的写法"
            }
        )
        == 4
    )
    assert facts["gradient"]["反向传播漏掉修正项"]


def test_the_sentence_under_the_checks_table_holds():
    forward = summary.checks_facts()["forward"]
    assert not forward["有缓存时把行号当位置"]["泄漏探针（改后面的 V）"]
    assert not forward["忘了因果规则"]["缓存对整段重算"]


def test_the_conventions_cells_follow_the_observations():
    seen = copy.deepcopy(conventions.observed())
    before = summary.conventions_table(seen).rows
    seen["cpu"]["torch"]["sdpa"]["bool_true"] = "forbidden"
    seen["cpu"]["jax"]["dot_product_attention"]["is_causal"] = "bottom-right"
    seen["cpu"]["keras"]["fully_masked"]["float32"]["fused"] = "nan"
    after = summary.conventions_table(seen).rows
    rows = {row[0]: row[1:] for row in after}
    assert rows["布尔 True 表示"][0] == conventions.TRUE_MEANS["forbidden"] != before[0][1]
    assert rows["因果标志（查询比 Key 少时）"][3] == "`is_causal`：右下对齐" != before[2][4]
    assert rows["全屏蔽的行（float32）"][4].startswith("融合路径：NaN")
    # Every interface says where it was observed or what it cites, with the library's version.
    where = rows["观察在哪里做的"]
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
    rows = {row[0]: row for row in summary.rules_table().rows}
    assert rows["因果"][4] == "3 / 9" and rows["PAD"][4] == "0 / 9"  # 6 positions in blocks of 2
