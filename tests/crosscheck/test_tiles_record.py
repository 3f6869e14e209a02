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

import pytest
from records import (
    assert_bad_input_is_a_value_error,
    assert_the_record_is,
    pins,
    what_it_prints,
)

NAME = "02_tiles_torch"


@pytest.fixture(scope="module")
def printed() -> dict:
    return what_it_prints(NAME)


def test_the_doctests_pass():
    module = importlib.import_module(NAME)
    result = doctest.testmod(module)
    assert result.attempted >= 5 and result.failed == 0


def test_the_record_is_what_the_file_prints_now(printed):
    assert_the_record_is(NAME, printed)


def test_the_record_says_where_it_was_made(printed):
    import torch

    assert (
        printed["torch"] == torch.__version__ and torch.__version__.split("+")[0] == pins()["torch"]
    )
    assert (printed["device"], printed["dtype"]) == ("cpu", "float64")
    # what ran: flex_attention without torch.compile, the unfused implementation (said once a process)
    assert any("unfused" in w for w in printed["attention"]["warnings"])


def test_its_public_functions_answer_bad_input_with_a_value_error():
    # code/tests/test_bad_input.py leaves the *_torch.py files to this venv: its fuzz, on this file.
    assert_bad_input_is_a_value_error(NAME, at_least=3)
