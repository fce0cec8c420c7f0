"""Ctrl+C inside DuckDB: the same KeyboardInterrupt as anywhere else in the summarizer.

DuckDB's Python client notices SIGINT while a query runs, cancels the query and raises
its own error instead of KeyboardInterrupt: ``duckdb.InterruptException`` in current
versions, a ``RuntimeError("Query interrupted")`` in older ones. The summarizer's
documented Ctrl+C behaviour (batch rolled back, FTS rebuilt from what was committed,
exit 130) hangs on KeyboardInterrupt, so DuckDB's interruption is turned into it here.
A Ctrl+C that lands while DuckDB calls back into Python (reading a registered Arrow
table) comes back as a ``duckdb.Error`` naming KeyboardInterrupt; that counts too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

_INTERRUPT_TYPES: tuple[type[BaseException], ...] = tuple(
    t for t in (getattr(duckdb, "InterruptException", None),) if t is not None)


def is_duckdb_interrupt(exc: BaseException) -> bool:
    """True when ``exc`` is DuckDB's report of a query cancelled by Ctrl+C (SIGINT).

    That is ``duckdb.InterruptException``; a ``RuntimeError``/``duckdb.Error`` saying
    "Query interrupted" (older versions); or a ``duckdb.Error`` that DuckDB raised because
    a KeyboardInterrupt stopped its call back into Python (e.g. while it counted the rows
    of a registered Arrow table: "... failed: KeyboardInterrupt: ").
    """
    if _INTERRUPT_TYPES and isinstance(exc, _INTERRUPT_TYPES):
        return True
    if not isinstance(exc, (RuntimeError, duckdb.Error)):
        return False
    text = str(exc)
    if "Query interrupted" in text:
        return True
    return isinstance(exc, duckdb.Error) and (
        isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt) or "KeyboardInterrupt" in text)


@contextmanager
def duckdb_interrupts() -> Iterator[None]:
    """Context manager (or decorator) re-raising DuckDB's interruption as KeyboardInterrupt.

    Every other exception passes through unchanged.
    """
    try:
        yield
    except (RuntimeError, duckdb.Error) as exc:
        if is_duckdb_interrupt(exc):
            raise KeyboardInterrupt(f"interrupted during a DuckDB query ({exc})") from exc
        raise
