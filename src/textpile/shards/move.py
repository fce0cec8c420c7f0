"""Moving a site to the shard the shard table assigns it now, losing nothing.

The crawler database rows of the site move from the shard holding them to the assigned
one: its crawl log entries with their requests, files, file texts and redirects, its
crawl candidates, sitemaps and feeds with what they listed, the site links found on its
pages and its discovery check. URL, origin, media type and agent rows they refer to are
found in the target by their unique natural keys (``str_url``, ``str_origin``,
``str_mimetype``, ``agent_uuid``) and added when missing; ids are the target's own.

Order, so that a crash at any point loses nothing: the rows are copied into the target
and committed; the copy is compared with the source, row by row without ids
(:func:`site_rows`); only then are they deleted from the source, in a second transaction.
A move interrupted between the two leaves the site in both shards and is finished by
running it again (crawl log entries already in the target, by ``crawl_uuid``, are not
copied twice).

The summary databases are derived from the crawler databases ("Summarizing" is
repeatable from the crawl logs, unobtanium-documentation.txt): the target's is brought up
to date by summarizing (its new crawl log entries are integrated), the source's is
summarized anew from its crawler database into a new file that replaces it, so the site's
entities leave it. Published copies are then published again.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from textpile.crawl.crawldb.recovery import crawl_lock_path
from textpile.errors import TextpileError
from textpile.shards.config import Shards, site_of
from textpile.shards.handoff import links_into_site, site_links_away
from textpile.store.database import open_crawler_db
from textpile.store.locks import refuse_when_locked
from textpile.summarize.pipeline import summary_lock_path

#: Tables of a crawler database a move knows how to handle: moved with the site, or
#: dictionary rows found by natural key (url, origin, mimetype, mime_parameter, agent), or
#: kept where they are (textpile_archive_import: one row per imported archive and agent;
#: textpile_handoff, textpile_handoff_taken and textpile_handoff_source, the shard's outbox
#: and read positions (and which database each is of) of
#: :mod:`textpile.shards.handoff`: what it handed off stays addressed to the site's shard,
#: and a row taken in after the move by a shard that lost the site is forwarded; the
#: site's own links to other shards' sites are handed off again from its new shard).
#: A table not listed makes the move refuse, so that a new table is never left behind.
KNOWN_TABLES = frozenset({
    "unobtanium_database_info", "origin", "url", "mimetype", "mime_parameter", "agent", "crawl_log", "request",
    "file", "file_text", "redirect", "crawl_candidate", "textpile_meta_resource", "textpile_listed_url",
    "textpile_listed_change", "textpile_site_link", "textpile_site_check", "textpile_archive_import",
    "textpile_recrawl", "textpile_page_links", "textpile_handoff", "textpile_handoff_taken",
    "textpile_handoff_source",
})

# Each query selects the rows of one table belonging to the site of origin id ? in schema
# {s}, with ids replaced by natural keys: the form in which a move copies and compares them.
_SITE = "SELECT url_id FROM {s}.url WHERE origin_id = :origin"
_LOGS = f"SELECT crawl_log_id FROM {{s}}.crawl_log WHERE url_id IN ({_SITE})"
_URL = "(SELECT str_url FROM {s}.url WHERE url_id = {col})"
_SITE_ROWS: dict[str, str] = {
    "crawl_log": "SELECT a.agent_uuid, " + _URL.format(s="{s}", col="c.url_id") + ", c.crawl_type, c.crawl_uuid, "
                 "c.time_started_unix_utc, c.time_taken_ms, c.exit_code, c.message FROM {s}.crawl_log c "
                 f"JOIN {{s}}.agent a ON a.agent_id = c.agent_id WHERE c.crawl_log_id IN ({_LOGS})",
    "request": "SELECT c.crawl_uuid, " + _URL.format(s="{s}", col="r.url_id") + ", r.time_sent_unix_utc, "
               "r.request_duration_ms, r.robotstxt_approved, r.exit_code, r.server_last_modified_unix_utc, "
               "r.http_status_code, r.http_etag, r.request_id FROM {s}.request r "
               "JOIN {s}.crawl_log c ON c.crawl_log_id = r.crawl_log_id "
               f"WHERE r.crawl_log_id IN ({_LOGS})",
    "file": "SELECT c.crawl_uuid, f.request_id, " + _URL.format(s="{s}", col="f.url_id") + ", "
            "f.last_modified_unix_utc, f.file_size, m.str_mimetype, "
            + _URL.format(s="{s}", col="f.canonical_url_id") + ", t.text, f.file_id FROM {s}.file f "
            "JOIN {s}.crawl_log c ON c.crawl_log_id = f.crawl_log_id "
            "JOIN {s}.mimetype m ON m.mimetype_id = f.mimetype_id "
            "LEFT JOIN {s}.file_text t ON t.file_id = f.file_id "
            f"WHERE f.crawl_log_id IN ({_LOGS})",
    "redirect": "SELECT c.crawl_uuid, d.request_id, " + _URL.format(s="{s}", col="d.url_id") + ", "
                "d.last_modified_unix_utc, " + _URL.format(s="{s}", col="d.to_url_id") + ", "
                "d.information_source, d.is_permanent, d.by_security_policy, d.redirect_id FROM {s}.redirect d "
                "JOIN {s}.crawl_log c ON c.crawl_log_id = d.crawl_log_id "
                f"WHERE d.crawl_log_id IN ({_LOGS})",
    "crawl_candidate": "SELECT " + _URL.format(s="{s}", col="k.url_id") + ", k.last_crawl_time_unix_utc, "
                       "k.last_crawl_exit_code, k.last_contentful_crawl_time_unix_utc, "
                       f"k.last_contentful_http_etag FROM {{s}}.crawl_candidate k WHERE k.url_id IN ({_SITE})",
    "textpile_meta_resource": "SELECT " + _URL.format(s="{s}", col="m.url_id") + ", m.kind, m.found_via, m.depth, "
                              "m.first_seen_unix_utc, m.last_read_unix_utc, m.entries, m.lastmod_kept "
                              f"FROM {{s}}.textpile_meta_resource m WHERE m.url_id IN ({_SITE})",
    "textpile_recrawl": "SELECT " + _URL.format(s="{s}", col="r.url_id") + ", r.interval_s, r.content_digest, "
                        f"r.unchanged_answers FROM {{s}}.textpile_recrawl r WHERE r.url_id IN ({_SITE})",
    "textpile_page_links": "SELECT " + _URL.format(s="{s}", col="p.url_id") + ", p.links "
                           f"FROM {{s}}.textpile_page_links p WHERE p.url_id IN ({_SITE})",
    "textpile_listed_url": "SELECT " + _URL.format(s="{s}", col="l.url_id") + ", "
                           + _URL.format(s="{s}", col="l.listed_by_url_id") + ", l.modified_unix_utc, "
                           f"l.seen_unix_utc FROM {{s}}.textpile_listed_url l WHERE l.listed_by_url_id IN ({_SITE})",
    "textpile_listed_change": "SELECT " + _URL.format(s="{s}", col="x.url_id")
                              + f" FROM {{s}}.textpile_listed_change x WHERE x.url_id IN ({_SITE})",
    "textpile_site_link": "SELECT " + _URL.format(s="{s}", col="k.from_url_id") + ", o.str_origin, k.links, "
                          "k.seen_unix_utc FROM {s}.textpile_site_link k "
                          "JOIN {s}.origin o ON o.origin_id = k.to_origin_id "
                          f"WHERE k.from_url_id IN ({_SITE})",
    "textpile_site_check": "SELECT o.str_origin, " + _URL.format(s="{s}", col="k.start_url_id") + ", "
                           "k.checked_unix_utc, k.exit_code, k.relevant, k.verdict FROM {s}.textpile_site_check k "
                           "JOIN {s}.origin o ON o.origin_id = k.origin_id WHERE k.origin_id = :origin",
}
#: The columns of each table's rows as :func:`site_rows` gives them (the internal ids
#: request_id, file_id, redirect_id are left out; file rows name their request by position).
MOVED_TABLES = tuple(_SITE_ROWS)


@dataclass
class MoveReport:
    """What :func:`move_site` did."""

    site: str
    target: str
    #: The shards the site's rows were moved from (none when it was on the target already).
    sources: list[str] = field(default_factory=list)
    #: Rows moved per table (summed over the sources).
    rows: dict[str, int] = field(default_factory=dict)
    #: The crawl runs (agent UUID hex) that had entries of the site, in a source.
    crawl_runs: list[str] = field(default_factory=list)
    #: The shards whose summary database was summarized (anew, for a source) and published.
    resummarized: list[str] = field(default_factory=list)


def _origin_id(conn: sqlite3.Connection, schema: str, site: str) -> int | None:
    row = conn.execute(f"SELECT origin_id FROM {schema}.origin WHERE str_origin = ?", (site,)).fetchone()
    return None if row is None else row[0]


def _rows(conn: sqlite3.Connection, schema: str, table: str, origin: int) -> list[tuple]:
    return conn.execute(_SITE_ROWS[table].format(s=schema), {"origin": origin}).fetchall()


def site_rows(conn: sqlite3.Connection, site: str, schema: str = "main") -> dict[str, list[tuple]]:
    """Every crawler database row of ``site`` (an origin, :func:`site_of`) in ``schema``,
    per table (:data:`MOVED_TABLES`), with ids replaced by natural keys (agent UUID, URL,
    crawl UUID, media type) and sorted: equal results mean the same rows, whatever the ids.

    Shapes: ``crawl_log`` (agent_uuid, str_url, crawl_type, crawl_uuid, time_started,
    time_taken_ms, exit_code, message); ``request`` (crawl_uuid, str_url, time_sent, duration,
    robotstxt_approved, exit_code, server_last_modified, http_status_code, http_etag,
    ordinal); ``file`` (crawl_uuid, ordinal of its request or None, str_url, last_modified,
    file_size, str_mimetype, canonical str_url, text, ordinal); ``redirect`` (crawl_uuid,
    request ordinal or None, str_url, last_modified, to str_url, information_source,
    is_permanent, by_security_policy, ordinal); the others as their columns with URLs and
    origins as strings. An ordinal numbers a request, file or redirect among those of its
    crawl log entry, in id order.
    """
    origin = _origin_id(conn, schema, site)
    rows = {table: [] if origin is None else _rows(conn, schema, table, origin) for table in MOVED_TABLES}
    requests = _ordinals(rows["request"])
    rows["request"] = [(*row[:-1], requests[row[-1]]) for row in rows["request"]]
    for table in ("file", "redirect"):
        ordinals = _ordinals(rows[table])
        rows[table] = [(row[0], None if row[1] is None else requests[row[1]], *row[2:-1], ordinals[row[-1]])
                       for row in rows[table]]
    return {table: sorted(found, key=repr) for table, found in rows.items()}


def _ordinals(rows: list[tuple]) -> dict[int, int]:
    """Internal id (a row's last column) -> its rank among the rows of the same crawl log
    entry (a row's first column), in id order."""
    by_entry: dict[bytes, list[int]] = {}
    for row in rows:
        by_entry.setdefault(row[0], []).append(row[-1])
    return {rid: i for ids in by_entry.values() for i, rid in enumerate(sorted(ids))}


@contextmanager
def _writers_locked(shards: Shards, names: list[str]) -> Iterator[None]:
    """Hold the crawl and summary locks of the shards ``names``, refusing when a crawl,
    summarize or pipeline run holds one (TextpileError naming it)."""
    with ExitStack() as stack:
        for name in names:
            crawler = shards.folder(name) / "crawler.db"
            summary = shards.folder(name) / "summary.db"
            stack.enter_context(refuse_when_locked(crawl_lock_path(crawler), crawler,
                                                   "a crawl is running on this crawler database"))
            stack.enter_context(refuse_when_locked(summary_lock_path(summary), summary,
                                                   "another summarize or pipeline run is writing this summary database"))
        yield


def _url_id(conn: sqlite3.Connection, str_url: str | None, cache: dict[str, int]) -> int | None:
    """The target's url_id of ``str_url`` (copied from the source with its origin when missing)."""
    if str_url is None:
        return None
    if str_url not in cache:
        row = conn.execute("SELECT url_id FROM main.url WHERE str_url = ?", (str_url,)).fetchone()
        if row is None:
            port, scheme, host, str_origin, path, query, username, password = conn.execute(
                "SELECT o.port, o.scheme, o.host, o.str_origin, u.path, u.query, u.username, u.password "
                "FROM src.url u JOIN src.origin o ON o.origin_id = u.origin_id WHERE u.str_url = ?",
                (str_url,)).fetchone()
            conn.execute("INSERT OR IGNORE INTO main.origin (port, scheme, host, str_origin) VALUES (?, ?, ?, ?)",
                         (port, scheme, host, str_origin))
            (origin_id,) = conn.execute("SELECT origin_id FROM main.origin WHERE str_origin = ?",
                                        (str_origin,)).fetchone()
            row = (conn.execute("INSERT INTO main.url (origin_id, path, query, username, password, str_url) "
                                "VALUES (?, ?, ?, ?, ?, ?)",
                                (origin_id, path, query, username, password, str_url)).lastrowid,)
        cache[str_url] = row[0]
    return cache[str_url]


def _origin_in_target(conn: sqlite3.Connection, str_origin: str) -> int:
    row = conn.execute("SELECT origin_id FROM main.origin WHERE str_origin = ?", (str_origin,)).fetchone()
    if row is None:
        conn.execute("INSERT INTO main.origin (port, scheme, host, str_origin) "
                     "SELECT port, scheme, host, str_origin FROM src.origin WHERE str_origin = ?", (str_origin,))
        row = conn.execute("SELECT origin_id FROM main.origin WHERE str_origin = ?", (str_origin,)).fetchone()
    return row[0]


def _agent_id(conn: sqlite3.Connection, agent_uuid: bytes, cache: dict[bytes, int]) -> int:
    if agent_uuid not in cache:
        conn.execute("INSERT OR IGNORE INTO main.agent (time_started_unix_utc, time_finished_unix_utc, agent_uuid, "
                     "name, http_user_agent) SELECT time_started_unix_utc, time_finished_unix_utc, agent_uuid, name, "
                     "http_user_agent FROM src.agent WHERE agent_uuid = ?", (agent_uuid,))
        cache[agent_uuid] = conn.execute("SELECT agent_id FROM main.agent WHERE agent_uuid = ?",
                                         (agent_uuid,)).fetchone()[0]
    return cache[agent_uuid]


def _mimetype_id(conn: sqlite3.Connection, str_mimetype: str, cache: dict[str, int]) -> int:
    if str_mimetype not in cache:
        row = conn.execute("SELECT mimetype_id FROM main.mimetype WHERE str_mimetype = ?", (str_mimetype,)).fetchone()
        if row is None:
            source_id = conn.execute("SELECT mimetype_id FROM src.mimetype WHERE str_mimetype = ?",
                                     (str_mimetype,)).fetchone()[0]
            new_id = conn.execute("INSERT INTO main.mimetype (mime_type, mime_subtype, mime_suffix, charset, "
                                  "str_mimetype) SELECT mime_type, mime_subtype, mime_suffix, charset, str_mimetype "
                                  "FROM src.mimetype WHERE mimetype_id = ?", (source_id,)).lastrowid
            conn.execute("INSERT INTO main.mime_parameter (mimetype_id, key, value) SELECT ?, key, value "
                         "FROM src.mime_parameter WHERE mimetype_id = ? ORDER BY mime_parameter_id",
                         (new_id, source_id))
            row = (new_id,)
        cache[str_mimetype] = row[0]
    return cache[str_mimetype]


def _copy(conn: sqlite3.Connection, origin: int, counts: dict[str, int]) -> None:
    """Copy the site's rows from ``src`` into ``main`` (one transaction, the caller's)."""
    urls: dict[str, int] = {}
    agents: dict[bytes, int] = {}
    mimetypes: dict[str, int] = {}
    present = {row[0] for row in conn.execute(
        "SELECT crawl_uuid FROM main.crawl_log WHERE crawl_uuid IN "
        f"(SELECT crawl_uuid FROM src.crawl_log WHERE crawl_log_id IN ({_LOGS.format(s='src')}))",
        {"origin": origin})}
    logs: dict[bytes, int] = {}
    for agent_uuid, url, kind, crawl_uuid, started, taken, code, message in _rows(conn, "src", "crawl_log", origin):
        if crawl_uuid in present:
            continue
        logs[crawl_uuid] = conn.execute(
            "INSERT INTO main.crawl_log (agent_id, url_id, crawl_type, crawl_uuid, time_started_unix_utc, "
            "time_taken_ms, exit_code, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (_agent_id(conn, agent_uuid, agents), _url_id(conn, url, urls), kind, crawl_uuid, started, taken, code,
             message)).lastrowid
    counts["crawl_log"] = len(logs)
    requests: dict[int, int] = {}
    for *row, request_id in sorted(_rows(conn, "src", "request", origin), key=lambda r: r[-1]):
        if row[0] in logs:
            requests[request_id] = conn.execute(
                "INSERT INTO main.request (crawl_log_id, url_id, time_sent_unix_utc, request_duration_ms, "
                "robotstxt_approved, exit_code, server_last_modified_unix_utc, http_status_code, http_etag) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (logs[row[0]], _url_id(conn, row[1], urls), *row[2:])).lastrowid
    counts["request"] = len(requests)
    counts["file"] = counts["file_text"] = 0
    for crawl_uuid, request_id, url, modified, size, mimetype, canonical, text, _ in sorted(
            _rows(conn, "src", "file", origin), key=lambda r: r[-1]):
        if crawl_uuid in logs:
            file_id = conn.execute(
                "INSERT INTO main.file (crawl_log_id, request_id, url_id, last_modified_unix_utc, file_size, "
                "mimetype_id, canonical_url_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (logs[crawl_uuid], requests.get(request_id), _url_id(conn, url, urls), modified, size,
                 _mimetype_id(conn, mimetype, mimetypes), _url_id(conn, canonical, urls))).lastrowid
            counts["file"] += 1
            if text is not None:
                conn.execute("INSERT INTO main.file_text (file_id, text) VALUES (?, ?)", (file_id, text))
                counts["file_text"] += 1
    counts["redirect"] = 0
    for crawl_uuid, request_id, url, modified, to_url, source, permanent, forced, _ in sorted(
            _rows(conn, "src", "redirect", origin), key=lambda r: r[-1]):
        if crawl_uuid in logs:
            conn.execute("INSERT INTO main.redirect (crawl_log_id, request_id, url_id, last_modified_unix_utc, "
                         "to_url_id, information_source, is_permanent, by_security_policy) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (logs[crawl_uuid], requests.get(request_id), _url_id(conn, url, urls), modified,
                          _url_id(conn, to_url, urls), source, permanent, forced))
            counts["redirect"] += 1
    _copy_keyed(conn, origin, counts, urls)


