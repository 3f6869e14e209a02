"""Take the chapter home: every page's zip and notebook work in an empty folder, as a learner uses them.

For every page (conftest.CHAPTER_PAGES, so a page added there is checked too): the 运行命令 section
offers the zip first, and every command its core shows runs in the unzipped folder; the folder holds
the page's files and a README.txt, each file runs with ``python -E -s`` (no environment, no user site),
and the README's word on numpy holds when the files run without site-packages. The notebook, put into
that folder, runs from top to bottom with nbclient, imports nothing but the standard library, numpy and
the files beside it, prints only numbers the page shows (same digits, same unit), and every edit its
intro suggests runs and changes what it prints. Its example is the page's ``notebook-example``
(book/_ext/take_home.py), read back from the doctree the build kept of the page. Its Markdown cells, rendered by markdown-it-py as
Jupyter renders them, read as the page's exercises: doctests fenced, maths in ``$…$``, no doubled
brackets.
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
from conftest import CHAPTER_PAGES, ROOT, article_of, doctrees_of, section_of
from reading import PARSER

from chapter import take_home

PAGES = [page for page, _ in CHAPTER_PAGES]
EXT = ROOT / "book" / "_ext"  # the book's extensions, whose nodes a page's doctree holds


def test_every_page_has_a_teaching_file():
    assert list(take_home.TEACHING) == PAGES
    assert [take_home.TEACHING[p] for p in PAGES] == [t for _, t in CHAPTER_PAGES]


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


# -- the commands a 运行命令 section shows run where the reader is told to run them --------------------
def core_commands(section) -> list[str]:
    """The shell lines a 运行命令 section shows in its core: its code blocks outside any 深入 block."""
    return [
        line
        for pre in section.select("pre")
        if pre.find_parent("details") is None
        for line in pre.get_text().splitlines()
        if line.strip()
    ]


def run_commands(folder: Path, commands: list[str]) -> tuple[dict[str, str], list[str]]:
    """Each command run as a reader runs it in ``folder``: bash, ``python3`` on the PATH (here the Python
    that runs the tests), no other environment (no PYTHONPATH to find ``code/``). Returns what each
    printed, and the commands that failed, with the end of their error."""
    tools = folder.parent / f"{folder.name}-bin"
    tools.mkdir(exist_ok=True)
    python3 = tools / "python3"
    python3.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python3.chmod(0o755)
    env = {"PATH": f"{tools}{os.pathsep}/usr/bin:/bin", "HOME": str(folder), "LANG": "C.UTF-8"}
    printed = {}
    failed = []
    for command in commands:
        run = subprocess.run(
            ["bash", "-c", command],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        printed[command] = run.stdout
        if run.returncode != 0:
            failed.append(f"{command}: {run.stderr.strip()[-300:]}")
    return printed, failed


def test_a_command_that_needs_the_books_folders_fails_in_a_downloads_folder(tmp_path):
    folder = tmp_path / "unzipped"
    folder.mkdir()
    (folder / "02_attention.py").write_bytes((take_home.CODE / "02_attention.py").read_bytes())
    assert run_commands(folder, ["python3 02_attention.py"])[1] == []
    # Planted: the book-root forms a page once showed right under 「解压到一个空文件夹即可运行」.
    for command in ("python3 code/02_attention.py", ".venv/bin/pytest code/"):
        assert run_commands(folder, [command])[1], command


@pytest.mark.build
@pytest.mark.parametrize("page", PAGES)
def test_the_zip_runs_alone_in_an_empty_folder_as_the_run_section_says(book_html, page, tmp_path):
    """Each file is run once, as a reader runs the download: the 运行命令 section's commands in the
    unzipped folder, and the answers' file where the section does not show it. The teaching file prints
    the page's 运行结果示例 (the same file as in code/: tests/test_pages.py)."""
    folder = tmp_path / "unzipped"
    folder.mkdir()
    _unpacked(book_html, page, folder)
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted([*take_home.files(page), "README.txt", take_home.notebook_name(page)])
    readme = (folder / "README.txt").read_text(encoding="utf-8")
    for name in take_home.files(page):
        assert name in readme
    # A file that needs PyTorch (*_torch.py) is carried and named with what it needs, but not run here:
    # make crosscheck runs it (tests/crosscheck/test_*_record.py).
    for name in filter(take_home.needs_torch, take_home.files(page)):
        assert f"{name} 另要 PyTorch" in readme and f"python3 {name}" in readme
    article = article_of(book_html, f"ch02/{page}.html")
    commands = core_commands(section_of(article, "运行命令"))
    runs = [f"python3 {name}" for name in (take_home.TEACHING[page], f"02_exercises_{page}.py")]
    assert runs[0] in commands, commands
    assert all(run in readme for run in runs)
    printed, failed = run_commands(folder, commands + [r for r in runs if r not in commands])
    assert failed == []
    for run in runs:
        assert isinstance(json.loads(printed[run]), dict), run
    shown = section_of(article, "运行结果示例").find("pre").get_text()
    assert json.loads(printed[runs[0]]) == json.loads(shown), "运行结果示例 is not what it prints"


