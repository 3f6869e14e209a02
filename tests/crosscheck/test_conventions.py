"""The conventions tables of the mask page are what the installed libraries do (make crosscheck).

Every cell the page marks as observed is made from ``code/02_library_conventions.json``; this file
checks that the stored observations are, key for key, what ``observe.py`` sees now: on the CPU
always, and on CUDA when this machine has it and the file holds CUDA observations.
"""

from __future__ import annotations

import json

import observe
import pytest

from chapter import conventions as conv  # the book side: it imports neither MyST-NB nor IPython
from chapter import mask as mask_page


@pytest.fixture(scope="module")
def seen_on_cpu():
    return observe.observe("cpu")


def _differences(seen, stored, path=""):
    """Every key path where the two observations differ (so a failure names the cell that changed)."""
    if isinstance(seen, dict) and isinstance(stored, dict):
        out = []
        for key in sorted(set(seen) | set(stored)):
            out += _differences(seen.get(key), stored.get(key), f"{path}/{key}")
        return out
    return [] if seen == stored else [f"{path}: stored {stored!r}, seen {seen!r}"]


def test_the_stored_cpu_observations_are_what_the_libraries_do_now(seen_on_cpu):
    stored = observe.stored()["cpu"]
    changed = _differences(seen_on_cpu, stored)
    assert not changed, (
        "The libraries behave differently from code/02_library_conventions.json:\n  "
        + "\n  ".join(changed)
        + "\nlook at the change, then store it with: "
        ".venv-crosscheck/bin/python tests/crosscheck/observe.py --device cpu --write"
    )


def test_the_stored_cuda_observations_are_what_the_libraries_do_now():
    if not observe.cuda_available():
        pytest.skip("no CUDA device here: the page's GPU sentences cite their sources instead")
    stored = observe.stored().get("cuda")
    if stored is None:
        pytest.skip(
            "no CUDA observations stored yet: python tests/crosscheck/observe.py --device cuda --write"
        )
    changed = _differences(observe.observe("cuda"), stored)
    assert not changed, "\n".join(changed)


def test_every_observation_found_a_reading(seen_on_cpu):
    # "other" means none of the readings the book knows matched: the table would have no words for it.
    text = json.dumps(seen_on_cpu)
    assert '"other"' not in text


def test_every_cell_the_page_marks_as_observed_is_made_from_the_observations(seen_on_cpu):
    # The book side's tables, built from what the libraries do now, equal the ones built from the file.
    stored = observe.stored()
    now = {**stored, "cpu": seen_on_cpu}
    assert conv.conventions_rows(now) == conv.conventions_rows(stored)
    assert conv.fully_masked_rows(now) == conv.fully_masked_rows(stored)


def test_the_cpu_observations_say_where_they_were_made(seen_on_cpu):
    import jax
    import keras
    import torch

    assert (
        seen_on_cpu["torch"]["version"] == torch.__version__
        and seen_on_cpu["torch"]["device"] == "cpu"
    )
    assert (
        seen_on_cpu["jax"]["version"] == jax.__version__ and seen_on_cpu["jax"]["device"] == "cpu"
    )
    assert (
        seen_on_cpu["keras"]["version"] == keras.__version__
        and seen_on_cpu["keras"]["backend"] == "jax"
    )
    # PyTorch's kernels are read from the profiler: each convention was seen on a kernel that ran.
    for api in ("sdpa", "attn_bias"):
        assert set(seen_on_cpu["torch"][api]["kernels"]) <= set(observe.SDPA_OPS.values())
        assert seen_on_cpu["torch"][api]["kernels"], api


def test_the_device_argument_is_checked():
    with pytest.raises(ValueError, match="device"):
        observe.observe("tpu")
    if not observe.cuda_available():
        with pytest.raises(ValueError, match="CUDA"):
            observe.observe("cuda")
        with pytest.raises(SystemExit) as stop:  # the command line says so and writes nothing
            observe.main(["--device", "cuda", "--write"])
        assert stop.value.code == 0


def test_writing_one_device_keeps_the_others(tmp_path, monkeypatch):
    target = tmp_path / "conventions.json"
    target.write_text(json.dumps({"cpu": {"torch": {"version": "old"}}}), encoding="utf-8")
    monkeypatch.setattr(observe, "STORED", target)
    observe.write("cuda", {"torch": {"version": "new"}})
    assert json.loads(target.read_text(encoding="utf-8")) == {
        "cpu": {"torch": {"version": "old"}},
        "cuda": {"torch": {"version": "new"}},
    }


def test_pytorchs_causal_biases_are_the_books_two_tables():
    from torch.nn.attention.bias import causal_lower_right, causal_upper_left

    for past, new in [(0, 1), (1, 2), (3, 2), (5, 4)]:
        n_key = past + new
        lower = causal_lower_right(new, n_key)._materialize().tolist()
        upper = causal_upper_left(new, n_key)._materialize().tolist()
        assert lower == mask_page.causal_table(new, n_key, "bottom-right")
        assert upper == mask_page.causal_table(new, n_key, "top-left")
