"""How the book prints a number, one format per kind, and the tables and vectors built from them.

Every number the book prints goes through this module, so one page looks like the next: a minus is
U+2212 (−), a forbidden score is −∞, and

- a computed value has a fixed number of decimals (``fmt``: ``0.0900``, ``−1.5000``), and so has each
  other kind of quantity (``DECIMALS``: ratios and slopes, multiples, times, percentages; the preface
  states them, ``decimals_sentence``);
- an input is written as one types it (``short``: ``10``, ``0.25``, ``−1``);
- a count is a plain integer (``count``);
- a size in bytes uses binary units (``size``: ``1.5 GiB``);
- a small number is in scientific notation (``sci``: ``2.2 × 10⁻¹⁶``; ``power``: ``10⁻⁵``);
- a large whole number has thousands separators (``grouped``: ``1,099,511,627,776``).

Nothing here computes a number the chapter states; it only writes them.

>>> fmt(0.0900305731), fmt(-1.5), fmt(float("-inf")), fmt(-0.00001)
('0.0900', '−1.5000', '−∞', '0.0000')
>>> short(10.0), short(-0.25), short(1 / 3)
('10', '−0.25', '0.3333')
"""

from __future__ import annotations

import doctest
import inspect
import math
from numbers import Real
from typing import NamedTuple

MINUS = "−"  # U+2212, the minus sign of printed mathematics (not the hyphen "-")
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_NORMAL = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
ALLOWED = "✓ 允许"
FORBIDDEN = "✗ 禁止"


def _number(x: object, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, Real):
        raise ValueError(f"{what} 必须是实数，收到 {x!r}")
    return float(x)


# One number of decimals per kind of quantity, the same on every page (the preface states this table).
DECIMALS = {
    "value": (4, "算出的分数、权重、输出、梯度和频率（算出的整数也写成 5.0000），以及两次计算之间不小于 10⁻³ 的差"),
    "ratio": (2, "两个量之比和拟合的斜率"),
    "multiple": (1, "“约为几倍”的倍数和以位置计的周期（一万以上按千位分组，如 12,345.6）"),
    "ms": (3, "以毫秒计的时间"),
    "seconds": (2, "以秒计的时间"),
    "percent": (2, "百分比（两位小数会把一个并非整数的百分比写成整数时，多保留几位，直到看得出差别）"),
}


def _digits(digits: object) -> int:
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 12:
        raise ValueError(f"digits 必须是 0 到 12 的整数，收到 {digits!r}")
    return digits


def _signed(text: str) -> str:
    return text.replace("-", MINUS)


def fmt(x: float, digits: int = DECIMALS["value"][0]) -> str:
    """A computed value: ``digits`` decimals, U+2212 for minus, ±∞ and NaN spelled out.

    A value that rounds to zero prints as zero, without a sign.

    >>> fmt(2.3395, 2), fmt(float("nan")), fmt(float("inf"))
    ('2.34', 'NaN', '∞')
    """
    x, digits = _number(x, "fmt 的 x"), _digits(digits)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else MINUS + "∞"
    text = f"{x:.{digits}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return _signed(text)


def ratio(x: float) -> str:
    """A ratio of two quantities, or a fitted slope.

    >>> ratio(4.0), ratio(2.0 ** 0.5)
    ('4.00', '1.41')
    """
    return fmt(x, DECIMALS["ratio"][0])


def multiple(x: float) -> str:
    """How many times larger ("约 2.8 倍"), or a period in positions: whole numbers as they are.

    >>> multiple(4.0), multiple(2 ** 1.5), multiple(54410.27)
    ('4', '2.8', '54,410.3')
    """
    x = _number(x, "multiple 的 x")
    text = short(x) if x.is_integer() else fmt(x, DECIMALS["multiple"][0])
    if math.isfinite(x) and abs(x) >= 10_000:  # a long period or a large multiple: 54,410.3
        whole, _, decimals = text.lstrip(MINUS).partition(".")
        text = (MINUS if x < 0 else "") + f"{int(whole):,}" + (f".{decimals}" if decimals else "")
    return text