def _copy_keyed(conn: sqlite3.Connection, origin: int, counts: dict[str, int], urls: dict[str, int]) -> None:
    """The site's rows of the tables keyed by URL or origin: replaced in the target (the
    source's are the site's state; the target had none unless a move was interrupted)."""
    for table, columns in (
            ("crawl_candidate", "url_id, last_crawl_time_unix_utc, last_crawl_exit_code, "
                                "last_contentful_crawl_time_unix_utc, last_contentful_http_etag"),
            ("textpile_meta_resource", "url_id, kind, found_via, depth, first_seen_unix_utc, last_read_unix_utc, "
                                       "entries, lastmod_kept"),
            ("textpile_recrawl", "url_id, interval_s, content_digest, unchanged_answers"),
            ("textpile_page_links", "url_id, links")):
        rows = _rows(conn, "src", table, origin)
        marks = ", ".join("?" * (columns.count(",") + 1))
        conn.executemany(f"INSERT OR REPLACE INTO main.{table} ({columns}) VALUES ({marks})",
                         [(_url_id(conn, row[0], urls), *row[1:]) for row in rows])
        counts[table] = len(rows)
    rows = _rows(conn, "src", "textpile_listed_url", origin)
    conn.executemany("INSERT OR REPLACE INTO main.textpile_listed_url (url_id, listed_by_url_id, modified_unix_utc, "
                     "seen_unix_utc) VALUES (?, ?, ?, ?)",
                     [(_url_id(conn, u, urls), _url_id(conn, by, urls), m, s) for u, by, m, s in rows])
    counts["textpile_listed_url"] = len(rows)
    rows = _rows(conn, "src", "textpile_listed_change", origin)
    conn.executemany("INSERT OR IGNORE INTO main.textpile_listed_change (url_id) VALUES (?)",
                     [(_url_id(conn, u, urls),) for (u,) in rows])
    counts["textpile_listed_change"] = len(rows)
    rows = _rows(conn, "src", "textpile_site_link", origin)
    conn.executemany("INSERT OR REPLACE INTO main.textpile_site_link (from_url_id, to_origin_id, links, seen_unix_utc) "
                     "VALUES (?, ?, ?, ?)",
                     [(_url_id(conn, u, urls), _origin_in_target(conn, o), n, s) for u, o, n, s in rows])
    counts["textpile_site_link"] = len(rows)
    rows = _rows(conn, "src", "textpile_site_check", origin)
    conn.executemany("INSERT OR REPLACE INTO main.textpile_site_check (origin_id, start_url_id, checked_unix_utc, "
                     "exit_code, relevant, verdict) VALUES (?, ?, ?, ?, ?, ?)",
                     [(_origin_in_target(conn, o), _url_id(conn, u, urls), *rest) for o, u, *rest in rows])
    counts["textpile_site_check"] = len(rows)


