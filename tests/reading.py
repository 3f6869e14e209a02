"""How long the core of a built page takes to read: one rule, applied to the HTML a reader opens.

The core is what shows before the reader opens anything. Folded away, and not counted: the 深入 blocks
(closed ``<details>``), the exercises' solutions (hidden until opened), scripts, a figure player's help
line and buttons, and the page's own list of
references (「本页参考文献」, looked up rather than read). Of the rest:

- prose: every character that is not white space, outside code, tables and formulas, at 300 a minute;
- a table: half a minute each, whatever its size (its text is not counted again);
- code: a non-empty line of a code block, at 12 a minute.

``python tests/reading.py _build/html`` prints the figures per page; ``make bench`` prints them too and
tests/test_reading.py holds them to the budget.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import NamedTuple

# The parser BeautifulSoup reads built pages with: lxml's (libxml2, in C) builds a page of the chapter
# several times faster than Python's html.parser, and the tests read every page many times.
PARSER = "lxml"
CHARS_PER_MINUTE = 300
MINUTES_PER_TABLE = 0.5
CODE_LINES_PER_MINUTE = 12
PAGE_BUDGET = 15.0  # minutes of core per page
# Minutes for the chapter's opening, its ten mechanism pages and its summary together: twelve pages at
# 12.5 minutes on average, so that not every page can use its whole 15.
CHAPTER_BUDGET = 150.0
# What a reader does not see until opening it: a 深入 block that is closed, a solution, scripts.
# The step figures' interface help (how to use the player: said once in the preface) and their buttons
# are not reading either.
FOLDED = "script, style, a.headerlink, details:not([open]), div.solution, .step-figure-help, button"
FORMULAS = "code, span.math, div.math, mjx-container"
# The rubric over each page's own bibliography (book/_ext/page_refs.py).
BIBLIOGRAPHY_TITLE = "本页参考文献"
# Every depth block's title begins so (book/_ext/depth_blocks.py).
DEPTH_TITLE = "深入："


def bibliography(article) -> list:
    """The page's own bibliography: the rubric 「本页参考文献」 and the list after it."""
    found = []
    for rubric in article.find_all("p", class_="rubric"):  # find_all: many times faster than select
        if rubric.get_text(strip=True) == BIBLIOGRAPHY_TITLE:
            found.append(rubric)
            entries = rubric.find_next_sibling()
            if entries is not None and entries.name in ("ul", "ol", "dl", "div"):
                found.append(entries)
    return found


def strings(node, leave_out: str = "", also=()):
    """The strings ``node.get_text()`` joins, outside the nodes the CSS selector ``leave_out`` selects and
    the nodes ``also``. ``node`` is not changed: the tests share one parse of each page (tests/conftest.py)."""
    from bs4 import CData, NavigableString, Tag

    skipped = {id(n) for n in (node.select(leave_out) if leave_out else [])} | set(map(id, also))

    def walk(tag):
        for child in tag.children:
            if isinstance(child, Tag):
                if id(child) not in skipped:
                    yield from walk(child)
            elif type(child) in (NavigableString, CData):  # as get_text: no comments, scripts' code
                yield str(child)

    return walk(node)


def text(node, leave_out: str = "", sep: str = "", also=()) -> str:
    """``node.get_text(sep)`` without what ``leave_out`` selects and the nodes ``also`` (see strings).

    >>> from bs4 import BeautifulSoup
    >>> page = BeautifulSoup("<p>一<code>x</code>二<span class='math'>y</span></p>", "html.parser")
    >>> text(page, "code, span.math")
    '一二'
    """
    return sep.join(strings(node, leave_out, also))


class Reading(NamedTuple):
    chars: int
    tables: int
    code_lines: int

    @property
    def minutes(self) -> float:
        return (
            self.chars / CHARS_PER_MINUTE
            + self.tables * MINUTES_PER_TABLE
            + self.code_lines / CODE_LINES_PER_MINUTE
        )


def reading(page) -> Reading:
    """The core of a page (its HTML, or the page parsed with BeautifulSoup), measured.

    >>> page = ("<article><p>一二三</p><table><tr><td>表里的字</td></tr></table>"
    ...         "<pre>a = 1\\n\\nb = 2</pre><details><summary>深入：x</summary><p>折起来的字</p></details>"
    ...         "<p>公式 <span class='math'>\\\\(x^2\\\\)</span> 与 <code>code</code></p>"
    ...         "<p class='rubric'>本页参考文献</p><ul><li>一条参考文献</li></ul></article>")
    >>> reading(page)
    Reading(chars=6, tables=1, code_lines=2)
    """
    from bs4 import BeautifulSoup

    if isinstance(page, str):
        page = BeautifulSoup(page, PARSER)
    article = page.find("article")
    folded = article.select(FOLDED) + bibliography(article)
    # Nothing inside a folded block counts; a table counts whole (its text not again), the code lines of a
    # block are counted as code, and a formula is not prose.
    skipped = {id(n) for n in folded}

    def outside(node) -> bool:  # not folded, and not inside a table (a table counts whole)
        return not any(id(p) in skipped or p.name == "table" for p in node.parents)

    tables = [t for t in article.select("table") if outside(t)]
    blocks = [b for b in article.select("pre") if outside(b)]
    code_lines = sum(1 for b in blocks for line in b.get_text().splitlines() if line.strip())
    prose = text(article, FORMULAS, also=[*folded, *tables, *blocks])
    return Reading(len(re.sub(r"\s+", "", prose)), len(tables), code_lines)


def chapter_pages(html_dir: Path) -> list[str]:
    """The chapter in reading order: its opening, then the pages its contents list (summary included)."""
    from bs4 import BeautifulSoup

    opening = html_dir / "ch02" / "index.html"
    soup = BeautifulSoup(opening.read_text(encoding="utf-8"), PARSER)
    pages = [a["href"] for a in soup.select("article .toctree-wrapper a") if "#" not in a["href"]]
    return ["ch02/index.html", *(f"ch02/{href}" for href in dict.fromkeys(pages))]


def report(html_dir: Path, page_of=None) -> list[tuple[str, Reading]]:
    """Each page of the chapter and its reading; ``page_of(name)`` gives a page (its HTML by default)."""
    page_of = page_of or (lambda name: (html_dir / name).read_text(encoding="utf-8"))
    return [(name, reading(page_of(name))) for name in chapter_pages(html_dir)]


def table(rows: list[tuple[str, Reading]]) -> str:
    lines = [f"{'page':28} {'prose chars':>11} {'tables':>6} {'code lines':>10} {'minutes':>8}"]
    for name, r in rows:
        lines.append(f"{name:28} {r.chars:11d} {r.tables:6d} {r.code_lines:10d} {r.minutes:8.1f}")
    lines.append(
        f"{'chapter':28} {'':11} {'':6} {'':10} {sum(r.minutes for _, r in rows):8.1f}"
        f"   (budget {PAGE_BUDGET:g} a page, {CHAPTER_BUDGET:g} in all)"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(report(Path(sys.argv[1] if len(sys.argv) > 1 else "_build/html"))))
