"""`make bench`: build times of the book against a one-page floor book, printed as figures.

Both projects are copies in a temporary folder with this project's conf.py, book/_ext and code/;
the floor book has a single page with a single executed cell. For each the script measures a clean
build, a rebuild with nothing changed, and a rebuild after touching code/02_attention.py, then
prints the ratios against the targets. It also times `pytest code/`. Nothing here is a test: the
figures depend on the machine, so they are printed, not asserted.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import reading

ROOT = Path(__file__).resolve().parent.parent
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))  # median of this many runs per figure
# The Makefile's SPHINXOPTS (tests/test_bench.py keeps the two equal): warnings fail the build, and
# Sphinx reads and writes the pages in as many processes as the machine has cores.
SPHINX_OPTS = ["-W", "--keep-going", "-j", "auto"]
# What makes a page a text notebook that MyST-NB executes.
NOTEBOOK = """\
---
file_format: mystnb
kernelspec:
  name: python3
  display_name: Python 3
---
"""
FLOOR_PAGE = (
    NOTEBOOK
    + """
# 基准页

```{code-cell} ipython3
print("一个单元")
```
"""
)


# A small book for tests that only need some page to use code/: the floor page, which does not, and
# a page that prints a result of 02_attention, which does (tests/test_livehtml.py, tests/test_publishing.py).
MINI_PAGE = (
    NOTEBOOK
    + """
# 用到教学代码的页

```{code-cell} ipython3
import importlib

att = importlib.import_module("02_attention")
pad = att.key_padding(2, 3)
print(att.run_demo()["输出"])
```
"""
)


def make_mini_project(dest: Path) -> Path:
    """The floor book with a second page, ``uses_code``, that runs code/02_attention.py."""
    make_project(dest, floor=True)
    (dest / "book" / "uses_code.md").write_text(MINI_PAGE, encoding="utf-8")
    index = dest / "book" / "index.md"
    index.write_text(
        index.read_text(encoding="utf-8") + "\n```{toctree}\nuses_code\n```\n", encoding="utf-8"
    )
    return dest


def make_project(dest: Path, *, floor: bool = False) -> Path:
    """A copy of the project in ``dest``: conf.py, code/ and the book (or the one-page floor book:
    the book's extensions, static files, LaTeX preamble and book-side package, and one page)."""
    shutil.copy(ROOT / "conf.py", dest / "conf.py")
    shutil.copytree(
        ROOT / "code", dest / "code", ignore=shutil.ignore_patterns("__pycache__", "tests")
    )
    if floor:  # the book's extensions, static files and bibliography; one page of its own
        for folder in ("_ext", "_static", "latex", "chapter"):
            shutil.copytree(
                ROOT / "book" / folder,
                dest / "book" / folder,
                ignore=shutil.ignore_patterns("__pycache__"),
            )
        shutil.copy(ROOT / "book" / "references.bib", dest / "book" / "references.bib")
        # The page every citation links to; outside any toctree here, hence orphan.
        references = (ROOT / "book" / "references.md").read_text(encoding="utf-8")
        (dest / "book" / "references.md").write_text(
            "---\norphan: true\n---\n" + references, encoding="utf-8"
        )
        (dest / "book" / "index.md").write_text(FLOOR_PAGE, encoding="utf-8")
    else:
        shutil.copytree(ROOT / "book", dest / "book", ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def make_html(project: Path) -> subprocess.CompletedProcess:
    """What `make html` runs, in a copy of the project (tests/test_publishing.py uses it too)."""
    # --no-color: Sphinx colours its log when it sees CI=true, and the log is read afterwards.
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-M",
        "html",
        "book",
        "_build",
        "-c",
        ".",
        *SPHINX_OPTS,
        "--no-color",
    ]
    return subprocess.run(cmd, cwd=project, capture_output=True, text=True)


def build(project: Path) -> tuple[float, list[str], int]:
    """One `make html`-style build: seconds taken, the pages it executed and how many it read again."""
    start = time.perf_counter()
    result = make_html(project)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"build of {project} failed:\n{result.stderr}")
    log = result.stdout + result.stderr
    return seconds, executed_pages(project, log), reread_count(log)


def executed_pages(project: Path, log: str) -> list[str]:
    """The pages that a build's log says MyST-NB executed, in the order it ran them."""
    return re.findall(re.escape(str(project / "book")) + r"/(\S+)\.md: Executing notebook", log)


