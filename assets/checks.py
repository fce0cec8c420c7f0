"""Asset checks on the summary database and its FTS index.

Each check is a plain function over a sqlite3 connection returning a :class:`CheckOutcome`
(so that ``published_index`` and the tests can run them too), wrapped by an
``@asset_check``. The summary-database checks are blocking: a failure stops the assets
downstream (the FTS index, and so the published copy) from being rebuilt in that run.
"""

import sqlite3
from contextlib import closing
from dataclasses import dataclass, field

import sqlite_utils
from dagster import AssetCheckResult, MetadataValue, asset_check

from textpile.store.mimetypes import HTML_TYPES
from textpile.store.searchable import searchable
from textpile_dagster.assets.summary import fts_index, summary_db
from textpile_dagster.assets.tables import table
from textpile_dagster.resources import CrawlerDatabaseResource, SummaryDatabaseResource
from textpile.errors import DatabaseError
from textpile.store.gen2_piles import register_functions
from textpile.index.fulltext import ROWIDS_SQL as FTS_ROWIDS_SQL, fts_row_count
from textpile.store.database import (
    BASE_SCHEMA_VERSION,
    CRAWLER_SCHEMA_VERSION,
    SUMMARY_SCHEMA_VERSION,
    open_crawler_db,
    open_summary_db,
    schema_sql,
)

_SEARCHABLE = searchable("eg")

#: (table, column, referenced table, referenced column) for every reference in the summary
#: database (base schema 0.1.0 + summary schema 0.0.0). NULL references are not orphans.
#: The link_summary view's references are its tables' (link_list, link_target): reading
#: them through the view unpacked every page's links (1.7 of the 1.9 CPU-s at 10,000 pages).
SUMMARY_REFERENCES: tuple[tuple[str, str, str, str], ...] = (
    ("url", "origin_id", "origin", "origin_id"),
    ("mime_parameter", "mimetype_id", "mimetype", "mimetype_id"),
    ("entity_generation", "url_id", "url", "url_id"),
    ("entity_generation", "text_pile_id", "text_pile", "text_pile_id"),
    ("entity_generation", "text_pile_v0_2_id", "text_pile_v0_2", "text_pile_id"),
    ("text_pile_gen1", "text_pile_v0_2_id", "text_pile_v0_2", "text_pile_id"),
    ("duplicate_summary", "subject_entity_generation_id", "entity_generation", "entity_generation_id"),
    ("duplicate_summary", "duplicate_of_entity_generation_id", "entity_generation", "entity_generation_id"),
    ("crawl_summary", "entity_generation_id", "entity_generation", "entity_generation_id"),
    ("http_summary", "crawl_summary_id", "crawl_summary", "crawl_summary_id"),
    ("file_summary", "entity_generation_id", "entity_generation", "entity_generation_id"),
    ("file_summary", "mimetype_id", "mimetype", "mimetype_id"),
    ("file_summary", "canonical_url_id", "url", "url_id"),
    ("redirect_summary", "entity_generation_id", "entity_generation", "entity_generation_id"),
    ("redirect_summary", "to_url_id", "url", "url_id"),
    ("link_list", "entity_generation_id", "entity_generation", "entity_generation_id"),
    ("link_target", "link_to_url", "url", "url_id"),
    ("document_description", "entity_generation_id", "entity_generation", "entity_generation_id"),
    ("section_summary", "entity_generation_id", "entity_generation", "entity_generation_id"),
    ("token_statistics", "token_id", "token", "token_id"),
    ("token_statistics", "text_pile_id", "text_pile", "text_pile_id"),
)

#: Media types (type, subtype) whose ingested files must have a text pile: HTML.
TEXT_PILE_MEDIA_SUBTYPES = tuple(tuple(essence.split("/")) for essence in sorted(HTML_TYPES))


