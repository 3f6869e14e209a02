"""A core example's inputs are in the core: every number a core example starts from shows before the reader
opens anything.

Each page states an example's inputs as glued values (``{glue:text}`key```) or typed once with the
``{input}`` role (``{input}`(1, 0) <module:NAME>```, keyed by its ``module:NAME``), in the example's
「输入与适用条件」 box; the keys are the machine-readable statement of what the example starts from.
``CORE_EXAMPLES`` names, page by page, the examples its core works through and the keys of the numbers
each starts from. The test reads the page's source: each of those keys must be glued outside every
folded block (a 深入 ``dropdown``, an exercise's solution), and each example must have a
「输入与适用条件」 box in the core. It reads the built page too: the boxes the source keeps in the core
are the ones a reader sees without opening anything.

A page whose core example still keeps inputs in a depth block is marked ``xfail(strict=True)`` with the
finding that says so: whoever moves the inputs into the core removes the mark.
"""

from __future__ import annotations

import re

import pytest
from conftest import ROOT, article_of

BOOK = ROOT / "book"
ROLE = re.compile(r"\{glue(?::text|:md|:any|:figure)?\}`([A-Za-z0-9_]+)(?::[^`]*)?`")
TYPED = re.compile(r"\{input\}`[^`]*<([^`>]+)>`")  # a typed input, keyed by the constant it names
OPENING = re.compile(r"^(?P<fence>:{3,}|`{3,})\{(?P<name>[\w:-]+)\}[ \t]*(?P<arg>.*)$")
FOLDING = {"dropdown", "solution"}  # a 深入 block; a solution (shown only when opened)
INPUTS = "输入与适用条件"

