"""What visitors' SQL may do in SQL exploration, and the clear errors for what it may not.

Datasette runs any SELECT a visitor sends (``?sql=``, ``?_where=``). SQLite's own
documentation names what such SQL must not reach on a server ("Defense against the dark
arts"), and Debian's SQLite enables some of it. Every connection of Datasette serving a
summary database gets an SQLite authorizer (:func:`guard_connection`, from the plugin's
``prepare_connection`` hook) that refuses, when the statement is prepared:

* the functions of :data:`REFUSED_FUNCTIONS`: ``fts3_tokenizer`` (its two-argument form
  registers any native pointer as a tokenizer, its one-argument form returns a native
  address) and ``load_extension`` (native code);
* ``ATTACH`` and ``DETACH`` (other files of the host);
* every ``PRAGMA`` but the introspection ones of :data:`ALLOWED_PRAGMAS`, so
  ``pragma_database_list`` (the server's absolute paths) and the settings (cache and map
  sizes, heap limits, temporary folders) are refused;
* a statement of :meth:`textpile.web.state.SummaryDatabase.execute` prepared after the
  request's whole time (:data:`REQUEST_DEADLINE`) ran out (it waited for an SQL thread):
  Datasette's "SQL query took too long".

Reads of the published tables, views and virtual tables, SQL functions, recursive queries
and the introspection pragmas Datasette itself uses stay allowed.

SQLite fails a refused statement with "not authorized", which names nothing. The
statements Datasette runs on the served summary database go through
:meth:`textpile.web.state.SummaryDatabase.execute`, which gives each one a
:class:`StatementReport` (in the context variable :data:`CURRENT_STATEMENT`, which
Datasette carries into its SQL threads): the authorizer writes there what it refused, and
the statement's failure becomes :class:`SQLRefused` naming it (a 400 error page).
``sqlar_uncompress`` reports a value it rejects the same way (its message, no
traceback: Datasette turns on callback tracebacks for the whole process, and SQLite's
own message would be "user-defined function raised exception"). Outside such a statement (another database of the
instance) the refusals stand with SQLite's message.
"""

from __future__ import annotations

import sqlite3
import time
from contextvars import ContextVar

from datasette.views.base import DatasetteError

from textpile.store.gen2_piles import register_functions

#: SQL functions visitors may not call, and why.
REFUSED_FUNCTIONS = {
    "fts3_tokenizer": "it registers and reveals native pointers",
    "load_extension": "it loads native code into the server",
}
#: The pragmas visitors may read (as ``pragma_<name>(...)``): introspection of the served
#: database's schema, which Datasette's own pages use too. Any other pragma is refused.
ALLOWED_PRAGMAS = frozenset({
    "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
    "foreign_key_list", "collation_list", "function_list", "module_list", "pragma_list",
    "compile_options", "schema_version", "user_version", "application_id", "data_version",
    "page_size", "page_count", "max_page_count", "freelist_count", "encoding",
})
#: Pragmas that take an argument naming a table or an index (any other allowed pragma is
#: allowed only without a value: ``PRAGMA user_version = 3`` sets it).
_PRAGMAS_WITH_ARGUMENT = frozenset({"table_info", "table_xinfo", "table_list", "index_list", "index_info",
                                    "index_xinfo", "foreign_key_list"})
#: Settings that may be changed: sqlite-utils, which Datasette 1.0 reads schemas with,
#: turns on recursive triggers (there is nothing to trigger on a read-only connection).
_SETTABLE_PRAGMAS = frozenset({"recursive_triggers"})

#: What the authorizer refused or ``sqlar_uncompress`` rejected in the statement being run.
CURRENT_STATEMENT: ContextVar["StatementReport | None"] = ContextVar("textpile_statement", default=None)
#: ``time.monotonic()`` by which every SQL statement of the current request must be done
#: (None: no whole-request limit); set by :func:`textpile.web.guard.sql_admission`.
REQUEST_DEADLINE: ContextVar["float | None"] = ContextVar("textpile_request_deadline", default=None)

