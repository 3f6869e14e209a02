"""Exercises (sphinx-exercise) numbered as the book's sections, with the answers collected in the PDF.

- **Numbers.** An exercise on a chapter page is 「练习 2.3.1」: chapter 2 (the page's folder, ``ch02``),
  section 3 (the page's section number in the PDF: the chapter opening's own top sections come first,
  then the chapter's pages in toctree order), exercise 1 on that page. While a page is read, this
  extension notes its exercises in order (``doctree-read``); once all pages are read it works out the
  numbers (``env-get-updated``, which also names the pages whose numbers changed, so they are written
  again); when a page is written, a post-transform puts the numbers into the titles that
  sphinx-exercise has made, and Chinese brackets around a title's own words.
- **numfig stays off.** sphinx-exercise switches Sphinx's ``numfig`` on for its numbers, and numfig
  cannot be switched on for one kind of node alone (https://github.com/sphinx-doc/sphinx/issues/10316):
  it would number every figure and table in the HTML (「图 1」), which the book does not. So the
  ``numfig`` setting is put back to off (the ``config-inited`` event, after sphinx-exercise's handler),
  and the titles get their numbers here, not from Sphinx's figure numbers.
- **HTML.** A solution is a dropdown (sphinx-togglebutton): hidden until the reader opens it, shown
  in full without JavaScript and in print. ``solution-labels.js`` gives each toggle button a Chinese
  accessible name that says which solution it opens.
- **PDF.** Exercises stay on their page; every solution moves to an appendix 「练习答案」 after the
  glossary, under its title 「解答 练习 2.3.1」, which links back to the exercise.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node, solution_node

#: What this module relies on that upstream does not document, named as tests/test_public_ground.py
#: finds it: for each distribution, the version it was checked against and, for each reliance, the
#: upstream API that is missing (the test fails on an upgrade, and on a reliance not named here).
UNDOCUMENTED = {
    "sphinx-exercise": (
        "1.2.1",
        {
            "sphinx_exercise.nodes.exercise_enumerable_node": (
                "sphinx-exercise documents its directives, not its nodes: a numbered exercise is "
                "found by its node class, to note its label, to number its title and to give "
                "take_home's notebooks its text (numbered_exercises)"
            ),
            "sphinx_exercise.nodes.exercise_node": (
                "no documented node for an unnumbered exercise, whose title gets Chinese brackets"
            ),
            "sphinx_exercise.nodes.solution_node": (
                "no documented node for a solution, whose title gets its exercise's number and "
                "which the PDF moves to the appendix"
            ),
            "ExerciseTitles priority 22": (
                "no documented hook for a title's number: this rewrites the titles that "
                "sphinx-exercise's post-transforms (priorities 20 and 21) have made"
            ),
            "CollectSolutions priority 900": (
                "the solutions move with the titles sphinx-exercise gave them (priority 21); no "
                "documented event follows its titling"
            ),
            "config-inited handler priority 900": (
                "no documented way to number exercises without numfig: sphinx-exercise's "
                "config-inited handler (priority 500) switches numfig on, and numfig cannot be "
                "limited to one kind of node (https://github.com/sphinx-doc/sphinx/issues/10316)"
            ),
        },
    ),
    "sphinx": (
        "9.0.4",
        {
            "env.toctree_includes": (
                "the Build environment API lists no way to read a page's toctree entries in order "
                "(9.1.1 keeps the same attribute): section_numbers reads env.toctree_includes"
            ),
        },
    ),
}

CHAPTER = re.compile(r"ch(?P<number>\d+)/index")


def _notes(env: BuildEnvironment) -> tuple[dict, dict, dict]:
    """This extension's notes in the environment (made empty the first time): each page's exercise
    labels in order, the pages that hold solutions, and each chapter opening's number of top sections."""
    if not hasattr(env, "book_exercise_labels"):
        env.book_exercise_labels = {}
    if not hasattr(env, "book_solution_pages"):
        env.book_solution_pages = {}
    if not hasattr(env, "book_top_sections"):
        env.book_top_sections = {}
    return env.book_exercise_labels, env.book_solution_pages, env.book_top_sections


def _note_exercises(app: Sphinx, doctree: nodes.document) -> None:
    """While a page is read: its exercises' labels in order, whether it holds solutions, and (a chapter
    opening) how many top sections it has."""
    labels, solution_pages, top_sections = _notes(app.env)
    docname = app.env.docname
    exercises = [node["label"] for node in doctree.findall(exercise_enumerable_node)]
    if exercises:
        labels[docname] = exercises
    if next(doctree.findall(solution_node), None) is not None:
        solution_pages[docname] = True
    if CHAPTER.fullmatch(docname):
        title = next(doctree.findall(nodes.section), None)
        top = 0 if title is None else sum(isinstance(c, nodes.section) for c in title.children)
        top_sections[docname] = top


def _purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    for notes in _notes(env):
        notes.pop(docname, None)


