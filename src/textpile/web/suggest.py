"""``/suggest?q=``: search as you type (:mod:`textpile.search.suggest`) as JSON, and the
script that shows it under the search page's box (``/-/textpile/static/suggest.js``).

The page works without the script: it only adds a list of links under the box while
one types; the form still submits a search. The JSON answer is
:meth:`textpile.search.suggest.Suggestions.as_json`; an actor who may not view the
summary database gets :data:`textpile.web.views.FORBIDDEN_JSON` (403).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3

from datasette.utils.asgi import Response

from textpile.errors import DatabaseError
from textpile.search.suggest import suggest
from textpile.web.access import viewable_target
from textpile.web.views import FORBIDDEN_JSON


def _json(body: dict, status: int = 200) -> Response:
    return Response(json.dumps(body, ensure_ascii=False), status=status,
                    content_type="application/json; charset=utf-8")


async def suggest_view(datasette, request):
    """Handle ``/suggest?q=PREFIX``: the completions, pages and sections for what is typed."""
    target, allowed = await viewable_target(datasette, request)
    if target is None:
        return Response.text("textpile: this Datasette serves no summary database", status=404)
    if not allowed:
        return _json(FORBIDDEN_JSON, status=403)
    query = request.args.get("q") or request.args.get("search") or ""
    try:
        found = await asyncio.to_thread(lambda: suggest(target.search_connection(), query))
    except (sqlite3.Error, DatabaseError) as exc:
        return _json({"query": query, "completions": [], "pages": [], "sections": [], "timed_out": False,
                      "message": f"The search index could not be read: {exc}"}, status=503)
    return _json(found.as_json())
