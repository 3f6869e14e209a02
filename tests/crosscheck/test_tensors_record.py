"""code/02_tensors_torch.py, the tensors page's PyTorch file: its doctests, its main, and its record.

The file runs the page's batch through ``scaled_dot_product_attention``, ``nn.MultiheadAttention``
and Hugging Face's ``masking_utils`` and prints what it saw. ``code/02_tensors_torch.json`` is that
printout, kept for the book (whose build never imports torch): here the file is run again and the
record must be what it prints now. A float counts as the same when the page prints it the same
(``fmt.difference``); the gaps to ``attention_batched``, rounding-level in float64, count as the same
while both stay below the page's ``TOLERANCE`` (their last digits change with the machine: 6.2e-17 on
one, 1.1e-16 on another, with the same versions). tests/test_chapter_tensors.py checks the record
against numpy in ``make test``, the gaps below that tolerance included.
"""

from __future__ import annotations

import doctest
import importlib

import pytest
from records import (
    assert_bad_input_is_a_value_error,
    assert_the_record_is,
    differences,
    pins,
    what_it_prints,
)

from chapter import tensors as page

NAME = "02_tensors_torch"


@pytest.fixture(scope="module")
def printed() -> dict:
    return what_it_prints(NAME)


def test_the_doctests_pass():
    module = importlib.import_module(NAME)
    result = doctest.testmod(module)
    assert result.attempted >= 4 and result.failed == 0


def test_the_record_is_what_the_file_prints_now(printed):
    assert_the_record_is(NAME, printed, rounding=page.TOLERANCE)


def test_the_record_says_where_it_was_made(printed):
    import torch
    import transformers

    assert (
        printed["torch"] == torch.__version__ and torch.__version__.split("+")[0] == pins()["torch"]
    )
    assert printed["transformers"] == transformers.__version__ == pins()["transformers"]
    assert (printed["device"], printed["dtype"]) == ("cpu", "float64")


def test_its_public_functions_answer_bad_input_with_a_value_error():
    # code/tests/test_bad_input.py leaves the *_torch.py files to this venv: its fuzz, on this file.
    assert_bad_input_is_a_value_error(NAME, at_least=3)


def test_only_rounding_level_gaps_compare_by_size():
    # 6.2e-17 and 1.1e-16 are the same rounding-level gap; 0 (bit-identical) and 0.5 are not.
    assert not differences({"gap": 1.1e-16}, {"gap": 6.2e-17}, rounding=page.TOLERANCE)
    assert differences({"gap": 1.1e-16}, {"gap": 0.0}, rounding=page.TOLERANCE)
    assert differences({"gap": 1.1e-16}, {"gap": 0.5}, rounding=page.TOLERANCE)
    assert differences({"gap": 1.1e-16}, {"gap": 6.2e-17})
