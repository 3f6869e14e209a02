"""Shared fixtures for the book-level tests: the project's paths and one HTML build per session."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench import SPHINX_OPTS
from reading import PARSER

ROOT = Path(__file__).resolve().parent.parent

# tests/crosscheck needs PyTorch, JAX and Keras, which live in their own venv (`make crosscheck`).
collect_ignore = [] if importlib.util.find_spec("torch") else ["crosscheck"]
BUILD = ROOT / "_build"
SPHINX_BUILD = [sys.executable, "-m", "sphinx"]

# The sections of every mechanism page (the mask page first), in the order every edition shows them.
MECHANISM_SECTIONS = [
    "为什么需要",
    "怎样实现",
    "可能的代价与误解",
    "如何判断是否做对",
    "怎样观察与验证",
    "运行命令",
    "完整教学代码",
    "运行结果示例",
    "练习",
]
MASK_SECTIONS = MECHANISM_SECTIONS

# The chapter's mechanism pages in reading order, with the teaching file each shows in full
# (tests/test_pages.py checks each of them; tests/test_repetition.py reads them with the opening).
CHAPTER_PAGES = [
    ("mask", "02_attention.py"),
    ("scaling", "02_scaling.py"),
    ("multihead", "02_multihead.py"),
    ("rope", "02_rope.py"),
    ("backprop", "02_backprop.py"),
    ("training", "02_training.py"),
    ("costs", "02_costs.py"),
    ("tensors", "02_tensors.py"),
    ("tiles", "02_tiles.py"),
    ("pitfalls", "02_pitfalls.py"),
]


# Marks isolate what is slow or needs a tool: `-m "not build"` builds no book, `-m "not browser"` starts
# no browser, `-m "not pdf"` runs no TeX. A test is marked by what its fixtures do; a browser or PDF test
# builds the book first, so it is a build test too.
_NEEDS = {
    "book_html": "build",
    "browser": "browser",
    "open_page": "browser",
    "pdf": "pdf",
    "pages": "pdf",
    "text": "pdf",
}
_IMPLIES = {"browser": "build", "pdf": "build"}


def pytest_collection_modifyitems(config, items):
    unmarked = []
    for item in items:
        marks = {m.name for m in item.iter_markers()}
        params = set(getattr(item, "callspec", None).params) if hasattr(item, "callspec") else set()
        needed = {_NEEDS[f] for f in item.fixturenames if f in _NEEDS and f not in params}
        if "build" in needed and marks & {"browser", "pdf"}:
            needed.discard("build")
        missing = needed - marks
        if missing:
            unmarked.append(f"{item.nodeid} (needs {', '.join(sorted(missing))})")
        for mark in marks & set(_IMPLIES):
            item.add_marker(_IMPLIES[mark])

    # The order keeps two cores busy (the workers take tests in this order): first one test that reads
    # the built book, so that its build starts at once; then the tests that need no book, which the
    # other workers run while it builds; then the tests that read the book; the PDF tests last, as the
    # PDF is typeset in the background from the moment the HTML build is done (see _build_book_html).
    def group(item) -> int:
        return 3 if item.get_closest_marker("pdf") else 2 if "book_html" in item.fixturenames else 1

    first = next((item for item in items if group(item) == 2), None)
    items.sort(key=lambda item: 0 if item is first else group(item))
    if unmarked:
        raise pytest.UsageError(
            "tests without the mark their fixtures need:\n  " + "\n  ".join(unmarked)
        )


# The configuration lines of a small Chinese project that the tests build, as conf.py sets the search: without
# a word list, Sphinx 9.0's Chinese search loads jieba's whole dictionary as a user dictionary in every
# build (about 2 s each).
CHINESE = (
    'language = "zh_CN"\n'
    f'html_search_options = {{"dict": {str(ROOT / "book" / "_ext" / "zh_terms.txt")!r}}}\n'
)


def load_module(path: Path, name: str = "edited_module"):
    """Import a Python file by path, e.g. a teaching file that a test has just edited in a copy."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def need(reason: str) -> None:
    """Skip a test whose tool is missing; in CI (CI=true) that is a failure instead."""
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        pytest.fail(f"CI must run this test, but: {reason}")
    pytest.skip(reason)


