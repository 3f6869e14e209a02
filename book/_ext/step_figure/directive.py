"""The ``step-figure`` directive: call a frames function of the book side and lay out its frames.

The function returns a list of frames, each a dict of plain data::

    {"condition": "处理绝对位置0",                       # the caption reads "1 / 5 · 处理绝对位置0"
     "tables": [{"title": "...", "header": ["", "Key 0"],
                 "rows": [[{"text": "绝对位置 0"}, {"text": "✓ 允许", "state": "allowed", "highlight": True}]]}],
     "rule": "允许Key位置 ≤ 0",
     "explanation": "..."}

A cell is a string or a dict with ``text``, an optional ``state`` ("allowed", "forbidden" or
None) and an optional ``highlight`` flag. State and highlight only add CSS classes: the text of
the cell has to say what it means on its own.
"""

from __future__ import annotations

import hashlib
import importlib
import re
import sys
import traceback
from pathlib import Path
from typing import Any

from code_deps import used_code_files, watched
from docutils import nodes
from docutils.parsers.rst import directives
from docutils.utils import column_width
from sphinx.util.docutils import SphinxDirective

from .explore import ExploreDataError, explore_json, step_figure_explore
from .nodes import step_figure, step_figure_frame, step_figure_frames, step_figure_help

STATES = {"allowed": "step-figure-allowed", "forbidden": "step-figure-forbidden", None: None}
TARGET = re.compile(r"(?P<module>\w+(?:\.\w+)*):(?P<function>[A-Za-z_]\w*)")


class StepFigureError(Exception):
    """The figure's argument, module or function is wrong; the message says which."""


class FrameDataError(ValueError):
    """The frames function returned data of the wrong shape; the message names where."""


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise FrameDataError(f"{where} must be a string, got {type(value).__name__} {value!r}")
    return value


def _list(value: Any, where: str, *, empty: bool = False) -> list:
    if not isinstance(value, (list, tuple)) or (not empty and not value):
        raise FrameDataError(f"{where} must be a non-empty list, got {value!r}")
    return list(value)


def _cell(value: Any, where: str) -> dict:
    if isinstance(value, str):
        return {"text": value, "state": None, "highlight": False}
    if not isinstance(value, dict):
        raise FrameDataError(f"{where} must be a string or a dict with 'text', got {value!r}")
    unknown = set(value) - {"text", "state", "highlight"}
    if unknown:
        raise FrameDataError(f"{where} has unknown keys {sorted(unknown)}")
    state = value.get("state")
    if state not in STATES:
        raise FrameDataError(f"{where}.state must be 'allowed', 'forbidden' or None, got {state!r}")
    highlight = value.get("highlight", False)
    if not isinstance(highlight, bool):
        raise FrameDataError(f"{where}.highlight must be True or False, got {highlight!r}")
    return {
        "text": _text(value.get("text"), f"{where}.text"),
        "state": state,
        "highlight": highlight,
    }


def check_frames(data: Any) -> list[dict]:
    """Validate and normalise what a frames function returned (errors name the bad item)."""
    frames = []
    for f, frame in enumerate(_list(data, "the frame list")):
        where = f"frames[{f}]"
        if not isinstance(frame, dict):
            raise FrameDataError(f"{where} must be a dict, got {frame!r}")
        missing = {"condition", "tables", "rule", "explanation"} - set(frame)
        if missing:
            raise FrameDataError(f"{where} lacks {sorted(missing)}")
        tables = []
        for t, table in enumerate(_list(frame["tables"], f"{where}.tables", empty=True)):
            here = f"{where}.tables[{t}]"
            if not isinstance(table, dict):
                raise FrameDataError(f"{here} must be a dict with title, header and rows")
            header = _list(table.get("header"), f"{here}.header")
            header = [_text(h, f"{here}.header[{c}]") for c, h in enumerate(header)]
            rows = []
            for r, row in enumerate(_list(table.get("rows"), f"{here}.rows")):
                row = _list(row, f"{here}.rows[{r}]")
                cells = [_cell(c, f"{here}.rows[{r}][{i}]") for i, c in enumerate(row)]
                if len(cells) != len(header):
                    raise FrameDataError(
                        f"{here}.rows[{r}] has {len(cells)} cells, the header {len(header)}"
                    )
                rows.append(cells)
            title = _text(table.get("title", ""), f"{here}.title")
            tables.append({"title": title, "header": header, "rows": rows})
        frames.append(
            {
                "condition": _text(frame["condition"], f"{where}.condition"),
                "tables": tables,
                "rule": _text(frame["rule"], f"{where}.rule"),
                "explanation": _text(frame["explanation"], f"{where}.explanation"),
            }
        )
    return frames


_LAST_PURGE: dict[
    str, Any
] = {}  # the folders and their contents' hash when modules were last dropped


