"""A page's examples, run by the Python in the reader's browser (Pyodide; see ``run_in_browser.js``).

The page's teaching files are unpacked into ``folder`` first. ``session`` runs a ``>>>`` block as
Python's interactive prompt runs what is typed into it, one statement at a time in ``"single"`` mode,
in the namespace of the teaching file whose docstring holds the example (as doctest runs it), and
returns the session: each statement after its prompts, then what it printed or the traceback.
``command`` runs one file as ``python3 FILE`` does and returns what it printed.
The tests run the same functions with CPython (tests/test_run_in_browser.py).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import runpy
import sys
import traceback
from pathlib import Path

PROMPT = ">>> "
MORE = "... "


def statements(text: str) -> list[str]:
    """The statements of a ``>>>`` block: each ``>>>`` line with the ``...`` lines right after it; the
    output is left out, a ``...`` in it too (doctest's ellipsis, e.g. in a traceback).

    >>> statements(">>> x = 1\\n1\\n>>> for i in (1, 2):\\n...     print(i)\\n...\\n1\\n...\\n")
    ['x = 1', 'for i in (1, 2):\\n    print(i)\\n']
    """
    found = []
    more = False  # whether the line before was a prompt's
    for line in text.splitlines():
        if line.startswith(PROMPT) or line == PROMPT.rstrip():
            found.append(line[len(PROMPT) :])
            more = True
        elif more and (line.startswith(MORE) or line == MORE.rstrip()):
            found[-1] += "\n" + line[len(MORE) :]
        else:
            more = False
    return found


def _module_of(first: str | None, folder: Path):
    """The module of ``folder`` whose source holds the line ``first`` (a ``>>>`` line), imported."""
    for path in sorted(folder.glob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        if first is not None and any(line.strip() == first for line in lines):
            return importlib.import_module(path.stem)
    return None


def _traceback(error: BaseException, filename: str) -> str:
    """The traceback as Python prints it, from the first frame in ``filename`` on (not this file's)."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(error), error, tb))


def _on_path(folder: Path) -> None:
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


def session(text: str, original: str, folder: str = ".") -> str:
    """Run the ``>>>`` block ``text`` (edited from the page's block ``original``); return the session."""
    home = Path(folder).resolve()
    _on_path(home)
    first = next((PROMPT + s.split("\n")[0] for s in statements(original)), None)
    module = _module_of(first and first.strip(), home)
    namespace = dict(vars(module)) if module is not None else {"__name__": "__main__"}
    out = io.StringIO()
    for statement in statements(text):
        lines = statement.split("\n")
        out.write("\n".join([PROMPT + lines[0], *(MORE + line for line in lines[1:])]) + "\n")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                exec(compile(statement + "\n", "<stdin>", "single"), namespace)
            except BaseException as error:  # what the prompt would print, then the next statement
                out.write(_traceback(error, "<stdin>"))
    return out.getvalue()


def command(name: str, folder: str = ".") -> str:
    """Run ``python3 name`` in ``folder``; return what it printed (standard output and error)."""
    home = Path(folder).resolve()
    _on_path(home)
    path = home / name
    if not path.is_file():
        return f"python3: can't open file '{path}': [Errno 2] No such file or directory\n"
    out = io.StringIO()
    argv = sys.argv
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            sys.argv = [str(path)]
            runpy.run_path(str(path), run_name="__main__")
        except SystemExit as end:
            if end.code not in (None, 0):
                print(end.code if isinstance(end.code, str) else f"exit status {end.code}")
        except BaseException as error:
            out.write(_traceback(error, str(path)))
        finally:
            sys.argv = argv
    return out.getvalue()
