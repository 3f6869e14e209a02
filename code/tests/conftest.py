"""How pytest treats the tests of code/ (read by `pytest code/` and by `make test`)."""

from __future__ import annotations


def pytest_configure(config) -> None:
    """Import Hypothesis as installed, not with pytest's assertion rewriting.

    pytest rewrites the asserts of every package that ships a pytest plugin, Hypothesis included: about
    a hundred modules, compiled again on every run where Python writes no bytecode (PYTHONDONTWRITEBYTECODE),
    some three seconds of `pytest code/`. Hypothesis's own asserts are not these tests' asserts; the tests'
    files are still rewritten. The hook's list of marked packages is pytest's own (AssertionRewritingHook).
    """
    state = getattr(config, "_assertstate", None)
    marked = getattr(getattr(state, "hook", None), "_must_rewrite", None)
    if isinstance(marked, set) and "hypothesis" in marked:
        marked.discard("hypothesis")
        state.hook._marked_for_rewrite_cache.clear()