#: Deletion of the site's rows from the source, children first.
_DELETES = (
    f"DELETE FROM src.file_text WHERE file_id IN (SELECT file_id FROM src.file WHERE crawl_log_id IN ({_LOGS}))",
    f"DELETE FROM src.file WHERE crawl_log_id IN ({_LOGS})",
    f"DELETE FROM src.redirect WHERE crawl_log_id IN ({_LOGS})",
    f"DELETE FROM src.request WHERE crawl_log_id IN ({_LOGS})",
    f"DELETE FROM src.crawl_log WHERE url_id IN ({_SITE})",
    f"DELETE FROM src.crawl_candidate WHERE url_id IN ({_SITE})",
    f"DELETE FROM src.textpile_recrawl WHERE url_id IN ({_SITE})",
    f"DELETE FROM src.textpile_page_links WHERE url_id IN ({_SITE})",
    f"DELETE FROM src.textpile_listed_url WHERE listed_by_url_id IN ({_SITE})",
    f"DELETE FROM src.textpile_listed_change WHERE url_id IN ({_SITE})",
    f"DELETE FROM src.textpile_meta_resource WHERE url_id IN ({_SITE})",
    f"DELETE FROM src.textpile_site_link WHERE from_url_id IN ({_SITE})",
    "DELETE FROM src.textpile_site_check WHERE origin_id = :origin",
)


