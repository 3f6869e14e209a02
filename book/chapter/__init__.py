"""The book side of chapter 2: turns what ``code/02_*.py`` computes into the book's facts, tables, figure
frames and printed numbers; one module per page and one formatter, ``fmt``. It imports ``code/`` (on the
path by ``conf.py`` and ``.pytest.ini``); ``code/`` never imports it. Its tests live in ``tests/``."""
