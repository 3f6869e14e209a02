"""The step-figure extension on a tiny project: each builder's output, dependencies and errors.

The tests build a one-page MyST project whose frames come from a small module in its own ``code/``
folder, the way the book's figures come from the book-side package (``book/chapter/mask.py``, which
uses ``code/02_attention.py``). Each builder's output of the plain project is built once per session
(``tiny_build``) and read by every test that needs it. The errors a bad argument or a failing function
gives are asked of the directive's own functions (``frames_of``); one build shows that such an error
stops the page with its message and place.
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import CHINESE
from reading import PARSER
from sphinx.testing.util import SphinxTestApp
from sphinx.util.console import strip_escape_sequences

ROOT = Path(__file__).resolve().parent.parent
CODE = ROOT / "code"
sys.path.insert(0, str(ROOT / "book" / "_ext"))

from step_figure.directive import StepFigureError, frames_of  # noqa: E402

FRAMES = """
from tiny_helper import CONDITIONS


def cells(flags, current):
    return [{"text": "✓ 允许" if f else "✗ 禁止", "state": "allowed" if f else "forbidden", "highlight": current}
            for f in flags]


def frames():
    return [
        {
            "condition": condition,
            "tables": [{"title": f"表{k}", "header": ["查询", "Key 0", "Key 1"],
                        "rows": [[{"text": "行 0", "highlight": k == 1}] + cells([True, False], k == 1),
                                 ["行 1"] + cells([True, True], False)]}],
            "rule": f"规则{k}",
            "explanation": f"说明{k}",
        }
        for k, condition in enumerate(CONDITIONS, start=1)
    ]


def broken():
    return 1 / 0


def bad_state():
    data = frames()
    data[0]["tables"][0]["rows"][0][1]["state"] = "maybe"
    return data


def short_row():
    data = frames()
    data[1]["tables"][0]["rows"][1].pop()
    return data
"""

HELPER = 'CONDITIONS = ["条件甲", "条件乙", "条件丙", "条件丁", "条件戊"]\n'

PAGE = """\
# 小图

:::{{step-figure}} {target}
:label: T1
:heading: 动态图解 · T1
:title: 测试图
:question: 它能正常显示吗？

