"""Query analytics, private by design (issue 32, "Query analytics"): per day, how often
each query was searched and how often it found nothing, so an operator sees what people
look for and do not find (Meilisearch's and Typesense's users ask for it).

* Only counts: a query is normalized (case folded, whitespace collapsed, cut to
  :data:`MAX_QUERY_CHARS`), and stored with the day (UTC) and two counters. No IP
  address, no time of day, no user agent, cookie, actor or other visitor data is read
  or kept; a search's later result pages are not counted again.
* A separate database beside the index (:func:`analytics_path`: ``summary.db`` ->
  ``summary-analytics.db``), written by textpile alone; the summary database (the
  published index) is never written. Datasette serves it as the database ``analytics``
  (the table ``query_day``), and ``/analytics`` shows a small report.
* One setting turns it off: the plugin setting ``query_analytics = false`` (or ``textpile
  serve --no-query-analytics``); then nothing is created or written.

A file that cannot be written (a read-only folder) stops the counting with one logged
error naming it; searches go on.
"""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
import threading
from pathlib import Path

from datasette.database import Database
from datasette.utils.asgi import Forbidden, Response

from textpile.web.access import may_view_summary
from textpile.web.datasette_versions import site_title
from textpile.web.settings import query_analytics
from textpile.web.state import find_target

log = logging.getLogger("textpile.web")

#: Characters of a normalized query kept, at most.
MAX_QUERY_CHARS = 200
#: The Datasette name of the analytics database.
DATABASE_NAME = "analytics"
#: Queries listed per table of the report page.
REPORT_QUERIES = 20
#: Days the report page covers.
REPORT_DAYS = 30
SCHEMA = """
CREATE TABLE IF NOT EXISTS query_day (
    day TEXT NOT NULL, -- the day of the searches, YYYY-MM-DD (UTC)
    query TEXT NOT NULL, -- the query, normalized: case folded, whitespace collapsed, at most 200 characters
    searches INTEGER NOT NULL, -- how many times it was searched that day (first result pages only)
    zero_results INTEGER NOT NULL, -- how many of those searches found nothing
    PRIMARY KEY (day, query)
) WITHOUT ROWID;
"""


def analytics_path(summary_db: str | Path) -> Path:
    """The analytics database beside ``summary_db``: ``<stem>-analytics.db`` in its folder."""
    path = Path(summary_db)
    return path.with_name(f"{path.stem}-analytics.db")


def normalize(query: str) -> str:
    """``query`` as counted: case folded, whitespace collapsed, cut to :data:`MAX_QUERY_CHARS`."""
    return " ".join(query.casefold().split())[:MAX_QUERY_CHARS]


class QueryCounter:
    """The counts of one analytics database at ``path`` (created with :data:`SCHEMA` on
    the first count). Thread-safe: one connection, used under a lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self.failed = False

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA busy_timeout=2000")
            conn.executescript(SCHEMA)
            self._conn = conn
        return self._conn

    def count(self, query: str, found: int, day: dt.date | None = None) -> None:
        """Count one search of ``query`` that found ``found`` pages, on ``day`` (today,
        UTC, when None). An empty query is not counted. After a write error (logged once,
        naming the file) nothing more is counted.

        Raises:
            nothing: a write error is logged, not raised (the search it follows succeeded).
        """
        text = normalize(query)
        if not text or self.failed:
            return
        day = day or dt.datetime.now(dt.timezone.utc).date()
        with self._lock:
            try:
                self._connection().execute(
                    "INSERT INTO query_day(day, query, searches, zero_results) VALUES (?, ?, 1, ?) "
                    "ON CONFLICT(day, query) DO UPDATE SET searches = searches + 1, "
                    "zero_results = zero_results + excluded.zero_results",
                    (day.isoformat(), text, 1 if found == 0 else 0))
            except sqlite3.Error as exc:
                self.failed = True
                log.error("query analytics: cannot write %s (%s); no more searches are counted "
                          "(set query_analytics to false to turn them off)", self.path, exc)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def counter_for(datasette) -> QueryCounter | None:
    """The :class:`QueryCounter` of this Datasette's summary database (made on first use
    and served as the database :data:`DATABASE_NAME`), or None when analytics are off
    or no summary database is served."""
    if not query_analytics(datasette.plugin_config("textpile")):
        return None
    counter = getattr(datasette, "_textpile_query_counter", None)
    if counter is None:
        target = find_target(datasette)
        if target is None:
            return None
        counter = QueryCounter(analytics_path(target.path))
        datasette._textpile_query_counter = counter
    if DATABASE_NAME not in datasette.databases and counter.path.exists():
        datasette.add_database(Database(datasette, path=str(counter.path), is_mutable=True), name=DATABASE_NAME)
    return counter


def report(path: Path, today: dt.date, days: int = REPORT_DAYS) -> dict:
    """The report of the analytics database ``path`` for the ``days`` days up to
    ``today``: ``{"days": [{"day", "searches", "zero_results"}], "top": [{"query",
    "searches"}], "zero": [{"query", "searches"}]}`` (newest day first; the commonest
    queries and zero-result queries, :data:`REPORT_QUERIES` each)."""
    since = (today - dt.timedelta(days=days - 1)).isoformat()
    if not path.exists():
        return {"days": [], "top": [], "zero": []}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        per_day = conn.execute("SELECT day, sum(searches), sum(zero_results) FROM query_day WHERE day >= ? "
                               "GROUP BY day ORDER BY day DESC", (since,)).fetchall()
        top = conn.execute("SELECT query, sum(searches) AS n FROM query_day WHERE day >= ? GROUP BY query "
                           "ORDER BY n DESC, query LIMIT ?", (since, REPORT_QUERIES)).fetchall()
        zero = conn.execute("SELECT query, sum(zero_results) AS n FROM query_day WHERE day >= ? AND zero_results > 0 "
                            "GROUP BY query ORDER BY n DESC, query LIMIT ?", (since, REPORT_QUERIES)).fetchall()
    return {"days": [{"day": d, "searches": s, "zero_results": z} for d, s, z in per_day],
            "top": [{"query": q, "searches": n} for q, n in top],
            "zero": [{"query": q, "searches": n} for q, n in zero]}


async def analytics_view(datasette, request):
    """Handle ``/analytics``: the report page (JSON with ``format=json``); 404 when
    analytics are off; 403 for an actor who may not view the summary database."""
    target = find_target(datasette)
    counter = counter_for(datasette)
    if target is None or counter is None:
        return Response.text("textpile: query analytics are off", status=404)
    if not await may_view_summary(datasette, request.actor, target.name):
        raise Forbidden("Permission denied: you may not view this search index")
    today = dt.datetime.now(dt.timezone.utc).date()
    body = report(counter.path, today)
    if request.args.get("format") == "json":
        return Response.json(body)
    html = await datasette.render_template("textpile_analytics.html", dict(
        body, days_covered=REPORT_DAYS, site_title=await site_title(datasette) or "textpile",
        static_prefix="/-/textpile/static", table_url=datasette.urls.table(DATABASE_NAME, "query_day")),
        request=request, view_name="textpile_analytics")
    return Response.html(html)
