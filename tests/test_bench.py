"""`make bench`'s machinery works on a small book: builds are timed, and a code edit re-runs exactly
the pages that use the file.

The full `make bench` builds the whole book and the floor book three times each; running it here would
double the test suite's time. This runs the same functions (make_project, measure, pages_using) on
tests/bench.py's mini book, once each. The timings themselves are not asserted: they belong to the
machine.
"""

from __future__ import annotations

import re
from pathlib import Path

import bench
import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_make_html_and_the_tests_build_with_the_same_options():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    options = re.search(r"^SPHINXOPTS\s*\?=\s*(.*)$", makefile, flags=re.M).group(1).split()
    assert options == bench.SPHINX_OPTS


@pytest.mark.build
def test_measure_times_each_build_and_a_code_edit_reruns_only_the_page_that_uses_it(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(bench, "REPEATS", 1)
    project = bench.make_mini_project(tmp_path)
    figures = bench.measure(project)
    assert all(figures[key] > 0 for key in ("clean", "nochange", "edit"))
    assert sorted(figures["executed"]) == ["index", "uses_code"]  # a clean build runs every page
    assert bench.pages_using(project, "02_attention.py") == ["uses_code"]
    assert figures["reexecuted"] == ["uses_code"]  # touching the file re-runs its page, and only it
