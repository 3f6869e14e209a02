"""chapter/page.py, the one way a page section gives its page values, tables, figures and fact checks."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

from chapter import fmt
from chapter.page import Col, Section, figure, write


def test_a_section_writes_each_value_as_its_kind_prints():
    s = Section("某页", "某节")
    s.value(a=0.5)
    s.value("count", n=12345)
    s.value("difference", gap=2.6e-5)
    s.text(names="Key 0、Key 2")
    assert s.values == {"a": "0.5000", "n": "12,345", "gap": "2.6 × 10⁻⁵", "names": "Key 0、Key 2"}
    with pytest.raises(ValueError, match="kind"):
        write("values", 1.0)


def test_a_name_is_glued_once():
    s = Section("某页", "某节")
    s.value(a=0.5)
    with pytest.raises(ValueError, match="某页「某节」的 a 贴了两次"):
        s.text(a="again")


def test_a_table_is_a_header_and_a_cell_per_column_and_row():
    s = Section("某页", "某节")
    s.table("t", [("甲", 0.25, 1e-9)], Col("名", lambda r: r[0], "text"), Col("值", lambda r: r[1]))
    s.grid("g", "P", [[1.0, 0.0]], ["查询 0"], ["Key 0", "Key 1"])
    assert s.values["t"] == fmt.Table(["名", "值"], [["甲", "0.2500"]])
    assert s.values["g"] == fmt.Table(["P", "Key 0", "Key 1"], [["查询 0", "1.0000", "0.0000"]])


def test_the_fact_check_names_page_section_and_every_false_fact():
    s = Section("反向传播一页", "整行都被禁止")
    s.holds(a=True)
    with pytest.raises(ValueError) as raised:
        s.holds(a=True, b=False, c=False)
    assert str(raised.value) == "反向传播一页「整行都被禁止」的固定说法与这次算出的不符：b、c"


def test_the_figure_factory_fixes_the_svg_ids():
    matplotlib = pytest.importorskip("matplotlib")
    with figure((2.0, 1.0), "某页") as (fig, ax):
        ax.text(0.5, 0.5, "查询")
    assert matplotlib.rcParams["svg.hashsalt"] == "某页"
    assert tuple(fig.get_size_inches()) == (2.0, 1.0) and not ax.axison


def test_glue_puts_tables_and_markdown_as_markdown_and_text_as_text(monkeypatch):
    myst_nb = pytest.importorskip("myst_nb")
    glued = {}
    monkeypatch.setattr(
        myst_nb, "glue", lambda name, value, display: glued.update({name: (value, display)})
    )
    s = Section("某页", "某节")
    s.md(a="| x |\n|---|\n| 1 |")
    s.text(b="text")
    s.grid("c", "P", [[1.0]], ["查询 0"], ["Key 0"])
    s.glue()
    assert type(glued["a"][0]).__name__ == "Markdown" and glued["a"][0].data.startswith("| x |")
    assert glued["b"] == ("text", False)
    assert glued["c"][0].data == "| P | Key 0 |\n|---|---|\n| 查询 0 | 1.0000 |"


# -- what the pages call ---------------------------------------------------------------------------
PAGES = sorted((Path(__file__).resolve().parents[1] / "book").rglob("*.md"))


def called_by_pages() -> list[tuple[str, str]]:
    """(module, function) of each section a page's code cells call as ``page.name()`` and of each
    step figure's frames and explore states it names (``module:function``)."""
    found = []
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        module = re.search(r"^from chapter import (\w+) as page$", text, re.M)
        for cell in re.findall(r"^```\{code-cell\}.*?\n(.*?)^```", text, re.M | re.S):
            found += [
                (f"chapter.{module[1]}", name) for name in re.findall(r"\bpage\.(\w+)\(", cell)
            ]
        found += re.findall(r"^(?:::+\{step-figure\}|:explore:) ([\w.]+):(\w+)$", text, re.M)
    return sorted(set(found))


def test_every_section_and_figure_a_page_calls_takes_no_arguments():
    called = called_by_pages()
    assert len(called) > 100 and ("chapter.mask_figure", "f12_explore_states") in called
    for module, name in called:
        function = getattr(importlib.import_module(module), name)
        assert not inspect.signature(function).parameters, f"{module}.{name}"
