"""Sphinx configuration for 《手算注意力与因果掩码》.

Build with ``make html`` (sources in ``book/``, this file stays at the top: ``-c .``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))

# -- Project ----------------------------------------------------------------------------------------
project = "手算注意力与因果掩码"
author = "《手算注意力与因果掩码》编写组"
copyright = "2026, " + author
language = "zh_CN"

extensions = [
    "myst_nb",                 # MyST pages, executed at build time (includes myst_parser)
    "mathjax_local",           # MathJax (sphinx-mathjax-offline's copy) in _static: maths without the network
    "code_deps",               # a page is re-read (and re-run) when a file it uses in code/ changes
    "zh_search",               # Chinese search that works in Sphinx 9.0
    "step_figure",             # figures whose frames are computed by code/ (the F12 player)
    "pdf_chapters",            # PDF: chapters numbered by their folder (ch02 is 第2章), pages as sections
    "sphinxcontrib.bibtex",    # {cite} and the bibliography from book/references.bib
    "page_refs",               # HTML: each page that cites lists its own references at its end
    "book_index",              # index entries for the functions a page shows; pinyin-sorted PDF index
    "sphinx_copybutton",       # copy buttons that leave out prompts and output
    "book_exercises",          # 练习 2.3.1 (sphinx-exercise), solutions hidden in HTML, 练习答案 in the PDF
    "read_order",              # with -j auto, each reading process gets about the same work
]
exclude_patterns = ["_ext", "**/.ipynb_checkpoints", "jupyter_execute"]

# Where the teaching code lives; code_deps watches it, pages import from it.
code_deps_dir = str(ROOT / "code")

# -- References -----------------------------------------------------------------------------------
# One bibliography (book/references.md) that every {cite} links to; in the PDF it is the chapter
# 参考文献. Citations read "(Vaswani et al., 2017)"; an unknown key is a warning, so -W fails the build.
bibtex_bibfiles = [str(ROOT / "book" / "references.bib")]
bibtex_default_style = "plain"
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
# The pages' "python3" kernel is book/_ext/kernels/python3: the ordinary ipykernel, told to keep
# its start-up notices (e.g. about its local TCP transport) out of the build output.
os.environ["JUPYTER_PATH"] = os.pathsep.join(
    filter(None, [str(ROOT / "book" / "_ext"), os.environ.get("JUPYTER_PATH")])
)

# -- HTML -------------------------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
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
_LATEX_FONTS = r"""
\setmainfont{FreeSerif}[Extension=.otf, UprightFont=*, ItalicFont=*Italic,
  BoldFont=*Bold, BoldItalicFont=*BoldItalic]
\setsansfont{FreeSans}[Extension=.otf, UprightFont=*, ItalicFont=*Oblique,
  BoldFont=*Bold, BoldItalicFont=*BoldOblique]
\setmonofont{Noto Sans Mono CJK SC}[Scale=0.9, UprightFont=*, ItalicFont=*,
  BoldFont=* Bold, BoldItalicFont=* Bold]
\setCJKmainfont{Noto Serif CJK SC}[UprightFont=*, ItalicFont=*, BoldFont=* Bold, BoldItalicFont=* Bold]
\setCJKsansfont{Noto Sans CJK SC}[UprightFont=*, ItalicFont=*, BoldFont=* Bold, BoldItalicFont=* Bold]
\setCJKmonofont{Noto Sans Mono CJK SC}[Scale=0.9, UprightFont=*, ItalicFont=*,
  BoldFont=* Bold, BoldItalicFont=* Bold]
"""
_LATEX_PREAMBLE = r"""
\makeatletter
% A character the current font lacks is reported in the log; `make pdf` fails on it.
\tracinglostchars=2
\usepackage{newunicodechar}
% ✗ is in FreeSerif alone (not in FreeSans, the mono or the CJK fonts): take it from there wherever it
% stands, e.g. in the bold sans cells of the F12 tables, made bold there. (Sphinx writes ✓ as \checkmark.)
\newfontfamily\bookballotfont{FreeSerif}[Extension=.otf, UprightFont=*, ItalicFont=*,
  BoldFont=*, BoldItalicFont=*, BoldFeatures={FakeBold=2}, BoldItalicFeatures={FakeBold=2}]
\newunicodechar{✗}{{\bookballotfont ✗}}
% The book writes 「为什么需要 · 怎样实现」 and 「1 / 5 · 处理……」 with spaces around the dot; xeCJK
% would treat · as Chinese punctuation and drop them. As a Latin character it keeps them, as in the
% HTML, and it is drawn from Noto Serif CJK SC, whose dot is larger than FreeSerif's.
\xeCJKDeclareCharClass{Default}{"00B7}
\newfontfamily\bookdotfont{Noto Serif CJK SC}[UprightFont=*, ItalicFont=*,
  BoldFont=* Bold, BoldItalicFont=* Bold]
\newunicodechar{·}{{\bookdotfont ·}}
% Chinese names for LaTeX's own words (babel runs \captionsenglish at \begin{document}).
\addto\captionsenglish{%
  \renewcommand{\contentsname}{目录}%
  \renewcommand{\chaptername}{第}%
  \renewcommand{\appendixname}{附录}%
  \renewcommand{\bibname}{参考文献}%
}
% Chapter heads: 「第2章」 over the title, not "CHAPTER 2".
\titleformat{\chapter}[display]{\py@HeaderFamily\raggedright}%
  {\Large\py@TitleColor 第\thechapter 章}{1.5ex}%
  {\Huge\py@TitleColor}[\vspace{1ex}{\color{black!40}\titlerule}]
\titlespacing*{\chapter}{0pt}{0pt}{3em}
% Room for three-digit page numbers in 目录.
\renewcommand{\@pnumwidth}{2em}
% Running footers say 「第 2 章　标题」: Sphinx's page style writes \@chapapp, the number, \@chappos and
% the title with spaces between (as for Japanese); xeCJK drops a space between two Chinese characters,
% so the space after 章 is a \quad.
\def\@chappos{章\quad\ignorespaces}
% Appendices (术语表, 参考文献; book/_ext/pdf_chapters.py puts \appendix before them): 「附录 A」 over
% the title, 「附录 A　术语表」 in the running footer and in 目录, instead of 「第A章」.
% (The .toc switches the label itself when it reaches the appendices: no \titlecontents in the body.)
\newcommand{\booktocappendix}{\renewcommand{\booktoclabel}[1]{附录 ##1}}
\g@addto@macro\appendix{%
  \titleformat{\chapter}[display]{\py@HeaderFamily\raggedright}%
    {\Large\py@TitleColor 附录 \thechapter}{1.5ex}%
    {\Huge\py@TitleColor}[\vspace{1ex}{\color{black!40}\titlerule}]%
  \def\@chappos{\quad\ignorespaces}%
  \addtocontents{toc}{\protect\booktocappendix}}
% Captions in the Chinese way: 「表 1　可见性表……」, a space after the number instead of a colon.
\usepackage[labelsep=quad]{caption}
% Table of contents: 「第2章 标题」 for chapters; unnumbered chapters (前言) by their title.
\usepackage{titletoc}
\newcommand{\booktoclabel}[1]{第#1章}
\titlecontents{chapter}[0pt]{\addvspace{1.2em}\py@HeaderFamily}%
  {\booktoclabel{\thecontentslabel}\quad}{}{\hfill\contentspage}
\makeatother
"""
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
