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
import re
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


def _module(name):
    return importlib.import_module(name)


# Inputs that once passed without a word (a silent wrong answer, a hang, a meaningless number):
# each is now a ValueError whose message names the argument.
ONCE_SILENT = [
    (
        lambda: _module("02_attention").unguarded_attention(
            [[0.0]], [[0.0]], [[1.0]], [[True]], fill=5.0
        ),
        "fill 必须是负数或 −∞",
    ),
    (
        lambda: _module("02_backprop").gradient_check(
            [[1.0]], [[1.0]], [[1.0]], [[1.0]], causal=False, eps=1e6
        ),
        "eps 必须是正的有限数，且不大于 0.1",
    ),
    (
        lambda: _module("02_costs").kv_cache_bytes(_module("02_costs").MODELS[0], 32768),
        "context=32768 超过了 Llama-2-7B 的最大位置数 4096",
    ),
    (
        lambda: _module("02_training").use_time(
            _module("02_training").init_params(seed=0), "causal", seed=1, prompt=100
        ),
        "prompt 不能超过 8",
    ),
    (lambda: _module("02_exercises_scaling").copied_row(copies=10**9), "copies 不能超过"),
    (lambda: _module("02_exercises_costs").window_rows(contexts=[]), "contexts 不能为空"),
    (lambda: _module("02_exercises_training").floor_answers([]), "cases 不能为空"),
    (lambda: _module("02_exercises_training").guess_answers(targets=[]), "targets 不能为空"),
    (
        lambda: _module("02_exercises_training").future_weight([[0.5, float("nan")], [0.0, 1.0]]),
        "weights[0][1] 必须是有限的数",
    ),
]


@pytest.mark.parametrize("call, words", ONCE_SILENT)
def test_inputs_that_once_passed_silently_are_refused_by_name(call, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        call()