def sphinx(builder: str, out: Path, *extra: str, src: Path = ROOT) -> subprocess.CompletedProcess:
    """Run sphinx-build on a project laid out like this one (conf.py at the top, sources in book/)."""
    cmd = [
        *SPHINX_BUILD,
        "-b",
        builder,
        *SPHINX_OPTS,
        "--no-color",
        "-c",
        str(src),
        str(src / "book"),
        str(out),
        *extra,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=src)


def doctrees_of(html: Path) -> Path:
    """Where the session's book build keeps the pages it read (the PDF build reuses them)."""
    return html.parent / (html.name + "-doctrees")


def once_per_run(out: Path, build) -> Path:
    """`build()` (which writes into the folder `out`) once per test run, however many pytest-xdist
    workers ask for it.

    `make test` runs the tests in three worker processes (pytest -n 3). Each has its own session, so a
    session fixture would build the book once per worker; instead the first worker to ask builds it
    under a file lock beside `out` and leaves a stamp naming this run (xdist gives every worker of one
    run the same PYTEST_XDIST_TESTRUNUID), and the others wait for the lock and reuse what it built.
    Without xdist there is one session and `build()` simply runs.
    """
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        return build()
    from filelock import FileLock

    out.parent.mkdir(parents=True, exist_ok=True)
    stamp = out.parent / f".{out.name}.built"
    with FileLock(str(out.parent / f".{out.name}.lock")):
        if stamp.is_file():
            built_by, _, path = stamp.read_text(encoding="utf-8").partition("\n")
            if built_by == run:
                return Path(path)
        stamp.unlink(missing_ok=True)
        result = build()
        stamp.write_text(f"{run}\n{result}", encoding="utf-8")
        return result


_RUN: dict = {}  # what this session knows of its run: whether it reads the PDF, the PDF build it started


def pytest_collection_finish(session):
    """Whether this run will read the PDF (after -m and -k have deselected what they deselect)."""
    _RUN["wants_pdf"] = any(item.get_closest_marker("pdf") for item in session.items)


def pytest_sessionfinish(session):
    """A PDF build started in the background ends with the session that started it: waited for when
    the run went through (another worker may be reading it), stopped when the run was cut short."""
    build = _RUN.get("pdf_build")
    if build is not None and build.poll() is None:
        if session.shouldfail or session.shouldstop:
            build.terminate()
        build.wait()


def _build_book_html(out: Path) -> Path:
    shutil.rmtree(out, ignore_errors=True)
    result = sphinx("html", out, "-d", str(doctrees_of(out)), "-E")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING" not in result.stderr, result.stderr
    if _RUN.get("wants_pdf") and not _pdf_tools_missing():
        _start_pdf(out)  # the PDF reads these pages; it is typeset while the other tests run
    return out


@pytest.fixture(scope="session")
def book_html() -> Path:
    """The whole book built once per test run, from clean, into _build/test-html (kept for review).

    BOOK_TEST_BUILD names another folder, so that two test runs do not share one build.
    """
    out = Path(os.environ.get("BOOK_TEST_BUILD", BUILD / "test-html")).resolve()
    return once_per_run(out, lambda: _build_book_html(out))


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # No host but the book's own server resolves: a page that asks another host fails, and a test
    # that records the page's requests sees that it asked.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


