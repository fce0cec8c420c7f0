"""Stage 3 of the summarizer: staged batches and scrape results into the summary database.

Per batch, in one SQLite transaction: export what the batch needs from the summary
database (already integrated crawl uuids, the latest generation of each URL) through
Arrow into DuckDB, let :mod:`textpile.summarize.events` decide, then write
entity_generation, text_pile_v0_2, text_pile (as spans of the Gen2 text: text_pile_gen1),
file_summary, document_description, link_summary (link_target and link_list: each distinct
link once), redirect_summary, crawl_summary and http_summary rows, textpile's page rows
(the source of the modified date, the main text's fingerprint: schemas/summary/textpile_pages.sql),
close generations, and reconcile exact and near duplicates (:mod:`textpile.summarize.duplicates`). A batch is
either wholly integrated or not at all, so an interrupted run leaves a consistent
database and the next run continues; crawls already summarized are skipped, so
integrating the same batch twice changes nothing.

Placeholder generations: every crawl_summary needs a generation. A crawl that neither
brings content nor finds an existing generation of its URL (a 404 of a never-seen URL,
a connection error, a robots.txt fetch, a crawl blocked by robots.txt) gets a
*placeholder generation*: no text pile, no file or redirect summary, first_seen =
last_seen = confirmed_end = the crawl's time, so it is closed from the start and never
searchable. Later such crawls of the URL attach to it (it is the URL's latest generation).

crawl_summary columns: time_started_unix_utc is the crawl's last request's time sent (else
the crawl log's time started), request_duration_ms that request's duration (else the
crawl log's time_taken_ms), exit_code the crawl log's exit code, was_robotstxt_approved
the request's flag (without a request: 0 for 170 blocked_by_robots_txt, else 1).

Source: unobtanium-documentation.txt, pages "Summarizing", "Entity Generation",
"Crawl Summary", "Duplicate Types", "Database Batching".
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from textpile.errors import TextpileError
from textpile.gc_pause import collections_paused
from textpile.ids import uuid7_bytes
from textpile.store.gen2_piles import store_gen2
from textpile.store.links import LinkStore
from textpile.store.mimetypes import intern_mimetype
from textpile.store.text_piles import GEN1_FIELDS, store_gen1
from textpile.store.urls import UrlError, intern_url
from textpile.summarize import duplicates
from textpile.summarize.scrape.fingerprint import bands, title_key
from textpile.summarize.events import INTEGRATED_SCHEMA, PRIOR_SCHEMA, decide_batch
from textpile.summarize.interrupts import duckdb_interrupts
from textpile.summarize.scrape.result import LOCATION_FLAGS
from textpile.summarize.scrape_stage import ScrapedRows
from textpile.summarize.staging import rows_to_table, table_path


@dataclass
class IntegrationReport:
    """What integrating changed in the summary database: one batch (:func:`integrate_batch`)
    or, summed with :meth:`add`, a whole :func:`~textpile.summarize.pipeline.integrate_staged` run."""

    crawls_integrated: int = 0
    crawls_skipped: int = 0
    self_duplicates: int = 0
    exact_duplicates: int = 0
    near_duplicates: int = 0
    generations_opened: int = 0
    generations_closed: int = 0
    seconds: float = 0.0
    placeholder_generations: int = 0
    duplicates_ended: int = 0
    links_skipped: int = 0
    skipped_link_examples: list[str] = field(default_factory=list)

    def add(self, batch: "IntegrationReport") -> None:
        """Add one batch's counts to this report."""
        for name in ("crawls_integrated", "crawls_skipped", "self_duplicates", "exact_duplicates", "near_duplicates",
                     "generations_opened", "generations_closed", "placeholder_generations",
                     "duplicates_ended", "links_skipped"):
            setattr(self, name, getattr(self, name) + getattr(batch, name))
        room = 5 - len(self.skipped_link_examples)
        self.skipped_link_examples.extend(batch.skipped_link_examples[:max(room, 0)])



