"""The FTS5 full text index of the summary database: ``full_text_entity_index``.

Source: unobtanium-documentation.txt, pages "Summary Database" (full_text_entity_index
and its ``any`` column) and "Summarizing" ((Re)generating full text index); textpile's
shared decision: rowid = entity_generation_id, and only *searchable* generations
(:mod:`textpile.store.searchable`) have rows. Pages with noindex never get a text pile,
so they are never searchable.

The table has the documented columns but keeps no copy of the text: it reads them from
the view ``full_text_entity_source`` (FTS5 external content over text_pile and
document_description), which has a row for every generation with a text pile, so the
row of a generation that stopped being searchable still reads back and is deleted with
its own values (a generation's text pile and description never change). Its rows are
counted with :func:`fts_row_count` (``count(*)`` without MATCH counts the view). A table
made by an older textpile, which stored its own copy, is made anew (:func:`make_external`).
"""

from __future__ import annotations

import json
import sqlite3

from textpile.store.database import SUMMARY_SCHEMA_VERSION, extension_sql, schema_sql
from textpile.store.text_piles import read_gen1

COLUMNS = ("text_pile_id", "any", "title", "description", "text", "secondary_text", "big_headlines",
           "small_headlines", "code_text", "quote_text")
#: The columns of the index that hold words (all but the text pile's id).
WORD_COLUMNS = COLUMNS[1:]
_SOURCE_SQL = (f"SELECT entity_generation_id, {', '.join(COLUMNS)} FROM full_text_entity_source "
               "WHERE entity_generation_id IN (SELECT value FROM json_each(?)) ORDER BY entity_generation_id")
#: What full_text_entity_source selects besides the text pile's fields, for :func:`source_rows`.
_DESCRIBED_SQL = ("SELECT eg.entity_generation_id, eg.text_pile_id, 'any', "
                  "coalesce(nullif(dd.title, ''), nullif(dd.primary_headline, ''), ''), dd.description "
                  "FROM entity_generation eg "
                  "LEFT JOIN document_description dd ON dd.entity_generation_id = eg.entity_generation_id "
                  "WHERE eg.entity_generation_id IN (SELECT value FROM json_each(?)) AND eg.text_pile_id IS NOT NULL "
                  "ORDER BY eg.entity_generation_id")
_INSERT_SQL = f"INSERT INTO full_text_entity_index(rowid, {', '.join(COLUMNS)}) {_SOURCE_SQL}"
_INSERT_ROW_SQL = f"INSERT INTO full_text_entity_index(rowid, {', '.join(COLUMNS)}) VALUES (?{', ?' * len(COLUMNS)})"
_DELETE_ROW_SQL = (f"INSERT INTO full_text_entity_index(full_text_entity_index, rowid, {', '.join(COLUMNS)}) "
                   f"VALUES ('delete', ?{', ?' * len(COLUMNS)})")
#: The rows of the index (not of its content view): every row has "any" in column any.
ROWIDS_SQL = "SELECT rowid FROM full_text_entity_index WHERE full_text_entity_index MATCH 'any : \"any\"'"


def fts_row_count(conn: sqlite3.Connection) -> int:
    """The number of rows in the full text index itself."""
    return conn.execute(f"SELECT count(*) FROM ({ROWIDS_SQL})").fetchone()[0]


def make_external(conn: sqlite3.Connection) -> bool:
    """Drop a full_text_entity_index that keeps its own copy of the text (made by an older
    textpile) and create it anew as documented in the schema (external content); True
    when it was made anew (it is empty then)."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'full_text_entity_index'").fetchone()
    if row is not None and "full_text_entity_source" in (row[0] or ""):
        return False
    conn.execute("DROP TABLE IF EXISTS full_text_vocabulary")
    conn.execute("DROP TABLE IF EXISTS full_text_entity_index")
    conn.executescript(schema_sql("summary", SUMMARY_SCHEMA_VERSION))
    conn.executescript(extension_sql("summary"))
    return True


def insert(conn: sqlite3.Connection, generation_ids: list[int]) -> None:
    """Index the generations ``generation_ids`` (each with a text pile)."""
    conn.execute(_INSERT_SQL, (json.dumps(generation_ids),))


def source_rows(conn: sqlite3.Connection, generation_ids: list[int]) -> list[tuple]:
    """The rows of the generations ``generation_ids`` as the index reads them from its
    content view (``full_text_entity_source``): entity_generation_id, then the values of
    :data:`COLUMNS`, in id order; a generation without a text pile is left out. An update
    reads them once for :func:`insert_rows` or :func:`delete_rows` and for counting their
    words (:class:`textpile.index.vocabulary.VocabularyChanges`). The text pile's fields
    are decoded in Python (:func:`textpile.store.text_piles.read_gen1`, the view's values:
    FTS5's ``delete`` needs those the row was inserted with), the rest as the view selects
    them.

    Raises:
        ValueError: a packed text does not unpack.
    """
    rows = conn.execute(_DESCRIBED_SQL, (json.dumps(generation_ids),)).fetchall()
    piles = read_gen1(conn, sorted({row[1] for row in rows}))
    return [(*row, *piles[row[1]]) for row in rows if row[1] in piles]


def insert_rows(conn: sqlite3.Connection, rows: list[tuple]) -> None:
    """Index the rows ``rows`` of :func:`source_rows` (what :func:`insert` does with their ids)."""
    conn.executemany(_INSERT_ROW_SQL, rows)


def delete_rows(conn: sqlite3.Connection, rows: list[tuple]) -> None:
    """Take the rows ``rows`` of :func:`source_rows` out of the index: FTS5's ``delete``
    command with their values, which are those they were inserted with (a generation's
    text pile and description never change)."""
    conn.executemany(_DELETE_ROW_SQL, rows)
