"""Every public function of every teaching file answers bad input with a ValueError, quickly.

The valid calls come from each function's own ``>>>`` examples. Each call is then repeated with
one argument at a time replaced by each of ``reference.BAD`` (None, a string, NaN, ±∞, −1, 0,
True, an empty list, ragged matrices, 10¹², …): the function must either accept it and return, or
raise ``ValueError``; any other exception (TypeError, IndexError, ZeroDivisionError, MemoryError…)
is a crash, and a call that takes longer than a few seconds is a hang. Whether the message names
the argument is each file's own test.
"""

from __future__ import annotations

import ast
import doctest
import functools
import importlib
import inspect
from pathlib import Path

import pytest
from reference import answer, fuzz_failures, public_functions

CODE = Path(__file__).resolve().parent.parent
# Files that need PyTorch (*_torch.py, the rule in .pytest.ini) are fuzzed by make crosscheck.
FILES = sorted(p.stem for p in CODE.glob("02_*.py") if not p.stem.endswith("_torch"))


@functools.cache  # both tests below read the same calls
def _calls(module) -> list[tuple[str, object, list, dict]]:
    """(name, function, args, kwargs) of every call of a public function in its own doctests."""
    found = []
    # self_test, run_demo, answers: no arguments; check: raising AssertionError is its whole job.
    for name in sorted(public_functions(module) - {"self_test", "run_demo", "answers", "check"}):
        function = getattr(module, name)
        namespace = dict(vars(module))
        for example in doctest.DocTestParser().get_examples(inspect.getdoc(function) or ""):
            tree = ast.parse(example.source)
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id == name
                ):
                    try:
                        args = [
                            eval(compile(ast.Expression(a), "<doctest>", "eval"), namespace)
                            for a in node.args
                        ]
                        kwargs = {
                            k.arg: eval(
                                compile(ast.Expression(k.value), "<doctest>", "eval"), namespace
                            )
                            for k in node.keywords
                            if k.arg
                        }
                    except Exception:
                        continue  # a name defined inside the expression (a comprehension)
                    found.append((name, function, args, kwargs))
            try:  # later examples may use names that this one defines
                exec(compile(example.source, "<doctest>", "exec"), namespace)
            except Exception:
                pass
    return found


@pytest.mark.parametrize("file", FILES)
def test_bad_input_is_a_value_error_never_a_crash_or_a_hang(file):
    crashes = []
    for name, function, args, kwargs in _calls(importlib.import_module(file)):
        got = answer(function, tuple(args), kwargs)  # shared with the fuzz's valid call
        if got is not None and got[0] == "ValueError":
            continue  # an example of an error (a traceback), not a valid call
        if got is not None:
            crashes.append(f"{name}: the example's own call: {got[0]}: {got[1]}")
            continue
        crashes += [
            f"{name}: {failure}"
            for failure in fuzz_failures(function, kwargs, args=tuple(args), names=False)
        ]
    assert not crashes, f"{len(crashes)} crashes in {file}:\n" + "\n".join(crashes[:40])


def test_the_fuzz_finds_the_calls_in_the_examples():
    # The net above is only as wide as the calls it finds: every file's doctests give it some.
    for file in FILES:
        if file.startswith("02_exercises_"):
            continue
        assert len(_calls(importlib.import_module(file))) >= 5, file
