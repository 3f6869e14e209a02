"""Re-read (and so re-execute) a page when a file it uses in ``code/`` changes.

Sphinx re-reads a page only when the page itself or a noted dependency changed. A page that
imports ``02_attention`` from ``code/`` would otherwise keep the numbers of the last run.
While a page is read, this extension looks for the name of every module in ``code/`` in its
source (``02_attention``, ``code/02_attention.py``, …) and notes that file, and the files it
names in turn, as dependencies of the page. A change in ``code/`` then re-reads exactly the
pages that use it, on the very next build, with MyST-NB executing them afresh.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.application import Sphinx


def _modules(code_dir: Path) -> dict[str, Path]:
    return {p.stem: p for p in sorted(code_dir.glob("*.py")) if not p.stem.startswith("test_")}


def _named(text: str, modules: dict[str, Path]) -> set[str]:
    return {name for name in modules if re.search(rf"(?<![\w.]){re.escape(name)}\b", text)}


def used_code_files(text: str, code_dir: Path) -> list[Path]:
    """The files of ``code_dir`` that ``text`` names, followed through the files' own mentions."""
    modules = _modules(code_dir)
    todo, seen = _named(text, modules), set()
    while todo:
        name = todo.pop()
        seen.add(name)
        todo |= _named(modules[name].read_text(encoding="utf-8"), modules) - seen
    return [modules[name] for name in sorted(seen)]


def _note_code_dependencies(app: Sphinx, docname: str, source: list[str]) -> None:
    if not app.config.code_deps_dir:  # not set: nothing to watch (Path("") would be the cwd)
        return
    code_dir = Path(app.config.code_deps_dir)
    if not code_dir.is_dir():
        return
    for path in used_code_files(source[0], code_dir):
        app.env.note_dependency(str(path))


def setup(app: Sphinx) -> dict:
    app.add_config_value("code_deps_dir", "", "env", types=[str])
    app.connect("source-read", _note_code_dependencies)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
