"""Sphinx configuration for 《手算注意力与因果掩码》.

Build with ``make html`` (sources in ``book/``, this file stays at the top: ``-c .``).
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent

# Python's garbage collector and a build's many objects (documented gc API only). Every build, a
# no-change one too, starts by unpickling Sphinx's environment (a few MB: sphinx-exercise keeps a copy
# of each exercise with its page), and ends when the process exits. At Python's default threshold
# (700 new objects) the collector runs about three hundred times during the load, some of them over
# everything loaded so far (0.2-0.3 s here); at 10,000 about twenty times (0.1 s). At exit, Python
# would collect and free every object once more (0.5-0.8 s of a 3-second no-change rebuild here), so
# the build's own objects are frozen when it has finished (see setup below): the process ends
# without visiting them. Nothing the build does depends on when its objects are collected.
gc.set_threshold(10_000, 10, 10)
sys.path.insert(0, str(ROOT / "book" / "_ext"))

# -- Project ----------------------------------------------------------------------------------------
project = "手算注意力与因果掩码"
author = "《手算注意力与因果掩码》编写组"
copyright = "2026, " + author
language = "zh_CN"

# The exercise prompts show their examples as they run: a `# doctest:` directive stays in a pycon block.
trim_doctest_flags = False

extensions = [
    "myst_nb",  # MyST pages, executed at build time (includes myst_parser)
    "mathjax_local",  # the MathJax files the pages load, in _static: maths without the network
    "code_deps",  # a page is re-read (and re-run) when a file it uses in code/ changes
    "zh_search",  # Chinese search that works in Sphinx 9.0 (shim for sphinx-doc/sphinx#14229)
    "step_figure",  # figures whose frames are computed by code/ (the F12 player)
    "pdf_chapters",  # PDF: chapters numbered by their folder (ch02 is 第2章), pages as sections
    "sphinxcontrib.bibtex",  # {cite} and the bibliography from book/references.bib
    "page_refs",  # HTML: each page that cites lists its own references at its end
    "book_index",  # index entries for the functions a page shows; pinyin-sorted PDF index
    "sphinx_copybutton",  # copy buttons that leave out prompts and output
    "book_exercises",  # 练习 2.3.1 (sphinx-exercise), solutions hidden in HTML, 练习答案 in the PDF
    "depth_blocks",  # 深入：… blocks (sphinx-design's dropdown), folded in HTML, boxed in the PDF
    "take_home",  # each page's zip of files and its notebook, made from code/ at build time
    "typed_inputs",  # {input}`(1, 0) <module:NAME>`: an input typed in the page, checked against its constant
    "run_in_browser",  # HTML: the core's examples run in the reader's browser (Pyodide, `make pyodide`)
]
exclude_patterns = ["_ext", "chapter", "latex", "**/.ipynb_checkpoints", "jupyter_execute"]

# Two sides: code/ is the reader's library (the teaching files, 02_*.py); book/chapter/ is the book
# side that writes sentences, tables, figure frames and printed numbers from it. code_deps watches
# both, so an edit to either re-runs exactly the pages that use it. The pages' kernels and the
# step-figure directive import both by name: `importlib.import_module("02_attention")`,
# `from chapter import fmt, mask`. This is the one place that puts them on the path.
code_deps_dir = str(ROOT / "code")
code_deps_package = str(ROOT / "book" / "chapter")
os.environ["PYTHONPATH"] = os.pathsep.join(
    filter(None, [str(ROOT / "code"), str(ROOT / "book"), os.environ.get("PYTHONPATH")])
)

# -- References -----------------------------------------------------------------------------------
# One bibliography (book/references.md) that every {cite} links to; in the PDF it is the chapter
# 参考文献. Citations read "(Vaswani et al., 2017)"; an unknown key is a warning, so -W fails the build.
bibtex_bibfiles = [str(ROOT / "book" / "references.bib")]
# The style "book" is pybtex's plain style, each entry formatted once (book/_ext/page_refs.py).
bibtex_default_style = "book"
bibtex_reference_style = "author_year"

# -- Copy buttons -----------------------------------------------------------------------------------
# A copied doctest pastes into Python: the >>> and ... prompts and the output lines stay behind;
# a shell line copies without its "$ ". Only code blocks get a button, not the printed output of a
# cell (MyST-NB marks those with the class "output").
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True
copybutton_remove_prompts = True
copybutton_selector = "div:not(.output) > div.highlight pre"

# -- Exercises ------------------------------------------------------------------------------------
# The button of a hidden solution (sphinx-togglebutton) says what it does, in the book's language.
togglebutton_hint = "显示解答"
togglebutton_hint_hide = "收起解答"

# -- MyST -------------------------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# -- Execution --------------------------------------------------------------------------------------
# Execute every page that Sphinx (re-)reads. code_deps makes Sphinx re-read exactly the pages whose
# code changed, so nothing is stale and nothing runs twice; a cache keyed on the cells alone would
# miss a change in code/.
nb_execution_mode = "force"
# A failing cell is reported as a warning that names the page, shows the cell and the error with its
# traceback; -W in the Makefile turns it into a failed build. (Raising instead ends in a Sphinx crash
# report that names only the page.)
nb_execution_raise_on_error = False
nb_execution_show_tb = True
nb_execution_timeout = 120
nb_merge_streams = True
# The pages' "python3" kernel is book/_ext/kernels/python3: the plain `python -m ipykernel_launcher`
# with three of IPython's documented options (its kernel.json). Log level ERROR: a plain kernel warns on
# standard error, into the build's output, that it talks over unencrypted local TCP. No history: every
# page runs in a fresh kernel (two at a time with -j), none with a history worth an SQLite file. No
# colours: the traceback of a failing cell, which the build reports, reads as plain text.
os.environ["JUPYTER_PATH"] = os.pathsep.join(
    filter(None, [str(ROOT / "book" / "_ext"), os.environ.get("JUPYTER_PATH")])
)

# -- HTML -------------------------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
# MathJax from _static (book/_ext/mathjax_local.py ships this file and the fonts it loads).
mathjax_path = "mathjax/tex-chtml.js"
html_title = project
html_static_path = [str(ROOT / "book" / "_static")]
# Screen-reader names for the sidebar's fold toggles and for the buttons that open a solution.
html_js_files = ["sidebar-labels.js", "solution-labels.js"]
html_css_files = ["book.css"]  # long words in lists and references wrap on narrow screens
html_theme_options = {
    "home_page_in_toc": True,
    "show_toc_level": 2,
    "show_navbar_depth": 2,  # the chapter's pages stay unfolded under its opening in the sidebar
    "use_download_button": False,
    "use_fullscreen_button": False,
    # A reference's link shows its address, not the theme's shortened "owner/repository" form.
    "shorten_urls": False,
}
html_last_updated_fmt = None
# Without a default the theme logs "Got invalid theme mode" in the console of every page.
html_context = {"default_mode": "auto"}
html_show_sourcelink = False
# jieba segments Chinese for the search index; the word list keeps the chapter's terms whole.
html_search_language = "zh"
html_search_options = {"dict": str(ROOT / "book" / "_ext" / "zh_terms.txt")}
# Result summaries are fetched page by page, which a browser refuses for pages opened from disk.
html_show_search_summary = False

# -- LaTeX ------------------------------------------------------------------------------------------
# `make pdf` typesets the book with XeLaTeX (xeCJK, as Sphinx does for zh_CN) into
# _build/latex/attention-mask-by-hand.pdf. Every line of chrome is Chinese: title page, 目录, 第2章.
latex_engine = "xelatex"
latex_documents = [("index", "attention-mask-by-hand.tex", project, author, "manual")]
latex_show_urls = "no"
latex_domain_indices = False
# Fonts on purpose (Debian: fonts-noto-cjk, fonts-freefont-otf): Noto Serif/Sans CJK SC for Chinese;
# FreeSerif/FreeSans for Latin letters, digits and the symbols the book uses (✓ ✗ − ∞ √); and
# Noto Sans Mono CJK SC for code, whose Chinese characters are exactly two columns wide, so that
# code with Chinese strings and comments stays aligned. Upright replaces the italics these fonts lack
# (Pygments sets comments in italics).
# The preamble (fonts, Chinese chapter heads, captions, table of contents) is LaTeX, so it lives in a
# .tex file of its own: book/latex/preamble.tex, with the fonts first.
_LATEX_FONTS, _LATEX_PREAMBLE = (
    (ROOT / "book" / "latex" / "preamble.tex")
    .read_text(encoding="utf-8")
    .split("% -- preamble --\n", 1)
)
latex_elements = {
    "papersize": "a4paper",
    "pointsize": "11pt",
    "geometry": r"\usepackage[headheight=14pt]{geometry}",  # room for the running header at 11pt
    "cmappkg": "",  # cmap is for pdflatex; XeLaTeX writes the Unicode maps itself
    "fontpkg": _LATEX_FONTS,
    "fncychap": "",  # chapter heads come from \titleformat in the preamble
    "preamble": _LATEX_PREAMBLE,
    # Long code lines wrap (at spaces and punctuation, or anywhere if they must) instead of
    # running off the page; a continuation mark shows where a line was broken.
    "sphinxsetup": "verbatimwrapslines=true, verbatimforcewraps=true, verbatimhintsturnover=true",
}


# -- Events -----------------------------------------------------------------------------------------
def exit_without_teardown(app, exception) -> None:
    """After the build (Sphinx's build-finished event), the process only exits: gc.freeze() moves every
    object to the collector's permanent generation, so the exit skips the last collections over them."""
    gc.freeze()


def setup(app) -> None:
    app.connect("build-finished", exit_without_teardown)
