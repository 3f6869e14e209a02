# 《手算注意力与因果掩码》 — build, test and benchmark the book.
# Every target first makes sure .venv exists and is not older than requirements.txt.

PYTHON      ?= python3
VENV        := .venv
BIN         := $(VENV)/bin
STAMP       := $(VENV)/.installed
SPHINXBUILD := $(BIN)/sphinx-build
SPHINXOPTS  ?= -W --keep-going -j auto
SOURCEDIR   := book
BUILDDIR    := _build
# conf.py stays at the top; the sources live in book/.
SPHINX       = $(SPHINXBUILD) -M $@ $(SOURCEDIR) $(BUILDDIR) -c . $(SPHINXOPTS)

.DEFAULT_GOAL := help
.PHONY: help venv html pdf test bench clean livehtml crosscheck pyodide serve

help: venv  ## list the targets
	@echo "make html    build the HTML book into $(BUILDDIR)/html (open index.html from disk)"
	@echo "make pdf     build the Chinese PDF into $(BUILDDIR)/latex with XeLaTeX (checks TeX first, see README)"
	@echo "make test    run every test: pytest code/ book/chapter/ tests/ in three worker processes"
	@echo "make bench   time clean, no-change and code-edit builds against a one-page floor book"
	@echo "make crosscheck  check the chapter against real PyTorch, JAX and Keras (own venv, large download)"
	@echo "make livehtml  serve the HTML on http://127.0.0.1:$(LIVEPORT)/, rebuilt and reloaded on every edit"
	@echo "make serve   build the HTML and serve it on http://127.0.0.1:$(SERVEPORT)/, where its examples run"
	@echo "make pyodide  fetch the pinned Python for the browser (npm pack) into $(PYODIDE_DIR)"
	@echo "make clean   remove $(BUILDDIR)"
	@echo "make venv    create or refresh $(VENV) from requirements.txt"
	@echo "make <name>  any other Sphinx builder, e.g. make latex, make text, make linkcheck:"
	@$(SPHINXBUILD) -M help $(SOURCEDIR) $(BUILDDIR) -c . | sed -n 's/^  /             /p'

venv: $(STAMP)

$(STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

# The Python that runs the pages' examples in the browser: npm's pyodide, pinned (version and sha512)
# in book/_ext/run_in_browser/__init__.py. Fetched once with npm into the venv, where every build finds
# it, copies of the project too; every HTML build checks its hash and stops if it is missing or differs.
PYODIDE_VERSION := $(shell sed -n 's/^VERSION = "\(.*\)"$$/\1/p' book/_ext/run_in_browser/__init__.py)
PYODIDE_DIR := $(VENV)/pyodide
PYODIDE     := $(PYODIDE_DIR)/pyodide-$(PYODIDE_VERSION).tgz
pyodide: $(PYODIDE)

$(PYODIDE): | $(STAMP)
	@mkdir -p $(PYODIDE_DIR)
	npm pack --silent pyodide@$(PYODIDE_VERSION) --pack-destination $(PYODIDE_DIR)

html: venv $(PYODIDE)
	$(SPHINX)

# The built book on http://127.0.0.1:$(SERVEPORT)/ (127.0.0.1 only): from disk (file://) a browser shows
# every page but runs no example. SERVEPORT=8001 make serve picks another port; Ctrl+C stops it.
SERVEPORT ?= 8000
serve: html
	$(BIN)/python tests/serve.py $(BUILDDIR)/html --port $(SERVEPORT)

# The PDF: check the TeX tools and fonts first (one message naming the Debian packages if any is
# missing), build with Sphinx's latexpdf (XeLaTeX through latexmk), then fail if the LaTeX log
# reports a missing glyph or an undefined reference. LATEXMKOPTS= shows LaTeX's full output.
pdf: venv
	@$(BIN)/python tests/texcheck.py tools
	LATEXMKOPTS=-silent $(SPHINXBUILD) -M latexpdf $(SOURCEDIR) $(BUILDDIR) -c . $(SPHINXOPTS)
	@$(BIN)/python tests/texcheck.py log $(BUILDDIR)/latex

# Three worker processes (pytest-xdist): many tests wait on a browser or a kernel, so three keep two cores
# busy. They build the book and the PDF once between them (tests/conftest.py: once_per_run); the PDF is
# typeset in the background while the other tests run. TEST_WORKERS=0 runs everything in one process.
# Bytecode, pytest's rewritten test modules included, is cached under _build/pycache even where the
# environment sets PYTHONDONTWRITEBYTECODE: otherwise every worker compiles every test module again on
# every run (some seven seconds of CPU each). Nothing is written beside the sources.
TEST_WORKERS ?= 3
test: venv $(PYODIDE)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(abspath $(BUILDDIR))/pycache \
	$(BIN)/python -m pytest -p xdist.plugin -n $(TEST_WORKERS) code/ book/chapter/ tests/

bench: venv $(PYODIDE)
	$(BIN)/python tests/bench.py

# For authors: rebuild when a page (book/) or a teaching file (code/) changes and reload the browser.
# Served on 127.0.0.1 only; LIVEPORT=8001 make livehtml picks another port. Stop it with Ctrl+C.
LIVEPORT ?= 8000
livehtml: venv $(PYODIDE)
	$(BIN)/sphinx-autobuild $(SOURCEDIR) $(BUILDDIR)/livehtml -c . $(SPHINXOPTS) \
	  --host 127.0.0.1 --port $(LIVEPORT) --watch code --ignore "*/__pycache__/*"

# The chapter against the real libraries (PyTorch, JAX, Keras): their own venv, which `make html`
# and `make test` never need. See tests/crosscheck/.
CROSSVENV := .venv-crosscheck
$(CROSSVENV)/.installed: tests/crosscheck/requirements.txt
	$(PYTHON) -m venv $(CROSSVENV)
	$(CROSSVENV)/bin/python -m pip install --quiet --disable-pip-version-check -r tests/crosscheck/requirements.txt
	@touch $@

crosscheck: $(CROSSVENV)/.installed
	KERAS_BACKEND=jax JAX_ENABLE_X64=1 $(CROSSVENV)/bin/python -m pytest tests/crosscheck -p no:cacheprovider

clean:
	rm -rf $(BUILDDIR)

# Files make must never try to rebuild through the catch-all below.
Makefile requirements.txt tests/crosscheck/requirements.txt: ;

# Catch-all: hand any other target to Sphinx's make mode (latex, text, linkcheck, ...).
%: venv
	$(SPHINX)
