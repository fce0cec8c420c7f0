"""Opening crawler and summary databases, creating them and checking their versions.

Source: unobtanium-documentation.txt, pages "Database Info" and "Base Database".
A database is created with the versioned DDL in ``schemas/`` and gets its
``unobtanium_database_info`` keys, atomically: it is built under a temporary name beside
its target and renamed when complete (:mod:`textpile.store.creation`), so a kill during
creation leaves no half-made database under the name. Opening an existing file checks
those keys first: a database of the other kind, a newer schema or a foreign SQLite file
is refused with :class:`~textpile.errors.DatabaseError` and is never altered.

A hot journal (``<name>-journal`` left by a write that was interrupted) is rolled back
before the file is inspected, as SQLite does for any writer: the database returns to
its last committed state. When this process cannot write the file or its folder, which
the rollback needs, the error says so instead of "read-only".
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from urllib.parse import quote

from textpile.errors import DatabaseError
from textpile.store import migrations
from textpile.store.checked import file_version, passed_before, remember_passed
from textpile.store.creation import NameTaken, create_atomically
from textpile.store.gen2_piles import register_functions

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
#: Bytes of the file a read-only connection maps into memory (SQLite's ``mmap_size``;
#: SQLite builds cap it at 2 GiB - 64 KiB, larger files read the rest as before). Pages
#: are then read straight from the operating system's page cache instead of being
#: copied into each connection's own cache: about 13% of a search's CPU time at 100K
#: pages (bench/bench_search.py), most of it for a connection opened per request.
READ_MMAP_BYTES = 2**31
_MMAP_PRAGMA = "PRAGMA mmap_size=" + str(READ_MMAP_BYTES)


#: textpile's own tables beside a documented schema: ``schemas/<kind>/<name>.sql``.
EXTENSIONS = {"crawler": ("textpile_discovery", "textpile_import", "textpile_recrawl", "textpile_links",
                            "textpile_handoff"),
              "summary": ("textpile_search", "textpile_embeddings", "textpile_pages")}


def schema_sql(part: str, version: str) -> str:
    """Return the DDL text of ``schemas/<part>/<version>.sql`` (part: base, crawler, summary)."""
    return resources.files("textpile").joinpath("schemas", part, f"{version}.sql").read_text("utf-8")


def extension_sql(kind: str) -> str:
    """Return the DDL of textpile's extension tables of a ``kind`` database (may be empty).
    Idempotent (``IF NOT EXISTS``), applied after the documented schema."""
    return "\n".join(schema_sql(kind, name) for name in EXTENSIONS.get(kind, ()))


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


BUSY_TIMEOUT_S = 30
"""Seconds a connection waits for another process's lock before giving up (the default
of every ``timeout_s=None`` below)."""

# Primary SQLite result codes (sqlite.org, "Result and Error Codes").
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY, _SQLITE_IOERR = 5, 6, 8, 10
_SQLITE_CORRUPT, _SQLITE_FULL, _SQLITE_CANTOPEN, _SQLITE_NOTADB = 11, 13, 14, 26
_SQLITE_READONLY_DIRECTORY = 1544
_SQLITE_READONLY_RECOVERY, _SQLITE_READONLY_ROLLBACK = 264, 776


def map_for_reading(conn: sqlite3.Connection) -> sqlite3.Connection:
    """Let read-only connection ``conn`` read its file through memory mapping
    (:data:`READ_MMAP_BYTES`); return ``conn``. For connections that never write: a
    writer's pages are better kept in SQLite's own cache."""
    conn.execute(_MMAP_PRAGMA)
    return conn


def _configure(conn: sqlite3.Connection, timeout_s: float) -> None:
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute(f"PRAGMA busy_timeout={int(timeout_s * 1000)}")
    register_functions(conn)  # the text_pile_v0_2 and text_pile views unpack with it


def _folder_writable(path: Path) -> bool:
    return os.access(path.absolute().parent, os.W_OK)


def sqlite_error(path: str | Path, exc: sqlite3.Error, *, timeout_s: float | None = None) -> DatabaseError:
    """Return a :class:`DatabaseError` naming ``path`` that explains SQLite error ``exc``.

    The message says what is wrong with the file in the user's terms: corrupt ("database
    disk image is malformed (not a usable SQLite database)"), read-only file or folder,
    locked by another process for more than ``timeout_s`` seconds, disk full, or else
    SQLite's own message. The caller raises it (``raise sqlite_error(p, exc) from exc``).
    """
    path = Path(path)
    timeout_s = BUSY_TIMEOUT_S if timeout_s is None else timeout_s
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc)
    if primary in (_SQLITE_CORRUPT, _SQLITE_NOTADB) or "malformed" in text:
        return DatabaseError(f"{path}: {text} (not a usable SQLite database)")
    if primary in (_SQLITE_BUSY, _SQLITE_LOCKED) or "database is locked" in text:
        return DatabaseError(f"{path}: locked by another process for more than {timeout_s:g} s")
    folder = path.absolute().parent
    if code in (_SQLITE_READONLY_ROLLBACK, _SQLITE_READONLY_RECOVERY):
        return DatabaseError(hot_journal_message(path))
    if code == _SQLITE_READONLY_DIRECTORY or (
            primary in (_SQLITE_READONLY, _SQLITE_CANTOPEN) and not _folder_writable(path)):
        return DatabaseError(
            f"{path}: its folder {folder} is read-only (SQLite must create {path.name}-wal and "
            f"{path.name}-shm beside the database to write it)")
    if primary == _SQLITE_READONLY:
        return DatabaseError(f"{path}: read-only (cannot write a database there)")
    if primary == _SQLITE_FULL:
        return DatabaseError(f"{path}: {text} (free some disk space)")
    if primary == _SQLITE_CANTOPEN:
        return DatabaseError(f"{path}: {text}")
    return DatabaseError(f"{path}: {text}")


def hot_journal_message(path: str | Path) -> str:
    """Why a database with an interrupted write cannot be read by this process: SQLite
    must first roll back its hot journal (or recover its WAL), which needs write access
    to the file and its folder."""
    path = Path(path)
    journal = path.with_name(path.name + "-journal")
    what = f"has a hot journal {journal.name}" if journal.exists() else "has a write-ahead log to recover"
    return (f"{path}: {what} (a write to it was interrupted by a crash or kill); SQLite must roll that "
            f"back before anyone can read it, which needs write access to {path.name} and its folder "
            f"{path.absolute().parent}: run a textpile command that writes it (textpile optimize-db -c {path}) "
            "as a user who may, or make both writable for a moment")


def _roll_back_hot_journal(path: Path, timeout_s: float) -> bool:
    """Let SQLite roll back the hot journal (or recover the WAL) of ``path`` through a
    read-write connection when this process may write the file and its folder; True when
    it did (the database is at its last committed state now)."""
    if not (os.access(path, os.W_OK) and _folder_writable(path)):
        return False
    conn = sqlite3.connect(sqlite_uri(path, mode="rw"), uri=True, timeout=timeout_s)
    try:
        _configure(conn, timeout_s)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # the rollback happens here
    finally:
        conn.close()
    return True


@contextmanager
def sqlite_errors(path: str | Path, *, timeout_s: float | None = None) -> Iterator[None]:
    """Context manager turning ``sqlite3.Error`` raised inside into :func:`sqlite_error`'s
    :class:`DatabaseError` naming ``path`` (the database the block works on)."""
    try:
        yield
    except sqlite3.Error as exc:
        raise sqlite_error(path, exc, timeout_s=timeout_s) from exc


def _is_wal_file(path: Path) -> bool:
    """True when the header of ``path`` says WAL mode (bytes 18-19 are 2, 2)."""
    try:
        with path.open("rb") as fh:
            header = fh.read(20)
    except OSError:
        return False
    return header[:16] == _SQLITE_MAGIC and header[18:20] == b"\x02\x02"


def _connect_read_only(path: Path, timeout_s: float) -> sqlite3.Connection:
    conn = None
    try:
        conn = sqlite3.connect(sqlite_uri(path, mode="ro"), uri=True, timeout=timeout_s)
        _configure(conn, timeout_s)
        map_for_reading(conn)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the file (and its WAL)
        return conn
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        if getattr(exc, "sqlite_errorcode", None) in (_SQLITE_READONLY_ROLLBACK, _SQLITE_READONLY_RECOVERY):
            with sqlite_errors(path, timeout_s=timeout_s):
                if not _roll_back_hot_journal(path, timeout_s):
                    raise DatabaseError(hot_journal_message(path)) from exc
            return _connect_read_only(path, timeout_s)
        if not (getattr(exc, "sqlite_errorcode", None) == _SQLITE_READONLY_DIRECTORY
                or (_is_wal_file(path) and not _folder_writable(path))):
            raise sqlite_error(path, exc, timeout_s=timeout_s) from exc
        first_error = exc
    # A WAL database in a folder this process cannot write: SQLite cannot create the
    # -shm file readers need. Without -wal and -shm files nobody has the database open
    # and nobody can write it (a writer would have to create them), so reading it as
    # immutable is exact. With them, a writer may be active or committed pages may sit
    # in the -wal file, which an immutable read would miss: refuse and explain.
    leftovers = [p for p in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")) if p.exists()]
    if leftovers:
        raise DatabaseError(
            f"{path}: is in WAL mode and its folder {path.absolute().parent} is read-only, and "
            f"{leftovers[0].name} exists (a writer is active or did not finish); publish a copy "
            "(textpile pipeline / textpile.publish) or make the folder writable") from first_error
    try:
        conn = sqlite3.connect(sqlite_uri(path, mode="ro", immutable=True), uri=True, timeout=timeout_s)
        _configure(conn, timeout_s)
        map_for_reading(conn)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        conn.close()
        raise sqlite_error(path, exc, timeout_s=timeout_s) from exc
    return conn


def connect(path: str | Path, *, read_only: bool = False, timeout_s: float | None = None) -> sqlite3.Connection:
    """Open a SQLite connection with textpile's settings, without any schema check.

    WAL journal (switched on here, so call it for a writable database only once the
    file is accepted), synchronous NORMAL, foreign keys on, a ``timeout_s`` busy timeout.
    ``read_only`` opens with ``mode=ro`` so that nothing can be written, changes nothing
    in the file and maps it into memory (:func:`map_for_reading`); a WAL database in a
    folder this process cannot write (no -shm can be created) is read with
    ``immutable=1`` when no -wal/-shm file exists (so nobody is writing it).

    Raises:
        DatabaseError: SQLite cannot open the file (see :func:`sqlite_error`).
    """
    path = Path(path)
    timeout_s = BUSY_TIMEOUT_S if timeout_s is None else timeout_s
    if read_only:
        return _connect_read_only(path, timeout_s)
    conn = None
    try:
        conn = sqlite3.connect(str(path), timeout=timeout_s, factory=_Writer)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        _configure(conn, timeout_s)
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        raise sqlite_error(path, exc, timeout_s=timeout_s) from exc
    return conn


def _check_file(path: Path) -> int | None:
    """Refuse folders and non-SQLite files; return the file size (None when missing)."""
    try:
        if path.is_dir():
            raise DatabaseError(f"{path}: is a directory, expected a SQLite database file")
        if not path.exists():
            return None
        size = path.stat().st_size
        if size > 0:
            with path.open("rb") as fh:
                if fh.read(16) != _SQLITE_MAGIC:
                    raise DatabaseError(f"{path}: not a SQLite database; refusing to touch it")
    except OSError as exc:
        raise DatabaseError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    return size


def _read_info(conn: sqlite3.Connection, path: Path) -> dict[str, str] | None:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table','view')")}
    if not tables:
        return None
    if "unobtanium_database_info" not in tables:
        raise DatabaseError(
            f"{path}: has tables but no unobtanium_database_info; it is not a textpile/unobtanium "
            "database (for an old unversioned database, add the version keys as the page "
            "'Database Info' describes)"
        )
    return dict(conn.execute("SELECT key, value FROM unobtanium_database_info"))


def quick_check_problem(conn: sqlite3.Connection) -> str | None:
    """The first problem ``PRAGMA quick_check`` finds in ``conn``'s database, on one line
    in SQLite's words, or None when it passes. Reads every page (15-25 ms for a 16 MB
    summary database), writes nothing.

    Raises:
        sqlite3.Error: the check could not run: ``sqlite3.DatabaseError`` for a page so
            damaged that SQLite calls the file malformed, ``OperationalError`` for a
            lock or an interrupt.
    """
    problem = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
    return None if problem == "ok" else " ".join(problem.replace("***", " ").split())


def _inspect(path: Path, *, integrity: bool, timeout_s: float) -> dict[str, str] | None:
    """Read the info keys of an existing file through a read-only connection (None: no
    tables). With ``integrity``, ``PRAGMA quick_check`` must pass too, unless this version
    of the file passed it before or was left by a textpile writer that opened a checked
    version (:mod:`textpile.store.checked`, :class:`_Writer`): a run then pays the check
    only after the file was changed by something else. Writes nothing to the file."""
    try:
        version = file_version(path) if integrity else None  # before a reader makes a -wal
    except OSError:  # cannot be looked at: checked, never remembered
        version = None
    conn = connect(path, read_only=True, timeout_s=timeout_s)
    try:
        with sqlite_errors(path, timeout_s=timeout_s):
            info = _read_info(conn, path)
            if info is not None and integrity:
                if version is None or not passed_before(version):
                    problem = quick_check_problem(conn)
                    if problem is not None:
                        raise DatabaseError(
                            f"{path}: database disk image is malformed ({problem}); not writing to it "
                            f"(try: sqlite3 {path} .recover)")
                    if version is not None:
                        remember_passed(version)
    finally:
        conn.close()
    return info


class _Writer(sqlite3.Connection):
    """A writable connection that, once closed, vouches for the file it wrote: when it was
    opened on a version of the file that passed ``PRAGMA quick_check`` (or made it), the
    version it leaves counts as checked too (:mod:`textpile.store.checked`): SQLite's own
    writes keep a sound file sound, so the next run does not read every page again."""

    vouch: Path | None = None

    def close(self) -> None:
        super().close()
        if self.vouch is not None:
            try:
                remember_passed(file_version(self.vouch))
            except OSError:  # the file is gone: nothing to vouch for
                pass


def _verify(info: dict[str, str], kind: str, path: Path) -> None:
    found_kind = info.get("unobtanium_database_kind")
    if found_kind != kind:
        found = f"a {found_kind}" if found_kind else "an unknown"
        raise DatabaseError(f"{path}: is {found} database, expected a {kind} database")
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


def _create(path: Path, kind: str, schema_version: str, timeout_s: float) -> sqlite3.Connection:
    """Create a database of ``kind`` at ``path`` atomically (:mod:`textpile.store.creation`)
    and open it; when another process created it meanwhile, open theirs (checked)."""
    if not os.access(path.absolute().parent, os.W_OK):
        raise DatabaseError(f"{path}: cannot create a {kind} database there, folder "
                            f"{path.absolute().parent} is read-only")

    def build(conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA auto_vacuum={_INCREMENTAL}")  # before the first table: see tidy
        with conn:
            conn.executescript(schema_sql("base", BASE_SCHEMA_VERSION))
            conn.executescript(schema_sql(kind, schema_version))
            conn.executescript(extension_sql(kind))
            conn.executemany(
                "INSERT INTO unobtanium_database_info(key, value) VALUES (?, ?)",
                [
                    ("unobtanium_base_schema_version", BASE_SCHEMA_VERSION),
                    ("unobtanium_database_kind", kind),
                    (f"unobtanium_{kind}_schema_version", schema_version),
                ],
            )

    try:
        with sqlite_errors(path, timeout_s=timeout_s):
            create_atomically(path, build, timeout_s=timeout_s)
    except NameTaken:
        return _open(path, kind, schema_version, True, False, timeout_s)
    except OSError as exc:
        raise DatabaseError(f"{path}: cannot create a {kind} database: {exc.strerror or exc}") from exc
    conn = connect(path, timeout_s=timeout_s)
    conn.vouch = path  # made whole by this process
    return conn


def _refuse_orphan_wal(path: Path, state: str) -> None:
    """Refuse to create a database where a non-empty ``-wal`` file lies without its
    database: it holds the last committed writes of a database that was deleted, moved
    or emptied, which a new database would drop (or, worse, have replayed into it)."""
    wal = path.with_name(path.name + "-wal")
    try:
        size = wal.stat().st_size
    except FileNotFoundError:
        return
    if size > 0:
        raise DatabaseError(
            f"{path}: {state}, but {wal.name} ({size} bytes) lies beside it: it holds the last writes of a "
            f"database that was deleted or moved; put that database back under this name, or move {wal.name} "
            "away to start a new one")


def _open(path: str | Path, kind: str, schema_version: str, create: bool, read_only: bool,
          timeout_s: float | None = None) -> sqlite3.Connection:
    """Check the file, then open it. Nothing is written to a file that is refused:
    the checks use a read-only connection, and WAL mode is switched on only after."""
    path = Path(path)
    timeout_s = BUSY_TIMEOUT_S if timeout_s is None else timeout_s
    size = _check_file(path)
    may_create = create and not read_only
    if size is None:
        if not may_create:
            raise DatabaseError(f"{path}: no such {kind} database")
        if not path.absolute().parent.is_dir():
            raise DatabaseError(f"{path}: folder {path.absolute().parent} does not exist")
        _refuse_orphan_wal(path, "is missing")
        return _create(path, kind, schema_version, timeout_s)
    if size == 0:
        if not may_create:
            raise DatabaseError(f"{path}: empty file, not a {kind} database")
        _refuse_orphan_wal(path, "is empty")
        return _create(path, kind, schema_version, timeout_s)
    info = _inspect(path, integrity=not read_only, timeout_s=timeout_s)
    if info is None:
        if not may_create:
            raise DatabaseError(f"{path}: SQLite database without tables, not a {kind} database")
        return _create(path, kind, schema_version, timeout_s)
    _verify(info, kind, path)
    if not read_only and not os.access(path, os.W_OK):
        # SQLite would open it and fail only at the first write, without naming the file.
        raise DatabaseError(f"{path}: read-only (cannot write a database there)")
    conn = connect(path, read_only=read_only, timeout_s=timeout_s)
    if not read_only:
        try:
            # Idempotent: creates only what a database of this version may lack
            # (textpile's own extra indexes). A summary database whose text_pile or
            # link_summary is still a table (an older textpile's) is moved first.
            with sqlite_errors(path, timeout_s=timeout_s):
                if kind == "summary" and migrations.needs_migration(conn):
                    moved = migrations.migrate(conn, schema_sql(kind, schema_version) + "\n" + extension_sql(kind))
                    if moved:
                        logging.getLogger(__name__).warning(
                            "%s: converted from an older textpile's layout (%s)", path,
                            ", ".join(f"{table}: {rows} rows" for table, rows in sorted(moved.items())))
                conn.executescript(schema_sql(kind, schema_version))
                conn.executescript(extension_sql(kind))
                if kind == "summary":
                    migrations.refresh_triggers(conn, schema_sql(kind, schema_version))
                if not vacuum_mode_current(conn):
                    set_incremental_vacuum(conn, path)
        except BaseException:
            conn.close()
            raise
        conn.vouch = path  # it passed its check (_inspect) before this connection wrote
    return conn


def open_crawler_db(path: str | Path, *, create: bool = True, read_only: bool = False,
                    timeout_s: float | None = None) -> sqlite3.Connection:
    """Open (or create) a crawler database (base 0.1.0 + crawler 1.0.0).

    With ``create`` (and not ``read_only``) a missing file, a 0-byte file or a SQLite
    file without tables becomes a new crawler database; otherwise those are refused.
    An existing database opened for writing must pass ``PRAGMA quick_check`` first.
    A refused file is never changed (checks run on a read-only connection).

    Raises:
        DatabaseError: the file is missing (without ``create``), empty (without
            ``create``), not SQLite, corrupt, not a crawler database, of a newer
            version, read-only (for writing), or locked for more than ``timeout_s``.
    """
    return _open(path, "crawler", CRAWLER_SCHEMA_VERSION, create, read_only, timeout_s)


def open_summary_db(path: str | Path, *, create: bool = True, read_only: bool = False,
                    timeout_s: float | None = None) -> sqlite3.Connection:
    """Open (or create) a summary database (base 0.1.0 + summary 0.0.0 with text_pile_v0_2).

    Creation, checks and refusals as in :func:`open_crawler_db`.

    Raises:
        DatabaseError: as :func:`open_crawler_db`, for a summary database.
    """
    return _open(path, "summary", SUMMARY_SCHEMA_VERSION, create, read_only, timeout_s)


def open_any_db(path: str | Path) -> tuple[sqlite3.Connection, str]:
    """Open an existing crawler or summary database, returning it and its kind.

    Raises:
        DatabaseError: the file does not exist, is empty or is neither kind (nothing is
            written to it then), or is corrupt, read-only or locked.
    """
    path = Path(path)
    size = _check_file(path)
    if size is None:
        raise DatabaseError(f"{path}: no such database")
    if size == 0:
        raise DatabaseError(f"{path}: empty file, not a crawler or summary database")
    info = _inspect(path, integrity=False, timeout_s=BUSY_TIMEOUT_S)
    if info is None:
        raise DatabaseError(f"{path}: SQLite database without tables, not a crawler or summary database")
    kind = info.get("unobtanium_database_kind")
    if kind == "crawler":
        return open_crawler_db(path, create=False), kind
    if kind == "summary":
        return open_summary_db(path, create=False), kind
    raise DatabaseError(f"{path}: not a crawler or summary database")


def optimize_and_vacuum(conn: sqlite3.Connection) -> None:
    """Run ANALYZE, ``PRAGMA optimize`` and VACUUM (page "unobtanium-crawler", optimize-db):
    the whole file rewritten, for an explicit ``textpile optimize-db``; runs use :func:`tidy`."""
    conn.commit()
    conn.execute("ANALYZE")
    conn.execute("PRAGMA optimize")
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


#: The share of a database's pages that may lie free (left by deleted rows, reused by later
#: writes) before a run gives them back to the file system (:func:`tidy`).
FREE_PAGE_SHARE = 0.10
#: Rows per index that ANALYZE samples when :func:`tidy` refreshes SQLite's statistics.
ANALYSIS_LIMIT = 400


@dataclass
class TidyReport:
    """What :func:`tidy` found and did: the file's pages, those free before, and those given back."""

    pages: int
    free_pages: int
    pages_freed: int


