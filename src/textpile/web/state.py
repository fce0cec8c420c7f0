"""Which database of a Datasette instance is the summary database, and hot swapping it.

The summary database is the one Datasette database that is a :class:`SummaryDatabase`
(textpile's subclass of Datasette's ``Database``): the plugin puts one in place of the
first file whose ``unobtanium_database_info`` says kind summary
(:func:`adopt_summary_database`, from its ``register_routes`` and ``startup`` hooks), in
``textpile serve`` and in a plain ``datasette summary.db`` with the plugin installed alike.
Nothing is stored on the Datasette object: databases are added and removed with
Datasette's public ``add_database``/``remove_database``.

The published index is updated in place, by the pages that changed, in one transaction
of its WAL (:mod:`textpile.publish`): every connection reads the new state from its next
query on, and the page vectors kept for the vector modes are loaded again when the file's
content changed (``PRAGMA data_version``). A copy made whole replaces the file
(``os.replace``). Search keeps one connection per worker thread for each identity of the
file (:meth:`SummaryDatabase.search_connection`), so a replaced file is read by new ones.
Datasette's own views keep one connection per worker thread; :func:`refresh_if_swapped`
compares the file's identity (device, inode) with the one the served object was made for
and, when it changed, puts a new :class:`SummaryDatabase` under the same name and route,
so the next request reads the new file. Datasette (0.65) keys its per-thread connections
by database name only, so :class:`SummaryDatabase` keeps its own, keyed by file
identity: the one place textpile relies on Datasette internals
(``Datasette._prepare_connection``), pinned by the datasette version range in
pyproject.toml and covered by the hot-swap tests.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from pathlib import Path

from datasette.database import Database

from textpile.search.limits import limit_search_connection
from textpile.semantic.loaded import SemanticCache
from textpile.store.database import map_for_reading, sqlite_uri
from textpile.web.unpacking import report_unpack_problems

# Seconds an old file's connections stay open after a swap, for queries still running.
SWAP_GRACE_S = 30.0
# How long a search waits for a writer's lock on the file (milliseconds).
SEARCH_BUSY_TIMEOUT_MS = 10_000
_thread_connections = threading.local()


def file_identity(path: Path) -> tuple | None:
    """Return (st_dev, st_ino) of ``path`` (a file replaced by another has another), or
    None if it is missing. A file written in place keeps its identity."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


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