# -- what the README says about numpy holds both ways ------------------------------------------------
@functools.cache
def without_numpy(name: str) -> subprocess.CompletedProcess:
    """``name`` run alone in a folder with the files it imports and no site-packages (-S: so no numpy;
    -E: no PYTHONPATH). Once per file: the same file goes into several pages' zips."""
    with tempfile.TemporaryDirectory() as folder:
        for needed in take_home.imports(name):
            shutil.copy(take_home.CODE / needed, folder)
        return subprocess.run(
            [sys.executable, "-E", "-S", name], cwd=folder, capture_output=True, text=True
        )


@pytest.mark.parametrize("page", PAGES)
def test_the_readme_says_which_files_need_numpy_and_the_others_run_without_it(page):
    readme = take_home.readme(page, "标题")
    for name in take_home.files(page):
        if take_home.needs_torch(name):
            continue
        loads, functions = take_home.numpy_use(name)
        run = without_numpy(name)
        if loads:
            assert "No module named 'numpy'" in run.stderr, name
            assert re.search(rf"numpy（[^）]*{re.escape(name)}", readme), readme
        else:
            assert run.returncode == 0, f"{name}\n{run.stderr[-1000:]}"
            assert not re.search(rf"numpy（[^）]*{re.escape(name)}", readme), readme
        for function in functions:
            assert function in readme


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


# -- what a notebook prints is what the page shows --------------------------------------------------
SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
# A number as a page or a notebook prints it: a sign only where it cannot be a hyphen (Llama-2-7B),
# thousands grouped or not, a decimal part, an exponent written 2.9e-05 or 2.9 × 10⁻⁵, then its unit.
NUMBER = re.compile(
    r"(?<![\w.\-−])([-−]?)(\d(?:,?\d)*(?:\.\d+)?)"
    r"(?:(e[-+]?\d+)| × 10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))?(?![\w.])(?:\s?(GiB|MiB|KiB|B|字节|%|倍)(?!\w))?"
)


def numbers(text: str) -> set[str]:
    """Every number in ``text`` with its unit, one spelling per value as printed: ``2.9e-5``, ``512 MiB``.

    Digits, rounding and unit are kept (0.5 GiB is not 512 MiB, 1.2829 is not 1.3132); only the ways of
    writing the same printed number are made one (the minus sign, thousands separators, the exponent).
    """
    found = set()
    for sign, digits, e, superscript, unit in NUMBER.findall(text):
        exponent = e[1:] if e else superscript.translate(SUPERSCRIPT)
        spelled = ("-" if sign else "") + digits.replace(",", "")
        spelled += f"e{int(exponent)}" if exponent else ""
        found.add(f"{spelled} {unit}" if unit else spelled)
    return found


