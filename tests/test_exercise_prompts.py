"""Every ``>>>`` example an exercise prompt shows passes, exactly as shown, against the reference solution.

A prompt that says 「下面的例子应当原样通过」 promises that the reader's function, tried with ``doctest`` on
the example the page shows, can pass. The test reads the example from the built HTML (what the reader
sees and copies, after Sphinx has done what it does to a ``pycon`` block) and runs it as a doctest, with no
option the page does not show, in the namespace of the file that the exercise's solution includes
(``code/02_exercises_<page>.py``). Review 2026-12d W2: the examples lost their
``# doctest: +IGNORE_EXCEPTION_DETAIL`` on the way to the page, so a reader's own wording failed them.
"""

from __future__ import annotations

import doctest
import importlib
import re

import pytest
from conftest import ROOT, article_of
from reading import PARSER

PAGES = sorted(path.stem for path in (ROOT / "book" / "ch02").glob("*.md"))
EXERCISE = re.compile(r"^::::\{exercise\}[^\n]*\n:label: (\S+)\n(.*?)^::::$", re.M | re.S)
INCLUDE = re.compile(r"^```\{literalinclude\} \.\./\.\./code/(\S+)\n", re.M)


def solution_module(page: str, label: str):
    """The module of the file that the solution of exercise ``label`` on ``page`` includes."""
    text = (ROOT / "book" / "ch02" / f"{page}.md").read_text(encoding="utf-8")
    solution = re.search(rf"^::::\{{solution\}} {re.escape(label)}\n(.*?)^::::$", text, re.M | re.S)
    files = set(INCLUDE.findall(solution.group(1)))
    assert len(files) == 1, (page, label, files)
    return importlib.import_module(files.pop().removesuffix(".py"))


def shown_examples(article) -> dict[str, list[str]]:
    """The text of every block with a ``>>>`` example, per exercise id, as the page shows it."""
    found = {}
    for exercise in article.select("div.exercise"):
        blocks = [pre.get_text() for pre in exercise.select("pre") if ">>>" in pre.get_text()]
        if blocks:
            found[exercise["id"]] = blocks
    return found


def failures(text: str, module, name: str) -> list[str]:
    """Run ``text`` as a doctest in ``module``'s namespace, with no option flag beyond what it shows;
    what failed, as doctest reports it."""
    test = doctest.DocTestParser().get_doctest(text, dict(vars(module)), name, name, 0)
    report = []
    runner = doctest.DocTestRunner(verbose=False, optionflags=0)
    runner.run(test, out=report.append)
    return report


def exercises_with_examples() -> list:
    """(page, exercise label) of every exercise whose prompt, in the page's source, shows an example."""
    found = []
    for page in PAGES:
        text = (ROOT / "book" / "ch02" / f"{page}.md").read_text(encoding="utf-8")
        for label, body in EXERCISE.findall(text):
            if ">>>" in body or "_doctest" in body:  # typed in the page, or glued from a docstring
                found.append(pytest.param(page, label, id=f"{page}:{label}"))
    return found


@pytest.mark.build
@pytest.mark.parametrize(("page", "label"), exercises_with_examples())
def test_every_example_an_exercise_shows_passes_as_shown(book_html, page, label):
    shown = shown_examples(article_of(book_html, f"ch02/{page}.html"))
    assert label in shown, f"{page}: the prompt of {label} shows no >>> example"
    module = solution_module(page, label)
    for block in shown[label]:
        assert failures(block, module, label) == [], block


@pytest.mark.build
def test_every_prompt_that_shows_an_example_is_checked(book_html):
    checked = {param.id for param in exercises_with_examples()}
    for page in PAGES:
        shown = shown_examples(article_of(book_html, f"ch02/{page}.html"))
        assert {f"{page}:{label}" for label in shown} <= checked, page


def test_the_check_fails_an_example_that_drops_its_directive():
    """Planted: the shown example of 练习 2.3.3 without its directive, and a reader's own wording."""
    ex = importlib.import_module("02_exercises_scaling")
    own_words = ex.__dict__ | {"shifted_softmax": own_wording(ex.shifted_softmax)}
    with_flag = (
        ">>> shifted_softmax([])  # doctest: +IGNORE_EXCEPTION_DETAIL\n"
        "Traceback (most recent call last):\n...\nValueError: values 不能为空\n"
    )
    without = with_flag.replace("  # doctest: +IGNORE_EXCEPTION_DETAIL", "")
    reader = type(ex)("reader")
    reader.__dict__.update(own_words)
    assert failures(with_flag, reader, "planted") == []
    assert failures(without, reader, "planted") != []
    assert failures(">>> shifted_softmax([0.0, 0.0])\n[0.5, 0.4]\n", ex, "planted") != []


def own_wording(function):
    """``function`` with its ValueError reworded, as a reader who writes their own message would."""

    def reworded(*args):
        try:
            return function(*args)
        except ValueError:
            raise ValueError("输入为空") from None

    return reworded


def test_the_check_finds_the_examples_of_a_planted_page():
    from bs4 import BeautifulSoup

    html = (
        '<article><div class="exercise" id="ex-a"><pre>&gt;&gt;&gt; 1 + 1\n3\n</pre></div>'
        '<div class="exercise" id="ex-b"><p>no example</p></div></article>'
    )
    shown = shown_examples(BeautifulSoup(html, PARSER).article)
    assert shown == {"ex-a": [">>> 1 + 1\n3\n"]}
    assert failures(shown["ex-a"][0], importlib.import_module("math"), "planted") != []