def ms(seconds: float) -> str:
    """A time given in seconds, printed in milliseconds.

    >>> ms(0.0012345)
    '1.234'
    """
    return fmt(1000 * _number(seconds, "ms 的 seconds"), DECIMALS["ms"][0])


def seconds(x: float) -> str:
    """A time in seconds.

    >>> seconds(1.234)
    '1.23'
    """
    return fmt(x, DECIMALS["seconds"][0])


def percent(share: float) -> str:
    """A share (0.25) as a percentage.

    >>> percent(0.25), percent(1 / 3)
    ('25.00%', '33.33%')
    """
    return fmt(100 * _number(share, "percent 的 share"), DECIMALS["percent"][0]) + "%"


def decimals_sentence() -> str:
    """The preface's statement of how the book prints numbers: the decimals of each kind, then the rest.

    >>> decimals_sentence().startswith("算出的分数、权重、输出、梯度和频率（算出的整数也写成 5.0000）")
    True
    """
    kinds = "；".join(f"{what}保留 {digits} 位小数" for digits, what in DECIMALS.values())
    return (f"{kinds}。输入照原样写，例子给定的分数和温度也是输入（{short(0.5)}、{short(-2.0)}）；"
            f"小于 10⁻³ 的差（舍入误差、有限差分的步长）和浮点数的极限（如 float32 能表示的最大数）"
            f"写成科学记数法，如 {sci(2.0 ** -52)}、{sci(3.4028234663852886e38)}，两次计算逐位相同时写 {sci(0.0)}；"
            f"计数是整数，一万以上按千位分组（{count(4096)}、{count(131072)}）；"
            f"负号一律是“{MINUS}”，被禁止的分数是 {fmt(-math.inf)}。")


def short(x: float) -> str:
    """An input as one types it: whole numbers without decimals, others with at most four.

    >>> short(3.0), short(0.5), short(-2.75), short(float("-inf"))
    ('3', '0.5', '−2.75', '−∞')
    """
    x = _number(x, "short 的 x")
    if math.isinf(x) or math.isnan(x):
        return fmt(x)
    if x.is_integer() and abs(x) < 1e15:
        return _signed(str(int(x)))
    text = fmt(x, 4)
    return text.rstrip("0").rstrip(".") if "." in text else text