class _Interner:
    """Per-batch caches of url and mimetype ids of the summary database."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.urls: dict[str, int] = {}
        self.mimetypes: dict[str, int] = {}

    def url(self, str_url: str) -> int:
        """Return the summary database's url_id of ``str_url`` (raises UrlError)."""
        url_id = self.urls.get(str_url)
        if url_id is None:
            url_id = self.urls[str_url] = intern_url(self.conn, str_url)
        return url_id

    def origin_of(self, url_id: int) -> int:
        """The origin_id of the summary database's ``url_id``."""
        return self.conn.execute("SELECT origin_id FROM url WHERE url_id = ?", (url_id,)).fetchone()[0]

    def mimetype(self, str_mimetype: str) -> int:
        """Return the summary database's mimetype_id of ``str_mimetype``."""
        mimetype_id = self.mimetypes.get(str_mimetype)
        if mimetype_id is None:
            mimetype_id = self.mimetypes[str_mimetype] = intern_mimetype(self.conn, str_mimetype)
        return mimetype_id


def _temp_values(conn: sqlite3.Connection, name: str, column: str, values: list) -> None:
    conn.execute(f"DROP TABLE IF EXISTS temp.{name}")
    conn.execute(f"CREATE TEMP TABLE {name} ({column} PRIMARY KEY)")
    conn.executemany(f"INSERT OR IGNORE INTO temp.{name} VALUES (?)", [(v,) for v in values])


def export_integrated(conn: sqlite3.Connection, crawl_uuids: list[bytes]) -> pa.Table:
    """Return the crawl uuids among ``crawl_uuids`` that already have a crawl_summary."""
    _temp_values(conn, "batch_crawl_uuid", "crawl_uuid BLOB", crawl_uuids)
    rows = conn.execute("SELECT DISTINCT cs.crawl_uuid FROM crawl_summary cs "
                        "JOIN temp.batch_crawl_uuid b ON b.crawl_uuid = cs.crawl_uuid").fetchall()
    return rows_to_table(rows, INTEGRATED_SCHEMA)


def export_prior(conn: sqlite3.Connection, str_urls: list[str]) -> pa.Table:
    """Return :data:`~textpile.summarize.events.PRIOR_SCHEMA` rows: per URL of ``str_urls``
    its latest whole-document generation (highest first_seen, then id) with what its key
    is made of."""
    _temp_values(conn, "batch_url", "str_url TEXT", str_urls)
    rows = conn.execute(
        """
        SELECT str_url, entity_generation_id, first_seen_unix_utc, last_seen_unix_utc,
               confirmed_end_unix_utc, gen2_digest, redirect_to, str_mimetype, file_size
        FROM (
            SELECT u.str_url, eg.entity_generation_id, eg.first_seen_unix_utc, eg.last_seen_unix_utc,
                   eg.confirmed_end_unix_utc, tp2.blake2b512_digest AS gen2_digest, ru.str_url AS redirect_to,
                   m.str_mimetype, fs.file_size,
                   row_number() OVER (PARTITION BY eg.url_id
                                      ORDER BY eg.first_seen_unix_utc DESC, eg.entity_generation_id DESC) AS rn
            FROM temp.batch_url b
            JOIN url u ON u.str_url = b.str_url
            JOIN entity_generation eg ON eg.url_id = u.url_id AND eg.url_fragment IS NULL
            LEFT JOIN text_pile_v0_2 tp2 ON tp2.text_pile_id = eg.text_pile_v0_2_id
            LEFT JOIN redirect_summary rs ON rs.entity_generation_id = eg.entity_generation_id
            LEFT JOIN url ru ON ru.url_id = rs.to_url_id
            LEFT JOIN file_summary fs ON fs.entity_generation_id = eg.entity_generation_id
            LEFT JOIN mimetype m ON m.mimetype_id = fs.mimetype_id
        ) WHERE rn = 1
        """).fetchall()
    return rows_to_table(rows, PRIOR_SCHEMA)


def _store_text_piles(conn: sqlite3.Connection, s: dict) -> tuple[int, int]:
    """Store the scraped file's Gen2 and Gen1 text piles once per digest; return their ids.
    Gen2 is stored packed (:func:`textpile.store.gen2_piles.store_gen2`), Gen1 as spans of
    the Gen2 text (:mod:`textpile.store.text_piles`)."""
    tp2 = store_gen2(conn, s["gen2_digest"], s["gen2_text"], s["gen2_metadata"], s["gen2_segmentation_cache"])
    tp1 = store_gen1(conn, s["gen1_digest"], [s[f"gen1_{name}"] for name in GEN1_FIELDS], tp2, s["gen2_text"])
    return tp1, tp2


