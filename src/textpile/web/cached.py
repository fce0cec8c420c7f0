"""``/cached?page=<entity generation UUID or URL>``: the stored text of a page as it was
crawled, with its crawl dates (issue 32, "Cached text"; YaCy and Marginalia keep such a
copy), so a result whose site is down can still be read.

The text is the page's Gen2 text pile (the page text in reading order,
unobtanium-documentation.txt "Text Pile Gen2"), else its Gen1 ``text`` and
``secondary_text``, read from the summary database: plain text, shown escaped in a
``<pre>``; no stored HTML is ever rendered. At most :data:`MAX_CACHED_CHARS` characters
are shown (the page says when it is cut). ``&format=json`` gives ``{"url", "title",
"first_seen", "last_seen", "text", "truncated"}``. An unknown page is a 404, an actor who
may not view the summary database gets a 403.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from dataclasses import dataclass

from datasette.utils.asgi import NotFound, Response

from textpile.search.results import iso_date
from textpile.search.service import ModeError, find_page
from textpile.store.gen2_piles import ensure_functions
from textpile.web.datasette_versions import site_title
from textpile.web.settings import extra_config
from textpile.web.views import STATIC_PREFIX, page_target

CACHED_TEMPLATE = "textpile_cached.html"
#: Characters of a stored text shown at most.
MAX_CACHED_CHARS = 500_000


@dataclass(frozen=True)
class CachedText:
    """A page's stored text: its URL, title, crawl dates (unix seconds UTC) and text
    (``truncated`` when cut at :data:`MAX_CACHED_CHARS`)."""

    url: str
    title: str | None
    first_seen: int | None
    last_seen: int | None
    text: str
    truncated: bool

    def as_json(self) -> dict:
        return {"url": self.url, "title": self.title, "first_seen": iso_date(self.first_seen),
                "last_seen": iso_date(self.last_seen), "text": self.text, "truncated": self.truncated}


def cached_text(conn: sqlite3.Connection, page: str) -> CachedText:
    """The stored text of the searchable page ``page`` names (its entity generation UUID or URL).

    Raises:
        ModeError: no searchable page is named so.
        sqlite3.Error: the database cannot be read.
    """
    eg_id = find_page(conn, page)
    ensure_functions(conn)
    url, fragment, first_seen, last_seen, title, gen2, gen1 = conn.execute(
        "SELECT u.str_url, eg.url_fragment, eg.first_seen_unix_utc, eg.last_seen_unix_utc, dd.title, "
        "eg.text_pile_v0_2_id, eg.text_pile_id FROM entity_generation eg JOIN url u ON u.url_id = eg.url_id "
        "LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id "
        "WHERE eg.entity_generation_id = ?", (eg_id,)).fetchone()
    text = None
    if gen2 is not None:
        row = conn.execute("SELECT substr(text, 1, ?) FROM text_pile_v0_2 WHERE text_pile_id = ?",
                           (MAX_CACHED_CHARS + 1, gen2)).fetchone()
        text = row[0] if row else None
    if not text and gen1 is not None:
        row = conn.execute("SELECT substr(text || char(10) || char(10) || secondary_text, 1, ?) FROM text_pile "
                           "WHERE text_pile_id = ?", (MAX_CACHED_CHARS + 1, gen1)).fetchone()
        text = row[0].strip() if row and row[0] else None
    text = text or ""
    return CachedText(url + (f"#{fragment}" if fragment else ""), " ".join((title or "").split()) or None,
                      first_seen, last_seen, text[:MAX_CACHED_CHARS], len(text) > MAX_CACHED_CHARS)


async def cached_view(datasette, request):
    """Handle ``/cached?page=...``: the stored text page (or JSON with ``format=json``)."""
    target, refusal = await page_target(datasette, request)
    if refusal is not None:
        return refusal
    want_json = request.args.get("format") == "json"
    page = request.args.get("page") or ""
    try:
        found = await asyncio.to_thread(lambda: cached_text(target.search_connection(), page))
    except ModeError as exc:
        if want_json:
            return Response.json({"ok": False, "error": str(exc), "status": 404}, status=404)
        raise NotFound(str(exc)) from None
    if want_json:
        return Response(json.dumps(found.as_json(), ensure_ascii=False), content_type="application/json; charset=utf-8")
    context = {"cached": found, "first_seen": (iso_date(found.first_seen) or "")[:10],
               "last_seen": (iso_date(found.last_seen) or "")[:10], "static_prefix": STATIC_PREFIX,
               "href": found.url if found.url.lower().startswith(("http://", "https://")) else None,
               "site_title": await site_title(datasette) or "textpile", "max_chars": f"{MAX_CACHED_CHARS:,}",
               "extra": extra_config(datasette.plugin_config("textpile"))}
    html = await datasette.render_template(CACHED_TEMPLATE, context, request=request, view_name="textpile_cached")
    return Response.html(html)