def test_a_number_counts_as_shown_only_with_its_digits_and_unit():
    page = "每 token 512 KiB，上下文 4096：2 GiB；损失 1.3132 与 2.9 × 10⁻⁵；差 −0.1577；Llama-2-7B"
    assert numbers("2 GiB 512 KiB 2.9e-05 -0.1577 1.3132 4,096") <= numbers(page)
    # Planted: the same cache in another unit, the last step's loss instead of the mean, a value not shown.
    for printed in ("0.5 GiB", "1.2829", "0.6475", "512 MiB", "-2", "7"):
        assert not numbers(printed) <= numbers(page), printed


def page_numbers(book_html: Path, page: str) -> set[str]:
    """The numbers a page shows in its prose, tables and opened 深入 blocks (code listings left out)."""
    article = article_of(book_html, f"ch02/{page}.html", own=True)
    for block in article.select("div.highlight"):
        block.decompose()
    return numbers(article.get_text(" "))


def page_example(book_html: Path, page: str):
    """The page's ``notebook-example`` node as the build read it (Sphinx keeps each page's doctree)."""
    if str(EXT) not in sys.path:
        sys.path.insert(0, str(EXT))
    node = importlib.import_module("take_home").notebook_example_node
    doctree = pickle.loads((doctrees_of(book_html) / "ch02" / f"{page}.doctree").read_bytes())
    [example] = doctree.findall(node)
    return example


def _printed(cells) -> str:
    return "".join(out.get("text", "") for cell in cells for out in cell.get("outputs", []))


@pytest.mark.build
@pytest.mark.parametrize("page", PAGES)
def test_the_notebook_prints_the_pages_numbers_and_every_suggested_edit_runs(
    book_html, page, tmp_path
):
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
    example = page_example(book_html, page)
    assert [c.source for c in nb.cells if c.cell_type == "code" and c.source] == [
        source for kind, source in take_home.written_out(example["cells"]) if kind == "code"
    ]
    inputs = 1 + next(i for i, c in enumerate(nb.cells) if c.source.startswith("## 例子"))
    # The inputs cell shows the numbers a reader changes, not the name of a teaching constant.
    assert not re.search(r"= \w+\.[A-Z][A-Z0-9_]*\b", nb.cells[inputs].source), nb.cells[
        inputs
    ].source
    # Each edit the intro suggests, run after a copy of the inputs cell and before a copy of the run cell.
    assert example["edits"], f"{page}: the intro suggests no edit"
    edited = []
    for edit in example["edits"]:
        edited.append(
            [
                nbformat.v4.new_code_cell(nb.cells[inputs].source),
                nbformat.v4.new_code_cell(edit),
                nbformat.v4.new_code_cell(nb.cells[inputs + 1].source),
            ]
        )
    nb.cells += [c for cells in edited for c in cells]
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    ).execute()
    default = _printed(nb.cells[inputs : inputs + 2])
    assert numbers(default), f"{page}: the example printed no number"
    missing = numbers(default) - page_numbers(book_html, page)
    assert not missing, (
        f"{page}: the notebook printed {sorted(missing)}, which the page does not show"
    )
    for edit, cells in zip(example["edits"], edited):
        assert _printed(cells) != default, f"{page}: the edit {edit!r} changed nothing"
    # The exercises' tasks follow, each with an empty cell under it.
    titles = [
        c.source.splitlines()[0]
        for c in nb.cells
        if c.cell_type == "markdown" and c.source.startswith("## 练习")
    ]
    assert titles and all(t.startswith("## 练习 2.") for t in titles), titles


# -- a notebook's Markdown, as Jupyter renders it ----------------------------------------------------
def rendered(source: str):
    """A Markdown cell as Jupyter shows it: CommonMark with ``$…$`` maths (markdown-it-py, which MyST uses)."""
    from bs4 import BeautifulSoup
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    html = MarkdownIt("commonmark").use(dollarmath_plugin).render(source)
    return BeautifulSoup(html, PARSER)


