"""The embedded default: Python's own documentation server as a site to crawl.

``python -m pydoc -p PORT`` serves the documentation of the standard library of the
Python that runs textpile: real content, not written by us, on any machine with Python
and without internet. :class:`PydocServer` starts such a server on 127.0.0.1 and stops it
again: pydoc's pages through :mod:`textpile.demo.docserver`, which answers pydoc's error
pages ("Pydoc: Error": unknown paths, /robots.txt, modules of another platform) with 404
(so a robots.txt means "no rules", RFC 9309). It runs with ``-S``, so that only the
standard library is listed, not the virtual environment's packages, and in an empty
temporary folder: pydoc puts its working folder first on ``sys.path`` and imports every
module it documents, so started in a checkout it would list and import the project's own
folders.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import threading
import time
from importlib import resources
from pathlib import Path

from textpile.errors import TextpileError
from textpile.folders import remove_folder

#: The port the shipped demo configuration's seed names.
DEFAULT_PORT = 7464


def demo_config_text(port: int = DEFAULT_PORT) -> str:
    """The shipped demo crawl configuration (pydoc-demo.toml) with its seed on ``port``."""
    text = resources.files("textpile.demo").joinpath("pydoc-demo.toml").read_text("utf-8")
    return text.replace(f"127.0.0.1:{DEFAULT_PORT}", f"127.0.0.1:{int(port)}")


def write_demo_config(folder: Path, port: int = DEFAULT_PORT) -> Path:
    """Write the demo configuration for ``port`` to ``folder/pydoc-demo.toml``; return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pydoc-demo.toml"
    path.write_text(demo_config_text(port), "utf-8")
    return path


def check_port_free(port: int) -> None:
    """Refuse a pydoc port that cannot be served on 127.0.0.1 now (in use, or not allowed).

    Raises:
        TextpileError: naming ``--port`` and the reason, e.g. "--port 7464: 127.0.0.1:7464
            is in use (Address already in use); stop what uses it or pass another --port".
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as pydoc's server binds
        try:
            sock.bind(("127.0.0.1", int(port)))
        except OSError as exc:
            raise TextpileError(f"--port {port}: 127.0.0.1:{port} is in use ({exc.strerror}); stop what uses it "
                                "or pass another --port") from exc


class PydocServer:
    """Python's documentation server on 127.0.0.1:PORT as a context manager: pydoc's pages
    through :mod:`textpile.demo.docserver` (pydoc's error pages answer 404).

    ``base_url`` is ``http://127.0.0.1:PORT/`` once started.

    Raises:
        TextpileError: the server did not report ready within ``timeout_s`` seconds
            (for example because the port is in use); the message quotes pydoc's output.
    """

    def __init__(self, port: int = DEFAULT_PORT, *, python: str | None = None, timeout_s: float = 20.0) -> None:
        self.port = int(port)
        self.python = python or sys.executable
        self.timeout_s = timeout_s
        self.base_url = f"http://127.0.0.1:{self.port}/"
        self._proc: subprocess.Popen | None = None
        self._output: list[str] = []
        self._folder: str | None = None

    def __enter__(self) -> "PydocServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        """Start pydoc (in an empty temporary folder) and wait until it says it is ready."""
        self._folder = tempfile.mkdtemp(prefix="textpile-pydoc-")
        source = resources.files("textpile.demo").joinpath("docserver.py").read_text("utf-8")
        self._proc = subprocess.Popen(
            [self.python, "-S", "-c", source, "127.0.0.1", str(self.port)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, bufsize=1, cwd=self._folder,
        )
        ready = threading.Event()

        def read() -> None:
            for line in self._proc.stdout:
                self._output.append(line.rstrip())
                if "Server ready at" in line:
                    ready.set()

        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + self.timeout_s
        while not ready.is_set():
            if time.monotonic() > deadline or self._proc.poll() is not None or any(
                "Errno" in line or "Error" in line for line in self._output
            ):
                said = " / ".join(self._output) or "nothing"
                self.stop()
                raise TextpileError(
                    f"pydoc documentation server on 127.0.0.1:{self.port} did not start (it said: {said}); "
                    f"is the port in use? Stop what uses it or pass --port"
                )
            ready.wait(0.1)

    @property
    def folder(self) -> str | None:
        """The working folder of the running pydoc (None when stopped)."""
        return self._folder

    def stop(self) -> None:
        """Ask pydoc to quit (its ``q`` command), then terminate it if it lingers; remove its folder."""
        proc, self._proc = self._proc, None
        try:
            self._quit(proc)
        finally:
            folder, self._folder = self._folder, None
            if folder is not None:
                remove_folder(folder, ignore_errors=True)

    @staticmethod
    def _quit(proc: subprocess.Popen | None) -> None:
        if proc is None or proc.poll() is not None:
            return
        try:
            proc.stdin.write("q\n")
            proc.stdin.flush()
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
