"""How the book prints a number, one format per kind (``DECIMALS``), and the tables and vectors of them."""

from __future__ import annotations

import contextlib
import doctest
import inspect
import io
import json
import math
import runpy
import sys
import unicodedata
from numbers import Real
from pathlib import Path
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
    "value": (
        4,
        "算出的分数、权重、输出、梯度和频率（算出的整数也写成 5.0000），以及两次计算之间不小于 10⁻³ 的差",
    ),
    "ratio": (2, "两个量之比和拟合的斜率"),
    "multiple": (1, "“约为几倍”的倍数和以位置计的周期（一万以上按千位分组，如 12,345.6）"),
    "ms": (3, "以毫秒计的时间"),
    "seconds": (2, "以秒计的时间"),
    "percent": (
        2,
        "百分比（两位小数会把一个并非整数的百分比写成整数时，多保留几位，直到看得出差别）",
    ),
}


def _signed(text: str) -> str:
    return text.replace("-", MINUS)


def fmt(x: float, digits: int = DECIMALS["value"][0]) -> str:
    """A computed value: ``digits`` decimals, U+2212 for minus, ±∞ and NaN spelled out, zero unsigned.

    >>> fmt(0.0900305731)
    '0.0900'
    >>> fmt(-1.5)
    '−1.5000'
    >>> fmt(float("-inf"))
    '−∞'
    >>> fmt(-0.00001)
    '0.0000'
    >>> fmt(2.3395, 2)
    '2.34'
    >>> fmt(float("nan"))
    'NaN'
    """
    x = _number(x, "fmt 的 x")
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 12:
        raise ValueError(f"digits 必须是 0 到 12 的整数，收到 {digits!r}")
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else MINUS + "∞"
    text = f"{x:.{digits}f}"
    return _signed(text.lstrip("-") if float(text) == 0 else text)


def ratio(x: float) -> str:
    """A ratio of two quantities, or a fitted slope: ``4.00``."""
    return fmt(x, DECIMALS["ratio"][0])


def multiple(x: float) -> str:
    """How many times larger ("约 2.8 倍"), or a period in positions: whole numbers as they are.

    >>> multiple(4.0)
    '4'
    >>> multiple(2 ** 1.5)
    '2.8'
    >>> multiple(54410.27)
    '54,410.3'
    """
    x = _number(x, "multiple 的 x")
    if not math.isfinite(x) or abs(x) < 10_000:
        return short(x) if x.is_integer() else fmt(x, DECIMALS["multiple"][0])
    return _signed(
        f"{x:,.0f}" if x.is_integer() else f"{x:,.{DECIMALS['multiple'][0]}f}"
    )  # 54,410.3


def ms(seconds: float) -> str:
    """A time given in seconds, printed in milliseconds: 0.0012345 → ``1.234``."""
    return fmt(1000 * _number(seconds, "ms 的 seconds"), DECIMALS["ms"][0])


def seconds(x: float) -> str:
    """A time in seconds: ``1.23``."""
    return fmt(x, DECIMALS["seconds"][0])


def percent(share: float) -> str:
    """A share (0.25) as a percentage: ``25.00%``."""
    return fmt(100 * _number(share, "percent 的 share"), DECIMALS["percent"][0]) + "%"


def decimals_sentence() -> str:
    """The preface's statement of how the book prints numbers: the decimals of each kind, then the rest."""
    kinds = "；".join(f"{what}保留 {digits} 位小数" for digits, what in DECIMALS.values())
    return (
        f"{kinds}。输入照原样写，例子给定的分数和温度也是输入（{short(0.5)}、{short(-2.0)}）；"
        f"小于 10⁻³ 的差（舍入误差、有限差分的步长）和浮点数的极限（如 float32 能表示的最大数）"
        f"写成科学记数法，如 {sci(2.0**-52)}、{sci(3.4028234663852886e38)}，两次计算逐位相同时写 {sci(0.0)}；"
        f"计数是整数，一万以上按千位分组（{count(4096)}、{count(131072)}）；"
        f"负号一律是“{MINUS}”，被禁止的分数是 {fmt(-math.inf)}。"
    )


