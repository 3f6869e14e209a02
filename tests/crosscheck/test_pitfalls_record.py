"""code/02_pitfalls_torch.py, the pitfalls page's PyTorch file: its doctests, its main, and its record.

The file makes each of the page's mistakes with PyTorch and Transformers (a tiny Llama and a tiny GPT-2 built
from configurations, random weights, nothing downloaded) and prints what it saw. ``code/02_pitfalls_torch.json``
is that printout, kept for the book (whose build never imports torch): here the file is run again and the
record must be what it prints now, floats compared as the page prints them. tests/test_chapter_pitfalls.py
recomputes the record with the teaching code in ``make test``.
"""

from __future__ import annotations

import doctest
import importlib
import os
import subprocess
import sys

import pytest
from records import (
    ROOT,
    assert_bad_input_is_a_value_error,
    assert_the_record_is,
    what_it_prints,
)

NAME = "02_pitfalls_torch"


@pytest.fixture(scope="module")
def printed() -> dict:
    return what_it_prints(
        NAME, env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    )


def test_the_doctests_pass():
    result = doctest.testmod(importlib.import_module(NAME))
    assert result.attempted >= 1 and result.failed == 0


def test_the_record_is_what_the_file_prints_now(printed):
    assert_the_record_is(NAME, printed)


def test_the_record_says_where_it_was_made(printed):
    import torch
    import transformers

    assert (
        printed["torch"] == torch.__version__
        and printed["transformers"] == transformers.__version__
    )
    assert (printed["device"], printed["dtype"]) == ("cpu", "float64")


def test_the_tiny_models_are_built_from_configurations_without_a_download(printed):
    # The file sets HF_HUB_OFFLINE itself: run it with the network variables unset, it still works.
    env = {k: v for k, v in os.environ.items() if not k.endswith("_OFFLINE")}
    code = (
        "import importlib, os; m = importlib.import_module('02_pitfalls_torch'); "
        "print(os.environ['HF_HUB_OFFLINE'], m.generation()['left'])"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT / "code",
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split(maxsplit=1) == ["1", f"{printed['generation']['left']}\n"]


def test_its_public_functions_answer_bad_input_with_a_value_error():
    # code/tests/test_bad_input.py leaves the *_torch.py files to this venv: its fuzz, on this file.
    assert_bad_input_is_a_value_error(NAME, at_least=1)


def test_the_files_that_use_transformers_need_numpy():
    # The chapter opening lists them among the files that need numpy by their source (the book's build has
    # no PyTorch, so a run stops at `import torch` first): here transformers requires numpy, and with
    # numpy blocked each of them stops at it. A fresh Python each: this one has transformers loaded.
    from importlib.metadata import requires

    from chapter import opening

    assert any(r.split(">")[0].split("=")[0].strip() == "numpy" for r in requires("transformers"))
    code = ROOT / "code"
    files = [p.name for p in sorted(code.glob("02_*.py")) if opening.imports(p, "transformers")]
    assert NAME + ".py" in files
    for name in files:
        run = subprocess.run(
            [
                sys.executable,
                "-c",
                "from pathlib import Path; from chapter import opening; "
                f"print(opening._stops_at(Path({str(code / name)!r}), ('numpy',)))",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": f"{ROOT / 'code'}{os.pathsep}{ROOT / 'book'}"},
            timeout=300,
        )
        assert run.returncode == 0, run.stderr[-2000:]
        assert run.stdout.split()[-1] == "numpy", (name, run.stdout)
