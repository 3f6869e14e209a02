"""What the records of the reader's PyTorch files (code/*_torch.py) are checked by, in one place.

Each such file prints what it saw as JSON, and code/<name>.json keeps that printout for the book (whose
build never imports torch). Here the file is run again, and the record must be what it prints now: a
float counts as the same when the page prints it the same (``fmt.difference``), or, where a test names
a rounding level, when both are nonzero and below it (a float64 gap between two computations of the same
thing: its last digits change with the machine's BLAS and threads). The pinned versions come
from tests/crosscheck/requirements.txt; code/tests/test_bad_input.py's fuzz, which `make test` leaves to
this venv for these files, runs on each of them.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

from chapter import fmt

ROOT = Path(__file__).resolve().parents[2]


def differences(seen, stored, path: str = "", rounding: float = 0.0) -> list[str]:
    """Every key path where the two records differ; floats compare as the page prints them, and two
    nonzero floats below ``rounding`` (a rounding-level gap) count as the same."""
    if isinstance(seen, dict) and isinstance(stored, dict):
        return [
            d
            for key in sorted(set(seen) | set(stored), key=str)
            for d in differences(seen.get(key), stored.get(key), f"{path}/{key}", rounding)
        ]
    if isinstance(seen, list) and isinstance(stored, list) and len(seen) == len(stored):
        return [
            d
            for i, (a, b) in enumerate(zip(seen, stored))
            for d in differences(a, b, f"{path}/{i}", rounding)
        ]
    if isinstance(seen, float) and isinstance(stored, float):
        same = fmt.difference(seen) == fmt.difference(stored) or (
            0 < abs(seen) < rounding and 0 < abs(stored) < rounding
        )
    else:
        same = type(seen) is type(stored) and seen == stored
    return [] if same else [f"{path}: stored {stored!r}, seen {seen!r}"]


def what_it_prints(name: str, env: dict | None = None) -> dict:
    """What ``code/<name>.py`` prints when run from the project's root (its main runs its doctests
    first)."""
    run = subprocess.run(
        [sys.executable, str(ROOT / "code" / f"{name}.py")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


def assert_the_record_is(name: str, seen: dict, rounding: float = 0.0) -> None:
    """``code/<name>.json`` is what the file printed (``seen``), up to rounding-level gaps below
    ``rounding``; else the message says how to rewrite it."""
    record = ROOT / "code" / f"{name}.json"
    changed = differences(seen, json.loads(record.read_text(encoding="utf-8")), rounding=rounding)
    assert not changed, (
        f"code/{name}.py prints something else than code/{name}.json:\n  "
        + "\n  ".join(changed)
        + "\nlook at the change, then rewrite the record with: "
        + f".venv-crosscheck/bin/python code/{name}.py > code/{name}.json"
    )


def pins() -> dict[str, str]:
    """The versions tests/crosscheck/requirements.txt pins, by package name."""
    requirements = (ROOT / "tests" / "crosscheck" / "requirements.txt").read_text()
    return dict(re.findall(r"^([\w-]+)==([\w.+]+)", requirements, re.M))


def assert_bad_input_is_a_value_error(name: str, at_least: int) -> None:
    """code/tests/test_bad_input.py's fuzz on ``code/<name>.py``: it finds at least ``at_least`` calls
    in the file's examples, and each answers bad input with a ValueError."""
    sys.path.insert(0, str(ROOT / "code" / "tests"))
    spec = importlib.util.spec_from_file_location(
        "bad_input", ROOT / "code" / "tests" / "test_bad_input.py"
    )
    bad_input = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bad_input)
    assert len(bad_input._calls(importlib.import_module(name))) >= at_least
    bad_input.test_bad_input_is_a_value_error_never_a_crash_or_a_hang(name)
