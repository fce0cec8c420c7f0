"""Test web servers on 127.0.0.1: scripted sites and real documentation folders.

``SiteServer`` serves a dict of routes (path with query -> ``Response`` or a callable
returning one) on its own port, so that two servers are two origins. Every request is
logged with its monotonic arrival time for politeness checks.
"""

from __future__ import annotations

import http.server
import importlib.util
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Response:
    """A scripted HTTP response. ``body`` str is encoded as UTF-8. ``hang_up``: the
    server closes the connection without answering (what a crawler sees as a failed read,
    a possible fluke)."""

    status: int = 200
    body: bytes | str = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html; charset=utf-8"})
    delay_s: float = 0.0
    hang_up: bool = False


@dataclass
class LoggedRequest:
    """A request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    monotonic: float


class _QuietServer(http.server.ThreadingHTTPServer):
    """A threaded server that says nothing when a client goes away mid-answer (a crawler
    killed or timed out on purpose by a test); other handler errors are printed."""

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class SiteServer:
    """A threaded HTTP server on 127.0.0.1 serving ``routes``; use as a context manager.

    ``routes`` maps a request target (``/a?b=1``) to a Response or a callable taking the
    LoggedRequest and returning one. Unknown targets get a 404. ``base_url`` ends without /.
    """

    def __init__(self, routes: dict[str, Response | Callable[[LoggedRequest], Response]] | None = None) -> None:
        self.routes = dict(routes or {})
        self.log: list[LoggedRequest] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self, send_body: bool) -> None:
                req = LoggedRequest(self.command, self.path, dict(self.headers.items()), time.monotonic())
                server.log.append(req)
                route = server.routes.get(self.path)
                if route is None:
                    resp = Response(404, "<html><body>not found</body></html>")
                elif callable(route):
                    resp = route(req)
                else:
                    resp = route
                if resp.delay_s:
                    time.sleep(resp.delay_s)
                if resp.hang_up:
                    self.close_connection = True
                    return
                body = resp.body.encode("utf-8") if isinstance(resp.body, str) else resp.body
                self.send_response(resp.status)
                for k, v in resp.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if send_body:
                    self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                self._serve(True)

            def do_HEAD(self) -> None:  # noqa: N802
                self._serve(False)

            def log_message(self, *args) -> None:
                pass

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> "SiteServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def requests_for(self, path: str) -> list[LoggedRequest]:
        """The logged requests whose target equals ``path``."""
        return [r for r in self.log if r.path == path]


class DirectoryServer:
    """Serve a folder of real files (a documentation site) on 127.0.0.1; context manager."""

    def __init__(self, root: Path) -> None:
        root = Path(root)

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **kw):
                super().__init__(*a, directory=str(root), **kw)

            def log_message(self, *args) -> None:
                pass

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> "DirectoryServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


SQLITE_DOC = Path("/usr/share/doc/sqlite3-doc")
#: Debian 12's sqlite3-doc installs its HTML here (the package's own doc folder holds only
#: changelog and copyright).
SQLITE_DOC_HTML = Path("/usr/share/doc/sqlite3")


#: Standard library modules whose import has side effects (a browser, a screen, a
#: terminal mode, a virtualenv) or that are packages of tests: not documented by the fallback.
_PYDOC_LEFT_OUT = frozenset({
    "antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "ensurepip", "venv", "lib2to3",
    "pydoc_data", "test", "webbrowser", "pty", "tty", "curses", "readline", "dbm", "multiprocessing",
    "concurrent", "asyncio", "unittest", "distutils"})


def real_docs_root(tmp_dir: Path) -> Path:
    """A folder of real HTML documentation not written by us.

    Debian's sqlite3-doc when installed (scripts/test installs it), else pydoc's HTML
    for the standard library's top-level modules that this Python has (about 190 pages;
    those with side effects on import or for a screen left out), written into
    ``tmp_dir``: enough pages that the tests crawling 150 requests of it find them.
    """
    for folder in (SQLITE_DOC, SQLITE_DOC_HTML):
        if (folder / "index.html").exists():
            return folder
    out = Path(tmp_dir) / "pydoc-html"
    out.mkdir(parents=True, exist_ok=True)
    modules = sorted(m for m in sys.stdlib_module_names
                     if not m.startswith("_") and m not in _PYDOC_LEFT_OUT and importlib.util.find_spec(m) is not None)
    subprocess.run([sys.executable, "-m", "pydoc", "-w", *modules], cwd=out, check=True,
                   capture_output=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    links = "".join(f'<li><a href="{m}.html">{m}</a></li>' for m in modules)
    (out / "index.html").write_text(f"<html><head><title>Python modules</title></head><body><ul>{links}</ul></body></html>")
    return out


__all__ = ["DirectoryServer", "LoggedRequest", "Response", "SiteServer", "real_docs_root", "shutil"]