def _check_tables(conn: sqlite3.Connection, schema: str, path: Path) -> None:
    tables = {row[0] for row in conn.execute(
        f"SELECT name FROM {schema}.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
    unknown = sorted(tables - KNOWN_TABLES)
    if unknown:
        raise TextpileError(f"{path}: a move does not know the table(s) {', '.join(unknown)}, so it could lose "
                            "their rows of the site; nothing was moved")


def move_crawler_rows(source_db: Path, target_db: Path, site: str, handoff: tuple[Shards, str] | None = None
                      ) -> tuple[dict[str, int], list[str]]:
    """Move the rows of ``site`` from the crawler database ``source_db`` to ``target_db``
    (created, with its folder, when missing): copy and commit, compare, then delete from the source and
    commit. Returns (rows copied per table, agent UUID hex of the crawl runs that had entries
    of the site). The caller holds both databases' crawl locks. With ``handoff`` (the
    shard table and the target's name), the URLs the site's pages and listings lead to on
    sites of other shards are handed off from the target (written to its outbox, in the
    copy's transaction: :func:`textpile.shards.handoff.site_links_away`; the rows new
    there counted as ``textpile_handoff``), as the site's crawls there would have: the
    source's outbox rows for them go once its crawls no longer reach them. And the
    site's URLs that the source's other pages and listings lead to are handed off from
    the source to the target (in the same transaction, before the copy is compared and
    deleted from the source: :func:`textpile.shards.handoff.links_into_site`).

    Raises:
        DatabaseError: either file is no crawler database (as ``open_crawler_db``).
        TextpileError: a database has a table a move does not know (nothing moved), or the
            copy differs from the source after commit (the source is left as it was).
    """
    open_crawler_db(source_db, create=False).close()
    Path(target_db).parent.mkdir(parents=True, exist_ok=True)  # a new shard's folder
    counts: dict[str, int] = {}
    with closing(open_crawler_db(target_db)) as conn:
        conn.execute("ATTACH DATABASE ? AS src", (str(source_db),))
        _check_tables(conn, "src", source_db)
        _check_tables(conn, "main", target_db)
        origin = _origin_id(conn, "src", site)
        if origin is None:
            return counts, []
        runs = sorted(row[0].hex() for row in conn.execute(
            f"SELECT DISTINCT a.agent_uuid FROM src.agent a JOIN src.crawl_log c ON c.agent_id = a.agent_id "
            f"WHERE c.crawl_log_id IN ({_LOGS.format(s='src')})", {"origin": origin}))
        conn.execute("BEGIN IMMEDIATE")
        try:
            _copy(conn, origin, counts)
            if handoff is not None:
                away = site_links_away(conn, "src", origin, *handoff)
                before = conn.total_changes
                conn.executemany("INSERT OR IGNORE INTO main.textpile_handoff(shard, str_url, found_unix_utc)"
                                 " VALUES (?, ?, ?)", [(*row, int(time.time())) for row in away])
                counts["textpile_handoff"] = conn.total_changes - before
                # the links into the site from what stays, handed off from the source (before the
                # delete, so that a move stopped between the two leaves them there already)
                conn.executemany("INSERT OR IGNORE INTO src.textpile_handoff(shard, str_url, found_unix_utc)"
                                 " VALUES (?, ?, ?)", [(handoff[1], url, int(time.time()))
                                                       for url in links_into_site(conn, "src", origin)])
        except BaseException:
            conn.rollback()
            raise
        conn.commit()
        before, after = site_rows(conn, site, "src"), site_rows(conn, site, "main")
        for table in MOVED_TABLES:
            missing = set(before[table]) - set(after[table])
            if missing:
                raise TextpileError(f"{target_db}: {len(missing)} {table} row(s) of {site} did not arrive from "
                                    f"{source_db}; the source was left as it was")
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _DELETES:
                conn.execute(statement.format(s="src"), {"origin": origin})
        except BaseException:
            conn.rollback()
            raise
        conn.commit()
    return counts, runs


def holders_of(shards: Shards, site: str) -> list[str]:
    """The shards whose crawler database has rows of ``site`` (crawl log entries or crawl
    candidates), in table order."""
    found = []
    for name in shards.names:
        path = shards.folder(name) / "crawler.db"
        if not path.is_file():
            continue
        with closing(open_crawler_db(path, create=False, read_only=True)) as conn:
            origin = _origin_id(conn, "main", site)
            if origin is not None and conn.execute(
                    f"SELECT 1 FROM crawl_log WHERE url_id IN ({_SITE.format(s='main')}) UNION ALL "
                    f"SELECT 1 FROM crawl_candidate WHERE url_id IN ({_SITE.format(s='main')}) LIMIT 1",
                    {"origin": origin}).fetchone():
                found.append(name)
    return found


def move_site(shards: Shards, url: str, *, resummarize: Callable[[str, bool], None] | None = None) -> MoveReport:
    """Move the site of ``url`` to the shard ``shards`` assigns it (:meth:`Shards.shard_of`:
    change the overrides or the shard list first), from every other shard holding rows of it.

    ``resummarize(shard, anew)`` is then called for the target (``anew`` False) and each
    source (``anew`` True), holding no lock; :func:`resummarize_shard` is the one to pass
    (None: the summary databases are left to the next summarize). Module docstring: order
    and guarantees.

    Raises:
        ConfigError: ``url`` is no http(s) URL.
        TextpileError: a crawl, summarize or pipeline run holds a lock of one of the shards
            (nothing moved), or :func:`move_crawler_rows` refused.
    """
    site = site_of(url)
    target = shards.shard_of(site)
    report = MoveReport(site=site, target=target)
    sources = [name for name in holders_of(shards, site) if name != target]
    if not sources:
        return report
    target_db = shards.folder(target) / "crawler.db"
    with _writers_locked(shards, [target, *sources]):
        for source in sources:
            counts, runs = move_crawler_rows(shards.folder(source) / "crawler.db", target_db, site, (shards, target))
            report.sources.append(source)
            for table, count in counts.items():
                report.rows[table] = report.rows.get(table, 0) + count
            report.crawl_runs = sorted({*report.crawl_runs, *runs})
    if resummarize is not None:
        for name, anew in ((target, False), *((source, True) for source in sources)):
            resummarize(name, anew)
            report.resummarized.append(name)
    return report


def resummarize_shard(shards: Shards, name: str, anew: bool, *, embeddings: bool = True,
                      progress: bool = False) -> None:
    """Bring shard ``name``'s summary database in line with its crawler database after a
    move, then publish it again when it has a published copy (``published/summary.db``).

    ``anew``: summarize the whole crawler database into ``summary.db.rebuild`` and replace
    ``summary.db`` with it (a source shard: the moved site's entities leave); else summarize
    what is new into ``summary.db`` (the target). ``embeddings`` as ``summarize``.

    Raises:
        DatabaseError, TextpileError: as :func:`textpile.summarize.pipeline.summarize` and
            :func:`textpile.publish.publish`; another writer holds the summary lock.
    """
    from textpile.publish import publish
    from textpile.summarize.pipeline import summarize
    from textpile.summarize.rebuild import REBUILD_SUFFIX, replace_summary_file

    folder = shards.folder(name)
    crawler, summary = folder / "crawler.db", folder / "summary.db"
    if not crawler.is_file():
        return
    if anew:
        new = Path(f"{summary}{REBUILD_SUFFIX}")
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{new}{suffix}").unlink(missing_ok=True)
        summarize(crawler, new, progress=progress, embeddings=embeddings, scrape_processes=0)
        with refuse_when_locked(summary_lock_path(summary), summary,
                                "another summarize or pipeline run is writing this summary database"):
            replace_summary_file(new, summary)
    else:
        summarize(crawler, summary, progress=progress, embeddings=embeddings, scrape_processes=0)
    published = folder / "published" / "summary.db"
    if published.exists():
        publish(summary, published)
