"""The build stands on public ground: conf.py, book/_ext/ and book/chapter/ use other packages only
through their documented names.

Each file is parsed (``ast``, nothing is imported) and fails on:

- an import of an underscore name from another package (``from sphinx.search import _MINIFIED_JS_PATH``,
  ``import pybtex._x``);
- a use of another package's underscore attribute (``builder._write_parallel``, ``atexit._run_exitfuncs``),
  also through ``getattr``; the book's own underscore names (on ``self``, or on a module of the book)
  are its own business;
- an assignment into an attribute or item of another package's module or class, or a mutating call on
  one (``BibtexDomain.env_updated = …``, ``sphinx.search.languages["zh"] = …``, ``setattr(cls, …)``),
  and a write into the objects Sphinx hands to an extension: ``app`` and ``builder`` attributes, and
  environment attributes other than the book's own, which are named ``book_…``
  (``env.toc_fignumbers[…] = …``). Public configuration is not such an assignment: Sphinx's config
  values (``config.numfig``, ``app.config.…``), matplotlib's ``rcParams``, and the process state the
  standard library documents as writable (``os.environ``, ``sys.argv``, ``sys.path``, ``sys.modules``);
- a process of its own: ``os.fork`` and kin, ``multiprocessing``, ``subprocess``, a process pool;
- reliance on what another extension or Sphinx does not document: an import from another extension's
  package other than its documented names (``sphinx_exercise.nodes``), a transform or handler priority
  in a module that sets up or imports another extension (its order is that extension's own business:
  book_exercises' 22, after sphinx-exercise's titles at 20 and 21), a read of an environment
  attribute that Sphinx's environment API does not list (``env.toctree_includes``, also through
  ``getattr``), and another package's writing of a node reused (``LaTeXTranslator.visit_index``).

Where no documented event, node or API exists, the module says so in a module-level ``UNDOCUMENTED``
dict, the allow-list: each distribution it relies on, with the version it was checked against, and
each reliance by the name this test reports it under (``sphinx_exercise.nodes.solution_node``,
``ExerciseTitles priority 22``, ``config-inited handler priority 900``, ``env.toctree_includes``)
with the upstream API that is missing. A named reliance passes; a new one, even on a distribution
already declared, fails until it is named; a named one the module no longer has fails too. And
``test_every_undocumented_reliance_is_pinned_to_the_installed_version`` fails once a declared
distribution is upgraded, so that each reliance is checked again (and dropped if the API now exists).

The only list of names is what the upstream documents (``DOCUMENTED_ENV``, ``DOCUMENTED_EXTENSION``).
The planted sources below show that each rule fails where it should.
"""

from __future__ import annotations

import ast
import importlib.metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXT = ROOT / "book" / "_ext"
SCANNED = sorted(
    [
        ROOT / "conf.py",
        *EXT.rglob("*.py"),
        *(ROOT / "book" / "chapter").rglob("*.py"),
    ]
)
# The book's own modules: its extensions (files and packages in book/_ext), the book side (chapter) and
# the teaching files (code/, imported by file name).
LOCAL = (
    {p.stem for p in EXT.glob("*.py")}
    | {p.name for p in EXT.iterdir() if (p / "__init__.py").is_file()}
    | {"chapter", "conf"}
    | {p.stem for p in (ROOT / "code").glob("*.py")}
)
# Writable by design: the process's environment, arguments and import state; matplotlib's settings.
PUBLIC_STATE = ("os.environ", "sys.argv", "sys.path", "sys.modules", "matplotlib.rcParams")
MUTATORS = {
    "append",
    "extend",
    "insert",
    "remove",
    "pop",
    "popitem",
    "clear",
    "update",
    "setdefault",
    "add",
    "discard",
    "sort",
    "reverse",
    "__setitem__",
    "__delitem__",
    "__setattr__",
}
SPAWNING = (
    "os.fork",
    "os.forkpty",
    "os.register_at_fork",
    "os.posix_spawn",
    "os.posix_spawnp",
    "os.spawn",
    "os.exec",
    "os.system",
    "os.popen",
    "pty.fork",
    "multiprocessing",
    "subprocess",
    "concurrent.futures.ProcessPoolExecutor",
    "concurrent.futures.process",
)
# Objects that Sphinx hands to an extension, by the names the book gives them.
HANDED = {"app", "builder", "env"}
# Sphinx's environment as its "Build environment API" page documents it (Sphinx 9.0).
DOCUMENTED_ENV = {
    "app",
    "config",
    "project",
    "srcdir",
    "doctreedir",
    "events",
    "found_docs",
    "metadata",
    "titles",
    "docname",
    "parser",
    "current_document",
    "doc2path",
    "relfn2path",
    "note_dependency",
    "new_serialno",
    "note_reread",
}
# Other Sphinx extensions the book uses, by package, with their distribution's name.
EXTENSIONS = {
    "sphinx_exercise": "sphinx-exercise",
    "sphinx_design": "sphinx-design",
    "sphinx_togglebutton": "sphinx-togglebutton",
    "sphinxcontrib.bibtex": "sphinxcontrib-bibtex",
    "myst_nb": "myst-nb",
    "myst_parser": "myst-parser",
}
# What those extensions document for other code: MyST-NB's glue function, sphinxcontrib-bibtex's plugins.
DOCUMENTED_EXTENSION = {"myst_nb.glue", "sphinxcontrib.bibtex.plugin"}


