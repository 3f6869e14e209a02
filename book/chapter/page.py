"""One home for what a page section gives its page (issue 42): values, tables, figures and the fact check.

A page's hidden cell glues one section: ``page.worked().glue()``. The section function takes no
arguments and validates nothing (the teaching functions it calls do); it reads its inputs from the
teaching file's constants, or from the book side's one constant for an input no teaching file has.
Its inputs are typed once, in the page, with the ``{input}`` role (``book/_ext/typed_inputs.py``):

    Q 的三行依次为 {input}`(1, 0)、(0, 1)、(1, 1) <02_backprop:EXAMPLE_Q>`

and ``tests/test_typed_inputs.py`` compares every typed input with the constant it names
(:func:`read_typed`, :func:`same`, :func:`constant`). What the section glues is what the run computes:

    def worked() -> Section:
        s = Section("反向传播一页", "按推导顺序")
        steps = bp.backward_steps(*EXAMPLE, att.visibility(3, 3))
        s.holds(first_query_dq_zero=all(x == 0.0 for x in steps["dq"][0]))  # the page's 「恰为 0」
        s.grid("tbl_ex_dq", "dQ", steps["dq"], positions(3), ["第 0 维", "第 1 维"])
        s.table("tbl_ex_rowsum", range(3), Col("查询", positions(3).__getitem__, "text"),
                Col("两种算法之差", lambda i: gaps[i], "difference"))
        s.value("count", ex_n=3)  # a kind of WRITE: "value" (fmt.DECIMALS) by default
        return s

Glue names stay as the pages use them; one name is glued once (a second is refused).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from chapter import fmt

ROOT = Path(__file__).resolve().parents[2]  # the repository: book/chapter/page.py
# How a cell or a value is written, by kind: the kinds of fmt.DECIMALS, then the other spellings of fmt.
WRITE: dict[str, Callable[[Any], str]] = {
    "value": fmt.fmt,
    "ratio": fmt.ratio,
    "multiple": fmt.multiple,
    "ms": fmt.ms,
    "seconds": fmt.seconds,
    "percent": fmt.percent,
    "difference": fmt.difference,
    "count": fmt.count,
    "short": fmt.short,
    "sci": fmt.sci,
    "power": fmt.power,
    "size": fmt.size,
    "text": str,
}


def write(kind: str, x) -> str:
    """``x`` as the page prints its kind; a kind that is not in :data:`WRITE` is refused.

    >>> write("value", -0.5)
    '−0.5000'
    >>> write("difference", 2.6e-5)
    '2.6 × 10⁻⁵'
    """
    if kind not in WRITE:
        raise ValueError(f"kind 必须是 {'、'.join(WRITE)} 之一，收到 {kind!r}")
    return WRITE[kind](x)


# -- one spelling each: keys, positions, spans, listings ---------------------------------------------------
def listing(items) -> str:
    """Items in running text, joined by 、; ``无`` when there are none.

    >>> listing(["正确", "忘乘 dO"])
    '正确、忘乘 dO'
    >>> listing([])
    '无'
    """
    return "、".join(map(str, items)) or "无"


def key(j: int) -> str:
    """One key by number, in a header or in running text: ``Key 2``."""
    return f"Key {j}"


def keys(js) -> str:
    """Keys by number in running text: ``Key 0、Key 2`` (``无`` when there are none)."""
    return listing(map(key, js))


def positions(n: int, past: int = 0) -> list[str]:
    """The query labels of a table's rows: ``查询 i（位置 past + i）``.

    >>> positions(2, past=3)
    ['查询 0（位置 3）', '查询 1（位置 4）']
    """
    return [f"查询 {i}（位置 {past + i}）" for i in range(n)]


def span(first: int, last: int, unit: str = "Key") -> str:
    """A run of numbered things: ``Key 0 到 Key 3`` (one thing: ``Key 2``)."""
    return f"{unit} {first}" if first == last else f"{unit} {first} 到 {unit} {last}"


# -- an input as the page types it, and the constant it must equal -------------------------------------------
_TYPED = str.maketrans({"−": "-", "、": ",", "(": "[", ")": "]", "⁻": "-"} | {
    s: str(d) for d, s in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")
})  # fmt: skip


def read_typed(text: str):
    """What a typed input says, as Python values (a list of several, the value itself for one).

    >>> read_typed("(1, 0)、(0.5, −1)")
    [[1, 0], [0.5, -1]]
    >>> read_typed("True、True、False")
    [True, True, False]
    >>> read_typed("10⁻⁵")
    1e-05
    >>> read_typed("1, −1, 0")
    [1, -1, 0]
    """
    words = [w.strip() for w in text.translate(_TYPED).split(",")]
    words = ",".join("1e" + w[2:] if w.startswith("10-") else w for w in words)
    items = ast.literal_eval(f"[{words}]")
    return items[0] if len(items) == 1 else items


def same(typed_value, constant) -> bool:
    """Whether a typed input equals its constant: numbers by value (1 == 1.0), flags only as flags.

    >>> same([1, 0], [1.0, 0.0])
    True
    >>> same([True], [1])
    False
    """
    if isinstance(typed_value, (list, tuple)) or isinstance(constant, (list, tuple)):
        return (
            isinstance(typed_value, (list, tuple))
            and isinstance(constant, (list, tuple))
            and len(typed_value) == len(constant)
            and all(same(a, b) for a, b in zip(typed_value, constant))
        )
    if isinstance(typed_value, bool) or isinstance(constant, bool):
        return typed_value is constant
    return typed_value == constant


def constant(target: str):
    """The constant a typed input names, ``module:NAME`` (``02_backprop:EXAMPLE_Q``), and where it is
    assigned (``code/02_backprop.py:457``)."""
    module_name, _, name = target.partition(":")
    module = importlib.import_module(module_name)
    value = getattr(module, name)
    source = Path(module.__file__)
    where = source.relative_to(ROOT).as_posix()
    line = _assigned(source, source.stat().st_mtime_ns).get(name)
    return value, where if line is None else f"{where}:{line}"


@functools.cache
def _assigned(source: Path, version: int) -> dict[str, int]:
    """The line where each module-level name of ``source`` is last assigned (``version``: its mtime, so an
    edited file is read again)."""
    lines = {}
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        for target in targets:
            if isinstance(target, ast.Name):
                lines[target.id] = node.lineno
    return lines


def entry(target: str):
    """What a typed input names: a constant (:func:`constant`), or an entry of one, each key or index in
    brackets (``02_costs:GEMMA_7B[layers]``, ``02_exercises_costs:LIMITS[prompt][0]``); and where the
    constant is assigned.

    >>> entry("02_exercises_costs:LIMITS[steps][1]")[0]
    4096
    """
    name, bracket, keys = target.partition("[")
    value, where = constant(name)
    for key in re.findall(r"\[([^\]]*)\]", bracket + keys):
        value = value[int(key) if key.isdigit() else key]
    return value, where


# -- the figure factory --------------------------------------------------------------------------------
@contextlib.contextmanager
def figure(size: tuple[float, float], salt: str):
    """A Figure (not pyplot's: no global list to close) and its bare axes, in the book's figure fonts.

    ``salt`` fixes the ids in the SVG, so that every build writes the same HTML. Matplotlib reads it when the
    figure is saved, after this block, when the page glues it: it is set for the kernel, not for the block.
    """
    import matplotlib
    from matplotlib.figure import Figure

    from chapter.costs import figure_fonts

    matplotlib.rcParams["svg.hashsalt"] = salt
    fig = Figure(figsize=size)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    with matplotlib.rc_context({"font.family": figure_fonts()}):
        yield fig, ax


# -- a section -----------------------------------------------------------------------------------------
class Col(NamedTuple):
    """A table column: its header, how a row gives its cell, how the cell is written (:data:`WRITE`)."""

    header: str
    get: Callable[[Any], Any]
    kind: str = "value"


class Section:
    """What one section of a page glues, and the one check of the facts its fixed sentences state."""

    def __init__(self, page: str, title: str):
        self.page = page
        self.title = title
        self.values: dict[str, Any] = {}

    def holds(self, **facts: bool) -> None:
        """Stop the build when a fact of the section's fixed sentences is false, naming page, section, fact.

        >>> Section("反向传播一页", "按推导顺序").holds(sums_to_zero=True, dq_zero=False)
        Traceback (most recent call last):
        ...
        ValueError: 反向传播一页「按推导顺序」的固定说法与这次算出的不符：dq_zero
        """
        fmt.holds(f"{self.page}「{self.title}」", facts)

    def _put(self, name: str, value) -> None:
        if name in self.values:
            raise ValueError(f"{self.page}「{self.title}」的 {name} 贴了两次")
        self.values[name] = value

    def value(self, kind: str = "value", **values) -> None:
        """Computed numbers, each written as its kind prints (``kind`` of :data:`WRITE`)."""
        for name, x in values.items():
            self._put(name, write(kind, x))

    def text(self, **texts: str) -> None:
        """Computed words (names, listings, a calculation written out)."""
        for name, text in texts.items():
            self._put(name, str(text))

    def md(self, **blocks: str) -> None:
        """Markdown blocks (a list, a doctest) for ``{glue:md}``."""
        for name, block in blocks.items():
            self._put(name, fmt.Md(block))

    def table(self, name: str, rows, *cols: Col) -> None:
        """A table: one row per record of ``rows``, one cell per column, written by the column's kind."""
        self._put(
            name,
            fmt.Table(
                [c.header for c in cols], [[write(c.kind, c.get(r)) for c in cols] for r in rows]
            ),
        )

    def grid(
        self, name: str, corner: str, matrix, rows: list[str], columns: list[str], kind="value"
    ):
        """A matrix with a label per row and a header per column (``corner`` above the labels)."""
        labelled = list(zip(rows, matrix))
        cols = [Col(corner, lambda r: r[0], "text")]
        cols += [Col(h, lambda r, c=c: r[1][c], kind) for c, h in enumerate(columns)]
        self.table(name, labelled, *cols)

    def figure(self, name: str, fig) -> None:
        """A matplotlib figure (made with :func:`figure`), glued as an image."""
        self._put(name, fig)

    def glue(self) -> None:
        """Glue every value under its name (MyST-NB); the page's hidden cell calls it."""
        fmt.glue_all(self.values)
