"""Code that reads: no statement packs several into one, in code/, book/ and tests/.

`ruff check` already stops a second statement on a line and a lambda bound to a name; `ruff format` decides
the layout. What neither sees, this file checks, on the Python files, on the Python cells of the pages and on
every ``>>>`` example of a docstring:

- an assignment packed into tuples, ``a, b = 1, 2``, where one assignment per line would mean the same (a
  simultaneous update, ``a, b = b, a + b``, reads a name it assigns and is left alone);
- an expression statement that is a tuple of calls, ``f(), g()``;
- a doctest example that is a tuple of calls, ``>>> f(1), g(2)``: one call per example, so that a reader
  sees each result beside the call that made it.

The teaching files (``code/02_*.py``, the listings the pages show) are held to two more rules: no names
unpacked from a generator, comprehension or ``map`` over a written-out tuple (``q, k = (f(x) for x in (a,
b))`` is ``q = f(a)`` and ``k = f(b)`` packed), and no ``# fmt: skip`` / ``# fmt: off`` anywhere in
``code/``: the formatter lays the code out, not a line count.
"""

from __future__ import annotations

import ast
import doctest
import re
from pathlib import Path

from conftest import ROOT

TEACHING = sorted((ROOT / "code").glob("02_*.py"))
SOURCES = [
    path
    for top in ("code", "book", "tests")
    for path in sorted((ROOT / top).rglob("*.py"))
    if "__pycache__" not in path.parts
]
PAGES = sorted((ROOT / "book").rglob("*.md"))
# A MyST code cell: its fence, its options (":tags: …") and its Python source.
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n((?::[^\n]*\n)*)(.*?)^```", re.M | re.S)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _calls(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _is_packed(targets: ast.AST, value: ast.AST) -> bool:
    """``a, b = 1, 2``: a tuple (or list) of targets from a tuple of values, element for element, where
    no value reads a name that a target assigns (then the order of one assignment per line would matter)."""
    sequences = (ast.Tuple, ast.List)
    if not (isinstance(targets, sequences) and isinstance(value, sequences)):
        return False
    if len(targets.elts) != len(value.elts):
        return False
    if any(isinstance(e, ast.Starred) for e in targets.elts + value.elts):
        return False
    return not _names(targets) & _names(value)


def _is_tuple_of_calls(node: ast.AST) -> bool:
    """An expression that is a tuple of two or more parts of which at least two call something."""
    if not isinstance(node, ast.Tuple) or len(node.elts) < 2:
        return False
    return sum(_calls(e) for e in node.elts) >= 2


def packed_statements(source: str) -> list[tuple[int, str]]:
    """The (line, kind) of each packed assignment and each expression statement that is a tuple of calls.

    >>> packed_statements("a, b = 1, 2")
    [(1, 'packed assignment')]
    >>> packed_statements("a, b = b, a + b")
    []
    >>> packed_statements("f(1), g(2)")
    [(1, 'tuple of calls')]
    >>> packed_statements("w, out = attention(q, k, v)")
    []
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign):
            for targets in node.targets:
                if _is_packed(targets, node.value):
                    found.append((node.lineno, "packed assignment"))
        elif isinstance(node, ast.Expr) and _is_tuple_of_calls(node.value):
            found.append((node.lineno, "tuple of calls"))
    return found


def _over_a_written_tuple(value: ast.AST, n: int) -> bool:
    """A generator, comprehension or ``map`` whose iterable is a tuple or list of ``n`` written items."""
    sequences = (ast.Tuple, ast.List)
    if isinstance(value, ast.GeneratorExp | ast.ListComp) and len(value.generators) == 1:
        iterable = value.generators[0].iter
        return isinstance(iterable, sequences) and len(iterable.elts) == n
    if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "map":
        return any(isinstance(a, sequences) and len(a.elts) == n for a in value.args[1:])
    return False


def packed_by_a_loop(source: str) -> list[int]:
    """The lines of names unpacked from a generator, comprehension or ``map`` over a written tuple.

    >>> packed_by_a_loop("q, k = (f(x) for x in (a, b))")
    [1]
    >>> packed_by_a_loop("q, k, v = map(f, (a, b, c), names)")
    [1]
    >>> packed_by_a_loop("q, k = (f(x) for x in pair)")
    []
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign):
            for targets in node.targets:
                if isinstance(targets, ast.Tuple | ast.List) and _over_a_written_tuple(
                    node.value, len(targets.elts)
                ):
                    found.append(node.lineno)
    return found


def layout_switches(source: str) -> list[int]:
    """The lines that switch the formatter off: ``# fmt: skip``, ``# fmt: off``.

    >>> layout_switches("x = [1,\\n     2]  # fmt: skip\\n")
    [2]
    """
    lines = source.splitlines()
    return [n for n, line in enumerate(lines, start=1) if re.search(r"#\s*fmt:\s*(skip|off)", line)]


def _docstrings(tree: ast.AST):
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for node in ast.walk(tree):
        if isinstance(node, kinds):
            text = ast.get_docstring(node, clean=False)
            if text is not None:
                yield node.body[0].lineno, text


def packed_examples(source: str) -> list[tuple[int, str]]:
    """The (line, source) of each ``>>>`` example in a docstring that is a tuple of calls or packs an
    assignment; the line is the docstring's first line plus the example's.

    >>> packed_examples("'''\\n>>> g(1), g(2)\\n'''")
    [(2, 'g(1), g(2)')]
    >>> packed_examples("'''\\n>>> g(1)\\n>>> g(2)\\n'''")
    []
    """
    found = []
    parser = doctest.DocTestParser()
    for line, text in _docstrings(ast.parse(source)):
        for example in parser.get_examples(text):
            try:
                packed = packed_statements(example.source)
            except SyntaxError:  # an example that shows a syntax error on purpose
                continue
            if packed:
                found.append((line + example.lineno, example.source.strip()))
    return found


def cells(page_text: str) -> list[tuple[int, str]]:
    """The (first line, Python source) of each code cell of a MyST page; IPython's magics left out.

    >>> cells("x\\n```{code-cell} ipython3\\n:tags: [remove-cell]\\n\\na = 1\\n```\\n")
    [(3, '\\na = 1\\n')]
    """
    found = []
    for match in CODE_CELL.finditer(page_text):
        first = page_text.count("\n", 0, match.start(2)) + 1
        lines = match.group(2).splitlines(keepends=True)
        python = "".join("\n" if line.lstrip().startswith(("%", "!")) else line for line in lines)
        found.append((first - 1, python))
    return found


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def packed_in(paths: list[Path]) -> dict[str, list]:
    """Every file with a packed statement or a packed docstring example, with what was found where."""
    found = {}
    for path in paths:
        source = path.read_text(encoding="utf-8")
        packed = packed_statements(source) + packed_examples(source)
        if packed:
            found[_name(path)] = packed
    return found


def looped_in(paths: list[Path]) -> dict[str, list[int]]:
    """Every file that unpacks names from a loop over a written tuple, with the lines."""
    found = {_name(path): packed_by_a_loop(path.read_text(encoding="utf-8")) for path in paths}
    return {name: lines for name, lines in found.items() if lines}


def switched_in(paths: list[Path]) -> dict[str, list[int]]:
    """Every file that switches the formatter off, with the lines."""
    found = {_name(path): layout_switches(path.read_text(encoding="utf-8")) for path in paths}
    return {name: lines for name, lines in found.items() if lines}


# One test per rule, listing every file that breaks it.
def test_no_statement_is_packed():
    assert len(SOURCES) > 100
    assert packed_in(SOURCES) == {}


def test_no_teaching_file_packs_names_through_a_loop():
    assert len(TEACHING) > 10
    assert looped_in(TEACHING) == {}


def test_the_formatter_lays_out_all_of_code():
    code = sorted((ROOT / "code").rglob("*.py"))
    assert len(code) > 30
    assert switched_in(code) == {}


def test_no_statement_of_a_page_cell_is_packed():
    found = {}
    for page in PAGES:
        for first, python in cells(page.read_text(encoding="utf-8")):
            packed = [(first + line, kind) for line, kind in packed_statements(python)]
            if packed:
                found.setdefault(_name(page), []).extend(packed)
    assert len(PAGES) > 10
    assert found == {}


# Planted instances: each kind is found where it is, and what reads the same one per line is not flagged.
PLANTED = '''
"""A module.

>>> first(1), second(2)
(1, 2)
>>> one = first(1)
"""

low, high = 0, 10
low, high = high, low
x = y = 0
rows, cols = shape(a)


def f(a):
    """Return a.

    >>> f(1)
    1
    >>> g(1), f(2)
    (1, 2)
    >>> [round(v, 2) for v in h(1)]
    [1.0]
    """
    a[0], a[1] = a[1], a[0]
    print(a), print(low)
    (a, low)
    q, k = (abs(x) for x in (a, low))
    return a


ROWS = [1,
        2]  # fmt: skip
'''


def test_planted_packed_assignments_are_found():
    assert [line for line, kind in packed_statements(PLANTED) if kind == "packed assignment"] == [9]


def test_a_planted_tuple_of_calls_is_found():
    assert [line for line, kind in packed_statements(PLANTED) if kind == "tuple of calls"] == [26]


def test_planted_doctest_lines_with_two_calls_are_found():
    assert packed_examples(PLANTED) == [(4, "first(1), second(2)"), (20, "g(1), f(2)")]


def test_names_planted_through_a_loop_are_found():
    assert packed_by_a_loop(PLANTED) == [28]


def test_a_planted_formatter_switch_is_found():
    assert layout_switches(PLANTED) == [33]


def test_a_planted_packed_line_in_a_page_cell_is_found():
    page = (
        "# 页\n\n```{code-cell} ipython3\n:tags: [remove-cell]\n\nx = 1\na, b = f(1), g(2)\n```\n"
    )
    assert [
        (first + line, kind)
        for first, python in cells(page)
        for line, kind in packed_statements(python)
    ] == [(7, "packed assignment")]


def test_the_planted_module_is_listed_by_each_rule_of_the_files(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(PLANTED, encoding="utf-8")
    assert packed_in([planted]) == {
        "planted.py": [
            (9, "packed assignment"),
            (26, "tuple of calls"),
            (4, "first(1), second(2)"),
            (20, "g(1), f(2)"),
        ]
    }
    assert looped_in([planted]) == {"planted.py": [28]}
    assert switched_in([planted]) == {"planted.py": [33]}
