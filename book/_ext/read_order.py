"""Share the executed pages fairly between Sphinx's reading processes (``-j auto``), and write the
smallest page first.

With ``-j N`` Sphinx cuts the list of pages to read into consecutive chunks (its ``make_chunks``)
and gives each chunk to one process. The list is sorted by name, so one process may get most of
the pages that run a kernel while the other reads the glossary. Before reading starts
(``env-before-read-docs``, whose list may be reordered in place), this extension lays the pages
out so that each chunk gets about the same estimated work.

The estimate, in seconds, is rough but enough for balancing: an executed page (front matter with
``file_format: mystnb``) costs a kernel start plus time in proportion to its length, and one that
draws with matplotlib about a second more, a step figure a little more; any other page costs only its length. Serial builds
are left alone.

Writing (``-j`` over 1): Sphinx writes the first page of its sorted list in the main process before any
writing process starts, to warm its caches; then the main process resolves and indexes every other page,
one after another, while the writing processes write them. The main process is the one the build waits
for, so the page it writes itself should be the cheapest: this extension puts the page with the smallest
doctree first (the order of the rest is Sphinx's).
"""

from __future__ import annotations

import gc
from pathlib import Path

from sphinx import builders
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util.parallel import make_chunks

# Measured on a 2-core machine (Python 3.11): an empty notebook costs about 1.4 s; the rest of a page's
# cost grows with its length; a page with figures imports matplotlib; a step figure (F12) computes its
# frames and explore states in the reading process.
KERNEL_SECONDS = 1.4  # start and stop one kernel, nbclient's waits included
SECONDS_PER_BYTE = 1 / 15_000  # parsing, rendering and running the cells of a page
STEP_FIGURE_SECONDS = (
    0.6  # one {step-figure}: its frames (and explore panel) computed while the page is read
)
PLOT_SECONDS = (
    1.0  # importing matplotlib and drawing a page's figures (book/_ext/figure_formats.py)
)


def executed(text: str) -> bool:
    """Whether the page whose source is ``text`` is a notebook MyST-NB runs (its front matter says so)."""
    return text.startswith("---") and "file_format: mystnb" in text.split("\n---", 1)[0]


def estimated_seconds(text: str) -> float:
    """The rough reading time of a page whose source is ``text`` (tests/test_build_speed.py)."""
    seconds = len(text.encode("utf-8")) * SECONDS_PER_BYTE
    if executed(text):
        seconds += KERNEL_SECONDS
        if "{glue:figure}" in text or "matplotlib" in text:
            seconds += PLOT_SECONDS
        seconds += STEP_FIGURE_SECONDS * text.count("{step-figure}")
    return round(seconds, 4)


def makespan(loads: list[float], nproc: int) -> float:
    """When the last chunk is done, if ``nproc`` processes take the chunks in order, each the next
    one as soon as it is free (as Sphinx's ``ParallelTasks`` does)."""
    free_at = [0.0] * nproc
    for load in loads:
        k = free_at.index(min(free_at))
        free_at[k] += load
    return max(free_at)


def balanced_order(costs: dict[str, float], nproc: int) -> list[str]:
    """The pages in an order whose ``make_chunks`` chunks finish as early as possible together.

    The chunks keep Sphinx's sizes. The chunks after the first ``nproc`` go to whichever process is
    free first, so they hold the cheapest pages: an estimate that is off then costs little at the end
    of the read (a page that really takes twice its estimate, alone in the last chunk, would keep one
    process busy while the other waits). The other pages go costliest first, each into the chunk (with
    room left) that makes the whole read end earliest; among equals, the chunk with the least work.
    """
    sizes = [len(chunk) for chunk in make_chunks(list(costs), nproc)]
    chunks: list[list[str]] = [[] for _ in sizes]
    loads = [0.0] * len(sizes)
    cheapest = sorted(costs, key=lambda p: (costs[p], p))
    for i in range(nproc, len(sizes)):
        chunks[i], cheapest = cheapest[: sizes[i]], cheapest[sizes[i] :]
        loads[i] = sum(costs[page] for page in chunks[i])
    for page in sorted(cheapest, key=lambda p: (-costs[p], p)):

        def end_if_added(i: int) -> tuple[float, float, int]:
            trial = loads[:i] + [loads[i] + costs[page]] + loads[i + 1 :]  # noqa: B023
            return makespan(trial, nproc), loads[i], i

        i = min((i for i, size in enumerate(sizes) if len(chunks[i]) < size), key=end_if_added)
        chunks[i].append(page)
        loads[i] += costs[page]
    return [page for chunk in chunks for page in chunk]


def _reorder(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    if app.parallel <= 1 or len(docnames) < 2:
        return
    costs = {
        name: estimated_seconds(Path(env.doc2path(name)).read_text(encoding="utf-8"))
        for name in docnames
    }
    docnames[:] = balanced_order(costs, app.parallel)


def write_order(sizes: dict[str, int]) -> list[str]:
    """The pages sorted by name, the one with the smallest doctree (``sizes``: bytes) moved to the front."""
    names = sorted(sizes)
    if names:
        names.insert(0, names.pop(names.index(min(names, key=lambda name: (sizes[name], name)))))
    return names


def one_per_chunk(arguments: list[str], nproc: int, maxbatch: int = 10) -> list[list[str]]:
    return [[argument] for argument in arguments]


# The languages of the book's code blocks (listings, cells and their output, doctests, commands, records).
LANGUAGES = ("python", "ipython3", "pycon", "bash", "json", "myst-ansi")


def _compile_lexers() -> None:
    """Compile the Pygments lexers of LANGUAGES here (a lexer compiles its rules when first made), so that
    the writing processes forked from this one do not each compile them again."""
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    for language in LANGUAGES:
        try:
            get_lexer_by_name(language)
        except ClassNotFound:
            pass


def _write_smallest_first(app: Sphinx) -> None:
    builder = app.builder
    if type(builder).write_documents is not builders.Builder.write_documents:
        return  # a builder that writes its own way (singlehtml gathers every page into one)
    write_documents = builder.write_documents

    def write_smallest_first(docnames) -> None:
        if not builder.parallel_ok or len(docnames) < 2:
            return write_documents(docnames)
        doctrees = Path(builder.doctreedir)
        files = {name: doctrees / f"{name}.doctree" for name in docnames}
        sizes = {name: path.stat().st_size if path.is_file() else 0 for name, path in files.items()}
        # Sphinx's own parallel writer (write_documents sorts the names and calls it), with our order,
        # and one page per writing process: the first is written while the main process resolves the
        # second (Sphinx's chunks of up to ten pages leave the writer waiting for the main process).
        chunks = builders.make_chunks
        builders.make_chunks = one_per_chunk
        _compile_lexers()
        # What exists now is never collected in a writing process: its garbage collector would otherwise
        # walk (and so copy) the main process's memory in every process forked from it.
        gc.freeze()
        try:
            builder._write_parallel(write_order(sizes), nproc=app.parallel - 1)
        finally:
            builders.make_chunks = chunks
            gc.unfreeze()

    builder.write_documents = write_smallest_first


def setup(app: Sphinx) -> dict:
    app.connect("env-before-read-docs", _reorder)
    app.connect("builder-inited", _write_smallest_first)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
