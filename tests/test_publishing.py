"""What the book publishes is the truth of the code: fresh after every edit, and loud on failure.

These tests build a copy of the project in a temporary folder, as an author would with
``make html`` (``sphinx-build -M html book _build -c .``), and then change its code.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from bench import executed_pages, make_html, make_mini_project, pages_using, reread_count
from bench import make_project as copy_project
from conftest import load_module

pytestmark = pytest.mark.build


def scores_row(project: Path, position: int) -> list[str]:
    soup = BeautifulSoup((project / "_build/html/ch02/mask.html").read_text(encoding="utf-8"), "html.parser")
    # The raw scores are the first table of the 深入 block that holds them (屏蔽之前的分数).
    block = next(d for d in soup.select("details") if "屏蔽之前的分数" in d.find("summary").get_text())
    for tr in block.find_all("tr"):
        cells = [td.get_text(strip=True) for td in tr.find_all("td")]
        if cells and cells[0] == f"绝对位置 {position}":
            return cells[1:]  # the first such row is the raw scores table
    raise AssertionError("no score table on the mask page")


def test_a_code_edit_shows_in_the_next_build_without_cleaning(tmp_path):
    project = copy_project(tmp_path)
    first = make_html(project)
    assert first.returncode == 0, first.stderr
    assert scores_row(project, 0)[0] == f"{1 / math.sqrt(2):.4f}"

    # Edit a function: drop the 1/√d scaling. Every score and weight on the page changes.
    code = project / "code" / "02_attention.py"
    source = code.read_text(encoding="utf-8")
    line = '    return math.sqrt(check_count(d, "d"))'
    assert line in source
    code.write_text(source.replace(line, "    return 1.0"), encoding="utf-8")

    second = make_html(project)
    assert second.returncode == 0, second.stderr
    edited = load_module(code)
    expected = [f"{x:.4f}" for x in edited.scaled_scores(edited.DEMO_Q, edited.DEMO_K)[0]]
    assert scores_row(project, 0) == expected, second.stdout
    html = (project / "_build/html/ch02/mask.html").read_text(encoding="utf-8")
    weights = edited.run_demo()["因果权重"][1]
    assert str(weights[0]) in html  # the printed run output is the new one too
    # Exactly the pages that use the file are read and run again; the landing page is not read.
    users = pages_using(project, "02_attention.py")
    assert {"ch02/mask", "ch02/index"} <= set(users) and "index" not in users
    assert sorted(executed_pages(project, second.stdout)) == users, second.stdout
    assert reread_count(second.stdout) == len(users), second.stdout

    third = make_html(project)
    assert third.returncode == 0 and reread_count(third.stdout) == 0, third.stdout


def test_a_failing_cell_stops_the_build_naming_page_cell_and_error(tmp_path):
    # The book's configuration, extensions and kernel on its mini book (tests/bench.py): the page
    # uses_code calls key_padding, which is broken here.
    project = make_mini_project(tmp_path)
    code = project / "code" / "02_attention.py"
    source = code.read_text(encoding="utf-8")
    broken = source.replace(
        "    return [j < valid_len for j in range(n_key)]",
        '    raise RuntimeError("key_padding 坏了")',
    )
    assert broken != source
    code.write_text(broken, encoding="utf-8")
    result = make_html(project)
    assert result.returncode != 0
    log = result.stderr
    assert "uses_code.md" in log and "Executing notebook failed" in log  # the page
    assert "pad = att.key_padding(2, 3)" in log  # the cell
    assert 'RuntimeError: key_padding 坏了' in log  # the error
