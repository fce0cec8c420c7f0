"""A crawler database of N fetched pages, made in a minute from real crawls replicated.

The sources are crawler databases of real sites (the relevance benchmark's). Copy k of a
source gets its own origins (``c<k>-<host>``) and its own ids: every row of origin, url,
agent, crawl_log, request, file, file_text, redirect and crawl_candidate is copied by
SQL with its ids moved past the ones already there, its URLs rewritten, its UUIDs made
anew; media types are shared. The HTML is kept as it was (about 1.04 times the raw
bytes, as a crawl stores it), so the file has the size a crawl of that many pages makes.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from textpile.store.database import open_crawler_db

#: Per table: its id column (moved), the columns pointing at other tables' ids, and those
#: holding a UUID to make anew. Columns not named are copied as they are.
_TABLES = (
    ("origin", "origin_id", {}, ()),
    ("url", "url_id", {"origin_id": "origin"}, ()),
    ("agent", "agent_id", {}, ("agent_uuid",)),
    ("crawl_log", "crawl_log_id", {"agent_id": "agent", "url_id": "url"}, ("crawl_uuid",)),
    ("request", "request_id", {"crawl_log_id": "crawl_log", "url_id": "url"}, ()),
    ("file", "file_id", {"crawl_log_id": "crawl_log", "request_id": "request", "url_id": "url",
                         "canonical_url_id": "url", "mimetype_id": "mimetype"}, ()),
    ("file_text", None, {"file_id": "file"}, ()),
    ("redirect", "redirect_id", {"crawl_log_id": "crawl_log", "request_id": "request", "url_id": "url",
                                 "to_url_id": "url"}, ()),
    ("crawl_candidate", None, {"url_id": "url"}, ()),
)


def _columns(conn: sqlite3.Connection, schema: str, table: str) -> list[str]:
    return [r[1] for r in conn.execute("SELECT * FROM pragma_table_info(?, ?)", (table, schema))]


def _copy(conn: sqlite3.Connection, copy: int) -> int:
    """Copy the attached ``src`` once more into ``main``; return its files."""
    offsets = {table: conn.execute(f"SELECT coalesce(max({key}), 0) FROM main.{table}").fetchone()[0]
               for table, key, _, _ in _TABLES if key}
    offsets["mimetype"] = 0
    conn.execute("DROP TABLE IF EXISTS temp.mime_map")
    conn.execute("CREATE TEMP TABLE mime_map AS SELECT s.mimetype_id AS old, m.mimetype_id AS new "
                 "FROM src.mimetype s JOIN main.mimetype m ON m.str_mimetype = s.str_mimetype")
    for table, key, refs, uuids in _TABLES:
        columns = _columns(conn, "src", table)
        values = []
        for column in columns:
            target = refs.get(column) or (table if column == key else None)
            if column in uuids:
                values.append("randomblob(16)")
            elif target == "mimetype":
                values.append(f"(SELECT new FROM temp.mime_map WHERE old = {column})")
            elif target is not None:  # a NULL reference stays NULL
                values.append(f"{column} + {offsets[target]}")
            elif table == "origin" and column in ("host", "str_origin"):
                values.append(f"replace({column}, host, 'c{copy}-' || replace(host, '.', '-') || '.example')")
            elif table == "url" and column == "str_url":
                values.append(f"replace(str_url, (SELECT o.host FROM src.origin o WHERE o.origin_id = url.origin_id),"
                              f" 'c{copy}-' || replace((SELECT o.host FROM src.origin o "
                              f"WHERE o.origin_id = url.origin_id), '.', '-') || '.example')")
            else:
                values.append(column)
        conn.execute(f"INSERT INTO main.{table}({', '.join(columns)}) SELECT {', '.join(values)} FROM src.{table}")
    return conn.execute("SELECT count(*) FROM src.file_text").fetchone()[0]


def build_crawler_corpus(target: Path, sources: list[Path], pages: int, log=print) -> dict:
    """Write a crawler database with about ``pages`` fetched pages at ``target`` (replaced)
    from copies of the crawler databases ``sources``; return figures (pages, bytes, seconds)."""
    started = time.monotonic()
    for p in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
        p.unlink(missing_ok=True)
    conn = open_crawler_db(target)
    conn.execute("PRAGMA synchronous=OFF")
    written = copy = 0
    while written < pages:
        for source in sources:
            if written >= pages:
                break
            conn.execute("ATTACH DATABASE ? AS src", (f"file:{source}?mode=ro",))
            with conn:
                conn.execute("INSERT OR IGNORE INTO main.mimetype(mime_type, mime_subtype, mime_suffix, charset, "
                             "str_mimetype) SELECT mime_type, mime_subtype, mime_suffix, charset, str_mimetype "
                             "FROM src.mimetype")
                written += _copy(conn, copy)
            conn.execute("DETACH DATABASE src")
        copy += 1
        log(f"   crawler corpus: {written}/{pages} pages ({time.monotonic() - started:.0f} s)")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return {"pages": written, "bytes": target.stat().st_size, "seconds": time.monotonic() - started}