@pytest.fixture(scope="session")
def browser():
    """Debian's headless chromium driven by Playwright (never a downloaded browser)."""
    if not CHROMIUM.exists():
        need(
            "no browser at /usr/bin/chromium: install Debian's package `chromium` (apt-get install chromium)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


# -- the PDF edition (tests/test_pdf.py and the pages' own PDF checks share one build) -------------
# BOOK_TEST_BUILD (see book_html) moves this build too, next to the HTML one.
_OWN = os.environ.get("BOOK_TEST_BUILD")
LATEX_BUILD = (Path(_OWN + "-latex") if _OWN else BUILD / "test-latex").resolve()

POPPLER = ("pdftotext", "pdffonts", "pdftoppm")


def flat(text: str) -> str:
    """Text without any whitespace: PDF extraction spaces Chinese and digits unpredictably."""
    return re.sub(r"\s+", "", text)


def assert_numbered_sections(
    text: str, title: str, sections: list[str] = MECHANISM_SECTIONS
) -> int:
    """In the PDF's flat `text`, the page `title` is section 2.N and its sections follow as 2.N.1, 2.N.2 …
    in the order of `sections`. Returns N."""
    found = re.search(rf"2\.(\d+){re.escape(flat(title))}", text)
    assert found, f"{title} is not a section of 第2章"
    number = found.group(1)
    at = found.end()
    for k, heading in enumerate(sections, start=1):
        where = text.find(f"2.{number}.{k}{flat(heading)}", at)
        assert where > at, f"2.{number}.{k} {heading}"
        at = where
    return int(number)


def _pdf_tools_missing() -> str | None:
    import texcheck

    missing = texcheck.missing_tools()
    if missing:
        return texcheck.tools_message(missing)
    lacking = [tool for tool in POPPLER if not shutil.which(tool)]
    return f"{', '.join(lacking)} missing: apt-get install poppler-utils" if lacking else None


def _pdf_files() -> dict[str, Path]:
    """Where the PDF build's output, errors and exit status go (beside LATEX_BUILD)."""
    return {
        kind: LATEX_BUILD.parent / f".{LATEX_BUILD.name}.{kind}"
        for kind in ("token", "out", "err", "rc")
    }


def _run_token() -> str:
    return os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid{os.getpid()}"


def _start_pdf(book_html: Path) -> None:
    """Start `sphinx -M latexpdf` in the background, as `make pdf` builds after `make html`: into a clean
    folder, from the pages the HTML build has read (one shared doctree folder), so no page runs twice."""
    files = _pdf_files()
    shutil.rmtree(LATEX_BUILD, ignore_errors=True)
    LATEX_BUILD.parent.mkdir(parents=True, exist_ok=True)
    for path in files.values():
        path.unlink(missing_ok=True)
    cmd = [
        *SPHINX_BUILD,
        "-M",
        "latexpdf",
        "book",
        str(LATEX_BUILD),
        "-c",
        ".",
        *SPHINX_OPTS,
        "--no-color",
        "-d",
        str(doctrees_of(book_html)),
    ]
    q = {kind: shlex.quote(str(path)) for kind, path in files.items()}
    # The exit status is written last, and renamed into place, so a reader never sees half of it.
    script = f"{shlex.join(cmd)} >{q['out']} 2>{q['err']}; echo $? >{q['rc']}.part && mv {q['rc']}.part {q['rc']}"
    files["token"].write_text(_run_token(), encoding="utf-8")
    _RUN["pdf_build"] = subprocess.Popen(
        ["sh", "-c", script],
        cwd=ROOT,
        env={**os.environ, "LATEXMKOPTS": "-silent"},
    )


def _finished_pdf(book_html: Path) -> Path:
    """The PDF this run typesets: wait for the background build (start it if no one has), then check it."""
    files = _pdf_files()
    started = (
        files["token"].is_file() and files["token"].read_text(encoding="utf-8") == _run_token()
    )
    if not started:
        _start_pdf(book_html)
    for _ in range(2400):  # at most 20 minutes: a TeX run that hangs fails here instead
        if files["rc"].is_file():
            break
        time.sleep(0.5)
    else:
        pytest.fail("the PDF build did not finish within 20 minutes")
    out = files["out"].read_text(encoding="utf-8")
    err = files["err"].read_text(encoding="utf-8")
    assert files["rc"].read_text().strip() == "0", (out + err)[-5000:]
    assert "WARNING" not in err, err
    # The book's PDF is the one typeset from a .tex; other PDFs there are figures it includes.
    pdfs = sorted(
        p for p in (LATEX_BUILD / "latex").glob("*.pdf") if p.with_suffix(".tex").is_file()
    )
    assert len(pdfs) == 1, pdfs
    return pdfs[0]


@pytest.fixture(scope="session")
def pdf(book_html: Path) -> Path:
    """The PDF edition, built once per test run (in the background from the moment the HTML build is
    done: see _start_pdf)."""
    missing = _pdf_tools_missing()
    if missing:
        need(missing)
    return once_per_run(LATEX_BUILD, lambda: _finished_pdf(book_html))


@pytest.fixture(scope="session")
def pages(pdf: Path) -> list[str]:
    """The text of every page (pdftotext separates pages with a form feed)."""
    cmd = ["pdftotext", "-enc", "UTF-8", str(pdf), "-"]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split("\f")[:-1]


@pytest.fixture(scope="session")
def text(pages: list[str]) -> str:
    return flat("".join(pages))


# -- the built HTML of a page (the book-level tests read it with BeautifulSoup) ------------------
# A built page is parsed once per worker and shared by the tests that read it (parsing the chapter's pages
# takes seconds, and most tests only read): a shared page is read-only. A test that takes something out
# before reading asks for a page of its own (``own=True``); changing a shared one fails at once (_guard).
_SHARED: dict[tuple, object] = {}


def soup_of(book_html: Path, name: str, own: bool = False):
    """The built page `name` (e.g. "ch02/mask.html") parsed with BeautifulSoup: shared and read-only,
    or (``own=True``) a parse of the test's own, which it may change."""
    from bs4 import BeautifulSoup

    path = book_html / name
    if own:
        return BeautifulSoup(path.read_text(encoding="utf-8"), PARSER)
    stat = path.stat()
    key = (path.resolve(), stat.st_mtime_ns, stat.st_size)
    if key not in _SHARED:
        _guard()
        _SHARED[key] = BeautifulSoup(path.read_text(encoding="utf-8"), PARSER)
    return _SHARED[key]


def article_of(book_html: Path, name: str, own: bool = False):
    """The page's <article>: its text without the theme's navigation (shared unless ``own=True``)."""
    return soup_of(book_html, name, own).find("article")


def _guard() -> None:
    """Make every change to a shared page raise (bs4 changes a tree through ``extract`` and ``insert``)."""
    from bs4.element import PageElement, Tag

    if getattr(PageElement.extract, "guarded", False):
        return

    def shared(element) -> bool:
        root = element
        while root.parent is not None:
            root = root.parent
        return any(root is soup for soup in _SHARED.values())

    def refuse(change):
        def guarded(self, *args, **kwargs):
            if shared(self):
                raise RuntimeError(
                    "a test changed a shared page: ask soup_of/article_of for its own (own=True)"
                )
            return change(self, *args, **kwargs)

        guarded.guarded = True
        return guarded

    PageElement.extract = refuse(PageElement.extract)
    Tag.insert = refuse(Tag.insert)


def heading_text(tag) -> str:
    """A heading's text without its ¶/# permalink."""
    return tag.get_text(" ", strip=True).rstrip("#").strip()


def table_rows(node, cells=("th", "td"), sep: str = "") -> list[list[str]]:
    """Every table row under `node` as the texts of its cells (`cells`: which cells count)."""
    return [
        [c.get_text(sep, strip=True) for c in tr.find_all(list(cells))]
        for tr in node.find_all("tr")
    ]


def section_of(node, title: str):
    """The <section> under `node` whose own h2 reads `title`."""
    return next(
        s
        for s in node.find_all("section")
        if s.find("h2", recursive=False) and heading_text(s.find("h2")) == title
    )


def assert_frames_shown(figure, frames: list[dict]) -> None:
    """A step figure's HTML shows every frame in order: its caption 「k / n · condition」 and its sentence."""
    captions = [c.get_text(strip=True) for c in figure.select(".step-figure-caption")]
    assert captions == [f"{k} / {len(frames)} · {f['condition']}" for k, f in enumerate(frames, 1)]
    sentences = [e.get_text(strip=True) for e in figure.select(".step-figure-explanation")]
    assert sentences == [f["explanation"] for f in frames]


# -- pages in the browser (every browser test opens a built page through `open_page`) ------------
PAUSED_AT = (
    3600  # seconds (Playwright reads a number as Unix time): an hour after the fake clock's start
)


@pytest.fixture()
def open_page(browser, book_html):
    """Open a built page (e.g. "ch02/mask.html") from disk; record every request and console error.

    `open_page(name, width=1280, height=900, ready=None, maths=False, theme=None, **context_options)`
    returns a page with `.requests` (every URL asked for) and `.errors` (console errors and uncaught
    exceptions). `ready` is a selector to wait for, `maths=True` waits until MathJax has typeset the page,
    `theme="light"/"dark"` sets the reader's system colour scheme and checks the page follows it.
    `clock=True` gives the page Playwright's fake clock, stopped once the page is ready: time then
    passes only by `page.clock.run_for(ms)`, so a test of timing waits for nothing.
    `without_maths=True` answers MathJax's script with an empty one (a page of the chapter typesets for
    a second or more): for tests of a control's behaviour, where the formulas play no part.
    Every context it opened is closed at teardown.
    """
    contexts = []

    def open_(
        name: str,
        width: int = 1280,
        height: int = 900,
        ready: str | None = None,
        maths: bool = False,
        theme: str | None = None,
        clock: bool = False,
        without_maths: bool = False,
        **context_options,
    ):
        if theme is not None:
            context_options["color_scheme"] = theme
        context = browser.new_context(
            viewport={"width": width, "height": height}, **context_options
        )
        contexts.append(context)
        if without_maths:  # MathJax's script comes back empty: nothing is typeset, nothing fails
            context.route("**/_static/mathjax/**", lambda route: route.fulfill(body=""))
        page = context.new_page()
        page.requests = []
        page.errors = []
        page.on("request", lambda request: page.requests.append(request.url))
        page.on(
            "console", lambda message: message.type == "error" and page.errors.append(message.text)
        )
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        if clock:
            page.clock.install(time=0)
        page.goto((book_html / name).as_uri())
        page.wait_for_load_state("load")
        if theme is not None:  # the theme follows the reader's system setting
            assert page.evaluate("document.documentElement.dataset.theme") == theme
        if ready:
            page.wait_for_selector(ready)
        if maths:
            wait_for_maths(page)
        if clock:
            page.clock.pause_at(PAUSED_AT)
        return page

    yield open_
    for context in contexts:
        context.close()


def use_the_figure(page, figure: str) -> None:
    """Step the figure to its end, open and close its enlarged view, and wait for the maths."""
    page.locator(f"{figure} .step-figure-stage").focus()
    page.keyboard.press("End")
    page.get_by_role("button", name="放大图形", exact=True).click()
    page.keyboard.press("Escape")
    wait_for_maths(page)


def wait_for_maths(page) -> None:
    """Wait until MathJax has typeset the page (so its fonts have been fetched)."""
    page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise")
    page.evaluate("MathJax.startup.promise")


def assert_offline(page, book_html: Path, data: bool = True) -> None:
    """No request of `page` left the book folder (`data=False`: not even a data: URL)."""
    root = book_html.resolve().as_uri() + "/"
    outside = [
        url
        for url in page.requests
        if not url.startswith(root) and not (data and url.startswith("data:"))
    ]
    assert not outside, outside


# Every finite CSS transition or animation has ended (a fading-in solution, a sliding frame): colours
# measured mid-transition are neither the old nor the new ones, so nothing is measured before this.
_SETTLED = """() => document.getAnimations().every(
    a => a.playState !== "running" || a.effect.getComputedTiming().iterations === Infinity)"""


def settle(page) -> None:
    """Wait until no finite transition or animation runs on `page` (however busy the machine is)."""
    page.wait_for_function(_SETTLED)


def set_theme(page, scheme: str) -> None:
    """Change the reader's system colour scheme ("light" or "dark") on an open page: the theme follows
    it as it changes (pydata-sphinx-theme listens to the media query in its default "auto" mode), so one
    visit checks both."""
    page.emulate_media(color_scheme=scheme)
    page.wait_for_function(f"document.documentElement.dataset.theme === {scheme!r}")


def assert_axe_clean(page, context: str | None = None, note=None) -> None:
    """axe-core finds no serious or critical violation on `page` (or inside the selector `context`).

    Every violation found is printed (shown with -rA: what remains to look at); `note` goes into
    the failure message (e.g. which step of a figure was shown).
    """
    from axe_playwright_python.sync_playwright import Axe

    settle(page)
    # Only violations are asked for: axe then records one node for each rule that passes instead of all,
    # which halves its time on a page of the chapter (axe-core's documented resultTypes option).
    options = {"resultTypes": ["violations"]}
    found = Axe().run(page, context=context, options=options).response["violations"]
    where = f" in {context}" if context else ""
    for v in found:
        print(
            f"axe{where} {v['impact']}: {v['id']} ({len(v['nodes'])}): {v['help']}",
            [n["target"] for n in v["nodes"]][:4],
        )
    serious = [
        (v["id"], [n["target"] for n in v["nodes"]][:4])
        for v in found
        if v["impact"] in ("serious", "critical")
    ]
    assert not serious, (note, serious) if note is not None else serious