def short(x: float) -> str:
    """An input as one types it: whole numbers without decimals, others with at most four.

    >>> short(3.0)
    '3'
    >>> short(0.5)
    '0.5'
    >>> short(-2.75)
    '−2.75'
    >>> short(float("-inf"))
    '−∞'
    >>> short(1 / 3)
    '0.3333'
    """
    x = _number(x, "short 的 x")
    if not math.isfinite(x):
        return fmt(x)
    if x.is_integer() and abs(x) < 1e15:
        return _signed(str(int(x)))
    return fmt(x, 4).rstrip("0").rstrip(".")


def count(n: int) -> str:
    """A count (positions, heads, cells): the integer as it is, thousands grouped from ten thousand up.

    >>> count(4096)
    '4096'
    >>> count(-3)
    '−3'
    >>> count(131072)
    '131,072'
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise ValueError(f"count 的 n 必须是整数，收到 {n!r}")
    return _signed(f"{n:,}" if abs(n) >= 10_000 else str(n))


def size(nbytes: int) -> str:
    """A size in bytes in binary units (1 KiB = 1024 bytes), at most two decimals, no trailing zeros.

    >>> size(57344)
    '56 KiB'
    >>> size(2**31)
    '2 GiB'
    >>> size(1536 * 2**20)
    '1.5 GiB'
    >>> size(1000)
    '1000 B'
    """
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise ValueError(f"size 的 nbytes 必须是非负整数，收到 {nbytes!r}")
    value = float(nbytes)
    unit = "B"
    for next_unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024:
            break
        value = value / 1024
        unit = next_unit
    return f"{value:.2f}".rstrip("0").rstrip(".") + f" {unit}"


def printed(text: str) -> float:
    """The value of a number as a page prints it.

    >>> printed("(-2.3395)")
    -2.3395
    >>> printed("−1.5000")
    -1.5
    >>> printed("0")
    0.0
    >>> printed("−∞")
    -inf
    >>> printed("2.5 × 10⁻¹⁶")
    2.5e-16
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
    """``=`` if a calculation with the printed (rounded) numbers prints as the exact result, else ``≈``.

    >>> equals(0.3302 * (-1.0 - (-2.3395)), 0.44245)
    '≈'
    >>> equals(0.2500 * 2.0, 0.5)
    '='
    >>> equals(-1e-9, 0.0)
    '='
    """
    return "=" if fmt(from_printed, digits) == fmt(exact, digits) else "≈"


class Calculation(NamedTuple):
    """A calculation the page writes out in printed numbers, and its result.

    ``terms`` is the calculation as printed (``0.3302×(−1.0000 − (−2.3395))``), ``from_printed`` what
    those printed numbers give, ``exact`` the result computed from the unrounded values. Written out it
    says ``=`` only when the printed numbers give the printed result, else ``≈`` (:func:`equals`).
    Whether the printed numbers give the result at all, up to their rounding, is :attr:`adds_up`: a fact
    the section holds (``s.holds``), so that a wrong term stops the build.

    >>> c = Calculation("0.3302×(−1.0000 − (−2.3395))", 0.3302 * (-1.0 + 2.3395), 0.44236)
    >>> str(c), c.result, c.adds_up
    ('0.3302×(−1.0000 − (−2.3395)) ≈ 0.4424', '≈ 0.4424', True)
    >>> Calculation("2×3", 2 * 3, 5.0).adds_up
    False
    """

    terms: str
    from_printed: float
    exact: float
    digits: int = DECIMALS["value"][0]

    @property
    def result(self) -> str:
        """``= 0.7500``, or ``≈ 0.4424`` where rounding moved the last digit."""
        return (
            f"{equals(self.from_printed, self.exact, self.digits)} {fmt(self.exact, self.digits)}"
        )

    @property
    def adds_up(self) -> bool:
        """Whether the printed numbers give the result to within ten units of its last printed digit."""
        return abs(self.from_printed - self.exact) < 10 ** (1 - self.digits)

    def __str__(self) -> str:
        return f"{self.terms} {self.result}"


