"""The crawler database's SQL for a crawl: crawl log entries with their data trees,
crawl candidates and the per-run ignore list, with cached url and origin ids.

Sources: unobtanium-documentation.txt, pages "Crawler Database", "Crawl Data Tree",
"Crawl Loop". :class:`CrawlStore` is synchronous and owns its connection: during a crawl
it lives in the crawl's database process (see :mod:`textpile.crawl.crawldb.writer`), before and
after it in the caller's.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Mapping

from textpile.crawl.crawldb.prune import pack_outlinks
from textpile.crawl.crawldb.records import Candidate, Listing, LogEntry, MetaCandidate
from textpile.crawl.parser.packed import unpack_links
from textpile.ids import uuid7
from textpile.store.mimetypes import intern_mimetype
from textpile.store.urls import ParsedUrl, parse_url

#: The per-run temporary ignore list (page "Crawl Loop"); a TEMP table, gone with the connection.
IGNORE_TABLE = "temp.textpile_crawl_ignore"
#: textpile's index over the base schema's url table for the crawl loop's "due candidates
#: of one origin" (an index only: tables and columns stay as documented).
URL_BY_ORIGIN_INDEX = "CREATE INDEX IF NOT EXISTS textpile_url_by_origin ON url(origin_id)"
#: textpile's index over the request table for "the requests of a crawl log entry" (the
#: Last-Modified a due candidate's conditional request sends; an index only).
REQUEST_BY_CRAWL_LOG_INDEX = "CREATE INDEX IF NOT EXISTS textpile_request_by_crawl_log ON request(crawl_log_id)"
#: Cached url ids (and known candidates); the caches start over when they grow beyond.
MAX_CACHED_URLS = 200_000


class CrawlStore:
    """Crawl-time SQL on one open crawler database connection.

    Raises (constructor): sqlite3.Error when the connection refuses the temporary
    ignore table or the url index.
    """

    def __init__(self, conn: sqlite3.Connection, agent_id: int | None = None,
                 routes: Mapping[str, str] | None = None) -> None:
        self.conn = conn
        self.agent_id = agent_id
        #: ``str_origin`` -> shard, the sites of other shards (:mod:`textpile.shards.handoff`):
        #: URLs found on them are handed off (``textpile_handoff``), never made candidates here
        self.routes: Mapping[str, str] = routes or {}
        self._url_ids: dict[str, int] = {}
        self._origin_ids: dict[tuple[str, str | None, int | None], int] = {}
        #: str_url of URLs known to have a crawl_candidate row
        self._candidates: set[str] = set()
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {IGNORE_TABLE} (url_id INTEGER NOT NULL PRIMARY KEY)"
        )
        conn.execute(f"DELETE FROM {IGNORE_TABLE}")
        conn.execute(URL_BY_ORIGIN_INDEX)
        conn.execute(REQUEST_BY_CRAWL_LOG_INDEX)
        conn.commit()

    def start_agent(self, agent_uuid: uuid.UUID, name: str, http_user_agent: str | None) -> int:
        """Insert the agent row of this run (time_finished NULL) and return its agent_id."""
        with self.conn:
            cur = self.conn.execute(
                "INSERT INTO agent(time_started_unix_utc, time_finished_unix_utc, agent_uuid, name, http_user_agent)"
                " VALUES (?, NULL, ?, ?, ?)",
                (int(time.time()), agent_uuid.bytes, name, http_user_agent),
            )
        self.agent_id = cur.lastrowid
        return self.agent_id

    def finish_agent(self) -> None:
        """Set the agent's time_finished_unix_utc to now."""
        with self.conn:
            self.conn.execute("UPDATE agent SET time_finished_unix_utc = ? WHERE agent_id = ?",
                              (int(time.time()), self.agent_id))

    # -- ids ------------------------------------------------------------------------

    def _forget(self) -> None:
        """Drop the id caches (after a rollback they may name rows that are gone)."""
        self._url_ids.clear()
        self._origin_ids.clear()
        self._candidates.clear()

    def _origin_id(self, url: ParsedUrl) -> int:
        key = (url.scheme, url.host, url.port)
        origin_id = self._origin_ids.get(key)
        if origin_id is None:
            str_origin = url.str_origin
            row = self.conn.execute("SELECT origin_id FROM origin WHERE str_origin = ?", (str_origin,)).fetchone()
            if row is None:
                row = (self.conn.execute("INSERT INTO origin(port, scheme, host, str_origin) VALUES (?, ?, ?, ?)",
                                         (url.port, url.scheme, url.host, str_origin)).lastrowid,)
            origin_id = self._origin_ids[key] = row[0]
        return origin_id

    def url_id(self, url: ParsedUrl) -> int:
        """The url_id of ``url`` (fragment ignored), inserting url and origin rows when
        missing (inside the caller's transaction); cached."""
        key = url.str_url
        url_id = self._url_ids.get(key)
        if url_id is not None:
            return url_id
        row = self.conn.execute("SELECT url_id FROM url WHERE str_url = ?", (key,)).fetchone()
        if row is None:
            row = (self.conn.execute(
                "INSERT INTO url(origin_id, path, query, username, password, str_url) VALUES (?, ?, ?, ?, ?, ?)",
                (self._origin_id(url), url.path or None, url.query, url.username, url.password, key)).lastrowid,)
        if len(self._url_ids) >= MAX_CACHED_URLS:
            self._url_ids.clear()
        url_id = self._url_ids[key] = row[0]
        return url_id

    # -- candidates -----------------------------------------------------------------

    def last_url_id(self) -> int:
        """The largest url_id of the database (0 when it has none): URLs found later get
        larger ones."""
        return self.conn.execute("SELECT coalesce(max(url_id), 0) FROM url").fetchone()[0]

    def recrawl_spread(self, str_origins: list[str], recrawl_interval_s: int,
                       bounds_s: tuple[int, int]) -> dict[str, int]:
        """The spread of the recrawl intervals of the URLs of ``str_origins`` that have a
        recrawl history (textpile_recrawl; without an interval of their own:
        ``recrawl_interval_s``; within ``bounds_s`` as :meth:`due_candidates` uses them):
        ``pages``, ``shortest_s``, ``median_s`` (the lower middle one) and ``longest_s``;
        empty when there is none."""
        low, high = bounds_s
        values = [v for (v,) in self.conn.execute(
            "SELECT min(max(coalesce(r.interval_s, ?), ?), ?) AS s FROM textpile_recrawl r"
            " JOIN url u ON u.url_id = r.url_id JOIN origin o ON o.origin_id = u.origin_id"
            " WHERE o.str_origin IN (SELECT value FROM json_each(?)) ORDER BY s",
            (recrawl_interval_s, low, high, json.dumps(list(str_origins))))]
        if not values:
            return {}
        return {"pages": len(values), "shortest_s": values[0], "median_s": values[(len(values) - 1) // 2],
                "longest_s": values[-1]}

    def add_candidates(self, urls: list[ParsedUrl]) -> None:
        """Add ``urls`` as crawl candidates (existing rows are kept) and commit (outside
        the event loop, or before the crawl's database thread has work)."""
        try:
            with self.conn:
                self._add_candidates(urls)
        except sqlite3.Error:
            self._forget()
            raise

    def add_links(self, packed: str) -> None:
        """Add the ``packed`` links (:mod:`textpile.crawl.parser.packed`) as crawl candidates,
        in one transaction.

        Raises:
            sqlite3.Error: the database refused them (none is kept).
        """
        try:
            with self.conn:
                self._add_candidates([], packed)
        except sqlite3.Error:
            self._forget()
            raise

    def _add_candidates(self, urls: list[ParsedUrl], packed: str = "") -> None:
        """Insert url and crawl_candidate rows for the ``urls`` and ``packed`` links
        (:mod:`textpile.crawl.parser.packed`) not known as
        candidates, two statements for all of them (a page may bring 20,000 new links)."""
        known = self._candidates
        routes = self.routes
        away: list[tuple[str, str, None, None, None]] = []
        if routes:
            away = [(routes[url.str_origin], url.str_url, None, None, None) for url in urls
                    if url.str_origin in routes]
            urls = [url for url in urls if url.str_origin not in routes]
        rows = {url.str_url: (self._origin_id(url), url.path or None, url.query, url.username, url.password,
                              url.str_url) for url in urls if url.str_url not in known}
        if packed:
            origin_ids: dict[str, int] = {}
            for str_origin, path, query, str_url in unpack_links(packed):
                if str_url in known or str_url in rows:
                    continue
                if str_origin in routes:
                    away.append((routes[str_origin], str_url, None, None, None))
                    continue
                origin_id = origin_ids.get(str_origin)
                if origin_id is None:
                    origin_id = origin_ids[str_origin] = self._origin_id(parse_url(str_origin))
                rows[str_url] = (origin_id, path or None, query, None, None, str_url)
        if away:
            self._hand_off(away)
        if not rows:
            return
        if len(known) + len(rows) > MAX_CACHED_URLS:
            known.clear()
        self.conn.executemany(
            "INSERT OR IGNORE INTO url(origin_id, path, query, username, password, str_url) VALUES (?, ?, ?, ?, ?, ?)",
            list(rows.values()))
        self.conn.executemany(
            "INSERT OR IGNORE INTO crawl_candidate(url_id) SELECT url_id FROM url WHERE str_url = ?",
            [(key,) for key in rows])
        known.update(rows)

    def due_candidates(self, str_origin: str, recrawl_interval_s: int, force: bool, limit: int,
                       now_unix: int | None = None, feed_interval_s: int | None = None,
                       bounds_s: tuple[int, int] | None = None) -> list[Candidate]:
        """Up to ``limit`` candidates of ``str_origin`` that are due and not ignored, and
        put them on the ignore list (page "Crawl Loop", "Fill the todo list").

        Due: never crawled, or last crawled at least its own recrawl interval ago
        (textpile_recrawl.interval_s within ``bounds_s``, (shortest, longest); without a
        row, or without ``bounds_s``, ``recrawl_interval_s``: :mod:`textpile.crawl.policy.recrawl`;
        a feed: ``feed_interval_s`` ago, atextcrawler's feed crawls; None: the recrawl interval),
        or listed by a sitemap or feed as changed since its last crawl
        (``textpile_listed_change``); every candidate when ``force``. Order: sitemaps and
        feeds first (their URLs seed the crawl), then never-crawled candidates, then
        those listed as changed, then by url_id. Each chosen candidate carries the
        Last-Modified header of its last contentful crawl's last request (for
        If-Modified-Since), its meta resource kind and depth, and its latest sitemap
        lastmod, looked up for the chosen ones only, its recrawl history, and whether
        its links are known (textpile_page_links; a sitemap or feed counts as known).
        """
        now = int(time.time()) if now_unix is None else now_unix
        feed_interval = recrawl_interval_s if feed_interval_s is None else feed_interval_s
        low, high = (recrawl_interval_s, recrawl_interval_s) if bounds_s is None else bounds_s
        rows = self.conn.execute(
            f"""SELECT d.url_id, d.str_url, d.contentful_time, d.etag,
                       (SELECT r.server_last_modified_unix_utc FROM crawl_log l
                        JOIN request r ON r.crawl_log_id = l.crawl_log_id
                        WHERE l.url_id = d.url_id AND l.time_started_unix_utc = d.contentful_time
                        ORDER BY l.crawl_log_id DESC, r.request_id DESC LIMIT 1),
                       m.kind, m.depth,
                       (SELECT max(lu.modified_unix_utc) FROM textpile_listed_url lu
                        JOIN textpile_meta_resource s ON s.url_id = lu.listed_by_url_id
                        WHERE lu.url_id = d.url_id AND s.kind = 'sitemap'),
                       rc.interval_s, rc.content_digest, coalesce(rc.unchanged_answers, 0),
                       m.kind IS NOT NULL OR EXISTS (SELECT 1 FROM textpile_page_links pl WHERE pl.url_id = d.url_id)
                FROM (SELECT c.url_id, u.str_url, c.last_contentful_crawl_time_unix_utc AS contentful_time,
                             c.last_contentful_http_etag AS etag, mr.url_id IS NULL AS not_meta,
                             c.last_crawl_time_unix_utc IS NOT NULL AS crawled,
                             c.url_id NOT IN (SELECT url_id FROM textpile_listed_change) AS unchanged
                      FROM origin o
                      JOIN url u ON u.origin_id = o.origin_id
                      JOIN crawl_candidate c ON c.url_id = u.url_id
                      LEFT JOIN textpile_meta_resource mr ON mr.url_id = c.url_id
                      LEFT JOIN textpile_recrawl r ON r.url_id = c.url_id
                      WHERE o.str_origin = ?
                        AND (? OR c.last_crawl_time_unix_utc IS NULL
                             OR c.last_crawl_time_unix_utc <= CASE WHEN mr.kind = 'feed' THEN ? - ?
                                ELSE ? - min(max(coalesce(r.interval_s, ?), ?), ?) END
                             OR c.url_id IN (SELECT url_id FROM textpile_listed_change))
                        AND c.url_id NOT IN (SELECT url_id FROM {IGNORE_TABLE})
                      ORDER BY not_meta, crawled, unchanged, c.url_id
                      LIMIT ?) d
                LEFT JOIN textpile_meta_resource m ON m.url_id = d.url_id
                LEFT JOIN textpile_recrawl rc ON rc.url_id = d.url_id
                ORDER BY d.not_meta, d.crawled, d.unchanged, d.url_id""",
            (str_origin, 1 if force else 0, now, feed_interval, now, recrawl_interval_s, low, high, limit),
        ).fetchall()
        if rows:
            with self.conn:
                self.conn.executemany(f"INSERT OR IGNORE INTO {IGNORE_TABLE}(url_id) VALUES (?)",
                                      [(r[0],) for r in rows])
        return [Candidate(*r) for r in rows]

    def write_batch(self, entries: list[LogEntry]) -> list[sqlite3.Error | None]:
        """Write ``entries`` in one transaction, in order; when the database refuses it,
        each entry on its own, so that only the entries it refuses fail. Returns each
        entry's error (None: written). Never raises sqlite3.Error."""
        try:
            with self.conn:
                for entry in entries:
                    self._write(entry)
            return [None] * len(entries)
        except sqlite3.Error:
            self._forget()
        except BaseException:
            self._forget()
            raise
        outcomes: list[sqlite3.Error | None] = []
        for entry in entries:
            try:
                with self.conn:
                    self._write(entry)
                outcomes.append(None)
            except sqlite3.Error as exc:
                self._forget()
                outcomes.append(exc)
        return outcomes

    def write_entry(self, entry: LogEntry) -> int:
        """Write ``entry`` with its requests, file, file text and redirect, update the
        crawled URL's candidate row and add the discovered candidates, in one
        transaction. Returns the crawl_log_id.

        Raises:
            sqlite3.Error: the database refused the write (nothing of the entry is kept).
        """
        try:
            with self.conn:
                return self._write(entry)
        except sqlite3.Error:
            self._forget()
            raise

    def has_contentful_crawl(self, url: ParsedUrl) -> bool:
        """True when ``url`` had a contentful crawl (its candidate row says so)."""
        return self.conn.execute(
            "SELECT 1 FROM url u JOIN crawl_candidate c ON c.url_id = u.url_id WHERE u.str_url = ?"
            " AND c.last_contentful_crawl_time_unix_utc IS NOT NULL", (url.str_url,)).fetchone() is not None

    def write_with(self, entries: list[LogEntry], sql: str, params: tuple) -> None:
        """Write ``entries`` and run the statement ``sql`` with ``params`` in one
        transaction (an archive import's resume point goes with the entries it covers).

        Raises:
            sqlite3.Error: the database refused it (nothing of it is kept).
        """
        try:
            with self.conn:
                for entry in entries:
                    self._write(entry)
                self.conn.execute(sql, params)
        except sqlite3.Error:
            self._forget()
            raise

    def write_pruned(self, entries: list[LogEntry], url_ids: list[int]) -> None:
        """Write the 182 pruned ``entries`` and delete the crawl_candidate,
        textpile_recrawl, textpile_page_links and textpile_listed_change rows of
        ``url_ids`` in one transaction (:func:`textpile.crawl.crawldb.prune.prune_origin`).

        Raises:
            sqlite3.Error: the database refused it (nothing of it is kept).
        """
        ids = json.dumps(url_ids)
        try:
            with self.conn:
                for entry in entries:
                    self._write(entry)
                for table in ("crawl_candidate", "textpile_recrawl", "textpile_page_links", "textpile_listed_change"):
                    self.conn.execute(f"DELETE FROM {table} WHERE url_id IN (SELECT value FROM json_each(?))", (ids,))
        except sqlite3.Error:
            self._forget()
            raise
        self._candidates.difference_update(entry.url.str_url for entry in entries)

    def _write(self, entry: LogEntry) -> int:
        """Write ``entry`` and its data tree inside the caller's transaction."""
        conn = self.conn
        url_id = self.url_id(entry.url)
        cur = conn.execute(
            "INSERT INTO crawl_log(agent_id, url_id, crawl_type, crawl_uuid, time_started_unix_utc,"
            " time_taken_ms, exit_code, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (self.agent_id, url_id, int(entry.crawl_type), uuid7().bytes, entry.time_started_unix,
             entry.time_taken_ms, int(entry.exit_code), entry.message),
        )
        log_id = cur.lastrowid
        request_ids = []
        for req in entry.requests:
            cur = conn.execute(
                "INSERT INTO request(crawl_log_id, url_id, time_sent_unix_utc, request_duration_ms,"
                " robotstxt_approved, exit_code, server_last_modified_unix_utc, http_status_code, http_etag)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (log_id, self.url_id(req.url), req.time_sent_unix, req.duration_ms,
                 1 if req.robotstxt_approved else 0, int(req.exit_code),
                 req.server_last_modified_unix, req.http_status, req.http_etag),
            )
            request_ids.append(cur.lastrowid)
        if entry.file is not None:
            f = entry.file
            canonical_id = self.url_id(f.canonical_url) if f.canonical_url is not None else None
            cur = conn.execute(
                "INSERT INTO file(crawl_log_id, request_id, url_id, last_modified_unix_utc, file_size,"
                " mimetype_id, canonical_url_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (log_id, None if f.request_index is None else request_ids[f.request_index], url_id,
                 f.last_modified_unix, f.size,
                 intern_mimetype(conn, f.media_type), canonical_id),
            )
            if isinstance(f.text, bytes):
                # UTF-8 bytes bound as TEXT: the same value as the str they encode.
                conn.execute("INSERT INTO file_text(file_id, text) VALUES (?, CAST(? AS TEXT))",
                             (cur.lastrowid, f.text))
            elif f.text is not None:
                conn.execute("INSERT INTO file_text(file_id, text) VALUES (?, ?)", (cur.lastrowid, f.text))
        if entry.redirect is not None:
            r = entry.redirect
            conn.execute(
                "INSERT INTO redirect(crawl_log_id, request_id, url_id, last_modified_unix_utc, to_url_id,"
                " information_source, is_permanent, by_security_policy) VALUES (?, ?, ?, ?, ?, ?, ?, 0)",
                (log_id, None if r.request_index is None else request_ids[r.request_index], url_id,
                 r.last_modified_unix, self.url_id(r.to_url), int(r.information_source),
                 1 if r.is_permanent else 0),
            )
        if entry.new_meta:
            self._add_meta(entry.new_meta, entry.time_started_unix)
        if entry.listing is not None:
            self._write_listing(url_id, entry.url, entry.listing, entry.time_started_unix)
        if entry.site_links is not None:
            self._write_site_links(url_id, entry.site_links.origins, entry.time_started_unix)
        if entry.outlinks is not None:
            conn.execute("INSERT OR REPLACE INTO textpile_page_links(url_id, links) VALUES (?, ?)",
                         (url_id, pack_outlinks(entry)))
        if entry.recrawl is not None:
            r = entry.recrawl
            conn.execute("INSERT OR REPLACE INTO textpile_recrawl(url_id, interval_s, content_digest, unchanged_answers)"
                         " VALUES (?, ?, ?, ?)", (url_id, r.interval_s, r.content_digest, r.unchanged_answers))
        if entry.update_candidate:
            conn.execute("DELETE FROM textpile_listed_change WHERE url_id = ?", (url_id,))
            if entry.url.str_url not in self._candidates:
                conn.execute("INSERT OR IGNORE INTO crawl_candidate(url_id) VALUES (?)", (url_id,))
                self._candidates.add(entry.url.str_url)
            if entry.exit_code.is_contentful:
                etag = entry.requests[-1].http_etag if entry.requests else None
                conn.execute(
                    "UPDATE crawl_candidate SET last_crawl_time_unix_utc = ?, last_crawl_exit_code = ?,"
                    " last_contentful_crawl_time_unix_utc = ?, last_contentful_http_etag = ? WHERE url_id = ?",
                    (entry.time_started_unix, int(entry.exit_code), entry.time_started_unix, etag, url_id),
                )
            else:
                conn.execute(
                    "UPDATE crawl_candidate SET last_crawl_time_unix_utc = ?, last_crawl_exit_code = ?"
                    " WHERE url_id = ?",
                    (entry.time_started_unix, int(entry.exit_code), url_id),
                )
        self._add_candidates(entry.new_candidates, entry.new_links)
        return log_id

    # -- textpile's discovery tables (schemas/crawler/textpile_discovery.sql) ---------

    def _add_meta(self, metas: list[MetaCandidate], now_unix: int) -> None:
        """Register sitemaps and feeds (an existing row keeps its kind and gets the
        smaller depth) and add them as crawl candidates; those on sites of other shards
        are handed off with their kind instead."""
        if self.routes:
            routes = self.routes
            self._hand_off([(routes[m.url.str_origin], m.url.str_url, m.kind, m.found_via, m.depth)
                            for m in metas if m.url.str_origin in routes])
            metas = [meta for meta in metas if meta.url.str_origin not in routes]
        self._add_candidates([meta.url for meta in metas])
        self.conn.executemany(
            "INSERT INTO textpile_meta_resource(url_id, kind, found_via, depth, first_seen_unix_utc)"
            " SELECT url_id, ?, ?, ?, ? FROM url WHERE str_url = ?"
            " ON CONFLICT(url_id) DO UPDATE SET depth = min(depth, excluded.depth)",
            [(meta.kind, meta.found_via, meta.depth, now_unix, meta.url.str_url) for meta in metas])

    def _write_listing(self, url_id: int, url: ParsedUrl, listing: Listing, now_unix: int) -> None:
        """Record what the sitemap or feed ``url`` listed: its meta resource row (kind
        from its content), its listed URLs as candidates with their dates (replacing
        its earlier listing), and the listed URLs whose date is after their last crawl
        as changed. A listed URL of another shard's site (``routes``) is handed off and
        listed too (a url row, no candidate), so that this shard's pruning of its outbox
        sees that the listing still leads to it (:func:`textpile.shards.handoff.prune_outbox`)."""
        conn = self.conn
        rows = unpack_links(listing.links)
        for str_origin, _, _, str_url in rows if self.routes else ():
            if str_origin in self.routes:
                self.url_id(parse_url(str_url))
        conn.execute(
            "INSERT INTO textpile_meta_resource(url_id, kind, found_via, depth, first_seen_unix_utc,"
            " last_read_unix_utc, entries, lastmod_kept) VALUES (?, ?, 'link', 0, ?, ?, ?, ?)"
            " ON CONFLICT(url_id) DO UPDATE SET kind = excluded.kind, last_read_unix_utc = excluded.last_read_unix_utc,"
            " entries = excluded.entries, lastmod_kept = excluded.lastmod_kept",
            (url_id, listing.kind, now_unix, now_unix, len(rows),
             None if listing.lastmod_kept is None else int(listing.lastmod_kept)))
        conn.execute("DELETE FROM textpile_listed_url WHERE listed_by_url_id = ?", (url_id,))
        if not rows:
            return
        self._add_candidates([], listing.links)
        dated = list(zip((row[3] for row in rows), listing.modified))
        conn.executemany(
            "INSERT OR REPLACE INTO textpile_listed_url(url_id, listed_by_url_id, modified_unix_utc, seen_unix_utc)"
            " SELECT url_id, ?, ?, ? FROM url WHERE str_url = ?",
            [(url_id, modified, now_unix, str_url) for str_url, modified in dated])
        conn.executemany(
            "INSERT OR IGNORE INTO textpile_listed_change(url_id) SELECT c.url_id FROM url u"
            " JOIN crawl_candidate c ON c.url_id = u.url_id WHERE u.str_url = ?"
            " AND c.last_crawl_time_unix_utc IS NOT NULL AND c.last_crawl_time_unix_utc < ?",
            [(str_url, modified) for str_url, modified in dated if modified is not None])

    def _write_site_links(self, url_id: int, origins: dict[str, int], now_unix: int) -> None:
        """Replace the page ``url_id``'s links to origins outside the seeds."""
        self.conn.execute("DELETE FROM textpile_site_link WHERE from_url_id = ?", (url_id,))
        self.conn.executemany(
            "INSERT INTO textpile_site_link(from_url_id, to_origin_id, links, seen_unix_utc) VALUES (?, ?, ?, ?)",
            [(url_id, self._origin_id(parse_url(origin)), count, now_unix) for origin, count in origins.items()])

    # -- hand-off between site shards (schemas/crawler/textpile_handoff.sql) ----------

    def _hand_off(self, rows: list[tuple[str, str, str | None, str | None, int | None]]) -> None:
        """Write (shard, str_url, kind, found_via, depth) rows into the outbox, inside the
        caller's transaction (a URL already handed off to that shard is kept as it was)."""
        now = int(time.time())
        self.conn.executemany(
            "INSERT OR IGNORE INTO textpile_handoff(shard, str_url, kind, found_via, depth, found_unix_utc)"
            " VALUES (?, ?, ?, ?, ?, ?)", [(*row, now) for row in rows])

    def last_handoff_id(self) -> int:
        """The largest handoff_id of the outbox (0 when empty)."""
        return self.conn.execute("SELECT coalesce(max(handoff_id), 0) FROM textpile_handoff").fetchone()[0]

    def handed_off_since(self, handoff_id: int) -> dict[str, int]:
        """Outbox rows above ``handoff_id``, per shard addressed (shard name order)."""
        return dict(self.conn.execute(
            "SELECT shard, count(*) FROM textpile_handoff WHERE handoff_id > ? AND shard != '' GROUP BY shard"
            " ORDER BY shard",
            (handoff_id,)).fetchall())

    def candidate_origins(self) -> list[str]:
        """The str_origin of every origin with crawl candidates, sorted."""
        return [o for (o,) in self.conn.execute(
            "SELECT DISTINCT o.str_origin FROM crawl_candidate c JOIN url u ON u.url_id = c.url_id"
            " JOIN origin o ON o.origin_id = u.origin_id ORDER BY o.str_origin")]

    def outbox_rows(self, below: int) -> list[tuple[int, str, str]]:
        """(handoff_id, shard, str_url) of the outbox rows whose handoff_id is below ``below``."""
        return self.conn.execute("SELECT handoff_id, shard, str_url FROM textpile_handoff WHERE handoff_id < ?",
                                 (below,)).fetchall()

    def drop_handoffs(self, handoff_ids: list[int], last: int) -> None:
        """Delete the outbox rows ``handoff_ids`` in one transaction
        (:func:`textpile.shards.handoff.prune_outbox`), but empty the one of them that is
        the largest, ``last`` (its ``shard`` and ``str_url`` set to '': it keeps its id
        taken, so that ids are never reused), deleting an older emptied row.

        Raises:
            sqlite3.Error: the database refused it (nothing of it is kept).
        """
        try:
            with self.conn:
                self.conn.execute("DELETE FROM textpile_handoff WHERE handoff_id IN (SELECT value FROM json_each(?))"
                                  " AND handoff_id != ?", (json.dumps(handoff_ids), last))
                if last in handoff_ids:
                    self.conn.execute("DELETE FROM textpile_handoff WHERE shard = '' AND handoff_id != ?", (last,))
                    self.conn.execute("UPDATE textpile_handoff SET shard = '', str_url = '', kind = NULL,"
                                      " found_via = NULL, depth = NULL WHERE handoff_id = ?", (last,))
        except sqlite3.Error:
            self._forget()
            raise

    def handoff_position(self, from_shard: str) -> int:
        """How far the outbox of ``from_shard`` was taken in (its largest handoff_id taken; 0: none)."""
        row = self.conn.execute("SELECT last_handoff_id FROM textpile_handoff_taken WHERE from_shard = ?",
                                (from_shard,)).fetchone()
        return 0 if row is None else row[0]

    def first_agent_uuid(self) -> bytes | None:
        """The agent_uuid of this database's first crawl run (None: it has none): what
        tells it from a database made anew under the same name."""
        row = self.conn.execute("SELECT agent_uuid FROM agent ORDER BY agent_id LIMIT 1").fetchone()
        return None if row is None else row[0]

    def handoff_source(self, from_shard: str) -> bytes | None:
        """The first_agent_uuid of the crawler database of ``from_shard`` whose outbox the
        recorded position is of (None: not recorded)."""
        row = self.conn.execute("SELECT first_agent_uuid FROM textpile_handoff_source WHERE from_shard = ?",
                                (from_shard,)).fetchone()
        return None if row is None else row[0]

    def take_handoffs(self, from_shard: str, position: int, pages: list[ParsedUrl], metas: list[MetaCandidate],
                      forwards: list[tuple[str, str, str | None, str | None, int | None]],
                      source: bytes | None = None) -> None:
        """In one transaction: add ``pages`` as crawl candidates and ``metas`` as sitemaps
        and feeds (:meth:`_add_meta`), put ``forwards`` (shard, str_url, kind, found_via,
        depth) into this database's own outbox, and record ``position`` as how far the
        outbox of ``from_shard`` is taken in, and ``source`` (when given) as the
        first_agent_uuid of the database it is a position of. A crash keeps all of it or none.

        Raises:
            sqlite3.Error: the database refused it (nothing of it is kept).
        """
        now = int(time.time())
        try:
            with self.conn:
                self._add_candidates(pages)
                if metas:
                    self._add_meta(metas, now)
                if forwards:
                    self._hand_off(forwards)
                self.conn.execute(
                    "INSERT OR REPLACE INTO textpile_handoff_taken(from_shard, last_handoff_id, taken_unix_utc)"
                    " VALUES (?, ?, ?)", (from_shard, position, now))
                if source is not None:
                    self.conn.execute("INSERT OR REPLACE INTO textpile_handoff_source(from_shard, first_agent_uuid)"
                                      " VALUES (?, ?)", (from_shard, source))
        except sqlite3.Error:
            self._forget()
            raise
