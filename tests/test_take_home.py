"""Take the chapter home: every page's zip and notebook work in an empty folder, as a learner uses them.

For every page: the 运行命令 section offers the zip first; unzipped into an empty folder, it holds the
page's files and a README.txt, and each file runs with ``python -E -s`` (no environment, no user site);
the notebook, put into that folder, runs from top to bottom with nbclient, imports nothing but the
standard library, numpy and the files beside it, and prints the number the page shows for the same input.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import CHAPTER_PAGES, article_of, section_of

from chapter import take_home

PAGES = [page for page, _ in CHAPTER_PAGES]


def test_every_page_has_a_teaching_file_and_an_example():
    assert list(take_home.TEACHING) == PAGES
    assert [take_home.TEACHING[p] for p in PAGES] == [t for _, t in CHAPTER_PAGES]
    for page in PAGES:
        assert take_home.example(page) is not None, f"{page}: no worked example for its notebook"


def test_a_teaching_files_pytorch_companion_goes_into_its_zip():
    torch_files = {
        page: [f for f in take_home.files(page) if take_home.needs_torch(f)] for page in PAGES
    }
    assert torch_files["tensors"] == ["02_tensors_torch.py"]
    assert torch_files["tiles"] == ["02_tiles_torch.py"]
    assert torch_files["pitfalls"] == ["02_pitfalls_torch.py"]
    assert all(
        not files
        for page, files in torch_files.items()
        if page not in ("tensors", "tiles", "pitfalls")
    )
    readme = take_home.readme("tensors", "从手算到张量")
    assert (
        "02_tensors_torch.py 另要 PyTorch（CPU 版即可）与 transformers，notebook 不用它" in readme
    )
    readme = take_home.readme("tiles", "分块计算")
    assert "02_tiles_torch.py 另要 PyTorch（CPU 版即可），notebook 不用它" in readme


def test_the_zip_follows_imports_through_every_file(tmp_path):
    (tmp_path / "02_a.py").write_text(
        'import importlib\nb = importlib.import_module("02_b")\n', encoding="utf-8"
    )
    (tmp_path / "02_b.py").write_text(
        'import importlib\nc = importlib.import_module("02_c")\n', encoding="utf-8"
    )
    (tmp_path / "02_c.py").write_text("x = 1\n", encoding="utf-8")
    assert take_home.imports("02_a.py", tmp_path) == ["02_a.py", "02_b.py", "02_c.py"]


def _unpacked(book_html: Path, page: str, folder: Path) -> Path:
    with zipfile.ZipFile(book_html / "take-home" / take_home.zip_name(page)) as z:
        z.extractall(folder)
    (folder / take_home.notebook_name(page)).write_bytes(
        (book_html / "take-home" / take_home.notebook_name(page)).read_bytes()
    )
    return folder


@pytest.mark.build
@pytest.mark.parametrize("page", PAGES)
def test_the_run_section_offers_the_zip_and_the_notebook_first(book_html, page):
    section = section_of(article_of(book_html, f"ch02/{page}.html"), "运行命令")
    first = section.find(["p", "div", "pre"], recursive=False)
    assert "take-home" in (first.get("class") or []), f"{page}: {first}"
    links = [a["href"] for a in first.find_all("a")]
    assert links == [
        f"../take-home/{take_home.zip_name(page)}",
        f"../take-home/{take_home.notebook_name(page)}",
    ]
    for href in links:
        assert (book_html / "ch02" / href).resolve().is_file(), href


@pytest.mark.build
@pytest.mark.parametrize("page", PAGES)
def test_every_file_of_the_zip_runs_alone_in_an_empty_folder(book_html, page, tmp_path):
    folder = _unpacked(book_html, page, tmp_path)
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted([*take_home.files(page), "README.txt", take_home.notebook_name(page)])
    readme = (folder / "README.txt").read_text(encoding="utf-8")
    for name in take_home.files(page):
        assert name in readme
    # A file that needs PyTorch (*_torch.py) is carried and named with what it needs, but not run here:
    # make crosscheck runs it (tests/crosscheck/test_tensors_record.py).
    for name in filter(take_home.needs_torch, take_home.files(page)):
        assert f"{name} 另要 PyTorch" in readme and f"python3 {name}" in readme
    for name in (take_home.TEACHING[page], f"02_exercises_{page}.py"):
        assert f"python3 {name}" in readme
        run = subprocess.run(
            [sys.executable, "-E", "-s", name],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, f"{page}: {name}\n{run.stderr[-2000:]}"
        assert isinstance(json.loads(run.stdout), dict)


def _imports_of(source: str) -> set[str]:
    tree = ast.parse(source)
    names = {
        a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    }
    names |= {
        (n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
    }
    calls = {
        n.args[0].value
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and getattr(n.func, "attr", "") == "import_module"
        and n.args
        and isinstance(n.args[0], ast.Constant)
    }
    return names | calls


@pytest.mark.build
@pytest.mark.parametrize("page", PAGES)
def test_the_notebook_runs_beside_the_files_and_prints_the_pages_number(book_html, page, tmp_path):
    import nbformat
    from nbclient import NotebookClient

    folder = _unpacked(book_html, page, tmp_path)
    nb = nbformat.read(str(folder / take_home.notebook_name(page)), as_version=4)
    assert not any(cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), (
        "outputs stored"
    )
    local = {p.stem for p in folder.glob("02_*.py")}
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source:
            extra = _imports_of(cell.source) - set(sys.stdlib_module_names) - {"numpy"} - local
            assert not extra, f"{page}: the notebook imports {extra}"
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    ).execute()
    printed = "".join(
        out.get("text", "") for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs
    )
    shown = take_home.example(page)["shown"]()
    # Python prints the ASCII hyphen; the page prints the minus sign (fmt).
    assert shown.replace("−", "-") in printed, (
        f"{page}: the notebook printed {printed[:400]!r}, not {shown}"
    )
    assert shown in article_of(book_html, f"ch02/{page}.html").get_text(), (
        f"{page}: the page does not show {shown}"
    )
    # The exercises' tasks follow, each with an empty cell under it.
    titles = [
        c.source.splitlines()[0]
        for c in nb.cells
        if c.cell_type == "markdown" and c.source.startswith("## 练习")
    ]
    assert titles and all(t.startswith("## 练习 2.") for t in titles), titles


def test_the_notebooks_first_example_cell_holds_the_inputs_the_page_invites_to_change():
    """自己动手改 (scaling) says: the first cell under 「例子」 holds F13's q, k, v."""
    nb = take_home.notebook("scaling", "缩放与混合", [])
    heading = next(
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "markdown" and c.source.startswith("## 例子")
    )
    inputs = nb.cells[heading + 1]
    assert inputs.cell_type == "code" and all(
        f"{name} = " in inputs.source for name in ("q", "k", "v")
    )
    text = (Path(__file__).resolve().parents[1] / "book" / "ch02" / "scaling.md").read_text(
        encoding="utf-8"
    )
    invitation = text.split("### 自己动手改", 1)[1].split("##", 1)[0]
    assert "notebook" in invitation and "“例子”一节的第一格" in invitation
