"""The size limit of a connection that searches (the web frontend's and ``textpile search``'s).

A search runs fixed SQL (no value is built from the request), so its connection allows
strings and blobs up to :data:`SEARCH_MAX_VALUE_BYTES`: more than any text the crawler
can store (bodies are cut at 10 MiB, decompressed content at 32 MiB, and decoding a
one-byte charset gives at most 3 UTF-8 bytes per byte), less than SQLite's default of one
billion bytes. The SQL explorer's tighter limits are :mod:`textpile.web.limits`'.
"""

from __future__ import annotations

import sqlite3

SEARCH_MAX_VALUE_BYTES = 128 * 1024 * 1024


def limit_search_connection(conn: sqlite3.Connection) -> sqlite3.Connection:
    """Cap strings and blobs on a search connection at :data:`SEARCH_MAX_VALUE_BYTES`;
    return ``conn``."""
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, SEARCH_MAX_VALUE_BYTES)
    return conn
