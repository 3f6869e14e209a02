"""What the book publishes is the truth of the code: fresh after every edit, and loud on failure.

These tests build a copy of the project in a temporary folder, as an author would with
``make html`` (``sphinx-build -M html book _build -c .``), and then change its code.
"""

from __future__ import annotations

from pathlib import Path

import bench
import pytest
from bench import make_html, make_mini_project, pages_using
from bs4 import BeautifulSoup
from conftest import load_module
from reading import PARSER

pytestmark = pytest.mark.build


def printed(project: Path) -> str:
    """The text of the mini book's page that runs 02_attention (its printed output included)."""
    html = (project / "_build/html/uses_code.html").read_text(encoding="utf-8")
    return BeautifulSoup(html, PARSER).get_text()


def test_a_code_edit_shows_in_the_next_build_and_a_failing_cell_stops_it(tmp_path, monkeypatch):
    # The book's configuration, extensions and kernel on its mini book (tests/bench.py): a page that
    # prints att.run_demo()["输出"] and a landing page that uses no code. `make bench`'s own
    # measurement, once (bench.measure: clean, no-change, then a code edit; the timings are the
    # machine's and not asserted), with an edit of the code's content, then an edit that breaks it
    # (one project, built from clean once).
    monkeypatch.setattr(bench, "REPEATS", 1)
    project = make_mini_project(tmp_path)
    code = project / "code" / "02_attention.py"
    before = load_module(code).run_demo()["输出"]
    line = '    return math.sqrt(check_count(d, "d"))'
    assert line in code.read_text(encoding="utf-8")

    def drop_the_scaling(path: Path) -> None:  # every weight, and so every output, changes
        path.write_text(path.read_text(encoding="utf-8").replace(line, "    return 1.0"), "utf-8")

    figures = bench.measure(project, edit=drop_the_scaling)
    assert all(figures[key] > 0 for key in ("clean", "nochange", "edit"))
    assert sorted(figures["executed"]) == ["index", "uses_code"]  # a clean build runs every page
    assert figures["reread"] == 0  # a build with nothing changed reads no page again
    after = load_module(code).run_demo()["输出"]
    assert after != before
    assert str(after) in printed(project) and str(before) not in printed(project)
    # Exactly the pages that use the file are read and run again; the landing page is not read.
    users = pages_using(project, "02_attention.py")
    assert users == ["uses_code"]
    assert figures["reexecuted"] == users and figures["edit_reread"] == len(users)

    # Break key_padding, which the page uses_code calls: the next build stops, naming the page, the
    # cell and the error.
    code.write_text(
        code.read_text(encoding="utf-8").replace(
            "    return [j < valid_len for j in range(n_key)]",
            '    raise RuntimeError("key_padding 坏了")',
        ),
        encoding="utf-8",
    )
    assert "key_padding 坏了" in code.read_text(encoding="utf-8")
    result = make_html(project)
    assert result.returncode != 0
    log = result.stderr
    assert "uses_code.md" in log and "Executing notebook failed" in log  # the page
    assert "pad = att.key_padding(2, 3)" in log  # the cell
    assert "RuntimeError: key_padding 坏了" in log  # the error
