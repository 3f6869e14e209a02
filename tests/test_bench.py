"""`make bench` runs to the end and prints its figures (one run each here, to keep it short).

The timings themselves are not asserted: they belong to the machine. What is asserted is that
every figure is printed and that a code edit re-executes exactly the pages that use the file.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.build


def test_bench_prints_its_figures():
    result = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "bench.py")],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "BENCH_REPEATS": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for line in ("book ", "floor ", "no-change rebuild: book / floor =", "clean build: book", "pytest code/:"):
        assert line in out, out
    code_edit = next(line for line in out.splitlines() if line.startswith("code edit:"))
    assert code_edit.endswith("ok"), code_edit