def markdown_problems(source: str) -> list[str]:
    """What a cell renders other than meant: a doctest not fenced (CommonMark reads ``>>>`` as three quoted
    levels, drops the prompts and joins the lines), maths or markup left raw outside ``$…$`` and code,
    brackets doubled."""
    soup = rendered(source)
    problems = []
    if soup.select("blockquote blockquote"):
        problems.append("a doctest or quoted text read as nested quotes")
    for node in soup.select("code, pre, .math"):
        node.decompose()
    text = soup.get_text()
    raw = sorted(set(re.findall(r"\\[A-Za-z]+|[\\^{}$]|_\{", text)))
    if raw:
        problems.append(f"raw maths or markup outside $…$ and code: {raw}")
    if re.search("（（|））", text):
        problems.append("doubled brackets")
    return problems


def test_the_markdown_check_fails_on_each_kind_of_planted_cell():
    good = (
        "## 练习 2.8.1（标题）\n\n> **输入与适用条件**\n>\n> $h_{kv} = 2$，`attention_mask`\n\n"
        "```python\n>>> f(1)\n2\n```"
    )
    assert markdown_problems(good) == []
    assert markdown_problems("写出 f：\n\n>>> f(1)\n2")  # the doctest unfenced
    assert markdown_problems("同宽全多头（h_{kv} = h）")  # maths without $
    assert markdown_problems(r"写出 J = \operatorname{diag}(p)")
    assert markdown_problems("一层的分数表（h n^2 格）")
    assert markdown_problems("## 练习 2.8.1（（分数表什么时候比整个缓存还多））")


def _same_text(node) -> str:
    """A rendered exercise's words, its maths as TeX, without white space (the page and the notebook
    set their maths apart differently: ``\\(x\\)`` against ``$x$``)."""
    for math in node.select(".math"):
        math.replace_with(math.get_text().strip().removeprefix("\\(").removesuffix("\\)"))
    return re.sub(r"\s+", "", node.get_text())


@pytest.mark.build
@pytest.mark.parametrize("page", PAGES)
def test_every_exercise_cell_renders_as_the_page_shows_the_exercise(book_html, page):
    import nbformat

    nb = nbformat.read(str(book_html / "take-home" / take_home.notebook_name(page)), as_version=4)
    cells = [c.source for c in nb.cells if c.cell_type == "markdown"]
    for source in cells:
        assert not markdown_problems(source), (page, markdown_problems(source), source)
    tasks = [c for c in cells if c.startswith("## 练习")]
    shown = article_of(book_html, f"ch02/{page}.html", own=True).select("div.exercise")
    assert len(tasks) == len(shown) > 0
    for source, exercise in zip(tasks, shown):
        heading, _, body = source.partition("\n")
        title = exercise.find(class_="admonition-title")
        assert heading.startswith("## ")
        assert re.sub(r"\s+", "", heading[3:]) == re.sub(r"\s+", "", title.get_text())
        title.decompose()
        assert _same_text(rendered(body)) == _same_text(exercise), (page, heading)


@pytest.mark.build
def test_the_notebooks_first_example_cell_holds_the_inputs_the_page_invites_to_change(book_html):
    """自己动手改 (scaling) says: the first cell under 「例子」 holds F13's q, k, v."""
    import nbformat

    nb = nbformat.read(
        str(book_html / "take-home" / take_home.notebook_name("scaling")), as_version=4
    )
    heading = next(
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "markdown" and c.source.startswith("## 例子")
    )
    inputs = nb.cells[heading + 1]
    assert inputs.cell_type == "code" and all(
        f"{name} = " in inputs.source for name in ("q", "k", "v")
    )
    text = (ROOT / "book" / "ch02" / "scaling.md").read_text(encoding="utf-8")
    invitation = text.split("### 自己动手改", 1)[1].split("##", 1)[0]
    assert "notebook" in invitation and "“例子”一节的第一格" in invitation