def tidy(conn: sqlite3.Connection) -> TidyReport:
    """What a run does at its end instead of a VACUUM, at a cost that follows what changed:
    SQLite's query planner statistics refreshed where they are stale (``PRAGMA optimize``,
    sampling :data:`ANALYSIS_LIMIT` rows per index), and, when more than
    :data:`FREE_PAGE_SHARE` of the file's pages are free, the free pages given back to the
    file system (``PRAGMA incremental_vacuum``: the file is in ``auto_vacuum`` mode
    INCREMENTAL, :func:`vacuum_mode_current`). Free pages below that share are reused by
    the next writes. ``textpile optimize-db`` still rewrites the whole file.

    Raises:
        sqlite3.Error: database problems (locked, read-only, full disk).
    """
    conn.commit()
    conn.execute(f"PRAGMA analysis_limit={ANALYSIS_LIMIT}")
    conn.execute("PRAGMA optimize")
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    freed = 0
    if free > pages * FREE_PAGE_SHARE and conn.execute("PRAGMA auto_vacuum").fetchone()[0] == _INCREMENTAL:
        # stepped to its end (it frees one page per step; a plain execute steps once)
        conn.executescript("PRAGMA incremental_vacuum;")
        freed = free - conn.execute("PRAGMA freelist_count").fetchone()[0]
    conn.commit()
    return TidyReport(pages, free, freed)


