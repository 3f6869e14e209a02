"""The examples of each page's core, run in Chromium by the book's own Python (book/_ext/run_in_browser).

The built book is served on 127.0.0.1 (tests/serve.py, as `make serve` serves it); every request to
another host is refused and recorded. Each page loads Python at most once. What the browser prints is
compared with what the page shows and with the same runner (run_in_browser.py) under CPython.
"""

from __future__ import annotations

import doctest
import json
import math
import re
import urllib.request

import pytest
from conftest import (
    CHAPTER_PAGES,
    ROOT,
    assert_axe_clean,
    load_module,
    need,
    section_of,
    soup_of,
)
from serve import serve
from sphinx.errors import ExtensionError

CODE = ROOT / "code"
EXTENSION = load_module(ROOT / "book" / "_ext" / "run_in_browser" / "__init__.py", "run_in_browser")
RUNNER = load_module(
    ROOT / "book" / "_ext" / "run_in_browser" / "static" / "run_in_browser.py", "run_in_browser_py"
)
RESULT = ".runnable-output > .runnable-result"
NOTE = ".runnable-output > .runnable-note"
NUMBER = re.compile(r"\d+(\.\d+)?")


@pytest.fixture(scope="session")
def served(book_html):
    server = serve(book_html)
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()


@pytest.fixture(scope="session")
def shared_context(browser):
    """One browser context per worker for the served pages: they share its HTTP cache, so Python's
    runtime is fetched and compiled once, as for a reader who opens a second page."""
    context = browser.new_context()
    yield context
    context.close()


@pytest.fixture()
def open_served(browser, served, shared_context):
    """Open a served page; `page.requests` lists what it asked for, `page.refused` what asked for
    another host (the browser resolves no other host: conftest.CHROMIUM_ARGS). With `refuse`, or with
    options of its own, the page gets a context of its own whose requests to the book's URLs that
    contain `refuse` are refused too."""
    opened = []

    def open_(name: str, refuse: str | None = None, **context_options):
        if refuse or context_options:
            context = browser.new_context(**context_options)
            opened.append(context)
            if refuse:
                context.route(f"**/*{refuse}*", lambda route: route.abort())
        else:
            context = shared_context
        page = context.new_page()
        opened.append(page)
        page.requests = []
        page.refused = []

        def record(request):
            page.requests.append(request.url)
            if not request.url.startswith((served, "data:", "blob:")) or (
                refuse and refuse in request.url
            ):
                page.refused.append(request.url)

        page.on("request", record)
        page.goto(served + name)
        page.wait_for_load_state("load")
        return page

    yield open_
    for each in reversed(opened):
        each.close()


def run(block, timeout: float = 120_000) -> str:
    """Click the block's 运行 and return what it printed (or the line it says instead)."""
    block.get_by_role("button", name="运行", exact=True).click()
    shown = block.locator(f"{RESULT}, {NOTE}:not(:has-text('正在载入'))")
    shown.wait_for(timeout=timeout)
    return shown.text_content()


def python_asked(page) -> list[str]:
    return [url for url in page.requests if "/_static/pyodide/" in url or url.endswith(".zip")]


def json_documents(text: str) -> list:
    """The JSON documents printed one after another in ``text``."""
    found = []
    at = 0
    while text[at:].strip():
        at += len(text[at:]) - len(text[at:].lstrip())
        value, at = json.JSONDecoder().raw_decode(text, at)
        found.append(value)
    return found