@dataclass
class CheckOutcome:
    """A check's verdict, a one-line description and metadata for the UI."""

    passed: bool
    description: str
    metadata: dict[str, object] = field(default_factory=dict)

    def result(self) -> AssetCheckResult:
        """As a Dagster ``AssetCheckResult``."""
        return AssetCheckResult(passed=self.passed, description=self.description, metadata=self.metadata)


def referential_integrity(conn: sqlite3.Connection) -> CheckOutcome:
    """Every reference of :data:`SUMMARY_REFERENCES` points at an existing row, and
    ``PRAGMA foreign_key_check`` reports nothing."""
    rows = []
    for source, column, target, target_column in SUMMARY_REFERENCES:
        sql = (
            f"SELECT count(*) FROM {source} t WHERE t.{column} IS NOT NULL AND NOT EXISTS "
            f"(SELECT 1 FROM {target} r WHERE r.{target_column} = t.{column})"
        )
        rows.append((f"{source}.{column}", f"{target}.{target_column}", int(conn.execute(sql).fetchone()[0])))
    fk_violations = conn.execute("PRAGMA foreign_key_check").fetchall()
    orphans = sum(n for _, _, n in rows)
    passed = orphans == 0 and not fk_violations
    return CheckOutcome(
        passed,
        "every reference resolves" if passed
        else f"{orphans} orphan references, {len(fk_violations)} foreign key violations",
        {
            "orphans": orphans,
            "foreign_key_violations": len(fk_violations),
            "foreign_key_violation_sample": MetadataValue.json([list(r) for r in fk_violations[:20]]),
            "references": table([("reference", "string"), ("points_at", "string"), ("orphans", "int")], rows),
        },
    )


def single_open_generation(conn: sqlite3.Connection) -> CheckOutcome:
    """At most one open generation per document (URL and fragment), and every closed
    generation ends no earlier than it began."""
    doubles = conn.execute(
        "SELECT url.str_url, eg.url_fragment, count(*) FROM entity_generation eg "
        "JOIN url ON url.url_id = eg.url_id WHERE eg.confirmed_end_unix_utc IS NULL "
        "GROUP BY eg.url_id, eg.url_fragment HAVING count(*) > 1 LIMIT 20"
    ).fetchall()
    backwards = int(conn.execute(
        "SELECT count(*) FROM entity_generation WHERE confirmed_end_unix_utc < first_seen_unix_utc"
    ).fetchone()[0])
    passed = not doubles and backwards == 0
    return CheckOutcome(
        passed,
        "one open generation per document" if passed
        else f"{len(doubles)} documents with several open generations, {backwards} ending before they begin",
        {"documents_with_several_open": MetadataValue.json([list(r) for r in doubles]),
         "generations_ending_before_start": backwards},
    )


def open_html_generations_have_text_piles(conn: sqlite3.Connection) -> CheckOutcome:
    """No open, non-duplicate generation whose latest crawl (by start time, then id) was a
    page fetch (crawl type 0) ending in file_ingested (20) of an HTML file lacks a text pile."""
    media = " OR ".join("(m.mime_type = ? AND m.mime_subtype = ?)" for _ in TEXT_PILE_MEDIA_SUBTYPES)
    params = [v for pair in TEXT_PILE_MEDIA_SUBTYPES for v in pair]
    lacking = conn.execute(
        "WITH latest AS (SELECT entity_generation_id, exit_code, crawl_type, row_number() OVER ("
        "  PARTITION BY entity_generation_id ORDER BY time_started_unix_utc DESC, crawl_summary_id DESC) AS n"
        "  FROM crawl_summary) "
        "SELECT eg.entity_generation_id, url.str_url FROM entity_generation eg "
        "JOIN latest l ON l.entity_generation_id = eg.entity_generation_id AND l.n = 1 "
        "JOIN file_summary fs ON fs.entity_generation_id = eg.entity_generation_id "
        "JOIN mimetype m ON m.mimetype_id = fs.mimetype_id "
        "JOIN url ON url.url_id = eg.url_id "
        "WHERE eg.confirmed_end_unix_utc IS NULL AND NOT eg.marked_duplicate AND eg.text_pile_id IS NULL "
        f"AND l.exit_code = 20 AND l.crawl_type = 0 AND ({media}) ORDER BY eg.entity_generation_id",
        params,
    ).fetchall()
    passed = not lacking
    return CheckOutcome(
        passed,
        "every open ingested HTML generation has a text pile" if passed
        else f"{len(lacking)} open ingested HTML generations lack a text pile",
        {"lacking": len(lacking), "sample": MetadataValue.json([list(r) for r in lacking[:20]])},
    )