def count(n: int) -> str:
    """A count (positions, heads, cells): the integer as it is, thousands grouped from ten thousand up.

    >>> count(4096), count(-3), count(131072)
    ('4096', '−3', '131,072')
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise ValueError(f"count 的 n 必须是整数，收到 {n!r}")
    return _signed(f"{n:,}" if abs(n) >= 10_000 else str(n))


def size(nbytes: int) -> str:
    """A size in bytes in binary units (1 KiB = 1024 bytes), at most two decimals, no trailing zeros.

    >>> size(57344), size(2**31), size(1536 * 2**20), size(1000)
    ('56 KiB', '2 GiB', '1.5 GiB', '1000 B')
    """
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise ValueError(f"size 的 nbytes 必须是非负整数，收到 {nbytes!r}")
    value, unit = float(nbytes), "B"
    for next_unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024:
            break
        value, unit = value / 1024, next_unit
    return f"{value:.2f}".rstrip("0").rstrip(".") + f" {unit}"


def printed(text: str) -> float:
    """The value of a number as a page prints it: ``"(−2.3395)"`` → −2.3395.

    >>> printed("(-2.3395)"), printed("−1.5000"), printed("0"), printed("−∞"), printed("2.5 × 10⁻¹⁶")
    (-2.3395, -1.5, 0.0, -inf, 2.5e-16)
    """
    if not isinstance(text, str):
        raise ValueError(f"printed 需要一段文字，收到 {text!r}")
    cleaned = text.strip().strip("()").replace(MINUS, "-").replace("∞", "inf")
    if " × 10" in cleaned:  # what sci writes: "2.2 × 10⁻¹⁶"
        mantissa, exponent = cleaned.split(" × 10")
        cleaned = f"{mantissa}e{exponent.translate(_NORMAL)}"
    try:
        return float(cleaned)
    except ValueError:
        raise ValueError(f"printed 读不出数：{text!r}") from None


def equals(from_printed: float, exact: float, digits: int = 4) -> str:
    """The sign between a calculation written with printed (rounded) numbers and its printed result.

    ``=`` when what the printed numbers give prints the same as the exact result, ``≈`` when
    rounding the inputs moved the last digit: nobody is told that a rounded sum is exact.

    >>> equals(0.3302 * (-1.0 - (-2.3395)), 0.44245)  # the printed factors give 0.44230…
    '≈'
    >>> equals(0.2500 * 2.0, 0.5), equals(-1e-9, 0.0)
    ('=', '=')
    """
    return "=" if fmt(from_printed, digits) == fmt(exact, digits) else "≈"


def mark(flag: bool) -> str:
    """A visibility cell in words as well as a symbol: colour never carries meaning alone.

    >>> mark(True), mark(False)
    ('✓ 允许', '✗ 禁止')
    """
    if not isinstance(flag, bool):
        raise ValueError(f"mark 需要 True 或 False，收到 {flag!r}")
    return ALLOWED if flag else FORBIDDEN


def vector(xs, cell=short) -> str:
    """A vector in brackets, each entry written by ``cell`` (inputs as typed, by default).

    >>> vector([1.0, 0.5, -math.inf]), vector([0.25, -1.0], cell=fmt)
    ('(1, 0.5, −∞)', '(0.2500, −1.0000)')
    """
    return "(" + ", ".join(cell(x) for x in xs) + ")"


def vectors(matrix, cell=short) -> str:
    """The rows of a matrix as vectors, joined by 、 the way an input box lists them.

    >>> vectors([[1.0, 0.0], [0.0, -1.0]])
    '(1, 0)、(0, −1)'
    """
    return "、".join(vector(row, cell) for row in matrix)


def md_table(header: list[str], rows: list[list[str]]) -> str:
    """A GitHub-flavoured Markdown table (for ``{glue:md}`` with ``:format: gfm``).

    >>> print(md_table(["", "Key 0"], [["Query 0", "✓ 允许"]]))
    |  | Key 0 |
    |---|---|
    | Query 0 | ✓ 允许 |
    """
    if not header or any(len(row) != len(header) for row in rows):
        raise ValueError("md_table 的每一行都要和表头一样多列")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def keys(n: int, corner: str = "查询 ＼ Key") -> list[str]:
    """The header of a query-by-key table: the corner cell, then ``Key 0`` … ``Key n−1``.

    >>> keys(2), keys(1, corner="")
    (['查询 ＼ Key', 'Key 0', 'Key 1'], ['', 'Key 0'])
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"keys 的 n 必须是非负整数，收到 {n!r}")
    return [corner] + [f"Key {j}" for j in range(n)]