def products(pairs, exact: float, sqrt_of: int | None = None) -> Calculation:
    """``a×b + c×d`` from pairs of printed factors, against ``exact``; with ``sqrt_of``, that sum over √n.

    >>> str(products([("0.5000", "2"), ("1", "1")], 2.0))
    '0.5000×2 + 1×1 = 2.0000'
    >>> str(products([("1.0000", "1")], 1 / math.sqrt(2), sqrt_of=2))
    '(1.0000×1) / √2 = 0.7071'
    """
    text = " + ".join(f"{a}×{b}" for a, b in pairs)
    value = sum(printed(a) * printed(b) for a, b in pairs)
    if sqrt_of is not None:
        text = f"({text}) / √{sqrt_of}"
        value = value / math.sqrt(sqrt_of)
    return Calculation(text, value, exact)


def printed_sum(xs, total: float) -> Calculation:
    """The values ``xs`` as the page prints them (:func:`fmt`), added up against ``total``.

    >>> printed_sum([0.5, 0.5], 1.0).result
    '= 1.0000'
    >>> printed_sum([0.13534, 0.60653, 1.0], 1.74187).result  # the printed terms add up to 1.7418
    '≈ 1.7419'
    """
    return Calculation(" + ".join(fmt(x) for x in xs), sum(printed(fmt(x)) for x in xs), total)


def mark(flag: bool) -> str:
    """A visibility cell in words as well as a symbol (``✓ 允许``): colour never carries meaning alone."""
    if not isinstance(flag, bool):
        raise ValueError(f"mark 需要 True 或 False，收到 {flag!r}")
    return ALLOWED if flag else FORBIDDEN


def vector(xs, cell=short) -> str:
    """A vector in brackets, each entry written by ``cell`` (inputs as typed, by default).

    >>> vector([1.0, 0.5, -math.inf])
    '(1, 0.5, −∞)'
    >>> vector([0.25, -1.0], cell=fmt)
    '(0.2500, −1.0000)'
    """
    return "(" + ", ".join(cell(x) for x in xs) + ")"


def vectors(matrix, cell=short) -> str:
    """The rows of a matrix as vectors, joined by 、 the way an input box lists them: ``(1, 0)、(0, −1)``."""
    return "、".join(vector(row, cell) for row in matrix)


def names(word: str, items) -> str:
    """Numbered names (``Key 0、Key 2``); ``无`` when there are none."""
    return "、".join(f"{word} {i}" for i in items) or "无"


def slashed(xs) -> str:
    """Computed values in one cell: ``0.5000 / 0.5000``."""
    return " / ".join(fmt(x) for x in xs)


def cell(text: str, state: str | None = None, highlight: bool = False) -> dict:
    """A figure frame's table cell: its text, its colour (``allowed``, ``forbidden``) and whether bold."""
    return {"text": text, "state": state, "highlight": highlight}


def rows_of(matrix, label, cell=fmt) -> list[list[str]]:
    """A table's rows: ``label(i)``, then the row's entries written by ``cell``."""
    return [[label(i)] + [cell(x) for x in row] for i, row in enumerate(matrix)]