#: The columns of scrape_link.parquet that :meth:`textpile.store.links.LinkStore.store`
#: takes, in its order (the target URL first, as a str_url to intern).
LINK_VALUES = ("to_url", "fragment", "rel_nofollow", "rel_me", "rel_tag", *LOCATION_FLAGS, "contains_headline",
               "destination_type", "link_locality", "html_tag_name", "text")
#: The columns of scrape_section.parquet that section_summary takes after the generation's id.
SECTION_VALUES = ("section_index", "anchor", "title", "level", "start_offset", "end_offset")


def _store_links(links_store: LinkStore, interner: _Interner, generation_id: int, links: list[tuple],
                 result: IntegrationReport) -> None:
    """Store the generation's ``links`` (tuples of :data:`LINK_VALUES`); a link whose URL
    cannot be interned is skipped and counted."""
    rows = []
    for link in links:
        try:
            to_url_id = interner.url(link[0])
        except UrlError as exc:
            result.links_skipped += 1
            if len(result.skipped_link_examples) < 5:
                result.skipped_link_examples.append(str(exc))
            continue
        rows.append((to_url_id, *link[1:]))
    links_store.store(generation_id, rows)


def _insert_generation(conn: sqlite3.Connection, url_id: int, first_seen: int, last_seen: int,
                       confirmed_end: int | None, tp1: int | None, tp2: int | None) -> int:
    cur = conn.execute(
        "INSERT INTO entity_generation(entity_generation_uuid, url_id, url_fragment, first_seen_unix_utc,"
        " last_seen_unix_utc, confirmed_end_unix_utc, marked_duplicate, text_pile_id, text_pile_v0_2_id)"
        " VALUES (?, ?, NULL, ?, ?, ?, 0, ?, ?)",
        (uuid7_bytes(), url_id, first_seen, last_seen, confirmed_end, tp1, tp2))
    return cur.lastrowid


def _store_page_rows(conn: sqlite3.Connection, gen_id: int, origin_id: int, s: dict) -> None:
    """textpile's page rows of a new generation (schemas/summary/textpile_pages.sql): the
    source of its modified date, its fingerprint and the fingerprint's blocks."""
    if s["time_updated_unix_utc"] is not None and s["time_updated_source"] is not None:
        conn.execute("INSERT INTO textpile_page_date(entity_generation_id, time_updated_source) VALUES (?, ?)",
                     (gen_id, s["time_updated_source"]))
    if s["simhash"] is not None:
        key = title_key(s["title"])
        conn.execute("INSERT INTO textpile_page_fingerprint(entity_generation_id, simhash, title_key) VALUES (?, ?, ?)",
                     (gen_id, s["simhash"], key))
        conn.executemany("INSERT INTO textpile_fingerprint_band(origin_id, title_key, band_key, entity_generation_id)"
                         " VALUES (?, ?, ?, ?)",
                         [(origin_id, key, band, gen_id) for band in bands(s["simhash"], duplicates.FINGERPRINT_BANDS)])