def fts_matches_searchable(conn: sqlite3.Connection) -> CheckOutcome:
    """The FTS rowids are exactly the ids of the searchable generations (count and set)."""
    extra = [r[0] for r in conn.execute(
        f"{FTS_ROWIDS_SQL} EXCEPT "
        f"SELECT eg.entity_generation_id FROM entity_generation eg WHERE {_SEARCHABLE} ORDER BY 1"
    )]
    missing = [r[0] for r in conn.execute(
        f"SELECT eg.entity_generation_id FROM entity_generation eg WHERE {_SEARCHABLE} EXCEPT "
        f"{FTS_ROWIDS_SQL} ORDER BY 1"
    )]
    fts_rows = fts_row_count(conn)
    searchable = int(conn.execute(f"SELECT count(*) FROM entity_generation eg WHERE {_SEARCHABLE}").fetchone()[0])
    passed = not extra and not missing and fts_rows == searchable
    return CheckOutcome(
        passed,
        f"{fts_rows} FTS rows = {searchable} searchable generations" if passed
        else f"{fts_rows} FTS rows vs {searchable} searchable generations: {len(extra)} extra, {len(missing)} missing",
        {"fts_rows": fts_rows, "searchable_generations": searchable,
         "extra_rowids": MetadataValue.json(extra[:20]), "missing_rowids": MetadataValue.json(missing[:20])},
    )


def documented_columns(kind: str, version: str) -> dict[str, list[str]]:
    """Table -> column names of the documented DDL (base 0.1.0 + ``kind`` ``version``), read
    by sqlite-utils from an in-memory database made with that DDL (FTS shadow tables left
    out). A documented table that textpile keeps as a view (text_pile, link_summary)
    is listed with the view's columns; the views are part of the DDL."""
    with closing(register_functions(sqlite3.connect(":memory:"))) as conn:  # the views' columns need it
        conn.executescript(schema_sql("base", BASE_SCHEMA_VERSION))
        conn.executescript(schema_sql(kind, version))
        db = sqlite_utils.Database(conn)
        shadow = {f"{t}_{s}" for t in db.table_names(fts5=True) for s in ("data", "idx", "content", "docsize", "config")}
        names = [t for t in db.table_names() if t not in shadow] + db.view_names()
        return {t: [c.name for c in db[t].columns] for t in names}


def _database_schema(conn: sqlite3.Connection, kind: str, version: str) -> tuple[list[str], dict[str, str]]:
    expected = {
        "unobtanium_base_schema_version": BASE_SCHEMA_VERSION,
        "unobtanium_database_kind": kind,
        f"unobtanium_{kind}_schema_version": version,
    }
    info = dict(conn.execute("SELECT key, value FROM unobtanium_database_info"))
    problems = [f"{kind}: {key} is {info.get(key)!r}, expected {value!r}"
                for key, value in expected.items() if info.get(key) != value]
    db = sqlite_utils.Database(conn)
    present = set(db.table_names()) | set(db.view_names())
    for name, columns in sorted(documented_columns(kind, version).items()):
        if name not in present:
            problems.append(f"{kind}: table {name} missing")
            continue
        missing = [c for c in columns if c not in {col.name for col in db[name].columns}]
        if missing:
            problems.append(f"{kind}: table {name} lacks column(s) {', '.join(missing)}")
    return problems, info


