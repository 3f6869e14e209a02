"""练习 on every mechanism page: numbered, each with a worked solution; hidden in HTML, collected in the PDF."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT, article_of, assert_axe_clean, flat

STDLIB_ONLY = "只用 Python 标准库"


def chapter_pages() -> list[str]:
    """The chapter's pages in reading order, from the toctree of book/ch02/index.md."""
    text = (ROOT / "book" / "ch02" / "index.md").read_text(encoding="utf-8")
    block = re.search(r"```\{toctree\}\n(.*?)```", text, flags=re.S).group(1)
    return [
        line.strip() for line in block.splitlines() if line.strip() and not line.startswith(":")
    ]


# The pages with exercises: every page of the chapter but its closing summary.
PAGES = [page for page in chapter_pages() if page != "summary"]


def article(book_html: Path, page: str):
    return article_of(book_html, f"ch02/{page}.html")


def title(node) -> str:
    return node.find(class_="admonition-title").get_text(" ", strip=True)


@pytest.mark.build
@pytest.mark.parametrize("page", PAGES)
def test_every_page_ends_with_exercises_each_followed_by_its_solution(book_html, page):
    art = article(book_html, page)
    last = art.find_all("h2")[-1]
    assert last.get_text(strip=True).rstrip("#") == "练习"
    section = last.parent
    exercises = section.select("div.exercise")
    assert 3 <= len(exercises) <= 5, page
    section_number = PAGES.index(page) + 2  # 2.1 is the chapter opening's own section
    for k, exercise in enumerate(exercises, start=1):
        assert re.match(rf"练习 2\.{section_number}\.{k}\b", title(exercise)), title(exercise)
        assert "输入与适用条件" in exercise.get_text(), f"{page}: 练习 {k} states no inputs"
        solution = exercise.find_next_sibling("div")
        assert "solution" in solution["class"] and "dropdown" in solution["class"]
        link = solution.find(class_="admonition-title").find("a")
        assert link["href"] == f"#{exercise['id']}"
        assert title(solution) == "解答 " + title(exercise).replace(" （", "（")


# “Which check catches which wrong implementation”: the reader matches checks to deliberately wrong versions.
# An exercise of that kind carries a label ending in -find-bug (ex-mask-find-bug …); the chapter keeps it on
# at most three pages, each with another kind of check (mask: a leak probe and decoding against a full
# recompute; multihead: how the heads are split, grouped and joined; costs: formulas against direct counts).
FIND_BUG_PAGES = 3


@pytest.mark.build
def test_the_find_the_bug_exercise_is_on_at_most_three_pages(book_html):
    found = {}
    for page in PAGES:
        for exercise in article(book_html, page).select("div.exercise"):
            name = title(exercise)
            if exercise["id"].endswith("-find-bug") or (
                "检查" in name and re.search(r"认(得|不)?出", name)
            ):
                found.setdefault(page, []).append(name)
    assert all(len(names) == 1 for names in found.values()), found
    assert 1 <= len(found) <= FIND_BUG_PAGES, found


@pytest.mark.build
def test_the_mask_exercises_show_the_computed_answers(book_html):
    import importlib

    from chapter import mask

    ex = importlib.import_module("02_exercises_mask")
    text = article(book_html, "mask").get_text()
    c = ex.decoding_checks()
    values = mask.exercises().values
    for sentence in str(values["ex1_sentences"]).splitlines():
        assert sentence.removeprefix("- ") in text
    # the solution's sentence is the page's; the build checked its fact (mask.exercises)
    assert (c["passed"], c["caught_by"]) == (["不泄漏"], ["与整段重算一致"])
    assert "两种写法都通过“不泄漏”检查；只有“与整段重算一致”一项能认出写法 B。" in text
    assert ">>> visible_counts(2, 3, 1)" in text


@pytest.mark.browser
def test_a_solution_is_hidden_until_opened_by_keyboard(open_page):
    page = open_page("ch02/mask.html")
    solution = page.locator("div.solution").first
    body = solution.locator("section").first
    button = solution.locator("button.toggle-button")
    assert not body.is_visible()
    assert button.get_attribute("aria-expanded") == "false"
    assert button.get_attribute("aria-label").startswith("显示或隐藏解答：练习 2.2.1")
    button.focus()
    page.keyboard.press("Enter")
    assert body.is_visible() and button.get_attribute("aria-expanded") == "true"
    page.keyboard.press("Enter")
    assert not body.is_visible()
    assert page.errors == []


@pytest.mark.browser
def test_without_javascript_every_solution_is_shown(open_page):
    page = open_page("ch02/mask.html", java_script_enabled=False)
    solutions = page.locator("div.solution section")
    assert solutions.count() >= 3
    assert all(solutions.nth(i).is_visible() for i in range(solutions.count()))


@pytest.mark.browser
def test_the_exercises_pass_axe(open_page):
    page = open_page("ch02/mask.html", theme="light")
    page.locator("div.solution button.toggle-button").first.click()  # one open, the others closed
    # assert_axe_clean measures only once the solution has finished fading in (conftest.settle).
    assert_axe_clean(page, "div.exercise, div.solution")


