"""Small helpers the chapter's pages use to load the teaching code and lay out its numbers.

The pages of ``book/`` import the teaching files of this folder (whose names start with the
chapter number, e.g. ``02_attention.py``) and turn their results into Markdown tables for
MyST-NB's glue. Nothing here computes a number the chapter states; it only formats them.

>>> fmt(0.0900305731), fmt(float("-inf")), fmt(0.0)
('0.0900', '−∞', '0.0000')
>>> print(md_table(["", "Key 0"], [["Query 0", "✓ 允许"]]))
|  | Key 0 |
|---|---|
| Query 0 | ✓ 允许 |
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import math
import sys
from pathlib import Path

CODE_DIR = Path(__file__).resolve().parent

ALLOWED = "✓ 允许"
FORBIDDEN = "✗ 禁止"


def load(name: str):
    """Import ``code/<name>.py`` by file name, e.g. ``load("02_attention")``.

    >>> load("02_attention").softmax([0.0])
    [1.0]
    """
    if not (CODE_DIR / f"{name}.py").is_file():
        raise ValueError(f"code/ 里没有 {name}.py")
    if str(CODE_DIR) not in sys.path:
        sys.path.insert(0, str(CODE_DIR))
    return importlib.import_module(name)


def fmt(x: float, digits: int = 4) -> str:
    """A number as the chapter prints it: fixed digits, and −∞ for a forbidden cell."""
    if x == -math.inf:
        return "−∞"
    return f"{x:.{digits}f}"


def printed(text: str) -> float:
    """The value of a number as a page prints it: ``"(-2.3395)"`` or ``"−1.5000"`` → -2.3395, -1.5.

    >>> printed("(-2.3395)"), printed("−1.5000"), printed("0"), printed("−∞")
    (-2.3395, -1.5, 0.0, -inf)
    """
    return float(text.strip().strip("()").replace("−", "-").replace("∞", "inf"))


def equals(from_printed: float, exact: float, digits: int = 4) -> str:
    """The sign between a calculation written with printed (rounded) numbers and its printed result.

    ``from_printed`` is what the printed numbers give, ``exact`` the unrounded result. When both print
    the same, the reader's pen-and-paper sum agrees and the sign is ``=``; when rounding the inputs
    moved the last digit, it is ``≈``, so that nobody is told a rounded sum is exact.

    >>> equals(0.3302 * (-1.0 - (-2.3395)), 0.44245)  # the printed factors give 0.44230…
    '≈'
    >>> equals(0.2500 * 2.0, 0.5)
    '='
    >>> equals(-1e-9, 0.0)  # both print as zero: no sign of their own
    '='
    """

    def shown(x: float) -> str:
        text = fmt(x, digits)
        return text.lstrip("-") if float(text) == 0 else text  # "-0.0000" is printed as zero

    return "=" if shown(from_printed) == shown(exact) else "≈"


def short(x: float) -> str:
    """A number as an input is written: whole numbers without decimals, others as ``fmt``.

    >>> short(10.0), short(-math.inf), short(0.25)
    ('10', '−∞', '0.2500')
    """
    return fmt(x, 0) if math.isinf(x) or float(x).is_integer() else fmt(x)


def mark(flag: bool) -> str:
    """A visibility cell in words as well as a symbol: colour never carries meaning alone."""
    return ALLOWED if flag else FORBIDDEN


def md_table(header: list[str], rows: list[list[str]]) -> str:
    """A GitHub-flavoured Markdown table (for ``{glue:md}`` with ``:format: gfm``)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def doctest_block(function) -> str:
    """The ``>>>`` examples of ``function``'s docstring as a Markdown ``pycon`` block, for a page.

    The page shows exactly the examples that ``pytest code/`` runs, prompts and expected output
    included; the copy button copies the prompt lines without their prompts.

    >>> doctest_block(short).splitlines()  # doctest: +NORMALIZE_WHITESPACE
    ['```pycon', '>>> short(10.0), short(-math.inf), short(0.25)', "('10', '−∞', '0.2500')", '```']
    """
    examples = doctest.DocTestParser().get_examples(inspect.getdoc(function) or "")
    if not examples:
        raise ValueError(f"{function.__qualname__} 的文档字符串里没有 >>> 示例")
    lines = []
    for example in examples:
        source = example.source.rstrip("\n").split("\n")
        lines += [">>> " + source[0]] + ["... " + line for line in source[1:]]
        lines += example.want.rstrip("\n").split("\n") if example.want else []
    return "```pycon\n" + "\n".join(lines) + "\n```"


def glue_md(name: str, header: list[str], rows: list[list[str]]) -> None:
    """Glue a Markdown table under ``name`` for ``{glue:md}`` (only inside a page's notebook run).

    MyST-NB and IPython are imported here, not at the top, so that teaching code importing
    ``book_tools`` does not need them.
    """
    from IPython.display import Markdown
    from myst_nb import glue

    glue(name, Markdown(md_table(header, rows)), display=False)


def keys(n: int, corner: str = "查询 ＼ Key") -> list[str]:
    """The header of a query-by-key table: the corner cell, then ``Key 0`` … ``Key n−1``.

    >>> keys(2)
    ['查询 ＼ Key', 'Key 0', 'Key 1']
    >>> keys(1, corner="")
    ['', 'Key 0']
    >>> keys(-1)
    Traceback (most recent call last):
    ...
    ValueError: keys 的 n 必须是非负整数，收到 -1
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"keys 的 n 必须是非负整数，收到 {n!r}")
    return [corner] + [f"Key {j}" for j in range(n)]


def vector(xs, cell=short) -> str:
    """A vector in brackets, each entry written by ``cell`` (inputs as typed, by default).

    >>> vector([1.0, 0.5, -math.inf])
    '(1, 0.5000, −∞)'
    >>> vector([0.25, -1.0], cell=lambda x: f"{x:g}")
    '(0.25, -1)'
    """
    return "(" + ", ".join(cell(x) for x in xs) + ")"


def vectors(matrix, cell=short) -> str:
    """The rows of a matrix as vectors, joined by 、 the way an input box lists them.

    >>> vectors([[1.0, 0.0], [0.0, 1.0]])
    '(1, 0)、(0, 1)'
    >>> vectors([[0.5], [-2.0]], cell=lambda x: f"{x:g}")
    '(0.5)、(-2)'
    """
    return "、".join(vector(row, cell) for row in matrix)
