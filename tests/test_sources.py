"""The book's sources type no computed number: every result comes from a build-time run.

Two nets catch a pasted result. Any decimal with two or more fraction digits anywhere in a page
(prose, tables or cells) is a result, not an input: inputs in this book are written with at most
one. And no number that the teaching code computes may appear in the prose in any rounding.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parent.parent / "book"
PAGES = sorted(p for p in BOOK.rglob("*.md") if "_build" not in p.parts)

DECIMAL = re.compile(r"(?<![\w.])\d+\.\d{2,}(?![\w.])")
CODE_CELL = re.compile(r"^```\{code-cell\}.*?^```", re.M | re.S)
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


def _flatten(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _flatten(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _flatten(v)
    elif isinstance(value, float):
        yield value


CODE = BOOK.parent / "code"


def demo_results() -> list:
    """The demo of every teaching file that has one (code/02_*.py with run_demo)."""
    modules = (importlib.import_module(p.stem) for p in sorted(CODE.glob("[0-9][0-9]_*.py")))
    return [m.run_demo() for m in modules if hasattr(m, "run_demo")]


def computed_spellings() -> set[str]:
    """The ways a pasted result of the teaching code would be written (integers left out)."""
    spellings = set()
    for x in _flatten(demo_results()):
        if x == x and abs(x) != float("inf") and x != int(x):
            spellings |= {f"{x:.{d}f}" for d in range(1, 5)}
    return spellings


def typed_numbers(text: str, spellings: set[str]) -> list[str]:
    """Numbers in ``text`` that look computed: long decimals anywhere, results in prose."""
    found = DECIMAL.findall(text)
    prose = CODE_CELL.sub("", text)
    found += [n for n in NUMBER.findall(prose) if n.lstrip("-") in spellings]
    return found


@pytest.fixture(scope="module")
def spellings() -> set[str]:
    return computed_spellings()


def test_there_are_pages_to_scan():
    assert {p.relative_to(BOOK).as_posix() for p in PAGES} >= {"index.md", "ch02/index.md", "ch02/mask.md"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(BOOK).as_posix())
def test_page_types_no_computed_number(page, spellings):
    assert typed_numbers(page.read_text(encoding="utf-8"), spellings) == []


@pytest.mark.parametrize(
    "text",
    [
        "softmax([0,1,2]) 约为 [0.0900, 0.2447, 0.6652]",
        "加权平均是 25.75",
        "位置 1 的输出约 16.7",
        "```{code-cell} ipython3\nassert round(p, 4) == 0.6652\n```",
    ],
)
def test_the_scan_catches_a_pasted_result(text, spellings):
    assert typed_numbers(text, spellings)


def test_the_scan_lets_inputs_through(spellings):
    text = "past = 3，new = 2；V 依次为 $10$、$20$、$30$；向量 $(1, -1)$；第2章\n```{code-cell} ipython3\nx = 0.5\n```"
    assert typed_numbers(text, spellings) == []