# page → {core example: the glue keys of the numbers it starts from}
CORE_EXAMPLES = {
    "ch02/mask": {
        "F12": [
            "chapter.mask:N_POSITIONS",
            "chapter.mask:PAST",
            "chapter.mask:NEW",
        ],
        "一步一步": [
            "demo_n",
            "demo_past",
            "demo_d",
            "demo_positions",
            "02_attention:DEMO_Q",
            "demo_v",
        ],
        "一行从头算到尾": ["hand_row", "hand_forbidden", "02_attention:DEMO_Q", "demo_v"],
        "如何判断是否做对": [
            "leak_n",
            "leak_qk",
            "leak_v",
            "chapter.mask:PAST",
            "chapter.mask:NEW",
            "leak_last",
            "chapter.mask:LEAK_POISON",
        ],
        "练习 2.2.1": [
            "02_exercises_mask:PAST",
            "02_exercises_mask:NEW",
            "ex1_keys",
            "02_exercises_mask:PAD_FRONT",
            "ex1_pad_keys",
        ],
        "练习 2.2.2": ["02_exercises_mask:SCORES", "ex2_visible"],
        "练习 2.2.3": [
            "02_exercises_mask:BUG_Q",
            "ex3_v",
            "02_exercises_mask:BUG_PAST",
            "02_exercises_mask:BUG_NEW",
            "02_exercises_mask:BUG_POISON",
        ],
    },
    "ch02/scaling": {
        "F13": [
            "f13_d",
            "f13_q",
            "02_scaling:EXAMPLE_K",
            "02_scaling:EXAMPLE_V",
            "02_scaling:QUERY",
            "02_scaling:EXAMPLE_Q",
        ],
        "四项检查": ["02_scaling:QUERY", "chapter.scaling:SHIFT", "chk_order"],
    },
    "ch02/multihead": {
        "从 X 到输出": [
            "n",
            "d_model",
            "head_dim",
            "02_multihead:DEMO_HEADS",
            "02_multihead:DEMO_X",
            "02_multihead:DEMO_WQ",
            "02_multihead:DEMO_WK",
            "02_multihead:DEMO_WV",
            "02_multihead:DEMO_WO",
        ],
    },
    "ch02/rope": {
        "d = 2 的一例": [
            "d2_d",
            "02_rope:DEMO_Q2",
            "02_rope:DEMO_K2",
            "d2_theta",
            "d2_m0",
            "d2_n0",
        ]
    },
    "ch02/backprop": {
        "按推导顺序": [
            "ex_n",
            "ex_d",
            "02_backprop:EXAMPLE_Q",
            "02_backprop:EXAMPLE_K",
            "02_backprop:EXAMPLE_V",
            "02_backprop:EXAMPLE_D_OUT",
        ]
    },
    "ch02/training": {
        "任务": [
            "02_training:VOCAB",
            "02_training:LENGTH",
            "02_training:LAG",
            "chapter.training:SHOW_SEED",
        ],
        "训练设置": [
            "02_training:D_MODEL",
            "02_training:STEPS",
            "02_training:BATCH",
            "02_training:LEARNING_RATE",
            "chapter.training:TRAIN_SEED",
        ],
    },
    "ch02/costs": {
        # The KV table's rows are computed from each model's layers, K/V heads and head dimension.
        "KV 缓存表": [
            "02_costs:CONTEXT",
            "02_costs:BATCH",
            "02_costs:FLOAT16_BYTES",
            "tbl_configs",
        ],
        "头维度就是 hidden ÷ heads": [
            "02_costs:GEMMA_7B[layers]",
            "02_costs:GEMMA_7B[hidden]",
            "02_costs:GEMMA_7B[heads]",
            "02_costs:GEMMA_7B[kv_heads]",
            "02_costs:GEMMA_7B[head_dim]",
            "02_costs:FLOAT16_BYTES",
        ],
    },
    "ch02/tensors": {
        "整批的例子": [
            "b_batch",
            "02_tensors:DEMO_HEADS",
            "02_tensors:DEMO_KV_HEADS",
            "02_tensors:DEMO_D",
            "02_tensors:DEMO_SEED",
            "b_mask",
        ],
        "更多可见性规则": [
            "chapter.tensors:RULES_N",
            "chapter.tensors:RULES_W",
            "chapter.tensors:RULES_PREFIX",
            "chapter.tensors:RULES_SINK",
            "chapter.tensors:RULES_DOCS",
        ],
        "滑动窗口差一格": [
            "chapter.tensors:WINDOW_N",
            "chapter.tensors:WINDOW_W",
            "chapter.tensors:D",
            "chapter.tensors:WINDOW_SEED",
            "chapter.tensors:LO",
            "chapter.tensors:HI",
        ],
    },
    "ch02/tiles": {
        "一行分数，一块一块地读": ["02_tiles:ROW_SCORES", "o_v", "02_tiles:ROW_BLOCK"],
        "F15": [
            "02_tiles:DEMO_PAST",
            "t_new",
            "02_tiles:DEMO_Q",
            "02_tiles:DEMO_K",
            "t_v",
            "02_tiles:DEMO_BLOCK",
        ],
    },
    "ch02/pitfalls": {
        "各节共用的例子": ["demo_n", "02_pitfalls:DEMO_Q", "demo_v"],
        "批量生成：PAD 补在哪一侧": [
            "j_vocab",
            "j_width",
            "j_layers",
            "j_seed",
            "02_pitfalls:DEMO_STEPS",
            "j_prompts",
            "02_pitfalls:PAD",
        ],
        "练习 2.11.1": ["02_exercises_pitfalls:LINE_N", "x1_line"],
        "练习 2.11.2": [
            "02_exercises_pitfalls:FLOAT_SCORES",
            "02_exercises_pitfalls:FLOAT_ROW",
            "x2_bias",
        ],
        "练习 2.11.3": ["x3_masks"],
    },
    "ch02/summary": {
        "可见性规则": [
            "02_tensors:RULES_EXAMPLE[n]",
            "rules_pad",
            "02_tensors:RULES_EXAMPLE[w]",
            "02_tensors:RULES_EXAMPLE[n_prefix]",
            "02_tensors:RULES_EXAMPLE[n_sink]",
        ],
        "哪项检查认得出哪种错误": [
            "chk_n",
            "chapter.summary:Q",
            "chapter.summary:V_COLUMN",
            "chapter.summary:POISON",
            "chapter.summary:PAST",
            "chk_pad_keys",
            "chapter.mask:BIG",
            "chapter.summary:GRAD_QK",
            "chapter.summary:GRAD_V_COLUMN",
            "chapter.summary:GRAD_DO_COLUMN",
        ],
    },
}
NOT_YET: dict[str, str] = {}


def glue_uses(text: str) -> list[tuple[str, bool, bool]]:
    """Every glued value of a MyST page as ``(key, folded, in an input box)``."""
    stack: list[tuple[str, str, str]] = []
    uses = []

    def where() -> tuple[bool, bool]:
        folded = any(name in FOLDING for _, name, _ in stack)
        box = any(name == "admonition" and INPUTS in arg for _, name, arg in stack)
        return folded, box

    for line in text.splitlines():
        opening = OPENING.match(line)
        if opening:
            stack.append((opening["fence"], opening["name"], opening["arg"]))
            if opening["name"].startswith("glue"):  # ```{glue:md} key
                uses.append((opening["arg"].split()[0], *where()))
        elif stack and line.strip() == stack[-1][0]:
            stack.pop()
            continue
        uses += [(key, *where()) for key in ROLE.findall(line) + TYPED.findall(line)]
    return uses


