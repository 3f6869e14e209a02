"""The build's kernel server (book/_ext/kernel_server.py): a forked kernel runs a page as a plain one does.

The server is started as a build starts it; each notebook here runs in its own kernel, through the
book's kernel command (book/_ext/kernels/python3), as MyST-NB runs a page.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import kernel_server  # noqa: E402

pytestmark = pytest.mark.build

PROBE = """\
import os, sys
print(os.getppid(), os.getcwd(), "numpy" in sys.modules, os.environ.get("OPENBLAS_NUM_THREADS"))
print(sys.path)
"""


def run(source: str, cwd: Path, shutdown: str = "immediate") -> tuple[list[str], str]:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source)]
    NotebookClient(
        nb,
        kernel_name="python3",
        shutdown_kernel=shutdown,
        allow_errors=True,
        resources={"metadata": {"path": str(cwd)}},
    ).execute()
    outputs = nb.cells[0].outputs
    return "".join(o.get("text", "") for o in outputs).splitlines(), "".join(
        o.get("ename", "") for o in outputs
    )


@pytest.fixture
def kernels(monkeypatch, tmp_path):
    monkeypatch.setenv("JUPYTER_PATH", str(ROOT / "book" / "_ext"))
    monkeypatch.delenv("BOOK_KERNEL_SERVER", raising=False)
    pages = tmp_path / "book"
    pages.mkdir()
    for name in ("a", "b", "plain"):
        head = "---\nfile_format: mystnb\n---\n" if name != "plain" else ""
        (pages / f"{name}.md").write_text(head + "# 页\n", encoding="utf-8")
    app = SimpleNamespace(config=SimpleNamespace(nb_execution_mode="force"))
    env = SimpleNamespace(doc2path=lambda name: pages / f"{name}.md")
    yield lambda docnames: kernel_server._start(app, env, docnames), tmp_path
    kernel_server._stop()


def test_a_forked_kernel_has_the_plain_kernels_path_and_cwd_and_one_blas_thread(kernels):
    start, cwd = kernels
    (plain_ppid, plain_cwd, plain_numpy, _), plain_path = (
        lambda lines: (lines[0].split(), lines[1])
    )(run(PROBE, cwd)[0])
    start(["a", "b"])
    server = kernel_server._SERVER["process"].pid
    lines, error = run(PROBE, cwd)
    ppid, where, numpy, threads = lines[0].split()
    assert not error
    assert (
        int(ppid) == server and int(plain_ppid) != server
    )  # forked by the server, started by the client
    assert where == plain_cwd == str(cwd)
    assert lines[1] == plain_path  # the same sys.path as `python -m ipykernel_launcher`
    assert (plain_numpy, numpy, threads) == ("False", "True", "1")
    assert run("x = 1\nprint(x + 1)", cwd)[0] == ["2"]
    assert run("print('x' in dir())", cwd)[0] == ["False"]  # each page its own kernel
    # The client stops a kernel by killing its launcher at once; the server then kills the kernel.
    children = Path(f"/proc/{server}/task/{server}/children")
    for _ in range(100):
        if not children.read_text().split():
            break
        time.sleep(0.05)
    assert children.read_text().split() == []


def test_the_server_starts_for_two_executed_pages_and_stops_with_the_build(kernels):
    start, _ = kernels
    start(["a", "plain"])
    assert (
        not kernel_server._SERVER and "BOOK_KERNEL_SERVER" not in os.environ
    )  # one page: plain kernel
    start(["a", "b", "plain"])
    process = kernel_server._SERVER["process"]
    folder = kernel_server._SERVER["folder"]
    assert os.environ["BOOK_KERNEL_SERVER"].startswith(folder)
    kernel_server._stop()
    assert (
        process.returncode == 0
        and not Path(folder).exists()
        and "BOOK_KERNEL_SERVER" not in os.environ
    )


def test_a_cell_that_fails_fails_as_in_a_plain_kernel(kernels):
    start, cwd = kernels
    start(["a", "b"])
    assert run("1 / 0", cwd)[1] == "ZeroDivisionError"


def test_what_a_kernel_registers_at_exit_runs_as_in_a_plain_kernel(kernels, tmp_path):
    start, cwd = kernels
    start(["a", "b"])
    mark = tmp_path / "exited"
    # A kernel asked to shut down (not the build's way: it stops a page's kernel at once) exits as usual.
    run(
        f"import atexit\natexit.register(lambda: open({str(mark)!r}, 'w').write('x'))",
        cwd,
        "graceful",
    )
    for _ in range(100):
        if mark.exists():
            break
        time.sleep(0.05)
    assert mark.read_text() == "x"


def test_a_socket_that_cannot_be_made_leaves_plain_kernels_and_no_folder(
    kernels, tmp_path, monkeypatch
):
    start, cwd = kernels
    deep = tmp_path / ("d" * 120)  # longer than a Unix socket's path may be
    deep.mkdir()
    monkeypatch.setattr(kernel_server.tempfile, "tempdir", str(deep))
    start(["a", "b"])
    assert not kernel_server._SERVER and "BOOK_KERNEL_SERVER" not in os.environ
    assert list(deep.iterdir()) == []
    assert run("print(1 + 1)", cwd)[0] == ["2"]