def doctest_block(function) -> str:
    """The ``>>>`` examples of ``function``'s docstring as a Markdown ``pycon`` block, for a page.

    The page shows exactly the examples that ``pytest code/`` runs, prompts and output included.

    >>> doctest_block(count).splitlines()[:2]
    ['```pycon', '>>> count(4096), count(-3), count(131072)']
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
    """Glue a Markdown table under ``name`` for ``{glue:md}`` (inside a page's notebook run only)."""
    from IPython.display import Markdown
    from myst_nb import glue

    glue(name, Markdown(md_table(header, rows)), display=False)




def sci(x: float) -> str:
    """A small number (a rounding difference, an error, a step) in scientific notation, one decimal.

    An exact zero is ``0``: it says that two computations agree to the last bit.

    >>> sci(2.220446049250313e-16), sci(0.0), sci(0.31), sci(-2e-3)
    ('2.2 × 10⁻¹⁶', '0', '3.1 × 10⁻¹', '−2.0 × 10⁻³')
    """
    x = _number(x, "sci 的 x")
    if not math.isfinite(x):
        return fmt(x)
    if x == 0.0:
        return "0"
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"{_signed(mantissa)} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def difference(x: float) -> str:
    """A difference or an error between two computations: a value while it is 10⁻³ or larger, else ``sci``.

    One rule for every page: 0.36 is ``0.3600`` (never ``3.6 × 10⁻¹``), 2.6e-5 is ``2.6 × 10⁻⁵``.

    >>> difference(0.36), difference(2.637), difference(2.6e-5), difference(0.0)
    ('0.3600', '2.6370', '2.6 × 10⁻⁵', '0')
    """
    x = _number(x, "difference 的 x")
    return fmt(x) if not math.isfinite(x) or abs(x) >= 1e-3 else sci(x)


def power(x: float) -> str:
    """A power of ten as a page states a step or a tolerance: ``10⁻⁵``.

    >>> power(1e-5), power(100.0)
    ('10⁻⁵', '10²')
    """
    text = sci(x)
    if not text.startswith("1.0 × "):
        raise ValueError(f"power 需要 10 的整数次幂，收到 {x!r}")
    return text.removeprefix("1.0 × ")


def grouped(x: float) -> str:
    """A large whole number with thousands separators, as model cards write it.

    >>> grouped(1099511627776), grouped(10000.0), grouped(-4096)
    ('1,099,511,627,776', '10,000', '−4,096')
    """
    x = _number(x, "grouped 的 x")
    if not math.isfinite(x) or not x.is_integer():
        raise ValueError(f"grouped 需要整数，收到 {x!r}")
    return _signed(f"{int(x):,}")


# -- what a page glues ---------------------------------------------------------------------------------
class Md(str):
    """Markdown text that a page glues with ``{glue:md}`` (a doctest block, a list)."""


class Table(NamedTuple):
    """A table that a page glues with ``{glue:md}`` (``:format: gfm``)."""

    header: list[str]
    rows: list[list[str]]


class FigureImage:
    """A matplotlib figure as the page shows it: SVG in the HTML, PDF in the PDF edition.

    The build says which format its builder takes (``BOOK_FIGURE_FORMATS``, set by book/_ext/figure_formats.py
    before the pages run); outside a build both are made. Drawn as IPython's inline backend draws a figure
    (``bbox_inches="tight"``), without importing pyplot or the backend into the page's kernel.
    """

    def __init__(self, figure):
        self.figure = figure

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        import os

        from IPython.core.pylabtools import print_figure

        mime = {"svg": "image/svg+xml", "pdf": "application/pdf"}
        formats = os.environ.get("BOOK_FIGURE_FORMATS", "svg,pdf").split(",")
        return {mime[f]: print_figure(self.figure, f, base64=True) for f in formats} | {"text/plain": "<图>"}


def glue_all(values: dict) -> None:
    """Glue every value of an example under its name (inside a page's notebook run only).

    A :class:`Table` (or a ``(header, rows)`` pair) and :class:`Md` become Markdown, a figure is glued as
    an image (:class:`FigureImage`), text is glued as text. A float is refused: it must be written by this
    module first.
    """
    from IPython.display import Markdown
    from myst_nb import glue

    for name, value in values.items():
        if isinstance(value, float):
            raise ValueError(f"{name}：浮点数要先用 fmt 写成文字再贴到页面上")
        if isinstance(value, tuple) and len(value) == 2 and all(isinstance(part, list) for part in value):
            value = Markdown(md_table(*value))  # a Table, or a (header, rows) pair
        elif isinstance(value, Md):
            value = Markdown(str(value))
        elif hasattr(value, "savefig"):
            value = FigureImage(value)
        glue(name, value, display=False)


def run_output(teaching_file: str) -> Md:
    """What ``python3 code/<teaching_file>`` prints, as a JSON code block a page glues (``{glue:md}``).

    The page shows it inside its 深入 block under 运行结果示例: a real run at build time, never a copy. The
    file runs as ``__main__`` in the page's own kernel (no second interpreter to start), in ``code/`` as
    its working folder; tests/test_pages.py checks that the page shows what a separate ``python3`` prints.
    """
    import contextlib
    import io
    import runpy
    import sys
    from pathlib import Path

    code = Path(__file__).resolve().parents[2] / "code"
    printed, argv = io.StringIO(), sys.argv
    try:
        sys.argv = [str(code / teaching_file)]
        with contextlib.chdir(code), contextlib.redirect_stdout(printed):
            runpy.run_path(str(code / teaching_file), run_name="__main__")
    finally:
        sys.argv = argv
    return Md(f"```json\n{printed.getvalue().rstrip()}\n```")
