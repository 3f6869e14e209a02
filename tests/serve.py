"""Serve the built book on 127.0.0.1 (``make serve``), so that its examples run in the browser.

A page opened from disk shows everything but cannot run an example: the browser refuses module scripts
and the fetches of Python's runtime for pages from ``file://``. Served, it can. Only 127.0.0.1 listens;
``.mjs`` goes out as JavaScript and ``.wasm`` as ``application/wasm`` (which the browser requires to
compile it while it downloads), whatever the system's MIME table says.

``python tests/serve.py _build/html --port 8000``; the tests serve the book with ``serve()``.
"""

from __future__ import annotations

import argparse
import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HOST = "127.0.0.1"
TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".css": "text/css",
    ".json": "application/json",
    ".wasm": "application/wasm",
    ".zip": "application/zip",
    ".svg": "image/svg+xml",
    ".woff": "font/woff",
    ".ipynb": "application/x-ipynb+json",
}


class BookHandler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **TYPES}


class QuietHandler(BookHandler):
    def log_message(self, format: str, *args) -> None:  # the tests read no request log
        pass


def serve(folder: Path, port: int = 0, quiet: bool = True) -> ThreadingHTTPServer:
    """Start serving ``folder`` on 127.0.0.1 in a thread; ``server.server_port`` is the port."""
    handler = functools.partial(QuietHandler if quiet else BookHandler, directory=str(folder))
    server = ThreadingHTTPServer((HOST, port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    handler = functools.partial(BookHandler, directory=str(args.folder))
    with ThreadingHTTPServer((HOST, args.port), handler) as server:
        print(f"http://{HOST}:{args.port}/  (Ctrl+C stops it)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