def core_boxes(text: str) -> int:
    """How many 「输入与适用条件」 boxes of the page source sit outside every folded block."""
    stack: list[tuple[str, str]] = []
    count = 0
    for line in text.splitlines():
        opening = OPENING.match(line)
        if opening:
            if opening["name"] == "admonition" and INPUTS in opening["arg"]:
                count += not any(name in FOLDING for _, name in stack)
            stack.append((opening["fence"], opening["name"]))
        elif stack and line.strip() == stack[-1][0]:
            stack.pop()
    return count


def missing_inputs(text: str, examples: dict[str, list[str]]) -> list[str]:
    """What a page's core lacks: an input glued only in a folded block, or never; an example whose
    inputs have no box in the core."""
    uses = glue_uses(text)
    in_core = {key for key, folded, _ in uses if not folded}
    in_core_box = {key for key, folded, box in uses if box and not folded}
    glued = {key for key, _, _ in uses}
    problems = []
    for example, keys in examples.items():
        for key in keys:
            if key not in glued:
                problems.append(f"{example}: {key} is not glued on the page")
            elif key not in in_core:
                problems.append(f"{example}: {key} is glued only in a folded block")
        if not in_core_box & set(keys):
            problems.append(f"{example}: no 「{INPUTS}」 box in the core states its inputs")
    return problems


def page_param(page: str):
    marks = [pytest.mark.xfail(strict=True, reason=NOT_YET[page])] if page in NOT_YET else []
    return pytest.param(page, marks=marks, id=page)


@pytest.mark.parametrize("page", [page_param(p) for p in CORE_EXAMPLES])
def test_every_input_of_a_core_example_is_in_the_core(page):
    text = (BOOK / f"{page}.md").read_text(encoding="utf-8")
    assert missing_inputs(text, CORE_EXAMPLES[page]) == []


def test_every_chapter_page_names_its_core_examples():
    pages = sorted(p.relative_to(BOOK).with_suffix("").as_posix() for p in BOOK.glob("ch02/*.md"))
    # the chapter's opening works through no example: it shows the mask page's sizes in a table
    assert sorted([*CORE_EXAMPLES, "ch02/index"]) == pages


@pytest.mark.build
@pytest.mark.parametrize("page", list(CORE_EXAMPLES))
def test_the_built_page_shows_the_core_boxes_unopened(book_html, page):
    article = article_of(book_html, f"{page}.html")
    boxes = [
        a
        for a in article.find_all(class_="admonition")
        if a.find(class_="admonition-title") is not None
        and a.find(class_="admonition-title").get_text(strip=True) == INPUTS
        and a.find_parent("details") is None
        and a.find_parent(class_="solution") is None
    ]
    text = (BOOK / f"{page}.md").read_text(encoding="utf-8")
    assert len(boxes) == core_boxes(text)
    assert all(box.select(".pasted-text") or not ROLE.search(str(box)) for box in boxes)


# -- the check fails where it should: planted pages -----------------------------------------------------
BOX = ":::{admonition} 输入与适用条件\n"
PLANTED = {
    # The mask page's check as it was: the numbers in the core, the vectors only in the 深入 block.
    "inputs only in depth": (
        "例：past = {glue:text}`leak_past:d`，整段重算得 {glue:text}`ref_first`。\n\n"
        "::::{dropdown} 深入：三种算法过两项检查的数\n"
        + BOX
        + "Q 与 K 依次为 {glue:text}`leak_qk`。\n:::\n::::\n"
    ),
    # A box in the core that sends the reader to a depth block for the numbers.
    "box defers to depth": (
        BOX + "X 有 {glue:text}`n` 行（数在下面的深入块里）。\n:::\n\n"
        ":::{dropdown} 深入：X 的数\nX 为 {glue:text}`x_rows`。\n:::\n"
    ),
    # An exercise whose inputs sit in its solution.
    "inputs in the solution": (
        "::::{exercise} 一题\n" + BOX + "见解答。\n:::\n::::\n\n"
        "::::{solution} ex\n:class: dropdown\n\n分数是 {glue:text}`ex_scores`。\n::::\n"
    ),
}


@pytest.mark.parametrize(
    "name, keys",
    [
        ("inputs only in depth", ["leak_past", "leak_qk"]),
        ("box defers to depth", ["n", "x_rows"]),
        ("inputs in the solution", ["ex_scores"]),
    ],
)
def test_the_check_fails_on_planted_pages(name, keys):
    problems = missing_inputs(PLANTED[name], {"例": keys})
    assert problems, name
    assert any("folded block" in p or "no 「" in p for p in problems), problems


def test_the_check_passes_when_the_box_is_in_the_core():
    text = BOX + "Q 与 K 依次为 {glue:text}`leak_qk`，past = {glue:text}`leak_past:d`。\n:::\n"
    assert missing_inputs(text, {"例": ["leak_qk", "leak_past"]}) == []
    assert core_boxes(text) == 1 and core_boxes(PLANTED["inputs only in depth"]) == 0