def _contents_hash(folders: list[Path]) -> bytes:
    """A hash of every ``.py`` file's name and bytes in the folders (the book-side package recursively)."""
    digest = hashlib.blake2b(digest_size=16)
    for i, folder in enumerate(folders):
        for path in sorted(folder.rglob("*.py") if i else folder.glob("*.py")):
            digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.digest()


def load_fresh(module: str, code_dir: Path, package_dir: Path | None = None):
    """Import ``module`` (a teaching file or ``<package>.<name>``), re-reading files cached earlier.

    One process can build several times (sphinx-autobuild, tests). Without this, the second
    build would keep running the first version of an edited file from ``sys.modules``, or a
    module of the same name from another folder. The modules are dropped only when the folders or
    a file in them changed (names and bytes) since they were last dropped: the pages of one build
    ask for the same modules many times.
    """
    folders = [code_dir.resolve()] + ([package_dir.resolve()] if package_dir else [])
    state = {"folders": folders, "contents": _contents_hash(folders)}
    folders = folders[:1] + [
        folder.parent for folder in folders[1:]
    ]  # the package's parent on sys.path
    if _LAST_PURGE != state:
        local = {p.stem for p in folders[0].glob("*.py")} | (
            {package_dir.name} if package_dir else set()
        )
        for name, loaded in list(sys.modules.items()):
            file = getattr(loaded, "__file__", None)
            if name.split(".")[0] in local or (file and Path(file).resolve().parent == folders[0]):
                del sys.modules[name]
        importlib.invalidate_caches()
        _LAST_PURGE.update(state)
    # First on the path, so that these folders' files win over any other of the same name.
    for folder in reversed(folders):
        if str(folder) in sys.path:
            sys.path.remove(str(folder))
        sys.path.insert(0, str(folder))
    return importlib.import_module(module)


def call(target: str, code_dir: Path, package_dir: Path | None, note=lambda path: None) -> Any:
    """Import ``module:function`` from the teaching code or the book-side package and call it.

    ``note(path)`` is told the module's file and every file it uses before the call, so that an edit
    to any of them re-reads the page, even when the call fails.
    """
    match = TARGET.fullmatch(target.strip())
    if not match:
        raise StepFigureError(
            "the argument must be 'module:function', e.g. chapter.mask_figure:f12_frames"
        )
    module = match["module"]
    function = match["function"]
    package, _, leaf = module.partition(".")
    if package_dir is not None and package == package_dir.name and leaf:
        path = package_dir / (leaf.replace(".", "/") + ".py")
    else:
        path = code_dir / (module.replace(".", "/") + ".py")
    if not path.is_file():
        raise StepFigureError(f"no file {path} for module {module}")
    note(str(path))
    for used in used_code_files(module, code_dir, package_dir):
        note(str(used))
    try:
        target_function = getattr(load_fresh(module, code_dir, package_dir), function, None)
        if not callable(target_function):
            raise StepFigureError(f"{path.name} has no function {function}()")
        return target_function()
    except StepFigureError:
        raise
    except Exception as error:
        where = traceback.extract_tb(error.__traceback__)[-1]
        raise StepFigureError(
            f"{function}() failed: {type(error).__name__}: {error} "
            f"(at {Path(where.filename).name}, line {where.lineno})"
        ) from None


def frames_of(
    target: str, code_dir: Path, package_dir: Path | None, note=lambda path: None
) -> list:
    """The checked frames of the directive's argument; the error names the argument and what failed."""
    try:
        return check_frames(call(target, code_dir, package_dir, note))
    except StepFigureError as error:
        raise StepFigureError(f"step-figure {target}: {error}") from None
    except FrameDataError as error:
        raise StepFigureError(f"step-figure {target} returned bad frame data: {error}") from None


def explore_of(
    target: str, code_dir: Path, package_dir: Path | None, note=lambda path: None
) -> str:
    """The ``:explore:`` option's data as the page's JSON; the error names the option and what failed."""
    try:
        return explore_json(call(target, code_dir, package_dir, note))
    except (StepFigureError, ExploreDataError) as error:
        raise StepFigureError(f"step-figure :explore: {target}: {error}") from None


def _dwell(argument: str) -> float:
    seconds = float(argument)
    if not 0.2 <= seconds <= 60:
        raise ValueError("dwell is in seconds, between 0.2 and 60")
    return seconds