class SummaryDatabase(Database):
    """The served summary database file, read-only, for one identity of the file.

    Its per-thread connections are keyed by the file identity (``identity``), so a
    swapped file under the same name gets new ones. Its file is opened through a
    percent-encoded URI (:func:`textpile.store.database.sqlite_uri`), so names holding
    ``#``, ``?`` or ``%`` open the right file (Datasette's own ``connect`` pastes the path in).
    :attr:`semantic` holds this file's page vectors and the model between searches, made
    anew when its content changed.
    """

    def __init__(self, ds, path: str | Path, *, is_mutable: bool = False) -> None:
        super().__init__(ds, path=str(path), is_mutable=is_mutable)
        self.identity = file_identity(Path(path))
        self._key = "textpile_" + "_".join(str(part) for part in (id(self), *(self.identity or ())))
        self._opened: list[sqlite3.Connection] = []
        self._semantic = SemanticCache()
        self._watch: sqlite3.Connection | None = None  # reads PRAGMA data_version
        self._data_version: int | None = None
        self._watch_lock = threading.Lock()
        self._on_close: list = []
        #: the search over every shard served with this (the first) summary database
        #: (:func:`textpile.web.shards.sharded_search`), made on first use under its lock
        self.sharded_search = None
        self.sharded_search_lock = threading.Lock()

    def on_close(self, callback) -> None:
        """Call ``callback()`` when this object is closed (the search over shards kept on it)."""
        self._on_close.append(callback)

    @property
    def semantic(self) -> SemanticCache:
        """The model and page vectors of the semantic search modes (loaded on first use),
        made anew when another connection changed the file's content since the last look
        (a publish: ``PRAGMA data_version`` on a connection kept for it)."""
        with self._watch_lock:
            if self._watch is None:
                self._watch = self.connect()
            version = self._watch.execute("PRAGMA data_version").fetchone()[0]
            if self._data_version is not None and version != self._data_version:
                self._semantic = SemanticCache()
            self._data_version = version
            return self._semantic

    def connect(self, write=False):
        if write:
            raise sqlite3.NotSupportedError(f"{self.path}: textpile serves the summary database read-only")
        # not immutable: a publish writes the file in place, in a transaction of its WAL
        uri = sqlite_uri(self.path, mode="ro")
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        self._opened.append(conn)
        map_for_reading(conn)
        return conn

    def search_connection(self) -> sqlite3.Connection:
        """This thread's connection for searches, opened on first use and kept until
        :meth:`close` (as Datasette keeps one per thread for its own views): read-only,
        mapped, with the search size limits (:func:`limit_search_connection`) and a 10 s
        busy timeout. A kept connection keeps SQLite's parsed schema, prepared statements
        and cache: at 100K pages a search costs 6.5 ms less CPU than on a connection
        opened for it (median over 52 bench queries: 22.0 -> 15.5 ms)."""
        key = self._key + "_search"
        conn = getattr(_thread_connections, key, None)
        if conn is None:
            conn = limit_search_connection(self.connect())
            conn.execute("PRAGMA busy_timeout=" + str(SEARCH_BUSY_TIMEOUT_MS))
            setattr(_thread_connections, key, conn)
        return conn

    async def execute_fn(self, fn):
        if self.ds.executor is None:
            return await super().execute_fn(fn)

        def in_thread():
            opened = getattr(_thread_connections, self._key, None)
            if not opened:
                conn = self.connect()
                self.ds._prepare_connection(conn, self.name)  # row factory, extensions, prepare_connection hooks
                # A bad sqlar_uncompress call fails the statement with its own message (textpile.web.unpacking).
                opened = conn, report_unpack_problems(conn)
                setattr(_thread_connections, self._key, opened)
            conn, problems = opened
            problems.clear()
            result = fn(conn)
            problems.raise_first()
            return result

        return await asyncio.get_running_loop().run_in_executor(self.ds.executor, in_thread)

    def close(self):
        """Close every connection this object opened (its threads' included)."""
        super().close()
        for callback in self._on_close:
            callback()
        for conn in self._opened:
            conn.close()


def find_target(datasette) -> SummaryDatabase | None:
    """The summary database served by ``datasette`` (the first, when it serves several:
    shards), or None when it serves none."""
    return next((db for db in datasette.databases.values() if isinstance(db, SummaryDatabase)), None)


def find_targets(datasette) -> list[SummaryDatabase]:
    """Every summary database served by ``datasette``, in the order served (shards)."""
    return [db for db in datasette.databases.values() if isinstance(db, SummaryDatabase)]


def adopt_summary_database(datasette) -> SummaryDatabase | None:
    """Make every file-backed database of kind summary a :class:`SummaryDatabase` (same
    name, route and mutability) unless it is one already; return the first or None."""
    for name, db in list(datasette.databases.items()):
        if not isinstance(db, SummaryDatabase) and db.path is not None and is_summary_file(Path(db.path)):
            _replace(datasette, db, SummaryDatabase(datasette, db.path, is_mutable=db.is_mutable))
    return find_target(datasette)


def _replace(datasette, old: Database, new: SummaryDatabase) -> SummaryDatabase:
    name, route = old.name, old.route
    datasette.remove_database(name)
    return datasette.add_database(new, name=name, route=route)


def refresh_if_swapped(datasette, target: SummaryDatabase) -> SummaryDatabase:
    """The database serving the current file of ``target``: ``target`` itself, or, when
    the file was replaced since ``target`` was made, a new :class:`SummaryDatabase`
    under the same name and route. The old object's connections are closed after
    :data:`SWAP_GRACE_S` seconds, so the replaced file's disk space is freed.
    """
    identity = file_identity(Path(target.path))
    if identity is None or identity == target.identity:
        return target
    current = datasette.databases.get(target.name)
    if isinstance(current, SummaryDatabase) and current is not target and current.identity == identity:
        return current  # another request swapped it already
    new = _replace(datasette, target, SummaryDatabase(datasette, target.path, is_mutable=target.is_mutable))
    timer = threading.Timer(SWAP_GRACE_S, target.close)
    timer.daemon = True
    timer.start()
    return new
