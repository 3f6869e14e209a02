"""A page's downloads, made at build time from ``code/``: ``ch02_<page>.zip`` and ``ch02_<page>.ipynb``."""

from __future__ import annotations

import ast
import importlib
import re
import zipfile
from pathlib import Path

CODE = Path(importlib.import_module("02_attention").__file__).parent
PYTHON = "3.11"  # the oldest Python the teaching code is run with (README.md)
IMPORT = re.compile(r'import_module\("(02_\w+)"\)')
# The page's teaching file (the one 完整教学代码 shows), in the chapter's reading order.
TEACHING = {
    "mask": "02_attention.py",
    "scaling": "02_scaling.py",
    "multihead": "02_multihead.py",
    "rope": "02_rope.py",
    "backprop": "02_backprop.py",
    "training": "02_training.py",
    "costs": "02_costs.py",
    "tensors": "02_tensors.py",
    "tiles": "02_tiles.py",
    "pitfalls": "02_pitfalls.py",
}
# A teaching file's companion ``<stem>_torch.py`` needs PyTorch (.pytest.ini's rule): it goes into the zip
# and the README says so; the notebook never uses it, and `make crosscheck` runs it.
TORCH_SUFFIX = "_torch.py"


def needs_torch(name: str) -> bool:
    """Whether a teaching file needs PyTorch, by the naming rule."""
    return name.endswith(TORCH_SUFFIX)


def imports(name: str, code: Path = CODE) -> list[str]:
    """The files of ``code/`` that ``name`` needs beside it, itself first, then what it imports, in order."""
    found = [name]
    for file in found:  # grows while it is read: each new file's own imports are followed too
        for module in IMPORT.findall((code / file).read_text(encoding="utf-8")):
            if f"{module}.py" not in found:
                found.append(f"{module}.py")
    return found


def files(page: str, code: Path = CODE) -> list[str]:
    """Every file of the page's zip but its README: the teaching file, the answers, what both import.

    >>> files("scaling")
    ['02_scaling.py', '02_attention.py', '02_exercises_scaling.py']
    """
    if page not in TEACHING:
        raise ValueError(f"page 必须是 {'、'.join(TEACHING)} 之一，收到 {page!r}")
    out = []
    companion = TEACHING[page].replace(".py", TORCH_SUFFIX)
    for name in (TEACHING[page], f"02_exercises_{page}.py", companion):
        if (code / name).is_file():
            out += [f for f in imports(name, code) if f not in out]
    return out


zip_name = "ch02_{}.zip".format
notebook_name = "ch02_{}.ipynb".format  # a page's two downloads


def _numpy_imports(tree: ast.AST) -> bool:
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    return any(name.split(".")[0] == "numpy" for name in names)


def numpy_use(name: str, code: Path = CODE) -> tuple[bool, list[str]]:
    """Where a file of ``code/`` needs numpy: ``(True, [])`` when loading it imports numpy (itself or a
    file it imports); else ``(False, functions)``, its public functions that import numpy when called.

    >>> numpy_use("02_training.py")
    (True, [])
    >>> numpy_use("02_scaling.py")
    (False, [])
    >>> numpy_use("02_costs.py")
    (False, ['numpy_attention', 'time_attention'])
    """
    tree = ast.parse((code / name).read_text(encoding="utf-8"))
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    module = [n for n in tree.body if n not in functions and not isinstance(n, ast.ClassDef)]
    if any(_numpy_imports(n) for n in module) or any(
        numpy_use(f, code)[0] for f in imports(name, code)[1:]
    ):
        return True, []
    return False, [f.name for f in functions if not f.name.startswith("_") and _numpy_imports(f)]


def readme(page: str, title: str, code: Path = CODE) -> str:
    """The zip's README.txt: what each file is, how to run it, what it needs."""
    names = files(page, code)
    use = {name: numpy_use(name, code) for name in names if not needs_torch(name)}
    at_load = [name for name, (loads, _) in use.items() if loads]
    when_called = [
        f"{name} 的 {'、'.join(functions)}" for name, (_, functions) in use.items() if functions
    ]
    lines = [
        f"《手算注意力与因果掩码》第 2 章：{title}",
        "",
        "这个压缩包里的文件放在同一个文件夹里就能运行，不需要别的文件：",
        "",
    ]
    for name in names:
        first = (code / name).read_text(encoding="utf-8").split('"""')[1].strip().splitlines()[0]
        lines.append(f"  {name}  {first}")
    lines += [
        "",
        f"  {notebook_name(page)}（另一个下载）  本页的例子与练习，放进同一个文件夹，用 Jupyter 打开。",
        "",
        "运行：在这个文件夹里执行",
        "",
    ]
    lines += [f"  python3 {name}" for name in (TEACHING[page], f"02_exercises_{page}.py")]
    needs = f"需要 Python {PYTHON} 或更新的版本"
    if at_load:
        needs += f"，以及 numpy（{'、'.join(at_load)} 要用它）。"
    else:
        needs += "；只用 Python 标准库。"
    if when_called:
        needs += f"只有调用 {'；'.join(when_called)} 时才要 numpy。"
    lines += ["", "每个文件先自检，再以 JSON 打印结果。", needs, ""]
    for name in filter(needs_torch, names):
        hf = (
            "与 transformers" if "transformers" in (code / name).read_text(encoding="utf-8") else ""
        )
        lines += [
            f"{name} 另要 PyTorch（CPU 版即可）{hf}，notebook 不用它。装好之后运行：",
            "",
            f"  python3 {name}",
            "",
        ]
    return "\n".join(lines)


