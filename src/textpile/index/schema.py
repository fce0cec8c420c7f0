"""The derived search tables of a summary database: their layout, version and checks.

The tables are textpile's own (``schemas/summary/textpile_search.sql``), beside
unobtanium's documented ``full_text_entity_index``. Two kinds:

* read by a search (:data:`QUERY_TABLES`): ``search_index`` and ``section_search_index``
  (FTS5, contentless), their first tier ``search_index_top`` and
  ``section_search_index_top``, ``search_page``, ``search_section``, ``search_language``,
  ``search_term``, ``search_word`` and ``search_top_tier``;
* kept only to update the others by what changed (:data:`UPDATE_TABLES`): the in-link
  counts ``search_link`` and ``search_inlink``, the boilerplate counts ``search_origin``
  and ``search_heading``, each indexed page's FTS5 values ``search_page_terms``, and
  ``search_index_build`` (the :func:`index_version` they were
  made by).

A contentless FTS5 row can only be deleted with the values it was inserted with, so those
values are kept, packed, in ``search_page_terms`` (about a quarter of the text's size),
and an update deletes a page's rows with them (:mod:`textpile.index.update`). An index is
updated only while the analysis is the one that wrote the rows: when
:func:`index_version` differs from ``search_index_build.version`` (another layout,
another analysis, another stemmer or SQLite), or a table's columns differ from
:data:`DERIVED_TABLES` (a database of another textpile), the tables are made anew and
filled whole.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import unicodedata

import regex
import Stemmer

from textpile.errors import DatabaseError
from textpile.store.database import extension_sql

#: Columns of search_index, in order (bm25 weights in textpile.search.rank follow it).
SEARCH_COLUMNS = ("title", "headings", "names", "parts", "url", "anchor_text", "description", "text",
                  "secondary_text")
SECTION_COLUMNS = ("title", "name", "anchor_text")
#: The layout of the derived tables and what is written in them; raise it whenever the
#: rows written for the same summary change (a column, a docid rule, the analysis).
INDEX_LAYOUT = "5"  # 3: docids from the prior and the generation id, updated by difference; 4: prior steps of 1/16, anchor texts in alphabetical order; 5: search_page_terms

#: The tables a search reads and their columns (search_index and the other FTS5 tables:
#: their FTS5 columns; the others: their table columns).
QUERY_TABLES = {
    "search_page": ("entity_generation_id", "docid", "origin_id", "language", "term_count", "text_length",
                    "in_links", "content_in_links", "link_density", "title_terms", "title_words",
                    "url_terms", "url_last_terms", "anchor_terms"),
    "search_section": ("section_summary_id", "docid"),
    "search_language": ("language", "pages"),
    "search_term": ("term", "docs"),
    "search_word": ("word", "docs"),
    "search_top_tier": ("pages", "sections", "last_docid", "last_section_docid", "top_pages", "top_sections"),
    "search_index": SEARCH_COLUMNS,
    "section_search_index": SECTION_COLUMNS,
    "search_index_top": SEARCH_COLUMNS,
    "section_search_index_top": SECTION_COLUMNS,
}
#: The tables only an update reads.
UPDATE_TABLES = {
    "search_index_build": ("version", "rebuilt_unix_utc", "updated_unix_utc"),
    "search_link": ("link_target_id", "pages"),
    "search_inlink": ("url_id", "pages", "content_pages"),
    "search_origin": ("origin_id", "pages"),
    "search_heading": ("origin_id", "title", "pages"),
    "search_page_terms": ("entity_generation_id", "terms", "terms_size"),
}
DERIVED_TABLES = {**QUERY_TABLES, **UPDATE_TABLES}
#: The FTS5 tables of a summary database: the documented one and textpile's search index.
FTS_TABLES = frozenset({"full_text_entity_index", "search_index", "section_search_index", "search_index_top",
                        "section_search_index_top"})
#: The leaf size of the FTS5 tables (their ``pgsz`` option; FTS5's default is 4050, one
#: SQLite page): per leaf FTS5 writes its first term and first rowid whole, so longer
#: leaves make the index smaller (python3.11-doc: 0.0017 to 0.0032 of the raw HTML less, up to 1.6% of its FTS5
#: tables; 32400 gives only 0.0002 more), and a search as fast (60 queries
#: interleaved, CPU: 0.518 s against 0.520 s).
FTS_PAGE_BYTES = 16200

_COLUMNS_SQL = """
SELECT t.value, c.name FROM json_each(?) t, pragma_table_info(t.value) c ORDER BY t.key, c.cid
"""
#: Older layouts of the tables a search reads that a database opened read-only is read in
#: as it is (a writer makes the tables anew): search_page with anchor_texts (the raw
#: anchor texts, which nothing read) or without origin_id, search_section with the
#: analyzed strings of its sections (now analyzed at query time), search_top_tier without
#: the first tier's counts (its docids then numbered the pages from 1, so its last docids
#: are its counts: :func:`textpile.search.candidates.search_tiers`).
_PAGE = QUERY_TABLES["search_page"]
_PAGE_WITHOUT_ORIGIN = tuple(c for c in _PAGE if c != "origin_id")
OLDER_LAYOUTS = {
    "search_page": (_PAGE_WITHOUT_ORIGIN,
                    _PAGE_WITHOUT_ORIGIN[:_PAGE_WITHOUT_ORIGIN.index("link_density") + 1] + ("anchor_texts",)
                    + _PAGE_WITHOUT_ORIGIN[_PAGE_WITHOUT_ORIGIN.index("link_density") + 1:]),
    "search_section": (("section_summary_id", "docid", "entity_generation_id", "title_terms", "title_words",
                        "name_terms", "name_words"),),
    "search_top_tier": (QUERY_TABLES["search_top_tier"][:4],),
}
#: Every column a search reads, no row: one statement, prepared once per connection.
_READS_SQL = "SELECT * FROM " + ", ".join(QUERY_TABLES) + " LIMIT 0"
_READS_ACCEPTED = frozenset(
    tuple(column for columns in layout for column in columns)
    for layout in itertools.product(*((columns, *OLDER_LAYOUTS.get(table, ())) for table, columns in
                                      QUERY_TABLES.items())))


def index_version() -> str:
    """The version the derived tables are written in: :data:`INDEX_LAYOUT` with what the
    analysis depends on (PyStemmer's Snowball stemmers, the ``regex`` module's and
    Python's Unicode data, SQLite's FTS5 tokenizer). An index written under another
    version is rebuilt whole, never updated: its rows could not be deleted exactly.
    Example: ``"4 stemmer=3.1.0 regex=2026.12.2 unicode=14.0.0 sqlite=3.40.1"``."""
    return (f"{INDEX_LAYOUT} stemmer={Stemmer.version()} regex={regex.__version__} "
            f"unicode={unicodedata.unidata_version} sqlite={sqlite3.sqlite_version}")


def _tables_current(conn: sqlite3.Connection, tables: dict[str, tuple[str, ...]]) -> bool:
    """True when every table of ``tables`` exists with exactly its columns."""
    found: dict[str, list[str]] = {table: [] for table in tables}
    for table, column in conn.execute(_COLUMNS_SQL, (json.dumps(list(tables)),)):
        found[table].append(column)
    return all(tuple(found[table]) == columns for table, columns in tables.items())


def ensure_current_tables(conn: sqlite3.Connection) -> str | None:
    """Make the derived tables current: those whose columns differ from
    :data:`DERIVED_TABLES` (a database of another textpile) are dropped, and every missing
    extension table and index is created (``section_summary`` is never dropped). Returns
    None when the tables hold an index this code can update, else why they must be filled
    whole: the index is new, a table had another layout, or ``search_index_build`` names
    another :func:`index_version`.

    Raises:
        sqlite3.Error: database problems (locked, read-only, full disk).
    """
    conn.execute("DROP TABLE IF EXISTS search_vocabulary")  # an fts5vocab table of an older textpile
    dropped = []
    for table, columns in DERIVED_TABLES.items():
        found = tuple(row[1] for row in conn.execute("SELECT * FROM pragma_table_info(?)", (table,)))
        if found and found != columns:
            conn.execute(f"DROP TABLE {table}")  # a name from DERIVED_TABLES, not input
            dropped.append(table)
    conn.executescript(extension_sql("summary"))
    conn.execute("CREATE INDEX IF NOT EXISTS search_page_by_origin ON search_page(origin_id)")
    if dropped:
        return f"the index was written by another textpile ({', '.join(dropped)} in another layout)"
    row = conn.execute("SELECT version FROM search_index_build").fetchone()
    if row is None:
        return "the index is new"
    if row[0] != index_version():
        return f"the index was written by another textpile ({row[0]}; this one writes {index_version()})"
    return None


def require_search_index(conn: sqlite3.Connection) -> None:
    """Raise DatabaseError unless the database has textpile's search tables with the
    columns a search reads, in its order (a summary database summarized by an older
    textpile has others; the layouts of :data:`OLDER_LAYOUTS` are read as they are).

    Raises:
        DatabaseError: the search tables are missing or differ.
        sqlite3.Error: the database cannot be read (locked, corrupt).
    """
    try:
        cursor = conn.execute(_READS_SQL)
    except sqlite3.OperationalError:
        if _tables_current(conn, QUERY_TABLES):
            raise  # the tables are right: something else failed
    else:
        if tuple(d[0] for d in cursor.description) in _READS_ACCEPTED:
            return
    raise DatabaseError(
        "this summary database has no search index of this textpile version (it was summarized by an "
        "older one): run `textpile summarize` on it once to build it")


def _fts_table(table: str) -> str:
    if table not in FTS_TABLES:
        raise ValueError(f"{table!r} is not an FTS5 table of the summary database ({', '.join(sorted(FTS_TABLES))})")
    return table


def optimize_fts(conn: sqlite3.Connection, table: str) -> None:
    """Merge the segments of the FTS5 ``table`` into one (FTS5's ``optimize``): every term
    of a query is looked up, and its document list read, in each segment. One segment
    makes a search 14% cheaper at 100K pages (bench/bench_search.py) and the index
    smaller; it rewrites the whole table, so only a whole rebuild does it (an update
    leaves the merging to FTS5's automerge).

    Raises:
        ValueError: ``table`` is not one of the summary schema's FTS5 tables.
    """
    table = _fts_table(table)
    conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")


def empty_fts(conn: sqlite3.Connection, table: str) -> None:
    """Empty the FTS5 ``table`` (``delete-all``) and set its leaf size to
    :data:`FTS_PAGE_BYTES` (``pgsz``, a configuration value kept in its ``_config`` table,
    not part of the table's definition) for the rows written next.

    Raises:
        ValueError: ``table`` is not one of the summary schema's FTS5 tables.
    """
    table = _fts_table(table)
    conn.execute(f"INSERT INTO {table}({table}) VALUES ('delete-all')")
    # set only when it differs: a configuration write bumps the table's structure cookie,
    # and a table rebuilt twice must hold the same bytes as one rebuilt once
    row = conn.execute(f"SELECT v FROM {table}_config WHERE k = 'pgsz'").fetchone()
    if row is None or row[0] != FTS_PAGE_BYTES:
        conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('pgsz', ?)", (FTS_PAGE_BYTES,))


def fts_insert_sql(table: str, columns: tuple[str, ...]) -> str:
    """``INSERT`` of one row (rowid, then ``columns``) into the FTS5 ``table``."""
    table = _fts_table(table)
    return f"INSERT INTO {table}(rowid, {', '.join(columns)}) VALUES (?{', ?' * len(columns)})"


def fts_delete_sql(table: str, columns: tuple[str, ...]) -> str:
    """FTS5's ``delete`` command of one row of the contentless ``table`` (rowid, then the
    values of ``columns`` it was inserted with)."""
    table = _fts_table(table)
    return (f"INSERT INTO {table}({table}, rowid, {', '.join(columns)}) VALUES ('delete', ?"
            f"{', ?' * len(columns)})")
