"""Stage 1 of the summarizer: crawl log entries of the crawler database to Parquet.

Each batch of up to ``batch_size`` crawl log entries (in time order) becomes a folder
``batch-NNNNN/`` holding one zstd-compressed Parquet file per crawler table
(:data:`STAGED_TABLES`), with the URL, mimetype and agent ids already resolved to their
strings so that later stages never need the crawler database again.
Source: unobtanium-documentation.txt, pages "Summarizing" (fetch file information, cross
check with the summary database) and "Database Batching"; DESIGN.md "Data flow".
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from textpile.errors import DatabaseError, TextpileError
from textpile.folders import remove_folder
from textpile.store.database import open_crawler_db, sqlite_errors, sqlite_uri

BATCH_PREFIX = "batch-"

CRAWL_LOG_SCHEMA = pa.schema([
    ("crawl_log_id", pa.int64()), ("agent_uuid", pa.binary(16)), ("url_id", pa.int64()),
    ("str_url", pa.string()), ("crawl_type", pa.int64()), ("crawl_uuid", pa.binary(16)),
    ("time_started_unix_utc", pa.int64()), ("time_taken_ms", pa.int64()), ("exit_code", pa.int64()),
    ("message", pa.string()),
])
REQUEST_SCHEMA = pa.schema([
    ("request_id", pa.int64()), ("crawl_log_id", pa.int64()), ("str_url", pa.string()),
    ("time_sent_unix_utc", pa.int64()), ("request_duration_ms", pa.int64()),
    ("robotstxt_approved", pa.bool_()), ("exit_code", pa.int64()),
    ("server_last_modified_unix_utc", pa.int64()), ("http_status_code", pa.int64()),
    ("http_etag", pa.string()),
])
FILE_SCHEMA = pa.schema([
    ("file_id", pa.int64()), ("crawl_log_id", pa.int64()), ("request_id", pa.int64()),
    ("str_url", pa.string()), ("last_modified_unix_utc", pa.int64()), ("file_size", pa.int64()),
    ("str_mimetype", pa.string()), ("mime_essence", pa.string()), ("canonical_str_url", pa.string()),
])
FILE_TEXT_SCHEMA = pa.schema([("file_id", pa.int64()), ("text", pa.string())])
REDIRECT_SCHEMA = pa.schema([
    ("redirect_id", pa.int64()), ("crawl_log_id", pa.int64()), ("request_id", pa.int64()),
    ("str_url", pa.string()), ("last_modified_unix_utc", pa.int64()), ("to_str_url", pa.string()),
    ("information_source", pa.int64()), ("is_permanent", pa.bool_()), ("by_security_policy", pa.bool_()),
])

# table name -> (Parquet schema, SELECT over the crawler database restricted to a JSON id list)
STAGED_TABLES: dict[str, tuple[pa.Schema, str]] = {
    "crawl_log": (CRAWL_LOG_SCHEMA, """
        SELECT cl.crawl_log_id, a.agent_uuid, cl.url_id, u.str_url, cl.crawl_type, cl.crawl_uuid,
               cl.time_started_unix_utc, cl.time_taken_ms, cl.exit_code, cl.message
        FROM crawl_log cl JOIN agent a ON a.agent_id = cl.agent_id JOIN url u ON u.url_id = cl.url_id
        WHERE cl.crawl_log_id IN (SELECT value FROM json_each(?)) ORDER BY cl.crawl_log_id"""),
    "request": (REQUEST_SCHEMA, """
        SELECT r.request_id, r.crawl_log_id, u.str_url, r.time_sent_unix_utc, r.request_duration_ms,
               r.robotstxt_approved, r.exit_code, r.server_last_modified_unix_utc, r.http_status_code,
               r.http_etag
        FROM request r JOIN url u ON u.url_id = r.url_id
        WHERE r.crawl_log_id IN (SELECT value FROM json_each(?)) ORDER BY r.request_id"""),
    "file": (FILE_SCHEMA, """
        SELECT f.file_id, f.crawl_log_id, f.request_id, u.str_url, f.last_modified_unix_utc, f.file_size,
               m.str_mimetype, m.mime_type || '/' || m.mime_subtype, cu.str_url
        FROM file f JOIN url u ON u.url_id = f.url_id JOIN mimetype m ON m.mimetype_id = f.mimetype_id
        LEFT JOIN url cu ON cu.url_id = f.canonical_url_id
        WHERE f.crawl_log_id IN (SELECT value FROM json_each(?)) ORDER BY f.file_id"""),
    # the file ids in integration's order (write_batch); _row_groups reads their texts
    "file_text": (FILE_TEXT_SCHEMA, """
        SELECT f.file_id FROM file f JOIN file_text ft ON ft.file_id = f.file_id
        JOIN crawl_log cl ON cl.crawl_log_id = f.crawl_log_id JOIN url u ON u.url_id = cl.url_id
        WHERE f.crawl_log_id IN (SELECT value FROM json_each(?))
        ORDER BY u.str_url, cl.time_started_unix_utc, cl.crawl_log_id, f.file_id"""),
    "redirect": (REDIRECT_SCHEMA, """
        SELECT r.redirect_id, r.crawl_log_id, r.request_id, u.str_url, r.last_modified_unix_utc,
               tu.str_url, r.information_source, r.is_permanent, r.by_security_policy
        FROM redirect r JOIN url u ON u.url_id = r.url_id JOIN url tu ON tu.url_id = r.to_url_id
        WHERE r.crawl_log_id IN (SELECT value FROM json_each(?)) ORDER BY r.redirect_id"""),
}


#: The texts of the files a staged row group holds, by file_id (the order comes from the
#: ids); read as UTF-8 bytes and decoded by :func:`_decode_text`, which names a text that is
#: not UTF-8 (sqlite3's own error quotes the whole text, and a BLOB would stay bytes).
_FILE_TEXTS_SQL = "SELECT file_id, text FROM file_text WHERE file_id IN (SELECT value FROM json_each(?))"

#: Rows per Parquet row group of a staged table, where not :data:`DEFAULT_ROW_GROUP_ROWS`.
#: A row group is read whole, so ``file_text`` (a whole page per row, 94 KB on average on
#: documentation sites) is written 32 files to a row group: the scrape stage streams it
#: row group by row group (:func:`textpile.summarize.scrape_stage.iter_files_to_scrape`)
#: and staging itself holds at most one row group of texts (a few MB), not a batch's.
ROW_GROUP_ROWS = {"file_text": 32}
DEFAULT_ROW_GROUP_ROWS = 10_000


def batch_dirs(staging_dir: str | Path) -> list[Path]:
    """Return the ``batch-NNNNN`` folders under ``staging_dir`` in batch order (may be empty)."""
    root = Path(staging_dir)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith(BATCH_PREFIX)
                  and p.name[len(BATCH_PREFIX):].isdigit())


def table_path(batch_dir: Path, table: str) -> Path:
    """Path of the Parquet file of ``table`` in ``batch_dir``."""
    return Path(batch_dir) / f"{table}.parquet"


def temporary_path(path: Path) -> Path:
    """Where a Parquet file is written before it is renamed to ``path`` (``<name>.tmp``)."""
    return path.with_name(path.name + ".tmp")


def rows_to_table(rows: list[tuple], schema: pa.Schema) -> pa.Table:
    """Build an Arrow table of ``schema`` from SQLite rows (0/1 become booleans)."""
    columns = list(zip(*rows)) if rows else [() for _ in schema]
    arrays = []
    for col, f in zip(columns, schema):
        values = list(col)
        if pa.types.is_boolean(f.type):
            values = [None if v is None else bool(v) for v in values]
        arrays.append(pa.array(values, type=f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def pending_crawl_log_ids(crawler: sqlite3.Connection, *, agent_uuid: uuid.UUID | None = None,
                          summary_db: str | Path | None = None) -> list[int]:
    """Return the ids of crawl log entries not yet summarized, in time order.

    Time order is (time_started_unix_utc, crawl_log_id). With ``agent_uuid`` only that
    agent's (crawl run's) entries; with ``summary_db`` (an existing file) entries whose
    crawl_uuid already has a crawl_summary there are left out. The summary database is
    attached read-only; it is never written here.
    """
    params: list[object] = []
    where = []
    if agent_uuid is not None:
        where.append("cl.agent_id = (SELECT agent_id FROM agent WHERE agent_uuid = ?)")
        params.append(agent_uuid.bytes)
    attached = False
    if summary_db is not None and Path(summary_db).exists():
        with sqlite_errors(summary_db):
            crawler.execute("ATTACH DATABASE ? AS summary", (sqlite_uri(summary_db, mode="ro"),))
        attached = True
        where.append("NOT EXISTS (SELECT 1 FROM summary.crawl_summary cs WHERE cs.crawl_uuid = cl.crawl_uuid)")
    sql = "SELECT cl.crawl_log_id FROM crawl_log cl"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY cl.time_started_unix_utc, cl.crawl_log_id"
    try:
        return [row[0] for row in crawler.execute(sql, params)]
    finally:
        if attached:
            crawler.execute("DETACH DATABASE summary")


@dataclass(frozen=True)
class PendingRun:
    """A crawl run (agent) with crawl log entries not yet summarized: its UUID, how many
    such entries, and whether the run has ended (``time_finished_unix_utc`` set)."""

    agent_uuid: uuid.UUID
    crawl_log_entries: int
    finished: bool


def pending_runs(crawler_db: str | Path, summary_db: str | Path | None) -> list[PendingRun]:
    """The crawl runs of ``crawler_db`` whose crawl log entries are not all in
    ``summary_db`` (all of them when it does not exist), in agent order (oldest first).

    Raises:
        DatabaseError: ``crawler_db`` is missing, empty, not a crawler database, corrupt
            or locked; ``summary_db`` cannot be attached (the message names the file).
    """
    crawler = open_crawler_db(crawler_db, create=False, read_only=True)
    try:
        with sqlite_errors(crawler_db):
            ids = pending_crawl_log_ids(crawler, summary_db=summary_db)
            rows = crawler.execute(
                "SELECT a.agent_uuid, count(*), a.time_finished_unix_utc IS NOT NULL FROM crawl_log cl"
                " JOIN agent a ON a.agent_id = cl.agent_id WHERE cl.crawl_log_id IN (SELECT value FROM json_each(?))"
                " GROUP BY a.agent_id ORDER BY a.agent_id", (json.dumps(ids),)).fetchall()
    finally:
        crawler.close()
    return [PendingRun(uuid.UUID(bytes=bytes(raw)), count, bool(finished)) for raw, count, finished in rows]


def write_batch(crawler: sqlite3.Connection, crawl_log_ids: list[int], batch_dir: Path, *,
                crawler_db: str | Path) -> dict[str, int]:
    """Write the staged tables of ``crawl_log_ids`` from ``crawler`` (the open
    ``crawler_db``, named in errors) into ``batch_dir`` (replacing it).

    The folder is first written as ``<batch_dir>.tmp`` and renamed when complete, so a
    batch folder is either whole or absent; when writing fails (a full disk, Ctrl+C) the
    ``.tmp`` folder is removed before the error goes on. Rows are read from SQLite and written in row
    groups of :data:`ROW_GROUP_ROWS` (every table in its SELECT's order), so memory holds
    one row group, not the batch. Returns the row count per table and ``bytes_of_text``
    (UTF-8 bytes of the file texts).

    ``file_text`` is in the order in which integration opens the files' generations: by
    the crawl's URL, then its time (:mod:`textpile.summarize.integrate`). Scraping keeps
    that order, so integration reads the scrape results' row groups one after the other,
    each once, instead of jumping between them (it reads any order, more slowly).

    Raises:
        DatabaseError: a file text is not UTF-8 (stored as a BLOB: the documented column
            is TEXT, and a BLOB of UTF-8 is read as its text); the message names
            ``crawler_db`` and the file. sqlite3.Error: reading ``crawler`` failed.
    """
    batch_dir = Path(batch_dir)
    tmp = batch_dir.with_name(batch_dir.name + ".tmp")
    remove_folder(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    ids_json = json.dumps(crawl_log_ids)
    counts: dict[str, int] = {"bytes_of_text": 0}
    crawler.execute("BEGIN")  # one snapshot for all the batch's tables (the file ids, then their texts)
    try:
        for name, (schema, sql) in STAGED_TABLES.items():
            group = ROW_GROUP_ROWS.get(name, DEFAULT_ROW_GROUP_ROWS)
            counts[name] = 0
            with pq.ParquetWriter(table_path(tmp, name), schema, compression="zstd") as writer:
                for rows in _row_groups(crawler, crawler_db, name, sql, ids_json, group):
                    writer.write_table(rows_to_table(rows, schema), row_group_size=group)
                    counts[name] += len(rows)
                    if name == "file_text":
                        counts["bytes_of_text"] += sum(len(r[1].encode("utf-8")) for r in rows)
                if not counts[name]:
                    writer.write_table(rows_to_table([], schema))
    except BaseException:
        remove_folder(tmp, ignore_errors=True)
        raise
    finally:
        crawler.rollback()  # ends the read transaction (nothing was written)
    remove_folder(batch_dir, ignore_errors=True)
    os.replace(tmp, batch_dir)
    # Arrow's allocator keeps the row groups' freed memory (about 55 MiB after a batch of
    # documentation pages) for later use; give it back while the batch is being scraped.
    pa.default_memory_pool().release_unused()
    return counts


def _row_groups(crawler: sqlite3.Connection, crawler_db: str | Path, name: str, sql: str, ids_json: str,
                size: int) -> Iterator[list[tuple]]:
    """The rows of staged table ``name`` (``sql`` over the crawl log ids ``ids_json``), in
    lists of up to ``size``. For ``file_text`` the query gives the file ids in order and
    each list's texts are read by id, so no text goes through SQLite's sorter."""
    cursor = crawler.execute(sql, (ids_json,))
    if name != "file_text":
        while rows := cursor.fetchmany(size):
            yield rows
        return
    file_ids = [row[0] for row in cursor]
    for start in range(0, len(file_ids), size):
        ids = file_ids[start:start + size]
        crawler.text_factory = bytes
        try:
            texts = dict(crawler.execute(_FILE_TEXTS_SQL, (json.dumps(ids),)))
        finally:
            crawler.text_factory = str
        yield [(file_id, _decode_text(texts[file_id], file_id, crawler_db)) for file_id in ids]


def _decode_text(text: bytes | None, file_id: int, crawler_db: str | Path) -> str | None:
    """``text`` (file ``file_id``'s file_text as UTF-8 bytes, or a BLOB) as a str; None
    stays None.

    Raises:
        DatabaseError: ``text`` is not UTF-8 (SQLite's own error would quote the whole text).
    """
    if text is None:
        return None
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatabaseError(f"{crawler_db}: the file_text of file {file_id} is not UTF-8 text "
                            f"({exc.reason} at byte {exc.start} of {len(text)})") from None


def iter_batches(crawler_db: str | Path, staging_dir: str | Path, *, agent_uuid: uuid.UUID | None = None,
                 summary_db: str | Path | None = None, batch_size: int = 1000,
                 on_total: Callable[[int], None] | None = None) -> Iterator[tuple[Path, dict[str, int]]]:
    """Stage batch after batch, yielding ``(batch_dir, counts)`` after each is written.

    Existing ``batch-*`` folders in ``staging_dir`` are removed first, so staging again
    replaces the folder's contents. The list of pending entries is read once at the
    start (``on_total`` is called with their number); batches are numbered from 1.

    Raises:
        DatabaseError: ``crawler_db`` is missing, empty, not a crawler database, corrupt
            or locked (the message names the file); ``summary_db`` cannot be attached.
        TextpileError: ``batch_size`` is below 1.
        OSError: ``staging_dir`` cannot be created or written.
    """
    if batch_size < 1:
        raise TextpileError(f"batch size must be at least 1, got {batch_size}")
    crawler = open_crawler_db(crawler_db, create=False, read_only=True)
    # Staging reads each page once, in order: a memory-mapped file would only add the
    # pages read so far to this process's resident memory (the whole crawler database's
    # text by the last batch, 87 MiB for python3.11-doc) for the rest of the run.
    crawler.execute("PRAGMA mmap_size=0")
    try:
        root = Path(staging_dir)
        root.mkdir(parents=True, exist_ok=True)
        for old in batch_dirs(root):
            remove_folder(old)
        with sqlite_errors(crawler_db):
            ids = pending_crawl_log_ids(crawler, agent_uuid=agent_uuid, summary_db=summary_db)
        if on_total is not None:
            on_total(len(ids))
        for number, start in enumerate(range(0, len(ids), batch_size), start=1):
            batch_dir = root / f"{BATCH_PREFIX}{number:05d}"
            with sqlite_errors(crawler_db):
                counts = write_batch(crawler, ids[start:start + batch_size], batch_dir, crawler_db=crawler_db)
            yield batch_dir, counts
    finally:
        crawler.close()
