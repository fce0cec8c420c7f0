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
(``os.replace``): :func:`refresh_if_swapped` compares the file's identity (device, inode)
with the one the served object was made for and, when it changed, puts a new
:class:`SummaryDatabase` under the same name and route, so the next request reads the new
file; the old one's connections are closed as soon as the requests and the work that
began on it are done (:meth:`SummaryDatabase.serving`), at the latest
:data:`SWAP_GRACE_S` seconds later, so its memory (the mapped pages of the replaced file
among it) and the replaced file's disk space are freed. Search keeps one connection per worker thread on each object
(:meth:`SummaryDatabase.search_connection`).

Only Datasette's public API is used, on 0.65 and 1.0 alike: ``Database`` subclassed
(``connect``, ``execute``, ``execute_fn``, ``attached_databases``, ``close``),
``add_database``/``remove_database`` and the plugin manager's ``prepare_connection``
hook.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator
from contextlib import contextmanager
import sqlite3
import threading
import time
from pathlib import Path

from datasette.database import Database, QueryInterrupted

from textpile.search.limits import limit_search_connection
from textpile.search.shard_memo import ShardMemo
from textpile.semantic.loaded import SemanticCache
from textpile.store.database import map_for_reading, sqlite_uri
from textpile.store.gen2_piles import register_functions
from textpile.web.explorer_sql import CURRENT_STATEMENT, REQUEST_DEADLINE, StatementReport

