"""Chinese search that works in Sphinx 9.0, from a page opened from disk, and indexes quickly.

Sphinx 9.0's Chinese search language ships the English stemmer script but then assigns
``window.Stemmer = ChineseStemmer``, a name that does not exist, so the search page never
finishes. This extension registers a subclass whose script names the stemmer it ships.
Chinese terms are segmented by jieba (without it no Chinese text is indexed at all); the
word list in ``zh_terms.txt`` keeps the chapter's own terms (掩码, 可见性表, …) whole.

Speed: Sphinx indexes every page in its main process, one page after another, while the pages are
written; that serial work is what an HTML build waits for at the end. So the subclass remembers what it
has segmented and stemmed (the same short texts, numbers and words recur on every page), and jieba's
dictionary, about a second to load, is loaded in a thread while the pages are being read (the main
process only waits then), and not at all by a build that reads and writes no page.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import jieba
from sphinx.application import Sphinx
from sphinx.search import _MINIFIED_JS_PATH, languages
from sphinx.search.zh import JIEBA_DEFAULT_DICT, SearchChinese

# jieba logs its model loading at DEBUG level on stderr; the build output stays clean.
jieba.setLogLevel(logging.WARNING)

_LOADED: dict[
    str, threading.Thread
] = {}  # the word list's path -> the thread that loads jieba with it


# Loading holds the interpreter lock for about a second, during which the main process could not start a
# reading process; the readers are started at once after ``env-before-read-docs``, so loading waits a little.
DELAY_SECONDS = 0.5


def _load(words: str, delay: float) -> None:
    time.sleep(delay)
    jieba.initialize()
    if words and Path(words).is_file():  # as Sphinx: a word list that is not there is skipped
        jieba.load_userdict(words)


def preload(words: str, delay: float = 0.0) -> None:
    """Start loading jieba's dictionary and the word list ``words`` in the background (once)."""
    if words not in _LOADED:
        _LOADED[words] = threading.Thread(
            target=_load, args=(words, delay), name="jieba-load", daemon=True
        )
        _LOADED[words].start()


class SearchChineseFixed(SearchChinese):
    """Chinese segmentation; the page's stemmer is the English one the index was stemmed with."""

    js_stemmer_rawcode = ""  # use js_stemmer_code below instead of Sphinx's broken assembly
    js_stemmer_code = "\n".join(
        (
            (_MINIFIED_JS_PATH / "base-stemmer.js").read_text(encoding="utf-8"),
            (_MINIFIED_JS_PATH / "english-stemmer.js").read_text(encoding="utf-8"),
            "window.Stemmer = EnglishStemmer;",
        )
    )

    def __init__(self, options: dict[str, str]) -> None:
        # The parent loads jieba here; this one waits until the first text is segmented.
        self._words = options.get("dict", JIEBA_DEFAULT_DICT)
        super().__init__({**options, "dict": ""})
        self._split: dict[str, tuple[list[str], list[str]]] = {}
        self._stem: dict[str, str] = {}

    def split(self, input: str) -> list[str]:
        if input not in self._split:
            if not self._split:  # the first text: the dictionary must be loaded by now
                preload(self._words)
                _LOADED[self._words].join()
            chinese = list(jieba.cut_for_search(input))
            self._split[input] = (
                chinese,
                [term.strip() for term in self.latin1_letters.findall(input)],
            )
        chinese, latin1 = self._split[input]
        self.latin_terms.update(latin1)
        return chinese + latin1

    def stem(self, word: str) -> str:
        lower = word.lower()
        if lower not in self._stem:
            self._stem[lower] = self.stemmer.stemWord(lower)
        stemmed = self._stem[lower]
        # As the parent: a Latin term of three or more letters that stemming would cut below three stays.
        if len(word) >= 3 > len(stemmed) and word in self.latin_terms:
            return lower
        return stemmed


def _preload(app: Sphinx, env, docnames: list[str]) -> None:
    if docnames and app.builder.format == "html" and app.config.html_search_language == "zh":
        preload(app.config.html_search_options.get("dict", JIEBA_DEFAULT_DICT), DELAY_SECONDS)


def setup(app: Sphinx) -> dict:
    languages["zh"] = SearchChineseFixed
    app.connect("env-before-read-docs", _preload)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
