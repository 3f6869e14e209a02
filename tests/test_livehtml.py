"""`make livehtml`: serves the book on 127.0.0.1, rebuilds when a teaching file changes, and stops.

The server runs in a small copy of the project (tests/bench.py's mini book: the book's conf.py,
extensions and code/, and a page that runs code/02_attention.py), through the Makefile as an author
types it, with the project's .venv linked in. Nothing is left running: the process group is stopped at the
end, and the test checks that the port is closed again.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from bench import make_mini_project
from conftest import ROOT, load_module

pytestmark = pytest.mark.build


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.read().decode("utf-8")
    except (OSError, http.client.HTTPException):
        # not listening yet, or (once, under load) something that is not our server answered first
        return None


def wait_for(condition, seconds: float, what: str, log) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    pytest.fail(f"{what} within {seconds} s; server log:\n{log()}")


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a socket listening on ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local = line.split()[1]
            state = line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


def test_livehtml_serves_on_loopback_rebuilds_on_a_code_edit_and_stops(tmp_path):
    project = make_mini_project(tmp_path)
    for name in ("Makefile", "requirements.txt"):
        shutil.copy2(
            ROOT / name, project / name
        )  # copy2 keeps the age: make sees .venv as up to date
    (project / ".venv").symlink_to(ROOT / ".venv")
    port = free_port()
    log_file = tmp_path / "livehtml.log"
    with open(log_file, "w") as log:
        server = subprocess.Popen(
            ["make", "livehtml", f"LIVEPORT={port}"],
            cwd=project,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def read_log():
        return log_file.read_text(errors="replace")[-3000:]

    url = f"http://127.0.0.1:{port}/uses_code.html"
    try:
        wait_for(lambda: fetch(url) is not None, 180, "no page served", read_log)
        first = fetch(url)
        title = re.search(
            r"^# (.+)$", (project / "book/uses_code.md").read_text(encoding="utf-8"), re.M
        ).group(1)
        assert title in first
        assert listening_addresses(port) == {"0100007F"}, "listens beyond 127.0.0.1"

        # A teaching file changes: the demo's V. The output the page prints follows.
        code = project / "code" / "02_attention.py"
        source = code.read_text(encoding="utf-8")
        assert "DEMO_V = [[10.0], [20.0], [30.0]]" in source
        code.write_text(
            source.replace("DEMO_V = [[10.0], [20.0], [30.0]]", "DEMO_V = [[10.0], [20.0], [70.0]]")
        )
        new_output = json.dumps(load_module(code).run_demo()["输出"][-1][0])
        assert new_output not in first
        wait_for(
            lambda: new_output in (fetch(url) or ""),
            180,
            "the edit did not reach the served page",
            read_log,
        )
    finally:
        os.killpg(server.pid, signal.SIGINT)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
            pytest.fail("make livehtml did not stop on Ctrl+C (SIGINT)")
    assert fetch(url) is None and listening_addresses(port) == set()
