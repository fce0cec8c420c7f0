"""Error responses of the textpile Datasette instance, without console noise.

Datasette's default ``handle_exception`` prints a ``rich`` traceback with local
variables for every error, including a browser's 404 for ``/robots.txt`` or a refused
SQL statement. Here client errors (Datasette's ``NotFound``/``Forbidden``/
``BadRequest``, a ``DatasetteError`` below 500, a SQL query cut off by the time limit)
get Datasette's usual error page or JSON with one INFO log line, and server errors get
the same page plus one ERROR log record with a plain traceback. SQL the request sent
that SQLite refuses as too big (``sqlite3.DataError``) or as more than one statement
(``sqlite3.ProgrammingError``), and Datasette's "Cannot sort table by" (a 500 in
Datasette), are client errors: 400.
"""

from __future__ import annotations

import logging
import re
import sqlite3

from datasette.database import QueryInterrupted
from datasette.utils import add_cors_headers
from datasette.utils.asgi import Base400, Response
from datasette.version import __version__ as datasette_version
from datasette.views.base import DatasetteError
from markupsafe import Markup

LOG = logging.getLogger("textpile.web")

TIME_LIMIT_MESSAGE = "SQL query took too long (the time limit is the sql_time_limit_ms setting)."


def error_details(exception: BaseException) -> tuple[int, str, str | None, dict]:
    """Return ``(status, message, title, extra JSON fields)`` for ``exception``.

    ``message`` is a ``Markup`` when Datasette marked it as HTML. Anything that is not
    one of Datasette's own error types is a 500 with ``str(exception)``.
    """
    if isinstance(exception, Base400):
        return exception.status, str(exception.args[0]) if exception.args else "", None, {}
    if isinstance(exception, DatasetteError) and exception.status == 500 and str(exception.message).startswith(
        "Cannot sort table by "
    ):
        return 400, exception.message, None, {}
    if isinstance(exception, DatasetteError) and isinstance(exception.__context__, QueryInterrupted):
        exception = exception.__context__  # Datasette 1.0's query page raises its own error for it
    if isinstance(exception, DatasetteError):
        message = Markup(exception.message) if exception.message_is_html else exception.message
        return exception.status, message, exception.title, dict(exception.error_dict)
    if isinstance(exception, QueryInterrupted):
        return 400, TIME_LIMIT_MESSAGE, "SQL Interrupted", {}
    if isinstance(exception, (sqlite3.DataError, sqlite3.ProgrammingError)):
        # Caused by the SQL the request sent: a value or result over the size limits
        # (textpile.web.limits), or more than one statement in ?_where=.
        return 400, str(exception), "Invalid SQL", {}
    return 500, str(exception), None, {}


async def error_response(datasette, request, exception: BaseException) -> Response:
    """Return Datasette's error page (or JSON for ``.json`` paths) for ``exception``, and log it.

    Rendering follows ``datasette.handle_exception`` (templates ``<status>.html`` then
    ``error.html``; JSON ``{"ok": false, "error", "status", "title", ...}``). Logging:
    one INFO line for a client error, one ERROR record with traceback otherwise.
    """
    status, message, title, info = error_details(exception)
    # Datasette 1.0 gives an HTML message its plain text for JSON (and logs)
    plain = (getattr(exception, "plain_message", None) if isinstance(message, Markup) else None) or message
    where = f"{request.method} {request.path}"
    short = " ".join(re.sub(r"<[^>]*>", "", str(plain)).split())[:200]
    if status < 500:
        LOG.info("%s %s: %s", status, where, short)
    elif isinstance(exception, DatasetteError):
        LOG.error("%s %s: %s", status, where, short)
    else:
        LOG.error("%s %s: %s", status, where, type(exception).__name__,
                  exc_info=(type(exception), exception, exception.__traceback__))
    info.update({"ok": False, "error": message, "status": status, "title": title})
    headers: dict = {}
    if datasette.cors:
        add_cors_headers(headers)
    if request.path.split("?")[0].endswith(".json"):
        return Response.json(dict(info, error=str(plain)), status=status, headers=headers)
    html = await datasette.render_template([f"{status}.html", "error.html"],
                                           dict(info, datasette_version=datasette_version), request=request)
    return Response.html(html, status=status, headers=headers)


def is_datasette_default_handler(result) -> bool:
    """True for what Datasette's own (rich-traceback printing) ``handle_exception`` returned."""
    return getattr(result, "__module__", None) == "datasette.handle_exception"
