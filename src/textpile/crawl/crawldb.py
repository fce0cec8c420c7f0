"""Writing crawl results into the crawler database (crawler schema 1.0.0).

Sources: unobtanium-documentation.txt, pages "Crawler Database" (agent, crawl_log,
request, file, file_text, redirect, crawl_candidate), "Crawl Data Tree" (a crawl log
entry owns its requests, files and redirects), "Crawl Loop" (crawl candidates, the
temporary ignore list kept by the database). A crawl log entry is always written whole,
together with its data tree and the candidate updates it causes, so an interrupted run
leaves only whole entries behind.

Writes are batched and off the event loop: :meth:`CrawlerDb.queue_entry` collects
entries and :meth:`CrawlerDb.flush` writes them in one transaction in the database's own
thread (SQLite releases the GIL while it works, so the event loop goes on; a page with
20,000 new links costs the loop almost nothing). The crawl flushes every
:data:`FLUSH_INTERVAL_S`, after :data:`MAX_PENDING_ENTRIES` entries, before it reads due
candidates and at its end, Ctrl+C included. A kill loses at most the entries not yet
flushed; their URLs stay due, so the next run crawls them again. URL and origin ids and
the URLs already made crawl candidates are cached, so a page's hundreds of known links
cost no statement.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from textpile.enums import CrawlType, ExitCode, InformationSource
from textpile.ids import uuid7
from textpile.store.mimetypes import MediaType, intern_mimetype
from textpile.store.urls import ParsedUrl

#: The per-run temporary ignore list (page "Crawl Loop"); a TEMP table, gone with the connection.
IGNORE_TABLE = "temp.textpile_crawl_ignore"
#: textpile's index over the base schema's url table for the crawl loop's "due candidates
#: of one origin" (an index only: tables and columns stay as documented).
URL_BY_ORIGIN_INDEX = "CREATE INDEX IF NOT EXISTS textpile_url_by_origin ON url(origin_id)"
#: Seconds between flushes of queued crawl log entries during a crawl.
FLUSH_INTERVAL_S = 0.25
#: Queued entries that make :meth:`CrawlerDb.queue_entry` flush at once.
MAX_PENDING_ENTRIES = 200
#: Cached url ids (and known candidates); the caches start over when they grow beyond.
MAX_CACHED_URLS = 200_000

#: Called after a queued entry was flushed: ``(entry, None)`` when written, ``(entry,
#: error)`` when the database refused it (nothing of it is kept).
EntryDone = Callable[["LogEntry", "sqlite3.Error | None"], None]


@dataclass
class RequestRecord:
    """One request of a crawl log entry (a row of ``request``). Times: unix seconds."""

    url: ParsedUrl
    time_sent_unix: int
    duration_ms: int | None
    exit_code: ExitCode
    server_last_modified_unix: int | None = None
    http_status: int | None = None
    http_etag: str | None = None
    robotstxt_approved: bool = True


@dataclass
class FileRecord:
    """A fetched file (rows of ``file`` and, when ``text`` is set, ``file_text``);
    ``request_index`` points into the entry's requests."""

    request_index: int
    media_type: MediaType
    size: int | None
    last_modified_unix: int | None
    canonical_url: ParsedUrl | None = None
    text: str | None = None


@dataclass
class RedirectRecord:
    """A redirect answer (a row of ``redirect``, information source response_header)."""

    request_index: int
    to_url: ParsedUrl
    is_permanent: bool
    last_modified_unix: int | None = None


@dataclass
class LogEntry:
    """One crawl log entry with its data tree and the candidates it discovered.

    ``update_candidate``: update the crawled URL's crawl_candidate row (file crawls; not
    robots.txt fetches). ``new_candidates``: URLs to add as never-crawled candidates.
    """

    url: ParsedUrl
    crawl_type: CrawlType
    time_started_unix: int
    time_taken_ms: int
    exit_code: ExitCode
    message: str | None = None
    requests: list[RequestRecord] = field(default_factory=list)
    file: FileRecord | None = None
    redirect: RedirectRecord | None = None
    update_candidate: bool = True
    new_candidates: list[ParsedUrl] = field(default_factory=list)


@dataclass(frozen=True)
class Candidate:
    """A due crawl candidate: its url, and what a conditional request needs."""

    url_id: int
    str_url: str
    last_contentful_crawl_time_unix: int | None
    last_contentful_http_etag: str | None


