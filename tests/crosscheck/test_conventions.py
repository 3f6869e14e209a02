"""The conventions table of the mask page is what the installed libraries do (make crosscheck)."""

from __future__ import annotations

import json

import observe

from chapter import mask as conv  # the book side: it imports neither MyST-NB nor IPython


def test_the_stored_observations_are_what_the_libraries_do_now():
    seen = observe.observe()
    stored = json.loads(observe.STORED.read_text(encoding="utf-8"))
    assert seen == stored, (
        "The libraries behave differently from code/02_library_conventions.json; look at the change, "
        "then store it with: .venv-crosscheck/bin/python tests/crosscheck/observe.py --write\n"
        + json.dumps(seen, ensure_ascii=False, indent=2)
    )


def test_every_observation_found_a_reading():
    # "other" means none of the readings the book knows matched: the table would have no words for it.
    text = json.dumps(observe.observe())
    assert '"other"' not in text


def test_pytorchs_causal_biases_are_the_books_two_tables():
    from torch.nn.attention.bias import causal_lower_right, causal_upper_left

    for past, new in [(0, 1), (1, 2), (3, 2), (5, 4)]:
        n_key = past + new
        lower = causal_lower_right(new, n_key)._materialize().tolist()
        upper = causal_upper_left(new, n_key)._materialize().tolist()
        assert lower == conv.causal_table(new, n_key, "bottom-right")
        assert upper == conv.causal_table(new, n_key, "top-left")