def schema_versions(crawler_db_path: str, summary_db_path: str) -> CheckOutcome:
    """Both databases carry the documented ``unobtanium_database_info`` keys with the
    versions this textpile writes (base 0.1.0, crawler 1.0.0, summary 0.0.0) and every
    table and column of those schema versions (page "Database Info"; extra tables and
    columns, textpile extensions, are allowed)."""
    problems: list[str] = []
    infos: dict[str, dict[str, str]] = {}
    for kind, opener, path, version in (
        ("crawler", open_crawler_db, crawler_db_path, CRAWLER_SCHEMA_VERSION),
        ("summary", open_summary_db, summary_db_path, SUMMARY_SCHEMA_VERSION),
    ):
        try:
            with closing(opener(path, create=False, read_only=True)) as conn:
                found, infos[kind] = _database_schema(conn, kind, version)
                problems += found
        except DatabaseError as exc:
            problems.append(f"{kind}: {exc}")
    passed = not problems
    return CheckOutcome(
        passed,
        "documented schema versions present in both databases" if passed else "; ".join(problems),
        {"crawler_database_info": MetadataValue.json(infos.get("crawler", {})),
         "summary_database_info": MetadataValue.json(infos.get("summary", {})),
         "problems": MetadataValue.json(problems)},
    )


def summary_outcomes(conn: sqlite3.Connection) -> dict[str, CheckOutcome]:
    """Every connection-level check by name (what ``published_index`` verifies first)."""
    return {
        "referential_integrity": referential_integrity(conn),
        "single_open_generation": single_open_generation(conn),
        "open_html_generations_have_text_piles": open_html_generations_have_text_piles(conn),
        "fts_matches_searchable_generations": fts_matches_searchable(conn),
    }


@asset_check(asset=summary_db, blocking=True, description=referential_integrity.__doc__)
def summary_referential_integrity(summary_database: SummaryDatabaseResource) -> AssetCheckResult:
    """Dagster wrapper of :func:`referential_integrity`."""
    with summary_database.write_lock(), closing(summary_database.open(read_only=True)) as conn:
        return referential_integrity(conn).result()


@asset_check(asset=summary_db, blocking=True, description=single_open_generation.__doc__)
def summary_single_open_generation(summary_database: SummaryDatabaseResource) -> AssetCheckResult:
    """Dagster wrapper of :func:`single_open_generation`."""
    with summary_database.write_lock(), closing(summary_database.open(read_only=True)) as conn:
        return single_open_generation(conn).result()


@asset_check(asset=summary_db, blocking=True, description=open_html_generations_have_text_piles.__doc__)
def summary_open_html_have_text_piles(summary_database: SummaryDatabaseResource) -> AssetCheckResult:
    """Dagster wrapper of :func:`open_html_generations_have_text_piles`."""
    with summary_database.write_lock(), closing(summary_database.open(read_only=True)) as conn:
        return open_html_generations_have_text_piles(conn).result()


@asset_check(asset=summary_db, blocking=True, description=schema_versions.__doc__)
def summary_schema_versions(
    crawler_database: CrawlerDatabaseResource, summary_database: SummaryDatabaseResource
) -> AssetCheckResult:
    """Dagster wrapper of :func:`schema_versions` over both databases."""
    return schema_versions(crawler_database.path, summary_database.path).result()


@asset_check(asset=fts_index, blocking=True, description=fts_matches_searchable.__doc__)
def fts_rows_equal_searchable_generations(summary_database: SummaryDatabaseResource) -> AssetCheckResult:
    """Dagster wrapper of :func:`fts_matches_searchable`."""
    with summary_database.write_lock(), closing(summary_database.open(read_only=True)) as conn:
        return fts_matches_searchable(conn).result()


ALL_CHECKS = [
    summary_referential_integrity,
    summary_single_open_generation,
    summary_open_html_have_text_piles,
    summary_schema_versions,
    fts_rows_equal_searchable_generations,
]