class CrawlerDb:
    """Crawl-time writes to an open crawler database connection (one asyncio thread).

    Raises (constructor): sqlite3.Error when the connection refuses the temporary
    ignore table or the url index.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.agent_id: int | None = None
        #: bumped whenever candidates may have been added, so idle origin crawlers can
        #: tell cheaply whether asking the database for due candidates is worth it
        self.candidate_writes = 0
        self._pending: list[tuple[LogEntry, EntryDone | None]] = []
        self._thread: ThreadPoolExecutor | None = None
        self._inflight: set[asyncio.Future] = set()
        #: set when MAX_PENDING_ENTRIES are queued (the crawl's flusher waits on it)
        self.full: asyncio.Event | None = None
        self._url_ids: dict[str, int] = {}
        self._origin_ids: dict[tuple[str, str | None, int | None], int] = {}
        #: str_url of URLs known to have a crawl_candidate row
        self._candidates: set[str] = set()
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {IGNORE_TABLE} (url_id INTEGER NOT NULL PRIMARY KEY)"
        )
        conn.execute(f"DELETE FROM {IGNORE_TABLE}")
        conn.execute(URL_BY_ORIGIN_INDEX)
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
        """Flush queued entries, then set the agent's time_finished_unix_utc to now
        (outside the event loop)."""
        self.flush_now()
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

    def add_candidates(self, urls: list[ParsedUrl]) -> None:
        """Add ``urls`` as crawl candidates (existing rows are kept) and commit (outside
        the event loop, or before the crawl's database thread has work)."""
        self.flush_now()
        if urls:
            self.candidate_writes += 1
        try:
            with self.conn:
                self._add_candidates(urls)
        except sqlite3.Error:
            self._forget()
            raise

    def _add_candidates(self, urls: list[ParsedUrl]) -> None:
        """Insert url and crawl_candidate rows for the ``urls`` not known as candidates,
        two statements for all of them (a page may bring 20,000 new links)."""
        known = self._candidates
        new = {url.str_url: url for url in urls if url.str_url not in known}
        if not new:
            return
        if len(known) + len(new) > MAX_CACHED_URLS:
            known.clear()
        self.conn.executemany(
            "INSERT OR IGNORE INTO url(origin_id, path, query, username, password, str_url) VALUES (?, ?, ?, ?, ?, ?)",
            [(self._origin_id(u), u.path or None, u.query, u.username, u.password, key) for key, u in new.items()])
        self.conn.executemany(
            "INSERT OR IGNORE INTO crawl_candidate(url_id) SELECT url_id FROM url WHERE str_url = ?",
            [(key,) for key in new])
        known.update(new)

    async def due_candidates(self, str_origin: str, *, recrawl_interval_s: int, force: bool,
                             limit: int, now_unix: int | None = None) -> list[Candidate]:
        """Up to ``limit`` candidates of ``str_origin`` that are due and not ignored, and
        put them on the ignore list (page "Crawl Loop", "Fill the todo list"). Queued
        entries are flushed first, so the candidates they add count. Runs in the
        database thread.

        Due: never crawled, or last crawled at least ``recrawl_interval_s`` ago; every
        candidate when ``force``. Never-crawled candidates come first, then by url_id.

        Raises:
            sqlite3.Error: the database refused the query.
        """
        await self.flush()
        return await self._in_thread(self.due_candidates_now, str_origin, recrawl_interval_s, force, limit,
                                     now_unix)

    def due_candidates_now(self, str_origin: str, recrawl_interval_s: int, force: bool, limit: int,
                           now_unix: int | None = None) -> list[Candidate]:
        """:meth:`due_candidates` in the calling thread, without flushing."""
        now = int(time.time()) if now_unix is None else now_unix
        rows = self.conn.execute(
            f"""SELECT c.url_id, u.str_url, c.last_contentful_crawl_time_unix_utc, c.last_contentful_http_etag
                FROM origin o
                JOIN url u ON u.origin_id = o.origin_id
                JOIN crawl_candidate c ON c.url_id = u.url_id
                WHERE o.str_origin = ?
                  AND (? OR c.last_crawl_time_unix_utc IS NULL OR c.last_crawl_time_unix_utc <= ?)
                  AND c.url_id NOT IN (SELECT url_id FROM {IGNORE_TABLE})
                ORDER BY c.last_crawl_time_unix_utc IS NOT NULL, c.url_id
                LIMIT ?""",
            (str_origin, 1 if force else 0, now - recrawl_interval_s, limit),
        ).fetchall()
        if rows:
            with self.conn:
                self.conn.executemany(f"INSERT OR IGNORE INTO {IGNORE_TABLE}(url_id) VALUES (?)",
                                      [(r[0],) for r in rows])
        return [Candidate(*r) for r in rows]

    def unignore(self, url_id: int) -> None:
        """Take ``url_id`` off the ignore list so it is crawled again in this run."""
        with self.conn:
            self.conn.execute(f"DELETE FROM {IGNORE_TABLE} WHERE url_id = ?", (url_id,))

    # -- crawl log entries ----------------------------------------------------------

    @property
    def pending(self) -> int:
        """Entries queued and not yet flushed."""
        return len(self._pending)

    def queue_entry(self, entry: LogEntry, done: EntryDone | None = None) -> None:
        """Queue ``entry`` for the next flush; ``done`` is called (on the event loop, or
        by :meth:`flush_now`) when it was written or refused. With
        :data:`MAX_PENDING_ENTRIES` queued, :attr:`full` is set (the crawl flushes)."""
        self._pending.append((entry, done))
        if entry.new_candidates:
            self.candidate_writes += 1
        if len(self._pending) >= MAX_PENDING_ENTRIES and self.full is not None:
            self.full.set()

    async def _in_thread(self, function, *args):
        """``function(*args)`` in the database thread (one, so calls keep their order)."""
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="textpile-crawler-db")
        return await asyncio.get_running_loop().run_in_executor(self._thread, function, *args)

    async def flush(self) -> None:
        """Write the queued entries in the database thread (see :meth:`write_batch`) and
        call their ``done``. Cancelling the caller does not cancel the write: its
        outcome is still delivered (see :meth:`drain`)."""
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        if self.full is not None:
            self.full.clear()
        future = asyncio.ensure_future(self._in_thread(self.write_batch, [entry for entry, _ in batch]))
        self._inflight.add(future)

        def deliver(done_future: asyncio.Future) -> None:
            self._inflight.discard(done_future)
            if not done_future.cancelled() and done_future.exception() is None:
                _deliver(batch, done_future.result())

        future.add_done_callback(deliver)
        await asyncio.shield(future)

    async def drain(self) -> None:
        """Flush, wait for every write under way, and stop the database thread."""
        await self.flush()
        while self._inflight:
            await asyncio.gather(*list(self._inflight), return_exceptions=True)
        if self._thread is not None:
            self._thread.shutdown(wait=True)
            self._thread = None

    def flush_now(self) -> None:
        """Write the queued entries in the calling thread (outside the event loop)."""
        if self._pending:
            batch, self._pending = self._pending, []
            _deliver(batch, self.write_batch([entry for entry, _ in batch]))

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
        """Flush the queue, then write ``entry`` with its requests, file, file text and
        redirect, update the crawled URL's candidate row and add the discovered
        candidates, in one transaction, in the calling thread (outside the event loop).
        Returns the crawl_log_id.

        Raises:
            sqlite3.Error: the database refused the write (nothing of the entry is kept).
        """
        self.flush_now()
        try:
            with self.conn:
                return self._write(entry)
        except sqlite3.Error:
            self._forget()
            raise

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
                (log_id, request_ids[f.request_index], url_id, f.last_modified_unix, f.size,
                 intern_mimetype(conn, f.media_type), canonical_id),
            )
            if f.text is not None:
                conn.execute("INSERT INTO file_text(file_id, text) VALUES (?, ?)", (cur.lastrowid, f.text))
        if entry.redirect is not None:
            r = entry.redirect
            conn.execute(
                "INSERT INTO redirect(crawl_log_id, request_id, url_id, last_modified_unix_utc, to_url_id,"
                " information_source, is_permanent, by_security_policy) VALUES (?, ?, ?, ?, ?, ?, ?, 0)",
                (log_id, request_ids[r.request_index], url_id, r.last_modified_unix,
                 self.url_id(r.to_url), int(InformationSource.response_header),
                 1 if r.is_permanent else 0),
            )
        if entry.update_candidate:
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
        self._add_candidates(entry.new_candidates)
        return log_id


def _deliver(batch: list[tuple[LogEntry, EntryDone | None]], outcomes: list[sqlite3.Error | None]) -> None:
    """Call each queued entry's ``done`` with its outcome."""
    for (entry, done), error in zip(batch, outcomes):
        if done is not None:
            done(entry, error)