def md_table(header: list[str], rows: list[list[str]]) -> str:
    """A GitHub-flavoured Markdown table (for ``{glue:md}`` with ``:format: gfm``).

    >>> print(md_table(["", "Key 0"], [["Query 0", "✓ 允许"]]))
    |  | Key 0 |
    |---|---|
    | Query 0 | ✓ 允许 |

    A ``|`` inside a cell (a condition such as ``(k < n) | (k <= q)``) is escaped, so that it stays in
    its cell, code spans included:

    >>> print(md_table(["条件"], [["`a | b`"]]).splitlines()[-1])
    | `a \\| b` |
    """
    if not header or any(len(row) != len(header) for row in rows):
        raise ValueError("md_table 的每一行都要和表头一样多列")

    def line(cells) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    lines = [line(header), "|" + "---|" * len(header)]
    return "\n".join(lines + [line(row) for row in rows])


def keys(n: int, corner: str = "查询 ＼ Key") -> list[str]:
    """The header of a query-by-key table: the corner cell, then ``Key 0`` … ``Key n−1``.

    >>> keys(2)
    ['查询 ＼ Key', 'Key 0', 'Key 1']
    >>> keys(1, corner="")
    ['', 'Key 0']
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"keys 的 n 必须是非负整数，收到 {n!r}")
    return [corner] + [f"Key {j}" for j in range(n)]


def doctest_block(function) -> str:
    """The ``>>>`` examples of ``function``'s docstring (those ``pytest`` runs) as a Markdown ``pycon`` block.

    >>> doctest_block(count).splitlines()[:2]
    ['```pycon', '>>> count(4096)']
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


def sci(x: float) -> str:
    """A small number (a rounding difference, an error, a step) in scientific notation; exact zero ``0``.

    >>> sci(2.220446049250313e-16)
    '2.2 × 10⁻¹⁶'
    >>> sci(0.0)
    '0'
    >>> sci(0.31)
    '3.1 × 10⁻¹'
    >>> sci(-2e-3)
    '−2.0 × 10⁻³'
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

    >>> difference(0.36)
    '0.3600'
    >>> difference(2.637)
    '2.6370'
    >>> difference(2.6e-5)
    '2.6 × 10⁻⁵'
    >>> difference(0.0)
    '0'
    """
    x = _number(x, "difference 的 x")
    return fmt(x) if not math.isfinite(x) or abs(x) >= 1e-3 else sci(x)


def power(x: float) -> str:
    """A power of ten as a page states a step or a tolerance: ``10⁻⁵``."""
    text = sci(x)
    if not text.startswith("1.0 × "):
        raise ValueError(f"power 需要 10 的整数次幂，收到 {x!r}")
    return text.removeprefix("1.0 × ")


def grouped(x: float) -> str:
    """A large whole number with thousands separators, as model cards write it: ``1,099,511,627,776``."""
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
    """A matplotlib figure drawn as IPython's inline backend would, in SVG (for the HTML) and PDF (for the
    LaTeX edition): MyST-NB gives each builder the one it prefers, so the PDF build reuses the pages the
    HTML build has read and runs none of them again."""

    def __init__(self, figure):
        self.figure = figure

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        from IPython.core.pylabtools import print_figure

        mime = {"svg": "image/svg+xml", "pdf": "application/pdf"}
        return {mime[f]: print_figure(self.figure, f, base64=True) for f in mime} | {
            "text/plain": "<图>"
        }


def holds(page: str, claims: dict[str, bool]) -> None:
    """Stop the build when a fixed sentence of ``page`` no longer holds: ``claims`` maps the name of each
    sentence's fact to whether this run bears it out (the sentence lives in the page, its fact here).

    >>> holds("缩放一页", {"和为 1": True})
    >>> holds("缩放一页", {"和为 1": True, "不随 d 增长": False})
    Traceback (most recent call last):
    ...
    ValueError: 缩放一页的固定说法与这次算出的不符：不随 d 增长
    """
    wrong = [name for name, ok in claims.items() if not ok]
    if wrong:
        raise ValueError(f"{page}的固定说法与这次算出的不符：{'、'.join(wrong)}")


