"""Which database of a Datasette instance is the summary database, and hot swapping it.

The published index is replaced atomically (``os.replace`` of a finished copy). Search
opens the file per request, so it always reads the current file. Datasette's own views
keep connections to the Database object; :func:`refresh_if_swapped` compares the file's
identity (device, inode, mtime, size) with the one last seen and, when it changed, puts a
new immutable Database object under the same name so the next request reads the new file.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

from textpile.store.database import sqlite_uri

_STATE_ATTR = "_textpile_web_state"
# Seconds an old file's connections stay open after a swap, for queries still running.
SWAP_GRACE_S = 30.0
_thread_connections = threading.local()


@dataclass
class SummaryTarget:
    """The served summary database: Datasette database ``name`` for the file at ``path``."""

    name: str
    path: Path
    identity: tuple | None = None


def file_identity(path: Path) -> tuple | None:
    """Return (st_dev, st_ino, st_mtime_ns, st_size) of ``path``, or None if it is missing."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


def is_summary_file(path: Path) -> bool:
    """True when ``path`` is a SQLite file whose unobtanium_database_info says kind summary."""
    try:
        conn = sqlite3.connect(sqlite_uri(path, mode="ro"), uri=True)
    except sqlite3.Error:
        return False
    try:
        row = conn.execute(
            "SELECT value FROM unobtanium_database_info WHERE key = 'unobtanium_database_kind'"
        ).fetchone()
    except sqlite3.Error:
        return False
    finally:
        conn.close()
    return row is not None and row[0] == "summary"


def set_target(datasette, name: str, path: str | Path) -> SummaryTarget:
    """Declare Datasette database ``name`` (file ``path``) the summary database to search."""
    target = SummaryTarget(name=name, path=Path(path), identity=file_identity(Path(path)))
    setattr(datasette, _STATE_ATTR, target)
    return target


def find_target(datasette) -> SummaryTarget | None:
    """Return the summary database to search, or None when this Datasette serves none.

    :func:`set_target` (used by ``textpile serve``) decides; otherwise (a plain
    ``datasette summary.db`` with the plugin installed) the first file-backed database
    whose ``unobtanium_database_info`` kind is summary is used. The answer is remembered
    on the Datasette instance.
    """
    cached = getattr(datasette, _STATE_ATTR, None)
    if cached is not None:
        return cached or None
    target = None
    for name, db in datasette.databases.items():
        if db.path is not None and is_summary_file(Path(db.path)):
            target = SummaryTarget(name=name, path=Path(db.path), identity=file_identity(Path(db.path)))
            break
    setattr(datasette, _STATE_ATTR, target or False)
    return target


def _swappable_database_class():
    from datasette.database import Database

    class SwappableDatabase(Database):
        """A Datasette Database whose per-thread connections are keyed by file identity.

        Datasette keeps one connection per worker thread keyed by the database name
        only; a swapped file under the same name needs a new key, or the threads
        would keep reading the old file. Its file is opened through a percent-encoded
        URI (:func:`textpile.store.database.sqlite_uri`), so names holding ``#``, ``?``
        or ``%`` open the right file (Datasette's own ``connect`` pastes the path in).
        """

        def __init__(self, ds, path, is_mutable, key):
            super().__init__(ds, path=path, is_mutable=is_mutable)
            self._textpile_key = key

        def connect(self, write=False):
            if write:
                raise sqlite3.NotSupportedError(f"{self.path}: textpile serves the summary database read-only")
            if self.is_mutable:
                uri = sqlite_uri(self.path, mode="ro")
            else:
                uri = sqlite_uri(self.path, immutable=True)
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            self._all_file_connections.append(conn)
            return conn

        async def execute_fn(self, fn):
            if self.ds.executor is None:
                return await super().execute_fn(fn)

            def in_thread():
                conn = getattr(_thread_connections, self._textpile_key, None)
                if not conn:
                    conn = self.connect()
                    self.ds._prepare_connection(conn, self.name)
                    setattr(_thread_connections, self._textpile_key, conn)
                return fn(conn)

            return await asyncio.get_running_loop().run_in_executor(self.ds.executor, in_thread)

    return SwappableDatabase


def install_database(datasette, target: SummaryTarget) -> None:
    """Put the summary database under ``target.name`` as a :class:`SwappableDatabase`
    for the file's current identity (keeping the old object's route and mutability)."""
    identity = file_identity(target.path)
    old = datasette.databases.get(target.name)
    is_mutable = old.is_mutable if old is not None else False
    key = "textpile_" + "_".join(str(part) for part in (target.name, *(identity or ())))
    db = _swappable_database_class()(datasette, str(target.path), is_mutable, key)
    db.name = target.name
    db.route = old.route if old is not None else target.name
    datasette.databases = {**datasette.databases, target.name: db}
    target.identity = identity


def refresh_if_swapped(datasette, target: SummaryTarget) -> bool:
    """Re-register the summary database if its file was replaced; return True if it was.

    The old Database object's connections are closed after :data:`SWAP_GRACE_S`
    seconds, so the replaced file's disk space is freed.
    """
    identity = file_identity(target.path)
    if identity is None or identity == target.identity:
        return False
    old = datasette.databases.get(target.name)
    install_database(datasette, target)
    if old is not None:
        timer = threading.Timer(SWAP_GRACE_S, old.close)
        timer.daemon = True
        timer.start()
    return True