#: SQLite's auto_vacuum value of INCREMENTAL.
_INCREMENTAL = 2


def vacuum_mode_current(conn: sqlite3.Connection) -> bool:
    """True when the file is in ``auto_vacuum`` mode INCREMENTAL (so that :func:`tidy` can
    give free pages back without rewriting it)."""
    return conn.execute("PRAGMA auto_vacuum").fetchone()[0] == _INCREMENTAL


def set_incremental_vacuum(conn: sqlite3.Connection, path: str | Path) -> None:
    """Put a database made before textpile used incremental vacuum into that mode: SQLite
    records the mode in the file's layout, so the file is rewritten once (a VACUUM, which
    needs free disk space of the file's size); a kill leaves it as it was.

    Raises:
        sqlite3.Error: database problems (locked, read-only, full disk).
    """
    logging.getLogger(__name__).warning("%s: switching to incremental vacuum, which rewrites the file once", path)
    conn.commit()
    conn.execute(f"PRAGMA auto_vacuum={_INCREMENTAL}")
    conn.execute("VACUUM")


def check_summary_db(path: str | Path) -> Path:
    """Return ``path`` if it is a readable summary database.

    Raises:
        DatabaseError: the file is missing, not SQLite, or not a summary database (the
        message names the file).
    """
    path = Path(path)
    if not path.exists():
        raise DatabaseError(f"{path}: no such summary database")
    conn = open_summary_db(path, create=False, read_only=True)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()
    if "full_text_entity_index" not in tables:
        raise DatabaseError(f"{path}: summary database without full_text_entity_index")
    return path