图前的 **说明**。
:::
"""


def project(tmp_path: Path, target: str = "tiny_figs:frames") -> Path:
    src = tmp_path / "src"
    code = tmp_path / "code"
    src.mkdir()
    code.mkdir()
    (code / "tiny_figs.py").write_text(FRAMES, encoding="utf-8")
    (code / "tiny_helper.py").write_text(HELPER, encoding="utf-8")
    (src / "conf.py").write_text(
        textwrap.dedent(
            f"""\
            import sys
            sys.path.insert(0, {str(ROOT / "book" / "_ext")!r})
            extensions = ["myst_parser", "step_figure"]
            myst_enable_extensions = ["colon_fence"]
            code_deps_dir = {str(code)!r}
            code_deps_package = ""
            """
        )
        + CHINESE,
        encoding="utf-8",
    )
    (src / "index.md").write_text(
        PAGE.format(target=target) + "\n```{toctree}\nplain\n```\n", encoding="utf-8"
    )
    (src / "plain.md").write_text("# 没有图的页\n\n正文。\n", encoding="utf-8")
    return src


def build(src: Path, builder: str, fresh: bool = True) -> tuple[SphinxTestApp, str]:
    """Build ``src`` from clean, or (``fresh=False``) again on top of its last build."""
    app = SphinxTestApp(builder, srcdir=src, builddir=src.parent / "_build", freshenv=fresh)
    try:
        app.build()
    finally:
        app.cleanup()
    return app, strip_escape_sequences(app.warning.getvalue())


_BUILT: dict[
    str, tuple[SphinxTestApp, str]
] = {}  # builder: the plain project's build, this session


@pytest.fixture()
def tiny_build(tmp_path_factory):
    """``tiny_build(builder)``: the plain tiny project built by that builder, once per session."""

    def build_once(builder: str) -> tuple[SphinxTestApp, str]:
        if builder not in _BUILT:
            _BUILT[builder] = build(project(tmp_path_factory.mktemp(builder)), builder)
        return _BUILT[builder]

    return build_once


CAPTIONS = [
    f"{k} / 5 · {c}"
    for k, c in enumerate(["条件甲", "条件乙", "条件丙", "条件丁", "条件戊"], start=1)
]


def test_html_has_every_frame_and_the_hooks_the_script_uses(tiny_build):
    app, warnings = tiny_build("html")
    assert warnings == ""
    soup = BeautifulSoup((app.outdir / "index.html").read_text(encoding="utf-8"), PARSER)

    (figure,) = soup.select("[data-step-figure]")
    assert figure["id"] == "t1" and figure["data-step-figure"] == "T1"
    assert figure["data-dwell"] == "2000"  # step_figure_dwell, in milliseconds
    assert [p.get_text() for p in figure.select(".step-figure-heading, .step-figure-title")] == [
        "动态图解 · T1",
        "测试图",
    ]
    assert figure.select_one(".step-figure-body strong").get_text() == "说明"  # MyST body parsed

    stage = figure.select_one(".step-figure-stage")
    assert stage["tabindex"] == "0" and stage["role"] == "group" and "测试图" in stage["aria-label"]
    frames = stage.select(".step-figure-frame")
    assert [f["data-step"] for f in frames] == ["1", "2", "3", "4", "5"]
    assert [f.select_one(".step-figure-caption").get_text() for f in frames] == CAPTIONS
    assert [f.select_one(".step-figure-rule").get_text() for f in frames] == [
        f"当前行规则：规则{k}" for k in range(1, 6)
    ]
    assert [f.select_one(".step-figure-explanation").get_text() for f in frames] == [
        f"说明{k}" for k in range(1, 6)
    ]

    # Cells: words for everyone, classes for colour; the current row is marked and bold.
    first = frames[0].select_one("table.step-figure-table")
    assert first.select_one("caption").get_text(strip=True).startswith("表1")
    rows = first.select("tbody tr")
    assert "step-figure-current" in rows[0]["class"] and "step-figure-current" not in rows[1].get(
        "class", []
    )
    assert [td.get_text(strip=True) for td in rows[0].select("td")] == ["✓ 允许", "✗ 禁止"]
    assert [td["class"][0] for td in rows[0].select("td")] == [
        "step-figure-allowed",
        "step-figure-forbidden",
    ]
    assert rows[0].select_one("th").get_text(strip=True) == "行 0"  # row header, not a data cell
    assert rows[0].select_one("td strong") is not None

    assert "颜色只帮助区分" in figure.select_one("p.step-figure-help").get_text()

    # CSS and script: on the page with a figure only, from _static, no network.
    head = str(soup.head)
    assert "_static/step_figure.css" in head and "_static/step_figure.js" in head
    plain = (app.outdir / "plain.html").read_text(encoding="utf-8")
    assert "step_figure" not in plain
    for name in ("step_figure.js", "step_figure.css"):
        text = (app.outdir / "_static" / name).read_text(encoding="utf-8")
        assert not re.search(r"https?://", text), f"{name} must not load anything from the network"


def test_latex_is_a_static_sequence_without_html(tiny_build):
    app, warnings = tiny_build("latex")
    assert warnings == ""
    (tex_file,) = app.outdir.glob("*.tex")
    tex = tex_file.read_text(encoding="utf-8")
    body = tex[tex.index("测试图") :]
    positions = [body.index(r"\sphinxstylestrong{" + caption + "}") for caption in CAPTIONS]
    assert positions == sorted(positions), "the five captions, in order"
    assert body.count(r"\begin{tabulary}") == 5
    assert (
        "规则5" in body and "说明5" in body and r"\(\checkmark\) 允许" in body and "✗ 禁止" in body
    )
    for html in ("<div", "<button", "<p ", "data-step", "颜色只帮助区分"):
        assert html not in tex


def test_text_reads_in_order(tiny_build):
    app, warnings = tiny_build("text")
    assert warnings == ""
    text = (app.outdir / "index.txt").read_text(encoding="utf-8")
    positions = [text.index(caption) for caption in CAPTIONS]
    assert positions == sorted(positions)
    assert "✗ 禁止" in text and "当前行规则：**规则3" in text and "说明5" in text
    assert "颜色只帮助区分" not in text  # the player's help is for the HTML player only


def test_other_builders_get_the_content_without_the_containers(tiny_build):
    app, warnings = tiny_build("man")
    assert warnings == ""
    man = next(app.outdir.glob("*.1")).read_text(encoding="utf-8")
    assert all(caption in man for caption in CAPTIONS)


def test_a_change_in_code_changes_the_figure_and_an_error_stops_the_next_build(tmp_path):
    src = project(tmp_path)
    app, warnings = build(src, "html")
    assert warnings == ""
    deps = {Path(p).name for p in app.env.dependencies["index"]}
    assert {"tiny_figs.py", "tiny_helper.py"} <= deps  # the module and the file it imports

    # Edit only the helper the frames module imports; the next (incremental) build must show it.
    helper = tmp_path / "code" / "tiny_helper.py"
    helper.write_text(HELPER.replace("条件甲", "改过的条件"), encoding="utf-8")
    again, warnings = build(src, "html", fresh=False)
    assert warnings == ""
    html = (again.outdir / "index.html").read_text(encoding="utf-8")
    assert "1 / 5 · 改过的条件" in html and "条件甲" not in html

    # A function that fails stops the page with the directive's message, naming page and line (the
    # other messages are asked of frames_of directly, below).
    page = src / "index.md"
    page.write_text(
        page.read_text(encoding="utf-8").replace("tiny_figs:frames", "tiny_figs:broken"), "utf-8"
    )
    _, warnings = build(src, "html", fresh=False)
    message = "step-figure tiny_figs:broken: broken() failed: ZeroDivisionError: division by zero"
    assert "ERROR" in warnings and message in warnings, warnings
    assert "index.md:3" in warnings


BAD_TARGETS = [
    ("tiny_figs", "the argument must be 'module:function'"),
    ("nowhere:frames", "no file"),
    ("tiny_figs:missing", "tiny_figs.py has no function missing()"),
    (
        "tiny_figs:broken",
        "broken() failed: ZeroDivisionError: division by zero (at tiny_figs.py, line",
    ),
    (
        "tiny_figs:bad_state",
        "frames[0].tables[0].rows[0][1].state must be 'allowed', 'forbidden' or None",
    ),
    ("tiny_figs:short_row", "frames[1].tables[0].rows[1] has 2 cells, the header 3"),
]


def test_a_bad_argument_or_a_failing_function_is_a_clear_error(tmp_path):
    project(tmp_path)
    wrong = {}
    for target, message in BAD_TARGETS:
        with pytest.raises(StepFigureError) as error:
            frames_of(target, tmp_path / "code", None)
        if not (
            str(error.value).startswith(f"step-figure {target}") and message in str(error.value)
        ):
            wrong[target] = str(error.value)
    assert wrong == {}
    assert len(frames_of("tiny_figs:frames", tmp_path / "code", None)) == 5