@pytest.mark.pdf
def test_the_pdf_collects_the_solutions_in_an_appendix(pages):
    toc = flat(next(p for p in pages if "目录" in p))
    assert "练习答案" in toc
    start = next(
        i for i, p in enumerate(pages) if flat(p).startswith("附录") and "练习答案" in flat(p)[:12]
    )
    appendix = flat("".join(pages[start:]))
    body = flat("".join(pages[:start]))
    for page in PAGES:
        s = PAGES.index(page) + 2
        found = re.findall(rf"解答练习2\.{s}\.(\d+)", appendix)
        assert found and found == sorted(found, key=int), page
        assert f"练习2.{s}.1" in body  # the exercise itself stays on its page
        assert f"解答练习2.{s}.1" not in body


# -- an exercise that says 只用 Python 标准库 has a solution that uses only the standard library --------------
def stdlib_only_solutions(page: str) -> list[str]:
    """The solution functions (``:pyobject:`` of the solution's listing) of the page's exercises that say
    「只用 Python 标准库」."""
    text = (ROOT / "book" / "ch02" / f"{page}.md").read_text(encoding="utf-8")
    pairs = re.findall(
        r"(:{3,}\{exercise\}.*?)\n:{3,}\n\s*(:{3,}\{solution\}.*?)\n:{3,}\n", text, flags=re.S
    )
    return [
        name
        for exercise, solution in pairs
        if STDLIB_ONLY in exercise
        for name in re.findall(r":pyobject: (\w+)", solution)
    ]


def outside_the_standard_library(module, name: str, seen: set | None = None) -> list[str]:
    """What the function ``name`` of ``module`` uses that is not the standard library: a module that is
    not standard, or a function of another file; functions of the same file are followed."""
    import ast
    import inspect
    import sys
    import types

    seen = set() if seen is None else seen
    seen.add(name)
    tree = ast.parse(inspect.getsource(getattr(module, name)).lstrip())
    used = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            used += [n for n in names if n.split(".")[0] not in sys.stdlib_module_names]
        if not isinstance(node, ast.Name) or node.id not in vars(module):
            continue
        value = vars(module)[node.id]
        if isinstance(value, types.ModuleType):
            if value.__name__.split(".")[0] not in sys.stdlib_module_names:
                used.append(value.__name__)
        elif callable(value) and getattr(value, "__module__", None) == module.__name__:
            if node.id not in seen and inspect.isfunction(value):
                used += outside_the_standard_library(module, node.id, seen)
        elif (
            callable(value)
            and (getattr(value, "__module__", None) or "builtins").split(".")[0]
            not in sys.stdlib_module_names
        ):
            used.append(f"{value.__module__}.{node.id}")
    return used


@pytest.mark.parametrize("page", PAGES)
def test_a_standard_library_exercise_has_a_standard_library_solution(page):
    import importlib

    module = importlib.import_module(f"02_exercises_{page}")
    for name in stdlib_only_solutions(page):
        assert outside_the_standard_library(module, name) == [], f"{page}: {name}"


def test_the_standard_library_check_catches_a_helper_from_the_teaching_code(tmp_path, monkeypatch):
    import importlib

    (tmp_path / "02_planted.py").write_text(
        "import importlib\nimport math\natt = importlib.import_module('02_attention')\n"
        "def helper(n):\n    return att.check_count(n, 'n')\n"
        "def plain(n):\n    return math.sqrt(n)\n"
        "def solution(n):\n    return helper(n) + plain(n)\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("02_planted")
    assert outside_the_standard_library(module, "plain") == []
    assert outside_the_standard_library(module, "solution") == ["02_attention"]


# -- a solution names its exercise as the heading does: 练习 2.3.1, never 练习 1 or 第 1 道练习 -----------------
SHORT_NAME = re.compile(r"练习\s*\d+(?![.\d])|第\s*\d+\s*道练习")


def short_exercise_names(text: str) -> list[str]:
    """Names of an exercise that are not the heading's 练习 2.x.y, in the docstrings and comments of a file."""
    import io
    import tokenize

    found = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        docstring = token.type == tokenize.STRING and token.string.lstrip("rbuf").startswith(
            ('"""', "'''")
        )
        if token.type == tokenize.COMMENT or docstring:
            found += SHORT_NAME.findall(token.string)
    return found


def test_a_short_exercise_name_is_found_in_a_docstring_or_a_comment():
    planted = (
        'def f():\n    """练习 4 的参考解。"""\n    # 第 3 道练习\n    return "练习 1 练习 2.2.4"\n'
    )
    assert short_exercise_names(planted) == ["练习 4", "第 3 道练习"]


@pytest.mark.parametrize("page", PAGES)
def test_solutions_name_their_exercise_as_the_heading_does(page):
    text = (ROOT / "code" / f"02_exercises_{page}.py").read_text(encoding="utf-8")
    assert short_exercise_names(text) == [], page
