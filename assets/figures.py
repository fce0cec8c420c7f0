"""Figures read from the summary database for materialization metadata (read-only SQL)."""

from __future__ import annotations

import sqlite3

from textpile.index.fulltext import fts_row_count
from textpile.store.searchable import searchable

_SEARCHABLE = searchable("eg")


def summary_figures(conn: sqlite3.Connection) -> dict[str, int]:
    """Row counts a person wants to see: generations (all, open, searchable, duplicate),
    crawl summaries, text piles, URLs, FTS rows."""
    one = lambda sql: int(conn.execute(sql).fetchone()[0])  # noqa: E731
    return {
        "generations": one("SELECT count(*) FROM entity_generation"),
        "open_generations": one("SELECT count(*) FROM entity_generation WHERE confirmed_end_unix_utc IS NULL"),
        "searchable_generations": one(f"SELECT count(*) FROM entity_generation eg WHERE {_SEARCHABLE}"),
        "duplicate_generations": one("SELECT count(*) FROM entity_generation WHERE marked_duplicate"),
        "crawl_summaries": one("SELECT count(*) FROM crawl_summary"),
        "text_piles": one("SELECT count(*) FROM text_pile"),
        "urls": one("SELECT count(*) FROM url"),
        "fts_rows": fts_row_count(conn),
    }


def agent_integrated(conn: sqlite3.Connection, agent_uuid: bytes) -> bool:
    """Whether any crawl of agent ``agent_uuid`` (16 bytes) is in crawl_summary."""
    row = conn.execute("SELECT 1 FROM crawl_summary WHERE agent_uuid = ? LIMIT 1", (agent_uuid,)).fetchone()
    return row is not None
