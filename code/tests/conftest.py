"""Hypothesis settings for the teaching code's property tests.

No per-example deadline: the machine that builds the book may be busy, and a slow example is not a
wrong one. The number of examples stays as each test sets it.
"""

from hypothesis import settings

settings.register_profile("book", deadline=None)
settings.load_profile("book")
