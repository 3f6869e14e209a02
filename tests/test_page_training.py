"""The training page (book/ch02/training.md): its own numbers and sentences in the built HTML.

The page trains both models at build time (seed 0) and evaluates them on new sequences (seed 1); these
tests recompute what the page states with the same seeds and look for it in the built page. What every
page must have is tested in tests/test_pages.py, the sentences on other seeds in tests/test_chapter_training.py.
"""

from __future__ import annotations

import importlib
import math
import re

import pytest
from conftest import article_of, flat, table_rows

from chapter import fmt
from chapter import training as page

tr = importlib.import_module("02_training")
PAGE = "ch02/training.html"


@pytest.mark.build
def test_the_loss_table_is_the_build_time_runs(book_html):
    article = article_of(book_html, PAGE)
    text = article.get_text()
    rows = table_rows(article)
    s = page.summary()
    for rule in tr.RULES:
        assert [page.RULE_NAMES[rule]] + [
            fmt.difference(s[rule][k]) for k in ("train", "full", "use")
        ] + [fmt.percent(s[rule]["accuracy"])] in rows
    assert fmt.difference(s["none"]["train"]).endswith("× 10⁻⁵")  # printed as such, not as 0.0000
    assert fmt.fmt(math.log(tr.VOCAB)) in text and fmt.percent(1 / tr.VOCAB) in text


@pytest.mark.build
def test_every_glued_text_is_on_the_page(book_html):
    # The page's prose holds the words; the book side's facts (text glued with {glue:text}) are in it.
    sections = [
        page.task,
        page.settings,
        page.losses,
        page.generation,
        page.row_index,
        page.checks,
        page.maps,
        page.floor,
        page.exercises,
        page.ahead,
    ]
    glued = {
        name: value
        for section in sections
        for name, value in section().values.items()
        if type(value) is str
    }
    assert len(glued) > 60
    text = flat(article_of(book_html, PAGE).get_text())
    assert [name for name, value in glued.items() if flat(value) not in text] == []
    # the results of this run alone are said to be this run's (这一次) where the reader sees them
    for key in ("causal_acc", "x5_share", "none_worst_loss"):
        clause = flat(glued[key])
        assert any("这一次" in c and clause in c for c in re.split("[。；]", text)), key


@pytest.mark.build
def test_the_leak_check_and_the_floor_are_on_the_page(book_html):
    text = article_of(book_html, PAGE).get_text()
    leak = page.checks().values
    assert (
        f"最大变化是 {leak['leak_causal']}）" in text and f"最多变了 {leak['leak_none']}。" in text
    )
    assert leak["leak_causal"] == "0"
    assert f"本例是 {fmt.fmt(tr.loss_floor())}" in text


@pytest.mark.build
def test_the_off_by_one_exercise_shows_the_build_time_run(book_html):
    article = article_of(book_html, PAGE)
    values = page.ahead().values
    solution = article.find(id="ex-training-ahead").find_next_sibling("div")
    assert "solution" in solution["class"]
    rows = table_rows(solution)[1:]
    text = solution.get_text()
    assert rows == values["x5_table"].rows
    assert rows[::2] == page.losses().values["tbl_losses"].rows[:2]  # the two models
    assert [r[0] for r in rows] == [page.RULE_NAMES[k] for k in ("causal", tr.AHEAD, "none")]
    for name in ("x5_train", "x5_use", "x5_leak", "x5_first", "x5_worst_loss", "x5_worst_acc"):
        assert str(values[name]) in text, name
    # the solution gives the reason the rest of its run goes either way, not this run's outcome alone
    assert "换一个种子就可能不同" in text and "这一次" in text


@pytest.mark.build
def test_the_core_ends_with_what_to_remember_and_folds_the_listings(book_html):
    article = article_of(book_html, PAGE)
    last = article.select("div.admonition")[-1]
    assert "remember" in last["class"] and 3 <= len(last.find_all("li")) <= 5
    titles = [s.get_text(strip=True) for s in article.select("details > summary")]
    assert (
        all(t.startswith("深入：") for t in titles) and "深入：02_training.py 的全部代码" in titles
    )
    listings = [
        d for d in article.select("div.highlight-python") if not d.find_parent(class_="solution")
    ]
    assert listings and all(
        d.find_parent("details") for d in listings
    )  # every body listing is folded


@pytest.mark.build
def test_both_figures_are_drawn_and_the_downloads_name_02_attention(book_html):
    article = article_of(book_html, PAGE)
    assert {f.get("id") for f in article.find_all("figure")} >= {
        "fig-training-curves",
        "fig-training-maps",
    }
    assert all(
        f.find("img") is not None
        for f in article.find_all("figure")
        if f.get("id", "").startswith("fig-training")
    )
    links = [a.get("href", "") for a in article.select("a.download")]
    for name in ("02_training.py", "02_exercises_training.py", "02_attention.py"):
        assert any(href.endswith(name) for href in links), name
    assert "ch02-mask-cache" in str(article) or "mask.html#ch02-mask-cache" in str(article)
