"""Exercises (sphinx-exercise) numbered as the book's sections, with the answers collected in the PDF.

- **Numbers.** An exercise on a chapter page is 「练习 2.3.1」: chapter 2 (the page's folder, ``ch02``),
  section 3 (the page's section number in the PDF: the chapter opening's own top sections come first,
  then the chapter's pages in toctree order), exercise 1 on that page. Sphinx would number exercises
  by one counter over the whole book; here the numbers are rewritten once all pages are read.
- **HTML.** A solution is a dropdown (sphinx-togglebutton): hidden until the reader opens it, shown
  in full without JavaScript and in print. ``solution-labels.js`` gives each toggle button a Chinese
  accessible name that says which solution it opens.
- **PDF.** Exercises stay on their page; every solution moves to an appendix 「练习答案」 after the
  glossary, under its title 「解答 练习 2.3.1」, which links back to the exercise.
- **Saved state.** sphinx-exercise keeps each exercise and solution node in the build environment,
  still tied to its page's whole document, so the saved environment held a copy of every page with
  exercises (2 MB, loaded on every build). Once a page is read, its entries keep a detached copy.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node, solution_node

CHAPTER = re.compile(r"ch(?P<number>\d+)/index")


def _top_sections(env: BuildEnvironment, docname: str) -> int:
    """How many top-level sections (h2) a chapter opening has before its pages."""
    doctree = env.get_doctree(docname)
    title = next(doctree.findall(nodes.section), None)
    return (
        sum(isinstance(child, nodes.section) for child in title.children)
        if title is not None
        else 0
    )


def section_numbers(env: BuildEnvironment) -> dict[str, tuple[int, int]]:
    """(chapter, section) of every page of every chapter, as the PDF numbers them."""
    numbers = {}
    for chapter in sorted(env.found_docs):
        match = CHAPTER.fullmatch(chapter)
        if not match:
            continue
        offset = _top_sections(env, chapter)
        for position, page in enumerate(env.toctree_includes.get(chapter, []), start=1):
            numbers[page] = (int(match["number"]), offset + position)
    return numbers


def _number_exercises(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Work out every exercise's number (chapter, section, k); return the pages whose numbers changed.

    The numbers are kept in ``env.book_exercise_numbers`` and handed to Sphinx only when writing starts
    (``_hand_over``): had they been put in ``env.toc_fignumbers`` here, Sphinx, which renumbers that table
    from scratch on every build, would find them gone each time and rewrite every page with exercises.
    """
    sections = section_numbers(env)
    registry = getattr(env, "sphinx_exercise_registry", {})
    per_page: dict[str, list[str]] = {}
    for entry in registry.values():  # in reading order: a page's exercises in their order
        if entry["type"] == "exercise" and entry["docname"] in sections:
            per_page.setdefault(entry["docname"], []).append(entry["node"]["ids"][0])
    numbers = {
        docname: {node_id: (*sections[docname], k) for k, node_id in enumerate(ids, start=1)}
        for docname, ids in per_page.items()
    }
    old = getattr(env, "book_exercise_numbers", {})
    env.book_exercise_numbers = numbers
    changed = {doc for doc in numbers.keys() | old.keys() if numbers.get(doc) != old.get(doc)}
    # A solution's title names its exercise's number: pages that hold solutions are rewritten too.
    holders = {entry["docname"] for entry in registry.values() if entry["type"] == "solution"}
    return sorted(changed | (holders if changed else set()))


def _detach_registered_nodes(app: Sphinx, doctree: nodes.document) -> None:
    """The page's registry entries keep their node and its content, without the page around them."""
    for entry in getattr(app.env, "sphinx_exercise_registry", {}).values():
        if entry["docname"] == app.env.docname:
            copy = entry["node"].deepcopy()
            copy.parent = None
            for node in copy.findall():
                node.document = None
            entry["node"] = copy


def _no_numfig(app: Sphinx, config) -> None:
    # sphinx-exercise turns on numfig for its numbers; the book numbers exercises itself (above), and
    # numfig would also walk every page's doctree on every build to number tables and figures.
    config.numfig = False


