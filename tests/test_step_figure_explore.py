"""The step-figure's ``:explore:`` option on a tiny project: HTML carries the data, LaTeX and text do not.

Same tiny project as tests/test_step_figure.py (its ``project``, ``build`` and the plain project's
builds, ``tiny_build``), with an explore function added next to the frames function. The book's own
explore states are built with its frames in tests/test_step_figure.py; the panel they drive is tested
in the browser in tests/test_explore.py.
"""

from __future__ import annotations

import json

import pytest
import test_step_figure
from bs4 import BeautifulSoup
from reading import PARSER
from step_figure.directive import explore_of
from test_step_figure import StepFigureError, build, project

tiny_build = test_step_figure.tiny_build  # the plain project's builds, shared with that module

EXPLORE = """

def explore():
    return {
        "choices": {"past": [0], "new": [1], "causal": [True, False], "pad": ["none"]},
        "start": {"past": 0, "new": 1, "pad": "none", "causal": True},
        "counts": [[[1]]],
        "words": {"title": "试一试", "tricky": "</script><!-- 也不怕"},
        "cells": ["✗ 禁止", "✓ 允许"], "mask_cells": ["0", "−∞"], "keys": ["Key 0"],
        "labels": [["行 0（绝对位置 0）"]], "prefix": [["位置 0 "]], "lost_prefix": ["行 0 "],
        "wrong_labels": ["行 0（误当位置 0）"], "text": ["", "可读 ", "Key 0", "。"],
        "sentences": [[0], [1, 2, 3]], "rows": [[1, 0, 1, 0, 0, 0, 0, 1, 0]],
        "states": [[[[[[1, [0], 1, 0, 0]]], [[[1, [0], 1, 0, 0]]]]]],
    }


def missing_key():
    data = explore()
    del data["states"]
    return data


def not_json():
    data = explore()
    data["words"]["bad"] = {1, 2}
    return data
"""


def explore_project(tmp_path, option: str | None = "tiny_figs:explore"):
    tmp_path.mkdir(exist_ok=True)
    src = project(tmp_path)
    code = tmp_path / "code"
    (code / "tiny_figs.py").write_text(
        (code / "tiny_figs.py").read_text(encoding="utf-8") + EXPLORE, encoding="utf-8"
    )
    if option:
        page = src / "index.md"
        text = page.read_text(encoding="utf-8")
        page.write_text(
            text.replace(
                ":question:", f":explore: {option}\n:explore-intro: 试一试 <b>\n:question:", 1
            ),
            encoding="utf-8",
        )
    return src


def tiny_data():
    namespace: dict = {}
    exec(EXPLORE, namespace)
    return namespace["explore"]()


def test_html_carries_the_data_in_a_hidden_container_and_loads_the_panel(tmp_path):
    app, warnings = build(explore_project(tmp_path), "html")
    assert warnings == ""
    soup = BeautifulSoup((app.outdir / "index.html").read_text(encoding="utf-8"), PARSER)
    (box,) = soup.select("[data-step-figure] .step-figure-explore")
    assert box.has_attr("hidden")  # nothing to see, nothing to press, until the script runs
    assert box["data-intro"] == "试一试 <b>"  # the page's line, escaped as an attribute
    script = box.select_one("script.step-figure-explore-data")
    assert script["type"] == "application/json"
    assert json.loads(script.string) == tiny_data()  # "</script>" inside a string did not end it
    assert "</script><!--" not in script.string
    assert [c.name for c in box.children if c.name] == ["script"]
    # A separate part after the player's help line, not inside the frames.
    figure = soup.select_one("[data-step-figure]")
    parts = [c for c in figure.children if getattr(c, "name", None)]
    assert parts[-1] is box and "step-figure-help" in parts[-2]["class"]
    head = str(soup.head)
    assert "_static/step_figure_explore.js" in head and "_static/step_figure_explore.css" in head
    assert "step_figure_explore" not in (app.outdir / "plain.html").read_text(encoding="utf-8")


def test_without_the_option_there_is_no_panel_and_no_panel_script(tiny_build):
    app, warnings = tiny_build("html")
    assert warnings == ""
    html = (app.outdir / "index.html").read_text(encoding="utf-8")
    assert "step-figure-explore" not in html and "step_figure_explore" not in html
    assert "step_figure.js" in html


@pytest.mark.parametrize("builder, suffix", [("latex", ".tex"), ("text", ".txt")])
def test_latex_and_text_leave_the_panel_out_and_are_unchanged(
    tmp_path, tiny_build, builder, suffix
):
    with_panel, warnings = build(explore_project(tmp_path), builder)
    assert warnings == ""
    without, warnings = tiny_build(builder)
    assert warnings == ""
    (out,) = (
        with_panel.outdir.glob(f"*{suffix}")
        if builder == "latex"
        else [with_panel.outdir / "index.txt"]
    )
    text = out.read_text(encoding="utf-8")
    assert "试一试" not in text and "可读" not in text and "explore" not in text
    (same,) = (
        without.outdir.glob(f"*{suffix}") if builder == "latex" else [without.outdir / "index.txt"]
    )
    assert text == same.read_text(encoding="utf-8")


def test_other_builders_leave_the_panel_out(tmp_path):
    app, warnings = build(explore_project(tmp_path), "man")
    assert warnings == ""
    assert "试一试" not in next(app.outdir.glob("*.1")).read_text(encoding="utf-8")


BAD_OPTIONS = [
    ("tiny_figs:nowhere", "tiny_figs.py has no function nowhere()"),
    ("tiny_figs:broken", "broken() failed: ZeroDivisionError"),
    ("tiny_figs:missing_key", "lacks ['states']"),
    ("tiny_figs:not_json", "is not plain JSON data"),
    ("explore", "the argument must be 'module:function'"),
]


def test_a_bad_explore_function_is_a_clear_error(tmp_path):
    """The message the build stops with (tests/test_step_figure.py shows a build stopping on one)."""
    explore_project(tmp_path)
    wrong = {}
    for option, message in BAD_OPTIONS:
        with pytest.raises(StepFigureError) as error:
            explore_of(option, tmp_path / "code", None)
        said = str(error.value)
        if not (said.startswith(f"step-figure :explore: {option}: ") and message in said):
            wrong[option] = said
    assert wrong == {}
    assert json.loads(explore_of("tiny_figs:explore", tmp_path / "code", None)) == tiny_data()