class StepFigureDirective(SphinxDirective):
    """``step-figure module:function`` with options for the texts around the frames."""

    required_arguments = 1
    has_content = True
    option_spec = {
        "label": directives.unchanged_required,  # "F12": the figure's id, used in its name
        "heading": directives.unchanged,  # "动态图解 · F12"
        "title": directives.unchanged,
        "question": directives.unchanged,
        "dwell": _dwell,  # seconds per frame when playing; default step_figure_dwell
        "explore": directives.unchanged_required,  # module:function of an HTML-only explore panel
        "explore-intro": directives.unchanged,  # the panel's first line, under its title
        "class": directives.class_option,
    }

    def run(self) -> list[nodes.Node]:
        dirs = watched(self.config)
        try:
            if dirs is None:
                raise StepFigureError(
                    f"step-figure {self.arguments[0]}: code_deps_dir must name the folder of the "
                    f"teaching code, got {self.config.code_deps_dir!r}"
                )
            note = self.env.note_dependency
            frames = frames_of(self.arguments[0], *dirs, note=note)
            explore = self.options.get("explore")
            if explore:
                explore = step_figure_explore(
                    data=explore_of(explore, *dirs, note=note),
                    intro=self.options.get("explore-intro", ""),
                )
        except StepFigureError as error:
            raise self.error(str(error)) from None

        label = self.options.get("label", "")
        title = self.options.get("title", "")
        dwell = self.options.get("dwell", self.config.step_figure_dwell)
        figure = step_figure(
            classes=self.options.get("class", []),
            label=label,
            title=title,
            total=len(frames),
            dwell_ms=round(1000 * dwell),
        )
        self.set_source_info(figure)
        if label:
            self.options["name"] = label
            self.add_name(figure)  # {ref}`图 F12 <F12>` links to the figure

        for option in ("heading", "title", "question"):
            if self.options.get(option):
                inline, messages = self.state.inline_text(self.options[option], self.lineno)
                if option == "title":
                    inline = [nodes.strong("", "", *inline)]
                figure += nodes.paragraph("", "", *inline, classes=[f"step-figure-{option}"])
                figure += messages

        if self.content:
            body = nodes.container(classes=["step-figure-body"])
            self.state.nested_parse(self.content, self.content_offset, body)
            figure += body

        stage = step_figure_frames()
        for k, frame in enumerate(frames, start=1):
            stage += self._frame(k, len(frames), frame)
        figure += stage
        figure += step_figure_help(text=self.config.step_figure_help)
        if explore:
            figure += explore  # a separate part after the player, in HTML only
        return [figure]

    def _frame(self, k: int, total: int, frame: dict) -> step_figure_frame:
        node = step_figure_frame(step=k, total=total)
        # The directive, not the data, numbers the caption: the frame list decides k and total.
        caption = nodes.strong(text=f"{k} / {total} · {frame['condition']}")
        node += nodes.paragraph("", "", caption, classes=["step-figure-caption"])
        for table in frame["tables"]:
            node += _table(table)
        if frame["rule"]:
            label = nodes.strong(text="当前行规则：")
            node += nodes.paragraph(
                "", "", label, nodes.Text(frame["rule"]), classes=["step-figure-rule"]
            )
        if frame["explanation"]:
            node += nodes.paragraph(text=frame["explanation"], classes=["step-figure-explanation"])
        return node


def _entry(cell: dict) -> nodes.entry:
    classes = [STATES[cell["state"]]] if cell["state"] else []
    if cell["highlight"]:
        classes.append("step-figure-current")
    entry = nodes.entry(classes=classes)
    if cell["text"]:
        # The highlighted row is bold as well as coloured, so it stands out in print and PDF too.
        text = nodes.strong(text=cell["text"]) if cell["highlight"] else nodes.Text(cell["text"])
        entry += nodes.paragraph("", "", text)
    return entry


def _table(data: dict) -> nodes.table:
    """A standard docutils table: the first column (the query rows) is a stub, i.e. row headers."""
    table = nodes.table(classes=["step-figure-table"])
    if data["title"]:
        table += nodes.title(text=data["title"])
    columns = len(data["header"])
    group = nodes.tgroup(cols=columns)
    table += group
    # Column widths in characters (a Chinese character counts two, bold adds "**" twice): the
    # text builder lays tables out by them; HTML and LaTeX size the columns themselves.
    for c in range(columns):
        texts = [(data["header"][c], False)] + [
            (row[c]["text"], row[c]["highlight"]) for row in data["rows"]
        ]
        width = max(column_width(text) + 4 * highlight for text, highlight in texts)
        colspec = nodes.colspec(colwidth=max(width, 1))
        if c == 0:
            colspec["stub"] = (
                1  # set only here: LaTeX treats any column with the attribute as a stub
            )
        group += colspec
    head = nodes.thead()
    head += nodes.row(
        "", *[_entry({"text": h, "state": None, "highlight": False}) for h in data["header"]]
    )
    body = nodes.tbody()
    for cells in data["rows"]:
        current = all(cell["highlight"] for cell in cells)
        classes = ["step-figure-current"] if current else []
        body += nodes.row("", *[_entry(cell) for cell in cells], classes=classes)
    group += head
    group += body
    return table
