"""Searching a summary database: query in, ranked results with snippets out."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field


@dataclass
class SearchResult:
    """One hit. ``snippet_html`` is HTML-escaped text with <mark> around matched terms."""

    title: str
    url: str
    description: str
    snippet_html: str
    language: str | None = None
    time_updated_unix_utc: int | None = None
    time_created_unix_utc: int | None = None
    entity_generation_uuid: str | None = None


@dataclass
class SearchResults:
    """A page of hits. ``page`` counts from 0; ``message`` explains fallbacks or errors."""

    query: str
    page: int
    per_page: int
    results: list[SearchResult] = field(default_factory=list)
    total: int = 0
    message: str | None = None
    fallback_any_term: bool = False


def search(conn: sqlite3.Connection, query: str, *, page: int = 0, per_page: int = 20) -> SearchResults:
    """Run ``query`` (textpile's query language) against the summary database ``conn``."""
    raise NotImplementedError("search: issue 4")