class SQLRefused(DatasetteError):
    """A visitor's statement that the authorizer refused, or whose ``sqlar_uncompress``
    call was given a value it rejects: a 400 error page (JSON for ``.json``) whose
    message names what and why, e.g. ``fts3_tokenizer() is not allowed in SQL
    exploration: it registers and reveals native pointers`` (a Datasette error, as
    Datasette 1.0 shows an SQL error of a query page with status 200)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, title="Invalid SQL", status=400)


class StatementReport:
    """What happened in one statement: the first refusal of the authorizer, the first
    value ``sqlar_uncompress`` rejected, and whether the request's time was up."""

    def __init__(self) -> None:
        self.refused: str | None = None
        self.unpack_problem: str | None = None
        self.time_up = False

    def refuse(self, why: str) -> None:
        if self.refused is None:
            self.refused = why

    def unpack_failed(self, error: ValueError) -> None:
        if self.unpack_problem is None:
            self.unpack_problem = str(error)

    def raise_for_failure(self, error: sqlite3.DatabaseError) -> None:
        """Raise :class:`SQLRefused` (from ``error``) when the statement failed because
        the authorizer refused it; otherwise return."""
        if self.refused is not None:
            raise SQLRefused(self.refused) from error

    def raise_unpack_problem(self) -> None:
        """Raise the rejected ``sqlar_uncompress`` value's problem, if any.

        Raises:
            SQLRefused: e.g. "sqlar_uncompress: not a zlib stream (...)".
        """
        if self.unpack_problem is not None:
            raise SQLRefused(self.unpack_problem)


def _refusal(action: int, arg1: str | None, arg2: str | None) -> str | None:
    """Why the authorizer refuses ``action`` (arguments as SQLite gives them), or None."""
    if action == sqlite3.SQLITE_FUNCTION:
        name = (arg2 or "").lower()
        if name in REFUSED_FUNCTIONS:
            return f"{name}() is not allowed in SQL exploration: {REFUSED_FUNCTIONS[name]}"
    elif action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        verb = "ATTACH" if action == sqlite3.SQLITE_ATTACH else "DETACH"
        return f"{verb} is not allowed in SQL exploration: only the published database is served"
    elif action == sqlite3.SQLITE_PRAGMA:
        name = (arg1 or "").lower()
        if name in _SETTABLE_PRAGMAS:
            return None
        if name not in ALLOWED_PRAGMAS or (arg2 is not None and name not in _PRAGMAS_WITH_ARGUMENT):
            shown = f"pragma_{name}" if arg2 is None else f"PRAGMA {name} = {arg2}"
            return (f"{shown} is not allowed in SQL exploration (it reveals or changes the server's setup); "
                    f"allowed: {', '.join('pragma_' + p for p in sorted(ALLOWED_PRAGMAS))}")
    return None


def authorize(action: int, arg1, arg2, database, source) -> int:
    """The SQLite authorizer of SQL exploration (module docstring): ``SQLITE_DENY`` with
    the reason written to the current :class:`StatementReport`, or ``SQLITE_OK``."""
    why = _refusal(action, arg1, arg2)
    report = CURRENT_STATEMENT.get()
    if why is None:
        if action != sqlite3.SQLITE_SELECT or report is None:
            return sqlite3.SQLITE_OK
        deadline = REQUEST_DEADLINE.get()
        if deadline is None or time.monotonic() < deadline:
            return sqlite3.SQLITE_OK
        report.time_up = True  # prepared after the request's time ran out (it waited for a thread)
        return sqlite3.SQLITE_DENY
    if report is not None:
        report.refuse(why)
    return sqlite3.SQLITE_DENY


def _report_unpack_problem(error: ValueError) -> None:
    report = CURRENT_STATEMENT.get()
    if report is None:
        raise error  # outside a reported statement: the statement fails as SQLite fails it
    report.unpack_failed(error)


def guard_connection(conn: sqlite3.Connection) -> sqlite3.Connection:
    """Install the authorizer (:func:`authorize`) on ``conn``, and ``sqlar_uncompress``
    reporting rejected values to the current statement (after ``conn``'s length limit
    is set); return ``conn``."""
    register_functions(conn, on_error=_report_unpack_problem)
    conn.set_authorizer(authorize)
    return conn
