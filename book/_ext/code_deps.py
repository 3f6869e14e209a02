"""Re-read (and so re-execute) a page when a file it uses changes: the teaching code or the book side.

Sphinx re-reads a page only when the page itself or a noted dependency changed. A page that
imports ``02_attention`` (``code/``) or ``chapter.mask`` (the book-side package ``book/chapter/``)
would otherwise keep the numbers of the last run. While a page is read, this extension looks in its
source for the name of every teaching file (``02_attention``) and every module of the package
(``chapter.mask``, ``from chapter import fmt, mask``) and notes that file, and the files it names in
turn, as dependencies of the page. The records in ``code/`` that the book side reads (``02_library_conventions.json``) count
as such files too, by their file names. A change in either folder then re-reads exactly the pages that
use it, on the very next build, with MyST-NB executing them afresh.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from sphinx.application import Sphinx


def modules(code_dir: Path, package_dir: Path | None = None) -> dict[str, Path]:
    """Import name → file: ``02_attention`` for ``code/``, ``chapter.mask`` for the package; a record that
    the book side reads (``02_library_conventions.json`` in ``code/``) under its file name."""
    found = {p.stem: p for p in sorted(code_dir.glob("*.py")) if not p.stem.startswith("test_")}
    found |= {p.name: p for p in sorted(code_dir.glob("*.json"))}
    if package_dir is not None and package_dir.is_dir():
        found |= {
            f"{package_dir.name}.{p.stem}": p
            for p in sorted(package_dir.glob("*.py"))
            if p.stem != "__init__"
        }
    return found


@functools.lru_cache(maxsize=512)
def _named(text: str, found: tuple[str, ...]) -> frozenset[str]:
    """The import names of ``found`` that ``text`` mentions (cached: every page follows the same files)."""
    names = set()
    for name in found:
        package, _, leaf = name.rpartition(".")
        if re.search(rf"(?<![\w.]){re.escape(name)}\b", text):
            names.add(name)
        elif package and re.search(
            rf"from\s+{package}\s+import\s+[^\n]*(?<![\w.]){re.escape(leaf)}\b", text
        ):
            names.add(name)
    return frozenset(names)


def used_code_files(text: str, code_dir: Path, package_dir: Path | None = None) -> list[Path]:
    """The files that ``text`` names, followed through the files' own mentions."""
    found = modules(code_dir, package_dir)
    names = tuple(found)
    todo = set(_named(text, names))
    seen = set()
    while todo:
        name = todo.pop()
        seen.add(name)
        todo |= _named(found[name].read_text(encoding="utf-8"), names) - seen
    return [found[name] for name in sorted(seen)]


def watched(config) -> tuple[Path, Path | None] | None:
    """The teaching-code folder and the book-side package folder that this build watches."""
    if not config.code_deps_dir or not Path(config.code_deps_dir).is_dir():
        return None  # not set: nothing to watch (Path("") would be the cwd)
    package = Path(config.code_deps_package) if config.code_deps_package else None
    return Path(config.code_deps_dir), package


def _note_code_dependencies(app: Sphinx, docname: str, source: list[str]) -> None:
    dirs = watched(app.config)
    if dirs is None:
        return
    for path in used_code_files(source[0], *dirs):
        app.env.note_dependency(str(path))


def setup(app: Sphinx) -> dict:
    app.add_config_value("code_deps_dir", "", "env", types=[str])
    app.add_config_value("code_deps_package", "", "env", types=[str])
    app.connect("source-read", _note_code_dependencies)
    return {"version": "1.1", "parallel_read_safe": True, "parallel_write_safe": True}
