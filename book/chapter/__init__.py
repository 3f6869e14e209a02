"""The book side of chapter 2: everything that writes the book from the teaching code's results.

``code/02_*.py`` is the reader's library: the mechanisms, validated, with doctests. This package
turns what they compute into the book: sentences, figure frames and explore states, tables, and
the printed form of every number. One module per page (``mask``, ``scaling``, ``multihead``,
``rope``, ``backprop``, ``training``, ``costs``, ``tensors``) and one shared formatting module, ``fmt``.

It imports ``code/`` (``importlib.import_module("02_attention")``, with ``code/`` on the path:
``conf.py`` puts it there for the page kernels, ``.pytest.ini`` for pytest); ``code/`` never imports
it. Its tests live in ``tests/``.
"""
