"""The FTS5 full text index of the summary database: ``full_text_entity_index``.

Source: unobtanium-documentation.txt, pages "Summary Database" (full_text_entity_index
and its ``any`` column) and "Summarizing" ((Re)generating full text index); textpile's
shared decision: rowid = entity_generation_id, and only *searchable* generations
(open, not marked duplicate, with a Gen1 text pile) have rows. Pages with noindex never
get a text pile, so they are never searchable.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from textpile.store.database import open_summary_db, sqlite_errors

SEARCHABLE_WHERE = ("eg.confirmed_end_unix_utc IS NULL AND NOT eg.marked_duplicate"
                    " AND eg.text_pile_id IS NOT NULL")

_FILL_SQL = f"""
INSERT INTO full_text_entity_index(rowid, text_pile_id, any, title, description, text, secondary_text,
                                   big_headlines, small_headlines, code_text, quote_text)
SELECT eg.entity_generation_id, eg.text_pile_id, 'any',
       coalesce(nullif(dd.title, ''), nullif(dd.primary_headline, ''), ''),
       dd.description, tp.text, tp.secondary_text, tp.big_headlines, tp.small_headlines,
       tp.code_text, tp.quote_text
FROM entity_generation eg
JOIN text_pile tp ON tp.text_pile_id = eg.text_pile_id
LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id
WHERE {SEARCHABLE_WHERE}
ORDER BY eg.entity_generation_id
"""


def rebuild_fts_in(conn: sqlite3.Connection, *, on_page=None) -> int:
    """Empty and refill ``full_text_entity_index`` in one transaction, then textpile's
    search index (:func:`textpile.search.index.rebuild_search_index`, ``on_page`` called
    per page); return the FTS row count.

    The title column holds the description's title, else its primary headline, else ''.
    """
    from textpile.search.index import rebuild_search_index

    with conn:
        conn.execute("DELETE FROM full_text_entity_index")
        conn.execute(_FILL_SQL)
    rebuild_search_index(conn, on_page=on_page)
    return conn.execute("SELECT count(*) FROM full_text_entity_index").fetchone()[0]


def rebuild_fts(summary_db: str | Path) -> int:
    """(Re)build the FTS index of the summary database file ``summary_db``; return rows.

    Raises:
        DatabaseError: ``summary_db`` does not exist or is not a summary database.
    """
    conn = open_summary_db(summary_db, create=False)
    try:
        with sqlite_errors(summary_db):
            return rebuild_fts_in(conn)
    finally:
        conn.close()
