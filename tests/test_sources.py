"""The book's sources type no computed number: every result comes from a build-time run.

Two nets catch a pasted result. Any decimal with two or more fraction digits anywhere in a page
(prose, tables or cells) is a result, not an input: inputs in this book are written with at most
one, or typed with the {input} role, which a test compares with the constant it names. And no
number that the teaching code computes may appear in the prose in any rounding.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parent.parent / "book"
PAGES = sorted(p for p in BOOK.rglob("*.md") if "_build" not in p.parts)

DECIMAL = re.compile(r"(?<![\w.])\d+\.\d{2,}(?![\w.])")
CODE_CELL = re.compile(r"^```\{code-cell\}.*?^```", re.M | re.S)
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
# An input typed with {input}`… <module:NAME>` is compared with its constant (tests/test_typed_inputs.py).
TYPED_INPUT = re.compile(r"\{input\}`[^`]*`")


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
    """The demo of every teaching file that has one (code/02_*.py with run_demo); a file that needs PyTorch
    (``take_home.needs_torch``) is read from the record make crosscheck keeps beside it instead."""
    from chapter import take_home

    files = sorted(CODE.glob("[0-9][0-9]_*.py"))
    records = [
        json.loads(p.with_suffix(".json").read_text(encoding="utf-8"))
        for p in files
        if take_home.needs_torch(p.name)
    ]
    modules = (importlib.import_module(p.stem) for p in files if not take_home.needs_torch(p.name))
    return records + [m.run_demo() for m in modules if hasattr(m, "run_demo")]


def computed_spellings() -> set[str]:
    """The ways a pasted result of the teaching code would be written (integers left out)."""
    spellings = set()
    for x in _flatten(demo_results()):
        if x == x and abs(x) != float("inf") and x != int(x):
            spellings |= {f"{x:.{d}f}" for d in range(1, 5)}
    return spellings


def typed_numbers(text: str, spellings: set[str]) -> list[str]:
    """Numbers in ``text`` that look computed: long decimals anywhere, results in prose (not in code:
    a code cell, inline code, a directive's option such as a notebook example's ``:edits:``)."""
    found = DECIMAL.findall(TYPED_INPUT.sub("␣", text))
    prose = CODE_CELL.sub("", text)
    for pattern in (TYPED_INPUT, INLINE_CODE, OPTION_LINE):
        prose = pattern.sub("␣", prose)
    found += [n for n in NUMBER.findall(prose) if n.lstrip("-") in spellings]
    return found


@pytest.fixture(scope="module")
def spellings() -> set[str]:
    return computed_spellings()


def test_there_are_pages_to_scan():
    assert {p.relative_to(BOOK).as_posix() for p in PAGES} >= {
        "index.md",
        "ch02/index.md",
        "ch02/mask.md",
    }


def every_page(find) -> dict[str, list]:
    """What ``find(text)`` reports on each page, for the pages where it reports something."""
    found = {p.relative_to(BOOK).as_posix(): find(p.read_text(encoding="utf-8")) for p in PAGES}
    return {name: what for name, what in found.items() if what}


def test_no_page_types_a_computed_number(spellings):
    assert every_page(lambda text: typed_numbers(text, spellings)) == {}


def test_the_scan_catches_a_pasted_result(spellings):
    pasted = [
        "softmax([0,1,2]) 约为 [0.0900, 0.2447, 0.6652]",
        "加权平均是 25.75",
        "位置 1 的输出约 16.7",
        "```{code-cell} ipython3\nassert round(p, 4) == 0.6652\n```",
    ]
    assert [text for text in pasted if not typed_numbers(text, spellings)] == []


def test_the_scan_lets_inputs_through(spellings):
    text = "past = 3，new = 2；V 依次为 $10$、$20$、$30$；向量 $(1, -1)$；第2章\n```{code-cell} ipython3\nx = 0.5\n```"
    text += "\n温度依次取 {input}`0.25、0.5、1、2、4、16 <02_scaling:TEMPERATURES>`"
    text += "\n把它换成 `[[0.0 if ok else -inf for ok in row] for row in t]`\n:edits: x = 0.0\n"
    assert typed_numbers(text, spellings) == []


# -- no number of an example typed into the words around it ---------------------------------------
FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
FENCE = re.compile(r"^(`{3,}|:{3,}).*?$", re.M)
ANY_FENCE_BLOCK = re.compile(r"^```.*?^```", re.M | re.S)
COMMENT = re.compile(r"^%.*$", re.M)
ROLE = re.compile(r"\{[\w:-]+\}`[^`]*`")  # {glue:text}`name:.4f`, {term}`…`, {download}`…`
INLINE_CODE = re.compile(r"`[^`]*`")
# A directive's option, e.g. a notebook example's `:edits: causal = False`: a parameter, not prose.
OPTION_LINE = re.compile(r"^:[\w-]+:.*$", re.M)
MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]*\$", re.S)
INPUT_BOX = re.compile(r"^(:{3,})\{admonition\} 输入与适用条件\n(.*?)^\1\s*$", re.M | re.S)
DIGIT = re.compile(r"\d")
CJK_NEXT_TO_LATIN = re.compile(r"[\u4e00-\u9fff][A-Za-z0-9]|[A-Za-z0-9][\u4e00-\u9fff]")


def words(text: str) -> str:
    """The words a reader sees that the page types itself: no code, maths, roles or front matter."""
    for pattern in (FRONT_MATTER, ANY_FENCE_BLOCK, COMMENT, ROLE, INLINE_CODE, MATH):
        text = pattern.sub("␣", text)
    return text


def input_boxes(text: str) -> list[str]:
    """The bodies of the 「输入与适用条件」 boxes with their glue roles taken out.

    Maths and inline code stay: a number typed there is typed all the same.
    """
    return [ROLE.sub("␣", body) for _, body in INPUT_BOX.findall(text)]


# Digits a 「输入与适用条件」 box may type: names, not numbers of the example — a figure (F12, F13, …),
# a published model (Gemma-7B, Llama-3-8B, GPT-2, …), a number format (float16, int8), the conventions
# of attention_mask (1 内容，0 PAD) and of a dropout draw (1 留下，0 丢掉). Everything else is glued or
# typed with {input}.
INPUT_BOX_DIGITS_ALLOWED = re.compile(
    r"\bF\d+\b|\b(?:Gemma|Llama|Mistral|Qwen|GPT-?)\d*(?:-[\w.]+)*|\b(?:b?float|u?int)\d+\b"
    r"|\b02_[A-Za-z]\w*(?:\.\w+)*"  # a teaching file or a function in it: 02_exercises_mask.empty_row_in_dtype
    r"|（1 内容，0 PAD）|（1 留下，0 丢掉）"
)
# Digits the mask page's prose may type: labels and names, list numbers, conventions of an API or of
# maths (not numbers of an example), and a library version.
MASK_PROSE_DIGITS_ALLOWED = re.compile(
    "|".join(
        [
            r"\(ch02-mask(?:-[\w-]+)?\)=",
            r"chapter\.mask_figure:f12_\w+",
            r"F12",
            r"^\d+\. ",
            r"用 1 标内容、0 标 PAD",
            r"行号从 0 开始",
            r"FlashAttention 从 2\.1 版",
            r"权重之和都被构造成 1",
            r"\b(?:b?float|u?int)\d+\b",  # a dtype's name (float16), not a number of the example
        ]
    ),
    re.M,
)


def stray_digits(text: str, allowed: re.Pattern) -> list[str]:
    text = allowed.sub("␣", text)
    return [text[max(0, m.start() - 12) : m.end() + 12] for m in DIGIT.finditer(text)]


def test_input_boxes_glue_every_number():
    def typed(text: str) -> list[str]:
        return [d for box in input_boxes(text) for d in stray_digits(box, INPUT_BOX_DIGITS_ALLOWED)]

    assert every_page(typed) == {}


def test_the_mask_page_has_its_input_boxes():
    assert len(input_boxes((BOOK / "ch02" / "mask.md").read_text(encoding="utf-8"))) >= 11


def test_the_mask_page_types_no_number_of_an_example_in_its_prose():
    text = (BOOK / "ch02" / "mask.md").read_text(encoding="utf-8")
    assert stray_digits(words(text), MASK_PROSE_DIGITS_ALLOWED) == []


def test_the_mask_page_takes_the_cache_example_from_the_figure():
    text = (BOOK / "ch02" / "mask.md").read_text(encoding="utf-8")
    cells = "\n".join(CODE_CELL.findall(text))
    assert re.findall(r"^\s*(?:past|new)(?:\s*,\s*new)?\s*=\s*\d", cells, re.M) == []
    assert "page.cache_section()" in cells and "page.checks_section()" in cells


def test_the_quoted_rule_is_the_line_in_the_teaching_code():
    text = (BOOK / "ch02" / "mask.md").read_text(encoding="utf-8")
    quoted = re.search(r"```python\n(.+)\n```", text).group(1)
    source = (BOOK.parent / "code" / "02_attention.py").read_text(encoding="utf-8")
    assert quoted == "valid[j] and (not causal or j <= past + i)"
    assert quoted in source


def unspaced(text: str) -> list[str]:
    prose = words(text)
    return [prose[max(0, m.start() - 8) : m.end() + 8] for m in CJK_NEXT_TO_LATIN.finditer(prose)]


def test_chinese_and_latin_or_numbers_are_spaced():
    assert every_page(unspaced) == {}


def test_every_download_link_shows_a_file_name_not_a_source_path():
    # {download}`02_rope.py <../../code/02_rope.py>`: the reader sees the file's name; without the
    # label Sphinx would show the path as it is written in the source (../../code/02_rope.py).
    assert every_page(lambda text: re.findall(r"\{download\}`([^`<]*)`", text)) == {}


def test_the_input_box_scan_catches_a_typed_number():
    typed = [
        ":::{admonition} 输入与适用条件\n三个有效位置；V 的三行依次为 $10, 20, 30$。\n:::\n",
        ":::{admonition} 输入与适用条件\n第 1 至 3 步用 {glue:text}`f12_n:d` 个位置。\n:::\n",
        ":::{admonition} 输入与适用条件\n有效长度为 2（`key_padding(2, 3)`）。\n:::\n",
    ]
    missed = []
    for text in typed:
        (box,) = input_boxes(text)
        if not stray_digits(box, INPUT_BOX_DIGITS_ALLOWED):
            missed.append(text)
    assert missed == []


def test_the_prose_scan_catches_a_typed_number():
    text = "不加 mask 时，位置 3 的输出随位置 4 的 V 而变。"
    assert stray_digits(words(text), MASK_PROSE_DIGITS_ALLOWED)
    assert CJK_NEXT_TO_LATIN.search(words("查询在位置3"))