# Seconds an old file's connections stay open after a swap, for queries still running.
SWAP_GRACE_S = 30.0
# How long a search waits for a writer's lock on the file (milliseconds).
SEARCH_BUSY_TIMEOUT_MS = 10_000


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

    Its file is opened through a percent-encoded URI
    (:func:`textpile.store.database.sqlite_uri`), so names holding ``#``, ``?`` or ``%``
    open the right file (Datasette's own ``connect`` pastes the path in), read-only
    whatever Datasette asks, with ``sqlar_uncompress`` registered. Each statement Datasette
    runs through :meth:`execute` gets a :class:`~textpile.web.explorer_sql.StatementReport`
    (what the authorizer refused becomes a clear error) and the rest of the request's
    time as its limit. :attr:`semantic` holds this file's page vectors and the model
    between searches, the vectors loaded anew when its content changed; ``semantic``, a
    :class:`SemanticCache` to start from (the model of the file this one replaces).
    """

    def __init__(self, ds, path: str | Path, *, is_mutable: bool = False,
                 semantic: SemanticCache | None = None) -> None:
        super().__init__(ds, path=str(path), is_mutable=is_mutable)
        self.identity = file_identity(Path(path))
        self._opened: list[sqlite3.Connection] = []
        self._opened_lock = threading.Lock()
        self._search: dict[int, sqlite3.Connection] = {}  # by thread
        self._prepared: dict[int, sqlite3.Connection] = {}  # by thread, see execute_fn
        self._semantic = semantic if semantic is not None else SemanticCache()
        self._shard_memo = ShardMemo()
        self._watch: sqlite3.Connection | None = None  # reads PRAGMA data_version
        self._data_version: int | None = None
        self._watch_lock = threading.Lock()
        self._closing: threading.Timer | None = None  # set once replaced (close)
        self._users = 0  # requests and work in progress (serving)
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
        the vectors loaded anew when another connection changed the file's content since
        the last look (a publish: ``PRAGMA data_version`` on a connection kept for it)."""
        with self._watch_lock:
            self._follow_content()
            return self._semantic

    @property
    def shard_memo(self) -> ShardMemo:
        """The statistics a search over shards keeps for this file's content
        (:mod:`textpile.search.shard_memo`), a new one when the content changed (as
        :attr:`semantic`)."""
        with self._watch_lock:
            self._follow_content()
            return self._shard_memo

    def _follow_content(self) -> None:
        """Start :attr:`semantic` and :attr:`shard_memo` anew when another connection
        changed the file since the last look; the caller holds ``_watch_lock``."""
        if self._watch is None:
            self._watch = self.connect()
        version = self._watch.execute("PRAGMA data_version").fetchone()[0]
        if self._data_version is not None and version != self._data_version:
            self._semantic = self._semantic.for_new_content()
            self._shard_memo = ShardMemo()
        self._data_version = version

    def connect(self, write=False):
        """A new read-only connection to the file (also when ``write``: textpile serves
        it read-only, and Datasette 1.0 asks for one to analyze SQL), mapped, with
        ``sqlar_uncompress``."""
        # not immutable: a publish writes the file in place, in a transaction of its WAL
        uri = sqlite_uri(self.path, mode="ro")
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        with self._opened_lock:
            self._opened.append(conn)
        map_for_reading(conn)
        return register_functions(conn)

    def owns(self, conn: sqlite3.Connection) -> bool:
        """Whether this object opened ``conn`` (another identity's connections do not count)."""
        with self._opened_lock:
            return any(conn is mine for mine in self._opened)

    def search_connection(self) -> sqlite3.Connection:
        """This thread's connection for searches, opened on first use and kept until
        :meth:`close` (as Datasette keeps one per thread for its own views): read-only,
        mapped, with the search size limits (:func:`limit_search_connection`) and a 10 s
        busy timeout. A kept connection keeps SQLite's parsed schema, prepared statements
        and cache: at 100K pages a search costs 6.5 ms less CPU than on a connection
        opened for it (median over 52 bench queries: 22.0 -> 15.5 ms)."""
        thread = threading.get_ident()
        conn = self._search.get(thread)
        if conn is None:
            conn = limit_search_connection(self.connect())
            conn.execute("PRAGMA busy_timeout=" + str(SEARCH_BUSY_TIMEOUT_MS))
            self._search[thread] = conn
        return conn

    def _prepared_connection(self) -> sqlite3.Connection:
        """This thread's connection prepared as Datasette prepares its own (row and text
        factories, every plugin's ``prepare_connection`` hook)."""
        from datasette.plugins import pm  # (loading it loads the plugins, this module's among them)

        thread = threading.get_ident()
        conn = self._prepared.get(thread)
        if conn is None:
            conn = self.connect()
            conn.row_factory = sqlite3.Row
            conn.text_factory = lambda data: str(data, "utf-8", "replace")
            pm.hook.prepare_connection(conn=conn, database=self.name, datasette=self.ds)
            self._prepared[thread] = conn
        return conn

    async def execute_fn(self, fn):
        """``fn(conn)`` on a connection of this file, in Datasette's SQL threads, with
        the caller's context variables (:data:`~textpile.web.explorer_sql.CURRENT_STATEMENT`,
        the request's deadline). Datasette 0.65 keys its per-thread connections by
        database name, so after the file was replaced it hands over the replaced file's
        (closed after :data:`SWAP_GRACE_S`): ``fn`` then gets one of this object's."""
        context = contextvars.copy_context()

        def run(conn):
            with self.serving():
                if not self.owns(conn):
                    conn = self._prepared_connection()
                return context.run(fn, conn)

        return await super().execute_fn(run)

    async def execute(self, sql, params=None, truncate=False, custom_time_limit=None, page_size=None,
                      log_sql_errors=True):
        """Datasette's ``execute``, within the rest of the request's time when it has a
        whole-request limit, and with clear errors: a statement the authorizer refused
        raises :class:`~textpile.web.explorer_sql.SQLRefused` naming what it refused; one
        past the request's time raises Datasette's ``QueryInterrupted``; a value
        ``sqlar_uncompress`` rejected raises ``sqlite3.DataError`` with its message."""
        deadline = REQUEST_DEADLINE.get()
        if deadline is not None:
            left_ms = int((deadline - time.monotonic()) * 1000)
            if left_ms <= 0:
                raise QueryInterrupted(sqlite3.OperationalError("interrupted"), sql, params)
            custom_time_limit = min(custom_time_limit or left_ms, left_ms)
        report = StatementReport()
        token = CURRENT_STATEMENT.set(report)
        try:
            results = await super().execute(sql, params, truncate=truncate, custom_time_limit=custom_time_limit,
                                            page_size=page_size, log_sql_errors=log_sql_errors)
        except sqlite3.DatabaseError as exc:
            if report.time_up:
                raise QueryInterrupted(exc, sql, params) from exc
            report.raise_for_failure(exc)
            raise
        finally:
            CURRENT_STATEMENT.reset(token)
        report.raise_unpack_problem()
        return results

    async def attached_databases(self):
        """None: visitors' SQL may not ATTACH (:mod:`textpile.web.explorer_sql`), and
        Datasette's way of asking (``PRAGMA database_list``) would name the file."""
        return []

    @contextmanager
    def serving(self) -> Iterator["SummaryDatabase"]:
        """Count a request, or a piece of work in a thread, on this object while it runs
        (the plugin marks every HTTP request, :func:`run_search` and :meth:`execute_fn`
        their work): once this object was replaced (:meth:`close`), the last one to end
        closes its connections. A soak of 100 publishes under 20 clients kept up to 63
        descriptors of replaced files open, and their mapped pages, for the 30 s grace."""
        with self._opened_lock:
            self._users += 1
        try:
            yield self
        finally:
            with self._opened_lock:
                self._users -= 1
                idle = self._closing is not None and self._users == 0
            if idle:
                self.close_now()

    def close(self):
        """Close every connection this object opened (its threads' included), and
        Datasette's part of it, once no request or work counted by :meth:`serving` is
        running on it, and at the latest :data:`SWAP_GRACE_S` seconds from now (Datasette
        1.0 closes a database as :func:`refresh_if_swapped` removes it). Calling it again
        changes nothing."""
        with self._opened_lock:
            if self._closing is not None:
                return
            self._closing = threading.Timer(SWAP_GRACE_S, self.close_now)
            idle = self._users == 0
        if idle:
            self.close_now()
            return
        self._closing.daemon = True
        self._closing.start()

    def close_now(self):
        """Close every connection this object opened, at once (again, after work that
        came late on a replaced object opened new ones)."""
        if self._closing is not None:
            self._closing.cancel()
        super().close()
        with self._opened_lock:
            opened, self._opened = self._opened, []
            callbacks, self._on_close = self._on_close, []
        for callback in callbacks:
            callback()
        for conn in opened:
            conn.close()
        self._search.clear()
        self._prepared.clear()
        self._watch = None


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
    under the same name and route. The old object's connections are closed once the
    requests on it are done (:meth:`SummaryDatabase.close`), so the replaced file's
    memory and disk space are freed.
    """
    identity = file_identity(Path(target.path))
    if identity is None or identity == target.identity:
        return target
    current = datasette.databases.get(target.name)
    if isinstance(current, SummaryDatabase) and current is not target and current.identity == identity:
        return current  # another request swapped it already
    new = _replace(datasette, target, SummaryDatabase(datasette, target.path, is_mutable=target.is_mutable,
                                                      semantic=target._semantic.for_new_content()))
    target.close()  # once the requests on it are done
    return new
