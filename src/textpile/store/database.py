"""Opening crawler and summary databases, creating them and checking their versions.

Source: unobtanium-documentation.txt, pages "Database Info" and "Base Database".
A database is created with the versioned DDL in ``schemas/`` and gets its
``unobtanium_database_info`` keys. Opening an existing file checks those keys first:
a database of the other kind, a newer schema or a foreign SQLite file is refused with
:class:`~textpile.errors.DatabaseError` and is never altered.
"""

from __future__ import annotations

import sqlite3
from importlib import resources
from pathlib import Path
from urllib.parse import quote

from textpile.errors import DatabaseError

BASE_SCHEMA_VERSION = "0.1.0"
CRAWLER_SCHEMA_VERSION = "1.0.0"
SUMMARY_SCHEMA_VERSION = "0.0.0"

# Versions this code reads as its own (the summary preview carried text_pile_v0_2 first).
_ACCEPTED = {
    "unobtanium_base_schema_version": {"0.1.0"},
    "unobtanium_crawler_schema_version": {"1.0.0"},
    "unobtanium_summary_schema_version": {"0.0.0", "0.0.0-textrank-preview.0"},
}

_SQLITE_MAGIC = b"SQLite format 3\x00"


def schema_sql(part: str, version: str) -> str:
    """Return the DDL text of ``schemas/<part>/<version>.sql`` (part: base, crawler, summary)."""
    return resources.files("textpile").joinpath("schemas", part, f"{version}.sql").read_text("utf-8")


def sqlite_uri(path: str | Path, *, mode: str | None = None, immutable: bool = False) -> str:
    """Return a SQLite ``file:`` URI naming ``path``, for ``sqlite3.connect(uri, uri=True)``.

    The path is made absolute and percent-encoded (every byte outside the unreserved
    characters and ``/``), so names holding ``#``, ``?``, ``%``, spaces or non-ASCII
    characters name the right file. ``mode`` is SQLite's ``mode`` parameter (``ro``,
    ``rw``, ``rwc``, ``memory``); ``immutable`` adds ``immutable=1`` (SQLite then assumes
    nobody changes the file and takes no locks). Source: sqlite.org, "URI Filenames In SQLite".
    Example: ``sqlite_uri("/a b/x#1.db", mode="ro")`` -> ``"file:///a%20b/x%231.db?mode=ro"``.
    """
    absolute = Path(path).absolute()
    text = absolute.as_posix()
    if absolute.drive and not text.startswith("/"):
        text = "/" + text  # Windows: file:///C:/...
    uri = "file://" + quote(text, safe="/:" if absolute.drive else "/")
    params = []
    if mode is not None:
        params.append(f"mode={quote(mode, safe='')}")
    if immutable:
        params.append("immutable=1")
    return uri + ("?" + "&".join(params) if params else "")


