"""What keeps builds fast, checked for what it must not change.

- Parallel reading (`-j auto`): book/_ext/read_order.py reorders the pages before Sphinx cuts them into
  one chunk per process; every page is still read once, and the chunks share the work. The whole
  book's build in the other tests is a parallel build, so what they show is what `make html` shows.
- Writing (`-j` over 1): the main process, which the build waits for, writes the smallest page itself
  (read_order.write_order); the search index remembers what it segmented (book/_ext/zh_search.py) and
  gives what Sphinx's Chinese search gives.
- Bibliography styles are looked up once per build (book/_ext/page_refs.py), not in the installed
  packages' entry points on every use.
- The saved build environment holds no page's whole document (book/_ext/book_exercises.py).
"""

from __future__ import annotations

import pickle
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from bench import SPHINX_OPTS
from sphinx.util.parallel import make_chunks

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from read_order import balanced_order, estimated_seconds, makespan, one_per_chunk, write_order  # noqa: E402

NOTEBOOK_HEAD = "---\nfile_format: mystnb\nkernelspec:\n  name: python3\n---\n"


def chunk_loads(order: list[str], costs: dict[str, float], nproc: int) -> list[float]:
    return [sum(costs[page] for page in chunk) for chunk in make_chunks(order, nproc)]


@pytest.mark.parametrize("nproc", [2, 3, 4])
def test_every_page_is_read_once_and_the_chunks_keep_sphinx_sizes(nproc):
    costs = {f"p{k}": float(k % 4) for k in range(11)}
    order = balanced_order(costs, nproc)
    assert sorted(order) == sorted(costs)
    assert [len(c) for c in make_chunks(order, nproc)] == [
        len(c) for c in make_chunks(sorted(costs), nproc)
    ]


def test_the_costly_pages_are_spread_over_the_chunks():
    # Sorted by name, the four costly pages would all fall into the first chunk.
    costs = {"a": 3.0, "b": 3.0, "c": 2.0, "d": 2.0, "e": 0.1, "f": 0.1, "g": 0.1, "h": 0.1}
    assert chunk_loads(sorted(costs), costs, 2) == [10.0, pytest.approx(0.4)]
    assert chunk_loads(balanced_order(costs, 2), costs, 2) == [
        pytest.approx(5.2),
        pytest.approx(5.2),
    ]


def test_a_short_last_chunk_gets_what_keeps_the_end_early():
    # Seven pages on two processes: chunks of 3, 3 and 1; the third runs on whichever process is free.
    costs = {"a": 2.7, "b": 2.6, "c": 1.7, "d": 1.6, "e": 1.6, "f": 1.6, "g": 0.8}
    order = balanced_order(costs, 2)
    assert [len(c) for c in make_chunks(order, 2)] == [3, 3, 1]
    best = makespan(chunk_loads(order, costs, 2), 2)
    assert best < makespan(chunk_loads(sorted(costs), costs, 2), 2)
    assert best <= sum(costs.values()) / 2 + max(costs.values()) / 2


def test_makespan_follows_the_first_free_process():
    assert makespan([3, 1, 1, 1], 2) == 3  # the second process takes the three short chunks
    assert makespan([1, 1, 3], 2) == 4
    assert makespan([5], 3) == 5


def test_two_processes_share_the_books_estimated_work_about_equally():
    pages = {
        page.relative_to(ROOT / "book").with_suffix("").as_posix(): estimated_seconds(
            page.read_text(encoding="utf-8")
        )
        for page in (ROOT / "book").rglob("*.md")
        if "_ext" not in page.parts
    }
    # Sphinx cuts the pages into chunks (two, or more once there are more than ten pages); the two
    # processes take them in turn, so what counts is when the busier process is done.
    by_name = makespan(chunk_loads(sorted(pages), pages, 2), 2)
    balanced = makespan(chunk_loads(balanced_order(pages, 2), pages, 2), 2)
    assert (
        balanced <= sum(pages.values()) / 2 + max(pages.values()) / 2
    )  # as even as one page allows
    assert balanced <= by_name


def test_an_executed_page_costs_a_kernel_and_a_plotting_page_more():
    text = "# 标题\n\n正文。\n"
    plain = estimated_seconds(text)
    executed = estimated_seconds(NOTEBOOK_HEAD + text)
    plotting = estimated_seconds(
        NOTEBOOK_HEAD + text + "```{code-cell} ipython3\nimport matplotlib.pyplot as plt\n```\n"
    )
    assert plain < 0.01 < executed < plotting
    # file_format outside the front matter does not make a page executed
    assert estimated_seconds(text + "file_format: mystnb\n") < 0.01


