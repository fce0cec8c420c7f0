"""The FTS5 full text index of the summary database: ``full_text_entity_index``.

Source: unobtanium-documentation.txt, pages "Summary Database" (full_text_entity_index
and its ``any`` column) and "Summarizing" ((Re)generating full text index); textpile's
shared decision: rowid = entity_generation_id, and only *searchable* generations
(open, not marked duplicate, with a Gen1 text pile) have rows. Pages with noindex never
get a text pile, so they are never searchable.

The table has the documented columns but keeps no copy of the text: it reads them from
the view ``full_text_entity_source`` (FTS5 external content over text_pile and
document_description), which has a row for every generation with a text pile, so an
index row of a generation closed since the last rebuild still reads back. Its rows are
counted with :func:`fts_row_count` (``count(*)`` without MATCH counts the view). A table
made by an older textpile, which stored its own copy, is made anew at the next rebuild.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from textpile.progress import progress_bar
from textpile.store.database import SUMMARY_SCHEMA_VERSION, extension_sql, open_summary_db, schema_sql, sqlite_errors
from textpile.store.gen2_piles import register_functions

SEARCHABLE_WHERE = ("eg.confirmed_end_unix_utc IS NULL AND NOT eg.marked_duplicate"
                    " AND eg.text_pile_id IS NOT NULL")

_COLUMNS = ("text_pile_id, any, title, description, text, secondary_text, big_headlines, small_headlines, "
            "code_text, quote_text")
_FILL_SQL = f"""
INSERT INTO full_text_entity_index(rowid, {_COLUMNS})
SELECT s.entity_generation_id, {", ".join("s." + c.strip() for c in _COLUMNS.split(","))}
FROM full_text_entity_source s
JOIN entity_generation eg ON eg.entity_generation_id = s.entity_generation_id
WHERE {SEARCHABLE_WHERE}
ORDER BY s.entity_generation_id
"""
#: The rows of the index (not of its content view): every row has "any" in column any.
ROWIDS_SQL = "SELECT rowid FROM full_text_entity_index WHERE full_text_entity_index MATCH 'any : \"any\"'"


def fts_row_count(conn: sqlite3.Connection) -> int:
    """The number of rows in the full text index itself."""
    return conn.execute(f"SELECT count(*) FROM ({ROWIDS_SQL})").fetchone()[0]


def _make_external(conn: sqlite3.Connection) -> None:
    """Drop a full_text_entity_index that keeps its own copy of the text (made by an older
    textpile) and create it anew as documented in the schema (external content)."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'full_text_entity_index'").fetchone()
    if row is not None and "full_text_entity_source" in (row[0] or ""):
        return
    conn.execute("DROP TABLE IF EXISTS full_text_vocabulary")
    conn.execute("DROP TABLE IF EXISTS full_text_entity_index")
    conn.executescript(schema_sql("summary", SUMMARY_SCHEMA_VERSION))
    conn.executescript(extension_sql("summary"))


def rebuild_fts_in(conn: sqlite3.Connection, *, on_page=None, progress: bool = False) -> int:
    """Empty and refill ``full_text_entity_index`` in one transaction, then textpile's
    search index (:func:`textpile.search.index.rebuild_search_index`, ``on_page`` called
    per page); return the FTS row count.

    The title column holds the description's title, else its primary headline, else ''.
    With ``progress``, an "Indexing" progress display (:func:`textpile.progress.progress_bar`)
    counts the pages of the search index, out of the searchable generations (it stays at
    0 while the full text index is filled, which takes about a tenth of the time).
    """
    from textpile.search.index import empty_fts, optimize_fts, rebuild_search_index

    register_functions(conn)  # its external content reads the text_pile view, which unpacks
    _make_external(conn)
    total = conn.execute(f"SELECT count(*) FROM entity_generation eg WHERE {SEARCHABLE_WHERE}").fetchone()[0] \
        if progress else None
    with progress_bar("Indexing", total, enabled=progress) as bar:
        with conn:
            empty_fts(conn, "full_text_entity_index")
            conn.execute(_FILL_SQL)
            optimize_fts(conn, "full_text_entity_index")

        def page() -> None:
            bar.advance(1)
            if on_page is not None:
                on_page()

        rebuild_search_index(conn, on_page=page)
    return fts_row_count(conn)


def rebuild_fts(summary_db: str | Path, *, progress: bool = False) -> int:
    """(Re)build the FTS index of the summary database file ``summary_db``; return rows.
    ``progress``: see :func:`rebuild_fts_in`.

    Raises:
        DatabaseError: ``summary_db`` does not exist or is not a summary database.
    """
    conn = open_summary_db(summary_db, create=False)
    try:
        with sqlite_errors(summary_db):
            return rebuild_fts_in(conn, progress=progress)
    finally:
        conn.close()