def connect(path: str | Path, *, read_only: bool = False) -> sqlite3.Connection:
    """Open a SQLite connection with textpile's settings, without any schema check.

    WAL journal, foreign keys on, a 30 s busy timeout. ``read_only`` opens with
    ``mode=ro`` so that nothing can be written.
    """
    if read_only:
        conn = sqlite3.connect(sqlite_uri(path, mode="ro"), uri=True, timeout=30)
    else:
        conn = sqlite3.connect(str(path), timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


def _check_file(path: Path) -> None:
    if path.is_dir():
        raise DatabaseError(f"{path}: is a directory, expected a SQLite database file")
    if path.exists() and path.stat().st_size > 0:
        with path.open("rb") as fh:
            if fh.read(16) != _SQLITE_MAGIC:
                raise DatabaseError(f"{path}: not a SQLite database; refusing to touch it")


def _read_info(conn: sqlite3.Connection, path: Path) -> dict[str, str] | None:
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table','view')")}
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(f"{path}: cannot be read as SQLite ({exc})") from exc
    if not tables:
        return None
    if "unobtanium_database_info" not in tables:
        raise DatabaseError(
            f"{path}: has tables but no unobtanium_database_info; it is not a textpile/unobtanium "
            "database (for an old unversioned database, add the version keys as the page "
            "'Database Info' describes)"
        )
    return dict(conn.execute("SELECT key, value FROM unobtanium_database_info"))


def _verify(info: dict[str, str], kind: str, path: Path) -> None:
    found_kind = info.get("unobtanium_database_kind")
    if found_kind != kind:
        raise DatabaseError(
            f"{path}: is a {found_kind or 'unknown'} database, expected a {kind} database"
        )
    keys = ["unobtanium_base_schema_version", f"unobtanium_{kind}_schema_version"]
    for key in keys:
        version = info.get(key)
        if version is None:
            raise DatabaseError(f"{path}: unobtanium_database_info lacks {key}")
        if version not in _ACCEPTED[key]:
            raise DatabaseError(
                f"{path}: {key} is {version}, this textpile reads "
                f"{', '.join(sorted(_ACCEPTED[key]))}; refusing to open it (upgrade textpile)"
            )


def _open(path: str | Path, kind: str, schema_version: str, create: bool, read_only: bool) -> sqlite3.Connection:
    path = Path(path)
    _check_file(path)
    if not path.exists():
        if not create or read_only:
            raise DatabaseError(f"{path}: no such {kind} database")
        if not path.parent.exists():
            raise DatabaseError(f"{path}: folder {path.parent} does not exist")
    conn = connect(path, read_only=read_only)
    try:
        info = _read_info(conn, path)
        if info is None:
            if read_only:
                raise DatabaseError(f"{path}: empty file, not a {kind} database")
            with conn:
                conn.executescript(schema_sql("base", BASE_SCHEMA_VERSION))
                conn.executescript(schema_sql(kind, schema_version))
                conn.executemany(
                    "INSERT INTO unobtanium_database_info(key, value) VALUES (?, ?)",
                    [
                        ("unobtanium_base_schema_version", BASE_SCHEMA_VERSION),
                        ("unobtanium_database_kind", kind),
                        (f"unobtanium_{kind}_schema_version", schema_version),
                    ],
                )
        else:
            _verify(info, kind, path)
            if not read_only:
                # Idempotent: creates only what a database of this version may lack
                # (textpile's own extra indexes).
                conn.executescript(schema_sql(kind, schema_version))
    except BaseException:
        conn.close()
        raise
    return conn


def open_crawler_db(path: str | Path, *, create: bool = True, read_only: bool = False) -> sqlite3.Connection:
    """Open (or create) a crawler database (base 0.1.0 + crawler 1.0.0).

    Raises:
        DatabaseError: the file is not SQLite, not a crawler database, or of a newer version.
    """
    return _open(path, "crawler", CRAWLER_SCHEMA_VERSION, create, read_only)


def open_summary_db(path: str | Path, *, create: bool = True, read_only: bool = False) -> sqlite3.Connection:
    """Open (or create) a summary database (base 0.1.0 + summary 0.0.0 with text_pile_v0_2).

    Raises:
        DatabaseError: the file is not SQLite, not a summary database, or of a newer version.
    """
    return _open(path, "summary", SUMMARY_SCHEMA_VERSION, create, read_only)


def open_any_db(path: str | Path) -> tuple[sqlite3.Connection, str]:
    """Open an existing crawler or summary database, returning it and its kind.

    Raises:
        DatabaseError: the file does not exist or is neither kind.
    """
    path = Path(path)
    _check_file(path)
    if not path.exists():
        raise DatabaseError(f"{path}: no such database")
    conn = connect(path)
    try:
        info = _read_info(conn, path) or {}
    finally:
        conn.close()
    kind = info.get("unobtanium_database_kind")
    if kind == "crawler":
        return open_crawler_db(path, create=False), kind
    if kind == "summary":
        return open_summary_db(path, create=False), kind
    raise DatabaseError(f"{path}: not a crawler or summary database")


def optimize_and_vacuum(conn: sqlite3.Connection) -> None:
    """Run ANALYZE, ``PRAGMA optimize`` and VACUUM (page "unobtanium-crawler", optimize-db)."""
    conn.commit()
    conn.execute("ANALYZE")
    conn.execute("PRAGMA optimize")
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
