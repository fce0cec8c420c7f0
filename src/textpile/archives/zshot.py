"""Reading zshot SQLite archives (seed zshot-sqlite-archive-schema.sql.txt, zshot 0.54).

Every exchange of ``resources`` with a response (``status`` not NULL) in archive order
(``id``) becomes an :class:`Exchange`: its headers from ``response_headers`` (a JSON array
of ``[name, value]``), its time from ``started_at``; a ``full`` one gets its payload from
``payloads`` (stored once by digest), a ``revisit`` names the exchange storing its payload
(``revisit_of``) and its reason (``not-modified`` / ``identical-payload``), and carries
the payload too (zshot stores every payload, revisited or not). ``omitted``
and ``incomplete`` exchanges (no body was kept) are problems, reported and skipped.
``crawl.robots_checked`` says whether the capture obeyed robots.txt.
"""

from __future__ import annotations

import datetime
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from textpile.archives.exchange import Exchange, Problem


def zshot_time(value: str | None) -> float | None:
    """A zshot time (``2026-10-21T15:00:21.660475Z``) as unix seconds, or None."""
    if not value:
        return None
    try:
        when = datetime.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when.timestamp()


#: The first bytes of a SQLite database file.
SQLITE_MAGIC = b"SQLite format 3\x00"
#: zshot's ``PRAGMA application_id`` (seed zshot-sqlite-archive-schema.sql.txt).
ZSHOT_APPLICATION_ID = 2054383727


def recognizes(head: bytes, path: Path) -> bool:
    """True when a file starting with ``head`` is a zshot archive: a SQLite database whose
    ``application_id`` (the big-endian 32-bit number at byte 68 of its header) is
    :data:`ZSHOT_APPLICATION_ID`.

    Raises:
        ValueError: a SQLite database of another application.
    """
    if not head.startswith(SQLITE_MAGIC):
        return False
    app_id = int.from_bytes(head[68:72], "big") if len(head) >= 72 else 0
    if app_id != ZSHOT_APPLICATION_ID:
        raise ValueError(f"a SQLite database, but not a zshot archive (application_id {app_id}, "
                         f"zshot's is {ZSHOT_APPLICATION_ID})")
    return True


def open_zshot(path: Path) -> sqlite3.Connection:
    """``path`` opened read-only (the archive is never changed).

    Raises:
        sqlite3.Error: it cannot be opened or is not a SQLite database.
    """
    return sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)


def zshot_capture(conn: sqlite3.Connection) -> tuple[str, bool]:
    """``(zshot_version, robots_checked)`` of the archive's one ``crawl`` row.

    Raises:
        sqlite3.Error: the table is missing (not a zshot archive).
        ValueError: it has no row.
    """
    row = conn.execute("SELECT zshot_version, robots_checked FROM crawl WHERE id = 1").fetchone()
    if row is None:
        raise ValueError("the crawl table has no row")
    return str(row[0]), bool(row[1])


def robots_checked(path: Path) -> bool:
    """Whether the capture of the zshot archive at ``path`` obeyed robots.txt
    (:func:`zshot_capture`).

    Raises:
        ValueError: its ``crawl`` table is missing or has no row (the message says which).
    """
    conn = open_zshot(path)
    try:
        return zshot_capture(conn)[1]
    except sqlite3.Error as exc:
        raise ValueError(str(exc)) from None
    finally:
        conn.close()


def read_zshot_file(path: Path) -> Iterator[Exchange | Problem]:
    """The exchanges and problems of the zshot archive at ``path`` (:func:`read_zshot`)."""
    conn = open_zshot(path)
    try:
        yield from read_zshot(conn)
    finally:
        conn.close()


def read_zshot(conn: sqlite3.Connection, label: str = "") -> Iterator[Exchange | Problem]:
    """The exchanges of the zshot archive open on ``conn``, in archive order."""
    prefix = f"{label} " if label else ""
    rows = conn.execute(
        """SELECT r.id, r.started_at, r.url, r.method, r.status, r.response_headers, r.payload_digest,
                  pr.served, pr.revisit_reason, o.url, p.body, p.truncated
           FROM resources r
           LEFT JOIN page_resources pr ON pr.resource_id = r.id
           LEFT JOIN resources o ON o.id = pr.revisit_of
           LEFT JOIN payloads p ON p.digest = r.payload_digest
           GROUP BY r.id ORDER BY r.id""")
    for (rid, started, url, method, status, headers, digest, served, reason, original, body,
         truncated) in rows:
        where = f"{prefix}resources.id {rid}"
        if method != "GET":
            continue  # a POST's answer is not a page of the site
        if status is None or served in ("omitted", "incomplete"):
            yield Problem(where, f"{url}: the archive kept no response ({served or 'no status'})")
            continue
        when = zshot_time(started)
        if when is None:
            yield Problem(where, f"{url}: started_at {started!r} is not an ISO-8601 time")
            continue
        try:
            pairs = [(str(name), str(value)) for name, value in json.loads(headers or "[]")]
        except (ValueError, TypeError):
            yield Problem(where, f"{url}: response_headers is not a JSON array of [name, value] pairs")
            continue
        exchange = Exchange(url=url, time_unix=when, status=int(status), headers=pairs, payload_digest=digest,
                            where=where)
        if served == "revisit":
            exchange.revisit = reason or "identical-payload"
            exchange.refers_to_url = original
        if digest is not None and body is None:
            yield Problem(where, f"{url}: payload {digest} is not in payloads")
            continue
        else:
            exchange.body = bytes(body) if body is not None else b""
            exchange.truncated = bool(truncated)
        yield exchange
