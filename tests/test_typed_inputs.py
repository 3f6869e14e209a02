"""Every input a page types equals the constant it names (issue 42: inputs typed once, in the page).

A page types an example's input where the reader reads it, with the ``{input}`` role
(``book/_ext/typed_inputs.py``): ``{input}`(1, 0)、(0, 1) <02_backprop:EXAMPLE_Q>``` shows ``(1, 0)、(0, 1)``
and names the constant the computation uses. This test reads every page's source, reads each typed
input back as Python values (``chapter.page.read_typed``) and compares it with the constant; a mismatch
names both places, the page's line and the constant's.
"""

from __future__ import annotations

import re
import sys

import pytest
from conftest import ROOT

from chapter.page import entry, read_typed, same

sys.path.insert(0, str(ROOT / "book" / "_ext"))
from typed_inputs import split  # noqa: E402 (book/_ext is Sphinx's path, not pytest's)

BOOK = ROOT / "book"
INPUT = re.compile(
    r"\{input\}`([^`]*)`"
)  # the role's markup; what it holds is split by the role itself
PAGES = sorted(BOOK.rglob("*.md"))


def typed_inputs(text: str, page: str = "page") -> list[tuple[str, str, str]]:
    """Every ``{input}`` of a page's source: (``page:line``, the typed text, ``module:NAME``)."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for role in INPUT.finditer(line):
            shown, target = split(role[1])
            found.append((f"{page}:{number}", shown, target))
    return found


def mismatches(text: str, page: str = "page") -> list[str]:
    """Each typed input that differs from its constant, naming the page's line and the constant's."""
    wrong = []
    for where, shown, target in typed_inputs(text, page):
        value, home = entry(target)
        if not same(read_typed(shown), value):
            wrong.append(f"{where} types {shown!r}, but {target} ({home}) is {value!r}")
    return wrong


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(BOOK).as_posix())
def test_every_typed_input_equals_its_constant(page):
    assert mismatches(page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix()) == []


def test_the_backprop_page_types_its_inputs():
    found = typed_inputs((BOOK / "ch02" / "backprop.md").read_text(encoding="utf-8"))
    targets = {target for _, _, target in found}
    assert {"02_backprop:EXAMPLE_Q", "02_backprop:EXAMPLE_D_OUT", "chapter.backprop:PAD"} <= targets
    assert len(found) >= 30


@pytest.mark.parametrize(
    "typed",
    [
        "(1, 0)、(0, 1)、(1, 2)",  # one entry changed
        "(1, 0)、(0, 1)",  # a row left out
        "(1, 0)、(0, 1)、(1, 1)、(1, 1)",  # a row too many
        "1, 0, 0, 1, 1, 1",  # the entries without their rows
    ],
)
def test_a_planted_mismatch_fails_naming_both_places(typed):
    text = f"第一行\nQ 的三行依次为 {{input}}`{typed} <02_backprop:EXAMPLE_Q>`。\n"
    [message] = mismatches(text, "book/ch02/planted.md")
    assert message.startswith(f"book/ch02/planted.md:2 types {typed!r}")
    assert re.search(r"02_backprop:EXAMPLE_Q \(.*code/02_backprop\.py:\d+\)", message)


def test_an_entry_of_a_constant_is_compared_by_its_keys():
    assert mismatches("{input}`4096 <02_exercises_costs:LIMITS[prompt][1]>`") == []
    [message] = mismatches("{input}`4 <02_costs:GEMMA_7B[layers]>`")
    assert "02_costs:GEMMA_7B[layers] (code/02_costs.py:" in message and message.endswith("is 28")


def test_flags_are_not_numbers_and_a_role_without_its_constant_is_refused():
    assert mismatches("{input}`1、1、0 <chapter.backprop:PAD>`")  # True is not 1 here
    assert mismatches("{input}`True、True、False <chapter.backprop:PAD>`") == []
    with pytest.raises(ValueError, match="模块:常量名"):
        typed_inputs("{input}`(1, 0)`")
