"""ASGI middleware that keeps one visitor's SQL from holding up everyone's, and refuses
methods a read-only instance has no use for.

* :func:`sql_admission`: SQL exploration (every request under the summary database's
  route: ad-hoc ``?sql=``, canned queries, table and row pages) runs on Datasette's
  ``num_sql_threads`` threads. At most that many such requests are admitted at once; one
  more is refused at once with 503 and ``Retry-After`` (the SQL time limit, in seconds)
  instead of queueing behind them. Each admitted query ends within the SQL time limit
  (SQLite is interrupted between instructions, and the one function it cannot interrupt
  that way, ``printf``, is bounded: :mod:`textpile.web.printf`), so a request ends
  within its time limit plus a small margin, or is refused up front. Under the
  database's route (table, row and query pages) the time limit bounds the whole
  request, not each query: a table page runs several (rows, count, facets), each given
  what is left of the request's time
  (:data:`textpile.web.explorer_sql.REQUEST_DEADLINE`; one that would start later is
  Datasette's "SQL query took too long", which a table page shows for a count or facet
  and answers with a 400 for its rows). The search pages run on their own threads and
  are never counted.
* :func:`read_only_methods`: the instance serves its database read-only and has no
  writable canned queries, so POST, PUT, PATCH and DELETE get 405 with ``Allow: GET,
  HEAD`` (Datasette 0.65 answers a POST to a canned query with a 500).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable

from textpile.web.explorer_sql import REQUEST_DEADLINE

ALLOWED_METHODS = ("GET", "HEAD", "OPTIONS")

READ_ONLY_MESSAGE = ("This textpile instance is read-only: search, SQL exploration and canned queries "
                     "answer GET requests only.")
BUSY_MESSAGE = ("SQL exploration is busy: {running} queries are running, as many as it runs at once; "
                "try again in {retry} s.")


async def _respond(send, status: int, message: str, json_body: bool, headers: list[tuple[bytes, bytes]]) -> None:
    if json_body:
        body = json.dumps({"ok": False, "error": message, "status": status}).encode("utf-8")
        kind = b"application/json; charset=utf-8"
    else:
        body = (message + "\n").encode("utf-8")
        kind = b"text/plain; charset=utf-8"
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode("ascii")), *headers]})
    await send({"type": "http.response.body", "body": body})


def read_only_methods(app, applies: Callable[[], bool]):
    """Wrap ASGI ``app``: while ``applies()`` (the instance serves a summary database),
    HTTP methods other than GET, HEAD and OPTIONS get 405 (JSON for ``.json`` paths) with
    ``Allow: GET, HEAD``; the request never reaches ``app``."""

    async def wrapped(scope, receive, send):
        if (scope.get("type") == "http" and scope.get("method", "GET").upper() not in ALLOWED_METHODS
                and applies()):
            await _respond(send, 405, READ_ONLY_MESSAGE, ".json" in scope.get("path", ""),
                           [(b"allow", b"GET, HEAD")])
            return
        await app(scope, receive, send)

    return wrapped


def sql_admission(app, route: Callable[[], str | None], permits: Callable[[], int],
                  time_limit_ms: Callable[[], int]):
    """Wrap ASGI ``app``: at most ``permits()`` requests under ``/<route()>`` (the served
    database's route; None: nothing is counted) run at once; another is answered 503
    with ``Retry-After`` = ``time_limit_ms()`` rounded up to seconds (JSON for ``.json``
    paths). Each one admitted under ``/<route()>/`` (a table, row or query page) has
    ``time_limit_ms()`` for all of its SQL (:data:`~textpile.web.explorer_sql.REQUEST_DEADLINE`
    while ``app`` handles it); the database page itself keeps the limit per query. The callables are asked on each request, so settings and a swapped
    database apply at once. The count lives in the returned wrapper (one per app)."""
    running = [0]

    def counted(path: str) -> bool:
        name = route()
        if not name:
            return False
        prefix = "/" + name
        return path == prefix or path.startswith((prefix + "/", prefix + "."))

    async def wrapped(scope, receive, send):
        if scope.get("type") != "http" or not counted(scope.get("path", "")):
            await app(scope, receive, send)
            return
        if running[0] >= max(1, permits()):
            retry = max(1, math.ceil(time_limit_ms() / 1000))
            await _respond(send, 503, BUSY_MESSAGE.format(running=running[0], retry=retry),
                           ".json" in scope["path"], [(b"retry-after", str(retry).encode("ascii"))])
            return
        running[0] += 1
        # Pages under the database (tables, rows, queries) have the limit for all their
        # SQL; the database page, whose introspection of every table is no visitor's SQL,
        # keeps it per query.
        whole = scope["path"].startswith("/" + (route() or "") + "/")
        deadline = REQUEST_DEADLINE.set(time.monotonic() + time_limit_ms() / 1000 if whole else None)
        try:
            await app(scope, receive, send)
        finally:
            REQUEST_DEADLINE.reset(deadline)
            running[0] -= 1

    return wrapped
