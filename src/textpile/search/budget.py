"""The time budget of one search: SQLite work stops when it is spent.

:class:`Budget` installs a SQLite progress handler on the connection for the duration
of a search (``with budget.installed(conn): ...``); once the deadline passes, the
running statement is interrupted and :meth:`Budget.guard` turns that interruption into
:class:`BudgetSpent`, so the search returns what it has. Whether an error is an
interruption is known from the handler having fired, not from SQLite's message text.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator

#: Default time budget of a search, in milliseconds.
DEFAULT_BUDGET_MS = 1000
#: SQLite virtual machine instructions between two looks at the clock.
_CHECK_EVERY = 1000


class BudgetSpent(Exception):
    """The search's time budget ran out (raised inside the search, never to its caller)."""


class Budget:
    """A deadline ``budget_ms`` milliseconds after creation (monotonic clock)."""

    def __init__(self, budget_ms: float = DEFAULT_BUDGET_MS) -> None:
        self.budget_ms = float(budget_ms)
        self.deadline = time.monotonic() + self.budget_ms / 1000.0
        self.fired = False
        self.spent = False

    def remaining_s(self) -> float:
        """Seconds left (negative when spent)."""
        return self.deadline - time.monotonic()

    def check(self) -> None:
        """Raise :class:`BudgetSpent` when the deadline has passed (for Python-side loops)."""
        if time.monotonic() > self.deadline:
            self.spent = True
            raise BudgetSpent()

    def _handler(self) -> int:
        if time.monotonic() > self.deadline:
            self.fired = True
            return 1
        return 0

    @contextlib.contextmanager
    def installed(self, conn: sqlite3.Connection) -> Iterator["Budget"]:
        """Interrupt SQLite statements on ``conn`` past the deadline while inside."""
        conn.set_progress_handler(self._handler, _CHECK_EVERY)
        try:
            yield self
        finally:
            conn.set_progress_handler(None, _CHECK_EVERY)

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """Turn a statement interrupted by this budget into :class:`BudgetSpent`; other
        SQLite errors pass unchanged."""
        try:
            yield
        except sqlite3.OperationalError:
            if self.fired:
                self.spent = True
                raise BudgetSpent() from None
            raise
