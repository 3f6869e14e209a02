"""`make bench` builds as `make html` does. Its machinery (make_project, measure, pages_using) runs on
tests/bench.py's mini book, once, in tests/test_publishing.py: the full `make bench` builds the whole book
and the floor book three times each, which would double the test suite's time.
"""

from __future__ import annotations

import re
from pathlib import Path

import bench

ROOT = Path(__file__).resolve().parent.parent


def test_make_html_and_the_tests_build_with_the_same_options():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    options = re.search(r"^SPHINXOPTS\s*\?=\s*(.*)$", makefile, flags=re.M).group(1).split()
    assert options == bench.SPHINX_OPTS