def glue_all(values: dict) -> None:
    """Glue each value under its name: tables and Md as Markdown, a figure as an image; a float is refused."""
    from IPython.display import Markdown
    from myst_nb import glue

    for name, value in values.items():
        if isinstance(value, float):
            raise ValueError(f"{name}：浮点数要先用 fmt 写成文字再贴到页面上")
        if (
            isinstance(value, tuple)
            and len(value) == 2
            and all(isinstance(part, list) for part in value)
        ):
            value = Markdown(md_table(*value))  # a Table, or a (header, rows) pair
        elif isinstance(value, Md):
            value = Markdown(str(value))
        elif hasattr(value, "savefig"):
            value = FigureImage(value)
        glue(name, value, display=False)


WIDTH = (
    100  # the columns of a listing, as code/'s listings keep them (a Chinese character counts two)
)


def columns(text: str) -> int:
    """How wide ``text`` shows in a monospaced listing: a wide (Chinese) character takes two columns.

    >>> columns("ab")
    2
    >>> columns("权重")
    4
    """
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def json_text(value, width: int = WIDTH) -> str:
    """JSON laid out to be read at ``width`` columns, as the teaching files print it (an object one key a
    line) but with no line longer than ``width``: a value too long for its line wraps between items, the
    next lines indented, so it takes about as many lines as the long line would when wrapped.

    >>> print(json_text({"n": 3, "rows": [[1, 2], [3, 4], [5, 6]]}, width=22))
    {
      "n": 3,
      "rows": [[1, 2],
        [3, 4], [5, 6]]
    }
    """
    pad = "  "
    lines = []
    for i, (key, x) in enumerate(value.items()):
        head = f"{pad}{_dumps(key)}: "
        after = 1 if i < len(value) - 1 else 0  # the comma that follows the value
        lines.append(head + _wrapped(x, pad, columns(head), width, after))
    return "{\n" + ",\n".join(lines) + "\n}"


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def _wrapped(value, indent: str, start: int, width: int, after: int = 0) -> str:
    """``value`` written from column ``start``, followed on its last line by ``after`` more columns (the
    caller's comma or bracket): on one line if it fits, else its items wrapped between items
    (continuation lines at ``indent`` plus two spaces); an item too long for a line of its own is
    wrapped the same way."""
    one = _dumps(value)
    if start + columns(one) + after <= width or not isinstance(value, (list, dict)) or not value:
        return one
    inner = indent + "  "
    if isinstance(value, dict):
        items = [(f"{_dumps(k)}: ", x) for k, x in value.items()]
    else:
        items = [("", x) for x in value]
    opening, closing = "{}" if isinstance(value, dict) else "[]"
    text = opening
    column = start + 1
    for i, (head, x) in enumerate(items):
        last_item = i == len(items) - 1
        end = closing if last_item else ","
        follows = columns(end) + (after if last_item else 0)
        flat = head + _dumps(x)
        if i and column + 1 + columns(flat) + follows > width:  # the next item starts a new line
            text += "\n" + inner
            column = columns(inner)
        elif i:
            text += " "
            column += 1
        piece = head + _wrapped(x, inner, column + columns(head), width, follows) + end
        text += piece
        last = piece.rsplit("\n", 1)
        column = columns(last[-1]) if len(last) > 1 else column + columns(piece)
    return text


def run_output(teaching_file: str) -> Md:
    """What ``python3 code/<teaching_file>`` prints (run as ``__main__`` in the kernel), as a JSON block
    laid out at WIDTH columns (``json_text``): the same JSON, no line to scroll sideways."""
    code = Path(__file__).resolve().parents[2] / "code"
    out = io.StringIO()
    argv = sys.argv
    try:
        sys.argv = [str(code / teaching_file)]
        with contextlib.chdir(code), contextlib.redirect_stdout(out):
            runpy.run_path(str(code / teaching_file), run_name="__main__")
    finally:
        sys.argv = argv
    return Md(f"```json\n{json_text(json.loads(out.getvalue()))}\n```")
