"""Size limits on the SQLite connections of the web frontend.

Datasette lets anyone run a SELECT, and SQLite builds values as large as one billion
bytes on request (``select zeroblob(1000000000)``): within the SQL time limit, because
the time limit stops only SQLite, not the copying into Python and the JSON rendering
that follow. These limits make such a query fail at once with SQLite's
``string or blob too big`` (a 400 error page):

* :data:`EXPLORER_MAX_VALUE_BYTES` caps any string or blob (``SQLITE_LIMIT_LENGTH``);
* :data:`EXPLORER_MAX_COLUMNS` caps the columns of a result (``SQLITE_LIMIT_COLUMN``);
* :data:`EXPLORER_MAX_RESULT_BYTES` caps the text and blob bytes one statement
  returns (a row factory counts them; Datasette returns at most ``max_returned_rows``
  rows anyway).

So one request holds at most about columns x value bytes while the row is built.
A text pile longer than the explorer's cap reads as an error in Datasette's views (use
``substr(text, 1, N)``), never in search: the search connections have their own, larger
limit (:mod:`textpile.search.limits`).
"""

from __future__ import annotations

import sqlite3
import weakref

from textpile.web.printf import install_bounded_printf

MIB = 1024 * 1024
EXPLORER_MAX_VALUE_BYTES = 16 * MIB
EXPLORER_MAX_COLUMNS = 64
EXPLORER_MAX_RESULT_BYTES = 32 * MIB

RESULT_TOO_BIG = (
    "result too big: the rows of one query may hold at most {limit} MiB of text and "
    "blobs here; select fewer rows or columns, or shorten values with substr()"
)


def budget_row_factory(inner, limit_bytes: int = EXPLORER_MAX_RESULT_BYTES):
    """Return a row factory that builds rows with ``inner`` (e.g. ``sqlite3.Row``) and
    raises ``sqlite3.DataError`` (see :data:`RESULT_TOO_BIG`) once the str and bytes
    values returned by one cursor exceed ``limit_bytes`` (str counted in characters).

    The count restarts for each new cursor (Datasette uses one cursor per statement);
    the state lives in the returned closure, one per connection.
    """
    current: list = [None, 0]  # weak reference to the cursor being counted, its total

    def factory(cursor, row):
        seen = current[0]() if current[0] is not None else None
        if seen is not cursor:
            current[0] = weakref.ref(cursor)
            current[1] = 0
        current[1] += sum(len(v) for v in row if isinstance(v, (str, bytes)))
        if current[1] > limit_bytes:
            raise sqlite3.DataError(RESULT_TOO_BIG.format(limit=limit_bytes // MIB))
        return inner(cursor, row) if inner is not None else row

    return factory


def limit_explorer_connection(conn: sqlite3.Connection) -> sqlite3.Connection:
    """Apply the explorer's limits (module docstring) to a Datasette connection whose
    ``row_factory`` is already set; return ``conn``. ``printf``/``format`` are bounded
    too (:mod:`textpile.web.printf`): SQLite cannot interrupt a huge width or precision."""
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, EXPLORER_MAX_VALUE_BYTES)
    conn.setlimit(sqlite3.SQLITE_LIMIT_COLUMN, EXPLORER_MAX_COLUMNS)
    conn.row_factory = budget_row_factory(conn.row_factory)
    install_bounded_printf(conn, EXPLORER_MAX_VALUE_BYTES)
    return conn
