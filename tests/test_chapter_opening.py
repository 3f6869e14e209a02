"""Tests of book/chapter/opening.py: the preface's and the chapter opening's sections (page.Section).

The lists of teaching files that need numpy or PyTorch come from running each file with the library
blocked; a fact of the opening's or the preface's fixed sentences planted false stops the section,
naming the fact.
"""

from __future__ import annotations

import copy
import re

import pytest

from chapter import conventions, opening


def test_the_opening_lists_the_files_that_stop_without_numpy_or_pytorch(tmp_path):
    """Review W1: the lists come from running each file with numpy or torch blocked, not from its imports."""
    (tmp_path / "02_plain.py").write_text("# numpy would be faster\nprint(1)\n", encoding="utf-8")
    (tmp_path / "02_lazy.py").write_text(
        "def timing():\n    import numpy as np\n    return np.zeros(1)\n\nprint(2)\n",
        encoding="utf-8",
    )
    (tmp_path / "02_eager.py").write_text("import numpy as np\nprint(np.pi)\n", encoding="utf-8")
    (tmp_path / "02_at_run_time.py").write_text(
        "def main():\n    import numpy\n\nif __name__ == '__main__':\n    main()\n",
        encoding="utf-8",
    )
    (tmp_path / "02_uses_eager.py").write_text(
        "import importlib\nimportlib.import_module('02_eager')\n", encoding="utf-8"
    )
    (tmp_path / "02_net_torch.py").write_text("import torch\n", encoding="utf-8")
    (tmp_path / "02_both_torch.py").write_text("import numpy\nimport torch\n", encoding="utf-8")
    (tmp_path / "other.py").write_text("import numpy\n", encoding="utf-8")
    assert opening.library_needs(tmp_path) == {
        "numpy": ["02_at_run_time.py", "02_both_torch.py", "02_eager.py", "02_uses_eager.py"],
        "torch": ["02_both_torch.py", "02_net_torch.py"],
    }
    # A file that fails for another reason stops the build instead of being listed.
    (tmp_path / "02_broken.py").write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    with pytest.raises(ValueError, match="02_broken.py"):
        opening.library_needs(tmp_path)
    assert opening.imports(tmp_path / "02_both_torch.py", "numpy")
    assert not opening.imports(tmp_path / "02_net_torch.py", "transformers")


def test_the_opening_names_the_files_the_run_found():
    values = opening.opening().values
    needs = opening.library_needs(opening.CODE_DIR)
    # transformers needs numpy: the files that use it are numpy files too, found by their source (no torch).
    hf = values["transformers_files"].split("、")
    assert hf == ["02_pitfalls_torch.py", "02_tensors_torch.py"]
    assert values["numpy_files"].split("、") == sorted({*needs["numpy"], *hf})
    assert values["torch_files"].split("、") == needs["torch"]
    # The timing-only users of numpy run without it; the PyTorch files include the pitfalls page's.
    assert not {"02_costs.py", "02_tiles.py", "02_exercises_costs.py"} & {*needs["numpy"]}
    assert {"02_training.py", "02_tensors.py"} <= {*needs["numpy"]}
    assert "02_pitfalls_torch.py" in needs["torch"]
    # A PyTorch file that imports numpy first needs numpy too (review: 02_tensors_torch.py).
    assert "02_tensors_torch.py" in {*needs["numpy"]} & {*needs["torch"]}


def test_the_opening_glues_plain_values_and_its_figure():
    values = opening.opening().values
    for name, value in values.items():
        assert re.fullmatch(r"[a-z][a-z0-9_]*", name), name
        if name.startswith("fig_"):
            assert hasattr(value, "savefig"), name
            continue
        assert isinstance(value, str), name
        assert not re.search(r"-\d", value), (name, value)  # one minus sign, U+2212
    # the demo data's sizes, counted from the teaching file's constants
    assert (values["n_query"], values["n_key"]) == tuple(
        str(len(m)) for m in (opening.att.DEMO_Q, opening.att.DEMO_K)
    )


def test_a_file_listed_wrongly_stops_the_opening_naming_the_fact(monkeypatch):
    real = opening.library_needs

    def without_tensors_torch(code_dir):
        needs = real(code_dir)
        return {**needs, "numpy": [n for n in needs["numpy"] if n != "02_tensors_torch.py"]}

    monkeypatch.setattr(opening, "library_needs", without_tensors_torch)
    with pytest.raises(ValueError, match="本章导读「.*」.*tensors_torch_file_needs_numpy"):
        opening.opening()


def test_a_record_without_its_kernels_stops_the_preface_naming_the_fact(monkeypatch):
    assert opening.preface().values["decimals"]  # the facts of this record hold
    seen = copy.deepcopy(conventions.observed())
    for libs in seen.values():
        libs["torch"].get("sdpa", {}).pop("kernels", None)
    monkeypatch.setattr(conventions, "observed", lambda: seen)
    with pytest.raises(ValueError, match="前言「每个数从哪里来」.*torch_records_kernels"):
        opening.preface()
