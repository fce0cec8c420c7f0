"""Crawl runs whose process died: closing them on the next start.

A crawl run (an ``agent`` row) gets ``time_finished_unix_utc`` when it ends, also after
Ctrl+C or SIGTERM. A run whose process was killed (SIGKILL, power loss) keeps NULL
there for good, although every crawl log entry it wrote is whole (one transaction
each, see :mod:`textpile.crawl.crawldb.writer`). The next crawl run on the database, holding
its lock (so no crawl is running), closes such runs: their end is the end of their last
crawl log entry. What they crawled stays and is summarized like any other run's entries
(the summarizer takes every entry not yet summarized, whichever run wrote it).

One crawl run at a time writes into a crawler database: it holds the database's lock
file (:func:`crawl_lock_path`), as an archive import does.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path


def crawl_lock_path(database: str | Path) -> Path:
    """The lock file of a crawler database: ``<database>.lock`` beside it."""
    return Path(f"{os.fspath(database)}.lock")


@dataclass(frozen=True)
class ClosedRun:
    """A crawl run closed by :func:`close_unfinished_runs`: its agent UUID, start and the
    end given to it (unix seconds), and how many crawl log entries it had written."""

    agent_uuid: uuid.UUID
    time_started_unix: int
    time_finished_unix: int
    crawl_log_entries: int

    def describe(self) -> str:
        """One line for people, e.g. "closed crawl run 0190...: its process ended without
        finishing it; its 12 crawl log entries are kept"."""
        return (f"closed crawl run {self.agent_uuid.hex}: its process ended without finishing it; "
                f"its {self.crawl_log_entries} crawl log entries are kept")


def close_unfinished_runs(conn: sqlite3.Connection, *, keep: uuid.UUID | None = None) -> list[ClosedRun]:
    """Set ``time_finished_unix_utc`` of every agent that has none (other than ``keep``)
    to the end of its last crawl log entry (start + time taken, rounded up to a second),
    or to its own start when it logged nothing; commit; return them in agent order.

    Call with the crawler database's crawl lock held (``<database>.lock``), so that
    none of them is still running.
    """
    rows = conn.execute(
        "SELECT a.agent_id, a.agent_uuid, a.time_started_unix_utc, count(l.crawl_log_id),"
        " max(l.time_started_unix_utc + (l.time_taken_ms + 999) / 1000)"
        " FROM agent a LEFT JOIN crawl_log l ON l.agent_id = a.agent_id"
        " WHERE a.time_finished_unix_utc IS NULL GROUP BY a.agent_id ORDER BY a.agent_id").fetchall()
    closed = []
    with conn:
        for agent_id, raw_uuid, started, entries, last_end in rows:
            agent_uuid = uuid.UUID(bytes=bytes(raw_uuid))
            if keep is not None and agent_uuid == keep:
                continue
            finished = max(started, last_end if last_end is not None else started)
            conn.execute("UPDATE agent SET time_finished_unix_utc = ? WHERE agent_id = ?", (finished, agent_id))
            closed.append(ClosedRun(agent_uuid, started, finished, entries))
    return closed
