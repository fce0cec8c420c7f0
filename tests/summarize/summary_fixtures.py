"""Test helpers for the summarizer: write crawler-database rows directly, dump databases.

``CrawlerRows`` writes crawl_log/request/file/file_text/redirect rows as the crawler
would (its shared decisions: robots fetches have a request but no file, noindex pages
get 171 without a file), so integration can be tested without running a crawl.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from textpile.ids import uuid7
from textpile.store.database import open_crawler_db
from textpile.store.mimetypes import intern_mimetype
from textpile.store.urls import intern_url
from textpile.store.gen2_piles import register_functions

NO_REQUEST_CODES = {170, 172, 173}


def page(title: str, body: str, *, head: str = "") -> str:
    """A small HTML page with ``title`` and ``body`` (HTML) inside <main>."""
    return (f"<!DOCTYPE html><html lang=\"en\"><head><title>{title}</title>{head}</head>"
            f"<body><main><h1>{title}</h1>{body}</main></body></html>")


class CrawlerRows:
    """Write crawler database rows for tests; ``close()`` when done (or use ``with``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.conn = open_crawler_db(self.path)

    def __enter__(self) -> "CrawlerRows":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Commit and close."""
        self.conn.commit()
        self.conn.close()

    def agent(self, started: int = 1_700_000_000, name: str = "ant") -> int:
        """Insert an agent (a crawl run); return its agent_id."""
        cur = self.conn.execute(
            "INSERT INTO agent(time_started_unix_utc, time_finished_unix_utc, agent_uuid, name, http_user_agent)"
            " VALUES (?, ?, ?, ?, 'test-agent')", (started, started + 3600, uuid7().bytes, name))
        self.conn.commit()
        return cur.lastrowid

    def agent_uuid(self, agent_id: int) -> bytes:
        """The agent_uuid bytes of ``agent_id``."""
        return self.conn.execute("SELECT agent_uuid FROM agent WHERE agent_id = ?", (agent_id,)).fetchone()[0]

    def crawl(self, agent_id: int, url: str, t: int, exit_code: int = 20, *, html: str | None = None,
              status: int | None = None, crawl_type: int = 0,
              mimetype: str = "text/html; charset=utf-8", file_size: int | None = None,
              redirect_to: str | None = None, etag: str | None = None,
              last_modified: int | None = None, canonical: str | None = None) -> bytes:
        """Insert one crawl log entry with its request, file(+text) and redirect rows.

        A file row is written for exit 20 (with ``html`` as file_text) and 29 (no text);
        a redirect row when ``redirect_to`` is given; no request for 170/172/173.
        ``status`` defaults from the exit code. Returns the crawl_uuid bytes.
        """
        conn = self.conn
        url_id = intern_url(conn, url)
        crawl_uuid = uuid7().bytes
        cl = conn.execute(
            "INSERT INTO crawl_log(agent_id, url_id, crawl_type, crawl_uuid, time_started_unix_utc, time_taken_ms,"
            " exit_code, message) VALUES (?, ?, ?, ?, ?, 12, ?, NULL)",
            (agent_id, url_id, crawl_type, crawl_uuid, t, exit_code)).lastrowid
        request_id = None
        if exit_code not in NO_REQUEST_CODES:
            if status is None:
                status = {20: 200, 29: 200, 31: 301, 32: 302, 34: 304, 41: 410, 44: 404, 50: 500,
                          171: 200, 180: 200}.get(exit_code)
            request_id = conn.execute(
                "INSERT INTO request(crawl_log_id, url_id, time_sent_unix_utc, request_duration_ms,"
                " robotstxt_approved, exit_code, server_last_modified_unix_utc, http_status_code, http_etag)"
                " VALUES (?, ?, ?, 10, 1, ?, ?, ?, ?)",
                (cl, url_id, t, exit_code, last_modified, status, etag)).lastrowid
        if exit_code in (20, 29) and crawl_type == 0:
            body = html.encode("utf-8") if html is not None else b""
            file_id = conn.execute(
                "INSERT INTO file(crawl_log_id, request_id, url_id, last_modified_unix_utc, file_size, mimetype_id,"
                " canonical_url_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (cl, request_id, url_id, last_modified, file_size if file_size is not None else len(body),
                 intern_mimetype(conn, mimetype), intern_url(conn, canonical) if canonical else None)).lastrowid
            if html is not None:
                conn.execute("INSERT INTO file_text(file_id, text) VALUES (?, ?)", (file_id, html))
        if redirect_to is not None:
            conn.execute(
                "INSERT INTO redirect(crawl_log_id, request_id, url_id, last_modified_unix_utc, to_url_id,"
                " information_source, is_permanent, by_security_policy) VALUES (?, ?, ?, NULL, ?, 1, ?, 0)",
                (cl, request_id, url_id, intern_url(conn, redirect_to), exit_code == 31))
        conn.commit()
        return crawl_uuid


SUMMARY_TABLES = ("url", "origin", "mimetype", "mime_parameter", "entity_generation", "duplicate_summary",
                  "crawl_summary", "http_summary", "file_summary", "redirect_summary", "link_summary",
                  "document_description", "text_pile", "text_pile_v0_2", "token", "token_statistics")


def dump_db(path: str | Path) -> dict[str, list[tuple]]:
    """Every row of every summary table (and the FTS rows), sorted, for equality checks."""
    conn = register_functions(sqlite3.connect(str(path)))
    try:
        out = {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in SUMMARY_TABLES}
        out["full_text_entity_index"] = sorted(
            conn.execute("SELECT rowid, * FROM full_text_entity_index "
                         "WHERE full_text_entity_index MATCH 'any : \"any\"'").fetchall(), key=repr)
        return out
    finally:
        conn.close()


def semantic_dump(path: str | Path) -> dict[str, list[tuple]]:
    """The summary database's meaning without ids or UUIDs: generations by URL and time,
    duplicates by URL, crawl summaries by crawl uuid, FTS rows by URL."""
    conn = register_functions(sqlite3.connect(str(path)))
    try:
        gens = conn.execute("""
            SELECT u.str_url, eg.first_seen_unix_utc, eg.last_seen_unix_utc, eg.confirmed_end_unix_utc,
                   eg.marked_duplicate, hex(tp2.blake2b512_digest), rs.to_url_id IS NOT NULL
            FROM entity_generation eg JOIN url u USING (url_id)
            LEFT JOIN text_pile_v0_2 tp2 ON tp2.text_pile_id = eg.text_pile_v0_2_id
            LEFT JOIN redirect_summary rs USING (entity_generation_id)""").fetchall()
        dups = conn.execute("""
            SELECT us.str_url, s.first_seen_unix_utc, uo.str_url, o.first_seen_unix_utc,
                   d.duplicate_status_start_unix_utc, d.duplicate_status_end_unix_utc
            FROM duplicate_summary d
            JOIN entity_generation s ON s.entity_generation_id = d.subject_entity_generation_id
            JOIN url us ON us.url_id = s.url_id
            JOIN entity_generation o ON o.entity_generation_id = d.duplicate_of_entity_generation_id
            JOIN url uo ON uo.url_id = o.url_id""").fetchall()
        crawls = conn.execute("""
            SELECT hex(cs.crawl_uuid), u.str_url, eg.first_seen_unix_utc, cs.exit_code, cs.time_started_unix_utc,
                   hs.status_code
            FROM crawl_summary cs JOIN entity_generation eg USING (entity_generation_id)
            JOIN url u ON u.url_id = eg.url_id LEFT JOIN http_summary hs USING (crawl_summary_id)""").fetchall()
        fts = conn.execute("""
            SELECT u.str_url, f.title FROM full_text_entity_index f
            JOIN entity_generation eg ON eg.entity_generation_id = f.rowid JOIN url u USING (url_id)
            WHERE full_text_entity_index MATCH 'any : "any"'""").fetchall()
        return {"generations": sorted(gens, key=repr), "duplicates": sorted(dups, key=repr),
                "crawls": sorted(crawls, key=repr), "fts": sorted(fts, key=repr)}
    finally:
        conn.close()


def generations(path: str | Path) -> list[tuple]:
    """(str_url, first_seen, last_seen, confirmed_end, marked_duplicate, has_text_pile) by URL and time."""
    conn = register_functions(sqlite3.connect(str(path)))
    try:
        return conn.execute("""
            SELECT u.str_url, eg.first_seen_unix_utc, eg.last_seen_unix_utc, eg.confirmed_end_unix_utc,
                   eg.marked_duplicate, eg.text_pile_id IS NOT NULL
            FROM entity_generation eg JOIN url u USING (url_id)
            ORDER BY u.str_url, eg.first_seen_unix_utc, eg.entity_generation_id""").fetchall()
    finally:
        conn.close()
