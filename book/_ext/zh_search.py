"""Chinese search that works in Sphinx 9.0: the smallest shim for an upstream bug.

Sphinx's Chinese search language segments the pages with jieba and stems Latin words with the English
stemmer, whose script it ships in ``language_data.js``. Sphinx 9.0 then ends that script with
``window.Stemmer = ChineseStemmer;``, naming the class after the language, and no script defines
``ChineseStemmer``: the search page throws a ReferenceError and never lists a result.
Upstream report: https://github.com/sphinx-doc/sphinx/issues/14229 (fixed on Sphinx's main branch by
https://github.com/sphinx-doc/sphinx/pull/14416, which names the class after the stemmer's file).

The shim is Sphinx's own Chinese language under the name of the stemmer it ships, registered through
``app.add_search_language``. ``tests/test_search.py`` fails once the pinned Sphinx writes a stemmer name
its script defines; then this file goes (and ``zh_search`` from ``extensions`` in conf.py). The word list
in ``zh_terms.txt`` (conf.py's ``html_search_options``) keeps the chapter's own terms whole.
"""

from __future__ import annotations

import logging

import jieba
from sphinx.application import Sphinx
from sphinx.search.zh import SearchChinese

# jieba logs its dictionary loading on standard error; the build output stays clean.
jieba.setLogLevel(logging.WARNING)


class SearchChineseEnglishStemmer(SearchChinese):
    """Sphinx's Chinese search; its script assigns the English stemmer it ships (the build log
    therefore reads "English (code: zh)" where it names the search language)."""

    language_name = "English"


def setup(app: Sphinx) -> dict:
    app.add_search_language(SearchChineseEnglishStemmer)
    return {"version": "2.0", "parallel_read_safe": True, "parallel_write_safe": True}