def reread_count(log: str) -> int:
    """How many pages a build read again ("updating environment: 0 added, 7 changed, …")."""
    found = re.search(r"updating environment: (?:\[[^]]*\] )?(\d+) added, (\d+) changed", log)
    return int(found.group(1)) + int(found.group(2)) if found else 0


def touch(code: Path) -> None:
    """What `make bench` times as a code edit: a new mtime, the same content."""
    os.utime(code)


def measure(project: Path, edit=touch) -> dict:
    """Clean, no-change and code-edit builds of ``project``, REPEATS each: their median seconds, the pages
    the clean and the edit builds executed, and how many pages the no-change and the edit builds read
    again. ``edit(path)`` edits code/02_attention.py (a touch by default)."""
    clean = []
    for _ in range(REPEATS):
        shutil.rmtree(project / "_build", ignore_errors=True)
        seconds, executed, _ = build(project)
        clean.append(seconds)
    nochange = []
    reread = 0
    for _ in range(REPEATS):
        seconds, _, reread = build(project)
        nochange.append(seconds)
    edits = []
    reexecuted = []
    edit_reread = 0
    for _ in range(REPEATS):
        edit(project / "code" / "02_attention.py")
        seconds, reexecuted, edit_reread = build(project)
        edits.append(seconds)
    return {
        "clean": statistics.median(clean),
        "nochange": statistics.median(nochange),
        "edit": statistics.median(edits),
        "executed": executed,
        "reread": reread,  # pages the last no-change build read again
        "reexecuted": reexecuted,
        "edit_reread": edit_reread,  # pages the last edit build read again
    }


def pages_using(project: Path, filename: str) -> list[str]:
    """The pages whose source names the file, directly or through other files of code/ and book/chapter/."""
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    from code_deps import used_code_files

    book = project / "book"
    return sorted(
        page.relative_to(book).with_suffix("").as_posix()
        for page in book.rglob("*.md")
        if "_ext" not in page.parts
        and filename
        in {
            p.name
            for p in used_code_files(
                page.read_text(encoding="utf-8"), project / "code", project / "book" / "chapter"
            )
        }
    )


def time_pytest_code() -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "code/"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="book-bench-") as tmp:
        book_dir = Path(tmp, "book")
        floor_dir = Path(tmp, "floor")
        book_dir.mkdir()
        floor_dir.mkdir()
        print(f"measuring (median of {REPEATS} runs each) …", flush=True)
        book = measure(make_project(book_dir))
        floor = measure(make_project(floor_dir, floor=True))
        users = pages_using(book_dir, "02_attention.py")
        core = reading.report(book_dir / "_build" / "html")
    pytest_seconds = time_pytest_code()

    print()
    print(
        f"{'':8}{'clean s':>10}{'no-change s':>14}{'code-edit s':>14}  executed (clean) / re-executed (edit)"
    )
    for name, m in (("book", book), ("floor", floor)):
        print(
            f"{name:8}{m['clean']:>10.2f}{m['nochange']:>14.2f}{m['edit']:>14.2f}  "
            f"{', '.join(m['executed']) or '-'} / {', '.join(m['reexecuted']) or '-'}"
        )
    print()

    def verdict(ok: bool) -> str:
        return "ok" if ok else "MISSED"

    ratio = book["nochange"] / floor["nochange"]
    budget = floor["clean"] + 2.5 * len(book["executed"])
    print(
        f"no-change rebuild: book / floor = {ratio:.2f}   (target ≤ 1.30)  {verdict(ratio <= 1.3)}"
    )
    print(
        f"clean build: book {book['clean']:.2f} s vs floor + 2.5 s × {len(book['executed'])} executed pages "
        f"= {budget:.2f} s  {verdict(book['clean'] <= budget)}"
    )
    print(
        f"code edit: re-executed {', '.join(book['reexecuted'])}; pages that use 02_attention.py: "
        f"{', '.join(users)}; floor re-executed {len(floor['reexecuted'])}  "
        f"{verdict(sorted(book['reexecuted']) == users and not floor['reexecuted'])}"
    )
    print(f"pytest code/: {pytest_seconds:.2f} s   (target < 10 s)  {verdict(pytest_seconds < 10)}")
    print()
    print(
        "reading the core of each page (tests/reading.py; folded 深入 blocks and solutions not counted):"
    )
    print(reading.table(core))


if __name__ == "__main__":
    main()
