"""A solution shown for an exercise that says 「只用标准库」 runs as shown, with the standard library only.

Each page includes its reference solution from ``code/02_exercises_<page>.py`` (``:pyobject:``, or
``:start-at:`` / ``:end-before:`` or ``:end-at:``). A reader who copies the listing has nothing else: so the shown code
may use Python's built-ins and the standard library's modules, and the names it defines itself, but no
other name of its file — not ``att`` (``02_attention``), not numpy, not a constant defined above it.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import re
import sys
import types

import pytest
from conftest import ROOT

PAGES = sorted((ROOT / "book" / "ch02").glob("*.md"))
EXERCISE = re.compile(r"^::::\{exercise\}[^\n]*\n:label: (\S+)\n(.*?)^::::$", re.M | re.S)
INCLUDE = re.compile(r"^```\{literalinclude\} \.\./\.\./code/(\S+)\n((?::[^\n]*\n)*)```", re.M)


def solution_of(page_text: str, label: str) -> str:
    """The text of the solution block of exercise ``label``."""
    match = re.search(
        rf"^::::\{{solution\}} {re.escape(label)}\n(.*?)^::::$", page_text, re.M | re.S
    )
    assert match, f"no solution for {label}"
    return match.group(1)


def shown_code(file: str, options: str) -> str:
    """What a literalinclude with these options shows of ``code/<file>``."""
    source = (ROOT / "code" / file).read_text(encoding="utf-8")
    option = dict(re.findall(r"^:([\w-]+):\s*(.*)$", options, re.M))
    if "pyobject" in option:
        tree = ast.parse(source)
        (node,) = [n for n in tree.body if getattr(n, "name", None) == option["pyobject"]]
        lines = source.splitlines(keepends=True)
        return "".join(lines[node.lineno - 1 : node.end_lineno])
    start = source.index(option["start-at"])
    if "end-at" in option:  # up to the end of the line that holds it
        end = source.index(option["end-at"], start)
        return source[start : source.index("\n", end) + 1]
    return source[start : source.index(option["end-before"], start)]


def standard_library_only() -> list[tuple[str, str, str]]:
    """(page, file, shown code) of every solution of an exercise that says 「标准库」."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for label, body in EXERCISE.findall(text):
            if "标准库" not in body:
                continue
            for file, options in INCLUDE.findall(solution_of(text, label)):
                found.append((f"{page.stem}:{label}", file, shown_code(file, options)))
    return found


def foreign_names(code: str, module: types.ModuleType) -> list[str]:
    """Names the shown code reads that a reader who copies it does not have.

    >>> m = types.ModuleType("m")
    >>> m.math = importlib.import_module("math")
    >>> foreign_names("def f(x):\\n    return math.sqrt(x) + len([x])\\n", m)
    []
    >>> m.att = types.ModuleType("02_attention")
    >>> m.LIMIT = 3
    >>> foreign_names("def f(x):\\n    att.check(x)\\n    return LIMIT\\n", m)
    ['LIMIT', 'att']
    """
    tree = ast.parse(code)
    defined = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    defined |= {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    defined |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments) for a in _args(n)}
    defined |= {n.name for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler) and n.name}
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    foreign = set()
    for name in read - defined - set(dir(builtins)):
        value = getattr(module, name, None)
        stdlib = isinstance(value, types.ModuleType) and name in sys.stdlib_module_names
        if not stdlib:
            foreign.add(name)
    return sorted(foreign)


def _args(node: ast.arguments) -> list[ast.arg]:
    every = [*node.posonlyargs, *node.args, *node.kwonlyargs, node.vararg, node.kwarg]
    return [a for a in every if a is not None]


CASES = standard_library_only()


def test_the_exercises_that_say_standard_library_only_are_found():
    # One on each of these pages at least (a new page may add its own).
    pages = {"mask", "scaling", "multihead", "rope", "backprop", "training", "costs", "tensors"}
    assert pages <= {case.split(":")[0] for case, _, _ in CASES}, [c for c, _, _ in CASES]


@pytest.mark.parametrize("case, file, code", CASES, ids=[c for c, _, _ in CASES])
def test_a_standard_library_solution_needs_nothing_but_what_it_shows(case, file, code):
    module = importlib.import_module(file.removesuffix(".py"))
    assert foreign_names(code, module) == [], f"{case}: the shown solution reads names it lacks"


def test_a_solution_that_calls_02_attention_is_caught():
    module = importlib.import_module("02_exercises_backprop")
    planted = "def rowsum_correction(d_out, out):\n    return att.as_matrix(d_out, 'd_out')\n"
    assert foreign_names(planted, module) == ["att"]
