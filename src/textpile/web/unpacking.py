"""``sqlar_uncompress`` in SQL exploration: a bad call is an SQL error naming the problem.

Datasette turns on ``sqlite3.enable_callback_tracebacks`` for the whole process, so a
Python SQL function that raises prints a traceback on stderr, and the statement fails
with SQLite's "user-defined function raised exception", which names nothing. A SQL user
who calls ``sqlar_uncompress`` with a value that is no zlib stream, or asks for more
bytes than the length limit, got both. On Datasette's connections of the served summary
database (:meth:`textpile.web.state.SummaryDatabase.execute_fn`) the function instead
hands the refusal to an :class:`UnpackProblems` and returns NULL, and the statement is
then failed with the refusal's own message ("sqlar_uncompress: not a zlib stream (...)")
as a ``sqlite3.DataError``: a 400 error page (:mod:`textpile.web.errors`), no traceback.
"""

from __future__ import annotations

import sqlite3

from textpile.store.gen2_piles import register_functions


class UnpackProblems:
    """The first ``sqlar_uncompress`` refusal on one connection since :meth:`clear`."""

    def __init__(self) -> None:
        self.first: str | None = None

    def __call__(self, error: ValueError) -> None:
        """Remember ``error`` unless an earlier one is remembered."""
        if self.first is None:
            self.first = str(error)

    def clear(self) -> None:
        """Forget what was remembered (before a statement)."""
        self.first = None

    def raise_first(self) -> None:
        """Raise the remembered refusal, if any, and forget it.

        Raises:
            sqlite3.DataError: with the refusal's message, e.g. "sqlar_uncompress: not a
                zlib stream (Error -3 while decompressing data: incorrect header check)".
        """
        problem, self.first = self.first, None
        if problem is not None:
            raise sqlite3.DataError(problem)


def report_unpack_problems(conn: sqlite3.Connection) -> UnpackProblems:
    """Register ``sqlar_uncompress``/``sqlar_compress`` on ``conn`` (after its length
    limit is set) so that refusals go to the returned :class:`UnpackProblems`."""
    problems = UnpackProblems()
    register_functions(conn, on_error=problems)
    return problems