def _fetch_dicts(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> list[dict]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def _check_batch(batch_dir: Path) -> None:
    for name in ("crawl_log", "request", "file", "redirect", "scrape_file", "scrape_link", "scrape_section"):
        if not table_path(batch_dir, name).exists():
            hint = " (run scrape_staged / `textpile summarize` first)" if name.startswith("scrape") else ""
            raise TextpileError(f"{batch_dir}: missing {name}.parquet{hint}")


@duckdb_interrupts()
def integrate_batch(conn: sqlite3.Connection, batch_dir: str | Path) -> IntegrationReport:
    """Integrate one staged and scraped batch into the open summary database ``conn``.

    Runs in one ``BEGIN IMMEDIATE`` transaction, committed at the end and rolled back on
    any error or interrupt (DuckDB's query interruption is raised as KeyboardInterrupt).

    Raises:
        TextpileError: the batch folder lacks one of its Parquet files.
    """
    batch_dir = Path(batch_dir)
    _check_batch(batch_dir)
    result = IntegrationReport()
    staged = duckdb.connect()
    try:
        crawl_rows = staged.execute("SELECT crawl_uuid, str_url FROM read_parquet(?)",
                                    [str(table_path(batch_dir, "crawl_log"))]).fetchall()
    finally:
        staged.close()
    if not crawl_rows:
        return result
    saved_isolation = conn.isolation_level
    conn.isolation_level = None
    conn.execute("BEGIN IMMEDIATE")
    try:
        # the collector paused: 0.2 of the 0.4-0.6 CPU-s of collections in the growth
        # benchmark's 1% run at 100K were inside integration (the run then left fewer than
        # 1,000 objects in reference cycles for the next collection)
        with collections_paused():
            _integrate_locked(conn, batch_dir, crawl_rows, result)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite rolls back by itself after SQLITE_FULL or an I/O error
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.isolation_level = saved_isolation
    return result


def _integrate_locked(conn: sqlite3.Connection, batch_dir: Path, crawl_rows: list[tuple],
                      result: IntegrationReport) -> None:
    """The writes of :func:`integrate_batch`, inside its transaction."""
    integrated = export_integrated(conn, [r[0] for r in crawl_rows])
    prior = export_prior(conn, sorted({r[1] for r in crawl_rows}))
    con = decide_batch(batch_dir, prior, integrated)
    try:
        _write_batch(conn, con, batch_dir, result)
    finally:
        con.close()
    result.crawls_skipped = len(crawl_rows) - result.crawls_integrated


def _write_batch(conn: sqlite3.Connection, con: duckdb.DuckDBPyConnection, batch_dir: Path,
                 result: IntegrationReport) -> None:
    generations = _fetch_dicts(con, """
        SELECT g.*, e.file_id, e.file_size, e.str_mimetype, e.canonical_str_url, e.redirect_to,
               e.information_source, e.by_security_policy, e.gen2_digest IS NOT NULL AS has_pile
        FROM generations g LEFT JOIN events e ON e.crawl_log_id = g.opening_crawl_log_id
        ORDER BY g.str_url, g.gen_seq""")
    # An opening generation's scrape results are read when its turn comes, a chunk's row
    # group at a time (the staged files are in this order: by URL, then time), instead of
    # the whole batch's: its texts and links are 50 MiB of Arrow for 526 documentation
    # pages, and more once read.
    scraped, links, sections = (ScrapedRows(table_path(batch_dir, name))
                                for name in ("scrape_file", "scrape_link", "scrape_section"))
    try:
        generation_ids, touched = _write_generations(conn, generations, scraped, links, sections, result)
    finally:
        for rows in (scraped, links, sections):
            rows.close()
        # Arrow's allocator keeps the row groups' freed buffers for later; give them back.
        pa.default_memory_pool().release_unused()

    events = _fetch_dicts(con, """
        SELECT crawl_uuid, agent_uuid, crawl_type, exit_code, str_url, gen_seq, t, duration_ms,
               robotstxt_approved, http_status_code, http_etag, self_duplicate
        FROM events ORDER BY t, crawl_log_id""")
    for e in events:
        cur = conn.execute(
            "INSERT INTO crawl_summary(entity_generation_id, was_robotstxt_approved, crawl_type, crawl_uuid,"
            " agent_uuid, time_started_unix_utc, exit_code, request_duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (generation_ids[(e["str_url"], e["gen_seq"])], bool(e["robotstxt_approved"]), e["crawl_type"],
             e["crawl_uuid"], e["agent_uuid"], e["t"], e["exit_code"], e["duration_ms"]))
        if e["http_status_code"] is not None:
            conn.execute("INSERT INTO http_summary(crawl_summary_id, status_code, etag) VALUES (?, ?, ?)",
                         (cur.lastrowid, e["http_status_code"], e["http_etag"]))
        result.self_duplicates += bool(e["self_duplicate"])
    result.crawls_integrated = len(events)
    if events:
        batch_time = max(e["t"] for e in events)
        counts = duplicates.reconcile(conn, touched, batch_time)
        result.exact_duplicates += counts.exact
        result.near_duplicates += counts.near
        result.duplicates_ended += counts.ended


def _one(scraped: ScrapedRows, file_id: int) -> dict:
    """The scrape_file row of ``file_id`` (an opening generation with a text pile has one).

    Raises:
        TextpileError: the batch's scrape_file.parquet has no row for it.
    """
    rows = scraped.rows(file_id)
    if len(rows) != 1:
        raise TextpileError(f"scrape_file.parquet holds {len(rows)} rows of file {file_id}, expected 1")
    return rows[0]