def assert_same(got, want, where: str = "") -> None:
    """``got`` is ``want``, but a float may differ from it in its last bits (relative 1e-9): the browser's
    maths library (musl, compiled to WebAssembly) and the build's (glibc) need not round ``exp``, ``log``,
    ``sin`` and ``cos`` alike. A measured rounding error (a finite-difference check, a largest
    difference) is made of such bits: absolute 1e-9."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), where
        for key in want:
            assert_same(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for k, (a, b) in enumerate(zip(got, want)):
            assert_same(a, b, f"{where}[{k}]")
    elif isinstance(want, float):
        assert isinstance(got, float) and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9), where
    else:
        assert got == want and type(got) is type(want), where


def examples(transcript: str) -> list[doctest.Example]:
    return doctest.DocTestParser().get_examples(transcript)


def assert_same_session(got: str, want: str, detail: bool = True) -> None:
    """The session ``got`` runs the examples of ``want`` and prints what it shows. Where ``want`` shows a
    traceback, ``got`` shows one that ends in the same error (``detail=False``: of the same type, as a
    page's doctest with ``IGNORE_EXCEPTION_DETAIL`` and ``...`` checks it); the lines between may differ
    (Python 3.14 in the browser lays out a traceback as 3.11 does not)."""
    assert RUNNER.statements(got) == RUNNER.statements(want)  # each statement shown once, as typed
    for wanted, ran in zip(examples(want), examples(got), strict=True):
        assert ran.source == wanted.source
        if wanted.exc_msg is None:
            assert (ran.want, ran.exc_msg) == (wanted.want, None), ran.source
        else:
            assert ran.want.startswith("Traceback (most recent call last):\n"), ran.source
            error = ran.exc_msg if detail else ran.exc_msg.split(":")[0]
            assert error == (wanted.exc_msg if detail else wanted.exc_msg.split(":")[0]), ran.source


def edited(text: str, new: str) -> str:
    """The block with the first number of its first ``>>>`` line replaced by ``new(number)``."""
    head, _, rest = text.partition("\n")
    found = NUMBER.search(head)
    return head[: found.start()] + new(found.group()) + head[found.end() :] + "\n" + rest


def cpython(text: str, original: str) -> str:
    """The session the browser prints for ``text``, run by CPython on the files in code/."""
    return RUNNER.session(text, original, CODE)


def doubled(number: str) -> str:
    return str(2 * (float(number) if "." in number else int(number)))


@pytest.mark.browser
@pytest.mark.parametrize("name", [page for page, _ in CHAPTER_PAGES])
def test_the_core_examples_run_in_the_browser(open_served, book_html, name):
    page = open_served(f"ch02/{name}.html")
    page.wait_for_selector("div.runnable.runnable-ready")
    assert python_asked(page) == []  # nothing more is fetched until a click
    command = page.locator("div.runnable").first
    assert "runnable-command" in command.get_attribute("class")  # the 运行命令 block comes first
    button = command.get_by_role("button", name="运行", exact=True)
    assert button.evaluate("b => b.tagName + ':' + b.type") == "BUTTON:button"
    assert command.locator(".runnable-output").get_attribute("aria-live") == "polite"
    if "runnable-needs-" in command.get_attribute("class"):
        # The page's files need numpy (or PyTorch): the block says where it runs instead.
        for block in page.locator("div.runnable").all():
            assert "下载本页的文件" in run(block)
        assert python_asked(page) == [] and page.refused == []
        return
    # The 运行命令 block prints what the page's 运行结果示例 shows, and what CPython prints.
    got = run(command)
    shown = section_of(soup_of(book_html, f"ch02/{name}.html"), "运行结果示例")
    printed = json_documents(got)
    assert_same(printed[0], json.loads(shown.select_one("div.highlight-json pre").text))
    files = re.findall(r"python3 (\S+)", command.locator("pre").first.text_content())
    assert_same(printed, json_documents("".join(RUNNER.command(file, CODE) for file in files)))
    # assert_same allows the last digits of a float to differ: the reader is told so under the output.
    assert "末几位可能与页面上的运行结果不同" in command.locator(".runnable-digits").text_content()
    session = page.locator("div.runnable-session")
    if session.count():
        block = session.first
        shown = block.locator("div.highlight pre").text_content()
        assert_same_session(run(block), shown, detail=False)
        # An edited input prints what the teaching code gives for it.
        editor = block.locator("textarea")
        change = edited(shown, doubled)
        editor.fill(change)
        expected = cpython(change, shown)
        assert expected != cpython(shown, shown)
        assert_same_session(run(block), expected)
        # A planted error shows Python's traceback, ending in the error the teaching code raises.
        editor.fill(edited(shown, lambda number: '"x"'))
        got = run(block)
        planted = examples(got)[0]
        assert planted.want.startswith(
            'Traceback (most recent call last):\n  File "<stdin>", line 1'
        )
        assert (
            planted.exc_msg
            == examples(cpython(edited(shown, lambda number: '"x"'), shown))[0].exc_msg
        )
        # The editor, both buttons and the traceback: the same widget on every page, checked on the first.
        if name == CHAPTER_PAGES[0][0]:
            assert_axe_clean(page, "div.runnable-session")
        # 还原 brings the page's example back.
        block.get_by_role("button", name="还原", exact=True).click()
        assert editor.input_value() == shown.rstrip("\n")
        assert block.locator(".runnable-output").text_content() == ""
    assert page.refused == []


@pytest.mark.browser
def test_the_buttons_move_nothing(open_served):
    # Without the script (refused), the CSS keeps the room its buttons take: nothing moves when it runs.
    bare = open_served("ch02/mask.html", refuse="run_in_browser.js")
    before = bare.locator("div.runnable-session").bounding_box()
    assert bare.locator("div.runnable-session .runnable-bar").count() == 0
    page = open_served("ch02/mask.html")
    page.wait_for_selector("div.runnable-session.runnable-ready")
    assert page.locator("div.runnable-session").bounding_box()["height"] == before["height"]


@pytest.mark.browser
def test_without_javascript_the_block_is_the_static_example(open_served):
    page = open_served("ch02/mask.html", java_script_enabled=False)
    assert page.locator("div.runnable").count() == 2
    assert page.locator("div.runnable .runnable-bar").count() == 0
    padding = page.locator("div.runnable").first.evaluate("b => getComputedStyle(b).paddingBottom")
    assert padding == "0px"


@pytest.mark.browser
def test_from_disk_the_button_says_how_to_serve_the_book(open_page):
    page = open_page("ch02/mask.html", ready="div.runnable.runnable-ready")
    note = run(page.locator("div.runnable").first)
    assert "make serve" in note and "http://127.0.0.1:8000/ch02/mask.html" in note
    assert python_asked(page) == []


# -- the runtime and the runner, without a browser ------------------------------------------------------
def test_the_build_stops_when_the_runtime_is_missing_or_not_the_pinned_one(tmp_path):
    with pytest.raises(ExtensionError, match=r"missing; fetch it with `make pyodide`"):
        EXTENSION.verified(tmp_path / "pyodide.tgz")
    other = tmp_path / "other.tgz"
    other.write_bytes(b"not the pinned tarball")
    with pytest.raises(
        ExtensionError, match=r"is not npm's pyodide@.*delete it and run `make pyodide`"
    ):
        EXTENSION.verified(other)


def test_the_runtime_is_copied_only_when_missing_or_changed(tmp_path):
    tarball = EXTENSION.tarball()
    if not tarball.is_file():
        need(f"{tarball} is missing: make pyodide")
    folder = tmp_path / "pyodide"
    assert EXTENSION.copy_runtime(EXTENSION.verified(tarball), folder)
    assert sorted(p.name for p in folder.iterdir()) == sorted([*EXTENSION.FILES, EXTENSION.STAMP])
    assert sum(p.stat().st_size for p in folder.iterdir()) <= 15 * 2**20  # the budget
    assert not EXTENSION.copy_runtime(tarball, folder)  # a rebuild copies nothing
    (folder / "pyodide.mjs").write_text("changed", encoding="utf-8")
    assert EXTENSION.copy_runtime(tarball, folder)
    assert (folder / "pyodide.mjs").stat().st_size > len("changed")


def test_the_runner_runs_a_session_as_the_prompt_does():
    assert doctest.testmod(RUNNER).failed == 0
    text = ">>> x = [1, 2]\n>>> x\n[1, 2]\n>>> for i in x:\n...     print(i)\n>>> len(\n"
    got = RUNNER.session(text, text, CODE)
    assert got.startswith(
        ">>> x = [1, 2]\n>>> x\n[1, 2]\n>>> for i in x:\n...     print(i)\n1\n2\n"
    )
    assert got.endswith(
        ">>> len(\n" + '  File "<stdin>", line 1\n    len(\n       ^\n'
        "SyntaxError: '(' was never closed\n"
    )
    assert RUNNER.command("no_such_file.py", CODE).startswith("python3: can't open file")


def test_make_serve_listens_on_loopback_with_the_types_a_browser_needs(tmp_path):
    for name in ("a.mjs", "a.wasm"):
        (tmp_path / name).write_bytes(b"\0")
    server = serve(tmp_path)
    try:
        assert server.server_address[0] == "127.0.0.1"
        base = f"http://127.0.0.1:{server.server_port}/"
        types = {}
        for name in ("a.mjs", "a.wasm"):
            with urllib.request.urlopen(base + name, timeout=5) as response:
                types[name] = response.headers["Content-Type"]
        assert types == {"a.mjs": "text/javascript", "a.wasm": "application/wasm"}
    finally:
        server.shutdown()