def _merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    """What a reading process noted (``-j``), merged into the main process's environment."""
    for notes, theirs in zip(_notes(env), _notes(other)):
        notes.update(theirs)


def section_numbers(env: BuildEnvironment) -> dict[str, tuple[int, int]]:
    """(chapter, section) of every page of every chapter, as the PDF numbers them."""
    numbers = {}
    for chapter in sorted(env.found_docs):
        match = CHAPTER.fullmatch(chapter)
        if not match:
            continue
        offset = _notes(env)[2].get(chapter, 0)
        for position, page in enumerate(env.toctree_includes.get(chapter, []), start=1):
            numbers[page] = (int(match["number"]), offset + position)
    return numbers


def _number_exercises(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Work out every exercise's number (chapter, section, k); return the pages whose numbers changed,
    and the pages that hold solutions if any did (a solution's title names its exercise's number)."""
    sections = section_numbers(env)
    labels, solution_pages, _ = _notes(env)
    numbers = {
        docname: {label: (*sections[docname], k) for k, label in enumerate(page, start=1)}
        for docname, page in labels.items()
        if docname in sections
    }
    old = getattr(env, "book_exercise_numbers", {})
    env.book_exercise_numbers = numbers
    changed = {doc for doc in numbers.keys() | old.keys() if numbers.get(doc) != old.get(doc)}
    if not changed:
        return []
    return sorted(changed | set(solution_pages))


def _no_numfig(app: Sphinx, config) -> None:
    # See the module's docstring: numfig would number the HTML's figures and tables too.
    config.numfig = False


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


class ExerciseTitles(SphinxPostTransform):
    """Titles read 「练习 2.3.1（标题）」 and 「解答 练习 2.3.1（标题）」.

    sphinx-exercise makes the titles (post-transforms of priority 20 and 21) with the number Sphinx's
    numfig would give, which is empty here: its exercise title begins with the bare format 「练习 」 in
    LaTeX (nothing in HTML), and its solution title links back with the text 「 练习 」. This puts the
    book's number there (in HTML in a ``caption-number`` span, as Sphinx writes a number), and writes
    the brackets around a title's own words the Chinese way instead of sphinx-exercise's Latin " (".
    """

    default_priority = 22  # after sphinx-exercise's titles (20, 21)

    def run(self, **kwargs: object) -> None:
        numbers = {
            label: ".".join(map(str, number))
            for page in getattr(self.env, "book_exercise_numbers", {}).values()
            for label, number in page.items()
        }
        name = self.config.numfig_format.get("exercise", "%s")
        for node in list(self.document.findall(exercise_enumerable_node)):
            number = numbers.get(node["label"])
            if number is not None:
                self._number_exercise(node[0], name, number)
        for node in list(self.document.findall(solution_node)):
            number = numbers.get(node.get("target_label"))
            if number is not None:
                self._number_solution(node, name, number)
        for node in self.document.findall(_titled):
            for text in list(node[0].findall(nodes.Text)):
                if text.astext() in {" (", ")"}:
                    text.parent.replace(text, nodes.Text("（" if text.astext() == " (" else "）"))

    def _number_exercise(self, title: nodes.Element, name: str, number: str) -> None:
        if title.children and title[0].astext() == name % "":
            title.remove(title[0])
        if self.app.builder.format == "html":
            title.insert(0, nodes.inline("", name % number + " ", classes=["caption-number"]))
        else:
            title.insert(0, nodes.Text(name % number))

    def _number_solution(self, solution: nodes.Element, name: str, number: str) -> None:
        link = next(solution[0].findall(nodes.reference), None)
        if link is None or not link.children:
            return
        bare = " " + (name % "").rstrip() + " "
        if link[0].astext() == bare:
            link.replace(link[0], nodes.Text(bare + number))
            solution["title"] = solution[0].astext()


def _titled(node: nodes.Node) -> bool:
    return isinstance(node, (exercise_node, exercise_enumerable_node, solution_node))


def numbered_exercises(doctree: nodes.document) -> list[tuple[str, list[nodes.Node]]]:
    """A page's numbered exercises as (the title as the page shows it, numbered by ExerciseTitles;
    the nodes of their text). take_home's notebooks read them here, so that sphinx-exercise's nodes
    are used in this module alone."""
    return [
        (node[0].astext(), node.children[1:]) for node in doctree.findall(exercise_enumerable_node)
    ]


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
    app.connect("config-inited", _no_numfig, priority=900)  # after sphinx-exercise's own handler
    app.connect("doctree-read", _note_exercises)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-get-updated", _number_exercises)
    app.add_post_transform(ExerciseTitles)
    app.add_post_transform(CollectSolutions)
    return {
        "version": "2.0",
        "parallel_read_safe": True,
        "parallel_write_safe": True,
        "env_version": 2,  # what the environment keeps changed: a saved one from before is not used
    }