def _extension(dotted: str) -> str | None:
    """The distribution of the extension a dotted name belongs to, e.g. ``sphinx_exercise.nodes``."""
    for package, distribution in EXTENSIONS.items():
        if dotted == package or dotted.startswith(package + "."):
            return distribution
    return None


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _chain(node: ast.AST) -> tuple[str | None, list[str]]:
    """The name an expression starts from and the attributes it goes through, e.g.
    ``app.env.toc_fignumbers.setdefault(d, {})["x"]`` -> ("app", ["env", "toc_fignumbers", "setdefault"])."""
    attributes = []
    while True:
        if isinstance(node, ast.Attribute):
            attributes.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Name):
            return node.id, attributes[::-1]
        else:
            return None, attributes[::-1]


class Checker(ast.NodeVisitor):
    def __init__(self, local: set[str]) -> None:
        self.local = local
        self.imported: dict[
            str, str
        ] = {}  # name bound by an import -> the dotted name it stands for
        self.own: set[str] = set()  # names this source defines (functions, classes, attributes)
        self.found: list[str] = []
        # Its UNDOCUMENTED declaration: each distribution's reliances by name, and which were found.
        self.declared: dict[str, set[str]] = {}
        self.relied: set[tuple[str, str]] = set()
        self.declaration: ast.AST | None = None
        self.classes: list[str] = []  # the classes the visit is in, innermost last
        self.extensions: set[str] = set()  # the other extensions it imports or sets up

    # -- what the source defines and imports ----------------------------------------------------------
    def collect(self, tree: ast.AST) -> None:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.own.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if _chain(node)[0] in {"self", "cls"}:
                    self.own.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.own.add(node.id)
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "UNDOCUMENTED" for t in node.targets
            ):
                self.declaration = node
                self.declared = {
                    distribution: set(reliances)
                    for distribution, (_version, reliances) in ast.literal_eval(node.value).items()
                }
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "setup_extension":
                name = node.args[0] if node.args else None
                if isinstance(name, ast.Constant) and _extension(str(name.value)):
                    self.extensions.add(_extension(str(name.value)))
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if _extension(alias.name):
                        self.extensions.add(_extension(alias.name))
            elif isinstance(node, ast.ImportFrom) and _extension(node.module or ""):
                self.extensions.add(_extension(node.module or ""))
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.imported[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.imported[top] = top
            elif isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for alias in node.names:
                    self.imported[alias.asname or alias.name] = f"{module}.{alias.name}"

    def _is_local(self, dotted: str) -> bool:
        return dotted.startswith(".") or dotted.split(".")[0] in self.local

    def _dotted(self, node: ast.AST) -> str | None:
        """The dotted name an expression stands for through the imports, e.g. ``os.fork``."""
        root, attributes = _chain(node)
        if root not in self.imported:
            return None
        return ".".join([self.imported[root], *attributes])

    def _report(self, node: ast.AST, what: str) -> None:
        self.found.append(f"line {node.lineno}: {what}")

    def _undocumented(self, node: ast.AST, distribution: str, reliance: str, what: str) -> None:
        """Reliance on what ``distribution`` does not document: passes where the module's declaration
        names it (``UNDOCUMENTED[distribution][1][reliance]``)."""
        if reliance in self.declared.get(distribution, ()):
            self.relied.add((distribution, reliance))
        else:
            self._report(
                node, f"{what}, not declared in UNDOCUMENTED[{distribution!r}]: {reliance}"
            )

    def check_declaration(self) -> None:
        """A declared reliance that the module no longer has is reported: the list stays exact."""
        for distribution, reliances in self.declared.items():
            for reliance in sorted(reliances):
                if (distribution, reliance) not in self.relied:
                    self._report(
                        self.declaration,
                        f"declares {reliance} ({distribution}), which it does not rely on",
                    )

    def _check_extension(self, node: ast.AST, dotted: str) -> None:
        distribution = _extension(dotted)
        if distribution and not any(
            dotted == d or dotted.startswith(d + ".") for d in DOCUMENTED_EXTENSION
        ):
            self._undocumented(node, distribution, dotted, f"relies on {distribution}'s own names")

    def _check_priority(self, node: ast.AST, owner: str, value: ast.AST, what: str) -> None:
        """A priority in a module that uses other extensions orders it among theirs: it must be
        declared for one of them, by what it orders and its value (``ExerciseTitles priority 22``,
        ``config-inited handler priority 900``)."""
        reliance = f"{owner} priority {ast.unparse(value)}"
        declared = [d for d in sorted(self.extensions) if reliance in self.declared.get(d, ())]
        if declared:
            self.relied.add((declared[0], reliance))
        elif self.extensions:
            used = ", ".join(sorted(self.extensions))
            self._report(
                node,
                f"orders itself among {used}'s {what}, not declared in UNDOCUMENTED: {reliance}",
            )

    # -- the rules ------------------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(node, alias.name)
            self._check_extension(node, alias.name)
            self._check_spawning(node, alias.name)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = "." * node.level + (node.module or "")
        if module == "__future__":
            return
        self._check_module(node, module)
        for alias in node.names:
            self._check_extension(node, f"{module}.{alias.name}")
            if not self._is_local(module) and _private(alias.name):
                self._report(node, f"imports the underscore name {alias.name} from {module}")
            self._check_spawning(node, f"{module}.{alias.name}")
        self.generic_visit(node)

    def _check_module(self, node: ast.AST, module: str) -> None:
        if not self._is_local(module) and any(_private(part) for part in module.split(".")):
            self._report(node, f"imports the underscore module {module}")

    def _check_spawning(self, node: ast.AST, dotted: str | None) -> None:
        if dotted and dotted.startswith(SPAWNING):
            self._report(node, f"starts a process of its own ({dotted})")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Load):
            self._check_spawning(node, self._dotted(node))
            self._check_env_read(node, node.value, node.attr)
            dotted = self._dotted(node)
            if (
                dotted
                and not self._is_local(dotted)
                and node.attr.startswith(("visit_", "depart_"))
            ):
                self._undocumented(node, "sphinx", dotted, "reuses another package's writing")
        if _private(node.attr):
            self._check_private(node, node.value, node.attr)
        self.generic_visit(node)

    def _check_env_read(self, node: ast.AST, owner: ast.AST, name: str) -> None:
        """A read of ``name`` from Sphinx's environment (``env``, ``app.env``, ``self.env``)."""
        root, attributes = _chain(owner)
        if (attributes[-1:] or [root]) != ["env"]:
            return
        if name in DOCUMENTED_ENV or name.startswith("book_") or _private(name):
            return
        self._undocumented(node, "sphinx", f"env.{name}", "reads the environment")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in self.imported and not self._is_local(self.imported[node.id]):
            self._check_spawning(node, self.imported[node.id])

    def _check_private(self, node: ast.AST, owner: ast.AST, name: str) -> None:
        root, attributes = _chain(owner)
        if root in {"self", "cls"} and not attributes and name in self.own:
            return
        if root in self.imported and self._is_local(self.imported[root]):
            return
        self._report(node, f"uses the underscore attribute {name} of another package's object")

    def visit_Call(self, node: ast.Call) -> None:
        function = node.func
        if isinstance(function, ast.Name) and function.id in {"getattr", "hasattr"} and node.args:
            name = node.args[1] if len(node.args) > 1 else None
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                if _private(name.value):
                    self._check_private(node, node.args[0], name.value)
                self._check_env_read(node, node.args[0], name.value)
        if isinstance(function, ast.Name) and function.id in {"setattr", "delattr"} and node.args:
            name = node.args[1] if len(node.args) > 1 else None
            attribute = name.value if isinstance(name, ast.Constant) else None
            self._check_write(node, node.args[0], attribute, f"{function.id}()")
        if isinstance(function, ast.Attribute) and function.attr in MUTATORS:
            self._check_write(node, function.value, None, f".{function.attr}()")
        if isinstance(function, ast.Attribute) and function.attr == "connect":
            event = node.args[0] if node.args else None
            owner = f"{event.value if isinstance(event, ast.Constant) else '?'} handler"
            for keyword in node.keywords:
                if keyword.arg == "priority":
                    self._check_priority(node, owner, keyword.value, "event handlers (priority=)")
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.classes.append(node.name)
        self.generic_visit(node)
        self.classes.pop()

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._check_target(target)
            if isinstance(target, ast.Name) and target.id == "default_priority":
                owner = self.classes[-1] if self.classes else "?"
                self._check_priority(node, owner, node.value, "transforms (default_priority)")
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_target(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._check_target(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._check_target(target)
        self.generic_visit(node)

    def _check_target(self, target: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._check_target(element)
        elif isinstance(target, ast.Attribute):
            self._check_write(target, target.value, target.attr, "assignment")
        elif isinstance(target, ast.Subscript):
            self._check_write(target, target.value, None, "item assignment")

    def _check_write(self, node: ast.AST, owner: ast.AST, attribute: str | None, how: str) -> None:
        """A write (``how``) into ``owner`` (its ``attribute``, when one is named)."""
        root, attributes = _chain(owner)
        path = [*attributes, attribute] if attribute else attributes
        if root in self.imported:
            dotted = ".".join([self.imported[root], *path])
            if self._is_local(self.imported[root]):
                return
            if any(dotted == s or dotted.startswith(s + ".") for s in PUBLIC_STATE):
                return
            if "rcParams" in path:
                return
            self._report(node, f"{how} into another package's module or class: {dotted}")
            return
        # The objects Sphinx hands over: app.env / self.env / env, app.builder / builder, app.
        names = [root, *path]
        for k, name in enumerate(names):
            if name not in HANDED:
                continue
            rest = names[k + 1 :]
            if not rest:
                continue  # a write into the object itself goes through its attributes, below
            if name == "env":
                if rest[0].startswith("book_") or rest[0] == "config":
                    return
                self._report(node, f"{how} into Sphinx's environment: env.{rest[0]}")
                return
            if name == "app" and rest[0] in {"config", "env", "builder"}:
                continue  # app.config is configuration; app.env and app.builder are checked next
            if name in {"app", "builder"}:
                self._report(node, f"{how} into Sphinx's {name}: {name}.{rest[0]}")
                return


def problems(source: str, local: set[str] = LOCAL) -> list[str]:
    """What in ``source`` leaves public ground, one line per finding."""
    tree = ast.parse(source)
    checker = Checker(local)
    checker.collect(tree)
    checker.visit(tree)
    checker.check_declaration()
    return checker.found


# -- the book itself ----------------------------------------------------------------------------------
def test_the_scan_covers_the_configuration_the_extensions_and_the_book_side():
    names = {p.relative_to(ROOT).as_posix() for p in SCANNED}
    assert {"conf.py", "book/_ext/zh_search.py", "book/_ext/step_figure/directive.py"} <= names
    assert "book/chapter/fmt.py" in names
    assert {"chapter", "step_figure", "code_deps", "02_attention"} <= LOCAL


def test_every_file_stays_on_public_ground():
    found = {
        p.relative_to(ROOT).as_posix(): problems(p.read_text(encoding="utf-8")) for p in SCANNED
    }
    assert {name: lines for name, lines in found.items() if lines} == {}


def undocumented(source: str) -> dict:
    """A module's ``UNDOCUMENTED`` declaration, read without importing it."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "UNDOCUMENTED":
            return ast.literal_eval(node.value)
    return {}


def test_every_undocumented_reliance_is_pinned_to_the_installed_version():
    """Each declaration names the version it was checked against and the API that is missing; an
    upgrade fails here until the reliance is checked again on the new version."""
    declared = {
        p.relative_to(ROOT).as_posix(): undocumented(p.read_text(encoding="utf-8")) for p in SCANNED
    }
    declared = {name: d for name, d in declared.items() if d}
    assert {
        "book/_ext/depth_blocks.py",
        "book/_ext/book_exercises.py",
        "book/_ext/book_index.py",
    } <= (declared.keys())
    stale = {}
    for name, relied_on in declared.items():
        for distribution, (version, reliances) in relied_on.items():
            for reliance, missing in reliances.items():
                assert len(missing) > 40, (
                    f"{name}: say which {distribution} API {reliance} stands in for"
                )
            if importlib.metadata.version(distribution) != version:
                stale[f"{name}: {distribution}"] = (
                    version,
                    importlib.metadata.version(distribution),
                )
    assert stale == {}


# -- planted instances: each rule fails where it should -----------------------------------------------
PLANTED = {
    "private import": "from sphinx.search import _MINIFIED_JS_PATH\n",
    "private module": "import sphinx.search._stopwords.en\n",
    "private module, from": "from sphinx.search._stopwords.en import ENGLISH_STOPWORDS\n",
    "private attribute of an import": "import atexit\natexit._run_exitfuncs()\n",
    "private attribute of a handed object": (
        "def f(app):\n    app.builder._write_parallel(['a'], nproc=1)\n"
    ),
    "private attribute through getattr": "def f(node):\n    return getattr(node, '_document')\n",
    "private attribute on self, not the book's": (
        "class D:\n    def run(self):\n        return self._parse_options()\n"
    ),
    "class patch": (
        "from sphinxcontrib.bibtex.domain import BibtexDomain\n"
        "BibtexDomain.env_updated = lambda domain: []\n"
    ),
    "deep attribute of a class": (
        "import nbclient\nnbclient.NotebookClient.shutdown_kernel.default_value = 'immediate'\n"
    ),
    "module item": "from sphinx.search import languages\nlanguages['zh'] = object\n",
    "module function replaced": "from sphinx import builders\nbuilders.make_chunks = print\n",
    "mutating call on a module's mapping": (
        "import sphinx.search\nsphinx.search.languages.update(zh=object)\n"
    ),
    "setattr on a class": (
        "from pybtex.style.formatting import BaseStyle\nsetattr(BaseStyle, 'format_entry', print)\n"
    ),
    "environment attribute": (
        "def f(app, numbers):\n    app.env.toc_fignumbers.setdefault('a', {})['exercise'] = numbers\n"
    ),
    "environment attribute assigned": "def f(env):\n    env.toc_fignumbers = {}\n",
    "builder method replaced": "def f(app):\n    app.builder.write_documents = print\n",
    "fork": "import os\npid = os.fork()\n",
    "fork, imported by name": "from os import fork\nfork()\n",
    "multiprocessing": "import multiprocessing\n",
    "process pool": "from concurrent.futures import ProcessPoolExecutor\n",
    "subprocess": "import subprocess\nsubprocess.Popen(['python'])\n",
    "exec": "import os, sys\nos.execv(sys.executable, [sys.executable])\n",
    "another extension's nodes": "from sphinx_exercise.nodes import solution_node\n",
    "another extension's module": "import sphinx_design.dropdown\n",
    "another extension's transform order": (
        "from sphinx.transforms.post_transforms import SphinxPostTransform\n"
        "class T(SphinxPostTransform):\n    default_priority = 199\n"
        "def setup(app):\n    app.setup_extension('sphinx_design')\n    app.add_post_transform(T)\n"
    ),
    "another extension's handler order": (
        "def setup(app):\n    app.setup_extension('sphinx_exercise')\n"
        "    app.connect('config-inited', print, priority=900)\n"
    ),
    "undocumented environment attribute": "def f(env):\n    return env.toctree_includes['a']\n",
    "undocumented environment attribute of app": "def f(app):\n    return app.env.all_docs\n",
    "Sphinx's writing of a node reused": (
        "from sphinx.writers.latex import LaTeXTranslator\n"
        "def visit(self, node):\n    LaTeXTranslator.visit_index(self, node)\n"
    ),
    "a declaration for another distribution": (
        "UNDOCUMENTED = {'sphinx': ('9.0.4', {'sphinx_exercise.nodes.solution_node': 'x'})}\n"
        "from sphinx_exercise.nodes import solution_node\n"
    ),
    "a reliance the declaration does not name": (
        "UNDOCUMENTED = {'sphinx-exercise': ('1.2.1', {'sphinx_exercise.nodes.solution_node': 'x'})}\n"
        "from sphinx_exercise.nodes import solution_node, exercise_node\n"
    ),
    "a priority the declaration names with another value": (
        "UNDOCUMENTED = {'sphinx-exercise': ('1.2.1', {'T priority 22': 'x'})}\n"
        "class T:\n    default_priority = 23\n"
        "def setup(app):\n    app.setup_extension('sphinx_exercise')\n"
    ),
    "a declared reliance the module no longer has": (
        "UNDOCUMENTED = {'sphinx': ('9.0.4', {'env.toctree_includes': 'x'})}\n"
        "def f(env):\n    return env.found_docs\n"
    ),
    "undocumented environment attribute through getattr": (
        "def f(env):\n    return getattr(env, 'toctree_includes', {})\n"
    ),
}


def test_every_planted_instance_is_found():
    assert [name for name, source in PLANTED.items() if problems(source) == []] == []


ALLOWED = {
    "configuration value": "def f(app, config):\n    config.numfig = False\n    app.config.x = 1\n",
    "the book's own environment data": (
        "def f(app, env):\n    env.book_numbers = {}\n    app.env.book_pages['a'] = 1\n"
    ),
    "process environment and import state": (
        "import os, sys\nos.environ['A'] = '1'\nsys.path.insert(0, 'x')\ndel sys.modules['m']\n"
    ),
    "matplotlib settings": "import matplotlib\nmatplotlib.rcParams['font.size'] = 9\n",
    "own underscore names": (
        "from chapter import fmt\n"
        "class D:\n    def _call(self):\n        return fmt._SUPERSCRIPT\n"
        "    def run(self):\n        return self._call()\n"
    ),
    "public API calls": (
        "def setup(app):\n    app.add_search_language(object)\n    app.connect('x', print)\n"
    ),
    "own module state": "_DONE = {}\n_DONE['a'] = 1\n",
    "relative import": "from .nodes import _private_helper\n",
    "an extension's documented names": (
        "from myst_nb import glue\nimport sphinxcontrib.bibtex.plugin\n"
        "sphinxcontrib.bibtex.plugin.find_plugin('a', 'b')\n"
    ),
    "documented environment": (
        "def f(app, env):\n    return env.found_docs, env.titles['a'], app.env.docname,"
        " env.book_numbers\n"
    ),
    "a priority among Sphinx's own transforms": (
        "from sphinx.transforms.post_transforms import SphinxPostTransform\n"
        "class T(SphinxPostTransform):\n    default_priority = 500\n"
    ),
    "declared reliance": (
        "UNDOCUMENTED = {\n"
        "    'sphinx-exercise': (\n"
        "        '1.2.1',\n"
        "        {'sphinx_exercise.nodes.solution_node': 'x', 'T priority 22': 'x',"
        " 'config-inited handler priority 900': 'x'},\n"
        "    ),\n"
        "    'sphinx': ('9.0.4', {'env.toctree_includes': 'x'}),\n"
        "}\n"
        "from sphinx_exercise.nodes import solution_node\n"
        "class T:\n    default_priority = 22\n"
        "def setup(app):\n    app.setup_extension('sphinx_exercise')\n"
        "    app.connect('config-inited', print, priority=900)\n"
        "def f(env):\n    return env.toctree_includes\n"
    ),
}


def test_public_ground_is_not_reported():
    found = {name: problems(source) for name, source in ALLOWED.items()}
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_a_finding_names_the_line_and_what_it_touches():
    found = problems("import os\n\nx = 1\nnbclient = None\nos.fork()\n")
    assert found == ["line 5: starts a process of its own (os.fork)"]