def write_zip(page: str, title: str, folder: Path, code: Path = CODE) -> Path:
    """Write the page's zip into ``folder``; the same files give the same bytes (fixed dates)."""
    path = Path(folder) / zip_name(page)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name in files(page, code):
            z.writestr(
                zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)),
                (code / name).read_text(encoding="utf-8"),
            )
        z.writestr(
            zipfile.ZipInfo("README.txt", date_time=(2026, 1, 1, 0, 0, 0)),
            readme(page, title, code),
        )
    return path


def notebook(
    page: str, title: str, example: list[tuple[str, str]], exercises: list[tuple[str, str]]
):
    """The page's notebook: its worked example (the page's ``notebook-example``: cells as (kind, source),
    its text under the heading 例子), then each exercise's task and an empty cell."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    cells = [
        nbformat.v4.new_markdown_cell(
            f"# {title}\n\n这个 notebook 与 `{zip_name(page)}` 里的文件放在同一个文件夹里运行（它从那里导入教学代码）。"
            "它不存任何输出：从上到下运行一遍，打印的数就是书页上的数；改一个输入，再运行，数就跟着变。"
        )
    ]
    heading = "## 例子\n\n"
    for kind, source in written_out(example):
        if kind == "code":
            cells.append(nbformat.v4.new_code_cell(source))
        else:
            cells.append(nbformat.v4.new_markdown_cell(heading + source))
            heading = ""
    for name, task in exercises:
        cells += [
            nbformat.v4.new_markdown_cell(f"## {name}\n\n{task}"),
            nbformat.v4.new_code_cell(""),
        ]
    nb.cells = cells
    for i, cell in enumerate(nb.cells):  # stable ids: the same page gives the same file
        cell["id"] = f"{page}-{i}"
    return nb


def written_out(example: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The example's cells with its inputs cell (the first code cell after its text) written out: an input
    the page reads from a teaching constant (``q = att.DEMO_Q``, ``m, n = rope.D2_FIRST``) gets the
    constant's value, one name a line, so the reader sees the numbers to change. Names come from the
    example's first cell (its imports); a line that calls something stays as the page wrote it.

    >>> cells = [("code", 'import importlib\\n\\natt = importlib.import_module("02_attention")'),
    ...          ("markdown", "改 q。"), ("code", "q, k = att.DEMO_Q, att.DEMO_K[0]  # 三行\\nn = len(q)")]
    >>> print(written_out(cells)[2][1])
    q = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]  # 三行
    k = [1.0, 0.0]  # 三行
    n = len(q)
    """
    names: dict = {}
    exec(example[0][1], names)  # the import cell: importlib.import_module of files of code/
    text = [kind for kind, _ in example].index("markdown")
    kind, source = example[text + 1]
    lines = source.splitlines()
    out = []
    for statement in ast.parse(source).body:
        written = lines[statement.lineno - 1 : statement.end_lineno]
        calls = any(isinstance(n, ast.Call) for n in ast.walk(statement))
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and not calls:
            (target,) = statement.targets
            value = eval(compile(ast.Expression(statement.value), "<inputs>", "eval"), names)
            comment = lines[statement.end_lineno - 1][statement.end_col_offset :].rstrip()
            if isinstance(target, ast.Tuple):
                pairs = zip(
                    (ast.get_source_segment(source, t) for t in target.elts), value, strict=True
                )
            else:
                pairs = [(ast.get_source_segment(source, target), value)]
            written = [f"{name} = {value!r}{comment}" for name, value in pairs]
        out += written
    return [*example[: text + 1], (kind, "\n".join(out)), *example[text + 2 :]]


def write_notebook(
    page: str,
    title: str,
    example: list[tuple[str, str]],
    exercises: list[tuple[str, str]],
    folder: Path,
) -> Path:
    import nbformat

    path = Path(folder) / notebook_name(page)
    nbformat.write(notebook(page, title, example, exercises), str(path))
    return path
