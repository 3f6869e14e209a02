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
    "sphinx-mathjax-offline",  # MathJax copied into _static: maths without the network
    "code_deps",               # a page is re-read (and re-run) when a file it uses in code/ changes
    "zh_search",               # Chinese search that works in Sphinx 9.0
]
exclude_patterns = ["_ext", "**/.ipynb_checkpoints", "jupyter_execute"]

# Where the teaching code lives; code_deps watches it, pages import from it.
code_deps_dir = str(ROOT / "code")

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
html_static_path: list[str] = []
html_theme_options = {
    "home_page_in_toc": True,
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
}
html_last_updated_fmt = None
html_show_sourcelink = False
# jieba segments Chinese for the search index; the word list keeps the chapter's terms whole.
html_search_language = "zh"
html_search_options = {"dict": str(ROOT / "book" / "_ext" / "zh_terms.txt")}
# Result summaries are fetched page by page, which a browser refuses for pages opened from disk.
html_show_search_summary = False