def _write_generations(conn: sqlite3.Connection, generations: list[dict], scraped: ScrapedRows,
                       links: ScrapedRows, sections: ScrapedRows,
                       result: IntegrationReport) -> tuple[dict[tuple[str, int], int], list[int]]:
    """Insert or update the batch's generations, in the order of ``generations``, with their
    text piles, file or redirect summary, description, links and sections, counting them in
    ``result``. Returns the entity_generation_id of each (str_url, gen_seq) and the
    generations opened or closed (their duplicate groups are rechecked)."""
    interner = _Interner(conn)
    links_store = LinkStore(conn)
    generation_ids: dict[tuple[str, int], int] = {}
    touched: list[int] = []  # generations opened or closed: their duplicate groups are rechecked
    for g in generations:
        key = (g["str_url"], g["gen_seq"])
        end = g["closed_at"] if g["closed_at"] is not None else g["next_first_seen"]
        if g["gen_seq"] == 0:
            if g["prior_generation_id"] is None:
                url_id = interner.url(g["str_url"])
                generation_ids[key] = _insert_generation(conn, url_id, g["min_t"], g["min_t"], g["min_t"], None, None)
                result.placeholder_generations += 1
                continue
            gen_id = generation_ids[key] = g["prior_generation_id"]
            if g["extend_to"] is not None:
                conn.execute("UPDATE entity_generation SET last_seen_unix_utc = max(last_seen_unix_utc, ?)"
                             " WHERE entity_generation_id = ?", (g["extend_to"], gen_id))
            if end is not None:
                cur = conn.execute("UPDATE entity_generation SET confirmed_end_unix_utc = ?"
                                   " WHERE entity_generation_id = ? AND confirmed_end_unix_utc IS NULL", (end, gen_id))
                if cur.rowcount:
                    result.generations_closed += 1
                    touched.append(gen_id)
            continue
        url_id = interner.url(g["str_url"])
        tp1 = tp2 = s = None
        if g["has_pile"]:
            s = _one(scraped, g["file_id"])
            tp1, tp2 = _store_text_piles(conn, s)
        first_seen = g["first_seen"]
        last_seen = max(first_seen, g["extend_to"] or first_seen)
        gen_id = generation_ids[key] = _insert_generation(conn, url_id, first_seen, last_seen, end, tp1, tp2)
        result.generations_opened += 1
        result.generations_closed += end is not None
        touched.append(gen_id)
        if g["redirect_to"] is not None and g["file_id"] is None:
            conn.execute("INSERT INTO redirect_summary(entity_generation_id, to_url_id, information_source,"
                         " by_security_policy, to_url_fragment) VALUES (?, ?, ?, ?, NULL)",
                         (gen_id, interner.url(g["redirect_to"]), g["information_source"],
                          bool(g["by_security_policy"])))
            continue
        mimetype_id = interner.mimetype(g["str_mimetype"]) if g["str_mimetype"] is not None else None
        canonical_id = interner.url(g["canonical_str_url"]) if g["canonical_str_url"] is not None else None
        conn.execute("INSERT INTO file_summary(entity_generation_id, file_size, mimetype_id, canonical_url_id)"
                     " VALUES (?, ?, ?, ?)", (gen_id, g["file_size"], mimetype_id, canonical_id))
        if s is not None:
            conn.execute(
                "INSERT INTO document_description(entity_generation_id, time_created_unix_utc, time_updated_unix_utc,"
                " primary_language, title, primary_headline, description, indexiness) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (gen_id, s["time_created_unix_utc"], s["time_updated_unix_utc"], s["primary_language"], s["title"],
                 s["primary_headline"], s["description"], s["indexiness"]))
            _store_page_rows(conn, gen_id, interner.origin_of(url_id), s)
            _store_links(links_store, interner, gen_id, links.values(g["file_id"], LINK_VALUES), result)
            conn.executemany(
                "INSERT INTO section_summary(entity_generation_id, section_index, anchor, title, level,"
                " start_offset, end_offset) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(gen_id, *row) for row in sections.values(g["file_id"], SECTION_VALUES)])
    return generation_ids, touched
