"""Deleting old crawl log entries from the crawler database (``delete old-crawl-log-entries``).

Source: unobtanium-documentation.txt, page "unobtanium-crawler", section
``delete old-crawl-log-entries``: delete old entries from the crawl log along with their
associated data, keeping the ``--keep-latest`` N latest entries of each page; a
simulation unless ``--apply``. "Associated data" is the crawl data tree (page "Crawl
Data Tree"): requests, files, file texts and redirects. crawl_candidate rows are kept:
they exist to survive clean-ups of the log (page "Crawler Database").
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from textpile.errors import TextpileError
from textpile.store.database import open_crawler_db, sqlite_errors

MAX_KEEP_LATEST = 2**63 - 1
"""The largest --keep-latest (SQLite's largest INTEGER)."""

_OLD_SQL = """
SELECT crawl_log_id, str_url, time_started_unix_utc, exit_code FROM (
    SELECT cl.crawl_log_id, u.str_url, cl.time_started_unix_utc, cl.exit_code,
           row_number() OVER (PARTITION BY cl.url_id
                              ORDER BY cl.time_started_unix_utc DESC, cl.crawl_log_id DESC) AS rn
    FROM crawl_log cl JOIN url u ON u.url_id = cl.url_id
) WHERE rn > ? ORDER BY str_url, time_started_unix_utc, crawl_log_id
"""

# Children first, so that foreign keys hold at every step.
_DELETES = (
    ("file_text", "DELETE FROM file_text WHERE file_id IN (SELECT file_id FROM file WHERE crawl_log_id IN "
                  "(SELECT id FROM temp.old_crawl))"),
    ("file", "DELETE FROM file WHERE crawl_log_id IN (SELECT id FROM temp.old_crawl)"),
    ("redirect", "DELETE FROM redirect WHERE crawl_log_id IN (SELECT id FROM temp.old_crawl)"),
    ("request", "DELETE FROM request WHERE crawl_log_id IN (SELECT id FROM temp.old_crawl)"),
    ("crawl_log", "DELETE FROM crawl_log WHERE crawl_log_id IN (SELECT id FROM temp.old_crawl)"),
)

_COUNTS = {
    "file_text": "SELECT count(*) FROM file_text WHERE file_id IN (SELECT file_id FROM file WHERE crawl_log_id IN "
                 "(SELECT id FROM temp.old_crawl))",
    "file": "SELECT count(*) FROM file WHERE crawl_log_id IN (SELECT id FROM temp.old_crawl)",
    "redirect": "SELECT count(*) FROM redirect WHERE crawl_log_id IN (SELECT id FROM temp.old_crawl)",
    "request": "SELECT count(*) FROM request WHERE crawl_log_id IN (SELECT id FROM temp.old_crawl)",
    "crawl_log": "SELECT count(*) FROM temp.old_crawl",
}


@dataclass
class DeletionPlan:
    """Crawl log entries older than the kept ones, and the rows that go with them.

    ``entries`` are ``(crawl_log_id, str_url, time_started_unix_utc, exit_code)``;
    ``rows`` maps table name to the number of rows deleted (or that would be).
    """

    entries: list[tuple[int, str, int, int]] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    applied: bool = False


def delete_old_crawl_log_entries(crawler_db: str | Path, keep_latest: int, *, apply: bool = False) -> DeletionPlan:
    """Find (and with ``apply`` delete, in one transaction) all but the ``keep_latest``
    latest crawl log entries of each URL, with their requests, files, file texts and
    redirects. "Latest" orders by time_started_unix_utc, then crawl_log_id.

    Raises:
        TextpileError: ``keep_latest`` is negative or above :data:`MAX_KEEP_LATEST`.
        DatabaseError: ``crawler_db`` is missing, empty or not a crawler database (it is
            left unchanged then), or is corrupt, read-only or locked.
    """
    if not 0 <= keep_latest <= MAX_KEEP_LATEST:
        raise TextpileError(f"--keep-latest must be from 0 to {MAX_KEEP_LATEST}, got {keep_latest}")
    conn = open_crawler_db(crawler_db, create=False)
    plan = DeletionPlan()
    try:
        conn.isolation_level = None
        _apply_plan(conn, crawler_db, plan, keep_latest, apply)
    finally:
        conn.close()
    return plan


def _apply_plan(conn: sqlite3.Connection, crawler_db: str | Path, plan: DeletionPlan, keep_latest: int,
                apply: bool) -> None:
    with sqlite_errors(crawler_db):
        conn.execute("BEGIN IMMEDIATE")
        try:
            plan.entries = conn.execute(_OLD_SQL, (keep_latest,)).fetchall()
            conn.execute("CREATE TEMP TABLE old_crawl (id INTEGER PRIMARY KEY)")
            conn.executemany("INSERT INTO temp.old_crawl VALUES (?)", [(e[0],) for e in plan.entries])
            plan.rows = {table: conn.execute(sql).fetchone()[0] for table, sql in _COUNTS.items()}
            if apply:
                for _table, sql in _DELETES:
                    conn.execute(sql)
                conn.execute("DROP TABLE temp.old_crawl")
                conn.execute("COMMIT")
                plan.applied = True
            else:
                conn.execute("ROLLBACK")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