def test_the_main_process_writes_the_smallest_page_and_the_rest_go_in_sphinx_order():
    sizes = {"ch02/mask": 400, "ch02/backprop": 280, "references": 7, "index": 27, "glossary": 41}
    assert write_order(sizes) == ["references", "ch02/backprop", "ch02/mask", "glossary", "index"]
    assert write_order({"b": 5, "a": 5}) == ["a", "b"]  # a tie keeps the name order
    assert write_order({}) == []
    assert one_per_chunk(["a", "b", "c"], 1) == [["a"], ["b"], ["c"]]


def test_a_builder_that_writes_its_own_way_keeps_its_own_writer():
    from read_order import _write_smallest_first
    from sphinx.builders import Builder

    class OnePage(Builder):  # as singlehtml: one page gathered from all
        def write_documents(self, docnames):
            return "its own"

    builder = OnePage.__new__(OnePage)
    _write_smallest_first(SimpleNamespace(builder=builder, parallel=2))
    assert builder.write_documents(["a", "b"]) == "its own"


def test_the_chinese_search_segments_and_stems_as_sphinx_does_however_often_it_is_asked():
    from sphinx.search.zh import SearchChinese
    from zh_search import SearchChineseFixed

    words = str(ROOT / "book" / "_ext" / "zh_terms.txt")
    ours = SearchChineseFixed({"dict": words})
    sphinx = SearchChinese({"dict": words})
    texts = [
        "因果掩码让第 i 行只读 j ≤ i 的 Key",
        "softmax([0, 1, 2]) ≈ 0.6652",
        "Attention masks",
        "可见性表",
    ] * 2
    for text in texts:
        assert ours.split(text) == sphinx.split(text)
    assert ours.latin_terms == sphinx.latin_terms
    for word in ["masks", "Attention", "KV", "ids", "running", "掩码", "ids"]:
        assert ours.stem(word) == sphinx.stem(word)


def test_make_html_and_the_tests_build_with_the_same_options():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    options = re.search(r"^SPHINXOPTS\s*\?=\s*(.*)$", makefile, flags=re.M).group(1).split()
    assert options == SPHINX_OPTS


def test_styles_are_found_without_scanning_entry_points_once_registered(monkeypatch):
    import pybtex.plugin
    import sphinxcontrib.bibtex.plugin
    from conftest import load_module
    from page_refs import _register_styles

    conf = load_module(ROOT / "conf.py", "book_conf")
    app = SimpleNamespace(
        config=SimpleNamespace(
            bibtex_default_style=conf.bibtex_default_style,
            bibtex_reference_style=conf.bibtex_reference_style,
            bibtex_foot_reference_style="foot",
        )
    )
    _register_styles(app)

    def no_scan(**kwargs):
        raise AssertionError(f"entry points scanned for {kwargs}")

    monkeypatch.setattr(pybtex.plugin, "entry_points", no_scan)
    monkeypatch.setattr(sphinxcontrib.bibtex.plugin, "_entry_points", no_scan)
    style = pybtex.plugin.find_plugin(
        "pybtex.style.formatting", conf.bibtex_default_style
    )()  # its parts too
    assert style.format_labels is not None
    assert sphinxcontrib.bibtex.plugin.find_plugin(
        "sphinxcontrib.bibtex.style.referencing", conf.bibtex_reference_style
    )
    with pytest.raises(
        AssertionError, match="entry points scanned"
    ):  # anything else: the usual way
        pybtex.plugin.find_plugin("pybtex.backends", "html")


@pytest.mark.build
def test_the_saved_environment_keeps_no_page_inside_an_exercise_entry(book_html):
    from conftest import doctrees_of

    env = pickle.loads((doctrees_of(book_html) / "environment.pickle").read_bytes())
    registry = env.sphinx_exercise_registry
    assert len(registry) >= 2 * 6  # an exercise and its solution, at least once per mechanism page
    for label, entry in registry.items():
        node = entry["node"]
        assert node.parent is None, label
        assert all(part.document is None for part in node.findall()), label
        assert node.astext().strip(), label  # the content itself is kept (titles are made from it)
