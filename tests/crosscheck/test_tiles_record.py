"""code/02_tiles_torch.py, the tiles page's PyTorch file: its doctests, its main, and its record.

The file gives the page's rules to FlexAttention's ``create_block_mask`` and its example to
``flex_attention`` (float64, CPU) and prints what it saw. ``code/02_tiles_torch.json`` is that printout,
kept for the book (whose build never imports torch): here the file is run again and the record must be
what it prints now (a float counts as the same when the page prints it the same, ``fmt.difference``).
tests/test_chapter_tiles.py checks the record against the pure-Python blocks in ``make test``.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_tensors_record import differences

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "code" / "02_tiles_torch.py"
RECORD = FILE.with_suffix(".json")
REWRITE = ".venv-crosscheck/bin/python code/02_tiles_torch.py > code/02_tiles_torch.json"


@pytest.fixture(scope="module")
def printed() -> dict:
    run = subprocess.run(
        [sys.executable, str(FILE)], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]  # its main runs the doctests too
    return json.loads(run.stdout)


def test_the_doctests_pass():
    module = importlib.import_module("02_tiles_torch")
    result = doctest.testmod(module)
    assert result.attempted >= 5 and result.failed == 0


def test_the_record_is_what_the_file_prints_now(printed):
    changed = differences(printed, json.loads(RECORD.read_text(encoding="utf-8")))
    assert not changed, (
        "code/02_tiles_torch.py prints something else than code/02_tiles_torch.json:\n  "
        + "\n  ".join(changed)
        + f"\nlook at the change, then rewrite the record with: {REWRITE}"
    )


def test_the_record_says_where_it_was_made(printed):
    import torch

    pins = dict(
        re.findall(
            r"^([\w-]+)==([\w.+]+)", (ROOT / "tests/crosscheck/requirements.txt").read_text(), re.M
        )
    )
    assert (
        printed["torch"] == torch.__version__ and torch.__version__.split("+")[0] == pins["torch"]
    )
    assert (printed["device"], printed["dtype"]) == ("cpu", "float64")
    # what ran: flex_attention without torch.compile, the unfused implementation (said once a process)
    assert any("unfused" in w for w in printed["attention"]["warnings"])


def test_its_public_functions_answer_bad_input_with_a_value_error():
    # code/tests/test_bad_input.py leaves the *_torch.py files to this venv: its fuzz, on this file.
    sys.path.insert(0, str(ROOT / "code" / "tests"))
    spec = importlib.util.spec_from_file_location(
        "bad_input", ROOT / "code" / "tests" / "test_bad_input.py"
    )
    bad_input = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bad_input)
    assert len(bad_input._calls(importlib.import_module("02_tiles_torch"))) >= 3
    bad_input.test_bad_input_is_a_value_error_never_a_crash_or_a_hang("02_tiles_torch")
