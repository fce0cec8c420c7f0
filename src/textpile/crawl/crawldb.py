"""Writing crawl results into the crawler database (crawler schema 1.0.0).

Sources: unobtanium-documentation.txt, pages "Crawler Database" (agent, crawl_log,
request, file, file_text, redirect, crawl_candidate), "Crawl Data Tree" (a crawl log
entry owns its requests, files and redirects), "Crawl Loop" (crawl candidates, the
temporary ignore list kept by the database). Every crawl log entry is written in one
transaction together with its data tree and the candidate updates it causes, so an
interrupted run leaves only whole entries behind.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from dataclasses import dataclass, field

from textpile.enums import CrawlType, ExitCode, InformationSource
from textpile.ids import uuid7
from textpile.store.mimetypes import MediaType, intern_mimetype
from textpile.store.urls import ParsedUrl, intern_url

#: The per-run temporary ignore list (page "Crawl Loop"); a TEMP table, gone with the connection.
IGNORE_TABLE = "temp.textpile_crawl_ignore"


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
    """Crawl-time writes to an open crawler database connection (one asyncio thread)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.agent_id: int | None = None
        #: bumped whenever candidates may have been added, so idle origin crawlers can
        #: tell cheaply whether asking the database for due candidates is worth it
        self.candidate_writes = 0
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {IGNORE_TABLE} (url_id INTEGER NOT NULL PRIMARY KEY)"
        )
        conn.execute(f"DELETE FROM {IGNORE_TABLE}")
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

    def add_candidates(self, urls: list[ParsedUrl]) -> None:
        """Add ``urls`` as crawl candidates (existing rows are kept) and commit."""
        with self.conn:
            self._add_candidates(urls)

    def _add_candidates(self, urls: list[ParsedUrl]) -> None:
        if urls:
            self.candidate_writes += 1
        for url in urls:
            url_id = intern_url(self.conn, url)
            self.conn.execute("INSERT OR IGNORE INTO crawl_candidate(url_id) VALUES (?)", (url_id,))

    def due_candidates(self, str_origin: str, *, recrawl_interval_s: int, force: bool,
                       limit: int, now_unix: int | None = None) -> list[Candidate]:
        """Up to ``limit`` candidates of ``str_origin`` that are due and not ignored, and
        put them on the ignore list (page "Crawl Loop", "Fill the todo list").

        Due: never crawled, or last crawled at least ``recrawl_interval_s`` ago; every
        candidate when ``force``. Never-crawled candidates come first, then by url_id.
        """
        now = int(time.time()) if now_unix is None else now_unix
        rows = self.conn.execute(
            f"""SELECT c.url_id, u.str_url, c.last_contentful_crawl_time_unix_utc, c.last_contentful_http_etag
                FROM crawl_candidate c
                JOIN url u ON u.url_id = c.url_id
                JOIN origin o ON o.origin_id = u.origin_id
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

    def write_entry(self, entry: LogEntry) -> int:
        """Write ``entry`` with its requests, file, file text and redirect, update the
        crawled URL's candidate row and add the discovered candidates, in one
        transaction. Returns the crawl_log_id.

        Raises:
            sqlite3.Error: the database refused the write (nothing of the entry is kept).
        """
        conn = self.conn
        with conn:
            url_id = intern_url(conn, entry.url)
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
                    (log_id, intern_url(conn, req.url), req.time_sent_unix, req.duration_ms,
                     1 if req.robotstxt_approved else 0, int(req.exit_code),
                     req.server_last_modified_unix, req.http_status, req.http_etag),
                )
                request_ids.append(cur.lastrowid)
            if entry.file is not None:
                f = entry.file
                canonical_id = intern_url(conn, f.canonical_url) if f.canonical_url is not None else None
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
                     intern_url(conn, r.to_url), int(InformationSource.response_header),
                     1 if r.is_permanent else 0),
                )
            if entry.update_candidate:
                conn.execute("INSERT OR IGNORE INTO crawl_candidate(url_id) VALUES (?)", (url_id,))
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
