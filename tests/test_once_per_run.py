"""The test run's builds are shared between pytest-xdist workers (conftest.once_per_run)."""

from __future__ import annotations

from conftest import once_per_run


def test_a_build_runs_once_per_run_and_again_in_the_next_run(tmp_path, monkeypatch):
    calls = []

    def build():
        calls.append(1)
        (tmp_path / "out").mkdir(exist_ok=True)
        return tmp_path / "out" / f"book{len(calls)}.pdf"

    monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", "run-a")
    first = once_per_run(tmp_path / "out", build)
    assert (
        once_per_run(tmp_path / "out", build) == first
    )  # another worker of the same run reuses it
    assert len(calls) == 1
    monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", "run-b")
    assert once_per_run(tmp_path / "out", build) != first  # a new run builds afresh
    assert len(calls) == 2


def test_without_xdist_every_call_builds(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_TESTRUNUID", raising=False)
    calls = []
    for _ in range(2):
        once_per_run(tmp_path / "out", lambda: calls.append(1) or tmp_path / "out")
    assert len(calls) == 2
