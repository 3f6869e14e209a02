"""code_deps: which files of code/ and of the book-side package a page's source uses."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))

from code_deps import used_code_files  # noqa: E402


def layout(tmp_path: Path) -> tuple[Path, Path]:
    code = tmp_path / "code"
    package = tmp_path / "book" / "chapter"
    code.mkdir()
    package.mkdir(parents=True)
    (code / "02_attention.py").write_text("x = 1\n", encoding="utf-8")
    (code / "02_rope.py").write_text(
        'att = importlib.import_module("02_attention")\n', encoding="utf-8"
    )
    (code / "02_costs.py").write_text("y = 2\n", encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "fmt.py").write_text("def fmt(x): return str(x)\n", encoding="utf-8")
    (package / "mask.py").write_text(
        'from chapter import fmt\natt = importlib.import_module("02_attention")\n', encoding="utf-8"
    )
    (package / "rope.py").write_text(
        'from chapter import fmt\nr = importlib.import_module("02_rope")\n', encoding="utf-8"
    )
    return code, package


def names(text: str, code: Path, package: Path) -> list[str]:
    return [p.relative_to(code.parent).as_posix() for p in used_code_files(text, code, package)]


def test_a_page_uses_the_book_module_it_imports_and_what_that_module_imports(tmp_path):
    code, package = layout(tmp_path)
    page = "import importlib\nfrom chapter import fmt, rope as page\n"
    assert sorted(names(page, code, package)) == [
        "book/chapter/fmt.py",
        "book/chapter/rope.py",
        "code/02_attention.py",
        "code/02_rope.py",
    ]


def test_a_dotted_name_and_a_step_figure_argument_count_too(tmp_path):
    code, package = layout(tmp_path)
    page = ":::{step-figure} chapter.mask:f12_frames\n"
    assert sorted(names(page, code, package)) == [
        "book/chapter/fmt.py",
        "book/chapter/mask.py",
        "code/02_attention.py",
    ]


def test_the_word_mask_in_prose_is_not_the_module(tmp_path):
    code, package = layout(tmp_path)
    page = "mask 是可见性表；rope 与 fmt 只是词。02_costs 不在这里（它在 02_costs.py）。\n"
    assert names(page, code, package) == ["code/02_costs.py"]


def test_without_a_package_only_code_is_watched(tmp_path):
    code, _ = layout(tmp_path)
    assert [p.name for p in used_code_files("from chapter import mask\n02_rope\n", code)] == [
        "02_attention.py",
        "02_rope.py",
    ]
