"""Run the examples of a page's core in the reader's browser, with Pyodide, from the book's own files.

- **Which blocks.** On a page with teaching files (``chapter.take_home.TEACHING``), outside any 深入
  dropdown: every ``>>>`` block (``pycon``) and the 运行命令 block whose every line is
  ``python3 <one of the page's files>``. An HTML-only post-transform gives them the class ``runnable``
  (``runnable-session`` or ``runnable-command``), and ``runnable-needs-numpy`` or
  ``runnable-needs-torch`` where the file they run needs a package the browser's Python lacks
  (``take_home.numpy_use``, ``take_home.needs_torch``). LaTeX and text never see the classes.
- **In the browser.** ``static/run_in_browser.js`` (deferred, loaded only by pages with such a block)
  adds a 运行 button. The first click loads Pyodide from ``_static/pyodide/``, unpacks the page's zip
  (the files the page's 运行命令 offers) and runs the block with ``static/run_in_browser.py``.
- **The runtime.** npm's ``pyodide`` at ``VERSION``, fetched once by ``make pyodide`` (``npm pack``) into
  ``<venv>/pyodide/`` and checked against ``INTEGRITY`` by every HTML build, which fails and says how
  to fetch it when the tarball is missing or differs. Its ``FILES`` are copied into ``_static/pyodide/``
  after the build, only when they are missing or come from another tarball. The configuration value
  ``run_in_browser_tarball`` names another place for the tarball.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sys
import tarfile
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.transforms.post_transforms import SphinxPostTransform

VERSION = "314.0.7"
INTEGRITY = "sha512-0YvXxEhfEdpLfb/XkM2BFAeMROq0iMUX2bzzH9pOttyMcWkwq+HbE5uyuGD82LN7y2q+SNvi/6V5JEsOlD2R1A=="
# What loadPyodide fetches for the standard library alone: the loader, the runtime and its WebAssembly,
# the standard library, the package lock it reads at start-up.
FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
STATIC = Path(__file__).resolve().parent / "static"
COMMAND = re.compile(r"python3? +(\S+\.py)")
RUNNABLE = "runnable"
STAMP = "pyodide.json"  # in _static/pyodide: which tarball its files came from, and their sizes


def tarball() -> Path:
    """Where ``make pyodide`` puts npm's tarball: in the Python environment that builds the book, so
    that a copy of the project (``make bench``, the tests) finds it too."""
    return Path(sys.prefix) / "pyodide" / f"pyodide-{VERSION}.tgz"


def verified(path: Path) -> Path:
    """``path`` when it is npm's tarball of pyodide ``VERSION`` (its sha512 is ``INTEGRITY``)."""
    if not path.is_file():
        raise ExtensionError(
            f"run_in_browser: {path} is missing; fetch it with `make pyodide` (npm pack pyodide@{VERSION})"
        )
    digest = hashlib.sha512(path.read_bytes()).digest()
    found = "sha512-" + base64.b64encode(digest).decode("ascii")
    if found != INTEGRITY:
        raise ExtensionError(
            f"run_in_browser: {path} is not npm's pyodide@{VERSION}: its integrity is {found}, "
            f"the pinned one {INTEGRITY}; delete it and run `make pyodide`"
        )
    return path


def copy_runtime(source: Path, folder: Path) -> bool:
    """Unpack ``FILES`` from the tarball into ``folder`` unless they are there already, from the same
    tarball (the stamp) and of the same sizes. Returns whether anything was written."""
    stamp = folder / STAMP
    if stamp.is_file():
        known = json.loads(stamp.read_text(encoding="utf-8"))
        sizes = known.get("sizes", {})
        if known.get("integrity") == INTEGRITY and all(
            (folder / name).is_file() and (folder / name).stat().st_size == sizes.get(name)
            for name in FILES
        ):
            return False
    folder.mkdir(parents=True, exist_ok=True)
    sizes = {}
    with tarfile.open(source, "r:gz") as tar:
        for name in FILES:
            member = tar.getmember(f"package/{name}")
            (folder / name).write_bytes(tar.extractfile(member).read())
            sizes[name] = member.size
    stamp.write_text(json.dumps({"integrity": INTEGRITY, "sizes": sizes}), encoding="utf-8")
    return True


def _is_dropdown(node: nodes.Node) -> bool:
    from depth_blocks import is_dropdown

    return any(is_dropdown(parent) for parent in _ancestors(node))


def _ancestors(node: nodes.Node):
    while node.parent is not None:
        node = node.parent
        yield node


def _needs(files: list[str], code: Path, take_home) -> str | None:
    """The package the browser's Python lacks that running ``files`` needs, if any."""
    if any(take_home.needs_torch(name) for name in files):
        return "torch"
    if any(take_home.numpy_use(name, code)[0] for name in files):
        return "numpy"
    return None


def _session_file(text: str, files: list[str], code: Path) -> list[str]:
    """The page's file whose docstring holds the block's first ``>>>`` line (none: a plain session)."""
    first = next((line.strip() for line in text.splitlines() if line.startswith(">>> ")), None)
    found = [
        name
        for name in files
        if first
        in (line.strip() for line in (code / name).read_text(encoding="utf-8").splitlines())
    ]
    return found[:1]


class MarkRunnable(SphinxPostTransform):
    """HTML: mark the core's ``>>>`` blocks and the 运行命令 block (see the module's docstring)."""

    default_priority = 190  # before sphinx-design turns dropdowns into <details> (199)
    formats = ("html",)

    def run(self, **kwargs) -> None:
        from take_home import _module

        take_home = _module(self.app)
        page = self.env.docname.rsplit("/", 1)[-1]
        if page not in take_home.TEACHING:
            return
        code = Path(self.config.code_deps_dir)
        files = take_home.files(page, code)
        for block in list(self.document.findall(nodes.literal_block)):
            if _is_dropdown(block):
                continue
            text = block.astext()
            commands = [
                COMMAND.fullmatch(line.strip()) for line in text.splitlines() if line.strip()
            ]
            if block.get("language") == "pycon" and ">>> " in text:
                kind = "session"
                used = _session_file(text, files, code)
            elif commands and all(c and c.group(1) in files for c in commands):
                kind = "command"
                used = [c.group(1) for c in commands]
            else:
                continue
            block["classes"] += [RUNNABLE, f"{RUNNABLE}-{kind}"]
            needs = _needs(used, code, take_home)
            if needs:
                block["classes"].append(f"{RUNNABLE}-needs-{needs}")


def _html_only(app: Sphinx) -> None:
    # The script, its CSS and the runtime are for HTML; the tarball is checked before anything is built.
    if app.builder.format == "html":
        app.config.html_static_path.append(str(STATIC))
        verified(Path(app.config.run_in_browser_tarball or tarball()))


def _add_assets(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    # Only pages with a runnable block load the script (deferred) and its CSS.
    if doctree is not None and any(
        RUNNABLE in block["classes"] for block in doctree.findall(nodes.literal_block)
    ):
        app.add_css_file("run_in_browser.css")
        app.add_js_file("run_in_browser.js", defer="defer")


def _copy_runtime(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        source = Path(app.config.run_in_browser_tarball or tarball())
        copy_runtime(source, Path(app.outdir) / "_static" / "pyodide")


def setup(app: Sphinx) -> dict:
    app.setup_extension("take_home")
    app.setup_extension("depth_blocks")
    app.add_config_value("run_in_browser_tarball", "", "env", types=frozenset({str}))
    app.add_post_transform(MarkRunnable)
    app.connect("builder-inited", _html_only)
    app.connect("html-page-context", _add_assets)
    app.connect("build-finished", _copy_runtime)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
