"""``textpile serve --request-workers N``: N server processes on one listening socket.

One Python process searches on one core at a time (the rerank is Python). With N > 1,
uvicorn's own supervisor (``uvicorn.supervisors.Multiprocess``, what ``uvicorn
--workers N`` runs: it starts the processes, restarts one that dies or stops answering
its health check, and stops them all on SIGINT/SIGTERM) runs N worker processes that
accept on the socket bound by ``textpile serve``; the kernel hands each connection to
one of them. Each worker builds its own Datasette (:func:`textpile.web.app.build_datasette`,
from the picklable arguments in :class:`WorkerConfig`) when it starts. What they share
is the database files' pages in the operating system's page cache (each maps the
files read-only); each worker adds its interpreter, Datasette and its caches (the
README states the measured size).
"""

from __future__ import annotations

import socket

import uvicorn
from uvicorn.supervisors import Multiprocess


class WorkerConfig(uvicorn.Config):
    """A uvicorn configuration whose application each worker process builds when it
    loads it: ``build_datasette(**build).app()``. Picklable (the supervisor sends it to
    each worker it spawns)."""

    def __init__(self, build: dict, **options) -> None:
        super().__init__(app="textpile.web.app:build_datasette", **options)
        self.build = dict(build)

    def load(self) -> None:
        from textpile.web.app import build_datasette

        if not self.loaded:
            self.app = build_datasette(**self.build).app()
        super().load()


def serve_workers(build: dict, sock: socket.socket, workers: int) -> None:
    """Serve ``build_datasette(**build)`` with ``workers`` processes accepting on ``sock``
    (bound and listening) until SIGINT or SIGTERM."""
    config = WorkerConfig(build, workers=workers, log_level="warning")
    Multiprocess(config, sockets=[sock]).run()