def _hand_over(app: Sphinx, builder) -> None:
    """Give Sphinx the exercise numbers for writing (HTML titles, LaTeX titles and solution links)."""
    for docname, numbers in getattr(app.env, "book_exercise_numbers", {}).items():
        app.env.toc_fignumbers.setdefault(docname, {})["exercise"] = numbers


def _own_ids(solution: nodes.Element) -> None:
    """Ids inside a moved solution, made unique in the appendix's page.

    LaTeX labels an id with the page being written; in the appendix that is no longer the page the
    solution came from, so two pages' ``index-3`` (e.g. of a function listing) would collide.
    """
    prefix = re.sub(r"\W", "-", solution["docname"]) + "-"
    renamed = {}
    for node in solution.findall(nodes.Element):
        if node is solution or not node.get("ids"):
            continue
        renamed.update({i: prefix + i for i in node["ids"]})
        node["ids"] = [prefix + i for i in node["ids"]]
    for index in solution.findall(addnodes.index):
        index["entries"] = [
            (t, text, renamed.get(tid, tid), main, key)
            for t, text, tid, main, key in index["entries"]
        ]
    for reference in solution.findall(nodes.reference):
        if reference.get("refid") in renamed:
            reference["refid"] = renamed[reference["refid"]]


class ChineseParentheses(SphinxPostTransform):
    """Titles read 「练习 2.3.1（标题）」: sphinx-exercise writes the title's brackets the Latin way."""

    default_priority = (
        22  # after sphinx-exercise has built the exercise and solution titles (20, 21)
    )

    def run(self, **kwargs: object) -> None:
        for node in self.document.findall(
            lambda n: isinstance(n, (exercise_node, exercise_enumerable_node, solution_node))
        ):
            for text in list(node[0].findall(nodes.Text)):
                if text.astext() in {" (", ")"}:
                    text.parent.replace(text, nodes.Text("（" if text.astext() == " (" else "）"))


class CollectSolutions(SphinxPostTransform):
    """PDF: move every solution to an appendix chapter 「练习答案」 at the end of the book."""

    default_priority = 900  # after sphinx-exercise has titled the solutions (priority 21)
    formats = ("latex",)

    def run(self, **kwargs: object) -> None:
        # sphinx-exercise labels an exercise "exercise:<label>" in LaTeX, but a solution's title links
        # to "<docname>:<label>" (Sphinx's usual form): give each exercise that label as well.
        for exercise in list(self.document.findall(exercise_enumerable_node)):
            label = rf"\phantomsection\label{{\detokenize{{{exercise['docname']}:{exercise['label']}}}}}"
            exercise.parent.insert(
                exercise.parent.index(exercise), nodes.raw("", label + "\n", format="latex")
            )
        solutions = list(self.document.findall(solution_node))
        if not solutions:
            return
        appendix = nodes.section(ids=["exercise-answers"], names=["练习答案"])
        appendix += nodes.title(text=self.config.book_exercises_answers_title)
        for solution in solutions:
            solution.parent.remove(solution)
            _own_ids(solution)
            appendix += solution
        # The last pasted page is where the book's text ends (the bibliography and index follow it).
        pages = list(self.document.findall(addnodes.start_of_file))
        (pages[-1].parent if pages else self.document).append(appendix)


def setup(app: Sphinx) -> dict:
    app.setup_extension("sphinx_exercise")
    app.setup_extension("sphinx_togglebutton")
    app.add_config_value("book_exercises_answers_title", "练习答案", "env", types=[str])
    # After Sphinx's own figure numbering (which numbers only numbered toctrees and resets the rest).
    app.connect("config-inited", _no_numfig, priority=900)  # after sphinx-exercise's own handler
    app.connect("doctree-read", _detach_registered_nodes)
    app.connect("env-get-updated", _number_exercises, priority=900)
    app.connect("write-started", _hand_over)
    app.add_post_transform(ChineseParentheses)
    app.add_post_transform(CollectSolutions)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
