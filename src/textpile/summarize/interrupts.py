"""Ctrl+C inside DuckDB: the same KeyboardInterrupt as anywhere else in the summarizer.

DuckDB's Python client notices SIGINT while a query runs, cancels the query and raises
its own error instead of KeyboardInterrupt: ``duckdb.InterruptException`` in current
versions, a ``RuntimeError("Query interrupted")`` in older ones. The summarizer's
documented Ctrl+C behaviour (batch rolled back, FTS rebuilt from what was committed,
exit 130) hangs on KeyboardInterrupt, so DuckDB's interruption is turned into it here.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

_INTERRUPT_TYPES: tuple[type[BaseException], ...] = tuple(
    t for t in (getattr(duckdb, "InterruptException", None),) if t is not None)


def is_duckdb_interrupt(exc: BaseException) -> bool:
    """True when ``exc`` is DuckDB's report of a query cancelled by Ctrl+C (SIGINT)."""
    if _INTERRUPT_TYPES and isinstance(exc, _INTERRUPT_TYPES):
        return True
    return isinstance(exc, (RuntimeError, duckdb.Error)) and "Query interrupted" in str(exc)


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
