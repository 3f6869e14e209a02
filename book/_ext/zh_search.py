"""Chinese search that works in Sphinx 9.0, from a page opened from disk.

Sphinx 9.0's Chinese search language ships the English stemmer script but then assigns
``window.Stemmer = ChineseStemmer``, a name that does not exist, so the search page never
finishes. This extension registers a subclass whose script names the stemmer it ships.
Chinese terms are segmented by jieba (without it no Chinese text is indexed at all); the
word list in ``zh_terms.txt`` keeps the chapter's own terms (掩码, 可见性表, …) whole.
"""

from __future__ import annotations

import logging

import jieba
from sphinx.application import Sphinx
from sphinx.search import _MINIFIED_JS_PATH, languages
from sphinx.search.zh import SearchChinese

# jieba logs its model loading at DEBUG level on stderr; the build output stays clean.
jieba.setLogLevel(logging.WARNING)


class SearchChineseFixed(SearchChinese):
    """Chinese segmentation; the page's stemmer is the English one the index was stemmed with."""

    js_stemmer_rawcode = ""  # use js_stemmer_code below instead of Sphinx's broken assembly
    js_stemmer_code = "\n".join((
        (_MINIFIED_JS_PATH / "base-stemmer.js").read_text(encoding="utf-8"),
        (_MINIFIED_JS_PATH / "english-stemmer.js").read_text(encoding="utf-8"),
        "window.Stemmer = EnglishStemmer;",
    ))


def setup(app: Sphinx) -> dict:
    languages["zh"] = SearchChineseFixed
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
